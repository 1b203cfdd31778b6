"""The floating-base inverse dynamic model linear in the standard parameters, τ = Y(q, v, a) K_f.

τ (..., n + 6) are the generalized forces of :func:`robodyn.dynamics.floating.floating_inverse_dynamics` (base
wrench in R_0 about O_0, then joint torques).  The parameter vector K_f is the base body's ten standard parameters
``XX0 XY0 XZ0 YY0 YZ0 ZZ0 MX0 MY0 MZ0 M0`` (in R_0 about O_0) followed by the fixed-base vector of
:func:`robodyn.standard_parameter_vector` (11 per frame, then 3 friction parameters per joint).

Y is the fixed-base regressor ([9.36], :func:`robodyn.regressor`) of the augmented robot of
:mod:`robodyn.dynamics.floating` (six virtual joints at zero, the base body on the sixth frame), without the
columns of the five massless virtual frames, of the base's rotor inertia and of the virtual joints' friction.  Its
first six rows (the base's own Newton–Euler equations) contain no rotor inertia or friction, and no joint torque:
they are what base-only identification uses (:mod:`robodyn.identification.floating`).
"""

from __future__ import annotations

import numpy as np

from robodyn.model.robot import check_robot
from robodyn.arrays import finite_result
from robodyn.dynamics.floating import augmented_robot, augmented_state
from robodyn.model.robot import PARAMETER_NAMES, Robot
from robodyn.parameters.regressor import regressor, standard_parameter_names, standard_parameter_vector

#: Virtual joints of the augmented robot (:mod:`robodyn.dynamics.floating`) before the robot's own.
_VIRTUAL = 6


def floating_parameter_names(robot: Robot, friction: bool = True) -> list[str]:
    """Names of the columns of :func:`floating_regressor`: ``XX0 .. M0`` (base body), then
    :func:`robodyn.standard_parameter_names`."""
    check_robot(robot)
    return [f"{p}0" for p in PARAMETER_NAMES] + standard_parameter_names(robot, friction)


def floating_parameter_vector(robot: Robot, friction: bool = True) -> np.ndarray:
    """K_f (10 + 11 nf (+ 3 n),): ``robot.base_params`` then :func:`robodyn.standard_parameter_vector`."""
    check_robot(robot)
    return np.concatenate([robot.base_params, standard_parameter_vector(robot, friction)])


def floating_regressor(robot: Robot, q, v, a, friction: bool = True, gravity=None) -> np.ndarray:
    """Regressor Y of the floating-base inverse dynamics, τ = Y K_f, batched.

    Parameters
    ----------
    robot : Robot (floating or mobile base)
    q : array_like (..., n + 7);  v, a : array_like (..., n + 6)  (free-flyer conventions, docs/floating-base.md)
    friction : bool
        Append the 3 n friction columns of the joints.
    gravity : array_like (3,) or (..., 3), optional — g in the world frame (m/s²).

    Returns
    -------
    ndarray (..., n + 6, 10 + 11 nf (+ 3 n)), columns as :func:`floating_parameter_names`:
        ``floating_regressor(robot, q, v, a) @ floating_parameter_vector(robot)`` equals
        ``floating_inverse_dynamics(robot, q, v, a)`` for a robot without Stribeck terms.
    """
    qa, qda, qdda, g = augmented_state(robot, q, v, a, gravity, "floating_regressor")
    D = regressor(augmented_robot(robot), qa, qda, qdda, friction=friction, gravity=g)
    return finite_result("floating_regressor", D[..., augmented_columns(robot, friction)])


def augmented_columns(robot: Robot, friction: bool = True) -> np.ndarray:
    """Indices, among :func:`robodyn.standard_parameter_names` of ``augmented_robot(robot)``, of the parameters
    K_f of :func:`floating_parameter_names`: the base body's ten (frame 6 of the augmented robot), the robot's
    frames (11 each), their joints' friction; the five massless virtual frames, the base's rotor inertia and the
    virtual joints' friction are left out."""
    nf = robot.nf
    base = 11 * (_VIRTUAL - 1) + np.arange(10)
    parts = [base, np.arange(11 * _VIRTUAL, 11 * (_VIRTUAL + nf))]
    if friction:
        start = 11 * (_VIRTUAL + nf) + 3 * _VIRTUAL
        parts.append(start + np.arange(3 * robot.n))
    return np.concatenate(parts)
