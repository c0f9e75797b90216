/*-------------------------------------------------------------------------
 *
 * client/jobs.c
 *		Background release jobs: deletes (of lock nodes, of several in one
 *		multi, of the children a sweep finds) that are retried after a lost
 *		connection until they succeed or the session ends; the jobs of the
 *		guard (client/guard.c), which removes a persistent node whatever
 *		ends its attempt.
 *
 * A job is malloc'd and sent without waiting for its answer.  Its
 * completion, on the client library's completion thread, frees it, or
 * sends it again after a lost connection: at once if connected again, else
 * when the session watcher sees the connection come back.  A job on
 * ephemeral nodes ends with its session, which deletes them anyway; a
 * persistent job (the guard's) is carried over to the next session.  A
 * backend that wants to know when its releases are applied (synchronous
 * release) waits for a ZKOP_RELEASE op that the last of the batch's jobs
 * completes (ZkReleaseWait, client/release_wait.c).
 *
 * The functions under "Client threads" run on the completion thread too,
 * under the thread rules stated in client/bridge.c: plain memory only, and the
 * shared state (the pending and failed counts, the lists of deferred and
 * carried jobs, the waiter's count) only through the bridge's functions.
 * Sending a job again calls the thread-safe client library, never
 * PostgreSQL.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/ilist.h"

#include "client/bridge.h"
#include "client/jobs.h"
#include "client/request.h"
#include "base/vocabulary.h"
#include "base/clock.h"

/*
 * Largest multi of deletes we send, in bytes of paths.  ZooKeeper refuses
 * packets over jute.maxbuffer (1 MB by default); staying well below keeps
 * each multi one modest transaction.
 */
#define ZK_MULTI_DELETE_BYTES	(128 * 1024)

/* A background job; malloc'd, as the completion thread frees it. */
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
	slist_node	node;			/* in the bridge's deferred or carried jobs */
} ZkJob;

/* private prototypes */
static ZkJob *zk_job_pop(slist_head *list);
static ZkJob *zk_job_new(ZkJobKind kind, const char *path, const char *prefix,
						 ZkOp *waiter);
static ZkJob *zk_job_new_multi(const char *const *paths, int n, ZkOp *waiter);
static void zk_job_free(ZkJob *job, bool succeeded);
static void zk_job_free_memory(ZkJob *job);
static void zk_job_issue(ZkJob *job);
static bool zk_session_gone(int rc);
static void zk_job_ended(ZkJob *job, int rc);
static void zk_job_carry(ZkJob *job);
static void zk_job_retry_later(ZkJob *job);
static bool zk_job_answered(ZkJob *job, int rc);
static void zk_job_delete_done(int rc, const void *data);
static void zk_job_multi_done(int rc, const void *data);
static void zk_job_sweep_done(int rc, const struct String_vector *strings,
							  const void *data);

/* ------------------------------------------------------------------------
 * Client threads (and the backend, which starts the jobs).
 * ------------------------------------------------------------------------
 */

/* zk_job_pop: take the first job off a non-empty list of the caller's */
static ZkJob *
zk_job_pop(slist_head *list)
{
	return slist_container(ZkJob, node, slist_pop_head_node(list));
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
		zk_job_free_memory(job);
		return NULL;
	}
	job->waiter = waiter;
	ZkBridgeJobAdded(waiter);
	return job;
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
	job->waiter = waiter;
	ZkBridgeJobAdded(waiter);
	return job;
}

/*
 * ZkJobStart
 *		Create and send a delete or a sweep, counting for 'waiter' if
 *		given; out of memory, it counts as a failed release instead.
 */
void
ZkJobStart(ZkJobKind kind, const char *path, const char *prefix,
		   ZkOp *waiter, bool persistent)
{
	ZkJob	   *job = zk_job_new(kind, path, prefix, waiter);

	if (job == NULL)
	{
		ZkBridgeJobsFailed(1);
		return;
	}
	job->persistent = persistent;
	zk_job_issue(job);
}

/*
 * zk_job_free
 *		A background job is over, one way or the other.
 */
static void
zk_job_free(ZkJob *job, bool succeeded)
{
	ZkBridgeJobEnded(job->waiter, succeeded, NULL);
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
 * zk_job_issue
 *		Send a job's request.  Runs on the backend thread or the completion
 *		thread.
 */
static void
zk_job_issue(ZkJob *job)
{
	zhandle_t  *zh = ZkBridgeJobHandle();
	int			rc;

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
 *		end of the session deleted nothing of it.  Otherwise it succeeded
 *		if done, or if nothing is left to do because the node or the whole
 *		session is gone.
 */
static void
zk_job_ended(ZkJob *job, int rc)
{
	if (job->persistent && zk_session_gone(rc))
		zk_job_carry(job);
	else
		zk_job_free(job, rc == ZOK || rc == ZNONODE || zk_session_gone(rc));
}

/*
 * zk_job_carry
 *		Keep a persistent job for the next session (ZkJobsResendCarried
 *		sends it again).  It no longer counts as pending, nor for a waiter:
 *		whoever waited learns that the session ended.
 */
static void
zk_job_carry(ZkJob *job)
{
	ZkOp	   *waiter = job->waiter;

	job->waiter = NULL;
	ZkBridgeJobEnded(waiter, true, &job->node);
}

/*
 * zk_job_retry_later
 *		A job failed for a lost connection: send it again now if the session
 *		is connected again already, else when the watcher sees it connect.
 */
static void
zk_job_retry_later(ZkJob *job)
{
	if (ZkBridgeJobDefer(&job->node))
		zk_job_issue(job);
}

/*
 * zk_job_answered
 *		Record a job's answer (it may move the session's alive window on).
 *		A lost connection sends the job again later: then true, and the job
 *		is no longer the caller's.
 */
static bool
zk_job_answered(ZkJob *job, int rc)
{
	ZkBridgeNoteAnswer(job->sent_at, rc);
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
	if (rc != ZOK && ZkRcFromServer(rc))
	{
		for (int i = 0; i < job->npaths; i++)
			ZkJobStart(ZKJOB_DELETE, job->paths[i], NULL, job->waiter, false);
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

/*
 * ZkJobsSend
 *		Send the jobs of a list (taken from the bridge) again: the
 *		connection is back (on the completion thread).  Or the handle is
 *		being closed (on the backend), when no job can be sent
 *		(zk_job_issue): persistent ones are carried over to the next
 *		session, the others end (the close deleted their nodes).
 */
void
ZkJobsSend(slist_head *jobs)
{
	while (!slist_is_empty(jobs))
		zk_job_issue(zk_job_pop(jobs));
}

/*
 * ZkJobsResendCarried
 *		A new session is connected: send the persistent jobs an earlier
 *		session could not finish.
 */
void
ZkJobsResendCarried(void)
{
	slist_head	carried;

	ZkBridgeTakeCarried(&carried);
	while (!slist_is_empty(&carried))
	{
		ZkJob	   *job = zk_job_pop(&carried);

		ZkBridgeJobAdded(NULL);	/* carried, it was taken off its waiter */
		zk_job_issue(job);
	}
}

/* ------------------------------------------------------------------------
 * Backend thread: what to release, and waiting for it.
 * ------------------------------------------------------------------------
 */

/*
 * ZkDeleteInBackground
 *		Delete a node without waiting for the answer; retried after a lost
 *		connection until it succeeds or the session ends.  Never raises an
 *		ERROR, so it is safe in abort paths; without a session there is
 *		nothing to do (the nodes went with it), and out of memory the node
 *		goes with the session (counted as a failed release).
 */
void
ZkDeleteInBackground(const char *path)
{
	if (ZkBridgeHandle() != NULL)
		ZkJobStart(ZKJOB_DELETE, path, NULL, NULL, false);
}

/*
 * ZkSweepInBackground
 *		Delete, in the background, every child of 'parent' whose name starts
 *		with 'prefix', as ZkDeleteInBackground deletes one node.  Used for
 *		an attempt abandoned before its create answered: the sweep is sent
 *		after the create on the same session, so it sees the node if the
 *		create made one.
 */
void
ZkSweepInBackground(const char *parent, const char *prefix)
{
	if (ZkBridgeHandle() != NULL)
		ZkJobStart(ZKJOB_SWEEP, parent, prefix, NULL, false);
}

/*
 * ZkReleaseOpNew
 *		A ZKOP_RELEASE op for jobs about to be sent, held (pending = 1)
 *		until ZkReleaseOpIssued says they all were.  NULL if memory ran
 *		out: the jobs then go unwaited for, and no ERROR is raised, as
 *		releases run at transaction abort.
 */
ZkOp *
ZkReleaseOpNew(void)
{
	ZkOp	   *op = ZkOpTryNew(ZKOP_RELEASE);

	if (op != NULL)
		op->pending = 1;
	return op;
}

/*
 * ZkDeleteNodes
 *		Delete nodes (lock releases): one delete for one node, multis of
 *		deletes for more (within ZK_MULTI_DELETE_BYTES each), all sent at
 *		once, so that any number of nodes costs one round trip.  Each is
 *		retried after a lost connection until it succeeds or the session
 *		ends, whether or not anyone waits.
 *
 * With want_answer, returns a ZKOP_RELEASE op that completes when every
 * delete has (ZkReleaseWait, which frees it); else, or if memory
 * for that op ran out, NULL.  Never raises an ERROR, so it is safe in
 * abort paths.  Without a session there is nothing to delete: the nodes
 * went with it.
 */
ZkOp *
ZkDeleteNodes(const char *const *paths, int n, bool want_answer)
{
	ZkOp	   *op = want_answer ? ZkReleaseOpNew() : NULL;
	int			i = 0;

	while (ZkBridgeHandle() != NULL && i < n)
	{
		int			j = i;
		size_t		bytes = 0;

		/* the chunk [i, j): as many nodes as fit, at least one */
		while (j < n && (j == i || bytes + strlen(paths[j]) + 16 <= ZK_MULTI_DELETE_BYTES))
			bytes += strlen(paths[j++]) + 16;
		if (j - i == 1)
			ZkJobStart(ZKJOB_DELETE, paths[i], NULL, op, false);
		else
		{
			ZkJob	   *job = zk_job_new_multi(paths + i, j - i, op);

			if (job == NULL)
				ZkBridgeJobsFailed(j - i);
			else
				zk_job_issue(job);
		}
		i = j;
	}

	if (op != NULL)
		ZkReleaseOpIssued(op);
	return op;
}
