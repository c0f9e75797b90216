/*-------------------------------------------------------------------------
 *
 * cluster/scan.h
 *		The reading machinery the cluster views share: the pipelined read
 *		engine and the lock paths being read (cluster/scan.c), and the walk
 *		of the tree (cluster/walk.c).
 *
 * Private to the cluster views (cluster/scan.c, cluster/walk.c,
 * cluster/locks.c, cluster/blockers.c, cluster/queue.c); everything else
 * uses cluster/view.h.  A view embeds a ZkScan as the first member of its
 * own state and fills in the hooks its goal needs.
 *
 *-------------------------------------------------------------------------
 */
#ifndef CLUSTER_SCAN_H
#define CLUSTER_SCAN_H

#include "lib/ilist.h"
#include "utils/palloc.h"

#include "base/contender.h"
#include "client/client.h"

typedef enum ZkReqKind
{
	ZK_REQ_CHILDREN,
	ZK_REQ_DATA,
	ZK_REQ_EXISTS
} ZkReqKind;

typedef enum ZkScanGoal
{
	ZK_GOAL_LOCKS,				/* zk_cluster_locks: holders and waiters */
	ZK_GOAL_WAITER,				/* zk_blocking_pids: one backend's nodes */
	ZK_GOAL_QUEUE				/* zk_lock_queue: the head of one queue */
} ZkScanGoal;

typedef struct ZkScan ZkScan;
typedef struct ZkReq ZkReq;
typedef struct ZkPathScan ZkPathScan;

/* What to do with an answer (never a lost connection: the engine resends). */
typedef void (*ZkReqDone) (ZkScan *scan, ZkReq *req, ZkOp *op);

/* What a goal does with a lock path the walk found, or has read. */
typedef void (*ZkPathHook) (ZkScan *scan, ZkPathScan *ps);

/* One request, before it is sent and while it is outstanding. */
struct ZkReq
{
	ZkReqKind	kind;
	char	   *znode;			/* full ZooKeeper path */
	ZkReqDone	done;
	void	   *target;			/* what the answer is for */
	int			index;			/* which node of it */
	ZkOp	   *op;				/* once sent */
	dlist_node	node;			/* in scan->tosend or scan->sent */
};

/* What is known of one queue node. */
typedef struct ZkNodeInfo
{
	bool		granted;
	bool		gone;			/* vanished since the children were read */
	bool		read;			/* stat (and data, for a getData) known */
	int64		owner;			/* ephemeralOwner: the session */
	int64		czxid;
	int64		ctime;
	int64		lease_expires;	/* a lease's TTL node: mtime + ttl, ms since
								 * the Unix epoch; else -1 */
	char	   *data;
	int			datalen;
} ZkNodeInfo;

/* One lock path being read: a lock's queue, or a semaphore. */
struct ZkPathScan
{
	MemoryContext cxt;			/* everything of this path */
	char	   *path;			/* lock path, "/a/b" */
	char	   *node;			/* its ZooKeeper node */
	bool		semaphore;
	bool		barrier;		/* a double barrier: its "leases" are the
								 * children named like participants */
	int			pending;		/* requests outstanding for it */
	/* the queue: contenders of a lock, acquirers ("locks") of a semaphore */
	char	   *queue_node;		/* their parent */
	const char *queue_prefix;	/* "" or "locks/", for znode columns */
	int			n;
	ZkContender *queue;
	ZkNodeInfo *info;
	/* a semaphore's permits (its "leases" children), in sequence order */
	char	   *leases_node;
	int			nleases;
	char	  **leases;
	ZkNodeInfo *lease_info;
	bool		keep;			/* ZK_GOAL_WAITER: holds a node of the waiter */
};

struct ZkScan
{
	ZkScanGoal	goal;
	MemoryContext cxt;			/* requests; each path has its own */
	const char *root;
	const char *where;			/* for the refused nodes' WARNING */
	dlist_head	tosend;			/* a stack: the walk goes depth first */
	dlist_head	sent;			/* outstanding, oldest first */
	int			nsent;
	int			window;			/* most requests outstanding at once */
	int			reconnect;		/* a lost connection's code (else ZOK):
								 * drain, wait, resend */
	int			nrefused;		/* nodes left out: ZNOAUTH */
	bool		one_path;		/* walk the starting node only, not the
								 * lock paths below it */
	bool		walked;			/* (one_path) its walk was queued */
	uint64		nrequests;
	int			npaths;
	/* the goal's hooks, for the lock paths the walk finds */
	ZkPathHook	path_found;		/* queue marked granted: ask for nodes */
	ZkPathHook	path_read;		/* every node asked for is in */
};

/* cluster/scan.c: the engine */
extern void ZkScanInit(ZkScan *scan, ZkScanGoal goal, const char *root,
					   const char *where);
extern void ZkScanPush(ZkScan *scan, ZkReqKind kind, char *znode,
					   ZkReqDone done, void *target, int index);
extern void ZkScanRun(ZkScan *scan);
extern void ZkScanFailed(ZkScan *scan, int rc);
extern void ZkScanReportRefused(ZkScan *scan);

/* cluster/scan.c: the lock paths being read */
extern ZkPathScan *ZkPathScanNew(ZkScan *scan, const char *path,
								 const char *node, bool semaphore);
extern void ZkPathScanFree(ZkScan *scan, ZkPathScan *ps);
extern void ZkPathScanQueue(ZkPathScan *ps, char **names, int nnames);
extern void ZkPathScanStart(ZkScan *scan, ZkPathScan *ps);
extern void ZkPathScanRead(ZkScan *scan, ZkPathScan *ps, bool lease, int i,
						   ZkReqKind kind);
extern void ZkNodeStore(ZkScan *scan, ZkPathScan *ps, ZkNodeInfo *ni,
						ZkOp *op, const char *znode, bool queue_member);
extern bool ZkNodeDowngraded(const ZkNodeInfo *reader,
							 const ZkNodeInfo *writer);

/* cluster/walk.c: the walk */
extern void ZkWalkChildren(ZkScan *scan, ZkReq *req, ZkOp *op);
extern void ZkWalkPush(ZkScan *scan, char *znode, char *path);

#endif							/* CLUSTER_SCAN_H */
