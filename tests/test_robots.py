"""The built-in robots: they load, are physically consistent, roundtrip through YAML, and agree with
Pinocchio, Robotics Toolbox's own models and the publishers' DH matrices."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from robodyn.model.inertia import check_physical
from tests.support.pin_bridge import PinRobot

NAMES = [
    "ascher2", "cartesian3p", "panda", "planar2r", "planar3r", "pr",
    "puma560", "puma560_corke", "rx90", "rx90_simplified", "stanford", "wam7",
]
RTOL = 1e-10


def close(a, b, rtol=RTOL):
    a, b = np.asarray(a), np.asarray(b)
    return np.linalg.norm(a - b) <= rtol * max(1.0, np.linalg.norm(b))


def states(robot, seed, count=3):
    """Random states inside the joint limits where they exist (within ±2 otherwise)."""
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(robot.qlim[:, 0]), robot.qlim[:, 0], -2.0)
    hi = np.where(np.isfinite(robot.qlim[:, 1]), robot.qlim[:, 1], 2.0)
    q = rng.uniform(lo, hi, (count, robot.n))
    qd, qdd = rng.uniform(-2, 2, (2, count, robot.n))
    return q, qd, qdd


def test_list_robots_is_exactly_the_twelve():
    assert rd.list_robots() == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_loads_and_is_physically_consistent(name, tmp_path):
    robot = rd.load(name)
    assert robot.name == name
    assert robot.source.strip()
    for i in range(robot.nf):
        check_physical(robot.params[i], f"{name} link {i + 1}")
        massless_as_published = name in ("puma560", "puma560_corke") and i == 0
        if robot.sigma[i] != 2 and not massless_as_published:
            assert robot.M[i] > 0, f"{name}: moving link {i + 1} has no mass"
    path = rd.save(robot, tmp_path / f"{name}.yaml")
    again = rd.load(path)
    assert rd.dumps(again) == rd.dumps(robot)
    for key in ("sigma", "antecedent", "alpha", "d", "theta", "r", "params", "Ia", "Fc", "Fv", "qlim", "gravity"):
        np.testing.assert_array_equal(getattr(again, key), getattr(robot, key))
    assert again.joint_names == robot.joint_names and again.source == robot.source


@pytest.mark.parametrize("name", NAMES)
def test_agrees_with_pinocchio(name):
    robot = rd.load(name)
    pr = PinRobot(robot)
    q, qd, qdd = states(robot, 11)
    tau = rd.inverse_dynamics(robot, q, qd, qdd) - rd.friction_torques(robot, qd)
    g = rd.gravity_torques(robot, q)
    T = rd.forward_kinematics(robot, q)
    for s in range(q.shape[0]):
        assert close(tau[s], pr.rnea(q[s], qd[s], qdd[s]))
        assert close(g[s], pr.gravity(q[s]))
        for j in range(1, robot.nf + 1):
            assert close(rd.jacobian(robot, q[s], frame=j), pr.jacobian(q[s], j)), (name, j)
            assert close(T[s, j - 1], pr.placement(q[s], j)), (name, j)


# ---- Robotics Toolbox's own models --------------------------------------------------------------------


def rtb_model(name):
    rtb = pytest.importorskip("roboticstoolbox")
    if name == "puma560_corke":
        arm = rtb.models.DH.Puma560()
        arm.links[2].I = np.diag([0.066, 0.066, 0.0125])  # the one documented change (triangle inequality)
    else:
        arm = rtb.models.DH.Stanford()
        arm.links[4].I = np.diag([0.003, 0.0004, 0.0026])
    return arm


@pytest.mark.parametrize("name", ["puma560_corke", "stanford"])
def test_agrees_with_robotics_toolbox(name):
    robot = rd.load(name)
    arm = rtb_model(name)
    q, qd, qdd = states(robot, 5)
    for s in range(q.shape[0]):
        assert close(rd.forward_kinematics(robot, q[s])[-1], arm.fkine(q[s]).A)
        # RTB's rne includes motor inertia G² Jm q̈ (our Ia); friction models differ (see below): removed.
        expected = arm.nofriction(coulomb=True, viscous=True).rne(q[s], qd[s], qdd[s])
        assert close(rd.inverse_dynamics(robot, q[s], qd[s], qdd[s]) - rd.friction_torques(robot, qd[s]), expected)
        assert close(rd.gravity_torques(robot, q[s]), arm.gravload(q[s]))


def test_puma560_corke_friction_is_rtb_friction_made_symmetric():
    robot = rd.load("puma560_corke")
    arm = rtb_model("puma560_corke")
    qd = np.array([0.5, -0.3, 0.2, -1.0, 0.7, 0.1])
    viscous = np.array([link.friction(qd[i], coulomb=False) for i, link in enumerate(arm.links)])
    assert close(-viscous, robot.Fv * qd)  # RTB returns the friction force acting on the joint (negative)
    for i, link in enumerate(arm.links):
        # At |q̇| → 0 RTB's friction is the Coulomb term alone: |G| Tc+ for q̇ > 0, |G| Tc- for q̇ < 0.
        both = [abs(link.friction(s, coulomb=True)) for s in (1e-300, -1e-300)]
        assert close(robot.Fc[i], np.mean(both))
    assert close(robot.Ia, [link.G**2 * link.Jm for link in arm.links])


# ---- Franka's published DH, special structures ------------------------------------------------------


def craig(alpha, a, theta, d):
    ca, sa, ct, st = np.cos(alpha), np.sin(alpha), np.cos(theta), np.sin(theta)
    # Craig (3.6): ^{i-1}T_i = Rx(α_{i-1}) Tx(a_{i-1}) Rz(θ_i) Tz(d_i)
    return np.array([
        [ct, -st, 0, a],
        [st * ca, ct * ca, -sa, -sa * d],
        [st * sa, ct * sa, ca, ca * d],
        [0, 0, 0, 1],
    ])


def test_panda_forward_kinematics_is_frankas_dh_product():
    robot = rd.load("panda")
    a = [0, 0, 0, 0.0825, -0.0825, 0, 0.088, 0]
    d = [0.333, 0, 0.316, 0, 0.384, 0, 0, 0.107]
    alpha = [0, -np.pi / 2, np.pi / 2, np.pi / 2, -np.pi / 2, np.pi / 2, np.pi / 2, 0]
    q, _, _ = states(robot, 3, count=4)
    T = rd.forward_kinematics(robot, q)
    for s in range(q.shape[0]):
        P = np.eye(4)
        for i, th in enumerate(np.append(q[s], 0.0)):
            P = P @ craig(alpha[i], a[i], th, d[i])
            assert close(T[s, i], P)


def test_ascher2_inertia_matrix_is_badly_conditioned():
    pr = PinRobot(rd.load("ascher2"))
    cond = [np.linalg.cond(pr.crba(np.array([0.0, q2]))) for q2 in np.linspace(0, 2 * np.pi, 181)]
    assert 1.27e4 < min(cond) < 1.29e4 and 4.70e4 < max(cond) < 4.72e4


def test_cartesian3p_inertia_is_constant_diagonal():
    robot = rd.load("cartesian3p")
    q, _, _ = states(robot, 1, count=4)
    zero = np.zeros_like(q)
    cols = [rd.inverse_dynamics(robot.replace(gravity=[0, 0, 0]), q, zero, np.broadcast_to(e, q.shape)) for e in np.eye(3)]
    A = np.stack(cols, -1)
    assert close(A, np.broadcast_to(np.diag([19.0, 9.0, 3.0]), A.shape))
    assert close(rd.gravity_torques(robot, q), np.broadcast_to([19 * 9.81, 0, 0], q.shape))


def test_pr_inertia_matrix_structure():
    """De Luca's PR robot: m11 = m1 + m2, m22 = I2 + m2 dc², m12 = -m2 dc cos q2 (here: rod up at q2 = 0,
    centre of mass at q1 z0 + dc (cos q2 x0 - sin q2 z0), so ∂p/∂q1 · ∂p/∂q2 = -dc cos q2)."""
    robot = rd.load("pr").replace(gravity=[0, 0, 0])
    q, _, _ = states(robot, 2, count=4)
    zero = np.zeros_like(q)
    A = np.stack([rd.inverse_dynamics(robot, q, zero, np.broadcast_to(e, q.shape)) for e in np.eye(2)], -1)
    m11, m22 = np.full(4, 7.0), np.full(4, 2 / 12 + 2 * 0.25)
    m12 = -2 * 0.5 * np.cos(q[:, 1])
    assert close(A[:, 0, 0], m11) and close(A[:, 1, 1], m22) and close(A[:, 0, 1], m12) and close(A[:, 1, 0], m12)


def test_panda_agrees_with_robotics_toolbox_panda():
    """RTB 1.5's Panda.py encodes the same Gaz et al. parameters independently: flange offset folded into
    link 7 (its centre of mass z = 0.061597 - 0.107 there) and a tool Tz(0.103) Rz(-pi/4)."""
    rtb = pytest.importorskip("roboticstoolbox")
    arm = rtb.models.DH.Panda()
    robot = rd.load("panda")
    tool = np.eye(4)
    tool[:3, :3] = [[np.cos(-np.pi / 4), -np.sin(-np.pi / 4), 0], [np.sin(-np.pi / 4), np.cos(-np.pi / 4), 0], [0, 0, 1]]
    tool[2, 3] = 0.103
    q, qd, qdd = states(robot, 8)
    for s in range(q.shape[0]):
        assert close(rd.forward_kinematics(robot, q[s])[-1] @ tool, arm.fkine(q[s]).A)
        assert close(rd.inverse_dynamics(robot, q[s], qd[s], qdd[s]), arm.rne(q[s], qd[s], qdd[s]))
        assert close(rd.gravity_torques(robot, q[s]), arm.gravload(q[s]))
