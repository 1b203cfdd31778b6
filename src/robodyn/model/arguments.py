"""Argument checks against a robot: joint-space arrays (..., n) and frame numbers."""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from robodyn.arrays import all_finite, as_real_array, check_array, working_dtype
from robodyn.errors import InputError
from robodyn.model.robot import check_robot, named_frame, unknown_frame_message

#: Auxiliary arguments that ``joint_arrays`` accepts besides joint-space ones: their trailing shape per robot.
#: Their leading axes take part in the batch, so a gravity of shape (4, 3) with one state gives 4 results.
_AUXILIARY = MappingProxyType({"gravity": lambda robot: (3,), "wrenches": lambda robot: (robot.nf, 6)})


def joint_arrays(robot, **arrays):
    """Check joint-space arguments of shape (..., n) and broadcast them to one batch shape.

    Returns ``(dtype, batch_shape, converted)`` where ``converted`` maps each name to an array of that
    dtype and shape ``batch_shape + (n,)``.  Raises :class:`InputError` naming the argument when ``robot``
    is not a Robot, an argument is None, ragged, boolean or not real, its last axis is not ``robot.n``, or
    an entry is NaN/inf.  ``gravity`` (..., 3) and ``wrenches`` (..., nf, 6) may be passed too (None: not
    given): their leading axes join the batch and they come back broadcast to it.
    """
    check_robot(robot)
    n = robot.n
    aux = {k: v for k, v in arrays.items() if k in _AUXILIARY and v is not None}
    joint = {k: v for k, v in arrays.items() if k not in _AUXILIARY}
    given = {k: as_real_array(k, v) for k, v in joint.items()}
    dtype = working_dtype(*given.values())
    out, shapes = {}, []
    for name, a in given.items():
        if a.ndim == 0 or a.shape[-1] != n:
            raise InputError(f"argument '{name}' has shape {a.shape}; robot '{robot.name}' has n = {n} joint "
                             f"variables, so '{name}' must have shape (..., {n})")
        if not all_finite(a):
            raise InputError(f"argument '{name}' contains NaN or inf; give finite values")
        out[name] = a.astype(dtype, copy=False)
        shapes.append(a.shape[:-1])
    tails = {}
    for name, value in aux.items():
        tail = _AUXILIARY[name](robot)
        a = as_real_array(name, value)
        if a.ndim < len(tail) or a.shape[a.ndim - len(tail) :] != tail:
            raise InputError(f"argument '{name}' has shape {a.shape}; expected (..., {', '.join(map(str, tail))})")
        aux[name], tails[name] = a, tail
    try:
        batch = () if not shapes else shapes[0] if shapes.count(shapes[0]) == len(shapes) else \
            np.broadcast_shapes(*shapes)
    except ValueError:
        raise InputError("batch axes do not broadcast: " + ", ".join(f"{k} {np.shape(v)}" for k, v in given.items())) \
            from None
    for name, a in aux.items():
        try:
            batch = np.broadcast_shapes(batch, a.shape[: a.ndim - len(tails[name])])
        except ValueError:
            raise InputError(f"argument '{name}' with shape {a.shape} does not broadcast to batch {batch}") from None
    for name in given:
        out[name] = _read_only(out[name], batch + (n,))
    for name, value in aux.items():
        out[name] = check_array(name, value, tails[name], batch, dtype)
    return dtype, batch, out


def _read_only(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``a`` broadcast to ``shape``, a read-only view (no algorithm writes into a caller's array); a view of its own
    shape is made directly (np.broadcast_to costs 4-6 µs a call)."""
    if a.shape != shape:
        return np.broadcast_to(a, shape)
    view = a.view()
    view.flags.writeable = False
    return view


def frame_index(robot, frame) -> int:
    """0-based index of frame ``frame`` given in Khalil & Dombre's numbering 1..nf or by name (default: the end
    frame, the tip of the longest movable chain, :func:`robodyn.model.derived.end_frame`; frame nf on a serial
    robot).  A name is a frame name (``robot.frame_names``) or the name of the link whose frame it is
    (``robot.link_names``: URDF links, e.g. ``"tool0"``)."""
    j = robot.derived.end_frame if frame is None else frame
    if isinstance(j, str):
        i = named_frame(robot, j)
        if i is None:
            raise InputError(unknown_frame_message(robot, j))
        return i
    if isinstance(j, (bool, np.bool_)) or not (isinstance(j, (int, np.integer)) and 1 <= j <= robot.nf):
        raise InputError(f"frame = {frame!r}; give a frame number 1..{robot.nf} or a frame name")
    return int(j) - 1
