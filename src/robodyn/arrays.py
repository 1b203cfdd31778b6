"""Argument checking and array helpers shared by the numeric algorithms: shapes, NaN/inf, batch axes, dtype, layout."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from robodyn.errors import InputError, ModelError, NumericOverflowError


def working_dtype(*arrays) -> np.dtype:
    """float32 when every floating input is float32, float64 otherwise (integers count as float64)."""
    kinds = [np.asarray(a).dtype for a in arrays if a is not None]
    if any(k == object for k in kinds):  # arrays of counting scalars (as_real_array)
        return np.dtype(object)
    if kinds and all(k == np.float32 for k in kinds):
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def last_axis_columns(a, columns):
    """``a[..., columns]``, C-contiguous for a NumPy array.  NumPy lays out a fancy index of the last axis with that
    axis outermost in memory: a base regressor (rows, n, b) got its b columns rows·n elements apart, and every copy
    of it and every product of a joint's rows walked memory with that stride.  ``take`` gives the same values, in
    order.  Other arrays (JAX, Dask) are indexed as they are."""
    return a.take(columns, axis=-1) if isinstance(a, np.ndarray) else a[..., columns]


def check_type(name: str, value, cls):
    """Raise :class:`InputError` unless ``value`` is a ``cls``; returns ``value``."""
    if not isinstance(value, cls):
        raise InputError(f"argument '{name}' is {shown(value)}; give a {cls.__name__}")
    return value


def as_real_array(name: str, value) -> np.ndarray:
    """``value`` as a real (integer or float) array, or :class:`InputError` naming ``name``.

    Refused: None, strings, ragged nested lists, booleans (a ``True`` is not a joint position), complex, masked
    arrays with masked entries.
    An object array passes when it holds counting scalars (a type with ``counting_scalar = True``, e.g.
    :class:`robodyn.analysis.traced.Traced`) and real numbers only: the operation counter runs the algorithms on it.
    """
    if value is None:
        raise InputError(f"argument '{name}' is None; give an array of real numbers")
    if isinstance(value, np.ma.MaskedArray) and np.ma.getmaskarray(value).any():  # np.asarray would drop the mask
        mask = np.ma.getmaskarray(value)
        raise InputError(f"argument '{name}' is a masked array with {int(mask.sum())} masked entries (the first at "
                         f"index {tuple(int(i) for i in np.argwhere(mask)[0])}), whose values are not data; drop "
                         "those samples, or split the record there")
    try:
        a = np.asarray(value)
    except (ValueError, TypeError):
        raise InputError(f"argument '{name}' is a ragged or mixed sequence; give a rectangular array of real numbers") from None
    if a.dtype == object and a.size and _counting(a):
        return a
    if a.dtype.kind not in "iuf":
        what = " (True/False is not a joint value)" if a.dtype.kind == "b" else ""
        raise InputError(f"argument '{name}' has dtype {a.dtype}{what}; give real numbers (integers or floats)")
    return a


def one_per(name: str, value, n: int, valid, wanted: str, each: str = "joint") -> np.ndarray:
    """``value`` as an (n,) float array: n values, one per ``each`` (joint or frame), or one value for all; an
    InputError naming ``name`` and n unless every entry passes ``valid`` (elementwise: ``wanted`` says what)."""
    v = as_real_array(name, value).astype(float)
    v = np.full(n, float(v)) if v.ndim == 0 else v
    if v.shape != (n,) or not np.all(valid(v)):
        raise InputError(f"{name} = {np.asarray(value).tolist()}; give {n} {wanted}, one per {each}, or one for all")
    return v


def finite_array(name: str, value, dtype=np.float64) -> np.ndarray:
    """``value`` as a finite real array of ``dtype`` (:func:`as_real_array`, then NaN/inf refused)."""
    a = as_real_array(name, value)
    if not all_finite(a):
        raise InputError(f"argument '{name}' contains NaN or inf; give finite values")
    return a.astype(dtype, copy=False)


def _counting(a: np.ndarray) -> bool:
    """An object array of counting scalars and real numbers, with at least one counting scalar."""
    flat = a.ravel().tolist()
    scalars = [getattr(type(x), "counting_scalar", False) is True for x in flat]
    return any(scalars) and all(s or (type(x) in (int, float)) for s, x in zip(scalars, flat))


#: arrays up to this many entries are checked value by value in Python (1 µs for a state of 7), larger ones by
#: np.isfinite, whose call costs 3-6 µs whatever the size
_FEW = 32


def all_finite(a: np.ndarray) -> bool:
    """No NaN/inf in a real array (or an object array of counting scalars, by their float values)."""
    if a.dtype == object:
        return all(math.isfinite(float(x)) for x in a.ravel().tolist())
    if a.size <= _FEW:
        return all(map(math.isfinite, a.ravel().tolist()))
    return bool(np.isfinite(a).all())


def check_array(name: str, value, shape_tail: tuple[int, ...], batch: tuple[int, ...], dtype) -> np.ndarray:
    """Check an auxiliary argument of shape (..., *shape_tail) that must broadcast to ``batch`` (None: any)."""
    a = as_real_array(name, value)
    k = len(shape_tail)
    if a.ndim < k or a.shape[a.ndim - k :] != shape_tail:
        raise InputError(f"argument '{name}' has shape {a.shape}; expected (..., {', '.join(map(str, shape_tail))})")
    batch = a.shape[: a.ndim - k] if batch is None else batch  # None: the argument's own leading axes
    if not all_finite(a):
        raise InputError(f"argument '{name}' contains NaN or inf; give finite values")
    try:
        return np.broadcast_to(a.astype(dtype, copy=False), batch + shape_tail)
    except ValueError:
        raise InputError(f"argument '{name}' with shape {a.shape} does not broadcast to batch {batch}") from None


def check_out(what: str, out, shape: tuple[int, ...], dtype, arguments: dict | None = None) -> np.ndarray:
    """The caller's ``out=`` buffer, checked before anything is written to it: a writeable, aligned, C-contiguous
    NumPy array of exactly ``shape`` and ``dtype`` (the result's) and, when ``arguments`` (name -> value) are given,
    sharing no memory with any of them (the compiled models' C writes the result while it reads its inputs);
    else :class:`InputError` naming ``out``."""
    want = f"give a writeable C-contiguous {np.dtype(dtype).name} array of shape {tuple(shape)}"
    if type(out) is not np.ndarray:
        raise InputError(f"{what}: argument 'out' is {shown(out)}; {want} (e.g. np.empty({tuple(shape)}))")
    flags = out.flags
    if out.shape != tuple(shape) or out.dtype != dtype or not (flags.c_contiguous and flags.writeable and flags.aligned):
        got = (f"a {'' if flags.c_contiguous else 'non-contiguous '}{'' if flags.writeable else 'read-only '}"
               f"{'' if flags.aligned else 'unaligned '}{out.dtype.name} array of shape {out.shape}")
        raise InputError(f"{what}: argument 'out' is {got}; {want}")
    for name, a in (arguments or {}).items():
        if isinstance(a, np.ndarray) and np.shares_memory(out, a):
            raise InputError(f"{what}: argument 'out' shares memory with '{name}'; give a separate array")
    return out


def into(what: str, out, result: np.ndarray) -> np.ndarray:
    """``result``, or ``out`` (checked by :func:`check_out`) holding a copy of it when the caller gave one."""
    if out is None:
        return result
    np.copyto(check_out(what, out, result.shape, result.dtype), result)
    return out


def shown(value) -> str:
    """``value`` for a message: its type and its repr, cut at 40 characters."""
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def finite_result(what: str, *results):
    """Return ``results`` (one or several arrays, tuples / named tuples / dataclasses of arrays; several come
    back as a tuple) when every entry is finite.

    The inputs of every public numeric function are checked to be finite, so a NaN or inf here comes from
    floating-point overflow (e.g. q̇ = 1e155 squared in the centrifugal terms): raise
    :class:`NumericOverflowError` naming the function ``what`` instead of returning it.
    """
    one = results[0]
    if len(results) == 1 and type(one) is np.ndarray and one.size <= 64 and one.dtype.kind == "f":
        if math.isfinite(sum(one.ravel().tolist())):  # a single state: NaN and ±inf propagate into the sum
            return one
    for a in _arrays_in(results):
        if a.dtype.kind in "fc" and not np.all(np.isfinite(a)):
            limit = np.finfo(a.dtype).max
            raise NumericOverflowError(f"{what}: the result is not finite (floating-point overflow in {a.dtype}, "
                                       f"largest {limit:.3g}) although every input is finite; some input is too large "
                                       "(e.g. a velocity of 1e155), give values of physical size"
                                       + (" or float64 inputs" if a.dtype == np.float32 else ""))
    return results[0] if len(results) == 1 else results


def _arrays_in(result):
    if isinstance(result, np.ndarray):
        yield result
    elif isinstance(result, (tuple, list)):
        for r in result:
            yield from _arrays_in(r)
    elif dataclasses.is_dataclass(result) and not isinstance(result, type):
        for f in dataclasses.fields(result):
            yield from _arrays_in(getattr(result, f.name))
    elif isinstance(result, (float, np.floating)):
        yield np.asarray(result)


def singular_model_error(robot_name: str, detail: str) -> ModelError:
    """The one :class:`ModelError` every direct-dynamics formulation raises on a singular model; ``detail`` is
    the formulation's own evidence (which pivot, its value)."""
    return ModelError(f"robot '{robot_name}': {detail}: the direct dynamic model is singular, a joint moves only "
                      "massless links or point masses on its axis and has no rotor inertia Ia; give those links mass "
                      "or inertia about the axis, or the joint a rotor inertia Ia > 0")


def pivot_too_small(pivot, scale, joint=None) -> bool:
    """True when a pivot (articulated inertia about a joint axis, Cholesky pivot of A), of any batch shape,
    is not above 64 ε times ``scale()``, the size of the inertia it is taken from.

    Rounding leaves ε-sized remainders where the exact pivot is 0, and dividing by them gives accelerations
    of 1e15 instead of an error.  ``scale`` is a callable.  A scalar of a program being generated (a tape of
    robodyn.dynamics.trace that collects its checks, ``records_checks``) records the same test, evaluated when the
    generated code runs (64 ε of float64).  Other traced or symbolic values (operation counting) get the exact sign test and no extra
    operations, and so does a constant pivot whose scale is traced.  ``joint`` (a name or an index) says whose
    pivot it is, to a recording that collects its checks (the customized direct models).
    """
    if getattr(pivot, "records_checks", False):
        return not pivot.exceeds(PIVOT_EPS * float(np.finfo(np.float64).eps), scale(), joint)
    a = np.asarray(pivot)
    if a.dtype.kind != "f":
        return not np.all(pivot > 0)
    s = np.asarray(scale())
    if s.dtype.kind != "f":
        return not np.all(a > 0)
    return bool(np.any(~(a > PIVOT_EPS * float(np.finfo(a.dtype).eps) * s)))


#: A pivot is singular below this many machine epsilons of its scale (the generated code of the customized models
#: tests the same).
PIVOT_EPS = 64


def cholesky(A: np.ndarray) -> np.ndarray:
    """L with A = L Lᵀ (..., n, n): ``np.linalg.cholesky``, or for an object array (counting scalars, see
    :func:`as_real_array`) the textbook algorithm, so that its operations are counted (n square roots,
    n(n − 1)/2 divisions)."""
    A = np.asarray(A)
    if A.dtype != object:
        return np.linalg.cholesky(A)
    sqrt = np.frompyfunc(lambda x: x.sqrt() if hasattr(x, "sqrt") else math.sqrt(x), 1, 1)
    n = A.shape[-1]
    L = np.zeros(A.shape, dtype=object)
    for j in range(n):
        s = A[..., j, j]
        for k in range(j):
            s = s - L[..., j, k] * L[..., j, k]
        L[..., j, j] = sqrt(s)
        for i in range(j + 1, n):
            s = A[..., i, j]
            for k in range(j):
                s = s - L[..., i, k] * L[..., j, k]
            L[..., i, j] = s / L[..., j, j]
    return L
