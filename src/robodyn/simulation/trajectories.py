"""Task-space reference trajectories: a straight line at constant orientation with a quintic time law."""

from __future__ import annotations

import numpy as np

from robodyn.arrays import as_real_array, finite_array
from robodyn.errors import InputError
from robodyn.spatial import homogeneous, rot_z


def quintic(t, duration: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Quintic time law s(t) = 10τ³ − 15τ⁴ + 6τ⁵, τ = t/T, and its derivatives ṡ, s̈.

    s goes from 0 to 1 with zero velocity and acceleration at both ends; constant (0 or 1) outside [0, T].

    Parameters
    ----------
    t : array_like (...,), s
    duration : float, T > 0 (s)

    Returns
    -------
    s, sd, sdd : ndarray (...,) (1, 1/s, 1/s²)
    """
    if not (duration > 0 and np.isfinite(duration)):
        raise InputError(f"duration = {duration!r}; give a positive finite time in seconds")
    if not np.all(np.isfinite(as_real_array("t", t).astype(float))):
        raise InputError("argument 't' contains NaN or inf; give finite times (s)")
    tau = np.clip(np.asarray(t, dtype=float) / duration, 0.0, 1.0)
    inside = (np.asarray(t) > 0) & (np.asarray(t) < duration)
    s = tau**3 * (10 - 15 * tau + 6 * tau**2)
    sd = 30 * tau**2 * (1 - tau) ** 2 / duration * inside
    sdd = 60 * tau * (1 - tau) * (1 - 2 * tau) / duration**2 * inside
    return s, sd, sdd


def rot_y(angle) -> np.ndarray:
    """Rot(y, angle) (..., 3, 3)."""
    c, s = np.cos(angle), np.sin(angle)
    o, z = np.ones_like(c), np.zeros_like(c)
    return np.stack([np.stack([c, z, s], -1), np.stack([z, o, z], -1), np.stack([-s, z, c], -1)], -2)


def zyz_matrix(phi, theta, psi) -> np.ndarray:
    """Rotation matrix of ZYZ Euler angles (rad): Rot(z, φ) Rot(y, θ) Rot(z, ψ), (..., 3, 3)."""
    return rot_z(finite_array("phi", phi)) @ rot_y(finite_array("theta", theta)) @ rot_z(finite_array("psi", psi))


def straight_line(p_start, p_end, rotation, duration: float, t):
    """Pose, velocity and acceleration of a frame moving on the segment p_start → p_end at constant orientation.

    p(t) = p_start + s(t) (p_end − p_start) with the :func:`quintic` time law; the orientation is ``rotation``
    throughout, so the angular velocity and acceleration are zero.

    Parameters
    ----------
    p_start, p_end : array_like (3,), m, base frame
    rotation : array_like (3, 3), orientation of the frame in the base frame
    duration : float, s
    t : array_like (N,), s

    Returns
    -------
    T : ndarray (N, 4, 4)  desired homogeneous transform ^0T
    xd : ndarray (N, 6)    [v; ω] (m/s, rad/s), base frame
    xdd : ndarray (N, 6)   [a; ω̇] (m/s², rad/s²), base frame
    """
    p0, p1 = finite_array("p_start", p_start), finite_array("p_end", p_end)
    R = finite_array("rotation", rotation)
    if p0.shape != (3,) or p1.shape != (3,):
        raise InputError("p_start and p_end must be 3 numbers (m, base frame)")
    if R.shape != (3, 3) or not np.allclose(R @ R.T, np.eye(3), atol=1e-12) or np.linalg.det(R) < 0:
        raise InputError("rotation must be a 3x3 rotation matrix (orthonormal, det = +1)")
    t = np.atleast_1d(finite_array("t", t))
    s, sd, sdd = quintic(t, duration)
    delta = p1 - p0
    T = homogeneous(R, p0 + s[..., None] * delta)
    no_rotation = np.zeros(t.shape + (3,))
    xd, xdd = (np.concatenate([v[..., None] * delta, no_rotation], -1) for v in (sd, sdd))
    return T, xd, xdd


# --- joint-space trajectories: rest-to-rest polynomials, trapezoidal velocity, splines, Fourier series ---


def vector_argument(name: str, value, n: int | None = None) -> np.ndarray:
    a = as_real_array(name, value).astype(float)
    if a.ndim != 1 or a.size == 0 or (n is not None and a.size != n):
        want = f"{n} numbers" if n is not None else "a 1-D array of joint values"
        raise InputError(f"argument '{name}' has shape {a.shape}; give {want}")
    if not np.all(np.isfinite(a)):
        raise InputError(f"argument '{name}' contains NaN or inf; give finite values")
    return a


def _duration(name: str, value) -> float:
    try:
        T = float(value)
    except (TypeError, ValueError):
        T = np.nan
    if not (T > 0 and np.isfinite(T)):
        raise InputError(f"argument '{name}' = {value!r}; give a positive finite time in seconds")
    return T


def _times(t) -> np.ndarray:
    t = np.asarray(t, dtype=float)
    if not np.all(np.isfinite(t)):
        raise InputError("argument 't' contains NaN or inf; give finite times (s)")
    return t


class Trajectory:
    """A joint-space trajectory q(t) on [0, duration] with analytic first and second derivatives.

    Subclasses define ``n``, ``duration`` and ``sample``; ``sample(t)`` takes times of any shape (...,) and
    returns q, q̇, q̈ each of shape (..., n), in one vectorised evaluation (no loop over samples).
    """

    n: int
    duration: float

    def sample(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover - interface
        raise NotImplementedError

    def __call__(self, t):
        return self.sample(t)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n={self.n}, duration={self.duration:g} s)"


class _ScalarLaw(Trajectory):
    """q(t) = q0 + s(t) (qf − q0) with a normalised time law s: [0, T] → [0, 1]; held constant outside [0, T]."""

    def __init__(self, q0, qf, duration):
        self.q0 = vector_argument("q0", q0)
        self.qf = vector_argument("qf", qf, self.q0.size)
        self.duration = _duration("duration", duration)
        self.n = self.q0.size

    def _law(self, t: np.ndarray):  # pragma: no cover - interface
        raise NotImplementedError

    def sample(self, t):
        t = _times(t)
        s, sd, sdd = self._law(t)
        delta = self.qf - self.q0
        return self.q0 + s[..., None] * delta, sd[..., None] * delta, sdd[..., None] * delta


class RestToRest(_ScalarLaw):
    """Rest-to-rest polynomial motion from q0 to qf in ``duration`` seconds, all joints on one time law.

    ``profile="cubic"``: s = 3τ² − 2τ³ (zero velocity at both ends; the acceleration jumps at the ends);
    ``profile="quintic"``: s = 10τ³ − 15τ⁴ + 6τ⁵ (zero velocity and acceleration at both ends); τ = t/T.
    Before t = 0 the motion rests at q0, after T at qf; at t = 0 and T the derivatives are the one-sided values
    from inside the motion (the cubic's acceleration jumps there).

    Parameters
    ----------
    q0, qf : array_like (n,), rad | m
    duration : float, T > 0 (s)
    profile : "cubic" | "quintic"
    """

    def __init__(self, q0, qf, duration, profile: str = "quintic"):
        super().__init__(q0, qf, duration)
        if profile not in ("cubic", "quintic"):
            raise InputError(f"profile = {profile!r}; give 'cubic' or 'quintic'")
        self.profile = profile

    def _law(self, t):
        T = self.duration
        tau = np.clip(t / T, 0.0, 1.0)
        inside = (t >= 0) & (t <= T)          # at 0 and T: the one-sided values from inside the motion
        if self.profile == "cubic":
            s = tau**2 * (3 - 2 * tau)
            sd = 6 * tau * (1 - tau) / T * inside
            sdd = (6 - 12 * tau) / T**2 * inside
            return s, sd, sdd
        return quintic(t, T)


class Trapezoidal(_ScalarLaw):
    """Trapezoidal velocity profile from q0 to qf: constant acceleration for t_a, cruise, constant deceleration.

    All joints share the time law (they start and stop together, straight line in joint space). The
    acceleration time is t_a = ``blend`` · T, 0 < blend ≤ 1/2 (1/2: triangular profile, no cruise).
    Use :meth:`from_limits` for the shortest such motion under per-joint velocity and acceleration limits.

    Parameters
    ----------
    q0, qf : array_like (n,), rad | m
    duration : float, T > 0 (s)
    blend : float in (0, 0.5]
    """

    def __init__(self, q0, qf, duration, blend: float = 0.25):
        super().__init__(q0, qf, duration)
        if not (0 < blend <= 0.5):
            raise InputError(f"blend = {blend!r}; give the acceleration time as a fraction of the duration, "
                             "0 < blend <= 0.5")
        self.blend = float(blend)
        self.accel_time = self.blend * self.duration

    @classmethod
    def from_limits(cls, q0, qf, velocity_limits, acceleration_limits) -> "Trapezoidal":
        """Shortest synchronised trapezoidal motion with |q̇_j| ≤ V_j and |q̈_j| ≤ A_j for every joint:
        D = T − t_a = max(max|Δq_j|/V_j, √P), t_a = P/D, P = max|Δq_j|/A_j (docs/task-space-and-motion.md §3)."""
        q0, qf = vector_argument("q0", q0), vector_argument("qf", qf)
        V = np.broadcast_to(vector_argument("velocity_limits", np.atleast_1d(velocity_limits)), q0.shape)
        A = np.broadcast_to(vector_argument("acceleration_limits", np.atleast_1d(acceleration_limits)), q0.shape)
        if np.any(V <= 0) or np.any(A <= 0):
            raise InputError("velocity_limits and acceleration_limits must be positive (rad/s, rad/s²)")
        delta = np.abs(qf - q0)
        if not np.any(delta > 0):
            raise InputError("q0 and qf are equal; a rest-to-rest motion needs a displacement")
        P = np.max(delta / A)
        D = max(np.max(delta / V), np.sqrt(P))
        ta = P / D
        return cls(q0, qf, D + ta, blend=ta / (D + ta))

    def _law(self, t):
        T, ta = self.duration, self.accel_time
        D = T - ta
        a = 1.0 / (ta * D)                       # s̈ during the blends; ṡ_max = 1/D
        tc = np.clip(t, 0.0, T)
        rise, fall = tc < ta, tc > D
        s = np.where(rise, 0.5 * a * tc**2,
                     np.where(fall, 1.0 - 0.5 * a * (T - tc) ** 2, (tc - 0.5 * ta) / D))
        sd = np.where(rise, a * tc, np.where(fall, a * (T - tc), 1.0 / D))
        sdd = np.where(rise, a, np.where(fall, -a, 0.0))
        inside = (t >= 0) & (t <= T)
        return s, sd * inside, sdd * inside


class Spline(Trajectory):
    """Cubic spline through via points, at rest at both ends (clamped: q̇ = 0 at the first and last time).

    q(t) is C² (continuous acceleration) and passes through ``waypoints[k]`` at ``times[k]``; it rests at the
    first / last waypoint outside [times[0], times[-1]] (at the end times the derivatives are the one-sided
    values from inside). Built on ``scipy.interpolate.CubicSpline``.

    Parameters
    ----------
    times : array_like (K,), strictly increasing from times[0] = 0, s (K ≥ 2)
    waypoints : array_like (K, n), rad | m
    """

    def __init__(self, times, waypoints):
        from scipy.interpolate import CubicSpline

        times = as_real_array("times", times).astype(float)
        W = as_real_array("waypoints", waypoints).astype(float)
        if times.ndim != 1 or times.size < 2:
            raise InputError(f"argument 'times' has shape {times.shape}; give at least 2 increasing times (s)")
        if W.ndim != 2 or W.shape[0] != times.size:
            raise InputError(f"argument 'waypoints' has shape {W.shape}; give one row of n joint values per "
                             f"time, shape ({times.size}, n)")
        if not (np.all(np.isfinite(times)) and np.all(np.isfinite(W))):
            raise InputError("arguments 'times' and 'waypoints' must be finite")
        if np.any(np.diff(times) <= 0):
            raise InputError("argument 'times' must be strictly increasing")
        if times[0] != 0:
            raise InputError(f"times[0] = {times[0]!r}; trajectories run on [0, duration], so the first via point "
                             "is at time 0 (shift the times)")
        self.times, self.waypoints = times, W
        self.n = W.shape[1]
        self.duration = float(times[-1])
        self._spline = CubicSpline(times, W, axis=0, bc_type="clamped")

    def sample(self, t):
        t = _times(t)
        tc = np.clip(t, self.times[0], self.times[-1])
        inside = ((t >= self.times[0]) & (t <= self.times[-1]))[..., None]
        return self._spline(tc), self._spline(tc, 1) * inside, self._spline(tc, 2) * inside


class FourierSeries(Trajectory):
    """Finite Fourier series, the periodic excitation trajectory used in identification.

    q_j(t) = q0_j + Σ_{l=1..L} [ a_jl/(l ω_f) sin(l ω_f t) − b_jl/(l ω_f) cos(l ω_f t) ]

    so that q̇_j = Σ a_jl cos(l ω_f t) + b_jl sin(l ω_f t). ``duration`` is one period 2π/ω_f; the series is
    evaluated at any t (periodic, not held).

    Parameters
    ----------
    frequency : float, fundamental ω_f > 0 (rad/s)
    a, b : array_like (n, L), velocity amplitudes (rad/s | m/s)
    q0 : array_like (n,), offset (rad | m)
    """

    def __init__(self, frequency, a, b, q0):
        self.frequency = _duration("frequency", frequency)
        self.a, self.b = finite_array("a", a), finite_array("b", b)
        self.q0 = vector_argument("q0", q0)
        self.n = self.q0.size
        if self.a.ndim != 2 or self.a.shape[0] != self.n or self.b.shape != self.a.shape:
            raise InputError(f"arguments 'a' and 'b' have shapes {self.a.shape}, {self.b.shape}; give both "
                             f"shape (n, L) = ({self.n}, number of harmonics)")
        self.duration = 2 * np.pi / self.frequency

    def sample(self, t):
        t = _times(t)
        w = self.frequency * np.arange(1, self.a.shape[1] + 1)      # (L,)
        ph = t[..., None] * w                                      # (..., L)
        c, s = np.cos(ph), np.sin(ph)
        q = self.q0 + (s / w) @ self.a.T - (c / w) @ self.b.T
        qd = c @ self.a.T + s @ self.b.T
        qdd = (-s * w) @ self.a.T + (c * w) @ self.b.T
        return q, qd, qdd
