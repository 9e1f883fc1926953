#!/usr/bin/env bash
# Runs clang-tidy with .clang-tidy's checks (every finding an error) on the C++ sources a change
# touches: those named, or else the ones the last commit changed beyond formatting and any
# changed since, a header standing for the source of the same name. Compile commands come from
# a tree configured for it alone (build-tidy/: no unity build, no precompiled header, no CUDA;
# configured once, in seconds). tools/run-tests.sh runs it; exits 1 on any finding.
#   tools/check-tidy.sh [FILE...]
set -uo pipefail
cd "$(dirname "$0")/.."
command -v clang-tidy >/dev/null || { echo "check-tidy: clang-tidy is not installed (tools/install-deps.sh)" >&2; exit 2; }
tree=build-tidy
if [ ! -f "$tree/compile_commands.json" ]; then
  cmake -S . -B "$tree" -DCMAKE_UNITY_BUILD=OFF -DBURST_PCH=OFF -DBURST_WITH_CUDA=OFF -DBURST_BUILD_TESTS=OFF \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null || { echo "check-tidy: configuring $tree failed" >&2; exit 2; }
fi

# The C++ files the last commit and the working tree changed beyond formatting: a file whose
# old and new text format to the same (a change made by tools/check-format.sh --fix) is left out.
formatted() {  # formatted <revision> <file>: the file at <revision> ("work": on disk), formatted
  if [ "$1" = work ]; then clang-format --assume-filename="$2" <"$2"; else
    git show "$1:$2" 2>/dev/null | clang-format --assume-filename="$2"; fi
}
changed() {
  local base=HEAD f
  git rev-parse -q --verify HEAD~1 >/dev/null && base=HEAD~1
  { git diff --name-only "$base" HEAD; git diff --name-only HEAD; } | sort -u | grep -E '\.(cpp|hpp)$' |
    while read -r f; do
      [ -f "$f" ] || continue
      [ "$(formatted "$base" "$f" | md5sum)" = "$(formatted work "$f" | md5sum)" ] || echo "$f"
    done
}
if [ $# -gt 0 ]; then
  candidates=("$@")
else
  mapfile -t candidates < <(changed)
fi
sources=()
for f in "${candidates[@]}"; do
  case "$f" in tests/*) continue ;; esac
  case "$f" in
    *.cpp) [ -f "$f" ] && sources+=("$f") ;;
    *.hpp) [ -f "${f%.hpp}.cpp" ] && sources+=("${f%.hpp}.cpp") ;;
  esac
done
in_database() { grep -q "\"file\": \"$PWD/$1\"" "$tree/compile_commands.json"; }
# A source added since the tree was configured is in no compile command yet: configure again.
for f in "${sources[@]}"; do
  if ! in_database "$f"; then
    cmake -S . -B "$tree" >/dev/null || { echo "check-tidy: configuring $tree failed" >&2; exit 2; }
    break
  fi
done
mapfile -t sources < <(printf '%s\n' "${sources[@]}" | grep . | sort -u | while read -r f; do
  in_database "$f" && echo "$f"; done)
if [ ${#sources[@]} -eq 0 ]; then
  echo "check-tidy: no changed C++ source to check"
  exit 0
fi
echo "check-tidy: ${#sources[@]} file(s): ${sources[*]}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
printf '%s\n' "${sources[@]}" | xargs -P "$(nproc)" -n 1 clang-tidy -p "$tree" --quiet >"$log" 2>&1
status=$?
grep -E "(warning|error):" "$log"
if [ $status -ne 0 ]; then
  echo "check-tidy: findings above (fix them, or NOLINT(check): reason where the code is right)"
  exit 1
fi
echo "check-tidy: ${#sources[@]} file(s) clean"
