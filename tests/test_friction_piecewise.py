"""The piecewise-linear friction of Khalil & Dombre Fig. 9.2d (PiecewiseLinearFriction) and its use in rd.simulate."""

import numpy as np
import pytest

import robodyn as rd
from robodyn.dynamics.friction_models import (
    DiscontinuousFriction, PiecewiseLinearFriction, friction_model,
)


def robot_with(Fst=0.0, kst=0.0, Bst=1.0):
    r = rd.load("planar2r")
    return r.replace(Fc=np.array([2.0, 1.0]), Fv=np.array([0.5, 0.2]), Fst=np.array([Fst, 0.0]),
                     kst=np.array([kst, 0.0]), Bst=np.array([Bst, 1.0]))


def test_equals_coulomb_viscous_beyond_the_width():
    """Without a Stribeck term it is [9.27] exactly for |q̇| ≥ v_0 (same sums: 1e-15), a line through the origin
    with the value F_c + F_v v_0 at v_0 below it, odd in q̇."""
    robot, model = robot_with(), PiecewiseLinearFriction(width=0.05)
    qd = np.array([[0.05, -0.3], [1.7, -0.05], [-4.0, 2.5]])
    np.testing.assert_allclose(model.torque(robot, qd), DiscontinuousFriction().torque(robot, qd), rtol=1e-15)
    small = np.array([[0.02, -0.01], [0.0, 0.0]])
    np.testing.assert_allclose(model.torque(robot, small), np.array([[2.0 / 0.05 * 0.02 + 0.5 * 0.02,
                                                                      -(1.0 / 0.05 * 0.01 + 0.2 * 0.01)], [0, 0]]),
                               rtol=1e-14)
    np.testing.assert_array_equal(model.torque(robot, -qd), -model.torque(robot, qd))


def test_stribeck_segment_of_9_26():
    """With F_st: the break-away level F_st at v_0, F_c at v_1 = (3/k)^(1/B), where [9.26]'s Stribeck excess has
    decayed to e⁻³ of F_st − F_c (checked: the two models differ there by exactly that excess, 1e-12)."""
    robot = robot_with(Fst=3.0, kst=12.0, Bst=2.0)
    model = PiecewiseLinearFriction(width=0.01)
    v1 = (3.0 / 12.0) ** 0.5
    at = lambda v: model.torque(robot, np.array([v, 0.0]))[0]  # noqa: E731
    assert at(0.01) == pytest.approx(3.0 + 0.5 * 0.01, rel=1e-14)
    assert at(v1) == pytest.approx(2.0 + 0.5 * v1, rel=1e-14)
    assert at((0.01 + v1) / 2) == pytest.approx(2.5 + 0.5 * (0.01 + v1) / 2, rel=1e-14)
    exact = DiscontinuousFriction().torque(robot, np.array([v1, 0.0]))[0]
    assert exact - at(v1) == pytest.approx((3.0 - 2.0) * np.exp(-3.0), rel=1e-12)
    assert PiecewiseLinearFriction(width=0.01, stribeck_end=0.2).torque(robot, np.array([0.2, 0]))[0] == \
        pytest.approx(2.0 + 0.5 * 0.2, rel=1e-14)


def test_continuous_and_slope_is_the_derivative():
    """Continuous at the break points (jumps below 1e-9 across ±1e-12) and slope = central difference of torque
    away from them (piecewise linear: exact up to rounding, 1e-6 relative with h = 1e-7)."""
    robot = robot_with(Fst=3.0, kst=12.0, Bst=2.0)
    model = PiecewiseLinearFriction(width=0.01)
    v1 = 0.5
    for v in (0.01, v1):
        lo, hi = (model.torque(robot, np.array([v + s, v + s])) for s in (-1e-12, 1e-12))
        assert np.all(np.abs(hi - lo) < 1e-9)
    qd = np.array([[0.004, -0.003], [0.2, 0.03], [-0.3, 2.0], [1.5, -0.7]])
    h = 1e-7
    fd = (model.torque(robot, qd + h) - model.torque(robot, qd - h)) / (2 * h)
    np.testing.assert_allclose(model.slope(robot, qd), fd, rtol=1e-6)


def test_batched_equals_per_sample():
    robot, model = robot_with(Fst=3.0, kst=12.0, Bst=2.0), PiecewiseLinearFriction()
    qd = np.random.default_rng(0).uniform(-1, 1, (4, 3, 2))
    per = np.array([[model.torque(robot, qd[i, j]) for j in range(3)] for i in range(4)])
    np.testing.assert_array_equal(model.torque(robot, qd), per)


def test_bad_parameters_are_refused():
    robot = robot_with(Fst=3.0, kst=12.0, Bst=2.0)
    with pytest.raises(rd.InputError, match="width = -1"):
        PiecewiseLinearFriction(width=-1).torque(robot, np.zeros(2))
    with pytest.raises(rd.InputError, match="stribeck_end: joint 1 ends its Stribeck decrease at 0.005"):
        PiecewiseLinearFriction(width=0.01, stribeck_end=0.005).torque(robot, np.zeros(2))


def test_simulate_uses_it_and_balances_energy():
    """rd.simulate(friction=...) by name or instance: the recorded friction torques are the model's at the
    simulated velocities (exact), and the energy balance E − E₀ = W_Γ − W_f holds to the integrator's
    tolerance (rtol = atol = 1e-8: 1e-5 J on joules of work)."""
    robot = robot_with()
    assert isinstance(friction_model("piecewise-linear"), PiecewiseLinearFriction)
    t = np.linspace(0.0, 1.0, 21)
    sim = rd.simulate(robot, lambda t: np.array([3.0, 0.5]), [0.3, -0.2], [0.0, 0.0], t,
                      friction=PiecewiseLinearFriction(width=0.02), rtol=1e-8, atol=1e-8)
    np.testing.assert_array_equal(sim.tau_friction, PiecewiseLinearFriction(width=0.02).torque(robot, sim.qd))
    assert np.abs(sim.energy_error).max() < 1e-5
    assert np.abs(sim.work_friction[-1]) > 0.1  # friction did work: the model was used
    named = rd.simulate(robot, lambda t: np.array([3.0, 0.5]), [0.3, -0.2], [0.0, 0.0], t,
                        friction="piecewise-linear", rtol=1e-8, atol=1e-8)
    assert np.isfinite(named.q).all() and isinstance(named.friction, PiecewiseLinearFriction)
