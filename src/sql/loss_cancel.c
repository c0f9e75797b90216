/*-------------------------------------------------------------------------
 *
 * sql/loss_cancel.c
 *		zklock.on_lock_loss = cancel as the SQL user meets it: the ERROR of
 *		a statement cancelled because a hold of the backend was lost, and
 *		the ERROR at the next statement of a backend that was idle then.
 *
 * The loss watch (client/loss_watch.c) cancels the running statement with
 * SIGINT, as pg_cancel_backend() does, and PostgreSQL's interrupt machinery
 * raises its own 57014 at the statement's next CHECK_FOR_INTERRUPTS(): in
 * pg_sleep, a scan, a PL/pgSQL loop, COPY, a procedure.  The
 * error-reporting hook (emit_log_hook) turns that report, when the cancel
 * was the loss watch's, into the lost locks' ERROR: SQLSTATE 08006 and a
 * message naming them, in the server log and to the client alike.  The
 * code a handler catches is still 57014 (query_canceled), which PL/pgSQL's
 * WHEN OTHERS does not catch: an exception block does not keep a holder
 * that lost its lock running.  One that names query_canceled does; the
 * next statement then raises the ERROR below.
 *
 * A backend between statements is not cancelled (PostgreSQL would ignore
 * it while waiting for a command anyway), nor one running a transaction
 * control statement or DISCARD, which report losses themselves and must
 * stay possible.  So every other statement (ExecutorStart, ProcessUtility)
 * first looks for a loss that no ERROR has named yet and raises it;
 * COMMIT's own check fails for it.  The look is a flag read without a
 * lock while nothing was lost.
 *
 * Either way the holds layer then forgets the named losses quietly
 * (ZkLockAbsorbLosses), and the transaction can no longer COMMIT.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "utils/elog.h"

#include "sql/loss_cancel.h"
#include "holds/holds.h"
#include "common/vocabulary.h"
#include "client/client.h"

static emit_log_hook_type zk_prev_emit_log = NULL;
static ExecutorStart_hook_type zk_prev_executor_start = NULL;

static void zk_loss_emit_log(ErrorData *edata);
static void zk_loss_executor_start(QueryDesc *queryDesc, int eflags);

/*
 * ZkInstallLossCancelHooks
 *		Chain our hooks in front of the previous ones (utility statements
 *		come through sql/discard.c's ProcessUtility hook).  Called once,
 *		from _PG_init.
 */
void
ZkInstallLossCancelHooks(void)
{
	zk_prev_emit_log = emit_log_hook;
	emit_log_hook = zk_loss_emit_log;
	zk_prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = zk_loss_executor_start;
}

/*
 * zk_loss_emit_log
 *		A statement was cancelled (57014) while the loss watch's cancel was
 *		pending: report the lost locks instead, as 08006 (also when a zklock
 *		call of the statement took the loss meanwhile without naming it).  Runs inside
 *		error reporting: allocates a little in the error's own context, and
 *		does nothing when errors are nesting.
 */
static void
zk_loss_emit_log(ErrorData *edata)
{
	if (edata->elevel == ERROR &&
		edata->sqlerrcode == ERRCODE_QUERY_CANCELED &&
		!in_error_recursion_trouble() &&
		ZkLossWatchCancelSent())
	{
		MemoryContext old = MemoryContextSwitchTo(edata->assoc_context);
		char	   *message;
		char	   *detail;

		if (ZkLockDescribeLosses(&message, &detail))
		{
			edata->sqlerrcode = ERRCODE_CONNECTION_FAILURE;
			edata->message = message;
			edata->detail = detail;
			edata->hint = NULL;
			ZkLossWatchMarkReported();
		}
		MemoryContextSwitchTo(old);
	}
	if (zk_prev_emit_log)
		zk_prev_emit_log(edata);
}

/*
 * zk_loss_check_statement
 *		Before a statement: forget the losses an ERROR named already, and, in
 *		cancel mode, raise the ERROR of one that none named yet (the backend
 *		was idle, or a handler caught the cancel).
 */
static void
zk_loss_check_statement(void)
{
	char	   *message = NULL;
	char	   *detail = NULL;

	if (!ZkLossWatchPending())
		return;
	if (zklock_on_lock_loss == ZK_ON_LOSS_CANCEL &&
		ZkLockDescribeLosses(&message, &detail))
		ZkLossWatchMarkReported();
	/* a lost session named by an ERROR is closed now (counted expired) */
	if (ZkLockAbsorbLosses())
		ZkSessionCloseIfLost();
	if (message != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg_internal("%s", message),
				 errdetail_internal("%s", detail)));
}

/*
 * zk_loss_executor_start
 *		Check for a loss, then start the query.
 */
static void
zk_loss_executor_start(QueryDesc *queryDesc, int eflags)
{
	zk_loss_check_statement();
	if (zk_prev_executor_start)
		zk_prev_executor_start(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

/*
 * ZkLossUtilityBegin
 *		Before a utility statement (the ProcessUtility hook, sql/discard.c):
 *		check for a loss, unless the statement is one that reports losses
 *		itself and must stay possible (transaction control, DISCARD).
 *		Returns whether it is one: the caller then calls ZkLossUtilityEnd
 *		however the statement ends.
 */
bool
ZkLossUtilityBegin(Node *parsetree)
{
	if (!IsA(parsetree, TransactionStmt) && !IsA(parsetree, DiscardStmt))
	{
		zk_loss_check_statement();
		return false;
	}

	/*
	 * COMMIT fails its check and ends the transaction, DISCARD ALL warns:
	 * no cancel while they run, and one sent that has not struck yet is
	 * taken back, since it would fail the statement before it ends the
	 * transaction and leave the block aborted.
	 */
	if (ZkLossWatchHoldOff(true) && QueryCancelPending)
		QueryCancelPending = false;
	return true;
}

/*
 * ZkLossUtilityEnd
 *		A statement ZkLossUtilityBegin held cancels off for ended.  Never
 *		raises.
 */
void
ZkLossUtilityEnd(void)
{
	(void) ZkLossWatchHoldOff(false);
}
