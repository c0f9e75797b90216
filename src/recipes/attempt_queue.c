/*-------------------------------------------------------------------------
 *
 * recipes/attempt_queue.c
 *		An attempt's copy of its queue (recipes/attempt.h): taken from a
 *		read of the lock node's children, shrunk as the nodes ahead go, and
 *		the one node that blocks ours by the queue's rules.
 *
 * The contenders ahead of us can only go away: a node created after ours
 * always comes after it in queue order (base/contender.c orders the
 * sequence numbers as a circle, so this holds across the counter's wrap
 * too), so nobody can join the queue ahead of us: the queue as read once,
 * minus the nodes seen deleted since, holds everything ahead of us.  When
 * the node we wait for was the only conflicting node ahead in our copy,
 * its deletion grants the lock without reading the queue; otherwise the
 * copy of the other nodes ahead may be stale, and the queue is read once
 * more (ZkAttemptDropBlocker).
 *
 * Our own other node.  A reader that holds the write lock already (a
 * downgrade) is granted at once behind its own write node.  A writer that
 * holds the read lock already (an upgrade, which only zk_advisory's
 * functions ask for, as PostgreSQL's lock manager allows it) waits only
 * for the other readers that hold the lock with it: the nodes behind the
 * first writer ahead all wait for our read node, directly or not, so they
 * cannot be granted while it stays (ZkUpgradeLimit), and our deadlock
 * record names those readers alone (recipes/long_wait.c).  Two upgrades
 * of one lock wait for each other's read node, which deadlock detection
 * reports (40P01).  In both cases, if contenders queued between our two
 * nodes, the first one must outlive the second (ZkGrant.keep_other).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "base/contender.h"
#include "recipes/attempt.h"
#include "client/client.h"

static void zk_forget(ZkAttempt *at, int i);
static void zk_queue_take(ZkAttempt *at, char *const *names, int n);
static void zk_queue_unknown(ZkAttempt *at);

/*
 * ZkLastComponent
 *		The last component of a ZooKeeper path: a node's name.
 */
const char *
ZkLastComponent(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * zk_queue_take
 *		Our copy of the queue is now these n node names (copied).
 */
static void
zk_queue_take(ZkAttempt *at, char *const *names, int n)
{
	MemoryContext old;

	MemoryContextReset(at->cxt);
	old = MemoryContextSwitchTo(at->cxt);
	at->names = palloc(sizeof(char *) * Max(n, 1));
	at->queue = palloc(sizeof(ZkContender) * Max(n, 1));
	for (int i = 0; i < n; i++)
		at->names[i] = pstrdup(names[i]);
	at->nnames = n;
	at->nqueue = ZkSortContenders(at->names, n, at->queue);
	at->queue_known = true;
	MemoryContextSwitchTo(old);
}

/*
 * ZkAttemptTakeQueue
 *		Replace our copy of the queue by a getChildren answer.  False if the
 *		answer is a lost connection (the caller reads again).
 */
bool
ZkAttemptTakeQueue(ZkAttempt *at, ZkOp *op)
{
	int			rc = op->rc;

	if (ZkIsConnectionLoss(rc))
		return false;
	if (rc != ZOK && rc != ZNONODE)
		ZkRaiseForRc(rc);
	zk_queue_take(at, op->children, op->nchildren);
	return true;
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
 * ZkAttemptDropBlocker
 *		The node we waited for (position b) is gone.  If it
 *		was the only conflicting node ahead of us in our copy, the lock is
 *		ours without reading the queue: nobody can have joined ahead of us.
 *		If others were ahead, our copy of them may be stale (they may have
 *		gone without our watching them), so read the queue once rather than
 *		probe them one by one.
 */
void
ZkAttemptDropBlocker(ZkAttempt *at, int b)
{
	int			me;
	bool		keep_other;

	zk_forget(at, b);
	me = ZkFindContender(at->queue, at->nqueue, at->name);
	if (ZkAttemptBlocking(at, me, &keep_other) >= 0)
		ZkAttemptRereadQueue(at);
}

/*
 * ZkAttemptOwnPosition
 *		Position of our own other node 'znode' (a downgrade's write node, an
 *		upgrade's read node) in our copy of the queue if it is ahead of 'me';
 *		-1 if there is none (or another client deleted it).
 */
int
ZkAttemptOwnPosition(ZkAttempt *at, int me, const char *znode)
{
	int			i;

	if (znode == NULL)
		return -1;
	i = ZkFindContender(at->queue, at->nqueue, ZkLastComponent(znode));
	return i < me ? i : -1;
}

/*
 * ZkAttemptBlocking
 *		The one node our node at position 'me' waits for, or -1 if it holds
 *		the lock.  A downgrade holds it at once behind our own write node;
 *		an upgrade waits only for the other readers that hold the lock
 *		(ZkUpgradeBlockingContender); anything else by the queue's rule
 *		(ZkBlockingContender).  *keep_other: granted with contenders between
 *		our other node and ours, so that node must outlive ours.
 */
int
ZkAttemptBlocking(ZkAttempt *at, int me, bool *keep_other)
{
	const ZkAcquireArgs *args = at->args;
	int			own;
	int			b;

	*keep_other = false;
	own = ZkAttemptOwnPosition(at, me, args->held_write_znode);
	if (own >= 0)
	{
		*keep_other = (me - own > 1);
		return -1;
	}
	own = ZkAttemptOwnPosition(at, me, args->held_read_znode);
	if (own < 0)
		return ZkBlockingContender(at->queue, me, args->mode);
	b = ZkUpgradeBlockingContender(at->queue, me, own);
	*keep_other = (b < 0 && me - own > 1);
	return b;
}

/*
 * ZkAttemptRereadQueue
 *		Read the lock node's children again, riding out lost connections.
 */
void
ZkAttemptRereadQueue(ZkAttempt *at)
{
	ZkOp	   *op = ZkGetChildrenAnswered(at->args->lock_node);

	(void) ZkAttemptTakeQueue(at, op);	/* never a lost connection */
	ZkOpFree(op);
}

/*
 * ZkAttemptCreated
 *		Our node exists: remember it and its fencing token.  With 'alone'
 *		(the lock node had no other child) the queue is just us; else the
 *		caller fills the queue copy (ZkAttemptTakeQueue, or
 *		ZkAttemptRereadQueue).
 *
 * Whatever copy of the queue the attempt had is dropped: it was read
 * before this node was made (by the search for a node whose create
 * answer was lost), so it cannot hold it, and a wait that went by it
 * would take our node for deleted.
 */
void
ZkAttemptCreated(ZkAttempt *at, const char *znode, int64 token, bool alone)
{
	at->znode = pstrdup(znode);
	at->name = ZkLastComponent(at->znode);
	at->token = token;
	/* alone: the queue is just us */
	if (alone)
		zk_queue_take(at, (char *const *) &at->name, 1);
	else
		zk_queue_unknown(at);
}
