/*-------------------------------------------------------------------------
 *
 * recipes/revoke.c
 *		Revocation: asking the holders of a lock path to let go (Curator's
 *		protocol), or taking the lock from them (force).
 *
 * Curator's protocol.  A holder made revocable watches its own node's data,
 * and Revoker.attemptRevoke writes the marker "__REVOKE__" into the data of
 * the node it names; the holder's listener then decides what to do.
 * ZkRevokeHolders writes the marker into each node that holds the path: the
 * granted queue nodes of a lock (its writer, or every reader that holds it),
 * a semaphore's permits.  A zklock holder learns of it through its loss
 * watch (client/loss_watch.c), whatever client wrote the marker.
 *
 * Force.  The holders' nodes are deleted instead: ZooKeeper's queue rule
 * grants the next waiter at once, and each zklock holder finds its hold
 * lost (its loss watch), as it would after any deletion.
 *
 * Which nodes.  The holders are read as zk_cluster_locks reads them
 * (cluster/locks.c), for this one path.  A lease's node (a TTL node, owned
 * by no session) has nobody listening to it: it is asked nothing, and force
 * deletes it.  A double barrier's participants hold nothing: they are left
 * alone either way.
 *
 * Races.  The read and the writes are separate requests: a holder that
 * releases meanwhile is not counted (its node is gone, ZNONODE), and a
 * waiter granted meanwhile is not asked.  Each node's write is its own
 * request, all sent at once (one round trip); after a lost connection the
 * unanswered ones are sent again (writing the marker twice is harmless, and
 * a delete that finds its node gone after a resend is counted as done).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "utils/memutils.h"

#include "base/node_formats.h"
#include "base/operation_context.h"
#include "base/text_encoding.h"
#include "client/client.h"
#include "cluster/view.h"
#include "recipes/revoke.h"

/* The holders of one path, as the scan found them. */
typedef struct ZkRevokeScan
{
	const char *path;			/* the lock path revoked */
	const char *lock_node;		/* its node */
	bool		force;
	MemoryContext cxt;			/* where the paths go */
	List	   *znodes;			/* the nodes' paths */
} ZkRevokeScan;

/*
 * zk_revoke_collect
 *		The cluster scan's callback: keep the nodes of 'lock' to revoke, if
 *		it is the path asked for (the scan may find other paths too).
 */
static void
zk_revoke_collect(const ZkClusterLock *lock, void *arg)
{
	ZkRevokeScan *rs = (ZkRevokeScan *) arg;
	MemoryContext old;

	if (strcmp(lock->path, rs->path) != 0 ||
		strcmp(lock->kind, "double barrier") == 0)
		return;
	old = MemoryContextSwitchTo(rs->cxt);
	for (int i = 0; i < lock->nholders; i++)
	{
		const ZkClusterHolder *h = &lock->holders[i];

		if (h->ttl_node && !rs->force)
			continue;			/* a lease: nobody listens */
		rs->znodes = lappend(rs->znodes,
							 psprintf("%s/%s", rs->lock_node, h->znode));
	}
	MemoryContextSwitchTo(old);
}

/*
 * zk_revoke_send
 *		Send the marker, or the delete, to one node.
 */
static ZkOp *
zk_revoke_send(const char *znode, bool force)
{
	if (force)
		return ZkDelete(znode, -1);
	return ZkSetData(znode, ZK_REVOKE_MARKER, (int) ZK_REVOKE_MARKER_LEN);
}

/*
 * ZkRevokeHolders
 *		Revoke the holders of lock path 'path', whose node is 'lock_node'
 *		(see the file header): write the marker into each holder's node, or
 *		with 'force' delete it.  Returns how many nodes were asked (or
 *		taken); *holders (palloc'd) names them, for the caller's LOG line.
 *		The session must be open.  Raises zklock's documented ERROR if
 *		ZooKeeper refuses a request.
 */
int
ZkRevokeHolders(const char *lock_node, const char *path, bool force,
				char **holders)
{
	ZkRevokeScan rs;
	ZkOperationContext oc;
	ZkOp	  **ops;
	int			n;
	int			done = 0;
	ListCell   *lc;
	StringInfoData asked;

	ZkOperationPush(&oc, ZK_OPER_REVOKE_LOCK, path);
	memset(&rs, 0, sizeof(rs));
	rs.path = path;
	rs.lock_node = lock_node;
	rs.force = force;
	rs.cxt = CurrentMemoryContext;
	ZkClusterScan(zklock_root, path, true, zk_revoke_collect, &rs);

	n = list_length(rs.znodes);
	ops = palloc0(sizeof(ZkOp *) * Max(n, 1));

	/* all at once; after a lost connection, the unanswered ones again */
	foreach(lc, rs.znodes)
		ops[foreach_current_index(lc)] = zk_revoke_send(lfirst(lc), force);
	initStringInfo(&asked);
	foreach(lc, rs.znodes)
	{
		const char *node = lfirst(lc);
		int			i = foreach_current_index(lc);
		bool		resent = false;
		int			rc;

		/* ZkOpResult waits for the answer and frees the op */
		rc = ZkOpResult(ops[i]);
		ops[i] = NULL;
		while (ZkAwaitReconnect(rc))
		{
			rc = ZkOpResult(zk_revoke_send(node, force));
			resent = true;
		}
		if (rc == ZNONODE && !(force && resent))
			continue;			/* released meanwhile */
		if (rc != ZOK && rc != ZNONODE)
			ZkRaiseForRc(rc);
		appendStringInfo(&asked, "%s\"%s\"", done > 0 ? ", " : "",
						 ZkUtf8ForMessage(node + strlen(lock_node) + 1));
		done++;
	}
	*holders = asked.data;
	ZkOperationPop(&oc);
	return done;
}
