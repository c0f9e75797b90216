/*-------------------------------------------------------------------------
 *
 * holds/acquire.c
 *		Taking locks: the lock table's acquisition entry points, each
 *		counted in the statistics.
 *
 * Every way the backend takes something calls its recipe from here: a lock in
 * one mode or a set of locks at once (recipes/lock_set.c), a
 * semaphore's permit (recipes/semaphore.c), a lease (recipes/lease.c) and a
 * double barrier's membership (recipes/double_barrier.c). What is granted is
 * entered in the table (holds/table.c), except a lease, which belongs to no
 * backend and is only recorded for the check at COMMIT (holds/commit.c).
 *
 * Taking a lock the backend holds already in the same mode is a counter
 * increment, with no ZooKeeper round trip.  Downgrade is taken by the
 * recipe and kept safe by the table.  Upgrade (write while holding only
 * read) is an ERROR for zklock's own functions; zk_advisory's take it as
 * PostgreSQL does (ZkLockAcquire), waiting for the other readers
 * only (recipes/attempt.c).
 *
 * Each acquisition is counted in the statistics (base/stats.c): how it ended
 * (granted, refused, or the ERROR that ended it) and whether it waited for
 * another client's node.  Counting costs nothing unless zklock is
 * preloaded.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/timestamp.h"

#include "recipes/barrier.h"
#include "recipes/lease.h"
#include "holds/holds.h"
#include "holds/internal.h"
#include "recipes/lock_set.h"
#include "base/node_data.h"
#include "base/operation_context.h"
#include "recipes/semaphore.h"
#include "base/stats.h"
#include "base/text_encoding.h"
#include "base/vocabulary.h"
#include "client/client.h"

/* Which recipe a counted acquisition runs. */
typedef enum ZkRecipe
{
	ZK_RECIPE_LOCK,				/* ZkAcquireSet(args, 1, result) */
	ZK_RECIPE_SET,				/* ZkAcquireSet(args, n, result) */
	ZK_RECIPE_SEMAPHORE,		/* ZkSemaphoreAcquire(args, result) */
	ZK_RECIPE_LEASE,			/* ZkLeaseAcquire(args, result) */
	ZK_RECIPE_ENTER				/* ZkDoubleBarrierEnter(...), its member
								 * given as a ZkGrant */
} ZkRecipe;

/*
 * An acquisition counted in the statistics (base/stats.c): the recipe it runs
 * with its arguments, and what counting it needs.
 */
typedef struct ZkCountedCall
{
	ZkRecipe	recipe;
	void	   *args;			/* the recipe's arguments */
	void	   *result;			/* where it puts what it granted */
	int			n;				/* a set: how many locks */
	/* a double barrier's entry */
	const char *node;
	const char *path;
	int			members;
	int64		wait_ms;
	const char *data;
	int			datalen;
	/* for the statistics */
	ZkStatKind	kind;
	ZkLockMode	mode;
	ZkLockScope scope;
	uint64		watch_waits;	/* ZkWatchWaitCount() at the start */
	TimestampTz start;			/* when the recipe was called */
} ZkCountedCall;

static void zk_stat_begin(ZkCountedCall *call, ZkStatKind kind,
						  ZkLockMode mode, ZkLockScope scope);
static void zk_stat_end(ZkCountedCall *call, ZkStatOutcome outcome);
static void zk_stat_failed(ZkCountedCall *call);
static bool zk_run_enter(const ZkCountedCall *c);
static bool zk_run_recipe(const ZkCountedCall *c);
static bool zk_counted(ZkCountedCall *call);
static void zk_acquire_begin(void);
static void zk_check_mode_allowed(const char *path, ZkLockMode mode,
								  ZkLockEntry *other);
static ZkLockEntry *zk_held_entry(const char *path, ZkLockMode mode);
static bool zk_stack_hold(ZkLockEntry *entry, ZkLockScope scope,
						  ZkCountedCall *call, int64 *token);
static ZkLockEntry *zk_take_node(ZkCountedCall *call, const char *path,
								 ZkLockMode mode, ZkLockEntry *other);
static void zk_acquire_args(ZkAcquireArgs *args, const char *path,
							ZkLockMode mode, ZkLockScope scope,
							ZkLockEntry *other, int64 wait_ms);

/*
 * zk_stat_begin
 *		Start counting an acquisition in the statistics (base/stats.c).  Costs
 *		nothing unless zklock is preloaded.
 */
static void
zk_stat_begin(ZkCountedCall *call, ZkStatKind kind, ZkLockMode mode,
			  ZkLockScope scope)
{
	call->kind = kind;
	call->mode = mode;
	call->scope = scope;
	if (!ZkStatEnabled())
		return;
	call->watch_waits = ZkWatchWaitCount();
}

/*
 * zk_stat_end
 *		Count how the acquisition ended; it waited if it waited for a watch
 *		(for another client's node to go or change).
 */
static void
zk_stat_end(ZkCountedCall *call, ZkStatOutcome outcome)
{
	bool		waited;

	if (!ZkStatEnabled())
		return;
	waited = ZkWatchWaitCount() != call->watch_waits;
	ZkStatAcquisition(call->kind, call->mode, call->scope, outcome, waited,
					  waited ? GetCurrentTimestamp() - call->start : 0);
}

/*
 * zk_stat_failed
 *		zk_stat_end for an acquisition ended by an ERROR, from PG_CATCH:
 *		the error's SQLSTATE says how.
 */
static void
zk_stat_failed(ZkCountedCall *call)
{
	ZkStatOutcome outcome;

	if (!ZkStatEnabled())
		return;
	switch (geterrcode())
	{
		case ERRCODE_LOCK_NOT_AVAILABLE:
			outcome = ZK_STAT_TIMEOUT;
			break;
		case ERRCODE_QUERY_CANCELED:
			outcome = ZK_STAT_CANCELED;
			break;
		case ERRCODE_T_R_DEADLOCK_DETECTED:
			outcome = ZK_STAT_DEADLOCK;
			break;
		default:
			outcome = ZK_STAT_FAILED;
			break;
	}
	zk_stat_end(call, outcome);
}

/*
 * zk_run_enter
 *		The double barrier's entry: true if entered, the member given as a
 *		ZkGrant in c->result.
 */
static bool
zk_run_enter(const ZkCountedCall *c)
{
	ZkGrant    *grant = c->result;
	ZkMember	member;

	if (!ZkDoubleBarrierEnter(c->node, c->path, c->members, c->wait_ms,
							  c->data, c->datalen, &member))
		return false;
	memset(grant, 0, sizeof(ZkGrant));
	grant->znode = member.znode;
	grant->token = member.token;
	return true;
}

/*
 * zk_run_recipe
 *		The recipe's acquisition: true if granted.
 */
static bool
zk_run_recipe(const ZkCountedCall *c)
{
	switch (c->recipe)
	{
		case ZK_RECIPE_LOCK:
			return ZkAcquireSet(c->args, 1, c->result);
		case ZK_RECIPE_SET:
			return ZkAcquireSet(c->args, c->n, c->result);
		case ZK_RECIPE_SEMAPHORE:
			return ZkSemaphoreAcquire(c->args, c->result);
		case ZK_RECIPE_LEASE:
			return ZkLeaseAcquire(c->args, c->result);
		case ZK_RECIPE_ENTER:
			return zk_run_enter(c);
	}
	pg_unreachable();
}

/*
 * zk_counted
 *		Run a recipe's acquisition, started at call->start, and count how
 *		it ended (an ERROR included) in the statistics.
 */
static bool
zk_counted(ZkCountedCall *call)
{
	bool		granted;

	PG_TRY();
	{
		granted = zk_run_recipe(call);
	}
	PG_CATCH();
	{
		zk_stat_failed(call);
		PG_RE_THROW();
	}
	PG_END_TRY();
	zk_stat_end(call, granted ? ZK_STAT_GRANTED : ZK_STAT_REFUSED);
	return granted;
}

/*
 * zk_acquire_begin
 *		What every acquisition does first: make the table, open the session
 *		(an expired one raises the ERROR naming the lost locks), and take
 *		the losses the loss watch found.
 */
static void
zk_acquire_begin(void)
{
	ZkHoldsEnsureSession();
	(void) ZkLockAbsorbLosses();
}

/*
 * zk_check_mode_allowed
 *		Refuse what cannot be asked for a lock: a shared lock in mutex node
 *		style (22023), and an upgrade from shared to exclusive, which would
 *		wait for our own read node forever (55000: unlike 55P03's "lock not
 *		available", no retry can succeed).  'other' is our entry
 *		for the path in the other mode, if any.
 */
static void
zk_check_mode_allowed(const char *path, ZkLockMode mode, ZkLockEntry *other)
{
	bool		mutex = zklock_exclusive_node_style == ZK_STYLE_MUTEX;

	if (mode == ZK_MODE_SHARED &&
		(mutex || zklock_exclusive_node_style == ZK_STYLE_LATCH))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shared ZooKeeper locks are not available with zklock.exclusive_node_style = '%s'",
						mutex ? "mutex" : "latch"),
				 errdetail(mutex ? "A Curator InterProcessMutex queue has no readers." :
						   "A Curator LeaderLatch election has no readers."),
				 errhint("Use zklock.exclusive_node_style = 'rwlock' for paths that need shared locks.")));
	if (mode == ZK_MODE_EXCLUSIVE && other != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot upgrade ZooKeeper lock \"%s\" from shared to exclusive",
						ZkUtf8ForMessage(path)),
				 errdetail("This backend holds the shared lock; waiting for the exclusive lock would wait for itself forever."),
				 errhint("Release the shared lock first."),
				 ZkOperationErrcontext(ZK_OPER_ACQUIRE_LOCK, path)));
}

/*
 * zk_held_entry
 *		Our entry for (path, mode), or NULL; the ERROR of a lost lock if its
 *		node is known to be gone.
 */
static ZkLockEntry *
zk_held_entry(const char *path, ZkLockMode mode)
{
	ZkLockEntry *entry = ZkEntryLookup(path, mode);

	if (entry != NULL && entry->deleted)
		ZkRaiseLost(entry, 1, mode == ZK_MODE_PERMIT ?
					ZK_OPER_ACQUIRE_SEMAPHORE : ZK_OPER_ACQUIRE_LOCK);
	return entry;
}

/*
 * zk_stack_hold
 *		Take what the backend holds already once more: a counter increment,
 *		no ZooKeeper call, counted as granted at once.  Returns true.
 */
static bool
zk_stack_hold(ZkLockEntry *entry, ZkLockScope scope, ZkCountedCall *call,
			  int64 *token)
{
	ZkEntryAddHold(entry, scope);
	*token = entry->token;
	zk_stat_end(call, ZK_STAT_GRANTED);
	return true;
}

/*
 * zk_take_node
 *		Run a counted acquisition of the one node of (path, mode), started
 *		now, and enter what it granted in the table (no hold counted yet).
 *		'other' as for ZkEntryEnter.  NULL if it was not granted.
 */
static ZkLockEntry *
zk_take_node(ZkCountedCall *call, const char *path, ZkLockMode mode,
			 ZkLockEntry *other)
{
	ZkGrant		grant;

	call->result = &grant;
	call->start = GetCurrentTimestamp();
	if (!zk_counted(call))
		return NULL;
	return ZkEntryEnter(path, mode, &grant, other, call->start);
}

/*
 * zk_acquire_args
 *		What the recipe needs to queue for a path in a mode.
 */
static void
zk_acquire_args(ZkAcquireArgs *args, const char *path, ZkLockMode mode,
				ZkLockScope scope, ZkLockEntry *other, int64 wait_ms)
{
	memset(args, 0, sizeof(*args));
	args->lock_node = ZkLockNodePath(path);
	args->lock_path = path;
	args->mode = mode;
	if (other != NULL && mode == ZK_MODE_SHARED)
		args->held_write_znode = other->znode;
	if (other != NULL && mode == ZK_MODE_EXCLUSIVE)
		args->held_read_znode = other->znode;
	args->style = (ZkNodeStyle) zklock_exclusive_node_style;
	args->wait_ms = wait_ms;
	args->data = ZkBuildNodeData(mode, scope, -1, &args->datalen);
}

/*
 * ZkLockAcquire
 *		Take one hold of a lock.  wait_ms: 0 try once, > 0 wait at most that
 *		long, < 0 wait as long as needed (bounded by lock_timeout).  Returns
 *		false if a try did not get the lock; sets *token on success.  An
 *		exclusive lock on a path this backend holds shared is refused,
 *		unless 'upgrade': then it is taken as PostgreSQL's advisory locks
 *		take it (zk_advisory), as an upgrade, which waits only for the
 *		other sessions' holds (recipes/attempt.c), and a try of it fails
 *		while another session shares the path.  The shared node stays; if
 *		contenders queued between it and the new exclusive node, it
 *		outlives the exclusive node (holds/table.c).
 */
bool
ZkLockAcquire(const char *path, ZkLockMode mode, ZkLockScope scope,
			  int64 wait_ms, int64 *token, bool upgrade)
{
	ZkLockEntry *entry;
	ZkLockEntry *other;
	ZkAcquireArgs args;
	ZkCountedCall call = {.recipe = ZK_RECIPE_LOCK, .args = &args};

	if (mode == ZK_MODE_SHARED)
		zk_check_mode_allowed(path, mode, NULL);
	zk_acquire_begin();
	other = ZkEntryLookup(path, mode == ZK_MODE_EXCLUSIVE ?
						  ZK_MODE_SHARED : ZK_MODE_EXCLUSIVE);

	/* stacking: no ZooKeeper call */
	zk_stat_begin(&call, ZK_STAT_LOCK, mode, scope);
	entry = zk_held_entry(path, mode);
	if (entry != NULL)
		return zk_stack_hold(entry, scope, &call, token);

	if (!upgrade)
		zk_check_mode_allowed(path, mode, other);
	ZkCheckRoom(1);
	/* our node in this mode, kept by the other mode, is ours again */
	entry = ZkEntryAdoptKept(path, mode, other);
	if (entry != NULL)
		return zk_stack_hold(entry, scope, &call, token);
	ZkCheckRoot();
	zk_acquire_args(&args, path, mode, scope, other, wait_ms);
	entry = zk_take_node(&call, path, mode, other);
	if (entry == NULL)
		return false;
	ZkEntryAddHold(entry, scope);
	*token = entry->token;
	return true;
}

/*
 * ZkLockAcquireSet
 *		Take one hold of each of n lock paths, all at once (recipes/lock_set.c):
 *		all or none.  A path given several times gets that many holds on
 *		one node, as if it had been taken that many times.  Paths the
 *		backend holds already in this mode stack without a ZooKeeper call;
 *		the others are queued for in one transaction.  wait_ms as for
 *		ZkLockAcquire.  *token is the set's fencing token: the zxid of the
 *		transaction that created its nodes, or, when every path was held
 *		already, the newest token among them.
 */
bool
ZkLockAcquireSet(const char *const *paths, int n, ZkLockMode mode,
				 ZkLockScope scope, int64 wait_ms, int64 *token)
{
	const char **sorted = palloc(sizeof(char *) * n);
	const char **fresh = palloc(sizeof(char *) * n);
	ZkLockEntry **others = palloc(sizeof(ZkLockEntry *) * n);
	int			nfresh = 0;
	int64		newest = 0;
	ZkCountedCall call = {.recipe = ZK_RECIPE_SET};

	if (mode == ZK_MODE_SHARED)
		zk_check_mode_allowed(paths[0], mode, NULL);
	zk_acquire_begin();

	/* distinct paths, in a stable order */
	memcpy(sorted, paths, sizeof(char *) * n);
	qsort(sorted, n, sizeof(char *), pg_qsort_strcmp);
	for (int i = 0; i < n; i++)
	{
		ZkLockEntry *entry;

		if (i > 0 && strcmp(sorted[i], sorted[i - 1]) == 0)
			continue;
		entry = zk_held_entry(sorted[i], mode);
		if (entry != NULL)
		{
			newest = Max(newest, entry->token);
			continue;
		}
		others[nfresh] = ZkEntryLookup(sorted[i], mode == ZK_MODE_EXCLUSIVE ?
									   ZK_MODE_SHARED : ZK_MODE_EXCLUSIVE);
		zk_check_mode_allowed(sorted[i], mode, others[nfresh]);
		fresh[nfresh++] = sorted[i];
	}
	if (nfresh > 0)
		ZkCheckRoot();
	ZkCheckRoom(nfresh);

	zk_stat_begin(&call, ZK_STAT_LOCK_SET, mode, scope);
	call.start = GetCurrentTimestamp();
	if (nfresh > 0)
	{
		ZkAcquireArgs *args = palloc(sizeof(ZkAcquireArgs) * nfresh);
		ZkGrant    *grants = palloc(sizeof(ZkGrant) * nfresh);
		volatile int entered = 0;

		for (int i = 0; i < nfresh; i++)
			zk_acquire_args(&args[i], fresh[i], mode, scope, others[i],
							wait_ms);
		call.args = args;
		call.result = grants;
		call.n = nfresh;
		if (!zk_counted(&call))
			return false;

		PG_TRY();
		{
			for (; entered < nfresh; entered++)
				(void) ZkEntryEnter(fresh[entered], mode, &grants[entered],
									others[entered], call.start);
		}
		PG_CATCH();
		{
			/* ZkEntryEnter deleted its own node; the rest go too */
			for (int i = entered + 1; i < nfresh; i++)
				ZkDeleteInBackground(grants[i].znode);
			for (int i = 0; i < entered; i++)
			{
				ZkLockEntry *entry = ZkEntryLookup(fresh[i], mode);

				ZkEntryDrop(entry, false);
				ZkDeleteInBackground(grants[i].znode);
			}
			PG_RE_THROW();
		}
		PG_END_TRY();
		newest = grants[0].token;
	}
	else
		zk_stat_end(&call, ZK_STAT_GRANTED);

	/* every element is one hold, duplicates included */
	for (int i = 0; i < n; i++)
		ZkEntryAddHold(ZkEntryLookup(paths[i], mode), scope);
	*token = newest;
	return true;
}

/*
 * ZkLockAcquirePermit
 *		Take one hold of a permit of the semaphore at path, which admits
 *		max_leases holders (recipes/semaphore.c).  A permit the backend holds
 *		already stacks, without a ZooKeeper call, if max_leases is the
 *		same.  wait_ms as for ZkLockAcquire.
 */
bool
ZkLockAcquirePermit(const char *path, int max_leases, ZkLockScope scope,
				   int64 wait_ms, int64 *token)
{
	ZkLockEntry *entry;
	ZkSemaphoreArgs args;
	ZkCountedCall call = {.recipe = ZK_RECIPE_SEMAPHORE, .args = &args};

	if (max_leases < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_leases must be at least 1, not %d", max_leases)));
	zk_acquire_begin();

	zk_stat_begin(&call, ZK_STAT_SEMAPHORE, ZK_MODE_PERMIT, scope);
	entry = zk_held_entry(path, ZK_MODE_PERMIT);
	if (entry != NULL && entry->max_leases != max_leases)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ZooKeeper semaphore \"%s\" admits %d permits, not %d",
						ZkUtf8ForMessage(path), entry->max_leases,
						max_leases),
				 errdetail("This backend holds a permit taken with max_leases = %d.",
						   entry->max_leases),
				 errhint("Every user of a semaphore must give it the same max_leases."),
				 ZkOperationErrcontext(ZK_OPER_ACQUIRE_SEMAPHORE, path)));
	if (entry != NULL)
		return zk_stack_hold(entry, scope, &call, token);
	ZkCheckRoot();
	ZkCheckRoom(1);

	memset(&args, 0, sizeof(args));
	args.sem_node = ZkLockNodePath(path);
	args.sem_path = path;
	args.max_leases = max_leases;
	args.wait_ms = wait_ms;
	args.data = ZkBuildNodeData(ZK_MODE_PERMIT, scope, -1, &args.datalen);
	entry = zk_take_node(&call, path, ZK_MODE_PERMIT, NULL);
	if (entry == NULL)
		return false;
	entry->max_leases = max_leases;
	ZkEntryAddHold(entry, scope);
	*token = entry->token;
	return true;
}

/*
 * ZkLockLeaseAcquire
 *		Take a lease on a path for ttl_ms (recipes/lease.c); wait_ms as for
 *		ZkLockAcquire.  The lease belongs to no backend: it is not entered
 *		in the table, only recorded for this transaction's COMMIT check.  A
 *		backend that holds the lock itself cannot take a lease on it: the
 *		lease would wait for that lock forever.  Sets *token and
 *		*expires_at (ms since the Unix epoch, on the ZooKeeper server's
 *		clock; -1 if unknown).
 */
bool
ZkLockLeaseAcquire(const char *path, int64 ttl_ms, int64 wait_ms,
				   int64 *token, int64 *expires_at)
{
	ZkLeaseArgs args;
	ZkLeaseInfo info;
	ZkCountedCall call = {.recipe = ZK_RECIPE_LEASE, .args = &args,
	.result = &info};

	zk_acquire_begin();
	if (ZkEntryLookup(path, ZK_MODE_EXCLUSIVE) != NULL ||
		ZkEntryLookup(path, ZK_MODE_SHARED) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot take a lease on ZooKeeper lock \"%s\" while this backend holds the lock",
						ZkUtf8ForMessage(path)),
				 errdetail("The lease would wait for this backend's own lock forever."),
				 errhint("Release the lock first."),
				 ZkOperationErrcontext(ZK_OPER_ACQUIRE_LEASE, path)));

	memset(&args, 0, sizeof(args));
	args.lock_node = ZkLockNodePath(path);
	args.lock_path = path;
	args.ttl_ms = ttl_ms;
	args.style = (ZkNodeStyle) zklock_exclusive_node_style;
	args.wait_ms = wait_ms;
	args.data = ZkBuildNodeData(ZK_MODE_EXCLUSIVE, ZK_SCOPE_LEASE, ttl_ms,
								&args.datalen);
	zk_stat_begin(&call, ZK_STAT_LOCK, ZK_MODE_EXCLUSIVE, ZK_SCOPE_LEASE);
	call.start = GetCurrentTimestamp();
	if (!zk_counted(&call))
		return false;
	ZkTouchLease(path, &info);
	*token = info.token;
	*expires_at = info.expires_at;
	return true;
}

/*
 * ZkLockDoubleBarrierEnter
 *		Enter the double barrier at path (recipes/double_barrier.c) as one of
 *		`members'; wait_ms as for ZkLockAcquire.  The membership is an entry
 *		of mode "member", held until zk_double_barrier_leave, DISCARD ALL or
 *		the backend's exit (the last two depart as a leave would,
 *		holds/release.c; its node is ephemeral, so an expired session ends
 *		it too).  A backend is one member of a barrier at most.
 */
bool
ZkLockDoubleBarrierEnter(const char *path, int members, int64 wait_ms)
{
	ZkLockEntry *entry;
	ZkCountedCall call = {.recipe = ZK_RECIPE_ENTER, .path = path,
	.members = members, .wait_ms = wait_ms};

	zk_acquire_begin();
	if (ZkEntryLookup(path, ZK_MODE_MEMBER) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("this backend is a member of ZooKeeper double barrier \"%s\" already",
						ZkUtf8ForMessage(path)),
				 errhint("Leave it with zk_double_barrier_leave first."),
				 ZkOperationErrcontext(ZK_OPER_ENTER_DOUBLE_BARRIER, path)));
	ZkCheckRoot();
	ZkCheckRoom(1);
	call.data = ZkBuildNodeData(ZK_MODE_MEMBER, ZK_SCOPE_SESSION, -1,
								&call.datalen);
	call.node = ZkLockNodePath(path);
	zk_stat_begin(&call, ZK_STAT_DOUBLE_BARRIER, ZK_MODE_MEMBER,
				  ZK_SCOPE_SESSION);
	entry = zk_take_node(&call, path, ZK_MODE_MEMBER, NULL);
	if (entry == NULL)
		return false;
	ZkEntryAddHold(entry, ZK_SCOPE_SESSION);
	/* exit ends the membership as a leave would (holds/release.c) */
	ZkMembersAtExitRegister();
	return true;
}
