"""A fleet of robots of one model identified together (``per_robot``; docs/scaling.md): shared inertial
parameters and position terms, each robot's own friction and/or offsets (``Fc3[r]``); least squares of the
block-angular problem (Björck 1996, §6.3), or one robot's physically consistent program with the factors stacked.
"""

from __future__ import annotations

import re
import warnings
from operator import itemgetter
from types import MappingProxyType

import numpy as np
import scipy.linalg

from robodyn.errors import InputError
from robodyn.identification import consistent
from robodyn.identification.factors import (IdentificationError, check_rank, joint_residuals, noise_floor,
                                            solve_factor, stack_factors)
from robodyn.identification.physical import solve_regularized, standard_to_base
from robodyn.identification.position import auto_terms, position_names, term_columns
from robodyn.identification.reduction import Samples, dask_modules, factor, gram, qr_stack, robot_names
from robodyn.identification.results import Identification
from robodyn.identification.solvers import check_counts, fit_failure, gautier_weights, irls, joint_weights
from robodyn.model.robot import Robot


#: ``per_robot`` options → the base parameters each makes per robot.
_PER_ROBOT = MappingProxyType({"friction": re.compile(r"^F[cv]\d+$"), "offsets": re.compile(r"^Foff\d+$")})


def per_robot_option(per_robot) -> tuple:
    """``per_robot`` checked: () or a tuple of distinct keys of ``_PER_ROBOT``."""
    items = () if per_robot is None else (per_robot,) if isinstance(per_robot, str) else per_robot
    items = tuple(items) if isinstance(items, (tuple, list)) else (items,)
    if (per_robot is not None and not items) or any(not isinstance(x, str) or x not in _PER_ROBOT for x in items):
        raise InputError(f"per_robot = {per_robot!r}; give None or a tuple of 'friction' (Fc, Fv of every joint) "
                         "and 'offsets' (Foff of every joint)")
    return tuple(dict.fromkeys(items))


def _fleet_fit(Rs, own, shared, names, robots, weights, tol: float, hold: bool = False):
    """Least squares of the block-angular fleet problem from each robot's per-joint factors (Björck 1996, §6.3).

    Robot r's rows of [W_f,r  W_s  y] (its own columns first) are reduced to one triangular factor
    [[T_ff  T_fs  z_f], [0  S_r  z_r]]; the S_r blocks of all robots are stacked and factored into the shared
    problem, solved for θ_s; then θ_f,r = T_ff⁻¹ (z_f − T_fs θ_s). (Wᵀ W)⁻¹ follows from the same blocks:
    C_ss = (Sᵀ S)⁻¹, C_fs,r = −H_r C_ss, C_ff,rr' = δ_rr' T_ff⁻¹ T_ff⁻ᵀ + H_r C_ss H_r'ᵀ with H_r = T_ff⁻¹ T_fs.

    Parameters
    ----------
    Rs : list of (n, m, m) — each robot's per-joint factors of [W_j y_j] (m = b + 1, base column order).
    own, shared : int arrays (k,), (b_s,) — the base columns that are per robot and shared.
    names, robots : base parameter names, robot names (for errors).
    weights : (n,) or None — per-joint weights.
    tol : float — rank tolerance (0: no test).
    hold : bool — a robot's own parameters that its data do not excite are left out of the solve (θ 0 and
        (Wᵀ W)⁻¹ NaN there: "physical" holds them at the model's values) instead of stopping.

    Returns
    -------
    θ (P,), (Wᵀ W)⁻¹ (P, P), ‖y − W θ‖, the triangular factor of the columns solved for (its singular values are
    W's there), and the indices (into P) of the parameters left out; the order is the b_s shared parameters, then
    the k of each robot.
    """
    k, bs, R = len(own), len(shared), len(Rs)
    b = k + bs
    order = np.concatenate([own, shared, [b]])
    P = bs + R * k
    tops, lowers, kept, left = [], [], [], []
    for r, Rr in enumerate(Rs):
        T = stack_factors(Rr[:, :, order], weights)
        cn = np.linalg.norm(T[:, :k], axis=0)
        top = np.linalg.norm(T[:, :b], axis=0).max(initial=0.0)
        bad = np.flatnonzero((cn <= tol * top) | (np.abs(np.diag(T[:k, :k])) <= tol * cn))
        if bad.size and not hold:
            unexcited = ", ".join(f"{names[own[i]]}[{robots[r]}]" for i in bad)
            raise IdentificationError(
                f"the data of robot '{robots[r]}' do not excite {unexcited} "
                "(their regressor columns are zero or combinations of the others: a joint that does not move); "
                "give that robot an exciting trajectory, identify its friction with the fleet (per_robot=None), "
                "or identify with method='physical', which holds them at the model's values")
        keep = np.setdiff1d(np.arange(k), bad)
        if bad.size:  # the factor of the excited columns only
            T = stack_factors(Rr[:, :, np.concatenate([own[keep], shared, [b]])], weights)
        kept.append(keep)
        left.append(bs + r * k + bad)
        tops.append(T[:keep.size])
        lowers.append(T[keep.size:, keep.size:])
    Rg = qr_stack([np.concatenate(lowers)[None]], bs + 1)[0]
    check_rank(Rg, [names[i] for i in shared], tol, zero=tol)
    theta_s, Cs, rnorm = solve_factor(Rg, bs)
    theta = np.empty(P)
    theta[:bs] = theta_s
    L = np.zeros((P, bs))
    L[:bs] = np.eye(bs)
    D = np.zeros((P, P))
    F = np.zeros((P, P))
    F[R * k:, :bs] = Rg[:bs, :bs]
    for r, (T, keep) in enumerate(zip(tops, kept)):
        kr, cols, rows = keep.size, bs + r * k + keep, r * k + np.arange(keep.size)
        Tinv = scipy.linalg.solve_triangular(T[:, :kr], np.eye(kr))
        H = Tinv @ T[:, kr:kr + bs]
        theta[cols] = Tinv @ T[:, -1] - H @ theta_s
        L[cols] = -H
        D[np.ix_(cols, cols)] = Tinv @ Tinv.T
        F[np.ix_(rows, cols)] = T[:, :kr]
        F[rows, :bs] = T[:, kr:kr + bs]
    held = np.concatenate(left)
    C = L @ Cs @ L.T + D
    theta[held], C[held], C[:, held] = 0.0, np.nan, np.nan
    solved = np.setdiff1d(np.arange(P), held)
    rows = np.concatenate([r * k + np.arange(keep.size) for r, keep in enumerate(kept)] + [np.arange(R * k, P)])
    return theta, C, rnorm, F[np.ix_(rows, solved)], held


def _per_robot_thetas(theta: np.ndarray, own, shared, R: int) -> np.ndarray:
    """(R, b): each robot's base-parameter vector (shared values and its own) from the fleet's θ (P,)."""
    bs, k = len(shared), len(own)
    out = np.empty((R, k + bs))
    out[:, shared] = theta[:bs]
    out[:, own] = theta[bs:].reshape(R, k)
    return out


def _fleet_residuals(Rs, thetas) -> np.ndarray:
    """‖y_j − W_j θ‖ of every joint (n,), over the whole fleet."""
    return np.sqrt(sum(joint_residuals(Rr, th) ** 2 for Rr, th in zip(Rs, thetas)))


def fleet_labels(samples: Samples, arrays, chunk: int):
    """The (N,) robot indices as a dask array, and the checked robot names."""
    _, da = dask_modules()
    robots = robot_names(samples.robots, "Samples.robots")
    if not robots or samples.robot is None:
        raise InputError("per_robot: the Samples name no robots; read them with read_samples(..., robots=...) or "
                         "give Samples(q, qd, qdd, tau, robot=indices, robots=names)")
    labels = samples.robot
    if not isinstance(labels, da.Array):
        labels = np.asarray(labels)
        if labels.dtype.kind not in "iu":
            raise InputError(f"Samples.robot has dtype {labels.dtype}; give integer indices into Samples.robots")
        labels = da.from_array(labels.astype(np.int64), chunks=(chunk,))
    N = arrays[0].shape[0]
    if labels.ndim != 1 or not (np.isnan(N) or np.isnan(labels.shape[0]) or labels.shape[0] == N):
        raise InputError(f"Samples.robot has shape {labels.shape}; give one robot index per sample ({N},)")
    return labels, robots


def identify_fleet(robot: Robot, bp, source, method: str, o: dict, terms, options) -> Identification:
    """:func:`robodyn.identify` of a fleet (``per_robot``): shared inertia and position terms, each robot's friction/offsets.

    Each robot's rows are reduced to its own per-joint factors of [E W y] (merged per robot in the same tree);
    "auto" selects the position terms from the fleet's problem with each robot's own columns eliminated
    (:func:`_shared_gram`), where they are shared columns as the inertial parameters; "physical" fits the
    consistent fleet on the torques less the least-squares position terms."""
    if o["transmission"] is not None:
        raise InputError("transmission: a fleet (per_robot) is identified without motor parameters; give "
                         "transmission=None or identify each robot on its own")
    names = tuple(bp.names)
    b, n, red = bp.count, robot.n, o["reduction"]
    left = np.flatnonzero((joint_weights(o["weights"], n) == 0) | source.constant)
    if left.size:
        raise InputError(f"per_robot: a fleet's fit uses every joint's equations; joint(s) "
                         f"{', '.join(str(j + 1) for j in left)} have weight 0 or a torque that holds one value in "
                         "every sample (no torque measured): identify the fleet as one robot (per_robot=None), which "
                         "leaves them out")
    own = np.array([i for i, nm in enumerate(names) if any(_PER_ROBOT[x].match(nm) for x in options)], dtype=int)
    if not own.size:
        raise InputError(f"per_robot = {options}: the base parameters hold none of them (they are grouped with "
                         "others); identify the fleet as one robot (per_robot=None)")
    shared = np.array([i for i in range(b) if i not in set(own.tolist())], dtype=int)
    robots = source.robots
    R, k = len(robots), own.size
    cand = tuple(range(n)) if terms == "auto" else terms
    parts = source.reduce(cand, red, folds=consistent.FOLDS if method == "physical" and o["regularization"] is None
                          else 0)
    stray = sorted(set(parts) - set(range(R)))
    if stray:
        raise InputError(f"Samples.robot holds the indices {stray[:5]} outside 0…{R - 1}; give indices into "
                         f"Samples.robots ({R} names)")
    empty = [robots[r] for r in range(R) if r not in parts]
    if empty:
        raise IdentificationError(f"robot(s) {', '.join(repr(x) for x in empty)} have no samples; give their data "
                                  "or leave them out of the fleet")
    N = int(sum(parts[r][1] for r in range(R)))
    counts = np.sum([parts[r][2] for r in range(R)], axis=0)
    clipped = np.sum([parts[r][3] for r in range(R)], axis=0)
    shares = None
    if terms == "auto":  # from the fleet's problem on the shared columns: each robot's own ones projected out
        G = _shared_gram([gram(parts[r][0], red) for r in range(R)], own + 2 * n)
        shares, terms = auto_terms(robot, G, factor(np.stack([G, 0 * G]), "gram",
                                                    term_columns(cand, len(shared), ()))[0], len(shared))
    t = 2 * len(terms)
    P = t + len(shared) + R * k
    check_counts(counts, N, P)
    factors = [factor(parts[r][0], red, term_columns(cand, b, terms)) for r in range(R)]
    Rs = [f[0] for f in factors]
    cols = position_names(terms) + names
    own_x, shared_x = own + t, np.concatenate([np.arange(t), shared + t]).astype(int)
    wj = joint_weights(o["weights"], n)
    sw = None if o["weights"] is None else np.sqrt(wj)
    try:
        theta, C, rnorm, F, held = _fleet_fit(Rs, own_x, shared_x, cols, robots, sw, o["rank_tol"],
                                              hold=method == "physical")
    except IdentificationError as exc:
        raise fit_failure(exc, terms, clipped, N) from None
    fleet_names = tuple(names[i] for i in shared) + tuple(f"{names[i]}[{r}]" for r in robots for i in own)
    if held.size:
        listed = ", ".join(fleet_names[h - t] for h in held)
        warnings.warn(f"robot '{robot.name}': the data do not excite {held.size} of the fleet's {P} parameters "
                      f"({listed}: their regressor columns are zero or combinations of the others, as for a joint "
                      "that does not move); 'physical' holds them at the model's values and their standard "
                      "deviations are undefined (NaN)", UserWarning, stacklevel=4)
    cov = rnorm ** 2 / max(int(counts.sum()) - P, 1) * C
    norms = np.stack([f[1][:, :-1] for f in factors])  # (R, n, t + b)
    present = np.concatenate([np.sqrt(np.sum(norms[:, :, shared_x] ** 2, axis=0)),
                              np.moveaxis(norms[:, :, own_x], 0, 1).reshape(n, -1)], axis=1)
    bj = (present > 1e-12 * present.max(axis=1, keepdims=True)).sum(axis=1)  # parameters in joint j's equations
    res = _fleet_residuals(Rs, _per_robot_thetas(theta, own_x, shared_x, R))
    noise = res / np.sqrt(np.maximum(counts - bj, 1))
    iterations, converged, message, report = 1, True, "", None
    if method == "physical" and o["weights"] is None:  # Gautier's weights, as one robot's default fit
        y_rms = np.sqrt(sum(np.sum(Rr[:, :, -1] ** 2, axis=1) for Rr in Rs) / np.maximum(counts, 1))
        wj = gautier_weights(noise, y_rms)
        sw = np.sqrt(wj)
        theta = _fleet_fit(Rs, own_x, shared_x, cols, robots, sw, o["rank_tol"], hold=True)[0]
    if method == "physical":
        c = theta[:t]  # the position terms' least-squares values: the consistent fit is on τ less them
        less = [np.concatenate([Rr[..., t:-1], Rr[..., -1:] - Rr[..., :t] @ c[:, None]], axis=-1) for Rr in Rs]
        bounds = o["bounds"] or consistent.PhysicalBounds(min_mass=float(o["min_mass"]))
        folds = None if parts[0][4] is None else _fleet_folds([parts[r][4] for r in range(R)],
                                                               term_columns(cand, b, terms), wj, t, own, shared)
        phys, report = _fleet_physical(robot, bp, [Rr * (1.0 if sw is None else sw[:, None, None]) for Rr in less],
                                       own, shared, options, o["regularization"], bounds, folds, t)
        theta = np.concatenate([c, phys])
        converged = report["certified"]
        if not converged:
            message = (f"the physically consistent fleet fit is not certified: {report['accuracy']}; give a larger "
                       "regularization or check the data")
    elif method == "wls":
        theta, cov = _fleet_fit(Rs, own_x, shared_x, cols, robots, np.sqrt(wj) / noise_floor(noise), 0.0)[:2]
    elif method == "irls":
        def reweigh(th, scale, robust):
            acc = source.reduce(terms, red, _per_robot_thetas(th, own_x, shared_x, R), scale, robust)
            return [factor(acc[r][0], red)[0] for r in range(R)], np.sum([acc[r][2] for r in range(R)], axis=0)

        theta, cov, iterations, converged, message, scale = irls(
            lambda th: source.residuals(_per_robot_thetas(th, own_x, shared_x, R), terms), source.median, reweigh,
            lambda Rw: itemgetter(0, 1, 3, 2)(_fleet_fit(Rw, own_x, shared_x, cols, robots, sw, 0.0)),
            Rs, counts, theta, int(o["max_iterations"]), P, o["robust"], wj)
        noise = noise if scale is None else scale
    res = _fleet_residuals(Rs, _per_robot_thetas(theta, own_x, shared_x, R))
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    position = dict(position_joints=terms, position_coefficients=theta[:t].reshape(-1, 2),
                    position_std=std[:t].reshape(-1, 2), position_range=source.position_range(terms)) if t else {}
    return Identification(
        model=robot, method=method, friction=True, base=bp, samples=N, iterations=iterations, converged=converged,
        names=fleet_names,
        values=theta[t:], std=std[t:], covariance=cov[t:, t:], condition_number=float(np.linalg.cond(F)),
        residual_rms=res / np.sqrt(np.maximum(counts, 1)), noise=noise, message=message, solver=report,
        equations=np.asarray(counts, dtype=int), weights=wj, position_shares=shares, **position)


def _shared_gram(grams, own) -> np.ndarray:
    """Σ_r of the Gram matrices (n, m, m) of every robot's rows with the robot's own columns ``own`` eliminated,
    joint by joint (Schur complements): the fleet's problem on the other columns (a robot's own parameters, its
    friction and offsets, appear in its joints' equations only)."""
    total = 0.0
    for G in grams:
        rest = np.setdiff1d(np.arange(G.shape[-1]), own)
        Gor = G[:, own][:, :, rest]
        total = total + G[:, rest][:, :, rest] - np.swapaxes(Gor, -1, -2) @ np.linalg.pinv(
            G[:, own][:, :, own], 1e-12, hermitian=True) @ Gor
    return total


def _fleet_folds(grams, S, wj: np.ndarray, t: int, own, shared) -> np.ndarray:
    """The Gram matrices (k, t + P + 1, t + P + 1) of the fleet's weighted [E W y] on each robot's k time blocks:
    robot r's (k, n, m, m) on the columns ``S`` of [E W y], summed over its joints with the weights ``wj`` and
    put in the fleet's columns (E, the shared base parameters, each robot's own, y)."""
    bs, k = len(shared), len(own)
    P = t + bs + len(grams) * k
    out = np.zeros((grams[0].shape[0], P + 1, P + 1))
    for r, G in enumerate(grams):
        at = np.empty(len(S), dtype=int)
        at[:t], at[t + shared], at[t + own], at[-1] = np.arange(t), t + np.arange(bs), t + bs + r * k + np.arange(k), P
        out[:, at[:, None], at] += np.einsum("j,kjab->kab", wj, G[:, :, S][:, :, :, S])
    return out


def _fleet_physical(robot, base, Rs, own, shared, options, regularization, bounds, folds=None, free: int = 0):
    """The physically consistent fleet fit: θ (P,) in the fleet order, and the solver report.

    The program of :func:`robodyn.identification.physical_fit` (:func:`robodyn.identification.consistent.fleet_program`)
    on every robot's stacked factor: links and motors shared, each robot's Fc, Fv ≥ 0 and Foff free where
    ``per_robot`` makes them its own (a coefficient grouped into a shared base parameter stays shared); scaled,
    solved and certified as one robot's, λ chosen by cross-validation on ``folds`` (:func:`_fleet_folds`; ``free``
    position-term columns first) when ``regularization`` is None.
    """
    from robodyn.parameters.regressor import standard_parameter_vector

    n, nf = robot.n, robot.nf
    psi = standard_to_base(robot, base)
    prior = standard_parameter_vector(robot, True, base.transmission)
    off = 11 * nf
    kinds = {"friction": (0, 1), "offsets": (2,)}
    chosen = [off + 3 * j + c for j in range(n) for o in options for c in kinds[o]]
    # a standard column is a robot's own only where it reaches no shared base parameter
    mine = sorted(c for c in chosen if not np.any(psi[shared, c]))
    limits = consistent.check_bounds(bounds, nf)
    program, cols = consistent.fleet_program(robot, base, psi, prior, [stack_factors(Rr) for Rr in Rs], mine, 0.0,
                                             limits)
    bs, k = len(shared), len(own)
    fleet_psi = np.zeros((bs + len(Rs) * k, program.D.size))  # θ (P,) = Ψ_f K: shared, then each robot's own
    fleet_psi[:bs, cols[0]] = psi[shared]
    for r in range(len(Rs)):
        fleet_psi[bs + r * k + np.arange(k)[:, None], cols[r]] = psi[own]
    K, report, _ = solve_regularized(program, limits, nf, regularization, folds, fleet_psi, free,
                                     what="fleet identification")
    return fleet_psi @ K, report


def fleet_values(result: Identification, name: str) -> np.ndarray:
    """Robot ``name``'s base-parameter vector (b,) from a fleet identification (``identify(..., per_robot=...)``):
    the shared values and that robot's own, in the order of ``result.base.names``, so that
    ``result.base.regressor(q, qd, qdd) @ fleet_values(result, name)`` predicts its torques.

    Raises
    ------
    InputError
        ``name`` is not a robot of ``result``.
    """
    if not isinstance(result, Identification):
        raise InputError(f"result must be an Identification (identify(..., per_robot=...)), got "
                         f"{type(result).__name__}")
    index = dict(zip(result.names, result.values))
    if not isinstance(name, str) or not any(k.endswith(f"[{name}]") for k in index):
        from robodyn.sanitize import printable

        raise InputError(f"robot '{printable(str(name))}' is not in this identification; give one of the names in "
                         "brackets of result.names")
    return np.array([index.get(f"{k}[{name}]", index.get(k, np.nan)) for k in result.base.names])
