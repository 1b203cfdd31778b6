"""Robots from MuJoCo MJCF models (rd.from_mjcf, rd.load("robot.xml")): inverse dynamics, inertia matrix and body
poses checked against MuJoCo's own mj_inverse / mj_rne / forward kinematics on the same file."""

from __future__ import annotations

import json

import numpy as np
import pytest

import robodyn as rd
from robodyn.model.mjcf import from_mjcf

mujoco = pytest.importorskip("mujoco")

#: Defaults and classes, angles in degrees, euler / axisangle / xyaxes orientations, two joints in one body (with
#: anchors off the body origin), a slide joint, a fixed body with mass under a moving one, inertials with principal
#: axes and fullinertia, armature, damping, limits; geoms, meshes, sites and actuators the dynamics do not read.
ARM = """
<mujoco model="arm">
  <compiler angle="degree" autolimits="true"/>
  <option gravity="0.3 -0.2 -9.7"/>
  <asset><mesh name="shell" file="no/such/shell.stl"/></asset>
  <default>
    <joint damping="0.4" armature="0.05"/>
    <default class="wrist"><joint axis="1 0 0" range="-120 120" armature="0.02"/></default>
  </default>
  <worldbody>
    <light pos="0 0 3"/>
    <body name="mount" pos="0.1 0 0.2" euler="0 0 30">
      <geom type="box" size="0.1 0.1 0.1"/>
      <body name="shoulder" pos="0 0 0.15" axisangle="0 1 0 20">
        <inertial pos="0.01 0.02 0.1" mass="3.2" diaginertia="0.05 0.04 0.02" quat="0.9 0.1 0.3 0.2"/>
        <joint name="yaw" axis="0 0 1" range="-170 170"/>
        <joint name="pitch" axis="0 1 0" pos="0 0 0.05"/>
        <geom type="mesh" mesh="shell"/>
        <body name="upper" pos="0.4 0.05 0.1" xyaxes="0 1 0 -1 0 0">
          <inertial pos="0.2 0 0.01" mass="2.1" fullinertia="0.03 0.05 0.04 0.001 -0.002 0.003"/>
          <joint name="elbow" axis="0 0.6 0.8" pos="0.02 0 0"/>
          <site name="tip" pos="0.3 0 0"/>
          <body name="slider" pos="0.3 0 0">
            <inertial pos="0 0 0.05" mass="0.8" diaginertia="0.004 0.004 0.002"/>
            <joint name="extend" type="slide" axis="1 0 0" range="0 0.2"/>
            <body name="wrist" pos="0.1 0 0">
              <inertial pos="0.03 0.01 0" mass="0.5" diaginertia="0.002 0.003 0.001"/>
              <joint name="roll" class="wrist"/>
              <body name="tool" pos="0.05 0 0.02">
                <inertial pos="0 0 0.01" mass="0.3" diaginertia="0.001 0.001 0.001"/>
              </body>
            </body>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="yaw"/></actuator>
</mujoco>
"""


def _mujoco_model(xml: str):
    """The same model compiled by MuJoCo, contacts and limits off, and the qpos/dof index of each robodyn joint."""
    model = mujoco.MjModel.from_xml_string(xml.replace('<mesh name="shell" file="no/such/shell.stl"/>', "")
                                           .replace('<geom type="mesh" mesh="shell"/>', ""))
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_LIMIT
    return model


def _mj_inverse(model, robot, q, qd, qdd):
    data = mujoco.MjData(model)
    adr = np.array([model.joint(n).qposadr[0] for n in robot.joint_names])
    dof = np.array([model.joint(n).dofadr[0] for n in robot.joint_names])
    out, A = [], []
    for s in range(q.shape[0]):
        data.qpos[adr], data.qvel[dof], data.qacc[dof] = q[s], qd[s], qdd[s]
        mujoco.mj_inverse(model, data)
        out.append(data.qfrc_inverse[dof].copy())
        M = np.zeros((model.nv, model.nv))
        mujoco.mj_fullM(model, data, M)
        A.append(M[np.ix_(dof, dof)])
    return np.array(out), np.array(A), data


def _states(robot, seed):
    """Five states; prismatic positions within 0.1 m."""
    rng = np.random.default_rng(seed)
    q, qd, qdd = (rng.uniform(-1, 1, (5, robot.n)) for _ in range(3))
    return q * np.where(robot.sigma[robot.joint_frames] == 1, 0.1, 1.0), qd, qdd


def test_a_hand_written_mjcf_agrees_with_mujoco():
    robot = from_mjcf(ARM)
    assert robot.name == "arm" and robot.joint_names == ("yaw", "pitch", "elbow", "extend", "roll")
    assert robot.source.startswith("MJCF string, robot 'arm'. Khalil–Kleinfinger frames from MJCF joints")
    assert robot.sigma.tolist() == [2, 0, 0, 0, 1, 0, 2] and robot.is_serial
    assert robot.link_names[0] == "mount" and robot.link_names[-1] == "tool" and robot.frame_index("tool") == 7
    np.testing.assert_allclose(robot.gravity, [0.3, -0.2, -9.7], rtol=0, atol=1e-15)
    np.testing.assert_allclose(robot.qlim[[0, 3, 4]], np.deg2rad([[-170, 170], [0, 0], [-120, 120]]) + [[0, 0], [0, 0.2], [0, 0]],
                               rtol=0, atol=1e-15)
    np.testing.assert_allclose(robot.joint_values("Ia"), [0.05, 0.05, 0.05, 0.05, 0.02], rtol=0, atol=0)
    np.testing.assert_allclose(robot.joint_values("Fv"), 0.4, rtol=0, atol=0)
    model = _mujoco_model(ARM)
    q, qd, qdd = _states(robot, 3)
    tau, A, _ = _mj_inverse(model, robot, q, qd, qdd)
    scale = float(np.abs(tau).max())
    np.testing.assert_allclose(rd.inverse_dynamics(robot, q, qd, qdd), tau, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(rd.inertia_matrix(robot, q), A, rtol=0, atol=1e-12)
    # the tool body's pose: robodyn's frame named by the body against MuJoCo's xpos / xmat
    data = mujoco.MjData(model)
    adr = np.array([model.joint(n).qposadr[0] for n in robot.joint_names])
    data.qpos[adr] = q[0]
    mujoco.mj_kinematics(model, data)
    T = rd.forward_kinematics(robot, q[0])[robot.frame_index("tool") - 1]
    np.testing.assert_allclose(T[:3, 3], data.body("tool").xpos, rtol=0, atol=1e-12)
    np.testing.assert_allclose(T[:3, :3], data.body("tool").xmat.reshape(3, 3), rtol=0, atol=1e-12)


def test_robodyn_mujoco_export_reads_back(tmp_path):
    for name in ("panda", "wam7"):
        original = rd.load(name)
        xml = rd.to_mujoco_xml(original)
        path = tmp_path / f"{name}.xml"
        path.write_text(xml)
        robot = rd.load(path)  # an .xml file is an MJCF model
        assert robot.joint_names == original.joint_names and robot.n == original.n
        np.testing.assert_array_equal(robot.taulim, original.taulim)  # actuatorfrcrange; the Panda's are published
        q, qd, qdd = _states(robot, 5)
        model = mujoco.MjModel.from_xml_string(xml)
        model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_LIMIT  # q may lie outside the joint ranges
        tau, A, _ = _mj_inverse(model, robot, q, qd, qdd)
        scale = float(np.abs(tau).max())
        np.testing.assert_allclose(rd.inverse_dynamics(robot, q, qd, qdd, friction=False), tau, rtol=0,
                                   atol=1e-12 * scale)
        np.testing.assert_allclose(rd.inverse_dynamics(robot, q, qd, qdd), rd.inverse_dynamics(original, q, qd, qdd),
                                   rtol=0, atol=1e-12 * scale)
    # every command takes an MJCF file as ROBOT
    from typer.testing import CliRunner

    from robodyn.cli import app

    res = CliRunner().invoke(app, ["id", str(path), "--q", ",".join(repr(float(x)) for x in q[0]), "--json"])
    assert res.exit_code == 0, res.output
    np.testing.assert_allclose(json.loads(res.stdout)["tau"], rd.inverse_dynamics(robot, q[0], 0 * q[0], 0 * q[0]),
                               rtol=1e-14, atol=0)


@pytest.mark.parametrize("change, message", [
    (lambda x: x.replace('<joint name="roll" class="wrist"/>', '<joint name="roll" type="ball"/>'),
     "joint 'roll': a ball joint; robodyn reads fixed-base robots"),
    (lambda x: x.replace('<inertial pos="0.01 0.02 0.1" mass="3.2" diaginertia="0.05 0.04 0.02" quat="0.9 0.1 0.3 0.2"/>', ""),
     "body 'shoulder': no <inertial>"),
    (lambda x: "<!DOCTYPE x>" + x, "<!DOCTYPE>"),
    (lambda x: x.replace("<worldbody>", '<include file="other.xml"/><worldbody>'), "<include> is not read"),
    (lambda x: x.replace("<mujoco", "<robot").replace("</mujoco>", "</robot>"), "not an MJCF model"),
    (lambda x: x.replace('range="0 0.2"', 'range="0 0.2 0.3"'), "MuJoCo cannot compile it"),
])
def test_bad_models_raise_one_line(change, message):
    with pytest.raises(rd.ModelFileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        from_mjcf(change(ARM))


def test_the_model_shipped_with_mujoco_is_refused_with_the_reason():
    """The one MJCF model the mujoco wheel ships (its test model) floats on a free joint with ball joints:
    outside what robodyn reads, and the message says why."""
    from pathlib import Path

    path = Path(mujoco.__file__).parent / "testdata" / "model.xml"
    if not path.is_file():
        pytest.skip("this mujoco wheel ships no test model")
    with pytest.raises(rd.ModelFileError, match="a free joint|a ball joint|no <inertial>"):
        from_mjcf(path)
