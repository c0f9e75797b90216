/*-------------------------------------------------------------------------
 *
 * sql_values.h
 *		Arguments and values the SQL functions share (sql_values.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SQL_VALUES_H
#define SQL_VALUES_H

#include "datatype/timestamp.h"
#include "fmgr.h"

extern char *ZkPathArg(FunctionCallInfo fcinfo, int argno);
extern int32 ZkNonNegativeArg(FunctionCallInfo fcinfo, int argno,
							  const char *name);
extern TimestampTz ZkUnixMsToTimestampTz(int64 ms);

#endif							/* SQL_VALUES_H */
