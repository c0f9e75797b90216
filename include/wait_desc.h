/*-------------------------------------------------------------------------
 *
 * wait_desc.h
 *		What a waiting backend waits for, in the terms every kind of wait
 *		shares, so that deadlock detection sees them all alike.
 *
 * A wait has one or more targets, each a queue node of ours in the queue
 * of one lock node.  An all-of wait (a lock; several locks taken at once)
 * ends when every target is granted: it is blocked as long as any target
 * is.  An any-of wait (a counting semaphore, which any one lease holder
 * leaving unblocks) is a deadlock only when every holder is blocked, which
 * the detector does not establish: it never reports a cycle through an
 * any-of wait.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WAIT_DESC_H
#define WAIT_DESC_H

#include "vocabulary.h"

typedef enum ZkWaitKind
{
	ZK_WAIT_ALL_OF,				/* blocked while any target is */
	ZK_WAIT_ANY_OF				/* unblocked by any one holder leaving */
} ZkWaitKind;

/*
 * One queue node we wait with, and the nodes ahead of it that conflict
 * with it as far as the waiter knows: a superset of what blocks it now,
 * since nobody joins a queue ahead of a node.
 */
typedef struct ZkWaitTarget
{
	const char *lock_path;		/* the user's lock path */
	const char *lock_node;		/* its ZooKeeper node (the queue's parent) */
	const char *znode;			/* our queue node, full path */
	ZkLockMode	mode;
	int			nahead;
	char	  **ahead;			/* conflicting nodes ahead, full paths */
} ZkWaitTarget;

typedef struct ZkWaitDesc
{
	ZkWaitKind	kind;
	int			ntargets;
	const ZkWaitTarget *targets;
} ZkWaitDesc;

#endif							/* WAIT_DESC_H */
