/*-------------------------------------------------------------------------
 *
 * recipes/long_wait.c
 *		What a queue attempt's wait does once it has lasted
 *		deadlock_timeout (recipes/deadlock_timer.c): the deadlock check, and
 *		log_lock_waits' messages.
 *
 * Deadlocks.  The wait is published and checked for a cycle across the
 * whole ensemble (cluster/deadlock.c); the record is withdrawn however the
 * wait ends (ZkAttemptGrant, ZkAttemptAbandon).  log_lock_waits: the
 * "still waiting" message, with our place in the queue and who holds the
 * lock, and, once granted, the "acquired" one, as PostgreSQL logs its own
 * locks' long waits.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/proc.h"

#include "base/contender.h"
#include "cluster/deadlock.h"
#include "cluster/wait_record.h"
#include "recipes/attempt.h"
#include "base/node_data.h"
#include "base/text_encoding.h"
#include "client/client.h"

static int	zk_queue_detail(int position, int nqueue, const char *first,
							bool read, const char *data, int len);

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
 * ZkAttemptLogStillWaiting
 *		log_lock_waits for ZooKeeper locks: once deadlock_timeout has passed,
 *		log where we are in the queue and who holds the lock, as PostgreSQL
 *		does for its own locks.  Best effort: one getData on the first node
 *		of our (possibly slightly stale) copy of the queue.  An attempt that
 *		waits holds an exclusive or a shared node (a semaphore's mutex node
 *		and a lease's node are exclusive).
 */
void
ZkAttemptLogStillWaiting(ZkAttempt *at, int me)
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
 * ZkAttemptCheckDeadlock
 *		deadlock_timeout has passed while waiting: publish the wait and look
 *		for a cycle (cluster/deadlock.c), which ends this wait with 40P01 if
 *		this backend is the cycle's victim. An attempt that is one of a set
 *		publishes every target of the set not granted yet: the set waits until
 *		all of them are. False if a lost connection cut the check short.
 */
bool
ZkAttemptCheckDeadlock(ZkAttempt *at)
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
		own = ZkAttemptOwnPosition(a, me, a->args->held_read_znode);
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
 * ZkAttemptLogAcquired
 *		log_lock_waits for an attempt that said "still waiting": log that it
 *		got its lock, and after how long, as PostgreSQL does for its own
 *		locks.
 */
void
ZkAttemptLogAcquired(ZkAttempt *at)
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
