"""Friction models for simulation: the discontinuous model of Khalil & Dombre [9.26]–[9.28], its smooth
regularisation, and the LuGre dynamic model.

Khalil & Dombre's Γ_f [9.26]–[9.28] is discontinuous at q̇ = 0, where an ODE integrator stalls (a joint at rest
under a load).  The models (docs/simulation-control.md, section 2):

* :class:`SmoothFriction` — sign(q̇) replaced by tanh(q̇ / v_s), v_s = ``width``;
* :class:`LuGre` — Canudas de Wit, Olsson, Åström and Lischinsky (1995), one bristle state z per joint;
* :class:`StickSlipFriction` — [9.26] while sliding, exact sticking at rest (integration events);
* :class:`PiecewiseLinearFriction` — the piecewise-linear approximation of Khalil & Dombre's Fig. 9.2d;
* :class:`DiscontinuousFriction` — [9.26] as is (what :func:`robodyn.inverse_dynamics` uses).

Every model's ``torque`` is batched (..., n) and its ``slope`` is ∂Γ_f/∂q̇ (the diagonal, (..., n)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn.arrays import one_per
from robodyn.errors import InputError
from robodyn.model.friction import friction_of, with_friction
from robodyn.model.robot import Robot

__all__ = ("DiscontinuousFriction", "SmoothFriction", "PiecewiseLinearFriction", "LuGre", "StickSlipFriction",
           "NoFriction", "friction_model", "frictionless", "breakaway_levels", "stribeck_factor")


def joint_column(robot: Robot, key: str) -> np.ndarray:
    return np.asarray(getattr(robot, key))[robot.joint_frames]


def _per_joint(name: str, value, n: int) -> np.ndarray:
    return one_per(name, value, n, lambda v: np.isfinite(v) & (v > 0), "finite values > 0")


def stribeck_factor(robot: Robot, qd: np.ndarray):
    """(F_st − F_c) exp(−k |q̇|^B) where F_st ≠ 0 and 0 elsewhere, and its derivative w.r.t. |q̇|."""
    Fc, Fst, k, B = (joint_column(robot, key) for key in ("Fc", "Fst", "kst", "Bst"))
    active = Fst != 0
    if not active.any():  # no Stribeck term (most robots): no powers and exponentials of every q̇
        zero = np.zeros(np.shape(qd))
        return zero, zero
    a = np.abs(qd)
    e = np.exp(-k * a**B) * active
    with np.errstate(divide="ignore", invalid="ignore"):
        de = np.where(active & (a > 0), -k * B * np.where(a > 0, a, 1.0) ** (B - 1) * e, 0.0)
    return (Fst - Fc) * e, (Fst - Fc) * de


@dataclass(frozen=True)
class DiscontinuousFriction:
    """Khalil & Dombre [9.26]–[9.28]: F_c sign(q̇) + F_v q̇ + Stribeck + F_off (the robot's own model)."""

    stiff = False
    states = 0

    def torque(self, robot: Robot, qd) -> np.ndarray:
        return friction_of(robot, np.asarray(qd, dtype=float))  # the robot's own law, robodyn.model.friction

    def slope(self, robot: Robot, qd) -> np.ndarray:
        """∂Γ_f/∂q̇ away from q̇ = 0 (the Dirac at 0 is left out): F_v + sign(q̇) ∂Stribeck/∂|q̇| sign(q̇)."""
        qd = np.asarray(qd, dtype=float)
        _, dstrib = stribeck_factor(robot, qd)
        return joint_column(robot, "Fv") + dstrib * (qd != 0)


@dataclass(frozen=True)
class SmoothFriction:
    """[9.26] with sign(q̇) → tanh(q̇ / width): F_c tanh(q̇/v_s) + F_v q̇ + Stribeck · tanh(q̇/v_s) + F_off.

    Parameters
    ----------
    width : float or array (n,), v_s > 0 (rad/s | m/s), default 0.01. The friction reaches 76 % of F_c at
        q̇ = v_s and 99.9 % at 4 v_s; a joint loaded below F_c creeps at ≈ v_s Γ/F_c.
    """

    width: float | np.ndarray = 0.01
    stiff = True
    states = 0

    def torque(self, robot: Robot, qd) -> np.ndarray:
        qd = np.asarray(qd, dtype=float)
        w = _per_joint("width", self.width, robot.n)
        strib, _ = stribeck_factor(robot, qd)
        return (joint_column(robot, "Fc") + strib) * np.tanh(qd / w) + joint_column(robot, "Fv") * qd + joint_column(robot, "Foff")

    def slope(self, robot: Robot, qd) -> np.ndarray:
        """∂Γ_f/∂q̇ (..., n)."""
        qd = np.asarray(qd, dtype=float)
        w = _per_joint("width", self.width, robot.n)
        strib, dstrib = stribeck_factor(robot, qd)
        th = np.tanh(qd / w)
        return (joint_column(robot, "Fc") + strib) * (1 - th**2) / w + dstrib * np.abs(th) + joint_column(robot, "Fv")


@dataclass(frozen=True)
class PiecewiseLinearFriction:
    """The piecewise-linear approximation of [9.26]–[9.28] (Khalil & Dombre §9.3.4, Fig. 9.2d).

    Per joint, with a = |q̇|, F_s the break-away level (F_st where the robot has a Stribeck term, F_c
    elsewhere), v_0 = ``width`` and v_1 the end of the Stribeck decrease:

        Γ_f = g(a) sign(q̇) + F_v q̇ + F_off,
        g(a) = F_s a / v_0                                     0 ≤ a ≤ v_0     (through the origin)
        g(a) = F_s + (F_c − F_s)(a − v_0) / (v_1 − v_0)        v_0 < a ≤ v_1   (Stribeck decrease, F_st ≠ 0)
        g(a) = F_c                                             a > v_1         (Coulomb + viscous, [9.27])

    Without a Stribeck term (F_st = 0) it is [9.27] with sign(q̇) replaced by the saturation
    sat(q̇ / v_0): equal to [9.27] for |q̇| ≥ v_0. With one, v_1 defaults to the velocity where the
    exponential of [9.26] has decayed to e⁻³ (5 %), v_1 = (3 / k)^(1/B); k = 0 (no decay) keeps F_s.
    Continuous, so an integrator can cross q̇ = 0; the slope F_s / v_0 near rest makes it stiff like
    :class:`SmoothFriction`.

    Parameters
    ----------
    width : float or (n,), v_0 > 0 (rad/s | m/s), default 0.01
    stribeck_end : float or (n,), optional, v_1 > v_0 (rad/s | m/s) where the robot has a Stribeck term
    """

    width: float | np.ndarray = 0.01
    stribeck_end: float | np.ndarray | None = None
    stiff = True
    states = 0

    def _levels(self, robot: Robot):
        """v_0, v_1, F_s, F_c (n,) each; v_1 = v_0 where there is no Stribeck decrease."""
        n = robot.n
        v0 = _per_joint("width", self.width, n)
        Fc, Fst, k, B = (joint_column(robot, key) for key in ("Fc", "Fst", "kst", "Bst"))
        active = Fst != 0
        if self.stribeck_end is None:
            with np.errstate(divide="ignore"):
                v1 = np.where(active, np.where(k > 0, (3.0 / np.where(k > 0, k, 1.0)) ** (1.0 / B), np.inf), v0)
        else:
            v1 = np.where(active, _per_joint("stribeck_end", self.stribeck_end, n), v0)
        if np.any(active & (v1 <= v0)):
            j = int(np.flatnonzero(active & (v1 <= v0))[0]) + 1
            raise InputError(f"stribeck_end: joint {j} ends its Stribeck decrease at {v1[j - 1]:g}, not beyond "
                             f"width = {v0[j - 1]:g}; give stribeck_end > width (or a smaller width)")
        return v0, v1, np.where(active, Fst, Fc), Fc

    def torque(self, robot: Robot, qd) -> np.ndarray:
        qd = np.asarray(qd, dtype=float)
        v0, v1, Fs, Fc = self._levels(robot)
        a = np.abs(qd)
        with np.errstate(invalid="ignore"):  # v1 = inf: the decrease never starts, (a − v0)/inf = 0
            fall = np.where(np.isinf(v1), 0.0, (a - v0) / np.where(v1 > v0, v1 - v0, 1.0))
        g = np.where(a <= v0, Fs * a / v0, np.where(a <= v1, Fs + (Fc - Fs) * fall, Fc))
        return g * np.sign(qd) + joint_column(robot, "Fv") * qd + joint_column(robot, "Foff")

    def slope(self, robot: Robot, qd) -> np.ndarray:
        """∂Γ_f/∂q̇ (..., n), one-sided at the break points."""
        qd = np.asarray(qd, dtype=float)
        v0, v1, Fs, Fc = self._levels(robot)
        a = np.abs(qd)
        falling = np.where(np.isinf(v1) | (v1 <= v0), 0.0, (Fc - Fs) / np.where(v1 > v0, v1 - v0, 1.0))
        return np.where(a <= v0, Fs / v0, np.where(a <= v1, falling, 0.0)) + joint_column(robot, "Fv")


@dataclass(frozen=True)
class LuGre:
    """LuGre dynamic friction (Canudas de Wit et al. 1995), one bristle state z per joint.

    ż = q̇ − σ₀ |q̇| z / g(q̇),   g(q̇) = F_c + (F_s − F_c) exp(−(q̇/v_s)²),
    Γ_f = σ₀ z + σ₁ ż + F_v q̇ + F_off,

    with F_c, F_v, F_off from the robot, F_s = F_st where the robot has a Stribeck term and F_c elsewhere.
    Joints with F_c = 0 have no bristle force (z stays 0). In steady sliding z = g(q̇) sign(q̇)/σ₀ and
    Γ_f = g(q̇) sign(q̇) + F_v q̇ + F_off: the static curve of [9.26] with a Gaussian Stribeck term.

    Parameters
    ----------
    sigma0 : float or (n,), bristle stiffness (N m/rad | N/m), default 1e4
    sigma1 : float or (n,), bristle damping (N m s/rad | N s/m), default 100
    vs : float or (n,), Stribeck velocity (rad/s | m/s), default 0.01
    """

    sigma0: float | np.ndarray = 1e4
    sigma1: float | np.ndarray = 100.0
    vs: float | np.ndarray = 0.01
    stiff = True
    states = 1

    def _parts(self, robot: Robot, qd):
        n = robot.n
        s0, s1, vs = (_per_joint(k, getattr(self, k), n) for k in ("sigma0", "sigma1", "vs"))
        Fc = joint_column(robot, "Fc")
        g = Fc + (breakaway_levels(robot) - Fc) * np.exp(-((qd / vs) ** 2))
        return s0, s1, g, Fc > 0

    def z_rate(self, robot: Robot, qd, z) -> np.ndarray:
        """ż (..., n)."""
        qd, z = np.asarray(qd, dtype=float), np.asarray(z, dtype=float)
        s0, _, g, active = self._parts(robot, qd)
        return np.where(active, qd - s0 * np.abs(qd) * z / np.where(active, g, 1.0), 0.0)

    def torque(self, robot: Robot, qd, z) -> np.ndarray:
        """Γ_f (..., n) from the velocities and the bristle states z (..., n)."""
        qd, z = np.asarray(qd, dtype=float), np.asarray(z, dtype=float)
        s0, s1, _, active = self._parts(robot, qd)
        zd = self.z_rate(robot, qd, z)
        return np.where(active, s0 * z + s1 * zd, 0.0) + joint_column(robot, "Fv") * qd + joint_column(robot, "Foff")


@dataclass(frozen=True)
class StickSlipFriction(DiscontinuousFriction):
    """Switching stick–slip model with events: [9.26]–[9.28] while a joint slides, true sticking at rest.

    :func:`robodyn.simulate` integrates piecewise: a sliding joint whose velocity reaches zero is held
    (q̇_j = q̈_j = 0) as long as the friction needed to hold it stays within the break-away level F_s (F_st where
    the robot has a Stribeck term, F_c elsewhere); it slides again, in the direction of the net torque, when
    that level is exceeded. Each switch is an integration event. Joints with F_c = 0 never stick.

    Parameters
    ----------
    max_switches : int, limit on the number of stick/slip switches in one simulation (an error says when it is hit)
    """

    max_switches: int = 10_000


def breakaway_levels(robot: Robot) -> np.ndarray:
    """F_s per joint (n,): F_st where the robot has a Stribeck term, F_c elsewhere."""
    Fc, Fst = joint_column(robot, "Fc"), joint_column(robot, "Fst")
    return np.where(Fst != 0, Fst, Fc)


def friction_model(spec) -> object:
    """A friction model from a name ('smooth', 'lugre', 'stick-slip', 'discontinuous', 'piecewise-linear', 'none'),
    an instance, or a bool as everywhere else in robodyn: True is the robot's own friction law [9.26]–[9.28]
    (:class:`DiscontinuousFriction`), False none (:class:`NoFriction`); None is the caller's default."""
    if isinstance(spec, (bool, np.bool_)):
        return DiscontinuousFriction() if spec else NoFriction()
    if spec is None or isinstance(spec, (SmoothFriction, LuGre, DiscontinuousFriction, NoFriction,
                                         PiecewiseLinearFriction)):
        return SmoothFriction() if spec is None else spec
    names = {"smooth": SmoothFriction, "lugre": LuGre, "stick-slip": StickSlipFriction,
             "discontinuous": DiscontinuousFriction, "piecewise-linear": PiecewiseLinearFriction, "none": NoFriction}
    if isinstance(spec, str) and spec in names:
        return names[spec]()
    raise InputError(f"friction = {spec!r}; give True, False, one of {', '.join(names)} or a SmoothFriction(width=...), "
                     "LuGre(...), StickSlipFriction(), DiscontinuousFriction() or PiecewiseLinearFriction(width=...) instance")


@dataclass(frozen=True)
class NoFriction:
    """No joint friction at all (the robot's F_c, F_v, Stribeck and offset are ignored)."""

    stiff = False
    states = 0

    def torque(self, robot: Robot, qd) -> np.ndarray:
        return np.zeros_like(np.asarray(qd, dtype=float))

    def slope(self, robot: Robot, qd) -> np.ndarray:
        return np.zeros_like(np.asarray(qd, dtype=float))


def frictionless(robot: Robot) -> Robot:
    """The same robot with every friction coefficient set to zero (rotor inertias kept):
    :func:`robodyn.model.friction.with_friction` ``(robot, False)``, built once per robot."""
    return with_friction(robot, False)
