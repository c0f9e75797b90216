/*-------------------------------------------------------------------------
 *
 * recipes/attempt.h
 *		One queue node's way through a lock queue: the steps of the lock
 *		recipe that the recipes built on its queue share (recipes/attempt.c,
 *		with its create loop in recipes/attempt_create.c, its copy of the
 *		queue in recipes/attempt_queue.c, and its long waits in
 *		recipes/long_wait.c).
 *
 * Every recipe on a queue creates its nodes with ZkAttemptCreate, which
 * says how (ZkCreateOpts).  The lock recipe (recipes/lock_set.c) runs one
 * attempt from start to end for each lock of a set: it creates their
 * nodes in one ZooKeeper transaction and then waits with each (a lock
 * alone is a set of one); an attempt that is one of a set ('group')
 * reports the whole set's remaining targets to deadlock detection.  A lease
 * (recipes/lease.c) creates its TTL node and waits with ZkAttemptWait.  The
 * semaphore (recipes/semaphore.c) holds its mutex node and its permit node
 * as two attempts under one prefix: it creates both in one multi, waits in
 * the mutex queue with ZkAttemptWait, and abandons both together.  The
 * barriers use the helpers only (ZkCreateLockParents in
 * recipes/lock_parents.c, ZkWaitDeadline in recipes/lock_timeout.c,
 * ZkMakeUuid in base/uuid.c, all declared through this header): a double
 * barrier's participant node has a fixed name, no sequence, and is found
 * again by that name, not by a prefix.
 *
 * The steps' errors name no operation: the recipe that runs them has
 * pushed its operation's context (base/operation_context.h), and sets it from
 * acquiring to waiting where its wait begins (a lease's does not: it is
 * acquired until granted).
 *
 *-------------------------------------------------------------------------
 */
#ifndef RECIPES_ATTEMPT_H
#define RECIPES_ATTEMPT_H

#include "client/client.h"
#include "base/contender.h"
#include "base/operation_context.h"
#include "base/uuid.h"
#include "base/vocabulary.h"
#include "recipes/lock_parents.h"
#include "recipes/lock_timeout.h"
#include "utils/palloc.h"

/* a semaphore's permit node, named like Curator's InterProcessSemaphoreV2's
 * (which calls a permit a lease) */
#define ZK_LEASE_MARKER "lease-"

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
	bool		keep_other;		/* downgrade (upgrade) with contenders between
								 * our write (read) node and this one: that
								 * node must outlive this one */
} ZkGrant;

typedef struct ZkAttempt
{
	const ZkAcquireArgs *args;
	MemoryContext cxt;			/* holds the queue copies */
	char		prefix[ZK_PREFIX_LEN + 1];	/* "_c_<uuid>-" */
	char	   *node_base;		/* path we create, before the sequence */
	bool		create_sent;	/* a node with our prefix may exist */
	int32		siblings;		/* children of the lock node right after a
								 * counted create made our node; -1: not
								 * known */
	char	   *znode;			/* our node, once known */
	const char *name;			/* its last component */
	int64		token;
	char	  **names;			/* the lock node's children as last read */
	int			nnames;
	ZkContender *queue;
	int			nqueue;
	bool		queue_known;	/* names and queue were read (or known to
								 * be just us) since our node was made, or
								 * while looking for it by our prefix */
	int64		deadline;		/* monotonic ms; 0: none */
	bool		is_lock_timeout;	/* the deadline is lock_timeout's */
	int64		start;			/* monotonic ms when the attempt began */
	bool		logged_wait;	/* log_lock_waits: "still waiting" said */
	bool		warned_blind;	/* a "-lock-" contender was reported */
	bool		own_watched;	/* ZK_WATCH_OWN is set on our node */
	bool		checked_deadlock;	/* checked conclusively for a deadlock */
	bool		published;		/* our wait is published (cluster/deadlock.c) */
	bool		granted;		/* ZkAttemptWait returned true */
	bool		persistent;		/* its node is persistent (a lease's), and
								 * guarded by the session (ZkGuardBegin) */
	struct ZkAttempt **group;	/* the set this attempt belongs to, if any */
	int			ngroup;
} ZkAttempt;

/* How ZkAttemptCreate makes the nodes of its attempts. */
typedef struct ZkCreateOpts
{
	bool		counted;		/* each create with an (empty) setData of its
								 * lock node, whose answer counts the lock
								 * node's children (ZkCreateSet) */
	bool		uncount_on_noauth;	/* ZNOAUTH: the ACL may refuse only the
									 * setData; create without it then */
	bool		learn_queue;	/* leave each attempt's queue known: alone,
								 * or read in the same round trip or after */
	bool		guess_fresh;	/* create the lock nodes expected to be
								 * missing first (recipes/path_memory.c) */
	int			nabove;			/* nodes above the lock nodes, made with
								 * them when expected to be missing */
	const char *const *above;
	const char *const *above_data;	/* their data (NULL: none) */
	int64		ttl_ms;			/* > 0: one lease node with this TTL */
	const char *side_read;		/* a node whose data is read in the same
								 * round trip, just before the creates */
	ZkOperationContext *oc;		/* if set, a refused create names its own
								 * lock in it, as acquired */
} ZkCreateOpts;

/* How ZkAttemptCreate ended. */
typedef enum ZkCreateOutcome
{
	ZK_CREATE_MADE,				/* created; counts known (siblings) */
	ZK_CREATE_RECOVERED,		/* the answer was lost, and every node was
								 * found by the prefix: counts not known */
	ZK_CREATE_PARTIAL			/* the answer was lost, and only some nodes
								 * were found: another client deleted the
								 * others */
} ZkCreateOutcome;

/* What ZkAttemptCreate learnt besides the nodes. */
typedef struct ZkCreateResult
{
	int64		sent_at;		/* monotonic ms the last create was sent */
	int64		mtime;			/* ZK_CREATE_MADE with one node: its mtime
								 * (ms since the epoch); else -1 */
	ZkOp	   *side;			/* ZK_CREATE_MADE: side_read's answer, which
								 * the caller frees; else NULL */
} ZkCreateResult;

/* the attempt, its wait and its end (recipes/attempt.c) */
extern int	ZkAttemptShape(const ZkAcquireArgs *args, int nqueues);
extern ZkAttempt *ZkAttemptBegin(const ZkAcquireArgs *args, const char *prefix);
extern void ZkAttemptSetPrefix(ZkAttempt *at, const char *prefix);
extern bool ZkAttemptWait(ZkAttempt *at, ZkGrant *grant);
extern void ZkAttemptRaiseDisappeared(ZkAttempt *at, bool waiter_child)
			pg_attribute_noreturn();
extern void ZkAttemptGrant(ZkAttempt *at, ZkGrant *grant);
extern void ZkAttemptAbandon(ZkAttempt **at, int n, bool wait);
extern void ZkAttemptFree(ZkAttempt *at);

/* the create loop (recipes/attempt_create.c) */
extern ZkCreateOutcome ZkAttemptCreate(ZkAttempt **at, int n,
									   const ZkCreateOpts *opts,
									   ZkCreateResult *res);
extern ZkCreateOutcome ZkAttemptCreateLocks(ZkAttempt **at, int n,
											ZkOperationContext *oc);

/* the attempt's copy of its queue (recipes/attempt_queue.c) */
extern void ZkAttemptRereadQueue(ZkAttempt *at);
extern bool ZkAttemptTakeQueue(ZkAttempt *at, ZkOp *op);
extern void ZkAttemptCreated(ZkAttempt *at, const char *znode, int64 token,
							 bool alone);
extern void ZkAttemptDropBlocker(ZkAttempt *at, int b);
extern int	ZkAttemptOwnPosition(ZkAttempt *at, int me, const char *znode);
extern int	ZkAttemptBlocking(ZkAttempt *at, int me, bool *keep_other);
extern const char *ZkLastComponent(const char *path);

/* a wait past deadlock_timeout (recipes/long_wait.c) */
extern bool ZkAttemptCheckDeadlock(ZkAttempt *at);
extern void ZkAttemptLogStillWaiting(ZkAttempt *at, int me);
extern void ZkAttemptLogAcquired(ZkAttempt *at);

#endif							/* RECIPES_ATTEMPT_H */
