#!/bin/sh
# Every check of the GPU training step in one run, for the first minutes a machine with a GPU is
# lent (device time is scarce: one prepared script, one call of at most 10 minutes). Needs the
# default build already made (cmake -S . -B build && cmake --build build) and runs, each step
# with a time limit of 150 s, the trainings first:
#   1. 30 training steps with --check on the loopback (every rank a thread on GPU 0) of the
#      2-rank head-dim-64 test plan (ZeRO 3): its model state offloaded to page-locked host
#      memory (the plan as written), kept in GPU memory (offload false), in GPU memory with the
#      LM head in 4 chunks, and in GPU memory at ZeRO 1 (the deferred gathers of the updated
#      parameters); on a Hopper GPU (where auto runs the Hopper kernels), the GPU-memory run again
#      on the mma.sync kernels, forward and backward (--kernel-path mma.sync);
#   2. the same 30 steps of a 3-rank plan the planner makes for the same model (state in GPU
#      memory; its units do not divide by 3: the padded gathers), and of a 4-rank plan with
#      tensor parallelism of 2 (the model with 2 KV heads; state offloaded, and in GPU memory), and of a 2-rank plan that is one tensor-parallel group: the sequence-parallel
#      collectives on each group's loopback sub-job, bf16 sums on the device;
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

# train NAME PLAN WHERE [OPTION...]: $steps steps with --check on the loopback (and the options);
# prints the run's report and checks that the model state lived WHERE ("GPU memory" or "host
# memory"; the CPU's is host).
train() {
  name=$1 plan_file=$2 where=$3
  shift 3
  step "$name" "$burst" run "$plan_file" --steps "$steps" --check --device "$device" --loopback --data "$corpus" "$@"
  sed -n '/ ranks: /,$p' "$out/$name.txt"
  [ "$device" = cpu ] && where="host memory"
  grep -q "state .*$where" "$out/$name.txt" || { echo "   FAILED: the model state was not in $where"; failed=1; }
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
# On a Hopper GPU, where auto runs the Hopper kernels, the resident plan again on the mma.sync
# kernels (runtime/cuda/kernel_path.hpp).
if [ "$device" = cuda ] && nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 |
  grep -q '^9\.'; then
  train resident-mma-sync "$out/resident.plan.json" "GPU memory" --kernel-path mma.sync
fi
echo "== LM head workspace, whole vs 4 chunks (per rank, GPU layout):"
grep -h '^ *lm_head ' "$out/resident.txt" "$out/chunked.txt"

step plan3 "$burst" plan --topology local --nodes 1 --per-node 3 --model "$model" --seq 384 \
  --memory-budget 4GiB --strategy burst -o "$out/p3.json"
sed 's/"offload": true/"offload": false/' "$out/p3.json" >"$out/p3-resident.json"
train three-ranks "$out/p3-resident.json" "GPU memory"

sed 's/"num_key_value_heads": 1/"num_key_value_heads": 2/' "$model" >"$out/tp-model.json"
step plan-tp "$burst" plan --topology local --nodes 1 --per-node 4 --model "$out/tp-model.json" --seq 512 \
  --memory-budget 2GiB --strategy burst --tp 2 -o "$out/tp.json"
# The plan's state offloaded whatever the planner chose (on a GPU with room it keeps it resident).
sed '0,/"offload": false/s//"offload": true/' "$out/tp.json" >"$out/tp-offloaded.json"
sed 's/"offload": true/"offload": false/' "$out/tp.json" >"$out/tp-resident.json"
train tp2 "$out/tp-offloaded.json" "host memory"
train tp2-resident "$out/tp-resident.json" "GPU memory"
# The whole job one tensor-parallel group (2 ranks, tp 2): its collectives on a sub-job too.
step plan-tp-whole "$burst" plan --topology local --nodes 1 --per-node 2 --model "$out/tp-model.json" --seq 512 \
  --memory-budget 2GiB --strategy burst --tp 2 -o "$out/tp-whole.json"
sed 's/"offload": true/"offload": false/' "$out/tp-whole.json" >"$out/tp-whole-resident.json"
train tp2-whole "$out/tp-whole-resident.json" "GPU memory"

[ "$device" = cuda ] && step gpu-tests ctest --test-dir "$build" -L gpu --output-on-failure

# 4. perf: the training step's speed beside PyTorch (burst bench training --device: each row
#    planned on P ranks of this machine and trained on P loopback ranks sharing the GPU, beside
#    tools/bench/torch_step.py, the same model in PyTorch, for the one-rank rows): a 430M
#    Llama-style model at 8K and 32K tokens on one rank and at 8K a rank on 2 and 4 ranks; step
#    time, tokens/s, MFU, the loopback's scaling, the plan's predicted step and a warm step's
#    host/device traffic. PERF=0 skips it; CI runs it on the CPU with PERF_MODEL=tests/data/
#    models/tiny-train-hd64.json PERF_TOKENS=256 PERF_RANKS=2.
if [ "${PERF:-1}" = 1 ]; then
  step perf "$burst" bench training --device "$device" --model "${PERF_MODEL:-tools/bench/llama-430m.json}" \
    --tokens "${PERF_TOKENS:-8K,32K}" --ranks "${PERF_RANKS:-2,4}" --steps "${PERF_STEPS:-6}" --data "$corpus"
  cat "$out/perf.txt"
  if grep -q ' failed: ' "$out/perf.txt"; then echo "   FAILED: a perf row did not run"; failed=1; fi
fi

[ $failed -eq 0 ] && echo "gpu-check: every step ran (see $out/)" || echo "gpu-check: some steps FAILED (see $out/)"
exit $failed
