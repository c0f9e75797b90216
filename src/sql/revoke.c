/*-------------------------------------------------------------------------
 *
 * sql/revoke.c
 *		Revocation: zk_revoke(), which asks the holders of a lock path to
 *		let go or takes the lock from them, and zk_revoke_requested(),
 *		which tells a holder that it was asked.
 *
 * zk_revoke is not executable by PUBLIC (the extension's script revokes
 * it): it acts on other servers' backends and on other clients, so a
 * superuser grants it to the roles that may.  Each call is logged (who,
 * which path, which nodes) at LOG, and the holders it asked or took are
 * counted in zk_stat.revocations.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"

#include "base/stats.h"
#include "base/text_encoding.h"
#include "holds/holds.h"
#include "sql/arguments.h"

PG_FUNCTION_INFO_V1(zk_revoke);
PG_FUNCTION_INFO_V1(zk_revoke_requested);

/*
 * zk_revoke
 *		zk_revoke(path text, force boolean DEFAULT false) returns integer:
 *		write Curator's revocation marker into each node that holds path
 *		(or with force, delete it), and return how many holders were asked
 *		(or taken).  Strict: a NULL argument gives NULL.
 */
Datum
zk_revoke(PG_FUNCTION_ARGS)
{
	char	   *path = ZkPathArg(fcinfo, 0);
	bool		force = PG_GETARG_BOOL(1);
	char	   *holders;
	int			n;
	char	   *user;

	n = ZkLockRevoke(path, force, &holders);
	ZkStatCount(ZK_STAT_REVOCATIONS, n);
	user = GetUserNameFromId(GetUserId(), false);
	if (force)
		ereport(LOG,
				(errmsg_plural("role \"%s\" took ZooKeeper lock \"%s\" from %d holder",
							   "role \"%s\" took ZooKeeper lock \"%s\" from %d holders",
							   n, user, ZkUtf8ForMessage(path), n),
				 n > 0 ? errdetail("Deleted nodes: %s.", holders) : 0,
				 errhidestmt(true)));
	else
		ereport(LOG,
				(errmsg_plural("role \"%s\" asked %d holder of ZooKeeper lock \"%s\" to release it",
							   "role \"%s\" asked %d holders of ZooKeeper lock \"%s\" to release it",
							   n, user, n, ZkUtf8ForMessage(path)),
				 n > 0 ? errdetail("Nodes given the revocation marker: %s.", holders) : 0,
				 errhidestmt(true)));
	PG_RETURN_INT32(n);
}

/*
 * zk_revoke_requested
 *		zk_revoke_requested(path text) returns boolean: has a revocation
 *		been asked of this backend's hold on path (by zk_revoke from any
 *		server, or by Curator's Revoker.attemptRevoke)?  False when path is
 *		not held.  Asks ZooKeeper nothing: the loss watch learnt it.
 */
Datum
zk_revoke_requested(PG_FUNCTION_ARGS)
{
	char	   *path = ZkPathArg(fcinfo, 0);

	PG_RETURN_BOOL(ZkLockRevokeRequested(path));
}
