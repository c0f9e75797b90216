/*-------------------------------------------------------------------------
 *
 * cluster/locks.c
 *		Every lock path with a queue under zklock.root, cluster-wide, with
 *		its holders and waiters: the scan behind zk_cluster_locks.
 *
 * The walk (cluster/walk.c) finds the lock paths.  For each, the holders
 * are read (getData: the owner's description and the fencing token) and
 * the oldest waiting node is stat'ed (exists: its creation time).
 * Holders follow the queue rule (a writer first in line; readers with no
 * writer ahead); a reader queued behind a granted writer of the same
 * session was granted by a downgrade (holds/table.c), which the scan tells
 * by the nodes' ephemeralOwner, so while such a writer holds the lock the
 * waiting readers are read too.  Waiters are counted, not read.  A
 * semaphore's holders are its permits, but for the newest permit when it is
 * the first acquirer's, made to wait for the count; a double barrier's are
 * its participants.  Each lock path is handed to the caller's callback as
 * soon as it is read, then freed.
 *
 * Cost, in requests: one getChildren per node of the tree below the
 * starting node (lock nodes and the nodes between them; a semaphore adds
 * two, for its "leases" and "locks"), one getData per holder, one exists
 * per lock path with waiters, and one getData per waiting reader behind a
 * granted writer.  A tree of N lock paths with one holder each costs
 * about 2N requests, sent ZK_SCAN_WINDOW (cluster/scan.c) at a time.  The
 * scan is not a snapshot: each queue is read at its own moment, and nodes
 * that vanish between the reads are left out.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "cluster/scan.h"
#include "cluster/view.h"
#include "base/contender.h"
#include "base/operation_context.h"
#include "base/text_encoding.h"

/* A scan for zk_cluster_locks: where its rows go. */
typedef struct ZkLocksScan
{
	ZkScan		scan;			/* first: the engine's hooks get this */
	ZkClusterLockCallback cb;
	void	   *cb_arg;
} ZkLocksScan;

static void zk_locks_path_found(ZkScan *scan, ZkPathScan *ps);
static void zk_locks_path_read(ZkScan *scan, ZkPathScan *ps);
static void zk_path_emit(ZkScan *scan, ZkPathScan *ps, int64 oldest);
static void zk_holder_set(ZkClusterHolder *h, const char *znode,
						  const char *mode, const ZkNodeInfo *ni,
						  int64 lease_expires);

/*
 * zk_locks_path_found
 *		Ask for the holders of a path found, and for the readers a
 *		downgrade may have granted.
 */
static void
zk_locks_path_found(ZkScan *scan, ZkPathScan *ps)
{
	for (int i = 0; i < ps->nleases; i++)
		ZkPathScanRead(scan, ps, true, i, ZK_REQ_DATA);
	for (int i = 0; i < ps->n; i++)
	{
		if (ps->info[i].granted ||
			(ps->queue[i].mode == ZK_MODE_SHARED &&
			 ps->queue[0].mode == ZK_MODE_EXCLUSIVE && !ps->semaphore))
			ZkPathScanRead(scan, ps, false, i, ZK_REQ_DATA);
	}
	if (ps->pending == 0)
		zk_locks_path_read(scan, ps);
}

/*
 * zk_locks_path_read
 *		Every read of a path is in: apply downgrades, then find the oldest
 *		waiting node; stat it if that is not known yet (the path is read
 *		again on the answer), else emit the path.
 */
static void
zk_locks_path_read(ZkScan *scan, ZkPathScan *ps)
{
	bool		writer_head = (!ps->semaphore && ps->n > 0 && ps->info[0].read &&
							   ps->queue[0].mode == ZK_MODE_EXCLUSIVE);

	for (int i = 1; writer_head && i < ps->n; i++)
	{
		if (!ps->info[i].granted && ps->info[i].read &&
			ps->queue[i].mode == ZK_MODE_SHARED &&
			ZkNodeDowngraded(&ps->info[i], &ps->info[0]))
			ps->info[i].granted = true;
	}
	for (int i = 0; i < ps->n; i++)
	{
		if (ps->info[i].granted || ps->info[i].gone)
			continue;
		if (!ps->info[i].read)
		{
			ZkPathScanRead(scan, ps, false, i, ZK_REQ_EXISTS);
			return;
		}
		zk_path_emit(scan, ps, ps->info[i].ctime);
		return;
	}
	zk_path_emit(scan, ps, -1);
}

/*
 * zk_holder_set
 *		One holder of a lock path, from what was read of its node.
 */
static void
zk_holder_set(ZkClusterHolder *h, const char *znode, const char *mode,
			  const ZkNodeInfo *ni, int64 lease_expires)
{
	h->znode = znode;
	h->mode = mode;
	h->token = ni->czxid;
	h->ctime_ms = ni->ctime;
	h->lease_expires_ms = lease_expires;
	h->data = ni->data;
	h->datalen = ni->datalen;
	h->ttl_node = ZkIsLeaseNode(ni->owner);
}

/*
 * zk_path_emit
 *		Hand a path to the callback (with CurrentMemoryContext its own
 *		context, so whatever the callback allocates goes with it), then
 *		free it.  A path whose nodes all vanished is not shown.
 */
static void
zk_path_emit(ZkScan *scan, ZkPathScan *ps, int64 oldest)
{
	ZkLocksScan *ls = (ZkLocksScan *) scan;
	ZkClusterLock lock;
	MemoryContext old;
	int			n = 0;

	old = MemoryContextSwitchTo(ps->cxt);
	memset(&lock, 0, sizeof(lock));
	lock.path = ps->path;
	lock.kind = ps->barrier ? "double barrier" :
		ps->semaphore ? "semaphore" : "lock";
	lock.oldest_wait_ms = oldest;
	lock.holders = palloc0(sizeof(ZkClusterHolder) *
						   Max(ps->n + ps->nleases, 1));
	for (int i = 0; i < ps->nleases; i++)
	{
		ZkNodeInfo *ni = &ps->lease_info[i];

		if (ni->gone || !ni->read)
			continue;
		if (ps->barrier)
		{
			/* a persistent child so named is a lock path of its own */
			if (ni->owner == 0)
			{
				ZkWalkPush(scan, psprintf("%s/%s", ps->node, ps->leases[i]),
						   psprintf("%s/%s", strcmp(ps->path, "/") == 0 ?
									"" : ps->path, ps->leases[i]));
				continue;
			}
			zk_holder_set(&lock.holders[n++], ps->leases[i], "member", ni, -1);
			continue;
		}

		/*
		 * The newest lease, made by the session holding the first "locks"
		 * node no earlier than that node (zklock makes both in one
		 * transaction), is that acquirer's, waiting for the count: a
		 * waiter (counted below), not a holder.
		 */
		if (i == ps->nleases - 1 && ps->n > 0 && ps->info[0].read &&
			!ps->info[0].gone && ni->owner != 0 &&
			ni->owner == ps->info[0].owner && ni->czxid >= ps->info[0].czxid)
			continue;
		zk_holder_set(&lock.holders[n++],
					  psprintf("leases/%s", ps->leases[i]), "lease", ni, -1);
	}
	for (int i = 0; i < ps->n; i++)
	{
		ZkNodeInfo *ni = &ps->info[i];

		if (ni->gone)
			continue;
		if (!ni->granted)
		{
			lock.nwaiters++;
			continue;
		}
		if (!ni->read)
			continue;
		zk_holder_set(&lock.holders[n++], ps->queue[i].name,
					  ZkLockModeName(ps->queue[i].mode), ni,
					  ni->lease_expires);
	}
	lock.nholders = n;
	if (lock.nholders > 0 || lock.nwaiters > 0)
		ls->cb(&lock, ls->cb_arg);
	MemoryContextSwitchTo(old);
	ZkPathScanFree(scan, ps);
}

/*
 * ZkClusterScan
 *		Call cb once for every lock path with a queue under root + prefix
 *		(prefix "" for the whole root; a lock path otherwise, which is
 *		itself included); with 'one_path', for the lock path 'prefix' only,
 *		whose node's children are read, and nothing below them.  The
 *		session must be open.  Raises zklock's documented ERROR if
 *		ZooKeeper refuses a read or the connection does not come back.
 */
void
ZkClusterScan(const char *root, const char *prefix, bool one_path,
			  ZkClusterLockCallback cb, void *arg)
{
	ZkLocksScan ls;
	ZkScan	   *scan = &ls.scan;
	const char *where = prefix[0] ? prefix : "/";
	ZkOperationContext oc;
	MemoryContext old;
	int64		start = ZkNowMs();

	ZkOperationPush(&oc, ZK_OPER_SCAN_LOCKS, where);
	ZkScanInit(scan, ZK_GOAL_LOCKS, root, where);
	scan->one_path = one_path;
	scan->path_found = zk_locks_path_found;
	scan->path_read = zk_locks_path_read;
	ls.cb = cb;
	ls.cb_arg = arg;
	old = MemoryContextSwitchTo(scan->cxt);
	ZkWalkPush(scan, psprintf("%s%s", root, prefix), pstrdup(prefix));
	MemoryContextSwitchTo(old);
	ZkScanRun(scan);
	ereport(DEBUG1,
			(errmsg_internal("scanned %d lock paths under \"%s%s\" with %llu requests in %lld ms",
							 scan->npaths, root, ZkUtf8ForMessage(prefix),
							 (unsigned long long) scan->nrequests,
							 (long long) (ZkNowMs() - start))));
	ZkScanReportRefused(scan);
	MemoryContextDelete(scan->cxt);
	ZkOperationPop(&oc);
}
