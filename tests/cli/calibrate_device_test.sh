#!/bin/sh
# `burst calibrate --device`: where no GPU is visible (CI), --device cuda is one line on stderr
# that says why and what to do, with exit code 2, and no file is written; the default
# calibrates the CPU ranks and says why. Where a GPU is visible, a quick cuda calibration must
# write the GPU model's file instead.
# Usage: calibrate_device_test.sh BURST
set -u
burst=$1
dir=$(mktemp -d) err=$(mktemp) out=$(mktemp)
trap 'rm -rf "$dir" "$err" "$out"' EXIT
fail() { echo "FAIL: $1"; echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"; exit 1; }

"$burst" calibrate --quick --device cuda -o "$dir/gpu.json" >"$out" 2>"$err"
rc=$?
if grep -q '^device: cuda' "$err"; then
  [ $rc -eq 0 ] && grep -q '"gpu"' "$dir/gpu.json" || fail "--device cuda on a GPU: no calibration written"
  echo "PASS (a GPU is visible: the quick cuda calibration wrote its file)"
  exit 0
fi
[ $rc -eq 2 ] || fail "--device cuda without a GPU: exit code $rc, want 2"
[ "$(wc -l <"$err")" -eq 1 ] || fail "--device cuda without a GPU: want exactly one line on stderr"
grep -q '^error: --device: cuda asked for, but no GPU is visible (.*hint: .*--device cpu' "$err" ||
  fail "--device cuda without a GPU: the line must say why and what to do"
[ -e "$dir/gpu.json" ] && fail "--device cuda without a GPU: nothing may be written"

"$burst" calibrate --quick -o "$dir/cpu.json" >"$out" 2>"$err" || fail "the default device's calibration failed"
grep -q '^device: cpu (no GPU visible: ' "$err" || fail "the default must say it chose the CPU and why"
grep -q '"gpu": "cpu-rank"' "$dir/cpu.json" || fail "the default device's file has no cpu-rank curves"
echo "PASS (no GPU visible: --device cuda refused in one line, the default calibrated the CPU)"
