"""Inertia matrix by composite links: Pinocchio crba, closed form of the planar 2R, properties, batching."""

import numpy as np
import pytest
from hypothesis import given

import robodyn as rd
from robodyn.dynamics import composite
from tests.support.pin_compare import assert_rel, pin_crba
from tests.support.random_robots import random_robot, random_state, robots



@given(robots)
def test_equals_pinocchio_crba_random_robots(robot):
    q, _, _ = random_state(robot, 7, (3,))
    A = composite.inertia_matrix(robot, q)
    for b in range(3):
        assert_rel(A[b], pin_crba(robot, q[b]))


@pytest.mark.parametrize("name", rd.list_robots())
def test_equals_pinocchio_crba_builtin_robots(name):
    robot = rd.load(name)
    q, _, _ = random_state(robot, 3, (4,))
    A = rd.inertia_matrix(robot, q, method="composite")
    for b in range(4):
        assert_rel(A[b], pin_crba(robot, q[b]))


def test_tree_breadth_first_numbering():
    """A tree numbered breadth-first (joints of one subtree not contiguous) still gives Pinocchio's matrix."""
    robot = rd.Robot(
        name="tree", sigma=[0, 0, 0, 1], antecedent=[0, 0, 1, 1], alpha=[0, np.pi / 2, -np.pi / 2, 0.3],
        d=[0, 0.4, 0.2, -0.3], r=[0, 0.1, 0.5, 0.2], gamma=[0, 0.4, 1.0, -0.5], b=[0, 0.2, 0.1, 0.3],
        params=[random_robot(i, nf=1).params[0] for i in range(4)], Ia=[0.1, 0.2, 0.0, 0.3],
    )
    q = np.array([0.3, -1.2, 0.7, 0.25])
    A = composite.inertia_matrix(robot, q)
    assert_rel(A, pin_crba(robot, q))
    assert A[1, 3] == 0 and A[2, 3] == 0 and A[1, 2] == 0  # different branches: no inertial coupling


def test_planar2r_closed_form():
    """De Luca's 2R: a11 = I1 + I2 + m1 d1² + m2 (l1² + d2² + 2 l1 d2 c2), a12 = I2 + m2 (d2² + l1 d2 c2), a22 = I2 + m2 d2²."""
    robot = rd.load("planar2r")
    q = np.array([[0.3, 0.0], [-1.0, 1.2], [2.0, -2.5]])
    I, m, d, l1 = 1 / 12, 1.0, 0.5, 1.0
    c2 = np.cos(q[:, 1])
    a11 = 2 * I + m * d**2 + m * (l1**2 + d**2 + 2 * l1 * d * c2)
    a12 = I + m * (d**2 + l1 * d * c2)
    a22 = np.full_like(c2, I + m * d**2)
    expected = np.stack([np.stack([a11, a12], -1), np.stack([a12, a22], -1)], -2)
    assert_rel(composite.inertia_matrix(robot, q), expected, 1e-14)


@given(robots)
def test_symmetric_positive_definite_and_rotor_diagonal(robot):
    q, _, _ = random_state(robot, 11, (5,))
    A = composite.inertia_matrix(robot, q)
    np.testing.assert_array_equal(A, np.swapaxes(A, -1, -2))
    assert np.all(np.linalg.eigvalsh(A) > 0)
    A0 = composite.inertia_matrix(robot.replace(Ia=np.zeros(robot.nf)), q)
    assert_rel(A - A0, np.broadcast_to(np.diag(robot.Ia[robot.joint_frames]), A.shape), 1e-14)


def test_batch_equals_loop_and_float32():
    robot = random_robot(5, nf=6, tree=True, fixed=True)
    q, _, _ = random_state(robot, 1, (2, 3))
    A = composite.inertia_matrix(robot, q)
    assert A.shape == (2, 3, robot.n, robot.n)
    for i in range(2):
        for j in range(3):
            np.testing.assert_allclose(A[i, j], composite.inertia_matrix(robot, q[i, j]), rtol=0, atol=1e-14)
    A32 = composite.inertia_matrix(robot, q.astype(np.float32))
    assert A32.dtype == np.float32
    np.testing.assert_allclose(A32, A, rtol=0, atol=1e-4 * np.abs(A).max())


def test_bad_q_names_argument():
    robot = rd.load("planar2r")
    with pytest.raises(rd.InputError, match="'q' has shape \\(3,\\).*\\(\\.\\.\\., 2\\)"):
        rd.inertia_matrix(robot, np.zeros(3))
    with pytest.raises(rd.InputError, match="NaN"):
        rd.inertia_matrix(robot, [np.nan, 0.0])
    with pytest.raises(rd.InputError, match="unknown method 'crb'.*composite, crba, walker_orin"):
        rd.inertia_matrix(robot, [0.0, 0.0], method="crb")


def test_fixed_frames_at_base_between_and_tip():
    params = [random_robot(i, nf=1).params[0] for i in range(5)]
    robot = rd.Robot(name="fixed", sigma=[2, 0, 2, 1, 2], alpha=[0.5, -np.pi / 2, 0.2, np.pi / 2, 1.0],
                     d=[0.1, 0.3, 0.2, 0.0, 0.4], r=[0.2, 0.0, 0.3, 0.1, -0.2], params=params, Ia=[0, 0.2, 0, 0.1, 0])
    q = np.array([[0.4, 0.3], [-2.0, 1.1]])
    A = rd.inertia_matrix(robot, q)
    for b in range(2):
        assert_rel(A[b], pin_crba(robot, q[b]))
        assert_rel(rd.inertia_matrix(robot, q[b], method="walker_orin"), A[b])
