/*-------------------------------------------------------------------------
 *
 * recipes/attempt.c
 *		One queue node's way through a lock queue: the steps of the lock
 *		recipe that the recipes built on its queue share (recipes/attempt.h
 *		says which recipe uses which): an attempt's beginning, its wait for
 *		the lock, its grant, and its end without the lock.
 *
 * An attempt begins with a fresh protection prefix "_c_<uuid>-" and the
 * path of the node it creates (ZkAttemptBegin).  Its nodes are made by
 * the create loop (recipes/attempt_create.c), which leaves it the queue
 * as read after its node was made; the attempt's copy of the queue and
 * the node that blocks it are recipes/attempt_queue.c's.
 *
 * Waiting.  A writer holds the lock when no contender is before it; a
 * reader when no writer is before it.  A waiter watches the one node whose
 * deletion may let it through (ZkBlockingContender), so a release wakes
 * only the waiters it unblocks.  Nobody can join the queue ahead of us,
 * so when the watched node is deleted and it was the only conflicting node
 * ahead in our copy, the lock is granted on the notification itself,
 * without reading the queue: a handoff costs the holder's delete plus one
 * notification.  Our own node is watched too, from the first time we
 * wait: ZooKeeper delivers notifications in the order of the changes, so
 * if another client deleted our node, we learn it before the notification
 * that would grant us the lock.  A wait that lasts deadlock_timeout is
 * checked for a deadlock and logged with log_lock_waits
 * (recipes/long_wait.c).
 *
 * However an attempt ends without the lock (timeout, cancel, error),
 * ZkAttemptAbandon deletes its node; if its create had not answered yet,
 * its prefix is swept instead.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/memutils.h"

#include "base/contender.h"
#include "cluster/wait_record.h"
#include "recipes/deadlock_timer.h"
#include "recipes/attempt.h"
#include "base/text_encoding.h"
#include "client/client.h"

static bool zk_queue_grants(ZkAttempt *at, ZkGrant *grant, int *me, int *b);
static bool zk_watch_blocker(ZkAttempt *at, int b);
static int	zk_sleep(ZkAttempt *at, int me);
static bool zk_wait_queue(ZkAttempt *at, ZkGrant *grant);
static void zk_warn_blind(ZkAttempt *at);
static int	zk_watch_lease_node(ZkAttempt *at, const char *blocker,
								const struct Stat *st);

/*
 * ZkAttemptShape
 *		The shape of a wait with the node of 'args', one of 'nqueues' taken
 *		at once: nqueues, unless the node is granted by other rules than its
 *		place in the queue (an upgrade or a downgrade, behind our own other
 *		node), which no shape describes (0).
 */
int
ZkAttemptShape(const ZkAcquireArgs *args, int nqueues)
{
	if (args->held_read_znode != NULL || args->held_write_znode != NULL)
		return 0;
	return nqueues;
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
 * zk_queue_grants
 *		Decide from our copy of the queue: true if our node holds the lock
 *		(ZkAttemptBlocking: no conflicting node before it, or our own other node,
 *		a downgrade's write node or an upgrade's read node, decides); else
 *		*b is the position of the node that blocks us.  *me is our own
 *		position.  Our node missing from the queue is an ERROR.
 */
static bool
zk_queue_grants(ZkAttempt *at, ZkGrant *grant, int *me, int *b)
{
	*me = ZkFindContender(at->queue, at->nqueue, at->name);
	if (!at->warned_blind)
		zk_warn_blind(at);
	if (*me < 0)
		ZkAttemptRaiseDisappeared(at, false);
	*b = ZkAttemptBlocking(at, *me, &grant->keep_other);
	return *b < 0;
}

/*
 * zk_watch_blocker
 *		Watch the node at position b of our queue, which blocks us, and our
 *		own node the first time (answers come in order: one round trip).
 *		True once the watch is set: sleep until it fires.  False when the
 *		queue changed meanwhile (the blocker is gone, or the connection was
 *		lost and the queue read again): decide again.
 */
static bool
zk_watch_blocker(ZkAttempt *at, int b)
{
	ZkOp	   *own = NULL;
	ZkOp	   *op;
	char	   *blocker;
	struct Stat st;
	int			rc;
	int			own_rc = ZOK;

	if (!at->own_watched)
	{
		ZkWatchArm(at->znode, ZK_WATCH_OWN);
		own = ZkGetData(at->znode, ZK_WATCH_OWN);
	}
	blocker = psprintf("%s/%s", at->args->lock_node, at->queue[b].name);
	ZkWatchArm(blocker, ZK_WATCH_BLOCKER);
	op = ZkGetData(blocker, ZK_WATCH_BLOCKER);
	ZkOpWait(op);
	rc = op->rc;
	st = op->stat;
	ZkOpFree(op);
	if (own != NULL)
	{
		own_rc = ZkOpResult(own);
		if (own_rc == ZNONODE)
			ZkAttemptRaiseDisappeared(at, false);
		if (own_rc == ZOK)
			at->own_watched = true;
		else if (!ZkIsConnectionLoss(own_rc))
			ZkRaiseForRc(own_rc);
	}

	if (rc == ZOK && ZkIsLeaseNode(st.ephemeralOwner) &&
		!ZkIsConnectionLoss(own_rc))
	{
		/* a lease node: is its taker alive? (base/contender.c) */
		rc = zk_watch_lease_node(at, blocker, &st);
		if (rc == ZBADVERSION)
		{
			pfree(blocker);
			return false;		/* granted meanwhile: evaluate again */
		}
	}
	pfree(blocker);
	if (ZkIsConnectionLoss(rc) || ZkIsConnectionLoss(own_rc))
	{
		/* read again, once the connection is back */
		ZkAttemptRereadQueue(at);
		return false;
	}
	if (rc == ZNONODE)
	{
		/* gone already: drop it and decide again */
		ZkAttemptDropBlocker(at, b);
		return false;
	}
	if (rc != ZOK)
		ZkRaiseForRc(rc);
	return true;
}

/*
 * zk_sleep
 *		Sleep until the blocker's watch fires or the attempt's deadline
 *		passes; each time deadlock_timeout passes meanwhile, check for a
 *		deadlock and say log_lock_waits' "still waiting" (our position is
 *		'me').  Returns the watch's event, or 0 if the deadline passed.
 */
static int
zk_sleep(ZkAttempt *at, int me)
{
	int			event;

	while (ZkDeadlockTimerWait(at->deadline, &event))
	{
		/* deadlock_timeout passed: check for a deadlock, log_lock_waits */
		if (!at->checked_deadlock)
		{
			/* a check cut short by a lost connection: again later */
			at->checked_deadlock = ZkAttemptCheckDeadlock(at);
			if (!at->checked_deadlock)
				ZkDeadlockTimerAgain();
		}
		if (log_lock_waits && !at->logged_wait)
			ZkAttemptLogStillWaiting(at, me);
	}
	return event;
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
		int			b = -1;
		int			event;
		int			own_event;

		if (zk_queue_grants(at, grant, &me, &b))
		{
			at->granted = true;
			return true;
		}
		if (args->wait_ms == 0)
			return false;
		if (!zk_watch_blocker(at, b))
			continue;

		event = zk_sleep(at, me);
		if (event == 0)
		{
			if (at->is_lock_timeout)
				ZkRaiseLockTimeout(args->waited_for, args->lock_path);
			return false;
		}

		/* a change of our own node spent its watch, or another wait took
		 * the own watch over since: set it again */
		own_event = ZkOwnNodeEvent(at->znode);
		if (own_event == ZOO_DELETED_EVENT)
			ZkAttemptRaiseDisappeared(at, false);
		else if (own_event != 0)
			at->own_watched = false;
		if (event == ZOO_DELETED_EVENT)
			ZkAttemptDropBlocker(at, b);
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
	at->siblings = -1;
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
	const char *marker = args->mode == ZK_MODE_PERMIT ? ZK_LEASE_MARKER :
		args->mode == ZK_MODE_SHARED ? ZK_READ_MARKER :
		args->style == ZK_STYLE_MUTEX ? ZK_MUTEX_MARKER :
		args->style == ZK_STYLE_LATCH ? ZK_LATCH_MARKER :
		ZK_WRITE_MARKER;
	size_t		nodelen = strlen(args->lock_node);
	size_t		prefixlen;
	size_t		markerlen = strlen(marker);
	char	   *base;

	if (prefix != NULL)
		strlcpy(at->prefix, prefix, sizeof(at->prefix));
	else
		ZkMakeNodePrefix(at->prefix, ZkAttemptShape(args, 1));
	prefixlen = strlen(at->prefix);

	/* "<lock node>/<prefix><marker>", put together by hand: once per create */
	base = palloc(nodelen + 1 + prefixlen + markerlen + 1);
	memcpy(base, args->lock_node, nodelen);
	base[nodelen] = '/';
	memcpy(base + nodelen + 1, at->prefix, prefixlen);
	memcpy(base + nodelen + 1 + prefixlen, marker, markerlen + 1);
	if (at->node_base != NULL)
		pfree(at->node_base);
	at->node_base = base;
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
	if (at->logged_wait)
		ZkAttemptLogAcquired(at);
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
