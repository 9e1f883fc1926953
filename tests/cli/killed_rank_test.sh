#!/bin/sh
# A rank killed (SIGKILL) in the middle of a training run fails the whole job promptly: mpiexec
# notices, ends the other ranks and exits non-zero; no rank is left waiting (ctest's TIMEOUT
# would catch a hang). Usage: killed_rank_test.sh MPIEXEC BURST PLAN DATA
set -u
mpiexec=$1 burst=$2 plan=$3 data=$4
out=$(mktemp)
"$mpiexec" --oversubscribe --allow-run-as-root -np 2 "$burst" run "$plan" --steps 100000 --data "$data" >"$out" 2>&1 &
job=$!
i=0
until grep -q '^step' "$out"; do  # the ranks are training
  i=$((i + 1))
  if [ $i -gt 300 ]; then cat "$out"; echo "FAIL: no training step within 60 s"; kill "$job"; exit 1; fi
  sleep 0.2
done
# A rank of this job: a child of its mpiexec whose command line starts with "$burst run" (no
# pgrep: procps is not on every Debian machine). Only this job's: another test's ranks may run
# the same command line at the same time under ctest --parallel.
victim=
for p in /proc/[0-9]*; do
  parent=$(sed -n 's/^PPid:[[:space:]]*//p' "$p/status" 2>/dev/null) || continue
  [ "$parent" = "$job" ] || continue
  cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) || continue
  case "$cmd" in "$burst run $plan"*) victim=${p#/proc/} ;; esac
done
[ -n "$victim" ] || { echo "FAIL: no rank process found"; kill "$job"; exit 1; }
kill -9 "$victim"
wait "$job"
code=$?
cat "$out"
rm -f "$out"
[ "$code" -ne 0 ] || { echo "FAIL: the job exited 0 after rank process $victim was killed"; exit 1; }
echo "PASS: the job ended with exit code $code after rank process $victim was killed"
