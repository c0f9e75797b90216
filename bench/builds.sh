#!/usr/bin/env bash
# bench/builds.sh: two builds of zklock side by side, on the same ZooKeeper
# and the same PostgreSQL cluster, in one run.  Not part of the test suite.
#
#   bench/builds.sh [--rounds N] [--seconds S] [--version V]
#                   [--workloads "W ..."] OLD_REV [NEW_REV]
#
# Builds OLD_REV (a git revision, in a throw-away worktree) and NEW_REV (the
# working tree when not given), makes a private copy of this machine's
# PostgreSQL installation (so that the installed zklock is never touched),
# starts a standalone ZooKeeper (test/zkctl) and one cluster of the copy on
# free loopback ports, and then, for N rounds, runs each workload for S
# seconds (pgbench -M prepared) with each build in turn, the first
# alternating from round to round (the build's zklock.so put in the copy,
# the server restarted):
#
#   cycle       1 client: zk_lock + zk_unlock on one path
#   xact        1 client: BEGIN; zk_xact_lock; COMMIT (released at COMMIT)
#   set10       1 client: zk_lock + zk_unlock of a set of 10 paths
#   semaphore   1 client: zk_semaphore_acquire + zk_semaphore_release
#   contended   4 clients: zk_lock + zk_unlock on one path
#   fanout      80 clients: zk_lock + zk_unlock on a path drawn at random
#               from 4000 per transaction (ZooKeeper reaps an unused lock
#               node within about a second, so most paths are fresh)
#   hold        80 clients: 50 zk_lock on paths of the client's own, held
#               0.3 s (past the loss watch's 250 ms, so each held node is
#               watched for its loss), then zk_unlock_all
#
# --workloads chooses among them (default: all but fanout and hold, which
# take many backends); --version V creates extension version V (default:
# the newest), for an OLD_REV older than the newest version's SQL objects.
#
# Prints, per workload, the median transactions/s of each build over the
# rounds and their ratio (new / old), and every round's ratio (the machine
# is shared and noisy: the spread says how far to trust the median); and the
# ZooKeeper requests per transaction (the server's packets received, pings
# of idle sessions included), for hold per lock, with locks/s.  Both builds
# must have the same extension version (the SQL objects are the working
# tree's).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROUNDS=5
SECONDS_PER=8
VERSION=
WORKLOADS="cycle xact set10 semaphore contended"
while [ $# -gt 0 ]; do
	case "$1" in
		--rounds) ROUNDS=$2; shift 2 ;;
		--seconds) SECONDS_PER=$2; shift 2 ;;
		--version) VERSION=$2; shift 2 ;;
		--workloads) WORKLOADS=$2; shift 2 ;;
		-*) echo "unknown option $1" >&2; exit 2 ;;
		*) break ;;
	esac
done
[ $# -ge 1 ] || { echo "usage: bench/builds.sh [--rounds N] [--seconds S] [--version V] [--workloads \"W ...\"] OLD_REV [NEW_REV]" >&2; exit 2; }
OLD_REV=$1
NEW_REV=${2:-}

MAJOR=$(pg_config --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')
WORK=$(mktemp -d /tmp/zklock-builds.XXXXXX)
chmod 755 "$WORK"
OUT=$ROOT/bench/out/builds
mkdir -p "$OUT"
PGLIB=$WORK/pg/usr/lib/postgresql/$MAJOR
PGSHARE=$WORK/pg/usr/share/postgresql/$MAJOR
PGBIN=$PGLIB/bin
. "$ROOT/bench/one_cluster.sh"
cleanup() {
	one_cluster_stop
	for d in "$WORK"/src-*; do
		[ -d "$d" ] && git worktree remove --force "$d" >/dev/null 2>&1 || true
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

# build(NAME, REV): zklock.so of REV (empty: the working tree) in
# $WORK/NAME.so
build() {
	local name=$1 rev=$2 dir=$ROOT
	if [ -n "$rev" ]; then
		dir=$WORK/src-$name
		git worktree add -q --detach "$dir" "$rev"
	fi
	make -s -C "$dir" >/dev/null
	cp "$dir/zklock.so" "$WORK/$name.so"
	echo "$name: $(git -C "$dir" log -1 --format='%h %s' | cut -c1-70)$([ -z "$rev" ] && ! git diff --quiet && echo ' (+ uncommitted changes)')"
}
build old "$OLD_REV"
build new "$NEW_REV"

# the private copy of the installation, with the working tree's SQL files
mkdir -p "$WORK/pg/usr/lib/postgresql" "$WORK/pg/usr/share/postgresql"
cp -a "/usr/lib/postgresql/$MAJOR" "$WORK/pg/usr/lib/postgresql/"
cp -a "/usr/share/postgresql/$MAJOR" "$WORK/pg/usr/share/postgresql/"
cp zklock.control sql/zklock--*.sql "$PGSHARE/extension/"

one_cluster_start 23810 57432

# start(NAME): the server with build NAME's zklock.so
start() {
	as_pg "$PGBIN/pg_ctl" -D "$WORK/data" -m fast stop >/dev/null 2>&1 || true
	cp "$WORK/$1.so" "$PGLIB/lib/zklock.so"
	pg_restart
}

start new
psql_ -c "CREATE EXTENSION zklock${VERSION:+ VERSION '$VERSION'}"
set10="ARRAY['/b/s/0','/b/s/1','/b/s/2','/b/s/3','/b/s/4','/b/s/5','/b/s/6','/b/s/7','/b/s/8','/b/s/9']"
printf '%s\n' "SELECT zk_lock('/b/cycle');" "SELECT zk_unlock('/b/cycle');" >"$WORK/cycle.sql"
printf '%s\n' "BEGIN;" "SELECT zk_xact_lock('/b/xact');" "COMMIT;" >"$WORK/xact.sql"
printf '%s\n' "SELECT zk_lock($set10);" "SELECT zk_unlock($set10);" >"$WORK/set10.sql"
printf '%s\n' "SELECT zk_semaphore_acquire('/b/sem', 3);" "SELECT zk_semaphore_release('/b/sem');" >"$WORK/semaphore.sql"
printf '%s\n' "SELECT zk_lock('/b/hot');" "SELECT zk_unlock('/b/hot');" >"$WORK/contended.sql"
printf '%s\n' '\set n random(1, 4000)' "SELECT zk_lock('/b/fan/' || :n);" \
	"SELECT zk_unlock('/b/fan/' || :n);" >"$WORK/fanout.sql"
printf '%s\n' "SELECT count(zk_lock('/b/hold/' || :client_id || '/' || g)) FROM generate_series(1, 50) g;" \
	"SELECT pg_sleep(0.3);" "SELECT zk_unlock_all();" >"$WORK/hold.sql"
chmod 644 "$WORK"/*.sql

# the requests ZooKeeper has received so far
zk_packets() { test/zkctl 4lw "$ZKPORT" mntr | sed -n 's/^zk_packets_received[[:space:]]*//p'; }

# run(WORKLOAD): its transactions/s, and ZooKeeper's requests per
# transaction
run() {
	local clients=1 threads=1 before after out
	[ "$1" = contended ] && clients=4 threads=4
	[ "$1" = fanout ] || [ "$1" = hold ] && clients=80 threads=2
	before=$(zk_packets)
	out=$(pgbench_ -n -M prepared -c "$clients" -j "$threads" -T "$SECONDS_PER" -f "$WORK/$1.sql" 2>/dev/null)
	after=$(zk_packets)
	awk -v d=$((after - before)) '/^tps = / { tps = $3 }
		/^number of transactions actually processed: / { n = $6 }
		END { printf "%s %.2f\n", tps, (n > 0 ? d / n : 0) }' <<<"$out"
}

# a warm-up (ZooKeeper's JVM runs slower at first)
for w in $WORKLOADS; do run "$w" >/dev/null; done
: >"$OUT/rounds.txt"
# each workload by both builds back to back, the first alternating round by
# round: what a workload leaves behind (fanout's 4000 lock nodes, which
# ZooKeeper reaps over the next seconds) then weighs on both builds alike
for r in $(seq 1 "$ROUNDS"); do
	order="old new"
	[ $((r % 2)) = 0 ] && order="new old"
	for w in $WORKLOADS; do
		for b in $order; do
			start "$b"
			echo "$r $b $w $(run "$w")" | tee -a "$OUT/rounds.txt"
		done
	done
done
python3 - "$OUT/rounds.txt" $WORKLOADS <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print(f"{'workload':<10} {'old tps':>9} {'new tps':>9} {'new/old':>8} {'old req':>8} {'new req':>8}  per round")
for w in sys.argv[2:]:
    old = [(float(t), float(q)) for _, b, x, t, q in rows if x == w and b == 'old']
    new = [(float(t), float(q)) for _, b, x, t, q in rows if x == w and b == 'new']
    mo, mn = (statistics.median(t for t, _ in v) for v in (old, new))
    qo, qn = (statistics.median(q for _, q in v) for v in (old, new))
    print(f"{w:<10} {mo:9.1f} {mn:9.1f} {mn / mo:8.3f} {qo:8.2f} {qn:8.2f}  "
          + " ".join(f"{b[0] / a[0]:.3f}" for a, b in zip(old, new)))
    if w == 'hold':
        print(f"{'':<10} locks/s: old {mo * 50:.0f}, new {mn * 50:.0f}; "
              f"requests per lock held: old {qo / 50:.2f}, new {qn / 50:.2f}")
EOF
