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
 * send a release (a delete, or a multi of deletes) again when it failed
 * because the connection was lost: it calls the thread-safe client
 * library, never PostgreSQL, so that a release completes once the
 * connection is back even while the backend sits idle waiting for its
 * client.  Such a delete is retried until it succeeds or the session ends,
 * which deletes the node anyway.  A backend that wants to know when its
 * releases are applied (synchronous release) waits for a ZKOP_RELEASE op
 * that the last of the batch's deletes completes.
 *
 * The session lease.  Every answer the server sends to one of our requests
 * proves that the session was alive when the server processed it, which
 * was after the request was sent.  The completion thread records the send
 * time of the latest request so answered (bridge.lease_sent_at): a session
 * the server heard from at that time cannot expire before that time plus
 * the session timeout, so a COMMIT within a third of the timeout of it
 * needs no round trip (ZkSessionLeaseFresh, ZkSessionConfirmAlive).
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
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/memutils.h"

#include "credentials.h"
#include "stats.h"
#include "text_encoding.h"
#include "zk_session.h"
#include "vocabulary.h"

/*
 * A background request: delete one node, or delete the children of a node
 * whose names start with a prefix (used when an attempt is abandoned before
 * its create answered, so that our node cannot survive as an orphan).
 */
typedef enum ZkJobKind
{
	ZKJOB_DELETE,
	ZKJOB_MULTI_DELETE,
	ZKJOB_SWEEP
} ZkJobKind;

typedef struct ZkJob
{
	ZkJobKind	kind;
	char	   *path;			/* node to delete, or parent to sweep */
	char	   *prefix;			/* sweep only */
	char	  **paths;			/* multi delete: the nodes */
	int			npaths;
	zoo_op_t   *ops;			/* multi delete: request and results, */
	zoo_op_result_t *results;	/* alive until the completion ran */
	ZkOp	   *waiter;			/* release op counting this job, or NULL */
	bool		persistent;		/* its nodes outlive the session: if the
								 * session ends first, carry the job over to
								 * the next one (ZkGuardRemove) */
	int64		sent_at;		/* monotonic ms of the last send */
	struct ZkJob *next;			/* in bridge.deferred or bridge.carried */
} ZkJob;

/*
 * Largest multi of deletes we send, in bytes of paths.  ZooKeeper refuses
 * packets over jute.maxbuffer (1 MB by default); staying well below keeps
 * each multi one modest transaction.
 */
#define ZK_MULTI_DELETE_BYTES	(128 * 1024)

/*
 * Shortest time between two "routine" resolutions of zklock.hosts by the
 * client library (zoo_set_servers_resolution_delay): DNS changes are seen
 * within this time, or at once after a lost connection.
 */
#define ZK_RESOLVE_DELAY_MS		30000

/*
 * Request and results of a multi that creates nodes (ZkCreateSet): for
 * each node a create, followed, when counted, by a setData of its parent.
 * Everything is malloc'd: the completion thread writes the results.
 */
typedef struct ZkMultiAux
{
	int			n;				/* nodes created (ZkMulti: requests) */
	int			nops;			/* requests in the multi */
	bool		counted;		/* each create is followed by a setData */
	zoo_op_t   *ops;
	zoo_op_result_t *results;
	struct Stat *parent_stats;	/* counted: each parent's Stat */
	char	  **created;		/* each create's path buffer */
} ZkMultiAux;

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
	ZkJob	   *carried;		/* persistent jobs whose session ended: sent
								 * again by the next session */
	int			jobs_pending;
	int64		jobs_failed;
	ZkDeletedNode *deleted_held;	/* held nodes seen deleted */
	ZkOp	   *awaited;		/* the op the backend waits for, if any */
	int64		lease_sent_at;	/* send time of the latest request the
								 * server answered; 0: none yet */
	uint64		answers;		/* answers so far (progress of a batch) */
} ZkBridge;

static ZkBridge bridge = {.mutex = PTHREAD_MUTEX_INITIALIZER};

/* Backend-only state. */
static bool zk_exit_callback_registered = false;
static dlist_head zk_live_ops = DLIST_STATIC_INIT(zk_live_ops);
static char *zk_session_hosts = NULL;	/* settings the session was opened */
static char *zk_session_auth = NULL;	/* with (TopMemoryContext): the */
static char *zk_session_auth_file = NULL;	/* zklock.auth and .auth_file
											 * settings, not the secret */
static bool zk_session_authenticated = false;
static int	zk_session_timeout_requested = 0;
static int	zk_negotiated_timeout = 0;	/* ms */
static ZkSessionLostHook zk_lost_hook = NULL;
static ZkLocksHeldHook zk_held_hook = NULL;
static int64 zk_failures_reported = 0;	/* background jobs_failed we warned of */
static uint64 zk_watch_waits = 0;	/* ZkWatchWait calls, ever */

/* descriptors the client library holds open: its socket and a pipe */
#define ZK_CLIENT_FDS 3
static int	zk_fds_reserved = 0;	/* reserved with AcquireExternalFD */

/* ACLs: world-open, or (with zklock.auth) creator-all plus world read */
static struct ACL zk_protected_acl_entries[2];
static struct ACL_vector zk_protected_acl = {2, zk_protected_acl_entries};

/* private prototypes */
static int64 zk_now_us(void);
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
static void zk_op_multi_done(int rc, const void *data);
static void zk_op_generic_multi_done(int rc, const void *data);
static bool zk_rc_from_server(int rc);
static void zk_note_answer_locked(int64 sent_at, int rc);
static void zk_op_release(ZkOp *op);
static ZkOp *zk_op_new(ZkOpKind kind);
static void zk_op_issued(ZkOp *op, int rc);
static zhandle_t *zk_handle(void);
static ZkJob *zk_job_new(ZkJobKind kind, const char *path, const char *prefix,
						 ZkOp *waiter);
static ZkJob *zk_job_new_multi(const char *const *paths, int n, ZkOp *waiter);
static void zk_job_free(ZkJob *job, bool succeeded);
static void zk_job_issue(ZkJob *job);
static void zk_job_start(ZkJobKind kind, const char *path, const char *prefix);
static void zk_job_retry_later(ZkJob *job);
static bool zk_job_done_ok(int rc);
static bool zk_session_gone(int rc);
static void zk_job_ended(ZkJob *job, int rc);
static void zk_job_carry(ZkJob *job);
static bool zk_job_answered(ZkJob *job, int rc);
static void zk_job_free_memory(ZkJob *job);
static void zk_job_counted(ZkJob *job, ZkOp *waiter);
static void zk_job_delete_done(int rc, const void *data);
static void zk_job_multi_done(int rc, const void *data);
static void zk_job_sweep_done(int rc, const struct String_vector *strings,
							  const void *data);
static void zk_connect(void);
static void zk_close_handle(void);
static void zk_reserve_fds(void);
static void zk_release_fds(void);
static void zk_session_at_exit(int code, Datum arg);
static void zk_session_xact_callback(XactEvent event, void *arg);
static void zk_session_subxact_callback(SubXactEvent event,
										SubTransactionId mySubid,
										SubTransactionId parentSubid,
										void *arg);
static void zk_session_lost(const char *what, const char *path) pg_attribute_noreturn();
typedef enum ZkWaitResult
{
	ZK_WAIT_READY,				/* the condition holds */
	ZK_WAIT_DEADLINE,			/* the deadline passed */
	ZK_WAIT_LOST,				/* the session expired or auth failed */
	ZK_WAIT_CUT_OFF				/* disconnected for the session timeout */
} ZkWaitResult;

static ZkWaitResult zk_wait_status(bool (*ready) (void *), void *arg,
								   int64 deadline_ms);
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
 * zk_now_us
 *		The monotonic clock in microseconds, for request latencies; also
 *		readable on the library's threads.
 */
static int64
zk_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
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
	if (op->kind != ZKOP_RELEASE)
		zk_note_answer_locked(op->sent_at, rc);
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
		op->done_us = zk_now_us();
		op->done = true;
	}
	pthread_mutex_unlock(&bridge.mutex);

	if (abandoned)
	{
		free(value);
		for (int i = 0; i < nchildren; i++)
			free(children[i]);
		free(children);
		zk_op_release(op);
		return;
	}
	if (latch)
		SetLatch(latch);
}

/*
 * zk_rc_from_server
 *		Is this result code an answer of the server (as opposed to one the
 *		client library made up: lost connection, closing, expired)?  Only
 *		those prove the session alive.
 */
static bool
zk_rc_from_server(int rc)
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
 *		Record an answer: the lease now runs from the send time of the
 *		request, if that is later than what we had.  Caller holds
 *		bridge.mutex.
 */
static void
zk_note_answer_locked(int64 sent_at, int rc)
{
	bridge.answers++;
	if (sent_at > bridge.lease_sent_at && zk_rc_from_server(rc) &&
		!bridge.expired && !bridge.closing)
		bridge.lease_sent_at = sent_at;
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
 * zk_op_multi_done
 *		Completion of a multi of creates.  The results stay in op->multi
 *		for ZkCreateSetResult; for one node they are also copied to the op
 *		itself: the created path, its czxid (the transaction's zxid, which
 *		is also the parent's new mzxid) and the number of children the
 *		parent had right after it.
 */
static void
zk_op_multi_done(int rc, const void *data)
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
 * zk_op_generic_multi_done
 *		Completion of a ZkMulti: the results stay in op->multi; the Stat of
 *		the first setData, if any, is copied to the op.
 */
static void
zk_op_generic_multi_done(int rc, const void *data)
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
 * zk_job_free
 *		A background job is over, one way or the other.
 */
static void
zk_job_free(ZkJob *job, bool succeeded)
{
	ZkOp	   *finished = NULL;

	pthread_mutex_lock(&bridge.mutex);
	bridge.jobs_pending--;
	if (!succeeded)
		bridge.jobs_failed++;
	if (job->waiter != NULL && --job->waiter->pending == 0)
		finished = job->waiter;
	pthread_mutex_unlock(&bridge.mutex);

	/* the last delete of a batch completes the op its backend waits for */
	if (finished != NULL)
		zk_op_finish(finished, ZOK, NULL, NULL, 0, NULL, 0);

	zk_job_free_memory(job);
}

/*
 * zk_job_free_memory
 *		Free a job's memory (it is no longer counted anywhere).
 */
static void
zk_job_free_memory(ZkJob *job)
{
	free(job->path);
	free(job->prefix);
	for (int i = 0; i < job->npaths; i++)
		free(job->paths[i]);
	free(job->paths);
	free(job->ops);
	free(job->results);
	free(job);
}

/*
 * zk_job_new
 *		malloc a job; NULL if memory ran out (the caller decides).
 */
static ZkJob *
zk_job_new(ZkJobKind kind, const char *path, const char *prefix,
		   ZkOp *waiter)
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
	zk_job_counted(job, waiter);
	return job;
}

/*
 * zk_job_counted
 *		A new job is pending, and counts for its waiter (if any) until it
 *		is freed.
 */
static void
zk_job_counted(ZkJob *job, ZkOp *waiter)
{
	job->waiter = waiter;
	pthread_mutex_lock(&bridge.mutex);
	bridge.jobs_pending++;
	if (waiter != NULL)
		waiter->pending++;
	pthread_mutex_unlock(&bridge.mutex);
}

/*
 * zk_job_new_multi
 *		malloc a job deleting n nodes in one multi; NULL if memory ran out.
 */
static ZkJob *
zk_job_new_multi(const char *const *paths, int n, ZkOp *waiter)
{
	ZkJob	   *job = calloc(1, sizeof(ZkJob));
	bool		ok;

	if (job == NULL)
		return NULL;
	job->kind = ZKJOB_MULTI_DELETE;
	job->paths = calloc(n, sizeof(char *));
	job->ops = calloc(n, sizeof(zoo_op_t));
	job->results = calloc(n, sizeof(zoo_op_result_t));
	ok = (job->paths != NULL && job->ops != NULL && job->results != NULL);
	for (int i = 0; ok && i < n; i++)
	{
		job->paths[i] = strdup(paths[i]);
		if (job->paths[i] == NULL)
			ok = false;
		else
			job->npaths++;
	}
	if (!ok)
	{
		zk_job_free_memory(job);
		return NULL;
	}
	zk_job_counted(job, waiter);
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
		/* no session: its close deleted the node already, if ephemeral */
		if (job->persistent)
			zk_job_carry(job);
		else
			zk_job_free(job, true);
		return;
	}
	job->sent_at = ZkNowMs();
	if (job->kind == ZKJOB_DELETE)
		rc = zoo_adelete(zh, job->path, -1, zk_job_delete_done, job);
	else if (job->kind == ZKJOB_MULTI_DELETE)
	{
		for (int i = 0; i < job->npaths; i++)
			zoo_delete_op_init(&job->ops[i], job->paths[i], -1);
		rc = zoo_amulti(zh, job->npaths, job->ops, job->results,
						zk_job_multi_done, job);
	}
	else
		rc = zoo_aget_children(zh, job->path, 0, zk_job_sweep_done, job);
	if (rc != ZOK)
		zk_job_ended(job, rc);
}

/*
 * zk_session_gone
 *		Result codes that say the session itself is over (closed, expired,
 *		refused): nothing more can be done on it.
 */
static bool
zk_session_gone(int rc)
{
	return rc == ZSESSIONEXPIRED || rc == ZCLOSING || rc == ZINVALIDSTATE ||
		rc == ZAUTHFAILED || rc == ZSESSIONCLOSEDREQUIRESASLAUTH;
}

/*
 * zk_job_ended
 *		A job got its final answer (not a lost connection).  A persistent
 *		job whose session ended is carried over to the next session: the
 *		end of the session deleted nothing of it.
 */
static void
zk_job_ended(ZkJob *job, int rc)
{
	if (job->persistent && zk_session_gone(rc))
		zk_job_carry(job);
	else
		zk_job_free(job, zk_job_done_ok(rc));
}

/*
 * zk_job_carry
 *		Keep a persistent job for the next session (zk_connect sends it
 *		again).  It no longer counts as pending, nor for a waiter: whoever
 *		waited learns that the session ended.
 */
static void
zk_job_carry(ZkJob *job)
{
	ZkOp	   *finished = NULL;

	pthread_mutex_lock(&bridge.mutex);
	bridge.jobs_pending--;
	if (job->waiter != NULL && --job->waiter->pending == 0)
		finished = job->waiter;
	job->waiter = NULL;
	job->next = bridge.carried;
	bridge.carried = job;
	pthread_mutex_unlock(&bridge.mutex);

	if (finished != NULL)
		zk_op_finish(finished, ZSESSIONEXPIRED, NULL, NULL, 0, NULL, 0);
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

/*
 * zk_job_answered
 *		Record a job's answer (it may renew the lease).  A lost connection
 *		sends the job again later: then true, and the job is no longer the
 *		caller's.
 */
static bool
zk_job_answered(ZkJob *job, int rc)
{
	pthread_mutex_lock(&bridge.mutex);
	zk_note_answer_locked(job->sent_at, rc);
	pthread_mutex_unlock(&bridge.mutex);

	if (!ZkIsConnectionLoss(rc))
		return false;
	zk_job_retry_later(job);
	return true;
}

static void
zk_job_delete_done(int rc, const void *data)
{
	ZkJob	   *job = (ZkJob *) data;

	if (!zk_job_answered(job, rc))
		zk_job_ended(job, rc);
}

/*
 * zk_job_multi_done
 *		A multi of deletes answered.  A multi is all or nothing: if one of
 *		its nodes was gone already (or one delete was refused), nothing was
 *		deleted, so each node is then deleted on its own; those deletes
 *		count for the same waiter, which they join before this job leaves
 *		it.  A multi whose answer was lost may have been applied: sent
 *		again, it fails on the first node and splits the same way.
 */
static void
zk_job_multi_done(int rc, const void *data)
{
	ZkJob	   *job = (ZkJob *) data;

	if (zk_job_answered(job, rc))
		return;
	/* refused by the server: split; else done, or the session is gone */
	if (rc != ZOK && zk_rc_from_server(rc))
	{
		for (int i = 0; i < job->npaths; i++)
		{
			ZkJob	   *del = zk_job_new(ZKJOB_DELETE, job->paths[i], NULL,
										 job->waiter);

			if (del != NULL)
				zk_job_issue(del);
			else
			{
				pthread_mutex_lock(&bridge.mutex);
				bridge.jobs_failed++;
				pthread_mutex_unlock(&bridge.mutex);
			}
		}
	}
	zk_job_free(job, true);
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
			/* the deletes count for whoever waits for the sweep */
			del = zk_job_new(ZKJOB_DELETE, path, NULL, job->waiter);
			free(path);
			if (del != NULL)
			{
				del->persistent = job->persistent;
				zk_job_issue(del);
			}
		}
	}
	zk_job_ended(job, rc);
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
		elog(ERROR, "no ZooKeeper session");
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
	op->sent_at = ZkNowMs();
	op->sent_us = zk_now_us();
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

	if (protect && zk_session_authenticated)
		acl = &zk_protected_acl;
	zk_op_issued(op, zoo_acreate2(zk_handle(), path, data, datalen, acl,
								  flags, zk_op_string_stat_done, op));
	return op;
}

/*
 * ZkCreateTtl
 *		Start the create of a persistent-sequential node with a TTL of
 *		ttl_ms: the server deletes it once it has had no child and no
 *		modification for that long (ZooKeeper runs this check every
 *		znode.container.checkIntervalMs).  Needs a server started with
 *		zookeeper.extendedTypesEnabled=true; any other answers ZUNIMPLEMENTED.
 *		ACLs as ZkCreate's with 'protect'.  The answer carries the created
 *		path and the node's Stat.
 */
ZkOp *
ZkCreateTtl(const char *path, const char *data, int datalen, int64 ttl_ms)
{
	ZkOp	   *op = zk_op_new(ZKOP_CREATE);
	const struct ACL_vector *acl = &ZOO_OPEN_ACL_UNSAFE;

	if (zk_session_authenticated)
		acl = &zk_protected_acl;
	zk_op_issued(op, zoo_acreate2_ttl(zk_handle(), path, data, datalen, acl,
									  ZOO_PERSISTENT_SEQUENTIAL_WITH_TTL,
									  ttl_ms, zk_op_string_stat_done, op));
	return op;
}

/*
 * ZkCreateCounted
 *		Create an ephemeral-sequential node under 'parent' and learn, in the
 *		same round trip, how many children the parent has right after: one
 *		ZooKeeper multi of the create and a setData of the parent (empty
 *		data, any version), whose answer carries the parent's Stat.  When
 *		that count is 1, the node is alone and its queue need not be read:
 *		an uncontended lock costs one write.  The op's stat.czxid is the
 *		node's czxid (the multi's zxid); op->parent_children the count.
 *
 * The parent's data is overwritten with nothing: lock nodes carry no data
 * in any recipe zklock shares a queue with.
 */
ZkOp *
ZkCreateCounted(const char *path, const char *data, int datalen,
				const char *parent)
{
	const char *datas[1] = {data};
	int			datalens[1] = {datalen};

	return ZkCreateSet(1, &path, datas, datalens, &parent);
}

/*
 * ZkCreateSet
 *		Create n ephemeral-sequential nodes in one ZooKeeper multi: all or
 *		none, one transaction, so they all get the same czxid.  With
 *		'parents', each create is followed by an (empty) setData of that
 *		parent, whose Stat tells how many children it has right after
 *		(ZkCreateSetResult); without, the multi holds only the creates.
 *		Nodes are protected like ZkCreate's when authenticated.
 */
ZkOp *
ZkCreateSet(int n, const char *const *paths, const char *const *datas,
			const int *datalens, const char *const *parents)
{
	ZkOp	   *op = zk_op_new(ZKOP_CREATE_COUNTED);
	ZkMultiAux *aux = calloc(1, sizeof(ZkMultiAux));
	const struct ACL_vector *acl = &ZOO_OPEN_ACL_UNSAFE;
	int			per = parents != NULL ? 2 : 1;
	bool		ok;

	op->multi = aux;
	ok = aux != NULL &&
		(aux->ops = calloc(n * per, sizeof(zoo_op_t))) != NULL &&
		(aux->results = calloc(n * per, sizeof(zoo_op_result_t))) != NULL &&
		(aux->parent_stats = calloc(n, sizeof(struct Stat))) != NULL &&
		(aux->created = calloc(n, sizeof(char *))) != NULL;
	if (ok)
	{
		aux->n = n;
		aux->nops = n * per;
		aux->counted = (parents != NULL);
		for (int i = 0; i < n && ok; i++)
			ok = (aux->created[i] = calloc(1, strlen(paths[i]) + 16)) != NULL;
	}
	if (!ok)
	{
		ZkOpFree(op);
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	}
	if (zk_session_authenticated)
		acl = &zk_protected_acl;
	for (int i = 0; i < n; i++)
	{
		zoo_create_op_init(&aux->ops[i * per], paths[i], datas[i], datalens[i],
						   acl, ZOO_EPHEMERAL_SEQUENTIAL, aux->created[i],
						   (int) strlen(paths[i]) + 16);
		if (parents != NULL)
			zoo_set_op_init(&aux->ops[i * per + 1], parents[i], "", 0, -1,
							&aux->parent_stats[i]);
	}
	zk_op_issued(op, zoo_amulti(zk_handle(), n * per, aux->ops, aux->results,
								zk_op_multi_done, op));
	return op;
}

/*
 * ZkCreateSetResult
 *		After a successful ZkCreateSet: node i's path, and (counted) how
 *		many children its parent had right after the multi (else -1).
 *		The path lives as long as the op.
 */
const char *
ZkCreateSetResult(const ZkOp *op, int i, int32 *parent_children)
{
	ZkMultiAux *aux = op->multi;

	*parent_children = aux->counted ? aux->parent_stats[i].numChildren : -1;
	return aux->created[i];
}

/*
 * ZkCreateSetFailure
 *		After a failed ZkCreateSet: the index of the node whose create or
 *		setData the server refused (the others report only that the
 *		transaction was rolled back), or -1 if none says (the multi was
 *		not applied at all: a lost connection, say).
 */
int
ZkCreateSetFailure(const ZkOp *op)
{
	ZkMultiAux *aux = op->multi;
	int			per = aux->counted ? 2 : 1;

	for (int i = 0; i < aux->n * per; i++)
	{
		int			err = aux->results[i].err;

		if (err != ZOK && err != ZRUNTIMEINCONSISTENCY)
			return i / per;
	}
	return -1;
}

/*
 * ZkMulti
 *		Start a ZooKeeper multi of setData, delete, check and create requests
 *		(a create makes a persistent node, protected like ZkCreate's): all
 *		applied in one transaction, or none.  The op's stat is the Stat of
 *		the first setData (the node's new mtime and version); ZkMultiFailure
 *		tells which request a refusal was about.
 */
ZkOp *
ZkMulti(int n, const ZkMultiReq *reqs)
{
	ZkOp	   *op = zk_op_new(ZKOP_MULTI);
	ZkMultiAux *aux = calloc(1, sizeof(ZkMultiAux));
	bool		ok;

	op->multi = aux;
	ok = aux != NULL &&
		(aux->ops = calloc(n, sizeof(zoo_op_t))) != NULL &&
		(aux->results = calloc(n, sizeof(zoo_op_result_t))) != NULL &&
		(aux->parent_stats = calloc(n, sizeof(struct Stat))) != NULL;
	if (!ok)
	{
		ZkOpFree(op);
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	}
	aux->n = n;
	aux->nops = n;
	for (int i = 0; i < n; i++)
	{
		switch (reqs[i].kind)
		{
			case ZK_MULTI_SET:
				zoo_set_op_init(&aux->ops[i], reqs[i].path, reqs[i].data,
								reqs[i].datalen, reqs[i].version,
								&aux->parent_stats[i]);
				break;
			case ZK_MULTI_DELETE:
				zoo_delete_op_init(&aux->ops[i], reqs[i].path,
								   reqs[i].version);
				break;
			case ZK_MULTI_CHECK:
				zoo_check_op_init(&aux->ops[i], reqs[i].path,
								  reqs[i].version);
				break;
			case ZK_MULTI_CREATE:
				/* the created path is not needed: it is the one given */
				zoo_create_op_init(&aux->ops[i], reqs[i].path, reqs[i].data,
								   reqs[i].datalen,
								   zk_session_authenticated ?
								   &zk_protected_acl : &ZOO_OPEN_ACL_UNSAFE,
								   ZOO_PERSISTENT, NULL, 0);
				break;
		}
	}
	zk_op_issued(op, zoo_amulti(zk_handle(), n, aux->ops, aux->results,
								zk_op_generic_multi_done, op));
	return op;
}

/*
 * ZkMultiFailure
 *		After a failed ZkMulti: the index of the request the server refused
 *		(the others report only that the transaction was rolled back), or
 *		-1 if none says.  *err is that request's result code.
 */
int
ZkMultiFailure(const ZkOp *op, int *err)
{
	ZkMultiAux *aux = op->multi;

	for (int i = 0; i < aux->nops; i++)
	{
		int			e = aux->results[i].err;

		if (e != ZOK && e != ZRUNTIMEINCONSISTENCY)
		{
			*err = e;
			return i;
		}
	}
	*err = op->rc;
	return -1;
}

/*
 * ZkGetChildrenWatched
 *		Start a getChildren that leaves a child watch on the node, firing
 *		for the path armed with ZkWatchArm() (ZOO_CHILD_EVENT when a child
 *		comes or goes, ZOO_DELETED_EVENT if the node itself goes).
 */
ZkOp *
ZkGetChildrenWatched(const char *path)
{
	ZkOp	   *op = zk_op_new(ZKOP_CHILDREN);

	zk_op_issued(op, zoo_awget_children(zk_handle(), path, zk_node_watcher,
										NULL, zk_op_strings_done, op));
	return op;
}

/*
 * ZkSetData
 *		Start a setData of any version.  An op freed before its answer
 *		completes in the background.
 */
ZkOp *
ZkSetData(const char *path, const char *data, int datalen)
{
	ZkOp	   *op = zk_op_new(ZKOP_EXISTS);

	zk_op_issued(op, zoo_aset(zk_handle(), path, data, datalen, -1,
							  zk_op_stat_done, op));
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

/*
 * ZkHeldNodeEvent
 *		Has a held-node watch on this path fired (without taking the
 *		event)?  0: no; ZOO_DELETED_EVENT or ZOO_CHANGED_EVENT: yes.  A
 *		deletion wins over a change.
 */
int
ZkHeldNodeEvent(const char *path)
{
	int			event = 0;

	pthread_mutex_lock(&bridge.mutex);
	for (ZkDeletedNode *d = bridge.deleted_held; d != NULL; d = d->next)
	{
		if (strcmp(d->path, path) != 0)
			continue;
		if (d->deleted)
		{
			event = ZOO_DELETED_EVENT;
			break;
		}
		event = ZOO_CHANGED_EVENT;
	}
	pthread_mutex_unlock(&bridge.mutex);
	return event;
}

/*
 * ZkDelete
 *		Start a delete of one node, if its version is 'version' (-1: any),
 *		whose answer the caller waits for.  (Releases of held locks go
 *		through ZkDeleteNodes, which retries them in the background.)
 */
ZkOp *
ZkDelete(const char *path, int version)
{
	ZkOp	   *op = zk_op_new(ZKOP_EXISTS);

	zk_op_issued(op, zoo_adelete(zk_handle(), path, version,
								 zk_op_void_done, op));
	return op;
}

/*
 * ZkExistsWatched
 *		Start an exists that leaves a watch on the node, whether or not it
 *		exists, firing for the path armed with ZkWatchArm()
 *		(ZOO_CREATED_EVENT, ZOO_DELETED_EVENT, ZOO_CHANGED_EVENT).
 */
ZkOp *
ZkExistsWatched(const char *path)
{
	ZkOp	   *op = zk_op_new(ZKOP_EXISTS);

	zk_op_issued(op, zoo_awexists(zk_handle(), path, zk_node_watcher, NULL,
								  zk_op_stat_done, op));
	return op;
}

/*
 * ZkWatchDrop
 *		Remove, on the server too, the session's watches on a node that may
 *		never be created (left by ZkExistsWatched): the server would keep
 *		them for the session's life.  Fire and forget.
 */
void
ZkWatchDrop(const char *path)
{
	ZkOp	   *op = zk_op_new(ZKOP_EXISTS);

	/*
	 * zoo_aremove_all_watches: the session's every watch on the path, on
	 * the server too (the call for one watcher only checks the server's).
	 * Its header declares the completion as a pointer to a function
	 * pointer, but the library calls it as a function pointer.
	 */
	zk_op_issued(op, zoo_aremove_all_watches(zk_handle(), path,
											 ZWATCHTYPE_ANY, 0,
											 (void_completion_t *) (void *) zk_op_void_done,
											 op));
	ZkOpFree(op);
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
	{
		if (op->kind != ZKOP_RELEASE && op->done_us > 0)
			ZkStatRequest(op->done_us - op->sent_us);
		zk_op_release(op);
	}
}

static void
zk_op_release(ZkOp *op)
{
	free(op->value);
	for (int i = 0; i < op->nchildren; i++)
		free(op->children[i]);
	free(op->children);
	if (op->multi != NULL)
	{
		ZkMultiAux *aux = op->multi;

		for (int i = 0; aux->created != NULL && i < aux->n; i++)
			free(aux->created[i]);
		free(aux->created);
		free(aux->parent_stats);
		free(aux->results);
		free(aux->ops);
		free(aux);
	}
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
 * zk_wait_status
 *		The one place where the backend sleeps for ZooKeeper.
 *
 * Returns ZK_WAIT_READY once ready(arg) holds (evaluated under
 * bridge.mutex), ZK_WAIT_DEADLINE when deadline_ms (monotonic; 0 for none)
 * has passed, ZK_WAIT_LOST when the session expired (or authentication
 * failed), ZK_WAIT_CUT_OFF when the connection has been lost for longer
 * than the session timeout.  CHECK_FOR_INTERRUPTS runs on every wakeup, so
 * query cancel, statement_timeout and termination end the wait with their
 * ERROR where PostgreSQL does not hold interrupts.
 */
static ZkWaitResult
zk_wait_status(bool (*ready) (void *), void *arg, int64 deadline_ms)
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
			return ZK_WAIT_READY;
		if (lost)
			return ZK_WAIT_LOST;

		now = ZkNowMs();
		if (disconnected_at != 0)
		{
			int64		give_up = disconnected_at + zk_negotiated_timeout;

			if (now >= give_up)
				return ZK_WAIT_CUT_OFF;
			timeout = (long) (give_up - now);
		}
		if (deadline_ms != 0)
		{
			if (now >= deadline_ms)
				return ZK_WAIT_DEADLINE;
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
 * zk_wait
 *		zk_wait_status, raising zklock's documented ERROR when the session
 *		expired or the connection stayed lost for the session timeout.
 *		Returns true when ready, false when deadline_ms passed.  'what'
 *		and 'path' name the operation in those errors.
 */
static bool
zk_wait(bool (*ready) (void *), void *arg, int64 deadline_ms,
		const char *what, const char *path)
{
	switch (zk_wait_status(ready, arg, deadline_ms))
	{
		case ZK_WAIT_READY:
			return true;
		case ZK_WAIT_DEADLINE:
			return false;
		case ZK_WAIT_LOST:
			zk_session_lost(what, path);
			break;
		case ZK_WAIT_CUT_OFF:
			ereport(ERROR,
					(errcode(ERRCODE_CONNECTION_FAILURE),
					 errmsg("lost connection to ZooKeeper while %s \"%s\"",
							what, ZkUtf8ForMessage(path)),
					 errdetail("The connection to \"%s\" was not regained within the session timeout of %d ms.",
							   zk_session_hosts, zk_negotiated_timeout)));
			break;
	}
	return false;				/* not reached */
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
 * ZkOpIsDone
 *		Has the op's answer come, without waiting?  A backend with many
 *		requests in flight uses it to sleep until a later one is answered
 *		(answers come in order), instead of once per answer.
 */
bool
ZkOpIsDone(ZkOp *op)
{
	bool		done;

	pthread_mutex_lock(&bridge.mutex);
	done = op->done;
	pthread_mutex_unlock(&bridge.mutex);
	return done;
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

	zk_watch_waits++;
	if (!zk_wait(zk_cond_watch_fired, NULL, deadline_ms, what, path))
		return 0;
	pthread_mutex_lock(&bridge.mutex);
	event = bridge.watch_event;
	bridge.watch_event = 0;
	pthread_mutex_unlock(&bridge.mutex);
	return event;
}

/*
 * ZkWatchWaitCount
 *		How many times this backend has waited for a watch (for another
 *		client's node to change): a caller that compares the count before
 *		and after a call knows whether the call waited.
 */
uint64
ZkWatchWaitCount(void)
{
	return zk_watch_waits;
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
	job = zk_job_new(kind, path, prefix, NULL);
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
 * The guard: a persistent node that this backend must remove.
 *
 * Ephemeral nodes go with the session.  A persistent node that an attempt
 * creates (a lease's TTL node while it waits) does not: if the attempt
 * ends without handing the node on, it must be deleted, whatever ends it.
 * The attempt says before its create where the node will be (parent and
 * protection prefix), then which node it is; the guard then deletes it
 * (or sweeps the prefix) when the attempt is abandoned (ZkGuardRemove,
 * retried across lost connections and, if the session ends first,
 * carried over to the next session), and when the backend exits in the
 * middle of it (zk_session_at_exit, before the session is closed).  A
 * granted attempt hands the node on with ZkGuardRelease.  One attempt at
 * a time is guarded.
 * ------------------------------------------------------------------------
 */

static char *zk_guard_parent = NULL;	/* TopMemoryContext; NULL: none */
static char *zk_guard_prefix = NULL;
static char *zk_guard_nodes[2];	/* the node once created, then its child */
static int	zk_guard_nnodes = 0;

/*
 * zk_guard_clear
 *		Forget the guarded attempt.
 */
static void
zk_guard_clear(void)
{
	if (zk_guard_parent)
		pfree(zk_guard_parent);
	if (zk_guard_prefix)
		pfree(zk_guard_prefix);
	for (int i = 0; i < zk_guard_nnodes; i++)
		pfree(zk_guard_nodes[i]);
	zk_guard_parent = zk_guard_prefix = NULL;
	zk_guard_nnodes = 0;
}

/*
 * ZkGuardBegin
 *		Guard an attempt whose node will be created under 'parent' with a
 *		name starting with 'prefix'.
 */
void
ZkGuardBegin(const char *parent, const char *prefix)
{
	zk_guard_clear();
	zk_guard_parent = MemoryContextStrdup(TopMemoryContext, parent);
	zk_guard_prefix = MemoryContextStrdup(TopMemoryContext, prefix);
}

/*
 * ZkGuardNode
 *		A node of the guarded attempt exists: first the attempt's node
 *		itself, then (at most one) child of it.  They are deleted in the
 *		opposite order, the child first, as a node with children cannot be.
 */
void
ZkGuardNode(const char *path)
{
	if (zk_guard_parent == NULL)
		return;
	for (int i = 0; i < zk_guard_nnodes; i++)
	{
		if (strcmp(zk_guard_nodes[i], path) == 0)
			return;
	}
	if (zk_guard_nnodes == lengthof(zk_guard_nodes))
		elog(ERROR, "too many guarded ZooKeeper nodes");
	zk_guard_nodes[zk_guard_nnodes++] = MemoryContextStrdup(TopMemoryContext,
															path);
}

/*
 * ZkGuardRelease
 *		The guarded node was handed on (a lease was granted): nothing to
 *		remove any more.
 */
void
ZkGuardRelease(void)
{
	zk_guard_clear();
}

/*
 * zk_guard_issue
 *		Send the persistent jobs that remove the guarded nodes (the last
 *		known first), or sweep the prefix if none is known, counting for
 *		'waiter' if given.  ZooKeeper applies them in the order sent.
 */
static void
zk_guard_issue(ZkOp *waiter)
{
	int			n = Max(zk_guard_nnodes, 1);

	for (int i = n - 1; i >= 0; i--)
	{
		ZkJob	   *job;

		if (zk_guard_nnodes > 0)
			job = zk_job_new(ZKJOB_DELETE, zk_guard_nodes[i], NULL, waiter);
		else
			job = zk_job_new(ZKJOB_SWEEP, zk_guard_parent, zk_guard_prefix,
							 waiter);
		if (job == NULL)
		{
			pthread_mutex_lock(&bridge.mutex);
			bridge.jobs_failed++;
			pthread_mutex_unlock(&bridge.mutex);
			continue;
		}
		job->persistent = true;
		zk_job_issue(job);		/* without a session: carried over */
	}
}

/*
 * ZkGuardRemove
 *		The guarded attempt was abandoned: delete its nodes (or sweep its
 *		prefix) and forget them.  The deletes are retried after a lost
 *		connection and carried over to the next session if this one ends
 *		first.  With want_answer, returns an op for ZkOpWaitQuiet (free it
 *		with ZkOpFree) that completes when the deletes have, or when the
 *		session ended; else NULL.  Raises no ERROR without want_answer, so
 *		that it may run in PG_CATCH.
 */
ZkOp *
ZkGuardRemove(bool want_answer)
{
	ZkOp	   *op = NULL;

	if (zk_guard_parent == NULL)
		return NULL;
	if (want_answer)
	{
		op = zk_op_new(ZKOP_RELEASE);
		op->pending = 1;		/* held until the jobs are issued */
	}
	zk_guard_issue(op);
	zk_guard_clear();
	if (op != NULL)
	{
		bool		finished;

		pthread_mutex_lock(&bridge.mutex);
		finished = (--op->pending == 0);
		pthread_mutex_unlock(&bridge.mutex);
		if (finished)
			zk_op_finish(op, ZOK, NULL, NULL, 0, NULL, 0);
	}
	return op;
}

/*
 * zk_guard_remove_at_exit
 *		The backend exits in the middle of a guarded attempt: remove its
 *		node before the session closes, waiting at most
 *		zklock.connect_timeout.  Interrupts are held during exit, so the
 *		wait is a plain latch wait.  Without a live session nothing can be
 *		sent: the node stays until its TTL runs out or another client
 *		removes it (a lease node whose waiter is gone, lock_recipe.c).
 */
static void
zk_guard_remove_at_exit(void)
{
	ZkOp	   *op;
	int64		deadline;

	if (zk_guard_parent == NULL || bridge.zh == NULL || ZkSessionIsExpired())
		return;
	op = ZkGuardRemove(true);
	deadline = ZkNowMs() + zklock_connect_timeout;
	pthread_mutex_lock(&bridge.mutex);
	bridge.awaited = op;
	pthread_mutex_unlock(&bridge.mutex);
	for (;;)
	{
		bool		done;
		int64		now = ZkNowMs();

		ResetLatch(MyLatch);
		pthread_mutex_lock(&bridge.mutex);
		done = op->done || bridge.expired || bridge.auth_failed;
		pthread_mutex_unlock(&bridge.mutex);
		if (done || now >= deadline)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 (long) (deadline - now), PG_WAIT_EXTENSION);
	}
	pthread_mutex_lock(&bridge.mutex);
	bridge.awaited = NULL;
	pthread_mutex_unlock(&bridge.mutex);
	ZkOpFree(op);
}

/*
 * ZkDeleteNodes
 *		Delete nodes (lock releases): one delete for one node, multis of
 *		deletes for more (within ZK_MULTI_DELETE_BYTES each), all sent at
 *		once, so that any number of nodes costs one round trip.  Each is
 *		retried after a lost connection until it succeeds or the session
 *		ends (zk_job_*), whether or not anyone waits.
 *
 * With want_answer, returns a ZKOP_RELEASE op that completes when every
 * delete has (ZkOpWaitQuiet; free it with ZkOpFree); else NULL.  Never
 * raises an ERROR except out of memory for that op, so it is safe in
 * abort paths with want_answer false.  Without a session there is nothing
 * to delete: the nodes went with it.
 */
ZkOp *
ZkDeleteNodes(const char *const *paths, int n, bool want_answer)
{
	ZkOp	   *op = NULL;
	bool		finished = false;
	int			i = 0;

	if (want_answer)
	{
		op = zk_op_new(ZKOP_RELEASE);
		op->pending = 1;		/* held until every job is issued */
	}

	while (bridge.zh != NULL && i < n)
	{
		ZkJob	   *job;
		int			j = i;
		size_t		bytes = 0;

		/* the chunk [i, j): as many nodes as fit, at least one */
		while (j < n && (j == i || bytes + strlen(paths[j]) + 16 <= ZK_MULTI_DELETE_BYTES))
			bytes += strlen(paths[j++]) + 16;
		if (j - i == 1)
			job = zk_job_new(ZKJOB_DELETE, paths[i], NULL, op);
		else
			job = zk_job_new_multi(paths + i, j - i, op);
		if (job == NULL)
		{
			pthread_mutex_lock(&bridge.mutex);
			bridge.jobs_failed += j - i;
			pthread_mutex_unlock(&bridge.mutex);
		}
		else
			zk_job_issue(job);
		i = j;
	}

	if (op != NULL)
	{
		pthread_mutex_lock(&bridge.mutex);
		finished = (--op->pending == 0);
		pthread_mutex_unlock(&bridge.mutex);
		if (finished)
			zk_op_finish(op, ZOK, NULL, NULL, 0, NULL, 0);
	}
	return op;
}

/*
 * ZkOpWaitQuiet
 *		Wait for a release op without raising an ERROR of ours: true once
 *		it completed (or the session ended, which deleted the nodes too),
 *		false when the connection stayed down for connect_ms since the wait
 *		began (or for the session timeout in all), or when, connected,
 *		ZooKeeper answered nothing for the session timeout (the client
 *		library drops such a connection itself).  A large batch takes as
 *		long as it needs while answers keep coming.  On false the caller
 *		reports the release as unconfirmed; its deletes go on in the
 *		background.
 *
 * A cancel ends the wait with its ERROR (the deletes go on), except where
 * PostgreSQL holds interrupts (the COMMIT and ABORT callbacks), where
 * CHECK_FOR_INTERRUPTS does nothing and no ERROR is raised at all.  During
 * backend exit it does not wait: the session's close deletes every node.
 */
bool
ZkOpWaitQuiet(ZkOp *op, int64 connect_ms)
{
	uint64		seen;
	int64		start = ZkNowMs();
	int64		last_progress = start;
	bool		result = false;

	if (proc_exit_inprogress)
		return true;

	pthread_mutex_lock(&bridge.mutex);
	bridge.awaited = op;
	seen = bridge.answers;
	pthread_mutex_unlock(&bridge.mutex);

	for (;;)
	{
		bool		done;
		bool		lost;
		uint64		answers;
		int64		disconnected_at;
		int64		now;
		int64		give_up;

		ResetLatch(MyLatch);
		pthread_mutex_lock(&bridge.mutex);
		done = op->done || bridge.zh == NULL;
		lost = bridge.expired || bridge.auth_failed;
		answers = bridge.answers;
		disconnected_at = bridge.disconnected_at;
		pthread_mutex_unlock(&bridge.mutex);

		/* an expired session took every node with it */
		if (done || lost)
		{
			result = true;
			break;
		}
		now = ZkNowMs();
		if (answers != seen)
		{
			seen = answers;
			last_progress = now;
		}
		if (disconnected_at != 0)
			give_up = Min(Max(disconnected_at, start) + connect_ms,
						  disconnected_at + zk_negotiated_timeout);
		else
			give_up = last_progress + zk_negotiated_timeout;
		if (now >= give_up)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 (long) (give_up - now), PG_WAIT_EXTENSION);
		/* if this throws, the deletes go on; 'awaited' only causes a wakeup */
		CHECK_FOR_INTERRUPTS();
	}

	pthread_mutex_lock(&bridge.mutex);
	bridge.awaited = NULL;
	pthread_mutex_unlock(&bridge.mutex);
	return result;
}

/*
 * ZkSessionLeaseFresh
 *		Has the server answered a request of ours sent less than a third of
 *		the negotiated session timeout ago?  Then the session is alive now
 *		and for a while yet, without a round trip.
 */
bool
ZkSessionLeaseFresh(void)
{
	int64		sent_at;
	bool		lost;

	if (bridge.zh == NULL)
		return false;
	pthread_mutex_lock(&bridge.mutex);
	sent_at = bridge.lease_sent_at;
	lost = bridge.expired || bridge.auth_failed;
	pthread_mutex_unlock(&bridge.mutex);
	return !lost && sent_at != 0 &&
		ZkNowMs() - sent_at < zk_negotiated_timeout / 3;
}

/*
 * ZkSessionConfirmAlive
 *		Make sure the session is alive: at once if the lease is fresh, else
 *		by one round trip (a sync, which the leader answers), waiting for a
 *		lost connection no longer than the session could still be alive.
 *		ZK_SESSION_ALIVE, ZK_SESSION_EXPIRED (the caller reports the lost
 *		locks), or ZK_SESSION_UNCONFIRMED (no answer in time).  Query
 *		cancel ends the wait with its ERROR.
 */
ZkAliveResult
ZkSessionConfirmAlive(void)
{
	int64		deadline;

	if (ZkSessionLeaseFresh())
		return ZK_SESSION_ALIVE;
	if (bridge.zh == NULL)
		return ZK_SESSION_UNCONFIRMED;

	deadline = ZkNowMs() + zk_negotiated_timeout;
	for (int tries = 0;; tries++)
	{
		ZkOp	   *op = ZkSync("/");
		ZkWaitResult wr;
		int			rc;

		/* a cancel may leave 'awaited' set: it only ever causes a wakeup */
		pthread_mutex_lock(&bridge.mutex);
		bridge.awaited = op;
		pthread_mutex_unlock(&bridge.mutex);
		wr = zk_wait_status(zk_cond_op_done, op, deadline);
		pthread_mutex_lock(&bridge.mutex);
		bridge.awaited = NULL;
		pthread_mutex_unlock(&bridge.mutex);
		rc = op->rc;
		ZkOpFree(op);

		if (wr == ZK_WAIT_READY && rc == ZOK)
			return ZK_SESSION_ALIVE;
		/*
		 * Refused because the session expired?  The answer may come before
		 * the watcher's session event: record the expiry here, so that
		 * ZkSessionEnsure reports the lost locks whichever came first.
		 */
		if (wr == ZK_WAIT_LOST || rc == ZSESSIONEXPIRED ||
			rc == ZINVALIDSTATE || ZkSessionIsExpired())
		{
			pthread_mutex_lock(&bridge.mutex);
			if (!bridge.auth_failed)
				bridge.expired = true;
			pthread_mutex_unlock(&bridge.mutex);
			return ZK_SESSION_EXPIRED;
		}
		if (wr != ZK_WAIT_READY || tries >= 3)
			return ZK_SESSION_UNCONFIRMED;

		/*
		 * Lost on the way, or refused while the client library was still
		 * finding out what became of the session: once it is connected
		 * again (or knows the session expired), ask again.
		 */
		wr = zk_wait_status(zk_cond_connected, NULL, deadline);
		if (wr == ZK_WAIT_LOST)
			return ZK_SESSION_EXPIRED;
		if (wr != ZK_WAIT_READY)
			return ZK_SESSION_UNCONFIRMED;
	}
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
	const char *file = (zklock_auth_file && zklock_auth_file[0]) ?
		zklock_auth_file : NULL;

	if (strcmp(zk_session_hosts, zklock_hosts) != 0)
		return true;
	if (zk_session_timeout_requested != zklock_session_timeout)
		return true;
	if ((auth == NULL) != (zk_session_auth == NULL) ||
		(auth != NULL && strcmp(auth, zk_session_auth) != 0))
		return true;
	return (file == NULL) != (zk_session_auth_file == NULL) ||
		(file != NULL && strcmp(file, zk_session_auth_file) != 0);
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
		int			pending;

		pthread_mutex_lock(&bridge.mutex);
		lost = bridge.expired || bridge.auth_failed;
		failed = bridge.jobs_failed;
		pending = bridge.jobs_pending;
		pthread_mutex_unlock(&bridge.mutex);
		ZkStatReleasesPending(pending);

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
			ZkStatReleasesFailed(failed - zk_failures_reported);
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
						 errdetail("zklock.hosts, zklock.auth, zklock.auth_file or zklock.session_timeout changed since the session was opened."),
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
	char	   *volatile auth = ZkCredentials();	/* zklock.auth or its file */
	int64		deadline;
	ZkJob	   *carried;

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
	bridge.lease_sent_at = 0;
	pthread_mutex_unlock(&bridge.mutex);

	zk_reserve_fds();

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
	{
		zk_release_fds();
		errno = saved_errno;
		ereport(ERROR,
				(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
				 errmsg("could not connect to ZooKeeper at \"%s\"", zklock_hosts),
				 saved_errno == EINVAL ?
				 errdetail("The host list is not a valid list of host:port pairs.") :
				 errdetail("The ZooKeeper client could not resolve the host list: %m.")));
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

		/* the handshake was answered: the session is alive since then */
		pthread_mutex_lock(&bridge.mutex);
		bridge.lease_sent_at = deadline - zklock_connect_timeout;
		pthread_mutex_unlock(&bridge.mutex);

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
		if (auth != NULL)
			explicit_bzero(auth, strlen(auth));
		zk_close_handle();
		PG_RE_THROW();
	}
	PG_END_TRY();

	zk_session_hosts = MemoryContextStrdup(TopMemoryContext, zklock_hosts);
	zk_session_auth = (zklock_auth && zklock_auth[0]) ?
		MemoryContextStrdup(TopMemoryContext, zklock_auth) : NULL;
	zk_session_auth_file = (zklock_auth_file && zklock_auth_file[0]) ?
		MemoryContextStrdup(TopMemoryContext, zklock_auth_file) : NULL;
	zk_session_authenticated = (auth != NULL);
	if (auth != NULL)
	{
		explicit_bzero(auth, strlen(auth));
		pfree(auth);
	}
	zk_session_timeout_requested = zklock_session_timeout;
	ZkStatSessionOpened();

	/* persistent deletes an earlier session could not finish */
	pthread_mutex_lock(&bridge.mutex);
	carried = bridge.carried;
	bridge.carried = NULL;
	pthread_mutex_unlock(&bridge.mutex);
	while (carried != NULL)
	{
		ZkJob	   *next = carried->next;

		carried->next = NULL;
		zk_job_counted(carried, NULL);
		zk_job_issue(carried);
		carried = next;
	}
}

/*
 * zk_reserve_fds
 *		Reserve the file descriptors the client library opens (its
 *		connection and the pipe that wakes its I/O thread) with
 *		AcquireExternalFD, as a libpq connection made from a backend does,
 *		so that PostgreSQL's own descriptor budget (max_files_per_process)
 *		counts them.
 */
static void
zk_reserve_fds(void)
{
	while (zk_fds_reserved < ZK_CLIENT_FDS)
	{
		if (!AcquireExternalFD())
		{
			zk_release_fds();
			ereport(ERROR,
					(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
					 errmsg("could not connect to ZooKeeper at \"%s\"", zklock_hosts),
					 errdetail("There are too many open files on the local server."),
					 errhint("Raise the server's max_files_per_process and/or \"ulimit -n\" limits.")));
		}
		zk_fds_reserved++;
	}
}

/*
 * zk_release_fds
 *		Give back what zk_reserve_fds reserved (the handle is closed).
 */
static void
zk_release_fds(void)
{
	while (zk_fds_reserved > 0)
	{
		ReleaseExternalFD();
		zk_fds_reserved--;
	}
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
	bool		expired;

	if (zh == NULL)
		return;

	pthread_mutex_lock(&bridge.mutex);
	bridge.closing = true;
	deferred = bridge.deferred;
	bridge.deferred = NULL;
	expired = bridge.expired;
	pthread_mutex_unlock(&bridge.mutex);
	if (expired)
		ZkStatSessionExpired();

	zookeeper_close(zh);
	zk_release_fds();

	while (deferred != NULL)
	{
		ZkJob	   *next = deferred->next;

		if (deferred->persistent)
			zk_job_carry(deferred);
		else
			zk_job_free(deferred, true);
		deferred = next;
	}

	pthread_mutex_lock(&bridge.mutex);
	bridge.zh = NULL;
	bridge.closing = false;
	bridge.state = 0;
	bridge.connected_at = 0;
	bridge.disconnected_at = 0;
	bridge.lease_sent_at = 0;
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
	if (zk_session_auth_file)
		pfree(zk_session_auth_file);
	zk_session_auth_file = NULL;
	zk_session_authenticated = false;
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
						what, ZkUtf8ForMessage(path))));
	ereport(ERROR,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg("ZooKeeper session expired while %s \"%s\"",
					what, ZkUtf8ForMessage(path))));
}

/*
 * ZkRaiseForRc
 *		Turn a ZooKeeper error code into zklock's documented ERROR (its
 *		SQLSTATE and message are listed in doc/reference.md).
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
						what, ZkUtf8ForMessage(path)),
				 errdetail("The server closed the session because it was not authenticated with a scheme the server enforces."),
				 errhint("Set zklock.auth.")));
	if (rc == ZNOAUTH)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("ZooKeeper refused access while %s \"%s\"",
						what, ZkUtf8ForMessage(path)),
				 errdetail("The node's ACL does not allow this session's identity."),
				 errhint("Check zklock.auth and the ACLs under zklock.root.")));
	if (ZkIsConnectionLoss(rc) || rc == ZCLOSING)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("lost connection to ZooKeeper while %s \"%s\"",
						what, ZkUtf8ForMessage(path)),
				 errdetail_internal("%s", zerror(rc))));
	ereport(ERROR,
			(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
			 errmsg("ZooKeeper error while %s \"%s\"",
					what, ZkUtf8ForMessage(path)),
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
	zk_guard_remove_at_exit();
	zk_close_handle();
	ZkStatReleasesPending(0);
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
