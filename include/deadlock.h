/*-------------------------------------------------------------------------
 *
 * deadlock.h
 *		Cluster-wide deadlock detection among zklock's waiters.
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
