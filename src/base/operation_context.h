/*-------------------------------------------------------------------------
 *
 * base/operation_context.h
 *		The operation a backend is carrying out against ZooKeeper, named in
 *		the CONTEXT line of every error raised meanwhile
 *		(base/operation_context.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BASE_OPERATION_CONTEXT_H
#define BASE_OPERATION_CONTEXT_H

/* What the backend is doing; each names a path (the host list for one). */
typedef enum ZkOperation
{
	ZK_OPER_ACQUIRE_LOCK,		/* queueing for a lock, a set's locks */
	ZK_OPER_WAIT_LOCK,			/* waiting in a lock's queue */
	ZK_OPER_ACQUIRE_SEMAPHORE,	/* queueing for a semaphore's permit */
	ZK_OPER_WAIT_SEMAPHORE,		/* waiting for its mutex or permit count */
	ZK_OPER_ACQUIRE_LEASE,		/* taking a lease on a lock, its wait too */
	ZK_OPER_RENEW_LEASE,
	ZK_OPER_RELEASE_LEASE,
	ZK_OPER_RAISE_BARRIER,
	ZK_OPER_REMOVE_BARRIER,
	ZK_OPER_WAIT_BARRIER,
	ZK_OPER_ENTER_DOUBLE_BARRIER,
	ZK_OPER_LEAVE_DOUBLE_BARRIER,
	ZK_OPER_SCAN_LOCKS,			/* the cluster's locks under a prefix */
	ZK_OPER_READ_QUEUE,			/* one lock's queue (zk_lock_queue) */
	ZK_OPER_VERIFY_LOCK,		/* a held node before COMMIT */
	ZK_OPER_REVOKE_LOCK,		/* the holders of a lock (zk_revoke) */
	ZK_OPER_AUTHENTICATE		/* path: the host list */
} ZkOperation;

/*
 * An operation in progress: an error context callback and what it names.
 * Lives on the stack of the function that pushes it, as long as the push.
 */
typedef struct ZkOperationContext
{
	ErrorContextCallback callback;
	ZkOperation oper;
	const char *path;			/* UTF-8, as ZooKeeper stores it */
} ZkOperationContext;

extern void ZkOperationPush(ZkOperationContext *cxt, ZkOperation oper,
							const char *path);
extern void ZkOperationSet(ZkOperationContext *cxt, ZkOperation oper,
						   const char *path);
extern void ZkOperationPop(ZkOperationContext *cxt);
extern int	ZkOperationErrcontext(ZkOperation oper, const char *utf8_path);

#endif							/* BASE_OPERATION_CONTEXT_H */
