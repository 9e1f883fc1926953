#!/bin/sh
# The layering check fails where it must: on a fixture tree (tests/data/layering) with an upward
# import and an import of another module's internals, and on an allowed graph with a cycle;
# each failure names the file and line. Usage: catches_test.sh CHECKER FIXTURE
set -u
checker=$1
fixture=$2
out=$(mktemp)
trap 'rm -f "$out" "$out.layers"' EXIT
fail() { cat "$out"; echo "FAIL: $1"; exit 1; }

python3 "$checker" --root "$fixture" --layers "$fixture/layers.txt" >"$out" 2>&1
[ $? -eq 1 ] || fail "the fixture's broken layers passed"
grep -q '^low/a.hpp:2: low may not include high (high/b.hpp)' "$out" || fail "the upward import is not named"
grep -q '^high/c.cpp:2: includes low/detail/d.hpp, internal to low/' "$out" || fail "the internal import is not named"
grep -q 'high/b.hpp' "$out" && grep -q '^high/b.hpp' "$out" && fail "the allowed import was refused"

printf 'low: high\nhigh: low\n' >"$out.layers"
python3 "$checker" --root "$fixture" --layers "$out.layers" >"$out" 2>&1
[ $? -eq 1 ] || fail "a cycle in the allowed graph passed"
grep -q 'form a cycle' "$out" || fail "the cycle is not named"
echo "PASS: upward, internal and cyclic layers each refused by name"
