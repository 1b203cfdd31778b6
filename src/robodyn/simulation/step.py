"""One integration step of ẋ = f(x, u) = (q̇, A⁻¹(q)(u − H(q, q̇))), the direct dynamic model [9.96], x = (q, q̇),
under u = Γ held over the step and by default saturated at the robot's ``taulim`` where its model file gives one
(:func:`saturation_limits`, shared with :func:`robodyn.simulate`); docs/simulation-control.md §4. Fixed-step
schemes, batched over the leading axes: ``"rk4"`` (classical Runge–Kutta, local error O(Δt⁵)),
``"semi_implicit_euler"`` (q̇_{k+1} = q̇_k + Δt q̈_k, then q_{k+1} = q_k + Δt q̇_{k+1}: symplectic) and ``"euler"``
(x_{k+1} = x_k + Δt f(x_k, u_k), as ``discretize``).
"""

from __future__ import annotations

import numpy as np

from robodyn.arrays import as_real_array, finite_array, finite_result
from robodyn.dynamics import api
from robodyn.dynamics.discrete import check_sample_time
from robodyn.errors import InputError
from robodyn.model.robot import Robot, check_robot

METHODS = ("rk4", "semi_implicit_euler", "euler")


def saturation_limits(robot: Robot, saturate, torque_limits=None) -> np.ndarray | None:
    """The symmetric limits L (n,) at which the applied torque saturates, Γ = clip(u, −L, L) (N m | N), or None.

    ``saturate`` True: ``torque_limits`` (n positive numbers, inf for an unlimited joint) when given, else the
    robot's ``taulim``; None when no joint is limited (nothing to clip). ``saturate`` False: None (the torque is
    applied as commanded), and ``torque_limits`` must not be given.
    """
    if not isinstance(saturate, (bool, np.bool_)):
        raise InputError(f"saturate = {saturate!r}; give True (the torque saturates at ±torque_limits, default the "
                         "robot's taulim) or False (applied as commanded)")
    n = robot.n
    if torque_limits is not None:
        if not saturate:
            raise InputError("torque_limits is given with saturate=False, which would ignore it; drop one of them")
        limits = as_real_array("torque_limits", torque_limits).astype(float)
        if limits.shape != (n,) or np.any(~(limits > 0)):           # NaN fails limits > 0 too
            raise InputError(f"torque_limits = {torque_limits!r}; give {n} positive numbers (N m | N), one per joint "
                             "(inf for an unlimited joint)")
    elif saturate:
        limits = np.array(robot.taulim, dtype=float)
    else:
        return None
    return None if np.all(np.isinf(limits)) else limits


def step(robot: Robot, x, u, dt, method: str = "rk4", wrenches=None, gravity=None, friction: bool = True,
         dynamics: str = "recursive", saturate: bool = True) -> np.ndarray:
    """The state x_{k+1} = (q, q̇) one step ``dt`` after x_k under the torque u held over the step.

    Parameters
    ----------
    robot : Robot (fixed base)
    x : array_like (..., 2n), the state [q; q̇] (rad | m, rad/s | m/s); leading axes are batch axes
    u : array_like (..., n), the joint torques Γ held over the step (N m | N)
    dt : float, the step Δt > 0 (s)
    method : 'rk4' (default), 'semi_implicit_euler' or 'euler' (module docstring)
    wrenches, gravity, friction : as :func:`robodyn.forward_dynamics` (wrenches constant over the step)
    dynamics : the forward-dynamics method of :func:`robodyn.forward_dynamics` ('recursive', 'cholesky', ...)
    saturate : bool, default True
        Apply Γ = clip(u, −taulim, taulim), the robot's torque limits (N m | N), to every sample; no effect on a
        robot without ``taulim``. False applies u as given. Which samples saturated: ``np.abs(u) > robot.taulim``.

    Returns
    -------
    ndarray (..., 2n)
        x_{k+1}; float32 when x and u are.

    Raises
    ------
    InputError
        Wrong shapes, NaN/inf, a non-positive ``dt``, an unknown ``method`` or a ``saturate`` other than a bool.
    """
    check_robot(robot)
    limits = saturation_limits(robot, saturate)
    if robot.base != "fixed":
        raise InputError(f"step: robot '{robot.name}' has a {robot.base} base; the state [q; qd] of shape (..., 2n) "
                         "is that of a fixed-base robot")
    if method not in METHODS:
        raise InputError(f"method = {method!r}; choose one of {', '.join(METHODS)}")
    h = check_sample_time(dt)
    n = robot.n
    x_raw, u_raw = as_real_array("x", x), as_real_array("u", u)
    dtype = np.float32 if x_raw.dtype == np.float32 and u_raw.dtype == np.float32 else np.float64
    x, u = finite_array("x", x_raw, dtype), finite_array("u", u_raw, dtype)
    if x.shape[-1:] != (2 * n,):
        raise InputError(f"x has shape {x.shape}; give the state [q; qd] of shape (..., {2 * n}) for robot "
                         f"'{robot.name}'")
    if u.shape[-1:] != (n,):
        raise InputError(f"u has shape {u.shape}; give the joint torques of shape (..., {n}) for robot "
                         f"'{robot.name}'")
    try:
        batch = np.broadcast_shapes(x.shape[:-1], u.shape[:-1])
    except ValueError:
        raise InputError(f"the batch axes of x {x.shape} and u {u.shape} do not broadcast") from None
    if limits is not None:
        u = np.clip(u, -limits.astype(dtype), limits.astype(dtype))
    x, u = np.broadcast_to(x, batch + (2 * n,)), np.broadcast_to(u, batch + (n,))
    h = dtype(h)

    def accel(q, qd):
        return api.forward_dynamics(robot, q, qd, u, wrenches=wrenches, gravity=gravity, method=dynamics,
                                    friction=friction)

    q, qd = x[..., :n], x[..., n:]
    if method == "euler":
        q1, qd1 = q + h * qd, qd + h * accel(q, qd)
    elif method == "semi_implicit_euler":
        qd1 = qd + h * accel(q, qd)
        q1 = q + h * qd1
    else:
        k1v, k1a = qd, accel(q, qd)
        k2v = qd + h / 2 * k1a
        k2a = accel(q + h / 2 * k1v, k2v)
        k3v = qd + h / 2 * k2a
        k3a = accel(q + h / 2 * k2v, k3v)
        k4v = qd + h * k3a
        k4a = accel(q + h * k3v, k4v)
        q1 = q + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        qd1 = qd + h / 6 * (k1a + 2 * k2a + 2 * k3a + k4a)
    return finite_result("step", np.concatenate([q1, qd1], -1).astype(dtype, copy=False))
