/*-------------------------------------------------------------------------
 *
 * holds/release.c
 *		Releasing held locks: the lock table's release entry points.
 *
 * The nodes left without holds go in one batch (holds/batch.c), which each
 * entry point sends before it returns, waiting for it as
 * zklock.synchronous_release says.
 *
 * Only session holds are released here; transaction holds go at the end
 * of their (sub)transaction (holds/commit.c).  A double barrier's
 * membership is left by its own call, whose recipe deletes the node; DISCARD
 * ALL and backend exit end it as that call would, without waiting for the
 * other members (zk_depart_members): the round's "ready" goes with its last
 * member, which a delete of the member's node alone would leave behind.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/ipc.h"
#include "utils/hsearch.h"

#include "recipes/barrier.h"
#include "recipes/lease.h"
#include "recipes/attempt.h"
#include "holds/holds.h"
#include "holds/internal.h"
#include "base/text_encoding.h"
#include "base/vocabulary.h"
#include "client/client.h"

static void zk_maybe_drop(ZkLockEntry *entry);
static bool zk_release_one(const char *path, bool permit, bool *dropped);
static void zk_send_releases(const char *const *paths, int n);
static void zk_release_session_holds(bool members, const char *prefix);
static void zk_depart_members(int64 deadline_ms);
static void zk_members_at_exit(int code, Datum arg);

/* zk_members_at_exit is registered (at the first membership) */
static bool zk_members_exit_registered = false;

/*
 * zk_maybe_drop
 *		Release an entry's node once no hold of either kind is left.
 */
static void
zk_maybe_drop(ZkLockEntry *entry)
{
	if (entry->session_holds == 0 && entry->xact_holds == 0)
		ZkEntryDrop(entry, true);
}

/*
 * zk_release_one
 *		Drop one session hold on a path: of its permit if 'permit', else of
 *		the exclusive lock if held (so that write, read, unlock is a
 *		downgrade), else of the shared one.  The node is batched for release
 *		if that was the last hold (then *dropped is set).  WARNING and false
 *		if the backend holds no such session hold.
 */
static bool
zk_release_one(const char *path, bool permit, bool *dropped)
{
	ZkLockEntry *entry = NULL;

	if (ZkHeldLocks != NULL && permit)
		entry = ZkEntryLookup(path, ZK_MODE_PERMIT);
	else if (ZkHeldLocks != NULL)
	{
		entry = ZkEntryLookup(path, ZK_MODE_EXCLUSIVE);
		if (entry == NULL || entry->session_holds == 0)
			entry = ZkEntryLookup(path, ZK_MODE_SHARED);
	}
	if (entry == NULL || entry->session_holds == 0)
	{
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg(permit ?
						"you don't own a session permit of ZooKeeper semaphore \"%s\"" :
						"you don't own a session lock on ZooKeeper path \"%s\"",
						ZkUtf8ForMessage(path))));
		return false;
	}
	entry->session_holds--;
	*dropped = (entry->session_holds == 0 && entry->xact_holds == 0);
	zk_maybe_drop(entry);
	return true;
}

/*
 * zk_send_releases
 *		Send the batch of releases, whose last holds of 'paths' it drops,
 *		and wait for it as zklock.synchronous_release says; an expiry found
 *		meanwhile names them as lost (ZkNoteReleasing).
 *
 * The session expired before ZooKeeper applied the deletes (a backend
 * frozen past the session timeout, whose library heard of the expiry only
 * when the deletes were sent): the locks were lost before their release,
 * and the caller must not be told they were released.
 */
static void
zk_send_releases(const char *const *paths, int n)
{
	if (!ZkHasBatchedReleases() || !zklock_synchronous_release)
	{
		ZkFlushReleases();
		return;
	}
	ZkNoteReleasing(paths, n);
	PG_TRY();
	{
		ZkFlushReleases();
	}
	PG_FINALLY();
	{
		ZkNoteReleasing(NULL, 0);
	}
	PG_END_TRY();
	if (ZkSessionIsExpired())
		ZkReportReleasedLost(paths, n);
}

/*
 * ZkLockRelease
 *		Release one session hold on each of n paths (zk_release_one; a path
 *		given twice, twice), of a semaphore's permit if 'permit', all the
 *		nodes that go in one batch, and wait
 *		for the release as zklock.synchronous_release says.  False, after a
 *		WARNING for each, if some path had no session hold left; the others
 *		are released all the same.
 */
bool
ZkLockRelease(const char *const *paths, int n, bool permit)
{
	bool		all = true;
	const char **dropped_paths = palloc(sizeof(char *) * Max(n, 1));
	int			ndropped = 0;

	ZkLockReportExpiry();
	(void) ZkLockAbsorbLosses();
	for (int i = 0; i < n; i++)
	{
		bool		dropped = false;

		all &= zk_release_one(paths[i], permit, &dropped);
		if (dropped)
			dropped_paths[ndropped++] = paths[i];
	}
	zk_send_releases(dropped_paths, ndropped);
	pfree(dropped_paths);
	return all;
}

/*
 * ZkLockReleaseMode
 *		Release one session hold of a path in exactly this mode, as
 *		PostgreSQL's pg_advisory_unlock and pg_advisory_unlock_shared do:
 *		false, with no message (the caller words it), if the backend holds
 *		no session hold of the path in that mode.
 */
bool
ZkLockReleaseMode(const char *path, ZkLockMode mode)
{
	ZkLockEntry *entry = NULL;
	bool		dropped;

	ZkLockReportExpiry();
	(void) ZkLockAbsorbLosses();
	if (ZkHeldLocks != NULL)
		entry = ZkEntryLookup(path, mode);
	if (entry == NULL || entry->session_holds == 0)
		return false;
	entry->session_holds--;
	dropped = (entry->session_holds == 0 && entry->xact_holds == 0);
	zk_maybe_drop(entry);
	zk_send_releases(&path, dropped ? 1 : 0);
	return true;
}

/*
 * zk_release_session_holds
 *		Drop every session hold of the backend, of double barrier
 *		memberships too if 'members', and send the nodes that go, in one
 *		batch of deletes.  With a prefix, only the session holds of a lock
 *		(exclusive or shared) whose path starts with it.
 */
static void
zk_release_session_holds(bool members, const char *prefix)
{
	HASH_SEQ_STATUS status;
	ZkLockEntry *entry;
	size_t		len = prefix ? strlen(prefix) : 0;

	hash_seq_init(&status, ZkHeldLocks);
	while ((entry = (ZkLockEntry *) hash_seq_search(&status)) != NULL)
	{
		if (entry->session_holds > 0 &&
			(members || entry->key.mode != ZK_MODE_MEMBER) &&
			(prefix == NULL ||
			 ((entry->key.mode == ZK_MODE_EXCLUSIVE ||
			   entry->key.mode == ZK_MODE_SHARED) &&
			  strncmp(entry->key.path, prefix, len) == 0)))
		{
			entry->session_holds = 0;
			zk_maybe_drop(entry);
		}
	}
	ZkFlushReleases();
}

/*
 * ZkLockReleaseAll
 *		Release every session hold of the backend (zk_unlock_all).  A double
 *		barrier is left with zk_double_barrier_leave.  With a prefix, every
 *		session hold of a lock (exclusive or shared) whose path starts with
 *		it, as pg_advisory_unlock_all releases the session's advisory locks
 *		and no other: semaphore permits are left alone too.
 */
void
ZkLockReleaseAll(const char *prefix)
{
	ZkLockReportExpiry();
	(void) ZkLockAbsorbLosses();
	if (ZkHeldLocks == NULL)
		return;
	zk_release_session_holds(false, prefix);
}

/*
 * ZkLockDiscardAll
 *		DISCARD ALL: release every session hold of the backend, as
 *		zk_unlock_all does (and as DISCARD ALL releases PostgreSQL's own
 *		advisory locks), and forget the lease names it remembers.  Unlike
 *		zk_unlock_all it raises no ERROR for a session that expired: those
 *		locks are gone already, which a WARNING says.  Leases are not held
 *		by the backend and are left alone.
 *
 * The WARNING must not depend on whether the client library has noticed
 * the expiry yet: a backend that was frozen past its session timeout runs
 * DISCARD ALL before the library has reconnected and heard "expired".  So
 * the session is confirmed first (ZkSessionConfirmAlive: at once within its
 * alive window, else one round trip), and a session out of touch past its
 * timeout counts as expired, as ZkSessionEnsure counts it (and is given up:
 * the next zklock call opens a fresh one).  A session that could not be
 * confirmed otherwise has its locks released as usual.
 */
void
ZkLockDiscardAll(void)
{
	bool		expired;

	ZkLeaseForgetNames();
	if (ZkHeldLocks == NULL || hash_get_num_entries(ZkHeldLocks) == 0)
		return;

	expired = ZkSessionIsExpired() || ZkSessionExpireIfOutOfTouch();
	if (!expired)
		expired = ZkSessionConfirmAlive() == ZK_SESSION_EXPIRED ||
			ZkSessionExpireIfOutOfTouch();
	if (expired)
	{
		ZkReportExpiredLocks(WARNING,
							 (int) hash_get_num_entries(ZkHeldLocks));
		return;
	}

	(void) ZkLockAbsorbLosses();
	zk_depart_members(ZkNowMs() + zklock_connect_timeout);
	zk_release_session_holds(true, NULL);
}

/*
 * zk_depart_members
 *		End every double barrier membership of the backend as a leave
 *		would, without waiting for the other members
 *		(ZkDoubleBarrierDepart): the member's node goes, and the round's
 *		"ready" with it when no other participant of the round remains.
 *		DISCARD ALL and backend exit.  A member that could not depart by
 *		deadline_ms has its node deleted in the background (at exit, by
 *		the session's close).
 */
static void
zk_depart_members(int64 deadline_ms)
{
	HASH_SEQ_STATUS status;
	ZkLockEntry *entry;
	char	  **paths;
	int			n = 0;

	if (ZkHeldLocks == NULL || hash_get_num_entries(ZkHeldLocks) == 0)
		return;
	/* the members first: the departures may raise, the table stays sound */
	paths = palloc(sizeof(char *) * hash_get_num_entries(ZkHeldLocks));
	hash_seq_init(&status, ZkHeldLocks);
	while ((entry = (ZkLockEntry *) hash_seq_search(&status)) != NULL)
	{
		if (entry->key.mode == ZK_MODE_MEMBER && entry->znode != NULL)
			paths[n++] = pstrdup(entry->key.path);
	}
	for (int i = 0; i < n; i++)
	{
		entry = ZkEntryLookup(paths[i], ZK_MODE_MEMBER);
		if (entry == NULL)
			continue;
		/* our own delete is no loss (client/loss_watch.c) */
		ZkLossWatchRelease(entry->znode);
		if (!ZkDoubleBarrierDepart(ZkLockNodePath(paths[i]), entry->znode,
								   deadline_ms) &&
			!proc_exit_inprogress)
			ZkDeleteInBackground(entry->znode);
		ZkEntryDrop(entry, false);
	}
}

/*
 * zk_members_at_exit
 *		before_shmem_exit callback: the backend exits; its double barrier
 *		memberships end as a leave would (zk_depart_members), before the
 *		session is closed (client/connect.c registered its callback before
 *		the first membership was taken, so this one runs first), within
 *		zklock.connect_timeout.  Without a live session nothing can be
 *		sent: the member's node goes with its session, and "ready" stays
 *		for the next member to enter.
 */
static void
zk_members_at_exit(int code, Datum arg)
{
	if (ZkHeldLocks == NULL || ZkSessionIsExpired())
		return;
	zk_depart_members(ZkNowMs() + zklock_connect_timeout);
}

/*
 * ZkMembersAtExitRegister
 *		A double barrier membership was taken: see that backend exit ends
 *		it as a leave would (zk_members_at_exit).  Registered once, after
 *		the session's own exit callback.
 */
void
ZkMembersAtExitRegister(void)
{
	if (zk_members_exit_registered)
		return;
	before_shmem_exit(zk_members_at_exit, (Datum) 0);
	zk_members_exit_registered = true;
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
	(void) ZkLockAbsorbLosses();
	entry = ZkHeldLocks ? ZkEntryLookup(path, ZK_MODE_MEMBER) : NULL;
	if (entry == NULL)
	{
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("you are not a member of ZooKeeper double barrier \"%s\"",
						ZkUtf8ForMessage(path))));

		return false;
	}
	znode = pstrdup(entry->znode);
	/* the recipe deletes our node, and reports its deletion by others */
	ZkLossWatchRelease(znode);
	PG_TRY();
	{
		result = ZkDoubleBarrierLeave(ZkLockNodePath(path), path, znode,
									  wait_ms);
	}
	PG_FINALLY();
	{
		entry = ZkEntryLookup(path, ZK_MODE_MEMBER);
		if (entry != NULL)
			ZkEntryDrop(entry, false);
	}
	PG_END_TRY();
	return result;
}
