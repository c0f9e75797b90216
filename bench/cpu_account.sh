#!/usr/bin/env bash
# bench/cpu_account.sh: where the CPU of one uncontended zk_lock + zk_unlock
# cycle goes, thread by thread and phase by phase, next to the bare C client
# (bench/zkfloor.c multi) sending the same two requests.  Not part of the
# test suite.
#
#   bench/cpu_account.sh [--seconds S] [--rounds R] [--cycles N] [--no-callgrind]
#                        [--callgrind-only] [--xact]
#
# Uses the zklock installed for the pg_config on PATH (make install first).
# Starts a standalone ZooKeeper and one cluster (bench/one_cluster.sh) with
# zklock in shared_preload_libraries (so that the statistics are kept, as
# in production), then:
#
#  1. perf: pgbench -M prepared -c 1 loops SELECT zk_lock('/b/cycle');
#     SELECT zk_unlock('/b/cycle'); for S seconds (default 10) after a
#     warm-up, while `perf stat --per-thread -e task-clock,context-switches`
#     counts the backend's threads: the main thread (TID = PID), then the
#     client library's I/O thread and its completion thread (created in
#     that order by zookeeper_init).  Cycles are zk_stat.acquired's
#     increase over the window.  The same for `zkfloor multi` (one multi
#     {create EPHEMERAL_SEQUENTIAL, setData(parent)} and a synchronous
#     delete per cycle, libzookeeper_mt), whose cycles are ZooKeeper's
#     packets_received increase over the window / 2; for `zkfloor amulti`
#     (the same two requests through the asynchronous API, as zklock must
#     send them: answers on the completion thread); and for a
#     pg_advisory_lock + pg_advisory_unlock cycle (PostgreSQL's own two
#     statements; cycles from pgbench's per-transaction log).  It prints
#     the targets (CPU <= 2 x zkfloor multi's, context switches <= its + 2)
#     and the floor composed of zkfloor amulti and the pg_advisory_lock
#     cycle; the figures also go to cpu_figures.txt as "key value" lines
#     (bench/run.sh's cpu phase reads them).  With --rounds R (default 1)
#     the four loops are measured R times, in reverse order every other
#     round, and each figure is the median of its rounds: per-cycle CPU
#     depends on how fast ZooKeeper answers, which drifts.
#  2. strace: the same four loops for S seconds under `strace -f`: system calls
#     per cycle by thread and by call.
#  3. callgrind: the server restarted under valgrind --tool=callgrind
#     (--separate-threads=yes); two pgbench runs of the cycle (-t N/5 and
#     -t N, default N 1500), each in a backend of its own; the difference
#     of the two profiles over the difference of the cycles is the cost of
#     one cycle with the backend's start and its session's connect taken
#     out: instructions per cycle by thread, and on the main thread by
#     phase (inclusive costs of the functions named in the table).  zkfloor
#     multi and amulti likewise, two runs of different lengths each.
#
# --xact accounts BEGIN; SELECT zk_xact_lock('/b/xact'); COMMIT instead of
# the session lock cycle (released at COMMIT).  --no-callgrind skips 3, --callgrind-only skips 1 and 2 (for a quick
# before/after of a change: make install between two runs).
#
# Output: tables on stdout (the same in bench/out/cpu_account/account.txt);
# the raw files stay in bench/out/cpu_account.  task-clock figures are
# noisy on a shared machine; instruction counts repeat.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
SECONDS_PER=10
ROUNDS=1
CYCLES=1500
CALLGRIND=yes
PERF=yes
XACT=no
while [ $# -gt 0 ]; do
	case "$1" in
		--seconds) SECONDS_PER=$2; shift 2 ;;
		--rounds) ROUNDS=$2; shift 2 ;;
		--cycles) CYCLES=$2; shift 2 ;;
		--no-callgrind) CALLGRIND=no; shift ;;
		--callgrind-only) PERF=no; shift ;;
		--xact) XACT=yes; shift ;;
		*) echo "unknown option $1" >&2; exit 2 ;;
	esac
done

PGBIN=$(pg_config --bindir)
OUT=$ROOT/bench/out/cpu_account
rm -rf "$OUT"
mkdir -p "$OUT"
chmod 777 "$OUT"
WORK=$(mktemp -d /tmp/zklock-cpu.XXXXXX)
chmod 755 "$WORK"
. "$ROOT/bench/one_cluster.sh"
cleanup() {
	[ -n "${VG_PID:-}" ] && kill "$VG_PID" 2>/dev/null || true
	one_cluster_stop
	rm -rf "$WORK"
}
trap cleanup EXIT

gcc -O2 -Wall -Wextra -o "$WORK/zkfloor" bench/zkfloor.c -lzookeeper_mt -lpthread
one_cluster_start 24810 58432
echo "shared_preload_libraries = 'zklock'" >>"$WORK/data/postgresql.conf"
pg_restart
psql_ -c 'CREATE EXTENSION zklock'
if [ "$XACT" = yes ]; then
	printf '%s\n' "BEGIN;" "SELECT zk_xact_lock('/b/xact');" "COMMIT;" >"$WORK/cycle.sql"
else
	printf '%s\n' "SELECT zk_lock('/b/cycle');" "SELECT zk_unlock('/b/cycle');" >"$WORK/cycle.sql"
fi
printf '%s\n' "SELECT pg_advisory_lock(1);" "SELECT pg_advisory_unlock(1);" >"$WORK/advisory.sql"
chmod 644 "$WORK/cycle.sql" "$WORK/advisory.sql"
ZKHOSTS=127.0.0.1:$ZKPORT

acquired() { psql_ -c 'SELECT acquired FROM zk_stat'; }
packets() { test/zkctl 4lw "$ZKPORT" mntr | sed -n 's/^zk_packets_received[[:space:]]*//p'; }
backend_pid() {
	local pid=
	while [ -z "$pid" ]; do
		pid=$(psql_ -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench'
			ORDER BY backend_start DESC LIMIT 1")
		[ -n "$pid" ] || sleep 0.1
	done
	echo "$pid"
}

# wait until no pgbench backend is left (the last loop's may still be
# exiting after its pgbench did)
no_backend() {
	while [ "$(psql_ -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgbench'")" != 0 ]; do
		sleep 0.1
	done
}

# ticks(PID): "tid utime stime" (clock ticks) of each of its threads
ticks() {
	local t
	for t in /proc/"$1"/task/*; do
		echo "${t##*/} $(sed 's/^.*) //' "$t/stat" | awk '{print $12, $13}')"
	done
}

# measure(TOOL, NAME): run TOOL (perf or strace) over S seconds of the SQL
# cycle (NAME sql), of zkfloor multi (floor), of zkfloor amulti (afloor) or
# of the pg_advisory_lock cycle (adv); writes $OUT/NAME.TOOL and
# $OUT/NAME.TOOL.cycles
measure() {
	local tool=$1 name=$2 pid c0 c1 job t0 t1
	case "$name" in
	sql)
		no_backend
		pgbench_ -n -M prepared -c 1 -T $((SECONDS_PER + 6)) -f "$WORK/cycle.sql" >/dev/null 2>&1 &
		job=$!
		pid=$(backend_pid)
		sleep 2
		c0=$(acquired)
		;;
	adv)
		no_backend
		rm -f "$OUT"/adv.log.*
		pgbench_ -n -M prepared -c 1 -T $((SECONDS_PER + 6)) -l --log-prefix="$OUT/adv.log" \
			-f "$WORK/advisory.sql" >/dev/null 2>&1 &
		job=$!
		pid=$(backend_pid)
		sleep 2
		;;
	*)
		"$WORK/zkfloor" "$ZKHOSTS" "$([ "$name" = afloor ] && echo amulti || echo multi)" \
			$((SECONDS_PER + 6)) /dev/null 0 >/dev/null &
		job=$!
		pid=$job
		sleep 2
		c0=$(packets)
		;;
	esac
	ls "/proc/$pid/task" | sort -n >"$OUT/$name.$tool.tids"
	t0=$(date +%s.%N)
	if [ "$tool" != strace ]; then
		ticks "$pid" >"$OUT/$name.$tool.ticks0"
		perf stat --per-thread -x, -e task-clock,context-switches -p "$pid" \
			-o "$OUT/$name.$tool" -- sleep "$SECONDS_PER" >/dev/null 2>&1
		ticks "$pid" >"$OUT/$name.$tool.ticks1"
	else
		timeout -s INT "$SECONDS_PER" strace -f -qq -o "$OUT/$name.strace" -p "$pid" || true
	fi
	t1=$(date +%s.%N)
	case "$name" in
	sql)
		c1=$(acquired)
		echo $((c1 - c0)) >"$OUT/$name.$tool.cycles"
		;;
	adv)
		wait "$job" || true
		# pgbench's log: one line per cycle, its end time in fields 5 and 6
		cat "$OUT"/adv.log.* | awk -v t0="$t0" -v t1="$t1" \
			'{ t = $5 + $6 / 1e6; if (t >= t0 && t < t1) n++ } END { print n + 0 }' \
			>"$OUT/$name.$tool.cycles"
		;;
	*)
		c1=$(packets)
		echo $(((c1 - c0) / 2)) >"$OUT/$name.$tool.cycles"
		;;
	esac
	echo "$pid" >"$OUT/$name.$tool.pid"
	wait "$job" || true
}

if [ "$PERF" = yes ]; then
	# a warm-up (ZooKeeper's JVM runs slower at first)
	pgbench_ -n -M prepared -c 1 -T 5 -f "$WORK/cycle.sql" >/dev/null 2>&1
	"$WORK/zkfloor" "$ZKHOSTS" multi 3 /dev/null 0 >/dev/null
	# perf in ROUNDS rounds (perf, perf2, ...), the four loops in turn and
	# in reverse order every other round, so that a drift of the machine or
	# of ZooKeeper's speed is shared; then strace once
	for r in $(seq 1 "$ROUNDS"); do
		tool=perf
		[ "$r" -gt 1 ] && tool=perf$r
		order="sql floor afloor adv"
		[ $((r % 2)) = 0 ] && order="adv afloor floor sql"
		for name in $order; do
			measure "$tool" "$name"
		done
	done
	for name in sql floor afloor adv; do
		measure strace "$name"
	done
fi

if [ "$CALLGRIND" = yes ]; then
	# the server under callgrind: every process it forks writes
	# $OUT/cg.PID-TID at exit
	as_pg "$PGBIN/pg_ctl" -D "$WORK/data" -m fast stop >/dev/null
	as_pg valgrind --tool=callgrind --separate-threads=yes --trace-children=no \
		--callgrind-out-file="$OUT/cg.%p" "$PGBIN/postgres" -D "$WORK/data" \
		>"$WORK/vg.log" 2>&1 &
	VG_PID=$!
	until psql_ -c 'SELECT 1' >/dev/null 2>&1; do sleep 1; done
	for run in "sql $((CYCLES / 5))" "sql $CYCLES" "adv $((CYCLES / 5))" "adv $CYCLES"; do
		set -- $run
		kind=$1 n=$2
		script=$WORK/cycle.sql
		[ "$kind" = adv ] && script=$WORK/advisory.sql
		pgbench_ -n -M prepared -c 1 -t "$n" -f "$script" >/dev/null 2>&1
		# the backend's files appear when it exits
		pid=
		for _ in $(seq 1 600); do
			pid=$(grep -l "$([ "$kind" = adv ] && echo pg_advisory_lock || echo zk_lock)" "$OUT"/cg.*-01 2>/dev/null |
				sed 's/.*cg\.\([0-9]*\)-.*/\1/' | sort -u |
				while read -r p; do [ -e "$OUT/seen.$p" ] || echo "$p"; done | head -1) || true
			[ -n "$pid" ] && break
			sleep 1
		done
		[ -n "$pid" ] || { echo "no callgrind profile of the backend" >&2; exit 1; }
		: >"$OUT/seen.$pid"
		echo "$pid $n" >>"$OUT/$kind.cg.runs"
	done
	as_pg "$PGBIN/pg_ctl" -D "$WORK/data" -m fast -t 300 stop >/dev/null
	wait "$VG_PID" || true
	VG_PID=
	for mode in multi amulti; do
		f=floor
		[ "$mode" = amulti ] && f=afloor
		for s in 3 9; do
			valgrind --tool=callgrind --separate-threads=yes \
				--callgrind-out-file="$OUT/$f.cg.$s.%p" \
				"$WORK/zkfloor" "$ZKHOSTS" "$mode" "$s" /dev/null 0 2>/dev/null |
				sed -n "s/^zkfloor $mode: n=\\([0-9]*\\) .*/\\1/p" >"$OUT/$f.cg.$s.n"
		done
	done
fi

python3 bench/analyze.py cpu "$OUT" "$SECONDS_PER" | tee "$OUT/account.txt"
