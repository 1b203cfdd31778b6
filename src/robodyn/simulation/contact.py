"""Unilateral contacts with Coulomb friction: one time step of a fixed- or floating-base robot whose points touch
a plane (feet on the ground, a box resting on a table, a tool pushing a surface), by Moreau and Jean's time
stepping.

Over one step of length h from (q, v), with M the inertia matrix, H the bias (Coriolis, centrifugal, gravity,
friction) and J the stacked Jacobians of the contact points in the local axes [t₁, t₂, n] of the plane:

    v_free = v + h M⁻¹ (Γ − H)                      the motion without contacts
    v⁺ = v_free + M⁻¹ Jᵀ λ                          λ (k, 3): the contact impulses on the robot, [λ_t; λ_n]
    u = J v⁺ = W λ + J v_free,   W = J M⁻¹ Jᵀ       the contact velocities (W: the Delassus matrix)

and at every contact c, with φ_c the signed distance of its point to the plane at the start of the step,

    0 ≤ λ_n  ⟂  u_n + φ/h ≥ 0                       Signorini's condition on the velocity and the gap
    ‖λ_t‖ ≤ μ λ_n,  u_t = −α λ_t with α ≥ 0, α = 0 when ‖λ_t‖ < μ λ_n     Coulomb's law (stick or slide)

(Moreau, "Unilateral contact and dry friction in finite freedom dynamics", 1988; Jean, "The non-smooth contact
dynamics method", 1999), on the second-order cone or a pyramid of k facets (``cone="pyramid"``).  The impulses are
solved by :func:`robodyn.simulation.contact_solver.solve_impulses` (projected Gauss–Seidel, Alart and Curnier's
semismooth Newton, a search over contact modes; docs/simulation-control.md §5 states the method and its measured
residuals).  Then q⁺ = q + h v⁺ (semi-implicit Euler); a floating base moves as MuJoCo's free joint:
p⁺ = p + h ^wR_0 v⁺_0 and ^wR_0⁺ = ^wR_0 exp(h [ω⁺_0]×).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from robodyn.arrays import as_real_array, finite_result, working_dtype
from robodyn.dynamics.api import inertia_matrix
from robodyn.dynamics.floating import (augmented_robot, floating_inertia_matrix, floating_inverse_dynamics,
                                       quaternion_matrix)
from robodyn.dynamics.kinematic_derivatives import kinematic_hessian
from robodyn.dynamics.newton_euler import bias_torques
from robodyn.errors import InputError
from robodyn.kinematics import base_poses, jacobian
from robodyn.model.arguments import frame_index, joint_arrays
from robodyn.model.inertia import skew
from robodyn.model.robot import Robot, check_robot
from robodyn.simulation.contact_solver import (ContactSolverError, facet_derivative, impulse_derivative,
                                               solve_impulses)

__all__ = ("contact_step", "contact_step_derivatives", "ContactStep", "ContactDerivatives", "ContactSolverError")


class ContactStep(NamedTuple):
    """Result of :func:`contact_step`.

    Attributes
    ----------
    q : ndarray (..., n) or (..., n + 7)   configuration at the end of the step
    v : ndarray (..., n) or (..., n + 6)   velocity at the end of the step
    forces : ndarray (..., k, 3)           mean contact force λ/h on the robot at each point over the step, world
                                           axes (N)
    gaps : ndarray (..., k)                signed distance φ of each point to the plane at the start of the step (m)
    iterations : int                       Gauss–Seidel sweeps and Newton steps done
    residual : ndarray (...,)              largest violation of Signorini's and Coulomb's conditions by the returned
                                           impulses, as a contact velocity (m/s): zero at an exact solution
    """

    q: np.ndarray
    v: np.ndarray
    forces: np.ndarray
    gaps: np.ndarray
    iterations: int
    residual: np.ndarray


def _contact_points(robot: Robot, points) -> tuple[list[int], np.ndarray]:
    """0-based frame indices (−1: the floating base body) and offsets (k, 3) of the contact points."""
    if isinstance(points, (str, int, np.integer)):
        points = [points]
    try:
        points = list(points)
    except TypeError:
        points = []
    if not points:
        raise InputError(f"points = {points!r}; give a list of contact points: frames (numbers or names) or "
                         "(frame, [x, y, z]) pairs, the point in the frame's axes (m)")
    frames, offsets = [], []
    for p in points:
        if isinstance(p, (str, int, np.integer)):
            frame, xyz = p, (0.0, 0.0, 0.0)
        elif isinstance(p, (tuple, list)) and len(p) == 2:
            frame, xyz = p
        else:
            raise InputError(f"points: {p!r} is neither a frame nor a (frame, [x, y, z]) pair")
        if isinstance(frame, (int, np.integer)) and not isinstance(frame, bool) and frame == 0 and robot.floating:
            frames.append(-1)
        else:
            frames.append(frame_index(robot, frame))
        xyz = as_real_array("points", xyz).astype(float)
        if xyz.shape != (3,) or not np.all(np.isfinite(xyz)):
            raise InputError(f"points: the point {p!r} needs 3 finite coordinates in its frame (m)")
        offsets.append(xyz)
    return frames, np.array(offsets)


def _plane(normal, height) -> tuple[np.ndarray, float]:
    n = as_real_array("normal", normal).astype(float)
    norm = float(np.linalg.norm(n)) if n.shape == (3,) and np.all(np.isfinite(n)) else 0.0
    h = as_real_array("height", height).astype(float)
    if norm == 0.0:
        raise InputError(f"normal = {normal!r}; give the plane's outward normal as 3 finite numbers, not all zero")
    if h.shape != () or not np.isfinite(h):
        raise InputError(f"height = {height!r}; give one finite number: the plane is normalᵀ p = height (m)")
    return n / norm, float(h)


def _tangents(n: np.ndarray) -> np.ndarray:
    """Rows t₁, t₂, n: a right-handed orthonormal basis with n last (t₁ along the world axis least aligned with n)."""
    e = np.eye(3)[int(np.argmin(np.abs(n)))]
    t1 = e - (e @ n) * n
    t1 /= np.linalg.norm(t1)
    return np.stack([t1, np.cross(n, t1), n])


def _orientation(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The floating base's unit quaternion (..., 4) (x, y, z, w) and ^wR_0 (..., 3, 3) from q (..., n + 7)."""
    quat = q[..., 3:7] / np.linalg.norm(q[..., 3:7], axis=-1, keepdims=True)
    return quat, quaternion_matrix(quat)


def _kinematics(robot: Robot, q: np.ndarray, frames: list[int], offsets: np.ndarray):
    """World positions (..., k, 3) and world-axes point Jacobians J_w = ^wR_0 J (..., k, 3, N) of the contact
    points, and what :func:`_jacobian_derivatives` takes: (the robot traced (a floating base: the augmented
    robot), its joint values, the points' 0-based frames in it, their offsets (k, 3), ^wR_0 (..., 3, 3),
    J (..., k, 3, N) in R_0)."""
    batch = q.shape[:-1]
    if robot.floating:
        model, joints = augmented_robot(robot), np.concatenate([np.zeros(batch + (6,)), q[..., 7:]], -1)
        R, origin, index = _orientation(q)[1], q[..., :3], [i + 6 for i in frames]
    else:
        R, origin, index = np.eye(3), np.zeros(batch + (3,)), frames
        model, joints = robot, q
    R0, P0 = base_poses(model, joints, joints.dtype)
    p = np.stack([P0[..., i, :] + R0[..., i, :, :] @ c for i, c in zip(index, offsets)], -2)
    J = np.stack([jacobian(model, joints, i + 1, c)[..., :3, :] for i, c in zip(index, offsets)], -3)
    return (origin[..., None, :] + (R[..., None, :, :] @ p[..., None])[..., 0], R[..., None, :, :] @ J,
            (model, joints, index, offsets, R, J))


def _dynamics(robot: Robot, q, v, gravity, friction):
    if robot.floating:
        return (floating_inertia_matrix(robot, q),
                floating_inverse_dynamics(robot, q, v, np.zeros_like(v), gravity=gravity))
    return inertia_matrix(robot, q), bias_torques(robot, q, v, gravity=gravity, friction=friction)


def _integrate(robot: Robot, q, v, dt):
    if not robot.floating:
        return q + dt * v
    quat, R = _orientation(q)
    p = q[..., :3] + dt * (R @ v[..., :3, None])[..., 0]
    half = 0.5 * dt * v[..., 3:6]
    angle = np.linalg.norm(half, axis=-1, keepdims=True)
    # exp of the body rotation as a unit quaternion (x, y, z, w); sin(a)/a → 1 as a → 0
    dq = np.concatenate([np.sinc(angle / np.pi) * half, np.cos(angle)], -1)
    x1, y1, z1, w1 = (quat[..., i] for i in range(4))
    x2, y2, z2, w2 = (dq[..., i] for i in range(4))
    prod = np.stack([w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2, w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                     w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2, w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2], -1)
    return np.concatenate([p, prod / np.linalg.norm(prod, axis=-1, keepdims=True), q[..., 7:] + dt * v[..., 6:]], -1)


def contact_step(robot: Robot, q, v, tau, dt: float, points, mu: float = 1.0, normal=(0.0, 0.0, 1.0),
                 height: float = 0.0, gravity=None, friction: bool = True, tol: float = 1e-12,
                 max_iter: int = 10_000, cone: str = "circle", facets: int = 4) -> ContactStep:
    """One time step of a robot with unilateral frictional contacts on the plane normalᵀ p = height (module notes).

    Parameters
    ----------
    robot : Robot (fixed or floating base)
    q : array_like (..., n) fixed base, (..., n + 7) floating base (free-flyer conventions, rd.floating)
    v, tau : array_like (..., n) or (..., n + 6): velocity and generalized forces (the base's wrench zero for a
        free-floating robot), rad/s | m/s, N m | N
    dt : float, the step h (s)
    points : sequence of k contact points: a frame (number 1..nf or name; 0 is the base body of a floating robot)
        for its origin, or a pair (frame, [x, y, z]) for a point fixed to it, coordinates in the frame's axes (m)
    mu : float, Coulomb's friction coefficient μ ≥ 0 (the same at every point)
    normal : array_like (3,), the plane's normal in the world (base frame R_0 for a fixed base), pointing to the
        free side; default +z
    height : float, the plane normalᵀ p = height (m)
    gravity : array_like (3,), optional, world frame (m/s²); default ``robot.gravity``
    friction : bool, the joint friction [9.26] in the bias of a fixed-base robot (default) or not
    tol : float, the residual (the largest violation of Signorini's and Coulomb's conditions, m/s) sought,
        relative to the largest of |J v_free|, −φ/h and |u|; also the change of u over one Gauss–Seidel sweep at
        which the sweeps stop.  Where no method reaches it after stalled sweeps, the best impulses are returned
        with their ``residual``
    max_iter : int, the most Gauss–Seidel sweeps and Newton steps (and patterns of contact modes tried)
    cone : "circle" (default) the second-order friction cone ‖λ_t‖ ≤ μ λ_n, or "pyramid" the polyhedral cone of
        ``facets`` facets n_jᵀ λ_t ≤ μ λ_n, n_j at the angles 2πj/facets from t₁ (4 facets: |λ_t1|, |λ_t2| ≤ μ λ_n,
        t₁ = x and t₂ = y for the default normal), with maximal dissipation over the polygon
    facets : int ≥ 3, the pyramid's facets (``cone="pyramid"``)

    Returns
    -------
    ContactStep (q, v, forces, gaps, iterations, residual), float32 for float32 input (computed in float64)

    Raises
    ------
    ContactSolverError
        The residual is above ``tol`` after ``max_iter`` sweeps and Newton steps (and ``max_iter`` Newton steps of
        each search over the contacts' modes), and the sweeps never stalled.
    """
    return _step(robot, q, v, tau, dt, points, mu, normal, height, gravity, friction, tol, max_iter, cone,
                 facets)[0]


def _step(robot, q, v, tau, dt, points, mu, normal, height, gravity, friction, tol, max_iter, cone, facets):
    """:func:`contact_step` and what its derivatives need: (ContactStep, W, b, φ/h, λ, J, M⁻¹Jᵀ, q, v, v⁺ (float64,
    broadcast to the batch), the contact axes [t₁, t₂, n] (3, 3) and the kinematics :func:`_jacobian_derivatives`
    takes (:func:`_kinematics`))."""
    check_robot(robot)
    if robot.base == "mobile":
        raise InputError(f"contact_step: robot '{robot.name}' has a mobile base (a given motion); give a fixed- or "
                         "floating-base robot")
    if not (isinstance(dt, (int, float, np.floating)) and np.isfinite(dt) and dt > 0):
        raise InputError(f"dt = {dt!r}; give the time step as one positive number (s)")
    if not (isinstance(mu, (int, float, np.floating)) and np.isfinite(mu) and mu >= 0):
        raise InputError(f"mu = {mu!r}; give Coulomb's friction coefficient as one number >= 0")
    if not (isinstance(tol, (int, float, np.floating)) and 0 < tol < 1) or not (
            isinstance(max_iter, (int, np.integer)) and not isinstance(max_iter, bool) and max_iter >= 1):
        raise InputError(f"tol = {tol!r}, max_iter = {max_iter!r}; give 0 < tol < 1 and an integer max_iter >= 1")
    if cone not in ("circle", "pyramid") or not (
            isinstance(facets, (int, np.integer)) and not isinstance(facets, bool) and facets >= 3):
        raise InputError(f"cone = {cone!r}, facets = {facets!r}; give cone='circle' (the second-order cone) or "
                         "'pyramid' with an integer facets >= 3")
    n_hat, height = _plane(normal, height)
    given = (q, v, tau)
    frames, offsets = _contact_points(robot, points)
    if robot.floating:
        tau_arr = as_real_array("tau", tau).astype(float)
        if tau_arr.ndim == 0 or tau_arr.shape[-1] != robot.n + 6 or not np.all(np.isfinite(tau_arr)):
            raise InputError(f"contact_step: argument 'tau' has shape {tau_arr.shape}; give finite (..., "
                             f"{robot.n + 6}) generalized forces [f_0, m_0, Γ]")
    else:
        _, _, checked = joint_arrays(robot, q=q, qd=v, tau=tau)
        q, v, tau_arr = (checked[k].astype(float) for k in ("q", "qd", "tau"))
    M, H = _dynamics(robot, q, v, gravity, friction)
    dtype = working_dtype(*given)  # the arguments are checked: they are real arrays
    try:
        batch = np.broadcast_shapes(M.shape[:-2], H.shape[:-1], tau_arr.shape[:-1])
    except ValueError:
        raise InputError(f"contact_step: argument 'tau' with shape {tau_arr.shape} does not broadcast with q and v "
                         f"(batch {M.shape[:-2]})") from None
    q, v = (np.broadcast_to(np.asarray(x, dtype=float), batch + np.shape(x)[-1:]) for x in (q, v))
    M, H, tau = (np.broadcast_to(x, batch + x.shape[-s:]) for x, s in ((M, 2), (H, 1), (tau_arr, 1)))
    p, Jw, traced = _kinematics(robot, q, frames, offsets)
    B = _tangents(n_hat)
    J = (B @ Jw).reshape(q.shape[:-1] + (3 * len(frames), M.shape[-1]))
    X = np.linalg.solve(M, np.concatenate([(tau - H)[..., None], np.swapaxes(J, -1, -2)], -1))
    v_free = v + dt * X[..., 0]
    W = J @ X[..., 1:]
    gaps = p @ n_hat - height
    b = (J @ v_free[..., None])[..., 0].reshape(gaps.shape + (3,))
    sides = int(facets) if cone == "pyramid" and mu > 0 else 0      # without friction both cones are the ray
    lam, sweeps, residual = solve_impulses(W, b, gaps / dt, float(mu), float(tol), int(max_iter), sides)
    v_next = v_free + (X[..., 1:] @ lam.reshape(gaps.shape[:-1] + (-1, 1)))[..., 0]
    q_next = _integrate(robot, q, v_next, dt)
    what = "contact_step"
    out = (finite_result(what, x).astype(dtype, copy=False) for x in (q_next, v_next, lam @ B / dt, gaps))
    return ContactStep(*out, sweeps, residual), W, b, gaps / dt, lam, J, X[..., 1:], q, v, v_next, B, traced


class ContactDerivatives(NamedTuple):
    """Result of :func:`contact_step_derivatives`.

    Attributes
    ----------
    step : ContactStep                     the step (:func:`contact_step`)
    dv_dv : ndarray (..., N, N)            ∂v⁺/∂v, the velocity at the end of the step w.r.t. the one at its start
    dv_dtau : ndarray (..., N, N)          ∂v⁺/∂τ
    smooth : ndarray (...,) bool           every contact strictly in one mode (open with u_n + φ/h > 0, sticking
                                           strictly inside its cone, or sliding with λ_n > 0 and a slip; with a
                                           pyramid, on one facet or strictly at one vertex): the map
                                           (q, v, τ) → (q⁺, v⁺) is differentiable there; elsewhere the derivatives
                                           are those of the modes found, one of the one-sided derivatives at best
    dv_dq : ndarray (..., N, N)            ∂v⁺/∂q (a floating base: along the tangent dq = [δp, δθ, δq] of
                                           :func:`robodyn.dynamics.floating_inverse_dynamics_derivatives`)
    dq_dq, dq_dv, dq_dtau : ndarray (..., N, N)   ∂q⁺/∂q, ∂q⁺/∂v, ∂q⁺/∂τ (a floating base: q⁺ in the tangent
                                           space at q⁺, q⁺ moved to q⁺ ⊕ dq⁺ as q is by dq)
    """

    step: ContactStep
    dv_dv: np.ndarray
    dv_dtau: np.ndarray
    smooth: np.ndarray
    dv_dq: np.ndarray
    dq_dq: np.ndarray
    dq_dv: np.ndarray
    dq_dtau: np.ndarray


def _jacobian_derivatives(robot: Robot, traced: tuple) -> np.ndarray:
    """∂J_w/∂q (..., k, 3, N, N), [c, r, i, m] = ∂(J_w)_ri/∂q_m of the world-axes point Jacobians J_w = R J_a of
    :func:`_kinematics`, from its ``traced`` kinematics (robodyn.dynamics.kinematic_hessian).  A floating base:
    R = ^wR_0, J_a the augmented robot's Jacobian at its virtual joints' zero (the columns of [v_0; ω_0; q̇] in
    R_0), and along the tangent dq = [δp, δθ, δq]: ^wR_0 moves to ^wR_0 Exp(δθ), so ∂J_w/∂δp = 0,
    ∂J_w/∂δθ_i = ^wR_0 [e_i]× J_a, and the joints' columns are the augmented robot's."""
    model, joints, index, offsets, R, Ja = traced
    H = np.stack([kinematic_hessian(model, joints, i + 1, c)[..., :3, :, :] for i, c in zip(index, offsets)], -4)
    if not robot.floating:
        return H
    H[..., :6] = 0.0
    for i in range(3):
        H[..., 3 + i] = np.cross(np.eye(3)[i], Ja, axisb=-2, axisc=-2)
    return np.einsum("...ab,...kbim->...kaim", R, H)


def _integration_derivatives(robot: Robot, v_next: np.ndarray, dt: float):
    """(∂q⁺/∂q at fixed v⁺, ∂q⁺/∂v⁺) (..., N, N) of q⁺ = q ⊕ h v⁺ (:func:`_integrate`).  A floating base, in the
    tangent spaces at q and q⁺: with E = Exp(h ω⁺) and t = h v⁺_0, moving q by dq = [δp, δθ, δq] moves q⁺ by
    [Eᵀ(δp − [t]× δθ), Eᵀ δθ, δq], and v⁺ by dv moves it by h [Eᵀ dv_0, J_r(h ω⁺) dω, dv_q] (J_r the right Jacobian
    of SO(3))."""
    N = v_next.shape[-1]
    eye = np.broadcast_to(np.eye(N), v_next.shape[:-1] + (N, N))
    if not robot.floating:
        return eye, dt * eye
    phi = dt * v_next[..., 3:6]
    angle = np.linalg.norm(phi, axis=-1)[..., None, None]
    small = angle < 1e-4
    safe = np.where(small, 1.0, angle)
    s = np.where(small, 1 - angle ** 2 / 6, np.sin(angle) / safe)            # Rodrigues' coefficients, and
    a = np.where(small, 0.5 - angle ** 2 / 24, (1 - np.cos(angle)) / safe ** 2)   # their series near 0
    c = np.where(small, 1 / 6 - angle ** 2 / 120, (angle - np.sin(angle)) / safe ** 3)
    K = skew(phi)
    Et = np.eye(3) - s * K + a * K @ K              # Exp(hω⁺)ᵀ = Exp(−hω⁺)
    Jr = np.eye(3) - a * K + c * K @ K
    A, B = eye.copy(), eye.copy()
    A[..., :3, :3], A[..., :3, 3:6], A[..., 3:6, 3:6] = Et, -Et @ skew(dt * v_next[..., :3]), Et
    B[..., :3, :3], B[..., 3:6, 3:6] = Et, Jr
    return A, dt * B


def contact_step_derivatives(robot: Robot, q, v, tau, dt: float, points, mu: float = 1.0, normal=(0.0, 0.0, 1.0),
                             height: float = 0.0, gravity=None, friction: bool = True, tol: float = 1e-12,
                             max_iter: int = 10_000, cone: str = "circle", facets: int = 4) -> ContactDerivatives:
    """:func:`contact_step` and the derivatives of its end state (q⁺, v⁺) w.r.t. the configuration q, the velocity
    v at its start and the generalized forces τ, where they are defined.

    Where every contact is strictly in one mode (open, sticking, sliding; with a pyramid, on one facet or at one
    vertex) the modes' conditions F(x, b) = D (u + φ/h e_n) = 0 are smooth and the implicit function theorem gives
    L = ∂λ/∂b = −(∂λ/∂x) (∂F/∂x)⁺ D (a pseudo-inverse: on a redundant contact set λ is not unique, v⁺ is).  With
    v⁺ = v + h q̈(q, v, τ + Jᵀλ/h) (q̈ the forward dynamics),

        ∂v⁺/∂v = (I + M⁻¹Jᵀ L J) (I + h ∂q̈/∂v),    ∂v⁺/∂τ = (I + M⁻¹Jᵀ L J) h M⁻¹
        ∂v⁺/∂q = (I + M⁻¹Jᵀ L J) G + M⁻¹Jᵀ L (∂J/∂q v⁺ + ∂(φ/h)/∂q e_n),   G = h ∂q̈/∂q + M⁻¹ (∂J/∂q)ᵀ λ

    all analytic (:func:`robodyn.forward_dynamics_derivatives` or
    :func:`robodyn.dynamics.floating_forward_dynamics_derivatives`, :func:`robodyn.dynamics.kinematic_hessian`),
    then q⁺ = q ⊕ h v⁺ (a floating base: in the tangent spaces at q and q⁺).  ``smooth`` is False where a contact
    is between modes or v⁺ is not unique (docs/simulation-control.md §5).

    Parameters and Raises: as :func:`contact_step`.

    Returns
    -------
    ContactDerivatives (step, dv_dv, dv_dtau, smooth, dv_dq, dq_dq, dq_dv, dq_dtau)
    """
    from robodyn.dynamics.derivatives import floating_forward_dynamics_derivatives, forward_dynamics_derivatives

    step, W, b, bias, lam, J, MJ, q, v, v_next, B, traced = _step(
        robot, q, v, tau, dt, points, mu, normal, height, gravity, friction, tol, max_iter, cone, facets)
    N, batch, k3 = J.shape[-1], b.shape[:-2], J.shape[-2]
    lam_f = lam.reshape(batch + (k3,))
    tau = np.broadcast_to(np.asarray(tau, dtype=float), batch + (N,))
    tau_eff = tau + (np.swapaxes(J, -1, -2) @ lam_f[..., None])[..., 0] / dt      # the impulses as a force
    if robot.floating:
        da_dq, da_dv, Minv = floating_forward_dynamics_derivatives(robot, q, v, tau_eff, gravity=gravity)
    else:
        da_dq, da_dv, Minv = forward_dynamics_derivatives(robot, q, v, tau_eff, gravity=gravity, friction=friction)
    dlam, smooth = np.zeros(batch + (k3, k3)), np.zeros(batch, bool)
    scale = np.maximum(np.abs(b).max(axis=(-2, -1)), np.abs(bias).max(-1))
    for i in np.ndindex(batch):
        if cone == "pyramid" and mu > 0:
            dlam[i], smooth[i] = facet_derivative(W[i], b[i], bias[i], float(mu), lam[i], MJ[i], float(scale[i]),
                                                  int(facets))
        else:
            dlam[i], smooth[i] = impulse_derivative(W[i], b[i], bias[i], float(mu), lam[i], MJ[i], float(scale[i]))
    dJ = np.einsum("ab,...kbim->...kaim", B, _jacobian_derivatives(robot, traced))
    dJ = dJ.reshape(batch + (k3, N, N))
    G = dt * da_dq + Minv @ np.einsum("...rim,...r->...im", dJ, lam_f)
    moved = np.einsum("...rim,...i->...rm", dJ, v_next)                         # ∂J/∂q v⁺
    moved[..., 2::3, :] += J[..., 2::3, :] / dt                                  # ∂(φ/h)/∂q = nᵀ J_w / h
    through = np.eye(N) + MJ @ dlam @ J
    dv_dq = through @ G + MJ @ dlam @ moved
    dv_dv = through @ (np.eye(N) + dt * da_dv)
    dv_dtau = through @ (dt * Minv)
    A, dq_dv_next = _integration_derivatives(robot, v_next, dt)
    what, dtype = "contact_step_derivatives", step.v.dtype
    dv_dv, dv_dtau, dv_dq, dq_dq, dq_dv, dq_dtau = (finite_result(what, x).astype(dtype, copy=False) for x in (
        dv_dv, dv_dtau, dv_dq, A + dq_dv_next @ dv_dq, dq_dv_next @ dv_dv, dq_dv_next @ dv_dtau))
    return ContactDerivatives(step, dv_dv, dv_dtau, smooth, dv_dq, dq_dq, dq_dv, dq_dtau)
