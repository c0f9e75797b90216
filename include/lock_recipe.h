/*-------------------------------------------------------------------------
 *
 * lock_recipe.h
 *		The ZooKeeper read/write lock recipe.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LOCK_RECIPE_H
#define LOCK_RECIPE_H

#include "vocabulary.h"
#include "zk_session.h"

/* What to acquire. */
typedef struct ZkAcquireArgs
{
	const char *lock_node;		/* ZooKeeper path of the lock node */
	const char *lock_path;		/* the user's lock path, for messages */
	ZkLockMode	mode;
	const char *held_write_znode;	/* downgrade: our own write node */
	ZkNodeStyle style;		/* how an exclusive node is named */
	int64		wait_ms;		/* -1: as long as needed (lock_timeout) */
	const char *data;			/* data of the queue node */
	int			datalen;
} ZkAcquireArgs;

/* What a successful acquisition holds. */
typedef struct ZkGrant
{
	char	   *znode;			/* our queue node (palloc'd) */
	int64		token;			/* fencing token: the node's czxid */
	bool		needs_guard;	/* downgrade with contenders between our write
								 * node and this one: the write node must
								 * outlive this read node */
	bool		own_watched;	/* a held-node watch is set on znode */
} ZkGrant;

/* One row of zk_lock_queue() (cluster_view.c reads them). */
typedef struct ZkQueueEntry
{
	int			position;		/* 1-based */
	char	   *znode;			/* child name */
	ZkLockMode	mode;
	bool		granted;
	int64		token;			/* czxid, -1 if unknown */
	int64		ctime_ms;		/* creation time, ms since the Unix epoch */
	int64		lease_expires_ms;	/* a granted lease: when its ttl runs
									 * out (ms since the Unix epoch, the
									 * server's clock); else -1 */
	char	   *data;			/* node data, NULL if none */
	int			datalen;
} ZkQueueEntry;

extern bool ZkAcquire(const ZkAcquireArgs *args, ZkGrant *grant);
extern ZkOp *ZkReleaseSend(const char *const *znodes, int n, bool wait);
extern bool ZkReleaseWait(ZkOp *op);
extern void ZkReleaseInBackground(const char *znode);
extern bool ZkVerifyHeld(const char *const *znodes, int n, bool *gone,
						 int64 quiet_ms);

#endif							/* LOCK_RECIPE_H */
