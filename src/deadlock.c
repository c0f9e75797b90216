/*-------------------------------------------------------------------------
 *
 * deadlock.c
 *		Cluster-wide deadlock detection among zklock's waiters: the search
 *		for a cycle of waits, the choice of its one victim, and the report.
 *
 * A backend whose wait has lasted deadlock_timeout publishes what it waits
 * for, a wait record (wait_record.c): the queue nodes it waits with and
 * the nodes that block them, each with the session that owns it.  Nobody
 * can join a queue ahead of a node, so what blocks a waiter only ever
 * shrinks: the list in a record always contains what blocks that waiter
 * now.  The records of all waiting backends make up the wait graph that
 * is searched here: each blocker is an edge to the record of its owner's
 * session.
 *
 * The waiter then looks for a cycle of waits that leads back to itself
 * (ZkDeadlockCheck): from its record to the owners of its blockers, to
 * their records (one read for all owners of a member), to the owners of
 * their blockers, and so on.
 *
 * A session without a record is not waiting in zklock (or is not zklock at
 * all: Curator and kazoo publish nothing), so no cycle goes through it.
 * An any-of wait (see wait_desc.h) is never followed either.
 *
 * Why a reported deadlock is real.  Records are written at different times,
 * and the blockers they list may have gone since, so what the search found
 * may never have existed all at once.  Before declaring a deadlock the
 * victim therefore syncs and reads every edge of the cycle again, in one
 * pipelined pass: each member's record (with the same czxid: the same
 * wait), each waiting node, and each blocking node (with the same owner).
 * Every edge was seen when its record was published; znodes never come
 * back once deleted (their names are unique), so each edge existed
 * throughout the time between its publication and its second read, and as
 * every publication came before the second reads, all edges existed
 * together at one instant.  Such a cycle cannot break by itself: every
 * member waits for a node whose owner waits too.
 *
 * Exactly one victim.  The member whose record has the highest czxid (the
 * last to publish) is the victim, and only it acts.  It is also the member
 * sure to see the whole cycle: every other record existed before it
 * published, and its reads come after its own create.  A member that
 * published earlier finds no cycle (the last record was missing) or finds
 * one whose victim is another, and goes on waiting; the victim's wait ends
 * with ERROR 40P01, which breaks the cycle.
 *
 * The report, as PostgreSQL's DeadLockReport writes it: one DETAIL line
 * per member, each a whole translatable sentence that names the member's
 * process and server, what it waits for, and the process and server that
 * block it; the server log also gets the ZooKeeper nodes of every edge.
 *
 * Cost.  Nothing for waits shorter than deadlock_timeout.  Then one read
 * (the owners of the blockers) and one create (the record), and a search
 * of one read per member, plus one pipelined verification round trip when
 * a cycle is found.
 *
 * Errors, 40P01 included, name no operation: the check runs inside a wait,
 * whose context (operation_context.c) names what the backend waits for.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "pgstat.h"
#include "utils/memutils.h"

#include "deadlock.h"
#include "text_encoding.h"
#include "wait_record.h"
#include "zk_session.h"

/* longest cycle followed (members); longer ones are not reported */
#define ZK_MAX_CYCLE	64

/* One member of a cycle being followed. */
typedef struct ZkCycleMember
{
	const ZkWaitRecord *rec;
	int			blocker;		/* which of its blockers leads on */
} ZkCycleMember;

/* the current check met a lost connection: it is not conclusive */
static bool zk_check_incomplete = false;

static bool zk_search(ZkCycleMember *path, int depth, int64 start,
					  int *cycle_len);
static bool zk_verify_cycle(const ZkCycleMember *cycle, int n);
static const char *zk_member_server(const ZkWaitRecord *rec);
static void zk_report(const ZkCycleMember *cycle, int n)
			pg_attribute_noreturn();

/*
 * zk_search
 *		Depth-first search for a cycle back to 'start'.  path[0 .. depth]
 *		holds the members so far, path[depth].rec filled; on success the
 *		cycle is path[0 .. *cycle_len - 1], each member's blocker index
 *		set to the one owned by the next member.  The records of all the
 *		owners a member leads to are read at once.
 */
static bool
zk_search(ZkCycleMember *path, int depth, int64 start, int *cycle_len)
{
	const ZkWaitRecord *rec = path[depth].rec;
	ZkOp	  **ops;
	bool		found = false;

	if (rec->kind != ZK_WAIT_ALL_OF || depth + 1 >= ZK_MAX_CYCLE ||
		rec->nblockers == 0)
		return false;

	/* back to the start: a cycle */
	for (int i = 0; i < rec->nblockers; i++)
	{
		if (rec->blockers[i].owner == start)
		{
			path[depth].blocker = i;
			*cycle_len = depth + 1;
			return true;
		}
	}

	ops = palloc0(sizeof(ZkOp *) * rec->nblockers);
	for (int i = 0; i < rec->nblockers; i++)
	{
		int64		owner = rec->blockers[i].owner;
		bool		seen = false;

		/* a cycle not through us is for one of its members to find */
		for (int k = 0; k <= depth; k++)
			seen |= (path[k].rec->session == owner);
		for (int k = 0; k < i; k++)
			seen |= (rec->blockers[k].owner == owner);
		if (!seen)
			ops[i] = ZkWaitRecordFetch(owner);
	}
	for (int i = 0; i < rec->nblockers; i++)
	{
		if (ops[i] != NULL)
			ZkOpWait(ops[i]);
	}
	for (int i = 0; i < rec->nblockers && !found; i++)
	{
		ZkWaitRecord *next;

		if (ops[i] == NULL)
			continue;
		if (ops[i]->rc != ZOK)
		{
			if (ZkIsConnectionLoss(ops[i]->rc))
				zk_check_incomplete = true;
			else if (ops[i]->rc != ZNONODE)
				ZkRaiseForRc(ops[i]->rc);
			continue;			/* not waiting, or not zklock */
		}
		next = ZkWaitRecordParse(ops[i], rec->blockers[i].owner);
		if (next == NULL)
			continue;
		path[depth].blocker = i;
		path[depth + 1].rec = next;
		found = zk_search(path, depth + 1, start, cycle_len);
	}
	for (int i = 0; i < rec->nblockers; i++)
		ZkOpFree(ops[i]);
	return found;
}

/*
 * zk_verify_cycle
 *		Read every edge of a candidate cycle again after a sync, in one
 *		pipelined pass (see the file header for why this suffices).
 */
static bool
zk_verify_cycle(const ZkCycleMember *cycle, int n)
{
	ZkOp	   *sync = ZkSync("/");
	ZkOp	  **ops = palloc(sizeof(ZkOp *) * 3 * n);
	bool		holds = true;

	for (int i = 0; i < n; i++)
	{
		const ZkWaitRecordBlocker *b = &cycle[i].rec->blockers[cycle[i].blocker];

		ops[3 * i] = ZkWaitRecordExists(cycle[i].rec->session);
		ops[3 * i + 1] = ZkExists(cycle[i].rec->targets[b->target].node);
		ops[3 * i + 2] = ZkExists(b->node);
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
		zk_check_incomplete = true;
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
 * zk_report
 *		This backend is the victim: count the deadlock and raise 40P01, as
 *		PostgreSQL's DeadLockReport does: for the client one line per
 *		member, each a whole translatable sentence; for the server log the
 *		same lines, then the ZooKeeper nodes of each member's wait.  A
 *		record's modes are exclusive, shared and lease (wait_record.h).
 */
static void
zk_report(const ZkCycleMember *cycle, int n)
{
	StringInfoData clientbuf;
	StringInfoData logbuf;

	initStringInfo(&clientbuf);
	initStringInfo(&logbuf);

	/* what each member waits for, and who blocks it */
	for (int i = 0; i < n; i++)
	{
		const ZkWaitRecord *rec = cycle[i].rec;
		const ZkWaitRecordTarget *t =
			&rec->targets[rec->blockers[cycle[i].blocker].target];
		const ZkWaitRecord *next = cycle[(i + 1) % n].rec;
		const char *server = zk_member_server(rec);
		const char *next_server = zk_member_server(next);
		const char *lock = ZkUtf8ForMessage(t->lock);

		if (i > 0)
			appendStringInfoChar(&clientbuf, '\n');
		/* a server is named by its cluster_name, or host:port */
		if (t->mode == ZK_MODE_LEASE)
			appendStringInfo(&clientbuf,
							 _("Process %d on server \"%s\" waits for a lease of ZooKeeper semaphore \"%s\"; blocked by process %d on server \"%s\"."),
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
		const ZkWaitRecordBlocker *b = &rec->blockers[cycle[i].blocker];

		appendStringInfoChar(&logbuf, '\n');
		appendStringInfo(&logbuf,
						 _("Process %d on server \"%s\" waits with ZooKeeper node \"%s\"; blocked by node \"%s\"."),
						 rec->pid, zk_member_server(rec),
						 ZkUtf8ForMessage(rec->targets[b->target].node),
						 ZkUtf8ForMessage(b->node));
	}

	pgstat_report_deadlock();
	ereport(ERROR,
			(errcode(ERRCODE_T_R_DEADLOCK_DETECTED),
			 errmsg("deadlock detected"),
			 errdetail_internal("%s", clientbuf.data),
			 errdetail_log("%s", logbuf.data)));
}

/*
 * ZkDeadlockCheck
 *		Look for a cycle of waits through this backend's published wait
 *		(ZkDeadlockPublish) and, if this backend is its victim, end the
 *		wait with ERROR 40P01.  Returns otherwise: true when the check was
 *		conclusive, false when a lost connection cut it short (the caller
 *		checks again later; the wait itself rides out the outage).
 *
 * No sync is needed before the search: it reads after our own create, so
 * it sees every record published before ours, which is all that the
 * victim rule needs.
 */
bool
ZkDeadlockCheck(const ZkWaitDesc *wait)
{
	ZkCycleMember path[ZK_MAX_CYCLE];
	int			n = 0;
	int			victim = 0;
	const ZkWaitRecord *self = ZkWaitRecordOwn();
	MemoryContext cxt;
	MemoryContext old;

	if (self == NULL || self->kind != ZK_WAIT_ALL_OF)
		return true;
	zk_check_incomplete = false;

	cxt = AllocSetContextCreate(CurrentMemoryContext, "zklock deadlock check",
								ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(cxt);
	memset(path, 0, sizeof(path));
	path[0].rec = self;

	if (zk_search(path, 0, self->session, &n))
	{
		for (int i = 1; i < n; i++)
		{
			if (path[i].rec->czxid > path[victim].rec->czxid)
				victim = i;
		}
		if (victim == 0 && zk_verify_cycle(path, n))
			zk_report(path, n);
	}

	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return !zk_check_incomplete;
}
