"""Counting scalars: the instrumentation behind :mod:`robodyn.analysis.opcount`.

A :class:`Traced` number is a float that counts the arithmetic done on it; an object array of them goes through
the same batched NumPy code as float arrays.  Each arithmetic operation between two state-dependent values adds
to a tally:

* ``mul``: multiplications and divisions (x**2 counts one multiplication), ``div``: the divisions alone;
* ``add``: additions and subtractions;
* ``sin``/``cos``: calls of those functions, ``sqrt``: square roots (Cholesky), ``other``: anything else.

Each counted operation is written as the operation of the IR of :mod:`robodyn.dynamics.trace` that it is
(``mul``, ``div``, ``rdiv``, ``add``, ``sin``, …), and a block's :class:`Tally` is robodyn's one operation counter,
:func:`robodyn.dynamics.trace.tally`, over the operations the block executed (every executed operation: the
generic code as it runs, without the sharing and the dead-code scan of a customized program).

Conventions (stated so the numbers can be compared with hand counts):

* Operations between constants of the robot (plain Python numbers) are not counted: they can be done
  off-line, as every published count assumes.
* An operation with a constant 0 or ±1 (to :data:`robodyn.dynamics.trace.SNAP_TOL`, the one snap tolerance) is
  not counted and folds to its result (x·0 = 0, x·1 = x, x + 0 = x, x·(−1) = −x): the structural zeros of rotation matrices, joint axes z = [0, 0, 1], zero initial
  velocities, etc., cost nothing, as in a customized or hand-optimised implementation.  Negation is free.
* Operations on a (state-dependent) constant that happens to be non-zero are counted.

How the counting reaches NumPy and robodyn, with nothing replaced anywhere: an object array of Traced numbers is
a valid argument of robodyn's functions (:func:`robodyn.arrays.as_real_array` accepts arrays of *counting scalars*,
types with ``counting_scalar = True``); NumPy's ufuncs call the elements' own ``sin``/``cos``/``sqrt``/``exp``
methods on object arrays; :func:`robodyn.arrays.cholesky` (used by the Cholesky method) runs the textbook
algorithm on object arrays.  The counts go to the tally of the innermost active :func:`counting` block of the
current thread (or asyncio task): a context variable, so blocks in other threads count separately and outside a
block Traced numbers count nothing.
"""

from __future__ import annotations

import math
import numbers
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

from robodyn.dynamics.trace import snap, tally as count_ops


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


#: The operations executed in the active counting blocks, innermost last (a tuple per context of lists that
#: belong to their blocks, no shared container).
_BLOCKS: ContextVar[tuple] = ContextVar("robodyn_counting_blocks", default=())


def _count(op: str) -> None:
    blocks = _BLOCKS.get()
    if blocks:
        blocks[-1].append(op)


def _is_const(x) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, Traced)


def _is(x, target: int) -> bool:
    """x is a plain constant equal to ``target`` (0, 1 or −1) up to round-off."""
    return _is_const(x) and snap(x) == target


def _value(x) -> float:
    return x.v if isinstance(x, Traced) else x


class Traced:
    """A float that counts the arithmetic done on it (see the module docstring for the rules)."""

    __slots__ = ("v",)
    #: accepted by robodyn's argument checks inside object arrays (robodyn.arrays.as_real_array)
    counting_scalar = True

    def __init__(self, value: float):
        self.v = float(value)

    def __repr__(self) -> str:
        return f"Traced({self.v!r})"

    # --- additions -------------------------------------------------------------------------------------
    def __add__(self, o):
        if _is(o, 0):
            return self
        if not isinstance(o, (Traced, numbers.Number)):
            return NotImplemented
        _count("add")
        return Traced(self.v + _value(o))

    __radd__ = __add__

    def __sub__(self, o):
        if _is(o, 0):
            return self
        if not isinstance(o, (Traced, numbers.Number)):
            return NotImplemented
        _count("add")
        return Traced(self.v - _value(o))

    def __rsub__(self, o):
        if _is(o, 0):
            return -self
        if not isinstance(o, numbers.Number):
            return NotImplemented
        _count("add")
        return Traced(o - self.v)

    # --- multiplications -------------------------------------------------------------------------------
    def __mul__(self, o):
        if _is(o, 0):
            return 0
        if _is(o, 1):
            return self
        if _is(o, -1):
            return -self
        if not isinstance(o, (Traced, numbers.Number)):
            return NotImplemented
        _count("mul")
        return Traced(self.v * _value(o))

    __rmul__ = __mul__

    def __truediv__(self, o):
        if _is(o, 1) or _is(o, -1):
            return self if _is(o, 1) else -self
        if not isinstance(o, (Traced, numbers.Number)):
            return NotImplemented
        _count("div")
        return Traced(self.v / _value(o))

    def __rtruediv__(self, o):
        if not isinstance(o, numbers.Number):
            return NotImplemented
        if _is(o, 0):
            return 0
        _count("rdiv")
        return Traced(o / self.v)

    def __pow__(self, p):
        if p == 2:
            _count("mul")
            return Traced(self.v * self.v)
        _count("pow")
        return Traced(self.v ** _value(p))

    # --- free operations -------------------------------------------------------------------------------
    def __neg__(self):
        return Traced(-self.v)

    def __pos__(self):
        return self

    def __abs__(self):
        return Traced(abs(self.v))

    def __float__(self):
        return self.v

    def __eq__(self, o):
        return self.v == _value(o)

    def __ne__(self, o):
        return self.v != _value(o)

    def __lt__(self, o):
        return self.v < _value(o)

    def __le__(self, o):
        return self.v <= _value(o)

    def __gt__(self, o):
        return self.v > _value(o)

    def __ge__(self, o):
        return self.v >= _value(o)

    __hash__ = None

    # --- functions called by NumPy ufuncs on object arrays --------------------------------------------
    def sin(self):
        _count("sin")
        return Traced(math.sin(self.v))

    def cos(self):
        _count("cos")
        return Traced(math.cos(self.v))

    def sqrt(self):
        _count("sqrt")
        return Traced(math.sqrt(self.v))

    def exp(self):
        _count("exp")
        return Traced(math.exp(self.v))

    def sign(self):
        return (self.v > 0) - (self.v < 0)


def traced_array(values) -> np.ndarray:
    """Object array of :class:`Traced` numbers with the values (and shape) of ``values``."""
    a = np.asarray(values, dtype=float)
    out = np.empty(a.shape, dtype=object)
    for idx in np.ndindex(a.shape):
        out[idx] = Traced(a[idx])
    return out


def values(a) -> np.ndarray:
    """Float array of the values of an array of Traced numbers / plain numbers."""
    a = np.asarray(a, dtype=object)
    return np.vectorize(lambda x: float(_value(x)), otypes=[float])(a) if a.size else np.zeros(a.shape)


# --- the counting context ----------------------------------------------------------------------------------------
@contextmanager
def counting():
    """Count the operations done inside the ``with`` block on Traced numbers; yields the :class:`Tally`.

    Nested blocks count into their own tally only; blocks of different threads count separately.
    """
    tally, ops = Tally(), []
    token = _BLOCKS.set(_BLOCKS.get() + (ops,))
    try:
        yield tally
    finally:
        _BLOCKS.reset(token)
        for kind, k in count_ops(ops).items():
            setattr(tally, kind, k)
