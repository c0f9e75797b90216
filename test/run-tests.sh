#!/usr/bin/env bash
# run-tests.sh: zklock's whole test suite, against real servers started
# here on loopback.
#
#   1. installs what is missing (test/install-deps.sh), builds, installs;
#   2. pg_regress and isolation tests: "make installcheck" in a throw-away
#      cluster (pg_virtualenv) against a standalone ZooKeeper;
#   3. TAP suites (test/t/*.pl): several PostgreSQL clusters, ZooKeeper
#      ensembles, faults; run as the "postgres" user when started as root,
#      since PostgreSQL refuses to run as root.  One after another, but
#      for t/066_pg_cron.pl, which waits for pg_cron's minute ticks beside
#      the others.
#
# A skipped check ("ok N # skip", or a whole file skipped with skip_all) is
# a failure, wherever the suite runs: a suite that did not run is never
# reported as "0 failed".  The summary names every skipped check.
# Ends with a line "N passed, M failed" summing every suite; exits
# non-zero if anything failed.  TAP files to run can be given as
# arguments (e.g. test/run-tests.sh t/001_two_servers.pl).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# the repository, for TAP tests that read its files (t/000_docs.pl); passed
# on with the other ZKLOCK_* variables
export ZKLOCK_SRCDIR=$ROOT

passed=0
failed=0
doc_passed=0				# t/000_docs.pl, reported on a line of its own
doc_failed=0
skipped=0
skipped_checks=()			# "file: the skipped check", for the summary
suites=()					# "name passed/failed", for the summary
failures=()

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

note() { printf '\n=== %s\n' "$*"; }

# a free TCP port on loopback, at or above $1
free_port() {
	local p=$1
	while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do
		p=$((p + 1))
	done
	echo "$p"
}

note "dependencies and build"
test/install-deps.sh || { echo "could not install dependencies"; echo "0 passed, 1 failed"; exit 1; }
# a failed build must not test the zklock.so an earlier build left
build_out=$(make -s 2>&1); build_rc=$?
printf '%s\n' "$build_out" | grep -v '^$'
if [ "$build_rc" -ne 0 ] || [ ! -f zklock.so ]; then
	echo "build failed"; echo "0 passed, 1 failed"; exit 1
fi
as_root make -s install >/dev/null || { echo "install failed"; echo "0 passed, 1 failed"; exit 1; }

WORK=$(mktemp -d /tmp/zklock-tests.XXXXXX)
chmod 755 "$WORK"
ZKDIR=$WORK/zk
cleanup() { test/zkctl stop "$ZKDIR" >/dev/null 2>&1 || true; }
trap cleanup EXIT

if [ $# -eq 0 ]; then
	note "pg_regress and isolation tests (make installcheck)"
	ZKPORT=$(free_port 21810)
	# without fsync, as the TAP tests' servers (see test/lib/ZkTest.pm)
	ZKCTL_FORCE_SYNC=no test/zkctl start "$ZKDIR" "$ZKPORT"
	pg_virtualenv -o "zklock.hosts=127.0.0.1:$ZKPORT" make -k installcheck >"$WORK/installcheck.log" 2>&1
	ic_rc=$?
	test/zkctl stop "$ZKDIR"
	grep -E '^(test +| +)[^ ].* \.\.\. ' "$WORK/installcheck.log" | sed 's/^/  /'
	ok=$(grep -cE '\.\.\. ok ' "$WORK/installcheck.log")
	bad=$(grep -cE '\.\.\. (FAILED|failed)' "$WORK/installcheck.log")
	if [ "$ic_rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
		bad=1
		tail -30 "$WORK/installcheck.log"
	fi
	passed=$((passed + ok))
	failed=$((failed + bad))
	if [ "$bad" -ne 0 ]; then
		failures+=("installcheck")
		cat regression.diffs output_iso/regression.diffs 2>/dev/null | head -200
	fi
	echo "  installcheck: $ok passed, $bad failed"
	suites+=("installcheck $ok/$bad")
fi

note "TAP tests (test/t)"
TAPDIR=$WORK/tap
mkdir -p "$TAPDIR"
cp -r test/t test/lib test/zkctl "$TAPDIR/"
[ -d test/java ] && cp -r test/java "$TAPDIR/"
[ -d test/python ] && cp -r test/python "$TAPDIR/"
PGBIN=$(pg_config --bindir)
PGXS_DIR=$(dirname "$(pg_config --pgxs)")/..
if [ "$(id -u)" -eq 0 ]; then
	chown -R postgres: "$WORK"
	RUN_AS=(runuser -u postgres --)
else
	RUN_AS=()
fi
if [ $# -gt 0 ]; then tapfiles=("$@"); else tapfiles=($(cd test && ls t/*.pl)); fi
# ZKLOCK_* variables reach the tests; under CI only the repository's path
# does: overrides that shorten a test (churn seconds, memory cycles) are
# ignored there, so that CI runs every test in full
pass_env=$(env | grep '^ZKLOCK_' | tr '\n' ' ')
if [ "${CI:-}" = true ]; then
	ignored=$(env | grep '^ZKLOCK_' | grep -v '^ZKLOCK_SRCDIR=' | cut -d= -f1 | tr '\n' ' ')
	[ -n "$ignored" ] && echo "  CI=true: ignoring $ignored"
	pass_env="ZKLOCK_SRCDIR=$ZKLOCK_SRCDIR"
fi
# run_tap FILE: runs one TAP file into its log; its wall-clock seconds go
# to the log's .secs file
run_tap() {
	local tf=$1 log=$WORK/$(basename "$1" .pl).tap start
	start=$(date +%s)
	(cd "$TAPDIR" && "${RUN_AS[@]}" env $pass_env \
		PATH="$PGBIN:$PATH" TESTDIR="$TAPDIR" \
		PG_REGRESS="$PGXS_DIR/test/regress/pg_regress" \
		prove -v -I lib -I "$PGXS_DIR/test/perl" "$tf") >"$log" 2>&1
	echo "$? $(($(date +%s) - start))" >"$log.secs"
}

# count_tap FILE: adds a file's results, from its log, to the totals
count_tap() {
	local tf=$1 log=$WORK/$(basename "$1" .pl).tap rc secs skip file_skip ok bad
	read -r rc secs <"$log.secs"
	# a skipped check ("ok N # skip", at any subtest depth) or a whole file
	# skipped ("1..0 # SKIP", prove's "skipped:") never counts as passed:
	# each is a failure
	skip_re='^[[:space:]]*ok [0-9]+ # skip'
	skip=$(grep -ciE "$skip_re" "$log")
	file_skip=$(grep -m1 -iE '^1\.\.0 # skip' "$log" ||
		grep -m1 -iE '^t/[^ ]+ \.+ skipped:' "$log")
	[ -n "$file_skip" ] && skip=$((skip + 1))
	ok=$(($(grep -cE '^ok [0-9]+' "$log") - $(grep -ciE '^ok [0-9]+ # skip' "$log")))
	bad=$(grep -cE '^not ok [0-9]+' "$log")
	if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
		bad=1				# died, or a wrong plan: count the file once
	fi
	if [ "$skip" -gt 0 ]; then
		skipped=$((skipped + skip))
		bad=$((bad + skip))
		[ -n "$file_skip" ] && skipped_checks+=("$tf: the whole file: $file_skip")
		while IFS= read -r line; do
			skipped_checks+=("$tf: ${line#"${line%%[![:space:]]*}"}")
		done < <(grep -iE "$skip_re" "$log")
	fi
	passed=$((passed + ok))
	failed=$((failed + bad))
	suites+=("$(basename "$tf" .pl) $ok/$bad$([ "$skip" -gt 0 ] && echo " ($skip skipped)")")
	if [ "$tf" = t/000_docs.pl ]; then
		doc_passed=$((doc_passed + ok))
		doc_failed=$((doc_failed + bad))
	fi
	printf '  %-40s %3d passed, %d failed (%d of them skipped) (%ds)\n' "$tf" "$ok" "$bad" "$skip" "$secs"
	if [ "$bad" -ne 0 ]; then
		failures+=("$tf")
		grep -E '^not ok|^#' "$log" | head -60
		for l in "$TAPDIR"/tmp_check/log/regress_log_$(basename "$tf" .pl); do
			[ -f "$l" ] && tail -40 "$l"
		done
	fi
}

# A file whose time goes almost all to waiting for the wall clock (pg_cron's
# minute ticks) runs beside the others when there are others: it is
# started first and counted last.
beside=()
serial=()
for tf in "${tapfiles[@]}"; do
	tf=t/${tf#t/}
	if [ ! -f "$TAPDIR/$tf" ]; then
		echo "  no such TAP file: $tf"; failed=$((failed + 1))
	elif [ "$tf" = t/066_pg_cron.pl ] && [ ${#tapfiles[@]} -gt 1 ]; then
		beside+=("$tf")
	else
		serial+=("$tf")
	fi
done
beside_pids=()
for tf in "${beside[@]}"; do
	echo "  $tf: started, runs beside the others"
	run_tap "$tf" &
	beside_pids+=($!)
done
for tf in "${serial[@]}"; do
	run_tap "$tf"
	count_tap "$tf"
done
for i in "${!beside[@]}"; do
	wait "${beside_pids[$i]}"
	count_tap "${beside[$i]}"
done

note "summary"
echo "every suite, passed/failed: $(IFS=,; echo "${suites[*]}" | sed 's/,/, /g')"
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
if [ "$skipped" -gt 0 ]; then
	echo "skipped, and so counted as failed: $skipped checks"
	printf '  %s\n' "${skipped_checks[@]}"
fi
echo "logs: $WORK"
# the documentation checks (one per document and rule) say nothing of the
# behaviour: the behaviour's figure is given without them, then the sum of
# every suite
echo "behaviour (pg_regress, isolation, TAP but t/000_docs.pl): $((passed - doc_passed)) passed, $((failed - doc_failed)) failed"
echo "documentation checks (t/000_docs.pl): $doc_passed passed, $doc_failed failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
