"""Dual numbers: forward-mode derivatives of the component recursions.

A :class:`Dual` is a value x (a Python float or a (B,) array over a batch of states) with its tangent ∂x/∂u over D
directions u_0..u_{D−1}.  Running a component recursion of :mod:`robodyn.spatial` (e.g.
:func:`robodyn.dynamics.newton_euler.rnea_components`) on duals seeded with :func:`variable` gives its result and the
derivatives of the result by the chain rule applied operation by operation, exactly (no step size), in one pass:
the recursion's own equations are differentiated, not a copy of them.

The tangent is stored over a window of consecutive directions only, ``tangent[k]`` = ∂x/∂u_{start + k}, shape
(width,) + shape(value); the directions outside it are exact zeros.  Recursions over a kinematic tree make this
window narrow: with joints numbered so that a(j) < j and directions ordered joint by joint, a quantity of frame j
depends on the directions of the joints on its path from the base, a prefix, and cos q_j, sin q_j on one direction.
A sum or product of two duals covers the union of their windows (the narrower one is widened only there).
"""

from __future__ import annotations

import numpy as np

from robodyn.spatial import ScalarBackend, backend_for


class Dual:
    """A value and its tangent over a window of directions (module docstring); immutable.

    Parameters
    ----------
    value : float or ndarray (B,)
    tangent : ndarray (width,) + shape(value), ∂value/∂u_{start + k} in row k
    start : int, the first direction of the window

    Operands of ``+ − × /`` are duals, Python floats or arrays of the shape of the duals' values (one batch per
    computation).  NumPy defers these operators to the dual (``__array_ufunc__ = None``), so an array on the
    left gives a dual too.
    """

    __slots__ = ("value", "tangent", "start")
    __array_ufunc__ = None

    def __init__(self, value, tangent: np.ndarray, start: int):
        self.value = value
        self.tangent = tangent
        self.start = start

    def __repr__(self) -> str:
        return f"Dual({self.value!r}, directions {self.start}..{self.start + len(self.tangent) - 1})"

    def __neg__(self):
        return Dual(-self.value, -self.tangent, self.start)

    def __add__(self, other):
        if type(other) is Dual:
            return Dual(self.value + other.value, *_join(self.tangent, self.start, other.tangent, other.start))
        return Dual(self.value + other, self.tangent, self.start)

    __radd__ = __add__

    def __sub__(self, other):
        if type(other) is Dual:
            return Dual(self.value - other.value, *_join(self.tangent, self.start, other.tangent, other.start, -1))
        return Dual(self.value - other, self.tangent, self.start)

    def __rsub__(self, other):
        return Dual(other - self.value, -self.tangent, self.start)

    def __mul__(self, other):
        if type(other) is Dual:  # (a b)' = a' b + a b'
            return Dual(self.value * other.value,
                        *_join_fresh(self.tangent * other.value, self.start, other.tangent * self.value, other.start))
        return Dual(self.value * other, self.tangent * other, self.start)

    __rmul__ = __mul__

    def __truediv__(self, other):
        if type(other) is Dual:  # (a / b)' = (a' − (a / b) b') / b
            r = self.value / other.value
            t, start = _join(self.tangent, self.start, other.tangent * r, other.start, -1)
            return Dual(r, t / other.value, start)
        return Dual(self.value / other, self.tangent / other, self.start)

    def __rtruediv__(self, other):  # (c / b)' = −(c / b) b' / b
        r = other / self.value
        return Dual(r, self.tangent * (-r / self.value), self.start)


def _join(t: np.ndarray, start: int, u: np.ndarray, ustart: int, sign: int = 1) -> tuple[np.ndarray, int]:
    """t ± u over the union of their windows, as (tangent, start); neither argument is modified."""
    wt, wu = len(t), len(u)
    if start == ustart and wt == wu:
        return (t + u if sign > 0 else t - u), start
    lo = min(start, ustart)
    if start == lo and wt >= ustart + wu - lo and t.shape[1:] == u.shape[1:]:  # t's window holds u's
        out = t.copy()
    elif ustart == lo and wu >= start + wt - lo and t.shape[1:] == u.shape[1:]:
        out = u * sign
        out[start - lo:start - lo + wt] += t
        return out, lo
    else:
        hi = max(start + wt, ustart + wu)
        shape = (hi - lo,) + (t.shape[1:] if t.shape[1:] == u.shape[1:] else
                              np.broadcast_shapes(t.shape[1:], u.shape[1:]))
        end, uend = start + wt, ustart + wu
        if end <= ustart or uend <= start:  # disjoint (the usual case: frame j's cos q_j beside its parent's joints)
            out = np.empty(shape, np.result_type(t, u))
            out[start - lo:end - lo] = t
            if sign > 0:
                out[ustart - lo:uend - lo] = u
            else:
                np.negative(u, out=out[ustart - lo:uend - lo])
            out[min(end, uend) - lo:max(start, ustart) - lo] = 0.0  # the directions between the two, if any
            return out, lo
        out = np.zeros(shape, np.result_type(t, u))
        out[start - lo:end - lo] = t
    if sign > 0:
        out[ustart - lo:ustart - lo + wu] += u
    else:
        out[ustart - lo:ustart - lo + wu] -= u
    return out, lo


def _join_fresh(t: np.ndarray, start: int, u: np.ndarray, ustart: int) -> tuple[np.ndarray, int]:
    """t + u as :func:`_join`, for arrays that nothing else references: the wider one takes the sum in place."""
    wt, wu = len(t), len(u)
    if start == ustart and wt == wu:
        t += u
        return t, start
    if wu > wt or (wu == wt and ustart < start):
        t, start, u, ustart, wt, wu = u, ustart, t, start, wu, wt
    if start <= ustart and ustart + wu <= start + wt and t.shape[1:] == u.shape[1:]:
        t[ustart - start:ustart - start + wu] += u
        return t, start
    return _join(t, start, u, ustart)


def variable(value, direction: int) -> Dual:
    """The independent variable u_direction = ``value``: tangent 1 along ``direction``, 0 along the others.

    Parameters
    ----------
    value : float or ndarray (B,)
    direction : int, 0 ≤ direction < D
    """
    return Dual(value, np.ones((1,) + np.shape(value), np.result_type(value, float)), direction)


def tangent(x, directions: int) -> np.ndarray:
    """The full tangent (directions,) + shape(value) of a dual; zeros for a constant (a float or an array that
    does not depend on the directions)."""
    if type(x) is not Dual:
        return np.zeros((directions,) + np.shape(x))
    out = np.zeros((directions,) + x.tangent.shape[1:], x.tangent.dtype)
    out[x.start:x.start + len(x.tangent)] = x.tangent
    return out


def value(x):
    """The value of a dual, or ``x`` itself for a constant."""
    return x.value if type(x) is Dual else x


def _sign(x):
    """sign(x): a constant (its derivative is 0 wherever it exists)."""
    v = value(x)
    return backend_for(v).sign(v)


def _cos(x):
    if type(x) is not Dual:
        return backend_for(x).cos(x)
    be = backend_for(x.value)
    return Dual(be.cos(x.value), x.tangent * -be.sin(x.value), x.start)


def _sin(x):
    if type(x) is not Dual:
        return backend_for(x).sin(x)
    be = backend_for(x.value)
    return Dual(be.sin(x.value), x.tangent * be.cos(x.value), x.start)


def _exp(x):
    if type(x) is not Dual:
        return backend_for(x).exp(x)
    e = backend_for(x.value).exp(x.value)
    return Dual(e, x.tangent * e, x.start)


#: The scalar backend of duals (values: Python floats through :mod:`math`, arrays through NumPy), for the
#: ``backend=`` argument of the component recursions.
DUAL = ScalarBackend("dual", _cos, _sin, _exp, _sign)

__all__ = ("DUAL", "Dual", "tangent", "value", "variable")
