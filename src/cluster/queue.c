/*-------------------------------------------------------------------------
 *
 * cluster/queue.c
 *		The head of one lock's queue, cluster-wide, with each node's data:
 *		the read behind zk_lock_queue (and its max_rows).
 *
 * ZkReadQueueHead reads the children of the lock node once, then the data
 * of the first max_rows contenders only, or of all of them, through the
 * engine of the cluster views (cluster/scan.c) with every request sent at
 * once: what is read is bounded by the list in hand.  A contender that
 * vanishes between the two reads is left out and the next one not asked
 * for yet is read in its place.  Unlike the scans of the whole tree, a
 * node whose ACL refuses reading fails the call with zklock's documented
 * ERROR: this is one queue the caller asked for by name.
 *
 * Whether a node is granted follows the queue rule over the nodes that
 * exist, and a reader behind a granted writer of the same session (a
 * downgrade, holds/table.c) is granted.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "cluster/scan.h"
#include "cluster/view.h"
#include "base/operation_context.h"

/* A read of one queue: the path, and the next contender to ask for. */
typedef struct ZkQueueScan
{
	ZkScan		scan;			/* first: the engine's handlers get this */
	ZkPathScan *one;
	int			next_index;		/* next contender not yet asked for */
} ZkQueueScan;

static void zk_queue_done(ZkScan *scan, ZkReq *req, ZkOp *op);

/*
 * zk_queue_done
 *		The data of one contender.  One that vanished makes room for the
 *		next contender not asked for yet.
 */
static void
zk_queue_done(ZkScan *scan, ZkReq *req, ZkOp *op)
{
	ZkQueueScan *qs = (ZkQueueScan *) scan;
	ZkPathScan *ps = qs->one;

	if (op->rc == ZNONODE && qs->next_index < ps->n)
	{
		int			i = qs->next_index++;

		ZkScanPush(scan, ZK_REQ_DATA,
				   psprintf("%s/%s", ps->node, ps->queue[i].name),
				   zk_queue_done, ps, i);
	}
	ZkNodeStore(scan, ps, &ps->info[req->index], op, req->znode, true);
}

/*
 * ZkReadQueueHead
 *		The first max_rows nodes of a lock's queue, in order (all of them
 *		if max_rows < 0), for zk_lock_queue: one getChildren, then the
 *		data of those nodes only, all pipelined at once.  Nodes
 *		that vanish between the two reads are left out and replaced by the
 *		next ones.  'granted' follows the queue rule over the nodes that
 *		exist, and a reader behind a granted writer of the same session (a
 *		downgrade) is granted.  With 'synced', the getChildren goes behind a
 *		sync, so that the server has caught up with the leader: a server
 *		cut off from its leader answers no synced read, where a plain one
 *		would show its stale copy.  Returns the number of entries; *entries
 *		is palloc'd.
 */
int
ZkReadQueueHead(const char *lock_node, const char *lock_path, int max_rows,
				bool synced, ZkQueueEntry **entries)
{
	ZkQueueScan qs;
	ZkScan	   *scan = &qs.scan;
	ZkOp	   *list;
	ZkPathScan *ps;
	ZkQueueEntry *out;
	ZkContender *present;
	int		   *from;
	int			want;
	int			nout = 0;
	MemoryContext old;
	ZkOperationContext oc;

	ZkOperationPush(&oc, ZK_OPER_READ_QUEUE, lock_path);
	list = synced ? ZkGetChildrenSynced(lock_node) :
		ZkGetChildrenAnswered(lock_node);
	if (list->rc == ZNONODE)
	{
		ZkOpFree(list);
		ZkOperationPop(&oc);
		*entries = NULL;
		return 0;
	}
	if (list->rc != ZOK)
		ZkRaiseForRc(list->rc);

	ZkScanInit(scan, ZK_GOAL_QUEUE, "", lock_path);
	ps = ZkPathScanNew(scan, lock_path, lock_node, false);
	ZkPathScanQueue(ps, list->children, list->nchildren);
	ZkOpFree(list);
	qs.one = ps;

	want = (max_rows < 0 || max_rows > ps->n) ? ps->n : max_rows;
	qs.next_index = want;
	/* what is read is bounded by the list in hand: send it all at once */
	scan->window = Max(want, 1);
	old = MemoryContextSwitchTo(scan->cxt);
	for (int i = want - 1; i >= 0; i--)
		ZkScanPush(scan, ZK_REQ_DATA,
				   psprintf("%s/%s", lock_node, ps->queue[i].name),
				   zk_queue_done, ps, i);
	MemoryContextSwitchTo(old);
	ZkScanRun(scan);

	out = palloc0(sizeof(ZkQueueEntry) * Max(want, 1));
	present = palloc(sizeof(ZkContender) * Max(want, 1));
	from = palloc(sizeof(int) * Max(want, 1));
	for (int i = 0; i < ps->n && nout < want; i++)
	{
		ZkNodeInfo *ni = &ps->info[i];
		ZkQueueEntry *e = &out[nout];

		if (!ni->read)
			continue;
		present[nout] = ps->queue[i];
		from[nout] = i;
		e->position = nout + 1;
		e->znode = pstrdup(ps->queue[i].name);
		e->mode = ps->queue[i].mode;
		/* only nodes ahead decide, and those are all in 'present' */
		e->granted = ZkBlockingContender(present, nout, e->mode) < 0;
		/* a downgrade: a granted writer of the same session ahead */
		for (int w = 0; !e->granted && e->mode == ZK_MODE_SHARED && w < nout; w++)
		{
			if (out[w].mode == ZK_MODE_EXCLUSIVE && out[w].granted &&
				ZkNodeDowngraded(ni, &ps->info[from[w]]))
				e->granted = true;
		}
		/*
		 * an upgrade (zk_advisory): a granted reader of the same session
		 * ahead, and no other reader that holds the lock with it
		 */
		for (int r = 0; !e->granted && e->mode == ZK_MODE_EXCLUSIVE && r < nout; r++)
		{
			if (out[r].mode == ZK_MODE_SHARED && out[r].granted &&
				ZkNodeDowngraded(&ps->info[from[r]], ni) &&
				ZkUpgradeBlockingContender(present, nout, r) < 0)
				e->granted = true;
		}
		e->token = ni->czxid;
		e->ctime_ms = ni->ctime;
		/* a lease's ttl runs from its grant: none while it waits */
		e->lease_expires_ms = e->granted ? ni->lease_expires : -1;
		if (ni->data != NULL)
		{
			e->data = pnstrdup(ni->data, ni->datalen);
			e->datalen = ni->datalen;
		}
		nout++;
	}
	MemoryContextDelete(scan->cxt);
	ZkOperationPop(&oc);
	*entries = out;
	return nout;
}
