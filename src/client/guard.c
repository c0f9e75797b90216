/*-------------------------------------------------------------------------
 *
 * client/guard.c
 *		The guard: the one persistent node (a waiting lease's TTL node, and
 *		its waiter child) that this backend must remove whatever ends the
 *		attempt that created it, by background jobs (client/jobs.c) that
 *		outlive the session if need be.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "client/bridge.h"
#include "client/jobs.h"
#include "client/session.h"
#include "client/wait.h"
#include "base/vocabulary.h"
#include "base/clock.h"

/*
 * The guard: a persistent node that this backend must remove.
 *
 * Ephemeral nodes go with the session.  A persistent node that an attempt
 * creates (a lease's TTL node while it waits) does not: if the attempt
 * ends without handing the node on, it must be deleted, whatever ends it.
 * The attempt says before its create where the node will be (parent and
 * protection prefix), then which node it is; the guard then deletes it
 * (or sweeps the prefix) when the attempt is abandoned (ZkGuardRemove,
 * retried across lost connections and, if the session ends first,
 * carried over to the next session), and when the backend exits in the
 * middle of it (ZkGuardRemoveAtExit, before the session is closed).  A
 * granted attempt hands the node on with ZkGuardRelease.  One attempt at
 * a time is guarded.
 */
static char *zk_guard_parent = NULL;	/* TopMemoryContext; NULL: none */
static char *zk_guard_prefix = NULL;
static char *zk_guard_nodes[2];	/* the node once created, then its child */
static int	zk_guard_nnodes = 0;

/*
 * ZkGuardRelease
 *		Forget the guarded attempt: its node was handed on (a lease was
 *		granted), or removed, and there is nothing to remove any more.
 */
void
ZkGuardRelease(void)
{
	if (zk_guard_parent)
		pfree(zk_guard_parent);
	if (zk_guard_prefix)
		pfree(zk_guard_prefix);
	for (int i = 0; i < zk_guard_nnodes; i++)
		pfree(zk_guard_nodes[i]);
	zk_guard_parent = zk_guard_prefix = NULL;
	zk_guard_nnodes = 0;
}

/*
 * ZkGuardBegin
 *		Guard an attempt whose node will be created under 'parent' with a
 *		name starting with 'prefix'.
 */
void
ZkGuardBegin(const char *parent, const char *prefix)
{
	ZkGuardRelease();
	zk_guard_parent = MemoryContextStrdup(TopMemoryContext, parent);
	zk_guard_prefix = MemoryContextStrdup(TopMemoryContext, prefix);
}

/*
 * ZkGuardNode
 *		A node of the guarded attempt exists: first the attempt's node
 *		itself, then (at most one) child of it.  They are deleted in the
 *		opposite order, the child first, as a node with children cannot be.
 */
void
ZkGuardNode(const char *path)
{
	if (zk_guard_parent == NULL)
		return;
	for (int i = 0; i < zk_guard_nnodes; i++)
	{
		if (strcmp(zk_guard_nodes[i], path) == 0)
			return;
	}
	if (zk_guard_nnodes == lengthof(zk_guard_nodes))
		elog(ERROR, "too many guarded ZooKeeper nodes");
	zk_guard_nodes[zk_guard_nnodes++] = MemoryContextStrdup(TopMemoryContext,
															path);
}

/*
 * ZkGuardRemove
 *		The guarded attempt was abandoned: delete its nodes (or sweep its
 *		prefix) and forget them.  The deletes are retried after a lost
 *		connection and carried over to the next session if this one ends
 *		first.  With want_answer, returns an op for ZkReleaseWait (which
 *		frees it) that completes when the deletes have, or when the
 *		session ended; else (or out of memory) NULL.  Raises no ERROR, so
 *		that it may run in PG_CATCH.
 */
ZkOp *
ZkGuardRemove(bool want_answer)
{
	ZkOp	   *op;
	int			n = Max(zk_guard_nnodes, 1);

	if (zk_guard_parent == NULL)
		return NULL;
	op = want_answer ? ZkReleaseOpNew() : NULL;

	/*
	 * Persistent jobs remove the guarded nodes (the last known first), or
	 * sweep the prefix if none is known, counting for the op if any.
	 * ZooKeeper applies them in the order sent.  Without a session, the
	 * jobs are carried over to the next one.
	 */
	for (int i = n - 1; i >= 0; i--)
	{
		if (zk_guard_nnodes > 0)
			ZkJobStart(ZKJOB_DELETE, zk_guard_nodes[i], NULL, op, true);
		else
			ZkJobStart(ZKJOB_SWEEP, zk_guard_parent, zk_guard_prefix,
					   op, true);
	}
	ZkGuardRelease();
	if (op != NULL)
		ZkReleaseOpIssued(op);
	return op;
}

/*
 * ZkGuardRemoveAtExit
 *		The backend exits in the middle of a guarded attempt: remove its
 *		node before the session closes, waiting at most
 *		zklock.connect_timeout.  Interrupts are held during exit, so the
 *		wait is a plain latch wait.  Without a live session nothing can be
 *		sent: the node stays until its TTL runs out or another client
 *		removes it (a waiter deletes a lease node whose taker is gone,
 *		recipes/attempt.c's zk_watch_lease_node).
 */
void
ZkGuardRemoveAtExit(void)
{
	ZkOp	   *op;

	if (zk_guard_parent == NULL || ZkBridgeHandle() == NULL ||
		ZkSessionIsExpired())
		return;
	op = ZkGuardRemove(true);
	if (op == NULL)
		return;					/* out of memory: sent, not waited for */
	(void) ZkWaitStatus(ZK_FOR_ANSWER, op, ZkNowMs() + zklock_connect_timeout,
						ZK_WAIT_THROUGH_OUT_OF_TOUCH | ZK_WAIT_NO_INTERRUPTS);
	ZkOpFree(op);
}
