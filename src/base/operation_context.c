/*-------------------------------------------------------------------------
 *
 * base/operation_context.c
 *		The operation a backend is carrying out against ZooKeeper, named in
 *		the CONTEXT line of every error raised meanwhile.
 *
 * The session layer's errors are whole sentences that know nothing of the
 * operation ("ZooKeeper session expired"); what the backend was doing, and
 * on which path, is an error context callback, as PostgreSQL's
 * XactLockTableWait says "while updating tuple (0,1) in relation ...":
 * messages are never built from pieces, and each phrase below is one
 * whole translatable string.
 *
 * Rules:
 *
 * - The entry point of an operation (a recipe's acquisition, renewal,
 *	 release, barrier call, a read of the cluster, the authentication of a
 *	 new session, the check of the held nodes at COMMIT) pushes its context
 *	 for its whole duration, and pops it on every normal return.  Every
 *	 error raised meanwhile carries the line: the session's, the recipe's
 *	 own (a lock timeout, a node that disappeared), a cancel's.
 *
 * - An operation that goes from acquiring to waiting says so
 *	 (ZkOperationSet), so that the line names the step the backend is in.
 *
 * - One context per operation.  A step that runs inside another
 *	 operation's (deadlock detection runs inside a wait) pushes none: the
 *	 wait's line says what the backend is doing.
 *
 * - An error the entry point raises before it pushes the context (a
 *	 request refused at once from what the backend holds) carries the same
 *	 line as an item of its ereport (ZkOperationErrcontext).
 *
 * - An ERROR needs no pop.  The context lines are collected when the
 *	 error is raised (errfinish calls the callbacks before it jumps);
 *	 PG_TRY saves error_context_stack, PG_CATCH, PG_FINALLY and PG_END_TRY
 *	 restore it, and the top-level error recovery resets it.  So a context
 *	 pushed before a PG_TRY stays for the cleanup in its PG_CATCH, and one
 *	 pushed inside a PG_TRY block is popped before the block ends.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "base/operation_context.h"
#include "base/text_encoding.h"

static void zk_operation_callback(void *arg);

/*
 * zk_operation_callback
 *		The CONTEXT line of a pushed operation.
 */
static void
zk_operation_callback(void *arg)
{
	ZkOperationContext *cxt = (ZkOperationContext *) arg;

	(void) ZkOperationErrcontext(cxt->oper, cxt->path);
}

/*
 * ZkOperationErrcontext
 *		The CONTEXT line of 'oper' on 'path' (UTF-8): one whole phrase for
 *		each.  Also an item of an ereport of its own, for an error that an
 *		operation's entry point raises before it pushes its context (a
 *		request refused from what the backend holds, without a ZooKeeper
 *		call): ereport(ERROR, (..., ZkOperationErrcontext(oper, path))).
 */
int
ZkOperationErrcontext(ZkOperation oper, const char *utf8_path)
{
	const char *path = ZkUtf8ForMessage(utf8_path);

	switch (oper)
	{
		case ZK_OPER_ACQUIRE_LOCK:
			errcontext("while acquiring lock \"%s\"", path);
			break;
		case ZK_OPER_WAIT_LOCK:
			errcontext("while waiting for lock \"%s\"", path);
			break;
		case ZK_OPER_ACQUIRE_SEMAPHORE:
			errcontext("while acquiring semaphore \"%s\"", path);
			break;
		case ZK_OPER_WAIT_SEMAPHORE:
			errcontext("while waiting for semaphore \"%s\"", path);
			break;
		case ZK_OPER_ACQUIRE_LEASE:
			errcontext("while acquiring a lease on lock \"%s\"", path);
			break;
		case ZK_OPER_RENEW_LEASE:
			errcontext("while renewing a lease on lock \"%s\"", path);
			break;
		case ZK_OPER_RELEASE_LEASE:
			errcontext("while releasing a lease on lock \"%s\"", path);
			break;
		case ZK_OPER_RAISE_BARRIER:
			errcontext("while raising barrier \"%s\"", path);
			break;
		case ZK_OPER_REMOVE_BARRIER:
			errcontext("while removing barrier \"%s\"", path);
			break;
		case ZK_OPER_WAIT_BARRIER:
			errcontext("while waiting for barrier \"%s\"", path);
			break;
		case ZK_OPER_ENTER_DOUBLE_BARRIER:
			errcontext("while entering double barrier \"%s\"", path);
			break;
		case ZK_OPER_LEAVE_DOUBLE_BARRIER:
			errcontext("while leaving double barrier \"%s\"", path);
			break;
		case ZK_OPER_SCAN_LOCKS:
			errcontext("while scanning the locks under \"%s\"", path);
			break;
		case ZK_OPER_READ_QUEUE:
			errcontext("while reading the queue of lock \"%s\"", path);
			break;
		case ZK_OPER_VERIFY_LOCK:
			errcontext("while verifying lock \"%s\"", path);
			break;
		case ZK_OPER_REVOKE_LOCK:
			errcontext("while revoking lock \"%s\"", path);
			break;
		case ZK_OPER_AUTHENTICATE:
			errcontext("while authenticating to \"%s\"", path);
			break;
	}
	return 0;
}

/*
 * ZkOperationPush
 *		Name 'oper' on 'path' in every error raised until ZkOperationPop.
 *		'cxt' and 'path' must live until then.
 */
void
ZkOperationPush(ZkOperationContext *cxt, ZkOperation oper, const char *path)
{
	cxt->oper = oper;
	cxt->path = path;
	cxt->callback.callback = zk_operation_callback;
	cxt->callback.arg = cxt;
	cxt->callback.previous = error_context_stack;
	error_context_stack = &cxt->callback;
}

/*
 * ZkOperationSet
 *		The pushed operation goes on as 'oper' on 'path' (from acquiring to
 *		waiting, say).
 */
void
ZkOperationSet(ZkOperationContext *cxt, ZkOperation oper, const char *path)
{
	cxt->oper = oper;
	cxt->path = path;
}

/*
 * ZkOperationPop
 *		The operation returns: its context goes.  It must be the innermost.
 */
void
ZkOperationPop(ZkOperationContext *cxt)
{
	Assert(error_context_stack == &cxt->callback);
	error_context_stack = cxt->callback.previous;
}
