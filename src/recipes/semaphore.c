/*-------------------------------------------------------------------------
 *
 * recipes/semaphore.c
 *		Counting semaphores, laid out exactly like Apache Curator's
 *		InterProcessSemaphoreV2, so that Curator's InterProcessSemaphoreV2
 *		and InterProcessSemaphoreMutex on the same path count against the
 *		same limit.
 *
 * A semaphore "/s" is the node <zklock.root>/s with two children:
 *
 *		locks/_c_<uuid>-lock-<seq>		a mutex (InterProcessMutex nodes)
 *										that serialises acquirers
 *		leases/_c_<uuid>-lease-<seq>	one node per permit held
 *
 * (Curator calls a permit a lease; here "lease" names only a TTL lease,
 * recipes/lease.c, and the "leases" node is the permits node.)
 *
 * The recipe: take the mutex; create a permit node; while the permits node
 * has more than max_leases children, wait for a change of its children;
 * release the mutex.  Only the one acquirer holding the mutex watches the
 * permit count; the others wait in the mutex queue, each watching the node
 * before it (recipes/attempt.c): a release wakes one waiter, never a herd.
 * Releasing a permit is deleting its node.
 *
 * Round trips. The two creates go out together in one ZooKeeper multi, each
 * with a setData of its parent whose Stat gives the child count right after
 * (ZkCreateSet), pipelined behind a read of the semaphore node's data (the
 * recorded limit). When our mutex node is alone and the permits fit, the permit
 * is ours after that one write; the mutex node is deleted in the background. A
 * semaphore expected to be missing (recipes/path_memory.c) is created by
 * requests sent just before, in the same round trip: its node, with the
 * recorded limit, and its locks and permits nodes. When the mutex is not ours
 * at once, our permit node is deleted straight away (an acquirer that holds the
 * mutex and counts permits must never wait for one held by a waiter behind it),
 * we wait for the mutex, and then create the permit again.
 *
 * The limit.  zklock records max_leases in the semaphore node's data,
 * {"max_leases":N}, when the node has none, and refuses (22023) an
 * acquire with a different limit than the recorded one.  Curator records
 * none: its clients must be given the same limit (the limit of a Curator
 * semaphore lives only in its clients).  Other data there is not zklock's
 * limit: a WARNING names the node, and it is left as it is, unchecked.
 *
 * Deadlocks.  The acquirer waiting for the count publishes its wait: with
 * max_leases = 1 it waits for every other permit holder, an all-of wait
 * that detection follows; with more, any one holder leaving may unblock
 * it, an any-of wait, through which no cycle is reported.  A waiter in the
 * mutex queue waits for the mutex holder like any lock waiter.
 *
 * The mutex node and the permit node are two attempts (recipes/attempt.h) under
 * one protection prefix, abandoned together (ZkAttemptAbandon): however an
 * acquisition ends without the permit, its nodes go.  After a create whose
 * answer was lost, both nodes are looked for by that prefix before
 * anything is created again (ZkAttemptCreate, the loop every recipe
 * shares), so an orphan permit never counts against the limit: the multi
 * made both nodes (they are ours, and the permits are counted again) or
 * neither (the multi is sent again under the same prefix).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "miscadmin.h"

#include "base/contender.h"
#include "cluster/deadlock.h"
#include "cluster/path_kind.h"
#include "cluster/wait_record.h"
#include "recipes/deadlock_timer.h"
#include "recipes/attempt.h"
#include "base/node_data.h"
#include "base/operation_context.h"
#include "recipes/semaphore.h"
#include "base/text_encoding.h"
#include "client/client.h"

/* One acquisition. */
typedef struct ZkSemAttempt
{
	const ZkSemaphoreArgs *args;
	char	   *locks_node;		/* <sem_node>/locks */
	char	   *permits_node;	/* <sem_node>/leases */
	ZkAcquireArgs mutex_args;	/* for the mutex queue */
	ZkAcquireArgs permit_args;	/* for the permits node */
	ZkAttempt  *mutex;			/* our node in the mutex queue; its deadline
								 * is the acquisition's */
	ZkAttempt  *permit;			/* our permit node; its deadlock fields are
								 * the count wait's */
	ZkOperationContext *oper;	/* the acquisition's, from acquiring to
								 * waiting and back */
} ZkSemAttempt;

static int	zk_recorded_limit(const char *node, const char *data, int len);
static void zk_check_limit(ZkSemAttempt *s, ZkOp *data_op);
static void zk_check_kind(ZkSemAttempt *s, ZkOp *data_op);
static bool zk_create_both(ZkSemAttempt *s, bool *mutex_alone,
						   int *npermits);
static void zk_create_permit(ZkSemAttempt *s, int *npermits);
static bool zk_wait_mutex(ZkSemAttempt *s);
static bool zk_wait_count(ZkSemAttempt *s);
static bool zk_check_count_deadlock(ZkSemAttempt *s, char **children,
									int nchildren);
static void zk_forget_node(ZkAttempt *at);
static void zk_new_prefix(ZkSemAttempt *s);

/*
 * zk_recorded_limit
 *		The limit zklock recorded in the data of semaphore node 'node'
 *		(base/node_formats.c), or -1 if the data records none: empty, or data
 *		that is not zklock's limit, which a WARNING names (no client but
 *		zklock writes data there).
 */
static int
zk_recorded_limit(const char *node, const char *data, int len)
{
	int32		max_leases;
	char	   *reason;
	ZkDataVerdict verdict = ZkReadSemaphoreLimit(data, len, &max_leases,
												 &reason);

	if (verdict == ZK_DATA_OK)
		return max_leases;
	if (verdict != ZK_DATA_EMPTY)
		ZkWarnNodeData(node, reason,
					   "The limit of the semaphore is not checked against it.");
	pfree(reason);
	return -1;
}

/*
 * zk_limit_data
 *		The data zklock records a semaphore's limit in.
 */
static char *
zk_limit_data(int max_leases)
{
	return psprintf("{\"max_leases\":%d}", max_leases);
}

/*
 * zk_check_limit
 *		Compare our max_leases with the one recorded on the semaphore node
 *		(the answer of data_op): a different one is 22023; none recorded
 *		and no data at all, ours is recorded (in the background).
 */
static void
zk_check_limit(ZkSemAttempt *s, ZkOp *data_op)
{
	const ZkSemaphoreArgs *args = s->args;
	int			recorded;

	if (data_op->rc != ZOK)
		return;					/* reaped meanwhile, or lost: next time */
	recorded = zk_recorded_limit(args->sem_node, data_op->value,
								 data_op->value_len);
	if (recorded > 0 && recorded != args->max_leases)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ZooKeeper semaphore \"%s\" admits %d permits, not %d",
						ZkUtf8ForMessage(args->sem_path), recorded,
						args->max_leases),
				 errdetail("The semaphore's node records max_leases = %d; this call asked for max_leases = %d.",
						   recorded, args->max_leases),
				 errhint("Every user of a semaphore must give it the same max_leases.")));
	if (recorded < 0 && data_op->value_len <= 0)
	{
		char	   *json = zk_limit_data(args->max_leases);

		ZkOpFree(ZkSetData(args->sem_node, json, (int) strlen(json)));
		pfree(json);
	}
}

/*
 * zk_check_kind
 *		Refuse (22023) a semaphore on a path that a recipe of another kind
 *		uses (cluster/path_kind.c).  The read of the semaphore node (data_op)
 *		counts its children: a semaphore's node has two, "locks" and
 *		"leases", so only a node with more is read again (the one request
 *		this check may cost, never on a semaphore's own path).
 *
 * Our nodes were made by then, with the "locks" and "leases" nodes they
 * needed, which would make the path look like a semaphore's to the next
 * lock until the server reaps them: before the refusal one multi deletes
 * our two nodes and those two, which goes through only if nothing else is
 * in them (else the caller's abandonment deletes ours).
 */
static void
zk_check_kind(ZkSemAttempt *s, ZkOp *data_op)
{
	ZkPathKind	found;
	ZkMultiReq	reqs[4];
	ZkOp	   *op;

	if (data_op->rc != ZOK || data_op->stat.numChildren <= 2)
		return;
	found = ZkPathKindOfNode(s->args->sem_node, ZK_KIND_SEMAPHORE);
	if (found == ZK_KIND_NONE)
		return;

	memset(reqs, 0, sizeof(reqs));
	reqs[0].path = s->mutex->znode;
	reqs[1].path = s->permit->znode;
	reqs[2].path = s->locks_node;
	reqs[3].path = s->permits_node;
	for (int i = 0; i < 4; i++)
	{
		reqs[i].kind = ZK_MULTI_DELETE;
		reqs[i].version = -1;
	}
	op = ZkMulti(4, reqs);
	ZkOpWait(op);
	if (op->rc == ZOK)
	{
		zk_forget_node(s->mutex);
		zk_forget_node(s->permit);
		s->mutex->create_sent = s->permit->create_sent = false;
	}
	ZkOpFree(op);
	ZkPathKindRefuse(s->args->sem_path, ZK_KIND_SEMAPHORE, found);
}

/*
 * zk_forget_node
 *		The attempt no longer has a node (it was deleted, or is swept).
 */
static void
zk_forget_node(ZkAttempt *at)
{
	if (at->znode != NULL)
		pfree(at->znode);
	at->znode = NULL;
	at->name = NULL;
}

/*
 * zk_new_prefix
 *		A fresh protection prefix for both of the acquisition's nodes, after
 *		sweeping the old one's (one of them was found without the other:
 *		another client deleted it).
 */
static void
zk_new_prefix(ZkSemAttempt *s)
{
	if (s->mutex->create_sent)
		ZkSweepInBackground(s->locks_node, s->mutex->prefix);
	if (s->permit->create_sent)
		ZkSweepInBackground(s->permits_node, s->permit->prefix);
	ZkAttemptSetPrefix(s->mutex, NULL);
	ZkAttemptSetPrefix(s->permit, s->mutex->prefix);
	s->mutex->create_sent = s->permit->create_sent = false;
}

/*
 * zk_create_both
 *		Create our mutex node and our permit node in one multi, behind a read
 *		of the semaphore node (the recorded limit), by the create loop
 *		(recipes/attempt_create.c).  Sets *mutex_alone if our mutex node is alone in its
 *		queue, and *npermits to the number of permit nodes right after ours
 *		was made (PG_INT32_MAX when not known: the answer was lost, and both
 *		nodes were found by our prefix).  False if only one of them was
 *		found: another client deleted the other.
 *
 * The semaphore's nodes expected to be missing (recipes/path_memory.c) are
 * created by requests sent just before, without waiting, as for a lock
 * node: the semaphore node with the recorded limit as its data, its locks
 * node, its permits node.
 */
static bool
zk_create_both(ZkSemAttempt *s, bool *mutex_alone, int *npermits)
{
	char	   *limit = zk_limit_data(s->args->max_leases);
	const char *above[1] = {s->args->sem_node};
	const char *above_data[1] = {limit};
	ZkAttempt  *both[2] = {s->mutex, s->permit};
	ZkCreateOpts opts;
	ZkCreateResult res;
	ZkCreateOutcome outcome;

	memset(&opts, 0, sizeof(opts));
	opts.counted = true;
	opts.guess_fresh = true;
	opts.nabove = 1;
	opts.above = above;
	opts.above_data = above_data;
	opts.side_read = s->args->sem_node;
	outcome = ZkAttemptCreate(both, 2, &opts, &res);
	pfree(limit);
	if (outcome == ZK_CREATE_PARTIAL)
		return false;
	if (outcome == ZK_CREATE_RECOVERED)
	{
		/* the mutex is ours if no contender is before our node */
		*mutex_alone = (ZkFindContender(s->mutex->queue, s->mutex->nqueue,
										s->mutex->name) == 0);
		*npermits = PG_INT32_MAX;	/* not known: count them */
		return true;
	}
	*mutex_alone = (s->mutex->siblings == 1);
	*npermits = s->permit->siblings;
	PG_TRY();
	{
		/* the kind first: the limit is recorded on none but ours */
		zk_check_kind(s, res.side);
		zk_check_limit(s, res.side);
	}
	PG_FINALLY();
	{
		ZkOpFree(res.side);
	}
	PG_END_TRY();
	return true;
}

/*
 * zk_wait_mutex
 *		Our mutex node is queued behind others: wait with it as a lock
 *		waiter does (recipes/attempt.c), until the acquisition's deadline.
 */
static bool
zk_wait_mutex(ZkSemAttempt *s)
{
	ZkGrant		g;

	memset(&g, 0, sizeof(g));
	ZkAttemptRereadQueue(s->mutex);
	if (!ZkAttemptWait(s->mutex, &g))
		return false;
	ZkAttemptGrant(s->mutex, &g);
	return true;
}

/*
 * zk_create_permit
 *		Holding the mutex: create our permit node, learning the count of
 *		permit nodes in the same round trip (PG_INT32_MAX when not known:
 *		the answer was lost, and the node was found by its prefix).
 */
static void
zk_create_permit(ZkSemAttempt *s, int *npermits)
{
	ZkCreateOpts opts;
	ZkCreateResult res;

	memset(&opts, 0, sizeof(opts));
	opts.counted = true;
	/* one node: made, or found by its prefix, never in part */
	if (ZkAttemptCreate(&s->permit, 1, &opts, &res) == ZK_CREATE_MADE)
		*npermits = s->permit->siblings;
	else
		*npermits = PG_INT32_MAX;	/* not known: count them */
}

/*
 * zk_check_count_deadlock
 *		deadlock_timeout has passed while waiting for the permit count:
 *		publish the wait (the other permit holders block it) and check.
 *		False if a lost connection cut the check short.
 */
static bool
zk_check_count_deadlock(ZkSemAttempt *s, char **children, int nchildren)
{
	ZkWaitTarget t;
	ZkWaitDesc	wait;
	const char *mine = s->permit->name;

	t.lock_path = s->args->sem_path;
	t.lock_node = s->permits_node;
	t.znode = s->permit->znode;
	t.mode = ZK_MODE_PERMIT;
	t.queued = false;
	t.nahead = 0;
	t.ahead = palloc(sizeof(char *) * Max(nchildren, 1));
	for (int i = 0; i < nchildren; i++)
	{
		if (strcmp(children[i], mine) != 0)
			t.ahead[t.nahead++] = psprintf("%s/%s", s->permits_node,
										   children[i]);
	}
	wait.kind = s->args->max_leases == 1 ? ZK_WAIT_ALL_OF : ZK_WAIT_ANY_OF;
	wait.ntargets = 1;
	wait.targets = &t;
	wait.owner = s->args->data;
	wait.ownerlen = s->args->datalen;
	s->permit->published = true;
	(void) ZkWaitRecordPublish(&wait);
	return ZkDeadlockCheck(&wait);
}

/*
 * zk_wait_count
 *		Holding the mutex, with our permit node made: wait until the permits
 *		node has no more than max_leases children, watching its children.
 *		False when the acquisition's deadline passed (a try); 55P03 when it
 *		was lock_timeout's.  deadlock_timeout's timer runs from the first
 *		sleep on; the caller stops it.
 *
 * Each count finds our permit node among the children, or fails.  Our mutex
 * node is watched by nobody while we count: after each sleep it is asked
 * for in the same round trip as the count, and if another client deleted
 * it we fail (55000), our permit deleted, instead of being granted without
 * it.  The next acquirer may hold the mutex by then and count beside us:
 * each would count the other's permit, and with one permit free neither
 * would ever be granted.
 */
static bool
zk_wait_count(ZkSemAttempt *s)
{
	const ZkSemaphoreArgs *args = s->args;
	ZkAttempt  *permit = s->permit;
	bool		slept = false;

	for (;;)
	{
		ZkOp	   *mutex_op = NULL;
		ZkOp	   *op;
		int			mutex_rc = ZOK;
		bool		found = false;
		int			n;
		int			event;

		if (slept)
			mutex_op = ZkExists(s->mutex->znode);
		ZkWatchArm(s->permits_node, ZK_WATCH_BLOCKER);
		op = ZkGetChildrenWatched(s->permits_node);
		ZkOpWait(op);
		if (mutex_op != NULL)
		{
			/* answers come in order: it is in */
			ZkOpWait(mutex_op);
			mutex_rc = mutex_op->rc;
			ZkOpFree(mutex_op);
		}
		if (ZkIsConnectionLoss(op->rc) || ZkIsConnectionLoss(mutex_rc))
		{
			int			lost = ZkIsConnectionLoss(op->rc) ? op->rc : mutex_rc;

			ZkOpFree(op);
			(void) ZkAwaitReconnect(lost);
			continue;
		}
		if (op->rc != ZOK && op->rc != ZNONODE)
		{
			int			rc = op->rc;

			ZkOpFree(op);
			ZkRaiseForRc(rc);
		}
		if (mutex_rc != ZOK)
		{
			ZkOpFree(op);
			if (mutex_rc == ZNONODE)
				ZkAttemptRaiseDisappeared(s->mutex, false);
			ZkRaiseForRc(mutex_rc);
		}
		for (int i = 0; i < op->nchildren; i++)
			found |= (strcmp(op->children[i], permit->name) == 0);
		n = op->nchildren;
		if (!found)
		{
			ZkOpFree(op);
			/* a lost session deletes it too: reported as such */
			ZkSessionRaiseUnlessAlive();
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("ZooKeeper semaphore permit node \"%s\" disappeared",
							ZkUtf8ForMessage(permit->znode)),
					 errdetail("Another client deleted the node.")));
		}
		if (n <= args->max_leases)
		{
			ZkOpFree(op);
			return true;
		}
		if (args->wait_ms == 0)
		{
			ZkOpFree(op);
			return false;
		}

		while (ZkDeadlockTimerWait(s->mutex->deadline, &event))
		{
			/* deadlock_timeout passed: check; again later if cut short */
			if (!permit->checked_deadlock)
			{
				permit->checked_deadlock =
					zk_check_count_deadlock(s, op->children, n);
				if (!permit->checked_deadlock)
					ZkDeadlockTimerAgain();
			}
		}
		ZkOpFree(op);
		if (event == 0)
		{
			if (s->mutex->is_lock_timeout)
				ZkRaiseLockTimeout(ZK_WAITED_FOR_SEMAPHORE, args->sem_path);
			return false;
		}
		slept = true;
		/* the children changed: count again (and watch again) */
	}
}

/*
 * zk_sem_acquire
 *		The recipe (see the file header).  False when a try's deadline
 *		passed.
 */
static bool
zk_sem_acquire(ZkSemAttempt *s)
{
	bool		mutex_alone;
	int			npermits;
	bool		granted;

	/*
	 * After a lost answer both nodes are looked for by our prefix before
	 * anything is created again, so that no orphan permit ever counts
	 * against the limit.  The multi made both or neither: one found without
	 * the other was deleted by another client: sweep, start afresh.
	 */
	while (!zk_create_both(s, &mutex_alone, &npermits))
	{
		zk_forget_node(s->mutex);
		zk_forget_node(s->permit);
		zk_new_prefix(s);
	}

	if (!mutex_alone)
	{
		/* never hold a permit while waiting behind the mutex holder */
		ZkDeleteInBackground(s->permit->znode);
		zk_forget_node(s->permit);
		ZkOperationSet(s->oper, ZK_OPER_WAIT_SEMAPHORE, s->args->sem_path);
		if (!zk_wait_mutex(s))
			return false;
		ZkOperationSet(s->oper, ZK_OPER_ACQUIRE_SEMAPHORE, s->args->sem_path);
		zk_create_permit(s, &npermits);
	}
	/* PG_INT32_MAX: not known (after a lost answer): zk_wait_count counts */
	if (npermits <= s->args->max_leases)
		return true;
	ZkOperationSet(s->oper, ZK_OPER_WAIT_SEMAPHORE, s->args->sem_path);
	granted = zk_wait_count(s);
	ZkDeadlockTimerStop();		/* an ERROR's stop is ZkAttemptAbandon's */
	return granted;
}

/*
 * ZkSemaphoreAcquire
 *		Take one permit of a semaphore.  Waits at most args->wait_ms (then
 *		returns false), or with wait_ms < 0 as long as needed, bounded by
 *		lock_timeout if set (then ERROR 55P03).  However it ends without
 *		the permit, its nodes are deleted.  On success grant->znode is the
 *		permit node and grant->token its czxid.  Errors name the semaphore
 *		as acquired, or as waited for while its mutex or its permit count
 *		is.
 */
bool
ZkSemaphoreAcquire(const ZkSemaphoreArgs *args, ZkGrant *grant)
{
	ZkOperationContext oc;
	ZkSemAttempt *s = palloc0(sizeof(ZkSemAttempt));
	ZkAttempt  *both[2];
	bool		granted;

	ZkOperationPush(&oc, ZK_OPER_ACQUIRE_SEMAPHORE, args->sem_path);
	s->oper = &oc;
	s->args = args;
	s->locks_node = psprintf("%s/locks", args->sem_node);
	s->permits_node = psprintf("%s/leases", args->sem_node);
	s->mutex_args.lock_node = s->locks_node;
	s->mutex_args.lock_path = args->sem_path;
	s->mutex_args.mode = ZK_MODE_EXCLUSIVE;
	s->mutex_args.style = ZK_STYLE_MUTEX;
	s->mutex_args.wait_ms = args->wait_ms;
	s->mutex_args.waited_for = ZK_WAITED_FOR_SEMAPHORE;
	s->mutex_args.data = args->data;
	s->mutex_args.datalen = args->datalen;
	s->permit_args = s->mutex_args;
	s->permit_args.lock_node = s->permits_node;
	s->permit_args.mode = ZK_MODE_PERMIT;
	/* the mutex attempt begins first, with a fresh prefix for both */
	s->mutex = ZkAttemptBegin(&s->mutex_args, NULL);
	s->permit = ZkAttemptBegin(&s->permit_args, s->mutex->prefix);
	both[0] = s->permit;
	both[1] = s->mutex;
	memset(grant, 0, sizeof(*grant));

	PG_TRY();
	{
		granted = zk_sem_acquire(s);
	}
	PG_CATCH();
	{
		ZkAttemptAbandon(both, 2, false);
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (granted)
	{
		ZkAttemptGrant(s->permit, grant);
		/* the mutex has done its work: let the next acquirer count */
		ZkDeleteInBackground(s->mutex->znode);
	}
	else
		ZkAttemptAbandon(both, 2, true);
	pfree(s->mutex->znode);
	ZkAttemptFree(s->mutex);
	ZkAttemptFree(s->permit);
	pfree(s->locks_node);
	pfree(s->permits_node);
	pfree(s);
	ZkOperationPop(&oc);
	return granted;
}
