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
 * Reading is done by a small tolerant parser that accepts any bytes:
 * nodes written by other clients (Curator stores the client's address,
 * kazoo an identifier) or corrupt data simply yield NULL fields, never an
 * error.
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

#include "node_data.h"

/* maximum length of one JSON string value we keep */
#define ZK_MAX_FIELD 1024

typedef struct ZkJsonReader
{
	const char *p;
	const char *end;
} ZkJsonReader;

static void append_field(StringInfo buf, const char *key, const char *value,
						 bool first);
static void skip_space(ZkJsonReader *r);
static bool read_string(ZkJsonReader *r, StringInfo out);
static bool read_scalar(ZkJsonReader *r, StringInfo out, bool *is_string);
static char *text_for_server(const char *utf8, int len);

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

	dbname = OidIsValid(MyDatabaseId) ? get_database_name(MyDatabaseId) : NULL;
	user = GetUserNameFromId(GetUserId(), true);

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

static void
skip_space(ZkJsonReader *r)
{
	while (r->p < r->end &&
		   (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

/*
 * read_string
 *		Read a JSON string at r->p into 'out' (UTF-8).  False on anything
 *		malformed, including \u0000, lone surrogates and overlong values.
 */
static bool
read_string(ZkJsonReader *r, StringInfo out)
{
	if (r->p >= r->end || *r->p != '"')
		return false;
	r->p++;
	while (r->p < r->end)
	{
		unsigned char c = (unsigned char) *r->p++;

		if (c == '"')
			return true;
		if (c < 0x20 || out->len > ZK_MAX_FIELD)
			return false;
		if (c != '\\')
		{
			appendStringInfoChar(out, (char) c);
			continue;
		}
		if (r->p >= r->end)
			return false;
		c = (unsigned char) *r->p++;
		switch (c)
		{
			case '"':
			case '\\':
			case '/':
				appendStringInfoChar(out, (char) c);
				break;
			case 'b':
				appendStringInfoChar(out, '\b');
				break;
			case 'f':
				appendStringInfoChar(out, '\f');
				break;
			case 'n':
				appendStringInfoChar(out, '\n');
				break;
			case 'r':
				appendStringInfoChar(out, '\r');
				break;
			case 't':
				appendStringInfoChar(out, '\t');
				break;
			case 'u':
				{
					pg_wchar	cp = 0;
					unsigned char utf8[8];

					for (int pass = 0; pass < 2; pass++)
					{
						unsigned int unit = 0;

						if (r->end - r->p < 4)
							return false;
						for (int i = 0; i < 4; i++)
						{
							char		h = *r->p++;

							unit <<= 4;
							if (h >= '0' && h <= '9')
								unit |= h - '0';
							else if (h >= 'a' && h <= 'f')
								unit |= h - 'a' + 10;
							else if (h >= 'A' && h <= 'F')
								unit |= h - 'A' + 10;
							else
								return false;
						}
						if (pass == 0)
						{
							if (unit == 0 || (unit >= 0xDC00 && unit <= 0xDFFF))
								return false;
							if (unit < 0xD800 || unit > 0xDBFF)
							{
								cp = unit;
								break;
							}
							/* high surrogate: a low one must follow */
							cp = unit;
							if (r->end - r->p < 6 || r->p[0] != '\\' || r->p[1] != 'u')
								return false;
							r->p += 2;
						}
						else
						{
							if (unit < 0xDC00 || unit > 0xDFFF)
								return false;
							cp = 0x10000 + ((cp - 0xD800) << 10) + (unit - 0xDC00);
						}
					}
					unicode_to_utf8(cp, utf8);
					appendBinaryStringInfo(out, (char *) utf8,
										   pg_utf_mblen(utf8));
					break;
				}
			default:
				return false;
		}
	}
	return false;
}

/*
 * read_scalar
 *		A string, number, true, false or null.  Numbers and literals are
 *		returned as their text; nested objects and arrays are refused.
 */
static bool
read_scalar(ZkJsonReader *r, StringInfo out, bool *is_string)
{
	*is_string = false;
	if (r->p >= r->end)
		return false;
	if (*r->p == '"')
	{
		*is_string = true;
		return read_string(r, out);
	}
	while (r->p < r->end && out->len < 64 &&
		   (isalnum((unsigned char) *r->p) || *r->p == '-' || *r->p == '+' ||
			*r->p == '.'))
		appendStringInfoChar(out, *r->p++);
	return out->len > 0;
}

/*
 * text_for_server
 *		A UTF-8 string as text in the database encoding, or NULL if it is
 *		not valid UTF-8 or cannot be shown in that encoding.
 */
static char *
text_for_server(const char *utf8, int len)
{
	int			enc = GetDatabaseEncoding();

	if (!pg_verify_mbstr(PG_UTF8, utf8, len, true))
		return NULL;
	if (enc == PG_UTF8 || enc == PG_SQL_ASCII)
		return pnstrdup(utf8, len);
	for (int i = 0; i < len; i++)
	{
		if (IS_HIGHBIT_SET(utf8[i]))
			return NULL;		/* converting could fail: show nothing */
	}
	return pnstrdup(utf8, len);
}

/*
 * ZkParseNodeData
 *		Read the owner fields from a node's data.  Accepts any bytes: what
 *		cannot be read stays NULL (-1 for numbers).
 */
void
ZkParseNodeData(const char *data, int len, ZkOwner *owner)
{
	ZkJsonReader r;
	StringInfoData key;
	StringInfoData value;

	memset(owner, 0, sizeof(*owner));
	owner->port = -1;
	owner->pid = -1;
	owner->ttl_ms = -1;
	if (data == NULL || len <= 0)
		return;

	r.p = data;
	r.end = data + len;
	skip_space(&r);
	if (r.p >= r.end || *r.p != '{')
		return;
	r.p++;

	initStringInfo(&key);
	initStringInfo(&value);
	for (;;)
	{
		bool		is_string;
		char	   *text;

		skip_space(&r);
		if (r.p < r.end && *r.p == '}')
			break;
		resetStringInfo(&key);
		resetStringInfo(&value);
		if (!read_string(&r, &key))
			break;
		skip_space(&r);
		if (r.p >= r.end || *r.p != ':')
			break;
		r.p++;
		skip_space(&r);
		if (!read_scalar(&r, &value, &is_string))
			break;

		text = text_for_server(value.data, value.len);
		if (text != NULL)
		{
			if (strcmp(key.data, "ttl_ms") == 0)
			{
				char	   *endp;
				long long	v;

				errno = 0;
				v = strtoll(text, &endp, 10);
				if (!is_string && *endp == '\0' && errno == 0 && v > 0)
					owner->ttl_ms = (int64) v;
			}
			else if (strcmp(key.data, "port") == 0 || strcmp(key.data, "pid") == 0)
			{
				char	   *endp;
				long		v;

				errno = 0;
				v = strtol(text, &endp, 10);
				if (!is_string && *endp == '\0' && errno == 0 &&
					v >= 0 && v <= PG_INT32_MAX)
				{
					if (strcmp(key.data, "port") == 0)
						owner->port = (int32) v;
					else
						owner->pid = (int32) v;
				}
			}
			else if (is_string)
			{
				if (strcmp(key.data, "cluster_name") == 0)
					owner->cluster_name = text;
				else if (strcmp(key.data, "host") == 0)
					owner->host = text;
				else if (strcmp(key.data, "database") == 0)
					owner->database = text;
				else if (strcmp(key.data, "user") == 0)
					owner->user = text;
				else if (strcmp(key.data, "application_name") == 0)
					owner->application_name = text;
				else if (strcmp(key.data, "mode") == 0)
					owner->mode = text;
				else if (strcmp(key.data, "scope") == 0)
					owner->scope = text;
			}
		}

		skip_space(&r);
		if (r.p < r.end && *r.p == ',')
		{
			r.p++;
			continue;
		}
		break;
	}
	pfree(key.data);
	pfree(value.data);
}

/*
 * ZkNodeDataAsText
 *		A node's raw data as text, or NULL if it is empty or not valid text.
 */
char *
ZkNodeDataAsText(const char *data, int len)
{
	if (data == NULL || len <= 0 || memchr(data, '\0', len) != NULL)
		return NULL;
	return text_for_server(data, len);
}
