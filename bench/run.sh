#!/usr/bin/env bash
# bench/run.sh: zklock's benchmark, every figure of BENCHMARKS.md in one
# run.  Not part of the test suite.
#
#   bench/run.sh            full run (about 8 minutes on 2 cores): raw data
#                           in bench/out/full/, rewrites BENCHMARKS.md (up
#                           to its hand-written part)
#   bench/run.sh --quick    short run (about 3 minutes): bench/out/quick/
#   bench/run.sh --docs-only   no measurement: BENCHMARKS.md again from the
#                           raw data of the last full run
#
# One run starts a standalone ZooKeeper (test/zkctl) and two PostgreSQL 15
# clusters (as the postgres user, in a temporary directory) on free loopback
# ports, then runs these phases (bench/analyze.py turns the raw data into
# BENCHMARKS.md, which states each one's method next to its figures):
#   latency    one client, one path: the bare C client's floors (zkfloor
#              create, cycle2, cycle), pgbench -M prepared -c 1 (zk_lock +
#              zk_unlock, also with zklock.synchronous_release = off, and a
#              pg_advisory_lock cycle), kazoo's Lock and Curator's
#              InterProcessMutex, ROUNDS rounds
#   multi      zk_lock(ARRAY[10 paths]) + zk_unlock against Curator's
#              InterProcessMultiLock and one create, MROUNDS rounds
#   semaphore  zk_semaphore_acquire + release (4 leases) against Curator's
#              InterProcessSemaphoreV2, MROUNDS rounds
#   contend    8 contenders on one path: pgbench -c 4 on each server
#              (contend.sql), Curator (8 sessions), zkfloor contend
#   parallel   8 clients on a path each: zkfloor parallel, pgbench -c 4 on
#              each server (parallel.sql), pgbench, zkfloor
#   queue      the contention phase with 50 and 200 clients (half on each
#              server), with ZooKeeper's counters (requests, watch events)
#   deadlock   deadlock_timeout to 40P01 for cycles of 2, 3 and 4 backends
#              across the two servers (deadlock.sql)
# In every round each variant of a phase runs once, in an order rotated
# from round to round, so that drift of this shared machine hits all alike.
# Everything started here is stopped by pid when the script exits.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")
PGBIN=/usr/lib/postgresql/15/bin
PY=/usr/bin/python3 # Debian's python3, which has python3-kazoo
ZKCTL=$REPO/test/zkctl
CMDLINE="bench/run.sh${*:+ $*}"

MODE=full
case "${1:-}" in
--quick) MODE=quick ;;
--docs-only) MODE=docs ;;
"") ;;
*) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 2 ;;
esac
if [ "$MODE" = docs ]; then
	"$PY" "$HERE/analyze.py" "$HERE/out/full" "$REPO/BENCHMARKS.md"
	exit 0
fi
if [ "$MODE" = quick ]; then
	ROUNDS=2 MROUNDS=2 SECS=1.5 PHASE_SECS=4 DEADLOCK_REPS=3
else
	ROUNDS=6 MROUNDS=4 SECS=3 PHASE_SECS=10 DEADLOCK_REPS=10
fi
WARMUP=1       # seconds not counted: pgbench, kazoo, C (the JVM: 2)
PER_SERVER=4   # contend and parallel: clients per server
QUEUE_SIZES="50 200"
OUT=$HERE/out/$MODE
RAW=$OUT/raw
T_START=$(date +%s)

exec 3>&1
log() { printf '[%s +%4ss] %s\n' "$(date +%H:%M:%S)" "$(($(date +%s) - T_START))" "$*" >&3; }
die() { log "ERROR: $*"; exit 1; }

# ---------------------------------------------------------------------------
# cleanup: everything started here is recorded and stopped by pid

TMP=""
PG_DATADIRS=()
CHILD_PIDS=()
cleanup() {
	local rc=$? pid d
	trap - EXIT INT TERM
	set +e
	for pid in "${CHILD_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
	for d in "${PG_DATADIRS[@]}"; do
		runuser -u postgres -- "$PGBIN/pg_ctl" -D "$d" -m fast -w stop >/dev/null 2>&1
	done
	[ -n "$TMP" ] && [ -d "$TMP/zk" ] && "$ZKCTL" stop "$TMP/zk"
	if [ -n "$TMP" ] && [ -d "$TMP" ]; then
		mkdir -p "$OUT/logs"
		cp "$TMP"/pg1/log "$OUT/logs/pg1.log" 2>/dev/null
		cp "$TMP"/pg2/log "$OUT/logs/pg2.log" 2>/dev/null
		rm -rf "$TMP"
	fi
	[ $rc = 0 ] || log "run.sh failed (exit $rc); logs in $OUT/logs"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# run a command under timeout(1) in the background, recorded for cleanup;
# bounded waits for it; started() leaves its pid in LAST
started() { # seconds command...
	local limit=$1
	shift
	timeout -k 10 "$limit" "$@" &
	LAST=$!
	CHILD_PIDS+=("$LAST")
}
bounded() { started "$@"; wait "$LAST"; }

# ---------------------------------------------------------------------------
# preflight, helpers, servers

[ "$(id -u)" = 0 ] || die "run as root (PostgreSQL runs as the postgres user via runuser)"
[ -f /usr/share/postgresql/15/extension/zklock.control ] || die "zklock is not installed (make install)"
"$PY" -c 'import kazoo' 2>/dev/null || die "python3-kazoo is missing"
CP=""
for j in curator-recipes curator-framework curator-client zookeeper zookeeper-jute slf4j-api slf4j-nop guava; do
	[ -f "/usr/share/java/$j.jar" ] || die "missing /usr/share/java/$j.jar"
	CP+="${CP:+:}/usr/share/java/$j.jar"
done
rm -rf "$OUT"
mkdir -p "$RAW" "$OUT/build"
BUILD=$OUT/build
log "mode $MODE; output in $OUT"
gcc -O2 -Wall -Wextra -o "$BUILD/zkfloor" "$HERE/zkfloor.c" -lzookeeper_mt -lpthread
javac -nowarn -d "$BUILD" -cp "$CP" "$HERE/CuratorBench.java"
CP="$BUILD:$CP"

read -r ZKPORT PGPORT1 PGPORT2 <<<"$("$PY" -c '
import socket
ss = [socket.socket() for _ in range(3)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')"
TMP=$(mktemp -d /tmp/zklock-bench.XXXXXX)
chmod 755 "$TMP"
ZKHOSTS=127.0.0.1:$ZKPORT
"$ZKCTL" start "$TMP/zk" "$ZKPORT" >/dev/null
start_pg() { # n port
	local d=$TMP/pg$1
	mkdir -p "$d" && chown postgres: "$d"
	runuser -u postgres -- "$PGBIN/initdb" -D "$d/data" -A trust -U postgres -E UTF8 --locale=C >"$d/initdb.log" 2>&1 ||
		die "initdb $1 failed"
	cat >>"$d/data/postgresql.conf" <<EOF
port = $2
listen_addresses = '127.0.0.1'
unix_socket_directories = '$d'
max_connections = 130
zklock.hosts = '$ZKHOSTS'
EOF
	PG_DATADIRS+=("$d/data")
	runuser -u postgres -- "$PGBIN/pg_ctl" -D "$d/data" -l "$d/log" -w -t 60 start >/dev/null ||
		die "PostgreSQL $1 did not start"
	"$PGBIN/psql" -h "$d" -p "$2" -U postgres -XAtq -v ON_ERROR_STOP=1 -c 'CREATE EXTENSION zklock' postgres
}
start_pg 1 "$PGPORT1"
start_pg 2 "$PGPORT2"
log "ZooKeeper on $ZKPORT, PostgreSQL on $PGPORT1 and $PGPORT2"
CONN1="host=$TMP/pg1 port=$PGPORT1 user=postgres dbname=postgres"
PSQL2=("$PGBIN/psql" -h "$TMP/pg2" -p "$PGPORT2" -U postgres -d postgres -XAtq -v ON_ERROR_STOP=1)

{
	echo "date_utc $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "command $CMDLINE"
	echo "mode $MODE"
	echo "rounds $ROUNDS"
	echo "mrounds $MROUNDS"
	echo "seconds $SECS"
	echo "phase_seconds $PHASE_SECS"
	echo "warmup $WARMUP"
	echo "git_head $(git -C "$REPO" rev-parse --short HEAD)"
	# the installation is shared: is the installed zklock.so this tree's build?
	echo "installed_so $(cmp -s "$REPO/zklock.so" /usr/lib/postgresql/15/lib/zklock.so && echo "this tree's build" || echo "NOT this tree's build")"
	echo "cpu $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
	echo "postgres $("$PGBIN/postgres" --version)"
	echo "zookeeper $("$ZKCTL" 4lw "$ZKPORT" srvr | sed -n 's/^Zookeeper version: //p' | cut -d- -f1)"
	echo "curator $(dpkg-query -W -f='${Version}' libcurator-recipes-java)"
	echo "kazoo $(dpkg-query -W -f='${Version}' python3-kazoo)"
	echo "loadavg_start $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/machine.txt"
got=$(PGOPTIONS="-c zklock.synchronous_release=off" "${PSQL2[@]}" -c "LOAD 'zklock'" -c "SHOW zklock.synchronous_release")
[ "$got" = off ] || die "PGOPTIONS does not set zklock.synchronous_release (got '$got')"

# ---------------------------------------------------------------------------
# the variants

printf '%s\n' "SELECT zk_lock('/bench/x');" "SELECT zk_unlock('/bench/x');" >"$BUILD/sql_lock.sql"
printf '%s\n' "SELECT pg_advisory_lock(1);" "SELECT pg_advisory_unlock(1);" >"$BUILD/sql_advisory.sql"
arr=$(for i in $(seq 1 10); do printf "'/bench/multi/p%d'," "$i"; done)
printf '%s\n' "SELECT zk_lock(ARRAY[${arr%,}]);" "SELECT zk_unlock(ARRAY[${arr%,}]);" >"$BUILD/sql_multi10.sql"
printf '%s\n' "SELECT zk_semaphore_acquire('/bench/sem', 4);" "SELECT zk_semaphore_release('/bench/sem');" >"$BUILD/sql_semaphore.sql"
chmod 644 "$BUILD"/*.sql

# pgbench -M prepared -c 1 on server 1 with a per-transaction log: the
# latencies (µs) of the transactions that started after the warm-up
one_pgbench() { # script outfile [pgoptions]
	local p=$RAW/pgb
	rm -f "$p".*
	bounded 120 env PGOPTIONS="${3:-}" "$PGBIN/pgbench" -h "$TMP/pg1" -p "$PGPORT1" -U postgres -n -M prepared -c 1 \
		-T "$(awk -v a="$SECS" -v w=$WARMUP 'BEGIN { printf "%d", a + w + 0.999 }')" -l --log-prefix="$p" -f "$1" postgres >/dev/null
	awk -v w=$WARMUP '{ end = $5 + $6 / 1e6; start = end - $3 / 1e6 }
		NR == 1 { t0 = start } start >= t0 + w { print $3 }' "$p".* >"$2"
	rm -f "$p".*
}
run_variant() { # variant outfile
	case "$1" in
	floor_create | floor_cycle2 | floor_cycle) bounded 120 "$BUILD/zkfloor" "$ZKHOSTS" "${1#floor_}" "$SECS" "$2" $WARMUP ;;
	multi_floor_create) bounded 120 "$BUILD/zkfloor" "$ZKHOSTS" create "$SECS" "$2" $WARMUP ;;
	sql_lock | sql_advisory | sql_multi10 | sql_semaphore) one_pgbench "$BUILD/$1.sql" "$2" ;;
	sql_lock_async) one_pgbench "$BUILD/sql_lock.sql" "$2" "-c zklock.synchronous_release=off" ;;
	kazoo) bounded 120 "$PY" "$HERE/kazoo_bench.py" "$ZKHOSTS" "$SECS" "$2" $WARMUP ;;
	curator_mutex | curator_multi10 | curator_semaphore)
		bounded 120 java -Xmx256m -cp "$CP" CuratorBench "$ZKHOSTS" "${1#curator_}" "$SECS" "$2" 2 ;;
	esac >/dev/null
}
# rounds of a phase's variants, the order rotated by one each round; each
# variant run's load average goes to noise.txt
run_rounds() { # phase nrounds variant...
	local phase=$1 nr=$2 r i v
	shift 2
	local vs=("$@") n=$#
	for ((r = 1; r <= nr; r++)); do
		log "$phase round $r/$nr"
		for ((i = 0; i < n; i++)); do
			v=${vs[$(((i + r - 1) % n))]}
			run_variant "$v" "$RAW/$v.r$r.txt" || die "$v failed in round $r"
			echo "$phase $v $r $(cut -d' ' -f1 /proc/loadavg)" >>"$RAW/noise.txt"
		done
	done
}

# ZooKeeper's counters: requests received, watch notifications sent
zk_counters() {
	"$ZKCTL" 4lw "$ZKPORT" mntr | awk '$1 == "zk_packets_received" { p = $2 }
		$1 ~ /^zk_sum_node_.*_watch_count$/ { w += $2 } END { print p + 0, w + 0 }'
}

# pgbench with CLIENTS clients on each server at once, for SECONDS +
# WARMUP and a margin (not counted: pgbench connects its clients within its
# duration, 1 s for 25 of them on a busy machine), a per-transaction log in
# RAW/NAME.log.*; the ZooKeeper counters every 0.5 s in RAW/NAME.zk ("epoch
# requests watch_events" lines)
both_pgbench() { # name clients script
	local pids=() i port sampler
	(while :; do echo "$(date +%s.%N) $(zk_counters)"; sleep 0.5; done) >"$RAW/$1.zk" &
	sampler=$!
	CHILD_PIDS+=("$sampler")
	for i in 1 2; do
		port=$PGPORT1
		if [ $i = 2 ]; then port=$PGPORT2; fi
		started 300 "$PGBIN/pgbench" -h "$TMP/pg$i" -p "$port" -U postgres -n -M prepared -c "$2" -j 1 \
			-T $((PHASE_SECS + WARMUP + 2 + $2 / 10)) -D s=$i -l --log-prefix="$RAW/$1.log.$i" -f "$3" postgres >"$RAW/$1.pgbench$i" 2>&1
		pids+=("$LAST")
	done
	for i in "${pids[@]}"; do wait "$i" || die "pgbench $1 failed (see $RAW/$1.pgbench*)"; done
	kill "$sampler"
}

# ---------------------------------------------------------------------------
# the phases

# untimed: create the paths, warm ZooKeeper up
bounded 60 "$BUILD/zkfloor" "$ZKHOSTS" cycle 1 /dev/null 0.2 >/dev/null
for s in sql_lock sql_multi10 sql_semaphore; do one_pgbench "$BUILD/$s.sql" /dev/null; done

run_rounds latency "$ROUNDS" floor_create floor_cycle2 floor_cycle sql_lock sql_lock_async sql_advisory kazoo curator_mutex
run_rounds multi "$MROUNDS" multi_floor_create sql_multi10 curator_multi10
run_rounds semaphore "$MROUNDS" sql_semaphore curator_semaphore

log "contend: 8 clients on one path, ${PHASE_SECS}s each: zklock, Curator, zkfloor"
both_pgbench contend $PER_SERVER "$HERE/contend.sql"
bounded $((PHASE_SECS + 120)) java -Xmx256m -cp "$CP" CuratorBench "$ZKHOSTS" contend $((2 * PER_SERVER)) \
	"$PHASE_SECS" "$RAW/curator_contend.waits" 2 >"$RAW/curator_contend.txt" || die "Curator contend failed"
bounded $((PHASE_SECS + 120)) "$BUILD/zkfloor" "$ZKHOSTS" contend "$PHASE_SECS" "$RAW/floor_contend.threads" \
	$WARMUP $((2 * PER_SERVER)) >"$RAW/floor_contend.txt" || die "zkfloor contend failed"

log "parallel: 8 clients on a path each, ${PHASE_SECS}s each: C, zklock, zklock, C"
for step in 1 2; do
	if [ $step = 2 ]; then both_pgbench parallel.$step $PER_SERVER "$HERE/parallel.sql"; fi
	bounded $((PHASE_SECS + 120)) "$BUILD/zkfloor" "$ZKHOSTS" parallel "$PHASE_SECS" "$RAW/floor_parallel.$step.threads" \
		$WARMUP $((2 * PER_SERVER)) >"$RAW/floor_parallel.$step.txt" || die "zkfloor parallel failed"
	if [ $step = 1 ]; then both_pgbench parallel.$step $PER_SERVER "$HERE/parallel.sql"; fi
done

for n in $QUEUE_SIZES; do
	log "queue: $n clients on one path (half on each server), ${PHASE_SECS}s"
	both_pgbench queue$n $((n / 2)) "$HERE/contend.sql"
done

log "deadlock: deadlock_timeout to 40P01, cycles of 2, 3 and 4, $DEADLOCK_REPS each"
"${PSQL2[@]}" -f "$HERE/deadlock.sql" >/dev/null
for m in 2 3 4; do
	echo "$m $(timeout 600 "${PSQL2[@]}" -c "CALL bench_deadlock('$CONN1', $m, $DEADLOCK_REPS)")" >>"$RAW/deadlock.txt"
done

{
	echo "loadavg_end $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "elapsed_s $(($(date +%s) - T_START))"
} >>"$OUT/machine.txt"
if [ "$MODE" = full ]; then
	"$PY" "$HERE/analyze.py" "$OUT" "$REPO/BENCHMARKS.md"
else
	cp "$REPO/BENCHMARKS.md" "$OUT/BENCHMARKS.md"
	"$PY" "$HERE/analyze.py" "$OUT" "$OUT/BENCHMARKS.md"
fi
log "done in $(($(date +%s) - T_START)) s"
