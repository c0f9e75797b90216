/*-------------------------------------------------------------------------
 *
 * client/session_watcher.c
 *		The session's watcher, the handle's default watcher, on the client
 *		library's completion thread (under the thread rules of
 *		client/bridge.c): what a session event changes, for the bridge, the
 *		background jobs and the loss watch.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "client/bridge.h"
#include "client/jobs.h"
#include "client/loss_watch.h"

/*
 * ZkSessionWatcher
 *		The session's watcher (the handle's default watcher): the bridge
 *		records the session event, and the jobs that waited for the
 *		connection to come back are sent again, without the bridge's mutex;
 *		the loss watch learns of an expiry.  Runs on the completion thread.
 */
void
ZkSessionWatcher(zhandle_t *zh, int type, int state, const char *path,
				 void *ctx)
{
	slist_head	resend;

	if (type != ZOO_SESSION_EVENT)
		return;
	ZkBridgeSessionEvent(state, &resend);
	ZkJobsSend(&resend);
	ZkLossWatchSessionEvent(state);
}
