/*-------------------------------------------------------------------------
 *
 * sql/views.c
 *		SQL functions that show locks and the session: zk_locks,
 *		zk_lock_queue, zk_cluster_locks, zk_blocking_pids, zk_session.
 *
 * Each turns what the lock table (holds/table.c) returns into rows: this
 * backend's held locks, one queue, the scan of the cluster, the blockers
 * of a waiting backend, the session's state.  The lock table is the only
 * layer below that these functions call; the row types it returns come
 * with holds/holds.h.  Besides, they use helpers that never talk to
 * ZooKeeper: sql/arguments.c and base/paths.c for the arguments and times,
 * base/node_data.c to read the owner description stored in a node into the
 * owner columns, and base/text_encoding.c to turn ZooKeeper's UTF-8 into the
 * database encoding.
 *
 * A character of a path, node name or owner text that the database
 * encoding cannot hold is shown as \uXXXX (base/text_encoding.c), not
 * as bytes of the wrong encoding and not as an ERROR: another client's
 * node must not take a view away from every user of the database.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "base/paths.h"
#include "holds/holds.h"
#include "base/node_data.h"
#include "sql/arguments.h"
#include "base/text_encoding.h"
#include "base/vocabulary.h"

PG_FUNCTION_INFO_V1(zk_locks);
PG_FUNCTION_INFO_V1(zk_lock_queue);
PG_FUNCTION_INFO_V1(zk_cluster_locks);
PG_FUNCTION_INFO_V1(zk_blocking_pids);
PG_FUNCTION_INFO_V1(zk_session);

static Interval *us_to_interval(int64 us);
static Datum zk_text_datum(const char *utf8);
static void set_owner_columns(Datum *values, bool *nulls, int k,
							  const char *data, int datalen);
static void cluster_locks_row(const ZkClusterLock *lock, void *arg);

/*
 * us_to_interval
 *		Microseconds as an interval.
 */
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
 *		a text value in the database encoding, escaped where the encoding
 *		cannot hold it.
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
		Datum		values[9];
		bool		nulls[9] = {0};

		values[0] = zk_text_datum(rows[i].path);
		values[1] = CStringGetTextDatum(ZkLockModeName(rows[i].mode));
		values[2] = CStringGetTextDatum(ZkLockScopeName(rows[i].scope));
		values[3] = Int32GetDatum(rows[i].holds);
		values[4] = zk_text_datum(rows[i].znode);
		values[5] = Int64GetDatum(rows[i].token);
		values[6] = TimestampTzGetDatum(rows[i].acquired_at);
		values[7] = IntervalPGetDatum(us_to_interval(rows[i].waited_us));
		/* version 1.5 of the SQL adds revoke_requested */
		values[8] = BoolGetDatum(rows[i].revoke_requested);
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
	char	   *path = ZkPathArg(fcinfo, 0);
	ZkQueueEntry *entries;
	int			n;

	n = ZkLockReadQueue(path,
						PG_NARGS() > 1 ? ZkNonNegativeArg(fcinfo, 1, "max_rows") : -1,
						false, &entries);

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < n; i++)
	{
		Datum		values[15];
		bool		nulls[15] = {0};
		char	   *text;

		values[0] = Int32GetDatum(entries[i].position);
		values[1] = zk_text_datum(entries[i].znode);
		values[2] = CStringGetTextDatum(ZkLockModeName(entries[i].mode));
		values[3] = BoolGetDatum(entries[i].granted);
		values[4] = Int64GetDatum(entries[i].token);
		values[5] = TimestampTzGetDatum(ZkUnixMsToTimestampTz(entries[i].ctime_ms));
		set_owner_columns(values, nulls, 6, entries[i].data,
						  entries[i].datalen);
		text = ZkNodeDataAsText(entries[i].data, entries[i].datalen);
		if (text != NULL)
			values[13] = zk_text_datum(text);
		else
			nulls[13] = true;
		values[14] = TimestampTzGetDatum(ZkUnixMsToTimestampTz(entries[i].lease_expires_ms));
		nulls[14] = entries[i].lease_expires_ms < 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

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
 *		columns when nobody holds it (all its nodes wait).  'arg' is
 *		zk_cluster_locks' ReturnSetInfo, where the rows go.
 */
static void
cluster_locks_row(const ZkClusterLock *lock, void *arg)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) arg;

	for (int h = 0; h < Max(lock->nholders, 1); h++)
	{
		Datum		values[17];
		bool		nulls[17] = {0};

		values[0] = zk_text_datum(lock->path);
		values[1] = CStringGetTextDatum(lock->kind);
		values[3] = Int32GetDatum(lock->nholders);
		values[4] = Int32GetDatum(lock->nwaiters);
		values[5] = TimestampTzGetDatum(ZkUnixMsToTimestampTz(lock->oldest_wait_ms));
		nulls[5] = lock->oldest_wait_ms < 0;
		if (lock->nholders > 0)
		{
			const ZkClusterHolder *holder = &lock->holders[h];

			values[2] = CStringGetTextDatum(holder->mode);
			values[6] = Int64GetDatum(holder->token);
			values[7] = TimestampTzGetDatum(ZkUnixMsToTimestampTz(holder->ctime_ms));
			values[8] = zk_text_datum(holder->znode);
			set_owner_columns(values, nulls, 9, holder->data, holder->datalen);
			values[16] = TimestampTzGetDatum(ZkUnixMsToTimestampTz(holder->lease_expires_ms));
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

/*
 * zk_cluster_locks
 *		Every lock path with a queue under the prefix ("/": all of
 *		zklock.root), across the whole ensemble: one row per holder.
 */
Datum
zk_cluster_locks(PG_FUNCTION_ARGS)
{
	char	   *prefix = text_to_cstring(PG_GETARG_TEXT_PP(0));

	/* "/" is every lock; anything else is a lock path */
	prefix = strcmp(prefix, "/") == 0 ? "" : ZkCheckLockPath(prefix);

	InitMaterializedSRF(fcinfo, 0);
	ZkLockClusterScan(prefix, cluster_locks_row, fcinfo->resultinfo);
	return (Datum) 0;
}

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
