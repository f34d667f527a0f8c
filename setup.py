"""Builds the Python package through CMake (pyproject.toml holds the metadata).

The native module `cmalign._cmalign` and the `cmalign` program are CMake targets of the one
project; this file runs CMake and puts both into the package: the module beside __init__.py,
the program as `cmalign/_bin/cmalign`, which the `cmalign` command and `python -m cmalign` run.

Environment:
  CMALIGN_CMAKE_BUILD_DIR  reuse this configured CMake build tree (it must have the Python module
                           and the CLI enabled) instead of configuring a new one under build/
  CMALIGN_CMAKE_ARGS       more arguments for the CMake configuration (split on white space)
  CMAKE_BUILD_PARALLEL_LEVEL  jobs (default: all cores)
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(cmalign\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)", text)
    if not match:
        sys.exit("setup.py: no `project(cmalign VERSION x.y.z` in CMakeLists.txt")
    return match.group(1)


def pybind11_cmake_dir():
    try:
        import pybind11  # the PyPI wheel, or Debian's python3-pybind11
    except ImportError:
        return None  # Debian's pybind11-dev alone: CMake finds /usr/lib/cmake/pybind11
    return pybind11.get_cmake_dir()


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.environ.get("CMALIGN_CMAKE_BUILD_DIR")
        if build_dir:
            build_dir = pathlib.Path(build_dir).resolve()
        else:
            tag = sysconfig.get_config_var("SOABI") or "py"
            build_dir = ROOT / "build" / f"python-{tag}"
            args = [
                "cmake", "-S", str(ROOT), "-B", str(build_dir),
                "-DCMAKE_BUILD_TYPE=Release",
                f"-DPython3_EXECUTABLE={sys.executable}",
                "-DCMALIGN_PYTHON=ON", "-DCMALIGN_CLI=ON", "-DCMALIGN_TESTS=OFF",
                "-DCMALIGN_EXAMPLES=OFF", "-DCMALIGN_INSTALL=OFF",
            ]
            if shutil.which("ninja"):
                args += ["-G", "Ninja"]
            cmake_dir = pybind11_cmake_dir()
            if cmake_dir:
                args.append(f"-Dpybind11_DIR={cmake_dir}")
            args += os.environ.get("CMALIGN_CMAKE_ARGS", "").split()
            subprocess.run(args, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", str(build_dir), "-j", jobs,
                        "--target", "cmalign_python", "cmalign_cli"], check=True)

        module = pathlib.Path(self.get_ext_fullpath(ext.name))
        package = module.parent
        package.mkdir(parents=True, exist_ok=True)
        built = sorted((build_dir / "python" / "cmalign").glob("_cmalign*.so"))
        if len(built) != 1:
            sys.exit(f"setup.py: expected one _cmalign module in {build_dir}/python/cmalign, "
                     f"found {[p.name for p in built]}")
        shutil.copyfile(built[0], module)
        program = package / "_bin" / "cmalign"
        program.parent.mkdir(exist_ok=True)
        shutil.copyfile(build_dir / "cmalign", program)
        program.chmod(0o755)


if __name__ == "__main__":  # as setuptools runs it; tests import project_version() alone
    setup(
        version=project_version(),
        ext_modules=[Extension("cmalign._cmalign", sources=[])],
        cmdclass={"build_ext": CMakeBuild},
    )
