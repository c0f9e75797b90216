/*-------------------------------------------------------------------------
 *
 * holds/commit.c
 *		Transaction end for the lock table: the (sub)transaction callbacks
 *		and the COMMIT that checks the session's alive window and the
 *		leases the transaction touched.
 *
 * At the end of a transaction its transaction holds go, and the nodes left
 * without holds are released in one batch (holds/batch.c); ROLLBACK TO
 * SAVEPOINT releases what the subtransaction took, and a subtransaction's
 * commit hands its holds to its parent.  PREPARE is refused while the
 * transaction holds transaction locks: they could not outlive the backend.
 *
 * The checked COMMIT.  While the
 * backend holds any lock, a COMMIT succeeds only if the session is known to
 * be alive: within its alive window, or confirmed by a round trip
 * (zk_locks_pre_commit);
 * a transaction that took or renewed a lease (recipes/lease.c) commits only
 * while each of those leases still holds (zk_leases_pre_commit).  The
 * leases such a transaction touched are recorded here (ZkTouchLease), in
 * ZkLockContext, and forgotten when it ends.  Only PRE_COMMIT and
 * PRE_PREPARE raise an ERROR.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "common/int.h"
#include "utils/hsearch.h"

#include "recipes/lease.h"
#include "holds/holds.h"
#include "holds/internal.h"
#include "base/operation_context.h"
#include "base/text_encoding.h"
#include "base/vocabulary.h"
#include "client/client.h"

/*
 * Leases (recipes/lease.c) belong to no backend and are not in the table; a
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

/* the ZkLeaseTouch entries, NIL when none */
static List *zk_leases_touched = NIL;

static ZkLeaseTouch *zk_touched_lease(const char *path, int64 token);
static void zk_forget_touched_leases(void);
static bool zk_lease_ran_out(const ZkLeaseTouch *t, int64 now);
static int64 zk_lease_end(const ZkLeaseTouch *t);
static void zk_lease_raise_ran_out(const ZkLeaseTouch *t, int64 now);
static void zk_leases_pre_commit(void);
static void zk_locks_pre_commit(void);
static bool ZkVerifyHeld(const char *const *znodes, int n, bool *gone,
						 int64 quiet_ms);

/*
 * ZkTouchLease
 *		Record that this transaction took or renewed a lease, for the check
 *		at COMMIT.
 */
void
ZkTouchLease(const char *path, const ZkLeaseInfo *info)
{
	ZkLeaseTouch *t = NULL;
	ListCell   *lc;

	foreach(lc, zk_leases_touched)
	{
		if (strcmp(((ZkLeaseTouch *) lfirst(lc))->znode, info->znode) == 0)
			t = lfirst(lc);
	}
	if (t == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(ZkLockContext);

		t = palloc0(sizeof(ZkLeaseTouch));
		t->path = pstrdup(path);
		t->znode = pstrdup(info->znode);
		zk_leases_touched = lappend(zk_leases_touched, t);
		MemoryContextSwitchTo(old);
	}
	t->token = info->token;
	t->ttl_ms = info->ttl_ms;
	t->sent_at = Max(t->sent_at, info->sent_at);

	/* its ttl or its deletion stops the statement (client/loss_watch.c) */
	ZkLossWatchRegister(t->znode, t->path, gettext_noop("lease"),
						zk_lease_end(t));
}

/*
 * zk_touched_lease
 *		The touched lease 'token' on a path, or NULL.
 */
static ZkLeaseTouch *
zk_touched_lease(const char *path, int64 token)
{
	ListCell   *lc;

	foreach(lc, zk_leases_touched)
	{
		ZkLeaseTouch *t = lfirst(lc);

		if (t->token == token && strcmp(t->path, path) == 0)
			return t;
	}
	return NULL;
}

/*
 * ZkUnwatchTouchedLease
 *		The lease 'token' on a path is about to be deleted by this backend:
 *		its deletion is no loss.
 */
void
ZkUnwatchTouchedLease(const char *path, int64 token)
{
	ZkLeaseTouch *t = zk_touched_lease(path, token);

	if (t != NULL)
		ZkLossWatchRelease(t->znode);
}

/*
 * ZkForgetTouchedLease
 *		The lease 'token' on a path was released: nothing for this
 *		transaction's COMMIT to check.
 */
void
ZkForgetTouchedLease(const char *path, int64 token)
{
	ZkLeaseTouch *t = zk_touched_lease(path, token);

	if (t == NULL)
		return;
	ZkLossWatchRelease(t->znode);
	pfree(t->path);
	pfree(t->znode);
	zk_leases_touched = list_delete_ptr(zk_leases_touched, t);
	pfree(t);
}

/*
 * zk_forget_touched_leases
 *		The transaction ended: its leases need no more checking.  The list
 *		is freed, so that it never outgrows one transaction's leases.
 */
static void
zk_forget_touched_leases(void)
{
	ListCell   *lc;

	foreach(lc, zk_leases_touched)
	{
		ZkLeaseTouch *t = lfirst(lc);

		ZkLossWatchRelease(t->znode);
		pfree(t->path);
		pfree(t->znode);
	}
	list_free_deep(zk_leases_touched);
	zk_leases_touched = NIL;
}

/*
 * zk_lease_ran_out
 *		Has the ttl of a lease this transaction took or renewed run out by
 *		'now' since the request was sent?  A sum that overflows has.
 */
static bool
zk_lease_ran_out(const ZkLeaseTouch *t, int64 now)
{
	int64		end;

	return pg_add_s64_overflow(t->sent_at, t->ttl_ms, &end) || now >= end;
}

/*
 * zk_lease_end
 *		When the ttl of a lease this transaction took or renewed runs out,
 *		counted from the send time of the request (monotonic ms), for the
 *		loss watch: at once if the sum overflows, as zk_lease_ran_out has it.
 */
static int64
zk_lease_end(const ZkLeaseTouch *t)
{
	int64		end;

	if (pg_add_s64_overflow(t->sent_at, t->ttl_ms, &end))
		return 1;
	return end;
}

/*
 * zk_lease_raise_ran_out
 *		A lease this transaction took or renewed may have run out: COMMIT
 *		must fail.
 */
static void
zk_lease_raise_ran_out(const ZkLeaseTouch *t, int64 now)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("cannot commit: the ZooKeeper lease on lock \"%s\" may have run out",
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
	int			n = list_length(zk_leases_touched);
	const char **znodes;
	bool	   *gone;
	ListCell   *lc;

	foreach(lc, zk_leases_touched)
	{
		ZkLeaseTouch *t = lfirst(lc);

		if (zk_lease_ran_out(t, now))
			zk_lease_raise_ran_out(t, now);
		if (now - t->sent_at >= fresh_ms)
			ask = true;
	}
	if (!ask)
		return;

	ZkSessionEnsure();
	znodes = palloc(sizeof(char *) * n);
	gone = palloc(sizeof(bool) * n);
	foreach(lc, zk_leases_touched)
		znodes[foreach_current_index(lc)] =
			((ZkLeaseTouch *) lfirst(lc))->znode;
	if (!ZkVerifyHeld(znodes, n, gone, zklock_connect_timeout))
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("could not confirm ZooKeeper leases before commit"),
				 errdetail("ZooKeeper did not answer for zklock.connect_timeout (%d ms).",
						   zklock_connect_timeout)));
	(void) ZkLockAbsorbLosses();
	now = ZkNowMs();
	foreach(lc, zk_leases_touched)
	{
		ZkLeaseTouch *t = lfirst(lc);

		if (gone[foreach_current_index(lc)])
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("cannot commit: the ZooKeeper lease on lock \"%s\" is gone",
							ZkUtf8ForMessage(t->path)),
					 errdetail("The node \"%s\" of lease %lld no longer exists: the lease was released or expired.",
							   ZkUtf8ForMessage(t->znode), (long long) t->token)));
		if (zk_lease_ran_out(t, now))
			zk_lease_raise_ran_out(t, now);
	}
	pfree(znodes);
	pfree(gone);
}

/*
 * ZkVerifyHeld
 *		Confirm with the server, before a COMMIT, that this backend's held
 *		nodes still exist: one round trip, however many nodes it holds.
 *
 * A sync, then an exists of each node given, all pipelined.  The callers
 * give the nodes whose loss-watch watch is not set (ZkLossWatchNode):
 * ZooKeeper delivers a watch notification before any later response on
 * the session, and the client library runs watchers and completions in
 * the order they came, so once the sync has answered, the deletion of any
 * node the loss watch watched has been noted, for ZkLockAbsorbLosses();
 * the exists answers say the same for the nodes given.  The sync's answer
 * also proves the session alive when it was processed.
 *
 * Sets gone[i] for the given nodes found missing.  Returns false if the
 * server stopped answering for quiet_ms: the deadline moves with every
 * answer, so many nodes take as long as they need.  An error names the
 * node it was waiting for ("/" for the sync) in its context.
 */
static bool
ZkVerifyHeld(const char *const *znodes, int n, bool *gone, int64 quiet_ms)
{
	ZkOperationContext oc;
	ZkOp	  **ops = palloc(sizeof(ZkOp *) * (n + 1));
	int64		deadline = ZkNowMs() + quiet_ms;
	bool		verified = false;

	ZkOperationPush(&oc, ZK_OPER_VERIFY_LOCK, "/");
	memset(gone, 0, sizeof(bool) * n);
	for (;;)
	{
		bool		lost = false;
		bool		timed_out = false;

		ops[0] = ZkSync("/");
		for (int i = 0; i < n; i++)
			ops[i + 1] = ZkExists(znodes[i]);

		for (int i = 0; i <= n; i++)
		{
			const char *path = i > 0 ? znodes[i - 1] : "/";
			int			rc;

			ZkOperationSet(&oc, ZK_OPER_VERIFY_LOCK, path);
			if (!timed_out && !ZkOpWaitUntil(ops[i], deadline))
				timed_out = true;
			if (timed_out)
			{
				ZkOpFree(ops[i]);
				continue;
			}
			deadline = ZkNowMs() + quiet_ms;	/* it answers: keep going */
			rc = ops[i]->rc;
			ZkOpFree(ops[i]);
			if (ZkIsConnectionLoss(rc))
				lost = true;
			else if (i > 0 && rc == ZNONODE)
				gone[i - 1] = true;
			else if (rc != ZOK)
				ZkRaiseForRc(rc);
		}
		if (timed_out)
			break;
		if (!lost)
		{
			verified = true;
			break;
		}
		/* the connection dropped meanwhile: once it is back, ask again */
		ZkOperationSet(&oc, ZK_OPER_VERIFY_LOCK, "/");
		if (!ZkWaitConnectedUntil(deadline))
			break;
		memset(gone, 0, sizeof(bool) * n);
	}
	pfree(ops);
	ZkOperationPop(&oc);
	return verified;
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
 *	- the session within its alive window: the server answered a request
 *	  sent less than a third of the session timeout ago, which costs
 *	  nothing for a transaction that just took or used its locks; or else
 *	  one round trip now (a
 *	  sync), waiting for a lost connection no longer than the session could
 *	  still be alive (ZkSessionConfirmAlive).
 *
 * With zklock.verify_on_commit, the server must moreover confirm that each
 * held node still exists (ZkVerifyHeld: one round trip however many, a
 * sync once every held node is watched).
 *
 * This runs before the commit record is written.  A session lost between
 * this check and the end of the COMMIT is not caught; the alive window
 * makes that gap at most the rest of the session timeout after the last
 * answer, and fencing tokens are the answer to it outside the database.
 */
static void
zk_locks_pre_commit(void)
{
	HASH_SEQ_STATUS status;
	ZkLockEntry *entry;
	ZkLockEntry *first_lost = NULL;
	int			nlost = 0;

	ZkCheckXactLostLocks();

	if (zk_leases_touched != NIL)
		zk_leases_pre_commit();

	if (ZkHeldLocks == NULL || hash_get_num_entries(ZkHeldLocks) == 0)
		return;

	/* an expiry already seen by the watcher: report it (raises) */
	if (ZkSessionIsExpired())
		ZkSessionEnsure();
	(void) ZkLockAbsorbLosses();

	if (zklock_verify_on_commit)
	{
		long		nheld = hash_get_num_entries(ZkHeldLocks);
		const char **znodes = palloc(sizeof(char *) * nheld);
		ZkLockEntry **asked = palloc(sizeof(ZkLockEntry *) * nheld);
		bool	   *gone = palloc(sizeof(bool) * nheld);
		int			n = 0;

		hash_seq_init(&status, ZkHeldLocks);
		while ((entry = (ZkLockEntry *) hash_seq_search(&status)) != NULL)
		{
			if (!entry->deleted && !ZkLossWatchNode(entry->znode).watching)
			{
				asked[n] = entry;
				znodes[n++] = entry->znode;
			}
		}
		if (!ZkVerifyHeld(znodes, n, gone, zklock_connect_timeout))
			ereport(ERROR,
					(errcode(ERRCODE_CONNECTION_FAILURE),
					 errmsg("could not confirm ZooKeeper locks before commit"),
					 errdetail("ZooKeeper did not answer for zklock.connect_timeout (%d ms); these locks may be lost: %s.",
							   zklock_connect_timeout,
							   ZkDescribeHeld(NULL, 0))));
		for (int i = 0; i < n; i++)
		{
			if (gone[i])
				asked[i]->deleted = true;
		}
		/* deletions of watched nodes, noted before the sync's answer */
		(void) ZkLockAbsorbLosses();
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
				ereport(ERROR,
						(errcode(ERRCODE_CONNECTION_FAILURE),
						 errmsg("could not confirm the ZooKeeper session before commit"),
						 errdetail("ZooKeeper did not answer before the session could have expired; these locks may be lost: %s. The transaction is rolled back.",
								   ZkDescribeHeld(NULL, 0)),
						 errhint("Check zk_session() and the connection to ZooKeeper.")));
		}
		/* held-node deletions notified before the answers that renewed the lease */
		(void) ZkLockAbsorbLosses();
	}

	hash_seq_init(&status, ZkHeldLocks);
	while ((entry = (ZkLockEntry *) hash_seq_search(&status)) != NULL)
	{
		if (entry->deleted)
		{
			nlost++;
			if (first_lost == NULL)
				first_lost = entry;
		}
	}
	if (first_lost != NULL)
		ZkRaiseLost(first_lost, nlost, ZK_OPER_VERIFY_LOCK);
}

/*
 * zk_xact_end
 *		The transaction is over (committed, aborted or prepared): release
 *		its holds and forget what it touched.  PostgreSQL holds interrupts
 *		here, so the release's wait is bounded and raises no ERROR; deep in
 *		error recursion it does not wait at all (ZkFlushReleases).
 */
static void
zk_xact_end(void)
{
	if (ZkHoldsXactLocks())
		ZkReleaseXactHolds(1);
	ZkFlushReleases();
	ZkForgetXactLostLocks();
	zk_forget_touched_leases();
}

/*
 * ZkLockXactCallback
 *		zklock's one transaction callback, registered once by _PG_init:
 *		verify before COMMIT; refuse PREPARE while holding transaction
 *		locks; at the end, release the transaction's holds.  At abort, the
 *		requests an ERROR left without an owner are handed to the client
 *		threads first (ZkOpsAbandon), then the holds go.  Only PRE_COMMIT
 *		and PRE_PREPARE may raise an ERROR; the end events allocate nothing
 *		that can fail (the release batch is reserved as holds are taken).
 */
void
ZkLockXactCallback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
			zk_locks_pre_commit();
			break;
		case XACT_EVENT_PRE_PREPARE:
			if (ZkHoldsXactLocks())
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that holds ZooKeeper transaction locks")));
			/* the leases it took or renewed must still be held */
			if (zk_leases_touched != NIL)
				zk_leases_pre_commit();
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			ZkOpsAbandon(0);
			zk_xact_end();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			zk_xact_end();
			break;
	}
}

/*
 * ZkLockSubXactCallback
 *		zklock's one subtransaction callback, registered once by _PG_init.
 *		ROLLBACK TO SAVEPOINT (or an ERROR caught in PL/pgSQL) hands the
 *		requests the subtransaction left to the client threads and releases
 *		the holds it took, at once; its commit hands them to the parent.
 */
void
ZkLockSubXactCallback(SubXactEvent event, SubTransactionId mySubid,
					  SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		ZkOpsAbandon(GetCurrentTransactionNestLevel());
	if (!ZkHoldsXactLocks() && !ZkHasBatchedReleases())
		return;
	if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		ZkReleaseXactHolds(GetCurrentTransactionNestLevel());
		ZkFlushReleases();
	}
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
		ZkPromoteXactHolds(GetCurrentTransactionNestLevel());
}
