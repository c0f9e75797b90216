/*-------------------------------------------------------------------------
 *
 * client/wait.h
 *		The one latch wait of the client layer and the waits built on it
 *		(client/wait.c), for the files of the client layer above it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef CLIENT_WAIT_H
#define CLIENT_WAIT_H

#include "client/bridge.h"

/*
 * The one latch wait.  A ZkWaitCheck looks at the bridge
 * (and the clock) after every wakeup and says whether the wait is over;
 * to sleep with a timeout it sets *wake_at (monotonic ms).
 */
typedef enum ZkWaitResult
{
	ZK_WAIT_SLEEP,				/* not yet: sleep until woken or *wake_at */
	ZK_WAIT_READY,				/* the condition holds */
	ZK_WAIT_DEADLINE,			/* the deadline passed */
	ZK_WAIT_ENDED,				/* the session ended: expired, or auth failed */
	ZK_WAIT_OUT_OF_TOUCH		/* disconnected for the session timeout */
} ZkWaitResult;

typedef ZkWaitResult (*ZkWaitCheck) (const ZkBridgeView *view, int64 now,
									 void *arg, int64 *wake_at);

/* what ZkWaitStatus waits for */
typedef enum ZkWaitFor
{
	ZK_FOR_ANSWER,				/* the op's answer */
	ZK_FOR_CONNECTED,			/* the session is connected */
	ZK_FOR_WATCH				/* the armed watch fired */
} ZkWaitFor;

/* ZkWaitStatus flags */
#define ZK_WAIT_THROUGH_OUT_OF_TOUCH 0x01	/* being out of touch does not end
											 * it */
#define ZK_WAIT_NO_INTERRUPTS	0x02	/* no CHECK_FOR_INTERRUPTS: no ERROR */

extern ZkWaitResult ZkLatchWait(ZkOp *op, ZkWaitCheck check, void *arg,
								bool interruptible);
extern ZkWaitResult ZkWaitStatus(ZkWaitFor goal, ZkOp *op, int64 deadline_ms,
								 int flags);
extern bool ZkWaitOrRaise(ZkWaitFor goal, ZkOp *op, int64 deadline_ms);
extern bool ZkSessionSilent(void);
extern void ZkWaitForgetSilence(void);

#endif							/* CLIENT_WAIT_H */
