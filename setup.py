"""Build the compiled core from csrc/.

Every ``csrc/<name>.pyx`` becomes the module ``functionalbpe.<name>``. A .pyx that needs C
files of its own names them in its header (``# distutils: sources = csrc/x.c``), so adding a
module never means editing this file.

A failed compile is a warning by default: the package then runs on its pure-Python path.
With ``FUNCTIONALBPE_STRICT_BUILD=1`` (what CI sets) it is an error instead.

``FUNCTIONALBPE_SANITIZE=1`` builds the compiled core with AddressSanitizer and
UndefinedBehaviorSanitizer (GCC or Clang), every undefined-behaviour report fatal. Python
itself is not instrumented, so the runtime must be loaded first::

    FUNCTIONALBPE_SANITIZE=1 python setup.py build_ext --inplace
    LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 python -m pytest

(``.ci/run`` does this in a copy of the tree, so that the normal build is left alone.)
"""
import glob
import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

STRICT = os.environ.get("FUNCTIONALBPE_STRICT_BUILD", "") == "1"
SANITIZE = os.environ.get("FUNCTIONALBPE_SANITIZE", "") == "1"
# -O1 keeps the stacks of reports readable; -fno-sanitize-recover makes every UBSan report
# stop the process, so that none can scroll past unnoticed.
SANITIZE_COMPILE = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
                    "-fno-omit-frame-pointer"]
SANITIZE_LINK = ["-fsanitize=address,undefined"]


def _fail(message):
    if STRICT:
        raise SystemExit(f"functionalbpe: strict build: {message}")
    sys.stderr.write(f"WARNING: functionalbpe: {message}; the pure-Python path will be used\n")


def extensions():
    sources = sorted(glob.glob(os.path.join("csrc", "*.pyx")))
    if not sources:
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        _fail("Cython is not installed, so the extension cannot be built")
        return []
    modules = [
        Extension(
            "functionalbpe." + os.path.splitext(os.path.basename(path))[0],
            [path],
            include_dirs=["csrc"],
            extra_compile_args=SANITIZE_COMPILE if SANITIZE else ["-O3"],
            extra_link_args=SANITIZE_LINK if SANITIZE else [],
        )
        for path in sources
    ]
    try:
        return cythonize(modules, compiler_directives={"language_level": 3}, quiet=True)
    except Exception as exc:  # a Cython compile error
        _fail(f"cythonizing failed ({exc})")
        return []


class OptionalBuildExt(build_ext):
    """build_ext that degrades to pure Python unless the build is strict."""

    def run(self):
        try:
            super().run()
        except Exception as exc:  # compiler missing, headers missing, ...
            _fail(f"building the extension failed ({exc})")

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:
            _fail(f"building {ext.name} failed ({exc})")


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
