/*-------------------------------------------------------------------------
 *
 * recipes/deadlock_timer.c
 *		deadlock_timeout's timer for a recipe's wait on a watched node.
 *
 * A recipe that waits for another client's node (a lock queue, a
 * semaphore's permit count) checks for a deadlock once deadlock_timeout has
 * passed, and again every deadlock_timeout while a check is cut short,
 * as PostgreSQL's ProcSleep does for its own locks.  The timer is a
 * monotonic time (ZkNowMs, base/clock.c) at which the check is due: the
 * session's wait (ZkWatchWait) sleeps until the earlier of it and the
 * wait's own deadline, so no signal is needed.
 *
 * Rules:
 *
 * - One wait at a time per backend.  The timer starts with the wait's
 *	 first sleep (ZkDeadlockTimerWait) and keeps running while the wait
 *	 reads the queue again between sleeps; ZkDeadlockTimerStop ends it on
 *	 every way out of the wait, the abandon path of an ERROR included
 *	 (ZkAttemptAbandon).
 *
 * - A watch event that came first wins: the check waits for the next
 *	 sleep (the wait may be over by then).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/proc.h"

#include "recipes/deadlock_timer.h"
#include "client/client.h"

/* monotonic ms when the current wait's check is due; 0: no wait runs;
 * -1: the timer fired and was not started again */
static int64 zk_check_at = 0;

/*
 * ZkDeadlockTimerWait
 *		Sleep until the armed watch fires (ZkWatchWait) or 'deadline'
 *		(monotonic ms; 0: none) passes, with deadlock_timeout's timer
 *		running: it starts with the wait's first sleep.  Returns true when
 *		deadlock_timeout passed (the caller checks, and sleeps again);
 *		otherwise false with *event the watch's event, or 0 when the
 *		deadline passed.
 */
bool
ZkDeadlockTimerWait(int64 deadline, int *event)
{
	int64		until = deadline;

	if (zk_check_at == 0)
		zk_check_at = ZkNowMs() + DeadlockTimeout;
	if (zk_check_at > 0 && (until == 0 || zk_check_at < until))
		until = zk_check_at;
	*event = ZkWatchWait(until);
	if (*event != 0 || until != zk_check_at)
		return false;
	zk_check_at = -1;
	return true;
}

/*
 * ZkDeadlockTimerAgain
 *		A check was cut short (a lost connection): check again after
 *		another deadlock_timeout.
 */
void
ZkDeadlockTimerAgain(void)
{
	zk_check_at = ZkNowMs() + DeadlockTimeout;
}

/*
 * ZkDeadlockTimerStop
 *		The wait is over: stop the timer.  Raises no ERROR (it runs on the
 *		abandon path of one too).
 */
void
ZkDeadlockTimerStop(void)
{
	zk_check_at = 0;
}
