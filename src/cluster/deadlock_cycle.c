/*-------------------------------------------------------------------------
 *
 * cluster/deadlock_cycle.c
 *		A cycle of waits that the deadlock search (cluster/deadlock.c)
 *		found: its verification, and the report of the victim's 40P01.
 *
 * Why a reported deadlock is real.  The edges were read at different
 * times, and may have gone since, so what the search found may never have
 * existed all at once.  Before declaring a deadlock the victim therefore
 * syncs and reads every edge of the cycle again, in one pipelined pass:
 * each member's record (with the same czxid: the same wait), each waiting
 * node, and each blocking node (with the same owner).  Whether a node
 * blocks another follows from their names (sequence and mode), which never
 * change; znodes never come back once deleted (their names are unique), so
 * each edge existed throughout the time between its first read and its
 * second, and as every first read came before the second reads, all edges
 * existed together at one instant.  Such a cycle cannot break by itself:
 * every member waits for a node whose owner waits too.
 *
 * The report, as PostgreSQL's DeadLockReport writes it: one DETAIL line
 * per member, each a whole translatable sentence that names the member's
 * process and server, what it waits for, and the process and server that
 * block it; the server log also gets the ZooKeeper nodes of every edge.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "pgstat.h"

#include "cluster/deadlock_cycle.h"
#include "base/text_encoding.h"
#include "client/client.h"

static const char *zk_member_server(const ZkWaitRecord *rec);

/*
 * ZkDeadlockVerifyCycle
 *		Read every edge of a candidate cycle again after a sync, in one
 *		pipelined pass (see the file header for why this suffices).  A lost
 *		connection sets *incomplete: the check was not conclusive.
 */
bool
ZkDeadlockVerifyCycle(const ZkCycleMember *cycle, int n, bool *incomplete)
{
	ZkOp	   *sync = ZkSync("/");
	ZkOp	  **ops = palloc(sizeof(ZkOp *) * 3 * n);
	bool		holds = true;

	for (int i = 0; i < n; i++)
	{
		ops[3 * i] = ZkWaitRecordExists(cycle[i].rec->session);
		ops[3 * i + 1] = ZkExists(cycle[i].rec->targets[cycle[i].target].node);
		ops[3 * i + 2] = ZkExists(cycle[i].blocker);
	}
	ZkOpWait(sync);
	for (int i = 0; i < 3 * n; i++)
	{
		ZkOpWait(ops[i]);
		if (ZkIsConnectionLoss(ops[i]->rc))
			holds = false;
	}
	if (ZkIsConnectionLoss(sync->rc))
	{
		holds = false;
		*incomplete = true;
	}
	else if (sync->rc != ZOK)
		ZkRaiseForRc(sync->rc);
	for (int i = 0; i < n; i++)
	{
		ZkOp	   *rec = ops[3 * i];
		ZkOp	   *waiting = ops[3 * i + 1];
		ZkOp	   *blocker = ops[3 * i + 2];
		int64		next = cycle[(i + 1) % n].rec->session;

		if (rec->rc != ZOK || rec->stat.czxid != cycle[i].rec->czxid ||
			waiting->rc != ZOK || blocker->rc != ZOK ||
			blocker->stat.ephemeralOwner != next)
			holds = false;
	}
	ZkOpFree(sync);
	for (int i = 0; i < 3 * n; i++)
		ZkOpFree(ops[i]);
	return holds;
}

/*
 * zk_member_server
 *		A member's server as the report names it: its cluster_name, or
 *		host:port when it has none.
 */
static const char *
zk_member_server(const ZkWaitRecord *rec)
{
	if (rec->cluster_name != NULL && rec->cluster_name[0] != '\0')
		return ZkUtf8ForMessage(rec->cluster_name);
	return psprintf("%s:%d",
					rec->host ? ZkUtf8ForMessage(rec->host) : "?", rec->port);
}

/*
 * ZkDeadlockReport
 *		This backend is the victim: count the deadlock and raise 40P01, as
 *		PostgreSQL's DeadLockReport does: for the client one line per
 *		member, each a whole translatable sentence; for the server log the
 *		same lines, then the ZooKeeper nodes of each member's wait.  A
 *		record's modes are exclusive, shared and lease (cluster/wait_record.h).
 */
void
ZkDeadlockReport(const ZkCycleMember *cycle, int n)
{
	StringInfoData clientbuf;
	StringInfoData logbuf;

	initStringInfo(&clientbuf);
	initStringInfo(&logbuf);

	/* what each member waits for, and who blocks it */
	for (int i = 0; i < n; i++)
	{
		const ZkWaitRecord *rec = cycle[i].rec;
		const ZkWaitRecordTarget *t = &rec->targets[cycle[i].target];
		const ZkWaitRecord *next = cycle[(i + 1) % n].rec;
		const char *server = zk_member_server(rec);
		const char *next_server = zk_member_server(next);
		const char *lock = ZkUtf8ForMessage(t->lock);

		if (i > 0)
			appendStringInfoChar(&clientbuf, '\n');
		/* a server is named by its cluster_name, or host:port */
		if (t->mode == ZK_MODE_PERMIT)
			appendStringInfo(&clientbuf,
							 _("Process %d on server \"%s\" waits for a permit of ZooKeeper semaphore \"%s\"; blocked by process %d on server \"%s\"."),
							 rec->pid, server, lock, next->pid, next_server);
		else if (t->mode == ZK_MODE_SHARED)
			appendStringInfo(&clientbuf,
							 _("Process %d on server \"%s\" waits for shared ZooKeeper lock \"%s\"; blocked by process %d on server \"%s\"."),
							 rec->pid, server, lock, next->pid, next_server);
		else
			appendStringInfo(&clientbuf,
							 _("Process %d on server \"%s\" waits for exclusive ZooKeeper lock \"%s\"; blocked by process %d on server \"%s\"."),
							 rec->pid, server, lock, next->pid, next_server);
	}

	/* the same for the server log, and the nodes of each member's wait */
	appendBinaryStringInfo(&logbuf, clientbuf.data, clientbuf.len);
	for (int i = 0; i < n; i++)
	{
		const ZkWaitRecord *rec = cycle[i].rec;

		appendStringInfoChar(&logbuf, '\n');
		appendStringInfo(&logbuf,
						 _("Process %d on server \"%s\" waits with ZooKeeper node \"%s\"; blocked by node \"%s\"."),
						 rec->pid, zk_member_server(rec),
						 ZkUtf8ForMessage(rec->targets[cycle[i].target].node),
						 ZkUtf8ForMessage(cycle[i].blocker));
	}

	pgstat_report_deadlock();
	ereport(ERROR,
			(errcode(ERRCODE_T_R_DEADLOCK_DETECTED),
			 errmsg("deadlock detected"),
			 errdetail_internal("%s", clientbuf.data),
			 errdetail_log("%s", logbuf.data)));
}
