#!/usr/bin/env bash
# bench/advisory.sh: what an advisory-lock cycle through the schema
# zk_advisory costs against zk_lock + zk_unlock.  Not part of the test
# suite.
#
#   bench/advisory.sh [--rounds N] [--seconds S]
#
# Starts a standalone ZooKeeper (test/zkctl) and one PostgreSQL 15 cluster
# (as the postgres user) on free loopback ports, sets the postgres role's
# search_path to zk_advisory, pg_catalog, ..., and runs the uncontended
# cycle of bench/advisory_pg.sql (pg_advisory_lock + pg_advisory_unlock,
# which resolve to zk_advisory's) and of bench/advisory_zk.sql (zk_lock +
# zk_unlock on a path as long) with pgbench -M prepared, 1 client,
# alternating (the first of a round alternates too), N rounds of S seconds
# each, in the same run; prints the median cycles/s of each, their ratio,
# and the median of the per-round ratios.  A ratio of 1 or more means the
# advisory cycle costs no more.  The figures go in BENCHMARKS.md
# (Interpretation) by hand, with this command.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROUNDS=5
SECONDS_PER=10
while [ $# -gt 0 ]; do
	case "$1" in
		--rounds) ROUNDS=$2; shift 2 ;;
		--seconds) SECONDS_PER=$2; shift 2 ;;
		*) echo "unknown option $1" >&2; exit 2 ;;
	esac
done

PGBIN=$(pg_config --bindir)
OUT=$ROOT/bench/out/advisory
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/zklock-advisory.XXXXXX)
chmod 755 "$WORK"
. "$ROOT/bench/one_cluster.sh"
cleanup() {
	one_cluster_stop
	rm -rf "$WORK"
}
trap cleanup EXIT
one_cluster_start 22850 56472
pg_restart
psql_ -c 'CREATE EXTENSION zklock'
psql_ -c 'ALTER ROLE postgres SET search_path = zk_advisory, pg_catalog, "$user", public'
cp bench/advisory_pg.sql bench/advisory_zk.sql "$WORK/"
chmod 644 "$WORK"/*.sql
[ "$(psql_ -c "SELECT pronamespace::regnamespace FROM pg_proc WHERE oid = 'pg_advisory_lock(bigint)'::regprocedure")" = zk_advisory ] ||
	{ echo "pg_advisory_lock does not resolve to zk_advisory's" >&2; exit 1; }

cycles() {
	pgbench_ -n -M prepared -c 1 -T "$SECONDS_PER" -f "$WORK/$1" 2>/dev/null |
		sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
}

# warm-up: ZooKeeper's JVM runs slower at first
cycles advisory_zk.sql >/dev/null
: >"$OUT/cycles.txt"
for r in $(seq 1 "$ROUNDS"); do
	# which goes first alternates, so that a drift within a round
	# favours neither
	if [ $((r % 2)) -eq 1 ]; then order="advisory_pg.sql advisory_zk.sql"
	else order="advisory_zk.sql advisory_pg.sql"; fi
	for v in $order; do
		echo "$r $v $(cycles "$v")" | tee -a "$OUT/cycles.txt"
	done
done
python3 - "$OUT/cycles.txt" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
adv = [float(t) for _, v, t in rows if v == 'advisory_pg.sql']
zk = [float(t) for _, v, t in rows if v == 'advisory_zk.sql']
print(f"cycles/s, median of {len(adv)} rounds: zk_advisory {statistics.median(adv):.1f}, "
      f"zk_lock + zk_unlock {statistics.median(zk):.1f}, "
      f"ratio {statistics.median(adv) / statistics.median(zk):.3f}")
ratios = [a / b for a, b in zip(adv, zk)]
print("per round (zk_advisory / zk_lock):", " ".join(f"{x:.3f}" for x in ratios),
      f"median {statistics.median(ratios):.3f}")
EOF
