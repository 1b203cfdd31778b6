"""Joint-space tracking controllers (De Luca; Slotine and Li 1987), callables controller(t, q, qd) -> Γ (t scalar or
(N,), q and q̇ (n,) or (N, n)), and a sampled PID, one sample per call, whose integral is kept between samples
(docs/simulation-control.md §3–§4). Each holds its own robot model (model mismatch allowed), gains, a reference ``.sample(t) -> (q_d, q̇_d,
q̈_d)`` and the friction model it compensates (default the smooth model of :func:`robodyn.simulate`).
"""

from __future__ import annotations

import numpy as np

from robodyn.arrays import as_real_array
from robodyn.control.reference import sample_reference
from robodyn.dynamics import api
from robodyn.dynamics.discrete import check_sample_time
from robodyn.dynamics.friction_models import LuGre, friction_model, frictionless
from robodyn.dynamics.newton_euler import gravity_torques
from robodyn.errors import InputError
from robodyn.model.robot import Robot


def _gain(name: str, value, n: int) -> np.ndarray:
    """A gain as an (n, n) matrix from a scalar, a vector (n,) (diagonal) or a matrix; symmetric positive definite."""
    K = as_real_array(name, value).astype(float)
    if K.ndim == 0:
        K = K * np.eye(n)
    elif K.shape == (n,):
        K = np.diag(K)
    if K.shape != (n, n) or not np.all(np.isfinite(K)):
        raise InputError(f"{name}: give a positive number, {n} positive numbers or an {n}x{n} matrix")
    if not np.allclose(K, K.T) or np.linalg.eigvalsh(0.5 * (K + K.T)).min() <= 0:
        raise InputError(f"{name} must be symmetric positive definite")
    return K


class _Controller:
    def __init__(self, robot: Robot, reference, friction=None):
        if not isinstance(robot, Robot):
            raise InputError("robot must be a robodyn Robot (the controller's model of the robot)")
        self.robot = robot
        self.reference = reference
        model = friction_model(friction)
        if isinstance(model, LuGre):
            raise InputError("friction = LuGre: a controller cannot compensate LuGre friction (its state z is not "
                             "measured); give 'smooth', 'discontinuous' or 'none'")
        self.friction = model
        self._rigid = frictionless(robot)
        sample_reference(reference, 0.0)

    def _errors(self, t, q, qd):
        q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
        if q.shape[-1:] != (self.robot.n,) or q.shape != qd.shape:
            raise InputError(f"q and qd must have shape (..., {self.robot.n}) for robot '{self.robot.name}'")
        qr, qdr, qddr = sample_reference(self.reference, t)
        return q, qd, qr, qdr, qddr

    def _friction(self, qd):
        return self.friction.torque(self.robot, qd)


class _PD(_Controller):
    def __init__(self, robot: Robot, Kp, Kd, reference, friction=None):
        super().__init__(robot, reference, friction)
        self.Kp, self.Kd = _gain("Kp", Kp, robot.n), _gain("Kd", Kd, robot.n)


class PDGravity(_PD):
    """PD with gravity compensation: Γ = K_P (q_d − q) + K_D (q̇_d − q̇) + Q(q) + Γ_f(q̇).

    With a constant reference q_d (after the trajectory ends) and no unmodelled friction, the closed loop
    converges to q_d from any state (Takegaki and Arimoto 1981; De Luca): V = ½ q̇ᵀAq̇ + ½ eᵀK_P e is a Lyapunov
    function with V̇ = −q̇ᵀK_D q̇ ≤ 0. During the motion it lags the reference (no feed-forward).

    Parameters
    ----------
    robot : Robot, the controller's model
    Kp, Kd : scalar, (n,) or (n, n), symmetric positive definite gains (N m/rad, N m s/rad)
    reference : object with ``sample(t) -> (q, qd, qdd)``
    friction : friction model compensated (default: the simulation default SmoothFriction())
    """

    def __call__(self, t, q, qd):
        q, qd, qr, qdr, _ = self._errors(t, q, qd)
        return ((qr - q) @ self.Kp.T + (qdr - qd) @ self.Kd.T + gravity_torques(self._rigid, q)
                + self._friction(qd))


class ComputedTorque(_PD):
    """Computed torque (feedback linearisation): Γ = A(q) (q̈_d + K_D ė + K_P e) + H(q, q̇), e = q_d − q.

    With an exact model the closed loop is ë + K_D ė + K_P e = 0 (De Luca): from e(0) = ė(0) = 0 the error stays
    zero up to the integrator's error.

    Parameters
    ----------
    robot, Kp, Kd, reference, friction : as :class:`PDGravity`
    """

    def __call__(self, t, q, qd):
        q, qd, qr, qdr, qddr = self._errors(t, q, qd)
        v = qddr + (qdr - qd) @ self.Kd.T + (qr - q) @ self.Kp.T
        return api.inverse_dynamics(self._rigid, q, qd, v) + self._friction(qd)


class PassivityBased(_Controller):
    """Slotine–Li passivity-based tracking: q̇_r = q̇_d + Λ e, s = q̇_r − q̇,
    Γ = A(q) q̈_r + C(q, q̇) q̇_r + Q(q) + Γ_f(q̇) + K_D s.

    With an exact model, V = ½ sᵀA s + eᵀΛK_D e (Λ, K_D diagonal) has V̇ = −sᵀK_D s − ėᵀK_D ė... ≤ 0 thanks to the
    skew-symmetry of Ȧ − 2C (De Luca), so s → 0 and e → 0 exponentially.

    Parameters
    ----------
    robot, reference, friction : as :class:`PDGravity`
    Lam : scalar, (n,) or (n, n), Λ (1/s), symmetric positive definite
    Kd : scalar, (n,) or (n, n), K_D (N m s/rad), symmetric positive definite
    """

    def __init__(self, robot: Robot, Lam, Kd, reference, friction=None):
        super().__init__(robot, reference, friction)
        self.Lam, self.Kd = _gain("Lam", Lam, robot.n), _gain("Kd", Kd, robot.n)

    def __call__(self, t, q, qd):
        q, qd, qr, qdr, qddr = self._errors(t, q, qd)
        e, ed = qr - q, qdr - qd
        qd_r = qdr + e @ self.Lam.T
        qdd_r = qddr + ed @ self.Lam.T
        # A q̈_r + C(q, q̇) q̇_r + Q: with Christoffel symbols C(q, a) b is a symmetric bilinear form B(a, b) whose
        # diagonal B(v, v) = h(v) is the velocity part of the inverse dynamics, so by polarisation
        # C(q, q̇) q̇_r = ¼ [h(q̇ + q̇_r) − h(q̇ − q̇_r)]: three Newton–Euler passes instead of forming A and C.
        zero, g0 = np.zeros_like(q), np.zeros(3)
        h_plus = api.inverse_dynamics(self._rigid, q, qd + qd_r, zero, gravity=g0)
        h_minus = api.inverse_dynamics(self._rigid, q, qd - qd_r, zero, gravity=g0)
        s = qd_r - qd
        return (api.inverse_dynamics(self._rigid, q, zero, qdd_r) + 0.25 * (h_plus - h_minus)
                + self._friction(qd) + s @ self.Kd.T)


class SampledPID(_Controller):
    """Discrete PID with gravity compensation, its integral the state kept between samples:

    e_k = q_d(t_k) − q_k,  I_k = I_{k−1} + T_s e_k (I_{−1} = 0),
    Γ_k = K_P e_k + K_I I_k + K_D (q̇_d(t_k) − q̇_k) + Q̂(q_k) + Γ̂_f(q̇_k),

    Q̂ and Γ̂_f those of the controller's model. The integral removes the steady-state error that a constant
    disturbance (e.g. a gravity model that misses a payload) leaves under PD control (De Luca: PID regulation).

    Parameters
    ----------
    robot, reference, friction : as :class:`PDGravity`
    Kp, Ki, Kd : scalar, (n,) or (n, n), symmetric positive definite gains (N m/rad, N m/(rad s), N m s/rad)
    sample_time : float, T_s > 0 (s), the period the controller runs at (give the same to ``simulate``)

    Calls take one state: ``controller(t, q, qd)`` with t a scalar and q, q̇ (n,); each call is one sample and
    advances the integral. ``reset()`` sets it back to zero (``robodyn.simulate`` calls it before a run).
    """

    def __init__(self, robot: Robot, Kp, Ki, Kd, reference, sample_time, friction=None):
        super().__init__(robot, reference, friction)
        n = robot.n
        self.Kp, self.Ki, self.Kd = (_gain(name, K, n) for name, K in (("Kp", Kp), ("Ki", Ki), ("Kd", Kd)))
        self.sample_time = check_sample_time(sample_time, "sample_time")
        self.integral = np.zeros(n)

    def reset(self) -> None:
        """Set the integral state I back to zero."""
        self.integral = np.zeros(self.robot.n)

    def __call__(self, t, q, qd):
        q, qd, qr, qdr, _ = self._errors(t, q, qd)
        if q.shape != (self.robot.n,) or np.ndim(t) != 0:
            raise InputError(f"SampledPID takes one sample at a time: t a scalar and q, qd of shape "
                             f"({self.robot.n},); it keeps an integral state between the calls")
        e = qr - q
        self.integral = self.integral + self.sample_time * e
        return (self.Kp @ e + self.Ki @ self.integral + self.Kd @ (qdr - qd) + gravity_torques(self._rigid, q)
                + self._friction(qd))
