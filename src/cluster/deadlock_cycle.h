/*-------------------------------------------------------------------------
 *
 * cluster/deadlock_cycle.h
 *		A cycle of waits found by the deadlock search: its verification
 *		and its report (cluster/deadlock_cycle.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef CLUSTER_DEADLOCK_CYCLE_H
#define CLUSTER_DEADLOCK_CYCLE_H

#include "cluster/wait_record.h"

/* One member of a cycle found: its record, the target that leads on, and
 * the node there that blocks it (owned by the next member). */
typedef struct ZkCycleMember
{
	const ZkWaitRecord *rec;
	int			target;
	const char *blocker;
} ZkCycleMember;

extern bool ZkDeadlockVerifyCycle(const ZkCycleMember *cycle, int n,
								  bool *incomplete);
extern void ZkDeadlockReport(const ZkCycleMember *cycle, int n)
			pg_attribute_noreturn();

#endif							/* CLUSTER_DEADLOCK_CYCLE_H */
