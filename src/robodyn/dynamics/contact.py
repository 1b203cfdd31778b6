"""Forward dynamics of a fixed-base robot in rigid contact with its environment (a tool pushing on a surface, a
gripper holding a fixture): the contacts as equality constraints on the accelerations.

With J the stacked contact rows of the frames' Jacobians ([v; ω] in R_0, :func:`robodyn.jacobian`) and
γ = J̇ q̇ (:func:`robodyn.jacobian_dot_qd`), the motion that keeps the contacts (J q̈ + γ = 0) under the torques Γ
and the contact forces λ that the environment exerts on the robot solves the KKT system

    [A  Jᵀ] [ q̈ ]   [Γ − H]
    [J  0 ] [−λ ] = [ −γ  ]          (A q̈ + H = Γ + Jᵀ λ, Khalil & Dombre [9.95] with the reaction of [9.91])

(Featherstone, Rigid Body Dynamics Algorithms, §11.1; the fixed-base form of :func:`robodyn.contact_forward_dynamics`).
The contacts are bilateral: a unilateral contact (a surface that can only push) holds while the normal component
of λ pushes; the caller reads that sign off ``forces``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from robodyn.arrays import check_array, finite_result
from robodyn.dynamics.api import inertia_matrix
from robodyn.dynamics.newton_euler import bias_torques
from robodyn.errors import InputError, ModelError
from robodyn.kinematics import jacobian, jacobian_dot_qd
from robodyn.model.arguments import frame_index, joint_arrays
from robodyn.model.robot import Robot


class ConstrainedMotion(NamedTuple):
    """Result of :func:`constrained_forward_dynamics`: q̈ (..., n) and the contact forces λ (..., k, r) that the
    environment exerts on the robot (the constrained rows of [f; m] of each contact, R_0 axes, N | N m);
    unpacks as a pair."""

    qdd: np.ndarray
    forces: np.ndarray


def _rows(rows) -> np.ndarray:
    r = np.atleast_1d(np.asarray(rows))
    if r.ndim != 1 or r.size == 0 or r.dtype.kind not in "iu" or np.any((r < 0) | (r > 5)) \
            or np.unique(r).size != r.size:
        raise InputError(f"rows = {rows!r}; give distinct row indices 0..5 of [vx, vy, vz, ωx, ωy, ωz] (R_0 axes)")
    return r


def constrained_forward_dynamics(robot: Robot, q, qd, tau, frames, points=None, rows=(0, 1, 2), gravity=None,
                                 friction: bool = True) -> ConstrainedMotion:
    """Accelerations and contact forces of a fixed-base robot whose frames (or points of them) touch the
    environment rigidly: J q̈ + J̇ q̇ = 0 on the constrained rows (module docstring).

    Parameters
    ----------
    robot : Robot (fixed base)
    q, qd, tau : array_like (..., n), rad | m, rad/s | m/s, N m | N
    frames : sequence of k frames (numbers 1..nf or names) in contact
    points : array_like (k, 3), optional, the contact point fixed to each frame (coordinates in that frame, m);
        default the frames' origins
    rows : sequence of int, the constrained rows of [v; ω] in R_0, the same for every contact: (0, 1, 2) (default)
        a point that does not slide nor leave, (2,) a frictionless plane of normal z_0, range(6) a welded frame
    gravity : array_like (3,), optional, base frame (m/s²); default ``robot.gravity``
    friction : bool, the robot's joint friction [9.26]–[9.28] in H (default) or not

    Returns
    -------
    ConstrainedMotion (qdd, forces) : (..., n) and (..., k, len(rows))

    Raises
    ------
    ModelError
        Redundant contacts (J not of full row rank: the KKT matrix is singular).
    """
    if not isinstance(robot, Robot) or robot.base != "fixed":
        raise InputError("constrained_forward_dynamics: give a fixed-base robodyn Robot (floating bases: "
                         "robodyn.contact_forward_dynamics)")
    what = "constrained_forward_dynamics"
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd, tau=tau)
    if isinstance(frames, (str, int, np.integer)):
        frames = [frames]
    try:
        frames = list(frames)
    except TypeError:
        raise InputError(f"frames = {frames!r}; give a list of frame numbers 1..{robot.nf} or names") from None
    idx = [frame_index(robot, f) + 1 for f in frames]
    if not idx:
        raise InputError("frames is empty; give the frames in contact")
    P = None if points is None else check_array("points", points, (len(idx), 3), (), np.float64)
    r = _rows(rows)
    qf, qdf, tauf = (a[k].astype(float) for k in ("q", "qd", "tau"))
    J = np.concatenate([jacobian(robot, qf, f, None if P is None else P[i])[..., r, :] for i, f in enumerate(idx)], -2)
    gamma = np.concatenate([jacobian_dot_qd(robot, qf, qdf, f, None if P is None else P[i])[..., r]
                            for i, f in enumerate(idx)], -1)
    A = inertia_matrix(robot, qf)
    H = bias_torques(robot, qf, qdf, gravity=gravity, friction=friction)
    n, m = robot.n, J.shape[-2]
    K = np.zeros(batch + (n + m, n + m))
    K[..., :n, :n], K[..., :n, n:], K[..., n:, :n] = A, np.swapaxes(J, -1, -2), J
    rhs = np.concatenate([tauf - H, -gamma], -1)
    scale = np.abs(K).max(axis=(-2, -1), keepdims=True)
    if np.any(np.linalg.cond(K / scale) > 1e12):
        raise ModelError(f"robot '{robot.name}': the contacts at frames {idx} on rows {r.tolist()} are redundant or "
                         "at a singular configuration (J loses rank: singular KKT matrix); constrain fewer rows")
    x = finite_result(what, np.linalg.solve(K, rhs[..., None])[..., 0])
    return ConstrainedMotion(x[..., :n].astype(dtype, copy=False),
                             (-x[..., n:]).reshape(batch + (len(idx), r.size)).astype(dtype, copy=False))
