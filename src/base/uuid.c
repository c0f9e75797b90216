/*-------------------------------------------------------------------------
 *
 * base/uuid.c
 *		Fresh UUIDs: the protection prefix of every queue node zklock
 *		creates, and the names of the barriers' nodes.
 *
 * Both draw their bytes from one per-process seed advanced by a counter
 * (zk_uuid_bytes), so that a backend never repeats one and backends differ
 * by their random bits.  A plain UUID is of version 4 (random); a
 * protection prefix's is of version 8, its last byte the shape of the
 * wait its nodes belong to (base/contender.h, ZkPrefixShape).
 *
 * ZkIsUuid and ZkIsParticipantName tell names that are UUIDs, zklock's or
 * another client's.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/fmgrprotos.h"

#include "base/contender.h"
#include "base/uuid.h"
#include "base/vocabulary.h"

/*
 * zk_uuid_bytes
 *		16 fresh bytes for a UUID, never the same twice in one process.
 *
 * A process draws 16 bytes from pg_strong_random once (again in a child
 * forked after that); each call adds a counter to bytes 9 to 14 of them
 * (modulo 2^48), so one process cannot repeat them, and two processes
 * differ by the random bits each drew.  (Strong random bytes for each
 * attempt cost more than the rest of an uncontended zk_lock.)
 */
static void
zk_uuid_bytes(uint8 *b)
{
	static uint8 seed[16];
	static int	seed_pid = 0;
	static uint64 counter = 0;
	uint64		low = 0;

	if (seed_pid != MyProcPid)
	{
		if (!pg_strong_random(seed, sizeof(seed)))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not generate random values")));
		seed_pid = MyProcPid;
		counter = 0;
	}
	memcpy(b, seed, 16);
	for (int i = 9; i < 15; i++)
		low = (low << 8) | seed[i];
	low += ++counter;
	for (int i = 14; i >= 9; i--)
	{
		b[i] = (uint8) (low & 0xff);
		low >>= 8;
	}
}

/* a UUID's 16 bytes in their canonical 36-character form, into out */
static void
zk_uuid_format(const uint8 *b, char *out)
{
	char	   *text = DatumGetCString(DirectFunctionCall1(uuid_out,
														   PointerGetDatum(b)));

	memcpy(out, text, ZK_UUID_LEN + 1);
	pfree(text);
}

/*
 * ZkMakeUuid
 *		A fresh version 4 (random) UUID in its canonical 36-character form,
 *		into out[ZK_UUID_LEN + 1]: never the same twice in one process.
 */
void
ZkMakeUuid(char *out)
{
	uint8		b[16];

	zk_uuid_bytes(b);
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	zk_uuid_format(b, out);
}

/*
 * ZkMakeNodePrefix
 *		A fresh "_c_<uuid>-" protection prefix, into out[ZK_PREFIX_LEN + 1],
 *		for the nodes of a wait of the given shape (base/contender.h,
 *		ZkPrefixShape): the UUID is of version 8, its last byte the shape.
 */
void
ZkMakeNodePrefix(char *out, int shape)
{
	uint8		b[16];

	Assert(shape >= 0 && shape <= ZK_MAX_SET_LOCKS);
	zk_uuid_bytes(b);
	b[6] = (b[6] & 0x0f) | 0x80;
	b[8] = (b[8] & 0x3f) | 0x80;
	b[15] = (uint8) shape;
	memcpy(out, "_c_", 3);
	zk_uuid_format(b, out + 3);
	out[ZK_PREFIX_LEN - 1] = '-';
	out[ZK_PREFIX_LEN] = '\0';
}

/*
 * ZkIsUuid
 *		Does s begin with a UUID in its canonical form (36 characters)?
 */
bool
ZkIsUuid(const char *s)
{
	for (int i = 0; i < ZK_UUID_LEN; i++)
	{
		bool		dash = (i == 8 || i == 13 || i == 18 || i == 23);

		if (dash ? s[i] != '-' : !isxdigit((unsigned char) s[i]))
			return false;
	}
	return true;
}

/*
 * ZkIsParticipantName
 *		Is a child named like a double barrier's participant: a UUID, in its
 *		canonical form (zklock, Curator) or as 32 hex digits (kazoo)?
 */
bool
ZkIsParticipantName(const char *name)
{
	size_t		len = strlen(name);

	if (len == ZK_UUID_LEN)
		return ZkIsUuid(name);
	return len == 32 && strspn(name, "0123456789abcdefABCDEF") == len;
}
