"""Robots with elastic joints: 2n coordinates, Khalil & Dombre §9.3.8 [9.34]–[9.35], De Luca "elastic joints".

Each joint is a linear spring between the link position q and the rotor position q_M reflected through
the gear ratio (De Luca's θ = θ_m / n_r).  With joint stiffness K (n×n, symmetric positive definite),
diagonal rotor inertias B_m = diag(I_m n_r²) and motor-side friction,

    U_k = ½ (q − q_M)ᵀ K (q − q_M)                                                    [9.34]
    A(q) q̈ + C(q, q̇) q̇ + Q(q) + Γ_f(q̇) + K (q − q_M) = 0                            [9.35a]
    B_m q̈_M + diag(q̇_M) F_vm + diag(sign q̇_M) F_cm − K (q − q_M) = Γ                 [9.35b]

The link side is the rigid ``robot`` (its joint friction Γ_f included); the rotors live in B_m, so ``robot.Ia``
must be zero (docs/extended-models.md, "Elastic joints").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from robodyn.arrays import as_real_array, check_type, finite_result
from robodyn.model.arguments import joint_arrays
from robodyn.dynamics import api
from robodyn.dynamics.lagrange import kinetic_energy, potential_energy
from robodyn.dynamics.newton_euler import gravity_argument, rnea
from robodyn.model.friction import friction_of
from robodyn.dynamics.transmission import motor_friction, motor_vector
from robodyn.errors import InputError, ModelError
from robodyn.model.derived import frozen as _frozen
from robodyn.model.robot import Robot


@dataclass(frozen=True, eq=False)
class ElasticRobot:
    """A rigid robot whose n joints are driven through springs, as immutable data.

    Parameters
    ----------
    robot : Robot
        The link side: geometry, link inertias, joint (link-side) friction.  ``robot.Ia`` must be zero
        on every joint: rotor inertia is ``B_m`` here.
    K : array_like (n, n) or (n,)
        Joint stiffness (N m/rad | N/m), symmetric positive definite; a vector means diag(K).
    B_m : array_like (n,)
        Rotor inertias reflected through the gears, B_mi = I_mi n_ri² (kg m² | kg), > 0.
    Fv_m, Fc_m : array_like (n,), optional
        Motor-side viscous and Coulomb friction referred to the joint side, ≥ 0 (default 0).
    """

    robot: Robot
    K: np.ndarray
    B_m: np.ndarray
    Fv_m: np.ndarray | None = None
    Fc_m: np.ndarray | None = None

    def __post_init__(self) -> None:
        put = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731  (frozen dataclass)
        if not isinstance(self.robot, Robot):
            raise ModelError(f"ElasticRobot: robot must be a robodyn Robot, got {type(self.robot).__name__}")
        n, name = self.robot.n, self.robot.name
        if np.any(self.robot.Ia[self.robot.joint_frames] != 0):
            raise ModelError(
                f"ElasticRobot of '{name}': robot.Ia is not zero; in the elastic model the rotor inertia is B_m "
                "(motor side), so give robot.replace(Ia=0) or use ElasticRobot.from_rigid(robot, K)"
            )
        K = as_real_array("K", self.K).astype(float)
        if K.shape == (n,):
            K = np.diag(K)
        if K.shape != (n, n) or not np.all(np.isfinite(K)):
            raise ModelError(f"ElasticRobot of '{name}': K has shape {K.shape}; give finite ({n}, {n}) or ({n},) values")
        if not np.allclose(K, K.T, rtol=1e-12, atol=0):
            raise ModelError(f"ElasticRobot of '{name}': stiffness K is not symmetric; give K = Kᵀ")
        if np.linalg.eigvalsh(K)[0] <= 0:
            raise ModelError(f"ElasticRobot of '{name}': stiffness K is not positive definite; every spring needs K > 0")
        put("K", _frozen(K))
        for key, positive in (("B_m", True), ("Fv_m", False), ("Fc_m", False)):
            put(key, motor_vector(f"ElasticRobot of '{name}'", key, getattr(self, key), n, positive))

    @property
    def n(self) -> int:
        """Number of joints; the model has 2n coordinates (q, q_M)."""
        return self.robot.n

    @classmethod
    def from_rigid(cls, robot: Robot, K) -> "ElasticRobot":
        """Split a rigid robot at its transmissions: B_m = Ia, motor friction = the robot's Fv, Fc.

        The link side keeps the geometry, the link inertias and the Stribeck/offset friction terms.
        ``from_rigid(robot, K).rigid_equivalent()`` has the same dynamics as ``robot``.
        """
        jf = robot.joint_frames
        if np.any(robot.Ia[jf] <= 0):
            raise ModelError(f"ElasticRobot.from_rigid('{robot.name}'): every joint needs a rotor inertia Ia > 0 to become B_m")
        link = robot.replace(Ia=np.zeros(robot.nf), Fv=np.zeros(robot.nf), Fc=np.zeros(robot.nf))
        return cls(link, K, robot.Ia[jf], robot.Fv[jf], robot.Fc[jf])

    def rigid_equivalent(self) -> Robot:
        """The rigid robot of the limit K → ∞: Ia = B_m, friction Fv + Fv_m, Fc + Fc_m (sum of [9.35a] and [9.35b])."""
        r, jf = self.robot, self.robot.joint_frames
        Ia, Fv, Fc = np.array(r.Ia), np.array(r.Fv), np.array(r.Fc)
        Ia[jf] = self.B_m
        Fv[jf] += self.Fv_m
        Fc[jf] += self.Fc_m
        return r.replace(Ia=Ia, Fv=Fv, Fc=Fc)


@dataclass(frozen=True)
class ElasticInverse:
    """Result of :func:`elastic_inverse_dynamics`: motor trajectory and motor torques, each (..., n)."""

    qm: np.ndarray
    qmd: np.ndarray
    qmdd: np.ndarray
    tau: np.ndarray


def elastic_motor_torques(er: ElasticRobot, q, qm, qmd, qmdd) -> np.ndarray:
    """Motor torques Γ from the link and motor positions and the motor motion, [9.35b].

    Γ = B_m q̈_M + F_vm q̇_M + F_cm sign(q̇_M) + K (q_M − q)

    Parameters
    ----------
    q, qm, qmd, qmdd : array_like (..., n) — link position, motor position, velocity, acceleration.

    Returns
    -------
    ndarray (..., n), N m | N.
    """
    check_type("er", er, ElasticRobot)
    dtype, _, a = joint_arrays(er.robot, q=q, qm=qm, qmd=qmd, qmdd=qmdd)
    spring = _spring(er, a["qm"] - a["q"])
    return finite_result("elastic_motor_torques", er.B_m.astype(dtype) * a["qmdd"] + motor_friction(er, a["qmd"]) + spring)


def elastic_inverse_dynamics(er: ElasticRobot, q, qd, qdd, q3, q4, gravity=None) -> ElasticInverse:
    """Motor trajectory and torques that make the links follow q(t), for elastic joints (De Luca; [9.35]).

    The link equation [9.35a] gives the motor position algebraically,

        q_M = q + K⁻¹ u,   u = A(q) q̈ + C(q, q̇) q̇ + Q(q) + Γ_f(q̇)  (the rigid link-side torque),

    so q̇_M = q̇ + K⁻¹ u̇ and q̈_M = q̈ + K⁻¹ ü need q up to its 4th derivative; then [9.35b] gives
    Γ = B_m q̈_M + F_vm q̇_M + F_cm sign(q̇_M) + u.

    u̇ and ü are exact (to rounding): u(t₀ + h) is evaluated with Newton–Euler on the 4th-order Taylor
    polynomial of q(t₀ + h) at N = 16 complex h on a circle, and the Taylor coefficients are read off
    the discrete Fourier transform (Cauchy's integral formula; u(h) is entire in h since it is built
    of polynomials, sines and cosines, so the aliasing error ~ 0.1^16 is far below rounding).  Link
    friction is differentiated in closed form: Coulomb and offset terms are constant for q̇ ≠ 0,
    viscous gives F_v q̈ and F_v q⃛; the Stribeck term is not supported here.

    Parameters
    ----------
    er : ElasticRobot
    q, qd, qdd, q3, q4 : array_like (..., n)
        Link positions and their first four time derivatives.
    gravity : array_like (3,) or (..., 3), optional — overrides ``robot.gravity``.

    Returns
    -------
    ElasticInverse with qm, qmd, qmdd (motor position, velocity, acceleration) and tau (motor torques),
    each (..., n).
    """
    robot = check_type("er", er, ElasticRobot).robot
    if np.any(robot.Fst[robot.joint_frames] != 0):
        raise InputError(
            f"elastic_inverse_dynamics: robot '{robot.name}' has a Stribeck friction term (Fst != 0) on the link side, "
            "whose time derivatives are not modelled; set Fst = 0"
        )
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd, qdd=qdd, q3=q3, q4=q4, gravity=gravity)
    g = gravity_argument(robot, gravity, batch, np.float64)
    d = [a[k].astype(np.float64) for k in ("q", "qd", "qdd", "q3", "q4")]
    u0, u1, u2 = _rigid_torque_derivatives(robot, d, g)
    Fv = robot.Fv[robot.joint_frames]
    u0 = u0 + friction_of(robot, d[1])
    u1 = u1 + Fv * d[2]
    u2 = u2 + Fv * d[3]
    Kinv = np.linalg.inv(er.K)
    qm = d[0] + u0 @ Kinv.T
    qmd = d[1] + u1 @ Kinv.T
    qmdd = d[2] + u2 @ Kinv.T
    tau = er.B_m * qmdd + motor_friction(er, qmd) + u0
    return finite_result("elastic_inverse_dynamics", ElasticInverse(*(x.astype(dtype) for x in (qm, qmd, qmdd, tau))))


_CONTOUR_POINTS = 16


def _rigid_torque_derivatives(robot: Robot, d, g):
    """u, u̇, ü of u(t) = Γ_rigid(q(t), q̇(t), q̈(t)) (no friction) from q and 4 derivatives, by a Cauchy contour.

    The circle radius r = 0.1/ρ with ρ = max_k (|q^(k)| / k!)^(1/k) keeps |q(z) − q| ≤ 0.4 on the circle
    and |q(z) − q| ≤ 4 on the 10× larger circle that bounds the aliasing error.
    """
    scale = np.max([(np.max(np.abs(d[k]), axis=-1) / np.prod(range(1, k + 1))) ** (1.0 / k) for k in range(1, 5)], axis=0)
    r = 0.1 / np.maximum(scale, 1e-12)
    N = _CONTOUR_POINTS
    w = np.exp(2j * np.pi * np.arange(N) / N)
    h = (w.reshape((N,) + (1,) * r.ndim) * r)[..., None]  # (N, ..., 1)
    qz = d[0] + h * d[1] + h**2 / 2 * d[2] + h**3 / 6 * d[3] + h**4 / 24 * d[4]
    qdz = d[1] + h * d[2] + h**2 / 2 * d[3] + h**3 / 6 * d[4]
    qddz = d[2] + h * d[3] + h**2 / 2 * d[4]
    u = rnea(robot, qz, qdz, qddz, g.astype(complex))
    c = np.fft.fft(u, axis=0) / N  # c_k r^k at index k
    rr = r[..., None]
    return c[0].real, c[1].real / rr, 2 * c[2].real / rr**2


class ElasticAccelerations(NamedTuple):
    """Result of :func:`elastic_forward_dynamics`: link and motor accelerations q̈, q̈_M, each (..., n)."""

    qdd: np.ndarray
    qmdd: np.ndarray


def elastic_forward_dynamics(er: ElasticRobot, q, qd, qm, qmd, tau, gravity=None, method: str = "recursive"):
    """Link and motor accelerations of the 2n elastic-joint model, [9.35a]–[9.35b].

    q̈ = A⁻¹ (K (q_M − q) − H(q, q̇))   (rigid direct dynamics with the spring torque as input)
    q̈_M = B_m⁻¹ (Γ − F_vm q̇_M − F_cm sign(q̇_M) − K (q_M − q))

    Parameters
    ----------
    q, qd, qm, qmd, tau : array_like (..., n) — link position/velocity, motor position/velocity, motor torque.
    gravity : array_like (3,) or (..., 3), optional
    method : str — rigid direct-dynamics method for the link side (see :func:`robodyn.forward_dynamics`).

    Returns
    -------
    ElasticAccelerations (qdd, qmdd) : ndarray (..., n) each; unpacks as a pair.
    """
    check_type("er", er, ElasticRobot)
    dtype, _, a = joint_arrays(er.robot, q=q, qd=qd, qm=qm, qmd=qmd, tau=tau)
    spring = _spring(er, a["qm"] - a["q"])
    qdd = api.forward_dynamics(er.robot, a["q"], a["qd"], spring, gravity=gravity, method=method)
    qmdd = (a["tau"] - motor_friction(er, a["qmd"]) - spring) / er.B_m.astype(dtype)
    return finite_result("elastic_forward_dynamics", ElasticAccelerations(qdd, qmdd))


def elastic_state_derivative(er: ElasticRobot, x, tau, gravity=None, method: str = "recursive") -> np.ndarray:
    """ẋ of the state x = [q, q_M, q̇, q̇_M] (..., 4n) under motor torques tau (..., n), for integrators ([9.35]).

    Parameters
    ----------
    er : ElasticRobot
    x : array_like (..., 4n) — link positions, motor positions, link velocities, motor velocities (SI).
    tau : array_like (..., n) — motor torques (N m | N).
    gravity : array_like (3,) or (..., 3), optional — overrides ``robot.gravity``.
    method : str — rigid direct-dynamics method of the link side (see :func:`robodyn.forward_dynamics`).

    Returns
    -------
    ndarray (..., 4n) = [q̇, q̇_M, q̈, q̈_M].
    """
    n = check_type("er", er, ElasticRobot).n
    x = as_real_array("x", x)
    if x.ndim == 0 or x.shape[-1] != 4 * n:
        raise InputError(f"argument 'x' has shape {x.shape}; the elastic state [q, qm, qd, qmd] needs shape (..., {4 * n})")
    q, qm, qd, qmd = (x[..., k * n : (k + 1) * n] for k in range(4))
    qdd, qmdd = elastic_forward_dynamics(er, q, qd, qm, qmd, tau, gravity=gravity, method=method)
    return finite_result("elastic_state_derivative", np.concatenate(np.broadcast_arrays(qd, qmd, qdd, qmdd), -1).astype(qdd.dtype))


def elastic_energy(er: ElasticRobot, q, qd, qm, qmd, gravity=None) -> np.ndarray:
    """Total energy T_q + T_m + U_g + U_e of the elastic-joint robot (J), (...,).

    T_q = ½ q̇ᵀ A(q) q̇ [9.5],  T_m = ½ q̇_Mᵀ B_m q̇_M,  U_g = −Σ_j gᵀ(M_j ⁰P_j + ⁰A_j ʲMS_j) [9.25],  U_e = ½ (q − q_M)ᵀ K (q − q_M) [9.34].

    Parameters
    ----------
    er : ElasticRobot
    q, qd, qm, qmd : array_like (..., n) — link position/velocity, motor position/velocity (SI).
    gravity : array_like (3,) or (..., 3), optional — overrides ``robot.gravity``.

    Returns
    -------
    ndarray (...,)  total energy (J); float32 if every input is.
    """
    check_type("er", er, ElasticRobot)
    dtype, _, a = joint_arrays(er.robot, q=q, qd=qd, qm=qm, qmd=qmd)
    Tq = kinetic_energy(er.robot, a["q"], a["qd"])
    Ug = potential_energy(er.robot, a["q"], gravity=gravity)
    Tm = 0.5 * np.sum(er.B_m.astype(dtype) * a["qmd"] ** 2, -1)
    e = a["q"] - a["qm"]
    Ue = 0.5 * np.sum(e * _spring(er, e), -1)
    return finite_result("elastic_energy", Tq + Tm + Ug + Ue)


def _spring(er: ElasticRobot, e: np.ndarray) -> np.ndarray:
    """K e for deflections e (..., n)."""
    return e @ er.K.T.astype(e.dtype)


__all__ = (
    "ElasticRobot", "ElasticInverse", "elastic_motor_torques", "elastic_inverse_dynamics", "elastic_forward_dynamics",
    "elastic_state_derivative", "elastic_energy",
)
