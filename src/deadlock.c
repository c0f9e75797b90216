/*-------------------------------------------------------------------------
 *
 * deadlock.c
 *		Cluster-wide deadlock detection among zklock's waiters.
 *
 * A backend whose wait has lasted deadlock_timeout publishes what it waits
 * for: an ephemeral record <zklock.root>.waits/<session id>, outside the
 * lock tree (no lock path can collide with it), that vanishes with its
 * session and is withdrawn when the wait ends.  It then looks for a cycle
 * of waits that leads back to itself (ZkDeadlockCheck):
 *
 *	a waiting session --its record--> the queue nodes it waits with
 *	  --the queue--> the nodes that block them (for a writer every node
 *	  ahead, for a reader every writer ahead)
 *	  --ephemeralOwner--> the sessions owning those nodes
 *	  --their records--> what they wait for, and so on.
 *
 * A session without a record is not waiting in zklock (or is not zklock at
 * all: Curator and kazoo publish nothing), so no cycle goes through it.
 * An any-of wait (see wait_desc.h) is never followed either.
 *
 * Why a reported deadlock is real.  The search reads the cluster piece by
 * piece, so what it found may never have existed all at once.  Before
 * declaring a deadlock the victim therefore syncs and reads every edge of
 * the cycle again, in one pipelined pass: each member's record (with the
 * same czxid: the same wait), each waiting node, and each blocking node
 * (with the same owner).  Znodes never come back once deleted, and a
 * session reads ZooKeeper's state in order, so each edge existed
 * throughout the time between its two reads; as every first read came
 * before every second one, all edges existed together at one instant.
 * Such a cycle cannot break by itself: every member waits for a node whose
 * owner waits too.
 *
 * Exactly one victim.  The member whose record has the highest czxid (the
 * last to publish) is the victim, and only it acts.  It is also the member
 * sure to see the whole cycle: every other record existed before it
 * published, and its reads come after its own create.  A member that
 * published earlier finds no cycle (the last record was missing) or finds
 * one whose victim is another, and goes on waiting; the victim's wait ends
 * with ERROR 40P01, which breaks the cycle.
 *
 * Cost.  Nothing for waits shorter than deadlock_timeout.  Then one create
 * (the record) and a search of about three reads per member, plus one
 * pipelined verification round trip when a cycle is found.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/jsonapi.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/memutils.h"

#include "contender.h"
#include "deadlock.h"
#include "node_data.h"
#include "zk_session.h"

/* longest cycle followed (members); longer ones are not reported */
#define ZK_MAX_CYCLE	64

#define WHAT_CHECK		"checking for a deadlock on lock"

/* One wait target as a record describes it. */
typedef struct ZkRecordTarget
{
	char	   *lock;			/* lock path */
	char	   *node;			/* queue node, full path */
	ZkLockMode	mode;
} ZkRecordTarget;

/* A published record, read back. */
typedef struct ZkRecord
{
	int64		session;
	int64		czxid;			/* of the record node: publication order */
	ZkWaitKind	kind;
	char	   *cluster_name;
	char	   *host;
	int32		port;
	int32		pid;
	int			ntargets;
	ZkRecordTarget *targets;
} ZkRecord;

/* One member of a cycle being followed. */
typedef struct ZkMember
{
	ZkRecord   *rec;
	int			target;			/* which of its targets is blocked */
	char	   *blocker;		/* the node blocking it, full path */
	int64		blocker_czxid;
} ZkMember;

/* parsing state for a record (common/jsonapi.h semantic actions) */
typedef struct ZkRecordParse
{
	ZkRecord   *rec;
	char	   *field;			/* current field of the top-level object */
	int			depth;			/* object/array nesting */
	List	   *locks;
	List	   *nodes;
	List	   *modes;
} ZkRecordParse;

/* this backend's published record, if any */
static char *zk_record_path = NULL;		/* TopMemoryContext */

static char *zk_waits_parent(void);
static char *zk_record_path_of(int64 session);
static char *zk_build_record(const ZkWaitDesc *wait);
static ZkRecord *zk_parse_record(const char *data, int len, int64 session,
								 int64 czxid);
static void zk_rec_object_start(void *state);
static void zk_rec_object_end(void *state);
static void zk_rec_array_start(void *state);
static void zk_rec_array_end(void *state);
static void zk_rec_field_start(void *state, char *fname, bool isnull);
static void zk_rec_scalar(void *state, char *token,
										JsonTokenType tokentype);
static ZkRecord *zk_read_record(int64 session, const char *lock_path);
static int	zk_blockers(const ZkRecord *rec, int t, const char *lock_path,
						char ***blockers);
static bool zk_search(ZkMember *path, int depth, int64 start,
					  const char *lock_path, int *cycle_len);
static bool zk_verify_cycle(ZkMember *cycle, int n, const char *lock_path);
static char *zk_member_server(const ZkRecord *rec);
static void zk_report(ZkMember *cycle, int n) pg_attribute_noreturn();

/*
 * zk_waits_parent
 *		Where records live: beside the lock tree, never inside it.
 */
static char *
zk_waits_parent(void)
{
	return psprintf("%s.waits", zklock_root);
}

static char *
zk_record_path_of(int64 session)
{
	return psprintf("%s.waits/%016llx", zklock_root, (unsigned long long) session);
}

/*
 * zk_build_record
 *		The record's data: the owner (as in queue node data), the kind of
 *		wait and its targets, as one JSON object.
 */
static char *
zk_build_record(const ZkWaitDesc *wait)
{
	StringInfoData buf;
	int			olen;
	char	   *owner = ZkBuildNodeData(wait->targets[0].mode, ZK_SCOPE_SESSION,
										&olen);

	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"owner\":");
	appendBinaryStringInfo(&buf, owner, olen);
	appendStringInfo(&buf, ",\"kind\":\"%s\",\"locks\":[",
					 wait->kind == ZK_WAIT_ALL_OF ? "all" : "any");
	for (int i = 0; i < wait->ntargets; i++)
	{
		if (i > 0)
			appendStringInfoChar(&buf, ',');
		escape_json(&buf, wait->targets[i].lock_path);
	}
	appendStringInfoString(&buf, "],\"nodes\":[");
	for (int i = 0; i < wait->ntargets; i++)
	{
		if (i > 0)
			appendStringInfoChar(&buf, ',');
		escape_json(&buf, wait->targets[i].znode);
	}
	appendStringInfoString(&buf, "],\"modes\":[");
	for (int i = 0; i < wait->ntargets; i++)
	{
		if (i > 0)
			appendStringInfoChar(&buf, ',');
		escape_json(&buf, ZkLockModeName(wait->targets[i].mode));
	}
	appendStringInfoString(&buf, "]}");
	pfree(owner);
	return buf.data;
}

/* ---- reading a record with common/jsonapi.h ---- */

static void
zk_rec_object_start(void *state)
{
	((ZkRecordParse *) state)->depth++;
}

static void
zk_rec_object_end(void *state)
{
	((ZkRecordParse *) state)->depth--;
}

static void
zk_rec_array_start(void *state)
{
	((ZkRecordParse *) state)->depth++;
}

static void
zk_rec_array_end(void *state)
{
	((ZkRecordParse *) state)->depth--;
}

static void
zk_rec_field_start(void *state, char *fname, bool isnull)
{
	ZkRecordParse *p = (ZkRecordParse *) state;

	/* top-level fields, and the owner's (depth 2, inside "owner") */
	if (p->depth == 1 || p->depth == 2)
		p->field = fname;
}

/*
 * zk_rec_scalar
 *		Keep the values we know: the owner's identity, the kind, and the
 *		three parallel arrays of targets.
 */
static void
zk_rec_scalar(void *state, char *token, JsonTokenType tokentype)
{
	ZkRecordParse *p = (ZkRecordParse *) state;
	ZkRecord   *rec = p->rec;
	const char *f = p->field;

	if (f == NULL)
		return;
	if (p->depth == 2 && tokentype == JSON_TOKEN_STRING)
	{
		/* inside "owner", or an element of an array */
		if (strcmp(f, "cluster_name") == 0)
			rec->cluster_name = token;
		else if (strcmp(f, "host") == 0)
			rec->host = token;
		else if (strcmp(f, "locks") == 0)
			p->locks = lappend(p->locks, token);
		else if (strcmp(f, "nodes") == 0)
			p->nodes = lappend(p->nodes, token);
		else if (strcmp(f, "modes") == 0)
			p->modes = lappend(p->modes, token);
	}
	else if (p->depth == 2 && tokentype == JSON_TOKEN_NUMBER)
	{
		if (strcmp(f, "port") == 0)
			rec->port = (int32) strtol(token, NULL, 10);
		else if (strcmp(f, "pid") == 0)
			rec->pid = (int32) strtol(token, NULL, 10);
	}
	else if (p->depth == 1 && strcmp(f, "kind") == 0 &&
			 tokentype == JSON_TOKEN_STRING)
		rec->kind = strcmp(token, "all") == 0 ? ZK_WAIT_ALL_OF : ZK_WAIT_ANY_OF;
}

/*
 * zk_parse_record
 *		Read a record's data; NULL if it is not one (malformed data, from
 *		whatever wrote it, is never an error: it is not a wait we can use).
 */
static ZkRecord *
zk_parse_record(const char *data, int len, int64 session, int64 czxid)
{
	ZkRecord   *rec = palloc0(sizeof(ZkRecord));
	ZkRecordParse p = {0};
	JsonSemAction sem = {0};
	JsonLexContext *lex;
	ListCell   *a,
			   *b,
			   *c;
	int			i = 0;

	if (data == NULL || len <= 0)
		return NULL;
	rec->session = session;
	rec->czxid = czxid;
	rec->kind = ZK_WAIT_ANY_OF; /* unless it says "all" */
	rec->port = -1;
	rec->pid = -1;
	p.rec = rec;
	sem.semstate = &p;
	sem.object_start = zk_rec_object_start;
	sem.object_end = zk_rec_object_end;
	sem.array_start = zk_rec_array_start;
	sem.array_end = zk_rec_array_end;
	sem.object_field_start = zk_rec_field_start;
	sem.scalar = zk_rec_scalar;
	lex = makeJsonLexContextCstringLen(pnstrdup(data, len), len,
									   GetDatabaseEncoding(), true);
	if (pg_parse_json(lex, &sem) != JSON_SUCCESS)
		return NULL;
	if (list_length(p.locks) == 0 ||
		list_length(p.locks) != list_length(p.nodes) ||
		list_length(p.locks) != list_length(p.modes))
		return NULL;
	rec->ntargets = list_length(p.locks);
	rec->targets = palloc(sizeof(ZkRecordTarget) * rec->ntargets);
	forthree(a, p.locks, b, p.nodes, c, p.modes)
	{
		rec->targets[i].lock = lfirst(a);
		rec->targets[i].node = lfirst(b);
		rec->targets[i].mode = strcmp(lfirst(c), "shared") == 0 ?
			ZK_MODE_SHARED : ZK_MODE_EXCLUSIVE;
		i++;
	}
	return rec;
}

/*
 * ZkDeadlockPublish
 *		Publish this backend's wait (see the file header).  Replaces a
 *		record of ours left from an earlier wait.  Returns the record's
 *		czxid.
 */
int64
ZkDeadlockPublish(const ZkWaitDesc *wait)
{
	ZkSessionStatus st;
	char	   *path;
	char	   *data;
	int64		czxid = 0;
	const char *lock_path = wait->targets[0].lock_path;

	ZkSessionGetStatus(&st);
	path = zk_record_path_of(st.session_id);
	data = zk_build_record(wait);

	for (;;)
	{
		ZkOp	   *op;
		int			rc;

		CHECK_FOR_INTERRUPTS();
		op = ZkCreate(path, data, (int) strlen(data), ZOO_EPHEMERAL, true);
		ZkOpWait(op, WHAT_CHECK, lock_path);
		rc = op->rc;
		czxid = op->stat.czxid;
		ZkOpFree(op);
		if (rc == ZOK)
			break;
		if (rc == ZNONODE)
		{
			char	   *parent = zk_waits_parent();

			op = ZkCreate(parent, "", 0, ZOO_CONTAINER, true);
			ZkOpWait(op, WHAT_CHECK, lock_path);
			rc = op->rc;
			ZkOpFree(op);
			pfree(parent);
			if (rc != ZOK && rc != ZNODEEXISTS && !ZkIsConnectionLoss(rc))
				ZkRaiseForRc(rc, WHAT_CHECK, lock_path);
		}
		else if (rc == ZNODEEXISTS)
		{
			/* ours, from an earlier wait or a create whose answer was lost */
			op = ZkDeleteNodes((const char *const *) &path, 1, true);
			(void) ZkOpWaitQuiet(op, zklock_connect_timeout,
								 ZK_WAIT_INTERRUPTIBLE);
			ZkOpFree(op);
		}
		else if (ZkIsConnectionLoss(rc))
			ZkWaitConnected(WHAT_CHECK, lock_path);
		else
			ZkRaiseForRc(rc, WHAT_CHECK, lock_path);
	}

	if (zk_record_path != NULL)
		pfree(zk_record_path);
	zk_record_path = MemoryContextStrdup(TopMemoryContext, path);
	pfree(path);
	pfree(data);
	return czxid;
}

/*
 * ZkDeadlockWithdraw
 *		The wait ended: delete our record, in the background.  Never raises
 *		an ERROR (it runs when a wait ends in an ERROR too).
 */
void
ZkDeadlockWithdraw(void)
{
	if (zk_record_path == NULL)
		return;
	ZkDeleteInBackground(zk_record_path);
	pfree(zk_record_path);
	zk_record_path = NULL;
}

/*
 * zk_read_record
 *		The record of a session, or NULL if it publishes none (not waiting,
 *		or not a zklock backend).
 */
static ZkRecord *
zk_read_record(int64 session, const char *lock_path)
{
	char	   *path = zk_record_path_of(session);
	ZkOp	   *op = ZkGetData(path, ZK_NO_WATCH);
	ZkRecord   *rec = NULL;

	ZkOpWait(op, WHAT_CHECK, lock_path);
	if (op->rc == ZOK)
		rec = zk_parse_record(op->value, op->value_len, session,
							  op->stat.czxid);
	else if (op->rc != ZNONODE)
		ZkRaiseForRc(op->rc, WHAT_CHECK, lock_path);
	ZkOpFree(op);
	pfree(path);
	return rec;
}

/*
 * zk_blockers
 *		The nodes that block target t of a record, as full paths: for a
 *		writer every contender ahead of its node, for a reader every writer
 *		ahead.  None when the node is gone (that wait ended).
 */
static int
zk_blockers(const ZkRecord *rec, int t, const char *lock_path,
			char ***blockers)
{
	const char *node = rec->targets[t].node;
	const char *slash = strrchr(node, '/');
	char	   *parent;
	ZkOp	   *op;
	char	  **names;
	ZkContender *queue;
	int			n;
	int			me;
	int			nb = 0;

	*blockers = NULL;
	if (slash == NULL || slash == node)
		return 0;
	parent = pnstrdup(node, slash - node);
	op = ZkGetChildren(parent);
	ZkOpWait(op, WHAT_CHECK, lock_path);
	if (op->rc == ZNONODE)
	{
		ZkOpFree(op);
		return 0;
	}
	if (op->rc != ZOK)
		ZkRaiseForRc(op->rc, WHAT_CHECK, lock_path);
	names = palloc(sizeof(char *) * Max(op->nchildren, 1));
	queue = palloc(sizeof(ZkContender) * Max(op->nchildren, 1));
	for (int i = 0; i < op->nchildren; i++)
		names[i] = pstrdup(op->children[i]);
	n = ZkSortContenders(names, op->nchildren, queue);
	ZkOpFree(op);

	me = ZkFindContender(queue, n, slash + 1);
	if (me <= 0)
		return 0;
	*blockers = palloc(sizeof(char *) * me);
	for (int i = 0; i < me; i++)
	{
		if (rec->targets[t].mode == ZK_MODE_EXCLUSIVE ||
			queue[i].mode == ZK_MODE_EXCLUSIVE)
			(*blockers)[nb++] = psprintf("%s/%s", parent, queue[i].name);
	}
	return nb;
}

/*
 * zk_search
 *		Depth-first search for a cycle back to 'start'.  path[0 .. depth]
 *		holds the members so far, path[depth].rec filled; on success the
 *		cycle is path[0 .. *cycle_len - 1], each member's target and
 *		blocker filled.
 */
static bool
zk_search(ZkMember *path, int depth, int64 start, const char *lock_path,
		  int *cycle_len)
{
	ZkRecord   *rec = path[depth].rec;

	if (rec->kind != ZK_WAIT_ALL_OF || depth + 1 >= ZK_MAX_CYCLE)
		return false;

	for (int t = 0; t < rec->ntargets; t++)
	{
		char	  **blockers;
		int			nb = zk_blockers(rec, t, lock_path, &blockers);
		ZkOp	  **ops;

		if (nb == 0)
			continue;
		/* the owners of the blockers, pipelined */
		ops = palloc(sizeof(ZkOp *) * nb);
		for (int i = 0; i < nb; i++)
			ops[i] = ZkExists(blockers[i]);
		for (int i = 0; i < nb; i++)
			ZkOpWait(ops[i], WHAT_CHECK, lock_path);

		for (int i = 0; i < nb; i++)
		{
			int64		owner = ops[i]->stat.ephemeralOwner;
			bool		seen = false;
			ZkRecord   *next;

			if (ops[i]->rc != ZOK || owner == 0 || owner == rec->session)
				continue;
			path[depth].target = t;
			path[depth].blocker = blockers[i];
			path[depth].blocker_czxid = ops[i]->stat.czxid;
			if (owner == start)
			{
				*cycle_len = depth + 1;
				for (int k = 0; k < nb; k++)
					ZkOpFree(ops[k]);
				return true;
			}
			for (int k = 0; k <= depth; k++)
				seen |= (path[k].rec->session == owner);
			if (seen)
				continue;		/* a cycle not through us: its own member
								 * will find it */
			next = zk_read_record(owner, lock_path);
			if (next == NULL)
				continue;
			path[depth + 1].rec = next;
			if (zk_search(path, depth + 1, start, lock_path, cycle_len))
			{
				for (int k = 0; k < nb; k++)
					ZkOpFree(ops[k]);
				return true;
			}
		}
		for (int i = 0; i < nb; i++)
			ZkOpFree(ops[i]);
	}
	return false;
}

/*
 * zk_verify_cycle
 *		Read every edge of a candidate cycle again after a sync, in one
 *		pipelined pass (see the file header for why this suffices).
 */
static bool
zk_verify_cycle(ZkMember *cycle, int n, const char *lock_path)
{
	ZkOp	   *sync = ZkSync("/");
	ZkOp	  **ops = palloc(sizeof(ZkOp *) * 3 * n);
	bool		holds = true;

	for (int i = 0; i < n; i++)
	{
		char	   *record = zk_record_path_of(cycle[i].rec->session);

		ops[3 * i] = ZkExists(record);
		ops[3 * i + 1] = ZkExists(cycle[i].rec->targets[cycle[i].target].node);
		ops[3 * i + 2] = ZkExists(cycle[i].blocker);
		pfree(record);
	}
	ZkOpWait(sync, WHAT_CHECK, lock_path);
	for (int i = 0; i < 3 * n; i++)
		ZkOpWait(ops[i], WHAT_CHECK, lock_path);
	if (sync->rc != ZOK)
		ZkRaiseForRc(sync->rc, WHAT_CHECK, lock_path);
	for (int i = 0; i < n; i++)
	{
		ZkOp	   *rec = ops[3 * i];
		ZkOp	   *waiting = ops[3 * i + 1];
		ZkOp	   *blocker = ops[3 * i + 2];
		int64		next = cycle[(i + 1) % n].rec->session;

		if (rec->rc != ZOK || rec->stat.czxid != cycle[i].rec->czxid ||
			waiting->rc != ZOK ||
			blocker->rc != ZOK || blocker->stat.czxid != cycle[i].blocker_czxid ||
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
 *		A member's server, as the report names it: its cluster_name, or
 *		host:port.
 */
static char *
zk_member_server(const ZkRecord *rec)
{
	if (rec->cluster_name != NULL && rec->cluster_name[0] != '\0')
		return psprintf("server \"%s\"", rec->cluster_name);
	return psprintf("server %s:%d", rec->host ? rec->host : "?", rec->port);
}

/*
 * zk_report
 *		This backend is the victim: count the deadlock and raise 40P01 with
 *		one line per member, as PostgreSQL's DeadLockReport does.
 */
static void
zk_report(ZkMember *cycle, int n)
{
	StringInfoData detail;

	initStringInfo(&detail);
	for (int i = 0; i < n; i++)
	{
		const ZkRecord *rec = cycle[i].rec;
		const ZkRecordTarget *t = &rec->targets[cycle[i].target];
		const ZkRecord *next = cycle[(i + 1) % n].rec;

		if (i > 0)
			appendStringInfoChar(&detail, '\n');
		appendStringInfo(&detail,
						 "Process %d on %s waits for %s ZooKeeper lock \"%s\"; blocked by process %d on %s.",
						 rec->pid, zk_member_server(rec),
						 ZkLockModeName(t->mode), t->lock,
						 next->pid, zk_member_server(next));
	}
	pgstat_report_deadlock();
	ereport(ERROR,
			(errcode(ERRCODE_T_R_DEADLOCK_DETECTED),
			 errmsg("deadlock detected"),
			 errdetail_internal("%s", detail.data)));
}

/*
 * ZkDeadlockCheck
 *		Look for a cycle of waits through this backend's published wait
 *		(own_czxid: its record's czxid) and, if this backend is its
 *		victim, end the wait with ERROR 40P01.  Returns otherwise.
 */
void
ZkDeadlockCheck(const ZkWaitDesc *wait, int64 own_czxid)
{
	ZkSessionStatus st;
	ZkMember	path[ZK_MAX_CYCLE];
	ZkRecord	self = {0};
	ZkRecordTarget *targets;
	int			n = 0;
	int			victim = 0;
	const char *lock_path = wait->targets[0].lock_path;
	MemoryContext cxt;
	MemoryContext old;

	if (wait->kind != ZK_WAIT_ALL_OF)
		return;

	cxt = AllocSetContextCreate(CurrentMemoryContext, "zklock deadlock check",
								ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(cxt);

	ZkSessionGetStatus(&st);
	targets = palloc(sizeof(ZkRecordTarget) * wait->ntargets);
	for (int i = 0; i < wait->ntargets; i++)
	{
		targets[i].lock = (char *) wait->targets[i].lock_path;
		targets[i].node = (char *) wait->targets[i].znode;
		targets[i].mode = wait->targets[i].mode;
	}
	self.session = st.session_id;
	self.czxid = own_czxid;
	self.kind = ZK_WAIT_ALL_OF;
	self.cluster_name = cluster_name;
	self.pid = MyProcPid;
	self.ntargets = wait->ntargets;
	self.targets = targets;
	memset(path, 0, sizeof(path));
	path[0].rec = &self;

	/* reads after a sync see at least what the leader had committed */
	{
		ZkOp	   *sync = ZkSync("/");

		ZkOpWait(sync, WHAT_CHECK, lock_path);
		if (sync->rc != ZOK)
			ZkRaiseForRc(sync->rc, WHAT_CHECK, lock_path);
		ZkOpFree(sync);
	}

	if (zk_search(path, 0, self.session, lock_path, &n))
	{
		/* our own host and port, as the others see them, for the report */
		ZkRecord   *published = zk_read_record(self.session, lock_path);

		if (published != NULL)
		{
			self.host = published->host;
			self.port = published->port;
			self.cluster_name = published->cluster_name;
		}
		for (int i = 1; i < n; i++)
		{
			if (path[i].rec->czxid > path[victim].rec->czxid)
				victim = i;
		}
		if (victim == 0 && zk_verify_cycle(path, n, lock_path))
			zk_report(path, n);
	}

	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}
