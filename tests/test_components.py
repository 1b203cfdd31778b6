"""Component-wise helpers of robodyn.spatial against NumPy, and the state blocks of the component recursions."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import robodyn as rd
from robodyn import kinematics, spatial
from robodyn.dynamics import composite, recursive, walker_orin
from robodyn.model.inertia import skew
from tests.support.random_robots import random_robot, random_state

angles = st.floats(-np.pi, np.pi) | st.sampled_from([0.0, np.pi / 2, -np.pi / 2, np.pi])


def six(S):
    return tuple(S[a, b] for a, b in spatial.UPPER)


@given(gamma=angles, alpha=angles, theta=angles, seed=st.integers(0, 2**16))
def test_rotations_of_tensors_and_matrices(gamma, alpha, theta, seed):
    """A S Aᵀ and A M Aᵀ for A = C Rot(z, θ), on float components and on (B,) arrays."""
    rng = np.random.default_rng(seed)
    C = spatial.rot_z(gamma) @ spatial.rot_x(alpha)
    A = C @ spatial.rot_z(theta)
    M = rng.normal(size=(3, 3))
    S = M + M.T
    c, s = np.cos(theta), np.sin(theta)
    np.testing.assert_allclose(spatial.sym_rotate(spatial.snap(C), c, s, six(S)), six(A @ S @ A.T), atol=1e-14)
    np.testing.assert_allclose(spatial.mat_rotate(spatial.snap(C), c, s, tuple(map(tuple, M))), A @ M @ A.T,
                               atol=1e-14)
    batch = rng.normal(size=(3, 3, 4))  # four matrices as components
    got = spatial.mat_rotate(spatial.snap(C), c, s, tuple(tuple(row) for row in batch))
    np.testing.assert_allclose(np.array(got), np.einsum("ij,jkb,lk->ilb", A, batch, A), atol=1e-14)


def test_vector_and_tensor_products():
    rng = np.random.default_rng(1)
    M, u, v = rng.normal(size=(3, 3)), rng.normal(size=3), rng.normal(size=3)
    S = M + M.T
    rows = tuple(map(tuple, M))
    np.testing.assert_allclose(spatial.mat_mv(rows, tuple(v)), M @ v, rtol=1e-15)
    np.testing.assert_allclose(spatial.mat_tmv(rows, tuple(v)), M.T @ v, rtol=1e-15)
    np.testing.assert_allclose(spatial.sym_mv(six(S), tuple(v)), S @ v, rtol=1e-15)
    np.testing.assert_allclose(spatial.sym_outer(tuple(u), tuple(v)), six(np.outer(u, v) + np.outer(v, u)), rtol=1e-15)
    np.testing.assert_allclose(spatial.sym_rows(six(S)), S)
    assert spatial.vdot(tuple(u), tuple(v)) == pytest.approx(u @ v, rel=1e-15)
    assert spatial.c_div(0.0, np.zeros(2)) == 0.0  # an exact zero numerator is not divided
    np.testing.assert_array_equal(spatial.c_div(np.array([1.0, 2.0]), 2.0), [0.5, 1.0])


def test_local_transforms_per_dtype_and_constant_ones_are_the_robots_read_only_data():
    robot = random_robot(3, nf=4, fixed=True)
    q = random_state(robot, 0, ())[0]
    for dtype in (np.float64, np.float32):
        AP = kinematics.local_transforms(robot, q.astype(dtype), dtype)
        assert all(A.dtype == dtype and P.dtype == dtype for A, P in AP)
    constant = [i for i in range(robot.nf) if robot.sigma[i] != 0]
    assert constant, "the test robot needs a prismatic or fixed frame"
    AP = kinematics.local_transforms(robot, q, np.float64)
    for i in constant:
        A = AP[i][0]
        assert A is robot.derived.transforms[i][2]  # ^{a}A_j of a prismatic or fixed frame: no per-call copy
        with pytest.raises(ValueError, match="read-only"):
            A[0, 0] = 1.0


def test_several_state_blocks_equal_one_state_at_a_time():
    """More states than kinematics.BLOCK, with per-state gravity and wrenches: every state is its own result."""
    robot = random_robot(21, nf=5, tree=True, fixed=True)
    size = kinematics.BLOCK + 3
    q, qd, tau = random_state(robot, 4, (size,))
    rng = np.random.default_rng(0)
    g = rng.normal(size=(size, 3))
    W = rng.normal(size=(size, robot.nf, 6))
    A = composite.inertia_matrix(robot, q)
    A_wo = walker_orin.inertia_matrix(robot, q)
    qdd = recursive.forward_dynamics(robot, q, qd, tau, wrenches=W, gravity=g)
    for b in (0, kinematics.BLOCK - 1, kinematics.BLOCK, size - 1):
        np.testing.assert_allclose(A[b], composite.inertia_matrix(robot, q[b]), rtol=0, atol=1e-13)
        np.testing.assert_allclose(A_wo[b], A[b], rtol=0, atol=1e-13)
        np.testing.assert_allclose(qdd[b], recursive.forward_dynamics(robot, q[b], qd[b], tau[b], wrenches=W[b],
                                                                      gravity=g[b]), rtol=0, atol=1e-11)
    cholesky = rd.forward_dynamics(robot, q, qd, tau, wrenches=W, gravity=g, method="cholesky")
    np.testing.assert_allclose(qdd, cholesky, rtol=0, atol=1e-10 * np.abs(qdd).max())


def test_composite_links_arrays_match_the_parallel_axis_theorem():
    """composite_links of a two-link chain: the composite of link 1 is link 1 plus link 2 moved by ^1T_2 ([9.12])."""
    robot = random_robot(8, nf=2, prismatic=False)
    q = np.array([[0.3, -0.7], [1.1, 0.4]])
    AP, J, MS, M = composite.composite_links(robot, q, np.float64)
    A, P = AP[1]
    s = np.einsum("...ij,j->...i", A, robot.MS[1])
    Ph, sh = skew(P), skew(s)
    expected = robot.J[0] + A @ robot.J[1] @ np.swapaxes(A, -1, -2) - Ph @ sh - sh @ Ph - robot.M[1] * Ph @ Ph
    np.testing.assert_allclose(J[0], expected, rtol=1e-13)
    np.testing.assert_allclose(MS[0], robot.MS[0] + s + robot.M[1] * P, rtol=1e-13)
    assert M[0] == pytest.approx(robot.M[0] + robot.M[1]) and J[1].shape == (3, 3) and J[0].shape == (2, 3, 3)
