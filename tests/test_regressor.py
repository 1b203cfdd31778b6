"""Regressor Γ = D K [9.36], energy functions [9.44], Table 9.1 and the recursion [9.45]."""

import numpy as np
import pinocchio as pin
import pytest
import sympy
from hypothesis import given

import robodyn as rd
from robodyn.dynamics.newton_euler import friction_torques, inverse_dynamics
from robodyn.errors import InputError
from robodyn.kinematics import ancestors, base_poses, link_velocities
from robodyn.model.inertia import six_from_tensor, skew, tensor_from_six
from robodyn.parameters import (
    energy_functions,
    energy_recursion,
    frame_lambda,
    lambda_matrix,
    link_wrench_matrix,
    regressor,
    standard_parameter_names,
    standard_parameter_vector,
)
from robodyn.spatial import rot_x, rot_z
from tests.support.pin_bridge import PinRobot
from tests.support.random_robots import random_robot, random_state, robots

#: Pinocchio's [m, mc_x, mc_y, mc_z, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] as indices of XX XY XZ YY YZ ZZ MX MY MZ M
PIN_ORDER = [9, 6, 7, 8, 0, 1, 3, 2, 4, 5]


def pin_order(pr, x):
    """robodyn joint order -> Pinocchio's (the bridge may number the joints depth-first, ``perm``)."""
    perm = getattr(pr, "perm", np.arange(len(x)))
    y = np.empty(len(x))
    y[perm] = x
    return y


def rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


@given(robots)
def test_regressor_times_parameters_is_inverse_dynamics(robot):
    q, qd, qdd = random_state(robot, 1, (4,))
    D = regressor(robot, q, qd, qdd)
    assert D.shape == (4, robot.n, 11 * robot.nf + 3 * robot.n)
    assert rel(D @ standard_parameter_vector(robot), inverse_dynamics(robot, q, qd, qdd)) < 1e-12


def test_regressor_without_friction_and_batch_equals_single():
    robot = random_robot(5, nf=6, tree=True, fixed=True)
    q, qd, qdd = random_state(robot, 2, (3, 2))
    D = regressor(robot, q, qd, qdd, friction=False)
    assert D.shape == (3, 2, robot.n, 11 * robot.nf)
    tau = inverse_dynamics(robot, q, qd, qdd) - friction_torques(robot, qd)
    assert rel(D @ standard_parameter_vector(robot, friction=False), tau) < 1e-12
    np.testing.assert_array_equal(D[1, 0], regressor(robot, q[1, 0], qd[1, 0], qdd[1, 0], friction=False))


def test_regressor_float32_and_gravity_override():
    robot = random_robot(8, nf=4)
    q, qd, qdd = (a.astype(np.float32) for a in random_state(robot, 3, (5,)))
    assert regressor(robot, q, qd, qdd).dtype == np.float32
    g = np.array([0.0, 0.0, 0.0])
    D = regressor(robot, q.astype(float), qd.astype(float), qdd.astype(float), gravity=g)
    tau = rd.inverse_dynamics(robot, q.astype(float), qd.astype(float), qdd.astype(float), gravity=g)
    assert rel(D @ standard_parameter_vector(robot), tau) < 1e-12


def test_friction_and_rotor_columns():
    robot = random_robot(11, nf=3, prismatic=False)
    q, qd, qdd = random_state(robot, 4)
    D = regressor(robot, q, qd, qdd)
    names = standard_parameter_names(robot)
    assert names[:11] == ["XX1", "XY1", "XZ1", "YY1", "YZ1", "ZZ1", "MX1", "MY1", "MZ1", "M1", "Ia1"]
    assert names[33:] == ["Fc1", "Fv1", "Foff1", "Fc2", "Fv2", "Foff2", "Fc3", "Fv3", "Foff3"]
    np.testing.assert_array_equal(D[:, [10, 21, 32]], np.diag(qdd))
    np.testing.assert_array_equal(D[:, 33::3], np.diag(np.sign(qd)))
    np.testing.assert_array_equal(D[:, 34::3], np.diag(qd))
    np.testing.assert_array_equal(D[:, 35::3], np.eye(3))


def test_bad_input_names_the_argument():
    robot = random_robot(1, nf=3)
    with pytest.raises(InputError, match="qd"):
        regressor(robot, np.zeros(3), np.zeros(2), np.zeros(3))


def test_link_wrench_matrix_is_newton_euler_about_origin():
    rng = np.random.default_rng(0)
    w, wd, Vd, K = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3), rng.normal(size=10)
    J, MS, M = tensor_from_six(K[:6]), K[6:9], K[9]
    F = M * Vd + np.cross(wd, MS) + np.cross(w, np.cross(w, MS))  # [9.71]
    N = J @ wd + np.cross(w, J @ w) + np.cross(MS, Vd)  # [9.72]
    np.testing.assert_allclose(link_wrench_matrix(w, wd, Vd) @ K, np.concatenate([F, N]), rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("seed", [0, 3, 12, 24])
def test_pinocchio_joint_torque_regressor_agrees(seed):
    """Pinocchio's blocks (one per joint body, about the joint origin) are robodyn's blocks of the moving frames;
    a fixed frame merged into its moving ancestor's body has the block of that frame times ^{a}λ_f [9.46]."""
    robot = random_robot(seed, nf=6, tree=seed % 2 == 0, fixed=True)
    pr = PinRobot(robot)
    q, qd, qdd = random_state(robot, seed)
    Y = pin.computeJointTorqueRegressor(pr.model, pr.data, *(pin_order(pr, x) for x in (q, qd, qdd)))
    Y = Y[getattr(pr, "perm", np.arange(robot.n))]  # rows in robodyn's joint order
    D = regressor(robot, q, qd, qdd, friction=False)
    for i in range(robot.nf):
        block = D[:, 11 * i : 11 * i + 10]
        # walk up through fixed frames to the moving frame whose body holds link i
        lam, k = np.eye(10), i
        while robot.sigma[k] == 2 and robot.antecedent[k] > 0:
            lam = frame_lambda(robot, k) @ lam
            k = robot.antecedent[k] - 1
        if robot.sigma[k] == 2:  # fixed to the base: no effect at all
            assert np.abs(block).max() == 0
            continue
        jid = pr.joint_of[k]
        pin_block = Y[:, 10 * (jid - 1) : 10 * jid]
        np.testing.assert_allclose(block, (D[:, 11 * k : 11 * k + 10] @ lam), rtol=1e-12, atol=1e-11)
        np.testing.assert_allclose(D[:, 11 * k : 11 * k + 10][:, PIN_ORDER], pin_block, rtol=1e-10, atol=1e-10)


# ---- Table 9.1, [9.44]–[9.47] -----------------------------------------------------------------


def transformed_parameters(A, P, K):
    """Definition [9.46]: the parameters of a body given in R_j, expressed in R_{j-1} about O_{j-1}."""
    J, MS, M = tensor_from_six(K[:6]), K[6:9], K[9]
    S = A @ MS
    Jp = A @ J @ A.T - M * skew(P) @ skew(P) - skew(P) @ skew(S) - skew(S) @ skew(P)  # parallel axes
    return np.concatenate([six_from_tensor(Jp), S + M * P, [M]])


def test_table_9_1_is_the_parameter_transformation():
    rng = np.random.default_rng(1)
    for alpha, d, theta, r in rng.uniform(-3, 3, (10, 4)):
        A = rot_x(alpha) @ rot_z(theta)
        P = np.array([d, -np.sin(alpha) * r, np.cos(alpha) * r])
        K = rng.normal(size=10)
        np.testing.assert_allclose(lambda_matrix(alpha, d, theta, r) @ K, transformed_parameters(A, P, K), atol=1e-13)


def test_table_9_1_symbolic_equals_numeric_and_batches():
    a, d, t, r = sympy.symbols("alpha d theta r")
    L = lambda_matrix(a, d, t, r)
    vals = {a: 0.3, d: -0.2, t: 1.1, r: 0.7}
    np.testing.assert_allclose(np.array(L.subs(vals), dtype=float), lambda_matrix(0.3, -0.2, 1.1, 0.7), atol=1e-14)
    thetas = np.array([0.1, 0.5, -2.0])
    Lb = lambda_matrix(0.4, 0.1, thetas, 0.3)
    assert Lb.shape == (3, 10, 10)
    np.testing.assert_allclose(Lb[2], lambda_matrix(0.4, 0.1, -2.0, 0.3))


def test_tree_lambda_composes_gamma_b():
    robot = random_robot(4, nf=4, tree=True)
    rng = np.random.default_rng(2)
    for i in range(robot.nf):
        qi = 0.37
        A = rot_z(robot.gamma[i]) @ rot_x(robot.alpha[i]) @ rot_z(robot.theta[i] + (robot.sigma[i] == 0) * qi)
        r = robot.r[i] + (robot.sigma[i] == 1) * qi
        P = rot_z(robot.gamma[i]) @ np.array([robot.d[i], -np.sin(robot.alpha[i]) * r, robot.b[i] + np.cos(robot.alpha[i]) * r])
        K = rng.normal(size=10)
        np.testing.assert_allclose(frame_lambda(robot, i, qi) @ K, transformed_parameters(A, P, K), atol=1e-13)


@given(robots)
def test_energy_functions_give_kinetic_plus_potential_energy(robot):
    """Σ_j h_j K_j = E + U (rotors excluded), U = −Σ gᵀ(M_j p_j + A_j MS_j)  ([9.41], [9.5])."""
    q, qd, _ = random_state(robot, 5, (3,))
    h = energy_functions(robot, q, qd)
    H = np.einsum("...jk,jk->...", h, robot.params)
    pr = PinRobot(robot)  # independent kinetic energy; Pinocchio's includes the armature ½ Ia q̇²
    Ia = robot.Ia[robot.joint_frames]
    E = np.array([pin.computeKineticEnergy(pr.model, pr.data, pin_order(pr, a), pin_order(pr, b)) for a, b in zip(q, qd)])
    E = E - 0.5 * np.sum(Ia * qd * qd, -1)
    R0, P0 = base_poses(robot, q, np.float64)
    g = robot.gravity
    U = -np.einsum("i,...ji,j->...", g, P0, robot.M) - np.einsum("i,...jik,jk->...", g, R0, robot.MS)
    assert rel(H, E + U) < 1e-12
    # Pinocchio has no body for frames fixed to the base: compare the energy of the others
    on_base = np.array([all(robot.sigma[k] == 2 for k in ancestors(robot, i)) for i in range(robot.nf)])
    U_moving = -np.einsum("i,...ji,j->...", g, P0[..., ~on_base, :], robot.M[~on_base]) - np.einsum(
        "i,...jik,jk->...", g, R0[..., ~on_base, :, :], robot.MS[~on_base]
    )
    Up = np.array([pin.computePotentialEnergy(pr.model, pr.data, pin_order(pr, a)) for a in q])
    assert rel(U_moving, Up) < 1e-12


@given(robots)
def test_energy_recursion_9_45_equals_direct_9_44(robot):
    q, qd, _ = random_state(robot, 6, (2,))
    assert rel(energy_recursion(robot, q, qd), energy_functions(robot, q, qd)) < 1e-12


def test_energy_functions_of_first_link_by_hand():
    robot = random_robot(7, nf=2, prismatic=False)
    q, qd, _ = random_state(robot, 7)
    w, V = link_velocities(robot, q, qd)
    h = energy_functions(robot, q, qd)
    assert h.shape == (2, 10)
    np.testing.assert_allclose(h[:, 5], 0.5 * w[:, 2] ** 2)
    np.testing.assert_allclose(h[:, 1], w[:, 0] * w[:, 1])


# ---- the component-wise implementation: blocks of states, single states, every column ------------------------


def test_regressor_several_state_blocks_equal_one_state_at_a_time():
    """More states than kinematics.BLOCK, with per-state gravity: every state is its own regressor."""
    from robodyn import kinematics

    robot = random_robot(21, nf=5, tree=True, fixed=True)
    size = kinematics.BLOCK + 3
    q, qd, qdd = random_state(robot, 4, (size,))
    g = np.random.default_rng(0).normal(size=(size, 3))
    D = regressor(robot, q, qd, qdd, gravity=g)
    assert D.shape == (size, robot.n, 11 * robot.nf + 3 * robot.n)
    assert rel(D @ standard_parameter_vector(robot), inverse_dynamics(robot, q, qd, qdd, gravity=g)) < 1e-12
    for b in (0, kinematics.BLOCK - 1, kinematics.BLOCK, size - 1):
        # a large float64 batch runs on robodyn.native, one state on Python floats: equal to rounding (1 ulp)
        np.testing.assert_allclose(D[b], regressor(robot, q[b], qd[b], qdd[b], gravity=g[b]), rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("seed, tree", [(2, False), (5, True), (13, True)])
def test_regressor_columns_are_newton_euler_of_each_parameter(seed, tree):
    """Γ_rigid is linear in K: D_links Kᵣ = rnea(robot with link parameters Kᵣ) for 10 nf + 3 random physical
    parameter sets Kᵣ of full rank, which fixes every link column of D ([9.36])."""
    from robodyn.dynamics.newton_euler import rnea
    from tests.support.random_robots import random_inertia

    robot = random_robot(seed, nf=5, tree=tree, fixed=True)
    q, qd, qdd = random_state(robot, seed, (3,))
    rng = np.random.default_rng(seed)
    Ks = np.array([[random_inertia(rng) for _ in range(robot.nf)] for _ in range(10 * robot.nf + 3)])
    assert np.linalg.matrix_rank(Ks.reshape(len(Ks), -1)) == 10 * robot.nf
    D = regressor(robot, q, qd, qdd, friction=False).reshape(3, robot.n, robot.nf, 11)[..., :10]
    for K in Ks:
        tau = rnea(robot.replace(params=K, Ia=np.zeros(robot.nf)), q, qd, qdd, robot.gravity)
        assert rel(np.einsum("bkjc,jc->bk", D, K), tau) < 1e-12


def test_regressor_of_a_state_at_rest_without_gravity():
    """No motion, no gravity: only the rotor (q̈) and friction (sign q̇, q̇, 1) columns can be nonzero."""
    robot = random_robot(6, nf=4)
    q = np.linspace(-1, 1, robot.n)
    z = np.zeros(robot.n)
    expected = np.zeros((robot.n, 11 * robot.nf + 3 * robot.n))
    expected[:, 11 * robot.nf + 2 :: 3] = np.eye(robot.n)
    for batch in ((), (2,)):
        D = regressor(robot, np.broadcast_to(q, batch + q.shape), z, z, gravity=np.zeros(3))
        np.testing.assert_array_equal(D, np.broadcast_to(expected, batch + expected.shape))
