/*-------------------------------------------------------------------------
 *
 * recipes/deadlock_timer.c
 *		deadlock_timeout's timer for a recipe's wait on a watched node.
 *
 * A recipe that waits for another client's node (a lock queue, a
 * semaphore's permit count) checks for a deadlock once deadlock_timeout has
 * passed, and again every deadlock_timeout while a check is cut short,
 * as PostgreSQL's ProcSleep does for its own locks.  The timer is
 * PostgreSQL's timeout machinery (utils/timeout.h): one user timeout,
 * registered the first time a backend waits, whose handler only sets a
 * flag and the backend's latch.
 *
 * Rules:
 *
 * - One wait at a time per backend.  The timer starts with the wait's
 *	 first sleep (ZkDeadlockTimerWait) and keeps running while the wait
 *	 reads the queue again between sleeps; ZkDeadlockTimerStop ends it on
 *	 every way out of the wait, the abandon path of an ERROR included
 *	 (ZkAttemptAbandon).  A timer left running would only set a flag.
 *
 * - The session's wait (ZkWatchWait) takes a latch set without an event
 *	 for a spurious wakeup and sleeps on until its deadline.  So the
 *	 deadline given to it is never later than the timer's: the recipe
 *	 gets control back when the timer fires, and looks at the flag then.
 *
 * - A watch event that came first wins: the check waits for the next
 *	 sleep (the wait may be over by then).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>

#include "miscadmin.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"

#include "recipes/deadlock_timer.h"
#include "client/client.h"

static void zk_deadlock_timer_handler(void);

static bool zk_timer_registered = false;
static TimeoutId zk_timer_id;
static bool zk_timer_in_use = false;	/* started for the current wait */
static volatile sig_atomic_t zk_timer_fired = false;

/*
 * zk_deadlock_timer_handler
 *		The timeout fired (in the SIGALRM handler): flag it and wake the
 *		backend.  Nothing else may be done here.
 */
static void
zk_deadlock_timer_handler(void)
{
	zk_timer_fired = true;
	SetLatch(MyLatch);
}

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
	if (!zk_timer_in_use)
	{
		if (!zk_timer_registered)
		{
			zk_timer_id = RegisterTimeout(USER_TIMEOUT,
										  zk_deadlock_timer_handler);
			zk_timer_registered = true;
		}
		zk_timer_fired = false;
		enable_timeout_after(zk_timer_id, DeadlockTimeout);
		zk_timer_in_use = true;
	}

	for (;;)
	{
		int64		until = deadline;

		if (zk_timer_fired)
			until = ZkNowMs();	/* due: only take an event that came */
		else if (get_timeout_active(zk_timer_id))
		{
			TimestampTz fire = get_timeout_finish_time(zk_timer_id);
			long		ms;
			int64		wake;

			/* at least 1 ms: the signal may come a little after its time */
			ms = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), fire);
			wake = ZkNowMs() + Max(ms, 1);
			if (until == 0 || wake < until)
				until = wake;
		}
		*event = ZkWatchWait(until);
		if (*event != 0)
			return false;
		if (zk_timer_fired)
		{
			zk_timer_fired = false;
			return true;
		}
		if (deadline != 0 && ZkNowMs() >= deadline)
			return false;
		/* woken for the timer before its signal came: sleep again */
	}
}

/*
 * ZkDeadlockTimerAgain
 *		A check was cut short (a lost connection): check again after
 *		another deadlock_timeout.
 */
void
ZkDeadlockTimerAgain(void)
{
	enable_timeout_after(zk_timer_id, DeadlockTimeout);
}

/*
 * ZkDeadlockTimerStop
 *		The wait is over: stop the timer.  Raises no ERROR (it runs on the
 *		abandon path of one too); nothing to do when no timer runs.
 */
void
ZkDeadlockTimerStop(void)
{
	if (zk_timer_in_use)
		disable_timeout(zk_timer_id, false);
	zk_timer_in_use = false;
	zk_timer_fired = false;
}
