"""Essential parameters (Pham & Gautier 1991; Khalil & Dombre §9.4): the base parameters the data need."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn.errors import InputError
from robodyn.identification.data import saturated
from robodyn.identification.factors import (IdentificationError, noise_floor, relative_std, solve_factor,
                                            stack_factors)
from robodyn.identification.position import check_position_terms, position_names
from robodyn.identification.reduction import ArraySource, factor, qr_stack, rows_used
from robodyn.identification.results import Identification
from robodyn.identification.samples import checked_samples, parallel_regressor


@dataclass(frozen=True, eq=False)
class EssentialParameters:
    """Result of :func:`essential_parameters` (Pham & Gautier; Khalil & Dombre §9.4 / ch. 12).

    Attributes
    ----------
    names, values, std : tuple / ndarray (e,) — the essential parameters, their OLS estimates on the data and σ.
    removed : tuple of str — the base parameters eliminated, in the order of elimination.
    relative_error : float — ‖y − W_e K_e‖ / ‖y‖ of the essential set (weighted as the identification).
    full_relative_error : float — the same for all the base parameters.
    history : tuple of (str, float, float) — per step: the parameter removed, its %σ then, the relative error after.
    tolerance : float — the largest relative growth of the error allowed.
    """

    names: tuple
    values: np.ndarray
    std: np.ndarray
    removed: tuple
    relative_error: float
    full_relative_error: float
    history: tuple
    tolerance: float

    @property
    def relative_std(self) -> np.ndarray:
        """100 σ / |value| (%)."""
        return relative_std(self.values, self.std)


def _subset_fit(Rg: np.ndarray, cols, b: int, dof_rows: int):
    """OLS on the columns ``cols`` of the stacked factor: (θ, σ, residual norm)."""
    k = len(cols)
    theta, inv, rnorm = solve_factor(qr_stack([Rg[None, :, list(cols) + [b]]], k + 1)[0], k)
    return theta, np.sqrt(np.maximum(np.diag(inv), 0.0) * rnorm ** 2 / max(dof_rows - k, 1)), rnorm


def essential_parameters(result: Identification, q, qd, qdd, tau, tolerance: float = 0.05,
                         max_relative_std: float | None = None, parallel=None,
                         position_terms="result") -> EssentialParameters:
    """The essential parameters (Pham & Gautier 1991): a subset of the base parameters that explains the data.

    Starting from every base parameter of ``result`` (and its position terms) but those in no equation (the
    friction and rotor inertia of a joint the fit left out: its weight 0), the parameter with the largest
    relative standard deviation is removed and the others re-estimated (OLS, weighted as ``result`` was), as long
    as the relative error ‖y − W_e K_e‖ / ‖y‖ stays within (1 + ``tolerance``) times that of the full set and,
    when ``max_relative_std`` is given, until every remaining %σ is below it.

    Parameters
    ----------
    result : Identification — from :func:`robodyn.identify` (its base parameters, transmission, weights, position terms).
    q, qd, qdd, tau : array (N, n) — the data (usually those of the identification).
    tolerance : float — relative growth of the fit error allowed (> 0).
    max_relative_std : float or None — stop early once every remaining parameter has %σ below this (%).
    parallel : IdentificationData or None — as in :func:`robodyn.identify`: the regressor of the full-rate states,
        filtered and decimated like τ (pass the data the result was identified with ``parallel=``).
    position_terms : "result", tuple of int or None — the joints whose position-term columns sin q_j, cos q_j
        (named ``sin_q<j>``, ``cos_q<j>``, 1-based) are candidates beside the base parameters, as in
        :func:`robodyn.identify`: default those ``result`` fitted (``result.position_joints``); None or () for none.

    Returns
    -------
    EssentialParameters
    """
    if not isinstance(result, Identification):
        raise InputError(f"result is {type(result).__name__}; give the Identification returned by rd.identify")
    if not (np.isfinite(tolerance) and tolerance > 0):
        raise InputError(f"tolerance = {tolerance!r}; give a relative growth > 0, e.g. 0.05")
    if isinstance(position_terms, str) and position_terms == "result":
        joints = tuple(result.position_joints)
    elif isinstance(position_terms, str) and position_terms == "auto":
        raise InputError("position_terms = 'auto' selects terms while fitting; give 'result' (those of the "
                         "identification), a tuple of joints, or None")
    else:
        joints = check_position_terms(position_terms, result.model)
    bp = result.base
    q, qd, qdd, tau = checked_samples(result.model, q, qd, qdd, tau)
    N, n = q.shape
    left = () if result.weights is None else np.flatnonzero(result.weights == 0)  # joints left out of the fit
    use = rows_used(qd, saturated(tau), whole=True, left_out=left)
    Wp = None if parallel is None else parallel_regressor(bp, parallel, q, qd, qdd, tau)
    names = position_names(joints) + tuple(bp.names)
    b = len(names)
    R, norms = factor(ArraySource(bp, q, qd, qdd, tau, use, None if Wp is None else (lambda blk: Wp[blk]))
                      .reduce(joints)[0], "gram")
    w = np.sqrt(result.weights) if result.weights is not None else np.ones(n)
    if result.method == "wls":  # a joint left out has no noise level (NaN) and weight 0
        w = w / noise_floor(np.where(np.isnan(result.noise), np.nanmax(result.noise), result.noise))
    Rg = stack_factors(R, w)
    ynorm = float(np.linalg.norm(Rg[:, b]))
    if ynorm == 0:
        raise IdentificationError("the torques are all zero; nothing to explain")
    rows = N * n if use is None else int(use.sum())
    present = (w[:, None] * norms[:, :b] > 0).any(axis=0)  # exact: a column in no equation (a left-out joint's)
    cols = [k for k in range(b) if present[k]]
    theta, std, rnorm = _subset_fit(Rg, cols, b, rows)
    full = rnorm / ynorm
    removed, history = [], []
    while len(cols) > 1:
        rel = relative_std(theta, std)
        if max_relative_std is not None and np.all(rel < max_relative_std):
            break
        k = int(np.argmax(rel))
        trial = cols[:k] + cols[k + 1:]
        t2, s2, r2 = _subset_fit(Rg, trial, b, rows)
        if r2 / ynorm > (1.0 + tolerance) * full + 1e-12:
            break
        removed.append(names[cols[k]])
        history.append((names[cols[k]], float(rel[k]), float(r2 / ynorm)))
        cols, theta, std, rnorm = trial, t2, s2, r2
    return EssentialParameters(
        names=tuple(names[c] for c in cols), values=theta, std=std, removed=tuple(removed),
        relative_error=float(rnorm / ynorm), full_relative_error=float(full), history=tuple(history),
        tolerance=float(tolerance))
