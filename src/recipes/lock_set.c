/*-------------------------------------------------------------------------
 *
 * recipes/lock_set.c
 *		The atomic multi-lock: several locks taken at once, all or none.
 *
 * The queue nodes of every lock of the set are created in one ZooKeeper
 * multi (ZkCreateSet), each with a setData of its lock node that tells,
 * in the same answer, whether the node is alone in its queue.  One
 * transaction puts the whole set into every queue at the same point of
 * ZooKeeper's total order, so whatever order two sets list their locks
 * in, one of them is ahead of the other in every queue they share: sets
 * never deadlock with each other.  Every node of the set has the same
 * czxid, the transaction's zxid: the set's one fencing token.
 *
 * Then the backend waits with each node in turn (recipes/attempt.c's wait,
 * herd-free as for a single lock).  Waiting for the nodes one after the
 * other costs nothing: they are all queued already, so the set is granted
 * as soon as the last of them is.  While waiting, deadlock detection sees
 * the set as one wait for all of its nodes not granted yet.
 *
 * Round trips, uncontended: one write for the set, one for its release
 * (the batch of released nodes, holds/batch.c, deletes them in one multi).
 *
 * However an attempt ends without the locks (a try that gives up, a
 * timeout, cancel, an error) every node of the set goes (ZkAttemptAbandon):
 * the created ones are deleted, and after a create whose answer was lost,
 * the set's protection prefix is swept from every lock node.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "cluster/path_kind.h"
#include "recipes/attempt.h"
#include "recipes/lock_set.h"
#include "base/operation_context.h"
#include "client/client.h"

static void zk_verify_set(ZkAttempt **at, int n);
static void zk_raise_set_incomplete(int n, int found);

/*
 * zk_raise_set_incomplete
 *		Some of the set's nodes are gone: another client deleted them (the
 *		operation's context names the set's first lock).
 */
static void
zk_raise_set_incomplete(int n, int found)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("queue nodes of a multi-lock disappeared"),
			 errdetail("Only %d of the %d nodes created together still exist; another client deleted the others.",
					   found, n)));
}

/*
 * zk_verify_set
 *		Before a set that waited is granted: every node of the set must
 *		still exist.  The set waits with its nodes one after the other, and
 *		a node whose lock was granted earlier (alone in its queue, say) is
 *		not read again meanwhile: without this, another client's deletion
 *		of it would go unseen, and the set would be granted a lock that
 *		someone else can take.  One round trip, the exists requests
 *		pipelined; a set granted without waiting needs none (its nodes
 *		were just created).
 */
static void
zk_verify_set(ZkAttempt **at, int n)
{
	ZkOp	  **ops = palloc(sizeof(ZkOp *) * n);
	int			found = 0;

	for (int i = 0; i < n; i++)
		ops[i] = ZkExists(at[i]->znode);
	for (int i = 0; i < n; i++)
	{
		int			rc;

		ZkOpWait(ops[i]);
		rc = ops[i]->rc;
		ZkOpFree(ops[i]);
		ops[i] = NULL;
		if (rc == ZOK)
			found++;
		else if (rc != ZNONODE)
		{
			for (int j = i + 1; j < n; j++)
				ZkOpFree(ops[j]);
			ZkRaiseForRc(rc);
		}
	}
	pfree(ops);
	if (found < n)
		zk_raise_set_incomplete(n, found);
}

/*
 * ZkAcquireSet
 *		Take n locks (args[i], on distinct lock nodes) all at once.  Waits
 *		as ZkAcquire does (args[0].wait_ms for all); returns false if a try
 *		did not get every one of them, leaving no node behind.  On success
 *		grants[i] holds node i, and every grant has the same token.  Errors
 *		name the set's first lock as acquired, and each lock as it is
 *		waited for.
 */
bool
ZkAcquireSet(const ZkAcquireArgs *args, int n, ZkGrant *grants)
{
	ZkOperationContext oc;
	ZkAttempt **at = palloc(sizeof(ZkAttempt *) * n);
	char		prefix[ZK_PREFIX_LEN + 1];
	int			shape;
	bool		granted = true;

	ZkOperationPush(&oc, ZK_OPER_ACQUIRE_LOCK, args[0].lock_path);
	/* one protection prefix: the set is one attempt, and one wait */
	shape = n;
	for (int i = 0; i < n; i++)
		shape = Min(shape, ZkAttemptShape(&args[i], n));
	ZkMakeNodePrefix(prefix, shape);
	for (int i = 0; i < n; i++)
	{
		at[i] = ZkAttemptBegin(&args[i], prefix);
		at[i]->group = at;
		at[i]->ngroup = n;
	}
	memset(grants, 0, sizeof(ZkGrant) * n);

	PG_TRY();
	{
		uint64		waits_before;

		/*
		 * The multi made every node or none: a set found in part after a
		 * lost answer was tampered with by another client.
		 */
		if (ZkAttemptCreateLocks(at, n, &oc) == ZK_CREATE_PARTIAL)
		{
			int			found = 0;

			for (int i = 0; i < n; i++)
				found += at[i]->znode != NULL ? 1 : 0;
			zk_raise_set_incomplete(n, found);
		}
		/* each queue as the set's create found it (cluster/path_kind.c) */
		for (int i = 0; i < n; i++)
			ZkPathKindCheck(args[i].lock_path, ZK_KIND_LOCK,
							(const char *const *) at[i]->names,
							at[i]->nnames);
		waits_before = ZkWatchWaitCount();
		for (int i = 0; i < n && granted; i++)
		{
			ZkOperationSet(&oc, ZK_OPER_WAIT_LOCK, args[i].lock_path);
			granted = ZkAttemptWait(at[i], &grants[i]);
		}
		ZkOperationSet(&oc, ZK_OPER_ACQUIRE_LOCK, args[0].lock_path);
		if (granted && ZkWatchWaitCount() != waits_before)
			zk_verify_set(at, n);
	}
	PG_CATCH();
	{
		ZkAttemptAbandon(at, n, false);
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (granted)
	{
		for (int i = 0; i < n; i++)
			ZkAttemptGrant(at[i], &grants[i]);
	}
	else
		ZkAttemptAbandon(at, n, true);
	for (int i = 0; i < n; i++)
		ZkAttemptFree(at[i]);
	pfree(at);
	ZkOperationPop(&oc);
	return granted;
}
