#!/bin/sh
# `burst run --loopback`: every rank of a plan as a thread of one process, no mpirun.
#  1. a 32-rank plan's exact schedule (the a800 x4 golden plan, dry run) passes its check;
#  2. its attention on a 4-rank local plan passes its check against one rank, timed as the
#     median of two runs after a warm-up (the results of the last run are the ones checked),
#     the runs' spread around it in the text and the JSON;
#     --repeat with --dry-run is refused;
#  3. training: two loopback runs give the same losses bit for bit, and they match the same
#     run under mpirun to 1e-6 (the collectives add in another order there);
#  4. a loopback job under a multi-process mpirun is refused with one clear error.
# Usage: loopback_test.sh MPIEXEC BURST DRY_PLAN ATTENTION_PLAN TRAIN_PLAN CORPUS
set -u
mpiexec=$1 burst=$2 dry_plan=$3 attention_plan=$4 train_plan=$5 corpus=$6
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $1"; for f in "$dir"/*; do echo "--- $f"; head -c 1500 "$f"; done; exit 1; }
root=""
[ "$(id -u)" = 0 ] && root=--allow-run-as-root

timeout 120 "$burst" run "$dry_plan" --dry-run --loopback --device cpu >"$dir/dry.out" 2>"$dir/dry.err" || fail "dry run"
grep -q '^loopback: the plan.s 32 ranks as threads of this process' "$dir/dry.err" || fail "dry run: no loopback line"
grep -q 'burst on 32 ranks' "$dir/dry.out" && grep -q 'check .*: passed' "$dir/dry.out" || fail "dry run: check"

timeout 120 "$burst" run "$attention_plan" --attention-only --check --repeat 2 --loopback --device cpu >"$dir/att.out" 2>"$dir/att.err" ||
  fail "attention run"
grep -q 'check .*: passed' "$dir/att.out" || fail "attention run: check"
grep -q '^  timing    median of 2 timed runs after 1 warm-up; runs: forward [0-9.]*-[0-9.]* s, backward [0-9.]*-[0-9.]* s$' \
  "$dir/att.out" || fail "attention run: timing line"
timeout 120 "$burst" run "$attention_plan" --attention-only --repeat 3 --json --loopback --device cpu >"$dir/att.json" 2>"$dir/att_json.err" ||
  fail "attention run (JSON)"
python3 - "$dir/att.json" <<'PY' || fail "attention run (JSON): timing fields"
import json, sys
r = json.load(open(sys.argv[1]))
assert (r["run"]["warmups"], r["run"]["repeats"]) == (1, 3), r["run"]
m = r["measured"]
for phase in ("forward", "backward"):
    assert 0 < m[f"{phase}_fastest_s"] <= m[f"{phase}_s"] <= m[f"{phase}_slowest_s"], m
PY
timeout 60 "$burst" run "$attention_plan" --dry-run --repeat 2 --loopback --device cpu >"$dir/dry_repeat.out" 2>"$dir/dry_repeat.err"
[ $? -eq 2 ] || fail "--repeat with --dry-run: not refused with exit code 2"
grep -q -- '--dry-run excludes --repeat' "$dir/dry_repeat.err" || fail "--repeat with --dry-run: message"

losses() { python3 -c 'import json,sys; print(" ".join(repr(x) for x in json.load(open(sys.argv[1]))["losses"]))' "$1"; }
for run in a b; do
  timeout 120 "$burst" run "$train_plan" --steps 4 --data "$corpus" --loopback --json >"$dir/train_$run.json" 2>"$dir/train_$run.err" ||
    fail "training run $run"
done
[ "$(losses "$dir/train_a.json")" = "$(losses "$dir/train_b.json")" ] || fail "two loopback runs differ"
ranks=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["plan"]["ranks"])' "$dir/train_a.json")
timeout 120 "$mpiexec" --oversubscribe $root -np "$ranks" "$burst" run "$train_plan" --steps 4 --data "$corpus" --json >"$dir/train_mpi.json" 2>"$dir/train_mpi.err" || fail "mpirun training"
python3 - "$dir/train_a.json" "$dir/train_mpi.json" <<'PY' || fail "loopback and mpirun losses differ beyond 1e-6"
import json, sys
a, b = (json.load(open(p))["losses"] for p in sys.argv[1:3])
assert len(a) == len(b) == 4, (a, b)
assert all(abs(x - y) <= 1e-6 * abs(y) for x, y in zip(a, b)), (a, b)
PY

timeout 60 "$mpiexec" --oversubscribe $root -np 2 "$burst" run "$train_plan" --loopback --steps 1 --data "$corpus" >"$dir/nested.out" 2>"$dir/nested.err" &&
  fail "--loopback under mpirun -np 2 ran"
grep -q 'error: --loopback: runs every rank in this process, but mpirun started 2 processes' "$dir/nested.err" ||
  fail "--loopback under mpirun: message"
echo "PASS (32-rank dry run, 4-rank attention check over repeated runs, training bit-reproducible and equal to mpirun's)"
