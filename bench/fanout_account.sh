#!/usr/bin/env bash
# bench/fanout_account.sh: where the CPU of a cycle goes when many backends
# take locks at once, process by process, next to the composed throughput
# floor doing the same ZooKeeper and PostgreSQL work without zklock.  Not
# part of the test suite.
#
#   bench/fanout_account.sh [--clients N] [--seconds S] [--rounds R]
#
# Uses the zklock installed for the pg_config on PATH (make install first).
# Starts a standalone ZooKeeper and one cluster (bench/one_cluster.sh) with
# zklock in shared_preload_libraries, then for R rounds (default 3), in
# turn:
#
#   zklock   pgbench -M prepared -c N (default 80) -j 2: each client loops
#            SELECT zk_lock('/fx/<client>'); SELECT zk_unlock(...) on a
#            path of its own;
#   floor    zkfloor acomposed with N threads on the same server: each
#            thread, with a ZooKeeper session and a connection of its own,
#            loops SELECT pg_advisory_lock(k), zklock's multi {create,
#            setData(parent)}, SELECT pg_advisory_unlock(k), the delete
#            (bench/zkfloor.c): the same two statements and two ZooKeeper
#            writes per cycle, and nothing of zklock's own.
#
# Each runs for S + 8 seconds (default S 5); over S seconds from 5 s after
# its start, every thread's CPU time and context switches are read from /proc
# before and after (bench/analyze.py fanout), and the cycles are
# ZooKeeper's transactions over the same window / 2 (both sides write
# exactly two per cycle; pings write none).  Prints, per cycle, each
# group's CPU (µs) and switches: PostgreSQL's main threads (the statements,
# and in a backend zklock's part of the cycle), PostgreSQL's other threads
# (a backend's ZooKeeper client), pgbench, zkfloor, the ZooKeeper server;
# then the medians over the rounds.  The machine is shared: the rounds'
# spread says how far to trust them.
#
# Output: stdout; the per-round figures stay in bench/out/fanout_account.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
CLIENTS=80
SECONDS_PER=5
ROUNDS=3
while [ $# -gt 0 ]; do
	case "$1" in
		--clients) CLIENTS=$2; shift 2 ;;
		--seconds) SECONDS_PER=$2; shift 2 ;;
		--rounds) ROUNDS=$2; shift 2 ;;
		*) echo "usage: $0 [--clients N] [--seconds S] [--rounds R]" >&2; exit 2 ;;
	esac
done

OUT=$ROOT/bench/out/fanout_account
rm -rf "$OUT"
mkdir -p "$OUT"
PGBIN=$(pg_config --bindir)
WORK=$(mktemp -d /tmp/zklock-fanacct.XXXXXX)
chmod 755 "$WORK"
. "$ROOT/bench/one_cluster.sh"
trap one_cluster_stop EXIT

one_cluster_start 23810 25440
sed -i "s/^max_connections = .*/max_connections = $((CLIENTS + 20))/" "$WORK/data/postgresql.conf"
echo "shared_preload_libraries = 'zklock'" >>"$WORK/data/postgresql.conf"
pg_restart
psql_ -c "CREATE EXTENSION zklock"

gcc -O2 -Wall -Wextra -I"$(pg_config --includedir)" -o "$WORK/zkfloor" bench/zkfloor.c \
	-lzookeeper_mt -lpthread -lpq
cat >"$WORK/own.sql" <<'EOF'
SELECT zk_lock('/fx/' || :client_id);
SELECT zk_unlock('/fx/' || :client_id);
EOF
chmod 644 "$WORK/own.sql"
CONN="host=$WORK port=$PGPORT user=postgres dbname=postgres"

# ZooKeeper's last transaction id (srvr), as a number
zxid() { echo $(($(test/zkctl 4lw "$ZKPORT" srvr | sed -n 's/^Zxid: //p'))); }

# one side of a round: start its clients, measure the window, wait
measure() { # side round
	local side=$1 r=$2 pid z0 z1
	if [ "$side" = zklock ]; then
		pgbench_ -n -M prepared -c "$CLIENTS" -j 2 -T $((SECONDS_PER + 8)) \
			-f "$WORK/own.sql" >"$OUT/$side.$r.log" 2>&1 &
	else
		"$WORK/zkfloor" "127.0.0.1:$ZKPORT" acomposed $((SECONDS_PER + 4)) "$OUT/$side.$r.threads" 4 \
			"$CLIENTS" "$CONN" "$CONN" >"$OUT/$side.$r.log" 2>&1 &
	fi
	pid=$!
	sleep 5					# sessions and connections open, loops running
	z0=$(zxid)
	python3 bench/analyze.py fanout snapshot "$OUT/before.json"
	sleep "$SECONDS_PER"
	python3 bench/analyze.py fanout snapshot "$OUT/after.json"
	z1=$(zxid)
	wait "$pid" || { cat "$OUT/$side.$r.log" >&2; exit 1; }
	python3 bench/analyze.py fanout diff "$OUT/before.json" "$OUT/after.json" \
		$(((z1 - z0) / 2)) "$side" "$OUT/rounds.jsonl"
	echo "  cycles/s over the window: $(((z1 - z0) / 2 / SECONDS_PER))"
}

for ((r = 1; r <= ROUNDS; r++)); do
	echo "## round $r"
	if ((r % 2)); then
		measure zklock "$r"
		measure floor "$r"
	else
		measure floor "$r"
		measure zklock "$r"
	fi
done
echo
python3 bench/analyze.py fanout summary "$OUT/rounds.jsonl"
