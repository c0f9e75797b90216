/*-------------------------------------------------------------------------
 *
 * deadlock_timer.h
 *		deadlock_timeout's timer for a recipe's wait on a watched node
 *		(deadlock_timer.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DEADLOCK_TIMER_H
#define DEADLOCK_TIMER_H

extern bool ZkDeadlockTimerWait(int64 deadline, int *event);
extern void ZkDeadlockTimerAgain(void);
extern void ZkDeadlockTimerStop(void);

#endif							/* DEADLOCK_TIMER_H */
