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
 * (common/contender.c says which children count and what each one's mode is).
 * Waiting in it, deadlock detection, the recovery of a create whose
 * answer was lost and the removal of an abandoned attempt's node are the
 * attempt steps every recipe on this queue shares (recipes/attempt.c).
 *
 * Round trips.  The create is sent as one ZooKeeper multi together with
 * an (empty) setData of the lock node, whose answer carries the lock
 * node's child count right after our create (ZkCreateCounted).  A count of
 * one means our node is alone: the lock is ours, and an uncontended
 * acquire costs one write and no read.  Otherwise the queue is read once.
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
#include "common/operation_context.h"
#include "recipes/path_memory.h"
#include "client/client.h"

static void zk_create_node(ZkAttempt *at);

/*
 * zk_create_node
 *		Create our queue node and learn the queue: one write when the node
 *		is alone (ZkCreateCounted), plus one read of the queue otherwise.
 *		Returns with at->znode set and the queue known.
 *
 * A lock node expected to be missing (recipes/path_memory.c) is created by a
 * request sent just before the queue node's, without waiting: ZooKeeper
 * applies a session's requests in order, so one round trip still does.
 * (Not in the same multi: the C client misreads the answer to a container
 * create inside a multi.)  When the guess was wrong, the lock node's create
 * is refused and the queue node's goes through all the same; when a lock
 * node expected to exist is missing, the queue node's create is refused
 * and sent again with the lock node's.  Where the lock node's data cannot
 * be set (an ACL that allows creating children but not writing the node),
 * the create and a getChildren are sent back to back instead: still one
 * round trip.
 */
static void
zk_create_node(ZkAttempt *at)
{
	const ZkAcquireArgs *args = at->args;
	bool		counted = true;
	bool		fresh = ZkGuessFresh(args->lock_node);
	bool		learnt = false; /* told recipes/path_memory.c how the node was */

	for (;;)
	{
		ZkOp	   *make = NULL;
		ZkOp	   *create;
		ZkOp	   *list = NULL;
		int			rc;
		bool		made = fresh;	/* the lock node's create was sent */

		CHECK_FOR_INTERRUPTS();
		if (made)
			make = ZkCreate(args->lock_node, "", 0, ZOO_CONTAINER, true);
		at->create_sent = true;
		if (counted)
			create = ZkCreateCounted(at->node_base, args->data, args->datalen,
									 args->lock_node);
		else
		{
			create = ZkCreate(at->node_base, args->data, args->datalen,
							  ZOO_EPHEMERAL_SEQUENTIAL, true);
			list = ZkGetChildren(args->lock_node);
		}

		/*
		 * Answers come in order: once the last is in, so are the others,
		 * and the backend is woken once.
		 */
		if (list != NULL)
			ZkOpWait(list);
		ZkOpWait(create);
		(void) ZkCollectFreshCreates(&make, &args->lock_node, 1, &learnt,
									 &fresh);
		rc = create->rc;
		if (rc == ZOK)
		{
			bool		alone = counted && create->parent_children == 1;
			bool		ok = false;

			if (!learnt)
				ZkLearnFresh(args->lock_node, false);
			ZkAttemptCreated(at, create->value, create->stat.czxid, alone);
			ZkOpFree(create);
			if (alone)
				return;
			if (list != NULL)
			{
				ok = ZkAttemptTakeQueue(at, list);
				ZkOpFree(list);
			}
			if (!ok)
			{
				ZkWaitConnected();
				ZkAttemptRereadQueue(at);
			}
			return;
		}
		ZkOpFree(create);
		ZkOpFree(list);

		if (rc == ZNONODE && !made && zklock_guess_fresh_paths)
		{
			/* the lock node is gone: make it with our node */
			if (!learnt)
				ZkLearnFresh(args->lock_node, true);
			learnt = true;
			fresh = true;
		}
		else if (rc == ZNONODE)
		{
			/* a parent of the lock node is missing (too) */
			ZkCreateLockParents(&args->lock_node, 1);
			fresh = false;
		}
		else if (rc == ZNOAUTH && counted)
			counted = false;	/* maybe only the setData was refused */
		else if (ZkIsConnectionLoss(rc))
		{
			ZkWaitConnected();
			if (ZkAttemptRecover(at))
				return;
		}
		else
			ZkRaiseForRc(rc);
	}
}

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
		zk_create_node(at);
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

