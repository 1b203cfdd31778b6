"""The one executor: which code runs a public dynamics function for (robot, algorithm) and these arguments.

Every public dynamics function is a docstring and one line, ``return executor.execute(SPEC, robot, ...)``, with
``SPEC`` its formulation's module-level :class:`Algorithm` (its name, arguments, single-state kernel, whether
robodyn.native serves it, and its NumPy code on checked arrays).  :func:`execute` alone chooses the path:

- **one 1-D float64 state** (no wrenches): the compiled single-state entry of robodyn.native for the default
  methods; for the other methods the straight-line kernel traced from the formulation (:mod:`robodyn.dynamics.fast`),
  run in Python, and after :data:`COMPILE_AFTER` states of a robot compiled to C (:mod:`robodyn.dynamics.fast_c`)
  and loaded from robodyn's compile cache;
- **a float64 batch of at least** :data:`MIN_BATCH` **states**: the generic compiled kernels of robodyn.native,
  threaded over the states (the dynamics derivatives from the first state: :func:`takes_derivatives`);
- **anything else** (float32, small batches, wrenches, object arrays of counting scalars, a state a kernel
  declines): the arguments checked once (:func:`robodyn.model.arguments.joint_arrays`), the formulation's NumPy
  recursions, and the result checked finite (:func:`robodyn.arrays.finite_result`, named after the function).

It is the only module that reads the environment switch ``ROBODYN_NATIVE`` (0: no compiled code at all) and decides
when to compile; :mod:`robodyn.native.build` does the compiling.  Kernels and compiled entries are kept per robot
in :mod:`robodyn.model.workspace`; a build that fails is remembered for this process only (the next process tries
again), except that the native kernels remember a failed *threaded* build of one compiler for a day
(:data:`robodyn.native.FAILED_TTL`) and then build serially.
"""

from __future__ import annotations

import math
import os
from typing import Callable, NamedTuple

import numpy as np

from robodyn import native
from robodyn.arrays import check_array, finite_result
from robodyn.dynamics import fast_c
from robodyn.dynamics.fast import Fallback, generate, generate_c
from robodyn.model.arguments import joint_arrays
from robodyn.model.robot import Robot
from robodyn.model.workspace import WORKSPACE

_F64 = np.dtype(np.float64)

#: Smallest number of float64 states for which robodyn's default algorithms hand a batch to the generic kernels.
MIN_BATCH = 128

#: a kernel of a method that robodyn.native does not serve runs in Python for this many single states of a robot,
#: then is compiled to C (or loaded from the compile cache): compiling costs 0.1–0.8 s per kernel of a 6–7-joint
#: arm, the time of thousands of calls of the Python kernel (10–150 µs), so a few calls (a test, a command) do not
#: pay for it, and a loop (a simulation, an optimisation) gets the compiled kernel after a few milliseconds
COMPILE_AFTER = 16

#: os.environ's own mapping and the key of ROBODYN_NATIVE in it: reading it costs 30 ns where os.environ.get costs
#: 700 ns (it raises and catches a KeyError when the variable is unset), more than a compiled single state's work
_ENVIRON = getattr(os.environ, "_data", None)
_SWITCH = os.environ.encodekey("ROBODYN_NATIVE") if _ENVIRON is not None else None

#: codes of a compiled kernel's entry after which the general path runs: a failed check of the algorithm (the
#: Python kernel's Fallback) and NaN/inf in an argument; other nonzero codes (a buffer it does not take, a result
#: that is not finite) run the Python kernel, as without a compiler
_GENERAL = (1, -2)


class Algorithm(NamedTuple):
    """How :func:`execute` runs one public function: a module-level constant of its formulation.

    name: the public name (the finite check's message; robodyn.native's kind where ``single`` or ``batch``).
    numpy: ``numpy(robot, *inputs, g, fe)`` (``numpy(robot, q)`` where ``matrix``) on checked arrays of one dtype:
    g (3,) or (..., 3), fe (..., nf, 6) or None; its result is checked here.  inputs: the joint-space arguments.
    kernel: ``kernel_of(robot)`` -> ``build(backend, *inputs, g)`` (no g where ``matrix``), the single-state kernel
    traced from the formulation, kept as ``key`` (default ``name``).  single / batch: robodyn.native's single-state
    entry / generic kernels (batches of :data:`MIN_BATCH` states and more) run ``name`` (with ``friction``, its
    friction flag); without ``single`` the kernel is compiled after :data:`COMPILE_AFTER` states.  matrix: the
    result is (..., n, n), no gravity, no wrenches.  python: ``python(robot, *inputs, gravity)`` -> result or None,
    for one state instead of the kernel in Python.  general: ``general(robot, a, b, c, wrenches, gravity,
    friction)``, the path after the single-state entry of a function with checks and batches of its own (the
    derivatives), whose ``result`` is made from the entry's array.
    """

    name: str
    numpy: Callable | None
    inputs: tuple[str, ...] = ("q", "qd", "qdd")
    kernel: Callable | None = None
    key: str = ""
    single: bool = False
    batch: bool = False
    friction: bool = True
    matrix: bool = False
    python: Callable | None = None
    general: Callable | None = None
    result: Callable | None = None


def execute(spec: Algorithm, robot, a, b=None, c=None, wrenches=None, gravity=None, friction=None):
    """``spec`` on the caller's arguments (``a``, ``b``, ``c``: ``spec.inputs``; ``friction``: the derivatives'
    friction model, None or True the robot's own), on the path of the module docstring."""
    if wrenches is None and (friction is None or friction is True):
        # ROBODYN_NATIVE unset, the common case, read inline: this path's whole budget is about a microsecond
        if spec.single and ((_ENVIRON is not None and _ENVIRON.get(_SWITCH) is None) or enabled()):
            out = native.single_state(robot, spec.name, a, b, c, gravity)  # positional: a keyword costs a dict
            if out is not None:
                return out if spec.result is None else spec.result(out)
        if spec.kernel is not None and isinstance(robot, Robot):
            out = _one_state(spec, robot, (a, b, c)[:len(spec.inputs)], gravity)
            if out is not None:
                return out
    if spec.general is not None:
        return spec.general(robot, a, b, c, wrenches, gravity, friction)
    dtype, batch, arrays = joint_arrays(robot, **dict(zip(spec.inputs, (a, b, c))), gravity=gravity, wrenches=wrenches)
    if spec.batch and takes_batch(dtype, batch):  # robodyn.native checks its result
        return native.run_checked(robot, spec.name, batch, arrays, friction=spec.friction)
    joint = [arrays[k] for k in spec.inputs]
    if spec.matrix:
        return finite_result(spec.name, spec.numpy(robot, *joint))
    g = check_array("gravity", robot.gravity if gravity is None else gravity, (3,), batch, dtype)
    fe = None if wrenches is None else check_array("wrenches", wrenches, (robot.nf, 6), batch, dtype)
    return finite_result(spec.name, spec.numpy(robot, *joint, g, fe))


def enabled() -> bool:
    """False when the environment variable ROBODYN_NATIVE is 0: robodyn's compiled code (the generic kernels and the
    single-state kernels of every method) switched off.  Read at every call."""
    if _ENVIRON is None:
        return os.environ.get("ROBODYN_NATIVE", "").strip() != "0"
    value = _ENVIRON.get(_SWITCH)
    return value is None or os.environ.decodevalue(value).strip() != "0"


def takes_batch(dtype, batch: tuple[int, ...], least: int = MIN_BATCH) -> bool:
    """Whether a batch of this dtype and shape runs on robodyn.native's generic kernels: float64, at least
    ``least`` states, the kernels available, and ROBODYN_NATIVE not set to 0."""
    if np.dtype(dtype) != _F64 or int(np.prod(batch, dtype=np.int64)) < least:
        return False
    return enabled() and native.available()


def takes_derivatives(dtype) -> bool:
    """Whether the derivatives of a float64 batch of any size (:func:`robodyn.inverse_dynamics_derivatives`,
    :func:`robodyn.forward_dynamics_derivatives`) run on robodyn.native's compiled kernels (available,
    ROBODYN_NATIVE not 0): their O(n²) work per state outweighs the call from the first state."""
    return takes_batch(dtype, (), 0)


def run_batch(robot: Robot, kind: str, batch: tuple[int, ...], a: dict, friction: bool = True) -> np.ndarray:
    """``kind`` on a checked batch for which :func:`takes_batch` or :func:`takes_derivatives` holds, on the generic
    kernels (:func:`robodyn.native.run_checked`)."""
    return native.run_checked(robot, kind, batch, a, friction=friction)


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


def traced(robot, key: str, make, sizes: tuple, arrays: tuple, shape: tuple) -> np.ndarray | None:
    """The straight-line kernel ``key`` of ``robot`` (generated on first use from ``make()`` = ``(build, counts)``
    and kept in the workspace, key ``("kernel", key)``) run in Python on ``arrays`` (1-D float64 of the ``sizes``),
    reshaped to ``shape``; None when an argument is something else or the kernel hands the state to the general
    path (:class:`robodyn.dynamics.fast.Fallback`)."""
    values = single_state(0, *zip(arrays, sizes))
    if values is None:
        return None
    try:  # generating the kernel may hand over too (a check that fails whatever the state)
        return np.array(WORKSPACE.value(robot, ("kernel", key), lambda: generate(key, *make()))(*values)).reshape(shape)
    except Fallback:
        return None


def _compile(key: str, make):
    """The compiled entry of kernel ``key`` (``make()`` = ``(build, counts)``), or False where C cannot be used (no C
    compiler — :func:`robodyn.native.available` —, no Python headers, a failed build); compiled once per machine,
    in robodyn's compile cache."""
    if not native.available():
        return False
    build, counts = make()
    try:
        return fast_c.load(generate_c(key, build, counts), len(counts)) or False
    except Fallback:  # a check that fails whatever the state (a massless joint): the general path says so
        return False
    except fast_c.NotWritable:  # an operand C cannot spell (never expected): the Python kernel
        return False


def _one_state(spec: Algorithm, robot: Robot, arrays: tuple, gravity):
    """One state through the kernel of ``spec``: compiled (not ``spec.single``, after :data:`COMPILE_AFTER` states,
    :func:`enabled`), else ``spec.python`` or the kernel in Python, the result checked finite.  Without a
    ``gravity`` argument the robot's gravity is built into the kernel as constants (its zero components then cost
    nothing, as in the batched path); with one, g is one more input (kernel ``key + "_gravity"``).  None when the
    general path must run."""
    n, key = robot.n, spec.key or spec.name
    shape = (n, n) if spec.matrix else (n,)
    if gravity is not None and not spec.matrix:
        key, arrays = key + "_gravity", (*arrays, gravity)

    def make():
        build, counts = spec.kernel(robot), dict.fromkeys(spec.inputs, n)
        if spec.matrix:
            return build, counts
        if gravity is not None:
            return build, {**counts, "g": 3}
        g = tuple(robot.gravity.tolist())
        return (lambda backend, **inputs: build(backend, g=g, **inputs)), counts

    if not spec.single and enabled():
        entry = WORKSPACE.get(robot, ("compiled", key))
        if entry is None and WORKSPACE.count(robot, ("calls", key)) >= COMPILE_AFTER:  # kept; False: no C
            entry = WORKSPACE.value(robot, ("compiled", key), lambda: _compile(key, make))
        if entry:
            out = np.empty(shape)
            code = entry(*arrays, out)
            if code == 0:
                return out
            if code in _GENERAL:
                return None
    sizes = (n,) * len(spec.inputs) + (3,) * (len(arrays) - len(spec.inputs))
    if spec.python is None:
        out = traced(robot, key, make, sizes, arrays, shape)
    elif single_state(0, *zip(arrays, sizes)) is None:
        return None
    else:
        out = spec.python(robot, *arrays[:len(spec.inputs)], gravity)
    return None if out is None else finite_result(spec.name, out)
