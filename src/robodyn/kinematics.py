"""Kinematics in Khalil–Kleinfinger notation, batched over leading axes.

Every function takes joint arrays of shape (..., n) and loops over frames only.
Frames are numbered as in the seed, j = 1..nf; arrays of per-frame results have the frame axis
right after the batch axes.
"""

from __future__ import annotations

import numpy as np

from robodyn._arrays import check_array, frame_index, joint_arrays
from robodyn.model.robot import Robot
from robodyn.spatial import along_z, cross, cross_z, mtv, mv, rot_x, rot_z


def local_transforms(robot: Robot, q: np.ndarray, dtype=np.float64) -> list[tuple[np.ndarray, np.ndarray]]:
    """^{a(j)}A_j and ^{a(j)}P_j of every frame.

    ^{a(j)}A_j = Rot(z, γ_j) Rot(x, α_j) Rot(z, θ_j)  and
    ^{a(j)}P_j = Rot(z, γ_j) [d_j, −sin α_j r_j, b_j + cos α_j r_j]ᵀ  (Khalil & Dombre ch. 3).

    Returns a list over frames of ``(A, P)`` with A of shape (..., 3, 3) and P of shape (..., 3)
    (the constant ones without batch axes).
    """
    out = []
    k = 0
    for i in range(robot.nf):
        C = (rot_z(robot.gamma[i]) @ rot_x(robot.alpha[i])).astype(dtype)
        p0 = (rot_z(robot.gamma[i]) @ np.array([robot.d[i], 0.0, robot.b[i]])).astype(dtype)
        theta, r = robot.theta[i], robot.r[i]
        if robot.sigma[i] == 0:
            theta = theta + q[..., k]
        elif robot.sigma[i] == 1:
            r = r + q[..., k]
        k += robot.sigma[i] != 2
        A = C @ rot_z(np.asarray(theta, dtype=dtype)).astype(dtype)
        P = p0 + np.asarray(r, dtype=dtype)[..., None] * C[:, 2]
        out.append((A, P))
    return out


def forward_kinematics(robot: Robot, q) -> np.ndarray:
    """Homogeneous transforms ^0T_j of every frame j = 1..nf in the base frame.

    Parameters
    ----------
    q : array_like (..., n)

    Returns
    -------
    ndarray (..., nf, 4, 4)
    """
    dtype, batch, a = joint_arrays(robot, q=q)
    R0, P0 = base_poses(robot, a["q"], dtype)
    T = np.zeros(batch + (robot.nf, 4, 4), dtype)
    T[..., :3, :3] = R0
    T[..., :3, 3] = P0
    T[..., 3, 3] = 1
    return T


def base_poses(robot: Robot, q: np.ndarray, dtype) -> tuple[np.ndarray, np.ndarray]:
    """^0A_j (..., nf, 3, 3) and ^0P_j (..., nf, 3) from checked joint values."""
    batch = q.shape[:-1]
    R0 = np.empty(batch + (robot.nf, 3, 3), dtype)
    P0 = np.empty(batch + (robot.nf, 3), dtype)
    for i, (A, P) in enumerate(local_transforms(robot, q, dtype)):
        a = robot.antecedent[i] - 1
        if a < 0:
            R0[..., i, :, :], P0[..., i, :] = A, P
        else:
            R0[..., i, :, :] = R0[..., a, :, :] @ A
            P0[..., i, :] = P0[..., a, :] + mv(R0[..., a, :, :], P)
    return R0, P0


def ancestors(robot: Robot, i: int) -> list[int]:
    """0-based indices of frame i and all frames between it and the base."""
    chain = []
    while i >= 0:
        chain.append(i)
        i = robot.antecedent[i] - 1
    return chain


def link_velocities(robot: Robot, q, qd) -> tuple[np.ndarray, np.ndarray]:
    """Angular and linear velocities ^jω_j, ^jV_j of every frame, in R_j ([9.17]–[9.18], [9.84]–[9.85]).

    ^jω_j = ^jA_{a} ^aω_a + σ̄_j q̇_j ^ja_j,   ^jV_j = ^jA_a (^aV_a + ^aω_a × ^aP_j) + σ_j q̇_j ^ja_j.

    Returns
    -------
    omega, V : ndarray (..., nf, 3), velocity of the origin O_j (m/s) and of the link (rad/s).
    """
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd)
    qd = a["qd"]
    w = np.zeros(batch + (robot.nf, 3), dtype)
    V = np.zeros(batch + (robot.nf, 3), dtype)
    zero = np.zeros(batch + (3,), dtype)
    for i, k, (A, P) in _frames(robot, a["q"], dtype):
        p = robot.antecedent[i] - 1
        wp, Vp = (w[..., p, :], V[..., p, :]) if p >= 0 else (zero, zero)
        qdk = qd[..., k] if k is not None else np.zeros(batch, dtype)
        w[..., i, :] = mtv(A, wp) + (robot.sigma[i] == 0) * along_z(qdk)
        V[..., i, :] = mtv(A, Vp + cross(wp, P)) + (robot.sigma[i] == 1) * along_z(qdk)
    return w, V


def _frames(robot: Robot, q: np.ndarray, dtype):
    """Iterate (frame index, joint-variable index or None, (A, P)) in frame order."""
    k = 0
    for i, AP in enumerate(local_transforms(robot, q, dtype)):
        if robot.sigma[i] == 2:
            yield i, None, AP
        else:
            yield i, k, AP
            k += 1


def forward_recursion(robot: Robot, q, qd, qdd, gravity):
    """Forward recursion of the Newton–Euler algorithm, [9.84]–[9.87] and [9.90] ([9.80]: V̇_0 = −g).

    Parameters
    ----------
    q, qd, qdd : ndarray (..., n), already checked, one dtype.
    gravity : ndarray (..., 3), g in the base frame (zeros for pure kinematics).

    Returns
    -------
    AP : list over frames of (^{a}A_j, ^{a}P_j)
    w, wd, Vd : lists over frames of (..., 3): ^jω_j, ^jω̇_j, ^jV̇_j  (V̇ is the acceleration of O_j,
        including −g, expressed in R_j).
    """
    dtype = q.dtype
    batch = q.shape[:-1]
    zero = np.zeros(batch + (3,), dtype)
    AP = local_transforms(robot, q, dtype)
    w, wd, Vd = [], [], []
    k = 0
    for i, (A, P) in enumerate(AP):
        p = robot.antecedent[i] - 1
        if p >= 0:
            wp, wdp, Vdp = w[p], wd[p], Vd[p]
        else:
            wp, wdp, Vdp = zero, zero, zero - gravity
        w_prev = mtv(A, wp)  # ^jω_{j-1}  [9.84]
        Vd_j = mtv(A, Vdp + cross(wdp, P) + cross(wp, cross(wp, P)))  # ^{j-1}U_{j-1} ^{j-1}P_j
        wd_j = mtv(A, wdp)
        if robot.sigma[i] == 2:
            w_j = w_prev
        else:
            qdk, qddk = qd[..., k], qdd[..., k]
            k += 1
            if robot.sigma[i] == 0:
                w_j = w_prev + along_z(qdk)  # [9.85]
                wd_j = wd_j + along_z(qddk) + cross_z(w_prev, qdk)  # [9.86]
            else:
                w_j = w_prev
                Vd_j = Vd_j + along_z(qddk) + 2 * cross_z(w_prev, qdk)  # [9.87]
        w.append(w_j)
        wd.append(wd_j)
        Vd.append(Vd_j)
    return AP, w, wd, Vd


def link_accelerations(robot: Robot, q, qd, qdd) -> tuple[np.ndarray, np.ndarray]:
    """Angular acceleration ^jω̇_j and linear acceleration ^jV̇_j of O_j for every frame, in R_j.

    ^jV̇_j is the acceleration of the origin O_j in the base, projected on R_j (the seed's convention
    below [9.90]); gravity is not included.

    Returns
    -------
    omega_dot, V_dot : ndarray (..., nf, 3)
    """
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd, qdd=qdd)
    _, _, wd, Vd = forward_recursion(robot, a["q"], a["qd"], a["qdd"], np.zeros(3, dtype))
    return np.stack(wd, -2), np.stack(Vd, -2)


def jacobian(robot: Robot, q, frame=None, point=None) -> np.ndarray:
    """Geometric Jacobian of frame ``frame`` in the base frame.

    [v; ω] = J q̇, with v the velocity of O_j (or of ``point``) and ω the angular velocity of link j,
    both projected on R_0.  Column k (joint frame f) is [z_f × (p − p_f); z_f] for a revolute joint and
    [z_f; 0] for a prismatic one, zero when frame f is not between the base and frame j.

    Parameters
    ----------
    q : (..., n)
    frame : int or str, default last frame — frame number j = 1..nf (seed numbering) or its name.
    point : (..., 3), optional — a point fixed to link j, coordinates in R_j (m); default O_j.

    Returns
    -------
    ndarray (..., 6, n)
    """
    dtype, batch, a = joint_arrays(robot, q=q)
    j = frame_index(robot, frame)
    R0, P0 = base_poses(robot, a["q"], dtype)
    p = P0[..., j, :]
    if point is not None:
        p = p + mv(R0[..., j, :, :], check_array("point", point, (3,), batch, dtype))
    Jac = np.zeros(batch + (6, robot.n), dtype)
    chain = set(ancestors(robot, j))
    for k, f in enumerate(robot.joint_frames):
        if f not in chain:
            continue
        z = R0[..., f, :, 2]
        if robot.sigma[f] == 0:
            Jac[..., :3, k] = cross(z, p - P0[..., f, :])
            Jac[..., 3:, k] = z
        else:
            Jac[..., :3, k] = z
    return Jac


def jacobian_dot_qd(robot: Robot, q, qd, frame=None, point=None) -> np.ndarray:
    """J̇ q̇ of :func:`jacobian`: the acceleration [a; ω̇] of the point with q̈ = 0, in R_0.

    Computed from the Newton–Euler forward recursion with q̈ = 0 and g = 0 ([9.86]–[9.87]);
    for a point p of link j: a = V̇_j + ω̇ × p + ω × (ω × p).

    Returns
    -------
    ndarray (..., 6)
    """
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd)
    j = frame_index(robot, frame)
    zeros = np.zeros_like(a["qd"])
    _, w, wd, Vd = forward_recursion(robot, a["q"], a["qd"], zeros, np.zeros(3, dtype))
    acc, wdj = Vd[j], wd[j]
    if point is not None:
        s = check_array("point", point, (3,), batch, dtype)
        acc = acc + cross(wdj, s) + cross(w[j], cross(w[j], s))
    R0, _ = base_poses(robot, a["q"], dtype)
    R = R0[..., j, :, :]
    return np.concatenate([mv(R, acc), mv(R, wdj)], -1)
