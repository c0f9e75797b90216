/*-------------------------------------------------------------------------
 *
 * client/client.h
 *		The client layer as the layers above see it: the backend's
 *		ZooKeeper session, asynchronous requests and the waits for their
 *		answers, and background releases.  It declares nothing itself.
 *
 * The layer's files, from the bottom: client/bridge.c (the state shared with
 * the client library's threads, and what runs there), client/session.c
 * (the session's state and errors), client/wait.c (the one latch wait),
 * client/request.c (the requests), client/jobs.c (the background
 * deletes), client/release_wait.c (their waits), client/guard.c (the
 * guard), client/loss_watch.c (the held nodes watched for their loss, and
 * the watchdog thread), client/session_watcher.c (the session's watcher)
 * and client/connect.c (opening and closing the session).  Each includes
 * the headers of the files below it only.
 *
 * The errors of the waits and of ZkRaiseForRc name no operation: the
 * caller has pushed its operation's error context
 * (base/operation_context.h), which does.
 *
 *-------------------------------------------------------------------------
 */
#ifndef CLIENT_CLIENT_H
#define CLIENT_CLIENT_H

#include <zookeeper/zookeeper.h>

#include "base/clock.h"
#include "lib/ilist.h"

typedef enum ZkOpKind
{
	ZKOP_CREATE,
	ZKOP_CHILDREN,
	ZKOP_GET,
	ZKOP_EXISTS,
	ZKOP_SYNC,
	ZKOP_AUTH,
	ZKOP_CREATE_COUNTED,		/* multi: creates, each with a count of its
								 * parent's children in the same transaction */
	ZKOP_RELEASE,				/* a batch of background deletes */
	ZKOP_MULTI					/* setData, delete, check and create requests */
} ZkOpKind;

struct ZkMultiAux;

/*
 * One asynchronous request.  The result fields are written once, by the
 * library's completion thread, before 'done' is set under the bridge
 * mutex; the backend reads them only after it has seen 'done'.  Ops live
 * in malloc'd memory because the completion thread may outlive the
 * backend's interest in them (an abandoned op is freed by whichever side
 * finishes with it last).
 */
typedef struct ZkOp
{
	ZkOpKind	kind;
	int			rc;				/* ZOK or a ZooKeeper error code */
	struct Stat stat;			/* create, get, exists */
	char	   *value;			/* created path, or node data */
	int			value_len;
	char	  **children;		/* getChildren: names */
	int			nchildren;
	int32		parent_children;	/* counted create: children of the
									 * parent right after ours was made */
	struct ZkMultiAux *multi;	/* multis: request and results */
	bool		ordered;		/* a write or a sync: the leader answers it */
	int64		sent_at;		/* monotonic ms when the request was sent */
	int64		sent_us;		/* the same in microseconds */
	int64		done_us;		/* when its answer came (under the mutex) */
	/* under the bridge mutex */
	int			pending;		/* release: deletes not yet answered */
	bool		done;
	bool		abandoned;
	/* backend thread only */
	int			nest_level;		/* transaction nesting level at start */
	dlist_node	node;			/* in the backend's list of live ops */
} ZkOp;

/* which watch a getData leaves on its node */
typedef enum ZkWatchKind
{
	ZK_NO_WATCH,
	ZK_WATCH_BLOCKER,			/* the node a waiter waits for (ZkWatchArm) */
	ZK_WATCH_OWN				/* a waiter's own node: its event (a
								 * deletion, or a change that spent the
								 * watch) is kept for ZkOwnNodeEvent(),
								 * while it is the node ZkWatchArm() armed */
} ZkWatchKind;

/* one request of a ZkMulti */
typedef enum ZkMultiKind
{
	ZK_MULTI_SET,
	ZK_MULTI_DELETE,
	ZK_MULTI_CHECK,
	ZK_MULTI_CREATE				/* a persistent node (not sequential) */
} ZkMultiKind;

typedef struct ZkMultiReq
{
	ZkMultiKind kind;
	const char *path;
	const char *data;			/* ZK_MULTI_SET */
	int			datalen;
	int			version;		/* -1: any */
} ZkMultiReq;

/* What zk_session() shows. */
typedef struct ZkSessionStatus
{
	const char *state;			/* "connected", "connecting", "expired",
								 * "auth_failed", "closed" */
	int64		session_id;
	char		server[128];
	int			negotiated_timeout; /* ms */
	int64		connected_for_ms;	/* since the session was established */
	int			releases_pending;	/* background deletes not yet confirmed */
	int64		releases_failed;	/* deletes given up (session gone, refused) */
} ZkSessionStatus;

/* Called with the session already closed, when it turned out expired. */
typedef void (*ZkSessionLostHook) (void);

/* Number of locks the backend holds; a session cannot be replaced then. */
typedef int (*ZkLocksHeldHook) (void);

/*
 * The settings (a bit per ZkSessionSetting) whose new value, which a reload
 * brought while the backend held locks, waits until it holds none; called
 * at each call that needs the session, and once no lock is held, lets those
 * values take effect (and returns 0).
 */
typedef int (*ZkSettingsHook) (void);

/* the settings that choose the session (ZkSessionOpenedWith), and the root */
typedef enum ZkSessionSetting
{
	ZK_SESSION_SETTING_HOSTS,
	ZK_SESSION_SETTING_AUTH,
	ZK_SESSION_SETTING_AUTH_FILE,
	ZK_SESSION_SETTING_TIMEOUT,
	ZK_SESSION_SETTING_ROOT,	/* chooses no session: where new locks go */
	ZK_NUM_SESSION_SETTINGS
} ZkSessionSetting;

/* what ZkSessionConfirmAlive found */
typedef enum ZkAliveResult
{
	ZK_SESSION_ALIVE,
	ZK_SESSION_EXPIRED,
	ZK_SESSION_UNCONFIRMED
} ZkAliveResult;

/* the session (client/session.c, client/connect.c) */
extern void ZkSessionSetHooks(ZkSessionLostHook lost, ZkLocksHeldHook held);
extern bool ZkSessionIsExpired(void);
extern bool ZkSessionExpireIfOutOfTouch(void);
extern void ZkSessionGetStatus(ZkSessionStatus *status);
extern bool ZkSessionAliveFresh(void);
extern bool ZkIsConnectionLoss(int rc);
extern const char *ZkRcName(int rc);
extern void ZkRaiseForRc(int rc) pg_attribute_noreturn();
extern void ZkSessionSetSettingsHook(ZkSettingsHook hook);
extern void ZkSessionEnsure(void);
extern void ZkSessionCloseIfLost(void);
extern void ZkSessionGiveUp(void);
extern void ZkSessionSuspect(void);
extern ZkAliveResult ZkSessionConfirmAlive(void);
extern void ZkSessionRaiseUnlessAlive(void);
extern bool ZkSessionOpenedWith(ZkSessionSetting setting, const char *value,
								int timeout_ms);
extern const char *ZkSessionHosts(void);

/* requests and their waits (client/request.c) */
extern ZkOp *ZkCreate(const char *path, const char *data, int datalen,
					  int flags, bool protect);
extern ZkOp *ZkCreateTtl(const char *path, const char *data, int datalen,
						  int64 ttl_ms);
extern ZkOp *ZkCreateSet(int n, const char *const *paths,
						 const char *const *datas, const int *datalens,
						 const char *const *parents);
extern const char *ZkCreateSetResult(const ZkOp *op, int i,
									 int32 *parent_children);
extern ZkOp *ZkMulti(int n, const ZkMultiReq *reqs);
extern int	ZkMultiFailure(const ZkOp *op, int *err);
extern ZkOp *ZkGetChildren(const char *path);
extern ZkOp *ZkGetChildrenWatched(const char *path);
extern ZkOp *ZkSetData(const char *path, const char *data, int datalen);
extern ZkOp *ZkGetData(const char *path, ZkWatchKind watch);
extern ZkOp *ZkExists(const char *path);
extern ZkOp *ZkExistsWatched(const char *path);
extern void ZkWatchDrop(const char *path);
extern ZkOp *ZkDelete(const char *path, int version);
extern ZkOp *ZkSync(const char *path);
extern void ZkOpWait(ZkOp *op);
extern int	ZkOpResult(ZkOp *op);
extern bool ZkOpIsDone(ZkOp *op);
extern bool ZkOpWaitUntil(ZkOp *op, int64 deadline_ms);
extern void ZkOpFree(ZkOp *op);
extern void ZkOpsAbandon(int nest_level);
extern bool ZkWaitConnectedUntil(int64 deadline_ms);
extern bool ZkAwaitReconnect(int rc);
extern ZkOp *ZkGetChildrenAnswered(const char *path);
extern ZkOp *ZkGetChildrenSynced(const char *path);
extern ZkOp *ZkGetDataAnswered(const char *path, ZkWatchKind watch);
extern ZkOp *ZkExistsAnswered(const char *path);
extern int	ZkDeleteAnswered(const char *path, int version, bool *resent);
extern void ZkDeleteSync(const char *path);
extern ZkOp *ZkMultiAnswered(int n, const ZkMultiReq *reqs, bool *resent);
extern ZkOp *ZkCreateAnswered(const char *path, const char *data, int datalen,
							  int flags, bool *resent);
extern void ZkWatchArm(const char *path, ZkWatchKind kind);
extern int	ZkWatchWait(int64 deadline_ms);
extern uint64 ZkWatchWaitCount(void);

/* releases in the background (client/jobs.c), their waits
 * (client/release_wait.c), the guard (client/guard.c) */
extern ZkOp *ZkDeleteNodes(const char *const *paths, int n, bool want_answer);
extern bool ZkReleaseWait(ZkOp *op);
extern void ZkDeleteInBackground(const char *path);
extern void ZkSweepInBackground(const char *parent, const char *prefix);
extern void ZkGuardBegin(const char *parent, const char *prefix);
extern void ZkGuardNode(const char *path);
extern void ZkGuardRelease(void);
extern ZkOp *ZkGuardRemove(bool want_answer);

/* a waiter's own node's watch (client/bridge.c) */
extern int	ZkOwnNodeEvent(const char *path);

/* how a hold was lost, as the loss watch found it */
typedef enum ZkLossKind
{
	ZK_LOSS_NONE,
	ZK_LOSS_DELETED,			/* another client deleted its node */
	ZK_LOSS_EXPIRED,			/* the session expired */
	ZK_LOSS_OUT_OF_TOUCH,		/* disconnected past the session timeout */
	ZK_LOSS_TTL,				/* a lease's ttl ran out */
	ZK_LOSS_REVOKED				/* a revocation was asked of it, and this
								 * backend deleted its node
								 * (zklock.on_revoke = release) */
} ZkLossKind;

/* what became of the session, as ZkLossWatchTake tells */
typedef enum ZkSessionLoss
{
	ZK_SESSION_LOSS_NONE,
	ZK_SESSION_LOSS_UNREPORTED, /* lost, no ERROR said so yet */
	ZK_SESSION_LOSS_REPORTED	/* lost, and an ERROR named its holds */
} ZkSessionLoss;

/* what the loss watch knows of one node, as ZkLossWatchNode tells */
typedef struct ZkHeldState
{
	bool		registered;
	bool		watching;		/* its data watch is set at the server */
	bool		revoke_requested;	/* its data was the revocation marker */
	ZkLossKind	lost;			/* ZK_LOSS_NONE while held */
} ZkHeldState;

/* the loss watch: holds whose loss stops the statement (client/loss_watch.c) */
extern void ZkLossWatchSetCancel(bool cancel);
extern void ZkLossWatchSetRevoke(bool release);
extern void ZkLossWatchRegister(const char *znode, const char *path,
								const char *what, int64 deadline);
extern void ZkLossWatchRelease(const char *znode);
extern bool ZkLossWatchArm(void);
extern bool ZkLossWatchDisarm(void);
extern bool ZkLossWatchPending(void);
extern ZkHeldState ZkLossWatchNode(const char *znode);
extern int	ZkLossWatchDescribe(bool cause, ZkLossKind *kind,
								const char **what, char **path,
								char **znode);
extern void ZkLossWatchMarkReported(void);
extern int	ZkLossWatchTake(char ***znodes, bool **reported,
							ZkSessionLoss *session);

#endif							/* CLIENT_CLIENT_H */
