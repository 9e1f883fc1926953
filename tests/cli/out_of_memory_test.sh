#!/bin/sh
# An allocation that fails (std::bad_alloc) gets a hint that fits the command: `topo show` and
# `explain` talk about the topology and the plan file, never about a run's tokens per rank.
# Each reads a 60 MB file (a topology or a plan whose one string is 60 MB: within the readers'
# caps) under an address-space limit 100 MB above what the command needs for a small input, found
# here first, so the test holds on any machine (a build with CUDA maps about 1 GB of libraries at
# start: 960 MB of address space here).
# Every probe must end within 60 s: `topo show` once hung at exit under a limit, joining the
# worker OpenBLAS started at load, whose buffer allocation had failed (tools/burst/main.cpp now
# ends the process without the libraries' exit handlers, and OpenBLAS is opened only by a
# command that runs a CPU kernel, runtime/kernels/blas.hpp). OPENBLAS_NUM_THREADS is unset.
# Usage: out_of_memory_test.sh BURST
set -u
burst=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
unset OPENBLAS_NUM_THREADS
fail() { cat "$dir/err"; echo "FAIL: $1"; exit 1; }

base=
for kib in 40000 60000 80000 120000 160000 240000 320000 480000 640000 960000 1280000 1920000 2560000 3840000; do
  (ulimit -v $kib && exec timeout 60 "$burst" topo show a800-4hca) >/dev/null 2>"$dir/err"
  rc=$?
  [ $rc -eq 124 ] && fail "topo show hung under ulimit -v $kib (60 s)"
  if [ $rc -eq 0 ]; then base=$kib; break; fi
done
[ -n "$base" ] || { echo "FAIL: topo show needs more than 3840 MB of address space"; exit 1; }
limit=$((base + 100000))
echo "topo show runs in $base KiB; the large inputs get $limit KiB"

big() {  # big PREFIX SUFFIX: PREFIX, 60 MB of 'x', SUFFIX
  printf '%s' "$1"
  head -c 60000000 /dev/zero | tr '\0' x
  printf '%s' "$2"
}
big '{"schema": "burst.topology/1", "name": "' '"}' >"$dir/topology.json"
big '{"schema": "burst.plan/1", "meta": {"generator": "' '"}}' >"$dir/plan.json"

(ulimit -v $limit && exec timeout 60 "$burst" topo show "$dir/topology.json") >/dev/null 2>"$dir/err" && fail "topo show read a 60 MB name in $limit KiB"
grep -q "^out of memory: the topology needs more memory than this machine gives (hint: fewer --nodes" "$dir/err" ||
  fail "topo show: not the topology's out-of-memory hint"
grep -q "tokens per rank" "$dir/err" && fail "topo show talks of tokens per rank"

(ulimit -v $limit && exec timeout 60 "$burst" explain "$dir/plan.json") >/dev/null 2>"$dir/err" && fail "explain read a 60 MB plan in $limit KiB"
grep -q "^out of memory: reading the plan needs more memory than this machine gives" "$dir/err" ||
  fail "explain: not the plan file's out-of-memory hint"
grep -q "tokens per rank" "$dir/err" && fail "explain talks of tokens per rank"
echo "PASS: topo show and explain out of memory, each with its own hint"
