/*-------------------------------------------------------------------------
 *
 * sql/settings.c
 *		Loading zklock: its settings (zklock.*), their checks, and
 *		_PG_init.
 *
 * Loading the library (even through shared_preload_libraries, in the
 * postmaster) only defines the settings, asks for the statistics' shared
 * memory (base/stats.c) and installs the DISCARD ALL hook (sql/discard.c):
 * no thread is started and no connection made before a backend's first zklock
 * call. The settings' variables live in base/vocabulary.c, which every layer
 * reads; this file gives them their names, bounds and descriptions
 * (zklock_root is the root in effect; the setting itself is root_setting).
 *
 * The settings that choose the session and where its locks live
 * (zklock.hosts, zklock.root, zklock.session_timeout, zklock.auth,
 * zklock.auth_file) do not change under the locks a backend holds:
 *
 * - A SET (or set_config(), or a function's SET clause) that would change
 *   one is an ERROR while the backend holds locks (their check hooks ask
 *   the lock table, ZkLockCount).
 * - A value that a reload of the configuration file brings then is taken
 *   by the setting, but waits: the session layer keeps the session (and
 *   the settings it was opened with), zklock_root keeps the root in
 *   effect, SHOW shows them, and the first zklock call once the backend
 *   holds no lock lets the value take effect (a new session), with a LOG
 *   line at each step.  See check_change.
 *
 * The form of zklock.hosts is checked here, that of zklock.root by
 * base/paths.c.  Nothing here talks to ZooKeeper.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "access/xact.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "sql/discard.h"
#include "sql/loss_cancel.h"
#include "base/paths.h"
#include "holds/holds.h"
#include "base/stats.h"
#include "base/vocabulary.h"
#include "client/client.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static const struct config_enum_entry node_style_options[] = {
	{"rwlock", ZK_STYLE_RWLOCK, false},
	{"mutex", ZK_STYLE_MUTEX, false},
	{"latch", ZK_STYLE_LATCH, false},
	{NULL, 0, false}
};

static const struct config_enum_entry on_lock_loss_options[] = {
	{"cancel", ZK_ON_LOSS_CANCEL, false},
	{"error", ZK_ON_LOSS_ERROR, false},
	{NULL, 0, false}
};

static void assign_zklock_on_lock_loss(int newval, void *extra);

static const struct config_enum_entry on_revoke_options[] = {
	{"ignore", ZK_ON_REVOKE_IGNORE, false},
	{"release", ZK_ON_REVOKE_RELEASE, false},
	{NULL, 0, false}
};

static void assign_zklock_on_revoke(int newval, void *extra);

/*
 * The settings that choose the session, and zklock.root (numbered by
 * ZkSessionSetting), and their names.
 */
static const char *const held_setting_names[ZK_NUM_SESSION_SETTINGS] = {
	"zklock.hosts",
	"zklock.auth",
	"zklock.auth_file",
	"zklock.session_timeout",
	"zklock.root"
};

/* the settings (a bit per ZkSessionSetting) whose reloaded value waits */
static int	held_waiting = 0;

/* zklock.root as set, and the root in effect, which zklock_root points to */
static char *root_setting = NULL;
static char root_in_effect[ZK_MAX_PATH_BYTES + 1];

static bool refuse_change(ZkSessionSetting setting);
static bool check_change(ZkSessionSetting setting, bool in_effect,
						 void **extra, GucSource source);
static void note_change(ZkSessionSetting setting, bool in_effect, void *mark);
static int	let_waiting_values_go(void);
static bool check_held_string(ZkSessionSetting setting, char **newval,
							  void **extra, GucSource source,
							  const char *current);
static void assign_held_string(ZkSessionSetting setting, const char *newval,
							   void *extra, const char *current);
static const char *host_list_problem(const char *hosts);
static bool check_zklock_hosts(char **newval, void **extra, GucSource source);
static bool check_zklock_root(char **newval, void **extra, GucSource source);
static bool check_zklock_auth(char **newval, void **extra, GucSource source);
static bool check_zklock_auth_file(char **newval, void **extra,
								   GucSource source);
static bool check_zklock_session_timeout(int *newval, void **extra,
										 GucSource source);
static void assign_zklock_hosts(const char *newval, void *extra);
static void assign_zklock_root(const char *newval, void *extra);
static void assign_zklock_auth(const char *newval, void *extra);
static void assign_zklock_auth_file(const char *newval, void *extra);
static void assign_zklock_session_timeout(int newval, void *extra);
static const char *show_zklock_hosts(void);
static const char *show_zklock_root(void);

/* is a string setting's new value its current one? */
#define SAME_STRING(a, b) ((a) != NULL && (b) != NULL && strcmp((a), (b)) == 0)

/*
 * refuse_change
 *		The ERROR of a SET that would change 'setting' while the backend
 *		holds locks.  The message never repeats the value (zklock.auth's
 *		is a secret).
 */
static bool
refuse_change(ZkSessionSetting setting)
{
	GUC_check_errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE);
	GUC_check_errmsg("parameter \"%s\" cannot be changed while this backend holds ZooKeeper locks",
					 held_setting_names[setting]);
	GUC_check_errdetail("The locks were taken in this backend's ZooKeeper session with the current value.");
	GUC_check_errhint("Release the locks first (zk_unlock_all() releases session locks, COMMIT or ROLLBACK transaction locks; zk_locks lists what is held), or keep the value the session was opened with.");
	return false;
}

/*
 * The rule while the backend holds locks, for a value of one of these
 * settings that differs from its current one.  The session layer keeps the
 * session the locks were taken in, and the settings the session was opened
 * with, so:
 *
 * - check_change, the check hooks' common part: a SET (also SET LOCAL,
 *   set_config() and a function's SET clause) is refused, unless it sets
 *   the value in effect (that of the session, or zklock.root's in effect),
 *   which changes nothing the locks depend on: that is how a backend whose
 *   setting a RESET or the end of a SET LOCAL changed gets back to it.  A
 *   value of the configuration file (PGC_S_DEFAULT when the reload removed
 *   the setting) passes, with a mark as its extra for the assign hook.
 *   ALTER SYSTEM and pg_file_settings also check file values, and assign
 *   nothing: their mark goes unused.
 * - note_change, the assign hooks' common part: the GUC takes the value;
 *   a marked value that differs from the value in effect waits (logged),
 *   any other value ends the wait.  The session layer goes on with the
 *   session while the only settings that differ from it wait, and refuses
 *   to switch (55000) if another one differs.
 * - let_waiting_values_go, the session layer's settings hook, at each
 *   zklock call that needs the session: once the backend holds no lock,
 *   the waiting values take effect (logged), and the session layer then
 *   opens a new session.
 * - SHOW zklock.hosts and zklock.root show the value in effect.
 */
static bool
check_change(ZkSessionSetting setting, bool in_effect, void **extra,
			 GucSource source)
{
	if (ZkLockCount() == 0)
		return true;
	if (source == PGC_S_SESSION && !in_effect)
		return refuse_change(setting);
	if (source == PGC_S_FILE || source == PGC_S_DEFAULT)
	{
		*extra = malloc(1);
		if (*extra == NULL)
		{
			GUC_check_errcode(ERRCODE_OUT_OF_MEMORY);
			GUC_check_errmsg("out of memory");
			return false;
		}
	}
	return true;
}

static void
note_change(ZkSessionSetting setting, bool in_effect, void *mark)
{
	if (mark == NULL || in_effect || ZkLockCount() == 0)
	{
		held_waiting &= ~(1 << setting);
		return;
	}
	held_waiting |= 1 << setting;
	ereport(LOG,
			(errmsg("change of parameter \"%s\" deferred while this backend holds ZooKeeper locks",
					held_setting_names[setting]),
			 errdetail("The backend keeps the current value and its ZooKeeper session until it holds no lock; the new value is applied at its first zklock call after that.")));
}

static int
let_waiting_values_go(void)
{
	if (ZkLockCount() > 0)
		return held_waiting;
	for (int i = 0; i < ZK_NUM_SESSION_SETTINGS; i++)
		if (held_waiting & (1 << i))
			ereport(LOG,
					(errmsg("deferred change of parameter \"%s\" applied",
							held_setting_names[i]),
					 i == ZK_SESSION_SETTING_ROOT ?
					 errdetail("The backend holds no ZooKeeper lock any more; its new locks go under the new root.") :
					 errdetail("The backend holds no ZooKeeper lock any more; it opens a new ZooKeeper session with the new value.")));
	held_waiting = 0;
	strlcpy(root_in_effect, root_setting, sizeof(root_in_effect));
	return 0;
}

/*
 * check_held_string, assign_held_string
 *		check_change and note_change for zklock.hosts, zklock.auth and
 *		zklock.auth_file, given the current value: a value assigned again
 *		changes nothing (an assign hook runs before the GUC takes the
 *		value, so the current one is still there).
 */
static bool
check_held_string(ZkSessionSetting setting, char **newval, void **extra,
				  GucSource source, const char *current)
{
	return SAME_STRING(*newval, current) ||
		check_change(setting, ZkSessionOpenedWith(setting, *newval, 0),
					 extra, source);
}

static void
assign_held_string(ZkSessionSetting setting, const char *newval,
				   void *extra, const char *current)
{
	if (!SAME_STRING(newval, current))
		note_change(setting, ZkSessionOpenedWith(setting, newval, 0), extra);
}

/*
 * check_zklock_hosts, _root, _auth, _auth_file, _session_timeout
 *		The form of the value, where this file checks it (zklock.auth's is
 *		checked when a session opens, by a message that does not repeat the
 *		value: a refused value would be echoed in PostgreSQL's "invalid
 *		value for parameter" error, which may reach a non-superuser through
 *		a function's SET clause), then the locks-held rule.
 */
static bool
check_zklock_hosts(char **newval, void **extra, GucSource source)
{
	const char *problem = *newval ? host_list_problem(*newval) : "";

	if (problem != NULL)
	{
		GUC_check_errdetail("%s", problem);
		return false;
	}
	return check_held_string(ZK_SESSION_SETTING_HOSTS, newval, extra, source,
							 zklock_hosts);
}

static bool
check_zklock_root(char **newval, void **extra, GucSource source)
{
	const char *problem = *newval ? ZkLockPathProblem(*newval) : "";

	if (problem != NULL)
	{
		GUC_check_errdetail("%s", problem);
		return false;
	}
	return SAME_STRING(*newval, root_setting) ||
		check_change(ZK_SESSION_SETTING_ROOT,
					 strcmp(*newval, root_in_effect) == 0, extra, source);
}

static bool
check_zklock_auth(char **newval, void **extra, GucSource source)
{
	return check_held_string(ZK_SESSION_SETTING_AUTH, newval, extra, source,
							 zklock_auth);
}

static bool
check_zklock_auth_file(char **newval, void **extra, GucSource source)
{
	return check_held_string(ZK_SESSION_SETTING_AUTH_FILE, newval, extra,
							 source, zklock_auth_file);
}

static bool
check_zklock_session_timeout(int *newval, void **extra, GucSource source)
{
	return *newval == zklock_session_timeout ||
		check_change(ZK_SESSION_SETTING_TIMEOUT,
					 ZkSessionOpenedWith(ZK_SESSION_SETTING_TIMEOUT, NULL, *newval),
					 extra, source);
}

/*
 * assign_zklock_hosts, _root, _auth, _auth_file, _session_timeout
 *		Whether the new value waits (note_change).  The root in effect
 *		follows zklock.root unless a value waits.
 */
static void
assign_zklock_hosts(const char *newval, void *extra)
{
	assign_held_string(ZK_SESSION_SETTING_HOSTS, newval, extra, zklock_hosts);
}

static void
assign_zklock_root(const char *newval, void *extra)
{
	if (SAME_STRING(newval, root_setting))
		return;
	note_change(ZK_SESSION_SETTING_ROOT, strcmp(newval, root_in_effect) == 0,
				extra);
	if (!(held_waiting & (1 << ZK_SESSION_SETTING_ROOT)))
		strlcpy(root_in_effect, newval, sizeof(root_in_effect));
}

static void
assign_zklock_auth(const char *newval, void *extra)
{
	assign_held_string(ZK_SESSION_SETTING_AUTH, newval, extra, zklock_auth);
}

static void
assign_zklock_auth_file(const char *newval, void *extra)
{
	assign_held_string(ZK_SESSION_SETTING_AUTH_FILE, newval, extra,
					   zklock_auth_file);
}

static void
assign_zklock_session_timeout(int newval, void *extra)
{
	if (newval != zklock_session_timeout)
		note_change(ZK_SESSION_SETTING_TIMEOUT,
					ZkSessionOpenedWith(ZK_SESSION_SETTING_TIMEOUT, NULL, newval),
					extra);
}

/*
 * show_zklock_hosts, show_zklock_root
 *		SHOW shows the value in effect: the session's while a value waits.
 *		(zk_session() shows the session's timeout.)
 */
static const char *
show_zklock_hosts(void)
{
	return (held_waiting & (1 << ZK_SESSION_SETTING_HOSTS)) ?
		ZkSessionHosts() : zklock_hosts;
}

static const char *
show_zklock_root(void)
{
	return root_in_effect;
}

/*
 * host_list_problem
 *		Why a zklock.hosts value is not a list of host:port pairs, as a
 *		DETAIL sentence, or NULL if it is one.  Only the form is checked
 *		here; whether the hosts resolve is known when a session opens.  A
 *		ZooKeeper "chroot" suffix is refused: zklock.root does that job,
 *		and the client would wait forever for a chroot that does not exist.
 */
static const char *
host_list_problem(const char *hosts)
{
	const char *p = hosts;

	if (hosts[0] == '\0')
		return "zklock.hosts must name at least one host:port.";
	if (strchr(hosts, '/') != NULL)
		return "zklock.hosts must not name a chroot path; set zklock.root instead.";
	for (;;)
	{
		size_t		len = strcspn(p, ",");
		char	   *item = pnstrdup(p, len);
		char	   *colon = strrchr(item, ':');
		char	   *end;
		long		port;

		if (len == 0)
			return "zklock.hosts contains an empty entry.";
		if (colon == NULL || colon == item ||
			strpbrk(item, " \t\r\n") != NULL)
			return psprintf("\"%s\" is not of the form host:port.", item);
		errno = 0;
		port = strtol(colon + 1, &end, 10);
		if (colon[1] == '\0' || *end != '\0' || errno != 0 ||
			port < 1 || port > 65535)
			return psprintf("\"%s\" does not end in a port number between 1 and 65535.",
							item);
		pfree(item);
		if (p[len] == '\0')
			return NULL;
		p += len + 1;
	}
}

/*
 * zk_define_session_settings
 *		The settings of the ZooKeeper session: where the servers are, the
 *		root of zklock's nodes, and the session's timeouts.
 */
static void
zk_define_session_settings(void)
{
	DefineCustomStringVariable("zklock.hosts",
							   "ZooKeeper servers the backend connects to.",
							   "A comma-separated list of host:port pairs, as the ZooKeeper client takes it.",
							   &zklock_hosts,
							   "127.0.0.1:2181",
							   PGC_SUSET,
							   0,
							   check_zklock_hosts, assign_zklock_hosts,
							   show_zklock_hosts);

	DefineCustomStringVariable("zklock.root",
							   "ZooKeeper path under which lock nodes are created.",
							   "A lock path \"/a/b\" lives at <zklock.root>/a/b.",
							   &root_setting,
							   "/zklock",
							   PGC_SUSET,
							   0,
							   check_zklock_root, assign_zklock_root,
							   show_zklock_root);

	DefineCustomIntVariable("zklock.session_timeout",
							"ZooKeeper session timeout requested by the backend.",
							"The server may negotiate it into its own bounds. A backend that cannot reach ZooKeeper for this long loses its locks.",
							&zklock_session_timeout,
							10000, 1000, INT_MAX,
							PGC_SUSET,
							GUC_UNIT_MS,
							check_zklock_session_timeout,
							assign_zklock_session_timeout, NULL);

	DefineCustomIntVariable("zklock.connect_timeout",
							"How long to wait for a ZooKeeper server when opening a session.",
							"Also bounds how long a release or the check at COMMIT waits for a lost connection to come back.",
							&zklock_connect_timeout,
							5000, 1, INT_MAX,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);
}

/*
 * zk_define_credential_settings
 *		The settings that give the session its digest credentials.
 */
static void
zk_define_credential_settings(void)
{
	/* its check hook never refuses a value by repeating it */
	DefineCustomStringVariable("zklock.auth",
							   "ZooKeeper digest credentials, as user:password.",
							   "When set, each new session authenticates with them and the nodes it creates get creator-only ACLs (world-readable).",
							   &zklock_auth,
							   "",
							   PGC_SUSET,
							   GUC_SUPERUSER_ONLY | GUC_NO_SHOW_ALL,
							   check_zklock_auth, assign_zklock_auth, NULL);

	DefineCustomStringVariable("zklock.auth_file",
							   "File whose first line holds the ZooKeeper digest credentials, as user:password.",
							   "The documented way to authenticate: the secret never enters a setting. The file must belong to the server's operating system user and be readable by it alone. Takes precedence over zklock.auth; read when a session is opened.",
							   &zklock_auth_file,
							   "",
							   PGC_SUSET,
							   GUC_SUPERUSER_ONLY,
							   check_zklock_auth_file, assign_zklock_auth_file,
							   NULL);
}

/*
 * zk_define_lock_settings
 *		The settings of how locks are taken, held and released.
 */
static void
zk_define_lock_settings(void)
{
	DefineCustomBoolVariable("zklock.synchronous_release",
							 "Makes lock releases wait until ZooKeeper has applied them.",
							 "When on, zk_unlock, zk_unlock_all and the release of transaction locks at COMMIT or ROLLBACK return only once the delete of the queue node is confirmed, so any lock attempt that starts afterwards, on any server, finds the lock free. When off, the delete is sent in the background.",
							 &zklock_synchronous_release,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomEnumVariable("zklock.exclusive_node_style",
							 "How exclusive locks name their queue nodes.",
							 "rwlock: like Curator's InterProcessReadWriteLock (shares a queue with it and with kazoo). mutex: like Curator's InterProcessMutex (shares a queue with it, and with Curator's LeaderSelector). latch: like a Curator LeaderLatch participant (a SQL backend and Java services elect one leader). Shared locks are not available in the mutex and latch styles.",
							 &zklock_exclusive_node_style,
							 ZK_STYLE_RWLOCK,
							 node_style_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("zklock.verify_on_commit",
							 "Confirms with ZooKeeper at every COMMIT that each held lock's node still exists.",
							 "Without it, COMMIT only requires the session to be known alive. COMMIT fails if a held node is gone or cannot be confirmed within zklock.connect_timeout.",
							 &zklock_verify_on_commit,
							 false,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("zklock.max_locks_per_backend",
							"Maximum number of ZooKeeper locks one backend may hold.",
							"Each distinct path and mode counts once, however often it is taken.",
							&zklock_max_locks_per_backend,
							1000, 1, INT_MAX,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	DefineCustomEnumVariable("zklock.on_lock_loss",
							 "What a lost ZooKeeper lock does to the statement that is running.",
							 "cancel: as soon as the backend knows a hold of its own is gone (its session expired or was out of touch past the session timeout, another client deleted its node, or a lease this transaction took or renewed ran out or was deleted), the running statement is cancelled with an ERROR naming the lost locks; an idle backend gets that ERROR at its next statement. error: only the next zklock call and COMMIT fail.",
							 &zklock_on_lock_loss,
							 ZK_ON_LOSS_CANCEL,
							 on_lock_loss_options,
							 PGC_USERSET,
							 0,
							 NULL, assign_zklock_on_lock_loss, NULL);

	DefineCustomEnumVariable("zklock.on_revoke",
							 "What a held ZooKeeper lock does when its holder is asked to release it.",
							 "ignore: the request is only recorded (zk_revoke_requested, zk_locks.revoke_requested), for code that checks it to release. release: the lock's node is deleted at once and the lock is lost, as by zklock.on_lock_loss (by default, the running statement is cancelled with an ERROR saying the lock was revoked).",
							 &zklock_on_revoke,
							 ZK_ON_REVOKE_IGNORE,
							 on_revoke_options,
							 PGC_USERSET,
							 0,
							 NULL, assign_zklock_on_revoke, NULL);
}

/*
 * zk_warn_auth_not_preloaded
 *		Until a backend loads this library, a zklock.auth given in the
 *		configuration is an ordinary placeholder setting that any user can
 *		read with SHOW.  Only preloading closes that gap: say so.
 */
static void
zk_warn_auth_not_preloaded(void)
{
	if (!process_shared_preload_libraries_in_progress &&
		zklock_auth != NULL && zklock_auth[0] != '\0' &&
		(session_preload_libraries_string == NULL ||
		 strstr(session_preload_libraries_string, "zklock") == NULL))
		ereport(WARNING,
				(errmsg("zklock.auth is set, but zklock is not preloaded"),
				 errdetail("In a backend that has not loaded zklock, zklock.auth is an ordinary placeholder setting that any user can read."),
				 errhint("Add zklock to shared_preload_libraries or session_preload_libraries.")));
}

/*
 * _PG_init
 *		Define the settings, ask for the statistics' shared memory when
 *		loaded at server start, register the transaction callbacks, and
 *		install the DISCARD ALL hook, the hooks that stop a statement whose
 *		locks were lost, and the session layer's settings hook.
 *		Nothing else: no thread, no connection.
 */
void
_PG_init(void)
{
	/* the statistics' shared memory, when loaded at server start */
	ZkStatRequestShmem();

	/*
	 * zklock's one pair of transaction callbacks, registered here and only
	 * here: at abort they hand the requests an ERROR left to the client
	 * threads, then release the transaction's holds, in that order.  They
	 * cost nothing in a backend that holds nothing.
	 */
	RegisterXactCallback(ZkLockXactCallback, NULL);
	RegisterSubXactCallback(ZkLockSubXactCallback, NULL);

	/* the layers read the root in effect */
	zklock_root = root_in_effect;
	zk_define_session_settings();
	zk_define_credential_settings();
	zk_define_lock_settings();

	MarkGUCPrefixReserved("zklock");

	/* DISCARD ALL releases session holds, as pg_advisory_unlock_all() */
	ZkInstallDiscardHook();

	/* a lost hold stops the statement (zklock.on_lock_loss) */
	ZkInstallLossCancelHooks();

	/* a reload's values that wait for the locks to go */
	ZkSessionSetSettingsHook(let_waiting_values_go);

	zk_warn_auth_not_preloaded();
}

/*
 * assign_zklock_on_lock_loss
 *		Tell the loss watch whether a loss cancels the statement.
 */
static void
assign_zklock_on_lock_loss(int newval, void *extra)
{
	ZkLossWatchSetCancel(newval == ZK_ON_LOSS_CANCEL);
}

/*
 * assign_zklock_on_revoke
 *		Tell the loss watch whether a revocation releases the hold.
 */
static void
assign_zklock_on_revoke(int newval, void *extra)
{
	ZkLossWatchSetRevoke(newval == ZK_ON_REVOKE_RELEASE);
}
