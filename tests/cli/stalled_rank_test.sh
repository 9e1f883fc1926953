#!/bin/sh
# A rank that stalls before the run starts ends the job at --timeout with burst's message. Rank 1
# is made to stall for 40 s after preparing, before the readiness all-reduce
# (BURST_TEST_FAULT=stall-before-ready, common/fault_point.hpp); rank 0's all-reduce must time
# out after --timeout 5 s and end the job (MPI_Abort) with "allreduce did not complete within
# 5 s", well before the stall ends: not free its communicator with the all-reduce pending and
# wait in MPI_Finalize for ever, nor crash inside OpenMPI once rank 1 resumes. Under `timeout 60`,
# so a hang fails the test. Usage: stalled_rank_test.sh MPIEXEC BURST PLAN DATA
set -u
mpiexec=$1 burst=$2 plan=$3 data=$4
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { cat "$out"; echo "FAIL: $1"; exit 1; }
start=$(date +%s)
BURST_TEST_FAULT=stall-before-ready:1:40 timeout 60 "$mpiexec" --oversubscribe --allow-run-as-root -np 2 \
  "$burst" run "$plan" --steps 1 --data "$data" --timeout 5 >"$out" 2>&1
code=$?
elapsed=$(($(date +%s) - start))
[ "$code" -ne 124 ] || fail "the job still ran after 60 s (a hang)"
[ "$code" -ne 0 ] || fail "the job exited 0 with a stalled rank"
grep -q "rank 0: .*allreduce did not complete within 5 s" "$out" || fail "no timeout message from rank 0"
if grep -qi "segmentation fault\|signal 11" "$out"; then fail "a rank crashed"; fi
[ "$elapsed" -le 25 ] || fail "the job ended after $elapsed s: it waited for the stalled rank (timeout 5 s)"
cat "$out"
echo "PASS: the job ended after $elapsed s with exit code $code and the timeout message"
