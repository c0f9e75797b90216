/*-------------------------------------------------------------------------
 *
 * sql/functions.c
 *		SQL functions that take, release and wait: locks, lock sets,
 *		semaphore permits, leases and barriers.
 *
 * This file turns SQL arguments into calls on the lock table
 * (holds/table.c) and the results back into SQL values.  The lock table is
 * the only layer below it that it calls.  Besides, it uses helpers that
 * never talk to ZooKeeper: sql/arguments.c for the arguments the SQL
 * functions share, base/paths.c to validate a lock path, and the modes,
 * scopes and limits of base/vocabulary.h.  It knows nothing of ZooKeeper: the
 * recipes lie below the lock table, and the session below them
 * (client/session.c).  The functions that show locks are in sql/views.c; the
 * settings and the loading of the library in sql/settings.c.
 *
 * As PostgreSQL's advisory lock functions (lockfuncs.c) do, every entry
 * point is a thin wrapper that names what it does (mode, scope, whether it
 * only tries) over one body per family: acquire() for locks, lock sets
 * and semaphore permits, lease_lock() for leases.  A "try" form waits at
 * most its optional wait_ms argument (default 0) and returns whether it
 * got the lock; the other form waits as long as needed (bounded by
 * lock_timeout) and returns the fencing token.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/int.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "base/paths.h"
#include "holds/holds.h"
#include "sql/arguments.h"
#include "base/vocabulary.h"

PG_FUNCTION_INFO_V1(zk_lock);
PG_FUNCTION_INFO_V1(zk_rlock);
PG_FUNCTION_INFO_V1(zk_try_lock);
PG_FUNCTION_INFO_V1(zk_try_rlock);
PG_FUNCTION_INFO_V1(zk_xact_lock);
PG_FUNCTION_INFO_V1(zk_xact_rlock);
PG_FUNCTION_INFO_V1(zk_try_xact_lock);
PG_FUNCTION_INFO_V1(zk_try_xact_rlock);
PG_FUNCTION_INFO_V1(zk_unlock);
PG_FUNCTION_INFO_V1(zk_unlock_all);
PG_FUNCTION_INFO_V1(zk_lock_array);
PG_FUNCTION_INFO_V1(zk_rlock_array);
PG_FUNCTION_INFO_V1(zk_try_lock_array);
PG_FUNCTION_INFO_V1(zk_try_rlock_array);
PG_FUNCTION_INFO_V1(zk_xact_lock_array);
PG_FUNCTION_INFO_V1(zk_xact_rlock_array);
PG_FUNCTION_INFO_V1(zk_try_xact_lock_array);
PG_FUNCTION_INFO_V1(zk_try_xact_rlock_array);
PG_FUNCTION_INFO_V1(zk_unlock_array);
PG_FUNCTION_INFO_V1(zk_semaphore_acquire);
PG_FUNCTION_INFO_V1(zk_try_semaphore_acquire);
PG_FUNCTION_INFO_V1(zk_xact_semaphore_acquire);
PG_FUNCTION_INFO_V1(zk_try_xact_semaphore_acquire);
PG_FUNCTION_INFO_V1(zk_semaphore_release);
PG_FUNCTION_INFO_V1(zk_lease_lock);
PG_FUNCTION_INFO_V1(zk_try_lease_lock);
PG_FUNCTION_INFO_V1(zk_lease_renew);
PG_FUNCTION_INFO_V1(zk_lease_unlock);
PG_FUNCTION_INFO_V1(zk_barrier_set);
PG_FUNCTION_INFO_V1(zk_barrier_remove);
PG_FUNCTION_INFO_V1(zk_barrier_wait);
PG_FUNCTION_INFO_V1(zk_double_barrier_enter);
PG_FUNCTION_INFO_V1(zk_double_barrier_leave);

/* What an acquiring function takes before its optional wait_ms. */
typedef enum AcquireTarget
{
	ONE_PATH,					/* (path text) */
	PATH_SET,					/* (paths text[]): all or none */
	SEMAPHORE					/* (path text, max_leases int): one lease */
} AcquireTarget;

static int64 wait_ms_arg(FunctionCallInfo fcinfo, int argno, int64 absent);
static int	path_array(ArrayType *array, const char ***paths);
static Datum acquire(FunctionCallInfo fcinfo, AcquireTarget target,
					 ZkLockMode mode, ZkLockScope scope, bool try_only);
static bool release_path(FunctionCallInfo fcinfo, bool permit);
static void require_args(FunctionCallInfo fcinfo);
static int64 ttl_ms_arg(FunctionCallInfo fcinfo, int argno);
static char *lease_args(FunctionCallInfo fcinfo, int64 *token);
static Datum lease_lock(FunctionCallInfo fcinfo, bool try_only);

/* ------------------------------------------------------------------------
 * Arguments.
 * ------------------------------------------------------------------------
 */

/*
 * wait_ms_arg
 *		An optional wait_ms argument: 'absent' if the call has none; 22023
 *		if negative.
 */
static int64
wait_ms_arg(FunctionCallInfo fcinfo, int argno, int64 absent)
{
	if (PG_NARGS() <= argno)
		return absent;
	return ZkNonNegativeArg(fcinfo, argno, "wait_ms");
}

/*
 * path_array
 *		The lock paths of a text[] argument, each validated.  An empty
 *		array is 22023, a NULL element 22004, more than ZK_MAX_SET_LOCKS
 *		elements 53400.  Returns the number of paths.
 */
static int
path_array(ArrayType *array, const char ***paths)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	deconstruct_array(array, TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &nulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("array of ZooKeeper lock paths must not be empty")));
	if (n > ZK_MAX_SET_LOCKS)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many ZooKeeper lock paths in one call"),
				 errdetail("%d paths were given; at most %d can be taken or released at once.",
						   n, ZK_MAX_SET_LOCKS),
				 errhint("Split the set, or take the locks one by one.")));
	*paths = palloc(sizeof(char *) * n);
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("array of ZooKeeper lock paths must not contain nulls")));
		(*paths)[i] = ZkCheckLockPath(TextDatumGetCString(elems[i]));
	}
	return n;
}

/* ------------------------------------------------------------------------
 * Locks, lock sets and semaphore permits.
 * ------------------------------------------------------------------------
 */

/*
 * acquire
 *		The body of every function that takes a lock on a path, a lock set
 *		or a semaphore permit (mode is ZK_MODE_PERMIT for a semaphore, and
 *		not passed on).  Without try_only: wait as long as needed and
 *		return the token (bigint).  With try_only: wait at most the wait_ms
 *		argument that follows the target's (default 0) and return whether
 *		it was granted (boolean).
 */
static Datum
acquire(FunctionCallInfo fcinfo, AcquireTarget target, ZkLockMode mode,
		ZkLockScope scope, bool try_only)
{
	const char **paths = NULL;
	char	   *path = NULL;
	int			n = 0;
	int32		max_leases = 0;
	int64		wait_ms;
	int64		token = 0;
	bool		granted = false;

	/* the target's arguments are checked before wait_ms */
	if (target == PATH_SET)
		n = path_array(PG_GETARG_ARRAYTYPE_P(0), &paths);
	else
		path = ZkPathArg(fcinfo, 0);
	if (target == SEMAPHORE)
		max_leases = PG_GETARG_INT32(1);
	if (try_only)
		wait_ms = wait_ms_arg(fcinfo, target == SEMAPHORE ? 2 : 1, 0);
	else
		wait_ms = -1;

	switch (target)
	{
		case ONE_PATH:
			granted = ZkLockAcquire(path, mode, scope, wait_ms, &token, false);
			break;
		case PATH_SET:
			granted = ZkLockAcquireSet(paths, n, mode, scope, wait_ms, &token);
			break;
		case SEMAPHORE:
			granted = ZkLockAcquirePermit(path, max_leases, scope, wait_ms,
										 &token);
			break;
	}
	if (try_only)
		PG_RETURN_BOOL(granted);
	PG_RETURN_INT64(token);
}

Datum
zk_lock(PG_FUNCTION_ARGS)
{
	return acquire(fcinfo, ONE_PATH, ZK_MODE_EXCLUSIVE,
				   ZK_SCOPE_SESSION, false);
}

Datum
zk_rlock(PG_FUNCTION_ARGS)
{
	return acquire(fcinfo, ONE_PATH, ZK_MODE_SHARED,
				   ZK_SCOPE_SESSION, false);
}

Datum
zk_try_lock(PG_FUNCTION_ARGS)
{
	return acquire(fcinfo, ONE_PATH, ZK_MODE_EXCLUSIVE,
				   ZK_SCOPE_SESSION, true);
}

Datum
zk_try_rlock(PG_FUNCTION_ARGS)
{
	return acquire(fcinfo, ONE_PATH, ZK_MODE_SHARED,
				   ZK_SCOPE_SESSION, true);
}

Datum
zk_xact_lock(PG_FUNCTION_ARGS)
{
	return acquire(fcinfo, ONE_PATH, ZK_MODE_EXCLUSIVE,
				   ZK_SCOPE_TRANSACTION, false);
}

Datum
zk_xact_rlock(PG_FUNCTION_ARGS)
{
	return acquire(fcinfo, ONE_PATH, ZK_MODE_SHARED,
				   ZK_SCOPE_TRANSACTION, false);
}

Datum
zk_try_xact_lock(PG_FUNCTION_ARGS)
{
	return acquire(fcinfo, ONE_PATH, ZK_MODE_EXCLUSIVE,
				   ZK_SCOPE_TRANSACTION, true);
}

Datum
zk_try_xact_rlock(PG_FUNCTION_ARGS)
{
	return acquire(fcinfo, ONE_PATH, ZK_MODE_SHARED,
				   ZK_SCOPE_TRANSACTION, true);
}

Datum
zk_lock_array(PG_FUNCTION_ARGS)
{
	return acquire(fcinfo, PATH_SET, ZK_MODE_EXCLUSIVE,
				   ZK_SCOPE_SESSION, false);
}

Datum
zk_rlock_array(PG_FUNCTION_ARGS)
{
	return acquire(fcinfo, PATH_SET, ZK_MODE_SHARED,
				   ZK_SCOPE_SESSION, false);
}

Datum
zk_try_lock_array(PG_FUNCTION_ARGS)
{
	return acquire(fcinfo, PATH_SET, ZK_MODE_EXCLUSIVE,
				   ZK_SCOPE_SESSION, true);
}

Datum
zk_try_rlock_array(PG_FUNCTION_ARGS)
{
	return acquire(fcinfo, PATH_SET, ZK_MODE_SHARED,
				   ZK_SCOPE_SESSION, true);
}

Datum
zk_xact_lock_array(PG_FUNCTION_ARGS)
{
	return acquire(fcinfo, PATH_SET, ZK_MODE_EXCLUSIVE,
				   ZK_SCOPE_TRANSACTION, false);
}

Datum
zk_xact_rlock_array(PG_FUNCTION_ARGS)
{
	return acquire(fcinfo, PATH_SET, ZK_MODE_SHARED,
				   ZK_SCOPE_TRANSACTION, false);
}

Datum
zk_try_xact_lock_array(PG_FUNCTION_ARGS)
{
	return acquire(fcinfo, PATH_SET, ZK_MODE_EXCLUSIVE,
				   ZK_SCOPE_TRANSACTION, true);
}

Datum
zk_try_xact_rlock_array(PG_FUNCTION_ARGS)
{
	return acquire(fcinfo, PATH_SET, ZK_MODE_SHARED,
				   ZK_SCOPE_TRANSACTION, true);
}

Datum
zk_semaphore_acquire(PG_FUNCTION_ARGS)
{
	return acquire(fcinfo, SEMAPHORE, ZK_MODE_PERMIT,
				   ZK_SCOPE_SESSION, false);
}

Datum
zk_try_semaphore_acquire(PG_FUNCTION_ARGS)
{
	return acquire(fcinfo, SEMAPHORE, ZK_MODE_PERMIT,
				   ZK_SCOPE_SESSION, true);
}

Datum
zk_xact_semaphore_acquire(PG_FUNCTION_ARGS)
{
	return acquire(fcinfo, SEMAPHORE, ZK_MODE_PERMIT,
				   ZK_SCOPE_TRANSACTION, false);
}

Datum
zk_try_xact_semaphore_acquire(PG_FUNCTION_ARGS)
{
	return acquire(fcinfo, SEMAPHORE, ZK_MODE_PERMIT,
				   ZK_SCOPE_TRANSACTION, true);
}

/*
 * release_path
 *		Release one session hold on the path argument: of the semaphore's
 *		permit there if 'permit'.
 */
static bool
release_path(FunctionCallInfo fcinfo, bool permit)
{
	const char *path = ZkPathArg(fcinfo, 0);

	return ZkLockRelease(&path, 1, permit);
}

/*
 * zk_unlock
 *		Release one session hold on a path.
 */
Datum
zk_unlock(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(release_path(fcinfo, false));
}

/*
 * zk_unlock_array
 *		Release one session hold on each path of the array.
 */
Datum
zk_unlock_array(PG_FUNCTION_ARGS)
{
	const char **paths;
	int			n = path_array(PG_GETARG_ARRAYTYPE_P(0), &paths);

	PG_RETURN_BOOL(ZkLockRelease(paths, n, false));
}

/*
 * zk_semaphore_release
 *		Release one session hold of a semaphore's permit.
 */
Datum
zk_semaphore_release(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(release_path(fcinfo, true));
}

/*
 * zk_unlock_all
 *		Release every session hold of this backend.
 */
Datum
zk_unlock_all(PG_FUNCTION_ARGS)
{
	ZkLockReleaseAll(NULL);
	PG_RETURN_VOID();
}

/* ------------------------------------------------------------------------
 * Leases: locks held by a node with a ttl, which outlive the backend.
 * ------------------------------------------------------------------------
 */

/*
 * require_args
 *		The lease functions are not strict, so that a NULL argument is an
 *		ERROR (22004) instead of a silent NULL: zk_try_lease_lock's NULL
 *		means "not granted".
 */
static void
require_args(FunctionCallInfo fcinfo)
{
	for (int i = 0; i < PG_NARGS(); i++)
	{
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("arguments of %s must not be null",
							get_func_name(fcinfo->flinfo->fn_oid))));
	}
}

/*
 * ttl_ms_arg
 *		A lease's ttl argument in ms, rounded up.  An interval counts as
 *		EXTRACT(epoch FROM ...) counts it (a month is 30 days, a day 24
 *		hours).  It must be positive (22023) and at most ZooKeeper's
 *		largest TTL (22008).
 */
static int64
ttl_ms_arg(FunctionCallInfo fcinfo, int argno)
{
	Interval   *iv = PG_GETARG_INTERVAL_P(argno);
	int64		us = iv->time;
	int64		part;
	int64		ms;

	if (!pg_mul_s64_overflow((int64) iv->day, USECS_PER_DAY, &part) &&
		!pg_add_s64_overflow(us, part, &us) &&
		!pg_mul_s64_overflow((int64) iv->month,
							 (int64) DAYS_PER_MONTH * USECS_PER_DAY, &part) &&
		!pg_add_s64_overflow(us, part, &us))
	{
		if (us <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("ttl of a ZooKeeper lease must be positive")));
		ms = us / 1000 + (us % 1000 != 0 ? 1 : 0);
		if (ms <= ZK_MAX_TTL_MS)
			return ms;
	}
	ereport(ERROR,
			(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
			 errmsg("ttl of a ZooKeeper lease is out of range"),
			 errdetail("ZooKeeper accepts a ttl of at most %lld ms (about 34 years).",
					   (long long) ZK_MAX_TTL_MS)));
	return 0;					/* keep compiler quiet */
}

/*
 * lease_args
 *		The (path, token) arguments of zk_lease_renew and zk_lease_unlock:
 *		none NULL, the path valid, the token a ZooKeeper zxid, always
 *		positive (22023 otherwise).
 */
static char *
lease_args(FunctionCallInfo fcinfo, int64 *token)
{
	char	   *path;

	require_args(fcinfo);
	path = ZkPathArg(fcinfo, 0);
	*token = PG_GETARG_INT64(1);
	if (*token <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%lld is not a ZooKeeper lease token", (long long) *token),
				 errdetail("A lease token is the positive fencing token that zk_lease_lock returned.")));
	return path;
}

/*
 * lease_lock
 *		The body of zk_lease_lock and zk_try_lease_lock: take a lease on a
 *		path for ttl and return the fencing token, which names the lease.
 *		Without try_only, wait like zk_lock; with it, wait at most wait_ms
 *		(default 0) and return NULL, leaving nothing behind, if not granted.
 */
static Datum
lease_lock(FunctionCallInfo fcinfo, bool try_only)
{
	char	   *path;
	int64		ttl_ms;
	int64		wait_ms;
	int64		token = 0;
	int64		expires_at;
	bool		granted;

	require_args(fcinfo);
	path = ZkPathArg(fcinfo, 0);
	ttl_ms = ttl_ms_arg(fcinfo, 1);
	wait_ms = try_only ? wait_ms_arg(fcinfo, 2, 0) : -1;
	granted = ZkLockLeaseAcquire(path, ttl_ms, wait_ms, &token, &expires_at);
	if (try_only && !granted)
		PG_RETURN_NULL();
	PG_RETURN_INT64(token);
}

Datum
zk_lease_lock(PG_FUNCTION_ARGS)
{
	return lease_lock(fcinfo, false);
}

Datum
zk_try_lease_lock(PG_FUNCTION_ARGS)
{
	return lease_lock(fcinfo, true);
}

/*
 * zk_lease_renew
 *		Renew a lease from any backend: its ttl runs again from now.
 *		Returns the new expiry, on the ZooKeeper leader's clock.
 */
Datum
zk_lease_renew(PG_FUNCTION_ARGS)
{
	int64		token;
	char	   *path = lease_args(fcinfo, &token);

	PG_RETURN_TIMESTAMPTZ(ZkUnixMsToTimestampTz(ZkLockLeaseRenew(path, token)));
}

/*
 * zk_lease_unlock
 *		Release a lease from any backend; false and a WARNING if that lease
 *		does not hold the lock.
 */
Datum
zk_lease_unlock(PG_FUNCTION_ARGS)
{
	int64		token;
	char	   *path = lease_args(fcinfo, &token);

	PG_RETURN_BOOL(ZkLockLeaseRelease(path, token));
}

/* ------------------------------------------------------------------------
 * Barriers and double barriers.  Without wait_ms, a wait lasts as long as
 * needed.
 * ------------------------------------------------------------------------
 */

/*
 * zk_barrier_set
 *		Raise the barrier at path: true if this call raised it.
 */
Datum
zk_barrier_set(PG_FUNCTION_ARGS)
{
	char	   *path = ZkPathArg(fcinfo, 0);

	PG_RETURN_BOOL(ZkLockBarrierSet(path));
}

/*
 * zk_barrier_remove
 *		Remove the barrier at path: true if this call removed it.
 */
Datum
zk_barrier_remove(PG_FUNCTION_ARGS)
{
	char	   *path = ZkPathArg(fcinfo, 0);

	PG_RETURN_BOOL(ZkLockBarrierRemove(path));
}

/*
 * zk_barrier_wait
 *		Wait until the barrier at path is down: true once it is, false
 *		after wait_ms.
 */
Datum
zk_barrier_wait(PG_FUNCTION_ARGS)
{
	char	   *path = ZkPathArg(fcinfo, 0);

	PG_RETURN_BOOL(ZkLockBarrierWait(path, wait_ms_arg(fcinfo, 1, -1)));
}

/*
 * zk_double_barrier_enter
 *		Enter the double barrier at path as one of `members': true once
 *		they have all entered, false after wait_ms (and then this backend
 *		is no member).
 */
Datum
zk_double_barrier_enter(PG_FUNCTION_ARGS)
{
	char	   *path = ZkPathArg(fcinfo, 0);
	int32		members = PG_GETARG_INT32(1);
	int64		wait_ms = wait_ms_arg(fcinfo, 2, -1);

	if (members < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("members must be at least 1, not %d", members)));
	PG_RETURN_BOOL(ZkLockDoubleBarrierEnter(path, members, wait_ms));
}

/*
 * zk_double_barrier_leave
 *		Leave the double barrier at path: true once every member has left,
 *		false after wait_ms; WARNING and false if this backend is no member.
 */
Datum
zk_double_barrier_leave(PG_FUNCTION_ARGS)
{
	char	   *path = ZkPathArg(fcinfo, 0);

	PG_RETURN_BOOL(ZkLockDoubleBarrierLeave(path, wait_ms_arg(fcinfo, 1, -1)));
}
