/*-------------------------------------------------------------------------
 *
 * sql/fence.c
 *		Fencing at the resource: zk_fence() and the zk_fenced() trigger.
 *
 * A holder that lost its lock (paused past the session timeout, cut off
 * from ZooKeeper) may still write.  The database written to stops it by
 * keeping, for each lock path, the largest fencing token it has accepted,
 * in the extension table zk_fence_tokens:
 *
 *	- zk_fence(path, token) refuses a token smaller than the one recorded
 *	  (55000), else records token and returns it.  The record is one row
 *	  written by INSERT ... ON CONFLICT DO UPDATE: it is transactional
 *	  (a ROLLBACK takes it back) and the row lock serialises concurrent
 *	  fences of one path until the fencing transaction ends.  An equal
 *	  token is accepted: a holder may fence each of its transactions.
 *	- zk_fence(path) does the same with the token of this backend's own
 *	  exclusive hold on path (the holds layer knows it; no ZooKeeper
 *	  request).
 *	- zk_fence(path, token, true) also asks ZooKeeper whether the node
 *	  whose czxid is token holds path now: it must be the first node of the
 *	  lock's queue, exclusive and granted.  That is one read of the lock
 *	  node's children followed by one read of the head node (the queue read
 *	  of zk_lock_queue with max_rows 1), done after the row is locked, so a
 *	  holder that lost its lock is refused before its successor has written.
 *	- zk_fenced(), a BEFORE trigger taking the path as its argument,
 *	  refuses a write unless the current transaction (or one of its live
 *	  subtransactions) fenced that path: the row of the path then carries
 *	  the transaction's own xmin.  Fences undone by a rolled back
 *	  subtransaction therefore do not count.
 *
 * The functions are SECURITY DEFINER (owned by the extension's owner, with
 * a fixed search_path) so that a role that cannot write the table can fence
 * through them; the table lives in the schema of the function, found from
 * the function's own OID, since the extension is relocatable.  Every query
 * names the table with its schema and passes values as parameters.
 *
 * The token-only forms never talk to ZooKeeper: they work on a server with
 * zklock installed but no ZooKeeper session, such as the database a job on
 * another server writes to.  On a hot standby (or in a read-only
 * transaction) zk_fence gives PostgreSQL's read-only error.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "base/paths.h"
#include "holds/holds.h"
#include "sql/arguments.h"

PG_FUNCTION_INFO_V1(zk_fence_token);
PG_FUNCTION_INFO_V1(zk_fence_own);
PG_FUNCTION_INFO_V1(zk_fenced);

static char *fence_table(Oid fn_oid);
static void check_token(int64 token);
static int64 fence(Oid fn_oid, text *path, const char *utf8_path,
				   int64 token, bool verify);
static void verify_holder(const char *path, const char *utf8_path,
						  int64 token);
static bool fenced_in_this_xact(Oid fn_oid, text *path);

/*
 * fence_table
 *		The qualified name of zk_fence_tokens: in the schema of the calling
 *		function, which the extension's script created beside it.
 */
static char *
fence_table(Oid fn_oid)
{
	char	   *schema = get_namespace_name(get_func_namespace(fn_oid));

	if (schema == NULL)
		elog(ERROR, "schema of function %u not found", fn_oid);
	return quote_qualified_identifier(schema, "zk_fence_tokens");
}

/*
 * check_token
 *		A fencing token is a czxid: positive.
 */
static void
check_token(int64 token)
{
	if (token <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fencing token must be positive"),
				 errdetail("The token given was %lld.", (long long) token)));
}

/*
 * fence
 *		The body of zk_fence: record token as the largest accepted for path
 *		in this transaction, or refuse it.  path is the argument as given
 *		(database encoding), utf8_path the same, validated.
 */
static int64
fence(Oid fn_oid, text *path, const char *utf8_path, int64 token,
	  bool verify)
{
	char	   *table;
	char	   *path_str = text_to_cstring(path);
	Oid			argtypes[2] = {TEXTOID, INT8OID};
	Datum		values[2];
	int			rc;
	bool		accepted;
	int64		largest = 0;

	PreventCommandIfReadOnly("zk_fence()");

	table = fence_table(fn_oid);
	values[0] = PointerGetDatum(path);
	values[1] = Int64GetDatum(token);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	/*
	 * The upsert takes the row lock whether or not its WHERE lets it update,
	 * so the SELECT after a refusal reads a row no one else is changing.
	 */
	rc = SPI_execute_with_args(psprintf("INSERT INTO %s AS f (path, token) "
										"VALUES ($1, $2) "
										"ON CONFLICT (path) DO UPDATE "
										"SET token = excluded.token "
										"WHERE f.token <= excluded.token",
										table),
							   2, argtypes, values, NULL, false, 0);
	if (rc != SPI_OK_INSERT)
		elog(ERROR, "SPI_execute failed: %s", SPI_result_code_string(rc));
	accepted = SPI_processed == 1;
	if (!accepted)
	{
		bool		isnull;

		rc = SPI_execute_with_args(psprintf("SELECT token FROM %s "
											"WHERE path = $1", table),
								   1, argtypes, values, NULL, false, 1);
		if (rc != SPI_OK_SELECT || SPI_processed != 1)
			elog(ERROR, "fence record of lock path \"%s\" not found",
				 path_str);
		largest = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
											  SPI_tuptable->tupdesc, 1,
											  &isnull));
	}
	SPI_finish();

	if (!accepted)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("fencing token %lld for lock path \"%s\" is older than the accepted token %lld",
						(long long) token, path_str, (long long) largest),
				 errdetail("A later holder of the lock has written through zk_fence: the holder of token %lld has lost the lock.",
						   (long long) token),
				 errhint("Do not retry the write with this token; take the lock again.")));

	if (verify)
		verify_holder(path_str, utf8_path, token);
	return token;
}

/*
 * verify_holder
 *		ERROR 55000 unless the node whose czxid is token holds path now: the
 *		first node of the lock's queue, exclusive and granted.  The queue is
 *		read behind a sync: a server cut off from its leader still answers
 *		plain reads from its stale copy, in which an expired holder's node
 *		may still be first.
 */
static void
verify_holder(const char *path, const char *utf8_path, int64 token)
{
	ZkQueueEntry *entries;
	int			n = ZkLockReadQueue(utf8_path, 1, true, &entries);

	if (n >= 1 && entries[0].mode == ZK_MODE_EXCLUSIVE &&
		entries[0].granted && entries[0].token == token)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("fencing token %lld no longer holds lock path \"%s\"",
					(long long) token, path),
			 n == 0 ?
			 errdetail("The lock's queue in ZooKeeper is empty.") :
			 errdetail("The head of the lock's queue in ZooKeeper is %s node \"%s\" with token %lld.",
					   entries[0].granted ?
					   (entries[0].mode == ZK_MODE_EXCLUSIVE ?
						"granted exclusive" : "granted shared") :
					   "waiting",
					   entries[0].znode, (long long) entries[0].token)));
}

/*
 * zk_fence_token
 *		zk_fence(path text, token bigint, verify boolean DEFAULT false)
 */
Datum
zk_fence_token(PG_FUNCTION_ARGS)
{
	char	   *utf8_path = ZkPathArg(fcinfo, 0);
	int64		token = PG_GETARG_INT64(1);
	bool		verify = PG_GETARG_BOOL(2);

	check_token(token);
	PG_RETURN_INT64(fence(fcinfo->flinfo->fn_oid, PG_GETARG_TEXT_PP(0),
						  utf8_path, token, verify));
}

/*
 * zk_fence_own
 *		zk_fence(path text): zk_fence with the token of this backend's own
 *		exclusive hold on path (zk_locks); ERROR 55000 if there is none.
 */
Datum
zk_fence_own(PG_FUNCTION_ARGS)
{
	char	   *utf8_path = ZkPathArg(fcinfo, 0);
	ZkLockInfo *rows;
	int			n = ZkLockList(&rows);
	int64		token = 0;
	bool		shared = false;

	for (int i = 0; i < n; i++)
	{
		if (strcmp(rows[i].path, utf8_path) != 0)
			continue;
		if (rows[i].mode == ZK_MODE_EXCLUSIVE)
			token = rows[i].token;
		else
			shared = true;
	}
	if (token <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("this backend holds no exclusive lock on lock path \"%s\"",
						text_to_cstring(PG_GETARG_TEXT_PP(0))),
				 shared ?
				 errdetail("It holds the lock shared; only an exclusive hold's token is ordered against every other holder's.") : 0,
				 errhint("Take the lock with zk_lock() first, or pass the holder's token: zk_fence(path, token).")));
	PG_RETURN_INT64(fence(fcinfo->flinfo->fn_oid, PG_GETARG_TEXT_PP(0),
						  utf8_path, token, false));
}

/*
 * fenced_in_this_xact
 *		Whether the current transaction (or a live subtransaction of it)
 *		wrote the fence record of path: an accepted zk_fence.
 */
static bool
fenced_in_this_xact(Oid fn_oid, text *path)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1];
	bool		fenced = false;
	int			rc;

	values[0] = PointerGetDatum(path);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	rc = SPI_execute_with_args(psprintf("SELECT xmin FROM %s WHERE path = $1",
										fence_table(fn_oid)),
							   1, argtypes, values, NULL, true, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute failed: %s", SPI_result_code_string(rc));
	if (SPI_processed == 1)
	{
		bool		isnull;
		TransactionId xmin;

		xmin = DatumGetTransactionId(SPI_getbinval(SPI_tuptable->vals[0],
												   SPI_tuptable->tupdesc, 1,
												   &isnull));
		fenced = !isnull && TransactionIdIsCurrentTransactionId(xmin);
	}
	SPI_finish();
	return fenced;
}

/*
 * zk_fenced
 *		Trigger function: BEFORE INSERT OR UPDATE OR DELETE, FOR EACH ROW or
 *		FOR EACH STATEMENT, with the lock path as its one argument.  Refuses
 *		the write (55000) unless this transaction passed zk_fence for the
 *		path.  Complains as PostgreSQL's own trigger functions do when it is
 *		not fired that way.
 */
Datum
zk_fenced(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	Trigger    *trigger;
	text	   *path;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("zk_fenced: must be called as trigger")));
	if (!TRIGGER_FIRED_BY_INSERT(trigdata->tg_event) &&
		!TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event) &&
		!TRIGGER_FIRED_BY_DELETE(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("zk_fenced: must be called on insert, update or delete")));
	if (!TRIGGER_FIRED_BEFORE(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("zk_fenced: must be called before insert, update or delete")));
	trigger = trigdata->tg_trigger;
	if (trigger->tgnargs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("zk_fenced: must be given one argument, the lock path")));

	(void) ZkCheckLockPath(trigger->tgargs[0]);
	path = cstring_to_text(trigger->tgargs[0]);

	if (!fenced_in_this_xact(fcinfo->flinfo->fn_oid, path))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("write to table \"%s\" refused: this transaction has not fenced lock path \"%s\"",
						RelationGetRelationName(trigdata->tg_relation),
						trigger->tgargs[0]),
				 errhint("Call zk_fence(path, token) in the same transaction before the write.")));

	if (!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event))
		return PointerGetDatum(NULL);
	if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
		return PointerGetDatum(trigdata->tg_newtuple);
	return PointerGetDatum(trigdata->tg_trigtuple);
}
