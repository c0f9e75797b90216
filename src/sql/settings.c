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
 * reads; this file gives them their names, bounds and descriptions.
 *
 * The settings that choose the session and where its locks live
 * (zklock.hosts, zklock.root, zklock.session_timeout, zklock.auth,
 * zklock.auth_file) do not change under the locks a backend holds (their
 * check hooks ask the lock table, ZkLockCount):
 *
 * - A SET (or set_config(), or a function's SET clause) that would change
 *   one is an ERROR while the backend holds locks.
 * - A value that a reload of the configuration file brings then is kept
 *   aside: the check hook puts the value in effect back in its place and
 *   hangs the file's value on it as its "extra", and the assign hook,
 *   which sees every value that becomes current, logs that the change
 *   waits.  The first zklock call that needs the session once the backend
 *   holds no lock applies the file's value as the reload would have
 *   (apply_deferred_settings, through the session layer's settings hook),
 *   and the session layer then opens a new session.  The check hook alone
 *   could not do this: it also runs for ALTER SYSTEM and pg_file_settings,
 *   which change nothing in this backend, while an assign hook runs only
 *   when a value is really assigned.
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

/*
 * The settings whose change waits while the backend holds locks, and their
 * names.
 */
typedef enum ZkHeldSetting
{
	ZK_SETTING_HOSTS,
	ZK_SETTING_ROOT,
	ZK_SETTING_SESSION_TIMEOUT,
	ZK_SETTING_AUTH,
	ZK_SETTING_AUTH_FILE,
	ZK_NUM_HELD_SETTINGS
} ZkHeldSetting;

static const char *const held_setting_names[ZK_NUM_HELD_SETTINGS] = {
	"zklock.hosts",
	"zklock.root",
	"zklock.session_timeout",
	"zklock.auth",
	"zklock.auth_file"
};

/*
 * A value of one of those settings that a reload brought while the backend
 * held locks: the "extra" of the value kept in its place (malloc'd; the
 * GUC machinery frees it with the value it belongs to).
 */
typedef struct ZkDeferredValue
{
	GucSource	source;			/* PGC_S_FILE, or PGC_S_DEFAULT when the
								 * reload removed the setting from the file */
	int			intval;			/* zklock.session_timeout */
	char		strval[FLEXIBLE_ARRAY_MEMBER];	/* the string settings */
} ZkDeferredValue;

/*
 * Each setting's deferred value: the extra of its current value (the assign
 * hook sees each value that becomes current, and the GUC machinery frees an
 * extra only after its value stopped being current), or NULL.
 */
static const ZkDeferredValue *deferred_values[ZK_NUM_HELD_SETTINGS];

static bool refuse_change(ZkHeldSetting setting);
static bool session_value(ZkHeldSetting setting, const char *strval,
						  int intval);
static ZkDeferredValue *make_deferred(GucSource source, int intval,
									  const char *strval);
static bool check_string_change(ZkHeldSetting setting, char **newval,
								void **extra, GucSource source,
								const char *current);
static void note_deferred(ZkHeldSetting setting, const ZkDeferredValue *value);
static void apply_deferred_settings(void);
static const char *host_list_problem(const char *hosts);
static bool check_setting_value(ZkHeldSetting setting, char **newval,
								void **extra, GucSource source,
								const char *current,
								const char *(*problem_of) (const char *value));
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

/*
 * refuse_change
 *		The ERROR of a SET that would change 'setting' while the backend
 *		holds locks.  The message never repeats the value (zklock.auth's
 *		is a secret).
 */
static bool
refuse_change(ZkHeldSetting setting)
{
	GUC_check_errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE);
	GUC_check_errmsg("parameter \"%s\" cannot be changed while this backend holds ZooKeeper locks",
					 held_setting_names[setting]);
	GUC_check_errdetail("The locks were taken in this backend's ZooKeeper session with the current value.");
	GUC_check_errhint("Release the locks first (zk_unlock_all() releases session locks, COMMIT or ROLLBACK transaction locks; zk_locks lists what is held), or keep the value the session was opened with.");
	return false;
}

/*
 * session_value
 *		Is this value of 'setting' the one the open ZooKeeper session was
 *		opened with?  A SET to it changes nothing the held locks depend on,
 *		even while the current value differs (the end of a SET LOCAL, or a
 *		RESET, changed it after the session was opened): it is how a
 *		backend gets back to its session (the 55000 of client/connect.c says
 *		so).  zklock.root chooses no session.
 */
static bool
session_value(ZkHeldSetting setting, const char *strval, int intval)
{
	switch (setting)
	{
		case ZK_SETTING_HOSTS:
			return ZkSessionOpenedWith(ZK_SESSION_SETTING_HOSTS, strval, 0);
		case ZK_SETTING_AUTH:
			return ZkSessionOpenedWith(ZK_SESSION_SETTING_AUTH, strval, 0);
		case ZK_SETTING_AUTH_FILE:
			return ZkSessionOpenedWith(ZK_SESSION_SETTING_AUTH_FILE, strval,
									   0);
		case ZK_SETTING_SESSION_TIMEOUT:
			return ZkSessionOpenedWith(ZK_SESSION_SETTING_TIMEOUT, NULL,
									   intval);
		case ZK_SETTING_ROOT:
		case ZK_NUM_HELD_SETTINGS:
			break;
	}
	return false;
}

/*
 * make_deferred
 *		A ZkDeferredValue, malloc'd as the GUC machinery wants an extra, or
 *		NULL when out of memory.
 */
static ZkDeferredValue *
make_deferred(GucSource source, int intval, const char *strval)
{
	size_t		len = strval ? strlen(strval) : 0;
	ZkDeferredValue *value;

	value = malloc(offsetof(ZkDeferredValue, strval) + len + 1);
	if (value == NULL)
		return NULL;
	value->source = source;
	value->intval = intval;
	if (strval != NULL)
		memcpy(value->strval, strval, len);
	value->strval[len] = '\0';
	return value;
}

/*
 * check_string_change
 *		The locks-held rule for a new value of a string setting, given the
 *		current one.  Without locks, or without a change, the value passes.
 *		While locks are held: a SET is refused, unless it sets the value
 *		the open session was opened with (session_value); a value from the
 *		configuration file (a reload, or PGC_S_DEFAULT when the reload
 *		removed the setting) is replaced by the current value, with the
 *		file's value as its extra (see note_deferred); anything else passes
 *		(PGC_S_TEST only validates a value for later, and the other sources
 *		are not used once a backend runs queries).
 */
static bool
check_string_change(ZkHeldSetting setting, char **newval, void **extra,
					GucSource source, const char *current)
{
	ZkDeferredValue *deferred;
	char	   *kept;

	if (current == NULL || *newval == NULL || strcmp(*newval, current) == 0 ||
		ZkLockCount() == 0)
		return true;
	if (source == PGC_S_SESSION && session_value(setting, *newval, 0))
		return true;
	if (source == PGC_S_SESSION)
		return refuse_change(setting);
	if (source != PGC_S_FILE && source != PGC_S_DEFAULT)
		return true;

	deferred = make_deferred(source, 0, *newval);
	kept = strdup(current);
	if (deferred == NULL || kept == NULL)
	{
		free(deferred);
		free(kept);
		GUC_check_errcode(ERRCODE_OUT_OF_MEMORY);
		GUC_check_errmsg("out of memory");
		return false;
	}
	free(*newval);
	*newval = kept;
	*extra = deferred;
	return true;
}

/*
 * check_setting_value
 *		A new value of a string setting that chooses the session: refused
 *		if 'problem_of' (when given) finds its form wrong (NULL is wrong
 *		then), with that problem as DETAIL; else subject to the locks-held
 *		rule (check_string_change).
 */
static bool
check_setting_value(ZkHeldSetting setting, char **newval, void **extra,
					GucSource source, const char *current,
					const char *(*problem_of) (const char *value))
{
	if (problem_of != NULL)
	{
		const char *problem;

		if (*newval == NULL)
			return false;
		problem = problem_of(*newval);
		if (problem != NULL)
		{
			GUC_check_errdetail("%s", problem);
			return false;
		}
	}
	return check_string_change(setting, newval, extra, source, current);
}

/*
 * note_deferred
 *		The assign hooks' common part: 'value' is the extra of the value
 *		becoming current, the file's value it stands for, or NULL.  Remember
 *		it for apply_deferred_settings, and log that the change waits when
 *		it is new while the backend holds locks (a reload of an unchanged
 *		file brings the same value again, and says nothing).  Raises no
 *		ERROR.
 */
static void
note_deferred(ZkHeldSetting setting, const ZkDeferredValue *value)
{
	const ZkDeferredValue *before = deferred_values[setting];

	deferred_values[setting] = value;
	if (value == NULL || ZkLockCount() == 0)
		return;
	if (before != NULL && before->source == value->source &&
		before->intval == value->intval &&
		strcmp(before->strval, value->strval) == 0)
		return;
	ereport(LOG,
			(errmsg("change of parameter \"%s\" deferred while this backend holds ZooKeeper locks",
					held_setting_names[setting]),
			 errdetail("The backend keeps the current value and its ZooKeeper session until it holds no lock; the new value is applied at its first zklock call after that.")));
}

/*
 * apply_deferred_settings
 *		The session layer's settings hook, called when a zklock call needs
 *		the session and the backend holds no lock: apply the values that a
 *		reload brought while it held some, as the reload would have (a
 *		source <= PGC_S_OVERRIDE sets the RESET value too, and no
 *		transaction takes it back), and log each.  The session layer then
 *		finds the session's settings changed and opens a new one.  Nothing
 *		is applied in parallel mode, where settings cannot change: a later
 *		call does it.
 */
static void
apply_deferred_settings(void)
{
	if (IsInParallelMode() || ZkLockCount() > 0)
		return;
	for (int i = 0; i < ZK_NUM_HELD_SETTINGS; i++)
	{
		const ZkDeferredValue *deferred = deferred_values[i];
		GucSource	source;
		char	   *value;

		if (deferred == NULL)
			continue;
		/* copied first: the extra goes when its value stops being current */
		source = deferred->source;
		if (source == PGC_S_DEFAULT)
			value = NULL;
		else if (i == ZK_SETTING_SESSION_TIMEOUT)
			value = psprintf("%d", deferred->intval);
		else
			value = pstrdup(deferred->strval);
		/* tried once: a value the GUC machinery does not take is dropped */
		deferred_values[i] = NULL;

		if (set_config_option(held_setting_names[i], value, PGC_SIGHUP, source,
							  GUC_ACTION_SET, true, LOG, false) > 0)
			ereport(LOG,
					(errmsg("deferred change of parameter \"%s\" applied",
							held_setting_names[i]),
					 i == ZK_SETTING_ROOT ?
					 errdetail("The backend holds no ZooKeeper lock any more; its new locks go under the new root.") :
					 errdetail("The backend holds no ZooKeeper lock any more; it opens a new ZooKeeper session with the new value.")));
		if (value != NULL)
			pfree(value);
	}
}

/*
 * check_zklock_hosts
 *		A list of host:port pairs, unchanged while locks are held.
 */
static bool
check_zklock_hosts(char **newval, void **extra, GucSource source)
{
	return check_setting_value(ZK_SETTING_HOSTS, newval, extra, source,
							   zklock_hosts, host_list_problem);
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
 * check_zklock_root
 *		A valid lock path, unchanged while locks are held.
 */
static bool
check_zklock_root(char **newval, void **extra, GucSource source)
{
	return check_setting_value(ZK_SETTING_ROOT, newval, extra, source,
							   zklock_root, ZkLockPathProblem);
}

/*
 * check_zklock_auth
 *		Only the locks-held rule: the form is checked when a session opens,
 *		by a message that does not repeat the value, since a refused value
 *		would otherwise be echoed in PostgreSQL's "invalid value for
 *		parameter" error, which may reach a non-superuser (a function's SET
 *		clause).  refuse_change's message does not repeat it either.
 */
static bool
check_zklock_auth(char **newval, void **extra, GucSource source)
{
	return check_setting_value(ZK_SETTING_AUTH, newval, extra, source,
							   zklock_auth, NULL);
}

/*
 * check_zklock_auth_file
 *		The file is read when a session opens; it cannot change under held
 *		locks.  (Its path is not secret, unlike zklock.auth's value.)
 */
static bool
check_zklock_auth_file(char **newval, void **extra, GucSource source)
{
	return check_setting_value(ZK_SETTING_AUTH_FILE, newval, extra, source,
							   zklock_auth_file, NULL);
}

/*
 * check_zklock_session_timeout
 *		Unchanged while locks are held: the locks-held rule of
 *		check_string_change, for an integer.
 */
static bool
check_zklock_session_timeout(int *newval, void **extra, GucSource source)
{
	ZkDeferredValue *deferred;

	if (*newval == zklock_session_timeout || ZkLockCount() == 0)
		return true;
	if (source == PGC_S_SESSION &&
		session_value(ZK_SETTING_SESSION_TIMEOUT, NULL, *newval))
		return true;
	if (source == PGC_S_SESSION)
		return refuse_change(ZK_SETTING_SESSION_TIMEOUT);
	if (source != PGC_S_FILE && source != PGC_S_DEFAULT)
		return true;

	deferred = make_deferred(source, *newval, NULL);
	if (deferred == NULL)
	{
		GUC_check_errcode(ERRCODE_OUT_OF_MEMORY);
		GUC_check_errmsg("out of memory");
		return false;
	}
	*newval = zklock_session_timeout;
	*extra = deferred;
	return true;
}

/*
 * assign_zklock_hosts, _root, _session_timeout, _auth, _auth_file
 *		Note the file's value that the new current value stands for, if any.
 */
static void
assign_zklock_hosts(const char *newval, void *extra)
{
	note_deferred(ZK_SETTING_HOSTS, extra);
}

static void
assign_zklock_root(const char *newval, void *extra)
{
	note_deferred(ZK_SETTING_ROOT, extra);
}

static void
assign_zklock_session_timeout(int newval, void *extra)
{
	note_deferred(ZK_SETTING_SESSION_TIMEOUT, extra);
}

static void
assign_zklock_auth(const char *newval, void *extra)
{
	note_deferred(ZK_SETTING_AUTH, extra);
}

static void
assign_zklock_auth_file(const char *newval, void *extra)
{
	note_deferred(ZK_SETTING_AUTH_FILE, extra);
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
							   check_zklock_hosts, assign_zklock_hosts, NULL);

	DefineCustomStringVariable("zklock.root",
							   "ZooKeeper path under which lock nodes are created.",
							   "A lock path \"/a/b\" lives at <zklock.root>/a/b.",
							   &zklock_root,
							   "/zklock",
							   PGC_SUSET,
							   0,
							   check_zklock_root, assign_zklock_root, NULL);

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

	zk_define_session_settings();
	zk_define_credential_settings();
	zk_define_lock_settings();

	MarkGUCPrefixReserved("zklock");

	/* DISCARD ALL releases session holds, as pg_advisory_unlock_all() */
	ZkInstallDiscardHook();

	/* a lost hold stops the statement (zklock.on_lock_loss) */
	ZkInstallLossCancelHooks();

	/* a reload's values that waited for the locks to go */
	ZkSessionSetSettingsHook(apply_deferred_settings);

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
