"""URDF import/export against descriptions nobody here wrote (example-robot-data), Pinocchio's own URDF parser
and MuJoCo; the converter's choices; the round trip URDF → Robot → URDF → Robot."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn.model.urdf import kk_parameters, kk_transform
from tests.support.checks import example_robot_data_path
from tests.support.mujoco_compare import assert_mujoco_dynamics
from tests.support.pin_compare import assert_rel

pin = pytest.importorskip("pinocchio")
yourdfpy = pytest.importorskip("yourdfpy")


#: Every fixed-base arm (or arm-like chain/tree) of example-robot-data with inertial data.
ARMS = [
    "panda_description/urdf/panda.urdf",
    "ur_description/urdf/ur3_robot.urdf",
    "ur_description/urdf/ur5_robot.urdf",
    "ur_description/urdf/ur10_robot.urdf",
    "kinova_description/robots/kinova.urdf",
    "xarm_description/urdf/xarm7.urdf",
    "z1_description/urdf/z1.urdf",
    "so_arm_description/urdf/so100.urdf",
    "so_arm_description/urdf/so101.urdf",
    "double_pendulum_description/urdf/double_pendulum_continuous.urdf",
    "asr_twodof_description/urdf/TwoDofs.urdf",
    "finger_edu_description/robots/finger_edu.urdf",
    "talos_data/robots/talos_left_arm.urdf",
    "baxter_description/urdf/baxter.urdf",
]


def _states(robot, count=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.5, 1.5, (3, count, robot.n))


def _pin_q(model, robot, q):
    """Pinocchio configuration (nq,) from robodyn q (n,): continuous joints take (cos q, sin q)."""
    out = pin.neutral(model)
    for name, x in zip(robot.q_names, q):
        j = model.joints[model.getJointId(name)]
        if j.nq == 2:
            out[j.idx_q : j.idx_q + 2] = np.cos(x), np.sin(x)
        else:
            out[j.idx_q] = x
    return out


def _link_of_frame(path, robot):
    """URDF link whose frame each robodyn frame (loaded with link_frames=True) carries."""
    urdf = yourdfpy.URDF.load(path, build_scene_graph=False, load_meshes=False,
                              build_collision_scene_graph=False, load_collision_meshes=False).robot
    joints = {j.name: j for j in urdf.joints}
    links = {link.name for link in urdf.links}
    out = {}
    for i, name in enumerate(robot.frame_names):
        if name not in joints:
            if name in links:
                out[i] = name  # an extra fixed frame named after its link
            elif name.endswith("_link") and name[:-5] in links and name[:-5] in joints:
                out[i] = name[:-5]  # ... renamed as a joint has the link's name (so100's "gripper")
            else:
                assert name.endswith("_offset")  # an extra frame before a nearly parallel axis
        elif joints[name].type == "fixed" or joints[name].child not in robot.frame_names:
            out[i] = joints[name].child
    return out


@pytest.mark.parametrize("rel", ARMS, ids=lambda r: Path(r).stem)
def test_example_robot_data_agrees_with_pinocchio(rel):
    path = example_robot_data_path(rel)
    robot = rd.from_urdf(path, link_frames=True)
    model = pin.buildModelFromUrdf(path)
    data = model.createData()
    assert model.nv == robot.n and set(robot.q_names) == {model.names[i] for i in range(1, model.njoints)}
    v = np.array([model.joints[model.getJointId(n)].idx_v for n in robot.q_names])
    # friction and damping are read: Pinocchio keeps them on the model
    assert_rel(robot.Fv[robot.joint_frames], model.damping[v], 1e-15)
    assert_rel(robot.Fc[robot.joint_frames], model.friction[v], 1e-15)
    q, qd, qdd = _states(robot)
    tau = rd.inverse_dynamics(robot, q, qd, qdd, friction=False)  # Pinocchio's rnea leaves the friction out
    assert_rel(rd.inverse_dynamics(robot, q, qd, qdd) - rd.friction_torques(robot, qd), tau, 1e-12)
    A = rd.inertia_matrix(robot, q)
    T = rd.forward_kinematics(robot, q)
    links = _link_of_frame(path, robot)
    assert len(set(links.values())) == len(links)
    assert links == {i: link for i, link in enumerate(robot.link_names) if link}  # frame="<link>" finds them
    for s in range(q.shape[0]):
        qp, vp, ap = _pin_q(model, robot, q[s]), np.zeros(model.nv), np.zeros(model.nv)
        vp[v], ap[v] = qd[s], qdd[s]
        assert_rel(tau[s], pin.rnea(model, data, qp, vp, ap)[v])
        M = pin.crba(model, data, qp)
        M = np.triu(M) + np.triu(M, 1).T
        assert_rel(A[s], M[np.ix_(v, v)])
        pin.framesForwardKinematics(model, data, qp)
        for i, link in links.items():
            assert_rel(T[s, i], data.oMf[model.getFrameId(link, pin.FrameType.BODY)].homogeneous)


@pytest.mark.parametrize("rel", ARMS, ids=lambda r: Path(r).stem)
def test_example_robot_data_agrees_with_mujoco(rel):
    mujoco = pytest.importorskip("mujoco")
    robot = rd.from_urdf(example_robot_data_path(rel))
    jf = robot.joint_frames
    # rotor inertia and damping on every joint, to check armature and damping; MuJoCo's frictionloss is a
    # dry-friction constraint (not Fc·sign(q̇) in mj_inverse), so Fc is set to 0 here.
    Ia, Fv = np.zeros(robot.nf), np.zeros(robot.nf)
    Ia[jf], Fv[jf] = np.linspace(0.1, 0.3, robot.n), np.linspace(0.5, 1.0, robot.n)
    robot = robot.replace(Ia=Ia, Fv=Fv, Fc=None)
    model = mujoco.MjModel.from_xml_string(rd.to_mujoco_xml(robot))
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_LIMIT
    assert_rel(model.opt.gravity, robot.gravity, 1e-15)
    body = np.array([model.body(n).id for n in robot.frame_names])
    q, qd, qdd = _states(robot, seed=1)
    T = rd.forward_kinematics(robot, q)

    def frames_agree(s, data, adr):
        assert_rel(T[s, :, :3, 3], data.xpos[body])
        assert_rel(T[s, :, :3, :3], data.xmat[body].reshape(-1, 3, 3))

    assert_mujoco_dynamics(robot, model, q, qd, qdd, each=frames_agree)

@pytest.mark.parametrize("rel", ARMS, ids=lambda r: Path(r).stem)
def test_round_trip_urdf_robot_urdf_robot_is_exact(rel):
    first = rd.from_urdf(example_robot_data_path(rel))
    second = rd.from_urdf(rd.to_urdf(first))
    assert second.joint_names == first.joint_names and second.name == first.name
    for key in ("antecedent", "sigma", "params", "Fv", "Fc", "qlim", "gravity"):
        np.testing.assert_allclose(getattr(second, key), getattr(first, key), rtol=1e-12, atol=1e-12, err_msg=key)
    geometry = ("gamma", "b", "alpha", "d", "theta", "r")
    for i in range(first.nf):
        T1, T2 = (kk_transform(*(getattr(r, g)[i] for g in geometry)) for r in (first, second))
        np.testing.assert_allclose(T2, T1, rtol=0, atol=1e-12)
        # With z_j nearly parallel to z_a(j) (so101 writes α = 3.14159 for π: sin α = 2.7e-6), γ and θ are
        # ill-conditioned (an error of 1e-16 in the rotation moves them by 1e-16 / sin α); elsewhere the
        # table itself is reproduced.
        if np.sin(first.alpha[i]) == 0 or abs(np.sin(first.alpha[i])) > 1e-3:
            for g in geometry:
                np.testing.assert_allclose(getattr(second, g)[i], getattr(first, g)[i], rtol=1e-12, atol=1e-12, err_msg=g)


def test_save_and_load_urdf_file(tmp_path):
    robot = rd.from_urdf(example_robot_data_path(ARMS[0]))
    path = rd.save(robot, tmp_path / "panda.urdf")
    again = rd.load(path)
    np.testing.assert_allclose(again.params, robot.params, rtol=1e-12, atol=1e-12)
    assert again.q_names == robot.q_names


def test_panda_urdf_gives_franka_craig_table():
    """The Panda URDF follows Franka's Craig table: the converter finds the built-in Panda's table
    (γ = b = 0, θ = 0, the published α, d, r and the flange) from the URDF's geometry alone."""
    robot = rd.from_urdf(example_robot_data_path(ARMS[0]), tip="panda_link8")
    builtin = rd.load("panda")
    assert robot.q_names == tuple(f"panda_joint{k}" for k in range(1, 8))
    assert robot.frame_names[-1] == "panda_joint8" and robot.sigma.tolist() == builtin.sigma.tolist()
    for key in ("gamma", "b", "alpha", "d", "theta", "r"):
        np.testing.assert_allclose(getattr(robot, key), getattr(builtin, key), rtol=0, atol=1e-12, err_msg=key)
    assert "common normal" in robot.source and "panda.urdf" in robot.source


# ---- the converter on hand-written descriptions -----------------------------------------------------------

_LINK = '<link name="{n}"><inertial><origin xyz="{c}" rpy="{rpy}"/><mass value="{m}"/>' \
        '<inertia ixx="0.03" ixy="0.001" ixz="-0.002" iyy="0.04" iyz="0.003" izz="0.05"/></inertial></link>'


def _urdf(joints, extra_links=()):
    links = ["base"] + [j[3] for j in joints] + list(extra_links)
    body = "".join(_LINK.format(n=n, c="0.1 -0.05 0.2", rpy="0.3 -0.2 0.7", m=1.5 + k) for k, n in enumerate(links))
    js = "".join(
        f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>{more}</joint>'
        for name, kind, parent, child, xyz, rpy, axis, more in joints
    )
    return f'<robot name="test">{body}{js}</robot>'


SKEW = _urdf([
    ("a", "revolute", "base", "l1", "0.1 0.2 0.3", "0.4 -0.5 0.6", "1 1 0",
     '<limit lower="-1" upper="2" effort="1" velocity="1"/><dynamics damping="0.7" friction="0.2"/>'),
    ("b", "prismatic", "l1", "l2", "0 0.3 0", "1.2 0 -0.3", "0 -1 0", '<limit lower="0" upper="0.5" effort="1" velocity="1"/>'),
    ("c", "continuous", "l2", "l3", "0.2 0 0.1", "0 0.5 0", "0 0 -2", ""),
    ("f", "fixed", "l3", "l4", "0 0 0.1", "0.1 0.2 0.3", "1 0 0", ""),
    ("d", "revolute", "l1", "l5", "-0.2 0 0", "0 0 0", "0 1 0", '<limit lower="-1" upper="1" effort="1" velocity="1"/>'),
])


def test_skewed_axes_tree_agrees_with_pinocchio():
    robot = rd.from_urdf(SKEW, link_frames=True)
    model = pin.buildModelFromXML(SKEW)
    data = model.createData()
    assert robot.frame_names[:2] == ("a", "l1") and robot.antecedent.tolist()[:3] == [0, 1, 1]
    assert robot.q_names == ("a", "b", "c", "d")
    np.testing.assert_array_equal(robot.qlim, [[-1, 2], [0, 0.5], [-np.inf, np.inf], [-1, 1]])
    assert robot.Fv[0] == 0.7 and robot.Fc[0] == 0.2
    v = np.array([model.joints[model.getJointId(n)].idx_v for n in robot.q_names])
    links = {robot.frame_index(n) - 1: n for n in ("l1", "l2", "l3", "l5") if n in robot.frame_names}
    links[robot.frame_index("f") - 1] = "l4"
    q, qd, qdd = _states(robot, seed=3)
    tau = rd.inverse_dynamics(robot, q, qd, qdd) - rd.friction_torques(robot, qd)
    T = rd.forward_kinematics(robot, q)
    for s in range(q.shape[0]):
        qp = _pin_q(model, robot, q[s])
        vp, ap = np.zeros(model.nv), np.zeros(model.nv)
        vp[v], ap[v] = qd[s], qdd[s]
        assert_rel(tau[s], pin.rnea(model, data, qp, vp, ap)[v])
        pin.framesForwardKinematics(model, data, qp)
        for i, link in links.items():
            assert_rel(T[s, i], data.oMf[model.getFrameId(link, pin.FrameType.BODY)].homogeneous)
    # the link frames are fixed massless side branches: prune=False keeps them
    again = rd.from_urdf(rd.to_urdf(robot), prune=False)
    np.testing.assert_allclose(again.params, robot.params, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(again.theta, robot.theta, rtol=1e-12, atol=1e-12)


def test_base_and_tip_select_a_chain_and_rotate_gravity():
    urdf = _urdf([
        ("mount", "fixed", "base", "l1", "0 0 1", "1.5707963267948966 0 0", "1 0 0", ""),
        ("a", "revolute", "l1", "l2", "0 0 0.2", "0 0 0", "0 0 1", '<limit lower="-1" upper="1" effort="1" velocity="1"/>'),
        ("b", "revolute", "l2", "l3", "0.3 0 0", "0 0 0", "0 0 1", '<limit lower="-1" upper="1" effort="1" velocity="1"/>'),
        ("c", "revolute", "l2", "l4", "0 0.3 0", "0 0 0", "1 0 0", '<limit lower="-1" upper="1" effort="1" velocity="1"/>'),
    ])
    robot = rd.from_urdf(urdf, base="l1", tip="l3")
    assert robot.joint_names == ("a", "b") and robot.is_serial
    np.testing.assert_allclose(robot.gravity, [0, -9.81, 0], atol=1e-15)  # Rx(π/2)ᵀ [0, 0, −9.81]
    whole = rd.from_urdf(urdf)
    assert whole.frame_names == ("mount", "a", "b", "c") and whole.joint_names == ("a", "b", "c")
    assert not whole.is_serial
    with pytest.raises(rd.ModelFileError, match="tip = 'nope' is not a link"):
        rd.from_urdf(urdf, tip="nope")
    with pytest.raises(rd.ModelFileError, match="sits on the moving joint 'a'"):
        rd.from_urdf(urdf, base="l2")


_LIMIT = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'
#: An arm cut at ``tip``: a flange and a gripper fixed below it (and a camera fixed on the flange), a moving finger
#: below the gripper, and a moving branch off the chain; the links carried by fixed joints only, last before the
#: finger and the branch, so the links they share keep their masses (1.5 + k kg for the k-th link) without them.
_TIPPED = [
    ("a", "revolute", "base", "l1", "0 0 0.2", "0 0 0", "0 0 1", _LIMIT),
    ("b", "revolute", "l1", "tip", "0.3 0.1 0", "0.4 0 0", "0 1 0", _LIMIT),
    ("flange", "fixed", "tip", "flange_link", "0.02 -0.01 0.12", "0.3 -0.5 0.2", "1 0 0", ""),
    ("sensor", "fixed", "flange_link", "gripper", "0 0.03 0.05", "-0.4 0.1 0.9", "1 0 0", ""),
    ("camera", "fixed", "flange_link", "cam", "0.05 0 0", "0 1.2 0", "1 0 0", ""),
    ("side", "revolute", "l1", "beside", "0 0.2 0", "0 0 0", "1 0 0", _LIMIT),
    ("finger", "prismatic", "gripper", "finger_link", "0 0.02 0.1", "0 0 0.3", "0 1 0", _LIMIT),
]


def test_tip_lumps_the_links_fixed_below_it_and_names_what_it_drops():
    """tip= at the last moving link keeps the rigidly attached flange, sensor and gripper: their inertial
    parameters, moved into the tip frame, add to the tip's (Khalil & Dombre [9.12]), as Pinocchio's URDF parser
    merges fixed bodies; the finger below a moving joint and the branch off the chain are dropped, and said."""
    robot = rd.from_urdf(_urdf(_TIPPED), tip="tip")
    reduced = _urdf(_TIPPED[:5])  # the same arm without the finger and the branch
    assert robot.frame_names == ("a", "b") and robot.is_serial
    np.testing.assert_allclose(robot.M.sum(), 2.5 + 3.5 + 4.5 + 5.5 + 6.5, rtol=1e-15)
    for text in ("flange_link", "gripper", "cam", "'finger_link'", "'finger'", "8.5 kg", "'beside'", "7.5 kg"):
        assert text in robot.source, text
    # robodyn's whole reduced arm keeps the fixed links as fixed frames: the same dynamics
    whole = rd.from_urdf(reduced)
    q, qd, qdd = _states(robot, count=4, seed=5)
    assert_rel(rd.inverse_dynamics(robot, q, qd, qdd), rd.inverse_dynamics(whole, q, qd, qdd), 1e-12)
    assert_rel(rd.inertia_matrix(robot, q), rd.inertia_matrix(whole, q), 1e-12)
    model = pin.buildModelFromXML(reduced)
    data = model.createData()
    v = [model.joints[model.getJointId(n)].idx_v for n in robot.q_names]
    for s in range(q.shape[0]):
        qp = _pin_q(model, robot, q[s])
        assert_rel(rd.gravity_torques(robot, q[s]), pin.computeGeneralizedGravity(model, data, qp)[v], 1e-12)
        assert_rel(rd.inverse_dynamics(robot, q[s], qd[s], qdd[s]), pin.rnea(model, data, qp, qd[s], qdd[s])[v], 1e-12)
    # nothing hangs below the tip: nothing is merged, nothing said
    bare = rd.from_urdf(_urdf(_TIPPED[:2]), tip="tip")
    assert "lumped" not in bare.source and "dropped" not in bare.source


@pytest.mark.parametrize("kind", ["floating", "planar"])
def test_floating_and_planar_joints_are_refused(kind):
    urdf = _urdf([("free", kind, "base", "l1", "0 0 0", "0 0 0", "0 0 1", "")])
    with pytest.raises(rd.ModelFileError, match=f"joint 'free': type '{kind}' is not supported"):
        rd.from_urdf(urdf)


def test_mimic_joints_load_as_independent_joints():
    robot = rd.from_urdf(example_robot_data_path(ARMS[0]))
    assert "panda_finger_joint2" in robot.q_names
    assert "Mimic joints loaded as independent joints" in robot.source and "panda_finger_joint2" in robot.source


def test_bad_files_raise_model_file_errors(tmp_path):
    with pytest.raises(rd.ModelFileError, match="no such URDF file"):
        rd.from_urdf(tmp_path / "missing.urdf")
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'>")
    with pytest.raises(rd.ModelFileError, match="bad.urdf: not a readable URDF"):
        rd.load(bad)
    with pytest.raises(rd.ModelFileError, match="joint axis"):
        rd.from_urdf(_urdf([("a", "continuous", "base", "l1", "0 0 0", "0 0 0", "0 0 0", "")]))


def test_non_physical_urdf_inertia_needs_strict_false():
    urdf = _urdf([("a", "continuous", "base", "l1", "0 0 0", "0 0 0", "0 0 1", "")]).replace(
        'izz="0.05"', 'izz="0.09"')
    # the URDF's link (l1) is named with the joint (a) whose frame it is: the joint alone misleads
    with pytest.raises(rd.NonPhysicalInertiaError, match=r"link 1 \(l1, the link of frame a\): principal moments "
                                                         r".*triangle inequality.*strict=False"):
        rd.from_urdf(urdf)
    with pytest.warns(UserWarning, match="triangle inequality"):
        robot = rd.from_urdf(urdf, strict=False)
    assert robot.strict is False and robot.params[0, 9] == 2.5


def test_kk_parameters_invert_kk_transform():
    rng = np.random.default_rng(7)
    for _ in range(200):
        g, a, t = rng.uniform(-np.pi / 2, np.pi / 2), rng.uniform(-3, 3), rng.uniform(-3, 3)
        b, d, r = rng.uniform(-1, 1, 3)
        T = kk_transform(g, b, a, d, t, r)
        assert_rel(kk_transform(*kk_parameters(T)), T, 1e-13)
    # parallel axes: b = 0, and γ = 0 when the origin is on the antecedent's x axis
    p = kk_parameters(kk_transform(0, 0, 0, 0.4, 0.3, 0.2))
    np.testing.assert_allclose(p, [0, 0, 0, 0.4, 0.3, 0.2], atol=1e-15)
    p = kk_parameters(kk_transform(0, 0, np.pi, 0.4, 0.3, 0.2))
    np.testing.assert_allclose(p, [0, 0, np.pi, 0.4, 0.3, 0.2], atol=1e-15)


def test_to_urdf_refuses_what_urdf_cannot_hold():
    robot = rd.load("rx90")
    with pytest.raises(rd.ModelError, match="Ia"):
        rd.to_urdf(robot)
    with pytest.raises(rd.ModelError, match="gravity"):
        rd.to_urdf(rd.load("planar2r"))


def test_builtin_robot_through_urdf_keeps_its_dynamics():
    robot = rd.load("rx90").replace(Ia=None)
    again = rd.from_urdf(rd.to_urdf(robot))
    q, qd, qdd = _states(robot, 4, seed=5)
    assert_rel(rd.inverse_dynamics(again, q, qd, qdd), rd.inverse_dynamics(robot, q, qd, qdd))
    assert_rel(rd.forward_kinematics(again, q)[..., -1, :3, 3], rd.forward_kinematics(robot, q)[..., -1, :3, 3])


def test_mimic_coupling_agrees_with_pinocchio_mimic_joints():
    path = example_robot_data_path(ARMS[0])
    robot = rd.from_urdf(path)
    c = rd.model.mimic_coupling(path, robot)
    assert c.independent == robot.q_names[:-1] and c.G.shape == (9, 8)
    assert c.G[8, 7] == 1.0 and c.offset[8] == 0.0
    try:
        model = pin.buildModelFromUrdf(path, mimic=True)
    except Exception as exc:  # Boost.Python.ArgumentError: an older Pinocchio reads no mimic joints
        if type(exc).__name__ != "ArgumentError":
            raise
        pytest.skip("this Pinocchio's URDF parser takes no mimic= (mimic joints came with Pinocchio 3.4)")
    data = model.createData()
    assert model.nv == 8
    qa, qda, qdda = np.random.default_rng(4).uniform(-1, 1, (3, 8))
    qa[7] = 0.02  # finger opening within its limits
    q, qd, qdd = c.q(qa), c.qd(qda), c.qd(qdda)
    tau = c.torques(rd.inverse_dynamics(robot, q, qd, qdd) - rd.friction_torques(robot, qd))
    assert_rel(tau, pin.rnea(model, data, qa, qda, qdda))
    M = pin.crba(model, data, qa)
    assert_rel(c.inertia_matrix(rd.inertia_matrix(robot, q)), np.triu(M) + np.triu(M, 1).T)


def test_nearly_parallel_axes_get_an_offset_frame_not_kilometre_lengths():
    """so100's base and shoulder axes are 2.7e-6 rad from parallel (a CAD export): one Khalil–Kleinfinger
    placement would need r ≈ 7 km; an extra fixed frame carries the offset instead (still exact: see the
    Pinocchio test above)."""
    robot = rd.from_urdf(example_robot_data_path("so_arm_description/urdf/so100.urdf"))
    assert "shoulder_pan_offset" in robot.frame_names and robot.sigma[robot.frame_index("shoulder_pan_offset") - 1] == 2
    assert np.abs(np.c_[robot.b, robot.d, robot.r]).max() < 0.2
    assert "nearly parallel" in robot.source


def test_cli_info_on_a_urdf_explains_the_frames(tmp_path):
    from typer.testing import CliRunner

    from robodyn.cli import app

    path = rd.save(rd.load("panda"), tmp_path / "panda.urdf")
    result = CliRunner().invoke(app, ["info", str(path)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "URDF panda.urdf" in text and "j1: x along the common normal to the axis of j2" in text
    assert "flange: fixed: the URDF link frame" in text


# ---- the kinematic graph is checked before anything is built (issue 25 item 3, issue 21 §1) ---------------

_CHAIN = [
    ("a", "revolute", "base", "l1", "0 0 0.1", "0 0 0", "0 0 1", '<limit lower="-1" upper="1" effort="1" velocity="1"/>'),
    ("b", "revolute", "l1", "l2", "0.3 0 0", "0 0 0", "0 0 1", '<limit lower="-1" upper="1" effort="1" velocity="1"/>'),
]


def _joint(name, parent, child, kind="revolute", more=""):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<axis xyz="0 0 1"/>{more}</joint>')


def _with(extra="", replace=()):
    text = _urdf(_CHAIN)
    for old, new in replace:
        assert old in text
        text = text.replace(old, new, 1)
    return text.replace("</robot>", extra + "</robot>")


@pytest.mark.parametrize("text, message", [
    # issue 21 §1: a joint naming an undefined child raised a raw KeyError
    (_with(_joint("c", "l2", "b")), r"joint 'c': child link 'b' is not defined"),
    (_with(_joint("c", "ghost", "l3"), ), r"joint 'c': parent link 'ghost' is not defined"),
    # cycles: l1 -> l2 -> l1 (every link a child: no root), and a cycle beside a valid root
    ('<robot name="r"><link name="l1"/><link name="l2"/>' + _joint("a", "l1", "l2") + _joint("b", "l2", "l1")
     + "</robot>", r"joints 'a', 'b' form a cycle|joints 'b', 'a' form a cycle"),
    (_with(replace=[('<parent link="base"/><child link="l1"/>', '<parent link="l2"/><child link="l1"/>')]),
     r"joints 'a', 'b' form a cycle|joints 'b', 'a' form a cycle"),
    (_with(_joint("c", "l2", "l2")), r"joint 'c': connects link 'l2' to itself"),
    # two parents: masses would be counted twice
    (_with(_joint("c", "base", "l2")), r"joint 'c': link 'l2' is already the child of joint 'b'"),
    # duplicate names
    (_with('<link name="l1"/>'), r"link 'l1': defined twice"),
    (_with(_joint("a", "l2", "l9") + '<link name="l9"/>'), r"joint 'a': defined twice"),
    (_with('<link/>'), r"a <link> element without a name"),
    # several roots, no joint element ends
    (_with('<link name="loose"/>'), r"expected one root link .* found 2: 'base', 'loose'"),
    (_with(replace=[('<parent link="base"/>', '')]), r"joint 'a': needs exactly one <parent"),
    (_with(replace=[('<child link="l1"/>', '<child link="l1"/><child link="l2"/>')]), r"needs exactly one <child"),
    # vector arity and finite numbers
    (_with(replace=[('xyz="0 0 0.1"', 'xyz="0 0 0.1 7"')]), r"joint 'a': <origin xyz='0 0 0.1 7'> has 4 numbers"),
    (_with(replace=[('rpy="0 0 0"', 'rpy="0 0"')]), r"<origin rpy='0 0'> has 2 numbers; give exactly 3"),
    (_with(replace=[('<axis xyz="0 0 1"/>', '<axis xyz="0 nan 1"/>')]), r"<axis xyz='0 nan 1'> holds a value that is not"),
    (_with(replace=[('<mass value="1.5"/>', '<mass value="inf"/>')]), r"link 'base': <mass value='inf'> is not a finite"),
    (_with(replace=[('lower="-1"', 'lower="1e999"')]), r"<limit lower='1e999'> is not a finite number"),
    (_with(replace=[("</joint>", '<mimic joint="a" multiplier="inf"/></joint>')]), r"<mimic multiplier='inf'>"),
    (_with(replace=[("</joint>", '<mimic joint="a" offset="nan"/></joint>')]), r"<mimic offset='nan'>"),
    (_with(replace=[('type="revolute"', 'type="spherical"')]), r"joint 'a': unknown joint type 'spherical'"),
    ('<model name="x"><link name="a"/></model>', r"the top element is <model>, not <robot>"),
])
def test_malformed_graphs_raise_one_line_naming_the_element(text, message):
    with pytest.raises(rd.ModelFileError, match=message) as info:
        rd.from_urdf(text)
    assert "\n" not in str(info.value) and str(info.value).startswith("<URDF string>")


def test_a_mimic_tag_naming_no_joint_loads_and_mimic_coupling_reports_it():
    """alex_psyonic_hands.urdf (example-robot-data) has such a tag: the joints load, the coupling is refused."""
    text = _with(replace=[("</joint>", '<mimic joint="ghost"/></joint>')])
    robot = rd.from_urdf(text)
    with pytest.raises(rd.ModelFileError, match="a mimic joint follows 'ghost', which is not a joint"):
        rd.model.mimic_coupling(text, robot)


def test_a_cycle_never_spins_whatever_base_and_tip(tmp_path):
    """The 1 KB URDF whose joints form a cycle made `robodyn info` grow without bound and tip=/base= spin."""
    import time

    from typer.testing import CliRunner

    from robodyn.cli import app

    cyclic = _with(replace=[('<parent link="base"/><child link="l1"/>', '<parent link="l2"/><child link="l1"/>')])
    start = time.perf_counter()
    for base, tip in [(None, None), (None, "l2"), ("l1", None), ("l2", "l1"), ("base", "l2")]:
        with pytest.raises(rd.ModelFileError, match="form a cycle"):
            rd.from_urdf(cyclic, base=base, tip=tip)
    path = tmp_path / "cycle.urdf"
    path.write_text(cyclic)
    result = CliRunner().invoke(app, ["info", str(path)])
    assert result.exit_code == 2 and "form a cycle" in result.output and "Traceback" not in result.output
    assert time.perf_counter() - start < 10


def test_undefined_child_in_the_cli_is_one_line_exit_2(tmp_path):
    from typer.testing import CliRunner

    from robodyn.cli import app

    path = tmp_path / "r.urdf"
    path.write_text(_with(_joint("c", "l2", "b")))
    result = CliRunner().invoke(app, ["info", str(path)])
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and "child link 'b' is not defined" in result.output


def test_urdf_files_are_read_bounded_and_decoded_with_model_file_errors(tmp_path):
    import time

    sparse = tmp_path / "huge.urdf"
    with open(sparse, "wb") as fh:
        fh.truncate(3 * 10**9)  # a sparse 3 GB file: refused from its size, never read
    start = time.perf_counter()
    for load in (rd.from_urdf, rd.load):
        with pytest.raises(rd.ModelFileError, match=r"huge\.urdf: larger than 1000000 bytes, the limit for a URDF"):
            load(sparse)
    assert time.perf_counter() - start < 2
    latin = tmp_path / "latin.urdf"
    latin.write_bytes(_urdf(_CHAIN).replace('name="test"', 'name="bras articulé"').encode("latin-1"))
    for load in (rd.from_urdf, rd.load):
        with pytest.raises(rd.ModelFileError, match=r"latin\.urdf: not UTF-8 text \(byte \d+\)") as info:
            load(latin)
        assert "YAML" not in str(info.value)
    folder = tmp_path / "folder.urdf"
    folder.mkdir()
    with pytest.raises(rd.ModelFileError, match="is a folder, not a URDF file"):
        rd.from_urdf(folder)
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "pipe.urdf"
        os.mkfifo(fifo)
        for load in (rd.from_urdf, rd.load):  # nothing writes to the FIFO: reading it would block for ever
            with pytest.raises(rd.ModelFileError, match="not a regular file"):
                load(fifo)
    with pytest.raises(rd.InputError, match="argument 'tip' is int"):
        rd.from_urdf(_urdf(_CHAIN), tip=3)


# ---- what robodyn writes, robodyn reads back (issue 25 item 11) ----------------------------------------------

def test_to_urdf_refuses_duplicate_names_and_renames_a_clashing_base_link(tmp_path):
    robot = rd.load("planar2r").replace(gravity=[0, 0, -9.81])
    twice = robot.replace(frame_names=("j", "j"))
    with pytest.raises(rd.ModelError, match="frames 1 and 2 are both named 'j'"):
        rd.to_urdf(twice)
    with pytest.raises(rd.ModelError, match="both named"):
        rd.save(twice, tmp_path / "twice.urdf")
    assert not list(tmp_path.iterdir())  # nothing written
    with pytest.raises(rd.ModelError, match="characters XML cannot carry"):
        rd.to_urdf(robot.replace(frame_names=("j\x01", "k")))
    based = robot.replace(frame_names=("base", "elbow"))
    text = rd.to_urdf(based)
    assert text.count('<link name="base_link"') == 1 and '<link name="base_link_0"' in text
    again = rd.from_urdf(text)
    assert again.joint_names == ("base", "elbow")
    np.testing.assert_allclose(again.params, based.params, rtol=1e-12, atol=1e-12)


# ---- URDF robots that just work (issue 21 §3) -------------------------------------------------------------

def test_ur5_fixed_massless_branches_are_dropped_so_it_loads_as_a_serial_6r_chain():
    path = example_robot_data_path("ur_description/urdf/ur5_robot.urdf")
    ur5 = rd.from_urdf(path)
    # the side branch beside joint 1 is dropped; the two tool frames on wrist_3_link are kept, one on the other
    assert ur5.is_serial and ur5.n == 6 and ur5.nf == 9 and ur5.sigma.tolist() == [2] + [0] * 6 + [2, 2]
    assert ur5.joint_names[-1] == "wrist_3_joint" and len(ur5.joint_names) == ur5.n
    assert ur5.frame_names[-2:] == ("ee_fixed_joint", "wrist_3_link-tool0_fixed_joint")
    assert ur5.link_names[-2:] == ("ee_link", "tool0") and ur5.frame_index("tool0") == 9 == ur5.derived.end_frame
    assert "side branches dropped" in ur5.source and "base_link-base_fixed_joint" in ur5.source
    whole = rd.from_urdf(path, prune=False)
    assert not whole.is_serial and whole.nf == 10
    # dropping massless fixed frames changes no dynamics and no remaining frame
    q, qd, qdd = _states(ur5, 4, seed=8)
    assert_rel(rd.inverse_dynamics(ur5, q, qd, qdd), rd.inverse_dynamics(whole, q, qd, qdd), 1e-13)
    assert_rel(rd.inertia_matrix(ur5, q), rd.inertia_matrix(whole, q), 1e-13)
    T, Tw = rd.forward_kinematics(ur5, q), rd.forward_kinematics(whole, q)
    for i, name in enumerate(ur5.frame_names):
        assert_rel(T[:, i], Tw[:, whole.frame_index(name) - 1], 1e-11)
    # link names are frames wherever a frame is named, on the pruned robot as on the whole one
    for link in ("tool0", "ee_link", "shoulder_link"):
        assert_rel(rd.jacobian(ur5, q, frame=link), rd.jacobian(whole, q, frame=link), 1e-11)
    # a serial chain: Dellin's gravity calibration accepts it (it refuses trees)
    poses = rd.identification.calibration_poses(ur5, 10, seed=0)
    cal = rd.identification.calibrate_gravity(ur5, poses, rd.gravity_torques(ur5, poses))
    assert_rel(cal.torques(poses), rd.gravity_torques(ur5, poses), 1e-9)
    # tip= keeps the fixed tool frame on the chain, link_frames=True every link frame
    tool = rd.from_urdf(path, tip="tool0")
    assert tool.is_serial and tool.frame_names[-1] == "wrist_3_link-tool0_fixed_joint"
    assert "ee_fixed_joint" in rd.from_urdf(path, link_frames=True).frame_names


def test_a_single_massless_tool_frame_is_kept_and_massive_fixed_branches_stay():
    tool = ("tool", "fixed", "l2", "t", "0 0 0.1", "0 0 0", "1 0 0", "")
    text = _urdf(_CHAIN + [tool])
    start = text.index('<link name="t">')
    robot = rd.from_urdf(text[:start] + '<link name="t"/>' + text[text.index("</link>", start) + len("</link>"):])
    assert robot.frame_names == ("a", "b", "tool") and robot.is_serial and robot.M[2] == 0
    # a fixed branch that carries mass beside the chain is kept (its mass counts): the robot is a tree
    payload = ("payload", "fixed", "l1", "p", "0 0.2 0", "0 0 0", "1 0 0", "")
    tree = rd.from_urdf(_urdf(_CHAIN + [payload]))
    assert "payload" in tree.frame_names and not tree.is_serial
    # a side branch without mass but with an inertia tensor changes the dynamics: kept too
    text = _urdf(_CHAIN + [payload])
    massive = '<link name="p"><inertial><origin xyz="0.1 -0.05 0.2" rpy="0.3 -0.2 0.7"/><mass value="4.5"/>'
    assert massive in text
    spinning = rd.from_urdf(text.replace(massive, massive.replace('value="4.5"', 'value="0"')), strict=False)
    assert "payload" in spinning.frame_names and spinning.M[spinning.frame_index("payload") - 1] == 0
    start = text.index('<link name="p">')
    bare = text[:start] + '<link name="p"/>' + text[text.index("</link>", start) + len("</link>"):]
    assert "payload" not in rd.from_urdf(bare).frame_names


def test_end_frame_is_the_tip_of_the_longest_movable_chain():
    from robodyn.model.derived import end_frame

    for name in ("rx90", "panda", "planar2r"):
        robot = rd.load(name)
        assert end_frame(robot) == robot.nf  # serial: the last frame, fixed flange included
    whole = rd.from_urdf(example_robot_data_path("ur_description/urdf/ur5_robot.urdf"), prune=False)
    # frame 10 (base_link-base_fixed_joint) is last but hangs beside joint 1; the tip is tool0 after wrist 3
    assert whole.frame_names[end_frame(whole) - 1] == "wrist_3_link-tool0_fixed_joint"
    # SKEW: a -> b -> c -> f (fixed) and a -> d: the last frame d ends a 2-joint branch, f the 3-joint chain
    skew = rd.from_urdf(SKEW)
    assert skew.frame_names[-1] == "d" and skew.frame_names[end_frame(skew) - 1] == "f"


def test_urdf_friction_is_announced_on_load_and_in_robodyn_info(tmp_path):
    from typer.testing import CliRunner

    from robodyn.cli import app

    with pytest.warns(UserWarning, match=r"joint\(s\) 'a' become viscous \(Fv\) and Coulomb \(Fc\) friction") as record:
        robot = rd.from_urdf(SKEW)
    assert len([w for w in record if "friction" in str(w.message)]) == 1  # once per load
    assert robot.Fv[0] == 0.7 and "read as viscous friction Fv" in robot.source
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rd.from_urdf(_urdf(_CHAIN))  # no <dynamics>: no warning
    path = tmp_path / "skew.urdf"
    path.write_text(SKEW)
    result = CliRunner().invoke(app, ["info", str(path)])
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "warning:" in text and "read as viscous friction Fv (damping) and Coulomb friction Fc" in text


def test_a_joint_limited_on_one_side_round_trips():
    """A joint limit with one side unlimited (a URDF <limit> without upper=) is written without that side, never
    as upper="inf", which no URDF reader takes; it reads back unlimited (found by the URDF fuzz)."""
    robot = rd.load("puma560")
    qlim = np.array(robot.qlim)
    qlim[0] = [-2.0, np.inf]
    qlim[1] = [-np.inf, 1.0]
    one_sided = robot.replace(qlim=qlim, Ia=None)
    text = rd.to_urdf(one_sided)
    assert "inf" not in text
    np.testing.assert_array_equal(rd.from_urdf(text, prune=False).qlim, qlim)
