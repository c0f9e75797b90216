/*
 * zkfloor.c: the raw ZooKeeper C client floor for zklock's benchmark.
 *
 *   zkfloor HOSTS MODE SECONDS OUTFILE [WARMUP_SECONDS [GAP_US]]
 *   zkfloor HOSTS parallel|aparallel SECONDS OUTFILE [WARMUP_SECONDS [THREADS]]
 *   zkfloor HOSTS contend SECONDS OUTFILE [WARMUP_SECONDS [THREADS]]
 *   zkfloor HOSTS acomposed SECONDS OUTFILE WARMUP_SECONDS THREADS CONN1 CONN2
 *   zkfloor HOSTS hold SESSIONS TIMEOUT_MS NODES own|shared PREFIX
 *   zkfloor HOSTS list NODES WINDOW PREFIX
 *
 * MODE
 *   create   one ephemeral-sequential create per op (the floor: one quorum
 *            write).  Each timed create is followed by an UNTIMED delete of
 *            the node, waited for, so that the next create starts on an idle
 *            server and the number of children stays at one.
 *   cycle    the textbook lock cycle per op: create EPHEMERAL_SEQUENTIAL,
 *            getChildren of the parent, delete the node; all timed.
 *   cycle2   the two-write floor of a linearizable lock+unlock: create
 *            EPHEMERAL_SEQUENTIAL, then delete it; both synchronous, both
 *            timed.
 *   multi    zklock's traffic with synchronous release: one multi request
 *            {create EPHEMERAL_SEQUENTIAL, setData(parent, "")} (the
 *            setData's Stat tells the queue length), then a synchronous
 *            delete of the node; both timed.
 *   amulti   the same two requests through the asynchronous API, as zklock
 *            sends them: zoo_amulti, then zoo_adelete, each followed by a
 *            wait on a condition variable that the completion sets.  The
 *            floor of a client that must stay interruptible while it waits
 *            (it cannot block inside a synchronous call): see below.
 *   set10    zklock's traffic for an uncontended multi-lock of 10 paths
 *            (zk_lock(text[]) + zk_unlock(text[])): one multi of 10
 *            creates EPHEMERAL_SEQUENTIAL, each followed by a
 *            setData(its parent, ""), then one multi of the 10 deletes;
 *            both timed.
 *   ttlcycle the ZooKeeper traffic of an uncontended lease cycle
 *            (zk_lease_lock + zk_lease_unlock): a create
 *            PERSISTENT_SEQUENTIAL_WITH_TTL (ttl 60 s, zoo_acreate2_ttl) and
 *            a getChildren of the parent sent back to back, both answers
 *            awaited, then a synchronous delete of the node; both timed.
 *            Needs a server started with
 *            -Dzookeeper.extendedTypesEnabled=true.
 *   renew    the ZooKeeper traffic of a lease renewal by the backend that
 *            granted or last renewed it (zk_lease_renew): a setData (the
 *            same 160 bytes again) of one TTL node, its answer awaited.  The node (PERSISTENT_SEQUENTIAL_WITH_TTL, ttl 60 s)
 *            is created before the timed loop and deleted after it.
 *   createlist  a create and a getChildren sent back to back, both answers
 *            waited for (zklock's acquire without the release before it);
 *            the node is then deleted, untimed, as in "create".
 *   pattern  zklock's traffic with background release, with no PostgreSQL
 *            around it: the delete of the previous op's node is sent in the
 *            background (not waited for), then after GAP_US microseconds
 *            (standing for the SQL round trip of the next statement,
 *            default 40) a create and a getChildren are sent back to back
 *            and both answers waited for.  Only that wait is timed.
 *   parallel independent locks in parallel: THREADS threads (default 8),
 *            each with its own session (zhandle) and its own parent node,
 *            each looping the linearizable cycle: create
 *            EPHEMERAL_SEQUENTIAL and getChildren sent back to back
 *            (pipelined), both answers awaited, then a synchronous delete.
 *            A cycle counts when its delete is answered inside the measured
 *            window [WARMUP, WARMUP + SECONDS).  Prints "key value" lines
 *            (aggregate cycles per second); OUTFILE gets "thread cycles"
 *            lines.
 *   aparallel  as parallel, but each thread loops zklock's own cycle as
 *            "amulti" sends it (multi {create, setData(parent)}, then
 *            delete, through the asynchronous API): the floor of zklock's
 *            traffic from as many sessions, without PostgreSQL.
 *   acomposed  the composed throughput floor: as aparallel, but each thread
 *            also has a libpq connection of its own (thread i to CONN1 when
 *            i is even, to CONN2 when it is odd, as the SQL clients
 *            alternate between the two servers) and runs PostgreSQL's two
 *            statements of a cycle between zklock's two requests, in the
 *            order a zklock cycle's backend runs them: SELECT
 *            pg_advisory_lock(KEY), the multi, SELECT
 *            pg_advisory_unlock(KEY), the delete (KEY is 1000 + the
 *            thread's number: no two threads wait for each other).  The
 *            statements are prepared (PQprepare, then PQexecPrepared, as
 *            pgbench -M prepared sends them).  The least a zklock cycle's
 *            backend must do: one statement per ZooKeeper write, each
 *            waited for in turn, with the machine's CPU shared by the
 *            clients, PostgreSQL's backends and ZooKeeper as in the SQL
 *            runs; it counts, prints and writes what aparallel does.
 *            Needs a build with libpq (see below).
 *   contend  contention on one lock: THREADS threads (default 8), each with
 *            its own session, all on one lock node, each looping the
 *            textbook herd-free exclusive lock as fast as it can: create
 *            EPHEMERAL_SEQUENTIAL and getChildren pipelined as in
 *            "parallel"; granted when its node has the lowest sequence,
 *            otherwise an exists watch on the node just before it, and a
 *            new getChildren once that watch fires (at once if that node is
 *            already gone, after WATCH_TIMEOUT_US at the latest); once
 *            granted, a synchronous delete of its node.  A grant counts
 *            when it comes inside the measured window; a grant while
 *            another thread holds the lock is a failure.  Prints "key
 *            value" lines as "parallel" does (grants, grants per second,
 *            failures); OUTFILE gets "thread grants" lines.
 *   hold     no loop: SESSIONS sessions (session timeout TIMEOUT_MS) opened
 *            at once, then NODES lock nodes created as zklock names them
 *            ("_c_<uuid>-__WRIT__<seq>", ephemeral-sequential, with an owner
 *            record), spread over the sessions and pipelined: "own" puts
 *            node k on a lock path of its own, PREFIX/<k / 1000>/<k>,
 *            "shared" all in the queue of PREFIX.  Prints "key value" lines
 *            ending with "hold_ready 1", then holds it all until SIGTERM or
 *            SIGINT (bench/sessions.sh: what many idle sessions cost the
 *            ensemble, and the cluster views on many locks).
 *   list     no loop: a getChildren of each of the NODES lock paths that
 *            "hold ... own PREFIX" makes, WINDOW at most outstanding (1:
 *            one at a time); prints the time (the floor of the cluster
 *            view's walk, pipelined or not).
 *
 * Every call uses the synchronous API of libzookeeper_mt, or its
 * asynchronous API followed by a wait for the completion.  The two differ
 * by one thread hop per answer: libzookeeper_mt completes a synchronous
 * call on its I/O thread (which wakes the caller blocked on a condition
 * variable), but runs every asynchronous completion on its completion
 * thread (the I/O thread queues the answer and wakes that thread, which
 * then wakes the caller).  zklock must use the asynchronous API (a backend
 * waits on its latch so that it can be cancelled), so "amulti" is its
 * floor on this library and "multi" the floor of the library's fastest use.
 *
 * The node data is 160 bytes, about the size of zklock's JSON owner record.
 * In the single-session modes, per-op latencies (microseconds, one per
 * line) go to OUTFILE and a summary line goes to stdout.  Ops during the
 * first WARMUP_SECONDS (default 0.5) are not recorded.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
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

/*
 * Only the acomposed mode talks to PostgreSQL: it is built when libpq's
 * header is on the include path (bench/run.sh builds with
 * -I$(pg_config --includedir) ... -lpq); a build without it (as
 * bench/cpu_account.sh's, which needs no PostgreSQL client) has every other
 * mode, and acomposed says it is missing.
 */
#if defined(__has_include)
#if __has_include(<libpq-fe.h>)
#define ZKFLOOR_LIBPQ
#endif
#endif
#ifdef ZKFLOOR_LIBPQ
#include <libpq-fe.h>
#else
typedef struct pg_conn PGconn;
#endif

#include "common.h"

#define DATA_LEN 160

/*
 * Completion state of asynchronous requests of one session: the callbacks
 * run on that session's completion thread and signal the waiting thread.
 */
typedef struct Waiter
{
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int			pending_ops;	/* create + getChildren outstanding */
	int			pending_deletes;	/* background deletes outstanding */
	int			pending_watch;	/* 1 while a watch is awaited (contend) */
	int			rc;				/* first error of the current ops */
	char		created[256];	/* path of the node just created */
	struct String_vector *children; /* if set, getChildren's answer is
									 * copied here (to be deallocated) */
} Waiter;

/* the TTL of the lease modes' nodes, as zk_lease_lock(path, '60 s') */
#define LEASE_TTL_MS 60000

/* contend mode: the longest wait for a watch before listing again */
#define WATCH_TIMEOUT_US 1e6

typedef enum
{
	M_CREATE,
	M_CYCLE,
	M_CYCLE2,
	M_MULTI,
	M_AMULTI,
	M_SET10,
	M_CREATELIST,
	M_TTLCYCLE,
	M_RENEW,
	M_PATTERN,
	M_PARALLEL,
	M_APARALLEL,
	M_ACOMPOSED,
	M_CONTEND
} Mode;

static void
die(const char *what, int rc)
{
	fprintf(stderr, "zkfloor: %s: %s\n", what, rc ? zerror(rc) : strerror(errno));
	exit(1);
}

static void
waiter_init(Waiter *w)
{
	pthread_condattr_t ca;

	memset(w, 0, sizeof(*w));
	pthread_mutex_init(&w->mu, NULL);
	/* on the clock of now_us(), for waiter_wait_until */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
}

/*
 * completed
 *		What every completion does, on the completion thread: note the
 *		request's error (or, for a create, the path of the node), count one
 *		of *pending (&w->pending_ops or &w->pending_deletes) done, and wake
 *		the waiting thread.
 */
static void
completed(Waiter *w, int rc, int *pending, const char *created)
{
	pthread_mutex_lock(&w->mu);
	if (rc != ZOK)
		w->rc = rc;
	else if (created)
		snprintf(w->created, sizeof(w->created), "%s", created);
	(*pending)--;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* completion of zoo_acreate2: remember the node's path */
static void
create_done(int rc, const char *value, const struct Stat *stat, const void *data)
{
	Waiter	   *w = (Waiter *) data;

	(void) stat;
	completed(w, rc, &w->pending_ops, value);
}

/*
 * completion of zoo_aget_children: the list is copied into w->children if
 * the waiting thread asked for it (it reads it only once pending_ops is 0)
 */
static void
children_done(int rc, const struct String_vector *strings, const void *data)
{
	Waiter	   *w = (Waiter *) data;

	if (rc == ZOK && w->children != NULL)
	{
		allocate_String_vector(w->children, strings->count);
		for (int i = 0; i < strings->count; i++)
			if ((w->children->data[i] = strdup(strings->data[i])) == NULL)
				die("strdup", 0);
	}
	completed(w, rc, &w->pending_ops, NULL);
}

/*
 * a watch set with w as its context fired (or the session changed state:
 * the waiting thread lists again either way)
 */
static void
watch_done(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
	Waiter	   *w = (Waiter *) ctx;

	(void) zh;
	(void) type;
	(void) state;
	(void) path;
	completed(w, ZOK, &w->pending_watch, NULL);
}

/* completion of a background zoo_adelete */
static void
delete_done(int rc, const void *data)
{
	Waiter	   *w = (Waiter *) data;

	completed(w, rc, &w->pending_deletes, NULL);
}

/* completion of zoo_amulti or of a waited-for zoo_adelete */
static void
op_done(int rc, const void *data)
{
	Waiter	   *w = (Waiter *) data;

	completed(w, rc, &w->pending_ops, NULL);
}

/* completion of zoo_aset */
static void
set_done(int rc, const struct Stat *stat, const void *data)
{
	Waiter	   *w = (Waiter *) data;

	(void) stat;
	completed(w, rc, &w->pending_ops, NULL);
}

/* before sending nops requests: none outstanding yet, no error */
static void
waiter_expect(Waiter *w, int nops)
{
	pthread_mutex_lock(&w->mu);
	w->pending_ops = nops;
	w->rc = ZOK;
	pthread_mutex_unlock(&w->mu);
}

/*
 * waiter_wait
 *		Wait until *pending (&w->pending_ops or &w->pending_deletes) is
 *		down to 0; returns the first error of the requests (ZOK if none)
 *		and, given created, copies the path of the node created into it.
 */
static int
waiter_wait(Waiter *w, int *pending, char *created, size_t created_len)
{
	int			rc;

	pthread_mutex_lock(&w->mu);
	while (*pending > 0)
		pthread_cond_wait(&w->cv, &w->mu);
	rc = w->rc;
	if (created)
		snprintf(created, created_len, "%s", w->created);
	pthread_mutex_unlock(&w->mu);
	return rc;
}

/*
 * waiter_wait_until
 *		Wait until *pending is down to 0 or now_us() reaches until_us;
 *		returns whether it is down to 0.
 */
static bool
waiter_wait_until(Waiter *w, int *pending, double until_us)
{
	struct timespec ts;
	bool		done;

	ts.tv_sec = (time_t) (until_us / 1e6);
	ts.tv_nsec = (long) ((until_us - ts.tv_sec * 1e6) * 1e3);
	if (ts.tv_nsec > 999999999)
		ts.tv_nsec = 999999999;
	pthread_mutex_lock(&w->mu);
	while (*pending > 0 &&
		   pthread_cond_timedwait(&w->cv, &w->mu, &ts) != ETIMEDOUT)
		;
	done = *pending <= 0;
	pthread_mutex_unlock(&w->mu);
	return done;
}

/*
 * create_and_list_ttl
 *		Send a create of base and a getChildren of parent back to back and
 *		wait for both answers.  With ttl_ms = 0 the node is
 *		ephemeral-sequential; otherwise persistent-sequential with that TTL
 *		(a lease's node).  The created path is copied into created.  Dies on
 *		any error.
 */
static void
create_and_list_ttl(zhandle_t *zh, Waiter *w, const char *parent, const char *base,
					const char *data, char *created, size_t created_len,
					int64_t ttl_ms)
{
	int			rc;

	waiter_expect(w, 2);
	if (ttl_ms > 0)
		rc = zoo_acreate2_ttl(zh, base, data, DATA_LEN, &ZOO_OPEN_ACL_UNSAFE,
							  ZOO_PERSISTENT_SEQUENTIAL_WITH_TTL, ttl_ms,
							  create_done, w);
	else
		rc = zoo_acreate2(zh, base, data, DATA_LEN, &ZOO_OPEN_ACL_UNSAFE,
						  ZOO_EPHEMERAL | ZOO_SEQUENCE, create_done, w);
	if (rc != ZOK)
		die(ttl_ms > 0 ? "acreate2_ttl" : "acreate2", rc);
	rc = zoo_aget_children(zh, parent, 0, children_done, w);
	if (rc != ZOK)
		die("aget_children", rc);
	rc = waiter_wait(w, &w->pending_ops, created, created_len);
	if (rc != ZOK)
		die("create/getChildren", rc);
}

/* create_and_list_ttl for an ephemeral-sequential node */
static void
create_and_list(zhandle_t *zh, Waiter *w, const char *parent, const char *base,
				const char *data, char *created, size_t created_len)
{
	create_and_list_ttl(zh, w, parent, base, data, created, created_len, 0);
}

/*
 * renew_once
 *		Send a setData of node and wait for its answer: the traffic of a
 *		lease renewal by the backend that granted or last renewed the lease
 *		(zklock sends no read then).  Dies on any error.
 */
static void
renew_once(zhandle_t *zh, Waiter *w, const char *node, const char *data)
{
	int			rc;

	waiter_expect(w, 1);
	rc = zoo_aset(zh, node, data, DATA_LEN, -1, set_done, w);
	if (rc != ZOK)
		die("aset", rc);
	rc = waiter_wait(w, &w->pending_ops, NULL, 0);
	if (rc != ZOK)
		die("getData/setData", rc);
}

/*
 * multi_acquire
 *		The first half of zklock's traffic: a multi {create
 *		EPHEMERAL_SEQUENTIAL under parent, setData of parent}, its answer
 *		awaited; the node's path is copied into created.  With async it
 *		goes through the asynchronous API (the answer on the completion
 *		thread, awaited on w), as zklock sends it; otherwise through the
 *		synchronous API.  Dies on any error, or if the node was not alone.
 */
static void
multi_acquire(zhandle_t *zh, Waiter *w, const char *parent, const char *base,
			  const char *data, char *created, size_t created_len, bool async)
{
	zoo_op_t	ops[2];
	zoo_op_result_t results[2];
	struct Stat pstat;
	int			rc;

	zoo_create_op_init(&ops[0], base, data, DATA_LEN, &ZOO_OPEN_ACL_UNSAFE,
					   ZOO_EPHEMERAL | ZOO_SEQUENCE, created, (int) created_len);
	zoo_set_op_init(&ops[1], parent, "", 0, -1, &pstat);
	if (async)
	{
		waiter_expect(w, 1);
		rc = zoo_amulti(zh, 2, ops, results, op_done, w);
		if (rc != ZOK)
			die("amulti", rc);
		rc = waiter_wait(w, &w->pending_ops, NULL, 0);
	}
	else
		rc = zoo_multi(zh, 2, ops, results);
	if (rc != ZOK)
		die("multi", rc);
	if (results[0].err != ZOK || results[1].err != ZOK)
		die("multi op", results[0].err != ZOK ? results[0].err : results[1].err);
	if (pstat.numChildren != 1)
	{
		fprintf(stderr, "zkfloor: multi: %d children, expected 1\n",
				pstat.numChildren);
		exit(1);
	}
}

/*
 * multi_release
 *		The second half: a delete of the node created, its answer awaited,
 *		through the asynchronous API (with async) or the synchronous one.
 *		Dies on any error.
 */
static void
multi_release(zhandle_t *zh, Waiter *w, const char *created, bool async)
{
	int			rc;

	if (async)
	{
		waiter_expect(w, 1);
		rc = zoo_adelete(zh, created, -1, op_done, w);
		if (rc != ZOK)
			die("adelete", rc);
		rc = waiter_wait(w, &w->pending_ops, NULL, 0);
	}
	else
		rc = zoo_delete(zh, created, -1);
	if (rc != ZOK)
		die("delete", rc);
}

/*
 * multi_cycle
 *		zklock's traffic with synchronous release: multi_acquire, then
 *		multi_release of the node.
 */
static void
multi_cycle(zhandle_t *zh, Waiter *w, const char *parent, const char *base,
			const char *data, char *created, size_t created_len, bool async)
{
	multi_acquire(zh, w, parent, base, data, created, created_len, async);
	multi_release(zh, w, created, async);
}

static void
spin_us(double us)
{
	double		until = now_us() + us;

	while (now_us() < until)
		;
}

/*
 * open_session
 *		Connect to hosts and wait until the session is established (the
 *		first request would wait anyway); dies if it is not within 10 s.
 */
static zhandle_t *
open_session(const char *hosts)
{
	zhandle_t  *zh = zookeeper_init(hosts, NULL, 30000, NULL, NULL, 0);

	if (zh == NULL)
		die("zookeeper_init", 0);

	/*
	 * As zklock does: resolve the host list at most every 30 s rather than
	 * at every socket check (the library's default, a getaddrinfo each
	 * time), so that the floor does not pay a cost zklock avoids.
	 */
	(void) zoo_set_servers_resolution_delay(zh, 30000);
	for (int i = 0; i < 1000 && zoo_state(zh) != ZOO_CONNECTED_STATE; i++)
		usleep(10000);
	if (zoo_state(zh) != ZOO_CONNECTED_STATE)
	{
		fprintf(stderr, "zkfloor: could not connect to %s\n", hosts);
		exit(1);
	}
	return zh;
}

/* create a persistent node if it does not exist yet */
static void
ensure_node(zhandle_t *zh, const char *path)
{
	int			rc = zoo_create(zh, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);

	if (rc != ZOK && rc != ZNODEEXISTS)
		die("create parent", rc);
}

/* ---------------------------------------------------------------------- */
/* parallel and contend modes: a session per thread */

/* contend mode: what the threads share */
typedef struct Contention
{
	pthread_mutex_t mu;
	int			holders;		/* threads that were granted and hold it */
	long		failures;		/* grants while another thread held it */
} Contention;

typedef struct ParThread
{
	pthread_t	tid;
	int			id;
	zhandle_t  *zh;
	Waiter		w;
	char		parent[64];
	char		base[96];
	double		t_rec;			/* start of the measured window */
	double		t_end;			/* its end */
	long		cycles;			/* cycles (contend: grants) completed inside
								 * the window */
	double		busy_us;		/* their summed duration (contend: the
								 * waits, create sent -> granted) */
	Contention *con;			/* contend: shared by all threads */
	bool		amulti;			/* parallel: zklock's cycle, asynchronous (multi_cycle) */
	PGconn	   *pg;				/* acomposed: the thread's connection, with
								 * the statements "lk" and "ul" prepared */
	long		watch_timeouts; /* contend: watches given up on */
} ParThread;

#ifdef ZKFLOOR_LIBPQ

/*
 * pg_open
 *		Connect to conninfo and prepare the composed floor's two
 *		statements on thread key: "lk" (pg_advisory_lock) and "ul"
 *		(pg_advisory_unlock).  Dies on any error.
 */
static PGconn *
pg_open(const char *conninfo, int key)
{
	PGconn	   *conn = PQconnectdb(conninfo);
	char		sql[128];

	if (PQstatus(conn) != CONNECTION_OK)
	{
		fprintf(stderr, "zkfloor: could not connect to \"%s\": %s",
				conninfo, PQerrorMessage(conn));
		exit(1);
	}
	for (int k = 0; k < 2; k++)
	{
		PGresult   *r;

		snprintf(sql, sizeof(sql), "SELECT %s(%d)",
				 k ? "pg_advisory_unlock" : "pg_advisory_lock", key);
		r = PQprepare(conn, k ? "ul" : "lk", sql, 0, NULL);
		if (PQresultStatus(r) != PGRES_COMMAND_OK)
		{
			fprintf(stderr, "zkfloor: prepare %s: %s", sql, PQerrorMessage(conn));
			exit(1);
		}
		PQclear(r);
	}
	return conn;
}

/*
 * pg_statement
 *		Run the prepared statement name ("lk" or "ul") and wait for its
 *		result; dies on an error, or if pg_advisory_unlock says the lock
 *		was not held.
 */
static void
pg_statement(PGconn *conn, const char *name)
{
	PGresult   *r = PQexecPrepared(conn, name, 0, NULL, NULL, NULL, 0);

	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
	{
		fprintf(stderr, "zkfloor: statement %s: %s", name, PQerrorMessage(conn));
		exit(1);
	}
	if (strcmp(name, "ul") == 0 && strcmp(PQgetvalue(r, 0, 0), "t") != 0)
	{
		fprintf(stderr, "zkfloor: pg_advisory_unlock returned %s\n",
				PQgetvalue(r, 0, 0));
		exit(1);
	}
	PQclear(r);
}

/* pg_close: close a connection pg_open opened */
static void
pg_close(PGconn *conn)
{
	PQfinish(conn);
}

#else							/* !ZKFLOOR_LIBPQ */

static PGconn *
pg_open(const char *conninfo, int key)
{
	(void) conninfo;
	(void) key;
	fprintf(stderr, "zkfloor: built without libpq: acomposed is not available\n");
	exit(2);
}

static void
pg_statement(PGconn *conn, const char *name)
{
	(void) conn;
	(void) name;
}

static void
pg_close(PGconn *conn)
{
	(void) conn;
}

#endif							/* ZKFLOOR_LIBPQ */

/*
 * par_main
 *		One thread of the parallel modes: loop its cycle (the linearizable
 *		cycle; zklock's, through the asynchronous API; or that and
 *		PostgreSQL's two statements) on the thread's own session, parent
 *		and connection until the window is over.
 */
static void *
par_main(void *arg)
{
	ParThread  *t = (ParThread *) arg;
	char		data[DATA_LEN];
	char		created[256];

	memset(data, 'x', sizeof(data));
	for (;;)
	{
		double		t0 = now_us(),
					t1;
		int			rc;

		if (t0 >= t->t_end)
			break;
		if (t->pg != NULL)
		{
			/* zklock's two statements, one ZooKeeper write in each */
			pg_statement(t->pg, "lk");
			multi_acquire(t->zh, &t->w, t->parent, t->base, data,
						  created, sizeof(created), true);
			pg_statement(t->pg, "ul");
			multi_release(t->zh, &t->w, created, true);
		}
		else if (t->amulti)
			multi_cycle(t->zh, &t->w, t->parent, t->base, data,
						created, sizeof(created), true);
		else
		{
			create_and_list(t->zh, &t->w, t->parent, t->base, data,
							created, sizeof(created));
			rc = zoo_delete(t->zh, created, -1);
			if (rc != ZOK)
				die("delete", rc);
		}
		t1 = now_us();
		if (t1 >= t->t_rec && t1 < t->t_end)
		{
			t->cycles++;
			t->busy_us += t1 - t0;
		}
	}
	return NULL;
}

/* the sequence number of a sequential node: its last 10 digits */
static long
node_seq(const char *name)
{
	size_t		len = strlen(name);

	return len < 10 ? -1 : atol(name + len - 10);
}

/*
 * contend_wait
 *		The rest of one attempt of the herd-free exclusive lock, once the
 *		thread's node (path node) is created and the lock node's children
 *		listed into *kids: while a node of a lower sequence is there, set an
 *		exists watch on the one just before ours, wait for it (at most
 *		WATCH_TIMEOUT_US, and not past the window; at once if that node is
 *		already gone) and list again.  Deallocates *kids.  Returns true once
 *		our node has the lowest sequence (granted), false if the run ended
 *		first.
 *
 *		An exists watch on a node that is already gone stays set, for its
 *		creation, until the session ends (the recipe's price, small here).
 */
static bool
contend_wait(ParThread *t, const char *node, struct String_vector *kids)
{
	long		mine = node_seq(node);

	for (;;)
	{
		const char *pred = NULL;
		long		pred_seq = -1;
		char		pred_path[256];
		struct Stat st;
		int			rc;

		for (int i = 0; i < kids->count; i++)
		{
			long		s = node_seq(kids->data[i]);

			if (s >= 0 && s < mine && s > pred_seq)
			{
				pred_seq = s;
				pred = kids->data[i];
			}
		}
		if (pred != NULL)
			snprintf(pred_path, sizeof(pred_path), "%s/%s", t->parent, pred);
		deallocate_String_vector(kids);
		if (pred == NULL)
			return true;
		if (now_us() >= t->t_end)
			return false;

		pthread_mutex_lock(&t->w.mu);
		t->w.pending_watch = 1;
		pthread_mutex_unlock(&t->w.mu);
		rc = zoo_wexists(t->zh, pred_path, watch_done, &t->w, &st);
		if (rc == ZOK)
		{
			double		until = now_us() + WATCH_TIMEOUT_US;

			if (!waiter_wait_until(&t->w, &t->w.pending_watch,
								   until < t->t_end ? until : t->t_end) &&
				now_us() < t->t_end)
				t->watch_timeouts++;
		}
		else if (rc != ZNONODE)
			die("wexists", rc);
		rc = zoo_get_children(t->zh, t->parent, 0, kids);
		if (rc != ZOK)
			die("getChildren", rc);
	}
}

/*
 * contend_main
 *		One thread of the contend mode: loop the herd-free exclusive lock
 *		on the shared lock node until the window is over, checking that no
 *		other thread holds the lock when it is granted; its node is deleted
 *		after each attempt, granted or not.
 */
static void *
contend_main(void *arg)
{
	ParThread  *t = (ParThread *) arg;
	Contention *con = t->con;
	char		data[DATA_LEN];
	char		created[256];
	struct String_vector kids;

	memset(data, 'x', sizeof(data));
	t->w.children = &kids;
	while (now_us() < t->t_end)
	{
		double		t0 = now_us(),
					t1;
		int			rc;

		create_and_list(t->zh, &t->w, t->parent, t->base, data,
						created, sizeof(created));
		if (contend_wait(t, created, &kids))
		{
			t1 = now_us();
			pthread_mutex_lock(&con->mu);
			if (++con->holders > 1)
			{
				con->failures++;
				fprintf(stderr, "zkfloor: contend: thread %d granted %s while another thread holds the lock\n",
						t->id, created);
			}
			pthread_mutex_unlock(&con->mu);
			if (t1 >= t->t_rec && t1 < t->t_end)
			{
				t->cycles++;
				t->busy_us += t1 - t0;
			}
			/* released before the delete is sent, which may grant the next */
			pthread_mutex_lock(&con->mu);
			con->holders--;
			pthread_mutex_unlock(&con->mu);
		}
		rc = zoo_delete(t->zh, created, -1);
		if (rc != ZOK)
			die("delete", rc);
	}
	return NULL;
}

/*
 * run_threads
 *		Open nthreads sessions, then let one thread per session loop for
 *		warmup + seconds: the parallel mode's cycle (with amulti, zklock's
 *		cycle through the asynchronous API; given conninfo, two servers'
 *		connection strings, that cycle composed with PostgreSQL's two
 *		statements on a connection per thread, to the servers in turn),
 *		each on a parent node of its own, or (contend) the exclusive lock,
 *		all on one lock node; report the cycles or grants completed in the
 *		measured window.
 */
static int
run_threads(const char *hosts, double seconds, const char *outfile,
			double warmup, int nthreads, bool contend, bool amulti,
			char **conninfo)
{
	const char *name = contend ? "contend" : conninfo ? "acomposed" :
		amulti ? "aparallel" : "parallel";
	const char *what = contend ? "grants" : "cycles";
	ParThread  *th;
	Contention	con;
	FILE	   *out;
	long		total = 0,
				timeouts = 0;
	double		busy = 0,
				start;

	if (nthreads < 1)
	{
		fprintf(stderr, "zkfloor: %s needs at least one thread\n", name);
		return 2;
	}
	memset(&con, 0, sizeof(con));
	pthread_mutex_init(&con.mu, NULL);
	th = calloc(nthreads, sizeof(ParThread));
	for (int i = 0; i < nthreads; i++)
	{
		th[i].id = i;
		th[i].con = &con;
		th[i].amulti = amulti;
		waiter_init(&th[i].w);
		th[i].zh = open_session(hosts);
		if (conninfo)
			th[i].pg = pg_open(conninfo[i % 2], 1000 + i);
		if (contend)
			snprintf(th[i].parent, sizeof(th[i].parent), "/bench_floor_contend");
		else
			snprintf(th[i].parent, sizeof(th[i].parent), "/bench_floor_%s_%d", name, i);
		snprintf(th[i].base, sizeof(th[i].base), "%s/lock-", th[i].parent);
		ensure_node(th[i].zh, th[i].parent);
	}
	start = now_us();
	for (int i = 0; i < nthreads; i++)
	{
		th[i].t_rec = start + warmup * 1e6;
		th[i].t_end = th[i].t_rec + seconds * 1e6;
		if (pthread_create(&th[i].tid, NULL, contend ? contend_main : par_main,
						   &th[i]) != 0)
			die("pthread_create", 0);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i].tid, NULL);

	out = fopen(outfile, "w");
	if (out == NULL)
		die(outfile, 0);
	for (int i = 0; i < nthreads; i++)
	{
		fprintf(out, "%d %ld\n", i, th[i].cycles);
		total += th[i].cycles;
		busy += th[i].busy_us;
		timeouts += th[i].watch_timeouts;
		zookeeper_close(th[i].zh);
		if (th[i].pg)
			pg_close(th[i].pg);
	}
	fclose(out);
	printf("raw_%s_threads %d\n", name, nthreads);
	printf("raw_%s_seconds %.3f\n", name, seconds);
	printf("raw_%s_%s %ld\n", name, what, total);
	printf("raw_%s_%s_per_s %.1f\n", name, what, total / seconds);
	if (!contend)
	{
		printf("raw_%s_mean_cycle_us %.1f\n", name, total ? busy / total : 0);
		return total > 0 ? 0 : 1;
	}
	printf("raw_contend_us_per_grant %.1f\n", total ? seconds * 1e6 / total : 0);
	printf("raw_contend_wait_mean_us %.1f\n", total ? busy / total : 0);
	printf("raw_contend_watch_timeouts %ld\n", timeouts);
	printf("raw_contend_failures %ld\n", con.failures);
	return total > 0 && con.failures == 0 ? 0 : 1;
}

/* ---------------------------------------------------------------------- */
/* hold and list modes: many sessions, their lock nodes, a walk of them */

/* most creates outstanding at once in the hold mode */
#define HOLD_WINDOW 2000

/* completion of a parent's create in the hold mode: already there is fine */
static void
hold_parent_done(int rc, const char *value, const void *data)
{
	Waiter	   *w = (Waiter *) data;

	(void) value;
	completed(w, rc == ZNODEEXISTS ? ZOK : rc, &w->pending_ops, NULL);
}

/* completion of a lock node's create in the hold mode */
static void
hold_node_done(int rc, const char *value, const void *data)
{
	Waiter	   *w = (Waiter *) data;

	(void) value;
	completed(w, rc, &w->pending_ops, NULL);
}

/*
 * waiter_reserve
 *		Before sending one more request counted in w->pending_ops: wait
 *		while window of them are outstanding, then count it.
 */
static void
waiter_reserve(Waiter *w, int window)
{
	pthread_mutex_lock(&w->mu);
	while (w->pending_ops >= window)
		pthread_cond_wait(&w->cv, &w->mu);
	w->pending_ops++;
	pthread_mutex_unlock(&w->mu);
}

/* send one create of the hold mode through w, waiting while the window is full */
static void
hold_send(zhandle_t *zh, Waiter *w, const char *path, const char *data,
		  int len, int flags, string_completion_t done)
{
	int			rc;

	waiter_reserve(w, HOLD_WINDOW);
	rc = zoo_acreate(zh, path, data, len, &ZOO_OPEN_ACL_UNSAFE, flags, done, w);
	if (rc != ZOK)
		die("acreate", rc);
}

/* create path and each missing ancestor as container nodes, as zklock does */
static void
ensure_containers(zhandle_t *zh, const char *path)
{
	char		p[512];

	snprintf(p, sizeof(p), "%s", path);
	for (char *s = strchr(p + 1, '/');; s = strchr(s + 1, '/'))
	{
		int			rc;

		if (s)
			*s = '\0';
		rc = zoo_create(zh, p, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_CONTAINER, NULL, 0);
		if (rc != ZOK && rc != ZNODEEXISTS)
			die("create container", rc);
		if (!s)
			break;
		*s = '/';
	}
}

/*
 * run_hold
 *		The hold mode: open nsessions sessions (session timeout timeout_ms),
 *		all at once, then create nnodes lock nodes as zklock names them
 *		(ephemeral-sequential "_c_<uuid>-__WRIT__<seq>", with an owner record
 *		as zklock writes it), node k by session k % nsessions, pipelined:
 *		with layout "own" each on a lock path of its own,
 *		PREFIX/<k / 1000>/<k> (a container node, as zklock's lock paths), so
 *		that PREFIX/<g> is a subtree of 1000 locks; with "shared" all in the
 *		queue of PREFIX.  Prints "key value" lines, then "hold_ready 1", and
 *		holds everything until SIGTERM or SIGINT; then closes the sessions
 *		(their nodes go with them).
 */
static int
run_hold(const char *hosts, int nsessions, int timeout_ms, int nnodes,
		 const char *layout, const char *prefix)
{
	zhandle_t **zh;
	Waiter		w;
	sigset_t	sigs;
	char		data[512];
	int			len,
				sig,
				connected = 0;
	bool		own = strcmp(layout, "own") == 0;
	double		t0,
				t1;

	if (nsessions < 1 || nnodes < 0 || (!own && strcmp(layout, "shared") != 0) ||
		prefix[0] != '/')
	{
		fprintf(stderr, "zkfloor: hold needs SESSIONS >= 1, NODES >= 0, own|shared, an absolute PREFIX\n");
		return 2;
	}
	/* the library's threads must not take the signals we wait for */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	srandom((unsigned) (getpid() ^ (long) now_us()));
	len = snprintf(data, sizeof(data),
				   "{\"cluster_name\":\"zkfloor\",\"host\":\"127.0.0.1\",\"port\":5432,"
				   "\"pid\":%d,\"database\":\"postgres\",\"user\":\"postgres\","
				   "\"application_name\":\"zkfloor hold\",\"mode\":\"exclusive\","
				   "\"scope\":\"session\"}", (int) getpid());
	waiter_init(&w);

	t0 = now_us();
	zh = calloc(nsessions, sizeof(zhandle_t *));
	for (int i = 0; i < nsessions; i++)
	{
		zh[i] = zookeeper_init(hosts, NULL, timeout_ms, NULL, NULL, 0);
		if (zh[i] == NULL)
			die("zookeeper_init", 0);
		(void) zoo_set_servers_resolution_delay(zh[i], 30000);
	}
	for (double until = now_us() + 120e6; now_us() < until; usleep(20000))
	{
		connected = 0;
		for (int i = 0; i < nsessions; i++)
			connected += zoo_state(zh[i]) == ZOO_CONNECTED_STATE;
		if (connected == nsessions)
			break;
	}
	if (connected != nsessions)
	{
		fprintf(stderr, "zkfloor: hold: %d of %d sessions connected in 120 s\n",
				connected, nsessions);
		return 1;
	}
	t1 = now_us();
	printf("hold_sessions %d\nhold_timeout_ms %d\nhold_negotiated_timeout_ms %d\nhold_connect_s %.2f\n",
		   nsessions, timeout_ms, zoo_recv_timeout(zh[0]), (t1 - t0) / 1e6);

	ensure_containers(zh[0], prefix);
	for (int g = 0; own && g * 1000 < nnodes; g++)
	{
		char		p[512];

		snprintf(p, sizeof(p), "%s/%d", prefix, g);
		ensure_containers(zh[0], p);
	}
	t0 = now_us();
	waiter_expect(&w, 0);
	for (int k = 0; k < nnodes; k++)
	{
		zhandle_t  *z = zh[k % nsessions];
		char		parent[512];
		char		node[640];

		if (own)
		{
			snprintf(parent, sizeof(parent), "%s/%d/%d", prefix, k / 1000, k);
			hold_send(z, &w, parent, "", 0, ZOO_CONTAINER, hold_parent_done);
		}
		else
			snprintf(parent, sizeof(parent), "%s", prefix);
		/* a protection prefix "_c_<uuid>-" with a random UUID */
		snprintf(node, sizeof(node),
				 "%s/_c_%08lx-%04lx-4%03lx-8%03lx-%08lx%04lx-__WRIT__", parent,
				 random() & 0xffffffffL, random() & 0xffffL, random() & 0xfffL,
				 random() & 0xfffL, random() & 0xffffffffL, random() & 0xffffL);
		hold_send(z, &w, node, data, len, ZOO_EPHEMERAL | ZOO_SEQUENCE,
				  hold_node_done);
	}
	if (waiter_wait(&w, &w.pending_ops, NULL, 0) != ZOK)
		die("hold: create", w.rc);
	t1 = now_us();
	printf("hold_nodes %d\nhold_layout %s\nhold_create_s %.2f\nhold_ready 1\n",
		   nnodes, layout, (t1 - t0) / 1e6);
	fflush(stdout);

	sigwait(&sigs, &sig);
	t0 = now_us();
	for (int i = 0; i < nsessions; i++)
		zookeeper_close(zh[i]);
	printf("hold_close_s %.2f\n", (now_us() - t0) / 1e6);
	return 0;
}

/* completion of a getChildren of the list mode */
static void
list_done(int rc, const struct String_vector *strings, const void *data)
{
	Waiter	   *w = (Waiter *) data;

	(void) strings;
	completed(w, rc, &w->pending_ops, NULL);
}

/*
 * run_list
 *		The list mode: one session reads the children of the nnodes lock
 *		paths the hold mode's "own" layout makes (PREFIX/<k / 1000>/<k>),
 *		at most window requests outstanding (1: one at a time, each answer
 *		awaited), and prints the time: the floor of a walk of as many lock
 *		paths, with and without pipelining.
 */
static int
run_list(const char *hosts, int nnodes, int window, const char *prefix)
{
	zhandle_t  *zh = open_session(hosts);
	Waiter		w;
	double		t0;

	if (nnodes < 1 || window < 1)
	{
		fprintf(stderr, "zkfloor: list needs NODES >= 1 and WINDOW >= 1\n");
		return 2;
	}
	waiter_init(&w);
	waiter_expect(&w, 0);
	t0 = now_us();
	for (int k = 0; k < nnodes; k++)
	{
		char		path[512];
		int			rc;

		snprintf(path, sizeof(path), "%s/%d/%d", prefix, k / 1000, k);
		waiter_reserve(&w, window);
		rc = zoo_aget_children(zh, path, 0, list_done, &w);
		if (rc != ZOK)
			die("aget_children", rc);
	}
	if (waiter_wait(&w, &w.pending_ops, NULL, 0) != ZOK)
		die("list: getChildren", w.rc);
	printf("list_window %d\nlist_requests %d\nlist_ms %.1f\n", window, nnodes,
		   (now_us() - t0) / 1e3);
	zookeeper_close(zh);
	return 0;
}

/* ---------------------------------------------------------------------- */

int
main(int argc, char **argv)
{
	const char *hosts;
	const char *modename;
	Mode		mode;
	double		seconds;
	double		warmup = 0.5;
	FILE	   *out;
	zhandle_t  *zh;
	Waiter		w;
	char		data[DATA_LEN];
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
	double		gap_us = 40;
	int			rc;

	if (argc == 8 && strcmp(argv[2], "hold") == 0)
	{
		zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
		return run_hold(argv[1], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]),
						argv[6], argv[7]);
	}
	if (argc == 6 && strcmp(argv[2], "list") == 0)
	{
		zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
		return run_list(argv[1], atoi(argv[3]), atoi(argv[4]), argv[5]);
	}
	if (argc < 5)
	{
		fprintf(stderr, "usage: zkfloor HOSTS create|createlist|cycle|cycle2|multi|amulti|set10|ttlcycle|renew|pattern SECONDS OUTFILE [WARMUP_SECONDS [GAP_US]]\n"
				"       zkfloor HOSTS parallel|aparallel|contend SECONDS OUTFILE [WARMUP_SECONDS [THREADS]]\n"
				"       zkfloor HOSTS acomposed SECONDS OUTFILE WARMUP_SECONDS THREADS CONN1 CONN2\n"
				"       zkfloor HOSTS hold SESSIONS TIMEOUT_MS NODES own|shared PREFIX\n"
				"       zkfloor HOSTS list NODES WINDOW PREFIX\n");
		return 2;
	}
	hosts = argv[1];
	modename = argv[2];
	seconds = atof(argv[3]);
	if (argc > 5)
		warmup = atof(argv[5]);
	if (strcmp(modename, "create") == 0)
		mode = M_CREATE;
	else if (strcmp(modename, "createlist") == 0)
		mode = M_CREATELIST;
	else if (strcmp(modename, "ttlcycle") == 0)
		mode = M_TTLCYCLE;
	else if (strcmp(modename, "renew") == 0)
		mode = M_RENEW;
	else if (strcmp(modename, "pattern") == 0)
		mode = M_PATTERN;
	else if (strcmp(modename, "cycle") == 0)
		mode = M_CYCLE;
	else if (strcmp(modename, "cycle2") == 0)
		mode = M_CYCLE2;
	else if (strcmp(modename, "multi") == 0)
		mode = M_MULTI;
	else if (strcmp(modename, "amulti") == 0)
		mode = M_AMULTI;
	else if (strcmp(modename, "set10") == 0)
		mode = M_SET10;
	else if (strcmp(modename, "parallel") == 0)
		mode = M_PARALLEL;
	else if (strcmp(modename, "aparallel") == 0)
		mode = M_APARALLEL;
	else if (strcmp(modename, "acomposed") == 0)
		mode = M_ACOMPOSED;
	else if (strcmp(modename, "contend") == 0)
		mode = M_CONTEND;
	else
	{
		fprintf(stderr, "zkfloor: unknown mode %s\n", modename);
		return 2;
	}
	zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
	if (mode == M_ACOMPOSED)
	{
#ifndef ZKFLOOR_LIBPQ
		fprintf(stderr, "zkfloor: built without libpq: acomposed is not available\n");
		return 2;
#endif
		if (argc != 9)
		{
			fprintf(stderr, "zkfloor: acomposed needs WARMUP_SECONDS THREADS CONN1 CONN2\n");
			return 2;
		}
		return run_threads(hosts, seconds, argv[4], warmup, atoi(argv[6]),
						   false, true, argv + 7);
	}
	if (mode == M_PARALLEL || mode == M_APARALLEL || mode == M_CONTEND)
		return run_threads(hosts, seconds, argv[4], warmup,
						   argc > 6 ? atoi(argv[6]) : 8, mode == M_CONTEND,
						   mode == M_APARALLEL, NULL);
	if (argc > 6)
		gap_us = atof(argv[6]);

	memset(data, 'x', sizeof(data));
	snprintf(parent, sizeof(parent), "/bench_floor_%s", modename);
	snprintf(base, sizeof(base), "%s/lock-", parent);
	waiter_init(&w);

	zh = open_session(hosts);
	ensure_node(zh, parent);
	for (int i = 0; mode == M_SET10 && i < 10; i++)
	{
		char		p[128];

		snprintf(p, sizeof(p), "%s/p%d", parent, i);
		ensure_node(zh, p);
	}
	if (mode == M_RENEW)
	{
		/* the lease node that every op renews */
		struct Stat st;

		rc = zoo_create2_ttl(zh, base, data, DATA_LEN, &ZOO_OPEN_ACL_UNSAFE,
							 ZOO_PERSISTENT_SEQUENTIAL_WITH_TTL, LEASE_TTL_MS,
							 created, sizeof(created), &st);
		if (rc != ZOK)
			die("create2_ttl", rc);
	}

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
					t1 = 0;
		struct String_vector children;

		if (t0 >= t_end)
			break;
		switch (mode)
		{
			case M_PATTERN:
				/* release the previous node in the background */
				if (created[0] != '\0')
				{
					pthread_mutex_lock(&w.mu);
					w.pending_deletes++;
					pthread_mutex_unlock(&w.mu);
					rc = zoo_adelete(zh, created, -1, delete_done, &w);
					if (rc != ZOK)
						die("adelete", rc);
				}
				spin_us(gap_us);
				t0 = now_us();
				create_and_list(zh, &w, parent, base, data, created, sizeof(created));
				t1 = now_us();
				break;
			case M_CREATELIST:
				create_and_list(zh, &w, parent, base, data, created, sizeof(created));
				t1 = now_us();
				rc = zoo_delete(zh, created, -1);	/* untimed */
				if (rc != ZOK)
					die("delete", rc);
				break;
			case M_TTLCYCLE:
				create_and_list_ttl(zh, &w, parent, base, data, created,
									sizeof(created), LEASE_TTL_MS);
				rc = zoo_delete(zh, created, -1);
				if (rc != ZOK)
					die("delete", rc);
				t1 = now_us();
				break;
			case M_RENEW:
				renew_once(zh, &w, created, data);
				t1 = now_us();
				break;
			case M_MULTI:
			case M_AMULTI:
				multi_cycle(zh, &w, parent, base, data, created, sizeof(created),
							mode == M_AMULTI);
				t1 = now_us();
				break;
			case M_SET10:
				{
					zoo_op_t	ops[20];
					zoo_op_result_t results[20];
					struct Stat pstat[10];
					char		bases[10][128];
					char		parents[10][128];
					char		nodes[10][256];

					for (int i = 0; i < 10; i++)
					{
						snprintf(parents[i], sizeof(parents[i]), "%s/p%d", parent, i);
						snprintf(bases[i], sizeof(bases[i]), "%s/lock-", parents[i]);
						zoo_create_op_init(&ops[2 * i], bases[i], data, DATA_LEN,
										   &ZOO_OPEN_ACL_UNSAFE,
										   ZOO_EPHEMERAL | ZOO_SEQUENCE,
										   nodes[i], sizeof(nodes[i]));
						zoo_set_op_init(&ops[2 * i + 1], parents[i], "", 0, -1, &pstat[i]);
					}
					t0 = now_us();
					rc = zoo_multi(zh, 20, ops, results);
					if (rc != ZOK)
						die("multi", rc);
					for (int i = 0; i < 10; i++)
						zoo_delete_op_init(&ops[i], nodes[i], -1);
					rc = zoo_multi(zh, 10, ops, results);
					if (rc != ZOK)
						die("multi delete", rc);
					t1 = now_us();
				}
				break;
			case M_CREATE:
			case M_CYCLE:
			case M_CYCLE2:
				rc = zoo_create(zh, base, data, sizeof(data), &ZOO_OPEN_ACL_UNSAFE,
								ZOO_EPHEMERAL | ZOO_SEQUENCE, created, sizeof(created));
				if (rc != ZOK)
					die("create", rc);
				if (mode == M_CYCLE)
				{
					rc = zoo_get_children(zh, parent, 0, &children);
					if (rc != ZOK)
						die("getChildren", rc);
					deallocate_String_vector(&children);
				}
				if (mode == M_CREATE)
					t1 = now_us();
				rc = zoo_delete(zh, created, -1);	/* untimed in "create" */
				if (rc != ZOK)
					die("delete", rc);
				if (mode != M_CREATE)
					t1 = now_us();
				break;
			case M_PARALLEL:
			case M_APARALLEL:
			case M_ACOMPOSED:
			case M_CONTEND:
				break;			/* handled above */
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
	if (mode == M_RENEW)
	{
		rc = zoo_delete(zh, created, -1);
		if (rc != ZOK)
			die("delete", rc);
	}
	if (mode == M_PATTERN)
		(void) waiter_wait(&w, &w.pending_deletes, NULL, 0);
	zookeeper_close(zh);

	if (n == 0)
	{
		fprintf(stderr, "zkfloor: no op completed\n");
		return 1;
	}
	qsort(lat, n, sizeof(double), cmp_double);
	printf("zkfloor %s: n=%zu mean=%.1f us median=%.1f us p99=%.1f us\n",
		   modename, n, sum / n, pct(lat, (int) n, 0.5), pct(lat, (int) n, 0.99));
	return 0;
}
