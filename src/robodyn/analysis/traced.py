"""Counting scalars: the instrumentation behind :mod:`robodyn.analysis.opcount`, on robodyn's one tracer.

A counting scalar is a :class:`robodyn.dynamics.trace.Rec` on a *counting tape* of the tracer
(``Tape(counting=True)``): the straight-line IR of :mod:`robodyn.dynamics.trace`, written as the generic code
runs.  :func:`Traced` makes one from a float; an object array of them (:func:`traced_array`) goes through the
same batched NumPy code as float arrays.  Each operation executed between two state-dependent values is an
assignment of the IR (``mul``, ``cmul``, ``div``, ``divc``, ``cdiv``, ``add``, ``addc``, ``sin``, …), and a
block's :class:`Tally` is robodyn's one operation counter, :func:`robodyn.dynamics.trace.tally`, over the
assignments made inside the block (every executed operation: the generic code as it runs, without the sharing
and the dead-code scan of a customized program):

* ``mul``: multiplications and divisions (x**2 counts one multiplication), ``div``: the divisions alone;
* ``add``: additions and subtractions;
* ``sin``/``cos``: calls of those functions, ``sqrt``: square roots (Cholesky), ``other``: anything else.

Conventions (stated so the numbers can be compared with hand counts; each paper's own rule is a report option,
:data:`robodyn.analysis.opcount.CONVENTIONS`):

* Operations between constants of the robot (plain Python numbers) are not counted: they can be done
  off-line, as every published count assumes.
* An operation with a constant 0 or ±1 (to :data:`robodyn.dynamics.trace.SNAP_TOL`, the one snap tolerance) is
  not counted and folds to its result (x·0 = 0, x·1 = x, x + 0 = x, x·(−1) = −x): the structural zeros of rotation
  matrices, joint axes z = [0, 0, 1], zero initial velocities, etc., cost nothing, as in a customized or
  hand-optimised implementation.  Negation is free (the sign travels with the value).
* Operations on a (state-dependent) constant that happens to be non-zero are counted.

How the counting reaches NumPy and robodyn, with nothing replaced anywhere: an object array of counting scalars is
a valid argument of robodyn's functions (:func:`robodyn.arrays.as_real_array` accepts arrays of *counting scalars*,
types with ``counting_scalar = True``); NumPy's ufuncs call the elements' own ``sin``/``cos``/``sqrt``/``exp``
methods on object arrays; :func:`robodyn.arrays.cholesky` (used by the Cholesky method) runs the textbook
algorithm on object arrays.  The counting tape of the current thread (or asyncio task) lives as long as the
scalars on it; the counts go to the tally of the innermost active :func:`counting` block of the current thread
(or task): a context variable, so blocks in other threads count separately and outside a block counting scalars
count nothing.
"""

from __future__ import annotations

import weakref
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import numpy as np

from robodyn.dynamics.trace import Rec, Tape, tally as count_ops


@dataclass
class Tally:
    """Numbers of operations counted in one evaluation."""

    mul: int = 0
    add: int = 0
    sin: int = 0
    cos: int = 0
    sqrt: int = 0
    other: int = 0
    div: int = 0
    #: the IR operation names counted, in execution order (what a counting convention reads)
    ops: tuple = field(default=(), compare=False, repr=False)


#: The IR operations executed in the active counting blocks, innermost last (a tuple per context of lists that
#: belong to their blocks, no shared container).
_BLOCKS: ContextVar[tuple] = ContextVar("robodyn_counting_blocks", default=())
#: The counting tape of the context, held weakly: it lives as long as the counting scalars on it.
_TAPE: ContextVar = ContextVar("robodyn_counting_tape", default=None)


def _count(op: tuple) -> None:
    blocks = _BLOCKS.get()
    if blocks:
        blocks[-1].append(op)


def counting_tape() -> Tape:
    """The counting tape of the current thread (or asyncio task), made when none is alive."""
    ref = _TAPE.get()
    tape = ref() if ref is not None else None
    if tape is None:
        tape = Tape(counting=True, listener=_count)
        _TAPE.set(weakref.ref(tape))
    return tape


class _CountingScalars(type):
    """``Traced(value)`` makes a counting scalar; ``isinstance(x, Traced)``: x is one (a Rec on a counting tape)."""

    def __call__(cls, value: float) -> Rec:
        tape = counting_tape()
        return Rec(tape, tape.node(("in", "x"), float(value)), 1)

    def __instancecheck__(cls, x) -> bool:
        return isinstance(x, Rec) and x.g.counting


class Traced(metaclass=_CountingScalars):
    """A counting scalar: ``Traced(value)`` is an input of the counting tape (see the module docstring), a
    :class:`robodyn.dynamics.trace.Rec`; its value is ``.v``.  No arithmetic of its own: the tracer's."""


def traced_array(values) -> np.ndarray:
    """Object array of counting scalars (:func:`Traced`) with the values (and shape) of ``values``."""
    a = np.asarray(values, dtype=float)
    out = np.empty(a.shape, dtype=object)
    for idx in np.ndindex(a.shape):
        out[idx] = Traced(a[idx])
    return out


def values(a) -> np.ndarray:
    """Float array of the values of an array of counting scalars / plain numbers."""
    a = np.asarray(a, dtype=object)
    return np.vectorize(lambda x: float(x.v if isinstance(x, Rec) else x), otypes=[float])(a) if a.size \
        else np.zeros(a.shape)


# --- the counting context ----------------------------------------------------------------------------------------
@contextmanager
def counting():
    """Count the operations done inside the ``with`` block on counting scalars; yields the :class:`Tally`.

    Nested blocks count into their own tally only; blocks of different threads count separately.  The IR
    operations' names are kept in the tally's ``ops`` after the block (what the counting conventions of
    :mod:`robodyn.analysis.opcount` read).
    """
    tally, ops = Tally(), []
    token = _BLOCKS.set(_BLOCKS.get() + (ops,))
    try:
        yield tally
    finally:
        _BLOCKS.reset(token)
        tally.ops = tuple(op[0] for op in ops)
        for kind, k in count_ops(tally.ops).items():
            setattr(tally, kind, k)
