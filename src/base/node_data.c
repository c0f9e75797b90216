/*-------------------------------------------------------------------------
 *
 * base/node_data.c
 *		The owner description stored in each queue node zklock creates,
 *		and the WARNING for node data zklock cannot read.
 *
 * Every queue node carries a small, flat JSON object naming its owner, so
 * that an operator (zk_lock_queue, log lines, zkCli) can tell who holds or
 * waits for a lock:
 *
 *	{"cluster_name":"main","host":"db1","port":5432,"pid":4711,
 *	 "database":"app","user":"etl","application_name":"nightly",
 *	 "mode":"exclusive","scope":"session"}
 *
 * A lease's node has scope "lease" and records its ttl ("ttl_ms"): the
 * server keeps a TTL node's ttl to itself.
 *
 * The data is UTF-8, whatever the database's encoding.  It is read by
 * base/node_formats.c, which bounds every value and never raises an error:
 * nodes written by other clients (Curator stores the client's address,
 * kazoo an identifier) or corrupt data yield NULL fields.
 *
 * Data that claims to be zklock's but fails those checks, or that cannot
 * be read where only zklock's data belongs, is reported by the caller that
 * met it with ZkWarnNodeData: a WARNING naming the node, at most one per
 * node per statement, so that a statement reading a damaged node several
 * times (a view, a wait that checks for deadlocks again) says it once.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "access/xact.h"
#include "commands/dbcommands.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "postmaster/postmaster.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/json.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "base/node_data.h"
#include "base/text_encoding.h"

/* the most nodes one statement names in a WARNING about their data */
#define ZK_DATA_WARNINGS_MAX	100

/* the nodes whose data this statement warned about (zk_warned_cxt) */
static MemoryContext zk_warned_cxt = NULL;
static TimestampTz zk_warned_statement = 0;
static List *zk_warned = NIL;
static int	zk_nwarned = 0;

/*
 * The owner fields of the queue nodes this backend creates
 * (zk_owner_fields), and what they were built from.
 */
static StringInfoData zk_owner = {NULL, 0, 0, 0};
static bool zk_owner_valid = false;
static uint64 zk_owner_invalidations = 0;	/* zk_owner_invalidate calls */
static Oid	zk_owner_user = InvalidOid;
static char *zk_owner_appname = NULL;
static bool zk_owner_callbacks = false;

static void zk_owner_invalidate(Datum arg, int cacheid, uint32 hashvalue);
static const StringInfoData *zk_owner_fields(void);
static void append_field(StringInfo buf, const char *key, const char *value,
						 bool first);

/*
 * append_field
 *		One string field of the owner (UTF-8), cut to the ZK_MAX_FIELD bytes
 *		that readers keep (base/node_formats.c), on a character boundary.
 */
static void
append_field(StringInfo buf, const char *key, const char *value, bool first)
{
	if (!first)
		appendStringInfoChar(buf, ',');
	escape_json(buf, key);
	appendStringInfoChar(buf, ':');
	if (value == NULL)
		appendStringInfoString(buf, "null");
	else
	{
		int			len = strlen(value);

		if (len > ZK_MAX_FIELD)
			value = pnstrdup(value, pg_encoding_mbcliplen(PG_UTF8, value, len,
														  ZK_MAX_FIELD));
		escape_json(buf, value);
	}
}

/*
 * zk_owner_invalidate
 *		Syscache callback: a role or a database was changed (maybe renamed),
 *		so the owner fields kept by ZkBuildNodeData are built again.
 */
static void
zk_owner_invalidate(Datum arg, int cacheid, uint32 hashvalue)
{
	zk_owner_valid = false;
	zk_owner_invalidations++;
}

/*
 * zk_owner_fields
 *		The owner fields of this backend, as ZkBuildNodeData writes them
 *		("{" up to application_name's value), kept in TopMemoryContext
 *		while the user and application_name stay the same and no role or
 *		database changes (zk_owner_invalidate): building them costs two
 *		catalog lookups, two conversions and the escaping, for every queue
 *		node otherwise.  Fields built while an invalidation came in (the
 *		lookups themselves may take it in) are used once, not kept.
 */
static const StringInfoData *
zk_owner_fields(void)
{
	static char hostname[256] = "";
	StringInfoData buf;
	char	   *dbname;
	const char *user;
	Oid			userid = GetUserId();
	const char *appname = application_name ? application_name : "";
	uint64		invalidations = zk_owner_invalidations;
	MemoryContext old;

	if (zk_owner_valid && zk_owner_user == userid &&
		strcmp(zk_owner_appname, appname) == 0)
		return &zk_owner;

	if (!zk_owner_callbacks)
	{
		CacheRegisterSyscacheCallback(AUTHOID, zk_owner_invalidate, (Datum) 0);
		CacheRegisterSyscacheCallback(DATABASEOID, zk_owner_invalidate,
									  (Datum) 0);
		zk_owner_callbacks = true;
	}
	if (hostname[0] == '\0' && gethostname(hostname, sizeof(hostname) - 1) != 0)
		strlcpy(hostname, "unknown", sizeof(hostname));

	/* names in the database encoding; the node's data is UTF-8 */
	dbname = OidIsValid(MyDatabaseId) ? get_database_name(MyDatabaseId) : NULL;
	if (dbname != NULL)
		dbname = pg_server_to_any(dbname, strlen(dbname), PG_UTF8);
	user = GetUserNameFromId(userid, true);
	if (user != NULL)
		user = pg_server_to_any(user, strlen(user), PG_UTF8);

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	append_field(&buf, "cluster_name", cluster_name, true);
	append_field(&buf, "host", hostname, false);
	appendStringInfo(&buf, ",\"port\":%d,\"pid\":%d", PostPortNumber, MyProcPid);
	append_field(&buf, "database", dbname, false);
	append_field(&buf, "user", user, false);
	append_field(&buf, "application_name", application_name, false);

	/* keep them: copied whole, so that no ERROR leaves half a copy */
	old = MemoryContextSwitchTo(TopMemoryContext);
	if (zk_owner.data != NULL)
		pfree(zk_owner.data);
	if (zk_owner_appname != NULL)
		pfree(zk_owner_appname);
	zk_owner_valid = false;
	zk_owner.data = NULL;
	zk_owner_appname = NULL;
	zk_owner.data = pnstrdup(buf.data, buf.len);
	zk_owner.len = buf.len;
	zk_owner_appname = pstrdup(appname);
	MemoryContextSwitchTo(old);
	pfree(buf.data);
	zk_owner_user = userid;
	zk_owner_valid = (zk_owner_invalidations == invalidations);
	return &zk_owner;
}

/*
 * ZkBuildNodeData
 *		The JSON description of this backend as the owner of a new node
 *		(palloc'd); a lease's node (ttl_ms >= 0) records its ttl too, which
 *		the server does not tell clients.
 */
char *
ZkBuildNodeData(ZkLockMode mode, ZkLockScope scope, int64 ttl_ms, int *len)
{
	const StringInfoData *owner = zk_owner_fields();
	const char *mode_name = ZkLockModeName(mode);
	const char *scope_name = ZkLockScopeName(scope);
	StringInfoData buf;

	/*
	 * One allocation that fits all but a ttl.  The mode's and scope's names
	 * are lowercase words, JSON strings as they stand: this runs for every
	 * queue node, so they are not escaped again.
	 */
	buf.maxlen = owner->len + (int) strlen(mode_name) +
		(int) strlen(scope_name) + 32;
	buf.data = palloc(buf.maxlen);
	resetStringInfo(&buf);
	appendBinaryStringInfo(&buf, owner->data, owner->len);
	appendStringInfoString(&buf, ",\"mode\":\"");
	appendStringInfoString(&buf, mode_name);
	appendStringInfoString(&buf, "\",\"scope\":\"");
	appendStringInfoString(&buf, scope_name);
	appendStringInfoChar(&buf, '"');
	if (ttl_ms >= 0)
		appendStringInfo(&buf, ",\"ttl_ms\":" INT64_FORMAT, ttl_ms);
	appendStringInfoChar(&buf, '}');
	*len = buf.len;
	return buf.data;
}

/* ---- reading a node's data (base/node_formats.c) ---- */

/*
 * ZkParseNodeData
 *		Read the owner fields (UTF-8) from a node's data (ZkReadOwner).
 *		Accepts any bytes: unless the verdict is ZK_DATA_OK, every field
 *		stays NULL (-1 for numbers).  Reports nothing: a caller that knows
 *		the node says what needs saying (ZkWarnNodeData).
 */
ZkDataVerdict
ZkParseNodeData(const char *data, int len, ZkOwner *owner)
{
	char	   *reason;
	ZkDataVerdict verdict = ZkReadOwner(data, len, owner, &reason);

	if (reason != NULL)
		pfree(reason);
	return verdict;
}

/*
 * ZkNodeDataAsText
 *		A node's raw data as UTF-8 text, or NULL if it is empty or not
 *		valid UTF-8 text.
 */
char *
ZkNodeDataAsText(const char *data, int len)
{
	if (data == NULL || len <= 0 || memchr(data, '\0', len) != NULL ||
		!pg_verify_mbstr(PG_UTF8, data, len, true))
		return NULL;
	return pnstrdup(data, len);
}

/*
 * ZkWarnNodeData
 *		WARNING that the data of node 'znode' cannot be read where zklock
 *		expects its own: 'reason' completes "The node's data ..." (a reader's,
 *		base/node_formats.c), 'consequence' is a sentence saying what the
 *		caller does instead. At most one WARNING per node per statement, and at
 *		most ZK_DATA_WARNINGS_MAX nodes named in one statement (then one
 *		WARNING that there are more).
 */
void
ZkWarnNodeData(const char *znode, const char *reason, const char *consequence)
{
	TimestampTz statement = GetCurrentStatementStartTimestamp();
	ListCell   *lc;
	MemoryContext old;

	if (zk_warned_cxt == NULL)
		zk_warned_cxt = AllocSetContextCreate(TopMemoryContext,
											  "zklock node data warnings",
											  ALLOCSET_SMALL_SIZES);
	if (statement != zk_warned_statement)
	{
		MemoryContextReset(zk_warned_cxt);
		zk_warned = NIL;
		zk_nwarned = 0;
		zk_warned_statement = statement;
	}
	foreach(lc, zk_warned)
	{
		if (strcmp((const char *) lfirst(lc), znode) == 0)
			return;
	}
	if (zk_nwarned >= ZK_DATA_WARNINGS_MAX)
	{
		if (zk_nwarned++ == ZK_DATA_WARNINGS_MAX)
			ereport(WARNING,
					(errcode(ERRCODE_WARNING),
					 errmsg("more ZooKeeper nodes hold data that zklock cannot read"),
					 errdetail("One statement names at most %d such nodes.",
							   ZK_DATA_WARNINGS_MAX)));
		return;
	}
	old = MemoryContextSwitchTo(zk_warned_cxt);
	zk_warned = lappend(zk_warned, pstrdup(znode));
	MemoryContextSwitchTo(old);
	zk_nwarned++;
	ereport(WARNING,
			(errcode(ERRCODE_WARNING),
			 errmsg("ZooKeeper node \"%s\" holds data that zklock cannot read",
					ZkUtf8ForMessage(znode)),
			 errdetail("The node's data %s. %s", reason, consequence),
			 errhint("Another ZooKeeper client may have written to the node: without zklock.auth, any client can write zklock's nodes.")));
}
