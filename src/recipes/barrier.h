/*-------------------------------------------------------------------------
 *
 * recipes/barrier.h
 *		Barriers (recipes/barrier.c) and double barriers
 *		(recipes/double_barrier.c, recipes/double_barrier_leave.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef RECIPES_BARRIER_H
#define RECIPES_BARRIER_H

#include "base/vocabulary.h"

extern bool ZkBarrierSet(const char *node, const char *path);
extern bool ZkBarrierRemove(const char *node, const char *path);
extern bool ZkBarrierWait(const char *node, const char *path, int64 wait_ms);

/* What one look at a node that a barrier waits to see go found. */
typedef enum ZkNodeAwait
{
	ZK_NODE_GONE,				/* the node does not exist */
	ZK_NODE_CHANGED,			/* something happened: look again */
	ZK_NODE_WAIT_OVER			/* the deadline passed first */
} ZkNodeAwait;

extern ZkNodeAwait ZkAwaitNodeGone(int rc, int64 deadline_ms);

/* One participant of a double barrier, as enter made it. */
typedef struct ZkMember
{
	char	   *znode;			/* its node, <barrier node>/<uuid> (palloc'd) */
	int64		token;			/* its czxid */
} ZkMember;

extern bool ZkDoubleBarrierEnter(const char *node, const char *path,
								 int members, int64 wait_ms,
								 const char *data, int datalen,
								 ZkMember *member);
extern bool ZkDoubleBarrierLeave(const char *node, const char *path,
								 const char *znode, int64 wait_ms);
extern bool ZkDoubleBarrierDepart(const char *node, const char *znode,
								  int64 deadline_ms);

#endif							/* RECIPES_BARRIER_H */
