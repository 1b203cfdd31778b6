"""Inertia matrix column by column from Newton–Euler (Walker & Orin), Khalil & Dombre [9.97].

Column i of A is the torque Γ of the inverse dynamic model with q̈ = u_i, q̇ = 0, g = 0, no friction and no
external wrenches [9.97].  Each column is one batched Newton–Euler pass with ω = 0; the link
rotations are computed once for all columns, and the links that q̈ = u_i leaves at rest are exact zeros whose
terms are skipped (see :mod:`robodyn.spatial`).
"""

from __future__ import annotations

import numpy as np

from robodyn._arrays import joint_arrays
from robodyn.kinematics import flat_columns, frame_rotations, state_blocks
from robodyn.model.robot import Robot
from robodyn.spatial import sym_mv, vadd, vcross, vmat, vmat_t, vrz, vrz_t, vscale


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
    (rows,) = flat_columns(a["q"])
    Amat = np.empty((rows.shape[1], n, n), dtype)
    for sl, (q_block,) in state_blocks(rows):
        rot = frame_rotations(robot, q_block)
        for i in range(n):
            for k, value in enumerate(_unit_acceleration_torques(robot, rot, i)):
                Amat[sl, k, i] = value  # column i of A is Γ(q̈ = u_i) [9.97]
    Ia = robot.derived.Ia.astype(dtype)
    return Amat.reshape(batch + (n, n)) + Ia * np.eye(n, dtype=dtype)


def _unit_acceleration_torques(robot: Robot, rot: list, i: int) -> list:
    """Γ_rigid for q̈ = u_i, q̇ = 0, g = 0: the Newton–Euler recursions [9.84]–[9.94] with ω_j = 0.

    rot: :func:`~robodyn.kinematics.frame_rotations` of the state.  Exact float zeros stand for the links that do
    not move (the frames before joint i and outside its subtree), so their terms are skipped.
    """
    zero = (0.0, 0.0, 0.0)
    wd, Vd, f, m = [], [], [], []
    k = 0
    first_moving = robot.joint_frames[i]  # the frames before it are at rest (a(j) < j)
    for j, ((C, c, s, P), (J, MS, M)) in enumerate(zip(rot, robot.derived.links_six)):
        if j < first_moving:
            for values in (wd, Vd, f, m):
                values.append(zero)
            k += robot.sigma[j] != 2
            continue
        p = robot.derived.parent[j]
        wdp, Vdp = (wd[p], Vd[p]) if p >= 0 else (zero, zero)
        wd_j = vrz_t(c, s, vmat_t(C, wdp))  # [9.86] with ω = 0
        Vd_j = vrz_t(c, s, vmat_t(C, vadd(Vdp, vcross(wdp, P))))  # [9.87] with ω = 0
        if robot.sigma[j] != 2:
            if k == i and robot.sigma[j] == 0:  # q̈_j = 1 about z_j [9.86]
                wd_j = vadd(wd_j, (0.0, 0.0, 1.0))
            elif k == i:  # q̈_j = 1 along z_j [9.87]
                Vd_j = vadd(Vd_j, (0.0, 0.0, 1.0))
            k += 1
        wd.append(wd_j)
        Vd.append(Vd_j)
        f.append(vadd(vscale(M, Vd_j), vcross(wd_j, MS)))  # [9.88], [9.90] with ω = 0
        m.append(vadd(sym_mv(J, wd_j), vcross(MS, Vd_j)))  # [9.89] with ω = 0
    for j in range(robot.nf - 1, -1, -1):
        p = robot.derived.parent[j]
        if p >= 0 and not (f[j] is zero and m[j] is zero):  # a link at rest that carries no child's wrench
            C, c, s, P = rot[j]
            fp = vmat(C, vrz(c, s, f[j]))  # [9.92]
            f[p] = vadd(f[p], fp)  # [9.91]
            m[p] = vadd(vadd(m[p], vmat(C, vrz(c, s, m[j]))), vcross(P, fp))  # [9.93]
    return [f[j][2] if robot.sigma[j] == 1 else m[j][2] for j in robot.joint_frames]  # [9.94]
