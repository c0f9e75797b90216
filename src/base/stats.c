/*-------------------------------------------------------------------------
 *
 * base/stats.c
 *		Cumulative statistics of every backend of the server, in the style
 *		of pg_stat_database: acquisitions and how they ended, waits and
 *		their durations, sessions, lost locks, ZooKeeper requests and their
 *		latency, releases.
 *
 * The counters live in shared memory, which an extension can only have
 * when it is loaded at server start: with zklock in
 * shared_preload_libraries.  Otherwise ZkStatEnabled() is false, counting
 * does nothing, and the SQL functions say so with an ERROR rather than
 * show zeros.
 *
 * Every counter is a 64-bit atomic that backends add to without a lock:
 * one atomic add costs a few nanoseconds, nothing beside a lock's
 * ZooKeeper round trips.  A reset writes zeros the same way; an increment
 * racing with it may survive it, as with pg_stat_reset_shared().
 *
 * The releases a backend has sent and ZooKeeper has not confirmed yet are
 * a gauge, not a counter: each backend publishes its own number in its
 * slot (indexed by its backend id) when it finishes a zklock call, and the
 * view sums the slots.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/backendid.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "base/stats.h"

/* upper bounds of the histograms' buckets, in microseconds */
const int64 ZkStatBucketBounds[ZK_STAT_NBUCKETS] = {
	100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000,
	250000, 500000, 1000000, 2500000, 10000000, PG_INT64_MAX
};

typedef struct ZkStatCounters
{
	pg_atomic_uint64 outcomes[6];	/* by ZkStatOutcome */
	pg_atomic_uint64 waits;		/* acquisitions that waited */
	pg_atomic_uint64 wait_us;	/* their total wait */
} ZkStatCounters;

typedef struct ZkStatShared
{
	ZkStatCounters acq[ZK_STAT_NKINDS][ZK_STAT_NMODES][ZK_STAT_NSCOPES];
	pg_atomic_uint64 counts[ZK_STAT_NCOUNTERS]; /* by ZkStatCounter */
	pg_atomic_uint64 requests;
	pg_atomic_uint64 request_us;
	pg_atomic_uint64 wait_buckets[ZK_STAT_NBUCKETS];
	pg_atomic_uint64 request_buckets[ZK_STAT_NBUCKETS];
	pg_atomic_uint64 stats_reset;	/* a TimestampTz */
	int			nslots;
	pg_atomic_uint32 pending[FLEXIBLE_ARRAY_MEMBER];	/* by backend id */
} ZkStatShared;

/* The combinations of kind, mode and scope that exist, in view order. */
typedef struct ZkStatCombo
{
	ZkStatKind	kind;
	ZkLockMode	mode;
	ZkLockScope scope;
} ZkStatCombo;

static const ZkStatCombo zk_stat_combos[] = {
	{ZK_STAT_LOCK, ZK_MODE_EXCLUSIVE, ZK_SCOPE_SESSION},
	{ZK_STAT_LOCK, ZK_MODE_EXCLUSIVE, ZK_SCOPE_TRANSACTION},
	{ZK_STAT_LOCK, ZK_MODE_EXCLUSIVE, ZK_SCOPE_LEASE},
	{ZK_STAT_LOCK, ZK_MODE_SHARED, ZK_SCOPE_SESSION},
	{ZK_STAT_LOCK, ZK_MODE_SHARED, ZK_SCOPE_TRANSACTION},
	{ZK_STAT_LOCK_SET, ZK_MODE_EXCLUSIVE, ZK_SCOPE_SESSION},
	{ZK_STAT_LOCK_SET, ZK_MODE_EXCLUSIVE, ZK_SCOPE_TRANSACTION},
	{ZK_STAT_LOCK_SET, ZK_MODE_SHARED, ZK_SCOPE_SESSION},
	{ZK_STAT_LOCK_SET, ZK_MODE_SHARED, ZK_SCOPE_TRANSACTION},
	{ZK_STAT_SEMAPHORE, ZK_MODE_PERMIT, ZK_SCOPE_SESSION},
	{ZK_STAT_SEMAPHORE, ZK_MODE_PERMIT, ZK_SCOPE_TRANSACTION},
	{ZK_STAT_DOUBLE_BARRIER, ZK_MODE_MEMBER, ZK_SCOPE_SESSION},
};

static ZkStatShared *zk_stat = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static int	zk_stat_published_pending = 0;

static Size zk_stat_size(void);
static void zk_stat_shmem_request(void);
static void zk_stat_shmem_startup(void);
static void zk_stat_bucket_add(pg_atomic_uint64 *buckets, int64 us);

static Size
zk_stat_size(void)
{
	return add_size(offsetof(ZkStatShared, pending),
					mul_size(sizeof(pg_atomic_uint32), MaxBackends + 1));
}

/*
 * ZkStatRequestShmem
 *		From _PG_init: ask for the shared memory, if zklock is being loaded
 *		at server start (shared_preload_libraries); else do nothing.
 */
void
ZkStatRequestShmem(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = zk_stat_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = zk_stat_shmem_startup;
}

static void
zk_stat_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(zk_stat_size());
}

/*
 * zk_stat_shmem_startup
 *		Create (in the postmaster) or attach to the counters.
 */
static void
zk_stat_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	zk_stat = ShmemInitStruct("zklock statistics", zk_stat_size(), &found);
	if (!found)
	{
		pg_atomic_uint64 *c = (pg_atomic_uint64 *) zk_stat;

		/* every field before the slots is a pg_atomic_uint64 but nslots */
		for (Size i = 0; i < offsetof(ZkStatShared, nslots) / sizeof(pg_atomic_uint64); i++)
			pg_atomic_init_u64(&c[i], 0);
		zk_stat->nslots = MaxBackends + 1;
		for (int i = 0; i < zk_stat->nslots; i++)
			pg_atomic_init_u32(&zk_stat->pending[i], 0);
		pg_atomic_write_u64(&zk_stat->stats_reset,
							(uint64) GetCurrentTimestamp());
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * ZkStatEnabled
 *		Are the statistics kept (zklock preloaded)?
 */
bool
ZkStatEnabled(void)
{
	return zk_stat != NULL;
}

static void
zk_stat_bucket_add(pg_atomic_uint64 *buckets, int64 us)
{
	int			i = 0;

	while (i < ZK_STAT_NBUCKETS - 1 && us > ZkStatBucketBounds[i])
		i++;
	pg_atomic_fetch_add_u64(&buckets[i], 1);
}

/*
 * ZkStatAcquisition
 *		Count an acquisition and how it ended; 'waited' if it had to wait
 *		for another holder, wait_us how long the call took then.
 */
void
ZkStatAcquisition(ZkStatKind kind, ZkLockMode mode, ZkLockScope scope,
				  ZkStatOutcome outcome, bool waited, int64 wait_us)
{
	ZkStatCounters *c;

	if (zk_stat == NULL)
		return;
	c = &zk_stat->acq[kind][mode][scope];
	pg_atomic_fetch_add_u64(&c->outcomes[outcome], 1);
	if (waited)
	{
		wait_us = Max(wait_us, 0);
		pg_atomic_fetch_add_u64(&c->waits, 1);
		pg_atomic_fetch_add_u64(&c->wait_us, (uint64) wait_us);
		zk_stat_bucket_add(zk_stat->wait_buckets, wait_us);
	}
}

/*
 * ZkStatCount
 *		Add n (if positive) to a plain counter.
 */
void
ZkStatCount(ZkStatCounter counter, int64 n)
{
	if (zk_stat != NULL && n > 0)
		pg_atomic_fetch_add_u64(&zk_stat->counts[counter], (uint64) n);
}

/*
 * ZkStatRequest
 *		A ZooKeeper request the backend waited for was answered after
 *		latency_us.
 */
void
ZkStatRequest(int64 latency_us)
{
	if (zk_stat == NULL)
		return;
	latency_us = Max(latency_us, 0);
	pg_atomic_fetch_add_u64(&zk_stat->requests, 1);
	pg_atomic_fetch_add_u64(&zk_stat->request_us, (uint64) latency_us);
	zk_stat_bucket_add(zk_stat->request_buckets, latency_us);
}

/*
 * ZkStatReleasesPending
 *		Publish this backend's number of releases not yet confirmed.
 */
void
ZkStatReleasesPending(int n)
{
	if (zk_stat == NULL || n == zk_stat_published_pending ||
		MyBackendId <= 0 || MyBackendId >= zk_stat->nslots)
		return;
	pg_atomic_write_u32(&zk_stat->pending[MyBackendId], (uint32) Max(n, 0));
	zk_stat_published_pending = n;
}

const char *
ZkStatKindName(ZkStatKind kind)
{
	switch (kind)
	{
		case ZK_STAT_LOCK:
			return "lock";
		case ZK_STAT_LOCK_SET:
			return "lock set";
		case ZK_STAT_SEMAPHORE:
			return "semaphore";
		case ZK_STAT_DOUBLE_BARRIER:
			return "double barrier";
	}
	return "?";
}

/*
 * ZkStatAcquisitionRows
 *		One row per kind, mode and scope that exists.
 */
int
ZkStatAcquisitionRows(ZkStatAcquisitionRow **rows)
{
	int			n = lengthof(zk_stat_combos);

	Assert(zk_stat != NULL);
	*rows = palloc0(sizeof(ZkStatAcquisitionRow) * n);
	for (int i = 0; i < n; i++)
	{
		const ZkStatCombo *k = &zk_stat_combos[i];
		ZkStatCounters *c = &zk_stat->acq[k->kind][k->mode][k->scope];
		ZkStatAcquisitionRow *r = &(*rows)[i];

		r->kind = k->kind;
		r->mode = k->mode;
		r->scope = k->scope;
		for (int o = 0; o < 6; o++)
			r->counts[o] = (int64) pg_atomic_read_u64(&c->outcomes[o]);
		r->waits = (int64) pg_atomic_read_u64(&c->waits);
		r->wait_us = (int64) pg_atomic_read_u64(&c->wait_us);
	}
	return n;
}

/*
 * ZkStatRead
 *		The server-wide counters, histograms and gauge.
 */
void
ZkStatRead(ZkStatSnapshot *snap)
{
	Assert(zk_stat != NULL);
	memset(snap, 0, sizeof(*snap));
	snap->sessions_opened = (int64) pg_atomic_read_u64(&zk_stat->counts[ZK_STAT_SESSIONS_OPENED]);
	snap->sessions_expired = (int64) pg_atomic_read_u64(&zk_stat->counts[ZK_STAT_SESSIONS_EXPIRED]);
	snap->locks_lost = (int64) pg_atomic_read_u64(&zk_stat->counts[ZK_STAT_LOCKS_LOST]);
	snap->requests = (int64) pg_atomic_read_u64(&zk_stat->requests);
	snap->request_us = (int64) pg_atomic_read_u64(&zk_stat->request_us);
	snap->releases_failed = (int64) pg_atomic_read_u64(&zk_stat->counts[ZK_STAT_RELEASES_FAILED]);
	snap->revocations = (int64) pg_atomic_read_u64(&zk_stat->counts[ZK_STAT_REVOCATIONS]);
	for (int i = 0; i < zk_stat->nslots; i++)
		snap->releases_pending += pg_atomic_read_u32(&zk_stat->pending[i]);
	for (int i = 0; i < ZK_STAT_NBUCKETS; i++)
	{
		snap->wait_buckets[i] = (int64) pg_atomic_read_u64(&zk_stat->wait_buckets[i]);
		snap->request_buckets[i] = (int64) pg_atomic_read_u64(&zk_stat->request_buckets[i]);
	}
	snap->stats_reset = (TimestampTz) pg_atomic_read_u64(&zk_stat->stats_reset);
}

/*
 * ZkStatReset
 *		Zero every counter and histogram (not the pending gauge, which is
 *		not a count) and set stats_reset.
 */
void
ZkStatReset(void)
{
	pg_atomic_uint64 *c = (pg_atomic_uint64 *) zk_stat;

	Assert(zk_stat != NULL);
	for (Size i = 0; i < offsetof(ZkStatShared, stats_reset) / sizeof(pg_atomic_uint64); i++)
		pg_atomic_write_u64(&c[i], 0);
	pg_atomic_write_u64(&zk_stat->stats_reset, (uint64) GetCurrentTimestamp());
}
