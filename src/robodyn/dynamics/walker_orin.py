"""Inertia matrix column by column from Newton–Euler (Walker & Orin), Khalil & Dombre [9.97].

Column i of A is the torque Γ of the inverse dynamic model with q̈ = u_i, q̇ = 0, g = 0, no friction and no
external wrenches [9.97].  The n columns are computed in one call of the batched Newton–Euler algorithm by
adding an axis of size n in front of the joint axis.
"""

from __future__ import annotations

import numpy as np

from robodyn._arrays import joint_arrays
from robodyn.dynamics.newton_euler import rnea
from robodyn.model.robot import Robot


def inertia_matrix(robot: Robot, q) -> np.ndarray:
    """Inertia matrix A(q) (..., n, n) from n Newton–Euler evaluations [9.97], rotor inertias included.

    Parameters
    ----------
    robot : Robot
    q : array_like (..., n)
        Joint positions (rad | m).

    Returns
    -------
    ndarray (..., n, n), float32 for float32 input.
    """
    dtype, batch, a = joint_arrays(robot, q=q)
    n = robot.n
    qs = np.broadcast_to(a["q"][..., None, :], batch + (n, n))
    unit = np.broadcast_to(np.eye(n, dtype=dtype), batch + (n, n))
    zero = np.zeros(batch + (n, n), dtype)
    columns = rnea(robot, qs, zero, unit, np.zeros(3, dtype))  # [..., i, :] = Γ for q̈ = u_i
    return np.swapaxes(columns, -1, -2)
