/*-------------------------------------------------------------------------
 *
 * recipes/lock_timeout.h
 *		The deadline of a recipe's wait and lock_timeout's ERROR
 *		(recipes/lock_timeout.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef RECIPES_LOCK_TIMEOUT_H
#define RECIPES_LOCK_TIMEOUT_H

/* what a wait that lock_timeout ended waited for (its error's DETAIL) */
typedef enum ZkWaitedFor
{
	ZK_WAITED_FOR_LOCK,			/* a lock, a lock set, a lease */
	ZK_WAITED_FOR_SEMAPHORE,	/* a semaphore's permit */
	ZK_WAITED_FOR_BARRIER,		/* a barrier to go down */
	ZK_WAITED_FOR_ENTER,		/* the members of a double barrier to enter */
	ZK_WAITED_FOR_LEAVE			/* the members of a double barrier to leave */
} ZkWaitedFor;

extern int64 ZkWaitDeadline(int64 start, int64 wait_ms, bool *is_lock_timeout);
extern void ZkRaiseLockTimeout(ZkWaitedFor waited, const char *path)
			pg_attribute_noreturn();

#endif							/* RECIPES_LOCK_TIMEOUT_H */
