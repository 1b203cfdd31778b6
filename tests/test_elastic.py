"""Elastic-joint model [9.34]–[9.35]: closed forms, inverse/direct consistency, power balance, K → ∞ limit."""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from scipy.integrate import solve_ivp

import robodyn as rd
from robodyn.dynamics.elastic import (
    ElasticRobot,
    elastic_energy,
    elastic_forward_dynamics,
    elastic_inverse_dynamics,
    elastic_motor_torques,
    elastic_state_derivative,
)
from robodyn.dynamics.api import state_derivative
from robodyn.dynamics.lagrange import inertia_matrix_derivative
from tests.support.random_robots import random_robot

RTOL = 1e-10


def close(a, b, rtol=RTOL):
    a, b = np.asarray(a), np.asarray(b)
    scale = max(np.max(np.abs(b)), 1.0)
    np.testing.assert_allclose(a, b, rtol=0, atol=rtol * scale)


def random_elastic(seed, **kw):
    """A random robot (trees, prismatic, fixed frames, friction) made elastic with a full SPD stiffness."""
    robot = random_robot(seed, **kw)
    rng = np.random.default_rng(seed + 7)
    n = robot.n
    L = rng.normal(size=(n, n))
    K = 200 * np.eye(n) + 20 * L @ L.T
    er = ElasticRobot(robot.replace(Ia=np.zeros(robot.nf)), K, rng.uniform(0.1, 1, n), rng.uniform(0, 1, n), rng.uniform(0, 1, n))
    return er, rng


def pendulum(Fv=0.3):
    m, l, I0 = 2.0, 0.7, 0.05
    robot = rd.Robot(name="pend", sigma=[0], params=[rd.standard_from_com(m, [l, 0, 0], np.eye(3) * I0)],
                     gravity=[0, -9.81, 0], Fv=[Fv])
    return robot, m, l, I0 + m * l * l


# ---- validation -----------------------------------------------------------------------------------------------

def test_validation_messages():
    r = rd.load("planar2r")
    with pytest.raises(rd.ModelError, match="not symmetric"):
        ElasticRobot(r, [[100, 1], [0, 100]], [1, 1])
    with pytest.raises(rd.ModelError, match="not positive definite"):
        ElasticRobot(r, [100, -1], [1, 1])
    with pytest.raises(rd.ModelError, match=r"K has shape \(3,\)"):
        ElasticRobot(r, [1, 2, 3], [1, 1])
    with pytest.raises(rd.ModelError, match="B_m .* must be > 0"):
        ElasticRobot(r, [100, 100], [1, 0])
    with pytest.raises(rd.ModelError, match="Fc_m .* must be >= 0"):
        ElasticRobot(r, [100, 100], [1, 1], Fc_m=[0, -1])
    with pytest.raises(rd.ModelError, match=r"ElasticRobot of '.*': B_m = \[1, 1, 1\]; give 2 finite numbers"):
        ElasticRobot(r, [100, 100], [1, 1, 1])
    with pytest.raises(rd.ModelError, match="robot.Ia is not zero"):
        ElasticRobot(r.replace(Ia=[0.1, 0]), [100, 100], [1, 1])
    with pytest.raises(rd.ModelError, match="rotor inertia Ia > 0"):
        ElasticRobot.from_rigid(r, [100, 100])
    er = ElasticRobot(r, [100, 200], [1, 1])
    np.testing.assert_array_equal(er.K, np.diag([100.0, 200.0]))
    with pytest.raises(ValueError):
        er.K[0, 0] = 1.0  # read-only
    with pytest.raises(rd.InputError, match=r"shape \(\.\.\., 8\)"):
        elastic_state_derivative(er, np.zeros(6), np.zeros(2))
    with pytest.raises(rd.InputError, match="Stribeck"):
        r2 = r.replace(Fst=[1.0, 0], kst=[1.0, 0], Bst=[1.0, 0])
        elastic_inverse_dynamics(ElasticRobot(r2, [100, 100], [1, 1]), *np.zeros((5, 2)))


def test_from_rigid_round_trip():
    """ElasticRobot.from_rigid(r, K).rigid_equivalent() has the dynamics of r (Ia = B_m, friction moved and back)."""
    robot = random_robot(11, nf=5, tree=True, fixed=True)
    robot = robot.replace(Ia=np.where(robot.sigma == 2, 0.0, [0.3, 0.2, 0.1, 0.4, 0.5]))
    er = ElasticRobot.from_rigid(robot, np.full(robot.n, 1e3))
    assert np.all(er.robot.Ia == 0) and np.all(er.robot.Fv == 0)
    q, qd, qdd = np.random.default_rng(0).uniform(-2, 2, (3, 4, robot.n))
    close(rd.inverse_dynamics(er.rigid_equivalent(), q, qd, qdd), rd.inverse_dynamics(robot, q, qd, qdd))


# ---- inverse dynamics ---------------------------------------------------------------------------------------

def test_inverse_pendulum_closed_form():
    """1-dof: u = J q̈ + m g l cos q + F_v q̇, q_M = q + u/K, derivatives by hand, Γ = B q̈_M + F_vm q̇_M + F_cm + u."""
    robot, m, l, J = pendulum()
    K, B, Fvm, Fcm, g = 500.0, 0.2, 0.1, 0.05, 9.81
    er = ElasticRobot(robot, [K], [B], [Fvm], [Fcm])
    q, qd, qdd, q3, q4 = 0.3, 1.2, -0.7, 2.1, -3.3
    res = elastic_inverse_dynamics(er, [q], [qd], [qdd], [q3], [q4])
    u = J * qdd + m * g * l * np.cos(q) + 0.3 * qd
    ud = J * q3 - m * g * l * np.sin(q) * qd + 0.3 * qdd
    udd = J * q4 - m * g * l * (np.cos(q) * qd**2 + np.sin(q) * qdd) + 0.3 * q3
    close(res.qm, [q + u / K])
    close(res.qmd, [qd + ud / K])
    close(res.qmdd, [qdd + udd / K])
    close(res.tau, [B * (qdd + udd / K) + Fvm * (qd + ud / K) + Fcm + u])


def _trajectory(n, rng):
    """q(t) = a + b sin(ω t + φ) with its first 4 derivatives, as a function of t (scalar)."""
    a, b, w, ph = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n), rng.uniform(0.5, 3, n), rng.uniform(-3, 3, n)

    def derivs(t):
        s, c = np.sin(w * t + ph), np.cos(w * t + ph)
        return [a + b * s, b * w * c, -b * w**2 * s, -b * w**3 * c, b * w**4 * s]

    return derivs


@given(seed=st.integers(0, 2**31 - 1), tree=st.booleans())
def test_inverse_then_forward_is_identity(seed, tree):
    """elastic_forward_dynamics at the motor state/torque from elastic_inverse_dynamics returns (q̈, q̈_M)."""
    er, rng = random_elastic(seed, tree=tree, fixed=True)
    d = _trajectory(er.n, rng)(rng.uniform(0, 2))
    res = elastic_inverse_dynamics(er, *d)
    close(elastic_motor_torques(er, d[0], res.qm, res.qmd, res.qmdd), res.tau)
    qdd, qmdd = elastic_forward_dynamics(er, d[0], d[1], res.qm, res.qmd, res.tau)
    close(qdd, d[2])
    close(qmdd, res.qmdd)


def test_inverse_motor_derivatives_match_finite_differences():
    """q̇_M, q̈_M returned at t equal 6th-order central differences of q_M(t), q̇_M(t) (h = 1e-3: error ~ h⁶ + eps/h ≈ 1e-12·scale)."""
    er, rng = random_elastic(5, nf=4, tree=True)
    traj = _trajectory(er.n, rng)
    t, h = 0.7, 1e-3
    res = {dt: elastic_inverse_dynamics(er, *traj(t + dt * h)) for dt in range(-3, 4)}
    w = {1: 45 / 60, 2: -9 / 60, 3: 1 / 60}
    fd = lambda f: sum(c * (f(res[k]) - f(res[-k])) for k, c in w.items()) / h  # noqa: E731
    close(fd(lambda r: r.qm), res[0].qmd, rtol=1e-8)
    close(fd(lambda r: r.qmd), res[0].qmdd, rtol=1e-8)


def test_batch_and_float32():
    er, rng = random_elastic(3, nf=4, tree=True)
    n = er.n
    d = [rng.uniform(-1, 1, (2, 3, n)) for _ in range(5)]
    res = elastic_inverse_dynamics(er, *d)
    one = elastic_inverse_dynamics(er, *(x[1, 2] for x in d))
    for field in ("qm", "qmd", "qmdd", "tau"):
        assert getattr(res, field).shape == (2, 3, n)
        close(getattr(res, field)[1, 2], getattr(one, field))
    x = rng.uniform(-1, 1, (5, 4 * n))
    tau = rng.uniform(-1, 1, (5, n))
    xd = elastic_state_derivative(er, x, tau)
    assert xd.shape == (5, 4 * n)
    close(xd[3], elastic_state_derivative(er, x[3], tau[3]))
    close(xd[:, : 2 * n], x[:, 2 * n :])
    x32 = x.astype(np.float32)
    out32 = elastic_state_derivative(er, x32, tau.astype(np.float32))
    assert out32.dtype == np.float32
    assert elastic_inverse_dynamics(er, *(v.astype(np.float32) for v in d)).tau.dtype == np.float32
    np.testing.assert_allclose(out32, xd, rtol=0, atol=2e-3 * np.max(np.abs(xd)))
    for method in ("recursive", "cholesky"):
        close(elastic_state_derivative(er, x, tau, method=method), xd)


# ---- energy -------------------------------------------------------------------------------------------------

@given(seed=st.integers(0, 2**31 - 1), tree=st.booleans())
def test_power_balance(seed, tree):
    """dE/dt = q̇_Mᵀ Γ − q̇ᵀ Γ_f(q̇) − q̇_Mᵀ (F_vm q̇_M + F_cm sign q̇_M), with E = T_q + T_m + U_g + U_e.

    dE/dt = q̇ᵀ(A q̈ + ½ Ȧ q̇) + q̇ᵀ Q + q̇_Mᵀ B_m q̈_M + (q − q_M)ᵀ K (q̇ − q̇_M), Q = ∂U_g/∂q [9.8]."""
    er, rng = random_elastic(seed, tree=tree, fixed=True)
    robot, n = er.robot, er.n
    q, qd, qm, qmd, tau = rng.uniform(-2, 2, (5, n))
    qdd, qmdd = elastic_forward_dynamics(er, q, qd, qm, qmd, tau)
    A = rd.inertia_matrix(robot, q)
    Ad = inertia_matrix_derivative(robot, q, qd)
    e = q - qm
    dE = qd @ (A @ qdd + 0.5 * Ad @ qd) + qd @ rd.gravity_torques(robot, q) + qmd @ (er.B_m * qmdd) + e @ er.K @ (qd - qmd)
    supplied = qmd @ tau - qd @ rd.friction_torques(robot, qd) - qmd @ (er.Fv_m * qmd + er.Fc_m * np.sign(qmd))
    scale = np.abs(qmd) @ np.abs(tau) + np.abs(qd) @ np.abs(A @ qdd) + np.abs(e) @ np.abs(er.K) @ np.abs(qd - qmd)
    assert abs(dE - supplied) <= RTOL * scale


def test_energy_conserved_in_simulation():
    """No friction, Γ = 0: E stays constant along a DOP853 solution (rtol 1e-12); drift bounded by 1e-9 · E-scale."""
    robot = rd.load("planar2r")
    er = ElasticRobot(robot, [[60.0, 10.0], [10.0, 40.0]], [0.3, 0.2])
    x0 = np.array([0.4, -0.3, 0.5, -0.1, 1.0, -0.5, 0.0, 0.3])
    sol = solve_ivp(lambda t, x: elastic_state_derivative(er, x, np.zeros(2)), (0, 0.5), x0,
                    method="DOP853", rtol=1e-12, atol=1e-12)
    q, qm, qd, qmd = np.split(sol.y.T, 4, axis=1)
    E = elastic_energy(er, q, qd, qm, qmd)
    scale = np.max(np.abs(rd.potential_energy(robot, q))) + np.max(np.abs(E))
    assert np.max(np.abs(E - E[0])) <= 1e-9 * scale
    assert sol.nfev > 100  # the motion is nontrivial: the springs exchange energy with the links
    assert np.ptp(0.5 * np.sum((q - qm) * ((q - qm) @ er.K), 1)) > 1e-3


# ---- K → ∞ ------------------------------------------------------------------------------------------------------

def test_rigid_limit_as_stiffness_grows():
    """from_rigid(r, k I) simulated over 0.2 s converges to the rigid robot r as k grows: error = O(1/k).

    Both start at the same (q, q̇) with the static-consistent motor state q_M = q + K⁻¹ u(0) (u the rigid
    link-side torque), so the fast spring mode (frequency ~ √(k/B)) is only excited at O(1/k).  Measured
    errors at t = 0.2 s: 3.9e-3, 3.2e-4, 3.2e-5 rad for k = 1e2, 1e3, 1e4; the test asserts a ≥ 5× decrease per
    decade and < 1e-4 rad at k = 1e4 (the integration tolerance, rtol 1e-8, is far below)."""
    r = rd.load("planar2r").replace(Ia=[0.2, 0.1], Fv=[0.3, 0.2], Fc=[0.1, 0.05])
    tau = lambda t: np.array([3 + np.sin(5 * t), np.cos(3 * t)])  # noqa: E731
    q0, qd0, T = np.array([0.3, -0.4]), np.array([0.5, 0.2]), 0.2
    rigid = solve_ivp(lambda t, x: state_derivative(r, x, tau(t)), (0, T), np.r_[q0, qd0], method="DOP853",
                      rtol=1e-11, atol=1e-12).y[:2, -1]
    errors = []
    for k in (1e2, 1e3, 1e4):
        er = ElasticRobot.from_rigid(r, [k, k])
        u0 = rd.inverse_dynamics(er.robot, q0, qd0, rd.forward_dynamics(r, q0, qd0, tau(0)))
        x0 = np.r_[q0, q0 + u0 / k, qd0, qd0]
        sol = solve_ivp(lambda t, x: elastic_state_derivative(er, x, tau(t)), (0, T), x0,
                        method="DOP853", rtol=1e-8, atol=1e-12)
        errors.append(np.max(np.abs(sol.y[:2, -1] - rigid)))
    assert errors[0] / errors[1] >= 5 and errors[1] / errors[2] >= 5
    assert errors[2] < 1e-4
