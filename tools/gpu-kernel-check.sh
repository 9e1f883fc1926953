#!/bin/sh
# The attention kernels' checks on a GPU, in one call (device time is scarce): needs the default
# build (cmake -S . -B build && cmake --build build) and runs, each step under a time limit:
#   1. the GPU tests (ctest -L gpu): every kernel against the CPU kernels, every mask, layout,
#      head dim and GQA ratio, the deterministic backward bit for bit, the training step;
#   2. compute-sanitizer's racecheck and memcheck over a small causal pair of each head dim,
#      forward and backward (mma.sync's two: atomic and deterministic), on every kernel path the GPU supports (burst bench attention
#      --tokens 1K --kernel-path all: every kernel runs), and synccheck over the wgmma path where
#      the GPU runs it;
#   3. the Hopper path's SASS, where cuobjdump is found: HGMMA (wgmma), UTMALDG (TMA loads);
#   4. burst bench attention --device cuda at 16K tokens, head dims 128 and 64, every mask and
#      every kernel path (a row each, each non-mma.sync forward's and backward's differences
#      from mma.sync's),
#      beside PyTorch's SDPA (FlashAttention-2) where PyTorch is installed, then grouped-query
#      attention and the deterministic backward of both head dims.
# Everything goes to $OUT (default gpu-kernel-check/), one file per step; this prints each
# step's verdict and the benchmark tables.
# Usage: tools/gpu-kernel-check.sh [BUILD_DIR], from the repository's root.
set -u
build=${1:-build}
out=${OUT:-gpu-kernel-check}
burst=$build/bin/burst
mkdir -p "$out"
failed=0

# step NAME SECONDS COMMAND...: runs it under a limit, keeps its output, says how it ended.
step() {
  name=$1 limit=$2
  shift 2
  echo "== $name: $*"
  if timeout "$limit" "$@" >"$out/$name.txt" 2>&1; then
    echo "   ok"
  else
    echo "   FAILED (exit $?), the last lines:"
    tail -n 25 "$out/$name.txt"
    failed=1
  fi
}

command -v nvidia-smi >/dev/null && nvidia-smi -L
BURST_TRACE_POOL_GROWTH=1 step gpu-tests 150 ctest --test-dir "$build" -L gpu --output-on-failure
if command -v compute-sanitizer >/dev/null; then
  for d in 64 128; do
    for tool in racecheck memcheck; do
      step "$tool-d$d" 120 compute-sanitizer --tool "$tool" --error-exitcode 9 "$burst" bench attention --device cuda \
        --tokens 1K --heads 2 --kv-heads 1 --head-dim "$d" --mask causal --repeat 1 --kernel-path all
      step "$tool-d$d-deterministic" 120 compute-sanitizer --tool "$tool" --error-exitcode 9 "$burst" bench attention \
        --device cuda --tokens 1K --heads 2 --kv-heads 1 --head-dim "$d" --mask causal --repeat 1 --deterministic
    done
  done
  # The Hopper path's mbarriers and warp-specialised branches: synccheck (barrier misuse), once.
  if [ "$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1)" = "9.0" ]; then
    step synccheck-wgmma 120 compute-sanitizer --tool synccheck --error-exitcode 9 "$burst" bench attention \
      --device cuda --tokens 1K --heads 2 --kv-heads 1 --head-dim 128 --mask causal --repeat 1 --kernel-path wgmma
  fi
  grep -h "ERROR SUMMARY" "$out"/racecheck-*.txt "$out"/memcheck-*.txt "$out"/synccheck-*.txt 2>/dev/null
else
  echo "== compute-sanitizer: not on this machine, skipped"
fi
if command -v cuobjdump >/dev/null; then
  cuobjdump -sass "$burst" >"$out/sm90-sass.txt" 2>&1  # only the Hopper path has either instruction
  echo "== Hopper path SASS: $(grep -c HGMMA "$out/sm90-sass.txt") HGMMA, $(grep -c UTMALDG "$out/sm90-sass.txt") UTMALDG"
  grep -q HGMMA "$out/sm90-sass.txt" && grep -q UTMALDG "$out/sm90-sass.txt" || failed=1
else
  echo "== Hopper path SASS: cuobjdump not found, skipped"
fi
bench() {
  name=$1
  shift
  step "$name" 150 "$burst" bench attention --device cuda "$@"
  cat "$out/$name.txt"
}
bench bench-d128 --tokens 16K --heads 16 --head-dim 128 --mask all --kernel-path all
bench bench-d64 --tokens 16K --heads 32 --head-dim 64 --mask all --kernel-path all
bench bench-gqa --tokens 8K --heads 32 --kv-heads 8 --head-dim 128 --mask causal --kernel-path all
bench bench-deterministic-d128 --tokens 16K --heads 16 --head-dim 128 --mask all --deterministic
bench bench-deterministic-d64 --tokens 16K --heads 32 --head-dim 64 --mask all --deterministic

[ $failed -eq 0 ] && echo "gpu-kernel-check: every step ran (see $out/)" || echo "gpu-kernel-check: some steps FAILED (see $out/)"
exit $failed
