"""Least squares on per-joint factors R_j, R_jᵀ R_j = [W_j y_j]ᵀ [W_j y_j] (Khalil & Dombre §9.4, [9.36]): the
identifiability test, the estimate (columns scaled to unit norm; relative accuracy about ε cond(W_s)²), (Wᵀ W)⁻¹
and the residual of every joint, from the factor of the stacked R_j.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from robodyn.errors import InputError

#: Relative tolerance of the identifiability test: a parameter whose (unit-norm) regressor column lies within
#: this distance of the span of the columns before it is not excited by the data (cond(W) of the column-scaled
#: observation matrix ≳ 1/RANK_TOL).  Above the √ε ≈ 1.5e-8 resolution of the accumulated Gram matrices.
RANK_TOL = 1e-6


class IdentificationError(InputError):
    """Data that cannot identify the requested parameters (too few samples, unexcited parameters)."""


def stack_factors(R: np.ndarray, weights=None) -> np.ndarray:
    """The triangular factor of the whole (weighted) system from the per-joint factors."""
    m = R.shape[-1]
    w = np.ones(R.shape[0]) if weights is None else weights
    out = np.zeros((m, m))
    Rg = scipy.linalg.qr((R * w[:, None, None]).reshape(-1, m), mode="r", check_finite=False)[0]
    out[: Rg.shape[0]] = Rg[:m]
    return out


def unexcited(Rg: np.ndarray, b: int, tol: float, zero: float = 1e-12, norms=None) -> np.ndarray:
    """The indices of the parameters whose columns of the stacked factor ``Rg`` are zero (norm ≤ ``zero`` times
    the largest) or, scaled to unit norm, within ``tol`` of the span of the columns before them; ``norms`` (b,):
    the exact column norms of W when known (a factor from Gram matrices holds a zero column only to its rounding)."""
    T = Rg[:b, :b]
    scale = np.linalg.norm(T, axis=0) if norms is None else np.asarray(norms, dtype=float)
    top = scale.max(initial=0.0)
    # a zero column (the factors resolve each column to ~√ε of its own norm, see robodyn.identification.reduction.factor): far below ``tol``, since
    # the columns of one model may differ by 10^8 in norm (rotor columns N² q̈_m next to a wrist's XY)
    dead = scale <= zero * top if top > 0 else np.ones(b, bool)
    Ts = T / np.where(dead, 1.0, scale)
    diag = np.abs(np.diag(Ts))
    return np.flatnonzero(dead | (diag <= tol))


def check_rank(Rg: np.ndarray, names, tol: float, zero: float = 1e-12, norms=None) -> None:
    """IdentificationError naming the parameters the data do not excite (:func:`unexcited`)."""
    b = len(names)
    bad = unexcited(Rg, b, tol, zero, norms)
    if bad.size:
        # Foff_j after an excited Fc_j: where q̇_j keeps one sign, Fc_j sign(q̇_j) is the offset's constant column
        lost = {names[k] for k in bad}
        one_way = [n[4:] for n in names if n in lost and n.startswith("Foff") and f"Fc{n[4:]}" in set(names) - lost]
        ask = f"does joint {one_way[0]}" if len(one_way) == 1 else f"do joints {', '.join(one_way)}"
        hint = (f"; {ask} move in both directions? Where q̇_j keeps one sign, Fc_j sign(q̇_j) is a constant "
                f"column, the offset Foff_j's" if one_way else "")
        raise IdentificationError(
            f"the data do not excite {bad.size} of the {b} parameters: {', '.join(names[k] for k in bad)} "
            f"(their regressor columns are zero or combinations of the others){hint}; use an exciting trajectory "
            f"(rd.excitation_trajectory), identify fewer parameters (friction=False), or identify with "
            f"method='physical', which holds them at the model's values")


def solve_factor(Rg: np.ndarray, b: int):
    """θ (b,), (Wᵀ W)⁻¹ (b, b) and ‖y − W θ‖ from the stacked factor ``Rg`` of [W y] (its columns scaled to unit
    norm for the triangular solves)."""
    T = Rg[:b, :b]
    scale = np.linalg.norm(T, axis=0)  # the column norms of W: solve with unit columns
    Ts = T / scale
    theta = scipy.linalg.solve_triangular(Ts, Rg[:b, b]) / scale
    Tinv = scipy.linalg.solve_triangular(Ts, np.eye(b)) / scale[:, None]
    return theta, Tinv @ Tinv.T, abs(Rg[b, b])


def joint_residuals(R: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """‖y_j − W_j K‖ for every joint, from the per-joint factors."""
    v = np.append(theta, -1.0)
    return np.linalg.norm(R @ v, axis=-1)


def noise_floor(sig: np.ndarray) -> np.ndarray:
    """Noise levels usable as weights: a joint fitted exactly gets the smallest positive level (or 1)."""
    top = sig.max(initial=0.0)
    if top <= 0:
        return np.ones_like(sig)
    return np.maximum(sig, 1e-12 * top)


def relative_std(values: np.ndarray, std: np.ndarray) -> np.ndarray:
    """100 σ / |value| (%); inf where the value is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(values != 0, 100.0 * std / np.abs(values), np.inf)
