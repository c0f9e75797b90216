/*-------------------------------------------------------------------------
 *
 * base/stats.h
 *		Cumulative statistics of every backend of the server, in shared
 *		memory (zklock in shared_preload_libraries).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BASE_STATS_H
#define BASE_STATS_H

#include "datatype/timestamp.h"

#include "base/vocabulary.h"

/* What was acquired: the counters are kept per kind, mode and scope. */
typedef enum ZkStatKind
{
	ZK_STAT_LOCK,				/* one path */
	ZK_STAT_LOCK_SET,			/* several paths at once */
	ZK_STAT_SEMAPHORE,
	ZK_STAT_DOUBLE_BARRIER
} ZkStatKind;

#define ZK_STAT_NKINDS	4
#define ZK_STAT_NMODES	4		/* ZkLockMode */
#define ZK_STAT_NSCOPES 3		/* ZkLockScope */

/* How an acquisition ended. */
typedef enum ZkStatOutcome
{
	ZK_STAT_GRANTED,
	ZK_STAT_REFUSED,			/* a try that did not get it */
	ZK_STAT_TIMEOUT,			/* lock_timeout (55P03) */
	ZK_STAT_CANCELED,			/* cancel or statement_timeout (57014) */
	ZK_STAT_DEADLOCK,			/* 40P01 */
	ZK_STAT_FAILED				/* any other error */
} ZkStatOutcome;

/* The plain counters (ZkStatCount). */
typedef enum ZkStatCounter
{
	ZK_STAT_SESSIONS_OPENED,
	ZK_STAT_SESSIONS_EXPIRED,
	ZK_STAT_LOCKS_LOST,
	ZK_STAT_RELEASES_FAILED,	/* releases given up */
	ZK_STAT_REVOCATIONS,		/* holders zk_revoke asked (or, with force,
								 * took) */
	ZK_STAT_NCOUNTERS
} ZkStatCounter;

/* The histograms: upper bounds of their buckets, in microseconds. */
#define ZK_STAT_NBUCKETS 16

extern void ZkStatRequestShmem(void);
extern bool ZkStatEnabled(void);
extern void ZkStatAcquisition(ZkStatKind kind, ZkLockMode mode,
							  ZkLockScope scope, ZkStatOutcome outcome,
							  bool waited, int64 wait_us);
extern void ZkStatCount(ZkStatCounter counter, int64 n);
extern void ZkStatRequest(int64 latency_us);
extern void ZkStatReleasesPending(int n);

/* Reading, for the SQL functions. */
typedef struct ZkStatAcquisitionRow
{
	ZkStatKind	kind;
	ZkLockMode	mode;
	ZkLockScope scope;
	int64		counts[6];		/* by ZkStatOutcome */
	int64		waits;
	int64		wait_us;
} ZkStatAcquisitionRow;

typedef struct ZkStatSnapshot
{
	int64		sessions_opened;
	int64		sessions_expired;
	int64		locks_lost;
	int64		requests;
	int64		request_us;
	int64		releases_failed;
	int64		releases_pending;
	int64		revocations;
	TimestampTz stats_reset;
	int64		wait_buckets[ZK_STAT_NBUCKETS];
	int64		request_buckets[ZK_STAT_NBUCKETS];
} ZkStatSnapshot;

extern const int64 ZkStatBucketBounds[ZK_STAT_NBUCKETS];
extern const char *ZkStatKindName(ZkStatKind kind);
extern int	ZkStatAcquisitionRows(ZkStatAcquisitionRow **rows);
extern void ZkStatRead(ZkStatSnapshot *snap);
extern void ZkStatReset(void);

#endif							/* BASE_STATS_H */
