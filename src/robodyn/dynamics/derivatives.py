"""Analytic derivatives of the dynamic model, linearization, and the momentum-based collision residual.

Inverse-dynamics derivatives are computed by differentiating the Newton–Euler recursion of Khalil & Dombre
[9.84]–[9.94] in forward mode (the idea of Carpentier and Mansard's recursive derivatives, in Khalil's link
frames): every quantity of the forward recursion (ω_j, ω̇_j, V̇_j, F_j, M_j) and of the backward recursion
(f_j, m_j) carries its tangents with respect to the 2n directions q_1..q_n, q̇_1..q̇_n, and the tangent of
Γ_j = σ_j f_jᵀa_j + σ̄_j m_jᵀa_j + I_aj q̈_j + Γ_fj gives the columns of ∂Γ/∂q and ∂Γ/∂q̇. Only the joint's
own transform depends on q_j: with ^{a(j)}A_j = C_j Rot(z, θ_j + q_j), ∂(^jA_{a(j)} x)/∂q_j =
(^jA_{a(j)} x) × a_j for a revolute joint, and ∂ ^{a(j)}P_j/∂q_j = ^{a(j)}A_j a_j for a prismatic one.
The cost is O(n²) per state (n directions through n links), batched over leading axes.
"""

from __future__ import annotations

import numpy as np

from robodyn._arrays import check_array, joint_arrays
from robodyn.dynamics.friction_models import DiscontinuousFriction, friction_model
from robodyn.errors import InputError
from robodyn.model.robot import Robot
from robodyn.spatial import rot_x, rot_z


def _cross(a, b):
    return np.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                     a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                     a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], -1)


def _cross_z(a):
    """a × z = (a_y, −a_x, 0)."""
    return np.stack([a[..., 1], -a[..., 0], np.zeros_like(a[..., 0])], -1)


def _z_cross(a):
    """z × a = (−a_y, a_x, 0)."""
    return np.stack([-a[..., 1], a[..., 0], np.zeros_like(a[..., 0])], -1)


def _mv(A, v):
    """A v with A (..., 3, 3), v (..., 3)."""
    return np.einsum("...ab,...b->...a", A, v)


def _mtv(A, v):
    """Aᵀ v with A (..., 3, 3), v (..., 3)."""
    return np.einsum("...ba,...b->...a", A, v)


def _mv_d(A, v):
    """A v for tangents v (..., D, 3) and A (..., 3, 3) or (3, 3)."""
    return np.einsum("...ab,...db->...da", A, v) if A.ndim > 2 else v @ A.T


def _mtv_d(A, v):
    return np.einsum("...ba,...db->...da", A, v) if A.ndim > 2 else v @ A


def _transforms(robot: Robot, q):
    """Per frame (A, P): ^{a(j)}A_j (..., 3, 3) or (3, 3) and ^{a(j)}P_j (..., 3) or (3,); q may be complex."""
    out, k = [], 0
    for i in range(robot.nf):
        C = rot_z(robot.gamma[i]) @ rot_x(robot.alpha[i])
        p0 = rot_z(robot.gamma[i]) @ np.array([robot.d[i], 0.0, robot.b[i]])
        r = robot.r[i]
        if robot.sigma[i] == 0:
            th = robot.theta[i] + q[..., k]
            c, s = np.cos(th)[..., None], np.sin(th)[..., None]
            A = np.stack([C[:, 0] * c + C[:, 1] * s, C[:, 1] * c - C[:, 0] * s,
                          np.broadcast_to(C[:, 2], c.shape[:-1] + (3,))], -1)
        else:
            A = C @ rot_z(robot.theta[i])
            if robot.sigma[i] == 1:
                r = r + q[..., k]
        k += robot.sigma[i] != 2
        out.append((A, p0 + np.asarray(r)[..., None] * C[:, 2]))
    return out


def _rnea_tangents(robot: Robot, q, qd, qdd, gravity, wrenches, tangents: bool = True):
    """Rigid-body Newton–Euler [9.84]–[9.94] (no friction, no rotor inertia) and its tangents.

    Returns τ (..., n) and, if ``tangents``, dτ (..., 2n, n): row d is ∂τ/∂q_d (d < n) or ∂τ/∂q̇_{d−n}.
    Works for complex inputs (used by the complex-step checks).
    """
    n, nf = robot.n, robot.nf
    batch = q.shape[:-1]
    dt = np.result_type(q, qd, qdd, float)
    D = 2 * n
    jf = {int(i): k for k, i in enumerate(robot.joint_frames)}
    T = _transforms(robot, q)
    z3 = np.zeros(batch + (3,), dt)
    zD = np.zeros(batch + (D, 3), dt)
    ez = np.array([0.0, 0.0, 1.0])
    w, wd, vd = [None] * nf, [None] * nf, [None] * nf
    dw, dwd, dvd = [None] * nf, [None] * nf, [None] * nf
    F, Mo, dF, dMo = [None] * nf, [None] * nf, [None] * nf, [None] * nf
    g = np.broadcast_to(np.asarray(gravity, dtype=float), batch + (3,))
    J, MS, M = robot.J, robot.MS, robot.M
    for i in range(nf):
        p = int(robot.antecedent[i]) - 1
        A, P = T[i]
        if p < 0:
            w_p, wd_p, vd_p = z3, z3, -g
            dw_p = dwd_p = dvd_p = zD
        else:
            w_p, wd_p, vd_p, dw_p, dwd_p, dvd_p = w[p], wd[p], vd[p], dw[p], dwd[p], dvd[p]
        wi = _mtv(A, w_p)
        wdi = _mtv(A, wd_p)
        UP = _cross(wd_p, P) + _cross(w_p, _cross(w_p, P))  # U_a P
        X = vd_p + UP
        RX = _mtv(A, X)
        dwi = _mtv_d(A, dw_p) if tangents else None
        dwdi = _mtv_d(A, dwd_p) if tangents else None
        if tangents:
            Pb = P[..., None, :]
            dX = dvd_p + _cross(dwd_p, Pb) + _cross(dw_p, _cross(w_p, P)[..., None, :]) + _cross(w_p[..., None, :], _cross(dw_p, Pb))
            dRX = _mtv_d(A, dX)
        sig = robot.sigma[i]
        if sig == 2:
            w[i], wd[i], vd[i] = wi, wdi, RX
            if tangents:
                dw[i], dwd[i], dvd[i] = dwi, dwdi, dRX
        else:
            k = jf[i]
            qdk, qddk = qd[..., k, None], qdd[..., k, None]
            if sig == 0:
                w[i] = wi + qdk * ez
                wd[i] = wdi + qddk * ez + _cross_z(wi) * qdk
                vd[i] = RX
                if tangents:
                    dwi = dwi.copy()
                    dwi[..., k, :] += _cross_z(wi)
                    dwdi = dwdi.copy()
                    dwdi[..., k, :] += _cross_z(wdi)
                    dRX = dRX.copy()
                    dRX[..., k, :] += _cross_z(RX)
                    dw_i = dwi.copy()
                    dw_i[..., n + k, 2] += 1.0
                    dwd_i = dwdi + _cross_z(dwi) * qdk[..., None]
                    dwd_i[..., n + k, :] += _cross_z(wi)
                    dw[i], dwd[i], dvd[i] = dw_i, dwd_i, dRX
            else:
                w[i], wd[i] = wi, wdi
                vd[i] = RX + qddk * ez + 2 * _cross_z(wi) * qdk
                if tangents:
                    # ∂P/∂q_k = A a_k enters X through U_a P: U_a (A a_k), then rotated by Aᵀ
                    Az = A[..., :, 2]
                    UAz = _cross(wd_p, Az) + _cross(w_p, _cross(w_p, Az))
                    dRX = dRX.copy()
                    dRX[..., k, :] += _mtv(A, UAz)
                    dvd_i = dRX + 2 * _cross_z(dwi) * qdk[..., None]
                    dvd_i[..., n + k, :] += 2 * _cross_z(wi)
                    dw[i], dwd[i], dvd[i] = dwi, dwdi, dvd_i
        Jw = w[i] @ J[i].T
        wMS = _cross(w[i], MS[i])
        F[i] = M[i] * vd[i] + _cross(wd[i], MS[i]) + _cross(w[i], wMS)
        Mo[i] = wd[i] @ J[i].T + _cross(w[i], Jw) + _cross(MS[i], vd[i])
        if tangents:
            wb = w[i][..., None, :]
            dF[i] = M[i] * dvd[i] + _cross(dwd[i], MS[i]) + _cross(dw[i], wMS[..., None, :]) + _cross(wb, _cross(dw[i], MS[i]))
            dMo[i] = (dwd[i] @ J[i].T + _cross(dw[i], Jw[..., None, :]) + _cross(wb, dw[i] @ J[i].T)
                      + _cross(MS[i], dvd[i]))
    f, m = list(F), list(Mo)
    df, dm = list(dF), list(dMo)
    if wrenches is not None:
        for i in range(nf):
            f[i] = f[i] + wrenches[..., i, :3]
            m[i] = m[i] + wrenches[..., i, 3:]
    tau = np.zeros(batch + (n,), dt)
    dtau = np.zeros(batch + (D, n), dt) if tangents else None
    for i in reversed(range(nf)):
        sig = robot.sigma[i]
        if sig != 2:
            k = jf[i]
            tau[..., k] = f[i][..., 2] if sig == 1 else m[i][..., 2]
            if tangents:
                dtau[..., k] = df[i][..., 2] if sig == 1 else dm[i][..., 2]
        p = int(robot.antecedent[i]) - 1
        if p < 0:
            continue
        A, P = T[i]
        Af = _mv(A, f[i])
        Am = _mv(A, m[i])
        f[p] = f[p] + Af
        m[p] = m[p] + Am + _cross(P, Af)
        if tangents:
            dAf = _mv_d(A, df[i])
            dAm = _mv_d(A, dm[i])
            if sig == 0:
                k = jf[i]
                dAf = dAf.copy()
                dAf[..., k, :] += _mv(A, _z_cross(f[i]))
                dAm = dAm.copy()
                dAm[..., k, :] += _mv(A, _z_cross(m[i]))
            dmp = dAm + _cross(P[..., None, :], dAf)
            if sig == 1:
                dmp = dmp.copy()
                dmp[..., jf[i], :] += _cross(A[..., :, 2], Af)
            df[p] = df[p] + dAf
            dm[p] = dm[p] + dmp
    return tau, dtau


def _check(robot: Robot, q, qd, qdd, gravity, wrenches):
    if not isinstance(robot, Robot):
        raise InputError("robot must be a robodyn Robot")
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd, qdd=qdd)
    g = robot.gravity if gravity is None else check_array("gravity", gravity, (3,), (), np.float64)
    W = None if wrenches is None else check_array("wrenches", wrenches, (robot.nf, 6), batch, np.float64)
    return batch, (a["q"].astype(float), a["qd"].astype(float), a["qdd"].astype(float)), np.asarray(g, float), W


def inverse_dynamics_derivatives(robot: Robot, q, qd, qdd, wrenches=None, gravity=None, friction=None):
    """∂Γ/∂q and ∂Γ/∂q̇ of the inverse dynamic model Γ(q, q̇, q̈) [9.84]–[9.94], analytically.

    Forward-mode differentiation of the Newton–Euler recursion (module docstring). Friction contributes
    diag(∂Γ_f/∂q̇) to ∂Γ/∂q̇; rotor inertias contribute nothing (I_a q̈ does not depend on q, q̇);
    ∂Γ/∂q̈ is the inertia matrix A(q) (:func:`robodyn.inertia_matrix`). External wrenches, constant in the link
    frames, enter through the recursion.

    Parameters
    ----------
    robot : Robot (serial or tree; revolute, prismatic and fixed frames)
    q, qd, qdd : array_like (..., n), rad | m, rad/s | m/s, rad/s² | m/s²
    wrenches : array_like (..., nf, 6), optional, [f_ej; m_ej] exerted by link j on the environment, in R_j
    gravity : array_like (3,), optional, base frame (m/s²); default ``robot.gravity``
    friction : friction model of :mod:`robodyn.dynamics.friction_models` (default the robot's own [9.26]–[9.28],
        whose derivative at q̇ = 0 leaves out the Dirac of the Coulomb step)

    Returns
    -------
    dtau_dq, dtau_dqd : ndarray (..., n, n), [i, k] = ∂Γ_i/∂q_k, ∂Γ_i/∂q̇_k (N m/rad, N m s/rad | N/m, N s/m)
    """
    batch, (q, qd, qdd), g, W = _check(robot, q, qd, qdd, gravity, wrenches)
    n = robot.n
    _, dtau = _rnea_tangents(robot, q, qd, qdd, g, W)
    dq = np.swapaxes(dtau[..., :n, :], -1, -2)
    dqd = np.swapaxes(dtau[..., n:, :], -1, -2).copy()
    model = DiscontinuousFriction() if friction is None else friction_model(friction)
    if not hasattr(model, "slope"):
        raise InputError(f"friction = {type(model).__name__}: its torque depends on an internal state; give "
                         "'smooth', 'discontinuous' or 'none'")
    idx = np.arange(n)
    dqd[..., idx, idx] += model.slope(robot, qd)
    return dq, dqd


def forward_dynamics_derivatives(robot: Robot, q, qd, tau, wrenches=None, gravity=None, friction=None):
    """∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂Γ of the direct dynamic model q̈ = A⁻¹(Γ − H(q, q̇)) [9.96].

    Differentiating A(q) q̈ + H(q, q̇) = Γ at q̈ = q̈(q, q̇, Γ): ∂q̈/∂q = −A⁻¹ ∂Γ/∂q|_q̈, ∂q̈/∂q̇ = −A⁻¹ ∂Γ/∂q̇|_q̈,
    ∂q̈/∂Γ = A⁻¹, with ∂Γ/∂· from :func:`inverse_dynamics_derivatives` evaluated at the computed q̈.

    Parameters
    ----------
    robot, wrenches, gravity, friction : as :func:`inverse_dynamics_derivatives`
    q, qd, tau : array_like (..., n)

    Returns
    -------
    dqdd_dq, dqdd_dqd, dqdd_dtau : ndarray (..., n, n)
    """
    from robodyn.dynamics import api

    model = DiscontinuousFriction() if friction is None else friction_model(friction)
    if not hasattr(model, "slope"):
        raise InputError(f"friction = {type(model).__name__}: give 'smooth', 'discontinuous' or 'none'")
    _, _, a = joint_arrays(robot, q=q, qd=qd, tau=tau)
    q, qd, tau = (a[k].astype(float) for k in ("q", "qd", "tau"))
    from robodyn.dynamics.friction_models import frictionless

    rigid = frictionless(robot)
    qdd = api.forward_dynamics(rigid, q, qd, tau - model.torque(robot, qd), wrenches=wrenches, gravity=gravity)
    dq, dqd = inverse_dynamics_derivatives(robot, q, qd, qdd, wrenches=wrenches, gravity=gravity, friction=model)
    Ainv = np.linalg.inv(api.inertia_matrix(robot, q))
    return -Ainv @ dq, -Ainv @ dqd, Ainv


def linearize(robot: Robot, q, qd=None, tau=None, qdd=None, friction=None):
    """State-space linearization ẋ ≈ A Δx + B Δu of x = (q, q̇), u = Γ (De Luca, "Approximate linearization").

    At an equilibrium (q_e, 0) with u_e = Q(q_e) (the gravity torque as input bias):
    A = [[0, I], [−M⁻¹G, 0]], B = [[0], [M⁻¹]], G = ∂Q/∂q. Along a trajectory (q_d, q̇_d, q̈_d) with
    u_d = M q̈_d + c + g: A(t) = [[0, I], [−M⁻¹D, −M⁻¹C₂]], B(t) = [[0], [M⁻¹]], D = ∂Γ/∂q, C₂ = ∂Γ/∂q̇
    at (q_d, q̇_d, q̈_d) (De Luca's D(q_d, q̇_d, q̈_d) = G + C₁ + Σ ∂M_i/∂q q̈_d e_iᵀ).

    Parameters
    ----------
    robot : Robot
    q : array_like (..., n), operating points (a trajectory: leading axis = time)
    qd : array_like (..., n), optional, default 0 (equilibrium)
    tau : array_like (..., n), optional, the input u at the operating point; default u = Γ(q, q̇, q̈) with
        q̈ = ``qdd`` (default 0, so u_e = H(q, q̇), = Q(q) at rest). Give either ``tau`` or ``qdd``.
    qdd : array_like (..., n), optional, nominal accelerations q̈_d
    friction : as :func:`inverse_dynamics_derivatives`

    Returns
    -------
    A : ndarray (..., 2n, 2n);  B : ndarray (..., 2n, n)
    """
    from robodyn.dynamics import api

    if tau is not None and qdd is not None:
        raise InputError("give either tau (the input at the operating point) or qdd (the nominal accelerations)")
    q = np.asarray(q, dtype=float)
    qd = np.zeros_like(q) if qd is None else qd
    if tau is None:
        qdd = np.zeros_like(q) if qdd is None else qdd
        dq, dqd = inverse_dynamics_derivatives(robot, q, qd, qdd, friction=friction)
        Ainv = np.linalg.inv(api.inertia_matrix(robot, q))
        fq, fqd = -Ainv @ dq, -Ainv @ dqd
    else:
        fq, fqd, Ainv = forward_dynamics_derivatives(robot, q, qd, tau, friction=friction)
    n = robot.n
    batch = fq.shape[:-2]
    A = np.zeros(batch + (2 * n, 2 * n))
    A[..., :n, n:] = np.eye(n)
    A[..., n:, :n] = fq
    A[..., n:, n:] = fqd
    B = np.zeros(batch + (2 * n, n))
    B[..., n:, :] = Ainv
    return A, B


def generalized_momentum(robot: Robot, q, qd) -> np.ndarray:
    """Generalized momentum p = A(q) q̇ (De Luca), (..., n), N m s | N s.

    Its dynamics are ṗ = Γ + C(q, q̇)ᵀq̇ − Q(q) − Γ_f + Γ_ext (C with Christoffel symbols, so Ȧ = C + Cᵀ),
    which needs no joint acceleration: the basis of the momentum residual (:func:`momentum_observer`).
    """
    from robodyn.dynamics import api

    _, _, a = joint_arrays(robot, q=q, qd=qd)
    return np.einsum("...ij,...j->...i", api.inertia_matrix(robot, a["q"]), a["qd"])


def momentum_observer(robot: Robot, t, q, qd, tau, gain, tau_friction=None) -> np.ndarray:
    """Momentum-based residual for collision detection (De Luca) on uniformly sampled data.

    r(t) = K (p(t) − p(0) − ∫₀ᵗ (Γ + Cᵀq̇ − Q − Γ_f + r) ds),  p = A(q) q̇,

    so that ṙ = K (Γ_ext − r): each r_j is a first-order low-pass copy of the external joint torque
    Γ_ext,j with time constant 1/K_j, and r = 0 while nothing touches the robot. Discretised by the trapezoidal
    rule (∫β on the samples, and the implicit trapezoidal step for ∫r), which makes the recursion the Tustin
    filter r_k = a r_{k−1} + c (w_k − w_{k−1}), w = p − p(0) − ∫β, a = (1 − K h/2)/(1 + K h/2), c = K/(1 + K h/2),
    applied joint by joint (scipy.signal.lfilter).

    Parameters
    ----------
    robot : Robot (the observer's model)
    t : array_like (N,), uniformly spaced sample times (s)
    q, qd, tau : array_like (N, n), measured positions, velocities and applied torques
    gain : float or (n,), K_j > 0 (1/s)
    tau_friction : array_like (N, n), optional, the friction torques Γ_f (model or estimate); default 0

    Returns
    -------
    r : ndarray (N, n), residual (N m | N), r[0] = 0
    """
    from scipy.integrate import cumulative_trapezoid
    from scipy.signal import lfilter

    from robodyn.dynamics.lagrange import coriolis_matrix
    from robodyn.dynamics.newton_euler import gravity_torques

    t = np.asarray(t, dtype=float)
    if t.ndim != 1 or t.size < 2 or not np.all(np.isfinite(t)):
        raise InputError("t must be a 1-D array of at least 2 finite sample times (s)")
    h = (t[-1] - t[0]) / (t.size - 1)
    if not h > 0 or np.abs(np.diff(t) - h).max() > 1e-9 * max(h, abs(t[-1])):
        raise InputError("t must be uniformly spaced and increasing (the residual is a discrete filter)")
    n = robot.n
    _, _, a = joint_arrays(robot, q=q, qd=qd, tau=tau)
    q, qd, tau = (np.asarray(a[k], float) for k in ("q", "qd", "tau"))
    if q.shape != (t.size, n):
        raise InputError(f"q, qd and tau must have shape ({t.size}, {n}): one row per sample time")
    K = _per_joint_gain(gain, n)
    tf = np.zeros_like(q) if tau_friction is None else np.broadcast_to(np.asarray(tau_friction, float), q.shape)
    C = coriolis_matrix(robot, q, qd)
    beta = tau + np.einsum("nji,nj->ni", C, qd) - gravity_torques(robot, q) - tf
    p = generalized_momentum(robot, q, qd)
    w = p - p[0] - cumulative_trapezoid(beta, dx=h, axis=0, initial=0)
    r = np.empty_like(w)
    for j in range(n):
        den = 1 + K[j] * h / 2
        c = K[j] / den
        r[:, j] = lfilter([c, -c], [1.0, -(1 - K[j] * h / 2) / den], w[:, j])
    return r


def _per_joint_gain(gain, n: int) -> np.ndarray:
    K = np.broadcast_to(np.asarray(gain, dtype=float), (n,)) if np.ndim(gain) == 0 else np.asarray(gain, float)
    if K.shape != (n,) or not np.all(np.isfinite(K)) or np.any(K <= 0):
        raise InputError(f"gain = {gain!r}; give a positive number or {n} positive numbers (1/s), one per joint")
    return K
