"""Numerical checks of the structural properties of the dynamic model (Khalil & Dombre §9.3.3.3, De Luca).

- A(q) is symmetric and positive definite (property a);
- Ȧ − 2C is skew-symmetric for the Christoffel C of [9.7] (property e);
- passivity (property h): q̇ᵀ(Ȧ − 2C)q̇ = 0, so dE_total/dt = q̇ᵀ(Γ − Γ_f) and friction only dissipates, q̇ᵀΓ_f ≥ 0.

Each check returns a dataclass holding the numbers per sample (batch axes of q) and a verdict at a stated
relative tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn.model.arguments import joint_arrays
from robodyn.dynamics import api
from robodyn.dynamics.lagrange import coriolis_matrix, inertia_matrix_derivative
from robodyn.dynamics.newton_euler import friction_torques
from robodyn.model.robot import Robot

_TINY = np.finfo(float).tiny


@dataclass(frozen=True)
class InertiaCheck:
    """Symmetry and positive definiteness of A(q); arrays have the batch shape of q.

    asymmetry : max |A − Aᵀ| / max |A|;  eig_min, eig_max : extreme eigenvalues of (A + Aᵀ)/2;
    condition : eig_max / eig_min.  ``symmetric``: every asymmetry ≤ rtol; ``positive_definite``: every
    eig_min > rtol · eig_max (a numerically singular A, e.g. a massless link without rotor, fails).
    """

    asymmetry: np.ndarray
    eig_min: np.ndarray
    eig_max: np.ndarray
    condition: np.ndarray
    symmetric: bool
    positive_definite: bool
    rtol: float

    @property
    def ok(self) -> bool:
        return self.symmetric and self.positive_definite


@dataclass(frozen=True)
class SkewCheck:
    """Skew-symmetry of N = Ȧ − 2C: residual = max |N + Nᵀ| / (max |Ȧ| + 2 max |C|), per sample."""

    residual: np.ndarray
    skew_symmetric: bool
    rtol: float

    @property
    def ok(self) -> bool:
        return self.skew_symmetric


@dataclass(frozen=True)
class PassivityCheck:
    """Passivity: power residual |q̇ᵀ(Ȧ − 2C)q̇| / (‖q̇‖² (max |Ȧ| + 2 max |C|)) and friction power q̇ᵀΓ_f (W)."""

    power_residual: np.ndarray
    friction_power: np.ndarray
    lossless: bool
    dissipative: bool
    rtol: float

    @property
    def ok(self) -> bool:
        return self.lossless and self.dissipative


def check_inertia_matrix(robot: Robot, q, rtol: float = 1e-10, method: str = "composite") -> InertiaCheck:
    """Check that A(q) (..., n, n) is symmetric and positive definite (property a of §9.3.3.3)."""
    A = api.inertia_matrix(robot, q, method=method)
    scale = np.maximum(np.max(np.abs(A), axis=(-2, -1)), _TINY)
    asym = np.max(np.abs(A - np.swapaxes(A, -1, -2)), axis=(-2, -1)) / scale
    eig = np.linalg.eigvalsh(0.5 * (A + np.swapaxes(A, -1, -2)))
    lo, hi = eig[..., 0], eig[..., -1]
    with np.errstate(divide="ignore"):
        cond = np.where(lo > 0, hi / np.where(lo > 0, lo, 1), np.inf)
    return InertiaCheck(asym, lo, hi, cond, bool(np.all(asym <= rtol)), bool(np.all(lo > rtol * hi)), rtol)


def check_skew_symmetry(robot: Robot, q, qd, rtol: float = 1e-10) -> SkewCheck:
    """Check that N = Ȧ − 2C(q, q̇) is skew-symmetric, N + Nᵀ = 0 (property e, [9.7])."""
    N, scale = _N(robot, q, qd)
    res = np.max(np.abs(N + np.swapaxes(N, -1, -2)), axis=(-2, -1)) / scale
    return SkewCheck(res, bool(np.all(res <= rtol)), rtol)


def check_passivity(robot: Robot, q, qd, rtol: float = 1e-10) -> PassivityCheck:
    """Check q̇ᵀ(Ȧ − 2C)q̇ = 0 (no power from the Coriolis/centrifugal terms) and q̇ᵀΓ_f(q̇) ≥ 0 (property h).

    ``dissipative`` is judged on viscous and Coulomb friction plus Stribeck; a nonzero offset F_off can supply
    power, which the check then reports.
    """
    _, _, a = joint_arrays(robot, q=q, qd=qd)
    N, scale = _N(robot, a["q"], a["qd"])
    qd_ = a["qd"]
    power = np.einsum("...i,...ij,...j->...", qd_, N, qd_)
    res = np.abs(power) / (scale * np.maximum(np.sum(qd_ * qd_, -1), _TINY))
    fpow = np.sum(qd_ * friction_torques(robot, qd_), -1)
    return PassivityCheck(res, fpow, bool(np.all(res <= rtol)), bool(np.all(fpow >= 0)), rtol)


def _N(robot: Robot, q, qd):
    Ad = inertia_matrix_derivative(robot, q, qd)
    C = coriolis_matrix(robot, q, qd)
    scale = np.max(np.abs(Ad), axis=(-2, -1)) + 2 * np.max(np.abs(C), axis=(-2, -1))
    return Ad - 2 * C, np.maximum(scale, _TINY)
