"""Argument checking shared by the numeric algorithms: shapes, NaN/inf, batch axes, dtype."""

from __future__ import annotations

import numpy as np

from robodyn.errors import InputError


def working_dtype(*arrays) -> np.dtype:
    """float32 when every floating input is float32, float64 otherwise (integers count as float64)."""
    kinds = [np.asarray(a).dtype for a in arrays if a is not None]
    if kinds and all(k == np.float32 for k in kinds):
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def joint_arrays(robot, **arrays):
    """Check joint-space arguments of shape (..., n) and broadcast them to one batch shape.

    Returns ``(dtype, batch_shape, converted)`` where ``converted`` maps each name to an array of that
    dtype and shape ``batch_shape + (n,)`` (None stays None).  Raises :class:`InputError` naming the
    argument when the last axis is not ``robot.n`` or when an entry is NaN/inf.
    """
    n = robot.n
    given = {k: v for k, v in arrays.items() if v is not None}
    dtype = working_dtype(*given.values())
    out, shapes = {}, []
    for name, value in given.items():
        a = np.asarray(value)
        if a.dtype.kind not in "biuf":
            raise InputError(f"argument '{name}' has dtype {a.dtype}; give real numbers")
        if a.ndim == 0 or a.shape[-1] != n:
            raise InputError(
                f"argument '{name}' has shape {a.shape}; robot '{robot.name}' has n = {n} joint variables, "
                f"so '{name}' must have shape (..., {n})"
            )
        if not np.all(np.isfinite(a)):
            raise InputError(f"argument '{name}' contains NaN or inf; give finite values")
        out[name] = a.astype(dtype, copy=False)
        shapes.append(a.shape[:-1])
    try:
        batch = np.broadcast_shapes(*shapes) if shapes else ()
    except ValueError:
        raise InputError(
            "batch axes do not broadcast: " + ", ".join(f"{k} {np.shape(v)}" for k, v in given.items())
        ) from None
    for name in arrays:
        out[name] = None if arrays[name] is None else np.broadcast_to(out[name], batch + (n,))
    return dtype, batch, out


def check_array(name: str, value, shape_tail: tuple[int, ...], batch: tuple[int, ...], dtype) -> np.ndarray:
    """Check an auxiliary argument of shape (..., *shape_tail) that must broadcast to ``batch``."""
    a = np.asarray(value)
    k = len(shape_tail)
    if a.dtype.kind not in "biuf" or a.ndim < k or a.shape[a.ndim - k :] != shape_tail:
        raise InputError(
            f"argument '{name}' has shape {a.shape}; expected (..., {', '.join(map(str, shape_tail))})"
        )
    if not np.all(np.isfinite(a)):
        raise InputError(f"argument '{name}' contains NaN or inf; give finite values")
    try:
        return np.broadcast_to(a.astype(dtype, copy=False), batch + shape_tail)
    except ValueError:
        raise InputError(f"argument '{name}' with shape {a.shape} does not broadcast to batch {batch}") from None


def frame_index(robot, frame) -> int:
    """0-based index of frame ``frame`` given in Khalil & Dombre's numbering 1..nf (default: the last frame)."""
    j = robot.nf if frame is None else frame
    if isinstance(j, str):
        if j not in robot.joint_names:
            raise InputError(f"frame '{j}' is not a frame of robot '{robot.name}'; frames: {list(robot.joint_names)}")
        return robot.joint_names.index(j)
    if not (isinstance(j, (int, np.integer)) and 1 <= j <= robot.nf):
        raise InputError(f"frame = {frame!r}; give a frame number 1..{robot.nf} or a frame name")
    return int(j) - 1
