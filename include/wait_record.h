/*-------------------------------------------------------------------------
 *
 * wait_record.h
 *		The waits zklock's waiters publish for deadlock detection, read
 *		back as records (wait_record.c; published and withdrawn through
 *		deadlock.h; the record's type and reader are node_formats.h's).
 *
 *-------------------------------------------------------------------------
 */
#ifndef WAIT_RECORD_H
#define WAIT_RECORD_H

#include "node_formats.h"
#include "wait_desc.h"
#include "zk_session.h"

extern const ZkWaitRecord *ZkWaitRecordOwn(void);
extern ZkOp *ZkWaitRecordFetch(int64 session);
extern ZkOp *ZkWaitRecordExists(int64 session);
extern ZkWaitRecord *ZkWaitRecordParse(const ZkOp *answer, int64 session);

#endif							/* WAIT_RECORD_H */
