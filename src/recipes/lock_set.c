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
 * (holds/table.c deletes a set's nodes in one multi).
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
#include "common/operation_context.h"
#include "recipes/path_memory.h"
#include "client/client.h"

static void zk_create_set(ZkAttempt **at, int n, ZkOperationContext *oc);
static void zk_read_queues(ZkAttempt **at, int n);
static bool zk_recover_set(ZkAttempt **at, int n);
static void zk_verify_set(ZkAttempt **at, int n);
static void zk_raise_set_incomplete(int n, int found);

/*
 * zk_read_queues
 *		Read the queue of every attempt that is not alone in it, all
 *		getChildren pipelined: one round trip.
 */
static void
zk_read_queues(ZkAttempt **at, int n)
{
	ZkOp	  **ops = palloc0(sizeof(ZkOp *) * n);
	bool		lost = false;

	for (int i = 0; i < n; i++)
	{
		if (at[i]->nqueue == 0)
			ops[i] = ZkGetChildren(at[i]->args->lock_node);
	}
	for (int i = 0; i < n; i++)
	{
		if (ops[i] == NULL)
			continue;
		ZkOpWait(ops[i]);
		if (!lost && !ZkAttemptTakeQueue(at[i], ops[i]))
			lost = true;
		ZkOpFree(ops[i]);
		ops[i] = NULL;
	}
	pfree(ops);
	if (!lost)
		return;
	/* a lost connection: read them one by one once it is back */
	ZkWaitConnected();
	for (int i = 0; i < n; i++)
	{
		if (at[i]->nqueue == 0)
			ZkAttemptRereadQueue(at[i]);
	}
}

/*
 * zk_recover_set
 *		After a set's create whose answer was lost: the multi either made
 *		every node or none.  True if it made them (each attempt then knows
 *		its node and queue); false if none exists.  A set found in part
 *		was tampered with by another client: ERROR.
 */
static bool
zk_recover_set(ZkAttempt **at, int n)
{
	int			found = 0;

	for (int i = 0; i < n; i++)
		found += ZkAttemptRecover(at[i]) ? 1 : 0;
	if (found == 0)
		return false;
	if (found < n)
		zk_raise_set_incomplete(n, found);
	return true;
}

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
 * zk_create_set
 *		Create the set's nodes in one multi and learn each queue: one write
 *		when every node is alone, plus one pipelined read of the queues
 *		where it is not.
 *
 * Lock nodes expected to be missing (recipes/path_memory.c) are created by
 * requests sent just before the multi, without waiting for them, as
 * recipes/rwlock.c does for one lock.  Where a lock node's data cannot be set
 * (an ACL that allows creating children but not writing the node), the
 * multi holds only the creates, and every queue is read.  A request the
 * server refused is raised naming its own lock in the context 'oc'.
 */
static void
zk_create_set(ZkAttempt **at, int n, ZkOperationContext *oc)
{
	const char **paths = palloc(sizeof(char *) * n);
	const char **datas = palloc(sizeof(char *) * n);
	int		   *lens = palloc(sizeof(int) * n);
	const char **parents = palloc(sizeof(char *) * n);
	bool	   *fresh = palloc(sizeof(bool) * n);
	bool	   *learnt = palloc0(sizeof(bool) * n);	/* told recipes/path_memory.c */
	ZkOp	  **makes = palloc0(sizeof(ZkOp *) * n);
	bool		counted = true;

	for (int i = 0; i < n; i++)
	{
		paths[i] = at[i]->node_base;
		datas[i] = at[i]->args->data;
		lens[i] = at[i]->args->datalen;
		parents[i] = at[i]->args->lock_node;
		fresh[i] = ZkGuessFresh(parents[i]);
	}

	for (;;)
	{
		ZkOp	   *op;
		int			rc;
		int			failed;
		bool		parent_missing;

		CHECK_FOR_INTERRUPTS();
		for (int i = 0; i < n; i++)
		{
			if (fresh[i])
				makes[i] = ZkCreate(parents[i], "", 0, ZOO_CONTAINER, true);
		}
		for (int i = 0; i < n; i++)
			at[i]->create_sent = true;
		op = ZkCreateSet(n, paths, datas, lens, counted ? parents : NULL);

		/* answers come in order: once the multi's is in, so are the others */
		ZkOpWait(op);
		parent_missing = ZkCollectFreshCreates(makes, parents, n, learnt, fresh);
		rc = op->rc;
		if (rc == ZOK)
		{
			int64		token = op->stat.czxid;

			for (int i = 0; i < n; i++)
			{
				int32		nchildren;
				const char *znode = ZkCreateSetResult(op, i, &nchildren);

				if (!learnt[i])
					ZkLearnFresh(parents[i], false);
				ZkAttemptCreated(at[i], znode, token, nchildren == 1);
			}
			ZkOpFree(op);
			if (!counted)
			{
				/* the token: the czxid every node of the set shares */
				for (;;)
				{
					ZkOp	   *ex = ZkExists(at[0]->znode);

					ZkOpWait(ex);
					rc = ex->rc;
					token = ex->stat.czxid;
					ZkOpFree(ex);
					if (rc == ZOK)
						break;
					if (!ZkIsConnectionLoss(rc))
						ZkRaiseForRc(rc);
					ZkWaitConnected();
				}
				for (int i = 0; i < n; i++)
					at[i]->token = token;
			}
			zk_read_queues(at, n);
			break;
		}
		failed = ZkCreateSetFailure(op);
		ZkOpFree(op);

		if (rc == ZNONODE && !parent_missing && failed >= 0 && !fresh[failed] &&
			!learnt[failed] && zklock_guess_fresh_paths)
		{
			/*
			 * That lock node is gone.  The refusal names only the first
			 * missing one, and the reaper may have taken others of the set
			 * since they were last seen: make every lock node not seen in
			 * this attempt, so that one more round trip does.
			 */
			ZkLearnFresh(parents[failed], true);
			learnt[failed] = true;
			for (int i = 0; i < n; i++)
				fresh[i] = !learnt[i] || i == failed;
		}
		else if (rc == ZNONODE)
		{
			/* a parent of a lock node is missing, or a node was reaped */
			ZkCreateLockParents(parents, n);
			memset(fresh, 0, sizeof(bool) * n);
		}
		else if (rc == ZNOAUTH && counted)
			counted = false;	/* maybe only a setData was refused */
		else if (ZkIsConnectionLoss(rc))
		{
			ZkWaitConnected();
			if (zk_recover_set(at, n))
				break;
		}
		else
		{
			ZkOperationSet(oc, ZK_OPER_ACQUIRE_LOCK,
						   at[failed >= 0 ? failed : 0]->args->lock_path);
			ZkRaiseForRc(rc);
		}
	}
	pfree(paths);
	pfree(datas);
	pfree(lens);
	pfree(parents);
	pfree(fresh);
	pfree(learnt);
	pfree(makes);
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
	bool		granted = true;

	ZkOperationPush(&oc, ZK_OPER_ACQUIRE_LOCK, args[0].lock_path);
	/* one protection prefix: the set is one attempt */
	ZkMakeNodePrefix(prefix);
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

		zk_create_set(at, n, &oc);
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
