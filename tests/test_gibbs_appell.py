"""Gibbs–Appell dynamics (Mata et al. 2002) against Newton–Euler and Pinocchio.

Agreement is measured as max|a − b| ≤ 1e-10 · max|b| (relative to the largest entry) in float64.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

import robodyn as rd
from robodyn.dynamics import gibbs_appell as ga
from robodyn.dynamics import newton_euler as ne
from tests.support.checks import assert_close, planar2r_closed_form, wrenches_for
from tests.support.pin_bridge import PinRobot
from tests.support.random_robots import random_robot, random_state, robots


def ne_inertia(robot, q):
    """Columns of A from Newton–Euler: A e_k = Γ_rigid(q, 0, e_k, g = 0) + Ia e_k ([9.97])."""
    n = robot.n
    return np.stack([ne.rnea(robot, q, np.zeros(n), np.eye(n)[k], np.zeros(3)) for k in range(n)], -1)


def pin_inertia(pr, q):
    """Pinocchio's inertia matrix (the bridge adds joints depth-first, as pin.crba needs on trees)."""
    return pr.crba(q)


@given(robots)
def test_inverse_dynamics_matches_newton_euler_and_pinocchio(robot):
    q, qd, qdd = random_state(robot, 1)
    W = wrenches_for(robot, 1)
    tau = ga.inverse_dynamics(robot, q, qd, qdd, wrenches=W)
    assert_close(tau, ne.inverse_dynamics(robot, q, qd, qdd, wrenches=W))
    friction = ne.friction_torques(robot, qd)
    assert_close(tau - friction, PinRobot(robot).rnea(q, qd, qdd, W))


@given(robots)
def test_inertia_matrix_matches_newton_euler_and_pinocchio(robot):
    q, _, _ = random_state(robot, 2)
    D = ga.inertia_matrix(robot, q)
    assert_close(D, ne_inertia(robot, q))
    assert_close(D, pin_inertia(PinRobot(robot), q))
    assert_close(D, np.swapaxes(D, -1, -2), rtol=0)
    assert np.all(np.linalg.eigvalsh(D) > 0)


@given(robots)
def test_forward_dynamics_matches_pinocchio_aba_and_round_trips(robot):
    q, qd, tau = random_state(robot, 3)
    W = wrenches_for(robot, 3)
    qdd = ga.forward_dynamics(robot, q, qd, tau, wrenches=W)
    pr = PinRobot(robot)
    friction = ne.friction_torques(robot, qd)
    assert_close(qdd, pr.aba(q, qd, tau - friction, W))
    assert_close(ne.inverse_dynamics(robot, q, qd, qdd, wrenches=W), tau)


def test_forward_dynamics_without_wrenches_matches_aba():
    robot = random_robot(11, nf=7, tree=True, fixed=True)
    q, qd, tau = random_state(robot, 11)
    qdd = ga.forward_dynamics(robot, q, qd, tau)
    assert_close(qdd, PinRobot(robot).aba(q, qd, tau - ne.friction_torques(robot, qd)))


@pytest.mark.parametrize("name", rd.list_robots())
def test_builtin_robots(name):
    robot = rd.load(name)
    q, qd, qdd = random_state(robot, 4)
    pr = PinRobot(robot)
    tau = rd.inverse_dynamics(robot, q, qd, qdd, method="gibbs_appell")
    assert_close(tau, ne.inverse_dynamics(robot, q, qd, qdd))
    assert_close(tau - ne.friction_torques(robot, qd), pr.rnea(q, qd, qdd))
    D = rd.inertia_matrix(robot, q, method="gibbs_appell")
    assert_close(D, pin_inertia(pr, q))
    assert_close(rd.forward_dynamics(robot, q, qd, tau, method="gibbs_appell"), qdd)


def test_two_link_closed_form():
    """Planar 2R with point-free uniform rods: the textbook inertia matrix and the gravity torques."""
    robot = rd.load("planar2r")
    q = np.array([0.3, -1.1])
    D, G = planar2r_closed_form(q)
    assert_close(ga.inertia_matrix(robot, q), D)
    assert_close(ga.inverse_dynamics(robot, q, np.zeros(2), np.zeros(2)), G)


def test_batch_equals_loop():
    robot = random_robot(21, nf=6, tree=True, fixed=True)
    q, qd, qdd = random_state(robot, 21, batch=(3, 2))
    W = wrenches_for(robot, 21, batch=(3, 2))
    tau = ga.inverse_dynamics(robot, q, qd, qdd, wrenches=W)
    D = ga.inertia_matrix(robot, q)
    acc = ga.forward_dynamics(robot, q, qd, tau, wrenches=W)
    assert tau.shape == (3, 2, robot.n) and D.shape == (3, 2, robot.n, robot.n) and acc.shape == (3, 2, robot.n)
    for i in range(3):
        for j in range(2):
            assert_close(tau[i, j], ga.inverse_dynamics(robot, q[i, j], qd[i, j], qdd[i, j], wrenches=W[i, j]), rtol=1e-14)
            assert_close(D[i, j], ga.inertia_matrix(robot, q[i, j]), rtol=1e-14)
            assert_close(acc[i, j], ga.forward_dynamics(robot, q[i, j], qd[i, j], tau[i, j], wrenches=W[i, j]), rtol=1e-12)


def test_blocks_of_states_equal_single_states():
    """More states than one block of the component recursions (robodyn.kinematics.BLOCK), gravity per sample."""
    from robodyn.kinematics import BLOCK

    robot = random_robot(25, nf=6, tree=True, fixed=True)
    q, qd, qdd = random_state(robot, 25, batch=(BLOCK + 3,))
    g = np.random.default_rng(25).normal(0.0, 5.0, (BLOCK + 3, 3))
    tau = ga.inverse_dynamics(robot, q, qd, qdd, gravity=g)
    assert_close(tau, ne.inverse_dynamics(robot, q, qd, qdd, gravity=g))
    D = ga.inertia_matrix(robot, q)
    acc = ga.forward_dynamics(robot, q, qd, tau, gravity=g)
    assert_close(acc, qdd, rtol=1e-9)
    for i in (0, BLOCK - 1, BLOCK, BLOCK + 2):
        assert_close(tau[i], ga.inverse_dynamics(robot, q[i], qd[i], qdd[i], gravity=g[i]), rtol=1e-14)
        assert_close(D[i], ga.inertia_matrix(robot, q[i]), rtol=1e-14)
        assert_close(acc[i], ga.forward_dynamics(robot, q[i], qd[i], tau[i], gravity=g[i]), rtol=1e-12)


def test_gravity_broadcasts_per_sample():
    robot = random_robot(22, nf=4)
    q, qd, qdd = random_state(robot, 22, batch=(2,))
    g = np.array([[0.0, 0.0, -9.81], [3.0, 1.0, 0.0]])
    tau = ga.inverse_dynamics(robot, q, qd, qdd, gravity=g)
    for i in range(2):
        assert_close(tau[i], ne.inverse_dynamics(robot, q[i], qd[i], qdd[i], gravity=g[i]))


def test_float32_in_float32_out_computed_in_float32():
    robot = random_robot(23, nf=6, prismatic=True, fixed=True)
    q, qd, qdd = (x.astype(np.float32) for x in random_state(robot, 23, batch=(5,)))
    tau = ga.inverse_dynamics(robot, q, qd, qdd)
    D = ga.inertia_matrix(robot, q)
    acc = ga.forward_dynamics(robot, q, qd, tau)
    assert tau.dtype == D.dtype == acc.dtype == np.float32
    q64, qd64, qdd64 = (x.astype(np.float64) for x in (q, qd, qdd))
    ref_tau = ga.inverse_dynamics(robot, q64, qd64, qdd64)
    ref_D = ga.inertia_matrix(robot, q64)
    # Same (float32-representable) inputs: the difference is float32 round-off, not zero and not more.
    for a, ref in ((tau, ref_tau), (D, ref_D)):
        err = np.max(np.abs(a - ref)) / np.max(np.abs(ref))
        assert 1e-12 < err < 1e-4


def test_input_errors():
    robot = random_robot(24, nf=3)
    q = np.zeros(robot.n)
    with pytest.raises(rd.InputError, match="qd"):
        ga.inverse_dynamics(robot, q, np.zeros(robot.n + 1), q)
    with pytest.raises(rd.InputError, match="wrenches"):
        ga.inverse_dynamics(robot, q, q, q, wrenches=np.zeros((robot.nf, 3)))
    with pytest.raises(rd.InputError, match="tau"):
        ga.forward_dynamics(robot, q, q, [np.nan] * robot.n)


def test_massless_joint_is_reported():
    robot = rd.Robot(name="bare", sigma=[0, 0], d=[0, 1.0], params=np.zeros((2, 10)))
    with pytest.raises(rd.ModelError, match="positive definite"):
        ga.forward_dynamics(robot, np.zeros(2), np.zeros(2), np.ones(2))
    with pytest.raises(rd.ModelError, match="positive definite"):  # a batch: the pivot test of L D Lᵀ
        ga.forward_dynamics(robot, np.zeros((3, 2)), np.zeros((3, 2)), np.ones((3, 2)))
