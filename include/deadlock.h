/*-------------------------------------------------------------------------
 *
 * deadlock.h
 *		Cluster-wide deadlock detection among zklock's waiters, as the
 *		recipes use it: publish a wait (wait_record.c), check it for a
 *		cycle (deadlock.c), withdraw it when the wait ends (wait_record.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DEADLOCK_H
#define DEADLOCK_H

#include "wait_desc.h"

extern int64 ZkDeadlockPublish(const ZkWaitDesc *wait);
extern bool ZkDeadlockCheck(const ZkWaitDesc *wait);
extern void ZkDeadlockWithdraw(void);

#endif							/* DEADLOCK_H */
