/*-------------------------------------------------------------------------
 *
 * cluster/blockers.c
 *		Who blocks a waiting backend, cluster-wide: the scan behind
 *		zk_blocking_pids.
 *
 * zklock keeps nothing in shared memory, so a backend's queue nodes are
 * found by their data: the walk (cluster/walk.c) reads the data of every
 * waiting node (not the holders) and keeps the lock paths with a node
 * whose owner is this server (cluster_name, host, port) and the given
 * pid.  For each such node, the nodes ahead that conflict with it (for a
 * writer every node ahead, for a reader every writer ahead; for a
 * semaphore acquirer the acquirers ahead, or every permit but its own when
 * it is first) are read once more: one row per blocker.  A writer of the
 * waiter's own session ahead of its reader means that the reader was
 * granted by a downgrade and waits for nothing: its rows are left out.
 *
 * Cost, in requests: the walk's getChildren, one getData per waiting node
 * in the whole tree, and one getData per blocker.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/pg_list.h"
#include "utils/memutils.h"

#include "cluster/scan.h"
#include "cluster/view.h"
#include "base/node_data.h"
#include "base/operation_context.h"

/* A scan for zk_blocking_pids: the backend looked for, and what is found. */
typedef struct ZkBlockersScan
{
	ZkScan		scan;			/* first: the engine's hooks get this */
	ZkOwner		me;				/* this server, and the pid looked for */
	List	   *found;			/* ZkPathScan holding the waiter's nodes */
	List	   *rows;			/* ZkBlockerRow, in the caller's context */
	MemoryContext rows_cxt;
} ZkBlockersScan;

/* A blocker found, with the sessions of both nodes. */
typedef struct ZkBlockerRow
{
	ZkBlockerInfo info;
	int64		waiter_session;
	int64		blocker_session;
} ZkBlockerRow;

/* A blocker being read: which path, and which node of it. */
typedef struct ZkBlockerReq
{
	ZkPathScan *ps;
	int			waiter;			/* index of the waiter in ps->queue */
	bool		lease;			/* the blocker is a lease */
	int			index;			/* of the blocker */
} ZkBlockerReq;

static void zk_waiter_path_found(ZkScan *scan, ZkPathScan *ps);
static void zk_waiter_path_read(ZkScan *scan, ZkPathScan *ps);
static bool zk_is_me(const ZkBlockersScan *bs, const char *data, int len);
static void zk_blockers_start(ZkBlockersScan *bs);
static void zk_blocker_push(ZkBlockersScan *bs, ZkPathScan *ps, int waiter,
							bool lease, int index, char *znode);
static void zk_blocker_done(ZkScan *scan, ZkReq *req, ZkOp *op);

/*
 * zk_waiter_path_found
 *		Ask for the data of every waiting node of a path found, to find the
 *		waiter's.
 */
static void
zk_waiter_path_found(ZkScan *scan, ZkPathScan *ps)
{
	for (int i = 0; i < ps->n; i++)
		if (!ps->info[i].granted)
			ZkPathScanRead(scan, ps, false, i, ZK_REQ_DATA);
	if (ps->pending == 0)
		ZkPathScanFree(scan, ps);
}

/*
 * zk_is_me
 *		Does node data name the backend looked for (this server's
 *		cluster_name, host and port, and the pid)?
 */
static bool
zk_is_me(const ZkBlockersScan *bs, const char *data, int len)
{
	ZkOwner		o;
	const ZkOwner *me = &bs->me;

	ZkParseNodeData(data, len, &o);
	if (o.pid != me->pid || o.port != me->port || o.host == NULL ||
		strcmp(o.host, me->host) != 0)
		return false;
	if ((o.cluster_name == NULL) != (me->cluster_name == NULL))
		return false;
	return o.cluster_name == NULL ||
		strcmp(o.cluster_name, me->cluster_name) == 0;
}

/*
 * zk_waiter_path_read
 *		The waiting nodes of a path are read: keep the path if one of them
 *		is the backend's.
 */
static void
zk_waiter_path_read(ZkScan *scan, ZkPathScan *ps)
{
	ZkBlockersScan *bs = (ZkBlockersScan *) scan;
	MemoryContext old = MemoryContextSwitchTo(ps->cxt);

	for (int i = 0; i < ps->n; i++)
	{
		if (ps->info[i].read && !ps->info[i].granted &&
			zk_is_me(bs, ps->info[i].data, ps->info[i].datalen))
		{
			ps->keep = true;
			break;
		}
	}
	MemoryContextSwitchTo(old);
	if (ps->keep)
		bs->found = lappend(bs->found, ps);
	else
		ZkPathScanFree(scan, ps);
}

/*
 * zk_blocker_push
 *		Ask for one node (znode, in scan->cxt) that blocks the waiter's
 *		node 'waiter' of a path: a lease, or a queue node.
 */
static void
zk_blocker_push(ZkBlockersScan *bs, ZkPathScan *ps, int waiter, bool lease,
				int index, char *znode)
{
	ZkBlockerReq *br = MemoryContextAlloc(bs->scan.cxt, sizeof(ZkBlockerReq));

	br->ps = ps;
	br->waiter = waiter;
	br->lease = lease;
	br->index = index;
	ZkScanPush(&bs->scan, ZK_REQ_DATA, znode, zk_blocker_done, br, 0);
}

/*
 * zk_blockers_start
 *		For every node of the waiter found, read the nodes that block it.
 */
static void
zk_blockers_start(ZkBlockersScan *bs)
{
	ListCell   *lc;

	foreach(lc, bs->found)
	{
		ZkPathScan *ps = (ZkPathScan *) lfirst(lc);

		for (int w = 0; w < ps->n; w++)
		{
			if (!ps->info[w].read || ps->info[w].granted ||
				!zk_is_me(bs, ps->info[w].data, ps->info[w].datalen))
				continue;
			/*
			 * Pushed last first: sent, and answered, in queue order.  The
			 * first acquirer of a semaphore waits for the permits.
			 */
			for (int l = (ps->semaphore && w == 0) ? ps->nleases - 1 : -1; l >= 0; l--)
				zk_blocker_push(bs, ps, w, true, l,
								psprintf("%s/%s", ps->leases_node,
										 ps->leases[l]));
			for (int b = w - 1; b >= 0; b--)
			{
				if (!ps->semaphore && ps->queue[w].mode == ZK_MODE_SHARED &&
					ps->queue[b].mode == ZK_MODE_SHARED)
					continue;
				zk_blocker_push(bs, ps, w, false, b,
								psprintf("%s/%s", ps->queue_node,
										 ps->queue[b].name));
			}
		}
	}
}

/*
 * zk_blocker_done
 *		One blocker read: a row, unless it vanished meanwhile (it blocks
 *		nobody any more) or is the waiter's own lease.
 */
static void
zk_blocker_done(ZkScan *scan, ZkReq *req, ZkOp *op)
{
	ZkBlockersScan *bs = (ZkBlockersScan *) scan;
	ZkBlockerReq *br = (ZkBlockerReq *) req->target;
	ZkPathScan *ps = br->ps;
	ZkBlockerRow *r;
	ZkBlockerInfo *row;
	MemoryContext old;

	if (op->rc != ZOK)
		ZkScanFailed(scan, op->rc);
	if (op->rc != ZOK ||
		(br->lease && zk_is_me(bs, op->value, op->value_len)))
	{
		pfree(br);
		return;
	}

	old = MemoryContextSwitchTo(bs->rows_cxt);
	r = palloc0(sizeof(ZkBlockerRow));
	r->waiter_session = ps->info[br->waiter].owner;
	r->blocker_session = op->stat.ephemeralOwner;
	row = &r->info;
	row->path = pstrdup(ps->path);
	row->waiter_znode = psprintf("%s%s", ps->queue_prefix,
								 ps->queue[br->waiter].name);
	if (br->lease)
	{
		row->znode = psprintf("leases/%s", ps->leases[br->index]);
		row->mode = "lease";
		row->granted = true;
	}
	else
	{
		row->znode = psprintf("%s%s", ps->queue_prefix,
							  ps->queue[br->index].name);
		row->mode = ps->semaphore ? "lease" :
			ZkLockModeName(ps->queue[br->index].mode);
		row->granted = !ps->semaphore && ps->info[br->index].granted;
	}
	if (op->value != NULL && op->value_len > 0)
	{
		row->data = pnstrdup(op->value, op->value_len);
		row->datalen = op->value_len;
	}
	bs->rows = lappend(bs->rows, r);
	MemoryContextSwitchTo(old);
	pfree(br);
}

/*
 * ZkClusterBlockers
 *		The queue nodes under root that block the waiting backend 'pid' of
 *		this server, cluster-wide: one entry per blocker and waiting node,
 *		palloc'd in the caller's context.  None when the backend waits in
 *		no queue.  The session must be open.
 */
int
ZkClusterBlockers(const char *root, int pid, ZkBlockerInfo **blockers)
{
	ZkBlockersScan bs;
	ZkScan	   *scan = &bs.scan;
	ZkOperationContext oc;
	MemoryContext old;
	char	   *mine;
	int			len;
	ZkOwner		me;
	ListCell   *lc;
	int			n = 0;
	int64		start = ZkNowMs();

	ZkOperationPush(&oc, ZK_OPER_SCAN_LOCKS, "/");
	ZkScanInit(scan, ZK_GOAL_WAITER, root, "/");
	scan->path_found = zk_waiter_path_found;
	scan->path_read = zk_waiter_path_read;
	bs.found = NIL;
	bs.rows = NIL;
	bs.rows_cxt = CurrentMemoryContext;

	/* this server as its nodes describe it */
	mine = ZkBuildNodeData(ZK_MODE_EXCLUSIVE, ZK_SCOPE_SESSION, -1, &len);
	ZkParseNodeData(mine, len, &me);
	me.pid = pid;
	bs.me = me;

	old = MemoryContextSwitchTo(scan->cxt);
	ZkWalkPush(scan, pstrdup(root), pstrdup(""));
	MemoryContextSwitchTo(old);
	ZkScanRun(scan);

	old = MemoryContextSwitchTo(scan->cxt);
	zk_blockers_start(&bs);
	MemoryContextSwitchTo(old);
	ZkScanRun(scan);

	ereport(DEBUG1,
			(errmsg_internal("looked for the blockers of process %d among %d lock paths with %llu requests in %lld ms",
							 pid, scan->npaths,
							 (unsigned long long) scan->nrequests,
							 (long long) (ZkNowMs() - start))));

	/*
	 * A writer of the waiter's own session ahead of its reader means that
	 * the reader was granted by a downgrade: that node waits for nothing.
	 * (Its own reader ahead of its writer is an upgrade, which waits.)
	 */
	ZkScanReportRefused(scan);
	*blockers = palloc(sizeof(ZkBlockerInfo) * Max(list_length(bs.rows), 1));
	foreach(lc, bs.rows)
	{
		ZkBlockerRow *r = (ZkBlockerRow *) lfirst(lc);
		bool		downgrade = false;
		ListCell   *lc2;

		foreach(lc2, bs.rows)
		{
			ZkBlockerRow *o = (ZkBlockerRow *) lfirst(lc2);

			if (o->waiter_session != 0 &&
				o->blocker_session == o->waiter_session &&
				strcmp(o->info.mode, ZkLockModeName(ZK_MODE_EXCLUSIVE)) == 0 &&
				strcmp(o->info.path, r->info.path) == 0 &&
				strcmp(o->info.waiter_znode, r->info.waiter_znode) == 0)
				downgrade = true;
		}
		if (!downgrade)
			(*blockers)[n++] = r->info;
	}
	MemoryContextDelete(scan->cxt);
	ZkOperationPop(&oc);
	return n;
}
