/*-------------------------------------------------------------------------
 *
 * sql/advisory.c
 *		PostgreSQL's advisory-lock functions, cluster-wide: the functions of
 *		the schema zk_advisory.
 *
 * Each function has the name, arguments, result and semantics of its
 * namesake in pg_catalog (PostgreSQL's lockfuncs.c), but takes the lock
 * through zklock's lock table (holds/holds.h), so that it holds across every
 * server on the same ZooKeeper ensemble.  An application opts in without a
 * code change by putting zk_advisory before pg_catalog in its search_path.
 *
 * Key space.  PostgreSQL's advisory locks are per database; these are per
 * database NAME, so that the same key in same-named databases on different
 * servers is one lock.  A key is the lock path
 *
 *		/pg_advisory/<database>/<key>			(bigint)
 *		/pg_advisory/<database>/<key1>,<key2>	(int, int)
 *
 * with the keys in decimal (a bigint never contains a comma, so the two
 * forms never collide, as PostgreSQL's never do).  <database> is the
 * database's name in UTF-8 with every byte written as itself if it is an
 * ASCII letter or digit, or an underscore that does not follow another
 * underscore, and as %XX (two upper-case hex digits) otherwise: a valid
 * node name whatever the name holds ("/", spaces, non-ASCII, control
 * characters), never "." or "..", never a queue node's name (those need
 * "__" or "-"), and reversible by decoding each %XX.
 *
 * Modes and scopes map one to one: ExclusiveLock is zklock's exclusive
 * lock, ShareLock its shared lock, the _xact_ forms transaction scope.
 * Stacking, DISCARD ALL, deadlock detection, the check at COMMIT and the
 * synchronous release are the lock table's.  An unlock of a key not held
 * in that mode at session level is PostgreSQL's WARNING and false;
 * pg_advisory_unlock_all releases the session's advisory locks of this
 * database and nothing else of zklock's.
 *
 * One C function serves both forms of each SQL function: one argument is
 * a bigint key, two are an (int, int) key.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/dbcommands.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "base/paths.h"
#include "base/vocabulary.h"
#include "holds/holds.h"

PG_FUNCTION_INFO_V1(zk_advisory_lock);
PG_FUNCTION_INFO_V1(zk_advisory_lock_shared);
PG_FUNCTION_INFO_V1(zk_advisory_xact_lock);
PG_FUNCTION_INFO_V1(zk_advisory_xact_lock_shared);
PG_FUNCTION_INFO_V1(zk_advisory_try_lock);
PG_FUNCTION_INFO_V1(zk_advisory_try_lock_shared);
PG_FUNCTION_INFO_V1(zk_advisory_try_xact_lock);
PG_FUNCTION_INFO_V1(zk_advisory_try_xact_lock_shared);
PG_FUNCTION_INFO_V1(zk_advisory_unlock);
PG_FUNCTION_INFO_V1(zk_advisory_unlock_shared);
PG_FUNCTION_INFO_V1(zk_advisory_unlock_all);

/* the first segment of every advisory lock path */
#define ZK_ADVISORY_ROOT "/pg_advisory/"

/* "/pg_advisory/<database>/", made once per backend (TopMemoryContext) */
static char *advisory_prefix = NULL;

static const char *database_prefix(void);
static char *advisory_path(FunctionCallInfo fcinfo);
static Datum advisory_acquire(FunctionCallInfo fcinfo, ZkLockMode mode,
							  ZkLockScope scope, bool try_only);
static Datum advisory_release(FunctionCallInfo fcinfo, ZkLockMode mode);

/*
 * database_prefix
 *		"/pg_advisory/<database>/" for this backend's database, its name
 *		encoded as the file header says.  A backend's database never
 *		changes, so it is made once.
 */
static const char *
database_prefix(void)
{
	static const char hex[] = "0123456789ABCDEF";
	char	   *name;
	char	   *utf8;
	StringInfoData buf;
	char		prev = '\0';

	if (advisory_prefix != NULL)
		return advisory_prefix;

	name = get_database_name(MyDatabaseId);
	if (name == NULL)			/* cannot happen: we are connected to it */
		elog(ERROR, "cache lookup failed for database %u", MyDatabaseId);
	utf8 = pg_server_to_any(name, strlen(name), PG_UTF8);

	initStringInfo(&buf);
	appendStringInfoString(&buf, ZK_ADVISORY_ROOT);
	for (const unsigned char *p = (const unsigned char *) utf8; *p; p++)
	{
		unsigned char c = *p;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			(c >= '0' && c <= '9') || (c == '_' && prev != '_'))
			appendStringInfoChar(&buf, (char) c);
		else
		{
			appendStringInfoChar(&buf, '%');
			appendStringInfoChar(&buf, hex[c >> 4]);
			appendStringInfoChar(&buf, hex[c & 0x0F]);
		}
		prev = (char) c;
	}
	appendStringInfoChar(&buf, '/');

	advisory_prefix = MemoryContextStrdup(TopMemoryContext, buf.data);
	pfree(buf.data);
	return advisory_prefix;
}

/*
 * advisory_path
 *		The lock path of the call's key: (bigint) or (int, int).  Checked as
 *		every lock path is (it always passes: ASCII, short, no queue node
 *		name).
 */
static char *
advisory_path(FunctionCallInfo fcinfo)
{
	char	   *path;

	if (PG_NARGS() == 1)
		path = psprintf("%s" INT64_FORMAT, database_prefix(),
						PG_GETARG_INT64(0));
	else
		path = psprintf("%s%d,%d", database_prefix(),
						PG_GETARG_INT32(0), PG_GETARG_INT32(1));
	return ZkCheckLockPath(path);
}

/*
 * advisory_acquire
 *		The body of every function that takes an advisory lock: without
 *		try_only, wait as long as needed (lock_timeout bounds it) and return
 *		void; with try_only, do not wait and return whether it was granted.
 */
static Datum
advisory_acquire(FunctionCallInfo fcinfo, ZkLockMode mode, ZkLockScope scope,
				 bool try_only)
{
	char	   *path = advisory_path(fcinfo);
	int64		token;
	bool		granted;

	granted = ZkLockAcquire(path, mode, scope, try_only ? 0 : -1, &token,
							true);
	if (try_only)
		PG_RETURN_BOOL(granted);
	PG_RETURN_VOID();
}

/*
 * advisory_release
 *		Release one session hold of the key in 'mode'; if there is none,
 *		PostgreSQL's own WARNING (naming its lock mode) and false.
 */
static Datum
advisory_release(FunctionCallInfo fcinfo, ZkLockMode mode)
{
	char	   *path = advisory_path(fcinfo);

	if (ZkLockReleaseMode(path, mode))
		PG_RETURN_BOOL(true);
	/* PostgreSQL's wording, from its lock manager (lock.c) */
	elog(WARNING, "you don't own a lock of type %s",
		 mode == ZK_MODE_EXCLUSIVE ? "ExclusiveLock" : "ShareLock");
	PG_RETURN_BOOL(false);
}

Datum
zk_advisory_lock(PG_FUNCTION_ARGS)
{
	return advisory_acquire(fcinfo, ZK_MODE_EXCLUSIVE, ZK_SCOPE_SESSION,
							false);
}

Datum
zk_advisory_lock_shared(PG_FUNCTION_ARGS)
{
	return advisory_acquire(fcinfo, ZK_MODE_SHARED, ZK_SCOPE_SESSION, false);
}

Datum
zk_advisory_xact_lock(PG_FUNCTION_ARGS)
{
	return advisory_acquire(fcinfo, ZK_MODE_EXCLUSIVE, ZK_SCOPE_TRANSACTION,
							false);
}

Datum
zk_advisory_xact_lock_shared(PG_FUNCTION_ARGS)
{
	return advisory_acquire(fcinfo, ZK_MODE_SHARED, ZK_SCOPE_TRANSACTION,
							false);
}

Datum
zk_advisory_try_lock(PG_FUNCTION_ARGS)
{
	return advisory_acquire(fcinfo, ZK_MODE_EXCLUSIVE, ZK_SCOPE_SESSION,
							true);
}

Datum
zk_advisory_try_lock_shared(PG_FUNCTION_ARGS)
{
	return advisory_acquire(fcinfo, ZK_MODE_SHARED, ZK_SCOPE_SESSION, true);
}

Datum
zk_advisory_try_xact_lock(PG_FUNCTION_ARGS)
{
	return advisory_acquire(fcinfo, ZK_MODE_EXCLUSIVE, ZK_SCOPE_TRANSACTION,
							true);
}

Datum
zk_advisory_try_xact_lock_shared(PG_FUNCTION_ARGS)
{
	return advisory_acquire(fcinfo, ZK_MODE_SHARED, ZK_SCOPE_TRANSACTION,
							true);
}

Datum
zk_advisory_unlock(PG_FUNCTION_ARGS)
{
	return advisory_release(fcinfo, ZK_MODE_EXCLUSIVE);
}

Datum
zk_advisory_unlock_shared(PG_FUNCTION_ARGS)
{
	return advisory_release(fcinfo, ZK_MODE_SHARED);
}

/*
 * zk_advisory_unlock_all
 *		pg_advisory_unlock_all: release every session-level advisory lock
 *		of this backend (this database's keys), none of its other zklock
 *		locks.
 */
Datum
zk_advisory_unlock_all(PG_FUNCTION_ARGS)
{
	ZkLockReleaseAll(database_prefix());
	PG_RETURN_VOID();
}
