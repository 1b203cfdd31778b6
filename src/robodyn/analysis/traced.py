"""Counting scalars: the instrumentation behind :mod:`robodyn.analysis.opcount`.

A :class:`Traced` number is a float that counts the arithmetic done on it; an object array of them goes through
the same batched NumPy code as float arrays.  Each arithmetic operation between two state-dependent values adds
to a tally:

* ``mul``: multiplications and divisions (x**2 counts one multiplication);
* ``add``: additions and subtractions;
* ``sin``/``cos``: calls of those functions, ``sqrt``: square roots (Cholesky), ``other``: anything else.

Conventions (stated so the numbers can be compared with hand counts):

* Operations between constants of the robot (plain Python numbers) are not counted: they can be done
  off-line, as every published count assumes.
* An operation with an exact constant 0 or ±1 is not counted and folds to its result (x·0 = 0, x·1 = x,
  x + 0 = x, x·(−1) = −x): the structural zeros of rotation matrices, joint axes z = [0, 0, 1], zero initial
  velocities, etc., cost nothing, as in a customized or hand-optimised implementation.  Negation is free.
* Operations on a (state-dependent) constant that happens to be non-zero are counted.

How the counting reaches NumPy and robodyn (:func:`counting`): while a ``with counting()`` block is active,

* robodyn's argument checks accept object arrays: ``joint_arrays`` and ``check_array`` are swapped in every
  loaded robodyn module (every method module of ``robodyn.dynamics.api`` is imported first, so all are loaded);
* ``np.linalg.cholesky`` accepts object arrays (the textbook algorithm, counted);
* ``np.sin``/``np.cos``/``np.sqrt`` accept object arrays mixing Traced numbers and plain constants.

Each replacement hands float arrays to the original unchanged, so other code keeps working during the block.
Every swap is recorded as it is made and undone in reverse order on exit, also when the block (or the setup
itself) raises.  Blocks nest (the swaps are made by the outermost one; counts go to the innermost tally).
Thread safety: one lock serialises the ``counting`` blocks of all threads (a second thread waits), but the swaps
are process-wide: another thread doing Traced arithmetic or calling the swapped functions on object arrays
during a block is counted too.  Use it from one thread at a time.
"""

from __future__ import annotations

import math
import numbers
import sys
import threading
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from importlib import import_module
from importlib import util as import_util
from types import MappingProxyType

import numpy as np

from robodyn import _arrays
from robodyn.errors import InputError


@dataclass
class Tally:
    """Numbers of operations counted in one evaluation."""

    mul: int = 0
    add: int = 0
    sin: int = 0
    cos: int = 0
    sqrt: int = 0
    other: int = 0


#: The tallies of the active counting blocks, innermost last (a tuple per context, no shared container).
_TALLIES: ContextVar[tuple] = ContextVar("robodyn_tallies", default=())


def _count(kind: str) -> None:
    tallies = _TALLIES.get()
    if tallies:
        setattr(tallies[-1], kind, getattr(tallies[-1], kind) + 1)


#: Constants closer than this to 0 or ±1 are taken as exactly 0 or ±1: they are structural zeros/ones left
#: inexact by round-off in constant sub-expressions (e.g. the articulated inertia K_j a_j = 0 of the last link).
_CONST_TOL = 1e-12


def _is_const(x) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, Traced)


def _is(x, target: int) -> bool:
    """x is a plain constant equal to ``target`` (0, 1 or −1) up to round-off."""
    return _is_const(x) and abs(x - target) < _CONST_TOL


def _value(x) -> float:
    return x.v if isinstance(x, Traced) else x


class Traced:
    """A float that counts the arithmetic done on it (see the module docstring for the rules)."""

    __slots__ = ("v",)

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
        _count("mul")
        return Traced(self.v / _value(o))

    def __rtruediv__(self, o):
        if not isinstance(o, numbers.Number):
            return NotImplemented
        if _is(o, 0):
            return 0
        _count("mul")
        return Traced(o / self.v)

    def __pow__(self, p):
        if p == 2:
            _count("mul")
            return Traced(self.v * self.v)
        _count("other")
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
        _count("other")
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


# --- letting object arrays through the argument checks and NumPy while counting -----------------------------
_ORIGINAL_JOINT_ARRAYS = _arrays.joint_arrays
_ORIGINAL_CHECK_ARRAY = _arrays.check_array
_ORIGINAL_CHOLESKY = np.linalg.cholesky


def _joint_arrays(robot, **arrays):
    given = {k: np.asarray(v) for k, v in arrays.items() if v is not None}
    if not any(a.dtype == object for a in given.values()):
        return _ORIGINAL_JOINT_ARRAYS(robot, **arrays)
    for name, a in given.items():
        if a.ndim == 0 or a.shape[-1] != robot.n:
            raise InputError(f"argument '{name}' has shape {a.shape}; expected (..., {robot.n})")
    batch = np.broadcast_shapes(*(a.shape[:-1] for a in given.values()))
    out = {k: None if v is None else np.broadcast_to(np.asarray(v).astype(object), batch + (robot.n,))
           for k, v in arrays.items()}
    return np.dtype(object), batch, out


def _check_array(name, value, shape_tail, batch, dtype):
    if np.dtype(dtype) != object:
        return _ORIGINAL_CHECK_ARRAY(name, value, shape_tail, batch, dtype)
    return np.broadcast_to(np.asarray(value).astype(object), tuple(batch) + tuple(shape_tail))


def _cholesky(A):
    """Textbook Cholesky A = L Lᵀ on object arrays (one matrix), so that its operations are counted."""
    A = np.asarray(A)
    if A.dtype != object:
        return _ORIGINAL_CHOLESKY(A)
    n = A.shape[-1]
    L = np.zeros(A.shape, dtype=object)
    for j in range(n):
        s = A[..., j, j]
        for k in range(j):
            s = s - L[..., j, k] * L[..., j, k]
        L[..., j, j] = _UFUNCS["sqrt"](s)
        for i in range(j + 1, n):
            s = A[..., i, j]
            for k in range(j):
                s = s - L[..., i, k] * L[..., j, k]
            L[..., i, j] = s / L[..., j, j]
    return L


def _object_ufunc(name: str):
    """np.<name> that also takes object arrays mixing Traced numbers (counted) and plain constants (not
    counted: e.g. cos θ_j of a prismatic joint's constant θ_j), elementwise."""
    original = getattr(np, name)
    scalar = getattr(math, name)
    elementwise = np.frompyfunc(lambda x: getattr(x, name)() if isinstance(x, Traced) else scalar(x), 1, 1)

    def ufunc(x, *args, **kwargs):
        a = np.asarray(x)
        return elementwise(a) if a.dtype == object and not args and not kwargs else original(x, *args, **kwargs)

    return ufunc


_UFUNCS = MappingProxyType({name: _object_ufunc(name) for name in ("sin", "cos", "sqrt")})

# --- the counting context ----------------------------------------------------------------------------------------
_LOCK = threading.RLock()  # serialises counting blocks; reentrant so that blocks nest in one thread


def _swap(swapped: list, owner, attr: str, new) -> None:
    swapped.append((owner, attr, getattr(owner, attr)))
    setattr(owner, attr, new)


def _restore(swapped: list) -> None:
    while swapped:
        owner, attr, previous = swapped.pop()
        setattr(owner, attr, previous)


def _install(swapped: list) -> None:
    """Make every swap of the module docstring, recording each in ``swapped`` as (owner, attribute, previous
    value); on any error undo those made and re-raise."""
    from robodyn.dynamics import api

    try:
        for table in (api._INVERSE, api._INERTIA, api._FORWARD):  # load every method module, so all get swapped
            for module in table.values():
                if import_util.find_spec(module) is not None:
                    import_module(module)
        for name, mod in list(sys.modules.items()):
            if name == "robodyn" or name.startswith("robodyn."):
                for attr, original, new in (("joint_arrays", _ORIGINAL_JOINT_ARRAYS, _joint_arrays),
                                            ("check_array", _ORIGINAL_CHECK_ARRAY, _check_array)):
                    if getattr(mod, attr, None) is original:
                        _swap(swapped, mod, attr, new)
        _swap(swapped, np.linalg, "cholesky", _cholesky)
        for name, fn in _UFUNCS.items():
            _swap(swapped, np, name, fn)
    except BaseException:
        _restore(swapped)
        raise


@contextmanager
def counting():
    """Count the operations done inside the ``with`` block on Traced numbers; yields the :class:`Tally`.

    The swaps that let object arrays through robodyn and NumPy (module docstring) are made on entry of the
    outermost block and undone on its exit, also when the block raises.  Nested blocks count into their own
    tally only.  Blocks of different threads run one after the other.
    """
    tally = Tally()
    with _LOCK:
        outer = _TALLIES.get()
        swapped: list = []  # the swaps made by the outermost block, undone when it ends
        if not outer:
            _install(swapped)
        token = _TALLIES.set(outer + (tally,))
        try:
            yield tally
        finally:
            _TALLIES.reset(token)
            _restore(swapped)
