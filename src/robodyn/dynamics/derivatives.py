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

from typing import NamedTuple

import numpy as np

from robodyn.arrays import as_real_array, check_array, finite_array, finite_result
from robodyn.dynamics import executor
from robodyn.model.arguments import joint_arrays
from robodyn.model.robot import check_robot
from robodyn.dynamics.friction_models import DiscontinuousFriction, friction_model
from robodyn.errors import InputError
from robodyn.model.robot import Robot
from robodyn.spatial import rot_x, rot_z


# ---- component arithmetic with structural zeros ------------------------------------------------------------------
# A vector is a list of 3 components, each None (an exact zero, skipped), a Python float (a constant of the
# robot) or an array: (N, 1) for the values, (N, D) for the tangents. Skipping the zeros of the geometry and of
# the inertial parameters, as customized symbolic models do, and working on contiguous component arrays
# instead of (..., 3) stacks makes the batched recursion several times faster.

def _nz(x):
    return None if x is None or (isinstance(x, float) and x == 0.0) else x


def _add(a, b):
    a, b = _nz(a), _nz(b)
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _neg(a):
    a = _nz(a)
    return None if a is None else -a


def _sub(a, b):
    a, b = _nz(a), _nz(b)
    if b is None:
        return a
    if a is None:
        return -b
    return a - b


def _mul(a, b):
    a, b = _nz(a), _nz(b)
    if a is None or b is None:
        return None
    if isinstance(a, float) and a == 1.0:
        return b
    if isinstance(b, float) and b == 1.0:
        return a
    return a * b


def _vadd(u, v):
    return [_add(a, b) for a, b in zip(u, v)]


def _vscale(s, v):
    return [_mul(s, a) for a in v]


def _lin(terms):
    """Σ ± a b over ``terms`` = [(a, b, sign)], accumulating in place into arrays this function allocated
    (large temporaries cost more than the arithmetic)."""
    acc, own = None, False
    for a, b, sign in terms:
        t = _mul(a, b)
        if t is None:
            continue
        fresh = t is not _nz(a) and t is not _nz(b)
        if acc is None:
            acc, own = (t, fresh) if sign > 0 else (-t, True)
        elif (own and isinstance(acc, np.ndarray) and acc.shape == np.broadcast_shapes(acc.shape, np.shape(t))
              and acc.dtype == np.result_type(acc, t)):
            if sign > 0:
                acc += t
            else:
                acc -= t
        else:
            acc, own = (acc + t if sign > 0 else acc - t), True
    return acc


def _vcross(a, b):
    return [_lin([(a[1], b[2], 1), (a[2], b[1], -1)]),
            _lin([(a[2], b[0], 1), (a[0], b[2], -1)]),
            _lin([(a[0], b[1], 1), (a[1], b[0], -1)])]


def _vcross_z(a):
    """a × z."""
    return [a[1], _neg(a[0]), None]


def _vz_cross(a):
    """z × a."""
    return [_neg(a[1]), a[0], None]


def _matvec(A, x):
    return [_lin([(A[r][c], x[c], 1) for c in range(3)]) for r in range(3)]


def _matTvec(A, x):
    return [_lin([(A[r][c], x[r], 1) for r in range(3)]) for c in range(3)]


def _bump(t, k, value, shape, dtype):
    """t with ``value`` added to direction k (a new array; t is never modified in place)."""
    value = _nz(value)
    if value is None:
        return t
    out = np.zeros(shape, dtype) if t is None else t.copy()
    out[:, k] += value[:, 0] if isinstance(value, np.ndarray) else value
    return out


def _const(M):
    return [[float(M[r][c]) for c in range(3)] for r in range(3)]


def _widen(t, width: int):
    """A tangent component with ``width`` columns: the given ones first, zeros after (None stays None)."""
    if t is None or t.shape[1] == width:
        return t
    out = np.zeros((t.shape[0], width), t.dtype)
    out[:, :t.shape[1]] = t
    return out


def _rnea_tangents(robot: Robot, q, qd, qdd, gravity, wrenches, tangents: bool = True):
    """Rigid-body Newton–Euler [9.84]–[9.94] (no friction, no rotor inertia) and its tangents.

    Returns τ (..., n) and, if ``tangents``, dτ (..., 2n, n): row d is ∂τ/∂q_d (d < n) or ∂τ/∂q̇_{d−n}.
    Works for complex inputs (used by the complex-step checks). Component form with structural zeros (above).
    """
    n, nf = robot.n, robot.nf
    batch = q.shape[:-1]
    dt = np.result_type(q, qd, qdd, float)
    q, qd, qdd = (np.broadcast_to(x, batch + (n,)).reshape(-1, n) for x in (q, qd, qdd))
    N, D = q.shape[0], 2 * n
    shape = (N, D)
    jf = {int(i): k for k, i in enumerate(robot.joint_frames)}
    # Directions are interleaved, 2k = q_k and 2k+1 = q̇_k. Joints are numbered so that a(j) < j, hence the
    # velocities and accelerations of frame j depend only on directions below 2(k_j + 1), k_j the last joint on
    # its path from the base: the forward recursion carries only that prefix of columns (width[i]).
    width, last = [0] * nf, [-1] * nf
    for i in range(nf):
        above = last[int(robot.antecedent[i]) - 1] if robot.antecedent[i] > 0 else -1
        last[i] = jf[i] if i in jf else above
        width[i] = 2 * (last[i] + 1)
    Wf = None if wrenches is None else np.broadcast_to(wrenches, batch + (nf, 6)).reshape(-1, nf, 6)
    # per-frame transforms: A = ᵃA_j entries (floats or (N, 1) arrays), P = ᵃP_j components, Az = A a_j
    A_, P_ = [], []
    for i in range(nf):
        C = rot_z(robot.gamma[i]) @ rot_x(robot.alpha[i])
        p0 = rot_z(robot.gamma[i]) @ np.array([robot.d[i], 0.0, robot.b[i]])
        r = float(robot.r[i])
        if robot.sigma[i] == 0:
            th = robot.theta[i] + q[:, jf[i], None]
            c, s = np.cos(th), np.sin(th)
            A = [[_add(_mul(float(C[a, 0]), c), _mul(float(C[a, 1]), s)),
                  _sub(_mul(float(C[a, 1]), c), _mul(float(C[a, 0]), s)), float(C[a, 2])] for a in range(3)]
        else:
            A = _const(C @ rot_z(robot.theta[i]))
            if robot.sigma[i] == 1:
                r = r + q[:, jf[i], None]
        P = [_add(float(p0[a]), _mul(float(C[a, 2]), r)) for a in range(3)]
        A_.append(A)
        P_.append(P)
    g = [float(x) for x in np.asarray(gravity, dtype=float)]
    zero3 = [None, None, None]
    w, wd, vd, dw, dwd, dvd = ([None] * nf for _ in range(6))
    f, m, df, dm = ([None] * nf for _ in range(4))
    for i in range(nf):
        p = int(robot.antecedent[i]) - 1
        A, P = A_[i], P_[i]
        if p < 0:
            w_p, wd_p, vd_p = zero3, zero3, [_neg(x) for x in g]
            dw_p = dwd_p = dvd_p = zero3
        else:
            w_p, wd_p, vd_p, dw_p, dwd_p, dvd_p = w[p], wd[p], vd[p], dw[p], dwd[p], dvd[p]
        wi, wdi = _matTvec(A, w_p), _matTvec(A, wd_p)
        wP = _vcross(w_p, P)
        X = _vadd(vd_p, _vadd(_vcross(wd_p, P), _vcross(w_p, wP)))
        RX = _matTvec(A, X)
        if tangents:
            fshape = (N, width[i])
            dw_p, dwd_p, dvd_p = ([_widen(x, width[i]) for x in v] for v in (dw_p, dwd_p, dvd_p))
            dwi, dwdi = _matTvec(A, dw_p), _matTvec(A, dwd_p)
            dX = _vadd(dvd_p, _vadd(_vcross(dwd_p, P), _vadd(_vcross(dw_p, wP), _vcross(w_p, _vcross(dw_p, P)))))
            dRX = _matTvec(A, dX)
        sig = robot.sigma[i]
        if sig == 2:
            w[i], wd[i], vd[i] = wi, wdi, RX
            if tangents:
                dw[i], dwd[i], dvd[i] = dwi, dwdi, dRX
        else:
            k = jf[i]
            qdk, qddk = qd[:, k, None], qdd[:, k, None]
            if sig == 0:
                w[i] = [wi[0], wi[1], _add(wi[2], qdk)]
                wd[i] = _vadd([wdi[0], wdi[1], _add(wdi[2], qddk)], _vscale(qdk, _vcross_z(wi)))
                vd[i] = RX
                if tangents:
                    own_w, own_wd, own_v = _vcross_z(wi), _vcross_z(wdi), _vcross_z(RX)
                    dwi = [_bump(dwi[a], 2 * k, own_w[a], fshape, dt) for a in range(3)]
                    dwdi = [_bump(dwdi[a], 2 * k, own_wd[a], fshape, dt) for a in range(3)]
                    dvd[i] = [_bump(dRX[a], 2 * k, own_v[a], fshape, dt) for a in range(3)]
                    dw[i] = [dwi[0], dwi[1], _bump(dwi[2], 2 * k + 1, 1.0, fshape, dt)]
                    dwd_i = _vadd(dwdi, _vscale(qdk, _vcross_z(dwi)))
                    dwd[i] = [_bump(dwd_i[a], 2 * k + 1, own_w[a], fshape, dt) for a in range(3)]
            else:
                w[i], wd[i] = wi, wdi
                cz = _vcross_z(wi)
                vd[i] = _vadd([RX[0], RX[1], _add(RX[2], qddk)], _vscale(_mul(2.0, qdk), cz))
                if tangents:
                    Az = [A[a][2] for a in range(3)]
                    own = _matTvec(A, _vadd(_vcross(wd_p, Az), _vcross(w_p, _vcross(w_p, Az))))
                    dRX = [_bump(dRX[a], 2 * k, own[a], fshape, dt) for a in range(3)]
                    dvd_i = _vadd(dRX, _vscale(_mul(2.0, qdk), _vcross_z(dwi)))
                    dvd[i] = [_bump(dvd_i[a], 2 * k + 1, _mul(2.0, cz[a]), fshape, dt) for a in range(3)]
                    dw[i], dwd[i] = dwi, dwdi
        J, MS, M = _const(robot.J[i]), [float(x) for x in robot.MS[i]], float(robot.M[i])
        Jw = _matvec(J, w[i])
        wMS = _vcross(w[i], MS)
        f[i] = _vadd(_vscale(M, vd[i]), _vadd(_vcross(wd[i], MS), _vcross(w[i], wMS)))
        m[i] = _vadd(_matvec(J, wd[i]), _vadd(_vcross(w[i], Jw), _vcross(MS, vd[i])))
        if Wf is not None:
            f[i] = [_add(f[i][a], Wf[:, i, a, None]) for a in range(3)]
            m[i] = [_add(m[i][a], Wf[:, i, 3 + a, None]) for a in range(3)]
        if tangents:
            df[i] = _vadd(_vscale(M, dvd[i]), _vadd(_vcross(dwd[i], MS),
                                                    _vadd(_vcross(dw[i], wMS), _vcross(w[i], _vcross(dw[i], MS)))))
            dm[i] = _vadd(_matvec(J, dwd[i]), _vadd(_vcross(dw[i], Jw), _vadd(_vcross(w[i], _matvec(J, dw[i])),
                                                                             _vcross(MS, dvd[i]))))
            df[i], dm[i] = [_widen(x, D) for x in df[i]], [_widen(x, D) for x in dm[i]]
    tau = np.zeros((N, n), dt)
    dtau = np.zeros((N, D, n), dt) if tangents else None
    for i in reversed(range(nf)):
        sig = robot.sigma[i]
        if sig != 2:
            k = jf[i]
            val = f[i][2] if sig == 1 else m[i][2]
            if val is not None:
                tau[:, k] = val[:, 0] if isinstance(val, np.ndarray) else val
            if tangents:
                dval = df[i][2] if sig == 1 else dm[i][2]
                if dval is not None:
                    dtau[:, :, k] = dval
        p = int(robot.antecedent[i]) - 1
        if p < 0:
            continue
        A, P = A_[i], P_[i]
        Af, Am = _matvec(A, f[i]), _matvec(A, m[i])
        f[p] = _vadd(f[p], Af)
        m[p] = _vadd(m[p], _vadd(Am, _vcross(P, Af)))
        if tangents:
            dAf, dAm = _matvec(A, df[i]), _matvec(A, dm[i])
            if sig == 0:
                k = jf[i]
                of, om = _matvec(A, _vz_cross(f[i])), _matvec(A, _vz_cross(m[i]))
                dAf = [_bump(dAf[a], 2 * k, of[a], shape, dt) for a in range(3)]
                dAm = [_bump(dAm[a], 2 * k, om[a], shape, dt) for a in range(3)]
            dmp = _vadd(dAm, _vcross(P, dAf))
            if sig == 1:
                own = _vcross([A[a][2] for a in range(3)], Af)
                dmp = [_bump(dmp[a], 2 * jf[i], own[a], shape, dt) for a in range(3)]
            df[p] = _vadd(df[p], dAf)
            dm[p] = _vadd(dm[p], dmp)
    tau = tau.reshape(batch + (n,))
    if dtau is None:
        return tau, None
    order = np.concatenate([np.arange(0, D, 2), np.arange(1, D, 2)])  # interleaved → q directions, then q̇
    return tau, dtau[:, order].reshape(batch + (D, n))


def _check(robot: Robot, q, qd, qdd, gravity, wrenches):
    if not isinstance(robot, Robot):
        raise InputError("robot must be a robodyn Robot")
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd, qdd=qdd)
    g = robot.gravity if gravity is None else check_array("gravity", gravity, (3,), (), np.float64)
    W = None if wrenches is None else check_array("wrenches", wrenches, (robot.nf, 6), batch, np.float64)
    return batch, (a["q"].astype(float), a["qd"].astype(float), a["qdd"].astype(float)), np.asarray(g, float), W


def _rigid_derivatives(robot: Robot, batch, q, qd, qdd, g, W, gravity):
    """∂Γ/∂q, ∂Γ/∂q̇ (..., n, n) of the rigid-body recursion on checked float64 arrays: robodyn.native's compiled
    kernel where the executor hands it the batch, else :func:`_rnea_tangents` (the same equations in NumPy)."""
    n = robot.n
    if executor.takes_derivatives(q.dtype):
        a = {"q": q, "qd": qd, "qdd": qdd}
        if gravity is not None:
            a["gravity"] = g
        if W is not None:
            a["wrenches"] = np.broadcast_to(W, batch + (robot.nf, 6))
        out = executor.run_batch(robot, "inverse_dynamics_derivatives", batch, a, friction=False)
        return out[..., 0, :, :], out[..., 1, :, :]
    _, dtau = _rnea_tangents(robot, q, qd, qdd, g, W)
    return np.swapaxes(dtau[..., :n, :], -1, -2), np.swapaxes(dtau[..., n:, :], -1, -2).copy()


class InverseDynamicsDerivatives(NamedTuple):
    """Result of :func:`inverse_dynamics_derivatives`: ∂Γ/∂q and ∂Γ/∂q̇, each (..., n, n)."""

    dtau_dq: np.ndarray
    dtau_dqd: np.ndarray


class ForwardDynamicsDerivatives(NamedTuple):
    """Result of :func:`forward_dynamics_derivatives`: ∂q̈/∂q, ∂q̈/∂q̇ and ∂q̈/∂Γ = A⁻¹, each (..., n, n)."""

    dqdd_dq: np.ndarray
    dqdd_dqd: np.ndarray
    dqdd_dtau: np.ndarray


class Linearization(NamedTuple):
    """Result of :func:`linearize`: ẋ ≈ A x + B u, A (2n, 2n) and B (2n, n)."""

    A: np.ndarray
    B: np.ndarray


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
    friction : bool or friction model of :mod:`robodyn.dynamics.friction_models` — True or None (default): the
        robot's own [9.26]–[9.28], whose derivative at q̇ = 0 leaves out the Dirac of the Coulomb step; False: none
        (as ``friction=False`` of :func:`robodyn.inverse_dynamics`); or a model ('smooth', ...)

    Returns
    -------
    InverseDynamicsDerivatives (dtau_dq, dtau_dqd) : ndarray (..., n, n) each, [i, k] = ∂Γ_i/∂q_k, ∂Γ_i/∂q̇_k
        (N m/rad, N m s/rad | N/m, N s/m); unpacks as a pair.
    """
    return executor.execute(_INVERSE, robot, q, qd, qdd, wrenches, gravity, friction)


def _inverse_general(robot: Robot, q, qd, qdd, wrenches, gravity, friction):
    """:func:`inverse_dynamics_derivatives` of anything but one float64 state on robodyn.native's single-state entry
    (which includes the friction slope F_v of robots without a Stribeck term)."""
    friction = None if friction is True else friction
    batch, (q, qd, qdd), g, W = _check(robot, q, qd, qdd, gravity, wrenches)
    n = robot.n
    dq, dqd = _rigid_derivatives(robot, batch, q, qd, qdd, g, W, gravity)
    model = DiscontinuousFriction() if friction is None else friction_model(friction)
    if not hasattr(model, "slope"):
        raise InputError(f"friction = {type(model).__name__}: its torque depends on an internal state; give "
                         "'smooth', 'discontinuous' or 'none'")
    idx = np.arange(n)
    dqd[..., idx, idx] += model.slope(robot, qd)
    return finite_result("inverse_dynamics_derivatives", InverseDynamicsDerivatives(dq, dqd))


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
    ForwardDynamicsDerivatives (dqdd_dq, dqdd_dqd, dqdd_dtau) : ndarray (..., n, n) each; unpacks as a triple.
    """
    return executor.execute(_FORWARD, robot, q, qd, tau, wrenches, gravity, friction)


def _forward_general(robot: Robot, q, qd, tau, wrenches, gravity, friction):
    """:func:`forward_dynamics_derivatives` of anything but one float64 state on robodyn.native's single-state entry
    (which includes friction and its slope F_v for robots without a Stribeck term)."""
    from robodyn.dynamics import api

    friction = None if friction is True else friction
    model = DiscontinuousFriction() if friction is None else friction_model(friction)
    if not hasattr(model, "slope"):
        raise InputError(f"friction = {type(model).__name__}: give 'smooth', 'discontinuous' or 'none'")
    if not isinstance(robot, Robot):
        raise InputError("robot must be a robodyn Robot")
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd, tau=tau)
    if executor.takes_derivatives(dtype):
        # q̈, A and ∂Γ in one compiled pass, with the robot's own friction [9.26]-[9.28] and its slope where it has
        # no Stribeck term; any other friction is subtracted from Γ here and its slope added below
        in_c = friction is None and not np.any(robot.Fst != 0)
        args = {"q": a["q"], "qd": a["qd"], "tau": a["tau"] if in_c else a["tau"] - model.torque(robot, a["qd"])}
        if gravity is not None:
            args["gravity"] = check_array("gravity", gravity, (3,), (), np.float64)
        if wrenches is not None:
            W = check_array("wrenches", wrenches, (robot.nf, 6), batch, np.float64)
            args["wrenches"] = np.broadcast_to(W, batch + (robot.nf, 6))
        out = executor.run_batch(robot, "forward_dynamics_derivatives", batch, args, friction=in_c)
        Ainv, dqd = out[..., 2, :, :], out[..., 1, :, :]
        if not in_c:
            dqd -= Ainv * model.slope(robot, a["qd"])[..., None, :]
        return finite_result("forward_dynamics_derivatives", ForwardDynamicsDerivatives(out[..., 0, :, :], dqd, Ainv))
    q, qd, tau = (a[k].astype(float) for k in ("q", "qd", "tau"))
    from robodyn.dynamics.friction_models import frictionless

    rigid = frictionless(robot)
    qdd = api.forward_dynamics(rigid, q, qd, tau - model.torque(robot, qd), wrenches=wrenches, gravity=gravity)
    dq, dqd = inverse_dynamics_derivatives(robot, q, qd, qdd, wrenches=wrenches, gravity=gravity, friction=model)
    Ainv = np.linalg.inv(api.inertia_matrix(robot, q))
    return finite_result("forward_dynamics_derivatives", ForwardDynamicsDerivatives(-Ainv @ dq, -Ainv @ dqd, Ainv))


_INVERSE = executor.Algorithm("inverse_dynamics_derivatives", None, single=True, general=_inverse_general,
                              result=InverseDynamicsDerivatives._make)
_FORWARD = executor.Algorithm("forward_dynamics_derivatives", None, ("q", "qd", "tau"), single=True,
                              general=_forward_general, result=ForwardDynamicsDerivatives._make)


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
    Linearization (A, B) : ndarray (..., 2n, 2n) and (..., 2n, n); unpacks as a pair.
    """
    from robodyn.dynamics import api

    if tau is not None and qdd is not None:
        raise InputError("give either tau (the input at the operating point) or qdd (the nominal accelerations)")
    q = as_real_array("q", q).astype(float)
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
    return finite_result("linearize", Linearization(A, B))


def generalized_momentum(robot: Robot, q, qd) -> np.ndarray:
    """Generalized momentum p = A(q) q̇ (De Luca), (..., n), N m s | N s.

    Its dynamics are ṗ = Γ + C(q, q̇)ᵀq̇ − Q(q) − Γ_f + Γ_ext (C with Christoffel symbols, so Ȧ = C + Cᵀ),
    which needs no joint acceleration: the basis of the momentum residual (:func:`momentum_observer`).
    """
    from robodyn.dynamics import api

    _, _, a = joint_arrays(robot, q=q, qd=qd)
    return finite_result("generalized_momentum",
                         np.einsum("...ij,...j->...i", api.inertia_matrix(robot, a["q"]), a["qd"]))


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
    check_robot(robot)
    from scipy.integrate import cumulative_trapezoid
    from scipy.signal import lfilter

    from robodyn.dynamics.lagrange import coriolis_matrix
    from robodyn.dynamics.newton_euler import gravity_torques

    t = finite_array("t", t)
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
    tf = np.zeros_like(q) if tau_friction is None else \
        np.broadcast_to(finite_array("tau_friction", tau_friction), q.shape)
    C = coriolis_matrix(robot, q, qd)
    beta = tau + np.einsum("nji,nj->ni", C, qd) - gravity_torques(robot, q) - tf
    p = generalized_momentum(robot, q, qd)
    w = p - p[0] - cumulative_trapezoid(beta, dx=h, axis=0, initial=0)
    r = np.empty_like(w)
    for j in range(n):
        den = 1 + K[j] * h / 2
        c = K[j] / den
        r[:, j] = lfilter([c, -c], [1.0, -(1 - K[j] * h / 2) / den], w[:, j])
    return finite_result("momentum_observer", r)


def _per_joint_gain(gain, n: int) -> np.ndarray:
    K = np.broadcast_to(g, (n,)) if (g := finite_array("gain", gain)).ndim == 0 else g
    if K.shape != (n,) or not np.all(np.isfinite(K)) or np.any(K <= 0):
        raise InputError(f"gain = {gain!r}; give a positive number or {n} positive numbers (1/s), one per joint")
    return K


# ---- floating and mobile bases (Pinocchio's free flyer, robodyn.dynamics.floating) ------------------------------


def _cross_matrix(x: np.ndarray) -> np.ndarray:
    """[x]_× (..., 3, 3): [x]_× y = x × y."""
    z = np.zeros_like(x[..., 0])
    return np.stack([np.stack([z, -x[..., 2], x[..., 1]], -1), np.stack([x[..., 2], z, -x[..., 0]], -1),
                     np.stack([-x[..., 1], x[..., 0], z], -1)], -2)


def _virtual_acceleration_jacobian(v: np.ndarray) -> np.ndarray:
    """∂q̈_a/∂v (..., n + 6, n + 6) of the augmented robot's accelerations q̈_a = [v̇_0 + ω_0 × v_0,
    ω̇_0 − (ω_y ω_z, −ω_x ω_z, ω_x ω_y), q̈] (robodyn.dynamics.floating) at a fixed a; zero joint rows."""
    vl, w = v[..., :3], v[..., 3:6]
    out = np.zeros(v.shape + v.shape[-1:], v.dtype)
    out[..., :3, :3] = _cross_matrix(w)            # ∂(ω × v_0)/∂v_0
    out[..., :3, 3:6] = -_cross_matrix(vl)         # ∂(ω × v_0)/∂ω
    wx, wy, wz = w[..., 0], w[..., 1], w[..., 2]   # −∂(ω_y ω_z, −ω_x ω_z, ω_x ω_y)/∂ω
    out[..., 3, 4], out[..., 3, 5] = -wz, -wy
    out[..., 4, 3], out[..., 4, 5] = wz, wx
    out[..., 5, 3], out[..., 5, 4] = -wy, -wx
    return out


def _floating_derivatives(robot: Robot, q, v, a, wrenches, gravity, what: str):
    """(∂τ/∂q, ∂τ/∂v, M) at a free-flyer state, the configuration derivative in the tangent space."""
    from robodyn.dynamics import composite
    from robodyn.dynamics.floating import augmented_robot, augmented_state

    qa, qda, qdda, g0 = (x.astype(float) for x in augmented_state(robot, q, v, a, gravity=gravity, what=what))
    aug = augmented_robot(robot)
    # g_0 in R_0 varies with the state and the recursion takes one constant g: a uniform field is the prismatic
    # acceleration −g_0 of the virtual joints along x, y, z of R_0 (they rotate nothing).
    qdda[..., :3] -= g0
    if wrenches is not None:
        W = check_array("wrenches", wrenches, (robot.nf, 6), qa.shape[:-1], np.float64)
        wrenches = np.concatenate([np.zeros(W.shape[:-2] + (6, 6)), W], -2)  # the virtual frames carry none
    dq, dv = inverse_dynamics_derivatives(aug, qa, qda, qdda, wrenches=wrenches, gravity=np.zeros(3))
    M = composite.inertia_matrix(aug, qa)
    # Configuration: moving the whole system changes nothing but gravity seen from R_0 (left-invariance).
    # ^wR_0' = ^wR_0 Exp(δθ) gives g_0' ≈ g_0 + [g_0]_× δθ, and ∂τ/∂g_0 = −M[:, :3] (the prismatic acceleration
    # above): ∂τ/∂δp = 0, ∂τ/∂δθ = −M[:, :3] [g_0]_×.  The joint columns are the augmented robot's, its virtual
    # joints staying at zero.
    dq[..., :3] = 0.0
    dq[..., 3:6] = -M[..., :, :3] @ _cross_matrix(g0)
    # Velocity: q̇_a = v, and q̈_a depends on v through the velocity products of the virtual joints.
    dv = dv + M @ _virtual_acceleration_jacobian(qda)
    return dq, dv, M


def floating_inverse_dynamics_derivatives(robot: Robot, q, v, a, wrenches=None, gravity=None):
    """∂τ/∂q and ∂τ/∂v of :func:`robodyn.floating_inverse_dynamics` (Pinocchio's ``computeRNEADerivatives``).

    The configuration derivative is taken in the tangent space of the free flyer, as Pinocchio's: column k is the
    derivative along dq = [δp, δθ, δq] (n + 6), the base pose moved by its local twist increment,
    ^wT_0' = ^wT_0 Exp(δp, δθ), δp and δθ in R_0.  The joint columns and ∂τ/∂v come from the forward-mode
    Newton–Euler derivatives (:func:`inverse_dynamics_derivatives`, [9.84]–[9.94]) of the augmented robot of
    :mod:`robodyn.dynamics.floating`, plus M ∂q̈_a/∂v for the velocity products of its virtual joints; the base
    columns from left-invariance: only gravity in R_0 changes with the base pose, so ∂τ/∂δp = 0 and
    ∂τ/∂δθ = −M[:, :3] [g_0]_×, g_0 = ^0R_w g (docs/floating-base.md, "Derivatives").  ∂τ/∂a is the inertia
    matrix (:func:`robodyn.floating_inertia_matrix`).

    Parameters
    ----------
    robot : Robot (floating or mobile base)
    q : array_like (..., n + 7);  v, a : array_like (..., n + 6)
    wrenches, gravity : as in :func:`robodyn.floating_inverse_dynamics`.

    Returns
    -------
    dtau_dq, dtau_dv : ndarray (..., n + 6, n + 6)
        [i, k] = ∂τ_i/∂dq_k, ∂τ_i/∂v_k (joint friction slope on the joint diagonal of ∂τ/∂v, the Dirac of the
        Coulomb step at q̇ = 0 left out).
    """
    what = "inverse_dynamics_derivatives"
    dq, dv, _ = _floating_derivatives(robot, q, v, a, wrenches, gravity, what)
    return finite_result(what, dq, dv)


def floating_forward_dynamics_derivatives(robot: Robot, q, v, tau, wrenches=None, gravity=None):
    """∂a/∂q, ∂a/∂v, ∂a/∂τ of :func:`robodyn.floating_forward_dynamics` (Pinocchio's ``computeABADerivatives``).

    Differentiating M(q) a + H(q, v) = τ at a = a(q, v, τ): ∂a/∂q = −M⁻¹ ∂τ/∂q, ∂a/∂v = −M⁻¹ ∂τ/∂v, ∂a/∂τ = M⁻¹,
    with ∂τ/∂· of :func:`floating_inverse_dynamics_derivatives` at the computed a (the same tangent-space
    configuration derivative).

    Parameters
    ----------
    robot : Robot (floating base)
    q : array_like (..., n + 7);  v, tau : array_like (..., n + 6)
    wrenches, gravity : as in :func:`robodyn.floating_inverse_dynamics`.

    Returns
    -------
    da_dq, da_dv, da_dtau : ndarray (..., n + 6, n + 6)
    """
    from robodyn.dynamics.floating import floating_forward_dynamics

    what = "forward_dynamics_derivatives"
    check_robot(robot)
    if robot.base != "floating":
        raise InputError(f"{what}: robot '{robot.name}' has a {robot.base} base; the forward dynamics derivatives "
                         "are for a floating base (a mobile base's motion is given; a fixed base: "
                         "robodyn.forward_dynamics_derivatives)")
    a = floating_forward_dynamics(robot, q, v, tau, wrenches=wrenches, gravity=gravity)
    dq, dv, M = _floating_derivatives(robot, q, v, a, wrenches, gravity, what)
    Minv = np.linalg.inv(M)
    return finite_result(what, -Minv @ dq, -Minv @ dv, Minv)
