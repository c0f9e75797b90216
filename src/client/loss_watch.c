/*-------------------------------------------------------------------------
 *
 * client/loss_watch.c
 *		The loss watch: the nodes the backend holds, watched from the client
 *		library's threads so that a lost hold stops the statement that runs
 *		while it is lost (zklock.on_lock_loss = cancel).
 *
 * The layers above register each node they hold (ZkLossWatchRegister) and
 * withdraw it before they delete it themselves (ZkLossWatchRelease), so
 * that the backend's own release is never taken for a loss.  A hold is
 * lost when
 *
 * - the session expired (the session watcher's event), or the connection
 *	 has been lost for longer than the session timeout: the server has
 *	 expired the session then, whether or not the client library has heard
 *	 so (the rule ZkSessionExpireIfOutOfTouch applies at COMMIT); only
 *	 ephemeral nodes go with the session;
 * - its node was deleted by another client: the data watch on the node
 *	 fires, or the read that sets it finds the node gone;
 * - it is a lease whose ttl ran out (its deadline: the send time of the
 *	 request that granted or renewed it plus the ttl; a local clock, no
 *	 round trip).
 *
 * Watches cost a request each, so a node is watched only once it has been
 * held for ZK_LOSS_ARM_DELAY_MS: a lock taken and released within a
 * statement costs nothing more.  A node deleted before its watch is set is
 * found gone by the read that sets it, so a deletion is known within
 * ZK_LOSS_ARM_DELAY_MS plus a round trip.  (A node a waiter watched as its
 * own keeps that watch too; the two do not interfere.)
 *
 * Revocation.  The watch is a getData watch, so it also fires when another
 * client writes the node's data, and each read that sets it returns the
 * data.  Data that is exactly Curator's revocation marker (zk_revoke, or
 * Curator's Revoker.attemptRevoke) records a request on the node, which
 * the backend shows (ZkLossWatchNode); any other data written
 * by a stranger only sets the watch again.  With zklock.on_revoke =
 * release the watchdog then deletes the node itself, and once ZooKeeper
 * has deleted it the hold is lost as ZK_LOSS_REVOKED: from there on it is
 * a loss like any other (stopped per zklock.on_lock_loss, refused at
 * COMMIT and by zk_fence).  The hold is never reported gone before its
 * node is: a delete that fails is sent again.
 *
 * With zklock.on_lock_loss = error the watch finds losses all the same,
 * and the holds layer reports them at the next call on the lock or at
 * COMMIT; only the cancel is not sent.
 *
 * Threads.  A watchdog thread (client/watchdog.c, started with the first
 * node registered, with every signal blocked) sets the watches, runs the
 * lease deadlines and the out-of-touch rule; the library's completion
 * thread runs the watcher and the completions (client/watchdog.c too).
 * They follow client/bridge.c's thread rules: plain memory under the loss
 * watch's own mutex (ZkWatch.mutex, client/held_node.h), the thread-safe
 * client library, and kill(); no PostgreSQL call, no PostgreSQL memory,
 * shared or not.  The only lock order is that mutex, then the bridge's.
 * This file is the backend's side; client/held_node.c changes a record
 * under the mutex for either side.
 *
 * The stop, a protocol between the client threads and the backend.  Every
 * field it names lives under ZkWatch.mutex, so it needs no barrier of its
 * own: the mutex orders each side's store before its load.
 *
 *	 T1  A client thread that finds a hold lost marks it lost; then, if
 *		 zklock.on_lock_loss is cancel, the statement is armed and no
 *		 cancel was sent since it was armed, it sets cancel_sent, keeps the
 *		 lost node as the cancel's cause, and sends SIGINT to the backend,
 *		 as pg_cancel_backend() does.  All of it in one hold of the mutex.
 *	 B1  The backend arms the outermost part of each statement that may be
 *		 stopped (ZkLossWatchArm) and, in the same hold of the mutex,
 *		 learns whether a loss no ERROR named is known: then it raises the
 *		 ERROR itself, at once.  T1 and B1 are ordered by the mutex: either
 *		 T1 came first and B1 sees the loss, or B1 came first and T1 sees
 *		 the statement armed and cancels it.  No loss falls between them.
 *	 B2  When that part ends, however it ends, the backend disarms it
 *		 (ZkLossWatchDisarm) and takes cancel_sent, again in one hold of
 *		 the mutex; after it no cancel is sent.  If a cancel was sent, the
 *		 statement ends with the loss's ERROR: its cancel error (57014) is
 *		 replaced by it, or, when it ran on (a handler caught the cancel,
 *		 or it had not struck yet), the ERROR is raised there.
 *	 S   A SIGINT sent by T1 is pending on the process when kill()
 *		 returns, so before B2 can see cancel_sent; the backend's thread is
 *		 the only one that does not block signals, and it takes the signal
 *		 on its next return from the kernel, at the latest while it sends
 *		 the ERROR to the client.  A cancel that arrives once a statement
 *		 is over is dropped by PostgreSQL (between statements a cancel does
 *		 nothing).  So a cancel of ours never stops a statement it was not
 *		 sent for, and a user's own cancel is never taken back: the
 *		 backend never clears QueryCancelPending.
 *
 * A statement that is not armed (transaction control and DISCARD, which
 * report losses themselves and must stay possible, and everything between
 * statements) is never cancelled; the next armed part finds the loss at
 * B1, COMMIT at its own check.
 *
 * Record lifetime.  A ZkHeldNode is malloc'd; 'refs' counts its
 * registration and each watch or request that names it as context; a
 * withdrawn record still so named waits in ZkWatch.orphans until the last
 * one is done, or until the session's handle is closed.  Only the backend
 * withdraws a registration, so a registered node's constant fields
 * (znode, path, what) can be read by the backend without the mutex.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>

#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "base/node_formats.h"
#include "base/clock.h"
#include "client/held_node.h"
#include "client/loss_watch.h"

/*
 * The backend's map from a node's path to its record.  The key is a pointer
 * to the record's own copy of the path, which lives as long as the entry:
 * the record leaves the map before it can be freed.
 */
typedef struct ZkHeldMapEntry
{
	const char *znode;			/* key: the record's znode */
	ZkHeldNode *node;
} ZkHeldMapEntry;

/* backend only */
static HTAB *zk_held_map = NULL;

/* ------------------------------------------------------------------------
 * Backend thread.
 * ------------------------------------------------------------------------
 */

/*
 * ZkLossWatchForget
 *		The session's handle is closed (no client thread runs any more):
 *		free every record and forget every loss.  The holds layer has
 *		dropped or will drop its holds of the closed session; withdrawing a
 *		node no longer registered does nothing.
 */
void
ZkLossWatchForget(void)
{
	dlist_mutable_iter iter;

	pthread_mutex_lock(&ZkWatch.mutex);
	dlist_foreach_modify(iter, &ZkWatch.nodes)
	{
		ZkHeldNode *node = dlist_container(ZkHeldNode, link, iter.cur);

		/* the holds layer must still learn that an ERROR named this loss */
		if (node->reported && !node->taken &&
			(node->lost == ZK_LOSS_EXPIRED ||
			 node->lost == ZK_LOSS_OUT_OF_TOUCH))
			ZkWatch.session_reported = true;
		dlist_delete(&node->link);
		free(node);
	}
	dlist_foreach_modify(iter, &ZkWatch.orphans)
	{
		ZkHeldNode *node = dlist_container(ZkHeldNode, link, iter.cur);

		dlist_delete(&node->link);
		free(node);
	}
	dlist_init(&ZkWatch.to_arm);
	dlist_init(&ZkWatch.deadlines);
	ZkWatch.nlost = 0;
	ZkWatch.cause = NULL;			/* freed with the rest */
	ZkWatch.start_failed = false;
	pthread_mutex_unlock(&ZkWatch.mutex);

	if (zk_held_map != NULL)
	{
		hash_destroy(zk_held_map);
		zk_held_map = NULL;
	}
}

/*
 * ZkLossWatchSetCancel
 *		zklock.on_lock_loss changed (its assign hook: never raises).
 */
void
ZkLossWatchSetCancel(bool cancel)
{
	pthread_mutex_lock(&ZkWatch.mutex);
	ZkWatch.cancel = cancel;
	pthread_mutex_unlock(&ZkWatch.mutex);
}

/*
 * ZkLossWatchSetRevoke
 *		zklock.on_revoke changed (its assign hook: never raises).  Set to
 *		release, it applies to the revocations already asked too.
 */
void
ZkLossWatchSetRevoke(bool release)
{
	dlist_iter	iter;

	pthread_mutex_lock(&ZkWatch.mutex);
	ZkWatch.revoke_release = release;
	if (release)
	{
		dlist_foreach(iter, &ZkWatch.nodes)
		{
			ZkHeldNode *node = dlist_container(ZkHeldNode, link, iter.cur);

			if (node->revoke_requested)
				ZkHeldRevokeLaterLocked(node);
		}
	}
	pthread_mutex_unlock(&ZkWatch.mutex);
}

/*
 * zk_held_key_hash, zk_held_key_match
 *		The map's hash and comparison of its keys, pointers to paths.
 */
static uint32
zk_held_key_hash(const void *key, Size keysize)
{
	const char *znode = *(const char *const *) key;

	return hash_bytes((const unsigned char *) znode, (int) strlen(znode));
}

static int
zk_held_key_match(const void *key1, const void *key2, Size keysize)
{
	return strcmp(*(const char *const *) key1, *(const char *const *) key2);
}

/*
 * zk_held_lookup
 *		The registered record of a node, or NULL; with 'unlink', taken off
 *		the backend's map.
 */
static ZkHeldNode *
zk_held_lookup(const char *znode, bool unlink)
{
	ZkHeldMapEntry *entry;
	ZkHeldNode *node;

	if (zk_held_map == NULL)
		return NULL;
	entry = hash_search(zk_held_map, &znode, HASH_FIND, NULL);
	if (entry == NULL)
		return NULL;
	node = entry->node;
	if (unlink)
		hash_search(zk_held_map, &znode, HASH_REMOVE, NULL);
	return node;
}

/*
 * zk_held_map_enter
 *		Put a new record on the backend's map; out of memory, free it and
 *		raise the ERROR.
 */
static void
zk_held_map_enter(ZkHeldNode *node)
{
	const char *key = node->znode;

	PG_TRY();
	{
		ZkHeldMapEntry *entry = hash_search(zk_held_map, &key, HASH_ENTER,
											NULL);

		entry->node = node;
	}
	PG_CATCH();
	{
		free(node);
		PG_RE_THROW();
	}
	PG_END_TRY();
}

/*
 * ZkLossWatchRegister
 *		The backend holds 'znode' (its lock path 'path'; 'what' a static
 *		string naming the hold, as "exclusive lock"): watch for its loss.
 *		'deadline' (monotonic ms, or 0) is when a lease's ttl runs out; a
 *		node registered again (a renewed lease) gets the new deadline.
 *		Raises an ERROR only out of memory, having registered nothing.
 */
void
ZkLossWatchRegister(const char *znode, const char *path, const char *what,
					int64 deadline)
{
	size_t		zlen = strlen(znode);
	size_t		plen = strlen(path);
	ZkHeldNode *node;
	bool		start;
	bool		wake;

	/* only a lease is registered again (renewed): a lock's node is new */
	node = zk_held_lookup(znode, false);
	if (node != NULL)
	{
		pthread_mutex_lock(&ZkWatch.mutex);
		if (node->lost == ZK_LOSS_NONE && deadline != 0)
		{
			if (node->deadline == 0)
				dlist_push_tail(&ZkWatch.deadlines, &node->deadline_link);
			node->deadline = deadline;
		}
		pthread_mutex_unlock(&ZkWatch.mutex);
		return;
	}

	if (zk_held_map == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(const char *);
		ctl.entrysize = sizeof(ZkHeldMapEntry);
		ctl.hash = zk_held_key_hash;
		ctl.match = zk_held_key_match;
		ctl.hcxt = TopMemoryContext;
		zk_held_map = hash_create("zklock held nodes", 64, &ctl,
								  HASH_ELEM | HASH_FUNCTION | HASH_COMPARE |
								  HASH_CONTEXT);
	}
	node = malloc(offsetof(ZkHeldNode, znode) + zlen + 1 + plen + 1);
	if (node == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	memset(node, 0, offsetof(ZkHeldNode, znode));
	memcpy(node->znode, znode, zlen + 1);
	node->path = node->znode + zlen + 1;
	memcpy(node->path, path, plen + 1);
	node->what = what;
	node->refs = 1;
	node->deadline = deadline;
	zk_held_map_enter(node);

	pthread_mutex_lock(&ZkWatch.mutex);
	dlist_push_tail(&ZkWatch.nodes, &node->link);
	ZkHeldArmLaterLocked(node, ZkNowMs() + ZK_LOSS_ARM_DELAY_MS);
	if (deadline != 0)
		dlist_push_tail(&ZkWatch.deadlines, &node->deadline_link);
	start = !ZkWatch.running && !ZkWatch.start_failed;
	/* a sleeping watchdog is woken only if it would sleep past this node */
	wake = ZkWatch.running &&
		(ZkWatch.wake_at > node->arm_at ||
		 (deadline != 0 && ZkWatch.wake_at > deadline));
	if (wake)
		pthread_cond_signal(&ZkWatch.cond);
	pthread_mutex_unlock(&ZkWatch.mutex);
	if (start)
		ZkWatchdogStart();
}

/*
 * ZkLossWatchRelease
 *		The backend no longer holds 'znode' (it is about to delete it, or
 *		knows it lost): stop watching it.  Does nothing for a node that is
 *		not registered.  Never raises an ERROR, allocates nothing.
 */
void
ZkLossWatchRelease(const char *znode)
{
	ZkHeldNode *node = zk_held_lookup(znode, true);

	if (node == NULL)
		return;
	pthread_mutex_lock(&ZkWatch.mutex);
	node->released = true;
	dlist_delete(&node->link);
	if (node->to_arm)
		dlist_delete(&node->arm_link);
	if (node->deadline != 0)
		dlist_delete(&node->deadline_link);
	if (node->lost != ZK_LOSS_NONE && !node->taken)
		ZkWatch.nlost--;
	/* a watch or a request may still name it: it waits for them */
	dlist_push_tail(&ZkWatch.orphans, &node->link);
	ZkHeldUnrefLocked(node);
	pthread_mutex_unlock(&ZkWatch.mutex);
}

/*
 * zk_cause_drop_locked
 *		Forget the node the last cancel was sent for.
 */
static void
zk_cause_drop_locked(void)
{
	if (ZkWatch.cause != NULL)
		ZkHeldUnrefLocked(ZkWatch.cause);
	ZkWatch.cause = NULL;
}

/*
 * ZkLossWatchArm
 *		The outermost part of a statement that a loss stops begins (B1 of
 *		the protocol in the file's header): from now on a loss cancels it.
 *		Returns whether a loss is known that the holds layer has not taken
 *		yet; the caller then raises the ERROR of those no ERROR named.
 *		Never raises, allocates nothing.
 */
bool
ZkLossWatchArm(void)
{
	bool		pending;

	pthread_mutex_lock(&ZkWatch.mutex);
	ZkWatch.armed = true;
	ZkWatch.cancel_sent = false;
	zk_cause_drop_locked();
	pending = ZkWatch.nlost > 0 || ZkWatch.session_reported;
	pthread_mutex_unlock(&ZkWatch.mutex);
	return pending;
}

/*
 * ZkLossWatchDisarm
 *		That part ended, or failed (B2): no cancel is sent any more.
 *		Returns whether one was sent while it was armed: the statement must
 *		then end with the loss's ERROR.  Never raises, allocates nothing.
 */
bool
ZkLossWatchDisarm(void)
{
	bool		sent;

	pthread_mutex_lock(&ZkWatch.mutex);
	ZkWatch.armed = false;
	sent = ZkWatch.cancel_sent;
	ZkWatch.cancel_sent = false;
	pthread_mutex_unlock(&ZkWatch.mutex);
	return sent;
}

/*
 * ZkLossWatchPending
 *		Is a loss known that the holds layer has not taken yet?
 */
bool
ZkLossWatchPending(void)
{
	bool		pending;

	pthread_mutex_lock(&ZkWatch.mutex);
	pending = ZkWatch.nlost > 0 || ZkWatch.session_reported;
	pthread_mutex_unlock(&ZkWatch.mutex);
	return pending;
}

/*
 * ZkLossWatchDescribe
 *		The losses no ERROR named yet, for the ERROR that names them:
 *		returns how many nodes were lost (0: none), and the first one's kind,
 *		what it was (untranslated), its lock path and node (palloc'd).  With
 *		'cause', when every loss was named already (a zklock call of the
 *		statement raised it, and a handler caught that), the node the last
 *		cancel was sent for.
 */
int
ZkLossWatchDescribe(bool cause, ZkLossKind *kind, const char **what,
					char **path, char **znode)
{
	ZkHeldNode *first = NULL;
	int			n = 0;
	dlist_iter	iter;

	pthread_mutex_lock(&ZkWatch.mutex);
	dlist_foreach(iter, &ZkWatch.nodes)
	{
		ZkHeldNode *node = dlist_container(ZkHeldNode, link, iter.cur);

		if (node->lost == ZK_LOSS_NONE || node->reported)
			continue;
		if (first == NULL)
			first = node;
		n++;
	}
	if (n == 0 && cause && ZkWatch.cause != NULL)
	{
		first = ZkWatch.cause;
		n = 1;
	}
	/* its constant fields stay: only the backend withdraws or unrefs it */
	if (first != NULL)
		*kind = first->lost;
	pthread_mutex_unlock(&ZkWatch.mutex);
	if (n == 0)
		return 0;
	*what = first->what;
	*path = pstrdup(first->path);
	*znode = pstrdup(first->znode);
	return n;
}

/*
 * ZkLossWatchNode
 *		What the watch knows of 'znode': whether it is registered, whether
 *		its data watch is set at the server (then its deletion is noted
 *		before the answer to any request sent after this call, a sync say,
 *		reaches the backend), whether a revocation was asked of it (its data
 *		was found to be the revocation marker), and how it was lost
 *		(ZK_LOSS_NONE: it was not).  A node not registered has all false.
 */
ZkHeldState
ZkLossWatchNode(const char *znode)
{
	ZkHeldNode *node = zk_held_lookup(znode, false);
	ZkHeldState state = {false, false, false, ZK_LOSS_NONE};

	if (node == NULL)
		return state;
	pthread_mutex_lock(&ZkWatch.mutex);
	state.registered = true;
	state.watching = node->watching;
	state.revoke_requested = node->revoke_requested;
	state.lost = node->lost;
	pthread_mutex_unlock(&ZkWatch.mutex);
	return state;
}

/*
 * ZkLossWatchMarkReported
 *		The losses known so far were named in an ERROR (the SQL layer's, or
 *		one the holds layer raised): the holds layer forgets them quietly.
 */
void
ZkLossWatchMarkReported(void)
{
	dlist_iter	iter;

	pthread_mutex_lock(&ZkWatch.mutex);
	dlist_foreach(iter, &ZkWatch.nodes)
	{
		ZkHeldNode *node = dlist_container(ZkHeldNode, link, iter.cur);

		if (node->lost != ZK_LOSS_NONE)
			node->reported = true;
	}
	pthread_mutex_unlock(&ZkWatch.mutex);
}

/*
 * ZkLossWatchTake
 *		The losses the holds layer has not taken yet: the palloc'd paths of
 *		nodes deleted or run out, each with whether an ERROR named it
 *		already; and in *session, whether the session was lost with the
 *		holds (ZK_SESSION_LOSS_NONE, _UNREPORTED or _REPORTED: an ERROR
 *		named it, even if the session has been closed since).  They are
 *		taken: the next call returns only newer ones.  Returns how many
 *		nodes.
 */
int
ZkLossWatchTake(char ***znodes, bool **reported, ZkSessionLoss *session)
{
	ZkHeldNode **taken;
	int			n;
	int			got = 0;
	dlist_iter	iter;

	pthread_mutex_lock(&ZkWatch.mutex);
	n = ZkWatch.nlost;
	*session = ZkWatch.session_reported ? ZK_SESSION_LOSS_REPORTED :
		ZK_SESSION_LOSS_NONE;
	ZkWatch.session_reported = false;
	pthread_mutex_unlock(&ZkWatch.mutex);

	taken = palloc(sizeof(ZkHeldNode *) * Max(n, 1));
	*znodes = palloc(sizeof(char *) * Max(n, 1));
	*reported = palloc(sizeof(bool) * Max(n, 1));

	/* the first n: losses found meanwhile are left for the next call */
	pthread_mutex_lock(&ZkWatch.mutex);
	dlist_foreach(iter, &ZkWatch.nodes)
	{
		ZkHeldNode *node = dlist_container(ZkHeldNode, link, iter.cur);

		if (node->lost == ZK_LOSS_NONE || node->taken || n == 0)
			continue;
		node->taken = true;
		ZkWatch.nlost--;
		n--;
		if (node->lost == ZK_LOSS_EXPIRED ||
			node->lost == ZK_LOSS_OUT_OF_TOUCH)
		{
			if (node->reported)
				*session = ZK_SESSION_LOSS_REPORTED;
			else if (*session == ZK_SESSION_LOSS_NONE)
				*session = ZK_SESSION_LOSS_UNREPORTED;
			continue;
		}
		(*reported)[got] = node->reported;
		taken[got++] = node;
	}
	pthread_mutex_unlock(&ZkWatch.mutex);

	for (int i = 0; i < got; i++)
		(*znodes)[i] = pstrdup(taken[i]->znode);
	pfree(taken);
	return got;
}
