/*
 * pgclients.c: libpq clients for zklock's benchmark (bench/run.sh builds it
 * with gcc ... -lpq).  Every measurement is timed here, on the client side,
 * with CLOCK_MONOTONIC.
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
 *   pgclients longqueue CONN1 CONN2 KIND N PATH ZKPORT HOLD_S DEADLOCK_MS LIMIT_S OUTFILE
 *       A long queue held past deadlock_timeout, then drained (bench/
 *       longqueue.sh).  Holders on server 1 (a semaphore of limit 2: one
 *       on each server) take PATH; N waiters, N/2 per server, each with
 *       deadlock_timeout = DEADLOCK_MS, are sent their acquire all at once
 *       and wait behind them; once every waiter's backend has been seen
 *       waiting in zklock (pg_stat_activity, which asks ZooKeeper nothing),
 *       the holders keep holding HOLD_S more seconds, and on until the
 *       deadlock checks are over (a second with no more requests than
 *       pings explain; at most LIMIT_S more); then they release and each
 *       waiter releases as soon as it is granted (a FIFO handoff through
 *       all N).  KIND: exclusive (zk_lock), mixed (zk_rlock, every
 *       4th waiter zk_lock), semaphore1 and semaphore2
 *       (zk_semaphore_acquire with max_leases 1 or 2), set2 (zk_lock of
 *       the set PATH/a, PATH/b), lease (zk_lease_lock).  ZooKeeper's
 *       requests (mntr zk_packets_received) are read before the first
 *       acquire is sent, every 250 ms during the wait (OUTFILE: seconds
 *       and requests since the first acquire) and after the drain.  The
 *       queue order is read once the wait is counted; the grants must
 *       follow it: in the order their results arrive (readers of a mixed
 *       queue granted together may answer in any order among themselves),
 *       for a semaphore in the order of the lease tokens (the leases'
 *       czxids: the order ZooKeeper gave them out in, since two leases
 *       held at once may answer in any order).  A queue not drained LIMIT_S
 *       after the release has its waiters terminated.  Exits 1 unless
 *       every waiter was queued, granted in order and nothing was left.
 *
 * Results are printed as "key value" lines for bench/analyze.py (and
 * `bench/analyze.py longqueue` for the longqueue mode).
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

#include "common.h"

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

/*
 * q1_try
 *		Run a query, return its first value (or ""); on an error, NULL (the
 *		connection stays usable unless inside a transaction).  For columns
 *		and settings that some builds of zklock lack.  The value is good
 *		until the next q1 or q1_try call.
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

/* run a query, die on error, return the first value (or ""), as q1_try */
static char *
q1(PGconn *c, const char *sql)
{
	char	   *v = q1_try(c, sql);

	if (v == NULL)
		die("%s: %s", sql, PQerrorMessage(c));
	return v;
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

/* the median of n values (sorts them) */
static double
median(double *v, int n)
{
	qsort(v, n, sizeof(double), cmp_double);
	return v[n / 2];
}

/*
 * wait_for_zero
 *		Run sql (a count) every 10 ms until it gives 0 or less, or until
 *		limit_us have passed since t_from; returns its last value.  With
 *		may_fail, a query that fails (q1_try: a column some builds lack)
 *		ends the wait and gives -1; without, it is fatal (q1).
 */
static long
wait_for_zero(PGconn *c, const char *sql, int may_fail, double t_from,
			  double limit_us)
{
	for (;;)
	{
		char	   *v = may_fail ? q1_try(c, sql) : q1(c, sql);
		long		left = v ? atol(v) : -1;

		if (left <= 0 || now_us() - t_from >= limit_us)
			return left;
		usleep(10000);
	}
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
	char		value[64];		/* first value of the last result collected */
} Client;

/*
 * connect_clients
 *		n connections, client i to server i % 2 (conninfo[0] or [1], with
 *		server set to that index); each runs first_sql, if given, at once
 *		(a read that opens its ZooKeeper session).
 */
static Client *
connect_clients(char **conninfo, int n, const char *first_sql)
{
	Client	   *cl = calloc(n, sizeof(Client));

	for (int i = 0; i < n; i++)
	{
		cl[i].server = i % 2;
		cl[i].conn = connect_or_die(conninfo[i % 2]);
		if (first_sql)
			q1(cl[i].conn, first_sql);
	}
	return cl;
}

static void
finish_clients(Client *cl, int n)
{
	for (int i = 0; i < n; i++)
		PQfinish(cl[i].conn);
}

static void
send_or_die(Client *cl, const char *sql)
{
	if (!PQsendQuery(cl->conn, sql))
		die("send %s: %s", sql, PQerrorMessage(cl->conn));
	cl->t_sent = now_us();
}

/* is a query of this client in flight? */
static int
busy(const Client *cl)
{
	return cl->state == ST_LOCKING || cl->state == ST_UNLOCKING;
}

/*
 * poll_clients
 *		Wait at most timeout_us for input on the connection of any client
 *		with a query in flight; pfd is an array of n, pfd[i] for client i
 *		(fd -1 for a client with nothing in flight).  Returns what ppoll
 *		returned: 0 on timeout, -1 if interrupted; dies on any other error.
 */
static int
poll_clients(const Client *cl, struct pollfd *pfd, int n, double timeout_us)
{
	struct timespec ts;
	int			rc;

	for (int i = 0; i < n; i++)
	{
		pfd[i].fd = busy(&cl[i]) ? PQsocket(cl[i].conn) : -1;
		pfd[i].events = POLLIN;
		pfd[i].revents = 0;
	}
	if (timeout_us < 0)
		timeout_us = 0;
	ts.tv_sec = (time_t) (timeout_us / 1e6);
	ts.tv_nsec = (long) ((timeout_us - ts.tv_sec * 1e6) * 1000);
	rc = ppoll(pfd, n, &ts, NULL);
	if (rc < 0 && errno != EINTR)
		die("poll: %s", strerror(errno));
	return rc;
}

/*
 * collect
 *		After poll_clients: if input came on client cl's connection (pfd,
 *		its entry) and its query's whole result has arrived, take it and
 *		return 1, with *ok set to whether it succeeded and cl->value to its
 *		first value ("" if none); else 0.
 */
static int
collect(Client *cl, const struct pollfd *pfd, int *ok)
{
	PGresult   *r;

	if (pfd->fd < 0 || !(pfd->revents & (POLLIN | POLLERR | POLLHUP)))
		return 0;
	if (!PQconsumeInput(cl->conn))
		die("connection lost: %s", PQerrorMessage(cl->conn));
	if (PQisBusy(cl->conn))
		return 0;
	*ok = 1;
	cl->value[0] = '\0';
	while ((r = PQgetResult(cl->conn)) != NULL)
	{
		if (PQresultStatus(r) != PGRES_TUPLES_OK)
		{
			*ok = 0;
			fprintf(stderr, "pgclients: query failed: %s", PQresultErrorMessage(r));
		}
		else if (PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
			snprintf(cl->value, sizeof(cl->value), "%s", PQgetvalue(r, 0, 0));
		PQclear(r);
	}
	return 1;
}

/* ---------------------------------------------------------------------- */

/* ---------------------------------------------------------------------- */

/*
 * do_herd
 *		A queue of 2 * NPER waiters behind one holder; count the watch
 *		notifications ZooKeeper sends while they are granted one by one.
 */
static int
do_herd(int argc, char **argv)
{
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

	holder = connect_or_die(argv[2]);
	q1(holder, lock_sql);

	cl = connect_clients(argv + 2, n, queue_sql);
	pfd = calloc(n, sizeof(struct pollfd));
	gaps = calloc(n, sizeof(double));
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
		if (poll_clients(cl, pfd, n, 60e6) <= 0)
			die("herd: no grant for 60 s (%d of %d granted)", granted, n);
		for (int i = 0; i < n; i++)
		{
			int			ok;
			long long	v;
			double		t;

			if (!collect(&cl[i], &pfd[i], &ok))
				continue;
			t = now_us();
			v = atoll(cl[i].value);
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
	if (wait_for_zero(holder, queue_sql, 0, now_us(), 30e6) != 0)
		die("herd: queue not empty 30 s after the last release");
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
	finish_clients(cl, n);
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
	printf("scale_one_more_lock_holding_few_us %.1f\n", median(one_before, 7));
	printf("scale_one_more_lock_holding_n_us %.1f\n", median(one_after, 7));
	printf("scale_write_xact_holding_few_us %.1f\n", median(xid_before, 7));
	printf("scale_write_xact_holding_n_us %.1f\n", median(xid_after, 7));

	t = now_us();
	q1(c, "SELECT zk_unlock_all()");
	printf("scale_unlock_all_ms %.1f\n", (now_us() - t) / 1000.0);

	/*
	 * Until every background delete has been answered (with synchronous
	 * release none is pending when zk_unlock_all returns); a build without
	 * the releases_pending column reports n/a.
	 */
	wait_for_zero(c, "SELECT releases_pending FROM zk_session()", 1, t, 120e6);
	printf("scale_releases_drained_ms %.1f\n", (now_us() - t) / 1000.0);
	printf("scale_releases_pending %s\n", or_na(q1_try(c, "SELECT releases_pending FROM zk_session()")));
	printf("scale_releases_failed %s\n", or_na(q1_try(c, "SELECT releases_failed FROM zk_session()")));
	memory_report(c, pid, "released");
	PQfinish(c);
	return 0;
}

/* ---------------------------------------------------------------------- */

/* ---------------------------------------------------------------------- */

/*
 * queue_nodes_sql
 *		Into sql (of size len): a query counting the queue nodes ZooKeeper
 *		still has under the lock paths PREFIX/i, i in idx[0..k-1] (one
 *		zk_lock_queue per path).
 */
static void
queue_nodes_sql(char *sql, size_t size, const char *prefix, const long *idx, int k)
{
	size_t		len;

	len = snprintf(sql, size, "SELECT count(*) FROM unnest(ARRAY[");
	for (int j = 0; j < k && len < size - 200; j++)
		len += snprintf(sql + len, size - len, "%s%ld", j ? "," : "", idx[j]);
	snprintf(sql + len, size - len,
			 "]::int[]) AS s(i), zk_lock_queue('%s/' || s.i)", prefix);
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
	char		sample_sql[4096];
	char		sql[1024];
	double		t;

	idx[k++] = 1;
	if (nlocks > 1)
		idx[k++] = nlocks;
	while (k < 10 && k < nlocks)
		idx[k++] = 1 + random() % nlocks;
	queue_nodes_sql(sample_sql, sizeof(sample_sql), prefix, idx, k);
	left_now = atol(q1(c, sample_sql));
	printf("%s_sample_paths %d\n", label, k);
	printf("%s_remaining_sample %ld\n", label, left_now);
	if (left_now > 0)
	{
		wait_for_zero(c, sample_sql, 0, t_release, 60e6);
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
 * release_many
 *		One half of do_release: take NLOCKS locks PREFIX/1 .. PREFIX/NLOCKS
 *		in one statement with the function acquire (zk_xact_lock, inside a
 *		transaction the caller began, or zk_lock), then time release_sql
 *		alone (COMMIT or SELECT zk_unlock_all()) and check_released; empty_us
 *		is release_sql's time with nothing held.  Prints "<label>_..." lines,
 *		release_sql's time as "<label>_<what>_us"; returns what
 *		check_released returned.
 */
static int
release_many(PGconn *c, const char *label, const char *acquire,
			 const char *release_sql, const char *what, double empty_us,
			 const char *prefix, long nlocks)
{
	char		sql[1024];
	double		t0,
				t;

	snprintf(sql, sizeof(sql),
			 "SELECT count(%s('%s/' || i)) FROM generate_series(1, %ld) i",
			 acquire, prefix, nlocks);
	t = timed(c, sql);
	printf("%s_acquire_ms %.1f\n", label, t / 1000.0);
	printf("%s_held %s\n", label, q1(c, "SELECT count(*) FROM zk_locks"));
	t0 = now_us();
	q1(c, release_sql);
	t = now_us() - t0;
	printf("%s_%s_us %.1f\n", label, what, t);
	printf("%s_us_per_node %.2f\n", label, t / nlocks);
	printf("%s_net_us_per_node %.2f\n", label, (t - empty_us) / nlocks);
	printf("%s_held_after %s\n", label, q1(c, "SELECT count(*) FROM zk_locks"));
	return check_released(c, label, prefix, nlocks, t0);
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
	double		commit_med,
				unlock_all_med;
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
	commit_med = median(empty_commit, 7);
	unlock_all_med = median(empty_unlock_all, 7);
	printf("release_empty_commit_us %.1f\n", commit_med);
	printf("release_empty_unlock_all_us %.1f\n", unlock_all_med);

	/* transaction locks, released by COMMIT */
	q1(c, "BEGIN");
	ok &= release_many(c, "release_xact", "zk_xact_lock", "COMMIT", "commit",
					   commit_med, prefix, nlocks);
	/* session locks, released by zk_unlock_all() */
	ok &= release_many(c, "release_session", "zk_lock", "SELECT zk_unlock_all()",
					   "unlock_all", unlock_all_med, prefix, nlocks);

	printf("release_ok %d\n", ok);
	PQfinish(c);
	return 0;
}

/* ---------------------------------------------------------------------- */

/*
 * do_dbarrier
 *		Lock-step cycles of a double barrier's enter and leave: see the
 *		header comment.
 */
static int
do_dbarrier(int argc, char **argv)
{
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
	/* a hung barrier ends in 55P03 rather than never */
	cl = connect_clients(argv + 2, n, "SET lock_timeout = '30s'");
	pfd = calloc(n, sizeof(struct pollfd));
	t_enter = calloc(n, sizeof(double));
	t_leave = calloc(n, sizeof(double));
	rounds = malloc(sizeof(double) * cap);
	/* opens the ZooKeeper session (a read of a path of its own) */
	for (int i = 0; i < n; i++)
		q1(cl[i].conn, session_sql);

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

			if (t0 == 0 && now >= gap_end)
			{
				t0 = now_us();
				send_or_die(&cl[last], enter_sql);
				cl[last].state = ST_LOCKING;
			}
			/* until the gap's end while the last member waits to be sent */
			if (poll_clients(cl, pfd, n, t0 == 0 ? gap_end - now : 60e6) == 0 && t0 != 0)
				die("dbarrier: no progress for 60 s in cycle %ld (%d members not done)", c, pending);
			for (int i = 0; i < n; i++)
			{
				int			ok;
				int			v;
				double		t;

				if (!collect(&cl[i], &pfd[i], &ok))
					continue;
				t = now_us();
				/* 1 for true, 0 for false, -1 for anything else */
				v = strcmp(cl[i].value, "t") == 0 ? 1 : strcmp(cl[i].value, "f") == 0 ? 0 : -1;
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
	finish_clients(cl, n);
	return early == 0 ? 0 : 1;
}

/* ---------------------------------------------------------------------- */

/*
 * The kinds of queue of do_longqueue: what the holders and the waiters
 * take, and how each releases.
 */
typedef enum
{
	LQ_EXCLUSIVE,
	LQ_MIXED,
	LQ_SEMAPHORE1,
	LQ_SEMAPHORE2,
	LQ_SET2,
	LQ_LEASE
} LqKind;

static const char *const lq_kind_names[] = {
	"exclusive", "mixed", "semaphore1", "semaphore2", "set2", "lease", NULL
};

/* mixed: waiter i is a writer when i % LQ_MIXED_EVERY == LQ_MIXED_EVERY - 1 */
#define LQ_MIXED_EVERY 4

/* a waiter of a mixed queue that takes a shared lock */
static int
lq_reader(LqKind kind, int i)
{
	return kind == LQ_MIXED && i % LQ_MIXED_EVERY != LQ_MIXED_EVERY - 1;
}

/* the holders: one, or max_leases of a semaphore */
static int
lq_holders(LqKind kind)
{
	return kind == LQ_SEMAPHORE2 ? 2 : 1;
}

/*
 * lq_acquire_sql
 *		Into sql: what waiter i (or a holder, i < 0) sends to take its
 *		place; its result is the fencing token.
 */
static void
lq_acquire_sql(char *sql, size_t size, LqKind kind, const char *path, int i)
{
	switch (kind)
	{
		case LQ_EXCLUSIVE:
		case LQ_MIXED:
			snprintf(sql, size, "SELECT zk_%slock('%s')",
					 i >= 0 && lq_reader(kind, i) ? "r" : "", path);
			break;
		case LQ_SEMAPHORE1:
		case LQ_SEMAPHORE2:
			snprintf(sql, size, "SELECT zk_semaphore_acquire('%s', %d)",
					 path, lq_holders(kind));
			break;
		case LQ_SET2:
			snprintf(sql, size, "SELECT zk_lock(ARRAY['%s/a', '%s/b'])", path, path);
			break;
		case LQ_LEASE:
			snprintf(sql, size, "SELECT zk_lease_lock('%s', '10 min')", path);
			break;
	}
}

/* into sql: the release of a hold whose fencing token is token */
static void
lq_release_sql(char *sql, size_t size, LqKind kind, const char *path,
			   const char *token)
{
	switch (kind)
	{
		case LQ_EXCLUSIVE:
		case LQ_MIXED:
			snprintf(sql, size, "SELECT zk_unlock('%s')", path);
			break;
		case LQ_SEMAPHORE1:
		case LQ_SEMAPHORE2:
			snprintf(sql, size, "SELECT zk_semaphore_release('%s')", path);
			break;
		case LQ_SET2:
			snprintf(sql, size, "SELECT zk_unlock(ARRAY['%s/a', '%s/b'])", path, path);
			break;
		case LQ_LEASE:
			snprintf(sql, size, "SELECT zk_lease_unlock('%s', %s)", path, token);
			break;
	}
}

/*
 * lq_queue_sql
 *		Into sql: the queue the waiters stand in, in order, as rows
 *		(cluster_name, pid): a semaphore's waiters queue for its mutex,
 *		a set's on each path alike (the first is read).
 */
static void
lq_queue_sql(char *sql, size_t size, LqKind kind, const char *path)
{
	snprintf(sql, size,
			 "SELECT coalesce(cluster_name, ''), pid FROM zk_lock_queue('%s%s') ORDER BY position",
			 path,
			 kind == LQ_SEMAPHORE1 || kind == LQ_SEMAPHORE2 ? "/locks" :
			 kind == LQ_SET2 ? "/a" : "");
}

/*
 * The most requests per second a queue of n waiters makes once their
 * checks are over: pings (each session's every third of its 10 s timeout)
 * and a few stragglers.
 */
#define LQ_QUIET_RPS(n)	((n) / 2.0 + 10)

/* mntr's zk_packets_received: the requests ZooKeeper has received */
static double
zk_requests(int zkport)
{
	return mntr_value(fourlw(zkport, "mntr"), "zk_packets_received");
}

/*
 * lq_wait_all_in_zklock
 *		Until every waiter's backend has been seen waiting in zklock
 *		(pg_stat_activity: active, wait_event_type Extension, which is
 *		where zklock waits for ZooKeeper and for its turn), polled through
 *		mon[0] and mon[1] (connections to each server that never call
 *		zklock, so that the poll sends no request to ZooKeeper).  Dies
 *		after limit_us.
 */
static void
lq_wait_all_in_zklock(PGconn **mon, Client *cl, const int *pids, int n,
					  double limit_us)
{
	char	   *seen = calloc(n, 1);
	int			nseen = 0;
	double		deadline = now_us() + limit_us;

	while (nseen < n)
	{
		for (int s = 0; s < 2; s++)
		{
			PGresult   *r = PQexec(mon[s],
								   "SELECT pid FROM pg_stat_activity WHERE state = 'active' "
								   "AND wait_event_type = 'Extension'");

			if (PQresultStatus(r) != PGRES_TUPLES_OK)
				die("pg_stat_activity: %s", PQerrorMessage(mon[s]));
			for (int k = 0; k < PQntuples(r); k++)
			{
				int			pid = atoi(PQgetvalue(r, k, 0));

				for (int i = 0; i < n; i++)
				{
					if (!seen[i] && cl[i].server == s && pids[i] == pid)
					{
						seen[i] = 1;
						nseen++;
					}
				}
			}
			PQclear(r);
		}
		if (nseen < n && now_us() > deadline)
			die("longqueue: only %d of %d waiters seen waiting in zklock", nseen, n);
		if (nseen < n)
			usleep(20000);
	}
	free(seen);
}

/*
 * do_longqueue
 *		A long queue held past deadlock_timeout, then drained: see the
 *		header comment.
 */
static int
do_longqueue(int argc, char **argv)
{
	LqKind		kind = LQ_EXCLUSIVE;
	int			n,
				nhold,
				zkport,
				deadlock_ms;
	const char *path;
	double		hold_s,
				limit_s;
	FILE	   *out;
	PGconn	   *holder[2],
			   *mon[2];
	char		holder_token[2][64];
	char		cluster[2][64];
	Client	   *cl;
	int		   *pids,
			   *rank,
			   *order;
	char		sql[1024],
				warm_sql[512];
	struct pollfd *pfd;
	double		base_conns,
				r0,
				r1,
				r_rel,
				r2,
				t_send,
				t_queued,
				t1,
				t_rel,
				t_last = 0,
				prev_r,
				prev_t,
				peak_rps = 0,
				r_hold = -1,
				t_quiet = 0,
				r_quiet = 0;
	int			granted = 0,
				done = 0,
				failures = 0,
				inversions = 0,
				unmatched = 0,
				listed = 0,
				drained;
	long		left;
	double		left_eph;
	PGresult   *res;

	if (argc != 12)
		die("usage: longqueue CONN1 CONN2 KIND N PATH ZKPORT HOLD_S DEADLOCK_MS LIMIT_S OUTFILE");
	for (int k = 0;; k++)
	{
		if (lq_kind_names[k] == NULL)
			die("longqueue: unknown kind %s", argv[4]);
		if (strcmp(argv[4], lq_kind_names[k]) == 0)
		{
			kind = (LqKind) k;
			break;
		}
	}
	n = atoi(argv[5]);
	path = argv[6];
	zkport = atoi(argv[7]);
	hold_s = atof(argv[8]);
	deadlock_ms = atoi(argv[9]);
	limit_s = atof(argv[10]);
	out = fopen(argv[11], "w");
	if (out == NULL)
		die("%s: %s", argv[11], strerror(errno));
	if (n < 1)
		die("longqueue: N must be positive");
	nhold = lq_holders(kind);

	/* the connections ZooKeeper had before ours (a previous case's gone) */
	base_conns = mntr_value(fourlw(zkport, "mntr"), "zk_num_alive_connections");

	/* holders, monitors, waiters; every zklock user opens its session now */
	snprintf(warm_sql, sizeof(warm_sql),
			 "SELECT count(*) FROM zk_lock_queue('%s_warm')", path);
	for (int s = 0; s < 2; s++)
	{
		mon[s] = connect_or_die(argv[2 + s]);
		snprintf(cluster[s], sizeof(cluster[s]), "%s",
				 q1(mon[s], "SELECT current_setting('cluster_name')"));
	}
	for (int h = 0; h < nhold; h++)
	{
		holder[h] = connect_or_die(argv[2 + h % 2]);
		q1(holder[h], warm_sql);
	}
	snprintf(sql, sizeof(sql), "SET deadlock_timeout = '%dms'", deadlock_ms);
	cl = connect_clients(argv + 2, n, sql);
	pids = calloc(n, sizeof(int));
	rank = malloc(n * sizeof(int));
	order = calloc(n, sizeof(int));
	pfd = calloc(n, sizeof(struct pollfd));
	for (int i = 0; i < n; i++)
	{
		q1(cl[i].conn, warm_sql);
		pids[i] = PQbackendPID(cl[i].conn);
		rank[i] = -1;
	}

	for (int h = 0; h < nhold; h++)
	{
		lq_acquire_sql(sql, sizeof(sql), kind, path, -1);
		snprintf(holder_token[h], sizeof(holder_token[h]), "%s", q1(holder[h], sql));
	}

	/* the wait: from the first waiter's request to the end of the hold */
	r0 = zk_requests(zkport);
	t_send = now_us();
	for (int i = 0; i < n; i++)
	{
		lq_acquire_sql(sql, sizeof(sql), kind, path, i);
		send_or_die(&cl[i], sql);
		cl[i].state = ST_LOCKING;
	}
	lq_wait_all_in_zklock(mon, cl, pids, n, 120e6);
	t_queued = now_us();

	/*
	 * ZooKeeper's requests, sampled every 250 ms.  The holders hold hold_s
	 * after every waiter was seen waiting, and on until the checks are
	 * over: a second (begun past deadlock_timeout) with no more requests
	 * than pings and stragglers explain, LQ_QUIET_RPS(n), at most limit_s
	 * more.
	 */
	fprintf(out, "# seconds_since_first_request requests_since_first_request\n");
	prev_r = r0;
	prev_t = t_send;
	for (;;)
	{
		double		t = now_us(),
					r = zk_requests(zkport);

		fprintf(out, "%.3f %.0f\n", (t - t_send) / 1e6, r - r0);
		/* each 1 s (or so) between two samples: the busiest, the first quiet */
		if (t - prev_t >= 1e6)
		{
			double		rps = (r - prev_r) / ((t - prev_t) / 1e6);

			if (rps > peak_rps)
				peak_rps = rps;
			if (t_quiet == 0 && rps <= LQ_QUIET_RPS(n) &&
				prev_t >= t_queued + deadlock_ms * 1e3)
			{
				t_quiet = prev_t;
				r_quiet = prev_r;
			}
			prev_r = r;
			prev_t = t;
		}
		if (r_hold < 0 && t - t_queued >= hold_s * 1e6)
			r_hold = r;
		if (r_hold >= 0 &&
			(t_quiet != 0 || t - t_queued >= (hold_s + limit_s) * 1e6))
			break;
		usleep(250000);
	}
	r1 = zk_requests(zkport);
	t1 = now_us();
	fclose(out);

	/* the queue, in order (not counted: after r1) */
	lq_queue_sql(sql, sizeof(sql), kind, path);
	res = PQexec(mon[0], sql);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		die("%s: %s", sql, PQerrorMessage(mon[0]));
	for (int k = 0; k < PQntuples(res); k++)
	{
		const char *cn = PQgetvalue(res, k, 0);
		int			pid = atoi(PQgetvalue(res, k, 1));

		for (int i = 0; i < n; i++)
		{
			if (rank[i] < 0 && pids[i] == pid && strcmp(cluster[cl[i].server], cn) == 0)
			{
				rank[i] = listed++;
				break;
			}
		}
	}
	PQclear(res);

	/* the holders release; each waiter releases as soon as it is granted */
	r_rel = zk_requests(zkport);
	t_rel = now_us();
	for (int h = 0; h < nhold; h++)
	{
		lq_release_sql(sql, sizeof(sql), kind, path, holder_token[h]);
		q1(holder[h], sql);
	}
	while (done < n)
	{
		if (now_us() - t_rel > limit_s * 1e6)
			break;
		(void) poll_clients(cl, pfd, n, t_rel + limit_s * 1e6 - now_us());
		for (int i = 0; i < n; i++)
		{
			int			ok;

			if (!collect(&cl[i], &pfd[i], &ok))
				continue;
			if (cl[i].state == ST_LOCKING)
			{
				if (!ok)
				{
					failures++;
					cl[i].state = ST_DONE;
					done++;
					continue;
				}
				cl[i].token = atoll(cl[i].value);
				order[granted++] = i;
				lq_release_sql(sql, sizeof(sql), kind, path, cl[i].value);
				send_or_die(&cl[i], sql);
				cl[i].state = ST_UNLOCKING;
			}
			else if (cl[i].state == ST_UNLOCKING)
			{
				if (!ok)
					failures++;
				cl[i].state = ST_DONE;
				done++;
				t_last = now_us();
			}
		}
	}
	drained = done == n;
	r2 = zk_requests(zkport);

	/*
	 * A queue that did not drain in time (waiters stuck in their deadlock
	 * checks): its backends are terminated, so that the next case starts
	 * on a quiet ZooKeeper.
	 */
	if (!drained)
	{
		for (int s = 0; s < 2; s++)
		{
			char		list[8192];
			size_t		len = 0;

			len += snprintf(list + len, sizeof(list) - len, "SELECT count(pg_terminate_backend(p)) FROM unnest(ARRAY[0");
			for (int i = 0; i < n && len < sizeof(list) - 32; i++)
				if (cl[i].server == s && cl[i].state != ST_DONE)
					len += snprintf(list + len, sizeof(list) - len, ",%d", pids[i]);
			snprintf(list + len, sizeof(list) - len, "]) AS p WHERE p <> 0");
			q1(mon[s], list);
		}
	}

	/*
	 * The FIFO check: pairs granted in the opposite order of the queue.  A
	 * semaphore's waiters are granted in the order ZooKeeper made their
	 * leases (each created while its taker holds the mutex), whose tokens
	 * tell it: two leases held at once may answer in any order.
	 */
	if (kind == LQ_SEMAPHORE1 || kind == LQ_SEMAPHORE2)
	{
		for (int a = 1; a < granted; a++)
		{
			int			x = order[a],
						b = a;

			for (; b > 0 && cl[order[b - 1]].token > cl[x].token; b--)
				order[b] = order[b - 1];
			order[b] = x;
		}
	}
	for (int a = 0; a < granted; a++)
	{
		if (rank[order[a]] < 0)
			unmatched++;
		for (int b = a + 1; b < granted; b++)
		{
			int			x = order[a],
						y = order[b];

			/* readers granted together may answer in any order */
			if (lq_reader(kind, x) && lq_reader(kind, y))
				continue;
			if (rank[x] >= 0 && rank[y] >= 0 && rank[x] > rank[y])
				inversions++;
		}
	}

	/*
	 * Nothing left: no queue node, lease or semaphore node, and, while
	 * every session is still open, no ephemeral node at all (no published
	 * wait either).
	 */
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM zk_cluster_locks('%s')", path);
	left = drained ? wait_for_zero(holder[0], sql, 0, now_us(), 10e6) : -1;
	left_eph = -1;
	if (drained)
	{
		double		t = now_us();

		while ((left_eph = mntr_value(fourlw(zkport, "mntr"), "zk_ephemerals_count")) > 0 &&
			   now_us() - t < 10e6)
			usleep(50000);
	}

	printf("lq_kind %s\n", lq_kind_names[kind]);
	printf("lq_n %d\n", n);
	printf("lq_holders %d\n", nhold);
	printf("lq_deadlock_timeout_ms %d\n", deadlock_ms);
	printf("lq_queue_s %.3f\n", (t_queued - t_send) / 1e6);
	printf("lq_hold_s %.3f\n", hold_s);
	printf("lq_hold_requests %.0f\n", r_hold - r0);
	printf("lq_wait_s %.3f\n", (t1 - t_send) / 1e6);
	printf("lq_wait_requests %.0f\n", r1 - r0);
	printf("lq_wait_peak_rps %.1f\n", peak_rps);
	printf("lq_quiet_after_s %.3f\n", t_quiet ? (t_quiet - t_send) / 1e6 : -1);
	printf("lq_quiet_requests %.0f\n", t_quiet ? r_quiet - r0 : -1);
	printf("lq_quiet_rps %.1f\n", t_quiet ? (r_quiet - r0) / ((t_quiet - t_send) / 1e6) : -1);
	printf("lq_quiet_requests_per_n2 %.3f\n", t_quiet ? (r_quiet - r0) / ((double) n * n) : -1);
	printf("lq_wait_requests_per_n2 %.3f\n", (r1 - r0) / ((double) n * n));
	printf("lq_queued %d\n", listed);
	printf("lq_drained %d\n", drained);
	printf("lq_granted %d\n", granted);
	printf("lq_failures %d\n", failures);
	printf("lq_fifo_inversions %d\n", inversions);
	printf("lq_unmatched %d\n", unmatched);
	printf("lq_drain_ms %.1f\n", drained ? (t_last - t_rel) / 1000.0 : -1);
	printf("lq_drain_requests %.0f\n", r2 - r_rel);
	printf("lq_total_requests %.0f\n", (r1 - r0) + (r2 - r_rel));
	printf("lq_total_requests_per_n2 %.3f\n", ((r1 - r0) + (r2 - r_rel)) / ((double) n * n));
	printf("lq_left_nodes %ld\n", left);
	printf("lq_left_ephemerals %.0f\n", left_eph);

	finish_clients(cl, n);
	for (int h = 0; h < nhold; h++)
		PQfinish(holder[h]);
	for (int s = 0; s < 2; s++)
		PQfinish(mon[s]);

	/* until ZooKeeper has seen our sessions go, for the next case */
	{
		double		t = now_us();

		while (mntr_value(fourlw(zkport, "mntr"), "zk_num_alive_connections") > base_conns &&
			   now_us() - t < 30e6)
			usleep(50000);
		printf("lq_sessions_closed_ms %.1f\n", (now_us() - t) / 1000.0);
	}
	return drained && granted == n && failures == 0 && inversions == 0 &&
		unmatched == 0 && listed == n && left == 0 && left_eph == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		die("usage: pgclients herd|stack|scale|release|dbarrier|longqueue ...");
	if (strcmp(argv[1], "herd") == 0)
		return do_herd(argc, argv);
	if (strcmp(argv[1], "stack") == 0)
		return do_stack(argc, argv);
	if (strcmp(argv[1], "scale") == 0)
		return do_scale(argc, argv);
	if (strcmp(argv[1], "release") == 0)
		return do_release(argc, argv);
	if (strcmp(argv[1], "dbarrier") == 0)
		return do_dbarrier(argc, argv);
	if (strcmp(argv[1], "longqueue") == 0)
		return do_longqueue(argc, argv);
	die("unknown mode %s", argv[1]);
	return 2;
}
