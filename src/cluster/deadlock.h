/*-------------------------------------------------------------------------
 *
 * cluster/deadlock.h
 *		Cluster-wide deadlock detection among zklock's waiters: the check
 *		for a cycle of waits through this backend's published wait (its
 *		record, cluster/wait_record.h, published before the check and
 *		withdrawn when the wait ends).
 *
 *-------------------------------------------------------------------------
 */
#ifndef CLUSTER_DEADLOCK_H
#define CLUSTER_DEADLOCK_H

#include "base/vocabulary.h"


extern bool ZkDeadlockCheck(const ZkWaitDesc *wait);

#endif							/* CLUSTER_DEADLOCK_H */
