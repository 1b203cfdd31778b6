"""`robodyn fk / jacobian / ik / identify-payload`: frames named by URDF link, checked against Pinocchio and the
library; errors in one line (exit 2)."""

import json
import re

import numpy as np
import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app
from robodyn.model.urdf import rpy_angles, rpy_rotation
from tests.support.checks import example_robot_data_path

pin = pytest.importorskip("pinocchio")

runner = CliRunner()
UR5 = "ur_description/urdf/ur5_robot.urdf"
Q = np.array([0.3, -1.0, 1.2, 0.2, -0.5, 0.4])


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def _csv(values) -> str:
    return ",".join(repr(float(x)) for x in values)


def _pin_frame(path, q, link):
    model = pin.buildModelFromUrdf(path)
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)  # the UR5's q is Pinocchio's (six revolute joints, same order)
    fid = model.getFrameId(link)
    J = pin.computeFrameJacobian(model, data, q, fid, pin.LOCAL_WORLD_ALIGNED)
    return data.oMf[fid].homogeneous, J


def test_fk_and_jacobian_of_a_urdf_link_agree_with_pinocchio():
    path = example_robot_data_path(UR5)
    T_pin, J_pin = _pin_frame(path, Q, "tool0")
    res = run("fk", path, "--q", _csv(Q), "--frame", "tool0", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["frame_name"] == "wrist_3_link-tool0_fixed_joint"
    # 1e-10: the frame table snaps lengths and angles below that to exact zeros (the UR5 file writes π/2 as
    # 1.57079632679), as in test_urdf's comparisons with Pinocchio
    np.testing.assert_allclose(out["T"], T_pin, rtol=0, atol=1e-10)
    np.testing.assert_allclose(rpy_rotation(*out["rpy"]), np.array(out["T"])[:3, :3], rtol=0, atol=1e-14)
    res = run("jacobian", path, "--q", _csv(Q), "--frame", "tool0", "--json")
    assert res.exit_code == 0, res.output
    np.testing.assert_allclose(json.loads(res.stdout)["J"], J_pin, rtol=0, atol=1e-10)
    # the tables: one line per Jacobian row, numbered joint columns, the legend naming them
    table = run("jacobian", path, "--q", _csv(Q), "--frame", "tool0")
    assert table.exit_code == 0 and "1 = shoulder_pan_joint" in table.stdout
    rows = [line.split() for line in table.stdout.splitlines() if re.match(r"(vx|vy|vz|wx|wy|wz) +-?\d", line)]
    assert [r[0] for r in rows] == ["vx", "vy", "vz", "wx", "wy", "wz"] and all(len(r) == 7 for r in rows)
    text = run("fk", path, "--q", _csv(np.rad2deg(Q)), "--degrees", "--frame", "9")
    assert text.exit_code == 0 and "link tool0" in text.stdout and "(deg, R = Rz(yaw)" in text.stdout


def test_ik_reaches_a_pose_given_by_position_and_rpy():
    path = example_robot_data_path(UR5)
    robot = rd.load(path)
    T = rd.forward_kinematics(robot, Q)[robot.frame_index("tool0") - 1]
    rpy = np.rad2deg(rpy_angles(T[:3, :3]))
    q0 = Q + 0.1
    res = run("ik", path, "--xyz", _csv(T[:3, 3]), "--rpy", _csv(rpy), "--degrees", "--q0", _csv(np.rad2deg(q0)),
              "--frame", "tool0", "--json")
    assert res.exit_code == 0, res.output
    q = np.array(json.loads(res.stdout)["q"])
    np.testing.assert_allclose(rd.forward_kinematics(robot, q)[robot.frame_index("tool0") - 1], T, rtol=0, atol=1e-10)
    # without --rpy the orientation at --q0 is kept; the table and a q line to paste back
    res = run("ik", "rx90", "--xyz", "0.5,0.1,0.3", "--q0", "0.1,0.2,0.3,0.1,0.2,0.3")
    assert res.exit_code == 0, res.output
    line = next(x for x in res.stdout.splitlines() if x.startswith("q = "))
    r = rd.load("rx90")
    q = np.array([float(x) for x in line[4:].split(",")])
    np.testing.assert_allclose(rd.forward_kinematics(r, q)[-1, :3, 3], [0.5, 0.1, 0.3], rtol=0, atol=1e-9)
    start = rd.forward_kinematics(r, np.array([0.1, 0.2, 0.3, 0.1, 0.2, 0.3]))[-1, :3, :3]
    np.testing.assert_allclose(rd.forward_kinematics(r, q)[-1, :3, :3], start, rtol=0, atol=1e-9)


def test_identify_payload_from_a_csv_recovers_the_load(tmp_path):
    robot = rd.load("rx90")
    load = rd.standard_from_com(mass=2.5, com=[0.02, -0.01, 0.08], inertia_com=np.diag([0.01, 0.012, 0.008]))
    params = np.array(robot.params)
    params[-1] += load
    loaded = robot.replace(params=params)
    rng = np.random.default_rng(4)
    q, qd, qdd = (rng.uniform(-1.5, 1.5, (60, 6)) for _ in range(3))
    tau = rd.inverse_dynamics(loaded, q, qd, qdd)
    header = [f"{p}{k}" for p in ("q", "qd", "qdd", "tau") for k in range(1, 7)]
    rows = np.column_stack([q, qd, qdd, tau])
    path = tmp_path / "payload.csv"
    path.write_text(",".join(header) + "\n" + "\n".join(_csv(r) for r in rows) + "\n")
    res = run("identify-payload", "rx90", path, "--frame", "j6", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    # noise-free torques of a payload the model holds exactly: recovered to the conditioning of the fit
    assert out["frame"] == 6 and not out["static"]
    assert abs(out["mass"] - 2.5) < 1e-8
    np.testing.assert_allclose(out["com"], [0.02, -0.01, 0.08], rtol=0, atol=1e-8)
    np.testing.assert_allclose(out["inertia"], np.diag([0.01, 0.012, 0.008]), rtol=0, atol=1e-7)
    text = run("identify-payload", "rx90", path)
    assert text.exit_code == 0 and "mass (kg): 2.5" in text.stdout and "payload on frame 6" in text.stdout
    # static poses: q and tau only
    path.write_text(",".join(header[:6] + header[18:]) + "\n" + "\n".join(
        _csv(np.concatenate([a, b])) for a, b in zip(q, rd.gravity_torques(loaded, q))) + "\n")
    out = json.loads(run("identify-payload", "rx90", path, "--json").stdout)
    assert out["static"] and abs(out["mass"] - 2.5) < 1e-8


@pytest.mark.parametrize("args, message", [
    (("fk", "rx90", "--frame", "tool0"), "frame 'tool0' is not a frame of robot 'rx90'"),
    (("jacobian", "rx90", "--frame", "7"), "frame = 7; give a frame number 1..6"),
    (("ik", "rx90", "--xyz", "5,5,5"), "inverse kinematics: target not reached"),
    (("ik", "rx90", "--xyz", "1,2"), "option --xyz has 2 numbers; give 3 (x, y, z in m)"),
])
def test_errors_are_one_line(args, message):
    res = run(*args)
    assert res.exit_code == 2 and message in res.output and len(res.output.strip().splitlines()) == 1, res.output
