"""DH converters: Craig modified DH and standard DH ⇄ Khalil–Kleinfinger robots.

Independent checks: forward kinematics against the product of the original DH matrices written out here;
inverse dynamics against Pinocchio models built directly from the SDH table (inertia placed by Pinocchio
itself) and against Robotics Toolbox's DHRobot.rne (no gears, motor inertia or friction).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, strategies as st

import robodyn as rd
from robodyn.errors import ModelError
from robodyn.model.inertia import tensor_from_six
from tests.support.random_robots import random_inertia, random_robot

RTOL = 1e-10


def Rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]])


def Rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])


def Tx(x):
    T = np.eye(4)
    T[0, 3] = x
    return T


def Tz(z):
    T = np.eye(4)
    T[2, 3] = z
    return T


def close(a, b, rtol=RTOL):
    a, b = np.asarray(a), np.asarray(b)
    return np.linalg.norm(a - b) <= rtol * max(1.0, np.linalg.norm(b))


def random_table(seed, n, fixed=False, sdh=False):
    rng = np.random.default_rng(seed)
    sigma = rng.choice([0, 1], n)
    if fixed and n > 1 and not sdh:
        sigma[rng.integers(1, n)] = 2
    special = rng.random((2, n)) < 0.4
    alpha = np.where(special[0], rng.choice([0, np.pi / 2, -np.pi / 2], n), rng.uniform(-np.pi, np.pi, n))
    theta = np.where(special[1], 0.0, rng.uniform(-np.pi, np.pi, n))
    a = rng.uniform(-0.5, 0.5, n) * (rng.random(n) < 0.7)
    d = rng.uniform(-0.5, 0.5, n) * (rng.random(n) < 0.7)
    return sigma, alpha, a, theta, d, rng


def random_links(rng, n):
    out = [rd.com_from_standard(random_inertia(rng)) for _ in range(n)]
    return np.array([m for m, _, _ in out]), np.array([c for _, c, _ in out]), np.array([I for _, _, I in out])


def joint_values(sigma, rng):
    return rng.uniform(-2, 2, int(np.count_nonzero(np.asarray(sigma) != 2)))


# ---- Craig modified DH ---------------------------------------------------------------------------------


@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 7), fixed=st.booleans())
def test_craig_forward_kinematics_is_product_of_craig_matrices(seed, n, fixed):
    sigma, alpha, a, theta, d, rng = random_table(seed, n, fixed)
    robot = rd.model.from_craig_mdh(alpha, a, theta, d, sigma)
    q = joint_values(sigma, rng)
    T = np.eye(4)
    k = 0
    got = rd.forward_kinematics(robot, q)
    for i in range(n):
        th, di = theta[i], d[i]
        if sigma[i] != 2:
            th, di = (th + q[k], di) if sigma[i] == 0 else (th, di + q[k])
            k += 1
        T = T @ Rx(alpha[i]) @ Tx(a[i]) @ Rz(th) @ Tz(di)
        assert close(got[i], T)


@given(seed=st.integers(0, 2**31 - 1), fixed=st.booleans())
def test_craig_roundtrip(seed, fixed):
    robot = random_robot(seed, fixed=fixed)
    table = rd.model.to_craig_mdh(robot)
    again = rd.model.from_craig_mdh(**table)
    assert rd.dumps(again) == rd.dumps(robot)
    back = rd.model.to_craig_mdh(again)
    for key in ("alpha", "a", "theta", "d", "sigma"):
        np.testing.assert_array_equal(back[key], table[key])
    np.testing.assert_array_equal(table["a"], robot.d)
    np.testing.assert_array_equal(table["d"], robot.r)


def test_craig_with_masses_equals_standard_parameters():
    sigma, alpha, a, theta, d, rng = random_table(3, 4)
    m, c, I = random_links(rng, 4)
    robot = rd.model.from_craig_mdh(alpha, a, theta, d, sigma, masses=m, coms=c, inertias_com=I, name="x")
    expected = np.array([rd.standard_from_com(m[i], c[i], I[i]) for i in range(4)])
    assert close(robot.params, expected, 1e-14)
    six = I[:, [0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]]
    again = rd.model.from_craig_mdh(alpha, a, theta, d, sigma, masses=m, coms=c, inertias_com=six)
    np.testing.assert_array_equal(again.params, robot.params)


# ---- standard DH ----------------------------------------------------------------------------------------


def sdh_frames(a, alpha, d, theta, sigma, q):
    """SDH frames 1..n in the base: ∏ Rz(θ_i) Tz(d_i) Tx(a_i) Rx(α_i) with the joint variable added."""
    T, out = np.eye(4), []
    for i in range(len(a)):
        th, di = (theta[i] + q[i], d[i]) if sigma[i] == 0 else (theta[i], d[i] + q[i])
        T = T @ Rz(th) @ Tz(di) @ Tx(a[i]) @ Rx(alpha[i])
        out.append(T)
    return out


@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 7))
def test_standard_dh_forward_kinematics(seed, n):
    sigma, alpha, a, theta, d, rng = random_table(seed, n, sdh=True)
    robot = rd.model.from_standard_dh(a, alpha, d, theta, sigma)
    q = joint_values(sigma, rng)
    got = rd.forward_kinematics(robot, q)
    sdh = sdh_frames(a, alpha, d, theta, sigma, q)
    for i in range(n):
        # MDH frame i = SDH frame i · (Tx(a_i) Rx(α_i))⁻¹
        assert close(got[i] @ Tx(a[i]) @ Rx(alpha[i]), sdh[i])
    has_tool = a[-1] != 0 or alpha[-1] != 0
    assert robot.nf == n + has_tool
    assert robot.n == n
    if has_tool:
        assert close(got[-1], sdh[-1])
    assert rd.model.from_standard_dh(a, alpha, d, theta, sigma, tool_frame=False).nf == n


def pin_from_sdh(a, alpha, d, theta, sigma, m, c, I, Ia, gravity):
    """Pinocchio model built straight from an SDH table: joint i's frame is SDH_{i-1} Rz(θ_i) Tz(d_i) (· joint),
    link i's inertia is given in SDH_i = joint frame · Tx(a_i) Rx(α_i) and placed there by Pinocchio."""
    model = pin.Model()
    model.gravity = pin.Motion(np.asarray(gravity, float), np.zeros(3))
    parent, to_next = 0, np.eye(4)
    for i in range(len(a)):
        place = to_next @ Rz(theta[i]) @ Tz(d[i])
        jm = pin.JointModelRZ() if sigma[i] == 0 else pin.JointModelPZ()
        jid = model.addJoint(parent, jm, pin.SE3(place[:3, :3].copy(), place[:3, 3].copy()), f"j{i}")
        E = Tx(a[i]) @ Rx(alpha[i])
        body = pin.SE3(E[:3, :3].copy(), E[:3, 3].copy())
        model.appendBodyToJoint(jid, pin.Inertia(m[i], c[i].copy(), I[i].copy()), body)
        parent, to_next = jid, E
    model.armature = np.asarray(Ia, float).copy()
    return model, model.createData()


@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 7))
def test_standard_dh_inertia_transformation_against_pinocchio(seed, n):
    sigma, alpha, a, theta, d, rng = random_table(seed, n, sdh=True)
    m, c, I = random_links(rng, n)
    Ia = rng.uniform(0, 0.3, n)
    g = rng.normal(size=3)
    robot = rd.model.from_standard_dh(a, alpha, d, theta, sigma, masses=m, coms=c, inertias_com=I, Ia=Ia, gravity=g)
    model, data = pin_from_sdh(a, alpha, d, theta, sigma, m, c, I, Ia, g)
    for _ in range(3):
        q, qd, qdd = rng.uniform(-2, 2, (3, n))
        assert close(rd.inverse_dynamics(robot, q, qd, qdd), pin.rnea(model, data, q, qd, qdd))


def test_standard_dh_against_robotics_toolbox_rne():
    rtb = pytest.importorskip("roboticstoolbox")
    for seed in range(4):
        n = 6
        sigma, alpha, a, theta, d, rng = random_table(100 + seed, n, sdh=True)
        m, c, I = random_links(rng, n)
        links = []
        for i in range(n):
            kw = dict(a=a[i], alpha=alpha[i], m=m[i], r=c[i], I=I[i], G=1.0, Jm=0.0, B=0.0, Tc=[0.0, 0.0])
            links.append(rtb.RevoluteDH(d=d[i], offset=theta[i], **kw) if sigma[i] == 0 else rtb.PrismaticDH(theta=theta[i], offset=d[i], **kw))
        arm = rtb.DHRobot(links, gravity=[0, 0, -9.81])
        robot = rd.model.from_standard_dh(a, alpha, d, theta, sigma, masses=m, coms=c, inertias_com=I)
        q, qd, qdd = rng.uniform(-1.5, 1.5, (3, n))
        assert close(rd.forward_kinematics(robot, q)[-1], arm.fkine(q).A)
        assert close(rd.inverse_dynamics(robot, q, qd, qdd), arm.rne(q, qd, qdd))


@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 7), tool=st.booleans())
def test_standard_dh_roundtrip(seed, n, tool):
    sigma, alpha, a, theta, d, rng = random_table(seed, n, sdh=True)
    m, c, I = random_links(rng, n)
    Fv = rng.uniform(0, 1, n)
    robot = rd.model.from_standard_dh(a, alpha, d, theta, sigma, masses=m, coms=c, inertias_com=I, Fv=Fv, tool_frame=tool, name="r")
    table = rd.model.to_standard_dh(robot)
    has_tool = tool and (a[-1] != 0 or alpha[-1] != 0)
    for key, want in (("d", d), ("theta", theta), ("sigma", sigma), ("masses", m), ("Fv", Fv)):
        np.testing.assert_allclose(table[key], want, rtol=1e-14, atol=1e-15)
    np.testing.assert_array_equal(table["a"][:-1], a[:-1])
    np.testing.assert_array_equal(table["alpha"][:-1], alpha[:-1])
    if has_tool or (a[-1] == 0 and alpha[-1] == 0):
        assert close(table["coms"], c) and close(table["inertias_com"], I)
        assert (table["a"][-1], table["alpha"][-1]) == (a[-1], alpha[-1])
    again = rd.model.from_standard_dh(**table)
    assert again.nf == robot.nf
    for key in ("sigma", "alpha", "d", "theta", "r", "Fv", "qlim"):
        np.testing.assert_array_equal(getattr(again, key), getattr(robot, key))
    assert close(again.params, robot.params, 1e-13)
    assert again.joint_names == robot.joint_names


def test_massless_link_keeps_its_rotational_inertia():
    # PUMA 560 link 1 (Corke): m = 0, Iyy = 0.35 in SDH frame 1 (alpha = pi/2) → ZZ = 0.35 about joint 1.
    I = np.zeros((2, 3, 3))
    I[0, 1, 1] = 0.35
    I[1] = np.eye(3)
    robot = rd.model.from_standard_dh([0, 0.4], [np.pi / 2, 0], [0.6, 0], [0, 0], masses=[0, 2], coms=[[0, 0, 0], [0.1, 0, 0]], inertias_com=I)
    np.testing.assert_allclose(robot.params[0], [0, 0, 0, 0, 0, 0.35, 0, 0, 0, 0], atol=1e-15)
    table = rd.model.to_standard_dh(robot)
    assert table["masses"][0] == 0
    assert close(table["inertias_com"][0], I[0])


def test_converted_robot_matches_random_robot_dynamics():
    """from_standard_dh(**to_standard_dh(r)) has the same dynamics as r for an SDH-expressible robot."""
    base = random_robot(7, nf=5, prismatic=True)
    robot = base.replace(alpha=np.r_[0.0, base.alpha[1:]], d=np.r_[0.0, base.d[1:]],
                         qdlim=np.arange(1.0, base.n + 1), taulim=np.r_[np.inf, np.arange(2.0, base.n + 1)])
    again = rd.model.from_standard_dh(**rd.model.to_standard_dh(robot), tool_frame=False)
    assert np.array_equal(again.qdlim, robot.qdlim) and np.array_equal(again.taulim, robot.taulim)
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-2, 2, (3, 4, robot.n))
    assert close(rd.inverse_dynamics(again, q, qd, qdd), rd.inverse_dynamics(robot, q, qd, qdd))
    assert close(rd.forward_kinematics(again, q), rd.forward_kinematics(robot, q))


# ---- errors ---------------------------------------------------------------------------------------------


def test_to_standard_dh_errors():
    tree = random_robot(1, nf=4, tree=True)
    if tree.is_serial:
        tree = tree.replace(antecedent=[0, 1, 1, 2])
    with pytest.raises(ModelError, match="is a tree"):
        rd.model.to_standard_dh(tree)
    r = rd.model.from_craig_mdh([0.3, 0], [0, 0.2], [0, 0], [0, 0])
    with pytest.raises(ModelError, match="frame 1: alpha = 0.3.*alpha_1 = d_1 = 0"):
        rd.model.to_standard_dh(r)
    r = rd.model.from_craig_mdh([0, 0, 0], [0, 0.2, 0.1], [0, 0, 0], [0, 0, 0], sigma=[0, 2, 0])
    with pytest.raises(ModelError, match=r"only one fixed frame, the last; frames \[2\]"):
        rd.model.to_standard_dh(r)
    r = rd.model.from_craig_mdh([0, 0], [0, 0.2], [0, 0], [0, 0.107], sigma=[0, 2])
    with pytest.raises(ModelError, match="theta and r of the last fixed frame must be 0"):
        rd.model.to_standard_dh(r)
    r = rd.Robot(name="g", sigma=[0, 0], gamma=[0, 0.1])
    with pytest.raises(ModelError, match="frame 2: gamma = 0.1.*must be 0"):
        rd.model.to_craig_mdh(r)


def test_from_tables_errors():
    with pytest.raises(ModelError, match="DH column alpha has shape"):
        rd.model.from_standard_dh([0, 1], [0], [0, 0], [0, 0])
    with pytest.raises(ModelError, match=r"sigma = \[0, 2\]; expected 2 entries from \[0, 1\]"):
        rd.model.from_standard_dh([0, 1], [0, 0], [0, 0], [0, 0], sigma=[0, 2])
    with pytest.raises(ModelError, match="masses, coms and inertias_com go together"):
        rd.model.from_standard_dh([0], [0], [0], [0], masses=[1.0])
    with pytest.raises(ModelError, match="coms has shape"):
        rd.model.from_standard_dh([0], [0], [0], [0], masses=[1.0], coms=[0, 0, 0], inertias_com=[np.eye(3)])
    with pytest.raises(ModelError, match="unknown argument"):
        rd.model.from_standard_dh([0], [0], [0], [0], params=np.zeros((1, 10)))
    with pytest.raises(ModelError, match=r"Ia has shape \(2,\); expected \(1,\)"):
        rd.model.from_standard_dh([0], [0], [0], [0], Ia=[1, 2])
    with pytest.raises(ModelError, match="either params or masses"):
        rd.model.from_craig_mdh([0], [0], [0], [0], params=np.zeros((1, 10)), masses=[1], coms=[[0, 0, 0]], inertias_com=[np.eye(3)])
    with pytest.raises(ModelError, match=r"argument\(s\) \['r'\] not allowed"):
        rd.model.from_craig_mdh([0], [0], [0], [0], r=[1.0])
    with pytest.raises(ModelError, match="contains NaN"):
        rd.model.from_craig_mdh([np.nan], [0], [0], [0])
    with pytest.raises(ModelError, match="symmetric"):
        rd.model.from_craig_mdh([0], [0], [0], [0], masses=[1], coms=[[0, 0, 0]], inertias_com=[[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]])
    with pytest.raises(rd.NonPhysicalInertiaError, match="triangle"):
        rd.model.from_craig_mdh([0], [0], [0], [0], masses=[1], coms=[[0, 0, 0]], inertias_com=[tensor_from_six(np.array([1, 0, 0, 0.1, 0, 0.1]))])
