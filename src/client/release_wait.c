/*-------------------------------------------------------------------------
 *
 * client/release_wait.c
 *		The wait of a backend that wants to know when its releases are
 *		applied (synchronous release): for a ZKOP_RELEASE op that the last
 *		of a batch's background deletes (client/jobs.c) completes.  It
 *		raises no ERROR of its own, as releases run at transaction end, and
 *		gives up when the connection stays down or ZooKeeper stays silent.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/ipc.h"

#include "client/bridge.h"
#include "client/session.h"
#include "client/wait.h"
#include "base/vocabulary.h"
#include "base/clock.h"

static ZkWaitResult zk_quiet_check(const ZkBridgeView *view, int64 now,
								   void *arg, int64 *wake_at);

/*
 * A release op's quiet wait (ZkReleaseWait): when it began, and the
 * progress of the answers.
 */
typedef struct ZkQuietWait
{
	int64		start;
	uint64		seen;			/* answers counted at the last progress */
	int64		last_progress;	/* when answers last came */
} ZkQuietWait;

/*
 * zk_quiet_check
 *		ZkWaitCheck of ZkReleaseWait: ready once the op completed, the
 *		handle is gone or the session is lost (an expired session took
 *		every node with it); ZK_WAIT_DEADLINE once the connection stayed
 *		down for zklock.connect_timeout since the start (or for the session
 *		timeout in all), or, connected, no answer came for the session timeout (a
 *		server slow to apply a large batch is not a lost connection; one
 *		that answers nothing at all, the client library itself drops after
 *		two thirds of the session timeout).
 */
static ZkWaitResult
zk_quiet_check(const ZkBridgeView *view, int64 now, void *arg,
			   int64 *wake_at)
{
	ZkQuietWait *qw = (ZkQuietWait *) arg;
	int64		give_up;

	if (view->op_done || !view->open || view->ended)
		return ZK_WAIT_READY;
	if (view->answers != qw->seen)
	{
		qw->seen = view->answers;
		qw->last_progress = now;
	}
	if (view->disconnected_at != 0)
		give_up = Min(Max(view->disconnected_at, qw->start) +
					  zklock_connect_timeout,
					  ZkSessionOutOfTouchAt(view));
	else
		give_up = qw->last_progress + ZkSessionTimeout();
	if (now >= give_up)
		return ZK_WAIT_DEADLINE;
	*wake_at = give_up;
	return ZK_WAIT_SLEEP;
}

/*
 * ZkReleaseWait
 *		Wait until ZooKeeper applied the deletes of a release op
 *		(ZkDeleteNodes' or ZkGuardRemove's, with an answer wanted), without
 *		raising an ERROR of ours, and free the op: true once it completed
 *		(or the session, which owned the nodes, ended); false when the
 *		connection stayed down for zklock.connect_timeout since the wait
 *		began (or for the session timeout in all), or when, connected,
 *		ZooKeeper answered nothing for the session timeout.  A large batch
 *		takes as long as it needs while answers keep coming.  On false the
 *		caller reports the release as unconfirmed; its deletes go on in the
 *		background.
 *
 * A cancel ends the wait with its ERROR (the deletes go on), except where
 * PostgreSQL holds interrupts (the COMMIT and ABORT callbacks), where
 * CHECK_FOR_INTERRUPTS does nothing and no ERROR is raised at all.  During
 * backend exit it does not wait: the session's close deletes every node.
 * Nor does it wait while ZooKeeper is known to be silent (ZkSessionSilent):
 * it returns false at once.
 */
bool
ZkReleaseWait(ZkOp *op)
{
	ZkQuietWait qw;
	ZkBridgeView view;
	bool		confirmed;

	if (op == NULL)
		return false;			/* out of memory: sent, not waited for */
	if (proc_exit_inprogress)
		confirmed = true;
	/* a silence waited out once already is not waited out again */
	else if (ZkSessionSilent())
		confirmed = false;
	else
	{
		ZkBridgeLook(NULL, &view);
		qw.start = ZkNowMs();
		qw.seen = view.answers;
		qw.last_progress = qw.start;
		confirmed = ZkLatchWait(op, zk_quiet_check, &qw, true) == ZK_WAIT_READY;
	}
	ZkOpFree(op);
	return confirmed;
}
