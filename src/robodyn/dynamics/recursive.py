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
from robodyn.errors import ModelError
from robodyn.kinematics import local_transforms
from robodyn.model.inertia import skew
from robodyn.model.robot import Robot
from robodyn.spatial import along_z, cross, cross_z, mtv, mv


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
    T[..., :3, 3:] = cross(P[..., None, :], At)  # row i: P × (row i of Aᵀ), i.e. −Aᵀ P̂
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
    g = _gravity(robot, gravity, batch, dtype)
    fe = _wrenches(robot, wrenches, batch, dtype)
    tau = a["tau"] - _friction(robot, a["qd"])  # [9.106]
    T, gam, beta = _first_forward(robot, a["q"], a["qd"], fe)
    H, Jstar, beta_star = _backward(robot, tau, T, gam, beta)
    return _second_forward(robot, tau, g, T, gam, H, Jstar, beta_star)


def _row(robot: Robot, j: int) -> int:
    """Index of the joint axis in a screw [linear; angular]: a_j = u_3 (prismatic) or u_6 (revolute) [9.23b]."""
    return 2 if robot.sigma[j] == 1 else 5


def _first_forward(robot: Robot, q, qd, fe):
    """^j𝕋_{a(j)}, γ_j [9.101] and β_j [9.103] of every frame (lists over frames)."""
    dtype, batch = q.dtype, q.shape[:-1]
    J, MS = robot.J.astype(dtype), robot.MS.astype(dtype)
    k_of = {int(f): k for k, f in enumerate(robot.joint_frames)}
    zero3, zero = np.zeros(batch + (3,), dtype), np.zeros(batch, dtype)
    T, gam, beta, w = [], [], [], []
    for j, (A, P) in enumerate(local_transforms(robot, q, dtype)):
        p = robot.antecedent[j] - 1
        wp = w[p] if p >= 0 else zero3
        qdj = qd[..., k_of[j]] if j in k_of else zero
        w_prev = mtv(A, wp)  # ^jω_{a(j)}
        lin, ang, w_j = mtv(A, cross(wp, cross(wp, P))), zero3, w_prev
        if robot.sigma[j] == 1:
            lin = lin + 2 * cross_z(w_prev, qdj)
        elif robot.sigma[j] == 0:
            ang = cross_z(w_prev, qdj)
            w_j = w_prev + along_z(qdj)  # [9.17]
        b = -np.concatenate([cross(w_j, cross(w_j, MS[j])), cross(w_j, mv(J[j], w_j))], -1)  # [9.103]
        T.append(screw_transform(A, P))
        gam.append(np.concatenate([lin, ang], -1))  # [9.101]
        beta.append(b if fe is None else b - fe[..., j, :])
        w.append(w_j)
    return T, gam, beta


def _backward(robot: Robot, tau, T, gam, beta):
    """H_j [9.116], 𝕁*_j and β*_j, with K_j [9.117] and α_j [9.118] passed to the antecedent [9.119]–[9.120]."""
    dtype, batch = tau.dtype, tau.shape[:-1]
    spatial, Ia = spatial_inertia(robot, dtype), robot.Ia.astype(dtype)
    k_of = {int(f): k for k, f in enumerate(robot.joint_frames)}
    Jstar = [np.broadcast_to(spatial[j], batch + (6, 6)).copy() for j in range(robot.nf)]
    beta_star = [b.copy() for b in beta]
    H = [None] * robot.nf
    for j in range(robot.nf - 1, -1, -1):
        Js, bs = Jstar[j], beta_star[j]
        if robot.sigma[j] == 2:  # no joint: the wrench follows the antecedent's acceleration rigidly
            K, alpha = Js, mv(Js, gam[j]) - bs
        else:
            row = _row(robot, j)
            Ja = Js[..., :, row]  # 𝕁*_j a_j
            H[j] = Ja[..., row] + Ia[j]  # [9.116]
            if not np.all(H[j] > 0):
                raise ModelError(
                    f"robot '{robot.name}', joint {robot.joint_names[j]}: articulated inertia H_j = "
                    f"{float(np.min(H[j])):.3g} <= 0, the direct model is singular (the links it moves are massless "
                    "and its rotor inertia Ia is 0); give those links mass or the joint a rotor inertia Ia"
                )
            K = Js - Ja[..., :, None] * Ja[..., None, :] / H[j][..., None, None]  # [9.117]
            u = tau[..., k_of[j]] + bs[..., row]
            alpha = mv(K, gam[j]) + Ja * (u / H[j])[..., None] - bs  # [9.118]
        p = robot.antecedent[j] - 1
        if p >= 0:  # summed over all children of p: trees
            Tt = np.swapaxes(T[j], -1, -2)
            beta_star[p] = beta_star[p] - mv(Tt, alpha)  # [9.119]
            Jstar[p] = Jstar[p] + Tt @ K @ T[j]  # [9.120]
    return H, Jstar, beta_star


def _second_forward(robot: Robot, tau, g, T, gam, H, Jstar, beta_star):
    """q̈ from V̇_0 = [−g; 0] by [9.121]–[9.124]."""
    dtype, batch = tau.dtype, tau.shape[:-1]
    k_of = {int(f): k for k, f in enumerate(robot.joint_frames)}
    qdd = np.empty(batch + (robot.n,), dtype)
    Vd = [None] * robot.nf
    Vd0 = np.concatenate([-g, np.zeros(batch + (3,), dtype)], -1)
    for j in range(robot.nf):
        p = robot.antecedent[j] - 1
        acc = mv(T[j], Vd[p] if p >= 0 else Vd0) + gam[j]  # ^jV̇_{a(j)} [9.121] plus γ_j
        if robot.sigma[j] == 2:
            Vd[j] = acc
            continue
        k, row = k_of[j], _row(robot, j)
        Ja = Jstar[j][..., :, row]
        qdd[..., k] = (-np.einsum("...i,...i->...", Ja, acc) + tau[..., k] + beta_star[j][..., row]) / H[j]  # [9.122]
        Vd[j] = acc
        Vd[j][..., row] += qdd[..., k]  # [9.124]
    return qdd
