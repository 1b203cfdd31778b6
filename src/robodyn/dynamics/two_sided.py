"""Rodriguez's two-point boundary-value problem with Kozłowski's corrected bias force: inverse dynamics by
Kozłowski's (3.1)–(3.14) ("New computational algorithms for a discrete Kalman filter in robot dynamics", §3).

Every spatial quantity is kept on both sides of each joint as the paper writes it: V⁺, λ⁺ in the antecedent's
frame at O_j, V⁻, λ⁻, x⁻ in R_j; λ⁻ is a spatial acceleration (v̇ − ω × v), which is why the bias force b_k
(3.14) carries the ω⁻ × v⁻ terms that the one-sided form (:mod:`robodyn.dynamics.spatial_operator`) moves into
ā_k.  Conventions and extensions as there; the equations: docs/formulations.md, "Inverse dynamics, two-sided".
"""

from __future__ import annotations

import numpy as np

from robodyn.dynamics import executor
from robodyn.kinematics import frame_rotations, run_blocks, to_child, twist_to_child, wrench_to_parent
from robodyn.model.friction import friction_of
from robodyn.model.robot import Robot
from robodyn.spatial import ZERO, frame_wrench, vadd, vcross, vscale, vsum


def _inertia_times(J6, w):
    """I_k w for I_k = (XX, XY, XZ, YY, YZ, ZZ) about O_j."""
    xx, xy, xz, yy, yz, zz = J6
    return (xx * w[0] + xy * w[1] + xz * w[2], xy * w[0] + yy * w[1] + yz * w[2], xz * w[0] + yz * w[1] + zz * w[2])


def two_sided_torques(robot: Robot, q, qd, qdd, g, wr=None, backend=None) -> list:
    """Rigid-body joint torques by Kozłowski's (3.1)–(3.14) (docs/formulations.md, "Inverse dynamics, two-sided"), on component scalars; arguments and
    result as :func:`robodyn.dynamics.newton_euler.rnea_components`."""
    rot = frame_rotations(robot, q, backend)
    nf, parent = robot.nf, robot.derived.parent
    w, v, wd, vd = [None] * nf, [None] * nf, [None] * nf, [None] * nf   # V⁻ = [ω; v], λ⁻ = [ω̇; v̇] in R_j
    k = 0
    for i in range(nf):
        p = parent[i]
        # (3.1), (3.4): φᵀ moves the parent's V⁻, λ⁻ from O_a to O_j, A⁻¹ turns them across the joint (the twist
        # transform [9.17]–[9.18]); n_k is formed after the rotation: A⁻¹(a × R h) = (A⁻¹ a) × h, h = z_j in R_j
        if p >= 0:
            v_j, w_j = twist_to_child(rot[i], (v[p], w[p]))
            vd_j, wd_j = twist_to_child(rot[i], (vd[p], wd[p]))
        else:       # (3.3), (3.6) with gravity: V⁺ = 0, λ⁺ = [0; −g]
            w_j = v_j = wd_j = to_child(rot[i], ZERO)
            vd_j = to_child(rot[i], (-g[0], -g[1], -g[2]))
        if robot.sigma[i] != 2:
            rate, acc = qd[k], qdd[k]
            k += 1
            if robot.sigma[i] == 0:     # n_k = [ω⁺ × h q̇; v⁺ × h q̇] (3.7), then + H q̈, H = [z; 0]
                wd_j = (wd_j[0] + w_j[1] * rate, wd_j[1] - w_j[0] * rate, wd_j[2] + acc)
                vd_j = (vd_j[0] + v_j[1] * rate, vd_j[1] - v_j[0] * rate, vd_j[2])
                w_j = (w_j[0], w_j[1], w_j[2] + rate)                                    # (3.2)
            else:                       # n_k = [0; ω⁺ × h q̇] (3.7'), then + H q̈, H = [0; z]
                vd_j = (vd_j[0] + w_j[1] * rate, vd_j[1] - w_j[0] * rate, vd_j[2] + acc)
                v_j = (v_j[0], v_j[1], v_j[2] + rate)                                    # (3.2)
        w[i], v[i], wd[i], vd[i] = w_j, v_j, wd_j, vd_j
    torque, force = [None] * nf, [None] * nf                               # x⁻ = [T; F] in R_j, about O_j
    for i in range(nf):
        J6, MS, M = robot.derived.links_six[i]
        wv = vcross(w[i], v[i])
        # M_k λ_k⁻ + b_k (3.8), (3.14), with m p = MS
        torque[i] = vsum(_inertia_times(J6, wd[i]), vcross(MS, vd[i]), vcross(w[i], _inertia_times(J6, w[i])),
                         vcross(MS, wv))
        force[i] = vsum(vscale(M, vsum(vd[i], wv)), vcross(wd[i], MS), vcross(w[i], vcross(w[i], MS)))
        if wr is not None:
            fe, me = frame_wrench(wr, i)
            force[i], torque[i] = vsum(force[i], fe), vsum(torque[i], me)
    for i in range(nf - 1, -1, -1):
        p = parent[i]
        if p >= 0:  # x⁺ = A x⁻ (3.9), then φ_{k,k−1} moves it from O_j to O_a (3.8): the wrench transform [9.92]–[9.93]
            F, T = wrench_to_parent(rot[i], (force[i], torque[i]))
            force[p] = vadd(force[p], F)
            torque[p] = vadd(torque[p], T)
    return [force[i][2] if robot.sigma[i] == 1 else torque[i][2] for i in robot.joint_frames]  # τ = H x⁻


def inverse_dynamics(robot: Robot, q, qd, qdd, wrenches=None, gravity=None) -> np.ndarray:
    """Inverse dynamics by Kozłowski's two-sided equations (3.1)–(3.14) (:func:`two_sided_torques`).

    Arguments as :func:`robodyn.inverse_dynamics` (``method="two_sided"``): q, q̇, q̈ (..., n); wrenches
    (..., nf, 6) exerted by the links on the environment (R_j, about O_j); gravity (3,) or (..., 3) in R_0.
    Returns τ_k = H_k x_k⁻ + Ia_k q̈_k + Γ_f(q̇_k), (..., n) in N m | N, in the dtype of the inputs.
    """
    return executor.execute(_INVERSE, robot, q, qd, qdd, wrenches, gravity)


def _inverse_numpy(robot: Robot, q, qd, qdd, g, fe) -> np.ndarray:
    tau = run_blocks(robot, two_sided_torques, (q, qd, qdd), g, fe)
    return tau + robot.derived.Ia.astype(q.dtype) * qdd + friction_of(robot, qd)


_INVERSE = executor.Algorithm("inverse_dynamics", _inverse_numpy)
