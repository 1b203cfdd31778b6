"""Public entry points that choose a formulation with ``method=``.

Each formulation lives in its own module and exposes functions with the same signature; this module
only dispatches, so every algorithm stays a pure function of (robot, arrays).
"""

from __future__ import annotations

from importlib import import_module

from robodyn.errors import InputError

_INVERSE = {
    "newton_euler": "robodyn.dynamics.newton_euler",
    "gibbs_appell": "robodyn.dynamics.gibbs_appell",
    "spatial_operator": "robodyn.dynamics.spatial_operator",
}
_INERTIA = {
    "composite": "robodyn.dynamics.composite",
    "newton_euler": "robodyn.dynamics.walker_orin",
    "gibbs_appell": "robodyn.dynamics.gibbs_appell",
}
_FORWARD = {
    "recursive": "robodyn.dynamics.recursive",
    "cholesky": "robodyn.dynamics.lagrange",
    "gibbs_appell": "robodyn.dynamics.gibbs_appell",
    "kalman": "robodyn.dynamics.spatial_operator",
}


def _pick(table: dict[str, str], method: str, what: str):
    if method not in table:
        raise InputError(f"{what}: unknown method '{method}'; choose one of {', '.join(table)}")
    return getattr(import_module(table[method]), what)


def inverse_dynamics(robot, q, qd, qdd, wrenches=None, gravity=None, method: str = "newton_euler"):
    """Inverse dynamic model Γ(q, q̇, q̈) (..., n); see :func:`robodyn.dynamics.newton_euler.inverse_dynamics`.

    ``method``: ``"newton_euler"`` (Khalil & Dombre [9.84]–[9.94]), ``"gibbs_appell"`` (Mata et al. eqs 14–16),
    ``"spatial_operator"`` (Rodriguez–Kozłowski eqs 3.24–3.33).  All give the same torques.
    """
    return _pick(_INVERSE, method, "inverse_dynamics")(robot, q, qd, qdd, wrenches=wrenches, gravity=gravity)


def inertia_matrix(robot, q, method: str = "composite"):
    """Inertia matrix A(q) (..., n, n), rotor inertias on the diagonal.

    ``method``: ``"composite"`` (composite links), ``"newton_euler"`` (Walker–Orin columns, [9.97]),
    ``"gibbs_appell"`` (Hessian of the Gibbs function, Mata et al. eq 22).
    """
    return _pick(_INERTIA, method, "inertia_matrix")(robot, q)


def forward_dynamics(robot, q, qd, tau, wrenches=None, gravity=None, method: str = "recursive"):
    """Direct dynamic model q̈ = A⁻¹(Γ − H) (..., n) [9.96].

    ``method``: ``"recursive"`` (O(n), Khalil & Dombre §9.7.2), ``"cholesky"`` (A and H then Cholesky),
    ``"gibbs_appell"`` (Mata et al.), ``"kalman"`` (Kozłowski, Kalman filter + Bryson–Frazier smoother).
    """
    return _pick(_FORWARD, method, "forward_dynamics")(robot, q, qd, tau, wrenches=wrenches, gravity=gravity)
