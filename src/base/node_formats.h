/*-------------------------------------------------------------------------
 *
 * base/node_formats.h
 *		The formats of the data zklock keeps in ZooKeeper nodes, and their
 *		readers, which bound every value (base/node_formats.c).
 *
 * Compiles as backend and as frontend code (the fuzz driver in test/fuzz):
 * the readers raise nothing; what a caller does with data it cannot read
 * (base/node_data.c's WARNING) is the caller's.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BASE_NODE_FORMATS_H
#define BASE_NODE_FORMATS_H

#include "base/vocabulary.h"

/* the most bytes of a queue node's, or a semaphore node's, data we read */
#define ZK_OWNER_DATA_MAX	(64 * 1024)

/* the longest string value of an owner we keep, in bytes */
#define ZK_MAX_FIELD		1024

/* the longest znode path a wait record may name, in bytes */
#define ZK_MAX_ZNODE_BYTES	4096

/* the most blockers a wait record may list */
#define ZK_MAX_RECORD_BLOCKERS	10000

/* the most participants a "ready" node may list, and their longest name */
#define ZK_MAX_ROUND_MEMBERS	65536
#define ZK_MAX_NODE_NAME	1024

/*
 * Curator's revocation marker (LockInternals.REVOKE_MESSAGE): the whole data
 * that Revoker.attemptRevoke writes into a holder's node to ask it to let
 * go.  ZkIsRevokeMarker is plain C (no PostgreSQL call), so that a client
 * library thread may use it.
 */
#define ZK_REVOKE_MARKER		"__REVOKE__"
#define ZK_REVOKE_MARKER_LEN	(sizeof(ZK_REVOKE_MARKER) - 1)

static inline bool
ZkIsRevokeMarker(const char *data, int len)
{
	return data != NULL && len == (int) ZK_REVOKE_MARKER_LEN &&
		memcmp(data, ZK_REVOKE_MARKER, ZK_REVOKE_MARKER_LEN) == 0;
}

/* What became of a node's data. */
typedef enum ZkDataVerdict
{
	ZK_DATA_OK,					/* zklock's, read */
	ZK_DATA_EMPTY,				/* no data at all */
	ZK_DATA_FOREIGN,			/* not a JSON object: another client's (an
								 * address, an identifier) */
	ZK_DATA_INVALID				/* a JSON object (so it claims to be
								 * zklock's), or zklock's older format, that
								 * fails a check */
} ZkDataVerdict;

/* Owner fields read back from a node; NULL / -1 where absent. */
typedef struct ZkOwner
{
	char	   *cluster_name;
	char	   *host;
	int32		port;			/* 1 .. 65535 */
	int32		pid;			/* 1 .. PG_INT32_MAX */
	char	   *database;
	char	   *user;
	char	   *application_name;
	char	   *mode;
	char	   *scope;
	int64		ttl_ms;			/* a lease's ttl, 1 .. ZK_MAX_TTL_MS */
} ZkOwner;

/* One wait target as a wait record describes it. */
typedef struct ZkWaitRecordTarget
{
	char	   *lock;			/* lock path */
	char	   *node;			/* queue node, full path */
	ZkLockMode	mode;			/* exclusive, shared or lease */
	bool		queued;			/* blocked by the queue ahead of it, which
								 * the record does not list */
} ZkWaitRecordTarget;

/* One node that blocked a target when the record was published. */
typedef struct ZkWaitRecordBlocker
{
	int			target;			/* index into targets */
	char	   *node;			/* full path */
	int64		owner;			/* session owning it, never 0 */
} ZkWaitRecordBlocker;

/* A published wait record (cluster/wait_record.c), read back. */
typedef struct ZkWaitRecord
{
	int64		session;		/* whose record: the caller's to set */
	int64		czxid;			/* of the record node: publication order;
								 * the caller's to set */
	ZkWaitKind	kind;
	char	   *cluster_name;
	char	   *host;
	int32		port;
	int32		pid;
	int			ntargets;		/* 1 .. ZK_MAX_SET_LOCKS */
	ZkWaitRecordTarget *targets;
	int			nblockers;		/* 0 .. ZK_MAX_RECORD_BLOCKERS */
	ZkWaitRecordBlocker *blockers;
} ZkWaitRecord;

extern ZkDataVerdict ZkReadOwner(const char *data, int len, ZkOwner *owner,
								 char **reason);
extern void ZkOwnerFree(ZkOwner *owner);
extern ZkDataVerdict ZkReadLeaseTtl(const char *data, int len, int64 *ttl_ms,
									char **reason);
extern ZkDataVerdict ZkReadWaitRecord(const char *data, int len,
									  ZkWaitRecord *rec, char **reason);
extern void ZkWaitRecordFree(ZkWaitRecord *rec);
extern ZkDataVerdict ZkReadSemaphoreLimit(const char *data, int len,
										  int32 *max_leases, char **reason);
extern ZkDataVerdict ZkReadBarrierRound(const char *data, int len,
										char ***names, int *nnames,
										char **reason);

#define ZK_ROUND_LEGACY_TAG "zklock-round:"

#endif							/* BASE_NODE_FORMATS_H */
