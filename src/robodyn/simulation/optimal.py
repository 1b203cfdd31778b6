"""Optimal point-to-point motion under torque bounds (De Luca, "Optimal point-to-point robot motion"): direct
collocation on a clamped cubic spline, the torque of the inverse dynamic model (Khalil & Dombre [9.84]–[9.94])
bounded on the whole continuous motion by an exchange method, SLSQP (docs/task-space-and-motion.md §5).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn.dynamics.api import inertia_matrix
from robodyn.dynamics.derivatives import inverse_dynamics_derivatives
from robodyn.dynamics.newton_euler import gravity_torques, inverse_dynamics
from robodyn.errors import InputError, RobodynError
from robodyn.model.robot import Robot, check_robot
from robodyn.simulation.time_scaling import InfeasibleLimitsError, torque_limits_of, save_figure, time_scale
from robodyn.simulation.trajectories import RestToRest, Spline, vector_argument

#: samples per interval of the scan that brackets the local maxima of |τ_j(t)| / L_j
SCAN = 32
#: exchange rounds (solve, locate the maxima, add the violated ones) before giving up
ROUNDS = 20
#: restarts of SLSQP from a point where its line search failed short of first-order optimality
RESTARTS = 3
#: KKT residual below which a point where SLSQP's line search stalls (status 8) is accepted as optimal
KKT_TOL = 1e-4


class OptimizationError(RobodynError, RuntimeError):
    """The optimizer stopped without a solution that meets the constraints (the message names the limit hit)."""


@dataclass(frozen=True)
class OptimalMotion:
    """Result of :func:`optimal_motion`: the motion is the clamped cubic spline through the nodes
    (:meth:`sample`), and its torques respect the limits between the nodes too.

    Attributes
    ----------
    objective : "time" | "energy"
    duration : float            T (s); the minimum time for ``objective="time"``
    energy : float              E = ∫ τᵀτ dt of the spline motion, 3-point Gauss–Legendre per interval (N² m² s)
    t : ndarray (N+1,)          node times (s)
    q, qd, qdd : ndarray (N+1, n)   motion at the nodes
    torques : ndarray (N+1, n)  command torques τ_k = Γ(q_k, q̇_k, q̈_k) (N m | N)
    limits : ndarray (n,)
    peak_ratio : float          max over t of |τ_j(t)| / L_j on the continuous motion (every local maximum located
                                to 1e-9 of an interval); ≤ 1 + limit_tol
    check_points : int          times at which the bound was imposed (nodes, Gauss points, the exchange's points)
    kkt_residual : float        ‖∇f − Σ λ_i ∇c_i‖ / (1 + |f|) with least-squares multipliers λ ≥ 0 of the active
                                torque bounds: first-order optimality, ~0 at a KKT point
    iterations : int            SLSQP iterations, all exchange rounds together
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
    peak_ratio: float
    check_points: int
    kkt_residual: float
    iterations: int

    def sample(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q, q̇, q̈ (..., n) of the optimal motion at times ``t`` (s, any shape): the clamped cubic spline through
        the nodes, the motion whose torques were bounded (at rest before 0 and after T)."""
        return Spline(self.t, self.q).sample(t)

    def plot(self, path, robot: Robot | None = None) -> None:
        """Write a PNG: joint positions and torques over their limits against time (written atomically).

        The positions are the continuous spline motion (the nodes marked); with ``robot`` (the one the motion was
        computed for) the torques are too, else the node torques joined by straight lines."""
        from matplotlib.figure import Figure

        t = np.linspace(0.0, self.duration, 40 * (self.t.size - 1) + 1)
        q, qd, qdd = self.sample(t)
        tau = inverse_dynamics(robot, q, qd, qdd) if robot is not None else None
        fig = Figure(figsize=(7, 5.5))
        ax1, ax2 = fig.subplots(2, 1, sharex=True)
        for j in range(self.q.shape[-1]):
            line, = ax1.plot(t, q[:, j], lw=1, label=f"q{j + 1}")
            ax1.plot(self.t, self.q[:, j], "o", ms=2, color=line.get_color())
            if tau is None:
                ax2.plot(self.t, self.torques[:, j] / self.limits[j], "o-", ms=2, lw=1, label=f"τ{j + 1} / L{j + 1}")
            else:
                line, = ax2.plot(t, tau[:, j] / self.limits[j], lw=1, label=f"τ{j + 1} / L{j + 1}")
                ax2.plot(self.t, self.torques[:, j] / self.limits[j], "o", ms=2, color=line.get_color())
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
    """Variables z = [T?, q_1 … q_{N−1} (interior nodes, (N−1)·n)]; q, q̇, q̈ at the check points s (knot units:
    s = 0 … N are the nodes, then 3 Gauss–Legendre points per interval, then the exchange's points) from the
    clamped spline."""

    def __init__(self, robot, q0, qf, L, nodes, duration):
        from scipy.interpolate import CubicSpline

        self.robot, self.q0, self.qf, self.L = robot, q0, qf, L
        self.N, self.n = nodes, robot.n
        self.free_T = duration is None
        self.T_fixed = duration
        self.off = 1 if self.free_T else 0
        self.size = self.off + (nodes - 1) * robot.n
        # the spline's values and derivatives at knot-unit times s as linear maps of the N + 1 node values
        self.basis = CubicSpline(np.arange(nodes + 1, dtype=float), np.eye(nodes + 1), axis=0, bc_type="clamped")
        # the energy by 3-point Gauss–Legendre quadrature on each interval (exact for a quintic; τ is smooth
        # between the nodes), per unit duration; its points are check points from the start
        x, w = np.polynomial.legendre.leggauss(3)
        self.gauss = (np.arange(nodes)[:, None] + (x + 1) / 2).ravel()
        self.w1 = np.tile(w / 2, nodes) / nodes
        self.set_points(np.concatenate([np.arange(nodes + 1.0), self.gauss]))

    def set_points(self, s):
        self.s = np.asarray(s, dtype=float)
        self.P, self.Dv, self.Da = self.basis(self.s), self.basis(self.s, 1), self.basis(self.s, 2)

    def nodes_of(self, z):
        """T and the node values q (N+1, n)."""
        T = z[0] if self.free_T else self.T_fixed
        return T, np.vstack([self.q0, z[self.off:].reshape(self.N - 1, self.n), self.qf])

    def states(self, z, s=None):
        """T and q, q̇, q̈ (M, n) at the check points (or at knot-unit times ``s``)."""
        T, Q = self.nodes_of(z)
        h = T / self.N
        P, Dv, Da = (self.P, self.Dv, self.Da) if s is None else (self.basis(s), self.basis(s, 1), self.basis(s, 2))
        return T, P @ Q, Dv @ Q / h, Da @ Q / h**2

    def pack(self, T, Q):
        body = np.asarray(Q[1:-1], dtype=float).ravel()
        return np.concatenate([[T], body]) if self.free_T else body

    def torques(self, z, s=None):
        _, q, v, a = self.states(z, s)
        return inverse_dynamics(self.robot, q, v, a)

    def torque_jac(self, z):
        """∂τ/∂z at the check points, (M·n, size): the analytic ∂τ/∂q, ∂τ/∂q̇ and ∂τ/∂q̈ = A (rotor inertias
        included) chained through q = P Q, q̇ = D_v Q / h, q̈ = D_a Q / h²."""
        T, q, v, a = self.states(z)
        N, n, M = self.N, self.n, self.s.size
        h = T / N
        Dq, Dqd = inverse_dynamics_derivatives(self.robot, q, v, a)
        Dqdd = inertia_matrix(self.robot, q)
        full = (np.einsum("kij,km->kimj", Dq, self.P) + np.einsum("kij,km->kimj", Dqd, self.Dv / h)
                + np.einsum("kij,km->kimj", Dqdd, self.Da / h**2))
        Jm = full[:, :, 1:-1, :].reshape(M * n, (N - 1) * n)
        if self.free_T:
            dT = -(Dqd @ v[..., None])[..., 0] / T - 2 * (Dqdd @ a[..., None])[..., 0] / T
            Jm = np.hstack([dT.reshape(-1, 1), Jm])
        return Jm

    def ineq(self, z):
        """1 ∓ τ/L ≥ 0 at every check point: the bounds relative to the limits, of order one for SLSQP."""
        r = self.torques(z) / self.L
        return np.concatenate([(1 - r).ravel(), (1 + r).ravel()])

    def ineq_jac(self, z):
        Jr = self.torque_jac(z) / np.tile(self.L, self.s.size)[:, None]
        return np.vstack([-Jr, Jr])

    def energy(self, z):
        T = self.nodes_of(z)[0]
        tau = self.torques(z)[self.N + 1:self.N + 1 + self.w1.size]
        return float(T * self.w1 @ np.sum(tau * tau, axis=1))

    def energy_grad(self, z):
        T = self.nodes_of(z)[0]
        tau = self.torques(z)
        gauss = slice(self.N + 1, self.N + 1 + self.w1.size)
        rows = slice(gauss.start * self.n, gauss.stop * self.n)
        g = (2 * T * self.w1[:, None] * tau[gauss]).ravel() @ self.torque_jac(z)[rows]
        if self.free_T:
            g[0] += float(self.w1 @ np.sum(tau[gauss] ** 2, axis=1))     # ∂(T w1)/∂T
        return g

    def peaks(self, z):
        """Every local maximum of |τ_j(s)| / L_j over [0, N]: (s, ratio) of each, joints and intervals together.

        A scan of :data:`SCAN` samples per interval brackets them; golden-section search, batched over the
        brackets, locates each to 1e-9 of an interval."""
        grid = np.linspace(0.0, self.N, SCAN * self.N + 1)
        r = np.abs(self.torques(z, grid)) / self.L                          # (G, n)
        padded = np.vstack([np.full(self.n, -1.0), r, np.full(self.n, -1.0)])
        top = (padded[1:-1] >= padded[:-2]) & (padded[1:-1] >= padded[2:])
        idx, joint = np.nonzero(top)
        lo = grid[np.maximum(idx - 1, 0)]
        hi = grid[np.minimum(idx + 1, grid.size - 1)]
        ratio = lambda s: np.abs(self.torques(z, s)[np.arange(s.size), joint]) / self.L[joint]  # noqa: E731
        g = (np.sqrt(5.0) - 1) / 2
        while np.max(hi - lo, initial=0.0) > 1e-9:
            a, b = lo + (1 - g) * (hi - lo), lo + g * (hi - lo)
            left = ratio(a) >= ratio(b)                                     # a maximum lies in [lo, b]
            hi, lo = np.where(left, b, hi), np.where(left, lo, a)
        found = ratio((lo + hi) / 2)
        better = found >= r[idx, joint]
        return np.where(better, (lo + hi) / 2, grid[idx]), np.where(better, found, r[idx, joint])


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


def optimal_motion(robot: Robot, q_start, q_goal, torque_limits=None, objective: str = "time", duration=None,
                   nodes: int = 30, max_iter: int = 300, tol: float = 1e-12,
                   limit_tol: float = 1e-6) -> OptimalMotion:
    """Minimum-time or minimum-energy rest-to-rest motion under torque bounds, by direct collocation; the limits
    hold on the whole continuous motion, not only at the nodes.

    Parameters
    ----------
    robot : Robot
    q_start, q_goal : array_like (n,)
        Configurations A and B, at rest (rad | m).
    torque_limits : float or array_like (n,), optional
        |τ_j(t)| ≤ L_j for every t in [0, T] (N m | N); default the robot's ``taulim``.
    objective : "time" | "energy"
        "time": minimise T. "energy": minimise E = ∫ τᵀτ dt for the given ``duration``.
    duration : float, optional
        Required for ``objective="energy"`` (s); it must be at least the minimum time.
    nodes : int
        Number of collocation intervals N (N + 1 nodes).
    max_iter : int
        Iteration limit of SLSQP per exchange round; reaching it raises :class:`OptimizationError`.
    tol : float
        SLSQP's tolerance on the objective and the constraints.
    limit_tol : float
        Relative tolerance of the limits on the continuous motion: every local maximum of |τ_j(t)| / L_j is at most
        1 + ``limit_tol`` (at the check points the bounds hold to SLSQP's tolerance).

    Returns
    -------
    OptimalMotion

    Raises
    ------
    InfeasibleLimitsError
        A limit is below the gravity torque at A or B (the robot cannot even rest there).
    OptimizationError
        No feasible solution found (e.g. ``duration`` shorter than the minimum time), the iteration limit was hit,
        the solution is not first-order optimal, or the limits still fail between the nodes after
        :data:`ROUNDS` exchange rounds; the message names the torque limit that is violated most.
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
    if not (0 < float(limit_tol) < 1):
        raise InputError(f"limit_tol = {limit_tol!r}; give a relative tolerance between 0 and 1 (e.g. 1e-6)")
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
    T0 = duration if duration is not None else 1.05 * time_scale(robot, guess, 0.98 * L,
                                                                 samples=SCAN * nodes + 1).duration
    ref = RestToRest(q0, qf, T0, profile="quintic")
    z = tr.pack(T0, ref.sample(np.linspace(0, T0, nodes + 1))[0])
    if objective == "time":
        # T relative to the feasible initial duration T0: an objective of order one for SLSQP's line search
        fun = lambda z: float(z[0]) / T0                # noqa: E731
        jac = lambda z: np.eye(1, tr.size)[0] / T0      # noqa: E731
    else:
        # SLSQP's line search needs an objective of order one: E relative to T Σ L_j²
        scale = 1.0 / (duration * float(L @ L))
        fun = lambda z: scale * tr.energy(z)            # noqa: E731
        jac = lambda z: scale * tr.energy_grad(z)       # noqa: E731
    # the initial motion is (nearly) admissible, so the optimum lies below T0; the bounds keep T in a sane range
    bounds = [(1e-2 * T0, 2 * T0)] + [(None, None)] * (tr.size - 1) if tr.free_T else None
    constraints = [{"type": "ineq", "fun": tr.ineq, "jac": tr.ineq_jac}]
    iterations = 0
    for _ in range(ROUNDS):
        for _ in range(RESTARTS + 1):
            res = minimize(fun, z, jac=jac, method="SLSQP", bounds=bounds, constraints=constraints,
                           options={"maxiter": int(max_iter), "ftol": tol})
            z, iterations = res.x, iterations + int(res.nit)
            kkt = _kkt_residual(fun(z), jac(z), tr.ineq(z), tr.ineq_jac(z), tol=1e-6)
            # SLSQP status 8 ("positive directional derivative in line search"): no progress along its search
            # direction; accepted when the point is first-order optimal, else SLSQP restarts from it with a fresh
            # quasi-Newton Hessian (the stale one is the usual cause)
            converged = res.success or (res.status == 8 and kkt < KKT_TOL)
            if converged or res.status != 8:
                break
        s, peak = tr.peaks(z)
        if not converged or -np.min(tr.ineq(z)) > limit_tol:
            break
        over = peak > 1 + limit_tol
        if not np.any(over):
            break
        tr.set_points(np.concatenate([tr.s, s[over]]))      # the exchange: the violated maxima join the points
    T = tr.nodes_of(z)[0]
    worst = int(np.argmax(peak))
    if not converged or peak[worst] > 1 + limit_tol:
        tau = tr.torques(z, s[worst:worst + 1])[0]
        j = int(np.argmax(np.abs(tau) / L))
        if not converged:
            reason = ("hit the iteration limit max_iter" if res.status == 9
                      else f"stopped: {res.message} (KKT residual {kkt:.1e})")
        else:
            reason = f"still exceeds a limit between the nodes after {ROUNDS} exchange rounds"
        raise OptimizationError(
            f"{objective} optimisation {reason} after {iterations} iterations without a feasible motion: joint "
            f"{j + 1} needs |τ| = {abs(tau[j]):.6g} against torque_limits[{j}] = {L[j]:.6g} at t = "
            f"{s[worst] * T / nodes:.4g} s"
            + ("; the duration is probably below the minimum time for these limits" if objective == "energy"
               else "; raise max_iter or nodes"))
    T, Q = tr.nodes_of(z)
    _, q, v, a = tr.states(z, np.arange(nodes + 1.0))
    tau = inverse_dynamics(robot, q, v, a)
    return OptimalMotion(objective=objective, duration=float(T), energy=tr.energy(z), t=np.linspace(0, T, nodes + 1),
                         q=Q, qd=v, qdd=a, torques=tau, limits=L, peak_ratio=float(peak[worst]),
                         check_points=int(tr.s.size), kkt_residual=kkt, iterations=iterations)
