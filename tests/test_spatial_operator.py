"""Spatial-operator dynamics (Rodriguez–Kozłowski) against Newton–Euler and Pinocchio.

Agreement is measured as max|a − b| ≤ 1e-10 · max|b| (relative to the largest entry) in float64.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

import robodyn as rd
from robodyn.dynamics import newton_euler as ne
from robodyn.dynamics import spatial_operator as so
from tests.support.checks import assert_close, planar2r_closed_form, wrenches_for
from tests.support.pin_bridge import PinRobot
from tests.support.random_robots import random_robot, random_state, robots


@given(robots)
def test_inverse_dynamics_matches_newton_euler_and_pinocchio(robot):
    q, qd, qdd = random_state(robot, 1)
    W = wrenches_for(robot, 1)
    tau = so.inverse_dynamics(robot, q, qd, qdd, wrenches=W)
    assert_close(tau, ne.inverse_dynamics(robot, q, qd, qdd, wrenches=W))
    assert_close(tau - ne.friction_torques(robot, qd), PinRobot(robot).rnea(q, qd, qdd, W))


@given(robots)
def test_kalman_forward_dynamics_matches_pinocchio_aba_and_round_trips(robot):
    q, qd, tau = random_state(robot, 3)
    W = wrenches_for(robot, 3)
    qdd = so.forward_dynamics(robot, q, qd, tau, wrenches=W)
    pr = PinRobot(robot)
    assert_close(qdd, pr.aba(q, qd, tau - ne.friction_torques(robot, qd), W))
    assert_close(ne.inverse_dynamics(robot, q, qd, qdd, wrenches=W), tau)
    assert_close(so.inverse_dynamics(robot, q, qd, qdd, wrenches=W), tau)


def test_forward_dynamics_without_wrenches_matches_aba():
    robot = random_robot(11, nf=7, tree=True, fixed=True)
    q, qd, tau = random_state(robot, 11)
    qdd = so.forward_dynamics(robot, q, qd, tau)
    assert_close(qdd, PinRobot(robot).aba(q, qd, tau - ne.friction_torques(robot, qd)))


def test_kalman_and_gibbs_appell_forward_dynamics_agree():
    from robodyn.dynamics import gibbs_appell as ga

    robot = random_robot(12, nf=7, fixed=True)
    q, qd, tau = random_state(robot, 12, batch=(4,))
    assert_close(so.forward_dynamics(robot, q, qd, tau), ga.forward_dynamics(robot, q, qd, tau))


@pytest.mark.parametrize("name", rd.list_robots())
def test_builtin_robots(name):
    robot = rd.load(name)
    q, qd, qdd = random_state(robot, 4)
    tau = rd.inverse_dynamics(robot, q, qd, qdd, method="spatial_operator")
    assert_close(tau, ne.inverse_dynamics(robot, q, qd, qdd))
    assert_close(tau - ne.friction_torques(robot, qd), PinRobot(robot).rnea(q, qd, qdd))
    assert_close(rd.forward_dynamics(robot, q, qd, tau, method="spatial_operator"), qdd)


def test_planar_two_link_free_fall():
    """Planar 2R at rest, zero torque: q̈ = −D⁻¹ G with the textbook D and G."""
    robot = rd.load("planar2r")
    q = np.array([0.3, -1.1])
    D, G = planar2r_closed_form(q)
    assert_close(so.forward_dynamics(robot, q, np.zeros(2), np.zeros(2)), -np.linalg.solve(D, G))


def test_batch_equals_loop():
    robot = random_robot(21, nf=6, tree=True, fixed=True)
    q, qd, qdd = random_state(robot, 21, batch=(3, 2))
    W = wrenches_for(robot, 21, batch=(3, 2))
    tau = so.inverse_dynamics(robot, q, qd, qdd, wrenches=W)
    acc = so.forward_dynamics(robot, q, qd, tau, wrenches=W)
    assert tau.shape == acc.shape == (3, 2, robot.n)
    for i in range(3):
        for j in range(2):
            assert_close(tau[i, j], so.inverse_dynamics(robot, q[i, j], qd[i, j], qdd[i, j], wrenches=W[i, j]), rtol=1e-14)
            assert_close(acc[i, j], so.forward_dynamics(robot, q[i, j], qd[i, j], tau[i, j], wrenches=W[i, j]), rtol=1e-12)


def test_gravity_broadcasts_per_sample():
    robot = random_robot(22, nf=4)
    q, qd, tau = random_state(robot, 22, batch=(2,))
    g = np.array([[0.0, 0.0, -9.81], [3.0, 1.0, 0.0]])
    acc = so.forward_dynamics(robot, q, qd, tau, gravity=g)
    for i in range(2):
        assert_close(acc[i], so.forward_dynamics(robot, q[i], qd[i], tau[i], gravity=g[i]), rtol=1e-14)
        assert_close(ne.inverse_dynamics(robot, q[i], qd[i], acc[i], gravity=g[i]), tau[i])


def test_float32_in_float32_out_computed_in_float32():
    robot = random_robot(23, nf=6, prismatic=True, fixed=True)
    q, qd, qdd = (x.astype(np.float32) for x in random_state(robot, 23, batch=(5,)))
    tau = so.inverse_dynamics(robot, q, qd, qdd)
    acc = so.forward_dynamics(robot, q, qd, tau)
    assert tau.dtype == acc.dtype == np.float32
    q64, qd64, qdd64, tau64 = (x.astype(np.float64) for x in (q, qd, qdd, tau))
    # Same (float32-representable) inputs: the difference is float32 round-off, not zero and not more.
    for a, ref in ((tau, so.inverse_dynamics(robot, q64, qd64, qdd64)), (acc, so.forward_dynamics(robot, q64, qd64, tau64))):
        err = np.max(np.abs(a - ref)) / np.max(np.abs(ref))
        assert 1e-12 < err < 1e-4


def test_input_errors():
    robot = random_robot(24, nf=3)
    q = np.zeros(robot.n)
    with pytest.raises(rd.InputError, match="qdd"):
        so.inverse_dynamics(robot, q, q, np.zeros((2, robot.n + 1)))
    with pytest.raises(rd.InputError, match="gravity"):
        so.forward_dynamics(robot, q, q, q, gravity=[0, 0])


def test_massless_joint_is_reported():
    robot = rd.Robot(name="bare", sigma=[0, 0], d=[0, 1.0], params=np.zeros((2, 10)))
    with pytest.raises(rd.ModelError, match="joint j2"):
        so.forward_dynamics(robot, np.zeros(2), np.zeros(2), np.ones(2))
