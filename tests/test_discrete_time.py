"""Discrete time: rd.discretize / linearize(dt=) against scipy.signal.cont2discrete and closed forms, the one-step
integrator rd.simulation.step against solve_ivp and its order, and simulate(sample_time=) with a sampled PID
against the exact discrete-time recursion of a linear plant."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.signal import cont2discrete

import robodyn as rd
from robodyn.control import QuinticReference, SampledPID
from robodyn.dynamics.discrete import discretize
from robodyn.simulation import step

SCIPY_NAME = {"zoh": "zoh", "euler": "euler", "backward_euler": "backward_diff", "tustin": "bilinear"}


def _rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(1, 6), p=st.integers(1, 3),
       method=st.sampled_from(list(SCIPY_NAME)))
def test_discretize_matches_scipy_cont2discrete(seed, m, p, method):
    rng = np.random.default_rng(seed)
    A, B = rng.normal(size=(m, m)), rng.normal(size=(m, p))
    dt = rng.uniform(0.001, 0.2)
    Ad, Bd = discretize(A, B, dt, method)
    Ad_s, Bd_s, *_ = cont2discrete((A, B, np.eye(m), np.zeros((m, p))), dt, method=SCIPY_NAME[method])
    assert _rel(Ad, Ad_s) < 1e-12 and _rel(Bd, Bd_s) < 1e-12


def test_zoh_closed_forms():
    """Double integrator: A_d = [[1, h], [0, 1]], B_d = [h²/2, h]; scalar ẋ = a x + b u: e^{ah}, (e^{ah} − 1) b / a."""
    h = 0.01
    Ad, Bd = discretize([[0.0, 1.0], [0.0, 0.0]], [[0.0], [1.0]], h)
    assert np.allclose(Ad, [[1.0, h], [0.0, 1.0]], rtol=0, atol=1e-15)
    assert np.allclose(Bd, [[h * h / 2], [h]], rtol=1e-14, atol=0)
    a, b = -3.0, 2.0
    Ad, Bd = discretize([[a]], [[b]], h)
    assert abs(Ad[0, 0] - np.exp(a * h)) < 1e-15 and abs(Bd[0, 0] - np.expm1(a * h) * b / a) < 1e-16
    Ad, Bd = discretize([[a]], [[b]], h, "tustin")
    assert abs(Ad[0, 0] - (1 + a * h / 2) / (1 - a * h / 2)) < 1e-15 and abs(Bd[0, 0] - h * b / (1 - a * h / 2)) < 1e-16


def test_discretize_batched_equals_per_sample_and_keeps_float32():
    rng = np.random.default_rng(1)
    A, B = rng.normal(size=(3, 2, 4, 4)), rng.normal(size=(4, 2))
    for method in SCIPY_NAME:
        Ad, Bd = discretize(A, B, 0.05, method)
        assert Ad.shape == (3, 2, 4, 4) and Bd.shape == (3, 2, 4, 2)
        one = discretize(A[2, 1], B, 0.05, method)
        assert np.array_equal(Ad[2, 1], one.A) and np.array_equal(Bd[2, 1], one.B)
    single = discretize(A[0, 0].astype(np.float32), B.astype(np.float32), 0.05)
    assert single.A.dtype == np.float32 and _rel(single.A, discretize(A[0, 0], B, 0.05).A) < 1e-6


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"method": "rk4"}, "method"), ({"dt": 0.0}, "dt"), ({"dt": np.nan}, "dt"), ({"dt": [0.1, 0.2]}, "dt"),
    ({"B": np.ones((3, 1))}, "B"), ({"A": np.ones((2, 3))}, "A"), ({"A": [[np.inf, 0], [0, 0]]}, "A"),
])
def test_discretize_bad_input(kwargs, word):
    args = {"A": np.zeros((2, 2)), "B": np.ones((2, 1)), "dt": 0.1} | kwargs
    with pytest.raises(rd.InputError, match=word):
        discretize(**args)


def test_implicit_method_at_a_pole_is_reported():
    with pytest.raises(rd.InputError, match="singular"):
        discretize([[10.0]], [[1.0]], 0.2, "tustin")  # 1 − 10·0.2/2 = 0


def test_linearize_with_dt_is_the_discretized_linearization():
    robot = rd.load("planar3r")
    q, qd, qdd = np.array([0.3, -0.5, 0.9]), np.array([0.2, 0.1, -0.4]), np.array([1.0, 0.0, -1.0])
    A, B = rd.linearize(robot, q, qd, qdd=qdd)
    for method in SCIPY_NAME:
        Ad, Bd = rd.linearize(robot, q, qd, qdd=qdd, dt=0.002, method=method)
        ref = discretize(A, B, 0.002, method)
        assert np.array_equal(Ad, ref.A) and np.array_equal(Bd, ref.B)
    with pytest.raises(rd.InputError, match="method"):
        rd.linearize(robot, q, dt=0.002, method="rk4")


# ---- one step --------------------------------------------------------------------------------------------------

PLANAR = rd.load("planar2r")
X0 = np.array([0.4, -0.7, 0.5, 1.2])
U = np.array([3.0, -1.0])


def _roll(robot, x, u, dt, steps, method):
    for _ in range(steps):
        x = step(robot, x, u, dt, method=method)
    return x


def _exact(robot, x, u, T):
    n = robot.n
    sim = rd.simulate(robot, lambda t: u, x[:n], x[n:], [0.0, T], rtol=1e-13, atol=1e-13, friction="none")
    return np.concatenate([sim.q[-1], sim.qd[-1]])


@pytest.mark.parametrize(("method", "order"), [("rk4", 4), ("semi_implicit_euler", 1), ("euler", 1)])
def test_step_converges_to_the_integrated_solution_at_its_order(method, order):
    """Global error ~ C Δt^order: halving Δt divides it by ≈ 2^order (between 0.7 and 1.3 times that)."""
    robot = rd.dynamics.friction_models.frictionless(PLANAR)
    T = 0.2
    exact = _exact(robot, X0, U, T)
    err = [np.abs(_roll(robot, X0, U, T / k, k, method) - exact).max() for k in (40, 80)]
    assert 0.7 * 2**order < err[0] / err[1] < 1.3 * 2**order
    if method == "rk4":
        assert err[1] < 1e-8


def test_semi_implicit_euler_keeps_a_pendulums_energy_bounded():
    """One revolute link (constant inertia: a separable Hamiltonian): symplectic Euler's energy error stays O(Δt)
    over 2000 steps, explicit Euler's grows."""
    robot = rd.loads("""
name: pendulum
gravity: [0, -9.81, 0]
joints:
  - {sigma: 0, alpha: 0, d: 0, theta: 0, r: 0}
links:
  - {mass: 1.0, com: [0.5, 0, 0], inertia_com: [0.01, 0, 0, 0.01, 0, 0.01]}
""")
    x0, u, dt = np.array([1.0, 0.0]), np.zeros(1), 0.01

    def energy(x):
        return rd.kinetic_energy(robot, x[:1], x[1:]) + rd.potential_energy(robot, x[:1])

    E0 = energy(x0)
    drift = {}
    for method in ("semi_implicit_euler", "euler"):
        x, worst = x0, 0.0
        for _ in range(2000):
            x = step(robot, x, u, dt, method=method)
            worst = max(worst, abs(energy(x) - E0))
        drift[method] = worst
    swing = 9.81 * 0.5 * (1 - np.cos(1.0))  # potential energy range of the motion
    assert drift["semi_implicit_euler"] < 0.1 * swing < drift["euler"]


def test_step_batched_equals_per_sample_and_float32():
    rng = np.random.default_rng(3)
    x, u = rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    for method in ("rk4", "semi_implicit_euler", "euler"):
        batch = step(PLANAR, x, u, 1e-3, method=method)
        one = np.stack([step(PLANAR, x[i], u[i], 1e-3, method=method) for i in range(5)])
        assert _rel(batch, one) < 1e-14
    single = step(PLANAR, x.astype(np.float32), u.astype(np.float32), 1e-3)
    assert single.dtype == np.float32 and _rel(single, step(PLANAR, x, u, 1e-3)) < 1e-5


def test_step_saturates_the_torque_at_taulim_per_sample():
    """Γ = clip(u, −taulim, taulim) on every sample of a batch: the step of the robot with limits equals the step of
    the robot without them under the pre-clipped torque, in float64 and float32; saturate=False applies u."""
    L = np.array([3.0, 1.0])
    limited = PLANAR.with_joint_parameters(taulim=L)
    rng = np.random.default_rng(5)
    x, u = rng.normal(size=(6, 4)), 4.0 * rng.normal(size=(6, 2))
    u[0] = [1.0, -0.5]  # one sample inside the limits
    assert np.any(np.abs(u) > L) and np.any(np.all(np.abs(u) < L, axis=1))
    batch = step(limited, x, u, 1e-3)
    np.testing.assert_array_equal(batch, step(PLANAR, x, np.clip(u, -L, L), 1e-3))
    one = np.stack([step(limited, x[i], u[i], 1e-3) for i in range(6)])
    assert _rel(batch, one) < 1e-14
    np.testing.assert_array_equal(step(limited, x, u, 1e-3, saturate=False), step(PLANAR, x, u, 1e-3))
    x32, u32 = x.astype(np.float32), u.astype(np.float32)
    single = step(limited, x32, u32, 1e-3)
    assert single.dtype == np.float32
    np.testing.assert_array_equal(single, step(PLANAR, x32, np.clip(u32, -L, L).astype(np.float32), 1e-3))
    np.testing.assert_array_equal(step(PLANAR, x, u, 1e-3), step(PLANAR, x, u, 1e-3, saturate=False))
    with pytest.raises(rd.InputError, match=r"saturate = 'no'; give True"):
        step(limited, x, u, 1e-3, saturate="no")


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"x": np.zeros(3)}, "x"), ({"u": np.zeros(3)}, "u"), ({"dt": -1.0}, "dt"), ({"method": "rk45"}, "method"),
    ({"x": np.full(4, np.nan)}, "x"),
])
def test_step_bad_input(kwargs, word):
    args = {"robot": PLANAR, "x": X0, "u": U, "dt": 1e-3} | kwargs
    with pytest.raises(rd.InputError, match=word):
        step(**args)


# ---- sampled controllers ---------------------------------------------------------------------------------------

CARTESIAN = rd.load("cartesian3p")


def test_sampled_pid_on_a_linear_plant_follows_the_exact_discrete_recursion():
    """The Cartesian robot is linear (constant inertia, constant gravity force): with Γ held over each period the
    samples obey x_{k+1} = A_d x_k + B_d (Γ_k − Q) exactly (zero-order hold, :func:`discretize`). The controller's
    model is 2 kg too light (its Q̂ misses a payload), the error a constant disturbance that the integral
    removes."""
    robot, Ts, n = CARTESIAN, 0.01, 3
    params = robot.params.copy()
    params[0, 9] -= 2.0  # link 1 mass (M, centre of mass at O_1) in the controller's model
    model = robot.replace(params=params)
    goal = np.array([0.5, 0.1, -0.2])
    ref = QuinticReference(goal, goal, 1.0)  # constant set point
    Kp, Ki, Kd = np.array([400.0, 300.0, 200.0]), np.array([800.0, 600.0, 400.0]), np.array([120.0, 90.0, 60.0])
    pid = SampledPID(model, Kp, Ki, Kd, ref, Ts)
    calls = []

    def counted(t, q, qd):
        calls.append(t)
        return pid(t, q, qd)

    counted.reset = pid.reset
    t = np.arange(0, 301) * Ts
    q0 = np.array([0.3, 0.0, 0.0])
    sim = rd.simulate(robot, counted, q0, np.zeros(n), t, sample_time=Ts, rtol=1e-12, atol=1e-12)
    assert np.allclose(calls, t[:-1], rtol=0, atol=1e-12)  # once per period, in order, none at the final time
    Q = rd.gravity_torques(robot, np.zeros(n))
    Ad, Bd = rd.linearize(robot, goal, dt=Ts)
    x, integral, xs = np.concatenate([q0, np.zeros(n)]), np.zeros(n), []
    for _ in range(5000):
        xs.append(x)
        e = goal - x[:n]
        integral = integral + Ts * e
        tau = Kp * e + Ki * integral - Kd * x[n:] + rd.gravity_torques(model, x[:n])
        x = Ad @ x + Bd @ (tau - Q)
    xs = np.array(xs)
    assert np.abs(sim.q - xs[:t.size, :n]).max() < 1e-9 and np.abs(sim.qd - xs[:t.size, n:]).max() < 1e-8
    assert np.abs(sim.energy_error).max() < 1e-7
    # the integral takes out the offset ΔQ/K_P that PD control would keep: e → 0
    offset = np.abs(Q - rd.gravity_torques(model, goal)) / Kp
    assert offset[0] > 0.04 and np.abs(xs[-1, :n] - goal).max() < 1e-9
    assert np.abs(sim.q[-1] - goal).max() < 0.2 * offset[0]


def test_sampled_simulation_holds_the_torque_and_matches_fixed_steps():
    """A sampled controller evaluated every Ts: the RK4 steps of rd.simulation.step with the same held torques
    reach the same states (to RK4's error at Δt = Ts/20)."""
    robot = rd.dynamics.friction_models.frictionless(PLANAR)
    Ts = 0.005

    def controller(t, q, qd):
        return -20.0 * q - 3.0 * qd + rd.gravity_torques(robot, q)

    sim = rd.simulate(robot, controller, X0[:2], X0[2:], np.arange(0, 41) * Ts, sample_time=Ts, rtol=1e-12,
                      atol=1e-12, friction="none")
    x = X0
    for k in range(40):
        u = controller(k * Ts, x[:2], x[2:])
        assert np.array_equal(sim.tau[k], u) or _rel(sim.tau[k], u) < 1e-9
        x = _roll(robot, x, u, Ts / 20, 20, "rk4")
    assert np.abs(np.concatenate([sim.q[-1], sim.qd[-1]]) - x).max() < 1e-9


def test_sampled_pid_takes_one_sample_per_call_and_resets():
    ref = QuinticReference(np.zeros(2), np.ones(2), 1.0)
    pid = SampledPID(PLANAR, 10.0, 5.0, 1.0, ref, 0.01)
    pid(0.0, np.zeros(2), np.zeros(2))
    assert np.any(pid.integral == 0)  # zero error at t = 0
    pid(0.5, np.zeros(2), np.zeros(2))
    assert np.all(pid.integral > 0)
    pid.reset()
    assert np.all(pid.integral == 0)
    with pytest.raises(rd.InputError, match="one sample"):
        pid(np.array([0.0, 0.1]), np.zeros((2, 2)), np.zeros((2, 2)))
    with pytest.raises(rd.InputError, match="sample_time"):
        rd.simulate(PLANAR, pid, np.zeros(2), np.zeros(2), [0.0, 0.1], sample_time=0.0)
    with pytest.raises(rd.InputError, match="StickSlip"):
        rd.simulate(PLANAR, pid, np.zeros(2), np.zeros(2), [0.0, 0.1], sample_time=0.01, friction="stick-slip")
