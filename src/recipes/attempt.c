/*-------------------------------------------------------------------------
 *
 * recipes/attempt.c
 *		One queue node's way through a lock queue: the steps of the lock
 *		recipe that the recipes built on its queue share (recipes/attempt.h
 *		says which recipe uses which).
 *
 * An attempt begins with a fresh protection prefix "_c_<uuid>-" and the
 * path of the node it creates (ZkAttemptBegin).  The create loop
 * (ZkAttemptCreate) makes the nodes of one or several attempts in one
 * request, each recipe saying how (counted, with a TTL, with the nodes
 * above, with a read in the same round trip), and learns the queue (the
 * lock node's children, base/contender.c) as read in the same round
 * trip or read after.
 *
 * Waiting.  A writer holds the lock when no contender is before it; a
 * reader when no writer is before it.  A waiter watches the one node whose
 * deletion may let it through (ZkBlockingContender), so a release wakes
 * only the waiters it unblocks.  The contenders ahead of us can only go
 * away: a node created after ours always comes after it in queue order
 * (base/contender.c orders the sequence numbers as a circle, so this holds
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
 * before creating again (zk_attempt_recover), so an attempt never leaves an
 * orphan that would block the queue; the children are read behind a sync,
 * since the server we reconnected to may not have applied the lost create
 * yet.  The queue read by that search predates any create sent after it:
 * the queue an attempt waits by is always read after its node was made
 * (or known to be just us), never kept from before.  However an attempt
 * ends without the lock (timeout, cancel, error), ZkAttemptAbandon deletes
 * its node; if its create had not answered yet, its prefix is swept
 * instead.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "storage/proc.h"
#include "utils/memutils.h"

#include "base/contender.h"
#include "cluster/deadlock.h"
#include "cluster/wait_record.h"
#include "recipes/deadlock_timer.h"
#include "recipes/attempt.h"
#include "base/node_data.h"
#include "recipes/path_memory.h"
#include "base/text_encoding.h"
#include "client/client.h"

static const char *zk_last_component(const char *path);
static bool zk_take_queue(ZkAttempt *at, ZkOp *op);
static bool zk_collect_fresh_creates(ZkOp **makes, const char *const *nodes,
									 int n, bool *learnt, bool *missing);
static bool zk_attempt_recover(ZkAttempt *at);
static void zk_attempt_created(ZkAttempt *at, const char *znode, int64 token,
							   bool alone);
static void zk_forget(ZkAttempt *at, int i);
static void zk_drop_blocker(ZkAttempt *at, int b);
static void zk_queue_alone(ZkAttempt *at);
static void zk_queue_unknown(ZkAttempt *at);
static bool zk_queue_grants(ZkAttempt *at, ZkGrant *grant, int *me, int *b);
static bool zk_watch_blocker(ZkAttempt *at, int b);
static int	zk_sleep(ZkAttempt *at, int me);
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
 * zk_uuid_bytes
 *		16 fresh bytes for a UUID, never the same twice in one process.
 *
 * A process draws 16 bytes from pg_strong_random once (again in a child
 * forked after that); each call adds a counter to bytes 9 to 14 of them
 * (modulo 2^48), so one process cannot repeat them, and two processes
 * differ by the random bits each drew.  (Strong random bytes for each
 * attempt cost more than the rest of an uncontended zk_lock.)
 */
static void
zk_uuid_bytes(uint8 *b)
{
	static uint8 seed[16];
	static int	seed_pid = 0;
	static uint64 counter = 0;
	uint64		low = 0;

	if (seed_pid != MyProcPid)
	{
		if (!pg_strong_random(seed, sizeof(seed)))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not generate random values")));
		seed_pid = MyProcPid;
		counter = 0;
	}
	memcpy(b, seed, 16);
	for (int i = 9; i < 15; i++)
		low = (low << 8) | seed[i];
	low += ++counter;
	for (int i = 14; i >= 9; i--)
	{
		b[i] = (uint8) (low & 0xff);
		low >>= 8;
	}
}

/* a UUID's 16 bytes in their canonical 36-character form, into out */
static void
zk_uuid_format(const uint8 *b, char *out)
{
	static const char hex[] = "0123456789abcdef";
	char	   *p = out;

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
 * ZkMakeUuid
 *		A fresh version 4 (random) UUID in its canonical 36-character form,
 *		into out[ZK_UUID_LEN + 1]: never the same twice in one process.
 */
void
ZkMakeUuid(char *out)
{
	uint8		b[16];

	zk_uuid_bytes(b);
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	zk_uuid_format(b, out);
}

/*
 * ZkMakeNodePrefix
 *		A fresh "_c_<uuid>-" protection prefix, into out[ZK_PREFIX_LEN + 1],
 *		for the nodes of a wait of the given shape (base/contender.h,
 *		ZkPrefixShape): the UUID is of version 8, its last byte the shape.
 */
void
ZkMakeNodePrefix(char *out, int shape)
{
	uint8		b[16];

	Assert(shape >= 0 && shape <= ZK_MAX_SET_LOCKS);
	zk_uuid_bytes(b);
	b[6] = (b[6] & 0x0f) | 0x80;
	b[8] = (b[8] & 0x3f) | 0x80;
	b[15] = (uint8) shape;
	memcpy(out, "_c_", 3);
	zk_uuid_format(b, out + 3);
	out[ZK_PREFIX_LEN - 1] = '-';
	out[ZK_PREFIX_LEN] = '\0';
}

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
 * zk_take_queue
 *		Replace our copy of the queue by a getChildren answer.  False if the
 *		answer is a lost connection (the caller reads again).
 */
static bool
zk_take_queue(ZkAttempt *at, ZkOp *op)
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
	at->queue_known = true;
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
	at->queue_known = true;
	MemoryContextSwitchTo(old);
}

/*
 * zk_queue_unknown
 *		Drop our copy of the queue: it is not known until read again.
 */
static void
zk_queue_unknown(ZkAttempt *at)
{
	MemoryContextReset(at->cxt);
	at->names = NULL;
	at->nnames = 0;
	at->queue = NULL;
	at->nqueue = 0;
	at->queue_known = false;
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
	ZkOp	   *op = ZkGetChildrenAnswered(at->args->lock_node);

	(void) zk_take_queue(at, op);	/* never a lost connection */
	ZkOpFree(op);
}

/*
 * zk_collect_fresh_creates
 *		The answers to the creates of lock nodes expected to be missing
 *		(recipes/path_memory.c), sent just before the request that needs them
 *		(makes[i]; NULL where none was sent): free each, tell path memory
 *		how the node was found unless learnt[i] says it was told already,
 *		and clear missing[i] for each node that exists now.  True if a
 *		create was refused because a parent of its node is missing.  The
 *		caller has waited for the later request: answers come in order, so
 *		these are in already.
 */
static bool
zk_collect_fresh_creates(ZkOp **makes, const char *const *nodes, int n,
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
		/* ZNONODE: a parent was reaped; again */
		if (!ZkAwaitReconnect(bad) && bad != ZNONODE)
			ZkRaiseForRc(bad);
	}
	pfree(ops);
	list_free_deep(wanted);
}

/* ZkAttemptCreate's state across its rounds */
typedef struct ZkCreateLoop
{
	ZkAttempt **at;
	int			n;
	const ZkCreateOpts *o;
	bool		counted;		/* o->counted, until a ZNOAUTH cleared it */
	int			nfresh;			/* o->above, then each attempt's lock node */
	const char **fresh_nodes;
	bool	   *make;			/* create it first in the next round */
	bool	   *learnt;			/* path memory told how it was found */
	ZkOp	  **makes;
	const char **paths;			/* each attempt's node_base */
	const char **datas;
	int		   *lens;
	const char **parents;		/* each attempt's lock node */
	/* one round's requests */
	ZkOp	   *create;
	ZkOp	   *list;			/* the queue, read right behind the create */
	ZkOp	   *side;
	bool		parent_missing; /* a fresh create found a parent missing */
} ZkCreateLoop;

/*
 * zk_create_send
 *		Send one round: the creates of the nodes expected to be missing,
 *		the side read, the creates of our nodes (one multi, a plain create
 *		when one uncounted node, a TTL create for a lease), and, when the
 *		create answers with no count, the queue's getChildren right behind
 *		it.  Nothing is waited for.
 */
static void
zk_create_send(ZkCreateLoop *cl)
{
	const ZkCreateOpts *o = cl->o;
	ZkAttempt  *first = cl->at[0];

	for (int j = 0; j < cl->nfresh; j++)
	{
		const char *data = (j < o->nabove && o->above_data != NULL) ?
		o->above_data[j] : "";

		cl->makes[j] = cl->make[j] ?
			ZkCreate(cl->fresh_nodes[j], data, (int) strlen(data),
					 ZOO_CONTAINER, true) : NULL;
	}
	cl->side = o->side_read ? ZkGetData(o->side_read, ZK_NO_WATCH) : NULL;
	for (int i = 0; i < cl->n; i++)
		cl->at[i]->create_sent = true;
	cl->list = NULL;
	if (o->ttl_ms > 0)
		cl->create = ZkCreateTtl(first->node_base, first->args->data,
								 first->args->datalen, o->ttl_ms);
	else if (cl->counted || cl->n > 1)
		cl->create = ZkCreateSet(cl->n, cl->paths, cl->datas, cl->lens,
								 cl->counted ? cl->parents : NULL);
	else
		cl->create = ZkCreate(first->node_base, first->args->data,
							  first->args->datalen, ZOO_EPHEMERAL_SEQUENTIAL,
							  true);
	if (o->learn_queue && cl->n == 1 && !cl->counted)
		cl->list = ZkGetChildren(first->args->lock_node);
}

/*
 * zk_create_wait
 *		Wait for a round's answers; they come in order, so once the last is
 *		in, so are the others, and the backend is woken once.  Returns the
 *		create's result code; the fresh creates' answers are taken.
 */
static int
zk_create_wait(ZkCreateLoop *cl, ZkCreateResult *res)
{
	if (cl->list != NULL)
		ZkOpWait(cl->list);
	ZkOpWait(cl->create);
	if (cl->side != NULL)
		ZkOpWait(cl->side);
	cl->parent_missing = zk_collect_fresh_creates(cl->makes, cl->fresh_nodes,
												  cl->nfresh, cl->learnt,
												  cl->make);
	res->sent_at = cl->create->sent_at;
	return cl->create->rc;
}

/*
 * zk_read_queues
 *		Read the queue of every attempt whose queue is not known since its
 *		node was made (!at->queue_known: it was not alone in it), all
 *		getChildren pipelined: one round trip (one by one after a lost
 *		connection).
 */
static void
zk_read_queues(ZkAttempt **at, int n)
{
	ZkOp	  **ops = palloc0(sizeof(ZkOp *) * n);
	bool		lost = false;

	for (int i = 0; i < n; i++)
	{
		if (!at[i]->queue_known)
			ops[i] = ZkGetChildren(at[i]->args->lock_node);
	}
	for (int i = 0; i < n; i++)
	{
		if (ops[i] == NULL)
			continue;
		ZkOpWait(ops[i]);
		if (!lost && !zk_take_queue(at[i], ops[i]))
			lost = true;
		ZkOpFree(ops[i]);
		ops[i] = NULL;
	}
	pfree(ops);
	for (int i = 0; lost && i < n; i++)
	{
		if (!at[i]->queue_known)
			ZkAttemptRereadQueue(at[i]);
	}
}

/*
 * zk_create_made
 *		A round's create succeeded: tell path memory about the nodes not
 *		learnt yet, hand each attempt its node, token and count, and learn
 *		the queues if asked to.  Frees the round's create and listing.
 */
static void
zk_create_made(ZkCreateLoop *cl, ZkCreateResult *res)
{
	ZkOp	   *op = cl->create;
	bool		multi = (op->kind == ZKOP_CREATE_COUNTED);
	int64		token = op->stat.czxid;

	for (int j = 0; cl->o->guess_fresh && j < cl->nfresh; j++)
	{
		if (!cl->learnt[j])
			ZkLearnFresh(cl->fresh_nodes[j], false);
	}
	for (int i = 0; i < cl->n; i++)
	{
		int32		count = -1;
		const char *znode = multi ? ZkCreateSetResult(op, i, &count) :
		op->value;

		zk_attempt_created(cl->at[i], znode, token,
						 cl->o->learn_queue && count == 1);
		cl->at[i]->siblings = count;
		/* a persistent node (a lease's): the session's guard removes it */
		if (cl->at[i]->persistent)
			ZkGuardNode(cl->at[i]->znode);
	}
	res->mtime = cl->n == 1 ? op->stat.mtime : -1;
	ZkOpFree(op);
	cl->create = NULL;
	if (multi && !cl->counted)
	{
		/* the token: the czxid every node of the multi shares */
		ZkOp	   *ex = ZkExistsAnswered(cl->at[0]->znode);
		int			rc = ex->rc;

		token = ex->stat.czxid;
		ZkOpFree(ex);
		if (rc != ZOK)
			ZkRaiseForRc(rc);
		for (int i = 0; i < cl->n; i++)
			cl->at[i]->token = token;
	}
	if (cl->list != NULL)
	{
		if (!zk_take_queue(cl->at[0], cl->list))
			ZkAttemptRereadQueue(cl->at[0]);
		ZkOpFree(cl->list);
		cl->list = NULL;
	}
	else if (cl->o->learn_queue)
		zk_read_queues(cl->at, cl->n);
}

/*
 * zk_raise_no_ttl
 *		The server refused to create a TTL node: it does not support them.
 */
static void
zk_raise_no_ttl(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("ZooKeeper at \"%s\" does not support leases",
					zklock_hosts),
			 errdetail("A lease is held by a TTL node, and the server refused to create one."),
			 errhint("Start every ZooKeeper server with -Dzookeeper.extendedTypesEnabled=true.")));
}

/*
 * zk_create_refused
 *		A round's create was refused with 'rc' (not a lost connection):
 *		prepare the next round, or raise the refusal.
 *
 * ZNONODE for a lock node not seen in this attempt: it was reaped since
 * path memory last saw it.  The refusal names only the first missing node,
 * and the reaper may have taken others since they were last seen: every
 * node not seen in this attempt is created in the next round, so that one
 * more round trip does.  Any other ZNONODE: a parent of a lock node is
 * missing (created, with every missing ancestor, before the next round).
 * ZNOAUTH with a count asked for: maybe only a setData was refused.
 */
static void
zk_create_refused(ZkCreateLoop *cl, int rc)
{
	const ZkCreateOpts *o = cl->o;
	int			failed = cl->create->kind == ZKOP_CREATE_COUNTED ?
	ZkCreateSetFailure(cl->create) : 0;
	int			k = o->nabove + failed; /* its lock node, among the fresh */

	ZkOpFree(cl->create);
	ZkOpFree(cl->list);
	ZkOpFree(cl->side);
	cl->create = cl->list = cl->side = NULL;

	if (rc == ZNONODE && o->guess_fresh &&
		!cl->parent_missing && failed >= 0 && !cl->make[k] && !cl->learnt[k])
	{
		ZkLearnFresh(cl->fresh_nodes[k], true);
		cl->learnt[k] = true;
		for (int j = 0; j < cl->nfresh; j++)
			cl->make[j] = !cl->learnt[j] || j == k;
	}
	else if (rc == ZNONODE)
	{
		ZkCreateLockParents(cl->parents, cl->n);
		memset(cl->make, 0, sizeof(bool) * cl->nfresh);
	}
	else if (rc == ZNOAUTH && cl->counted && o->uncount_on_noauth)
		cl->counted = false;
	else
	{
		if (o->oc != NULL)
			ZkOperationSet(o->oc, ZK_OPER_ACQUIRE_LOCK,
						   cl->at[failed >= 0 ? failed : 0]->args->lock_path);
		if (rc == ZUNIMPLEMENTED && o->ttl_ms > 0)
			zk_raise_no_ttl();
		ZkRaiseForRc(rc);
	}
}

/*
 * zk_create_recover
 *		After a round whose answer was lost, once the connection is back:
 *		the round made every node or none (one multi, or one create).  Each
 *		attempt looks for its node by its prefix (zk_attempt_recover), which
 *		reads its queue too.  Returns how many were found.
 */
static int
zk_create_recover(ZkCreateLoop *cl)
{
	int			found = 0;

	ZkOpFree(cl->list);
	ZkOpFree(cl->side);
	cl->list = cl->side = NULL;
	for (int i = 0; i < cl->n; i++)
	{
		if (!zk_attempt_recover(cl->at[i]))
			continue;
		found++;
		if (cl->at[i]->persistent)
			ZkGuardNode(cl->at[i]->znode);
	}
	return found;
}

/*
 * ZkAttemptCreate
 *		Create the nodes of n attempts, each under its attempt's prefix
 *		(node_base), as 'opts' says, all in one request: every recipe's
 *		queue nodes are created here.  Returns ZK_CREATE_MADE with each
 *		attempt's node (and its 'siblings' when counted), and its queue if
 *		opts->learn_queue; *res says when the create was sent, the node's
 *		mtime and the side read's answer.  A persistent node (a lease's) is
 *		handed to the session's guard (ZkGuardNode) as soon as it is known.
 *
 * A lost answer is recovered by the prefix: after the connection is back,
 * each attempt looks for its node (zk_attempt_recover) before anything is
 * created again, so that no attempt ever leaves an orphan in a queue.  If
 * every node is found, ZK_CREATE_RECOVERED (counts, mtime and the side
 * read not known; queues known); if none, the create is sent again under
 * the same prefix; if only some, ZK_CREATE_PARTIAL: the caller decides.
 *
 * Nodes expected to be missing (recipes/path_memory.c) are created by
 * requests sent just before the create, without waiting: ZooKeeper applies
 * a session's requests in order, so one round trip still does.  (Not in
 * the same multi: the C client misreads the answer to a container create
 * inside a multi.)
 */
ZkCreateOutcome
ZkAttemptCreate(ZkAttempt **at, int n, const ZkCreateOpts *opts,
				ZkCreateResult *res)
{
	ZkCreateLoop cl;
	ZkCreateOutcome outcome;

	memset(&cl, 0, sizeof(cl));
	cl.at = at;
	cl.n = n;
	cl.o = opts;
	cl.counted = opts->counted;
	cl.nfresh = opts->nabove + n;
	cl.fresh_nodes = palloc(sizeof(char *) * cl.nfresh);
	cl.make = palloc0(sizeof(bool) * cl.nfresh);
	cl.learnt = palloc0(sizeof(bool) * cl.nfresh);
	cl.makes = palloc0(sizeof(ZkOp *) * cl.nfresh);
	cl.paths = palloc(sizeof(char *) * n);
	cl.datas = palloc(sizeof(char *) * n);
	cl.lens = palloc(sizeof(int) * n);
	cl.parents = cl.fresh_nodes + opts->nabove;
	for (int j = 0; j < opts->nabove; j++)
		cl.fresh_nodes[j] = opts->above[j];
	for (int i = 0; i < n; i++)
	{
		cl.paths[i] = at[i]->node_base;
		cl.datas[i] = at[i]->args->data;
		cl.lens[i] = at[i]->args->datalen;
		cl.parents[i] = at[i]->args->lock_node;
	}
	for (int j = 0; opts->guess_fresh && j < cl.nfresh; j++)
		cl.make[j] = ZkGuessFresh(cl.fresh_nodes[j]);
	memset(res, 0, sizeof(*res));

	for (;;)
	{
		int			rc;

		CHECK_FOR_INTERRUPTS();
		zk_create_send(&cl);
		rc = zk_create_wait(&cl, res);
		if (rc == ZOK)
		{
			res->side = cl.side;
			zk_create_made(&cl, res);
			outcome = ZK_CREATE_MADE;
			break;
		}
		if (ZkAwaitReconnect(rc))
		{
			int			found;

			ZkOpFree(cl.create);
			cl.create = NULL;
			found = zk_create_recover(&cl);
			res->mtime = -1;
			if (found == 0)
				continue;		/* none made: again, same prefix */
			outcome = found == n ? ZK_CREATE_RECOVERED : ZK_CREATE_PARTIAL;
			break;
		}
		zk_create_refused(&cl, rc);
	}
	pfree(cl.fresh_nodes);
	pfree(cl.make);
	pfree(cl.learnt);
	pfree(cl.makes);
	pfree(cl.paths);
	pfree(cl.datas);
	pfree(cl.lens);
	return outcome;
}

/*
 * ZkAttemptCreateLocks
 *		The lock recipe's create, of one lock's queue node or of a lock
 *		set's nodes in one multi: each counted, so that a node alone in its
 *		queue costs one write and no read; the queues where it is not read
 *		in one more round trip, pipelined.  Lock nodes expected to be
 *		missing are created first (recipes/path_memory.c).  Where a lock
 *		node's data cannot be set (an ACL that allows creating children but
 *		not writing the node), the creates go without the setData, and
 *		every queue is read (for one node, in the same round trip).  With
 *		'oc', a refused create is raised naming its own lock in it.
 */
ZkCreateOutcome
ZkAttemptCreateLocks(ZkAttempt **at, int n, ZkOperationContext *oc)
{
	ZkCreateOpts opts;
	ZkCreateResult res;

	memset(&opts, 0, sizeof(opts));
	opts.counted = true;
	opts.uncount_on_noauth = true;
	opts.learn_queue = true;
	opts.guess_fresh = true;
	opts.oc = oc;
	return ZkAttemptCreate(at, n, &opts, &res);
}

/*
 * zk_attempt_recover
 *		After a create whose answer was lost: is there a node with our
 *		prefix among the lock node's children?  If so adopt it (and fetch
 *		its czxid) and return true; false if there is none, and the create
 *		may be sent again under the same prefix.
 *
 * This is the one recovery step of every recipe that creates nodes under
 * a protection prefix: a lock's queue node, each node of a lock set, a
 * semaphore's mutex node and permit node.  It looks at every child, not
 * only at the queue's contenders, since a lease node is no contender.
 * The queue is read again on the way (at->queue), behind a sync
 * (ZkGetChildrenSynced): "no node with our prefix" must not be the word
 * of a server that has not applied our create yet, or the create sent
 * again would leave the first node an orphan ahead of ours.
 */
static bool
zk_attempt_recover(ZkAttempt *at)
{
	size_t		plen = strlen(at->prefix);
	ZkOp	   *op;
	int			rc;
	int			i;

	op = ZkGetChildrenSynced(at->args->lock_node);
	(void) zk_take_queue(at, op);	/* never a lost connection */
	ZkOpFree(op);
	for (i = 0; i < at->nnames; i++)
	{
		if (strncmp(at->names[i], at->prefix, plen) == 0)
			break;
	}
	if (i == at->nnames)
		return false;

	at->znode = psprintf("%s/%s", at->args->lock_node, at->names[i]);
	at->name = zk_last_component(at->znode);
	op = ZkExistsAnswered(at->znode);
	rc = op->rc;
	at->token = op->stat.czxid;
	ZkOpFree(op);
	if (rc == ZNONODE)
	{
		/* deleted under us: cannot be trusted; start over */
		at->znode = NULL;
		return false;
	}
	if (rc != ZOK)
		ZkRaiseForRc(rc);
	return true;
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
 *		(zk_blocking: no conflicting node before it, or our own other node,
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
	*b = zk_blocking(at, *me, &grant->needs_guard);
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
		ZkOwnWatchArm(at->znode);
		own = ZkGetData(at->znode, ZK_WATCH_OWN);
	}
	blocker = psprintf("%s/%s", at->args->lock_node, at->queue[b].name);
	ZkWatchArm(blocker);
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
		zk_drop_blocker(at, b);
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
			at->checked_deadlock = zk_check_deadlock(at);
			if (!at->checked_deadlock)
				ZkDeadlockTimerAgain();
		}
		if (log_lock_waits && !at->logged_wait)
			zk_log_still_waiting(at, me);
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
	if (ZkIsRevokeMarker(data, len))
		return errdetail("Queue position %d of %d. First in the queue: node \"%s\", whose holder was asked to release it (its data is the revocation marker).",
						 position, nqueue, first);
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
		t->lock_path = a->args->lock_path;
		t->lock_node = a->args->lock_node;
		t->znode = a->znode;
		t->mode = a->args->mode;
		t->queued = own < 0;
		t->nahead = 0;
		t->ahead = NULL;
		wait.ntargets++;
		if (t->queued)
			continue;			/* the queue ahead blocks it: read there */

		/* an upgrade waits for the other readers holding the lock */
		limit = ZkUpgradeLimit(a->queue, me);
		t->ahead = palloc(sizeof(char *) * Max(me, 1));
		for (int i = 0; i < limit; i++)
		{
			if (i != own)
				t->ahead[t->nahead++] =
					psprintf("%s/%s", a->args->lock_node, a->queue[i].name);
		}
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
 * zk_attempt_created
 *		Our node exists: remember it and its fencing token.  With 'alone'
 *		(the lock node had no other child) the queue is just us; else the
 *		caller fills the queue copy (zk_take_queue, or
 *		ZkAttemptRereadQueue).
 *
 * Whatever copy of the queue the attempt had is dropped: it was read
 * before this node was made (by the search for a node whose create
 * answer was lost), so it cannot hold it, and a wait that went by it
 * would take our node for deleted.
 */
static void
zk_attempt_created(ZkAttempt *at, const char *znode, int64 token, bool alone)
{
	at->znode = pstrdup(znode);
	at->name = zk_last_component(at->znode);
	at->token = token;
	if (alone)
		zk_queue_alone(at);
	else
		zk_queue_unknown(at);
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
