/*
 * zkfloor.c: the raw ZooKeeper C client floor for zklock's benchmark.
 *
 *   zkfloor HOSTS MODE SECONDS OUTFILE [WARMUP_SECONDS [GAP_US]]
 *
 * MODE
 *   create   one ephemeral-sequential create per op (the floor: one quorum
 *            write).  Each timed create is followed by an UNTIMED delete of
 *            the node, waited for, so that the next create starts on an idle
 *            server and the number of children stays at one.
 *   cycle    the textbook lock cycle per op: create EPHEMERAL_SEQUENTIAL,
 *            getChildren of the parent, delete the node; all timed.
 *   createlist  a create and a getChildren sent back to back, both answers
 *            waited for (zklock's acquire without the release before it);
 *            the node is then deleted, untimed, as in "create".
 *   pattern  zklock's own traffic, with no PostgreSQL around it: the delete
 *            of the previous op's node is sent in the background (not
 *            waited for, as zk_unlock does), then after GAP_US microseconds
 *            (standing for the SQL round trip of the next statement,
 *            default 40) a create and a getChildren are sent back to back
 *            and both answers waited for (as zk_lock does).  Only that
 *            wait is timed: it is the ZooKeeper part of zklock's cycle when
 *            the extension adds nothing of its own.
 *
 * Every call uses the synchronous API of libzookeeper_mt.  That API is the
 * asynchronous request plus a wait for its completion, which runs on the
 * library's completion thread: exactly the hop zklock makes (zk_session.c
 * sends zoo_a* requests and sleeps on its latch until the completion thread
 * sets it), so one synchronous call is an honest "one round trip" for an
 * application on this library.
 *
 * The node data is 160 bytes, about the size of zklock's JSON owner record.
 * Per-op latencies (microseconds, one per line) go to OUTFILE; a summary
 * line goes to stdout.  Ops during the first WARMUP_SECONDS (default 0.5)
 * are not recorded.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* the synchronous API is declared only for the multi-threaded library */
#ifndef THREADED
#define THREADED
#endif
#include <zookeeper/zookeeper.h>

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void
die(const char *what, int rc)
{
	fprintf(stderr, "zkfloor: %s: %s\n", what, rc ? zerror(rc) : strerror(errno));
	exit(1);
}

/* completions for the "pattern" mode (they run on the completion thread) */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int	pending_ops;		/* create + getChildren outstanding */
static int	pending_deletes;
static int	async_rc;
static char async_created[256];

static void
create_done(int rc, const char *value, const struct Stat *stat, const void *data)
{
	pthread_mutex_lock(&mu);
	if (rc != ZOK)
		async_rc = rc;
	else
		snprintf(async_created, sizeof(async_created), "%s", value);
	pending_ops--;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

static void
children_done(int rc, const struct String_vector *strings, const void *data)
{
	pthread_mutex_lock(&mu);
	if (rc != ZOK)
		async_rc = rc;
	pending_ops--;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

static void
delete_done(int rc, const void *data)
{
	pthread_mutex_lock(&mu);
	if (rc != ZOK)
		async_rc = rc;
	pending_deletes--;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

static void
spin_us(double us)
{
	double		until = now_us() + us;

	while (now_us() < until)
		;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	const char *hosts;
	const char *mode;
	double		seconds;
	double		warmup = 0.5;
	FILE	   *out;
	zhandle_t  *zh;
	char		data[160];
	char		parent[64];
	char		base[96];
	char		created[256] = "";
	double	   *lat;
	size_t		n = 0,
				cap = 1 << 16;
	double		start,
				t_end,
				t_rec,
				sum = 0;
	int			cycle;
	int			pattern = 0;
	int			createlist = 0;
	double		gap_us = 40;
	int			rc;

	if (argc < 5)
	{
		fprintf(stderr, "usage: zkfloor HOSTS create|createlist|cycle|pattern SECONDS OUTFILE [WARMUP_SECONDS [GAP_US]]\n");
		return 2;
	}
	hosts = argv[1];
	mode = argv[2];
	seconds = atof(argv[3]);
	if (argc > 5)
		warmup = atof(argv[5]);
	if (argc > 6)
		gap_us = atof(argv[6]);
	if (strcmp(mode, "create") == 0)
		cycle = 0;
	else if (strcmp(mode, "createlist") == 0)
	{
		cycle = 0;
		pattern = 1;
		createlist = 1;
	}
	else if (strcmp(mode, "pattern") == 0)
	{
		cycle = 0;
		pattern = 1;
	}
	else if (strcmp(mode, "cycle") == 0)
		cycle = 1;
	else
	{
		fprintf(stderr, "zkfloor: unknown mode %s\n", mode);
		return 2;
	}

	memset(data, 'x', sizeof(data));
	snprintf(parent, sizeof(parent), "/bench_floor_%s", mode);
	snprintf(base, sizeof(base), "%s/lock-", parent);

	zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
	zh = zookeeper_init(hosts, NULL, 30000, NULL, NULL, 0);
	if (zh == NULL)
		die("zookeeper_init", 0);
	/* wait for the session (the first request would wait anyway) */
	for (int i = 0; i < 1000 && zoo_state(zh) != ZOO_CONNECTED_STATE; i++)
		usleep(10000);
	if (zoo_state(zh) != ZOO_CONNECTED_STATE)
	{
		fprintf(stderr, "zkfloor: could not connect to %s\n", hosts);
		return 1;
	}
	rc = zoo_create(zh, parent, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	if (rc != ZOK && rc != ZNODEEXISTS)
		die("create parent", rc);

	out = fopen(argv[4], "w");
	if (out == NULL)
		die(argv[4], 0);
	lat = malloc(sizeof(double) * cap);

	start = now_us();
	t_rec = start + warmup * 1e6;
	t_end = t_rec + seconds * 1e6;
	for (;;)
	{
		double		t0 = now_us(),
					t1;
		struct String_vector children;

		if (t0 >= t_end)
			break;
		if (pattern)
		{
			/* release the previous node in the background */
			if (created[0] != '\0' && !createlist)
			{
				pthread_mutex_lock(&mu);
				pending_deletes++;
				pthread_mutex_unlock(&mu);
				rc = zoo_adelete(zh, created, -1, delete_done, NULL);
				if (rc != ZOK)
					die("adelete", rc);
			}
			if (!createlist)
				spin_us(gap_us);
			t0 = now_us();
			pthread_mutex_lock(&mu);
			pending_ops = 2;
			async_rc = ZOK;
			pthread_mutex_unlock(&mu);
			rc = zoo_acreate2(zh, base, data, sizeof(data), &ZOO_OPEN_ACL_UNSAFE,
							  ZOO_EPHEMERAL | ZOO_SEQUENCE, create_done, NULL);
			if (rc != ZOK)
				die("acreate2", rc);
			rc = zoo_aget_children(zh, parent, 0, children_done, NULL);
			if (rc != ZOK)
				die("aget_children", rc);
			pthread_mutex_lock(&mu);
			while (pending_ops > 0)
				pthread_cond_wait(&cv, &mu);
			rc = async_rc;
			snprintf(created, sizeof(created), "%s", async_created);
			pthread_mutex_unlock(&mu);
			if (rc != ZOK)
				die("create/getChildren", rc);
			t1 = now_us();
			if (createlist)
			{
				rc = zoo_delete(zh, created, -1);	/* untimed */
				if (rc != ZOK)
					die("delete", rc);
			}
		}
		else
		{
			rc = zoo_create(zh, base, data, sizeof(data), &ZOO_OPEN_ACL_UNSAFE,
							ZOO_EPHEMERAL | ZOO_SEQUENCE, created, sizeof(created));
			if (rc != ZOK)
				die("create", rc);
			if (cycle)
			{
				rc = zoo_get_children(zh, parent, 0, &children);
				if (rc != ZOK)
					die("getChildren", rc);
				deallocate_String_vector(&children);
				rc = zoo_delete(zh, created, -1);
				if (rc != ZOK)
					die("delete", rc);
				t1 = now_us();
			}
			else
			{
				t1 = now_us();
				rc = zoo_delete(zh, created, -1);	/* untimed */
				if (rc != ZOK)
					die("delete", rc);
			}
		}
		if (t0 < t_rec)
			continue;
		if (n == cap)
		{
			cap *= 2;
			lat = realloc(lat, sizeof(double) * cap);
		}
		lat[n++] = t1 - t0;
		sum += t1 - t0;
		fprintf(out, "%.1f\n", t1 - t0);
	}
	fclose(out);
	if (pattern)
	{
		pthread_mutex_lock(&mu);
		while (pending_deletes > 0)
			pthread_cond_wait(&cv, &mu);
		pthread_mutex_unlock(&mu);
	}
	zookeeper_close(zh);

	if (n == 0)
	{
		fprintf(stderr, "zkfloor: no op completed\n");
		return 1;
	}
	qsort(lat, n, sizeof(double), cmp_double);
	printf("zkfloor %s: n=%zu mean=%.1f us median=%.1f us p99=%.1f us\n",
		   mode, n, sum / n, lat[n / 2], lat[(size_t) (n * 0.99)]);
	return 0;
}
