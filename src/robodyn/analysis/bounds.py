"""Estimates of the constants in the bounds on the dynamic terms (De Luca, "Bounds on dynamic terms";
Khalil & Dombre §9.3.3.3 g): k0 ≤ ‖A(q)‖ ≤ α, ‖C(q, q̇)‖ ≤ β ‖q̇‖, ‖Q(q)‖ ≤ γ (induced 2-norms), sampled over the
joint space, and their growth with unlimited prismatic joints (docs/analysis.md, "Bounds on the dynamic terms").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from robodyn.model.robot import check_robot
from robodyn.analysis.coupling import joint_ranges
from robodyn.dynamics import api
from robodyn.dynamics.lagrange import christoffel_symbols
from robodyn.dynamics.newton_euler import gravity_torques
from robodyn.errors import InputError
from robodyn.model.robot import Robot


@dataclass(frozen=True)
class BoundEstimates:
    """Sampled constants of the bounds on A, C, Q (SI units of A, of C per rad/s, of Q).

    alpha_min (De Luca's k0): min ‖A‖₂;  alpha (k1): max ‖A‖₂;  lambda_min: min eigenvalue of A
    (A ≥ λ_min I);  beta (k4): max ‖C(q, u)‖₂ over sampled q and unit u;  beta_upper: max over sampled q
    of (Σ_k ‖C(q, e_k)‖₂²)^½ ≥ beta;  gamma (k6): max ‖Q‖₂;  samples: number of configurations;
    ranges (n, 2): sampling interval of each joint.
    """

    alpha_min: float
    alpha: float
    lambda_min: float
    beta: float
    beta_upper: float
    gamma: float
    samples: int
    ranges: np.ndarray
    seed: int


def dynamic_bounds(robot: Robot, samples: int = 2000, seed: int = 0, prismatic_range=None, chunk: int = 256,
                   progress: Callable[[int, int], None] | None = None, method: str = "composite") -> BoundEstimates:
    """Estimate α, β, γ (and k0, λ_min) by sampling the joint space uniformly.

    Parameters
    ----------
    robot : Robot
    samples : int — number of configurations q (one random unit q̇ each for β).
    seed : int — random generator seed (deterministic result).
    prismatic_range : (lo, hi), optional — interval for prismatic joints without finite ``qlim``; without it
        such joints raise :class:`InputError` (their terms grow with ‖q‖).
    chunk : int — configurations evaluated per batch.
    progress : callable(done, total), optional — called after each batch (e.g. a progress bar).
    method : str — inertia-matrix method.

    Returns
    -------
    BoundEstimates
    """
    check_robot(robot)
    if int(samples) < 1 or int(chunk) < 1:
        raise InputError(f"samples = {samples}, chunk = {chunk}; give positive integers")
    n, S = robot.n, int(samples)
    ranges = joint_ranges(robot, prismatic_range, require_prismatic=True)
    rng = np.random.default_rng(seed)
    q_all = rng.uniform(ranges[:, 0], ranges[:, 1], (S, n))
    u_all = rng.normal(size=(S, n))
    u_all /= np.linalg.norm(u_all, axis=-1, keepdims=True)
    a_lo = lam = np.inf
    a_hi = b = b_up = g = 0.0
    for start in range(0, S, int(chunk)):
        q, u = q_all[start : start + chunk], u_all[start : start + chunk]
        A = api.inertia_matrix(robot, q, method=method)
        nA = np.linalg.norm(A, 2, axis=(-2, -1))
        a_lo, a_hi = min(a_lo, nA.min()), max(a_hi, nA.max())
        lam = min(lam, np.linalg.eigvalsh(A)[:, 0].min())
        c = christoffel_symbols(robot, q)  # [m, i, j, k]: C(q, u)_ij = Σ_k c_ijk u_k  [9.7]
        b = max(b, np.linalg.norm(np.einsum("...ijk,...k->...ij", c, u), 2, axis=(-2, -1)).max())
        Ck = np.moveaxis(c, -1, -3)  # [m, k, i, j] = C(q, e_k)
        b_up = max(b_up, np.sqrt(np.sum(np.linalg.norm(Ck, 2, axis=(-2, -1)) ** 2, -1)).max())
        g = max(g, np.linalg.norm(gravity_torques(robot, q), axis=-1).max())
        if progress is not None:
            progress(min(start + chunk, S), S)
    return BoundEstimates(float(a_lo), float(a_hi), float(lam), float(b), float(b_up), float(g), S, ranges, int(seed))


@dataclass(frozen=True)
class PolynomialBounds:
    """Result of :func:`polynomial_bounds`: constants of De Luca's bounds for robots with unlimited prismatic
    joints, in the prismatic displacements d (‖d‖ ≤ ‖q‖, so they hold with ‖q‖ too):

        k0 ≤ ‖A(q)‖ ≤ k1 + k2 ‖d‖ + k3 ‖d‖²
        ‖C(q, q̇)‖ ≤ (k4 + k5 ‖d‖ + k5_quadratic ‖d‖²) ‖q̇‖
        ‖Q(q)‖ ≤ k6 + k7 ‖d‖

    k0 = max over prismatic joints of A_jj is a true lower bound (‖A‖₂ ≥ max_j A_jj); the others are maxima over
    the sampled revolute angles of bounds that hold for every d at those angles.  k5_quadratic, absent from De
    Luca's slide, is zero (to rounding) where the linear form holds (docs/analysis.md: the polar arm needs it).
    """

    k0: float
    k1: float
    k2: float
    k3: float
    k4: float
    k5: float
    k5_quadratic: float
    k6: float
    k7: float
    samples: int
    prismatic: tuple


def _quadratic_coefficients(f, angles: np.ndarray, revolute, prismatic, n: int):
    """Exact coefficients of f(q), a polynomial of degree ≤ 2 in the prismatic variables at fixed revolute angles:
    f(θ, d) = F0 + Σ_i d_i F_i + Σ_{i≤j} d_i d_j F_ij, from f at d = 0, ±e_i, e_i + e_j (…, p), (…, p, p)."""
    S = angles.shape[0]
    p = len(prismatic)

    def at(d):
        q = np.zeros((S, n))
        q[:, revolute] = angles
        q[:, prismatic] = d
        return f(q)

    F0 = at(np.zeros(p))
    lin, quad = [], {}
    for i in range(p):
        e = np.zeros(p)
        e[i] = 1.0
        fp, fm = at(e), at(-e)
        lin.append(0.5 * (fp - fm))
        quad[i, i] = 0.5 * (fp + fm) - F0
    for i in range(p):
        for j in range(i + 1, p):
            e = np.zeros(p)
            e[i] = e[j] = 1.0
            quad[i, j] = at(e) - F0 - lin[i] - lin[j] - quad[i, i] - quad[j, j]
    return F0, lin, quad


def _norm_matrix(norms: dict, p: int, S: int) -> np.ndarray:
    """Largest eigenvalue of the symmetric (p × p) matrix N with N_ii = ‖F_ii‖, N_ij = ‖F_ij‖ / 2, per sample:
    ‖Σ_{i≤j} d_i d_j F_ij‖ ≤ Σ |d_i| |d_j| N_ij ≤ λ_max(N) ‖d‖²."""
    N = np.zeros((S, p, p))
    for (i, j), v in norms.items():
        N[:, i, j] = N[:, j, i] = v if i == j else 0.5 * v
    return np.linalg.eigvalsh(N)[:, -1] if p else np.zeros(S)


def polynomial_bounds(robot: Robot, samples: int = 500, seed: int = 0, angles=None) -> PolynomialBounds:
    """Constants of the bounds on A, C, Q that grow with the prismatic displacements (De Luca, "Bounds on dynamic
    terms": k0 ≤ ‖M‖ ≤ k1 + k2‖q‖ + k3‖q‖², ‖S‖ ≤ (k4 + k5‖q‖)‖q̇‖, ‖g‖ ≤ k6 + k7‖q‖).

    At fixed revolute angles θ, A and the Christoffel symbols are polynomials of degree ≤ 2 in the prismatic
    variables d and Q of degree ≤ 1, their coefficients exact from evaluations at d = 0, ±e_i, e_i + e_j.

    Parameters
    ----------
    robot : Robot
    samples : int
        Number of random revolute-angle vectors, uniform on [−π, π] (A, C, Q are 2π-periodic in them).
    seed : int
        Random generator seed.
    angles : array_like (S, n_revolute), optional
        The revolute angles to use instead of random ones (rad).

    Returns
    -------
    PolynomialBounds
    """
    check_robot(robot)
    n = robot.n
    kinds = robot.sigma[robot.joint_frames]
    prismatic = [k for k in range(n) if kinds[k] == 1]
    revolute = [k for k in range(n) if kinds[k] == 0]
    if angles is None:
        if int(samples) < 1:
            raise InputError(f"samples = {samples!r}; give a positive integer")
        th = np.random.default_rng(seed).uniform(-np.pi, np.pi, (int(samples), len(revolute)))
    else:
        th = np.asarray(angles, dtype=float)
        if th.ndim != 2 or th.shape[1] != len(revolute) or not np.all(np.isfinite(th)):
            raise InputError(f"argument 'angles' has shape {th.shape}; give finite revolute angles of shape "
                             f"(S, {len(revolute)}) (rad)")
    S, p = th.shape[0], len(prismatic)
    A0, Al, Aq = _quadratic_coefficients(lambda q: api.inertia_matrix(robot, q), th, revolute, prismatic, n)
    c0, cl, cq = _quadratic_coefficients(lambda q: christoffel_symbols(robot, q), th, revolute, prismatic, n)
    g0, gl, gq = _quadratic_coefficients(lambda q: gravity_torques(robot, q), th, revolute, prismatic, n)

    def two(M):
        return np.linalg.norm(M, 2, axis=(-2, -1))

    def cnorm(c):                                   # max over unit u of ‖Σ_k c[..., k] u_k‖ ≤ (Σ_k ‖c_k‖²)^½
        return np.sqrt(np.sum(two(np.moveaxis(c, -1, -3)) ** 2, -1))

    k1 = two(A0).max()
    k2 = np.sqrt(sum(two(a) ** 2 for a in Al)).max() if p else 0.0
    k3 = _norm_matrix({ij: two(a) for ij, a in Aq.items()}, p, S).max()
    k4 = cnorm(c0).max()
    k5 = np.sqrt(sum(cnorm(c) ** 2 for c in cl)).max() if p else 0.0
    k5q = _norm_matrix({ij: cnorm(c) for ij, c in cq.items()}, p, S).max()
    k6 = np.linalg.norm(g0, axis=-1).max()
    k7 = np.linalg.norm(np.stack(gl, -1), 2, axis=(-2, -1)).max() if p else 0.0
    # Q is affine in d: a non-zero quadratic part would mean the polynomial structure above is wrong
    if p and max(np.abs(v).max() for v in gq.values()) > 1e-9 * max(1.0, k6, k7):
        raise InputError(f"robot '{robot.name}': the gravity torque is not affine in the prismatic variables")
    k0 = float(max((A0[0, k, k] for k in prismatic), default=np.linalg.norm(A0, 2, axis=(-2, -1)).min()))
    return PolynomialBounds(k0=k0, k1=float(k1), k2=float(k2), k3=float(k3), k4=float(k4), k5=float(k5),
                            k5_quadratic=float(k5q), k6=float(k6), k7=float(k7), samples=S,
                            prismatic=tuple(k + 1 for k in prismatic))
