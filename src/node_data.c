/*-------------------------------------------------------------------------
 *
 * node_data.c
 *		The owner description stored in each queue node zklock creates.
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
 * The data is UTF-8, whatever the database's encoding.  It is read with
 * PostgreSQL's JSON parser (json_reader.c), whose errors are returned,
 * not thrown: nodes written by other clients (Curator stores the client's
 * address, kazoo an identifier) or corrupt data simply yield NULL fields,
 * never an error.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "commands/dbcommands.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "postmaster/postmaster.h"
#include "utils/guc.h"
#include "utils/json.h"

#include "json_reader.h"
#include "node_data.h"

/* maximum length of one JSON string value we keep */
#define ZK_MAX_FIELD 1024

static void append_field(StringInfo buf, const char *key, const char *value,
						 bool first);
static void zk_nd_scalar(void *arg, int depth, const char *f, char *token,
						 JsonTokenType tokentype);
static bool zk_nd_integer(const char *token, int64 min, int64 max,
						  int64 *value);

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
		escape_json(buf, value);
}

/*
 * ZkBuildNodeData
 *		The JSON description of this backend as the owner of a new node;
 *		a lease's node (ttl_ms >= 0) records its ttl too, which the server
 *		does not tell clients.
 */
char *
ZkBuildNodeData(ZkLockMode mode, ZkLockScope scope, int64 ttl_ms, int *len)
{
	static char hostname[256] = "";
	StringInfoData buf;
	char	   *dbname;
	const char *user;

	if (hostname[0] == '\0' && gethostname(hostname, sizeof(hostname) - 1) != 0)
		strlcpy(hostname, "unknown", sizeof(hostname));

	/* names in the database encoding; the node's data is UTF-8 */
	dbname = OidIsValid(MyDatabaseId) ? get_database_name(MyDatabaseId) : NULL;
	if (dbname != NULL)
		dbname = pg_server_to_any(dbname, strlen(dbname), PG_UTF8);
	user = GetUserNameFromId(GetUserId(), true);
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
	append_field(&buf, "mode", ZkLockModeName(mode), false);
	append_field(&buf, "scope", ZkLockScopeName(scope), false);
	if (ttl_ms >= 0)
		appendStringInfo(&buf, ",\"ttl_ms\":" INT64_FORMAT, ttl_ms);
	appendStringInfoChar(&buf, '}');
	*len = buf.len;
	return buf.data;
}

/* ---- reading a node's data (json_reader.c) ---- */

/*
 * zk_nd_integer
 *		A JSON number token as an integer within [min, max], or false.
 */
static bool
zk_nd_integer(const char *token, int64 min, int64 max, int64 *value)
{
	char	   *endp;
	long long	v;

	errno = 0;
	v = strtoll(token, &endp, 10);
	if (*endp != '\0' || errno != 0 || v < min || v > max)
		return false;
	*value = (int64) v;
	return true;
}

/*
 * zk_nd_scalar
 *		Keep the top-level fields we know; a value of the wrong type or
 *		range, or a string longer than ZK_MAX_FIELD, is left out, and so
 *		is every value nested deeper.
 */
static void
zk_nd_scalar(void *arg, int depth, const char *f, char *token,
			 JsonTokenType tokentype)
{
	ZkOwner    *owner = (ZkOwner *) arg;
	int64		v;

	if (f == NULL || depth != 1)
		return;
	if (tokentype == JSON_TOKEN_NUMBER)
	{
		if (strcmp(f, "ttl_ms") == 0 && zk_nd_integer(token, 1, PG_INT64_MAX, &v))
			owner->ttl_ms = v;
		else if (strcmp(f, "port") == 0 && zk_nd_integer(token, 0, PG_INT32_MAX, &v))
			owner->port = (int32) v;
		else if (strcmp(f, "pid") == 0 && zk_nd_integer(token, 0, PG_INT32_MAX, &v))
			owner->pid = (int32) v;
		return;
	}
	if (tokentype != JSON_TOKEN_STRING || strlen(token) > ZK_MAX_FIELD)
		return;
	if (strcmp(f, "cluster_name") == 0)
		owner->cluster_name = token;
	else if (strcmp(f, "host") == 0)
		owner->host = token;
	else if (strcmp(f, "database") == 0)
		owner->database = token;
	else if (strcmp(f, "user") == 0)
		owner->user = token;
	else if (strcmp(f, "application_name") == 0)
		owner->application_name = token;
	else if (strcmp(f, "mode") == 0)
		owner->mode = token;
	else if (strcmp(f, "scope") == 0)
		owner->scope = token;
}

/*
 * ZkParseNodeData
 *		Read the owner fields (UTF-8) from a node's data.  Accepts any
 *		bytes: what cannot be read stays NULL (-1 for numbers).  Data that
 *		is not valid UTF-8 yields nothing; a malformed object keeps the
 *		fields read before the fault.
 */
void
ZkParseNodeData(const char *data, int len, ZkOwner *owner)
{
	memset(owner, 0, sizeof(*owner));
	owner->port = -1;
	owner->pid = -1;
	owner->ttl_ms = -1;
	if (data == NULL || len <= 0 ||
		!pg_verify_mbstr(PG_UTF8, data, len, true))
		return;
	(void) ZkJsonRead(data, len, zk_nd_scalar, owner);
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
