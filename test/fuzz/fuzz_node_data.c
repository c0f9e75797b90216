/*-------------------------------------------------------------------------
 *
 * fuzz_node_data.c
 *		A fuzz driver for the readers of ZooKeeper node data
 *		(src/base/node_formats.c on src/base/json_reader.c), built as frontend code
 *		with AddressSanitizer and UndefinedBehaviorSanitizer
 *		(test/fuzz/Makefile; test/t/043_fuzz_node_data.pl runs it).
 *
 *		fuzz_node_data [SEED [INPUTS]]
 *
 * Generates INPUTS inputs (default 100000) from SEED (default 1), the same
 * ones for the same seed: mutations of valid node data of every format
 * (owner, lease, wait record, semaphore limit, double barrier round in both
 * forms), truncations, random JSON of the known fields, deep nesting,
 * huge numbers, numbers at and past the bounds of every field's range,
 * long strings and lists at and past every bound, \u escapes
 * (surrogate pairs, lone surrogates, code point zero), invalid UTF-8, NUL
 * bytes, and data of 1 MB and more.  Every reader runs on every input, and
 * each result is checked against what the reader promises: every number in
 * its range, every string within its bound and valid UTF-8, every list
 * within its bound, every blocker's target one of the record's (and used
 * as cluster/deadlock.c uses it), nothing kept from data that was not accepted,
 * and reasons that are plain ASCII text of ours, never the data.
 *
 * A finding (a sanitizer's report, or a broken promise) ends the run at
 * once with a non-zero status, naming the reader and the input; otherwise
 * the last line is
 *
 *		inputs: N, bytes: B, findings: 0 (ok O, empty E, foreign F, invalid I; checksum C)
 *
 * after a line counting, for each reader, the inputs it accepted, and the
 * status is 0.  The checksum sums every verdict: the same seed gives the
 * same one.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include <ctype.h>

#include "common/int.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"

#include "base/json_reader.h"
#include "base/node_formats.h"

/*
 * PostgreSQL 15's JSON parser keeps the name of a field it has read when
 * the document ends in a syntax error right after it; that memory is
 * bounded by one input, so leaks are not findings.
 */
const char *__asan_default_options(void);

const char *
__asan_default_options(void)
{
	return "detect_leaks=0";
}

static uint64 rng_state;
static uint64 input_index;
static StringInfoData input;

static const char *const seeds[] = {
	/* owner, as base/node_data.c writes it */
	"{\"cluster_name\":\"main\",\"host\":\"db1\",\"port\":5432,\"pid\":4711,"
	"\"database\":\"app\",\"user\":\"etl\",\"application_name\":\"nightly\","
	"\"mode\":\"exclusive\",\"scope\":\"session\"}",
	/* a lease's */
	"{\"cluster_name\":\"\",\"host\":\"db2\",\"port\":5433,\"pid\":99,"
	"\"database\":null,\"user\":\"u\",\"application_name\":\"psql\","
	"\"mode\":\"exclusive\",\"scope\":\"lease\",\"ttl_ms\":600000}",
	/* non-ASCII, raw and escaped */
	"{\"host\":\"h\\u00e9\\ud83d\\ude00\",\"user\":\"\xc3\xa9t\xc3\xa9\","
	"\"application_name\":\"a\\\"b\\\\c\\n\",\"pid\":1,\"port\":65535}",
	/* wait records, as cluster/wait_record.c writes them */
	"{\"owner\":{\"cluster_name\":\"main\",\"host\":\"db1\",\"port\":5432,"
	"\"pid\":4711,\"database\":\"app\",\"user\":\"etl\","
	"\"application_name\":\"x\",\"mode\":\"exclusive\",\"scope\":\"session\"},"
	"\"kind\":\"all\",\"locks\":[\"/a\"],"
	"\"nodes\":[\"/zklock/a/_c_0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-__WRIT__0000000003\"],"
	"\"modes\":[\"exclusive\"],"
	"\"blockers\":[\"/zklock/a/_c_1f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-__WRIT__0000000002\"],"
	"\"owners\":[\"0100007f2ba90002\"],\"blocker_targets\":[0]}",
	"{\"owner\":{\"host\":\"db1\",\"port\":1,\"pid\":2},\"kind\":\"any\","
	"\"locks\":[\"/a\",\"/b\"],\"nodes\":[\"/zklock/a/n1\",\"/zklock/b/n2\"],"
	"\"modes\":[\"shared\",\"lease\"],\"blockers\":[\"/zklock/a/n0\","
	"\"/zklock/b/n0\",\"/zklock/b/n1\"],\"owners\":[\"1\",\"FFFFFFFFFFFFFFFF\","
	"\"0100007f2ba90003\"],\"blocker_targets\":[0,1,1]}",
	"{\"kind\":\"all\",\"locks\":[\"/s\"],\"nodes\":[\"/zklock/s/leases/l\"],"
	"\"modes\":[\"lease\"],\"blockers\":[],\"owners\":[],\"blocker_targets\":[]}",
	/* a semaphore's limit */
	"{\"max_leases\":2}",
	" {\"max_leases\" : 2147483647 } ",
	/* a double barrier's round, both forms */
	"{\"round\":[\"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\","
	"\"1f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\"]}",
	"zklock-round:0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0,"
	"1f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0,,x",
	/* other clients' data */
	"192.168.17.4",
	"kazoo-4711",
	"{}",
	"[]",
};

/* pieces inserted by the mutations */
static const char *const pieces[] = {
	"\"", "\\", "\\u", "\\u0000", "\\u0041", "\\ud800", "\\udc00",
	"\\ud83d\\ude00", "\\ud83d\\u0041", "\\u00e9", "\\uffff", "\\uD7FF",
	"{", "}", "[", "]", ",", ":", " ", "null", "true", "false", "-", "0",
	"1e9", "1.5", "-1", "-0", "65535", "65536", "2147483647", "2147483648",
	"9223372036854775807", "9223372036854775808", "-9223372036854775808",
	"-9223372036854775809", "99999999999999999999999999999", "1099511627775",
	"1099511627776", "199", "200", "\"port\"", "\"pid\"", "\"ttl_ms\"",
	"\"host\"", "\"scope\"", "\"lease\"", "\"owner\"", "\"locks\"",
	"\"nodes\"", "\"modes\"", "\"blockers\"", "\"owners\"",
	"\"blocker_targets\"", "\"kind\"", "\"all\"", "\"any\"", "\"shared\"",
	"\"max_leases\"", "\"round\"", "zklock-round:", "\"ffffffffffffffff\"",
	"\"0000000000000000\"", "\"00000000000000001\"", "\xff", "\xc0\x80",
	"\xe2\x82", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc3\xa9",
};

/* numbers at and past the bounds of the fields' ranges: 1 to 65535 for a
 * port, 1 to PG_INT32_MAX for a pid or a limit, 1 to ZK_MAX_TTL_MS for a
 * ttl */
static const char *const bounds[] = {
	"0", "1", "-1", "65535", "65536", "2147483647", "2147483648",
	"1099511627775", "1099511627776",
};

/* the fields the readers know, for random documents */
static const char *const fields[] = {
	"cluster_name", "host", "port", "pid", "database", "user",
	"application_name", "mode", "scope", "ttl_ms", "owner", "kind", "locks",
	"nodes", "modes", "blockers", "owners", "blocker_targets", "max_leases",
	"round", "other",
};

static uint64 nverdicts[4];
static uint64 nread[5];			/* ZK_DATA_OK, per reader */
static uint64 checksum;
static uint64 total_bytes;

/* ---- random numbers (splitmix64) ---- */

static uint64
rnd(void)
{
	uint64		z = (rng_state += UINT64CONST(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64CONST(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64CONST(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static int
rnd_below(int n)
{
	return n <= 0 ? 0 : (int) (rnd() % (uint64) n);
}

/* ---- findings ---- */

static void finding(const char *reader, const char *what) pg_attribute_noreturn();

/*
 * finding
 *		A reader broke a promise: say which, on which input, and stop
 *		with a non-zero status.
 */
static void
finding(const char *reader, const char *what)
{
	fprintf(stderr, "FINDING: %s: %s\ninput %llu (%d bytes), first bytes:",
			reader, what, (unsigned long long) input_index, input.len);
	for (int i = 0; i < Min(input.len, 200); i++)
		fprintf(stderr, " %02x", (unsigned char) input.data[i]);
	fprintf(stderr, "\n");
	abort();
}

/* a string a reader kept: at most max bytes, valid UTF-8 */
static void
check_string(const char *reader, const char *s, size_t max)
{
	size_t		len;

	if (s == NULL)
		return;
	len = strlen(s);
	if (len > max)
		finding(reader, "a string longer than its bound");
	if (pg_encoding_verifymbstr(PG_UTF8, s, (int) len) != (int) len)
		finding(reader, "a string that is not valid UTF-8");
}

/* the verdict and reason of a reader: known, reason iff not ok, our text */
static void
check_verdict(const char *reader, ZkDataVerdict v, const char *reason)
{
	static const char *const readers[] = {"ZkReadOwner", "ZkReadLeaseTtl",
		"ZkReadWaitRecord", "ZkReadSemaphoreLimit", "ZkReadBarrierRound"};

	for (int i = 0; i < (int) lengthof(readers); i++)
	{
		if (v == ZK_DATA_OK && strcmp(reader, readers[i]) == 0)
			nread[i]++;
	}
	if (v != ZK_DATA_OK && v != ZK_DATA_EMPTY && v != ZK_DATA_FOREIGN &&
		v != ZK_DATA_INVALID)
		finding(reader, "an unknown verdict");
	if ((v == ZK_DATA_OK) != (reason == NULL))
		finding(reader, "a reason given with ZK_DATA_OK, or none without");
	if (reason != NULL)
	{
		size_t		len = strlen(reason);

		if (len == 0 || len > 200)
			finding(reader, "a reason that is empty or longer than 200 bytes");
		for (size_t i = 0; i < len; i++)
		{
			if (reason[i] < 0x20 || reason[i] > 0x7e)
				finding(reader, "a reason that is not plain ASCII text");
		}
	}
	nverdicts[v]++;
	checksum = checksum * 31 + (uint64) v + 1;
}

static void
check_owner(const char *reader, const ZkOwner *o, bool ok)
{
	const char *const strings[] = {o->cluster_name, o->host, o->database,
		o->user, o->application_name, o->mode, o->scope};

	for (int i = 0; i < (int) lengthof(strings); i++)
	{
		if (!ok && strings[i] != NULL)
			finding(reader, "a field kept from data that was not accepted");
		check_string(reader, strings[i], ZK_MAX_FIELD);
	}
	if (!ok && (o->port != -1 || o->pid != -1 || o->ttl_ms != -1))
		finding(reader, "a number kept from data that was not accepted");
	if (o->port != -1 && (o->port < 1 || o->port > 65535))
		finding(reader, "a port out of range");
	if (o->pid != -1 && o->pid < 1)
		finding(reader, "a pid out of range");
	if (o->ttl_ms != -1 && (o->ttl_ms < 1 || o->ttl_ms > ZK_MAX_TTL_MS))
		finding(reader, "a ttl out of range");
}

/*
 * run_readers
 *		Every reader on the input, every result checked, then freed.
 */
static void
run_readers(void)
{
	const char *data = input.data;
	int			len = input.len;
	char	   *reason;
	ZkDataVerdict v;

	total_bytes += len;

	/* owner */
	{
		ZkOwner		o;

		v = ZkReadOwner(data, len, &o, &reason);
		check_verdict("ZkReadOwner", v, reason);
		check_owner("ZkReadOwner", &o, v == ZK_DATA_OK);
		ZkOwnerFree(&o);
		if (reason)
			pfree(reason);
	}

	/* lease */
	{
		int64		ttl;

		v = ZkReadLeaseTtl(data, len, &ttl, &reason);
		check_verdict("ZkReadLeaseTtl", v, reason);
		if (v == ZK_DATA_OK ? (ttl < 1 || ttl > ZK_MAX_TTL_MS) : ttl != -1)
			finding("ZkReadLeaseTtl", "a ttl out of range");
		if (reason)
			pfree(reason);
	}

	/* wait record, used as cluster/deadlock.c uses one */
	{
		ZkWaitRecord rec;

		v = ZkReadWaitRecord(data, len, &rec, &reason);
		check_verdict("ZkReadWaitRecord", v, reason);
		if (v != ZK_DATA_OK)
		{
			if (rec.ntargets != 0 || rec.nblockers != 0 ||
				rec.targets != NULL || rec.blockers != NULL ||
				rec.cluster_name != NULL || rec.host != NULL)
				finding("ZkReadWaitRecord", "a record kept from data that was not accepted");
		}
		else
		{
			uint64		sum = 0;

			if (rec.ntargets < 1 || rec.ntargets > ZK_MAX_SET_LOCKS)
				finding("ZkReadWaitRecord", "a number of targets out of range");
			if (rec.nblockers < 0 || rec.nblockers > ZK_MAX_RECORD_BLOCKERS)
				finding("ZkReadWaitRecord", "a number of blockers out of range");
			if (rec.kind != ZK_WAIT_ALL_OF && rec.kind != ZK_WAIT_ANY_OF)
				finding("ZkReadWaitRecord", "an unknown kind");
			check_string("ZkReadWaitRecord", rec.cluster_name, ZK_MAX_FIELD);
			check_string("ZkReadWaitRecord", rec.host, ZK_MAX_FIELD);
			if ((rec.port != -1 && (rec.port < 1 || rec.port > 65535)) ||
				(rec.pid != -1 && rec.pid < 1))
				finding("ZkReadWaitRecord", "a port or pid out of range");
			for (int i = 0; i < rec.ntargets; i++)
			{
				check_string("ZkReadWaitRecord", rec.targets[i].lock,
							 ZK_MAX_ZNODE_BYTES);
				check_string("ZkReadWaitRecord", rec.targets[i].node,
							 ZK_MAX_ZNODE_BYTES);
				if (rec.targets[i].mode != ZK_MODE_EXCLUSIVE &&
					rec.targets[i].mode != ZK_MODE_SHARED &&
					rec.targets[i].mode != ZK_MODE_PERMIT)
					finding("ZkReadWaitRecord", "an unknown mode");
			}
			for (int i = 0; i < rec.nblockers; i++)
			{
				const ZkWaitRecordBlocker *b = &rec.blockers[i];

				if (b->owner == 0)
					finding("ZkReadWaitRecord", "a blocker of session 0");
				check_string("ZkReadWaitRecord", b->node, ZK_MAX_ZNODE_BYTES);
				/* as the search does: the blocker's target, by index */
				sum += strlen(rec.targets[b->target].lock);
			}
			checksum += sum;
		}
		ZkWaitRecordFree(&rec);
		if (reason)
			pfree(reason);
	}

	/* a semaphore's limit */
	{
		int32		max_leases;

		v = ZkReadSemaphoreLimit(data, len, &max_leases, &reason);
		check_verdict("ZkReadSemaphoreLimit", v, reason);
		if (v == ZK_DATA_OK ? max_leases < 1 : max_leases != -1)
			finding("ZkReadSemaphoreLimit", "a limit out of range");
		if (reason)
			pfree(reason);
	}

	/* a double barrier's round */
	{
		char	  **names;
		int			n;

		v = ZkReadBarrierRound(data, len, &names, &n, &reason);
		check_verdict("ZkReadBarrierRound", v, reason);
		if (v != ZK_DATA_OK && (n != 0 || names != NULL))
			finding("ZkReadBarrierRound", "names kept from data that was not accepted");
		if (n < 0 || n > ZK_MAX_ROUND_MEMBERS || (n > 0 && names == NULL))
			finding("ZkReadBarrierRound", "a number of names out of range");
		for (int i = 0; i < n; i++)
		{
			if (names[i][0] == '\0')
				finding("ZkReadBarrierRound", "an empty name");
			check_string("ZkReadBarrierRound", names[i], ZK_MAX_NODE_NAME);
			pfree(names[i]);
		}
		if (names != NULL)
			pfree(names);
		if (reason)
			pfree(reason);
	}
}

/* ---- generating inputs ---- */

static void
append_piece(StringInfo s)
{
	appendStringInfoString(s, pieces[rnd_below(lengthof(pieces))]);
}

/* a random JSON value for field f, 'depth' levels in */
static void
random_value(StringInfo s, const char *f, int depth)
{
	int			r = rnd_below(depth > 4 ? 7 : 10);

	switch (r)
	{
		case 0:
			appendStringInfoString(s, "null");
			break;
		case 1:
			/* half the numbers at a bound of some field's range */
			if (rnd_below(2))
				appendStringInfoString(s, bounds[rnd_below(lengthof(bounds))]);
			else
				appendStringInfo(s, "%d", rnd_below(70000) - 100);
			break;
		case 2:
			append_piece(s);
			break;
		case 3:
			appendStringInfo(s, INT64_FORMAT, (int64) rnd());
			break;
		case 4:
		case 5:
			{
				int			n = rnd_below(40);

				appendStringInfoChar(s, '"');
				for (int i = 0; i < n; i++)
				{
					if (rnd_below(8) == 0)
						append_piece(s);
					else
						appendStringInfoChar(s, 'a' + rnd_below(26));
				}
				appendStringInfoChar(s, '"');
				break;
			}
		case 6:
			appendStringInfoString(s, rnd_below(2) ? "\"all\"" : "\"lease\"");
			break;
		case 7:
		case 8:
			{
				int			n = rnd_below(depth <= 1 && rnd_below(10) == 0 ?
										  300 : 6);

				appendStringInfoChar(s, '[');
				for (int i = 0; i < n; i++)
				{
					if (i > 0)
						appendStringInfoChar(s, ',');
					random_value(s, f, depth + 1);
				}
				appendStringInfoChar(s, ']');
				break;
			}
		default:
			{
				int			n = rnd_below(6);

				appendStringInfoChar(s, '{');
				for (int i = 0; i < n; i++)
				{
					const char *g = fields[rnd_below(lengthof(fields))];

					appendStringInfo(s, "%s\"%s\":", i > 0 ? "," : "", g);
					random_value(s, g, depth + 1);
				}
				appendStringInfoChar(s, '}');
				break;
			}
	}
}

/* a random document of the known fields */
static void
gen_random_json(StringInfo s)
{
	int			n = rnd_below(12);

	appendStringInfoChar(s, '{');
	for (int i = 0; i < n; i++)
	{
		const char *f = fields[rnd_below(lengthof(fields))];

		appendStringInfo(s, "%s\"%s\":", i > 0 ? "," : "", f);
		random_value(s, f, 1);
	}
	appendStringInfoChar(s, '}');
}

/* a seed with a few random changes */
static void
gen_mutation(StringInfo s)
{
	const char *seed = seeds[rnd_below(lengthof(seeds))];
	int			nmut = 1 + rnd_below(8);

	appendStringInfoString(s, seed);
	for (int m = 0; m < nmut; m++)
	{
		int			pos = rnd_below(s->len + 1);
		int			kind = rnd_below(8);

		if (s->len == 0)
			kind = 2;
		switch (kind)
		{
			case 0:				/* flip a bit */
				if (pos < s->len)
					s->data[pos] ^= (char) (1 << rnd_below(8));
				break;
			case 1:				/* any byte, NUL included */
				if (pos < s->len)
					s->data[pos] = (char) rnd_below(256);
				break;
			case 2:				/* insert a piece */
			case 3:
				{
					StringInfoData t;

					initStringInfo(&t);
					appendBinaryStringInfo(&t, s->data, pos);
					append_piece(&t);
					appendBinaryStringInfo(&t, s->data + pos, s->len - pos);
					resetStringInfo(s);
					appendBinaryStringInfo(s, t.data, t.len);
					pfree(t.data);
					break;
				}
			case 4:				/* delete a range */
				{
					int			n = rnd_below(20);

					n = Min(n, s->len - pos);

					memmove(s->data + pos, s->data + pos + n, s->len - pos - n);
					s->len -= n;
					s->data[s->len] = '\0';
					break;
				}
			case 5:				/* repeat a range */
				{
					int			n = rnd_below(60);
					int			times = 1 + rnd_below(rnd_below(20) == 0 ? 300 : 3);
					char	   *copy;
					StringInfoData t;

					n = Min(n, s->len - pos);
					copy = palloc(Max(n, 1));

					memcpy(copy, s->data + pos, n);	/* NUL bytes too */

					initStringInfo(&t);
					appendBinaryStringInfo(&t, s->data, pos);
					for (int i = 0; i < times; i++)
						appendBinaryStringInfo(&t, copy, n);
					appendBinaryStringInfo(&t, s->data + pos, s->len - pos);
					resetStringInfo(s);
					appendBinaryStringInfo(s, t.data, t.len);
					pfree(t.data);
					pfree(copy);
					break;
				}
			case 6:				/* the next number made a bound */
				{
					int			start = pos;
					int			end;
					StringInfoData t;

					while (start < s->len && !isdigit((unsigned char) s->data[start]))
						start++;
					if (start == s->len)
						break;
					if (start > 0 && s->data[start - 1] == '-')
						start--;
					end = start + 1;
					while (end < s->len && isdigit((unsigned char) s->data[end]))
						end++;
					initStringInfo(&t);
					appendBinaryStringInfo(&t, s->data, start);
					appendStringInfoString(&t, bounds[rnd_below(lengthof(bounds))]);
					appendBinaryStringInfo(&t, s->data + end, s->len - end);
					resetStringInfo(s);
					appendBinaryStringInfo(s, t.data, t.len);
					pfree(t.data);
					break;
				}
			default:			/* NUL byte */
				if (pos < s->len)
					s->data[pos] = '\0';
				break;
		}
	}
}

/* nesting deep enough to matter, around and far past the bound */
static void
gen_nesting(StringInfo s)
{
	static const int depths[] = {15, 16, 17, 32, 1000, 20000};
	int			d = rnd_below(50) == 0 ? 1000000 :
		depths[rnd_below(lengthof(depths))];
	int			form = rnd_below(4);

	if (form == 0)
		appendStringInfoString(s, "{\"owner\":");
	else if (form == 1)
		appendStringInfoString(s, "{\"round\":");
	else if (form == 2)
		appendStringInfoString(s, "{\"locks\":");
	else
		appendStringInfoChar(s, '{');
	for (int i = 0; i < d && s->len < ZK_NODE_DATA_MAX + 16; i++)
		appendStringInfoString(s, form == 3 ? "\"a\":{" : "[");
	if (rnd_below(2))
	{
		appendStringInfoString(s, "1");
		for (int i = 0; i < d && s->len < 2 * ZK_NODE_DATA_MAX + 32; i++)
			appendStringInfoChar(s, form == 3 ? '}' : ']');
		appendStringInfoChar(s, '}');
	}
}

/* a record with n blockers: at and past the bound, up to a megabyte */
static void
gen_record(StringInfo s, int n)
{
	appendStringInfoString(s, "{\"kind\":\"all\",\"locks\":[\"/a\"],"
						   "\"nodes\":[\"/zklock/a/x\"],\"modes\":[\"exclusive\"],"
						   "\"blockers\":[");
	for (int i = 0; i < n; i++)
		appendStringInfo(s, "%s\"/zklock/a/%d\"", i > 0 ? "," : "", i);
	appendStringInfoString(s, "],\"owners\":[");
	for (int i = 0; i < n; i++)
		appendStringInfo(s, "%s\"%x\"", i > 0 ? "," : "", i + 1);
	appendStringInfoString(s, "],\"blocker_targets\":[");
	for (int i = 0; i < n; i++)
		appendStringInfo(s, "%s0", i > 0 ? "," : "");
	appendStringInfoString(s, "]}");
}

/* long strings, long lists, big data: at and past every bound */
static void
gen_huge(StringInfo s)
{
	static const int lengths[] = {1023, 1024, 1025, 4096, 4097, 70000};
	int			r = rnd_below(100);

	if (r < 30)
	{
		/* a string field of a length around its bound */
		const char *f = rnd_below(2) ? "host" : "application_name";
		int			n = lengths[rnd_below(lengthof(lengths))];

		appendStringInfo(s, "{\"pid\":1,\"%s\":\"", f);
		for (int i = 0; i < n; i++)
			appendStringInfoChar(s, rnd_below(50) ? 'h' : '\xc3');
		appendStringInfoString(s, "\"}");
	}
	else if (r < 50)
		gen_record(s, ZK_MAX_RECORD_BLOCKERS - 1 + rnd_below(3));
	else if (r < 65)
	{
		/* a round of as many names as the bound, give or take */
		int			n = ZK_MAX_ROUND_MEMBERS - 1 + rnd_below(3);
		bool		legacy = rnd_below(2);

		appendStringInfoString(s, legacy ? "zklock-round:" : "{\"round\":[");
		for (int i = 0; i < n; i++)
			appendStringInfo(s, legacy ? "%s%x" : "%s\"%x\"", i > 0 ? "," : "", i);
		if (!legacy)
			appendStringInfoString(s, "]}");
	}
	else if (r < 75)
	{
		/* owner data of the bound's length, give or take */
		int			n = ZK_OWNER_DATA_MAX - 1 + rnd_below(3);

		appendStringInfoString(s, "{\"x\":\"");
		while (s->len < n - 2)
			appendStringInfoChar(s, 'x');
		appendStringInfoString(s, "\"}");
	}
	else if (r < 85)
	{
		/* a legacy round whose one name is too long, or data too long */
		appendStringInfoString(s, "zklock-round:a,");
		for (int i = 0; i < (r < 80 ? ZK_MAX_NODE_NAME + 1 : ZK_NODE_DATA_MAX); i++)
			appendStringInfoChar(s, 'n');
	}
	else
	{
		/* a megabyte, give or take: a document, text, or a record */
		int			n = ZK_NODE_DATA_MAX - 1 + rnd_below(3);
		int			form = rnd_below(3);

		if (form == 0)
		{
			appendStringInfoString(s, "{\"host\":\"h\",\"pad\":\"");
			while (s->len < n - 2)
				appendStringInfoChar(s, 'p');
			appendStringInfoString(s, "\"}");
		}
		else if (form == 1)
		{
			while (s->len < n)
				appendStringInfoChar(s, 'x');
		}
		else
		{
			gen_record(s, 3);
			s->len--;			/* before the closing brace */
			appendStringInfoString(s, ",\"pad\":\"");
			while (s->len < n - 2)
				appendStringInfoChar(s, 'p');
			appendStringInfoString(s, "\"}");
		}
	}
}

/* random bytes */
static void
gen_bytes(StringInfo s)
{
	int			n = rnd_below(512);

	if (rnd_below(2))
		appendStringInfoChar(s, '{');
	for (int i = 0; i < n; i++)
		appendStringInfoChar(s, (char) rnd_below(256));
}

/* \u escapes and raw bytes, valid and not, in an owner's strings */
static void
gen_unicode(StringInfo s)
{
	int			n = 1 + rnd_below(30);

	appendStringInfoString(s, "{\"pid\":7,\"host\":\"");
	for (int i = 0; i < n; i++)
	{
		int			r = rnd_below(6);
		unsigned int cp = (unsigned int) rnd_below(0x10000);

		if (r == 0)
			appendStringInfo(s, "\\u%04x", cp);
		else if (r == 1)
			appendStringInfo(s, "\\u%04X\\u%04x", 0xd800 + rnd_below(0x400),
							 0xdc00 + rnd_below(0x400));
		else if (r == 2)
			appendStringInfo(s, "\\u%04x", 0xd800 + rnd_below(0x800));
		else if (r == 3)
		{
			unsigned char buf[8];

			unicode_to_utf8(1 + rnd_below(0x10ffff), buf);
			appendBinaryStringInfo(s, (char *) buf,
								   pg_utf_mblen(buf));
		}
		else if (r == 4)
			appendStringInfoChar(s, (char) (0x80 + rnd_below(0x80)));
		else
			append_piece(s);
	}
	appendStringInfoString(s, "\",\"user\":\"u\"}");
}

/* a seed cut short */
static void
gen_truncation(StringInfo s)
{
	const char *seed = seeds[rnd_below(lengthof(seeds))];

	appendBinaryStringInfo(s, seed, rnd_below((int) strlen(seed) + 1));
}

/* ---- checks of the single-value readers ---- */

static void
check_value_readers(void)
{
	static const struct
	{
		const char *token;
		bool		ok;
		int64		value;
	}			ints[] = {
		{"0", true, 0},
		{"-0", true, 0},
		{"65535", true, 65535},
		{"9223372036854775807", true, PG_INT64_MAX},
		{"-9223372036854775808", true, PG_INT64_MIN},
		{"9223372036854775808", false, 0},
		{"-9223372036854775809", false, 0},
		{"99999999999999999999999", false, 0},
		{"1.0", false, 0},
		{"1e3", false, 0},
		{"-", false, 0},
		{"", false, 0},
	};
	ZkJsonValue v;
	int64		n;
	uint64		u;

	memset(&v, 0, sizeof(v));
	v.type = JSON_TOKEN_NUMBER;
	for (int i = 0; i < (int) lengthof(ints); i++)
	{
		v.token = (char *) ints[i].token;
		if (ZkJsonInteger(&v, PG_INT64_MIN, PG_INT64_MAX, &n) != ints[i].ok ||
			(ints[i].ok && n != ints[i].value))
			finding("ZkJsonInteger", ints[i].token);
	}
	v.token = "65536";
	if (ZkJsonInteger(&v, 1, 65535, &n))
		finding("ZkJsonInteger", "a value above its range");
	v.token = "0";
	if (ZkJsonInteger(&v, 1, 65535, &n))
		finding("ZkJsonInteger", "a value below its range");
	v.type = JSON_TOKEN_STRING;
	v.token = "12";
	if (ZkJsonInteger(&v, 0, 100, &n))
		finding("ZkJsonInteger", "a string taken for a number");
	v.token = "ffffffffffffffff";
	if (!ZkJsonHex64(&v, &u) || u != PG_UINT64_MAX)
		finding("ZkJsonHex64", "16 hex digits");
	v.token = "10000000000000000";
	if (ZkJsonHex64(&v, &u))
		finding("ZkJsonHex64", "17 hex digits");
	v.token = "";
	if (ZkJsonHex64(&v, &u) || ZkJsonString(&v, -1) || !ZkJsonString(&v, 0))
		finding("ZkJsonHex64/ZkJsonString", "an empty string");
	v.token = "abc";
	if (ZkJsonString(&v, 2) || !ZkJsonString(&v, 3))
		finding("ZkJsonString", "a string at its bound");
}

int
main(int argc, char **argv)
{
	uint64		seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
	long		ninputs = argc > 2 ? strtol(argv[2], NULL, 10) : 100000;

	if (ninputs < 1)
	{
		fprintf(stderr, "usage: %s [SEED [INPUTS]]\n", argv[0]);
		return 2;
	}
	rng_state = seed;
	initStringInfo(&input);
	check_value_readers();

	for (input_index = 0; input_index < (uint64) ninputs; input_index++)
	{
		int			r = rnd_below(1000);

		resetStringInfo(&input);
		if (input_index < lengthof(seeds))
			appendStringInfoString(&input, seeds[input_index]);
		else if (r < 520)
			gen_mutation(&input);
		else if (r < 620)
			gen_truncation(&input);
		else if (r < 760)
			gen_random_json(&input);
		else if (r < 780)
			gen_nesting(&input);
		else if (r < 782)
			gen_huge(&input);
		else if (r < 880)
			gen_bytes(&input);
		else
			gen_unicode(&input);
		run_readers();
	}
	printf("read: owner %llu, lease %llu, record %llu, limit %llu, round %llu\n",
		   (unsigned long long) nread[0], (unsigned long long) nread[1],
		   (unsigned long long) nread[2], (unsigned long long) nread[3],
		   (unsigned long long) nread[4]);
	printf("inputs: %llu, bytes: %llu, findings: 0 (ok %llu, empty %llu, foreign %llu, invalid %llu; checksum %llu)\n",
		   (unsigned long long) input_index,
		   (unsigned long long) total_bytes,
		   (unsigned long long) nverdicts[ZK_DATA_OK],
		   (unsigned long long) nverdicts[ZK_DATA_EMPTY],
		   (unsigned long long) nverdicts[ZK_DATA_FOREIGN],
		   (unsigned long long) nverdicts[ZK_DATA_INVALID],
		   (unsigned long long) checksum);
	return 0;
}
