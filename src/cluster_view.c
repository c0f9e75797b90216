/*-------------------------------------------------------------------------
 *
 * cluster_view.c
 *		Cluster-wide inspection: every lock with a queue under zklock.root
 *		(zk_cluster_locks), who blocks a waiting backend (zk_blocking_pids),
 *		and the head of one long queue (zk_lock_queue with max_rows).
 *
 * The scan.  Lock paths are nodes of a tree under the root: a lock node
 * is any node with contender children (contender.c), and a lock node may
 * also have children that are lock nodes of their own ("/a" and "/a/b").
 * The scan walks the tree from the root (or from the node of a prefix)
 * with one getChildren per node.  Children that are contenders are queue
 * nodes (ephemeral: nothing below them); every other child is walked in
 * turn.  A node with a child named "leases" is a counting semaphore laid
 * out like Apache Curator's InterProcessSemaphoreV2: its "leases" children
 * ("_c_<uuid>-lease-<seq>", or "lease-<seq>") are the holders and its
 * "locks" children ("-lock-" contenders) the acquirers waiting their turn;
 * neither child is walked as a lock path of its own (unless it holds
 * what a semaphore does not: contenders other than "-lock-" nodes make the
 * child a lock path, and other children are walked).  A node with children
 * named like UUIDs (canonical, or 32 hex digits) is a double barrier laid
 * out like Curator's DistributedDoubleBarrier: those children are read
 * first, the ephemeral ones are its participants (mode "member"), and a
 * persistent one so named is walked as a lock path of its own; "ready"
 * (the barrier is open) is not walked.
 *
 * Nodes that vanish between reads are left out.  Nodes whose ACL refuses
 * reading are left out too, and counted in one WARNING at the end (as
 * pg_stat_activity hides what a role may not see rather than failing);
 * any other refusal, and a connection not regained while the session may
 * live, is zklock's documented ERROR.
 *
 * For each lock path found, the holders are read (getData: the owner's
 * description and the fencing token) and the oldest waiting node is
 * stat'ed (exists: its creation time).  Holders follow the queue rule (a
 * writer first in line; readers with no writer ahead); a reader queued
 * behind a granted writer of the same session was granted by a downgrade
 * (lock_table.c), which the scan tells by the nodes' ephemeralOwner, so
 * while such a writer holds the lock the waiting readers are read too.
 * Waiters are counted, not read.
 *
 * Pipelining.  Every request goes through one engine (zk_scan_run): at
 * most ZK_SCAN_WINDOW requests are outstanding, new ones are sent as
 * answers come in, and the backend waits for the oldest request, since a
 * ZooKeeper session answers in order.  Pending requests are kept on a
 * stack, so the walk goes depth first and the memory it holds stays
 * proportional to the window and to the widest child list, never to the
 * whole tree; each lock path lives in its own memory context, deleted as
 * soon as its row is out.  Requests are reads: after a lost connection
 * the engine lets the outstanding ones come back, waits for the
 * connection (as long as the session may live) and sends the lost ones
 * again.
 *
 * Cost, in requests: one getChildren per node of the tree below the
 * starting node (lock nodes and the nodes between them; a semaphore adds
 * two, for its "leases" and "locks"), one getData per holder, one exists
 * per lock path with waiters, and one getData per waiting reader behind a
 * granted writer.  A tree of N lock paths with one holder each costs
 * about 2N requests, sent ZK_SCAN_WINDOW at a time.  The scan is not a
 * snapshot: each queue is read at its own moment, and nodes that vanish
 * between the reads are left out.
 *
 * Who blocks a backend.  zklock keeps nothing in shared memory, so a
 * backend's queue nodes are found by their data: the same walk reads the
 * data of every waiting node (not the holders) and keeps those whose
 * owner is this server (cluster_name, host, port) and the given pid.  For
 * each, the nodes ahead that conflict with it (for a writer every node
 * ahead, for a reader every writer ahead; for a semaphore acquirer the
 * acquirers ahead, or every lease but its own when it is first) are read
 * once more: one row per blocker.  Cost: the walk's getChildren, one
 * getData per waiting node in the whole tree, and one getData per blocker.
 *
 * One queue.  ZkReadQueueHead (zk_lock_queue) reads the children once and
 * the data of the first max_rows contenders only, or of all of them (more
 * if some vanish meanwhile), through the same engine with every request
 * sent at once.
 *
 * Nothing here runs on the client library's threads: the engine waits on
 * ZkOpWait (the backend's latch) and checks for interrupts between
 * answers.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "utils/memutils.h"

#include "cluster_view.h"
#include "contender.h"
#include "node_data.h"
#include "text_encoding.h"
#include "zk_session.h"

/* most requests outstanding at once */
#define ZK_SCAN_WINDOW	256

/*
 * When the oldest answer is not in yet, the scan sleeps until the answer
 * this many requests later is (answers come in order): one wake-up per
 * batch of answers instead of one per answer or two, while the rest of
 * the window keeps ZooKeeper busy.
 */
#define ZK_SCAN_BATCH	64

#define WHAT_SCAN		"scanning the locks under"
#define WHAT_QUEUE		"reading the queue of lock"

#define ZK_LEASE_MARKER	"lease-"
#define ZK_SEQ_DIGITS	10

typedef enum ZkReqKind
{
	ZK_REQ_CHILDREN,
	ZK_REQ_DATA,
	ZK_REQ_EXISTS
} ZkReqKind;

typedef struct ZkScan ZkScan;
typedef struct ZkReq ZkReq;

/* What to do with an answer (never a lost connection: the engine resends). */
typedef void (*ZkReqDone) (ZkScan *scan, ZkReq *req, ZkOp *op);

/* One request, before it is sent and while it is outstanding. */
struct ZkReq
{
	ZkReqKind	kind;
	char	   *znode;			/* full ZooKeeper path */
	ZkReqDone	done;
	void	   *target;			/* what the answer is for */
	int			index;			/* which node of it */
	ZkOp	   *op;				/* once sent */
	ZkReq	   *next;			/* in the stack to send, or the sent list */
};

typedef enum ZkScanGoal
{
	ZK_GOAL_LOCKS,				/* zk_cluster_locks: holders and waiters */
	ZK_GOAL_WAITER,				/* zk_blocking_pids: one backend's nodes */
	ZK_GOAL_QUEUE				/* zk_lock_queue: the head of one queue */
} ZkScanGoal;

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
typedef struct ZkPathScan
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
	/* a semaphore's leases, in sequence order */
	char	   *leases_node;
	int			nleases;
	char	  **leases;
	ZkNodeInfo *lease_info;
	bool		keep;			/* ZK_GOAL_WAITER: holds a node of the waiter */
} ZkPathScan;

struct ZkScan
{
	ZkScanGoal	goal;
	MemoryContext cxt;			/* requests; each path has its own */
	const char *root;
	const char *where;			/* for errors: the prefix or lock path */
	const char *what;
	ZkReq	   *tosend;			/* a stack: the walk goes depth first */
	ZkReq	   *sent_head;		/* outstanding, oldest first */
	ZkReq	   *sent_tail;
	int			nsent;
	int			window;			/* most requests outstanding at once */
	bool		reconnect;		/* a lost connection: drain, wait, resend */
	int			nrefused;		/* nodes left out: ZNOAUTH */
	uint64		nrequests;
	int			npaths;
	/* ZK_GOAL_LOCKS */
	ZkClusterLockCallback cb;
	void	   *cb_arg;
	/* ZK_GOAL_WAITER */
	ZkOwner		me;				/* this server, and the pid looked for */
	List	   *found;			/* ZkPathScan holding the waiter's nodes */
	List	   *rows;			/* ZkBlockerInfo, in the caller's context */
	MemoryContext rows_cxt;
	/* ZK_GOAL_QUEUE */
	ZkPathScan *one;
	int			next_index;		/* next contender not yet asked for */
};

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

static void zk_scan_init(ZkScan *scan, ZkScanGoal goal, const char *root,
						 const char *what, const char *where);
static void zk_scan_push(ZkScan *scan, ZkReqKind kind, char *znode,
						 ZkReqDone done, void *target, int index);
static void zk_scan_run(ZkScan *scan);
static void zk_scan_send(ZkScan *scan, ZkReq *req);
static void zk_scan_raise(ZkScan *scan, int rc) pg_attribute_noreturn();
static bool zk_scan_skip(ZkScan *scan, int rc);
static void zk_scan_report_refused(ZkScan *scan);
static void zk_walk_done(ZkScan *scan, ZkReq *req, ZkOp *op);
static ZkPathScan *zk_path_new(ZkScan *scan, const char *path,
							   const char *node, bool semaphore);
static void zk_path_free(ZkScan *scan, ZkPathScan *ps);
static void zk_path_queue(ZkPathScan *ps, char **names, int nnames);
static void zk_path_leases(ZkPathScan *ps, char **names, int nnames);
static void zk_sem_list_done(ZkScan *scan, ZkReq *req, ZkOp *op);
static void zk_path_start(ZkScan *scan, ZkPathScan *ps);
static void zk_path_read(ZkScan *scan, ZkPathScan *ps, bool lease, int i,
						 ZkReqKind kind);
static void zk_node_store(ZkScan *scan, ZkPathScan *ps, ZkNodeInfo *ni,
						  ZkOp *op);
static void zk_node_done(ZkScan *scan, ZkReq *req, ZkOp *op);
static void zk_path_settle(ZkScan *scan, ZkPathScan *ps);
static void zk_path_emit(ZkScan *scan, ZkPathScan *ps, int64 oldest);
static void zk_waiter_settle(ZkScan *scan, ZkPathScan *ps);
static bool zk_is_me(const ZkScan *scan, const char *data, int len);
static bool zk_downgraded(const ZkNodeInfo *reader, const ZkNodeInfo *writer);
static void zk_blockers_start(ZkScan *scan);
static void zk_blocker_done(ZkScan *scan, ZkReq *req, ZkOp *op);
static bool zk_parse_lease(const char *name, int32 *seq);
static bool zk_is_participant_name(const char *name);
static int	zk_lease_cmp(const void *a, const void *b);
static int	zk_name_cmp(const void *a, const void *b);
static void zk_queue_done(ZkScan *scan, ZkReq *req, ZkOp *op);

/* ------------------------------------------------------------------------
 * The engine: a bounded window of pipelined reads.
 * ------------------------------------------------------------------------
 */

static void
zk_scan_init(ZkScan *scan, ZkScanGoal goal, const char *root,
			 const char *what, const char *where)
{
	memset(scan, 0, sizeof(*scan));
	scan->goal = goal;
	scan->root = root;
	scan->what = what;
	scan->where = where;
	scan->window = ZK_SCAN_WINDOW;
	scan->cxt = AllocSetContextCreate(CurrentMemoryContext,
									  "zklock cluster scan",
									  ALLOCSET_DEFAULT_SIZES);
}

/*
 * zk_scan_push
 *		Queue a request (znode must be allocated in scan->cxt; the engine
 *		frees it).
 */
static void
zk_scan_push(ZkScan *scan, ZkReqKind kind, char *znode, ZkReqDone done,
			 void *target, int index)
{
	ZkReq	   *req = MemoryContextAlloc(scan->cxt, sizeof(ZkReq));

	req->kind = kind;
	req->znode = znode;
	req->done = done;
	req->target = target;
	req->index = index;
	req->op = NULL;
	req->next = scan->tosend;
	scan->tosend = req;
}

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
	req->next = NULL;
	if (scan->sent_tail)
		scan->sent_tail->next = req;
	else
		scan->sent_head = req;
	scan->sent_tail = req;
	scan->nsent++;
}

/*
 * zk_scan_run
 *		Send and answer requests until none is left: at most
 *		ZK_SCAN_WINDOW outstanding, answered oldest first, the backend
 *		sleeping until a batch of them is in (ZK_SCAN_BATCH).  Handlers may
 *		push more.  A request that met a lost connection is sent again
 *		once every outstanding one has come back and the session is
 *		connected again (ZkWaitConnected raises zklock's documented ERROR if it
 *		does not come back while the session may live).  Handlers run in
 *		scan->cxt; what they allocate there for one request they free.
 */
static void
zk_scan_run(ZkScan *scan)
{
	MemoryContext old = MemoryContextSwitchTo(scan->cxt);

	for (;;)
	{
		ZkReq	   *req;
		ZkOp	   *op;

		CHECK_FOR_INTERRUPTS();
		while (!scan->reconnect && scan->nsent < scan->window &&
			   scan->tosend != NULL)
		{
			req = scan->tosend;
			scan->tosend = req->next;
			zk_scan_send(scan, req);
		}
		if (scan->sent_head == NULL)
		{
			if (scan->reconnect)
			{
				ZkWaitConnected(scan->what, scan->where);
				scan->reconnect = false;
				continue;
			}
			if (scan->tosend == NULL)
				break;
			continue;
		}

		req = scan->sent_head;
		op = req->op;
		if (!ZkOpIsDone(op))
		{
			ZkReq	   *last = req;

			for (int i = 1; i < ZK_SCAN_BATCH && last->next != NULL; i++)
				last = last->next;
			ZkOpWait(last->op, scan->what, scan->where);
		}
		ZkOpWait(op, scan->what, scan->where);
		scan->sent_head = req->next;
		if (scan->sent_head == NULL)
			scan->sent_tail = NULL;
		scan->nsent--;

		if (ZkIsConnectionLoss(op->rc))
		{
			ZkOpFree(op);
			req->op = NULL;
			req->next = scan->tosend;
			scan->tosend = req;
			scan->reconnect = true;
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
 * zk_scan_raise
 *		An answer the scan cannot go on with: zklock's documented ERROR for it.
 */
static void
zk_scan_raise(ZkScan *scan, int rc)
{
	ZkRaiseForRc(rc, scan->what, scan->where);
}

/*
 * zk_scan_skip
 *		An answer that leaves a node out rather than failing the scan: the
 *		node vanished, or (except for the one queue of zk_lock_queue) its
 *		ACL does not let us read it, which is counted for the WARNING at
 *		the end (zk_scan_report_refused).
 */
static bool
zk_scan_skip(ZkScan *scan, int rc)
{
	if (rc == ZNONODE)
		return true;
	if (rc == ZNOAUTH && scan->goal != ZK_GOAL_QUEUE)
	{
		scan->nrefused++;
		return true;
	}
	return false;
}

/*
 * zk_scan_report_refused
 *		Say that nodes were left out because ZooKeeper refused to read
 *		them, as pg_stat_activity hides what a role may not see instead of
 *		failing.
 */
static void
zk_scan_report_refused(ZkScan *scan)
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
 * The walk.
 * ------------------------------------------------------------------------
 */

/*
 * zk_walk_done
 *		The children of a node of the tree (req->target: its lock path,
 *		palloc'd in scan->cxt): its queue if it has one, a semaphore if it
 *		has "leases", a double barrier if it has children named like its
 *		participants (read first: only ephemeral ones are), and every
 *		other child walked in turn.
 */
static void
zk_walk_done(ZkScan *scan, ZkReq *req, ZkOp *op)
{
	char	   *path = (char *) req->target;
	bool		has_leases = false;
	bool		has_locks = false;
	int			ncontenders = 0;
	int			nparticipants = 0;
	ZkContender dummy;

	if (op->rc != ZOK)
	{
		if (!zk_scan_skip(scan, op->rc))
			zk_scan_raise(scan, op->rc);
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
				 zk_is_participant_name(op->children[i]))
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
		if (nparticipants > 0 && (zk_is_participant_name(child) ||
								  strcmp(child, "ready") == 0))
			continue;
		zk_scan_push(scan, ZK_REQ_CHILDREN,
					 psprintf("%s/%s", req->znode, child), zk_walk_done,
					 psprintf("%s/%s", path, child), 0);
	}

	if (ncontenders > 0)
	{
		ZkPathScan *ps = zk_path_new(scan, path, req->znode, false);

		zk_path_queue(ps, op->children, op->nchildren);
		zk_path_start(scan, ps);
	}
	if (nparticipants > 0)
	{
		/* a double barrier, if these children are ephemeral (see emit) */
		ZkPathScan *ps = zk_path_new(scan, path, req->znode, true);
		MemoryContext old = MemoryContextSwitchTo(ps->cxt);
		char	  **names = palloc(sizeof(char *) * nparticipants);
		int			k = 0;

		ps->barrier = true;
		ps->leases_node = pstrdup(req->znode);
		for (int i = 0; i < op->nchildren; i++)
		{
			if (zk_is_participant_name(op->children[i]))
				names[k++] = pstrdup(op->children[i]);
		}
		qsort(names, k, sizeof(char *), zk_name_cmp);
		ps->leases = names;
		ps->nleases = k;
		ps->lease_info = palloc0(sizeof(ZkNodeInfo) * k);
		MemoryContextSwitchTo(old);
		zk_path_queue(ps, NULL, 0);
		zk_path_start(scan, ps);
	}
	if (has_leases)
	{
		ZkPathScan *ps = zk_path_new(scan, path, req->znode, true);

		MemoryContext old = MemoryContextSwitchTo(ps->cxt);

		ps->leases_node = psprintf("%s/leases", req->znode);
		ps->queue_node = psprintf("%s/locks", req->znode);
		MemoryContextSwitchTo(old);
		ps->pending = 1 + (has_locks ? 1 : 0);
		zk_scan_push(scan, ZK_REQ_CHILDREN, pstrdup(ps->leases_node),
					 zk_sem_list_done, ps, 0);
		if (has_locks)
			zk_scan_push(scan, ZK_REQ_CHILDREN, pstrdup(ps->queue_node),
						 zk_sem_list_done, ps, 1);
	}
	pfree(path);
}

/*
 * zk_path_new
 *		A lock path found: its own memory context.
 */
static ZkPathScan *
zk_path_new(ZkScan *scan, const char *path, const char *node, bool semaphore)
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

static void
zk_path_free(ZkScan *scan, ZkPathScan *ps)
{
	MemoryContextDelete(ps->cxt);
}

/*
 * zk_path_queue
 *		Keep the contenders among names (in ps->cxt), in queue order.
 */
static void
zk_path_queue(ZkPathScan *ps, char **names, int nnames)
{
	MemoryContext old = MemoryContextSwitchTo(ps->cxt);
	char	  **copy = palloc(sizeof(char *) * Max(nnames, 1));

	for (int i = 0; i < nnames; i++)
		copy[i] = pstrdup(names[i]);
	ps->queue = palloc(sizeof(ZkContender) * Max(nnames, 1));
	ps->n = ZkSortContenders(copy, nnames, ps->queue);
	ps->info = palloc0(sizeof(ZkNodeInfo) * Max(ps->n, 1));
	MemoryContextSwitchTo(old);
}

/* one lease node: its sequence and name */
typedef struct ZkLease
{
	int32		seq;
	char	   *name;
} ZkLease;

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
 *		Is this child of "leases" a lease node ("...lease-" and ZooKeeper's
 *		ten-digit sequence)?  Its sequence in *seq.
 */
static bool
zk_parse_lease(const char *name, int32 *seq)
{
	size_t		len = strlen(name);
	size_t		mlen = strlen(ZK_LEASE_MARKER);
	int64		value = 0;

	if (len < mlen + ZK_SEQ_DIGITS)
		return false;
	for (size_t i = len - ZK_SEQ_DIGITS; i < len; i++)
	{
		if (name[i] < '0' || name[i] > '9')
			return false;
		value = value * 10 + (name[i] - '0');
	}
	if (memcmp(name + len - ZK_SEQ_DIGITS - mlen, ZK_LEASE_MARKER, mlen) != 0)
		return false;
	if (value > PG_INT32_MAX)
		return false;
	*seq = (int32) value;
	return true;
}

static int
zk_name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/*
 * zk_is_participant_name
 *		Is a child named like a double barrier's participant: a UUID, in its
 *		canonical form (zklock, Curator) or as 32 hex digits (kazoo)?
 */
static bool
zk_is_participant_name(const char *name)
{
	size_t		len = strlen(name);

	if (len != 36 && len != 32)
		return false;
	for (size_t i = 0; i < len; i++)
	{
		bool		dash = (len == 36 && (i == 8 || i == 13 || i == 18 || i == 23));

		if (dash ? name[i] != '-' : !isxdigit((unsigned char) name[i]))
			return false;
	}
	return true;
}

/*
 * zk_path_leases
 *		Keep the lease nodes among names (in ps->cxt), by sequence.
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

	if (op->rc != ZOK && !zk_scan_skip(scan, op->rc))
		zk_scan_raise(scan, op->rc);

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
			zk_scan_push(scan, ZK_REQ_CHILDREN,
						 psprintf("%s/%s", req->znode, name), zk_walk_done,
						 psprintf("%s/%s/%s", strcmp(ps->path, "/") == 0 ?
								  "" : ps->path, list, name), 0);
	}
	if (foreign)
	{
		char	   *path = psprintf("%s/%s", strcmp(ps->path, "/") == 0 ?
									"" : ps->path, list);
		ZkPathScan *lp = zk_path_new(scan, path, req->znode, false);

		zk_path_queue(lp, op->children, op->nchildren);
		zk_path_start(scan, lp);
		pfree(path);
	}

	if (req->index == 0)
		zk_path_leases(ps, op->children, op->nchildren);
	else
		zk_path_queue(ps, foreign ? NULL : op->children,
					  foreign ? 0 : op->nchildren);
	if (--ps->pending > 0)
		return;
	if (ps->queue == NULL)
		zk_path_queue(ps, NULL, 0);
	if (ps->nleases == 0 && ps->n == 0)
	{
		zk_path_free(scan, ps);
		return;
	}
	zk_path_start(scan, ps);
}

/*
 * zk_path_read
 *		Ask for one node of a path: a queue node, or a lease.
 */
static void
zk_path_read(ZkScan *scan, ZkPathScan *ps, bool lease, int i, ZkReqKind kind)
{
	char	   *znode;

	if (lease)
		znode = psprintf("%s/%s", ps->leases_node, ps->leases[i]);
	else
		znode = psprintf("%s/%s", ps->queue_node, ps->queue[i].name);
	ps->pending++;
	/* a lease is index -1 - i: one handler for both */
	zk_scan_push(scan, kind, znode, zk_node_done, ps, lease ? -1 - i : i);
}

/*
 * zk_path_start
 *		The queue (and leases) of a path are known: mark what the queue
 *		rule grants and ask for what the goal needs.
 */
static void
zk_path_start(ZkScan *scan, ZkPathScan *ps)
{
	for (int i = 0; !ps->semaphore && i < ps->n; i++)
		ps->info[i].granted =
			ZkBlockingContender(ps->queue, i, ps->queue[i].mode) < 0;

	if (scan->goal == ZK_GOAL_WAITER)
	{
		/* the data of every waiting node, to find the waiter's */
		for (int i = 0; i < ps->n; i++)
			if (!ps->info[i].granted)
				zk_path_read(scan, ps, false, i, ZK_REQ_DATA);
		if (ps->pending == 0)
			zk_path_free(scan, ps);
		return;
	}

	/* the holders, and readers a downgrade may have granted */
	for (int i = 0; i < ps->nleases; i++)
		zk_path_read(scan, ps, true, i, ZK_REQ_DATA);
	for (int i = 0; i < ps->n; i++)
	{
		if (ps->info[i].granted ||
			(ps->queue[i].mode == ZK_MODE_SHARED &&
			 ps->queue[0].mode == ZK_MODE_EXCLUSIVE && !ps->semaphore))
			zk_path_read(scan, ps, false, i, ZK_REQ_DATA);
	}
	if (ps->pending == 0)
		zk_path_settle(scan, ps);
}

/*
 * zk_node_store
 *		Keep what an answer about one node says (in the path's context); a
 *		node that vanished is marked gone.
 */
static void
zk_node_store(ZkScan *scan, ZkPathScan *ps, ZkNodeInfo *ni, ZkOp *op)
{
	if (op->rc != ZOK)
	{
		if (!zk_scan_skip(scan, op->rc))
			zk_scan_raise(scan, op->rc);
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
	if (ZkIsLeaseNode(op->stat.ephemeralOwner) && ni->data != NULL)
	{
		ZkOwner		o;

		/* a lease's ttl is in its data: the server keeps it to itself */
		ZkParseNodeData(ni->data, ni->datalen, &o);
		if (o.ttl_ms > 0)
			ni->lease_expires = op->stat.mtime + o.ttl_ms;
	}
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

	zk_node_store(scan, ps, ni, op);
	if (--ps->pending > 0)
		return;
	if (scan->goal == ZK_GOAL_WAITER)
		zk_waiter_settle(scan, ps);
	else
		zk_path_settle(scan, ps);
}

/*
 * zk_path_settle
 *		Every read of a path is in: apply downgrades, then find the oldest
 *		waiting node; stat it if that is not known yet (the path settles
 *		again on the answer), else emit the path.
 */
static void
zk_path_settle(ZkScan *scan, ZkPathScan *ps)
{
	bool		writer_head = (!ps->semaphore && ps->n > 0 && ps->info[0].read &&
							   ps->queue[0].mode == ZK_MODE_EXCLUSIVE);

	for (int i = 1; writer_head && i < ps->n; i++)
	{
		if (!ps->info[i].granted && ps->info[i].read &&
			ps->queue[i].mode == ZK_MODE_SHARED &&
			zk_downgraded(&ps->info[i], &ps->info[0]))
			ps->info[i].granted = true;
	}
	for (int i = 0; i < ps->n; i++)
	{
		if (ps->info[i].granted || ps->info[i].gone)
			continue;
		if (!ps->info[i].read)
		{
			zk_path_read(scan, ps, false, i, ZK_REQ_EXISTS);
			return;
		}
		zk_path_emit(scan, ps, ps->info[i].ctime);
		return;
	}
	zk_path_emit(scan, ps, -1);
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
		ZkClusterHolder *h = &lock.holders[n];

		if (ni->gone || !ni->read)
			continue;
		if (ps->barrier)
		{
			/* a persistent child so named is a lock path of its own */
			if (ni->owner == 0)
			{
				zk_scan_push(scan, ZK_REQ_CHILDREN,
							 psprintf("%s/%s", ps->node, ps->leases[i]),
							 zk_walk_done,
							 psprintf("%s/%s", strcmp(ps->path, "/") == 0 ?
									  "" : ps->path, ps->leases[i]), 0);
				continue;
			}
			h->znode = ps->leases[i];
			h->mode = "member";
			h->token = ni->czxid;
			h->ctime_ms = ni->ctime;
			h->lease_expires_ms = -1;
			h->data = ni->data;
			h->datalen = ni->datalen;
			n++;
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
		h->znode = psprintf("leases/%s", ps->leases[i]);
		h->mode = "lease";
		h->token = ni->czxid;
		h->ctime_ms = ni->ctime;
		h->lease_expires_ms = -1;
		h->data = ni->data;
		h->datalen = ni->datalen;
		n++;
	}
	for (int i = 0; i < ps->n; i++)
	{
		ZkNodeInfo *ni = &ps->info[i];
		ZkClusterHolder *h = &lock.holders[n];

		if (ni->gone)
			continue;
		if (!ni->granted)
		{
			lock.nwaiters++;
			continue;
		}
		if (!ni->read)
			continue;
		h->znode = ps->queue[i].name;
		h->mode = ZkLockModeName(ps->queue[i].mode);
		h->token = ni->czxid;
		h->ctime_ms = ni->ctime;
		h->lease_expires_ms = ni->lease_expires;
		h->data = ni->data;
		h->datalen = ni->datalen;
		n++;
	}
	lock.nholders = n;
	if (lock.nholders > 0 || lock.nwaiters > 0)
		scan->cb(&lock, scan->cb_arg);
	MemoryContextSwitchTo(old);
	zk_path_free(scan, ps);
}

/* ------------------------------------------------------------------------
 * Lock paths under a prefix (zk_cluster_locks).
 * ------------------------------------------------------------------------
 */

/*
 * ZkClusterScan
 *		Call cb once for every lock path with a queue under root + prefix
 *		(prefix "" for the whole root; a lock path otherwise, which is
 *		itself included).  The session must be open.  Raises zklock's
 *		documented ERROR if ZooKeeper refuses a read or the connection
 *		does not come back.
 */
void
ZkClusterScan(const char *root, const char *prefix, ZkClusterLockCallback cb,
			  void *arg)
{
	ZkScan		scan;
	MemoryContext old;
	int64		start = ZkNowMs();

	zk_scan_init(&scan, ZK_GOAL_LOCKS, root, WHAT_SCAN,
				 prefix[0] ? prefix : "/");
	scan.cb = cb;
	scan.cb_arg = arg;
	old = MemoryContextSwitchTo(scan.cxt);
	zk_scan_push(&scan, ZK_REQ_CHILDREN, psprintf("%s%s", root, prefix),
				 zk_walk_done, pstrdup(prefix), 0);
	MemoryContextSwitchTo(old);
	zk_scan_run(&scan);
	ereport(DEBUG1,
			(errmsg_internal("scanned %d lock paths under \"%s%s\" with %llu requests in %lld ms",
							 scan.npaths, root, ZkUtf8ForMessage(prefix),

							 (unsigned long long) scan.nrequests,
							 (long long) (ZkNowMs() - start))));
	zk_scan_report_refused(&scan);
	MemoryContextDelete(scan.cxt);
}

/* ------------------------------------------------------------------------
 * Who blocks a backend (zk_blocking_pids).
 * ------------------------------------------------------------------------
 */

/*
 * zk_downgraded
 *		Was this waiting-looking reader granted by a zklock downgrade: a
 *		zklock node (its data says so) of the same session as a granted
 *		writer ahead of it?  Other clients do not downgrade: their readers
 *		behind their own writer wait like anyone's.
 */
static bool
zk_downgraded(const ZkNodeInfo *reader, const ZkNodeInfo *writer)
{
	ZkOwner		o;

	if (reader->owner == 0 || reader->owner != writer->owner)
		return false;
	ZkParseNodeData(reader->data, reader->datalen, &o);
	return o.host != NULL && o.pid >= 0;
}

/*
 * zk_is_me
 *		Does node data name the backend looked for (this server's
 *		cluster_name, host and port, and the pid)?
 */
static bool
zk_is_me(const ZkScan *scan, const char *data, int len)
{
	ZkOwner		o;
	const ZkOwner *me = &scan->me;

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
 * zk_waiter_settle
 *		The waiting nodes of a path are read: keep the path if one of them
 *		is the backend's.
 */
static void
zk_waiter_settle(ZkScan *scan, ZkPathScan *ps)
{
	MemoryContext old = MemoryContextSwitchTo(ps->cxt);

	for (int i = 0; i < ps->n; i++)
	{
		if (ps->info[i].read && !ps->info[i].granted &&
			zk_is_me(scan, ps->info[i].data, ps->info[i].datalen))
		{
			ps->keep = true;
			break;
		}
	}
	MemoryContextSwitchTo(old);
	if (ps->keep)
		scan->found = lappend(scan->found, ps);
	else
		zk_path_free(scan, ps);
}

/*
 * zk_blockers_start
 *		For every node of the waiter found, read the nodes that block it.
 */
static void
zk_blockers_start(ZkScan *scan)
{
	ListCell   *lc;

	foreach(lc, scan->found)
	{
		ZkPathScan *ps = (ZkPathScan *) lfirst(lc);

		for (int w = 0; w < ps->n; w++)
		{
			if (!ps->info[w].read || ps->info[w].granted ||
				!zk_is_me(scan, ps->info[w].data, ps->info[w].datalen))
				continue;
			/* pushed last first: sent, and answered, in queue order */
			for (int l = (ps->semaphore && w == 0) ? ps->nleases - 1 : -1; l >= 0; l--)
			{
				ZkBlockerReq *br = MemoryContextAlloc(scan->cxt,
													  sizeof(ZkBlockerReq));

				/* the first acquirer of a semaphore waits for the leases */
				br->ps = ps;
				br->waiter = w;
				br->lease = true;
				br->index = l;
				zk_scan_push(scan, ZK_REQ_DATA,
							 psprintf("%s/%s", ps->leases_node, ps->leases[l]),
							 zk_blocker_done, br, 0);
			}
			for (int b = w - 1; b >= 0; b--)
			{
				ZkBlockerReq *br;

				if (!ps->semaphore && ps->queue[w].mode == ZK_MODE_SHARED &&
					ps->queue[b].mode == ZK_MODE_SHARED)
					continue;
				br = MemoryContextAlloc(scan->cxt, sizeof(ZkBlockerReq));
				br->ps = ps;
				br->waiter = w;
				br->lease = false;
				br->index = b;
				zk_scan_push(scan, ZK_REQ_DATA,
							 psprintf("%s/%s", ps->queue_node,
									  ps->queue[b].name),
							 zk_blocker_done, br, 0);
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
	ZkBlockerReq *br = (ZkBlockerReq *) req->target;
	ZkPathScan *ps = br->ps;
	ZkBlockerRow *r;
	ZkBlockerInfo *row;
	MemoryContext old;

	if (op->rc != ZOK && !zk_scan_skip(scan, op->rc))
		zk_scan_raise(scan, op->rc);
	if (op->rc != ZOK ||
		(br->lease && zk_is_me(scan, op->value, op->value_len)))
	{
		pfree(br);
		return;
	}

	old = MemoryContextSwitchTo(scan->rows_cxt);
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
	scan->rows = lappend(scan->rows, r);
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
	ZkScan		scan;
	MemoryContext old;
	char	   *mine;
	int			len;
	ZkOwner		me;
	ListCell   *lc;
	int			n = 0;
	int64		start = ZkNowMs();

	zk_scan_init(&scan, ZK_GOAL_WAITER, root, WHAT_SCAN, "/");
	scan.rows_cxt = CurrentMemoryContext;

	/* this server as its nodes describe it */
	mine = ZkBuildNodeData(ZK_MODE_EXCLUSIVE, ZK_SCOPE_SESSION, -1, &len);
	ZkParseNodeData(mine, len, &me);
	me.pid = pid;
	scan.me = me;

	old = MemoryContextSwitchTo(scan.cxt);
	zk_scan_push(&scan, ZK_REQ_CHILDREN, pstrdup(root), zk_walk_done,
				 pstrdup(""), 0);
	MemoryContextSwitchTo(old);
	zk_scan_run(&scan);

	old = MemoryContextSwitchTo(scan.cxt);
	zk_blockers_start(&scan);
	MemoryContextSwitchTo(old);
	zk_scan_run(&scan);

	ereport(DEBUG1,
			(errmsg_internal("looked for the blockers of process %d among %d lock paths with %llu requests in %lld ms",
							 pid, scan.npaths,
							 (unsigned long long) scan.nrequests,
							 (long long) (ZkNowMs() - start))));

	/*
	 * A node of the waiter's own session ahead of its reader means that
	 * the reader was granted by a downgrade: that node waits for nothing.
	 */
	zk_scan_report_refused(&scan);
	*blockers = palloc(sizeof(ZkBlockerInfo) * Max(list_length(scan.rows), 1));
	foreach(lc, scan.rows)
	{
		ZkBlockerRow *r = (ZkBlockerRow *) lfirst(lc);
		bool		downgrade = false;
		ListCell   *lc2;

		foreach(lc2, scan.rows)
		{
			ZkBlockerRow *o = (ZkBlockerRow *) lfirst(lc2);

			if (o->waiter_session != 0 &&
				o->blocker_session == o->waiter_session &&
				strcmp(o->info.path, r->info.path) == 0 &&
				strcmp(o->info.waiter_znode, r->info.waiter_znode) == 0)
				downgrade = true;
		}
		if (!downgrade)
			(*blockers)[n++] = r->info;
	}
	MemoryContextDelete(scan.cxt);
	return n;
}

/* ------------------------------------------------------------------------
 * The head of one queue (zk_lock_queue with max_rows).
 * ------------------------------------------------------------------------
 */

/*
 * zk_queue_done
 *		The data of one contender.  One that vanished makes room for the
 *		next contender not asked for yet.
 */
static void
zk_queue_done(ZkScan *scan, ZkReq *req, ZkOp *op)
{
	ZkPathScan *ps = scan->one;

	if (op->rc == ZNONODE && scan->next_index < ps->n)
	{
		int			i = scan->next_index++;

		zk_scan_push(scan, ZK_REQ_DATA,
					 psprintf("%s/%s", ps->node, ps->queue[i].name),
					 zk_queue_done, ps, i);
	}
	zk_node_store(scan, ps, &ps->info[req->index], op);
}

/*
 * ZkReadQueueHead
 *		The first max_rows nodes of a lock's queue, in order (all of them
 *		if max_rows < 0), for zk_lock_queue: one getChildren, then the
 *		data of those nodes only, all pipelined at once.  Nodes
 *		that vanish between the two reads are left out and replaced by the
 *		next ones.  'granted' follows the queue rule over the nodes that
 *		exist, and a reader behind a granted writer of the same session (a
 *		downgrade) is granted.  Returns the number of entries; *entries is
 *		palloc'd.
 */
int
ZkReadQueueHead(const char *lock_node, const char *lock_path, int max_rows,
				ZkQueueEntry **entries)
{
	ZkScan		scan;
	ZkOp	   *list;
	ZkPathScan *ps;
	ZkQueueEntry *out;
	ZkContender *present;
	int		   *from;
	int			want;
	int			nout = 0;
	MemoryContext old;

	for (;;)
	{
		list = ZkGetChildren(lock_node);
		ZkOpWait(list, WHAT_QUEUE, lock_path);
		if (!ZkIsConnectionLoss(list->rc))
			break;
		ZkOpFree(list);
		ZkWaitConnected(WHAT_QUEUE, lock_path);
	}
	if (list->rc == ZNONODE)
	{
		ZkOpFree(list);
		*entries = NULL;
		return 0;
	}
	if (list->rc != ZOK)
		ZkRaiseForRc(list->rc, WHAT_QUEUE, lock_path);

	zk_scan_init(&scan, ZK_GOAL_QUEUE, "", WHAT_QUEUE, lock_path);
	ps = zk_path_new(&scan, lock_path, lock_node, false);
	zk_path_queue(ps, list->children, list->nchildren);
	ZkOpFree(list);
	scan.one = ps;

	want = (max_rows < 0 || max_rows > ps->n) ? ps->n : max_rows;
	scan.next_index = want;
	/* what is read is bounded by the list in hand: send it all at once */
	scan.window = Max(want, 1);
	old = MemoryContextSwitchTo(scan.cxt);
	for (int i = want - 1; i >= 0; i--)
		zk_scan_push(&scan, ZK_REQ_DATA,
					 psprintf("%s/%s", lock_node, ps->queue[i].name),
					 zk_queue_done, ps, i);
	MemoryContextSwitchTo(old);
	zk_scan_run(&scan);

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
				zk_downgraded(ni, &ps->info[from[w]]))
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
	MemoryContextDelete(scan.cxt);
	*entries = out;
	return nout;
}
