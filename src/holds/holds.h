/*-------------------------------------------------------------------------
 *
 * holds/holds.h
 *		The holds layer as the SQL layer uses it: the backend's table of
 *		held ZooKeeper locks, taking, releasing, listing, the transaction
 *		callbacks, and the calls that hold nothing.
 *
 * The one header of this layer that the SQL layer includes.  The functions
 * live in the files of holds/, which share holds/internal.h among
 * themselves and call each other downward only, from the top:
 *
 *	acquire.c, unheld.c		taking locks; the calls that hold nothing
 *	commit.c, release.c		transaction end; releases
 *	lost.c					locks found lost; the session's hooks
 *	table.c					the table of held entries
 *	batch.c					the batch of released nodes; the memory context
 *
 *-------------------------------------------------------------------------
 */
#ifndef HOLDS_HOLDS_H
#define HOLDS_HOLDS_H

#include "access/xact.h"
#include "datatype/timestamp.h"

#include "client/client.h"
#include "cluster/view.h"
#include "base/vocabulary.h"

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
	bool		revoke_requested;	/* a revocation was asked of its node */
} ZkLockInfo;

extern bool ZkLockAcquire(const char *path, ZkLockMode mode,
						  ZkLockScope scope, int64 wait_ms, int64 *token,
						  bool upgrade);
extern bool ZkLockAcquireSet(const char *const *paths, int n, ZkLockMode mode,
							 ZkLockScope scope, int64 wait_ms, int64 *token);
extern bool ZkLockAcquirePermit(const char *path, int max_leases,
							   ZkLockScope scope, int64 wait_ms, int64 *token);
extern bool ZkLockRelease(const char *const *paths, int n, bool permit);
extern bool ZkLockReleaseMode(const char *path, ZkLockMode mode);
extern void ZkLockReleaseAll(const char *prefix);
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
extern bool ZkLockRevokeRequested(const char *path);
extern int	ZkLockRevoke(const char *path, bool force, char **holders);
extern void ZkLockReportExpiry(void);
extern bool ZkLockAbsorbLosses(void);
extern bool ZkLockDescribeLosses(bool cause, char **message, char **detail,
								 bool *session);
extern int	ZkLockReadQueue(const char *path, int max_rows, bool synced,
							ZkQueueEntry **entries);
extern void ZkLockClusterScan(const char *prefix, ZkClusterLockCallback cb,
							  void *arg);
extern int	ZkLockBlockers(int pid, ZkBlockerInfo **blockers);
extern void ZkLockSessionStatus(ZkSessionStatus *status);

/* transaction end: registered once, by _PG_init (holds/commit.c) */
extern void ZkLockXactCallback(XactEvent event, void *arg);
extern void ZkLockSubXactCallback(SubXactEvent event,
								  SubTransactionId mySubid,
								  SubTransactionId parentSubid, void *arg);

#endif							/* HOLDS_HOLDS_H */
