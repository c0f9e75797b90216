/*-------------------------------------------------------------------------
 *
 * holds/table.c
 *		The backend's table of held ZooKeeper locks: its entries and their
 *		hold counts.
 *
 * One entry per (path, mode) the backend holds: one queue node in ZooKeeper,
 * however many times it was taken. A semaphore's permit is an entry of mode
 * ZK_MODE_PERMIT (still "lease" in zk_locks and node data, Curator's word:
 * base/vocabulary.c), its node the permit
 * node (recipes/semaphore.c); a double barrier's membership an entry of mode
 * ZK_MODE_MEMBER. Session and transaction holds are
 * counted separately, like PostgreSQL's advisory locks; the node is released
 * when the last hold of either kind goes. Transaction holds remember the
 * subtransaction level that took them, so that ROLLBACK TO SAVEPOINT (and a
 * PL/pgSQL exception block) releases what it took.
 *
 * Downgrade (taking the read lock while holding the write lock) creates a
 * read node that is granted at once; if other contenders queued between
 * our write node and it, the write node is kept until the read
 * node goes, so that those contenders cannot be granted while we still
 * read.  Upgrade (taking the write lock while holding the read lock, which
 * only zk_advisory's functions do) is the mirror image: if contenders
 * queued between our read node and the write node, the read node is kept
 * until the write node goes, since those contenders wait for it and the
 * write lock was granted without waiting for them.  A path has at most
 * two nodes of ours: taking a mode whose node the other mode keeps
 * adopts that node again (ZkEntryAdoptKept) instead of queueing.
 *
 * The other files of the lock table take (holds/acquire.c), release
 * (holds/release.c), check at transaction end (holds/commit.c) and find lost
 * (holds/lost.c) what this table holds; holds/unheld.c has the calls that
 * hold nothing.  Of them, the table calls only the batch of released nodes
 * (holds/batch.c).
 *
 * Everything lives in the "zklock" memory context under TopMemoryContext;
 * entries are freed when released, so nothing grows with the number of
 * lock/unlock cycles.  zklock.max_locks_per_backend bounds the entries.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "base/contender.h"
#include "recipes/attempt.h"
#include "holds/holds.h"
#include "holds/internal.h"
#include "base/text_encoding.h"
#include "base/vocabulary.h"
#include "client/client.h"

/* the held entries, by ZkLockKey (ZkLockContext) */
HTAB	   *ZkHeldLocks = NULL;

/* the entries with transaction holds */
static dlist_head zk_xact_entries = DLIST_STATIC_INIT(zk_xact_entries);

/*
 * zklock.root when the first of the held locks was taken: every held node
 * lives under it.  The setting's check hook refuses a new root while locks
 * are held, but RESET ALL (and so DISCARD ALL, which releases them all
 * right after) bypasses check hooks; ZkCheckRoot refuses new locks under
 * another root then.  (ZkLockContext)
 */
static char *zk_entries_root = NULL;

static bool zk_key_init(ZkLockKey *key, const char *path, ZkLockMode mode);
static uint32 zk_key_hash(const void *key, Size keysize);
static int	zk_key_match(const void *key1, const void *key2, Size keysize);
static void *zk_key_copy(void *dest, const void *src, Size keysize);
static int	zk_info_cmp(const void *a, const void *b);
static ZkLockEntry *zk_entry_enter(const char *path, ZkLockMode mode,
								   const ZkGrant *grant, ZkLockEntry *other,
								   TimestampTz start, bool adopted);

/*
 * zk_key_init
 *		Fill a hash key: the path with its terminating zero, and the mode;
 *		the bytes after the zero are left as they are (zk_key_hash and
 *		zk_key_match never read them).  False if the path is too long for a
 *		key, and so for any held lock.
 */
static bool
zk_key_init(ZkLockKey *key, const char *path, ZkLockMode mode)
{
	size_t		len = strlen(path);

	if (len > ZK_MAX_PATH_BYTES)
		return false;
	memcpy(key->path, path, len + 1);
	key->mode = mode;
	return true;
}

/*
 * zk_key_hash
 *		The table's hash function: the path's bytes (not the whole buffer,
 *		which would hash a kilobyte per lookup) combined with the mode.
 */
static uint32
zk_key_hash(const void *key, Size keysize)
{
	const ZkLockKey *k = (const ZkLockKey *) key;

	return hash_combine(hash_bytes((const unsigned char *) k->path,
								   (int) strlen(k->path)),
						(uint32) k->mode);
}

/*
 * zk_key_match
 *		The table's key comparison (0: equal): the mode, then the path up
 *		to its terminating zero.
 */
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
 * zk_key_copy
 *		The table's key copy at HASH_ENTER: the path up to its terminating
 *		zero and the mode, not the whole kilobyte of the path's buffer.
 */
static void *
zk_key_copy(void *dest, const void *src, Size keysize)
{
	ZkLockKey  *d = (ZkLockKey *) dest;
	const ZkLockKey *k = (const ZkLockKey *) src;

	memcpy(d->path, k->path, strlen(k->path) + 1);
	d->mode = k->mode;
	return dest;
}

/*
 * ZkLockTableInit
 *		Create the memory context and the table, once per backend, at the
 *		first zklock call that needs them (ZkHoldsEnsureSession,
 *		holds/lost.c, which then sets the session's hooks).
 */
void
ZkLockTableInit(void)
{
	HASHCTL		ctl;

	if (ZkHeldLocks != NULL)
		return;

	ZkLockContext = AllocSetContextCreate(TopMemoryContext, "zklock",
										  ALLOCSET_DEFAULT_SIZES);
	ctl.keysize = sizeof(ZkLockKey);
	ctl.entrysize = sizeof(ZkLockEntry);
	ctl.hash = zk_key_hash;
	ctl.match = zk_key_match;
	ctl.keycopy = zk_key_copy;
	ctl.hcxt = ZkLockContext;
	/* few buckets to start with: COMMIT scans them all, held or not */
	ZkHeldLocks = hash_create("zklock held locks", 16, &ctl,
							  HASH_ELEM | HASH_FUNCTION | HASH_COMPARE |
							  HASH_KEYCOPY | HASH_CONTEXT);
}

/*
 * ZkEntryLookup
 *		The entry for (path, mode), or NULL.
 */
ZkLockEntry *
ZkEntryLookup(const char *path, ZkLockMode mode)
{
	ZkLockKey	key;

	if (!zk_key_init(&key, path, mode))
		return NULL;
	return (ZkLockEntry *) hash_search(ZkHeldLocks, &key, HASH_FIND, NULL);
}

/*
 * ZkEntryForZnode
 *		The held entry whose queue node this is, or NULL.  The lock path and
 *		mode are read back from the node's path (root, path, name).
 */
ZkLockEntry *
ZkEntryForZnode(const char *znode)
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
		/* a permit: <root><path>/leases/<name> (Curator's node names) */
		const char *leases = "/leases";
		size_t		len = strlen(leases);

		if (slash - (znode + rootlen) <= (ptrdiff_t) len ||
			strncmp(slash - len, leases, len) != 0)
			return NULL;
		path = pnstrdup(znode + rootlen, slash - len - (znode + rootlen));
		c.mode = ZK_MODE_PERMIT;
	}
	entry = ZkEntryLookup(path, c.mode);
	pfree(path);
	if (entry == NULL || strcmp(entry->znode, znode) != 0)
		return NULL;
	return entry;
}

/*
 * ZkEntryEnter
 *		Enter a granted lock into the table (no hold counted yet).  'other'
 *		is our entry for the path in the other mode, whose node a downgrade
 *		or an upgrade may keep.  The node exists now: if the entry cannot be
 *		made, the node is deleted before the ERROR propagates.
 */
ZkLockEntry *
ZkEntryEnter(const char *path, ZkLockMode mode, const ZkGrant *grant,
			 ZkLockEntry *other, TimestampTz start)
{
	return zk_entry_enter(path, mode, grant, other, start, false);
}

/*
 * ZkEntryAdoptKept
 *		Take (path, mode) with the node that 'other', our entry for the path
 *		in the other mode, keeps: our node in this mode, whose
 *		holds all went while 'other' still needed it.  It holds the lock in
 *		this mode still (nobody can queue ahead of a node), so no ZooKeeper
 *		call is needed; the entry's token is that node's.  NULL if 'other'
 *		keeps no node.  The node stays if the entry cannot be made.
 */
ZkLockEntry *
ZkEntryAdoptKept(const char *path, ZkLockMode mode, ZkLockEntry *other)
{
	ZkGrant		grant;

	if (other == NULL || other->kept_znode == NULL)
		return NULL;
	memset(&grant, 0, sizeof(grant));
	grant.znode = other->kept_znode;
	grant.token = other->kept_token;
	return zk_entry_enter(path, mode, &grant, NULL, GetCurrentTimestamp(),
						  true);
}

/*
 * zk_hold_what
 *		What a hold of this mode is, for the loss watch's reports (a static
 *		string, translated when reported).
 */
static const char *
zk_hold_what(ZkLockMode mode)
{
	switch (mode)
	{
		case ZK_MODE_EXCLUSIVE:
			return gettext_noop("exclusive lock");
		case ZK_MODE_SHARED:
			return gettext_noop("shared lock");
		case ZK_MODE_PERMIT:
			return gettext_noop("semaphore permit");
		case ZK_MODE_MEMBER:
			return gettext_noop("double barrier membership");
	}
	return gettext_noop("lock");
}

/*
 * zk_entry_enter
 *		ZkEntryEnter; with 'adopted' (ZkEntryAdoptKept), the node is
 *		a node another entry keeps and is not deleted if the entry cannot be
 *		made.
 */
static ZkLockEntry *
zk_entry_enter(const char *path, ZkLockMode mode, const ZkGrant *grant,
			   ZkLockEntry *other, TimestampTz start, bool adopted)
{
	ZkLockEntry *entry;
	ZkLockKey	key;
	bool		found;

	PG_TRY();
	{
		if (!zk_key_init(&key, path, mode))
			elog(ERROR, "ZooKeeper lock path is longer than %d bytes",
				 ZK_MAX_PATH_BYTES);
		if (hash_get_num_entries(ZkHeldLocks) == 0)
		{
			if (zk_entries_root != NULL)
				pfree(zk_entries_root);
			zk_entries_root = MemoryContextStrdup(ZkLockContext, zklock_root);
		}
		/* room to release every entry later without allocating */
		ZkReserveReleases((int) hash_get_num_entries(ZkHeldLocks) + 1);
		entry = (ZkLockEntry *) hash_search(ZkHeldLocks, &key, HASH_ENTER,
											&found);
		Assert(!found);
		memset((char *) entry + sizeof(ZkLockKey), 0,
			   sizeof(ZkLockEntry) - sizeof(ZkLockKey));
		entry->znode = MemoryContextStrdup(ZkLockContext, grant->znode);
		if (grant->keep_other)
		{
			entry->kept_znode = MemoryContextStrdup(ZkLockContext,
													 other->znode);
			entry->kept_token = other->token;
		}
		/* its loss stops the statement (an adopted kept node is watched already) */
		if (!adopted)
			ZkLossWatchRegister(entry->znode, path, zk_hold_what(mode), 0);
	}
	PG_CATCH();
	{
		if (!adopted)
			ZkDeleteInBackground(grant->znode);
		entry = ZkEntryLookup(path, mode);
		if (entry != NULL)
			hash_search(ZkHeldLocks, &entry->key, HASH_REMOVE, NULL);
		PG_RE_THROW();
	}
	PG_END_TRY();

	entry->token = grant->token;
	entry->acquired_at = GetCurrentTimestamp();
	entry->waited_us = entry->acquired_at - start;
	return entry;
}

/*
 * ZkEntryAddHold
 *		Count one more hold on an entry: a transaction hold at the current
 *		subtransaction level.  The array of levels grows to the deepest
 *		nesting that took the lock.
 */
void
ZkEntryAddHold(ZkLockEntry *entry, ZkLockScope scope)
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
 * ZkEntryDrop
 *		Remove an entry; with delete_nodes, batch its node for release
 *		(holds/batch.c), minding kept nodes: our entry
 *		for the path in the other mode (the partner) may keep this entry's
 *		node, which then stays until the partner goes; and a
 *		node this entry kept goes now, unless it is the partner's own node
 *		again (ZkEntryAdoptKept).  Never raises an ERROR: it allocates
 *		nothing (ZkReserveReleases).
 */
void
ZkEntryDrop(ZkLockEntry *entry, bool delete_nodes)
{
	const char *path = entry->key.path;
	ZkLockMode	mode = entry->key.mode;

	if (delete_nodes)
	{
		ZkLockEntry *partner = NULL;

		if (mode == ZK_MODE_EXCLUSIVE || mode == ZK_MODE_SHARED)
			partner = ZkEntryLookup(path, mode == ZK_MODE_EXCLUSIVE ?
									ZK_MODE_SHARED : ZK_MODE_EXCLUSIVE);
		/* kept alive for the partner while the partner lasts */
		if (partner == NULL || partner->kept_znode == NULL ||
			strcmp(partner->kept_znode, entry->znode) != 0)
		{
			ZkBatchRelease(entry->znode);
			entry->znode = NULL;
		}
		if (entry->kept_znode != NULL &&
			(partner == NULL ||
			 strcmp(partner->znode, entry->kept_znode) != 0))
		{
			ZkBatchRelease(entry->kept_znode);
			entry->kept_znode = NULL;
		}
	}
	else
	{
		/* lost: nothing of it is watched any more */
		if (entry->znode)
			ZkLossWatchRelease(entry->znode);
		if (entry->kept_znode)
			ZkLossWatchRelease(entry->kept_znode);
	}

	if (entry->xact_holds > 0)
		dlist_delete(&entry->xact_link);
	if (entry->znode)
		pfree(entry->znode);
	if (entry->kept_znode)
		pfree(entry->kept_znode);
	if (entry->xact)
		pfree(entry->xact);
	hash_search(ZkHeldLocks, &entry->key, HASH_REMOVE, NULL);
}

/*
 * ZkHoldsXactLocks
 *		Does the backend hold any transaction hold?
 */
bool
ZkHoldsXactLocks(void)
{
	return !dlist_is_empty(&zk_xact_entries);
}

/*
 * ZkReleaseXactHolds
 *		Drop the transaction holds taken at nesting level from_level or
 *		deeper (1: all of them), batching for release the nodes left
 *		without holds.
 */
void
ZkReleaseXactHolds(int from_level)
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
				ZkEntryDrop(entry, true);
		}
	}
}

/*
 * ZkPromoteXactHolds
 *		A subtransaction at 'level' committed: its holds now belong to its
 *		parent.
 */
void
ZkPromoteXactHolds(int level)
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

/*
 * ZkCheckRoot
 *		New locks go where the held ones are: refuse to take one while
 *		zklock.root differs from the root of the locks held (a RESET ALL
 *		changed it behind the check hook's back).
 */
void
ZkCheckRoot(void)
{
	if (hash_get_num_entries(ZkHeldLocks) > 0 && zk_entries_root != NULL &&
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
 * ZkCheckRoom
 *		zklock.max_locks_per_backend: may 'more' entries be added?
 */
void
ZkCheckRoom(int more)
{
	if (hash_get_num_entries(ZkHeldLocks) + more > zklock_max_locks_per_backend)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many ZooKeeper locks held by this backend"),
				 more > 1 ?
				 errdetail_plural("This backend holds %ld lock, and the call needs %d more; zklock.max_locks_per_backend is %d.",
								  "This backend holds %ld locks, and the call needs %d more; zklock.max_locks_per_backend is %d.",
								  hash_get_num_entries(ZkHeldLocks),
								  hash_get_num_entries(ZkHeldLocks), more,
								  zklock_max_locks_per_backend) :
				 errdetail_plural("This backend holds %ld lock; zklock.max_locks_per_backend is %d.",
								  "This backend holds %ld locks; zklock.max_locks_per_backend is %d.",
								  hash_get_num_entries(ZkHeldLocks),
								  hash_get_num_entries(ZkHeldLocks),
								  zklock_max_locks_per_backend),
				 superuser() ?
				 errhint("Release some locks, or raise zklock.max_locks_per_backend.") :
				 errhint("Release some locks, or ask a superuser to raise zklock.max_locks_per_backend.")));
}

/*
 * ZkLockNodePath
 *		The ZooKeeper path of a lock's node: zklock.root followed by the
 *		(validated) lock path.
 */
char *
ZkLockNodePath(const char *path)
{
	return psprintf("%s%s", zklock_root, path);
}

/*
 * ZkLockCount
 *		The number of entries the backend holds (also the session's hook:
 *		a session cannot be replaced while any is held).
 */
int
ZkLockCount(void)
{
	return ZkHeldLocks ? (int) hash_get_num_entries(ZkHeldLocks) : 0;
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

	if (ZkHeldLocks == NULL || hash_get_num_entries(ZkHeldLocks) == 0)
	{
		*rows = NULL;
		return 0;
	}
	out = palloc(sizeof(ZkLockInfo) * 2 * hash_get_num_entries(ZkHeldLocks));
	hash_seq_init(&status, ZkHeldLocks);
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
			out[n].revoke_requested = ZkLossWatchNode(entry->znode).revoke_requested;
			n++;
		}
	}
	qsort(out, n, sizeof(ZkLockInfo), zk_info_cmp);
	*rows = out;
	return n;
}

/*
 * ZkLockRevokeRequested
 *		Has a revocation been asked of a hold of this backend's on 'path',
 *		in any mode (zk_revoke, or Curator's Revoker.attemptRevoke, wrote
 *		the marker into its node, and the loss watch read it)?
 */
bool
ZkLockRevokeRequested(const char *path)
{
	static const ZkLockMode modes[] = {
		ZK_MODE_EXCLUSIVE, ZK_MODE_SHARED, ZK_MODE_PERMIT
	};

	if (ZkHeldLocks == NULL)
		return false;
	for (size_t i = 0; i < lengthof(modes); i++)
	{
		ZkLockEntry *entry = ZkEntryLookup(path, modes[i]);

		if (entry != NULL && !entry->deleted &&
			ZkLossWatchNode(entry->znode).revoke_requested)
			return true;
	}
	return false;
}

/*
 * ZkDescribeHeld
 *		The locks this backend holds, as error messages name them (palloc'd),
 *		after the n paths 'released' (named by path alone): "/r", "/a"
 *		(exclusive, session), "/b" (shared, transaction), ...
 */
char *
ZkDescribeHeld(const char *const *released, int n)
{
	StringInfoData buf;
	ZkLockInfo *rows;
	int			nheld = ZkLockList(&rows);

	initStringInfo(&buf);
	for (int i = 0; i < n; i++)
		appendStringInfo(&buf, "%s\"%s\"", i > 0 ? ", " : "",
						 ZkUtf8ForMessage(released[i]));
	for (int i = 0; i < nheld; i++)
		appendStringInfo(&buf, "%s\"%s\" (%s, %s)", n + i > 0 ? ", " : "",
						 ZkUtf8ForMessage(rows[i].path), ZkLockModeName(rows[i].mode),

						 ZkLockScopeName(rows[i].scope));
	return buf.data;
}
