#!/bin/sh
# `pip install .` through the in-tree build backend (python/build_backend/burst_build.py), offline
# and in pip's isolated build environment: the wheel packages the module of the tree CTest runs
# in (BURST_BUILD_DIR), installs into a fresh directory, and imports from there with the stubs
# beside it and the version CMake gives.
# Usage: pip_install_test.sh PYTHON SOURCE_DIR BUILD_DIR
set -eu
python=$1 source=$2 build=$3
target=$(mktemp -d)
trap 'rm -rf "$target"' EXIT
cd "$source"
BURST_BUILD_DIR=$build PIP_NO_INDEX=1 "$python" -m pip install --no-deps --disable-pip-version-check --quiet \
  --target "$target" . 2>&1 | grep -v "Running pip as the 'root' user" || true
test -f "$target/burst.pyi" || { echo "FAIL: no burst.pyi installed"; exit 1; }
version=$(sed -nE 's/^project\(burst VERSION ([0-9.]+).*/\1/p' CMakeLists.txt)
test -d "$target/burst-$version.dist-info" || { echo "FAIL: no burst-$version.dist-info"; ls "$target"; exit 1; }
cd "$target"
PYTHONPATH=$target "$python" -c "
import burst
assert burst.__file__.startswith('$target'), burst.__file__
names = [p['name'] for p in burst.topology_presets()]
assert 'dgx-h100' in names, names
print('PASS: pip install . gave burst', '$version', 'with', len(names), 'presets')
"
