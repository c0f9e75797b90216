/*-------------------------------------------------------------------------
 *
 * sql/stat_views.c
 *		SQL functions of the cumulative statistics: zk_stat(),
 *		zk_stat_acquisitions(), zk_stat_histogram(), zk_stat_reset().
 *
 * Times are shown in milliseconds (double precision), as
 * pg_stat_database shows its times.  Without zklock in
 * shared_preload_libraries there are no statistics, and each function
 * says so with an ERROR (55000) instead of showing zeros.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/timestamp.h"

#include "base/stats.h"

PG_FUNCTION_INFO_V1(zk_stat);
PG_FUNCTION_INFO_V1(zk_stat_acquisitions);
PG_FUNCTION_INFO_V1(zk_stat_histogram);
PG_FUNCTION_INFO_V1(zk_stat_reset);

static void require_stats(void);
static void put_histogram(ReturnSetInfo *rsinfo, const char *name,
						  const int64 *buckets);

/*
 * require_stats
 *		ERROR unless the statistics are kept.
 */
static void
require_stats(void)
{
	if (!ZkStatEnabled())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("zklock statistics are not available"),
				 errdetail("They are kept in shared memory, which zklock has only when loaded at server start."),
				 errhint("Add zklock to shared_preload_libraries and restart the server.")));
}

/*
 * zk_stat
 *		One row: the acquisitions of every kind summed, sessions, lost locks,
 *		requests, releases, and when the statistics were reset.
 */
Datum
zk_stat(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	ZkStatSnapshot snap;
	ZkStatAcquisitionRow *rows;
	int			nrows;
	int64		sums[6] = {0};
	int64		waits = 0;
	int64		wait_us = 0;
	Datum		values[17];
	bool		nulls[17] = {0};

	require_stats();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	nrows = ZkStatAcquisitionRows(&rows);
	for (int i = 0; i < nrows; i++)
	{
		for (int o = 0; o < 6; o++)
			sums[o] += rows[i].counts[o];
		waits += rows[i].waits;
		wait_us += rows[i].wait_us;
	}
	ZkStatRead(&snap);

	values[0] = Int64GetDatum(sums[ZK_STAT_GRANTED]);
	values[1] = Int64GetDatum(sums[ZK_STAT_REFUSED]);
	values[2] = Int64GetDatum(waits);
	values[3] = Float8GetDatum(wait_us / 1000.0);
	values[4] = Int64GetDatum(sums[ZK_STAT_TIMEOUT]);
	values[5] = Int64GetDatum(sums[ZK_STAT_CANCELED]);
	values[6] = Int64GetDatum(sums[ZK_STAT_DEADLOCK]);
	values[7] = Int64GetDatum(sums[ZK_STAT_FAILED]);
	values[8] = Int64GetDatum(snap.sessions_opened);
	values[9] = Int64GetDatum(snap.sessions_expired);
	values[10] = Int64GetDatum(snap.locks_lost);
	values[11] = Int64GetDatum(snap.requests);
	values[12] = Float8GetDatum(snap.request_us / 1000.0);
	values[13] = Int64GetDatum(snap.releases_pending);
	values[14] = Int64GetDatum(snap.releases_failed);
	/* version 1.5 of the SQL has revocations before stats_reset */
	if (tupdesc->natts > 16)
	{
		values[15] = Int64GetDatum(snap.revocations);
		values[16] = TimestampTzGetDatum(snap.stats_reset);
	}
	else
		values[15] = TimestampTzGetDatum(snap.stats_reset);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * zk_stat_acquisitions
 *		One row per kind, mode and scope.
 */
Datum
zk_stat_acquisitions(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ZkStatAcquisitionRow *rows;
	int			n;

	require_stats();
	InitMaterializedSRF(fcinfo, 0);
	n = ZkStatAcquisitionRows(&rows);
	for (int i = 0; i < n; i++)
	{
		Datum		values[11];
		bool		nulls[11] = {0};

		values[0] = CStringGetTextDatum(ZkStatKindName(rows[i].kind));
		values[1] = CStringGetTextDatum(ZkLockModeName(rows[i].mode));
		values[2] = CStringGetTextDatum(ZkLockScopeName(rows[i].scope));
		values[3] = Int64GetDatum(rows[i].counts[ZK_STAT_GRANTED]);
		values[4] = Int64GetDatum(rows[i].counts[ZK_STAT_REFUSED]);
		values[5] = Int64GetDatum(rows[i].waits);
		values[6] = Float8GetDatum(rows[i].wait_us / 1000.0);
		values[7] = Int64GetDatum(rows[i].counts[ZK_STAT_TIMEOUT]);
		values[8] = Int64GetDatum(rows[i].counts[ZK_STAT_CANCELED]);
		values[9] = Int64GetDatum(rows[i].counts[ZK_STAT_DEADLOCK]);
		values[10] = Int64GetDatum(rows[i].counts[ZK_STAT_FAILED]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * put_histogram
 *		A histogram's rows: each bucket's upper bound in ms (the last is
 *		infinity) and the count of values up to it, cumulative.
 */
static void
put_histogram(ReturnSetInfo *rsinfo, const char *name, const int64 *buckets)
{
	int64		cumulative = 0;

	for (int i = 0; i < ZK_STAT_NBUCKETS; i++)
	{
		Datum		values[3];
		bool		nulls[3] = {0};

		cumulative += buckets[i];
		values[0] = CStringGetTextDatum(name);
		values[1] = Float8GetDatum(i == ZK_STAT_NBUCKETS - 1 ?
								   get_float8_infinity() :
								   ZkStatBucketBounds[i] / 1000.0);
		values[2] = Int64GetDatum(cumulative);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/*
 * zk_stat_histogram
 *		The wait-time and request-latency histograms.
 */
Datum
zk_stat_histogram(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ZkStatSnapshot snap;

	require_stats();
	InitMaterializedSRF(fcinfo, 0);
	ZkStatRead(&snap);
	put_histogram(rsinfo, "wait", snap.wait_buckets);
	put_histogram(rsinfo, "request", snap.request_buckets);
	return (Datum) 0;
}

/*
 * zk_stat_reset
 *		Zero the statistics (executable by superusers unless granted).
 */
Datum
zk_stat_reset(PG_FUNCTION_ARGS)
{
	require_stats();
	ZkStatReset();
	PG_RETURN_VOID();
}
