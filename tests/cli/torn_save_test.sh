#!/bin/sh
# A sharded save cut short keeps the previous checkpoint, and --keep bounds what stays on disk.
# A ZeRO-3 run on 2 ranks saves after step 2; a resumed run saving after every step loses rank 0
# (SIGKILL) right after it wrote its shard of the save after step 3 (BURST_TEST_FAULT=
# die-after-shard, common/fault_point.hpp), before the set is complete. The next resume must take
# the step-2 set, say so on stderr, and continue at step 3. Then 4 steps with --save-every 1
# --keep 2 leave exactly 2 generations beside the manifest (the half-written one removed too).
# Usage: torn_save_test.sh MPIEXEC BURST PLAN DATA
set -u
mpiexec=$1 burst=$2 plan=$3 data=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { cat "$dir/out"; echo "FAIL: $1"; exit 1; }
run() {  # run ARGS...: the job's output in $dir/out, its exit code returned
  "$mpiexec" --oversubscribe --allow-run-as-root -np 2 "$burst" run "$plan" --data "$data" "$@" >"$dir/out" 2>&1
}

run --steps 2 --save "$dir/s.state" || fail "the run that saves after step 2"
BURST_TEST_FAULT=die-after-shard:0 run --steps 2 --save-every 1 --save "$dir/s.state" --resume "$dir/s.state" &&
  fail "the run whose rank 0 was killed mid-save exited 0"
echo "after the save cut short: $(ls "$dir" | tr '\n' ' ')"
run --steps 1 --resume "$dir/s.state" || fail "resuming after the save cut short"
grep -q "^resume: .*s.state: generation [0-9]* (s.state.gen[0-9]*-step2), the state after step 2," "$dir/out" || fail "the resume must name the set it took (step 2)"
grep -q '^step    3/3' "$dir/out" || fail "the resumed run must continue at step 3"
cat "$dir/out"

run --steps 4 --save-every 1 --keep 2 --save "$dir/s.state" --resume "$dir/s.state" || fail "4 steps with --keep 2"
generations=$(ls -d "$dir"/s.state.gen* | wc -l)
echo "after --keep 2: $(ls "$dir" | tr '\n' ' ')"
[ "$generations" -eq 2 ] || fail "$generations generations on disk after --keep 2"
run --steps 1 --resume "$dir/s.state" || fail "resuming the newest of the kept sets"
grep -q "^resume: .*the state after step 6," "$dir/out" || fail "the resume must take the newest set (step 6)"
echo "PASS: the save cut short left the step-2 set resumable; --keep 2 left $generations generations"
