#!/usr/bin/env bash
# bench/longqueue.sh: long queues held past deadlock_timeout: what
# ZooKeeper receives while they wait, and how long they take to drain.
# Not part of the test suite.
#
#   bench/longqueue.sh [--sizes "16 64 256"] [--kinds "KIND ..."]
#                      [--hold S] [--deadlock-ms MS] [--limit S]
#
# Starts a standalone ZooKeeper (test/zkctl) and two PostgreSQL clusters of
# the installation whose pg_config comes first in PATH (as the postgres
# user when run as root), on free loopback ports, and then, for every kind
# and every size n, runs bench/pgclients longqueue: holders on one path,
# n waiters (n/2 backends on each server, each with deadlock_timeout = MS,
# default 200) queued behind them all at once, held S seconds (default 4)
# after every waiter is seen waiting in zklock and on until their deadlock
# checks are over (ZooKeeper receives no more than pings explain), then
# released: each waiter releases as soon as it is granted (a FIFO handoff
# through all n).  Kinds
# (default all): exclusive (zk_lock), mixed (zk_rlock with every 4th waiter
# a zk_lock), semaphore1 and semaphore2 (zk_semaphore_acquire with
# max_leases 1 and 2), set2 (zk_lock of a set of 2 paths), lease
# (zk_lease_lock).  A queue that has not drained --limit seconds (default
# 60) after the release is recorded as such and its waiters terminated;
# checks still going on --limit seconds past the hold are released anyway.
#
# Measured (ZooKeeper's mntr zk_packets_received: every request, pings
# included): the requests from the first waiter's acquire to the end of the
# S seconds, and to the end of the checks, per second (mean, busiest
# second) and over n²; the
# drain time (the holders' release -> the last waiter's release returned)
# and its requests; whether the grants followed the queue order and
# whether any node was left.  Writes bench/out/longqueue/ (raw/KIND.N.txt,
# the figures; raw/KIND.N.samples, the requests every 250 ms of the wait)
# and prints the tables of `bench/analyze.py longqueue`, which go in BENCHMARKS.md
# by hand, with the command.  A full run takes about 2.5 minutes here
# (10 minutes on the build whose deadlock search was exhaustive).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
SIZES="16 64 256"
KINDS="exclusive mixed semaphore1 semaphore2 set2 lease"
HOLD=4
DEADLOCK_MS=200
LIMIT=60
CMDLINE="bench/longqueue.sh${*:+ $*}"
while [ $# -gt 0 ]; do
	case "$1" in
		--sizes) SIZES=$2; shift 2 ;;
		--kinds) KINDS=$2; shift 2 ;;
		--hold) HOLD=$2; shift 2 ;;
		--deadlock-ms) DEADLOCK_MS=$2; shift 2 ;;
		--limit) LIMIT=$2; shift 2 ;;
		-h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
		*) echo "longqueue.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
for n in $SIZES; do
	[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] && [ $((n % 2)) = 0 ] ||
		{ echo "longqueue.sh: a size is an even number >= 2 (n/2 per server): $n" >&2; exit 2; }
done

PGBIN=$(pg_config --bindir)
[ -f "$(pg_config --sharedir)/extension/zklock.control" ] ||
	{ echo "longqueue.sh: zklock is not installed in $(pg_config --sharedir) (make install)" >&2; exit 1; }
# shellcheck source=bench/one_cluster.sh
. bench/one_cluster.sh # as_pg, free_port

MAXN=0
for n in $SIZES; do [ "$n" -gt "$MAXN" ] && MAXN=$n; done
OUT=$ROOT/bench/out/longqueue
RAW=$OUT/raw
rm -rf "$OUT"
mkdir -p "$RAW"
T_START=$(date +%s)
log() { printf '[%s +%4ss] %s\n' "$(date +%H:%M:%S)" "$(($(date +%s) - T_START))" "$*"; }

WORK=$(mktemp -d /tmp/zklock-longqueue.XXXXXX)
chmod 755 "$WORK"
cleanup() {
	local rc=$? i
	set +e
	for i in 1 2; do
		[ -f "$WORK/pg$i/data/postmaster.pid" ] &&
			as_pg "$PGBIN/pg_ctl" -D "$WORK/pg$i/data" -m fast -t 60 stop >/dev/null 2>&1
	done
	test/zkctl stop "$WORK/zk" >/dev/null 2>&1
	mkdir -p "$OUT/logs"
	for i in 1 2; do cp "$WORK/pg$i/log" "$OUT/logs/pg$i.log" 2>/dev/null; done
	cp "$WORK/zk/s1/zk.log" "$OUT/logs/zk.log" 2>/dev/null
	rm -rf "$WORK"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log "building bench/pgclients"
gcc -O2 -Wall -Wextra -I"$(pg_config --includedir)" -o "$OUT/pgclients" bench/pgclients.c -lpq

ZKPORT=$(free_port 22810)
log "starting ZooKeeper on port $ZKPORT"
test/zkctl start "$WORK/zk" "$ZKPORT" >/dev/null
[ "$(id -u)" -eq 0 ] && chown -R postgres: "$WORK"
CONN=()
for i in 1 2; do
	port=$(free_port $((25432 + 10 * i)))
	d=$WORK/pg$i
	mkdir -p "$d"
	[ "$(id -u)" -eq 0 ] && chown postgres: "$d"
	as_pg "$PGBIN/initdb" -D "$d/data" -A trust -U postgres -E UTF8 --locale=C >"$OUT/initdb$i.log" 2>&1
	# every waiter of a case and its holders and monitor, on either server
	cat >>"$d/data/postgresql.conf" <<EOF
port = $port
listen_addresses = ''
unix_socket_directories = '$d'
cluster_name = 'lq$i'
max_connections = $((MAXN / 2 + 20))
shared_buffers = 32MB
zklock.hosts = '127.0.0.1:$ZKPORT'
log_line_prefix = '%m [%p] %q%a '
EOF
	as_pg "$PGBIN/pg_ctl" -D "$d/data" -l "$d/log" -w -t 60 start >/dev/null
	as_pg "$PGBIN/psql" -X -q -h "$d" -p "$port" -U postgres -d postgres -c 'CREATE EXTENSION zklock'
	CONN+=("host=$d port=$port user=postgres dbname=postgres")
done
log "PostgreSQL on ${CONN[0]##*port=} and ${CONN[1]##*port=}"

{
	echo "date_utc $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "command $CMDLINE"
	echo "git_head $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "git_dirty_src $(git status --porcelain -- src include sql Makefile 2>/dev/null | wc -l)"
	echo "zklock_so_md5 $(md5sum "$(pg_config --pkglibdir)/zklock.so" | cut -c1-12)"
	echo "repo_so_md5 $( (md5sum zklock.so 2>/dev/null || echo none) | cut -c1-12)"
	echo "postgres $("$PGBIN/postgres" --version)"
	echo "zk_version $(test/zkctl 4lw "$ZKPORT" srvr | sed -n 's/^Zookeeper version: //p' | cut -d, -f1)"
	echo "nproc $(nproc)"
	echo "hold_s $HOLD"
	echo "deadlock_timeout_ms $DEADLOCK_MS"
	echo "limit_s $LIMIT"
	echo "loadavg_start $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/machine.txt"

failed=0
for kind in $KINDS; do
	for n in $SIZES; do
		f=$RAW/$kind.$n
		log "$kind, $n waiters: held ${HOLD}s past all queued"
		rc=0
		timeout -k 10 $((HOLD + LIMIT + 240)) "$OUT/pgclients" longqueue "${CONN[0]}" "${CONN[1]}" \
			"$kind" "$n" "/bench/lq/$kind/$n" "$ZKPORT" "$HOLD" "$DEADLOCK_MS" "$LIMIT" "$f.samples" \
			>"$f.txt" 2>"$f.err" || rc=$?
		echo "lq_exit $rc" >>"$f.txt"
		echo "lq_loadavg $(cut -d' ' -f1 /proc/loadavg)" >>"$f.txt"
		if [ $rc != 0 ]; then
			failed=$((failed + 1))
			log "  exit $rc: $(tr '\n' ' ' <"$f.err" | cut -c1-300)"
		fi
		awk '$1 ~ /^lq_(hold_requests|quiet_after_s|quiet_requests_per_n2|drain_ms|drained|fifo_inversions|left_nodes)$/ { printf "%s=%s ", substr($1, 4), $2 } END { print "" }' "$f.txt" |
			sed 's/^/  /'
	done
done
echo "loadavg_end $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/machine.txt"
echo "elapsed_s $(($(date +%s) - T_START))" >>"$OUT/machine.txt"

/usr/bin/python3 bench/analyze.py longqueue "$OUT" | tee "$OUT/tables.md"
log "done in $(($(date +%s) - T_START)) s; $failed case(s) failed a check; output in $OUT"
[ "$failed" = 0 ]
