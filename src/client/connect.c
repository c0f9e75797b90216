/*-------------------------------------------------------------------------
 *
 * client/connect.c
 *		The session's life: opened lazily, replaced when its settings
 *		change, given up when out of touch past the session timeout, closed
 *		at backend exit; and the round trip that confirms it is alive.
 *
 * Each backend that uses zklock opens one ZooKeeper session, lazily, at its
 * first zklock call (ZkSessionEnsure), and closes it from a
 * before_shmem_exit callback so that its ephemeral nodes (its locks) go the
 * moment the backend exits.  The descriptors the client library opens are
 * reserved with AcquireExternalFD.  An expired session is reported through
 * the lost hook (the lock table names the lost locks) before a fresh one is
 * opened; one whose settings changed is replaced unless the backend holds
 * locks.  The top of the client layer: it uses every file below it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <netdb.h>

#include "common/ip.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "utils/memutils.h"

#include "client/bridge.h"
#include "client/credentials.h"
#include "client/jobs.h"
#include "client/loss_watch.h"
#include "client/request.h"
#include "client/session.h"
#include "client/wait.h"
#include "base/clock.h"
#include "base/operation_context.h"
#include "base/stats.h"
#include "base/vocabulary.h"

/* Backend-only state. */
static bool zk_exit_callback_registered = false;
static ZkSettingsHook zk_settings_hook = NULL;
static int64 zk_failures_reported = 0;	/* background jobs_failed we warned of */
static bool zk_session_suspect = false; /* see ZkSessionSuspect */

/* descriptors the client library holds open: its socket and a pipe */
#define ZK_CLIENT_FDS 3
static int	zk_fds_reserved = 0;	/* reserved with AcquireExternalFD */

/* private prototypes */
static void zk_connect(void);
static void zk_close_handle(bool given_up);
static void zk_reserve_fds(void);
static void zk_release_fds(void);
static void zk_session_at_exit(int code, Datum arg);
static char *zk_unresolved_host(const char *hosts);

/*
 * ZkSessionSetSettingsHook
 *		Let the settings say which of their values wait for the backend to
 *		hold no lock (a reload brought them while it held some), and let
 *		those values take effect, before the session is looked at, once it
 *		holds none.
 */
void
ZkSessionSetSettingsHook(ZkSettingsHook hook)
{
	zk_settings_hook = hook;
}

/*
 * ZkSessionSuspect
 *		A node this session held was found gone: the session may have
 *		expired without the client library having heard so yet (the server
 *		deletes an expired session's nodes, and notifies their watches,
 *		before it drops the connection).  The next call that needs the
 *		session replaces it if the backend holds nothing then: a fresh
 *		session costs one connect, while a request sent on an expired one
 *		would fail with the bare "session expired".
 */
void
ZkSessionSuspect(void)
{
	zk_session_suspect = true;
}

/*
 * ZkSessionCloseIfLost
 *		Close the session if it is lost (expired, or out of touch past the
 *		session timeout, as ZkSessionEnsure judges), telling the lock table
 *		through the lost hook; open no new one: the next zklock call does.
 *		For a statement that reported the loss and need not use zklock.
 */
void
ZkSessionCloseIfLost(void)
{
	ZkBridgeView view;

	if (ZkBridgeHandle() == NULL)
		return;
	ZkBridgeLook(NULL, &view);
	if (view.ended)
		zk_close_handle(false);
	else if (view.disconnected_at != 0 && ZkNowMs() >= ZkSessionOutOfTouchAt(&view))
		zk_close_handle(true);
	else
		return;
	ZkSessionReportLost();
}

/*
 * ZkSessionGiveUp
 *		The backend was told that its session's locks are lost (the session
 *		expired, or was out of touch for longer than its timeout): count
 *		the session as expired and close it now.  The library may have got
 *		back in touch with a server that had not expired it (an election
 *		gives every session a fresh timeout); kept, the session would keep
 *		nodes held for a backend told they are lost.  The lost hook names
 *		the locks no ERROR named yet.
 */
void
ZkSessionGiveUp(void)
{
	if (ZkBridgeHandle() == NULL)
		return;
	ZkBridgeMarkExpired();

	/*
	 * A cancel may still be on its way (the loss watch's, which the ERROR
	 * about to be raised drops): it must not cut the closing short and
	 * leave a half-closed session behind.
	 */
	HOLD_INTERRUPTS();
	ZkSessionCloseIfLost();
	RESUME_INTERRUPTS();
}

/*
 * ZkSessionEnsure
 *		Make sure the backend has a usable session: open one at the first
 *		call, replace one whose settings changed, and report an expired one
 *		(through the lost hook, which raises an ERROR naming the lost locks
 *		if there were any) before opening a fresh one.  While locks are
 *		held, the session goes on if the only settings that changed are
 *		values a reload brought, which wait until no lock is held (the
 *		settings hook says which, and lets them take effect then).
 */
void
ZkSessionEnsure(void)
{
	int			waiting = zk_settings_hook ? zk_settings_hook() : 0;

	if (ZkBridgeHandle() != NULL)
	{
		ZkBridgeView view;
		int64		failed;
		int			changed;

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
			ZkStatCount(ZK_STAT_RELEASES_FAILED, failed - zk_failures_reported);
			zk_failures_reported = failed;
		}

		if (view.ended)
		{
			zk_close_handle(false);
			ZkSessionReportLost();
		}
		else if (view.disconnected_at != 0 &&
				 ZkNowMs() >= ZkSessionOutOfTouchAt(&view))
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
			ZkSessionReportLost();
		}
		else if (zk_session_suspect && ZkSessionLocksHeld() == 0)
			zk_close_handle(false); /* see ZkSessionSuspect */
		else if ((changed = ZkSessionSettingsChanged()) != 0)
		{
			if (ZkSessionLocksHeld() > 0 && (changed & ~waiting) == 0)
				return;			/* the reload's values wait */
			if (ZkSessionLocksHeld() > 0)
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("cannot switch to a new ZooKeeper session while this backend holds ZooKeeper locks"),
						 errdetail("zklock.hosts, zklock.auth, zklock.auth_file or zklock.session_timeout changed since the session was opened."),
						 errhint("Set the changed setting back to the value this session was opened with (SET is allowed for that while locks are held), or release the locks first: zk_unlock_all() releases session locks, and transaction locks go when their transaction ends (COMMIT or ROLLBACK); the next zklock call then opens a session with the new settings. zk_locks lists what is held.")));
			zk_close_handle(false);
		}
		else
			return;
	}
	zk_connect();
}

/*
 * zk_unresolved_host
 *		The first host of the list (host:port,host:port..., as checked when
 *		zklock.hosts is set) that the resolver cannot resolve, as 'host
 *		"name": the resolver's message'; NULL if each resolves now.
 */
static char *
zk_unresolved_host(const char *hosts)
{
	char	   *list = pstrdup(hosts);
	char	   *save = NULL;

	for (char *entry = strtok_r(list, ",", &save); entry != NULL;
		 entry = strtok_r(NULL, ",", &save))
	{
		char	   *colon = strrchr(entry, ':');
		char	   *host = entry;
		struct addrinfo hints;
		struct addrinfo *res = NULL;
		int			rc;

		if (colon == NULL)
			continue;
		*colon = '\0';
		/* an IPv6 address in brackets */
		if (host[0] == '[' && colon > host + 1 && colon[-1] == ']')
		{
			host++;
			colon[-1] = '\0';
		}
		memset(&hints, 0, sizeof(hints));
		hints.ai_family = AF_UNSPEC;
		hints.ai_socktype = SOCK_STREAM;
		rc = pg_getaddrinfo_all(host, colon + 1, &hints, &res);
		if (res != NULL)
			pg_freeaddrinfo_all(hints.ai_family, res);
		if (rc != 0)
			return psprintf("host \"%s\": %s", host, gai_strerror(rc));
	}
	return NULL;
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

	ZkWaitForgetSilence();		/* a new session has said nothing yet */
	zk_session_suspect = false;
	if (!zk_exit_callback_registered)
	{
		before_shmem_exit(zk_session_at_exit, (Datum) 0);
		zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
		zk_exit_callback_registered = true;
	}

	ZkBridgeReset();
	zk_reserve_fds();
	zh = ZkBridgeOpen(zklock_hosts, zklock_session_timeout, ZkSessionWatcher);
	if (zh == NULL)
	{
		int			saved_errno = errno;
		char	   *unresolved;

		zk_release_fds();
		/* the resolver's own words, which the client library only logs */
		unresolved = saved_errno == EINVAL ? NULL : zk_unresolved_host(zklock_hosts);
		errno = saved_errno;
		ereport(ERROR,
				(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
				 errmsg("could not connect to ZooKeeper at \"%s\"", zklock_hosts),
				 saved_errno == EINVAL ?
				 errdetail("The host list is not a valid list of host:port pairs.") :
				 unresolved ?
				 errdetail("The ZooKeeper client could not resolve %s.", unresolved) :
				 errdetail("The ZooKeeper client could not resolve the host list: %m.")));
	}

	PG_TRY();
	{
		ZkWaitResult wr;

		deadline = ZkNowMs() + zklock_connect_timeout;
		wr = ZkWaitStatus(ZK_FOR_CONNECTED, NULL, deadline, ZK_WAIT_THROUGH_OUT_OF_TOUCH);
		if (wr != ZK_WAIT_READY)
			ereport(ERROR,
					(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
					 errmsg("could not connect to ZooKeeper at \"%s\"",
							zklock_hosts),
					 wr == ZK_WAIT_ENDED ?
					 errdetail("The server refused the new session.") :
					 errdetail("No ZooKeeper server answered within zklock.connect_timeout (%d ms).",
							   zklock_connect_timeout)));

		ZkSessionOpened(zoo_recv_timeout(zh));

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
			answered = ZkOpWaitUntil(op, deadline + ZkSessionTimeout());
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

	ZkSessionEstablished(auth != NULL);
	if (auth != NULL)
	{
		explicit_bzero(auth, strlen(auth));
		pfree(auth);
	}
	ZkStatCount(ZK_STAT_SESSIONS_OPENED, 1);

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
	slist_head	deferred;
	bool		expired;

	if (ZkBridgeHandle() == NULL)
		return;

	/* the watchdog sends requests: it ends before the handle does */
	ZkLossWatchStop();
	expired = ZkBridgeClose(&deferred);
	ZkJobsSend(&deferred);		/* closing: carried over, or ended */
	ZkBridgeForget();
	ZkLossWatchForget();
	if (expired || given_up)
		ZkStatCount(ZK_STAT_SESSIONS_EXPIRED, 1);
	zk_release_fds();
	ZkOpsSessionClosed();
	ZkSessionForget();
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

	deadline = ZkNowMs() + ZkSessionTimeout();
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
		if (wr == ZK_WAIT_ENDED || rc == ZSESSIONEXPIRED ||
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
		if (wr == ZK_WAIT_ENDED)
			return ZK_SESSION_EXPIRED;
		if (wr != ZK_WAIT_READY)
			return ZK_SESSION_UNCONFIRMED;
	}
}

/*
 * ZkSessionRaiseUnlessAlive
 *		Before reporting that another client deleted a node of ours: the
 *		server deletes a session's ephemeral nodes when it expires it, and a
 *		server cut off from the leader can pass that delete on before the
 *		session's end reaches us.  So the session is confirmed first
 *		(ZkSessionConfirmAlive): expired, the lost session's ERROR (08006,
 *		naming the lost locks); not confirmed, the lost connection's.
 *		Returns if the session is alive: the node was deleted by another
 *		client indeed.
 */
void
ZkSessionRaiseUnlessAlive(void)
{
	switch (ZkSessionConfirmAlive())
	{
		case ZK_SESSION_ALIVE:
			return;
		case ZK_SESSION_EXPIRED:
			ZkRaiseForRc(ZSESSIONEXPIRED);
		case ZK_SESSION_UNCONFIRMED:
			ZkRaiseForRc(ZCONNECTIONLOSS);
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
