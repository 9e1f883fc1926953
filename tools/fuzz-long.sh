#!/usr/bin/env bash
# Long fuzzing runs (CI runs each target for 20 s only, in tools/run-tests.sh):
#   tools/fuzz-long.sh [-j N] [TARGET...]
# builds the fuzzers of the `asan` preset (build-asan/, clang; only the targets named, if any), then runs every fuzz_*
# target (or the ones named) for FUZZ_SECONDS each (default 3600), N at a time (default 1), with
# its dictionary, -max_len and generated deep-nesting seeds (tools/fuzz-options.sh). New inputs are merged into a work corpus
# that persists between runs, FUZZ_WORK/<target>/corpus (default build-asan/fuzz-work); crash
# reproducers go to FUZZ_WORK/<target>/ and the log to FUZZ_WORK/<target>/log. Ends with a table:
# target, seconds, runs, cov, ft (libFuzzer's final coverage and feature counts), crashes; exits
# non-zero, naming each reproducer, when a target found a crash or did not run.
set -uo pipefail
cd "$(dirname "$0")/.."
source tools/fuzz-options.sh

jobs=1
while getopts "j:" flag; do
  case "$flag" in
    j) jobs=$OPTARG ;;
    *) echo "usage: tools/fuzz-long.sh [-j N] [TARGET...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
seconds=${FUZZ_SECONDS:-3600}
work_root=${FUZZ_WORK:-build-asan/fuzz-work}

# The targets named, or all of them (the `fuzzers` target of the preset).
targets=("$@")
build_targets=("${targets[@]}")
[ ${#targets[@]} -eq 0 ] && build_targets=(fuzzers)
cmake --preset asan >/dev/null && cmake --build --preset asan --target "${build_targets[@]}" ||
  { echo "fuzz-long: the fuzz build failed" >&2; exit 1; }
if [ ${#targets[@]} -eq 0 ]; then
  for bin in build-asan/bin/fuzz_*; do targets+=("$(basename "$bin")"); done
fi

# Runs one target; its log, corpus and reproducers land in $work_root/<target>/.
fuzz_one() {
  local name=$1 dir="$work_root/$1"
  mkdir -p "$dir/corpus"
  rm -f "$dir"/crash-* "$dir"/leak-* "$dir"/timeout-* "$dir"/oom-*
  fuzz_deep_seeds "$name" "$dir/corpus"
  local options
  mapfile -t options < <(fuzz_options "$name")
  "build-asan/bin/$name" "${options[@]}" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$dir/" "$dir/corpus" "tests/fuzz/corpus/$name" >"$dir/log" 2>&1
  echo $? >"$dir/status"
}

started=$SECONDS
for name in "${targets[@]}"; do
  [ -x "build-asan/bin/$name" ] || { echo "fuzz-long: no target $name" >&2; exit 2; }
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  echo "fuzz-long: $name for ${seconds}s (at $((SECONDS - started)) s)" >&2
  fuzz_one "$name" &
done
wait

failed=0
printf '%-22s %8s %12s %7s %8s %s\n' target seconds runs cov ft crashes
for name in "${targets[@]}"; do
  dir="$work_root/$name" log="$work_root/$name/log"
  runs=$(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$log" | grep -Eo '[0-9]+$')
  took=$(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$log" | grep -Eo '[0-9]+ second' | grep -Eo '[0-9]+')
  last=$(grep -E '^#[0-9]+.*cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1)
  cov=$(grep -Eo 'cov: [0-9]+' <<<"$last" | grep -Eo '[0-9]+')
  ft=$(grep -Eo 'ft: [0-9]+' <<<"$last" | grep -Eo '[0-9]+')
  reproducers=$(find "$dir" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \))
  crashes=$(grep -c . <<<"$reproducers")
  printf '%-22s %8s %12s %7s %8s %s\n' "$name" "${took:-?}" "${runs:-?}" "${cov:-?}" "${ft:-?}" "$crashes"
  if [ "$(cat "$dir/status")" != 0 ] || [ "$crashes" -gt 0 ]; then
    failed=1
    echo "fuzz-long: $name FAILED (exit $(cat "$dir/status")); log: $log" >&2
    for file in $reproducers; do echo "  reproducer: $file (rerun: build-asan/bin/$name $file)" >&2; done
  fi
done
exit "$failed"
