/*-------------------------------------------------------------------------
 *
 * json_reader.c
 *		Reading the small JSON documents zklock keeps in znodes, one
 *		scalar value at a time.
 *
 * Queue nodes carry their owner (node_data.c), deadlock detection's wait
 * records their waits (wait_record.c), a semaphore's node its limit.  Each
 * is a small object of known fields, read with PostgreSQL's JSON parser
 * (common/jsonapi.h, pg_parse_json with semantic actions): this file keeps
 * the one set of actions they share, which tracks how deep the parser is
 * and in which field, and hands every scalar value, with its depth and its
 * field, to the reader's own action.  The reader keeps the values it
 * knows and leaves out the rest.
 *
 * The parser returns its errors instead of throwing them, so data written
 * by another client, or corrupt, is never an ERROR: ZkJsonRead says false,
 * and the reader decides what the values it was given before the fault are
 * worth.  The text is taken as UTF-8 and not checked: a reader that needs
 * valid UTF-8 checks it first.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"

#include "json_reader.h"

/* where the semantic actions keep their state */
typedef struct ZkJsonReadState
{
	ZkJsonScalarAction action;
	void	   *arg;
	int			depth;			/* 0 outside everything, 1 inside the
								 * top-level object or array, ... */
	const char *field[ZK_JSON_MAX_DEPTH + 1];	/* per depth, the field
												 * that holds its values */
} ZkJsonReadState;

static void zk_json_object_start(void *state);
static void zk_json_array_start(void *state);
static void zk_json_field_start(void *state, char *fname, bool isnull);
static void zk_json_scalar(void *state, char *token, JsonTokenType tokentype);
static void zk_json_end(void *state);

/* an object begins: one level deeper, no field yet */
static void
zk_json_object_start(void *state)
{
	ZkJsonReadState *s = (ZkJsonReadState *) state;

	s->depth++;
	if (s->depth <= ZK_JSON_MAX_DEPTH)
		s->field[s->depth] = NULL;
}

/*
 * an array begins: one level deeper, its elements held by the field that
 * holds the array
 */
static void
zk_json_array_start(void *state)
{
	ZkJsonReadState *s = (ZkJsonReadState *) state;

	s->depth++;
	if (s->depth <= ZK_JSON_MAX_DEPTH)
		s->field[s->depth] = s->field[s->depth - 1];
}

/* a field begins: it holds the values that follow at this depth */
static void
zk_json_field_start(void *state, char *fname, bool isnull)
{
	ZkJsonReadState *s = (ZkJsonReadState *) state;

	if (s->depth <= ZK_JSON_MAX_DEPTH)
		s->field[s->depth] = fname;
}

/* a scalar value: the reader's action, with its depth and field */
static void
zk_json_scalar(void *state, char *token, JsonTokenType tokentype)
{
	ZkJsonReadState *s = (ZkJsonReadState *) state;
	const char *field = NULL;

	if (s->depth <= ZK_JSON_MAX_DEPTH)
		field = s->field[s->depth];

	s->action(s->arg, s->depth, field, token, tokentype);
}

/* an object or array ends */
static void
zk_json_end(void *state)
{
	((ZkJsonReadState *) state)->depth--;
}

/*
 * ZkJsonRead
 *		Parse 'len' bytes of JSON at 'data' (not NUL-terminated), calling
 *		'action' with 'arg' for every scalar value (see json_reader.h).
 *		True if the whole text is valid JSON; false if it is not, or is
 *		empty, with the values before the fault already given.
 */
bool
ZkJsonRead(const char *data, int len, ZkJsonScalarAction action, void *arg)
{
	ZkJsonReadState s = {0};
	JsonSemAction sem = {0};
	JsonLexContext *lex;
	char	   *copy;
	bool		ok;

	if (data == NULL || len <= 0)
		return false;
	s.action = action;
	s.arg = arg;
	sem.semstate = &s;
	sem.object_start = zk_json_object_start;
	sem.object_end = zk_json_end;
	sem.array_start = zk_json_array_start;
	sem.array_end = zk_json_end;
	sem.object_field_start = zk_json_field_start;
	sem.scalar = zk_json_scalar;
	/* the parser copies every token it hands over (need_escapes) */
	copy = pnstrdup(data, len);
	lex = makeJsonLexContextCstringLen(copy, len, PG_UTF8, true);
	ok = (pg_parse_json(lex, &sem) == JSON_SUCCESS);
	pfree(copy);
	return ok;
}
