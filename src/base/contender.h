/*-------------------------------------------------------------------------
 *
 * base/contender.h
 *		Recognising lock contenders among the children of a lock node.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BASE_CONTENDER_H
#define BASE_CONTENDER_H

#include "base/vocabulary.h"

/* One queue node of a lock, whoever wrote it. */
typedef struct ZkContender
{
	const char *name;			/* child name (not a full path) */
	int32		seq;			/* ZooKeeper's sequence suffix, signed */
	ZkLockMode	mode;
	bool		blind;			/* written by a recipe that does not see
								 * zklock's nodes (Curator InterProcessMutex,
								 * go-zookeeper: "-lock-"; Curator
								 * LeaderLatch: "-latch-") */
} ZkContender;

/* Our own node-name markers (Apache Curator InterProcessReadWriteLock). */
#define ZK_WRITE_MARKER "__WRIT__"
#define ZK_READ_MARKER	"__READ__"
/* Curator InterProcessMutex: "lock-" after the protection prefix */
#define ZK_MUTEX_MARKER	"lock-"
/* Curator LeaderLatch: "latch-" after the protection prefix */
#define ZK_LATCH_MARKER	"latch-"

/* a UUID in its canonical form */
#define ZK_UUID_LEN		36
/* "_c_" + UUID + "-": Curator's protection prefix */
#define ZK_PREFIX_LEN	(3 + ZK_UUID_LEN + 1)

/*
 * The shape of a zklock queue node's wait, told by its protection prefix:
 * zklock writes the UUID of a prefix in version 8 (custom) form, with its
 * last byte the number of queues the wait that made the node spans (1 for
 * one lock, n for n locks taken at once), or 0 when the node is granted
 * by other rules than its place in the queue (an upgrade or a downgrade).
 * ZkPrefixShape returns 0 for every other name (Curator's and kazoo's
 * random UUIDs, older zklock versions'), which claims nothing.
 */
#define ZK_SHAPE_NONE	0

/*
 * A lease (recipes/lease.c) holds its lock with a TTL node, which clients see
 * as persistent (ephemeralOwner 0).  While its taker waits, the node has one
 * ephemeral child of that name, which keeps the server from reaping it
 * and dies with the taker's session.
 */
#define ZK_LEASE_WAITER "waiter"

extern bool ZkIsLeaseNode(int64 ephemeral_owner);
extern bool ZkLeaseNodeAbandoned(int64 ephemeral_owner, int32 version,
								 int32 cversion, int32 num_children);
extern bool ZkParseContender(const char *name, ZkContender *out);
extern int	ZkSortContenders(char **names, int nnames, ZkContender *out);
extern int	ZkFindContender(const ZkContender *c, int n, const char *name);
extern int	ZkBlockingContender(const ZkContender *c, int me,
								ZkLockMode mode);
extern void ZkGrantedByPlace(const ZkContender *c, int n, bool *granted);
extern int	ZkUpgradeLimit(const ZkContender *c, int me);
extern int	ZkUpgradeBlockingContender(const ZkContender *c, int me, int own);
extern int	ZkPrefixShape(const char *name);

#endif							/* BASE_CONTENDER_H */
