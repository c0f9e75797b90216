/*-------------------------------------------------------------------------
 *
 * client/jobs.h
 *		What the session's life needs of the background jobs
 *		(client/jobs.c): sending again or ending the jobs a reconnection or
 *		a close frees, the guard at backend exit, and the session's watcher.
 *
 *-------------------------------------------------------------------------
 */
#ifndef CLIENT_JOBS_H
#define CLIENT_JOBS_H

#include "client/client.h"

extern void ZkGuardRemoveAtExit(void);

extern void ZkJobsSend(slist_head *jobs);
extern void ZkJobsDrop(slist_head *jobs);
extern void ZkJobsResendCarried(void);
extern void ZkSessionWatcher(zhandle_t *zh, int type, int state,
							 const char *path, void *ctx);

#endif							/* CLIENT_JOBS_H */
