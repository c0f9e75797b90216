/*
 * pgclients.c: libpq clients for zklock's benchmark (bench/run.sh builds it
 * with gcc ... -lpq).  Every measurement is timed here, on the client side,
 * with CLOCK_MONOTONIC.
 *
 *   pgclients contend CONN1 CONN2 NPER PATH SECONDS WARMUP OUTFILE
 *       NPER connections to each server loop zk_lock(PATH) / zk_unlock(PATH)
 *       on the one path, all at once (asynchronous libpq, one poll loop).
 *       The "wait" of a grant is the time from sending zk_lock to its
 *       result; OUTFILE gets one line per grant: server wait_us.
 *
 *   pgclients herd CONN1 CONN2 NPER PATH ZKPORT OUTFILE
 *       A holder on server 1 takes PATH; NPER backends per server queue on
 *       it with zk_lock; once all are queued and watching, the holder
 *       releases and every waiter, when granted, releases at once.  Checks
 *       that all were granted, in fencing-token order, and reads
 *       ZooKeeper's watch counters (four-letter word mntr) before and
 *       after: see BENCHMARKS.md for the method.
 *
 *   pgclients stack CONN PATH NCALLS
 *       Stacked re-acquire: holds PATH, then times one statement of NCALLS
 *       zk_lock(PATH) calls, and the NCALLS+1 zk_unlock calls; the same
 *       with pg_advisory_lock for scale.
 *
 *   pgclients scale CONN NLOCKS PREFIX
 *       One backend takes NLOCKS distinct locks in one statement; memory
 *       (pg_backend_memory_contexts, /proc/PID/status) before and after;
 *       cost of one more lock and of a write transaction while holding
 *       them; zk_unlock_all.
 *
 *   pgclients parallel CONN1 CONN2 NPER PREFIX SECONDS WARMUP
 *       Independent locks in parallel: NPER connections to each server,
 *       connection i looping zk_lock(PREFIX/i) / zk_unlock(PREFIX/i) on its
 *       own path (asynchronous libpq, one poll loop).  A cycle counts when
 *       its zk_unlock result arrives inside [WARMUP, WARMUP + SECONDS).
 *
 *   pgclients release CONN NLOCKS PREFIX
 *       Releasing many locks at once, in one backend: the COMMIT of a
 *       transaction holding NLOCKS transaction locks (PREFIX/1 ..
 *       PREFIX/NLOCKS), and zk_unlock_all() of as many session locks, each
 *       timed alone; the COMMIT of an empty transaction for contrast; then
 *       checks that the queue nodes are gone (zk_lock_queue) right after
 *       the release returned.
 *
 *   pgclients dbarrier CONN1 CONN2 NPER PATH SECONDS WARMUP GAP_MS OUTFILE
 *       A double barrier of 2 * NPER members (NPER connections to each
 *       server), driven in lock step by one asynchronous libpq loop: in
 *       every cycle each connection sends SELECT
 *       zk_double_barrier_enter(PATH, 2 * NPER) and, when its result
 *       arrives, SELECT zk_double_barrier_leave(PATH); the next cycle
 *       starts once every leave has returned.  All members but one send
 *       their enter at once; the last one (connection c mod 2 * NPER in
 *       cycle c, so both servers take turns) sends its enter GAP_MS later,
 *       so that it is the last to arrive.  Cycles that start inside
 *       [WARMUP, WARMUP + SECONDS) are recorded, one line each in OUTFILE:
 *         cycle last round_us release_us fromlast_us gap_us first_release_us leave_us
 *       round_us: the first enter sent -> the last leave result;
 *       release_us: the last member's enter sent (t0) -> the last enter
 *       result ("from the last arrival to every member released");
 *       fromlast_us: t0 -> the last leave result; gap_us: the first enter
 *       sent -> t0 (the deliberate head start of the others);
 *       first_release_us: t0 -> the first enter result; leave_us: the last
 *       enter result -> the last leave result.  An enter result of the
 *       early members that arrives before t0 (the barrier opened without
 *       the last member) is counted as "early"; any result other than true
 *       fails the run.
 *
 * Results are printed as "key value" lines for bench/analyze.py.
 */
#define _GNU_SOURCE				/* ppoll */
#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void
die(const char *fmt,...)
{
	va_list		ap;

	fprintf(stderr, "pgclients: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

static PGconn *
connect_or_die(const char *conninfo)
{
	PGconn	   *c = PQconnectdb(conninfo);

	if (PQstatus(c) != CONNECTION_OK)
		die("connect %s: %s", conninfo, PQerrorMessage(c));
	return c;
}

/* run a query, die on error, return the first value (or "") */
static char *
q1(PGconn *c, const char *sql)
{
	static char buf[8192];
	PGresult   *r = PQexec(c, sql);
	ExecStatusType st = PQresultStatus(r);

	if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK)
		die("%s: %s", sql, PQerrorMessage(c));
	buf[0] = '\0';
	if (st == PGRES_TUPLES_OK && PQntuples(r) > 0 && PQnfields(r) > 0)
		snprintf(buf, sizeof(buf), "%s", PQgetvalue(r, 0, 0));
	PQclear(r);
	return buf;
}

/*
 * q1_try
 *		Like q1, but an error is not fatal: returns NULL (and leaves the
 *		connection usable; the caller must not be inside a transaction).
 *		For columns and settings that some builds of zklock lack.
 */
static char *
q1_try(PGconn *c, const char *sql)
{
	static char buf[8192];
	PGresult   *r = PQexec(c, sql);
	ExecStatusType st = PQresultStatus(r);

	if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK)
	{
		PQclear(r);
		return NULL;
	}
	buf[0] = '\0';
	if (st == PGRES_TUPLES_OK && PQntuples(r) > 0 && PQnfields(r) > 0)
		snprintf(buf, sizeof(buf), "%s", PQgetvalue(r, 0, 0));
	PQclear(r);
	return buf;
}

/* q1_try's value, or "n/a" when the query failed */
static const char *
or_na(const char *v)
{
	return v ? v : "n/a";
}

static double
timed(PGconn *c, const char *sql)
{
	double		t0 = now_us();

	q1(c, sql);
	return now_us() - t0;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return x < y ? -1 : x > y;
}

static int
cmp_ll(const void *a, const void *b)
{
	long long	x = *(const long long *) a,
				y = *(const long long *) b;

	return x < y ? -1 : x > y;
}

static double
pct(double *sorted, int n, double p)
{
	int			i;

	if (n == 0)
		return 0;
	i = (int) (p * n);
	if (i >= n)
		i = n - 1;
	return sorted[i];
}

/* ---------------------------------------------------------------------- */
/* ZooKeeper four-letter words, for the herd test */

/* send a four-letter word to the ZooKeeper server on PORT, return its answer */
static char *
fourlw(int port, const char *cmd)
{
	static char buf[1 << 20];
	struct sockaddr_in sa;
	int			fd = socket(AF_INET, SOCK_STREAM, 0);
	size_t		len = 0;
	ssize_t		r;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) != 0)
		die("4lw %s on port %d: %s", cmd, port, strerror(errno));
	if (write(fd, cmd, strlen(cmd)) != (ssize_t) strlen(cmd))
		die("4lw write: %s", strerror(errno));
	while (len < sizeof(buf) - 1 && (r = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += r;
	close(fd);
	buf[len] = '\0';
	return buf;
}

/* value of "key\tvalue" in mntr output; -1 if absent */
static double
mntr_value(const char *mntr, const char *key)
{
	size_t		klen = strlen(key);
	const char *p = mntr;

	while (p && *p)
	{
		if (strncmp(p, key, klen) == 0 && p[klen] == '\t')
			return atof(p + klen + 1);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* the watch counters we read */
static const char *watch_keys[] = {
	"zk_sum_node_deleted_watch_count",
	"zk_cnt_node_deleted_watch_count",
	"zk_sum_node_changed_watch_count",
	"zk_cnt_node_changed_watch_count",
	"zk_sum_node_children_watch_count",
	"zk_cnt_node_children_watch_count",
	"zk_sum_node_created_watch_count",
	"zk_cnt_node_created_watch_count",
	"zk_packets_sent",
	"zk_packets_received",
	NULL
};

/* ---------------------------------------------------------------------- */
/* asynchronous connections */

typedef enum
{
	ST_IDLE,
	ST_LOCKING,
	ST_UNLOCKING,
	ST_DONE
} ConnState;

typedef struct
{
	PGconn	   *conn;
	int			server;
	ConnState	state;
	double		t_sent;
	long long	token;
	int			granted;
	int			failed;
} Client;

static void
send_or_die(Client *cl, const char *sql)
{
	if (!PQsendQuery(cl->conn, sql))
		die("send %s: %s", sql, PQerrorMessage(cl->conn));
	cl->t_sent = now_us();
}

/*
 * send_prepared_or_die
 *		Send the prepared statement 'name' (no parameters), as an
 *		application using the extended protocol would (pgbench -M prepared).
 */
static void
send_prepared_or_die(Client *cl, const char *name)
{
	if (!PQsendQueryPrepared(cl->conn, name, 0, NULL, NULL, NULL, 0))
		die("send %s: %s", name, PQerrorMessage(cl->conn));
	cl->t_sent = now_us();
}

/*
 * Collect a finished query's result.  Returns 1 when the whole result has
 * arrived (ok set to whether it succeeded, *value to the first value), 0
 * when still busy.
 */
static int
collect(Client *cl, int *ok, long long *value)
{
	PGresult   *r;

	if (!PQconsumeInput(cl->conn))
		die("connection lost: %s", PQerrorMessage(cl->conn));
	if (PQisBusy(cl->conn))
		return 0;
	*ok = 1;
	*value = 0;
	while ((r = PQgetResult(cl->conn)) != NULL)
	{
		if (PQresultStatus(r) != PGRES_TUPLES_OK)
		{
			*ok = 0;
			fprintf(stderr, "pgclients: query failed: %s", PQresultErrorMessage(r));
		}
		else if (PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
			*value = atoll(PQgetvalue(r, 0, 0));
		PQclear(r);
	}
	return 1;
}

/* ---------------------------------------------------------------------- */

/*
 * do_contend
 *		Contention on one path: every connection loops zk_lock / zk_unlock
 *		on the same path; time the wait of every grant in the window.
 */
static int
do_contend(int argc, char **argv)
{
	const char *conninfo[2];
	int			nper;
	const char *path;
	double		seconds,
				warmup;
	FILE	   *out;
	Client	   *cl;
	int			n;
	char		lock_sql[512],
				unlock_sql[512],
				warm_sql[512];
	double		t_rec,
				t_end;
	double	   *waits;
	int			nwaits = 0,
				capw = 1 << 16;
	long long  *tokens;
	int			grants_all = 0,
				failures = 0;
	struct pollfd *pfd;

	if (argc != 9)
		die("usage: contend CONN1 CONN2 NPER PATH SECONDS WARMUP OUTFILE");
	conninfo[0] = argv[2];
	conninfo[1] = argv[3];
	nper = atoi(argv[4]);
	path = argv[5];
	seconds = atof(argv[6]);
	warmup = atof(argv[7]);
	out = fopen(argv[8], "w");
	if (out == NULL)
		die("%s: %s", argv[8], strerror(errno));

	snprintf(lock_sql, sizeof(lock_sql), "SELECT zk_lock('%s')", path);
	snprintf(unlock_sql, sizeof(unlock_sql), "SELECT zk_unlock('%s')", path);
	snprintf(warm_sql, sizeof(warm_sql), "SELECT count(*) FROM zk_lock_queue('%s')", path);

	n = 2 * nper;
	cl = calloc(n, sizeof(Client));
	pfd = calloc(n, sizeof(struct pollfd));
	waits = malloc(sizeof(double) * capw);
	tokens = malloc(sizeof(long long) * capw);
	for (int i = 0; i < n; i++)
	{
		cl[i].server = i % 2;
		cl[i].conn = connect_or_die(conninfo[i % 2]);
		q1(cl[i].conn, warm_sql);	/* opens the ZooKeeper session */
	}

	t_rec = now_us() + warmup * 1e6;
	t_end = t_rec + seconds * 1e6;
	for (int i = 0; i < n; i++)
	{
		send_or_die(&cl[i], lock_sql);
		cl[i].state = ST_LOCKING;
	}

	for (;;)
	{
		int			active = 0;

		for (int i = 0; i < n; i++)
		{
			pfd[i].fd = PQsocket(cl[i].conn);
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
			if (cl[i].state != ST_IDLE)
				active++;
			else
				pfd[i].fd = -1;
		}
		if (active == 0)
			break;
		if (poll(pfd, n, 60000) <= 0)
			die("contend: no progress for 60 s");
		for (int i = 0; i < n; i++)
		{
			int			ok;
			long long	v;
			double		t;

			if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLERR | POLLHUP)))
				continue;
			if (!collect(&cl[i], &ok, &v))
				continue;
			t = now_us();
			if (cl[i].state == ST_LOCKING)
			{
				if (!ok)
				{
					failures++;
					cl[i].state = ST_IDLE;
					continue;
				}
				grants_all++;
				if (t >= t_rec && t < t_end)
				{
					if (nwaits == capw)
					{
						capw *= 2;
						waits = realloc(waits, sizeof(double) * capw);
						tokens = realloc(tokens, sizeof(long long) * capw);
					}
					tokens[nwaits] = v;
					waits[nwaits++] = t - cl[i].t_sent;
					fprintf(out, "%d %.1f\n", cl[i].server + 1, t - cl[i].t_sent);
				}
				send_or_die(&cl[i], unlock_sql);
				cl[i].state = ST_UNLOCKING;
			}
			else if (cl[i].state == ST_UNLOCKING)
			{
				if (!ok)
					failures++;
				if (t < t_end && ok)
				{
					send_or_die(&cl[i], lock_sql);
					cl[i].state = ST_LOCKING;
				}
				else
					cl[i].state = ST_IDLE;
			}
		}
	}
	fclose(out);

	/* every grant must be a new node: distinct fencing tokens */
	{
		long long  *tk = malloc(sizeof(long long) * (nwaits + 1));
		int			dup = 0;

		memcpy(tk, tokens, sizeof(long long) * nwaits);
		qsort(tk, nwaits, sizeof(long long), cmp_ll);
		for (int i = 1; i < nwaits; i++)
			dup += (tk[i] == tk[i - 1]);
		printf("contend_duplicate_tokens %d\n", dup);
		free(tk);
	}

	qsort(waits, nwaits, sizeof(double), cmp_double);
	{
		double		sum = 0;

		for (int i = 0; i < nwaits; i++)
			sum += waits[i];
		printf("contend_clients %d\n", n);
		printf("contend_seconds %.3f\n", seconds);
		printf("contend_grants %d\n", nwaits);
		printf("contend_grants_per_s %.1f\n", nwaits / seconds);
		printf("contend_wait_mean_us %.1f\n", nwaits ? sum / nwaits : 0);
		printf("contend_wait_p50_us %.1f\n", pct(waits, nwaits, 0.50));
		printf("contend_wait_p90_us %.1f\n", pct(waits, nwaits, 0.90));
		printf("contend_wait_p99_us %.1f\n", pct(waits, nwaits, 0.99));
		printf("contend_wait_max_us %.1f\n", nwaits ? waits[nwaits - 1] : 0);
		printf("contend_failures %d\n", failures);
	}
	for (int i = 0; i < n; i++)
		PQfinish(cl[i].conn);
	return failures == 0 ? 0 : 1;
}

/* ---------------------------------------------------------------------- */

/*
 * do_herd
 *		A queue of 2 * NPER waiters behind one holder; count the watch
 *		notifications ZooKeeper sends while they are granted one by one.
 */
static int
do_herd(int argc, char **argv)
{
	const char *conninfo[2];
	int			nper;
	const char *path;
	int			zkport;
	FILE	   *out;
	PGconn	   *holder;
	Client	   *cl;
	int			n;
	char		sql[512],
				lock_sql[512],
				unlock_sql[512],
				queue_sql[512];
	double		before[16],
				after[16];
	char	   *wchs_queued;
	double		t0,
				t_last = 0,
				deadline;
	int			granted = 0,
				done = 0,
				failures = 0,
				inversions = 0,
				queued = 0;
	long long	last_token = -1;
	struct pollfd *pfd;
	double	   *gaps;
	double		t_prev;

	if (argc != 8)
		die("usage: herd CONN1 CONN2 NPER PATH ZKPORT OUTFILE");
	conninfo[0] = argv[2];
	conninfo[1] = argv[3];
	nper = atoi(argv[4]);
	path = argv[5];
	zkport = atoi(argv[6]);
	out = fopen(argv[7], "w");
	if (out == NULL)
		die("%s: %s", argv[7], strerror(errno));
	n = 2 * nper;

	snprintf(lock_sql, sizeof(lock_sql), "SELECT zk_lock('%s')", path);
	snprintf(unlock_sql, sizeof(unlock_sql), "SELECT zk_unlock('%s')", path);
	snprintf(queue_sql, sizeof(queue_sql), "SELECT count(*) FROM zk_lock_queue('%s')", path);

	holder = connect_or_die(conninfo[0]);
	q1(holder, lock_sql);

	cl = calloc(n, sizeof(Client));
	pfd = calloc(n, sizeof(struct pollfd));
	gaps = calloc(n, sizeof(double));
	for (int i = 0; i < n; i++)
	{
		cl[i].server = i % 2;
		cl[i].conn = connect_or_die(conninfo[i % 2]);
		q1(cl[i].conn, queue_sql);	/* opens the ZooKeeper session */
	}
	for (int i = 0; i < n; i++)
	{
		send_or_die(&cl[i], lock_sql);
		cl[i].state = ST_LOCKING;
	}

	/* wait until every waiter is queued and watching its predecessor */
	deadline = now_us() + 60e6;
	for (;;)
	{
		char	   *w;
		char	   *p;
		long		watches = 0;

		queued = atoi(q1(holder, queue_sql));
		w = fourlw(zkport, "wchs");
		p = strstr(w, "Total watches:");
		if (p)
			watches = atol(p + strlen("Total watches:"));
		if (queued == n + 1 && watches >= n)
			break;
		if (now_us() > deadline)
			die("herd: only %d of %d queued (%ld watches) after 60 s", queued - 1, n, watches);
		usleep(50000);
	}
	wchs_queued = strdup(fourlw(zkport, "wchs"));
	{
		char	   *m = fourlw(zkport, "mntr");

		for (int k = 0; watch_keys[k]; k++)
			before[k] = mntr_value(m, watch_keys[k]);
	}
	snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Extension' AND query LIKE 'SELECT zk_lock%%'");
	printf("herd_waiting_extension_server1 %s\n", q1(holder, sql));

	t0 = now_us();
	t_prev = t0;
	q1(holder, unlock_sql);

	while (done < n)
	{
		for (int i = 0; i < n; i++)
		{
			pfd[i].fd = cl[i].state == ST_DONE ? -1 : PQsocket(cl[i].conn);
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
		}
		if (poll(pfd, n, 60000) <= 0)
			die("herd: no grant for 60 s (%d of %d granted)", granted, n);
		for (int i = 0; i < n; i++)
		{
			int			ok;
			long long	v;
			double		t;

			if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLERR | POLLHUP)))
				continue;
			if (!collect(&cl[i], &ok, &v))
				continue;
			t = now_us();
			if (cl[i].state == ST_LOCKING)
			{
				if (!ok)
				{
					failures++;
					cl[i].failed = 1;
					cl[i].state = ST_DONE;
					done++;
					continue;
				}
				cl[i].granted = 1;
				cl[i].token = v;
				if (v <= last_token)
					inversions++;
				last_token = v;
				gaps[granted] = t - t_prev;
				t_prev = t;
				granted++;
				fprintf(out, "%d %d %lld %.1f\n", granted, cl[i].server + 1, v, t - t0);
				send_or_die(&cl[i], unlock_sql);
				cl[i].state = ST_UNLOCKING;
			}
			else if (cl[i].state == ST_UNLOCKING)
			{
				if (!ok)
					failures++;
				cl[i].state = ST_DONE;
				done++;
				t_last = t;
			}
		}
	}
	fclose(out);

	/* wait until the last release reached the server */
	deadline = now_us() + 30e6;
	while (atoi(q1(holder, queue_sql)) != 0)
	{
		if (now_us() > deadline)
			die("herd: queue not empty 30 s after the last release");
		usleep(20000);
	}
	{
		char	   *m = fourlw(zkport, "mntr");

		for (int k = 0; watch_keys[k]; k++)
			after[k] = mntr_value(m, watch_keys[k]);
	}

	printf("herd_waiters %d\n", n);
	printf("herd_granted %d\n", granted);
	printf("herd_failures %d\n", failures);
	printf("herd_token_inversions %d\n", inversions);
	printf("herd_all_granted %d\n", granted == n && failures == 0 && inversions == 0);
	printf("herd_total_ms %.1f\n", (t_last - t0) / 1000.0);
	qsort(gaps, granted, sizeof(double), cmp_double);
	printf("herd_handoff_p50_us %.1f\n", pct(gaps, granted, 0.5));
	printf("herd_handoff_p99_us %.1f\n", pct(gaps, granted, 0.99));
	for (int k = 0; watch_keys[k]; k++)
		printf("herd_delta_%s %.0f\n", watch_keys[k], after[k] - before[k]);
	{
		double		events = 0;
		int			releases = n;	/* holder + n-1 waiters woke someone */

		for (int k = 0; k < 8; k += 2)
			events += after[k] - before[k];
		printf("herd_watch_events %.0f\n", events);
		printf("herd_releases_waking %d\n", releases);
		printf("herd_events_per_release %.3f\n", events / releases);
	}
	{
		/* "N connections watching M paths\nTotal watches:K" */
		for (char *p = wchs_queued; *p; p++)
			if (*p == '\n')
				*p = ' ';
		printf("herd_wchs_while_queued %s\n", wchs_queued);
	}
	for (int i = 0; i < n; i++)
		PQfinish(cl[i].conn);
	PQfinish(holder);
	return (granted == n && failures == 0 && inversions == 0) ? 0 : 1;
}

/* ---------------------------------------------------------------------- */

/*
 * do_stack
 *		Stacked re-acquire of a held lock, against pg_advisory_lock and an
 *		executor baseline; best of 3.
 */
static int
do_stack(int argc, char **argv)
{
	PGconn	   *c;
	const char *path;
	long		ncalls;
	char		sql[512];
	double		best_lock = 1e18,
				best_unlock = 1e18,
				best_adv = 1e18,
				best_advu = 1e18,
				best_base = 1e18;

	if (argc != 5)
		die("usage: stack CONN PATH NCALLS");
	c = connect_or_die(argv[2]);
	path = argv[3];
	ncalls = atol(argv[4]);

	snprintf(sql, sizeof(sql), "SELECT zk_lock('%s')", path);
	q1(c, sql);
	for (int rep = 0; rep < 3; rep++)
	{
		double		t;

		snprintf(sql, sizeof(sql),
				 "SELECT count(zk_lock('%s')) FROM generate_series(1, %ld)", path, ncalls);
		t = timed(c, sql);
		if (t < best_lock)
			best_lock = t;
		snprintf(sql, sizeof(sql),
				 "SELECT count(zk_unlock('%s')) FROM generate_series(1, %ld)", path, ncalls);
		t = timed(c, sql);
		if (t < best_unlock)
			best_unlock = t;
		snprintf(sql, sizeof(sql),
				 "SELECT count(pg_advisory_lock(1)) FROM generate_series(1, %ld)", ncalls);
		t = timed(c, sql);
		if (t < best_adv)
			best_adv = t;
		snprintf(sql, sizeof(sql),
				 "SELECT count(pg_advisory_unlock(1)) FROM generate_series(1, %ld)", ncalls);
		t = timed(c, sql);
		if (t < best_advu)
			best_advu = t;
		snprintf(sql, sizeof(sql),
				 "SELECT count(length('%s')) FROM generate_series(1, %ld)", path, ncalls);
		t = timed(c, sql);
		if (t < best_base)
			best_base = t;
	}
	snprintf(sql, sizeof(sql), "SELECT hold_count FROM zk_locks WHERE path = '%s'", path);
	printf("stack_holds_after %s\n", q1(c, sql));
	snprintf(sql, sizeof(sql), "SELECT zk_unlock('%s')", path);
	q1(c, sql);
	printf("stack_calls %ld\n", ncalls);
	printf("stack_zk_lock_us_per_call %.3f\n", best_lock / ncalls);
	printf("stack_zk_unlock_us_per_call %.3f\n", best_unlock / ncalls);
	printf("stack_pg_advisory_lock_us_per_call %.3f\n", best_adv / ncalls);
	printf("stack_pg_advisory_unlock_us_per_call %.3f\n", best_advu / ncalls);
	printf("stack_baseline_length_us_per_call %.3f\n", best_base / ncalls);
	PQfinish(c);
	return 0;
}

/* ---------------------------------------------------------------------- */

/* a "Field:  N kB" line of /proc/PID/status, in kB; -1 if absent */
static long
proc_status_kb(int pid, const char *field)
{
	char		fn[64],
				line[256];
	FILE	   *f;
	long		v = -1;

	snprintf(fn, sizeof(fn), "/proc/%d/status", pid);
	f = fopen(fn, "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, strlen(field)) == 0 && line[strlen(field)] == ':')
			v = atol(line + strlen(field) + 1);
	fclose(f);
	return v;
}

/* the backend's memory: RSS, and the zklock memory contexts */
static void
memory_report(PGconn *c, int pid, const char *label)
{
	PGresult   *r;

	printf("scale_%s_rss_kb %ld\n", label, proc_status_kb(pid, "VmRSS"));
	printf("scale_%s_rss_anon_kb %ld\n", label, proc_status_kb(pid, "RssAnon"));
	printf("scale_%s_zklock_ctx_bytes %s\n", label,
		   q1(c, "SELECT coalesce(sum(total_bytes), 0) FROM pg_backend_memory_contexts "
			  "WHERE name = 'zklock' OR parent = 'zklock'"));
	printf("scale_%s_zklock_ctx_used_bytes %s\n", label,
		   q1(c, "SELECT coalesce(sum(used_bytes), 0) FROM pg_backend_memory_contexts "
			  "WHERE name = 'zklock' OR parent = 'zklock'"));
	r = PQexec(c, "SELECT name, coalesce(ident, ''), total_bytes FROM pg_backend_memory_contexts "
			   "WHERE name = 'zklock' OR parent = 'zklock' ORDER BY 1, 2");
	if (PQresultStatus(r) == PGRES_TUPLES_OK)
		for (int i = 0; i < PQntuples(r); i++)
			printf("scale_%s_ctx %s/%s=%s\n", label, PQgetvalue(r, i, 0),
				   PQgetvalue(r, i, 1), PQgetvalue(r, i, 2));
	PQclear(r);
	printf("scale_%s_top_ctx_bytes %s\n", label,
		   q1(c, "SELECT sum(total_bytes) FROM pg_backend_memory_contexts"));
}

/*
 * do_scale
 *		One backend takes NLOCKS distinct locks in one statement: time,
 *		memory, and the cost of other statements while holding them.
 */
static int
do_scale(int argc, char **argv)
{
	PGconn	   *c;
	long		nlocks;
	const char *prefix;
	char		sql[1024];
	int			pid;
	double		t;
	double		one_before[7],
				one_after[7],
				xid_before[7],
				xid_after[7];

	if (argc != 5)
		die("usage: scale CONN NLOCKS PREFIX");
	c = connect_or_die(argv[2]);
	nlocks = atol(argv[3]);
	prefix = argv[4];
	pid = atoi(q1(c, "SELECT pg_backend_pid()"));

	/* the session is open, one lock is held (so commits verify) */
	snprintf(sql, sizeof(sql), "SELECT zk_lock('%s/first')", prefix);
	q1(c, sql);
	q1(c, "CREATE TEMP TABLE scale_t (i int)");
	for (int k = 0; k < 7; k++)
	{
		snprintf(sql, sizeof(sql), "SELECT zk_lock('%s/before%d')", prefix, k);
		one_before[k] = timed(c, sql);
	}
	for (int k = 0; k < 7; k++)
		xid_before[k] = timed(c, "INSERT INTO scale_t VALUES (1)");
	memory_report(c, pid, "before");

	snprintf(sql, sizeof(sql),
			 "SELECT count(zk_lock('%s/' || i)) FROM generate_series(1, %ld) i",
			 prefix, nlocks);
	t = timed(c, sql);
	printf("scale_nlocks %ld\n", nlocks);
	printf("scale_one_statement_ms %.1f\n", t / 1000.0);
	printf("scale_us_per_lock %.1f\n", t / nlocks);
	printf("scale_held %s\n", or_na(q1_try(c, "SELECT locks_held FROM zk_session()")));
	memory_report(c, pid, "held");

	for (int k = 0; k < 7; k++)
	{
		snprintf(sql, sizeof(sql), "SELECT zk_lock('%s/after%d')", prefix, k);
		one_after[k] = timed(c, sql);
	}
	for (int k = 0; k < 7; k++)
		xid_after[k] = timed(c, "INSERT INTO scale_t VALUES (1)");
	qsort(one_before, 7, sizeof(double), cmp_double);
	qsort(one_after, 7, sizeof(double), cmp_double);
	qsort(xid_before, 7, sizeof(double), cmp_double);
	qsort(xid_after, 7, sizeof(double), cmp_double);
	printf("scale_one_more_lock_holding_few_us %.1f\n", one_before[3]);
	printf("scale_one_more_lock_holding_n_us %.1f\n", one_after[3]);
	printf("scale_write_xact_holding_few_us %.1f\n", xid_before[3]);
	printf("scale_write_xact_holding_n_us %.1f\n", xid_after[3]);

	t = now_us();
	q1(c, "SELECT zk_unlock_all()");
	printf("scale_unlock_all_ms %.1f\n", (now_us() - t) / 1000.0);

	/*
	 * Until every background delete has been answered (with synchronous
	 * release none is pending when zk_unlock_all returns); a build without
	 * the releases_pending column reports n/a.
	 */
	for (;;)
	{
		char	   *v = q1_try(c, "SELECT releases_pending FROM zk_session()");

		if (v == NULL || atoi(v) <= 0 || now_us() - t >= 120e6)
			break;
		usleep(10000);
	}
	printf("scale_releases_drained_ms %.1f\n", (now_us() - t) / 1000.0);
	printf("scale_releases_pending %s\n", or_na(q1_try(c, "SELECT releases_pending FROM zk_session()")));
	printf("scale_releases_failed %s\n", or_na(q1_try(c, "SELECT releases_failed FROM zk_session()")));
	memory_report(c, pid, "released");
	PQfinish(c);
	return 0;
}

/* ---------------------------------------------------------------------- */

/*
 * do_parallel
 *		Independent locks in parallel: every connection loops zk_lock /
 *		zk_unlock on a path of its own; count the cycles completed inside
 *		the measured window.
 */
static int
do_parallel(int argc, char **argv)
{
	const char *conninfo[2];
	int			nper;
	const char *prefix;
	double		seconds,
				warmup;
	Client	   *cl;
	int			n;
	char	  (*lock_sql)[512];
	char	  (*unlock_sql)[512];
	long	   *cycles;
	long		total = 0,
				cmin = -1,
				cmax = 0;
	int			failures = 0;
	double		t_rec,
				t_end;
	struct pollfd *pfd;

	if (argc != 8)
		die("usage: parallel CONN1 CONN2 NPER PREFIX SECONDS WARMUP");
	conninfo[0] = argv[2];
	conninfo[1] = argv[3];
	nper = atoi(argv[4]);
	prefix = argv[5];
	seconds = atof(argv[6]);
	warmup = atof(argv[7]);

	n = 2 * nper;
	cl = calloc(n, sizeof(Client));
	pfd = calloc(n, sizeof(struct pollfd));
	lock_sql = calloc(n, sizeof(*lock_sql));
	unlock_sql = calloc(n, sizeof(*unlock_sql));
	cycles = calloc(n, sizeof(long));
	for (int i = 0; i < n; i++)
	{
		snprintf(lock_sql[i], sizeof(lock_sql[i]), "SELECT zk_lock('%s/%d')", prefix, i + 1);
		snprintf(unlock_sql[i], sizeof(unlock_sql[i]), "SELECT zk_unlock('%s/%d')", prefix, i + 1);
		cl[i].server = i % 2;
		cl[i].conn = connect_or_die(conninfo[i % 2]);
		/* opens the ZooKeeper session and creates the path's node */
		q1(cl[i].conn, lock_sql[i]);
		q1(cl[i].conn, unlock_sql[i]);
		/* then, like pgbench -M prepared, prepared statements */
		for (int k = 0; k < 2; k++)
		{
			PGresult   *r = PQprepare(cl[i].conn, k ? "ul" : "lk",
									  k ? unlock_sql[i] : lock_sql[i], 0, NULL);

			if (PQresultStatus(r) != PGRES_COMMAND_OK)
				die("prepare: %s", PQerrorMessage(cl[i].conn));
			PQclear(r);
		}
	}

	t_rec = now_us() + warmup * 1e6;
	t_end = t_rec + seconds * 1e6;
	for (int i = 0; i < n; i++)
	{
		send_prepared_or_die(&cl[i], "lk");
		cl[i].state = ST_LOCKING;
	}
	for (;;)
	{
		int			active = 0;

		for (int i = 0; i < n; i++)
		{
			pfd[i].fd = cl[i].state != ST_IDLE ? PQsocket(cl[i].conn) : -1;
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
			active += cl[i].state != ST_IDLE;
		}
		if (active == 0)
			break;
		if (poll(pfd, n, 60000) <= 0)
			die("parallel: no progress for 60 s");
		for (int i = 0; i < n; i++)
		{
			int			ok;
			long long	v;
			double		t;

			if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLERR | POLLHUP)))
				continue;
			if (!collect(&cl[i], &ok, &v))
				continue;
			t = now_us();
			if (!ok)
			{
				failures++;
				cl[i].state = ST_IDLE;
			}
			else if (cl[i].state == ST_LOCKING)
			{
				send_prepared_or_die(&cl[i], "ul");
				cl[i].state = ST_UNLOCKING;
			}
			else
			{
				if (t >= t_rec && t < t_end)
					cycles[i]++;
				if (t < t_end)
				{
					send_prepared_or_die(&cl[i], "lk");
					cl[i].state = ST_LOCKING;
				}
				else
					cl[i].state = ST_IDLE;
			}
		}
	}
	for (int i = 0; i < n; i++)
	{
		total += cycles[i];
		if (cmin < 0 || cycles[i] < cmin)
			cmin = cycles[i];
		if (cycles[i] > cmax)
			cmax = cycles[i];
		PQfinish(cl[i].conn);
	}
	printf("sql_parallel_clients %d\n", n);
	printf("sql_parallel_seconds %.3f\n", seconds);
	printf("sql_parallel_cycles %ld\n", total);
	printf("sql_parallel_cycles_per_s %.1f\n", total / seconds);
	printf("sql_parallel_client_cycles_min %ld\n", cmin);
	printf("sql_parallel_client_cycles_max %ld\n", cmax);
	printf("sql_parallel_failures %d\n", failures);
	return failures == 0 ? 0 : 1;
}

/* ---------------------------------------------------------------------- */

/*
 * queue_nodes_left
 *		Number of queue nodes ZooKeeper still has under the given lock
 *		paths PREFIX/i, i in idx[0..k-1] (one zk_lock_queue per path).
 */
static long
queue_nodes_left(PGconn *c, const char *prefix, const long *idx, int k)
{
	char		sql[4096];
	size_t		len;

	len = snprintf(sql, sizeof(sql), "SELECT count(*) FROM unnest(ARRAY[");
	for (int j = 0; j < k && len < sizeof(sql) - 200; j++)
		len += snprintf(sql + len, sizeof(sql) - len, "%s%ld", j ? "," : "", idx[j]);
	snprintf(sql + len, sizeof(sql) - len,
			 "]::int[]) AS s(i), zk_lock_queue('%s/' || s.i)", prefix);
	return atol(q1(c, sql));
}

/*
 * check_released
 *		After a mass release that has just returned: count the queue nodes
 *		left on a sample of the paths (the first, the last and 8 random
 *		ones), at once; if any, poll the sample until it is empty (at most
 *		60 s: a build that releases in the background); then count what is
 *		left on all nlocks paths.  t_release is when the release was sent.
 *		Prints "<label>_..." lines; returns 1 when nothing was left at once
 *		nor in the full scan.
 */
static int
check_released(PGconn *c, const char *label, const char *prefix, long nlocks,
			   double t_release)
{
	long		idx[10];
	int			k = 0;
	long		left_now,
				left_all;
	char		sql[1024];
	double		t;

	idx[k++] = 1;
	if (nlocks > 1)
		idx[k++] = nlocks;
	while (k < 10 && k < nlocks)
		idx[k++] = 1 + random() % nlocks;
	left_now = queue_nodes_left(c, prefix, idx, k);
	printf("%s_sample_paths %d\n", label, k);
	printf("%s_remaining_sample %ld\n", label, left_now);
	if (left_now > 0)
	{
		while (queue_nodes_left(c, prefix, idx, k) > 0 && now_us() - t_release < 60e6)
			usleep(10000);
		printf("%s_sample_drained_ms %.1f\n", label, (now_us() - t_release) / 1000.0);
	}
	t = now_us();
	snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM generate_series(1, %ld) i, zk_lock_queue('%s/' || i)",
			 nlocks, prefix);
	left_all = atol(q1(c, sql));
	printf("%s_remaining_all %ld\n", label, left_all);
	printf("%s_full_check_ms %.1f\n", label, (now_us() - t) / 1000.0);
	return left_now == 0 && left_all == 0;
}

/*
 * do_release
 *		Time the release of many locks at once, in one backend: the COMMIT
 *		of a transaction holding NLOCKS transaction locks, zk_unlock_all()
 *		of NLOCKS session locks; an empty COMMIT and an empty
 *		zk_unlock_all() for contrast (median of 7).  Each timed statement
 *		is sent alone (PQexec), timed on the client.
 */
static int
do_release(int argc, char **argv)
{
	PGconn	   *c;
	long		nlocks;
	const char *prefix;
	char		sql[1024];
	char	   *v;
	double		empty_commit[7],
				empty_unlock_all[7];
	double		t0,
				t;
	int			ok = 1;

	if (argc != 5)
		die("usage: release CONN NLOCKS PREFIX");
	c = connect_or_die(argv[2]);
	nlocks = atol(argv[3]);
	prefix = argv[4];
	if (nlocks < 1)
		die("release: NLOCKS must be positive");
	srandom(getpid());

	/* loads zklock and opens the ZooKeeper session */
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM zk_lock_queue('%s/1')", prefix);
	q1(c, sql);
	v = q1_try(c, "SELECT coalesce(current_setting('zklock.synchronous_release', true), 'absent')");
	printf("release_sync_setting %s\n", or_na(v));
	printf("release_nlocks %ld\n", nlocks);

	for (int k = 0; k < 7; k++)
	{
		q1(c, "BEGIN");
		empty_commit[k] = timed(c, "COMMIT");
		empty_unlock_all[k] = timed(c, "SELECT zk_unlock_all()");
	}
	qsort(empty_commit, 7, sizeof(double), cmp_double);
	qsort(empty_unlock_all, 7, sizeof(double), cmp_double);
	printf("release_empty_commit_us %.1f\n", empty_commit[3]);
	printf("release_empty_unlock_all_us %.1f\n", empty_unlock_all[3]);

	/* transaction locks, released by COMMIT */
	q1(c, "BEGIN");
	snprintf(sql, sizeof(sql),
			 "SELECT count(zk_xact_lock('%s/' || i)) FROM generate_series(1, %ld) i",
			 prefix, nlocks);
	t = timed(c, sql);
	printf("release_xact_acquire_ms %.1f\n", t / 1000.0);
	printf("release_xact_held %s\n", q1(c, "SELECT count(*) FROM zk_locks"));
	t0 = now_us();
	q1(c, "COMMIT");
	t = now_us() - t0;
	printf("release_xact_commit_us %.1f\n", t);
	printf("release_xact_us_per_node %.2f\n", t / nlocks);
	printf("release_xact_net_us_per_node %.2f\n", (t - empty_commit[3]) / nlocks);
	printf("release_xact_held_after %s\n", q1(c, "SELECT count(*) FROM zk_locks"));
	ok &= check_released(c, "release_xact", prefix, nlocks, t0);

	/* session locks, released by zk_unlock_all() */
	snprintf(sql, sizeof(sql),
			 "SELECT count(zk_lock('%s/' || i)) FROM generate_series(1, %ld) i",
			 prefix, nlocks);
	t = timed(c, sql);
	printf("release_session_acquire_ms %.1f\n", t / 1000.0);
	printf("release_session_held %s\n", q1(c, "SELECT count(*) FROM zk_locks"));
	t0 = now_us();
	q1(c, "SELECT zk_unlock_all()");
	t = now_us() - t0;
	printf("release_session_unlock_all_us %.1f\n", t);
	printf("release_session_us_per_node %.2f\n", t / nlocks);
	printf("release_session_net_us_per_node %.2f\n", (t - empty_unlock_all[3]) / nlocks);
	printf("release_session_held_after %s\n", q1(c, "SELECT count(*) FROM zk_locks"));
	ok &= check_released(c, "release_session", prefix, nlocks, t0);

	printf("release_ok %d\n", ok);
	PQfinish(c);
	return 0;
}

/* ---------------------------------------------------------------------- */

/*
 * collect_bool
 *		Like collect, for a boolean result: *value is 1 for 't', 0 for 'f',
 *		-1 for anything else.
 */
static int
collect_bool(Client *cl, int *ok, int *value)
{
	PGresult   *r;

	if (!PQconsumeInput(cl->conn))
		die("connection lost: %s", PQerrorMessage(cl->conn));
	if (PQisBusy(cl->conn))
		return 0;
	*ok = 1;
	*value = -1;
	while ((r = PQgetResult(cl->conn)) != NULL)
	{
		if (PQresultStatus(r) != PGRES_TUPLES_OK)
		{
			*ok = 0;
			fprintf(stderr, "pgclients: query failed: %s", PQresultErrorMessage(r));
		}
		else if (PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
			*value = strcmp(PQgetvalue(r, 0, 0), "t") == 0 ? 1 :
				strcmp(PQgetvalue(r, 0, 0), "f") == 0 ? 0 : -1;
		PQclear(r);
	}
	return 1;
}

/*
 * do_dbarrier
 *		Lock-step cycles of a double barrier's enter and leave: see the
 *		header comment.
 */
static int
do_dbarrier(int argc, char **argv)
{
	const char *conninfo[2];
	int			nper;
	const char *path;
	double		seconds,
				warmup,
				gap_ms;
	FILE	   *out;
	Client	   *cl;
	int			n;
	char		enter_sql[512],
				leave_sql[512],
				session_sql[512];
	double		t_rec,
				t_end;
	double	   *t_enter,
			   *t_leave;
	struct pollfd *pfd;
	long		cycles_all = 0,
				cycles = 0,
				early = 0;
	double	   *rounds;
	long		cap = 1 << 14;

	if (argc != 10)
		die("usage: dbarrier CONN1 CONN2 NPER PATH SECONDS WARMUP GAP_MS OUTFILE");
	conninfo[0] = argv[2];
	conninfo[1] = argv[3];
	nper = atoi(argv[4]);
	path = argv[5];
	seconds = atof(argv[6]);
	warmup = atof(argv[7]);
	gap_ms = atof(argv[8]);
	out = fopen(argv[9], "w");
	if (out == NULL)
		die("%s: %s", argv[9], strerror(errno));

	n = 2 * nper;
	snprintf(enter_sql, sizeof(enter_sql), "SELECT zk_double_barrier_enter('%s', %d)", path, n);
	snprintf(leave_sql, sizeof(leave_sql), "SELECT zk_double_barrier_leave('%s')", path);
	snprintf(session_sql, sizeof(session_sql), "SELECT count(*) FROM zk_lock_queue('%s_session')", path);
	cl = calloc(n, sizeof(Client));
	pfd = calloc(n, sizeof(struct pollfd));
	t_enter = calloc(n, sizeof(double));
	t_leave = calloc(n, sizeof(double));
	rounds = malloc(sizeof(double) * cap);
	for (int i = 0; i < n; i++)
	{
		cl[i].server = i % 2;
		cl[i].conn = connect_or_die(conninfo[i % 2]);
		/* a hung barrier ends in 55P03 rather than never */
		q1(cl[i].conn, "SET lock_timeout = '30s'");
		/* opens the ZooKeeper session (a read of a path of its own) */
		q1(cl[i].conn, session_sql);
	}

	t_rec = now_us() + warmup * 1e6;
	t_end = t_rec + seconds * 1e6;
	for (long c = 0;; c++)
	{
		int			last = (int) (c % n);
		int			pending;
		double		t_first,
					t0,
					gap_end,
					max_enter = 0,
					min_enter = 0,
					max_leave = 0;
		int			recorded;

		t_first = now_us();
		if (t_first >= t_end)
			break;
		recorded = t_first >= t_rec;
		for (int i = 0; i < n; i++)
		{
			t_enter[i] = t_leave[i] = 0;
			cl[i].state = ST_IDLE;
		}
		t0 = 0;
		for (int i = 0; i < n; i++)
		{
			if (i == last)
				continue;
			send_or_die(&cl[i], enter_sql);
			cl[i].state = ST_LOCKING;
		}
		pending = n;
		gap_end = t_first + gap_ms * 1000;

		/*
		 * One loop for the gap (the last member not sent yet) and for the
		 * rest of the cycle.
		 */
		while (pending > 0)
		{
			double		now = now_us();
			struct timespec ts;
			int			rc;

			if (t0 == 0 && now >= gap_end)
			{
				t0 = now_us();
				send_or_die(&cl[last], enter_sql);
				cl[last].state = ST_LOCKING;
			}
			for (int i = 0; i < n; i++)
			{
				pfd[i].fd = (cl[i].state == ST_LOCKING || cl[i].state == ST_UNLOCKING) ?
					PQsocket(cl[i].conn) : -1;
				pfd[i].events = POLLIN;
				pfd[i].revents = 0;
			}
			if (t0 == 0)
			{
				double		left = gap_end - now;

				ts.tv_sec = (time_t) (left / 1e6);
				ts.tv_nsec = (long) ((left - ts.tv_sec * 1e6) * 1000);
			}
			else
			{
				ts.tv_sec = 60;
				ts.tv_nsec = 0;
			}
			rc = ppoll(pfd, n, &ts, NULL);
			if (rc < 0 && errno != EINTR)
				die("dbarrier: poll: %s", strerror(errno));
			if (rc == 0 && t0 != 0)
				die("dbarrier: no progress for 60 s in cycle %ld (%d members not done)", c, pending);
			for (int i = 0; i < n; i++)
			{
				int			ok;
				int			v;
				double		t;

				if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLERR | POLLHUP)))
					continue;
				if (!collect_bool(&cl[i], &ok, &v))
					continue;
				t = now_us();
				if (!ok || v != 1)
				{
					printf("dbarrier_failed_cycle %ld\n", c);
					printf("dbarrier_failed_member %d\n", i);
					printf("dbarrier_failed_in %s\n", cl[i].state == ST_LOCKING ? "enter" : "leave");
					printf("dbarrier_failed_result %s\n", ok ? (v == 0 ? "false" : "unexpected") : "error");
					die("dbarrier: %s of member %d failed in cycle %ld",
						cl[i].state == ST_LOCKING ? "enter" : "leave", i, c);
				}
				if (cl[i].state == ST_LOCKING)
				{
					t_enter[i] = t;
					if (t0 == 0)
						early++;	/* released before the last arrived */
					send_or_die(&cl[i], leave_sql);
					cl[i].state = ST_UNLOCKING;
				}
				else
				{
					t_leave[i] = t;
					cl[i].state = ST_DONE;
					pending--;
				}
			}
		}
		cycles_all++;
		if (!recorded)
			continue;
		for (int i = 0; i < n; i++)
		{
			if (t_enter[i] > max_enter)
				max_enter = t_enter[i];
			if (min_enter == 0 || t_enter[i] < min_enter)
				min_enter = t_enter[i];
			if (t_leave[i] > max_leave)
				max_leave = t_leave[i];
		}
		fprintf(out, "%ld %d %.1f %.1f %.1f %.1f %.1f %.1f\n", cycles, last,
				max_leave - t_first, max_enter - t0, max_leave - t0, t0 - t_first,
				min_enter - t0, max_leave - max_enter);
		if (cycles == cap)
		{
			cap *= 2;
			rounds = realloc(rounds, sizeof(double) * cap);
		}
		rounds[cycles++] = max_leave - t_first;
	}
	fclose(out);
	qsort(rounds, cycles, sizeof(double), cmp_double);
	printf("dbarrier_members %d\n", n);
	printf("dbarrier_seconds %.3f\n", seconds);
	printf("dbarrier_gap_ms %.3f\n", gap_ms);
	printf("dbarrier_cycles %ld\n", cycles);
	printf("dbarrier_cycles_all %ld\n", cycles_all);
	printf("dbarrier_early %ld\n", early);
	printf("dbarrier_round_p50_us %.1f\n", pct(rounds, cycles, 0.50));
	printf("dbarrier_failures 0\n");
	for (int i = 0; i < n; i++)
		PQfinish(cl[i].conn);
	return early == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		die("usage: pgclients contend|herd|stack|scale|parallel|release|dbarrier ...");
	if (strcmp(argv[1], "contend") == 0)
		return do_contend(argc, argv);
	if (strcmp(argv[1], "herd") == 0)
		return do_herd(argc, argv);
	if (strcmp(argv[1], "stack") == 0)
		return do_stack(argc, argv);
	if (strcmp(argv[1], "scale") == 0)
		return do_scale(argc, argv);
	if (strcmp(argv[1], "parallel") == 0)
		return do_parallel(argc, argv);
	if (strcmp(argv[1], "release") == 0)
		return do_release(argc, argv);
	if (strcmp(argv[1], "dbarrier") == 0)
		return do_dbarrier(argc, argv);
	die("unknown mode %s", argv[1]);
	return 2;
}
