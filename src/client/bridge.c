/*-------------------------------------------------------------------------
 *
 * client/bridge.c
 *		The bridge from libzookeeper_mt's threads to the backend: the state
 *		they share under one mutex, the watchers and the completions of
 *		requests that run on the library's threads, and the functions
 *		through which the rest of the session layer reads and changes that
 *		state.
 *
 * libzookeeper_mt runs two threads of its own: one for network I/O (which
 * also keeps the session alive while the backend runs a long query) and
 * one that runs watchers and completion callbacks.  The thread rules, for
 * everything that runs there (the functions of this file under "Client
 * threads" and "Either thread", and the background jobs of client/jobs.c):
 *
 * - The handle is created with every signal blocked (ZkBridgeOpen), so the
 *	 library's threads inherit a full signal mask and never run PostgreSQL's
 *	 signal handlers.
 * - A client thread touches only plain memory: malloc and free, lib/ilist.h
 *	 list operations, and the shared state under bridge.mutex; then it calls
 *	 SetLatch() on the backend's latch.  It may read the monotonic clock
 *	 (ZkNowMs, ZkNowUs).  No palloc, no elog, no other PostgreSQL call.
 * - Beyond that, a background job whose request failed because the
 *	 connection was lost is sent again, through the thread-safe client
 *	 library and never holding the mutex, so that a release completes once
 *	 the connection is back even while the backend sits idle waiting for
 *	 its client.
 *
 * This is the only file that takes the bridge's mutex (client/loss_watch.c,
 * the other file that includes <pthread.h>, has its own, taken before this
 * one, never after).  The rest of the session layer reads the shared state
 * through ZkBridgeLook and changes it through the functions below.  bridge.zh, which only the
 * backend writes, the backend reads without the mutex.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <pthread.h>
#include <signal.h>

#include "lib/ilist.h"
#include "miscadmin.h"
#include "storage/latch.h"

#include "client/bridge.h"
#include "base/clock.h"

/*
 * Shortest time between two "routine" resolutions of zklock.hosts by the
 * client library (zoo_set_servers_resolution_delay): DNS changes are seen
 * within this time, or at once after a lost connection.
 */
#define ZK_RESOLVE_DELAY_MS		30000

/*
 * State shared between the backend thread and the library's threads.
 * Everything below 'mutex' is read and written under it.
 */
typedef struct ZkBridge
{
	pthread_mutex_t mutex;
	Latch	   *latch;			/* the backend's latch; set on every event */
	zhandle_t  *zh;				/* current handle, NULL when none */
	bool		closing;		/* zookeeper_close() in progress */
	int			state;			/* last session state the watcher saw */
	bool		expired;
	bool		auth_failed;
	int64		disconnected_at;	/* monotonic ms; 0 while connected */
	int64		connected_at;	/* monotonic ms of the session's first connect */
	char	   *watch_path;		/* the node the current wait watches */
	int			watch_event;	/* event seen on it, 0 = none yet */
	slist_head	deferred;		/* jobs to send again once reconnected */
	slist_head	carried;		/* persistent jobs whose session ended:
								 * sent again by the next session */
	int			jobs_pending;
	int64		jobs_failed;
	char	   *own_path;		/* the own node a waiter watches */
	int			own_event;		/* event seen on it, 0 = none yet */
	ZkOp	   *awaited;		/* the op the backend waits for, if any */
	int64		alive_at;		/* send time of the latest request the
								 * server answered; 0: none yet */
	uint64		answers;		/* answers so far (progress of a batch) */
} ZkBridge;

static ZkBridge bridge = {.mutex = PTHREAD_MUTEX_INITIALIZER};

/* private prototypes */
static void zk_op_finish(ZkOp *op, int rc, struct Stat const *stat,
						 char *value, int value_len,
						 char **children, int nchildren);
static void zk_note_answer_locked(int64 sent_at, bool ordered, int rc);
static void zk_jobs_take(slist_head *from, slist_head *into);

/* ------------------------------------------------------------------------
 * Client threads: watchers and the completions of requests.
 *
 * Plain memory under bridge.mutex, then SetLatch(); nothing else.  (The
 * session's watcher, client/session_watcher.c, also sends again the
 * background jobs a reconnection frees, without the mutex.)
 * ------------------------------------------------------------------------
 */

/*
 * ZkBridgeSessionEvent
 *		A session event (the session's watcher, client/session_watcher.c,
 *		passes it on): record the state change, and when connected again
 *		hand the jobs that waited for the connection to 'resend', for the
 *		caller to send again without the mutex.  Wakes the backend.  Runs on
 *		the completion thread.
 */
void
ZkBridgeSessionEvent(int state, slist_head *resend)
{
	Latch	   *latch;

	slist_init(resend);
	pthread_mutex_lock(&bridge.mutex);
	bridge.state = state;
	if (state == ZOO_CONNECTED_STATE)
	{
		bridge.disconnected_at = 0;
		if (bridge.connected_at == 0)
			bridge.connected_at = ZkNowMs();
		if (!bridge.closing)
			zk_jobs_take(&bridge.deferred, resend);
	}
	else if (state == ZOO_EXPIRED_SESSION_STATE)
		bridge.expired = true;
	else if (state == ZOO_AUTH_FAILED_STATE)
		bridge.auth_failed = true;
	else if (bridge.disconnected_at == 0)
		bridge.disconnected_at = ZkNowMs();
	latch = bridge.latch;
	pthread_mutex_unlock(&bridge.mutex);

	if (latch)
		SetLatch(latch);
}

/*
 * ZkNodeWatcher
 *		Data, exists or child watch on a node: ctx is NULL for
 *		ZK_WATCH_BLOCKER, ZK_OWN_WATCH for ZK_WATCH_OWN.
 *
 * ZK_WATCH_BLOCKER: the one node a waiting backend waits for; watches left
 * over from earlier waits (on other paths) are ignored.
 *
 * ZK_WATCH_OWN: a waiter's own node.  Its events are kept while it is the
 * own node ZkWatchArm() armed, a deletion over a change; events on own
 * nodes of earlier waits (a held node's loss is the loss watch's to find,
 * and our own release fires such a watch too) are ignored.
 */
void
ZkNodeWatcher(zhandle_t *zh, int type, int state, const char *path,
			  void *ctx)
{
	bool		own = (ctx == ZK_OWN_WATCH);
	Latch	   *latch;

	if (type == ZOO_SESSION_EVENT || path == NULL)
		return;

	pthread_mutex_lock(&bridge.mutex);
	if (own)
	{
		if (bridge.own_path != NULL && strcmp(bridge.own_path, path) == 0 &&
			bridge.own_event != ZOO_DELETED_EVENT)
			bridge.own_event = type;
	}
	else if (bridge.watch_path != NULL &&
			 strcmp(bridge.watch_path, path) == 0)
		bridge.watch_event = type;
	latch = bridge.latch;
	pthread_mutex_unlock(&bridge.mutex);

	if (latch)
		SetLatch(latch);
}

/*
 * zk_op_finish
 *		Record an op's result (already copied to malloc'd memory) and wake
 *		the backend; or free everything if the backend abandoned the op.
 */
static void
zk_op_finish(ZkOp *op, int rc, struct Stat const *stat,
			 char *value, int value_len, char **children, int nchildren)
{
	bool		abandoned;
	Latch	   *latch;

	pthread_mutex_lock(&bridge.mutex);
	abandoned = op->abandoned;
	if (op->kind != ZKOP_RELEASE)
		zk_note_answer_locked(op->sent_at, op->ordered, rc);
	/*
	 * Wake the backend only for the op it waits for: the answers to
	 * pipelined requests come in order, so it waits for the last one, and
	 * waking it for each would cost a context switch per answer.
	 */
	latch = (op == bridge.awaited) ? bridge.latch : NULL;
	if (!abandoned)
	{
		op->rc = rc;
		if (stat)
			op->stat = *stat;
		op->value = value;
		op->value_len = value_len;
		op->children = children;
		op->nchildren = nchildren;
		op->done_us = ZkNowUs();
		op->done = true;
	}
	pthread_mutex_unlock(&bridge.mutex);

	if (abandoned)
	{
		free(value);
		for (int i = 0; i < nchildren; i++)
			free(children[i]);
		free(children);
		ZkOpFreeMemory(op);
		return;
	}
	if (latch)
		SetLatch(latch);
}

/*
 * ZkRcFromServer
 *		Is this result code an answer of the server (as opposed to one the
 *		client library made up: lost connection, closing, expired)?  Only
 *		those prove the session alive.
 */
bool
ZkRcFromServer(int rc)
{
	switch (rc)
	{
		case ZOK:
		case ZNONODE:
		case ZNODEEXISTS:
		case ZNOTEMPTY:
		case ZBADVERSION:
		case ZNOAUTH:
		case ZNOCHILDRENFOREPHEMERALS:
		case ZINVALIDACL:
		case ZBADARGUMENTS:
			return true;
		default:
			return false;
	}
}

/*
 * zk_note_answer_locked
 *		Record an answer.  The answer to a write or a sync ('ordered')
 *		proves that the session was alive when the leader processed the
 *		request, so after its send time: the alive window now starts there,
 *		if that is later than what we had (client/session.c explains the
 *		window).  A read proves nothing of the kind: a server cut off from
 *		the leader goes on answering reads until it notices, for up to
 *		syncLimit ticks, while the leader may have expired the session
 *		already.  Caller holds bridge.mutex.
 */
static void
zk_note_answer_locked(int64 sent_at, bool ordered, int rc)
{
	bridge.answers++;
	if (ordered && sent_at > bridge.alive_at && ZkRcFromServer(rc) &&
		!bridge.expired && !bridge.closing)
		bridge.alive_at = sent_at;
}

/*
 * ZkOpDoneStringStat ... ZkOpDoneVoid
 *		Completions of single requests: copy what the answer carries to
 *		malloc'd memory (an allocation failure becomes ZSYSTEMERROR) and
 *		finish the op.
 */
void
ZkOpDoneStringStat(int rc, const char *string, const struct Stat *stat,
				   const void *data)
{
	char	   *copy = NULL;

	if (rc == ZOK && string != NULL && (copy = strdup(string)) == NULL)
		rc = ZSYSTEMERROR;
	zk_op_finish((ZkOp *) data, rc, rc == ZOK ? stat : NULL,
				 copy, copy ? (int) strlen(copy) : 0, NULL, 0);
}

void
ZkOpDoneStrings(int rc, const struct String_vector *strings,
				const void *data)
{
	char	  **names = NULL;
	int			n = 0;

	if (rc == ZOK && strings != NULL && strings->count > 0)
	{
		names = malloc(sizeof(char *) * strings->count);
		if (names == NULL)
			rc = ZSYSTEMERROR;
		for (int i = 0; rc == ZOK && i < strings->count; i++)
		{
			names[i] = strdup(strings->data[i]);
			if (names[i] == NULL)
				rc = ZSYSTEMERROR;
			else
				n++;
		}
		if (rc != ZOK)
		{
			for (int i = 0; i < n; i++)
				free(names[i]);
			free(names);
			names = NULL;
			n = 0;
		}
	}
	zk_op_finish((ZkOp *) data, rc, NULL, NULL, 0, names, n);
}

void
ZkOpDoneData(int rc, const char *value, int value_len,
			 const struct Stat *stat, const void *data)
{
	char	   *copy = NULL;

	if (rc == ZOK && value != NULL && value_len > 0)
	{
		copy = malloc(value_len + 1);
		if (copy == NULL)
			rc = ZSYSTEMERROR;
		else
		{
			memcpy(copy, value, value_len);
			copy[value_len] = '\0';
		}
	}
	zk_op_finish((ZkOp *) data, rc, rc == ZOK ? stat : NULL,
				 copy, copy ? value_len : 0, NULL, 0);
}

void
ZkOpDoneStat(int rc, const struct Stat *stat, const void *data)
{
	zk_op_finish((ZkOp *) data, rc, rc == ZOK ? stat : NULL, NULL, 0, NULL, 0);
}

void
ZkOpDoneString(int rc, const char *value, const void *data)
{
	zk_op_finish((ZkOp *) data, rc, NULL, NULL, 0, NULL, 0);
}

void
ZkOpDoneVoid(int rc, const void *data)
{
	zk_op_finish((ZkOp *) data, rc, NULL, NULL, 0, NULL, 0);
}

/*
 * ZkOpDoneCreateSet
 *		Completion of a multi of creates.  The results stay in op->multi
 *		for ZkCreateSetResult; for one node they are also copied to the op
 *		itself: the created path, its czxid (the transaction's zxid, which
 *		is also the parent's new mzxid) and the number of children the
 *		parent had right after it.
 */
void
ZkOpDoneCreateSet(int rc, const void *data)
{
	ZkOp	   *op = (ZkOp *) data;
	ZkMultiAux *aux = op->multi;
	struct Stat st;
	char	   *copy = NULL;

	memset(&st, 0, sizeof(st));
	if (rc == ZOK)
	{
		copy = strdup(aux->created[0]);
		if (copy == NULL)
			rc = ZSYSTEMERROR;
		if (aux->counted)
		{
			st.czxid = aux->parent_stats[0].mzxid;
			st.ctime = aux->parent_stats[0].mtime;
			op->parent_children = aux->parent_stats[0].numChildren;
		}
	}
	zk_op_finish(op, rc, rc == ZOK ? &st : NULL,
				 copy, copy ? (int) strlen(copy) : 0, NULL, 0);
}

/*
 * ZkOpDoneMulti
 *		Completion of a ZkMulti: the results stay in op->multi; the Stat of
 *		the first setData, if any, is copied to the op.
 */
void
ZkOpDoneMulti(int rc, const void *data)
{
	ZkOp	   *op = (ZkOp *) data;
	ZkMultiAux *aux = op->multi;
	const struct Stat *st = NULL;

	for (int i = 0; rc == ZOK && st == NULL && i < aux->nops; i++)
	{
		if (aux->ops[i].type == ZOO_SETDATA_OP)
			st = &aux->parent_stats[i];
	}
	zk_op_finish(op, rc, st, NULL, 0, NULL, 0);
}

/*
 * ZkOpFreeMemory
 *		Free an op and what its answer brought; no one refers to it any
 *		more.  Runs on either thread.
 */
void
ZkOpFreeMemory(ZkOp *op)
{
	free(op->value);
	for (int i = 0; i < op->nchildren; i++)
		free(op->children[i]);
	free(op->children);
	free(op->multi);			/* one block (zk_multi_aux_new) */
	free(op);
}

/* ------------------------------------------------------------------------
 * Either thread: the shared state of background jobs (client/jobs.c).
 *
 * A job waiting for a reconnection is in bridge.deferred, a persistent job
 * whose session ended in bridge.carried.  A job counts in
 * bridge.jobs_pending until it ends or is carried, and for its waiter (a
 * ZKOP_RELEASE op) if it has one: the last job of a waiter completes it.
 * ------------------------------------------------------------------------
 */

/*
 * zk_jobs_take
 *		Move the jobs of a list to an empty one (bridge.mutex held if the
 *		list is the bridge's).
 */
static void
zk_jobs_take(slist_head *from, slist_head *into)
{
	*into = *from;
	slist_init(from);
}

/*
 * ZkBridgeJobAdded
 *		A new job is pending, and counts for its waiter (if any) until it
 *		ends (ZkBridgeJobEnded).
 */
void
ZkBridgeJobAdded(ZkOp *waiter)
{
	pthread_mutex_lock(&bridge.mutex);
	bridge.jobs_pending++;
	if (waiter != NULL)
		waiter->pending++;
	pthread_mutex_unlock(&bridge.mutex);
}

/*
 * ZkBridgeJobsFailed
 *		n deletes are given up before they were sent (out of memory): their
 *		nodes go with the session.
 */
void
ZkBridgeJobsFailed(int n)
{
	pthread_mutex_lock(&bridge.mutex);
	bridge.jobs_failed += n;
	pthread_mutex_unlock(&bridge.mutex);
}

/*
 * ZkBridgeJobEnded
 *		A job is over, done or given up; or, with 'carry' (its list node), a
 *		persistent job is kept for the next session, its waiter taken off
 *		it by the caller.  It no longer counts as pending, nor for its
 *		waiter: the last job of a waiter completes it, with ZOK, or with
 *		ZSESSIONEXPIRED for a carried job, as whoever waited learns that the
 *		session ended.
 */
void
ZkBridgeJobEnded(ZkOp *waiter, bool succeeded, slist_node *carry)
{
	ZkOp	   *finished = NULL;

	pthread_mutex_lock(&bridge.mutex);
	bridge.jobs_pending--;
	if (!succeeded)
		bridge.jobs_failed++;
	if (waiter != NULL && --waiter->pending == 0)
		finished = waiter;
	if (carry != NULL)
		slist_push_head(&bridge.carried, carry);
	pthread_mutex_unlock(&bridge.mutex);

	/* the last delete of a batch completes the op its backend waits for */
	if (finished != NULL)
		zk_op_finish(finished, carry != NULL ? ZSESSIONEXPIRED : ZOK,
					 NULL, NULL, 0, NULL, 0);
}

/*
 * ZkReleaseOpIssued
 *		Every job of a ZKOP_RELEASE op was sent: drop the hold its creator
 *		took on it (pending = 1), which completes it if the jobs are all
 *		done already.
 */
void
ZkReleaseOpIssued(ZkOp *op)
{
	bool		finished;

	pthread_mutex_lock(&bridge.mutex);
	finished = (--op->pending == 0);
	pthread_mutex_unlock(&bridge.mutex);
	if (finished)
		zk_op_finish(op, ZOK, NULL, NULL, 0, NULL, 0);
}

/*
 * ZkBridgeJobHandle
 *		The handle to send a job on; NULL while there is none or it is being
 *		closed.
 */
zhandle_t *
ZkBridgeJobHandle(void)
{
	zhandle_t  *zh;

	pthread_mutex_lock(&bridge.mutex);
	zh = bridge.closing ? NULL : bridge.zh;
	pthread_mutex_unlock(&bridge.mutex);
	return zh;
}

/*
 * ZkBridgeJobDefer
 *		A job failed for a lost connection.  True if the session is
 *		connected again already: the caller sends it again now.  Else the
 *		job (its list node) waits in bridge.deferred, which the session
 *		watcher sends once the connection is back.
 */
bool
ZkBridgeJobDefer(slist_node *job)
{
	bool		now;

	pthread_mutex_lock(&bridge.mutex);
	now = (bridge.state == ZOO_CONNECTED_STATE && !bridge.closing);
	if (!now)
		slist_push_head(&bridge.deferred, job);
	pthread_mutex_unlock(&bridge.mutex);
	return now;
}

/*
 * ZkBridgeNoteAnswer
 *		Record the answer to a job's request (a delete), sent at sent_at.
 */
void
ZkBridgeNoteAnswer(int64 sent_at, int rc)
{
	pthread_mutex_lock(&bridge.mutex);
	zk_note_answer_locked(sent_at, true, rc);
	pthread_mutex_unlock(&bridge.mutex);
}

/*
 * ZkBridgeTakeCarried
 *		Take the persistent jobs an earlier session could not finish.
 */
void
ZkBridgeTakeCarried(slist_head *into)
{
	pthread_mutex_lock(&bridge.mutex);
	zk_jobs_take(&bridge.carried, into);
	pthread_mutex_unlock(&bridge.mutex);
}

/* ------------------------------------------------------------------------
 * Backend thread: reading and changing the shared state.
 * ------------------------------------------------------------------------
 */

/*
 * ZkBridgeLook
 *		Copy the shared state, and whether 'op' (if not NULL) has its
 *		answer, at one moment.
 */
void
ZkBridgeLook(ZkOp *op, ZkBridgeView *view)
{
	pthread_mutex_lock(&bridge.mutex);
	view->open = (bridge.zh != NULL);
	view->state = bridge.state;
	view->expired = bridge.expired;
	view->auth_failed = bridge.auth_failed;
	view->connected_at = bridge.connected_at;
	view->disconnected_at = bridge.disconnected_at;
	view->watch_event = bridge.watch_event;
	view->jobs_pending = bridge.jobs_pending;
	view->jobs_failed = bridge.jobs_failed;
	view->alive_at = bridge.alive_at;
	view->answers = bridge.answers;
	view->op_done = (op != NULL && op->done);
	pthread_mutex_unlock(&bridge.mutex);
	view->ended = view->expired || view->auth_failed;
}

/*
 * ZkBridgeHandle
 *		The open handle, NULL when none.  Only the backend sets it, so it
 *		reads it without the mutex.
 */
zhandle_t *
ZkBridgeHandle(void)
{
	return bridge.zh;
}

/*
 * ZkBridgeReset
 *		A new session is about to be opened: it is not connected yet, and
 *		nothing is known of it.
 */
void
ZkBridgeReset(void)
{
	pthread_mutex_lock(&bridge.mutex);
	bridge.latch = MyLatch;
	bridge.closing = false;
	bridge.state = 0;
	bridge.expired = false;
	bridge.auth_failed = false;
	bridge.connected_at = 0;
	bridge.disconnected_at = ZkNowMs();
	bridge.alive_at = 0;
	pthread_mutex_unlock(&bridge.mutex);
}

/*
 * ZkBridgeOpen
 *		Create the handle (after ZkBridgeReset), with 'watcher' as the
 *		session's watcher, and with every signal blocked so that the
 *		library's threads inherit that mask.  Returns NULL with
 *		errno set if the library refused.
 */
zhandle_t *
ZkBridgeOpen(const char *hosts, int session_timeout, watcher_fn watcher)
{
	sigset_t	all_signals;
	sigset_t	saved_signals;
	zhandle_t  *zh;
	int			saved_errno;

	/* the library's threads inherit this mask: no signal ever reaches them */
	sigfillset(&all_signals);
	pthread_sigmask(SIG_SETMASK, &all_signals, &saved_signals);
	errno = 0;
	zh = zookeeper_init2(hosts, watcher, session_timeout,
						 NULL, NULL, ZOO_NO_LOG_CLIENTENV, NULL);
	saved_errno = errno;
	pthread_sigmask(SIG_SETMASK, &saved_signals, NULL);
	if (zh == NULL)
	{
		errno = saved_errno;
		return NULL;
	}

	/*
	 * By default the client resolves zklock.hosts again every time its I/O
	 * thread checks the socket, that is for every request and answer: a
	 * getaddrinfo (with a netlink dump of the host's addresses) each time,
	 * measured at a sixth of a busy backend's CPU.  Resolve at most every
	 * ZK_RESOLVE_DELAY_MS instead; a lost connection still resolves at once.
	 */
	(void) zoo_set_servers_resolution_delay(zh, ZK_RESOLVE_DELAY_MS);

	pthread_mutex_lock(&bridge.mutex);
	bridge.zh = zh;
	pthread_mutex_unlock(&bridge.mutex);
	return zh;
}

/*
 * ZkBridgeClose
 *		Close the open handle (which deletes the session's ephemeral nodes
 *		on the server).  zookeeper_close() joins the library's threads;
 *		pending completions run with ZCLOSING before it returns.  The jobs
 *		that waited for a reconnection are handed to 'deferred', for the
 *		caller to end (persistent ones are carried over to the next
 *		session); then ZkBridgeForget forgets the session.  Returns whether
 *		the session had expired.
 */
bool
ZkBridgeClose(slist_head *deferred)
{
	zhandle_t  *zh = bridge.zh;
	bool		expired;

	pthread_mutex_lock(&bridge.mutex);
	bridge.closing = true;
	zk_jobs_take(&bridge.deferred, deferred);
	expired = bridge.expired;
	pthread_mutex_unlock(&bridge.mutex);

	zookeeper_close(zh);
	return expired;
}

/*
 * ZkBridgeForget
 *		After ZkBridgeClose, and after the deferred jobs were ended: forget
 *		the session.
 */
void
ZkBridgeForget(void)
{
	pthread_mutex_lock(&bridge.mutex);
	bridge.zh = NULL;
	bridge.closing = false;
	bridge.state = 0;
	bridge.connected_at = 0;
	bridge.disconnected_at = 0;
	bridge.alive_at = 0;
	free(bridge.watch_path);
	bridge.watch_path = NULL;
	bridge.watch_event = 0;
	bridge.jobs_pending = 0;
	free(bridge.own_path);
	bridge.own_path = NULL;
	bridge.own_event = 0;
	pthread_mutex_unlock(&bridge.mutex);
}

/*
 * ZkBridgeSetAliveAt
 *		The session is known to have been alive at this time (its handshake
 *		was answered after it).
 */
void
ZkBridgeSetAliveAt(int64 alive_at)
{
	pthread_mutex_lock(&bridge.mutex);
	bridge.alive_at = alive_at;
	pthread_mutex_unlock(&bridge.mutex);
}

/*
 * ZkBridgeMarkExpired
 *		A request was refused because the session expired, perhaps before
 *		the watcher's session event came: record the expiry now (unless
 *		authentication failed, which says more).
 */
void
ZkBridgeMarkExpired(void)
{
	pthread_mutex_lock(&bridge.mutex);
	if (!bridge.auth_failed)
		bridge.expired = true;
	pthread_mutex_unlock(&bridge.mutex);
}

/*
 * ZkBridgeAwait
 *		The op the backend is about to wait for (NULL: none); its answer
 *		sets the latch.  A stale value only ever causes a wakeup: it is
 *		compared, never followed.
 */
void
ZkBridgeAwait(ZkOp *op)
{
	pthread_mutex_lock(&bridge.mutex);
	bridge.awaited = op;
	pthread_mutex_unlock(&bridge.mutex);
}

/*
 * ZkBridgeArmWatch
 *		Say which node the coming wait watches (ZK_WATCH_BLOCKER), or which
 *		own node a waiter watches (ZK_WATCH_OWN): a malloc'd path, now the
 *		bridge's; forget any earlier event of that watch.
 */
void
ZkBridgeArmWatch(ZkWatchKind kind, char *path)
{
	bool		own = (kind == ZK_WATCH_OWN);
	char	  **armed = own ? &bridge.own_path : &bridge.watch_path;
	int		   *event = own ? &bridge.own_event : &bridge.watch_event;

	pthread_mutex_lock(&bridge.mutex);
	free(*armed);
	*armed = path;
	*event = 0;
	pthread_mutex_unlock(&bridge.mutex);
}

/*
 * ZkBridgeTakeWatchEvent
 *		The event seen on the armed watch (0 if none), which is then
 *		forgotten.
 */
int
ZkBridgeTakeWatchEvent(void)
{
	int			event;

	pthread_mutex_lock(&bridge.mutex);
	event = bridge.watch_event;
	bridge.watch_event = 0;
	pthread_mutex_unlock(&bridge.mutex);
	return event;
}

/*
 * ZkOpIssued
 *		A request was sent with result 'rc'.  If the library refused it at
 *		once, no completion will come, so the op is complete with that
 *		error.
 */
void
ZkOpIssued(ZkOp *op, int rc)
{
	if (rc != ZOK)
	{
		pthread_mutex_lock(&bridge.mutex);
		op->rc = rc;
		op->done = true;
		pthread_mutex_unlock(&bridge.mutex);
	}
}

/*
 * ZkOpAbandon
 *		The backend is done with an op.  Returns true if its answer came,
 *		so that the backend frees it; else marks it abandoned, and the
 *		completion will free it.
 */
bool
ZkOpAbandon(ZkOp *op)
{
	bool		done;

	pthread_mutex_lock(&bridge.mutex);
	done = op->done;
	if (!done)
		op->abandoned = true;
	pthread_mutex_unlock(&bridge.mutex);
	return done;
}

/*
 * ZkOwnNodeEvent
 *		Has the watch a waiter set on its own node 'path' fired (without
 *		taking the event)?  0: no; ZOO_DELETED_EVENT or ZOO_CHANGED_EVENT:
 *		yes, a deletion winning over a change; ZOO_NOTWATCHING_EVENT: its
 *		events are no longer kept (another wait armed its own node since).
 */
int
ZkOwnNodeEvent(const char *path)
{
	int			event = ZOO_NOTWATCHING_EVENT;

	pthread_mutex_lock(&bridge.mutex);
	if (bridge.own_path != NULL && strcmp(bridge.own_path, path) == 0)
		event = bridge.own_event;
	pthread_mutex_unlock(&bridge.mutex);
	return event;
}
