"""State equations in the generalized-momentum form (De Luca, "State equations": "another choice ...
x̃ = (q, M(q) q̇), generalized momentum").

With p = A(q) q̇ the model becomes q̇ = A(q)⁻¹ p, ṗ = τ + ½ ∂(q̇ᵀ A q̇)/∂q − g(q) − Γ_f(q̇) (the Christoffel
factorization [9.7]): A and its analytic partials (:mod:`robodyn.dynamics.lagrange`), no joint acceleration
(docs/dynamic-model.md, "State equations in momentum form").
"""

from __future__ import annotations

import numpy as np

from robodyn.arrays import as_real_array, finite_result
from robodyn.model.robot import check_robot
from robodyn.model.arguments import joint_arrays
from robodyn.dynamics.api import inertia_matrix
from robodyn.dynamics.lagrange import cholesky_solve, inertia_matrix_partials
from robodyn.dynamics.newton_euler import friction_of, gravity_torques
from robodyn.errors import InputError
from robodyn.model.robot import Robot


def _state(robot: Robot, x, what: str):
    n = check_robot(robot).n
    xa = as_real_array("x", x)
    if xa.ndim == 0 or xa.shape[-1] != 2 * n:
        raise InputError(f"argument 'x' has shape {xa.shape}; robot '{robot.name}' has n = {n}, so the {what} "
                         f"must have shape (..., {2 * n})")
    return xa[..., :n], xa[..., n:]


def momentum_state(robot: Robot, q, qd) -> np.ndarray:
    """The momentum-form state x̃ = [q, p], p = A(q) q̇ (De Luca), shape (..., 2n).

    Parameters
    ----------
    robot : Robot
    q, qd : array_like (..., n)
        Joint positions (rad | m) and velocities (rad/s | m/s).

    Returns
    -------
    ndarray (..., 2n)
        [q, p] with p in N m s (revolute) | N s (prismatic).
    """
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd)
    q = np.broadcast_to(a["q"], batch + (robot.n,))
    p = (inertia_matrix(robot, q) @ a["qd"][..., None])[..., 0]
    return finite_result("momentum_state", np.concatenate([q, p], -1).astype(dtype, copy=False))


def velocity_state(robot: Robot, x) -> np.ndarray:
    """The velocity-form state [q, q̇] from a momentum-form state x̃ = [q, p]: q̇ = A(q)⁻¹ p.

    Parameters
    ----------
    robot : Robot
    x : array_like (..., 2n)
        [q, p].

    Returns
    -------
    ndarray (..., 2n)
        [q, q̇].
    """
    q, p = _state(robot, x, "momentum state x = [q, p]")
    dtype, batch, a = joint_arrays(robot, q=q, p=p)
    q = np.broadcast_to(a["q"], batch + (robot.n,))
    qd = cholesky_solve(inertia_matrix(robot, q), a["p"], robot.name)
    return finite_result("velocity_state", np.concatenate([q, qd], -1))


def momentum_state_derivative(robot: Robot, x, tau, gravity=None) -> np.ndarray:
    """Right-hand side of the momentum-form state equations (De Luca), x̃ = [q, p], p = A(q) q̇.

        q̇ = A⁻¹ p,    ṗ = τ + ½ ∂(q̇ᵀ A q̇)/∂q − g(q) − Γ_f(q̇)

    Γ_f is the robot's friction model (:func:`robodyn.friction_torques`, Khalil & Dombre [9.26]–[9.28], taken
    as it is: discontinuous at q̇ = 0 when F_c ≠ 0).

    Parameters
    ----------
    robot : Robot
    x : array_like (..., 2n)
        [q, p]: joint positions (rad | m) and generalized momenta (N m s | N s).
    tau : array_like (..., n)
        Joint torques (N m | N).
    gravity : array_like (3,) or (..., 3), optional
        Gravity acceleration in R_0; default the robot's.

    Returns
    -------
    ndarray (..., 2n)
        [q̇, ṗ].
    """
    q, p = _state(robot, x, "momentum state x = [q, p]")
    dtype, batch, a = joint_arrays(robot, q=q, p=p, tau=tau, gravity=gravity)
    q = np.broadcast_to(a["q"], batch + (robot.n,))
    qd = cholesky_solve(inertia_matrix(robot, q), a["p"], robot.name)
    dA = inertia_matrix_partials(robot, q)                       # [..., i, j, k] = ∂A_ij/∂q_k
    half_dT = 0.5 * np.einsum("...i,...ijk,...j->...k", qd, dA, qd)
    g = gravity_torques(robot, q, gravity=a.get("gravity"))
    pd = a["tau"] - g + half_dT - friction_of(robot, qd)
    return finite_result("momentum_state_derivative", np.concatenate([qd, pd], -1).astype(dtype, copy=False))
