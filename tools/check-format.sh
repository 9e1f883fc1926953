#!/usr/bin/env bash
# Checks every C++ and CUDA source the repository tracks against .clang-format (clang-format
# 14, Debian 12's): prints each file that differs and the command that fixes it, exits 1 if any
# does. tools/run-tests.sh runs it; `tools/check-format.sh --fix` rewrites the files instead.
# Fixture trees under tests/data/ are data, not code, and are left alone.
set -uo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check-format: clang-format is not installed (tools/install-deps.sh)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' | grep -v '^tests/data/')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  echo "check-format: formatted ${#files[@]} files"
  exit 0
fi
# One clang-format over every file: it reports each place that differs as an error.
report=$(clang-format --dry-run --Werror "${files[@]}" 2>&1)
mapfile -t bad < <(grep -oE '^[^:]+:[0-9]+:[0-9]+: error' <<<"$report" | cut -d: -f1 | sort -u)
if [ ${#bad[@]} -gt 0 ]; then
  for f in "${bad[@]}"; do echo "check-format: $f differs from .clang-format (fix: clang-format -i $f)"; done
  echo "check-format: ${#bad[@]} of ${#files[@]} files need formatting (all at once: tools/check-format.sh --fix)"
  exit 1
fi
if [ -n "$report" ]; then
  echo "$report" >&2
  echo "check-format: clang-format failed" >&2
  exit 2
fi
echo "check-format: ${#files[@]} files formatted"
