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

case "${1:-}" in
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

if [ $# -gt 0 ]; then
	files=("$@")
else
	mapfile -t files < <(grep -oE '\{\{(from )?t/[A-Za-z0-9_.-]+\.pl' "$template" |
		sed -E 's/^\{\{(from )?//' | sort -u)
fi

commit=$(git rev-parse --short HEAD) || exit 1
if [ -n "$(git status --porcelain --untracked-files=no -- . ":!$output" ":!$figures")" ]; then
	if [ "${RELIABILITY_ALLOW_DIRTY:-}" = 1 ]; then
		commit="$commit+changes"
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
	{
		printf '%s\t@commit\t%s\n' "$f" "$commit"
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
	echo "# test/reliability.sh: file, figure (or @commit, @date, @result, @seconds), value"
	[ -f "$figures" ] && grep -v '^#' "$figures" | grep -vFf <(sed 's/$/\t/' <<<"$ran")
	cat "$new"
} | { read -r header; echo "$header"; sort -t$'\t' -k1,1 -s; } >"$figures.tmp"
mv "$figures.tmp" "$figures"
rm -f "$new"

render "$output" || status=1
echo "reliability: $output rewritten from $(echo "$ran" | grep -c .) runs at $commit"
exit $status
