/*-------------------------------------------------------------------------
 *
 * base/json_reader.h
 *		Reading the small JSON documents zklock keeps in znodes, one value
 *		at a time (common/jsonapi.h underneath), with the bounded readers
 *		of single values that every format shares.
 *
 * Compiles as backend and as frontend code (the fuzz driver in test/fuzz
 * links it with libpgcommon): nothing here raises an error.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BASE_JSON_READER_H
#define BASE_JSON_READER_H

#include "common/jsonapi.h"

/*
 * The most bytes of one node's data that zklock reads: ZooKeeper's default
 * jute.maxbuffer, the largest node a server stores unless configured
 * otherwise.  Each format may set a lower bound of its own.
 */
#define ZK_NODE_DATA_MAX	(1024 * 1024)

/*
 * The deepest nesting of a document zklock reads (its own documents nest
 * two levels deep); a deeper one is not read at all.
 */
#define ZK_JSON_MAX_DEPTH	16

/*
 * One value of a document, as the reader's action is given it.
 *
 * 'depth' is 0 for the document itself, 1 for a value of the top-level
 * object (or an element of a top-level array), 2 one object or array
 * further in, and so on.  'field' names the field that holds the value: in
 * an object the value's own field, in an array the field that holds the
 * array (or the array it is in); NULL where there is none.  'outer' names
 * the field that holds the object or array the value is in (NULL at depth
 * 1 and 0).  Field names are the parser's: the action must copy what it
 * keeps of them.
 *
 * A scalar comes with its text in 'token' (palloc'd): the action may take
 * it, setting 'token' to NULL; what it leaves is freed.  An object or an
 * array is announced as it begins ('type' JSON_TOKEN_OBJECT_START or
 * JSON_TOKEN_ARRAY_START, no token), then its values follow.
 */
typedef struct ZkJsonValue
{
	int			depth;
	const char *field;
	const char *outer;
	bool		in_array;		/* an element of an array */
	JsonTokenType type;
	char	   *token;
} ZkJsonValue;

typedef void (*ZkJsonAction) (void *arg, ZkJsonValue *value);

extern bool ZkJsonLooksLikeObject(const char *data, int len);
extern bool ZkJsonRead(const char *data, int len, int max_len,
					   ZkJsonAction action, void *arg, char **reason);
extern bool ZkJsonInteger(const ZkJsonValue *value, int64 min, int64 max,
						  int64 *result);
extern bool ZkJsonString(const ZkJsonValue *value, int max_len);
extern bool ZkJsonHex64(const ZkJsonValue *value, uint64 *result);

#endif							/* BASE_JSON_READER_H */
