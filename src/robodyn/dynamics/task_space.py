"""Task-space (operational-space) dynamics of a frame or a point, with redundancy (De Luca, "Robot dynamic model
in the task/Cartesian space, with redundancy").

For a task r = f(q) ∈ R^m with Jacobian J (m × n, full rank m ≤ n) and the joint-space model A q̈ + n(q, q̇) = τ:

    Λ = (J A⁻¹ Jᵀ)⁻¹                       task inertia matrix M_r
    J̄ = A⁻¹ Jᵀ Λ                           inertia-weighted (dynamically consistent) pseudo-inverse J_M#
    N = I − Jᵀ J̄ᵀ                          projector of torques onto the null space of J̄ᵀ
    μ = Λ (J A⁻¹ (n − g) − J̇ q̇),  p = Λ J A⁻¹ g      so that  n_r = μ + p

and every torque τ = Jᵀ F + N τ₀ gives the task acceleration r̈ of  Λ r̈ + μ + p = F, independent of τ₀.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn.arrays import finite_result
from robodyn.model.arguments import joint_arrays
from robodyn.dynamics.api import inertia_matrix
from robodyn.dynamics.newton_euler import bias_torques, gravity_torques
from robodyn.errors import InputError
from robodyn.kinematics import jacobian, jacobian_dot_qd
from robodyn.model.robot import Robot


class SingularConfigurationError(InputError):
    """The task Jacobian loses rank at a configuration: the task inertia matrix does not exist there."""


@dataclass(frozen=True)
class TaskSpaceDynamics:
    """Result of :func:`task_space_dynamics`; unpacks as ``Lambda, mu, p = ...``.

    Attributes (batch axes first; m task rows, n joints)
    ----------
    Lambda : (..., m, m)   task inertia matrix Λ = M_r (kg | kg m² ...)
    mu : (..., m)          Coriolis, centrifugal and friction force in the task space
    p : (..., m)           gravity force in the task space
    J : (..., m, n)        task Jacobian (rows of [v; ω] in R_0)
    Jdot_qd : (..., m)     J̇ q̇
    Jbar : (..., n, m)     inertia-weighted pseudo-inverse J̄ = A⁻¹ Jᵀ Λ (J J̄ = I)
    null_projector : (..., n, n)   N = I − Jᵀ J̄ᵀ: N τ₀ produces no task acceleration
    """

    Lambda: np.ndarray
    mu: np.ndarray
    p: np.ndarray
    J: np.ndarray
    Jdot_qd: np.ndarray
    Jbar: np.ndarray
    null_projector: np.ndarray

    def __iter__(self):
        return iter((self.Lambda, self.mu, self.p))

    @property
    def M_r(self) -> np.ndarray:
        """De Luca's task inertia matrix M_r = Λ."""
        return self.Lambda

    @property
    def n_r(self) -> np.ndarray:
        """De Luca's n_r = M_r (J M⁻¹ n − J̇ q̇) = μ + p."""
        return self.mu + self.p


def _rows(rows) -> np.ndarray:
    if rows is None:
        return np.arange(6)
    r = np.atleast_1d(np.asarray(rows))
    if r.ndim != 1 or r.size == 0 or r.dtype.kind not in "iu" or np.any((r < 0) | (r > 5)) \
            or np.unique(r).size != r.size:
        raise InputError(f"rows = {rows!r}; give distinct row indices 0..5 of [vx, vy, vz, ωx, ωy, ωz]")
    return r


def task_space_dynamics(robot: Robot, q, qd, frame=None, point=None, rows=None, damping: float = 0.0,
                        rcond: float = 1e-8) -> TaskSpaceDynamics:
    """Task-space dynamics Λ r̈ + μ + p = F of a frame (or a point of it), De Luca's M_r, n_r.

    Parameters
    ----------
    robot : Robot
    q, qd : array_like (..., n)
        Joint positions (rad | m) and velocities.
    frame : int or str, optional
        Frame j = 1..nf (Khalil–Kleinfinger numbering) or its name; default the last frame.
    point : array_like (3,) or (..., 3), optional
        A point fixed to frame j, coordinates in R_j (m); default the origin O_j.
    rows : sequence of int, optional
        Which rows of the 6-row velocity [v; ω] (R_0 axes) form the task, e.g. ``[0, 1]`` for the planar
        position; default all six. The task dimension m = len(rows) must not exceed n.
    damping : float
        0 (default): Λ = (J A⁻¹ Jᵀ)⁻¹, and a configuration where J A⁻¹ Jᵀ is numerically singular raises
        :class:`SingularConfigurationError`. λ > 0: the damped Λ = (J A⁻¹ Jᵀ + λ² I)⁻¹, finite everywhere but
        no longer exact (the task force F then only approximately produces the commanded r̈).
    rcond : float
        Singularity threshold on the ratio of the smallest to the largest eigenvalue of J A⁻¹ Jᵀ.

    Returns
    -------
    TaskSpaceDynamics
        ``Lambda, mu, p = task_space_dynamics(...)`` or the full result with J̄ and the null-space projector.
    """
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd)
    q, qd = np.broadcast_to(a["q"], batch + (robot.n,)), np.broadcast_to(a["qd"], batch + (robot.n,))
    r = _rows(rows)
    if r.size > robot.n:
        raise InputError(f"the task has m = {r.size} rows but robot '{robot.name}' has n = {robot.n} joints; "
                         f"choose at most {robot.n} rows with rows=[...]")
    if not (damping >= 0 and np.isfinite(damping)):
        raise InputError(f"damping = {damping!r}; give 0 (exact, error at singularities) or a positive number")
    J = jacobian(robot, q, frame=frame, point=point)[..., r, :]
    Jdq = jacobian_dot_qd(robot, q, qd, frame=frame, point=point)[..., r]
    A = inertia_matrix(robot, q)
    AinvJt = np.linalg.solve(A, np.swapaxes(J, -1, -2))          # (..., n, m)
    Phi = J @ AinvJt
    Phi = 0.5 * (Phi + np.swapaxes(Phi, -1, -2))
    m = r.size
    if damping == 0:
        ev = np.linalg.eigvalsh(Phi)
        ratio = ev[..., 0] / np.maximum(ev[..., -1], np.finfo(float).tiny)
        bad = ratio < rcond
        if np.any(bad):
            idx = tuple(int(i) for i in np.argwhere(np.atleast_1d(bad))[0]) if batch else ()
            raise SingularConfigurationError(
                f"robot '{robot.name}': the task Jacobian of frame {frame if frame is not None else robot.nf} "
                f"(rows {r.tolist()}) is singular at q{list(idx) if idx else ''} = "
                f"{np.round(q[idx] if batch else q, 6).tolist()} (eigenvalue ratio of J A⁻¹ Jᵀ {float(np.min(ratio)):.3g} "
                f"< rcond = {rcond:g}); move away from the singularity, remove dependent rows, or pass damping > 0")
    else:
        Phi = Phi + damping**2 * np.eye(m)
    Lam = np.linalg.inv(Phi)
    Lam = 0.5 * (Lam + np.swapaxes(Lam, -1, -2))
    n_all = bias_torques(robot, q, qd)
    g = gravity_torques(robot, q)
    Jbar = AinvJt @ Lam
    JAinv = np.swapaxes(AinvJt, -1, -2)                         # J A⁻¹ (A symmetric)
    mu = (Lam @ ((JAinv @ (n_all - g)[..., None])[..., 0] - Jdq)[..., None])[..., 0]
    p = (Lam @ (JAinv @ g[..., None]))[..., 0]
    N = np.eye(robot.n) - np.swapaxes(J, -1, -2) @ np.swapaxes(Jbar, -1, -2)
    return finite_result("task_space_dynamics", TaskSpaceDynamics(
        Lambda=Lam.astype(dtype, copy=False), mu=mu.astype(dtype, copy=False), p=p.astype(dtype, copy=False), J=J,
        Jdot_qd=Jdq, Jbar=Jbar, null_projector=N))
