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
 * the backend shows (ZkLossWatchRevokeRequested); any other data written
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
 * Threads.  A watchdog thread of this file (started with the first node
 * registered, with every signal blocked) sets the watches, runs the lease
 * deadlines and the out-of-touch rule; the library's completion thread
 * runs the watcher and the completions.  They follow
 * client/bridge.c's thread rules: plain memory under this file's own
 * mutex, the thread-safe client library, and kill(); no PostgreSQL call,
 * no PostgreSQL memory, shared or not.  The only lock order is this
 * file's mutex, then the bridge's.
 *
 * The stop, a protocol between the client threads and the backend.  Every
 * field it names lives under watch.mutex, so it needs no barrier of its
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
 * withdrawn record still so named waits in watch.orphans until the last
 * one is done, or until the session's handle is closed.  Only the backend
 * withdraws a registration, so a registered node's constant fields
 * (znode, path, what) can be read by the backend without the mutex.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "common/hashfn.h"
#include "lib/ilist.h"
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "base/node_formats.h"
#include "client/bridge.h"
#include "client/loss_watch.h"
#include "base/clock.h"

/* how long a node is held before its deletion watch is set */
#define ZK_LOSS_ARM_DELAY_MS	250

/* watches set by one pass of the watchdog before it looks again */
#define ZK_LOSS_ARM_BATCH		64

/* One held node. */
typedef struct ZkHeldNode
{
	/* under watch.mutex */
	dlist_node	link;			/* in watch.nodes while registered */
	dlist_node	arm_link;		/* in watch.to_arm while its watch is due */
	dlist_node	deadline_link;	/* in watch.deadlines: a lease */
	bool		to_arm;
	bool		watching;		/* its data watch is set at the server */
	bool		revoke_requested;	/* its data became the revocation marker */
	bool		revoking;		/* to be deleted for that: its arm sends the
								 * delete instead of the watch */
	int			refs;			/* registration + watches and requests */
	bool		released;		/* the backend withdrew it */
	ZkLossKind	lost;			/* ZK_LOSS_NONE while held */
	bool		reported;		/* the SQL layer named the loss */
	bool		taken;			/* the holds layer took the loss */
	int64		arm_at;			/* monotonic ms: set its watch then */
	int64		deadline;		/* monotonic ms: a lease runs out; 0: none */
	/* backend only */
	struct ZkHeldNode *next_same_hash;
	uint64		hash;
	/* constant */
	const char *what;			/* static: "exclusive lock", "lease", ... */
	char	   *path;			/* the user's lock path, after znode */
	char		znode[FLEXIBLE_ARRAY_MEMBER];
} ZkHeldNode;

/* The backend's map from a node's path to its record: one chain per hash. */
typedef struct ZkHeldMapEntry
{
	uint64		hash;			/* key */
	ZkHeldNode *first;
} ZkHeldMapEntry;

static struct
{
	pthread_mutex_t mutex;
	pthread_cond_t cond;		/* wakes the watchdog */
	pthread_t	thread;
	bool		running;		/* the watchdog runs */
	bool		start_failed;	/* it could not be started: no new try
								 * (nor WARNING) until the session ends */
	bool		stop;			/* asks it to end */
	int64		wake_at;		/* when it wakes next; INT64_MAX: waits */
	bool		cancel;			/* zklock.on_lock_loss = cancel */
	bool		revoke_release; /* zklock.on_revoke = release */
	bool		armed;			/* a statement runs that a loss stops */
	pid_t		pid;			/* the backend's */
	dlist_head	nodes;			/* registered ZkHeldNodes */
	dlist_head	to_arm;			/* those whose watch is due, by arm_at */
	dlist_head	deadlines;		/* those that are leases */
	dlist_head	orphans;		/* withdrawn, still named by a watch */
	int			nlost;			/* lost, not taken by the holds layer */
	bool		session_reported;	/* a closed session's loss, named by an
									 * ERROR, not taken yet */
	bool		cancel_sent;	/* a SIGINT was sent since it was armed */
	ZkHeldNode *cause;			/* the lost node the last SIGINT was sent
								 * for (a reference), until the next arm */
}			watch =
{
	.mutex = PTHREAD_MUTEX_INITIALIZER,
	.wake_at = PG_INT64_MAX,
	.nodes = DLIST_STATIC_INIT(watch.nodes),
	.to_arm = DLIST_STATIC_INIT(watch.to_arm),
	.deadlines = DLIST_STATIC_INIT(watch.deadlines),
	.orphans = DLIST_STATIC_INIT(watch.orphans),
};

/* backend only */
static HTAB *zk_held_map = NULL;
static bool zk_cond_ready = false;

static void *zk_watchdog_main(void *arg);
static void zk_loss_watcher(zhandle_t *zh, int type, int state,
							const char *path, void *ctx);
static void zk_loss_get_done(int rc, const char *value, int value_len,
							 const struct Stat *stat, const void *data);
static void zk_revoke_delete_done(int rc, const void *data);

/* ------------------------------------------------------------------------
 * Either thread, with watch.mutex held.
 * ------------------------------------------------------------------------
 */

/*
 * zk_node_unref_locked
 *		Drop one reference; the last frees the record (it was withdrawn
 *		already: the registration is a reference).
 */
static void
zk_node_unref_locked(ZkHeldNode *node)
{
	if (--node->refs > 0)
		return;
	dlist_delete(&node->link);	/* from watch.orphans */
	free(node);
}

/*
 * zk_node_arm_later_locked
 *		Queue a registered node's watch to be set at 'at'.
 */
static void
zk_node_arm_later_locked(ZkHeldNode *node, int64 at)
{
	if (node->released || node->lost != ZK_LOSS_NONE || node->to_arm)
		return;
	node->arm_at = at;
	node->to_arm = true;
	/* 'at' is now or later than every queued time: keep the queue ordered */
	if (at <= ZkNowMs())
		dlist_push_head(&watch.to_arm, &node->arm_link);
	else
		dlist_push_tail(&watch.to_arm, &node->arm_link);
}

/*
 * zk_node_lost_locked
 *		A registered node is lost, for 'kind'.  Returns false if it was
 *		withdrawn or known lost already.
 */
static bool
zk_node_lost_locked(ZkHeldNode *node, ZkLossKind kind)
{
	if (node->released || node->lost != ZK_LOSS_NONE)
		return false;
	node->lost = kind;
	if (node->to_arm)
	{
		dlist_delete(&node->arm_link);
		node->to_arm = false;
	}
	watch.nlost++;
	return true;
}

/*
 * zk_stop_holder_locked
 *		'node' was just lost (T1 of the protocol in the file's header): in
 *		cancel mode, cancel the armed statement as pg_cancel_backend() does,
 *		once for as long as it stays armed.
 */
static void
zk_stop_holder_locked(ZkHeldNode *node)
{
	if (!watch.cancel || !watch.armed || watch.cancel_sent || watch.pid == 0)
		return;
	watch.cancel_sent = true;
	if (watch.cause == NULL)
	{
		watch.cause = node;
		node->refs++;
	}
	(void) kill(watch.pid, SIGINT);
}

/*
 * zk_session_lost_locked
 *		The session is gone: every registered ephemeral node went with it
 *		(a lease, a node with a ttl, outlives the session).
 */
static void
zk_session_lost_locked(ZkLossKind kind)
{
	dlist_iter	iter;
	ZkHeldNode *first = NULL;

	dlist_foreach(iter, &watch.nodes)
	{
		ZkHeldNode *node = dlist_container(ZkHeldNode, link, iter.cur);

		if (node->deadline == 0 && zk_node_lost_locked(node, kind) &&
			first == NULL)
			first = node;
	}
	if (first != NULL)
		zk_stop_holder_locked(first);
}

/* ------------------------------------------------------------------------
 * Client threads: the watcher, the completions, session events and
 * the watchdog.
 * ------------------------------------------------------------------------
 */

/*
 * zk_revoke_later_locked
 *		A revocation was asked of 'node' and zklock.on_revoke is release:
 *		have the watchdog delete it.
 */
static void
zk_revoke_later_locked(ZkHeldNode *node)
{
	if (node->revoking || node->released || node->lost != ZK_LOSS_NONE)
		return;
	node->revoking = true;
	if (node->to_arm)
	{
		dlist_delete(&node->arm_link);
		node->to_arm = false;
	}
	zk_node_arm_later_locked(node, ZkNowMs());
	if (watch.running)
		pthread_cond_signal(&watch.cond);
}

/*
 * zk_loss_watcher
 *		The data watch on a held node fired.  Session events reach every
 *		watcher and change nothing here; a node event spent the watch: a
 *		deletion is a loss (unless the backend withdrew the node first;
 *		ZK_LOSS_REVOKED if it was our own delete for a revocation), any
 *		other event needs the watch set again.
 */
static void
zk_loss_watcher(zhandle_t *zh, int type, int state, const char *path,
				void *ctx)
{
	ZkHeldNode *node = (ZkHeldNode *) ctx;

	if (type == ZOO_SESSION_EVENT || node == NULL)
		return;
	pthread_mutex_lock(&watch.mutex);
	node->watching = false;
	if (type == ZOO_DELETED_EVENT)
	{
		if (zk_node_lost_locked(node, node->revoking ? ZK_LOSS_REVOKED :
								ZK_LOSS_DELETED))
			zk_stop_holder_locked(node);
	}
	else
	{
		zk_node_arm_later_locked(node, ZkNowMs());
		pthread_cond_signal(&watch.cond);
	}
	zk_node_unref_locked(node);
	pthread_mutex_unlock(&watch.mutex);
}

/*
 * zk_loss_get_done
 *		The answer to the read that set a node's watch.  ZOK: the watch is
 *		set (it keeps the reference), and the data says whether a
 *		revocation is asked.  ZNONODE: the node is gone already (no watch is
 *		left for a read that found nothing).  Anything else: no watch was
 *		set; try again.
 */
static void
zk_loss_get_done(int rc, const char *value, int value_len,
				 const struct Stat *stat, const void *data)
{
	ZkHeldNode *node = (ZkHeldNode *) data;

	pthread_mutex_lock(&watch.mutex);
	if (rc == ZOK)
	{
		node->watching = true;
		if (ZkIsRevokeMarker(value, value_len))
		{
			node->revoke_requested = true;
			if (watch.revoke_release)
				zk_revoke_later_locked(node);
		}
	}
	else if (rc == ZNONODE)
	{
		if (zk_node_lost_locked(node, node->revoking ? ZK_LOSS_REVOKED :
								ZK_LOSS_DELETED))
			zk_stop_holder_locked(node);
		zk_node_unref_locked(node);
	}
	else
	{
		zk_node_arm_later_locked(node, ZkNowMs() + ZK_LOSS_ARM_DELAY_MS);
		pthread_cond_signal(&watch.cond);
		zk_node_unref_locked(node);
	}
	pthread_mutex_unlock(&watch.mutex);
}

/*
 * zk_revoke_delete_done
 *		The answer to the delete of a revoked node: once ZooKeeper has no
 *		node (ZOK, or ZNONODE: deleted by someone else meanwhile), the hold
 *		is lost to the revocation (the watch's deletion event, which comes
 *		first, may have said so already).  Anything else: send it again.
 */
static void
zk_revoke_delete_done(int rc, const void *data)
{
	ZkHeldNode *node = (ZkHeldNode *) data;

	pthread_mutex_lock(&watch.mutex);
	if (rc == ZOK || rc == ZNONODE)
	{
		if (zk_node_lost_locked(node, ZK_LOSS_REVOKED))
			zk_stop_holder_locked(node);
	}
	else
	{
		zk_node_arm_later_locked(node, ZkNowMs() + ZK_LOSS_ARM_DELAY_MS);
		pthread_cond_signal(&watch.cond);
	}
	zk_node_unref_locked(node);
	pthread_mutex_unlock(&watch.mutex);
}

/*
 * ZkLossWatchSessionEvent
 *		A session event (the session's watcher passes it on): an expiry, or a
 *		refused authentication, loses every ephemeral hold; any change of
 *		state makes the watchdog look again (it sets no watch while
 *		disconnected, and counts the time out of touch).  Runs on the
 *		completion thread.
 */
void
ZkLossWatchSessionEvent(int state)
{
	pthread_mutex_lock(&watch.mutex);
	if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE)
		zk_session_lost_locked(ZK_LOSS_EXPIRED);
	if (watch.running)
		pthread_cond_signal(&watch.cond);
	pthread_mutex_unlock(&watch.mutex);
}

/*
 * zk_watchdog_pass_locked
 *		One look of the watchdog at time 'now': the out-of-touch rule, the
 *		leases' deadlines, and the watches due (up to ZK_LOSS_ARM_BATCH,
 *		each with a reference, into 'batch', for the caller to send without
 *		the mutex; 'deletes' says which are a revoked node's delete).  Returns when to look next (PG_INT64_MAX: when woken).
 *		(The session itself is counted as expired by the backend, at its
 *		next call, by the same rule: ZkSessionExpireIfOutOfTouch.)
 */
static int64
zk_watchdog_pass_locked(const ZkBridgeView *view, int timeout, int64 now,
						ZkHeldNode **batch, bool *deletes, int *nbatch)
{
	int64		next = PG_INT64_MAX;
	bool		connected = view->open && !view->ended &&
		view->state == ZOO_CONNECTED_STATE;
	dlist_iter	iter;
	ZkHeldNode *first = NULL;

	*nbatch = 0;
	if (dlist_is_empty(&watch.nodes))
		return next;

	/* out of touch for longer than the session timeout */
	if (view->open && !view->ended && view->disconnected_at != 0 && timeout > 0)
	{
		int64		give_up_at = view->disconnected_at + timeout;

		if (now >= give_up_at)
			zk_session_lost_locked(ZK_LOSS_OUT_OF_TOUCH);
		else
			next = Min(next, give_up_at);
	}

	/* leases whose ttl ran out */
	dlist_foreach(iter, &watch.deadlines)
	{
		ZkHeldNode *node = dlist_container(ZkHeldNode, deadline_link, iter.cur);

		if (node->lost != ZK_LOSS_NONE)
			continue;
		if (now >= node->deadline)
		{
			if (zk_node_lost_locked(node, ZK_LOSS_TTL) && first == NULL)
				first = node;
		}
		else
			next = Min(next, node->deadline);
	}
	if (first != NULL)
		zk_stop_holder_locked(first);

	/* watches due, while connected */
	if (connected)
	{
		while (!dlist_is_empty(&watch.to_arm) && *nbatch < ZK_LOSS_ARM_BATCH)
		{
			ZkHeldNode *node = dlist_head_element(ZkHeldNode, arm_link,
												  &watch.to_arm);

			if (node->arm_at > now)
				break;
			dlist_delete(&node->arm_link);
			node->to_arm = false;
			node->refs++;
			deletes[*nbatch] = node->revoking;
			batch[(*nbatch)++] = node;
		}
		if (!dlist_is_empty(&watch.to_arm))
			next = Min(next, dlist_head_element(ZkHeldNode, arm_link,
												&watch.to_arm)->arm_at);
	}
	return next;
}

/*
 * zk_watchdog_main
 *		The watchdog thread: look, send the watches due, sleep until the next
 *		thing to do or until woken, until asked to stop.
 */
static void *
zk_watchdog_main(void *arg)
{
	ZkHeldNode *batch[ZK_LOSS_ARM_BATCH];
	bool		deletes[ZK_LOSS_ARM_BATCH];

	pthread_mutex_lock(&watch.mutex);
	while (!watch.stop)
	{
		ZkBridgeView view;
		zhandle_t  *zh;
		int			timeout;
		int			nbatch;
		int64		next;

		/* the bridge's mutex is taken after this file's, never before */
		ZkBridgeLook(NULL, &view);
		zh = ZkBridgeJobHandle();
		timeout = zh ? zoo_recv_timeout(zh) : 0;
		next = zk_watchdog_pass_locked(&view, timeout, ZkNowMs(),
									   batch, deletes, &nbatch);

		if (nbatch > 0)
		{
			pthread_mutex_unlock(&watch.mutex);
			for (int i = 0; i < nbatch; i++)
			{
				ZkHeldNode *node = batch[i];
				int			rc = ZINVALIDSTATE;

				if (zh != NULL && deletes[i])
					rc = zoo_adelete(zh, node->znode, -1,
									 zk_revoke_delete_done, node);
				else if (zh != NULL)
					rc = zoo_awget(zh, node->znode, zk_loss_watcher, node,
								   zk_loss_get_done, node);

				if (rc != ZOK)
				{
					pthread_mutex_lock(&watch.mutex);
					zk_node_arm_later_locked(batch[i],
											 ZkNowMs() + ZK_LOSS_ARM_DELAY_MS);
					zk_node_unref_locked(batch[i]);
					pthread_mutex_unlock(&watch.mutex);
				}
			}
			pthread_mutex_lock(&watch.mutex);
			continue;
		}

		watch.wake_at = next;
		if (next == PG_INT64_MAX)
			pthread_cond_wait(&watch.cond, &watch.mutex);
		else
		{
			struct timespec ts;

			ts.tv_sec = next / 1000;
			ts.tv_nsec = (next % 1000) * 1000000;
			pthread_cond_timedwait(&watch.cond, &watch.mutex, &ts);
		}
		watch.wake_at = PG_INT64_MAX;
	}
	pthread_mutex_unlock(&watch.mutex);
	return arg;
}

/* ------------------------------------------------------------------------
 * Backend thread.
 * ------------------------------------------------------------------------
 */

/*
 * zk_watchdog_start
 *		Start the watchdog, with every signal blocked so that it never runs
 *		PostgreSQL's handlers.  Its condition variable waits on the
 *		monotonic clock, as ZkNowMs() reads it.  Without a watchdog (the
 *		thread could not be made), losses are still found at the next call
 *		and at COMMIT, as with zklock.on_lock_loss = error.
 */
static void
zk_watchdog_start(void)
{
	sigset_t	all_signals;
	sigset_t	saved_signals;
	int			rc;

	if (!zk_cond_ready)
	{
		pthread_condattr_t attr;

		if (pthread_condattr_init(&attr) != 0)
			return;
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		rc = pthread_cond_init(&watch.cond, &attr);
		pthread_condattr_destroy(&attr);
		if (rc != 0)
			return;
		zk_cond_ready = true;
	}

	pthread_mutex_lock(&watch.mutex);
	watch.stop = false;
	watch.pid = MyProcPid;
	pthread_mutex_unlock(&watch.mutex);

	sigfillset(&all_signals);
	pthread_sigmask(SIG_SETMASK, &all_signals, &saved_signals);
	rc = pthread_create(&watch.thread, NULL, zk_watchdog_main, NULL);
	pthread_sigmask(SIG_SETMASK, &saved_signals, NULL);

	pthread_mutex_lock(&watch.mutex);
	watch.running = (rc == 0);
	watch.start_failed = (rc != 0);
	pthread_mutex_unlock(&watch.mutex);
	if (rc != 0)
		ereport(WARNING,
				(errmsg("could not start zklock's lock-loss watchdog thread: %s",
						strerror(rc)),
				 errdetail("A lost lock is reported at the next zklock call or COMMIT instead of cancelling the running statement.")));
}

/*
 * ZkLossWatchStop
 *		Stop the watchdog (before the session's handle is closed, so that it
 *		sends nothing on a closing handle).
 */
void
ZkLossWatchStop(void)
{
	bool		running;

	pthread_mutex_lock(&watch.mutex);
	running = watch.running;
	watch.stop = true;
	if (running)
		pthread_cond_signal(&watch.cond);
	pthread_mutex_unlock(&watch.mutex);
	if (running)
		pthread_join(watch.thread, NULL);
	pthread_mutex_lock(&watch.mutex);
	watch.running = false;
	pthread_mutex_unlock(&watch.mutex);
}

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

	pthread_mutex_lock(&watch.mutex);
	dlist_foreach_modify(iter, &watch.nodes)
	{
		ZkHeldNode *node = dlist_container(ZkHeldNode, link, iter.cur);

		/* the holds layer must still learn that an ERROR named this loss */
		if (node->reported && !node->taken &&
			(node->lost == ZK_LOSS_EXPIRED ||
			 node->lost == ZK_LOSS_OUT_OF_TOUCH))
			watch.session_reported = true;
		dlist_delete(&node->link);
		free(node);
	}
	dlist_foreach_modify(iter, &watch.orphans)
	{
		ZkHeldNode *node = dlist_container(ZkHeldNode, link, iter.cur);

		dlist_delete(&node->link);
		free(node);
	}
	dlist_init(&watch.to_arm);
	dlist_init(&watch.deadlines);
	watch.nlost = 0;
	watch.cause = NULL;			/* freed with the rest */
	watch.start_failed = false;
	pthread_mutex_unlock(&watch.mutex);

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
	pthread_mutex_lock(&watch.mutex);
	watch.cancel = cancel;
	pthread_mutex_unlock(&watch.mutex);
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

	pthread_mutex_lock(&watch.mutex);
	watch.revoke_release = release;
	if (release)
	{
		dlist_foreach(iter, &watch.nodes)
		{
			ZkHeldNode *node = dlist_container(ZkHeldNode, link, iter.cur);

			if (node->revoke_requested)
				zk_revoke_later_locked(node);
		}
	}
	pthread_mutex_unlock(&watch.mutex);
}

/*
 * zk_held_hash
 *		The map's hash of a node's path.
 */
static uint64
zk_held_hash(const char *znode, size_t len)
{
	return hash_bytes_extended((const unsigned char *) znode, (int) len, 0);
}

/*
 * zk_held_lookup
 *		The registered record of a node ('hash': zk_held_hash), or NULL;
 *		with 'unlink', taken off the backend's map.
 */
static ZkHeldNode *
zk_held_lookup(const char *znode, uint64 hash, bool unlink)
{
	ZkHeldMapEntry *entry;
	ZkHeldNode **prev;

	if (zk_held_map == NULL)
		return NULL;
	entry = hash_search(zk_held_map, &hash, HASH_FIND, NULL);
	if (entry == NULL)
		return NULL;
	for (prev = &entry->first; *prev != NULL; prev = &(*prev)->next_same_hash)
	{
		ZkHeldNode *node = *prev;

		if (strcmp(node->znode, znode) != 0)
			continue;
		if (unlink)
		{
			*prev = node->next_same_hash;
			if (entry->first == NULL)
				hash_search(zk_held_map, &hash, HASH_REMOVE, NULL);
		}
		return node;
	}
	return NULL;
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
	uint64		hash = zk_held_hash(znode, zlen);
	ZkHeldMapEntry *entry;
	ZkHeldNode *node;
	bool		found;
	bool		start;
	bool		wake;

	/* only a lease is registered again (renewed): a lock's node is new */
	node = deadline != 0 ? zk_held_lookup(znode, hash, false) : NULL;
	if (node != NULL)
	{
		pthread_mutex_lock(&watch.mutex);
		if (node->lost == ZK_LOSS_NONE)
		{
			if (node->deadline == 0)
				dlist_push_tail(&watch.deadlines, &node->deadline_link);
			node->deadline = deadline;
		}
		pthread_mutex_unlock(&watch.mutex);
		return;
	}

	if (zk_held_map == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(uint64);
		ctl.entrysize = sizeof(ZkHeldMapEntry);
		ctl.hcxt = TopMemoryContext;
		zk_held_map = hash_create("zklock held nodes", 64, &ctl,
								  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
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
	node->hash = hash;
	PG_TRY();
	{
		entry = hash_search(zk_held_map, &node->hash, HASH_ENTER, &found);
	}
	PG_CATCH();
	{
		free(node);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (!found)
		entry->first = NULL;
	node->next_same_hash = entry->first;
	entry->first = node;

	pthread_mutex_lock(&watch.mutex);
	dlist_push_tail(&watch.nodes, &node->link);
	zk_node_arm_later_locked(node, ZkNowMs() + ZK_LOSS_ARM_DELAY_MS);
	if (deadline != 0)
		dlist_push_tail(&watch.deadlines, &node->deadline_link);
	start = !watch.running && !watch.start_failed;
	/* a sleeping watchdog is woken only if it would sleep past this node */
	wake = watch.running &&
		(watch.wake_at > node->arm_at ||
		 (deadline != 0 && watch.wake_at > deadline));
	if (wake)
		pthread_cond_signal(&watch.cond);
	pthread_mutex_unlock(&watch.mutex);
	if (start)
		zk_watchdog_start();
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
	ZkHeldNode *node = zk_held_lookup(znode, zk_held_hash(znode, strlen(znode)),
									  true);

	if (node == NULL)
		return;
	pthread_mutex_lock(&watch.mutex);
	node->released = true;
	dlist_delete(&node->link);
	if (node->to_arm)
		dlist_delete(&node->arm_link);
	if (node->deadline != 0)
		dlist_delete(&node->deadline_link);
	if (node->lost != ZK_LOSS_NONE && !node->taken)
		watch.nlost--;
	/* a watch or a request may still name it: it waits for them */
	dlist_push_tail(&watch.orphans, &node->link);
	zk_node_unref_locked(node);
	pthread_mutex_unlock(&watch.mutex);
}

/*
 * zk_cause_drop_locked
 *		Forget the node the last cancel was sent for.
 */
static void
zk_cause_drop_locked(void)
{
	if (watch.cause != NULL)
		zk_node_unref_locked(watch.cause);
	watch.cause = NULL;
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

	pthread_mutex_lock(&watch.mutex);
	watch.armed = true;
	watch.cancel_sent = false;
	zk_cause_drop_locked();
	pending = watch.nlost > 0 || watch.session_reported;
	pthread_mutex_unlock(&watch.mutex);
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

	pthread_mutex_lock(&watch.mutex);
	watch.armed = false;
	sent = watch.cancel_sent;
	watch.cancel_sent = false;
	pthread_mutex_unlock(&watch.mutex);
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

	pthread_mutex_lock(&watch.mutex);
	pending = watch.nlost > 0 || watch.session_reported;
	pthread_mutex_unlock(&watch.mutex);
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

	pthread_mutex_lock(&watch.mutex);
	dlist_foreach(iter, &watch.nodes)
	{
		ZkHeldNode *node = dlist_container(ZkHeldNode, link, iter.cur);

		if (node->lost == ZK_LOSS_NONE || node->reported)
			continue;
		if (first == NULL)
			first = node;
		n++;
	}
	if (n == 0 && cause && watch.cause != NULL)
	{
		first = watch.cause;
		n = 1;
	}
	/* its constant fields stay: only the backend withdraws or unrefs it */
	if (first != NULL)
		*kind = first->lost;
	pthread_mutex_unlock(&watch.mutex);
	if (n == 0)
		return 0;
	*what = first->what;
	*path = pstrdup(first->path);
	*znode = pstrdup(first->znode);
	return n;
}

/*
 * ZkLossWatchWatching
 *		Is 'znode' registered and its data watch set at the server?  Then
 *		its deletion is noted before the answer to any request sent after
 *		this call (a sync, say) reaches the backend.
 */
bool
ZkLossWatchWatching(const char *znode)
{
	ZkHeldNode *node = zk_held_lookup(znode, zk_held_hash(znode, strlen(znode)),
									  false);
	bool		watching;

	if (node == NULL)
		return false;
	pthread_mutex_lock(&watch.mutex);
	watching = node->watching;
	pthread_mutex_unlock(&watch.mutex);
	return watching;
}

/*
 * ZkLossWatchRevokeRequested
 *		Has a revocation been asked of 'znode', a registered node (its data
 *		was found to be the revocation marker)?
 */
bool
ZkLossWatchRevokeRequested(const char *znode)
{
	ZkHeldNode *node = zk_held_lookup(znode, zk_held_hash(znode, strlen(znode)),
									  false);
	bool		requested;

	if (node == NULL)
		return false;
	pthread_mutex_lock(&watch.mutex);
	requested = node->revoke_requested;
	pthread_mutex_unlock(&watch.mutex);
	return requested;
}

/*
 * ZkLossWatchLossOf
 *		How a registered node was lost (ZK_LOSS_NONE: it was not, or it is
 *		not registered).
 */
ZkLossKind
ZkLossWatchLossOf(const char *znode)
{
	ZkHeldNode *node = zk_held_lookup(znode, zk_held_hash(znode, strlen(znode)),
									  false);
	ZkLossKind	kind;

	if (node == NULL)
		return ZK_LOSS_NONE;
	pthread_mutex_lock(&watch.mutex);
	kind = node->lost;
	pthread_mutex_unlock(&watch.mutex);
	return kind;
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

	pthread_mutex_lock(&watch.mutex);
	dlist_foreach(iter, &watch.nodes)
	{
		ZkHeldNode *node = dlist_container(ZkHeldNode, link, iter.cur);

		if (node->lost != ZK_LOSS_NONE)
			node->reported = true;
	}
	pthread_mutex_unlock(&watch.mutex);
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

	pthread_mutex_lock(&watch.mutex);
	n = watch.nlost;
	*session = watch.session_reported ? ZK_SESSION_LOSS_REPORTED :
		ZK_SESSION_LOSS_NONE;
	watch.session_reported = false;
	pthread_mutex_unlock(&watch.mutex);

	taken = palloc(sizeof(ZkHeldNode *) * Max(n, 1));
	*znodes = palloc(sizeof(char *) * Max(n, 1));
	*reported = palloc(sizeof(bool) * Max(n, 1));

	/* the first n: losses found meanwhile are left for the next call */
	pthread_mutex_lock(&watch.mutex);
	dlist_foreach(iter, &watch.nodes)
	{
		ZkHeldNode *node = dlist_container(ZkHeldNode, link, iter.cur);

		if (node->lost == ZK_LOSS_NONE || node->taken || n == 0)
			continue;
		node->taken = true;
		watch.nlost--;
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
	pthread_mutex_unlock(&watch.mutex);

	for (int i = 0; i < got; i++)
		(*znodes)[i] = pstrdup(taken[i]->znode);
	pfree(taken);
	return got;
}
