"""Analytic derivatives of the dynamic model, linearization, and the momentum-based collision residual.

Inverse-dynamics derivatives are the forward-mode derivatives of the Newton–Euler recursion [9.84]–[9.94]
(Carpentier and Mansard's recursive derivatives, in Khalil's link frames): robodyn's one statement of it,
:func:`robodyn.dynamics.newton_euler.rnea_components`, run on dual numbers (:mod:`robodyn.dual`) seeded along
q_1, q̇_1, q_2, ..., O(n²) per state.  robodyn.native's derivative kernel (Singh, Russell and Wensing's closed
form, tested against this path) serves float64 batches.  See docs/derivatives.md.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from robodyn.arrays import as_real_array, check_array, finite_array, finite_result, one_per
from robodyn.dual import DUAL, Dual, variable
from robodyn.dynamics import executor
from robodyn.dynamics.discrete import METHODS as DISCRETE_METHODS, check_sample_time, discretize
from robodyn.dynamics.newton_euler import rnea_components
from robodyn.kinematics import block_of, flat_columns, gravity_components, state_blocks
from robodyn.model.arguments import joint_arrays
from robodyn.model.inertia import skew
from robodyn.model.robot import check_robot
from robodyn.dynamics.friction_models import DiscontinuousFriction, friction_model
from robodyn.errors import InputError
from robodyn.model.robot import Robot


def _check(robot: Robot, q, qd, qdd, gravity, wrenches):
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd, qdd=qdd)
    g = robot.gravity if gravity is None else check_array("gravity", gravity, (3,), (), np.float64)
    W = None if wrenches is None else check_array("wrenches", wrenches, (robot.nf, 6), batch, np.float64)
    arrays = (a["q"].astype(float), a["qd"].astype(float), a["qdd"].astype(float))
    return dtype, batch, arrays, np.asarray(g, float), W


def _as(dtype, record):
    """The arrays of a named record in ``dtype``: float32 results for float32 inputs, computed in float64."""
    return record if dtype != np.float32 else type(record)(*(x.astype(dtype) for x in record))


def _native_derivatives(robot: Robot, batch, q, qd, qdd, g, W, gravity, fast=False):
    """∂Γ/∂q, ∂Γ/∂q̇ (..., n, n) of the rigid-body recursion on checked float64 arrays by robodyn.native's compiled
    kernel (``fast``: its trig="fast"), where :func:`executor.takes_derivatives` hands it the batch."""
    a = {"q": q, "qd": qd, "qdd": qdd}
    if gravity is not None:
        a["gravity"] = g
    if W is not None:
        a["wrenches"] = np.broadcast_to(W, batch + (robot.nf, 6))
    out = executor.run_batch(robot, "inverse_dynamics_derivatives", batch, a, friction=False, fast=fast)
    return out[..., 0, :, :], out[..., 1, :, :]


def _dual_derivatives(robot: Robot, batch, q, qd, qdd, g, W):
    """∂Γ/∂q, ∂Γ/∂q̇ (..., n, n) of the rigid-body recursion, :func:`rnea_components` on dual numbers, in the
    dtype of the joint arrays (complex for the complex step of :func:`inverse_dynamics_second_derivatives`)."""
    n, nf = robot.n, robot.nf
    cols = flat_columns(*np.broadcast_arrays(q, qd, qdd))
    if W is not None:
        cols.append(flat_columns(np.reshape(np.broadcast_to(W, batch + (nf, 6)), batch + (6 * nf,)))[0])
    size = cols[0].shape[1]
    dtype = np.result_type(q, qd, qdd)
    gc = gravity_components(g, batch, dtype)
    out = np.zeros((2 * n, n, size), dtype)  # [direction, joint, state]; direction 2k = q_k, 2k + 1 = q̇_k
    for sl, (q_b, qd_b, qdd_b, *wr_b) in state_blocks(*cols):
        qs = [variable(x, 2 * k) for k, x in enumerate(q_b)]
        qds = [variable(x, 2 * k + 1) for k, x in enumerate(qd_b)]
        tau = rnea_components(robot, qs, qds, qdd_b, block_of(gc, sl, size), wr_b[0] if wr_b else None, DUAL)
        for j, t in enumerate(tau):
            if type(t) is Dual:  # else a constant: no direction reaches this joint
                out[t.start:t.start + len(t.tangent), j, sl] = t.tangent.reshape(len(t.tangent), -1)
    dq, dqd = (np.ascontiguousarray(out[k::2].transpose(2, 1, 0)).reshape(batch + (n, n)) for k in (0, 1))
    return dq, dqd


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


def inverse_dynamics_derivatives(robot: Robot, q, qd, qdd, wrenches=None, gravity=None, friction=None,
                                 trig: str = "exact"):
    """∂Γ/∂q and ∂Γ/∂q̇ of the inverse dynamic model Γ(q, q̇, q̈) [9.84]–[9.94], analytically.

    Forward-mode differentiation of the Newton–Euler recursion (module docstring).  Friction contributes
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
    trig : str — "exact" (default) or "fast": as in :func:`robodyn.inverse_dynamics` (float64 states on the
        generic compiled kernels; every other path computes as by default)

    Returns
    -------
    InverseDynamicsDerivatives (dtau_dq, dtau_dqd) : ndarray (..., n, n) each, [i, k] = ∂Γ_i/∂q_k, ∂Γ_i/∂q̇_k
        (N m/rad, N m s/rad | N/m, N s/m); unpacks as a pair.
    """
    return executor.execute(_INVERSE, robot, q, qd, qdd, wrenches, gravity, friction, None, trig)


def _inverse_general(robot: Robot, q, qd, qdd, wrenches, gravity, friction, fast=False):
    """:func:`inverse_dynamics_derivatives` of anything but one float64 state on robodyn.native's single-state entry
    (which includes the friction slope F_v of robots without a Stribeck term)."""
    dtype, batch, (q, qd, qdd), g, W = _check(robot, q, qd, qdd, gravity, wrenches)
    n = robot.n
    compiled = executor.takes_derivatives(q.dtype)
    dq, dqd = (_native_derivatives(robot, batch, q, qd, qdd, g, W, gravity, fast) if compiled
               else _dual_derivatives(robot, batch, q, qd, qdd, g, W))
    model = _sloped_model(friction)
    idx = np.arange(n)
    dqd[..., idx, idx] += model.slope(robot, qd)
    if dtype == np.float64 and compiled:
        # the kernels' status vouches for every entry (robodyn.native.run_checked): only the slope added here is
        # checked, not 2 n² entries per state again
        finite_result("inverse_dynamics_derivatives", dqd[..., idx, idx])
        return InverseDynamicsDerivatives(dq, dqd)
    return finite_result("inverse_dynamics_derivatives", _as(dtype, InverseDynamicsDerivatives(dq, dqd)))


def forward_dynamics_derivatives(robot: Robot, q, qd, tau, wrenches=None, gravity=None, friction=None,
                                 trig: str = "exact"):
    """∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂Γ of the direct dynamic model q̈ = A⁻¹(Γ − H(q, q̇)) [9.96].

    Differentiating A(q) q̈ + H(q, q̇) = Γ at q̈ = q̈(q, q̇, Γ): ∂q̈/∂q = −A⁻¹ ∂Γ/∂q|_q̈, ∂q̈/∂q̇ = −A⁻¹ ∂Γ/∂q̇|_q̈,
    ∂q̈/∂Γ = A⁻¹, with ∂Γ/∂· from :func:`inverse_dynamics_derivatives` evaluated at the computed q̈.

    Parameters
    ----------
    robot, wrenches, gravity, friction, trig : as :func:`inverse_dynamics_derivatives`
    q, qd, tau : array_like (..., n)

    Returns
    -------
    ForwardDynamicsDerivatives (dqdd_dq, dqdd_dqd, dqdd_dtau) : ndarray (..., n, n) each; unpacks as a triple.
    """
    return executor.execute(_FORWARD, robot, q, qd, tau, wrenches, gravity, friction, None, trig)


def _forward_general(robot: Robot, q, qd, tau, wrenches, gravity, friction, fast=False):
    """:func:`forward_dynamics_derivatives` of anything but one float64 state on robodyn.native's single-state entry
    (which includes friction and its slope F_v for robots without a Stribeck term)."""
    from robodyn.dynamics import api

    friction = None if friction is True else friction
    model = _sloped_model(friction)
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
        out = executor.run_batch(robot, "forward_dynamics_derivatives", batch, args, friction=in_c, fast=fast)
        Ainv, dqd = out[..., 2, :, :], out[..., 1, :, :]
        if not in_c:  # the kernels' status vouches for the rest (robodyn.native.run_checked)
            dqd -= Ainv * model.slope(robot, a["qd"])[..., None, :]
            finite_result("forward_dynamics_derivatives", dqd)
        return ForwardDynamicsDerivatives(out[..., 0, :, :], dqd, Ainv)
    q, qd, tau = (a[k].astype(float) for k in ("q", "qd", "tau"))
    from robodyn.dynamics.friction_models import frictionless

    rigid = frictionless(robot)
    qdd = api.forward_dynamics(rigid, q, qd, tau - model.torque(robot, qd), wrenches=wrenches, gravity=gravity)
    dq, dqd = inverse_dynamics_derivatives(robot, q, qd, qdd, wrenches=wrenches, gravity=gravity, friction=model)
    Ainv = np.linalg.inv(api.inertia_matrix(robot, q))
    return finite_result("forward_dynamics_derivatives",
                         _as(dtype, ForwardDynamicsDerivatives(-Ainv @ dq, -Ainv @ dqd, Ainv)))


def _sloped_model(friction):
    """The friction model of ``friction`` (None, True: the robot's own), which must have a slope ∂Γ_f/∂q̇."""
    model = DiscontinuousFriction() if friction is None or friction is True else friction_model(friction)
    if not hasattr(model, "slope"):
        raise InputError(f"friction = {type(model).__name__}: its torque depends on an internal state; give "
                         "'smooth', 'discontinuous' or 'none'")
    return model


_INVERSE = executor.Algorithm("inverse_dynamics_derivatives", None, single=True, general=_inverse_general,
                              result=InverseDynamicsDerivatives._make)
_FORWARD = executor.Algorithm("forward_dynamics_derivatives", None, ("q", "qd", "tau"), single=True,
                              general=_forward_general, result=ForwardDynamicsDerivatives._make)


class InverseDynamicsSecondDerivatives(NamedTuple):
    """Result of :func:`inverse_dynamics_second_derivatives`, each (..., n, n, n), [i, j, k] = ∂²Γ_i/∂x_j∂y_k."""

    d2tau_dq2: np.ndarray
    d2tau_dqd2: np.ndarray
    d2tau_dq_dqd: np.ndarray
    d2tau_dqdd_dq: np.ndarray


#: the complex step: Im f(x + ih) / h is f'(x) to round-off (no difference, so no cancellation), h far below it
_COMPLEX_STEP = 1e-100


def inverse_dynamics_second_derivatives(robot: Robot, q, qd, qdd, wrenches=None, gravity=None, friction=None):
    """Second derivatives of the inverse dynamic model Γ(q, q̇, q̈) [9.84]–[9.94] (as Pinocchio's
    ``ComputeRNEASecondOrderDerivatives``).

    The complex step Im ∂Γ/∂·(x + i h e_k)/h (h = 1e-100, exact to round-off) of the dual-number first derivatives
    of :func:`inverse_dynamics_derivatives`; ∂²Γ/∂q̈_j∂q_k = ∂A_ij/∂q_k is ∂Γ/∂q_k at q̇ = 0, q̈ = e_j, without
    gravity and wrenches (docs/derivatives.md).  O(n³) per state.

    Parameters
    ----------
    robot, q, qd, qdd, wrenches, gravity : as :func:`inverse_dynamics_derivatives`
    friction : None or True (the robot's own friction) or False: the robot's Coulomb, viscous and offset friction
        have no second derivative (the Dirac of the Coulomb step left out); a Stribeck term has, and is refused
        unless ``friction=False`` leaves friction out

    Returns
    -------
    InverseDynamicsSecondDerivatives (d2tau_dq2, d2tau_dqd2, d2tau_dq_dqd, d2tau_dqdd_dq) : ndarray (..., n, n, n)
        [i, j, k] = ∂²Γ_i/∂q_j∂q_k, ∂²Γ_i/∂q̇_j∂q̇_k, ∂²Γ_i/∂q_j∂q̇_k and ∂²Γ_i/∂q̈_j∂q_k = ∂A_ij/∂q_k (N m/rad²,
        ...); unpacks as a quadruple. float32 when every input is.
    """
    if friction not in (None, True, False):
        raise InputError(f"friction = {friction!r}; give True (the robot's own friction) or False")
    dtype, batch, (q, qd, qdd), g, W = _check(robot, q, qd, qdd, gravity, wrenches)
    if friction is not False and np.any(robot.Fst[robot.joint_frames] != 0):
        raise InputError(f"robot '{robot.name}' has Stribeck friction, whose second derivative is not computed "
                         "here; pass friction=False for the rigid-body second derivatives")
    n = robot.n
    q, qd, qdd = np.broadcast_arrays(q, qd, qdd)
    step = 1j * _COMPLEX_STEP * np.eye(n)
    rows = batch + (n, n)

    def copies(x, perturbed):
        return x[..., None, :] + step if perturbed else np.broadcast_to(x[..., None, :].astype(complex), rows)

    states = [np.concatenate([copies(x, first), copies(x, second)], -2)
              for x, first, second in ((q, True, False), (qd, False, True), (qdd, False, False))]
    Wc = None if W is None else np.broadcast_to(np.asarray(W)[..., None, :, :], batch + (2 * n, robot.nf, 6))
    dq, dqd = _dual_derivatives(robot, batch + (2 * n,), *states, g, Wc)   # [..., k, i, j]
    dq, dqd = dq.imag / _COMPLEX_STEP, dqd.imag / _COMPLEX_STEP
    order = tuple(range(len(batch))) + tuple(len(batch) + a for a in (1, 2, 0))   # [..., k, i, j] -> [..., i, j, k]
    d2_qq = dq[..., :n, :, :].transpose(order)
    d2_qdqd = dqd[..., n:, :, :].transpose(order)
    d2_q_qd = dq[..., n:, :, :].transpose(order)
    unit = np.broadcast_to(np.eye(n), rows)
    dA, _ = _dual_derivatives(robot, batch + (n,), np.broadcast_to(q[..., None, :], rows), np.zeros(rows), unit,
                              np.zeros(3), None)                                     # [..., j, i, k] = ∂A_ij/∂q_k
    dA = np.swapaxes(dA, -3, -2)
    return finite_result("inverse_dynamics_second_derivatives",
                         _as(dtype, InverseDynamicsSecondDerivatives(d2_qq, d2_qdqd, d2_q_qd, dA)))


def linearize(robot: Robot, q, qd=None, tau=None, qdd=None, friction=None, dt=None, method: str = "zoh"):
    """State-space linearization ẋ ≈ A Δx + B Δu of x = (q, q̇), u = Γ (De Luca, "Approximate linearization"),
    or with ``dt`` its discrete-time form Δx_{k+1} ≈ A_d Δx_k + B_d Δu_k.

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
    dt : float, optional, a sample period Δt > 0 (s): return the discrete-time model of the linearization,
        :func:`robodyn.discretize` (A, B, dt, method)
    method : 'zoh' (default: exact for Γ held over each period), 'euler', 'backward_euler' or 'tustin'; used
        with ``dt`` only

    Returns
    -------
    Linearization (A, B) : ndarray (..., 2n, 2n) and (..., 2n, n); unpacks as a pair. With ``dt``: A_d, B_d.
    """
    from robodyn.dynamics import api

    if dt is not None:
        check_sample_time(dt)
        if method not in DISCRETE_METHODS:
            raise InputError(f"method = {method!r}; choose one of {', '.join(DISCRETE_METHODS)}")

    if tau is not None and qdd is not None:
        raise InputError("give either tau (the input at the operating point) or qdd (the nominal accelerations)")
    given = {k: v for k, v in (("qd", qd), ("tau", tau), ("qdd", qdd)) if v is not None}
    dtype = joint_arrays(robot, q=q, **given)[0]
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
    if dt is not None:
        A, B = discretize(A, B, dt, method)
    return finite_result("linearize", _as(dtype, Linearization(A, B)))


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
    K = one_per("gain", gain, n, lambda k: np.isfinite(k) & (k > 0), "finite gains > 0 (1/s)")
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


# ---- floating and mobile bases (Pinocchio's free flyer, robodyn.dynamics.floating) ------------------------------


def _virtual_acceleration_jacobian(v: np.ndarray) -> np.ndarray:
    """∂q̈_a/∂v (..., n + 6, n + 6) of the augmented robot's accelerations q̈_a = [v̇_0 + ω_0 × v_0,
    ω̇_0 − (ω_y ω_z, −ω_x ω_z, ω_x ω_y), q̈] (robodyn.dynamics.floating) at a fixed a; zero joint rows."""
    vl, w = v[..., :3], v[..., 3:6]
    out = np.zeros(v.shape + v.shape[-1:], v.dtype)
    out[..., :3, :3] = skew(w)            # ∂(ω × v_0)/∂v_0
    out[..., :3, 3:6] = -skew(vl)         # ∂(ω × v_0)/∂ω
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
    dq[..., 3:6] = -M[..., :, :3] @ skew(g0)
    # Velocity: q̇_a = v, and q̈_a depends on v through the velocity products of the virtual joints.
    dv = dv + M @ _virtual_acceleration_jacobian(qda)
    return dq, dv, M


def floating_inverse_dynamics_derivatives(robot: Robot, q, v, a, wrenches=None, gravity=None):
    """∂τ/∂q and ∂τ/∂v of :func:`robodyn.floating.floating_inverse_dynamics` (Pinocchio's ``computeRNEADerivatives``).

    The configuration derivative is taken in the tangent space of the free flyer, as Pinocchio's: along
    dq = [δp, δθ, δq] (n + 6), ^wT_0' = ^wT_0 Exp(δp, δθ) with δp, δθ in R_0 (docs/floating-base.md,
    "Derivatives").  ∂τ/∂a is :func:`robodyn.floating.floating_inertia_matrix`.

    Parameters
    ----------
    robot : Robot (floating or mobile base)
    q : array_like (..., n + 7);  v, a : array_like (..., n + 6)
    wrenches, gravity : as in :func:`robodyn.floating.floating_inverse_dynamics`.

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
    """∂a/∂q, ∂a/∂v, ∂a/∂τ of :func:`robodyn.floating.floating_forward_dynamics` (Pinocchio's ``computeABADerivatives``).

    Differentiating M(q) a + H(q, v) = τ at a = a(q, v, τ): ∂a/∂q = −M⁻¹ ∂τ/∂q, ∂a/∂v = −M⁻¹ ∂τ/∂v, ∂a/∂τ = M⁻¹,
    with ∂τ/∂· of :func:`floating_inverse_dynamics_derivatives` at the computed a (the same tangent-space
    configuration derivative).

    Parameters
    ----------
    robot : Robot (floating base)
    q : array_like (..., n + 7);  v, tau : array_like (..., n + 6)
    wrenches, gravity : as in :func:`robodyn.floating.floating_inverse_dynamics`.

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
