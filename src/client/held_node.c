/*-------------------------------------------------------------------------
 *
 * client/held_node.c
 *		The loss watch's state and what both of its sides do to a held
 *		node's record under ZkWatch.mutex: take a reference away, queue its
 *		watch, mark it lost, stop the statement that holds it (T1 of the
 *		protocol described in client/loss_watch.c), lose every ephemeral
 *		hold with the session, and have a revoked node deleted.  Called by
 *		the backend (client/loss_watch.c) and by the client threads
 *		(client/watchdog.c), always with the mutex held.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>

#include "base/clock.h"
#include "client/held_node.h"

ZkLossWatchData ZkWatch =
{
	.mutex = PTHREAD_MUTEX_INITIALIZER,
	.wake_at = PG_INT64_MAX,
	.nodes = DLIST_STATIC_INIT(ZkWatch.nodes),
	.to_arm = DLIST_STATIC_INIT(ZkWatch.to_arm),
	.deadlines = DLIST_STATIC_INIT(ZkWatch.deadlines),
	.orphans = DLIST_STATIC_INIT(ZkWatch.orphans),
};

/* ------------------------------------------------------------------------
 * Either thread, with ZkWatch.mutex held.
 * ------------------------------------------------------------------------
 */

/*
 * ZkHeldUnrefLocked
 *		Drop one reference; the last frees the record (it was withdrawn
 *		already: the registration is a reference).
 */
void
ZkHeldUnrefLocked(ZkHeldNode *node)
{
	if (--node->refs > 0)
		return;
	dlist_delete(&node->link);	/* from ZkWatch.orphans */
	free(node);
}

/*
 * ZkHeldArmLaterLocked
 *		Queue a registered node's watch to be set at 'at'.
 */
void
ZkHeldArmLaterLocked(ZkHeldNode *node, int64 at)
{
	if (node->released || node->lost != ZK_LOSS_NONE || node->to_arm)
		return;
	node->arm_at = at;
	node->to_arm = true;
	/* 'at' is now or later than every queued time: keep the queue ordered */
	if (at <= ZkNowMs())
		dlist_push_head(&ZkWatch.to_arm, &node->arm_link);
	else
		dlist_push_tail(&ZkWatch.to_arm, &node->arm_link);
}

/*
 * ZkHeldLostLocked
 *		A registered node is lost, for 'kind'.  Returns false if it was
 *		withdrawn or known lost already.
 */
bool
ZkHeldLostLocked(ZkHeldNode *node, ZkLossKind kind)
{
	if (node->released || node->lost != ZK_LOSS_NONE)
		return false;
	node->lost = kind;
	if (node->to_arm)
	{
		dlist_delete(&node->arm_link);
		node->to_arm = false;
	}
	ZkWatch.nlost++;
	return true;
}

/*
 * ZkHeldStopHolderLocked
 *		'node' was just lost (T1 of the protocol in the file's header): in
 *		cancel mode, cancel the armed statement as pg_cancel_backend() does,
 *		once for as long as it stays armed.
 */
void
ZkHeldStopHolderLocked(ZkHeldNode *node)
{
	if (!ZkWatch.cancel || !ZkWatch.armed || ZkWatch.cancel_sent || ZkWatch.pid == 0)
		return;
	ZkWatch.cancel_sent = true;
	if (ZkWatch.cause == NULL)
	{
		ZkWatch.cause = node;
		node->refs++;
	}
	(void) kill(ZkWatch.pid, SIGINT);
}

/*
 * ZkHeldSessionLostLocked
 *		The session is gone: every registered ephemeral node went with it
 *		(a lease, a node with a ttl, outlives the session).
 */
void
ZkHeldSessionLostLocked(ZkLossKind kind)
{
	dlist_iter	iter;
	ZkHeldNode *first = NULL;

	dlist_foreach(iter, &ZkWatch.nodes)
	{
		ZkHeldNode *node = dlist_container(ZkHeldNode, link, iter.cur);

		if (node->deadline == 0 && ZkHeldLostLocked(node, kind) &&
			first == NULL)
			first = node;
	}
	if (first != NULL)
		ZkHeldStopHolderLocked(first);
}

/*
 * ZkHeldRevokeLaterLocked
 *		A revocation was asked of 'node' and zklock.on_revoke is release:
 *		have the watchdog delete it.
 */
void
ZkHeldRevokeLaterLocked(ZkHeldNode *node)
{
	if (node->revoking || node->released || node->lost != ZK_LOSS_NONE)
		return;
	node->revoking = true;
	if (node->to_arm)
	{
		dlist_delete(&node->arm_link);
		node->to_arm = false;
	}
	ZkHeldArmLaterLocked(node, ZkNowMs());
	if (ZkWatch.running)
		pthread_cond_signal(&ZkWatch.cond);
}
