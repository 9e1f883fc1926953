#!/bin/sh
# The attention kernels are the Ampere path: compiles each kernel source to PTX for compute_80
# with the build's flags and requires in every source listed the bf16 tensor-core instruction
# mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32, ldmatrix, and cp.async with its
# commit/wait groups (the tiles' copy pipeline); prints how many of each it has.
# Usage: kernel_ptx.sh NVCC SOURCE_ROOT OUT_DIR SOURCE... -- FLAG...
set -u
nvcc=$1 root=$2 out=$3
shift 3
sources=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do sources="$sources $1"; shift; done
[ $# -gt 0 ] && shift
mkdir -p "$out"
mma='mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32'
status=0
for src in $sources; do
  name=$(basename "$src" .cu)
  if ! "$nvcc" -std=c++20 -O3 -I"$root" -arch=compute_80 -ptx -o "$out/$name.ptx" "$@" "$src"; then
    echo "FAIL: $src does not compile to PTX"
    exit 1
  fi
  n_mma=$(grep -c "$mma" "$out/$name.ptx")
  n_ldmatrix=$(grep -c 'ldmatrix.sync.aligned.m8n8.x4' "$out/$name.ptx")
  n_cp_async=$(grep -c 'cp.async.c[ag].shared.global' "$out/$name.ptx")
  n_wait=$(grep -c 'cp.async.wait_group' "$out/$name.ptx")
  echo "$name.cu (compute_80): $n_mma x $mma, $n_ldmatrix x ldmatrix.x4, $n_cp_async x cp.async, $n_wait x cp.async.wait_group"
  [ "$n_mma" -gt 0 ] || { echo "FAIL: no $mma in $name.ptx"; status=1; }
  [ "$n_ldmatrix" -gt 0 ] || { echo "FAIL: no ldmatrix in $name.ptx"; status=1; }
  [ "$n_cp_async" -gt 0 ] && [ "$n_wait" -gt 0 ] || { echo "FAIL: no cp.async pipeline in $name.ptx"; status=1; }
done
[ $status -eq 0 ] && echo "PASS: every listed kernel source issues $mma, ldmatrix and cp.async"
exit $status
