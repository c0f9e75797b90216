/*-------------------------------------------------------------------------
 *
 * base/node_formats.c
 *		The formats of the data zklock keeps in ZooKeeper nodes, and their
 *		readers: one layer, through which every piece of node data zklock
 *		reads goes.
 *
 * Four formats, each a small JSON object read with base/json_reader.c:
 *
 *	owner			every queue node zklock creates (locks, leases, a
 *					semaphore's nodes, a double barrier's participants):
 *					{"cluster_name":"main","host":"db1","port":5432,
 *					 "pid":4711,"database":"app","user":"etl",
 *					 "application_name":"nightly","mode":"exclusive",
 *					 "scope":"session"}, a lease's with "ttl_ms" too
 *					(base/node_data.c writes it);
 *	wait record		deadlock detection's published waits (cluster/wait_record.c
 *					writes them, and describes the format);
 *	limit			a semaphore node's {"max_leases":N} (recipes/semaphore.c);
 *	round			a double barrier's "ready" node, {"round":[names]}: the
 *					participants of the round it opened
 *					(recipes/double_barrier.c). Older zklock versions wrote
 *					"zklock-round:<name>,..." instead, and a member of such a
 *					version may share the path, so that form is read too.
 *
 * Every node may have been written by another client: its data is input
 * from a stranger, and every reader here bounds what it accepts.  The data
 * length is capped (ZK_OWNER_DATA_MAX for owners and limits, else
 * ZK_NODE_DATA_MAX), so is every string value (ZK_MAX_FIELD, and
 * ZK_MAX_ZNODE_BYTES for the paths of a record), every number has its
 * range (ports 1 to 65535, pids 1 to PG_INT32_MAX, a ttl 1 to ZooKeeper's
 * largest, ZK_MAX_TTL_MS, a semaphore's limit 1 to PG_INT32_MAX), and so
 * has every list (a record's targets at most ZK_MAX_SET_LOCKS, its
 * blockers at most ZK_MAX_RECORD_BLOCKERS; a round's participants at most
 * ZK_MAX_ROUND_MEMBERS).  A value of the wrong type or out of range makes
 * the whole document invalid, never a partly read one: a reader returns
 * everything or nothing.  Fields a reader does not know are left out, so a
 * newer zklock may add some.
 *
 * What a reader says of the data (ZkDataVerdict): zklock's (read), empty,
 * another client's (not a JSON object: Curator stores the client's
 * address, kazoo an identifier), or invalid (a JSON object, which claims to
 * be zklock's, or the old round format, that fails a check), with the
 * reason as a clause that completes "The node's data ...".  What follows
 * from that (base/node_data.c's WARNING, or an ERROR) is the caller's.
 *
 * Nothing here raises an error or talks to anyone: this file compiles as
 * frontend code too, for the fuzz driver (test/fuzz), which runs every
 * reader on generated data under AddressSanitizer.
 *
 *-------------------------------------------------------------------------
 */
#ifdef FRONTEND
#include "postgres_fe.h"
#else
#include "postgres.h"
#endif

#include <stddef.h>

#include "mb/pg_wchar.h"

#include "base/json_reader.h"
#include "base/node_formats.h"

/* A growing array of fixed-size items. */
typedef struct ZkVec
{
	char	   *items;
	int			n;
	int			max;
	size_t		size;			/* of one item */
} ZkVec;

/* What the wait record reader collects before building the record. */
typedef struct ZkRecordParse
{
	ZkWaitRecord *rec;
	ZkOwner		owner;			/* the record's "owner" */
	ZkVec		locks;			/* char * */
	ZkVec		nodes;			/* char * */
	ZkVec		modes;			/* ZkLockMode */
	ZkVec		blockers;		/* char * */
	ZkVec		owners;			/* int64 */
	ZkVec		btargets;		/* int */
	ZkVec		queued;			/* int: targets blocked by their queue */
	char	   *reason;			/* the first check that failed */
} ZkRecordParse;

/* What the owner, limit and round readers collect. */
typedef struct ZkSimpleParse
{
	ZkOwner    *owner;
	int32		max_leases;
	ZkVec		names;			/* char * */
	bool		has_round;
	char	   *reason;
} ZkSimpleParse;

/* The string fields of an owner, and where ZkOwner keeps them. */
static const struct
{
	const char *name;
	size_t		offset;
}			zk_owner_strings[] =
{
	{"cluster_name", offsetof(ZkOwner, cluster_name)},
	{"host", offsetof(ZkOwner, host)},
	{"database", offsetof(ZkOwner, database)},
	{"user", offsetof(ZkOwner, user)},
	{"application_name", offsetof(ZkOwner, application_name)},
	{"mode", offsetof(ZkOwner, mode)},
	{"scope", offsetof(ZkOwner, scope)},
};

static void zk_vec_init(ZkVec *v, size_t size);
static void *zk_vec_push(ZkVec *v);
static void zk_vec_free_strings(ZkVec *v);
static void zk_owner_init(ZkOwner *owner);
static void zk_owner_value(ZkOwner *owner, ZkJsonValue *v, char **reason);
static void zk_owner_action(void *arg, ZkJsonValue *v);
static void zk_record_list_value(ZkRecordParse *p, ZkJsonValue *v);
static void zk_record_action(void *arg, ZkJsonValue *v);
static bool zk_record_build(ZkRecordParse *p);
static void zk_record_parse_free(ZkRecordParse *p);
static void zk_limit_action(void *arg, ZkJsonValue *v);
static void zk_round_action(void *arg, ZkJsonValue *v);
static ZkDataVerdict zk_round_legacy(const char *data, int len, ZkVec *names,
									 char **reason);
static ZkDataVerdict zk_screen(const char *data, int len, char **reason);
static ZkDataVerdict zk_finish(ZkDataVerdict verdict, bool read,
							   char *parse_reason, char **reason);

/* ---- small helpers ---- */

static void
zk_vec_init(ZkVec *v, size_t size)
{
	v->items = NULL;
	v->n = 0;
	v->max = 0;
	v->size = size;
}

/* room for one more item (the callers bound how many) */
static void *
zk_vec_push(ZkVec *v)
{
	if (v->n == v->max)
	{
		v->max = Max(8, v->max * 2);
		v->items = v->items == NULL ? palloc(v->size * v->max) :
			repalloc(v->items, v->size * v->max);
	}
	return v->items + v->size * v->n++;
}

/* free an array of strings and the strings */
static void
zk_vec_free_strings(ZkVec *v)
{
	for (int i = 0; i < v->n; i++)
		pfree(((char **) v->items)[i]);
	if (v->items != NULL)
		pfree(v->items);
	zk_vec_init(v, sizeof(char *));
}

/*
 * zk_fail
 *		Note why the data is invalid, unless a reason was noted already:
 *		the first check that fails is the one reported.
 */
#define zk_fail(reason, ...) \
	do { \
		if (*(reason) == NULL) \
			*(reason) = psprintf(__VA_ARGS__); \
	} while (0)

/*
 * zk_screen
 *		ZK_DATA_EMPTY for no data, ZK_DATA_FOREIGN for data that is not a
 *		JSON object (*reason says which), else ZK_DATA_OK: the first look of
 *		every reader of JSON data.
 */
static ZkDataVerdict
zk_screen(const char *data, int len, char **reason)
{
	if (data == NULL || len <= 0)
	{
		*reason = psprintf("is empty");
		return ZK_DATA_EMPTY;
	}
	if (!ZkJsonLooksLikeObject(data, len))
	{
		*reason = psprintf("is not a JSON object");
		return ZK_DATA_FOREIGN;
	}
	return ZK_DATA_OK;
}

/*
 * zk_finish
 *		The verdict once a reader is done: the JSON reader's reason
 *		('read' false) or the first check that failed make it invalid.
 *		*reason is set for anything but ZK_DATA_OK.
 */
static ZkDataVerdict
zk_finish(ZkDataVerdict verdict, bool read, char *parse_reason, char **reason)
{
	if (!read)
	{
		/* the JSON reader's reason is in *reason already */
		if (parse_reason != NULL)
			pfree(parse_reason);
		return ZK_DATA_INVALID;
	}
	if (parse_reason != NULL)
	{
		*reason = parse_reason;
		return ZK_DATA_INVALID;
	}
	return verdict;
}

/* ---- owners ---- */

static void
zk_owner_init(ZkOwner *owner)
{
	memset(owner, 0, sizeof(*owner));
	owner->port = -1;
	owner->pid = -1;
	owner->ttl_ms = -1;
}

/*
 * ZkOwnerFree
 *		Free what an owner holds, and empty it.
 */
void
ZkOwnerFree(ZkOwner *owner)
{
	for (size_t i = 0; i < lengthof(zk_owner_strings); i++)
	{
		char	  **slot = (char **) ((char *) owner + zk_owner_strings[i].offset);

		if (*slot != NULL)
			pfree(*slot);
	}
	zk_owner_init(owner);
}

/*
 * zk_owner_value
 *		Check and keep one field of an owner object ('v' is at the depth of
 *		its fields).  A null value is an absent field; fields an owner does
 *		not have are left out.  The first check that fails sets *reason.
 */
static void
zk_owner_value(ZkOwner *owner, ZkJsonValue *v, char **reason)
{
	int64		n;

	if (v->field == NULL || v->in_array)
		return;
	for (size_t i = 0; i < lengthof(zk_owner_strings); i++)
	{
		char	  **slot;

		if (strcmp(v->field, zk_owner_strings[i].name) != 0)
			continue;
		if (v->type == JSON_TOKEN_NULL)
			return;
		if (!ZkJsonString(v, ZK_MAX_FIELD))
		{
			zk_fail(reason, "has a field \"%s\" that is not a string of at most %d bytes",
					zk_owner_strings[i].name, ZK_MAX_FIELD);
			return;
		}
		slot = (char **) ((char *) owner + zk_owner_strings[i].offset);
		if (*slot != NULL)
			pfree(*slot);		/* a field given twice: the last counts */
		*slot = v->token;
		v->token = NULL;
		return;
	}
	if (v->type == JSON_TOKEN_NULL)
		return;
	if (strcmp(v->field, "port") == 0)
	{
		if (ZkJsonInteger(v, 1, 65535, &n))
			owner->port = (int32) n;
		else
			zk_fail(reason, "has a field \"%s\" that is not an integer from 1 to 65535",
					"port");
	}
	else if (strcmp(v->field, "pid") == 0)
	{
		if (ZkJsonInteger(v, 1, PG_INT32_MAX, &n))
			owner->pid = (int32) n;
		else
			zk_fail(reason, "has a field \"%s\" that is not an integer from 1 to %d",
					"pid", PG_INT32_MAX);
	}
	else if (strcmp(v->field, "ttl_ms") == 0)
	{
		if (ZkJsonInteger(v, 1, ZK_MAX_TTL_MS, &n))
			owner->ttl_ms = n;
		else
			zk_fail(reason, "has a field \"%s\" that is not an integer from 1 to " INT64_FORMAT " (ZooKeeper's largest TTL)",
					"ttl_ms", ZK_MAX_TTL_MS);
	}
}

/* the owner reader's action: the fields of the top-level object */
static void
zk_owner_action(void *arg, ZkJsonValue *v)
{
	ZkSimpleParse *p = (ZkSimpleParse *) arg;

	if (v->depth == 1)
		zk_owner_value(p->owner, v, &p->reason);
}

/*
 * ZkReadOwner
 *		The owner a queue node's data describes (see the file header).
 *		Accepts any bytes; on anything but ZK_DATA_OK the owner is empty
 *		(NULL strings, -1 numbers) and *reason (palloc'd) says why.
 */
ZkDataVerdict
ZkReadOwner(const char *data, int len, ZkOwner *owner, char **reason)
{
	ZkSimpleParse p;
	bool		read;
	ZkDataVerdict verdict;

	zk_owner_init(owner);
	*reason = NULL;
	verdict = zk_screen(data, len, reason);
	if (verdict != ZK_DATA_OK)
		return verdict;
	memset(&p, 0, sizeof(p));
	p.owner = owner;
	read = ZkJsonRead(data, len, ZK_OWNER_DATA_MAX, zk_owner_action, &p,
					  reason);
	verdict = zk_finish(ZK_DATA_OK, read, p.reason, reason);
	if (verdict != ZK_DATA_OK)
		ZkOwnerFree(owner);
	return verdict;
}

/*
 * ZkReadLeaseTtl
 *		The ttl a lease node's data records: owner data (ZkReadOwner) with
 *		scope "lease" and a ttl_ms.  Anything else is not ZK_DATA_OK, with
 *		*reason set.
 */
ZkDataVerdict
ZkReadLeaseTtl(const char *data, int len, int64 *ttl_ms, char **reason)
{
	ZkOwner		o;
	ZkDataVerdict verdict = ZkReadOwner(data, len, &o, reason);

	*ttl_ms = -1;
	if (verdict != ZK_DATA_OK)
		return verdict;
	if (o.scope == NULL || strcmp(o.scope, "lease") != 0)
	{
		*reason = psprintf("does not have the scope \"%s\"", "lease");
		verdict = ZK_DATA_INVALID;
	}
	else if (o.ttl_ms < 1)
	{
		*reason = psprintf("does not record the lease's %s", "ttl_ms");
		verdict = ZK_DATA_INVALID;
	}
	else
		*ttl_ms = o.ttl_ms;
	ZkOwnerFree(&o);
	return verdict;
}

/* ---- wait records ---- */

/*
 * zk_record_list_value
 *		One element of one of a record's lists (depth 2, in an array):
 *		checked, bounded, kept.
 */
static void
zk_record_list_value(ZkRecordParse *p, ZkJsonValue *v)
{
	const char *f = v->field;
	bool		target_list = (strcmp(f, "locks") == 0 ||
							   strcmp(f, "nodes") == 0 ||
							   strcmp(f, "modes") == 0);
	ZkVec	   *vec;

	if (strcmp(f, "queued") == 0)
	{
		target_list = true;		/* bounded as the targets are */
		vec = &p->queued;
	}
	else if (target_list || strcmp(f, "blockers") == 0 ||
			 strcmp(f, "owners") == 0 || strcmp(f, "blocker_targets") == 0)
	{
		vec = strcmp(f, "locks") == 0 ? &p->locks :
			strcmp(f, "nodes") == 0 ? &p->nodes :
			strcmp(f, "modes") == 0 ? &p->modes :
			strcmp(f, "blockers") == 0 ? &p->blockers :
			strcmp(f, "owners") == 0 ? &p->owners : &p->btargets;
	}
	else
		return;					/* not a list we know */

	if (vec->n >= (target_list ? ZK_MAX_SET_LOCKS : ZK_MAX_RECORD_BLOCKERS))
	{
		zk_fail(&p->reason, "has more than %d elements in \"%s\"",
				target_list ? ZK_MAX_SET_LOCKS : ZK_MAX_RECORD_BLOCKERS, f);
		return;
	}
	if (vec == &p->locks || vec == &p->nodes || vec == &p->blockers)
	{
		if (!ZkJsonString(v, ZK_MAX_ZNODE_BYTES))
		{
			zk_fail(&p->reason, "has an element of \"%s\" that is not a string of at most %d bytes",
					f, ZK_MAX_ZNODE_BYTES);
			return;
		}
		*(char **) zk_vec_push(vec) = v->token;
		v->token = NULL;
	}
	else if (vec == &p->modes)
	{
		ZkLockMode	mode;

		if (v->type == JSON_TOKEN_STRING && strcmp(v->token, "exclusive") == 0)
			mode = ZK_MODE_EXCLUSIVE;
		else if (v->type == JSON_TOKEN_STRING && strcmp(v->token, "shared") == 0)
			mode = ZK_MODE_SHARED;
		else if (v->type == JSON_TOKEN_STRING && strcmp(v->token, "lease") == 0)
			mode = ZK_MODE_PERMIT;
		else
		{
			zk_fail(&p->reason, "has an element of \"%s\" that is not \"exclusive\", \"shared\" or \"lease\"",
					f);
			return;
		}
		*(ZkLockMode *) zk_vec_push(vec) = mode;
	}
	else if (vec == &p->owners)
	{
		uint64		session;

		if (!ZkJsonHex64(v, &session) || session == 0)
		{
			zk_fail(&p->reason, "has an element of \"%s\" that is not a session id (1 to 16 hex digits, not 0)",
					f);
			return;
		}
		*(int64 *) zk_vec_push(vec) = (int64) session;
	}
	else
	{
		int64		t;

		if (!ZkJsonInteger(v, 0, ZK_MAX_SET_LOCKS - 1, &t))
		{
			zk_fail(&p->reason, "has an element of \"%s\" that is not an integer from 0 to %d",
					f, ZK_MAX_SET_LOCKS - 1);
			return;
		}
		*(int *) zk_vec_push(vec) = (int) t;
	}
}

/*
 * zk_record_action
 *		The wait record reader's action: the top-level fields it knows must
 *		have their types, the owner's fields (in "owner") and the elements
 *		of the lists are checked and kept.  Nothing more is collected once
 *		a check has failed.
 */
static void
zk_record_action(void *arg, ZkJsonValue *v)
{
	ZkRecordParse *p = (ZkRecordParse *) arg;
	const char *f = v->field;

	if (p->reason != NULL || f == NULL)
		return;
	if (v->depth == 1)
	{
		if (strcmp(f, "owner") == 0)
		{
			if (v->type != JSON_TOKEN_OBJECT_START)
				zk_fail(&p->reason, "has a field \"%s\" that is not an object", f);
		}
		else if (strcmp(f, "kind") == 0)
		{
			if (v->type == JSON_TOKEN_STRING && strcmp(v->token, "all") == 0)
				p->rec->kind = ZK_WAIT_ALL_OF;
			else if (v->type == JSON_TOKEN_STRING && strcmp(v->token, "any") == 0)
				p->rec->kind = ZK_WAIT_ANY_OF;
			else
				zk_fail(&p->reason, "has a field \"%s\" that is not \"all\" or \"any\"", f);
		}
		else if (strcmp(f, "locks") == 0 || strcmp(f, "nodes") == 0 ||
				 strcmp(f, "modes") == 0 || strcmp(f, "blockers") == 0 ||
				 strcmp(f, "owners") == 0 || strcmp(f, "blocker_targets") == 0 ||
				 strcmp(f, "queued") == 0)
		{
			if (v->type != JSON_TOKEN_ARRAY_START)
				zk_fail(&p->reason, "has a field \"%s\" that is not an array", f);
		}
		return;
	}
	if (v->depth == 2 && !v->in_array && v->outer != NULL &&
		strcmp(v->outer, "owner") == 0)
		zk_owner_value(&p->owner, v, &p->reason);
	else if (v->depth == 2 && v->in_array)
		zk_record_list_value(p, v);
}

/*
 * zk_record_build
 *		The record from the lists read, once they are known to fit together:
 *		at least one target, as many nodes and modes as locks, as many
 *		owners and targets as blockers, every blocker's target one of the
 *		record's.  False, with p->reason, if they do not.
 */
static bool
zk_record_build(ZkRecordParse *p)
{
	ZkWaitRecord *rec = p->rec;
	int			nb = p->blockers.n;

	if (p->locks.n == 0)
		zk_fail(&p->reason, "lists no %s it waits for", "lock");
	else if (p->nodes.n != p->locks.n || p->modes.n != p->locks.n)
		zk_fail(&p->reason, "has lists of %s of different lengths", "targets");
	else if (p->owners.n != nb || p->btargets.n != nb)
		zk_fail(&p->reason, "has lists of %s of different lengths", "blockers");
	for (int i = 0; p->reason == NULL && i < nb; i++)
	{
		if (((int *) p->btargets.items)[i] >= p->locks.n)
			zk_fail(&p->reason, "has a blocker of a %s it does not list", "target");
	}
	for (int i = 0; p->reason == NULL && i < p->queued.n; i++)
	{
		if (((int *) p->queued.items)[i] >= p->locks.n)
			zk_fail(&p->reason, "has a queued target it does not list");
	}
	if (p->reason != NULL)
		return false;

	rec->ntargets = p->locks.n;
	rec->targets = palloc(sizeof(ZkWaitRecordTarget) * rec->ntargets);
	for (int i = 0; i < rec->ntargets; i++)
	{
		rec->targets[i].lock = ((char **) p->locks.items)[i];
		rec->targets[i].node = ((char **) p->nodes.items)[i];
		rec->targets[i].mode = ((ZkLockMode *) p->modes.items)[i];
		rec->targets[i].queued = false;
	}
	for (int i = 0; i < p->queued.n; i++)
		rec->targets[((int *) p->queued.items)[i]].queued = true;
	rec->nblockers = nb;
	rec->blockers = palloc(sizeof(ZkWaitRecordBlocker) * Max(nb, 1));
	for (int i = 0; i < nb; i++)
	{
		rec->blockers[i].target = ((int *) p->btargets.items)[i];
		rec->blockers[i].node = ((char **) p->blockers.items)[i];
		rec->blockers[i].owner = ((int64 *) p->owners.items)[i];
	}
	/* the strings now belong to the record: free the arrays only */
	p->locks.n = p->nodes.n = p->blockers.n = 0;
	rec->cluster_name = p->owner.cluster_name;
	rec->host = p->owner.host;
	rec->port = p->owner.port;
	rec->pid = p->owner.pid;
	p->owner.cluster_name = p->owner.host = NULL;
	return true;
}

/* free what the record reader collected and did not hand over */
static void
zk_record_parse_free(ZkRecordParse *p)
{
	zk_vec_free_strings(&p->locks);
	zk_vec_free_strings(&p->nodes);
	zk_vec_free_strings(&p->blockers);
	if (p->modes.items != NULL)
		pfree(p->modes.items);
	if (p->owners.items != NULL)
		pfree(p->owners.items);
	if (p->btargets.items != NULL)
		pfree(p->btargets.items);
	if (p->queued.items != NULL)
		pfree(p->queued.items);
	ZkOwnerFree(&p->owner);
}

/*
 * ZkReadWaitRecord
 *		The wait a record's data describes (see the file header and
 *		cluster/wait_record.c); rec->session and rec->czxid are left to the
 *		caller. On anything but ZK_DATA_OK the record is empty and *reason says
 *		why.
 */
ZkDataVerdict
ZkReadWaitRecord(const char *data, int len, ZkWaitRecord *rec, char **reason)
{
	ZkRecordParse p;
	bool		read;
	ZkDataVerdict verdict;

	memset(rec, 0, sizeof(*rec));
	rec->kind = ZK_WAIT_ANY_OF; /* unless it says "all" */
	rec->port = -1;
	rec->pid = -1;
	*reason = NULL;
	verdict = zk_screen(data, len, reason);
	if (verdict != ZK_DATA_OK)
		return verdict;
	memset(&p, 0, sizeof(p));
	p.rec = rec;
	zk_owner_init(&p.owner);
	zk_vec_init(&p.locks, sizeof(char *));
	zk_vec_init(&p.nodes, sizeof(char *));
	zk_vec_init(&p.modes, sizeof(ZkLockMode));
	zk_vec_init(&p.blockers, sizeof(char *));
	zk_vec_init(&p.owners, sizeof(int64));
	zk_vec_init(&p.btargets, sizeof(int));
	zk_vec_init(&p.queued, sizeof(int));
	read = ZkJsonRead(data, len, ZK_NODE_DATA_MAX, zk_record_action, &p,
					  reason);
	if (read)
		(void) zk_record_build(&p);
	verdict = zk_finish(ZK_DATA_OK, read, p.reason, reason);
	zk_record_parse_free(&p);
	if (verdict != ZK_DATA_OK)
	{
		rec->kind = ZK_WAIT_ANY_OF;
		rec->ntargets = rec->nblockers = 0;
	}
	return verdict;
}

/*
 * ZkWaitRecordFree
 *		Free what a record read by ZkReadWaitRecord holds.
 */
void
ZkWaitRecordFree(ZkWaitRecord *rec)
{
	for (int i = 0; i < rec->ntargets; i++)
	{
		pfree(rec->targets[i].lock);
		pfree(rec->targets[i].node);
	}
	for (int i = 0; i < rec->nblockers; i++)
		pfree(rec->blockers[i].node);
	if (rec->targets != NULL)
		pfree(rec->targets);
	if (rec->blockers != NULL)
		pfree(rec->blockers);
	if (rec->cluster_name != NULL)
		pfree(rec->cluster_name);
	if (rec->host != NULL)
		pfree(rec->host);
	memset(rec, 0, sizeof(*rec));
}

/* ---- a semaphore's limit ---- */

/* the limit reader's action: the top-level "max_leases" */
static void
zk_limit_action(void *arg, ZkJsonValue *v)
{
	ZkSimpleParse *p = (ZkSimpleParse *) arg;
	int64		n;

	if (v->depth != 1 || v->field == NULL ||
		strcmp(v->field, "max_leases") != 0)
		return;
	if (ZkJsonInteger(v, 1, PG_INT32_MAX, &n))
		p->max_leases = (int32) n;
	else
		zk_fail(&p->reason, "has a field \"%s\" that is not an integer from 1 to %d",
				"max_leases", PG_INT32_MAX);
}

/*
 * ZkReadSemaphoreLimit
 *		The limit a semaphore node's data records, {"max_leases":N}.  On
 *		anything but ZK_DATA_OK *max_leases is -1 and *reason says why (an
 *		object without max_leases is invalid).
 */
ZkDataVerdict
ZkReadSemaphoreLimit(const char *data, int len, int32 *max_leases,
					 char **reason)
{
	ZkSimpleParse p;
	bool		read;
	ZkDataVerdict verdict;

	*max_leases = -1;
	*reason = NULL;
	verdict = zk_screen(data, len, reason);
	if (verdict != ZK_DATA_OK)
		return verdict;
	memset(&p, 0, sizeof(p));
	p.max_leases = -1;
	read = ZkJsonRead(data, len, ZK_OWNER_DATA_MAX, zk_limit_action, &p,
					  reason);
	if (read && p.reason == NULL && p.max_leases < 1)
		zk_fail(&p.reason, "does not record %s", "max_leases");
	verdict = zk_finish(ZK_DATA_OK, read, p.reason, reason);
	if (verdict == ZK_DATA_OK)
		*max_leases = p.max_leases;
	return verdict;
}

/* ---- a double barrier's round ---- */

/* the round reader's action: the elements of the top-level "round" */
static void
zk_round_action(void *arg, ZkJsonValue *v)
{
	ZkSimpleParse *p = (ZkSimpleParse *) arg;

	if (p->reason != NULL || v->field == NULL ||
		strcmp(v->field, "round") != 0)
		return;
	if (v->depth == 1)
	{
		if (v->type != JSON_TOKEN_ARRAY_START)
			zk_fail(&p->reason, "has a field \"%s\" that is not an array", "round");
		p->has_round = true;
		return;
	}
	if (v->depth != 2 || !v->in_array)
		return;
	if (p->names.n >= ZK_MAX_ROUND_MEMBERS)
		zk_fail(&p->reason, "has more than %d elements in \"%s\"",
				ZK_MAX_ROUND_MEMBERS, "round");
	else if (!ZkJsonString(v, ZK_MAX_NODE_NAME) || v->token[0] == '\0')
		zk_fail(&p->reason, "has an element of \"%s\" that is not a node name of 1 to %d bytes",
				"round", ZK_MAX_NODE_NAME);
	else
	{
		*(char **) zk_vec_push(&p->names) = v->token;
		v->token = NULL;
	}
}

/*
 * zk_round_legacy
 *		The participants listed in the form older zklock versions wrote,
 *		"zklock-round:<name>,<name>,..." (empty names skipped), with the
 *		bounds of the JSON form.
 */
static ZkDataVerdict
zk_round_legacy(const char *data, int len, ZkVec *names, char **reason)
{
	int			taglen = (int) strlen(ZK_ROUND_LEGACY_TAG);
	int			start = taglen;

	if (len > ZK_NODE_DATA_MAX)
	{
		*reason = psprintf("is %d bytes long, more than the %d bytes zklock reads of such a node",
						   len, ZK_NODE_DATA_MAX);
		return ZK_DATA_INVALID;
	}
	if (pg_encoding_verifymbstr(PG_UTF8, data, len) != len)
	{
		*reason = psprintf("is not valid UTF-8 text");
		return ZK_DATA_INVALID;
	}
	for (int i = taglen; i <= len; i++)
	{
		if (i < len && data[i] != ',')
			continue;
		if (i - start > ZK_MAX_NODE_NAME)
		{
			*reason = psprintf("lists a participant whose name is longer than %d bytes",
							   ZK_MAX_NODE_NAME);
			return ZK_DATA_INVALID;
		}
		if (i > start)
		{
			if (names->n >= ZK_MAX_ROUND_MEMBERS)
			{
				*reason = psprintf("lists more than %d participants",
								   ZK_MAX_ROUND_MEMBERS);
				return ZK_DATA_INVALID;
			}
			*(char **) zk_vec_push(names) = pnstrdup(data + start, i - start);
		}
		start = i + 1;
	}
	return ZK_DATA_OK;
}

/*
 * ZkReadBarrierRound
 *		The participants a double barrier's "ready" node lists (see the
 *		file header), as a palloc'd array of palloc'd names in *names and
 *		their number in *nnames; either form zklock wrote is read.  On
 *		anything but ZK_DATA_OK, no names and *reason says why (a "ready"
 *		that Curator or kazoo created is ZK_DATA_EMPTY or ZK_DATA_FOREIGN).
 */
ZkDataVerdict
ZkReadBarrierRound(const char *data, int len, char ***names, int *nnames,
				   char **reason)
{
	ZkSimpleParse p;
	ZkDataVerdict verdict;
	int			taglen = (int) strlen(ZK_ROUND_LEGACY_TAG);

	*names = NULL;
	*nnames = 0;
	*reason = NULL;
	memset(&p, 0, sizeof(p));
	zk_vec_init(&p.names, sizeof(char *));
	if (data != NULL && len >= taglen &&
		memcmp(data, ZK_ROUND_LEGACY_TAG, taglen) == 0)
		verdict = zk_round_legacy(data, len, &p.names, reason);
	else if ((verdict = zk_screen(data, len, reason)) == ZK_DATA_OK)
	{
		bool		read = ZkJsonRead(data, len, ZK_NODE_DATA_MAX,
									  zk_round_action, &p, reason);

		if (read && p.reason == NULL && !p.has_round)
			zk_fail(&p.reason, "does not list the %s", "round's participants");
		verdict = zk_finish(ZK_DATA_OK, read, p.reason, reason);
	}
	if (verdict != ZK_DATA_OK)
	{
		zk_vec_free_strings(&p.names);
		return verdict;
	}
	*names = (char **) p.names.items;
	*nnames = p.names.n;
	return ZK_DATA_OK;
}
