/*-------------------------------------------------------------------------
 *
 * client/jobs.h
 *		What the session's life needs of the background jobs
 *		(client/jobs.c): sending again or ending the jobs a reconnection or
 *		a close frees, the jobs the guard starts (client/guard.c), the guard
 *		at backend exit, and the session's watcher
 *		(client/session_watcher.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef CLIENT_JOBS_H
#define CLIENT_JOBS_H

#include "client/client.h"

/*
 * What a job does: delete one node, delete several in one multi, or delete
 * the children of a node whose names start with a prefix (used when an
 * attempt is abandoned before its create answered, so that our node cannot
 * survive as an orphan).
 */
typedef enum ZkJobKind
{
	ZKJOB_DELETE,
	ZKJOB_MULTI_DELETE,
	ZKJOB_SWEEP
} ZkJobKind;

/* starting background jobs (client/jobs.c), for the guard (client/guard.c) */
extern void ZkJobStart(ZkJobKind kind, const char *path, const char *prefix,
					   ZkOp *waiter, bool persistent);
extern ZkOp *ZkReleaseOpNew(void);

/* the guard at backend exit (client/guard.c) */
extern void ZkGuardRemoveAtExit(void);

/* the jobs a reconnection or a close frees (client/jobs.c) */
extern void ZkJobsSend(slist_head *jobs);
extern void ZkJobsResendCarried(void);

/* the session's watcher (client/session_watcher.c) */
extern void ZkSessionWatcher(zhandle_t *zh, int type, int state,
							 const char *path, void *ctx);

#endif							/* CLIENT_JOBS_H */
