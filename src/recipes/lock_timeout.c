/*-------------------------------------------------------------------------
 *
 * recipes/lock_timeout.c
 *		The deadline of every recipe's wait, and lock_timeout's ERROR when
 *		it passes: a queue's attempt (recipes/attempt.c), a semaphore's
 *		wait, and the barriers', which wait without a queue.
 *
 * PostgreSQL arms lock_timeout only for its heavyweight locks, so zklock
 * computes the deadline itself, once, at the start of a wait, on the
 * monotonic clock (base/clock.c), and raises 55P03 as PostgreSQL does.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/proc.h"

#include "recipes/lock_timeout.h"
#include "base/text_encoding.h"

/*
 * ZkWaitDeadline
 *		The deadline (monotonic ms) of a wait that starts at 'start': after
 *		wait_ms if it is positive; at once (start) for 0; for a wait as long
 *		as needed (wait_ms < 0), lock_timeout's if set, and then
 *		*is_lock_timeout is set, else 0 (none).
 */
int64
ZkWaitDeadline(int64 start, int64 wait_ms, bool *is_lock_timeout)
{
	*is_lock_timeout = false;
	if (wait_ms >= 0)
		return start + wait_ms;
	if (LockTimeout > 0)
	{
		*is_lock_timeout = true;
		return start + LockTimeout;
	}
	return 0;
}

/*
 * ZkRaiseLockTimeout
 *		lock_timeout ran out while a recipe waited ('waited' says for what,
 *		on 'path'): 55P03, as for PostgreSQL's own locks.  Every recipe's
 *		lock timeout is raised here.
 */
void
ZkRaiseLockTimeout(ZkWaitedFor waited, const char *path)
{
	const char *detail = NULL;

	switch (waited)
	{
		case ZK_WAITED_FOR_LOCK:
			detail = gettext_noop("Waiting for ZooKeeper lock \"%s\".");
			break;
		case ZK_WAITED_FOR_SEMAPHORE:
			detail = gettext_noop("Waiting for ZooKeeper semaphore \"%s\".");
			break;
		case ZK_WAITED_FOR_BARRIER:
			detail = gettext_noop("Waiting for ZooKeeper barrier \"%s\".");
			break;
		case ZK_WAITED_FOR_ENTER:
			detail = gettext_noop("Waiting to enter ZooKeeper double barrier \"%s\".");
			break;
		case ZK_WAITED_FOR_LEAVE:
			detail = gettext_noop("Waiting for the other members to leave ZooKeeper double barrier \"%s\".");
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
			 errmsg("canceling statement due to lock timeout"),
			 errdetail(detail, ZkUtf8ForMessage(path))));
}
