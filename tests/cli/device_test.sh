#!/bin/sh
# `burst run --device`: where no GPU is visible (CI), --device cuda is one line on stderr that
# says why and what to do, with exit code 2, and nothing runs, for a dry run and for training
# alike; the default runs on the CPU and says why. Where a GPU is visible, the same dry run on
# cuda must pass its check instead, and three training steps on the GPU pass --check against
# the CPU's fp32 step: with the plan's model state offloaded to (page-locked) host memory, and
# with it kept in GPU memory (the same plan with offload false).
# Usage: device_test.sh BURST PLAN TRAIN_PLAN CORPUS (PLAN: a one-rank plan; TRAIN_PLAN: a small
# training plan, run on the loopback ring)
set -u
burst=$1 plan=$2 train_plan=$3 corpus=$4
err=$(mktemp) out=$(mktemp) resident=$(mktemp)
trap 'rm -f "$err" "$out" "$resident"' EXIT
fail() { echo "FAIL: $1"; echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"; exit 1; }

"$burst" run "$plan" --dry-run --device cuda >"$out" 2>"$err"
rc=$?
if grep -q '^device: cuda' "$err"; then
  [ $rc -eq 0 ] && grep -q 'check .*: passed' "$out" || fail "--device cuda on a GPU: the dry run did not pass"
  "$burst" run "$train_plan" --steps 3 --check --device cuda --loopback --data "$corpus" >"$out" 2>"$err" ||
    fail "--device cuda on a GPU: training failed"
  grep -q 'check .*passed' "$out" || fail "--device cuda on a GPU: the training step's check did not pass"
  grep -q 'state .*host memory' "$out" || fail "--device cuda, offload: the state must be on the host"
  # The chosen strategy's ZeRO block is the plan's first: its state kept in GPU memory instead.
  sed '0,/"offload": true/s//"offload": false/' "$train_plan" >"$resident"
  "$burst" run "$resident" --steps 3 --check --device cuda --loopback --data "$corpus" >"$out" 2>"$err" ||
    fail "--device cuda on a GPU, state in GPU memory: training failed"
  grep -q 'check .*passed' "$out" || fail "--device cuda, state in GPU memory: the check did not pass"
  grep -q 'state .*GPU memory' "$out" || fail "--device cuda, no offload: the state must be in GPU memory"
  echo "PASS (a GPU is visible: the cuda dry run and the cuda training steps, state offloaded and in GPU memory, passed their checks)"
  exit 0
fi
[ $rc -eq 2 ] || fail "--device cuda without a GPU: exit code $rc, want 2"
[ "$(wc -l <"$err")" -eq 1 ] || fail "--device cuda without a GPU: want exactly one line on stderr"
grep -q '^error: --device: cuda asked for, but no GPU is visible (.*hint: .*--device cpu' "$err" ||
  fail "--device cuda without a GPU: the line must say why and what to do"
[ -s "$out" ] && fail "--device cuda without a GPU: nothing may run"

"$burst" run "$train_plan" --steps 2 --device cuda --loopback --data "$corpus" >"$out" 2>"$err"
rc=$?
[ $rc -eq 2 ] || fail "training on --device cuda without a GPU: exit code $rc, want 2"
[ "$(wc -l <"$err")" -eq 1 ] || fail "training on --device cuda without a GPU: want exactly one line on stderr"
grep -q '^error: --device: cuda asked for, but no GPU is visible (.*hint: .*--device cpu' "$err" ||
  fail "training on --device cuda without a GPU: the line must say why and what to do"
[ -s "$out" ] && fail "training on --device cuda without a GPU: nothing may run"

"$burst" run "$plan" --dry-run >"$out" 2>"$err" || fail "the default device's dry run failed"
grep -q '^device: cpu (no GPU visible: ' "$err" || fail "the default must say it chose the CPU and why"
grep -q 'check .*: passed' "$out" || fail "the default device's dry run did not pass"
echo "PASS (no GPU visible: --device cuda refused in one line, the default ran on the CPU)"
