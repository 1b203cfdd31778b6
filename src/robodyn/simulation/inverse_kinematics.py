"""Numerical inverse kinematics: Newton / damped least squares on the 6-D pose error, batched."""

from __future__ import annotations

import numpy as np

from robodyn.arrays import as_real_array, check_array
from robodyn.model.arguments import joint_arrays
from robodyn.errors import InputError
from robodyn.kinematics import base_poses, frame_arguments, jacobian
from robodyn.model.robot import Robot
from robodyn.spatial import homogeneous, mv


def pose_error(target: np.ndarray, pose: np.ndarray) -> np.ndarray:
    """6-D error [p_d − p; δφ] between two homogeneous transforms (..., 4, 4), base frame.

    δφ = vee((R_e − R_eᵀ)/2) with R_e = R_d Rᵀ: sin(angle)·axis of the rotation taking R to R_d, equal to the
    small rotation vector to first order, so that δφ ≈ J_ω δq; it is zero exactly when R = R_d (angles < π).

    Returns
    -------
    ndarray (..., 6): position error (m) and orientation error (rad), base frame.
    """
    target, pose = (check_array(k, v, (4, 4), None, np.float64) for k, v in (("target", target), ("pose", pose)))
    Re = target[..., :3, :3] @ np.swapaxes(pose[..., :3, :3], -1, -2)
    dphi = 0.5 * np.stack(
        [Re[..., 2, 1] - Re[..., 1, 2], Re[..., 0, 2] - Re[..., 2, 0], Re[..., 1, 0] - Re[..., 0, 1]], -1
    )
    return np.concatenate([target[..., :3, 3] - pose[..., :3, 3], dphi], -1)


def tool_pose(robot: Robot, q, frame=None, point=None) -> np.ndarray:
    """^0T of frame ``frame`` (default the last) with its origin moved to ``point`` (coordinates in that frame, m).

    Returns
    -------
    ndarray (..., 4, 4)
    """
    dtype, batch, a, j, point = frame_arguments(robot, frame, point, q=q)
    R0, P0 = base_poses(robot, a["q"], dtype)
    R, p = R0[..., j, :, :], P0[..., j, :]
    if point is not None:
        p = p + mv(R, point)
    return homogeneous(R, p)


def inverse_kinematics(
    robot: Robot, target, q0, frame=None, point=None, tol: float = 1e-12, max_iter: int = 100,
    damping: float = 1e-8, max_step: float = 0.5,
) -> np.ndarray:
    """Joint values q that put the tool frame at ``target``, by damped least-squares Newton iterations.

    Δq = Jᵀ (J Jᵀ + λ² I)⁻¹ e, with e = :func:`pose_error` (target, T(q)) and J the geometric Jacobian of the
    tool point (:func:`robodyn.jacobian`); each sample's step is scaled so that max |Δq| ≤ ``max_step``.  All samples
    iterate together (batched); the result is the solution branch nearest ``q0``.

    Parameters
    ----------
    target : array_like (..., 4, 4)   desired ^0T of the tool frame
    q0 : array_like (..., n)          initial guess (broadcast against the batch of ``target``)
    frame : int or str, optional      tool frame (default: the last frame)
    point : array_like (3,), optional tool-point offset in that frame (m), default its origin
    tol : float                       stop when every |e_i| < tol (m and rad)
    max_iter : int
    damping : float                   λ (small: near-Newton steps; keeps J Jᵀ + λ² I invertible at singularities)
    max_step : float                  largest joint change per iteration (rad | m)

    Returns
    -------
    q : ndarray (..., n), float64

    Raises
    ------
    InputError
        When some target is not reached within ``max_iter`` iterations (unreachable, or q0 too far).
    """
    T = check_array("target", target, (4, 4), None, np.float64)
    _, batch, a = joint_arrays(robot, q0=np.broadcast_to(as_real_array("q0", q0), T.shape[:-2] + np.shape(q0)[-1:]))
    q = np.array(a["q0"], dtype=np.float64)
    n = robot.n
    for _ in range(max_iter):
        e = pose_error(T, tool_pose(robot, q, frame, point))
        if np.all(np.abs(e) < tol):
            return q
        J = jacobian(robot, q, frame, point)
        JJt = J @ np.swapaxes(J, -1, -2) + damping**2 * np.eye(6)
        dq = np.einsum("...ji,...j->...i", J, np.linalg.solve(JJt, e[..., None])[..., 0])
        scale = np.minimum(1.0, max_step / np.maximum(np.abs(dq).max(-1, keepdims=True), 1e-300))
        q = q + scale * dq
    worst = tuple(int(i) for i in np.unravel_index(np.argmax(np.abs(e).max(-1)), e.shape[:-1]))
    raise InputError(
        f"inverse kinematics: target{f' at batch index {worst}' if batch else ''} not reached in {max_iter} iterations "
        f"(pose error {np.abs(e).max():.3g}); check that the target is reachable or give a closer q0"
        + ("" if n >= 6 else f" (robot has only n = {n} joints: a general 6-D pose needs 6)")
    )
