/*-------------------------------------------------------------------------
 *
 * client/held_node.h
 *		The loss watch's records and state, shared by its three files: the
 *		record's changes (client/held_node.c), the backend's side
 *		(client/loss_watch.c) and the client threads' side
 *		(client/watchdog.c).  Every field marked so is under ZkWatch.mutex;
 *		the functions named ...Locked are called with it held.  No file
 *		outside the loss watch includes this.
 *
 *-------------------------------------------------------------------------
 */
#ifndef CLIENT_HELD_NODE_H
#define CLIENT_HELD_NODE_H

#include <pthread.h>

#include "lib/ilist.h"

#include "client/client.h"

/* how long a node is held before its deletion watch is set */
#define ZK_LOSS_ARM_DELAY_MS	250

/* One held node. */
typedef struct ZkHeldNode
{
	/* under ZkWatch.mutex */
	dlist_node	link;			/* in ZkWatch.nodes while registered */
	dlist_node	arm_link;		/* in ZkWatch.to_arm while its watch is due */
	dlist_node	deadline_link;	/* in ZkWatch.deadlines: a lease */
	bool		to_arm;
	bool		watching;		/* its data watch is set at the server */
	bool		revoke_requested;	/* its data became the revocation marker */
	bool		revoking;		/* to be deleted for that: its arm sends the
								 * delete instead of the watch */
	int			refs;			/* registration + watches and requests */
	bool		released;		/* the backend withdrew it */
	ZkLossKind	lost;			/* ZK_LOSS_NONE while held */
	bool		reported;		/* the SQL layer named the loss */
	bool		taken;			/* the holds layer took the loss */
	int64		arm_at;			/* monotonic ms: set its watch then */
	int64		deadline;		/* monotonic ms: a lease runs out; 0: none */
	/* constant */
	const char *what;			/* static: "exclusive lock", "lease", ... */
	char	   *path;			/* the user's lock path, after znode */
	char		znode[FLEXIBLE_ARRAY_MEMBER];
} ZkHeldNode;

/* The loss watch's state. */
typedef struct ZkLossWatchData
{
	pthread_mutex_t mutex;
	pthread_cond_t cond;		/* wakes the watchdog */
	pthread_t	thread;
	bool		running;		/* the watchdog runs */
	bool		start_failed;	/* it could not be started: no new try
								 * (nor WARNING) until the session ends */
	bool		stop;			/* asks it to end */
	int64		wake_at;		/* when it wakes next; INT64_MAX: waits */
	bool		cancel;			/* zklock.on_lock_loss = cancel */
	bool		revoke_release; /* zklock.on_revoke = release */
	bool		armed;			/* a statement runs that a loss stops */
	pid_t		pid;			/* the backend's */
	dlist_head	nodes;			/* registered ZkHeldNodes */
	dlist_head	to_arm;			/* those whose watch is due, by arm_at */
	dlist_head	deadlines;		/* those that are leases */
	dlist_head	orphans;		/* withdrawn, still named by a watch */
	int			nlost;			/* lost, not taken by the holds layer */
	bool		session_reported;	/* a closed session's loss, named by an
									 * ERROR, not taken yet */
	bool		cancel_sent;	/* a SIGINT was sent since it was armed */
	ZkHeldNode *cause;			/* the lost node the last SIGINT was sent
								 * for (a reference), until the next arm */
} ZkLossWatchData;

extern ZkLossWatchData ZkWatch;

/* client/held_node.c: under ZkWatch.mutex, from either thread */
extern void ZkHeldUnrefLocked(ZkHeldNode *node);
extern void ZkHeldArmLaterLocked(ZkHeldNode *node, int64 at);
extern bool ZkHeldLostLocked(ZkHeldNode *node, ZkLossKind kind);
extern void ZkHeldStopHolderLocked(ZkHeldNode *node);
extern void ZkHeldSessionLostLocked(ZkLossKind kind);
extern void ZkHeldRevokeLaterLocked(ZkHeldNode *node);

/* client/watchdog.c: the backend starts the thread */
extern void ZkWatchdogStart(void);

#endif							/* CLIENT_HELD_NODE_H */
