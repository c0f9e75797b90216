/*-------------------------------------------------------------------------
 *
 * recipes/barrier.c
 *		Barriers laid out like Apache Curator's DistributedBarrier (and
 *		kazoo's Barrier): the barrier at a path is up while its node exists.
 *
 * The barrier "/b" is the persistent node <zklock.root>/b; its parents are
 * created as container nodes, as for locks.  Raising it creates the node,
 * removing it deletes the node, and waiting sets a data watch on the node
 * (a getData, which leaves no watch behind when the node is missing) and
 * sleeps until the node is gone: never a poll.  The watch fires once
 * for any change of the node; whatever fired it, the wait checks again.
 * A wait is a wait like a lock's: cancel and statement_timeout end it with
 * their ERROR, lock_timeout (when no wait_ms is given) with 55P03.
 *
 * A path is used by one kind of recipe at a time (cluster/path_kind.c).
 * A barrier's node has no children; one whose children are another
 * recipe's (a lock's queue, a semaphore's nodes, a double barrier's
 * participants) is not a barrier, and every barrier function refuses it
 * (22023) where it meets it: raising finds the node there, waiting reads
 * its Stat (which counts the children) anyway, removing is refused
 * because the node has children.  So the check costs a request only on a
 * node that has children.  A lock node its last users left empty is a
 * node without children until ZooKeeper reaps it (a container): until
 * then the barrier functions take it for a barrier that is up.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "cluster/path_kind.h"
#include "recipes/barrier.h"
#include "recipes/attempt.h"
#include "base/operation_context.h"
#include "base/text_encoding.h"
#include "client/client.h"

/*
 * zk_parent_of
 *		The parent node of a node (palloc'd).
 */
static char *
zk_parent_of(const char *node)
{
	const char *slash = strrchr(node, '/');

	return pnstrdup(node, slash > node ? slash - node : 1);
}

/*
 * ZkBarrierSet
 *		Raise the barrier whose node is 'node' (the user's 'path', for
 *		messages): true if this call created the node, false if it existed.
 *		After a lost connection a create is sent again; a node then found
 *		existing counts as ours (the first create may have been applied).
 *		A node found there whose children are another recipe's is 22023.
 */
bool
ZkBarrierSet(const char *node, const char *path)
{
	ZkOperationContext oc;
	bool		resent = false;
	int			rc;

	ZkOperationPush(&oc, ZK_OPER_RAISE_BARRIER, path);
	for (;;)
	{
		bool		again;

		rc = ZkOpResult(ZkCreateAnswered(node, "", 0, ZOO_PERSISTENT, &again));
		resent |= again;
		if (rc == ZOK)
			break;
		if (rc == ZNODEEXISTS)
		{
			/* up already, unless the node is another kind's */
			ZkPathKindCheckNode(node, path, ZK_KIND_BARRIER);
			break;
		}
		if (rc == ZNONODE)
		{
			char	   *parent = zk_parent_of(node);

			ZkCreateLockParents((const char *const *) &parent, 1);
			pfree(parent);
		}
		else
			ZkRaiseForRc(rc);
	}
	ZkOperationPop(&oc);
	return rc == ZOK || resent;
}

/*
 * ZkBarrierRemove
 *		Remove the barrier: true if this call deleted its node, false if it
 *		was not up.  A node with children is not a barrier's: 22023 if the
 *		children are another recipe's, else 55000 (a lock path below it).
 */
bool
ZkBarrierRemove(const char *node, const char *path)
{
	ZkOperationContext oc;
	bool		resent = false;
	int			rc;

	ZkOperationPush(&oc, ZK_OPER_REMOVE_BARRIER, path);
	rc = ZkDeleteAnswered(node, -1, &resent);
	if (rc == ZNOTEMPTY)
	{
		/* another recipe's node: 22023 naming both kinds */
		ZkPathKindCheckNode(node, path, ZK_KIND_BARRIER);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("ZooKeeper barrier \"%s\" cannot be removed: its node has children",
						ZkUtf8ForMessage(path)),
				 errdetail("The node \"%s\" is used by a lock, a semaphore or a double barrier.",
						   ZkUtf8ForMessage(node))));
	}
	if (rc != ZOK && rc != ZNONODE)
		ZkRaiseForRc(rc);
	ZkOperationPop(&oc);
	return rc == ZOK || resent;
}

/*
 * ZkBarrierWait
 *		Wait until the barrier is down: true at once if it is not up, true
 *		when it goes, false once wait_ms has passed (0: do not wait); with
 *		wait_ms < 0 as long as needed, bounded by lock_timeout (55P03).
 */
bool
ZkBarrierWait(const char *node, const char *path, int64 wait_ms)
{
	ZkOperationContext oc;
	bool		is_lock_timeout;
	int64		deadline = ZkWaitDeadline(ZkNowMs(), wait_ms, &is_lock_timeout);
	ZkNodeAwait outcome;

	ZkOperationPush(&oc, ZK_OPER_WAIT_BARRIER, path);
	do
	{
		ZkOp	   *op;
		int			rc;
		bool		has_children;

		/* a data watch is set only on a node that exists: none is left */
		ZkWatchArm(node);
		op = ZkGetData(node, ZK_WATCH_BLOCKER);
		ZkOpWait(op);
		rc = op->rc;
		has_children = (rc == ZOK && op->stat.numChildren > 0);
		ZkOpFree(op);
		/* a node with children may be another kind's (see the file header) */
		if (has_children)
			ZkPathKindCheckNode(node, path, ZK_KIND_BARRIER);
		outcome = ZkAwaitNodeGone(rc, deadline);
	} while (outcome == ZK_NODE_CHANGED);
	if (outcome == ZK_NODE_WAIT_OVER && is_lock_timeout)
		ZkRaiseLockTimeout(ZK_WAITED_FOR_BARRIER, path);
	ZkOperationPop(&oc);
	return outcome == ZK_NODE_GONE;
}

/*
 * ZkAwaitNodeGone
 *		The rest of one look at a node a barrier waits to see go, once the
 *		getData that watches it (ZK_WATCH_BLOCKER, the node armed with
 *		ZkWatchArm) has answered 'rc'.  ZK_NODE_GONE: the node does not
 *		exist.  ZK_NODE_CHANGED: the connection was lost (this returns once
 *		it is back), or the node exists and the watch fired before
 *		deadline_ms; either way, look again.  ZK_NODE_WAIT_OVER: the node
 *		exists and the deadline passed first.  Any other answer is raised.
 */
ZkNodeAwait
ZkAwaitNodeGone(int rc, int64 deadline_ms)
{
	if (rc == ZNONODE)
		return ZK_NODE_GONE;
	if (ZkAwaitReconnect(rc))
		return ZK_NODE_CHANGED;
	if (rc != ZOK)
		ZkRaiseForRc(rc);

	/* there: sleep until the watch fires (any change: look again) */
	if (ZkWatchWait(deadline_ms) != 0)
		return ZK_NODE_CHANGED;
	return ZK_NODE_WAIT_OVER;
}
