/*-------------------------------------------------------------------------
 *
 * zk_session.c
 *		The backend's ZooKeeper session, its asynchronous operations and the
 *		bridge from the client library's threads to the backend's latch.
 *
 * Each backend that uses zklock opens one ZooKeeper session, lazily, at its
 * first zklock call, and closes it from a before_shmem_exit callback so
 * that its ephemeral nodes (its locks) go the moment the backend exits.
 *
 * libzookeeper_mt runs two threads of its own: one for network I/O (which
 * also keeps the session alive while the backend runs a long query) and
 * one that runs watchers and completion callbacks.  The handle is created
 * with every signal blocked, so those threads inherit a full signal mask
 * and never run PostgreSQL's signal handlers.  Code on the completion
 * thread touches only plain memory under bridge.mutex and then calls
 * SetLatch() on the backend's latch: no palloc, no elog, no PostgreSQL
 * call.  The backend thread sleeps in WaitLatch() (PG_WAIT_EXTENSION) and
 * runs CHECK_FOR_INTERRUPTS() on every wakeup.
 *
 * The one thing the completion thread does beyond recording results is to
 * send a background delete (a lock release) again when it failed because
 * the connection was lost: it calls the thread-safe client library, never
 * PostgreSQL, so that a release completes once the connection is back even
 * while the backend sits idle waiting for its client.  Such a delete is
 * retried until it succeeds or the session ends, which deletes the node
 * anyway.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/memutils.h"

#include "zk_session.h"
#include "zklock.h"

/*
 * A background request: delete one node, or delete the children of a node
 * whose names start with a prefix (used when an attempt is abandoned before
 * its create answered, so that our node cannot survive as an orphan).
 */
typedef enum ZkJobKind
{
	ZKJOB_DELETE,
	ZKJOB_SWEEP
} ZkJobKind;

typedef struct ZkJob
{
	ZkJobKind	kind;
	char	   *path;			/* node to delete, or parent to sweep */
	char	   *prefix;			/* sweep only */
	struct ZkJob *next;			/* in bridge.deferred */
} ZkJob;

/* An event on a node watched with ZK_WATCH_HELD (its watch is now spent). */
typedef struct ZkDeletedNode
{
	char	   *path;
	bool		deleted;		/* else changed: only the watch is gone */
	struct ZkDeletedNode *next;
} ZkDeletedNode;

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
	ZkJob	   *deferred;		/* jobs to send again once reconnected */
	int			jobs_pending;
	int64		jobs_failed;
	ZkDeletedNode *deleted_held;	/* held nodes seen deleted */
	ZkOp	   *awaited;		/* the op the backend waits for, if any */
} ZkBridge;

static ZkBridge bridge = {.mutex = PTHREAD_MUTEX_INITIALIZER};

/* Backend-only state. */
static bool zk_exit_callback_registered = false;
static dlist_head zk_live_ops = DLIST_STATIC_INIT(zk_live_ops);
static char *zk_session_hosts = NULL;	/* settings the session was opened */
static char *zk_session_auth = NULL;	/* with (TopMemoryContext) */
static int	zk_session_timeout_requested = 0;
static int	zk_negotiated_timeout = 0;	/* ms */
static ZkSessionLostHook zk_lost_hook = NULL;
static ZkLocksHeldHook zk_held_hook = NULL;
static int64 zk_failures_reported = 0;	/* background jobs_failed we warned of */

/* ACLs: world-open, or (with zklock.auth) creator-all plus world read */
static struct ACL zk_protected_acl_entries[2];
static struct ACL_vector zk_protected_acl = {2, zk_protected_acl_entries};

/* private prototypes */
static void zk_session_watcher(zhandle_t *zh, int type, int state,
							   const char *path, void *ctx);
static void zk_node_watcher(zhandle_t *zh, int type, int state,
							const char *path, void *ctx);
static void zk_held_watcher(zhandle_t *zh, int type, int state,
							const char *path, void *ctx);
static void zk_op_finish(ZkOp *op, int rc, struct Stat const *stat,
						 char *value, int value_len,
						 char **children, int nchildren);
static void zk_op_string_stat_done(int rc, const char *string,
								   const struct Stat *stat, const void *data);
static void zk_op_strings_done(int rc, const struct String_vector *strings,
							   const void *data);
static void zk_op_data_done(int rc, const char *value, int value_len,
							const struct Stat *stat, const void *data);
static void zk_op_stat_done(int rc, const struct Stat *stat, const void *data);
static void zk_op_string_done(int rc, const char *value, const void *data);
static void zk_op_void_done(int rc, const void *data);
static void zk_op_release(ZkOp *op);
static ZkOp *zk_op_new(ZkOpKind kind);
static void zk_op_issued(ZkOp *op, int rc);
static zhandle_t *zk_handle(void);
static ZkJob *zk_job_new(ZkJobKind kind, const char *path, const char *prefix);
static void zk_job_free(ZkJob *job, bool succeeded);
static void zk_job_issue(ZkJob *job);
static void zk_job_start(ZkJobKind kind, const char *path, const char *prefix);
static void zk_job_retry_later(ZkJob *job);
static bool zk_job_done_ok(int rc);
static void zk_job_delete_done(int rc, const void *data);
static void zk_job_sweep_done(int rc, const struct String_vector *strings,
							  const void *data);
static void zk_connect(void);
static void zk_close_handle(void);
static void zk_session_at_exit(int code, Datum arg);
static void zk_session_xact_callback(XactEvent event, void *arg);
static void zk_session_subxact_callback(SubXactEvent event,
										SubTransactionId mySubid,
										SubTransactionId parentSubid,
										void *arg);
static void zk_session_lost(const char *what, const char *path) pg_attribute_noreturn();
static bool zk_wait(bool (*ready) (void *), void *arg, int64 deadline_ms,
					const char *what, const char *path);
static bool zk_cond_op_done(void *arg);
static bool zk_cond_connected(void *arg);
static bool zk_cond_watch_fired(void *arg);
static bool zk_settings_changed(void);
static void zk_abandon_ops(int nest_level);

/*
 * ZkNowMs
 *		Monotonic clock in milliseconds; the one clock used for deadlines,
 *		also readable on the library's threads.
 */
int64
ZkNowMs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * ZkSessionSetHooks
 *		Let the lock table learn about a lost session and say whether it
 *		holds locks (the session layer knows nothing of locks).
 */
void
ZkSessionSetHooks(ZkSessionLostHook lost, ZkLocksHeldHook held)
{
	zk_lost_hook = lost;
	zk_held_hook = held;
}

/* ------------------------------------------------------------------------
 * Code that runs on the library's completion thread.
 *
 * Plain memory under bridge.mutex, then SetLatch(); nothing else, except
 * that background jobs are sent again (zk_job_issue) without the mutex.
 * ------------------------------------------------------------------------
 */

/*
 * zk_session_watcher
 *		The session's default watcher: records session state changes.
 */
static void
zk_session_watcher(zhandle_t *zh, int type, int state, const char *path,
				   void *ctx)
{
	ZkJob	   *resend = NULL;
	Latch	   *latch;

	if (type != ZOO_SESSION_EVENT)
		return;

	pthread_mutex_lock(&bridge.mutex);
	bridge.state = state;
	if (state == ZOO_CONNECTED_STATE)
	{
		bridge.disconnected_at = 0;
		if (bridge.connected_at == 0)
			bridge.connected_at = ZkNowMs();
		if (!bridge.closing)
		{
			resend = bridge.deferred;
			bridge.deferred = NULL;
		}
	}
	else if (state == ZOO_EXPIRED_SESSION_STATE)
		bridge.expired = true;
	else if (state == ZOO_AUTH_FAILED_STATE)
		bridge.auth_failed = true;
	else if (bridge.disconnected_at == 0)
		bridge.disconnected_at = ZkNowMs();
	latch = bridge.latch;
	pthread_mutex_unlock(&bridge.mutex);

	while (resend != NULL)
	{
		ZkJob	   *next = resend->next;

		resend->next = NULL;
		zk_job_issue(resend);
		resend = next;
	}

	if (latch)
		SetLatch(latch);
}

/*
 * zk_node_watcher
 *		Data watch on the one node a waiting backend waits for.  Watches
 *		left over from earlier waits (on other paths) are ignored.
 */
static void
zk_node_watcher(zhandle_t *zh, int type, int state, const char *path,
				void *ctx)
{
	Latch	   *latch;

	if (type == ZOO_SESSION_EVENT || path == NULL)
		return;

	pthread_mutex_lock(&bridge.mutex);
	if (bridge.watch_path != NULL && strcmp(bridge.watch_path, path) == 0)
		bridge.watch_event = type;
	latch = bridge.latch;
	pthread_mutex_unlock(&bridge.mutex);

	if (latch)
		SetLatch(latch);
}

/*
 * zk_held_watcher
 *		Data watch on a node this backend holds.  A deletion it did not ask
 *		for means the lock is gone: record the path for the backend.  (Our
 *		own releases are reported too; the backend ignores paths it no
 *		longer holds.)  Any other event is recorded as well: it spent the
 *		watch, which the next verification must set again.
 */
static void
zk_held_watcher(zhandle_t *zh, int type, int state, const char *path,
				void *ctx)
{
	ZkDeletedNode *node;
	Latch	   *latch;

	if (type == ZOO_SESSION_EVENT || path == NULL)
		return;
	node = malloc(sizeof(ZkDeletedNode));
	if (node != NULL && (node->path = strdup(path)) == NULL)
	{
		free(node);
		node = NULL;
	}
	pthread_mutex_lock(&bridge.mutex);
	if (node != NULL)
	{
		node->deleted = (type == ZOO_DELETED_EVENT);
		node->next = bridge.deleted_held;
		bridge.deleted_held = node;
	}
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
		op->done = true;
	}
	pthread_mutex_unlock(&bridge.mutex);

	if (abandoned)
	{
		free(value);
		for (int i = 0; i < nchildren; i++)
			free(children[i]);
		free(children);
		free(op);
		return;
	}
	if (latch)
		SetLatch(latch);
}

static void
zk_op_string_stat_done(int rc, const char *string, const struct Stat *stat,
					   const void *data)
{
	char	   *copy = NULL;

	if (rc == ZOK && string != NULL && (copy = strdup(string)) == NULL)
		rc = ZSYSTEMERROR;
	zk_op_finish((ZkOp *) data, rc, rc == ZOK ? stat : NULL,
				 copy, copy ? (int) strlen(copy) : 0, NULL, 0);
}

static void
zk_op_strings_done(int rc, const struct String_vector *strings,
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

static void
zk_op_data_done(int rc, const char *value, int value_len,
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

static void
zk_op_stat_done(int rc, const struct Stat *stat, const void *data)
{
	zk_op_finish((ZkOp *) data, rc, rc == ZOK ? stat : NULL, NULL, 0, NULL, 0);
}

static void
zk_op_string_done(int rc, const char *value, const void *data)
{
	zk_op_finish((ZkOp *) data, rc, NULL, NULL, 0, NULL, 0);
}

static void
zk_op_void_done(int rc, const void *data)
{
	zk_op_finish((ZkOp *) data, rc, NULL, NULL, 0, NULL, 0);
}

/*
 * zk_job_free
 *		A background job is over, one way or the other.
 */
static void
zk_job_free(ZkJob *job, bool succeeded)
{
	pthread_mutex_lock(&bridge.mutex);
	bridge.jobs_pending--;
	if (!succeeded)
		bridge.jobs_failed++;
	pthread_mutex_unlock(&bridge.mutex);
	free(job->path);
	free(job->prefix);
	free(job);
}

/*
 * zk_job_new
 *		malloc a job; NULL if memory ran out (the caller decides).
 */
static ZkJob *
zk_job_new(ZkJobKind kind, const char *path, const char *prefix)
{
	ZkJob	   *job = calloc(1, sizeof(ZkJob));

	if (job == NULL)
		return NULL;
	job->kind = kind;
	job->path = strdup(path);
	job->prefix = prefix ? strdup(prefix) : NULL;
	if (job->path == NULL || (prefix && job->prefix == NULL))
	{
		free(job->path);
		free(job->prefix);
		free(job);
		return NULL;
	}
	pthread_mutex_lock(&bridge.mutex);
	bridge.jobs_pending++;
	pthread_mutex_unlock(&bridge.mutex);
	return job;
}

/*
 * zk_job_issue
 *		Send a job's request.  Runs on the backend thread or the completion
 *		thread; never holds bridge.mutex across the library call.
 */
static void
zk_job_issue(ZkJob *job)
{
	zhandle_t  *zh;
	int			rc;

	pthread_mutex_lock(&bridge.mutex);
	zh = bridge.closing ? NULL : bridge.zh;
	pthread_mutex_unlock(&bridge.mutex);

	if (zh == NULL)
	{
		/* no session: its close deleted the node already */
		zk_job_free(job, true);
		return;
	}
	if (job->kind == ZKJOB_DELETE)
		rc = zoo_adelete(zh, job->path, -1, zk_job_delete_done, job);
	else
		rc = zoo_aget_children(zh, job->path, 0, zk_job_sweep_done, job);
	if (rc != ZOK)
		zk_job_free(job, zk_job_done_ok(rc));
}

/*
 * zk_job_retry_later
 *		A job failed for a lost connection: send it again now if the session
 *		is connected again already, else when the watcher sees it connect.
 */
static void
zk_job_retry_later(ZkJob *job)
{
	bool		now;

	pthread_mutex_lock(&bridge.mutex);
	now = (bridge.state == ZOO_CONNECTED_STATE && !bridge.closing);
	if (!now)
	{
		job->next = bridge.deferred;
		bridge.deferred = job;
	}
	pthread_mutex_unlock(&bridge.mutex);
	if (now)
		zk_job_issue(job);
}

/*
 * zk_job_done_ok
 *		Is a job's outcome final and harmless?  Done, or nothing to do any
 *		more because the node or the whole session is gone.
 */
static bool
zk_job_done_ok(int rc)
{
	return rc == ZOK || rc == ZNONODE || rc == ZSESSIONEXPIRED ||
		rc == ZCLOSING || rc == ZINVALIDSTATE || rc == ZAUTHFAILED ||
		rc == ZSESSIONCLOSEDREQUIRESASLAUTH;
}

static void
zk_job_delete_done(int rc, const void *data)
{
	ZkJob	   *job = (ZkJob *) data;

	if (ZkIsConnectionLoss(rc))
		zk_job_retry_later(job);
	else
		zk_job_free(job, zk_job_done_ok(rc));
}

static void
zk_job_sweep_done(int rc, const struct String_vector *strings,
				  const void *data)
{
	ZkJob	   *job = (ZkJob *) data;

	if (ZkIsConnectionLoss(rc))
	{
		zk_job_retry_later(job);
		return;
	}
	if (rc == ZOK && strings != NULL)
	{
		size_t		plen = strlen(job->prefix);

		for (int i = 0; i < strings->count; i++)
		{
			ZkJob	   *del;
			char	   *path;
			size_t		len;

			if (strncmp(strings->data[i], job->prefix, plen) != 0)
				continue;
			len = strlen(job->path) + strlen(strings->data[i]) + 2;
			path = malloc(len);
			if (path == NULL)
				continue;
			snprintf(path, len, "%s/%s", job->path, strings->data[i]);
			del = zk_job_new(ZKJOB_DELETE, path, NULL);
			free(path);
			if (del != NULL)
				zk_job_issue(del);
		}
	}
	zk_job_free(job, zk_job_done_ok(rc));
}

/* ------------------------------------------------------------------------
 * Backend thread: starting ops and waiting for them.
 * ------------------------------------------------------------------------
 */

/*
 * zk_handle
 *		The open handle; callers have gone through ZkSessionEnsure().
 */
static zhandle_t *
zk_handle(void)
{
	if (bridge.zh == NULL)
		elog(ERROR, "zklock: no ZooKeeper session");
	return bridge.zh;
}

static ZkOp *
zk_op_new(ZkOpKind kind)
{
	ZkOp	   *op = calloc(1, sizeof(ZkOp));

	if (op == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	op->kind = kind;
	op->nest_level = GetCurrentTransactionNestLevel();
	dlist_push_tail(&zk_live_ops, &op->node);
	return op;
}

/*
 * zk_op_issued
 *		The library refused a request at once: no completion will come, so
 *		the op is complete with that error.
 */
static void
zk_op_issued(ZkOp *op, int rc)
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
 * ZkCreate
 *		Start a create.  'protect' gives the node creator-only ACLs (plus
 *		world read) when zklock.auth is set; otherwise nodes are world-open.
 */
ZkOp *
ZkCreate(const char *path, const char *data, int datalen, int flags,
		 bool protect)
{
	ZkOp	   *op = zk_op_new(ZKOP_CREATE);
	const struct ACL_vector *acl = &ZOO_OPEN_ACL_UNSAFE;

	if (protect && zk_session_auth != NULL)
		acl = &zk_protected_acl;
	zk_op_issued(op, zoo_acreate2(zk_handle(), path, data, datalen, acl,
								  flags, zk_op_string_stat_done, op));
	return op;
}

/* ZkGetChildren: start a getChildren (no watch). */
ZkOp *
ZkGetChildren(const char *path)
{
	ZkOp	   *op = zk_op_new(ZKOP_CHILDREN);

	zk_op_issued(op, zoo_aget_children(zk_handle(), path, 0,
									   zk_op_strings_done, op));
	return op;
}

/*
 * ZkGetData
 *		Start a getData, optionally leaving a data watch on the node: for a
 *		waiter, one that fires for the path armed with ZkWatchArm(); for a
 *		held node, one that records its deletion.  A data watch is only set
 *		when the node exists, so a vanished node leaves nothing behind.
 */
ZkOp *
ZkGetData(const char *path, ZkWatchKind watch)
{
	ZkOp	   *op = zk_op_new(ZKOP_GET);
	watcher_fn	fn = NULL;

	if (watch == ZK_WATCH_BLOCKER)
		fn = zk_node_watcher;
	else if (watch == ZK_WATCH_HELD)
		fn = zk_held_watcher;
	zk_op_issued(op, zoo_awget(zk_handle(), path, fn, NULL,
							   zk_op_data_done, op));
	return op;
}

/*
 * ZkTakeDeletedHeld
 *		The events on watched held nodes since the last call: palloc'd
 *		paths, with deleted[i] true for a deletion (false: the watch was
 *		spent by a data change).  Returns how many.
 */
int
ZkTakeDeletedHeld(char ***paths, bool **deleted)
{
	ZkDeletedNode *list;
	int			n = 0;

	pthread_mutex_lock(&bridge.mutex);
	list = bridge.deleted_held;
	bridge.deleted_held = NULL;
	pthread_mutex_unlock(&bridge.mutex);

	for (ZkDeletedNode *d = list; d != NULL; d = d->next)
		n++;
	*paths = palloc(sizeof(char *) * Max(n, 1));
	*deleted = palloc(sizeof(bool) * Max(n, 1));
	n = 0;
	while (list != NULL)
	{
		ZkDeletedNode *next = list->next;

		(*deleted)[n] = list->deleted;
		(*paths)[n++] = pstrdup(list->path);
		free(list->path);
		free(list);
		list = next;
	}
	return n;
}

/* ZkExists: start an exists (no watch). */
ZkOp *
ZkExists(const char *path)
{
	ZkOp	   *op = zk_op_new(ZKOP_EXISTS);

	zk_op_issued(op, zoo_aexists(zk_handle(), path, 0, zk_op_stat_done, op));
	return op;
}

/*
 * ZkSync
 *		Start a sync: reads sent after it on this session see everything
 *		the leader had committed when it was processed.
 */
ZkOp *
ZkSync(const char *path)
{
	ZkOp	   *op = zk_op_new(ZKOP_SYNC);

	zk_op_issued(op, zoo_async(zk_handle(), path, zk_op_string_done, op));
	return op;
}

/*
 * ZkOpFree
 *		The backend is done with an op: free it, or hand it to the
 *		completion thread if its answer has not come yet.
 */
void
ZkOpFree(ZkOp *op)
{
	bool		done;

	if (op == NULL)
		return;
	dlist_delete(&op->node);
	pthread_mutex_lock(&bridge.mutex);
	done = op->done;
	if (!done)
		op->abandoned = true;
	pthread_mutex_unlock(&bridge.mutex);
	if (done)
		zk_op_release(op);
}

static void
zk_op_release(ZkOp *op)
{
	free(op->value);
	for (int i = 0; i < op->nchildren; i++)
		free(op->children[i]);
	free(op->children);
	free(op);
}

/*
 * zk_abandon_ops
 *		Give up every op started at or below the given transaction nesting
 *		level: an ERROR left them behind.  Called at (sub)transaction abort.
 */
static void
zk_abandon_ops(int nest_level)
{
	dlist_mutable_iter iter;

	dlist_foreach_modify(iter, &zk_live_ops)
	{
		ZkOp	   *op = dlist_container(ZkOp, node, iter.cur);

		if (op->nest_level >= nest_level)
			ZkOpFree(op);
	}
}

static bool
zk_cond_op_done(void *arg)
{
	return ((ZkOp *) arg)->done;
}

static bool
zk_cond_connected(void *arg)
{
	return bridge.state == ZOO_CONNECTED_STATE;
}

static bool
zk_cond_watch_fired(void *arg)
{
	return bridge.watch_event != 0;
}

/*
 * zk_wait
 *		The one place where the backend sleeps for ZooKeeper.
 *
 * Returns true once ready(arg) holds (evaluated under bridge.mutex), false
 * when deadline_ms (monotonic; 0 for none) has passed.  Raises an ERROR on
 * query cancel, statement_timeout or termination (CHECK_FOR_INTERRUPTS),
 * when the session expires, and when the connection has been lost for
 * longer than the session timeout.  'what' and 'path' name the operation
 * in those errors.
 */
static bool
zk_wait(bool (*ready) (void *), void *arg, int64 deadline_ms,
		const char *what, const char *path)
{
	for (;;)
	{
		bool		is_ready;
		bool		lost;
		int64		disconnected_at;
		int64		now;
		long		timeout = -1;
		int			events = WL_LATCH_SET | WL_EXIT_ON_PM_DEATH;

		ResetLatch(MyLatch);

		pthread_mutex_lock(&bridge.mutex);
		is_ready = ready(arg);
		lost = bridge.expired || bridge.auth_failed;
		disconnected_at = bridge.disconnected_at;
		pthread_mutex_unlock(&bridge.mutex);

		if (is_ready)
			return true;
		if (lost)
			zk_session_lost(what, path);

		now = ZkNowMs();
		if (disconnected_at != 0)
		{
			int64		give_up = disconnected_at + zk_negotiated_timeout;

			if (now >= give_up)
				ereport(ERROR,
						(errcode(ERRCODE_CONNECTION_FAILURE),
						 errmsg("lost connection to ZooKeeper while %s \"%s\"",
								what, path),
						 errdetail("The connection to \"%s\" was not regained within the session timeout of %d ms.",
								   zk_session_hosts, zk_negotiated_timeout)));
			timeout = (long) (give_up - now);
		}
		if (deadline_ms != 0)
		{
			if (now >= deadline_ms)
				return false;
			if (timeout < 0 || deadline_ms - now < timeout)
				timeout = (long) (deadline_ms - now);
		}
		if (timeout >= 0)
			events |= WL_TIMEOUT;

		(void) WaitLatch(MyLatch, events, timeout, PG_WAIT_EXTENSION);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * ZkOpWait
 *		Wait for an op's answer (which may be an error code, including
 *		connection loss: the caller decides what to do with it).
 */
void
ZkOpWait(ZkOp *op, const char *what, const char *path)
{
	(void) ZkOpWaitUntil(op, 0, what, path);
}

/*
 * ZkOpWaitUntil
 *		As ZkOpWait, but give up at deadline_ms; false if it passed.
 */
bool
ZkOpWaitUntil(ZkOp *op, int64 deadline_ms, const char *what, const char *path)
{
	bool		done;

	pthread_mutex_lock(&bridge.mutex);
	bridge.awaited = op;
	pthread_mutex_unlock(&bridge.mutex);

	done = zk_wait(zk_cond_op_done, op, deadline_ms, what, path);

	pthread_mutex_lock(&bridge.mutex);
	bridge.awaited = NULL;
	pthread_mutex_unlock(&bridge.mutex);
	return done;
}

/*
 * ZkWaitConnected
 *		Wait until the session is connected again (bounded by the session
 *		timeout, see zk_wait).
 */
void
ZkWaitConnected(const char *what, const char *path)
{
	(void) zk_wait(zk_cond_connected, NULL, 0, what, path);
}

/*
 * ZkWaitConnectedUntil
 *		As ZkWaitConnected, but give up at deadline_ms; false if it passed.
 */
bool
ZkWaitConnectedUntil(int64 deadline_ms, const char *what, const char *path)
{
	return zk_wait(zk_cond_connected, NULL, deadline_ms, what, path);
}

/*
 * ZkIsConnectionLoss
 *		Error codes after which the request may or may not have been
 *		applied, and which a reconnection within the session cures.
 */
bool
ZkIsConnectionLoss(int rc)
{
	return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT;
}

/*
 * ZkWatchArm
 *		Say which node the coming wait watches.  Must be called before the
 *		getData that sets the watch, so that no event can be missed.
 */
void
ZkWatchArm(const char *path)
{
	char	   *copy = strdup(path);

	if (copy == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	pthread_mutex_lock(&bridge.mutex);
	free(bridge.watch_path);
	bridge.watch_path = copy;
	bridge.watch_event = 0;
	pthread_mutex_unlock(&bridge.mutex);
}

/*
 * ZkWatchWait
 *		Wait for the armed watch to fire: returns the event type
 *		(ZOO_DELETED_EVENT, ZOO_CHANGED_EVENT), or 0 if deadline_ms passed.
 */
int
ZkWatchWait(int64 deadline_ms, const char *what, const char *path)
{
	int			event;

	if (!zk_wait(zk_cond_watch_fired, NULL, deadline_ms, what, path))
		return 0;
	pthread_mutex_lock(&bridge.mutex);
	event = bridge.watch_event;
	bridge.watch_event = 0;
	pthread_mutex_unlock(&bridge.mutex);
	return event;
}

/*
 * zk_job_start
 *		Create and send a background job.  Never raises an ERROR, so it is
 *		safe in abort paths; without a session there is nothing to do (the
 *		nodes went with it), and out of memory the node goes with the
 *		session (counted as a failed release).
 */
static void
zk_job_start(ZkJobKind kind, const char *path, const char *prefix)
{
	ZkJob	   *job;

	if (bridge.zh == NULL)
		return;
	job = zk_job_new(kind, path, prefix);
	if (job == NULL)
	{
		pthread_mutex_lock(&bridge.mutex);
		bridge.jobs_failed++;
		pthread_mutex_unlock(&bridge.mutex);
		return;
	}
	zk_job_issue(job);
}

/*
 * ZkDeleteInBackground
 *		Delete a node without waiting for the answer; retried after a lost
 *		connection until it succeeds or the session ends.
 */
void
ZkDeleteInBackground(const char *path)
{
	zk_job_start(ZKJOB_DELETE, path, NULL);
}

/*
 * ZkSweepInBackground
 *		Delete, in the background, every child of 'parent' whose name starts
 *		with 'prefix'.  Used for an attempt abandoned before its create
 *		answered: the sweep is sent after the create on the same session, so
 *		it sees the node if the create made one.
 */
void
ZkSweepInBackground(const char *parent, const char *prefix)
{
	zk_job_start(ZKJOB_SWEEP, parent, prefix);
}

/* ------------------------------------------------------------------------
 * Session lifecycle.
 * ------------------------------------------------------------------------
 */

/*
 * zk_settings_changed
 *		Do the settings that choose the session differ from those the open
 *		session was made with?  (zklock.root does not: it only decides
 *		where new locks go.)
 */
static bool
zk_settings_changed(void)
{
	const char *auth = (zklock_auth && zklock_auth[0]) ? zklock_auth : NULL;

	if (strcmp(zk_session_hosts, zklock_hosts) != 0)
		return true;
	if (zk_session_timeout_requested != zklock_session_timeout)
		return true;
	if ((auth == NULL) != (zk_session_auth == NULL))
		return true;
	return auth != NULL && strcmp(auth, zk_session_auth) != 0;
}

/*
 * ZkSessionEnsure
 *		Make sure the backend has a usable session: open one at the first
 *		call, replace one whose settings changed, and report an expired one
 *		(through the lost hook, which raises an ERROR naming the lost locks
 *		if there were any) before opening a fresh one.
 */
void
ZkSessionEnsure(void)
{
	if (bridge.zh != NULL)
	{
		bool		lost;
		int64		failed;

		pthread_mutex_lock(&bridge.mutex);
		lost = bridge.expired || bridge.auth_failed;
		failed = bridge.jobs_failed;
		pthread_mutex_unlock(&bridge.mutex);

		/* the completion thread cannot log: say it here, once */
		if (failed > zk_failures_reported)
		{
			ereport(WARNING,
					(errmsg_plural("%lld ZooKeeper release could not be completed",
								   "%lld ZooKeeper releases could not be completed",
								   failed - zk_failures_reported,
								   (long long) (failed - zk_failures_reported)),
					 errdetail("ZooKeeper refused to delete the queue nodes; they stay until the session ends."),
					 errhint("See zk_session().releases_failed.")));
			zk_failures_reported = failed;
		}

		if (lost)
		{
			zk_close_handle();
			if (zk_lost_hook)
				zk_lost_hook();
		}
		else if (zk_settings_changed())
		{
			if (zk_held_hook && zk_held_hook() > 0)
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("cannot switch to a new ZooKeeper session while this backend holds ZooKeeper locks"),
						 errdetail("zklock.hosts, zklock.auth or zklock.session_timeout changed since the session was opened."),
						 errhint("Release the locks with zk_unlock_all() first.")));
			zk_close_handle();
		}
		else
			return;
	}
	zk_connect();
}

/*
 * ZkSessionIsExpired
 *		Has the watcher seen the session expire (without waiting)?
 */
bool
ZkSessionIsExpired(void)
{
	bool		lost;

	if (bridge.zh == NULL)
		return false;
	pthread_mutex_lock(&bridge.mutex);
	lost = bridge.expired || bridge.auth_failed;
	pthread_mutex_unlock(&bridge.mutex);
	return lost;
}

/*
 * zk_connect
 *		Open a session on zklock.hosts and wait, at most
 *		zklock.connect_timeout and interruptibly, until it is connected.
 */
static void
zk_connect(void)
{
	sigset_t	all_signals;
	sigset_t	saved_signals;
	zhandle_t  *zh;
	int			saved_errno;
	const char *auth = (zklock_auth && zklock_auth[0]) ? zklock_auth : NULL;
	int64		deadline;

	if (auth != NULL && strchr(auth, ':') == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("zklock.auth must have the form user:password")));

	if (!zk_exit_callback_registered)
	{
		before_shmem_exit(zk_session_at_exit, (Datum) 0);
		RegisterXactCallback(zk_session_xact_callback, NULL);
		RegisterSubXactCallback(zk_session_subxact_callback, NULL);
		zk_protected_acl_entries[0].perms = ZOO_PERM_ALL;
		zk_protected_acl_entries[0].id = ZOO_AUTH_IDS;
		zk_protected_acl_entries[1].perms = ZOO_PERM_READ;
		zk_protected_acl_entries[1].id = ZOO_ANYONE_ID_UNSAFE;
		zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
		zk_exit_callback_registered = true;
	}

	pthread_mutex_lock(&bridge.mutex);
	bridge.latch = MyLatch;
	bridge.closing = false;
	bridge.state = 0;
	bridge.expired = false;
	bridge.auth_failed = false;
	bridge.connected_at = 0;
	bridge.disconnected_at = ZkNowMs();
	pthread_mutex_unlock(&bridge.mutex);

	/* the library's threads inherit this mask: no signal ever reaches them */
	sigfillset(&all_signals);
	pthread_sigmask(SIG_SETMASK, &all_signals, &saved_signals);
	errno = 0;
	zh = zookeeper_init2(zklock_hosts, zk_session_watcher,
						 zklock_session_timeout, NULL, NULL,
						 ZOO_NO_LOG_CLIENTENV, NULL);
	saved_errno = errno;
	pthread_sigmask(SIG_SETMASK, &saved_signals, NULL);

	if (zh == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
				 errmsg("could not connect to ZooKeeper at \"%s\"", zklock_hosts),
				 saved_errno == EINVAL ?
				 errdetail("The host list is not a valid list of host:port pairs.") :
				 errdetail_internal("%s", strerror(saved_errno))));

	pthread_mutex_lock(&bridge.mutex);
	bridge.zh = zh;
	pthread_mutex_unlock(&bridge.mutex);

	PG_TRY();
	{
		deadline = ZkNowMs() + zklock_connect_timeout;
		for (;;)
		{
			int			state;
			bool		lost;
			int64		now;

			ResetLatch(MyLatch);
			pthread_mutex_lock(&bridge.mutex);
			state = bridge.state;
			lost = bridge.expired || bridge.auth_failed;
			pthread_mutex_unlock(&bridge.mutex);

			if (state == ZOO_CONNECTED_STATE)
				break;
			now = ZkNowMs();
			if (lost || now >= deadline)
				ereport(ERROR,
						(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
						 errmsg("could not connect to ZooKeeper at \"%s\"",
								zklock_hosts),
						 lost ?
						 errdetail("The server refused the new session.") :
						 errdetail("No ZooKeeper server answered within zklock.connect_timeout (%d ms).",
								   zklock_connect_timeout)));
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 (long) (deadline - now), PG_WAIT_EXTENSION);
			CHECK_FOR_INTERRUPTS();
		}

		zk_negotiated_timeout = zoo_recv_timeout(zh);

		if (auth != NULL)
		{
			ZkOp	   *op = zk_op_new(ZKOP_AUTH);
			int			rc;

			zk_op_issued(op, zoo_add_auth(zh, "digest", auth, (int) strlen(auth),
										  zk_op_void_done, op));
			if (!ZkOpWaitUntil(op, deadline + zk_negotiated_timeout,
							   "authenticating to", zklock_hosts))
				rc = ZOPERATIONTIMEOUT;
			else
				rc = op->rc;
			ZkOpFree(op);
			if (rc != ZOK)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION),
						 errmsg("ZooKeeper authentication failed at \"%s\"",
								zklock_hosts),
						 errdetail_internal("%s", zerror(rc))));
		}
	}
	PG_CATCH();
	{
		zk_close_handle();
		PG_RE_THROW();
	}
	PG_END_TRY();

	zk_session_hosts = MemoryContextStrdup(TopMemoryContext, zklock_hosts);
	zk_session_auth = auth ? MemoryContextStrdup(TopMemoryContext, auth) : NULL;
	zk_session_timeout_requested = zklock_session_timeout;
}

/*
 * zk_close_handle
 *		Close the session (which deletes all its ephemeral nodes on the
 *		server) and forget it.  zookeeper_close() joins the library's
 *		threads; pending completions run with ZCLOSING before it returns.
 */
static void
zk_close_handle(void)
{
	zhandle_t  *zh = bridge.zh;
	ZkJob	   *deferred;

	if (zh == NULL)
		return;

	pthread_mutex_lock(&bridge.mutex);
	bridge.closing = true;
	deferred = bridge.deferred;
	bridge.deferred = NULL;
	pthread_mutex_unlock(&bridge.mutex);

	zookeeper_close(zh);

	while (deferred != NULL)
	{
		ZkJob	   *next = deferred->next;

		zk_job_free(deferred, true);
		deferred = next;
	}

	pthread_mutex_lock(&bridge.mutex);
	bridge.zh = NULL;
	bridge.closing = false;
	bridge.state = 0;
	bridge.connected_at = 0;
	bridge.disconnected_at = 0;
	free(bridge.watch_path);
	bridge.watch_path = NULL;
	bridge.watch_event = 0;
	bridge.jobs_pending = 0;
	while (bridge.deleted_held != NULL)
	{
		ZkDeletedNode *next = bridge.deleted_held->next;

		free(bridge.deleted_held->path);
		free(bridge.deleted_held);
		bridge.deleted_held = next;
	}
	pthread_mutex_unlock(&bridge.mutex);

	/* ops that never got an answer will not get one now */
	{
		dlist_mutable_iter iter;

		dlist_foreach_modify(iter, &zk_live_ops)
		{
			ZkOp	   *op = dlist_container(ZkOp, node, iter.cur);

			if (!op->done)
			{
				op->rc = ZCLOSING;
				op->done = true;
			}
		}
	}

	if (zk_session_hosts)
		pfree(zk_session_hosts);
	if (zk_session_auth)
		pfree(zk_session_auth);
	zk_session_hosts = NULL;
	zk_session_auth = NULL;
}

/*
 * zk_session_lost
 *		The session expired in the middle of an operation: close it, let the
 *		lock table report the lost locks, and fail the operation.
 */
static void
zk_session_lost(const char *what, const char *path)
{
	bool		auth_failed;

	pthread_mutex_lock(&bridge.mutex);
	auth_failed = bridge.auth_failed && !bridge.expired;
	pthread_mutex_unlock(&bridge.mutex);

	zk_close_handle();
	if (zk_lost_hook)
		zk_lost_hook();
	if (auth_failed)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION),
				 errmsg("ZooKeeper authentication failed while %s \"%s\"",
						what, path)));
	ereport(ERROR,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg("ZooKeeper session expired while %s \"%s\"", what, path)));
}

/*
 * ZkRaiseForRc
 *		Turn a ZooKeeper error code into the contract's ERROR.
 */
void
ZkRaiseForRc(int rc, const char *what, const char *path)
{
	if (rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE ||
		rc == ZAUTHFAILED || ZkSessionIsExpired())
		zk_session_lost(what, path);
	if (rc == ZSESSIONCLOSEDREQUIRESASLAUTH)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION),
				 errmsg("ZooKeeper requires authentication while %s \"%s\"",
						what, path),
				 errdetail("The server closed the session because it was not authenticated with a scheme the server enforces."),
				 errhint("Set zklock.auth.")));
	if (rc == ZNOAUTH)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("ZooKeeper refused access while %s \"%s\"", what, path),
				 errdetail("The node's ACL does not allow this session's identity."),
				 errhint("Check zklock.auth and the ACLs under zklock.root.")));
	if (ZkIsConnectionLoss(rc) || rc == ZCLOSING)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("lost connection to ZooKeeper while %s \"%s\"",
						what, path),
				 errdetail_internal("%s", zerror(rc))));
	ereport(ERROR,
			(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
			 errmsg("ZooKeeper error while %s \"%s\"", what, path),
			 errdetail_internal("%s", zerror(rc))));
}

/*
 * ZkSessionGetStatus
 *		What zk_session() shows.
 */
void
ZkSessionGetStatus(ZkSessionStatus *status)
{
	memset(status, 0, sizeof(*status));
	pthread_mutex_lock(&bridge.mutex);
	status->releases_pending = bridge.jobs_pending;
	status->releases_failed = bridge.jobs_failed;
	if (bridge.zh == NULL)
		status->state = "closed";
	else if (bridge.expired)
		status->state = "expired";
	else if (bridge.auth_failed)
		status->state = "auth_failed";
	else if (bridge.state == ZOO_CONNECTED_STATE)
		status->state = "connected";
	else
		status->state = "connecting";
	if (bridge.zh != NULL && bridge.connected_at != 0)
		status->connected_for_ms = ZkNowMs() - bridge.connected_at;
	pthread_mutex_unlock(&bridge.mutex);

	if (bridge.zh != NULL)
	{
		const clientid_t *cid = zoo_client_id(bridge.zh);
		const char *server = zoo_get_current_server(bridge.zh);

		status->session_id = cid ? cid->client_id : 0;
		strlcpy(status->server, server ? server : "", sizeof(status->server));
		status->negotiated_timeout = zoo_recv_timeout(bridge.zh);
	}
}

/*
 * zk_session_at_exit
 *		before_shmem_exit callback: close the session, so that other servers
 *		see this backend's locks go at once rather than after the session
 *		timeout.
 */
static void
zk_session_at_exit(int code, Datum arg)
{
	zk_close_handle();
}

/*
 * zk_session_xact_callback / zk_session_subxact_callback
 *		An ERROR may leave ops without an owner; give them to the completion
 *		thread to free.  Returns at once when none are live.
 */
static void
zk_session_xact_callback(XactEvent event, void *arg)
{
	if (dlist_is_empty(&zk_live_ops))
		return;
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		zk_abandon_ops(0);
}

static void
zk_session_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
							SubTransactionId parentSubid, void *arg)
{
	if (dlist_is_empty(&zk_live_ops))
		return;
	if (event == SUBXACT_EVENT_ABORT_SUB)
		zk_abandon_ops(GetCurrentTransactionNestLevel());
}
