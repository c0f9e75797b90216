/*-------------------------------------------------------------------------
 *
 * base/json_reader.c
 *		Reading the small JSON documents zklock keeps in znodes, one value
 *		at a time, and the bounded readers of single values.
 *
 * Queue nodes carry their owner, deadlock detection's wait records their
 * waits, a semaphore's node its limit, a double barrier's "ready" node its
 * round (base/node_formats.c knows each format).  Each is a small object of
 * known fields, read with PostgreSQL's JSON parser (common/jsonapi.h,
 * pg_parse_json with semantic actions): this file keeps the one set of
 * actions they share, which tracks how deep the parser is and in which
 * field, and hands every value, with its depth and its field, to the
 * format's own action.  The format keeps the values it knows, each through
 * a bounded reader (ZkJsonInteger, ZkJsonString, ZkJsonHex64), and leaves
 * out the rest.
 *
 * Every node zklock reads may have been written by anyone (without
 * zklock.auth, every node is world-writable), so its data is input from a
 * stranger.  Before the parser sees it, ZkJsonRead checks and prepares it
 * (zk_json_prepare):
 *
 *	- its length is bounded by the format (at most ZK_NODE_DATA_MAX);
 *	- it must be UTF-8 text (no NUL byte);
 *	- it may nest at most ZK_JSON_MAX_DEPTH levels deep: pg_parse_json
 *	  descends recursively, and in the backend a document nested deeply
 *	  enough makes it raise "stack depth limit exceeded";
 *	- a \u escape of a character outside ASCII is replaced by the UTF-8
 *	  bytes it stands for (a surrogate pair by its one character; a lone
 *	  surrogate makes the text invalid).  In the backend the parser turns
 *	  such an escape into the database encoding, and raises an ERROR when
 *	  that encoding has no such character; the values zklock reads are
 *	  UTF-8 whatever the database's encoding, and the parser now only sees
 *	  escapes of ASCII characters, which it never fails to convert.
 *
 * The parser returns its errors instead of throwing them: data that is not
 * valid JSON makes ZkJsonRead return false with a reason, never an ERROR.
 * Nothing here raises an error or talks to anyone, so this file compiles
 * as frontend code too, for the fuzz driver (test/fuzz).
 *
 *-------------------------------------------------------------------------
 */
#ifdef FRONTEND
#include "postgres_fe.h"
#else
#include "postgres.h"
#endif

#include "mb/pg_wchar.h"

#include "base/json_reader.h"

/* where the semantic actions keep their state */
typedef struct ZkJsonReadState
{
	ZkJsonAction action;
	void	   *arg;
	int			depth;			/* 0 outside everything, 1 inside the
								 * top-level object or array, ... */
	/* per depth: the field that holds its values, and whether we own it */
	char	   *field[ZK_JSON_MAX_DEPTH + 2];
	bool		owned[ZK_JSON_MAX_DEPTH + 2];
	bool		in_array[ZK_JSON_MAX_DEPTH + 2];
} ZkJsonReadState;

static char *zk_json_prepare(const char *data, int len, int *outlen,
							 char **reason);
static bool zk_hex4(const char *s, int avail, pg_wchar *value);
static void zk_json_announce(ZkJsonReadState *s, JsonTokenType type,
							 char *token);
static void zk_json_object_start(void *state);
static void zk_json_array_start(void *state);
static void zk_json_field_start(void *state, char *fname, bool isnull);
static void zk_json_scalar(void *state, char *token, JsonTokenType tokentype);
static void zk_json_end(void *state);

/*
 * zk_hex4
 *		The four hex digits at s (of which 'avail' bytes may be read) as a
 *		number, or false.
 */
static bool
zk_hex4(const char *s, int avail, pg_wchar *value)
{
	char		digits[5];

	if (avail < 4)
		return false;
	memcpy(digits, s, 4);
	digits[4] = '\0';
	if (strspn(digits, "0123456789abcdefABCDEF") != 4)
		return false;
	*value = (pg_wchar) strtol(digits, NULL, 16);
	return true;
}

/*
 * zk_json_prepare
 *		A palloc'd, NUL-terminated copy of 'len' bytes of data for the
 *		parser (see the file header), its length in *outlen; or NULL with
 *		*reason set if the data is not UTF-8 text, nests too deeply, or
 *		has an escape of a lone surrogate.  The copy is never longer than
 *		the data.
 */
static char *
zk_json_prepare(const char *data, int len, int *outlen, char **reason)
{
	char	   *out;
	int			o = 0;
	int			depth = 0;
	bool		in_string = false;

	if (pg_encoding_verifymbstr(PG_UTF8, data, len) != len)
	{
		*reason = psprintf("is not valid UTF-8 text");
		return NULL;
	}
	out = palloc(len + 1);
	for (int i = 0; i < len; i++)
	{
		char		c = data[i];

		if (in_string)
		{
			pg_wchar	cp;

			if (c == '"')
				in_string = false;
			else if (c == '\\' && i + 1 < len && data[i + 1] == 'u' &&
					 zk_hex4(data + i + 2, len - i - 2, &cp) && cp >= 0x80)
			{
				int			used = 6;

				if (is_utf16_surrogate_first(cp))
				{
					pg_wchar	second;

					if (i + 12 > len || data[i + 6] != '\\' ||
						data[i + 7] != 'u' ||
						!zk_hex4(data + i + 8, len - i - 8, &second) ||
						!is_utf16_surrogate_second(second))
					{
						pfree(out);
						*reason = psprintf("has a \\u escape of a lone surrogate");
						return NULL;
					}
					cp = surrogate_pair_to_codepoint(cp, second);
					used = 12;
				}
				else if (is_utf16_surrogate_second(cp))
				{
					pfree(out);
					*reason = psprintf("has a \\u escape of a lone surrogate");
					return NULL;
				}
				unicode_to_utf8(cp, (unsigned char *) out + o);
				o += pg_utf_mblen((unsigned char *) out + o);
				i += used - 1;
				continue;
			}
			else if (c == '\\' && i + 1 < len)
			{
				/* any other escape as it is: \" does not end the string */
				out[o++] = c;
				c = data[++i];
			}
		}
		else if (c == '"')
			in_string = true;
		else if (c == '{' || c == '[')
		{
			if (++depth > ZK_JSON_MAX_DEPTH)
			{
				pfree(out);
				*reason = psprintf("nests more than %d levels deep",
								   ZK_JSON_MAX_DEPTH);
				return NULL;
			}
		}
		else if ((c == '}' || c == ']') && depth > 0)
			depth--;			/* (a stray one is the parser's error) */
		out[o++] = c;
	}
	out[o] = '\0';
	*outlen = o;
	return out;
}

/* hand a value to the reader's action, then free what it did not take */
static void
zk_json_announce(ZkJsonReadState *s, JsonTokenType type, char *token)
{
	ZkJsonValue v;
	int			d = s->depth;

	/* (zk_json_prepare keeps the depth within ZK_JSON_MAX_DEPTH) */
	v.depth = d;
	v.field = d <= ZK_JSON_MAX_DEPTH + 1 ? s->field[d] : NULL;
	v.outer = d >= 1 && d <= ZK_JSON_MAX_DEPTH + 1 ? s->field[d - 1] : NULL;
	v.in_array = d <= ZK_JSON_MAX_DEPTH + 1 && s->in_array[d];
	v.type = type;
	v.token = token;
	s->action(s->arg, &v);
	if (v.token != NULL)
		pfree(v.token);
}

/* an object begins: announced, then one level deeper, no field yet */
static void
zk_json_object_start(void *state)
{
	ZkJsonReadState *s = (ZkJsonReadState *) state;

	zk_json_announce(s, JSON_TOKEN_OBJECT_START, NULL);
	s->depth++;
	if (s->depth <= ZK_JSON_MAX_DEPTH + 1)
	{
		s->field[s->depth] = NULL;
		s->owned[s->depth] = false;
		s->in_array[s->depth] = false;
	}
}

/*
 * an array begins: announced, then one level deeper, its elements held by
 * the field that holds the array
 */
static void
zk_json_array_start(void *state)
{
	ZkJsonReadState *s = (ZkJsonReadState *) state;

	zk_json_announce(s, JSON_TOKEN_ARRAY_START, NULL);
	s->depth++;
	if (s->depth <= ZK_JSON_MAX_DEPTH + 1)
	{
		s->field[s->depth] = s->field[s->depth - 1];
		s->owned[s->depth] = false;
		s->in_array[s->depth] = true;
	}
}

/* a field begins: it holds the values that follow at this depth */
static void
zk_json_field_start(void *state, char *fname, bool isnull)
{
	ZkJsonReadState *s = (ZkJsonReadState *) state;

	if (s->depth > ZK_JSON_MAX_DEPTH + 1)
	{
		if (fname != NULL)
			pfree(fname);
		return;
	}
	if (s->owned[s->depth])
		pfree(s->field[s->depth]);
	s->field[s->depth] = fname;
	s->owned[s->depth] = (fname != NULL);
}

/* a scalar value: the reader's action, with its depth and field */
static void
zk_json_scalar(void *state, char *token, JsonTokenType tokentype)
{
	zk_json_announce((ZkJsonReadState *) state, tokentype, token);
}

/* an object or array ends */
static void
zk_json_end(void *state)
{
	ZkJsonReadState *s = (ZkJsonReadState *) state;

	if (s->depth <= ZK_JSON_MAX_DEPTH + 1)
	{
		if (s->owned[s->depth])
			pfree(s->field[s->depth]);
		s->owned[s->depth] = false;
		s->field[s->depth] = NULL;
	}
	s->depth--;
}

/*
 * ZkJsonLooksLikeObject
 *		Does the data claim to be a JSON object: is its first byte that is
 *		not JSON white space a '{'?  zklock's own documents are objects;
 *		other clients store an address or an identifier.
 */
bool
ZkJsonLooksLikeObject(const char *data, int len)
{
	for (int i = 0; data != NULL && i < len; i++)
	{
		char		c = data[i];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			return c == '{';
	}
	return false;
}

/*
 * ZkJsonRead
 *		Parse 'len' bytes of JSON at 'data' (not NUL-terminated), calling
 *		'action' with 'arg' for every value (see base/json_reader.h).  True if
 *		the whole text is valid JSON; false, with *reason (palloc'd, to
 *		complete "The node's data ..."), if it is longer than 'max_len'
 *		bytes, empty, not UTF-8, nested too deeply (see the file header) or
 *		not valid JSON.  Values before a fault in the JSON have been given
 *		to the action already; the caller decides what they are worth.
 */
bool
ZkJsonRead(const char *data, int len, int max_len, ZkJsonAction action,
		   void *arg, char **reason)
{
	ZkJsonReadState s;
	JsonSemAction sem;
	JsonLexContext *lex;
	JsonParseErrorType rc;
	char	   *copy;
	int			copylen;

	if (data == NULL || len <= 0)
	{
		*reason = psprintf("is empty");
		return false;
	}
	max_len = Min(max_len, ZK_NODE_DATA_MAX);
	if (len > max_len)
	{
		*reason = psprintf("is %d bytes long, more than the %d bytes zklock reads of such a node",
						   len, max_len);
		return false;
	}
	copy = zk_json_prepare(data, len, &copylen, reason);
	if (copy == NULL)
		return false;

	memset(&s, 0, sizeof(s));
	memset(&sem, 0, sizeof(sem));
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
	lex = makeJsonLexContextCstringLen(copy, copylen, PG_UTF8, true);
	rc = pg_parse_json(lex, &sem);

	/* field names left by a document that ended early */
	for (int d = 0; d <= ZK_JSON_MAX_DEPTH + 1; d++)
	{
		if (s.owned[d])
			pfree(s.field[d]);
	}
	if (lex->strval != NULL)
	{
		pfree(lex->strval->data);
		pfree(lex->strval);
	}
	pfree(lex);
	pfree(copy);
	if (rc != JSON_SUCCESS)
	{
		*reason = psprintf("is not valid JSON");
		return false;
	}
	return true;
}

/*
 * ZkJsonInteger
 *		A value that is a JSON number without fraction or exponent, within
 *		[min, max], as *result; false for anything else (another type, a
 *		number out of range or too long for int64).
 */
bool
ZkJsonInteger(const ZkJsonValue *value, int64 min, int64 max, int64 *result)
{
	const char *p = value->token;
	const char *digits;
	int64		v;

	if (value->type != JSON_TOKEN_NUMBER || p == NULL)
		return false;
	/* digits after an optional '-': no fraction or exponent */
	digits = p + (*p == '-');
	if (*digits == '\0' || strspn(digits, "0123456789") != strlen(digits))
		return false;
	errno = 0;
	v = strtoi64(p, NULL, 10);
	if (errno == ERANGE)
		return false;
	if (v < min || v > max)
		return false;
	*result = v;
	return true;
}

/*
 * ZkJsonString
 *		Is the value a JSON string of at most max_len bytes?
 */
bool
ZkJsonString(const ZkJsonValue *value, int max_len)
{
	return value->type == JSON_TOKEN_STRING && value->token != NULL &&
		max_len >= 0 &&
		strnlen(value->token, (size_t) max_len + 1) <= (size_t) max_len;
}

/*
 * ZkJsonHex64
 *		A string value of 1 to 16 hex digits (as zklock writes session ids)
 *		as an unsigned 64-bit number; false for anything else.
 */
bool
ZkJsonHex64(const ZkJsonValue *value, uint64 *result)
{
	const char *p = value->token;
	size_t		len;

	if (value->type != JSON_TOKEN_STRING || p == NULL)
		return false;
	len = strlen(p);
	if (len == 0 || len > 16 || strspn(p, "0123456789abcdefABCDEF") != len)
		return false;
	*result = strtou64(p, NULL, 16);
	return true;
}
