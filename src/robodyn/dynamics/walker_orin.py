"""Inertia matrix column by column from Newton–Euler (Walker & Orin), Khalil & Dombre [9.97].

Column i of A is the torque Γ of the inverse dynamic model with q̈ = u_i, q̇ = 0, g = 0, no friction and no
external wrenches [9.97].  Each column is one batched pass of the Newton–Euler recursion itself
(:func:`~robodyn.dynamics.newton_euler.rnea_components`) with q̇ = 0 given as exact float zeros: ω = 0 and the
links that q̈ = u_i leaves at rest are exact zeros whose terms are skipped (see :mod:`robodyn.spatial`).
"""

from __future__ import annotations

import numpy as np

from robodyn.dynamics import executor
from robodyn.dynamics.composite import assemble_matrix
from robodyn.dynamics.newton_euler import rnea_components
from robodyn.model.robot import Robot
from robodyn.spatial import ScalarBackend


def inertia_matrix(robot: Robot, q) -> np.ndarray:
    """Inertia matrix A(q) (..., n, n) from n Newton–Euler evaluations [9.97], rotor inertias included.

    Column i of A is Γ(q, q̇ = 0, q̈ = u_i) with g = 0: :func:`~robodyn.dynamics.newton_euler.rnea_components`
    itself, on exact float zeros for q̇, g and the other accelerations, so the terms of the links at rest are
    skipped rather than computed.  Arguments, units and result as :func:`robodyn.inertia_matrix`
    (``method="walker_orin"``).
    """
    return executor.execute(_WALKER_ORIN, robot, q)


def _entries(robot: Robot, q_block):
    for i, column in enumerate(_columns(robot, q_block)):
        for k in range(i, robot.n):  # column i of A is Γ(q̈ = u_i) [9.97]; A is symmetric
            yield (k, i), column[k]


def _numpy(robot: Robot, q) -> np.ndarray:
    return assemble_matrix(robot, q, _entries)


def _columns(robot: Robot, q, backend: ScalarBackend | None = None) -> list:
    """The n columns Γ_rigid(q, 0, u_i), g = 0 [9.97], each a list of n scalars."""
    n, zeros = robot.n, [0.0] * robot.n
    return [rnea_components(robot, q, zeros, [float(k == i) for k in range(n)], (0.0, 0.0, 0.0), backend=backend)
            for i in range(n)]


_WALKER_ORIN = executor.Algorithm("inertia_matrix_walker_orin", _numpy, ("q",), matrix=True)
