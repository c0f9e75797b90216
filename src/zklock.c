/*-------------------------------------------------------------------------
 *
 * zklock.c
 *		SQL entry points and settings of zklock: cluster-wide advisory
 *		locks backed by Apache ZooKeeper.
 *
 * This file turns SQL arguments into calls on the lock table
 * (lock_table.c), the only layer below it that it calls, and the results
 * back into SQL values.  It knows nothing of ZooKeeper: the session lives
 * in zk_session.c and the recipe in lock_recipe.c.
 *
 * Loading the library (even through shared_preload_libraries, in the
 * postmaster) only defines the settings: no thread is started and no
 * connection made before a backend's first zklock call.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "catalog/pg_type.h"
#include "common/int.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "discard.h"
#include "lock_path.h"
#include "lock_table.h"
#include "node_data.h"
#include "stats.h"
#include "text_encoding.h"
#include "vocabulary.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

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
PG_FUNCTION_INFO_V1(zk_locks);
PG_FUNCTION_INFO_V1(zk_lock_queue);
PG_FUNCTION_INFO_V1(zk_session);

static const struct config_enum_entry node_style_options[] = {
	{"rwlock", ZK_STYLE_RWLOCK, false},
	{"mutex", ZK_STYLE_MUTEX, false},
	{"latch", ZK_STYLE_LATCH, false},
	{NULL, 0, false}
};

static bool check_locks_not_held(const char *name, bool changed);
static bool check_zklock_hosts(char **newval, void **extra, GucSource source);
static bool check_zklock_root(char **newval, void **extra, GucSource source);
static bool check_zklock_auth_file(char **newval, void **extra,
								   GucSource source);
static bool check_zklock_session_timeout(int *newval, void **extra,
										 GucSource source);
static int64 lock_blocking(FunctionCallInfo fcinfo, ZkLockMode mode,
						   ZkLockScope scope);
static bool lock_try(FunctionCallInfo fcinfo, ZkLockMode mode,
					 ZkLockScope scope);
static int	path_array(ArrayType *array, const char ***paths);
static int64 lock_set_blocking(FunctionCallInfo fcinfo, ZkLockMode mode,
							   ZkLockScope scope);
static bool lock_set_try(FunctionCallInfo fcinfo, ZkLockMode mode,
						 ZkLockScope scope);
static int64 lease_blocking(FunctionCallInfo fcinfo, ZkLockScope scope);
static bool lease_try(FunctionCallInfo fcinfo, ZkLockScope scope);
static void require_args(FunctionCallInfo fcinfo);
static int64 ttl_ms_arg(FunctionCallInfo fcinfo, int argno);
static int64 token_arg(FunctionCallInfo fcinfo, int argno);
static int64 wait_ms_arg(FunctionCallInfo fcinfo, int argno);
static TimestampTz unix_ms_to_timestamptz(int64 ms);
static Interval *us_to_interval(int64 us);
static Datum zk_text_datum(const char *utf8);
static int	queue_max_rows(int32 max_rows);
static void set_owner_columns(Datum *values, bool *nulls, int k,
							  const char *data, int datalen);
static void cluster_locks_row(const ZkClusterLock *lock, void *arg);

/*
 * check_locks_not_held
 *		The settings that choose the session (and the root) cannot change
 *		while this backend holds locks.
 */
static bool
check_locks_not_held(const char *name, bool changed)
{
	if (changed && ZkLockCount() > 0)
	{
		GUC_check_errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE);
		GUC_check_errdetail("%s cannot be changed while this backend holds ZooKeeper locks.",
							name);
		GUC_check_errhint("Release them first: zk_unlock_all() releases session locks, COMMIT or ROLLBACK transaction locks; zk_locks lists what is held.");
		return false;
	}
	return true;
}

/*
 * host_list_problem
 *		Why a zklock.hosts value is not a list of host:port pairs, as a
 *		DETAIL sentence, or NULL if it is one.  Only the form is checked
 *		here; whether the hosts resolve is known when a session opens.  A
 *		ZooKeeper "chroot" suffix is refused: zklock.root does that job,
 *		and the client would wait forever for a chroot that does not exist.
 */
static const char *
host_list_problem(const char *hosts)
{
	const char *p = hosts;

	if (hosts[0] == '\0')
		return "zklock.hosts must name at least one host:port.";
	if (strchr(hosts, '/') != NULL)
		return "zklock.hosts must not name a chroot path; set zklock.root instead.";
	for (;;)
	{
		size_t		len = strcspn(p, ",");
		char	   *item = pnstrdup(p, len);
		char	   *colon = strrchr(item, ':');
		char	   *end;
		long		port;

		if (len == 0)
			return "zklock.hosts contains an empty entry.";
		if (colon == NULL || colon == item ||
			strpbrk(item, " \t\r\n") != NULL)
			return psprintf("\"%s\" is not of the form host:port.", item);
		errno = 0;
		port = strtol(colon + 1, &end, 10);
		if (colon[1] == '\0' || *end != '\0' || errno != 0 ||
			port < 1 || port > 65535)
			return psprintf("\"%s\" does not end in a port number between 1 and 65535.",
							item);
		pfree(item);
		if (p[len] == '\0')
			return NULL;
		p += len + 1;
	}
}

static bool
check_zklock_hosts(char **newval, void **extra, GucSource source)
{
	const char *problem;

	if (*newval == NULL)
		return false;
	problem = host_list_problem(*newval);
	if (problem != NULL)
	{
		GUC_check_errdetail("%s", problem);
		return false;
	}
	return check_locks_not_held("zklock.hosts",
								zklock_hosts != NULL &&
								strcmp(*newval, zklock_hosts) != 0);
}

static bool
check_zklock_root(char **newval, void **extra, GucSource source)
{
	const char *problem;

	if (*newval == NULL)
		return false;
	problem = ZkLockPathProblem(*newval);
	if (problem != NULL)
	{
		GUC_check_errdetail("%s", problem);
		return false;
	}
	return check_locks_not_held("zklock.root",
								zklock_root != NULL &&
								strcmp(*newval, zklock_root) != 0);
}

/*
 * check_zklock_auth_file
 *		The file is read when a session opens; it cannot change under held
 *		locks.  (Its path is not secret, unlike zklock.auth's value.)
 */
static bool
check_zklock_auth_file(char **newval, void **extra, GucSource source)
{
	return check_locks_not_held("zklock.auth_file",
								zklock_auth_file != NULL && *newval != NULL &&
								strcmp(*newval, zklock_auth_file) != 0);
}

static bool
check_zklock_session_timeout(int *newval, void **extra, GucSource source)
{
	return check_locks_not_held("zklock.session_timeout",
								*newval != zklock_session_timeout);
}

/*
 * _PG_init
 *		Define the settings, and ask for the statistics' shared memory when
 *		loaded at server start.  Nothing else: no thread, no connection.
 */
void
_PG_init(void)
{
	/* the statistics' shared memory, when loaded at server start */
	ZkStatRequestShmem();

	DefineCustomStringVariable("zklock.hosts",
							   "ZooKeeper servers the backend connects to.",
							   "A comma-separated list of host:port pairs, as the ZooKeeper client takes it.",
							   &zklock_hosts,
							   "127.0.0.1:2181",
							   PGC_SUSET,
							   0,
							   check_zklock_hosts, NULL, NULL);

	DefineCustomStringVariable("zklock.root",
							   "ZooKeeper path under which lock nodes are created.",
							   "A lock path \"/a/b\" lives at <zklock.root>/a/b.",
							   &zklock_root,
							   "/zklock",
							   PGC_SUSET,
							   0,
							   check_zklock_root, NULL, NULL);

	DefineCustomIntVariable("zklock.session_timeout",
							"ZooKeeper session timeout requested by the backend.",
							"The server may negotiate it into its own bounds. A backend that cannot reach ZooKeeper for this long loses its locks.",
							&zklock_session_timeout,
							10000, 1000, INT_MAX,
							PGC_SUSET,
							GUC_UNIT_MS,
							check_zklock_session_timeout, NULL, NULL);

	DefineCustomIntVariable("zklock.connect_timeout",
							"How long to wait for a ZooKeeper server when opening a session.",
							"Also bounds how long a release or the check at COMMIT waits for a lost connection to come back.",
							&zklock_connect_timeout,
							5000, 1, INT_MAX,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	/*
	 * No check hook: a refused value would be echoed in "invalid value for
	 * parameter" errors, which may reach a non-superuser (a function's SET
	 * clause).  The form and the locks-held rule are checked when the value
	 * is used, by messages that do not repeat it.
	 */
	DefineCustomStringVariable("zklock.auth",
							   "ZooKeeper digest credentials, as user:password.",
							   "When set, each new session authenticates with them and the nodes it creates get creator-only ACLs (world-readable).",
							   &zklock_auth,
							   "",
							   PGC_SUSET,
							   GUC_SUPERUSER_ONLY | GUC_NO_SHOW_ALL,
							   NULL, NULL, NULL);

	DefineCustomStringVariable("zklock.auth_file",
							   "File whose first line holds the ZooKeeper digest credentials, as user:password.",
							   "The documented way to authenticate: the secret never enters a setting. The file must belong to the server's operating system user and be readable by it alone. Takes precedence over zklock.auth; read when a session is opened.",
							   &zklock_auth_file,
							   "",
							   PGC_SUSET,
							   GUC_SUPERUSER_ONLY,
							   check_zklock_auth_file, NULL, NULL);

	DefineCustomBoolVariable("zklock.synchronous_release",
							 "Makes lock releases wait until ZooKeeper has applied them.",
							 "When on, zk_unlock, zk_unlock_all and the release of transaction locks at COMMIT or ROLLBACK return only once the delete of the queue node is confirmed, so any lock attempt that starts afterwards, on any server, finds the lock free. When off, the delete is sent in the background.",
							 &zklock_synchronous_release,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomEnumVariable("zklock.exclusive_node_style",
							 "How exclusive locks name their queue nodes.",
							 "rwlock: like Curator's InterProcessReadWriteLock (shares a queue with it and with kazoo). mutex: like Curator's InterProcessMutex (shares a queue with it, and with Curator's LeaderSelector). latch: like a Curator LeaderLatch participant (a SQL backend and Java services elect one leader). Shared locks are not available in the mutex and latch styles.",
							 &zklock_exclusive_node_style,
							 ZK_STYLE_RWLOCK,
							 node_style_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("zklock.verify_on_commit",
							 "Confirms with ZooKeeper at every COMMIT that each held lock's node still exists.",
							 "Without it, COMMIT only requires the session to be known alive. COMMIT fails if a held node is gone or cannot be confirmed within zklock.connect_timeout.",
							 &zklock_verify_on_commit,
							 false,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("zklock.max_locks_per_backend",
							"Maximum number of ZooKeeper locks one backend may hold.",
							"Each distinct path and mode counts once, however often it is taken.",
							&zklock_max_locks_per_backend,
							1000, 1, INT_MAX,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("zklock.guess_fresh_paths",
							 "Lets a lock attempt create a lock node it expects to be missing in the same request as its queue node.",
							 "A developer setting, to compare both ways in one benchmark run. When off, every attempt first assumes its lock node exists, and creates it only after ZooKeeper said it is missing.",
							 &zklock_guess_fresh_paths,
							 true,
							 PGC_USERSET,
							 GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							 NULL, NULL, NULL);

	MarkGUCPrefixReserved("zklock");

	/* DISCARD ALL releases session holds, as pg_advisory_unlock_all() */
	ZkInstallDiscardHook();

	/*
	 * Until a backend loads this library, a zklock.auth given in the
	 * configuration is an ordinary placeholder setting that any user can
	 * read with SHOW.  Only preloading closes that gap: say so.
	 */
	if (!process_shared_preload_libraries_in_progress &&
		zklock_auth != NULL && zklock_auth[0] != '\0' &&
		(session_preload_libraries_string == NULL ||
		 strstr(session_preload_libraries_string, "zklock") == NULL))
		ereport(WARNING,
				(errmsg("zklock.auth is set, but zklock is not preloaded"),
				 errdetail("In a backend that has not loaded zklock, zklock.auth is an ordinary placeholder setting that any user can read."),
				 errhint("Add zklock to shared_preload_libraries or session_preload_libraries.")));
}

/*
 * lock_blocking
 *		zk_lock and friends: wait as long as needed; return the token.
 */
static int64
lock_blocking(FunctionCallInfo fcinfo, ZkLockMode mode, ZkLockScope scope)
{
	char	   *path = ZkCheckLockPath(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	int64		token = 0;

	(void) ZkLockAcquire(path, mode, scope, -1, &token);
	return token;
}

/*
 * lock_try
 *		zk_try_lock and friends: wait at most wait_ms (default 0).
 */
static bool
lock_try(FunctionCallInfo fcinfo, ZkLockMode mode, ZkLockScope scope)
{
	char	   *path = ZkCheckLockPath(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	int32		wait_ms = PG_NARGS() > 1 ? PG_GETARG_INT32(1) : 0;
	int64		token;

	if (wait_ms < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("wait_ms must not be negative")));
	return ZkLockAcquire(path, mode, scope, wait_ms, &token);
}

Datum
zk_lock(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(lock_blocking(fcinfo, ZK_MODE_EXCLUSIVE, ZK_SCOPE_SESSION));
}

Datum
zk_rlock(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(lock_blocking(fcinfo, ZK_MODE_SHARED, ZK_SCOPE_SESSION));
}

Datum
zk_try_lock(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(lock_try(fcinfo, ZK_MODE_EXCLUSIVE, ZK_SCOPE_SESSION));
}

Datum
zk_try_rlock(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(lock_try(fcinfo, ZK_MODE_SHARED, ZK_SCOPE_SESSION));
}

Datum
zk_xact_lock(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(lock_blocking(fcinfo, ZK_MODE_EXCLUSIVE,
								  ZK_SCOPE_TRANSACTION));
}

Datum
zk_xact_rlock(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(lock_blocking(fcinfo, ZK_MODE_SHARED,
								  ZK_SCOPE_TRANSACTION));
}

Datum
zk_try_xact_lock(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(lock_try(fcinfo, ZK_MODE_EXCLUSIVE, ZK_SCOPE_TRANSACTION));
}

Datum
zk_try_xact_rlock(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(lock_try(fcinfo, ZK_MODE_SHARED, ZK_SCOPE_TRANSACTION));
}

/*
 * zk_unlock
 *		Release one session hold on a path.
 */
Datum
zk_unlock(PG_FUNCTION_ARGS)
{
	char	   *path = ZkCheckLockPath(text_to_cstring(PG_GETARG_TEXT_PP(0)));

	PG_RETURN_BOOL(ZkLockRelease(path));
}

/*
 * zk_unlock_all
 *		Release every session hold of this backend.
 */
Datum
zk_unlock_all(PG_FUNCTION_ARGS)
{
	ZkLockReleaseAll();
	PG_RETURN_VOID();
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

/*
 * lock_set_blocking
 *		zk_lock(text[]) and friends: all the locks at once, waiting as long
 *		as needed; return the set's token.
 */
static int64
lock_set_blocking(FunctionCallInfo fcinfo, ZkLockMode mode,
				  ZkLockScope scope)
{
	const char **paths;
	int			n = path_array(PG_GETARG_ARRAYTYPE_P(0), &paths);
	int64		token = 0;

	(void) ZkLockAcquireSet(paths, n, mode, scope, -1, &token);
	return token;
}

/*
 * lock_set_try
 *		zk_try_lock(text[]) and friends: all or none within wait_ms.
 */
static bool
lock_set_try(FunctionCallInfo fcinfo, ZkLockMode mode, ZkLockScope scope)
{
	const char **paths;
	int			n = path_array(PG_GETARG_ARRAYTYPE_P(0), &paths);
	int32		wait_ms = PG_NARGS() > 1 ? PG_GETARG_INT32(1) : 0;
	int64		token;

	if (wait_ms < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("wait_ms must not be negative")));
	return ZkLockAcquireSet(paths, n, mode, scope, wait_ms, &token);
}

Datum
zk_lock_array(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(lock_set_blocking(fcinfo, ZK_MODE_EXCLUSIVE,
									  ZK_SCOPE_SESSION));
}

Datum
zk_rlock_array(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(lock_set_blocking(fcinfo, ZK_MODE_SHARED,
									  ZK_SCOPE_SESSION));
}

Datum
zk_try_lock_array(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(lock_set_try(fcinfo, ZK_MODE_EXCLUSIVE, ZK_SCOPE_SESSION));
}

Datum
zk_try_rlock_array(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(lock_set_try(fcinfo, ZK_MODE_SHARED, ZK_SCOPE_SESSION));
}

Datum
zk_xact_lock_array(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(lock_set_blocking(fcinfo, ZK_MODE_EXCLUSIVE,
									  ZK_SCOPE_TRANSACTION));
}

Datum
zk_xact_rlock_array(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(lock_set_blocking(fcinfo, ZK_MODE_SHARED,
									  ZK_SCOPE_TRANSACTION));
}

Datum
zk_try_xact_lock_array(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(lock_set_try(fcinfo, ZK_MODE_EXCLUSIVE,
								ZK_SCOPE_TRANSACTION));
}

Datum
zk_try_xact_rlock_array(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(lock_set_try(fcinfo, ZK_MODE_SHARED,
								ZK_SCOPE_TRANSACTION));
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

	PG_RETURN_BOOL(ZkLockReleaseSet(paths, n));
}

/*
 * lease_blocking
 *		zk_semaphore_acquire and zk_xact_semaphore_acquire: wait as long as
 *		needed; return the lease's token.
 */
static int64
lease_blocking(FunctionCallInfo fcinfo, ZkLockScope scope)
{
	char	   *path = ZkCheckLockPath(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	int32		max_leases = PG_GETARG_INT32(1);
	int64		token = 0;

	(void) ZkLockAcquireLease(path, max_leases, scope, -1, &token);
	return token;
}

/*
 * lease_try
 *		zk_try_semaphore_acquire and its transaction form: wait at most
 *		wait_ms (default 0).
 */
static bool
lease_try(FunctionCallInfo fcinfo, ZkLockScope scope)
{
	char	   *path = ZkCheckLockPath(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	int32		max_leases = PG_GETARG_INT32(1);
	int32		wait_ms = PG_NARGS() > 2 ? PG_GETARG_INT32(2) : 0;
	int64		token;

	if (wait_ms < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("wait_ms must not be negative")));
	return ZkLockAcquireLease(path, max_leases, scope, wait_ms, &token);
}

Datum
zk_semaphore_acquire(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(lease_blocking(fcinfo, ZK_SCOPE_SESSION));
}

Datum
zk_try_semaphore_acquire(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(lease_try(fcinfo, ZK_SCOPE_SESSION));
}

Datum
zk_xact_semaphore_acquire(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(lease_blocking(fcinfo, ZK_SCOPE_TRANSACTION));
}

Datum
zk_try_xact_semaphore_acquire(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(lease_try(fcinfo, ZK_SCOPE_TRANSACTION));
}

/*
 * zk_semaphore_release
 *		Release one session hold of a semaphore's lease.
 */
Datum
zk_semaphore_release(PG_FUNCTION_ARGS)
{
	char	   *path = ZkCheckLockPath(text_to_cstring(PG_GETARG_TEXT_PP(0)));

	PG_RETURN_BOOL(ZkLockReleaseLease(path));
}

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

	if (pg_mul_s64_overflow((int64) iv->day, USECS_PER_DAY, &part) ||
		pg_add_s64_overflow(us, part, &us) ||
		pg_mul_s64_overflow((int64) iv->month,
							(int64) DAYS_PER_MONTH * USECS_PER_DAY, &part) ||
		pg_add_s64_overflow(us, part, &us) ||
		us / 1000 > ZK_MAX_TTL_MS)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("ttl of a ZooKeeper lease is out of range"),
				 errdetail("ZooKeeper accepts a ttl of at most %lld ms (about 34 years).",
						   (long long) ZK_MAX_TTL_MS)));
	if (us <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ttl of a ZooKeeper lease must be positive")));
	ms = us / 1000 + (us % 1000 != 0 ? 1 : 0);
	if (ms > ZK_MAX_TTL_MS)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("ttl of a ZooKeeper lease is out of range"),
				 errdetail("ZooKeeper accepts a ttl of at most %lld ms (about 34 years).",
						   (long long) ZK_MAX_TTL_MS)));
	return ms;
}

/*
 * token_arg
 *		A lease token argument: a fencing token is a ZooKeeper zxid, always
 *		positive (22023 otherwise).
 */
static int64
token_arg(FunctionCallInfo fcinfo, int argno)
{
	int64		token = PG_GETARG_INT64(argno);

	if (token <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%lld is not a ZooKeeper lease token", (long long) token),
				 errdetail("A lease token is the positive fencing token that zk_lease_lock returned.")));
	return token;
}

/*
 * zk_lease_lock
 *		Take a lease on a path for ttl: waits like zk_lock; returns the
 *		fencing token, which names the lease.
 */
Datum
zk_lease_lock(PG_FUNCTION_ARGS)
{
	char	   *path;
	int64		ttl_ms;
	int64		token = 0;
	int64		expires_at;

	require_args(fcinfo);
	path = ZkCheckLockPath(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	ttl_ms = ttl_ms_arg(fcinfo, 1);
	(void) ZkLockLeaseAcquire(path, ttl_ms, -1, &token, &expires_at);
	PG_RETURN_INT64(token);
}

/*
 * zk_try_lease_lock
 *		Take a lease if it can be had within wait_ms (default 0): the token,
 *		or NULL, leaving nothing behind.
 */
Datum
zk_try_lease_lock(PG_FUNCTION_ARGS)
{
	char	   *path;
	int64		ttl_ms;
	int32		wait_ms;
	int64		token;
	int64		expires_at;

	require_args(fcinfo);
	path = ZkCheckLockPath(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	ttl_ms = ttl_ms_arg(fcinfo, 1);
	wait_ms = PG_NARGS() > 2 ? PG_GETARG_INT32(2) : 0;
	if (wait_ms < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("wait_ms must not be negative")));
	if (!ZkLockLeaseAcquire(path, ttl_ms, wait_ms, &token, &expires_at))
		PG_RETURN_NULL();
	PG_RETURN_INT64(token);
}

/*
 * zk_lease_renew
 *		Renew a lease from any backend: its ttl runs again from now.
 *		Returns the new expiry, on the ZooKeeper leader's clock.
 */
Datum
zk_lease_renew(PG_FUNCTION_ARGS)
{
	char	   *path;
	int64		token;

	require_args(fcinfo);
	path = ZkCheckLockPath(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	token = token_arg(fcinfo, 1);
	PG_RETURN_TIMESTAMPTZ(unix_ms_to_timestamptz(ZkLockLeaseRenew(path, token)));
}

/*
 * zk_lease_unlock
 *		Release a lease from any backend; false and a WARNING if that lease
 *		does not hold the lock.
 */
Datum
zk_lease_unlock(PG_FUNCTION_ARGS)
{
	char	   *path;
	int64		token;

	require_args(fcinfo);
	path = ZkCheckLockPath(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	token = token_arg(fcinfo, 1);
	PG_RETURN_BOOL(ZkLockLeaseRelease(path, token));
}

/*
 * wait_ms_arg
 *		An optional wait_ms argument: -1 (as long as needed) if the call has
 *		none; 22023 if negative.
 */
static int64
wait_ms_arg(FunctionCallInfo fcinfo, int argno)
{
	int32		wait_ms;

	if (PG_NARGS() <= argno)
		return -1;
	wait_ms = PG_GETARG_INT32(argno);
	if (wait_ms < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("wait_ms must not be negative")));
	return wait_ms;
}

/*
 * zk_barrier_set
 *		Raise the barrier at path: true if this call raised it.
 */
Datum
zk_barrier_set(PG_FUNCTION_ARGS)
{
	char	   *path = ZkCheckLockPath(text_to_cstring(PG_GETARG_TEXT_PP(0)));

	PG_RETURN_BOOL(ZkLockBarrierSet(path));
}

/*
 * zk_barrier_remove
 *		Remove the barrier at path: true if this call removed it.
 */
Datum
zk_barrier_remove(PG_FUNCTION_ARGS)
{
	char	   *path = ZkCheckLockPath(text_to_cstring(PG_GETARG_TEXT_PP(0)));

	PG_RETURN_BOOL(ZkLockBarrierRemove(path));
}

/*
 * zk_barrier_wait
 *		Wait until the barrier at path is down: true once it is, false
 *		after wait_ms (without it: as long as needed).
 */
Datum
zk_barrier_wait(PG_FUNCTION_ARGS)
{
	char	   *path = ZkCheckLockPath(text_to_cstring(PG_GETARG_TEXT_PP(0)));

	PG_RETURN_BOOL(ZkLockBarrierWait(path, wait_ms_arg(fcinfo, 1)));
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
	char	   *path = ZkCheckLockPath(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	int32		members = PG_GETARG_INT32(1);
	int64		wait_ms = wait_ms_arg(fcinfo, 2);

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
	char	   *path = ZkCheckLockPath(text_to_cstring(PG_GETARG_TEXT_PP(0)));

	PG_RETURN_BOOL(ZkLockDoubleBarrierLeave(path, wait_ms_arg(fcinfo, 1)));
}

static TimestampTz
unix_ms_to_timestamptz(int64 ms)
{
	return ms * 1000 -
		((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY *
		 USECS_PER_SEC);
}

static Interval *
us_to_interval(int64 us)
{
	Interval   *iv = palloc0(sizeof(Interval));

	iv->time = us;
	return iv;
}

/*
 * zk_text_datum
 *		A path, node name or owner text (UTF-8, as ZooKeeper stores it) as
 *		a text value in the database encoding.
 */
static Datum
zk_text_datum(const char *utf8)
{
	return CStringGetTextDatum(ZkUtf8ToServer(utf8));
}

/*
 * zk_locks
 *		This backend's locks: one row per path, mode and scope.
 */
Datum
zk_locks(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ZkLockInfo *rows;
	int			n;

	InitMaterializedSRF(fcinfo, 0);
	ZkLockReportExpiry();
	n = ZkLockList(&rows);
	for (int i = 0; i < n; i++)
	{
		Datum		values[8];
		bool		nulls[8] = {0};

		values[0] = zk_text_datum(rows[i].path);
		values[1] = CStringGetTextDatum(ZkLockModeName(rows[i].mode));
		values[2] = CStringGetTextDatum(ZkLockScopeName(rows[i].scope));
		values[3] = Int32GetDatum(rows[i].holds);
		values[4] = zk_text_datum(rows[i].znode);
		values[5] = Int64GetDatum(rows[i].token);
		values[6] = TimestampTzGetDatum(rows[i].acquired_at);
		values[7] = IntervalPGetDatum(us_to_interval(rows[i].waited_us));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * zk_lock_queue
 *		The whole cluster's queue for a path, in order, with each node's
 *		owner as far as its data tells.  zk_lock_queue(path, max_rows) is
 *		the same function: the first max_rows nodes only.
 */
Datum
zk_lock_queue(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *path = ZkCheckLockPath(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	ZkQueueEntry *entries;
	int			n;

	n = ZkLockReadQueue(path,
						PG_NARGS() > 1 ? queue_max_rows(PG_GETARG_INT32(1)) : -1,
						&entries);

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < n; i++)
	{
		Datum		values[15];
		bool		nulls[15] = {0};
		ZkOwner		owner;
		char	   *text;

		ZkParseNodeData(entries[i].data, entries[i].datalen, &owner);
		values[0] = Int32GetDatum(entries[i].position);
		values[1] = zk_text_datum(entries[i].znode);
		values[2] = CStringGetTextDatum(ZkLockModeName(entries[i].mode));
		values[3] = BoolGetDatum(entries[i].granted);
		values[4] = Int64GetDatum(entries[i].token);
		values[5] = TimestampTzGetDatum(unix_ms_to_timestamptz(entries[i].ctime_ms));
#define TEXT_OR_NULL(k, s) \
		do { if ((s) != NULL) values[k] = zk_text_datum(s); else nulls[k] = true; } while (0)
		TEXT_OR_NULL(6, owner.cluster_name);
		TEXT_OR_NULL(7, owner.host);
		values[8] = Int32GetDatum(owner.port);
		nulls[8] = owner.port < 0;
		values[9] = Int32GetDatum(owner.pid);
		nulls[9] = owner.pid < 0;
		TEXT_OR_NULL(10, owner.database);
		TEXT_OR_NULL(11, owner.user);
		TEXT_OR_NULL(12, owner.application_name);
		text = ZkNodeDataAsText(entries[i].data, entries[i].datalen);
		TEXT_OR_NULL(13, text);
#undef TEXT_OR_NULL
		values[14] = TimestampTzGetDatum(unix_ms_to_timestamptz(entries[i].lease_expires_ms));
		nulls[14] = entries[i].lease_expires_ms < 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * queue_max_rows
 *		zk_lock_queue's max_rows, checked.
 */
static int
queue_max_rows(int32 max_rows)
{
	if (max_rows < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_rows must not be negative")));
	return max_rows;
}

/* Where zk_cluster_locks' rows go. */
typedef struct ClusterLocksState
{
	ReturnSetInfo *rsinfo;
} ClusterLocksState;

/*
 * set_owner_columns
 *		The owner columns (cluster_name, host, port, pid, database,
 *		user_name, application_name) at values[k..k+6] from node data;
 *		NULL where the data does not say.
 */
static void
set_owner_columns(Datum *values, bool *nulls, int k, const char *data,
				  int datalen)
{
	ZkOwner		owner;
	const char *texts[7];

	ZkParseNodeData(data, datalen, &owner);
	texts[0] = owner.cluster_name;
	texts[1] = owner.host;
	texts[4] = owner.database;
	texts[5] = owner.user;
	texts[6] = owner.application_name;
	for (int i = 0; i < 7; i++)
	{
		if (i == 2 || i == 3)
			continue;
		nulls[k + i] = (texts[i] == NULL);
		if (texts[i] != NULL)
			values[k + i] = zk_text_datum(texts[i]);
	}
	values[k + 2] = Int32GetDatum(owner.port);
	nulls[k + 2] = owner.port < 0;
	values[k + 3] = Int32GetDatum(owner.pid);
	nulls[k + 3] = owner.pid < 0;
}

/*
 * cluster_locks_row
 *		The rows of one lock path: one per holder, or one with empty holder
 *		columns when nobody holds it (all its nodes wait).
 */
static void
cluster_locks_row(const ZkClusterLock *lock, void *arg)
{
	ClusterLocksState *state = (ClusterLocksState *) arg;
	ReturnSetInfo *rsinfo = state->rsinfo;

	for (int h = 0; h < Max(lock->nholders, 1); h++)
	{
		Datum		values[17];
		bool		nulls[17] = {0};

		values[0] = zk_text_datum(lock->path);
		values[1] = CStringGetTextDatum(lock->kind);
		values[3] = Int32GetDatum(lock->nholders);
		values[4] = Int32GetDatum(lock->nwaiters);
		values[5] = TimestampTzGetDatum(unix_ms_to_timestamptz(lock->oldest_wait_ms));
		nulls[5] = lock->oldest_wait_ms < 0;
		if (lock->nholders > 0)
		{
			const ZkClusterHolder *holder = &lock->holders[h];

			values[2] = CStringGetTextDatum(holder->mode);
			values[6] = Int64GetDatum(holder->token);
			values[7] = TimestampTzGetDatum(unix_ms_to_timestamptz(holder->ctime_ms));
			values[8] = zk_text_datum(holder->znode);
			set_owner_columns(values, nulls, 9, holder->data, holder->datalen);
			values[16] = TimestampTzGetDatum(unix_ms_to_timestamptz(holder->lease_expires_ms));
			nulls[16] = holder->lease_expires_ms < 0;
		}
		else
		{
			nulls[2] = true;
			for (int i = 6; i < 17; i++)
				nulls[i] = true;
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

PG_FUNCTION_INFO_V1(zk_cluster_locks);

/*
 * zk_cluster_locks
 *		Every lock path with a queue under the prefix ("/": all of
 *		zklock.root), across the whole ensemble: one row per holder.
 */
Datum
zk_cluster_locks(PG_FUNCTION_ARGS)
{
	char	   *prefix = text_to_cstring(PG_GETARG_TEXT_PP(0));
	ClusterLocksState state;

	/* "/" is every lock; anything else is a lock path */
	prefix = strcmp(prefix, "/") == 0 ? "" : ZkCheckLockPath(prefix);

	InitMaterializedSRF(fcinfo, 0);
	state.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ZkLockClusterScan(prefix, cluster_locks_row, &state);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(zk_blocking_pids);

/*
 * zk_blocking_pids
 *		For a backend of this server that waits in a zklock queue: the
 *		nodes, on any server, that block it, one row per blocking node and
 *		waiting node.  No rows for a pid that is not a backend of this
 *		server waiting on an extension's wait event (the scan is not even
 *		started then).
 */
Datum
zk_blocking_pids(PG_FUNCTION_ARGS)
{
	int32		pid = PG_GETARG_INT32(0);
	ReturnSetInfo *rsinfo;
	PGPROC	   *proc;
	ZkBlockerInfo *blockers;
	int			n = 0;

	InitMaterializedSRF(fcinfo, 0);
	rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	proc = BackendPidGetProc(pid);
	if (proc != NULL && pid != MyProcPid &&
		(proc->wait_event_info & 0xFF000000) == PG_WAIT_EXTENSION)
		n = ZkLockBlockers(pid, &blockers);

	for (int i = 0; i < n; i++)
	{
		Datum		values[12];
		bool		nulls[12] = {0};

		values[0] = zk_text_datum(blockers[i].path);
		values[1] = zk_text_datum(blockers[i].waiter_znode);
		values[2] = zk_text_datum(blockers[i].znode);
		values[3] = CStringGetTextDatum(blockers[i].mode);
		values[4] = BoolGetDatum(blockers[i].granted);
		set_owner_columns(values, nulls, 5, blockers[i].data,
						  blockers[i].datalen);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * zk_session
 *		One row about this backend's ZooKeeper session.  Does not open one.
 */
Datum
zk_session(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	ZkSessionStatus st;
	Datum		values[8];
	bool		nulls[8] = {0};
	bool		open;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	ZkLockSessionStatus(&st);
	open = strcmp(st.state, "closed") != 0;
	values[0] = CStringGetTextDatum(st.state);
	values[1] = CStringGetTextDatum(psprintf("0x%016llx",
											 (unsigned long long) st.session_id));
	nulls[1] = !open;
	values[2] = CStringGetTextDatum(st.server);
	nulls[2] = !open || st.server[0] == '\0';
	values[3] = Int32GetDatum(st.negotiated_timeout);
	nulls[3] = !open;
	values[4] = Int32GetDatum(ZkLockCount());
	values[5] = IntervalPGetDatum(us_to_interval(st.connected_for_ms * 1000));
	nulls[5] = !open || st.connected_for_ms == 0;
	values[6] = Int32GetDatum(st.releases_pending);
	values[7] = Int64GetDatum(st.releases_failed);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
