"""Compile generated C on demand with the machine's C compiler and load it with cffi (ABI mode).

The shared library lands in a cache directory (``$ROBODYN_CACHE``, else ``$XDG_CACHE_HOME/robodyn`` or
``~/.cache/robodyn``), named by a hash of the source and compiler flags, so a model is compiled once per
machine.  The library is written to a temporary name and renamed, so a crash never leaves half a file.
When Python's headers are installed the library also carries a CPython entry point (``-DRD_PYTHON``) for
low-latency single calls; without them only the cffi functions exist.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sysconfig
import tempfile
from pathlib import Path

from robodyn.errors import RobodynError

FLAGS = ("-O3", "-std=c99", "-shared", "-fPIC", "-fno-math-errno")


class CompilerNotFoundError(RobodynError):
    """No C compiler on this machine: use the NumPy code instead (``backend="numpy"``)."""


def cache_dir() -> Path:
    env = os.environ.get("ROBODYN_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "robodyn"


def find_compiler() -> str:
    """The C compiler: ``$CC`` or the first of cc, gcc, clang on PATH."""
    for cand in ([os.environ["CC"]] if os.environ.get("CC") else []) + ["cc", "gcc", "clang"]:
        path = shutil.which(cand)
        if path:
            return path
    raise CompilerNotFoundError(
        "no C compiler found (looked for $CC, cc, gcc, clang on PATH); install gcc or clang, set CC, "
        "or use backend='numpy' to evaluate the generated NumPy code instead"
    )


def _python_flags() -> list[str]:
    inc = sysconfig.get_paths().get("include")
    if inc and os.path.exists(os.path.join(inc, "Python.h")):
        return ["-DRD_PYTHON", f"-I{inc}"]
    return []


def compile_library(source: str, declarations: str):
    """Compile ``source`` (C99) into the cache if needed.

    Returns ``(ffi, lib, module)``: the cffi handle of the library and its CPython module ``rdmodel``
    (None when Python's headers are missing).
    """
    import cffi

    compiler = find_compiler()
    flags = list(FLAGS) + _python_flags()
    key = hashlib.sha256((source + "\0" + " ".join(flags)).encode()).hexdigest()[:20]
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    lib_path = folder / f"rd_{key}.so"
    if not lib_path.exists():
        with tempfile.TemporaryDirectory(dir=folder) as tmp:
            c_file = Path(tmp) / "model.c"
            c_file.write_text(source)
            out = Path(tmp) / "model.so"
            proc = subprocess.run([compiler, *flags, str(c_file), "-o", str(out), "-lm"], capture_output=True,
                                  text=True)
            if proc.returncode != 0:
                raise RobodynError(f"C compiler {compiler} failed on the generated model:\n{proc.stderr[-2000:]}")
            os.replace(out, lib_path)
    ffi = cffi.FFI()
    ffi.cdef(declarations)
    lib = ffi.dlopen(str(lib_path))
    module = None
    if "-DRD_PYTHON" in flags:
        loader = importlib.machinery.ExtensionFileLoader("rdmodel", str(lib_path))
        spec = importlib.util.spec_from_file_location("rdmodel", str(lib_path), loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    return ffi, lib, module
