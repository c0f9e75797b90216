/*-------------------------------------------------------------------------
 *
 * recipes/rwlock.c
 *		The ZooKeeper read/write lock recipe.
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
 * Round trips.  The create is sent as one ZooKeeper multi together with
 * an (empty) setData of the lock node, whose answer carries the lock
 * node's child count right after our create (ZkAttemptCreateLocks).  A
 * count of one means our node is alone: the lock is ours, and an
 * uncontended acquire costs one write and no read.  Otherwise the queue is
 * read once.
 *
 * Release.  The nodes of released locks are deleted together
 * (ZkDeleteNodes: one delete, or multis of deletes however many they
 * are), and ZkReleaseWait waits until ZooKeeper applied them (synchronous
 * release); the deletes are retried after a lost connection until done.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "cluster/path_kind.h"
#include "recipes/attempt.h"
#include "recipes/rwlock.h"
#include "base/operation_context.h"
#include "client/client.h"

/*
 * ZkAcquire
 *		Take a lock by the recipe.  Waits at most args->wait_ms (then returns
 *		false), or with wait_ms < 0 as long as needed, bounded by
 *		lock_timeout if set (then ERROR 55P03).  However it ends without the
 *		lock (false, timeout, cancel, any ERROR), our node is deleted.
 *		Errors name the lock as acquired, then as waited for.
 */
bool
ZkAcquire(const ZkAcquireArgs *args, ZkGrant *grant)
{
	ZkOperationContext oc;
	ZkAttempt  *at;
	bool		granted;

	ZkOperationPush(&oc, ZK_OPER_ACQUIRE_LOCK, args->lock_path);
	at = ZkAttemptBegin(args, NULL);
	memset(grant, 0, sizeof(*grant));
	PG_TRY();
	{
		(void) ZkAttemptCreateLocks(&at, 1, NULL);
		/* the queue as the create found it: no request of its own */
		ZkPathKindCheck(args->lock_path, ZK_KIND_LOCK,
						(const char *const *) at->names, at->nnames);
		ZkOperationSet(&oc, ZK_OPER_WAIT_LOCK, args->lock_path);
		granted = ZkAttemptWait(at, grant);
	}
	PG_CATCH();
	{
		ZkAttemptAbandon(&at, 1, false);
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (granted)
		ZkAttemptGrant(at, grant);
	else
		ZkAttemptAbandon(&at, 1, true);
	ZkAttemptFree(at);
	ZkOperationPop(&oc);
	return granted;
}

