"""Task-space dynamics (Λ vs Pinocchio, De Luca's reduced dynamics, redundancy) and coordinate transformations
(vs a direct Lagrange derivation in absolute angles)."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn.dynamics.coordinates import transform_dynamics
from robodyn.dynamics.task_space import (OrientationError, RelativePosition, SingularConfigurationError,
                                         task_space_dynamics)
from robodyn.errors import InputError
from tests.support.random_robots import random_robot


def _pin():
    return pytest.importorskip("tests.support.pin_bridge")


@pytest.mark.parametrize("seed", [1, 7, 11])
def test_task_inertia_matches_pinocchio(seed):
    bridge = _pin()
    robot = random_robot(seed, nf=7, prismatic=False, special_angles=False)  # rank 6
    rng = np.random.default_rng(seed)
    q = rng.uniform(-2, 2, (3, robot.n))
    qd = rng.uniform(-1, 1, (3, robot.n))
    res = task_space_dynamics(robot, q, qd, frame=7)
    pr = bridge.PinRobot(robot)
    for i in range(3):
        M = pr.crba(q[i])
        J = pr.jacobian(q[i], 7)
        Lam = np.linalg.inv(J @ np.linalg.solve(M, J.T))
        np.testing.assert_allclose(res.Lambda[i], Lam, rtol=1e-9, atol=1e-9 * np.abs(Lam).max())
    # batch == per sample
    one = task_space_dynamics(robot, q[1], qd[1], frame=7)
    np.testing.assert_allclose(one.Lambda, res.Lambda[1], rtol=1e-12, atol=1e-12 * np.abs(one.Lambda).max())
    np.testing.assert_allclose(one.mu, res.mu[1], rtol=1e-11, atol=1e-11 * np.abs(one.mu).max())


def test_redundant_task_reduced_dynamics_and_null_space():
    robot = random_robot(5, nf=5, prismatic=False, special_angles=False)
    rng = np.random.default_rng(2)
    B = 4
    q, qd = rng.uniform(-2, 2, (B, 5)), rng.uniform(-1, 1, (B, 5))
    point = np.array([0.1, -0.2, 0.05])
    ts = task_space_dynamics(robot, q, qd, frame=5, point=point, rows=[0, 1, 2])
    Lam, mu, p = ts
    assert Lam.shape == (B, 3, 3) and mu.shape == p.shape == (B, 3)
    # J J̄ = I, N is a projector and Jᵀ-range torques are annihilated by it
    np.testing.assert_allclose(ts.J @ ts.Jbar, np.broadcast_to(np.eye(3), (B, 3, 3)), atol=1e-12)
    np.testing.assert_allclose(ts.null_projector @ ts.null_projector, ts.null_projector, atol=1e-12)
    # De Luca: τ = Jᵀ F + N τ0 gives M_r r̈ + n_r = F whatever τ0 (dynamically consistent)
    F, tau0 = rng.normal(size=(B, 3)), rng.normal(size=(B, 5)) * 10
    tau = (np.swapaxes(ts.J, -1, -2) @ F[..., None])[..., 0] + (ts.null_projector @ tau0[..., None])[..., 0]
    qdd = rd.forward_dynamics(robot, q, qd, tau)
    rdd = (ts.J @ qdd[..., None])[..., 0] + ts.Jdot_qd
    np.testing.assert_allclose((ts.M_r @ rdd[..., None])[..., 0] + ts.n_r, F, rtol=1e-9, atol=1e-9)
    # the null-space torque alone does not accelerate the task
    qdd0 = rd.forward_dynamics(robot, q, qd, tau - (np.swapaxes(ts.J, -1, -2) @ F[..., None])[..., 0])
    qddb = rd.forward_dynamics(robot, q, qd, rd.bias_torques(robot, q, qd))   # zero task force, zero τ0: q̈ = 0
    np.testing.assert_allclose(qddb, 0, atol=1e-10)
    np.testing.assert_allclose((ts.J @ qdd0[..., None])[..., 0] + ts.Jdot_qd,
                               np.linalg.solve(ts.Lambda, (-(ts.mu + ts.p))[..., None])[..., 0], atol=1e-9)
    # gravity part: p = Λ J A⁻¹ g
    A = rd.inertia_matrix(robot, q)
    g = rd.gravity_torques(robot, q)
    np.testing.assert_allclose(p, (Lam @ ts.J @ np.linalg.solve(A, g[..., None]))[..., 0], rtol=1e-10, atol=1e-10)


def test_singular_configuration_error_and_damping():
    arm = rd.load("planar2r")
    q = np.array([[0.3, 0.0], [0.3, 1.0]])        # first: stretched out, singular
    with pytest.raises(SingularConfigurationError, match="damping"):
        task_space_dynamics(arm, q, np.zeros(2), rows=[0, 1], point=[1.0, 0, 0])
    damped = task_space_dynamics(arm, q, np.zeros(2), rows=[0, 1], point=[1.0, 0, 0], damping=1e-2)
    assert np.all(np.isfinite(damped.Lambda))
    exact = task_space_dynamics(arm, q[1], np.zeros(2), rows=[0, 1], point=[1.0, 0, 0])
    lam = 1e-2
    J, A = exact.J, rd.inertia_matrix(arm, q[1])
    np.testing.assert_allclose(damped.Lambda[1], np.linalg.inv(J @ np.linalg.solve(A, J.T) + lam**2 * np.eye(2)),
                               rtol=1e-12)
    with pytest.raises(InputError, match="rows"):
        task_space_dynamics(arm, q, np.zeros(2))            # 6 rows for a 2-joint arm
    with pytest.raises(InputError, match="rows"):
        task_space_dynamics(arm, q, np.zeros(2), rows=[0, 7])


def _lagrange_absolute_2r(arm):
    """Direct Lagrange derivation of the 2R arm in absolute angles p1 = q1, p2 = q1 + q2 (uniform rods)."""
    p1, p2, pd1, pd2, pdd1, pdd2 = sp.symbols("p1 p2 pd1 pd2 pdd1 pdd2")
    t = sp.symbols("t")
    P1, P2 = sp.Function("P1")(t), sp.Function("P2")(t)
    l1 = sp.nsimplify(arm.d[1])
    m1, m2 = sp.nsimplify(arm.params[0][9]), sp.nsimplify(arm.params[1][9])
    c1, c2 = sp.nsimplify(arm.params[0][6] / arm.params[0][9]), sp.nsimplify(arm.params[1][6] / arm.params[1][9])
    Izz1 = sp.nsimplify(arm.params[0][5]) - m1 * c1**2      # about the centre of mass
    Izz2 = sp.nsimplify(arm.params[1][5]) - m2 * c2**2
    g0 = sp.nsimplify(-arm.gravity[1])
    pc1 = sp.Matrix([c1 * sp.cos(P1), c1 * sp.sin(P1)])
    pc2 = sp.Matrix([l1 * sp.cos(P1) + c2 * sp.cos(P2), l1 * sp.sin(P1) + c2 * sp.sin(P2)])
    v1, v2 = pc1.diff(t), pc2.diff(t)
    T = (m1 * v1.dot(v1) + m2 * v2.dot(v2) + Izz1 * P1.diff(t) ** 2 + Izz2 * P2.diff(t) ** 2) / 2
    U = g0 * (m1 * pc1[1] + m2 * pc2[1])
    Lg = T - U
    sub = {P1.diff(t, 2): pdd1, P2.diff(t, 2): pdd2}
    eqs = []
    for P in (P1, P2):
        e = (Lg.diff(P.diff(t)).diff(t) - Lg.diff(P)).subs(sub)
        e = e.subs({P1.diff(t): pd1, P2.diff(t): pd2}).subs({P1: p1, P2: p2})
        eqs.append(sp.expand(e))
    M = sp.Matrix([[e.coeff(pdd) for pdd in (pdd1, pdd2)] for e in eqs])
    rest = sp.Matrix([e.subs({pdd1: 0, pdd2: 0}) for e in eqs])
    grav = rest.subs({pd1: 0, pd2: 0})
    cor = rest - grav
    f = sp.lambdify((p1, p2, pd1, pd2), (M, cor, grav))
    return f


def test_absolute_angles_match_direct_lagrange():
    arm = rd.load("planar2r")
    f = _lagrange_absolute_2r(arm)
    Jp = np.array([[1.0, 0.0], [1.0, 1.0]])
    rng = np.random.default_rng(0)
    q, qd = rng.uniform(-2, 2, (5, 2)), rng.uniform(-2, 2, (5, 2))
    res = transform_dynamics(arm, q, qd, Jp)
    for i in range(5):
        p, pd = Jp @ q[i], Jp @ qd[i]
        M, cor, grav = (np.array(x, dtype=float) for x in f(*p, *pd))
        np.testing.assert_allclose(res.M_p[i], M, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(res.c_p[i], cor.ravel(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(res.g_p[i], grav.ravel(), rtol=1e-13, atol=1e-13)
    # De Luca's u_p = (u_q1 − u_q2, u_q2)
    np.testing.assert_allclose(res.generalized_forces([3.0, 1.0]), np.broadcast_to([2.0, 1.0], (5, 2)))


def test_cartesian_coordinates_agree_with_task_space():
    # p = tip position of the 2R arm (M = N = 2): transform_dynamics with J, J̇ equals the task-space model
    arm = rd.load("planar2r")
    q, qd = np.array([0.4, 1.1]), np.array([0.7, -0.3])
    ts = task_space_dynamics(arm, q, qd, rows=[0, 1], point=[1.0, 0, 0])
    J = ts.J
    # J̇ = Σ_k ∂J/∂q_k q̇_k from the closed form of the 2R tip Jacobian (unit links)
    s1, c1, s12, c12 = np.sin(q[0]), np.cos(q[0]), np.sin(q.sum()), np.cos(q.sum())
    w1, w12 = qd[0], qd.sum()
    Jd = np.array([[-c1 * w1 - c12 * w12, -c12 * w12], [-s1 * w1 - s12 * w12, -s12 * w12]])
    np.testing.assert_allclose(Jd @ qd, ts.Jdot_qd, rtol=1e-13, atol=1e-14)
    res = transform_dynamics(arm, q, qd, J, Jd)
    np.testing.assert_allclose(res.M_p, ts.Lambda, rtol=1e-12)
    np.testing.assert_allclose(res.c_p, ts.mu, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(res.g_p, ts.p, rtol=1e-12)
    with pytest.raises(InputError, match="singular"):
        transform_dynamics(arm, [0.3, 0.0], qd, task_space_dynamics(arm, [0.3, 0.0], qd, rows=[0, 1],
                                                                    point=[1.0, 0, 0], damping=0.1).J)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), tree=st.booleans())
def test_task_space_consistency_on_random_robots(seed, tree):
    # any robot, any frame: with τ = Jᵀ F + N τ0 the task obeys Λ r̈ + μ + p = F (position task, 3 rows)
    robot = random_robot(seed, nf=5, tree=tree, prismatic=True, special_angles=False)
    rng = np.random.default_rng(seed)
    frame = int(rng.integers(1, robot.nf + 1))
    q, qd = rng.uniform(-2, 2, (2, robot.n)), rng.uniform(-1, 1, (2, robot.n))
    J = rd.jacobian(robot, q, frame=frame)[..., :3, :]
    assume(np.all(np.linalg.svd(J, compute_uv=False)[..., -1] > 1e-3))     # a full-rank position task
    ts = task_space_dynamics(robot, q, qd, frame=frame, rows=[0, 1, 2])
    F, tau0 = rng.normal(size=(2, 3)), rng.normal(size=(2, robot.n))
    tau = (np.swapaxes(ts.J, -1, -2) @ F[..., None])[..., 0] + (ts.null_projector @ tau0[..., None])[..., 0]
    rdd = (ts.J @ rd.forward_dynamics(robot, q, qd, tau)[..., None])[..., 0] + ts.Jdot_qd
    scale = 1 + np.abs(F).max() + np.abs(ts.mu + ts.p).max()
    np.testing.assert_allclose((ts.Lambda @ rdd[..., None])[..., 0] + ts.mu + ts.p, F, atol=1e-8 * scale)


# ---- task maps with their own Jacobian and J̇ q̇ ------------------------------------------------------------------
def _derivatives_by_differences(task, robot, q, qd, qdd, h=1e-4):
    """ṙ and r̈ at t = 0 of r(q(t)), q(t) = q + q̇ t + q̈ t²/2, by central differences (error O(h²))."""
    r = [task.value(robot, q + qd * t + 0.5 * qdd * t * t) for t in (-2 * h, -h, 0.0, h, 2 * h)]
    rd_ = (r[3] - r[1]) / (2 * h)
    rdd = (r[3] - 2 * r[2] + r[1]) / h**2
    return rd_, rdd


@pytest.mark.parametrize("make", [
    lambda Rd: RelativePosition(frame_a=3, frame_b=7, point_b=[0.0, 0.0, 0.1]),
    lambda Rd: OrientationError(frame=7, target=Rd),
])
def test_task_maps_jacobian_and_jdot_qd_are_the_derivatives(make):
    robot = rd.load("panda")
    rng = np.random.default_rng(4)
    q, qd, qdd = rng.uniform(-1, 1, 7), rng.uniform(-1, 1, 7), rng.uniform(-1, 1, 7)
    Rd = rd.forward_kinematics(robot, q + 0.3)[6, :3, :3]          # a target 20-odd degrees away
    task = make(Rd)
    J, Jdq = task.jacobian(robot, q), task.jacobian_dot_qd(robot, q, qd)
    rdot, rddot = _derivatives_by_differences(task, robot, q, qd, qdd)
    # central differences, h = 1e-4: truncation ~h² |r⁽⁴⁾| ≈ 1e-8, rounding ~1e-16 / h² ≈ 1e-8 on r̈
    np.testing.assert_allclose(J @ qd, rdot, rtol=0, atol=1e-7)
    np.testing.assert_allclose(J @ qdd + Jdq, rddot, rtol=0, atol=1e-6)
    # batched: a batch of states equals the states one by one
    Q, QD = np.stack([q, q + 0.1]), np.stack([qd, -qd])
    np.testing.assert_allclose(task.jacobian_dot_qd(robot, Q, QD)[1], task.jacobian_dot_qd(robot, q + 0.1, -qd),
                               rtol=1e-13, atol=1e-13)


def test_orientation_error_is_zero_at_the_target_and_sin_half_angle_away():
    robot = rd.load("panda")
    q = np.full(7, 0.2)
    R = rd.forward_kinematics(robot, q)[6, :3, :3]
    np.testing.assert_allclose(OrientationError(7, R).value(robot, q), 0.0, atol=1e-15)
    theta = 0.7
    Rz = np.array([[np.cos(theta), -np.sin(theta), 0], [np.sin(theta), np.cos(theta), 0], [0, 0, 1]])
    e = OrientationError(7, R @ Rz.T).value(robot, q)     # R_e = Rz: error θ about z
    np.testing.assert_allclose(e, [0, 0, np.sin(theta / 2)], atol=1e-14)
    with pytest.raises(rd.InputError, match="rotation matrix"):
        OrientationError(7, 2 * R).value(robot, q)


def test_task_space_dynamics_of_a_task_map():
    """τ = Jᵀ F + N τ₀ gives Λ r̈ + μ + p = F for the task map's r̈ = J q̈ + J̇ q̇, whatever τ₀ (De Luca)."""
    robot = rd.load("panda")
    rng = np.random.default_rng(5)
    q, qd = rng.uniform(-1, 1, 7), rng.uniform(-1, 1, 7)
    Rd = rd.forward_kinematics(robot, q - 0.2)[6, :3, :3]
    for task in (RelativePosition(2, 7), OrientationError(7, Rd)):
        ts = rd.dynamics.task_space_dynamics(robot, q, qd, task=task)
        F, tau0 = rng.normal(size=3), rng.normal(size=7)
        tau = ts.J.T @ F + ts.null_projector @ tau0
        qdd = rd.forward_dynamics(robot, q, qd, tau)
        rddot = ts.J @ qdd + ts.Jdot_qd
        np.testing.assert_allclose(ts.Lambda @ rddot + ts.mu + ts.p, F, rtol=0, atol=1e-9 * (1 + np.abs(F).max()))
    with pytest.raises(rd.InputError, match="either task"):
        rd.dynamics.task_space_dynamics(robot, q, qd, task=RelativePosition(2, 7), rows=[0, 1])
    with pytest.raises(rd.InputError, match="task map"):
        rd.dynamics.task_space_dynamics(robot, q, qd, task="position")
