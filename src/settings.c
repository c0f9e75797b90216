/*-------------------------------------------------------------------------
 *
 * settings.c
 *		Loading zklock: its settings (zklock.*), their checks, and
 *		_PG_init.
 *
 * Loading the library (even through shared_preload_libraries, in the
 * postmaster) only defines the settings, asks for the statistics' shared
 * memory (stats.c) and installs the DISCARD ALL hook (discard.c): no
 * thread is started and no connection made before a backend's first
 * zklock call.  The settings' variables live in vocabulary.c, which every
 * layer reads; this file gives them their names, bounds and descriptions.
 *
 * The settings that choose the session (zklock.hosts, zklock.root,
 * zklock.session_timeout, zklock.auth_file) cannot change while the
 * backend holds locks: their check hooks ask the lock table
 * (ZkLockCount).  The form of zklock.hosts is checked here, that of
 * zklock.root by lock_path.c.  Nothing here talks to ZooKeeper.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "discard.h"
#include "lock_path.h"
#include "lock_table.h"
#include "stats.h"
#include "vocabulary.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static const struct config_enum_entry node_style_options[] = {
	{"rwlock", ZK_STYLE_RWLOCK, false},
	{"mutex", ZK_STYLE_MUTEX, false},
	{"latch", ZK_STYLE_LATCH, false},
	{NULL, 0, false}
};

static bool check_locks_not_held(const char *name, bool changed);
static const char *host_list_problem(const char *hosts);
static bool check_setting_value(const char *name, const char *newval,
								const char *current,
								const char *(*problem_of) (const char *value));
static bool check_zklock_hosts(char **newval, void **extra, GucSource source);
static bool check_zklock_root(char **newval, void **extra, GucSource source);
static bool check_zklock_auth_file(char **newval, void **extra,
								   GucSource source);
static bool check_zklock_session_timeout(int *newval, void **extra,
										 GucSource source);

/*
 * check_locks_not_held
 *		The settings that choose the session (and the root) cannot change
 *		while this backend holds locks.
 */
static bool
check_locks_not_held(const char *name, bool changed)
{
	if (changed && ZkLockCount() > 0)
	{
		GUC_check_errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE);
		GUC_check_errdetail("%s cannot be changed while this backend holds ZooKeeper locks.",
							name);
		GUC_check_errhint("Release them first: zk_unlock_all() releases session locks, COMMIT or ROLLBACK transaction locks; zk_locks lists what is held.");
		return false;
	}
	return true;
}

/*
 * check_setting_value
 *		A new value of a string setting that chooses the session: refused
 *		if 'problem_of' (when given) finds its form wrong (NULL is wrong
 *		then), with that problem as DETAIL; else refused if it changes
 *		while this backend holds locks.
 */
static bool
check_setting_value(const char *name, const char *newval, const char *current,
					const char *(*problem_of) (const char *value))
{
	if (problem_of != NULL)
	{
		const char *problem;

		if (newval == NULL)
			return false;
		problem = problem_of(newval);
		if (problem != NULL)
		{
			GUC_check_errdetail("%s", problem);
			return false;
		}
	}
	return check_locks_not_held(name,
								current != NULL && newval != NULL &&
								strcmp(newval, current) != 0);
}

/*
 * check_zklock_hosts
 *		A list of host:port pairs, unchanged while locks are held.
 */
static bool
check_zklock_hosts(char **newval, void **extra, GucSource source)
{
	return check_setting_value("zklock.hosts", *newval, zklock_hosts,
							   host_list_problem);
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
	return check_setting_value("zklock.root", *newval, zklock_root,
							   ZkLockPathProblem);
}

/*
 * check_zklock_auth_file
 *		The file is read when a session opens; it cannot change under held
 *		locks.  (Its path is not secret, unlike zklock.auth's value.)
 */
static bool
check_zklock_auth_file(char **newval, void **extra, GucSource source)
{
	return check_setting_value("zklock.auth_file", *newval, zklock_auth_file,
							   NULL);
}

/*
 * check_zklock_session_timeout
 *		Unchanged while locks are held.
 */
static bool
check_zklock_session_timeout(int *newval, void **extra, GucSource source)
{
	return check_locks_not_held("zklock.session_timeout",
								*newval != zklock_session_timeout);
}

/*
 * _PG_init
 *		Define the settings, ask for the statistics' shared memory when
 *		loaded at server start, register the transaction callbacks and
 *		install the DISCARD ALL hook.  Nothing else: no thread, no
 *		connection.
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

	DefineCustomStringVariable("zklock.hosts",
							   "ZooKeeper servers the backend connects to.",
							   "A comma-separated list of host:port pairs, as the ZooKeeper client takes it.",
							   &zklock_hosts,
							   "127.0.0.1:2181",
							   PGC_SUSET,
							   0,
							   check_zklock_hosts, NULL, NULL);

	DefineCustomStringVariable("zklock.root",
							   "ZooKeeper path under which lock nodes are created.",
							   "A lock path \"/a/b\" lives at <zklock.root>/a/b.",
							   &zklock_root,
							   "/zklock",
							   PGC_SUSET,
							   0,
							   check_zklock_root, NULL, NULL);

	DefineCustomIntVariable("zklock.session_timeout",
							"ZooKeeper session timeout requested by the backend.",
							"The server may negotiate it into its own bounds. A backend that cannot reach ZooKeeper for this long loses its locks.",
							&zklock_session_timeout,
							10000, 1000, INT_MAX,
							PGC_SUSET,
							GUC_UNIT_MS,
							check_zklock_session_timeout, NULL, NULL);

	DefineCustomIntVariable("zklock.connect_timeout",
							"How long to wait for a ZooKeeper server when opening a session.",
							"Also bounds how long a release or the check at COMMIT waits for a lost connection to come back.",
							&zklock_connect_timeout,
							5000, 1, INT_MAX,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	/*
	 * No check hook: a refused value would be echoed in "invalid value for
	 * parameter" errors, which may reach a non-superuser (a function's SET
	 * clause).  The form and the locks-held rule are checked when the value
	 * is used, by messages that do not repeat it.
	 */
	DefineCustomStringVariable("zklock.auth",
							   "ZooKeeper digest credentials, as user:password.",
							   "When set, each new session authenticates with them and the nodes it creates get creator-only ACLs (world-readable).",
							   &zklock_auth,
							   "",
							   PGC_SUSET,
							   GUC_SUPERUSER_ONLY | GUC_NO_SHOW_ALL,
							   NULL, NULL, NULL);

	DefineCustomStringVariable("zklock.auth_file",
							   "File whose first line holds the ZooKeeper digest credentials, as user:password.",
							   "The documented way to authenticate: the secret never enters a setting. The file must belong to the server's operating system user and be readable by it alone. Takes precedence over zklock.auth; read when a session is opened.",
							   &zklock_auth_file,
							   "",
							   PGC_SUSET,
							   GUC_SUPERUSER_ONLY,
							   check_zklock_auth_file, NULL, NULL);

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

	DefineCustomBoolVariable("zklock.guess_fresh_paths",
							 "Lets a lock attempt create a lock node it expects to be missing in the same request as its queue node.",
							 "A developer setting, to compare both ways in one benchmark run. When off, every attempt first assumes its lock node exists, and creates it only after ZooKeeper said it is missing.",
							 &zklock_guess_fresh_paths,
							 true,
							 PGC_USERSET,
							 GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							 NULL, NULL, NULL);

	MarkGUCPrefixReserved("zklock");

	/* DISCARD ALL releases session holds, as pg_advisory_unlock_all() */
	ZkInstallDiscardHook();

	/*
	 * Until a backend loads this library, a zklock.auth given in the
	 * configuration is an ordinary placeholder setting that any user can
	 * read with SHOW.  Only preloading closes that gap: say so.
	 */
	if (!process_shared_preload_libraries_in_progress &&
		zklock_auth != NULL && zklock_auth[0] != '\0' &&
		(session_preload_libraries_string == NULL ||
		 strstr(session_preload_libraries_string, "zklock") == NULL))
		ereport(WARNING,
				(errmsg("zklock.auth is set, but zklock is not preloaded"),
				 errdetail("In a backend that has not loaded zklock, zklock.auth is an ordinary placeholder setting that any user can read."),
				 errhint("Add zklock to shared_preload_libraries or session_preload_libraries.")));
}
