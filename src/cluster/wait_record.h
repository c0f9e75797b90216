/*-------------------------------------------------------------------------
 *
 * cluster/wait_record.h
 *		The waits zklock's waiters publish for deadlock detection, read back as
 *		records (cluster/wait_record.c; published and withdrawn through
 *		cluster/deadlock.h; the record's type and reader are
 *		base/node_formats.h's).
 *
 *-------------------------------------------------------------------------
 */
#ifndef CLUSTER_WAIT_RECORD_H
#define CLUSTER_WAIT_RECORD_H

#include "base/vocabulary.h"

#include "base/node_formats.h"
#include "client/client.h"

extern int64 ZkWaitRecordPublish(const ZkWaitDesc *wait);
extern void ZkWaitRecordWithdraw(void);
extern const ZkWaitRecord *ZkWaitRecordOwn(void);
extern ZkOp *ZkWaitRecordFetch(int64 session);
extern ZkOp *ZkWaitRecordExists(int64 session);
extern ZkWaitRecord *ZkWaitRecordParse(const ZkOp *answer, int64 session);
extern bool ZkBlockerOwners(int n, char *const *nodes, int64 *owners,
							char **edges);

#endif							/* CLUSTER_WAIT_RECORD_H */
