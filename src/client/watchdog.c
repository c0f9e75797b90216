/*-------------------------------------------------------------------------
 *
 * client/watchdog.c
 *		The loss watch's client-thread side: the watchdog thread that sets
 *		the watches on held nodes, runs the leases' deadlines and the
 *		out-of-touch rule, and deletes a revoked node; the watcher and the
 *		completions the client library runs for it; the session's events.
 *
 * What a loss is, the records and the stop protocol are described in
 * client/loss_watch.c.  Everything here runs on a thread that is not the
 * backend's (but ZkWatchdogStart and ZkLossWatchStop): plain memory
 * under ZkWatch.mutex, the thread-safe client library and kill(), as
 * client/bridge.c's thread rules say; no PostgreSQL call, no PostgreSQL
 * memory.  The only lock order is ZkWatch.mutex, then the bridge's.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>
#include <time.h>

#include "miscadmin.h"

#include "base/clock.h"
#include "base/node_formats.h"
#include "client/bridge.h"
#include "client/held_node.h"
#include "client/loss_watch.h"

/* watches set by one pass of the watchdog before it looks again */
#define ZK_LOSS_ARM_BATCH		64

static bool zk_cond_ready = false;

static void zk_loss_watcher(zhandle_t *zh, int type, int state,
							const char *path, void *ctx);
static void zk_loss_get_done(int rc, const char *value, int value_len,
							 const struct Stat *stat, const void *data);
static void zk_revoke_delete_done(int rc, const void *data);

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
	pthread_mutex_lock(&ZkWatch.mutex);
	node->watching = false;
	if (type == ZOO_DELETED_EVENT)
	{
		if (ZkHeldLostLocked(node, node->revoking ? ZK_LOSS_REVOKED :
								ZK_LOSS_DELETED))
			ZkHeldStopHolderLocked(node);
	}
	else
	{
		ZkHeldArmLaterLocked(node, ZkNowMs());
		pthread_cond_signal(&ZkWatch.cond);
	}
	ZkHeldUnrefLocked(node);
	pthread_mutex_unlock(&ZkWatch.mutex);
}

/*
 * zk_loss_get_done
 *		The answer to the read that set a node's ZkWatch.  ZOK: the watch is
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

	pthread_mutex_lock(&ZkWatch.mutex);
	if (rc == ZOK)
	{
		node->watching = true;
		if (ZkIsRevokeMarker(value, value_len))
		{
			node->revoke_requested = true;
			if (ZkWatch.revoke_release)
				ZkHeldRevokeLaterLocked(node);
		}
	}
	else if (rc == ZNONODE)
	{
		if (ZkHeldLostLocked(node, node->revoking ? ZK_LOSS_REVOKED :
								ZK_LOSS_DELETED))
			ZkHeldStopHolderLocked(node);
		ZkHeldUnrefLocked(node);
	}
	else
	{
		ZkHeldArmLaterLocked(node, ZkNowMs() + ZK_LOSS_ARM_DELAY_MS);
		pthread_cond_signal(&ZkWatch.cond);
		ZkHeldUnrefLocked(node);
	}
	pthread_mutex_unlock(&ZkWatch.mutex);
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

	pthread_mutex_lock(&ZkWatch.mutex);
	if (rc == ZOK || rc == ZNONODE)
	{
		if (ZkHeldLostLocked(node, ZK_LOSS_REVOKED))
			ZkHeldStopHolderLocked(node);
	}
	else
	{
		ZkHeldArmLaterLocked(node, ZkNowMs() + ZK_LOSS_ARM_DELAY_MS);
		pthread_cond_signal(&ZkWatch.cond);
	}
	ZkHeldUnrefLocked(node);
	pthread_mutex_unlock(&ZkWatch.mutex);
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
	pthread_mutex_lock(&ZkWatch.mutex);
	if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE)
		ZkHeldSessionLostLocked(ZK_LOSS_EXPIRED);
	if (ZkWatch.running)
		pthread_cond_signal(&ZkWatch.cond);
	pthread_mutex_unlock(&ZkWatch.mutex);
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
	if (dlist_is_empty(&ZkWatch.nodes))
		return next;

	/* out of touch for longer than the session timeout */
	if (view->open && !view->ended && view->disconnected_at != 0 && timeout > 0)
	{
		int64		give_up_at = view->disconnected_at + timeout;

		if (now >= give_up_at)
			ZkHeldSessionLostLocked(ZK_LOSS_OUT_OF_TOUCH);
		else
			next = Min(next, give_up_at);
	}

	/* leases whose ttl ran out */
	dlist_foreach(iter, &ZkWatch.deadlines)
	{
		ZkHeldNode *node = dlist_container(ZkHeldNode, deadline_link, iter.cur);

		if (node->lost != ZK_LOSS_NONE)
			continue;
		if (now >= node->deadline)
		{
			if (ZkHeldLostLocked(node, ZK_LOSS_TTL) && first == NULL)
				first = node;
		}
		else
			next = Min(next, node->deadline);
	}
	if (first != NULL)
		ZkHeldStopHolderLocked(first);

	/* watches due, while connected */
	if (connected)
	{
		while (!dlist_is_empty(&ZkWatch.to_arm) && *nbatch < ZK_LOSS_ARM_BATCH)
		{
			ZkHeldNode *node = dlist_head_element(ZkHeldNode, arm_link,
												  &ZkWatch.to_arm);

			if (node->arm_at > now)
				break;
			dlist_delete(&node->arm_link);
			node->to_arm = false;
			node->refs++;
			deletes[*nbatch] = node->revoking;
			batch[(*nbatch)++] = node;
		}
		if (!dlist_is_empty(&ZkWatch.to_arm))
			next = Min(next, dlist_head_element(ZkHeldNode, arm_link,
												&ZkWatch.to_arm)->arm_at);
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

	pthread_mutex_lock(&ZkWatch.mutex);
	while (!ZkWatch.stop)
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
			pthread_mutex_unlock(&ZkWatch.mutex);
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
					pthread_mutex_lock(&ZkWatch.mutex);
					ZkHeldArmLaterLocked(batch[i],
											 ZkNowMs() + ZK_LOSS_ARM_DELAY_MS);
					ZkHeldUnrefLocked(batch[i]);
					pthread_mutex_unlock(&ZkWatch.mutex);
				}
			}
			pthread_mutex_lock(&ZkWatch.mutex);
			continue;
		}

		ZkWatch.wake_at = next;
		if (next == PG_INT64_MAX)
			pthread_cond_wait(&ZkWatch.cond, &ZkWatch.mutex);
		else
		{
			struct timespec ts;

			ts.tv_sec = next / 1000;
			ts.tv_nsec = (next % 1000) * 1000000;
			pthread_cond_timedwait(&ZkWatch.cond, &ZkWatch.mutex, &ts);
		}
		ZkWatch.wake_at = PG_INT64_MAX;
	}
	pthread_mutex_unlock(&ZkWatch.mutex);
	return arg;
}

/* ------------------------------------------------------------------------
 * Backend thread.
 * ------------------------------------------------------------------------
 */

/*
 * ZkWatchdogStart
 *		Start the watchdog, with every signal blocked so that it never runs
 *		PostgreSQL's handlers.  Its condition variable waits on the
 *		monotonic clock, as ZkNowMs() reads it.  Without a watchdog (the
 *		thread could not be made), losses are still found at the next call
 *		and at COMMIT, as with zklock.on_lock_loss = error.
 */
void
ZkWatchdogStart(void)
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
		rc = pthread_cond_init(&ZkWatch.cond, &attr);
		pthread_condattr_destroy(&attr);
		if (rc != 0)
			return;
		zk_cond_ready = true;
	}

	pthread_mutex_lock(&ZkWatch.mutex);
	ZkWatch.stop = false;
	ZkWatch.pid = MyProcPid;
	pthread_mutex_unlock(&ZkWatch.mutex);

	sigfillset(&all_signals);
	pthread_sigmask(SIG_SETMASK, &all_signals, &saved_signals);
	rc = pthread_create(&ZkWatch.thread, NULL, zk_watchdog_main, NULL);
	pthread_sigmask(SIG_SETMASK, &saved_signals, NULL);

	pthread_mutex_lock(&ZkWatch.mutex);
	ZkWatch.running = (rc == 0);
	ZkWatch.start_failed = (rc != 0);
	pthread_mutex_unlock(&ZkWatch.mutex);
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

	pthread_mutex_lock(&ZkWatch.mutex);
	running = ZkWatch.running;
	ZkWatch.stop = true;
	if (running)
		pthread_cond_signal(&ZkWatch.cond);
	pthread_mutex_unlock(&ZkWatch.mutex);
	if (running)
		pthread_join(ZkWatch.thread, NULL);
	pthread_mutex_lock(&ZkWatch.mutex);
	ZkWatch.running = false;
	pthread_mutex_unlock(&ZkWatch.mutex);
}
