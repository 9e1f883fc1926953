"""The build backend of `pip install .` (PEP 517), in the tree and with no requirements.

pip builds a wheel by calling build_wheel() here: it configures a CMake tree for the Python
module alone (release, unity build, no tests, no CUDA: the module plans, simulates and exports,
it does not run kernels), builds the `burst_python` target, and zips the extension and its type
stubs (burst.pyi) with the wheel's metadata. Needing nothing from PyPI, it installs offline and
inside pip's isolated build environment alike.

    pip install .                         # builds build-python/ under the source tree (minutes)
    BURST_BUILD_DIR=build pip install .   # packages the module of a tree built already

The wheel is for this interpreter and platform (cp311-cp311-linux_x86_64, say) and links the
system libraries it was built against (fmt, Boost's, OpenBLAS): it is for this machine and its
like, not for PyPI.
"""

import base64
import hashlib
import os
import pathlib
import re
import subprocess
import sys
import sysconfig
import zipfile

_SOURCE = pathlib.Path(__file__).resolve().parents[2]


def _version():
    text = (_SOURCE / "CMakeLists.txt").read_text()
    match = re.search(r"project\(burst VERSION ([0-9.]+)", text)
    if not match:
        raise RuntimeError(f"{_SOURCE / 'CMakeLists.txt'}: no `project(burst VERSION x.y.z)` line")
    return match.group(1)


def _tag():
    interpreter = f"{sys.implementation.name[:2]}{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{interpreter}-{interpreter}-{platform}"


def _run(command):
    print("burst_build:", " ".join(command), file=sys.stderr, flush=True)
    subprocess.run(command, check=True, stdout=sys.stderr)


def _built_module(build_dir):
    """Configures (the first time) and builds the module; its files in build_dir/python."""
    if not (build_dir / "CMakeCache.txt").exists():
        _run(["cmake", "-S", str(_SOURCE), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
              "-DCMAKE_UNITY_BUILD=ON", "-DBURST_BUILD_TESTS=OFF", "-DBURST_WITH_CUDA=OFF",
              "-DBURST_WITH_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}"])
    _run(["cmake", "--build", str(build_dir), "--target", "burst_python", "--parallel", str(os.cpu_count() or 1)])
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    module = build_dir / "python" / f"burst{suffix}"
    if not module.exists():
        found = sorted(p.name for p in (build_dir / "python").glob("burst*"))
        raise RuntimeError(f"{module}: not built for this interpreter ({sys.executable}); "
                           f"{build_dir / 'python'} has {found or 'nothing'}: build with the same Python")
    return [module, build_dir / "python" / "burst.pyi"]


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    build_dir = pathlib.Path(os.environ.get("BURST_BUILD_DIR", _SOURCE / "build-python")).resolve()
    files = {path.name: path.read_bytes() for path in _built_module(build_dir)}
    dist_info = f"burst-{version}.dist-info"
    files[f"{dist_info}/METADATA"] = (
        "Metadata-Version: 2.1\nName: burst\n"
        f"Version: {version}\n"
        "Summary: Plan, simulate and export long-sequence transformer training across GPU clusters\n"
        "Requires-Python: >=3.9\n").encode()
    files[f"{dist_info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: burst_build\nRoot-Is-Purelib: false\nTag: {_tag()}\n").encode()
    record = [_record_line(name, data) for name, data in files.items()] + [f"{dist_info}/RECORD,,"]
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    name = f"burst-{version}-{_tag()}.whl"
    with zipfile.ZipFile(pathlib.Path(wheel_directory) / name, "w", zipfile.ZIP_DEFLATED) as wheel:
        for member, data in files.items():
            wheel.writestr(member, data)
    return name
