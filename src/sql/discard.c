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
 * runs each utility statement as a part a lost lock stops
 * (sql/loss_cancel.c).  It lets the statement
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

/* ProcessUtility's arguments, for ZkLossRunPart */
typedef struct ZkUtilityArgs
{
	PlannedStmt *pstmt;
	const char *queryString;
	bool		readOnlyTree;
	ProcessUtilityContext context;
	ParamListInfo params;
	QueryEnvironment *queryEnv;
	DestReceiver *dest;
	QueryCompletion *qc;
} ZkUtilityArgs;

/*
 * zk_run_utility
 *		Run the statement through the previous hook or
 *		standard_ProcessUtility; after a DISCARD ALL that succeeded, release
 *		every session hold of the backend.
 */
static void
zk_run_utility(void *arg)
{
	ZkUtilityArgs *a = (ZkUtilityArgs *) arg;
	Node	   *parsetree = a->pstmt->utilityStmt;

	if (zk_prev_process_utility)
		zk_prev_process_utility(a->pstmt, a->queryString, a->readOnlyTree,
								a->context, a->params, a->queryEnv, a->dest,
								a->qc);
	else
		standard_ProcessUtility(a->pstmt, a->queryString, a->readOnlyTree,
								a->context, a->params, a->queryEnv, a->dest,
								a->qc);

	if (IsA(parsetree, DiscardStmt) &&
		((DiscardStmt *) parsetree)->target == DISCARD_ALL)
		ZkLockDiscardAll();
}

/*
 * zk_process_utility
 *		Run the statement as a part a lost lock stops (sql/loss_cancel.c),
 *		unless it is transaction control or DISCARD: COMMIT checks its
 *		locks itself, ROLLBACK and DISCARD must stay possible.
 */
static void
zk_process_utility(PlannedStmt *pstmt, const char *queryString,
				   bool readOnlyTree, ProcessUtilityContext context,
				   ParamListInfo params, QueryEnvironment *queryEnv,
				   DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	ZkUtilityArgs a = {pstmt, queryString, readOnlyTree, context, params,
	queryEnv, dest, qc};

	ZkLossRunPart(!IsA(parsetree, TransactionStmt) &&
				  !IsA(parsetree, DiscardStmt),
				  zk_run_utility, &a);
}
