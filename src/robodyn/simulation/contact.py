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
dynamics method", 1999).  The friction cone is the second-order (circular) cone, or a pyramid of k facets
(``cone="pyramid"``: Coulomb's law then the principle of maximal dissipation over its polygon).  Without friction
(μ = 0) this is Gauss's principle of least constraint: v⁺ minimises ½ (v⁺ − v_free)ᵀ M (v⁺ − v_free) subject to
n ᵀ J v⁺ + φ/h ≥ 0; with friction it is the exact Coulomb problem (not Anitescu's convex relaxation, which lets
sliding points lift off).

The problem is solved by projected Gauss–Seidel over the contacts (Jean and Moreau): the normal impulse by a
complementarity step, then the tangential one projected on the disc of radius μ λ_n with the step 1/w, w the
largest eigenvalue of the contact's 2 × 2 tangential block of W, so that a sliding impulse opposes the sliding
velocity; the sweeps stop when one no longer changes u.  Where the conditions are not then met to ``tol``, the
impulses are polished by a semismooth Newton method (Alart and Curnier, "A mixed formulation for frictional
contact problems prone to Newton like solution methods", 1991; Acary and Brogliato, "Numerical methods for
nonsmooth dynamical systems", 2008, ch. 13) on Alart and Curnier's function, in the same scaling,

    F_n = w_n (λ_n − ξ_n),  ξ_n = max(0, λ_n − (u_n + φ/h)/w_n)
    F_t = w (λ_t − P(λ_t − u_t/w)),  P the projection on the disc of radius μ ξ_n,

zero exactly at a solution (w_n the contact's diagonal entry of W), with least-squares steps (W is singular on a
redundant contact set: more contact rows than the robot has freedoms, where λ is not unique but u and v⁺ are) and a
backtracking line search on ½‖F‖².  On such a redundant set, when closing the gaps needs a slip (a box a hair from
flat landing on four corners), sticking everywhere has no solution: the sweeps creep along the null space of W
(u unchanged) towards impulses where some contacts reach the edge of their cones, and where Newton's steps do not
gain either, each round of sweeps ends by leaping along that creep to the first contact's edge.  Where that still
leaves a step short of ``tol`` (there, all contacts slide by about 200 tilt² m/s, on the cones' edges where the
Newton Jacobian has a near-null direction), the contacts' modes are searched: for a guess of which contacts are
open, stick or slide, the modes' conditions are a smooth square system, the slip's direction an unknown (a sliding
impulse γ (μ cos θ, μ sin θ, 1)), solved by Newton's method; the guesses nearest to the modes of the best impulses
first, restarting from the best impulses found, then from De Saxcé's fixed point (Acary and Cadoux, 2013: the
convex second-order-cone program of the normal velocities shifted by μ ‖u_t‖, solved by Clarabel).  With a
pyramid (``cone="pyramid"``) the sweeps project on its polygon and the modes (open, sticking, on a facet, at a
vertex) are linear.  The result is the best impulse found; its residual, the largest violation of the conditions
as a contact velocity (m/s), is returned: it is what judges every method's result.  Then q⁺ = q + h v⁺
(semi-implicit Euler); a floating base moves as MuJoCo's free joint:
p⁺ = p + h ^wR_0 v⁺_0 and ^wR_0⁺ = ^wR_0 exp(h [ω⁺_0]×).
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np
from scipy import sparse

from robodyn.arrays import as_real_array, finite_result, working_dtype
from robodyn.dynamics.api import inertia_matrix
from robodyn.dynamics.floating import (augmented_robot, floating_inertia_matrix, floating_inverse_dynamics,
                                       quaternion_matrix)
from robodyn.dynamics.newton_euler import bias_torques
from robodyn.errors import InputError, RobodynError
from robodyn.kinematics import base_poses, jacobian
from robodyn.model.arguments import frame_index, joint_arrays
from robodyn.model.robot import Robot, check_robot


_SWEEPS = 100   # the most sweeps of a round before the Newton steps
_PATTERNS = 243     # the most patterns of contact modes tried by _by_modes (every one of up to 5 contacts)
_MODE_STEPS = 16    # Newton steps on one pattern
_FACET_PATTERNS = 4000  # the most patterns of a pyramid's contact modes tried by _by_facets
_ROUNDS = 3         # rounds of De Saxcé's fixed point that start the second search


class ContactSolverError(RobodynError, RuntimeError):
    """:func:`contact_step` did not solve the contact problem within ``max_iter`` Gauss–Seidel sweeps and Newton
    steps, and its sweeps never stalled."""


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


def _kinematics(robot: Robot, q: np.ndarray, frames: list[int], offsets: np.ndarray):
    """World positions (..., k, 3) and world-axes point Jacobians (..., k, 3, N) of the contact points."""
    batch = q.shape[:-1]
    if robot.floating:
        aug = augmented_robot(robot)
        qa = np.concatenate([np.zeros(batch + (6,)), q[..., 7:]], -1)
        quat = q[..., 3:7] / np.linalg.norm(q[..., 3:7], axis=-1, keepdims=True)
        R, origin, index = quaternion_matrix(quat), q[..., :3], [i + 6 for i in frames]
        model, joints = aug, qa
    else:
        R, origin, index = np.eye(3), np.zeros(batch + (3,)), frames
        model, joints = robot, q
    R0, P0 = base_poses(model, joints, joints.dtype)
    p = np.stack([P0[..., i, :] + R0[..., i, :, :] @ c for i, c in zip(index, offsets)], -2)
    J = np.stack([jacobian(model, joints, i + 1, c)[..., :3, :] for i, c in zip(index, offsets)], -3)
    return origin[..., None, :] + (R[..., None, :, :] @ p[..., None])[..., 0], R[..., None, :, :] @ J


def _dynamics(robot: Robot, q, v, gravity, friction):
    if robot.floating:
        return (floating_inertia_matrix(robot, q),
                floating_inverse_dynamics(robot, q, v, np.zeros_like(v), gravity=gravity))
    return inertia_matrix(robot, q), bias_torques(robot, q, v, gravity=gravity, friction=friction)


def _projections(Wr, lam, u, bias, mu, c, tiny):
    """The normal step of contact c (complementarity) and the step length of its tangential one: returns λ_n, w
    (the largest eigenvalue of the contact's 2 × 2 tangential block of W, module notes), w_n and max(w, tiny)."""
    wn = Wr[..., c, 2, c, 2]
    ln = np.where(wn > 0, np.maximum(0.0, lam[..., c, 2] - (u[..., c, 2] + bias[..., c]) / np.maximum(wn, tiny)), 0.0)
    G = Wr[..., c, :2, c, :2]
    a, d, off = G[..., 0, 0], G[..., 1, 1], G[..., 0, 1]
    w = 0.5 * (a + d) + np.sqrt(0.25 * (a - d) ** 2 + off ** 2)
    return ln, w, wn, np.maximum(w, tiny)


def _polygon(facets):
    """Unit outward normals n_j (k, 2) of the pyramid's facets, at 2πj/k from t₁, their directions e_j (k, 2)
    (n_j turned by +90°) and the half-length tan(π/k) of a facet at unit distance."""
    angle = 2 * np.pi * np.arange(facets) / facets
    return (np.stack([np.cos(angle), np.sin(angle)], -1), np.stack([-np.sin(angle), np.cos(angle)], -1),
            float(np.tan(np.pi / facets)))


def _disc(lt, radius, w, tiny, facets=0):
    """λ_t projected on the disc of radius μ λ_n (``facets`` 0), or on the polygon of ``facets`` sides at distance
    μ λ_n from the origin (:func:`_polygon`); zero where the contact has no tangential freedom, w = 0."""
    if facets:
        n, e, half = _polygon(facets)
        inside = (lt @ n.T).max(-1) <= radius
        along = np.clip(lt @ e.T, -half * radius[..., None], half * radius[..., None])       # (..., k)
        edges = radius[..., None, None] * n + along[..., None] * e                           # (..., k, 2)
        nearest = np.argmin(((edges - lt[..., None, :]) ** 2).sum(-1), -1)
        lt = np.where(inside[..., None], lt, np.take_along_axis(edges, nearest[..., None, None], -2)[..., 0, :])
    else:
        norm = np.linalg.norm(lt, axis=-1)
        lt = np.where((norm > radius)[..., None], lt * (radius / np.maximum(norm, tiny))[..., None], lt)
    return np.where((w > 0)[..., None], lt, 0.0)


def _residual(Wr, lam, u, bias, mu, tiny, facets=0):
    """Largest violation (m/s) of the contact conditions by (λ, u): the distance of λ from its own local steps,
    scaled by w; zero exactly at a solution."""
    r = np.zeros(lam.shape[:-2])
    for c in range(lam.shape[-2]):
        wn = Wr[..., c, 2, c, 2]
        rn = np.where(wn > 0, np.abs(np.minimum(lam[..., c, 2] * wn, u[..., c, 2] + bias[..., c])), 0.0)
        _, w, _, ws = _projections(Wr, lam, u, bias, mu, c, tiny)
        lt = _disc(lam[..., c, :2] - u[..., c, :2] / ws[..., None], mu * lam[..., c, 2], w, tiny, facets)
        r = np.maximum(r, np.maximum(rn, w * np.abs(lam[..., c, :2] - lt).max(-1)))
    return r


def _sweep(Wr, lam, u, bias, mu, tiny, facets=0):
    """One projected Gauss–Seidel sweep over the contacts (module notes): new (λ, u), the arguments unchanged."""
    lam, u = lam.copy(), u.copy()
    for c in range(lam.shape[-2]):
        ln, w, _, ws = _projections(Wr, lam, u, bias, mu, c, tiny)
        u += Wr[..., :, :, c, 2] * (ln - lam[..., c, 2])[..., None, None]
        lam[..., c, 2] = ln
        lt = _disc(lam[..., c, :2] - u[..., c, :2] / ws[..., None], mu * ln, w, tiny, facets)
        u += (Wr[..., :, :, c, :2] @ (lt - lam[..., c, :2])[..., None, :, None])[..., 0]
        lam[..., c, :2] = lt
    return lam, u


def _cone(lam, mu):
    """λ brought into the friction cones: λ_n ≥ 0, then λ_t scaled onto the disc of radius μ λ_n where outside it
    (the normal impulse kept: a step along a sliding contact's edge stays on it)."""
    n = np.maximum(lam[..., 2], 0.0)
    t = lam[..., :2]
    s = np.linalg.norm(t, axis=-1)
    shrink = np.where(s > mu * n, mu * n / np.where(s > 0, s, 1.0), 1.0)
    return np.concatenate([t * shrink[..., None], n[..., None]], -1)


def _alart_curnier(Wr, lam, u, bias, mu, tiny):
    """Alart and Curnier's function F(λ, u) (..., k, 3) (m/s), zero exactly at a solution, and its generalized
    Jacobian [∂F/∂λ, ∂F/∂u] (..., 3k, 6k) (the chain rule through u = W λ + b is left to the caller):

        F_n = w_n (λ_n − ξ_n),  ξ_n = max(0, λ_n − (u_n + φ/h)/w_n)                    Signorini's natural map
        F_t = w (λ_t − P(λ_t − u_t/w)),  P the projection on the disc of radius μ ξ_n   Coulomb's law

    with w_n the contact's diagonal entry of W and w the largest eigenvalue of its tangential block (the steps of
    the projected Gauss–Seidel sweeps); a row without freedom (w = 0) asks for a zero impulse."""
    batch, k = lam.shape[:-2], lam.shape[-2]
    F = np.empty(lam.shape)
    dF = np.zeros(batch + (k, 3, 6 * k))
    eye = np.eye(6 * k).reshape(2, k, 3, 6 * k)     # the rows of ∂/∂λ and ∂/∂u
    for c in range(k):
        L, U = eye[0, c], eye[1, c]
        xi, w, wn, ws = _projections(Wr, lam, u, bias, mu, c, tiny)     # ξ_n: the sweeps' normal step
        closed = xi > 0
        F[..., c, 2] = np.where(wn > 0, wn * (lam[..., c, 2] - xi), lam[..., c, 2])
        dF[..., c, 2, :] = np.where(closed[..., None], U[2], np.where(wn > 0, wn, 1.0)[..., None] * L[2])
        dxi = np.where(closed[..., None], L[2] - U[2] / np.maximum(wn, tiny)[..., None], 0.0)
        y = lam[..., c, :2] - u[..., c, :2] / ws[..., None]
        dy = L[:2] - U[:2] / ws[..., None, None]
        ny, radius = np.linalg.norm(y, axis=-1), mu * xi
        stick = (ny <= radius)[..., None]
        held = (ny < radius)[..., None, None]       # the Jacobian's piece: sliding on the edge
        yhat = y / np.maximum(ny, tiny)[..., None]
        ratio = (radius / np.maximum(ny, tiny))[..., None, None]
        slide = (ratio * (dy - yhat[..., :, None] * (yhat[..., None, :] @ dy))
                 + mu * yhat[..., :, None] * dxi[..., None, :])
        free = (w > 0)[..., None]
        F[..., c, :2] = np.where(free, w[..., None] * (lam[..., c, :2] - np.where(stick, y, radius[..., None] * yhat)),
                                 lam[..., c, :2])
        dF[..., c, :2, :] = np.where(free[..., None], w[..., None, None] * (L[:2] - np.where(held, dy, slide)),
                                     L[:2])
    return F, dF.reshape(batch + (3 * k, 6 * k))


def _velocities(W, lam, b):
    """u = W λ + b (..., k, 3)."""
    return (W @ lam.reshape(lam.shape[:-2] + (-1, 1))).reshape(lam.shape) + b


def _merit(W, Wr, lam, b, bias, mu, tiny):
    """½‖F‖² (..., ) of Alart and Curnier's function at λ."""
    F, _ = _alart_curnier(Wr, lam, _velocities(W, lam, b), bias, mu, tiny)
    return 0.5 * (F * F).sum(axis=(-2, -1))


def _newton(W, Wr, lam, b, bias, mu, tiny):
    """One semismooth Newton step on Alart and Curnier's function from λ, its iterate projected on the friction
    cones, with a backtracking (Armijo) line search on the merit ½‖F‖²: the new λ and where the step was taken.
    The step is the least-squares one, −J⁺F (J = ∂F/∂λ + ∂F/∂u W): on a redundant contact set J is singular
    (λ is not unique, u is), and the step leaves λ's part in the null space alone."""
    batch, n = lam.shape[:-2], 3 * lam.shape[-2]
    F, dF = _alart_curnier(Wr, lam, _velocities(W, lam, b), bias, mu, tiny)
    f = F.reshape(batch + (n,))
    J = dF[..., :n] + dF[..., n:] @ W
    U, s, Vt = np.linalg.svd(J)
    inv = np.where(s > 1e-10 * s[..., :1], 1.0 / np.maximum(s, tiny), 0.0)
    d = -(np.swapaxes(Vt, -1, -2) @ (inv * (np.swapaxes(U, -1, -2) @ f[..., None])[..., 0])[..., None])[..., 0]
    merit, slope = 0.5 * (f * f).sum(-1), (f * (J @ d[..., None])[..., 0]).sum(-1)
    d = d.reshape(lam.shape)
    new, step, found = lam, np.ones(batch), np.zeros(batch, bool)
    for _ in range(30):
        trial = _cone(lam + step[..., None, None] * d, mu)
        ok = ~found & (_merit(W, Wr, trial, b, bias, mu, tiny) <= merit + 1e-4 * step * np.minimum(slope, 0.0))
        new = np.where(ok[..., None, None], trial, new)
        found |= ok
        if found.all():
            break
        step = np.where(found, step, 0.5 * step)
    return new, found


def _edge(Wr, lam, u, d, bias, mu, tiny):
    """The first t > 0 at which a contact that sticks reaches the edge of its disc along λ + t d, u fixed (d in
    the null space of W): ‖y(t)‖ = μ ξ(t), a quadratic in t (∞ where none does)."""
    t = np.full(lam.shape[:-2], np.inf)
    for c in range(lam.shape[-2]):
        x0, w, _, ws = _projections(Wr, lam, u, bias, mu, c, tiny)      # ξ_n(0)
        x1 = np.where(x0 > 0, d[..., c, 2], 0.0)
        y0, y1 = lam[..., c, :2] - u[..., c, :2] / ws[..., None], d[..., c, :2]
        a = (y1 * y1).sum(-1) - (mu * x1) ** 2
        half = (y0 * y1).sum(-1) - mu * mu * x0 * x1
        gap = (y0 * y0).sum(-1) - (mu * x0) ** 2
        disc = half * half - a * gap
        cross = (w > 0) & (gap < 0) & (disc >= 0) & ((a > 0) | (half > 0))
        root = gap / np.minimum(-half - np.sqrt(np.maximum(disc, 0.0)), -tiny)
        t = np.where(cross & (root < t), root, t)
    return t


def _sweeps(Wr, lam, u, bias, mu, moving, limit, floor, tol, tiny, facets=0):
    """Projected Gauss–Seidel sweeps, at most ``limit``, on the samples ``moving`` until one no longer changes u
    by more than max(floor, tol |u|): (λ, u), the last sweep's change of λ (its creep), the samples still moving
    and the sweeps done; the other samples are left as they are."""
    creep, done = np.zeros(lam.shape), 0
    moving = moving.copy()
    while moving.any() and done < limit:
        new_lam, new_u = _sweep(Wr, lam, u, bias, mu, tiny, facets)
        done += 1
        change = np.abs(new_u - u).max(axis=(-2, -1))
        creep = np.where(moving[..., None, None], new_lam - lam, creep)
        lam, u = (np.where(moving[..., None, None], x, y) for x, y in ((new_lam, lam), (new_u, u)))
        moving &= change > np.maximum(floor, tol * np.abs(u).max(axis=(-2, -1)))
    return lam, u, creep, moving, done


OPEN, STICK, SLIDE = 0, 1, 2


def _mode_impulses(x, modes, mu):
    """λ (k, 3) and ∂λ/∂x (k, 3, len(x)) of one sample from the unknowns x of its contact modes: nothing where a
    contact is open (λ = 0), λ itself where it sticks, (γ, θ) where it slides, λ = γ (μ cos θ, μ sin θ, 1) on the
    edge of its cone (γ alone when μ = 0)."""
    k = len(modes)
    lam, dlam, i = np.zeros((k, 3)), np.zeros((k, 3, x.size)), 0
    for c, mode in enumerate(modes):
        if mode == STICK:
            lam[c], dlam[c, :, i:i + 3] = x[i:i + 3], np.eye(3)
            i += 3
        elif mode == SLIDE and mu == 0:
            lam[c, 2], dlam[c, 2, i] = x[i], 1.0
            i += 1
        elif mode == SLIDE:
            g, cos, sin = x[i], np.cos(x[i + 1]), np.sin(x[i + 1])
            lam[c] = dlam[c, :, i] = [mu * cos, mu * sin, 1.0]
            lam[c] *= g
            dlam[c, :2, i + 1] = g * mu * np.array([-sin, cos])
            i += 2
    return lam, dlam


def _mode_equations(x, modes, W, b, bias, mu):
    """The conditions of the contact modes (m/s) and their Jacobian for one sample: u + φ/h e_n = 0 where a contact
    sticks; u_n + φ/h = 0 and u_t parallel to the friction's direction (its component across it zero) where it
    slides. As many equations as unknowns; λ."""
    lam, dlam = _mode_impulses(x, modes, mu)
    u = (W @ lam.reshape(-1)).reshape(lam.shape) + b
    du = (W @ dlam.reshape(lam.size, -1)).reshape(dlam.shape)
    F, dF, i = [], [], 0
    for c, mode in enumerate(modes):
        if mode == STICK:
            F += [u[c, 0], u[c, 1], u[c, 2] + bias[c]]
            dF += [du[c, 0], du[c, 1], du[c, 2]]
            i += 3
        elif mode == SLIDE:
            F.append(u[c, 2] + bias[c])
            dF.append(du[c, 2])
            if mu > 0:
                cos, sin = np.cos(x[i + 1]), np.sin(x[i + 1])
                turn = np.zeros(x.size)
                turn[i + 1] = -cos * u[c, 0] - sin * u[c, 1]
                F.append(cos * u[c, 1] - sin * u[c, 0])
                dF.append(cos * du[c, 1] - sin * du[c, 0] + turn)
            i += 2 if mu > 0 else 1
    return np.array(F), np.array(dF).reshape(len(F), x.size), lam


def _mode_start(lam, u, modes, mu, size, slip):
    """The unknowns of the modes at λ: a sliding contact's direction that of λ_t (``slip`` False) or against the
    slip u_t (``slip`` True; the other where that one is zero), and its γ = λ_n, else ``size``."""
    x = []
    for c, mode in enumerate(modes):
        if mode == STICK:
            x += list(lam[c])
        elif mode == SLIDE:
            t = -u[c, :2] if slip == bool(np.any(u[c, :2])) else lam[c, :2]
            x += [lam[c, 2] if lam[c, 2] > 0 else size] + ([np.arctan2(t[1], t[0])] if mu > 0 else [])
    return np.array(x)


def _patterns(guess, kinds):
    """Patterns of contact modes, those that change fewer contacts of ``guess`` first."""
    for d in range(len(guess) + 1):
        for changed in itertools.combinations(range(len(guess)), d):
            for new in itertools.product(*([m for m in kinds if m != guess[c]] for c in changed)):
                modes = list(guess)
                for c, m in zip(changed, new):
                    modes[c] = m
                yield tuple(modes)


def _interleave(first, second):
    """The items of two iterables in turn, each once."""
    seen = set()
    for pair in itertools.zip_longest(first, second):
        for item in pair:
            if item is not None and item not in seen:
                seen.add(item)
                yield item


def _by_modes(W, b, bias, mu, lam, target, budget, tiny, facets=0):
    """The contact problem of one sample solved mode by mode: for a guess of which contacts are open, stick or
    slide, Newton's method on the modes' conditions (:func:`_mode_equations`, a smooth square system: the slip's
    direction is an unknown, not a quotient by a vanishing slip), then the guesses nearest to the modes of λ
    first, until the residual of :func:`_residual` (which judges every result, whatever its modes) is below
    ``target`` or ``budget`` Newton steps are spent.  Returns the best λ, its residual and the steps done."""
    k = b.shape[0]
    Wr = W.reshape(k, 3, k, 3)

    def measure(lam):
        u = (W @ lam.reshape(-1)).reshape(k, 3) + b
        return u, float(_residual(Wr, lam, u, bias, mu, tiny))

    u, least = measure(lam)
    best, size, steps = lam, max(float(np.abs(lam[:, 2]).max()), tiny), 0
    scale = max(float(np.abs(b).max()), float(np.abs(bias).max()))
    edge = np.linalg.norm(lam[:, :2], axis=-1) >= (1 - 1e-6) * mu * lam[:, 2]
    guess = np.where(lam[:, 2] <= 1e-12 * size, OPEN, np.where(edge | (mu == 0), SLIDE, STICK))
    patterns = _patterns(guess, (OPEN, SLIDE) if mu == 0 else (OPEN, STICK, SLIDE))
    for modes, slip in itertools.product(itertools.islice(patterns, _PATTERNS), (False, True)):
        x, last = _mode_start(lam, u, modes, mu, size, slip), np.inf
        for _ in range(_MODE_STEPS):
            F, J, trial = _mode_equations(x, modes, W, b, bias, mu)
            change = float(np.abs(F).max(initial=0.0))
            if not np.isfinite(change) or (change >= last and change <= target):    # diverged, or at rounding
                break
            if change <= 1e-6 * scale:                 # near a root: is it a solution?
                _, r = measure(trial)
                if r < least:
                    best, least = trial, r
            if least <= target or not x.size or steps >= budget:
                return best, least, steps
            last, steps = change, steps + 1
            x = x + np.linalg.lstsq(J, -F, rcond=None)[0]
    return best, least, steps


def _facet_mode(mode, mu, facets):
    """λ_c = E x_c and the conditions S (u_c + φ/h e_n) = 0 of one contact mode of the pyramid: E (3, m), S (m, 3).
    Modes: open, sticking, sliding on facet j (2 + j: λ_t = μ γ n_j + s e_j, the slip along −n_j), sliding at the
    vertex between facets j and j + 1 (2 + k + j: λ_t = μ γ (n_j + tan(π/k) e_j), the slip in its normal cone)."""
    if mode == OPEN:
        return np.zeros((3, 0)), np.zeros((0, 3))
    if mode == STICK:
        return np.eye(3), np.eye(3)
    n, e, half = _polygon(facets)
    j = (mode - 2) % facets
    if mode < 2 + facets:
        return (np.array([[mu * n[j, 0], e[j, 0]], [mu * n[j, 1], e[j, 1]], [1.0, 0.0]]),
                np.array([[0.0, 0.0, 1.0], [e[j, 0], e[j, 1], 0.0]]))
    corner = mu * (n[j] + half * e[j])
    return np.array([[corner[0]], [corner[1]], [1.0]]), np.array([[0.0, 0.0, 1.0]])


def _by_facets(W, b, bias, mu, lam, target, budget, tiny, facets):
    """The contact problem of one sample with pyramids of ``facets`` sides, solved mode by mode
    (:func:`_facet_mode`): each pattern of modes is a square linear system in its unknowns, solved by least
    squares; the patterns nearest to the modes of λ first, until the residual of :func:`_residual` (the judge,
    whatever the modes) is below ``target`` or ``budget`` patterns are spent.  The best λ, its residual and the
    patterns tried."""
    k = b.shape[0]
    Wr = W.reshape(k, 3, k, 3)
    rhs = b + np.concatenate([np.zeros((k, 2)), bias[:, None]], -1)

    def measure(lam):
        return float(_residual(Wr, lam, (W @ lam.reshape(-1)).reshape(k, 3) + b, bias, mu, tiny, facets))

    best, least, tried = lam, measure(lam), 0
    n, _, _ = _polygon(facets)
    u = (W @ lam.reshape(-1)).reshape(k, 3) + b
    size = max(float(np.abs(lam[:, 2]).max()), tiny)
    slip = np.linalg.norm(u[:, :2], axis=-1)
    active = (lam[:, :2] @ n.T) >= (1 - 1e-9) * mu * lam[:, 2:]                 # (k, facets)
    by_force, by_slip = [], []                     # the modes of λ, and those the slips ask for
    for c in range(k):
        j = np.flatnonzero(active[c])
        if lam[c, 2] <= 1e-12 * size:
            by_force.append(OPEN)
        elif j.size == 1:
            by_force.append(2 + int(j[0]))
        elif j.size == 2:                           # two neighbours: the vertex after the first, cyclically
            by_force.append(2 + facets + (int(j[1]) if j[0] == 0 and j[1] == facets - 1 else int(j[0])))
        else:
            by_force.append(STICK)
        closed = u[c, 2] + bias[c] <= 1e-9 * max(float(np.abs(u).max()), tiny)
        by_slip.append(OPEN if not closed else STICK if slip[c] <= 1e-3 * max(float(slip.max()), tiny)
                       else 2 + int(np.argmax(-n @ u[c, :2])))
    blocks = [_facet_mode(m, mu, facets) for m in range(2 + 2 * facets)]
    kinds = range(2 + 2 * facets)
    for modes in _interleave(_patterns(tuple(by_force), kinds), _patterns(tuple(by_slip), kinds)):
        if least <= target or tried >= min(budget, _FACET_PATTERNS):
            break
        tried += 1
        E, S = zip(*(blocks[m] for m in modes))
        cols = [0] + list(np.cumsum([e.shape[1] for e in E]))
        if not cols[-1]:
            continue
        Eb = np.zeros((3 * k, cols[-1]))
        Sb = np.zeros((sum(s.shape[0] for s in S), 3 * k))
        for c in range(k):
            Eb[3 * c:3 * c + 3, cols[c]:cols[c + 1]] = E[c]
            Sb[cols[c]:cols[c + 1], 3 * c:3 * c + 3] = S[c]
        x = np.linalg.lstsq(Sb @ W @ Eb, -Sb @ rhs.reshape(-1), rcond=None)[0]
        trial = (Eb @ x).reshape(k, 3)
        r = measure(trial)
        if r < least:
            best, least = trial, r
    return best, least, tried


def _de_saxce(W, b, bias, mu, facets, rounds):
    """Impulses λ (k, 3) of one sample by De Saxcé's fixed point (Acary and Cadoux, "Applications of an existence
    result for the Coulomb friction problem", 2013): with the normal velocities shifted by s = μ σ(−u_t) (σ the
    support function of the unit disc, or of the pyramid's polygon), Coulomb's problem is the convex one

        min ½ λᵀ W λ + (b + [0, 0, φ/h + s])ᵀ λ   subject to λ in the friction cones,

    solved here in its dual form min ½‖z‖² subject to G z + b + [0, 0, φ/h + s] in the dual cones (W = G Gᵀ, G of
    full column rank; λ the multipliers) by Clarabel's interior point method, then s is updated from u = G z + b;
    ``rounds`` times.  Not exact (the interior point's λ lies inside the cones where a solution slides at a slip
    below its tolerance): it gives the search over the contacts' modes its start."""
    import clarabel

    k = b.shape[0]
    e, U = np.linalg.eigh(W)
    rank = e > 1e-12 * max(float(e.max(initial=0.0)), np.finfo(float).tiny)
    if not rank.any():
        return np.zeros((k, 3))
    G = U[:, rank] * np.sqrt(e[rank])
    if mu == 0:
        rows, cones = [np.array([[0.0, 0.0, 1.0]])] * k, [clarabel.NonnegativeConeT(1)] * k
    elif facets:
        n, e_, half = _polygon(facets)
        corner = mu * (n + half * e_)               # μ v_j: the dual cone is u_n + μ v_jᵀ u_t ≥ 0
        rows, cones = [np.hstack([corner, np.ones((facets, 1))])] * k, [clarabel.NonnegativeConeT(facets)] * k
    else:
        rows, cones = [np.array([[0.0, 0.0, 1.0], [mu, 0, 0], [0, mu, 0]])] * k, [clarabel.SecondOrderConeT(3)] * k
    T = np.zeros((sum(r.shape[0] for r in rows), 3 * k))
    start = np.cumsum([0] + [r.shape[0] for r in rows])
    for c, r in enumerate(rows):
        T[start[c]:start[c + 1], 3 * c:3 * c + 3] = r
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    scale = max(float(np.abs(b).max()), float(np.abs(bias).max()), np.finfo(float).tiny)
    shift, lam = np.zeros(k), np.zeros((k, 3))
    for _ in range(rounds):
        q = (b + np.concatenate([np.zeros((k, 2)), (bias + shift)[:, None]], -1)).reshape(-1) / scale
        solution = clarabel.DefaultSolver(sparse.csc_matrix(np.eye(G.shape[1])), np.zeros(G.shape[1]),
                                          sparse.csc_matrix(-T @ G), T @ q, cones, settings).solve()
        if not np.all(np.isfinite(solution.z)) or not np.all(np.isfinite(solution.x)):
            break
        lam = (T.T @ np.asarray(solution.z)).reshape(k, 3) * scale
        u_t = (G @ np.asarray(solution.x)).reshape(k, 3)[:, :2] * scale + b[:, :2]
        if mu == 0:
            break
        shift = (-u_t @ corner.T).max(-1) if facets else mu * np.linalg.norm(u_t, axis=-1)
    return lam


def _solve(W, b, bias, mu, tol, max_iter, facets=0):
    """Impulses λ (..., k, 3) in local axes solving the contact problem of the module notes, the iterations done
    (sweeps and Newton steps) and the residual (..., ) of :func:`_residual`; ``b`` = J v_free (..., k, 3),
    ``bias`` = φ/h (..., k).

    Rounds of projected Gauss–Seidel sweeps, until one no longer changes the contact velocities u = W λ + b
    relative to the velocities the step must undo, then semismooth Newton steps while they at least halve the
    residual, until the residual is below ``tol`` times those velocities.  On a redundant contact set (more
    contact rows than the body has freedoms: a box flat on four corners) λ is not unique, u is; where closing the
    gaps needs a slip, every contact sticking leaves the sweeps no exact solution, and they creep along the null
    space of W (u unchanged) towards the one where some contacts reach the edge of their cones and slide.  Each
    round ends by leaping along that creep to the first contact's edge.  A sample that has converged is left as it
    is (a batch gives the per-sample results)."""
    batch, k = b.shape[:-2], b.shape[-2]
    Wr = W.reshape(batch + (k, 3, k, 3))
    lam, u = np.zeros(b.shape), b.copy()
    tiny = np.finfo(float).tiny
    if not k:
        return lam, 1, np.zeros(batch)
    speed = np.maximum(np.abs(b).max(axis=(-2, -1)), np.maximum(-bias, 0.0).max(-1))   # what the step must undo
    best, least, before = lam, np.full(batch, np.inf), np.full(batch, np.inf)
    todo, still, done = np.ones(batch, bool), np.zeros(batch, bool), 0

    def keep(lam):
        """The velocities and residual of λ; the best λ so far kept, and the samples solved marked done."""
        nonlocal best, least, todo
        u = _velocities(W, lam, b)
        residual = _residual(Wr, lam, u, bias, mu, tiny, facets)
        better = todo & (residual < least)
        best, least = np.where(better[..., None, None], lam, best), np.where(better, residual, least)
        todo &= residual > tol * np.maximum(speed, np.abs(u).max(axis=(-2, -1)))
        return u, residual

    for _ in range(3 * k + 3):                      # rounds: each leap brings a contact to its edge
        if not todo.any() or done >= max_iter:
            break
        lam, u, creep, moving, sweeps = _sweeps(Wr, lam, u, bias, mu, todo, min(_SWEEPS, max_iter - done),
                                                tol * speed, tol, tiny, facets)
        done += sweeps
        still |= todo & ~moving
        u, residual = keep(lam)
        if facets:                                  # a pyramid: its modes are linear, search them straight away
            break
        newton = todo.copy()
        while newton.any() and done < max_iter:
            step, found = _newton(W, Wr, lam, b, bias, mu, tiny)
            done += 1
            lam = np.where((newton & found)[..., None, None], step, lam)
            last = residual
            u, residual = keep(lam)
            newton &= found & todo & (residual <= 0.5 * last)
        leap = _edge(Wr, lam, u, creep, bias, mu, tiny)
        leaping = todo & np.isfinite(leap)
        todo &= leaping | (least <= 0.5 * before)       # where no edge is left to reach, go on while it gains
        before = least
        lam = lam + np.where(leaping, leap, 0.0)[..., None, None] * creep
        u = _velocities(W, lam, b)
    lam, u = best, _velocities(W, best, b)
    residual = least                                # keep() measured best's residual
    target = tol * np.maximum(speed, np.abs(u).max(axis=(-2, -1)))
    best, least = best.copy(), np.array(least, dtype=float)
    search = _by_facets if facets else _by_modes
    for i in np.ndindex(batch):                     # the samples left: contact modes, one sample at a time
        for start in ("best", "best", "De Saxcé", "best"):    # the best impulses so far, or De Saxcé's fixed point
            if least[i] <= target[i] or done >= max_iter:
                break
            lam_i = best[i] if start == "best" else _de_saxce(W[i], b[i], bias[i], mu, facets, _ROUNDS)
            lam_i, least_i, steps = search(W[i], b[i], bias[i], mu, lam_i, float(target[i]), max_iter, tiny, facets)
            done += steps
            if least_i < least[i]:
                best[i], least[i] = lam_i, least_i
    lam, u = best, _velocities(W, best, b)
    residual = least
    moving = ~still & (residual > tol * np.maximum(speed, np.abs(u).max(axis=(-2, -1))))
    lam, u, _, moving, sweeps = _sweeps(Wr, lam, u, bias, mu, moving, max_iter - done, tol * speed, tol, tiny,
                                        facets)
    done += sweeps                                  # sweeps alone, as far as they go, where they never stalled
    still |= ~moving
    todo = np.ones(batch, bool)
    keep(lam)
    u, residual = _velocities(W, best, b), least
    scale = np.maximum(speed, np.abs(u).max(axis=(-2, -1)))
    failed = (residual > tol * scale) & ~still
    if failed.any():
        worst = float(np.max(np.where(failed, residual / np.maximum(scale, tiny), 0.0)))
        raise ContactSolverError(f"contact_step: the contact impulses did not converge in {max_iter} Gauss–Seidel "
                                 f"sweeps and Newton steps (relative residual {worst:.3g} > tol = {tol:g}); raise "
                                 "max_iter, loosen tol or shorten dt")
    return best, done, residual


def _integrate(robot: Robot, q, v, dt):
    if not robot.floating:
        return q + dt * v
    quat = q[..., 3:7] / np.linalg.norm(q[..., 3:7], axis=-1, keepdims=True)
    R = quaternion_matrix(quat)
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
        with their ``residual`` (below 1.2e-12 m/s on the stress loops of benchmarks/bench_contact_stress.py:
        random boxes, and boxes near flat striking the plane on four corners at 1 m/s with μ up to 1.5)
    max_iter : int, the most Gauss–Seidel sweeps and Newton steps (and patterns of contact modes tried)
    cone : "circle" (default) the second-order friction cone ‖λ_t‖ ≤ μ λ_n, or "pyramid" the polyhedral cone of
        ``facets`` facets n_jᵀ λ_t ≤ μ λ_n, n_j at the angles 2πj/facets from t₁ (the polygon around the circle; 4
        facets: |λ_t1|, |λ_t2| ≤ μ λ_n, t₁ = x and t₂ = y for the default normal); a sliding contact's friction
        then maximises the dissipation −u_tᵀλ_t over the polygon (against the slip on a facet, at a vertex for
        slips in its normal cone)
    facets : int ≥ 3, the pyramid's facets (``cone="pyramid"``)

    Returns
    -------
    ContactStep (q, v, forces, gaps, iterations, residual), float32 for float32 input (computed in float64)

    Raises
    ------
    ContactSolverError
        The residual is above ``tol`` after ``max_iter`` sweeps and Newton steps (and ``max_iter`` Newton steps of
        each search over the contacts' modes), and the sweeps never stalled.  No method has a convergence
        guarantee with friction; the search over modes is finite (at most 243 patterns of the circular cone's
        modes, 4000 of the pyramid's).
    """
    return _step(robot, q, v, tau, dt, points, mu, normal, height, gravity, friction, tol, max_iter, cone,
                 facets)[0]


def _step(robot, q, v, tau, dt, points, mu, normal, height, gravity, friction, tol, max_iter, cone, facets):
    """:func:`contact_step` and what its derivatives need: (ContactStep, W, b, φ/h, λ, J, M⁻¹Jᵀ)."""
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
    p, Jw = _kinematics(robot, q, frames, offsets)
    B = _tangents(n_hat)
    J = (B @ Jw).reshape(q.shape[:-1] + (3 * len(frames), M.shape[-1]))
    X = np.linalg.solve(M, np.concatenate([(tau - H)[..., None], np.swapaxes(J, -1, -2)], -1))
    v_free = v + dt * X[..., 0]
    W = J @ X[..., 1:]
    gaps = p @ n_hat - height
    b = (J @ v_free[..., None])[..., 0].reshape(gaps.shape + (3,))
    sides = int(facets) if cone == "pyramid" and mu > 0 else 0      # without friction both cones are the ray
    lam, sweeps, residual = _solve(W, b, gaps / dt, float(mu), float(tol), int(max_iter), sides)
    v_next = v_free + (X[..., 1:] @ lam.reshape(gaps.shape[:-1] + (-1, 1)))[..., 0]
    q_next = _integrate(robot, q, v_next, dt)
    what = "contact_step"
    out = (finite_result(what, x).astype(dtype, copy=False) for x in (q_next, v_next, lam @ B / dt, gaps))
    return ContactStep(*out, sweeps, residual), W, b, gaps / dt, lam, J, X[..., 1:]


class ContactDerivatives(NamedTuple):
    """Result of :func:`contact_step_derivatives`.

    Attributes
    ----------
    step : ContactStep                     the step (:func:`contact_step`)
    dv_dv : ndarray (..., N, N)            ∂v⁺/∂v, the velocity at the end of the step w.r.t. the one at its start
    dv_dtau : ndarray (..., N, N)          ∂v⁺/∂τ
    smooth : ndarray (...,) bool           every contact strictly in one mode (open with u_n + φ/h > 0, sticking
                                           strictly inside its cone, or sliding with λ_n > 0 and a slip): the map
                                           (v, τ) → v⁺ is differentiable there; elsewhere the derivatives are those
                                           of the modes found, one of the one-sided derivatives at best
    """

    step: ContactStep
    dv_dv: np.ndarray
    dv_dtau: np.ndarray
    smooth: np.ndarray


def _mode_rows(x, modes, mu, k):
    """D (m, 3k): the conditions of the modes are D (u + φ/h e_n) = 0 (:func:`_mode_equations`), linear in u."""
    rows, i = [], 0
    for c, mode in enumerate(modes):
        if mode == STICK:
            rows += [3 * c, 3 * c + 1, 3 * c + 2]
            i += 3
        elif mode == SLIDE:
            rows.append(3 * c + 2)
            if mu > 0:
                rows.append((c, x[i + 1]))
            i += 2 if mu > 0 else 1
    D = np.zeros((len(rows), 3 * k))
    for r, row in enumerate(rows):
        if isinstance(row, tuple):
            c, angle = row
            D[r, 3 * c:3 * c + 2] = [-np.sin(angle), np.cos(angle)]
        else:
            D[r, row] = 1.0
    return D


def _impulse_derivative(W, b, bias, mu, lam, MJ, scale):
    """∂λ/∂b (3k, 3k) of one sample at its solution λ, by the implicit function theorem on the conditions of its
    contact modes (:func:`_mode_equations`), and whether v⁺ is differentiable there: every contact strictly in its
    mode (margins 1e-8 of ``scale`` for velocities, of the largest λ_n or the impulse W_ii⁻¹ ``scale`` for
    impulses) and the modes' solutions
    near λ (the null space of ∂F/∂x) all giving the same v⁺ (``MJ`` = M⁻¹Jᵀ): not so where sliding contacts
    share a redundant set (a box sliding flat on four corners: how its weight splits between them is not
    determined, and with it neither is the friction's moment)."""
    k = b.shape[0]
    u = (W @ lam.reshape(-1)).reshape(k, 3) + b
    tiny = np.finfo(float).tiny
    size = max(float(np.abs(lam[:, 2]).max(initial=0.0)), scale / max(float(W.diagonal().max()), tiny), tiny)
    slip = np.linalg.norm(u[:, :2], axis=-1)
    edge = np.linalg.norm(lam[:, :2], axis=-1) >= (1 - 1e-8) * mu * lam[:, 2]
    closed = lam[:, 2] > 1e-8 * size
    modes = np.where(~closed, OPEN, np.where(edge | (mu == 0), SLIDE, STICK))
    strict = np.where(~closed, u[:, 2] + bias > 1e-8 * scale,
                      np.where(modes == STICK, slip <= 1e-8 * scale, (slip > 1e-8 * scale) | (mu == 0)))
    x = _mode_start(lam, u, modes, mu, size, False)
    if not x.size:
        return np.zeros((3 * k, 3 * k)), bool(strict.all())
    _, Jx, _ = _mode_equations(x, modes, W, b, bias, mu)
    _, dlam = _mode_impulses(x, modes, mu)
    dlam = dlam.reshape(3 * k, -1)
    _, s, Vt = np.linalg.svd(Jx)
    free = MJ @ dlam @ Vt[s <= 1e-10 * s[0]].T        # v⁺ along the modes' solutions through λ: zero if unique
    unique = np.abs(free).max(initial=0.0) <= 1e-8 * max(float(np.abs(MJ @ dlam).max()), np.finfo(float).tiny)
    return -dlam @ np.linalg.pinv(Jx) @ _mode_rows(x, modes, mu, k), bool(strict.all() and unique)


def contact_step_derivatives(robot: Robot, q, v, tau, dt: float, points, mu: float = 1.0, normal=(0.0, 0.0, 1.0),
                             height: float = 0.0, gravity=None, friction: bool = True, tol: float = 1e-12,
                             max_iter: int = 10_000) -> ContactDerivatives:
    """:func:`contact_step` (circular cones) and the derivatives of its end velocity v⁺ w.r.t. the velocity v at
    its start and the generalized forces τ, where they are defined.

    At a solution whose every contact is strictly in one mode (open, sticking, sliding), the modes' conditions
    F(x, b) = D (u + φ/h e_n) = 0 (:func:`_mode_equations`, u = W λ(x) + b) are smooth, and the implicit function
    theorem gives ∂λ/∂b = −(∂λ/∂x) (∂F/∂x)⁺ D (the pseudo-inverse: on a redundant contact set λ is not unique, v⁺
    is); then with b = J v_free, v_free = v + h M⁻¹(τ − H(q, v)) and v⁺ = v_free + M⁻¹Jᵀλ,

        ∂v⁺/∂v = (I + M⁻¹Jᵀ (∂λ/∂b) J) (I + h ∂q̈/∂v),    ∂v⁺/∂τ = (I + M⁻¹Jᵀ (∂λ/∂b) J) h M⁻¹

    with ∂q̈/∂v of :func:`robodyn.forward_dynamics_derivatives` (a floating base:
    :func:`robodyn.dynamics.floating_forward_dynamics_derivatives`).  Sticking contacts project the velocity onto
    the motions that keep them; sliding ones add the turn of the friction with the slip's direction.  Where a
    contact is between modes (a contact about to open or close, a slip starting or stopping) the map is not
    differentiable and ``smooth`` is False; so it is where v⁺ itself is not unique (sliding contacts on a redundant
    set, a box sliding flat on four corners).  The derivatives w.r.t. q (through M, J and the gaps) are not given.

    Parameters and Raises: as :func:`contact_step` (the circular cone).

    Returns
    -------
    ContactDerivatives (step, dv_dv, dv_dtau, smooth)
    """
    from robodyn.dynamics.derivatives import floating_forward_dynamics_derivatives, forward_dynamics_derivatives

    step, W, b, bias, lam, J, MJ = _step(robot, q, v, tau, dt, points, mu, normal, height, gravity, friction, tol,
                                         max_iter, "circle", 4)
    N = J.shape[-1]
    q, v, tau = (np.asarray(x, dtype=float) for x in (q, v, tau))
    if robot.floating:
        _, da_dv, da_dtau = floating_forward_dynamics_derivatives(robot, q, v, tau, gravity=gravity)
    else:
        _, da_dv, da_dtau = forward_dynamics_derivatives(robot, q, v, tau, gravity=gravity, friction=friction)
    batch = b.shape[:-2]
    dlam, smooth = np.zeros(batch + (J.shape[-2],) * 2), np.zeros(batch, bool)
    scale = np.maximum(np.abs(b).max(axis=(-2, -1)), np.abs(bias).max(-1))
    for i in np.ndindex(batch):
        dlam[i], smooth[i] = _impulse_derivative(W[i], b[i], bias[i], float(mu), lam[i], MJ[i], float(scale[i]))
    through = np.eye(N) + MJ @ dlam @ J
    dv_free_dv = np.broadcast_to(np.eye(N) + dt * da_dv, batch + (N, N))
    what = "contact_step_derivatives"
    dtype = step.v.dtype
    return ContactDerivatives(step, finite_result(what, through @ dv_free_dv).astype(dtype, copy=False),
                              finite_result(what, through @ (dt * da_dtau)).astype(dtype, copy=False), smooth)
