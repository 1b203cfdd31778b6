"""Discrete-time models of a linear(ized) system ẋ = A x + B u sampled every Δt.

With the input held over each sample period (zero-order hold), the exact solution over one period is
x_{k+1} = e^{AΔt} x_k + (∫₀^Δt e^{As} ds) B u_k; both blocks are read off one matrix exponential,
exp([[A, B], [0, 0]] Δt) = [[A_d, B_d], [0, I]] (Van Loan 1978). The approximations replace e^{AΔt} by a rational
function: forward Euler I + AΔt, backward Euler (I − AΔt)⁻¹ and Tustin's bilinear map
(I − AΔt/2)⁻¹(I + AΔt/2), the generalized bilinear transform of scipy.signal.cont2discrete with α = 0, 1, ½.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from robodyn.arrays import as_real_array, finite_array, finite_result
from robodyn.errors import InputError

#: α of the generalized bilinear transform for each rational method.
_BILINEAR = MappingProxyType({"euler": 0.0, "backward_euler": 1.0, "tustin": 0.5})
METHODS = ("zoh",) + tuple(_BILINEAR)


class DiscreteSystem(NamedTuple):
    """Result of :func:`discretize`: x_{k+1} = A x_k + B u_k, A (..., m, m) and B (..., m, p); unpacks as a pair."""

    A: np.ndarray
    B: np.ndarray


def check_sample_time(dt, name: str = "dt") -> float:
    """A sample period as a positive finite float, or an InputError naming the argument ``name``."""
    try:
        value = np.nan if isinstance(dt, bool) or np.ndim(dt) != 0 else float(dt)
    except (TypeError, ValueError):
        value = np.nan
    if not (value > 0 and np.isfinite(value)):
        raise InputError(f"{name} = {dt!r}; give the sample period as one positive finite number of seconds")
    return value


def discretize(A, B, dt, method: str = "zoh") -> DiscreteSystem:
    """Discrete-time model x_{k+1} = A_d x_k + B_d u_k of ẋ = A x + B u sampled every ``dt``.

    ``"zoh"`` is exact for an input held constant over each period (zero-order hold):
    A_d = e^{AΔt}, B_d = ∫₀^Δt e^{As} ds B, from exp([[A, B], [0, 0]] Δt) = [[A_d, B_d], [0, I]] (Van Loan).
    ``"euler"``: A_d = I + AΔt, B_d = BΔt; ``"backward_euler"``: A_d = (I − AΔt)⁻¹, B_d = (I − AΔt)⁻¹BΔt;
    ``"tustin"`` (bilinear): A_d = (I − AΔt/2)⁻¹(I + AΔt/2), B_d = (I − AΔt/2)⁻¹BΔt — the conventions of
    scipy.signal.cont2discrete ('zoh', 'euler', 'backward_diff', 'bilinear').

    Parameters
    ----------
    A : array_like (..., m, m), the state matrix (for :func:`robodyn.linearize`, x = (q, q̇), m = 2n)
    B : array_like (..., m, p), the input matrix
    dt : float, the sample period Δt > 0 (s)
    method : 'zoh' (default), 'euler', 'backward_euler' or 'tustin'

    Returns
    -------
    DiscreteSystem (A, B) : ndarray (..., m, m) and (..., m, p), batched over the leading axes of A and B;
        float32 when A and B are.

    Raises
    ------
    InputError
        Wrong shapes, NaN/inf, a non-positive ``dt``, an unknown ``method``, or (implicit methods) I − αAΔt
        singular at this ``dt``.
    """
    if method not in METHODS:
        raise InputError(f"method = {method!r}; choose one of {', '.join(METHODS)}")
    single = all(as_real_array(name, x).dtype == np.float32 for name, x in (("A", A), ("B", B)))
    A_in, B_in = finite_array("A", A), finite_array("B", B)
    h = check_sample_time(dt)
    if A_in.ndim < 2 or A_in.shape[-1] != A_in.shape[-2]:
        raise InputError(f"A has shape {A_in.shape}; give a square state matrix (..., m, m)")
    if B_in.ndim < 2 or B_in.shape[-2] != A_in.shape[-1]:
        raise InputError(f"B has shape {B_in.shape}; give an input matrix (..., {A_in.shape[-1]}, p) with as many "
                         "rows as A")
    try:
        batch = np.broadcast_shapes(A_in.shape[:-2], B_in.shape[:-2])
    except ValueError:
        raise InputError(f"the leading (batch) axes of A {A_in.shape} and B {B_in.shape} do not broadcast") from None
    m, p = B_in.shape[-2:]
    A64, B64 = np.broadcast_to(A_in, batch + (m, m)), np.broadcast_to(B_in, batch + (m, p))
    if method == "zoh":
        Ad, Bd = _zoh(A64, B64, h)
    else:
        Ad, Bd = _bilinear(A64, B64, h, _BILINEAR[method])
    if single:
        Ad, Bd = Ad.astype(np.float32), Bd.astype(np.float32)
    return finite_result("discretize", DiscreteSystem(Ad, Bd))


def _zoh(A, B, h):
    """Van Loan's block exponential exp([[A, B], [0, 0]] h) = [[A_d, B_d], [0, I]]."""
    from scipy.linalg import expm

    m, p = B.shape[-2:]
    M = np.zeros(A.shape[:-2] + (m + p, m + p))
    M[..., :m, :m] = A * h
    M[..., :m, m:] = B * h
    E = expm(M)
    return E[..., :m, :m], E[..., :m, m:]


def _bilinear(A, B, h, alpha):
    """(I − αAh)⁻¹(I + (1 − α)Ah) and (I − αAh)⁻¹Bh."""
    eye = np.eye(A.shape[-1])
    left = eye - alpha * h * A
    if alpha:
        cond = np.linalg.cond(left)
        if np.any(~np.isfinite(cond)) or np.any(cond > 1 / np.finfo(float).eps):
            raise InputError(f"I − {alpha:g}·A·dt is singular at dt = {h!r}: 1/({alpha:g}·dt) is an eigenvalue of "
                             "A; choose another dt or method='zoh'")
    rhs = np.concatenate([eye + (1 - alpha) * h * A, h * B], -1)
    out = np.linalg.solve(left, rhs)
    m = A.shape[-1]
    return out[..., :m], out[..., m:]
