/*-------------------------------------------------------------------------
 *
 * sql/discard.c
 *		DISCARD ALL releases zklock's session holds, as it releases
 *		PostgreSQL's own advisory locks.
 *
 * Connection poolers (PgBouncer's server_reset_query, pgpool-II's
 * reset_query_list) run DISCARD ALL before they hand a server connection
 * to the next client.  DISCARD ALL is defined to do what
 * pg_advisory_unlock_all() does, so it must release zklock's session
 * locks, lock sets and semaphore permits too: otherwise the next client of
 * that connection would silently inherit them.  It does more than
 * zk_unlock_all(): it also ends the backend's double barrier memberships
 * (a member that leaves with its connection cannot be left behind) and
 * forgets the lease names the backend remembers.
 *
 * zklock's one ProcessUtility hook, installed when the library is loaded
 * (a backend that never loaded zklock holds no zklock lock); it also
 * lets sql/loss_cancel.c look at each utility statement for a lost lock.  It lets the statement
 * run first, through the previous hook or standard_ProcessUtility, and
 * acts only once that returned: a DISCARD ALL that fails (inside a
 * transaction block) releases nothing, and DISCARD PLANS, SEQUENCES and
 * TEMP touch no lock.  The release is synchronous, one round trip, like
 * zk_unlock_all's.  DISCARD ALL has reset every setting (RESET ALL) by then,
 * zklock's included: the locks are released by the node paths the lock
 * table stored, and the next zklock call opens a new session if the
 * settings that choose it changed.  Leases belong to no backend and stay.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/parsenodes.h"
#include "tcop/utility.h"

#include "sql/discard.h"
#include "sql/loss_cancel.h"
#include "holds/holds.h"

static ProcessUtility_hook_type zk_prev_process_utility = NULL;

static void zk_process_utility(PlannedStmt *pstmt, const char *queryString,
							   bool readOnlyTree,
							   ProcessUtilityContext context,
							   ParamListInfo params,
							   QueryEnvironment *queryEnv,
							   DestReceiver *dest, QueryCompletion *qc);

/*
 * ZkInstallDiscardHook
 *		Chain our ProcessUtility hook in front of the previous one.  Called
 *		once, from _PG_init.
 */
void
ZkInstallDiscardHook(void)
{
	zk_prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = zk_process_utility;
}

/*
 * zk_process_utility
 *		Run the statement (looked at first for a lost lock, or kept from
 *		being cancelled for one: sql/loss_cancel.c); after a DISCARD ALL
 *		that succeeded, release every session hold of the backend.
 */
static void
zk_process_utility(PlannedStmt *pstmt, const char *queryString,
				   bool readOnlyTree, ProcessUtilityContext context,
				   ParamListInfo params, QueryEnvironment *queryEnv,
				   DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	bool		discard_all = IsA(parsetree, DiscardStmt) &&
		((DiscardStmt *) parsetree)->target == DISCARD_ALL;
	bool		held_off = ZkLossUtilityBegin(parsetree);

	PG_TRY();
	{
		if (zk_prev_process_utility)
			zk_prev_process_utility(pstmt, queryString, readOnlyTree, context,
									params, queryEnv, dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString, readOnlyTree,
									context, params, queryEnv, dest, qc);

		if (discard_all)
			ZkLockDiscardAll();
	}
	PG_FINALLY();
	{
		if (held_off)
			ZkLossUtilityEnd();
	}
	PG_END_TRY();
}
