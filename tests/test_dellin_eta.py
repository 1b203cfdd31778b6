"""Dellin's η derivation (§5.4–5.5): eqs (71) and (73) move W_k out of a cross product, (W c) × r → W (c × r),
which does not hold; robodyn's single-joint equation keeps the order (docs/gravity-calibration.md)."""

import numpy as np

import robodyn as rd
from robodyn.identification.second_moments import locked_body_inertia


def skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def test_the_counterexample():
    """ω = 0, ω̇ = q̈ z, W = S(ω̇) + S(ω)²: with c = r = x̂, (W c) × r = −q̈ ẑ while W (c × r) = 0."""
    qdd = 2.5
    W = skew([0.0, 0.0, qdd])
    x = np.array([1.0, 0.0, 0.0])
    np.testing.assert_allclose(np.cross(W @ x, x), [0.0, 0.0, -qdd], atol=1e-15)
    np.testing.assert_allclose(W @ np.cross(x, x), 0.0, atol=0)


def test_locked_joint_torque_needs_the_order_kept():
    """Joint k = 4 of the WAM moves alone; the torque of the locked joint 1 (gravity removed) is the moment of the
    moving body's inertial force about O_1: z_1 · [J-terms + r × (W C)] with r = O_4 − O_1 and C the body's first
    moment about O_4 (robodyn's form, = the Newton–Euler torque), not z_1 · [J-terms + W (r × C)] (η of (72))."""
    robot = rd.load("wam7")
    rng = np.random.default_rng(3)
    k = 4
    q = rng.uniform(-2, 2, robot.n)
    qd, qdd = np.zeros(robot.n), np.zeros(robot.n)
    qd[k - 1], qdd[k - 1] = 1.3, -2.1
    tau = rd.inverse_dynamics(robot, q, qd, qdd, friction=False) - rd.gravity_torques(robot, q) - robot.Ia * qdd
    T = rd.forward_kinematics(robot, q)
    f1, fk = robot.joint_frames[0], robot.joint_frames[k - 1]
    z1, zk = T[f1, :3, 2], T[fk, :3, 2]
    r = T[fk, :3, 3] - T[f1, :3, 3]
    # the moving body B = links k..n: its first moment C about O_k and its inertia about O_k, base frame
    C = sum(T[i, :3, :3] @ robot.MS[i] + robot.M[i] * (T[i, :3, 3] - T[fk, :3, 3]) for i in range(fk, robot.nf))
    Rk = T[fk, :3, :3]
    J = Rk @ locked_body_inertia(robot, q, k) @ Rk.T
    w, wd = qd[k - 1] * zk, qdd[k - 1] * zk
    W = skew(wd) + skew(w) @ skew(w)
    inertial = J @ wd + np.cross(w, J @ w)
    kept = z1 @ (inertial + np.cross(r, W @ C))          # robodyn: the force W C of B, then its moment about O_1
    swapped = z1 @ (inertial + W @ np.cross(r, C))       # Dellin (71)–(73): W η with η = −C × r
    assert abs(kept - tau[0]) <= 1e-10 * max(1.0, abs(tau[0]))
    assert abs(swapped - tau[0]) > 1e-3 * abs(tau[0])
