/*-------------------------------------------------------------------------
 *
 * recipes/attempt.h
 *		One queue node's way through a lock queue: the steps of the lock
 *		recipe that the recipes built on its queue share (recipes/attempt.c).
 *
 * ZkAcquire (recipes/rwlock.c) runs one attempt from start to end.  The
 * multi-lock recipe (recipes/lock_set.c) creates the nodes of several attempts
 * in one ZooKeeper transaction and then waits with each; an attempt that
 * is one of a set ('group') reports the whole set's remaining targets to
 * deadlock detection.  A lease (recipes/lease.c) creates its TTL node itself
 * and waits with ZkAttemptWait.  The semaphore (recipes/semaphore.c) holds its
 * mutex node and its permit node as two attempts under one prefix: it
 * creates both itself, waits in the mutex queue with ZkAttemptWait, and
 * abandons both together.  The barriers use the helpers only
 * (ZkCreateLockParents, ZkWaitDeadline, ZkMakeUuid).
 *
 * The steps' errors name no operation: the recipe that runs them has
 * pushed its operation's context (common/operation_context.h), and sets it from
 * acquiring to waiting where its wait begins (a lease's does not: it is
 * acquired until granted).
 *
 *-------------------------------------------------------------------------
 */
#ifndef RECIPES_ATTEMPT_H
#define RECIPES_ATTEMPT_H

#include "client/client.h"
#include "common/contender.h"
#include "common/vocabulary.h"
#include "utils/palloc.h"

/* what a wait that lock_timeout ended waited for (its error's DETAIL) */
typedef enum ZkWaitedFor
{
	ZK_WAITED_FOR_LOCK,			/* a lock, a lock set, a lease */
	ZK_WAITED_FOR_SEMAPHORE,	/* a semaphore's permit */
	ZK_WAITED_FOR_BARRIER,		/* a barrier to go down */
	ZK_WAITED_FOR_ENTER,		/* the members of a double barrier to enter */
	ZK_WAITED_FOR_LEAVE			/* the members of a double barrier to leave */
} ZkWaitedFor;

/* What to acquire. */
typedef struct ZkAcquireArgs
{
	const char *lock_node;		/* ZooKeeper path of the lock node */
	const char *lock_path;		/* the user's lock path, for messages */
	ZkLockMode	mode;
	const char *held_write_znode;	/* downgrade: our own write node */
	const char *held_read_znode;	/* upgrade: our own read node */
	ZkNodeStyle style;		/* how an exclusive node is named */
	int64		wait_ms;		/* -1: as long as needed (lock_timeout) */
	ZkWaitedFor waited_for;		/* what a lock timeout names */
	const char *data;			/* data of the queue node */
	int			datalen;
} ZkAcquireArgs;

/* What a successful acquisition holds. */
typedef struct ZkGrant
{
	char	   *znode;			/* our queue node (palloc'd) */
	int64		token;			/* fencing token: the node's czxid */
	bool		needs_guard;	/* downgrade (upgrade) with contenders between
								 * our write (read) node and this one: that
								 * node must outlive this one */
	bool		own_watched;	/* a held-node watch is set on znode */
} ZkGrant;

/* a semaphore's permit node, named like Curator's InterProcessSemaphoreV2's
 * (which calls a permit a lease) */
#define ZK_LEASE_MARKER "lease-"

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
	char	  **names;			/* the lock node's children as last read */
	int			nnames;
	ZkContender *queue;
	int			nqueue;
	int64		deadline;		/* monotonic ms; 0: none */
	bool		is_lock_timeout;	/* the deadline is lock_timeout's */
	int64		start;			/* monotonic ms when the attempt began */
	bool		logged_wait;	/* log_lock_waits: "still waiting" said */
	bool		warned_blind;	/* a "-lock-" contender was reported */
	bool		own_watched;	/* a held-node watch is set on our node */
	bool		checked_deadlock;	/* checked conclusively for a deadlock */
	bool		published;		/* our wait is published (cluster/deadlock.c) */
	bool		granted;		/* ZkAttemptWait returned true */
	bool		persistent;		/* its node is persistent (a lease's), and
								 * guarded by the session (ZkGuardBegin) */
	struct ZkAttempt **group;	/* the set this attempt belongs to, if any */
	int			ngroup;
} ZkAttempt;

extern void ZkMakeUuid(char *out);
extern void ZkMakeNodePrefix(char *out);
extern int64 ZkWaitDeadline(int64 start, int64 wait_ms, bool *is_lock_timeout);

extern void ZkRaiseLockTimeout(ZkWaitedFor waited, const char *path)
			pg_attribute_noreturn();
extern ZkAttempt *ZkAttemptBegin(const ZkAcquireArgs *args, const char *prefix);
extern void ZkAttemptSetPrefix(ZkAttempt *at, const char *prefix);
extern void ZkAttemptCreated(ZkAttempt *at, const char *znode, int64 token,
							 bool alone);
extern bool ZkAttemptTakeQueue(ZkAttempt *at, ZkOp *op);
extern void ZkAttemptRereadQueue(ZkAttempt *at);
extern bool ZkAttemptRecover(ZkAttempt *at);
extern bool ZkAttemptWait(ZkAttempt *at, ZkGrant *grant);
extern void ZkAttemptRaiseDisappeared(ZkAttempt *at, bool waiter_child)
			pg_attribute_noreturn();
extern void ZkAttemptGrant(ZkAttempt *at, ZkGrant *grant);
extern void ZkAttemptAbandon(ZkAttempt **at, int n, bool wait);
extern void ZkAttemptFree(ZkAttempt *at);
extern bool ZkCollectFreshCreates(ZkOp **makes, const char *const *nodes,
								  int n, bool *learnt, bool *missing);
extern void ZkCreateLockParents(const char *const *lock_nodes, int n);

#endif							/* RECIPES_ATTEMPT_H */
