"""Direct dynamic model by the O(n) recursive Newton–Euler algorithm, Khalil & Dombre §9.7.2 [9.100]–[9.124].

Screw notation (linear part first): twist accelerations V̇ = [V̇; ω̇], wrenches f = [f; m], the spatial
inertia of link j about O_j in R_j

    𝕁_j = [[M_j 1,  −M̂S_j],
           [M̂S_j,   J_j  ]],

the screw transformation ^j𝕋_{a(j)} = [[Aᵀ, −Aᵀ P̂], [0, Aᵀ]] (A = ^{a(j)}A_j, P = ^{a(j)}P_j) and the joint
axis a_j = [σ_j z; σ̄_j z] ([9.23b]).  Three recursions:

i)   forward: ω_j, γ_j (the acceleration of frame j when q̈ = 0 and V̇_{a(j)} = 0, [9.101]) and β_j, the
     wrench of velocity terms and external wrench [9.103];
ii)  backward, j = nf..1: H_j [9.116], K_j [9.117], α_j [9.118], and the articulated quantities of the
     antecedent 𝕁*_{a(j)}, β*_{a(j)} [9.119]–[9.120], SUMMED over all children of a(j) so that trees work;
     a fixed frame (σ_j = 2) has no joint equation: K_j = 𝕁*_j, α_j = 𝕁*_j γ_j − β*_j;
iii) forward: ^jV̇_{a(j)} [9.121], q̈_j [9.122], V̇_j [9.124], from V̇_0 = [−g; 0].

τ_j = Γ_j − Γ_fj(q̇_j) (friction [9.26]–[9.28] and offset, [9.106]).

Seed typography fixed here: [9.104] and [9.107] print (^n𝕋_{n−1})⁻¹ where [9.100] gives ^n𝕋_{n−1}, and
[9.107] misplaces a parenthesis; the consistent forms are [9.121]–[9.122], used below.  [9.112] prints
"+ 𝕋ᵀ f" where [9.102] gives "−"; the sign of [9.102] and [9.115]/[9.119] is used.
"""

from __future__ import annotations

import numpy as np

from robodyn._arrays import joint_arrays
from robodyn.dynamics.newton_euler import _friction, _gravity, _wrenches
from robodyn.kinematics import local_transforms
from robodyn.model.inertia import skew
from robodyn.model.robot import Robot
from robodyn.spatial import cross, cross_z, mtv, mv


def spatial_inertia(robot: Robot, dtype) -> np.ndarray:
    """𝕁_j of every link, (nf, 6, 6), screw notation [linear; angular], about O_j in R_j."""
    nf = robot.nf
    out = np.zeros((nf, 6, 6), dtype)
    MS = skew(robot.MS)
    out[:, :3, :3] = robot.M[:, None, None] * np.eye(3)
    out[:, :3, 3:] = -MS
    out[:, 3:, :3] = MS
    out[:, 3:, 3:] = robot.J
    return out


def screw_transform(A: np.ndarray, P: np.ndarray) -> np.ndarray:
    """^j𝕋_{a(j)} (..., 6, 6) from ^{a}A_j (..., 3, 3) and ^{a}P_j (..., 3): twist at O_a in R_a → at O_j in R_j."""
    batch = np.broadcast_shapes(A.shape[:-2], P.shape[:-1])
    At = np.swapaxes(A, -1, -2)
    T = np.zeros(batch + (6, 6), A.dtype)
    T[..., :3, :3] = At
    T[..., :3, 3:] = -At @ skew(P)
    T[..., 3:, 3:] = At
    return T


def forward_dynamics(robot: Robot, q, qd, tau, wrenches=None, gravity=None) -> np.ndarray:
    """Joint accelerations q̈ = A⁻¹(Γ − H) by the recursive algorithm of §9.7.2, O(n), trees included.

    Parameters
    ----------
    robot : Robot
    q, qd : array_like (..., n)
        Joint positions (rad | m) and velocities (rad/s | m/s).
    tau : array_like (..., n)
        Joint torques Γ (N m | N), friction is subtracted here ([9.106]).
    wrenches : array_like (..., nf, 6), optional
        [f_ej; m_ej] exerted BY link j ON the environment, in R_j, moment about O_j ([9.103]).
    gravity : array_like (3,) or (..., 3), optional
        g in R_0 (m/s²); default ``robot.gravity``.

    Returns
    -------
    ndarray (..., n)
        q̈ (rad/s² | m/s²); float32 when every input is float32.
    """
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd, tau=tau)
    q, qd = a["q"], a["qd"]
    g = _gravity(robot, gravity, batch, dtype)
    fe = _wrenches(robot, wrenches, batch, dtype)
    tau = a["tau"] - _friction(robot, qd)  # [9.106]
    Ia = robot.Ia.astype(dtype)
    spatial = spatial_inertia(robot, dtype)
    J, MS = robot.J.astype(dtype), robot.MS.astype(dtype)
    nf = robot.nf
    k_of = {int(f): k for k, f in enumerate(robot.joint_frames)}
    zero3 = np.zeros(batch + (3,), dtype)
    zero = np.zeros(batch, dtype)

    AP = local_transforms(robot, q, dtype)
    T, axis, w, gam, beta = [], [], [], [], []
    for j in range(nf):  # i) first forward recursion
        A, P = AP[j]
        p = robot.antecedent[j] - 1
        wp = w[p] if p >= 0 else zero3
        qdj = qd[..., k_of[j]] if j in k_of else zero
        w_prev = mtv(A, wp)  # ^jω_{a(j)}
        lin = mtv(A, cross(wp, cross(wp, P)))
        ang = zero3
        if robot.sigma[j] == 1:
            lin = lin + 2 * cross_z(w_prev, qdj)
            w_j = w_prev
        elif robot.sigma[j] == 0:
            ang = cross_z(w_prev, qdj)
            w_j = w_prev + qdj[..., None] * np.array([0, 0, 1], dtype)
        else:
            w_j = w_prev
        gamma = np.concatenate([lin, ang], -1)  # [9.101]
        b = -np.concatenate([cross(w_j, cross(w_j, MS[j])), cross(w_j, mv(J[j], w_j))], -1)  # [9.103]
        if fe is not None:
            b = b - fe[..., j, :]
        T.append(screw_transform(A, P))
        axis.append(np.eye(6, dtype=dtype)[2 if robot.sigma[j] == 1 else 5])
        w.append(w_j)
        gam.append(gamma)
        beta.append(b)

    Jstar = [np.broadcast_to(spatial[j], batch + (6, 6)).copy() for j in range(nf)]
    beta_star = [b.copy() for b in beta]
    H, K, alpha = [None] * nf, [None] * nf, [None] * nf
    for j in range(nf - 1, -1, -1):  # ii) backward recursion
        Js, bs, gj = Jstar[j], beta_star[j], gam[j]
        if robot.sigma[j] == 2:
            K[j] = Js
            alpha[j] = mv(Js, gj) - bs
        else:
            k = k_of[j]
            Ja = mv(Js, axis[j])  # 𝕁*_j a_j (..., 6)
            H[j] = Ja[..., 2 if robot.sigma[j] == 1 else 5] + Ia[j]  # [9.116]
            K[j] = Js - Ja[..., :, None] * Ja[..., None, :] / H[j][..., None, None]  # [9.117]
            u = tau[..., k] + bs[..., 2 if robot.sigma[j] == 1 else 5]
            alpha[j] = mv(K[j], gj) + Ja * (u / H[j])[..., None] - bs  # [9.118]
        p = robot.antecedent[j] - 1
        if p >= 0:
            Tt = np.swapaxes(T[j], -1, -2)
            beta_star[p] = beta_star[p] - mv(Tt, alpha[j])  # [9.119]
            Jstar[p] = Jstar[p] + Tt @ K[j] @ T[j]  # [9.120]

    qdd = np.empty(batch + (robot.n,), dtype)
    Vd = [None] * nf
    Vd0 = np.concatenate([-g, zero3], -1)
    for j in range(nf):  # iii) second forward recursion
        p = robot.antecedent[j] - 1
        Vd_prev = mv(T[j], Vd[p] if p >= 0 else Vd0)  # [9.121]
        acc = Vd_prev + gam[j]
        if robot.sigma[j] == 2:
            Vd[j] = acc
            continue
        k = k_of[j]
        row = 2 if robot.sigma[j] == 1 else 5
        Ja = mv(Jstar[j], axis[j])
        qdd[..., k] = (-np.einsum("...i,...i->...", Ja, acc) + tau[..., k] + beta_star[j][..., row]) / H[j]  # [9.122]
        Vd[j] = acc + qdd[..., k][..., None] * axis[j]  # [9.124]
    return qdd
