"""Counting scalars: the instrumentation behind :mod:`robodyn.analysis.opcount`, on robodyn's one tracer
(docs/studies.md §3, "How it counts").

A counting scalar (:func:`Traced`) is a :class:`robodyn.dynamics.trace.Rec` on a counting tape
(``Tape(counting=True)``), which writes every operation executed between two state-dependent values as an
assignment of the tracer's IR; an object array of them (:func:`traced_array`) goes through robodyn's batched NumPy
code unchanged.  A block's :class:`Tally` is :func:`robodyn.dynamics.trace.tally` over the assignments made inside
it: ``mul`` (divisions included; ``div`` the divisions alone), ``add``, ``sin``, ``cos``, ``sqrt``, ``other``.
Operations between constants of the robot are free, those with a constant 0 or ±1 (to
:data:`robodyn.dynamics.trace.SNAP_TOL`) fold, negation is free.  The counts go to the innermost active
:func:`counting` block of the current thread or task (a context variable); outside a block nothing is counted.
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
