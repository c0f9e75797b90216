/*-------------------------------------------------------------------------
 *
 * deadlock.c
 *		Cluster-wide deadlock detection among zklock's waiters.
 *
 * A backend whose wait has lasted deadlock_timeout publishes what it waits
 * for: an ephemeral record <zklock.root>.waits/<session id>, outside the
 * lock tree (no lock path can collide with it), that vanishes with its
 * session and is withdrawn when the wait ends.  The record names the queue
 * nodes it waits with and the nodes that block them (for a writer every
 * node ahead, for a reader every writer ahead), each with the session that
 * owns it (its ephemeralOwner, read when publishing).  Nobody can join a
 * queue ahead of a node, so what blocks a waiter only ever shrinks: the
 * list in a record always contains what blocks that waiter now.
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
 * Cost.  Nothing for waits shorter than deadlock_timeout.  Then one read
 * (the owners of the blockers) and one create (the record), and a search
 * of one read per member, plus one pipelined verification round trip when
 * a cycle is found.
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
#include "text_encoding.h"
#include "zk_session.h"

/* longest cycle followed (members); longer ones are not reported */
#define ZK_MAX_CYCLE	64

/* errors name the operation as the wait's own errors do */
#define WHAT_CHECK		"waiting for lock"

/* One wait target as a record describes it. */
typedef struct ZkRecordTarget
{
	char	   *lock;			/* lock path */
	char	   *node;			/* queue node, full path */
	ZkLockMode	mode;
} ZkRecordTarget;

/* One node that blocked a target when the record was published. */
typedef struct ZkRecordBlocker
{
	int			target;			/* index into targets */
	char	   *node;			/* full path */
	int64		owner;			/* session owning it */
} ZkRecordBlocker;

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
	int			nblockers;
	ZkRecordBlocker *blockers;
} ZkRecord;

/* One member of a cycle being followed. */
typedef struct ZkMember
{
	ZkRecord   *rec;
	int			blocker;		/* which of its blockers leads on */
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
	List	   *blockers;
	List	   *owners;
	List	   *btargets;
} ZkRecordParse;

/* the current check met a lost connection: it is not conclusive */
static bool zk_check_incomplete = false;

/* this backend's published wait, as a record, for the search */
static ZkRecord *zk_self = NULL;	/* in zk_self_cxt */
static MemoryContext zk_self_cxt = NULL;

/* this backend's published record, if any */
static char *zk_record_path = NULL;		/* TopMemoryContext */

static char *zk_waits_parent(void);
static char *zk_record_path_of(int64 session);
static char *zk_build_record(const ZkWaitDesc *wait, ZkRecordBlocker *b,
							 int nb);
static ZkRecord *zk_parse_record(const char *data, int len, int64 session,
								 int64 czxid);
static void zk_rec_object_start(void *state);
static void zk_rec_object_end(void *state);
static void zk_rec_array_start(void *state);
static void zk_rec_array_end(void *state);
static void zk_rec_field_start(void *state, char *fname, bool isnull);
static void zk_rec_scalar(void *state, char *token,
										JsonTokenType tokentype);
static int	zk_find_blockers(const ZkWaitDesc *wait, int64 self,
							 ZkRecordBlocker **out);
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
zk_build_record(const ZkWaitDesc *wait, ZkRecordBlocker *b, int nb)
{
	StringInfoData buf;
	int			olen;
	char	   *owner = ZkBuildNodeData(wait->targets[0].mode, ZK_SCOPE_SESSION, -1,
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
	appendStringInfoString(&buf, "],\"blockers\":[");
	for (int i = 0; i < nb; i++)
	{
		if (i > 0)
			appendStringInfoChar(&buf, ',');
		escape_json(&buf, b[i].node);
	}
	appendStringInfoString(&buf, "],\"owners\":[");
	for (int i = 0; i < nb; i++)
		appendStringInfo(&buf, "%s\"%016llx\"", i > 0 ? "," : "",
						 (unsigned long long) b[i].owner);
	appendStringInfoString(&buf, "],\"blocker_targets\":[");
	for (int i = 0; i < nb; i++)
		appendStringInfo(&buf, "%s%d", i > 0 ? "," : "", b[i].target);
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
		else if (strcmp(f, "blockers") == 0)
			p->blockers = lappend(p->blockers, token);
		else if (strcmp(f, "owners") == 0)
			p->owners = lappend(p->owners, token);
	}
	else if (p->depth == 2 && tokentype == JSON_TOKEN_NUMBER)
	{
		if (strcmp(f, "port") == 0)
			rec->port = (int32) strtol(token, NULL, 10);
		else if (strcmp(f, "pid") == 0)
			rec->pid = (int32) strtol(token, NULL, 10);
		else if (strcmp(f, "blocker_targets") == 0)
			p->btargets = lappend_int(p->btargets,
									  (int) strtol(token, NULL, 10));
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
									   PG_UTF8, true);
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
		rec->targets[i].mode =
			strcmp(lfirst(c), "shared") == 0 ? ZK_MODE_SHARED :
			strcmp(lfirst(c), "lease") == 0 ? ZK_MODE_LEASE :
			ZK_MODE_EXCLUSIVE;
		i++;
	}
	if (list_length(p.blockers) != list_length(p.owners) ||
		list_length(p.blockers) != list_length(p.btargets))
		return NULL;
	rec->nblockers = list_length(p.blockers);
	rec->blockers = palloc(sizeof(ZkRecordBlocker) * Max(rec->nblockers, 1));
	i = 0;
	forthree(a, p.blockers, b, p.owners, c, p.btargets)
	{
		int			t = lfirst_int(c);

		if (t < 0 || t >= rec->ntargets)
			return NULL;
		rec->blockers[i].node = lfirst(a);
		rec->blockers[i].owner = (int64) strtoull(lfirst(b), NULL, 16);
		rec->blockers[i].target = t;
		i++;
	}
	return rec;
}

/*
 * zk_find_blockers
 *		The owners of the nodes ahead of each target that still exist (one
 *		pipelined round trip), leaving out our own nodes.  *out is palloc'd;
 *		returns how many, or -1 if the connection was lost meanwhile.
 *
 * A lease's node (lease_lock.c) is persistent and belongs to no session.
 * While its lease waits, though, it has an ephemeral child of its taker's
 * session, and that taker waits: the edge leads to the taker, through the
 * child, which stands for the node in the record (so that verifying the
 * edge checks the child, gone once the lease is granted).  A granted lease
 * is the job's, no session's: no edge.  One more round trip when a lease
 * node is ahead.
 */
static int
zk_find_blockers(const ZkWaitDesc *wait, int64 self, ZkRecordBlocker **out)
{
	int			total = 0;
	int			n = 0;
	ZkOp	  **ops;
	int			k = 0;
	int			nleases = 0;
	char	  **lease_nodes;
	int		   *lease_targets;

	for (int t = 0; t < wait->ntargets; t++)
		total += wait->targets[t].nahead;
	*out = palloc(sizeof(ZkRecordBlocker) * Max(total, 1));
	ops = palloc(sizeof(ZkOp *) * Max(total, 1));
	lease_nodes = palloc(sizeof(char *) * Max(total, 1));
	lease_targets = palloc(sizeof(int) * Max(total, 1));
	for (int t = 0; t < wait->ntargets; t++)
		for (int i = 0; i < wait->targets[t].nahead; i++)
			ops[k++] = ZkExists(wait->targets[t].ahead[i]);
	k = 0;
	for (int t = 0; t < wait->ntargets; t++)
	{
		for (int i = 0; i < wait->targets[t].nahead; i++, k++)
		{
			ZkOp	   *op = ops[k];

			ZkOpWait(op, WHAT_CHECK, wait->targets[t].lock_path);
			if (op->rc == ZOK && op->stat.ephemeralOwner != 0 &&
				op->stat.ephemeralOwner != self)
			{
				(*out)[n].target = t;
				(*out)[n].node = wait->targets[t].ahead[i];
				(*out)[n].owner = op->stat.ephemeralOwner;
				n++;
			}
			else if (op->rc == ZOK && ZkIsLeaseNode(op->stat.ephemeralOwner) &&
					 op->stat.numChildren > 0)
			{
				lease_nodes[nleases] = psprintf("%s/%s",
												wait->targets[t].ahead[i],
												ZK_LEASE_WAITER);
				lease_targets[nleases++] = t;
			}
			else if (ZkIsConnectionLoss(op->rc))
				n = -1 - total;	/* stays negative: ask again */
			else if (op->rc != ZOK && op->rc != ZNONODE)
				ZkRaiseForRc(op->rc, WHAT_CHECK, wait->targets[t].lock_path);
			ZkOpFree(op);
		}
	}

	/* the takers of waiting leases ahead, through their waiter children */
	for (int i = 0; i < nleases; i++)
		ops[i] = ZkExists(lease_nodes[i]);
	for (int i = 0; i < nleases; i++)
	{
		ZkOp	   *op = ops[i];
		const char *lock_path = wait->targets[lease_targets[i]].lock_path;

		ZkOpWait(op, WHAT_CHECK, lock_path);
		if (op->rc == ZOK && op->stat.ephemeralOwner != 0 &&
			op->stat.ephemeralOwner != self && n >= 0)
		{
			(*out)[n].target = lease_targets[i];
			(*out)[n].node = lease_nodes[i];
			(*out)[n].owner = op->stat.ephemeralOwner;
			n++;
		}
		else if (ZkIsConnectionLoss(op->rc))
			n = -1 - total;
		else if (op->rc != ZOK && op->rc != ZNONODE)
			ZkRaiseForRc(op->rc, WHAT_CHECK, lock_path);
		ZkOpFree(op);
	}
	pfree(ops);
	pfree(lease_targets);
	return n < 0 ? -1 : n;
}

/*
 * ZkDeadlockPublish
 *		Publish this backend's wait (see the file header): the owners of
 *		what blocks it, then the record.  Replaces a record of ours left
 *		from an earlier wait.  Returns the record's czxid.
 */
int64
ZkDeadlockPublish(const ZkWaitDesc *wait)
{
	ZkSessionStatus st;
	char	   *path;
	char	   *data;
	int64		czxid = 0;
	const char *lock_path = wait->targets[0].lock_path;
	ZkRecordBlocker *blockers;
	int			nb;
	MemoryContext old;

	ZkSessionGetStatus(&st);
	path = zk_record_path_of(st.session_id);
	/* a lost connection: wait for it as the wait itself would, then again */
	while ((nb = zk_find_blockers(wait, st.session_id, &blockers)) < 0)
		ZkWaitConnected(WHAT_CHECK, lock_path);
	data = zk_build_record(wait, blockers, nb);

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
			/*
			 * The records' parent: persistent, one node for good, and open
			 * to every identity (each record is protected like a queue node).
			 */
			char	   *parent = zk_waits_parent();

			op = ZkCreate(parent, "", 0, ZOO_PERSISTENT, false);
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
			(void) ZkOpWaitQuiet(op, zklock_connect_timeout);
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

	/* our own record, as the search reads others' */
	if (zk_self_cxt == NULL)
		zk_self_cxt = AllocSetContextCreate(TopMemoryContext,
											"zklock published wait",
											ALLOCSET_SMALL_SIZES);
	MemoryContextReset(zk_self_cxt);
	old = MemoryContextSwitchTo(zk_self_cxt);
	zk_self = zk_parse_record(data, (int) strlen(data), st.session_id, czxid);
	MemoryContextSwitchTo(old);

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
	zk_self = NULL;
	if (zk_self_cxt != NULL)
		MemoryContextReset(zk_self_cxt);
}

/*
 * zk_search
 *		Depth-first search for a cycle back to 'start'.  path[0 .. depth]
 *		holds the members so far, path[depth].rec filled; on success the
 *		cycle is path[0 .. *cycle_len - 1], each member's blocker index
 *		set to the one owned by the next member.  The records of all the
 *		owners a member leads to are read at once.
 */
static bool
zk_search(ZkMember *path, int depth, int64 start, const char *lock_path,
		  int *cycle_len)
{
	ZkRecord   *rec = path[depth].rec;
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
		{
			char	   *record = zk_record_path_of(owner);

			ops[i] = ZkGetData(record, ZK_NO_WATCH);
			pfree(record);
		}
	}
	for (int i = 0; i < rec->nblockers; i++)
	{
		if (ops[i] != NULL)
			ZkOpWait(ops[i], WHAT_CHECK, lock_path);
	}
	for (int i = 0; i < rec->nblockers && !found; i++)
	{
		ZkRecord   *next;

		if (ops[i] == NULL)
			continue;
		if (ops[i]->rc != ZOK)
		{
			if (ZkIsConnectionLoss(ops[i]->rc))
				zk_check_incomplete = true;
			else if (ops[i]->rc != ZNONODE)
				ZkRaiseForRc(ops[i]->rc, WHAT_CHECK, lock_path);
			continue;			/* not waiting, or not zklock */
		}
		next = zk_parse_record(ops[i]->value, ops[i]->value_len,
							   rec->blockers[i].owner, ops[i]->stat.czxid);
		if (next == NULL)
			continue;
		path[depth].blocker = i;
		path[depth + 1].rec = next;
		found = zk_search(path, depth + 1, start, lock_path, cycle_len);
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
zk_verify_cycle(ZkMember *cycle, int n, const char *lock_path)
{
	ZkOp	   *sync = ZkSync("/");
	ZkOp	  **ops = palloc(sizeof(ZkOp *) * 3 * n);
	bool		holds = true;

	for (int i = 0; i < n; i++)
	{
		const ZkRecordBlocker *b = &cycle[i].rec->blockers[cycle[i].blocker];
		char	   *record = zk_record_path_of(cycle[i].rec->session);

		ops[3 * i] = ZkExists(record);
		ops[3 * i + 1] = ZkExists(cycle[i].rec->targets[b->target].node);
		ops[3 * i + 2] = ZkExists(b->node);
		pfree(record);
	}
	ZkOpWait(sync, WHAT_CHECK, lock_path);
	for (int i = 0; i < 3 * n; i++)
	{
		ZkOpWait(ops[i], WHAT_CHECK, lock_path);
		if (ZkIsConnectionLoss(ops[i]->rc))
			holds = false;
	}
	if (ZkIsConnectionLoss(sync->rc))
	{
		holds = false;
		zk_check_incomplete = true;
	}
	else if (sync->rc != ZOK)
		ZkRaiseForRc(sync->rc, WHAT_CHECK, lock_path);
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
 *		A member's server, as the report names it: its cluster_name, or
 *		host:port.
 */
static char *
zk_member_server(const ZkRecord *rec)
{
	if (rec->cluster_name != NULL && rec->cluster_name[0] != '\0')
		return psprintf("server \"%s\"", ZkUtf8ForMessage(rec->cluster_name));
	return psprintf("server %s:%d",
					rec->host ? ZkUtf8ForMessage(rec->host) : "?", rec->port);
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
		const ZkRecordTarget *t =
			&rec->targets[rec->blockers[cycle[i].blocker].target];
		const ZkRecord *next = cycle[(i + 1) % n].rec;

		if (i > 0)
			appendStringInfoChar(&detail, '\n');
		if (t->mode == ZK_MODE_LEASE)
			appendStringInfo(&detail,
							 "Process %d on %s waits for a lease of ZooKeeper semaphore \"%s\"; blocked by process %d on %s.",
							 rec->pid, zk_member_server(rec),
							 ZkUtf8ForMessage(t->lock),
							 next->pid, zk_member_server(next));
		else
			appendStringInfo(&detail,
							 "Process %d on %s waits for %s ZooKeeper lock \"%s\"; blocked by process %d on %s.",
							 rec->pid, zk_member_server(rec),
							 ZkLockModeName(t->mode), ZkUtf8ForMessage(t->lock),

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
	ZkMember	path[ZK_MAX_CYCLE];
	int			n = 0;
	int			victim = 0;
	const char *lock_path = wait->targets[0].lock_path;
	MemoryContext cxt;
	MemoryContext old;

	if (zk_self == NULL || zk_self->kind != ZK_WAIT_ALL_OF)
		return true;
	zk_check_incomplete = false;

	cxt = AllocSetContextCreate(CurrentMemoryContext, "zklock deadlock check",
								ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(cxt);
	memset(path, 0, sizeof(path));
	path[0].rec = zk_self;

	if (zk_search(path, 0, zk_self->session, lock_path, &n))
	{
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
	return !zk_check_incomplete;
}
