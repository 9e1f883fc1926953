#!/bin/sh
# Compile-time resource check of the CUDA kernels (no GPU needed): compiles each kernel source
# with the build's flags plus --resource-usage for every architecture, and prints, per kernel
# and architecture, the registers, the shared memory (ptxas's static bytes + the dynamic bytes
# the launcher requests, from kernel_smem), the stack frame and the spill bytes. Fails unless
# every kernel spills nothing, uses no stack (local memory), fits sm_80's 163 KiB of shared
# memory, and every kernel compiled has a launcher budget (and every budget a kernel).
# The flags include -Xptxas -warn-spills,-warn-lmem-usage,-Werror, so a spill already fails
# the compile; the table says where.
#
# Usage: kernel_resources.sh NVCC KERNEL_SMEM SOURCE_ROOT OUT_DIR "ARCHS" SOURCE... -- FLAG...
#   ARCHS: e.g. "80 90"; the table is also written to OUT_DIR/kernel_resources.txt.
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
for src in $sources; do
  name=$(basename "$src" .cu)
  echo "nvcc -std=c++20 -O3 -I$root$gencode --resource-usage -fatbin $* $src" >>"$log"
  # shellcheck disable=SC2086
  if ! "$nvcc" -std=c++20 -O3 -I"$root" $gencode --resource-usage -fatbin -o "$out/$name.fatbin" "$@" "$src" \
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
    while ((getline line < budget) > 0) { split(line, f, "\t"); dynamic[f[1]] = f[2]; used[f[1]] = 0 }
    header = sprintf("%-38s %-6s %5s %7s %8s %7s %6s %6s %6s", "kernel", "arch", "regs", "static", "dynamic",
                     "smem", "stack", "spillS", "spillL")
    print header; print header > table
  }
  /Compiling entry function/ {
    s = $0
    sub(/.*Compiling entry function \047/, "", s); arch = s; sub(/\047 for \047.*/, "", s)
    sub(/.*\047 for \047/, "", arch); sub(/\047.*/, "", arch)
    gsub(/\(anonymous namespace\)::/, "", s); sub(/^void /, "", s); sub(/\(.*/, "", s); sub(/.*::/, "", s)
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
    row = sprintf("%-38s %-6s %5d %7d %8d %7d %6d %6d %6d", kernel, arch, regs, smem, dyn, total, stack, spill_stores,
                  spill_loads)
    print row; print row > table
    if (!known) { problems = problems "\n  " kernel ": no launcher budget in kernel_smem (add it there)" }
    if (stack + spill_stores + spill_loads > 0) {
      problems = problems "\n  " kernel " (" arch "): spills or local memory"
    }
    if (total > limit) { problems = problems "\n  " kernel " (" arch "): " total " bytes of shared memory > " limit }
    rows++
  }
  END {
    for (k in used) if (!used[k]) problems = problems "\n  " k ": a launcher budget but no such kernel compiled"
    if (rows == 0) problems = problems "\n  no kernel found in the ptxas report"
    if (problems != "") { print "FAIL:" problems; exit 1 }
    print "PASS: " rows " kernels x architectures, no spills, no local memory, shared memory <= " limit " bytes"
  }'
