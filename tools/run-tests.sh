#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this):
#   1. install dependencies (no-op when present); check the format of every C++ file
#      (tools/check-format.sh) and run clang-tidy on the ones the last commit changed
#      (tools/check-tidy.sh); build the release tree (build/; the
#      presets build every target as a unity build, batches of 8 files; a tree configured here
#      for the first time uses Ninja);
#   2. run every test with CTest (unit tests, CLI golden tests, MPI tests; the GPU tests, label
#      `gpu`, run where a GPU is visible and otherwise exit 77, which CTest counts as skipped:
#      this script says how many, and does not count them as passed);
#   3. build the sanitizer tree with clang (build-asan/: every library with AddressSanitizer,
#      UndefinedBehaviorSanitizer and libFuzzer's edge coverage) and run the same tests in it,
#      each MPI test program at its smallest rank count (labels `scale` and `scripts` left out);
#   4. build the ThreadSanitizer tree (build-tsan/, clang) with only the programs of the tests
#      labelled `threads` (the loopback's rank threads, overlapped collectives, the kernels'
#      thread pool) and run them: a data race fails the test;
#   5. run each libFuzzer target of the sanitizer tree briefly (BURST_FUZZ_SECONDS, 8), with
#      the options of tools/fuzz-options.sh (hour-long runs: tools/fuzz-long.sh).
# Every stage prints when it starts. Ends with one line "N passed, N failed" over all stages;
# exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."

fuzz_seconds=${BURST_FUZZ_SECONDS:-8}
jobs=$(nproc)  # tests and fuzzers run this many at a time
passed=0
failed=0
skip_lines=""
log_dir=$(mktemp -d)

started=$SECONDS
stage() { printf '\n== %s (at %d s) ==\n' "$*" $((SECONDS - started)) >&2; }

# Runs CTest in a build tree and adds its counts to the totals.
run_ctest() {  # run_ctest <tree> <stage> [ctest options...]
  local tree=$1 label=$2 log="$log_dir/ctest-$2.log"
  shift 2
  ctest --test-dir "$tree" --output-on-failure --timeout 600 --parallel "$jobs" "$@" 2>&1 | tee "$log"
  local line total bad
  line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$log" | tail -n 1)
  if [ -z "$line" ]; then
    echo "run-tests: ctest ($label) printed no summary" >&2
    failed=$((failed + 1))
    return
  fi
  total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")
  bad=$(sed -E 's/.*tests passed, ([0-9]+) tests failed.*/\1/' <<<"$line")
  # Skipped tests (exit 77: a GPU test where no GPU is visible, the Chromium render test where
  # Chromium is not installed) count neither as passed nor as failed, and are named.
  local skipped gpu_skipped names
  names=$(sed -nE 's/^[[:space:]]*[0-9]+ - ([^ ]+) \(Skipped\)$/\1/p' "$log")
  skipped=$(grep -c . <<<"$names")
  gpu_skipped=$(grep -c gpu <<<"$names")
  passed=$((passed + total - bad - skipped))
  failed=$((failed + bad))
  if [ "$gpu_skipped" -gt 0 ]; then
    skip_lines+="GPU tests: ${gpu_skipped} skipped (no GPU visible; on a GPU machine: ctest --test-dir $tree -L gpu)"$'\n'
  fi
  if [ "$skipped" -gt "$gpu_skipped" ]; then
    skip_lines+="other skipped tests ($label): $(grep -v gpu <<<"$names" | tr '\n' ' ')(their SKIPPED line says why)"$'\n'
  fi
}

build() {  # build <preset> <tree> [target...]: every target, or those named
  if [ ! -f "$2/CMakeCache.txt" ] && command -v ninja >/dev/null; then
    export CMAKE_GENERATOR=Ninja  # a tree configured before keeps its generator
  fi
  local preset=$1
  shift 2
  cmake --preset "$preset" >/dev/null && cmake --build --preset "$preset" ${1:+--target "$@"}
}

stage "dependencies"
tools/install-deps.sh || { echo "run-tests: installing dependencies failed" >&2; exit 1; }

stage "format and tidy"
for check in tools/check-format.sh tools/check-tidy.sh; do
  if "$check"; then passed=$((passed + 1)); else echo "run-tests: $check failed" >&2; failed=$((failed + 1)); fi
done

stage "release build and tests"
if build release build; then run_ctest build release; else echo "run-tests: release build failed" >&2; failed=$((failed + 1)); fi

stage "ASan + UBSan build (clang, with the fuzzers) and tests"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
sanitizer_tree=false
if build asan build-asan; then
  sanitizer_tree=true
  # Tests labelled `scale` (16 ranks and more, and the larger rank counts of an MPI test) run the
  # same code as their smaller twins at more ranks: the release stage ran them; here they would
  # cost minutes under the sanitizers (tests/CMakeLists.txt).
  # Tests labelled `scripts` test a script or launcher whose burst commands other tests run.
  left=$(ctest --test-dir build-asan -N -L 'scale|scripts' | sed -nE 's/^Total Tests: ([0-9]+)/\1/p')
  skip_lines+="sanitizer stage: ${left:-0} tests labelled scale or scripts left to the release stage"$'\n'
  run_ctest build-asan asan -LE 'scale|scripts'
else
  echo "run-tests: sanitizer build failed" >&2
  failed=$((failed + 1))
fi

stage "ThreadSanitizer build (clang) and the tests whose ranks are threads"
# The loopback's ranks are threads of one process, ZeRO overlaps its collectives with the step
# and the kernels run a thread pool: the tests labelled `threads` run them under TSan, which
# fails a test (exit 66) on any data race it sees. Only their programs and libraries are built.
export TSAN_OPTIONS=second_deadlock_stack=1
if build tsan build-tsan burst_train_tests burst_runtime_tests; then
  run_ctest build-tsan tsan -L threads
else
  echo "run-tests: ThreadSanitizer build failed" >&2
  failed=$((failed + 1))
fi

stage "fuzzers (${fuzz_seconds}s each)"
source tools/fuzz-options.sh  # each target's dictionary, -max_len and deep-nesting seeds
if $sanitizer_tree; then
  # One fuzzer per core at a time; each writes its own log, read back in order below.
  fuzz_one() {  # fuzz_one <binary>: exit status of the run, output in $log_dir/<name>.log
    local fuzzer=$1 name work options
    name=$(basename "$fuzzer")
    work="$log_dir/corpus-$name"
    mkdir -p "$work"
    fuzz_deep_seeds "$name" "$work"
    mapfile -t options < <(fuzz_options "$name")
    "$fuzzer" "${options[@]}" -max_total_time="$fuzz_seconds" -print_final_stats=0 "$work" \
      "tests/fuzz/corpus/$name" >"$log_dir/$name.log" 2>&1
    echo $? >"$log_dir/$name.rc"
  }
  fuzzers=(build-asan/bin/fuzz_*)
  for ((i = 0; i < ${#fuzzers[@]}; i += jobs)); do
    for fuzzer in "${fuzzers[@]:i:jobs}"; do fuzz_one "$fuzzer" & done
    wait
  done
  for fuzzer in "${fuzzers[@]}"; do
    name=$(basename "$fuzzer")
    if [ "$(cat "$log_dir/$name.rc" 2>/dev/null)" = 0 ]; then
      echo "fuzz $name: ok ($(grep -Eo 'Done [0-9]+ runs' "$log_dir/$name.log" | grep -Eo '[0-9]+') runs)" >&2
      passed=$((passed + 1))
    else
      echo "fuzz $name: FAILED" >&2
      tail -n 40 "$log_dir/$name.log" >&2
      failed=$((failed + 1))
    fi
  done
else
  echo "run-tests: no fuzzers (the sanitizer tree did not build)" >&2
fi

stage "done"
echo
printf "%s" "$skip_lines"
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
