/*-------------------------------------------------------------------------
 *
 * client/session.c
 *		The backend's ZooKeeper session: opening it, replacing it when its
 *		settings change, its expiry and its alive window, the one latch
 *		wait of the session layer, and the errors the session raises.
 *
 * Each backend that uses zklock opens one ZooKeeper session, lazily, at its
 * first zklock call, and closes it from a before_shmem_exit callback so
 * that its ephemeral nodes (its locks) go the moment the backend exits.
 * The descriptors the client library opens are reserved with
 * AcquireExternalFD.  An expired session is reported through the lost hook
 * (the lock table names the lost locks) before a fresh one is opened; one
 * whose settings changed is replaced unless the backend holds locks.
 *
 * Waiting. Every sleep of the session layer goes through ZkLatchWait, in the
 * shape of PostgreSQL's own waits for a remote server: reset the latch, look
 * at the state the client threads share (client/bridge.c), and if the wait is
 * not over, WaitLatch() (PG_WAIT_EXTENSION, WL_EXIT_ON_PM_DEATH) until a
 * client thread sets the latch or the wait's timeout passes, then
 * CHECK_FOR_INTERRUPTS(), so that query cancel, statement_timeout and
 * termination end the wait with their ERROR. A caller that must raise no ERROR
 * at all (backend exit) asks for no interrupt check. ZkWaitStatus is the usual
 * wait: until what it waits for holds, a deadline passes, the session is lost,
 * or the connection has stayed lost for the session timeout; ZkWaitOrRaise
 * turns the last two into zklock's ERRORs. The session's errors are whole
 * sentences that name no operation: the operation that was going on is their
 * CONTEXT line (common/operation_context.c).
 *
 * The alive window.  Every answer to a write or a sync of ours proves that
 * the session was alive when the leader processed the request, which was
 * after the request was sent.  (An answer to a read does not: a server cut
 * off from the quorum answers reads until it notices, for up to syncLimit
 * ticks, while the leader may have expired the session meanwhile.)  The
 * completion thread records the send time of the latest request so
 * answered (alive_at): a session the leader heard from at that time cannot
 * expire before that time plus the session timeout, so a COMMIT within a
 * third of the timeout of it needs no round trip (ZkSessionAliveFresh,
 * ZkSessionConfirmAlive).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <time.h>

#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/memutils.h"

#include "client/credentials.h"
#include "common/operation_context.h"
#include "common/stats.h"
#include "common/vocabulary.h"
#include "client/internal.h"

/* Backend-only state. */
static bool zk_exit_callback_registered = false;
static char *zk_session_hosts = NULL;	/* settings the session was opened */
static char *zk_session_auth = NULL;	/* with (TopMemoryContext): the */
static char *zk_session_auth_file = NULL;	/* zklock.auth and .auth_file
											 * settings, not the secret */
static bool zk_session_authenticated = false;
static int	zk_session_timeout_requested = 0;
static int	zk_negotiated_timeout = 0;	/* ms */
static ZkSessionLostHook zk_lost_hook = NULL;
static ZkLocksHeldHook zk_held_hook = NULL;
static ZkSettingsHook zk_settings_hook = NULL;
static int64 zk_failures_reported = 0;	/* background jobs_failed we warned of */

/*
 * ZooKeeper's silence, once a wait established it: a wait gave up on an
 * answer that had not come for zklock.connect_timeout, when the session
 * had counted zk_silent_answers answers.  Until the next answer of any
 * kind (ZooKeeper answers a session's requests in order, so the next one
 * is the oldest request's) later waits need not sit through that silence
 * again: see ZkSessionSilent.
 */
static bool zk_silent = false;
static uint64 zk_silent_answers = 0;

/* descriptors the client library holds open: its socket and a pipe */
#define ZK_CLIENT_FDS 3
static int	zk_fds_reserved = 0;	/* reserved with AcquireExternalFD */

/* ACLs: world-open, or (with zklock.auth) creator-all plus world read */
static struct ACL zk_protected_acl_entries[2];
static struct ACL_vector zk_protected_acl = {2, zk_protected_acl_entries};

/* What ZkWaitStatus waits for, and until when. */
typedef struct ZkWaitGoal
{
	ZkWaitFor	goal;
	int64		deadline_ms;	/* monotonic; 0 for none */
	bool		cut_off;		/* end once disconnected for the timeout */
} ZkWaitGoal;

/* private prototypes */
static ZkWaitResult zk_wait_check(const ZkBridgeView *view, int64 now,
								  void *arg, int64 *wake_at);
static bool zk_settings_changed(void);
static void zk_connect(void);
static void zk_close_handle(bool given_up);
static void zk_reserve_fds(void);
static void zk_release_fds(void);
static void zk_session_lost(void) pg_attribute_noreturn();
static void zk_session_at_exit(int code, Datum arg);

/*
 * ZkSessionSetHooks
 *		Let the lock table learn about a lost session and say whether it
 *		holds locks (the session layer knows nothing of locks).
 */
void
ZkSessionSetHooks(ZkSessionLostHook lost, ZkLocksHeldHook held)
{
	zk_lost_hook = lost;
	zk_held_hook = held;
}

/*
 * ZkSessionSetSettingsHook
 *		Let the settings apply, before the session is looked at, the values
 *		a reload brought while the backend held locks, once it holds none.
 */
void
ZkSessionSetSettingsHook(ZkSettingsHook hook)
{
	zk_settings_hook = hook;
}

/*
 * ZkNowMs
 *		Monotonic clock in milliseconds; the one clock used for deadlines,
 *		also readable on the library's threads.
 */
int64
ZkNowMs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * ZkNowUs
 *		The monotonic clock in microseconds, for request latencies; also
 *		readable on the library's threads.
 */
int64
ZkNowUs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/*
 * ZkSessionGiveUpAt
 *		When a session out of touch with ZooKeeper has certainly expired at
 *		the server: the time the connection was lost plus the session
 *		timeout (monotonic ms); 0 while connected.  Waits give up then, and
 *		the next call counts the session as expired.
 */
int64
ZkSessionGiveUpAt(const ZkBridgeView *view)
{
	if (view->disconnected_at == 0)
		return 0;
	return view->disconnected_at + zk_negotiated_timeout;
}

/*
 * ZkSessionTimeout
 *		The session timeout the server granted, in ms.
 */
int
ZkSessionTimeout(void)
{
	return zk_negotiated_timeout;
}

/*
 * ZkSessionAcl
 *		The ACL of a node we create: creator-all plus world read when
 *		'protect' and the session authenticated with zklock.auth, else
 *		world-open.
 */
const struct ACL_vector *
ZkSessionAcl(bool protect)
{
	if (protect && zk_session_authenticated)
		return &zk_protected_acl;
	return &ZOO_OPEN_ACL_UNSAFE;
}

/* ------------------------------------------------------------------------
 * The one latch wait.
 * ------------------------------------------------------------------------
 */

/*
 * ZkLatchWait
 *		The one place where the session layer sleeps.
 *
 * Until check() says the wait is over (and returns why): reset the latch,
 * look at the bridge (with whether 'op' has its answer), ask check(), and
 * sleep on the latch, until woken or until the *wake_at that check() set
 * (monotonic ms; none: no timeout).  With 'op', its answer wakes the
 * backend (ZkBridgeAwait); an ERROR thrown in the wait may leave it
 * awaited, which only ever causes a wakeup.  'interruptible': run
 * CHECK_FOR_INTERRUPTS() on every wakeup, which does nothing where
 * PostgreSQL holds interrupts (the COMMIT and ABORT callbacks); a caller
 * that must raise no ERROR at all passes false.
 */
ZkWaitResult
ZkLatchWait(ZkOp *op, ZkWaitCheck check, void *arg, bool interruptible)
{
	ZkWaitResult result;

	if (op != NULL)
		ZkBridgeAwait(op);
	for (;;)
	{
		ZkBridgeView view;
		int64		now;
		int64		wake_at = 0;
		int			events = WL_LATCH_SET | WL_EXIT_ON_PM_DEATH;

		ResetLatch(MyLatch);
		ZkBridgeLook(op, &view);
		now = ZkNowMs();
		result = check(&view, now, arg, &wake_at);
		if (result != ZK_WAIT_SLEEP)
			break;
		if (wake_at != 0)
			events |= WL_TIMEOUT;
		(void) WaitLatch(MyLatch, events,
						 wake_at != 0 ? (long) (wake_at - now) : -1L,
						 PG_WAIT_EXTENSION);
		if (interruptible)
			CHECK_FOR_INTERRUPTS();
	}
	if (op != NULL)
		ZkBridgeAwait(NULL);
	return result;
}

/*
 * zk_wait_check
 *		ZkWaitCheck of ZkWaitStatus (arg: a ZkWaitGoal).
 */
static ZkWaitResult
zk_wait_check(const ZkBridgeView *view, int64 now, void *arg, int64 *wake_at)
{
	const ZkWaitGoal *wg = (const ZkWaitGoal *) arg;
	bool		ready = false;

	switch (wg->goal)
	{
		case ZK_FOR_ANSWER:
			ready = view->op_done;
			break;
		case ZK_FOR_CONNECTED:
			ready = (view->state == ZOO_CONNECTED_STATE);
			break;
		case ZK_FOR_WATCH:
			ready = (view->watch_event != 0);
			break;
	}
	if (ready)
		return ZK_WAIT_READY;
	if (view->lost)
		return ZK_WAIT_LOST;
	if (wg->cut_off && view->disconnected_at != 0)
	{
		int64		give_up = ZkSessionGiveUpAt(view);

		if (now >= give_up)
			return ZK_WAIT_CUT_OFF;
		*wake_at = give_up;
	}
	if (wg->deadline_ms != 0)
	{
		if (now >= wg->deadline_ms)
			return ZK_WAIT_DEADLINE;
		if (*wake_at == 0 || wg->deadline_ms < *wake_at)
			*wake_at = wg->deadline_ms;
	}
	return ZK_WAIT_SLEEP;
}

/*
 * ZkWaitStatus
 *		Wait for 'goal' (ZK_FOR_ANSWER: the answer to 'op').
 *
 * Returns ZK_WAIT_READY once it holds, ZK_WAIT_LOST when the session
 * expired (or authentication failed), ZK_WAIT_CUT_OFF when the connection
 * has been lost for longer than the session timeout (unless
 * ZK_WAIT_NO_CUT_OFF), ZK_WAIT_DEADLINE when deadline_ms (monotonic; 0 for
 * none) has passed.  With ZK_WAIT_NO_INTERRUPTS, no CHECK_FOR_INTERRUPTS:
 * the wait raises no ERROR.
 */
ZkWaitResult
ZkWaitStatus(ZkWaitFor goal, ZkOp *op, int64 deadline_ms, int flags)
{
	ZkWaitGoal	wg;

	ZkWaitResult result;

	wg.goal = goal;
	wg.deadline_ms = deadline_ms;
	wg.cut_off = (flags & ZK_WAIT_NO_CUT_OFF) == 0;
	result = ZkLatchWait(op, zk_wait_check, &wg,
						 (flags & ZK_WAIT_NO_INTERRUPTS) == 0);

	/* an answer that has not come for connect_timeout: ZooKeeper is silent */
	if (goal == ZK_FOR_ANSWER && op != NULL &&
		(result == ZK_WAIT_DEADLINE || result == ZK_WAIT_CUT_OFF) &&
		ZkNowMs() - op->sent_at >= zklock_connect_timeout)
	{
		ZkBridgeView view;

		ZkBridgeLook(op, &view);
		if (!view.op_done)
		{
			zk_silent = true;
			zk_silent_answers = view.answers;
		}
	}
	return result;
}

/*
 * ZkSessionSilent
 *		Has ZooKeeper been silent since a wait gave up on it (an answer it
 *		awaited had not come for zklock.connect_timeout), with no answer of
 *		any kind since?  A release that would wait for its answer then
 *		returns at once, unconfirmed (its deletes go on in the background):
 *		the silence was waited out once already, and the abort after a
 *		COMMIT that failed this way returns promptly.
 */
bool
ZkSessionSilent(void)
{
	ZkBridgeView view;

	if (!zk_silent)
		return false;
	ZkBridgeLook(NULL, &view);
	if (view.open && view.answers == zk_silent_answers)
		return true;
	zk_silent = false;
	return false;
}

/*
 * ZkWaitOrRaise
 *		ZkWaitStatus, raising zklock's documented ERROR when the session
 *		expired or the connection stayed lost for the session timeout. Returns
 *		true when ready, false when deadline_ms passed. The operation's context
 *		(common/operation_context.c) names what was going on.
 */
bool
ZkWaitOrRaise(ZkWaitFor goal, ZkOp *op, int64 deadline_ms)
{
	switch (ZkWaitStatus(goal, op, deadline_ms, 0))
	{
		case ZK_WAIT_SLEEP:
			break;				/* not returned */
		case ZK_WAIT_READY:
			return true;
		case ZK_WAIT_DEADLINE:
			return false;
		case ZK_WAIT_LOST:
			zk_session_lost();
			break;
		case ZK_WAIT_CUT_OFF:
			ereport(ERROR,
					(errcode(ERRCODE_CONNECTION_FAILURE),
					 errmsg("lost connection to ZooKeeper"),
					 errdetail("The connection to \"%s\" was not regained within the session timeout of %d ms.",
							   zk_session_hosts, zk_negotiated_timeout)));
			break;
	}
	return false;				/* not reached */
}

/* ------------------------------------------------------------------------
 * The session: its alive window, its lifecycle, its errors.
 * ------------------------------------------------------------------------
 */

/*
 * ZkSessionAliveFresh
 *		Is the session within its alive window: has the server answered a
 *		request of ours sent less than a third of the negotiated session
 *		timeout ago?  Then the session is alive now and for a while yet,
 *		without a round trip.
 */
bool
ZkSessionAliveFresh(void)
{
	ZkBridgeView view;

	ZkBridgeLook(NULL, &view);
	return view.open && !view.lost && view.alive_at != 0 &&
		ZkNowMs() - view.alive_at < zk_negotiated_timeout / 3;
}

/*
 * ZkSessionConfirmAlive
 *		Make sure the session is alive: at once within its alive window, else
 *		by one round trip (a sync, which the leader answers), waiting for a
 *		lost connection no longer than the session could still be alive.
 *		ZK_SESSION_ALIVE, ZK_SESSION_EXPIRED (the caller reports the lost
 *		locks), or ZK_SESSION_UNCONFIRMED (no answer in time).  Query
 *		cancel ends the wait with its ERROR.
 */
ZkAliveResult
ZkSessionConfirmAlive(void)
{
	int64		deadline;

	if (ZkSessionAliveFresh())
		return ZK_SESSION_ALIVE;
	if (ZkBridgeHandle() == NULL)
		return ZK_SESSION_UNCONFIRMED;

	deadline = ZkNowMs() + zk_negotiated_timeout;
	for (int tries = 0;; tries++)
	{
		ZkOp	   *op = ZkSync("/");
		ZkWaitResult wr;
		int			rc;

		wr = ZkWaitStatus(ZK_FOR_ANSWER, op, deadline, 0);
		rc = op->rc;
		ZkOpFree(op);

		if (wr == ZK_WAIT_READY && rc == ZOK)
			return ZK_SESSION_ALIVE;
		/*
		 * Refused because the session expired?  The answer may come before
		 * the watcher's session event: record the expiry here, so that
		 * ZkSessionEnsure reports the lost locks whichever came first.
		 */
		if (wr == ZK_WAIT_LOST || rc == ZSESSIONEXPIRED ||
			rc == ZINVALIDSTATE || ZkSessionIsExpired())
		{
			ZkBridgeMarkExpired();
			return ZK_SESSION_EXPIRED;
		}
		if (wr != ZK_WAIT_READY || tries >= 3)
			return ZK_SESSION_UNCONFIRMED;

		/*
		 * Lost on the way, or refused while the client library was still
		 * finding out what became of the session: once it is connected
		 * again (or knows the session expired), ask again.
		 */
		wr = ZkWaitStatus(ZK_FOR_CONNECTED, NULL, deadline, 0);
		if (wr == ZK_WAIT_LOST)
			return ZK_SESSION_EXPIRED;
		if (wr != ZK_WAIT_READY)
			return ZK_SESSION_UNCONFIRMED;
	}
}

/*
 * zk_settings_changed
 *		Do the settings that choose the session differ from those the open
 *		session was made with?  (zklock.root does not: it only decides
 *		where new locks go.)
 */
static bool
zk_settings_changed(void)
{
	const char *auth = (zklock_auth && zklock_auth[0]) ? zklock_auth : NULL;
	const char *file = (zklock_auth_file && zklock_auth_file[0]) ?
		zklock_auth_file : NULL;

	if (strcmp(zk_session_hosts, zklock_hosts) != 0)
		return true;
	if (zk_session_timeout_requested != zklock_session_timeout)
		return true;
	if ((auth == NULL) != (zk_session_auth == NULL) ||
		(auth != NULL && strcmp(auth, zk_session_auth) != 0))
		return true;
	return (file == NULL) != (zk_session_auth_file == NULL) ||
		(file != NULL && strcmp(file, zk_session_auth_file) != 0);
}

/*
 * ZkSessionEnsure
 *		Make sure the backend has a usable session: open one at the first
 *		call, replace one whose settings changed, and report an expired one
 *		(through the lost hook, which raises an ERROR naming the lost locks
 *		if there were any) before opening a fresh one.  Without locks, the
 *		settings a reload brought while locks were held are applied first
 *		(the settings hook).
 */
void
ZkSessionEnsure(void)
{
	if (zk_settings_hook != NULL &&
		(zk_held_hook == NULL || zk_held_hook() == 0))
		zk_settings_hook();

	if (ZkBridgeHandle() != NULL)
	{
		ZkBridgeView view;
		int64		failed;

		ZkBridgeLook(NULL, &view);
		failed = view.jobs_failed;
		ZkStatReleasesPending(view.jobs_pending);

		/* the completion thread cannot log: say it here, once */
		if (failed > zk_failures_reported)
		{
			ereport(WARNING,
					(errmsg_plural("%lld ZooKeeper release could not be completed",
								   "%lld ZooKeeper releases could not be completed",
								   failed - zk_failures_reported,
								   (long long) (failed - zk_failures_reported)),
					 errdetail("ZooKeeper refused to delete the queue nodes; they stay until the session ends."),
					 errhint("See zk_session().releases_failed.")));
			ZkStatReleasesFailed(failed - zk_failures_reported);
			zk_failures_reported = failed;
		}

		if (view.lost)
		{
			zk_close_handle(false);
			if (zk_lost_hook)
				zk_lost_hook();
		}
		else if (view.disconnected_at != 0 &&
				 ZkNowMs() >= ZkSessionGiveUpAt(&view))
		{
			/*
			 * Out of touch with ZooKeeper for longer than the session
			 * timeout: the server has expired the session (or will at its
			 * next tick), whether or not the client library has heard so
			 * yet, and the session's locks cannot be trusted.  Give it up
			 * as expired rather than failing every call until the library
			 * reconnects.
			 */
			zk_close_handle(true);
			if (zk_lost_hook)
				zk_lost_hook();
		}
		else if (zk_settings_changed())
		{
			if (zk_held_hook && zk_held_hook() > 0)
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("cannot switch to a new ZooKeeper session while this backend holds ZooKeeper locks"),
						 errdetail("zklock.hosts, zklock.auth, zklock.auth_file or zklock.session_timeout changed since the session was opened."),
						 errhint("Release the locks first: zk_unlock_all() releases session locks, COMMIT or ROLLBACK transaction locks.")));
			zk_close_handle(false);
		}
		else
			return;
	}
	zk_connect();
}

/*
 * ZkSessionIsExpired
 *		Has the watcher seen the session expire (without waiting)?
 */
bool
ZkSessionIsExpired(void)
{
	ZkBridgeView view;

	ZkBridgeLook(NULL, &view);
	return view.open && view.lost;
}

/*
 * zk_connect
 *		Open a session on zklock.hosts and wait, at most
 *		zklock.connect_timeout and interruptibly, until it is connected.
 */
static void
zk_connect(void)
{
	zhandle_t  *zh;
	char	   *volatile auth = ZkCredentials();	/* zklock.auth or its file */
	int64		deadline;

	zk_silent = false;		/* a new session has said nothing yet */
	if (!zk_exit_callback_registered)
	{
		before_shmem_exit(zk_session_at_exit, (Datum) 0);
		zk_protected_acl_entries[0].perms = ZOO_PERM_ALL;
		zk_protected_acl_entries[0].id = ZOO_AUTH_IDS;
		zk_protected_acl_entries[1].perms = ZOO_PERM_READ;
		zk_protected_acl_entries[1].id = ZOO_ANYONE_ID_UNSAFE;
		zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
		zk_exit_callback_registered = true;
	}

	ZkBridgeReset();
	zk_reserve_fds();
	zh = ZkBridgeOpen(zklock_hosts, zklock_session_timeout);
	if (zh == NULL)
	{
		int			saved_errno = errno;

		zk_release_fds();
		errno = saved_errno;
		ereport(ERROR,
				(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
				 errmsg("could not connect to ZooKeeper at \"%s\"", zklock_hosts),
				 saved_errno == EINVAL ?
				 errdetail("The host list is not a valid list of host:port pairs.") :
				 errdetail("The ZooKeeper client could not resolve the host list: %m.")));
	}

	PG_TRY();
	{
		ZkWaitResult wr;

		deadline = ZkNowMs() + zklock_connect_timeout;
		wr = ZkWaitStatus(ZK_FOR_CONNECTED, NULL, deadline, ZK_WAIT_NO_CUT_OFF);
		if (wr != ZK_WAIT_READY)
			ereport(ERROR,
					(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
					 errmsg("could not connect to ZooKeeper at \"%s\"",
							zklock_hosts),
					 wr == ZK_WAIT_LOST ?
					 errdetail("The server refused the new session.") :
					 errdetail("No ZooKeeper server answered within zklock.connect_timeout (%d ms).",
							   zklock_connect_timeout)));

		zk_negotiated_timeout = zoo_recv_timeout(zh);

		/* the handshake was answered: the session is alive since then */
		ZkBridgeSetAliveAt(deadline - zklock_connect_timeout);

		if (auth != NULL)
		{
			ZkOp	   *op = ZkOpNew(ZKOP_AUTH);
			ZkOperationContext oc;
			bool		answered;
			int			rc;

			ZkOpIssued(op, zoo_add_auth(zh, "digest", auth, (int) strlen(auth),
										ZkOpDoneVoid, op));
			ZkOperationPush(&oc, ZK_OPER_AUTHENTICATE, zklock_hosts);
			answered = ZkOpWaitUntil(op, deadline + zk_negotiated_timeout);
			ZkOperationPop(&oc);
			rc = answered ? op->rc : ZOPERATIONTIMEOUT;
			ZkOpFree(op);
			if (rc != ZOK)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION),
						 errmsg("ZooKeeper authentication failed at \"%s\"",
								zklock_hosts),
						 errdetail("ZooKeeper answered %s (%d): %s.",
								   ZkRcName(rc), rc, zerror(rc))));
		}
	}
	PG_CATCH();
	{
		if (auth != NULL)
			explicit_bzero(auth, strlen(auth));
		zk_close_handle(false);
		PG_RE_THROW();
	}
	PG_END_TRY();

	zk_session_hosts = MemoryContextStrdup(TopMemoryContext, zklock_hosts);
	zk_session_auth = (zklock_auth && zklock_auth[0]) ?
		MemoryContextStrdup(TopMemoryContext, zklock_auth) : NULL;
	zk_session_auth_file = (zklock_auth_file && zklock_auth_file[0]) ?
		MemoryContextStrdup(TopMemoryContext, zklock_auth_file) : NULL;
	zk_session_authenticated = (auth != NULL);
	if (auth != NULL)
	{
		explicit_bzero(auth, strlen(auth));
		pfree(auth);
	}
	zk_session_timeout_requested = zklock_session_timeout;
	ZkStatSessionOpened();

	/* persistent deletes an earlier session could not finish */
	ZkJobsResendCarried();
}

/*
 * zk_reserve_fds
 *		Reserve the file descriptors the client library opens (its
 *		connection and the pipe that wakes its I/O thread) with
 *		AcquireExternalFD, as a libpq connection made from a backend does,
 *		so that PostgreSQL's own descriptor budget (max_files_per_process)
 *		counts them.
 */
static void
zk_reserve_fds(void)
{
	while (zk_fds_reserved < ZK_CLIENT_FDS)
	{
		if (!AcquireExternalFD())
		{
			zk_release_fds();
			ereport(ERROR,
					(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
					 errmsg("could not connect to ZooKeeper at \"%s\"", zklock_hosts),
					 errdetail("There are too many open files on the local server."),
					 errhint("Raise the server's max_files_per_process and/or \"ulimit -n\" limits.")));
		}
		zk_fds_reserved++;
	}
}

/*
 * zk_release_fds
 *		Give back what zk_reserve_fds reserved (the handle is closed).
 */
static void
zk_release_fds(void)
{
	while (zk_fds_reserved > 0)
	{
		ReleaseExternalFD();
		zk_fds_reserved--;
	}
}

/*
 * zk_close_handle
 *		Close the session (which deletes all its ephemeral nodes on the
 *		server) and forget it.  zookeeper_close() joins the library's
 *		threads; pending completions run with ZCLOSING before it returns.
 *		The statistics count the session as expired if it had expired, or
 *		if it is 'given_up' as expired.
 */
static void
zk_close_handle(bool given_up)
{
	if (ZkBridgeHandle() == NULL)
		return;

	if (ZkBridgeClose() || given_up)
		ZkStatSessionExpired();
	zk_release_fds();
	ZkOpsSessionClosed();

	if (zk_session_hosts)
		pfree(zk_session_hosts);
	if (zk_session_auth)
		pfree(zk_session_auth);
	if (zk_session_auth_file)
		pfree(zk_session_auth_file);
	zk_session_auth_file = NULL;
	zk_session_authenticated = false;
	zk_session_hosts = NULL;
	zk_session_auth = NULL;
}

/*
 * zk_session_lost
 *		The session expired in the middle of an operation: close it, let the
 *		lock table report the lost locks, and fail the operation.
 */
static void
zk_session_lost(void)
{
	ZkBridgeView view;
	bool		auth_failed;

	ZkBridgeLook(NULL, &view);
	auth_failed = view.auth_failed && !view.expired;

	zk_close_handle(false);
	if (zk_lost_hook)
		zk_lost_hook();
	if (auth_failed)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION),
				 errmsg("ZooKeeper authentication failed")));
	ereport(ERROR,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg("ZooKeeper session expired")));
}

/*
 * ZkRcName
 *		ZooKeeper's own name for a result code (its C constant, the Java
 *		client's KeeperException.Code with a Z in front), for DETAIL lines.
 */
const char *
ZkRcName(int rc)
{
	switch (rc)
	{
		case ZOK:
			return "ZOK";
		case ZSYSTEMERROR:
			return "ZSYSTEMERROR";
		case ZRUNTIMEINCONSISTENCY:
			return "ZRUNTIMEINCONSISTENCY";
		case ZDATAINCONSISTENCY:
			return "ZDATAINCONSISTENCY";
		case ZCONNECTIONLOSS:
			return "ZCONNECTIONLOSS";
		case ZMARSHALLINGERROR:
			return "ZMARSHALLINGERROR";
		case ZUNIMPLEMENTED:
			return "ZUNIMPLEMENTED";
		case ZOPERATIONTIMEOUT:
			return "ZOPERATIONTIMEOUT";
		case ZBADARGUMENTS:
			return "ZBADARGUMENTS";
		case ZINVALIDSTATE:
			return "ZINVALIDSTATE";
		case ZNEWCONFIGNOQUORUM:
			return "ZNEWCONFIGNOQUORUM";
		case ZRECONFIGINPROGRESS:
			return "ZRECONFIGINPROGRESS";
		case ZSSLCONNECTIONERROR:
			return "ZSSLCONNECTIONERROR";
		case ZAPIERROR:
			return "ZAPIERROR";
		case ZNONODE:
			return "ZNONODE";
		case ZNOAUTH:
			return "ZNOAUTH";
		case ZBADVERSION:
			return "ZBADVERSION";
		case ZNOCHILDRENFOREPHEMERALS:
			return "ZNOCHILDRENFOREPHEMERALS";
		case ZNODEEXISTS:
			return "ZNODEEXISTS";
		case ZNOTEMPTY:
			return "ZNOTEMPTY";
		case ZSESSIONEXPIRED:
			return "ZSESSIONEXPIRED";
		case ZINVALIDCALLBACK:
			return "ZINVALIDCALLBACK";
		case ZINVALIDACL:
			return "ZINVALIDACL";
		case ZAUTHFAILED:
			return "ZAUTHFAILED";
		case ZCLOSING:
			return "ZCLOSING";
		case ZNOTHING:
			return "ZNOTHING";
		case ZSESSIONMOVED:
			return "ZSESSIONMOVED";
		case ZNOTREADONLY:
			return "ZNOTREADONLY";
		case ZEPHEMERALONLOCALSESSION:
			return "ZEPHEMERALONLOCALSESSION";
		case ZNOWATCHER:
			return "ZNOWATCHER";
		case ZRECONFIGDISABLED:
			return "ZRECONFIGDISABLED";
		case ZSESSIONCLOSEDREQUIRESASLAUTH:
			return "ZSESSIONCLOSEDREQUIRESASLAUTH";
		case ZTHROTTLEDOP:
			return "ZTHROTTLEDOP";
	}
	return "unknown";
}

/*
 * ZkRaiseForRc
 *		Turn a ZooKeeper error code into zklock's documented ERROR (its
 *		SQLSTATE and message are listed in doc/reference.md); the
 *		operation's context names what was going on.
 */
void
ZkRaiseForRc(int rc)
{
	if (rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE ||
		rc == ZAUTHFAILED || ZkSessionIsExpired())
		zk_session_lost();
	if (rc == ZSESSIONCLOSEDREQUIRESASLAUTH)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION),
				 errmsg("ZooKeeper requires authentication"),
				 errdetail("The server closed the session because it was not authenticated with a scheme the server enforces."),
				 errhint("Set zklock.auth.")));
	if (rc == ZNOAUTH)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("ZooKeeper refused access"),
				 errdetail("The node's ACL does not allow this session's identity."),
				 errhint("Check zklock.auth and the ACLs under zklock.root.")));
	if (ZkIsConnectionLoss(rc) || rc == ZCLOSING)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("lost connection to ZooKeeper"),
				 errdetail("ZooKeeper answered %s (%d): %s.",
						   ZkRcName(rc), rc, zerror(rc))));
	/* not about the connection: an error of the system zklock relies on */
	ereport(ERROR,
			(errcode(ERRCODE_SYSTEM_ERROR),
			 errmsg("ZooKeeper error"),
			 errdetail("ZooKeeper answered %s (%d): %s.",
					   ZkRcName(rc), rc, zerror(rc))));
}

/*
 * ZkSessionGetStatus
 *		What zk_session() shows.
 */
void
ZkSessionGetStatus(ZkSessionStatus *status)
{
	zhandle_t  *zh = ZkBridgeHandle();
	ZkBridgeView view;

	memset(status, 0, sizeof(*status));
	ZkBridgeLook(NULL, &view);
	status->releases_pending = view.jobs_pending;
	status->releases_failed = view.jobs_failed;
	if (!view.open)
		status->state = "closed";
	else if (view.expired)
		status->state = "expired";
	else if (view.auth_failed)
		status->state = "auth_failed";
	else if (view.state == ZOO_CONNECTED_STATE)
		status->state = "connected";
	else
		status->state = "connecting";
	if (view.open && view.connected_at != 0)
		status->connected_for_ms = ZkNowMs() - view.connected_at;

	if (zh != NULL)
	{
		const clientid_t *cid = zoo_client_id(zh);
		const char *server = zoo_get_current_server(zh);

		status->session_id = cid ? cid->client_id : 0;
		strlcpy(status->server, server ? server : "", sizeof(status->server));
		status->negotiated_timeout = zoo_recv_timeout(zh);
	}
}

/*
 * zk_session_at_exit
 *		before_shmem_exit callback: close the session, so that other servers
 *		see this backend's locks go at once rather than after the session
 *		timeout.
 */
static void
zk_session_at_exit(int code, Datum arg)
{
	ZkGuardRemoveAtExit();
	zk_close_handle(false);
	ZkStatReleasesPending(0);
}
