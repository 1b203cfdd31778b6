"""Optimal point-to-point motion under torque bounds (De Luca, "Optimal point-to-point robot motion").

Between two configurations at rest, find the minimum-time motion, or the minimum-energy motion of a given
duration, and the command torques that execute it, by direct collocation on a cubic spline: the unknowns are
the positions q_1 … q_{N−1} at N − 1 interior nodes t_k = k T / N (and T for minimum time); q(t) is the clamped
cubic spline through q_0 = A, the nodes and q_N = B, at rest at both ends, so that q̇_k and q̈_k are linear in
the nodes (q̇ = D_v q / h, q̈ = D_a q / h², h = T / N) and the kinematic relations hold exactly — in particular
q̇_{k+1} − q̇_k = h (q̈_k + q̈_{k+1}) / 2, the trapezoidal rule, since q̈ is piecewise linear. The torque
τ_k = Γ(q_k, q̇_k, q̈_k) of the inverse dynamic model (Khalil & Dombre [9.84]–[9.94]) is bounded, |τ_kj| ≤ L_j, at
every node. scipy's SLSQP solves the resulting nonlinear program; the torque Jacobian is built from the inertia
matrix (∂τ/∂q̈ = A) and central differences in q and q̇ taken on all nodes at once, chained through D_v, D_a.

The energy is E = ∫₀ᵀ τᵀ τ dt (N² m² s), the usual "minimum-energy" criterion of the literature (the integral of
the squared command torques, proportional to the copper losses of the motors).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn.model.robot import check_robot
from robodyn.dynamics.api import inertia_matrix
from robodyn.dynamics.newton_euler import gravity_torques, inverse_dynamics
from robodyn.errors import InputError, RobodynError
from robodyn.model.robot import Robot
from robodyn.simulation.time_scaling import InfeasibleLimitsError, torque_limits_of, save_figure, time_scale
from robodyn.simulation.trajectories import RestToRest, vector_argument


class OptimizationError(RobodynError, RuntimeError):
    """The optimizer stopped without a solution that meets the constraints (the message names the limit hit)."""


@dataclass(frozen=True)
class OptimalMotion:
    """Result of :func:`optimal_motion`.

    Attributes
    ----------
    objective : "time" | "energy"
    duration : float            T (s); the minimum time for ``objective="time"``
    energy : float              E = ∫ τᵀτ dt by the trapezoidal rule on the nodes (N² m² s)
    t : ndarray (N+1,)          node times (s)
    q, qd, qdd : ndarray (N+1, n)   motion at the nodes
    torques : ndarray (N+1, n)  command torques τ_k = Γ(q_k, q̇_k, q̈_k) (N m | N)
    limits : ndarray (n,)
    kkt_residual : float        ‖∇f − Σ λ_i ∇c_i‖ / (1 + |f|) with least-squares multipliers λ ≥ 0 of the active
                                torque bounds: first-order optimality, ~0 at a KKT point
    iterations : int
    """

    objective: str
    duration: float
    energy: float
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    torques: np.ndarray
    limits: np.ndarray
    kkt_residual: float
    iterations: int

    def plot(self, path) -> None:
        """Write a PNG: joint positions and torques over their limits against time (written atomically)."""
        from matplotlib.figure import Figure

        fig = Figure(figsize=(7, 5.5))
        ax1, ax2 = fig.subplots(2, 1, sharex=True)
        for j in range(self.q.shape[-1]):
            ax1.plot(self.t, self.q[:, j], "o-", ms=2, lw=1, label=f"q{j + 1}")
            ax2.plot(self.t, self.torques[:, j] / self.limits[j], "o-", ms=2, lw=1, label=f"τ{j + 1} / L{j + 1}")
        ax1.set_ylabel("q (rad)")
        ax1.legend(fontsize=7)
        ax2.set_ylabel("torque / limit")
        ax2.set_xlabel("t (s)")
        ax2.legend(fontsize=7)
        what = "minimum time" if self.objective == "time" else "minimum energy"
        fig.suptitle(f"{what}: T = {self.duration:.4g} s, E = ∫τᵀτ dt = {self.energy:.4g}")
        fig.tight_layout()
        save_figure(fig, path)


class _Transcription:
    """Variables z = [T?, q_1 … q_{N−1} (interior nodes, (N−1)·n)]; q̇, q̈ at the nodes from the clamped spline."""

    def __init__(self, robot, q0, qf, L, nodes, duration):
        from scipy.interpolate import CubicSpline

        self.robot, self.q0, self.qf, self.L = robot, q0, qf, L
        self.N, self.n = nodes, robot.n
        self.free_T = duration is None
        self.T_fixed = duration
        self.off = 1 if self.free_T else 0
        self.size = self.off + (nodes - 1) * robot.n
        # node derivatives of the clamped spline through unit-spaced knots: q̇ = Dv q / h, q̈ = Da q / h²
        k = np.arange(nodes + 1, dtype=float)
        basis = CubicSpline(k, np.eye(nodes + 1), axis=0, bc_type="clamped")
        self.Dv, self.Da = basis(k, 1), basis(k, 2)

    def split(self, z):
        """T and q, q̇, q̈ (N+1, n) at the nodes."""
        T = z[0] if self.free_T else self.T_fixed
        q = np.vstack([self.q0, z[self.off:].reshape(self.N - 1, self.n), self.qf])
        h = T / self.N
        return T, q, self.Dv @ q / h, self.Da @ q / h**2

    def pack(self, T, q):
        body = np.asarray(q[1:-1], dtype=float).ravel()
        return np.concatenate([[T], body]) if self.free_T else body

    def torques(self, z):
        _, q, v, a = self.split(z)
        return inverse_dynamics(self.robot, q, v, a)

    def _local_jacobian(self, q, v, a):
        """∂τ_k/∂(q_k, q̇_k, q̈_k) (N+1, n, 3n): ∂/∂q̈ = A(q) exactly, ∂/∂q and ∂/∂q̇ by central differences
        taken on all nodes in one batched call per joint."""
        n = self.n
        D = np.empty((self.N + 1, n, 3 * n))
        for j in range(n):
            e = np.zeros(n)
            e[j] = step = 1e-6 * max(1.0, float(np.max(np.abs(q[:, j]))))
            D[:, :, j] = (inverse_dynamics(self.robot, q + e, v, a)
                          - inverse_dynamics(self.robot, q - e, v, a)) / (2 * step)
            e[j] = step = 1e-6 * max(1.0, float(np.max(np.abs(v[:, j]))))
            D[:, :, n + j] = (inverse_dynamics(self.robot, q, v + e, a)
                              - inverse_dynamics(self.robot, q, v - e, a)) / (2 * step)
        D[:, :, 2 * n:] = inertia_matrix(self.robot, q)        # A includes the rotor inertias Ia
        return D

    def torque_jac(self, z):
        """∂τ/∂z, ((N+1)·n, size)."""
        T, q, v, a = self.split(z)
        N, n = self.N, self.n
        h = T / N
        D = self._local_jacobian(q, v, a)
        Dq, Dqd, Dqdd = D[..., :n], D[..., n:2 * n], D[..., 2 * n:]
        # τ_k depends on q_m through q_k (m = k), q̇_k = Σ_m Dv[k, m] q_m / h and q̈_k = Σ_m Da[k, m] q_m / h²
        full = (np.einsum("kij,km->kimj", Dq, np.eye(N + 1))
                + np.einsum("kij,km->kimj", Dqd, self.Dv / h)
                + np.einsum("kij,km->kimj", Dqdd, self.Da / h**2))
        Jm = full[:, :, 1:-1, :].reshape((N + 1) * n, (N - 1) * n)
        if self.free_T:
            dT = -(Dqd @ v[..., None])[..., 0] / T - 2 * (Dqdd @ a[..., None])[..., 0] / T
            Jm = np.hstack([dT.reshape(-1, 1), Jm])
        return Jm

    def ineq(self, z):
        tau = self.torques(z)
        return np.concatenate([(self.L - tau).ravel(), (self.L + tau).ravel()])

    def ineq_jac(self, z):
        Jt = self.torque_jac(z)
        return np.vstack([-Jt, Jt])

    def weights(self, T):
        w = np.full(self.N + 1, T / self.N)
        w[[0, -1]] *= 0.5
        return w

    def energy(self, z):
        T = self.split(z)[0]
        tau = self.torques(z)
        return float(self.weights(T) @ np.sum(tau * tau, axis=1))

    def energy_grad(self, z):
        T = self.split(z)[0]
        tau = self.torques(z)
        g = (2 * self.weights(T)[:, None] * tau).ravel() @ self.torque_jac(z)
        if self.free_T:
            g[0] += float(self.weights(1.0) @ np.sum(tau * tau, axis=1))     # ∂w/∂T
        return g

    def time(self, z):
        return float(z[0])

    def time_grad(self, z):
        g = np.zeros(self.size)
        g[0] = 1.0
        return g


def _kkt_residual(f, grad, ineq_val, ineq_jac, tol) -> float:
    """First-order optimality: least-squares multipliers λ ≥ 0 of the active inequalities (value ≤ tol); the norm
    of the Lagrangian gradient ∇f − Σ λ_i ∇c_i that remains, divided by 1 + |f|."""
    from scipy.optimize import lsq_linear

    active = ineq_val <= tol
    G = ineq_jac[active].T
    lb = np.zeros(int(active.sum()))
    if lb.size == 0:
        return float(np.linalg.norm(grad) / (1 + abs(f)))
    sol = lsq_linear(G, grad, bounds=(lb, np.full(lb.size, np.inf)), lsmr_tol="auto", max_iter=2000)
    return float(np.linalg.norm(grad - G @ sol.x) / (1 + abs(f)))


def optimal_motion(robot: Robot, q_start, q_goal, torque_limits, objective: str = "time", duration=None,
                   nodes: int = 30, max_iter: int = 300, tol: float = 1e-12) -> OptimalMotion:
    """Minimum-time or minimum-energy rest-to-rest motion under torque bounds, by direct collocation.

    Parameters
    ----------
    robot : Robot
    q_start, q_goal : array_like (n,)
        Configurations A and B, at rest (rad | m).
    torque_limits : float or array_like (n,)
        |τ_j| ≤ L_j at every node (N m | N).
    objective : "time" | "energy"
        "time": minimise T. "energy": minimise E = ∫ τᵀτ dt for the given ``duration``.
    duration : float, optional
        Required for ``objective="energy"`` (s); it must be at least the minimum time.
    nodes : int
        Number of collocation intervals N (N + 1 nodes).
    max_iter : int
        Iteration limit of SLSQP; reaching it raises :class:`OptimizationError`.
    tol : float
        SLSQP's tolerance on the objective and the constraints.

    Returns
    -------
    OptimalMotion

    Raises
    ------
    InfeasibleLimitsError
        A limit is below the gravity torque at A or B (the robot cannot even rest there).
    OptimizationError
        No feasible solution found (e.g. ``duration`` shorter than the minimum time) or the iteration limit was
        hit; the message names the torque limit that is violated most.
    """
    check_robot(robot)
    from scipy.optimize import minimize

    q0 = vector_argument("q_start", q_start, robot.n)
    qf = vector_argument("q_goal", q_goal, robot.n)
    L = torque_limits_of(robot, torque_limits)
    if objective not in ("time", "energy"):
        raise InputError(f"objective = {objective!r}; give 'time' or 'energy'")
    if objective == "energy":
        if duration is None or not (float(duration) > 0 and np.isfinite(float(duration))):
            raise InputError(f"duration = {duration!r}; a minimum-energy motion needs a positive duration (s)")
        duration = float(duration)
    elif duration is not None:
        raise InputError("duration is the result of a minimum-time motion; give it only with objective='energy'")
    if int(nodes) < 4:
        raise InputError(f"nodes = {nodes!r}; give at least 4 collocation intervals")
    nodes = int(nodes)
    for name, qq in (("q_start", q0), ("q_goal", qf)):
        g = gravity_torques(robot, qq) + robot.Foff[robot.joint_frames]
        over = np.abs(g) > L
        if np.any(over):
            j = int(np.argmax(over))
            raise InfeasibleLimitsError(f"the gravity torque of joint {j + 1} at {name} is {abs(g[j]):.6g}, above "
                                        f"torque_limits[{j}] = {L[j]:.6g}: the robot cannot rest there")
    if np.allclose(q0, qf, rtol=0, atol=0):
        raise InputError("q_start and q_goal are equal; there is no motion to optimise")
    tr = _Transcription(robot, q0, qf, L, nodes, duration)
    # initial guess: a quintic rest-to-rest motion, uniformly time-scaled to meet the limits (De Luca's k)
    guess = RestToRest(q0, qf, 1.0, profile="quintic")
    if duration is None:
        T0 = 1.05 * time_scale(robot, guess, 0.98 * L, samples=4 * nodes + 1).duration
    else:
        T0 = duration
    t0 = np.linspace(0, T0, nodes + 1)
    ref = RestToRest(q0, qf, T0, profile="quintic")
    z0 = tr.pack(T0, ref.sample(t0)[0])
    if objective == "time":
        # T relative to the feasible initial duration T0: an objective of order one for SLSQP's line search
        fun = lambda z: tr.time(z) / T0                 # noqa: E731
        jac = lambda z: tr.time_grad(z) / T0            # noqa: E731
    else:
        # SLSQP's line search needs an objective of order one: E relative to T Σ L_j²
        scale = 1.0 / (duration * float(L @ L))
        fun = lambda z: scale * tr.energy(z)            # noqa: E731
        jac = lambda z: scale * tr.energy_grad(z)       # noqa: E731
    # the initial motion is (nearly) admissible, so the optimum lies below T0; the bounds keep T in a sane range
    bounds = [(1e-2 * T0, 2 * T0)] + [(None, None)] * (tr.size - 1) if tr.free_T else None
    constraints = [{"type": "ineq", "fun": tr.ineq, "jac": tr.ineq_jac}]
    res = minimize(fun, z0, jac=jac, method="SLSQP", bounds=bounds, constraints=constraints,
                   options={"maxiter": int(max_iter), "ftol": tol})
    z = res.x
    tau = tr.torques(z)
    excess = np.abs(tau) / L - 1
    k, j = np.unravel_index(int(np.argmax(excess)), excess.shape)
    kkt = _kkt_residual(fun(z), jac(z), tr.ineq(z), tr.ineq_jac(z), tol=1e-6 * float(np.max(L)))
    # SLSQP status 8 ("positive directional derivative in line search"): no further progress at the precision of
    # the differenced derivatives; accepted when the point is feasible and first-order optimal
    converged = res.success or (res.status == 8 and kkt < 1e-6)
    if not converged or excess[k, j] > 1e-6:
        T = tr.split(z)[0]
        reason = "hit the iteration limit max_iter" if res.status == 9 else f"stopped: {res.message}"
        raise OptimizationError(
            f"{objective} optimisation {reason} after {res.nit} iterations without a feasible motion: joint "
            f"{j + 1} needs |τ| = {abs(tau[k, j]):.6g} against torque_limits[{j}] = {L[j]:.6g} at t = "
            f"{k * T / nodes:.4g} s"
            + ("; the duration is probably below the minimum time for these limits" if objective == "energy"
               else "; raise max_iter or nodes"))
    T, q, v, a = tr.split(z)
    t = np.linspace(0, T, nodes + 1)
    energy = float(tr.weights(T) @ np.sum(tau * tau, axis=1))
    return OptimalMotion(objective=objective, duration=float(T), energy=energy, t=t, q=q.copy(), qd=v.copy(),
                         qdd=a.copy(), torques=tau, limits=L, kkt_residual=kkt, iterations=int(res.nit))
