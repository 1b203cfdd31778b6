"""Inertia matrix from Newton–Euler columns (Walker–Orin, [9.97]) against Pinocchio and composite links."""

import numpy as np
import pytest
from hypothesis import given

import robodyn as rd
from robodyn.dynamics import composite, walker_orin
from tests.support.pin_compare import assert_rel, pin_crba
from tests.support.random_robots import random_robot, random_state, robots


@given(robots)
def test_equals_pinocchio_crba_and_composite(robot):
    q, _, _ = random_state(robot, 5, (3,))
    A = walker_orin.inertia_matrix(robot, q)
    assert_rel(A, composite.inertia_matrix(robot, q))
    for b in range(3):
        assert_rel(A[b], pin_crba(robot, q[b]))


@pytest.mark.parametrize("name", rd.list_robots())
def test_builtin_robots(name):
    robot = rd.load(name)
    q, _, _ = random_state(robot, 4, (3,))
    A = rd.inertia_matrix(robot, q, method="walker_orin")
    for b in range(3):
        assert_rel(A[b], pin_crba(robot, q[b]))


def test_columns_are_inverse_dynamics_without_gravity_velocity_friction():
    """Column i = Γ(q, 0, u_i) with g = 0 and friction removed ([9.97]); friction and gravity do not leak in."""
    robot = random_robot(3, nf=5, fixed=True, friction=True)
    q, _, _ = random_state(robot, 2)
    A = walker_orin.inertia_matrix(robot, q)
    z = np.zeros(robot.n)
    for i in range(robot.n):
        u = np.eye(robot.n)[i]
        column = rd.inverse_dynamics(robot, q, z, u, gravity=np.zeros(3)) - rd.friction_torques(robot, z)
        assert_rel(A[:, i], column, 1e-13)


def test_batch_equals_loop_and_float32():
    robot = random_robot(8, nf=5, tree=True)
    q, _, _ = random_state(robot, 1, (4, 2))
    A = walker_orin.inertia_matrix(robot, q)
    assert A.shape == (4, 2, robot.n, robot.n)
    for i in range(4):
        for j in range(2):
            np.testing.assert_allclose(A[i, j], walker_orin.inertia_matrix(robot, q[i, j]), rtol=0, atol=1e-14)
    A32 = walker_orin.inertia_matrix(robot, q.astype(np.float32))
    assert A32.dtype == np.float32
    np.testing.assert_allclose(A32, A, rtol=0, atol=1e-4 * np.abs(A).max())


def test_bad_q():
    with pytest.raises(rd.InputError, match="'q'"):
        walker_orin.inertia_matrix(rd.load("planar2r"), np.zeros((3, 4)))
