/*-------------------------------------------------------------------------
 *
 * cluster/deadlock.c
 *		Cluster-wide deadlock detection among zklock's waiters: the search
 *		for a cycle of waits, the choice of its one victim, and the report.
 *
 * A backend whose wait has lasted deadlock_timeout publishes what it waits
 * for, a wait record (cluster/wait_record.c): the queue nodes it waits with and
 * the nodes that block them, each with the session that owns it.  Nobody
 * can join a queue ahead of a node, so what blocks a waiter only ever
 * shrinks: the list in a record always contains what blocks that waiter
 * now.  The records of all waiting backends make up the wait graph that
 * is searched here: each blocker is an edge to the record of its owner's
 * session.
 *
 * The waiter then looks for a cycle of waits that leads back to itself
 * (ZkDeadlockCheck), breadth-first: from its record to the owners of its
 * blockers, then to the owners of their blockers, and so on, one level at
 * a time.  Every session met is remembered (a visited set, as
 * FindLockCycleRecurse's visitedProcs in PostgreSQL's lmgr/deadlock.c), so
 * a record is read at most once however many paths lead to it: in a queue
 * of n writers each lists every node ahead of it, and following every path
 * would read 2^n records.  The records of one level are read together, in
 * one pipelined round trip.  Breadth-first order finds a shortest cycle
 * through the waiter, which names the fewest members.
 *
 * A session without a record is not waiting in zklock (or is not zklock at
 * all: Curator and kazoo publish nothing), so no cycle goes through it.
 * An any-of wait (see common/vocabulary.h) is never followed either.
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
 * Cost.  Nothing for waits shorter than deadlock_timeout.  Then, once per
 * wait: one read (the owners of the blockers), one create (the record),
 * and a search that reads the record of each waiting session reachable
 * from ours at most once, in one round trip per level of the search (at
 * most ZK_MAX_CYCLE levels), plus one pipelined verification round trip
 * when a cycle is found.  A waiter behind k others thus costs O(k) reads
 * and requests, and a queue of n waiters O(n^2) in all.
 *
 * Errors, 40P01 included, name no operation: the check runs inside a wait,
 * whose context (common/operation_context.c) names what the backend waits for.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "pgstat.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "cluster/deadlock.h"
#include "common/text_encoding.h"
#include "cluster/wait_record.h"
#include "client/client.h"

/* longest cycle followed (members); longer ones are not reported */
#define ZK_MAX_CYCLE	64

/* One member of a cycle found: its record, and which blocker leads on. */
typedef struct ZkCycleMember
{
	const ZkWaitRecord *rec;
	int			blocker;		/* which of its blockers leads on */
} ZkCycleMember;

/*
 * One waiting session the search has met: the visited set's entry.  It
 * was first reached from member 'parent' (an index into the search's
 * members) through that member's blocker 'blocker'.
 */
typedef struct ZkSearchMember
{
	int64		session;
	const ZkWaitRecord *rec;	/* NULL: no record (not waiting) */
	int			parent;			/* -1 for the searching backend itself */
	int			blocker;
} ZkSearchMember;

/* The visited set: a session, and where it stands in the members. */
typedef struct ZkVisited
{
	int64		session;		/* hash key */
	int			member;
} ZkVisited;

/* The state of one breadth-first search. */
typedef struct ZkSearch
{
	HTAB	   *visited;
	ZkSearchMember *members;	/* every session met, in the order met */
	int			nmembers;
	int			maxmembers;
} ZkSearch;

/* the current check met a lost connection: it is not conclusive */
static bool zk_check_incomplete = false;

static int	zk_search(ZkSearch *s, ZkCycleMember *cycle);
static bool zk_visit(ZkSearch *s, int64 session, int parent, int blocker);
static void zk_read_level(ZkSearch *s, int first, int last);
static int	zk_cycle_to(const ZkSearch *s, int member, int blocker,
						ZkCycleMember *cycle);
static bool zk_verify_cycle(const ZkCycleMember *cycle, int n);
static const char *zk_member_server(const ZkWaitRecord *rec);
static void zk_report(const ZkCycleMember *cycle, int n)
			pg_attribute_noreturn();

/*
 * zk_search
 *		Breadth-first search for a shortest cycle of waits back to the
 *		searching backend, s->members[0].  A level is the members first
 *		met through the blockers of the level before; its records are read
 *		together (zk_read_level).  Returns the cycle's length with its
 *		members in 'cycle' in wait order (each waits for the next, the last
 *		for the first), or 0 if there is none of at most ZK_MAX_CYCLE
 *		members.
 */
static int
zk_search(ZkSearch *s, ZkCycleMember *cycle)
{
	int64		start = s->members[0].session;
	int			first = 0;
	int			last = 1;		/* this level: members[first .. last - 1] */

	for (int depth = 1; depth <= ZK_MAX_CYCLE && first < last; depth++)
	{
		/* a member of this level that waits for the start closes a cycle */
		for (int m = first; m < last; m++)
		{
			const ZkWaitRecord *rec = s->members[m].rec;

			if (rec == NULL || rec->kind != ZK_WAIT_ALL_OF)
				continue;		/* not waiting, or an any-of wait */
			for (int i = 0; i < rec->nblockers; i++)
			{
				if (rec->blockers[i].owner == start)
					return zk_cycle_to(s, m, i, cycle);
			}
		}
		if (depth == ZK_MAX_CYCLE)
			break;

		/* the next level: owners of this level's blockers not met yet */
		for (int m = first; m < last; m++)
		{
			const ZkWaitRecord *rec = s->members[m].rec;

			if (rec == NULL || rec->kind != ZK_WAIT_ALL_OF)
				continue;
			for (int i = 0; i < rec->nblockers; i++)
				(void) zk_visit(s, rec->blockers[i].owner, m, i);
		}
		first = last;
		last = s->nmembers;
		zk_read_level(s, first, last);
	}
	return 0;
}

/*
 * zk_visit
 *		Meet 'session' through blocker 'blocker' of member 'parent': false
 *		if it was met before (its record is read once, whatever leads to
 *		it), else it becomes a member, its record still to be read.
 */
static bool
zk_visit(ZkSearch *s, int64 session, int parent, int blocker)
{
	ZkVisited  *v;
	bool		found;

	v = hash_search(s->visited, &session, HASH_ENTER, &found);
	if (found)
		return false;
	if (s->nmembers == s->maxmembers)
	{
		s->maxmembers *= 2;
		s->members = repalloc(s->members,
							  sizeof(ZkSearchMember) * s->maxmembers);
	}
	v->member = s->nmembers;
	s->members[s->nmembers].session = session;
	s->members[s->nmembers].rec = NULL;
	s->members[s->nmembers].parent = parent;
	s->members[s->nmembers].blocker = blocker;
	s->nmembers++;
	return true;
}

/*
 * zk_read_level
 *		Read the records of members[first .. last - 1], pipelined: one
 *		round trip for the whole level.  A member without a record is not
 *		waiting in zklock (or is not zklock) and leads nowhere.
 */
static void
zk_read_level(ZkSearch *s, int first, int last)
{
	int			n = last - first;
	ZkOp	  **ops;

	if (n <= 0)
		return;
	ops = palloc(sizeof(ZkOp *) * n);
	for (int i = 0; i < n; i++)
		ops[i] = ZkWaitRecordFetch(s->members[first + i].session);
	for (int i = 0; i < n; i++)
		ZkOpWait(ops[i]);
	for (int i = 0; i < n; i++)
	{
		ZkSearchMember *m = &s->members[first + i];

		if (ops[i]->rc == ZOK)
			m->rec = ZkWaitRecordParse(ops[i], m->session);
		else if (ZkIsConnectionLoss(ops[i]->rc))
			zk_check_incomplete = true;
		else if (ops[i]->rc != ZNONODE)
			ZkRaiseForRc(ops[i]->rc);
	}
	for (int i = 0; i < n; i++)
		ZkOpFree(ops[i]);
	pfree(ops);
}

/*
 * zk_cycle_to
 *		The cycle the search closed at blocker 'blocker' of member
 *		'member', which waits for the start: the path from the start to
 *		that member through the members' parents, in wait order.  Returns
 *		its length.
 */
static int
zk_cycle_to(const ZkSearch *s, int member, int blocker, ZkCycleMember *cycle)
{
	int			n = 0;

	/* the path's length: the member's depth, plus one */
	for (int m = member; m >= 0; m = s->members[m].parent)
		n++;
	Assert(n <= ZK_MAX_CYCLE);

	/* fill it from the end: each member's blocker leads to the next */
	for (int m = member, i = n - 1; m >= 0; m = s->members[m].parent, i--)
	{
		cycle[i].rec = s->members[m].rec;
		cycle[i].blocker = blocker;
		blocker = s->members[m].blocker;
	}
	return n;
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
 *		record's modes are exclusive, shared and lease (cluster/wait_record.h).
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
		if (t->mode == ZK_MODE_PERMIT)
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
 *		(ZkWaitRecordPublish) and, if this backend is its victim, end the
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
	ZkCycleMember cycle[ZK_MAX_CYCLE];
	ZkSearch	s;
	HASHCTL		ctl;
	int			n;
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

	ctl.keysize = sizeof(int64);
	ctl.entrysize = sizeof(ZkVisited);
	ctl.hcxt = cxt;
	s.visited = hash_create("zklock deadlock check visited sessions", 64,
							&ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	s.maxmembers = 64;
	s.members = palloc(sizeof(ZkSearchMember) * s.maxmembers);
	s.nmembers = 0;
	(void) zk_visit(&s, self->session, -1, -1);
	s.members[0].rec = self;

	n = zk_search(&s, cycle);
	if (n > 0)
	{
		for (int i = 1; i < n; i++)
		{
			if (cycle[i].rec->czxid > cycle[victim].rec->czxid)
				victim = i;
		}
		if (victim == 0 && zk_verify_cycle(cycle, n))
			zk_report(cycle, n);
	}

	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return !zk_check_incomplete;
}
