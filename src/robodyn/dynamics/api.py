"""Public entry points that choose a formulation with ``method=``.

Each formulation lives in its own module and exposes functions with the same signature; this module
only dispatches, so every algorithm stays a pure function of (robot, arrays).
"""

from __future__ import annotations

import sys
from types import MappingProxyType
import warnings
from importlib import import_module

import numpy as np

from robodyn.arrays import as_real_array, into
from robodyn.errors import InputError
from robodyn.model.robot import Robot, check_robot

from robodyn.model.friction import with_friction
from robodyn.native import check_trig
from robodyn.dynamics import composite, floating, newton_euler, recursive

#: method -> module, the tables the analysis tools iterate over (keys kept for their reports).
INVERSE = MappingProxyType({
    "newton_euler": "robodyn.dynamics.newton_euler",
    "gibbs_appell": "robodyn.dynamics.gibbs_appell",
    "spatial_operator": "robodyn.dynamics.spatial_operator",
    "two_sided": "robodyn.dynamics.two_sided",
})
INERTIA = MappingProxyType({
    "composite": "robodyn.dynamics.composite",
    "walker_orin": "robodyn.dynamics.walker_orin",
    "gibbs_appell": "robodyn.dynamics.gibbs_appell",
})
FORWARD = MappingProxyType({
    "recursive": "robodyn.dynamics.recursive",
    "cholesky": "robodyn.dynamics.lagrange",
    "gibbs_appell": "robodyn.dynamics.gibbs_appell",
    "spatial_operator": "robodyn.dynamics.spatial_operator",
})


#: The names users call each formulation by (one per formulation across inverse, inertia and forward dynamics,
#: Pinocchio's names as aliases) -> key of the dispatch tables above.
NAMES = MappingProxyType({
    "inverse_dynamics": {"newton_euler": "newton_euler", "rnea": "newton_euler", "gibbs_appell": "gibbs_appell",
                         "spatial_operator": "spatial_operator", "two_sided": "two_sided"},
    "inertia_matrix": {"composite": "composite", "crba": "composite", "walker_orin": "walker_orin",
                       "gibbs_appell": "gibbs_appell"},
    "forward_dynamics": {"recursive": "recursive", "aba": "recursive", "cholesky": "cholesky",
                         "gibbs_appell": "gibbs_appell", "spatial_operator": "spatial_operator"},
})
#: Old names that keep working for one release, with a DeprecationWarning: (function, old) -> new name.
_DEPRECATED = MappingProxyType({
    ("inertia_matrix", "newton_euler"): "walker_orin",  # it runs Walker–Orin, not the Newton–Euler recursion
    ("forward_dynamics", "kalman"): "spatial_operator",  # the Kozłowski formulation has one name
})
_TABLES = MappingProxyType({"inverse_dynamics": INVERSE, "inertia_matrix": INERTIA, "forward_dynamics": FORWARD})


def method_key(what: str, method: str) -> str:
    """The dispatch-table key of ``method`` for function ``what`` (aliases resolved, old names warned about)."""
    names = NAMES[what]
    if method in names:
        return names[method]
    new = _DEPRECATED.get((what, method))
    if new is not None:
        warnings.warn(f"{what}(method={method!r}) is deprecated; use method={new!r}", DeprecationWarning, stacklevel=4)
        return names[new]
    raise InputError(f"{what}: unknown method {method!r}; choose one of {', '.join(names)}")


def _pick(what: str, method: str):
    name = _TABLES[what][method_key(what, method)]
    module = sys.modules.get(name) or import_module(name)  # Python's own import table: no import machinery per call
    return getattr(module, what)


def inverse_dynamics(robot, q, qd, qdd, wrenches=None, gravity=None, method: str = "newton_euler",
                     friction: bool = True, out=None, trig: str = "exact"):
    """Inverse dynamic model Γ = A(q) q̈ + C(q, q̇) q̇ + Q(q) + Γ_f(q̇) + Ia q̈ − (wrench terms)  [9.6], [9.94].

    Parameters
    ----------
    robot : Robot
    q, qd, qdd : array_like (..., n)
        Joint positions (rad | m), velocities (rad/s | m/s), accelerations (rad/s² | m/s²); leading axes are
        batch axes and broadcast.
    wrenches : array_like (..., nf, 6), optional
        Row j = [f_ej; m_ej], force (N) and moment (N m) exerted BY link j ON the environment, in R_j, moment
        about O_j.
    gravity : array_like (3,) or (..., 3), optional
        g in the base frame R_0 (m/s²); default ``robot.gravity``.
    method : str
        ``"newton_euler"`` or ``"rnea"`` (Khalil & Dombre [9.84]–[9.94]), ``"gibbs_appell"`` (Mata et al.
        eqs 14–16), ``"spatial_operator"`` (Rodriguez–Kozłowski eqs 3.24–3.33) or ``"two_sided"`` (Rodriguez's
        two-sided form with Kozłowski's corrected bias force, eqs 3.1–3.14).  All give the same torques.
    friction : bool
        False leaves the robot's joint friction Γ_f [9.26]–[9.28] out (rotor inertias stay), e.g. to compare
        with Pinocchio's rnea on a URDF robot whose <dynamics> gave it friction.
    out : ndarray, optional
        The result's buffer, written in place and returned (no other result array is made on robodyn's native
        kernels): a writeable C-contiguous array of the result's shape and dtype; checked on entry
        (:class:`InputError` otherwise).  Equal bit for bit to the result without it.
    trig : str
        ``"exact"`` (default): the sines and cosines of the joint angles are the C library's (the values of
        NumPy's np.sin / np.cos) on every path.  ``"fast"``: robodyn's generic
        compiled kernels compute them four states at a time by their own vectorised sincos, within 1 ulp of the C
        library's (results differ from the default's by rounding, ~1e-15 relative; docs/scaling.md), one state
        equal to its row of a batch bit for bit.  A permission, not a request: where a call does not run those
        kernels (another ``method``, float32, one state with wrenches, a floating base with wrenches,
        ``ROBODYN_NATIVE=0``), the result is computed as by default.

    Returns
    -------
    ndarray (..., n)
        Joint torques (N m) / forces (N), friction and rotor inertia included; float32 if every input is.
        For a robot with a floating or mobile base (``robot.base``), the free-flyer arrays of
        :func:`robodyn.floating.floating_inverse_dynamics`: q (..., n + 7), qd, qdd (..., n + 6) → (..., n + 6).

    Raises
    ------
    InputError
        A wrong shape, NaN/inf in an argument (named), an unknown ``method`` (the choices are listed) or ``trig``.
    """
    if friction is not True:
        robot = with_friction(robot, friction)
    if method == "newton_euler" and getattr(robot, "base", "fixed") == "fixed":  # the default: no dispatch cost
        return newton_euler.inverse_dynamics(robot, q, qd, qdd, wrenches, gravity, out, trig)
    check_trig(trig)
    if getattr(robot, "base", "fixed") != "fixed":  # free-flyer arrays (docs/floating-base.md)
        return floating.floating_inverse_dynamics(robot, q, qd, qdd, wrenches, gravity, out=out, trig=trig)
    return into("inverse_dynamics", out, _pick("inverse_dynamics", method)(robot, q, qd, qdd, wrenches, gravity))


def inertia_matrix(robot, q, method: str = "composite", out=None, trig: str = "exact"):
    """Inertia matrix A(q) of the kinetic energy E = ½ q̇ᵀ A q̇ [9.5], rotor inertias Ia on the diagonal.

    Parameters
    ----------
    robot : Robot
    q : array_like (..., n)
        Joint positions (rad | m); leading axes are batch axes.
    method : str
        ``"composite"`` or ``"crba"`` (composite links, Khalil & Dombre Appendix 8), ``"walker_orin"`` (columns
        Γ(q, 0, u_i) by Newton–Euler, [9.97]; ``"newton_euler"`` is its deprecated name) or ``"gibbs_appell"``
        (Hessian of the Gibbs function, Mata et al. eq 22).
    out : ndarray, optional
        The result's buffer, as in :func:`inverse_dynamics`.
    trig : str
        ``"exact"`` (default) or ``"fast"``, as in :func:`inverse_dynamics`; here a float64 batch of a free flyer
        takes ``"fast"`` too.

    Returns
    -------
    ndarray (..., n, n)
        Symmetric positive definite A (kg m², kg m or kg by joint types), in the order of q; float32 if q is.
        For a robot with a floating base: (..., n + 6, n + 6) of q (..., n + 7) (free-flyer arrays).

    Raises
    ------
    InputError
        A wrong shape or NaN/inf in ``q``, or an unknown ``method`` (the choices are listed) or ``trig``.
    """
    if method == "composite" and getattr(robot, "base", "fixed") == "fixed":  # the default: straight to the function
        return composite.inertia_matrix(robot, q, out, trig)
    check_trig(trig)
    if getattr(robot, "base", "fixed") != "fixed":
        return floating.floating_inertia_matrix(robot, q, out=out, trig=trig)
    return into("inertia_matrix", out, _pick("inertia_matrix", method)(robot, q))


def forward_dynamics(robot, q, qd, tau, wrenches=None, gravity=None, method: str = "recursive",
                     friction: bool = True, out=None, trig: str = "exact"):
    """Direct dynamic model q̈ = A⁻¹(q) (Γ − H(q, q̇))  [9.96], H with friction and wrenches [9.95].

    Parameters
    ----------
    robot : Robot
    q, qd : array_like (..., n)
        Joint positions (rad | m) and velocities (rad/s | m/s); leading axes are batch axes.
    tau : array_like (..., n)
        Joint torques (N m) / forces (N) Γ.
    wrenches : array_like (..., nf, 6), optional
        As in :func:`inverse_dynamics`: exerted BY link j ON the environment, in R_j, moment about O_j.
    gravity : array_like (3,) or (..., 3), optional
        g in the base frame R_0 (m/s²); default ``robot.gravity``.
    method : str
        ``"recursive"`` or ``"aba"`` (O(n), Khalil & Dombre §9.7.2, [9.100]–[9.124]), ``"cholesky"`` (A and H
        then Cholesky, [9.95]–[9.96]), ``"gibbs_appell"`` (Mata et al. §3, eq 17) or ``"spatial_operator"``
        (Kozłowski, Kalman filter and Bryson–Frazier smoother, eqs 3.45–3.58; ``"kalman"`` is its deprecated
        name).
    friction : bool
        False leaves the robot's joint friction out (as in :func:`inverse_dynamics`).
    out : ndarray, optional
        The result's buffer, as in :func:`inverse_dynamics`.
    trig : str
        ``"exact"`` (default) or ``"fast"``, as in :func:`inverse_dynamics`.

    Returns
    -------
    ndarray (..., n)
        Joint accelerations (rad/s² | m/s²); float32 if every input is.  For a robot with a floating base, the
        free-flyer arrays of :func:`robodyn.floating.floating_forward_dynamics` (q (..., n + 7), qd, tau (..., n + 6)).

    Raises
    ------
    InputError
        A wrong shape, NaN/inf in an argument (named), or an unknown ``method`` (the choices are listed) or ``trig``.
    ModelError
        A singular model: a joint that moves only massless links and has no rotor inertia.
    """
    if friction is not True:
        robot = with_friction(robot, friction)
    if method == "recursive" and getattr(robot, "base", "fixed") == "fixed":  # the default: straight to the function
        return recursive.forward_dynamics(robot, q, qd, tau, wrenches, gravity, out, trig)
    check_trig(trig)
    if getattr(robot, "base", "fixed") != "fixed":
        return floating.floating_forward_dynamics(robot, q, qd, tau, wrenches, gravity, out=out, trig=trig)
    return into("forward_dynamics", out, _pick("forward_dynamics", method)(robot, q, qd, tau, wrenches, gravity))


def state_derivative(robot: Robot, x, tau, *args, wrenches=None, gravity=None, method: str = "recursive") -> np.ndarray:
    """Nonlinear state equation ẋ = [q̇; A⁻¹(Γ − H)] with x = [q; q̇] [9.98], for ODE integrators.

    Parameters
    ----------
    x : array_like (..., 2n)
        State [q, q̇].
    tau : array_like (..., n)
        Joint torques Γ.
    method : str
        Any method of :func:`robodyn.forward_dynamics` ("recursive", "cholesky", ...).
    wrenches, gravity : optional, as in :func:`robodyn.forward_dynamics`.

    The arguments follow the order of :func:`robodyn.forward_dynamics` (…, wrenches, gravity, method), by keyword;
    the old positional order (x, tau, method, wrenches, gravity) still works, with a DeprecationWarning.

    Returns
    -------
    ndarray (..., 2n)  [q̇, q̈].
    """
    if args:
        if len(args) > 3:
            raise InputError(f"state_derivative takes x, tau and keyword arguments; got {2 + len(args)} positional ones")
        warnings.warn("state_derivative(robot, x, tau, method, wrenches, gravity) positional arguments are "
                      "deprecated; pass wrenches=, gravity=, method= by keyword", DeprecationWarning, stacklevel=2)
        method, wrenches, gravity = args + (method, wrenches, gravity)[len(args):]

    n = check_robot(robot).n
    xa = as_real_array("x", x)
    if xa.ndim == 0 or xa.shape[-1] != 2 * n:
        raise InputError(
            f"argument 'x' has shape {xa.shape}; robot '{robot.name}' has n = {n}, so the state x = [q, qd] "
            f"must have shape (..., {2 * n})"
        )
    q, qd = xa[..., :n], xa[..., n:]
    qdd = forward_dynamics(robot, q, qd, tau, wrenches=wrenches, gravity=gravity, method=method)
    # q̇ was checked finite by forward_dynamics, which checks its q̈ too: q̇ only takes q̈'s dtype and batch shape
    qd = qd.astype(qdd.dtype, copy=False)
    return np.concatenate([qd if qd.shape == qdd.shape else np.broadcast_to(qd, qdd.shape), qdd], -1)
