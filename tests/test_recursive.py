"""Recursive O(n) direct dynamics (§9.7.2): Pinocchio aba, inverse of Newton–Euler, trees, batching."""

import numpy as np
import pytest
from hypothesis import given

import robodyn as rd
from robodyn.dynamics import composite, recursive
from tests.support.pin_compare import assert_rel, pin_aba
from tests.support.random_robots import random_robot, random_state, robots


def no_friction(robot):
    z = np.zeros(robot.nf)
    return robot.replace(Fc=z, Fv=z, Foff=z, Fst=z)


@given(robots)
def test_equals_pinocchio_aba_with_wrenches(robot):
    robot = no_friction(robot)
    q, qd, tau = random_state(robot, 9, (2,))
    W = np.random.default_rng(robot.nf).normal(size=(2, robot.nf, 6))
    qdd = recursive.forward_dynamics(robot, q, qd, tau, wrenches=W)
    for b in range(2):
        assert_rel(qdd[b], pin_aba(robot, q[b], qd[b], tau[b], W[b]))
    assert_rel(recursive.forward_dynamics(robot, q[0], qd[0], tau[0]), pin_aba(robot, q[0], qd[0], tau[0]))


@pytest.mark.parametrize("name", rd.list_robots())
def test_builtin_robots(name):
    robot = rd.load(name)
    q, qd, tau = random_state(robot, 6, (3,))
    qdd = rd.forward_dynamics(robot, q, qd, tau, method="recursive")
    free = no_friction(robot)
    for b in range(3):
        assert_rel(qdd[b], pin_aba(free, q[b], qd[b], tau[b] - rd.friction_torques(robot, qd[b])))


@given(robots)
def test_inverse_of_newton_euler_with_friction_and_gravity(robot):
    """inverse_dynamics(forward_dynamics(Γ)) = Γ, friction [9.106], wrenches and a gravity override included."""
    q, qd, tau = random_state(robot, 4, (3,))
    robot = robot.replace(Foff=0.3 * (robot.sigma != 2), Fst=np.where(robot.sigma != 2, 3.0, 0.0),
                          kst=np.where(robot.sigma != 2, 2.0, 0.0), Bst=np.where(robot.sigma != 2, 1.0, 0.0))
    W = np.random.default_rng(3).normal(size=(robot.nf, 6))
    g = np.array([1.0, -2.0, -9.0])
    qdd = recursive.forward_dynamics(robot, q, qd, tau, wrenches=W, gravity=g)
    assert_rel(rd.inverse_dynamics(robot, q, qd, qdd, wrenches=W, gravity=g), tau)


@given(robots)
def test_A_qdd_plus_H_equals_tau(robot):
    q, qd, tau = random_state(robot, 2, (2,))
    qdd = recursive.forward_dynamics(robot, q, qd, tau)
    H = rd.bias_torques(robot, q, qd)
    assert_rel(np.einsum("...ij,...j->...i", composite.inertia_matrix(robot, q), qdd) + H, tau)


def test_fixed_frames_only_chain():
    """Fixed frames between joints, at the base and at the tip (σ = 2 with mass): still Pinocchio's aba."""
    params = [random_robot(i, nf=1).params[0] for i in range(5)]
    robot = rd.Robot(name="fixed", sigma=[2, 0, 2, 1, 2], alpha=[0.5, -np.pi / 2, 0.2, np.pi / 2, 1.0],
                     d=[0.1, 0.3, 0.2, 0.0, 0.4], r=[0.2, 0.0, 0.3, 0.1, -0.2], params=params, Ia=[0, 0.2, 0, 0.1, 0])
    q, qd, tau = np.array([0.4, 0.3]), np.array([-1.0, 2.0]), np.array([3.0, -1.0])
    assert_rel(recursive.forward_dynamics(robot, q, qd, tau), pin_aba(robot, q, qd, tau))


def test_batch_equals_loop_and_float32():
    robot = random_robot(12, nf=6, tree=True, fixed=True)
    q, qd, tau = random_state(robot, 1, (3, 2))
    qdd = recursive.forward_dynamics(robot, q, qd, tau)
    assert qdd.shape == (3, 2, robot.n)
    for i in range(3):
        for j in range(2):
            np.testing.assert_allclose(qdd[i, j], recursive.forward_dynamics(robot, q[i, j], qd[i, j], tau[i, j]),
                                       rtol=0, atol=1e-12)
    f32 = recursive.forward_dynamics(robot, *(x.astype(np.float32) for x in (q, qd, tau)))
    assert f32.dtype == np.float32
    np.testing.assert_allclose(f32, qdd, rtol=0, atol=1e-3 * np.abs(qdd).max())
    # broadcasting: one state, many torques
    many = recursive.forward_dynamics(robot, q[0, 0], qd[0, 0], tau.reshape(6, -1))
    assert many.shape == (6, robot.n)
    expected = recursive.forward_dynamics(robot, q[0, 0], qd[0, 0], tau[0, 1])
    np.testing.assert_allclose(many[1], expected, rtol=0, atol=1e-12)


def test_bad_arguments():
    robot = rd.load("planar2r")
    with pytest.raises(rd.InputError, match="'tau' has shape \\(3,\\)"):
        rd.forward_dynamics(robot, [0, 0], [0, 0], [0, 0, 0])
    with pytest.raises(rd.InputError, match="'wrenches' has shape"):
        rd.forward_dynamics(robot, [0, 0], [0, 0], [0, 0], wrenches=np.zeros((3, 6)))
    with pytest.raises(rd.InputError, match="'gravity'"):
        rd.forward_dynamics(robot, [0, 0], [0, 0], [0, 0], gravity=[0, 1])


@pytest.mark.parametrize("method", ["recursive", "cholesky"])
def test_singular_model_raises_model_error(method):
    """A joint that moves only a massless link, without rotor inertia, has no direct model."""
    params = np.zeros((2, 10))
    params[0] = random_robot(1, nf=1).params[0]
    robot = rd.Robot(name="massless_tip", sigma=[0, 0], d=[0, 0.5], params=params)
    with pytest.raises(rd.ModelError, match="massless.*(Ia|rotor)"):
        rd.forward_dynamics(robot, [0.1, 0.2], [0, 0], [1, 1], method=method)
    fixed = robot.replace(Ia=[0.0, 0.01])
    qdd = rd.forward_dynamics(fixed, [0.1, 0.2], [0, 0], [1, 1], method=method)
    # the rotor inertia alone carries joint 2: the round trip through the inverse model gives Γ back
    np.testing.assert_allclose(rd.inverse_dynamics(fixed, [0.1, 0.2], [0, 0], qdd), [1, 1], rtol=1e-12)
    assert qdd[1] == pytest.approx(1 / 0.01, rel=1e-12)  # Γ2 = Ia2 q̈2 [9.94]: link 2 is massless
