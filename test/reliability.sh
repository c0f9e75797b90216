#!/usr/bin/env bash
# reliability.sh: regenerate RELIABILITY.md's figures from the current
# commit.
#
#   test/reliability.sh [t/NNN_name.pl ...]   run the TAP files (default:
#                                             every one the template names),
#                                             record their figures, rewrite
#                                             RELIABILITY.md
#   test/reliability.sh --render              rewrite RELIABILITY.md from the
#                                             figures recorded, running nothing
#                                             (after editing the template)
#   test/reliability.sh --check               exit 1 if RELIABILITY.md is not
#                                             what --render would write
#   test/reliability.sh --code [REV]          print the code hash of REV
#                                             (default HEAD), see below
#
# RELIABILITY.md is made from test/reliability/template.md, whose
# placeholders are filled from test/reliability/figures.tsv:
#
#   {{t/NNN_name.pl:NAME}}   the figure NAME of that file's last run: a test
#                            prints it as "# figure: NAME=VALUE" (ZkTest's
#                            figure());
#   {{t/NNN_name.pl:@seconds}}  how long that run took;
#   {{from t/NNN_name.pl}}   the run a row's figures come from: the file, the
#                            commit it ran at, and how many of its checks
#                            passed and failed.
#
# The TAP files run through test/run-tests.sh (so with its rules: a skipped
# check is a failure).  figures.tsv keeps, for every file, the figures of
# its last run, with the commit and the result: running some files replaces
# their lines and keeps the others'.  The tree must be committed (but for
# RELIABILITY.md and figures.tsv themselves), so that the commit named is
# the code that ran; RELIABILITY_ALLOW_DIRTY=1 runs anyway and names the
# commit "<hash>+changes".  Exits non-zero if a file failed, or a
# placeholder has no value.
#
# Figures come from the code that lands.  Each run records the code hash
# of the commit it ran at: a hash of the tree of everything built into the
# extension (src/, sql/, zklock.control, Makefile).  A row is stale when its
# code hash is not HEAD's, that is when any byte of that code changed since
# its run (the margin is none): t/000_docs.pl fails on a stale row, so a
# change to the code reruns this script before it lands.
#
# A run never hides an earlier failure at the same code: when a file is
# run again and the code is unchanged, the failed runs before it are kept
# (@failed_before) and its row names them beside the last result.  Each
# run also records how it ran (@run): in a full run (every file the template
# names, as CI runs them) or with only some files.
set -uo pipefail
cd "$(dirname "$0")/.."

template=test/reliability/template.md
figures=test/reliability/figures.tsv
output=RELIABILITY.md

# render OUT: RELIABILITY.md from the template and the figures, into OUT;
# fails (after writing OUT) if a placeholder has no value
render() {
	perl test/reliability/render.pl "$template" "$figures" "$1"
}

# code_hash REV: the hash of REV's tree of src/, sql/, zklock.control and
# Makefile (git runs with safe.directory, as the tests run it as another
# user than the checkout's owner)
code_hash() {
	git -c safe.directory='*' ls-tree -r "$1" -- src sql zklock.control Makefile |
		git hash-object --stdin | cut -c1-12
}

case "${1:-}" in
--code)
	code_hash "${2:-HEAD}"
	exit
	;;
--render)
	render "$output"
	exit
	;;
--check)
	tmp=$(mktemp)
	render "$tmp" 2>/dev/null
	if cmp -s "$tmp" "$output"; then rm -f "$tmp"; exit 0; fi
	diff -u "$output" "$tmp" | head -40
	rm -f "$tmp"
	echo "reliability: $output is not what test/reliability.sh --render writes" >&2
	exit 1
	;;
-*)
	sed -n '2,/^set /p' "$0" | sed '$d'
	exit 2
	;;
esac

mapfile -t all_files < <(grep -oE '\{\{(from )?t/[A-Za-z0-9_.-]+\.pl' "$template" |
	sed -E 's/^\{\{(from )?//' | sort -u)
if [ $# -gt 0 ]; then
	files=("$@")
	how="run with $# of ${#all_files[@]} files"
else
	files=("${all_files[@]}")
	how="full run"
fi

commit=$(git rev-parse --short HEAD) || exit 1
code=$(code_hash HEAD)
if [ -n "$(git status --porcelain --untracked-files=no -- . ":!$output" ":!$figures")" ]; then
	if [ "${RELIABILITY_ALLOW_DIRTY:-}" = 1 ]; then
		commit="$commit+changes"
		code="uncommitted"
	else
		echo "reliability: the tree has uncommitted changes: commit them first, so that" >&2
		echo "the figures name the code that ran (or RELIABILITY_ALLOW_DIRTY=1)" >&2
		exit 1
	fi
fi

log=$(mktemp /tmp/zklock-reliability.XXXXXX)
echo "reliability: running ${#files[@]} TAP files at $commit (log: $log)"
# CI=true: the tests run in full (run-tests.sh ignores the ZKLOCK_*
# overrides that shorten them)
CI=true test/run-tests.sh "${files[@]}" 2>&1 | tee "$log"
work=$(sed -n 's/^logs: //p' "$log" | tail -1)
if [ -z "$work" ] || [ ! -d "$work" ]; then
	echo "reliability: test/run-tests.sh gave no log directory" >&2
	exit 1
fi

date=$(date -u '+%Y-%m-%d %H:%M UTC')
# old FILE NAME: the value recorded for FILE's last run, or nothing
old() {
	[ -f "$figures" ] && awk -F'\t' -v f="$1" -v n="$2" '$1 == f && $2 == n { print $3 }' "$figures"
}
new=$(mktemp)
status=0
for f in "${files[@]}"; do
	f=t/${f#t/}
	base=$(basename "$f" .pl)
	line=$(grep -E "^  $f +[0-9]+ passed, [0-9]+ failed" "$log" | tail -1)
	if [ -z "$line" ] || [ ! -f "$work/$base.tap" ]; then
		echo "reliability: no result for $f" >&2
		status=1
		continue
	fi
	read -r ok bad secs < <(echo "$line" |
		sed -E 's/^ +[^ ]+ +([0-9]+) passed, ([0-9]+) failed.*\(([0-9]+)s\)$/\1 \2 \3/')
	[ "$bad" -ne 0 ] && status=1
	# the failures before this run at the same code, and the last run if
	# it failed, are kept
	before=$(old "$f" @failed_before)
	if [ "$(old "$f" @code)" != "$code" ]; then
		before=
	else
		last_result=$(old "$f" @result)
		if [[ "$last_result" =~ ,\ [1-9][0-9]*\ failed ]]; then
			entry="\`$(old "$f" @commit)\` ($(old "$f" @run), $(old "$f" @date)): $last_result"
			before=${before:+$before; }$entry
		fi
	fi
	{
		printf '%s\t@commit\t%s\n' "$f" "$commit"
		printf '%s\t@code\t%s\n' "$f" "$code"
		printf '%s\t@run\t%s\n' "$f" "$how"
		[ -n "$before" ] && printf '%s\t@failed_before\t%s\n' "$f" "$before"
		printf '%s\t@date\t%s\n' "$f" "$date"
		printf '%s\t@result\t%s passed, %s failed\n' "$f" "$ok" "$bad"
		printf '%s\t@seconds\t%s\n' "$f" "$secs"
		sed -nE 's/^# figure: ([a-z][a-z0-9_]*)=(.*)$/\1\t\2/p' "$work/$base.tap" |
			sed "s|^|$f\t|"
	} >>"$new"
done

# the files just run replace their old lines; the others keep theirs
ran=$(cut -f1 "$new" | sort -u)
{
	echo "# test/reliability.sh: file, figure (or @commit, @code, @run, @date, @result, @seconds, @failed_before), value"
	[ -f "$figures" ] && grep -v '^#' "$figures" | grep -vFf <(sed 's/$/\t/' <<<"$ran")
	cat "$new"
} | { read -r header; echo "$header"; sort -t$'\t' -k1,1 -s; } >"$figures.tmp"
mv "$figures.tmp" "$figures"
rm -f "$new"

render "$output" || status=1
echo "reliability: $output rewritten from $(echo "$ran" | grep -c .) runs at $commit"
exit $status
