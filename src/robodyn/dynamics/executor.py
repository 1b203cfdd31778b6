"""The one executor: which code runs a public dynamics function for (robot, algorithm) and these arguments.

Every numeric entry point computes the same equations on one of these paths, and this module alone chooses
(the formulation modules ask it in a line or two, with their kernel builders):

- **one 1-D float64 state** (:func:`default_single`, :func:`call`, :func:`call_fixed`): the compiled single-state
  entry of robodyn.native for the default methods; for the other methods the straight-line kernel traced from the
  formulation (:mod:`robodyn.dynamics.fast`), run in Python, and after :data:`COMPILE_AFTER` states of a robot
  compiled to C (:mod:`robodyn.dynamics.fast_c`) and loaded from robodyn's compile cache;
- **a float64 batch of at least** :data:`MIN_BATCH` **states** (:func:`takes_batch`, :func:`run_batch`): the
  generic compiled kernels of robodyn.native, threaded over the states;
- **the dynamics derivatives** (:func:`takes_derivatives`): every float64 call, one state (the single-state entry)
  or a batch of any size, on robodyn.native's derivative kernels (∂Γ/∂q, ∂Γ/∂q̇; ∂q̈/∂q, ∂q̈/∂q̇, A⁻¹);
- **anything else** (float32, small batches, object arrays of counting scalars, a state a kernel declines): the
  NumPy recursions of the formulation, with their checks and messages.

It is the only module that reads the environment switch ``ROBODYN_NATIVE`` (0: no compiled code at all) and decides
when to compile; :mod:`robodyn.native.build` does the compiling.  Kernels and compiled entries are kept per robot
in :mod:`robodyn.model.workspace`; a build that fails is remembered for this process only (the next process tries
again), except that the native kernels remember a failed *threaded* build of one compiler for a day
(:data:`robodyn.native.FAILED_TTL`) and then build serially.
"""

from __future__ import annotations

import math
import os

import numpy as np

from robodyn import native
from robodyn.arrays import finite_result
from robodyn.dynamics import fast_c
from robodyn.dynamics.fast import Fallback, generate, generate_c
from robodyn.model.robot import Robot
from robodyn.model.workspace import WORKSPACE

_F64 = np.dtype(np.float64)

#: Smallest number of float64 states for which robodyn's default algorithms hand a batch to the generic kernels.
MIN_BATCH = 128

#: os.environ's own mapping and the key of ROBODYN_NATIVE in it: reading it costs 30 ns where os.environ.get costs
#: 700 ns (it raises and catches a KeyError when the variable is unset), more than a compiled single state's work
_ENVIRON = getattr(os.environ, "_data", None)
_SWITCH = os.environ.encodekey("ROBODYN_NATIVE") if _ENVIRON is not None else None


def enabled() -> bool:
    """False when the environment variable ROBODYN_NATIVE is 0: robodyn's compiled code (the generic kernels and the
    single-state kernels of every method) switched off.  Read at every call."""
    if _ENVIRON is None:
        return os.environ.get("ROBODYN_NATIVE", "").strip() != "0"
    value = _ENVIRON.get(_SWITCH)
    return value is None or os.environ.decodevalue(value).strip() != "0"


def takes_batch(dtype, batch: tuple[int, ...]) -> bool:
    """Whether a default algorithm (``rd.inverse_dynamics``, ``gravity_torques``, ``inertia_matrix``,
    ``forward_dynamics``, ``regressor``) runs a batch of this dtype and shape on the generic kernels: float64, at
    least :data:`MIN_BATCH` states, the kernels available, and ROBODYN_NATIVE not set to 0."""
    if np.dtype(dtype) != _F64 or int(np.prod(batch, dtype=np.int64)) < MIN_BATCH:
        return False
    return enabled() and native.available()


def takes_derivatives(dtype) -> bool:
    """Whether the derivatives of a float64 batch of any size (:func:`robodyn.inverse_dynamics_derivatives`,
    :func:`robodyn.forward_dynamics_derivatives`) run on robodyn.native's compiled kernels (available,
    ROBODYN_NATIVE not 0): their O(n²) work per state outweighs the call from the first state."""
    return np.dtype(dtype) == _F64 and enabled() and native.available()


def run_batch(robot: Robot, kind: str, batch: tuple[int, ...], a: dict, friction: bool = True) -> np.ndarray:
    """``kind`` on a checked batch for which :func:`takes_batch` holds, on the generic kernels
    (:func:`robodyn.native.run_checked`)."""
    return native.run_checked(robot, kind, batch, a, friction=friction)


def native_single(robot: Robot, kind: str, q, b=None, c=None, gravity=None):
    """One state on the compiled single-state entry of the generic kernels (:func:`robodyn.native.single_state`),
    or None (switched off, not available, an argument it does not take)."""
    # ROBODYN_NATIVE unset, the common case, read inline: this path's whole budget is about a microsecond
    if (_ENVIRON is not None and _ENVIRON.get(_SWITCH) is None) or enabled():
        return native.single_state(robot, kind, q, b, c, gravity)
    return None


def kernel(robot, name: str, build, counts: dict[str, int]):
    """The kernel ``name`` of ``robot``, generated on first use and kept in the per-robot workspace
    (:mod:`robodyn.model.workspace`, key ``("kernel", name)``)."""
    return WORKSPACE.value(robot, ("kernel", name), lambda: generate(name, build, counts))


def compiled_kernel(robot, name: str, build, counts: dict[str, int]):
    """The compiled kernel ``name`` of ``robot`` (its ``single`` entry), or None where C cannot be used (no C
    compiler — :func:`robodyn.native.available` —, no Python headers, a failed build); built at the first call
    (compiled once per machine, in robodyn's compile cache) and kept in the per-robot workspace (key
    ``("compiled", name)``; False: not available)."""
    return WORKSPACE.value(robot, ("compiled", name), lambda: _compiled(name, build, counts)) or None


def _compiled(name: str, build, counts: dict[str, int]):
    if not native.available():
        return False
    try:
        return fast_c.load(generate_c(name, build, counts), len(counts)) or False
    except Fallback:  # a check that fails whatever the state (a massless joint): the general path says so
        return False
    except fast_c.NotWritable:  # an operand C cannot spell (never expected): the Python kernel
        return False


def single_state(n: int, *arrays) -> list[float] | None:
    """The floats of 1-D float64 arrays of length n (``None`` for an optional argument left out, given as a
    ``(value, size)`` pair), or None when any is something else (a batch, another dtype, NaN/inf): the general path,
    with its full checks and messages, then handles the call."""
    out: list[float] = []
    for a in arrays:
        size = n
        if type(a) is tuple:
            a, size = a
        if type(a) is not np.ndarray or a.dtype != _F64 or a.shape != (size,):
            return None
        out += a.tolist()
    return out if math.isfinite(sum(out)) else None


def run(robot, name: str, build, counts: dict[str, int], values: list[float]) -> np.ndarray | None:
    """Call the Python kernel ``name`` on ``values``; None when the kernel hands the state to the general path."""
    try:
        return np.array(kernel(robot, name, build, counts)(*values))
    except Fallback:
        return None


#: a kernel of a method that robodyn.native does not serve runs in Python for this many single states of a robot,
#: then is compiled to C (or loaded from the compile cache): compiling costs 0.1–0.8 s per kernel of a 6–7-joint
#: arm, the time of thousands of calls of the Python kernel (10–150 µs), so a few calls (a test, a command) do not
#: pay for it, and a loop (a simulation, an optimisation) gets the compiled kernel after a few milliseconds
COMPILE_AFTER = 16

#: codes of a compiled kernel's entry after which the general path runs: a failed check of the algorithm (the
#: Python kernel's Fallback) and NaN/inf in an argument; other nonzero codes (a buffer it does not take, a result
#: that is not finite) run the Python kernel, as without a compiler
_GENERAL = (1, -2)

#: returned by :func:`call` with ``python=False`` when the compiled kernel did not run (no compiler, an argument
#: it does not take): the caller's own single-state path decides
UNTRIED = object()

def _single(robot, key: str, spec, arrays: tuple, shape, use_c: bool, python: bool, finite: str | None = None):
    """One state through kernel ``key``: compiled (``use_c`` and :func:`enabled`), else Python
    (``python``; else :data:`UNTRIED`).

    ``spec()`` gives ``(build, counts)``, called only to generate a kernel; ``arrays`` are the caller's arguments in
    the order of ``counts``; the result has ``shape``.  None when the general path must run.  With ``finite`` (the
    name of the public function), a Python kernel's result is checked finite (:func:`robodyn.arrays.finite_result`;
    the compiled kernel's entry checks its own).
    """
    if use_c and enabled():
        entry = WORKSPACE.get(robot, ("compiled", key))
        if entry is None:  # a kernel is compiled (or loaded from the cache) at its COMPILE_AFTER-th single state
            if WORKSPACE.count(robot, ("calls", key)) >= COMPILE_AFTER:
                entry = compiled_kernel(robot, key, *spec())
        if entry:
            out = np.empty(shape)
            code = entry(*arrays, out)
            if code == 0:
                return out
            if code in _GENERAL:
                return None
    if not python:
        return UNTRIED
    build, counts = spec()
    values = single_state(0, *zip(arrays, counts.values()))
    if values is None:
        return None
    out = run(robot, key, build, counts, values)
    if out is None:
        return None
    return out.reshape(shape) if finite is None else finite_result(finite, out.reshape(shape))


def call(robot, name: str, kernel_of, names: tuple, arrays: tuple, gravity, use_c: bool = True,
         python: bool = True):
    """The kernel result (n,) for one state, or None when the general path must run (see :func:`single_state`).

    ``kernel_of(robot)`` gives ``build(backend, **inputs, g=...)``, whose joint inputs ``names`` (n scalars each)
    are the caller's ``arrays``; it also takes gravity.  Without a ``gravity`` argument the robot's gravity is built
    into the kernel as constants (its zero components then cost nothing, as in the batched path); with one, g is
    one more input (kernel ``name + "_gravity"``).  The compiled kernel runs when it can (``use_c``), else the
    Python kernel (``python``; else the result is :data:`UNTRIED`).
    """
    if not isinstance(robot, Robot):  # the general path names the argument in its error
        return None
    if gravity is not None:
        name, arrays = name + "_gravity", (*arrays, gravity)
    if use_c and enabled():  # the common case first, without building the generator
        entry = WORKSPACE.get(robot, ("compiled", name))
        if entry:
            out = np.empty(robot.n)
            code = entry(*arrays, out)
            if code == 0:
                return out
            if code in _GENERAL:
                return None
            use_c = False

    def spec():
        n, build = robot.n, kernel_of(robot)
        if gravity is not None:
            return build, {**dict.fromkeys(names, n), "g": 3}
        g = tuple(robot.gravity.tolist())
        return (lambda backend, **inputs: build(backend, g=g, **inputs)), dict.fromkeys(names, n)

    return _single(robot, name, spec, arrays, (robot.n,), use_c, python)


def call_fixed(robot, name: str, kernel_of, counts: dict[str, int], arrays: tuple, shape: tuple,
               use_c: bool = True, finite: str | None = None) -> np.ndarray | None:
    """The result (``shape``) of kernel ``name`` = ``kernel_of(robot)`` (``build(backend, **inputs)``, inputs of the
    sizes ``counts``, no gravity) on ``arrays`` (1-D float64), compiled when it can (``use_c``), the result checked
    finite (``finite``: see :func:`_single`); None when the general path must run."""
    if not isinstance(robot, Robot):
        return None
    return _single(robot, name, lambda: (kernel_of(robot), counts), arrays, shape, use_c, True, finite)


def default_single(robot, name: str, kernel_of, names: tuple, arrays: tuple, gravity) -> np.ndarray | None:
    """One 1-D float64 state of the default method ``name``: robodyn.native's compiled entry (its result is checked
    finite in C), else the robot's straight-line Python kernel ``kernel_of(robot)`` (:func:`call` with the inputs
    ``names``, result checked finite; the default methods have no kernel of their own in C: robodyn.native serves
    them); None when the general path must run (a batch, another dtype, NaN/inf, a state a kernel hands back).
    The Python kernel's inputs are only assembled when the compiled entry declines."""
    if (_ENVIRON is not None and _ENVIRON.get(_SWITCH) is None) or enabled():  # see native_single
        # positional arguments: a keyword costs a dictionary per call
        out = native.single_state(robot, name, *arrays, gravity) if len(arrays) == 3 else \
            native.single_state(robot, name, arrays[0], None, None, gravity)
        if out is not None:
            return out
    out = call(robot, name, kernel_of, names, arrays, gravity, use_c=False)
    return None if out is None else finite_result(name, out)
