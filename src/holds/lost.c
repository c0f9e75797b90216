/*-------------------------------------------------------------------------
 *
 * holds/lost.c
 *		Held locks found lost, and how each loss is reported: the one owner
 *		of a loss once the loss watch found it.
 *
 * A lock is lost when ZooKeeper no longer has its node: the session
 * expired (or was out of touch past the session timeout) and took every
 * ephemeral node with it, a held node was deleted (by an administrator,
 * zk_revoke with force, or a client that should not have), a lease ran
 * out, or a revocation was asked of a hold and zklock.on_revoke = release
 * had the loss watch delete its node (a revoked lock: the same loss, named
 * so).  The loss watch
 * (client/loss_watch.c) is the one thing that finds a lost node, and the
 * session's watcher the one that finds an expiry; this file turns what
 * they found into the table's state (ZkLockAbsorbLosses) and the ERROR
 * that names the lost locks: at the next call on the lock (ZkRaiseLost),
 * at COMMIT, at the next statement or in place of the cancel of the
 * running one (sql/loss_cancel.c, with ZkLockDescribeLosses).
 *
 * A lost lock is forgotten, never taken again silently: the first zklock
 * call after the loss raises the ERROR (ZkLockReportExpiry, and the
 * session's lost hook ZkLocksLost), and a transaction that lost locks
 * cannot COMMIT: this file notes it (ZkNoteXactLostLocks), and the COMMIT
 * asks (ZkCheckXactLostLocks, from holds/commit.c).  DISCARD ALL reports an
 * expiry by a WARNING instead (holds/release.c).
 *
 * The session's hooks, ZkLocksLost and the table's ZkLockCount, are set
 * here as the table is made (ZkHoldsEnsureSession): the table (holds/table.c) and the
 * batch of releases (holds/batch.c) call nothing of this file.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "utils/hsearch.h"

#include "holds/holds.h"
#include "holds/internal.h"
#include "base/stats.h"
#include "base/text_encoding.h"
#include "client/client.h"

/* this top-level transaction lost locks to an expiry or a deletion */
static bool zk_xact_lost_locks = false;

/* the paths whose release waits for ZooKeeper (ZkNoteReleasing) */
static const char *const *zk_releasing = NULL;
static int	zk_nreleasing = 0;

/*
 * ZkNoteReleasing
 *		The release of 'paths' (n of them; NULL, 0 when it is over) waits for
 *		ZooKeeper: an expiry found meanwhile names them as lost.  The array
 *		must live until the note is withdrawn.
 */
void
ZkNoteReleasing(const char *const *paths, int n)
{
	zk_releasing = paths;
	zk_nreleasing = n;
}

/*
 * ZkNoteXactLostLocks
 *		Locks were just found lost: the transaction in progress, if any, must
 *		not COMMIT.
 */
void
ZkNoteXactLostLocks(void)
{
	if (IsTransactionState())
		zk_xact_lost_locks = true;
}

/*
 * ZkCheckXactLostLocks
 *		Before COMMIT: refuse to commit a transaction whose locks were lost
 *		(ZkNoteXactLostLocks).
 */
void
ZkCheckXactLostLocks(void)
{
	if (zk_xact_lost_locks)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("cannot commit a transaction whose ZooKeeper locks were lost"),
				 errdetail("The ZooKeeper session expired, or a held node was deleted or revoked, during the transaction.")));
}

/*
 * ZkForgetXactLostLocks
 *		The transaction ended: the next one starts with no loss noted.
 */
void
ZkForgetXactLostLocks(void)
{
	zk_xact_lost_locks = false;
}

/*
 * ZkLockAbsorbLosses
 *		Take the losses the loss watch found (client/loss_watch.c).  A loss
 *		an ERROR has named already (the cancelled statement's, or the next
 *		statement's) is forgotten quietly: a deleted node's entry goes, and
 *		a lost session takes every entry, as ZkLocksLost would without its
 *		ERROR (which aborted the transaction).  A loss not named yet
 *		(zklock.on_lock_loss = error) marks its entry lost, for the next
 *		call on it or the COMMIT to raise; a lost session is the session
 *		layer's to report, at the next call.  Returns whether a lost session
 *		whose loss an ERROR named was taken: the caller may close it.
 */
bool
ZkLockAbsorbLosses(void)
{
	char	  **znodes;
	bool	   *reported;
	ZkSessionLoss session;
	int			dropped = 0;
	int			n;

	if (ZkHeldLocks == NULL || !ZkLossWatchPending())
		return false;
	n = ZkLossWatchTake(&znodes, &reported, &session);
	if (n > 0)
		ZkSessionSuspect();		/* gone by an expiry not heard yet? */
	for (int i = 0; i < n; i++)
	{
		ZkLockEntry *entry = ZkEntryForZnode(znodes[i]);

		if (entry == NULL || entry->deleted)
			continue;			/* a lease's, or known already */
		if (reported[i])
		{
			ZkEntryDrop(entry, false);
			dropped++;
		}
		else
			entry->deleted = true;
	}
	if (session == ZK_SESSION_LOSS_REPORTED)
	{
		HASH_SEQ_STATUS status;
		ZkLockEntry *entry;

		ZkDropBatchedReleases();
		hash_seq_init(&status, ZkHeldLocks);
		while ((entry = (ZkLockEntry *) hash_seq_search(&status)) != NULL)
		{
			ZkEntryDrop(entry, false);
			dropped++;
		}
	}
	/* the ERROR that named them aborted the transaction that held them */
	if (dropped > 0)
		ZkStatCount(ZK_STAT_LOCKS_LOST, dropped);
	return session == ZK_SESSION_LOSS_REPORTED;
}

/*
 * ZkLockDescribeLosses
 *		The message and DETAIL (palloc'd in the current memory context) of
 *		the ERROR that names the losses the loss watch found and no ERROR
 *		named yet, in the words of the errors that report them at the next
 *		call or at COMMIT, plus the reason the statement ends.  With
 *		'cause', for a statement the loss watch cancelled: the loss the
 *		cancel was sent for when every loss was named already.  *session
 *		says whether it is the session's loss, which names every lock held.
 *		Returns false when there is none.  Runs in a failed transaction
 *		too: only allocates.
 */
bool
ZkLockDescribeLosses(bool cause, char **message, char **detail, bool *session)
{
	ZkLossKind	kind;
	const char *what;
	char	   *path;
	char	   *znode;
	const char *why = _("The statement was stopped because zklock.on_lock_loss is \"cancel\".");
	int			n = ZkLossWatchDescribe(cause, &kind, &what, &path, &znode);

	*session = false;
	if (n == 0)
		return false;
	switch (kind)
	{
		case ZK_LOSS_EXPIRED:
		case ZK_LOSS_OUT_OF_TOUCH:
			{
				ZkLockInfo *rows;
				int			nlocks = ZkLockList(&rows);
				char	   *held = ZkDescribeHeld(NULL, 0);

				/* named already, and forgotten: the cancel's own node */
				if (nlocks == 0)
				{
					nlocks = 1;
					held = psprintf("\"%s\"", ZkUtf8ForMessage(path));
				}
				*session = true;
				*message = psprintf(ngettext("ZooKeeper session expired: %d lock was lost",
											 "ZooKeeper session expired: %d locks were lost",
											 nlocks), nlocks);
				if (kind == ZK_LOSS_OUT_OF_TOUCH)
					*detail = psprintf(_("Lost: %s. No ZooKeeper server answered for longer than the session timeout. %s"),
									   held, why);
				else
					*detail = psprintf(_("Lost: %s. %s"), held, why);
				break;
			}
		case ZK_LOSS_TTL:
			*message = psprintf(_("ZooKeeper lease on lock \"%s\" ran out"),
								ZkUtf8ForMessage(path));
			*detail = psprintf(_("Its ttl passed since this transaction took or renewed it. %s"),
							   why);
			break;
		case ZK_LOSS_REVOKED:
			*message = psprintf(_("ZooKeeper lock \"%s\" was revoked"),
								ZkUtf8ForMessage(path));
			*detail = psprintf(_("A revocation was asked of its node \"%s\", which was deleted because zklock.on_revoke is \"release\". %s"),
							   ZkUtf8ForMessage(znode), why);
			break;
		case ZK_LOSS_DELETED:
		case ZK_LOSS_NONE:
			if (strcmp(what, "lease") == 0)
				*message = psprintf(_("ZooKeeper lease on lock \"%s\" was lost"),
									ZkUtf8ForMessage(path));
			else
				*message = psprintf(_("ZooKeeper lock \"%s\" was lost"),
									ZkUtf8ForMessage(path));
			if (n > 1)
				*detail = psprintf(ngettext("Its node \"%s\" no longer exists. %d lock of this backend was lost that way. %s",
											"Its node \"%s\" no longer exists. %d locks of this backend were lost that way. %s",
											n),
								   ZkUtf8ForMessage(znode), n, why);
			else
				*detail = psprintf(_("Its node \"%s\" no longer exists. %s"),
								   ZkUtf8ForMessage(znode), why);
			break;
	}
	return true;
}

/*
 * ZkRaiseLost
 *		A held node is known to be gone: forget the lost locks and raise the
 *		ERROR naming one of them, its CONTEXT line 'oper' on its path (the
 *		acquisition that found the loss, or the check before COMMIT).
 */
void
ZkRaiseLost(ZkLockEntry *entry, int nlost, ZkOperation oper)
{
	char	   *path = pstrdup(entry->key.path);
	char	   *znode = pstrdup(entry->znode);
	bool		revoked = ZkLossWatchNode(entry->znode).lost == ZK_LOSS_REVOKED;
	HASH_SEQ_STATUS status;
	ZkLockEntry *e;
	int			dropped = 0;

	hash_seq_init(&status, ZkHeldLocks);
	while ((e = (ZkLockEntry *) hash_seq_search(&status)) != NULL)
	{
		if (e->deleted)
		{
			ZkEntryDrop(e, false);
			dropped++;
		}
	}
	ZkStatCount(ZK_STAT_LOCKS_LOST, dropped);
	ZkNoteXactLostLocks();
	/* this ERROR names the losses (a cancel sent for them ends with it) */
	ZkLossWatchMarkReported();
	if (revoked)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("ZooKeeper lock \"%s\" was revoked", ZkUtf8ForMessage(path)),
				 errdetail("A revocation was asked of its node \"%s\", which was deleted because zklock.on_revoke is \"release\".",
						   ZkUtf8ForMessage(znode)),
				 ZkOperationErrcontext(oper, path)));
	ereport(ERROR,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg("ZooKeeper lock \"%s\" was lost", ZkUtf8ForMessage(path)),
			 nlost > 1 ?
			 errdetail_plural("Its node \"%s\" no longer exists. %d lock of this backend was lost that way.",
							  "Its node \"%s\" no longer exists. %d locks of this backend were lost that way.",
							  nlost, ZkUtf8ForMessage(znode), nlost) :
			 errdetail("Its node \"%s\" no longer exists.",
					   ZkUtf8ForMessage(znode)),
			 ZkOperationErrcontext(oper, path)));
}

/*
 * zk_forget_expired
 *		The session expired: forget every held lock (counted as lost), the
 *		nodes released but not yet sent, and the losses the loss watch found
 *		(the ERROR or WARNING about to be raised names them).
 */
static void
zk_forget_expired(void)
{
	HASH_SEQ_STATUS status;
	ZkLockEntry *entry;

	ZkDropBatchedReleases();
	ZkLossWatchMarkReported();
	ZkStatCount(ZK_STAT_LOCKS_LOST, hash_get_num_entries(ZkHeldLocks));
	hash_seq_init(&status, ZkHeldLocks);
	while ((entry = (ZkLockEntry *) hash_seq_search(&status)) != NULL)
		ZkEntryDrop(entry, false);
}

/*
 * ZkReportExpiredLocks
 *		The session expired, and every held lock went with it, as did the
 *		nodes released but not yet sent: forget them all, count them as
 *		lost, and report at elevel that 'nlocks' locks were lost, naming
 *		them.
 */
void
ZkReportExpiredLocks(int elevel, int nlocks)
{
	char	   *list = ZkDescribeHeld(NULL, 0);

	zk_forget_expired();
	ereport(elevel,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg_plural("ZooKeeper session expired: %d lock was lost",
						   "ZooKeeper session expired: %d locks were lost",
						   nlocks, nlocks),
			 errdetail("Lost: %s. The next zklock call opens a new session.",
					   list)));
}

/*
 * ZkReportReleasedLost
 *		The session was found expired while the release of 'paths' waited
 *		for ZooKeeper: they were lost before they were released, and so was
 *		every lock still held.  Forget them all and raise the expiry's ERROR
 *		naming them.
 */
void
ZkReportReleasedLost(const char *const *paths, int n)
{
	ZkLockInfo *rows;
	int			nheld = ZkLockList(&rows);
	char	   *list = ZkDescribeHeld(paths, n);

	ZkNoteReleasing(NULL, 0);
	ZkStatCount(ZK_STAT_LOCKS_LOST, n);
	zk_forget_expired();
	ZkNoteXactLostLocks();
	ereport(ERROR,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg_plural("ZooKeeper session expired: %d lock was lost",
						   "ZooKeeper session expired: %d locks were lost",
						   n + nheld, n + nheld),
			 errdetail("Lost: %s. The session expired before ZooKeeper applied their release. The next zklock call opens a new session.",
					   list)));
}

/*
 * ZkLocksLost
 *		The session's lost hook: the session expired (and is closed
 *		already).  Every lock is gone: forget them and raise the ERROR that
 *		names them, counting a lock per (path, mode, scope) held.  Returns
 *		quietly when nothing was held.
 */
void
ZkLocksLost(void)
{
	ZkLockInfo *rows;
	int			n;

	/* nodes released before the expiry went with the session */
	ZkDropBatchedReleases();

	/* a loss the cancelled statement named already goes quietly */
	(void) ZkLockAbsorbLosses();
	/* found while a release waited: those were lost, not released */
	if (zk_nreleasing > 0)
		ZkReportReleasedLost(zk_releasing, zk_nreleasing);
	n = ZkLockList(&rows);
	if (n == 0)
		return;
	ZkNoteXactLostLocks();
	ZkReportExpiredLocks(ERROR, n);
}

/*
 * ZkHoldsEnsureSession
 *		What every zklock call that talks to ZooKeeper does first.  Make the
 *		lock table (ZkLockTableInit) and set the session's hooks:
 *		ZkLocksLost, and ZkLockCount (a session cannot be replaced while
 *		locks are held); once per backend, at the first zklock call that
 *		needs them.  Set here rather than by the table, so that the table
 *		calls nothing of this file.  Then open the session if needed,
 *		reporting an expired one first (the ERROR naming the lost locks).
 */
void
ZkHoldsEnsureSession(void)
{
	if (ZkHeldLocks == NULL)
	{
		ZkLockTableInit();
		ZkSessionSetHooks(ZkLocksLost, ZkLockCount);
	}
	ZkSessionEnsure();
}

/*
 * ZkLockReportExpiry
 *		If the session is lost (the watcher saw it expire, or it has been
 *		out of touch for longer than its timeout, as opening a session
 *		judges it), raise the ERROR naming the lost locks now (the first
 *		zklock call after an expiry reports it), rather than release or
 *		list locks that are already gone.  Opens no new session: what this
 *		backend holds is known without a server.
 */
void
ZkLockReportExpiry(void)
{
	if (ZkHeldLocks != NULL)
		ZkSessionCloseIfLost();
}
