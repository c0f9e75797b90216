/*-------------------------------------------------------------------------
 *
 * sql/arguments.h
 *		Arguments and values the SQL functions share (sql/arguments.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SQL_ARGUMENTS_H
#define SQL_ARGUMENTS_H

#include "datatype/timestamp.h"
#include "fmgr.h"

extern char *ZkPathArg(FunctionCallInfo fcinfo, int argno);
extern int32 ZkNonNegativeArg(FunctionCallInfo fcinfo, int argno,
							  const char *name);
extern TimestampTz ZkUnixMsToTimestampTz(int64 ms);

#endif							/* SQL_ARGUMENTS_H */
