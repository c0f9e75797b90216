/*-------------------------------------------------------------------------
 *
 * client/bridge.h
 *		The client layer's own view of the state it shares with the
 *		ZooKeeper client library's threads (client/bridge.c): what the
 *		backend sees of it, the functions that read and change it, and what
 *		runs on the library's threads.  Internal to the client layer, whose
 *		bottom it is; the layers above include client/client.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef CLIENT_BRIDGE_H
#define CLIENT_BRIDGE_H

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
	bool		ended;			/* the session ended: expired or auth_failed */
	int64		connected_at;	/* monotonic ms of the session's first connect */
	int64		disconnected_at;	/* monotonic ms; 0 while connected */
	int			watch_event;	/* event on the armed watch, 0 = none yet */
	int			jobs_pending;	/* background jobs not yet finished */
	int64		jobs_failed;	/* background jobs given up */
	int64		alive_at;		/* the session was alive then; 0: unknown */
	uint64		answers;		/* answers so far (progress of a batch) */
	bool		op_done;		/* the op looked at has its answer */
} ZkBridgeView;

/* ZkNodeWatcher's context: NULL for the blocker's watch, this for the own node's */
#define ZK_OWN_WATCH			((void *) (uintptr_t) ZK_WATCH_OWN)

/* the backend's side of the shared state */
extern void ZkBridgeLook(ZkOp *op, ZkBridgeView *view);
extern zhandle_t *ZkBridgeHandle(void);
extern void ZkBridgeReset(void);
extern zhandle_t *ZkBridgeOpen(const char *hosts, int session_timeout,
								watcher_fn watcher);
extern bool ZkBridgeClose(slist_head *deferred);
extern void ZkBridgeForget(void);
extern void ZkBridgeSetAliveAt(int64 alive_at);
extern void ZkBridgeMarkExpired(void);
extern void ZkBridgeAwait(ZkOp *op);
extern void ZkBridgeArmWatch(ZkWatchKind kind, char *path);
extern int	ZkBridgeTakeWatchEvent(void);

/* ops */
extern void ZkOpIssued(ZkOp *op, int rc);
extern bool ZkOpAbandon(ZkOp *op);
extern void ZkOpFreeMemory(ZkOp *op);
extern void ZkReleaseOpIssued(ZkOp *op);

/* what runs on the client library's threads */
extern void ZkBridgeSessionEvent(int state, slist_head *resend);
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

/* the shared state of background jobs (client/jobs.c) */
extern void ZkBridgeJobAdded(ZkOp *waiter);
extern void ZkBridgeJobsFailed(int n);
extern void ZkBridgeJobEnded(ZkOp *waiter, bool succeeded,
							 slist_node *carry);
extern zhandle_t *ZkBridgeJobHandle(void);
extern bool ZkBridgeJobDefer(slist_node *job);
extern void ZkBridgeNoteAnswer(int64 sent_at, int rc);
extern void ZkBridgeTakeCarried(slist_head *into);

/* held nodes' watch events, collected for the backend */

#endif							/* CLIENT_BRIDGE_H */
