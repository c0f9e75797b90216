/*-------------------------------------------------------------------------
 *
 * recipes/double_barrier_round.h
 *		What entering and leaving a double barrier share
 *		(recipes/double_barrier_round.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef RECIPES_DOUBLE_BARRIER_ROUND_H
#define RECIPES_DOUBLE_BARRIER_ROUND_H

#include "client/client.h"

/* the child whose creation opens a double barrier */
#define READY_NODE		"ready"

/* One look at a double barrier (ZkDoubleBarrierLook). */
typedef struct ZkBarrierLook
{
	ZkOp	   *ready;			/* the caller's read of "ready" */
	ZkOp	   *children;		/* the barrier node's children */
	int			version;		/* the barrier node's data version */
} ZkBarrierLook;

extern int	ZkDoubleBarrierLook(const char *node, ZkOp *rd, int64 deadline_ms,
								ZkBarrierLook *look);

extern int	ZkDoubleBarrierRoundParse(const char *ready, const ZkOp *rd,
									  char ***names);
extern void ZkDoubleBarrierRaiseMemberGone(const char *znode)
			pg_attribute_noreturn();
extern int	ZkDoubleBarrierMulti(int n, const ZkMultiReq *reqs);
extern int	ZkDoubleBarrierDeleteVersioned(const char *node, int version,
										   const char *first,
										   const char *second);
extern bool ZkDoubleBarrierRoundOver(const char *node, const char *our_name,
									 int64 round);
extern bool ZkDoubleBarrierDeleteIfReady(const char *node, const char *ready,
										 int64 round, const char *target);

#endif							/* RECIPES_DOUBLE_BARRIER_ROUND_H */
