"""Bounds on A, C, Q that grow with unlimited prismatic joints (De Luca, "Bounds on dynamic terms"), checked by
sampling: at the revolute angles used for the constants, every sampled displacement (up to 300 m) satisfies them,
and for one prismatic joint the constants are the growth rates seen directly at large displacements."""

import numpy as np
import pytest

import robodyn as rd
from robodyn.analysis.bounds import polynomial_bounds
from robodyn.errors import InputError
from tests.support.random_robots import random_robot


def _norm(M):
    return np.linalg.norm(M, 2, axis=(-2, -1))


def _configs(robot, angles, d):
    kinds = robot.sigma[robot.joint_frames]
    q = np.zeros(angles.shape[:-1] + (robot.n,))
    q[..., kinds == 0] = angles
    q[..., kinds == 1] = d
    return q


@pytest.mark.parametrize("robot", [rd.load("stanford"), rd.load("pr"), rd.load("cartesian3p")]
                         + [random_robot(s, nf=5, prismatic=True) for s in (1, 6, 8, 10, 11)],
                         ids=lambda r: f"{r.name}-{''.join('RP-'[s] for s in r.sigma)}")
def test_bounds_hold_for_sampled_displacements(robot):
    kinds = robot.sigma[robot.joint_frames]
    rng = np.random.default_rng(3)
    angles = rng.uniform(-np.pi, np.pi, (30, int(np.sum(kinds == 0))))
    b = polynomial_bounds(robot, angles=angles)
    p = int(np.sum(kinds == 1))
    for scale in (0.1, 3.0, 300.0):
        d = rng.normal(size=(30, p)) * scale
        q = _configs(robot, angles, d)
        nd = np.linalg.norm(d, axis=-1)
        u = rng.normal(size=(30, robot.n))
        u /= np.linalg.norm(u, axis=-1, keepdims=True)
        A = rd.inertia_matrix(robot, q)
        C = rd.coriolis_matrix(robot, q, u)
        Q = rd.gravity_torques(robot, q)
        slack = 1 + 1e-10
        assert np.all(_norm(A) <= (b.k1 + b.k2 * nd + b.k3 * nd**2) * slack + 1e-12)
        assert np.all(_norm(A) >= b.k0 / slack)
        assert np.all(_norm(C) <= (b.k4 + b.k5 * nd + b.k5_quadratic * nd**2) * slack + 1e-12)
        assert np.all(np.linalg.norm(Q, axis=-1) <= (b.k6 + b.k7 * nd) * slack + 1e-12)


def test_single_prismatic_constants_are_the_growth_rates():
    """One prismatic joint: k3, k7 (and k5_quadratic) are max over θ of ‖A‖/d², ‖Q‖/d (‖C‖/d²) as d → ∞."""
    robot = rd.load("stanford")                                  # R R P R R R
    angles = np.random.default_rng(4).uniform(-np.pi, np.pi, (40, 5))
    b = polynomial_bounds(robot, angles=angles)
    d = 1e5
    q = _configs(robot, angles, np.full((40, 1), d))
    np.testing.assert_allclose(_norm(rd.inertia_matrix(robot, q)).max() / d**2, b.k3, rtol=1e-4)
    np.testing.assert_allclose(np.linalg.norm(rd.gravity_torques(robot, q), axis=-1).max() / d, b.k7, rtol=1e-4)
    # the centrifugal/Coriolis terms of the polar arm grow with d², beyond De Luca's (k4 + k5‖q‖)‖q̇‖
    C_growth = _norm(rd.coriolis_matrix(robot, q, (np.eye(6)[0] + np.eye(6)[1]) / np.sqrt(2))) / d**2
    assert b.k5_quadratic > 0.1 and 0.1 * b.k5_quadratic < C_growth.max() <= b.k5_quadratic * (1 + 1e-9)


def test_revolute_robot_has_constant_bounds():
    robot = rd.load("puma560")
    b = polynomial_bounds(robot, samples=200)
    assert b.k2 == b.k3 == b.k5 == b.k5_quadratic == b.k7 == 0.0 and b.prismatic == ()
    est = rd.analysis.dynamic_bounds(robot, samples=200)
    np.testing.assert_allclose(b.k1, est.alpha, rtol=0.05)       # both sampled maxima of ‖A‖
    np.testing.assert_allclose(b.k6, est.gamma, rtol=0.05)


def test_errors():
    with pytest.raises(InputError, match="angles"):
        polynomial_bounds(rd.load("stanford"), angles=np.zeros((3, 4)))
    with pytest.raises(InputError, match="samples"):
        polynomial_bounds(rd.load("stanford"), samples=0)
