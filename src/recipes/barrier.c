/*-------------------------------------------------------------------------
 *
 * recipes/barrier.c
 *		Barriers laid out like Apache Curator's DistributedBarrier (and
 *		kazoo's Barrier): the barrier at a path is up while a barrier's node
 *		is there.
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
 * What is a barrier.  The barrier is up while a node at its path is a
 * barrier's node.  Curator's DistributedBarrier makes it with create()
 * (persistent, with the client's default data: its IP address), kazoo's
 * Barrier with ensure_path (persistent, empty), zk_barrier_set persistent
 * with the data ZK_BARRIER_MARK.  The nodes other recipes leave at a path
 * are containers made to hold children: the parents of every lock,
 * semaphore and double barrier path (zklock's and Curator's), and a lock's
 * own node, all with empty data, the semaphore's node with its recorded
 * limit.  ZooKeeper does not tell a client which nodes are containers
 * (their Stat shows ephemeralOwner 0, as a persistent node's), so the rule
 * reads what a client sees, the node's Stat and data:
 *
 *		a node that never had a child (cversion 0) is a barrier's: nothing
 *		made it to hold children;
 *		a node that has had children is a barrier's if its data is not
 *		empty and not a semaphore's limit (zklock's mark, Curator's address);
 *		else it is no barrier: an empty-data parent or lock node, with
 *		children now or left empty until ZooKeeper reaps it.
 *
 * So "/b" is not up because a lock "/b/child" or "/b" made or left its node
 * there.  The price: a foreign barrier with empty data (kazoo's) below
 * which another path was used reads as down from then on.  Hence:
 *
 *		wait		a node that is no barrier's: down, true (its watch is
 *					dropped again);
 *		set			such a node without children is deleted
 *					(version-checked, as ZooKeeper's reaper would delete a
 *					container: every recipe that creates below it makes
 *					its parents again) and the barrier's node created; one
 *					with children (paths below in use) cannot become a
 *					barrier's node: 55000;
 *		remove		deletes only a barrier's node (version-checked, so a
 *					node written in between is looked at again); any other
 *					is a barrier that is not up: false, left alone.
 *
 * A path is used by one kind of recipe at a time (cluster/path_kind.c).
 * A node whose children are another recipe's (a lock's queue, a
 * semaphore's nodes, a double barrier's participants) is not a barrier,
 * and every barrier function refuses it (22023) where it meets it: each
 * reads the node's Stat, which counts the children, and lists them only
 * when there are some.  A barrier whose node has other children (a lock
 * path below it, "/b/child") is still up, and cannot be removed while they
 * are there (55000).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "cluster/path_kind.h"
#include "recipes/barrier.h"
#include "recipes/attempt.h"
#include "base/node_formats.h"
#include "base/operation_context.h"
#include "base/text_encoding.h"
#include "client/client.h"

/* the data of a barrier's node as zk_barrier_set makes it */
#define ZK_BARRIER_MARK "zklock barrier"

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
 * zk_is_barrier_node
 *		Is the node whose Stat and data these are a barrier's (see the file
 *		header): one that never had a child, or one whose data is not empty
 *		and not a semaphore's recorded limit.
 */
static bool
zk_is_barrier_node(const struct Stat *stat, const char *data, int len)
{
	int32		limit;
	char	   *reason;

	if (stat->cversion == 0)
		return true;
	return len > 0 &&
		ZkReadSemaphoreLimit(data, len, &limit, &reason) != ZK_DATA_OK;
}

/*
 * zk_look_at_node
 *		Take the answer to 'op', a getData of 'node', which it frees:
 *		ZNONODE if there is none, a lost connection (never after
 *		ZkGetDataAnswered), else ZOK with its Stat in *stat and whether it
 *		is a barrier's in *is_barrier.  Any other answer is raised.  A node
 *		with children is checked for another recipe's (22023).
 */
static int
zk_look_at_node(ZkOp *op, const char *node, const char *path,
				struct Stat *stat, bool *is_barrier)
{
	int			rc;

	ZkOpWait(op);
	rc = op->rc;
	if (rc == ZOK)
	{
		*stat = op->stat;
		*is_barrier = zk_is_barrier_node(&op->stat, op->value, op->value_len);
	}
	ZkOpFree(op);
	if (rc != ZOK && rc != ZNONODE && !ZkIsConnectionLoss(rc))
		ZkRaiseForRc(rc);
	if (rc == ZOK && stat->numChildren > 0)
		ZkPathKindCheckNode(node, path, ZK_KIND_BARRIER);
	return rc;
}

/*
 * ZkBarrierSet
 *		Raise the barrier whose node is 'node' (the user's 'path', for
 *		messages): true if this call created the node, false if it existed.
 *		The node is persistent, with the data ZK_BARRIER_MARK.
 *		After a lost connection a create is sent again; a node then found
 *		existing counts as ours (the first create may have been applied).
 *		A node found there whose children are another recipe's is 22023; a
 *		node that is no barrier's is deleted if empty, 55000 if paths below
 *		it are in use (see the file header).
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
		bool		is_barrier;
		struct Stat stat;

		CHECK_FOR_INTERRUPTS();
		rc = ZkOpResult(ZkCreateAnswered(node, ZK_BARRIER_MARK,
										 (int) strlen(ZK_BARRIER_MARK),
										 ZOO_PERSISTENT, &again));
		resent |= again;
		if (rc == ZOK)
			break;
		if (rc == ZNONODE)
		{
			char	   *parent = zk_parent_of(node);

			ZkCreateLockParents((const char *const *) &parent, 1);
			pfree(parent);
			continue;
		}
		if (rc != ZNODEEXISTS)
			ZkRaiseForRc(rc);

		/* up already, unless the node is another kind's or no barrier's */
		if (zk_look_at_node(ZkGetDataAnswered(node, ZK_NO_WATCH), node, path,
							&stat, &is_barrier) == ZNONODE)
			continue;			/* gone since: create again */
		if (is_barrier)
			break;
		if (stat.numChildren > 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("ZooKeeper barrier \"%s\" cannot be raised while paths below it are in use",
							ZkUtf8ForMessage(path)),
					 errdetail("The node \"%s\" was made to hold the nodes of paths below \"%s\" (it has had children, and its data is no barrier's), and it cannot become a barrier's node while they are there.",
							   ZkUtf8ForMessage(node), ZkUtf8ForMessage(path)),
					 errhint("Raise the barrier once the paths below it are unused, or use another path for the barrier.")));
		/* an empty parent left behind, as ZooKeeper's reaper deletes it */
		rc = ZkDeleteAnswered(node, stat.version, &again);
		if (rc != ZOK && rc != ZNONODE && rc != ZNOTEMPTY && rc != ZBADVERSION)
			ZkRaiseForRc(rc);
		/* whatever came of it, look again */
	}
	ZkOperationPop(&oc);
	return rc == ZOK || resent;
}

/*
 * ZkBarrierRemove
 *		Remove the barrier: true if this call deleted its node, false if it
 *		was not up (no node, or a node that is no barrier's).  A node with
 *		children is not removed: 22023 if the children are another recipe's,
 *		else 55000 (a path below it is in use).
 */
bool
ZkBarrierRemove(const char *node, const char *path)
{
	ZkOperationContext oc;
	bool		resent = false;
	int			rc;

	ZkOperationPush(&oc, ZK_OPER_REMOVE_BARRIER, path);
	for (;;)
	{
		struct Stat stat;
		bool		again;
		bool		is_barrier;

		CHECK_FOR_INTERRUPTS();
		if (zk_look_at_node(ZkGetDataAnswered(node, ZK_NO_WATCH), node, path,
							&stat, &is_barrier) == ZNONODE || !is_barrier)
		{
			rc = ZNONODE;		/* not up */
			break;
		}
		rc = ZkDeleteAnswered(node, stat.version, &again);
		resent |= again;
		if (rc == ZBADVERSION)
			continue;			/* written since: look again */
		break;
	}
	if (rc == ZNOTEMPTY)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("ZooKeeper barrier \"%s\" cannot be removed while paths below it are in use",
						ZkUtf8ForMessage(path)),
				 errdetail("The barrier's node \"%s\" has children: the nodes of paths below \"%s\".",
						   ZkUtf8ForMessage(node), ZkUtf8ForMessage(path)),
				 errhint("Remove the barrier once the paths below it are unused.")));
	if (rc != ZOK && rc != ZNONODE)
		ZkRaiseForRc(rc);
	ZkOperationPop(&oc);
	return rc == ZOK || resent;
}

/*
 * ZkBarrierWait
 *		Wait until the barrier is down: true at once if it is not up, true
 *		when it goes, false once wait_ms has passed (0: do not wait); with
 *		wait_ms < 0 as long as needed, bounded by lock_timeout (55P03).  A
 *		node at the path that is no barrier's: down (see the file header).
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
		int			rc;
		struct Stat stat;
		bool		is_barrier;

		/* a data watch is set only on a node that exists: none is left */
		ZkWatchArm(node, ZK_WATCH_BLOCKER);
		rc = zk_look_at_node(ZkGetData(node, ZK_WATCH_BLOCKER), node, path,
							 &stat, &is_barrier);
		if (rc == ZOK && !is_barrier)
		{
			/* no barrier's node: the barrier is down; no watch needed */
			ZkWatchDrop(node);
			outcome = ZK_NODE_GONE;
			break;
		}
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
