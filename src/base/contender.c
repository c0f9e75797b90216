/*-------------------------------------------------------------------------
 *
 * base/contender.c
 *		Recognising lock contenders among the children of a lock node, and
 *		the ordering rule of the read/write recipe.
 *
 * A child counts as a contender when its name ends in one of the markers
 * below followed by the sequence suffix ZooKeeper appends to sequential
 * nodes ("%010d", so ten digits, or a minus sign and ten digits once the
 * parent's counter has wrapped).  Children with any other name are not
 * part of the queue and are ignored, never an error.
 *
 *		marker		written by							mode
 *		__WRIT__	zklock, Curator InterProcessReadWriteLock	exclusive
 *		__READ__	zklock, Curator InterProcessReadWriteLock	shared
 *		-lock-		Curator InterProcessMutex, go-zookeeper,	exclusive
 *					zklock in the 'mutex' node style
 *		-latch-		Curator LeaderLatch, zklock in the 'latch'	exclusive
 *					node style
 *		__lock__	kazoo Lock								exclusive
 *		__rlock__	kazoo ReadLock							shared
 *
 * Queue order is the order of creation.  ZooKeeper's sequence counter is a
 * signed 32-bit number that wraps from 2147483647 to -2147483648, so the
 * numbers are sorted as a circle: the queue of live nodes occupies a short
 * arc of it, and the queue starts right after the largest gap between
 * consecutive numbers (ZkSortContenders).  Across the wrap, the nodes with
 * negative numbers are the newer ones and come last.  (That holds while
 * the live nodes of one lock span fewer than 2^31 creations.)
 *
 * Lease nodes.  A lease holds its lock with a persistent TTL node instead
 * of an ephemeral one (recipes/lease.c); a persistent contender is a lease's
 * (ZkIsLeaseNode).  The node outlives its taker's session:
 * if the taker dies while it waits, its node would block the queue until
 * the TTL runs out.  So while it waits the node has an ephemeral child
 * (ZK_LEASE_WAITER) of the taker's session, and the grant removes that
 * child and writes the node's data in one transaction.  A lease node whose
 * child was created (cversion > 0) and is gone while its data was never
 * written (version 0) is a lease whose taker died waiting: it holds
 * nothing, and any client may delete it (ZkLeaseNodeAbandoned).  A lease
 * granted at once never had a child (cversion 0); a granted one that waited
 * has version 1 or more; a renewal writes the data too.
 *
 * Shapes.  A node name is input from strangers, and so is the shape its
 * prefix claims (ZkPrefixShape): any client can name a node as zklock
 * does.  Deadlock detection uses a claim only to leave out a node whose
 * owner, if the claim is true, leads nowhere the search does not reach
 * anyway (cluster/deadlock.c); a false claim can hide a cycle through that
 * client, never make one up.
 *
 * Everything here is pure computation on strings and numbers: no
 * ZooKeeper calls.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "base/contender.h"

typedef struct ZkMarker
{
	const char *text;
	ZkLockMode	mode;
	bool		blind;			/* its recipe orders by what follows
								 * "lock-", so it does not see our nodes */
} ZkMarker;

static const ZkMarker zk_markers[] = {
	{ZK_WRITE_MARKER, ZK_MODE_EXCLUSIVE, false},
	{ZK_READ_MARKER, ZK_MODE_SHARED, false},
	{"-lock-", ZK_MODE_EXCLUSIVE, true},
	{"-latch-", ZK_MODE_EXCLUSIVE, true},
	{"__lock__", ZK_MODE_EXCLUSIVE, false},
	{"__rlock__", ZK_MODE_SHARED, false},
};

#define ZK_SEQ_DIGITS 10

static const ZkMarker *ends_with_marker(const char *name, size_t len);
static int	contender_cmp(const void *a, const void *b);

/*
 * ends_with_marker
 *		The contender marker name[0..len) ends with, or NULL.
 */
static const ZkMarker *
ends_with_marker(const char *name, size_t len)
{
	for (size_t i = 0; i < lengthof(zk_markers); i++)
	{
		size_t		mlen = strlen(zk_markers[i].text);

		if (len >= mlen && memcmp(name + len - mlen, zk_markers[i].text, mlen) == 0)
			return &zk_markers[i];
	}
	return NULL;
}

/*
 * ZkIsLeaseNode
 *		Is a contender, by its Stat's ephemeralOwner, a lease's node?  Every
 *		other recipe's queue node is ephemeral, a lease's is persistent (a
 *		TTL node, which the server shows clients as persistent: it keeps
 *		the TTL itself, and the node's type, to itself).
 */
bool
ZkIsLeaseNode(int64 ephemeral_owner)
{
	return ephemeral_owner == 0;
}

/*
 * ZkLeaseNodeAbandoned
 *		Is a node, by its Stat, a lease node whose taker died while it
 *		waited (see the file header)?  Such a node holds nothing.
 */
bool
ZkLeaseNodeAbandoned(int64 ephemeral_owner, int32 version, int32 cversion,
					 int32 num_children)
{
	return ZkIsLeaseNode(ephemeral_owner) && version == 0 && cversion > 0 &&
		num_children == 0;
}

/*
 * ZkParseContender
 *		Decide whether a child name is a lock contender; if so fill *out
 *		(out->name points into the caller's string).
 *
 * The suffix is read as a signed 32-bit number, as ZooKeeper documents that
 * the counter wraps to -2147483648.  A positive suffix is tried first, so
 * that the '-' ending the "-lock-" marker is not taken for a sign.
 */
bool
ZkParseContender(const char *name, ZkContender *out)
{
	size_t		len = strlen(name);
	size_t		digits_at;
	int64		value = 0;
	const ZkMarker *marker;
	bool		negative;

	if (len < ZK_SEQ_DIGITS + 1)
		return false;
	digits_at = len - ZK_SEQ_DIGITS;
	if (strspn(name + digits_at, "0123456789") != ZK_SEQ_DIGITS)
		return false;
	value = strtoi64(name + digits_at, NULL, 10);

	if ((marker = ends_with_marker(name, digits_at)) != NULL)
		negative = false;
	else if (name[digits_at - 1] == '-' &&
			 (marker = ends_with_marker(name, digits_at - 1)) != NULL)
		negative = true;
	else
		return false;

	if (negative)
		value = -value;
	if (value < PG_INT32_MIN || value > PG_INT32_MAX)
		return false;

	out->name = name;
	out->seq = (int32) value;
	out->mode = marker->mode;
	out->blind = marker->blind;
	return true;
}

static int
contender_cmp(const void *a, const void *b)
{
	const ZkContender *ca = (const ZkContender *) a;
	const ZkContender *cb = (const ZkContender *) b;

	if (ca->seq != cb->seq)
		return (ca->seq < cb->seq) ? -1 : 1;
	/* equal sequences cannot happen under one parent; be deterministic */
	return strcmp(ca->name, cb->name);
}

/*
 * ZkSortContenders
 *		Keep the contenders among 'names' and sort them into queue order:
 *		by sequence number around the circle, starting after the largest
 *		gap (see the file header).  'out' must have room for nnames
 *		entries; returns how many it holds.
 */
int
ZkSortContenders(char **names, int nnames, ZkContender *out)
{
	int			n = 0;
	int			start = 0;
	int64		largest;

	for (int i = 0; i < nnames; i++)
	{
		if (ZkParseContender(names[i], &out[n]))
			n++;
	}
	if (n <= 1)
		return n;
	qsort(out, n, sizeof(ZkContender), contender_cmp);

	/* the gap from the last number round to the first, then the others */
	largest = (int64) out[0].seq + ((int64) 1 << 32) - out[n - 1].seq;
	for (int i = 1; i < n; i++)
	{
		int64		gap = (int64) out[i].seq - out[i - 1].seq;

		if (gap > largest)
		{
			largest = gap;
			start = i;
		}
	}
	if (start > 0)
	{
		ZkContender *tmp = palloc(sizeof(ZkContender) * start);

		memcpy(tmp, out, sizeof(ZkContender) * start);
		memmove(out, out + start, sizeof(ZkContender) * (n - start));
		memcpy(out + n - start, tmp, sizeof(ZkContender) * start);
		pfree(tmp);
	}
	return n;
}

/*
 * ZkFindContender
 *		Position of the contender with exactly this name, or -1.
 */
int
ZkFindContender(const ZkContender *c, int n, const char *name)
{
	for (int i = 0; i < n; i++)
	{
		if (strcmp(c[i].name, name) == 0)
			return i;
	}
	return -1;
}

/*
 * ZkBlockingContender
 *		The one node the contender at position 'me' must wait for, or -1 if
 *		it holds the lock.
 *
 * A writer waits for the node just before it, whatever its mode; a reader
 * waits for the nearest writer before it.  Each waiter therefore watches
 * exactly one node, and a release wakes only the waiters it unblocks.
 */
int
ZkBlockingContender(const ZkContender *c, int me, ZkLockMode mode)
{
	for (int i = me - 1; i >= 0; i--)
	{
		if (mode == ZK_MODE_EXCLUSIVE || c[i].mode == ZK_MODE_EXCLUSIVE)
			return i;
	}
	return -1;
}

/*
 * ZkGrantedByPlace
 *		For each of the n contenders of a queue, whether it holds the lock
 *		by its place (ZkBlockingContender finds no node it must wait for),
 *		in one pass over the queue.
 */
void
ZkGrantedByPlace(const ZkContender *c, int n, bool *granted)
{
	bool		writer_before = false;

	for (int i = 0; i < n; i++)
	{
		granted[i] = i == 0 ||
			(c[i].mode == ZK_MODE_SHARED && !writer_before);
		if (c[i].mode != ZK_MODE_SHARED)
			writer_before = true;
	}
}

/*
 * ZkUpgradeLimit
 *		For an upgrade, our exclusive node at position 'me' while our own
 *		shared node ahead of it is granted: the position of the first
 *		exclusive node before 'me' (or 'me').  Only the shared nodes before
 *		that position block the upgrade: they hold the lock with us.  Every
 *		exclusive node from there on waits for our shared node (a granted
 *		shared node has no exclusive node before it), and every node behind
 *		such one waits for it, so none of them can be granted while our
 *		shared node is there; the upgrade does not wait for them, as
 *		PostgreSQL's lock manager grants a lock that conflicts only with
 *		waiters who wait for the requester itself.
 */
int
ZkUpgradeLimit(const ZkContender *c, int me)
{
	for (int i = 0; i < me; i++)
	{
		if (c[i].mode == ZK_MODE_EXCLUSIVE)
			return i;
	}
	return me;
}

/*
 * ZkUpgradeBlockingContender
 *		The one node an upgrade (see ZkUpgradeLimit) waits for: the nearest
 *		shared node before the limit other than our own at 'own'; -1 if
 *		there is none, and the upgrade is granted.
 */
int
ZkUpgradeBlockingContender(const ZkContender *c, int me, int own)
{
	for (int i = ZkUpgradeLimit(c, me) - 1; i >= 0; i--)
	{
		if (i != own)
			return i;
	}
	return -1;
}

/*
 * ZkPrefixShape
 *		The shape of wait a node name's protection prefix claims (see
 *		contender.h): 1 to ZK_MAX_SET_LOCKS for a zklock node of a plain
 *		wait, ZK_SHAPE_NONE for any other name.
 */
int
ZkPrefixShape(const char *name)
{
	const char *u = name + 3;
	int			shape;

	if (strncmp(name, "_c_", 3) != 0 ||
		strnlen(name, ZK_PREFIX_LEN) < ZK_PREFIX_LEN ||
		name[ZK_PREFIX_LEN - 1] != '-')
		return ZK_SHAPE_NONE;
	/* version 8, variant 10 */
	if (u[8] != '-' || u[13] != '-' || u[18] != '-' || u[23] != '-' ||
		u[14] != '8' || strchr("89ab", u[19]) == NULL || u[19] == '\0')
		return ZK_SHAPE_NONE;
	/* the last byte, two lowercase hex digits (a '-' follows them) */
	if (strspn(u + 34, "0123456789abcdef") != 2)
		return ZK_SHAPE_NONE;
	shape = (int) strtol(u + 34, NULL, 16);
	return shape <= ZK_MAX_SET_LOCKS ? shape : ZK_SHAPE_NONE;
}

