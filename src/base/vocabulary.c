/*-------------------------------------------------------------------------
 *
 * base/vocabulary.c
 *		Storage of zklock's settings and the names of lock modes and
 *		scopes, shared by every layer (see base/vocabulary.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "base/vocabulary.h"

/* settings; sql/settings.c registers them with their descriptions and bounds */
char	   *zklock_hosts = NULL;
char	   *zklock_root = NULL;
int			zklock_session_timeout = 10000; /* ms */
int			zklock_connect_timeout = 5000;	/* ms */
char	   *zklock_auth = NULL;
char	   *zklock_auth_file = NULL;
bool		zklock_synchronous_release = true;
int			zklock_exclusive_node_style = ZK_STYLE_RWLOCK;
bool		zklock_verify_on_commit = false;
int			zklock_max_locks_per_backend = 1000;
int			zklock_on_lock_loss = ZK_ON_LOSS_CANCEL;
int			zklock_on_revoke = ZK_ON_REVOKE_IGNORE;

/*
 * ZkLockModeName
 *		The SQL-visible name of a lock mode.
 */
const char *
ZkLockModeName(ZkLockMode mode)
{
	switch (mode)
	{
		case ZK_MODE_EXCLUSIVE:
			return "exclusive";
		case ZK_MODE_SHARED:
			return "shared";
		case ZK_MODE_PERMIT:
			/*
			 * A permit.  Curator's word, kept as the mode's name: node data
			 * and deadlock records carry it, and zklock of every version
			 * reads "lease" there (base/node_formats.c).
			 */
			return "lease";
		case ZK_MODE_MEMBER:
			return "member";
	}
	return "unknown";
}

/*
 * ZkLockScopeName
 *		The SQL-visible name of a lock scope.
 */
const char *
ZkLockScopeName(ZkLockScope scope)
{
	switch (scope)
	{
		case ZK_SCOPE_SESSION:
			return "session";
		case ZK_SCOPE_TRANSACTION:
			return "transaction";
		case ZK_SCOPE_LEASE:
			return "lease";
	}
	return "unknown";
}
