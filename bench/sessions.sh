#!/usr/bin/env bash
# bench/sessions.sh: what many zklock sessions cost a ZooKeeper ensemble, and
# what the cluster views cost on many locks.  Not part of the test suite.
#
#   bench/sessions.sh [--sessions N] [--timeout MS] [--idle S] [--probe S]
#                     [--rounds R] [--ensemble]
#   bench/sessions.sh --views [--locks N] [--queue N]
#
# Sessions (the default).  zklock opens one ZooKeeper session per backend
# that uses it; PostgreSQL backends by the thousand do not fit this
# machine, so `bench/zkfloor hold` (the bench's own C client,
# libzookeeper_mt, one session per zhandle as a backend has) stands for
# them.  On a standalone ZooKeeper from test/zkctl (fsync on), or with
# --ensemble a three-member one (the sessions spread over the members by
# the client library), on free loopback ports, three phases:
#   baseline  no session;
#   idle      N sessions (default 2000, session timeout MS, default 10000:
#             zklock.session_timeout's default) that hold nothing;
#   holding   N sessions, each holding one lock as zklock names it
#             (ephemeral-sequential "_c_<uuid>-__WRIT__<seq>" with an owner
#             record) on a lock path of its own.
# Measured in each: connections (mntr zk_num_alive_connections, less the
# mntr connection itself), znodes, the live JVM heap (jcmd GC.run, then
# GC.heap_info: used after a full collection) and the java process's RSS
# (summed over the members), and the requests ZooKeeper receives while
# nothing but pings is sent and the CPU its JVMs use meanwhile (mntr
# zk_packets_received and /proc over S seconds, default 60).  Then the
# latency another client sees, in R rounds (default 3) of P seconds alone
# and P seconds with the N sessions holding a lock each (opened anew in
# each round): `zkfloor amulti`, zklock's own lock + unlock traffic
# through the asynchronous API from one session (median and p99 of the
# cycle).  The sessions' client runs on the same two cores as ZooKeeper
# and the probe: its 4,000 threads wake for every ping.
#
# Views (--views).  One PostgreSQL cluster with zklock (bench/one_cluster.sh)
# and a standalone ZooKeeper.  `zkfloor hold` creates N locks (default
# 10,000) on paths of their own, /bench/many/<k / 1000>/<k>, from 10
# sessions; then zk_cluster_locks() (the whole tree),
# zk_cluster_locks('/bench/many/3') (a subtree of 1,000) and
# zk_cluster_locks('/bench/many/3/3017') (one lock) run 3 times each through
# psql in one backend whose session is already open, each timed by psql
# and bracketed by mntr zk_packets_received.  Then the locks go and a queue
# of Q nodes (default 1,000) on /bench/queue is made the same way, and
# zk_lock_queue('/bench/queue'), zk_lock_queue('/bench/queue', 10) and
# zk_cluster_locks('/bench/queue') are measured so.  The requests counted
# include the pings of every open session in the window (a few per second).
# The floor of the walk: `zkfloor list`, a getChildren of each of the N lock
# paths from a bare C session, one at a time and 256 at a time, 3 runs each.
#
# Prints the table; raw output in bench/out/sessions/.  Exits 1 when a
# phase did not measure what it meant (not N connections, not two more
# znodes per session while holding, a probe missing, a view that did not
# return every lock or node made).  The sessions run takes about 6 minutes
# (defaults), the views run less than one.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
SESSIONS=2000
TIMEOUT_MS=10000
IDLE=60
PROBE=10
ROUNDS=3
ENSEMBLE=no
VIEWS=no
LOCKS=10000
QUEUE=1000
CMDLINE="bench/sessions.sh${*:+ $*}"
while [ $# -gt 0 ]; do
	case "$1" in
		--sessions) SESSIONS=$2; shift 2 ;;
		--timeout) TIMEOUT_MS=$2; shift 2 ;;
		--idle) IDLE=$2; shift 2 ;;
		--probe) PROBE=$2; shift 2 ;;
		--rounds) ROUNDS=$2; shift 2 ;;
		--ensemble) ENSEMBLE=yes; shift ;;
		--views) VIEWS=yes; shift ;;
		--locks) LOCKS=$2; shift 2 ;;
		--queue) QUEUE=$2; shift 2 ;;
		-h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
		*) echo "sessions.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
[ "$LOCKS" -ge 4000 ] && [ "$QUEUE" -ge 10 ] ||
	{ echo "sessions.sh: --locks is at least 4000 (the subtree /bench/many/3 is measured), --queue at least 10" >&2; exit 2; }

# shellcheck source=bench/one_cluster.sh
. bench/one_cluster.sh # as_pg, free_port, one_cluster_start, psql_
OUT=$ROOT/bench/out/sessions
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/zklock-sessions.XXXXXX)
chmod 755 "$WORK"
HOLD_PID=
cleanup() {
	local rc=$?
	set +e
	hold_stop
	if [ "$VIEWS" = yes ]; then one_cluster_stop; else test/zkctl stop "$WORK/zk" >/dev/null 2>&1; fi
	rm -rf "$WORK"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
T_START=$(date +%s)
log() { printf '[%s +%4ss] %s\n' "$(date +%H:%M:%S)" "$(($(date +%s) - T_START))" "$*" >&2; }

# about 3 descriptors a session on each side
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
need=$((3 * SESSIONS + 100))
[ "$(ulimit -n)" -ge "$need" ] ||
	{ echo "sessions.sh: $SESSIONS sessions need $need open files, the limit is $(ulimit -n)" >&2; exit 1; }

gcc -O2 -Wall -Wextra -o "$WORK/zkfloor" bench/zkfloor.c -lzookeeper_mt -lpthread

# mntr KEY [PORT...]: the sum of a mntr figure over the members
mntr() {
	local key=$1 p s=0 v
	shift
	for p in "$@"; do
		v=$(test/zkctl 4lw "$p" mntr | awk -v k="$key" '$1 == k { print $2 }')
		s=$((s + ${v:-0}))
	done
	echo "$s"
}

# the live heap (kB used after a full collection) and RSS (kB) of the
# members' JVMs, summed
jvm_live_kb() {
	local pid s=0 v
	for pid in "${ZK_PIDS[@]}"; do
		jcmd "$pid" GC.run >/dev/null
		v=$(jcmd "$pid" GC.heap_info | awk '/generation/ { for (i = 1; i < NF; i++) if ($i == "used") { sub(/K,?/, "", $(i + 1)); s += $(i + 1) } } END { print s }')
		s=$((s + v))
	done
	echo "$s"
}
# CPU time (clock ticks) the members' JVMs used so far, summed
jvm_cpu_ticks() {
	local pid s=0
	for pid in "${ZK_PIDS[@]}"; do
		s=$((s + $(awk '{ print $14 + $15 }' "/proc/$pid/stat")))
	done
	echo "$s"
}
jvm_rss_kb() {
	local pid s=0
	for pid in "${ZK_PIDS[@]}"; do
		s=$((s + $(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status")))
	done
	echo "$s"
}

# hold_start NAME SESSIONS TIMEOUT NODES LAYOUT PREFIX: zkfloor hold in the
# background, until it says it is ready
hold_start() {
	local name=$1 i
	shift
	# 2,000 sessions are 4,000 client threads (libzookeeper_mt runs two per
	# session): small stacks
	(
		ulimit -s 256
		exec "$WORK/zkfloor" "$HOSTS" hold "$@"
	) >"$OUT/$name.hold" 2>"$OUT/$name.hold.err" &
	HOLD_PID=$!
	for ((i = 0; i < 1800; i++)); do
		grep -q '^hold_ready 1' "$OUT/$name.hold" && return 0
		kill -0 "$HOLD_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "sessions.sh: zkfloor hold did not get ready: $(cat "$OUT/$name.hold.err")" >&2
	exit 1
}
hold_stop() {
	[ -n "$HOLD_PID" ] || return 0
	kill -TERM "$HOLD_PID" 2>/dev/null || true
	wait "$HOLD_PID" 2>/dev/null || true
	HOLD_PID=
}
holdval() { awk -v k="$2" '$1 == k { print $2 }' "$OUT/$1.hold"; }

# ---------------------------------------------------------------------------
if [ "$VIEWS" = no ]; then
	if [ "$ENSEMBLE" = yes ]; then
		p1=$(free_port 23810)
		p2=$(free_port $((p1 + 1)))
		p3=$(free_port $((p2 + 1)))
		PORTS=("$p1" "$p2" "$p3")
		log "starting a 3-member ZooKeeper ensemble on $p1,$p2,$p3"
		test/zkctl ensemble "$WORK/zk" "$p1,$p2,$p3" >/dev/null
		ZK_PIDS=("$(cat "$WORK/zk/s1/pid")" "$(cat "$WORK/zk/s2/pid")" "$(cat "$WORK/zk/s3/pid")")
		HOSTS="127.0.0.1:$p1,127.0.0.1:$p2,127.0.0.1:$p3"
		KIND="3-member ensemble"
	else
		p1=$(free_port 23810)
		PORTS=("$p1")
		log "starting a standalone ZooKeeper on $p1"
		test/zkctl start "$WORK/zk" "$p1" >/dev/null
		ZK_PIDS=("$(cat "$WORK/zk/s1/pid")")
		HOSTS="127.0.0.1:$p1"
		KIND="standalone"
	fi
	TAG=$([ "$ENSEMBLE" = yes ] && echo ensemble || echo standalone)
	R=$OUT/$TAG.txt
	rm -f "$OUT/$TAG".*
	{
		echo "date_utc $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
		echo "command $CMDLINE"
		echo "git_head $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
		echo "zk_version $(test/zkctl 4lw "$p1" srvr | sed -n 's/^Zookeeper version: //p' | cut -d, -f1)"
		echo "loadavg_start $(cut -d' ' -f1-3 /proc/loadavg)"
	} >"$R"

	# measure PHASE: the figures of one phase, while what it holds is held
	measure() {
		local phase=$1 a b lat
		log "$phase: heap, then ${IDLE}s of idle traffic"
		echo "$phase connections $(($(mntr zk_num_alive_connections "${PORTS[@]}") - ${#PORTS[@]}))" >>"$R"
		echo "$phase znodes $(mntr zk_znode_count "$p1")" >>"$R"
		echo "$phase heap_live_kb $(jvm_live_kb)" >>"$R"
		echo "$phase rss_kb $(jvm_rss_kb)" >>"$R"
		a=$(mntr zk_packets_received "${PORTS[@]}")
		c=$(jvm_cpu_ticks)
		sleep "$IDLE"
		b=$(mntr zk_packets_received "${PORTS[@]}")
		d=$(jvm_cpu_ticks)
		echo "$phase idle_packets_per_s $(awk -v d=$((b - a)) -v s="$IDLE" 'BEGIN { printf "%.1f", d / s }')" >>"$R"
		echo "$phase idle_cpu_pct $(awk -v d=$((d - c)) -v s="$IDLE" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", 100 * d / hz / s }')" >>"$R"
		echo "$phase loadavg $(cut -d' ' -f1 /proc/loadavg)" >>"$R"
	}

	# probe ROUND PHASE: the latency another client sees, PROBE seconds
	probe() {
		"$WORK/zkfloor" "$HOSTS" amulti "$PROBE" "$OUT/$TAG.$2.$1.probe" 1 |
			sed -n 's/.* n=\([0-9]*\) mean=\([0-9.]*\) us median=\([0-9.]*\) us p99=\([0-9.]*\) us/'"$1 $2"' \3 \4/p' >>"$R.probes"
	}

	measure baseline
	log "idle: opening $SESSIONS sessions"
	hold_start "$TAG.idle" "$SESSIONS" "$TIMEOUT_MS" 0 own /zklock/bench/sessions
	echo "idle connect_s $(holdval "$TAG.idle" hold_connect_s)" >>"$R"
	echo "idle negotiated_timeout_ms $(holdval "$TAG.idle" hold_negotiated_timeout_ms)" >>"$R"
	measure idle
	hold_stop
	log "holding: $SESSIONS sessions, a lock each"
	hold_start "$TAG.holding" "$SESSIONS" "$TIMEOUT_MS" "$SESSIONS" own /zklock/bench/sessions
	echo "holding connect_s $(holdval "$TAG.holding" hold_connect_s)" >>"$R"
	echo "holding create_s $(holdval "$TAG.holding" hold_create_s)" >>"$R"
	measure holding
	hold_stop
	: >"$R.probes"
	for ((r = 1; r <= ROUNDS; r++)); do
		log "latency round $r of $ROUNDS: ${PROBE}s alone, then ${PROBE}s with $SESSIONS sessions holding a lock each"
		probe "$r" alone
		hold_start "$TAG.probe" "$SESSIONS" "$TIMEOUT_MS" "$SESSIONS" own /zklock/bench/sessions
		probe "$r" with
		hold_stop
	done
	echo "loadavg_end $(cut -d' ' -f1-3 /proc/loadavg)" >>"$R"
	echo "elapsed_s $(($(date +%s) - T_START))" >>"$R"

	get() { awk -v p="$1" -v k="$2" '$1 == p && $2 == k { print $3 }' "$R"; }
	# the figures are of what was meant to be measured
	bad=
	[ "$(get idle connections)" = "$SESSIONS" ] && [ "$(get holding connections)" = "$SESSIONS" ] ||
		bad+=" connections $(get idle connections)/$(get holding connections), not $SESSIONS;"
	[ $(($(get holding znodes) - $(get baseline znodes))) -ge $((2 * SESSIONS)) ] ||
		bad+=" $(($(get holding znodes) - $(get baseline znodes))) more znodes while holding, not ${SESSIONS}x2;"
	[ "$(wc -l <"$R.probes")" = $((2 * ROUNDS)) ] || bad+=" probes missing;"
	per() { awk -v x="$1" -v y="$2" -v n="$3" 'BEGIN { printf "%.0f", (x - y) / n }'; }
	echo
	echo "$SESSIONS sessions on a $KIND ZooKeeper 3.8 (test/zkctl, fsync on), session timeout $TIMEOUT_MS ms; $(head -1 "$R" | cut -d' ' -f2-)"
	echo
	echo "| | baseline | $SESSIONS idle sessions | $SESSIONS sessions holding a lock each |"
	echo "|---|---:|---:|---:|"
	for k in connections znodes heap_live_kb rss_kb idle_packets_per_s idle_cpu_pct; do
		echo "| $k | $(get baseline $k) | $(get idle $k) | $(get holding $k) |"
	done
	echo
	echo "Latency of zklock's lock + unlock traffic from another client (zkfloor amulti, ${PROBE}s each), alone and with $SESSIONS sessions holding a lock each, in alternating rounds:"
	echo
	echo "| round | median µs alone | with | ratio | p99 µs alone | with |"
	echo "|---|---:|---:|---:|---:|---:|"
	awk '$2 == "alone" { m[$1] = $3; p[$1] = $4 } $2 == "with" { printf "| %s | %.0f | %.0f | %.2f | %.0f | %.0f |\n", $1, m[$1], $3, $3 / m[$1], p[$1], $4 }' "$R.probes"
	echo
	echo "- per session: live heap $(per "$(get idle heap_live_kb)" "$(get baseline heap_live_kb)" "$SESSIONS") kB idle, $(per "$(get holding heap_live_kb)" "$(get baseline heap_live_kb)" "$SESSIONS") kB holding a lock; RSS $(per "$(get idle rss_kb)" "$(get baseline rss_kb)" "$SESSIONS") kB idle, $(per "$(get holding rss_kb)" "$(get baseline rss_kb)" "$SESSIONS") kB holding"
	echo "- idle requests: $(awk -v a="$(get idle idle_packets_per_s)" -v b="$(get baseline idle_packets_per_s)" -v n="$SESSIONS" -v t="$TIMEOUT_MS" 'BEGIN { printf "%.3f per session per second (a ping every %.2f s; timeout / 3 = %.2f s)", (a - b) / n, n / (a - b), t / 3000 }')"
	echo "- opening the $SESSIONS sessions: $(get idle connect_s) s (idle), $(get holding connect_s) s (holding); their $SESSIONS locks (a container and a node each, pipelined): $(get holding create_s) s"
	echo "- raw: $R"
	[ -z "$bad" ] || { echo "sessions.sh: not what was meant:$bad" >&2; exit 1; }
	exit 0
fi

# ---------------------------------------------------------------------------
# --views
PGBIN=$(pg_config --bindir)
[ -f "$(pg_config --sharedir)/extension/zklock.control" ] ||
	{ echo "sessions.sh: zklock is not installed in $(pg_config --sharedir) (make install)" >&2; exit 1; }
one_cluster_start 23810 56432
log "ZooKeeper on $ZKPORT, PostgreSQL on $PGPORT"
pg_restart
psql_ -c 'CREATE EXTENSION zklock'
HOSTS=127.0.0.1:$ZKPORT
R=$OUT/views.txt
{
	echo "date_utc $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "command $CMDLINE"
	echo "git_head $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "zklock_so_md5 $(md5sum "$(pg_config --pkglibdir)/zklock.so" | cut -c1-12)"
	echo "loadavg_start $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$R"

# views NAME SQL...: each statement 3 times in one backend (its session
# opened first), timed by psql, bracketed by zk_packets_received; one line
# per run in $R.runs: statement, rows, ms, requests
views() {
	local name=$1 q i
	shift
	local mntr_cmd="\\! bash -c 'exec 3<>/dev/tcp/127.0.0.1/$ZKPORT; printf mntr >&3; timeout 5 cat <&3' | awk '\$1 == \"zk_packets_received\" { print \"packets\", \$2 }'"
	{
		echo "SELECT 'session', state FROM zk_session();"
		echo '\timing on'
		for ((q = 1; q <= $#; q++)); do
			for i in 1 2 3; do
				echo "\\echo query $q"
				echo "$mntr_cmd"
				echo "${!q}"
				echo "$mntr_cmd"
			done
		done
	} >"$WORK/$name.sql"
	chmod 644 "$WORK/$name.sql"
	psql_ -f "$WORK/$name.sql" >"$OUT/$name.out" 2>&1
	if grep -q -E 'WARNING|ERROR' "$OUT/$name.out"; then
		echo "sessions.sh: a view warned or failed:" >&2
		grep -E 'WARNING|ERROR' "$OUT/$name.out" | head -3 >&2
	fi
	printf '%s\n' "$@" >"$WORK/$name.queries"
	awk 'NR == FNR { sql[FNR] = $0; next }
		/^query / { q = sql[$2]; n = 0; next }
		/^packets / { if (n == 0) { a = $2; n = 1 } else printf "%s\t%s\t%s\t%s\n", q, rows, ms, $2 - a; next }
		/^Time: / { split($0, t, " "); ms = t[2]; next }
		/^[0-9]+$/ { rows = $1 }' "$WORK/$name.queries" "$OUT/$name.out" >>"$R.runs"
}
: >"$R.runs"
: >"$R.floor"

log "views: $LOCKS locks on paths of their own, from 10 sessions"
hold_start views.many 10 10000 "$LOCKS" own /zklock/bench/many
echo "many_create_s $(holdval views.many hold_create_s)" >>"$R"
views many "SELECT count(*) FROM zk_cluster_locks();" \
	"SELECT count(*) FROM zk_cluster_locks('/bench/many/3');" \
	"SELECT count(*) FROM zk_cluster_locks('/bench/many/3/3017');"
# the floor of that walk from a bare C session: a getChildren of every lock
# path, one at a time and 256 at a time (zklock's window), alternately
for i in 1 2 3; do
	for w in 1 256; do
		"$WORK/zkfloor" "$HOSTS" list "$LOCKS" "$w" /zklock/bench/many |
			awk -v w="$w" '$1 == "list_ms" { print w, $2 }' >>"$R.floor"
	done
done
hold_stop
log "views: a queue of $QUEUE on /bench/queue"
hold_start views.queue 10 10000 "$QUEUE" shared /zklock/bench/queue
echo "queue_create_s $(holdval views.queue hold_create_s)" >>"$R"
views queue "SELECT count(*) FROM zk_lock_queue('/bench/queue');" \
	"SELECT count(*) FROM zk_lock_queue('/bench/queue', 10);" \
	"SELECT count(*) FROM zk_cluster_locks('/bench/queue');"
hold_stop
echo "loadavg_end $(cut -d' ' -f1-3 /proc/loadavg)" >>"$R"
echo "elapsed_s $(($(date +%s) - T_START))" >>"$R"

echo
echo "Cluster views through psql, $LOCKS locks (/bench/many/<k / 1000>/<k>) and a queue of $QUEUE (/bench/queue); $(head -1 "$R" | cut -d' ' -f2-)"
echo
echo "| statement | rows | ms (median of 3) | requests (median of 3, pings included) |"
echo "|---|---:|---:|---:|"
awk -F'\t' '{ k = $1; if (!(k in seen)) { seen[k] = 1; order[++n] = k } rows[k] = $2; ms[k, ++c[k]] = $3; rq[k, c[k]] = $4 }
	function med(a, k, m,    v, i, j, t) { for (i = 1; i <= m; i++) v[i] = a[k, i]; for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t } return v[int((m + 1) / 2)] }
	END { for (i = 1; i <= n; i++) { k = order[i]; printf "| `%s` | %s | %s | %s |\n", k, rows[k], med(ms, k, c[k]), med(rq, k, c[k]) } }' "$R.runs"
echo
awk -v n="$LOCKS" '{ t[$1] = t[$1] " " $2 } END { printf "- floor: a getChildren of each of the %d lock paths from a bare C session (zkfloor list), ms of 3 runs: one at a time%s; 256 outstanding%s\n", n, t[1], t[256] }' "$R.floor"
echo "- raw: $R, $R.runs, $R.floor"
# every run of each statement saw what was made: every lock, the
# subtree's 1,000, one lock, the queue, its first 10, its one holder
awk -F'\t' -v l="$LOCKS" -v q="$QUEUE" 'BEGIN { n = split(l " 1000 1 " q " 10 1", e, " ") }
	!($1 in idx) { idx[$1] = ++k }
	$2 != e[idx[$1]] { printf "sessions.sh: %s returned %s rows, not %s\n", $1, $2, e[idx[$1]]; bad = 1 }
	END { if (k != n) { print "sessions.sh: " k " statements measured, not " n; bad = 1 } exit bad }' "$R.runs" >&2
