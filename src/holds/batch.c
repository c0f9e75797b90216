/*-------------------------------------------------------------------------
 *
 * holds/batch.c
 *		The batch of released nodes: their deletes go in one round trip,
 *		however many nodes.
 *
 * A node whose last hold went is not deleted at once: the table batches it
 * (ZkBatchRelease), and the operation that released it (zk_unlock,
 * zk_unlock_all, DISCARD ALL, COMMIT, ROLLBACK, ROLLBACK TO SAVEPOINT)
 * sends the batch when it ends (ZkFlushReleases): one round trip however
 * many nodes.  With zklock.synchronous_release (the default) the operation
 * returns only once ZooKeeper applied the deletes, so any lock attempt
 * that starts afterwards, on any server, finds the locks free.  At COMMIT
 * and ROLLBACK PostgreSQL holds interrupts, so the wait there is bounded
 * by zklock.connect_timeout and raises no ERROR; in zk_unlock a cancel
 * ends the wait (the lock is released all the same, its delete completing
 * in the background).  A release not confirmed within
 * zklock.connect_timeout is reported by a WARNING and goes on in the
 * background until it succeeds or the session ends.
 *
 * The batch lives in ZkLockContext and only grows to the largest batch,
 * which zklock.max_locks_per_backend bounds.
 *
 * The lowest file of the lock table: it calls no other file of holds/.  The
 * table (holds/table.c) batches the nodes of the entries it drops, the
 * release entry points (holds/release.c) and transaction end
 * (holds/commit.c) send the batch, and an expiry (holds/lost.c) drops it
 * unsent.  So that it needs nothing of the table, the "zklock" memory
 * context, which ZkLockTableInit creates and every file of holds/
 * allocates in, is defined here.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/ipc.h"

#include "holds/internal.h"
#include "base/vocabulary.h"
#include "client/client.h"

/* the "zklock" memory context: every per-backend allocation of zklock */
MemoryContext ZkLockContext = NULL;

/* nodes released and not yet sent (ZkLockContext); see ZkFlushReleases */
static char **zk_released = NULL;
static int	zk_nreleased = 0;
static int	zk_maxreleased = 0;

/*
 * ZkReserveReleases
 *		Make room in the batch for the nodes of 'nentries' held entries (two
 *		each: its node and the node a downgrade keeps) besides the nodes batched
 *		already.  Called as an entry is added to the lock table, so
 *		that every entry can be batched later, at transaction abort too,
 *		without allocating: an entry goes to the batch at most once, and
 *		the batch is emptied only by sending it.
 */
void
ZkReserveReleases(int nentries)
{
	int			need = zk_nreleased + 2 * nentries;

	if (need > zk_maxreleased)
	{
		int			newmax = Max(16, Max(need, zk_maxreleased * 2));

		if (zk_released == NULL)
			zk_released = MemoryContextAlloc(ZkLockContext,
											 sizeof(char *) * newmax);
		else
			zk_released = repalloc(zk_released, sizeof(char *) * newmax);
		zk_maxreleased = newmax;
	}
}

/*
 * ZkBatchRelease
 *		Take over a released node's path (palloc'd in ZkLockContext) until
 *		ZkFlushReleases sends its delete, and stop watching it for a loss.
 *		Room was reserved when its entry was added (ZkReserveReleases):
 *		nothing is allocated here.
 */
void
ZkBatchRelease(char *znode)
{
	/* our own delete is no loss (client/loss_watch.c) */
	ZkLossWatchRelease(znode);
	Assert(zk_nreleased < zk_maxreleased);
	zk_released[zk_nreleased++] = znode;
}

/*
 * ZkFlushReleases
 *		Send the deletes of every node released since the last flush, in
 *		one batch, and with zklock.synchronous_release wait until ZooKeeper
 *		applied them (see the file header).  In the transaction callbacks
 *		PostgreSQL holds interrupts, so the wait there raises no ERROR.
 *		Deep in error recursion (an error while reporting an error) it
 *		neither waits nor warns, as postgres_fdw's abort cleanup does not
 *		talk to its server then: the deletes go in the background.  It
 *		allocates nothing that can raise an ERROR on the way.
 */
void
ZkFlushReleases(void)
{
	int			n = zk_nreleased;
	bool		wait = zklock_synchronous_release && !proc_exit_inprogress &&
		!in_error_recursion_trouble();
	ZkOp	   *op;

	if (n == 0)
		return;

	/* sent once, whatever happens next: forget them first */
	zk_nreleased = 0;
	op = ZkDeleteNodes((const char *const *) zk_released, n, wait);
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
 * ZkDropBatchedReleases
 *		The session expired: the nodes released and not yet sent went with
 *		it.  Forget them unsent.
 */
void
ZkDropBatchedReleases(void)
{
	for (int i = 0; i < zk_nreleased; i++)
		pfree(zk_released[i]);
	zk_nreleased = 0;
}

/*
 * ZkHasBatchedReleases
 *		Are released nodes waiting to be sent?
 */
bool
ZkHasBatchedReleases(void)
{
	return zk_nreleased > 0;
}
