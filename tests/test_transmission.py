"""Motors and transmissions [9.29]–[9.33] and the end-effector wrench [9.30]."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import robodyn as rd
from robodyn.dynamics.transmission import (
    Transmission,
    actuator_torques,
    end_effector_torques,
    joint_from_motor,
    motor_forward_dynamics,
    motor_from_joint,
    motor_inertia_matrix,
    motor_inverse_dynamics,
)
from tests.support.random_robots import random_robot, random_state

RTOL = 1e-10

#: Barrett WAM joint-to-motor-position matrix j2mp (libbarrett config/wam7w.conf): q_m = j2mp q.
WAM_J2MP = np.array([
    [-42.0, 0, 0, 0, 0, 0, 0],
    [0, 28.25, -16.8155, 0, 0, 0, 0],
    [0, -28.25, -16.8155, 0, 0, 0, 0],
    [0, 0, 0, -18.0, 0, 0, 0],
    [0, 0, 0, 0, 9.7, -9.7, 0],
    [0, 0, 0, 0, 9.7, 9.7, 0],
    [0, 0, 0, 0, 0, 0, -14.93],
])


def close(a, b, rtol=RTOL):
    a, b = np.asarray(a), np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=0, atol=rtol * max(np.max(np.abs(b)), 1.0))


def no_rotor(robot):
    return robot.replace(Ia=np.zeros(robot.nf))


def test_validation_messages():
    with pytest.raises(rd.ModelError, match="singular"):
        Transmission([[1, 2], [2, 4]], [1e-4, 1e-4])
    with pytest.raises(rd.ModelError, match="square"):
        Transmission(np.ones((2, 3)), [1, 1])
    with pytest.raises(rd.ModelError, match="J_m"):
        Transmission(np.eye(2), [1e-4, -1])
    with pytest.raises(rd.ModelError, match=r"Transmission: Fv_m = \[0.1, nan\]; give 2 finite numbers, every entry must be >= 0"):
        Transmission(np.eye(2), [1e-4, 1e-4], Fv_m=[0.1, np.nan])
    with pytest.raises(rd.ModelError, match="nonzero ratio"):
        Transmission.gears([100, 0], [1, 1])
    r = rd.load("planar2r")
    tr = Transmission.gears([100, 50], [1e-4, 2e-4])
    with pytest.raises(rd.InputError, match="count twice"):
        motor_inverse_dynamics(r.replace(Ia=[0.1, 0.1]), tr, *np.zeros((3, 2)))
    with pytest.raises(rd.InputError, match="n = 3 motors"):
        motor_inverse_dynamics(r, Transmission(np.eye(3), [1, 1, 1]), *np.zeros((3, 2)))
    with pytest.raises(rd.InputError, match=r"'tau' has shape \(3,\)"):
        actuator_torques(tr, np.zeros(3))
    with pytest.raises(rd.InputError, match="argument 'qm' contains NaN or inf; give finite values"):
        joint_from_motor(tr, [0.0, np.inf])
    massless_tip = rd.Robot(name="massless_tip", sigma=[0, 0], d=[0, 0.5], params=np.zeros((2, 10)))
    with pytest.raises(rd.ModelError, match="robot 'massless_tip': the motor-side inertia matrix is not positive definite"):
        motor_forward_dynamics(massless_tip, Transmission(np.eye(2), [1e-4, 0.0]), *np.zeros((3, 2)))


def test_gears_reflected_inertia_is_N2_Jm():
    """[9.29]: Ia_j = N_j² J_mj for independent gears (signs of N do not matter)."""
    N, Jm = np.array([100.0, -50.0, 80.0]), np.array([1e-4, 3e-4, 2e-5])
    tr = Transmission.gears(N, Jm)
    close(tr.reflected_inertia, np.diag(N**2 * Jm), rtol=1e-14)
    close(motor_from_joint(tr, [1.0, 1.0, 1.0]), N)  # q_m = N q
    close(joint_from_motor(tr, N), np.ones(3))


@given(seed=st.integers(0, 2**31 - 1), tree=st.booleans())
def test_gears_motor_model_equals_rigid_model_with_Ia(seed, tree):
    """With gears, τ_m = Γ(robot with Ia = N² J_m) / N + motor friction (De Luca: τ_i = n_ri τ_mi) [9.29], [9.33]."""
    robot = random_robot(seed, tree=tree, fixed=True)
    rng = np.random.default_rng(seed)
    n = robot.n
    N = rng.uniform(10, 100, n) * rng.choice([-1, 1], n)
    tr = Transmission.gears(N, rng.uniform(1e-5, 1e-3, n), rng.uniform(0, 1e-2, n), rng.uniform(0, 1e-2, n))
    Ia = np.zeros(robot.nf)
    Ia[robot.joint_frames] = N**2 * tr.J_m
    q, qd, qdd = rng.uniform(-2, 2, (3, 4, n))
    tau_m = motor_inverse_dynamics(no_rotor(robot), tr, N * q, N * qd, N * qdd)
    expected = rd.inverse_dynamics(robot.replace(Ia=Ia), q, qd, qdd) / N + tr.Fv_m * N * qd + tr.Fc_m * np.sign(N * qd)
    close(tau_m, expected)


def test_wam_coupling_virtual_work_and_inverse_forward():
    """WAM (built-in wam7, Ia = 0) with its cable differentials: τ_mᵀ q̇_m = Γᵀ q̇ [9.32];
    M_m q̈_m + J_qmᵀ H + friction = τ_m; fd(id(q̈_m)) = q̈_m."""
    robot = rd.load("wam7")
    rng = np.random.default_rng(3)
    tr = Transmission.from_motor_matrix(WAM_J2MP, rng.uniform(1e-5, 1e-4, 7), rng.uniform(0, 1e-3, 7), rng.uniform(0, 1e-3, 7))
    close(tr.J_qm @ WAM_J2MP, np.eye(7), rtol=1e-14)
    qm, qmd, qmdd = rng.uniform(-20, 20, (3, 5, 7))
    q, qd = joint_from_motor(tr, qm), joint_from_motor(tr, qmd)
    tau = rng.normal(size=(5, 7))
    close(np.sum(actuator_torques(tr, tau) * qmd, -1), np.sum(tau * qd, -1))
    tau_m = motor_inverse_dynamics(robot, tr, qm, qmd, qmdd)
    Mm = motor_inertia_matrix(robot, tr, qm)
    H = rd.bias_torques(robot, q, qd)
    lhs = np.einsum("...ij,...j->...i", Mm, qmdd) + actuator_torques(tr, H) + tr.Fv_m * qmd + tr.Fc_m * np.sign(qmd)
    close(tau_m, lhs)
    close(motor_forward_dynamics(robot, tr, qm, qmd, tau_m), qmdd)
    close(motor_forward_dynamics(robot, tr, qm[2], qmd[2], tau_m[2]), qmdd[2])  # batch == single
    close(motor_forward_dynamics(robot, tr, qm, qmd, tau_m, inertia_method="walker_orin"), qmdd)
    with pytest.warns(DeprecationWarning, match="inertia_method="):
        close(motor_forward_dynamics(robot, tr, qm, qmd, tau_m, method="gibbs_appell"), qmdd)


def test_motor_inertia_matrix_kinetic_energy():
    """½ q̇_mᵀ M_m q̇_m = E_links(q, q̇) + ½ q̇_mᵀ J_m q̇_m with q̇ = J_qm q̇_m (rotor spinning energy only)."""
    robot = no_rotor(random_robot(8, nf=7, tree=True))
    rng = np.random.default_rng(1)
    tr = Transmission.from_motor_matrix(WAM_J2MP, rng.uniform(1e-5, 1e-4, 7))
    qm, qmd = rng.uniform(-20, 20, (2, 3, 7))
    Mm = motor_inertia_matrix(robot, tr, qm, method="walker_orin")
    E = rd.kinetic_energy(robot, joint_from_motor(tr, qm), joint_from_motor(tr, qmd)) + 0.5 * np.sum(tr.J_m * qmd**2, -1)
    close(0.5 * np.einsum("...i,...ij,...j->...", qmd, Mm, qmd), E)
    close(Mm, np.swapaxes(Mm, -1, -2), rtol=1e-14)


def test_float32_in_float32_out():
    robot = no_rotor(rd.load("planar2r"))
    tr = Transmission.gears([100, 50], [1e-4, 2e-4])
    x = np.ones((3, 2), np.float32)
    assert motor_inverse_dynamics(robot, tr, x, x, x).dtype == np.float32
    assert motor_forward_dynamics(robot, tr, x, x, x).dtype == np.float32
    assert actuator_torques(tr, x).dtype == np.float32
    M32 = motor_inertia_matrix(robot, tr, x)
    assert M32.dtype == np.float32
    np.testing.assert_allclose(M32, motor_inertia_matrix(robot, tr, x.astype(np.float64)), rtol=1e-5)


# ---- end-effector wrench [9.30] -----------------------------------------------------------------------------------

def test_end_effector_planar_2r_closed_form():
    """Planar 2R (l1 = 1, l2 tip at 1 m on x2): Γ_e = Jᵀ f with J = [[−s1 − s12, −s12], [c1 + c12, c12]]."""
    robot = rd.load("planar2r")
    q = np.array([0.4, -1.1])
    f = np.array([3.0, -2.0, 0.0, 0.0, 0.0, 0.5])  # planar force and a moment about z
    s1, c1, s12, c12 = np.sin(q[0]), np.cos(q[0]), np.sin(q.sum()), np.cos(q.sum())
    J = np.array([[-s1 - s12, -s12], [c1 + c12, c12]])
    expected = J.T @ f[:2] + f[5]
    close(end_effector_torques(robot, q, f, point=[1.0, 0, 0]), expected)


@given(seed=st.integers(0, 2**31 - 1), tree=st.booleans())
def test_end_effector_torques_match_inverse_dynamics_wrenches(seed, tree):
    """Jᵀ L_e equals Γ(q, q̇, q̈, wrenches) − Γ(q, q̇, q̈) for the same wrench moved into R_j about O_j."""
    robot = random_robot(seed, tree=tree, fixed=True)
    rng = np.random.default_rng(seed)
    frame = int(rng.integers(1, robot.nf + 1))
    q, qd, qdd = rng.uniform(-2, 2, (3, 4, robot.n))
    point = rng.uniform(-0.5, 0.5, (4, 3))
    L = rng.normal(size=(4, 6))  # [f; m] in R_0, moment about the point, exerted on the environment
    T = rd.forward_kinematics(robot, q)[:, frame - 1]
    R = T[:, :3, :3]
    f_j = np.einsum("bji,bj->bi", R, L[:, :3])
    m_j = np.einsum("bji,bj->bi", R, L[:, 3:]) + np.cross(point, f_j)  # moment about O_j, in R_j
    W = np.zeros((4, robot.nf, 6))
    W[:, frame - 1] = np.concatenate([f_j, m_j], -1)
    expected = rd.inverse_dynamics(robot, q, qd, qdd, wrenches=W) - rd.inverse_dynamics(robot, q, qd, qdd)
    close(end_effector_torques(robot, q, L, frame=frame, point=point), expected)


def test_end_effector_errors():
    robot = rd.load("planar2r")
    with pytest.raises(rd.InputError, match="wrench"):
        end_effector_torques(robot, [0, 0], np.zeros(3))
    with pytest.raises(rd.InputError, match="frame"):
        end_effector_torques(robot, [0, 0], np.zeros(6), frame=5)


def test_end_effector_torques_names_the_axes_of_its_wrench():
    """A wrench in the link's axes gives the torques that the same row of ``wrenches=`` adds to Γ ([9.30], [9.91])."""
    robot = random_robot(4, nf=5, tree=True, fixed=True)
    q, qd, qdd = random_state(robot, 4, (3,))
    L = np.random.default_rng(4).normal(size=(3, 6))
    for frame in (2, robot.nf):
        W = np.zeros((3, robot.nf, 6))
        W[:, frame - 1] = L
        added = rd.inverse_dynamics(robot, q, qd, qdd, wrenches=W) - rd.inverse_dynamics(robot, q, qd, qdd)
        np.testing.assert_allclose(rd.dynamics.end_effector_torques(robot, q, L, frame=frame, expressed_in="link"), added,
                                   rtol=1e-10, atol=1e-10)
        R = rd.forward_kinematics(robot, q)[:, frame - 1, :3, :3]
        L0 = np.concatenate([np.einsum("bij,bj->bi", R, L[:, :3]), np.einsum("bij,bj->bi", R, L[:, 3:])], -1)
        np.testing.assert_allclose(rd.dynamics.end_effector_torques(robot, q, L0, frame=frame), added, rtol=1e-10, atol=1e-10)
    with pytest.raises(rd.InputError, match="expressed_in = 'tool'"):
        rd.dynamics.end_effector_torques(robot, q, L, expressed_in="tool")
