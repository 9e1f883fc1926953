#!/usr/bin/env bash
# Installs every build and test dependency of burst from Debian 12 packages (as root).
# Idempotent and offline-safe: apt-get runs only when a package is missing.
# The CUDA toolkit (nvcc, NCCL) is optional: burst builds its CUDA parts when it finds
# /usr/local/cuda (BURST_WITH_CUDA=AUTO) and skips them otherwise.
set -euo pipefail

packages=(
  cmake g++ make ninja-build git   # the test script builds its trees with Ninja
  libboost-graph-dev nlohmann-json3-dev libfmt-dev libcli11-dev catch2 libpugixml-dev
  libopenmpi-dev openmpi-bin libopenblas-dev pkg-config   # pkg-config locates OpenBLAS
  clang libclang-rt-14-dev   # the sanitizer tree and its libFuzzer targets
  clang-format clang-tidy   # tools/check-format.sh, tools/check-tidy.sh
  python3 python3-yaml   # the export tests read NeMo's YAML and TorchTitan's TOML (tomllib) back
  pybind11-dev python3-dev   # the Python module, `import burst` (python/)
  python3-pip python3-venv   # `pip install .` into a virtual environment (pyproject.toml), and its test
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all ${#packages[@]} packages present" >&2
fi
