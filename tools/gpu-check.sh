#!/bin/sh
# Every check of the GPU training step in one run, for the first minutes a machine with a GPU is
# lent (device time is scarce: one prepared script, one call of at most 10 minutes). Needs the
# default build already made (cmake -S . -B build && cmake --build build) and runs, each step
# with a time limit of 150 s, the trainings first:
#   1. 30 training steps with --check on the loopback (every rank a thread on GPU 0) of the
#      2-rank head-dim-64 test plan (ZeRO 3): its model state offloaded to page-locked host
#      memory (the plan as written), kept in GPU memory (offload false), in GPU memory with the
#      LM head in 4 chunks, and in GPU memory at ZeRO 1 (the deferred gathers of the updated
#      parameters);
#   2. the same 30 steps of a 3-rank plan the planner makes for the same model (state in GPU
#      memory; its units do not divide by 3: the padded gathers);
#   3. the GPU tests (ctest -L gpu): every kernel and CudaStepKernels call against the CPU, the
#      whole GPU step against the CPU step, the device optimizer against the CPU's AdamW;
#   4. perf (below): a 430M Llama-style model's step at 8K and 32K tokens on one GPU and on 2 and
#      4 loopback ranks, beside PyTorch.
# A plan edited to keep its state in GPU memory keeps the prediction made for the offloaded
# state (the planner is not rerun), so its optimizer item is predicted 0: compare that item with
# the 2 + 4 + 12 bytes a parameter docs/runtime-training.md gives.
# Each run prints the loss curve's ends, the check (per-tensor errors in the JSON), each memory
# item measured beside the plan's prediction with the ratio and, past 10%, the known reason, the
# step time beside the predicted one, and the ZeRO section. Everything goes to $OUT/<name>.txt;
# this prints each step's verdict and each run's report.
# Usage: tools/gpu-check.sh [BUILD_DIR], from the repository's root. DEVICE=cpu runs the same
# steps on the CPU, without the GPU tests, and STEPS=n trains n steps: CI checks this script so
# (burst_gpu_check_script), where no GPU is visible.
set -u
build=${1:-build}
out=${OUT:-gpu-check}
device=${DEVICE:-cuda}
steps=${STEPS:-30}
burst=$build/bin/burst
plan=tests/data/run/local-1x2-tiny-train-hd64-256.json
model=tests/data/models/tiny-train-hd64.json
corpus=tests/data/corpus
mkdir -p "$out"
failed=0

# step NAME COMMAND...: runs it (150 s at most), keeps its output, says how it ended.
step() {
  name=$1
  shift
  echo "== $name: $*"
  if timeout 150 "$@" >"$out/$name.txt" 2>&1; then
    echo "   ok"
  else
    echo "   FAILED (exit $?), the last lines:"
    tail -n 20 "$out/$name.txt"
    failed=1
  fi
}

# train NAME PLAN WHERE: $steps steps with --check on the loopback; prints the run's report and
# checks that the model state lived WHERE ("GPU memory" or "host memory"; the CPU's is host).
train() {
  step "$1" "$burst" run "$2" --steps "$steps" --check --device "$device" --loopback --data "$corpus"
  sed -n '/ ranks: /,$p' "$out/$1.txt"
  where=$3
  [ "$device" = cpu ] && where="host memory"
  grep -q "state .*$where" "$out/$1.txt" || { echo "   FAILED: the model state was not in $where"; failed=1; }
}

command -v nvidia-smi >/dev/null && nvidia-smi -L

# The chosen strategy's blocks come first in a plan file: the first offload, chunks and stage
# are its own (train checks where the state then lived).
sed '0,/"offload": true/s//"offload": false/' "$plan" >"$out/resident.plan.json"
sed '0,/"chunks": 1/s//"chunks": 4/' "$out/resident.plan.json" >"$out/chunked.plan.json"
sed '0,/"stage": 3/s//"stage": 1/' "$out/resident.plan.json" >"$out/stage1.plan.json"
train offloaded "$plan" "host memory"
train resident "$out/resident.plan.json" "GPU memory"
train chunked "$out/chunked.plan.json" "GPU memory"
train stage1 "$out/stage1.plan.json" "GPU memory"
echo "== LM head workspace, whole vs 4 chunks (per rank, GPU layout):"
grep -h '^ *lm_head ' "$out/resident.txt" "$out/chunked.txt"

step plan3 "$burst" plan --topology local --nodes 1 --per-node 3 --model "$model" --seq 384 \
  --memory-budget 2GiB --strategy burst -o "$out/p3.json"
sed 's/"offload": true/"offload": false/' "$out/p3.json" >"$out/p3-resident.json"
train three-ranks "$out/p3-resident.json" "GPU memory"

[ "$device" = cuda ] && step gpu-tests ctest --test-dir "$build" -L gpu --output-on-failure

# 4. perf: the training step's speed beside PyTorch (tools/bench/torch_step.py: the same model,
#    bf16 weights with fp32 AdamW state, scaled_dot_product_attention, CUDA events), one row per
#    (ranks, tokens): burst's median step and tokens/s on P loopback ranks sharing the GPU, the
#    model FLOP utilisation (6 T x matrix parameters + 6 L H d T (T + 1) for causal attention,
#    torch_step.py's convention, over PEAK_TFLOPS: 989 for an H100 or H200 SXM's dense bf16),
#    the plan's predicted step, and what a warm step moved
#    between host and device (burst run's traffic line). PERF=0 skips it; CI runs it on the CPU
#    with PERF_MODEL=tests/data/models/tiny-train-hd64.json PERF_TOKENS=256 PERF_RANKS=2.
if [ "${PERF:-1}" = 1 ]; then
  perf_model=${PERF_MODEL:-tools/bench/llama-430m.json}
  perf_tokens=${PERF_TOKENS:-"8192 32768"}
  perf_ranks=${PERF_RANKS:-"2 4"}
  perf_steps=${PERF_STEPS:-6}
  peak=${PEAK_TFLOPS:-989}
  first_tokens=${perf_tokens%% *}
  rows="$out/perf-rows.txt"
  : >"$rows"
  # perf_row RANKS TOKENS: plans the model on RANKS ranks of this machine, trains it (state in
  # device memory), and appends a row; the torch reference for one rank.
  perf_row() {
    p=$1 t=$2 run=perf-$1x$2  # (step sets $name)
    step "$run-plan" "$burst" plan --topology local --nodes 1 --per-node "$p" --model "$perf_model" --seq "$t" \
      --memory-budget 75GiB --strategy burst -o "$out/$run.json"
    [ -f "$out/$run.json" ] || return
    sed -i 's/"offload": true/"offload": false/' "$out/$run.json"
    step "$run" "$burst" run "$out/$run.json" --steps "$perf_steps" --device "$device" --loopback --data "$corpus" --json
    grep -q '^{' "$out/$run.txt" || return
    torch=""
    if [ "$p" = 1 ] && [ "$device" = cuda ]; then
      torch=$(timeout 300 python3 tools/bench/torch_step.py --model "$perf_model" --tokens "$t" --steps "$perf_steps" \
        --peak-tflops "$peak" 2>/dev/null | tail -n 1)
    fi
    python3 - "$out/$run.txt" "$p" "$t" "$peak" "$torch" >>"$rows" <<'PY'
import json, sys
text, p, t, peak, torch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
lines = open(text).read().split("\n")
r = json.loads("\n".join(lines[lines.index("{"):]))
m = r["run"]["model"]
n, steps = r["run"]["parameters"], sorted(r["step_time_s"][1:] or r["step_time_s"])
step = steps[len(steps) // 2]
# torch_step.py's convention (burst's simulator's): 6 T x the matrix parameters (not the
# embedding lookup nor the norm gains) + 6 L H d T (T + 1) for causal attention.
matmul = n - m["vocab"] * m["hidden"] - (2 * m["layers"] + 1) * m["hidden"]
flops = 6 * t * matmul + 6 * m["layers"] * m["heads"] * m["head_dim"] * t * (t + 1)
later = r["device_traffic"].get("later_steps_max", r["device_traffic"]["first_step"])
row = f"{p:>5} {t:>7} {step:>9.3f} {t / step:>10.0f} {100 * flops / step / (peak * 1e12):>6.1f}% " \
      f"{r['predicted']['step_time_s']:>10.3f}   h2d {later['host_to_device_bytes']} B, d2h {later['device_to_host_bytes']} B, " \
      f"waits {later['host_waits']}, syncs {later['device_synchronizations']}, allocs {later['driver_allocations']}"
try:
    tr = json.loads(torch)
    row += f" | torch {tr['step_s_median']:.3f} s {tr['tokens_per_s']:.0f} tok/s mfu {100 * tr.get('mfu', 0):.1f}% " \
           f"({tr['parameters']} params vs burst {n})" if "unavailable" not in tr else f" | torch: {tr['unavailable']}"
except (ValueError, KeyError):
    row += " | torch: no JSON from tools/bench/torch_step.py" if torch else " | torch: not run (one-rank rows on cuda)"
print(row)
PY
  }
  for t in $perf_tokens; do perf_row 1 "$t"; done
  for p in $perf_ranks; do perf_row "$p" $((first_tokens * p)); done
  echo "== perf: ranks tokens step_s tokens/s MFU predicted_s | warm step's host/device traffic | PyTorch"
  cat "$rows"
fi

[ $failed -eq 0 ] && echo "gpu-check: every step ran (see $out/)" || echo "gpu-check: some steps FAILED (see $out/)"
exit $failed
