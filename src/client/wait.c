/*-------------------------------------------------------------------------
 *
 * client/wait.c
 *		The one latch wait of the client layer, and the usual waits built
 *		on it.
 *
 * Every sleep of the client layer goes through ZkLatchWait, in the shape of
 * PostgreSQL's own waits for a remote server: reset the latch, look at the
 * state the client threads share (client/bridge.c), and if the wait is not
 * over, WaitLatch() (PG_WAIT_EXTENSION, WL_EXIT_ON_PM_DEATH) until a client
 * thread sets the latch or the wait's timeout passes, then
 * CHECK_FOR_INTERRUPTS(), so that query cancel, statement_timeout and
 * termination end the wait with their ERROR.  A caller that must raise no
 * ERROR at all (backend exit) asks for no interrupt check.  ZkWaitStatus is
 * the usual wait: until what it waits for holds, a deadline passes, the
 * session is lost, or the connection has stayed lost for the session
 * timeout; ZkWaitOrRaise turns the last two into zklock's ERRORs.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"

#include "client/bridge.h"
#include "client/session.h"
#include "client/wait.h"
#include "base/clock.h"
#include "base/vocabulary.h"

/*
 * ZooKeeper's silence, once a wait established it: a wait gave up on an
 * answer that had not come for zklock.connect_timeout, when the session
 * had counted zk_silent_answers answers.  Until the next answer of any
 * kind (ZooKeeper answers a session's requests in order, so the next one
 * is the oldest request's) later waits need not sit through that silence
 * again: see ZkSessionSilent.
 */
static bool zk_silent = false;
static uint64 zk_silent_answers = 0;

/* What ZkWaitStatus waits for, and until when. */
typedef struct ZkWaitGoal
{
	ZkWaitFor	goal;
	int64		deadline_ms;	/* monotonic; 0 for none */
	bool		end_out_of_touch;	/* end once out of touch (disconnected
									 * for the session timeout) */
} ZkWaitGoal;

static ZkWaitResult zk_wait_check(const ZkBridgeView *view, int64 now,
								  void *arg, int64 *wake_at);

/*
 * ZkLatchWait
 *		The one place where the session layer sleeps.
 *
 * Until check() says the wait is over (and returns why): reset the latch,
 * look at the bridge (with whether 'op' has its answer), ask check(), and
 * sleep on the latch, until woken or until the *wake_at that check() set
 * (monotonic ms; none: no timeout).  With 'op', its answer wakes the
 * backend (ZkBridgeAwait); an ERROR thrown in the wait may leave it
 * awaited, which only ever causes a wakeup.  'interruptible': run
 * CHECK_FOR_INTERRUPTS() on every wakeup, which does nothing where
 * PostgreSQL holds interrupts (the COMMIT and ABORT callbacks); a caller
 * that must raise no ERROR at all passes false.
 */
ZkWaitResult
ZkLatchWait(ZkOp *op, ZkWaitCheck check, void *arg, bool interruptible)
{
	ZkWaitResult result;

	if (op != NULL)
		ZkBridgeAwait(op);
	for (;;)
	{
		ZkBridgeView view;
		int64		now;
		int64		wake_at = 0;
		int			events = WL_LATCH_SET | WL_EXIT_ON_PM_DEATH;

		ResetLatch(MyLatch);
		ZkBridgeLook(op, &view);
		now = ZkNowMs();
		result = check(&view, now, arg, &wake_at);
		if (result != ZK_WAIT_SLEEP)
			break;
		if (wake_at != 0)
			events |= WL_TIMEOUT;
		(void) WaitLatch(MyLatch, events,
						 wake_at != 0 ? (long) (wake_at - now) : -1L,
						 PG_WAIT_EXTENSION);
		if (interruptible)
			CHECK_FOR_INTERRUPTS();
	}
	if (op != NULL)
		ZkBridgeAwait(NULL);
	return result;
}

/*
 * zk_wait_check
 *		ZkWaitCheck of ZkWaitStatus (arg: a ZkWaitGoal).
 */
static ZkWaitResult
zk_wait_check(const ZkBridgeView *view, int64 now, void *arg, int64 *wake_at)
{
	const ZkWaitGoal *wg = (const ZkWaitGoal *) arg;
	bool		ready = false;

	switch (wg->goal)
	{
		case ZK_FOR_ANSWER:
			ready = view->op_done;
			break;
		case ZK_FOR_CONNECTED:
			ready = (view->state == ZOO_CONNECTED_STATE);
			break;
		case ZK_FOR_WATCH:
			ready = (view->watch_event != 0);
			break;
	}
	if (ready)
		return ZK_WAIT_READY;
	if (view->ended)
		return ZK_WAIT_ENDED;
	if (wg->end_out_of_touch && view->disconnected_at != 0)
	{
		int64		out_of_touch_at = ZkSessionOutOfTouchAt(view);

		if (now >= out_of_touch_at)
			return ZK_WAIT_OUT_OF_TOUCH;
		*wake_at = out_of_touch_at;
	}
	if (wg->deadline_ms != 0)
	{
		if (now >= wg->deadline_ms)
			return ZK_WAIT_DEADLINE;
		if (*wake_at == 0 || wg->deadline_ms < *wake_at)
			*wake_at = wg->deadline_ms;
	}
	return ZK_WAIT_SLEEP;
}

/*
 * ZkWaitStatus
 *		Wait for 'goal' (ZK_FOR_ANSWER: the answer to 'op').
 *
 * Returns ZK_WAIT_READY once it holds, ZK_WAIT_ENDED when the session
 * expired (or authentication failed), ZK_WAIT_OUT_OF_TOUCH when the connection
 * has been lost for longer than the session timeout (unless
 * ZK_WAIT_THROUGH_OUT_OF_TOUCH), ZK_WAIT_DEADLINE when deadline_ms (monotonic; 0 for
 * none) has passed.  With ZK_WAIT_NO_INTERRUPTS, no CHECK_FOR_INTERRUPTS:
 * the wait raises no ERROR.
 */
ZkWaitResult
ZkWaitStatus(ZkWaitFor goal, ZkOp *op, int64 deadline_ms, int flags)
{
	ZkWaitGoal	wg;
	ZkWaitResult result;

	wg.goal = goal;
	wg.deadline_ms = deadline_ms;
	wg.end_out_of_touch = (flags & ZK_WAIT_THROUGH_OUT_OF_TOUCH) == 0;
	result = ZkLatchWait(op, zk_wait_check, &wg,
						 (flags & ZK_WAIT_NO_INTERRUPTS) == 0);

	/* an answer that has not come for connect_timeout: ZooKeeper is silent */
	if (goal == ZK_FOR_ANSWER && op != NULL &&
		(result == ZK_WAIT_DEADLINE || result == ZK_WAIT_OUT_OF_TOUCH) &&
		ZkNowMs() - op->sent_at >= zklock_connect_timeout)
	{
		ZkBridgeView view;

		ZkBridgeLook(op, &view);
		if (!view.op_done)
		{
			zk_silent = true;
			zk_silent_answers = view.answers;
		}
	}
	return result;
}

/*
 * ZkSessionSilent
 *		Has ZooKeeper been silent since a wait gave up on it (an answer it
 *		awaited had not come for zklock.connect_timeout), with no answer of
 *		any kind since?  A release that would wait for its answer then
 *		returns at once, unconfirmed (its deletes go on in the background):
 *		the silence was waited out once already, and the abort after a
 *		COMMIT that failed this way returns promptly.
 */
bool
ZkSessionSilent(void)
{
	ZkBridgeView view;

	if (!zk_silent)
		return false;
	ZkBridgeLook(NULL, &view);
	if (view.open && view.answers == zk_silent_answers)
		return true;
	zk_silent = false;
	return false;
}

/*
 * ZkWaitForgetSilence
 *		A new session: it has been silent about nothing yet.
 */
void
ZkWaitForgetSilence(void)
{
	zk_silent = false;
}

/*
 * ZkWaitOrRaise
 *		ZkWaitStatus, raising zklock's documented ERROR when the session
 *		expired or the connection stayed lost for the session timeout. Returns
 *		true when ready, false when deadline_ms passed. The operation's context
 *		(base/operation_context.c) names what was going on.
 */
bool
ZkWaitOrRaise(ZkWaitFor goal, ZkOp *op, int64 deadline_ms)
{
	switch (ZkWaitStatus(goal, op, deadline_ms, 0))
	{
		case ZK_WAIT_SLEEP:
			break;				/* not returned */
		case ZK_WAIT_READY:
			return true;
		case ZK_WAIT_DEADLINE:
			return false;
		case ZK_WAIT_ENDED:
			ZkSessionRaiseLost();
			break;
		case ZK_WAIT_OUT_OF_TOUCH:
			ereport(ERROR,
					(errcode(ERRCODE_CONNECTION_FAILURE),
					 errmsg("lost connection to ZooKeeper"),
					 errdetail("The connection to \"%s\" was not regained within the session timeout of %d ms.",
							   ZkSessionHosts(), ZkSessionTimeout())));
			break;
	}
	return false;				/* not reached */
}
