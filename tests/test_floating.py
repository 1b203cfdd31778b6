"""Floating and mobile bases (robodyn.dynamics.floating) against Pinocchio's free flyer, MuJoCo's free joint,
momentum conservation and the mobile-base identity; the model fields, files and errors."""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn.dynamics import floating as fl
from tests.support.pin_compare import assert_rel
from tests.support.floating import URDFS, legged_robot, random_floating, random_free_state, solo12_on_feet
from tests.support.random_robots import random_inertia, random_robot

pin = pytest.importorskip("pinocchio")


#: Legged robots and humanoids of example-robot-data (anymal, go1 and hyq publish inertias that violate the triangle
#: inequality by round-off: loaded with strict=False).
LEGGED = ("solo12.urdf", "anymal.urdf", "go1.urdf", "a1.urdf", "hyq_no_sensors.urdf", "talos_reduced.urdf", "icub_reduced.urdf",
          "g1_29dof_rev_1_0.urdf")


class PinFree:
    """A Pinocchio free-flyer model and the permutation of its velocity vector into robodyn's order."""

    def __init__(self, robot, model):
        self.model, self.data = model, model.createData()
        idx = np.array([model.joints[model.getJointId(name)].idx_v for name in robot.q_names])
        self.idx, self.perm = idx, np.concatenate([np.arange(6), idx])

    def q(self, q):
        out = np.empty(self.model.nq)
        out[:7], out[self.idx + 1] = q[:7], q[7:]
        return out

    def v(self, v):
        out = np.empty(self.model.nv)
        out[self.perm] = v
        return out

    def check(self, robot, q, v, a, gravity=None):
        """Every floating-base quantity of robodyn at the states (S, ·) equals Pinocchio's, 1e-10 relative."""
        tau = fl.floating_inverse_dynamics(robot, q, v, a, gravity=gravity)
        M = fl.floating_inertia_matrix(robot, q)
        com, Jc, Ag = rd.floating.center_of_mass(robot, q), rd.floating.center_of_mass_jacobian(robot, q), rd.floating.centroidal_momentum_matrix(robot, q)
        m, d, p = self.model, self.data, self.perm
        for s in range(q.shape[0]):
            qp, vp, ap = self.q(q[s]), self.v(v[s]), self.v(a[s])
            tp = pin.rnea(m, d, qp, vp, ap)
            assert_rel(tau[s], tp[p])
            Mp = pin.crba(m, d, qp)
            Mp = np.triu(Mp) + np.triu(Mp, 1).T
            assert_rel(M[s], Mp[np.ix_(p, p)])
            assert_rel(fl.floating_forward_dynamics(robot, q[s], v[s], tau[s]), pin.aba(m, d, qp, vp, tp)[p])
            assert_rel(com[s], pin.centerOfMass(m, d, qp))
            assert_rel(Jc[s], pin.jacobianCenterOfMass(m, d, qp)[:, p])
            assert_rel(Ag[s], pin.computeCentroidalMap(m, d, qp)[:, p])
        assert_rel(fl.floating_forward_dynamics(robot, q, v, tau, gravity=gravity), a, 1e-9)  # batched ABA inverts RNEA


@pytest.mark.parametrize("name", LEGGED)
def test_example_robot_data_against_pinocchio_free_flyer(name):
    robot = legged_robot(name)
    assert robot.floating and robot.base_params[9] >= 0
    robot = robot.replace(Fv=None, Fc=None)  # Pinocchio's rnea/aba leave the URDF damping and friction out
    model = pin.buildModelFromUrdf(URDFS[name], pin.JointModelFreeFlyer())
    assert model.nv == robot.n + 6
    q, v, a = random_free_state(robot.n, 7, (3,))
    PinFree(robot, model).check(robot, q, v, a)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), tree=st.booleans())
def test_random_robots_against_pinocchio_free_flyer(seed, tree):
    robot = random_floating(seed, tree)
    model, mapping = rd.to_pinocchio(robot)
    q, v, a = random_free_state(robot.n, seed, (2,))
    PinFree(robot, model).check(robot, q, v, a)
    # rd.to_pinocchio's own conversions agree with the permutation by names
    assert_rel(mapping.v_from_pinocchio_floating(mapping.v_to_pinocchio_floating(v)), v, 0)
    assert np.array_equal(mapping.q_to_pinocchio_floating(q[0]), PinFree(robot, model).q(q[0]))


def test_rotor_inertia_and_friction_enter_the_joint_rows():
    robot = random_floating(3)
    robot = robot.replace(Ia=np.where(robot.sigma != 2, 0.25, 0.0), Fv=np.where(robot.sigma != 2, 0.5, 0.0))
    q, v, a = random_free_state(robot.n, 11)
    bare = robot.replace(Ia=None, Fv=None)
    diff = fl.floating_inverse_dynamics(robot, q, v, a) - fl.floating_inverse_dynamics(bare, q, v, a)
    assert_rel(diff, np.concatenate([np.zeros(6), 0.25 * a[6:] + 0.5 * v[6:]]))
    M, Mb = fl.floating_inertia_matrix(robot, q), fl.floating_inertia_matrix(bare, q)
    assert_rel(M - Mb, np.diag(np.concatenate([np.zeros(6), np.full(robot.n, 0.25)])))
    tau = fl.floating_inverse_dynamics(robot, q, v, a)
    assert_rel(fl.floating_forward_dynamics(robot, q, v, tau), a, 1e-9)


def test_locked_block_is_the_composite_inertia_and_independent_of_the_base_pose():
    robot = random_floating(5)
    q, _, _ = random_free_state(robot.n, 5, (2,))
    q[1, 7:] = q[0, 7:]
    M = fl.floating_inertia_matrix(robot, q)
    assert_rel(M[0], M[1], 1e-13)
    mass = robot.base_params[9] + robot.M.sum()
    assert_rel(M[0, :3, :3], mass * np.eye(3), 1e-13)
    assert np.all(np.linalg.eigvalsh(M) > 0)


def test_batched_equals_one_state_at_a_time():
    robot = random_floating(8)
    q, v, a = random_free_state(robot.n, 8, (2, 3))
    tau = fl.floating_inverse_dynamics(robot, q, v, a)
    assert tau.shape == (2, 3, robot.n + 6)
    assert fl.floating_inertia_matrix(robot, q).shape == (2, 3, robot.n + 6, robot.n + 6)
    assert rd.floating.centroidal_momentum_matrix(robot, q).shape == (2, 3, 6, robot.n + 6)
    assert rd.floating.center_of_mass_jacobian(robot, q).shape == (2, 3, 3, robot.n + 6)
    for i in range(2):
        for j in range(3):
            assert_rel(tau[i, j], fl.floating_inverse_dynamics(robot, q[i, j], v[i, j], a[i, j]), 1e-13)
    M, acc = fl.floating_inertia_matrix(robot, q), fl.floating_forward_dynamics(robot, q, v, tau)
    for i, j in ((0, 0), (1, 2)):  # one float64 state runs its own path (Python floats around the kernels)
        assert_rel(fl.floating_inertia_matrix(robot, q[i, j]), M[i, j], 1e-13)
        assert_rel(fl.floating_forward_dynamics(robot, q[i, j], v[i, j], tau[i, j]), acc[i, j], 1e-12)
        assert_rel(fl.floating_inverse_dynamics(robot, q[i, j], v[i, j], a[i, j], gravity=np.array([1.0, 2.0, -3.0])),
                   fl.floating_inverse_dynamics(robot, q[i:i + 1, j], v[i:i + 1, j], a[i:i + 1, j], gravity=[1.0, 2.0, -3.0])[0], 1e-13)
    # one configuration broadcast against a batch of velocities
    assert fl.floating_inverse_dynamics(robot, q[0, 0], v, a).shape == (2, 3, robot.n + 6)


def test_mobile_base_equals_the_floating_system_with_its_motion_imposed():
    floating = random_floating(13)
    mobile = floating.replace(base="mobile")
    q, v, a = random_free_state(floating.n, 13, (4,))
    tau = fl.floating_inverse_dynamics(floating, q, v, a)
    assert_rel(fl.floating_inverse_dynamics(mobile, q, v, a), tau, 0)
    # the floating system driven by the wrench tau[:6] moves its base with a[:6]; the mobile base given that motion
    # (joint torques only, q̈ by the joint-space inertia matrix) moves its joints as the floating one does (ABA)
    acc = fl.floating_forward_dynamics(mobile, q, v, tau[..., 6:], base_acceleration=a[..., :6])
    assert_rel(acc, a, 1e-9)
    assert_rel(acc, fl.floating_forward_dynamics(floating, q, v, tau), 1e-9)


def test_fixed_base_center_of_mass_from_forward_kinematics():
    robot = random_robot(21, tree=True, fixed=True)
    q = np.random.default_rng(21).uniform(-2, 2, (3, robot.n))
    T = rd.forward_kinematics(robot, q)
    weighted = np.einsum("...jab,jb->...a", T[..., :3, :3], robot.MS) + np.einsum("...ja,j->...a", T[..., :3, 3], robot.M)
    assert_rel(rd.floating.center_of_mass(robot, q), weighted / robot.M.sum())
    J = rd.floating.center_of_mass_jacobian(robot, q)
    assert J.shape == (3, 3, robot.n)
    # columns: the CoM's velocity, by a central difference of the CoM along each joint
    h, k = 1e-6, 1
    dq = np.zeros(robot.n)
    dq[k] = h
    fd = (rd.floating.center_of_mass(robot, q + dq) - rd.floating.center_of_mass(robot, q - dq)) / (2 * h)
    assert_rel(J[..., k], fd, 1e-8)


def _quat_rate(quat, w):
    """d/dt of (x, y, z, w) for the angular velocity w in the body frame: ½ q ⊗ (w, 0)."""
    xyz, s = quat[:3], quat[3]
    return 0.5 * np.concatenate([s * w + np.cross(xyz, w), [-xyz @ w]])


def test_free_floating_robot_conserves_momentum_and_energy():
    """No gravity, no contact: linear and angular momentum about the centre of mass (world axes) stay constant
    whatever the joint torques, and the energy stays constant without them (DOP853, rtol 1e-12: drift < 1e-9)."""
    from scipy.integrate import solve_ivp

    robot = random_floating(31, tree=True).replace(gravity=[0.0, 0.0, 0.0], Fv=None, Fc=None)
    n = robot.n
    q0, v0, _ = random_free_state(n, 31)
    torques = (np.random.default_rng(31).normal(size=n), np.zeros(n))
    for tau_joints in torques:
        tau = np.concatenate([np.zeros(6), tau_joints])

        def rhs(_, x):
            q, v = x[: n + 7], x[n + 7:]
            q = q.copy()
            q[3:7] /= np.linalg.norm(q[3:7])
            R = fl.quaternion_matrix(q[3:7])
            qdot = np.concatenate([R @ v[:3], _quat_rate(q[3:7], v[3:6]), v[6:]])
            return np.concatenate([qdot, fl.floating_forward_dynamics(robot, q, v, tau)])

        sol = solve_ivp(rhs, (0.0, 1.0), np.concatenate([q0, v0]), method="DOP853", rtol=1e-12, atol=1e-12,
                        dense_output=False, t_eval=np.linspace(0, 1, 11))
        assert sol.success
        X = sol.y.T
        qs, vs = X[:, : n + 7].copy(), X[:, n + 7:]
        qs[:, 3:7] /= np.linalg.norm(qs[:, 3:7], axis=-1, keepdims=True)
        h = np.einsum("sij,sj->si", rd.floating.centroidal_momentum_matrix(robot, qs), vs)
        assert np.max(np.abs(h - h[0])) < 1e-9 * max(1.0, np.max(np.abs(h[0])))
        if not np.any(tau_joints):
            E = 0.5 * np.einsum("si,sij,sj->s", vs, fl.floating_inertia_matrix(robot, qs), vs)
            assert np.max(np.abs(E - E[0])) < 1e-9 * E[0]


def test_mujoco_free_joint_agrees():
    mujoco = pytest.importorskip("mujoco")
    robot = random_floating(41).replace(Ia=None)
    model = mujoco.MjModel.from_xml_string(rd.to_mujoco_xml(robot))
    data = mujoco.MjData(model)
    assert model.nq == robot.n + 7 and model.nv == robot.n + 6
    adr = np.array([model.joint(name).qposadr[0] for name in robot.q_names])
    vadr = np.array([model.joint(name).dofadr[0] for name in robot.q_names])
    q, v, a = random_free_state(robot.n, 41, (3,))
    tau = fl.floating_inverse_dynamics(robot, q, v, a)
    M = fl.floating_inertia_matrix(robot, q)
    for s in range(3):
        R = fl.quaternion_matrix(q[s, 3:7])
        # MuJoCo's free joint: quaternion (w, x, y, z); linear velocity, acceleration and force in world axes
        data.qpos[:3], data.qpos[3:7], data.qpos[adr] = q[s, :3], np.roll(q[s, 3:7], 1), q[s, 7:]
        vl, w = v[s, :3], v[s, 3:6]
        data.qvel[:3], data.qvel[3:6], data.qvel[vadr] = R @ vl, w, v[s, 6:]
        data.qacc[:3], data.qacc[3:6], data.qacc[vadr] = R @ (a[s, :3] + np.cross(w, vl)), a[s, 3:6], a[s, 6:]
        mujoco.mj_inverse(model, data)
        f = data.qfrc_inverse
        assert_rel(np.concatenate([R.T @ f[:3], f[3:6], f[vadr]]), tau[s])
        Mm = np.zeros((model.nv, model.nv))
        mujoco.mj_fullM(model, data, Mm)
        k = np.concatenate([np.arange(6), vadr])
        T = np.eye(robot.n + 6)
        T[:3, :3] = R  # qvel = T v
        assert_rel(T.T @ Mm[np.ix_(k, k)] @ T, M[s])


# ---- model, files, errors -----------------------------------------------------------------------------------------


def test_robot_base_fields_repr_and_validation():
    robot = rd.load("rx90")
    assert robot.base == "fixed" and not robot.floating and np.array_equal(robot.base_params, np.zeros(10))
    flo = rd.load("rx90", floating=True)
    assert flo.floating and "base=floating" in repr(flo) and "base" not in repr(robot)
    with pytest.raises(rd.ModelError, match="base"):
        robot.replace(base="flying")
    with pytest.raises(rd.ModelError, match="base_params"):
        robot.replace(base_params=np.zeros(9))
    with pytest.raises(rd.NonPhysicalInertiaError, match="base body"):
        robot.replace(base_params=[0, 0, 0, 0, 0, 0, 0, 0, 0, -1.0])
    with pytest.raises(ValueError, match="read-only"):
        flo.base_params[0] = 1.0  # read-only like every array of a robot
    import pickle

    again = pickle.loads(pickle.dumps(flo.replace(base_params=random_inertia(np.random.default_rng(0)))))
    assert again.floating and again.base_params[9] > 0


def test_model_file_round_trip_and_errors():
    robot = random_floating(51)
    again = rd.loads(rd.dumps(robot))
    assert again.base == "floating"
    np.testing.assert_array_equal(again.base_params, robot.base_params)
    assert rd.loads(rd.dumps(robot.replace(base="mobile"))).base == "mobile"
    text = "name: f\nfloating: true\nbase_link: {mass: 2, com: [0.1, 0, 0], inertia_com: [0.1, 0, 0, 0.2, 0, 0.3]}\n" \
           "joints: [{sigma: 0}]\nlinks: [{M: 1, XX: 0.1, YY: 0.1, ZZ: 0.1}]\n"
    r = rd.loads(text)
    assert r.floating
    assert_rel(r.base_params, rd.standard_from_com(2.0, [0.1, 0, 0], [0.1, 0, 0, 0.2, 0, 0.3]), 0)
    for bad, match in (("floating: yes", "floating"), ("base: flying", "base"), ("base: fixed\nfloating: true", "floating"),
                       ("base_link: {M: 1, mass: 2, com: [0,0,0], inertia_com: [1,0,0,1,0,1]}", "either"),
                       ("base_link: {Ia: 1}", "unknown field")):
        with pytest.raises(rd.ModelFileError, match=match):
            rd.loads(bad + "\njoints: [{sigma: 0}]\nlinks: [{M: 1, XX: 0.1, YY: 0.1, ZZ: 0.1}]\n")


def test_urdf_root_link_becomes_the_base_body():
    urdf = """<robot name="hop">
      <link name="torso"><inertial><origin xyz="0.1 0 0.05" rpy="0 0 0.3"/><mass value="3"/>
        <inertia ixx="0.2" ixy="0" ixz="0" iyy="0.3" iyz="0" izz="0.4"/></inertial></link>
      <link name="leg"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
      <joint name="hip" type="revolute"><parent link="torso"/><child link="leg"/><origin xyz="0 0.1 -0.2"/>
        <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
    </robot>"""
    fixed, floating = rd.from_urdf(urdf), rd.from_urdf(urdf, floating=True)
    assert not np.any(fixed.base_params) and floating.floating
    R = np.array([[np.cos(0.3), -np.sin(0.3), 0], [np.sin(0.3), np.cos(0.3), 0], [0, 0, 1]])
    assert_rel(floating.base_params, rd.standard_from_com(3.0, [0.1, 0, 0.05], R @ np.diag([0.2, 0.3, 0.4]) @ R.T), 1e-15)
    with pytest.raises(rd.InputError, match="floating"):
        rd.from_urdf(urdf, floating=True, base="leg")


def test_bad_inputs_raise_named_errors():
    robot = random_floating(61)
    n = robot.n
    q, v, a = random_free_state(n, 61)
    with pytest.raises(rd.InputError, match="quaternion"):
        fl.floating_inverse_dynamics(robot, np.concatenate([q[:3], 2 * q[3:7], q[7:]]), v, a)
    with pytest.raises(rd.InputError, match=rf"\(\.\.\., {n + 7}\)"):
        fl.floating_inverse_dynamics(robot, q[:-1], v, a)
    with pytest.raises(rd.InputError, match="'v'"):
        fl.floating_inverse_dynamics(robot, q, v[:-1], a)
    with pytest.raises(rd.InputError, match="NaN"):
        fl.floating_inertia_matrix(robot, np.where(np.arange(n + 7) == 0, np.nan, q))
    with pytest.raises(rd.InputError, match="fixed base"):
        fl.floating_inverse_dynamics(rd.load("rx90"), q, v, a)
    with pytest.raises(rd.InputError, match="base_acceleration"):
        fl.floating_forward_dynamics(robot.replace(base="mobile"), q, v, np.zeros(n))
    with pytest.raises(rd.InputError, match="mobile"):
        fl.floating_forward_dynamics(robot, q, v, np.zeros(n + 6), base_acceleration=np.zeros(6))
    with pytest.raises(rd.InputError):
        rd.floating.center_of_mass(robot, q[7:])
    # a quaternion within the tolerance is normalised: the same result
    q2 = q.copy()
    q2[3:7] *= 1 + 1e-8
    assert_rel(fl.floating_inverse_dynamics(robot, q2, v, a), fl.floating_inverse_dynamics(robot, q, v, a), 1e-7)


# ---- frames and rigid contacts --------------------------------------------------------------------------------------


def _pin_contact(P, frame_ids, q, v, tau, rows):
    """Pinocchio's frame Jacobians, J̇v (classical, world-aligned) and constrained forward dynamics."""
    m, d = P.model, P.data
    qp, vp = P.q(q), P.v(v)
    pin.computeJointJacobians(m, d, qp)
    pin.forwardKinematics(m, d, qp, vp, np.zeros(m.nv))
    pin.updateFramePlacements(m, d)
    J = np.concatenate([pin.getFrameJacobian(m, d, f, pin.LOCAL_WORLD_ALIGNED)[:rows] for f in frame_ids])
    gam = []
    for f in frame_ids:
        acc = pin.getFrameClassicalAcceleration(m, d, f, pin.LOCAL_WORLD_ALIGNED)
        gam.append(np.concatenate([acc.linear, acc.angular])[:rows])
    a = pin.forwardDynamics(m, d, qp, vp, P.v(tau), J, np.concatenate(gam))
    return J[:, P.perm], np.concatenate(gam), a[P.perm], np.array(d.lambda_c)


@pytest.mark.parametrize("kind", ["point", "6d"])
def test_random_robot_contacts_against_pinocchio(kind):
    robot = random_floating(71, tree=True)
    model, mapping = rd.to_pinocchio(robot)
    P = PinFree(robot, model)
    q, v, _ = random_free_state(robot.n, 71)
    tau = np.concatenate([np.zeros(6), np.random.default_rng(71).normal(size=robot.n)])
    frames = [robot.nf] if kind == "6d" else [robot.nf, 1]
    ids = [int(mapping.frame_ids[f - 1]) for f in frames]
    rows = 3 if kind == "point" else 6
    J, gam, a, lam = _pin_contact(P, ids, q, v, tau, rows)
    assert_rel(np.concatenate([fl.floating_jacobian(robot, q, f)[:rows] for f in frames]), J)
    res = fl.contact_forward_dynamics(robot, q, v, tau, frames, kind=kind)
    assert_rel(res.acceleration, a, 1e-9)
    assert_rel(res.forces.reshape(-1), lam, 1e-9)
    # the contact origins do not accelerate, and the inverse dynamics with the contact wrenches gives Γ back
    assert_rel(J @ res.acceleration + gam, np.zeros(rows * len(frames)), 1e-9)
    w = fl.wrenches_at_frames(robot, q, frames, res.forces)
    assert_rel(fl.floating_inverse_dynamics(robot, q, v, res.acceleration, wrenches=w), tau, 1e-9)


def test_quadruped_standing_on_four_feet_against_pinocchio():
    if "solo12.urdf" not in URDFS:
        pytest.skip("solo12 is not in the installed example-robot-data")
    robot = rd.load(URDFS["solo12.urdf"], floating=True).replace(Fv=None, Fc=None)
    model = pin.buildModelFromUrdf(URDFS["solo12.urdf"], pin.JointModelFreeFlyer())
    P = PinFree(robot, model)
    feet = ["FL_ANKLE", "FR_ANKLE", "HL_ANKLE", "HR_ANKLE"]
    q, v, _ = random_free_state(robot.n, 81, (2,))
    tau = np.concatenate([np.zeros((2, 6)), np.random.default_rng(81).normal(size=(2, robot.n))], -1)
    res = fl.contact_forward_dynamics(robot, q, v, tau, feet)
    assert res.acceleration.shape == (2, robot.n + 6) and res.forces.shape == (2, 4, 3)
    for s in range(2):
        _, _, a, lam = _pin_contact(P, [model.getFrameId(f) for f in feet], q[s], v[s], tau[s], 3)
        assert_rel(res.acceleration[s], a, 1e-9)
        assert_rel(res.forces[s].reshape(-1), lam, 1e-9)


def test_contact_errors():
    robot = random_floating(91)
    q, v, _ = random_free_state(robot.n, 91)
    tau = np.zeros(robot.n + 6)
    with pytest.raises(rd.InputError, match="kind"):
        fl.contact_forward_dynamics(robot, q, v, tau, [1], kind="line")
    with pytest.raises(rd.InputError, match="frame"):
        fl.contact_forward_dynamics(robot, q, v, tau, ["no such frame"])
    with pytest.raises(rd.ModelError, match="redundant"):
        fl.contact_forward_dynamics(robot, q, v, tau, [1, 1], kind="6d")
    with pytest.raises(rd.InputError, match="forces"):
        fl.wrenches_at_frames(robot, q, [1], np.zeros((2, 3)))


def test_redundant_point_contacts_are_named_not_solved():
    """The same point twice, or a third point contact on a link already held at two points and welded ('6d'):
    the contact forces are not determined.  Before the rank check the KKT solve returned forces of ±1e15 N."""
    robot = random_floating(91)
    q, v, _ = random_free_state(robot.n, 91, (4,))
    tau = np.zeros(robot.n + 6)
    with pytest.raises(rd.ModelError, match=r"\b1 \(contact 2\) are redundant"):
        fl.contact_forward_dynamics(robot, q, v, tau, [1, 1], kind="point")
    with pytest.raises(rd.ModelError, match=r"\(contact 3\) are redundant"):
        fl.contact_forward_dynamics(robot, q, v, tau, [2, 1, 1], kind="6d")
    # independent contacts are solved: the constraint holds, J a + γ = 0
    res = fl.contact_forward_dynamics(robot, q, v, tau, [1, robot.nf], kind="point")
    assert np.all(np.isfinite(res.forces)) and res.forces.shape == (4, 2, 3)
    if "solo12.urdf" in URDFS:
        solo = rd.load(URDFS["solo12.urdf"], floating=True)
        q0 = np.zeros(solo.n + 7)
        q0[6] = 1.0  # identity quaternion (x, y, z, w)
        with pytest.raises(rd.ModelError, match="'FL_ANKLE' \\(contact 2\\) are redundant"):
            rd.floating.contact_forward_dynamics(solo, q0, np.zeros(solo.n + 6), np.zeros(solo.n + 6), ["FL_ANKLE", "FL_ANKLE"],
                                        kind="point")


# ---- regressor and base-only identification -------------------------------------------------------------------------


def test_floating_regressor_times_parameters_is_the_inverse_dynamics():
    robot = random_floating(101)
    robot = robot.replace(Ia=np.where(robot.sigma != 2, 0.2, 0.0), Fv=np.where(robot.sigma != 2, 0.3, 0.0),
                          Fc=np.where(robot.sigma != 2, 0.1, 0.0), Foff=np.where(robot.sigma != 2, -0.05, 0.0))
    q, v, a = random_free_state(robot.n, 101, (5,))
    Y = rd.floating.floating_regressor(robot, q, v, a)
    K = rd.floating.floating_parameter_vector(robot)
    assert Y.shape == (5, robot.n + 6, K.size) and len(rd.floating.floating_parameter_names(robot)) == K.size
    assert rd.floating.floating_parameter_names(robot)[:10] == [f"{p}0" for p in rd.PARAMETER_NAMES]
    assert_rel(Y @ K, fl.floating_inverse_dynamics(robot, q, v, a))
    # the base rows hold no rotor inertia, friction or joint-torque terms
    from robodyn.parameters.regressor import standard_parameter_names
    names = rd.floating.floating_parameter_names(robot)
    joint_terms = [k for k, nm in enumerate(names) if nm.startswith(("Ia", "Fc", "Fv", "Foff"))]
    assert np.all(Y[:, :6, joint_terms] == 0) and len(names) == 10 + len(standard_parameter_names(robot))


def test_quadruped_base_only_identification_from_contact_wrenches():
    """Ayusawa et al.: the base's six equations with measured contact wrenches, no joint torque, determine every
    inertial parameter that the whole model determines (same rank), and noise-free data recover them to 1e-8."""
    from robodyn.identification.floating import inertial_columns, inertial_parameter_vector

    if "solo12.urdf" not in URDFS:
        pytest.skip("solo12 is not in the installed example-robot-data")
    robot, feet, q, v, motion = solo12_on_feet()  # physically consistent data: zero base wrench
    ident = rd.floating.identify_from_base(robot, q, v, motion.acceleration, feet, motion.forces)
    truth = ident.base_values(inertial_parameter_vector(robot))
    assert_rel(ident.values, truth, 1e-8)
    assert ident.residual < 1e-9
    Y = rd.floating.floating_regressor(robot, q, v, motion.acceleration, friction=False)[..., inertial_columns(robot)]
    assert np.linalg.matrix_rank(Y.reshape(-1, Y.shape[-1])) == len(ident.names)
    with pytest.raises(rd.InputError, match="together"):
        rd.floating.identify_from_base(robot, q, v, motion.acceleration, feet)


def test_reduced_inverse_dynamics_is_the_floating_forward_dynamics_inverted():
    """Joint torques from joint accelerations with the base free (Khalil's floating-base Newton–Euler): the ABA
    under those torques and a zero base wrench gives the same joint accelerations and base acceleration."""
    robot = random_floating(121)
    robot = robot.replace(Fv=np.where(robot.sigma != 2, 0.3, 0.0), Ia=np.where(robot.sigma != 2, 0.1, 0.0))
    q, v, a = random_free_state(robot.n, 121, (3,))
    acc, tau = rd.floating.reduced_inverse_dynamics(robot, q, v, a[..., 6:])
    assert acc.shape == (3, robot.n + 6) and tau.shape == (3, robot.n)
    assert_rel(acc[..., 6:], a[..., 6:], 0)
    full = np.concatenate([np.zeros((3, 6)), tau], -1)
    assert_rel(fl.floating_forward_dynamics(robot, q, v, full), acc, 1e-9)
    assert_rel(fl.floating_inverse_dynamics(robot, q, v, acc)[..., :6], np.zeros((3, 6)), 1e-9)


def test_standing_quadruped_conserves_energy_under_rigid_contacts():
    """solo12 held at its four feet (bilateral point contacts), gravity, no joint torque and no friction: the contact
    forces do no work, so kinetic plus potential energy stays constant (DOP853, 0.1 s, drift < 1e-7 relative) and the
    feet stay where they are."""
    from scipy.integrate import solve_ivp

    if "solo12.urdf" not in URDFS:
        pytest.skip("solo12 is not in the installed example-robot-data")
    robot = rd.load(URDFS["solo12.urdf"], floating=True).replace(Fv=None, Fc=None)
    feet = ["FL_ANKLE", "FR_ANKLE", "HL_ANKLE", "HR_ANKLE"]
    n = robot.n
    q0, v0, _ = random_free_state(n, 131)
    q0[7:] = np.tile([0.0, 0.8, -1.6], 4)
    J = np.concatenate([fl.floating_jacobian(robot, q0, f)[:3] for f in feet])
    v0 = 0.5 * (v0 - np.linalg.pinv(J) @ (J @ v0))  # a velocity the contacts allow
    g = robot.gravity
    mass = robot.base_params[9] + robot.M.sum()

    def energy(q, v):
        return 0.5 * v @ fl.floating_inertia_matrix(robot, q) @ v - mass * g @ rd.floating.center_of_mass(robot, q)

    def rhs(_, x):
        q, v = x[: n + 7].copy(), x[n + 7:]
        q[3:7] /= np.linalg.norm(q[3:7])
        R = fl.quaternion_matrix(q[3:7])
        qdot = np.concatenate([R @ v[:3], _quat_rate(q[3:7], v[3:6]), v[6:]])
        return np.concatenate([qdot, fl.contact_forward_dynamics(robot, q, v, np.zeros(n + 6), feet).acceleration])

    sol = solve_ivp(rhs, (0.0, 0.1), np.concatenate([q0, v0]), method="DOP853", rtol=1e-10, atol=1e-12,
                    t_eval=[0.0, 0.05, 0.1])
    assert sol.success
    qs = sol.y[: n + 7].T.copy()
    qs[:, 3:7] /= np.linalg.norm(qs[:, 3:7], axis=-1, keepdims=True)
    E = [energy(qs[k], sol.y[n + 7:, k]) for k in range(3)]
    assert max(abs(e - E[0]) for e in E) < 1e-7 * abs(E[0])
    idx = [robot.frame_index(f) - 1 for f in feet]
    T = rd.forward_kinematics(robot, qs[:, 7:])[:, idx][..., :3, 3]  # feet in R_0
    P = qs[:, None, :3] + np.einsum("sab,skb->ska", fl.quaternion_matrix(qs[:, 3:7]), T)
    assert np.max(np.abs(P - P[0])) < 1e-6  # m


def test_quadruped_identification_from_joint_torques_and_contact_wrenches():
    from robodyn.identification.floating import identify_floating

    if "solo12.urdf" not in URDFS:
        pytest.skip("solo12 is not in the installed example-robot-data")
    robot = rd.load(URDFS["solo12.urdf"], floating=True)
    moving = robot.sigma != 2
    robot = robot.replace(Ia=0.01 * moving, Fv=0.05 * moving, Fc=0.02 * moving, Foff=-0.01 * moving)
    feet = ["FL_ANKLE", "FR_ANKLE", "HL_ANKLE", "HR_ANKLE"]
    S = 30
    q, v, _ = random_free_state(robot.n, 141, (S,))
    tau = np.concatenate([np.zeros((S, 6)), np.random.default_rng(141).normal(size=(S, robot.n))], -1)
    motion = fl.contact_forward_dynamics(robot, q, v, tau, feet)
    ident = identify_floating(robot, q, v, motion.acceleration, tau, feet, motion.forces)
    assert_rel(ident.values, ident.base_values(rd.floating.floating_parameter_vector(robot)), 1e-8)
    assert {"Ia1", "Fv1", "Fc1", "Foff1"} <= set(rd.floating.floating_parameter_names(robot)) and "Fv1" in ident.names
    base_only = rd.floating.identify_from_base(robot, q, v, motion.acceleration, feet, motion.forces)
    assert len(ident.names) == len(base_only.names) + 4 * robot.n  # + Ia, Fc, Fv, Foff of every joint


def test_jax_floating_functions_equal_numpy_and_differentiate():
    jax = pytest.importorskip("jax")
    rj = pytest.importorskip("robodyn.jax")
    robot = random_floating(151, nf=3)  # small: jit compilation dominates
    q, v, a = random_free_state(robot.n, 151, (3,))
    tau = fl.floating_inverse_dynamics(robot, q, v, a)
    with jax.enable_x64(True) if hasattr(jax, "enable_x64") else jax.experimental.enable_x64():
        assert_rel(rj.floating_inverse_dynamics(robot, q, v, a), tau, 1e-12)
        assert_rel(rj.floating_inertia_matrix(robot, q), fl.floating_inertia_matrix(robot, q), 1e-12)
        assert_rel(rj.floating_forward_dynamics(robot, q, v, tau), a, 1e-9)
        # ∂τ/∂v (the first row) against a central difference of the NumPy function
        Jv = jax.jacfwd(lambda x: rj.floating_inverse_dynamics(robot, q[0], x, a[0]))(v[0])
        h = 1e-6
        e = np.zeros(robot.n + 6)
        e[4] = h
        fd = (fl.floating_inverse_dynamics(robot, q[0], v[0] + e, a[0]) - fl.floating_inverse_dynamics(robot, q[0], v[0] - e, a[0])) / (2 * h)
        assert_rel(np.asarray(Jv)[:, 4], fd, 1e-7)


def test_robodyn_info_shows_the_base(tmp_path):
    import json

    from typer.testing import CliRunner

    from robodyn.cli import app

    path = rd.save(random_floating(161), tmp_path / "floating.yaml")
    out = CliRunner().invoke(app, ["info", str(path), "--json"])
    assert out.exit_code == 0
    doc = json.loads(out.stdout)
    assert doc["base"] == "floating" and doc["base_params"]["M"] > 0
    text = CliRunner().invoke(app, ["info", str(path)]).stdout
    assert "base: floating" in text and "world frame" in text
    assert json.loads(CliRunner().invoke(app, ["info", "rx90", "--json"]).stdout)["base"] == "fixed"


def test_public_dynamics_dispatch_on_a_moving_base():
    """rd.inverse_dynamics, rd.inertia_matrix and rd.forward_dynamics take free-flyer arrays when the robot floats
    (the dispatch lives in robodyn.dynamics.api)."""
    robot = random_floating(171)
    q, v, a = random_free_state(robot.n, 171, (2,))
    tau = rd.inverse_dynamics(robot, q, v, a)
    assert_rel(tau, fl.floating_inverse_dynamics(robot, q, v, a), 0)
    assert_rel(rd.inertia_matrix(robot, q), fl.floating_inertia_matrix(robot, q), 0)
    assert_rel(rd.forward_dynamics(robot, q, v, tau), fl.floating_forward_dynamics(robot, q, v, tau), 0)
    mobile = robot.replace(base="mobile")
    assert_rel(rd.inverse_dynamics(mobile, q, v, a), tau, 0)
    with pytest.raises(rd.InputError, match="base_acceleration"):
        rd.forward_dynamics(mobile, q, v, tau[..., 6:])
