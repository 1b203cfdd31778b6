"""Optimal point-to-point motion of De Luca's 2R arm: minimum time (bang-bang, KKT) and minimum energy."""

import numpy as np
import pytest

import robodyn as rd
from robodyn.errors import InputError
from robodyn.simulation.optimal import OptimizationError, optimal_motion
from robodyn.simulation.time_scaling import InfeasibleLimitsError, time_optimal, time_scale
from robodyn.simulation.trajectories import RestToRest, Spline

DOWN, UP = np.array([-np.pi / 2, 0.0]), np.array([0.0, np.pi / 2])
L = np.array([60.0, 30.0])


@pytest.fixture(scope="module")
def arm():
    return rd.load("planar2r")


@pytest.fixture(scope="module")
def fastest(arm):
    return optimal_motion(arm, DOWN, UP, L, nodes=16)


def test_minimum_time_is_bang_bang_and_kkt(arm, fastest):
    m = fastest
    # the continuous motion, 400 samples per interval: the limits hold between the nodes (to limit_tol = 1e-6)
    t = np.linspace(0, m.duration, 16 * 400 + 1)
    ratio = np.abs(rd.inverse_dynamics(arm, *m.sample(t))) / L
    assert np.all(ratio <= 1 + 1e-6) and m.peak_ratio <= 1 + 1e-6
    # bang-bang structure: in every interval an actuator reaches its limit (the samples miss the exact maximum by
    # at most a (1/400)² fraction of the interval's curvature)
    per_interval = ratio.max(axis=1)[:-1].reshape(16, 400).max(axis=1)
    assert np.all(per_interval > 1 - 1e-4)
    assert m.kkt_residual < 1e-8
    # the nodes are at rest at A and B, and the torques are the inverse dynamics of the motion
    np.testing.assert_array_equal(m.q[[0, -1]], [DOWN, UP])
    np.testing.assert_allclose(m.qd[[0, -1]], 0.0, atol=1e-12)
    np.testing.assert_allclose(m.torques, rd.inverse_dynamics(arm, m.q, m.qd, m.qdd), rtol=1e-14, atol=1e-12)
    np.testing.assert_allclose(rd.forward_dynamics(arm, m.q, m.qd, m.torques), m.qdd, rtol=1e-9, atol=1e-9)


def test_minimum_time_beats_every_timing_of_the_straight_path(arm, fastest):
    # the best timing of one path (TOPP) and the best uniform scaling of a quintic are admissible motions too,
    # so the optimum over all paths is not slower (up to the grids' discretisation)
    straight = Spline([0.0, 1.0], [DOWN, UP])
    topp = time_optimal(arm, straight, L, grid=200)
    uniform = time_scale(arm, RestToRest(DOWN, UP, 1.0), L, samples=401)
    assert fastest.duration < topp.duration < uniform.duration


def test_minimum_energy(arm, fastest):
    T = 1.5 * fastest.duration
    e = optimal_motion(arm, DOWN, UP, L, objective="energy", duration=T, nodes=12)
    assert e.duration == T and e.kkt_residual < 1e-4
    t = np.linspace(0, T, 12 * 400 + 1)
    assert np.all(np.abs(rd.inverse_dynamics(arm, *e.sample(t))) <= L * (1 + 1e-6))
    # lower energy than the minimum-time motion and than a quintic of the same duration
    quintic = RestToRest(DOWN, UP, T, profile="quintic")
    tq = rd.inverse_dynamics(arm, *quintic.sample(np.linspace(0, T, 2001)))
    e_quintic = np.trapezoid(np.sum(tq**2, axis=1), dx=T / 2000)
    assert e.energy < fastest.energy and e.energy < e_quintic


def test_errors_name_the_limit(arm, fastest):
    with pytest.raises(OptimizationError, match="torque_limits"):
        optimal_motion(arm, DOWN, UP, L, objective="energy", duration=0.8 * fastest.duration, nodes=8)
    with pytest.raises(InfeasibleLimitsError, match=r"torque_limits\[1\]"):
        optimal_motion(arm, DOWN, UP, [60.0, 4.0], nodes=8)
    with pytest.raises(InputError, match="duration"):
        optimal_motion(arm, DOWN, UP, L, objective="energy")
    with pytest.raises(InputError, match="objective"):
        optimal_motion(arm, DOWN, UP, L, objective="jerk")
    with pytest.raises(InputError, match="limit_tol"):
        optimal_motion(arm, DOWN, UP, L, limit_tol=0)


def test_sample_is_the_spline_through_the_nodes(arm, fastest):
    m = fastest
    q, qd, qdd = m.sample(m.t)
    np.testing.assert_allclose(q, m.q, atol=1e-12)
    np.testing.assert_allclose(qd, m.qd, atol=1e-9)
    np.testing.assert_allclose(qdd, m.qdd, atol=1e-8)
    # any shape of times; at rest outside [0, T]
    q2, qd2, _ = m.sample(np.array([[-1.0, 0.3 * m.duration], [m.duration, 2 * m.duration]]))
    assert q2.shape == (2, 2, 2)
    np.testing.assert_allclose(q2[0, 0], DOWN, atol=1e-15)
    np.testing.assert_allclose(qd2[1, 1], 0.0, atol=0)


def test_plot_is_a_png_file(arm, fastest, tmp_path):
    fastest.plot(tmp_path / "fast.png")
    fastest.plot(tmp_path / "continuous.png", arm)      # the torques of the continuous motion
    for name in ("fast.png", "continuous.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("seed", [1, 2])
def test_converges_whatever_the_rounding(arm, seed):
    """A well-posed problem does not fail on another machine's rounding: limits and end points perturbed at the
    1e-12 level (what a different BLAS or compiler changes) still give a converged, executable motion."""
    rng = np.random.default_rng(seed)
    limits = np.array([40.0, 15.0]) * (1 + 1e-12 * rng.uniform(-1, 1, 2))
    start = DOWN + 1e-13 * rng.uniform(-1, 1, 2)
    m = optimal_motion(arm, start, UP, limits, nodes=10)
    t = np.linspace(0, m.duration, 10 * 400 + 1)
    assert np.all(np.abs(rd.inverse_dynamics(arm, *m.sample(t))) <= limits * (1 + 1e-6))
    assert m.kkt_residual < 1e-6
