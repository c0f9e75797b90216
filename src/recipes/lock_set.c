/*-------------------------------------------------------------------------
 *
 * recipes/lock_set.c
 *		The ZooKeeper read/write lock recipe, for one lock or for several
 *		taken at once, all or none (a lock alone is a set of one).
 *
 * A lock "/a/b" is the node <zklock.root>/a/b (created, with its parents,
 * as container nodes, which the server reaps once empty).  To take it, a
 * backend creates an ephemeral-sequential child named like Apache
 * Curator's InterProcessReadWriteLock nodes with its protection prefix:
 *
 *		_c_<uuid>-__WRIT__<seq>		exclusive
 *		_c_<uuid>-__READ__<seq>		shared
 *
 * where <uuid> is fresh for every attempt.  With zklock.exclusive_node_style
 * = 'mutex' an exclusive node is named like Curator's InterProcessMutex
 * nodes instead, _c_<uuid>-lock-<seq>, so that zklock and InterProcessMutex
 * wait in one queue (a mutex queue has no readers).
 *
 * The children of the lock node, ordered by sequence, are the queue
 * (base/contender.c says which children count and what each one's mode is).
 * Waiting in it, deadlock detection, the recovery of a create whose
 * answer was lost and the removal of an abandoned attempt's node are the
 * attempt steps every recipe on this queue shares (recipes/attempt.c).
 *
 * The queue nodes of every lock of the set are created in one ZooKeeper
 * multi (ZkCreateSet), each with an (empty) setData of its lock node,
 * whose answer carries the lock node's child count right after our create
 * (ZkAttemptCreateLocks).  A count of one means our node is alone: the
 * lock is ours, and an uncontended acquire costs one write and no read.
 * Otherwise the queue is read once.  One transaction puts the whole set
 * into every queue at the same point of ZooKeeper's total order, so
 * whatever order two sets list their locks in, one of them is ahead of
 * the other in every queue they share: sets never deadlock with each
 * other.  Every node of the set has the same
 * czxid, the transaction's zxid: the set's one fencing token.
 *
 * Then the backend waits with each node in turn (recipes/attempt.c's wait,
 * herd-free as for a single lock).  Waiting for the nodes one after the
 * other costs nothing: they are all queued already, so the set is granted
 * as soon as the last of them is.  While waiting, deadlock detection sees
 * the set as one wait for all of its nodes not granted yet.
 *
 * Release.  The nodes of released locks are deleted together
 * (ZkDeleteNodes: one delete, or multis of deletes however many they
 * are; holds/batch.c batches them), and ZkReleaseWait waits until
 * ZooKeeper applied them (synchronous release); the deletes are retried
 * after a lost connection until done.  Uncontended, a set costs one write
 * to take and one to release.
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
 *		at most args[0].wait_ms for all (then returns false), or with
 *		wait_ms < 0 as long as needed, bounded by lock_timeout if set (then
 *		ERROR 55P03).  However it ends without the locks (false, timeout,
 *		cancel, any ERROR), no node is left behind.  On success grants[i]
 *		holds node i, and every grant has the same token.  Errors name the
 *		set's first lock as acquired, and each lock as it is waited for.
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
		/* a lock alone stays waited for; a set verifies its nodes */
		if (n > 1)
		{
			ZkOperationSet(&oc, ZK_OPER_ACQUIRE_LOCK, args[0].lock_path);
			if (granted && ZkWatchWaitCount() != waits_before)
				zk_verify_set(at, n);
		}
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
