/*-------------------------------------------------------------------------
 *
 * wait_record.h
 *		The waits zklock's waiters publish for deadlock detection, read
 *		back as records (wait_record.c; published and withdrawn through
 *		deadlock.h).
 *
 *-------------------------------------------------------------------------
 */
#ifndef WAIT_RECORD_H
#define WAIT_RECORD_H

#include "wait_desc.h"
#include "zk_session.h"

/* One wait target as a record describes it. */
typedef struct ZkWaitRecordTarget
{
	char	   *lock;			/* lock path */
	char	   *node;			/* queue node, full path */
	ZkLockMode	mode;			/* exclusive, shared or lease */
} ZkWaitRecordTarget;

/* One node that blocked a target when the record was published. */
typedef struct ZkWaitRecordBlocker
{
	int			target;			/* index into targets */
	char	   *node;			/* full path */
	int64		owner;			/* session owning it */
} ZkWaitRecordBlocker;

/* A published record, read back. */
typedef struct ZkWaitRecord
{
	int64		session;
	int64		czxid;			/* of the record node: publication order */
	ZkWaitKind	kind;
	char	   *cluster_name;
	char	   *host;
	int32		port;
	int32		pid;
	int			ntargets;
	ZkWaitRecordTarget *targets;
	int			nblockers;
	ZkWaitRecordBlocker *blockers;
} ZkWaitRecord;

extern const ZkWaitRecord *ZkWaitRecordOwn(void);
extern ZkOp *ZkWaitRecordFetch(int64 session);
extern ZkOp *ZkWaitRecordExists(int64 session);
extern ZkWaitRecord *ZkWaitRecordParse(const ZkOp *answer, int64 session);

#endif							/* WAIT_RECORD_H */
