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

extern bool ZkAcquire(const ZkAcquireArgs *args, ZkGrant *grant);
extern bool ZkReleaseWait(ZkOp *op);

#endif							/* LOCK_RECIPE_H */
