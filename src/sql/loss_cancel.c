/*-------------------------------------------------------------------------
 *
 * sql/loss_cancel.c
 *		zklock.on_lock_loss = cancel as the SQL user meets it: the ERROR of
 *		a statement stopped because a hold of the backend was lost, and the
 *		ERROR at the next statement of a backend that was idle then.
 *
 * The outermost part of each statement runs armed (the loss watch's
 * protocol, client/loss_watch.c): the executor's run and finish of a
 * top-level query (ExecutorRun_hook, ExecutorFinish_hook; AFTER triggers
 * run in the finish), and a top-level utility statement (the
 * ProcessUtility hook, sql/discard.c), except transaction control and
 * DISCARD, which report losses themselves and must stay possible.  Parts
 * nested in it (SPI, a procedure's queries, a cursor's FETCH) run inside
 * its arming, and are not armed again.
 *
 *	- Arming, it raises the ERROR of a loss no ERROR named yet: the backend
 *	  was idle when it was found, or a handler caught its ERROR.
 *	- While it runs, a loss makes the loss watch send SIGINT, exactly as
 *	  pg_cancel_backend() does: PostgreSQL stops the statement at its next
 *	  CHECK_FOR_INTERRUPTS() (pg_sleep, a scan, a PL/pgSQL loop, COPY, a
 *	  procedure between its COMMITs) with its own 57014, which PL/pgSQL's
 *	  WHEN OTHERS does not catch.
 *	- The armed part ends in a PG_TRY block of this file.  If the watch
 *	  sent a cancel meanwhile, a 57014 that reaches that block (the
 *	  cancel, or a user's cancel or statement_timeout that came with it)
 *	  is replaced there by the lost locks' ERROR, SQLSTATE 08006: the
 *	  handler copies the error out (CopyErrorData), leaves error state
 *	  (FlushErrorState) and raises a new ERROR, the pattern elog.c
 *	  documents for a handler that does processing of its own.  Any other
 *	  error goes on unchanged.  A part that returns although the cancel
 *	  was sent (a handler caught query_canceled) raises the 08006 itself.
 *
 * Being the outermost, the block has no PL/pgSQL exception block above it
 * in the statement: the 08006 reaches the client whatever the logging
 * settings, and no code of the lost holder can catch it and run on.  A
 * 57014 the loss watch did not cause (no cancel was sent while armed) is
 * the user's and stays as it is; the locks are kept.
 *
 * Either way the holds layer then forgets the named losses quietly
 * (ZkLockAbsorbLosses), and the transaction can no longer COMMIT.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/elog.h"
#include "utils/memutils.h"

#include "sql/loss_cancel.h"
#include "holds/holds.h"
#include "base/vocabulary.h"
#include "client/client.h"

static ExecutorRun_hook_type zk_prev_executor_run = NULL;
static ExecutorFinish_hook_type zk_prev_executor_finish = NULL;

/* how deep the backend is in statement parts: only the outermost is armed */
static int	zk_part_depth = 0;

static void zk_loss_executor_run(QueryDesc *queryDesc, ScanDirection direction,
								 uint64 count, bool execute_once);
static void zk_loss_executor_finish(QueryDesc *queryDesc);

/*
 * ZkInstallLossCancelHooks
 *		Chain our executor hooks in front of the previous ones (utility
 *		statements come through sql/discard.c's ProcessUtility hook).
 *		Called once, from _PG_init.
 */
void
ZkInstallLossCancelHooks(void)
{
	zk_prev_executor_run = ExecutorRun_hook;
	ExecutorRun_hook = zk_loss_executor_run;
	zk_prev_executor_finish = ExecutorFinish_hook;
	ExecutorFinish_hook = zk_loss_executor_finish;
}

/*
 * zk_loss_raise_stopped
 *		The loss watch sent a cancel while the part ran: raise the ERROR
 *		naming the losses no ERROR named yet, or else the one the cancel was
 *		sent for; the holds layer forgets them at the next statement.  The
 *		ERROR of a session's loss (expired, or given up out of touch) names
 *		every lock held, and the session is closed before it is raised:
 *		should the library have got back in touch with a server that had
 *		not expired it, its nodes would otherwise stay, held for a backend
 *		told they are lost, until its next statement.  It always raises, so
 *		that a cancel still on its way is dropped with the statement (the
 *		records are gone only if the session was closed meanwhile: then the
 *		ERROR names no lock).
 */
static void
zk_loss_raise_stopped(void)
{
	char	   *message;
	char	   *detail;
	bool		session;

	if (ZkLockDescribeLosses(true, &message, &detail, &session))
	{
		ZkLossWatchMarkReported();
		/* the session's loss names every lock: the session goes now */
		if (session)
			ZkSessionGiveUp();
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg_internal("%s", message),
				 errdetail_internal("%s", detail)));
	}
	ereport(ERROR,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg("ZooKeeper locks of this backend were lost"),
			 errdetail("The statement was stopped because zklock.on_lock_loss is \"cancel\".")));
}

/*
 * zk_loss_check_statement
 *		Arming found a loss the holds layer has not taken: forget the losses
 *		an ERROR named already, and, in cancel mode, raise the ERROR of one
 *		that none named yet.
 */
static void
zk_loss_check_statement(void)
{
	char	   *message = NULL;
	char	   *detail = NULL;
	bool		session = false;

	if (zklock_on_lock_loss == ZK_ON_LOSS_CANCEL &&
		ZkLockDescribeLosses(false, &message, &detail, &session))
		ZkLossWatchMarkReported();
	/*
	 * A lost session named by an ERROR is closed now (counted expired);
	 * one whose loss this ERROR names is closed whatever the library heard
	 * since (ZkSessionGiveUp).
	 */
	if (ZkLockAbsorbLosses())
	{
		if (session)
			ZkSessionGiveUp();
		else
			ZkSessionCloseIfLost();
	}
	if (message != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg_internal("%s", message),
				 errdetail_internal("%s", detail)));
}

/*
 * zk_loss_replace_cancel
 *		In the outermost handler, the loss watch having sent a cancel: if
 *		the error is a cancel (57014), raise the lost locks' ERROR instead.
 *		Returns, with the error still current, for any other error.
 */
static void
zk_loss_replace_cancel(MemoryContext cxt)
{
	ErrorData  *edata;
	bool		cancel;

	MemoryContextSwitchTo(cxt);
	edata = CopyErrorData();
	cancel = (edata->sqlerrcode == ERRCODE_QUERY_CANCELED);
	FreeErrorData(edata);
	if (cancel)
	{
		FlushErrorState();
		zk_loss_raise_stopped();
	}
}

/*
 * ZkLossRunPart
 *		Run one part of a statement, run(arg).  The outermost part is
 *		armed if it is 'stoppable': a loss found before it starts is raised,
 *		and one found while it runs stops it with the lost locks' ERROR.
 *		Nested parts just run.
 */
void
ZkLossRunPart(bool stoppable, ZkStatementPart run, void *arg)
{
	MemoryContext cxt = CurrentMemoryContext;

	if (zk_part_depth > 0)
	{
		run(arg);
		return;
	}

	zk_part_depth++;
	PG_TRY();
	{
		if (stoppable && ZkLossWatchArm())
			zk_loss_check_statement();
		run(arg);
		if (stoppable && ZkLossWatchDisarm())
			zk_loss_raise_stopped();
	}
	PG_CATCH();
	{
		zk_part_depth--;
		/* disarming twice is harmless: the second says no cancel was sent */
		if (stoppable && ZkLossWatchDisarm())
			zk_loss_replace_cancel(cxt);
		PG_RE_THROW();
	}
	PG_END_TRY();
	zk_part_depth--;
}

/* ExecutorRun's arguments, for ZkLossRunPart */
typedef struct ZkRunArgs
{
	QueryDesc  *queryDesc;
	ScanDirection direction;
	uint64		count;
	bool		execute_once;
} ZkRunArgs;

/*
 * zk_run_executor
 *		The previous ExecutorRun, or the standard one.
 */
static void
zk_run_executor(void *arg)
{
	ZkRunArgs  *a = (ZkRunArgs *) arg;

	if (zk_prev_executor_run)
		zk_prev_executor_run(a->queryDesc, a->direction, a->count,
							 a->execute_once);
	else
		standard_ExecutorRun(a->queryDesc, a->direction, a->count,
							 a->execute_once);
}

/*
 * zk_loss_executor_run
 *		Run the query as a statement part.
 */
static void
zk_loss_executor_run(QueryDesc *queryDesc, ScanDirection direction,
					 uint64 count, bool execute_once)
{
	ZkRunArgs	a = {queryDesc, direction, count, execute_once};

	ZkLossRunPart(true, zk_run_executor, &a);
}

/*
 * zk_finish_executor
 *		The previous ExecutorFinish, or the standard one.
 */
static void
zk_finish_executor(void *arg)
{
	QueryDesc  *queryDesc = (QueryDesc *) arg;

	if (zk_prev_executor_finish)
		zk_prev_executor_finish(queryDesc);
	else
		standard_ExecutorFinish(queryDesc);
}

/*
 * zk_loss_executor_finish
 *		Finish the query (its AFTER triggers) as a statement part.
 */
static void
zk_loss_executor_finish(QueryDesc *queryDesc)
{
	ZkLossRunPart(true, zk_finish_executor, queryDesc);
}
