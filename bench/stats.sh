#!/usr/bin/env bash
# bench/stats.sh: what the cumulative statistics cost, and what they look
# like under load.  Not part of the test suite.
#
#   bench/stats.sh [--rounds N] [--seconds S] [--load-seconds L]
#
# Starts a standalone ZooKeeper (test/zkctl) and one PostgreSQL 15 cluster
# (as the postgres user) on free loopback ports, then:
#
#  1. cost: the uncontended SQL cycle (pgbench -M prepared, 1 client,
#     SELECT zk_lock('/bench/stat'); SELECT zk_unlock('/bench/stat')) with
#     zklock in shared_preload_libraries (statistics kept) and without it
#     (not kept), alternating, N rounds of S seconds each (the server is
#     restarted between variants); prints the median cycles/s of each and
#     their ratio;
#  2. load: with zklock preloaded, L seconds of 6 clients taking and
#     releasing one of 4 hot locks (holding each 5 ms) and 2 clients trying
#     the same locks with wait_ms 10, while zk_stat is sampled every second;
#     writes bench/out/stats/samples.csv and the histograms, and plots them
#     to doc/stats.png (gnuplot).
#
# The figures go in BENCHMARKS.md by hand, with this command.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROUNDS=5
SECONDS_PER=10
LOAD_SECONDS=60
while [ $# -gt 0 ]; do
	case "$1" in
		--rounds) ROUNDS=$2; shift 2 ;;
		--seconds) SECONDS_PER=$2; shift 2 ;;
		--load-seconds) LOAD_SECONDS=$2; shift 2 ;;
		*) echo "unknown option $1" >&2; exit 2 ;;
	esac
done

PGBIN=$(pg_config --bindir)
OUT=$ROOT/bench/out/stats
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/zklock-stats.XXXXXX)
chmod 755 "$WORK"
. "$ROOT/bench/one_cluster.sh"
cleanup() {
	one_cluster_stop
	rm -rf "$WORK"
}
trap cleanup EXIT
one_cluster_start 22810 56432

# start(preload): (re)start the server with or without zklock preloaded
start() {
	if [ "$1" = yes ]; then
		echo "shared_preload_libraries = 'zklock'" >"$WORK/data/preload.conf"
	else
		: >"$WORK/data/preload.conf"
	fi
	grep -q "include_if_exists = 'preload.conf'" "$WORK/data/postgresql.conf" ||
		echo "include_if_exists = 'preload.conf'" >>"$WORK/data/postgresql.conf"
	pg_restart
}

start no
psql_ -c 'CREATE EXTENSION zklock'
cat >"$WORK/cycle.sql" <<'EOF'
SELECT zk_lock('/bench/stat');
SELECT zk_unlock('/bench/stat');
EOF
chmod 644 "$WORK/cycle.sql"

# --- 1. cost (after a warm-up: ZooKeeper's JVM runs slower at first)
pgbench_ -n -M prepared -c 1 -T "$SECONDS_PER" -f "$WORK/cycle.sql" >/dev/null 2>&1
: >"$OUT/cost.txt"
for r in $(seq 1 "$ROUNDS"); do
	for v in yes no; do
		start "$v"
		tps=$(pgbench_ -n -M prepared -c 1 -T "$SECONDS_PER" -f "$WORK/cycle.sql" 2>/dev/null |
			sed -n 's/^tps = \([0-9.]*\) .*/\1/p')
		echo "$r $v $tps" | tee -a "$OUT/cost.txt"
	done
done
python3 - "$OUT/cost.txt" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
on = [float(t) for _, v, t in rows if v == 'yes']
off = [float(t) for _, v, t in rows if v == 'no']
print(f"cycles/s, median of {len(on)} rounds: statistics kept {statistics.median(on):.1f}, "
      f"not kept {statistics.median(off):.1f}, ratio {statistics.median(on) / statistics.median(off):.3f}")
print("per round (kept / not kept):", " ".join(f"{a / b:.3f}" for a, b in zip(on, off)))
EOF

# --- 2. load
start yes
psql_ -c 'SELECT zk_stat_reset()' >/dev/null
cat >"$WORK/hold.sql" <<'EOF'
\set p random(1, 4)
SELECT zk_lock('/bench/hot/' || :p);
SELECT pg_sleep(0.005);
SELECT zk_unlock('/bench/hot/' || :p);
EOF
cat >"$WORK/try.sql" <<'EOF'
\set p random(1, 4)
SELECT CASE WHEN zk_try_lock('/bench/hot/' || :p, 10) THEN zk_unlock('/bench/hot/' || :p) END;
EOF
chmod 644 "$WORK/hold.sql" "$WORK/try.sql"
echo "epoch,acquired,refused,waits,wait_time,requests,request_time" >"$OUT/samples.csv"
pgbench_ -n -M prepared -c 6 -j 1 -T "$LOAD_SECONDS" -f "$WORK/hold.sql" >"$OUT/load_hold.txt" 2>&1 &
h=$!
pgbench_ -n -M prepared -c 2 -j 1 -T "$LOAD_SECONDS" -f "$WORK/try.sql" >"$OUT/load_try.txt" 2>&1 &
t=$!
end=$(($(date +%s) + LOAD_SECONDS + 2))
while [ "$(date +%s)" -le "$end" ]; do
	psql_ -F, -c "SELECT extract(epoch FROM now()), acquired, refused, waits, wait_time, requests, request_time FROM zk_stat" >>"$OUT/samples.csv"
	sleep 1
done
wait $h $t
psql_ -F, -c "SELECT histogram, le, count FROM zk_stat_histogram" >"$OUT/histograms.csv"
psql_ -x -c 'SELECT * FROM zk_stat' | tee "$OUT/final.txt"

python3 - "$OUT" <<'EOF'
import csv, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(f"{out}/samples.csv")))
with open(f"{out}/rates.dat", "w") as f:
    f.write("# t acquired/s refused/s waits/s avg_wait_ms avg_request_ms\n")
    t0 = float(rows[0]["epoch"])
    for a, b in zip(rows, rows[1:]):
        dt = float(b["epoch"]) - float(a["epoch"])
        d = {k: float(b[k]) - float(a[k]) for k in a if k != "epoch"}
        aw = d["wait_time"] / d["waits"] if d["waits"] else float("nan")
        ar = d["request_time"] / d["requests"] if d["requests"] else float("nan")
        f.write(f"{float(b['epoch']) - t0:.1f} {d['acquired'] / dt:.1f} {d['refused'] / dt:.1f} "
                f"{d['waits'] / dt:.1f} {aw:.3f} {ar:.3f}\n")
with open(f"{out}/hist.dat", "w") as f:
    prev = {}
    for h, le, c in csv.reader(open(f"{out}/histograms.csv")):
        c = int(c)
        f.write(f"{h} {le} {c - prev.get(h, 0)}\n")
        prev[h] = c
EOF
gnuplot <<EOF
set terminal pngcairo size 1000,900 font ",10" noenhanced
set output "$ROOT/doc/stats.png"
set multiplot layout 3,1 title "zk_stat sampled every second: 6 clients holding one of 4 hot locks for 5 ms, 2 clients trying them (wait_ms 10)"
set key outside right
set grid
set xlabel "seconds"
set ylabel "per second"
plot "$OUT/rates.dat" using 1:2 with lines lw 2 title "acquired", \
     "" using 1:4 with lines lw 2 title "waits", \
     "" using 1:3 with lines lw 2 title "refused"
set ylabel "ms"
plot "$OUT/rates.dat" using 1:5 with lines lw 2 title "average wait", \
     "" using 1:6 with lines lw 2 title "average ZooKeeper request"
set xlabel "upper bound of the bucket, ms (log scale)"
set ylabel "count"
set logscale x
set style fill solid 0.5
plot "< grep '^wait ' $OUT/hist.dat | grep -v Infinity" using 2:3 with linespoints lw 2 title "waits", \
     "< grep '^request ' $OUT/hist.dat | grep -v Infinity" using 2:3 with linespoints lw 2 title "ZooKeeper requests"
unset multiplot
EOF
echo "wrote $OUT/samples.csv, $OUT/histograms.csv, doc/stats.png"
