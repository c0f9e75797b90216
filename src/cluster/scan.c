/*-------------------------------------------------------------------------
 *
 * cluster/scan.c
 *		The pipelined read engine of the cluster views, and the state of
 *		each lock path they read.
 *
 * Pipelining.  Every request of a cluster view goes through one engine
 * (ZkScanRun): at most ZK_SCAN_WINDOW requests are outstanding, new ones
 * are sent as answers come in, and the backend waits for the oldest
 * request, since a ZooKeeper session answers in order.  Pending requests
 * are kept on a stack, so the walk (cluster/walk.c) goes depth first and
 * the memory it holds stays proportional to the window and to the widest
 * child list, never to the whole tree; each lock path lives in its own
 * memory context, deleted as soon as the view is done with it.  Requests
 * are reads: after a lost connection the engine lets the outstanding ones
 * come back, waits for the connection (as long as the session may live)
 * and sends the lost ones again.
 *
 * Nodes that vanish between reads are left out.  Nodes whose ACL refuses
 * reading are left out too, and counted in one WARNING at the end (as
 * pg_stat_activity hides what a role may not see rather than failing);
 * any other refusal, and a connection not regained while the session may
 * live, is zklock's documented ERROR.
 *
 * A lock path found is a ZkPathScan: its queue in order, marked granted
 * by the queue rule, and what the answers said of each node.  Which nodes
 * are read, and what is made of them, is the goal's (its ZkScan hooks).
 *
 * Node data is checked as it comes in (ZkNodeStore, base/node_formats.c): a
 * node named as zklock names its nodes whose data is a JSON object that fails
 * the checks, and a lease's node (only zklock makes persistent queue nodes)
 * whose data is not a lease's, are named in a WARNING (base/node_data.c,
 * once per node and statement); they stay in the queue with empty owner
 * columns. Data that is not a JSON object is another client's (Curator stores
 * the client's address, kazoo an identifier), and so is whatever is in a node
 * zklock would not have named so (kazoo's "<32 hex digits>__lock__" nodes):
 * empty owner columns, no WARNING.
 *
 * Nothing here runs on the client library's threads: the engine waits on
 * ZkOpWait (the backend's latch) and checks for interrupts between
 * answers.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/int.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "cluster/scan.h"
#include "base/node_data.h"
#include "base/text_encoding.h"
#include "base/uuid.h"

/* most requests outstanding at once */
#define ZK_SCAN_WINDOW	256

/*
 * When the oldest answer is not in yet, the scan sleeps until the answer
 * this many requests later is (answers come in order): one wake-up per
 * batch of answers instead of one per answer or two, while the rest of
 * the window keeps ZooKeeper busy.
 */
#define ZK_SCAN_BATCH	64

static void zk_scan_send(ZkScan *scan, ZkReq *req);
static void zk_node_done(ZkScan *scan, ZkReq *req, ZkOp *op);
static bool zk_named_like_ours(const char *znode);
static void zk_node_check_data(ZkPathScan *ps, ZkNodeInfo *ni, ZkOp *op,
							   const char *znode, bool queue_member);

/* ------------------------------------------------------------------------
 * The engine: a bounded window of pipelined reads.
 * ------------------------------------------------------------------------
 */

/*
 * ZkScanInit
 *		Start a scan for a goal: no request yet, the full window, and the
 *		scan's own memory context.
 */
void
ZkScanInit(ZkScan *scan, ZkScanGoal goal, const char *root,
		   const char *where)
{
	memset(scan, 0, sizeof(*scan));
	scan->goal = goal;
	scan->root = root;
	scan->where = where;
	dlist_init(&scan->tosend);
	dlist_init(&scan->sent);
	scan->window = ZK_SCAN_WINDOW;
	scan->cxt = AllocSetContextCreate(CurrentMemoryContext,
									  "zklock cluster scan",
									  ALLOCSET_DEFAULT_SIZES);
}

/*
 * ZkScanPush
 *		Queue a request (znode must be allocated in scan->cxt; the engine
 *		frees it).
 */
void
ZkScanPush(ZkScan *scan, ZkReqKind kind, char *znode, ZkReqDone done,
		   void *target, int index)
{
	ZkReq	   *req = MemoryContextAlloc(scan->cxt, sizeof(ZkReq));

	req->kind = kind;
	req->znode = znode;
	req->done = done;
	req->target = target;
	req->index = index;
	req->op = NULL;
	dlist_push_head(&scan->tosend, &req->node);
}

/*
 * zk_scan_send
 *		Send a request; it is outstanding, the newest.
 */
static void
zk_scan_send(ZkScan *scan, ZkReq *req)
{
	switch (req->kind)
	{
		case ZK_REQ_CHILDREN:
			req->op = ZkGetChildren(req->znode);
			break;
		case ZK_REQ_DATA:
			req->op = ZkGetData(req->znode, ZK_NO_WATCH);
			break;
		case ZK_REQ_EXISTS:
			req->op = ZkExists(req->znode);
			break;
	}
	scan->nrequests++;
	dlist_push_tail(&scan->sent, &req->node);
	scan->nsent++;
}

/*
 * ZkScanRun
 *		Send and answer requests until none is left: at most
 *		ZK_SCAN_WINDOW outstanding, answered oldest first, the backend
 *		sleeping until a batch of them is in (ZK_SCAN_BATCH).  Handlers may
 *		push more.  A request that met a lost connection is sent again
 *		once every outstanding one has come back and the session is
 *		connected again (ZkAwaitReconnect raises zklock's documented ERROR
 *		if it does not come back while the session may live).  Handlers run in
 *		scan->cxt; what they allocate there for one request they free.
 */
void
ZkScanRun(ZkScan *scan)
{
	MemoryContext old = MemoryContextSwitchTo(scan->cxt);

	for (;;)
	{
		ZkReq	   *req;
		ZkOp	   *op;

		CHECK_FOR_INTERRUPTS();
		while (scan->reconnect == ZOK && scan->nsent < scan->window &&
			   !dlist_is_empty(&scan->tosend))
		{
			req = dlist_container(ZkReq, node,
								  dlist_pop_head_node(&scan->tosend));
			zk_scan_send(scan, req);
		}
		if (dlist_is_empty(&scan->sent))
		{
			if (ZkAwaitReconnect(scan->reconnect))
			{
				scan->reconnect = ZOK;
				continue;
			}
			if (dlist_is_empty(&scan->tosend))
				break;
			continue;
		}

		req = dlist_head_element(ZkReq, node, &scan->sent);
		op = req->op;
		if (!ZkOpIsDone(op))
		{
			dlist_node *last = &req->node;

			for (int i = 1; i < ZK_SCAN_BATCH &&
				 dlist_has_next(&scan->sent, last); i++)
				last = dlist_next_node(&scan->sent, last);
			ZkOpWait(dlist_container(ZkReq, node, last)->op);
		}
		ZkOpWait(op);
		dlist_delete(&req->node);
		scan->nsent--;

		if (ZkIsConnectionLoss(op->rc))
		{
			scan->reconnect = op->rc;
			ZkOpFree(op);
			req->op = NULL;
			dlist_push_head(&scan->tosend, &req->node);
			continue;
		}
		req->done(scan, req, op);
		ZkOpFree(op);
		pfree(req->znode);
		pfree(req);
	}
	MemoryContextSwitchTo(old);
}

/*
 * ZkScanFailed
 *		An answer that is not ZOK.  The node is left out rather than failing
 *		the scan if it vanished, or (except for the one queue of
 *		zk_lock_queue) if its ACL does not let us read it, which is counted
 *		for the WARNING at the end (ZkScanReportRefused).  Any other answer
 *		the scan cannot go on with: zklock's documented ERROR for it.
 */
void
ZkScanFailed(ZkScan *scan, int rc)
{
	if (rc == ZNOAUTH && scan->goal != ZK_GOAL_QUEUE)
		scan->nrefused++;
	else if (rc != ZNONODE)
		ZkRaiseForRc(rc);
}

/*
 * ZkScanReportRefused
 *		Say that nodes were left out because ZooKeeper refused to read
 *		them, as pg_stat_activity hides what a role may not see instead of
 *		failing.
 */
void
ZkScanReportRefused(ZkScan *scan)
{
	if (scan->nrefused == 0)
		return;
	ereport(WARNING,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg_plural("%d ZooKeeper node under \"%s\" could not be read",
						   "%d ZooKeeper nodes under \"%s\" could not be read",
						   scan->nrefused, scan->nrefused,
						   ZkUtf8ForMessage(scan->where)),
			 errdetail("ZooKeeper refused access because of the nodes' ACLs; the locks in and below them are not shown."),
			 errhint("Check zklock.auth and the ACLs under zklock.root.")));
}

/* ------------------------------------------------------------------------
 * The lock paths being read.
 * ------------------------------------------------------------------------
 */

/*
 * ZkPathScanNew
 *		A lock path found: its own memory context.
 */
ZkPathScan *
ZkPathScanNew(ZkScan *scan, const char *path, const char *node,
			  bool semaphore)
{
	MemoryContext cxt = AllocSetContextCreate(scan->cxt, "zklock lock path",
											  ALLOCSET_SMALL_SIZES);
	ZkPathScan *ps = MemoryContextAllocZero(cxt, sizeof(ZkPathScan));

	ps->cxt = cxt;
	/* the root itself is lock path "/" only as a prefix; never a lock */
	ps->path = MemoryContextStrdup(cxt, path[0] ? path : "/");
	ps->node = MemoryContextStrdup(cxt, node);
	ps->semaphore = semaphore;
	ps->queue_node = semaphore ? NULL : ps->node;
	ps->queue_prefix = semaphore ? "locks/" : "";
	scan->npaths++;
	return ps;
}

/*
 * ZkPathScanFree
 *		A lock path is done with: free all of it.
 */
void
ZkPathScanFree(ZkScan *scan, ZkPathScan *ps)
{
	MemoryContextDelete(ps->cxt);
}

/*
 * ZkPathScanQueue
 *		Keep the contenders among names (in ps->cxt), in queue order.
 */
void
ZkPathScanQueue(ZkPathScan *ps, char **names, int nnames)
{
	MemoryContext old = MemoryContextSwitchTo(ps->cxt);

	ps->queue = palloc(sizeof(ZkContender) * Max(nnames, 1));
	ps->n = ZkSortContenders(names, nnames, ps->queue);
	for (int i = 0; i < ps->n; i++)
		ps->queue[i].name = pstrdup(ps->queue[i].name);
	ps->info = palloc0(sizeof(ZkNodeInfo) * Max(ps->n, 1));
	MemoryContextSwitchTo(old);
}

/*
 * ZkPathScanStart
 *		The queue (and leases) of a path are known: mark what the queue
 *		rule grants, then let the goal ask for what it needs.
 */
void
ZkPathScanStart(ZkScan *scan, ZkPathScan *ps)
{
	if (!ps->semaphore)
	{
		bool	   *granted = palloc(sizeof(bool) * Max(ps->n, 1));

		ZkGrantedByPlace(ps->queue, ps->n, granted);
		for (int i = 0; i < ps->n; i++)
			ps->info[i].granted = granted[i];
		pfree(granted);
	}
	scan->path_found(scan, ps);
}

/*
 * ZkPathScanRead
 *		Ask for one node of a path: a queue node, or a lease.  Once every
 *		node asked for is in, the goal's path_read hook has the path.
 */
void
ZkPathScanRead(ZkScan *scan, ZkPathScan *ps, bool lease, int i,
			   ZkReqKind kind)
{
	char	   *znode;

	if (lease)
		znode = psprintf("%s/%s", ps->leases_node, ps->leases[i]);
	else
		znode = psprintf("%s/%s", ps->queue_node, ps->queue[i].name);
	ps->pending++;
	/* a lease is index -1 - i: one handler for both */
	ZkScanPush(scan, kind, znode, zk_node_done, ps, lease ? -1 - i : i);
}

/*
 * zk_node_done
 *		The answer for one node of a path.
 */
static void
zk_node_done(ZkScan *scan, ZkReq *req, ZkOp *op)
{
	ZkPathScan *ps = (ZkPathScan *) req->target;
	ZkNodeInfo *ni = req->index < 0 ? &ps->lease_info[-1 - req->index] :
		&ps->info[req->index];

	ZkNodeStore(scan, ps, ni, op, req->znode, req->index >= 0);
	if (--ps->pending > 0)
		return;
	scan->path_read(scan, ps);
}

/*
 * zk_named_like_ours
 *		Is the last component of znode named as zklock names its nodes: a
 *		protection prefix "_c_<uuid>-" (queue nodes, a semaphore's nodes),
 *		or a UUID (a double barrier's participants)?  Curator names its
 *		nodes so too; kazoo, for one, does not.
 */
static bool
zk_named_like_ours(const char *znode)
{
	const char *slash = strrchr(znode, '/');
	const char *name = slash != NULL ? slash + 1 : znode;
	size_t		len = strlen(name);

	if (len == ZK_UUID_LEN)
		return ZkIsUuid(name);
	return len > ZK_PREFIX_LEN && strncmp(name, "_c_", 3) == 0 &&
		ZkIsUuid(name + 3) && name[ZK_PREFIX_LEN - 1] == '-';
}

/*
 * zk_node_check_data
 *		Check the data of one node just read (see the file header): a
 *		lease's node (a persistent member of a lock's queue) must hold a
 *		lease's data, whose ttl gives its expiry; a node named like ours
 *		whose data claims to be zklock's must be.  What fails is named in a
 *		WARNING.
 */
static void
zk_node_check_data(ZkPathScan *ps, ZkNodeInfo *ni, ZkOp *op,
				   const char *znode, bool queue_member)
{
	char	   *reason;

	if (queue_member && !ps->semaphore &&
		ZkIsLeaseNode(op->stat.ephemeralOwner))
	{
		int64		ttl_ms;

		/* a lease's ttl is in its data: the server keeps it to itself */
		if (ZkReadLeaseTtl(ni->data, ni->datalen, &ttl_ms, &reason) ==
			ZK_DATA_OK)
		{
			if (pg_add_s64_overflow(op->stat.mtime, ttl_ms,
									&ni->lease_expires))
				ni->lease_expires = PG_INT64_MAX;
			return;
		}
		ZkWarnNodeData(znode, reason,
					   "The lease's node still counts as a queue member; its owner and expiry are not shown.");
	}
	else
	{
		ZkOwner		o;

		if (ZkReadOwner(ni->data, ni->datalen, &o, &reason) ==
			ZK_DATA_INVALID && zk_named_like_ours(znode))
			ZkWarnNodeData(znode, reason,
						   "The node still counts as a queue member; its owner is not shown.");
		ZkOwnerFree(&o);
	}
	if (reason != NULL)
		pfree(reason);
}

/*
 * ZkNodeStore
 *		Keep what an answer about one node, 'znode', says (in the path's
 *		context), its data checked (zk_node_check_data; queue_member: the
 *		node is one of the path's queue, not one of its leases); a node
 *		that vanished is marked gone.
 */
void
ZkNodeStore(ZkScan *scan, ZkPathScan *ps, ZkNodeInfo *ni, ZkOp *op,
			const char *znode, bool queue_member)
{
	if (op->rc != ZOK)
	{
		ZkScanFailed(scan, op->rc);
		ni->gone = true;
		return;
	}
	ni->read = true;
	ni->owner = op->stat.ephemeralOwner;
	ni->czxid = op->stat.czxid;
	ni->ctime = op->stat.ctime;
	ni->lease_expires = -1;
	if (op->value != NULL && op->value_len > 0)
	{
		ni->data = MemoryContextAlloc(ps->cxt, op->value_len + 1);
		memcpy(ni->data, op->value, op->value_len);
		ni->data[op->value_len] = '\0';
		ni->datalen = op->value_len;
	}
	/* an exists answers no data: nothing to check */
	if (op->kind == ZKOP_GET)
		zk_node_check_data(ps, ni, op, znode, queue_member);
}

/*
 * ZkNodeDowngraded
 *		Was this waiting-looking reader granted by a zklock downgrade: a
 *		zklock node (its data says so) of the same session as a granted
 *		writer ahead of it?  Other clients do not downgrade: their readers
 *		behind their own writer wait like anyone's.  (zk_lock_queue asks the
 *		same of a granted reader and a writer behind it: an upgrade.)
 */
bool
ZkNodeDowngraded(const ZkNodeInfo *reader, const ZkNodeInfo *writer)
{
	ZkOwner		o;

	if (reader->owner == 0 || reader->owner != writer->owner)
		return false;
	ZkParseNodeData(reader->data, reader->datalen, &o);
	return o.host != NULL && o.pid >= 0;
}
