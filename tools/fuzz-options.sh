# Per-target libFuzzer options and generated seeds, sourced by tools/run-tests.sh (CI, 20 s a
# target) and tools/fuzz-long.sh (hour-long runs); tests/fuzz/CMakeLists.txt lists the targets.
#   fuzz_options NAME       prints the target's -dict= (tests/fuzz/dict/) and -max_len= flags:
#                           1 MiB for the JSON and XML readers, so 200000-level nesting is an
#                           input the fuzzer can hold (the default max_len is 4096 bytes).
#   fuzz_deep_seeds NAME DIR  writes deeply nested inputs for NAME into DIR (a work corpus, not
#                           the committed seeds: they are 400 KB each).

fuzz_options() {
  local dict="" max_len=""
  case "$1" in
    fuzz_topology_json | fuzz_plan_json | fuzz_job_inputs) dict=json.dict max_len=1048576 ;;
    fuzz_nccl_xml) dict=xml.dict max_len=1048576 ;;
    fuzz_training_state | fuzz_state_shards) dict=training_state.dict max_len=1048576 ;;
    fuzz_corpus) dict=corpus.dict max_len=65536 ;;
    fuzz_cli) dict=cli.dict ;;
  esac
  [ -n "$dict" ] && printf -- '-dict=tests/fuzz/dict/%s\n' "$dict"
  [ -n "$max_len" ] && printf -- '-max_len=%s\n' "$max_len"
  return 0
}

# fuzz_repeat TEXT N: TEXT N times.
fuzz_repeat() { local i; for ((i = 0; i < $2; i++)); do printf '%s' "$1"; done; }

fuzz_deep_seeds() {
  local name=$1 dir=$2 open close
  open=$(printf '%*s' 200000 '' | tr ' ' '[')
  close=$(printf '%*s' 200000 '' | tr ' ' ']')
  case "$name" in
    fuzz_topology_json | fuzz_plan_json) printf '%s%s' "$open" "$close" >"$dir/deep-arrays" ;;
    fuzz_job_inputs)  # the first byte picks the reader: 1 config.json, 2 calibration
      printf '\001{"hidden_size":%s%s}' "$open" "$close" >"$dir/deep-hf-config"
      printf '\002{"schema":"burst.calibration/1","gemm":%s%s}' "$open" "$close" >"$dir/deep-calibration" ;;
    fuzz_training_state)  # the first byte's low bit: the fuzzer fixes the checksum line
      printf '\001burst.training_state/2\n{"meta":%s%s,"step":0,"adam_step":0,"params":0,"adam_m":0,"adam_v":0}\ncrc32 00000000\n' \
        "$open" "$close" >"$dir/deep-meta" ;;
    fuzz_nccl_xml)
      { printf '\000<system version="1"><cpu numaid="0" arch="x86_64">'
        fuzz_repeat '<pci busid="0000:07:00.0" class="0x060400">' 15000
        fuzz_repeat '</pci>' 15000
        printf '</cpu></system>'; } >"$dir/deep-pci" ;;
  esac
  return 0
}
