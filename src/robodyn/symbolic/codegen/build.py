"""Compile generated C on demand with the machine's C compiler and load it with cffi (ABI mode).

The shared library lands in a cache directory (``$ROBODYN_CACHE``, else ``$XDG_CACHE_HOME/robodyn`` or
``~/.cache/robodyn``), named by a hash of the source and compiler flags, so a model is compiled once per
machine.  The library is written to a temporary name and renamed, so a crash never leaves half a file.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from robodyn.errors import RobodynError

FLAGS = ("-O2", "-std=c99", "-shared", "-fPIC", "-fno-math-errno")


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


def compile_library(source: str, declarations: str):
    """Compile ``source`` (C99) into the cache if needed; return the cffi (ffi, lib) pair."""
    import cffi

    compiler = find_compiler()
    key = hashlib.sha256((source + "\0" + " ".join(FLAGS)).encode()).hexdigest()[:20]
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    lib_path = folder / f"rd_{key}.so"
    if not lib_path.exists():
        with tempfile.TemporaryDirectory(dir=folder) as tmp:
            c_file = Path(tmp) / "model.c"
            c_file.write_text(source)
            out = Path(tmp) / "model.so"
            proc = subprocess.run([compiler, *FLAGS, str(c_file), "-o", str(out), "-lm"], capture_output=True,
                                  text=True)
            if proc.returncode != 0:
                raise RobodynError(f"C compiler {compiler} failed on the generated model:\n{proc.stderr[-2000:]}")
            os.replace(out, lib_path)
    ffi = cffi.FFI()
    ffi.cdef(declarations)
    return ffi, ffi.dlopen(str(lib_path))
