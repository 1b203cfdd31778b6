"""Optimal excitation trajectories for dynamic identification (Swevers et al., finite Fourier series).

Each joint follows a finite Fourier series of base pulsation ω_f = 2π f_f with H harmonics

    q_i(t)   = q0_i + Σ_l [ a_il / (ω_f l) sin(ω_f l t) − b_il / (ω_f l) cos(ω_f l t) ]
    q̇_i(t)  = Σ_l [ a_il cos(ω_f l t) + b_il sin(ω_f l t) ]
    q̈_i(t)  = Σ_l ω_f l [ −a_il sin(ω_f l t) + b_il cos(ω_f l t) ]

periodic with period 1/f_f, so that measurements can be averaged over periods and the data are band-limited
to H f_f.  The coefficients (a, b, q0) are chosen to minimise the condition number of the observation matrix
W = [D_B(q(t_1)); …; D_B(q(t_K))] of the base parameters (Khalil & Dombre [9.40]; the regressor of [9.36]
restricted to the base columns) at K points of one period, subject to the joint position, velocity and
acceleration limits at a dense grid and to q̇(0) = q̈(0) = 0 (the motion starts and ends at rest).
Every constraint is linear in (a, b, q0), so scipy's SLSQP handles them exactly; a final check on a finer grid
scales a joint's oscillation down if it exceeds a limit between grid points.
"""

from __future__ import annotations

from types import MappingProxyType
from dataclasses import dataclass

import numpy as np

from robodyn.model.robot import check_robot
from robodyn.progress import progress
from robodyn.errors import InputError
from robodyn.model.robot import Robot

#: Default limits where the robot gives none: position (rad | m), velocity (rad/s | m/s), acceleration.
DEFAULT_POSITION_LIMIT = MappingProxyType({0: np.pi, 1: 0.5})
DEFAULT_VELOCITY_LIMIT = MappingProxyType({0: 1.5, 1: 0.5})
DEFAULT_ACCELERATION_LIMIT = MappingProxyType({0: 5.0, 1: 2.0})


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
    limits : dict — ``{"q": (n, 2), "qd": (n,), "qdd": (n,)}`` the limits it satisfies.
    condition_number : float — cond(W) of the base-parameter observation matrix at the optimisation points.
    iterations : int — optimiser iterations used.
    converged : bool — False when the iteration limit was hit (``message`` says so).
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


def resolve_limits(robot: Robot, limits: dict | None) -> dict:
    """Position (n, 2), velocity (n,), acceleration (n,) limits: ``limits`` entries, else the robot's finite
    ``qlim``, else the documented defaults (revolute ±π rad, 1.5 rad/s, 5 rad/s²; prismatic ±0.5 m, 0.5 m/s,
    2 m/s²)."""
    n = robot.n
    sig = robot.sigma[robot.joint_frames]
    limits = {} if limits is None else dict(limits)
    unknown = set(limits) - {"q", "qd", "qdd"}
    if unknown:
        raise InputError(f"limits: unknown key(s) {sorted(unknown)}; use 'q' (n, 2), 'qd' (n,), 'qdd' (n,)")
    qlim = np.array(robot.qlim, dtype=float)
    default = np.array([DEFAULT_POSITION_LIMIT[s] for s in sig])
    qlim[:, 0] = np.where(np.isfinite(qlim[:, 0]), qlim[:, 0], -default)
    qlim[:, 1] = np.where(np.isfinite(qlim[:, 1]), qlim[:, 1], default)
    out = {
        "q": qlim,
        "qd": np.array([DEFAULT_VELOCITY_LIMIT[s] for s in sig]),
        "qdd": np.array([DEFAULT_ACCELERATION_LIMIT[s] for s in sig]),
    }
    for key, shape in (("q", (n, 2)), ("qd", (n,)), ("qdd", (n,))):
        if key in limits:
            v = np.broadcast_to(np.asarray(limits[key], dtype=float), shape) if key != "q" else np.asarray(
                limits[key], dtype=float)
            if v.shape != shape or not np.all(np.isfinite(v)):
                raise InputError(f"limits['{key}'] must be {shape} finite numbers (one per joint)")
            out[key] = np.array(v)
    if np.any(out["q"][:, 0] >= out["q"][:, 1]):
        k = int(np.flatnonzero(out["q"][:, 0] >= out["q"][:, 1])[0]) + 1
        raise InputError(f"limits['q'] of joint {k}: min must be < max")
    for key in ("qd", "qdd"):
        if np.any(out[key] <= 0):
            k = int(np.flatnonzero(out[key] <= 0)[0]) + 1
            raise InputError(f"limits['{key}'] of joint {k} must be > 0")
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
) -> ExcitationTrajectory:
    """An excitation trajectory minimising cond(W) of the base-parameter observation matrix (Swevers).

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
        ``{"q": (n, 2) [min, max], "qd": (n,), "qdd": (n,)}`` (rad, rad/s, rad/s² | m, m/s, m/s²); missing
        entries come from the robot's finite ``qlim``, else: revolute ±π rad, 1.5 rad/s, 5 rad/s²;
        prismatic ±0.5 m, 0.5 m/s, 2 m/s².
    seed : int
        Seed of the random starting coefficients; the result is deterministic for a given random seed.
    friction : bool
        Include the friction columns Fc, Fv, Foff in W (as :func:`identify` with ``friction=True``).
    points : int or None
        K, the optimisation points in one period (default max(50, 2 b / n + 10), b the number of base parameters).
    max_iterations : int
        Iteration limit of SLSQP; when hit, ``converged`` is False and ``message`` says so.
    unlimited : bool
        A robot without finite joint limits (``qlim``) is refused unless ``limits["q"]`` is given or this is True
        (then revolute joints swing within ±π rad, prismatic within ±0.5 m: not a safe motion for hardware).

    Returns
    -------
    ExcitationTrajectory
        ``.sample(t)`` → (q, q̇, q̈), ``.condition_number``.
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
    t_obj = np.arange(K) / (K * ff)
    t_con = np.arange(max(200, 20 * H)) / (max(200, 20 * H) * ff)
    Bq, Bqd, Bqdd = _basis(w, H, t_con)
    Bobj = _basis(w, H, t_obj)
    nv = 2 * H * n + n

    def unpack(x):
        ab = x[: 2 * H * n].reshape(n, 2 * H)
        return ab, x[2 * H * n:]

    def states(x, basis):
        ab, q0 = unpack(x)
        return q0 + basis[0] @ ab.T, basis[1] @ ab.T, basis[2] @ ab.T

    def log_conds(q, qd, qdd):
        """log cond(W) for states (..., K, n) → (...), from the eigenvalues of WᵀW (a batch of b × b
        problems, much cheaper than the SVDs of the K n × b matrices; exact enough for cond(W) ≪ 1e7)."""
        W = bp.regressor(q, qd, qdd)
        W = W.reshape(W.shape[:-3] + (-1, bp.count))
        lam = np.linalg.eigvalsh(np.swapaxes(W, -1, -2) @ W)
        return 0.5 * (np.log(lam[..., -1]) - np.log(np.maximum(lam[..., 0], 1e-300)))

    def log_cond(x):
        return float(log_conds(*states(x, Bobj)))

    def condition_number(x):
        W = bp.regressor(*states(x, Bobj)).reshape(-1, bp.count)
        return float(np.linalg.cond(W))

    # Forward-difference gradient with every perturbed trajectory in one batched regressor call (a variable
    # moves one joint only): one call of nv K states instead of nv calls of K states.
    var_joint = np.concatenate([np.repeat(np.arange(n), 2 * H), np.arange(n)])
    var_col = np.concatenate([np.tile(np.arange(2 * H), n), np.zeros(n, int)])
    is_q0 = np.arange(nv) >= 2 * H * n

    def gradient(x):
        base = states(x, Bobj)
        step = 1e-7 * np.maximum(1.0, np.abs(x))
        pert = [np.repeat(b[None], nv, axis=0) for b in base]
        ks = np.arange(nv)
        for k, B in enumerate(Bobj):
            delta = np.where(is_q0[:, None], 1.0 if k == 0 else 0.0, B[:, var_col].T) * step[:, None]
            pert[k][ks, :, var_joint] += delta
        f = log_conds(*pert)
        return (f - log_conds(*base)) / step

    # Linear inequality constraints G x <= h on the grid, written per joint (block structure).
    rows, rhs = [], []
    Kc = t_con.size
    for i in range(n):
        sl = slice(2 * H * i, 2 * H * (i + 1))
        e = np.zeros((Kc, nv))
        for B, lo, hi, with_q0 in ((Bq, lim["q"][i, 0], lim["q"][i, 1], True), (Bqd, -lim["qd"][i], lim["qd"][i], False),
                                   (Bqdd, -lim["qdd"][i], lim["qdd"][i], False)):
            g = e.copy()
            g[:, sl] = B
            if with_q0:
                g[:, 2 * H * n + i] = 1.0
            rows += [g, -g]
            rhs += [np.full(Kc, hi), np.full(Kc, -lo)]
    G, h = np.vstack(rows), np.concatenate(rhs)
    # q̇(0) = Σ a_l = 0 and q̈(0) = ω Σ l b_l = 0 per joint.
    E = np.zeros((2 * n, nv))
    for i in range(n):
        E[2 * i, 2 * H * i: 2 * H * i + H] = 1.0
        E[2 * i + 1, 2 * H * i + H: 2 * H * (i + 1)] = np.arange(1, H + 1)

    rng = np.random.default_rng(seed)
    ab0 = rng.uniform(-1, 1, (n, 2 * H))
    ab0[:, 0] -= ab0[:, :H].sum(1)  # start at rest: Σ a_l = 0
    ab0[:, H] -= (ab0[:, H:] * np.arange(1, H + 1)).sum(1)  # Σ l b_l = 0
    q0 = lim["q"].mean(1)
    x0 = np.concatenate([ab0.ravel(), q0])
    x0 = _fit_limits(x0, n, H, (Bq, Bqd, Bqdd), lim, margin=0.5)

    with progress("optimising the excitation trajectory", total=max_iterations) as bar:
        count = [0]

        def step(_x):
            count[0] += 1
            bar.advance()

        res = minimize(log_cond, x0, jac=gradient, method="SLSQP", callback=step,
                       constraints=[{"type": "ineq", "fun": lambda x: h - G @ x, "jac": lambda x: -G},
                                    {"type": "eq", "fun": lambda x: E @ x, "jac": lambda x: E}],
                       options={"maxiter": int(max_iterations), "ftol": 1e-6})
    x = res.x if np.isfinite(res.fun) and log_cond(res.x) <= log_cond(x0) else x0
    # A finer check between the constraint points; scale a joint down where it exceeds a limit.
    fine = _basis(w, H, np.arange(20 * Kc) / (20 * Kc * ff))
    x = _fit_limits(x, n, H, fine, lim, margin=1.0 - 1e-5)  # covers the peaks between the fine points
    ab, q0 = unpack(x)
    hit = res.status == 9 or res.nit >= max_iterations
    message = (f"iteration limit {max_iterations} reached; cond(W) may improve with more iterations"
               if hit else str(res.message))
    return ExcitationTrajectory(
        robot=robot, duration=float(duration), base_frequency=ff, a=ab[:, :H].copy(), b=ab[:, H:].copy(),
        q0=q0.copy(), limits=lim, condition_number=condition_number(x), iterations=int(res.nit),
        converged=not hit and bool(res.success), message=message,
    )


def _fit_limits(x, n, H, basis, lim, margin):
    """Scale each joint's oscillation about q0 (and clip q0 into the limits) so that the trajectory on the
    grid uses at most ``margin`` of every limit."""
    x = x.copy()
    Bq, Bqd, Bqdd = basis
    for i in range(n):
        sl = slice(2 * H * i, 2 * H * (i + 1))
        lo, hi = lim["q"][i]
        q0 = float(np.clip(x[2 * H * n + i], lo, hi))
        dq, qd, qdd = Bq @ x[sl], Bqd @ x[sl], Bqdd @ x[sl]
        ratios = [
            (hi - q0) * margin / dq.max() if dq.max() > 0 else np.inf,
            (q0 - lo) * margin / -dq.min() if dq.min() < 0 else np.inf,
            lim["qd"][i] * margin / np.abs(qd).max() if np.abs(qd).max() > 0 else np.inf,
            lim["qdd"][i] * margin / np.abs(qdd).max() if np.abs(qdd).max() > 0 else np.inf,
        ]
        x[sl] *= min(1.0, *ratios)
        x[2 * H * n + i] = q0
    return x
