"""Generic compiled kernels: the recursive algorithms for any robot, compiled once per machine, parallel over states.

Unlike :func:`robodyn.compile` (a customized model generated and compiled for one robot), these kernels are one
C library (``kernels.c``, shipped with robodyn) that reads the robot as plain data, so they serve any robot and
any number of joints without a per-robot compile. They evaluate four states side by side in SIMD lanes and split
a batch of states over threads inside C (POSIX threads started for the call and never left waiting; results are
identical bit for bit for any thread count; serial where the system has no POSIX threads), without Python's GIL.
They implement:

- inverse dynamics by Newton–Euler, Khalil & Dombre [9.84]–[9.94] (:func:`inverse_dynamics`, :func:`gravity_torques`),
- the inertia matrix by composite links, Khalil & Dombre Appendix 8 (:func:`inertia_matrix`),
- direct dynamics by the O(n) articulated-body recursion, Khalil & Dombre §9.7.2 (:func:`forward_dynamics`),
- the regressor of the standard parameters, Khalil & Dombre [9.36] (:func:`regressor`),
- ∂Γ/∂q and ∂Γ/∂q̇ of the rigid-body inverse dynamics by forward-mode differentiation of the Newton–Euler
  recursion (Carpentier & Mansard's recursive derivatives in Khalil's link frames;
  :func:`inverse_dynamics_derivatives`), and the derivatives of the direct dynamics through a Cholesky
  factorisation of A(q) (:func:`forward_dynamics_derivatives`),
- the kinematics of :mod:`robodyn.kinematics`: frame poses, the frame Jacobian, J̇q̇, link velocities and
  accelerations, and the whole J̇ of :func:`robodyn.dynamics.jacobian_derivative` (:func:`kinematics_state`,
  :func:`bind_kinematics`, :func:`kinematics_batch`), and the task-space dynamics of one state
  (:func:`task_space_state`).

The joint-space dynamics run on a copy of the model with every fixed frame folded into the frame it moves with
(:func:`_folded`: a URDF's tool, sensor and foot frames cost nothing per state); wrenches per frame, the regressor
and the kinematics use the whole model.

Each function has the signature of its NumPy counterpart in :mod:`robodyn` plus ``threads=`` (default: every
core this process may use) and returns the same numbers (float64; differences are rounding, ~1e-15 relative).
By default the sines and cosines of the joint angles are the C library's (NumPy's values), computed four states
at once by GNU libc's algorithm where they match it (:func:`exact_trig`); ``trig="fast"`` (:func:`check_trig`)
computes them by a vectorised sincos within 1 ulp of them instead: docs/scaling.md.
A batch's result of 4 MiB or more comes from a small pool of result blocks (:func:`result_array`): a loop over
batches of one shape writes into memory already mapped instead of fresh pages; :func:`release_memory` empties it.
The library is a CPython extension module built on first use with the machine's C compiler into robodyn's
cache folder (``$ROBODYN_CACHE``, else ``~/.cache/robodyn``), keyed by a hash of the source, flags and compiler,
and verified by its SHA-256 before it is loaded.  The loaded module, or why it cannot load, is kept for the process
in robodyn's one workspace (:meth:`robodyn.model.workspace.Workspace.shared`). :func:`available` says whether it
can be used (a C compiler and Python's C headers are needed); a failed build is tried again by the next process (a
failed *threaded* build of one compiler binary is skipped for :data:`FAILED_TTL`, then tried again).  The friction
law in C is :func:`robodyn.model.friction.friction_law`, Stribeck term included.
Whether robodyn's own functions hand a call to these kernels is decided by :mod:`robodyn.dynamics.executor`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.machinery
import importlib.util
import math
import os
import types
from importlib import resources

import numpy as np

from robodyn.model.arguments import joint_arrays
from robodyn.arrays import check_out, singular_model_error
from robodyn.threads import thread_count, usable_cores
from robodyn.errors import InputError, ModelError, NumericOverflowError, RobodynError
from robodyn.native.build import (FLAGS, PARALLEL, REFUSED_TTL, CompileError, CompilerFailedError, CompileTimeoutError,
                                  arch_flags, build_library, numpy_flags, python_flags, recently_refused,
                                  refused_marker)
from robodyn.model.inertia import moved_inertia
from robodyn.model.robot import Robot
from robodyn.model.workspace import WORKSPACE

_F64 = np.dtype(np.float64)
#: kinds of the C entries (kernels.c: rd_run)
_KINDS = ("inverse_dynamics", "gravity_torques", "inertia_matrix", "forward_dynamics", "regressor",
          "inverse_dynamics_derivatives", "forward_dynamics_derivatives")
#: the C kind of each function the kernels serve: its index in _KINDS, and the bias torques H(q, q̇) [9.95], which
#: are the inverse dynamics at q̈ = 0 (kind 0 given zeros for q̈)
_CODES = types.MappingProxyType({**{kind: k for k, kind in enumerate(_KINDS)}, "bias_torques": 0})


def _text(name: str) -> str:
    return resources.files("robodyn.native").joinpath(name).read_text(encoding="utf-8")


def parallel_source() -> str:
    """The C thread driver ``rd_parallel`` (``parallel.h``), shared by these kernels and every rd.compile
    library; needs ``<stdlib.h>``, and ``<pthread.h>`` with ``RD_THREADS`` defined for threads."""
    return _text("parallel.h")


def _source() -> str:
    """kernels.c with its ``#include "parallel.h"`` written out, so that the build and its cache key see one text."""
    return _text("kernels.c").replace('#include "parallel.h"\n', parallel_source(), 1)


#: Name of the library module: it carries the hash of the source, so an edited source is a new module (the C init
#: function is named after it, ``-DRD_MODULE``).
_MODULE_NAME = "robodyn.native._rdgeneric_" + hashlib.sha256(_source().encode()).hexdigest()[:20]
_MODULE_SHORT = _MODULE_NAME.rsplit(".", 1)[1]


class NativeUnavailableError(RobodynError):
    """The generic kernels cannot be built here (no C compiler, no Python headers, or the build failed); use the
    NumPy functions."""


class KernelError(RobodynError):
    """The generic kernels failed on valid input (out of memory, or a robodyn bug)."""


#: the values of the ``trig=`` argument of the dynamics functions: "exact", the C library's sines and cosines of the
#: joint angles (the values of NumPy's np.sin / np.cos, so the kernels equal the NumPy path to the last bit there;
#: computed in lanes by its own algorithm where :func:`exact_trig` says so), or "fast", four lanes at once by the
#: kernels' own sincos (fdlibm's reduction and minimax polynomials, within 1 ulp of the C library's; docs/scaling.md)
TRIG = ("exact", "fast")


def check_trig(trig) -> bool:
    """True for ``trig="fast"``, False for ``"exact"``; :class:`robodyn.errors.InputError` for anything else."""
    if type(trig) is str and trig in TRIG:
        return trig == "fast"
    raise InputError(f"trig={trig!r}: give trig='exact' (the C library's sin and cos, NumPy's values; the default) "
                     "or trig='fast' (the generic kernels' vectorised sincos, within 1 ulp of it)")


def _module():
    """The loaded kernel module (built once per machine, loaded once per process)."""
    module = WORKSPACE.shared(_MODULE_NAME, _load_or_error)
    if type(module) is str:
        raise NativeUnavailableError(module)
    return module


def _load_or_error():
    """The loaded module, or the message of why it cannot be loaded (kept for this process: the next one tries
    again)."""
    try:
        return _load()
    except NativeUnavailableError as exc:
        return str(exc)


#: the kernels' library compiled with POSIX threads (a batch split over threads)
THREADS = ("-DRD_THREADS", "-pthread")
#: How long a failed threaded build of the generic kernels is remembered (s): later processes then build serially
#: without trying threads again; after it (or with another compiler binary) the threaded build is tried again.
FAILED_TTL = REFUSED_TTL


def _load():
    """Build the library into the cache when needed (with POSIX threads where the system has them, its code
    generated on every core where the compiler can: :data:`robodyn.native.build.PARALLEL`) through
    robodyn's one build path (:func:`robodyn.native.build.build_library`: lock, SHA-256-verified cache,
    compiler killed with Python), and load it."""
    python = [f for f in python_flags() if f != "-DRD_PYTHON"]
    if not python:
        raise NativeUnavailableError("Python's C headers (Python.h) are not installed; robodyn's generic kernels "
                                     "are a Python extension module (install the python3-dev package)")
    source = _source()
    errors = []
    for threads in (THREADS, ()):
        flags = [*FLAGS, *threads, *python, *numpy_flags(), *arch_flags(), f"-DRD_MODULE={_MODULE_SHORT}"]
        try:
            # a threaded build this compiler failed (e.g. no POSIX threads) is skipped for FAILED_TTL, then tried
            # again; the serial build is never skipped: a failure of it lasts for this process only
            failed = refused_marker(source, flags) if threads else None
            if failed is not None and recently_refused(failed):
                errors.append(f"a threaded build failed less than {FAILED_TTL / 3600:g} h ago ({failed})")
                continue
            try:
                lib_path = build_library(source, flags, description="building robodyn's generic kernels",
                                         prefix="rdgeneric", preferred=PARALLEL)
            except CompileTimeoutError as exc:  # transient (a loaded machine): not remembered
                errors.append(str(exc))
                continue
            except CompileError as exc:
                if failed is not None and isinstance(exc, CompilerFailedError):  # the compiler's, not the cache's
                    with contextlib.suppress(OSError):  # not remembered: the next process tries threads again
                        failed.write_text(str(exc), encoding="utf-8")
                errors.append(str(exc))
                continue
        except RobodynError as exc:
            raise NativeUnavailableError(str(exc)) from None
        loader = importlib.machinery.ExtensionFileLoader(_MODULE_NAME, str(lib_path))
        spec = importlib.util.spec_from_file_location(_MODULE_NAME, str(lib_path), loader=loader)
        try:
            module = importlib.util.module_from_spec(spec)
            loader.exec_module(module)
        except ImportError as exc:  # a cached library that does not load: one line, the NumPy paths go on
            raise NativeUnavailableError(f"cannot load robodyn's generic kernels {lib_path} ({exc}); delete it "
                                         "and retry") from None
        return module
    raise NativeUnavailableError(f"the C compiler failed on robodyn's generic kernels: {errors[-1][-2000:]}")


def available() -> bool:
    """True when the generic kernels are built (or can be built) and loaded in this process (tried once)."""
    try:
        _module()
    except NativeUnavailableError:
        return False
    return True


def enabled() -> bool:
    """False while the environment variable ROBODYN_NATIVE is 0 (read at every call): robodyn's functions then
    neither build the kernels nor call them."""
    return os.environ.get("ROBODYN_NATIVE", "").strip() != "0"


def threaded() -> bool:
    """True when the loaded kernels split batches over threads (POSIX threads); False when they run serially."""
    return bool(_module().threaded())


def exact_trig() -> str:
    """How ``trig="exact"`` computes the sines and cosines of the joint angles in the loaded kernels: ``"lanes"``, four
    states at once by GNU libc's own algorithm (its build for processors with FMA), or ``"calls"``, a call of the C
    library's ``sin`` and ``cos`` per state. The lanes are used only where, when
    the kernels load, they equal this process's C library bit for bit on 8192 angles covering every path of the
    algorithm; the values are the C library's (NumPy's) either way, the lanes about twice as cheap and free of a
    call per angle (docs/scaling.md)."""
    return str(_module().exact_trig())


def _arrays_of(robot: Robot) -> dict:
    """The fields of the C model as contiguous int32 / float64 arrays."""
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


def _folded(robot: Robot, m: dict) -> tuple[dict, np.ndarray]:
    """The arrays of :func:`_arrays_of` with every fixed frame (σ = 2) folded into the frame it moves with, and
    the kept frames' indices: the model of the joint-space dynamics (Pinocchio's URDF parser does the same, which
    appends a fixed link's inertia to its parent joint's body).

    Frame i fixed is rigidly attached to its nearest moving ancestor k, by ^kT_i = ^kT_a(i) ^a(i)T_i with
    ^a(i)T_i = [RA_i, pA_i] Rot(z, θ_i) Trans(z, r_i) (``robot.derived.transforms``): its inertia moves into R_k
    about O_k (:func:`robodyn.model.inertia.moved_inertia`, [9.12]) and adds to frame k's, and a moving frame
    whose antecedent is fixed hangs from k through ^kT_a(j) [RA_j, pA_j] (its Rot(z, θ_j + q_j) Trans(z, r_j) as
    before).  A fixed frame with no moving ancestor is attached to the fixed base: no joint carries it, and it is
    dropped.  The joint torques, inertia matrix, accelerations and their derivatives are those of the full model up
    to rounding; the frames' own quantities (wrenches per frame, the regressor's columns, the kinematics) need the
    full model."""
    nf = robot.nf
    fixed, parent = robot.sigma == 2, m["parent"].copy()
    RA, pA = m["RA"].reshape(nf, 3, 3).copy(), m["pA"].copy()
    J, MS, M = m["J"].copy(), m["MS"].copy(), m["M"].copy()
    mover = np.arange(nf)                        # the frame each frame moves with (-1: the fixed base)
    R, p = np.empty((nf, 3, 3)), np.empty((nf, 3))  # ^kT_i of a fixed frame i, k = mover[i]
    for i in range(nf):  # antecedents first
        a = parent[i]
        if fixed[i]:
            C, p0, Ri = robot.derived.transforms[i]
            pi = p0 + robot.r[i] * C[:, 2]
            if a >= 0 and fixed[a]:
                R[i], p[i], mover[i] = R[a] @ Ri, R[a] @ pi + p[a], mover[a]
            else:
                R[i], p[i], mover[i] = Ri, pi, a
        elif a >= 0 and fixed[a]:
            RA[i], pA[i], parent[i] = R[a] @ RA[i], R[a] @ pA[i] + p[a], mover[a]
    for i in np.flatnonzero(fixed & (mover >= 0)):
        k = mover[i]
        Ji, MSi = moved_inertia(J[i], MS[i], M[i], R[i], p[i])
        J[k] += Ji
        MS[k] += MSi
        M[k] += M[i]
    keep = np.flatnonzero(~fixed)
    index = np.full(nf, -1, dtype=np.int32)
    index[keep] = np.arange(keep.size, dtype=np.int32)
    for exact in (0.0, 1.0, -1.0):  # as _arrays_of: a product's round-off around 0 and ±1 snapped
        RA[np.abs(RA - exact) < 1e-15] = exact
    folded = {"parent": np.where(parent[keep] >= 0, index[parent[keep]], -1), "RA": RA[keep], "pA": pA[keep],
              "J": J[keep], "MS": MS[keep], "M": M[keep]}
    folded.update({k: m[k][keep] for k in ("sigma", "joint", "theta", "r", "Ia")})
    return {k: np.ascontiguousarray(v, dtype=m[k].dtype) for k, v in folded.items()}, keep


def _capsule(robot: Robot, module):
    """The robot as the C model (a capsule holding copies of its arrays), kept in the per-robot workspace."""
    return WORKSPACE.value(robot, "native_model", lambda: _new_capsule(robot, module))


def _dynamics_capsule(robot: Robot, module):
    """The C model of the joint-space dynamics: the robot's fixed frames folded into the frames they move with
    (:func:`_folded`; the frames of a free flyer's base or a URDF's tool, feet and sensors cost nothing per state),
    else the robot's own :func:`_capsule`.  Kept in the per-robot workspace."""
    def made():
        folds = robot.n and np.any(robot.sigma == 2)
        return _new_capsule(robot, module, fold=True) if folds else _capsule(robot, module)

    return WORKSPACE.value(robot, "native_dynamics_model", made)


def packed(robot: Robot, fold: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The two buffers of the kernels' ``model(ints, doubles)`` (kernels.c): int32 [nf, n, parent, sigma, joint]
    and float64 [RA, pA, theta, r, J, MS, M, Ia, Fc, Fv, Foff, Fst, kst, Bst]; ``fold``: the fixed frames folded
    into the frames they move with (:func:`_folded`), the model of the joint-space dynamics."""
    m = _arrays_of(robot)
    nf = robot.nf
    if fold:
        m, keep = _folded(robot, m)
        nf = keep.size
    jf = robot.joint_frames
    ints = np.concatenate([[nf, robot.n], m["parent"], m["sigma"], m["joint"]]).astype(np.int32)
    doubles = np.concatenate([m[k].reshape(-1) for k in ("RA", "pA", "theta", "r", "J", "MS", "M", "Ia")]
                             + [getattr(robot, k)[jf] for k in ("Fc", "Fv", "Foff", "Fst", "kst", "Bst")]
                             ).astype(np.float64)
    return ints, doubles


def _new_capsule(robot: Robot, module, fold: bool = False):
    try:
        return module.model(*packed(robot, fold))
    except MemoryError:
        raise KernelError(f"robot '{robot.name}': robodyn's generic kernels ran out of memory while copying the "
                          f"model ({robot.nf} frames); free some memory, or set the environment variable "
                          "ROBODYN_NATIVE=0 to use the NumPy path") from None


def single_state(robot: Robot, kind: str, q, b=None, c=None, gravity=None):
    """One state through the compiled kernels with about a microsecond of call overhead, or None.

    ``kind``: "inverse_dynamics" (q, qd, qdd), "gravity_torques" (q), "inertia_matrix" (q) or
    "forward_dynamics" (q, qd, tau); friction of [9.26]–[9.28] and rotor inertias included as in robodyn's
    functions; "inverse_dynamics_derivatives" (q, qd, qdd): (2, n, n), ∂Γ/∂q and ∂Γ/∂q̇ (friction slope F_v on its
    diagonal); "forward_dynamics_derivatives" (q, qd, tau): (3, n, n), ∂q̈/∂q, ∂q̈/∂q̇, A⁻¹ (friction included).
    Every array must be a 1-D float64 array of the right size (gravity (3,) or None for the robot's); anything
    else (a batch, another dtype, NaN/inf, ROBODYN_NATIVE=0, the derivatives of a robot with a Stribeck term, a
    singular state, a result that overflows) returns None, and the caller's general path handles the call with its
    checks and messages.
    """
    if type(robot) is not Robot and not isinstance(robot, Robot):
        return None
    run = bind(robot, kind)
    return run(q, b, c, gravity) if run else None


def bind(robot: Robot, kind: str):
    """The entry of ``kind`` bound to ``robot`` once and kept in its workspace entry (key ``RUNNERS[kind]``):
    ``run(a, b, c, gravity, out=None, friction=True, least=0, fast=False)`` -> the result, or None where the kernels
    decline the call (the caller's general path then runs with its checks and messages); False where there are no
    kernels here or they cannot serve this robot (the derivatives of a Stribeck term, whose slope they do not have);
    None while ROBODYN_NATIVE=0 (nothing built, nothing kept: the next call asks again).

    ``run`` takes one 1-D float64 state through the single-state entry (not the regressor), and, with ``least`` > 0,
    a batch (..., n) of at least ``least`` states of float64 NumPy arrays of one shape, finite, with gravity None or
    (3,) float64, through the threaded batch entry (not the derivatives), ROBODYN_NATIVE not 0.  ``out``: the
    result's buffer (None: a new one); one that does not fit the call exactly is declined (the caller checks it).
    ``friction``: the regressor's friction columns (the other kinds always include friction).  ``fast``: the
    vectorised sincos of ``trig="fast"`` (:data:`TRIG`), one state and a batch alike.
    """
    run = WORKSPACE.get(robot, RUNNERS[kind])
    if run is None:
        run = WORKSPACE.value(robot, RUNNERS[kind], lambda: _runner(robot, kind))
    return run


#: the per-robot workspace key of each kind's bound entry (:func:`bind`)
RUNNERS = types.MappingProxyType({kind: "native_single_" + kind for kind in _CODES})


def _single_model(robot: Robot):
    """(capsule, gravity, the C entry, n, the dynamics' capsule) of the single-state entry (the robot's model for
    the kinematics and the task space, :func:`_dynamics_capsule` for the joint-space dynamics), False where there
    are no kernels here, or None while ROBODYN_NATIVE=0: then nothing is built, and nothing kept (the workspace keeps
    no None: the next call with the kernels switched on binds them)."""
    if not enabled():
        return None
    if not available():
        return False
    module = _module()
    return (_capsule(robot, module), np.array(robot.gravity, dtype=np.float64), module.single, robot.n,
            _dynamics_capsule(robot, module))


def _tail(robot: Robot, kind: str, friction: bool = True) -> tuple[int, ...]:
    """The shape of one state's result of ``kind``."""
    n = robot.n
    if kind == "regressor":
        return (n, 11 * robot.nf + (3 * n if friction else 0))
    return {"inertia_matrix": (n, n), "inverse_dynamics_derivatives": (2, n, n),
            "forward_dynamics_derivatives": (3, n, n)}.get(kind, (n,))


def _runner(robot: Robot, kind: str):
    """``run`` of :func:`bind`: everything that does not depend on the call (the model, the entries, the result's
    shape) bound once, behind the kernels' ``bound`` (:func:`_bound`), so that a single state costs the C entry
    (which checks its buffers and ROBODYN_NATIVE) alone."""
    single = WORKSPACE.value(robot, "native_single", lambda: _single_model(robot))
    if not single:
        return single
    if kind.endswith("_derivatives") and np.any(robot.Fst != 0):
        return False
    one = kind != "regressor"
    whole, g0, entry, n, cap = single
    if not one:  # the regressor's columns are every frame's parameters
        cap = whole
    code, shape, empty, f64, ndarray = _CODES[kind], _tail(robot, kind), np.empty, _F64, np.ndarray
    many = not kind.endswith("_derivatives")
    inputs = 1 if kind in ("gravity_torques", "inertia_matrix") else 2 if kind == "bias_torques" else 3
    rest = np.zeros(n) if kind == "bias_torques" else None  # q̈ = 0 of one state

    def run(q, b, c, gravity, out=None, friction=True, least=0, fast=False):
        if rest is not None:
            c = rest
        # the C entry checks out's dtype, size and layout, not its shape: a (1, n) or (n * n,) buffer is declined here
        if one and (out is None or (type(out) is ndarray and out.shape == shape)):
            res = empty(shape) if out is None else out
            status = entry(cap, code, q, b, c, g0 if gravity is None else gravity, res, fast)
            if status == 0:
                return res
            if status != -1:
                return None
        if not least:
            return None
        # a batch: float64 NumPy arrays of one shape (..., n), else the caller's general path
        xs = (q, b, c)[:inputs]
        if type(q) is not ndarray or q.shape[-1:] != (n,) or not n or q.size // n < least:
            return None
        batch, count = q.shape[:-1], q.size // n
        for x in xs:
            if type(x) is not ndarray or x.dtype != f64 or x.shape != q.shape:
                return None
        if gravity is None:
            g = g0
        elif type(gravity) is ndarray and gravity.dtype == f64 and gravity.shape == (3,) and np.isfinite(gravity).all():
            g = _native(gravity)
        else:
            return None
        tail = shape if kind != "regressor" else _tail(robot, kind, friction)
        if out is not None and (type(out) is not ndarray or out.shape != batch + tail or out.dtype != f64
                                or not out.flags.c_contiguous or not out.flags.writeable):
            return None
        if count == 1 and one:  # one state in a batch's shape: the single-state entry, the batch's row bit for bit
            res = empty(batch + tail) if out is None else out
            rows = [x.reshape(n) for x in xs] + ([rest] if rest is not None else [None] * (3 - inputs))
            if entry(cap, code, *rows, g, res.reshape(tail), fast) == 0:
                return res
        if not enabled():
            return None
        res = result_array((count,) + tail) if out is None else out.reshape((count,) + tail)
        # the C entry reads any C-contiguous buffer of count * n doubles of format "d" and checks that they are finite
        ins = [_native(x) for x in xs]
        ins += [np.zeros(q.shape)] if rest is not None else [None] * (3 - inputs)
        status = many and batch_entry(cap, code, min(usable_cores(), 4096), friction, *ins, g, None, res, fast)
        if status is False or status == RD_INPUT:  # NaN or inf in an input: the general path names it
            return None
        _check_status(robot, kind, status, count)
        return res.reshape(batch + tail) if out is None else out

    batch_entry = _module().batch
    return _bound(run, False, cap, code, g0, rest, shape) if one else run


def bind_floating(augmented: Robot, kind: str, tolerance: float):
    """robodyn.native's free-flyer entry of ``kind`` for the robot whose augmented robot is ``augmented``
    (:func:`robodyn.dynamics.floating.augmented_robot`), everything that does not depend on the call bound once (as
    :func:`bind`): ``run(q, v, x, gravity, out=None, friction=True, least=0, fast=False)`` -> the result, or None where the
    entry declines the call (the caller's general path then runs with its checks and messages); False where there
    are no kernels here; None while ROBODYN_NATIVE=0 (nothing built).  Not kept here: the caller keeps it with the
    free-flyer robot itself (:mod:`robodyn.dynamics.floating`), so that a single state looks up one workspace entry.

    ``kind``: "inverse_dynamics" (q (n + 7), v (n + 6), x = a (n + 6)), "inertia_matrix" (q; v, x ignored) or
    "forward_dynamics" (x = τ); ``gravity`` (3,) in the world frame, None for the robot's; ``tolerance``: how far
    the quaternion's norm may be off 1.  The C entry does what :mod:`robodyn.dynamics.floating` does for one state
    (virtual joints at zero, gravity in R_0, the virtual joints' velocity products) in one call, and checks its
    arguments (1-D float64 of the right sizes, finite, the quaternion's norm, ROBODYN_NATIVE); anything else (a
    batch, another dtype, NaN/inf, a quaternion off norm, a singular state, an ``out`` not of the result's shape)
    is declined.  Each kind also takes a batch: q (..., n + 7), v and x (..., n + 6) float64 NumPy arrays of one
    batch shape (the inertia matrix: q alone), gravity None or (3,) (the entry's threads, its checks, ``out`` of the
    result's shape; else declined), with the trigonometry of ``fast`` (trig="fast"); a batch's row is its state's
    single call bit for bit, and one state with ``fast`` runs as a batch of one.  ``friction`` and ``least`` (the
    fixed-base entry's) are not read.  One state reaches the entry through the kernels' ``bound`` (:func:`_bound`).
    """
    single = WORKSPACE.value(augmented, "native_single", lambda: _single_model(augmented))
    if not single:
        return single
    _, g0, _, n, cap = single
    entry, code, empty, ndarray = _module().floating, _KINDS.index(kind), np.empty, np.ndarray
    inertia = kind == "inertia_matrix"
    shape = (n, n) if inertia else (n,)

    def run(q, v, x, gravity, out=None, friction=True, least=0, fast=False):
        if type(q) is ndarray and q.ndim > 1:
            if q.size == q.shape[-1] and not fast and (out is None or (type(out) is ndarray and out.flags.c_contiguous
                                                                       and out.shape == q.shape[:-1] + shape)):
                # one state in a batch's shape: the single call (a third of a batch's fixed cost), its row bit for bit
                one = run(q.reshape(-1), *(a.reshape(-1) if type(a) is ndarray else a for a in (v, x)), gravity,
                          None if out is None else out.reshape(shape))
                if one is not None:
                    return one.reshape(q.shape[:-1] + shape) if out is None else out
            return many(q, v, x, gravity, out, fast)
        if fast:  # one state as a batch of one: the batch's trigonometry, so its row's numbers bit for bit
            if type(q) is not ndarray or q.ndim != 1 or (out is not None and type(out) is not ndarray):
                return None
            res = many(q[None], *(a[None] if type(a) is ndarray else a for a in (v, x)), gravity,
                       None if out is None else out[None], fast)
            return None if res is None else res[0] if out is None else out
        if out is None:
            res = empty(shape)
        elif type(out) is ndarray and out.shape == shape:
            res = out
        else:
            return None
        return res if entry(cap, code, q, v, x, g0 if gravity is None else gravity, tolerance, res) == 0 else None

    def many(q, v, x, gravity, out, fast):
        batch = q.shape[:-1]
        if inertia:
            v = x = g = None
        elif type(v) is not ndarray or type(x) is not ndarray or v.shape != batch + shape or x.shape != v.shape:
            return None
        else:
            g = g0 if gravity is None else gravity
            if type(g) is not ndarray or g.shape != (3,):
                return None
        res = result_array(batch + shape) if out is None else out
        if type(res) is not ndarray or res.shape != batch + shape:
            return None
        return res if entry(cap, code, q, v, x, g, tolerance, res, min(usable_cores(), 4096), fast) == 0 else None

    return _bound(run, True, cap, code, g0, tolerance, shape)


def _bound(run, floating: bool, cap, code: int, g0: np.ndarray, extra, shape: tuple[int, ...]):
    """``run`` of :func:`bind` or :func:`bind_floating` behind the kernels' C function ``bound`` (kernels.c), with
    what it needs bound: one state (1-D q, ``out`` None or of the result's ``shape``) calls the single-state entry
    without a Python frame and without np.empty (4–7 % of a single call); everything else, and a call the entry
    declines, is ``run``'s.  ``extra``: a free flyer's quaternion tolerance, or the bias torques' q̈ = 0.  ``run``
    itself where the kernels were built without NumPy's headers."""
    bound = getattr(_module(), "bound", None)
    return run if bound is None else functools.partial(bound, run, floating, cap, code, g0, extra, shape)


def _native(a: np.ndarray) -> np.ndarray:
    """``a`` as C-contiguous, aligned float64 of the native dtype itself, whose buffer format is "d": an equal dtype
    spelled "<f8" (``scipy.io.loadmat``'s) exports "<d", which the kernels' C entries refuse (a copy only when ``a``
    is not already that: an array from ``np.frombuffer`` with an offset, a memory map, a big-endian, Fortran-ordered
    or strided array is copied)."""
    if a.dtype is _F64 and a.flags.c_contiguous and a.flags.aligned:  # np.require costs 2-3 µs even then
        return a
    a = np.require(a, _F64, ("C", "A"))
    return a if a.dtype is _F64 else a.view(_F64)


def _flat(a: np.ndarray, tail: tuple[int, ...]) -> np.ndarray:
    """(count, *tail) float64 in native byte order, C-contiguous and aligned (:func:`_native`)."""
    return _native(a).reshape((-1,) + tail)


#: the least bytes of a result that the kernels' pool keeps (``RD_POOL_MIN`` of kernels.c)
_POOL_MIN = 4 << 20


def result_array(shape: tuple[int, ...]) -> np.ndarray:
    """``np.empty(shape)`` (float64, C-contiguous) for a batch's result; from 4 MiB on, through the kernels' pool of
    result blocks: up to 4 freed results of 4 MiB or more (512 MiB in all) are kept and handed to the next result of
    the same size, whose pages are then already mapped (no page fault, no page zeroed by the system at its first
    write).  :func:`release_memory` returns the kept blocks to the system."""
    empty = getattr(_module(), "empty", None) if 8 * math.prod(shape) >= _POOL_MIN else None  # none: no NumPy headers
    return np.empty(shape) if empty is None else empty(shape)


def release_memory() -> tuple[int, int]:
    """Return the result blocks that robodyn's kernels keep for reuse (:func:`result_array`) to the system; gives
    the (blocks, bytes) that were kept.  Nothing to do (and nothing built) where the kernels are not loaded in this
    process or have no pool."""
    pool = getattr(WORKSPACE.made(_MODULE_NAME), "pool", None)  # a str (why the kernels cannot load) has none
    return (0, 0) if pool is None else pool(True)


def _gravity_block(robot: Robot, checked, batch: tuple[int, ...]) -> np.ndarray:
    """Gravity for the C entry: (3,) for every state, or (count, 3) when it varies per state."""
    if checked is None:
        return _native(robot.gravity)
    if not any(checked.strides[:len(batch)]):  # one vector broadcast over the batch
        return _native(checked[(0,) * len(batch)])
    return _flat(checked, (3,))


def run_checked(robot: Robot, kind: str, batch: tuple[int, ...], a: dict, friction: bool = True,
                threads: int | None = None, out=None, fast: bool = False) -> np.ndarray:
    """``kind`` on a batch already checked by :func:`robodyn.model.arguments.joint_arrays` (``a``: its arrays, float64,
    with "gravity" / "wrenches" when given); the default algorithms call this for large float64 batches.

    ``friction``: Γ_f of [9.26]–[9.28] added to the inverse dynamics / subtracted from the torque of the direct
    dynamics, or the regressor's friction columns; for the derivatives, the friction slope F_v (no Stribeck term)
    in ∂Γ/∂q̇ and, Γ_f subtracted from the torque, in ∂q̈/∂q̇. Returns float64 batch + (n,), (n, n) or (n, p),
    written into ``out`` when given (checked by :func:`robodyn.arrays.check_out`, no other buffer made).  ``fast``:
    the vectorised sincos of ``trig="fast"`` (:data:`TRIG`).
    """
    module = _module()
    n, nf = robot.n, robot.nf
    count = math.prod(batch)
    code = _CODES[kind]
    if kind.endswith("_derivatives") and friction and np.any(robot.Fst != 0):
        raise ModelError(f"robot '{robot.name}': robodyn's generic kernels have no Stribeck term in the friction "
                         f"slope; give friction=False, or use robodyn.{kind}")
    names = {"gravity_torques": ("q",), "inertia_matrix": ("q",), "bias_torques": ("q", "qd")}.get(
        kind, ("q", "qd", "tau") if kind.startswith("forward") else ("q", "qd", "qdd"))
    tail = _tail(robot, kind, friction)
    if out is not None:
        check_out(kind, out, batch + tail, _F64)
    if count == 0:
        return np.empty(batch + tail) if out is None else out
    ins = [_flat(a[k], (n,)) for k in names]
    ins += [np.zeros((count, n))] if kind == "bias_torques" else [None] * (3 - len(names))
    g = None if kind == "inertia_matrix" else _gravity_block(robot, a.get("gravity"), batch)
    W = a.get("wrenches")
    W = None if W is None else _flat(W, (nf, 6))
    res = result_array((count,) + tail) if out is None else out.reshape((count,) + tail)
    threads = min(thread_count(threads), 4096)  # a C int; more threads than states gain nothing
    # wrenches act on frames, and the regressor's columns are every frame's: the whole model; else the dynamics'
    cap = _capsule(robot, module) if W is not None or kind == "regressor" else _dynamics_capsule(robot, module)
    status = module.batch(cap, code, threads, friction, *ins, g, W, res, bool(fast))
    _check_status(robot, kind, status, count)
    return res.reshape(batch + tail) if out is None else out


#: the batch entry's status for NaN or inf in an input (``RD_INPUT`` of kernels.c)
RD_INPUT = -4


def _check_status(robot: Robot, kind: str, status: int, count: int) -> None:
    """Raise the error of the batch entry's status (0: none)."""
    if status == -1:  # every buffer is made float64, C-contiguous and aligned before: a bug, not an input error
        raise KernelError(f"{kind}: robodyn's generic kernels refused their buffers (a robodyn bug, please report "
                          "it); set the environment variable ROBODYN_NATIVE=0 to use the NumPy path meanwhile")
    if status == -3:
        raise KernelError(f"{kind}: robodyn's generic kernels ran out of memory for {count} states; give fewer "
                          "states per call")
    if status > 0:
        name = robot.joint_names[status - 1]
        raise singular_model_error(robot.name, f"joint {name}: articulated inertia H_j <= 0 [9.116]")
    if status in (-2, RD_INPUT):  # the callers' inputs are checked finite: what they computed from them overflowed
        raise NumericOverflowError(
            f"{kind}: the result is not finite (floating-point overflow in float64, largest "
            f"{np.finfo(np.float64).max:.3g}) although every input is finite; some input is too large (e.g. a velocity "
            "of 1e155), give values of physical size")


def inverse_dynamics(robot: Robot, q, qd, qdd, wrenches=None, gravity=None, threads: int | None = None,
                     trig: str = "exact") -> np.ndarray:
    """Inverse dynamic model Γ(q, q̇, q̈) by Newton–Euler, Khalil & Dombre [9.84]–[9.94], compiled and threaded.

    Same arguments and result as :func:`robodyn.inverse_dynamics` (friction and rotor inertia included), plus
    ``threads``: number of threads for the batch (default: every core), and ``trig``: "exact" or "fast"
    (:data:`TRIG`; so in every function here). Shapes: q, qd, qdd (..., n); wrenches (..., nf, 6) [f; m] exerted by
    link j on the environment, in R_j; gravity (3,) or (..., 3) in R_0 (m/s²). Returns float64 (..., n).
    """
    fast = check_trig(trig)
    _, batch, a = joint_arrays(robot, q=q, qd=qd, qdd=qdd, gravity=gravity, wrenches=wrenches)
    return run_checked(robot, "inverse_dynamics", batch, a, threads=threads, fast=fast)


def gravity_torques(robot: Robot, q, gravity=None, threads: int | None = None, trig: str = "exact") -> np.ndarray:
    """Gravity torques Q(q) = Γ(q, 0, 0) without friction (Khalil & Dombre [9.8]), compiled and threaded.

    q (..., n) → (..., n) float64 (N m | N).
    """
    fast = check_trig(trig)
    _, batch, a = joint_arrays(robot, q=q, gravity=gravity)
    return run_checked(robot, "gravity_torques", batch, a, threads=threads, fast=fast)


def inertia_matrix(robot: Robot, q, threads: int | None = None, trig: str = "exact") -> np.ndarray:
    """Inertia matrix A(q) by composite links (Khalil & Dombre Appendix 8), Ia on the diagonal.

    q (..., n) → (..., n, n) float64.
    """
    fast = check_trig(trig)
    _, batch, a = joint_arrays(robot, q=q)
    return run_checked(robot, "inertia_matrix", batch, a, threads=threads, fast=fast)


def forward_dynamics(robot: Robot, q, qd, tau, wrenches=None, gravity=None, threads: int | None = None,
                     trig: str = "exact") -> np.ndarray:
    """Direct dynamic model q̈ = A⁻¹(Γ − H) by the O(n) articulated-body recursion (Khalil & Dombre §9.7.2).

    Same arguments and result as :func:`robodyn.forward_dynamics`, plus ``threads``. Returns float64 (..., n).

    Raises
    ------
    ModelError
        A singular model (a joint that moves only massless links and has no rotor inertia).
    """
    fast = check_trig(trig)
    _, batch, a = joint_arrays(robot, q=q, qd=qd, tau=tau, gravity=gravity, wrenches=wrenches)
    return run_checked(robot, "forward_dynamics", batch, a, threads=threads, fast=fast)


def regressor(robot: Robot, q, qd, qdd, friction: bool = True, gravity=None, threads: int | None = None,
              trig: str = "exact") -> np.ndarray:
    """Regressor D(q, q̇, q̈) of the standard parameters, Γ = D K (Khalil & Dombre [9.36]), compiled and threaded.

    Same columns as :func:`robodyn.regressor` (11 per frame: XX XY XZ YY YZ ZZ MX MY MZ M Ia, then Fc Fv Foff
    per joint with ``friction=True``). q, qd, qdd (..., n) → (..., n, 11 nf [+ 3 n]) float64.
    """
    fast = check_trig(trig)
    _, batch, a = joint_arrays(robot, q=q, qd=qd, qdd=qdd, gravity=gravity)
    return run_checked(robot, "regressor", batch, a, friction=bool(friction), threads=threads, fast=fast)


def inverse_dynamics_derivatives(robot: Robot, q, qd, qdd, wrenches=None, gravity=None, friction: bool = False,
                                 threads: int | None = None, trig: str = "exact") -> np.ndarray:
    """∂Γ/∂q and ∂Γ/∂q̇ of the rigid-body Newton–Euler inverse dynamics [9.84]–[9.94], compiled and threaded.

    Carpentier and Mansard's analytical derivatives of the recursion (one forward and one backward pass in R_0,
    then two 6-vector products per entry), equal to the forward-mode derivatives of
    :func:`robodyn.dynamics.derivatives.inverse_dynamics_derivatives` (which adds the friction slope; rotor
    inertias contribute nothing). q, qd, qdd (..., n); wrenches (..., nf, 6) [f; m] exerted by link j on the
    environment, in R_j; gravity (3,) or (..., 3) in R_0. Returns float64 (..., 2, n, n): [..., 0, i, k] =
    ∂Γ_i/∂q_k, [..., 1, i, k] = ∂Γ_i/∂q̇_k, without friction (``friction=True``: its slope F_v, the robot's
    [9.26]–[9.28] away from q̇ = 0 without a Stribeck term, on the diagonal of ∂Γ/∂q̇).
    """
    fast = check_trig(trig)
    _, batch, a = joint_arrays(robot, q=q, qd=qd, qdd=qdd, gravity=gravity, wrenches=wrenches)
    return run_checked(robot, "inverse_dynamics_derivatives", batch, a, friction=friction, threads=threads, fast=fast)


def forward_dynamics_derivatives(robot: Robot, q, qd, tau, wrenches=None, gravity=None, friction: bool = True,
                                 threads: int | None = None, trig: str = "exact") -> np.ndarray:
    """∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂Γ of the direct dynamic model q̈ = A⁻¹(Γ − Γ_f − H) [9.96], compiled and threaded.

    q̈ by the articulated-body recursion (the robot's friction subtracted from Γ), then ∂q̈/∂x = −A⁻¹ ∂Γ/∂x at that
    q̈ (:func:`inverse_dynamics_derivatives`) and A⁻¹, applied by a Cholesky factorisation of the composite-link
    A(q) below 24 joints and by the articulated-body recursion (O(n) per column) from 24 joints on.
    Returns float64 (..., 3, n, n): ∂q̈/∂q, ∂q̈/∂q̇, A⁻¹, with the robot's friction [9.26]–[9.28] (its slope
    F_v away from q̇ = 0) as :func:`robodyn.forward_dynamics_derivatives`; ``friction=False`` leaves it out.
    """
    fast = check_trig(trig)
    _, batch, a = joint_arrays(robot, q=q, qd=qd, tau=tau, gravity=gravity, wrenches=wrenches)
    return run_checked(robot, "forward_dynamics_derivatives", batch, a, friction=friction, threads=threads, fast=fast)


#: codes of the kinematics kinds (kernels.c: rd_py_kinematics) and the shape of one state's result
_KINEMATICS = types.MappingProxyType({"frame_poses": 7, "frame_jacobian": 8, "jacobian_dot_qd": 9,
                                      "link_kinematics": 10, "jacobian_derivative": 11})


def _kinematics_shape(robot: Robot, kind: str) -> tuple[int, ...]:
    return {"frame_poses": (robot.nf, 4, 4), "frame_jacobian": (6, robot.n), "jacobian_dot_qd": (6,),
            "link_kinematics": (4, robot.nf, 3), "jacobian_derivative": (6, robot.n)}[kind]


def kinematics_key(kind: str, part: int = 0) -> str:
    """The per-robot workspace key of :func:`bind_kinematics`'s entry for ``kind`` (and ``part``)."""
    return f"native_kinematics_{kind}_{part}"


def bind_kinematics(robot: Robot, kind: str, part: int = 0, wrap=None):
    """The single-state entry of a kinematics kind bound to ``robot`` once and kept in its workspace entry (key
    :func:`kinematics_key`), so that a call costs the C entry alone: ``run(q[, qd, qdd, frame, point])`` -> the
    result (a new array; for "link_kinematics" the parts ``part``, ``part`` + 1 of (ω, V, ω̇, V̇) as the named tuple
    class ``wrap``: one class per kind and part, the first bound is kept), or None where the kernels decline the
    state (see :func:`kinematics_state`); False where there are no kernels here; None while ROBODYN_NATIVE=0
    (nothing built, nothing kept)."""
    return WORKSPACE.value(robot, kinematics_key(kind, part), lambda: _kinematics_entry(robot, kind, part, wrap))


def _kinematics_entry(robot: Robot, kind: str, part: int, wrap):
    single = WORKSPACE.value(robot, "native_single", lambda: _single_model(robot))
    if not single:
        return single
    return functools.partial(_module().kinematics_one, single[0], _KINEMATICS[kind], part, wrap)


def kinematics_state(robot: Robot, kind: str, q, qd=None, qdd=None, frame: int = 0, point=None):
    """One state of a kinematics kind through the compiled kernels with about a microsecond of call overhead, or None.

    ``kind``: "frame_poses" (q) -> (nf, 4, 4) ^0T_j; "frame_jacobian" (q, frame, point) -> (6, n) the geometric
    Jacobian [v; ω] in R_0 of frame index ``frame`` (0-based) or of ``point`` (3,) fixed to it (coordinates in that
    frame); "jacobian_dot_qd" (q, qd, frame, point) -> (6,) J̇ q̇; "jacobian_derivative" (q, qd, frame, point) ->
    (6, n) J̇ (the link velocities and accelerations: :func:`bind_kinematics` with their named tuple).  Every array
    must be a 1-D float64 NumPy array of the right size; anything else (a batch, another dtype, NaN/inf,
    ROBODYN_NATIVE=0, no kernels here, a result that overflows) returns None, and the caller's NumPy path handles
    the call with its checks and messages.
    """
    if not isinstance(robot, Robot):
        return None
    run = WORKSPACE.get(robot, kinematics_key(kind))
    if run is None:
        run = bind_kinematics(robot, kind)
    return run(q, qd, qdd, frame, point) if run else None


def kinematics_batch(robot: Robot, kind: str, batch: tuple[int, ...], q, qd=None, qdd=None, frame: int = 0,
                     point=None, threads: int | None = None):
    """A kinematics kind of :func:`kinematics_state` on a batch already checked by
    :func:`robodyn.model.arguments.joint_arrays` (float64 arrays broadcastable to batch + (n,); ``point`` (3,) or
    broadcastable to batch + (3,)), threaded over the states; batch + the kind's shape, or None where the kernels
    cannot serve it (none here, ROBODYN_NATIVE=0, a result that is not finite: the caller's NumPy path then gives
    the error)."""
    if not enabled() or not available():
        return None
    module = _module()
    shape = _kinematics_shape(robot, kind)
    count = math.prod(batch)
    if count == 0:
        return np.empty(batch + shape)
    full = batch + (robot.n,)
    ins = [None if x is None else _flat(x if x.shape == full else np.broadcast_to(x, full), (robot.n,))
           for x in (q, qd, qdd)]
    if point is not None:
        point = np.asarray(point)
        point = _flat(point if point.shape == (3,) else np.broadcast_to(point, batch + (3,)), (3,))
    out = result_array((count,) + shape)
    threads = min(thread_count(threads), 4096)
    status = module.kinematics(_capsule(robot, module), _KINEMATICS[kind], threads, frame, *ins, point, out)
    return out.reshape(batch + shape) if status == 0 else None


def task_space_state(robot: Robot, q, qd, frame: int, point, rows, damping: float, rcond: float, J=None, Jdq=None):
    """Task-space dynamics of one state in one compiled call, or None.

    The task is the rows ``rows`` (a sequence of m distinct ints 0..5) of the terms of :func:`kinematics_state`
    ("frame_jacobian", "jacobian_dot_qd" of frame index ``frame`` or of ``point``), or a task map's ``J`` (m, n) and
    ``Jdq`` (m,) (then ``frame``, ``point`` and ``rows`` are unused: give ``rows=range(m)`` and ``point=None``).  With
    the terms of :func:`single_state` (A, H = Γ(q, q̇, 0) with friction, Q), the dense algebra of
    :func:`robodyn.dynamics.task_space_dynamics`: Λ = (J A⁻¹ Jᵀ + λ² I)⁻¹ by Cholesky factorisations, its
    singularity test on the eigenvalue ratio (λ = 0), μ, p, J̄ and N.  Returns (Λ, μ, p, J, J̇q̇, J̄, N), or None
    for anything else (not float64 NumPy arrays of those sizes, NaN/inf, a singular task, more than 64 joints or 6
    task rows, ROBODYN_NATIVE=0, no kernels here): the caller's general path then computes or explains.
    """
    if not isinstance(robot, Robot):
        return None
    single = WORKSPACE.get(robot, "native_single")
    if single is None:
        single = WORKSPACE.value(robot, "native_single", lambda: _single_model(robot))
    if not single:
        return None
    if J is not None:
        if J.shape != (len(rows), robot.n) or Jdq.shape != (len(rows),):
            return None
        J = J.reshape(-1)  # 1-D: a view, or a C-contiguous copy of a strided J
    return _task_space_call(single[0], single[1], robot.n, (), 0, q, qd, frame, point, rows, damping, rcond, J, Jdq)


def task_space_batch(robot: Robot, batch: tuple[int, ...], q, qd, frame: int, point, rows, damping: float,
                     rcond: float, J=None, Jdq=None, threads: int | None = None):
    """:func:`task_space_state` on a batch already checked by :func:`robodyn.model.arguments.joint_arrays`
    (float64 q, qd broadcastable to batch + (n,); ``point`` None, (3,) or broadcastable to batch + (3,); a task map's
    ``J``, ``Jdq`` None or broadcastable to batch + (m, n), batch + (m,)), each state by the single state's
    instructions (a batch equals its states one by one bit for bit), threaded over the states.  Returns the parts
    with the batch axes first, or None (see :func:`task_space_state`; one singular state is enough)."""
    if not enabled() or not available():
        return None
    module = _module()
    n = robot.n
    q, qd = (_flat(np.broadcast_to(x, batch + (n,)), (n,)) for x in (q, qd))
    if point is not None:
        point = np.asarray(point)
        point = _flat(point if point.shape == (3,) else np.broadcast_to(point, batch + (3,)), (3,))
    if J is not None:
        m = len(rows)
        J = _flat(np.broadcast_to(J, batch + (m, n)), (m * n,))
        Jdq = _flat(np.broadcast_to(Jdq, batch + (m,)), (m,))
    g0 = _native(robot.gravity)
    threads = min(thread_count(threads), 4096)
    return _task_space_call(_capsule(robot, module), g0, n, batch, max(threads, 1), q, qd, frame, point, rows,
                            damping, rcond, J, Jdq)


def _task_space_call(cap, g0, n, batch, threads, q, qd, frame, point, rows, damping, rcond, J, Jdq):
    """The C entry ``task_space`` (threads 0: one state) and its output split into (Λ, μ, p, J, J̇q̇, J̄, N)."""
    m = len(rows)
    code = 0
    if J is None:
        for i, r in enumerate(rows):
            code |= int(r) << (3 * i)
    count = 1
    for size in batch:
        count *= size
    out = result_array((count, m * m + 3 * m + 2 * m * n + n * n) if batch else (m * m + 3 * m + 2 * m * n + n * n,))
    if count and _module().task_space(cap, threads, q, qd, frame, point, m, code, float(damping), float(rcond), g0,
                                      out, J, Jdq) != 0:
        return None
    parts, lo = [], 0
    for shape in ((m, m), (m,), (m,), (m, n), (m,), (n, m), (n, n)):
        size = shape[0] * shape[-1] if len(shape) == 2 else shape[0]
        if batch:
            parts.append(out[:, lo:lo + size].reshape(batch + shape))
        else:
            parts.append(out[lo:lo + size] if len(shape) == 1 else out[lo:lo + size].reshape(shape))
        lo += size
    return tuple(parts)


__all__ = ("KernelError", "NativeUnavailableError", "available", "forward_dynamics", "forward_dynamics_derivatives",
           "gravity_torques", "inertia_matrix", "inverse_dynamics", "inverse_dynamics_derivatives", "regressor",
           "release_memory", "threaded")
