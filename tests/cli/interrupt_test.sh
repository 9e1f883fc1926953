#!/bin/sh
# Ctrl-C on long work: `burst whatif` over a grid that takes several seconds, interrupted after
# 3 s, finishes the point in hand, prints the table and writes the CSV of the points done (whole
# lines, one per point), says how far it got, and exits 130; the progress line says it stopped.
# Usage: interrupt_test.sh BURST
set -u
burst=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $1"; echo "--- stderr"; cat "$dir/err"; exit 1; }

"$burst" whatif --topology a800-4hca --nodes 4 --model burst-14b --seq 1M \
  --vary nodes=4,8,16,32,64,128 --vary seq=1M,2M,4M -o "$dir/grid.csv" >"$dir/out" 2>"$dir/err" &
job=$!
sleep 3
kill -INT "$job"
wait "$job"
rc=$?
[ $rc -eq 130 ] || fail "exit code $rc, want 130"
grep -q '^whatif: cut short by Ctrl-C after [0-9]* of 18 grid points' "$dir/err" || fail "no cut-short note"
done_points=$(sed -n 's/^whatif: cut short by Ctrl-C after \([0-9]*\) of.*/\1/p' "$dir/err")
[ "$done_points" -gt 0 ] && [ "$done_points" -lt 18 ] || fail "$done_points points done: the grid was not cut short"
[ "$(wc -l <"$dir/grid.csv")" -eq $((done_points + 1)) ] || fail "the CSV must hold a header and the $done_points points done"
awk 'NR > 1 && !/"$/ { bad = 1 } END { exit bad }' "$dir/grid.csv" || fail "a CSV line is not whole (each ends with its quoted reason)"
grep -q "what-if: stopped after $done_points of 18" "$dir/err" || fail "the progress line must say where it stopped"
echo "PASS (cut short after $done_points of 18 points, exit 130, CSV whole)"
