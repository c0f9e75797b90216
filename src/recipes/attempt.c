/*-------------------------------------------------------------------------
 *
 * recipes/attempt.c
 *		One queue node's way through a lock queue: the steps of the lock
 *		recipe that the recipes built on its queue share (recipes/attempt.h
 *		says which recipe uses which).
 *
 * An attempt begins with a fresh protection prefix "_c_<uuid>-" and the
 * path of the node it creates (ZkAttemptBegin); the recipe creates the
 * node its own way and hands it over (ZkAttemptCreated), with the queue
 * (the lock node's children, common/contender.c) as read in the same round trip
 * or read here.
 *
 * Waiting.  A writer holds the lock when no contender is before it; a
 * reader when no writer is before it.  A waiter watches the one node whose
 * deletion may let it through (ZkBlockingContender), so a release wakes
 * only the waiters it unblocks.  The contenders ahead of us can only go
 * away: a node created after ours always comes after it in queue order
 * (common/contender.c orders the sequence numbers as a circle, so this holds
 * across the counter's wrap too), so nobody can join the queue ahead of
 * us: the queue as read once, minus the nodes seen deleted since, holds
 * everything ahead of us.  When the watched node is deleted and it was the
 * only conflicting node ahead in our copy, the lock is granted on the
 * notification itself, without reading the queue: a handoff costs the
 * holder's delete plus one notification.  Otherwise the copy of the other
 * nodes ahead may be stale, and the queue is read once more.  Our own node
 * is watched too, from the first time we wait: ZooKeeper delivers
 * notifications in the order of the changes, so if another client deleted
 * our node, we learn it before the notification that would grant us the
 * lock.
 *
 * Our own other node.  A reader that holds the write lock already (a
 * downgrade) is granted at once behind its own write node.  A writer that
 * holds the read lock already (an upgrade, which only zk_advisory's
 * functions ask for, as PostgreSQL's lock manager allows it) waits only
 * for the other readers that hold the lock with it: the nodes behind the
 * first writer ahead all wait for our read node, directly or not, so they
 * cannot be granted while it stays (ZkUpgradeLimit), and our deadlock
 * record names those readers alone.  Two upgrades of one lock wait for
 * each other's read node, which deadlock detection reports (40P01).  In
 * both cases, if contenders queued between our two nodes, the first one
 * must outlive the second (ZkGrant.needs_guard).
 *
 * Deadlocks.  A wait that lasts deadlock_timeout (recipes/deadlock_timer.c) is
 * published and checked for a cycle across the whole ensemble
 * (cluster/deadlock.c), and logged with log_lock_waits; the record is withdrawn
 * however the wait ends.
 *
 * Connection loss.  A create whose answer was lost may or may not have made
 * a node.  After reconnecting we look for a child with our attempt's prefix
 * before creating again (ZkAttemptRecover), so an attempt never leaves an
 * orphan that would block the queue.  However an attempt ends without the
 * lock (timeout, cancel, error), ZkAttemptAbandon deletes its node; if its
 * create had not answered yet, its prefix is swept instead.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "storage/proc.h"
#include "utils/memutils.h"

#include "common/contender.h"
#include "cluster/deadlock.h"
#include "cluster/wait_record.h"
#include "recipes/deadlock_timer.h"
#include "recipes/attempt.h"
#include "common/node_data.h"
#include "recipes/path_memory.h"
#include "common/text_encoding.h"
#include "client/client.h"

static const char *zk_last_component(const char *path);
static void zk_forget(ZkAttempt *at, int i);
static void zk_drop_blocker(ZkAttempt *at, int b);
static void zk_queue_alone(ZkAttempt *at);
static bool zk_wait_queue(ZkAttempt *at, ZkGrant *grant);
static int	zk_queue_detail(int position, int nqueue, const char *first,
							bool read, const char *data, int len);
static void zk_warn_blind(ZkAttempt *at);
static void zk_log_still_waiting(ZkAttempt *at, int me);
static bool zk_check_deadlock(ZkAttempt *at);
static int	zk_own_position(ZkAttempt *at, int me, const char *znode);
static int	zk_blocking(ZkAttempt *at, int me, bool *guard);
static int	zk_watch_lease_node(ZkAttempt *at, const char *blocker,
								const struct Stat *st);

/*
 * ZkMakeUuid
 *		A fresh version 4 UUID in its canonical 36-character form, into
 *		out[ZK_UUID_LEN + 1]: never the same twice in one process.
 *
 * A process draws 16 bytes from pg_strong_random once (again in a child
 * forked after that); each call adds a counter to the last 7 of them
 * (modulo 2^56), so one process cannot repeat a UUID, and two processes
 * differ by the 122 random bits each drew.  (Strong random bytes for each
 * attempt cost more than the rest of an uncontended zk_lock.)
 */
void
ZkMakeUuid(char *out)
{
	static const char hex[] = "0123456789abcdef";
	static uint8 seed[16];
	static int	seed_pid = 0;
	static uint64 counter = 0;
	uint8		b[16];
	uint64		low = 0;
	char	   *p = out;

	if (seed_pid != MyProcPid)
	{
		if (!pg_strong_random(seed, sizeof(seed)))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not generate random values")));
		seed[6] = (seed[6] & 0x0f) | 0x40;
		seed[8] = (seed[8] & 0x3f) | 0x80;
		seed_pid = MyProcPid;
		counter = 0;
	}
	memcpy(b, seed, 9);
	for (int i = 9; i < 16; i++)
		low = (low << 8) | seed[i];
	low += ++counter;
	for (int i = 15; i >= 9; i--)
	{
		b[i] = (uint8) (low & 0xff);
		low >>= 8;
	}
	for (int i = 0; i < 16; i++)
	{
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		*p++ = hex[b[i] >> 4];
		*p++ = hex[b[i] & 0x0f];
	}
	*p = '\0';
}

/*
 * ZkMakeNodePrefix
 *		A fresh "_c_<uuid>-" protection prefix, into out[ZK_PREFIX_LEN + 1].
 */
void
ZkMakeNodePrefix(char *out)
{
	memcpy(out, "_c_", 3);
	ZkMakeUuid(out + 3);
	out[ZK_PREFIX_LEN - 1] = '-';
	out[ZK_PREFIX_LEN] = '\0';
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

/*
 * ZkRaiseLockTimeout
 *		lock_timeout ran out while a recipe waited ('waited' says for what,
 *		on 'path'): 55P03, as for PostgreSQL's own locks.  Every recipe's
 *		lock timeout is raised here.
 */
void
ZkRaiseLockTimeout(ZkWaitedFor waited, const char *path)
{
	const char *p = ZkUtf8ForMessage(path);

	switch (waited)
	{
		case ZK_WAITED_FOR_LOCK:
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("canceling statement due to lock timeout"),
					 errdetail("Waiting for ZooKeeper lock \"%s\".", p)));
			break;
		case ZK_WAITED_FOR_SEMAPHORE:
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("canceling statement due to lock timeout"),
					 errdetail("Waiting for ZooKeeper semaphore \"%s\".", p)));
			break;
		case ZK_WAITED_FOR_BARRIER:
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("canceling statement due to lock timeout"),
					 errdetail("Waiting for ZooKeeper barrier \"%s\".", p)));
			break;
		case ZK_WAITED_FOR_ENTER:
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("canceling statement due to lock timeout"),
					 errdetail("Waiting to enter ZooKeeper double barrier \"%s\".", p)));
			break;
		case ZK_WAITED_FOR_LEAVE:
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("canceling statement due to lock timeout"),
					 errdetail("Waiting for the other members to leave ZooKeeper double barrier \"%s\".", p)));
			break;
	}
	pg_unreachable();
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
		ZkRaiseForRc(rc);

	MemoryContextReset(at->cxt);
	old = MemoryContextSwitchTo(at->cxt);
	at->nqueue = 0;
	at->names = palloc(sizeof(char *) * Max(op->nchildren, 1));
	at->queue = palloc(sizeof(ZkContender) * Max(op->nchildren, 1));
	for (int i = 0; i < op->nchildren; i++)
		at->names[i] = pstrdup(op->children[i]);
	at->nnames = op->nchildren;
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
	at->nnames = 1;
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
	bool		guard;

	zk_forget(at, b);
	me = ZkFindContender(at->queue, at->nqueue, at->name);
	if (zk_blocking(at, me, &guard) >= 0)
		ZkAttemptRereadQueue(at);
}

/*
 * zk_own_position
 *		Position of our own other node 'znode' (a downgrade's write node, an
 *		upgrade's read node) in our copy of the queue if it is ahead of 'me';
 *		-1 if there is none (or another client deleted it).
 */
static int
zk_own_position(ZkAttempt *at, int me, const char *znode)
{
	int			i;

	if (znode == NULL)
		return -1;
	i = ZkFindContender(at->queue, at->nqueue, zk_last_component(znode));
	return i < me ? i : -1;
}

/*
 * zk_blocking
 *		The one node our node at position 'me' waits for, or -1 if it holds
 *		the lock.  A downgrade holds it at once behind our own write node;
 *		an upgrade waits only for the other readers that hold the lock
 *		(ZkUpgradeBlockingContender); anything else by the queue's rule
 *		(ZkBlockingContender).  *guard: granted with contenders between
 *		our other node and ours, so that node must outlive ours.
 */
static int
zk_blocking(ZkAttempt *at, int me, bool *guard)
{
	const ZkAcquireArgs *args = at->args;
	int			own;
	int			b;

	*guard = false;
	own = zk_own_position(at, me, args->held_write_znode);
	if (own >= 0)
	{
		*guard = (me - own > 1);
		return -1;
	}
	own = zk_own_position(at, me, args->held_read_znode);
	if (own < 0)
		return ZkBlockingContender(at->queue, me, args->mode);
	b = ZkUpgradeBlockingContender(at->queue, me, own);
	*guard = (b < 0 && me - own > 1);
	return b;
}

/*
 * ZkAttemptRaiseDisappeared
 *		Our own queue node was deleted by another client while we were
 *		taking the lock (the operation's context names the lock), or, with
 *		'waiter_child', the node or its waiter child (a lease's).
 *
 * Unless the session is gone: the server deletes a session's ephemeral
 * nodes when it expires it, and a server cut off from the leader can pass
 * that delete on before the session's end reaches us.  So the session is
 * confirmed first (at once within its alive window, else one round trip):
 * expired, it is the lost session's ERROR (08006, naming the lost locks);
 * not confirmed, the lost connection's.
 */
void
ZkAttemptRaiseDisappeared(ZkAttempt *at, bool waiter_child)
{
	switch (ZkSessionConfirmAlive())
	{
		case ZK_SESSION_ALIVE:
			break;
		case ZK_SESSION_EXPIRED:
			ZkRaiseForRc(ZSESSIONEXPIRED);
		case ZK_SESSION_UNCONFIRMED:
			ZkRaiseForRc(ZCONNECTIONLOSS);
	}
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("ZooKeeper queue node \"%s\" disappeared",
					ZkUtf8ForMessage(at->znode)),
			 waiter_child ?
			 errdetail("Another client deleted the node or its waiter child.") :
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

		ZkOpWait(op);
		ok = ZkAttemptTakeQueue(at, op);
		ZkOpFree(op);
		if (ok)
			return;
		ZkWaitConnected();
	}
}

/*
 * ZkCollectFreshCreates
 *		The answers to the creates of lock nodes expected to be missing
 *		(recipes/path_memory.c), sent just before the request that needs them
 *		(makes[i]; NULL where none was sent): free each, tell path memory
 *		how the node was found unless learnt[i] says it was told already,
 *		and clear missing[i] for each node that exists now.  True if a
 *		create was refused because a parent of its node is missing.  The
 *		caller has waited for the later request: answers come in order, so
 *		these are in already.
 */
bool
ZkCollectFreshCreates(ZkOp **makes, const char *const *nodes, int n,
					  bool *learnt, bool *missing)
{
	bool		parent_missing = false;

	for (int i = 0; i < n; i++)
	{
		int			rc;

		if (makes[i] == NULL)
			continue;
		ZkOpWait(makes[i]);
		rc = makes[i]->rc;
		ZkOpFree(makes[i]);
		makes[i] = NULL;
		if (rc == ZOK || rc == ZNODEEXISTS)
		{
			if (!learnt[i])
				ZkLearnFresh(nodes[i], rc == ZOK);
			learnt[i] = true;
			missing[i] = false; /* it exists now */
		}
		else if (rc == ZNONODE)
			parent_missing = true;
	}
	return parent_missing;
}

/*
 * ZkCreateLockParents
 *		Create lock nodes and every missing ancestor as container nodes, all
 *		requests pipelined (ZooKeeper applies them in order, so a parent
 *		comes before its children).  Existing nodes are fine; an ancestor
 *		shared by several lock nodes is asked for once.
 */
void
ZkCreateLockParents(const char *const *lock_nodes, int n)
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
			ZkOpWait(ops[i]);
			if (ops[i]->rc != ZOK && ops[i]->rc != ZNODEEXISTS && bad == ZOK)
				bad = ops[i]->rc;
			ZkOpFree(ops[i]);
		}
		if (bad == ZOK)
			break;
		if (ZkIsConnectionLoss(bad))
			ZkWaitConnected();
		else if (bad != ZNONODE)	/* ZNONODE: a parent was reaped; again */
			ZkRaiseForRc(bad);
	}
	pfree(ops);
	list_free_deep(wanted);
}

/*
 * ZkAttemptRecover
 *		After a create whose answer was lost: is there a node with our
 *		prefix among the lock node's children?  If so adopt it (and fetch
 *		its czxid) and return true; false if there is none, and the create
 *		may be sent again under the same prefix.
 *
 * This is the one recovery step of every recipe that creates nodes under
 * a protection prefix: a lock's queue node, each node of a lock set, a
 * semaphore's mutex node and permit node.  It looks at every child, not
 * only at the queue's contenders, since a lease node is no contender.
 * The queue is read again on the way (at->queue).
 */
bool
ZkAttemptRecover(ZkAttempt *at)
{
	size_t		plen = strlen(at->prefix);
	int			i;

	ZkAttemptRereadQueue(at);
	for (i = 0; i < at->nnames; i++)
	{
		if (strncmp(at->names[i], at->prefix, plen) == 0)
			break;
	}
	if (i == at->nnames)
		return false;

	at->znode = psprintf("%s/%s", at->args->lock_node, at->names[i]);
	at->name = zk_last_component(at->znode);
	for (;;)
	{
		ZkOp	   *op = ZkExists(at->znode);
		int			rc;

		ZkOpWait(op);
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
			ZkRaiseForRc(rc);
		ZkWaitConnected();
	}
}

/*
 * ZkAttemptWait
 *		With our node in the queue, wait until it holds the lock.  Returns
 *		false when the wait's deadline passed (for zk_try_*), raises 55P03
 *		when it was lock_timeout's.  See the file header for why the copy
 *		of the queue is only ever shrunk, never read again, while waiting.
 *		deadlock_timeout's timer runs from the first sleep to the end of
 *		the wait (an ERROR's end is ZkAttemptAbandon's).
 */
bool
ZkAttemptWait(ZkAttempt *at, ZkGrant *grant)
{
	bool		granted = zk_wait_queue(at, grant);

	ZkDeadlockTimerStop();
	return granted;
}

/*
 * zk_wait_queue
 *		ZkAttemptWait's loop: decide from our copy of the queue, watch the
 *		node that blocks us, sleep, and decide again.
 */
static bool
zk_wait_queue(ZkAttempt *at, ZkGrant *grant)
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
			ZkAttemptRaiseDisappeared(at, false);

		b = zk_blocking(at, me, &grant->needs_guard);
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
		ZkOpWait(op);
		rc = op->rc;
		st = op->stat;
		ZkOpFree(op);
		if (own != NULL)
		{
			ZkOpWait(own);
			own_rc = own->rc;
			ZkOpFree(own);
			if (own_rc == ZNONODE)
				ZkAttemptRaiseDisappeared(at, false);
			if (own_rc == ZOK)
				at->own_watched = true;
			else if (!ZkIsConnectionLoss(own_rc))
				ZkRaiseForRc(own_rc);
		}

		if (ZkIsConnectionLoss(rc) || ZkIsConnectionLoss(own_rc))
		{
			pfree(blocker);
			ZkWaitConnected();
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
			ZkRaiseForRc(rc);
		if (ZkIsLeaseNode(st.ephemeralOwner))
		{
			/* a lease node: is its taker alive? (common/contender.c) */
			rc = zk_watch_lease_node(at, blocker, &st);
			if (rc != ZOK)
			{
				pfree(blocker);
				if (rc == ZNONODE)
					zk_drop_blocker(at, b);
				else if (ZkIsConnectionLoss(rc))
				{
					ZkWaitConnected();
					ZkAttemptRereadQueue(at);
				}
				continue;
			}
		}
		pfree(blocker);

		while (ZkDeadlockTimerWait(at->deadline, &event))
		{
			/* deadlock_timeout passed: check for a deadlock, log_lock_waits */
			if (!at->checked_deadlock)
			{
				/* a check cut short by a lost connection: again later */
				at->checked_deadlock = zk_check_deadlock(at);
				if (!at->checked_deadlock)
					ZkDeadlockTimerAgain();
			}
			if (log_lock_waits && !at->logged_wait)
				zk_log_still_waiting(at, me);
		}
		if (event == 0)
		{
			if (at->is_lock_timeout)
				ZkRaiseLockTimeout(args->waited_for, args->lock_path);
			return false;
		}

		/* a change of our own node spent its watch: set it again */
		own_event = ZkHeldNodeEvent(at->znode);
		if (own_event == ZOO_DELETED_EVENT)
			ZkAttemptRaiseDisappeared(at, false);
		else if (own_event != 0)
			at->own_watched = false;
		if (event == ZOO_DELETED_EVENT)
			zk_drop_blocker(at, b);
		/* any other event (data changed): evaluate and watch again */
	}
}

/*
 * zk_watch_lease_node
 *		The node we wait for is a lease's TTL node (recipes/lease.c), whose
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
		ZkOpWait(op);
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
			ZkRaiseForRc(rc);
		return ZOK;
	}
	if (st->numChildren == 0)
		return ZOK;

	op = ZkGetChildrenWatched(blocker);
	ZkOpWait(op);
	rc = op->rc;
	ZkOpFree(op);
	if (rc == ZOK || rc == ZNONODE || ZkIsConnectionLoss(rc))
		return rc;
	ZkRaiseForRc(rc);
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
	const char *style;

	/* only a mix is a problem: a queue of "-lock-" nodes alone is fine */
	for (int i = 0; i < at->nqueue; i++)
		seeing |= !at->queue[i].blind;
	for (int i = 0; seeing && i < at->nqueue; i++)
	{
		if (!at->queue[i].blind)
			continue;
		at->warned_blind = true;
		style = strstr(at->queue[i].name, "-" ZK_LATCH_MARKER) ? "latch" : "mutex";
		ereport(WARNING,
				(errmsg("ZooKeeper lock \"%s\" is used with two node styles, \"%s\" and \"rwlock\"",
						ZkUtf8ForMessage(at->args->lock_path), style),
				 errdetail("Node \"%s\" has the %s style and other nodes of the queue the rwlock style: another zklock backend (zklock.exclusive_node_style) or another client uses the other style on this path. zklock sees both styles, but Curator's InterProcessMutex and LeaderLatch see their own style only, so such a client can hold the lock at the same time as an rwlock-style holder.",
						   ZkUtf8ForMessage(at->queue[i].name), style),
				 errhint("Use one node style per path: zklock.exclusive_node_style = 'mutex' where Curator's InterProcessMutex shares the path, 'latch' where its LeaderLatch does, 'rwlock' (the default) where its InterProcessReadWriteLock or kazoo does.")));
		return;
	}
}

/*
 * zk_queue_detail
 *		The DETAIL of log_lock_waits' message: our place in the queue, the
 *		queue's first node, and who owns it, from that node's data (unless
 *		it could not be 'read'): our own JSON, or whatever another client
 *		stored.  One whole sentence for each kind of owner.
 */
static int
zk_queue_detail(int position, int nqueue, const char *first, bool read,
				const char *data, int len)
{
	ZkOwner		o;
	char	   *text;

	first = ZkUtf8ForMessage(first);
	if (!read)
		return errdetail("Queue position %d of %d. First in the queue: node \"%s\", held by nobody any more.",
						 position, nqueue, first);
	ZkParseNodeData(data, len, &o);
	if (o.host != NULL && o.pid >= 0)
		return errdetail("Queue position %d of %d. First in the queue: node \"%s\", held by PostgreSQL backend %d on %s:%d (cluster \"%s\", database \"%s\", application \"%s\").",
						 position, nqueue, first, o.pid,
						 ZkUtf8ForMessage(o.host), o.port,
						 ZkUtf8ForMessage(o.cluster_name ? o.cluster_name : ""),
						 ZkUtf8ForMessage(o.database ? o.database : ""),
						 ZkUtf8ForMessage(o.application_name ?
										  o.application_name : ""));
	text = ZkNodeDataAsText(data, len);
	if (text != NULL)
		return errdetail("Queue position %d of %d. First in the queue: node \"%s\", held by a client that describes itself as \"%s\".",
						 position, nqueue, first,
						 ZkUtf8ForMessage(psprintf("%.100s", text)));
	return errdetail("Queue position %d of %d. First in the queue: node \"%s\", held by a client that left no description.",
					 position, nqueue, first);
}

/*
 * zk_log_still_waiting
 *		log_lock_waits for ZooKeeper locks: once deadlock_timeout has passed,
 *		log where we are in the queue and who holds the lock, as PostgreSQL
 *		does for its own locks.  Best effort: one getData on the first node
 *		of our (possibly slightly stale) copy of the queue.  An attempt that
 *		waits holds an exclusive or a shared node (a semaphore's mutex node
 *		and a lease's node are exclusive).
 */
static void
zk_log_still_waiting(ZkAttempt *at, int me)
{
	const ZkAcquireArgs *args = at->args;
	const char *lock_path = ZkUtf8ForMessage(args->lock_path);
	int64		ms = ZkNowMs() - at->start;
	char	   *path;
	ZkOp	   *op;
	bool		read;

	at->logged_wait = true;
	path = psprintf("%s/%s", args->lock_node, at->queue[0].name);
	op = ZkGetData(path, ZK_NO_WATCH);
	read = ZkOpWaitUntil(op, ZkNowMs() + zklock_connect_timeout) &&
		op->rc == ZOK;

	ereport(LOG,
			(args->mode == ZK_MODE_SHARED ?
			 errmsg("process %d still waiting for ZooKeeper shared lock \"%s\" after %ld ms",
					MyProcPid, lock_path, (long) ms) :
			 errmsg("process %d still waiting for ZooKeeper exclusive lock \"%s\" after %ld ms",
					MyProcPid, lock_path, (long) ms),
			 zk_queue_detail(me + 1, at->nqueue, at->queue[0].name, read,
							 op->value, op->value_len)));
	ZkOpFree(op);
}

/*
 * zk_check_deadlock
 *		deadlock_timeout has passed while waiting: publish the wait and look
 *		for a cycle (cluster/deadlock.c), which ends this wait with 40P01 if
 *		this backend is the cycle's victim. An attempt that is one of a set
 *		publishes every target of the set not granted yet: the set waits until
 *		all of them are. False if a lost connection cut the check short.
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
	wait.owner = at->args->data;
	wait.ownerlen = at->args->datalen;
	for (int g = 0; g < ngroup; g++)
	{
		ZkAttempt  *a = group[g];
		ZkWaitTarget *t = &targets[wait.ntargets];
		int			me;
		int			own;
		int			limit;

		if (a->granted || a->znode == NULL)
			continue;
		me = ZkFindContender(a->queue, a->nqueue, a->name);
		own = zk_own_position(a, me, a->args->held_read_znode);
		limit = own >= 0 ? ZkUpgradeLimit(a->queue, me) : 0;
		t->lock_path = a->args->lock_path;
		t->lock_node = a->args->lock_node;
		t->znode = a->znode;
		t->mode = a->args->mode;
		t->nahead = 0;
		t->ahead = palloc(sizeof(char *) * Max(me, 1));
		for (int i = 0; i < me; i++)
		{
			bool		blocks;

			/* an upgrade waits for the other readers holding the lock */
			if (own >= 0)
				blocks = i != own && i < limit;
			else
				blocks = a->args->mode == ZK_MODE_EXCLUSIVE ||
					a->queue[i].mode == ZK_MODE_EXCLUSIVE;
			if (blocks)
				t->ahead[t->nahead++] =
					psprintf("%s/%s", a->args->lock_node, a->queue[i].name);
		}
		wait.ntargets++;
	}

	at->published = true;
	(void) ZkWaitRecordPublish(&wait);
	return ZkDeadlockCheck(&wait);
}

/*
 * ZkAttemptAbandon
 *		Attempts end without their locks (a try that gives up, a timeout,
 *		cancel, an ERROR): the wait's deadlock timer stops, a published wait
 *		is withdrawn, and their nodes go.  The attempts of one call are one
 *		acquisition: a lock's attempt, a multi-lock's set, a semaphore's
 *		lease and mutex nodes.
 *
 * The nodes known are deleted in one batch, a persistent node (a lease's)
 * through the session's guard instead, which also removes it if the
 * session ends first.  If a create may have made a node that we do not
 * know (an attempt sent one and has no node), each attempt that sent a
 * create has its prefix swept from its lock node.  With 'wait' (a try that
 * returns false) and synchronous release, the deletes are waited for like
 * a release, so that no attempt starting afterwards finds our nodes in its
 * way; otherwise (in PG_CATCH, where no ERROR may be raised) they go in
 * the background, and nothing is allocated that could raise one: the
 * nodes are batched on the stack, a multi every 64 of them.
 */
void
ZkAttemptAbandon(ZkAttempt **at, int n, bool wait)
{
	bool		sync = wait && zklock_synchronous_release;
	const char *some[64];
	const char **znodes = some;
	int			room = lengthof(some);
	int			nznodes = 0;
	bool		unknown = false;

	/* a try that returns false may allocate; PG_CATCH may not */
	if (sync && n > room)
	{
		znodes = palloc(sizeof(char *) * n);
		room = n;
	}

	ZkDeadlockTimerStop();
	for (int i = 0; i < n; i++)
	{
		if (at[i]->published)
			ZkWaitRecordWithdraw();
		at[i]->published = false;
	}
	for (int i = 0; i < n; i++)
	{
		if (at[i]->persistent)
		{
			/* a persistent node outlives the session: the guard's job */
			ZkOp	   *op = ZkGuardRemove(sync);

			if (op != NULL)
				(void) ZkReleaseWait(op);
		}
		else if (at[i]->znode != NULL)
		{
			/* without a wait (PG_CATCH), a full batch goes at once */
			if (nznodes == room)
			{
				(void) ZkDeleteNodes(znodes, nznodes, false);
				nznodes = 0;
			}
			znodes[nznodes++] = at[i]->znode;
		}
		else if (at[i]->create_sent)
			unknown = true;
	}
	if (nznodes > 0)
	{
		ZkOp	   *op = ZkDeleteNodes(znodes, nznodes, sync);

		if (op != NULL)
			(void) ZkReleaseWait(op);
	}
	for (int i = 0; unknown && i < n; i++)
	{
		if (!at[i]->persistent && at[i]->create_sent)
			ZkSweepInBackground(at[i]->args->lock_node, at[i]->prefix);
	}
	if (znodes != some)
		pfree(znodes);
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
	ZkAttemptSetPrefix(at, prefix);
	return at;
}

/*
 * ZkAttemptSetPrefix
 *		Give the attempt a protection prefix ('prefix', or a fresh one when
 *		NULL) and the path of the node to create with it: the lock node,
 *		the prefix, and the marker of the node's mode and style.  Whether a
 *		create was sent under the old prefix is the caller's to sweep.
 */
void
ZkAttemptSetPrefix(ZkAttempt *at, const char *prefix)
{
	const ZkAcquireArgs *args = at->args;

	if (prefix != NULL)
		strlcpy(at->prefix, prefix, sizeof(at->prefix));
	else
		ZkMakeNodePrefix(at->prefix);
	if (at->node_base != NULL)
		pfree(at->node_base);
	at->node_base = psprintf("%s/%s%s", args->lock_node, at->prefix,
							 args->mode == ZK_MODE_PERMIT ? ZK_LEASE_MARKER :
							 args->mode == ZK_MODE_SHARED ? ZK_READ_MARKER :
							 args->style == ZK_STYLE_MUTEX ? ZK_MUTEX_MARKER :
							 args->style == ZK_STYLE_LATCH ? ZK_LATCH_MARKER :
							 ZK_WRITE_MARKER);
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
		ZkWaitRecordWithdraw();
	at->published = false;
	grant->znode = at->znode;
	grant->token = at->token;
	grant->own_watched = at->own_watched;
	if (at->logged_wait)
	{
		int64		ms = ZkNowMs() - at->start;
		const char *lock_path = ZkUtf8ForMessage(at->args->lock_path);

		/* an attempt that waited: exclusive or shared (as logged then) */
		ereport(LOG,
				(at->args->mode == ZK_MODE_SHARED ?
				 errmsg("process %d acquired ZooKeeper shared lock \"%s\" after %ld ms",
						MyProcPid, lock_path, (long) ms) :
				 errmsg("process %d acquired ZooKeeper exclusive lock \"%s\" after %ld ms",
						MyProcPid, lock_path, (long) ms)));
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
