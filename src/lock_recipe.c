/*-------------------------------------------------------------------------
 *
 * lock_recipe.c
 *		The ZooKeeper read/write lock recipe.
 *
 * A lock "/a/b" is the node <zklock.root>/a/b (created, with its parents,
 * as container nodes, which the server reaps once empty).  To take it, a
 * backend creates an ephemeral-sequential child named like Apache
 * Curator's InterProcessReadWriteLock nodes with its protection prefix:
 *
 *		_c_<uuid>-__WRIT__<seq>		exclusive
 *		_c_<uuid>-__READ__<seq>		shared
 *
 * where <uuid> is fresh for every attempt.  With zklock.exclusive_node_style
 * = 'mutex' an exclusive node is named like Curator's InterProcessMutex
 * nodes instead, _c_<uuid>-lock-<seq>, so that zklock and InterProcessMutex
 * wait in one queue (a mutex queue has no readers).
 *
 * The children of the lock node, ordered by sequence, are the queue
 * (contender.c says which children count and what each one's mode is).  A
 * writer holds the lock when no contender is before it; a reader when no
 * writer is before it.  A waiter watches the one node whose deletion may
 * let it through (ZkBlockingContender), so a release wakes only the
 * waiters it unblocks; it also watches its own node (see "Waiting").
 *
 * Round trips.  The create is sent as one ZooKeeper multi together with
 * an (empty) setData of the lock node, whose answer carries the lock
 * node's child count right after our create (ZkCreateCounted).  A count of
 * one means our node is alone: the lock is ours, and an uncontended
 * acquire costs one write and no read.  Otherwise the queue is read once.
 *
 * Waiting.  The contenders ahead of us can only go away: a node created
 * after ours always comes after it in queue order (contender.c orders the
 * sequence numbers as a circle, so this holds across the counter's wrap
 * too), so nobody can join the queue ahead of us: the queue as read once,
 * minus the nodes seen deleted since, holds everything ahead of us.  When
 * the watched node is deleted and it was the only conflicting node ahead
 * in our copy, the lock is granted on the notification itself, without
 * reading the queue: a handoff costs the holder's delete plus one
 * notification.  Otherwise the copy of the other nodes ahead may be stale,
 * and the queue is read once more.  Our own node is watched too, from the
 * first time we wait: ZooKeeper delivers notifications in the order of the
 * changes, so if another client deleted our node, we learn it before the
 * notification that would grant us the lock.
 *
 * Deadlocks.  A wait that lasts deadlock_timeout is published and checked
 * for a cycle across the whole ensemble (deadlock.c); the record is
 * withdrawn however the wait ends.
 *
 * Release.  ZkReleaseSend deletes the nodes of released locks, one
 * delete or multis of deletes however many they are, and ZkReleaseWait
 * waits until ZooKeeper applied them (synchronous release) or returns at
 * once; the deletes are retried after a lost connection until done.
 *
 * Connection loss.  A create whose answer was lost may or may not have made
 * a node.  After reconnecting we look for a child with our attempt's prefix
 * before creating again, so an attempt never leaves an orphan that would
 * block the queue.  However an attempt ends without the lock (timeout,
 * cancel, error), its node is deleted; if its create had not answered yet,
 * its prefix is swept instead.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "storage/proc.h"
#include "utils/memutils.h"

#include "contender.h"
#include "deadlock.h"
#include "lock_attempt.h"
#include "lock_recipe.h"
#include "node_data.h"
#include "path_memory.h"
#include "text_encoding.h"
#include "zk_session.h"

static const char *zk_last_component(const char *path);
static void zk_forget(ZkAttempt *at, int i);
static void zk_drop_blocker(ZkAttempt *at, int b);
static void zk_raise_disappeared(ZkAttempt *at) pg_attribute_noreturn();
static void zk_queue_alone(ZkAttempt *at);
static void zk_create_node(ZkAttempt *at);
static char *zk_describe_owner(const char *data, int len);
static void zk_warn_blind(ZkAttempt *at);
static void zk_log_still_waiting(ZkAttempt *at, int me);
static bool zk_check_deadlock(ZkAttempt *at);
static int	zk_watch_lease_node(ZkAttempt *at, const char *blocker,
								const struct Stat *st);

#define WHAT_ACQUIRE	"acquiring lock"
#define WHAT_WAIT		"waiting for lock"

/*
 * ZkMakeUuid
 *		A fresh random (version 4) UUID in its canonical 36-character form,
 *		into out[ZK_UUID_LEN + 1].
 */
void
ZkMakeUuid(char *out)
{
	uint8		b[16];

	if (!pg_strong_random(b, sizeof(b)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate random values")));
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	snprintf(out, ZK_UUID_LEN + 1,
			 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
			 b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/*
 * ZkMakeNodePrefix
 *		A fresh "_c_<uuid>-" protection prefix.
 */
void
ZkMakeNodePrefix(char *out)
{
	char		uuid[ZK_UUID_LEN + 1];

	ZkMakeUuid(uuid);
	snprintf(out, ZK_PREFIX_LEN + 1, "_c_%s-", uuid);
}

/*
 * ZkWaitDeadline
 *		The deadline (monotonic ms) of a wait that starts at 'start': after
 *		wait_ms if it is positive; at once (start) for 0; for a wait as long
 *		as needed (wait_ms < 0), lock_timeout's if set, and then
 *		*is_lock_timeout is set, else 0 (none).
 */
int64
ZkWaitDeadline(int64 start, int64 wait_ms, bool *is_lock_timeout)
{
	*is_lock_timeout = false;
	if (wait_ms >= 0)
		return start + wait_ms;
	if (LockTimeout > 0)
	{
		*is_lock_timeout = true;
		return start + LockTimeout;
	}
	return 0;
}

static const char *
zk_last_component(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * ZkAttemptTakeQueue
 *		Replace our copy of the queue by a getChildren answer.  False if the
 *		answer is a lost connection (the caller reads again).
 */
bool
ZkAttemptTakeQueue(ZkAttempt *at, ZkOp *op)
{
	MemoryContext old;
	int			rc = op->rc;

	if (ZkIsConnectionLoss(rc))
		return false;
	if (rc != ZOK && rc != ZNONODE)
		ZkRaiseForRc(rc, WHAT_ACQUIRE, at->args->lock_path);

	MemoryContextReset(at->cxt);
	old = MemoryContextSwitchTo(at->cxt);
	at->nqueue = 0;
	at->names = palloc(sizeof(char *) * Max(op->nchildren, 1));
	at->queue = palloc(sizeof(ZkContender) * Max(op->nchildren, 1));
	for (int i = 0; i < op->nchildren; i++)
		at->names[i] = pstrdup(op->children[i]);
	at->nqueue = ZkSortContenders(at->names, op->nchildren, at->queue);
	MemoryContextSwitchTo(old);
	return true;
}

/*
 * zk_queue_alone
 *		Our node is the lock node's only child: the queue is just us.
 */
static void
zk_queue_alone(ZkAttempt *at)
{
	MemoryContext old;

	MemoryContextReset(at->cxt);
	old = MemoryContextSwitchTo(at->cxt);
	at->names = palloc(sizeof(char *));
	at->queue = palloc(sizeof(ZkContender));
	at->names[0] = pstrdup(at->name);
	at->nqueue = ZkSortContenders(at->names, 1, at->queue);
	MemoryContextSwitchTo(old);
}

/*
 * zk_forget
 *		The contender at position i was deleted: drop it from our copy.
 */
static void
zk_forget(ZkAttempt *at, int i)
{
	memmove(&at->queue[i], &at->queue[i + 1],
			sizeof(ZkContender) * (at->nqueue - i - 1));
	at->nqueue--;
}

/*
 * zk_drop_blocker
 *		The node we waited for (position b) is gone.  If it
 *		was the only conflicting node ahead of us in our copy, the lock is
 *		ours without reading the queue: nobody can have joined ahead of us.
 *		If others were ahead, our copy of them may be stale (they may have
 *		gone without our watching them), so read the queue once rather than
 *		probe them one by one.
 */
static void
zk_drop_blocker(ZkAttempt *at, int b)
{
	int			me;

	zk_forget(at, b);
	me = ZkFindContender(at->queue, at->nqueue, at->name);
	if (ZkBlockingContender(at->queue, me, at->args->mode) >= 0)
		ZkAttemptRereadQueue(at);
}

/*
 * zk_raise_disappeared
 *		Our own queue node was deleted by another client while we waited.
 */
static void
zk_raise_disappeared(ZkAttempt *at)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("ZooKeeper queue node \"%s\" disappeared while acquiring lock \"%s\"",
					ZkUtf8ForMessage(at->znode),
					ZkUtf8ForMessage(at->args->lock_path)),
			 errdetail("Another client deleted the node.")));
}

/*
 * ZkAttemptRereadQueue
 *		Read the lock node's children again, riding out lost connections.
 */
void
ZkAttemptRereadQueue(ZkAttempt *at)
{
	for (;;)
	{
		ZkOp	   *op = ZkGetChildren(at->args->lock_node);
		bool		ok;

		ZkOpWait(op, WHAT_WAIT, at->args->lock_path);
		ok = ZkAttemptTakeQueue(at, op);
		ZkOpFree(op);
		if (ok)
			return;
		ZkWaitConnected(WHAT_WAIT, at->args->lock_path);
	}
}

/*
 * ZkCreateLockParents
 *		Create lock nodes and every missing ancestor as container nodes, all
 *		requests pipelined (ZooKeeper applies them in order, so a parent
 *		comes before its children).  Existing nodes are fine; an ancestor
 *		shared by several lock nodes is asked for once.
 */
void
ZkCreateLockParents(const char *const *lock_nodes, int n,
					const char *lock_path)
{
	List	   *wanted = NIL;
	ZkOp	  **ops;

	for (int i = 0; i < n; i++)
	{
		const char *lock_node = lock_nodes[i];

		for (const char *p = lock_node + 1;; p++)
		{
			if (*p == '/' || *p == '\0')
			{
				char	   *prefix = pnstrdup(lock_node, p - lock_node);
				ListCell   *lc;
				bool		seen = false;

				foreach(lc, wanted)
					seen |= (strcmp((char *) lfirst(lc), prefix) == 0);
				if (!seen)
					wanted = lappend(wanted, prefix);
				if (*p == '\0')
					break;
			}
		}
	}
	ops = palloc(sizeof(ZkOp *) * list_length(wanted));

	for (;;)
	{
		int			nops = 0;
		int			bad = ZOK;
		ListCell   *lc;

		CHECK_FOR_INTERRUPTS();
		/* protected like queue nodes when authenticated */
		foreach(lc, wanted)
			ops[nops++] = ZkCreate((char *) lfirst(lc), "", 0, ZOO_CONTAINER,
								   true);
		for (int i = 0; i < nops; i++)
		{
			ZkOpWait(ops[i], WHAT_ACQUIRE, lock_path);
			if (ops[i]->rc != ZOK && ops[i]->rc != ZNODEEXISTS && bad == ZOK)
				bad = ops[i]->rc;
			ZkOpFree(ops[i]);
		}
		if (bad == ZOK)
			break;
		if (ZkIsConnectionLoss(bad))
			ZkWaitConnected(WHAT_ACQUIRE, lock_path);
		else if (bad != ZNONODE)	/* ZNONODE: a parent was reaped; again */
			ZkRaiseForRc(bad, WHAT_ACQUIRE, lock_path);
	}
	pfree(ops);
	list_free_deep(wanted);
}

/*
 * ZkAttemptRecover
 *		After a create whose answer was lost: is there a node with our
 *		prefix?  If so adopt it (and fetch its czxid) and return true.
 */
bool
ZkAttemptRecover(ZkAttempt *at)
{
	int			i;

	ZkAttemptRereadQueue(at);
	i = ZkFindContenderByPrefix(at->queue, at->nqueue, at->prefix);
	if (i < 0)
		return false;

	at->znode = psprintf("%s/%s", at->args->lock_node, at->queue[i].name);
	at->name = zk_last_component(at->znode);
	for (;;)
	{
		ZkOp	   *op = ZkExists(at->znode);
		int			rc;

		ZkOpWait(op, WHAT_ACQUIRE, at->args->lock_path);
		rc = op->rc;
		at->token = op->stat.czxid;
		ZkOpFree(op);
		if (rc == ZOK)
			return true;
		if (rc == ZNONODE)
		{
			/* deleted under us: cannot be trusted; start over */
			at->znode = NULL;
			return false;
		}
		if (!ZkIsConnectionLoss(rc))
			ZkRaiseForRc(rc, WHAT_ACQUIRE, at->args->lock_path);
		ZkWaitConnected(WHAT_ACQUIRE, at->args->lock_path);
	}
}

/*
 * zk_create_node
 *		Create our queue node and learn the queue: one write when the node
 *		is alone (ZkCreateCounted), plus one read of the queue otherwise.
 *		Returns with at->znode set and the queue known.
 *
 * A lock node expected to be missing (path_memory.c) is created by a
 * request sent just before the queue node's, without waiting: ZooKeeper
 * applies a session's requests in order, so one round trip still does.
 * (Not in the same multi: the C client misreads the answer to a container
 * create inside a multi.)  When the guess was wrong, the lock node's create
 * is refused and the queue node's goes through all the same; when a lock
 * node expected to exist is missing, the queue node's create is refused
 * and sent again with the lock node's.  Where the lock node's data cannot
 * be set (an ACL that allows creating children but not writing the node),
 * the create and a getChildren are sent back to back instead: still one
 * round trip.
 */
static void
zk_create_node(ZkAttempt *at)
{
	const ZkAcquireArgs *args = at->args;
	bool		counted = true;
	bool		fresh = ZkGuessFresh(args->lock_node);
	bool		learnt = false; /* told path_memory.c how the node was */

	for (;;)
	{
		ZkOp	   *make = NULL;
		ZkOp	   *create;
		ZkOp	   *list = NULL;
		int			rc;
		int			make_rc = ZOK;
		bool		made = fresh;	/* the lock node's create was sent */

		CHECK_FOR_INTERRUPTS();
		if (made)
			make = ZkCreate(args->lock_node, "", 0, ZOO_CONTAINER, true);
		at->create_sent = true;
		if (counted)
			create = ZkCreateCounted(at->node_base, args->data, args->datalen,
									 args->lock_node);
		else
		{
			create = ZkCreate(at->node_base, args->data, args->datalen,
							  ZOO_EPHEMERAL_SEQUENTIAL, true);
			list = ZkGetChildren(args->lock_node);
		}

		/*
		 * Answers come in order: once the last is in, so are the others,
		 * and the backend is woken once.
		 */
		if (list != NULL)
			ZkOpWait(list, WHAT_ACQUIRE, args->lock_path);
		ZkOpWait(create, WHAT_ACQUIRE, args->lock_path);
		if (make != NULL)
		{
			ZkOpWait(make, WHAT_ACQUIRE, args->lock_path);
			make_rc = make->rc;
			ZkOpFree(make);
			if (make_rc == ZOK || make_rc == ZNODEEXISTS)
			{
				if (!learnt)
					ZkLearnFresh(args->lock_node, make_rc == ZOK);
				learnt = true;
				fresh = false;	/* it exists now */
			}
		}
		rc = create->rc;
		if (rc == ZOK)
		{
			bool		alone = counted && create->parent_children == 1;
			bool		ok = false;

			if (!learnt)
				ZkLearnFresh(args->lock_node, false);
			ZkAttemptCreated(at, create->value, create->stat.czxid, alone);
			ZkOpFree(create);
			if (alone)
				return;
			if (list != NULL)
			{
				ok = ZkAttemptTakeQueue(at, list);
				ZkOpFree(list);
			}
			if (!ok)
			{
				ZkWaitConnected(WHAT_ACQUIRE, args->lock_path);
				ZkAttemptRereadQueue(at);
			}
			return;
		}
		ZkOpFree(create);
		ZkOpFree(list);

		if (rc == ZNONODE && !made && zklock_guess_fresh_paths)
		{
			/* the lock node is gone: make it with our node */
			if (!learnt)
				ZkLearnFresh(args->lock_node, true);
			learnt = true;
			fresh = true;
		}
		else if (rc == ZNONODE)
		{
			/* a parent of the lock node is missing (too) */
			ZkCreateLockParents(&args->lock_node, 1, args->lock_path);
			fresh = false;
		}
		else if (rc == ZNOAUTH && counted)
			counted = false;	/* maybe only the setData was refused */
		else if (ZkIsConnectionLoss(rc))
		{
			ZkWaitConnected(WHAT_ACQUIRE, args->lock_path);
			if (ZkAttemptRecover(at))
				return;
		}
		else
			ZkRaiseForRc(rc, WHAT_ACQUIRE, args->lock_path);
	}
}

/*
 * ZkAttemptWait
 *		With our node in the queue, wait until it holds the lock.  Returns
 *		false when the wait's deadline passed (for zk_try_*), raises 55P03
 *		when it was lock_timeout's.  See the file header for why the copy
 *		of the queue is only ever shrunk, never read again, while waiting.
 */
bool
ZkAttemptWait(ZkAttempt *at, ZkGrant *grant)
{
	const ZkAcquireArgs *args = at->args;

	for (;;)
	{
		int			me;
		int			b;
		char	   *blocker;
		ZkOp	   *own = NULL;
		ZkOp	   *op;
		int			rc;
		struct Stat st;
		int			own_rc = ZOK;
		int			event;
		int			own_event;

		me = ZkFindContender(at->queue, at->nqueue, at->name);
		if (!at->warned_blind)
			zk_warn_blind(at);
		if (me < 0)
			zk_raise_disappeared(at);

		if (args->held_write_znode != NULL)
		{
			int			w = ZkFindContender(at->queue, at->nqueue,
											zk_last_component(args->held_write_znode));

			/* downgrade: our own write node is before us and excludes all */
			if (w >= 0 && w < me)
			{
				grant->needs_guard = (me - w > 1);
				at->granted = true;
				return true;
			}
		}

		b = ZkBlockingContender(at->queue, me, args->mode);
		if (b < 0)
		{
			at->granted = true;
			return true;
		}
		if (args->wait_ms == 0)
			return false;

		/* our own node, once; then the blocker: answers come in order */
		if (!at->own_watched)
			own = ZkGetData(at->znode, ZK_WATCH_HELD);
		blocker = psprintf("%s/%s", args->lock_node, at->queue[b].name);
		ZkWatchArm(blocker);
		op = ZkGetData(blocker, ZK_WATCH_BLOCKER);
		ZkOpWait(op, WHAT_WAIT, args->lock_path);
		rc = op->rc;
		st = op->stat;
		ZkOpFree(op);
		if (own != NULL)
		{
			ZkOpWait(own, WHAT_WAIT, args->lock_path);
			own_rc = own->rc;
			ZkOpFree(own);
			if (own_rc == ZNONODE)
				zk_raise_disappeared(at);
			if (own_rc == ZOK)
				at->own_watched = true;
			else if (!ZkIsConnectionLoss(own_rc))
				ZkRaiseForRc(own_rc, WHAT_WAIT, args->lock_path);
		}

		if (ZkIsConnectionLoss(rc) || ZkIsConnectionLoss(own_rc))
		{
			pfree(blocker);
			ZkWaitConnected(WHAT_WAIT, args->lock_path);
			ZkAttemptRereadQueue(at);
			continue;
		}
		if (rc == ZNONODE)
		{
			/* gone already: drop it and decide again */
			pfree(blocker);
			zk_drop_blocker(at, b);
			continue;
		}
		if (rc != ZOK)
			ZkRaiseForRc(rc, WHAT_WAIT, args->lock_path);
		if (ZkIsLeaseNode(st.ephemeralOwner))
		{
			/* a lease node: is its taker alive? (contender.c) */
			rc = zk_watch_lease_node(at, blocker, &st);
			if (rc != ZOK)
			{
				pfree(blocker);
				if (rc == ZNONODE)
					zk_drop_blocker(at, b);
				else if (ZkIsConnectionLoss(rc))
				{
					ZkWaitConnected(WHAT_WAIT, args->lock_path);
					ZkAttemptRereadQueue(at);
				}
				continue;
			}
		}
		pfree(blocker);

		for (;;)
		{
			int64		timeout_at = 0;
			int64		until = at->deadline;

			/* deadlock_timeout: check for a deadlock, and log_lock_waits */
			if (at->check_at == 0)
				at->check_at = at->start + DeadlockTimeout;
			if (!at->checked_deadlock)
				timeout_at = at->check_at;
			if (log_lock_waits && !at->logged_wait &&
				(timeout_at == 0 || at->start + DeadlockTimeout < timeout_at))
				timeout_at = at->start + DeadlockTimeout;
			if (timeout_at != 0 && (until == 0 || timeout_at < until))
				until = timeout_at;
			event = ZkWatchWait(until, WHAT_WAIT, args->lock_path);
			if (event != 0 || timeout_at == 0 || until != timeout_at)
				break;
			if (!at->checked_deadlock && ZkNowMs() >= at->check_at)
			{
				/* a check cut short by a lost connection: again later */
				at->checked_deadlock = zk_check_deadlock(at);
				if (!at->checked_deadlock)
					at->check_at = ZkNowMs() + DeadlockTimeout;
			}
			if (log_lock_waits && !at->logged_wait &&
				ZkNowMs() >= at->start + DeadlockTimeout)
				zk_log_still_waiting(at, me);
		}
		if (event == 0)
		{
			if (at->is_lock_timeout)
				ereport(ERROR,
						(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
						 errmsg("canceling statement due to lock timeout"),
						 errdetail("Waiting for ZooKeeper lock \"%s\".",
								   ZkUtf8ForMessage(args->lock_path))));
			return false;
		}

		/* a change of our own node spent its watch: set it again */
		own_event = ZkHeldNodeEvent(at->znode);
		if (own_event == ZOO_DELETED_EVENT)
			zk_raise_disappeared(at);
		else if (own_event != 0)
			at->own_watched = false;
		if (event == ZOO_DELETED_EVENT)
			zk_drop_blocker(at, b);
		/* any other event (data changed): evaluate and watch again */
	}
}

/*
 * zk_watch_lease_node
 *		The node we wait for is a lease's TTL node (lease_lock.c), whose
 *		Stat is 'st'.  If its taker died while it waited, the node holds
 *		nothing: delete it, on condition that it is still unwritten (a grant
 *		writes it).  If its taker waits, watch its children too, so that
 *		the waiter's death wakes us (a data watch does not see children).
 *		Returns ZOK to go on waiting for it; ZNONODE when it is gone (we
 *		deleted it, or it went meanwhile); ZBADVERSION to evaluate again (it
 *		was granted meanwhile); or a lost connection.
 *
 * A node that we may not delete (another identity's, under zklock.auth)
 * is waited for like any other: the server reaps it once its TTL ran out.
 */
static int
zk_watch_lease_node(ZkAttempt *at, const char *blocker, const struct Stat *st)
{
	ZkOp	   *op;
	int			rc;

	if (ZkLeaseNodeAbandoned(st->ephemeralOwner, st->version, st->cversion,
							 st->numChildren))
	{
		op = ZkDelete(blocker, 0);
		ZkOpWait(op, WHAT_WAIT, at->args->lock_path);
		rc = op->rc;
		ZkOpFree(op);
		if (rc == ZOK || rc == ZNONODE)
		{
			ereport(DEBUG1,
					(errmsg_internal("removed lease node \"%s\" whose taker is gone",
									 ZkUtf8ForMessage(blocker))));
			return ZNONODE;
		}
		if (rc == ZBADVERSION || ZkIsConnectionLoss(rc))
			return rc;
		if (rc != ZNOAUTH)
			ZkRaiseForRc(rc, WHAT_WAIT, at->args->lock_path);
		return ZOK;
	}
	if (st->numChildren == 0)
		return ZOK;

	op = ZkGetChildrenWatched(blocker);
	ZkOpWait(op, WHAT_WAIT, at->args->lock_path);
	rc = op->rc;
	ZkOpFree(op);
	if (rc == ZOK || rc == ZNONODE || ZkIsConnectionLoss(rc))
		return rc;
	ZkRaiseForRc(rc, WHAT_WAIT, at->args->lock_path);
	return rc;					/* not reached */
}

/*
 * zk_warn_blind
 *		A Curator InterProcessMutex (or go-zookeeper) node in the queue: that
 *		recipe orders by what follows "lock-", finds none in our node names,
 *		and so may take the lock while we hold it.  We wait for its nodes;
 *		it does not wait for ours.  Nothing can be refused here (the mix
 *		works in one direction), but the user must know.
 */
static void
zk_warn_blind(ZkAttempt *at)
{
	bool		seeing = false;

	/* only a mix is a problem: a queue of "-lock-" nodes alone is fine */
	for (int i = 0; i < at->nqueue; i++)
		seeing |= !at->queue[i].blind;
	for (int i = 0; seeing && i < at->nqueue; i++)
	{
		if (!at->queue[i].blind)
			continue;
		at->warned_blind = true;
		ereport(WARNING,
				(errmsg("ZooKeeper lock \"%s\" is also used by a client that does not see zklock's queue nodes",
						ZkUtf8ForMessage(at->args->lock_path)),
				 errdetail("Node \"%s\" is named like Curator's InterProcessMutex nodes, whose recipe does not see read/write lock nodes (Curator's InterProcessReadWriteLock, kazoo, zklock's default style): the two kinds of client can hold the lock at the same time.",
						   ZkUtf8ForMessage(at->queue[i].name)),
				 errhint("Use one node style per path: zklock.exclusive_node_style = 'mutex' where Curator's InterProcessMutex shares the path, 'rwlock' where its InterProcessReadWriteLock or kazoo does.")));
		return;
	}
}

/*
 * zk_describe_owner
 *		Who owns a queue node, in words, from its data: our own JSON, or
 *		whatever another client stored.
 */
static char *
zk_describe_owner(const char *data, int len)
{
	ZkOwner		o;
	char	   *text;

	ZkParseNodeData(data, len, &o);
	if (o.host != NULL && o.pid >= 0)
		return psprintf("PostgreSQL backend %d on %s:%d (cluster \"%s\", database \"%s\", application \"%s\")",
						o.pid, o.host, o.port,
						o.cluster_name ? o.cluster_name : "",
						o.database ? o.database : "",
						o.application_name ? o.application_name : "");
	text = ZkNodeDataAsText(data, len);
	if (text != NULL)
		return psprintf("a client that describes itself as \"%.100s\"", text);
	return pstrdup("a client that left no description");
}

/*
 * zk_log_still_waiting
 *		log_lock_waits for ZooKeeper locks: once deadlock_timeout has passed,
 *		log where we are in the queue and who holds the lock, as PostgreSQL
 *		does for its own locks.  Best effort: one getData on the first node
 *		of our (possibly slightly stale) copy of the queue.
 */
static void
zk_log_still_waiting(ZkAttempt *at, int me)
{
	const ZkAcquireArgs *args = at->args;
	int64		ms = ZkNowMs() - at->start;
	char	   *holder = pstrdup("nobody any more");
	char	   *path;
	ZkOp	   *op;

	at->logged_wait = true;
	path = psprintf("%s/%s", args->lock_node, at->queue[0].name);
	op = ZkGetData(path, ZK_NO_WATCH);
	if (ZkOpWaitUntil(op, ZkNowMs() + zklock_connect_timeout, WHAT_WAIT,
					  args->lock_path) && op->rc == ZOK)
		holder = zk_describe_owner(op->value, op->value_len);
	ZkOpFree(op);

	ereport(LOG,
			(errmsg("process %d still waiting for ZooKeeper %s lock \"%s\" after %ld ms",
					MyProcPid, ZkLockModeName(args->mode),
					ZkUtf8ForMessage(args->lock_path), (long) ms),
			 errdetail("Queue position %d of %d. First in the queue: node \"%s\", held by %s.",
					   me + 1, at->nqueue, ZkUtf8ForMessage(at->queue[0].name),
					   ZkUtf8ForMessage(holder))));
}

/*
 * zk_check_deadlock
 *		deadlock_timeout has passed while waiting: publish the wait and look
 *		for a cycle (deadlock.c), which ends this wait with 40P01 if this
 *		backend is the cycle's victim.  An attempt that is one of a set
 *		publishes every target of the set not granted yet: the set waits
 *		until all of them are.  False if a lost connection cut the check
 *		short.
 */
static bool
zk_check_deadlock(ZkAttempt *at)
{
	ZkAttempt  *single[1] = {at};
	ZkAttempt **group = at->group ? at->group : single;
	int			ngroup = at->group ? at->ngroup : 1;
	ZkWaitTarget *targets = palloc(sizeof(ZkWaitTarget) * ngroup);
	ZkWaitDesc	wait;

	wait.kind = ZK_WAIT_ALL_OF;
	wait.ntargets = 0;
	wait.targets = targets;
	for (int g = 0; g < ngroup; g++)
	{
		ZkAttempt  *a = group[g];
		ZkWaitTarget *t = &targets[wait.ntargets];
		int			me;

		if (a->granted || a->znode == NULL)
			continue;
		me = ZkFindContender(a->queue, a->nqueue, a->name);
		t->lock_path = a->args->lock_path;
		t->lock_node = a->args->lock_node;
		t->znode = a->znode;
		t->mode = a->args->mode;
		t->nahead = 0;
		t->ahead = palloc(sizeof(char *) * Max(me, 1));
		for (int i = 0; i < me; i++)
		{
			if (a->args->mode == ZK_MODE_EXCLUSIVE ||
				a->queue[i].mode == ZK_MODE_EXCLUSIVE)
				t->ahead[t->nahead++] =
					psprintf("%s/%s", a->args->lock_node, a->queue[i].name);
		}
		wait.ntargets++;
	}

	at->published = true;
	(void) ZkDeadlockPublish(&wait);
	return ZkDeadlockCheck(&wait);
}

/*
 * ZkAttemptAbandon
 *		The attempt ends without the lock: make sure its node goes (a
 *		persistent node through the session's guard, which also removes it
 *		if the session ends first).  With
 *		'wait' (a try that returns false) and synchronous release, the
 *		delete is waited for like a release, so that no attempt starting
 *		afterwards finds our node in its way; otherwise (it runs in
 *		PG_CATCH, and must not raise an ERROR) it goes in the background.
 */
void
ZkAttemptAbandon(ZkAttempt *at, bool wait)
{
	if (at->published)
		ZkDeadlockWithdraw();
	at->published = false;
	if (at->persistent)
	{
		/* a persistent node does not go with the session: the guard's job */
		ZkOp	   *op = ZkGuardRemove(wait && zklock_synchronous_release);

		if (op != NULL)
			(void) ZkReleaseWait(op);
	}
	else if (at->znode != NULL)
	{
		const char *znode = at->znode;

		if (wait && zklock_synchronous_release)
			(void) ZkReleaseWait(ZkReleaseSend(&znode, 1, true));
		else
			ZkDeleteInBackground(znode);
	}
	else if (at->create_sent)
		ZkSweepInBackground(at->args->lock_node, at->prefix);
}

/*
 * ZkAttemptBegin
 *		Start an attempt: its deadline (args->wait_ms; or lock_timeout when
 *		waiting as long as needed), the queue copy's memory, and the path
 *		of the node to create, with the given protection prefix (a fresh
 *		one when NULL).
 */
ZkAttempt *
ZkAttemptBegin(const ZkAcquireArgs *args, const char *prefix)
{
	ZkAttempt  *at = palloc0(sizeof(ZkAttempt));

	at->args = args;
	at->start = ZkNowMs();
	/* a try (wait_ms 0) returns before it would wait: no deadline */
	if (args->wait_ms != 0)
		at->deadline = ZkWaitDeadline(at->start, args->wait_ms,
									  &at->is_lock_timeout);
	at->cxt = AllocSetContextCreate(CurrentMemoryContext, "zklock queue",
									ALLOCSET_SMALL_SIZES);
	if (prefix != NULL)
		strlcpy(at->prefix, prefix, sizeof(at->prefix));
	else
		ZkMakeNodePrefix(at->prefix);
	at->node_base = psprintf("%s/%s%s", args->lock_node, at->prefix,
							 args->mode == ZK_MODE_SHARED ? ZK_READ_MARKER :
							 args->style == ZK_STYLE_MUTEX ? ZK_MUTEX_MARKER :
							 args->style == ZK_STYLE_LATCH ? ZK_LATCH_MARKER :
							 ZK_WRITE_MARKER);
	return at;
}

/*
 * ZkAttemptCreated
 *		Our node exists: remember it and its fencing token.  With 'alone'
 *		(the lock node had no other child) the queue is just us; else the
 *		caller fills the queue copy (ZkAttemptTakeQueue, or
 *		ZkAttemptRereadQueue).
 */
void
ZkAttemptCreated(ZkAttempt *at, const char *znode, int64 token, bool alone)
{
	at->znode = pstrdup(znode);
	at->name = zk_last_component(at->znode);
	at->token = token;
	if (alone)
		zk_queue_alone(at);
}

/*
 * ZkAttemptGrant
 *		The attempt got its lock: withdraw a published wait, fill in the
 *		grant, and log the end of a long wait as log_lock_waits does.
 */
void
ZkAttemptGrant(ZkAttempt *at, ZkGrant *grant)
{
	if (at->published)
		ZkDeadlockWithdraw();
	at->published = false;
	grant->znode = at->znode;
	grant->token = at->token;
	grant->own_watched = at->own_watched;
	if (at->logged_wait)
	{
		int64		ms = ZkNowMs() - at->start;

		ereport(LOG,
				(errmsg("process %d acquired ZooKeeper %s lock \"%s\" after %ld ms",
						MyProcPid, ZkLockModeName(at->args->mode),
						ZkUtf8ForMessage(at->args->lock_path), (long) ms)));

	}
}

/*
 * ZkAttemptFree
 *		Free what the attempt allocated, except its node's path, which a
 *		grant hands on.
 */
void
ZkAttemptFree(ZkAttempt *at)
{
	MemoryContextDelete(at->cxt);
	pfree(at->node_base);
	pfree(at);
}

/*
 * ZkAcquire
 *		Take a lock by the recipe.  Waits at most args->wait_ms (then returns
 *		false), or with wait_ms < 0 as long as needed, bounded by
 *		lock_timeout if set (then ERROR 55P03).  However it ends without the
 *		lock (false, timeout, cancel, any ERROR), our node is deleted.
 */
bool
ZkAcquire(const ZkAcquireArgs *args, ZkGrant *grant)
{
	ZkAttempt  *at = ZkAttemptBegin(args, NULL);
	bool		granted;

	memset(grant, 0, sizeof(*grant));
	PG_TRY();
	{
		zk_create_node(at);
		granted = ZkAttemptWait(at, grant);
	}
	PG_CATCH();
	{
		ZkAttemptAbandon(at, false);
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (granted)
		ZkAttemptGrant(at, grant);
	else
		ZkAttemptAbandon(at, true);
	ZkAttemptFree(at);
	return granted;
}

/*
 * ZkReleaseSend
 *		Send the deletes that release these nodes: one request for one node,
 *		multis of deletes for many, so that any number costs one round trip.
 *		With 'wait', returns an op for ZkReleaseWait; else NULL, and the
 *		deletes complete in the background.  The caller may free 'znodes'
 *		at once.  Does not raise an ERROR without 'wait'.
 */
ZkOp *
ZkReleaseSend(const char *const *znodes, int n, bool wait)
{
	return ZkDeleteNodes(znodes, n, wait);
}

/*
 * ZkReleaseWait
 *		Wait until ZooKeeper applied the deletes ZkReleaseSend sent: true
 *		once it has (or the session, which owned the nodes, ended); false if
 *		the connection stayed down for zklock.connect_timeout (see
 *		ZkOpWaitQuiet), the deletes then going on in the background.  A
 *		cancel ends the wait with its ERROR (the deletes go on), except
 *		where PostgreSQL holds interrupts.  Frees the op.
 */
bool
ZkReleaseWait(ZkOp *op)
{
	bool		confirmed;

	confirmed = ZkOpWaitQuiet(op, zklock_connect_timeout);
	ZkOpFree(op);
	return confirmed;
}

/*
 * ZkReleaseInBackground
 *		Delete one node without waiting (cleanup on an error path).
 */
void
ZkReleaseInBackground(const char *znode)
{
	ZkDeleteInBackground(znode);
}

/*
 * ZkVerifyHeld
 *		Confirm with the server, before a COMMIT, that this backend's held
 *		nodes still exist: one round trip, however many nodes it holds.
 *
 * A sync, then a getData leaving a held-node watch (ZK_WATCH_HELD) on
 * each node given (those not watched yet), all pipelined.  ZooKeeper
 * delivers a watch notification before any later response on the session,
 * so once the sync has answered, the deletion of any node watched before
 * has been collected for ZkTakeDeletedHeld(); the getData answers say the
 * same for the nodes given, and leave their watches for next time.  The
 * sync's answer also proves the session alive when it was processed.
 *
 * Sets gone[i] for the given nodes found missing.  Returns false if the
 * server stopped answering for quiet_ms: the deadline moves with every
 * answer, so many nodes take as long as they need.
 */
bool
ZkVerifyHeld(const char *const *znodes, int n, bool *gone, int64 quiet_ms)
{
	const char *what = "verifying lock";
	ZkOp	  **ops = palloc(sizeof(ZkOp *) * (n + 1));
	int64		deadline = ZkNowMs() + quiet_ms;

	memset(gone, 0, sizeof(bool) * n);
	for (;;)
	{
		bool		lost = false;
		bool		timed_out = false;

		ops[0] = ZkSync("/");
		for (int i = 0; i < n; i++)
			ops[i + 1] = ZkGetData(znodes[i], ZK_WATCH_HELD);

		for (int i = 0; i <= n; i++)
		{
			const char *path = i > 0 ? znodes[i - 1] : "/";
			int			rc;

			if (!timed_out && !ZkOpWaitUntil(ops[i], deadline, what, path))
				timed_out = true;
			if (timed_out)
			{
				ZkOpFree(ops[i]);
				continue;
			}
			deadline = ZkNowMs() + quiet_ms;	/* it answers: keep going */
			rc = ops[i]->rc;
			ZkOpFree(ops[i]);
			if (ZkIsConnectionLoss(rc))
				lost = true;
			else if (i > 0 && rc == ZNONODE)
				gone[i - 1] = true;
			else if (rc != ZOK)
				ZkRaiseForRc(rc, what, path);
		}
		if (timed_out)
			break;
		if (!lost)
		{
			pfree(ops);
			return true;
		}
		/* the connection dropped meanwhile: once it is back, ask again */
		if (!ZkWaitConnectedUntil(deadline, what, "/"))
			break;
		memset(gone, 0, sizeof(bool) * n);
	}
	pfree(ops);
	return false;
}
