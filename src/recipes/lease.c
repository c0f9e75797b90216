/*-------------------------------------------------------------------------
 *
 * recipes/lease.c
 *		Leases: exclusive locks held by a ZooKeeper TTL node instead of a
 *		backend's session, for work that outlives a connection.
 *
 * A lease waits in the same queue as zk_lock on its path, as an exclusive
 * contender named like zk_lock's exclusive nodes (base/contender.c), so
 * session locks, leases, and Curator and kazoo writers exclude one another,
 * first come, first served. Its node, though, is a persistent-sequential node
 * with a TTL (ZooKeeper's extended types): once granted it belongs to no
 * session. It outlives the backend that took it and is removed by a release
 * (from any backend on any server, naming it by its fencing token), or by the
 * server once it has not been modified for its TTL.
 *
 * Taking a lease.  The TTL create and a read of the queue are sent back to
 * back: one round trip (ZooKeeper cannot create a TTL node inside a
 * multi).  If nothing is ahead, that grants the lease, and its TTL runs
 * from the create.  Otherwise, before it waits, the node gets an ephemeral
 * child (ZK_LEASE_WAITER) of the taker's session: the child keeps the
 * server from reaping a node that waits longer than its TTL, and tells
 * other clients that the taker is alive.  The wait itself is
 * recipes/attempt.c's (herd-free, interruptible, with deadlock detection).
 * The grant writes the node's data and deletes the child in one
 * transaction: the TTL then runs from the grant, and the node no longer
 * depends on the taker's session.
 *
 * The waiting phase belongs to the backend.  However it ends without the
 * lease (false, timeout, cancel, error, backend exit), the node is
 * deleted: the session's guard (client/session.c) does it, even if the session
 * ended first (the delete is carried over to the next one) or the backend
 * exits in the middle of the wait.  Only a backend killed before its exit
 * code could run (SIGKILL, a crash) leaves its node behind.  Once that
 * backend's session expires, the node's child is gone and its data was
 * never written; any zklock waiter recognises such a node (base/contender.c)
 * and deletes it.  Other clients wait for the TTL to run out.
 *
 * Renewal writes the node's data again (the TTL counts from the node's
 * modification time).  A renewal that reaches the lease after its TTL ran
 * out cannot be trusted: the server's reaper picks its candidates first
 * and deletes them later without looking again, so it may delete the node
 * after the write.  The node is then deleted at once and the renewal
 * reports the lease expired.  To know, a renewal sends a read of the node
 * behind the write in the same round trip, and compares the modification
 * times before and after, both the leader's.  The read is left out when
 * this backend itself granted or renewed the lease by a request sent at s,
 * less than half the TTL ago: the node was last modified no earlier than
 * s, so if the new write's answer comes before s + TTL, less than the TTL
 * had passed when the server applied it (the clocks running at one rate),
 * and no reaper can have picked it; an answer that comes later is treated
 * as a late renewal.  A renewal from a backend that already knows the node
 * is then one write.
 *
 * The ttl.  The server keeps a TTL node's ttl to itself, so the lease's
 * data records it ("ttl_ms", base/node_data.c); but without zklock.auth any
 * client can write that data.  So the ttl that renewals and the check at
 * COMMIT use is the one this backend took the lease with, when it did; a
 * lease found from another backend gets its ttl from the data, read
 * again with every renewal (never left out as above), bounded by
 * ZooKeeper's largest TTL (base/node_formats.c), and never longer than the
 * shortest this backend saw in it; the expiry is then judged by the
 * server's own modification times of the node (its mtime before and after
 * the write).  Data without a ttl is an ERROR for such a renewal, before
 * it writes anything (a name whose data had none is looked up again first,
 * in case it was mended); damaged data of a lease this backend took is
 * named in a WARNING, and the renewal writes the backend's own data back.
 * Times are added and subtracted with overflow checks (common/int.h): a
 * sum that overflows counts as expired, never as held.
 *
 * Names.  A token is a node's czxid, and a granted lease is the first node
 * of its queue, so a lease is found from its path and token by reading the
 * queue and the first node's Stat.  Each backend remembers the node names
 * of the leases it took, renewed or looked up lately (a small fixed
 * table), so that its next renewal or release costs one round trip.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/int.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "cluster/path_kind.h"
#include "base/contender.h"
#include "recipes/lease.h"
#include "recipes/attempt.h"
#include "base/node_data.h"
#include "base/operation_context.h"
#include "base/text_encoding.h"
#include "client/client.h"

/* how many lease names a backend remembers */
#define ZK_LEASE_NAMES	64

/* One lease whose node this backend knows. */
typedef struct ZkLeaseName
{
	char	   *lock_node;		/* NULL: a free slot */
	int64		token;
	char	   *znode;
	char	   *data;			/* what a renewal writes back */
	int			datalen;
	int64		ttl_ms;			/* this backend's own (ttl_ours), or the
								 * shortest seen in the node's data; -1 if
								 * it records none */
	bool		ttl_ours;		/* this backend took the lease with ttl_ms */
	char	   *no_ttl;			/* ttl_ms -1: why the data records none */
	int64		sent_at;		/* monotonic send time of this backend's
								 * last grant or renewal of it; 0: none */
} ZkLeaseName;

static MemoryContext zk_lease_cxt = NULL;
static ZkLeaseName zk_lease_names[ZK_LEASE_NAMES];
static int	zk_lease_names_next = 0;

static ZkLeaseName *zk_lease_known(const char *lock_node, int64 token);
static ZkLeaseName *zk_lease_remember(const char *lock_node, int64 token,
									  const char *znode, const char *data,
									  int datalen, int64 ttl_ms,
									  bool ttl_ours);
static int64 zk_lease_expiry(int64 mtime, int64 ttl_ms);
static bool zk_lease_outlived(int64 from, int64 to, int64 ttl_ms);
static void zk_lease_forget(ZkLeaseName *name);
static ZkLeaseName *zk_lease_find(const char *lock_node, int64 token);
static int64 zk_lease_create(ZkAttempt *at, int64 ttl_ms, int64 *mtime);
static bool zk_lease_blocked(ZkAttempt *at);
static void zk_lease_add_waiter(ZkAttempt *at);
static int64 zk_lease_claim(ZkAttempt *at, int64 *mtime);

/*
 * zk_lease_known
 *		The remembered name of the lease with this token on this lock node,
 *		or NULL.
 */
static ZkLeaseName *
zk_lease_known(const char *lock_node, int64 token)
{
	for (int i = 0; i < ZK_LEASE_NAMES; i++)
	{
		ZkLeaseName *name = &zk_lease_names[i];

		if (name->lock_node != NULL && name->token == token &&
			strcmp(name->lock_node, lock_node) == 0)
			return name;
	}
	return NULL;
}

/*
 * zk_lease_forget
 *		Free a remembered name's slot.
 */
static void
zk_lease_forget(ZkLeaseName *name)
{
	if (name == NULL || name->lock_node == NULL)
		return;
	pfree(name->lock_node);
	pfree(name->znode);
	if (name->data)
		pfree(name->data);
	if (name->no_ttl)
		pfree(name->no_ttl);
	memset(name, 0, sizeof(*name));
}

/*
 * zk_lease_expiry
 *		When a lease whose node was last modified at 'mtime' (ms since the
 *		Unix epoch, the server's clock) expires: mtime + ttl_ms, PG_INT64_MAX
 *		if that overflows; -1 if the modification time is not known.
 */
static int64
zk_lease_expiry(int64 mtime, int64 ttl_ms)
{
	int64		expiry;

	if (mtime < 0)
		return -1;
	if (pg_add_s64_overflow(mtime, ttl_ms, &expiry))
		return PG_INT64_MAX;
	return expiry;
}

/*
 * zk_lease_outlived
 *		Has a lease of ttl_ms outlived its ttl between times 'from' and
 *		'to' (ms, one clock)?  A difference that overflows has.
 */
static bool
zk_lease_outlived(int64 from, int64 to, int64 ttl_ms)
{
	int64		elapsed;

	return pg_sub_s64_overflow(to, from, &elapsed) || elapsed >= ttl_ms;
}

/*
 * zk_lease_remember
 *		Remember a lease's node name, the data a renewal writes back and
 *		its ttl (see the file header: ttl_ours if this backend took it with
 *		that ttl, else the one its data records, -1 if none), replacing the
 *		oldest remembered one when the table is full.
 */
static ZkLeaseName *
zk_lease_remember(const char *lock_node, int64 token, const char *znode,
				  const char *data, int datalen, int64 ttl_ms, bool ttl_ours)
{
	ZkLeaseName *name = zk_lease_known(lock_node, token);

	if (zk_lease_cxt == NULL)
		zk_lease_cxt = AllocSetContextCreate(TopMemoryContext,
											 "zklock lease names",
											 ALLOCSET_SMALL_SIZES);
	if (name == NULL)
	{
		name = &zk_lease_names[zk_lease_names_next];
		zk_lease_names_next = (zk_lease_names_next + 1) % ZK_LEASE_NAMES;
	}
	zk_lease_forget(name);
	name->lock_node = MemoryContextStrdup(zk_lease_cxt, lock_node);
	name->token = token;
	name->znode = MemoryContextStrdup(zk_lease_cxt, znode);
	name->datalen = Max(datalen, 0);
	name->data = MemoryContextAlloc(zk_lease_cxt, name->datalen + 1);
	if (name->datalen > 0)
		memcpy(name->data, data, name->datalen);
	name->data[name->datalen] = '\0';
	name->ttl_ms = ttl_ms;
	name->ttl_ours = ttl_ours;
	name->sent_at = 0;
	return name;
}

/*
 * ZkLeaseForgetNames
 *		Forget every remembered lease name (DISCARD ALL).
 */
void
ZkLeaseForgetNames(void)
{
	for (int i = 0; i < ZK_LEASE_NAMES; i++)
		zk_lease_forget(&zk_lease_names[i]);
	zk_lease_names_next = 0;
}

/*
 * ZkLeaseKnownLockNode
 *		The lock node of a remembered lease with this token, or NULL.
 */
const char *
ZkLeaseKnownLockNode(int64 token)
{
	for (int i = 0; i < ZK_LEASE_NAMES; i++)
	{
		if (zk_lease_names[i].lock_node != NULL &&
			zk_lease_names[i].token == token)
			return zk_lease_names[i].lock_node;
	}
	return NULL;
}

/*
 * zk_lease_find
 *		The lease with this token that holds the lock, by its remembered
 *		name (unless the data read with it recorded no ttl, see the file
 *		header) or else by reading the queue and its first node; NULL if no
 *		lease with that token holds the lock (the lock node may not even
 *		exist).  A name found is remembered.
 */
static ZkLeaseName *
zk_lease_find(const char *lock_node, int64 token)
{
	ZkLeaseName *name = zk_lease_known(lock_node, token);

	/* data that recorded no ttl is read again: it may have been mended */
	if (name != NULL && !name->ttl_ours && name->ttl_ms < 0)
	{
		zk_lease_forget(name);
		name = NULL;
	}

	while (name == NULL)
	{
		ZkOp	   *op = ZkGetChildrenAnswered(lock_node);
		ZkContender *queue;
		int			nqueue;
		char	   *head;
		int			rc = op->rc;

		if (rc == ZNONODE)
		{
			ZkOpFree(op);
			return NULL;
		}
		if (rc != ZOK)
			ZkRaiseForRc(rc);

		queue = palloc(sizeof(ZkContender) * Max(op->nchildren, 1));
		nqueue = ZkSortContenders(op->children, op->nchildren, queue);
		head = nqueue > 0 ? psprintf("%s/%s", lock_node, queue[0].name) : NULL;
		ZkOpFree(op);
		pfree(queue);
		if (head == NULL)
			return NULL;

		op = ZkGetDataAnswered(head, ZK_NO_WATCH);
		rc = op->rc;
		if (rc == ZOK)
		{
			/* a lease is a TTL node; its token is its czxid */
			if (op->stat.czxid == token && ZkIsLeaseNode(op->stat.ephemeralOwner))
			{
				int64		ttl_ms;
				char	   *reason;

				/*
				 * Its ttl, as its data records it (bounded), or -1; data
				 * too long to record one is not kept (a renewal without a
				 * ttl writes nothing).
				 */
				if (ZkReadLeaseTtl(op->value, op->value_len, &ttl_ms,
								   &reason) == ZK_DATA_OK)
					name = zk_lease_remember(lock_node, token, head,
											 op->value, op->value_len,
											 ttl_ms, false);
				else
				{
					name = zk_lease_remember(lock_node, token, head, NULL, 0,
											 -1, false);
					name->no_ttl = MemoryContextStrdup(zk_lease_cxt, reason);
					pfree(reason);
				}
			}
			ZkOpFree(op);
			pfree(head);
			if (name == NULL)
				return NULL;
			break;
		}
		ZkOpFree(op);
		pfree(head);
		if (rc != ZNONODE)		/* ZNONODE: the head went; read again */
			ZkRaiseForRc(rc);
	}
	return name;
}

/*
 * zk_lease_create
 *		Create our TTL node and read the queue, back to back: one round
 *		trip (recipes/attempt_create.c's create loop, which every recipe
 *		shares).
 *		Returns with at->znode set, guarded (at->persistent), and the
 *		queue known; the result is the monotonic time the create was sent,
 *		*mtime the node's modification time (ms since the Unix epoch, the
 *		server's clock; -1 when not known: the answer was lost, and the node
 *		was found by its prefix, and then the send time bounds it).  A
 *		server without TTL support is 0A000.
 */
static int64
zk_lease_create(ZkAttempt *at, int64 ttl_ms, int64 *mtime)
{
	ZkCreateOpts opts;
	ZkCreateResult res;

	memset(&opts, 0, sizeof(opts));
	opts.learn_queue = true;
	opts.ttl_ms = ttl_ms;
	/* one node: made, or found by its prefix, never in part */
	(void) ZkAttemptCreate(&at, 1, &opts, &res);
	*mtime = res.mtime;
	return res.sent_at;
}

/*
 * zk_lease_blocked
 *		Is our node behind a conflicting one in our copy of the queue?
 */
static bool
zk_lease_blocked(ZkAttempt *at)
{
	int			me = ZkFindContender(at->queue, at->nqueue, at->name);

	return me >= 0 && ZkBlockingContender(at->queue, me, ZK_MODE_EXCLUSIVE) >= 0;
}

/*
 * zk_lease_add_waiter
 *		Give our node its ephemeral waiter child before we wait (see the
 *		file header).
 */
static void
zk_lease_add_waiter(ZkAttempt *at)
{
	char	   *child = psprintf("%s/%s", at->znode, ZK_LEASE_WAITER);
	int			rc;

	/* guarded before it is sent, so that the node's delete comes after */
	ZkGuardNode(child);
	rc = ZkOpResult(ZkCreateAnswered(child, "", 0, ZOO_EPHEMERAL, NULL));
	/* ZNODEEXISTS: made by an earlier try whose answer was lost */
	if (rc == ZNONODE)
		ZkAttemptRaiseDisappeared(at, true);
	if (rc != ZOK && rc != ZNODEEXISTS)
		ZkRaiseForRc(rc);
	pfree(child);
}

/*
 * zk_lease_claim
 *		Our node, which waited, got the lock: write its data and delete its
 *		waiter child in one transaction, after which the node belongs to the
 *		lease alone and its TTL runs from now.  Returns the monotonic time
 *		the claim was sent; *mtime as for zk_lease_create.
 */
static int64
zk_lease_claim(ZkAttempt *at, int64 *mtime)
{
	const ZkAcquireArgs *args = at->args;
	char	   *child = psprintf("%s/%s", at->znode, ZK_LEASE_WAITER);
	ZkMultiReq	reqs[2];
	int64		first_sent = ZkNowMs();
	ZkOp	   *op;
	int			rc;
	int			err;
	int			which;

	memset(reqs, 0, sizeof(reqs));
	reqs[0].kind = ZK_MULTI_SET;
	reqs[0].path = at->znode;
	reqs[0].data = args->data;
	reqs[0].datalen = args->datalen;
	reqs[0].version = -1;
	reqs[1].kind = ZK_MULTI_DELETE;
	reqs[1].path = child;
	reqs[1].version = -1;

	/* sent again after a lost connection: the claim may have been applied */
	op = ZkMultiAnswered(2, reqs, NULL);
	rc = op->rc;
	if (rc == ZOK)
	{
		*mtime = op->stat.mtime;
		ZkOpFree(op);
		pfree(child);
		return first_sent;
	}
	which = ZkMultiFailure(op, &err);
	ZkOpFree(op);
	if (which == 1 && err == ZNONODE)
	{
		/* the child is gone: an earlier claim whose answer was lost? */
		ZkOp	   *ex = ZkExistsAnswered(at->znode);
		bool		claimed;

		claimed = (ex->rc == ZOK && ex->stat.version > 0 &&
				   ex->stat.numChildren == 0);
		*mtime = ex->stat.mtime;
		ZkOpFree(ex);
		if (claimed)
		{
			pfree(child);
			return first_sent;
		}
	}
	if (err == ZNONODE)
		ZkAttemptRaiseDisappeared(at, true);
	ZkRaiseForRc(err);
	return first_sent;			/* not reached */
}

/*
 * ZkLeaseAcquire
 *		Take a lease (see the file header).  Waits at most args->wait_ms
 *		(then returns false), or with wait_ms < 0 as long as needed,
 *		bounded by lock_timeout if set (then ERROR 55P03).  However it ends
 *		without the lease, its node is deleted.  On success *info describes
 *		the lease, whose name this backend remembers.  Errors name the
 *		lease being acquired, its wait included.
 */
bool
ZkLeaseAcquire(const ZkLeaseArgs *largs, ZkLeaseInfo *info)
{
	ZkOperationContext oc;
	ZkAcquireArgs args;
	ZkAttempt  *at;
	ZkGrant		grant;
	volatile bool granted = false;
	volatile int64 sent_at = 0;
	volatile int64 mtime = -1;

	ZkOperationPush(&oc, ZK_OPER_ACQUIRE_LEASE, largs->lock_path);
	memset(&args, 0, sizeof(args));
	args.lock_node = largs->lock_node;
	args.lock_path = largs->lock_path;
	args.mode = ZK_MODE_EXCLUSIVE;
	args.style = largs->style;
	args.wait_ms = largs->wait_ms;
	args.data = largs->data;
	args.datalen = largs->datalen;

	at = ZkAttemptBegin(&args, NULL);
	at->persistent = true;
	ZkGuardBegin(args.lock_node, at->prefix);
	memset(&grant, 0, sizeof(grant));

	PG_TRY();
	{
		int64		t;
		bool		waiter = false;

		sent_at = zk_lease_create(at, largs->ttl_ms, &t);
		mtime = t;
		/* the queue read with the create (cluster/path_kind.c) */
		ZkPathKindCheck(largs->lock_path, ZK_KIND_LOCK,
						(const char *const *) at->names, at->nnames);
		if (largs->wait_ms != 0 && zk_lease_blocked(at))
		{
			zk_lease_add_waiter(at);
			waiter = true;
		}
		granted = ZkAttemptWait(at, &grant);
		if (granted && waiter)
		{
			sent_at = zk_lease_claim(at, &t);
			mtime = t;
		}
	}
	PG_CATCH();
	{
		ZkAttemptAbandon(&at, 1, false);
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (granted)
	{
		ZkAttemptGrant(at, &grant);
		ZkGuardRelease();
		info->znode = grant.znode;
		info->token = grant.token;
		info->ttl_ms = largs->ttl_ms;
		info->sent_at = sent_at;
		info->expires_at = zk_lease_expiry(mtime, largs->ttl_ms);
		zk_lease_remember(args.lock_node, grant.token, grant.znode,
						  args.data, args.datalen, largs->ttl_ms,
						  true)->sent_at = sent_at;
	}
	else
		ZkAttemptAbandon(&at, 1, true);
	ZkAttemptFree(at);
	ZkOperationPop(&oc);
	return granted;
}

/*
 * zk_lease_renew_ttl
 *		After a renewal's write: the ttl to count with, ours, or the
 *		shortest its data recorded (the server keeps it to itself; see the
 *		file header), into name->ttl_ms.  'verdict' and 'reason' are what
 *		the data read before the write said (a fast renewal read none); data
 *		that did not record a ttl is named in a WARNING.
 */
static void
zk_lease_renew_ttl(ZkLeaseName *name, bool fast, ZkDataVerdict verdict,
				   int64 data_ttl, const char *reason)
{
	if (name->ttl_ours)
	{
		if (!fast && verdict != ZK_DATA_OK)
			ZkWarnNodeData(name->znode, reason,
						   "The renewal has written this backend's own data back to it, with the ttl the lease was taken with.");
	}
	else if (verdict == ZK_DATA_OK)
		name->ttl_ms = Min(name->ttl_ms, data_ttl);
	else
		ZkWarnNodeData(name->znode, reason,
					   "The renewal has written back the data it read before, and counts with the ttl recorded there.");
}

/*
 * zk_lease_renew_write
 *		Renew the lease 'name' once: write its data back, preceded, unless
 *		our own grant or renewal bounds its last modification, by a read of
 *		it in the same round trip.  Returns false when the connection was
 *		lost (once it is back; the caller looks the lease up and renews
 *		again: a write applied twice does no harm).  Else sets *status:
 *		ZK_LEASE_NONE if the node is gone; ZK_LEASE_EXPIRED if the lease
 *		had outlived its TTL (its node is deleted then); ZK_LEASE_OK, with
 *		*info describing it.
 */
static bool
zk_lease_renew_write(ZkLeaseName *name, int64 token, ZkLeaseInfo *info,
					 ZkLeaseStatus *status)
{
	ZkOp	   *get;
	ZkOp	   *set;
	int			get_rc;
	int			rc;
	struct Stat before;
	struct Stat after;
	ZkDataVerdict verdict = ZK_DATA_OK;
	int64		data_ttl = -1;
	char	   *reason = NULL;
	int64		sent_at;
	bool		fast;

	memset(&before, 0, sizeof(before));

	/*
	 * Our own grant or renewal bounds the last modification, if we know the
	 * ttl (see the file header).
	 */
	fast = (name->ttl_ours && name->sent_at > 0 &&
			ZkNowMs() - name->sent_at < name->ttl_ms / 2);

	/* the read is answered before the write is applied */
	get = fast ? NULL : ZkGetData(name->znode, ZK_NO_WATCH);
	set = ZkSetData(name->znode, name->data, name->datalen);
	sent_at = set->sent_at;
	if (get != NULL)
		ZkOpWait(get);
	ZkOpWait(set);
	get_rc = get != NULL ? get->rc : ZOK;
	rc = set->rc;
	if (get != NULL)
	{
		before = get->stat;
		if (get_rc == ZOK)
			verdict = ZkReadLeaseTtl(get->value, get->value_len,
									 &data_ttl, &reason);
		ZkOpFree(get);
	}
	after = set->stat;
	ZkOpFree(set);

	if (ZkIsConnectionLoss(get_rc) || ZkIsConnectionLoss(rc))
	{
		/* a write applied twice does no harm: ask again, reading */
		name->sent_at = 0;
		(void) ZkAwaitReconnect(ZkIsConnectionLoss(rc) ? rc : get_rc);
		return false;
	}
	if (get_rc == ZNONODE || rc == ZNONODE)
	{
		zk_lease_forget(name);
		*status = ZK_LEASE_NONE;
		return true;
	}
	if (get_rc != ZOK)
		ZkRaiseForRc(get_rc);
	if (rc != ZOK)
		ZkRaiseForRc(rc);

	zk_lease_renew_ttl(name, fast, verdict, data_ttl, reason);
	if (reason != NULL)
		pfree(reason);
	info->ttl_ms = name->ttl_ms;

	if (fast ? zk_lease_outlived(name->sent_at, ZkNowMs(), info->ttl_ms) :
		zk_lease_outlived(before.mtime, after.mtime, info->ttl_ms))
	{
		/* past its TTL already: the reaper may have chosen it */
		char	   *znode = pstrdup(name->znode);

		zk_lease_forget(name);
		ZkDeleteSync(znode);
		pfree(znode);
		*status = ZK_LEASE_EXPIRED;
		return true;
	}
	name->sent_at = sent_at;
	info->znode = pstrdup(name->znode);
	info->token = token;
	info->sent_at = sent_at;
	info->expires_at = zk_lease_expiry(after.mtime, info->ttl_ms);
	*status = ZK_LEASE_OK;
	return true;
}

/*
 * ZkLeaseRenew
 *		Renew the lease with this token on the lock: its TTL runs again
 *		from now.  ZK_LEASE_NONE if no such lease holds the lock;
 *		ZK_LEASE_EXPIRED if it had outlived its TTL (its node is deleted
 *		then, see the file header).  On ZK_LEASE_OK *info describes it.
 */
ZkLeaseStatus
ZkLeaseRenew(const char *lock_node, const char *lock_path, int64 token,
			 ZkLeaseInfo *info)
{
	ZkOperationContext oc;
	ZkLeaseStatus status;

	ZkOperationPush(&oc, ZK_OPER_RENEW_LEASE, lock_path);
	for (;;)
	{
		ZkLeaseName *name = zk_lease_find(lock_node, token);

		if (name == NULL)
		{
			status = ZK_LEASE_NONE;
			break;
		}
		if (!name->ttl_ours && name->ttl_ms < 0)
		{
			/* its data, read just now (zk_lease_find), records no ttl */
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("ZooKeeper lease node \"%s\" does not record its ttl",
							ZkUtf8ForMessage(name->znode)),
					 errdetail("The node's data %s.",
							   name->no_ttl ? name->no_ttl :
							   "does not record the lease's ttl_ms")));
		}
		if (zk_lease_renew_write(name, token, info, &status))
			break;
	}
	ZkOperationPop(&oc);
	return status;
}

/*
 * ZkLeaseRelease
 *		Release the lease with this token on the lock, waiting until
 *		ZooKeeper applied the delete.  ZK_LEASE_NONE if no such lease holds
 *		the lock.  After a lost connection the delete is sent again; a node
 *		then found missing counts as released (the first delete may have
 *		been applied).
 */
ZkLeaseStatus
ZkLeaseRelease(const char *lock_node, const char *lock_path, int64 token)
{
	ZkOperationContext oc;
	ZkLeaseName *name;
	bool		released = false;

	ZkOperationPush(&oc, ZK_OPER_RELEASE_LEASE, lock_path);
	name = zk_lease_find(lock_node, token);
	if (name != NULL)
	{
		bool		resent;
		int			rc = ZkDeleteAnswered(name->znode, -1, &resent);

		zk_lease_forget(name);
		if (rc != ZOK && rc != ZNONODE)
			ZkRaiseForRc(rc);
		released = (rc == ZOK || resent);
	}
	ZkOperationPop(&oc);
	return released ? ZK_LEASE_OK : ZK_LEASE_NONE;
}
