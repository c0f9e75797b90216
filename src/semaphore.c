/*-------------------------------------------------------------------------
 *
 * semaphore.c
 *		Counting semaphores, laid out exactly like Apache Curator's
 *		InterProcessSemaphoreV2, so that Curator's InterProcessSemaphoreV2
 *		and InterProcessSemaphoreMutex on the same path count against the
 *		same limit.
 *
 * A semaphore "/s" is the node <zklock.root>/s with two children:
 *
 *		locks/_c_<uuid>-lock-<seq>		a mutex (InterProcessMutex nodes)
 *										that serialises acquirers
 *		leases/_c_<uuid>-lease-<seq>	one node per lease held
 *
 * The recipe: take the mutex; create a lease node; while the leases node
 * has more than max_leases children, wait for a change of its children;
 * release the mutex.  Only the one acquirer holding the mutex watches the
 * lease count; the others wait in the mutex queue, each watching the node
 * before it (lock_recipe.c): a release wakes one waiter, never a herd.
 * Releasing a lease is deleting its node.
 *
 * Round trips.  The two creates go out together in one ZooKeeper multi,
 * each with a setData of its parent whose Stat gives the child count right
 * after (ZkCreateSet), pipelined behind a read of the semaphore node's
 * data (the recorded limit).  When our mutex node is alone and the leases
 * fit, the lease is ours after that one write; the mutex node is deleted
 * in the background.  A semaphore expected to be missing (path_memory.c)
 * is created by requests sent just before, in the same round trip: its
 * node, with the recorded limit, and its locks and leases nodes.  When the
 * mutex is not ours at once, our lease node is deleted straight away (an
 * acquirer that holds the mutex and counts leases must never wait for one
 * held by a waiter behind it), we wait for the mutex, and then create the
 * lease again.
 *
 * The limit.  zklock records max_leases in the semaphore node's data,
 * {"max_leases":N}, when the node has none, and refuses (22023) an
 * acquire with a different limit than the recorded one.  Curator records
 * none: its clients must be given the same limit (the limit of a Curator
 * semaphore lives only in its clients).
 *
 * Deadlocks.  The acquirer waiting for the count publishes its wait: with
 * max_leases = 1 it waits for every other lease holder, an all-of wait
 * that detection follows; with more, any one holder leaving may unblock
 * it, an any-of wait, through which no cycle is reported.  A waiter in the
 * mutex queue waits for the mutex holder like any lock waiter.
 *
 * However an attempt ends without the lease, its nodes go; after a create
 * whose answer was lost, the attempt's prefix is swept from both parents.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/jsonapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "storage/proc.h"

#include "contender.h"
#include "deadlock.h"
#include "lock_attempt.h"
#include "path_memory.h"
#include "semaphore.h"
#include "text_encoding.h"
#include "zk_session.h"

#define WHAT_ACQUIRE	"acquiring semaphore"
#define WHAT_WAIT		"waiting for semaphore"
#define LEASE_MARKER	"lease-"

/* One acquisition. */
typedef struct ZkSemAttempt
{
	const ZkSemaphoreArgs *args;
	char	   *locks_node;		/* <sem_node>/locks */
	char	   *leases_node;	/* <sem_node>/leases */
	char		prefix[ZK_PREFIX_LEN + 1];
	bool		create_sent;	/* nodes with our prefix may exist */
	char	   *mutex_znode;	/* our node in the mutex queue */
	char	   *lease_znode;	/* our lease node */
	int64		token;			/* the lease node's czxid */
	ZkAcquireArgs mutex_args;	/* for the mutex queue */
	int64		start;
	int64		deadline;		/* monotonic ms; 0: none */
	bool		is_lock_timeout;
	bool		published;		/* our count wait is published */
} ZkSemAttempt;

/* The semaphore node's data as far as it records a limit. */
typedef struct ZkLimitParse
{
	int			depth;
	bool		in_field;
	int			max_leases;		/* -1: none recorded */
} ZkLimitParse;

static void zk_limit_ofield(void *state, char *fname, bool isnull);
static void zk_limit_scalar(void *state, char *token, JsonTokenType type);
static void zk_limit_object_start(void *state);
static void zk_limit_object_end(void *state);
static int	zk_recorded_limit(const char *data, int len);
static void zk_check_limit(ZkSemAttempt *s, ZkOp *data_op);
static bool zk_create_both(ZkSemAttempt *s, bool *mutex_alone,
						   int *nleases);
static void zk_create_lease(ZkSemAttempt *s, int *nleases);
static bool zk_wait_mutex(ZkSemAttempt *s);
static bool zk_wait_count(ZkSemAttempt *s);
static bool zk_check_count_deadlock(ZkSemAttempt *s, char **children,
									int nchildren);
static void zk_sem_abandon(ZkSemAttempt *s, bool wait);
static void zk_new_prefix(ZkSemAttempt *s);

/* JSON semantic actions: the top-level "max_leases" number, if any. */
static void
zk_limit_object_start(void *state)
{
	((ZkLimitParse *) state)->depth++;
}

static void
zk_limit_object_end(void *state)
{
	((ZkLimitParse *) state)->depth--;
}

static void
zk_limit_ofield(void *state, char *fname, bool isnull)
{
	ZkLimitParse *p = (ZkLimitParse *) state;

	p->in_field = (p->depth == 1 && strcmp(fname, "max_leases") == 0);
}

static void
zk_limit_scalar(void *state, char *token, JsonTokenType type)
{
	ZkLimitParse *p = (ZkLimitParse *) state;

	if (p->in_field && type == JSON_TOKEN_NUMBER)
	{
		char	   *end;
		long		v = strtol(token, &end, 10);

		if (*end == '\0' && v >= 1 && v <= PG_INT32_MAX)
			p->max_leases = (int) v;
	}
	p->in_field = false;
}

/*
 * zk_recorded_limit
 *		The limit zklock recorded in a semaphore node's data, or -1 if the
 *		data records none (empty, not JSON, written by another client).
 */
static int
zk_recorded_limit(const char *data, int len)
{
	ZkLimitParse p = {0, false, -1};
	JsonSemAction sem;
	JsonLexContext *lex;
	char	   *copy;

	if (data == NULL || len <= 0)
		return -1;
	copy = pnstrdup(data, len);
	memset(&sem, 0, sizeof(sem));
	sem.semstate = &p;
	sem.object_start = zk_limit_object_start;
	sem.object_end = zk_limit_object_end;
	sem.object_field_start = zk_limit_ofield;
	sem.scalar = zk_limit_scalar;
	lex = makeJsonLexContextCstringLen(copy, len, PG_UTF8, true);
	if (pg_parse_json(lex, &sem) != JSON_SUCCESS)
		p.max_leases = -1;
	pfree(copy);
	return p.max_leases;
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
	recorded = zk_recorded_limit(data_op->value, data_op->value_len);
	if (recorded > 0 && recorded != args->max_leases)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ZooKeeper semaphore \"%s\" admits %d leases, not %d",
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
 * zk_new_prefix
 *		A fresh protection prefix, after sweeping the old one's nodes (a
 *		create whose answer was lost may have made them).
 */
static void
zk_new_prefix(ZkSemAttempt *s)
{
	if (s->create_sent)
	{
		ZkSweepInBackground(s->locks_node, s->prefix);
		ZkSweepInBackground(s->leases_node, s->prefix);
	}
	ZkMakeNodePrefix(s->prefix);
	s->create_sent = false;
}

/*
 * zk_create_both
 *		Create our mutex node and our lease node in one multi, behind a read
 *		of the semaphore node (the recorded limit).  Sets *mutex_alone if
 *		our mutex node is alone in its queue, and *nleases to the number of
 *		lease nodes right after ours was made.  False if the answer was
 *		lost (the caller starts over with a fresh prefix).
 *
 * The semaphore's nodes expected to be missing (path_memory.c) are created
 * by requests sent just before, without waiting, as lock_recipe.c does
 * for a lock node: the semaphore node with the recorded limit as its data,
 * its locks node, its leases node.
 */
static bool
zk_create_both(ZkSemAttempt *s, bool *mutex_alone, int *nleases)
{
	const ZkSemaphoreArgs *args = s->args;
	const char *paths[2];
	const char *datas[2];
	int			lens[2];
	const char *parents[2];
	char	   *mutex_base = psprintf("%s/%s%s", s->locks_node, s->prefix,
									  ZK_MUTEX_MARKER);
	char	   *lease_base = psprintf("%s/%s%s", s->leases_node, s->prefix,
									  LEASE_MARKER);
	char	   *limit = zk_limit_data(args->max_leases);
	const char *nodes[3];
	bool		make[3];
	bool		learnt[3] = {false, false, false};	/* told path_memory.c */

	paths[0] = mutex_base;
	paths[1] = lease_base;
	datas[0] = datas[1] = args->data;
	lens[0] = lens[1] = args->datalen;
	parents[0] = s->locks_node;
	parents[1] = s->leases_node;
	nodes[0] = args->sem_node;
	nodes[1] = s->locks_node;
	nodes[2] = s->leases_node;
	for (int i = 0; i < 3; i++)
		make[i] = ZkGuessFresh(nodes[i]);

	for (;;)
	{
		ZkOp	   *makes[3] = {NULL, NULL, NULL};
		ZkOp	   *data_op;
		ZkOp	   *op;
		int			rc;
		int			failed;
		bool		parent_missing = false;

		CHECK_FOR_INTERRUPTS();
		for (int i = 0; i < 3; i++)
		{
			if (make[i])
				makes[i] = ZkCreate(nodes[i], i == 0 ? limit : "",
									i == 0 ? (int) strlen(limit) : 0,
									ZOO_CONTAINER, true);
		}
		data_op = ZkGetData(args->sem_node, ZK_NO_WATCH);
		s->create_sent = true;
		op = ZkCreateSet(2, paths, datas, lens, parents);

		/* answers come in order: once the multi's is in, so are the others */
		ZkOpWait(op, WHAT_ACQUIRE, args->sem_path);
		ZkOpWait(data_op, WHAT_ACQUIRE, args->sem_path);
		for (int i = 0; i < 3; i++)
		{
			int			make_rc;

			if (makes[i] == NULL)
				continue;
			ZkOpWait(makes[i], WHAT_ACQUIRE, args->sem_path);
			make_rc = makes[i]->rc;
			ZkOpFree(makes[i]);
			if (make_rc == ZOK || make_rc == ZNODEEXISTS)
			{
				if (!learnt[i])
					ZkLearnFresh(nodes[i], make_rc == ZOK);
				learnt[i] = true;
				make[i] = false;	/* it exists now */
			}
			else if (make_rc == ZNONODE)
				parent_missing = true;
		}
		rc = op->rc;
		if (rc == ZOK)
		{
			int32		nmutex;
			int32		nlease;

			for (int i = 0; i < 3; i++)
			{
				if (!learnt[i])
					ZkLearnFresh(nodes[i], false);
			}
			s->mutex_znode = pstrdup(ZkCreateSetResult(op, 0, &nmutex));
			s->lease_znode = pstrdup(ZkCreateSetResult(op, 1, &nlease));
			s->token = op->stat.czxid;
			ZkOpFree(op);
			*mutex_alone = (nmutex == 1);
			*nleases = nlease;
			PG_TRY();
			{
				zk_check_limit(s, data_op);
			}
			PG_FINALLY();
			{
				ZkOpFree(data_op);
			}
			PG_END_TRY();
			pfree(mutex_base);
			pfree(lease_base);
			pfree(limit);
			return true;
		}
		failed = ZkCreateSetFailure(op);
		ZkOpFree(op);
		ZkOpFree(data_op);
		if (rc == ZNONODE && !parent_missing && failed >= 0 &&
			!learnt[1 + failed] && zklock_guess_fresh_paths)
		{
			/* that node is gone, maybe the semaphore's too: make them */
			ZkLearnFresh(nodes[1 + failed], true);
			learnt[1 + failed] = true;
			make[1 + failed] = true;
			make[0] = !learnt[0];
		}
		else if (rc == ZNONODE)
		{
			/* the semaphore node or one of its parents is missing */
			ZkCreateLockParents(parents, 2, args->sem_path);
			make[0] = make[1] = make[2] = false;
		}
		else if (ZkIsConnectionLoss(rc))
		{
			ZkWaitConnected(WHAT_ACQUIRE, args->sem_path);
			pfree(mutex_base);
			pfree(lease_base);
			pfree(limit);
			return false;
		}
		else
			ZkRaiseForRc(rc, WHAT_ACQUIRE, args->sem_path);
	}
}

/*
 * zk_wait_mutex
 *		Our mutex node is queued behind others: wait with it as a lock
 *		waiter does (lock_recipe.c), until the attempt's deadline.
 */
static bool
zk_wait_mutex(ZkSemAttempt *s)
{
	ZkAttempt  *at = ZkAttemptBegin(&s->mutex_args, s->prefix);
	ZkGrant		g;
	bool		granted;

	at->start = s->start;
	at->deadline = s->deadline;
	at->is_lock_timeout = s->is_lock_timeout;
	ZkAttemptCreated(at, s->mutex_znode, s->token, false);
	memset(&g, 0, sizeof(g));
	PG_TRY();
	{
		ZkAttemptRereadQueue(at);
		granted = ZkAttemptWait(at, &g);
	}
	PG_CATCH();
	{
		if (at->published)
			ZkDeadlockWithdraw();
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (granted)
		ZkAttemptGrant(at, &g);
	else if (at->published)
		ZkDeadlockWithdraw();
	ZkAttemptFree(at);
	return granted;
}

/*
 * zk_create_lease
 *		Holding the mutex: create our lease node, learning the count of
 *		lease nodes in the same round trip.
 */
static void
zk_create_lease(ZkSemAttempt *s, int *nleases)
{
	const ZkSemaphoreArgs *args = s->args;

	for (;;)
	{
		char	   *base = psprintf("%s/%s%s", s->leases_node, s->prefix,
									LEASE_MARKER);
		ZkOp	   *op;
		int			rc;

		CHECK_FOR_INTERRUPTS();
		s->create_sent = true;
		op = ZkCreateCounted(base, args->data, args->datalen, s->leases_node);
		pfree(base);
		ZkOpWait(op, WHAT_ACQUIRE, args->sem_path);
		rc = op->rc;
		if (rc == ZOK)
		{
			s->lease_znode = pstrdup(op->value);
			s->token = op->stat.czxid;
			*nleases = op->parent_children;
			ZkOpFree(op);
			return;
		}
		ZkOpFree(op);
		if (rc == ZNONODE)
			ZkCreateLockParents((const char **) &s->leases_node, 1,
								args->sem_path);
		else if (ZkIsConnectionLoss(rc))
		{
			/* the lease may exist: sweep it, try under a fresh prefix */
			ZkWaitConnected(WHAT_ACQUIRE, args->sem_path);
			ZkSweepInBackground(s->leases_node, s->prefix);
			ZkMakeNodePrefix(s->prefix);
		}
		else
			ZkRaiseForRc(rc, WHAT_ACQUIRE, args->sem_path);
	}
}

/*
 * zk_check_count_deadlock
 *		deadlock_timeout has passed while waiting for the lease count:
 *		publish the wait (the other lease holders block it) and check.
 *		False if a lost connection cut the check short.
 */
static bool
zk_check_count_deadlock(ZkSemAttempt *s, char **children, int nchildren)
{
	ZkWaitTarget t;
	ZkWaitDesc	wait;
	const char *mine = strrchr(s->lease_znode, '/') + 1;

	t.lock_path = s->args->sem_path;
	t.lock_node = s->leases_node;
	t.znode = s->lease_znode;
	t.mode = ZK_MODE_LEASE;
	t.nahead = 0;
	t.ahead = palloc(sizeof(char *) * Max(nchildren, 1));
	for (int i = 0; i < nchildren; i++)
	{
		if (strcmp(children[i], mine) != 0)
			t.ahead[t.nahead++] = psprintf("%s/%s", s->leases_node,
										   children[i]);
	}
	wait.kind = s->args->max_leases == 1 ? ZK_WAIT_ALL_OF : ZK_WAIT_ANY_OF;
	wait.ntargets = 1;
	wait.targets = &t;
	s->published = true;
	(void) ZkDeadlockPublish(&wait);
	return ZkDeadlockCheck(&wait);
}

/*
 * zk_wait_count
 *		Holding the mutex, with our lease node made: wait until the leases
 *		node has no more than max_leases children, watching its children.
 *		False when the attempt's deadline passed (a try); 55P03 when it was
 *		lock_timeout's.
 */
static bool
zk_wait_count(ZkSemAttempt *s)
{
	const ZkSemaphoreArgs *args = s->args;
	const char *mine = strrchr(s->lease_znode, '/') + 1;
	int64		check_at = s->start + DeadlockTimeout;
	bool		checked = false;

	for (;;)
	{
		ZkOp	   *op;
		bool		found = false;
		int			n;
		int			event;

		ZkWatchArm(s->leases_node);
		op = ZkGetChildrenWatched(s->leases_node);
		ZkOpWait(op, WHAT_WAIT, args->sem_path);
		if (ZkIsConnectionLoss(op->rc))
		{
			ZkOpFree(op);
			ZkWaitConnected(WHAT_WAIT, args->sem_path);
			continue;
		}
		if (op->rc != ZOK && op->rc != ZNONODE)
		{
			int			rc = op->rc;

			ZkOpFree(op);
			ZkRaiseForRc(rc, WHAT_WAIT, args->sem_path);
		}
		for (int i = 0; i < op->nchildren; i++)
			found |= (strcmp(op->children[i], mine) == 0);
		n = op->nchildren;
		if (!found)
		{
			ZkOpFree(op);
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("ZooKeeper lease node \"%s\" disappeared while acquiring semaphore \"%s\"",
							ZkUtf8ForMessage(s->lease_znode),
							ZkUtf8ForMessage(args->sem_path)),
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

		for (;;)
		{
			int64		until = s->deadline;

			if (!checked && (until == 0 || check_at < until))
				until = check_at;
			event = ZkWatchWait(until, WHAT_WAIT, args->sem_path);
			if (event != 0)
				break;
			if (!checked && until == check_at)
			{
				checked = zk_check_count_deadlock(s, op->children, n);
				if (!checked)
					check_at = ZkNowMs() + DeadlockTimeout;
				continue;
			}
			ZkOpFree(op);
			if (s->is_lock_timeout)
				ereport(ERROR,
						(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
						 errmsg("canceling statement due to lock timeout"),
						 errdetail("Waiting for ZooKeeper semaphore \"%s\".",
								   ZkUtf8ForMessage(args->sem_path))));

			return false;
		}
		ZkOpFree(op);
		/* the children changed: count again (and watch again) */
	}
}

/*
 * zk_sem_abandon
 *		The attempt ends without a lease: its nodes go, in one batch (with
 *		'wait' and synchronous release, waited for as a release is; in
 *		PG_CATCH in the background).
 */
static void
zk_sem_abandon(ZkSemAttempt *s, bool wait)
{
	const char *znodes[2];
	int			n = 0;

	if (s->published)
		ZkDeadlockWithdraw();
	s->published = false;
	if (s->lease_znode != NULL)
		znodes[n++] = s->lease_znode;
	if (s->mutex_znode != NULL)
		znodes[n++] = s->mutex_znode;
	if (n > 0)
	{
		ZkOp	   *op = ZkReleaseSend(znodes, n, wait && zklock_synchronous_release);

		if (op != NULL)
			(void) ZkReleaseWait(op);
	}
	if (s->create_sent && (s->lease_znode == NULL || s->mutex_znode == NULL))
	{
		ZkSweepInBackground(s->locks_node, s->prefix);
		ZkSweepInBackground(s->leases_node, s->prefix);
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
	int			nleases;

	while (!zk_create_both(s, &mutex_alone, &nleases))
		zk_new_prefix(s);

	if (!mutex_alone)
	{
		/* never hold a lease while waiting behind the mutex holder */
		ZkDeleteInBackground(s->lease_znode);
		pfree(s->lease_znode);
		s->lease_znode = NULL;
		if (!zk_wait_mutex(s))
			return false;
		zk_create_lease(s, &nleases);
	}
	if (nleases <= s->args->max_leases)
		return true;
	return zk_wait_count(s);
}

/*
 * ZkSemaphoreAcquire
 *		Take one lease of a semaphore.  Waits at most args->wait_ms (then
 *		returns false), or with wait_ms < 0 as long as needed, bounded by
 *		lock_timeout if set (then ERROR 55P03).  However it ends without
 *		the lease, its nodes are deleted.  On success grant->znode is the
 *		lease node and grant->token its czxid.
 */
bool
ZkSemaphoreAcquire(const ZkSemaphoreArgs *args, ZkGrant *grant)
{
	ZkSemAttempt *s = palloc0(sizeof(ZkSemAttempt));
	bool		granted;

	s->args = args;
	s->locks_node = psprintf("%s/locks", args->sem_node);
	s->leases_node = psprintf("%s/leases", args->sem_node);
	s->start = ZkNowMs();
	if (args->wait_ms > 0)
		s->deadline = s->start + args->wait_ms;
	else if (args->wait_ms < 0 && LockTimeout > 0)
	{
		s->deadline = s->start + LockTimeout;
		s->is_lock_timeout = true;
	}
	ZkMakeNodePrefix(s->prefix);
	s->mutex_args.lock_node = s->locks_node;
	s->mutex_args.lock_path = args->sem_path;
	s->mutex_args.mode = ZK_MODE_EXCLUSIVE;
	s->mutex_args.style = ZK_STYLE_MUTEX;
	s->mutex_args.wait_ms = args->wait_ms;
	s->mutex_args.data = args->data;
	s->mutex_args.datalen = args->datalen;
	memset(grant, 0, sizeof(*grant));

	PG_TRY();
	{
		granted = zk_sem_acquire(s);
	}
	PG_CATCH();
	{
		zk_sem_abandon(s, false);
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (granted)
	{
		if (s->published)
			ZkDeadlockWithdraw();
		/* the mutex has done its work: let the next acquirer count */
		ZkDeleteInBackground(s->mutex_znode);
		grant->znode = s->lease_znode;
		grant->token = s->token;
	}
	else
		zk_sem_abandon(s, true);
	pfree(s->mutex_znode);
	pfree(s->locks_node);
	pfree(s->leases_node);
	pfree(s);
	return granted;
}
