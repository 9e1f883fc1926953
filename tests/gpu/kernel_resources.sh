#!/bin/sh
# Compile-time resource check of the CUDA kernels (no GPU needed): compiles each kernel source
# with the build's flags plus --resource-usage for every architecture, and prints, per kernel
# and architecture, the registers, the shared memory (ptxas's static bytes + the dynamic bytes
# the launcher requests, from kernel_smem), the stack frame, the spill bytes and, for kernels of
# a fixed block size, the blocks that fit one multiprocessor and the theoretical occupancy they
# imply. Fails unless every kernel spills nothing, uses no stack (local memory), fits sm_80's
# 163 KiB of shared memory, keeps at least its floor of resident blocks (kernel_smem_main.cpp
# states each), every kernel that rebalances registers with setmaxnreg (the Hopper path) is
# launched with exactly the registers its budget is drawn from, and every kernel compiled has a
# launcher budget (and every budget a kernel).
#
# Resident blocks, as CUDA's occupancy calculator counts them, per architecture (A100's sm_80:
# 64K registers, 164 KiB of shared memory, 64 warps, 32 blocks per SM; H100's sm_90: the same but
# 228 KiB; sm_86/sm_89: 100 KiB and 48 warps): the fewest of
#   registers     floor(65536 / (32 * regs rounded up to 8, rounded up to 256 a warp)) warps,
#                 in whole blocks
#   shared memory floor(SM bytes / (block bytes + 1 KiB the runtime reserves per block))
#   warps         max warps / warps a block;   blocks  32 (sm_86/89: 16 and 24)
# The flags include -Xptxas -warn-spills,-warn-lmem-usage,-Werror, so a spill already fails
# the compile; the table says where.
#
# Usage: kernel_resources.sh NVCC KERNEL_SMEM SOURCE_ROOT OUT_DIR "ARCHS" SOURCE... -- FLAG...
#   ARCHS: e.g. "80 90"; the table is also written to OUT_DIR/kernel_resources.txt. A SOURCE
#   written path@ARCH (flash_forward_sm90.cu@90a) compiles for that architecture alone.
set -u
nvcc=$1 budget_tool=$2 root=$3 out=$4 archs=$5
shift 5
sources=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do sources="$sources $1"; shift; done
[ $# -gt 0 ] && shift  # the flags follow "--"
command -v c++filt >/dev/null || { echo "FAIL: c++filt (binutils) is needed to name the kernels"; exit 1; }
mkdir -p "$out"
gencode=""
for a in $archs; do gencode="$gencode -gencode arch=compute_$a,code=sm_$a"; done

log="$out/ptxas.log"
: >"$log"
for spec in $sources; do
  src=$spec codes=$gencode
  case ${spec##*/} in  # the file name only: a folder may hold an @ (a CI workspace "ws@2")
    *@*) src=${spec%@*} codes="-gencode arch=compute_${spec##*@},code=sm_${spec##*@}" ;;
  esac
  name=$(basename "$src" .cu)
  echo "nvcc -std=c++20 -O3 -I$root $codes --resource-usage -fatbin $* $src" >>"$log"
  # shellcheck disable=SC2086
  if ! "$nvcc" -std=c++20 -O3 -I"$root" $codes --resource-usage -fatbin -o "$out/$name.fatbin" "$@" "$src" \
      >>"$log" 2>&1; then
    cat "$log"
    echo "FAIL: $src does not compile with the kernel flags (a spill or local memory is an error)"
    exit 1
  fi
done

"$budget_tool" >"$out/budget.txt" || { echo "FAIL: $budget_tool"; exit 1; }
limit=$((163 * 1024))
c++filt <"$log" | awk -F'\t' -v limit="$limit" -v budget="$out/budget.txt" -v table="$out/kernel_resources.txt" '
  BEGIN {
    while ((getline line < budget) > 0) {
      split(line, f, "\t"); dynamic[f[1]] = f[2]; threads[f[1]] = f[3]; floor_of[f[1]] = f[4]; floor_80[f[1]] = f[5]
      launch_regs[f[1]] = f[6]
      used[f[1]] = 0
    }
    header = sprintf("%-64s %-6s %5s %7s %8s %7s %6s %6s %6s %7s %6s %5s", "kernel", "arch", "regs", "static",
                     "dynamic", "smem", "stack", "spillS", "spillL", "blocks", "occup", "floor")
    print header; print header > table
  }
  /Compiling entry function/ {
    s = $0
    sub(/.*Compiling entry function \047/, "", s); arch = s; sub(/\047 for \047.*/, "", s)
    sub(/.*\047 for \047/, "", arch); sub(/\047.*/, "", arch)
    gsub(/\(anonymous namespace\)::/, "", s); gsub(/burst::rt::gpu::/, "", s); sub(/^void /, "", s); sub(/\(.*/, "", s)
    sub(/^[A-Za-z_:]*::/, "", s)
    kernel = s
  }
  /bytes stack frame/ {
    split($0, w, " "); stack = w[1]; spill_stores = w[5]; spill_loads = w[9]
  }
  /Used [0-9]+ registers/ {
    regs = $0; sub(/.*Used /, "", regs); sub(/ registers.*/, "", regs)
    smem = 0
    if (match($0, /[0-9]+ bytes smem/)) { smem = substr($0, RSTART, RLENGTH); sub(/ .*/, "", smem) }
    known = (kernel in dynamic)
    dyn = known ? dynamic[kernel] : 0
    if (known) used[kernel] = 1
    total = smem + dyn
    blocks = "-"; occupancy = "-"; floor_shown = "-"
    if (known && threads[kernel] > 0) {
      sm = arch; sub(/sm_/, "", sm); sub(/[^0-9].*/, "", sm)
      sm_smem = 167936; max_warps = 64; max_blocks = 32
      if (sm >= 90) sm_smem = 233472
      if (sm == 86 || sm == 87 || sm == 89) { sm_smem = 102400; max_warps = 48; max_blocks = (sm == 89 ? 24 : 16) }
      warps = threads[kernel] / 32
      r = int((regs + 7) / 8) * 8
      warp_regs = int((32 * r + 255) / 256) * 256
      by_regs = int(int(65536 / warp_regs) / warps)
      by_smem = int(sm_smem / (total + 1024))
      by_warps = int(max_warps / warps)
      b = by_regs; if (by_smem < b) b = by_smem; if (by_warps < b) b = by_warps; if (max_blocks < b) b = max_blocks
      want = (sm >= 90) ? floor_of[kernel] : floor_80[kernel]
      blocks = b; occupancy = sprintf("%.1f%%", 100 * b * warps / max_warps); floor_shown = want
      if (b < want) {
        problems = problems "\n  " kernel " (" arch "): " b " resident block(s) of " warps " warps per SM (registers " \
                   by_regs ", shared memory " by_smem "), below its floor of " want
      }
    }
    row = sprintf("%-64s %-6s %5d %7d %8d %7d %6d %6d %6d %7s %6s %5s", kernel, arch, regs, smem, dyn, total, stack,
                  spill_stores, spill_loads, blocks, occupancy, floor_shown)
    print row; print row > table
    if (!known) { problems = problems "\n  " kernel ": no launcher budget in kernel_smem (add it there)" }
    if (stack + spill_stores + spill_loads > 0) {
      problems = problems "\n  " kernel " (" arch "): spills or local memory"
    }
    if (total > limit) { problems = problems "\n  " kernel " (" arch "): " total " bytes of shared memory > " limit }
    if (known && launch_regs[kernel] > 0 && regs != launch_regs[kernel]) {
      problems = problems "\n  " kernel " (" arch "): " regs " registers a thread at launch, not the " \
                 launch_regs[kernel] " its setmaxnreg budget is drawn from"
    }
    rows++
  }
  END {
    for (k in used) if (!used[k]) problems = problems "\n  " k ": a launcher budget but no such kernel compiled"
    if (rows == 0) problems = problems "\n  no kernel found in the ptxas report"
    if (problems != "") { print "FAIL:" problems; exit 1 }
    print "PASS: " rows " kernels x architectures, no spills, no local memory, shared memory <= " limit \
          " bytes, resident blocks at or above each floor, setmaxnreg kernels at their launch registers"
  }'
