/*-------------------------------------------------------------------------
 *
 * lock_table.c
 *		The backend's table of held ZooKeeper locks, with the transaction
 *		and session-loss callbacks that keep it honest.
 *
 * One entry per (path, mode) the backend holds: one queue node in
 * ZooKeeper, however many times it was taken.  A semaphore's lease is an
 * entry of mode "lease", its node the lease node (semaphore.c).  Session and transaction
 * holds are counted separately, like PostgreSQL's advisory locks; the node
 * is deleted when the last hold of either kind goes.  Transaction holds
 * remember the subtransaction level that took them, so that ROLLBACK TO
 * SAVEPOINT (and a PL/pgSQL exception block) releases what it took.
 *
 * Taking a lock the backend holds already in the same mode is a counter
 * increment, with no ZooKeeper round trip.  Downgrade (taking the read lock
 * while holding the write lock) creates a read node that is granted at
 * once; if other contenders queued between our write node and it, the
 * write node is kept as a guard until the read node goes, so that those
 * contenders cannot be granted while we still read.  Upgrade (write while
 * holding only read) would wait on ourselves forever and is an ERROR.
 *
 * Releases.  Nodes whose last hold went are collected and released
 * together when the operation that released them ends (zk_unlock,
 * zk_unlock_all, COMMIT, ROLLBACK, ROLLBACK TO SAVEPOINT): one batch, one
 * round trip however many nodes.  With zklock.synchronous_release (the
 * default) the operation returns only once ZooKeeper applied the deletes,
 * so any lock attempt that starts afterwards, on any server, finds the
 * locks free.  At COMMIT and ROLLBACK PostgreSQL holds interrupts, so the
 * wait there is bounded by zklock.connect_timeout and raises no ERROR; in
 * zk_unlock a cancel ends the wait (the lock is released all the same, its
 * delete completing in the background).  A release not confirmed within
 * zklock.connect_timeout is reported by a WARNING and goes on in the
 * background until it succeeds or the session ends.
 *
 * Lease-checked COMMIT.  While the backend holds any lock, a COMMIT
 * succeeds only if the session is known to be alive (zk_locks_pre_commit).
 *
 * Everything lives in the "zklock" memory context under TopMemoryContext;
 * entries are freed when released, so nothing grows with the number of
 * lock/unlock cycles.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "common/hashfn.h"
#include "lib/ilist.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "barrier.h"
#include "cluster_view.h"
#include "contender.h"
#include "lock_recipe.h"
#include "lease_lock.h"
#include "lock_table.h"
#include "multi_lock.h"
#include "semaphore.h"
#include "node_data.h"
#include "stats.h"
#include "text_encoding.h"
#include "zk_session.h"
#include "vocabulary.h"

/* hash key: the user's lock path and the mode */
typedef struct ZkLockKey
{
	const char *path;
	ZkLockMode	mode;
} ZkLockKey;

/* transaction holds taken at one subtransaction nesting level */
typedef struct ZkXactHolds
{
	int			level;
	int			count;
} ZkXactHolds;

typedef struct ZkLockEntry
{
	ZkLockKey	key;			/* key.path is our own copy */
	char	   *znode;			/* our queue node */
	int64		token;			/* fencing token (czxid) */
	int			session_holds;
	int			xact_holds;		/* sum of xact[].count */
	ZkXactHolds *xact;			/* by nesting level, ascending */
	int			nxact;
	int			maxxact;
	dlist_node	xact_link;		/* in zk_xact_entries while xact_holds > 0 */
	TimestampTz acquired_at;
	int64		waited_us;
	char	   *guard_znode;	/* downgrade guard, see file header */
	int			max_leases;		/* a lease: the semaphore's limit */
	bool		watched;		/* a held-node watch is set on znode */
	bool		lost;			/* znode is known to have been deleted */
} ZkLockEntry;

/* An acquisition being counted in the statistics (stats.c). */
typedef struct ZkStatCall
{
	ZkStatKind	kind;
	ZkLockMode	mode;
	ZkLockScope scope;
	uint64		watch_waits;	/* ZkWatchWaitCount() at the start */
	TimestampTz start;			/* when the recipe was called */
} ZkStatCall;

static MemoryContext ZkLockContext = NULL;
static HTAB *zk_locks = NULL;
static dlist_head zk_xact_entries = DLIST_STATIC_INIT(zk_xact_entries);

/*
 * zklock.root when the first of the held locks was taken: every held node
 * lives under it.  The setting's check hook refuses a new root while locks
 * are held, but RESET ALL (and so DISCARD ALL, which releases them all
 * right after) bypasses check hooks; zk_check_root refuses new locks
 * under another root then.  (ZkLockContext)
 */
static char *zk_entries_root = NULL;

/* this top-level transaction lost locks to an expiry or a deletion */
static bool zk_xact_lost_locks = false;

/*
 * Leases (lease_lock.c) belong to no backend and are not in the table; a
 * transaction that took or renewed one records it here, for the check at
 * COMMIT (zk_leases_pre_commit).  One entry per lease node, in
 * ZkLockContext, emptied at the end of the transaction.
 */
typedef struct ZkLeaseTouch
{
	char	   *path;			/* the user's lock path */
	char	   *znode;			/* the lease's node */
	int64		token;
	int64		ttl_ms;
	int64		sent_at;		/* monotonic ms of the request that granted
								 * or last renewed it */
} ZkLeaseTouch;

static ZkLeaseTouch *zk_leases_touched = NULL;
static int	zk_nleases_touched = 0;
static int	zk_maxleases_touched = 0;

/* nodes released and not yet sent (ZkLockContext); see zk_flush_releases */
static char **zk_released = NULL;
static int	zk_nreleased = 0;
static int	zk_maxreleased = 0;

static uint32 zk_key_hash(const void *key, Size keysize);
static int	zk_key_match(const void *key1, const void *key2, Size keysize);
static void zk_locks_init(void);
static ZkLockEntry *zk_lookup(const char *path, ZkLockMode mode);
static void zk_add_hold(ZkLockEntry *entry, ZkLockScope scope);
static void zk_maybe_drop(ZkLockEntry *entry);
static void zk_drop_entry(ZkLockEntry *entry, bool delete_nodes);
static void zk_release_xact_holds(int from_level);
static void zk_promote_xact_holds(int level);
static void zk_locks_lost(void);
static int	zk_locks_held(void);
static void zk_locks_pre_commit(void);
static void zk_locks_xact_callback(XactEvent event, void *arg);
static void zk_locks_subxact_callback(SubXactEvent event,
									  SubTransactionId mySubid,
									  SubTransactionId parentSubid,
									  void *arg);
static int	zk_info_cmp(const void *a, const void *b);
static ZkLockEntry *zk_entry_for_znode(const char *znode);
static void zk_collect_held_events(void);
static void zk_raise_lost(ZkLockEntry *entry, int nlost) pg_attribute_noreturn();
static void zk_queue_release(char *znode);
static void zk_flush_releases(void);
static void zk_describe_held(StringInfo buf);
static bool zk_holds_node(const char *path, const char *znode);
static char *zk_lock_node_path(const char *path);
static void zk_ensure_session(void);
static void zk_stat_begin(ZkStatCall *call, ZkStatKind kind, ZkLockMode mode,
						  ZkLockScope scope);
static void zk_stat_end(ZkStatCall *call, ZkStatOutcome outcome);
static void zk_stat_failed(ZkStatCall *call);
static void zk_check_mode_allowed(const char *path, ZkLockMode mode,
								  ZkLockEntry *other);
static void zk_check_room(int more);
static void zk_check_root(void);
static ZkLockEntry *zk_enter_grant(const char *path, ZkLockMode mode,
								   const ZkGrant *grant, ZkLockEntry *other,
								   TimestampTz start);
static int	zk_path_cmp(const void *a, const void *b);
static bool zk_release_one(const char *path, bool lease);
static void zk_touch_lease(const char *path, const ZkLeaseInfo *info);
static void zk_forget_touched_leases(void);
static void zk_leases_pre_commit(void);
static void zk_raise_no_lease(const char *path, int64 token,
							  const char *what) pg_attribute_noreturn();

static uint32
zk_key_hash(const void *key, Size keysize)
{
	const ZkLockKey *k = (const ZkLockKey *) key;

	return hash_bytes((const unsigned char *) k->path, (int) strlen(k->path)) ^
		(uint32) k->mode;
}

static int
zk_key_match(const void *key1, const void *key2, Size keysize)
{
	const ZkLockKey *a = (const ZkLockKey *) key1;
	const ZkLockKey *b = (const ZkLockKey *) key2;

	if (a->mode != b->mode)
		return 1;
	return strcmp(a->path, b->path);
}

/*
 * zk_locks_init
 *		Create the table and register the callbacks, once per backend, at
 *		the first zklock call.
 */
static void
zk_locks_init(void)
{
	HASHCTL		ctl;

	if (zk_locks != NULL)
		return;

	ZkLockContext = AllocSetContextCreate(TopMemoryContext, "zklock",
										  ALLOCSET_DEFAULT_SIZES);
	ctl.keysize = sizeof(ZkLockKey);
	ctl.entrysize = sizeof(ZkLockEntry);
	ctl.hash = zk_key_hash;
	ctl.match = zk_key_match;
	ctl.hcxt = ZkLockContext;
	zk_locks = hash_create("zklock held locks", 64, &ctl,
						   HASH_ELEM | HASH_FUNCTION | HASH_COMPARE |
						   HASH_CONTEXT);

	RegisterXactCallback(zk_locks_xact_callback, NULL);
	RegisterSubXactCallback(zk_locks_subxact_callback, NULL);
	ZkSessionSetHooks(zk_locks_lost, zk_locks_held);
}

static ZkLockEntry *
zk_lookup(const char *path, ZkLockMode mode)
{
	ZkLockKey	key;

	key.path = path;
	key.mode = mode;
	return (ZkLockEntry *) hash_search(zk_locks, &key, HASH_FIND, NULL);
}

/*
 * zk_lock_node_path
 *		The ZooKeeper path of a lock's node: zklock.root followed by the
 *		(validated) lock path.
 */
static char *
zk_lock_node_path(const char *path)
{
	return psprintf("%s%s", zklock_root, path);
}

/*
 * zk_ensure_session
 *		Open the session if needed, reporting an expired one first.  For
 *		the inspection functions, which hold nothing themselves.
 */
static void
zk_ensure_session(void)
{
	zk_locks_init();
	ZkSessionEnsure();
}

/*
 * zk_add_hold
 *		Count one more hold on an entry.
 */
static void
zk_add_hold(ZkLockEntry *entry, ZkLockScope scope)
{
	int			level;

	if (scope == ZK_SCOPE_SESSION)
	{
		entry->session_holds++;
		return;
	}

	level = GetCurrentTransactionNestLevel();
	if (entry->nxact > 0 && entry->xact[entry->nxact - 1].level == level)
		entry->xact[entry->nxact - 1].count++;
	else
	{
		if (entry->nxact == entry->maxxact)
		{
			int			newmax = Max(4, entry->maxxact * 2);

			if (entry->xact == NULL)
				entry->xact = MemoryContextAlloc(ZkLockContext,
												 sizeof(ZkXactHolds) * newmax);
			else
				entry->xact = repalloc(entry->xact, sizeof(ZkXactHolds) * newmax);
			entry->maxxact = newmax;
		}
		entry->xact[entry->nxact].level = level;
		entry->xact[entry->nxact].count = 1;
		entry->nxact++;
	}
	if (entry->xact_holds == 0)
		dlist_push_tail(&zk_xact_entries, &entry->xact_link);
	entry->xact_holds++;
}

/*
 * zk_entry_for_znode
 *		The held entry whose queue node this is, or NULL.  The lock path and
 *		mode are read back from the node's path (root, path, name).
 */
static ZkLockEntry *
zk_entry_for_znode(const char *znode)
{
	const char *root = zk_entries_root ? zk_entries_root : zklock_root;
	size_t		rootlen = strlen(root);
	const char *slash = strrchr(znode, '/');
	ZkContender c;
	ZkLockEntry *entry;
	char	   *path;

	if (slash == NULL || strncmp(znode, root, rootlen) != 0 ||
		slash <= znode + rootlen)
		return NULL;
	if (ZkParseContender(slash + 1, &c))
		path = pnstrdup(znode + rootlen, slash - (znode + rootlen));
	else
	{
		/* a lease: <root><path>/leases/<name> */
		const char *leases = "/leases";
		size_t		len = strlen(leases);

		if (slash - (znode + rootlen) <= (ptrdiff_t) len ||
			strncmp(slash - len, leases, len) != 0)
			return NULL;
		path = pnstrdup(znode + rootlen, slash - len - (znode + rootlen));
		c.mode = ZK_MODE_LEASE;
	}
	entry = zk_lookup(path, c.mode);
	pfree(path);
	if (entry == NULL || strcmp(entry->znode, znode) != 0)
		return NULL;
	return entry;
}

/*
 * zk_collect_held_events
 *		Take the events the held-node watches reported: a deleted node's lock
 *		is lost; a changed node's watch is spent and must be set again.
 *		Events on nodes no longer held (our own releases) are ignored.
 */
static void
zk_collect_held_events(void)
{
	char	  **paths;
	bool	   *deleted;
	int			n;

	if (zk_locks == NULL)
		return;
	n = ZkTakeDeletedHeld(&paths, &deleted);
	for (int i = 0; i < n; i++)
	{
		ZkLockEntry *entry = zk_entry_for_znode(paths[i]);

		if (entry == NULL)
			continue;
		entry->watched = false;
		if (deleted[i])
			entry->lost = true;
	}
}

/*
 * zk_raise_lost
 *		A held node is known to be gone: forget the lost locks and raise the
 *		ERROR naming one of them.
 */
static void
zk_raise_lost(ZkLockEntry *entry, int nlost)
{
	char	   *path = pstrdup(entry->key.path);
	char	   *znode = pstrdup(entry->znode);
	HASH_SEQ_STATUS status;
	ZkLockEntry *e;
	int			dropped = 0;

	hash_seq_init(&status, zk_locks);
	while ((e = (ZkLockEntry *) hash_seq_search(&status)) != NULL)
	{
		if (e->lost)
		{
			zk_drop_entry(e, false);
			dropped++;
		}
	}
	ZkStatLocksLost(dropped);
	if (IsTransactionState())
		zk_xact_lost_locks = true;
	ereport(ERROR,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg("ZooKeeper lock \"%s\" was lost", ZkUtf8ForMessage(path)),
			 errdetail("Its node \"%s\" no longer exists.",
					   ZkUtf8ForMessage(znode)),
			 nlost > 1 ? errhint("%d locks of this backend were lost that way.", nlost) : 0));
}

/*
 * zk_check_mode_allowed
 *		Refuse what cannot be asked for a lock: a shared lock in mutex node
 *		style (22023), and an upgrade from shared to exclusive, which would
 *		wait for our own read node forever (55P03).  'other' is our entry
 *		for the path in the other mode, if any.
 */
static void
zk_check_mode_allowed(const char *path, ZkLockMode mode, ZkLockEntry *other)
{
	if (mode == ZK_MODE_SHARED &&
		zklock_exclusive_node_style == ZK_STYLE_MUTEX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shared ZooKeeper locks are not available with zklock.exclusive_node_style = 'mutex'"),
				 errdetail("A Curator InterProcessMutex queue has no readers."),
				 errhint("Use zklock.exclusive_node_style = 'rwlock' for paths that need shared locks.")));
	if (mode == ZK_MODE_SHARED &&
		zklock_exclusive_node_style == ZK_STYLE_LATCH)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shared ZooKeeper locks are not available with zklock.exclusive_node_style = 'latch'"),
				 errdetail("A Curator LeaderLatch election has no readers."),
				 errhint("Use zklock.exclusive_node_style = 'rwlock' for paths that need shared locks.")));
	if (mode == ZK_MODE_EXCLUSIVE && other != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("cannot upgrade ZooKeeper lock \"%s\" from shared to exclusive",
						ZkUtf8ForMessage(path)),
				 errdetail("This backend holds the shared lock; waiting for the exclusive lock would wait for itself forever."),
				 errhint("Release the shared lock first.")));
}

/*
 * zk_check_root
 *		New locks go where the held ones are: refuse to take one while
 *		zklock.root differs from the root of the locks held (a RESET ALL
 *		changed it behind the check hook's back).
 */
static void
zk_check_root(void)
{
	if (hash_get_num_entries(zk_locks) > 0 && zk_entries_root != NULL &&
		strcmp(zk_entries_root, zklock_root) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("zklock.root changed while this backend holds ZooKeeper locks"),
				 errdetail("The locks held are under \"%s\"; zklock.root is now \"%s\".",
						   ZkUtf8ForMessage(zk_entries_root),
						   ZkUtf8ForMessage(zklock_root)),
				 errhint("Release the locks with zk_unlock_all() first.")));
}

/*
 * zk_check_room
 *		zklock.max_locks_per_backend: may 'more' entries be added?
 */
static void
zk_check_room(int more)
{
	if (hash_get_num_entries(zk_locks) + more > zklock_max_locks_per_backend)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many ZooKeeper locks held by this backend"),
				 more > 1 ?
				 errdetail_plural("This backend holds %ld lock, and the call needs %d more; zklock.max_locks_per_backend is %d.",
								  "This backend holds %ld locks, and the call needs %d more; zklock.max_locks_per_backend is %d.",
								  hash_get_num_entries(zk_locks),
								  hash_get_num_entries(zk_locks), more,
								  zklock_max_locks_per_backend) :
				 errdetail_plural("This backend holds %ld lock; zklock.max_locks_per_backend is %d.",
								  "This backend holds %ld locks; zklock.max_locks_per_backend is %d.",
								  hash_get_num_entries(zk_locks),
								  hash_get_num_entries(zk_locks),
								  zklock_max_locks_per_backend),
				 errhint("Release some locks, or raise zklock.max_locks_per_backend.")));
}

/*
 * zk_enter_grant
 *		Enter a granted lock into the table (no hold counted yet).  The
 *		node exists now: if the entry cannot be made, the node is deleted
 *		before the ERROR propagates.
 */
static ZkLockEntry *
zk_enter_grant(const char *path, ZkLockMode mode, const ZkGrant *grant,
			   ZkLockEntry *other, TimestampTz start)
{
	ZkLockEntry *entry;
	ZkLockKey	key;
	bool		found;

	key.path = path;
	key.mode = mode;
	PG_TRY();
	{
		if (hash_get_num_entries(zk_locks) == 0)
		{
			if (zk_entries_root != NULL)
				pfree(zk_entries_root);
			zk_entries_root = MemoryContextStrdup(ZkLockContext, zklock_root);
		}
		entry = (ZkLockEntry *) hash_search(zk_locks, &key, HASH_ENTER, &found);
		Assert(!found);
		memset((char *) entry + sizeof(ZkLockKey), 0,
			   sizeof(ZkLockEntry) - sizeof(ZkLockKey));
		entry->key.path = MemoryContextStrdup(ZkLockContext, path);
		entry->znode = MemoryContextStrdup(ZkLockContext, grant->znode);
		if (grant->needs_guard)
			entry->guard_znode = MemoryContextStrdup(ZkLockContext,
													 other->znode);
	}
	PG_CATCH();
	{
		ZkReleaseInBackground(grant->znode);
		entry = zk_lookup(path, mode);
		if (entry != NULL)
			hash_search(zk_locks, &key, HASH_REMOVE, NULL);
		PG_RE_THROW();
	}
	PG_END_TRY();

	entry->token = grant->token;
	entry->watched = grant->own_watched;
	entry->acquired_at = GetCurrentTimestamp();
	entry->waited_us = entry->acquired_at - start;
	return entry;
}

/*
 * zk_stat_begin
 *		Start counting an acquisition in the statistics (stats.c).  Costs
 *		nothing unless zklock is preloaded.
 */
static void
zk_stat_begin(ZkStatCall *call, ZkStatKind kind, ZkLockMode mode,
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
zk_stat_end(ZkStatCall *call, ZkStatOutcome outcome)
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
zk_stat_failed(ZkStatCall *call)
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

/* Which recipe a counted acquisition runs, and its arguments. */
typedef enum ZkRecipe
{
	ZK_RECIPE_LOCK,				/* ZkAcquire(args, result) */
	ZK_RECIPE_SET,				/* ZkAcquireSet(args, n, result) */
	ZK_RECIPE_SEMAPHORE,		/* ZkSemaphoreAcquire(args, result) */
	ZK_RECIPE_LEASE,			/* ZkLeaseAcquire(args, result) */
	ZK_RECIPE_ENTER				/* ZkDoubleBarrierEnter(...) */
} ZkRecipe;

typedef struct ZkRecipeCall
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
} ZkRecipeCall;

/*
 * zk_run_recipe
 *		The recipe's acquisition: true if granted.
 */
static bool
zk_run_recipe(const ZkRecipeCall *c)
{
	switch (c->recipe)
	{
		case ZK_RECIPE_LOCK:
			return ZkAcquire(c->args, c->result);
		case ZK_RECIPE_SET:
			return ZkAcquireSet(c->args, c->n, c->result);
		case ZK_RECIPE_SEMAPHORE:
			return ZkSemaphoreAcquire(c->args, c->result);
		case ZK_RECIPE_LEASE:
			return ZkLeaseAcquire(c->args, c->result);
		case ZK_RECIPE_ENTER:
			return ZkDoubleBarrierEnter(c->node, c->path, c->members,
										c->wait_ms, c->data, c->datalen,
										c->result);
	}
	pg_unreachable();
}

/*
 * zk_counted
 *		Run a recipe's acquisition, started at 'start', and count how it
 *		ended (an ERROR included) in the statistics.
 */
static bool
zk_counted(ZkStatCall *call, const ZkRecipeCall *c, TimestampTz start)
{
	bool		granted;

	call->start = start;
	PG_TRY();
	{
		granted = zk_run_recipe(c);
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
 * zk_acquire_args
 *		What the recipe needs to queue for a path in a mode.
 */
static void
zk_acquire_args(ZkAcquireArgs *args, const char *path, ZkLockMode mode,
				ZkLockScope scope, ZkLockEntry *other, int64 wait_ms)
{
	memset(args, 0, sizeof(*args));
	args->lock_node = zk_lock_node_path(path);
	args->lock_path = path;
	args->mode = mode;
	args->held_write_znode = other ? other->znode : NULL;
	args->style = (ZkNodeStyle) zklock_exclusive_node_style;
	args->wait_ms = wait_ms;
	args->data = ZkBuildNodeData(mode, scope, -1, &args->datalen);
}

/*
 * ZkLockAcquire
 *		Take one hold of a lock.  wait_ms: 0 try once, > 0 wait at most that
 *		long, < 0 wait as long as needed (bounded by lock_timeout).  Returns
 *		false if a try did not get the lock; sets *token on success.
 */
bool
ZkLockAcquire(const char *path, ZkLockMode mode, ZkLockScope scope,
			  int64 wait_ms, int64 *token)
{
	ZkLockEntry *entry;
	ZkLockEntry *other;
	ZkAcquireArgs args;
	ZkGrant		grant;
	TimestampTz start;
	ZkStatCall	call;
	ZkRecipeCall rcall = {0};

	zk_locks_init();
	other = zk_lookup(path, mode == ZK_MODE_EXCLUSIVE ?
					  ZK_MODE_SHARED : ZK_MODE_EXCLUSIVE);
	if (mode == ZK_MODE_SHARED)
		zk_check_mode_allowed(path, mode, NULL);
	ZkSessionEnsure();
	zk_collect_held_events();

	/* stacking: no ZooKeeper call */
	zk_stat_begin(&call, ZK_STAT_LOCK, mode, scope);
	entry = zk_lookup(path, mode);
	if (entry != NULL && entry->lost)
		zk_raise_lost(entry, 1);
	if (entry != NULL)
	{
		zk_add_hold(entry, scope);
		*token = entry->token;
		zk_stat_end(&call, ZK_STAT_GRANTED);
		return true;
	}

	zk_check_mode_allowed(path, mode, other);
	zk_check_root();
	zk_check_room(1);
	zk_acquire_args(&args, path, mode, scope, other, wait_ms);

	start = GetCurrentTimestamp();
	rcall.recipe = ZK_RECIPE_LOCK;
	rcall.args = &args;
	rcall.result = &grant;
	if (!zk_counted(&call, &rcall, start))
		return false;

	entry = zk_enter_grant(path, mode, &grant, other, start);
	zk_add_hold(entry, scope);
	*token = grant.token;
	return true;
}

static int
zk_path_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/*
 * ZkLockAcquireSet
 *		Take one hold of each of n lock paths, all at once (multi_lock.c):
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
	TimestampTz start;
	ZkStatCall	call;

	zk_locks_init();
	if (mode == ZK_MODE_SHARED)
		zk_check_mode_allowed(paths[0], mode, NULL);
	ZkSessionEnsure();
	zk_collect_held_events();

	/* distinct paths, in a stable order */
	memcpy(sorted, paths, sizeof(char *) * n);
	qsort(sorted, n, sizeof(char *), zk_path_cmp);
	for (int i = 0; i < n; i++)
	{
		ZkLockEntry *entry;

		if (i > 0 && strcmp(sorted[i], sorted[i - 1]) == 0)
			continue;
		entry = zk_lookup(sorted[i], mode);
		if (entry != NULL && entry->lost)
			zk_raise_lost(entry, 1);
		if (entry != NULL)
		{
			newest = Max(newest, entry->token);
			continue;
		}
		others[nfresh] = zk_lookup(sorted[i], mode == ZK_MODE_EXCLUSIVE ?
								   ZK_MODE_SHARED : ZK_MODE_EXCLUSIVE);
		zk_check_mode_allowed(sorted[i], mode, others[nfresh]);
		fresh[nfresh++] = sorted[i];
	}
	if (nfresh > 0)
		zk_check_root();
	zk_check_room(nfresh);

	zk_stat_begin(&call, ZK_STAT_LOCK_SET, mode, scope);
	start = GetCurrentTimestamp();
	if (nfresh > 0)
	{
		ZkAcquireArgs *args = palloc(sizeof(ZkAcquireArgs) * nfresh);
		ZkGrant    *grants = palloc(sizeof(ZkGrant) * nfresh);
		volatile int entered = 0;
		ZkRecipeCall rcall = {0};

		for (int i = 0; i < nfresh; i++)
			zk_acquire_args(&args[i], fresh[i], mode, scope, others[i],
							wait_ms);
		rcall.recipe = ZK_RECIPE_SET;
		rcall.args = args;
		rcall.result = grants;
		rcall.n = nfresh;
		if (!zk_counted(&call, &rcall, start))
			return false;

		PG_TRY();
		{
			for (; entered < nfresh; entered++)
				(void) zk_enter_grant(fresh[entered], mode, &grants[entered],
									  others[entered], start);
		}
		PG_CATCH();
		{
			/* zk_enter_grant deleted its own node; the rest go too */
			for (int i = entered + 1; i < nfresh; i++)
				ZkReleaseInBackground(grants[i].znode);
			for (int i = 0; i < entered; i++)
			{
				ZkLockEntry *entry = zk_lookup(fresh[i], mode);

				zk_drop_entry(entry, false);
				ZkReleaseInBackground(grants[i].znode);
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
		zk_add_hold(zk_lookup(paths[i], mode), scope);
	*token = newest;
	return true;
}

/*
 * ZkLockAcquireLease
 *		Take one hold of a lease of the semaphore at path, which admits
 *		max_leases holders (semaphore.c).  A lease the backend holds
 *		already stacks, without a ZooKeeper call, if max_leases is the
 *		same.  wait_ms as for ZkLockAcquire.
 */
bool
ZkLockAcquireLease(const char *path, int max_leases, ZkLockScope scope,
				   int64 wait_ms, int64 *token)
{
	ZkLockEntry *entry;
	ZkSemaphoreArgs args;
	ZkGrant		grant;
	TimestampTz start;
	ZkStatCall	call;
	ZkRecipeCall rcall = {0};

	if (max_leases < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_leases must be at least 1, not %d", max_leases)));
	zk_locks_init();
	ZkSessionEnsure();
	zk_collect_held_events();

	zk_stat_begin(&call, ZK_STAT_SEMAPHORE, ZK_MODE_LEASE, scope);
	entry = zk_lookup(path, ZK_MODE_LEASE);
	if (entry != NULL && entry->lost)
		zk_raise_lost(entry, 1);
	if (entry != NULL)
	{
		if (entry->max_leases != max_leases)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("ZooKeeper semaphore \"%s\" admits %d leases, not %d",
							ZkUtf8ForMessage(path), entry->max_leases,
							max_leases),
					 errdetail("This backend holds a lease taken with max_leases = %d.",
							   entry->max_leases),
					 errhint("Every user of a semaphore must give it the same max_leases.")));
		zk_add_hold(entry, scope);
		*token = entry->token;
		zk_stat_end(&call, ZK_STAT_GRANTED);
		return true;
	}
	zk_check_root();
	zk_check_room(1);

	memset(&args, 0, sizeof(args));
	args.sem_node = zk_lock_node_path(path);
	args.sem_path = path;
	args.max_leases = max_leases;
	args.wait_ms = wait_ms;
	args.data = ZkBuildNodeData(ZK_MODE_LEASE, scope, -1, &args.datalen);

	start = GetCurrentTimestamp();
	rcall.recipe = ZK_RECIPE_SEMAPHORE;
	rcall.args = &args;
	rcall.result = &grant;
	if (!zk_counted(&call, &rcall, start))
		return false;
	entry = zk_enter_grant(path, ZK_MODE_LEASE, &grant, NULL, start);
	entry->max_leases = max_leases;
	zk_add_hold(entry, scope);
	*token = grant.token;
	return true;
}

/*
 * ZkLockReleaseLease
 *		Release one session hold of a semaphore's lease (zk_release_one),
 *		and wait for the release as zklock.synchronous_release says.
 */
bool
ZkLockReleaseLease(const char *path)
{
	bool		released;

	ZkLockReportExpiry();
	zk_collect_held_events();
	released = zk_release_one(path, true);
	zk_flush_releases();
	return released;
}

/*
 * zk_maybe_drop
 *		Release an entry's node once no hold of either kind is left.
 */
static void
zk_maybe_drop(ZkLockEntry *entry)
{
	if (entry->session_holds == 0 && entry->xact_holds == 0)
		zk_drop_entry(entry, true);
}

/*
 * zk_drop_entry
 *		Remove an entry; with delete_nodes, queue its node for release
 *		(zk_flush_releases sends it), minding the downgrade guard.  Never
 *		raises an ERROR but out of memory.
 */
static void
zk_drop_entry(ZkLockEntry *entry, bool delete_nodes)
{
	char	   *path = (char *) entry->key.path;

	if (delete_nodes)
	{
		if (entry->key.mode == ZK_MODE_EXCLUSIVE)
		{
			ZkLockEntry *reader = zk_lookup(path, ZK_MODE_SHARED);

			/* kept alive as a guard while our read lock lasts */
			if (reader == NULL || reader->guard_znode == NULL ||
				strcmp(reader->guard_znode, entry->znode) != 0)
			{
				zk_queue_release(entry->znode);
				entry->znode = NULL;
			}
		}
		else
		{
			zk_queue_release(entry->znode);
			entry->znode = NULL;
			if (entry->guard_znode != NULL)
			{
				ZkLockEntry *writer = zk_lookup(path, ZK_MODE_EXCLUSIVE);

				if (writer == NULL || strcmp(writer->znode, entry->guard_znode) != 0)
				{
					zk_queue_release(entry->guard_znode);
					entry->guard_znode = NULL;
				}
			}
		}
	}

	if (entry->xact_holds > 0)
		dlist_delete(&entry->xact_link);
	if (entry->znode)
		pfree(entry->znode);
	if (entry->guard_znode)
		pfree(entry->guard_znode);
	if (entry->xact)
		pfree(entry->xact);
	hash_search(zk_locks, &entry->key, HASH_REMOVE, NULL);
	pfree(path);
}

/*
 * zk_queue_release
 *		Take over a released node's path (palloc'd in ZkLockContext) until
 *		zk_flush_releases sends its delete.  The array only grows to the
 *		largest batch, which zklock.max_locks_per_backend bounds.
 */
static void
zk_queue_release(char *znode)
{
	if (zk_nreleased == zk_maxreleased)
	{
		int			newmax = Max(16, zk_maxreleased * 2);

		if (zk_released == NULL)
			zk_released = MemoryContextAlloc(ZkLockContext,
											 sizeof(char *) * newmax);
		else
			zk_released = repalloc(zk_released, sizeof(char *) * newmax);
		zk_maxreleased = newmax;
	}
	zk_released[zk_nreleased++] = znode;
}

/*
 * zk_flush_releases
 *		Send the deletes of every node released since the last flush, in
 *		one batch, and with zklock.synchronous_release wait until ZooKeeper
 *		applied them (see the file header).  In the transaction callbacks
 *		PostgreSQL holds interrupts, so the wait there raises no ERROR.
 */
static void
zk_flush_releases(void)
{
	int			n = zk_nreleased;
	bool		wait = zklock_synchronous_release && !proc_exit_inprogress;
	ZkOp	   *op;

	if (n == 0)
		return;

	/* sent once, whatever happens next: forget them first */
	zk_nreleased = 0;
	op = ZkReleaseSend((const char *const *) zk_released, n, wait);
	for (int i = 0; i < n; i++)
		pfree(zk_released[i]);

	if (op != NULL && !ZkReleaseWait(op))
		ereport(WARNING,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg_plural("release of %d ZooKeeper lock is not yet confirmed",
							   "release of %d ZooKeeper locks is not yet confirmed",
							   n, n),
				 errdetail("The connection to ZooKeeper was not back within zklock.connect_timeout (%d ms). The release is retried in the background until it succeeds or the session ends; other servers may see the lock held until then.",
						   zklock_connect_timeout)));
}

/*
 * ZkLockReadQueue
 *		The cluster's queue of a lock path, in order (zk_lock_queue): all of
 *		it with max_rows < 0, else the first max_rows nodes, reading node
 *		data for those only.  Opens the session if needed; our own
 *		downgrade read node shows as granted.  Returns the number of
 *		entries.
 */
int
ZkLockReadQueue(const char *path, int max_rows, ZkQueueEntry **entries)
{
	char	   *lock_node;
	int			n;

	zk_ensure_session();
	lock_node = zk_lock_node_path(path);
	n = ZkReadQueueHead(lock_node, path, max_rows, entries);
	for (int i = 0; i < n; i++)
	{
		char	   *znode = psprintf("%s/%s", lock_node, (*entries)[i].znode);

		if (!(*entries)[i].granted && zk_holds_node(path, znode))
			(*entries)[i].granted = true;
		pfree(znode);
	}
	pfree(lock_node);
	return n;
}

/*
 * ZkLockSessionStatus
 *		What zk_session() shows; does not open a session.
 */
void
ZkLockSessionStatus(ZkSessionStatus *status)
{
	ZkSessionGetStatus(status);
}

/*
 * ZkLockClusterScan
 *		Every lock path with a queue under the prefix ("" for all of
 *		zklock.root), cluster-wide, handed to cb one at a time
 *		(zk_cluster_locks).  Opens the session if needed.
 */
void
ZkLockClusterScan(const char *prefix, ZkClusterLockCallback cb, void *arg)
{
	zk_ensure_session();
	ZkClusterScan(zklock_root, prefix, cb, arg);
}

/*
 * ZkLockBlockers
 *		The queue nodes, on any server, that block the waiting backend
 *		'pid' of this server (zk_blocking_pids).  Opens the session if
 *		needed.  Returns the number of entries.
 */
int
ZkLockBlockers(int pid, ZkBlockerInfo **blockers)
{
	zk_ensure_session();
	return ZkClusterBlockers(zklock_root, pid, blockers);
}

/*
 * ZkLockReportExpiry
 *		If the watcher saw the session expire, raise the ERROR naming the
 *		lost locks now (the first zklock call after an expiry reports it),
 *		rather than release locks that are already gone.
 */
void
ZkLockReportExpiry(void)
{
	if (zk_locks != NULL && ZkSessionIsExpired())
		ZkSessionEnsure();
}

/*
 * zk_release_one
 *		Drop one session hold on a path: of its lease if 'lease', else of
 *		the exclusive lock if held (so that write, read, unlock is a
 *		downgrade), else of the shared one.  The node is queued for release
 *		if that was the last hold.  WARNING and false if the backend holds
 *		no such session hold.
 */
static bool
zk_release_one(const char *path, bool lease)
{
	ZkLockEntry *entry = NULL;

	if (zk_locks != NULL && lease)
		entry = zk_lookup(path, ZK_MODE_LEASE);
	else if (zk_locks != NULL)
	{
		entry = zk_lookup(path, ZK_MODE_EXCLUSIVE);
		if (entry == NULL || entry->session_holds == 0)
			entry = zk_lookup(path, ZK_MODE_SHARED);
	}
	if (entry == NULL || entry->session_holds == 0)
	{
		if (lease)
			ereport(WARNING,
					(errcode(ERRCODE_WARNING),
					 errmsg("you don't own a session lease on ZooKeeper semaphore \"%s\"",
							ZkUtf8ForMessage(path))));
		else
			ereport(WARNING,
					(errcode(ERRCODE_WARNING),
					 errmsg("you don't own a session lock on ZooKeeper path \"%s\"",
							ZkUtf8ForMessage(path))));
		return false;
	}
	entry->session_holds--;
	zk_maybe_drop(entry);
	return true;
}

/*
 * ZkLockRelease
 *		Release one session hold on a path (zk_release_one), and wait for
 *		the release as zklock.synchronous_release says.
 */
bool
ZkLockRelease(const char *path)
{
	bool		released;

	ZkLockReportExpiry();
	zk_collect_held_events();
	released = zk_release_one(path, false);
	zk_flush_releases();
	return released;
}

/*
 * ZkLockReleaseSet
 *		Release one session hold on each of n paths (a path given twice,
 *		twice), all the nodes that go in one batch.  False, after a WARNING
 *		for each, if some path had no session hold left; the others are
 *		released all the same.
 */
bool
ZkLockReleaseSet(const char *const *paths, int n)
{
	bool		all = true;

	ZkLockReportExpiry();
	zk_collect_held_events();
	for (int i = 0; i < n; i++)
		all &= zk_release_one(paths[i], false);
	zk_flush_releases();
	return all;
}

/*
 * ZkLockReleaseAll
 *		Release every session hold of the backend.
 */
void
ZkLockReleaseAll(void)
{
	HASH_SEQ_STATUS status;
	ZkLockEntry *entry;

	ZkLockReportExpiry();
	zk_collect_held_events();
	if (zk_locks == NULL)
		return;
	hash_seq_init(&status, zk_locks);
	while ((entry = (ZkLockEntry *) hash_seq_search(&status)) != NULL)
	{
		/* a double barrier is left with zk_double_barrier_leave */
		if (entry->session_holds > 0 && entry->key.mode != ZK_MODE_MEMBER)
		{
			entry->session_holds = 0;
			zk_maybe_drop(entry);
		}
	}
	zk_flush_releases();
}

/*
 * ZkLockDiscardAll
 *		DISCARD ALL: release every session hold of the backend, as
 *		zk_unlock_all does (and as DISCARD ALL releases PostgreSQL's own
 *		advisory locks), and forget the lease names it remembers.  Unlike
 *		zk_unlock_all it raises no ERROR for a session that expired: those
 *		locks are gone already, which a WARNING says.  Leases are not held
 *		by the backend and are left alone.
 */
void
ZkLockDiscardAll(void)
{
	HASH_SEQ_STATUS status;
	ZkLockEntry *entry;

	ZkLeaseForgetNames();
	if (zk_locks == NULL || hash_get_num_entries(zk_locks) == 0)
		return;

	if (ZkSessionIsExpired())
	{
		StringInfoData list;
		int			n = (int) hash_get_num_entries(zk_locks);

		initStringInfo(&list);
		zk_describe_held(&list);
		ZkStatLocksLost(n);
		/* nodes released before the expiry went with the session */
		for (int i = 0; i < zk_nreleased; i++)
			pfree(zk_released[i]);
		zk_nreleased = 0;
		hash_seq_init(&status, zk_locks);
		while ((entry = (ZkLockEntry *) hash_seq_search(&status)) != NULL)
			zk_drop_entry(entry, false);
		ereport(WARNING,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg_plural("ZooKeeper session expired: %d lock was lost",
							   "ZooKeeper session expired: %d locks were lost",
							   n, n),
				 errdetail("Lost: %s.", list.data),
				 errhint("The next zklock call opens a new session.")));
		return;
	}

	zk_collect_held_events();
	hash_seq_init(&status, zk_locks);
	while ((entry = (ZkLockEntry *) hash_seq_search(&status)) != NULL)
	{
		if (entry->session_holds > 0)
		{
			entry->session_holds = 0;
			zk_maybe_drop(entry);
		}
	}
	zk_flush_releases();
}

/*
 * zk_raise_no_lease
 *		No lease with this token holds the lock: the ERROR of zk_lease_renew.
 *		A token this backend knows as another lock's lease is named so.
 */
static void
zk_raise_no_lease(const char *path, int64 token, const char *what)
{
	const char *other = ZkLeaseKnownLockNode(token);
	size_t		rootlen = strlen(zklock_root);

	if (other != NULL && strncmp(other, zklock_root, rootlen) == 0 &&
		strcmp(other + rootlen, path) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ZooKeeper lease token %lld belongs to lock \"%s\", not \"%s\"",
						(long long) token, ZkUtf8ForMessage(other + rootlen),
						ZkUtf8ForMessage(path))));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("no ZooKeeper lease with token %lld holds lock \"%s\"",
					(long long) token, ZkUtf8ForMessage(path)),
			 errdetail("The lease could not be %s: it expired, was released, or never held this lock.",
					   what),
			 errhint("A lost lease is not taken again by itself: take a new one with zk_lease_lock.")));
}

/*
 * zk_touch_lease
 *		Record that this transaction took or renewed a lease, for the check
 *		at COMMIT.
 */
static void
zk_touch_lease(const char *path, const ZkLeaseInfo *info)
{
	ZkLeaseTouch *t = NULL;

	for (int i = 0; i < zk_nleases_touched && t == NULL; i++)
	{
		if (strcmp(zk_leases_touched[i].znode, info->znode) == 0)
			t = &zk_leases_touched[i];
	}
	if (t == NULL)
	{
		if (zk_nleases_touched == zk_maxleases_touched)
		{
			int			newmax = Max(8, zk_maxleases_touched * 2);

			if (zk_leases_touched == NULL)
				zk_leases_touched = MemoryContextAlloc(ZkLockContext,
													   sizeof(ZkLeaseTouch) * newmax);
			else
				zk_leases_touched = repalloc(zk_leases_touched,
											 sizeof(ZkLeaseTouch) * newmax);
			zk_maxleases_touched = newmax;
		}
		t = &zk_leases_touched[zk_nleases_touched++];
		t->path = MemoryContextStrdup(ZkLockContext, path);
		t->znode = MemoryContextStrdup(ZkLockContext, info->znode);
		t->sent_at = 0;
	}
	t->token = info->token;
	t->ttl_ms = info->ttl_ms;
	t->sent_at = Max(t->sent_at, info->sent_at);
}

/*
 * zk_forget_touched_leases
 *		The transaction ended: its leases need no more checking.  The array
 *		is freed, so that it never outgrows one transaction's leases.
 */
static void
zk_forget_touched_leases(void)
{
	for (int i = 0; i < zk_nleases_touched; i++)
	{
		pfree(zk_leases_touched[i].path);
		pfree(zk_leases_touched[i].znode);
	}
	if (zk_leases_touched != NULL)
		pfree(zk_leases_touched);
	zk_leases_touched = NULL;
	zk_nleases_touched = 0;
	zk_maxleases_touched = 0;
}

/*
 * zk_lease_raise_expired
 *		A lease this transaction took or renewed may have expired: COMMIT
 *		must fail.
 */
static void
zk_lease_raise_expired(const ZkLeaseTouch *t, int64 now)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("cannot commit: the ZooKeeper lease on lock \"%s\" may have expired",
					ZkUtf8ForMessage(t->path)),
			 errdetail("The transaction took or renewed lease %lld %lld ms ago, and its ttl is %lld ms.",
					   (long long) t->token, (long long) (now - t->sent_at),
					   (long long) t->ttl_ms),
			 errhint("Renew a lease well within its ttl, for example every third of it.")));
}

/*
 * zk_leases_pre_commit
 *		A transaction that took or renewed leases may COMMIT only while each
 *		is still held:
 *
 *	- its ttl has not run out since the request that granted or last
 *	  renewed it was sent (the server cannot have modified the node before
 *	  that, so it cannot reap it before that time plus the ttl): checked
 *	  locally, no round trip;
 *	- its node still exists, unless the answer that granted or renewed it
 *	  came for a request sent less than a third of zklock.session_timeout
 *	  ago (a transaction that just took or renewed its lease pays no extra
 *	  round trip): one round trip, a sync and a read of every such lease.
 *	  zklock.verify_on_commit makes every COMMIT ask.
 *
 * What remains: a release by another backend, or a deletion by another
 * client, within that third of the session timeout, and anything that
 * happens between this check and the commit record; fencing tokens are
 * the answer to that outside the database.  A lease released in the same
 * transaction is not checked.
 */
static void
zk_leases_pre_commit(void)
{
	int64		now = ZkNowMs();
	int64		fresh_ms = zklock_session_timeout / 3;
	bool		ask = zklock_verify_on_commit;
	const char **znodes;
	bool	   *gone;

	for (int i = 0; i < zk_nleases_touched; i++)
	{
		ZkLeaseTouch *t = &zk_leases_touched[i];

		if (now >= t->sent_at + t->ttl_ms)
			zk_lease_raise_expired(t, now);
		if (now - t->sent_at >= fresh_ms)
			ask = true;
	}
	if (!ask)
		return;

	ZkSessionEnsure();
	znodes = palloc(sizeof(char *) * zk_nleases_touched);
	gone = palloc(sizeof(bool) * zk_nleases_touched);
	for (int i = 0; i < zk_nleases_touched; i++)
		znodes[i] = zk_leases_touched[i].znode;
	if (!ZkVerifyHeld(znodes, zk_nleases_touched, gone,
					  zklock_connect_timeout))
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("could not confirm ZooKeeper leases before commit"),
				 errdetail("ZooKeeper did not answer for zklock.connect_timeout (%d ms).",
						   zklock_connect_timeout)));
	zk_collect_held_events();
	now = ZkNowMs();
	for (int i = 0; i < zk_nleases_touched; i++)
	{
		ZkLeaseTouch *t = &zk_leases_touched[i];

		if (gone[i])
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("cannot commit: the ZooKeeper lease on lock \"%s\" is gone",
							ZkUtf8ForMessage(t->path)),
					 errdetail("The node \"%s\" of lease %lld no longer exists: the lease was released or expired.",
							   ZkUtf8ForMessage(t->znode), (long long) t->token)));
		if (now >= t->sent_at + t->ttl_ms)
			zk_lease_raise_expired(t, now);
	}
	pfree(znodes);
	pfree(gone);
}

/*
 * ZkLockLeaseAcquire
 *		Take a lease on a path for ttl_ms (lease_lock.c); wait_ms as for
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
	TimestampTz start;
	ZkStatCall	call;
	ZkRecipeCall rcall = {0};

	zk_locks_init();
	ZkSessionEnsure();
	zk_collect_held_events();
	if (zk_lookup(path, ZK_MODE_EXCLUSIVE) != NULL ||
		zk_lookup(path, ZK_MODE_SHARED) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("cannot take a lease on ZooKeeper lock \"%s\" while this backend holds the lock",
						ZkUtf8ForMessage(path)),
				 errdetail("The lease would wait for this backend's own lock forever."),
				 errhint("Release the lock first.")));

	memset(&args, 0, sizeof(args));
	args.lock_node = zk_lock_node_path(path);
	args.lock_path = path;
	args.ttl_ms = ttl_ms;
	args.style = (ZkNodeStyle) zklock_exclusive_node_style;
	args.wait_ms = wait_ms;
	args.data = ZkBuildNodeData(ZK_MODE_EXCLUSIVE, ZK_SCOPE_LEASE, ttl_ms,
								&args.datalen);
	zk_stat_begin(&call, ZK_STAT_LOCK, ZK_MODE_EXCLUSIVE, ZK_SCOPE_LEASE);
	start = GetCurrentTimestamp();
	rcall.recipe = ZK_RECIPE_LEASE;
	rcall.args = &args;
	rcall.result = &info;
	if (!zk_counted(&call, &rcall, start))
		return false;
	zk_touch_lease(path, &info);
	*token = info.token;
	*expires_at = info.expires_at;
	return true;
}

/*
 * ZkLockLeaseRenew
 *		Renew the lease 'token' on a path, from any backend: its ttl runs
 *		again from now.  Returns the new expiry (ms since the Unix epoch, on
 *		the ZooKeeper server's clock).  ERROR if no such lease holds the
 *		lock, or if it had expired: a lost lease is never taken again
 *		silently.
 */
int64
ZkLockLeaseRenew(const char *path, int64 token)
{
	ZkLeaseInfo info;
	char	   *lock_node;

	zk_locks_init();
	ZkSessionEnsure();
	/* events of watches left on lease nodes: taken, so they do not pile up */
	zk_collect_held_events();
	lock_node = zk_lock_node_path(path);
	switch (ZkLeaseRenew(lock_node, path, token, &info))
	{
		case ZK_LEASE_OK:
			break;
		case ZK_LEASE_NONE:
			zk_raise_no_lease(path, token, "renewed");
			break;
		case ZK_LEASE_EXPIRED:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("ZooKeeper lease %lld on lock \"%s\" has expired",
							(long long) token, ZkUtf8ForMessage(path)),
					 errdetail("Its ttl had run out before this renewal, so ZooKeeper could remove it at any moment; the lease was released."),
					 errhint("Renew a lease well within its ttl, for example every third of it.")));
			break;
	}
	pfree(lock_node);
	zk_touch_lease(path, &info);
	return info.expires_at;
}

/*
 * ZkLockLeaseRelease
 *		Release the lease 'token' on a path, from any backend, once
 *		ZooKeeper applied the delete.  WARNING and false if no such lease
 *		holds the lock.
 */
bool
ZkLockLeaseRelease(const char *path, int64 token)
{
	char	   *lock_node;
	ZkLeaseStatus st;

	zk_locks_init();
	ZkSessionEnsure();
	zk_collect_held_events();
	lock_node = zk_lock_node_path(path);
	st = ZkLeaseRelease(lock_node, path, token);
	pfree(lock_node);
	if (st != ZK_LEASE_OK)
	{
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("no ZooKeeper lease with token %lld holds lock \"%s\"",
						(long long) token, ZkUtf8ForMessage(path))));
		return false;
	}
	/* released: nothing for this transaction's COMMIT to check */
	for (int i = 0; i < zk_nleases_touched; i++)
	{
		if (zk_leases_touched[i].token == token &&
			strcmp(zk_leases_touched[i].path, path) == 0)
		{
			pfree(zk_leases_touched[i].path);
			pfree(zk_leases_touched[i].znode);
			zk_leases_touched[i] = zk_leases_touched[--zk_nleases_touched];
			break;
		}
	}
	return true;
}

/*
 * ZkLockBarrierSet, ZkLockBarrierRemove, ZkLockBarrierWait
 *		Barriers (barrier.c): nothing of them is held by the backend.
 */
bool
ZkLockBarrierSet(const char *path)
{
	zk_ensure_session();
	return ZkBarrierSet(zk_lock_node_path(path), path);
}

bool
ZkLockBarrierRemove(const char *path)
{
	zk_ensure_session();
	return ZkBarrierRemove(zk_lock_node_path(path), path);
}

bool
ZkLockBarrierWait(const char *path, int64 wait_ms)
{
	zk_ensure_session();
	return ZkBarrierWait(zk_lock_node_path(path), path, wait_ms);
}

/*
 * ZkLockDoubleBarrierEnter
 *		Enter the double barrier at path (double_barrier.c) as one of
 *		`members'; wait_ms as for ZkLockAcquire.  The membership is an entry
 *		of mode "member", held until zk_double_barrier_leave, DISCARD ALL or
 *		the backend's exit (its node is ephemeral).  A backend is one member
 *		of a barrier at most.
 */
bool
ZkLockDoubleBarrierEnter(const char *path, int members, int64 wait_ms)
{
	ZkMember	member;
	ZkGrant		grant;
	ZkLockEntry *entry;
	TimestampTz start;
	char	   *data;
	int			datalen;
	ZkStatCall	call;
	ZkRecipeCall rcall = {0};

	zk_locks_init();
	ZkSessionEnsure();
	zk_collect_held_events();
	if (zk_lookup(path, ZK_MODE_MEMBER) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("this backend is a member of ZooKeeper double barrier \"%s\" already",
						ZkUtf8ForMessage(path)),
				 errhint("Leave it with zk_double_barrier_leave first.")));
	zk_check_root();
	zk_check_room(1);
	data = ZkBuildNodeData(ZK_MODE_MEMBER, ZK_SCOPE_SESSION, -1, &datalen);
	start = GetCurrentTimestamp();
	zk_stat_begin(&call, ZK_STAT_DOUBLE_BARRIER, ZK_MODE_MEMBER,
				  ZK_SCOPE_SESSION);
	rcall.recipe = ZK_RECIPE_ENTER;
	rcall.node = zk_lock_node_path(path);
	rcall.path = path;
	rcall.members = members;
	rcall.wait_ms = wait_ms;
	rcall.data = data;
	rcall.datalen = datalen;
	rcall.result = &member;
	if (!zk_counted(&call, &rcall, start))
		return false;
	memset(&grant, 0, sizeof(grant));
	grant.znode = member.znode;
	grant.token = member.token;
	entry = zk_enter_grant(path, ZK_MODE_MEMBER, &grant, NULL, start);
	zk_add_hold(entry, ZK_SCOPE_SESSION);
	return true;
}

/*
 * ZkLockDoubleBarrierLeave
 *		Leave the double barrier at path; wait_ms as for ZkLockAcquire.
 *		WARNING and false if this backend is not a member.  The membership
 *		ends however the call ends (the recipe deletes our node).
 */
bool
ZkLockDoubleBarrierLeave(const char *path, int64 wait_ms)
{
	ZkLockEntry *entry;
	char	   *znode;
	bool		result;

	ZkLockReportExpiry();
	zk_collect_held_events();
	entry = zk_locks ? zk_lookup(path, ZK_MODE_MEMBER) : NULL;
	if (entry == NULL)
	{
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("you are not a member of ZooKeeper double barrier \"%s\"",
						ZkUtf8ForMessage(path))));

		return false;
	}
	znode = pstrdup(entry->znode);
	PG_TRY();
	{
		result = ZkDoubleBarrierLeave(zk_lock_node_path(path), path, znode,
									  wait_ms);
	}
	PG_CATCH();
	{
		entry = zk_lookup(path, ZK_MODE_MEMBER);
		if (entry != NULL)
			zk_drop_entry(entry, false);
		PG_RE_THROW();
	}
	PG_END_TRY();
	entry = zk_lookup(path, ZK_MODE_MEMBER);
	if (entry != NULL)
		zk_drop_entry(entry, false);
	return result;
}

/*
 * zk_holds_node
 *		Is this queue node one of ours, held?  (zk_lock_queue shows our own
 *		downgrade read node as granted, though by the queue rule alone it
 *		would wait for our write node.)
 */
static bool
zk_holds_node(const char *path, const char *znode)
{
	for (int m = 0; zk_locks != NULL && m < 2; m++)
	{
		ZkLockEntry *entry = zk_lookup(path, m == 0 ? ZK_MODE_EXCLUSIVE :
									   ZK_MODE_SHARED);

		if (entry != NULL && strcmp(entry->znode, znode) == 0)
			return true;
	}
	return false;
}

int
ZkLockCount(void)
{
	return zk_locks ? (int) hash_get_num_entries(zk_locks) : 0;
}

static int
zk_info_cmp(const void *a, const void *b)
{
	const ZkLockInfo *x = (const ZkLockInfo *) a;
	const ZkLockInfo *y = (const ZkLockInfo *) b;
	int			c = strcmp(x->path, y->path);

	if (c != 0)
		return c;
	if (x->mode != y->mode)
		return x->mode < y->mode ? -1 : 1;
	return x->scope < y->scope ? -1 : (x->scope > y->scope);
}

/*
 * ZkLockList
 *		Rows for the zk_locks view, one per (path, mode, scope), sorted.
 */
int
ZkLockList(ZkLockInfo **rows)
{
	HASH_SEQ_STATUS status;
	ZkLockEntry *entry;
	ZkLockInfo *out;
	int			n = 0;

	if (zk_locks == NULL || hash_get_num_entries(zk_locks) == 0)
	{
		*rows = NULL;
		return 0;
	}
	out = palloc(sizeof(ZkLockInfo) * 2 * hash_get_num_entries(zk_locks));
	hash_seq_init(&status, zk_locks);
	while ((entry = (ZkLockEntry *) hash_seq_search(&status)) != NULL)
	{
		for (int s = 0; s < 2; s++)
		{
			int			holds = s == 0 ? entry->session_holds : entry->xact_holds;

			if (holds == 0)
				continue;
			out[n].path = pstrdup(entry->key.path);
			out[n].mode = entry->key.mode;
			out[n].scope = s == 0 ? ZK_SCOPE_SESSION : ZK_SCOPE_TRANSACTION;
			out[n].holds = holds;
			out[n].znode = pstrdup(entry->znode);
			out[n].token = entry->token;
			out[n].acquired_at = entry->acquired_at;
			out[n].waited_us = entry->waited_us;
			n++;
		}
	}
	qsort(out, n, sizeof(ZkLockInfo), zk_info_cmp);
	*rows = out;
	return n;
}

/*
 * zk_release_xact_holds
 *		Drop the transaction holds taken at nesting level from_level or
 *		deeper (1: all of them), releasing nodes left without holds.
 */
static void
zk_release_xact_holds(int from_level)
{
	dlist_mutable_iter iter;

	dlist_foreach_modify(iter, &zk_xact_entries)
	{
		ZkLockEntry *entry = dlist_container(ZkLockEntry, xact_link, iter.cur);

		while (entry->nxact > 0 && entry->xact[entry->nxact - 1].level >= from_level)
		{
			entry->xact_holds -= entry->xact[entry->nxact - 1].count;
			entry->nxact--;
		}
		if (entry->xact_holds == 0)
		{
			dlist_delete(&entry->xact_link);
			if (entry->session_holds == 0)
				zk_drop_entry(entry, true);
		}
	}
}

/*
 * zk_promote_xact_holds
 *		A subtransaction at 'level' committed: its holds now belong to its
 *		parent.
 */
static void
zk_promote_xact_holds(int level)
{
	dlist_iter	iter;

	dlist_foreach(iter, &zk_xact_entries)
	{
		ZkLockEntry *entry = dlist_container(ZkLockEntry, xact_link, iter.cur);
		int			n = entry->nxact;

		if (n == 0 || entry->xact[n - 1].level != level)
			continue;
		if (n >= 2 && entry->xact[n - 2].level == level - 1)
		{
			entry->xact[n - 2].count += entry->xact[n - 1].count;
			entry->nxact--;
		}
		else
			entry->xact[n - 1].level = level - 1;
	}
}

static int
zk_locks_held(void)
{
	return ZkLockCount();
}

/*
 * zk_locks_lost
 *		Session-lost hook: the session expired (and is closed already).
 *		Every lock is gone: forget them and raise the ERROR that names them.
 *		Returns quietly when nothing was held.
 */
static void
zk_locks_lost(void)
{
	ZkLockInfo *rows;
	int			n;
	StringInfoData list;
	HASH_SEQ_STATUS status;
	ZkLockEntry *entry;

	/* nodes released before the expiry went with the session */
	for (int i = 0; i < zk_nreleased; i++)
		pfree(zk_released[i]);
	zk_nreleased = 0;

	n = ZkLockList(&rows);
	if (n == 0)
		return;

	initStringInfo(&list);
	zk_describe_held(&list);

	ZkStatLocksLost((int) hash_get_num_entries(zk_locks));
	hash_seq_init(&status, zk_locks);
	while ((entry = (ZkLockEntry *) hash_seq_search(&status)) != NULL)
	{
		if (entry->xact_holds > 0)
		{
			dlist_delete(&entry->xact_link);
			entry->xact_holds = 0;
		}
		zk_drop_entry(entry, false);
	}
	if (IsTransactionState())
		zk_xact_lost_locks = true;

	ereport(ERROR,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg_plural("ZooKeeper session expired: %d lock was lost",
						   "ZooKeeper session expired: %d locks were lost",
						   n, n),
			 errdetail("Lost: %s.", list.data),
			 errhint("The next zklock call opens a new session.")));
}

/*
 * zk_describe_held
 *		Append the locks this backend holds, as error messages name them:
 *		"/a" (exclusive, session), "/b" (shared, transaction), ...
 */
static void
zk_describe_held(StringInfo buf)
{
	ZkLockInfo *rows;
	int			n = ZkLockList(&rows);

	for (int i = 0; i < n; i++)
		appendStringInfo(buf, "%s\"%s\" (%s, %s)", i > 0 ? ", " : "",
						 ZkUtf8ForMessage(rows[i].path), ZkLockModeName(rows[i].mode),

						 ZkLockScopeName(rows[i].scope));
}

/*
 * zk_locks_pre_commit
 *		Refuse to COMMIT while the backend's locks may be lost.
 *
 * Every COMMIT of a backend that holds any zklock lock (session or
 * transaction scope, read-only transactions included: their effects may
 * live outside this database, through dblink, postgres_fdw, NOTIFY or
 * files) requires that the session be known alive:
 *
 *	- no expiry seen by the watcher, no held node seen deleted (local);
 *	- a fresh lease: the server answered a request sent less than a third
 *	  of the session timeout ago, which costs nothing for a transaction
 *	  that just took or used its locks; or else one round trip now (a
 *	  sync), waiting for a lost connection no longer than the session could
 *	  still be alive (ZkSessionConfirmAlive).
 *
 * With zklock.verify_on_commit, the server must moreover confirm that each
 * held node still exists (ZkVerifyHeld: one round trip however many, a
 * sync once every held node is watched).
 *
 * This runs before the commit record is written.  A session lost between
 * this check and the end of the COMMIT is not caught; the lease makes
 * that window at most the rest of the session timeout after the last
 * answer, and fencing tokens are the answer to it outside the database.
 */
static void
zk_locks_pre_commit(void)
{
	HASH_SEQ_STATUS status;
	ZkLockEntry *entry;
	ZkLockEntry *first_lost = NULL;
	int			nlost = 0;

	if (zk_xact_lost_locks)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("cannot commit a transaction whose ZooKeeper locks were lost"),
				 errdetail("The ZooKeeper session expired or a held node was deleted during the transaction.")));

	if (zk_nleases_touched > 0)
		zk_leases_pre_commit();

	if (zk_locks == NULL || hash_get_num_entries(zk_locks) == 0)
		return;

	/* an expiry already seen by the watcher: report it (raises) */
	if (ZkSessionIsExpired())
		ZkSessionEnsure();
	zk_collect_held_events();

	if (zklock_verify_on_commit)
	{
		long		nheld = hash_get_num_entries(zk_locks);
		const char **znodes = palloc(sizeof(char *) * nheld);
		ZkLockEntry **unwatched = palloc(sizeof(ZkLockEntry *) * nheld);
		bool	   *gone = palloc(sizeof(bool) * nheld);
		int			n = 0;

		hash_seq_init(&status, zk_locks);
		while ((entry = (ZkLockEntry *) hash_seq_search(&status)) != NULL)
		{
			if (!entry->watched && !entry->lost)
			{
				unwatched[n] = entry;
				znodes[n++] = entry->znode;
			}
		}
		if (!ZkVerifyHeld(znodes, n, gone, zklock_connect_timeout))
		{
			StringInfoData held;

			initStringInfo(&held);
			zk_describe_held(&held);
			ereport(ERROR,
					(errcode(ERRCODE_CONNECTION_FAILURE),
					 errmsg("could not confirm ZooKeeper locks before commit"),
					 errdetail("ZooKeeper did not answer for zklock.connect_timeout (%d ms); these locks may be lost: %s.",
							   zklock_connect_timeout, held.data)));
		}
		for (int i = 0; i < n; i++)
		{
			if (gone[i])
				unwatched[i]->lost = true;
			else
				unwatched[i]->watched = true;
		}
		/* deletions of nodes watched before, notified before the sync's answer */
		zk_collect_held_events();
	}
	else
	{
		switch (ZkSessionConfirmAlive())
		{
			case ZK_SESSION_ALIVE:
				break;
			case ZK_SESSION_EXPIRED:
				/* closes the session and raises the ERROR naming the locks */
				ZkSessionEnsure();
				elog(ERROR, "expired ZooKeeper session was not reported");
				break;
			case ZK_SESSION_UNCONFIRMED:
				{
					StringInfoData held;

					initStringInfo(&held);
					zk_describe_held(&held);
					ereport(ERROR,
							(errcode(ERRCODE_CONNECTION_FAILURE),
							 errmsg("could not confirm the ZooKeeper session before commit"),
							 errdetail("ZooKeeper did not answer before the session could have expired; these locks may be lost: %s.",
									   held.data),
							 errhint("The transaction is rolled back. Check zk_session() and the connection to ZooKeeper.")));
				}
		}
		/* held-node deletions notified before the answers that renewed the lease */
		zk_collect_held_events();
	}

	hash_seq_init(&status, zk_locks);
	while ((entry = (ZkLockEntry *) hash_seq_search(&status)) != NULL)
	{
		if (entry->lost)
		{
			nlost++;
			if (first_lost == NULL)
				first_lost = entry;
		}
	}
	if (first_lost != NULL)
		zk_raise_lost(first_lost, nlost);
}

/*
 * zk_locks_xact_callback
 *		Transaction end: release transaction holds; refuse PREPARE while
 *		holding them; verify before COMMIT.  Only PRE_COMMIT and PRE_PREPARE
 *		may raise an ERROR.
 */
static void
zk_locks_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
			zk_locks_pre_commit();
			break;
		case XACT_EVENT_PRE_PREPARE:
			if (!dlist_is_empty(&zk_xact_entries))
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that holds ZooKeeper transaction locks")));
			/* the leases it took or renewed must still be held */
			if (zk_nleases_touched > 0)
				zk_leases_pre_commit();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			if (!dlist_is_empty(&zk_xact_entries))
				zk_release_xact_holds(1);
			/* PostgreSQL holds interrupts here: a bounded wait, no ERROR */
			zk_flush_releases();
			zk_xact_lost_locks = false;
			zk_forget_touched_leases();
			break;
	}
}

static void
zk_locks_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						  SubTransactionId parentSubid, void *arg)
{
	if (dlist_is_empty(&zk_xact_entries) && zk_nreleased == 0)
		return;
	if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		zk_release_xact_holds(GetCurrentTransactionNestLevel());
		zk_flush_releases();
	}
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
		zk_promote_xact_holds(GetCurrentTransactionNestLevel());
}
