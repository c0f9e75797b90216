/*-------------------------------------------------------------------------
 *
 * json_reader.h
 *		Reading the small JSON documents zklock keeps in znodes, one
 *		scalar value at a time (common/jsonapi.h underneath).
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSON_READER_H
#define JSON_READER_H

#include "common/jsonapi.h"

/*
 * What a reader does with each scalar value of a document.  'depth' is 1
 * for the value of a field of the top-level object, 2 one object or array
 * further in, and so on.  'field' names the field that holds the value:
 * in an object the value's own field, in an array the field that holds
 * the array (or the array it is in); NULL where there is none (the
 * elements of a top-level array, a document that is a bare scalar) and
 * deeper than ZK_JSON_MAX_DEPTH.  'token' is palloc'd: the reader may
 * keep it.
 */
typedef void (*ZkJsonScalarAction) (void *arg, int depth, const char *field,
									char *token, JsonTokenType type);

/* deepest level at which values are given their field */
#define ZK_JSON_MAX_DEPTH	8

extern bool ZkJsonRead(const char *data, int len, ZkJsonScalarAction action,
					   void *arg);

#endif							/* JSON_READER_H */
