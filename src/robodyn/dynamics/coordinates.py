"""The dynamic model in other generalized coordinates p = f(q) (De Luca, "Coordinate transformation").

With ṗ = J(q) q̇ (J = ∂f/∂q invertible) and u_q = Jᵀ u_p:  M_p p̈ + c_p + g_p = u_p,  M_p = J⁻ᵀ A J⁻¹,
c_p = J⁻ᵀ c − M_p J̇ J⁻¹ ṗ,  g_p = J⁻ᵀ g; c_p = S_p ṗ with Ṁ_p − 2 S_p skew-symmetric
(:func:`transformed_factorization`; derivation in docs/dynamic-model.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn.arrays import as_real_array, finite_result
from robodyn.model.arguments import joint_arrays
from robodyn.dynamics.api import inertia_matrix
from robodyn.dynamics.lagrange import coriolis_matrix, inertia_matrix_derivative
from robodyn.dynamics.newton_euler import bias_torques, gravity_torques
from robodyn.errors import InputError
from robodyn.model.robot import Robot


@dataclass(frozen=True)
class CoordinateDynamics:
    """Result of :func:`transform_dynamics`; unpacks as ``M_p, c_p, g_p = ...``.

    Attributes
    ----------
    M_p : (..., n, n)   inertia matrix in the p coordinates (symmetric positive definite away from singularities)
    c_p : (..., n)      velocity terms J⁻ᵀ c − M_p J̇ J⁻¹ ṗ (Coriolis, centrifugal, and friction if the robot has it)
    g_p : (..., n)      gravity J⁻ᵀ g
    pd : (..., n)       ṗ = J q̇
    jacobian_inverse : (..., n, n)   J⁻¹, so that q̇ = J⁻¹ ṗ
    """

    M_p: np.ndarray
    c_p: np.ndarray
    g_p: np.ndarray
    pd: np.ndarray
    jacobian_inverse: np.ndarray

    def __iter__(self):
        return iter((self.M_p, self.c_p, self.g_p))

    def generalized_forces(self, u_q) -> np.ndarray:
        """u_p = J⁻ᵀ u_q (..., n): the generalized forces doing work on p, from joint torques u_q (..., n)."""
        return (np.swapaxes(self.jacobian_inverse, -1, -2) @ np.asarray(u_q, dtype=float)[..., None])[..., 0]


def _square(name: str, value, n: int, batch, what: str) -> np.ndarray:
    a = as_real_array(name, value).astype(float)
    if a.shape[-2:] != (n, n):
        raise InputError(f"argument '{name}' has shape {a.shape}; give {what}, shape (..., {n}, {n})")
    if not np.all(np.isfinite(a)):
        raise InputError(f"argument '{name}' contains NaN or inf; give finite values")
    return np.broadcast_to(a, batch + (n, n))


def _change(robot: Robot, q, qd, jacobian, jacobian_dot, rcond: float):
    """Checked q, q̇ (broadcast), J, J̇ (zero when not given), J⁻¹, J⁻ᵀ and M_p = J⁻ᵀ A J⁻¹ of p = f(q)."""
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd)
    n = robot.n
    q, qd = np.broadcast_to(a["q"], batch + (n,)), np.broadcast_to(a["qd"], batch + (n,))
    J = _square("jacobian", jacobian, n, batch, "the Jacobian ∂f/∂q of the new coordinates")
    Jd = np.zeros_like(J) if jacobian_dot is None else _square("jacobian_dot", jacobian_dot, n, batch,
                                                               "the time derivative of the Jacobian")
    sv = np.linalg.svd(J, compute_uv=False)
    if np.any(sv[..., -1] < rcond * sv[..., 0]):
        raise InputError("argument 'jacobian' is singular (or nearly) at some configuration: p = f(q) is not a "
                         "valid change of coordinates there; choose coordinates with an invertible Jacobian")
    A = inertia_matrix(robot, q)
    Jinv = np.linalg.inv(J)
    JinvT = np.swapaxes(Jinv, -1, -2)
    return q, qd, J, Jd, Jinv, JinvT, JinvT @ A @ Jinv


def transform_dynamics(robot: Robot, q, qd, jacobian, jacobian_dot=None, rcond: float = 1e-10) -> CoordinateDynamics:
    """Dynamic model in new generalized coordinates p = f(q), from the joint-space model (De Luca).

    Parameters
    ----------
    robot : Robot
    q, qd : array_like (..., n)
        Joint positions and velocities (the model is evaluated there; p = f(q) itself is not needed).
    jacobian : array_like (n, n) or (..., n, n)
        J = ∂f/∂q at q, invertible.
    jacobian_dot : array_like (n, n) or (..., n, n), optional
        J̇ = d/dt J(q) at (q, q̇). Omit it only for a linear map p = J q (J constant), e.g. absolute link angles.
    rcond : float
        J whose reciprocal condition number is below this raises :class:`InputError` (f is not a valid change
        of coordinates there).

    Returns
    -------
    CoordinateDynamics
        M_p, c_p, g_p with M_p p̈ + c_p + g_p = u_p = J⁻ᵀ u_q.
    """
    q, qd, J, Jd, Jinv, JinvT, M_p = _change(robot, q, qd, jacobian, jacobian_dot, rcond)
    g = gravity_torques(robot, q)
    c = bias_torques(robot, q, qd) - g
    M_p = 0.5 * (M_p + np.swapaxes(M_p, -1, -2))
    pd = (J @ qd[..., None])[..., 0]
    # J̇ J⁻¹ ṗ = J̇ q̇
    c_p = (JinvT @ c[..., None])[..., 0] - (M_p @ (Jd @ qd[..., None]))[..., 0]
    g_p = (JinvT @ g[..., None])[..., 0]
    return finite_result("transform_dynamics",
                         CoordinateDynamics(M_p=M_p, c_p=c_p, g_p=g_p, pd=pd, jacobian_inverse=Jinv))


@dataclass(frozen=True)
class TransformedFactorization:
    """Result of :func:`transformed_factorization` (batch axes first).

    Attributes
    ----------
    S_p : (..., n, n)       factorization of the Coriolis/centrifugal terms in p: S_p ṗ = c_p (without friction)
    M_p_dot : (..., n, n)   Ṁ_p, the time derivative of M_p = J⁻ᵀ A J⁻¹
    """

    S_p: np.ndarray
    M_p_dot: np.ndarray

    @property
    def skew(self) -> np.ndarray:
        """Ṁ_p − 2 S_p (..., n, n), skew-symmetric (De Luca)."""
        return self.M_p_dot - 2.0 * self.S_p


def transformed_factorization(robot: Robot, q, qd, jacobian, jacobian_dot=None,
                              rcond: float = 1e-10) -> TransformedFactorization:
    """The factorization c_p = S_p ṗ in coordinates p = f(q) with Ṁ_p − 2 S_p skew-symmetric (De Luca,
    "Robot dynamic model after coordinate transformation").

    S_p = J⁻ᵀ (C − A J⁻¹ J̇) J⁻¹ with C the Christoffel matrix [9.7] of the joint-space model, and
    Ṁ_p = J⁻ᵀ Ȧ J⁻¹ − (M_p J̇ J⁻¹)ᵀ − M_p J̇ J⁻¹.  Friction is not part of S_p (it is not a velocity-quadratic term).

    Parameters
    ----------
    robot : Robot
    q, qd : array_like (..., n)
        Joint positions and velocities.
    jacobian, jacobian_dot : array_like (..., n, n)
        J = ∂f/∂q and J̇ at (q, q̇), as in :func:`transform_dynamics` (J̇ omitted: J constant).
    rcond : float
        Threshold on the reciprocal condition number of J.

    Returns
    -------
    TransformedFactorization
        S_p, Ṁ_p and ``.skew`` = Ṁ_p − 2 S_p.
    """
    q, qd, J, Jd, Jinv, JinvT, M_p = _change(robot, q, qd, jacobian, jacobian_dot, rcond)
    X = M_p @ Jd @ Jinv
    S_p = JinvT @ coriolis_matrix(robot, q, qd) @ Jinv - X
    M_p_dot = JinvT @ inertia_matrix_derivative(robot, q, qd) @ Jinv - X - np.swapaxes(X, -1, -2)
    return finite_result("transformed_factorization", TransformedFactorization(S_p=S_p, M_p_dot=M_p_dot))
