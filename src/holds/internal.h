/*-------------------------------------------------------------------------
 *
 * holds/internal.h
 *		What the lock table's own files share: the held entries, the memory
 *		context they live in, and what each file offers the others.
 *
 * Only the lock table's files (holds/batch.c, holds/table.c,
 * holds/lost.c, holds/release.c, holds/commit.c, holds/acquire.c,
 * holds/unheld.c) include this header; the SQL layer sees holds/holds.h
 * alone.  It names no recipe's header: a recipe's grant is passed as a
 * pointer to its struct.
 *
 *-------------------------------------------------------------------------
 */
#ifndef HOLDS_INTERNAL_H
#define HOLDS_INTERNAL_H

#include "access/xact.h"
#include "datatype/timestamp.h"
#include "lib/ilist.h"
#include "lib/stringinfo.h"
#include "utils/hsearch.h"

#include "base/operation_context.h"
#include "base/vocabulary.h"

struct ZkGrant;
struct ZkLeaseInfo;

/*
 * Hash key: the user's lock path and the mode.  The table hashes and
 * compares only the path's bytes up to its terminating zero, and the mode
 * (holds/table.c), so nothing after the zero matters.  Paths reach the
 * table validated (ZkCheckLockPath, base/paths.c), so no longer than
 * ZK_MAX_PATH_BYTES.
 */
typedef struct ZkLockKey
{
	char		path[ZK_MAX_PATH_BYTES + 1];
	ZkLockMode	mode;
} ZkLockKey;

/* transaction holds taken at one subtransaction nesting level */
typedef struct ZkXactHolds
{
	int			level;
	int			count;
} ZkXactHolds;

/*
 * One (path, mode) the backend holds: one node in ZooKeeper, however many
 * times it was taken.
 */
typedef struct ZkLockEntry
{
	ZkLockKey	key;			/* hash key, must be first */
	char	   *znode;			/* our queue node */
	int64		token;			/* fencing token (czxid) */
	int			session_holds;
	int			xact_holds;		/* sum of xact[].count */
	ZkXactHolds *xact;			/* by nesting level, ascending */
	int			nxact;
	int			maxxact;
	dlist_node	xact_link;		/* in the list of entries with
								 * transaction holds, while xact_holds > 0 */
	TimestampTz acquired_at;
	int64		waited_us;
	char	   *kept_znode;	/* our node in the other mode, kept for this
								 * one (holds/table.c) */
	int64		kept_token;		/* its fencing token */
	int			max_leases;		/* a permit: the semaphore's limit */
	bool		deleted;		/* znode is known to have been deleted */
} ZkLockEntry;

/*
 * What each file offers the others, from the bottom up: a file calls only
 * the files listed before it (test/check_layers.py fails on a call circle).
 */

/* holds/batch.c: the memory context, and the batch of released nodes */
extern MemoryContext ZkLockContext;

extern void ZkBatchRelease(char *znode);
extern void ZkFlushReleases(void);
extern void ZkReserveReleases(int nentries);
extern void ZkDropBatchedReleases(void);
extern bool ZkHasBatchedReleases(void);

/* holds/table.c: the table */
extern HTAB *ZkHeldLocks;

extern void ZkLockTableInit(void);
extern ZkLockEntry *ZkEntryLookup(const char *path, ZkLockMode mode);
extern ZkLockEntry *ZkEntryForZnode(const char *znode);
extern ZkLockEntry *ZkEntryEnter(const char *path, ZkLockMode mode,
								 const struct ZkGrant *grant,
								 ZkLockEntry *other, TimestampTz start);
extern ZkLockEntry *ZkEntryAdoptKept(const char *path, ZkLockMode mode,
									  ZkLockEntry *other);
extern void ZkEntryAddHold(ZkLockEntry *entry, ZkLockScope scope);
extern void ZkEntryDrop(ZkLockEntry *entry, bool delete_nodes);
extern bool ZkHoldsXactLocks(void);
extern void ZkReleaseXactHolds(int from_level);
extern void ZkPromoteXactHolds(int level);
extern void ZkCheckRoot(void);
extern void ZkCheckRoom(int more);
extern char *ZkLockNodePath(const char *path);
extern char *ZkDescribeHeld(const char *const *released, int n);

/*
 * holds/lost.c: locks found lost, the transaction that lost them, and the
 * session's hooks (ZkHoldsEnsureSession makes the table and sets them)
 */
extern void ZkHoldsEnsureSession(void);
extern void ZkRaiseLost(ZkLockEntry *entry, int nlost,
						ZkOperation oper) pg_attribute_noreturn();
extern void ZkReportExpiredLocks(int elevel, int nlocks);
extern void ZkReportReleasedLost(const char *const *paths, int n)
			pg_attribute_noreturn();
extern void ZkNoteReleasing(const char *const *paths, int n);
extern void ZkLocksLost(void);
extern void ZkNoteXactLostLocks(void);
extern void ZkCheckXactLostLocks(void);
extern void ZkForgetXactLostLocks(void);

/* holds/release.c: double barrier memberships ended at backend exit */
extern void ZkMembersAtExitRegister(void);

/* holds/commit.c: transaction end */
extern void ZkTouchLease(const char *path, const struct ZkLeaseInfo *info);
extern void ZkForgetTouchedLease(const char *path, int64 token);
extern void ZkUnwatchTouchedLease(const char *path, int64 token);

#endif							/* HOLDS_INTERNAL_H */
