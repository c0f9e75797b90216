/*-------------------------------------------------------------------------
 *
 * holds/unheld.c
 *		The lock table's entry points that hold nothing: leases renewed or
 *		released by token, barriers, and inspection of the cluster.
 *
 * None of these enters anything in the table. A lease (recipes/lease.c)
 * belongs to no backend: any backend that knows its token may renew or release
 * it, and a renewal is recorded for this transaction's COMMIT check
 * (holds/commit.c). A barrier (recipes/barrier.c) is a node anyone may set,
 * remove or wait for. Inspection reads the cluster's queues, every lock under
 * a prefix, and what blocks a waiting backend, as the zk_* views show them.
 * Each opens the session if needed and hands the recipe the ZooKeeper path of
 * the lock's node (ZkLockNodePath).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "recipes/barrier.h"
#include "cluster/view.h"
#include "recipes/lease.h"
#include "recipes/revoke.h"
#include "recipes/attempt.h"
#include "holds/holds.h"
#include "holds/internal.h"
#include "base/text_encoding.h"
#include "base/vocabulary.h"
#include "client/client.h"

static void zk_raise_no_lease(const char *path, int64 token)
			pg_attribute_noreturn();
static bool zk_holds_node(const char *path, const char *znode);

/*
 * zk_raise_no_lease
 *		No lease with this token holds the lock: the ERROR of zk_lease_renew.
 *		A token this backend knows as another lock's lease is named so.
 */
static void
zk_raise_no_lease(const char *path, int64 token)
{
	const char *other = ZkLeaseKnownLockNode(token);
	size_t		rootlen = strlen(zklock_root);

	if (other != NULL && strncmp(other, zklock_root, rootlen) == 0 &&
		strcmp(other + rootlen, path) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ZooKeeper lease token %lld belongs to lock \"%s\", not \"%s\"",
						(long long) token, ZkUtf8ForMessage(other + rootlen),
						ZkUtf8ForMessage(path)),
				 ZkOperationErrcontext(ZK_OPER_RENEW_LEASE, path)));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("no ZooKeeper lease with token %lld holds lock \"%s\"",
					(long long) token, ZkUtf8ForMessage(path)),
			 errdetail("The lease could not be renewed: its ttl ran out, it was released, or it never held this lock. A lost lease is not taken again by itself."),
			 errhint("Take a new lease with zk_lease_lock."),
			 ZkOperationErrcontext(ZK_OPER_RENEW_LEASE, path)));
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

	ZkHoldsEnsureSession();
	/* events of watches left on lease nodes: taken, so they do not pile up */
	(void) ZkLockAbsorbLosses();
	lock_node = ZkLockNodePath(path);
	switch (ZkLeaseRenew(lock_node, path, token, &info))
	{
		case ZK_LEASE_OK:
			break;
		case ZK_LEASE_NONE:
			zk_raise_no_lease(path, token);
			break;
		case ZK_LEASE_EXPIRED:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("ZooKeeper lease %lld on lock \"%s\" has run out",
							(long long) token, ZkUtf8ForMessage(path)),
					 errdetail("Its ttl had run out before this renewal, so ZooKeeper could remove it at any moment; the lease was released."),
					 errhint("Renew a lease well within its ttl, for example every third of it."),
					 ZkOperationErrcontext(ZK_OPER_RENEW_LEASE, path)));
			break;
	}
	pfree(lock_node);
	ZkTouchLease(path, &info);
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

	ZkHoldsEnsureSession();
	(void) ZkLockAbsorbLosses();
	lock_node = ZkLockNodePath(path);
	/* our own delete is no loss of a lease this transaction touched */
	ZkUnwatchTouchedLease(path, token);
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
	ZkForgetTouchedLease(path, token);
	return true;
}

/*
 * ZkLockBarrierSet, ZkLockBarrierRemove, ZkLockBarrierWait
 *		Barriers (recipes/barrier.c): nothing of them is held by the backend.
 */
bool
ZkLockBarrierSet(const char *path)
{
	ZkHoldsEnsureSession();
	return ZkBarrierSet(ZkLockNodePath(path), path);
}

bool
ZkLockBarrierRemove(const char *path)
{
	ZkHoldsEnsureSession();
	return ZkBarrierRemove(ZkLockNodePath(path), path);
}

bool
ZkLockBarrierWait(const char *path, int64 wait_ms)
{
	ZkHoldsEnsureSession();
	return ZkBarrierWait(ZkLockNodePath(path), path, wait_ms);
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
	for (int m = 0; ZkHeldLocks != NULL && m < 2; m++)
	{
		ZkLockEntry *entry = ZkEntryLookup(path, m == 0 ? ZK_MODE_EXCLUSIVE :
										   ZK_MODE_SHARED);

		if (entry != NULL && strcmp(entry->znode, znode) == 0)
			return true;
	}
	return false;
}

/*
 * ZkLockReadQueue
 *		The cluster's queue of a lock path, in order (zk_lock_queue): all of
 *		it with max_rows < 0, else the first max_rows nodes, reading node
 *		data for those only, behind a sync if 'synced' (ZkReadQueueHead).
 *		Opens the session if needed; our own downgrade read node shows as
 *		granted.  Returns the number of entries.
 */
int
ZkLockReadQueue(const char *path, int max_rows, bool synced,
				ZkQueueEntry **entries)
{
	char	   *lock_node;
	int			n;

	ZkHoldsEnsureSession();
	lock_node = ZkLockNodePath(path);
	n = ZkReadQueueHead(lock_node, path, max_rows, synced, entries);
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
 * ZkLockRevoke
 *		Revoke the holders of 'path', whoever they are (zk_revoke): ask them
 *		with Curator's marker, or with 'force' delete their nodes.  Returns
 *		how many were asked or taken; *holders names their nodes.  Opens the
 *		session if needed.
 */
int
ZkLockRevoke(const char *path, bool force, char **holders)
{
	char	   *lock_node;
	int			n;

	ZkHoldsEnsureSession();
	lock_node = ZkLockNodePath(path);
	n = ZkRevokeHolders(lock_node, path, force, holders);
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
	ZkHoldsEnsureSession();
	ZkClusterScan(zklock_root, prefix, false, cb, arg);
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
	ZkHoldsEnsureSession();
	return ZkClusterBlockers(zklock_root, pid, blockers);
}
