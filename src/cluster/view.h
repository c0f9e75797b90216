/*-------------------------------------------------------------------------
 *
 * cluster/view.h
 *		Cluster-wide inspection: every lock with a queue (cluster/locks.c),
 *		who blocks a waiting backend (cluster/blockers.c), and the head of
 *		a long queue (cluster/queue.c).
 *
 * All three read through the machinery of cluster/scan.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef CLUSTER_VIEW_H
#define CLUSTER_VIEW_H

#include "base/vocabulary.h"

/* One node that holds a lock path (a granted queue node, or a lease). */
typedef struct ZkClusterHolder
{
	const char *znode;			/* child name; "leases/<name>" for a lease */
	const char *mode;			/* "exclusive", "shared", "lease" or
								 * "member" (of a double barrier) */
	int64		token;			/* fencing token: the node's czxid */
	int64		ctime_ms;		/* creation time, ms since the Unix epoch */
	int64		lease_expires_ms;	/* a lease (a TTL node): when its ttl
									 * runs out, ms since the Unix epoch, on
									 * the server's clock; else -1 */
	const char *data;			/* node data, NULL if none */
	int			datalen;
	bool		ttl_node;		/* a lease's node in a lock's queue: a TTL
								 * node, owned by no session */
} ZkClusterHolder;

/* One lock path with a queue, as the cluster scan found it. */
typedef struct ZkClusterLock
{
	const char *path;			/* lock path, "/a/b" (UTF-8) */
	const char *kind;			/* "lock", "semaphore" or "double barrier" */
	int			nholders;
	ZkClusterHolder *holders;	/* in queue (or lease) order */
	int			nwaiters;
	int64		oldest_wait_ms; /* creation time of the oldest waiting node,
								 * ms since the Unix epoch; -1: no waiter */
} ZkClusterLock;

/* Called once per lock path found; the data is valid during the call. */
typedef void (*ZkClusterLockCallback) (const ZkClusterLock *lock, void *arg);

/* One queue node that blocks a waiting backend. */
typedef struct ZkBlockerInfo
{
	char	   *path;			/* the lock path waited for */
	char	   *waiter_znode;	/* the waiter's node (child name) */
	char	   *znode;			/* the blocking node (child name) */
	const char *mode;			/* its mode: "exclusive", "shared", "lease" */
	bool		granted;		/* it holds the lock; else it waits ahead */
	char	   *data;			/* its data, NULL if none */
	int			datalen;
} ZkBlockerInfo;

/* One node of a lock's queue, for zk_lock_queue(). */
typedef struct ZkQueueEntry
{
	int			position;		/* 1-based */
	char	   *znode;			/* child name */
	ZkLockMode	mode;
	bool		granted;
	int64		token;			/* czxid, -1 if unknown */
	int64		ctime_ms;		/* creation time, ms since the Unix epoch */
	int64		lease_expires_ms;	/* a granted lease: when its ttl runs
									 * out (ms since the Unix epoch, the
									 * server's clock); else -1 */
	char	   *data;			/* node data, NULL if none */
	int			datalen;
} ZkQueueEntry;

/* cluster/locks.c */
extern void ZkClusterScan(const char *root, const char *prefix,
						  bool one_path, ZkClusterLockCallback cb,
						  void *arg);
/* cluster/blockers.c */
extern int	ZkClusterBlockers(const char *root, int pid,
							  ZkBlockerInfo **blockers);
/* cluster/queue.c */
extern int	ZkReadQueueHead(const char *lock_node, const char *lock_path,
							int max_rows, bool synced, ZkQueueEntry **entries);

#endif							/* CLUSTER_VIEW_H */
