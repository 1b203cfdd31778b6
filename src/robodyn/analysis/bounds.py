"""Estimates of the constants in the bounds on the dynamic terms (De Luca, "Bounds on dynamic terms";
Khalil & Dombre §9.3.3.3 g).

For a robot with only revolute joints (or prismatic joints within finite limits) there are constants with

    k0 ≤ ‖A(q)‖ ≤ α,     ‖C(q, q̇)‖ ≤ β ‖q̇‖,     ‖Q(q)‖ ≤ γ     for every q, q̇

(induced 2-norms).  A, C, Q are 2π-periodic in the revolute angles, so sampling q over [−π, π]ⁿ (and the
prismatic intervals) estimates them; C is linear in q̇, so β = max over q and unit q̇ of ‖C(q, q̇)‖.  The
sampled maxima are lower estimates of the true constants.  ``beta_upper`` is a guaranteed bound at each
sampled q: ‖C(q, q̇)‖ ≤ ‖q̇‖ (Σ_k ‖C(q, e_k)‖²)^½ (triangle and Cauchy–Schwarz inequalities).
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
