/*-------------------------------------------------------------------------
 *
 * lock_attempt.h
 *		One queue node's way through a lock queue: the steps of the lock
 *		recipe (lock_recipe.c) that the recipes built on it share.
 *
 * ZkAcquire runs an attempt from start to end.  The multi-lock recipe
 * (multi_lock.c) creates the nodes of several attempts in one ZooKeeper
 * transaction and then waits with each; the semaphore recipe takes its
 * mutex with ZkAcquire.  An attempt that is one of a set ('group') reports
 * the whole set's remaining targets to deadlock detection.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LOCK_ATTEMPT_H
#define LOCK_ATTEMPT_H

#include "contender.h"
#include "lock_recipe.h"
#include "utils/palloc.h"

typedef struct ZkAttempt
{
	const ZkAcquireArgs *args;
	MemoryContext cxt;			/* holds the queue copies */
	char		prefix[ZK_PREFIX_LEN + 1];	/* "_c_<uuid>-" */
	char	   *node_base;		/* path we create, before the sequence */
	bool		create_sent;	/* a node with our prefix may exist */
	char	   *znode;			/* our node, once known */
	const char *name;			/* its last component */
	int64		token;
	char	  **names;			/* the queue as last read */
	ZkContender *queue;
	int			nqueue;
	int64		deadline;		/* monotonic ms; 0: none */
	bool		is_lock_timeout;	/* the deadline is lock_timeout's */
	int64		start;			/* monotonic ms when the attempt began */
	bool		logged_wait;	/* log_lock_waits: "still waiting" said */
	bool		warned_blind;	/* a "-lock-" contender was reported */
	bool		own_watched;	/* a held-node watch is set on our node */
	bool		checked_deadlock;	/* checked conclusively for a deadlock */
	int64		check_at;		/* when to check (monotonic ms) */
	bool		published;		/* our wait is published (deadlock.c) */
	bool		granted;		/* ZkAttemptWait returned true */
	bool		persistent;		/* its node is persistent (a lease's), and
								 * guarded by the session (ZkGuardBegin) */
	struct ZkAttempt **group;	/* the set this attempt belongs to, if any */
	int			ngroup;
} ZkAttempt;

extern void ZkMakeUuid(char *out);
extern void ZkMakeNodePrefix(char *out);
extern int64 ZkWaitDeadline(int64 start, int64 wait_ms, bool *is_lock_timeout);
extern ZkAttempt *ZkAttemptBegin(const ZkAcquireArgs *args, const char *prefix);
extern void ZkAttemptCreated(ZkAttempt *at, const char *znode, int64 token,
							 bool alone);
extern bool ZkAttemptTakeQueue(ZkAttempt *at, ZkOp *op);
extern void ZkAttemptRereadQueue(ZkAttempt *at);
extern bool ZkAttemptRecover(ZkAttempt *at);
extern bool ZkAttemptWait(ZkAttempt *at, ZkGrant *grant);
extern void ZkAttemptGrant(ZkAttempt *at, ZkGrant *grant);
extern void ZkAttemptAbandon(ZkAttempt *at, bool wait);
extern void ZkAttemptFree(ZkAttempt *at);
extern void ZkCreateLockParents(const char *const *lock_nodes, int n,
								const char *lock_path);

#endif							/* LOCK_ATTEMPT_H */
