"""Simulation with friction models and closed-loop control: closed forms, Lyapunov functions, energy balance."""

import numpy as np
import pytest
from scipy.optimize import brentq

import robodyn as rd
from robodyn import Robot
from robodyn.control import ComputedTorque, PassivityBased, PDGravity, QuinticReference
from robodyn.dynamics.friction_models import DiscontinuousFriction, LuGre, SmoothFriction


def _energy_ok(sim, tol):
    """E(t) − E(0) = W_Γ − W_f + W_ext within ``tol`` times the largest energy involved."""
    scale = max(1.0, np.abs(sim.energy - sim.energy[0]).max(), np.abs(sim.work_tau).max(), np.abs(sim.work_friction).max())
    return np.abs(sim.energy_error).max() <= tol * scale


def _slider(Fc=2.0, Fv=0.5, Fst=0.0):
    """One horizontal prismatic joint (gravity along −z, joint along x of R_0... here a joint axis ⟂ gravity), 1 kg."""
    return Robot(name="slider", sigma=[1], alpha=[np.pi / 2], params=[[0, 0, 0, 0, 0, 0, 0, 0, 0, 1.0]],
                 Fc=[Fc], Fv=[Fv], Fst=[Fst], kst=[0.0], Bst=[2.0])


@pytest.mark.parametrize("width", [0.01, 0.1])
def test_smooth_friction_steady_velocity_is_the_closed_form(width):
    """Constant force Γ on a 1-kg slider: q̇ → v with F_c tanh(v/v_s) + F_v v = Γ; below F_c it creeps (v ≈ v_s Γ/F_c
    for small loads), above it slides. The closed form is the root of a scalar equation."""
    robot = _slider()
    for force in (0.3, 3.0):
        sim = rd.simulate(robot, lambda t: np.full(np.shape(t) + (1,), force), [0.0], [0.0], np.linspace(0, 60, 5),
                          friction=SmoothFriction(width=width), rtol=1e-10, atol=1e-12)
        v = brentq(lambda v: 2.0 * np.tanh(v / width) + 0.5 * v - force, 0, 10)
        assert abs(sim.qd[-1, 0] - v) < 1e-7 * max(1, v)
        assert _energy_ok(sim, 1e-8)


def test_lugre_sticks_below_and_slides_above_the_coulomb_level():
    """LuGre on the slider: under Γ < F_c the velocity dies out and the bristles carry Γ (σ₀ z = Γ); under Γ > F_c
    the steady sliding velocity solves F_c + F_v v = Γ (no Stribeck term here)."""
    robot = _slider()
    model = LuGre(sigma0=1e4, sigma1=50.0, vs=0.01)
    stick = rd.simulate(robot, lambda t: np.full(np.shape(t) + (1,), 1.5), [0.0], [0.0], np.linspace(0, 2, 5),
                        friction=model, rtol=1e-9, atol=1e-12)
    assert abs(stick.qd[-1, 0]) < 1e-8 and abs(stick.tau_friction[-1, 0] - 1.5) < 1e-6
    assert abs(1e4 * stick.z[-1, 0] - 1.5) < 1e-6 and stick.q[-1, 0] < 1e-3  # pre-sliding only
    slide = rd.simulate(robot, lambda t: np.full(np.shape(t) + (1,), 3.0), [0.0], [0.0], np.linspace(0, 60, 5),
                        friction=model, rtol=1e-9, atol=1e-12)
    assert abs(slide.qd[-1, 0] - (3.0 - 2.0) / 0.5) < 1e-6
    assert _energy_ok(stick, 1e-7) and _energy_ok(slide, 1e-7)


@pytest.mark.parametrize("friction", [None, "lugre"])
def test_rx90_holding_its_weight_returns_and_stays(friction):
    """The case that used to hang: rx90 (Coulomb friction) under its gravity torque stays at rest."""
    robot = rd.load("rx90")
    q0 = np.array([0.3, -0.5, 0.8, 0.2, 0.6, -0.4])
    g = rd.gravity_torques(robot, q0)
    sim = rd.simulate(robot, lambda t: np.broadcast_to(g, np.shape(t) + (6,)), q0, np.zeros(6),
                      np.linspace(0, 2, 11), friction=friction)
    assert np.abs(sim.q - q0).max() < 1e-6 and _energy_ok(sim, 1e-6)


def test_discontinuous_friction_hits_the_evaluation_limit_with_a_clear_error():
    robot = rd.load("rx90")
    q0 = np.array([0.3, -0.5, 0.8, 0.2, 0.6, -0.4])
    g = rd.gravity_torques(robot, q0) + 0.5 * robot.Fc[robot.joint_frames]  # pushes against stiction
    with pytest.raises(rd.RobodynError, match="hit max_evaluations = 1000"):
        rd.simulate(robot, lambda t: np.broadcast_to(g, np.shape(t) + (6,)), q0, np.zeros(6), [0.0, 2.0],
                    friction=DiscontinuousFriction(), integrator="RK45", max_evaluations=1000)


@pytest.fixture(scope="module")
def arm():
    return rd.load("planar2r")


def test_computed_torque_with_exact_model_tracks_to_the_integrator_tolerance(arm):
    ref = QuinticReference([0.1, -0.2], [1.0, 0.7], 1.0)
    ctl = ComputedTorque(arm, 100.0, 20.0, ref)
    sim = rd.simulate(arm, ctl, ref.q0, [0.0, 0.0], np.linspace(0, 1.5, 31), rtol=1e-10, atol=1e-10)
    assert np.abs(sim.q - ref.sample(sim.t)[0]).max() < 1e-8
    assert _energy_ok(sim, 1e-8)
    # τ recorded at the outputs is the controller's (batched call == per-sample call)
    assert np.allclose(sim.tau[7], ctl(sim.t[7], sim.q[7], sim.qd[7]), rtol=1e-13, atol=1e-12)


def test_computed_torque_error_dynamics_with_initial_error(arm):
    """ë + K_D ė + K_P e = 0: with K_P = 100, K_D = 20 (critically damped, λ = 10) e(t) = e0 (1 + 10 t) e^{−10t}."""
    ref = QuinticReference([0.1, -0.2], [1.0, 0.7], 1.0)
    e0 = np.array([0.05, -0.03])
    sim = rd.simulate(arm, ComputedTorque(arm, 100.0, 20.0, ref), ref.q0 - e0, [0.0, 0.0], np.linspace(0, 1, 11),
                      rtol=1e-10, atol=1e-10)
    e = ref.sample(sim.t)[0] - sim.q
    expected = e0 * ((1 + 10 * sim.t) * np.exp(-10 * sim.t))[:, None]
    assert np.abs(e - expected).max() < 1e-7


def test_pd_gravity_converges_to_the_set_point_and_its_lyapunov_function_decreases(arm):
    qf = np.array([1.0, 0.7])
    ref = QuinticReference([0.1, -0.2], qf, 0.5)
    Kp, Kd = np.diag([100.0, 50.0]), np.diag([20.0, 10.0])
    sim = rd.simulate(arm, PDGravity(arm, Kp, Kd, ref), ref.q0, [0.0, 0.0], np.linspace(0, 5, 201),
                      rtol=1e-9, atol=1e-9)
    after = sim.t >= 0.5
    e = qf - sim.q[after]
    A = rd.inertia_matrix(arm, sim.q[after])
    V = 0.5 * np.einsum("ni,nij,nj->n", sim.qd[after], A, sim.qd[after]) + 0.5 * np.einsum("ni,ij,nj->n", e, Kp, e)
    assert np.all(np.diff(V) <= 1e-8 * V[0])  # V̇ = −q̇ᵀK_D q̇ ≤ 0 (Takegaki–Arimoto)
    assert np.abs(sim.q[-1] - qf).max() < 1e-4
    assert _energy_ok(sim, 1e-8)


def test_passivity_based_tracks_with_exact_model(arm):
    ref = QuinticReference([0.1, -0.2], [1.0, 0.7], 1.0)
    sim = rd.simulate(arm, PassivityBased(arm, 10.0, 20.0, ref), ref.q0 + [0.02, 0.0], [0.0, 0.0],
                      np.linspace(0, 2, 21), rtol=1e-7, atol=1e-8)
    e = np.abs(sim.q - ref.sample(sim.t)[0]).max(-1)
    assert e[0] == pytest.approx(0.02) and e[-1] < 1e-6 and np.all(np.diff(e[5:]) < 0)
    assert _energy_ok(sim, 1e-8)


def test_torque_limits_saturate_the_command(arm):
    ref = QuinticReference([0.1, -0.2], [1.0, 0.7], 1.0)
    limits = np.array([33.0, 9.0])  # below the unsaturated peaks (37.6, 10.9 N m)
    sim = rd.simulate(arm, ComputedTorque(arm, 400.0, 40.0, ref), ref.q0, [0.0, 0.0], np.linspace(0, 2, 41),
                      torque_limits=limits)
    assert np.all(np.abs(sim.tau) <= limits) and np.any(np.abs(sim.tau) == limits)
    assert _energy_ok(sim, 1e-5)


def test_default_saturation_at_taulim_equals_the_preclipped_command(arm):
    """A PD controller demanding more than the robot's taulim: the applied torque is exactly the clipped demand and
    the motion that of a run under the pre-clipped command on a robot without limits (the same right-hand side,
    so the same numbers); ``saturated`` marks the samples at the limit; ``saturate=False`` runs unclipped."""
    L = np.array([20.0, 5.0])  # below the demand of the fast move (its peaks exceed both)
    limited = arm.with_joint_parameters(taulim=L)
    pd = PDGravity(arm, 400.0, 40.0, QuinticReference([0.1, -0.2], [1.2, 0.9], 0.3))
    t = np.linspace(0, 0.6, 31)
    sim = rd.simulate(limited, pd, [0.1, -0.2], [0.0, 0.0], t)
    pre = rd.simulate(arm, lambda t, q, qd: np.clip(pd(t, q, qd), -L, L), [0.1, -0.2], [0.0, 0.0], t)
    np.testing.assert_array_equal(sim.q, pre.q)
    np.testing.assert_array_equal(sim.qd, pre.qd)
    demand = pd(sim.t, sim.q, sim.qd)
    np.testing.assert_array_equal(sim.tau, np.clip(demand, -L, L))
    np.testing.assert_array_equal(sim.saturated, np.abs(demand) >= L)
    assert sim.saturated[:, 0].any() and sim.saturated[:, 1].any() and not sim.saturated.all()
    assert _energy_ok(sim, 1e-5)
    free = rd.simulate(limited, pd, [0.1, -0.2], [0.0, 0.0], t, saturate=False)
    np.testing.assert_array_equal(free.q, rd.simulate(arm, pd, [0.1, -0.2], [0.0, 0.0], t).q)
    assert not free.saturated.any() and np.all(np.abs(free.tau).max(0) > L)
    # a sampled controller saturates its held torque
    held = rd.simulate(limited, pd, [0.1, -0.2], [0.0, 0.0], t, sample_time=0.01)
    assert np.all(np.abs(held.tau) <= L) and held.saturated.any()


def test_saturation_leaves_a_robot_without_limits_unchanged_and_checks_its_argument(arm):
    assert np.all(np.isinf(arm.taulim))
    pd = PDGravity(arm, 400.0, 40.0, QuinticReference([0.1, -0.2], [1.2, 0.9], 0.3))
    t = np.linspace(0, 0.3, 7)
    on, off = (rd.simulate(arm, pd, [0.1, -0.2], [0.0, 0.0], t, saturate=s) for s in (True, False))
    np.testing.assert_array_equal(on.q, off.q)
    np.testing.assert_array_equal(on.tau, off.tau)
    assert on.saturated.shape == (7, 2) and not on.saturated.any()
    for bad in ("yes", 1, None):
        with pytest.raises(rd.InputError, match=r"saturate = .*give True"):
            rd.simulate(arm, pd, [0.1, -0.2], [0.0, 0.0], t, saturate=bad)
    with pytest.raises(rd.InputError, match="torque_limits is given with saturate=False"):
        rd.simulate(arm, pd, [0.1, -0.2], [0.0, 0.0], t, saturate=False, torque_limits=[1.0, 1.0])


def test_model_mismatch_leaves_a_bounded_tracking_error(arm):
    """Controller's model = planar2r, simulated robot 20 % heavier: computed torque no longer linearises exactly;
    the error is far above the exact-model one yet bounded by the high-gain loop."""
    ref = QuinticReference([0.1, -0.2], [1.0, 0.7], 1.0)
    heavy = arm.replace(params=arm.params * 1.2)
    t = np.linspace(0, 2, 41)
    sim = rd.simulate(heavy, ComputedTorque(arm, 400.0, 40.0, ref), ref.q0, [0.0, 0.0], t)
    exact = rd.simulate(arm, ComputedTorque(arm, 400.0, 40.0, ref), ref.q0, [0.0, 0.0], t)
    err = np.abs(sim.q - ref.sample(t)[0]).max()
    assert 100 * np.abs(exact.q - ref.sample(t)[0]).max() < err < 0.05
    assert _energy_ok(sim, 1e-5)


def test_rx90_closed_loop_with_friction_in_seconds_budget():
    """Computed torque on rx90 with its Coulomb friction compensated by the same smooth model: exact model."""
    robot = rd.load("rx90")
    q0 = np.zeros(6)
    ref = QuinticReference(q0, np.full(6, 0.5), 1.0)
    sim = rd.simulate(robot, ComputedTorque(robot, 100.0, 20.0, ref), q0, np.zeros(6), np.linspace(0, 1.2, 13),
                      rtol=1e-9, atol=1e-9)
    assert np.abs(sim.q - ref.sample(sim.t)[0]).max() < 1e-6 and _energy_ok(sim, 1e-6)


def test_plot_writes_a_png(arm, tmp_path):
    ref = QuinticReference([0.1, -0.2], [1.0, 0.7], 1.0)
    sim = rd.simulate(arm, PDGravity(arm, 100.0, 20.0, ref), ref.q0, [0.0, 0.0], np.linspace(0, 1, 11))
    path = tmp_path / "sim.png"
    sim.plot(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_input(arm):
    ref = QuinticReference([0.1, -0.2], [1.0, 0.7], 1.0)
    with pytest.raises(rd.InputError, match="takes 2 required arguments"):
        rd.simulate(arm, lambda t, q: 0.0, [0, 0], [0, 0], [0, 1])
    with pytest.raises(rd.InputError, match="friction = 'sticky'"):
        rd.simulate(arm, lambda t: np.zeros(2), [0, 0], [0, 0], [0, 1], friction="sticky")
    with pytest.raises(rd.InputError, match="torque_limits"):
        rd.simulate(arm, lambda t: np.zeros(2), [0, 0], [0, 0], [0, 1], torque_limits=[1.0, -1.0])
    with pytest.raises(rd.InputError, match="max_evaluations = 0"):
        rd.simulate(arm, lambda t: np.zeros(2), [0, 0], [0, 0], [0, 1], max_evaluations=0)
    with pytest.raises(rd.InputError, match="Kp must be symmetric positive definite"):
        PDGravity(arm, -1.0, 1.0, ref)
    with pytest.raises(rd.InputError, match="reference must have a method sample"):
        ComputedTorque(arm, 1.0, 1.0, reference=[0, 1])
    with pytest.raises(rd.InputError, match="width = 0"):
        SmoothFriction(width=0).torque(arm, np.zeros(2))
    with pytest.raises(rd.InputError, match="LuGre"):
        PDGravity(arm, 1.0, 1.0, ref, friction="lugre")
    with pytest.raises(rd.InputError, match="duration"):
        QuinticReference([0, 0], [1, 1], -1.0)


def test_callables_returning_wrong_shapes_are_named(arm):
    with pytest.raises(rd.InputError, match=r"torque\(t\) returned \(3,\) at t = 0.0; it must return 2 finite"):
        rd.simulate(arm, lambda t: np.zeros(3), [0, 0], [0, 0], [0, 1])
    with pytest.raises(rd.InputError, match=r"controller\(t, q, qd\) returned NaN or inf"):
        rd.simulate(arm, lambda t, q, qd: np.full(2, np.nan), [0, 0], [0, 0], [0, 1])
    with pytest.raises(rd.InputError, match=r"wrenches\(t, q, qd\) returned shape \(6,\)"):
        rd.simulate(arm, lambda t: np.zeros(2), [0, 0], [0, 0], [0, 1], wrenches=lambda t, q, qd: np.zeros(6))


def test_stick_slip_model_sticks_breaks_away_and_slides_like_the_closed_form():
    """Slider (1 kg, F_c = 2, F_v = 0.5) under Γ = 3 sin(πt): stuck until 3 sin(πt) = F_s = 2, i.e.
    t₁ = asin(2/3)/π (the event), then q̈ = Γ − F_c − F_v q̇ until q̇ returns to 0 — compared with an independent
    integration of that one-dimensional law; held again until Γ = −2, then sliding backwards; the energy balance
    holds throughout."""
    from scipy.integrate import solve_ivp

    robot = _slider()
    t = np.linspace(0, 2, 201)
    sim = rd.simulate(robot, lambda tt: 3.0 * np.sin(np.pi * np.asarray(tt))[..., None] * np.ones(1), [0.0], [0.0],
                      t, friction="stick-slip", rtol=1e-11, atol=1e-13)
    t1 = np.arcsin(2 / 3) / np.pi
    assert np.all(sim.qd[t <= t1, 0] == 0) and np.all(sim.q[t <= t1, 0] == 0)
    assert np.all(np.abs(sim.tau_friction[t <= t1, 0] - 3 * np.sin(np.pi * t[t <= t1])) < 1e-12)  # holding
    slide = solve_ivp(lambda s, y: [y[1], 3 * np.sin(np.pi * s) - 2 - 0.5 * y[1]], (t1, 2), [0, 0], rtol=1e-12,
                      atol=1e-14, dense_output=True, events=lambda s, y: y[1] if s > t1 + 1e-9 else 1.0)
    t2 = slide.t_events[0][0]  # the slider stops again
    moving = (t > t1) & (t < t2)
    assert moving.sum() > 50 and np.all(sim.qd[moving, 0] > 0)
    assert np.abs(sim.q[moving, 0] - slide.sol(t[moving])[0]).max() < 1e-8
    held = (t > t2 + 1e-6) & (t <= 1 + t1)  # until 3 sin(πt) = −2: break-away backwards
    assert held.sum() > 10 and np.all(sim.qd[held, 0] == 0)
    assert np.all(sim.qd[t > 1 + t1 + 1e-6, 0] < 0)
    assert _energy_ok(sim, 1e-9)


def test_stick_slip_holds_rx90_under_a_load_below_breakaway():
    """Where the smooth model creeps (docs/simulation-control.md), the stick–slip model holds exactly."""
    robot = rd.load("rx90")
    q0 = np.array([0.3, -0.5, 0.8, 0.2, 0.6, -0.4])
    g = rd.gravity_torques(robot, q0) + 0.5 * robot.Fc[robot.joint_frames]
    sim = rd.simulate(robot, lambda t: np.broadcast_to(g, np.shape(t) + (6,)), q0, np.zeros(6),
                      np.linspace(0, 1, 6), friction="stick-slip")
    assert np.array_equal(sim.q, np.broadcast_to(q0, (6, 6))) and np.array_equal(sim.qd, np.zeros((6, 6)))
    assert np.allclose(sim.tau_friction, 0.5 * robot.Fc[robot.joint_frames], rtol=1e-9)
