"""The semidefinite program of physically consistent identification, scaled, certified and regularized from the data.

The unknowns are the standard parameters K (p,) of ``rd.parameters.standard_parameter_names(robot, friction,
transmission)``; the data enter through the triangular factor of the base regressor, ‖W_B K_B − y‖² =
‖T Ψ K − z‖² + r₀² (Khalil & Dombre [9.40]: K_B = Ψ K).  The program (Sousa & Cortesão 2014; Wensing, Kim &
Slotine 2018)

    minimise  (‖T Ψ K − z‖² + r₀²) / ‖y‖²  +  (λ / p) ‖D⁻¹ (K − K₀)‖²
    subject to  P_j(K) ⪰ 0 (every link's 4 × 4 pseudo-inertia),  Ia, Fc, Fv, motor parameters ≥ 0,
                m_min,j ≤ M_j ≤ m_max,j,  CoM of link j in a box or a convex hull,  Σ M_j = M_total (optional),

is solved in the scaled unknowns u = D⁻¹ (K − K₀), K₀ the a priori parameters.  Its scaling, duality-gap
certificate, λ by cross-validation on contiguous time blocks and prior shares: docs/identification.md, "The
physical method at its defaults".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn.arrays import as_real_array, finite_array, one_per
from robodyn.errors import InputError

#: ``regularization=None``: the grid of the cross-validation and the number of contiguous time blocks.
REGULARIZATION_GRID = tuple(10.0 ** k for k in range(-8, 1))
FOLDS = 5
#: Relative duality gap at which a solution is accepted without a message; at most ``LOOSE_GAP`` it is accepted
#: with its accuracy stated; above, it is solved again (then returned flagged: ``converged`` False).
TIGHT_GAP = 1e-6
LOOSE_GAP = 1e-3
#: Or accepted without a message when √objective − √lower bound (the fit's torque residual relative to ‖y‖, with the
#: regularization's term) is within this of the optimum's: Clarabel's own absolute tolerance on that norm.  On
#: near-exact torques (simulated ones: objective ~1e-16) the relative gap of a point this accurate can be 1e-2.
FIT_GAP = 1e-10
#: A parameter whose prior share exceeds this is "prior-determined".
PRIOR_SHARE = 0.5


@dataclass(frozen=True)
class PhysicalBounds:
    """Bounds of the physically consistent identification beyond P_j ⪰ 0 and the non-negative friction.

    Attributes
    ----------
    min_mass : float or array (nf,) — lower bound on every link's mass M_j (kg; default 0).
    max_mass : float or array (nf,) or None — upper bound on every link's mass (kg).
    com_box : array (nf, 3, 2) or None — the centre of mass of link j, in frame j, inside
        [lo_x, hi_x] × [lo_y, hi_y] × [lo_z, hi_z] (m): lo M_j ≤ MS_j ≤ hi M_j (linear in K).  Rows of NaN: no box.
    com_hull : sequence of nf entries, each None or an array (m, 3) of points in frame j (m), or None — the centre
        of mass c_j = MS_j / M_j of link j inside the convex hull of its points (a link's mesh vertices): with the
        hull's facets a_i · x ≤ b_i, a_i · MS_j ≤ b_i M_j (linear in K; ``com_box`` is the hull of a box's corners).
    total_mass : float or None — the sum of the masses of the links (kg), when known (a scale reading).
    """

    min_mass: object = 0.0
    max_mass: object = None
    com_box: object = None
    total_mass: float | None = None
    com_hull: object = None


def hull_facets(points, name: str = "com_hull") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The facets (a (f, 3) unit normals, b (f,)) of the convex hull of ``points`` (m, 3): inside ⇔ a x ≤ b;
    and c₀ (3,), the points' mean, strictly inside (a positive combination of points spanning a volume).

    Qhull triangulates the hull, so a planar face with several triangles gives one facet here (duplicates removed).
    Raises InputError for fewer than 4 points, points on a plane or a line, or values not finite."""
    from scipy.spatial import ConvexHull, QhullError

    pts = np.asarray(as_real_array(name, points), dtype=float)
    fix = "give at least 4 finite points (m, 3) in the frame, not all on one plane, or None for no hull"
    if pts.ndim != 2 or pts.shape[1] != 3 or pts.shape[0] < 4:
        raise InputError(f"{name} has shape {pts.shape}; {fix}")
    if not np.all(np.isfinite(pts)):
        raise InputError(f"{name} has NaN or infinite coordinates; {fix}")
    try:
        eq = ConvexHull(pts).equations  # n · x + d ≤ 0 inside, |n| = 1
    except QhullError:
        raise InputError(f"{name}: the points span no volume (all on one plane or line); {fix}") from None
    scale = max(float(np.abs(pts).max()), 1e-300)
    key = np.round(np.column_stack([eq[:, :3], eq[:, 3] / scale]), 9)
    _, first = np.unique(key, axis=0, return_index=True)
    eq = eq[np.sort(first)]
    return eq[:, :3], -eq[:, 3], pts.mean(axis=0)


def _check_hulls(hulls, nf: int) -> tuple:
    if hulls is None:
        return (None,) * nf
    if isinstance(hulls, np.ndarray) and hulls.dtype != object:
        hulls = list(hulls) if hulls.ndim == 3 else None
    if not isinstance(hulls, (list, tuple, np.ndarray)) or len(hulls) != nf:
        raise InputError(f"com_hull: give a list of {nf} entries (one per frame), each None or points (m, 3) in "
                         f"that frame (m)")
    return tuple(None if h is None else hull_facets(h, f"com_hull[{j}] (frame {j + 1})")
                 for j, h in enumerate(hulls))


def check_bounds(bounds, nf: int) -> PhysicalBounds:
    """The bounds as arrays (min_mass, max_mass (nf,), com_box (nf, 3, 2), com_hull: per frame None or
    :func:`hull_facets` of its points); clear errors for bad input."""
    if bounds is None:
        return PhysicalBounds(min_mass=np.zeros(nf), max_mass=np.full(nf, np.inf),
                              com_box=np.full((nf, 3, 2), np.nan), com_hull=(None,) * nf)
    if isinstance(bounds, dict):
        unknown = set(bounds) - {"min_mass", "max_mass", "com_box", "com_hull", "total_mass"}
        if unknown:
            raise InputError(f"bounds: unknown key(s) {sorted(unknown)}; use min_mass, max_mass, com_box, com_hull, "
                             f"total_mass")
        bounds = PhysicalBounds(**bounds)
    if not isinstance(bounds, PhysicalBounds):
        raise InputError(f"bounds is {type(bounds).__name__}; give a PhysicalBounds or a dict of its fields")
    lo = one_per("min_mass", bounds.min_mass, nf, lambda m: ~np.isnan(m), "masses in kg (not NaN)", "frame")
    hi = one_per("max_mass", np.inf if bounds.max_mass is None else bounds.max_mass, nf, lambda m: ~np.isnan(m),
                 "masses in kg (not NaN)", "frame")
    if np.any(~np.isfinite(lo)) or np.any(lo < 0) or np.any(hi < lo):
        raise InputError("min_mass and max_mass: give finite masses 0 <= min_mass <= max_mass (kg)")
    box = np.full((nf, 3, 2), np.nan)
    if bounds.com_box is not None:
        box = as_real_array("com_box", bounds.com_box).astype(float)
        if box.shape != (nf, 3, 2) or np.any(box[..., 0] > box[..., 1]):
            raise InputError(f"com_box has shape {box.shape}; give ({nf}, 3, 2): per frame, [lo, hi] of x, y, z "
                             f"(m) with lo <= hi (NaN: no box)")
    total = bounds.total_mass
    if total is not None:
        total = float(as_real_array("total_mass", total))
        if not (np.isfinite(total) and total > 0):
            raise InputError(f"total_mass = {bounds.total_mass!r}; give the links' total mass in kg (> 0)")
    return PhysicalBounds(min_mass=lo, max_mass=hi, com_box=box, total_mass=total,
                          com_hull=_check_hulls(bounds.com_hull, nf))


#: The 4 × 4 pseudo-inertia P = [[½ tr(J) 1 − J, MS], [MSᵀ, M]] as Σ_k π_k B_k of the 10 parameters π.
_B = np.zeros((10, 4, 4))
for _k, (_i, _j) in enumerate([(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]):
    if _i == _j:
        _B[_k] += 0.5 * np.diag([1.0, 1.0, 1.0, 0.0])
        _B[_k, _i, _i] -= 1.0
    else:
        _B[_k, _i, _j] = _B[_k, _j, _i] = -1.0
for _k in range(3):
    _B[6 + _k, _k, 3] = _B[6 + _k, 3, _k] = 1.0
_B[9, 3, 3] = 1.0


@dataclass(frozen=True)
class Scaled:
    """The program in the scaled unknowns u (K = K₀ + D u): data, constraints and pseudo-inertia maps."""

    A: object            # (b, p) T Ψ D / ‖y‖ (ndarray; a fleet's: scipy.sparse, block-structured)
    z: np.ndarray        # (b,)   (z − T Ψ K₀) / ‖y‖
    r0: float            # r₀ / ‖y‖
    prior: np.ndarray    # K₀ (p,)
    D: np.ndarray        # (p,)
    G: np.ndarray        # (g, p) inequalities G u ≤ h (rows of unit norm)
    h: np.ndarray
    E: np.ndarray        # (e, p) equalities E u = e
    e: np.ndarray
    lmi: tuple           # per live frame: (columns (10,), C (4, 4), B (10, 4, 4)): P̃ = C + Σ u_k B_k ⪰ 0
    lam: float
    nonneg: np.ndarray   # indices k of K with K_k ≥ 0
    zero: np.ndarray     # indices k of K held at 0


def parameter_scales(robot, p: int, prior: np.ndarray, A: np.ndarray, ynorm: float) -> np.ndarray:
    """D (p,): link j's 10 inertial parameters on the scale m_j l_j², m_j l_j, m_j of its prior mass and size,
    every other parameter (rotor, friction, motor) on the value that alone would explain the torques, or on its
    prior value (1 where 0) where the data do not excite it."""
    nf = robot.nf
    links = prior[: 11 * nf].reshape(nf, 11)
    mass = links[:, 9]
    total = float(np.sum(np.abs(mass)))
    m = np.maximum(np.abs(mass), 0.1 * total / nf if total > 0 else 1.0)
    reach = float(np.sum(np.abs(robot.d)) + np.sum(np.abs(robot.r)))
    lref = max(reach / nf, 1e-2)
    second = 0.5 * np.sum(links[:, [0, 3, 5]], axis=1)  # tr Σ = ½ tr J
    l = np.maximum(np.sqrt(np.maximum(second, 0.0) / m), lref)
    D = np.empty(p)
    per = np.stack([m * l ** 2] * 6 + [m * l] * 3 + [m], axis=1)
    D[: 11 * nf] = np.column_stack([per, np.zeros(nf)]).ravel()
    col = _column_norms(A)
    # a column at the rounding of the others (a joint that never moves: its rotor and friction) scales its
    # parameter by the prior's value, which the pull towards the prior then holds
    seen = col > 1e-10 * col.max(initial=0.0)
    data = np.where(seen, ynorm / np.where(seen, col, 1.0), np.where(prior != 0, np.abs(prior), 1.0))
    rest = np.ones(p, bool)
    rest[: 11 * nf] = False
    rest[10: 11 * nf: 11] = True
    D[rest] = data[rest]
    return D


def _link_scales(D: np.ndarray, nf: int) -> tuple[np.ndarray, np.ndarray]:
    m = D[9: 11 * nf: 11]
    return m, np.sqrt(D[0: 11 * nf: 11] / m)


def scaled_program(robot, bp, psi: np.ndarray, prior: np.ndarray, Rg: np.ndarray, lam: float, bounds: PhysicalBounds,
                   massless=()) -> Scaled:
    """Build :class:`Scaled` from the stacked factor ``Rg`` ((b + 1) × (b + 1)) of [W_B y]."""
    b = bp.count
    return _program(robot, bp, Rg[:b, :b] @ psi, Rg[:b, b], abs(Rg[b, b]), prior, lam, bounds, massless)


def fleet_program(robot, bp, psi: np.ndarray, prior: np.ndarray, factors, mine, lam: float,
                  bounds: PhysicalBounds) -> tuple[Scaled, np.ndarray]:
    """The program of a fleet of R robots of one model: shared links and motors, robot r's own standard friction
    columns ``mine`` (indices into K), the same constraints, scaling and certificate as one robot's.

    The unknowns are K_f = [K of robot 0 (p,), robot 1's own columns, …, robot R − 1's]; robot r's standard vector
    is K_r = K_f[cols_r], and the fit Σ_r ‖T_r Ψ K_r − z_r‖² + r₀,r² stacks the robots' factors ``factors`` (R of
    (b + 1) × (b + 1)).  Robot r's own Fc, Fv are ≥ 0 as robot 0's; its own values are pulled towards the
    model's as robot 0's.  Returns (the program, cols (R, p) int)."""
    import scipy.sparse

    b = bp.count
    p, R, mine = prior.size, len(factors), np.asarray(mine, dtype=int)
    cols = np.tile(np.arange(p), (R, 1))
    for r in range(1, R):
        cols[r, mine] = p + (r - 1) * mine.size + np.arange(mine.size)
    blocks = [scipy.sparse.coo_matrix(F[:b, :b] @ psi) for F in factors]
    A = scipy.sparse.csr_matrix((np.concatenate([m.data for m in blocks]),
                                 (np.concatenate([m.row + r * b for r, m in enumerate(blocks)]),
                                  np.concatenate([cols[r, m.col] for r, m in enumerate(blocks)]))),
                                shape=(R * b, p + (R - 1) * mine.size))
    z = np.concatenate([F[:b, b] for F in factors])
    r0 = float(np.sqrt(sum(F[b, b] ** 2 for F in factors)))
    nonneg = np.tile((mine - 11 * robot.nf) % 3 < 2, R - 1)  # Fc, Fv ≥ 0; Foff free
    full = np.concatenate([prior, np.tile(prior[mine], R - 1)])
    return _program(robot, bp, A, z, r0, full, lam, bounds, (), nonneg), cols


def _program(robot, bp, A: np.ndarray, z: np.ndarray, r0: float, prior: np.ndarray, lam: float,
             bounds: PhysicalBounds, massless=(), extra=np.zeros(0, bool)) -> Scaled:
    """:class:`Scaled` of the fit ‖A K − z‖² + r₀² (A = T Ψ, unscaled) over K = [the standard vector, ``extra``
    further columns] (``extra``: bool per further column, True where it is ≥ 0)."""
    import scipy.sparse

    nf, n = robot.nf, robot.n
    p = prior.size
    ynorm = max(float(np.sqrt(z @ z + r0 ** 2)), 1e-300)
    D = parameter_scales(robot, p, prior, A, ynorm)
    m_s, l_s = _link_scales(D, nf)
    massless = set(int(j) for j in massless)
    live = [j for j in range(nf) if j not in massless]
    G, h, E, e = [], [], [], []
    nonneg, zero = [], []

    def row(entries):
        r = np.zeros(p)
        for k, v in entries:
            r[k] += v
        return r

    def add(rows, rhs, r, value):  # r · K (≤ or =) value, written in u and normalised
        ru = r * D
        s = np.linalg.norm(ru)
        if s > 0:
            rows.append(ru / s)
            rhs.append((value - r @ prior) / s)

    def ineq(r, bound):
        if bound == 0 and np.count_nonzero(r) == 1 and r.sum() < 0:
            nonneg.append(int(np.flatnonzero(r)[0]))
        add(G, h, r, bound)

    def eq(r, value):
        if value == 0 and np.count_nonzero(r) == 1:
            zero.append(int(np.flatnonzero(r)[0]))
        add(E, e, r, value)

    lo, hi, box = bounds.min_mass, bounds.max_mass, bounds.com_box
    fixed = set(np.flatnonzero(robot.sigma == 2).tolist())
    for j in range(nf):
        o = 11 * j
        if j in massless:
            for k in range(11):
                eq(row([(o + k, 1.0)]), 0.0)
            continue
        ineq(row([(o + 9, -1.0)]), -lo[j])
        if np.isfinite(hi[j]):
            ineq(row([(o + 9, 1.0)]), hi[j])
        for c in range(3):
            if np.isfinite(box[j, c, 0]):
                ineq(row([(o + 6 + c, -1.0), (o + 9, box[j, c, 0])]), 0.0)
            if np.isfinite(box[j, c, 1]):
                ineq(row([(o + 6 + c, 1.0), (o + 9, -box[j, c, 1])]), 0.0)
        if bounds.com_hull[j] is not None:
            for a, bi in zip(*bounds.com_hull[j][:2]):
                ineq(row([(o + 6, a[0]), (o + 7, a[1]), (o + 8, a[2]), (o + 9, -bi)]), 0.0)
        if j in fixed:
            eq(row([(o + 10, 1.0)]), 0.0)
        else:
            ineq(row([(o + 10, -1.0)]), 0.0)
    off = 11 * nf
    if bp.friction:
        held = set(np.flatnonzero(np.isin(robot.joint_frames, list(massless))).tolist())
        for k in range(n):
            for c in (0, 1, 2):
                if k in held:
                    eq(row([(off + 3 * k + c, 1.0)]), 0.0)
                elif c < 2:
                    ineq(row([(off + 3 * k + c, -1.0)]), 0.0)
        off += 3 * n
    for k in range(off, p - extra.size):
        ineq(row([(k, -1.0)]), 0.0)
    for k in np.flatnonzero(extra):
        ineq(row([(p - extra.size + int(k), -1.0)]), 0.0)
    if bounds.total_mass is not None:
        eq(row([(11 * j + 9, 1.0) for j in live]), bounds.total_mass)
    lmi = []
    for j in live:
        cols = np.arange(11 * j, 11 * j + 10)
        S = np.diag([1.0 / l_s[j]] * 3 + [1.0]) / np.sqrt(m_s[j])
        Bj = S @ _B @ S * D[cols][:, None, None]
        C = S @ np.einsum("k,kab->ab", prior[cols], _B) @ S
        lmi.append((cols, C, Bj))
    G = np.array(G).reshape(-1, p)
    E = np.array(E).reshape(-1, p)
    return Scaled(A=(A @ scipy.sparse.diags(D)).tocsr() / ynorm if scipy.sparse.issparse(A) else A * D / ynorm, z=(z - A @ prior) / ynorm, r0=r0 / ynorm, prior=prior, D=D, G=G,
                  h=np.array(h), E=E, e=np.array(e), lmi=tuple(lmi), lam=float(lam),
                  nonneg=np.array(nonneg, dtype=int), zero=np.array(zero, dtype=int))


def _column_norms(A) -> np.ndarray:
    if isinstance(A, np.ndarray):
        return np.linalg.norm(A, axis=0)
    return np.sqrt(np.asarray(A.multiply(A).sum(axis=0)).ravel())


def _gram(A) -> np.ndarray:
    """AᵀA as a dense array (A dense or sparse)."""
    G = A.T @ A
    return G if isinstance(G, np.ndarray) else G.toarray()


def objective(s: Scaled, u: np.ndarray) -> float:
    """(‖A u − z‖² + r₀²) + (λ / p) ‖u‖², the program's objective at u."""
    r = s.A @ u - s.z
    return float(r @ r + s.r0 ** 2 + s.lam / u.size * (u @ u))


def _hessian(s: Scaled) -> np.ndarray:
    return 2.0 * (_gram(s.A) + s.lam / s.D.size * np.eye(s.D.size))


def lower_bound(s: Scaled, nu: np.ndarray, eta: np.ndarray, Z) -> float:
    """The Lagrange dual function at the multipliers projected onto their cones (a valid lower bound of the
    optimum for any multipliers; −inf when λ = 0 makes the quadratic unbounded below along W's null space)."""
    nu = np.maximum(nu, 0.0)
    p = s.D.size
    w = np.zeros(p)
    const = float(s.z @ s.z + s.r0 ** 2) - float(nu @ s.h) - float(eta @ s.e)
    for (cols, C, Bj), Zj in zip(s.lmi, Z):
        lam, V = np.linalg.eigh(0.5 * (Zj + Zj.T))
        Zp = (V * np.maximum(lam, 0.0)) @ V.T
        w[cols] += np.einsum("kab,ab->k", Bj, Zp)
        const -= float(np.sum(Zp * C))
    q = -2.0 * s.A.T @ s.z + s.G.T @ nu + s.E.T @ eta - w
    H = _hessian(s)
    x, *_ = np.linalg.lstsq(H, q, rcond=None)
    if np.linalg.norm(H @ x - q) > 1e-9 * max(np.linalg.norm(q), 1e-300):
        return -np.inf
    return const - 0.5 * float(q @ x)


def prior_share(s: Scaled) -> np.ndarray:
    """(λ / p) (H⁻¹)_kk per standard parameter: 0 = determined by the data, 1 = by the prior."""
    p = s.D.size
    if s.lam <= 0:
        return np.zeros(p)
    H = _gram(s.A) + s.lam / p * np.eye(p)
    return np.clip(s.lam / p * np.diag(np.linalg.inv(H)), 0.0, 1.0)


def cross_validated_regularization(folds: np.ndarray, psi: np.ndarray, prior: np.ndarray, D: np.ndarray,
                                   grid=REGULARIZATION_GRID, free: int = 0) -> tuple[float, str]:
    """λ of the smallest held-out error on contiguous time blocks (docs/identification.md).

    ``folds`` (k, m + b + 1, m + b + 1): the Gram matrix of the weighted [E W_B y] of every block, E the ``free``
    = m columns fitted without constraint (none by default): each training fit minimises them out (the Schur
    complement of its Gram matrix) and the held-out error uses their least-squares values.  Returns (λ, the rule)."""
    k, m = folds.shape[0], free
    total = folds.sum(axis=0)
    p = prior.size
    M = psi * D  # K_B = Ψ (K₀ + D u)
    base0 = psi @ prior
    err = np.zeros(len(grid))
    for i in range(k):
        Gt = total - folds[i]
        Gee, Ger = Gt[:m, :m], Gt[:m, m:]
        S = Gt[m:, m:] - Ger.T @ np.linalg.lstsq(Gee, Ger, rcond=None)[0]  # [W y] with E minimised out
        b = S.shape[0] - 1
        Gww, Gwy, Gyy = S[:b, :b], S[:b, b], S[b, b]
        if Gyy <= 0:
            continue
        H = M.T @ Gww @ M / Gyy
        g = M.T @ (Gwy - Gww @ base0) / Gyy
        for c, lam in enumerate(grid):
            u = np.linalg.solve(H + lam / p * np.eye(p), g)
            kb = base0 + M @ u
            e = np.linalg.lstsq(Gee, Ger[:, b] - Ger[:, :b] @ kb, rcond=None)[0]
            v = np.concatenate([e, kb, [-1.0]])
            err[c] += float(v @ folds[i] @ v)
    return _chosen(err, grid, k)


def _chosen(err: np.ndarray, grid, k: int) -> tuple[float, str]:
    best = int(np.argmin(err))
    rule = (f"chosen by {k}-fold cross-validation on contiguous time blocks (held-out torque error of the fit "
            f"regularized towards the prior, {grid[0]:g} to {grid[-1]:g})")
    return float(grid[best]), rule


def _cvx_problem(s: Scaled):
    import cvxpy as cp

    p = s.D.size
    u = cp.Variable(p)
    # The norm (a second-order cone) rather than its square: the solver's tolerance then bounds the fit itself,
    # so the parameters come out to ~1e-8 instead of ~1e-4; the certificate uses the square (lower_bound).
    fit = cp.norm(cp.hstack([s.A @ u - s.z, np.sqrt(s.lam / p) * u, np.array([s.r0])]))
    cons = []
    ineq = eq = None
    if s.G.shape[0]:
        ineq = s.G @ u <= s.h
        cons.append(ineq)
    if s.E.shape[0]:
        eq = s.E @ u == s.e
        cons.append(eq)
    lmis = []
    for cols, C, Bj in s.lmi:
        X = C + cp.reshape(Bj.reshape(10, 16).T @ u[cols], (4, 4), order="C")
        lmis.append(0.5 * (X + X.T) >> 0)
    problem = cp.Problem(cp.Minimize(fit), cons + lmis)
    return problem, u, ineq, eq, lmis


def project(s: Scaled, u: np.ndarray, bounds: PhysicalBounds, nf: int) -> np.ndarray:
    """A feasible K near the solver's point: pseudo-inertias projected on the PSD cone, bounds clipped."""
    K = s.prior + s.D * u
    links = K[: 11 * nf].reshape(nf, 11).copy()
    links[:, :10] = nearest_consistent(links[:, :10])
    links[:, 9] = np.clip(links[:, 9], bounds.min_mass, bounds.max_mass)
    box = bounds.com_box
    for c in range(3):
        lo = np.where(np.isfinite(box[:, c, 0]), box[:, c, 0] * links[:, 9], -np.inf)
        hi = np.where(np.isfinite(box[:, c, 1]), box[:, c, 1] * links[:, 9], np.inf)
        links[:, 6 + c] = np.clip(links[:, 6 + c], lo, hi)
    for j, facets in enumerate(bounds.com_hull):
        if facets is not None:
            links[j, 6:9] = _into_hull(links[j, 6:9], links[j, 9], *facets)
    out = K.copy()
    out[: 11 * nf] = links.ravel()
    out[s.nonneg] = np.maximum(out[s.nonneg], 0.0)
    out[s.zero] = 0.0
    return out


def _into_hull(ms: np.ndarray, m: float, a: np.ndarray, b: np.ndarray, c0: np.ndarray) -> np.ndarray:
    """MS with a · MS ≤ b M on every facet: the solver's round-off outside the hull removed by moving the centre of
    mass towards c₀ (a point inside the hull) along their line, as far as the nearest facet."""
    if np.all(a @ ms <= b * m):
        return ms
    d = ms - c0 * m  # MS = M (c₀ + t (c − c₀)), t ∈ [0, 1]
    ad = a @ d
    room = b * m - a @ (c0 * m)
    t = np.min(np.where(ad > 0, room / np.where(ad > 0, ad, 1.0), 1.0), initial=1.0)
    return c0 * m + max(t, 0.0) * d


def pseudo_inertia(params) -> np.ndarray:
    """The 4 × 4 pseudo-inertia matrices P = [[½ tr(J) 1 − J, MS], [MSᵀ, M]] of links (..., 10) → (..., 4, 4).

    P is positive semi-definite exactly when the parameters belong to a rigid body (a mass distribution),
    which implies M ≥ 0, I_G ⪰ 0 and the triangle inequalities of the principal moments.
    """
    p = finite_array("params", params)
    XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M = np.moveaxis(p, -1, 0)
    J = np.stack([np.stack([XX, XY, XZ], -1), np.stack([XY, YY, YZ], -1), np.stack([XZ, YZ, ZZ], -1)], -2)
    tr = XX + YY + ZZ
    S = 0.5 * tr[..., None, None] * np.eye(3) - J
    MS = np.stack([MX, MY, MZ], -1)
    top = np.concatenate([S, MS[..., :, None]], -1)
    bottom = np.concatenate([MS, M[..., None]], -1)[..., None, :]
    return np.concatenate([top, bottom], -2)


def nearest_consistent(params: np.ndarray) -> np.ndarray:
    """Project each link's pseudo-inertia on the PSD cone (removes the solver's round-off, ~1e-9 of the largest
    eigenvalue) and return the parameters (nf, 10); a link with a negligible mass gets exactly zero M and MS."""
    P = pseudo_inertia(params)
    lam, V = np.linalg.eigh(P)
    P = (V * np.maximum(lam, 0.0)[..., None, :]) @ np.swapaxes(V, -1, -2)
    P = 0.5 * (P + np.swapaxes(P, -1, -2))
    out = np.empty_like(params)
    S = P[..., :3, :3]
    tr = np.trace(S, axis1=-2, axis2=-1)
    J = tr[..., None, None] * np.eye(3) - S
    out[:, 0], out[:, 1], out[:, 2] = J[:, 0, 0], J[:, 0, 1], J[:, 0, 2]
    out[:, 3], out[:, 4], out[:, 5] = J[:, 1, 1], J[:, 1, 2], J[:, 2, 2]
    out[:, 6:9] = P[:, :3, 3]
    out[:, 9] = P[:, 3, 3]
    tiny = out[:, 9] <= 1e-12 * max(out[:, 9].max(initial=0.0), 1e-300)
    out[tiny, 6:10] = 0.0
    return out


def violation(s: Scaled, u: np.ndarray) -> float:
    """The largest violation of the scaled constraints at u (0 when feasible)."""
    v = [0.0]
    if s.G.shape[0]:
        v.append(float(np.max(s.G @ u - s.h)))
    if s.E.shape[0]:
        v.append(float(np.max(np.abs(s.E @ u - s.e))))
    for cols, C, Bj in s.lmi:
        v.append(float(-np.linalg.eigvalsh(C + np.einsum("k,kab->ab", u[cols], Bj)).min()))
    return max(v)


#: Conic solver settings of ``method="physical"``: Clarabel (interior point, converges to the tolerance in a few
#: tens of iterations) at 1e-10, below which its own check flags round-off as "inaccurate"; SCS (first-order)
#: only when Clarabel is not installed.
SOLVERS = (("CLARABEL", {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "max_iter": 500}),
           ("SCS", {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200000}))
#: Solver attempts: Clarabel at tight tolerances, then at its defaults with more iterations.
ATTEMPTS = (SOLVERS[0][1], {"max_iter": 2000})


def solved(problem, solver: str, options: dict) -> str:
    """Solve the cvxpy ``problem`` with ``solver`` and its ``options``, the warnings caught to be reported on the
    result rather than printed: they are returned as one line (a solver that stops raises cvxpy's SolverError)."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        problem.solve(solver=solver, **options)
    return "; ".join(str(w.message) for w in caught)


def solve(s: Scaled, bounds: PhysicalBounds, nf: int):
    """Solve the scaled program, check its certificate, retry when it does not hold (docs/identification.md).

    Returns (K (p,) feasible, report: solver, status, iterations, constraint_violation (of the solver's point),
    objective (at the returned K), lower_bound, relative_gap, accuracy (a sentence), warnings), or None when the
    solver returned no point."""
    import cvxpy as cp

    installed = cp.installed_solvers()
    best = None
    for attempt, options in enumerate(ATTEMPTS):
        problem, u, ineq, eq, lmis = _cvx_problem(s)
        name = "CLARABEL" if "CLARABEL" in installed else "SCS"
        try:
            warned = solved(problem, name, options if name == "CLARABEL" else dict(SOLVERS)["SCS"])
        except cp.error.SolverError:
            continue
        if u.value is None:
            continue
        uv = np.asarray(u.value, dtype=float)
        viol = violation(s, uv)
        K = project(s, uv, bounds, nf)
        up = (K - s.prior) / s.D
        f = objective(s, up)
        # multipliers of the norm's program, times 2 ‖·‖ at the solution: those of the squared objective
        mult = 2.0 * np.sqrt(objective(s, uv))
        nu = np.zeros(s.G.shape[0]) if ineq is None or ineq.dual_value is None else mult * np.asarray(ineq.dual_value)
        eta = np.zeros(s.E.shape[0]) if eq is None or eq.dual_value is None else mult * np.asarray(eq.dual_value)
        Z = [np.zeros((4, 4)) if c.dual_value is None else mult * np.asarray(c.dual_value) for c in lmis]
        lb = lower_bound(s, nu.ravel(), eta.ravel(), Z)
        gap = (f - lb) / max(f, 1e-300) if np.isfinite(lb) else np.inf
        fit_gap = float(np.sqrt(f) - np.sqrt(max(lb, 0.0))) if np.isfinite(lb) else np.inf
        report = {"name": name, "status": problem.status, "iterations": int(problem.solver_stats.num_iters or 0),
                  "constraint_violation": viol, "objective": f, "lower_bound": lb, "relative_gap": max(gap, 0.0),
                  "fit_gap": max(fit_gap, 0.0), "attempts": attempt + 1, "warnings": warned}
        if best is None or gap < best[1]["relative_gap"]:
            best = (K, report)
        if gap <= TIGHT_GAP or fit_gap <= FIT_GAP or (s.lam <= 0 and problem.status == "optimal"):
            break
    if best is None:
        return None
    K, report = best
    gap, fit_gap = report["relative_gap"], report["fit_gap"]
    if fit_gap <= FIT_GAP and gap > TIGHT_GAP:
        report["accuracy"] = (f"fit within {fit_gap:.1e} of the optimum's (the residual relative to the torques, "
                              f"duality gap of the returned feasible point; near-exact torques: objective "
                              f"{report['objective']:.1e})")
    elif np.isfinite(gap):
        report["accuracy"] = (f"objective within {gap:.1e} (relative) of the optimum (duality gap of the returned "
                              f"feasible point)")
    else:
        report["accuracy"] = ("no certificate without regularization (the objective is flat along the parameters "
                              "the data do not determine); the solver reports " + report["status"])
    report["certified"] = bool(gap <= LOOSE_GAP or fit_gap <= FIT_GAP
                               or (s.lam <= 0 and report["status"] == "optimal"))
    return K, report
