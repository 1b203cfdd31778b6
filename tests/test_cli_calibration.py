"""The calibration commands: robodyn calibrate-gravity, calibration-poses, demo wam-gravity."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app

runner = CliRunner()


pytestmark = pytest.mark.usefixtures("wide_console")


def _write(path, q, tau, header=None):
    n = q.shape[1]
    header = header or [f"q{k}" for k in range(1, n + 1)] + [f"tau{k}" for k in range(1, n + 1)]
    lines = [",".join(header)] + [",".join(repr(float(x)) for x in row) for row in np.c_[q, tau]]
    path.write_text("\n".join(lines) + "\n")


def test_poses_then_calibrate_recovers_the_model(tmp_path):
    poses = tmp_path / "poses.csv"
    res = runner.invoke(app, ["calibration-poses", "puma560", "--count", "12", "--out", str(poses), "--json"])
    assert res.exit_code == 0, res.output
    info = json.loads(res.output)
    q = np.loadtxt(poses, delimiter=",", skiprows=1)
    assert q.shape == (12, 6) and info["condition_number"] > 1
    assert np.array_equal(q, rd.identification.calibration_poses(rd.load("puma560"), 12, seed=0))
    robot = rd.load("puma560")
    data = tmp_path / "data.csv"
    _write(data, q, rd.gravity_torques(robot, q))
    out, plot = tmp_path / "calib.yaml", tmp_path / "calib.png"
    for method in ("coupled", "iterative"):
        res = runner.invoke(app, ["calibrate-gravity", "puma560", str(data), "--method", method, "--out", str(out),
                                  "--plot", str(plot), "--json"])
        assert res.exit_code == 0, res.output
        doc = json.loads(res.output)
        truth = rd.identification.first_moments(robot, grouped=True)
        assert np.max(np.abs(np.array(doc["mu"]) - truth)) < 1e-8 * np.abs(truth).max()
        assert doc["method"] == method and max(doc["residual_rms"]) < 1e-9
        assert np.allclose(rd.identification.load_gravity_calibration(out).mu, doc["mu"], rtol=0, atol=0)
        assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_calibrate_prints_table_residuals_and_notes(tmp_path):
    robot = rd.load("wam7")
    q = rd.identification.calibration_poses(robot, 10, seed=3, unlimited=True)
    data = tmp_path / "data.csv"
    _write(data, q, rd.gravity_torques(robot, q) + 0.5)
    res = runner.invoke(app, ["calibrate-gravity", "wam7", str(data), "--offsets"])
    assert res.exit_code == 0, res.output
    rows = [line.split("│")[1:-1] for line in res.output.splitlines() if line.startswith("│")]
    assert [r[0].strip() for r in rows] == [str(j) for j in range(1, 8)]
    assert all(r[4].strip().startswith("0.5 ±") for r in rows)
    assert rows[0][1].strip() == "—"
    assert "mu3z: confounded with mu2y" in res.output


def test_bad_csv_one_line_error_nothing_written(tmp_path):
    robot = rd.load("planar2r")
    q = rd.identification.calibration_poses(robot, 6, unlimited=True)
    tau = rd.gravity_torques(robot, q)
    out = tmp_path / "calib.yaml"
    data = tmp_path / "bad.csv"
    _write(data, q, tau, header=["q1", "q2", "tau1", "torque2"])
    res = runner.invoke(app, ["calibrate-gravity", "planar2r", str(data), "--out", str(out)])
    assert res.exit_code == 2 and "missing column(s) tau2" in res.output
    assert len(res.output.strip().splitlines()) == 1 and not out.exists()
    _write(data, q, np.c_[tau, tau[:, :1]], header=["q1", "q2", "tau1", "tau2", "tau3"])
    res = runner.invoke(app, ["calibrate-gravity", "planar2r", str(data), "--out", str(out)])
    assert res.exit_code == 2 and "unknown column(s) tau3" in res.output and not out.exists()
    tau_nan = tau.copy()
    tau_nan[4, 0] = np.nan
    _write(data, q, tau_nan)
    res = runner.invoke(app, ["calibrate-gravity", "planar2r", str(data), "--out", str(out)])
    assert res.exit_code == 2 and "rows 5 " in res.output and not out.exists()
    data.write_text("q1,q2,tau1,tau2\n0.1,0.2,abc,1\n")
    res = runner.invoke(app, ["calibrate-gravity", "planar2r", str(data), "--out", str(out)])
    assert res.exit_code == 2 and "line 2, column tau1" in res.output and not out.exists()
    _write(data, q, tau)
    plot = tmp_path / "p.png"
    res = runner.invoke(app, ["calibrate-gravity", "planar2r", str(data), "--out", str(tmp_path / "no" / "c.yaml"),
                              "--plot", str(plot)])
    assert res.exit_code == 2 and "does not exist" in res.output and not plot.exists()
    _write(data, q[:1], tau[:1])
    res = runner.invoke(app, ["calibrate-gravity", "planar2r", str(data), "--out", str(out)])
    assert res.exit_code == 2 and "undetermined" in res.output and not out.exists()


def test_demo_wam_gravity():
    res = runner.invoke(app, ["demo", "wam-gravity", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert np.array(doc["calibrated_libbarrett"])[1, 2] == pytest.approx(3.20627)
    assert doc["link_relative_difference"][1] == pytest.approx(0.2134, abs=1e-3)
    res = runner.invoke(app, ["demo", "wam-gravity"])
    assert res.exit_code == 0 and "21.3%" in res.output
