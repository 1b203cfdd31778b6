"""The solvers of :func:`robodyn.identify` on the reduced problem (Khalil & Dombre §9.4; Gautier).

Each method is a small function of the per-joint factors (:class:`Factors`), looked up in :data:`FITS`:

- ``"ols"``: ordinary least squares, K̂ = W⁺ y, σ² = ‖ρ‖² / (N n − b), cov = σ² (WᵀW)⁻¹ (with joint weights:
  the weighted estimate and its sandwich covariance);
- ``"wls"``: Gautier's weighted least squares, σ_j² = ‖ρ_j‖² / (N_j − b_j) re-estimated from the weighted fit's
  residuals until they settle, cov = (Wᵀ Σ⁻¹ W)⁻¹;
- ``"irls"``: iteratively re-weighted least squares (Huber or bisquare weights, per-joint MAD scale), the
  re-weighting passes over the samples supplied by the source, cov = Huber's K² σ² E[ψ²] / E[ψ']² (WᵀW)⁻¹ per joint;
- ``"physical"``: the physically consistent fit (:mod:`robodyn.identification.physical`), each joint's equations
  weighted by Gautier's 1/σ_j² of the OLS residual unless the user gives weights (:func:`gautier_weights`).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, replace
from types import MappingProxyType

import numpy as np
import scipy.linalg

from robodyn.arrays import one_per
from robodyn.errors import InputError
from robodyn.identification.factors import (RANK_TOL, IdentificationError, check_rank, joint_residuals, noise_floor,
                                            solve_factor, stack_factors, unexcited)
from robodyn.identification.physical import physical_estimate
from robodyn.identification.reduction import ROBUST_C, robust_psi
from robodyn.model.robot import Robot


def check_counts(counts, N: int, b: int, left_out=()) -> None:
    """IdentificationError when a joint has no rows left (other than the joints ``left_out`` of the fit) or the
    equations do not outnumber the parameters."""
    counts = np.asarray(counts)
    empty = np.setdiff1d(np.flatnonzero(counts == 0), np.asarray(left_out, dtype=int))
    if empty.size:
        raise IdentificationError(f"every sample of joint {int(empty[0]) + 1} is clipped or too slow; give data "
                                  "where its torque is not saturated (or a lower min_velocity), or weight 0 for that "
                                  "joint to leave its equations out of the fit")
    n, neq = len(counts), int(counts.sum())
    if neq <= b:
        raise IdentificationError(f"{N} samples of {n} joints give {neq} equations for {b} parameters; "
                                  f"give more than {b // n + 1} samples" + ("" if neq == N * n else
                                                                             " or a lower min_velocity"))


def fit_failure(exc: IdentificationError, joints, clipped, N: int, left_out=()) -> IdentificationError:
    """The error of a fit that failed (``exc``), with its likely cause: the position terms of ``joints`` (0-based),
    the joints ``left_out`` of the fit, or the rows of clipped torques left out (``clipped`` (n,): per joint, of
    ``N`` samples)."""
    if left_out:
        listed = ", ".join(str(j + 1) for j in left_out)
        return IdentificationError(f"{exc}; the equations of joint(s) {listed} are left out of the fit (no torque "
                                   "measured, or weight 0): a position term of those joints is in no equation, and "
                                   "what else only their torques would tell is not identified")
    if joints:  # sin q_j, cos q_j span joint j's own gravity torque when a link's weight acts on it alone
        return IdentificationError(f"{exc}; or the position_terms of joint(s) {', '.join(str(j) for j in joints)} "
                                   "are combinations of the base parameters' columns (that joint's own gravity "
                                   "torque): leave them out of position_terms")
    if not np.any(clipped):
        return exc
    left = ", ".join(f"joint {j + 1}: {int(c)} of {N}" for j, c in enumerate(clipped) if c)
    return IdentificationError(f"{exc}; the rows of clipped (saturated) torques were left out ({left}): give "
                               "data where the torques stay within the drives' and sensors' range")


@dataclass(frozen=True, eq=False)
class Factors:
    """The reduced problem every solver of :data:`FITS` starts from: the per-joint factors R (n, b + 1, b + 1)
    (b counting ``m`` free columns first), their stacked factor ``Rg``, the OLS estimate ``theta`` and its
    covariance ``cov``, the per-joint noise σ_j of its residual, and the options of the solvers."""

    robot: Robot
    bp: object
    R: np.ndarray
    counts: np.ndarray
    names: tuple
    m: int
    weights: np.ndarray | None
    rank_tol: float
    zero: float
    Rg: np.ndarray
    theta: np.ndarray
    cov: np.ndarray
    noise: np.ndarray
    bj: np.ndarray
    options: dict
    held: tuple = ()  # indices of the parameters the data do not excite ("physical" holds them at the model's values)
    gautier: bool = False  # ``weights`` are Gautier's, chosen by "physical" (its covariance stays that of OLS)

    @property
    def b(self) -> int:
        return len(self.names)


def _fit_ols(p: Factors):
    """Least squares; with joint weights, the weighted estimate and its sandwich covariance (of the excited
    parameters where some are held, :func:`_excited_only`)."""
    if p.weights is None:
        return p.theta, p.cov, {}
    if p.held:
        return _excited_only(p, _fit_ols)
    Rw = stack_factors(p.R, np.sqrt(p.weights))
    _check_weighting(p.R, Rw, p.names, p.rank_tol, p.zero, p.weights)
    theta = solve_factor(Rw, p.b)[0]
    return theta, _sandwich(p.R, p.weights, noise_floor(p.noise), p.b) + _rounding_covariance(Rw, theta, p.b), {}


def _excited_only(p: Factors, fit):
    """``fit`` of the problem restricted to the parameters the data excite (all but ``p.held``): each joint's factor
    of those columns (a QR of its factor's), their estimate and covariance; 0 and NaN (undefined) in the rows and
    columns of the held ones, as :func:`_solve_excited` gives without weights."""
    keep = np.setdiff1d(np.arange(p.b), p.held)
    R = np.linalg.qr(p.R[:, :, np.append(keep, p.b)], mode="r")
    excited = replace(p, R=R, names=tuple(p.names[k] for k in keep), m=int(np.sum(keep < p.m)), Rg=stack_factors(R),
                      theta=p.theta[keep], cov=p.cov[np.ix_(keep, keep)], held=())
    theta_k, cov_k, fields = fit(excited)
    theta, cov = np.zeros(p.b), np.full((p.b, p.b), np.nan)
    theta[keep], cov[np.ix_(keep, keep)] = theta_k, cov_k
    return theta, cov, fields


def _fit_wls(p: Factors):
    """Gautier's weighted least squares, the noise levels iterated to their fixed point (:func:`_iterated_wls`)."""
    wj = np.ones(len(p.R)) if p.weights is None else p.weights
    if p.weights is not None:  # Gautier's 1/σ_j are the data's own; only the user's weights are checked
        _check_weighting(p.R, stack_factors(p.R, np.sqrt(wj)), p.names, p.rank_tol, p.zero, wj)
    theta, inv, noise, iterations = _iterated_wls(p.R, wj, p.noise, p.counts, p.bj, p.b)
    sig = noise_floor(noise)
    cov = inv if p.weights is None else _sandwich(p.R, wj / sig ** 2, sig, p.b)
    return theta, cov, dict(noise=noise, iterations=iterations)


def _fit_irls(p: Factors):
    """Iteratively re-weighted least squares: the source's passes (``options["irls"]``) from the OLS estimate."""
    theta, cov, iterations, converged, message, scale = p.options["irls"](p.theta)
    noise = {} if scale is None else dict(noise=scale)
    return theta, cov, dict(iterations=iterations, converged=converged, message=message) | noise


def _fit_physical(p: Factors):
    """The physically consistent fit (:func:`physical_estimate`) on the stacked factor; the free columns' least-squares
    values given the consistent parameters; the covariance of the least-squares estimate (weighted by the user's
    weights)."""
    m, b, o = p.m, p.b, p.options
    _, cov, _ = _fit_ols(replace(p, weights=None) if p.gautier else p)
    Rp = p.Rg if p.weights is None else stack_factors(p.R, np.sqrt(p.weights))
    theta, standard, robot, motors, report, share = physical_estimate(p.robot, p.bp, Rp[m:, m:], o["regularization"],
                                                             o["min_mass"], bounds=o["bounds"], folds=o["folds"],
                                                             free=m)
    if m:
        c = scipy.linalg.solve_triangular(Rp[:m, :m], Rp[:m, b] - Rp[:m, m:b] @ theta)
        theta = np.concatenate([c, theta])
    out = dict(standard=standard, robot=robot, identified_transmission=motors, solver=report, prior_share=share,
               converged=report["certified"])
    if not report["certified"]:
        out["message"] = (f"the physically consistent fit is not certified: {report['accuracy']}; give a larger "
                          "regularization or check the data")
    return theta, cov, out


#: A friction coefficient (Coulomb or viscous, of a joint or a motor) that least squares finds below −3 σ, with a
#: term ‖θ_k W_jk‖ at least this share of its joint's torque ‖y_j‖, is friction no joint has: :func:`fit_factors`
#: warns.  A measured Shanghai Electric cobot's wrist gave Fv4..6 = −18 to −47 N m s/rad (σ under 1 %, terms of 76
#: to 168 % of the torques), where "physical" (friction ≥ 0) then predicted held-out wrist torques at 81 to 121 %;
#: a Rokae xMate3Pro's light wrist, −0.2 and −0.4 N m s/rad at 12 and 24 %, which "physical" fits as well as OLS.
NEGATIVE_FRICTION_SHARE = 0.3
_FRICTION = re.compile(r"^F[cv]m?R?\d+$")


#: Without ``weights``, ``"physical"`` weighs joint j's equations by Gautier's 1/σ_j² (σ_j the noise level of joint j's
#: least-squares residual, as the first pass of ``"wls"``), so that each joint's torque counts by how well the model can
#: explain it rather than by its size: unweighted, a wrist whose torques are 10 to 20 times smaller than the shoulder's
#: hardly enters the fit.  On the held-out runs of thirteen measured sets (docs/identification.md, "Which method by
#: default"), the weights lowered the mean relative error on eleven, by up to 12 points on one held-out set, and raised
#: it on TIAGo by 1.0 and on the AR5 by 0.3.  A joint whose torque RMS is below this share of the largest joint's gets
#: the median weight of the others: its σ_j is the sensor's resolution rather than the model's error, and 1/σ_j² would
#: let it outweigh every other joint.  A σ_j below ``EXACT_SHARE`` of the largest torque RMS is rounding (noise-free
#: data: the factors resolve residuals to about √ε of the torques) and counts as that level, so that exact data are
#: fitted unweighted.
QUIET_SHARE = 0.01
EXACT_SHARE = 1e-6


def gautier_weights(noise: np.ndarray, torque_rms: np.ndarray, left_out=()) -> np.ndarray:
    """Gautier's joint weights 1/σ_j² from the noise levels σ_j (n,) of the least-squares residual (at least
    ``EXACT_SHARE`` of the largest torque RMS (n,)), scaled so that the median over the joints whose torque RMS is
    at least ``QUIET_SHARE`` of the largest is 1; the others (quiet) get 1, the joints ``left_out`` of the fit 0."""
    out = np.zeros(len(noise))
    fitted = np.setdiff1d(np.arange(len(noise)), np.asarray(left_out, dtype=int))
    sig, rms = noise[fitted], torque_rms[fitted]
    w = 1.0 / np.maximum(noise_floor(sig), EXACT_SHARE * rms.max()) ** 2
    quiet = rms < QUIET_SHARE * rms.max()
    w = w / np.median(w[~quiet])  # the largest joint is never quiet
    out[fitted] = np.where(quiet, 1.0, w)
    return out


def _warn_negative_friction(robot: Robot, names, theta, cov, norms, norms_y) -> None:
    """Warn about the friction coefficients of the least-squares estimate θ (b,) that are negative beyond 3 σ
    with a torque of at least ``NEGATIVE_FRICTION_SHARE`` of a joint's (``norms`` (n, b): ‖W_jk‖, ``norms_y`` (n,):
    ‖y_j‖): the data contradict the friction model."""
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    share = np.abs(theta) * norms / np.maximum(norms_y, np.finfo(float).tiny)[:, None]  # (n, b)
    bad = [k for k, name in enumerate(names) if _FRICTION.match(name) and theta[k] < -3.0 * std[k]
           and share[:, k].max() >= NEGATIVE_FRICTION_SHARE]
    if not bad:
        return
    listed = ", ".join(f"{names[k]} = {theta[k]:.3g} ± {std[k]:.2g} (its term {100 * share[:, k].max():.0f} % of joint "
                       f"{int(np.argmax(share[:, k])) + 1}'s torque in norm)" for k in bad)
    warnings.warn(f"robot '{robot.name}': least squares finds negative friction, which no joint has: {listed}. "
                  "The torques of those joints may have the wrong sign or scale, or the friction model may miss what "
                  "they do; method='physical' (the default) keeps friction ≥ 0 and can fit them worse than "
                  "method='ols', which fits them as they are.", UserWarning,
                  stacklevel=5)


def _solve_excited(Rg: np.ndarray, b: int, keep: np.ndarray):
    """:func:`solve_factor` over the columns ``keep`` the data excite: θ 0 and (Wᵀ W)⁻¹ NaN (undefined) in the rows
    and columns of the others, the parameters "physical" takes from the prior alone."""
    Rk = scipy.linalg.qr(Rg[:, np.append(keep, b)], mode="r", check_finite=False)[0]
    theta_k, inv_k, rnorm = solve_factor(Rk, keep.size)
    theta, inv = np.zeros(b), np.full((b, b), np.nan)
    theta[keep], inv[np.ix_(keep, keep)] = theta_k, inv_k
    return theta, inv, rnorm


def _warn_held(robot: Robot, names, held) -> None:
    """Warn that "physical" holds the parameters ``held`` (indices into ``names``) at the model's values."""
    listed = ", ".join(names[k] for k in held)
    warnings.warn(f"robot '{robot.name}': the data do not excite {len(held)} of the {len(names)} parameters ({listed}: "
                  "their regressor columns are zero or combinations of the others, as for a joint that does not "
                  "move); 'physical' holds them at the model's values, its standard deviations are undefined (NaN) "
                  "and its prior_determined names them", UserWarning, stacklevel=5)


#: The solvers of :func:`identify`: method → function of the reduced problem (:class:`Factors`) returning
#: (estimate (b,), covariance (b, b), the other fields of the result it sets).
FITS = MappingProxyType({"ols": _fit_ols, "wls": _fit_wls, "irls": _fit_irls, "physical": _fit_physical})


def fit_factors(robot: Robot, bp, R: np.ndarray, counts, method: str, weights=None, rank_tol: float = RANK_TOL,
                zero: float = 1e-12, norms=None, regularization=None, min_mass: float = 0.0, bounds=None,
                folds=None, irls=None, free=(), left_out=(), names=None) -> dict:
    """The fit of :func:`identify` on the per-joint factors R (n, b + 1, b + 1), R_jᵀ R_j = [W_j y_j]ᵀ [W_j y_j],
    of ``counts`` (n,) rows (any source): the rank check (:func:`check_rank`), the least-squares estimate and
    covariance, then the solver ``FITS[method]``; ``weights`` (n,) or None: the user's joint weights (None:
    1, and Gautier's 1/σ_j² for ``"physical"``, :func:`gautier_weights`).  ``norms`` (n, b + 1): the exact column
    norms of every [W_j y_j]; ``folds`` (k, n, b + 1, b + 1): the Gram matrices of joint j's [W_j y_j] in each of k
    time blocks (``regularization=None``);
    ``irls``: θ → (θ, cov, iterations, converged, message), the re-weighting passes over the samples; ``free``:
    the names of the free columns before the base ones (the position terms); ``left_out``: the joints whose
    equations are left out (their factors, counts and folds zero; weight 0, noise and residual NaN in the result);
    ``names``: those of R's columns (default: ``free`` then ``bp.names``; fewer where the driver left some out,
    :func:`at_model_values`).  Returns the fields of :class:`Identification` it sets."""
    m = len(free)
    names = tuple(free) + tuple(bp.names) if names is None else tuple(names)
    b = len(names)
    counts = np.asarray(counts)
    Rg = stack_factors(R)
    norms_y = np.linalg.norm(R[:, :, b], axis=1) if norms is None else np.asarray(norms)[:, b]  # ‖y_j‖
    norms = np.linalg.norm(R[:, :b, :b], axis=1) if norms is None else np.asarray(norms)[:, :b]
    columns = np.sqrt(np.sum(norms ** 2, axis=0))  # ‖W_k‖
    held = unexcited(Rg, b, rank_tol, zero, columns) if method == "physical" else ()
    keep = np.setdiff1d(np.arange(b), held)
    if len(held):
        theta, inv, rnorm = _solve_excited(Rg, b, keep)
        _warn_held(robot, names, held)
    else:
        check_rank(Rg, names, rank_tol, zero, columns)
        theta, inv, rnorm = solve_factor(Rg, b)
    bj = (norms > 1e-12 * norms.max(axis=1, keepdims=True)).sum(1)  # parameters in the equations of joint j
    noise = joint_residuals(R, theta) / np.sqrt(np.maximum(counts - bj, 1))
    gautier = weights is None and method == "physical"
    if gautier:
        weights = gautier_weights(noise, norms_y / np.sqrt(np.maximum(counts, 1)), left_out)
    wj = np.ones(len(R)) if weights is None else np.array(weights, dtype=float)
    wj[list(left_out)] = 0.0
    p = Factors(robot=robot, bp=bp, R=R, counts=counts, names=names, m=m,
                weights=None if weights is None else wj, rank_tol=rank_tol, zero=zero,
                Rg=Rg, theta=theta, cov=rnorm ** 2 / max(int(counts.sum()) - b, 1) * inv, noise=noise, bj=bj,
                options=dict(regularization=regularization, min_mass=min_mass, bounds=bounds,
                             folds=None if folds is None else np.einsum("j,kjab->kab", wj, folds), irls=irls),
                held=tuple(int(k) for k in held), gautier=gautier)
    _warn_negative_friction(robot, names, p.theta, p.cov, norms, norms_y)
    theta, cov, fields = FITS[method](p)
    out = dict(iterations=1, converged=True, message="", robot=None, standard=None, identified_transmission=None,
               solver=None, prior_share=None, noise=noise, weights=wj) | fields
    out["noise"] = np.where(wj > 0, out["noise"], np.nan)
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    if m:
        out |= dict(position_joints=tuple(int(k[5:]) - 1 for k in free[::2]),
                    position_coefficients=theta[:m].reshape(-1, 2), position_std=std[:m].reshape(-1, 2))
    return out | dict(values=theta[m:], std=std[m:], covariance=cov[m:, m:],
                      condition_number=float(np.linalg.cond(Rg[:b, keep])),
                      residual_rms=np.where(wj > 0, joint_residuals(R, theta) / np.sqrt(np.maximum(counts, 1)),
                                            np.nan))


def at_model_values(robot: Robot, bp, fields: dict, absent: np.ndarray) -> dict:
    """The fields of a fit of every base parameter but those of ``absent`` (indices into ``bp.names``: in no
    equation left, the friction, offset and rotor inertia of joints left out of the fit) with those parameters
    reported at the model's values (``bp.values``), their standard deviation and covariance undefined (NaN), and a
    UserWarning naming them — as "physical" holds the parameters the data do not excite."""
    b = len(bp.names)
    kept = np.setdiff1d(np.arange(b), absent)
    values, std, cov = np.array(bp.values, dtype=float), np.full(b, np.nan), np.full((b, b), np.nan)
    values[kept], std[kept] = fields["values"], fields["std"]
    cov[np.ix_(kept, kept)] = fields["covariance"]
    warnings.warn(f"robot '{robot.name}': with the equations of joints left out, {len(absent)} of the {b} base "
                  f"parameters are in no equation ({', '.join(bp.names[k] for k in absent)}): they are reported at "
                  "the model's values, their standard deviations undefined (NaN)", UserWarning, stacklevel=4)
    return fields | dict(values=values, std=std, covariance=cov)


#: ``"irls"`` stops when a pass moves θ by at most this many of its standard deviations: ‖T δθ‖ ≤ tol σ̄, T the
#: factor of the weighted normal matrix (Tᵀ T = Σ_j w_j W_jᵀ diag(ω) W_j) and σ̄ the weighted residual's RMS, the
#: step's Mahalanobis length under the weighted fit's covariance σ̄² (Tᵀ T)⁻¹.  The passes converge linearly (the
#: step shrinks by 0.5–0.8 a pass), so θ is then within a few thousandths of a standard deviation of the fixed point;
#: a relative step of √ε (1.5e-8, MATLAB robustfit's criterion) also stops it, as on noise-free data, where σ̄ is
#: rounding.
IRLS_TOLERANCE = 1e-3
IRLS_STEP = 1.5e-8
#: the default iteration limit of ``"irls"``: each iteration is a pass over the samples, and a converging fit stops
#: earlier.  On the measured runs of the test suite (TX40, KR 300, LWR 4, TIAGo, LWA 4P), Huber's weights took 15 to
#: 24 passes; bisquare's, whose plain passes after Huber's converge at 0.9 a pass, 29 to 98, and 31 to 46 with
#: their SQUAREM acceleration on the LWR 4 and the LWA 4P (:func:`irls`).
IRLS_ITERATIONS = 200


def _bisquare_objective(r, scale: np.ndarray, weights: np.ndarray) -> float:
    """Σ_j w_j s_j² Σ_i ρ(r_ij / s_j), the function a pass of bisquare's weights at fixed scales s_j lowers, from
    residuals r (N, n) (NumPy or Dask; the NaN rows, those left out, are left out of the sum).

    ρ(u) = c²/6 (1 − (1 − (u/c)²)³) for |u| < c, c²/6 beyond (c = 4.685).  The passes weigh row i of joint j by
    w_j ψ(u_ij)/u_ij, without 1/s_j², so the majorant they minimise, ½ Σ_j w_j Σ_i (ψ(u_ij)/u_ij) r_ij², is that of
    this sum with s_j² (of Σ_j w_j Σ_i ρ(u_ij) only where the scales are equal)."""
    c = ROBUST_C["bisquare"]
    v = np.minimum((r / scale / c) ** 2, 1.0)  # NaN stays NaN, for nansum to leave out
    loss = np.asarray(np.nansum(1.0 - (1.0 - v) ** 3, axis=0))
    return float(np.sum(weights * scale ** 2 * loss)) * c ** 2 / 6.0


def _squarem(mm, objective, theta: np.ndarray, passes: int):
    """The fixed point of a majorize-minimize map ``mm`` by SQUAREM (Varadhan & Roland 2008, scheme S3), the
    extrapolations kept only where they do not raise ``objective``.

    ``mm(θ)``: one pass, the next iterate F(θ) and whether its step F(θ) − θ meets the stopping rule;
    ``objective(θ)``: the function the passes lower; ``passes`` ≥ 1: the most passes to make.  A cycle makes two
    passes from θ0, θ1 = F(θ0) and θ2 = F(θ1), and extrapolates with r = θ1 − θ0, v = θ2 − θ1 − r,
    α = min(−‖r‖/‖v‖, −1):

        θ' = θ0 − 2α r + α² v,

    the fixed point itself where the passes contract by one factor λ along r (α = −1/(1 − λ)), as they do near it.
    θ' starts the next cycle (its first pass is the stabilising step F(θ')) if its objective is not above θ0's;
    otherwise θ2 does.  So the objective falls from cycle to cycle as it does from pass to pass, and every pass is a
    plain step of F, the stopping rule that of the plain iteration: the fixed point is the one the passes reach.
    The objective costs a computation of the residuals at θ' per cycle, and at θ0 after a rejected θ' (and before
    the first extrapolation).

    Returns θ (the fit of the last pass), the θ that pass's weights came from, whether its step met the stopping
    rule, and the passes made.
    """
    made, f0 = 0, None
    while True:
        t1, stop = mm(theta)
        made += 1
        if stop or made == passes:
            return t1, theta, stop, made
        t2, stop = mm(t1)
        made += 1
        if stop or made == passes:
            return t2, t1, stop, made
        r, v = t1 - theta, t2 - 2.0 * t1 + theta
        norm_v = np.linalg.norm(v)
        alpha = min(-np.linalg.norm(r) / norm_v, -1.0) if norm_v > 0 else -1.0
        if alpha < -1.0:  # α = −1 gives θ2 itself
            if f0 is None:
                f0 = objective(theta)
            extrapolated = theta - 2.0 * alpha * r + alpha ** 2 * v
            f = objective(extrapolated)  # the residuals there serve the covariance if it converges at its first pass
            if f <= f0:  # False for NaN
                theta, f0 = extrapolated, f
                continue
        theta, f0 = t2, None


def irls(residuals, median, reweigh, fit, state, used, theta, max_iterations: int, count: int, robust: str,
         weights: np.ndarray):
    """Iteratively re-weighted least squares (Huber or Tukey bisquare weights, per-joint MAD scale from exact
    medians), on any source and problem, with Huber's covariance of an M-estimate.

    ``residuals(θ)``: the (N, n) residuals τ − W θ (NaN on the rows left out), ``median``: their per-joint
    median; ``reweigh(θ, scale, robust)``: the factors of the problem weighted by ``robust``'s weights and
    #(w > 0) per joint;
    ``fit(factors)``: θ, (Σ_j w_j W_jᵀ W_j)⁻¹, a factor T (p, p) with Tᵀ T = Σ_j w_j W_jᵀ W_j and the residual
    norm (Σ_j w_j ‖y_j − W_j θ‖²)^½, from per-joint factors (n, m, m) (or one such stack per robot);
    ``weights`` (n,): the joint weights w_j it applies; ``state``, ``used``: the unit-weight factors and the row
    counts N_j; ``count``: the number p of parameters.  Returns θ, its covariance, the iterations (the passes over
    the samples, ``reweigh``'s), whether they converged, a message, and the per-joint scales s_j (1.4826 MAD) the
    weights settled on (None: an exact fit).

    Huber's weights (a convex loss: one minimum) come first, the scales re-estimated at every pass.  Bisquare's
    (redescending: several minima) then start from that fit with its scales s_j fixed, where every pass lowers
    Σ_j w_j s_j² Σ_i ρ(ρ_ij / s_j) (re-weighting is a majorize-minimize step where ψ(u)/u falls with |u|): from the
    OLS fit with the scales re-estimated, they crept and jumped between minima, unconverged after 100 passes on two
    of five measured runs (the LWR 4 and TIAGo's).  At fixed scales the passes contract linearly, by about 0.9 a
    pass on the measured runs (83 of the LWA 4P's 98 passes), so that stage is accelerated by SQUAREM
    (Varadhan & Roland 2008; :func:`_squarem`), whose extrapolations are kept only where they do not raise that
    sum: every pass is still one of the plain iteration, stopped by its rule, at its fixed point.  The passes need
    no residuals (each pass's reduction weighs its own rows): ``residuals`` is called at Huber's passes, at most
    twice per two bisquare passes for the sum (an extrapolated θ, and the start of a cycle after a rejected one;
    about a third of a pass each, not counted in the iterations nor the limit), and for the covariance, at the θ
    of the last weights (where it was not computed already).

    The robust estimate solves Σ_j w_j s_j Σ_i ψ(u_ij) W_ijᵀ = 0, u_ij = ρ_ij / s_j.  Its covariance is
    Huber's (1981, §7.6) with the expectations taken per joint:

        cov = K² N / (N − p) A⁻¹ B A⁻¹,   A = Σ_j w_j E_j[ψ'] W_jᵀ W_j,   B = Σ_j w_j² s_j² E_j[ψ²] W_jᵀ W_j,
        K = 1 + (p / N) var(ψ') / E[ψ']²,

    which is s² E[ψ²] / E[ψ']² (Wᵀ W)⁻¹ for one scale.  The weighted least-squares formula s_w² (Wᵀ diag(w) W)⁻¹
    is not one: it counts a Huber-weighted outlier's w ρ² = c s |ρ| in full, takes bisquare's down-weighted tails
    for a smaller noise and pools the joints' noise levels (the Mahalanobis distance of its error averaged 0.63 b
    and 1.35 b over draws with 100 σ spikes on 2 % of the rows, where a χ²_b averages b).

    References
    ----------
    R. Varadhan and C. Roland, "Simple and globally convergent methods for accelerating the convergence of any EM
    algorithm", Scandinavian Journal of Statistics 35(2), 335–353, 2008.
    """
    def residuals_at(th):
        r = residuals(th)
        return r.persist() if hasattr(r, "persist") else r

    def one_pass(th, stage):
        state, used = reweigh(th, scale, stage)
        new, _, Tw, rnorm = fit(state)
        step = new - th
        sigma = rnorm / np.sqrt(max(float(np.sum(used)) - count, 1.0))
        return new, bool(np.linalg.norm(Tw @ step) <= IRLS_TOLERANCE * sigma
                         or np.linalg.norm(step) <= IRLS_STEP * (1.0 + np.linalg.norm(new)))

    def objective(th):
        nonlocal r, r_at
        r, r_at = residuals_at(th), th
        return _bisquare_objective(r, scale, weights)

    unit, counts = state, np.asarray(used)
    live = np.flatnonzero(counts > 0)  # a joint left out of the fit has no rows, no residual, no scale

    def joint_median(x):
        if live.size == counts.size:
            return median(x)
        out = np.zeros(counts.size)
        out[live] = median(x[:, live])
        return out

    converged, it, r, r_at, scale, last, weighed = False, 0, None, None, None, "huber", None
    while it < max_iterations:
        it += 1
        r, r_at = residuals_at(theta), theta
        mad = 1.4826 * joint_median(abs(r - joint_median(r)))
        if not np.any(mad > 0):
            converged, scale = True, None
            break
        scale = noise_floor(mad)
        weighed, (theta, converged) = theta, one_pass(theta, "huber")
        if converged:
            break
    if robust != "huber" and scale is not None and converged:
        converged = False  # until bisquare's stage converges
        if it < max_iterations:
            theta, weighed, converged, made = _squarem(lambda th: one_pass(th, robust), objective, theta,
                                                       max_iterations - it)
            it, last = it + made, robust
    message = "" if converged else f"iteration limit {max_iterations} reached; the robust weights may still change"
    if scale is None:  # an exact fit: more than half of every joint's residuals vanish
        return theta, np.zeros((len(theta), len(theta))), it, converged, message, None
    if r_at is not weighed:
        r = residuals_at(weighed)
    psi, dpsi = robust_psi(r / scale, last)  # the weights of the last pass
    s1, s11, s2 = np.asarray(np.nansum(np.stack([dpsi, dpsi ** 2, psi ** 2]), axis=1)) * (counts > 0)
    N = float(counts.sum())
    counts = np.maximum(counts, 1)  # a joint left out: its factor (unit) is 0
    eps = np.finfo(float).eps
    mean = max(s1.sum() / N, eps)
    K = 1.0 + count / N * max(s11.sum() / N - mean ** 2, 0.0) / mean ** 2
    # E_j[ψ'] ≤ 0 (a joint's residuals mostly on bisquare's falling slope) and E_j[ψ²] = 0 (a joint fitted
    # exactly) are floored: that joint's equations then resolve (almost) nothing, and the factors stay nonsingular
    _, A_inv, _, _ = fit(np.sqrt(np.maximum(s1 / counts, eps))[:, None, None] * np.asarray(unit))
    T = fit(np.sqrt(noise_floor(weights * scale ** 2 * s2 / counts))[:, None, None] * np.asarray(unit))[2]
    C = T @ A_inv
    return theta, K ** 2 * N / max(N - count, 1.0) * (C.T @ C), it, converged, message, scale


#: ``"wls"``: the per-joint noise levels are re-estimated from the weighted fit's residuals until they change by
#: less than this (relative), at most ``WLS_ITERATIONS`` times.
WLS_TOLERANCE = 1e-4
WLS_ITERATIONS = 20


def _iterated_wls(R: np.ndarray, wj: np.ndarray, noise: np.ndarray, counts, bj, b: int):
    """Gautier's weighted least squares with the noise levels re-estimated from its own residuals (feasible
    generalised least squares): σ_j from the OLS residual overstates a light joint's noise by the heavy joints'
    noise that OLS puts into the parameters it shares (4.8 σ on the Panda's wrist at 2 % noise, i.e. weighted 23
    times too low); σ_j² = ‖ρ_j‖² / (N_j − b_j) of the weighted fit is the fixed point.  Returns (θ, (Wᵀ Σ⁻¹ W)⁻¹
    with the user's weights, σ (n,), passes)."""
    dof = np.sqrt(np.maximum(np.asarray(counts) - bj, 1))
    sig = noise_floor(noise)
    for it in range(1, WLS_ITERATIONS + 1):
        theta, inv, _ = solve_factor(stack_factors(R, np.sqrt(wj) / sig), b)
        new = noise_floor(joint_residuals(R, theta) / dof)
        done = np.max(np.abs(new - sig) / sig) <= WLS_TOLERANCE
        sig = new
        if done:
            break
    theta, inv, _ = solve_factor(stack_factors(R, np.sqrt(wj) / sig), b)
    return theta, inv, sig, it


#: A parameter whose weighted column keeps less than this fraction of its norm under the largest joint weight is
#: resolved only by equations weighted down to the round-off (√ε ≈ 1.5e-8 relative) of the others' factors.
WEIGHT_RESOLUTION = 1e-4


def _check_weighting(R: np.ndarray, Rw: np.ndarray, names, tol: float, zero: float, w: np.ndarray) -> None:
    """IdentificationError when the joint weights ``w`` make the weighted problem numerically singular: a
    parameter resolved only by equations weighted down to the round-off of the others (the per-joint factors
    carry each column to ~√ε of its norm), or the weighted factor ``Rw`` failing the rank test."""
    b = len(names)
    col = np.linalg.norm(R[:, :b, :b], axis=1)  # (n, b) per joint
    top = np.sqrt(w.max()) * col.max(axis=0)
    kept = np.sqrt(np.sum(w[:, None] * col ** 2, axis=0))
    bad = [names[k] for k in np.flatnonzero(kept < WEIGHT_RESOLUTION * top)]
    why = f"{', '.join(bad)} appear only in equations weighted down by more than {1 / WEIGHT_RESOLUTION ** 2:.0e}"
    if not bad:
        try:
            check_rank(Rw, names, tol, zero)
            return
        except IdentificationError as exc:
            why = str(exc).split("; use")[0]
    raise IdentificationError(f"the weights (ratio {w.max() / w.min():.3g} between the largest and the smallest) "
                              f"make the problem numerically singular: {why}; give weights within a few orders of "
                              f"magnitude of each other")


def _rounding_covariance(Rw: np.ndarray, theta: np.ndarray, b: int) -> np.ndarray:
    """The rounding error of the weighted solve as a covariance: (ε cond(W_w) |θ|)², diagonal; keeps the reported
    uncertainty of badly conditioned weightings from vanishing on exact data."""
    T = Rw[:b, :b]
    scale = np.linalg.norm(T, axis=0)
    c = np.linalg.cond(T / np.where(scale > 0, scale, 1.0))
    return np.diag((np.finfo(float).eps * c * np.abs(theta)) ** 2)


def _sandwich(R: np.ndarray, lam: np.ndarray, sig: np.ndarray, b: int) -> np.ndarray:
    """Covariance of the estimate weighted by λ_j per joint under noise σ_j: M⁻¹ (Σ λ_j² σ_j² G_j) M⁻¹,
    M = Σ λ_j G_j, G_j = W_jᵀ W_j (from the per-joint factors)."""
    T = R[:, :b, :b]
    G = np.swapaxes(T, -1, -2) @ T
    M = np.einsum("j,jab->ab", lam, G)
    S = np.einsum("j,jab->ab", lam ** 2 * sig ** 2, G)
    Minv = np.linalg.pinv(M, hermitian=True)
    return Minv @ S @ Minv


def joint_weights(weights, n: int) -> np.ndarray:
    """The joint weights (n,) of ``weights`` (None: 1): finite, ≥ 0 (0: the joint's equations are left out of the
    fit), one of them > 0."""
    if weights is None:
        return np.ones(n)
    w = one_per("weights", weights, n, lambda w: np.isfinite(w) & (w >= 0), "finite weights >= 0")
    if not np.any(w > 0):
        raise InputError("weights are all 0: every joint's equations would be left out; give a weight > 0 to the "
                         "joints whose torques were measured")
    return w


def left_out_joints(robot: Robot, constant, weights) -> tuple:
    """The joints (0-based) whose equations the fit leaves out: those of weight 0 and, without ``weights``, those
    whose measured torque holds one value in every sample (``constant`` (n,) bool: a joint without a torque sensor,
    or a channel that reads 0), with a UserWarning naming them.  InputError for such a joint given a weight > 0."""
    w = joint_weights(weights, robot.n)
    constant = np.flatnonzero(np.asarray(constant, dtype=bool))
    if weights is not None:
        weighted = [int(j) for j in constant if w[j] > 0]
        if weighted:
            raise InputError(f"the torque of joint(s) {', '.join(str(j + 1) for j in weighted)} holds one value in "
                             "every sample: no torque was measured there, and no model fits a constant; give "
                             "those joints weight 0 to leave their equations out of the fit")
        return tuple(int(j) for j in np.flatnonzero(w == 0))
    if constant.size == robot.n:
        raise InputError("every joint's torque holds one value in every sample: no torque was measured")
    if constant.size:
        listed = ", ".join(f"{j + 1} ({robot.q_names[j]})" for j in constant)
        warnings.warn(f"robot '{robot.name}': the torque of joint(s) {listed} holds one value in every sample (a joint "
                      "without a torque sensor, or a channel that reads 0): their equations are left out of the fit "
                      "(weight 0 in the result). The other joints' torques still identify what moves them; "
                      "weights with 0 for those joints say so and silence this warning.", UserWarning, stacklevel=4)
    return tuple(int(j) for j in constant)
