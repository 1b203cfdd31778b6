"""Rodriguez–Kozłowski spatial-operator dynamics (Kozłowski, "New computational algorithms for a discrete Kalman
filter in robot dynamics"), batched, revolute/prismatic/fixed frames, trees included.

* Inverse dynamics: the recursive Newton–Euler equations in spatial notation, eqs (3.24)–(3.33).
* Forward dynamics: the two-point boundary-value problem (3.8)–(3.14) solved by the sweep x_k = z_k + P_k λ_k
  (3.45): a Kalman filter from the tip to the base (3.46)–(3.54), then a Bryson–Frazier smoother from the base to
  the tip (3.55)–(3.58).
* One 1-D float64 state: the same equations on component scalars (:func:`inverse_components`,
  :func:`kalman_components`), traced once per robot into straight-line kernels (robodyn.dynamics.fast).

Conventions.  The paper numbers links from the tip (k = 1) to the base (k = n + 1 fixed); joint k joins links k and
k + 1; frame k sits on joint k, fixed to link k.  robodyn numbers frames from the base: paper link k is robodyn
frame j = nf + 1 − k of a serial chain, the paper's "link k + 1" is the antecedent a(j), "k = n, ..., 1" is the
base-to-tip order j = 1..nf and "k = 1, ..., n" is the tip-to-base order j = nf..1 (:func:`_tip_to_base`).  That
renumbering is the only one, and it stays inside this module.  Other correspondences, per frame j with a = a(j):

    A_k = ^{a}A_j (link-k coordinates → link-(k+1) coordinates),  l_{k+1,k} = ^{a}P_j,
    I_k = ^jJ_j (about O_j),  m_k p_k = ^jMS_j,  H_k = [z; 0] (revolute) or [0; z] (prismatic), h_k = z_j.

Spatial vectors are (..., 6) arrays, angular part first: V = [ω; v], λ = [ω̇; v̇], x = [T; F] (moment about the
frame origin).  Moving between a frame and its antecedent, the transition and orientation matrices combine into

    X_j = A_k⁻¹ φ_{k+1,k}ᵀ:  X_j [ω; v] = [Aᵀω; Aᵀ(v + ω × P)]          (motion, antecedent → j)
    X_jᵀ = φ_{k+1,k} A_k:    X_jᵀ [T; F] = [A T + P × A F; A F]          (force, j → antecedent)

Trees (a documented generalisation; the paper treats serial chains): a link's state x receives the sum of
X_cᵀ x_c over its children c, and likewise z, P in the filter — the sweep argument of (3.45) holds child by child.

Extensions: rotor inertia adds Ia_k to the joint-axis inertia D_k (3.49) and Ia_k q̈_k to τ_k (3.30); friction
Γ_f(q̇) is subtracted from τ before the innovations (3.51); a fixed frame (σ = 2) has no H_k, so it passes z, P
through unchanged; wrenches exerted by link j on the environment add to b_k (3.14 has −T_ck − p_k × F_ck for the
forces exerted on the link); gravity is the base acceleration λ_{n+1} = [0; −g] (the paper writes λ_{n+1} = g with
g the upward 6-vector).
"""

from __future__ import annotations

import numpy as np

from robodyn.arrays import pivot_too_small, singular_model_error
from robodyn.dynamics import executor, fast
from robodyn.model.friction import friction_components, friction_of
from robodyn.dynamics.recursive import (screw_add, axis_column, inertia_add, inertia_times, inertia_to_antecedent,
                                        link_inertia, minus_outer, screw_scale, twist_from_antecedent,
                                        wrench_to_antecedent)
from robodyn.kinematics import forward_components, forward_recursion, frame_rotations, local_transforms
from robodyn.model.inertia import skew
from robodyn.model.robot import Robot
from robodyn.spatial import ScalarBackend, c_add, c_div, c_sub, cross, mtv, mv, sym_mv, vadd, vcross, vdot


def _tip_to_base(robot: Robot) -> range:
    """robodyn frame indices (0-based) in the paper's order k = 1, 2, ..., n (tip to base)."""
    return range(robot.nf - 1, -1, -1)


def _up(A, P, V):
    """X_j V = A_k⁻¹ φ_{k+1,k}ᵀ V: a motion vector of the antecedent, at O_j, in R_j ((3.1)–(3.2), (3.25))."""
    w = V[..., :3]
    return np.concatenate([mtv(A, w), mtv(A, V[..., 3:] + cross(w, P))], -1)


def _down(A, P, x):
    """X_jᵀ x = φ_{k+1,k} A_k x: a force of frame j carried to the antecedent's origin and axes ((3.29))."""
    F = mv(A, x[..., 3:])
    return np.concatenate([mv(A, x[..., :3]) + cross(P, F), F], -1)


def _X(A, P):
    """X_j as a (..., 6, 6) matrix: [[Aᵀ, 0], [−Aᵀ P̃, Aᵀ]]."""
    At = np.swapaxes(A, -1, -2)
    At, AtP = np.broadcast_arrays(At, -(At @ skew(P)))
    return np.concatenate([np.concatenate([At, np.zeros_like(At)], -1), np.concatenate([AtP, At], -1)], -2)


def _spatial_inertia(robot: Robot, dtype) -> np.ndarray:
    """M_k = [[I_k, m_k p̂_k], [−m_k p̂_k, m_k U]] about the frame origin (Sect. 2), (nf, 6, 6)."""
    S = skew(robot.MS)
    top = np.concatenate([robot.J, S], -1)
    bottom = np.concatenate([-S, robot.M[:, None, None] * np.eye(3)], -1)
    return np.concatenate([top, bottom], -2).astype(dtype)


def _axis(robot: Robot, i: int) -> int:
    """Index of the single 1 of H_k: 2 for a revolute joint ([z; 0]), 5 for a prismatic one ([0; z])."""
    return 2 if robot.sigma[i] == 0 else 5


def _joint_rate(robot: Robot, i: int, k: int, rate: np.ndarray) -> np.ndarray:
    """H_kᵀ times a joint rate (..., n) → (..., 6)."""
    out = np.zeros(rate.shape[:-1] + (6,), rate.dtype)
    out[..., _axis(robot, i)] = rate[..., k]
    return out


def inverse_dynamics(robot: Robot, q, qd, qdd, wrenches=None, gravity=None) -> np.ndarray:
    """Inverse dynamics by the spatial-operator Newton–Euler equations (3.24)–(3.33).

    Base to tip (paper: k = n, ..., 1), with V_0 = 0 (3.24) and λ_0 = [0; −g] (3.26, gravity as base
    acceleration):

        V_j = X_j V_a + H_jᵀ q̇_j                                        (3.25)
        λ_j = X_j λ_a + H_jᵀ q̈_j + ā_j                                  (3.27)
        ā_j = [ω_a × z q̇_j; ω_a × (ω_a × l_{a,j})]          revolute      (3.31)
        ā_j = [0; ω_a × (ω_a × l_{a,j}) + 2 ω_a × z q̇_j]    prismatic     (3.32)

    (λ holds the classical accelerations ω̇_j and v̇ of O_j; the extracted (3.32) reads "ω × (ω × l + 2 h q̇)",
    i.e. ω × (ω × l) + 2 ω × h q̇, the Coriolis term.)  Tip to base (paper: k = 1, ..., n), x = 0 beyond the tip
    (3.28):

        x_j = Σ_children X_cᵀ x_c + M_j λ_j + b̄_j,  b̄_j = [ω_j × I_j ω_j; ω_j × (ω_j × m_j p_j)]   (3.29), (3.33)
        τ_j = H_j x_j + Ia_j q̈_j + Γ_f(q̇_j)                                               (3.30)

    Parameters
    ----------
    robot : Robot
    q, qd, qdd : array_like (..., n)
    wrenches : array_like (..., nf, 6), optional
        [f_ej; m_ej] exerted BY link j ON the environment, in R_j, moment about O_j.
    gravity : array_like (3,) or (..., 3), optional

    Returns
    -------
    ndarray (..., n)  torques (N m) / forces (N); float32 in, float32 out.
    """
    return executor.execute(_INVERSE, robot, q, qd, qdd, wrenches, gravity)


def _inverse_numpy(robot: Robot, q, qd, qdd, g, fe) -> np.ndarray:
    batch, dtype = q.shape[:-1], q.dtype
    # (3.24)–(3.27), (3.31)–(3.32): V_j = [ω_j; v_j] and λ_j = [ω̇_j; v̇_j] (λ_0 = [0; −g]) are Khalil & Dombre's
    # forward recursion [9.84]–[9.90], computed once for every formulation; here only ω_j and λ_j are needed.
    AP, w, wd, Vd = forward_recursion(robot, q, qd, qdd, g)
    M = _spatial_inertia(robot, dtype)
    J, MS = robot.J.astype(dtype), robot.MS.astype(dtype)
    x = []
    for i in range(robot.nf):
        lamj = np.concatenate([wd[i], Vd[i]], -1)  # [ω; v] order of the paper: the conversion is here
        bbar = np.concatenate([cross(w[i], mv(J[i], w[i])), cross(w[i], cross(w[i], MS[i]))], -1)  # (3.33)
        xj = mv(M[i], lamj) + bbar  # (3.29), own terms
        if fe is not None:
            xj = xj + np.concatenate([fe[..., i, 3:], fe[..., i, :3]], -1)
        x.append(xj)
    for i in _tip_to_base(robot):
        p = robot.derived.parent[i]
        if p >= 0:
            x[p] = x[p] + _down(*AP[i], x[i])  # (3.29)
    tau = np.empty(batch + (robot.n,), dtype)
    for k, i in enumerate(robot.joint_frames):
        tau[..., k] = x[i][..., _axis(robot, i)]  # (3.30)
    return tau + robot.derived.Ia.astype(dtype) * qdd + friction_of(robot, qd)


def _velocity_biases(robot: Robot, AP, qd, wrenches, dtype):
    """Spatial velocities (3.1)–(3.3) and the corrected biases n_k (3.7), (3.7') and b_k (3.14), per frame in R_j.

    n_j = [ω⁺ × h q̇; v⁺ × h q̇] (revolute), [0; ω⁺ × h q̇] (prismatic), with [ω⁺; v⁺] = X_j V_a the velocity of the
    antecedent link at O_j; b_j = [ω × I ω + m p × (ω × v); m ω × v + ω × (ω × m p)] (+ the wrench).  With these,
    λ are spatial accelerations (no ω × (ω × l) term in the propagation (3.4)).
    """
    batch = qd.shape[:-1]
    J, MS, Mass = robot.J.astype(dtype), robot.MS.astype(dtype), robot.M.astype(dtype)
    zero6 = np.zeros(batch + (6,), dtype)
    V, nb, b = [], [], []
    k = 0
    for i, (A, P) in enumerate(AP):
        p = robot.derived.parent[i]
        Vplus = _up(A, P, V[p] if p >= 0 else zero6)  # (3.1), the positive side of joint k
        Vj, nj = Vplus, zero6
        if robot.sigma[i] != 2:
            Hqd = _joint_rate(robot, i, k, qd)
            k += 1
            hq = Hqd[..., :3] + Hqd[..., 3:]
            if robot.sigma[i] == 0:
                nj = np.concatenate([cross(Vplus[..., :3], hq), cross(Vplus[..., 3:], hq)], -1)  # (3.7)
            else:
                nj = np.concatenate([np.zeros_like(hq), cross(Vplus[..., :3], hq)], -1)  # (3.7')
            Vj = Vplus + Hqd  # (3.2)
        w, v = Vj[..., :3], Vj[..., 3:]
        wv = cross(w, v)
        bj = np.concatenate(
            [cross(w, mv(J[i], w)) + cross(MS[i], wv), Mass[i] * wv + cross(w, cross(w, MS[i]))], -1
        )  # (3.14)
        if wrenches is not None:
            bj = bj + np.concatenate([wrenches[..., i, 3:], wrenches[..., i, :3]], -1)
        V.append(Vj)
        nb.append(nj)
        b.append(bj)
    return nb, b


def forward_dynamics(robot: Robot, q, qd, tau, wrenches=None, gravity=None) -> np.ndarray:
    """Forward dynamics by Kalman filtering and Bryson–Frazier smoothing, (3.45)–(3.58).

    Filter, tip to base (paper: k = 1, ..., n), z = 0 and P = 0 beyond the tip (3.46):

        z_j⁻ = Σ_children X_cᵀ z_c⁺ + b_j                       state prediction       (3.47)
        P_j⁻ = Σ_children X_cᵀ P_c⁺ X_c + M_j                   inertia prediction     (3.48)
        D_j = H_j P_j⁻ H_jᵀ + Ia_j                              joint axis inertia     (3.49)
        G_j = P_j⁻ H_jᵀ / D_j                                   Kalman gain            (3.50)
        e_j⁻ = τ_j − Γ_f(q̇_j) − H_j z_j⁻                        innovations            (3.51)
        z_j⁺ = z_j⁻ + G_j e_j⁻ + P_j⁺ n_j                       state update           (3.52)
        e_j⁺ = e_j⁻ / D_j                                       residuals              (3.53)
        P_j⁺ = [I − G_j H_j] P_j⁻                               inertia update         (3.54)

    (The paper writes z⁺ and P⁺ in the antecedent's axes, A_k[...] and A_k[...]A_k⁻¹; here they stay in R_j and
    X_cᵀ applies the rotation.)  Smoother, base to tip (paper: k = n, ..., 1), λ_0 = [0; −g] (3.55):

        λ_j⁺ = X_j λ_a                                          costate propagation    (3.56)
        q̈_j = e_j⁺ − G_jᵀ (λ_j⁺ + n_j)                          joint acceleration     (3.57)
        λ_j = λ_j⁺ + n_j + H_jᵀ q̈_j                             costate update         (3.58)

    (The extracted (3.58) and (3.5) show H_kᵀ q̇_k; it is H_kᵀ q̈_k, the joint acceleration.)

    Parameters
    ----------
    q, qd, tau : array_like (..., n)
    wrenches, gravity : as in :func:`inverse_dynamics`.

    Returns
    -------
    ndarray (..., n)  joint accelerations (rad/s², m/s²); float32 in, float32 out.
    """
    return executor.execute(_FORWARD, robot, q, qd, tau, wrenches, gravity)


def _forward_numpy(robot: Robot, q, qd, tau, g, fe) -> np.ndarray:
    batch, dtype = q.shape[:-1], q.dtype
    AP = local_transforms(robot, q, dtype)
    nb, b = _velocity_biases(robot, AP, qd, fe, dtype)
    tau_eff = tau - friction_of(robot, qd)
    Ia = robot.Ia.astype(dtype)
    Mk = _spatial_inertia(robot, dtype)
    joint_of = {int(f): k for k, f in enumerate(robot.joint_frames)}
    z = [bj.copy() for bj in b]
    P = [np.broadcast_to(Mk[i], batch + (6, 6)).copy() for i in range(robot.nf)]
    G, e_plus = {}, {}
    for i in _tip_to_base(robot):
        if i in joint_of:
            h = _axis(robot, i)
            D = P[i][..., h, h] + Ia[i]  # (3.49)
            # scale: the same-kind (rotational or translational) diagonal of the articulated inertia P
            if pivot_too_small(D, lambda: np.max(np.abs(np.diagonal(P[i], axis1=-2, axis2=-1)[..., h - 2 : h + 1]), -1) + Ia[i]):
                raise singular_model_error(
                    robot.name, f"joint {robot.joint_names[i]}: articulated inertia D = {float(np.min(D)):.3g} (3.49)"
                )
            G[i] = P[i][..., :, h] / D[..., None]  # (3.50)
            e = tau_eff[..., joint_of[i]] - z[i][..., h]  # (3.51)
            P[i] = P[i] - G[i][..., :, None] * P[i][..., None, h, :]  # (3.54)
            z[i] = z[i] + G[i] * e[..., None] + mv(P[i], nb[i])  # (3.52)
            e_plus[i] = e / D  # (3.53)
        p = robot.derived.parent[i]
        if p >= 0:
            A, Pos = AP[i]
            X = _X(A, Pos)
            z[p] = z[p] + _down(A, Pos, z[i])  # (3.47)
            P[p] = P[p] + np.swapaxes(X, -1, -2) @ P[i] @ X  # (3.48)
    lam = []
    base_acc = np.concatenate([np.zeros(batch + (3,), dtype), -g], -1)
    qdd = np.empty(batch + (robot.n,), dtype)
    for i, (A, Pos) in enumerate(AP):
        p = robot.derived.parent[i]
        lam_j = _up(A, Pos, lam[p] if p >= 0 else base_acc) + nb[i]  # (3.56), λ⁺ + n
        if i in joint_of:
            k = joint_of[i]
            qdd[..., k] = e_plus[i] - np.sum(G[i] * lam_j, -1)  # (3.57)
            lam_j = lam_j + _joint_rate(robot, i, k, qdd)  # (3.58)
        lam.append(lam_j)
    return qdd


# ---- single states: the same equations on component scalars, traced into straight-line code (robodyn.dynamics.fast).
# Here spatial vectors are robodyn's screws, (linear, angular) pairs of 3-tuples, and spatial inertias the blocks
# (𝕁₁₁, 𝕁₁₂, 𝕁₂₂) of robodyn.dynamics.recursive, whose transformation primitives they share:
#   V = [ω; v] → (v, ω),  λ = [ω̇; v̇] → (v̇, ω̇),  x = [T; F] → (F, T),  M_k → 𝕁_j,
#   X_j V → ^j𝕋_{a(j)} V,  X_jᵀ x → ^j𝕋_{a(j)}ᵀ x,  X_jᵀ P X_j → ^j𝕋_{a(j)}ᵀ P ^j𝕋_{a(j)}.
# H_k is a unit screw: (side, row) = (1, 2) (revolute, [z; 0]) or (0, 2) (prismatic, [0; z]).


def _side(robot: Robot, i: int) -> int:
    return 1 if robot.sigma[i] == 0 else 0


def _with_joint_rate(V, side: int, rate):
    """V + H_kᵀ rate."""
    part = (V[side][0], V[side][1], c_add(V[side][2], rate))
    return (part, V[1]) if side == 0 else (V[0], part)


def inverse_components(robot: Robot, q, qd, qdd, g, backend: ScalarBackend | None = None) -> list:
    """(3.24)–(3.33) on component scalars (rigid-body torques, rotor inertia and friction not included)."""
    rot, w, wd, Vd = forward_components(robot, q, qd, qdd, g, backend)  # (3.24)–(3.27), (3.31)–(3.32)
    x = []
    for i, (J, MS, M) in enumerate(robot.derived.links_six):
        bbar = (vcross(w[i], vcross(w[i], MS)), vcross(w[i], sym_mv(J, w[i])))  # (3.33)
        x.append(screw_add(inertia_times(link_inertia(J, MS, M), (Vd[i], wd[i])), bbar))  # (3.29), own terms
    for i in _tip_to_base(robot):
        p = robot.derived.parent[i]
        if p >= 0:
            x[p] = screw_add(x[p], wrench_to_antecedent(rot[i], x[i]))  # (3.29)
    return [x[i][_side(robot, i)][2] for i in robot.joint_frames]  # (3.30)


def _velocity_bias_components(robot: Robot, rot, qd):
    """n_j (3.7), (3.7') and b_j (3.14) of :func:`_velocity_biases` on component scalars."""
    zero = (0.0, 0.0, 0.0)
    V, nb, b = [], [], []
    k = 0
    for i, (J, MS, M) in enumerate(robot.derived.links_six):
        p = robot.derived.parent[i]
        Vplus = twist_from_antecedent(rot[i], V[p]) if p >= 0 else (zero, zero)  # (3.1)
        Vj, nj = Vplus, (zero, zero)
        if robot.sigma[i] != 2:
            hq = (0.0, 0.0, qd[k])
            k += 1
            if robot.sigma[i] == 0:
                nj = (vcross(Vplus[0], hq), vcross(Vplus[1], hq))  # (3.7)
            else:
                nj = (vcross(Vplus[1], hq), zero)  # (3.7')
            Vj = _with_joint_rate(Vplus, _side(robot, i), qd[k - 1])  # (3.2)
        v, w = Vj
        wv = vcross(w, v)
        bj = (vadd(tuple(M * x for x in wv) if M != 1.0 else wv, vcross(w, vcross(w, MS))),
              vadd(vcross(w, sym_mv(J, w)), vcross(MS, wv)))  # (3.14)
        V.append(Vj)
        nb.append(nj)
        b.append(bj)
    return nb, b


def kalman_components(robot: Robot, q, qd, tau, g, backend: ScalarBackend | None = None) -> list:
    """The Kalman filter (3.46)–(3.54) and Bryson–Frazier smoother (3.55)–(3.58) on component scalars; ``tau`` is
    τ − Γ_f(q̇).  A pivot D_j that fails the relative test raises :class:`robodyn.dynamics.fast.Fallback` (the
    general path then names the joint)."""
    rot = frame_rotations(robot, q, backend)
    nb, b = _velocity_bias_components(robot, rot, qd)
    joint_of = {int(f): k for k, f in enumerate(robot.joint_frames)}
    z = list(b)
    P = [link_inertia(J, MS, M) for J, MS, M in robot.derived.links_six]
    G, e_plus = {}, {}
    for i in _tip_to_base(robot):
        if i in joint_of:
            side = _side(robot, i)
            PH = axis_column(P[i], robot.sigma[i])
            Ia = float(robot.Ia[i])
            D = c_add(PH[side][2], Ia)  # (3.49)
            d = P[i][2 - 2 * side]  # same-kind diagonal block of P: the scale of D (as in the batched test, summed)
            if pivot_too_small(D, lambda: abs(d[0]) + abs(d[3]) + abs(d[5]) + Ia):
                raise fast.Fallback
            G[i] = tuple(tuple(c_div(x, D) for x in part) for part in PH)  # (3.50)
            e = c_sub(tau[joint_of[i]], z[i][side][2])  # (3.51)
            P[i] = minus_outer(P[i], PH, G[i])  # (3.54)
            z[i] = screw_add(screw_add(z[i], screw_scale(e, G[i])), inertia_times(P[i], nb[i]))  # (3.52)
            e_plus[i] = c_div(e, D)  # (3.53)
        p = robot.derived.parent[i]
        if p >= 0:
            z[p] = screw_add(z[p], wrench_to_antecedent(rot[i], z[i]))  # (3.47)
            P[p] = inertia_add(P[p], inertia_to_antecedent(rot[i], P[i]))  # (3.48)
    qdd = []
    lam = [None] * robot.nf
    base = ((-g[0], -g[1], -g[2]), (0.0, 0.0, 0.0))  # λ_0 = [0; −g] (3.55)
    for i in range(robot.nf):
        p = robot.derived.parent[i]
        lam_j = screw_add(twist_from_antecedent(rot[i], lam[p] if p >= 0 else base), nb[i])  # (3.56), λ⁺ + n
        if i in joint_of:
            qdd.append(c_sub(e_plus[i], c_add(vdot(G[i][0], lam_j[0]), vdot(G[i][1], lam_j[1]))))  # (3.57)
            lam_j = _with_joint_rate(lam_j, _side(robot, i), qdd[-1])  # (3.58)
        lam[i] = lam_j
    return qdd


def _inverse_kernel(robot: Robot):
    return fast.torque_kernel(robot, inverse_components)


def _forward_kernel(robot: Robot):
    def build(backend, q, qd, tau, g):
        tau = [t - f for t, f in zip(tau, friction_components(robot, qd, backend))]  # (3.51): τ − Γ_f
        return kalman_components(robot, q, qd, tau, g, backend)

    return build


_INVERSE = executor.Algorithm("inverse_dynamics", _inverse_numpy, kernel=_inverse_kernel, key="spatial_operator_inverse")
_FORWARD = executor.Algorithm("forward_dynamics", _forward_numpy, ("q", "qd", "tau"), kernel=_forward_kernel,
                              key="spatial_operator_forward")
