/*-------------------------------------------------------------------------
 *
 * base/vocabulary.h
 *		Words every part of zklock shares: lock modes, scopes, their names,
 *		and the settings the lower layers read.
 *
 * This header sits at the bottom of the include graph: it includes nothing of
 * zklock's own, so that every other file may include it without a cycle. The
 * definitions live in base/vocabulary.c; the SQL layer (sql/settings.c)
 * only registers the settings with PostgreSQL.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BASE_VOCABULARY_H
#define BASE_VOCABULARY_H

/*
 * Words with one meaning each, in code, messages, docs and views.  Where a
 * name of Curator's layout or API keeps another word (its node names
 * "leases" and "_c_<uuid>-lease-<seq>", the semaphore limit max_leases and
 * the {"max_leases":N} record), that name is quoted as it stands and the
 * prose around it uses ours.
 *
 *	lease			a lock held by a ZooKeeper TTL node (recipes/lease.c,
 *					ZK_SCOPE_LEASE), which outlives its backend and ends when
 *					released or when its ttl runs out.  Nothing else: not a
 *					semaphore's permit, not the session's liveness.
 *	permit			one of a semaphore's max_leases places (ZK_MODE_PERMIT);
 *					a permit node is a child of the semaphore's "leases"
 *					node.  (The mode's name in zk_locks, zk_cluster_locks
 *					and node data is still Curator's "lease":
 *					ZkLockModeName.)
 *	alive window	the time the session is known to be alive: the server
 *					answered a request sent less than a third of the
 *					session timeout ago (client/session.c).  The checked
 *					COMMIT needs the session within it or confirmed alive.
 *	guard			the session's guard (client/jobs.c): a persistent node
 *					the backend must remove whatever ends its attempt (a
 *					waiting lease's TTL node).  Nothing else: the node a
 *					downgrade or upgrade keeps until the other mode's goes
 *					is the kept node (holds/table.c, kept_znode).
 *
 * Words for what becomes of a hold:
 *
 *	lost			a hold whose node is gone while the backend held it, for
 *					any of the reasons below; "a loss" is that event.  The
 *					loss watch (client/loss_watch.c) finds losses, the holds
 *					layer (holds/lost.c) reports them.
 *	deleted			its node was deleted by another client.
 *	expired			the ZooKeeper session expired (the server said so).
 *					Only a session expires.
 *	out of touch	no server answered for longer than the session timeout:
 *					the server has expired the session by then, whether or
 *					not the client library has heard so.
 *	ended			the session is over: expired, or its authentication
 *					was refused.
 *	ran out			a lease passed its ttl (never "expired").
 *	armed			a statement part that a loss stops
 *					(sql/loss_cancel.c).
 */

/*
 * The two lock modes of the read/write recipe, a semaphore's permit, and a
 * double barrier's participant.
 */
typedef enum ZkLockMode
{
	ZK_MODE_EXCLUSIVE,			/* write lock: excludes everyone */
	ZK_MODE_SHARED,				/* read lock: shares with other readers */
	ZK_MODE_PERMIT,				/* one of a semaphore's max_leases permits */
	ZK_MODE_MEMBER				/* a participant of a double barrier */
} ZkLockMode;

/* How long a hold lasts. */
typedef enum ZkLockScope
{
	ZK_SCOPE_SESSION,			/* until released or the backend exits */
	ZK_SCOPE_TRANSACTION,		/* until COMMIT or ROLLBACK */
	ZK_SCOPE_LEASE				/* a lease: until released or its ttl runs
								 * out, whatever becomes of the backend */
} ZkLockScope;

/* How exclusive queue nodes are named (zklock.exclusive_node_style). */
typedef enum ZkNodeStyle
{
	ZK_STYLE_RWLOCK,			/* Curator InterProcessReadWriteLock: __WRIT__ */
	ZK_STYLE_MUTEX,				/* Curator InterProcessMutex: lock- */
	ZK_STYLE_LATCH				/* Curator LeaderLatch: latch- */
} ZkNodeStyle;

/* Longest lock path a user may give, in bytes. */
#define ZK_MAX_PATH_BYTES 1024

/*
 * Most locks one call may take at once.  A set is one ZooKeeper multi of
 * a create and a setData per lock: with lock paths of up to 1024 bytes and
 * node data of a few hundred, 200 of them stay well within ZooKeeper's
 * default packet limit (jute.maxbuffer, 1 MB).
 */
#define ZK_MAX_SET_LOCKS 200

/*
 * Longest lease ttl ZooKeeper accepts, in ms (the low 40 bits of a TTL
 * node's ephemeralOwner): about 34 years.
 */
#define ZK_MAX_TTL_MS	INT64CONST(0xffffffffff)

/* Settings (defined in base/vocabulary.c, registered by sql/settings.c). */
extern char *zklock_hosts;
extern char *zklock_root;
extern int	zklock_session_timeout; /* ms */
extern int	zklock_connect_timeout; /* ms */
extern char *zklock_auth;
extern char *zklock_auth_file;
extern bool zklock_synchronous_release;
extern int	zklock_exclusive_node_style;	/* ZkNodeStyle */
extern bool zklock_verify_on_commit;
extern int	zklock_max_locks_per_backend;
extern int	zklock_on_lock_loss;	/* ZkOnLockLoss */

/* What a lost hold does to the running statement (zklock.on_lock_loss). */
typedef enum ZkOnLockLoss
{
	ZK_ON_LOSS_CANCEL,			/* cancels it, with the lost locks' ERROR */
	ZK_ON_LOSS_ERROR			/* nothing: the next call and COMMIT fail */
} ZkOnLockLoss;

extern int	zklock_on_revoke;	/* ZkOnRevoke */

/* What a revocation asked of a hold does (zklock.on_revoke). */
typedef enum ZkOnRevoke
{
	ZK_ON_REVOKE_IGNORE,		/* recorded only, for the holder to ask */
	ZK_ON_REVOKE_RELEASE		/* the node is deleted: a loss */
} ZkOnRevoke;

extern const char *ZkLockModeName(ZkLockMode mode);
extern const char *ZkLockScopeName(ZkLockScope scope);

/*
 * What a waiting backend waits for, in the terms every kind of wait
 * shares, so that deadlock detection (cluster/) sees them all alike.
 *
 * A wait has one or more targets, each a queue node of ours in the queue
 * of one lock node.  An all-of wait (a lock; several locks taken at once)
 * ends when every target is granted: it is blocked as long as any target
 * is.  An any-of wait (a counting semaphore, which any one permit holder
 * leaving unblocks) is a deadlock only when every holder is blocked, which
 * the detector does not establish: it never reports a cycle through an
 * any-of wait.
 */
typedef enum ZkWaitKind
{
	ZK_WAIT_ALL_OF,				/* blocked while any target is */
	ZK_WAIT_ANY_OF				/* unblocked by any one holder leaving */
} ZkWaitKind;

/*
 * One queue node we wait with.  A queue wait ('queued') is blocked by the
 * nodes ahead of it in its queue that conflict with it (a writer: every
 * node; a reader: every writer), which whoever needs them reads from the
 * queue itself.  Any other wait (a permit count, an upgrade) lists the
 * nodes that block it as far as the waiter knows: a superset of what
 * blocks it now, since nobody joins a queue ahead of a node, and no
 * permit is taken while its waiter holds the semaphore's mutex.
 */
typedef struct ZkWaitTarget
{
	const char *lock_path;		/* the user's lock path */
	const char *lock_node;		/* its ZooKeeper node (the queue's parent) */
	const char *znode;			/* our queue node, full path */
	ZkLockMode	mode;
	bool		queued;			/* blocked by the queue ahead */
	int			nahead;			/* otherwise: */
	char	  **ahead;			/* the nodes that block it, full paths */
} ZkWaitTarget;

typedef struct ZkWaitDesc
{
	ZkWaitKind	kind;
	int			ntargets;
	const ZkWaitTarget *targets;
	const char *owner;			/* the waiter's owner description, as its
								 * queue nodes carry it (base/node_data.h) */
	int			ownerlen;
} ZkWaitDesc;

#endif							/* BASE_VOCABULARY_H */
