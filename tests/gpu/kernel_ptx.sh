#!/bin/sh
# The attention kernels' instructions, per kernel path (runtime/cuda/kernel_path.hpp): compiles
# each kernel source to PTX with the build's flags and prints how many of each it has.
#   Ampere path (compute_80): the bf16 tensor-core instruction
#     mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32, ldmatrix, and cp.async with its
#     commit/wait groups (the tiles' copy pipeline)
#   Hopper path (a SOURCE written path@90a, compute_90a): wgmma.mma_async with its fence,
#     commit and wait, TMA (cp.async.bulk.tensor) completing on mbarriers, and setmaxnreg (the
#     producer and consumer warpgroups' registers)
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
count() { grep -c "$1" "$2"; }
require() {  # require NAME COUNT FILE
  [ "$2" -gt 0 ] || { echo "FAIL: no $1 in $3"; status=1; }
}
for spec in $sources; do
  src=$spec arch=80
  case ${spec##*/} in  # the file name only: a folder may hold an @ (a CI workspace "ws@2")
    *@*) src=${spec%@*} arch=${spec##*@} ;;
  esac
  name=$(basename "$src" .cu)
  ptx="$out/$name.ptx"
  if ! "$nvcc" -std=c++20 -O3 -I"$root" -arch=compute_$arch -ptx -o "$ptx" "$@" "$src"; then
    echo "FAIL: $src does not compile to PTX"
    exit 1
  fi
  if [ "$arch" = 80 ]; then
    n_mma=$(count "$mma" "$ptx") n_ldmatrix=$(count 'ldmatrix.sync.aligned.m8n8.x4' "$ptx")
    n_cp_async=$(count 'cp.async.c[ag].shared.global' "$ptx") n_wait=$(count 'cp.async.wait_group' "$ptx")
    echo "$name.cu (compute_80): $n_mma x $mma, $n_ldmatrix x ldmatrix.x4, $n_cp_async x cp.async, $n_wait x cp.async.wait_group"
    require "$mma" "$n_mma" "$ptx"
    require ldmatrix "$n_ldmatrix" "$ptx"
    require cp.async "$n_cp_async" "$ptx"
    require cp.async.wait_group "$n_wait" "$ptx"
  else
    n_wgmma=$(count 'wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16' "$ptx")
    n_group=$(count 'wgmma.commit_group.sync.aligned' "$ptx") n_gwait=$(count 'wgmma.wait_group.sync.aligned' "$ptx")
    n_tma=$(count 'cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes' "$ptx")
    n_mbar=$(count 'mbarrier.try_wait.parity' "$ptx") n_reg=$(count 'setmaxnreg' "$ptx")
    echo "$name.cu (compute_$arch): $n_wgmma x wgmma m64n64k16 bf16, $n_group x wgmma.commit_group, $n_gwait x wgmma.wait_group, $n_tma x TMA 3-d loads, $n_mbar x mbarrier.try_wait, $n_reg x setmaxnreg"
    require wgmma.mma_async "$n_wgmma" "$ptx"
    require wgmma.commit_group "$n_group" "$ptx"
    require wgmma.wait_group "$n_gwait" "$ptx"
    require "cp.async.bulk.tensor (TMA)" "$n_tma" "$ptx"
    require mbarrier.try_wait "$n_mbar" "$ptx"
    require setmaxnreg "$n_reg" "$ptx"
  fi
done
[ $status -eq 0 ] && echo "PASS: every Ampere-path source issues $mma, ldmatrix and cp.async; every Hopper-path source wgmma, TMA and mbarriers"
exit $status
