/*-------------------------------------------------------------------------
 *
 * cluster/wait_record.c
 *		The wait records of deadlock detection: what a waiter publishes
 *		about its wait, how it is written to ZooKeeper and withdrawn, and
 *		how the records of others are read back.
 *
 * A backend whose wait has lasted deadlock_timeout publishes what it waits
 * for (ZkWaitRecordPublish): an ephemeral record <zklock.root>.waits/<session
 * id, 16 hex digits>, outside the lock tree (no lock path can collide with
 * it), that vanishes with its session and is withdrawn when the wait ends
 * (ZkWaitRecordWithdraw).  The record names the queue nodes it waits with
 * (its targets).  A target that waits in its queue ("queued") lists
 * nothing more: what blocks it is the conflicting nodes ahead of it, which
 * deadlock detection reads from the queue (cluster/deadlock.c).  Any other
 * target (an upgrade, a permit count) lists the nodes that block it, each
 * with the session that owns it (its ephemeralOwner, read when publishing:
 * one pipelined round trip, ZkBlockerOwners).  This file knows the
 * records' format and their nodes, cluster/deadlock.c the search.
 *
 * A record is one JSON object, in UTF-8: the owner as a queue node describes
 * it (base/node_data.c), the kind of wait (base/vocabulary.h), three
 * parallel arrays of targets and three of blockers, each blocker naming its
 * target by index:
 *
 *	{"owner":{"cluster_name":"main","host":"db1",...,"pid":4711,...},
 *	 "kind":"all","locks":["/a","/b"],
 *	 "nodes":["/zklock/a/_c_<uuid>-__WRIT__0000000003",
 *			  "/zklock/b/_c_<uuid>-__WRIT__0000000007"],
 *	 "modes":["exclusive","exclusive"],
 *	 "blockers":["/zklock/b/_c_<uuid>-__READ__0000000005"],
 *	 "owners":["0100007f2ba90002"],"blocker_targets":[1],"queued":[0]}
 *
 * "kind" is "all" or "any"; the owners are session ids, 16 hex digits;
 * "queued" lists the targets whose blockers are read from their queue.  A
 * record without "queued" (an older zklock's) lists every target's.
 *
 * Records are read by base/node_formats.c, which bounds every value and list
 * (so a record may name at most ZK_MAX_SET_LOCKS targets and
 * ZK_MAX_RECORD_BLOCKERS blockers, and be at most ZK_NODE_DATA_MAX bytes
 * long).  Data that is not such a record (malformed, or from whatever
 * wrote it) is never an error: it is not a wait the search can use, and
 * the search names the record in a WARNING (base/node_data.c).
 *
 * A lease's node (recipes/lease.c) is persistent and belongs to no session;
 * while its lease waits, an ephemeral child of its taker's session stands
 * for it in an edge (see ZkBlockerOwners).
 *
 * The errors raised here name no operation: a wait is published from
 * inside the wait, whose context (base/operation_context.c) names what the
 * backend waits for.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/json.h"
#include "utils/memutils.h"

#include "base/contender.h"
#include "base/node_data.h"
#include "base/node_formats.h"
#include "cluster/wait_record.h"

/* this backend's published wait, as a record, for the search */
static ZkWaitRecord *zk_self = NULL;	/* in zk_self_cxt */
static MemoryContext zk_self_cxt = NULL;

/* this backend's published record, if any */
static char *zk_record_path = NULL;		/* TopMemoryContext */

static char *zk_record_path_of(int64 session);
static char *zk_build_record(const ZkWaitDesc *wait, ZkWaitRecordBlocker *b,
							 int nb);
static ZkWaitRecord *zk_parse_record(const char *data, int len, int64 session,
									 int64 czxid, bool warn);
static int	zk_find_blockers(const ZkWaitDesc *wait, int64 self,
							 ZkWaitRecordBlocker **out);

/* the record of a session (records live beside the lock tree, never in it) */
static char *
zk_record_path_of(int64 session)
{
	return psprintf("%s.waits/%016llx", zklock_root, (unsigned long long) session);
}

/*
 * zk_build_record
 *		The record's data: the owner (the waiter's queue node data, which
 *		the wait carries), the kind of wait and its targets, as one JSON
 *		object.
 */
static char *
zk_build_record(const ZkWaitDesc *wait, ZkWaitRecordBlocker *b, int nb)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"owner\":");
	appendBinaryStringInfo(&buf, wait->owner, wait->ownerlen);
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
	appendStringInfoString(&buf, "],\"queued\":[");
	for (int i = 0, k = 0; i < wait->ntargets; i++)
	{
		if (wait->targets[i].queued)
			appendStringInfo(&buf, "%s%d", k++ > 0 ? "," : "", i);
	}
	appendStringInfoString(&buf, "]}");
	return buf.data;
}

/* ---- reading a record (base/node_formats.c) ---- */

/*
 * zk_parse_record
 *		Read a record's data; NULL if it is not one.  Malformed data, from
 *		whatever wrote it, is never an error: it is not a wait we can use,
 *		and with 'warn' (a record of another session) a WARNING names the
 *		record.
 */
static ZkWaitRecord *
zk_parse_record(const char *data, int len, int64 session, int64 czxid,
				bool warn)
{
	ZkWaitRecord *rec = palloc0(sizeof(ZkWaitRecord));
	char	   *reason;

	if (ZkReadWaitRecord(data, len, rec, &reason) != ZK_DATA_OK)
	{
		if (warn)
		{
			char	   *path = zk_record_path_of(session);

			ZkWarnNodeData(path, reason,
						   "Deadlock detection does not follow the wait it would record.");
			pfree(path);
		}
		pfree(reason);
		pfree(rec);
		return NULL;
	}
	rec->session = session;
	rec->czxid = czxid;
	return rec;
}

/*
 * ZkBlockerOwners
 *		The sessions owning n nodes, in one pipelined round trip (one more
 *		when waiting leases' nodes are among them): owners[i] the session,
 *		0 for none (the node is gone, or belongs to no session), and
 *		edges[i] the node that stands for node i in an edge (palloc'd).
 *		False if the connection was lost meanwhile: the answers are not
 *		all there.
 *
 * A lease's node (recipes/lease.c) is persistent and belongs to no session.
 * While its lease waits, though, it has an ephemeral child of its taker's
 * session, and that taker waits: the edge leads to the taker, through the
 * child, which stands for the node (so that verifying the edge checks the
 * child, gone once the lease is granted).  A granted lease is the job's,
 * no session's: no edge.
 */
bool
ZkBlockerOwners(int n, char *const *nodes, int64 *owners, char **edges)
{
	ZkOp	  **ops = palloc(sizeof(ZkOp *) * Max(n, 1));
	int		   *lease = palloc(sizeof(int) * Max(n, 1));
	int			nleases = 0;
	bool		complete = true;

	for (int i = 0; i < n; i++)
		ops[i] = ZkExists(nodes[i]);
	for (int i = 0; i < n; i++)
	{
		ZkOp	   *op = ops[i];

		ZkOpWait(op);
		owners[i] = 0;
		edges[i] = pstrdup(nodes[i]);
		if (op->rc == ZOK && !ZkIsLeaseNode(op->stat.ephemeralOwner))
			owners[i] = op->stat.ephemeralOwner;
		else if (op->rc == ZOK && op->stat.numChildren > 0)
		{
			pfree(edges[i]);
			edges[i] = psprintf("%s/%s", nodes[i], ZK_LEASE_WAITER);
			lease[nleases++] = i;
		}
		else if (ZkIsConnectionLoss(op->rc))
			complete = false;
		else if (op->rc != ZOK && op->rc != ZNONODE)
			ZkRaiseForRc(op->rc);
		ZkOpFree(op);
	}

	/* the takers of waiting leases, through their waiter children */
	for (int k = 0; k < nleases; k++)
		ops[k] = ZkExists(edges[lease[k]]);
	for (int k = 0; k < nleases; k++)
	{
		ZkOp	   *op = ops[k];

		ZkOpWait(op);
		if (op->rc == ZOK)
			owners[lease[k]] = op->stat.ephemeralOwner;
		else if (ZkIsConnectionLoss(op->rc))
			complete = false;
		else if (op->rc != ZNONODE)
			ZkRaiseForRc(op->rc);
		ZkOpFree(op);
	}
	pfree(ops);
	pfree(lease);
	return complete;
}

/*
 * zk_find_blockers
 *		The owners of the nodes listed as blocking each target that is not
 *		queued (the nodes that still exist), leaving out our own nodes.
 *		*out is palloc'd; returns how many, or ZCONNECTIONLOSS (negative)
 *		if the connection was lost meanwhile.
 */
static int
zk_find_blockers(const ZkWaitDesc *wait, int64 self,
				 ZkWaitRecordBlocker **out)
{
	int			total = 0;
	int			n = 0;
	int			k = 0;
	char	  **nodes;
	int		   *targets;
	int64	   *owners;
	char	  **edges;
	bool		complete;

	for (int t = 0; t < wait->ntargets; t++)
		if (!wait->targets[t].queued)
			total += wait->targets[t].nahead;
	nodes = palloc(sizeof(char *) * Max(total, 1));
	targets = palloc(sizeof(int) * Max(total, 1));
	owners = palloc(sizeof(int64) * Max(total, 1));
	edges = palloc(sizeof(char *) * Max(total, 1));
	for (int t = 0; t < wait->ntargets; t++)
	{
		if (wait->targets[t].queued)
			continue;
		for (int i = 0; i < wait->targets[t].nahead; i++, k++)
		{
			nodes[k] = wait->targets[t].ahead[i];
			targets[k] = t;
		}
	}
	complete = ZkBlockerOwners(total, nodes, owners, edges);
	*out = palloc(sizeof(ZkWaitRecordBlocker) * Max(total, 1));
	for (int i = 0; i < total; i++)
	{
		if (owners[i] == 0 || owners[i] == self)
			continue;
		(*out)[n].target = targets[i];
		(*out)[n].node = edges[i];
		(*out)[n].owner = owners[i];
		n++;
	}
	pfree(nodes);
	pfree(targets);
	pfree(owners);
	return complete ? n : ZCONNECTIONLOSS;
}

/*
 * ZkWaitRecordPublish
 *		Publish this backend's wait (see the file header): the owners of
 *		what blocks it, then the record.  Replaces a record of ours left
 *		from an earlier wait.  Returns the record's czxid.
 */
int64
ZkWaitRecordPublish(const ZkWaitDesc *wait)
{
	ZkSessionStatus st;
	char	   *path;
	char	   *data;
	int64		czxid = 0;
	ZkWaitRecordBlocker *blockers;
	int			nb;
	MemoryContext old;

	ZkSessionGetStatus(&st);
	path = zk_record_path_of(st.session_id);
	/* a lost connection: wait for it as the wait itself would, then again */
	while ((nb = zk_find_blockers(wait, st.session_id, &blockers)) < 0)
		(void) ZkAwaitReconnect(nb);
	data = zk_build_record(wait, blockers, nb);

	for (;;)
	{
		ZkOp	   *op;
		int			rc;

		op = ZkCreateAnswered(path, data, (int) strlen(data), ZOO_EPHEMERAL,
							  NULL);
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
			char	   *parent = psprintf("%s.waits", zklock_root);

			op = ZkCreate(parent, "", 0, ZOO_PERSISTENT, false);
			ZkOpWait(op);
			rc = op->rc;
			ZkOpFree(op);
			pfree(parent);
			if (rc != ZOK && rc != ZNODEEXISTS && !ZkIsConnectionLoss(rc))
				ZkRaiseForRc(rc);
		}
		else if (rc == ZNODEEXISTS)
		{
			/* ours, from an earlier wait or a create whose answer was lost */
			op = ZkDeleteNodes((const char *const *) &path, 1, true);
			(void) ZkReleaseWait(op);
		}
		else
			ZkRaiseForRc(rc);
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
	zk_self = zk_parse_record(data, (int) strlen(data), st.session_id, czxid,
							  false);
	MemoryContextSwitchTo(old);

	pfree(path);
	pfree(data);
	return czxid;
}

/*
 * ZkWaitRecordWithdraw
 *		The wait ended: delete our record, in the background.  Never raises
 *		an ERROR (it runs when a wait ends in an ERROR too).
 */
void
ZkWaitRecordWithdraw(void)
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
 * ZkWaitRecordOwn
 *		This backend's published wait, as the search reads others' records;
 *		NULL while none is published.
 */
const ZkWaitRecord *
ZkWaitRecordOwn(void)
{
	return zk_self;
}

/*
 * ZkWaitRecordFetch
 *		Start reading the record of a session (a getData, no watch), for
 *		ZkWaitRecordParse once answered.
 */
ZkOp *
ZkWaitRecordFetch(int64 session)
{
	char	   *record = zk_record_path_of(session);
	ZkOp	   *op = ZkGetData(record, ZK_NO_WATCH);

	pfree(record);
	return op;
}

/*
 * ZkWaitRecordExists
 *		Start an exists of the record of a session: its czxid tells which
 *		wait it is.
 */
ZkOp *
ZkWaitRecordExists(int64 session)
{
	char	   *record = zk_record_path_of(session);
	ZkOp	   *op = ZkExists(record);

	pfree(record);
	return op;
}

/*
 * ZkWaitRecordParse
 *		The record an answered ZkWaitRecordFetch of 'session' brought (its
 *		rc ZOK), or NULL if that data is not a record (then a WARNING names
 *		the record node, once per statement).
 */
ZkWaitRecord *
ZkWaitRecordParse(const ZkOp *answer, int64 session)
{
	return zk_parse_record(answer->value, answer->value_len, session,
						   answer->stat.czxid, true);
}
