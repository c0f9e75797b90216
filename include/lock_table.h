/*-------------------------------------------------------------------------
 *
 * lock_table.h
 *		The backend's table of held ZooKeeper locks, as the SQL layer uses
 *		it: taking, releasing, listing, and the calls that hold nothing.
 *
 * The one header of the lock table that zklock.c includes; the functions
 * live in src/lock_table.c and the lock_*.c files beside it, which share
 * lock_table_internal.h among themselves.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LOCK_TABLE_H
#define LOCK_TABLE_H

#include "access/xact.h"
#include "datatype/timestamp.h"

#include "cluster_view.h"
#include "lock_recipe.h"
#include "vocabulary.h"

/* One row of the zk_locks view. */
typedef struct ZkLockInfo
{
	char	   *path;
	ZkLockMode	mode;
	ZkLockScope scope;
	int			holds;
	char	   *znode;
	int64		token;
	TimestampTz acquired_at;
	int64		waited_us;
} ZkLockInfo;

extern bool ZkLockAcquire(const char *path, ZkLockMode mode,
						  ZkLockScope scope, int64 wait_ms, int64 *token);
extern bool ZkLockAcquireSet(const char *const *paths, int n, ZkLockMode mode,
							 ZkLockScope scope, int64 wait_ms, int64 *token);
extern bool ZkLockAcquireLease(const char *path, int max_leases,
							   ZkLockScope scope, int64 wait_ms, int64 *token);
extern bool ZkLockRelease(const char *path);
extern bool ZkLockReleaseLease(const char *path);
extern bool ZkLockReleaseSet(const char *const *paths, int n);
extern void ZkLockReleaseAll(void);
extern void ZkLockDiscardAll(void);
extern bool ZkLockBarrierSet(const char *path);
extern bool ZkLockBarrierRemove(const char *path);
extern bool ZkLockBarrierWait(const char *path, int64 wait_ms);
extern bool ZkLockDoubleBarrierEnter(const char *path, int members,
									 int64 wait_ms);
extern bool ZkLockDoubleBarrierLeave(const char *path, int64 wait_ms);
extern bool ZkLockLeaseAcquire(const char *path, int64 ttl_ms, int64 wait_ms,
							   int64 *token, int64 *expires_at);
extern int64 ZkLockLeaseRenew(const char *path, int64 token);
extern bool ZkLockLeaseRelease(const char *path, int64 token);
extern int	ZkLockCount(void);
extern int	ZkLockList(ZkLockInfo **rows);
extern void ZkLockReportExpiry(void);
extern int	ZkLockReadQueue(const char *path, int max_rows,
							ZkQueueEntry **entries);
extern void ZkLockClusterScan(const char *prefix, ZkClusterLockCallback cb,
							  void *arg);
extern int	ZkLockBlockers(int pid, ZkBlockerInfo **blockers);
extern void ZkLockSessionStatus(ZkSessionStatus *status);

/* transaction end: registered once, by _PG_init (lock_commit.c) */
extern void ZkLockXactCallback(XactEvent event, void *arg);
extern void ZkLockSubXactCallback(SubXactEvent event,
								  SubTransactionId mySubid,
								  SubTransactionId parentSubid, void *arg);

#endif							/* LOCK_TABLE_H */
