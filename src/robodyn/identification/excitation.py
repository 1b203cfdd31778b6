"""Optimal excitation trajectories for dynamic identification (Swevers et al., finite Fourier series).

Each joint follows a finite Fourier series of base pulsation ω_f = 2π f_f with H harmonics

    q_i(t)   = q0_i + Σ_l [ a_il / (ω_f l) sin(ω_f l t) − b_il / (ω_f l) cos(ω_f l t) ]
    q̇_i(t)  = Σ_l [ a_il cos(ω_f l t) + b_il sin(ω_f l t) ]
    q̈_i(t)  = Σ_l ω_f l [ −a_il sin(ω_f l t) + b_il cos(ω_f l t) ]

periodic with period 1/f_f.  The coefficients minimise a criterion of the observation matrix W of the base
parameters (Khalil & Dombre [9.40]) at K points of one period, subject to the joint position, velocity,
acceleration (and torque) limits and to q̇(0) = q̈(0) = 0; the criteria, the Bernstein-tightened limits and the
solver (SLSQP) are described in docs/identification.md, "Excitation trajectories".
"""

from __future__ import annotations

from types import MappingProxyType
from dataclasses import dataclass

import numpy as np

from robodyn.arrays import as_real_array, one_per
from robodyn.dynamics import api
from robodyn.model.robot import check_robot
from robodyn.progress import progress
from robodyn.errors import InputError
from robodyn.model.robot import Robot

#: Default limits where the robot gives none: position (rad | m), velocity (rad/s | m/s), acceleration.
DEFAULT_POSITION_LIMIT = MappingProxyType({0: np.pi, 1: 0.5})
DEFAULT_VELOCITY_LIMIT = MappingProxyType({0: 1.5, 1: 0.5})
DEFAULT_ACCELERATION_LIMIT = MappingProxyType({0: 5.0, 1: 2.0})
#: SLSQP runs at most this many times when it stops on rounding (see excitation_trajectory).
_RESTARTS = 3
#: An iterate counts as the best so far only within this share of its scaled limits (SLSQP's iterates may leave
#: them; ``_Problem.fit`` scales small excesses back).
FEASIBILITY = 1e-3
#: SLSQP's variables are kept within ±BOUND (a trust region: each variable has a unit effect on the scaled limits,
#: so that feasible designs have |y_k| of order 1): a step far outside the limits (an incompatible linearised
#: subproblem) reaches motions where W is singular to rounding and the criterion meaningless.
BOUND = 10.0
#: The held-out states of the "prediction" criterion: this many states drawn uniformly within the position,
#: velocity and acceleration limits (a fixed generator, the same for every seed).
REFERENCE_STATES = 1000
#: Floor of the relative noise levels σ_j of the "prediction" criterion, as a share of their mean square: a joint
#: that carries no torque in the a priori model still has a sensor with noise.
NOISE_FLOOR = 1e-2
CRITERIA = ("prediction", "cond")
#: The a priori torques are checked at this many points per harmonic in a period, each within this share of its
#: limit: the torque is not a trigonometric polynomial of degree H (no Bernstein bound), and the margin covers its
#: excursions between the points (for components up to degree 10 H, ½ (10 π / 256)² < 1 %).
TORQUE_POINTS = 256
TORQUE_MARGIN = 0.99


@dataclass(frozen=True, eq=False)
class ExcitationTrajectory:
    """A periodic excitation trajectory: finite Fourier series per joint (Swevers).

    Attributes
    ----------
    robot : Robot
    duration : float — length of the measurement (s); ``times()`` covers [0, duration].
    base_frequency : float — f_f (Hz); the period is 1/f_f.
    a, b : ndarray (n, H) — Fourier coefficients of q̇ (rad/s | m/s).
    q0 : ndarray (n,) — offsets (rad | m).
    limits : dict — ``{"q": (n, 2), "qd": (n,), "qdd": (n,), "tau": (n,)}`` the limits it satisfies (``tau`` the
        torques of the a priori model, inf where unlimited).
    condition_number : float — cond(W) of the base-parameter observation matrix at the optimisation points.
    iterations : int — optimiser iterations used.
    criterion : str — what the design minimised (``excitation_trajectory``'s ``criterion``).
    converged : bool — False when SLSQP stopped before its convergence test held (``message`` says why).
    message : str
    """

    robot: Robot
    duration: float
    base_frequency: float
    a: np.ndarray
    b: np.ndarray
    q0: np.ndarray
    limits: dict
    condition_number: float
    iterations: int
    converged: bool
    message: str
    criterion: str

    @property
    def harmonics(self) -> int:
        return int(self.a.shape[1])

    def sample(self, t):
        """q, q̇, q̈ at times t (..., ) s → three arrays (..., n), vectorised."""
        t = np.asarray(t, dtype=float)
        return _series(self.a, self.b, self.q0, 2 * np.pi * self.base_frequency, t)

    def times(self, rate: float) -> np.ndarray:
        """Sampling instants 0, 1/rate, … up to ``duration`` (s)."""
        if not rate > 0:
            raise InputError(f"rate = {rate!r}; give a sampling rate > 0 Hz")
        return np.arange(int(np.floor(self.duration * rate + 1e-9)) + 1) / rate


def _series(a, b, q0, w, t):
    l = np.arange(1, a.shape[1] + 1)
    phase = w * l * t[..., None, None]  # (..., 1, H)
    s, c = np.sin(phase), np.cos(phase)
    wl = w * l
    # element-wise products summed over the harmonics (no matrix product): a batch gives bit-for-bit the
    # values of single samples
    q = q0 + (s * (a / wl) - c * (b / wl)).sum(-1)
    qd = (c * a + s * b).sum(-1)
    qdd = ((c * b - s * a) * wl).sum(-1)
    return q, qd, qdd


def _basis(w: float, H: int, t: np.ndarray):
    """Matrices mapping (a_i, b_i) of one joint to q − q0, q̇, q̈ at times t: each (K, 2H)."""
    l = np.arange(1, H + 1)
    wl = w * l
    s, c = np.sin(wl * t[:, None]), np.cos(wl * t[:, None])
    return (np.hstack([s / wl, -c / wl]), np.hstack([c, s]), np.hstack([-s * wl, c * wl]))


def position_box(robot: Robot, qlim) -> np.ndarray:
    """The position limits ``qlim`` (n, 2), an unlimited end at ``DEFAULT_POSITION_LIMIT`` (±π rad, ±0.5 m)."""
    default = np.array([DEFAULT_POSITION_LIMIT[s] for s in robot.sigma[robot.joint_frames]])[:, None]
    return np.where(np.isfinite(qlim), qlim, default * [-1.0, 1.0])


def resolve_limits(robot: Robot, limits: dict | None) -> dict:
    """Position (n, 2), velocity (n,), acceleration (n,), torque (n,) limits: ``limits`` entries, else the robot's
    finite ``qlim`` and ``qdlim``, else the documented defaults (revolute ±π rad, 1.5 rad/s, 5 rad/s²; prismatic
    ±0.5 m, 0.5 m/s, 2 m/s²); torques: ``limits["tau"]``, else the robot's ``taulim`` (inf where unlimited)."""
    n = robot.n
    sig = robot.sigma[robot.joint_frames]
    limits = {} if limits is None else dict(limits)
    unknown = set(limits) - {"q", "qd", "qdd", "tau"}
    if unknown:
        raise InputError(f"limits: unknown key(s) {sorted(unknown)}; use 'q' (n, 2), 'qd' (n,), 'qdd' (n,), "
                         "'tau' (n,)")
    out = {
        "q": position_box(robot, robot.qlim),
        "qd": np.where(np.isfinite(robot.qdlim), robot.qdlim, [DEFAULT_VELOCITY_LIMIT[s] for s in sig]),
        "qdd": np.array([DEFAULT_ACCELERATION_LIMIT[s] for s in sig]),
        "tau": np.array(robot.taulim, dtype=float),
    }
    if "q" in limits:
        q = as_real_array("limits['q']", limits["q"]).astype(float)
        if q.shape != (n, 2) or not np.all(np.isfinite(q)):
            raise InputError(f"limits['q'] has shape {q.shape} or is not finite; give ({n}, 2) finite numbers "
                             "[min, max] (rad | m), one row per joint")
        out["q"] = q
    finite_positive = lambda v: np.isfinite(v) & (v > 0)  # noqa: E731
    # a torque limit may be inf (an unlimited joint; NaN fails v > 0); the motion limits must be finite
    for key, valid, wanted in (("qd", finite_positive, "finite speeds > 0 (rad/s | m/s)"),
                               ("qdd", finite_positive, "finite accelerations > 0 (rad/s² | m/s²)"),
                               ("tau", lambda v: v > 0, "torques > 0 (N m | N; inf where unlimited)")):
        if key in limits:
            out[key] = one_per(f"limits['{key}']", limits[key], n, valid, wanted)
    if np.any(out["q"][:, 0] >= out["q"][:, 1]):
        k = int(np.flatnonzero(out["q"][:, 0] >= out["q"][:, 1])[0]) + 1
        raise InputError(f"limits['q'] of joint {k}: min must be < max")
    return out


def require_joint_limits(robot: Robot, what: str, option: str, unlimited: bool) -> None:
    """InputError when ``robot`` has joints without finite limits (qlim) and the caller did not opt out: motions
    and poses designed for hardware must stay inside the manufacturer's limits."""
    free = np.flatnonzero(~np.all(np.isfinite(robot.qlim), axis=1))
    if free.size and not unlimited:
        joints = ", ".join(str(int(j) + 1) for j in free)
        raise InputError(f"{what}: robot '{robot.name}' has no joint limits for joint(s) {joints}; give {option} "
                         f"(rad | m, from the manufacturer's data) or unlimited=True to use ±π rad (revolute) "
                         f"/ ±0.5 m (prismatic), which may be unsafe on hardware")


def excitation_trajectory(
    robot: Robot,
    duration: float,
    harmonics: int = 5,
    base_frequency: float | None = None,
    limits: dict | None = None,
    seed: int = 0,
    friction: bool = True,
    points: int | None = None,
    max_iterations: int = 100,
    unlimited: bool = False,
    criterion: str = "prediction",
) -> ExcitationTrajectory:
    """An excitation trajectory minimising cond(W) of the base-parameter observation matrix (Swevers), by default
    times the error of the torques that ordinary least squares on it predicts for other states.

    Parameters
    ----------
    robot : Robot
    duration : float
        Length of the measurement (s).
    harmonics : int
        H, harmonics per joint (default 5).
    base_frequency : float or None
        f_f (Hz); default 1/duration (one period over the measurement).  The highest frequency in the data is
        H f_f.
    limits : dict or None
        ``{"q": (n, 2) [min, max], "qd": (n,), "qdd": (n,), "tau": (n,)}`` (rad, rad/s, rad/s², N m | m, m/s,
        m/s², N), as :func:`resolve_limits`; the position, velocity and acceleration limits hold at every instant
        (:class:`_Problem`).  ``tau`` bounds the torques of the a priori model ``robot`` (its friction included):
        |τ_j(t)| ≤ ``TORQUE_MARGIN`` L_j on ``TORQUE_POINTS`` H points of a period (:class:`_Torques`).
    seed : int
        Seed of the random starting coefficients; the result is deterministic for a given random seed.
    friction : bool
        Include the friction columns Fc, Fv, Foff in W (as :func:`identify` with ``friction=True``).
    points : int or None
        K, the optimisation points in one period, at t = (k + ½) / (K f_f) (default max(50, 2 b / n + 10), b the
        number of base parameters).
    max_iterations : int
        Iteration limit of SLSQP (restarts included); when hit, ``converged`` is False and ``message`` says so.
    unlimited : bool
        A robot without finite joint limits (``qlim``) is refused unless ``limits["q"]`` is given or this is True
        (then revolute joints swing within ±π rad, prismatic within ±0.5 m: not a safe motion for hardware).
    criterion : {"prediction", "cond"}
        What the design minimises.  ``"cond"``: cond(W) (Swevers et al.).  ``"prediction"`` (default): cond(W)
        times the RMS error, relative to the noise, of the torques that ordinary least squares on W predicts for
        ``REFERENCE_STATES`` states within the limits, noise proportional to each joint's a priori torque
        (:class:`_Objective`; docs/identification.md, "Expected accuracy").

    Returns
    -------
    ExcitationTrajectory
        ``.sample(t)`` → (q, q̇, q̈), ``.condition_number``; ``converged`` False (and ``message`` saying why) when
        SLSQP stopped before its convergence test held.

    Raises
    ------
    InputError
        Bad arguments or limits; torque limits that the robot's own weight at rest in the middle of the position
        limits already exceeds.
    """
    check_robot(robot)
    from scipy.optimize import minimize

    from robodyn.parameters.base import base_parameters

    if not (np.isfinite(duration) and duration > 0):
        raise InputError(f"duration = {duration!r}; give a positive number of seconds")
    if int(harmonics) != harmonics or harmonics < 1:
        raise InputError(f"harmonics = {harmonics!r}; give an integer >= 1")
    H = int(harmonics)
    ff = 1.0 / duration if base_frequency is None else float(base_frequency)
    if not (np.isfinite(ff) and ff > 0):
        raise InputError(f"base_frequency = {base_frequency!r}; give a positive frequency in Hz")
    if criterion not in CRITERIA:
        raise InputError(f"criterion = {criterion!r}; use 'prediction' (cond(W) times OLS's predicted error, the "
                         "default) or 'cond' (cond(W) alone)")
    if int(max_iterations) != max_iterations or max_iterations < 1:
        raise InputError(f"max_iterations = {max_iterations!r}; give an integer >= 1")
    if not (isinstance(limits, dict) and "q" in limits):
        require_joint_limits(robot, "excitation_trajectory", "limits={'q': ...}", unlimited)
    lim = resolve_limits(robot, limits)
    n = robot.n
    w = 2 * np.pi * ff
    bp = base_parameters(robot, method="numeric", friction=friction)
    K = int(points) if points is not None else max(50, 2 * bp.count // max(n, 1) + 10)
    if K * n < bp.count:
        raise InputError(f"points = {K}: K n = {K * n} rows for {bp.count} base parameters; give more points")
    problem = _Problem(w, H, n, lim)
    torques = _Torques(robot, problem, lim["tau"]) if np.any(np.isfinite(lim["tau"])) else None
    # midway between the samples of a period: never at t = 0, where q̇ = 0 up to rounding and sign(q̇) in the
    # Coulomb column would take the rounding's sign
    Bobj = _basis(w, H, (np.arange(K) + 0.5) / (K * ff))

    def regressor(y):
        return bp.regressor(*problem.states(y, Bobj)).reshape(-1, bp.count)

    if criterion == "prediction":
        Wr = bp.regressor(*reference_states(lim, n)).reshape(-1, n, bp.count)
        objective = _Objective(bp.values, n, np.einsum("knb,knc->nbc", Wr, Wr) / Wr.shape[0])
    else:
        objective = _Objective(bp.values, n, None)
    cache = {}

    def evaluate(y):
        key = y.tobytes()
        if key not in cache:
            cache.clear()
            W = regressor(y)
            cache[key] = (W, *objective(W))
        return cache[key]

    def value(y):
        return evaluate(y)[1]

    # the criterion's gradient with respect to W (Γ, from the closed forms in _Objective) contracted with the
    # forward differences of W: one batched regressor call of every perturbed trajectory (a variable moves one
    # joint only)
    def gradient(y):
        W, _, dfdW = evaluate(y)
        h = 1e-7
        dW = bp.regressor(*problem.perturbed_states(y, Bobj, h)).reshape(y.size, -1, bp.count) - W
        return np.einsum("krc,rc->k", dW, dfdW) / h

    rng = np.random.default_rng(seed)
    y0 = rng.uniform(-1, 1, problem.size)
    y0[problem.n * problem.m:] = 0.0  # start in the middle of the position limits
    y0 = problem.fit(y0, margin=0.5)

    def feasible(y):
        return y if torques is None else torques.shrink(y)

    y0 = feasible(y0)
    G = problem.G
    constraints = [{"type": "ineq", "fun": lambda y: 1.0 - G @ y, "jac": lambda y: -G}]
    if torques is not None:
        constraints.append({"type": "ineq", "fun": torques.constraint, "jac": torques.jacobian})
    y, iterations, res = y0, 0, None
    best = {}

    def iterate(yk):
        # the best feasible iterate: SLSQP's last point can be far worse than points it passed (a failed
        # subproblem), or far outside the limits, where scaling it back into them (fit) undoes the motion
        bar.advance()
        outside = np.max(G @ yk) > 1.0 + FEASIBILITY
        if outside or (torques is not None and np.min(torques.constraint(yk)) < -FEASIBILITY):
            return
        v = value(yk)
        if np.isfinite(v) and v < best.get("value", np.inf):
            best.update(value=v, y=np.array(yk))

    with progress("optimising the excitation trajectory", total=max_iterations) as bar:
        # SLSQP can stop on rounding (an incompatible linearised subproblem, a failed line search, an LSQ
        # subproblem out of iterations) far from a stationary point; it restarts from the best point so far,
        # within the iteration budget
        for _ in range(_RESTARTS):
            best.clear()
            start = y
            res = minimize(value, y, jac=gradient, method="SLSQP", callback=iterate, constraints=constraints,
                           bounds=[(-BOUND, BOUND)] * y.size,
                           options={"maxiter": int(max_iterations) - iterations, "ftol": 1e-6})
            iterations += int(res.nit)
            # SLSQP meets linear constraints up to rounding: scale each joint into the limits exactly; keep the
            # previous point when the optimiser made things worse
            for candidate in (res.x, best.get("y")):
                if candidate is not None and np.all(np.isfinite(candidate)):
                    fitted = feasible(problem.fit(candidate, margin=1.0))
                    if value(fitted) < value(y):
                        y = fitted
            if (res.success or res.status == 9 or iterations >= max_iterations or res.status not in (3, 4, 5, 6, 8)
                    or y is start):
                break
    hit = not res.success and (res.status == 9 or iterations >= max_iterations)
    if hit:
        message = f"iteration limit {max_iterations} reached; cond(W) may improve with more iterations"
    elif not res.success:
        message = f"the optimiser stopped without converging (SLSQP: {res.message})"
    else:
        message = str(res.message)
    x = problem.coefficients(y)
    ab, q0 = x[: 2 * H * n].reshape(n, 2 * H), x[2 * H * n:]
    return ExcitationTrajectory(
        robot=robot, duration=float(duration), base_frequency=ff, a=ab[:, :H].copy(), b=ab[:, H:].copy(),
        q0=q0.copy(), limits=lim, condition_number=float(np.linalg.cond(regressor(y))), iterations=iterations,
        converged=bool(res.success), message=message, criterion=criterion,
    )


def reference_states(lim: dict, n: int, count: int = REFERENCE_STATES):
    """``count`` states (q, q̇, q̈), each (count, n), drawn uniformly within the limits ``lim`` (of
    :func:`resolve_limits`) by a fixed generator: held-out states of a typical motion within the limits."""
    rng = np.random.default_rng(0)
    unit = rng.uniform(-1.0, 1.0, (3, count, n))
    q = lim["q"].mean(1) + 0.5 * (lim["q"][:, 1] - lim["q"][:, 0]) * unit[0]
    return q, lim["qd"] * unit[1], lim["qdd"] * unit[2]


class _Objective:
    """The design criterion f(W) and its gradient ∂f/∂W (K n, b), W (K n, b) the rows of K states, n joints each.

    f = log σ_max(W) − log σ_min(W) (cond), with dσ = uᵀ dW v for a simple singular value (u, v its singular
    vectors); the σ's and v's from the eigenvectors of WᵀW (cheaper than the SVD of W; exact enough for
    cond(W) ≪ 1e7).  With reference matrices R_j (n, b, b), f adds log F, F = (1/n) Σ_j r_j, r_j = √e_j / σ_j,
    e_j = tr(R_j C), C = M⁻¹ S M⁻¹, M = Σ_j G_j, S = Σ_j σ_j² G_j, G_j = W_jᵀW_j, σ_j² = mean_k τ_jk² + floor,
    τ = W K_B (the a priori base parameters ``values``).  With A = Σ_j a_j R_j, a_j = 1 / (2 n F √e_j σ_j),
    P = M⁻¹ A M⁻¹, Q = C A M⁻¹ + M⁻¹ A C: Σ_j a_j de_j = tr(A dC) = −tr(Q dM) + tr(P dS), so that
    ∂/∂W_j = −2 W_j Q + 2 σ_j² W_j P, plus the terms through σ_j: ∂f/∂σ_j = 2 σ_j tr(G_j P) − r_j / (n F σ_j).
    """

    def __init__(self, values, n, reference):
        self.values, self.n, self.reference = np.asarray(values, dtype=float), n, reference

    def __call__(self, W):
        """(f, ∂f/∂W)."""
        lam, V = np.linalg.eigh(W.T @ W)
        # WᵀW resolves σ_min down to √ε σ_max only: below it (a rank-deficient iterate) σ_min is rounding, and its
        # singular vector, divided by it, would overflow the gradient
        s = np.sqrt(np.maximum(lam[[-1, 0]], np.finfo(float).eps * max(lam[-1], 1e-300)))
        U = (W @ V[:, [-1, 0]]) / s
        f = float(np.log(s[0]) - np.log(s[1]))
        grad = np.outer(U[:, 0], V[:, -1]) / s[0] - np.outer(U[:, 1], V[:, 0]) / s[1]
        if self.reference is None:
            return f, grad
        p, dp = self.prediction(W)
        return f + p, grad + dp

    def noise(self, tau):
        """σ_j² (n,) and ∂σ_j²/∂(mean_k τ_ik²) (n, n) of the a priori torques τ (K, n): relative noise, floored
        at NOISE_FLOOR² of the mean; equal noise where the a priori model has no torque at all."""
        ms = np.mean(tau**2, axis=0)
        if not ms.sum() > 0:
            return np.ones(self.n), np.zeros((self.n, self.n))
        floor = NOISE_FLOOR**2 * ms.mean()
        return ms + floor, np.eye(self.n) + NOISE_FLOOR**2 / self.n

    def prediction(self, W):
        """log F and ∂ log F / ∂W (class docstring)."""
        n, b = self.n, W.shape[1]
        Wj = W.reshape(-1, n, b)
        tau = Wj @ self.values  # (K, n)
        var, dvar = self.noise(tau)
        sig = np.sqrt(var)
        G = np.einsum("knb,knc->nbc", Wj, Wj)
        M = G.sum(0)
        # M⁻¹ through the column-scaled M (unit diagonal), its eigenvalues clamped: a rank-deficient iterate gives
        # a large finite criterion, never a negative e_j
        diag = np.diag(M)
        d = 1.0 / np.sqrt(np.where(diag > np.finfo(float).eps * diag.max(), diag, diag.max()))
        lam, V = np.linalg.eigh(M * d[:, None] * d)
        Mi = (V / np.maximum(lam, 1e-14 * lam[-1])) @ V.T * d[:, None] * d
        C = Mi @ np.einsum("n,nbc->bc", var, G) @ Mi
        e = np.maximum(np.einsum("nbc,cb->n", self.reference, C), np.finfo(float).tiny)
        r = np.sqrt(e) / sig
        F = r.mean()
        A = np.einsum("n,nbc->bc", 1.0 / (2 * n * F * np.sqrt(e) * sig), self.reference)
        P = Mi @ A @ Mi
        Q = C @ A @ Mi
        Q = Q + Q.T
        dsig = 2 * sig * np.einsum("nbc,cb->n", G, P) - r / (n * F * sig)
        dms = (dsig / (2 * sig)) @ dvar  # ∂f/∂(mean_k τ_ik²)
        grad = -2 * (Wj @ Q) + 2 * var[:, None] * (Wj @ P) + (2 / len(Wj)) * (dms * tau)[..., None] * self.values
        return float(np.log(F)), grad.reshape(W.shape)


class _Problem:
    """The design variables, scaled, and the limits as linear inequalities G y <= 1 that imply them.

    Joint i's coefficients are c_i = Z D_i y_i: Z (2H, 2H − 2) an orthonormal basis of the motions that start
    at rest (Σ_l a_il = 0, Σ_l l b_il = 0), D_i a diagonal column scaling that gives every variable a unit
    effect on the scaled limits.  Its offset is q0_i = m_i + r_i u_i (m_i, r_i the middle and half range of its
    position limits).  The limits are sampled at N = 16 H points of a period and tightened by
    ρ = 1 − (π H / N)² / 2: for a trigonometric polynomial p of degree H, Bernstein's inequality |p''| <= H² max|p|
    and the Taylor expansion about its extremum give max|p| <= max_k |p(t_k)| / ρ, so the sampled constraints
    imply the limits at every instant.
    """

    def __init__(self, w, H, n, lim):
        self.w, self.H, self.n = w, H, n
        N = max(16 * H, 64)
        self.rho = 1.0 - 0.5 * (np.pi * H / N) ** 2
        Bq, Bqd, Bqdd = _basis(w, H, np.arange(N) / N * (2 * np.pi / w))
        E = np.zeros((2, 2 * H))
        E[0, :H], E[1, H:] = 1.0, np.arange(1, H + 1)
        self.Z = np.linalg.svd(E)[2][2:].T  # (2H, 2H − 2)
        self.mid, self.half = lim["q"].mean(1), 0.5 * (lim["q"][:, 1] - lim["q"][:, 0])
        m = 2 * H - 2
        self.scale = np.empty((n, m))
        blocks = []
        for i in range(n):
            rows = np.vstack([Bq @ self.Z / self.half[i], Bqd @ self.Z / lim["qd"][i],
                              Bqdd @ self.Z / lim["qdd"][i]]) / self.rho
            self.scale[i] = 1.0 / np.abs(rows).max(0)
            blocks.append(rows * self.scale[i])
        self.rows = blocks  # per joint (3N, m): the scaled q − m_i, q̇, q̈ rows
        self.N, self.m = N, m
        self.size = n * (m + 1)
        G = np.zeros((6 * N * n, self.size))
        for i, Bi in enumerate(blocks):
            r = slice(6 * N * i, 6 * N * (i + 1))
            g = np.zeros((3 * N, self.size))
            g[:, m * i: m * (i + 1)] = Bi
            g[:N, n * m + i] = 1.0 / self.rho
            G[r] = np.vstack([g, -g])
        self.G = G

    def coefficients(self, y):
        """x = [(a_i, b_i) per joint, q0] from the scaled variables y."""
        n, m = self.n, self.m
        ab = (y[: n * m].reshape(n, m) * self.scale) @ self.Z.T
        return np.concatenate([ab.ravel(), self.mid + self.half * y[n * m:]])

    def states(self, y, basis):
        x = self.coefficients(y)
        ab = x[: 2 * self.H * self.n].reshape(self.n, 2 * self.H)
        return x[2 * self.H * self.n:] + basis[0] @ ab.T, basis[1] @ ab.T, basis[2] @ ab.T

    def perturbed_states(self, y, basis, h):
        """States (size, K, n) of the trajectories with variable k moved by h, for every k."""
        n, m = self.n, self.m
        base = self.states(y, basis)
        out = [np.repeat(b[None], self.size, axis=0) for b in base]
        k = np.arange(n * m)
        joint = k // m
        dab = self.Z[:, k % m].T * (h * self.scale.ravel())[:, None]  # (n m, 2H)
        for o, B in zip(out, basis):
            o[k, :, joint] += dab @ B.T
        kq = np.arange(n * m, self.size)
        out[0][kq, :, kq - n * m] += h * self.half[:, None]
        return out

    def fit(self, y, margin):
        """Scale each joint's oscillation (and clip its offset) so that it uses at most ``margin`` of the
        tightened limits at the sample points."""
        y = np.array(y, dtype=float)
        n, m = self.n, self.m
        for i in range(n):
            u = float(np.clip(y[n * m + i], -margin * self.rho, margin * self.rho))
            p = self.rows[i] @ y[m * i: m * (i + 1)]
            pq, rest = p[: self.N], np.abs(p[self.N:]).max()
            ratios = [(margin - u / self.rho) / pq.max() if pq.max() > 0 else np.inf,
                      (margin + u / self.rho) / -pq.min() if pq.min() < 0 else np.inf,
                      margin / rest if rest > 0 else np.inf]
            y[m * i: m * (i + 1)] *= min(1.0, *ratios)
            y[n * m + i] = u
        return y


class _Torques:
    """The a priori model's torques τ = inverse_dynamics(robot, q, q̇, q̈) [9.6] (friction included) within the
    limits L_j of the joints that have one: SLSQP constraints 1 − (τ_j(t_k) / L_j)² ≥ 0 at the N points of a period
    of ``_Problem``, and a check at TORQUE_POINTS · H points of the period, |τ_j| ≤ TORQUE_MARGIN L_j, that
    :meth:`shrink` enforces on every point the optimiser returns."""

    def __init__(self, robot, problem, L):
        self.robot, self.problem = robot, problem
        self.joints = np.flatnonzero(np.isfinite(L))
        self.L = L[self.joints]
        period = 2 * np.pi / problem.w
        self.points = _basis(problem.w, problem.H, np.arange(problem.N) / problem.N * period)
        M = TORQUE_POINTS * problem.H
        self.dense = _basis(problem.w, problem.H, np.arange(M) / M * period)

    def ratios(self, states):
        """τ_j / L_j (..., joints with a limit)."""
        return api.inverse_dynamics(self.robot, *states)[..., self.joints] / self.L

    def constraint(self, y):
        return (1.0 - self.ratios(self.problem.states(y, self.points)) ** 2).ravel()

    def jacobian(self, y):
        h = 1e-7
        r = self.ratios(self.problem.states(y, self.points))
        dr = (self.ratios(self.problem.perturbed_states(y, self.points, h)) - r) / h  # (variables, N, joints)
        return (-2.0 * r * dr).reshape(self.problem.size, -1).T

    def peak(self, y) -> float:
        """max_j max_t |τ_j(t)| / L_j on the dense grid."""
        return float(np.abs(self.ratios(self.problem.states(y, self.dense))).max())

    def shrink(self, y):
        """``y`` with its oscillation scaled by the largest s in [0, 1] (bisection) that keeps the torques within
        TORQUE_MARGIN of their limits on the dense grid; the offsets stay."""
        osc = slice(0, self.problem.n * self.problem.m)

        def scaled(s):
            z = np.array(y, dtype=float)
            z[osc] *= s
            return z

        if self.peak(y) <= TORQUE_MARGIN:
            return y
        # the smallest motion, not s = 0: a joint at rest has no Coulomb friction (sign(0) = 0), a moving one has
        lo, hi = 2.0 ** -30, 1.0
        if self.peak(scaled(lo)) > TORQUE_MARGIN:
            states = self.problem.states(scaled(lo), self.dense)
            r = np.abs(self.ratios(states)).max(0)
            j = int(np.argmax(r))
            raise InputError(
                f"excitation_trajectory: about q0 = {np.round(states[0][0], 4).tolist()} (rad | m, the middle of "
                f"the position limits) robot '{self.robot.name}' needs {r[j] * self.L[j]:.4g} (N m | N) at joint "
                f"{self.joints[j] + 1} to hold its weight and overcome friction, above {TORQUE_MARGIN:g} of its "
                f"torque limit {self.L[j]:.4g}; give limits['tau'] or position limits limits['q'] around a pose the "
                "drives can hold")
        for _ in range(30):  # the peak is continuous in s > 0, ≤ the margin at lo, above it at hi
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if self.peak(scaled(mid)) <= TORQUE_MARGIN else (lo, mid)
        return scaled(lo)

