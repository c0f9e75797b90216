/*-------------------------------------------------------------------------
 *
 * cluster/path_kind.h
 *		One kind of recipe per path: what the children of a path's node
 *		say it is used by, and the refusal of another kind there
 *		(cluster/path_kind.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef CLUSTER_PATH_KIND_H
#define CLUSTER_PATH_KIND_H

#include "base/vocabulary.h"

/* The kinds of recipe a path can be used by. */
typedef enum ZkPathKind
{
	ZK_KIND_NONE,				/* nothing a recipe left that says its kind */
	ZK_KIND_LOCK,				/* locks, lock sets and leases: one queue */
	ZK_KIND_SEMAPHORE,
	ZK_KIND_BARRIER,
	ZK_KIND_DOUBLE_BARRIER
} ZkPathKind;

extern const char *ZkPathKindName(ZkPathKind kind);
extern ZkPathKind ZkPathKindOther(const char *const *names, int n,
								  ZkPathKind asked);
extern void ZkPathKindCheck(const char *path, ZkPathKind asked,
							const char *const *names, int n);
extern ZkPathKind ZkPathKindOfNode(const char *node, ZkPathKind asked);
extern void ZkPathKindCheckNode(const char *node, const char *path,
								ZkPathKind asked);
extern void ZkPathKindRefuse(const char *path, ZkPathKind asked,
							 ZkPathKind found) pg_attribute_noreturn();

#endif							/* CLUSTER_PATH_KIND_H */
