#!/bin/sh
# A ZeRO-sharded training state saved by 4 ranks resumes on 2: each rank of the new job reads
# every shard and takes its own range, and the loss curve goes on where it stopped. Step 3 of
# (2 steps on 4 ranks, saved, then 1 step on 2 ranks) must equal step 3 of an unbroken 2-rank
# run within 1e-4 relative (the ranks sum the gradients in another order, nothing else differs).
# Usage: reshard_test.sh MPIEXEC BURST PLAN_4_RANKS PLAN_2_RANKS DATA
set -u
mpiexec=$1 burst=$2 plan4=$3 plan2=$4 data=$5
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run() {  # run NP PLAN ARGS...: the job's output in $dir/out, its exit code returned
  np=$1 plan=$2
  shift 2
  "$mpiexec" --oversubscribe --allow-run-as-root -np "$np" "$burst" run "$plan" --data "$data" "$@" >"$dir/out" 2>&1
}
loss_at_step_3() { awk '$1 == "step" && $2 ~ /^3\// { print $4 }' "$dir/out"; }

run 4 "$plan4" --steps 2 --save "$dir/state" || { cat "$dir/out"; echo "FAIL: the 4-rank run that saves"; exit 1; }
ls "$dir"/state* >/dev/null || { echo "FAIL: no state written"; exit 1; }
run 2 "$plan2" --steps 1 --resume "$dir/state" || { cat "$dir/out"; echo "FAIL: resuming on 2 ranks"; exit 1; }
cat "$dir/out"
resumed=$(loss_at_step_3)
run 2 "$plan2" --steps 3 || { cat "$dir/out"; echo "FAIL: the unbroken 2-rank run"; exit 1; }
unbroken=$(loss_at_step_3)
[ -n "$resumed" ] && [ -n "$unbroken" ] || { echo "FAIL: no step-3 loss (resumed '$resumed', unbroken '$unbroken')"; exit 1; }
awk -v a="$resumed" -v b="$unbroken" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-4 * b) }' ||
  { echo "FAIL: step 3 loss $resumed after resuming on 2 ranks, $unbroken unbroken"; exit 1; }
echo "PASS: saved on 4 ranks, resumed on 2: step 3 loss $resumed, unbroken $unbroken"
