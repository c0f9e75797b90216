/*-------------------------------------------------------------------------
 *
 * cluster/walk.c
 *		The walk of the tree under zklock.root that finds every lock path,
 *		semaphore and double barrier, for zk_cluster_locks and
 *		zk_blocking_pids.
 *
 * Lock paths are nodes of a tree under the root: a lock node is any node
 * with contender children (base/contender.c), and a lock node may also have
 * children that are lock nodes of their own ("/a" and "/a/b").  The walk
 * starts at the root (or at the node of a prefix) with one getChildren
 * per node.  Children that are contenders are queue nodes (ephemeral:
 * nothing below them); every other child is walked in turn.  A node with
 * a child named "leases" is a counting semaphore laid out like Apache
 * Curator's InterProcessSemaphoreV2: its "leases" children
 * ("_c_<uuid>-lease-<seq>", or "lease-<seq>") are the holders and its
 * "locks" children ("-lock-" contenders) the acquirers waiting their turn;
 * neither child is walked as a lock path of its own (unless it holds
 * what a semaphore does not: contenders other than "-lock-" nodes make the
 * child a lock path, and other children are walked).  For
 * zk_cluster_locks, a node with children named like UUIDs (canonical, or
 * 32 hex digits) is a double barrier laid out like Curator's
 * DistributedDoubleBarrier: those children are read first, the ephemeral
 * ones are its participants (mode "member"), and a persistent one so
 * named is walked as a lock path of its own (cluster/locks.c); "ready"
 * (the barrier is open) is not walked.
 *
 * Every lock path found is handed to the goal (ZkPathScanStart), which
 * asks for the nodes it needs.  The walk sends its requests through the
 * engine (cluster/scan.c), whose stack makes it depth first.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "cluster/scan.h"
#include "base/uuid.h"

#define ZK_LEASE_MARKER	"lease-"
#define ZK_SEQ_DIGITS	10

/* one permit node: its sequence and name */
typedef struct ZkLease
{
	int32		seq;
	char	   *name;
} ZkLease;

static void zk_path_leases(ZkPathScan *ps, char **names, int nnames);
static void zk_sem_list_done(ZkScan *scan, ZkReq *req, ZkOp *op);
static bool zk_parse_lease(const char *name, int32 *seq);
static int	zk_lease_cmp(const void *a, const void *b);

/*
 * ZkWalkChildren
 *		The children of a node of the tree (req->target: its lock path,
 *		palloc'd in scan->cxt): its queue if it has one, a semaphore if it
 *		has "leases", a double barrier if it has children named like its
 *		participants (read first: only ephemeral ones are), and every
 *		other child walked in turn.
 */
void
ZkWalkChildren(ZkScan *scan, ZkReq *req, ZkOp *op)
{
	char	   *path = (char *) req->target;
	bool		has_leases = false;
	bool		has_locks = false;
	int			ncontenders = 0;
	int			nparticipants = 0;
	ZkContender dummy;

	if (op->rc != ZOK)
	{
		ZkScanFailed(scan, op->rc);
		pfree(path);
		return;
	}

	for (int i = 0; i < op->nchildren; i++)
	{
		if (strcmp(op->children[i], "leases") == 0)
			has_leases = true;
		else if (strcmp(op->children[i], "locks") == 0)
			has_locks = true;
		else if (scan->goal == ZK_GOAL_LOCKS &&
				 ZkIsParticipantName(op->children[i]))
			nparticipants++;
	}

	for (int i = 0; i < op->nchildren; i++)
	{
		const char *child = op->children[i];

		if (ZkParseContender(child, &dummy))
		{
			ncontenders++;
			continue;
		}
		if (has_leases && (strcmp(child, "leases") == 0 ||
						   strcmp(child, "locks") == 0))
			continue;
		/* a participant is read below; a lock node so named is walked then */
		if (nparticipants > 0 && (ZkIsParticipantName(child) ||
								  strcmp(child, "ready") == 0))
			continue;
		ZkWalkPush(scan, psprintf("%s/%s", req->znode, child),
				   psprintf("%s/%s", path, child));
	}

	if (ncontenders > 0)
	{
		ZkPathScan *ps = ZkPathScanNew(scan, path, req->znode, false);

		ZkPathScanQueue(ps, op->children, op->nchildren);
		ZkPathScanStart(scan, ps);
	}
	if (nparticipants > 0)
	{
		/* a double barrier, if these children are ephemeral (see emit) */
		ZkPathScan *ps = ZkPathScanNew(scan, path, req->znode, true);
		MemoryContext old = MemoryContextSwitchTo(ps->cxt);
		char	  **names = palloc(sizeof(char *) * nparticipants);
		int			k = 0;

		ps->barrier = true;
		ps->leases_node = pstrdup(req->znode);
		for (int i = 0; i < op->nchildren; i++)
		{
			if (ZkIsParticipantName(op->children[i]))
				names[k++] = pstrdup(op->children[i]);
		}
		qsort(names, k, sizeof(char *), pg_qsort_strcmp);
		ps->leases = names;
		ps->nleases = k;
		ps->lease_info = palloc0(sizeof(ZkNodeInfo) * k);
		MemoryContextSwitchTo(old);
		ZkPathScanQueue(ps, NULL, 0);
		ZkPathScanStart(scan, ps);
	}
	if (has_leases)
	{
		ZkPathScan *ps = ZkPathScanNew(scan, path, req->znode, true);

		MemoryContext old = MemoryContextSwitchTo(ps->cxt);

		ps->leases_node = psprintf("%s/leases", req->znode);
		ps->queue_node = psprintf("%s/locks", req->znode);
		MemoryContextSwitchTo(old);
		ps->pending = 1 + (has_locks ? 1 : 0);
		ZkScanPush(scan, ZK_REQ_CHILDREN, pstrdup(ps->leases_node),
				   zk_sem_list_done, ps, 0);
		if (has_locks)
			ZkScanPush(scan, ZK_REQ_CHILDREN, pstrdup(ps->queue_node),
					   zk_sem_list_done, ps, 1);
	}
	pfree(path);
}

/*
 * ZkWalkPush
 *		Queue the walk of a node of the tree ('znode', its lock path 'path':
 *		both allocated in scan->cxt).  A scan of one path (scan->one_path)
 *		walks its first node only: every later walk is of a path below it.
 */
void
ZkWalkPush(ZkScan *scan, char *znode, char *path)
{
	if (scan->one_path)
	{
		if (scan->walked)
			return;				/* freed with scan->cxt */
		scan->walked = true;
	}
	ZkScanPush(scan, ZK_REQ_CHILDREN, znode, ZkWalkChildren, path, 0);
}

/*
 * zk_lease_cmp
 *		qsort order of permit nodes: by sequence, then by name.
 */
static int
zk_lease_cmp(const void *a, const void *b)
{
	const ZkLease *x = (const ZkLease *) a;
	const ZkLease *y = (const ZkLease *) b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * zk_parse_lease
 *		Is this child of "leases" a permit node ("...lease-" and ZooKeeper's
 *		ten-digit sequence)?  Its sequence in *seq.
 */
static bool
zk_parse_lease(const char *name, int32 *seq)
{
	size_t		len = strlen(name);
	size_t		mlen = strlen(ZK_LEASE_MARKER);
	int64		value;

	if (len < mlen + ZK_SEQ_DIGITS ||
		strspn(name + len - ZK_SEQ_DIGITS, "0123456789") != ZK_SEQ_DIGITS)
		return false;
	value = strtoi64(name + len - ZK_SEQ_DIGITS, NULL, 10);
	if (memcmp(name + len - ZK_SEQ_DIGITS - mlen, ZK_LEASE_MARKER, mlen) != 0)
		return false;
	if (value > PG_INT32_MAX)
		return false;
	*seq = (int32) value;
	return true;
}

/*
 * zk_path_leases
 *		Keep the permit nodes among names (in ps->cxt), by sequence.
 */
static void
zk_path_leases(ZkPathScan *ps, char **names, int nnames)
{
	MemoryContext old = MemoryContextSwitchTo(ps->cxt);
	ZkLease    *l = palloc(sizeof(ZkLease) * Max(nnames, 1));
	int			n = 0;

	for (int i = 0; i < nnames; i++)
	{
		if (zk_parse_lease(names[i], &l[n].seq))
			l[n++].name = pstrdup(names[i]);
	}
	qsort(l, n, sizeof(ZkLease), zk_lease_cmp);
	ps->leases = palloc(sizeof(char *) * Max(n, 1));
	for (int i = 0; i < n; i++)
		ps->leases[i] = l[i].name;
	ps->nleases = n;
	ps->lease_info = palloc0(sizeof(ZkNodeInfo) * Max(n, 1));
	pfree(l);
	MemoryContextSwitchTo(old);
}

/*
 * zk_sem_list_done
 *		One of a semaphore's child lists: index 0 "leases", 1 "locks".
 */
static void
zk_sem_list_done(ZkScan *scan, ZkReq *req, ZkOp *op)
{
	ZkPathScan *ps = (ZkPathScan *) req->target;

	const char *list = req->index == 0 ? "leases" : "locks";
	bool		foreign = false;

	if (op->rc != ZOK)
		ZkScanFailed(scan, op->rc);

	/*
	 * Anything but leases in "leases", or anything but "-lock-" nodes in
	 * "locks", is not the semaphore's: contenders make a lock path of the
	 * child itself, other children are walked.
	 */
	for (int i = 0; i < op->nchildren; i++)
	{
		const char *name = op->children[i];
		ZkContender c;
		int32		seq;

		if (ZkParseContender(name, &c))
		{
			if (req->index == 0 || !c.blind)
				foreign = true;
		}
		else if (req->index == 1 || !zk_parse_lease(name, &seq))
			ZkWalkPush(scan, psprintf("%s/%s", req->znode, name),
					   psprintf("%s/%s/%s", strcmp(ps->path, "/") == 0 ?
								"" : ps->path, list, name));
	}
	if (foreign)
	{
		char	   *path = psprintf("%s/%s", strcmp(ps->path, "/") == 0 ?
									"" : ps->path, list);
		ZkPathScan *lp = ZkPathScanNew(scan, path, req->znode, false);

		ZkPathScanQueue(lp, op->children, op->nchildren);
		ZkPathScanStart(scan, lp);
		pfree(path);
	}

	if (req->index == 0)
		zk_path_leases(ps, op->children, op->nchildren);
	else
		ZkPathScanQueue(ps, foreign ? NULL : op->children,
						foreign ? 0 : op->nchildren);
	if (--ps->pending > 0)
		return;
	if (ps->queue == NULL)
		ZkPathScanQueue(ps, NULL, 0);
	if (ps->nleases == 0 && ps->n == 0)
	{
		ZkPathScanFree(scan, ps);
		return;
	}
	ZkPathScanStart(scan, ps);
}
