/*-------------------------------------------------------------------------
 *
 * recipes/deadlock_timer.h
 *		deadlock_timeout's timer for a recipe's wait on a watched node
 *		(recipes/deadlock_timer.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef RECIPES_DEADLOCK_TIMER_H
#define RECIPES_DEADLOCK_TIMER_H

extern bool ZkDeadlockTimerWait(int64 deadline, int *event);
extern void ZkDeadlockTimerAgain(void);
extern void ZkDeadlockTimerStop(void);

#endif							/* RECIPES_DEADLOCK_TIMER_H */
