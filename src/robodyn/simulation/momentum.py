"""Dynamic simulation in the momentum-form state x̃ = [q, p], p = A(q) q̇ (De Luca, "State equations"; docs/dynamic-
model.md): the motion of :func:`robodyn.simulate` without Coriolis terms or joint accelerations, the state a momentum
observer measures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from robodyn.dynamics.momentum import momentum_state, momentum_state_derivative, velocity_state
from robodyn.errors import InputError, RobodynError
from robodyn.model.robot import Robot
from robodyn.simulation.integrate import INTEGRATORS, initial_state
from robodyn.simulation.step import saturation_limits


@dataclass(frozen=True)
class MomentumSimulation:
    """Result of :func:`simulate_momentum`.

    Attributes
    ----------
    t : ndarray (N,)         output times (s)
    q, qd, p : ndarray (N, n)  joint positions, velocities (q̇ = A⁻¹ p) and generalized momenta
    nfev : int               number of right-hand-side evaluations
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    p: np.ndarray
    nfev: int


def simulate_momentum(robot: Robot, torque, q0, qd0, t_eval, rtol: float = 1e-8, atol: float = 1e-8,
                      integrator: str = "RK45", saturate: bool = True) -> MomentumSimulation:
    """Integrate q̇ = A⁻¹ p, ṗ = τ + ½ ∂(q̇ᵀAq̇)/∂q − g − Γ_f from (q0, A(q0) q̇0) (De Luca's momentum state).

    Parameters
    ----------
    robot : Robot
        Its friction Γ_f(q̇) ([9.26]–[9.28]) is used as it is (discontinuous at q̇ = 0 when F_c ≠ 0).
    torque : callable or None
        ``torque(t, q, qd)`` → (n,) joint torques (N m | N); None: zero torque (free motion under gravity).
    q0, qd0, t_eval, rtol, atol : as :func:`robodyn.simulate`
    integrator : str
        A ``solve_ivp`` method name.
    saturate : bool, default True
        The applied torque is the command clipped at ±``robot.taulim``, as the drives do and as
        :func:`robodyn.simulate` does (robots without limits: unchanged); False applies it as commanded.

    Returns
    -------
    MomentumSimulation
    """
    q0, qd0, t_eval = initial_state(robot, q0, qd0, t_eval)
    n = robot.n
    limits = saturation_limits(robot, saturate)
    if torque is not None and not callable(torque):
        raise InputError("argument 'torque' must be None or a callable torque(t, q, qd) -> (n,)")
    if integrator not in INTEGRATORS:
        raise InputError(f"integrator = {integrator!r}; choose one of {', '.join(INTEGRATORS)}")

    def command(t, q, qd):
        if torque is None:
            return np.zeros(n)
        tau = np.asarray(torque(t, q, qd), dtype=float)
        if tau.shape != (n,) or not np.all(np.isfinite(tau)):
            raise InputError(f"torque(t, q, qd) returned shape {tau.shape} or non-finite values at t = {t}; it "
                             f"must return {n} finite torques (N m | N) for robot '{robot.name}'")
        return tau if limits is None else np.clip(tau, -limits, limits)

    def rhs(t, x):
        q, qd = x[:n], velocity_state(robot, x)[n:]
        return momentum_state_derivative(robot, x, command(t, q, qd))

    command(t_eval[0], q0, qd0)
    x0 = momentum_state(robot, q0, qd0)
    sol = solve_ivp(rhs, (t_eval[0], t_eval[-1]), x0, method=integrator, t_eval=t_eval, rtol=rtol, atol=atol)
    if not sol.success:
        raise RobodynError(f"momentum-form simulation of '{robot.name}' failed: {sol.message}")
    x = sol.y.T
    v = velocity_state(robot, x)
    return MomentumSimulation(t=sol.t, q=x[:, :n], qd=v[:, n:], p=x[:, n:], nfev=int(sol.nfev))
