/*-------------------------------------------------------------------------
 *
 * sql/arguments.c
 *		Arguments and values the SQL functions share: a lock path
 *		argument, an argument that must not be negative, and ZooKeeper's
 *		times as timestamptz.
 *
 * Used by the SQL functions (sql/functions.c, sql/views.c) only.  A lock path
 * is validated by base/paths.c, which talks to nobody; nothing here talks
 * to ZooKeeper either.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/int.h"
#include "utils/builtins.h"

#include "base/paths.h"
#include "sql/arguments.h"

/*
 * ZkPathArg
 *		A lock path argument, validated (base/paths.c), in UTF-8.
 */
char *
ZkPathArg(FunctionCallInfo fcinfo, int argno)
{
	return ZkCheckLockPath(text_to_cstring(PG_GETARG_TEXT_PP(argno)));
}

/*
 * ZkNonNegativeArg
 *		An integer argument that must not be negative (22023 otherwise,
 *		naming the argument).
 */
int32
ZkNonNegativeArg(FunctionCallInfo fcinfo, int argno, const char *name)
{
	int32		value = PG_GETARG_INT32(argno);

	if (value < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be negative", name)));
	return value;
}

/*
 * ZkUnixMsToTimestampTz
 *		Milliseconds since the Unix epoch, as ZooKeeper gives times (on the
 *		clock of the server that wrote them), as a timestamptz.  A time
 *		beyond timestamptz's range (a lease's expiry of an absurd ttl) is
 *		-infinity or infinity, never an overflow.
 */
TimestampTz
ZkUnixMsToTimestampTz(int64 ms)
{
	int64		us;
	TimestampTz ts;

	if (pg_mul_s64_overflow(ms, 1000, &us) ||
		pg_sub_s64_overflow(us,
							(int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) *
							SECS_PER_DAY * USECS_PER_SEC, &ts) ||
		!IS_VALID_TIMESTAMP(ts))
		return ms < 0 ? DT_NOBEGIN : DT_NOEND;
	return ts;
}
