"""The frictional contact problem of one time step (:mod:`robodyn.simulation.contact`) solved for the impulses λ,
and the derivative of λ where the contacts' modes make it smooth (docs/simulation-control.md §5: projected
Gauss–Seidel, Alart and Curnier's Newton, the search over modes from De Saxcé's fixed point or, for pyramids,
Stewart and Trinkle's LCP).  Shapes: the Delassus matrix W (..., 3k, 3k), b = J v_free and λ (..., k, 3) in each
contact's axes [t₁, t₂, n], the gap rates φ/h (..., k) (m/s).
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy import sparse
from scipy.linalg import block_diag

from robodyn.errors import RobodynError

_SWEEPS = 100   # the most sweeps of a round before the Newton steps
_PATTERNS = 243     # the most patterns of contact modes tried by _by_modes (every one of up to 5 contacts)
_MODE_STEPS = 16    # Newton steps on one pattern
_FACET_PATTERNS = 4000  # the most patterns of a pyramid's contact modes tried by _by_facets
_ROUNDS = 3         # rounds of De Saxcé's fixed point that start the second search
_PIVOTS = 100       # the most pivots of Lemke's method per contact


class ContactSolverError(RobodynError, RuntimeError):
    """:func:`robodyn.simulation.contact_step` did not solve the contact problem within ``max_iter`` Gauss–Seidel
    sweeps and Newton steps, and its sweeps never stalled."""


def _projections(Wr, lam, u, bias, mu, c, tiny):
    """The normal step of contact c (complementarity) and the step length of its tangential one: returns λ_n, w
    (the largest eigenvalue of the contact's 2 × 2 tangential block of W), w_n and max(w, tiny)."""
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
        _, w, wn, ws = _projections(Wr, lam, u, bias, mu, c, tiny)
        rn = np.where(wn > 0, np.abs(np.minimum(lam[..., c, 2] * wn, u[..., c, 2] + bias[..., c])), 0.0)
        lt = _disc(lam[..., c, :2] - u[..., c, :2] / ws[..., None], mu * lam[..., c, 2], w, tiny, facets)
        r = np.maximum(r, np.maximum(rn, w * np.abs(lam[..., c, :2] - lt).max(-1)))
    return r


def _sweep(Wr, lam, u, bias, mu, tiny, facets=0):
    """One projected Gauss–Seidel sweep over the contacts (Jean and Moreau): each normal impulse by a
    complementarity step, then the tangential one projected on the disc of radius μ λ_n (or the polygon) with the
    step 1/w, w the largest eigenvalue of the contact's 2 × 2 tangential block of W, so that a sliding impulse
    opposes the slip.  New (λ, u), the arguments unchanged."""
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


def _gap_shifted(b, bias):
    """b + φ/h e_n (k, 3) of one sample: each contact's gap rate φ/h added to its normal velocity."""
    return b + np.concatenate([np.zeros((b.shape[0], 2)), bias[:, None]], -1)


def _measured(W, lam, b, bias, mu, tiny, facets=0):
    """u = W λ + b (k, 3) of one sample and the residual of :func:`_residual` at λ."""
    k = b.shape[0]
    u = _velocities(W, lam, b)
    return u, float(_residual(W.reshape(k, 3, k, 3), lam, u, bias, mu, tiny, facets))


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
    u = _velocities(W, lam, b)
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


def _pressing(lam, tiny):
    """The contacts (k,) whose normal impulse λ_n is above 1e-12 of the largest: the closed ones of a first guess
    of the modes."""
    return lam[:, 2] > 1e-12 * max(float(np.abs(lam[:, 2]).max()), tiny)


def _circle_modes(lam, mu, closed, margin):
    """The mode of each contact's impulse λ_c (k, 3) in the circular cone: open where not ``closed`` (k,), else
    sliding where λ_t is on the edge of its disc (‖λ_t‖ ≥ (1 − ``margin``) μ λ_n) or μ = 0, else sticking."""
    edge = np.linalg.norm(lam[:, :2], axis=-1) >= (1 - margin) * mu * lam[:, 2]
    return np.where(closed, np.where(edge | (mu == 0), SLIDE, STICK), OPEN)


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
    u, least = _measured(W, lam, b, bias, mu, tiny)
    best, size, steps = lam, max(float(np.abs(lam[:, 2]).max()), tiny), 0
    scale = max(float(np.abs(b).max()), float(np.abs(bias).max()))
    guess = _circle_modes(lam, mu, _pressing(lam, tiny), 1e-6)
    patterns = _patterns(guess, (OPEN, SLIDE) if mu == 0 else (OPEN, STICK, SLIDE))
    for modes, slip in itertools.product(itertools.islice(patterns, _PATTERNS), (False, True)):
        x, last = _mode_start(lam, u, modes, mu, size, slip), np.inf
        for _ in range(_MODE_STEPS):
            F, J, trial = _mode_equations(x, modes, W, b, bias, mu)
            change = float(np.abs(F).max(initial=0.0))
            if not np.isfinite(change) or (change >= last and change <= target):    # diverged, or at rounding
                break
            if change <= 1e-6 * scale:                 # near a root: is it a solution?
                _, r = _measured(W, trial, b, bias, mu, tiny)
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


def _facet_blocks(mu, facets):
    """The blocks (E, S) of :func:`_facet_mode` of every mode of a pyramid of ``facets`` sides, indexed by mode:
    open, sticking, sliding on each facet, sliding at each vertex."""
    return [_facet_mode(m, mu, facets) for m in range(2 + 2 * facets)]


def _facet_modes(lam, mu, facets, closed, margin):
    """The pyramid mode (:func:`_facet_mode`) of each contact's impulse λ_c (k, 3): open where not ``closed``
    (k,), else sliding on facet j where it alone is active (n_jᵀλ_t ≥ (1 − ``margin``) μ λ_n), at the vertex
    between two active neighbours, else sticking; and the active facets (k, facets)."""
    n, _, _ = _polygon(facets)
    active = (lam[:, :2] @ n.T) >= (1 - margin) * mu * lam[:, 2:]
    modes = []
    for c in range(len(lam)):
        j = np.flatnonzero(active[c])
        if not closed[c]:
            modes.append(OPEN)
        elif j.size == 1:
            modes.append(2 + int(j[0]))
        elif j.size == 2 and j[1] - j[0] == 1:
            modes.append(2 + facets + int(j[0]))
        elif j.size == 2 and j[0] == 0 and j[1] == facets - 1:     # the vertex between the last facet and the first
            modes.append(2 + facets + int(j[1]))
        else:
            modes.append(STICK)
    return modes, active


def _facet_system(modes, blocks):
    """λ = E x and the conditions S (u + φ/h e_n) = 0 (E (3k, m), S (m, 3k)) of a pattern of pyramid modes, from
    the blocks of :func:`_facet_mode` of every mode."""
    E, S = zip(*(blocks[m] for m in modes))
    return block_diag(*E), block_diag(*S)


def _by_facets(W, b, bias, mu, lam, target, budget, tiny, facets):
    """The contact problem of one sample with pyramids of ``facets`` sides, solved mode by mode
    (:func:`_facet_mode`): each pattern of modes is a square linear system in its unknowns, solved by least
    squares (nearest to λ where the pattern's solutions are not unique); the patterns nearest to the modes of λ
    first, until the residual of :func:`_residual` (the judge, whatever the modes) is below ``target`` or
    ``budget`` patterns are spent.  The best λ, its residual and the patterns tried."""
    k = b.shape[0]
    rhs = _gap_shifted(b, bias)
    u, least = _measured(W, lam, b, bias, mu, tiny, facets)
    best, tried = lam, 0
    n, _, _ = _polygon(facets)
    slip = np.linalg.norm(u[:, :2], axis=-1)
    by_force, _ = _facet_modes(lam, mu, facets, _pressing(lam, tiny), 1e-9)
    by_slip = []                                    # the modes the slips ask for
    for c in range(k):
        closed = u[c, 2] + bias[c] <= 1e-9 * max(float(np.abs(u).max()), tiny)
        by_slip.append(OPEN if not closed else STICK if slip[c] <= 1e-3 * max(float(slip.max()), tiny)
                       else 2 + int(np.argmax(-n @ u[c, :2])))
    blocks = _facet_blocks(mu, facets)
    kinds = range(len(blocks))
    for modes in _interleave(_patterns(tuple(by_force), kinds), _patterns(tuple(by_slip), kinds)):
        if least <= target or tried >= min(budget, _FACET_PATTERNS):
            break
        tried += 1
        Eb, Sb = _facet_system(modes, blocks)
        if not Eb.size:
            continue
        # on a redundant set the pattern's solutions are an affine family: take the one nearest the start
        x0 = np.linalg.lstsq(Eb, lam.reshape(-1), rcond=None)[0]
        A = Sb @ W @ Eb
        x = x0 + np.linalg.lstsq(A, -Sb @ rhs.reshape(-1) - A @ x0, rcond=None)[0]
        trial = (Eb @ x).reshape(k, 3)
        _, r = _measured(W, trial, b, bias, mu, tiny, facets)
        if r < least:
            best, least = trial, r
    return best, least, tried


def _lemke(M, q, pivots):
    """z ≥ 0 with w = M z + q ≥ 0 and wᵀz = 0 by Lemke's complementary pivoting (covering vector 1, the
    lexicographic ratio test against cycling on degenerate bases), or None where it ends on a ray or within
    ``pivots`` pivots.  Stewart and Trinkle's LCP of a pyramid (copositive-plus) is solved by it."""
    m = q.size
    if np.all(q >= 0):
        return np.zeros(m)
    T = np.hstack([np.eye(m), -M, -np.ones((m, 1)), q[:, None]])   # w − M z − z_0 1 = q
    basis = np.arange(m)
    row = int(np.argmin(q))
    entering = 2 * m                                # z_0
    scale = max(float(np.abs(M).max()), 1.0)
    for _ in range(pivots):
        T[row] /= T[row, entering]
        others = np.arange(m) != row
        T[others] -= T[others, entering][:, None] * T[row]
        leaving, basis[row] = basis[row], entering
        if leaving == 2 * m:
            break
        entering = leaving + m if leaving < m else leaving - m      # the complement of the one that left
        column = T[:, entering]
        rows = np.flatnonzero(column > 1e-12 * scale)
        if not rows.size:
            return None
        keys = np.hstack([T[rows, -1:], T[rows, :m]]) / column[rows, None]  # lexicographic: (q, B⁻¹) / column
        order = np.lexsort(keys.T[::-1])
        row = int(rows[order[0]])
    else:
        return None
    x = np.zeros(2 * m + 1)
    x[basis] = T[:, -1]
    z = np.maximum(x[m:2 * m], 0.0)
    w = M @ z + q
    size = 1e-9 * max(float(np.abs(q).max()), float(np.abs(M).max() * z.max()))
    if w.min() < -size or np.abs(w * z).max() > size * max(float(z.max()), 1.0):
        return None                                 # the pivots lost the solution to rounding
    return z


def _stewart_trinkle(W, b, bias, mu, facets, pivots):
    """Impulses λ (k, 3) of one sample with pyramids, by Lemke's method on Stewart and Trinkle's LCP ("An
    implicit time-stepping scheme for rigid body dynamics with inelastic collisions and Coulomb friction", 1996):
    λ_t = μ-free vertices V β of the polygon (β ≥ 0), with

        0 ≤ λ_n ⟂ u_n + φ/h ≥ 0,   0 ≤ β ⟂ Vᵀ u_t + σ 1 ≥ 0,   0 ≤ σ ⟂ μ λ_n − 1ᵀβ ≥ 0

    (σ the sliding speed: the polygon is conv{0, μ λ_n v_j}, and maximal dissipation puts λ_t on the vertices'
    face facing the slip).  None where Lemke's method fails (rounding on a degenerate, redundant set)."""
    k = b.shape[0]
    n, e, half = _polygon(facets)
    V = (n + half * e).T                            # (2, facets): the vertices at μ λ_n = 1
    size = 2 + facets                               # per contact: λ_n, β (facets), σ
    Ec = np.zeros((3, size))                        # λ_c = E_c [λ_n, β, σ]
    Ec[2, 0], Ec[:2, 1:1 + facets] = 1.0, V
    Fc = np.zeros((size, size))
    Fc[1:1 + facets, 1 + facets] = 1.0             # + σ 1
    Fc[1 + facets, 0], Fc[1 + facets, 1:1 + facets] = mu, -1.0     # μ λ_n − 1ᵀβ
    E, friction = block_diag(*[Ec] * k), block_diag(*[Fc] * k)
    S = E.T.copy()                                  # the rows u_n and Vᵀ u_t of the conditions
    q = S @ _gap_shifted(b, bias).reshape(-1)
    # on a redundant set (W singular) rounding can end the pivots on a ray: then W + ε tr(W) I, its solution the
    # start of the search over modes (which solves the exact problem)
    for shift in (0.0, 1e-14, 1e-12):
        z = _lemke(S @ (W + shift * np.trace(W) * np.eye(3 * k)) @ E + friction, q, pivots)
        if z is not None:
            return (E @ z).reshape(k, 3)
    return None


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
    T = block_diag(*rows)
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    scale = max(float(np.abs(b).max()), float(np.abs(bias).max()), np.finfo(float).tiny)
    shift, lam = np.zeros(k), np.zeros((k, 3))
    for _ in range(rounds):
        q = _gap_shifted(b, bias + shift).reshape(-1) / scale
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


def solve_impulses(W, b, bias, mu, tol, max_iter, facets=0):
    """Impulses λ (..., k, 3) in local axes solving the contact problem (:mod:`robodyn.simulation.contact`), the
    iterations done (sweeps and Newton steps) and the residual (..., ) of :func:`_residual`; ``b`` = J v_free
    (..., k, 3), ``bias`` = φ/h (..., k).

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

    def reach(u):
        """The velocities the residual is relative to: those the step must undo, or |u| where larger."""
        return np.maximum(speed, np.abs(u).max(axis=(-2, -1)))

    def keep(lam):
        """The velocities and residual of λ; the best λ so far kept, and the samples solved marked done."""
        nonlocal best, least, todo
        u = _velocities(W, lam, b)
        residual = _residual(Wr, lam, u, bias, mu, tiny, facets)
        better = todo & (residual < least)
        best, least = np.where(better[..., None, None], lam, best), np.where(better, residual, least)
        todo &= residual > tol * reach(u)
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
    target = tol * reach(_velocities(W, best, b))
    best, least = best.copy(), np.array(least, dtype=float)
    search = _by_facets if facets else _by_modes
    starts = ("Lemke",) * bool(facets) + ("best", "best", "De Saxcé", "best")
    for i in np.ndindex(batch):                     # the samples left: contact modes, one sample at a time
        for start in starts:                        # the best impulses so far, De Saxcé's fixed point, or with
            if least[i] <= target[i] or done >= max_iter:   # a pyramid first Stewart and Trinkle's LCP
                break
            if start == "Lemke":
                lam_i = _stewart_trinkle(W[i], b[i], bias[i], mu, facets, _PIVOTS * b.shape[-2])
                if lam_i is None:
                    continue
            else:
                lam_i = best[i] if start == "best" else _de_saxce(W[i], b[i], bias[i], mu, facets, _ROUNDS)
            lam_i, least_i, steps = search(W[i], b[i], bias[i], mu, lam_i, float(target[i]), max_iter, tiny, facets)
            done += steps
            if least_i < least[i]:
                best[i], least[i] = lam_i, least_i
    lam, u = best, _velocities(W, best, b)
    residual = least
    moving = ~still & (residual > tol * reach(u))
    lam, u, _, moving, sweeps = _sweeps(Wr, lam, u, bias, mu, moving, max_iter - done, tol * speed, tol, tiny,
                                        facets)
    done += sweeps                                  # sweeps alone, as far as they go, where they never stalled
    still |= ~moving
    todo = np.ones(batch, bool)
    keep(lam)
    u, residual = _velocities(W, best, b), least
    scale = reach(u)
    failed = (residual > tol * scale) & ~still
    if failed.any():
        worst = float(np.max(np.where(failed, residual / np.maximum(scale, tiny), 0.0)))
        raise ContactSolverError(f"contact_step: the contact impulses did not converge in {max_iter} Gauss–Seidel "
                                 f"sweeps and Newton steps (relative residual {worst:.3g} > tol = {tol:g}); raise "
                                 "max_iter, loosen tol or shorten dt")
    return best, done, residual


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


def _at_solution(W, b, lam, scale):
    """The contact velocities u = W λ + b (k, 3) of one sample at its solution λ, and the size of its impulses that
    the margins of :func:`impulse_derivative` are relative to: the largest λ_n, or the impulse W_ii⁻¹ ``scale``
    where that is larger."""
    tiny = np.finfo(float).tiny
    size = max(float(np.abs(lam[:, 2]).max(initial=0.0)), scale / max(float(W.diagonal().max()), tiny), tiny)
    return _velocities(W, lam, b), size


def impulse_derivative(W, b, bias, mu, lam, MJ, scale):
    """∂λ/∂b (3k, 3k) of one sample at its solution λ, by the implicit function theorem on the conditions of its
    contact modes (:func:`_mode_equations`), and whether v⁺ is differentiable there: every contact strictly in its
    mode (margins 1e-8 of ``scale`` for velocities, of the largest λ_n or the impulse W_ii⁻¹ ``scale`` for
    impulses) and the modes' solutions
    near λ (the null space of ∂F/∂x) all giving the same v⁺ (``MJ`` = M⁻¹Jᵀ): not so where sliding contacts
    share a redundant set (a box sliding flat on four corners: how its weight splits between them is not
    determined, and with it neither is the friction's moment)."""
    k = b.shape[0]
    u, size = _at_solution(W, b, lam, scale)
    slip = np.linalg.norm(u[:, :2], axis=-1)
    closed = lam[:, 2] > 1e-8 * size
    modes = _circle_modes(lam, mu, closed, 1e-8)
    strict = np.where(~closed, u[:, 2] + bias > 1e-8 * scale,
                      np.where(modes == STICK, slip <= 1e-8 * scale, (slip > 1e-8 * scale) | (mu == 0)))
    x = _mode_start(lam, u, modes, mu, size, False)
    if not x.size:
        return np.zeros((3 * k, 3 * k)), bool(strict.all())
    _, Jx, _ = _mode_equations(x, modes, W, b, bias, mu)
    _, dlam = _mode_impulses(x, modes, mu)
    dlam, unique = _implicit(Jx, dlam.reshape(3 * k, -1), _mode_rows(x, modes, mu, k), MJ)
    return dlam, bool(strict.all() and unique)


def _implicit(Jx, dlam, D, MJ):
    """∂λ/∂b = −(∂λ/∂x) (∂F/∂x)⁺ D of the modes' conditions F(x, b) = D (W λ(x) + b + φ/h e_n) = 0, and whether
    the modes' solutions near λ (the null space of ∂F/∂x) all give the same v⁺ (``MJ`` = M⁻¹Jᵀ)."""
    _, s, Vt = np.linalg.svd(Jx)
    free = MJ @ dlam @ Vt[s <= 1e-10 * s[0]].T        # v⁺ along the modes' solutions through λ: zero if unique
    unique = np.abs(free).max(initial=0.0) <= 1e-8 * max(float(np.abs(MJ @ dlam).max()), np.finfo(float).tiny)
    return -dlam @ np.linalg.pinv(Jx) @ D, unique


def facet_derivative(W, b, bias, mu, lam, MJ, scale, facets):
    """∂λ/∂b (3k, 3k) of one sample at its solution λ with pyramids of ``facets`` sides (μ > 0), by the implicit
    function theorem on the linear conditions of its modes (:func:`_facet_mode`), and whether v⁺ is
    differentiable there: every contact strictly in its mode (margins as :func:`impulse_derivative`): open with
    u_n + φ/h > 0; sticking with every facet inactive, n_jᵀλ_t < μ λ_n; on facet j alone (no vertex) sliding
    along −n_j; at a vertex sliding strictly inside its normal cone (−u_t = α n_j + β n_{j+1}, α, β > 0); and
    the modes' solutions near λ all giving the same v⁺.  Where the active facets change, it is not."""
    k = b.shape[0]
    u, size = _at_solution(W, b, lam, scale)
    n, _, _ = _polygon(facets)
    modes, active = _facet_modes(lam, mu, facets, lam[:, 2] > 1e-8 * size, 1e-8)
    strict = []
    for c, mode in enumerate(modes):
        if mode == OPEN:
            strict.append(u[c, 2] + bias[c] > 1e-8 * scale)
        elif mode == STICK:                         # not strict where facets are active (no mode fits them)
            strict.append(not active[c].any() and np.abs(u[c, :2]).max() <= 1e-8 * scale)
        elif mode < 2 + facets:                     # sliding along −n_j: the slip against the facet's normal
            strict.append((-n @ u[c, :2])[mode - 2] > 1e-8 * scale)
        else:                                       # the vertex between facets first, first + 1
            first = mode - 2 - facets
            pair = np.stack([n[first], n[(first + 1) % facets]], -1)
            strict.append(bool(np.all(np.linalg.solve(pair, -u[c, :2]) > 1e-8 * scale)))
    Eb, Sb = _facet_system(modes, _facet_blocks(mu, facets))
    if not Eb.size:
        return np.zeros((3 * k, 3 * k)), bool(all(strict))
    dlam, unique = _implicit(Sb @ W @ Eb, Eb, Sb, MJ)
    return dlam, bool(all(strict) and unique)
