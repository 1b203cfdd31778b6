"""The joint friction law of the model, Γ_f(q̇) of Khalil & Dombre [9.26]–[9.28] (Coulomb, viscous, offset and
Stribeck terms), on checked arrays or on component scalars of any backend: the one statement of the law, used by
every formulation, the native kernels' callers and the single-state kernels."""

from __future__ import annotations

import numpy as np

from robodyn.errors import InputError
from robodyn.model.derived import frozen
from robodyn.model.robot import Robot
from robodyn.model.workspace import WORKSPACE
from robodyn.spatial import NUMPY, ScalarBackend


def with_friction(robot: Robot, friction) -> Robot:
    """``robot`` itself for ``friction=True``; for ``friction=False`` the same robot with every friction coefficient
    (F_c, F_v, F_off, Stribeck) zero and the rotor inertias kept, built once per robot (the ``friction=`` switch
    of the dynamics functions: a URDF's <dynamics> friction, which Pinocchio's rnea leaves out, switched off)."""
    if friction is True:
        return robot
    if friction is not False:
        raise InputError(f"argument 'friction' = {friction!r}; give True (the robot's friction) or False (none)")
    return WORKSPACE.value(robot, "without_friction", lambda: _without_friction(robot))


def _without_friction(robot: Robot) -> Robot:
    zero = np.zeros(robot.nf)
    return robot.replace(Fc=zero, Fv=zero, Foff=zero, Fst=zero)


def friction_of(robot: Robot, qd: np.ndarray) -> np.ndarray:
    """Γ_f(q̇) (..., n) of checked velocities (see :func:`friction_torques`), in their dtype."""
    coefficients = WORKSPACE.value(robot, "friction_coefficients", lambda: _coefficients(robot))
    dt = qd.dtype
    return friction_law(qd, *(c if c.dtype == dt else c.astype(dt) for c in coefficients), NUMPY)


def _coefficients(robot: Robot) -> tuple:
    """(F_c, F_v, F_off, F_st, F_st − F_c, k_st, B_st) of the joints (n each, float64), once per robot."""
    Fc, Fv, Foff, Fst, kst, Bst = (getattr(robot, k)[robot.joint_frames]
                                   for k in ("Fc", "Fv", "Foff", "Fst", "kst", "Bst"))
    return tuple(frozen(c) for c in (Fc, Fv, Foff, Fst, Fst - Fc, kst, Bst))  # read-only: shared by every call


def friction_components(robot: Robot, qd, backend: ScalarBackend) -> list:
    """Γ_f of every joint on component scalars (one per joint variable), by :func:`friction_law`."""
    out = []
    for k, j in enumerate(robot.joint_frames):
        Fc, Fv, Foff, Fst, kst, Bst = (float(getattr(robot, key)[j]) for key in ("Fc", "Fv", "Foff", "Fst", "kst", "Bst"))
        out.append(friction_law(qd[k], Fc, Fv, Foff, Fst, Fst - Fc, kst, Bst, backend))
    return out


def friction_law(qd, Fc, Fv, Foff, Fst, dF, kst, Bst, backend: ScalarBackend):
    """Γ_f = F_c sign(q̇) + F_v q̇ + F_off + (F_st − F_c) sign(q̇) exp(−k_st |q̇|^B_st)  [9.26]–[9.28], elementwise.

    The coefficients are arrays over the joints (with q̇ (..., n)) or scalars of one joint; ``dF`` = F_st − F_c.
    The Stribeck term counts only where F_st ≠ 0.
    """
    s = backend.sign(qd)
    tau = Fc * s + Fv * qd + Foff
    if Fst.any() if isinstance(Fst, np.ndarray) else Fst != 0:  # the method: np.any's wrapper costs 5 µs a call
        tau = tau + (Fst != 0) * (dF * s * backend.exp(-kst * abs(qd) ** Bst))
    return tau
