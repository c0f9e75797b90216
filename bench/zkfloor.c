/*
 * zkfloor.c: the bare ZooKeeper C client's floors for zklock's benchmark
 * (bench/run.sh builds and runs it).
 *
 *   zkfloor HOSTS create|cycle2|cycle SECONDS OUTFILE [WARMUP_SECONDS]
 *   zkfloor HOSTS parallel|contend SECONDS OUTFILE WARMUP_SECONDS THREADS
 *
 * MODE
 *   create   one ephemeral-sequential create per op (the floor: one quorum
 *            write).  Each timed create is followed by an UNTIMED delete of
 *            the node, so that the next create starts on an idle server.
 *   cycle2   the two-write floor of a lock+unlock: create
 *            EPHEMERAL_SEQUENTIAL, then delete it; both timed.
 *   cycle    the textbook lock cycle: create EPHEMERAL_SEQUENTIAL,
 *            getChildren of the parent, delete the node; all timed.
 *   parallel THREADS threads, each with its own session and parent node,
 *            each looping "cycle"; a cycle counts when it ends inside the
 *            measured window [WARMUP, WARMUP + SECONDS).
 *   contend  THREADS threads, each with its own session, all on one lock
 *            node, each looping the textbook herd-free exclusive lock:
 *            create EPHEMERAL_SEQUENTIAL, getChildren; granted when its
 *            node has the lowest sequence, otherwise an exists watch on the
 *            node just before it and a new getChildren once the watch fires
 *            (or at once if that node is already gone); once granted, a
 *            delete of its node.  A grant counts when it comes inside the
 *            window; a grant while another thread holds the lock is a
 *            failure (exit status 1).
 *
 * Every call is synchronous (libzookeeper_mt).  The latency modes write
 * one latency per op (microseconds) to OUTFILE; parallel and contend write
 * "thread count" lines to OUTFILE and print "key value" lines.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#define THREADED				/* the synchronous API of libzookeeper_mt */
#include <zookeeper/zookeeper.h>

#define DATA_LEN 160			/* about the size of zklock's owner record */

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
	fprintf(stderr, "zkfloor: %s failed: %s\n", what, rc ? zerror(rc) : "");
	exit(1);
}

static zhandle_t *
open_session(const char *hosts)
{
	zhandle_t  *zh = zookeeper_init(hosts, NULL, 30000, NULL, NULL, 0);

	if (zh == NULL)
		die("zookeeper_init", 0);
	/* as zklock does: resolve the host list at most every 30 s */
	(void) zoo_set_servers_resolution_delay(zh, 30000);
	for (int i = 0; i < 1000 && zoo_state(zh) != ZOO_CONNECTED_STATE; i++)
		usleep(10000);
	if (zoo_state(zh) != ZOO_CONNECTED_STATE)
		die("connect", 0);
	return zh;
}

static void
ensure_node(zhandle_t *zh, const char *path)
{
	int			rc = zoo_create(zh, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);

	if (rc != ZOK && rc != ZNODEEXISTS)
		die("create parent", rc);
}

static void
create_node(zhandle_t *zh, const char *base, char *created, int len)
{
	static const char data[DATA_LEN] = {'x'};
	int			rc = zoo_create(zh, base, data, DATA_LEN, &ZOO_OPEN_ACL_UNSAFE,
								ZOO_EPHEMERAL | ZOO_SEQUENCE, created, len);

	if (rc != ZOK)
		die("create", rc);
}

static void
delete_node(zhandle_t *zh, const char *node)
{
	int			rc = zoo_delete(zh, node, -1);

	if (rc != ZOK)
		die("delete", rc);
}

static void
list_children(zhandle_t *zh, const char *parent, struct String_vector *kids)
{
	int			rc = zoo_get_children(zh, parent, 0, kids);

	if (rc != ZOK)
		die("getChildren", rc);
}

/* ---------------------------------------------------------------------- */
/* parallel and contend: a session per thread */

typedef struct Thread
{
	pthread_t	tid;
	zhandle_t  *zh;
	char		parent[64];
	char		base[96];
	bool		contend;
	double		t_rec,
				t_end;			/* the measured window */
	long		count;			/* cycles or grants inside it */
	pthread_mutex_t mu;			/* contend: the watch's flag */
	pthread_cond_t cv;
	bool		fired;
} Thread;

static pthread_mutex_t holders_mu = PTHREAD_MUTEX_INITIALIZER;
static int	holders;
static long failures;

static void
watch_fired(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
	Thread	   *t = ctx;

	(void) zh, (void) type, (void) state, (void) path;
	pthread_mutex_lock(&t->mu);
	t->fired = true;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
}

/* the sequence number of a sequential node: its last 10 digits */
static long
node_seq(const char *name)
{
	size_t		len = strlen(name);

	return len < 10 ? -1 : atol(name + len - 10);
}

/* contend: wait until our node is the lowest (true), or the run ends */
static bool
wait_turn(Thread *t, const char *node)
{
	long		mine = node_seq(node);

	for (;;)
	{
		struct String_vector kids;
		long		pred_seq = -1;
		char		pred[256] = "";
		struct Stat st;
		int			rc;

		list_children(t->zh, t->parent, &kids);
		for (int i = 0; i < kids.count; i++)
		{
			long		s = node_seq(kids.data[i]);

			if (s >= 0 && s < mine && s > pred_seq)
			{
				pred_seq = s;
				snprintf(pred, sizeof(pred), "%s/%s", t->parent, kids.data[i]);
			}
		}
		deallocate_String_vector(&kids);
		if (pred_seq < 0)
			return true;
		if (now_us() >= t->t_end + 30e6)
			return false;
		t->fired = false;
		rc = zoo_wexists(t->zh, pred, watch_fired, t, &st);
		if (rc == ZOK)
		{
			pthread_mutex_lock(&t->mu);
			while (!t->fired)
				pthread_cond_wait(&t->cv, &t->mu);
			pthread_mutex_unlock(&t->mu);
		}
		else if (rc != ZNONODE)
			die("wexists", rc);
	}
}

static void *
thread_main(void *arg)
{
	Thread	   *t = arg;
	char		created[256];

	while (now_us() < t->t_end)
	{
		struct String_vector kids;
		double		t1;

		create_node(t->zh, t->base, created, sizeof(created));
		if (!t->contend)
		{
			list_children(t->zh, t->parent, &kids);
			deallocate_String_vector(&kids);
			delete_node(t->zh, created);
			t1 = now_us();
		}
		else
		{
			if (!wait_turn(t, created))
				break;
			t1 = now_us();
			pthread_mutex_lock(&holders_mu);
			if (++holders > 1)
				failures++;
			pthread_mutex_unlock(&holders_mu);
			usleep(0);			/* another thread granted now would overlap */
			pthread_mutex_lock(&holders_mu);
			holders--;
			pthread_mutex_unlock(&holders_mu);
			delete_node(t->zh, created);
		}
		if (t1 >= t->t_rec && t1 < t->t_end)
			t->count++;
	}
	return NULL;
}

static int
run_threads(const char *hosts, bool contend, double seconds,
			const char *outfile, double warmup, int n)
{
	Thread	   *th = calloc(n, sizeof(Thread));
	const char *name = contend ? "contend" : "parallel";
	long		total = 0;
	double		start;
	FILE	   *out;

	for (int i = 0; i < n; i++)
	{
		th[i].zh = open_session(hosts);
		th[i].contend = contend;
		pthread_mutex_init(&th[i].mu, NULL);
		pthread_cond_init(&th[i].cv, NULL);
		snprintf(th[i].parent, sizeof(th[i].parent), contend ?
				 "/bench_floor_contend" : "/bench_floor_parallel_%d", i);
		snprintf(th[i].base, sizeof(th[i].base), "%s/lock-", th[i].parent);
		ensure_node(th[i].zh, th[i].parent);
	}
	start = now_us();
	for (int i = 0; i < n; i++)
	{
		th[i].t_rec = start + warmup * 1e6;
		th[i].t_end = th[i].t_rec + seconds * 1e6;
		if (pthread_create(&th[i].tid, NULL, thread_main, &th[i]) != 0)
			die("pthread_create", 0);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i].tid, NULL);
	out = fopen(outfile, "w");
	if (out == NULL)
		die(outfile, 0);
	for (int i = 0; i < n; i++)
	{
		fprintf(out, "%d %ld\n", i, th[i].count);
		total += th[i].count;
		zookeeper_close(th[i].zh);
	}
	fclose(out);
	printf("raw_%s_threads %d\n", name, n);
	printf("raw_%s_per_s %.1f\n", name, total / seconds);
	if (contend)
		printf("raw_contend_failures %ld\n", failures);
	return total > 0 && failures == 0 ? 0 : 1;
}

/* ---------------------------------------------------------------------- */

int
main(int argc, char **argv)
{
	const char *mode;
	char		parent[64],
				base[96],
				created[256];
	double		seconds,
				warmup = 0.5,
				t_rec,
				t_end,
				sum = 0;
	long		n = 0;
	zhandle_t  *zh;
	FILE	   *out;

	if (argc < 5)
	{
		fprintf(stderr, "usage: zkfloor HOSTS create|cycle2|cycle SECONDS OUTFILE [WARMUP_SECONDS]\n"
				"       zkfloor HOSTS parallel|contend SECONDS OUTFILE WARMUP_SECONDS THREADS\n");
		return 2;
	}
	mode = argv[2];
	seconds = atof(argv[3]);
	if (argc > 5)
		warmup = atof(argv[5]);
	zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
	if (strcmp(mode, "parallel") == 0 || strcmp(mode, "contend") == 0)
		return run_threads(argv[1], mode[0] == 'c', seconds, argv[4], warmup,
						   argc > 6 ? atoi(argv[6]) : 8);
	if (strcmp(mode, "create") != 0 && strcmp(mode, "cycle2") != 0 &&
		strcmp(mode, "cycle") != 0)
	{
		fprintf(stderr, "zkfloor: unknown mode %s\n", mode);
		return 2;
	}
	snprintf(parent, sizeof(parent), "/bench_floor_%s", mode);
	snprintf(base, sizeof(base), "%s/lock-", parent);
	zh = open_session(argv[1]);
	ensure_node(zh, parent);
	out = fopen(argv[4], "w");
	if (out == NULL)
		die(argv[4], 0);
	t_rec = now_us() + warmup * 1e6;
	t_end = t_rec + seconds * 1e6;
	for (;;)
	{
		double		t0 = now_us(),
					t1;

		if (t0 >= t_end)
			break;
		create_node(zh, base, created, sizeof(created));
		if (strcmp(mode, "cycle") == 0)
		{
			struct String_vector kids;

			list_children(zh, parent, &kids);
			deallocate_String_vector(&kids);
		}
		t1 = now_us();
		delete_node(zh, created);	/* untimed in "create" */
		if (strcmp(mode, "create") != 0)
			t1 = now_us();
		if (t0 < t_rec)
			continue;
		fprintf(out, "%.1f\n", t1 - t0);
		sum += t1 - t0;
		n++;
	}
	fclose(out);
	zookeeper_close(zh);
	if (n == 0)
		die("no op completed", 0);
	printf("zkfloor %s: n=%ld mean=%.1f us\n", mode, n, sum / n);
	return 0;
}
