"""Inverse kinematics, trajectories, integration and the PUMA straight-line study (Mata et al. §5.2)."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import robodyn as rd
from robodyn import Robot
from robodyn.simulation import (
    inverse_kinematics, line_reference, pose_error, puma_line_study, quintic, simulate, straight_line, tool_pose,
    zyz_matrix,
)
from robodyn.simulation.puma_line import P_END, P_START
from tests.support.random_robots import random_robot, random_state


@pytest.fixture(scope="module")
def puma():
    return rd.load("puma560")


def test_quintic_boundary_values_and_derivatives():
    T = 5.0
    s, sd, sdd = quintic(np.array([0.0, T]), T)
    assert np.allclose(s, [0, 1]) and np.allclose(sd, 0) and np.allclose(sdd, 0)
    t = np.linspace(0.3, 4.7, 9)
    h = 1e-5
    sp, sdp, _ = quintic(t + h, T)
    sm, sdm, _ = quintic(t - h, T)
    s, sd, sdd = quintic(t, T)
    assert np.allclose((sp - sm) / (2 * h), sd, atol=1e-8)
    assert np.allclose((sdp - sdm) / (2 * h), sdd, atol=1e-8)
    assert np.isclose(quintic(T / 2, T)[0], 0.5)
    with pytest.raises(rd.InputError, match="duration"):
        quintic(1.0, 0.0)
    with pytest.raises(rd.InputError, match="duration = inf; give a positive finite time"):
        quintic(1.0, np.inf)
    with pytest.raises(rd.InputError, match="argument 't' contains NaN or inf"):
        quintic([0.0, np.nan], T)


def test_zyz_of_the_seed():
    assert np.allclose(zyz_matrix(0, np.pi / 2, np.pi), [[0, 0, 1], [0, -1, 0], [1, 0, 0]], atol=1e-15)


def test_straight_line_pose_and_velocity():
    R = zyz_matrix(0, np.pi / 2, np.pi)
    t = np.array([0.0, 2.5, 5.0])
    T, xd, xdd = straight_line(P_START, P_END, R, 5.0, t)
    assert np.allclose(T[0, :3, 3], P_START) and np.allclose(T[-1, :3, 3], P_END)
    assert np.allclose(T[1, :3, 3], (np.array(P_START) + P_END) / 2)
    assert np.allclose(T[:, :3, :3], R) and np.allclose(xd[:, 3:], 0) and np.allclose(xdd[:, 3:], 0)
    v = xd[1, :3]
    assert np.allclose(np.cross(v, np.subtract(P_END, P_START)), 0)  # along the line
    with pytest.raises(rd.InputError, match="rotation"):
        straight_line(P_START, P_END, 2 * R, 5.0, t)


def test_pose_error_is_zero_only_at_the_target():
    T = np.eye(4)
    assert np.array_equal(pose_error(T, T), np.zeros(6))
    small = np.eye(4)
    small[:3, :3] = zyz_matrix(1e-4, 0, 0)  # rotate 1e-4 rad about z
    e = pose_error(T, small)
    assert np.allclose(e, [0, 0, 0, 0, 0, -1e-4], atol=1e-12)


def test_ik_reproduces_random_poses(puma):
    rng = np.random.default_rng(3)
    q_true = rng.uniform(-2, 2, (20, 6))
    q_true[:, 4] = rng.uniform(0.4, 2.5, 20) * rng.choice([-1, 1], 20)  # away from the wrist singularity q5 = 0
    target = tool_pose(puma, q_true)
    q = inverse_kinematics(puma, target, q_true + rng.uniform(-0.1, 0.1, q_true.shape))
    assert np.abs(pose_error(target, tool_pose(puma, q))).max() < 1e-10
    # away from singularities the solution is the branch of the guess (near one, e.g. cond(J) ≈ 275 for one
    # of these samples, two solutions lie within the guess's perturbation and either is correct)
    good = np.linalg.cond(rd.jacobian(puma, q_true)) < 100
    assert good.sum() >= 15 and np.allclose(q[good], q_true[good], atol=1e-8)
    # batched == per sample
    q3 = inverse_kinematics(puma, target[3], q_true[3] + 0.05)
    assert np.abs(pose_error(target[3], tool_pose(puma, q3))).max() < 1e-10


@given(seed=st.integers(0, 2**31 - 1))
def test_ik_on_random_six_joint_robots(seed):
    """Revolute and prismatic joints, random geometry: from a guess 0.05 away, Newton reaches the pose to 1e-10
    wherever the Jacobian is well conditioned (near singularities convergence is not promised)."""
    robot = random_robot(seed, nf=6)
    q_true = random_state(robot, seed)[0]
    assume(np.linalg.cond(rd.jacobian(robot, q_true)) < 1e3)
    target = tool_pose(robot, q_true, point=[0.05, -0.02, 0.1])
    q = inverse_kinematics(robot, target, q_true + 0.05, point=[0.05, -0.02, 0.1])
    assert np.abs(pose_error(target, tool_pose(robot, q, point=[0.05, -0.02, 0.1]))).max() < 1e-10


def test_ik_with_tool_point_matches_jacobian_point(puma):
    point = np.array([0.0, 0.0, 0.1])
    q_true = np.array([0.2, 0.5, -0.4, 0.3, 1.0, -0.5])
    target = tool_pose(puma, q_true, point=point)
    q = inverse_kinematics(puma, target, q_true + 0.05, point=point)
    assert np.abs(pose_error(target, tool_pose(puma, q, point=point))).max() < 1e-10


def test_ik_unreachable_target_raises(puma):
    target = np.eye(4)
    target[:3, 3] = [5.0, 0, 0]
    with pytest.raises(rd.InputError, match="not reached"):
        inverse_kinematics(puma, target, np.zeros(6), max_iter=30)


def test_reference_reaches_the_line_and_is_consistent(puma):
    t0, h = 1.3, 1e-4
    ref = line_reference(puma, t=[t0 - h, t0, t0 + h, 0.0, 5.0])
    R = zyz_matrix(0, np.pi / 2, np.pi)
    T, _, _ = straight_line(P_START, P_END, R, 5.0, ref.t)
    assert np.abs(pose_error(T, tool_pose(puma, ref.q))).max() < 1e-10
    # q̇* = J⁻¹ ẋ and q̈* = J⁻¹ (ẍ − J̇ q̇*) against central differences (error O(h²) ≈ 1e-8 + IK round-off)
    assert np.allclose((ref.q[2] - ref.q[0]) / (2 * h), ref.qd[1], atol=1e-6)
    assert np.allclose((ref.qd[2] - ref.qd[0]) / (2 * h), ref.qdd[1], atol=1e-6)
    assert np.allclose(ref.qd[3:], 0, atol=1e-12) and np.allclose(ref.qdd[3:], 0, atol=1e-12)
    # the torques reproduce the accelerations through every forward model
    for m in ("recursive", "cholesky"):
        qdd = rd.forward_dynamics(puma, ref.q, ref.qd, ref.tau, method=m)
        assert np.allclose(qdd, ref.qdd, rtol=0, atol=1e-10 * max(1.0, np.abs(ref.qdd).max()))


def test_reference_is_continuous_along_the_whole_line(puma):
    ref = line_reference(puma, samples=101)
    assert np.abs(np.diff(ref.q, axis=0)).max() < 0.02  # one branch, no jumps between 0.05 s samples
    assert np.abs(ref.q[:, 4]).min() > 0.3  # wrist stays away from its singularity q5 = 0


@pytest.mark.parametrize("tol", [1e-6, 1e-10])
def test_short_horizon_simulation_tracks_reference(puma, tol):
    """Open loop over 0.5 s: RK45 keeps each step's local error within atol + rtol |y| (|y| ≲ 1 here), the
    handful of steps and the weak open-loop instability over 0.5 s keep the global error within a few
    tolerances; we measured ≈ 1.5 tol for q, so 10 tol is the bound. That the error scales with the tolerance
    shows IK, inverse dynamics, torque spline and forward dynamics are mutually consistent."""
    ref = line_reference(puma, t=np.linspace(0.0, 0.5, 51))
    sim = simulate(puma, ref.torque, ref.q[0], ref.qd[0], ref.t[::10], method="recursive", rtol=tol, atol=tol)
    assert np.abs(sim.q - ref.q[::10]).max() < 10 * tol
    assert np.abs(sim.qd - ref.qd[::10]).max() < 10 * tol
    assert sim.nfev > 0 and sim.q.shape == (6, 6)
    # energy balance E(t) − E(0) = W_Γ (no friction on this model) at the tolerance, relative to the work done
    assert np.abs(sim.energy_error).max() < 10 * tol * max(1.0, np.abs(sim.work_tau).max())
    assert np.array_equal(sim.work_friction, np.zeros(6)) and np.allclose(sim.tau, ref.torque(sim.t), rtol=1e-14)


def test_simulate_free_fall_is_exact():
    """One vertical prismatic joint, no torque: q = q0 + v0 t − g t²/2, which RK45 integrates exactly."""
    robot = Robot(name="drop", sigma=np.array([1]), params=np.array([[0.1, 0, 0, 0.1, 0, 0.1, 0, 0, 0, 2.0]]))
    t = np.linspace(0, 1, 5)
    sim = simulate(robot, lambda t: np.zeros(np.shape(t) + (1,)), [0.3], [1.0], t)
    assert np.allclose(sim.q[:, 0], 0.3 + t - 9.81 * t**2 / 2, atol=1e-12)
    assert np.allclose(sim.qdd[:, 0], -9.81)
    assert np.abs(sim.energy_error).max() < 1e-12  # free fall: E constant, no work
    with pytest.raises(rd.InputError, match="t_eval"):
        simulate(robot, lambda t: 0.0, [0.0], [0.0], [1.0, 0.5])
    with pytest.raises(rd.InputError, match="q0 and qd0"):
        simulate(robot, lambda t: 0.0, [0.0, 1.0], [0.0], t)
    with pytest.raises(rd.InputError, match="argument 'qd0' contains NaN or inf"):
        simulate(robot, lambda t: 0.0, [0.0], [np.nan], t)
    with pytest.raises(rd.InputError, match="at least 2 finite times"):
        simulate(robot, lambda t: 0.0, [0.0], [0.0], [0.0, np.inf])
    with pytest.raises(rd.InputError, match="integrator = 'Euler'; choose one of auto, RK45, RK23, DOP853, Radau, BDF, LSODA"):
        simulate(robot, lambda t: 0.0, [0.0], [0.0], t, integrator="Euler")


def test_puma_line_tables(puma):
    res = puma_line_study(puma, methods=["recursive", "cholesky"], samples=101)
    t6, t7 = res.table6(), res.table7()
    assert set(t6) == set(t7) == {"recursive", "cholesky"}
    for sim in res.simulations:
        m = sim.method
        assert t6[m].shape == (6, 3)
        # the simulated motion follows the reference (mean |q − q*| well below 0.01 rad), and the error grows from
        # q to q̇ to q̈ as each derivative amplifies it, the pattern of the published Table 6
        assert np.all(t6[m][:, 0] < 1e-2)
        assert np.all(t6[m][:, 0] < t6[m][:, 1]) and np.all(t6[m][:, 1] < t6[m][:, 2])
        assert t7[m] == (sim.seconds, sim.nfev) and sim.nfev >= len(sim.t) - 1
    # both methods compute the same model: identical trajectories up to round-off amplified by the integrator
    assert np.allclose(t6["recursive"], t6["cholesky"], rtol=1e-3, atol=1e-9)
    with pytest.raises(rd.InputError, match="6-joint"):
        puma_line_study(rd.load("ascher2"))


def test_puma_line_rejects_bad_output_interval(puma):
    with pytest.raises(rd.InputError, match="output_interval = 0.3"):
        puma_line_study(puma, methods=["recursive"], output_interval=0.3)
