"""Joint-space trajectories: boundary values, analytic derivatives vs exact symbolic / finite differences."""

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import quad

from robodyn.errors import InputError, RobodynError
from robodyn.simulation.trajectories import FourierSeries, RestToRest, Spline, Trapezoidal, quintic

Q0, QF = np.array([0.3, -1.0, 2.0]), np.array([1.3, 0.5, -0.5])


def _fd(traj, t, h=1e-5):
    """Central differences of q and q̇ (error O(h²) ~ 1e-10 on these smooth laws)."""
    qp, qdp, _ = traj.sample(t + h)
    qm, qdm, _ = traj.sample(t - h)
    return (qp - qm) / (2 * h), (qdp - qdm) / (2 * h)


@pytest.mark.parametrize("profile,order", [("cubic", 3), ("quintic", 5)])
def test_rest_to_rest_matches_symbolic_polynomial(profile, order):
    T = 1.7
    traj = RestToRest(Q0, QF, T, profile=profile)
    t_ = sp.symbols("t")
    tau = t_ / T
    s = 3 * tau**2 - 2 * tau**3 if order == 3 else 10 * tau**3 - 15 * tau**4 + 6 * tau**5
    t = np.linspace(0.01, T - 0.01, 13)
    q, qd, qdd = traj.sample(t)
    for expr, got in ((s, q), (sp.diff(s, t_), qd), (sp.diff(s, t_, 2), qdd)):
        f = sp.lambdify(t_, expr)
        vals = np.array([float(f(x)) for x in t])
        want = (Q0 if got is q else 0) + vals[:, None] * (QF - Q0)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)  # cancellation in the expanded reference


def test_rest_to_rest_boundaries_and_hold():
    traj = RestToRest(Q0, QF, 2.0, profile="quintic")
    q, qd, qdd = traj.sample(np.array([-1.0, 0.0, 2.0, 5.0]))
    np.testing.assert_array_equal(q[[0, 1]], [Q0, Q0])
    np.testing.assert_allclose(q[[2, 3]], [QF, QF], rtol=0, atol=1e-15)
    assert np.all(qd == 0) and np.all(qdd == 0)
    np.testing.assert_array_equal(traj.sample(0.7)[0], quintic(0.7, 2.0)[0] * (QF - Q0) + Q0)


def test_batch_shapes():
    traj = RestToRest(Q0, QF, 1.0, profile="cubic")
    t = np.linspace(0, 1, 12).reshape(3, 4)
    q, qd, qdd = traj.sample(t)
    assert q.shape == qd.shape == qdd.shape == (3, 4, 3)
    np.testing.assert_array_equal(q[1, 2], traj.sample(t[1, 2])[0])


def test_trapezoidal_from_limits_is_tight_and_consistent():
    V, A = np.array([1.0, 3.0, 2.0]), np.array([4.0, 2.0, 5.0])
    traj = Trapezoidal.from_limits(Q0, QF, V, A)
    t = np.linspace(0, traj.duration, 2001)
    q, qd, qdd = traj.sample(t)
    # limits met, and one of them reached (the motion is the shortest of its kind)
    assert np.all(np.abs(qd) <= V * (1 + 1e-12)) and np.all(np.abs(qdd) <= A * (1 + 1e-12))
    assert np.isclose(np.max(np.abs(qd) / V), 1.0, rtol=1e-12) or np.isclose(np.max(np.abs(qdd) / A), 1.0)
    np.testing.assert_allclose(q[0], Q0, atol=1e-15)
    np.testing.assert_allclose(q[-1], QF, atol=1e-14)
    # velocity integrates to the displacement, and acceleration to the velocity (piecewise exact quadrature)
    for j in range(3):
        mid = traj.duration * 0.37
        disp = quad(lambda x: traj.sample(x)[1][j], 0, mid, points=[traj.accel_time], epsabs=1e-14)[0]
        assert abs(Q0[j] + disp - traj.sample(mid)[0][j]) < 1e-12
    # away from the phase switches, derivatives match central differences
    tt = np.array([0.3, 0.5, 0.9]) * traj.duration
    tt = tt[np.abs(tt - traj.accel_time) > 1e-3]
    dq, dqd = _fd(traj, tt)
    np.testing.assert_allclose(dq, traj.sample(tt)[1], atol=1e-9)
    np.testing.assert_allclose(dqd, traj.sample(tt)[2], atol=1e-6)


def test_trapezoidal_triangular_profile_closed_form():
    # one joint, Δ = 1, V large, A = 4: triangular, T = 2 √(Δ/A) = 1
    traj = Trapezoidal.from_limits([0.0], [1.0], 100.0, 4.0)
    assert traj.duration == pytest.approx(1.0, rel=1e-15) and traj.blend == 0.5


def test_spline_interpolates_clamped_and_derivatives():
    times = np.array([0.0, 0.4, 1.1, 2.0])
    W = np.array([[0.0, 1.0], [0.5, 0.2], [-0.3, 0.4], [1.0, -1.0]])
    traj = Spline(times, W)
    q, qd, qdd = traj.sample(times)
    np.testing.assert_allclose(q, W, atol=1e-15)
    np.testing.assert_allclose(qd[[0, -1]], 0.0, atol=1e-14)  # velocities here are O(1) rad/s
    t = np.linspace(0.05, 1.95, 9)
    dq, dqd = _fd(traj, t)
    np.testing.assert_allclose(dq, traj.sample(t)[1], atol=1e-9)
    np.testing.assert_allclose(dqd, traj.sample(t)[2], atol=1e-7)
    # C² at the interior knots
    for tk in times[1:-1]:
        lo, hi = traj.sample(tk - 1e-12), traj.sample(tk + 1e-12)
        np.testing.assert_allclose(lo[2], hi[2], atol=1e-9)
    assert traj.duration == 2.0


def test_fourier_series_matches_symbolic():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    wf, q0 = 2 * np.pi * 0.1, np.array([0.2, -0.1])
    traj = FourierSeries(wf, a, b, q0)
    t_ = sp.symbols("t")
    t = np.linspace(0, 10, 7)
    q, qd, qdd = traj.sample(t)
    for j in range(2):
        expr = q0[j] + sum(a[j, l] / (wf * (l + 1)) * sp.sin((l + 1) * wf * t_)
                           - b[j, l] / (wf * (l + 1)) * sp.cos((l + 1) * wf * t_) for l in range(3))
        for e, got in ((expr, q), (sp.diff(expr, t_), qd), (sp.diff(expr, t_, 2), qdd)):
            f = sp.lambdify(t_, e, "numpy")
            np.testing.assert_allclose(got[:, j], f(t), rtol=1e-12, atol=1e-12)
    assert traj.duration == pytest.approx(10.0)
    np.testing.assert_allclose(traj.sample(10.0)[0], traj.sample(0.0)[0], atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda: RestToRest([0, 0], [1], 1.0),
    lambda: RestToRest([0], [1], -1.0),
    lambda: RestToRest([0], [1], 1.0, profile="septic"),
    lambda: Trapezoidal([0], [1], 1.0, blend=0.7),
    lambda: Trapezoidal.from_limits([0], [0], 1.0, 1.0),
    lambda: Trapezoidal.from_limits([0], [1], -1.0, 1.0),
    lambda: Spline([0, 0], [[0], [1]]),
    lambda: Spline([0, 1], [[0], [1], [2]]),
    lambda: Spline([0.5, 1], [[0], [1]]),
    lambda: FourierSeries(1.0, np.ones((2, 3)), np.ones((2, 2)), [0, 0]),
    lambda: RestToRest([0], [np.nan], 1.0),
])
def test_bad_input_raises(make):
    with pytest.raises(InputError):
        make()
    assert issubclass(InputError, RobodynError)
