"""Open-loop simulation: integrate q̈ = forward_dynamics(q, q̇, Γ(t)) with scipy's solve_ivp."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from robodyn.dynamics import api
from robodyn.errors import InputError, RobodynError
from robodyn.model.robot import Robot


@dataclass(frozen=True)
class Simulation:
    """Result of :func:`simulate`.

    Attributes
    ----------
    method : str            forward-dynamics method
    t : ndarray (N,)        output times (s)
    q, qd, qdd : ndarray (N, n)  joint positions, velocities, accelerations at ``t`` (q̈ from the forward model)
    nfev : int              number of right-hand-side evaluations
    seconds : float         wall-clock time of the integration (s)
    """

    method: str
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    nfev: int
    seconds: float


#: solve_ivp's methods.
_INTEGRATORS = ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")


def simulate(
    robot: Robot, torque, q0, qd0, t_eval, method: str = "recursive", rtol: float = 1e-6, atol: float = 1e-6,
    integrator: str = "RK45",
) -> Simulation:
    """Integrate the direct dynamic model [9.96] from (q0, q̇0) under the torques Γ(t).

    The state is y = [q; q̇] and ẏ = [q̇; A⁻¹(Γ(t) − H(q, q̇))], evaluated by
    ``rd.forward_dynamics(..., method=method)``.

    Parameters
    ----------
    torque : callable t -> (n,) array; it must also accept an array (N,) of times and return (N, n)
    q0, qd0 : array_like (n,)
    t_eval : array_like (N,), increasing output times, the first is the initial time (s)
    method : forward-dynamics method name
    rtol, atol : solve_ivp tolerances
    integrator : solve_ivp method name (default RK45, Dormand–Prince 5(4)) or an OdeSolver subclass

    Returns
    -------
    Simulation

    Raises
    ------
    RobodynError
        When the integrator fails (the message is scipy's).
    """
    n = robot.n
    q0 = np.asarray(q0, dtype=float)
    qd0 = np.asarray(qd0, dtype=float)
    if q0.shape != (n,) or qd0.shape != (n,):
        raise InputError(f"q0 and qd0 must have shape ({n},) for robot '{robot.name}'")
    for name, value in (("q0", q0), ("qd0", qd0)):
        if not np.all(np.isfinite(value)):
            raise InputError(f"argument '{name}' contains NaN or inf; give finite values")
    t_eval = np.asarray(t_eval, dtype=float)
    if t_eval.ndim != 1 or t_eval.size < 2 or not np.all(np.isfinite(t_eval)) or np.any(np.diff(t_eval) <= 0):
        raise InputError("t_eval must be an increasing 1-D array of at least 2 finite times (s)")
    if isinstance(integrator, str) and integrator not in _INTEGRATORS:  # an OdeSolver subclass is passed through
        raise InputError(f"integrator = {integrator!r}; choose one of {', '.join(_INTEGRATORS)}")

    def rhs(t, y):
        qdd = api.forward_dynamics(robot, y[:n], y[n:], torque(t), method=method)
        return np.concatenate([y[n:], qdd])

    start = time.perf_counter()
    sol = solve_ivp(rhs, (t_eval[0], t_eval[-1]), np.concatenate([q0, qd0]), method=integrator, t_eval=t_eval,
                    rtol=rtol, atol=atol)
    seconds = time.perf_counter() - start
    if not sol.success:
        raise RobodynError(f"simulation with method '{method}' failed: {sol.message}")
    q, qd = sol.y[:n].T, sol.y[n:].T
    qdd = api.forward_dynamics(robot, q, qd, torque(sol.t), method=method)
    return Simulation(method=method, t=sol.t, q=q, qd=qd, qdd=qdd, nfev=int(sol.nfev), seconds=seconds)
