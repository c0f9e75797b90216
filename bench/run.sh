#!/usr/bin/env bash
# bench/run.sh: zklock's benchmark harness.  Not part of the test suite.
#
#   bench/run.sh            full run: writes bench/out/full/, BENCHMARKS.md
#                           and bench/latency.png
#   bench/run.sh --quick    short run (fewer rounds, shorter phases, 2000
#                           locks instead of 10000): writes bench/out/quick/
#                           only (BENCHMARKS.md is left alone)
#   options: --rounds N  --seconds S  (override the round count / seconds per
#            variant and round), --phase-seconds S (seconds of the contention
#            and parallel phases), --no-docs (never touch BENCHMARKS.md),
#            --phases LIST (comma-separated subset of latency, multi,
#            semaphore, lease, barrier, fresh, fanout, stack, contend,
#            parallel, herd, scale, release, deadlock, cpu; default all;
#            implies --no-docs),
#            --variants LIST (comma-separated subset of the latency
#            variants; implies --no-docs; the multi, semaphore, lease and
#            barrier phases run all of theirs),
#            --docs-only (no
#            measurement: redo the analysis, plot and BENCHMARKS.md from the
#            raw data of the last full run)
#
# One run starts a standalone ZooKeeper (test/zkctl) and two PostgreSQL 15
# clusters (as the postgres user, in a temporary directory) on loopback
# ports that are free, then runs the phases below; BENCHMARKS.md (written by
# bench/analyze.py) states each one's method next to its figures.
#   latency    (a) the raw C client's floors (bench/zkfloor.c), (b) SQL
#              cycles with pgbench -M prepared -c 1, (c) the peers: kazoo
#              (bench/kazoo_bench.py) and Curator (bench/CuratorBench.java)
#   multi, semaphore, lease, barrier   (i)-(l) uncontended multi-locks,
#              semaphores, leases and an 8-member double barrier (bench/
#              pgclients dbarrier) against Curator and the floors measured
#              again in the same rounds
#   fresh, fanout   (m)-(n) paths whose lock node is missing; 80 pgbench
#              clients over 4000 paths against as many raw C sessions
#   stack      the stacked re-acquire (bench/pgclients stack)
#   contend    (d) 8 SQL clients on one path (pgbench, bench/contend.sql),
#              Curator with 8 contenders, the bare recipe in C (zkfloor
#              contend)
#   parallel   (e) 8 SQL clients on paths of their own (pgbench,
#              bench/parallel.sql) against raw C sessions (zkfloor parallel,
#              aparallel, acomposed)
#   herd       200 waiters on one path, ZooKeeper's watch counters
#   scale, release   (f)-(g) one backend holding 10000 locks (2000 with
#              --quick), and releasing them at COMMIT or zk_unlock_all()
#   deadlock   (h) deadlock_timeout to 40P01 for 2-, 3- and 4-cycles across
#              the two servers (bench/deadlock.sql)
#   cpu        CPU and context switches per cycle (bench/cpu_account.sh
#              --no-callgrind, with servers of its own)
# The latency variants (a)-(c) run in ROUNDS rounds; every round runs every
# variant once, in an order rotated from round to round, so that drift of
# this shared machine hits all variants alike.  The multi, semaphore,
# lease and barrier phases run their own variants in rounds too,
# MULTI_ROUNDS, SEM_ROUNDS, LEASE_ROUNDS and BARRIER_ROUNDS of them (4, 6, 6
# and 6 in a full run, ROUNDS with --quick or --rounds), in the listed
# order in odd rounds and the reverse in even ones (zklock, Curator,
# Curator, zklock, ...), their ratios again computed within each round;
# they take about 100 s, 70 s, 130 s and 110 s in a full run.  bench/analyze.py turns the
# raw samples into the tables and BENCHMARKS.md; gnuplot draws the plot.
#
# Everything started here (ZooKeeper, both postmasters, every client) is
# stopped by pid when the script exits, however it exits.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")
PGBIN=/usr/lib/postgresql/15/bin
PY=/usr/bin/python3 # Debian's python3, which has python3-kazoo
JARS=/usr/share/java
ZKCTL=$REPO/test/zkctl

ALL_PHASES="latency multi semaphore lease barrier fresh fanout stack contend parallel herd scale release deadlock cpu"
# every latency variant, in the order of the tables; sql_lock_async is
# dropped at run time when the installed build has no
# zklock.synchronous_release
ALL_VARIANTS="floor_create floor_createlist floor_pattern floor_cycle floor_cycle2 floor_multi
	floor_amulti sql_lock sql_lock_async sql_xact sql_advisory kazoo curator_mutex curator_rw_write"

MODE=full
ROUNDS=""
SECONDS_PER=""
PHASE_SECONDS=""
PHASES=$ALL_PHASES
ONLY_VARIANTS=""
DOCS=1
CMDLINE="bench/run.sh${*:+ $*}"
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) MODE=quick ;;
	--rounds) ROUNDS=$2; shift ;;
	--seconds) SECONDS_PER=$2; shift ;;
	--phase-seconds) PHASE_SECONDS=$2; shift ;;
	--phases) PHASES=${2//,/ }; DOCS=0; shift ;;
	--variants) ONLY_VARIANTS=${2//,/ }; DOCS=0; shift ;;
	--no-docs) DOCS=0 ;;
	--docs-only) MODE=docs ;;
	-h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
for p in $PHASES; do
	case " $ALL_PHASES " in
	*" $p "*) ;;
	*) echo "run.sh: unknown phase $p (phases: $ALL_PHASES)" >&2; exit 2 ;;
	esac
done
for v in $ONLY_VARIANTS; do
	case " $(echo $ALL_VARIANTS) " in
	*" $v "*) ;;
	*) echo "run.sh: unknown variant $v (variants: $(echo $ALL_VARIANTS))" >&2; exit 2 ;;
	esac
done
want() { case " $(echo $PHASES) " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

if [ "$MODE" = docs ]; then
	OUT=$HERE/out/full
	[ -f "$OUT/machine.txt" ] || { echo "run.sh: no full run in $OUT" >&2; exit 1; }
	"$PY" "$HERE/analyze.py" "$OUT"
	gnuplot -e "datafile='$OUT/plot.dat'; outfile='$OUT/latency.png'" "$HERE/latency.gp"
	cp "$OUT/latency.png" "$HERE/latency.png"
	cp "$OUT/BENCHMARKS.md" "$REPO/BENCHMARKS.md"
	cat "$OUT/summary.txt"
	exit 0
fi
USER_ROUNDS=$ROUNDS
if [ "$MODE" = quick ]; then
	: "${ROUNDS:=2}" "${SECONDS_PER:=2}"
	PGB_WARMUP=1 JAVA_WARMUP=1.5 KAZOO_WARMUP=0.5 FLOOR_WARMUP=0.3
	CONTEND_SECONDS=4 HERD_PER_SERVER=100 STACK_CALLS=100000 SCALE_LOCKS=2000 RELEASE_LOCKS=2000 DEADLOCK_REPS=5 CPU_SECONDS=4 CPU_ROUNDS=1
	DOCS=0
else
	: "${ROUNDS:=7}" "${SECONDS_PER:=3}"
	PGB_WARMUP=1 JAVA_WARMUP=2 KAZOO_WARMUP=1 FLOOR_WARMUP=0.5
	CONTEND_SECONDS=10 HERD_PER_SERVER=100 STACK_CALLS=100000 SCALE_LOCKS=10000 RELEASE_LOCKS=10000 DEADLOCK_REPS=15 CPU_SECONDS=6 CPU_ROUNDS=3
fi
# rounds of the multi, semaphore, lease and barrier phases (even, so that
# the forward and reversed orders pair up); --rounds and --quick set them
# to ROUNDS
if [ -n "$USER_ROUNDS" ] || [ "$MODE" = quick ]; then
	MULTI_ROUNDS=$ROUNDS SEM_ROUNDS=$ROUNDS LEASE_ROUNDS=$ROUNDS BARRIER_ROUNDS=$ROUNDS
	FRESH_ROUNDS=$ROUNDS FANOUT_ROUNDS=$ROUNDS
else
	MULTI_ROUNDS=4 SEM_ROUNDS=6 LEASE_ROUNDS=6 BARRIER_ROUNDS=6 FRESH_ROUNDS=6 FANOUT_ROUNDS=4
fi
# fanout phase: clients per server, distinct paths, seconds per run
FANOUT_CLIENTS=40
FANOUT_PATHS=4000
FANOUT_SECONDS=10
[ "$MODE" = quick ] && FANOUT_SECONDS=4
MULTI_SIZES="10 100" # paths per multi-lock
SEM_LEASES=4
LEASE_TTL='60 s' # the lease phase's ttl (zkfloor's lease modes use 60 s too)
# barrier phase: 2 x BARRIER_PER_SERVER members; the last member's enter is
# sent BARRIER_GAP_MS after the others'
BARRIER_PER_SERVER=4
BARRIER_GAP_MS=5
[ -n "$PHASE_SECONDS" ] && CONTEND_SECONDS=$PHASE_SECONDS
PARALLEL_SECONDS=$CONTEND_SECONDS
PARALLEL_WARMUP=1
CONTENDERS_PER_SERVER=4 # contention and parallel phases: 2 servers (or JVMs) x 4
CONTEND_WARMUP=1 # contention phase: seconds not counted (zklock and the C floor)
GAP_US=40 # pattern mode: stands for the SQL round trip between unlock and lock

OUT=$HERE/out/$MODE
# a run of selected phases or variants does not replace a whole run's data
if [ "$(echo $PHASES)" != "$ALL_PHASES" ] || [ -n "$ONLY_VARIANTS" ]; then
	OUT=$HERE/out/$MODE-partial
fi
RAW=$OUT/raw
BUILD=$HERE/out/build
T_START=$(date +%s)

# fds 3 and 4: the script's own stdout and stderr, whatever a command's
# output is redirected to when log() or die() runs
exec 3>&1 4>&2
log() { printf '[%s +%4ss] %s\n' "$(date +%H:%M:%S)" "$(($(date +%s) - T_START))" "$*" >&3; }
die() { log "ERROR: $*" 3>&4; exit 1; }

# ---------------------------------------------------------------------------
# cleanup: everything we start is recorded here and stopped by pid

TMP=""
PG_DATADIRS=()
CHILD_PIDS=()

stop_pid() { # pid, signal
	local pid=$1 sig=${2:-TERM} i
	kill -0 "$pid" 2>/dev/null || return 0
	kill "-$sig" "$pid" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
}

cleanup() {
	local rc=$? pid d
	trap - EXIT INT TERM
	set +e
	for pid in "${CHILD_PIDS[@]}"; do stop_pid "$pid" TERM; done
	for d in "${PG_DATADIRS[@]}"; do
		if [ -f "$d/postmaster.pid" ]; then
			pid=$(head -1 "$d/postmaster.pid")
			# fast shutdown; its backends close their ZooKeeper sessions
			[ -n "$pid" ] && stop_pid "$pid" INT
		fi
	done
	if [ -n "$TMP" ] && [ -d "$TMP/zk" ]; then
		"$ZKCTL" stop "$TMP/zk" || true
	fi
	if [ -n "$TMP" ] && [ -d "$TMP" ]; then
		mkdir -p "$OUT/logs"
		for d in "$TMP"/pg*/log "$TMP"/zk/s1/zk.log; do
			[ -f "$d" ] && cp "$d" "$OUT/logs/$(basename "$(dirname "$d")")-$(basename "$d")" 2>/dev/null
		done
		rm -rf "$TMP"
	fi
	if [ $rc -ne 0 ]; then
		log "run.sh failed (exit $rc); logs in $OUT/logs"
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# run a command in the background under timeout(1), recorded for cleanup,
# and wait for it (timeout passes a TERM it receives on to the command)
run_bounded() { # seconds, command...
	local limit=$1 pid rc=0
	shift
	timeout -k 10 "$limit" "$@" &
	pid=$!
	CHILD_PIDS+=("$pid")
	wait "$pid" || rc=$?
	return $rc
}

# the same, but not waited for: the pid of timeout(1) is left in BOUNDED_PID
start_bounded() { # seconds, command...
	local limit=$1
	shift
	timeout -k 10 "$limit" "$@" &
	BOUNDED_PID=$!
	CHILD_PIDS+=("$BOUNDED_PID")
}

# wait for a command started by start_bounded whose output is in OUTFILE;
# if it failed, show that output, append "NAME_failed 1" to it when a NAME
# is given (analyze.py reports it), and return 1
wait_bounded() { # pid outfile [name]
	wait "$1" && return 0
	cat "$2" >&2
	[ -z "${3:-}" ] || echo "$3_failed 1" >>"$2"
	return 1
}

# run a phase's command with its output in OUTFILE; if it fails, show that
# output and append "NAME_failed 1" to it (analyze.py reports it): the run
# goes on with the next phase
record() { # outfile name command...
	local out=$1 name=$2
	shift 2
	"$@" >"$out" 2>&1 || { cat "$out" >&2; echo "${name}_failed 1" >>"$out"; }
}

# ---------------------------------------------------------------------------
# preflight

[ "$(id -u)" = 0 ] || die "run as root (PostgreSQL is run as the postgres user via runuser)"
for c in gcc javac java runuser "$PY" "$PGBIN/pgbench" "$PGBIN/initdb" "$ZKCTL"; do
	command -v "$c" >/dev/null || die "missing $c"
done
# the plot is drawn for BENCHMARKS.md only
[ "$DOCS" = 0 ] || command -v gnuplot >/dev/null || die "missing gnuplot"
[ -f /usr/share/postgresql/15/extension/zklock.control ] ||
	die "zklock is not installed (make install in $REPO)"
"$PY" -c 'import kazoo' 2>/dev/null || die "python3-kazoo is missing"
CURATOR_CP=""
for j in curator-recipes curator-framework curator-client zookeeper zookeeper-jute \
	slf4j-api slf4j-nop guava; do
	[ -f "$JARS/$j.jar" ] || die "missing $JARS/$j.jar"
	CURATOR_CP+="${CURATOR_CP:+:}$JARS/$j.jar"
done

rm -rf "$OUT"
mkdir -p "$RAW" "$BUILD"
log "mode $MODE: $ROUNDS rounds x ${SECONDS_PER}s per variant; output in $OUT"
cmp -s "$REPO/zklock.so" /usr/lib/postgresql/15/lib/zklock.so ||
	log "WARNING: the installed zklock.so is not $REPO/zklock.so (another checkout's make install?)"

# ---------------------------------------------------------------------------
# build the helpers

log "building helpers"
gcc -O2 -Wall -Wextra -I"$(pg_config --includedir)" -o "$BUILD/zkfloor" "$HERE/zkfloor.c" -lzookeeper_mt -lpthread -lpq
gcc -O2 -Wall -Wextra -I"$(pg_config --includedir)" -o "$BUILD/pgclients" "$HERE/pgclients.c" -lpq
javac -nowarn -d "$BUILD" -cp "$CURATOR_CP" "$HERE/CuratorBench.java"

# ---------------------------------------------------------------------------
# machine notes (before)

{
	echo "date_utc $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "command $CMDLINE"
	echo "mode $MODE"
	echo "rounds $ROUNDS"
	echo "seconds_per_variant $SECONDS_PER"
	echo "pgbench_warmup_s $PGB_WARMUP"
	echo "java_warmup_s $JAVA_WARMUP"
	echo "kazoo_warmup_s $KAZOO_WARMUP"
	echo "floor_warmup_s $FLOOR_WARMUP"
	echo "gap_us $GAP_US"
	echo "phases $(echo $PHASES)"
	echo "pgoptions_env ${PGOPTIONS:-}"
	echo "contend_seconds $CONTEND_SECONDS"
	echo "parallel_seconds $PARALLEL_SECONDS"
	echo "release_locks $RELEASE_LOCKS"
	echo "multi_rounds $MULTI_ROUNDS"
	echo "multi_sizes $MULTI_SIZES"
	echo "semaphore_rounds $SEM_ROUNDS"
	echo "semaphore_leases $SEM_LEASES"
	echo "lease_rounds $LEASE_ROUNDS"
	echo "lease_ttl $LEASE_TTL"
	echo "barrier_rounds $BARRIER_ROUNDS"
	echo "barrier_members $((2 * BARRIER_PER_SERVER))"
	echo "barrier_gap_ms $BARRIER_GAP_MS"
	echo "fresh_rounds $FRESH_ROUNDS"
	echo "fanout_rounds $FANOUT_ROUNDS"
	echo "fanout_clients_per_server $FANOUT_CLIENTS"
	echo "fanout_paths $FANOUT_PATHS"
	echo "fanout_seconds $FANOUT_SECONDS"
	echo "git_head $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "git_dirty_src $(git -C "$REPO" status --porcelain -- src include sql Makefile 2>/dev/null | wc -l)"
	echo "zklock_so_md5 $(md5sum /usr/lib/postgresql/15/lib/zklock.so | cut -c1-12)"
	echo "zklock_so_mtime $(date -u -r /usr/lib/postgresql/15/lib/zklock.so '+%Y-%m-%d %H:%M:%S UTC')"
	# the build of this tree, to tell whether the installed one is it (the
	# installation is shared: another checkout's make install replaces it)
	echo "repo_so_md5 $( (md5sum "$REPO/zklock.so" 2>/dev/null || echo none) | cut -c1-12)"
	echo "cpu $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
	echo "nproc $(nproc)"
	echo "mem_gb $(free -g | awk '/^Mem:/ {print $2}')"
	echo "kernel $(uname -r)"
	echo "postgres $("$PGBIN/postgres" --version)"
	echo "libzookeeper_mt $(dpkg-query -W -f='${Version}' libzookeeper-mt2 2>/dev/null)"
	echo "kazoo $(dpkg-query -W -f='${Version}' python3-kazoo 2>/dev/null)"
	echo "curator $(dpkg-query -W -f='${Version}' libcurator-recipes-java 2>/dev/null)"
	echo "java $(java -version 2>&1 | head -1)"
	echo "loadavg_start $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/machine.txt"

# ---------------------------------------------------------------------------
# ports, ZooKeeper, PostgreSQL

free_ports() { # count
	"$PY" - "$1" <<'EOF'
import random, socket, sys
n = int(sys.argv[1]); got = []
while len(got) < n:
    p = random.randint(20000, 40000)
    if p in got:
        continue
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
        got.append(p)
    except OSError:
        pass
    finally:
        s.close()
print(" ".join(map(str, got)))
EOF
}
read -r ZKPORT PGPORT1 PGPORT2 <<<"$(free_ports 3)"
TMP=$(mktemp -d /tmp/zklock-bench.XXXXXX)
chmod 755 "$TMP"
ZKHOSTS=127.0.0.1:$ZKPORT
echo "zk_port $ZKPORT" >>"$OUT/machine.txt"
echo "zk_datadir_fs $(df -T "$TMP" | awk 'NR==2 {print $2" on "$1}')" >>"$OUT/machine.txt"

# who else uses the CPU meanwhile (this machine is shared)
"$PY" "$HERE/cpuwatch.py" "$RAW/cpu.txt" $$ "$TMP" zkbench &
CHILD_PIDS+=($!)

log "starting ZooKeeper on port $ZKPORT"
"$ZKCTL" start "$TMP/zk" "$ZKPORT"
echo "zk_version $("$ZKCTL" 4lw "$ZKPORT" srvr | sed -n 's/^Zookeeper version: //p' | cut -d, -f1)" >>"$OUT/machine.txt"

start_pg() { # n port
	local n=$1 port=$2 d=$TMP/pg$1
	mkdir -p "$d"
	chown postgres: "$d"
	runuser -u postgres -- "$PGBIN/initdb" -D "$d/data" -A trust -U postgres -E UTF8 --locale=C >"$d/initdb.log" 2>&1 ||
		{ cat "$d/initdb.log" >&2; die "initdb $n failed"; }
	cat >>"$d/data/postgresql.conf" <<EOF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$d'
cluster_name = 'zkbench$n'
max_connections = 130
shared_buffers = 64MB
zklock.hosts = '$ZKHOSTS'
zklock.max_locks_per_backend = 20000
log_line_prefix = '%m [%p] %q%a '
EOF
	PG_DATADIRS+=("$d/data")
	runuser -u postgres -- "$PGBIN/pg_ctl" -D "$d/data" -l "$d/log" -w -t 60 start >/dev/null ||
		{ tail -20 "$d/log" >&2; die "PostgreSQL $n did not start"; }
	"$PGBIN/psql" -h "$d" -p "$port" -U postgres -d postgres -Xq -v ON_ERROR_STOP=1 \
		-c 'CREATE EXTENSION zklock' -c "SELECT zk_try_lock('/bench/hello')" -c 'SELECT zk_unlock_all()' >/dev/null
}
log "starting PostgreSQL clusters on ports $PGPORT1 and $PGPORT2"
start_pg 1 "$PGPORT1"
start_pg 2 "$PGPORT2"
CONN1="host=$TMP/pg1 port=$PGPORT1 user=postgres dbname=postgres"
CONN2="host=$TMP/pg2 port=$PGPORT2 user=postgres dbname=postgres"
PSQL1=("$PGBIN/psql" -h "$TMP/pg1" -p "$PGPORT1" -U postgres -d postgres -XAtq -v ON_ERROR_STOP=1)

# Does the installed build have zklock.synchronous_release?  A build without
# it releases in the background; the variant that turns it off is then not
# available.  With it, check that PGOPTIONS reaches the setting (pgbench
# -M prepared runs its script again and again in one session, so the
# setting is given at connection time).
SYNC_RELEASE=$("${PSQL1[@]}" -c "LOAD 'zklock'" \
	-c "SELECT coalesce(current_setting('zklock.synchronous_release', true), 'absent')" | tail -1)
ASYNC_PGOPTIONS='-c zklock.synchronous_release=off'
ASYNC_STATUS=unavailable
if [ "$SYNC_RELEASE" != absent ]; then
	got=$(PGOPTIONS=$ASYNC_PGOPTIONS "${PSQL1[@]}" -c "LOAD 'zklock'" -c "SHOW zklock.synchronous_release" 2>&1 | tail -1)
	if [ "$got" = off ]; then
		ASYNC_STATUS=available
	else
		log "zklock.synchronous_release exists but PGOPTIONS did not set it (got '$got'): sql_lock_async not available"
	fi
fi
log "zklock.synchronous_release in a new session: $SYNC_RELEASE; background-release variant $ASYNC_STATUS"
{
	echo "sync_release_guc $SYNC_RELEASE"
	echo "sql_lock_async $ASYNC_STATUS"
} >>"$OUT/machine.txt"

# ---------------------------------------------------------------------------
# the latency variants

cat >"$BUILD/sql_lock.sql" <<'EOF'
SELECT zk_lock('/bench/x');
SELECT zk_unlock('/bench/x');
EOF
cat >"$BUILD/sql_xact.sql" <<'EOF'
BEGIN;
SELECT zk_xact_lock('/bench/x');
COMMIT;
EOF
cat >"$BUILD/sql_advisory.sql" <<'EOF'
SELECT pg_advisory_lock(1);
SELECT pg_advisory_unlock(1);
EOF
# multi phase: one multi-lock over N fixed paths, then its release
for n in $MULTI_SIZES; do
	arr=""
	for ((i = 1; i <= n; i++)); do
		arr+="${arr:+, }'/bench/multi/$n/p$i'"
	done
	printf 'SELECT zk_lock(ARRAY[%s]);\nSELECT zk_unlock(ARRAY[%s]);\n' "$arr" "$arr" >"$BUILD/sql_multi$n.sql"
done
cat >"$BUILD/sql_semaphore.sql" <<EOF
SELECT zk_semaphore_acquire('/bench/sem', $SEM_LEASES);
SELECT zk_semaphore_release('/bench/sem');
EOF
# lease phase: \gset ends the first query and keeps its result in :t
cat >"$BUILD/sql_lease_cycle.sql" <<EOF
SELECT zk_lease_lock('/bench/lease', '$LEASE_TTL') AS t \gset
SELECT zk_lease_unlock('/bench/lease', :t);
EOF
# fresh phase: a path nobody used before in every cycle; the warm cycle
cat >"$BUILD/sql_fresh.sql" <<'EOF'
\set n random(1, 2000000000)
SELECT zk_lock('/bench/fresh/' || :n);
SELECT zk_unlock('/bench/fresh/' || :n);
EOF
cat >"$BUILD/sql_fresh_warm.sql" <<'EOF'
SELECT zk_lock('/bench/freshwarm');
SELECT zk_unlock('/bench/freshwarm');
EOF
# fanout phase: one of FANOUT_PATHS paths per transaction
cat >"$BUILD/sql_fanout.sql" <<EOF
\set n random(1, $FANOUT_PATHS)
SELECT zk_lock('/bench/fan/' || :n);
SELECT zk_unlock('/bench/fan/' || :n);
EOF
# fanout phase, fanout_own: each client on a path of its own (:s, the
# server, is given with -D), as each session of the floors has its own
# parent: the same ZooKeeper work per cycle as theirs
cat >"$BUILD/sql_fanout_own.sql" <<'EOF'
SELECT zk_lock('/bench/fanown/' || :s || '_' || :client_id);
SELECT zk_unlock('/bench/fanown/' || :s || '_' || :client_id);
EOF
# :token is given with -D by run_lease_renew
cat >"$BUILD/sql_lease_renew.sql" <<'EOF'
SELECT zk_lease_renew('/bench/renew', :token);
EOF

VARIANTS=()
for v in $ALL_VARIANTS; do
	if [ -n "$ONLY_VARIANTS" ]; then
		case " $(echo $ONLY_VARIANTS) " in *" $v "*) ;; *) continue ;; esac
	fi
	if [ "$v" = sql_lock_async ] && [ "$ASYNC_STATUS" != available ]; then
		: >"$RAW/sql_lock_async.unavailable"
		continue
	fi
	VARIANTS+=("$v")
done
want latency || VARIANTS=()
echo "variants ${VARIANTS[*]}" >>"$OUT/machine.txt"

# pgbench with a per-transaction log; keeps the transactions that started
# after the warm-up (the first ones open the backend's ZooKeeper session)
# and writes their latencies, one per line, in microseconds.  PGOPTIONS,
# when given, is passed to the pgbench session; further arguments (such as
# -D name=value) are passed to pgbench.
run_pgbench() { # script seconds outfile [pgoptions [pgbench options...]]
	local script=$1 secs=$2 outfile=$3 pgopts=${4:-} prefix=$RAW/pgb.$$
	shift $(($# < 4 ? $# : 4))
	rm -f "$prefix".*
	run_bounded $((secs + PGB_WARMUP + 60)) env PGOPTIONS="$pgopts" \
		"$PGBIN/pgbench" -h "$TMP/pg1" -p "$PGPORT1" -U postgres -n -M prepared -c 1 -r \
		-T $((secs + PGB_WARMUP)) -l --log-prefix="$prefix" "$@" -f "$script" postgres \
		>"$outfile.pgbench" 2>&1 || { cat "$outfile.pgbench" >&2; return 1; }
	# client_id txn_no latency_us script_no epoch_s epoch_us
	awk -v w="$PGB_WARMUP" '
		{ end = $5 + $6 / 1e6; start = end - $3 / 1e6 }
		NR == 1 { t0 = start }
		start >= t0 + w { printf "%s\n", $3 }' "$prefix".* >"$outfile"
	rm -f "$prefix".*
}

# lease phase: the leases left on a path (pgbench may stop between the
# lock and the unlock of its last cycle) are released, each noted in
# OUTFILE.leftover, so that none blocks the next run; any other node left
# in its queue fails the run
lease_leftovers() { # path outfile
	local path=$1 outfile=$2 tok
	for tok in $("${PSQL1[@]}" -c "SELECT fencing_token FROM zk_lock_queue('$path') WHERE granted"); do
		echo "$path $tok" >>"$outfile.leftover"
		[ "$("${PSQL1[@]}" -c "SELECT zk_lease_unlock('$path', $tok)")" = t ] ||
			{ echo "could not release the leftover lease $tok on $path" >&2; return 1; }
	done
	[ "$("${PSQL1[@]}" -c "SELECT count(*) FROM zk_lock_queue('$path')")" = 0 ] ||
		{ echo "nodes left in the queue of $path:" >&2; "${PSQL1[@]}" -c "SELECT * FROM zk_lock_queue('$path')" >&2; return 1; }
}

# lease phase: renewals by pgbench of a lease taken by psql just before
# (in a backend of its own: the pgbench backend's first renewal looks the
# node up, in the untimed warm-up second) and released by psql after it
run_lease_renew() { # seconds outfile
	local secs=$1 outfile=$2 tok rc=0
	tok=$("${PSQL1[@]}" -c "SELECT zk_lease_lock('/bench/renew', '$LEASE_TTL')") || return 1
	echo "token $tok" >"$outfile.token"
	run_pgbench "$BUILD/sql_lease_renew.sql" "$secs" "$outfile" "" -D "token=$tok" || rc=$?
	[ "$("${PSQL1[@]}" -c "SELECT zk_lease_unlock('/bench/renew', $tok)")" = t ] ||
		{ echo "the renewed lease $tok on /bench/renew was not held at the end" >&2; return 1; }
	lease_leftovers /bench/renew "$outfile" || return 1
	return $rc
}

# fanout phase: pgbench with FANOUT_CLIENTS clients on each server at once;
# writes the sum of both servers' transactions per second (lock + unlock
# each) to outfile, and checks that no node is left
run_fanout() { # outfile [pgoptions [script]]
	local outfile=$1 pgopts=${2:-} script=${3:-$BUILD/sql_fanout.sql} i port pids=() rc=0
	for i in 1 2; do
		port=$PGPORT1
		[ $i = 2 ] && port=$PGPORT2
		start_bounded $((FANOUT_SECONDS + 120)) env PGOPTIONS="$pgopts" \
			"$PGBIN/pgbench" -h "$TMP/pg$i" -p "$port" -U postgres -n -M prepared \
			-c "$FANOUT_CLIENTS" -j 2 -T "$FANOUT_SECONDS" -D s="$i" -f "$script" postgres \
			>"$outfile.pgbench$i" 2>&1
		pids+=("$BOUNDED_PID")
	done
	for i in 1 2; do
		wait_bounded "${pids[$((i - 1))]}" "$outfile.pgbench$i" || rc=1
	done
	[ $rc = 0 ] || return 1
	awk '/^tps = / { s += $3 } END { printf "%.1f\n", s }' "$outfile.pgbench1" "$outfile.pgbench2" >"$outfile"
	[ "$("${PSQL1[@]}" -c "SELECT count(*) FROM zk_cluster_locks() WHERE path LIKE '/bench/fan%/%'")" = 0 ] ||
		{ echo "nodes left under /bench/fan or /bench/fanown" >&2; return 1; }
}

# contention and parallel phases: pgbench with CLIENTS clients on each
# server at once (-D s=1 or 2), for WARMUP + SECONDS (rounded up) and one
# second more, with a per-transaction log in RAW/NAME.log.<server>.<pid>;
# analyze.py keeps the transactions that ended inside [WARMUP, WARMUP +
# SECONDS) after the first one started (the last second, as the clients
# stop, is not counted)
run_pgbench_both() { # name clients seconds warmup script
	local name=$1 n=$2 secs=$3 w=$4 script=$5 i port pids=() rc=0 total
	total=$(awk -v a="$secs" -v b="$w" 'BEGIN { t = a + b; printf "%d", ((t == int(t)) ? t : int(t) + 1) + 1 }')
	rm -f "$RAW/$name".log.*
	for i in 1 2; do
		port=$PGPORT1
		[ $i = 2 ] && port=$PGPORT2
		start_bounded $((total + 120)) "$PGBIN/pgbench" -h "$TMP/pg$i" -p "$port" -U postgres -n -M prepared \
			-c "$n" -j 1 -T "$total" -D s="$i" -l --log-prefix="$RAW/$name.log.$i" -f "$script" postgres \
			>"$RAW/$name.pgbench$i" 2>&1
		pids+=("$BOUNDED_PID")
	done
	for i in 1 2; do
		wait_bounded "${pids[$((i - 1))]}" "$RAW/$name.pgbench$i" || rc=1
	done
	echo "clients $((2 * n))"
	echo "seconds $secs"
	echo "warmup $w"
	return $rc
}

# fanout phase, the floor: as many raw C sessions as both servers' pgbench
# clients (zkfloor parallel, each on a parent of its own; aparallel; or
# acomposed, each with a connection of its own too, to the two servers in
# turn); the outfile gets their cycles/s, as run_fanout's gets locks/s
run_fanout_floor() { # outfile [aparallel|acomposed]
	local outfile=$1 mode=${2:-parallel} conns=()
	[ "$mode" = acomposed ] && conns=("$CONN1" "$CONN2")
	run_bounded $((FANOUT_SECONDS + 120)) "$BUILD/zkfloor" "$ZKHOSTS" "$mode" "$FANOUT_SECONDS" \
		"$outfile.threads" "$FLOOR_WARMUP" $((2 * FANOUT_CLIENTS)) "${conns[@]}" >"$outfile.zkfloor" 2>&1 ||
		{ cat "$outfile.zkfloor" >&2; return 1; }
	awk -v k="raw_${mode}_cycles_per_s" '$1 == k { print $2 }' "$outfile.zkfloor" >"$outfile"
}

# barrier phase: the per-cycle lines of pgclients dbarrier / CuratorBench
# dbarrierN (cycle last round_us release_us fromlast_us gap_us
# first_release_us leave_us) split into one file per figure, named like
# the variants' files
split_cycles() { # variant round [may-be-empty]
	local v=$1 r=$2 c=$RAW/$1.r$2.cycles
	awk '{ print $3 }' "$c" >"$RAW/$v.r$r.txt"
	awk '{ print $4 }' "$c" >"$RAW/${v}_release.r$r.txt"
	awk '{ print $5 }' "$c" >"$RAW/${v}_fromlast.r$r.txt"
	[ -s "$RAW/$v.r$r.txt" ] || [ -n "${3:-}" ] || { echo "no cycle recorded in $c" >&2; return 1; }
}

# barrier phase: ZooKeeper's counters (requests received, zxid = writes
# applied or failed, watch notifications sent), to count what one side's
# run cost the server
zk_counters() {
	local m z
	m=$("$ZKCTL" 4lw "$ZKPORT" mntr)
	z=$("$ZKCTL" 4lw "$ZKPORT" srvr | sed -n 's/^Zxid: //p')
	echo "$(awk '$1 == "zk_packets_received" { print $2 }' <<<"$m") $((z)) $(awk '$1 ~ /^zk_sum_node_.*_watch_count$/ { w += $2 } END { print w + 0 }' <<<"$m")"
}
zk_counted() { # outfile command...: run the command, write the counters' deltas to outfile
	local out=$1 a b rc=0
	shift
	read -r -a a <<<"$(zk_counters)"
	"$@" || rc=$?
	read -r -a b <<<"$(zk_counters)"
	printf 'zk_requests %d\nzk_writes %d\nzk_watch_events %d\n' $((b[0] - a[0])) $((b[1] - a[1])) $((b[2] - a[2])) >"$out"
	return $rc
}

# barrier phase, Curator's side: a run that CuratorBench abandoned (exit 3:
# a cycle hung in Curator's DistributedDoubleBarrier, or a call failed; the
# details are in its log) keeps the cycles recorded until then, is listed
# in raw/dbarrier_abandoned.txt, and the phase goes on
run_curator_dbarrier() { # variant round
	local v=$1 r=$2 rc=0
	zk_counted "$RAW/$v.r$r.zk" run_bounded $((SECONDS_PER + 300)) java -Xmx256m -cp "$BUILD:$CURATOR_CP" CuratorBench "$ZKHOSTS" \
		"dbarrier$((2 * BARRIER_PER_SERVER))" "$SECONDS_PER" "$RAW/$v.r$r.cycles" "$JAVA_WARMUP" "$BARRIER_GAP_MS" || rc=$?
	if [ $rc = 3 ]; then
		echo "$v $r" >>"$RAW/dbarrier_abandoned.txt"
		log "WARNING: CuratorBench abandoned $v in round $r (see $RAW/$v.r$r.log)"
		split_cycles "$v" "$r" may-be-empty
		return 0
	fi
	[ $rc = 0 ] && split_cycles "$v" "$r"
}

run_variant() { # name round
	local v=$1 r=$2 f=$RAW/$1.r$2.txt
	case "$v" in
	floor_create | floor_createlist | floor_cycle | floor_cycle2 | floor_multi | floor_amulti)
		run_bounded 120 "$BUILD/zkfloor" "$ZKHOSTS" "${v#floor_}" "$SECONDS_PER" "$f" "$FLOOR_WARMUP" ;;
	multi_floor_create) run_bounded 120 "$BUILD/zkfloor" "$ZKHOSTS" create "$SECONDS_PER" "$f" "$FLOOR_WARMUP" ;;
	multi_floor_set10) run_bounded 120 "$BUILD/zkfloor" "$ZKHOSTS" set10 "$SECONDS_PER" "$f" "$FLOOR_WARMUP" ;;
	sql_multi* | sql_semaphore) run_pgbench "$BUILD/$v.sql" "$SECONDS_PER" "$f" ;;
	lease_floor_create) run_bounded 120 "$BUILD/zkfloor" "$ZKHOSTS" create "$SECONDS_PER" "$f" "$FLOOR_WARMUP" ;;
	lease_floor_ttlcycle) run_bounded 120 "$BUILD/zkfloor" "$ZKHOSTS" ttlcycle "$SECONDS_PER" "$f" "$FLOOR_WARMUP" ;;
	lease_floor_renew) run_bounded 120 "$BUILD/zkfloor" "$ZKHOSTS" renew "$SECONDS_PER" "$f" "$FLOOR_WARMUP" ;;
	sql_lease_cycle)
		run_pgbench "$BUILD/sql_lease_cycle.sql" "$SECONDS_PER" "$f" &&
			lease_leftovers /bench/lease "$f"
		;;
	sql_lease_renew) run_lease_renew "$SECONDS_PER" "$f" ;;
	fresh_floor_create) run_bounded 120 "$BUILD/zkfloor" "$ZKHOSTS" create "$SECONDS_PER" "$f" "$FLOOR_WARMUP" ;;
	sql_fresh | sql_fresh_warm) run_pgbench "$BUILD/$v.sql" "$SECONDS_PER" "$f" ;;
	fanout_sql) run_fanout "$f" ;;
	fanout_own) run_fanout "$f" "" "$BUILD/sql_fanout_own.sql" ;;
	fanout_floor) run_fanout_floor "$f" ;;
	fanout_afloor) run_fanout_floor "$f" aparallel ;;
	fanout_composed) run_fanout_floor "$f" acomposed ;;
	barrier_floor_create) run_bounded 120 "$BUILD/zkfloor" "$ZKHOSTS" create "$SECONDS_PER" "$f" "$FLOOR_WARMUP" ;;
	sql_dbarrier8)
		zk_counted "$RAW/$v.r$r.zk" run_bounded $((SECONDS_PER + 120)) "$BUILD/pgclients" dbarrier "$CONN1" "$CONN2" "$BARRIER_PER_SERVER" \
			/bench/db "$SECONDS_PER" "$PGB_WARMUP" "$BARRIER_GAP_MS" "$RAW/$v.r$r.cycles" &&
			split_cycles "$v" "$r"
		;;
	curator_dbarrier8) run_curator_dbarrier "$v" "$r" ;;
	curator_multi*) run_bounded 120 java -Xmx256m -cp "$BUILD:$CURATOR_CP" CuratorBench "$ZKHOSTS" "${v#curator_}" "$SECONDS_PER" "$f" "$JAVA_WARMUP" ;;
	curator_semaphore) run_bounded 120 java -Xmx256m -cp "$BUILD:$CURATOR_CP" CuratorBench "$ZKHOSTS" semaphore "$SECONDS_PER" "$f" "$JAVA_WARMUP" ;;
	floor_pattern) run_bounded 120 "$BUILD/zkfloor" "$ZKHOSTS" pattern "$SECONDS_PER" "$f" "$FLOOR_WARMUP" "$GAP_US" ;;
	sql_lock | sql_xact | sql_advisory) run_pgbench "$BUILD/$v.sql" "$SECONDS_PER" "$f" ;;
	sql_lock_async) run_pgbench "$BUILD/sql_lock.sql" "$SECONDS_PER" "$f" "$ASYNC_PGOPTIONS" ;;
	kazoo) run_bounded 120 "$PY" "$HERE/kazoo_bench.py" "$ZKHOSTS" "$SECONDS_PER" "$f" "$KAZOO_WARMUP" ;;
	curator_mutex) run_bounded 120 java -Xmx256m -cp "$BUILD:$CURATOR_CP" CuratorBench "$ZKHOSTS" mutex "$SECONDS_PER" "$f" "$JAVA_WARMUP" ;;
	curator_rw_write) run_bounded 120 java -Xmx256m -cp "$BUILD:$CURATOR_CP" CuratorBench "$ZKHOSTS" rwwrite "$SECONDS_PER" "$f" "$JAVA_WARMUP" ;;
	*) die "unknown variant $v" ;;
	esac
}

phase_begin() { PHASE_T0=$(date +%s.%N); }
phase_end() { echo "$1 $PHASE_T0 $(date +%s.%N)" >>"$RAW/phases.txt"; }

# one variant in one round, its output in raw/VARIANT.rROUND.log; the run
# stops if it fails; its start, end and the load average go to noise.txt
run_round_variant() { # variant round [phase]
	local v=$1 r=$2 ts
	ts=$(date +%s.%N)
	run_variant "$v" "$r" >"$RAW/$v.r$r.log" 2>&1 ||
		{ cat "$RAW/$v.r$r.log" >&2; die "${3:+$3 }variant $v failed in round $r"; }
	echo "$v $r $ts $(date +%s.%N) $(cut -d' ' -f1 /proc/loadavg)" >>"$RAW/noise.txt"
}

# untimed: one second of pgbench with each script (creates the lock paths,
# warms ZooKeeper up)
pgbench_warmup() { # script...
	local s
	for s in "$@"; do
		run_pgbench "$s" 1 "$RAW/warmup.txt" >/dev/null
	done
	rm -f "$RAW"/warmup.txt*
}

echo "variant round t_start t_end loadavg1" >"$RAW/noise.txt"
NV=${#VARIANTS[@]}
if [ "$NV" -gt 0 ]; then
	log "warm-up (not recorded)"
	run_bounded 60 "$BUILD/zkfloor" "$ZKHOSTS" cycle 1 /dev/null 0.2 >/dev/null
	pgbench_warmup "$BUILD/sql_lock.sql"
fi
for ((r = 1; r <= ROUNDS && NV > 0; r++)); do
	order=()
	for ((i = 0; i < NV; i++)); do
		order+=("${VARIANTS[$(((i + (r - 1) * 3) % NV))]}")
	done
	log "round $r/$ROUNDS: ${order[*]}"
	for v in "${order[@]}"; do
		run_round_variant "$v" "$r"
	done
done

# ---------------------------------------------------------------------------
# (i), (j) the multi and semaphore phases: rounds of their own variants, in
# the listed order in odd rounds and reversed in even ones (so zklock,
# Curator, Curator, zklock: linear drift hits both alike)

run_phase_rounds() { # phase nrounds variant...
	local phase=$1 nr=$2 r i v
	shift 2
	local list=("$@") order
	for ((r = 1; r <= nr; r++)); do
		order=()
		for ((i = 0; i < ${#list[@]}; i++)); do
			if ((r % 2)); then order+=("${list[$i]}"); else order+=("${list[$((${#list[@]} - 1 - i))]}"); fi
		done
		log "$phase round $r/$nr: ${order[*]}"
		for v in "${order[@]}"; do
			run_round_variant "$v" "$r" "$phase"
		done
	done
}

if want multi; then
	log "multi: multi-lock over $(echo $MULTI_SIZES | sed 's/ / and /') paths vs Curator InterProcessMultiLock, $MULTI_ROUNDS rounds x ${SECONDS_PER}s"
	phase_begin
	ws=()
	for n in $MULTI_SIZES; do ws+=("$BUILD/sql_multi$n.sql"); done
	pgbench_warmup "${ws[@]}"
	mv=(multi_floor_create multi_floor_set10)
	for n in $MULTI_SIZES; do mv+=("sql_multi$n" "curator_multi$n"); done
	run_phase_rounds multi "$MULTI_ROUNDS" "${mv[@]}"
	phase_end multi
fi

if want semaphore; then
	log "semaphore: zk_semaphore_acquire/release vs Curator InterProcessSemaphoreV2 ($SEM_LEASES leases), $SEM_ROUNDS rounds x ${SECONDS_PER}s"
	phase_begin
	pgbench_warmup "$BUILD/sql_semaphore.sql"
	run_phase_rounds semaphore "$SEM_ROUNDS" sql_semaphore curator_semaphore
	phase_end semaphore
fi

# (k) the lease phase: the SQL lease cycle and renewal against one create
# and against their own ZooKeeper traffic sent by the C client

if want lease; then
	log "lease: zk_lease_lock/unlock and zk_lease_renew (ttl $LEASE_TTL) vs one create and their bare traffic, $LEASE_ROUNDS rounds x ${SECONDS_PER}s"
	phase_begin
	# untimed: creates the lock paths, warms ZooKeeper up
	{
		run_pgbench "$BUILD/sql_lease_cycle.sql" 1 "$RAW/warmup.txt" &&
			lease_leftovers /bench/lease "$RAW/warmup.txt" &&
			run_lease_renew 1 "$RAW/warmup.txt"
	} >"$RAW/lease_warmup.log" 2>&1 || { cat "$RAW/lease_warmup.log" >&2; die "lease warm-up failed"; }
	rm -f "$RAW"/warmup.txt*
	run_phase_rounds lease "$LEASE_ROUNDS" lease_floor_create lease_floor_ttlcycle sql_lease_cycle \
		lease_floor_renew sql_lease_renew
	phase_end lease
fi

# (l) the barrier phase: lock-step cycles of a double barrier of 8 members,
# zklock (4 backends per server) against Curator (8 clients in one JVM),
# and one create

if want barrier; then
	log "barrier: zk_double_barrier_enter/leave with $((2 * BARRIER_PER_SERVER)) members vs Curator DistributedDoubleBarrier, $BARRIER_ROUNDS rounds x ${SECONDS_PER}s"
	phase_begin
	# untimed: creates the barrier's node, warms ZooKeeper up
	run_bounded 120 "$BUILD/pgclients" dbarrier "$CONN1" "$CONN2" "$BARRIER_PER_SERVER" /bench/db 1 0.5 \
		"$BARRIER_GAP_MS" "$RAW/barrier_warmup.cycles" >"$RAW/barrier_warmup.log" 2>&1 ||
		{ cat "$RAW/barrier_warmup.log" >&2; die "barrier warm-up failed"; }
	rm -f "$RAW/barrier_warmup.cycles"
	run_phase_rounds barrier "$BARRIER_ROUNDS" barrier_floor_create sql_dbarrier8 curator_dbarrier8
	phase_end barrier
fi

# (m) the fresh phase: a lock on a path whose lock node is missing,
# against the warm cycle and one create

if want fresh; then
	log "fresh: lock + unlock on a new path per cycle, vs a warm path and one create, $FRESH_ROUNDS rounds x ${SECONDS_PER}s"
	phase_begin
	pgbench_warmup "$BUILD/sql_fresh_warm.sql"
	run_phase_rounds fresh "$FRESH_ROUNDS" fresh_floor_create sql_fresh_warm sql_fresh
	phase_end fresh
fi

# (n) the fanout phase: many backends on many distinct paths, against
# raw C sessions

if want fanout; then
	log "fanout: $((2 * FANOUT_CLIENTS)) clients on 2 servers over $FANOUT_PATHS paths and $((2 * FANOUT_CLIENTS)) raw C sessions (three floors), $FANOUT_ROUNDS rounds x ${FANOUT_SECONDS}s"
	phase_begin
	# the composed floor next to fanout_sql, whose ratio to it is taken
	run_phase_rounds fanout "$FANOUT_ROUNDS" fanout_composed fanout_own fanout_sql fanout_floor fanout_afloor
	phase_end fanout
fi

# ---------------------------------------------------------------------------
# (b) stacked re-acquire

if want stack; then
	log "stacked re-acquire ($STACK_CALLS calls per statement)"
	phase_begin
	run_bounded 300 "$BUILD/pgclients" stack "$CONN1" /bench/s "$STACK_CALLS" >"$RAW/stack.txt" 2>&1 ||
		{ cat "$RAW/stack.txt" >&2; die "stack test failed"; }
	phase_end stack
fi

# ---------------------------------------------------------------------------
# (d) contention: zklock, then Curator, then the bare recipe in C, 8
# contenders on one path each

if want contend; then
	log "contention: 8 clients (4 per server) on one path for ${CONTEND_SECONDS}s"
	phase_begin
	record "$RAW/contend.txt" contend run_pgbench_both contend "$CONTENDERS_PER_SERVER" "$CONTEND_SECONDS" \
		"$CONTEND_WARMUP" "$HERE/contend.sql"
	phase_end contend

	# two JVMs x 4 threads; both start counting at the same wall-clock
	# time, a few seconds ahead (JVM start, connection, then warm-up loops
	# under contention until that time)
	log "contention: Curator InterProcessMutex, 2 JVMs x 4 threads on one path for ${CONTEND_SECONDS}s"
	phase_begin
	start_ms=$(($(date +%s%3N) + $(awk -v w="$JAVA_WARMUP" 'BEGIN { printf "%.0f", (3 + w) * 1000 }')))
	jpids=()
	for j in 1 2; do
		start_bounded $((CONTEND_SECONDS + 120)) java -Xmx256m -cp "$BUILD:$CURATOR_CP" CuratorBench "$ZKHOSTS" \
			contend "$CONTENDERS_PER_SERVER" "$CONTEND_SECONDS" "$RAW/curator_contend_waits.$j.txt" "$start_ms" per-thread \
			>"$RAW/curator_contend.$j.txt" 2>&1
		jpids+=("$BOUNDED_PID")
	done
	for j in 1 2; do
		wait_bounded "${jpids[$((j - 1))]}" "$RAW/curator_contend.$j.txt" curator_contend || true
	done
	phase_end contend_curator

	# the floor: the textbook herd-free lock in C, a session per thread, on
	# one lock node, with zklock's warm-up and window
	log "contention: raw C client (zkfloor contend), $((2 * CONTENDERS_PER_SERVER)) sessions on one lock node for ${CONTEND_SECONDS}s"
	phase_begin
	record "$RAW/contend_floor.txt" raw_contend run_bounded $((CONTEND_SECONDS + 120)) "$BUILD/zkfloor" "$ZKHOSTS" contend \
		"$CONTEND_SECONDS" "$RAW/contend_floor.threads" "$CONTEND_WARMUP" $((2 * CONTENDERS_PER_SERVER))
	phase_end contend_floor
fi

# ---------------------------------------------------------------------------
# (e) independent locks in parallel: raw C sessions (the textbook cycle,
# zklock's own cycle through the asynchronous API, and that cycle composed
# with PostgreSQL's two statements) and SQL clients, in the order raw,
# async, composed, SQL, SQL, composed, async, raw so that linear drift
# cancels; each step's start and end go to parallel_steps.txt

if want parallel; then
	log "parallel: 8 independent lock paths, raw C sessions (three cycles) vs SQL clients (4 per server), 2 x ${PARALLEL_SECONDS}s each"
	phase_begin
	for step in raw.1 async.1 composed.1 sql.1 sql.2 composed.2 async.2 raw.2; do
		ts=$(date +%s.%N)
		case "$step" in
		composed.*)
			record "$RAW/parallel_$step.txt" raw_acomposed run_bounded $((PARALLEL_SECONDS + 120)) \
				"$BUILD/zkfloor" "$ZKHOSTS" acomposed "$PARALLEL_SECONDS" \
				"$RAW/parallel_$step.threads" "$PARALLEL_WARMUP" $((2 * CONTENDERS_PER_SERVER)) "$CONN1" "$CONN2"
			;;
		async.*)
			record "$RAW/parallel_$step.txt" raw_aparallel run_bounded $((PARALLEL_SECONDS + 120)) \
				"$BUILD/zkfloor" "$ZKHOSTS" aparallel "$PARALLEL_SECONDS" \
				"$RAW/parallel_$step.threads" "$PARALLEL_WARMUP" $((2 * CONTENDERS_PER_SERVER))
			;;
		raw.*)
			record "$RAW/parallel_$step.txt" raw_parallel run_bounded $((PARALLEL_SECONDS + 120)) \
				"$BUILD/zkfloor" "$ZKHOSTS" parallel "$PARALLEL_SECONDS" \
				"$RAW/parallel_$step.threads" "$PARALLEL_WARMUP" $((2 * CONTENDERS_PER_SERVER))
			;;
		sql.*)
			record "$RAW/parallel_$step.txt" sql_parallel run_pgbench_both "parallel_$step" \
				"$CONTENDERS_PER_SERVER" "$PARALLEL_SECONDS" "$PARALLEL_WARMUP" "$HERE/parallel.sql"
			;;
		esac
		echo "$step $ts $(date +%s.%N)" >>"$RAW/parallel_steps.txt"
	done
	phase_end parallel
fi

# ---------------------------------------------------------------------------
# (d) the 200-waiter queue

if want herd; then
	log "queue of $((2 * HERD_PER_SERVER)) waiters on one path ($HERD_PER_SERVER per server)"
	phase_begin
	record "$RAW/herd.txt" herd run_bounded 300 "$BUILD/pgclients" herd "$CONN1" "$CONN2" "$HERD_PER_SERVER" \
		/bench/herd "$ZKPORT" "$RAW/herd_grants.txt"
	phase_end herd
fi

# ---------------------------------------------------------------------------
# (f) one backend holding many locks

if want scale; then
	log "scale: one backend taking $SCALE_LOCKS distinct locks"
	phase_begin
	record "$RAW/scale.txt" scale run_bounded 900 "$BUILD/pgclients" scale "$CONN1" "$SCALE_LOCKS" /bench/scale
	phase_end scale
fi

# ---------------------------------------------------------------------------
# (g) releasing many locks at once

if want release; then
	log "release: COMMIT of $RELEASE_LOCKS transaction locks, zk_unlock_all() of as many session locks"
	phase_begin
	record "$RAW/release.txt" release run_bounded 900 "$BUILD/pgclients" release "$CONN1" "$RELEASE_LOCKS" /bench/many
	phase_end release
fi

# ---------------------------------------------------------------------------
# (h) deadlock detection: cycles of 2, 3 and 4 waits across the two servers

if want deadlock; then
	log "deadlock: time from deadlock_timeout to 40P01, cycles of 2, 3 and 4 members"
	phase_begin
	PSQL2=("$PGBIN/psql" -h "$TMP/pg2" -p "$PGPORT2" -U postgres -d postgres -XAtq -v ON_ERROR_STOP=1)
	# (a set -e would not stop this function: errexit is off on the left of
	# the || in record, so every step says itself that it failed)
	deadlock_cycles() {
		local m ms
		"${PSQL2[@]}" -f "$HERE/deadlock.sql" >/dev/null || return 1
		for m in 2 3 4; do
			ms=$("${PSQL2[@]}" -c "CALL bench_deadlock('$CONN1', $m, $DEADLOCK_REPS)") || return 1
			echo "deadlock_ms_$m $ms"
		done
	}
	record "$RAW/deadlock.txt" deadlock deadlock_cycles
	phase_end deadlock
fi

# (n) cpu: CPU and context switches per cycle, thread by thread
if want cpu; then
	log "cpu: CPU and context switches per uncontended cycle (bench/cpu_account.sh, $CPU_ROUNDS rounds of ${CPU_SECONDS}s per loop)"
	phase_begin
	cpu_account() {
		"$HERE/cpu_account.sh" --no-callgrind --seconds "$CPU_SECONDS" --rounds "$CPU_ROUNDS" \
			>"$RAW/cpu_account.txt" 2>&1 || return 1
		cat "$HERE/out/cpu_account/cpu_figures.txt"
	}
	record "$RAW/cpu_figures.txt" cpu cpu_account
	phase_end cpu
fi

"$ZKCTL" 4lw "$ZKPORT" mntr >"$RAW/mntr_end.txt"
{
	echo "loadavg_end $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "zklock_so_md5_end $(md5sum /usr/lib/postgresql/15/lib/zklock.so | cut -c1-12)"
	echo "zklock_so_mtime_end $(date -u -r /usr/lib/postgresql/15/lib/zklock.so '+%Y-%m-%d %H:%M:%S UTC')"
	echo "elapsed_s $(($(date +%s) - T_START))"
} >>"$OUT/machine.txt"

# ---------------------------------------------------------------------------
# analysis, plot, documents

log "analysing"
"$PY" "$HERE/analyze.py" "$OUT"
if command -v gnuplot >/dev/null && grep -qv '^#' "$OUT/plot.dat"; then
	gnuplot -e "datafile='$OUT/plot.dat'; outfile='$OUT/latency.png'" "$HERE/latency.gp"
fi
if [ "$DOCS" = 1 ]; then
	cp "$OUT/latency.png" "$HERE/latency.png"
	cp "$OUT/BENCHMARKS.md" "$REPO/BENCHMARKS.md"
	log "wrote $REPO/BENCHMARKS.md and $HERE/latency.png"
fi
cat "$OUT/summary.txt"
log "done in $(($(date +%s) - T_START)) s"
