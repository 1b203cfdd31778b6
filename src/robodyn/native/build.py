"""Compile generated C on demand with the machine's C compiler and load it with cffi (ABI mode).

The cache. Shared libraries land in a cache folder (``$ROBODYN_CACHE``, else ``$XDG_CACHE_HOME/robodyn`` or
``~/.cache/robodyn``) under ``rd_KEY.so``, KEY the SHA-256 of the generated source, the compiler, its flags and
the robodyn version, so a model is compiled once per machine. ``rd.compile`` generates that source without the
robot's name, so the key depends on the robot's content only (a renamed robot reuses the library). Each library has a sidecar ``rd_KEY.sha256``
holding KEY and the SHA-256 of the library's bytes, written (atomically) only after the library was renamed
into place. Before loading, the library's hash is checked against its sidecar: a corrupt, truncated or foreign
file (another model's library copied over it) is rebuilt, never loaded. Builds and checks of one KEY hold an
exclusive lock (``rd_KEY.lock``), so concurrent processes build a model once and never see half a file.
The hashes protect against accidents, not against someone who can write the cache (the key derives from public
inputs, so a forged library comes with a matching sidecar): like ssh and pip, robodyn uses a cache folder only
when this user owns it and neither group nor others can write it (it creates it with mode 0700), and a cached
library or sidecar only when it is a regular file with the same owner and mode rule; otherwise CompileError says
which and how to fix it. Libraries are stored with mode 0700, sidecars 0600. A library that ``dlopen`` or the
import of its CPython entry rejects is a CompileError too.

The compiler. It runs in its own process group under a small shell that kills the whole group (driver, cc1,
assembler, linker) when Python dies (Linux: ``PR_SET_PDEATHSIG``), when the ``timeout`` is reached, or on
Ctrl-C. A compile that lasts more than a second shows a progress spinner on a terminal (:mod:`robodyn.progress`).
When Python's and NumPy's headers are installed the library also carries a CPython entry point (``-DRD_PYTHON
-DRD_NUMPY``) for low-latency single calls; without them only the cffi functions exist.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import signal
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from robodyn.progress import progress
from robodyn.errors import RobodynError
from robodyn.version import __version__

FLAGS = ("-O3", "-std=c99", "-shared", "-fPIC", "-fno-math-errno")

#: sources longer than this (characters) are compiled with -O1 instead of -O3: on long straight-line code
#: -O3's extra passes cost most of the compile time and gain little (no loops to vectorize or unroll). The PUMA
#: 560's regressor (168k) compiles in 8 s at -O1 against 19 s at -O3 and runs 3 % slower, its ∂Γ derivatives (157k)
#: 11 s against 14 s, 4 % slower; below 100k -O3 pays (its inverse dynamics, 47k: 24 % faster)
LARGE_SOURCE = 120_000


def flags_for(source: str) -> list[str]:
    """Compiler flags for ``source``: :data:`FLAGS`, -O1 above :data:`LARGE_SOURCE` characters."""
    flags = list(FLAGS)
    if len(source) > LARGE_SOURCE:
        flags[0] = "-O1"
    return flags


#: GCC's link-time optimisation with the code generation of a library's functions spread over every core
#: (``-flto=auto``, GCC >= 10), which takes most of a build: tried first by :func:`build_library`.  C semantics are
#: kept (no contraction of a * b + c under -std=c99), so the library computes the same numbers.  A compiler that
#: refuses it or fails with it (older Clang, GCC before 10, no LTO plugin) builds without it, and that compiler
#: binary skips it for :data:`REFUSED_TTL`.
PARALLEL = ("-flto=auto",)
#: how long a build that a compiler binary refused is remembered (s): later processes skip it meanwhile
REFUSED_TTL = 24 * 3600.0


#: GCC's combiner (the RTL pass merging dependent instructions into one) limited to pairs of instructions; GCC's
#: default, chains of up to four, spends most of a customized model's build searching its long straight-line
#: functions: the RX-90's ∂Γ derivatives with the parameters as inputs and wrenches (165 000 characters, -O1) take
#: 24 s on 2 cores and 13 s with pairs, a floating tree's inverse dynamics with wrenches (82 000, -O3) 22 s and 7 s,
#: Panda's inverse dynamics 3.8 s and 2.6 s.  The code runs as fast (within this machine's noise) and computes the
#: same numbers bit for bit: the combiner selects instructions, it does not reorder the arithmetic.  robodyn's
#: generic kernels, loops rather than straight lines, gain nothing from it and are built without.  A compiler that
#: refuses the flag (not GCC) builds without it, as with :data:`PARALLEL`.
COMBINE_PAIRS = ("--param=max-combine-insns=2",)


def preferred_flags(source: str) -> tuple[str, ...]:
    """The GCC flags a customized model's build tries first (``build_library(..., preferred=...)``):
    :data:`COMBINE_PAIRS`, and :data:`PARALLEL` above :data:`LARGE_SOURCE` characters.  A large model is several
    long functions (the one-state entry, the four-lane one and its AVX2 clone, chunks of 500 statements), built
    side by side: the 6-joint arms' ∂Γ derivatives with the parameters as inputs (158 000 characters) build in
    8–10 s instead of 13 s on 2 cores; a smaller model gains nothing from it."""
    return (*PARALLEL, *COMBINE_PAIRS) if len(source) > LARGE_SOURCE else COMBINE_PAIRS


def refused_marker(what: str, flags) -> Path:
    """The cache's file remembering that this compiler binary (its path, size and time stamp: an updated compiler
    is another) refused the build ``what`` with ``flags``."""
    compiler = find_compiler()
    try:
        st = os.stat(compiler)
        identity = f"{compiler}:{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        identity = compiler
    return cache_dir() / f"refused_{cache_key(what, identity, flags)[:32]}.failed"


def recently_refused(marker: Path) -> bool:
    """Whether ``marker`` exists and is younger than :data:`REFUSED_TTL` (an older one is removed)."""
    try:
        age = time.time() - marker.stat().st_mtime
    except OSError:
        return False
    if 0 <= age < REFUSED_TTL:
        return True
    with contextlib.suppress(OSError):
        marker.unlink()
    return False


class CompilerNotFoundError(RobodynError):
    """No C compiler on this machine: use the NumPy code instead (``backend="numpy"``)."""


class CompileError(RobodynError):
    """The C compiler failed, ran out of time, or the compiled library could not be stored or loaded."""


class CompileTimeoutError(CompileError, TimeoutError):
    """Compiling took longer than the ``timeout`` given to ``rd.compile``."""


class CompilerFailedError(CompileError):
    """The C compiler ran and exited with an error (its last messages quoted): a flag it refuses or a source it
    cannot compile, never a cache folder or cached file that robodyn refuses."""


def cache_dir() -> Path:
    """The cache folder (created private, mode 0700, if needed); a ``ROBODYN_CACHE`` that cannot be used, or a
    folder not owned by this user or writable by others (:func:`check_private`), raises CompileError."""
    env = os.environ.get("ROBODYN_CACHE")
    if env is not None:
        if not env.strip() or "\0" in env:
            raise CompileError(f"ROBODYN_CACHE={env!r} is not a folder name; set it to a writable folder or unset it")
        folder, origin = Path(env).expanduser(), f"ROBODYN_CACHE={env!r}"
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder, origin = Path(base) / "robodyn", f"cache folder {str(Path(base) / 'robodyn')!r}"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise CompileError(f"{origin}: cannot create the folder ({exc.strerror or exc}); "
                           "set ROBODYN_CACHE to a writable folder") from None
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise CompileError(f"{origin} is not a writable folder; set ROBODYN_CACHE to a writable folder")
    check_private(folder, origin)
    return folder


def check_private(path: Path, what: str, follow: bool = True) -> None:
    """Raise CompileError unless ``path`` is owned by this user and not writable by its group or others.

    Whoever can write the cache can plant a library that robodyn loads (its constructor runs) together with a
    matching sidecar: like ssh and pip, robodyn then refuses the cache instead of trusting it. ``follow=False``
    checks a link itself (a cached file must be a regular file, not a link). No check where the system has no
    owners (Windows)."""
    if not hasattr(os, "geteuid"):
        return
    try:
        st = os.stat(path) if follow else os.lstat(path)
    except OSError as exc:
        raise CompileError(f"{what}: cannot check it ({exc.strerror or exc}); set ROBODYN_CACHE to a private "
                           "folder") from None
    me = os.geteuid()
    if not follow and not stat.S_ISREG(st.st_mode):
        problem = "is not a regular file"
    elif st.st_uid != me:
        problem = f"is owned by user id {st.st_uid}, not by you ({me})"
    elif st.st_mode & 0o022:
        problem = f"is writable by {'its group' if st.st_mode & 0o020 else 'others'} (mode {st.st_mode & 0o7777:o})"
    else:
        return
    raise CompileError(f"{what} {problem}: robodyn loads compiled code only from a cache that you alone can write; "
                       "remove it or run chmod go-w on it, or set ROBODYN_CACHE to a private folder (mode 0700)")


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


def python_flags() -> list[str]:
    inc = sysconfig.get_paths().get("include")
    if inc and os.path.exists(os.path.join(inc, "Python.h")):
        return ["-DRD_PYTHON", f"-I{inc}"]
    return []


def numpy_flags() -> list[str]:
    """``-DRD_NUMPY`` and the folder of NumPy's C headers (a compiled model's CPython entry allocates its result
    with NumPy's C API), with NumPy's version in the flags and so in the cache key: a library built against one
    NumPy is not loaded by another. [] without the headers (then the model has no CPython entry)."""
    import numpy as np

    inc = np.get_include()
    if not os.path.exists(os.path.join(inc, "numpy", "arrayobject.h")):
        return []
    return ["-DRD_NUMPY", f"-I{inc}", "-DRD_NUMPY_VERSION=" + "".join(c if c.isalnum() else "_" for c in np.__version__)]


#: the x86-64 micro-architecture levels a library can be built for alone (-DRD_ARCH=N), highest first, with the
#: CPU features each needs beyond the level below (as Linux's /proc/cpuinfo names them; v3 includes v2's)
X86_LEVELS = ((4, frozenset({"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"})),
              (3, frozenset({"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave", "cx16",
                             "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"})))


def x86_level(cpuinfo: str) -> int | None:
    """The highest level of :data:`X86_LEVELS` whose features the first ``flags`` line of ``cpuinfo`` (the text of
    /proc/cpuinfo) lists, or None (another CPU, or below x86-64-v3)."""
    line = next((ln for ln in cpuinfo.splitlines() if ln.startswith("flags")), "")
    flags = set(line.partition(":")[2].split())
    level, needed = None, set()
    for candidate, features in reversed(X86_LEVELS):
        needed |= features
        if needed <= flags:
            level = candidate
    return level


def arch_flags() -> list[str]:
    """``-DRD_ARCH=N``, N this machine's x86-64 level (:func:`x86_level`; Linux only), for a library that only
    this machine loads: robodyn's generic kernels compile their one clone of that level instead of four (a build
    4-5 times shorter), a customized model its AVX2 function without the default clone (Panda's forward dynamics
    2.5-3.1 s instead of 4.5); [] elsewhere. The level is in the flags, so in the cache key: a cache shared with
    a machine of another level holds one library per level."""
    if not sys.platform.startswith("linux") or os.uname().machine != "x86_64":
        return []
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            level = x86_level(fh.read(1 << 16))  # the first processor's lines suffice
    except OSError:
        return []
    return [] if level is None else [f"-DRD_ARCH={level}"]


def cache_key(source: str, compiler: str, flags) -> str:
    """SHA-256 (hex) of everything that determines the library: source, compiler, flags, robodyn version."""
    text = "\0".join([source, compiler, " ".join(flags), __version__, sys.implementation.cache_tag or ""])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _valid(lib_path: Path, sidecar: Path, key: str) -> bool:
    """True when the library's bytes hash to what its sidecar recorded for ``key``."""
    try:
        recorded = sidecar.read_text(encoding="ascii").split()
        return recorded == [key, _file_sha256(lib_path)]
    except (OSError, UnicodeDecodeError):
        return False


@contextlib.contextmanager
def _lock(path: Path):
    try:
        import fcntl
    except ImportError:  # not POSIX: the sidecar check still rejects half-written or foreign files
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _die_with_parent(parent: int):
    """preexec_fn (Linux): ask the kernel for SIGTERM when the parent dies; exit at once if it already has."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(1)


#: the shell between Python and the compiler (Linux): on SIGTERM (sent by the kernel when Python dies)
#: it kills its whole process group, the compiler's helper processes included
_GUARD = 'trap "kill -KILL 0" TERM; "$@" & wait $!'


def run_compiler(argv: list[str], cwd: Path, timeout: float | None = None, description: str = "compiling") -> str:
    """Run the compiler ``argv`` in ``cwd`` in its own process group; returns its standard error.

    The whole group is killed on timeout (CompileTimeoutError), on Ctrl-C and when Python dies (Linux).
    A failing compiler raises CompilerFailedError with the end of its messages.
    """
    linux = sys.platform.startswith("linux") and shutil.which("sh") is not None
    cmd = ["sh", "-c", _GUARD, "sh", *argv] if linux else argv
    kwargs = {"preexec_fn": (lambda p=os.getpid(): _die_with_parent(p))} if linux else {}
    proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True, **kwargs)
    start = time.monotonic()
    try:
        with progress(description, total=None):
            try:
                _, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                raise CompileTimeoutError(
                    f"compiling took more than timeout = {timeout:g} s (killed after {time.monotonic() - start:.1f} s); "
                    "give a larger timeout, use parameters='base' (smaller model) or backend='numpy'") from None
    except BaseException:
        _kill_group(proc)
        raise
    err = err.decode("utf-8", "replace")
    if proc.returncode != 0:
        raise CompilerFailedError(f"C compiler {argv[0]} failed on the generated model (exit {proc.returncode}): "
                                  + " | ".join(err.strip().splitlines()[-8:]))
    return err


def _kill_group(proc) -> None:
    if proc.poll() is None:
        with contextlib.suppress(OSError):
            if hasattr(os, "killpg"):
                os.killpg(proc.pid, signal.SIGKILL)
            else:  # Windows: no process groups here; the compiler itself
                proc.kill()
    with contextlib.suppress(Exception):
        proc.wait(timeout=5)


def build_library(source: str, flags: list[str], timeout: float | None = None, description: str = "compiling",
                  prefix: str = "rd", preferred: tuple[str, ...] = ()) -> Path:
    """Compile ``source`` (C99) with ``flags`` into the cache unless a verified copy is there; the library's path,
    ``PREFIX_KEY.so`` in the cache folder.

    The cache key covers the source, the compiler, the flags and robodyn's version; the build runs under an
    exclusive lock in a temporary folder (:func:`run_compiler`) and the library is moved in with a sidecar holding
    its SHA-256, checked before every use: a corrupt or foreign file is rebuilt, never loaded.  ``preferred``
    (:data:`PARALLEL`, :data:`COMBINE_PAIRS`): flags added first; where the compiler fails with them and then
    builds without, the library is the one without and the refusal is remembered (:func:`refused_marker`).

    Raises
    ------
    CompilerNotFoundError, CompileTimeoutError, CompileError (also for a cache folder that cannot be written)
    """
    refused = refused_marker("preferred flags", preferred) if preferred else None
    if refused is None or recently_refused(refused):
        return _build_library(source, flags, timeout, description, prefix)
    try:
        return _build_library(source, [*flags, *preferred], timeout, description, prefix)
    except CompilerFailedError as exc:  # only the compiler's own failure: a refused cache file is raised as it is
        library = _build_library(source, flags, timeout, description, prefix)  # the source's own error if any
        with contextlib.suppress(OSError):
            refused.write_text(str(exc), encoding="utf-8")
        return library


def _build_library(source: str, flags: list[str], timeout: float | None, description: str, prefix: str) -> Path:
    compiler = find_compiler()
    key = cache_key(source, compiler, flags)
    folder = cache_dir()
    stem = f"{prefix}_{key[:32]}"
    lib_path, sidecar = folder / f"{stem}.so", folder / f"{stem}.sha256"
    try:
        with _lock(folder / f"{stem}.lock"):
            for path in (lib_path, sidecar):
                if os.path.lexists(path):
                    check_private(path, f"cached file {str(path)!r}", follow=False)
            if not _valid(lib_path, sidecar, key):
                sidecar.unlink(missing_ok=True)
                with tempfile.TemporaryDirectory(dir=folder, prefix=".build-") as tmp:
                    (Path(tmp) / "model.c").write_text(source, encoding="utf-8")
                    run_compiler([compiler, *flags, "model.c", "-o", "model.so", "-lm"], Path(tmp), timeout,
                                 description)
                    os.chmod(Path(tmp) / "model.so", 0o700)  # (the compiler's mode follows the umask: maybe g+w)
                    digest = _file_sha256(Path(tmp) / "model.so")
                    os.replace(Path(tmp) / "model.so", lib_path)
                    (Path(tmp) / "sidecar").write_text(f"{key}\n{digest}\n", encoding="ascii")
                    os.chmod(Path(tmp) / "sidecar", 0o600)
                    os.replace(Path(tmp) / "sidecar", sidecar)
    except OSError as exc:
        raise CompileError(f"compile cache {str(folder)!r}: {exc.strerror or exc}; set ROBODYN_CACHE to a writable "
                           "folder") from None
    return lib_path


def compile_library(source: str, declarations: str, timeout: float | None = None, description: str = "compiling",
                    include: tuple[str, ...] = ()):
    """Compile ``source`` (C99) into the cache if needed, verify it, and load it; ``include``: folders of the
    headers it includes besides the system's.

    Returns ``(ffi, lib, module)``: the cffi handle of the library and its CPython module ``rdmodel``
    (None when Python's headers are missing or the source has no Python entry).

    Raises
    ------
    CompilerNotFoundError, CompileTimeoutError, CompileError
    """
    import cffi

    flags = flags_for(source) + [f"-I{folder}" for folder in include] + python_flags() + arch_flags()
    entry = "-DRD_PYTHON" in flags and "PyInit_rdmodel" in source
    if entry and "numpy/arrayobject.h" in source:  # an entry on NumPy's C API: none without its headers
        flags += numpy_flags()
        entry = "-DRD_NUMPY" in flags
    lib_path = build_library(source, flags, timeout, description, preferred=preferred_flags(source))
    ffi = cffi.FFI()
    ffi.cdef(declarations)
    try:
        lib = ffi.dlopen(str(lib_path))
    except OSError as exc:
        raise CompileError(f"cannot load the compiled model {lib_path} ({exc}); delete it and retry") from None
    module = None
    if entry:
        loader = importlib.machinery.ExtensionFileLoader("rdmodel", str(lib_path))
        spec = importlib.util.spec_from_file_location("rdmodel", str(lib_path), loader=loader)
        try:
            module = importlib.util.module_from_spec(spec)
            loader.exec_module(module)
        except ImportError as exc:
            raise CompileError(f"cannot load the compiled model {lib_path} ({exc}); delete it and retry") from None
    return ffi, lib, module
