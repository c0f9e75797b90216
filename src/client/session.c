/*-------------------------------------------------------------------------
 *
 * client/session.c
 *		The backend's ZooKeeper session as the rest of the client layer
 *		knows it: the settings it was opened with, the timeout the server
 *		granted, its ACLs, whether it expired, its alive window, what
 *		zk_session() shows, and the errors the session raises.  Opening and
 *		closing it are client/connect.c's; waiting, client/wait.c's.
 *
 * An expired session is reported through the lost hook (the lock table
 * names the lost locks); the next zklock call then opens a fresh one.
 *
 * The alive window.  Every answer to a write or a sync of ours proves that
 * the session was alive when the leader processed the request, which was
 * after the request was sent.  (An answer to a read does not: a server cut
 * off from the quorum answers reads until it notices, for up to syncLimit
 * ticks, while the leader may have expired the session meanwhile.)  The
 * completion thread records the send time of the latest request so
 * answered (alive_at): a session the leader heard from at that time cannot
 * expire before that time plus the session timeout, so a COMMIT within a
 * third of the timeout of it needs no round trip (ZkSessionAliveFresh;
 * client/connect.c's ZkSessionConfirmAlive asks otherwise).
 *
 * The session's errors are whole sentences that name no operation: the
 * operation that was going on is their CONTEXT line
 * (base/operation_context.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "client/session.h"
#include "base/clock.h"
#include "base/vocabulary.h"

/* Backend-only state. */
static char *zk_session_hosts = NULL;	/* settings the session was opened */
static char *zk_session_auth = NULL;	/* with (TopMemoryContext): the */
static char *zk_session_auth_file = NULL;	/* zklock.auth and .auth_file
											 * settings, not the secret */
static bool zk_session_authenticated = false;
static int	zk_session_timeout_requested = 0;
static int	zk_negotiated_timeout = 0;	/* ms */
static ZkSessionLostHook zk_lost_hook = NULL;
static ZkLocksHeldHook zk_held_hook = NULL;

/* ACLs: world-open, or (with zklock.auth) creator-all plus world read */
static struct ACL zk_protected_acl_entries[2];
static struct ACL_vector zk_protected_acl = {2, zk_protected_acl_entries};

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
 * ZkSessionLocksHeld
 *		How many locks the backend holds (0 before the lock table set its
 *		hook): a session that holds some cannot be replaced.
 */
int
ZkSessionLocksHeld(void)
{
	return zk_held_hook ? zk_held_hook() : 0;
}

/*
 * ZkSessionReportLost
 *		The session turned out expired: the lock table forgets its locks and
 *		raises the ERROR naming them, or returns when none were held.
 */
void
ZkSessionReportLost(void)
{
	if (zk_lost_hook)
		zk_lost_hook();
}

/*
 * ZkSessionOpened
 *		A session was opened and its handshake answered: the timeout the
 *		server granted, in ms.  Waits (client/wait.c) use it from then on.
 */
void
ZkSessionOpened(int negotiated_timeout)
{
	zk_negotiated_timeout = negotiated_timeout;
}

/*
 * ZkSessionEstablished
 *		The new session is ready (authenticated, if 'authenticated'): record
 *		the settings it was opened with, to tell later whether they changed
 *		(ZkSessionSettingsChanged).  The secret itself is not kept.
 */
void
ZkSessionEstablished(bool authenticated)
{
	zk_session_hosts = MemoryContextStrdup(TopMemoryContext, zklock_hosts);
	zk_session_auth = (zklock_auth && zklock_auth[0]) ?
		MemoryContextStrdup(TopMemoryContext, zklock_auth) : NULL;
	zk_session_auth_file = (zklock_auth_file && zklock_auth_file[0]) ?
		MemoryContextStrdup(TopMemoryContext, zklock_auth_file) : NULL;
	zk_session_authenticated = authenticated;
	zk_session_timeout_requested = zklock_session_timeout;
}

/*
 * ZkSessionForget
 *		The session was closed: forget the settings it was opened with.
 */
void
ZkSessionForget(void)
{
	if (zk_session_hosts)
		pfree(zk_session_hosts);
	if (zk_session_auth)
		pfree(zk_session_auth);
	if (zk_session_auth_file)
		pfree(zk_session_auth_file);
	zk_session_hosts = NULL;
	zk_session_auth = NULL;
	zk_session_auth_file = NULL;
	zk_session_authenticated = false;
}

/*
 * ZkSessionHosts
 *		The hosts the open session was opened with (for messages, and for
 *		SHOW while a reloaded value waits), or zklock.hosts while none is
 *		open.
 */
const char *
ZkSessionHosts(void)
{
	return zk_session_hosts ? zk_session_hosts : zklock_hosts;
}

/*
 * ZkSessionSettingsChanged
 *		The settings that choose the session whose value differs from the
 *		one the open session was made with, a bit per ZkSessionSetting, or
 *		0.  (zklock.root chooses no session: it only decides where new
 *		locks go.)
 */
int
ZkSessionSettingsChanged(void)
{
	int			changed = 0;

	if (!ZkSessionOpenedWith(ZK_SESSION_SETTING_HOSTS, zklock_hosts, 0))
		changed |= 1 << ZK_SESSION_SETTING_HOSTS;
	if (!ZkSessionOpenedWith(ZK_SESSION_SETTING_AUTH, zklock_auth, 0))
		changed |= 1 << ZK_SESSION_SETTING_AUTH;
	if (!ZkSessionOpenedWith(ZK_SESSION_SETTING_AUTH_FILE, zklock_auth_file, 0))
		changed |= 1 << ZK_SESSION_SETTING_AUTH_FILE;
	if (!ZkSessionOpenedWith(ZK_SESSION_SETTING_TIMEOUT, NULL,
							 zklock_session_timeout))
		changed |= 1 << ZK_SESSION_SETTING_TIMEOUT;
	return changed;
}

/*
 * ZkSessionOpenedWith
 *		Was the open session made with this value of 'setting' ('value' for
 *		zklock.hosts, zklock.auth, zklock.auth_file, where an empty value is
 *		none; 'timeout_ms' for zklock.session_timeout)?  False without an
 *		open session.  A value the session was made with may be set again
 *		while locks are held: it changes nothing the locks depend on.
 */
bool
ZkSessionOpenedWith(ZkSessionSetting setting, const char *value,
					int timeout_ms)
{
	const char *had = NULL;

	if (zk_session_hosts == NULL)
		return false;
	switch (setting)
	{
		case ZK_SESSION_SETTING_TIMEOUT:
			return timeout_ms == zk_session_timeout_requested;
		case ZK_SESSION_SETTING_HOSTS:
			had = zk_session_hosts;
			break;
		case ZK_SESSION_SETTING_AUTH:
			had = zk_session_auth;
			break;
		case ZK_SESSION_SETTING_AUTH_FILE:
			had = zk_session_auth_file;
			break;
		case ZK_SESSION_SETTING_ROOT:
		case ZK_NUM_SESSION_SETTINGS:
			return false;
	}
	if (value != NULL && value[0] == '\0')
		value = NULL;
	if (value == NULL || had == NULL)
		return value == had;
	return strcmp(value, had) == 0;
}

/*
 * ZkSessionOutOfTouchAt
 *		When a session out of touch with ZooKeeper has certainly expired at
 *		the server: the time the connection was lost plus the session
 *		timeout (monotonic ms); 0 while connected.  Waits give up then, and
 *		the next call counts the session as expired.
 */
int64
ZkSessionOutOfTouchAt(const ZkBridgeView *view)
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
	if (!(protect && zk_session_authenticated))
		return &ZOO_OPEN_ACL_UNSAFE;
	if (zk_protected_acl_entries[0].perms == 0)
	{
		zk_protected_acl_entries[0].perms = ZOO_PERM_ALL;
		zk_protected_acl_entries[0].id = ZOO_AUTH_IDS;
		zk_protected_acl_entries[1].perms = ZOO_PERM_READ;
		zk_protected_acl_entries[1].id = ZOO_ANYONE_ID_UNSAFE;
	}
	return &zk_protected_acl;
}

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
	return view.open && !view.ended && view.alive_at != 0 &&
		ZkNowMs() - view.alive_at < zk_negotiated_timeout / 3;
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
	return view.open && view.ended;
}

/*
 * ZkSessionExpireIfOutOfTouch
 *		Has the session been out of touch with ZooKeeper for longer than the
 *		session timeout (ZkSessionOutOfTouchAt)?  Then the server has expired it
 *		(or will at its next tick), whether or not the client library has
 *		heard so yet: record it as expired, as ZkSessionEnsure gives it up,
 *		so that the next zklock call closes it and opens a fresh one even if
 *		the library gets back in touch meanwhile (a restarted server may
 *		accept the old session again, with nodes the backend has forgotten),
 *		and return true.
 */
bool
ZkSessionExpireIfOutOfTouch(void)
{
	ZkBridgeView view;

	ZkBridgeLook(NULL, &view);
	if (!view.open || view.ended || view.disconnected_at == 0 ||
		ZkNowMs() < ZkSessionOutOfTouchAt(&view))
		return false;
	ZkBridgeMarkExpired();
	return true;
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
 * ZkSessionRaiseLost
 *		The session expired (or its authentication failed) in the middle of
 *		an operation: mark it so (an answer may say so before the watcher's
 *		event does), let the lock table forget and name the lost locks (the
 *		lost hook raises that ERROR when locks were held), and fail the
 *		operation.  The next zklock call closes the handle and opens a fresh
 *		session (ZkSessionEnsure).
 */
void
ZkSessionRaiseLost(void)
{
	ZkBridgeView view;
	bool		auth_failed;

	ZkBridgeLook(NULL, &view);
	auth_failed = view.auth_failed && !view.expired;

	ZkBridgeMarkExpired();
	ZkSessionReportLost();
	if (auth_failed)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION),
				 errmsg("ZooKeeper authentication failed")));
	ereport(ERROR,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg("ZooKeeper session expired")));
}

/*
 * ZkIsConnectionLoss
 *		Error codes after which the request may or may not have been
 *		applied, and which a reconnection within the session cures.
 */
bool
ZkIsConnectionLoss(int rc)
{
	return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT;
}

/* ZkRcName's names, indexed by minus the code (ZooKeeper's are 0 or less) */
#define ZK_RC_NAME(code) [-(code)] = #code
static const char *const zk_rc_names[] = {
	ZK_RC_NAME(ZOK),
	ZK_RC_NAME(ZSYSTEMERROR),
	ZK_RC_NAME(ZRUNTIMEINCONSISTENCY),
	ZK_RC_NAME(ZDATAINCONSISTENCY),
	ZK_RC_NAME(ZCONNECTIONLOSS),
	ZK_RC_NAME(ZMARSHALLINGERROR),
	ZK_RC_NAME(ZUNIMPLEMENTED),
	ZK_RC_NAME(ZOPERATIONTIMEOUT),
	ZK_RC_NAME(ZBADARGUMENTS),
	ZK_RC_NAME(ZINVALIDSTATE),
	ZK_RC_NAME(ZNEWCONFIGNOQUORUM),
	ZK_RC_NAME(ZRECONFIGINPROGRESS),
	ZK_RC_NAME(ZSSLCONNECTIONERROR),
	ZK_RC_NAME(ZAPIERROR),
	ZK_RC_NAME(ZNONODE),
	ZK_RC_NAME(ZNOAUTH),
	ZK_RC_NAME(ZBADVERSION),
	ZK_RC_NAME(ZNOCHILDRENFOREPHEMERALS),
	ZK_RC_NAME(ZNODEEXISTS),
	ZK_RC_NAME(ZNOTEMPTY),
	ZK_RC_NAME(ZSESSIONEXPIRED),
	ZK_RC_NAME(ZINVALIDCALLBACK),
	ZK_RC_NAME(ZINVALIDACL),
	ZK_RC_NAME(ZAUTHFAILED),
	ZK_RC_NAME(ZCLOSING),
	ZK_RC_NAME(ZNOTHING),
	ZK_RC_NAME(ZSESSIONMOVED),
	ZK_RC_NAME(ZNOTREADONLY),
	ZK_RC_NAME(ZEPHEMERALONLOCALSESSION),
	ZK_RC_NAME(ZNOWATCHER),
	ZK_RC_NAME(ZRECONFIGDISABLED),
	ZK_RC_NAME(ZSESSIONCLOSEDREQUIRESASLAUTH),
	ZK_RC_NAME(ZTHROTTLEDOP),
};
#undef ZK_RC_NAME

/*
 * ZkRcName
 *		ZooKeeper's own name for a result code (its C constant, the Java
 *		client's KeeperException.Code with a Z in front), for DETAIL lines.
 */
const char *
ZkRcName(int rc)
{
	if (rc <= 0 && -rc < (int) lengthof(zk_rc_names) &&
		zk_rc_names[-rc] != NULL)
		return zk_rc_names[-rc];
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
		ZkSessionRaiseLost();
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
