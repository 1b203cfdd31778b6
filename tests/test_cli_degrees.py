"""Units guard of the command line (users issue §3): --degrees reads revolute joints in degrees, and a position
outside the joint limits (degrees typed as radians, most often) gives a one-line warning; prismatic joints keep
metres."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app

runner = CliRunner()


def _tau(args):
    res = runner.invoke(app, args + ["--json"])
    assert res.exit_code == 0, res.output
    return np.array(json.loads(res.stdout)["tau"]), res.stderr


def test_degrees_equal_radians_and_no_warning_inside_limits():
    q_deg = [0, 45, -30, -60, 20, 90, 5]  # inside the Panda's limits (j4 is always bent: -176..-4 deg)
    rad, warn_rad = _tau(["id", "panda", "--q", ",".join(map(str, np.deg2rad(q_deg)))])
    deg, warn_deg = _tau(["id", "panda", "--q", ",".join(map(str, q_deg)), "--degrees"])
    np.testing.assert_allclose(deg, rad, rtol=1e-12, atol=1e-12)
    assert "warning" not in warn_rad and "warning" not in warn_deg


def test_degrees_typed_as_radians_warn_and_name_the_joints():
    tau, err = _tau(["id", "panda", "--q", "0,90,-30,0,0,0,0"])
    assert tau.shape == (7,)
    assert err.count("warning") == 1 and "j2" in err and "j3" in err and "--degrees" in err
    assert "j1" not in err.split("limits of")[1].split("(")[0]


def test_prismatic_joints_stay_in_metres_and_velocities_convert():
    robot = rd.load("stanford")
    sigma = robot.sigma[robot.joint_frames]
    q = np.where(sigma == 1, 0.3, 20.0)
    qd = np.full(robot.n, 10.0)
    got, _ = _tau(["id", "stanford", "--q", ",".join(map(str, q)), "--qd", ",".join(map(str, qd)), "--degrees"])
    scale = np.where(sigma == 1, 1.0, np.pi / 180)
    want = rd.inverse_dynamics(robot, q * scale, qd * scale, np.zeros(robot.n))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("args", [["model", "rx90", "--q", "0,90,0,0,0,0"], ["fd", "rx90", "--q", "0,90,0,0,0,0"]])
def test_model_and_fd_warn_too(args):
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert res.stderr.count("warning") == 1 and "--degrees" in res.stderr


def test_states_file_outside_limits_warns(tmp_path):
    robot = rd.load("rx90")
    cols = [f"{k}{j}" for k in ("q", "qd", "qdd") for j in range(1, 7)]
    rows = np.zeros((3, 18))
    rows[1, 1] = 45.0  # degrees typed into a radian column
    path = tmp_path / "states.csv"
    path.write_text(",".join(cols) + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    res = runner.invoke(app, ["id", "rx90", "--states", str(path)])
    assert res.exit_code == 0, res.output
    assert res.stderr.count("warning") == 1 and robot.q_names[1] in res.stderr


def test_tip_and_base_cut_a_urdf_for_every_command(tmp_path):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = rd.save(rd.load("panda"), tmp_path / "panda.urdf")
        whole = rd.load(path)
    links = [line.split('"')[1] for line in path.read_text().splitlines() if line.strip().startswith("<link ")]
    tip = links[4]  # a link in the middle of the arm
    cut = rd.from_urdf(path, tip=tip)
    assert cut.n < whole.n
    for args in (["info", str(path), "--json"], ["id", str(path), "--json"], ["model", str(path), "--json"]):
        res = runner.invoke(app, ["--tip", tip] + args)
        assert res.exit_code == 0, res.output
        out = json.loads(res.stdout)
        assert out["n"] == cut.n if "n" in out else len(out.get("tau", out.get("Q", []))) == cut.n
    bad = runner.invoke(app, ["--tip", tip, "info", "rx90"])
    assert bad.exit_code == 2 and "not a .urdf file" in bad.output
    nolink = runner.invoke(app, ["--tip", "no_such_link", "info", str(path)])
    assert nolink.exit_code == 2 and len(nolink.output.strip().splitlines()) == 1
