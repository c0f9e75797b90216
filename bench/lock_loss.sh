#!/usr/bin/env bash
# bench/lock_loss.sh: how soon a lost hold stops its holder's statement
# (zklock.on_lock_loss = cancel), for each kind of loss.  Not part of the
# test suite.
#
#   bench/lock_loss.sh [--trials N] [--session-timeout MS] [--ttl MS]
#
# Starts a standalone ZooKeeper (test/zkctl), a loopback proxy in front of
# it (test/python/tcpproxy.py) and one PostgreSQL 15 cluster whose
# zklock.hosts is the proxy, on free ports, then runs bench/lock_loss.py:
# for each kind of loss, N trials of a backend that holds a lock and runs
# SELECT pg_sleep(60), and prints per kind the time from the loss (or from
# the moment it is certain, for the ones whose bound counts from an
# earlier event) to the end of the statement: min, median and max, beside
# the bound guarantees.md states.  The figures go in BENCHMARKS.md by
# hand, with this command.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
TRIALS=10
SESSION_TIMEOUT=3000
TTL=2000
while [ $# -gt 0 ]; do
	case "$1" in
		--trials) TRIALS=$2; shift 2 ;;
		--session-timeout) SESSION_TIMEOUT=$2; shift 2 ;;
		--ttl) TTL=$2; shift 2 ;;
		*) echo "unknown option $1" >&2; exit 2 ;;
	esac
done

PGBIN=$(pg_config --bindir)
WORK=$(mktemp -d /tmp/zklock-lossbench.XXXXXX)
chmod 755 "$WORK"
. "$ROOT/bench/one_cluster.sh"
cleanup() {
	one_cluster_stop
	rm -rf "$WORK"
}
trap cleanup EXIT
one_cluster_start 24850 57872
echo "zklock.session_timeout = $SESSION_TIMEOUT" >>"$WORK/data/postgresql.conf"
/usr/bin/python3 bench/lock_loss.py --zk-port "$ZKPORT" --pg-port "$PGPORT" \
	--socket-dir "$WORK" --pgbin "$PGBIN" --data "$WORK/data" \
	--trials "$TRIALS" --session-timeout "$SESSION_TIMEOUT" --ttl "$TTL"
