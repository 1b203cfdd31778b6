"""Generic compiled kernels: the recursive algorithms for any robot, compiled once per machine, parallel over states.

Unlike :func:`robodyn.compile` (a customized model generated and compiled for one robot), these kernels are one
C library (``kernels.c``, shipped with robodyn) that reads the robot as plain data, so they serve any robot and
any number of joints without a per-robot compile, and they split batches of states over threads (the C code runs
without the GIL). They implement:

- inverse dynamics by Newton–Euler, Khalil & Dombre [9.84]–[9.94] (:func:`inverse_dynamics`, :func:`gravity_torques`),
- the inertia matrix by composite links, Khalil & Dombre Appendix 8 (:func:`inertia_matrix`),
- direct dynamics by the O(n) articulated-body recursion, Khalil & Dombre §9.7.2 (:func:`forward_dynamics`),
- the regressor of the standard parameters, Khalil & Dombre [9.36] (:func:`regressor`).

Each function has the signature of its NumPy counterpart in :mod:`robodyn` plus ``threads=`` (default: every
core this process may use) and returns the same numbers (float64; differences are rounding, ~1e-15 relative).
The library is built on first use with the machine's C compiler into robodyn's cache folder (``$ROBODYN_CACHE``,
else ``~/.cache/robodyn``), keyed by a hash of the source, flags and compiler, and verified by its SHA-256 before
it is loaded; :func:`available` says whether it can be used.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import subprocess
import tempfile
import threading
from importlib import resources
from pathlib import Path

import numpy as np

from robodyn._arrays import as_real_array, check_array, finite_result, joint_arrays
from robodyn._threads import run_chunks
from robodyn.errors import ModelError, RobodynError
from robodyn.model.robot import Robot

_DECLARATIONS = """
typedef struct {
    int nf, n;
    const int *parent; const int *sigma; const int *joint;
    const double *RA; const double *pA; const double *theta; const double *r;
    const double *J; const double *MS; const double *M; const double *Ia;
} rd_model;
int rd_rnea(const rd_model *m, long count, const double *q, const double *qd, const double *qdd,
            const double *g, long g_stride, const double *wrench, double *tau);
int rd_gravity(const rd_model *m, long count, const double *q, const double *g, long g_stride, double *tau);
int rd_crba(const rd_model *m, long count, const double *q, double *A);
int rd_aba(const rd_model *m, long count, const double *q, const double *qd, const double *tau,
           const double *g, long g_stride, const double *wrench, double *qdd);
int rd_regressor(const rd_model *m, long count, const double *q, const double *qd, const double *qdd,
                 const double *g, long g_stride, double *D, long stride);
"""
_FLAGS = ("-O3", "-std=c99", "-shared", "-fPIC", "-fno-math-errno")
_LOCK = threading.Lock()
#: The loaded (ffi, lib), once per process; or the reason it cannot be built here.
_LIBRARY: list = []
_MODULE: list = []  # the CPython module of the same library (None without Python's headers)
_UNAVAILABLE: list[str] = []
#: Smallest number of float64 states for which robodyn's default algorithms hand a batch to these kernels.
MIN_BATCH = 128


class NativeUnavailableError(RobodynError):
    """The generic kernels cannot be built here (no C compiler, or the build failed); use the NumPy functions."""


def _source() -> str:
    return resources.files("robodyn.native").joinpath("kernels.c").read_text(encoding="utf-8")


def _load():
    """Build (once per machine) and load (once per process) the kernel library."""
    with _LOCK:
        if _LIBRARY:
            return _LIBRARY[0]
        import cffi

        from robodyn.symbolic.codegen.build import _python_flags, cache_dir, find_compiler

        try:
            compiler = find_compiler()
        except RobodynError as exc:
            raise NativeUnavailableError(str(exc)) from None
        source = _source()
        flags = list(_FLAGS) + _python_flags()  # with Python's headers: also the module rdgeneric (single states)
        version = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout
        key = hashlib.sha256("\0".join([source, " ".join(flags), version]).encode()).hexdigest()[:24]
        folder = Path(cache_dir())
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise NativeUnavailableError(f"cache folder {str(folder)!r} cannot be created ({exc.strerror}); "
                                         "set ROBODYN_CACHE to a writable folder") from None
        lib_path, sum_path = folder / f"rdgeneric_{key}.so", folder / f"rdgeneric_{key}.sha256"
        if not _verified(lib_path, sum_path):
            with tempfile.TemporaryDirectory(dir=folder) as tmp:
                c_file, out = Path(tmp) / "kernels.c", Path(tmp) / "kernels.so"
                c_file.write_text(source, encoding="utf-8")
                proc = subprocess.run([compiler, *flags, str(c_file), "-o", str(out), "-lm"],
                                      capture_output=True, text=True)
                if proc.returncode != 0:
                    raise NativeUnavailableError(f"{compiler} failed on robodyn's generic kernels:\n{proc.stderr[-2000:]}")
                digest = hashlib.sha256(out.read_bytes()).hexdigest()
                (Path(tmp) / "sum").write_text(digest)
                os.replace(out, lib_path)
                os.replace(Path(tmp) / "sum", sum_path)
        ffi = cffi.FFI()
        ffi.cdef(_DECLARATIONS)
        module = None
        if "-DRD_PYTHON" in flags:
            loader = importlib.machinery.ExtensionFileLoader("rdgeneric", str(lib_path))
            spec = importlib.util.spec_from_file_location("rdgeneric", str(lib_path), loader=loader)
            module = importlib.util.module_from_spec(spec)
            loader.exec_module(module)
        _LIBRARY.append((ffi, ffi.dlopen(str(lib_path))))
        _MODULE.append(module)
        return _LIBRARY[0]


def _verified(lib_path: Path, sum_path: Path) -> bool:
    """True when the cached library exists and its SHA-256 is the one recorded when it was built."""
    try:
        return hashlib.sha256(lib_path.read_bytes()).hexdigest() == sum_path.read_text().strip()
    except OSError:
        return False


def available() -> bool:
    """True when the generic kernels are built (or can be built) and loaded on this machine (tried once)."""
    if _LIBRARY:
        return True
    if _UNAVAILABLE:
        return False
    try:
        _load()
    except NativeUnavailableError as exc:
        _UNAVAILABLE.append(str(exc))
        return False
    return True


def takes_batch(dtype, batch: tuple[int, ...]) -> bool:
    """Whether a default algorithm (``rd.inverse_dynamics``, ``gravity_torques``, ``inertia_matrix``,
    ``forward_dynamics``, ``regressor``) runs a batch of this dtype and shape on these kernels: float64, at least
    ``MIN_BATCH`` states, the kernels available, and the environment variable ROBODYN_NATIVE not set to 0."""
    if np.dtype(dtype) != np.float64 or int(np.prod(batch, dtype=np.int64)) < MIN_BATCH:
        return False
    return os.environ.get("ROBODYN_NATIVE", "").strip() != "0" and available()


class _Model:
    """The robot as the C struct ``rd_model`` (arrays kept alive by this object)."""

    def __init__(self, ffi, robot: Robot):
        nf = robot.nf
        self.arrays = self.arrays_of(robot)
        self.struct = ffi.new("rd_model *")
        self.struct.nf, self.struct.n = nf, robot.n
        for name, a in self.arrays.items():
            setattr(self.struct, name, ffi.cast("const int *" if a.dtype == np.int32 else "const double *",
                                                ffi.from_buffer(a)))

    @staticmethod
    def arrays_of(robot: Robot) -> dict:
        """The fields of rd_model as contiguous int32 / float64 arrays."""
        nf = robot.nf
        joint = np.full(nf, -1, dtype=np.int32)
        joint[robot.joint_frames] = np.arange(robot.n, dtype=np.int32)
        cg, sg, ca, sa = np.cos(robot.gamma), np.sin(robot.gamma), np.cos(robot.alpha), np.sin(robot.alpha)
        zero = np.zeros(nf)
        # Rot(z, γ) Rot(x, α), with round-off around 0 and ±1 snapped as the NumPy path does (cos(π/2) = 0)
        RA = np.stack([cg, -sg * ca, sg * sa, sg, cg * ca, -cg * sa, zero, sa, ca], -1)
        for exact in (0.0, 1.0, -1.0):
            RA[np.abs(RA - exact) < 1e-15] = exact
        pA = np.stack([robot.d * cg, robot.d * sg, robot.b], -1)
        arrays = {
            "parent": (robot.antecedent - 1).astype(np.int32), "sigma": robot.sigma.astype(np.int32),
            "joint": joint, "RA": RA, "pA": pA, "theta": robot.theta, "r": robot.r, "J": robot.J,
            "MS": robot.MS, "M": robot.M, "Ia": robot.Ia,
        }
        return {k: np.ascontiguousarray(v, dtype=np.int32 if v.dtype.kind == "i" else np.float64)
                for k, v in arrays.items()}


def _run(robot: Robot, kernel: str, count: int, inputs: list, out: np.ndarray, threads: int | None, extra=()):
    """Call ``kernel`` on ``count`` states split into chunks over threads (robodyn._threads).

    ``inputs``: per-state arrays (count, ...) or (None / (array, stride) pairs for gravity); ``out``: (count, ...).
    """
    ffi, lib = _load()
    model = _Model(ffi, robot)
    fn = getattr(lib, kernel)
    status = []

    def call(lo: int, hi: int) -> None:
        args = []
        for item in inputs:
            if item is None:
                args.append(ffi.NULL)
            elif isinstance(item, tuple):  # (gravity array, stride per state)
                g, stride = item
                args += [ffi.cast("const double *", ffi.from_buffer(g[lo * stride:] if stride else g)), stride]
            else:
                args.append(ffi.cast("const double *", ffi.from_buffer(item[lo:hi])))
        res = fn(model.struct, hi - lo, *args, ffi.cast("double *", ffi.from_buffer(out[lo:hi])), *extra)
        if res:
            status.append(res)

    run_chunks(count, call, threads)
    if any(s < 0 for s in status):
        raise MemoryError("robodyn generic kernels: out of memory")
    if status:
        k = min(status) - 1
        name = robot.joint_names[robot.joint_frames[k]]
        raise ModelError(
            f"robot '{robot.name}', joint {name}: articulated inertia <= 0, the direct model is singular (the links "
            "it moves are massless and its rotor inertia Ia is 0); give those links mass or the joint a rotor "
            "inertia Ia"
        )


#: kinds of the single-state entry
_SINGLE = {"inverse_dynamics": 0, "gravity_torques": 1, "inertia_matrix": 2, "forward_dynamics": 3}


def single_state(robot: Robot, kind: str, q, b=None, c=None, gravity=None):
    """One state through the compiled kernels with about a microsecond of call overhead, or None.

    ``kind``: "inverse_dynamics" (q, qd, qdd), "gravity_torques" (q), "inertia_matrix" (q) or
    "forward_dynamics" (q, qd, tau); friction of [9.26]–[9.28] and rotor inertias included as in robodyn's
    functions. Every array must be a 1-D float64 array of the right size (gravity (3,) or None for the robot's);
    anything else (a batch, another dtype, NaN/inf, a robot with a Stribeck term, a singular state, a result that
    overflows) returns None, and the caller's general path handles the call with its checks and messages.
    """
    if not isinstance(robot, Robot) or os.environ.get("ROBODYN_NATIVE", "").strip() == "0" or \
            (kind in ("inverse_dynamics", "forward_dynamics") and (b is None or c is None)):
        return None
    if (not _MODULE and not available()) or _MODULE[0] is None:
        return None
    memo = robot.derived.memo
    cap = memo.get("native_single")
    if cap is None:
        if np.any(robot.Fst != 0):
            memo["native_single"] = cap = False
        else:
            cap = memo["native_single"] = _pack(robot)
    if cap is False:
        return None
    n = robot.n
    out = np.empty((n, n) if kind == "inertia_matrix" else n)
    g = memo.get("native_gravity")
    if g is None:
        g = memo["native_gravity"] = np.array(robot.gravity, dtype=np.float64)
    code = _MODULE[0].single(cap, _SINGLE[kind], q, q if b is None else b, q if c is None else c,
                             g if gravity is None else gravity, out)
    return out if code == 0 else None


def _pack(robot: Robot):
    """The robot as a capsule of the single-state entry (copied arrays; see kernels.c)."""
    m = _Model.arrays_of(robot)
    jf = robot.joint_frames
    ints = np.concatenate([[robot.nf, robot.n], m["parent"], m["sigma"], m["joint"]]).astype(np.int32)
    doubles = np.concatenate([m[k].reshape(-1) for k in ("RA", "pA", "theta", "r", "J", "MS", "M", "Ia")]
                             + [robot.Fc[jf], robot.Fv[jf], robot.Foff[jf]]).astype(np.float64)
    return _MODULE[0].model(ints, doubles)


def _flat(a: np.ndarray, tail: tuple[int, ...]) -> np.ndarray:
    return np.ascontiguousarray(a.reshape((-1,) + tail), dtype=np.float64)


def _gravity(robot: Robot, gravity, batch: tuple[int, ...]):
    """(array, stride): one vector for all states (stride 0) or one per state (stride 3)."""
    if gravity is None:
        return np.ascontiguousarray(robot.gravity, dtype=np.float64), 0
    g = as_real_array("gravity", gravity)
    if g.shape == (3,):
        return check_array("gravity", g, (3,), (), np.float64).copy(), 0
    return _flat(check_array("gravity", g, (3,), batch, np.float64), (3,)).reshape(-1), 3  # flat: offset lo * 3


def _wrenches(robot: Robot, wrenches, batch: tuple[int, ...]):
    if wrenches is None:
        return None
    return _flat(check_array("wrenches", wrenches, (robot.nf, 6), batch, np.float64), (robot.nf, 6))


def inverse_dynamics(robot: Robot, q, qd, qdd, wrenches=None, gravity=None, threads: int | None = None) -> np.ndarray:
    """Inverse dynamic model Γ(q, q̇, q̈) by Newton–Euler, Khalil & Dombre [9.84]–[9.94], compiled and threaded.

    Same arguments and result as :func:`robodyn.inverse_dynamics` (friction and rotor inertia included), plus
    ``threads``: number of threads for the batch (default: every core). Shapes: q, qd, qdd (..., n); wrenches
    (..., nf, 6) exerted by link j on the environment, in R_j; gravity (3,) or (..., 3) in R_0 (m/s²).
    Returns float64 (..., n).
    """
    from robodyn import friction_torques

    _, batch, a = joint_arrays(robot, q=q, qd=qd, qdd=qdd)
    n = robot.n
    count = int(np.prod(batch, dtype=np.int64))
    out = np.empty((count, n))
    ins = [_flat(a[k], (n,)) for k in ("q", "qd", "qdd")]
    _run(robot, "rd_rnea", count, ins + [_gravity(robot, gravity, batch), _wrenches(robot, wrenches, batch)], out,
         threads)
    return finite_result("inverse_dynamics",
                         out.reshape(batch + (n,)) + friction_torques(robot, a["qd"].astype(np.float64)))


def gravity_torques(robot: Robot, q, gravity=None, threads: int | None = None) -> np.ndarray:
    """Gravity torques Q(q) = Γ(q, 0, 0) without friction (Khalil & Dombre [9.8]), compiled and threaded.

    q (..., n) → (..., n) float64 (N m | N).
    """
    _, batch, a = joint_arrays(robot, q=q)
    n = robot.n
    count = int(np.prod(batch, dtype=np.int64))
    out = np.empty((count, n))
    _run(robot, "rd_gravity", count, [_flat(a["q"], (n,)), _gravity(robot, gravity, batch)], out, threads)
    return finite_result("gravity_torques", out.reshape(batch + (n,)))


def inertia_matrix(robot: Robot, q, threads: int | None = None) -> np.ndarray:
    """Inertia matrix A(q) by composite links (Khalil & Dombre Appendix 8), Ia on the diagonal.

    q (..., n) → (..., n, n) float64.
    """
    _, batch, a = joint_arrays(robot, q=q)
    n = robot.n
    count = int(np.prod(batch, dtype=np.int64))
    out = np.zeros((count, n, n))
    _run(robot, "rd_crba", count, [_flat(a["q"], (n,))], out, threads)
    return finite_result("inertia_matrix", out.reshape(batch + (n, n)))


def forward_dynamics(robot: Robot, q, qd, tau, wrenches=None, gravity=None, threads: int | None = None) -> np.ndarray:
    """Direct dynamic model q̈ = A⁻¹(Γ − H) by the O(n) articulated-body recursion (Khalil & Dombre §9.7.2).

    Same arguments and result as :func:`robodyn.forward_dynamics`, plus ``threads``. Returns float64 (..., n).

    Raises
    ------
    ModelError
        A singular model (a joint that moves only massless links and has no rotor inertia).
    """
    from robodyn import friction_torques

    _, batch, a = joint_arrays(robot, q=q, qd=qd, tau=tau)
    n = robot.n
    count = int(np.prod(batch, dtype=np.int64))
    qd64 = a["qd"].astype(np.float64)
    rhs = _flat(a["tau"] - friction_torques(robot, qd64), (n,))
    out = np.empty((count, n))
    ins = [_flat(a["q"], (n,)), _flat(qd64, (n,)), rhs]
    _run(robot, "rd_aba", count, ins + [_gravity(robot, gravity, batch), _wrenches(robot, wrenches, batch)], out,
         threads)
    return finite_result("forward_dynamics", out.reshape(batch + (n,)))


def regressor(robot: Robot, q, qd, qdd, friction: bool = True, gravity=None, threads: int | None = None) -> np.ndarray:
    """Regressor D(q, q̇, q̈) of the standard parameters, Γ = D K (Khalil & Dombre [9.36]), compiled and threaded.

    Same columns as :func:`robodyn.regressor` (11 per frame: XX XY XZ YY YZ ZZ MX MY MZ M Ia, then Fc Fv Foff
    per joint with ``friction=True``). q, qd, qdd (..., n) → (..., n, 11 nf [+ 3 n]) float64.
    """
    _, batch, a = joint_arrays(robot, q=q, qd=qd, qdd=qdd)
    n, nf = robot.n, robot.nf
    count = int(np.prod(batch, dtype=np.int64))
    cols = 11 * nf + (3 * n if friction else 0)
    out = np.zeros((count, n, cols))
    ins = [_flat(a[k], (n,)) for k in ("q", "qd", "qdd")]
    _run(robot, "rd_regressor", count, ins + [_gravity(robot, gravity, batch)], out, threads, extra=(cols,))
    k = np.arange(n)
    out[:, k, 11 * robot.joint_frames + 10] = _flat(a["qdd"], (n,))
    if friction:
        qd64 = _flat(a["qd"], (n,))
        out[:, k, 11 * nf + 3 * k] = np.sign(qd64)
        out[:, k, 11 * nf + 3 * k + 1] = qd64
        out[:, k, 11 * nf + 3 * k + 2] = 1.0
    return finite_result("regressor", out.reshape(batch + (n, cols)))


__all__ = ["MIN_BATCH", "NativeUnavailableError", "available", "takes_batch", "forward_dynamics", "gravity_torques", "inertia_matrix",
           "inverse_dynamics", "regressor"]
