/*-------------------------------------------------------------------------
 *
 * client/internal.h
 *		What the files of the session layer share with one another: the
 *		bridge's functions (client/bridge.c), the one latch wait and the
 *		session's settings (client/session.c), the ops' bookkeeping
 *		(client/request.c) and the background jobs' entry points
 *		(client/jobs.c).
 *
 * Only src/zk_*.c include this header; the rest of zklock includes
 * client/client.h.  The bridge's shared state is not declared here: the other
 * files read it through ZkBridgeLook and change it through the bridge's
 * functions, so that only client/bridge.c takes the bridge mutex.
 *
 *-------------------------------------------------------------------------
 */
#ifndef CLIENT_INTERNAL_H
#define CLIENT_INTERNAL_H

#include "client/client.h"

/*
 * Request and results of a multi (ZkCreateSet, ZkMulti).  For ZkCreateSet,
 * each node's create is followed, when counted, by a setData of its
 * parent.  Everything is malloc'd: the completion thread writes the
 * results.
 */
typedef struct ZkMultiAux
{
	int			n;				/* nodes created (ZkMulti: requests) */
	int			nops;			/* requests in the multi */
	bool		counted;		/* each create is followed by a setData */
	zoo_op_t   *ops;
	zoo_op_result_t *results;
	struct Stat *parent_stats;	/* counted: each parent's Stat */
	char	  **created;		/* each create's path buffer */
} ZkMultiAux;

/*
 * What the backend sees of the bridge's shared state, copied at one moment
 * under the bridge mutex (ZkBridgeLook).
 */
typedef struct ZkBridgeView
{
	bool		open;			/* a handle exists */
	int			state;			/* last session state the watcher saw */
	bool		expired;
	bool		auth_failed;
	bool		lost;			/* expired or auth_failed */
	int64		connected_at;	/* monotonic ms of the session's first connect */
	int64		disconnected_at;	/* monotonic ms; 0 while connected */
	int			watch_event;	/* event on the armed watch, 0 = none yet */
	int			jobs_pending;	/* background jobs not yet finished */
	int64		jobs_failed;	/* background jobs given up */
	int64		alive_at;		/* the session was alive then; 0: unknown */
	uint64		answers;		/* answers so far (progress of a batch) */
	bool		op_done;		/* the op looked at has its answer */
} ZkBridgeView;

/* ZkNodeWatcher's context: NULL for a waiter's watch, this for a held node's */
#define ZK_HELD_WATCH			((void *) (uintptr_t) ZK_WATCH_HELD)

/* client/bridge.c: the backend's side of the shared state */
extern void ZkBridgeLook(ZkOp *op, ZkBridgeView *view);
extern zhandle_t *ZkBridgeHandle(void);
extern void ZkBridgeReset(void);
extern zhandle_t *ZkBridgeOpen(const char *hosts, int session_timeout);
extern bool ZkBridgeClose(void);
extern void ZkBridgeSetAliveAt(int64 alive_at);
extern void ZkBridgeMarkExpired(void);
extern void ZkBridgeAwait(ZkOp *op);
extern void ZkBridgeArmWatch(char *path);
extern int	ZkBridgeTakeWatchEvent(void);

/* client/bridge.c: ops */
extern void ZkOpIssued(ZkOp *op, int rc);
extern bool ZkOpAbandon(ZkOp *op);
extern void ZkOpFreeMemory(ZkOp *op);
extern void ZkReleaseOpIssued(ZkOp *op);

/* client/bridge.c: what runs on the client library's threads */
extern void ZkNodeWatcher(zhandle_t *zh, int type, int state,
						  const char *path, void *ctx);
extern void ZkOpDoneStringStat(int rc, const char *string,
							   const struct Stat *stat, const void *data);
extern void ZkOpDoneStrings(int rc, const struct String_vector *strings,
							const void *data);
extern void ZkOpDoneData(int rc, const char *value, int value_len,
						 const struct Stat *stat, const void *data);
extern void ZkOpDoneStat(int rc, const struct Stat *stat, const void *data);
extern void ZkOpDoneString(int rc, const char *value, const void *data);
extern void ZkOpDoneVoid(int rc, const void *data);
extern void ZkOpDoneCreateSet(int rc, const void *data);
extern void ZkOpDoneMulti(int rc, const void *data);

extern bool ZkRcFromServer(int rc);

/* client/bridge.c: the shared state of background jobs (client/jobs.c) */
extern void ZkBridgeJobAdded(ZkOp *waiter);
extern void ZkBridgeJobsFailed(int n);
extern void ZkBridgeJobEnded(ZkOp *waiter, bool succeeded);
extern void ZkBridgeJobCarry(slist_node *job, ZkOp *waiter);
extern zhandle_t *ZkBridgeJobHandle(void);
extern bool ZkBridgeJobDefer(slist_node *job);
extern void ZkBridgeNoteAnswer(int64 sent_at, int rc);
extern void ZkBridgeTakeCarried(slist_head *into);

/*
 * client/session.c: the one latch wait.  A ZkWaitCheck looks at the bridge
 * (and the clock) after every wakeup and says whether the wait is over;
 * to sleep with a timeout it sets *wake_at (monotonic ms).
 */
typedef enum ZkWaitResult
{
	ZK_WAIT_SLEEP,				/* not yet: sleep until woken or *wake_at */
	ZK_WAIT_READY,				/* the condition holds */
	ZK_WAIT_DEADLINE,			/* the deadline passed */
	ZK_WAIT_LOST,				/* the session expired or auth failed */
	ZK_WAIT_CUT_OFF				/* disconnected for the session timeout */
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
#define ZK_WAIT_NO_CUT_OFF		0x01	/* a lost connection does not end it */
#define ZK_WAIT_NO_INTERRUPTS	0x02	/* no CHECK_FOR_INTERRUPTS: no ERROR */

extern ZkWaitResult ZkLatchWait(ZkOp *op, ZkWaitCheck check, void *arg,
								bool interruptible);
extern ZkWaitResult ZkWaitStatus(ZkWaitFor goal, ZkOp *op, int64 deadline_ms,
								 int flags);
extern bool ZkWaitOrRaise(ZkWaitFor goal, ZkOp *op, int64 deadline_ms);

/* client/session.c: the clock and the session's settings */
extern int64 ZkNowUs(void);
extern int	ZkSessionTimeout(void);
extern int64 ZkSessionGiveUpAt(const ZkBridgeView *view);
extern const struct ACL_vector *ZkSessionAcl(bool protect);

/* client/request.c */
extern ZkOp *ZkOpNew(ZkOpKind kind);
extern ZkOp *ZkOpTryNew(ZkOpKind kind);
extern void ZkOpsSessionClosed(void);

/* client/jobs.c */
extern void ZkJobsSend(slist_head *jobs);
extern void ZkJobsDrop(slist_head *jobs);
extern void ZkJobsResendCarried(void);
extern void ZkGuardRemoveAtExit(void);

#endif							/* CLIENT_INTERNAL_H */
