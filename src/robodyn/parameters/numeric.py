"""Base parameters by the numerical QR method (Gautier 91; Khalil & Dombre §9.4.1, [9.37]–[9.40]).

The regressor is stacked at random states into W (r × p); column k is kept when it is independent of the columns
before it (|R_kk| > ``tol`` of the QR decomposition without pivoting of the unit-norm columns), and

    Γ = [D1 D2] [K1; K2] = D1 (K1 + β K2) = D1 K_B,     D2 = D1 β                          [9.39]–[9.40]

The tolerances, the snapping of β and the choice of its zeros are in docs/base-parameters.md, "Numerical method".
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from robodyn.errors import ModelError
from robodyn.model.robot import Robot
from robodyn.parameters.regressor import regressor

#: Default tolerance on |R_kk| of the column-scaled stacked regressor.
DEFAULT_TOL = 1e-8

#: Largest residual (relative to the scaled column's unit norm) of D2 = D1 β at which entries of β set to 0 are
#: accepted as round-off; a true coefficient larger than this (relative) is kept, as the closed-form rules keep it.
ZERO_RESIDUAL = 1e-12

#: Grouping coefficients below this (absolute, SI units) are 0 in both methods: the closed-form rules drop such
#: terms as the round-off of float angles (cos(π/2) of a float), the QR method as round-off of β.
CHOP = 1e-12

#: Entries of β on the scaled columns up to this size are tried as zeros (see :func:`grouping_matrix`).
_ZERO_CANDIDATE = 1e-6


def random_states(robot: Robot, count: int, seed: int = 0):
    """``count`` random (q, q̇, q̈), each (count, n): revolute q in [−π, π], prismatic q in its limits or [−1, 1] m,
    q̇ and q̈ uniform in [−2, 2] (seeded, reproducible)."""
    rng = np.random.default_rng(seed)
    n = robot.n
    lo = np.where(robot.sigma[robot.joint_frames] == 0, -np.pi, -1.0)
    hi = -lo
    finite = np.isfinite(robot.qlim)
    lo = np.where(finite[:, 0], robot.qlim[:, 0], lo)
    hi = np.where(finite[:, 1], robot.qlim[:, 1], hi)
    q = lo + (hi - lo) * rng.random((count, n))
    return q, rng.uniform(-2, 2, (count, n)), rng.uniform(-2, 2, (count, n))


def stacked_regressor(robot: Robot, friction: bool = False, samples: int | None = None, seed: int = 0) -> np.ndarray:
    """W (samples · n, p): regressors at random states stacked row-wise (default samples: 2p/n + 20)."""
    p = 11 * robot.nf + (3 * robot.n if friction else 0)
    count = samples if samples is not None else 2 * p // max(robot.n, 1) + 20
    q, qd, qdd = random_states(robot, count, seed)
    return regressor(robot, q, qd, qdd, friction=friction).reshape(-1, p)


def independent_columns(W: np.ndarray, tol: float = DEFAULT_TOL) -> np.ndarray:
    """Indices of the columns of W independent of all columns before them (Khalil & Dombre's choice of K1), sorted.

    Raises :class:`ModelError` when the count disagrees with the numerical rank (too few samples or an
    ill-conditioned W): take more samples or another tolerance.
    """
    if W.shape[0] < W.shape[1]:
        raise ModelError(f"numerical base parameters: {W.shape[0]} rows for {W.shape[1]} columns; use more samples")
    kept, R = sequential_qr(W, tol)
    sv = scipy.linalg.svdvals(R)  # the singular values of W̃ = Q R are those of R
    rank = int(np.count_nonzero(sv > tol * sv[0])) if sv.size and sv[0] > 0 else 0
    if rank != kept.size:
        raise ModelError(
            f"numerical base parameters: the sequential QR test keeps {kept.size} columns but the stacked "
            f"regressor has numerical rank {rank} (tol = {tol:g}); use more samples or another tolerance"
        )
    return kept


def sequential_qr(W: np.ndarray, tol: float = DEFAULT_TOL) -> tuple[np.ndarray, np.ndarray]:
    """The sorted indices of the columns of W with |R_kk| > ``tol`` in the QR decomposition (no pivoting) of W with
    unit-norm columns (zero columns never), and that R: the sequential test of :func:`independent_columns`."""
    scale = np.linalg.norm(W, axis=0)
    live = scale > tol * max(scale.max(initial=0.0), np.finfo(float).tiny)
    R = scipy.linalg.qr(np.where(live, W / np.where(live, scale, 1.0), 0.0), mode="r")[0][: W.shape[1]]
    return np.flatnonzero((np.abs(np.diag(R)) > tol) & live), R


def grouping_matrix(W: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """β (b, p − b) of [9.40], D2 = D1 β, with entries snapped to clean decimals where they are exact.

    An entry of β is 0 only when the column of D2 is reproduced without it: per eliminated column the most of
    its smallest entries (scaled, ≤ 1e-6, smallest first) are dropped such that the column fitted again on the
    remaining kept columns has a residual of at most ``ZERO_RESIDUAL`` (relative), or twice that of the full
    least-squares column when W is ill-conditioned.  Zeroing every entry below a fixed size instead would drop
    true groupings of short lengths (d² M with d = 10 µm), which the closed-form rules keep.
    """
    elim = np.setdiff1d(np.arange(W.shape[1]), kept)
    scale = np.linalg.norm(W, axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    A = W[:, kept] / scale[kept]
    E = W[:, elim] / scale[elim]
    B, *_ = np.linalg.lstsq(A, E, rcond=None)
    # A column below the rank tolerance (d_3² M_3 with d_3 = 10 µm) still groups into the kept ones when it lies in
    # their span to 1e-8 of its own norm; otherwise it is round-off and has no effect ([9.37]).
    dead = scale[elim] <= DEFAULT_TOL * max(scale.max(initial=0.0), np.finfo(float).tiny)
    dead &= np.linalg.norm(A @ B - E, axis=0) > 1e-8
    B[:, dead] = 0.0
    for e in np.flatnonzero(~dead):
        B[:, e] = _zero_round_off(A, E[:, e], B[:, e])
    beta = B * scale[elim][None, :] / scale[kept][:, None]
    residual = np.linalg.norm(W[:, kept] @ beta - W[:, elim], axis=0)
    bad = ~dead & (residual > 1e-8 * np.linalg.norm(W[:, elim], axis=0) + 1e-12)
    if np.any(bad):
        raise ModelError("numerical base parameters: D2 = D1 β does not hold to 1e-8; use more samples")
    beta[np.abs(beta) < CHOP] = 0.0  # the closed-form rules drop the same coefficients
    return snap(beta)


def _zero_round_off(A: np.ndarray, e: np.ndarray, b: np.ndarray) -> np.ndarray:
    """b (k,) with the most of its smallest entries set to 0 such that A b, refitted on the others, still gives the
    column e to ``ZERO_RESIDUAL`` or to twice the residual of b (A has unit-norm columns; the smallest-first prefix
    is found by bisection)."""
    order = np.argsort(np.abs(b))
    m = int(np.count_nonzero(np.abs(b) <= _ZERO_CANDIDATE))
    limit = max(ZERO_RESIDUAL * np.linalg.norm(e), 2.0 * np.linalg.norm(A @ b - e), 1e-300)

    def fit(count):
        keep = np.ones(b.size, bool)
        keep[order[:count]] = False
        out = np.zeros(b.size)
        if keep.any():
            out[keep] = np.linalg.lstsq(A[:, keep], e, rcond=None)[0]
        return out, np.linalg.norm(A @ out - e) <= limit

    if m == 0:
        return b
    trial, ok = fit(m)
    if ok:  # the usual case: every small entry is round-off
        return trial
    lo, hi, best = 0, m - 1, b
    while lo < hi:  # the largest count whose zeros are round-off
        mid = (lo + hi + 1) // 2
        trial, ok = fit(mid)
        if ok:
            lo, best = mid, trial
        else:
            hi = mid - 1
    return best


def snap(x: np.ndarray, digits: int = 6, rtol: float = 1e-11) -> np.ndarray:
    """Replace each non-zero entry within ``rtol`` (relative, or absolute below 1) of a non-zero decimal with
    ≤ ``digits`` digits by that decimal.  Zeros are not made here: a small entry stays (see :func:`grouping_matrix`)."""
    out = np.array(x, dtype=float)
    done = out == 0
    for k in range(digits + 1):
        c = np.round(out, k)
        hit = ~done & (c != 0) & (np.abs(out - c) <= rtol * np.maximum(1.0, np.abs(out)))
        out = np.where(hit, c, out)
        done |= hit
    return out


def sympy_number(x: float):
    """An exact sympy Rational for a snapped decimal (≤ 6 digits), a Float otherwise."""
    import sympy

    x = float(x)
    for k in range(7):
        if round(x, k) == x:
            return sympy.Rational(repr(float(round(x, k))))
    return sympy.Float(x, 15)


def grouped_expressions(symbols, kept, beta: np.ndarray) -> list:
    """K_B = K1 + β K2 [9.40] as sympy expressions of the parameter ``symbols`` (p,): one per kept column."""
    import sympy

    elim = np.setdiff1d(np.arange(len(symbols)), kept)
    return [sympy.Add(symbols[k], *(sympy_number(b) * symbols[e] for b, e in zip(beta[i], elim) if b != 0))
            for i, k in enumerate(kept)]
