"""The one executor: which code runs a public dynamics function for (robot, algorithm) and these arguments.

Every public dynamics function is a docstring and one line, ``return executor.execute(SPEC, robot, ...)``, with
``SPEC`` its formulation's module-level :class:`Algorithm` (its name, arguments, whether robodyn.native serves it,
and its NumPy code on checked arrays).  :func:`execute` alone chooses among robodyn's three tiers:

- **the generic native kernels** (:mod:`robodyn.native`): one 1-D float64 state (no wrenches) of a default method
  through their single-state entry (a free-flyer state of a floating or mobile base through their free-flyer entry
  on the augmented robot of :mod:`robodyn.dynamics.floating`), and a **float64 batch of any size** (:data:`MIN_BATCH`) of a
  default method threaded over the states (the dynamics derivatives from the first state: :func:`takes_derivatives`);
- **NumPy**, everything else (a non-default ``method=``, float32, wrenches, object arrays of
  counting scalars, a state a kernel declines): the arguments checked once
  (:func:`robodyn.model.arguments.joint_arrays`), the formulation's NumPy recursions, and the result checked
  finite (:func:`robodyn.arrays.finite_result`, named after the function);
- **Dask arrays** in, a Dask array out: the same choice made lazily per block of states (:func:`_lazy`,
  ``map_blocks`` over the leading axes, the robot shipped once to each worker);
- **JAX arrays** (concrete or traced under ``jax.jit`` / ``vmap`` / ``grad``): the formulation's component
  recursion on the JAX backend (``Algorithm.jax``; the default methods), a JAX array out (:func:`_traced`);
- **the customized models** of :func:`robodyn.compile` (C, CUDA, JAX), which the user builds for one robot when a
  non-default method must be fast; they are called directly, not through here.

Each :class:`Algorithm` served by a kernel carries the workspace key of its entry bound to a robot
(``Algorithm.key``, made by ``Algorithm.bind`` on the robot's first call), so :func:`execute` finds it in one
lookup, or in none when the robot is the one it last ran (``Algorithm.last``).  The entry takes one 1-D float64
state, or float64 arrays of one shape (..., n) with gravity None or (3,), and declines anything else, which then
goes through the checks of :func:`robodyn.model.arguments.joint_arrays` (or the free-flyer function's own) and
:func:`robodyn.native.run_checked` or NumPy, whose errors name the argument.
``out=`` is the result's buffer on every path (:func:`robodyn.arrays.check_out`); ``trig=`` is checked once
(:func:`robodyn.native.check_trig`) and handed on as a flag: "fast" lets the kernels use their vectorised sincos,
every other path computes as by default.  ``ROBODYN_NATIVE`` (0: no compiled code) is read at every call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Callable

import numpy as np

from robodyn import native
from robodyn.arrays import check_array, finite_result, into
from robodyn.model.arguments import joint_arrays
from robodyn.model.robot import Robot
from robodyn.model.workspace import WORKSPACE
from robodyn.native import RUNNERS, check_trig, enabled

_F64 = np.dtype(np.float64)
_EXACT = "exact"  # the default of trig= (an interned literal: `is` finds the default without a string comparison)

#: Smallest number of float64 states for which robodyn's default algorithms hand a batch to the generic kernels: one,
#: since a batch of the kernels equals its states run one by one bit for bit (NumPy's recursion does not, and took
#: 1-2 ms for 2-100 Panda states where the kernels take microseconds).
MIN_BATCH = 1


@dataclass(frozen=True, slots=True)
class Algorithm:
    """How :func:`execute` runs one public function: a module-level constant of its formulation.

    name: the public name (the finite check's message; robodyn.native's kind where ``single`` or ``batch``).
    numpy: ``numpy(robot, *inputs, g, fe)`` (``numpy(robot, q)`` where ``matrix``) on checked arrays of one dtype:
    g (3,) or (..., 3), fe (..., nf, 6) or None; its result is checked here.  inputs: the joint-space arguments.
    single / batch: robodyn.native's single-state entry / generic kernels (batches of any size) run ``name`` (with
    ``friction``, its friction flag).  jax: ``jax(robot, *inputs, gravity)``, the recursion on the JAX backend for
    JAX arrays (traceable; no gravity where ``matrix``).  matrix: the result is (..., n, n), no gravity, no
    wrenches.  bind, key: ``bind(robot, name)`` -> the compiled entry of ``name`` bound to the robot,
    ``run(a, b, c, gravity, out, friction, least, fast)`` -> result or None (declined), or False where none serves the
    robot, kept in the robot's workspace entry under ``key`` (default: :func:`robodyn.native.bind` and its key where
    ``single`` or ``batch``; the free-flyer entry of :mod:`robodyn.dynamics.floating`).  general: ``general(robot,
    a, b, c, wrenches, gravity, friction, fast)``, the path after the bound entry of a function with checks and batches
    of its own (the derivatives, the free-flyer functions), whose ``result`` is made from the entry's array;
    general_out: ``general`` takes ``out=`` and writes it itself (the free-flyer inertia matrix, whose batches run
    the kernels of its augmented robot), else its result is copied into ``out``.
    least: the fewest states of a batch the bound entry takes (:data:`MIN_BATCH` where ``batch``, else 0: one
    state only), set from ``batch``.  last: a one-item list holding (robot, its bound entry) of the latest robot
    :func:`execute` ran this spec for, so that a loop over one robot's states skips the workspace lookup (0.2 µs
    of a 1.7 µs single state); replaced as a whole (one tuple, so a thread reads a robot with its own entry), left
    behind when the spec is pickled.
    """

    name: str
    numpy: Callable | None
    inputs: tuple[str, ...] = ("q", "qd", "qdd")
    single: bool = False
    batch: bool = False
    friction: bool = True
    matrix: bool = False
    jax: Callable | None = None
    bind: Callable | None = None
    key: str | None = None
    general: Callable | None = None
    general_out: bool = False
    result: Callable | None = None
    least: int = field(init=False, default=0)
    last: list = field(init=False, default=None, compare=False, repr=False)

    def __post_init__(self):
        if self.bind is None and (self.single or self.batch):
            object.__setattr__(self, "bind", native.bind)
            object.__setattr__(self, "key", RUNNERS[self.name])
        object.__setattr__(self, "least", MIN_BATCH if self.batch else 0)
        object.__setattr__(self, "last", [(None, None)])

    def __getstate__(self):  # pickled into a Dask graph: the last robot's entry stays in this process
        return [None if f.name == "last" else getattr(self, f.name) for f in fields(self)]

    def __setstate__(self, state):
        for f, value in zip(fields(self), state):
            object.__setattr__(self, f.name, value)
        object.__setattr__(self, "last", [(None, None)])


def execute(spec: Algorithm, robot, a, b=None, c=None, wrenches=None, gravity=None, friction=None, out=None,
            trig: str = "exact"):
    """``spec`` on the caller's arguments (``a``, ``b``, ``c``: ``spec.inputs``; ``friction``: the derivatives'
    friction model, None or True the robot's own; ``out``: the result's buffer, see :func:`robodyn.arrays.check_out`;
    ``trig``: "exact" or "fast", :data:`robodyn.native.TRIG`), on the path of the module docstring."""
    fast = False if trig is _EXACT else check_trig(trig)
    key = spec.key
    if wrenches is None and key is not None and (friction is None or friction is True):
        seen, run = spec.last[0]
        if seen is not robot:
            run = None
            if type(robot) is Robot or isinstance(robot, Robot):
                # the entry bound to this robot (bound on its first call): one lookup, a positional call, nothing
                # built; the last robot's entry is at hand without the lookup (a loop over one robot's states)
                run = WORKSPACE.get(robot, key)
                if run is None:  # False, kept, says no entry serves this robot: not bound again on every call
                    run = spec.bind(robot, spec.name)
                if run is not None:
                    spec.last[0] = (robot, run)
        if run:
            res = run(a, b, c, gravity, out, spec.friction, spec.least, fast)
            if res is not None:
                return res if spec.result is None else spec.result(res)
    if spec.general is not None:
        if spec.general_out:
            return spec.general(robot, a, b, c, wrenches, gravity, friction, fast, out=out)
        return into(spec.name, out, spec.general(robot, a, b, c, wrenches, gravity, friction, fast))
    if _is_dask(a) or _is_dask(b) or _is_dask(c) or _is_jax(a) or _is_jax(b) or _is_jax(c):
        if out is not None:
            from robodyn.errors import InputError

            raise InputError(f"{spec.name}: out= takes NumPy arrays; Dask and JAX arrays give their own result")
        inputs = (a, b, c)[:len(spec.inputs)]
        if _is_dask(a) or _is_dask(b) or _is_dask(c):
            return _lazy(spec, robot, inputs, wrenches, gravity, trig)
        return _traced(spec, robot, inputs, wrenches, gravity)
    dtype, batch, arrays = joint_arrays(robot, **dict(zip(spec.inputs, (a, b, c))), gravity=gravity, wrenches=wrenches)
    # one state the single-state entry declined (a singular model, NaN) runs NumPy, whose error names the pivot
    if spec.batch and batch and takes_batch(dtype, batch):  # robodyn.native checks its result (and out)
        return native.run_checked(robot, spec.name, batch, arrays, friction=spec.friction, out=out, fast=fast)
    joint = [arrays[k] for k in spec.inputs]
    if spec.matrix:
        return into(spec.name, out, finite_result(spec.name, spec.numpy(robot, *joint)))
    g = check_array("gravity", robot.gravity if gravity is None else gravity, (3,), batch, dtype)
    fe = None if wrenches is None else check_array("wrenches", wrenches, (robot.nf, 6), batch, dtype)
    return into(spec.name, out, finite_result(spec.name, spec.numpy(robot, *joint, g, fe)))


def takes_batch(dtype, batch: tuple[int, ...], least: int = MIN_BATCH) -> bool:
    """Whether a batch of this dtype and shape runs on robodyn.native's generic kernels: float64, at least
    ``least`` states, the kernels available, and ROBODYN_NATIVE not set to 0."""
    if np.dtype(dtype) != _F64 or math.prod(batch) < least:
        return False
    return enabled() and native.available()


def takes_derivatives(dtype) -> bool:
    """Whether the derivatives of a float64 batch of any size (:func:`robodyn.inverse_dynamics_derivatives`,
    :func:`robodyn.forward_dynamics_derivatives`) run on robodyn.native's compiled kernels (available,
    ROBODYN_NATIVE not 0): their O(n²) work per state outweighs the call from the first state."""
    return takes_batch(dtype, (), 0)


def run_batch(robot: Robot, kind: str, batch: tuple[int, ...], a: dict, friction: bool = True,
              fast: bool = False) -> np.ndarray:
    """``kind`` on a checked batch for which :func:`takes_batch` or :func:`takes_derivatives` holds, on the generic
    kernels (:func:`robodyn.native.run_checked`; ``fast``: trig="fast")."""
    return native.run_checked(robot, kind, batch, a, friction=friction, fast=fast)


def _is_dask(x) -> bool:
    """Whether ``x`` is a Dask array (by its type's module: Dask is imported only when one is given)."""
    return type(x).__module__.startswith("dask.")


def _lazy(spec: Algorithm, robot, inputs: tuple, wrenches, gravity, trig: str = "exact"):
    """``spec`` on Dask arrays (NumPy arrays among them are wrapped): a lazy Dask array whose blocks are
    :func:`execute` on the blocks of the inputs (their batch axes broadcast and chunked alike, the joint axis one
    chunk), the robot one task of the graph (sent once to each worker).  ``gravity`` (3,) and ``wrenches``
    (nf, 6) are the same for every state; the result's shape and dtype are those of one state at rest."""
    import dask
    import dask.array as da

    from robodyn.errors import InputError

    if np.ndim(gravity) > 1 or np.ndim(wrenches) > 2 or _is_dask(gravity) or _is_dask(wrenches):
        raise InputError(f"{spec.name}: with Dask arrays, give gravity (3,) and wrenches (nf, 6) as NumPy arrays, the "
                         "same for every state (or compute the Dask arrays first)")
    arrays = [da.asarray(x) for x in inputs]
    for name, x in zip(spec.inputs, arrays):
        if x.ndim == 0 or x.shape[-1] != robot.n:
            raise InputError(f"argument '{name}' has shape {x.shape}; robot '{robot.name}' has n = {robot.n}, so "
                             f"'{name}' must have shape (..., {robot.n})")
    batch = np.broadcast_shapes(*(x.shape[:-1] for x in arrays))
    first = next((x for x in arrays if x.shape[:-1] == batch), None)
    chunks = first.chunks[:-1] if first is not None else tuple((size,) for size in batch)
    arrays = [da.broadcast_to(x, batch + (robot.n,)).rechunk(chunks + ((robot.n,),)) for x in arrays]
    rest = execute(spec, robot, *(np.zeros(robot.n) for _ in arrays), wrenches, gravity)
    tail = rest.shape
    shipped = dask.delayed(robot, pure=True, traverse=False)
    new_axis = list(range(len(batch) + 1, len(batch) + len(tail)))
    return da.map_blocks(_block, spec, shipped, *arrays, wrenches=wrenches, gravity=gravity, trig=trig,
                         dtype=rest.dtype, chunks=chunks + tuple((size,) for size in tail), new_axis=new_axis or None)


def _block(spec: Algorithm, robot, *blocks, wrenches=None, gravity=None, trig="exact"):
    """One block of :func:`_lazy` (a block received from another worker may be unaligned: copied then)."""
    blocks = [x if x.flags.aligned else x.copy() for x in blocks]
    return execute(spec, robot, *blocks, wrenches=wrenches, gravity=gravity, trig=trig)


def _is_jax(x) -> bool:
    """Whether ``x`` is a JAX array or tracer (by its type's module: JAX is imported only when one is given)."""
    return type(x).__module__.startswith("jax")


def _traced(spec: Algorithm, robot, inputs: tuple, wrenches, gravity):
    """``spec`` on JAX arrays: its recursion on the JAX backend, traceable (no argument checks beyond JAX's own)."""
    from robodyn.errors import InputError

    if spec.jax is None:
        raise InputError(f"{spec.name}: this method takes NumPy or Dask arrays; JAX arrays run the default method "
                         "(or robodyn.compile(..., backend='jax'))")
    if wrenches is not None:
        raise InputError(f"{spec.name}: wrenches= is not taken with JAX arrays; give NumPy arrays")
    return spec.jax(robot, *inputs) if spec.matrix else spec.jax(robot, *inputs, gravity)
