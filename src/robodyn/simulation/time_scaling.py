"""Dynamic time scaling of trajectories: uniform scaling (De Luca, "Dynamic scaling of trajectories",
:func:`time_scale`) and time-optimal path parameterisation by reachability analysis (Pham & Pham's TOPP-RA,
:func:`time_optimal`); docs/task-space-and-motion.md §4 states both.
"""

from __future__ import annotations

from dataclasses import dataclass

import warnings

import numpy as np

from robodyn.arrays import as_real_array, finite_result
from robodyn.model.robot import check_robot
from robodyn.files import save_figure
from robodyn.dynamics.newton_euler import friction_torques, gravity_torques, inverse_dynamics
from robodyn.errors import InputError, RobodynError
from robodyn.model.robot import Robot
from robodyn.simulation.trajectories import Trajectory


class InfeasibleLimitsError(RobodynError, ValueError):
    """Torque limits that no timing of the given path can meet (the message names the joint and the time)."""


#: largest torque limit accepted (N m | N): the scalings square the limits and multiply them by the path's
#: coefficients, so limits near the float64 maximum (1e308) overflow to inf and NaN instead of meaning "no limit"
LIMIT_MAX = 1e100


def torque_limits_of(robot: Robot, torque_limits, name: str = "torque_limits", unit: str = "N m | N") -> np.ndarray:
    """Symmetric limits (n,) from one number or one per joint: positive, finite, at most LIMIT_MAX. ``None``
    takes the robot's own (``robot.taulim``, or ``robot.qdlim`` for velocity limits), LIMIT_MAX where it has none."""
    if torque_limits is None:
        field = "qdlim" if name == "velocity_limits" else "taulim"
        own = getattr(robot, field)
        if np.all(np.isinf(own)):
            raise InputError(f"argument '{name}' is not given and robot '{robot.name}' has no {field}; give "
                             f"{name} ({robot.n} numbers, {unit}) or a robot whose model file carries them")
        return np.minimum(own, LIMIT_MAX)
    L = as_real_array(name, torque_limits).astype(float)
    L = np.broadcast_to(L, (robot.n,)) if L.ndim == 0 else L
    if L.shape != (robot.n,) or not np.all(np.isfinite(L)) or np.any(L <= 0):
        raise InputError(f"argument '{name}' = {torque_limits!r}; give one positive finite limit per joint "
                         f"({robot.n} numbers, {unit}) or a single number")
    if np.any(L > LIMIT_MAX):
        raise InputError(f"argument '{name}' has {float(np.max(L)):.3g} ({unit}), above {LIMIT_MAX:g}: "
                         "give limits of physical size (the computation squares them and would overflow)")
    return L


def _check_trajectory(trajectory, robot: Robot) -> None:
    check_robot(robot)
    if not (hasattr(trajectory, "sample") and hasattr(trajectory, "duration")):
        raise InputError("argument 'trajectory' must have .sample(t) -> (q, qd, qdd) and .duration, e.g. "
                         "robodyn.simulation.trajectories.RestToRest")
    if getattr(trajectory, "n", robot.n) != robot.n:
        raise InputError(f"argument 'trajectory' has n = {trajectory.n} joints; robot '{robot.name}' has "
                         f"n = {robot.n}")


def _check_static(C: np.ndarray, L: np.ndarray, friction: bool, at: np.ndarray, where: str, verdict: str) -> None:
    """InfeasibleLimitsError when the speed-independent torque C (samples, n) alone exceeds a limit L (n,); ``where``
    formats the sample's place ``at`` (samples,)."""
    over = np.abs(C) > L
    if np.any(over):
        i, j = np.argwhere(over)[0]
        raise InfeasibleLimitsError(
            f"gravity{' and Coulomb friction' if friction else ''} alone need |τ_{j + 1}| = {abs(C[i, j]):.6g} "
            f"> limit {L[j]:.6g} at {where.format(at[i])}; {verdict} torque_limits[{j}]")


def _friction_parts(robot: Robot, friction: bool):
    """Coulomb, viscous and offset coefficients of the joints, or zeros when friction is neglected."""
    jf = robot.joint_frames
    if not friction:
        return (np.zeros(robot.n),) * 3
    if np.any(robot.Fst[jf] != 0):
        raise InputError(f"robot '{robot.name}' has Stribeck friction (Fst), which does not scale in closed "
                         "form; pass friction=False to neglect friction, as De Luca's scaling does")
    return robot.Fc[jf].astype(float), robot.Fv[jf].astype(float), robot.Foff[jf].astype(float)


class ScaledTrajectory(Trajectory):
    """The trajectory ``base`` run k times slower: q_s(t) = q_d(t / k), q̇_s = q̇_d / k, q̈_s = q̈_d / k²."""

    def __init__(self, base, k: float):
        self.base, self.k = base, float(k)
        self.n = base.n
        self.duration = self.k * base.duration

    def sample(self, t):
        q, qd, qdd = self.base.sample(np.asarray(t, dtype=float) / self.k)
        return q, qd / self.k, qdd / self.k**2


@dataclass(frozen=True)
class TimeScaling:
    """Result of :func:`time_scale`.

    Attributes
    ----------
    k : float                       scale factor: the scaled motion lasts k T (k > 1 slower, k < 1 faster)
    duration : float                k T (s)
    t : ndarray (N,)                sample times of the scaled motion, k t_d (s)
    torques : ndarray (N, n)        τ_s at ``t`` (N m | N), friction included unless neglected
    original_torques : ndarray (N, n)   τ_d along the original motion
    active_joint : int              0-based joint whose limit is reached
    active_time : float             time of the scaled motion at which it is reached (s)
    trajectory : ScaledTrajectory   the scaled motion, ``.sample(t)``
    limits : ndarray (n,)           the torque limits (N m | N)
    """

    k: float
    duration: float
    t: np.ndarray
    torques: np.ndarray
    original_torques: np.ndarray
    active_joint: int
    active_time: float
    trajectory: ScaledTrajectory
    limits: np.ndarray

    def plot(self, path) -> None:
        """Write a PNG: the torques of the original and of the scaled motion against normalised time t/T, with
        the limits (written atomically: no partial file)."""
        from matplotlib.figure import Figure  # no pyplot: the caller's backend and figures are left alone

        n = self.torques.shape[-1]
        fig = Figure(figsize=(7, 2.4 * n))
        axes = np.atleast_1d(fig.subplots(n, 1, sharex=True))
        x = self.t / self.duration
        for j, ax in enumerate(axes):
            ax.plot(x, self.original_torques[:, j], "--", lw=1, label=f"original, T = {self.duration / self.k:.3g} s")
            ax.plot(x, self.torques[:, j], "-", lw=1.5, label=f"scaled, k = {self.k:.4g}, T = {self.duration:.3g} s")
            for sgn in (1, -1):
                ax.axhline(sgn * self.limits[j], color="k", lw=0.8, ls=":")
            ax.set_ylabel(f"τ{j + 1} (N m | N)")
            ax.legend(fontsize=7)
        axes[-1].set_xlabel("t / T")
        fig.suptitle("uniform time scaling (De Luca): τ_s = (τ_d − g)/k² + g")
        fig.tight_layout()
        save_figure(fig, path)


def _first_positive_root(a, b, c):
    """Smallest u > 0 with a u² + b u + c = 0 where c ≤ 0 (the quadratic is ≤ 0 at u = 0); inf if none."""
    a, b, c = np.broadcast_arrays(a, b, c)
    lin = a == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        root_lin = np.where(b > 0, -c / b, np.inf)
        disc = b * b - 4 * a * c
        sq = np.sqrt(np.maximum(disc, 0.0))
        # numerically stable pair of roots: q = −(b + sign(b) √disc)/2, roots q/a and c/q
        qq = -0.5 * (b + np.where(b >= 0, sq, -sq))
        r1, r2 = qq / a, np.where(qq != 0, c / qq, np.inf)
    r = np.stack([r1, r2])
    r = np.where((r > 0) & np.isfinite(r), r, np.inf).min(axis=0)
    r = np.where(disc < 0, np.inf, r)
    out = np.where(lin, root_lin, r)
    return np.where(c == 0, np.where((b > 0) | ((b == 0) & (a > 0)), 0.0, out), out)


def time_scale(robot: Robot, trajectory, torque_limits=None, samples: int = 501, t=None,
               friction: bool = True) -> TimeScaling:
    """Smallest uniform time scaling k of a trajectory that keeps every joint torque within its limit.

    De Luca's uniform scaling: q_s(kt) = q_d(t), τ_s(kt) = (τ_d(t) − g(q_d))/k² + g(q_d). With robodyn's friction
    model the velocity-dependent part is split off: per joint and sample, τ_s = A/k² + B/k + C with
    A = τ_d − g − Γ_f(q̇_d), B = F_v q̇_d, C = g + F_c sign(q̇_d) + F_off. The returned k is the smallest value such
    that |τ_s| ≤ L at every sample for every k' ≥ k (slower motions stay admissible); it is the first positive
    root of one of the quadratics A u² + B u + C = ±L in u = 1/k, so at k the limit is met with equality on
    ``active_joint`` (up to rounding). The limits are checked at the sample times only.

    Parameters
    ----------
    robot : Robot
    trajectory : Trajectory
        Anything with ``.sample(t) -> (q, qd, qdd)`` and ``.duration`` (e.g. :class:`RestToRest`).
    torque_limits : float or array_like (n,), optional
        Symmetric limits |τ_j| ≤ L_j (N m | N); default the robot's ``taulim``.
    samples : int
        Number of equally spaced sample times on [0, T] when ``t`` is not given.
    t : array_like (N,), optional
        Sample times of the original trajectory (s).
    friction : bool
        Include Coulomb, viscous and offset friction (True) or neglect friction (False, as in De Luca).

    Returns
    -------
    TimeScaling

    Raises
    ------
    InfeasibleLimitsError
        When gravity (and Coulomb friction) alone exceed a limit: no k, however large, helps.
    """
    _check_trajectory(trajectory, robot)
    L = torque_limits_of(robot, torque_limits)
    if t is None:
        if int(samples) < 2:
            raise InputError(f"samples = {samples!r}; give at least 2 sample times")
        t = np.linspace(0.0, trajectory.duration, int(samples))
    t = as_real_array("t", t).astype(float)
    if t.ndim != 1 or t.size == 0 or not np.all(np.isfinite(t)):
        raise InputError("argument 't' must be a non-empty 1-D array of finite times (s)")
    Fc, Fv, Foff = _friction_parts(robot, friction)
    q, qd, qdd = trajectory.sample(t)
    g = gravity_torques(robot, q)
    fr = friction_torques(robot, qd) if friction else 0.0
    tau_d = inverse_dynamics(robot, q, qd, qdd) - (0.0 if friction else friction_torques(robot, qd))
    A, B, C = tau_d - g - fr, Fv * qd, g + Fc * np.sign(qd) + Foff
    _check_static(C, L, friction, t, "t = {:.6g} s of the original trajectory", "no time scaling can meet")
    u = np.minimum(_first_positive_root(A, B, C - L), _first_positive_root(-A, -B, -C - L))
    i, j = np.unravel_index(int(np.argmin(u)), u.shape)
    u_star = u[i, j]
    if not np.isfinite(u_star):
        raise InputError("the trajectory needs no torque beyond gravity and friction at any speed (it does not "
                         "move); there is no smallest scale factor")
    if u_star == 0:
        raise InfeasibleLimitsError(
            f"joint {j + 1} is exactly at its limit {L[j]:.6g} under gravity and friction at t = {t[i]:.6g} s; "
            "the motion can only be made admissible in infinite time")
    k = 1.0 / u_star
    with np.errstate(over="ignore", invalid="ignore"):  # reported by finite_result
        tau_s = A * u_star**2 + B * u_star + C
    finite_result("time_scale", np.array([k, k * trajectory.duration]), tau_s)
    return TimeScaling(k=k, duration=k * trajectory.duration, t=k * t, torques=tau_s, original_torques=tau_d,
                       active_joint=int(j), active_time=float(k * t[i]),
                       trajectory=ScaledTrajectory(trajectory, k), limits=L)


# --- time-optimal path parameterisation (non-uniform scaling) ---

#: verification points per grid interval: the executed motion is checked at θ = k/m, k = 0..m, with
#: m = max(VERIFY, 4 × the interval's sub-intervals), the peaks between them estimated by parabolas; where a limit is
#: exceeded, the interval's sub-intervals are doubled up to REFINE, then its limits tightened by the excess
VERIFY = 32
REFINE = 16
MAX_ROUNDS = 12


@dataclass(frozen=True)
class TimeOptimal:
    """Result of :func:`time_optimal`: the fastest timing of a path under torque (velocity, acceleration) limits.

    Attributes
    ----------
    duration : float            minimum time (s)
    s : ndarray (N+1,)          grid of the path parameter (the path's own time, s)
    sd : ndarray (N+1,)         ṡ at the grid points (ṡ = 1: the path's original speed)
    sdd : ndarray (N,)          s̈, constant on each grid interval
    t : ndarray (N+1,)          time at which each grid point is reached (s)
    torques : ndarray (N, n)    τ = a u_i + b x_i + c at grid points 0..N−1 (N m | N)
    limits : ndarray (n,)       the torque limits (N m | N)
    controllable : ndarray (N+1, 2)  [lo_i, hi_i] bounds of ṡ² from which rest at the end is reachable
    path : Trajectory           the path q(s)
    checks : ndarray (N,)       per grid interval, the number of sub-intervals at whose ends the limits are
                                imposed on the executed motion (0: at the grid point only, ``collocation=True``)
    peak_ratio : float          the largest |τ_j|/L_j (and |q̇_j|/V_j, |q̈_j|/A_j) of the executed motion over
                                the VERIFY + 1 verification points of every grid interval (≤ 1 up to rounding
                                unless ``collocation=True``)
    """

    duration: float
    s: np.ndarray
    sd: np.ndarray
    sdd: np.ndarray
    t: np.ndarray
    torques: np.ndarray
    limits: np.ndarray
    controllable: np.ndarray
    path: object
    checks: np.ndarray | None = None
    peak_ratio: float = float("nan")

    def sample(self, t):
        """q, q̇, q̈ (..., n) of the time-optimal motion at times t (s): s̈ is constant on each grid interval."""
        t = np.clip(np.asarray(t, dtype=float), 0.0, self.duration)
        i = np.clip(np.searchsorted(self.t, t, side="right") - 1, 0, self.sdd.size - 1)
        dt = t - self.t[i]
        u = self.sdd[i]
        s = self.s[i] + self.sd[i] * dt + 0.5 * u * dt**2
        sd = self.sd[i] + u * dt
        p, dp, ddp = self.path.sample(s)
        return p, dp * sd[..., None], ddp * (sd**2)[..., None] + dp * u[..., None]

    def plot(self, path) -> None:
        """Write a PNG: ṡ along the path with the boundary of the controllable set, and the torques over the
        limits against time (written atomically)."""
        from matplotlib.figure import Figure

        fig = Figure(figsize=(7, 6))
        ax1, ax2 = fig.subplots(2, 1)
        ax1.plot(self.s, np.sqrt(self.controllable[:, 1]), "k:", lw=1, label="controllable set, max ṡ")
        ax1.plot(self.s, self.sd, "-", lw=1.5, label=f"time-optimal, T = {self.duration:.4g} s")
        # The controllable set's bound is unbounded where the path leaves rest (s = 0, 1: q' -> 0): clip the
        # axis to the motion so that the profile is not squashed against zero.
        ax1.set_ylim(0.0, 1.5 * max(float(np.max(self.sd)), 1e-12))
        ax1.set_xlabel("s (path parameter, 0 to 1)")
        ax1.set_ylabel("ṡ (1/s)")
        ax1.legend(fontsize=7)
        for j in range(self.torques.shape[-1]):
            ax2.plot(self.t[:-1], self.torques[:, j] / self.limits[j], lw=1, label=f"τ{j + 1} / L{j + 1}")
        ax2.set_xlabel("t (s)")
        ax2.set_ylabel("torque / limit (-)")
        ax2.legend(fontsize=7)
        fig.suptitle("time-optimal path parameterisation (reachability analysis)")
        fig.tight_layout()
        save_figure(fig, path)


def _path_terms(robot: Robot, path, s, friction: bool):
    """a, b, c (:func:`path_dynamics`) and q', q'' at the path parameters s (any shape): arrays (s.shape + (n,))."""
    jf = robot.joint_frames
    if friction and (np.any(robot.Fv[jf] != 0) or np.any(robot.Fst[jf] != 0)):
        raise InputError(f"robot '{robot.name}' has viscous or Stribeck friction, which the path dynamics "
                         "τ = a s̈ + b ṡ² + c cannot hold; pass friction=False to neglect friction")
    s = np.asarray(s, dtype=float)
    q, dq, ddq = path.sample(s.ravel())
    zero_g, z = np.zeros(3), np.zeros_like(q)
    a = inverse_dynamics(robot, q, z, dq, gravity=zero_g) - friction_torques(robot, z)
    b = inverse_dynamics(robot, q, dq, ddq, gravity=zero_g) - friction_torques(robot, dq)
    c = gravity_torques(robot, q)
    if friction:
        c = c + robot.Fc[jf] * np.sign(dq) + robot.Foff[jf]
    return tuple(x.reshape(s.shape + (robot.n,)) for x in (a, b, c, dq, ddq))


def path_dynamics(robot: Robot, path, s, friction: bool = True):
    """Coefficients of the torque along a path: τ = a(s) s̈ + b(s) ṡ² + c(s) for ṡ > 0.

    a = M(q) q', b = M(q) q'' + C(q, q') q', c = g(q) + F_c sign(q') + F_off, with q' = dq/ds, q'' = d²q/ds²
    (De Luca's q_s'' ṙ² + q_s' r̈ decomposition). Viscous and Stribeck friction are not of this form: a robot
    that has them needs ``friction=False`` (friction neglected).

    Returns
    -------
    a, b, c : ndarray (N, n)
    """
    return _path_terms(robot, path, s, friction)[:3]


def _interval_rows(terms, theta, delta, limits):
    """The limits on grid interval i as rows P x_i + Q u_i ≤ h, at the sub-points s_i + θΔ_i (θ-major order).

    On the interval s̈ = u_i and ṡ² = x_i + 2(s − s_i)u_i, so with w = 2θΔ_i every limit is linear in (x_i, u_i):
    τ = (a + w b) u + b x + c, q̇² = q'² (x + w u), q̈ = (q' + w q'') u + q'' x (``terms`` = a, b, c, q', q'' at the
    sub-points, each (M, n))."""
    a, b, c, dq, ddq = terms
    w = 2.0 * delta * np.asarray(theta)[:, None]
    L, V, Acc = limits
    K = a + w * b
    P, Q, h = [b, -b], [K, -K], [L - c, L + c]
    if Acc is not None:
        K = dq + w * ddq
        P += [ddq, -ddq]
        Q += [K, -K]
        h += [np.broadcast_to(Acc, K.shape)] * 2
    if V is not None:
        sq = dq * dq
        P.append(sq)
        Q.append(w * sq)
        h.append(np.broadcast_to(V * V, sq.shape))
    return tuple(np.concatenate(x, axis=1).ravel() for x in (P, Q, h))


def _normalised(P, Q, h):
    """Rows with finite h scaled to unit normals; None when a zero row 0 ≤ h < 0 makes them infeasible."""
    keep = np.isfinite(h)
    P, Q, h = P[keep], Q[keep], h[keep]
    nrm = np.hypot(P, Q)
    if np.any((nrm == 0) & (h < -1e-12 * (1 + np.abs(h)))):
        return None
    ok = nrm > 0
    return P[ok] / nrm[ok], Q[ok] / nrm[ok], h[ok] / nrm[ok]


def _vertices(P, Q, h):
    """Feasible vertices (x, u) of the polygon {P x + Q u ≤ h}: every pair of lines intersected."""
    i, j = np.triu_indices(P.size, 1)
    det = P[i] * Q[j] - P[j] * Q[i]
    ok = np.abs(det) > 1e-12
    i, j, det = i[ok], j[ok], det[ok]
    x = (h[i] * Q[j] - h[j] * Q[i]) / det
    u = (P[i] * h[j] - P[j] * h[i]) / det
    feasible = np.all(_slack(P, Q, h, x, u) <= 0, axis=0)
    return x[feasible], u[feasible]


def _slack(P, Q, h, x, u):
    """P x + Q u − h less the rounding tolerance, (rows, points): > 0 where a row is violated."""
    return P[:, None] * x + Q[:, None] * u - h[:, None] - 1e-9 * (1.0 + np.abs(h)[:, None] + np.abs(x) + np.abs(u))


def _x_range(P, Q, h, big, start: int | None = None):
    """[min x, max x] over the polygon {(x, u): P x + Q u ≤ h, x ≥ 0, x ≤ big, |u| ≤ big}, or None if empty.

    A linear program in two variables has its optimum at a vertex. The rows are many (the limits at every
    sub-point of an interval), so each bound is found by cutting planes: the vertices of the first ``start`` rows
    (all by default) and the box, the best of them checked against every row, the most violated rows added until
    the best vertex is feasible — then it is optimal, the relaxation's optimum being feasible. A maximum at
    ``big`` means unbounded (returned as inf).
    """
    rows = _normalised(np.concatenate([[-1.0, 1.0, 0.0, 0.0], P]), np.concatenate([[0.0, 0.0, 1.0, -1.0], Q]),
                       np.concatenate([[0.0, big, big, big], h]))
    if rows is None:
        return None
    P, Q, h = rows
    first = P.size if start is None else min(P.size, 4 + start)
    out = []
    for sense in (-1.0, 1.0):
        active = np.zeros(P.size, bool)
        active[:first] = True
        while True:
            x, u = _vertices(P[active], Q[active], h[active])
            if x.size == 0:
                return None
            k = int(np.argmax(sense * x))
            viol = _slack(P, Q, h, x[k:k + 1], u[k:k + 1])[:, 0]
            new = (viol > 0) & ~active
            if not np.any(new):
                out.append(float(x[k]))
                break
            worst = np.argsort(np.where(new, -viol, np.inf))[:8]
            active[worst[new[worst]]] = True
    top = out[1]
    return max(out[0], 0.0), (np.inf if top >= 0.5 * big else top)


def _controllable_sets(rows, delta, scale):
    """Backward pass of reachability analysis: the interval [lo_i, hi_i] of x = ṡ² from which rest at the end
    of the path can be reached, one 2-variable linear program (x, u) per grid point and bound: the rows of
    interval i (:func:`_interval_rows`) and lo_{i+1} ≤ x + 2Δ_i u ≤ hi_{i+1}. Returns (lo, hi, i_failed or −1)."""
    N = delta.size
    lo, hi = np.zeros(N + 1), np.zeros(N + 1)
    big = 1e12 * (1.0 + scale)
    for i in range(N - 1, -1, -1):
        P, Q, h, start = rows[i]
        P = np.concatenate([[1.0, -1.0], P])
        Q = np.concatenate([[2 * delta[i], -2 * delta[i]], Q])
        h = np.concatenate([[hi[i + 1], -lo[i + 1]], h])
        rng = _x_range(P, Q, h, big, start + 2)
        if rng is None:
            return lo, hi, i
        lo[i], hi[i] = rng
    return lo, hi, -1


def _greedy(rows, delta, lo, hi):
    """Forward pass: from x_0 = 0 the largest u_i that the rows of interval i and K_{i+1} admit."""
    N = delta.size
    x, u = np.zeros(N + 1), np.zeros(N)
    for i in range(N):
        P, Q, h, _ = rows[i]
        bound = (h - P * x[i])
        with np.errstate(divide="ignore", invalid="ignore"):
            r = bound / Q
        u_hi = min(np.min(r[Q > 0], initial=np.inf), (hi[i + 1] - x[i]) / (2 * delta[i]))
        u_lo = max(np.max(r[Q < 0], initial=-np.inf), (lo[i + 1] - x[i]) / (2 * delta[i]))
        # rounding may cross the bounds by ~tol; the controllable sets guarantee a non-empty interval
        u[i] = max(u_hi, u_lo) if u_hi < u_lo else u_hi
        x[i + 1] = max(x[i] + 2 * delta[i] * u[i], 0.0)
    x[-1] = 0.0
    return x, u


def _sub_points(checks):
    """θ of the sub-points of an interval with ``checks`` sub-intervals: the ends first (0 and 1), then the
    interior; just 0 (the grid point) for ``checks`` = 0."""
    if checks == 0:
        return np.zeros(1)
    return np.concatenate([[0.0, 1.0], np.arange(1, checks) / checks])


def _all_rows(robot, path, s, checks, limits, tight, friction):
    """Per interval (P, Q, h, start): its limit rows (the limits times ``tight``), ``start`` of them at the
    interval's ends."""
    delta = np.diff(s)
    thetas = [_sub_points(int(k)) for k in checks]
    sizes = np.array([th.size for th in thetas])
    points = np.concatenate([s[i] + th * delta[i] for i, th in enumerate(thetas)])
    terms = _path_terms(robot, path, points, friction)
    ends = np.concatenate([[0], np.cumsum(sizes)])
    rows = []
    for i, th in enumerate(thetas):
        scaled = tuple(None if lim is None else lim * tight[i] for lim in limits)
        P, Q, h = _interval_rows([x[ends[i]:ends[i + 1]] for x in terms], th, delta[i], scaled)
        rows.append((P, Q, h, (P.size // th.size) * min(th.size, 2)))
    return rows


def _peaks(use, owner):
    """Per interval, the largest value of each column of ``use`` (points, k), the points of one interval
    consecutive and equally spaced in θ: the samples, and between them the vertex of the parabola through three
    neighbours (a limit that is active at a sub-point with a slope peaks just beside it)."""
    v0, v1, v2 = use[:-2], use[1:-1], use[2:]
    same = (owner[:-2] == owner[2:])[:, None]
    curv = 2 * v1 - v0 - v2
    with np.errstate(divide="ignore", invalid="ignore"):
        offset = (v2 - v0) / (2 * curv)
        vertex = v1 + (v2 - v0) ** 2 / (8 * curv)
    vertex = np.where(same & (curv > 0) & (np.abs(offset) <= 1), vertex, -np.inf)
    out = np.full(owner[-1] + 1, -np.inf)
    np.maximum.at(out, owner, use.max(axis=1))
    np.maximum.at(out, owner[1:-1], vertex.max(axis=1))
    return out


def _violations(robot, path, s, x, u, sub, limits, friction):
    """Per interval, the largest limit use of the executed motion relative to the limit (≤ 1 where every limit
    holds), at its verification points θ = k/m, m = max(VERIFY, 4 sub_i), and between them (:func:`_peaks`)."""
    delta = np.diff(s)
    m = np.maximum(VERIFY, 4 * sub)
    theta = np.concatenate([np.arange(k + 1) / k for k in m])
    owner = np.repeat(np.arange(delta.size), m + 1)
    a, b, c, dq, ddq = _path_terms(robot, path, s[owner] + theta * delta[owner], friction)
    xs = (x[owner] + 2 * theta * delta[owner] * u[owner])[:, None]   # ṡ² at the points
    uu = u[owner][:, None]
    L, V, Acc = limits
    use = [np.abs(a * uu + b * xs + c) / L]
    if Acc is not None:
        use.append(np.abs(ddq * xs + dq * uu) / Acc)
    if V is not None:
        use.append(np.abs(dq) * np.sqrt(np.maximum(xs, 0.0)) / V)
    return _peaks(np.concatenate(use, axis=-1), owner)


def time_optimal(robot: Robot, path, torque_limits=None, grid: int = 200, friction: bool = True, velocity_limits=None,
                 acceleration_limits=None, checks: int = 4, collocation: bool = False) -> TimeOptimal:
    """Minimum-time timing s(t) of a path q(s) under torque limits |τ_j| ≤ L_j (and optionally joint velocity and
    acceleration limits), at rest at both ends, the limits holding on the executed motion.

    Pham & Pham's TOPP-RA on x = ṡ², u = s̈ (:func:`path_dynamics`): the controllable sets K_i = [lo_i, hi_i] by a
    backward pass, the largest u keeping x_{i+1} in K_{i+1} by a forward pass; s̈ is constant on each interval,
    whose limits are imposed at ``checks`` sub-intervals, verified at VERIFY + 1 points, refined up to REFINE
    where exceeded (docs/task-space-and-motion.md §4).  Interval i lasts 2 Δ_i / (√x_i + √x_{i+1}).

    Parameters
    ----------
    robot : Robot
    path : Trajectory
    torque_limits : float or array_like (n,), N m | N, optional
        Default the robot's ``taulim`` (unlimited joints of a partly limited robot stay unlimited).
    grid : int
        Number of grid intervals N (the result converges as O(1/N) in the duration).
    friction : bool
        Coulomb and offset friction enter c(s); robots with viscous or Stribeck friction need ``False``.
    velocity_limits : float or array_like (n,), optional, |q̇_j| ≤ V_j (rad/s | m/s); default the robot's
        ``qdlim`` where it has them (none otherwise)
    acceleration_limits : float or array_like (n,), optional, |q̈_j| ≤ A_j (rad/s² | m/s²)
    checks : int
        Initial number of sub-intervals per grid interval at whose ends the limits are imposed (≥ 1).
    collocation : bool
        True: impose the limits at the grid points only, as TOPP-RA's collocation scheme (and toppra) does; the
        executed motion may then exceed them between grid points (``peak_ratio`` tells by how much).

    Returns
    -------
    TimeOptimal

    Raises
    ------
    InfeasibleLimitsError
        When the path cannot be followed at any speed (gravity alone exceeds a limit somewhere, or the
        controllable sets become empty), naming the joint and the path parameter.
    """
    _check_trajectory(path, robot)
    L = torque_limits_of(robot, torque_limits)
    V = None if velocity_limits is None and np.all(np.isinf(robot.qdlim)) else \
        torque_limits_of(robot, velocity_limits, "velocity_limits", "rad/s | m/s")
    Acc = None if acceleration_limits is None else torque_limits_of(robot, acceleration_limits,
                                                                     "acceleration_limits", "rad/s² | m/s²")
    limits = (L, V, Acc)
    if int(grid) < 2:
        raise InputError(f"grid = {grid!r}; give at least 2 intervals")
    if isinstance(checks, bool) or not isinstance(checks, (int, np.integer)) or not 1 <= checks <= VERIFY:
        raise InputError(f"checks = {checks!r}; give an integer from 1 to {VERIFY}")
    s = np.linspace(0.0, path.duration, int(grid) + 1)
    a, b, c = path_dynamics(robot, path, s, friction=friction)
    if not np.any(a) and not np.any(b):
        raise InputError("argument 'path' does not move (q(s) is constant): there is no timing to optimise; give "
                         "a path between two different poses")
    _check_static(c, L, friction, s, "s = {:.6g} on the path", "no timing can follow the path under")
    delta = np.diff(s)
    N = delta.size
    scale = max(float(np.max(x)) for x in limits if x is not None)
    sub = np.full(N, 0 if collocation else int(checks))
    tight = np.ones(N)  # per interval, the factor on its limits
    for _ in range(MAX_ROUNDS):
        rows = _all_rows(robot, path, s, sub, limits, tight, friction)
        lo, hi, failed = _controllable_sets(rows, delta, scale)
        if failed >= 0 or lo[0] > 0:
            where = s[max(failed, 0)]
            raise InfeasibleLimitsError(f"no admissible speed at s = {where:.6g} on the path: the limits cannot "
                                        "hold the robot there at rest or in motion")
        x, u = _greedy(rows, delta, lo, hi)
        peak = _violations(robot, path, s, x, u, sub, limits, friction)
        bad = (peak > 1 + 1e-10) & (sub > 0)
        if not np.any(bad):
            break
        finer = bad & (sub < REFINE)
        tight = np.where(bad & ~finer, tight / peak, tight)
        sub = np.where(finer, np.minimum(2 * sub, REFINE), sub)
    else:
        warnings.warn(f"time_optimal: after {MAX_ROUNDS} rounds of refinement the executed motion still exceeds a "
                      f"limit by a factor {float(np.max(peak)):.6g} (result.peak_ratio); give a finer grid",
                      RuntimeWarning, stacklevel=2)
    sd = np.sqrt(x)
    denom = sd[:-1] + sd[1:]
    if np.any(denom == 0):
        i = int(np.argmax(denom == 0))
        raise InfeasibleLimitsError(f"the path stalls (ṡ = 0) on [{s[i]:.6g}, {s[i + 1]:.6g}]: the limits "
                                    "do not let the robot move there")
    dts = 2 * delta / denom
    t = np.concatenate([[0.0], np.cumsum(dts)])
    torques = a[:-1] * u[:, None] + b[:-1] * x[:-1, None] + c[:-1]
    finite_result("time_optimal", t, sd, u, torques)
    return TimeOptimal(duration=float(t[-1]), s=s, sd=sd, sdd=u, t=t, torques=torques, limits=L,
                       controllable=np.column_stack([lo, hi]), path=path, checks=sub,
                       peak_ratio=float(np.max(peak)))
