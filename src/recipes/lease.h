/*-------------------------------------------------------------------------
 *
 * recipes/lease.h
 *		Leases: exclusive locks held by a ZooKeeper TTL node instead of a
 *		backend's session (recipes/lease.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef RECIPES_LEASE_H
#define RECIPES_LEASE_H

#include "base/vocabulary.h"

/* What to acquire. */
typedef struct ZkLeaseArgs
{
	const char *lock_node;		/* ZooKeeper path of the lock node */
	const char *lock_path;		/* the user's lock path, for messages */
	int64		ttl_ms;
	ZkNodeStyle style;		/* how an exclusive node is named */
	int64		wait_ms;		/* -1: as long as needed (lock_timeout) */
	const char *data;			/* data of the lease node */
	int			datalen;
} ZkLeaseArgs;

/* A lease as its last grant, renewal or release attempt found it. */
typedef struct ZkLeaseInfo
{
	char	   *znode;			/* the lease's TTL node (palloc'd) */
	int64		token;			/* its czxid */
	int64		ttl_ms;
	int64		sent_at;		/* monotonic ms when the request that granted
								 * or renewed it was sent: the lease lasts at
								 * least until sent_at + ttl_ms */
	int64		expires_at;		/* ms since the Unix epoch, on the ZooKeeper
								 * leader's clock: modification + ttl */
} ZkLeaseInfo;

/* What a renewal or release found. */
typedef enum ZkLeaseStatus
{
	ZK_LEASE_OK,				/* done */
	ZK_LEASE_NONE,				/* no lease with that token holds the lock */
	ZK_LEASE_EXPIRED			/* the lease had outlived its TTL (and was
								 * removed, since the server may reap it) */
} ZkLeaseStatus;

extern bool ZkLeaseAcquire(const ZkLeaseArgs *args, ZkLeaseInfo *info);
extern ZkLeaseStatus ZkLeaseRenew(const char *lock_node, const char *lock_path,
								  int64 token, ZkLeaseInfo *info);
extern ZkLeaseStatus ZkLeaseRelease(const char *lock_node,
									const char *lock_path, int64 token);
extern void ZkLeaseForgetNames(void);
extern const char *ZkLeaseKnownLockNode(int64 token);

#endif							/* RECIPES_LEASE_H */
