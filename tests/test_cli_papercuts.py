"""What a newcomer's first commands print (issue 33 §3): tables that keep 80 columns without a terminal, no
rounding noise printed as a value, --degrees shown in degrees, one CSV-cell message for Python and the command
line, a suggestion for a mistyped robot name, URDF link names as frames."""

import os
import subprocess
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app
from robodyn.cli._common import chop, fixed_point
from robodyn.errors import InputError
from robodyn.logs import read_joint_log
from tests.support.checks import example_robot_data_path

runner = CliRunner()
UR5 = "ur_description/urdf/ur5_robot.urdf"
PANDA = "panda_description/urdf/panda.urdf"


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def piped(*args) -> str:
    """Standard output of ``robodyn ARGS`` in a fresh process writing to a pipe (no terminal), COLUMNS=80."""
    env = dict(os.environ, COLUMNS="80", PYTHONWARNINGS="ignore")
    env.pop("FORCE_COLOR", None)
    res = subprocess.run([sys.executable, "-c", "from robodyn.cli import app; app()", *map(str, args)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_info_and_model_of_urdf_robots_fit_80_columns_without_splitting_names():
    info = piped("info", example_robot_data_path(UR5))
    assert max(map(len, info.splitlines())) <= 80
    lines = info.splitlines()
    # every frame name and URDF link on one line, whole
    for name, link in (("wrist_3_link-tool0_fixed_joint", "tool0"), ("shoulder_pan_joint", "shoulder_link")):
        assert any(name in line and line.split()[-1] == link for line in lines), info
    # no rounding noise of the frame changes among the inertias (1e-17 beside 1 kg m²)
    assert "e-1" not in info and "e-2" not in info
    model = piped("model", example_robot_data_path(PANDA), "--q", "0.1,0.2,0.3,-1,0,1,0,0.01,0.01")
    assert max(map(len, model.splitlines())) <= 80, model
    assert any(line.split() == [str(k) for k in range(1, 10)] for line in model.splitlines())  # one header line
    assert "9 = panda_finger_joint2" in " ".join(model.split())


def test_rounding_noise_is_printed_as_zero():
    robot = rd.load(example_robot_data_path(UR5))
    q = np.array([0.3, -1.0, 1.0, 0.2, 0.3, 0.4])
    tau = rd.gravity_torques(robot, q)
    assert 0 < abs(tau[0]) < 1e-13  # joint 1 turns about the vertical: zero up to rounding
    res = run("id", example_robot_data_path(UR5), "--q", ",".join(map(str, q)))
    assert res.exit_code == 0, res.output
    row = next(line for line in res.stdout.splitlines() if "shoulder_pan_joint" in line)
    assert "│ 0 N m" in row and "e-1" not in row
    assert f"{tau[1]:.10g} N m" in res.stdout
    np.testing.assert_array_equal(chop([1e-27, -2.5e-27, 3.0]), [0.0, 0.0, 3.0])
    assert chop([-2.5e-27])[0] == 0 and np.signbit(chop([-2.5e-27])[0]) == 0  # "0", never "-0"
    assert fixed_point([[2.857, -0.0000691], [0.0833, 1e-20]]) == ["2.857", "0", "0.083", "0"]


def test_degrees_are_shown_in_degrees():
    res = run("id", "rx90", "--degrees", "--q", "200,10,0,0,0,0", "--qd", "30,0,0,0,0,0")
    assert res.exit_code == 0, res.output
    assert "warning: --q: outside the joint limits of j1 (-160..160 deg)" in res.output
    row = next(line for line in res.stdout.splitlines() if line.startswith("│ j1"))
    assert row.split("│")[3].strip() == "200" and row.split("│")[4].strip() == "30"
    assert "q (deg)" in res.stdout and "qd (deg/s)" in res.stdout


def test_a_bad_csv_cell_reads_alike_in_python_and_on_the_command_line(tmp_path):
    path = tmp_path / "run.csv"
    path.write_text("t,q1,q2,tau1,tau2\n0,0.1,0.2,1,2\n0.01,0.1,x,1,2\n")
    with pytest.raises(InputError) as python:
        read_joint_log(path)
    res = run("identify", "planar2r", path)
    assert res.exit_code == 2
    cell = "line 3, column q2: 'x' is not a number"
    assert str(python.value).endswith(cell) and cell in res.output, (str(python.value), res.output)


def test_a_mistyped_robot_name_gets_a_suggestion():
    res = run("info", "rx9O")
    assert res.exit_code == 2
    assert "unknown robot 'rx9O' (did you mean 'rx90'?)" in res.output and ".urdf" in res.output
    with pytest.raises(rd.UnknownRobotError, match="did you mean 'panda'"):
        rd.load("pand")


def test_joint_names_name_q_and_frame_names_every_frame():
    robot = rd.load(example_robot_data_path(UR5))
    q = np.array([0.3, -1.0, 1.0, 0.2, 0.3, 0.4])
    assert len(robot.joint_names) == robot.n == len(q) and len(robot.frame_names) == robot.nf
    assert robot.joint_names == tuple(robot.frame_names[i] for i in robot.joint_frames)
    assert dict(zip(robot.joint_names, q))["elbow_joint"] == q[2]
    renamed = robot.replace(joint_names=[f"J{k}" for k in range(1, 7)])
    assert renamed.joint_names == ("J1", "J2", "J3", "J4", "J5", "J6") and renamed.frame_names[0] == "world_joint"
    with pytest.raises(rd.ModelError, match="joint_names needs 6 names"):
        robot.replace(joint_names=robot.frame_names)
    # a frame is named by its URDF link wherever frame= is taken, and the name survives a YAML round trip
    T = rd.forward_kinematics(robot, q)
    for link in ("tool0", "ee_link", "base_link"):
        j = robot.frame_index(link)
        np.testing.assert_array_equal(rd.jacobian(robot, q, frame=link), rd.jacobian(robot, q, frame=j))
        assert robot.link_names[j - 1] == link
    assert rd.loads(rd.dumps(robot)).link_names == robot.link_names
    np.testing.assert_array_equal(rd.forward_kinematics(rd.loads(rd.dumps(robot)), q), T)


def test_the_animation_has_equal_axes(tmp_path, monkeypatch):
    import matplotlib.animation as manimation

    figures = []
    original = manimation.FuncAnimation

    def recording(fig, *args, **kwargs):
        figures.append(fig)
        return original(fig, *args, **kwargs)

    monkeypatch.setattr(manimation, "FuncAnimation", recording)
    robot = rd.load("planar2r")  # a planar arm: its motion spans x and y but not z
    t = np.linspace(0.0, 1.0, 11)
    rd.animate(robot, t, np.stack([np.sin(t), np.cos(t)], -1), tmp_path / "m.gif", fps=5)
    ax = figures[0].axes[0]
    spans = [np.diff(lim)[0] for lim in (ax.get_xlim3d(), ax.get_ylim3d(), ax.get_zlim3d())]
    box = ax.get_box_aspect()
    # equal data spans drawn in a box of equal sides: one metre is as long along every axis
    np.testing.assert_allclose(np.array(spans) / box, spans[0] / box[0], rtol=1e-12)


def test_info_json_gives_each_frame_its_urdf_link():
    """`robodyn info --json`: every frame's URDF link (the names `frame=` and `--frame` take), "" where none."""
    import json

    robot = rd.load(example_robot_data_path(UR5))
    res = run("info", example_robot_data_path(UR5), "--json")
    assert res.exit_code == 0, res.output
    geometry = json.loads(res.stdout)["geometry"]
    assert [g["link"] for g in geometry] == list(robot.link_names) and "tool0" in robot.link_names
    assert [g["link"] for g in json.loads(run("info", "rx90", "--json").stdout)["geometry"]] == [""] * 6
