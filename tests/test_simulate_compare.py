"""`robodyn simulate --compare LOG` (users issue §4): the model driven open loop by a measured run's efforts,
compared with the measured q.  A run produced by robodyn's own simulation, written as a ROS bag and as CSV,
replays to ~0 error (the integrator tolerance, 1e-6); another model does not."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app
from robodyn.control import ComputedTorque, QuinticReference
from robodyn.dynamics.friction_models import SmoothFriction
from tests.support.joint_bags import write_joint_bag


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """rx90 tracking a quintic under computed torque (the default of `robodyn simulate`), 1.2 s at 1 kHz, written
    as a CSV log (t, q, qd, tau), a ROS 1 bag and a ROS 2 MCAP bag (joints listed in a shuffled order)."""
    folder = tmp_path_factory.mktemp("compare")
    robot = rd.load("rx90")
    q0, qf = np.zeros(6), np.array([0.5, -0.4, 0.3, 0.2, -0.3, 0.6])
    ref = QuinticReference(q0, qf, 1.0)
    ctl = ComputedTorque(robot, 100.0, 20.0, ref, friction=SmoothFriction(width=0.01))
    t = np.linspace(0.0, 1.2, 1201)
    sim = rd.simulate(robot, ctl, q0, np.zeros(6), t, friction=SmoothFriction(width=0.01))
    header = ["t"] + [f"{p}{k}" for p in ("q", "qd", "tau") for k in range(1, 7)]
    rows = np.column_stack([sim.t, sim.q, sim.qd, sim.tau])
    csv_path = folder / "run.csv"
    csv_path.write_text(",".join(header) + "\n" + "".join(",".join(repr(float(x)) for x in r) + "\n" for r in rows))
    files = {"csv": csv_path}
    if pytest.importorskip("rosbags"):
        order = [2, 5, 0, 1, 4, 3]
        files["ros1"] = write_joint_bag(folder / "run.bag", "ros1", robot.q_names, t, sim.q, sim.qd, sim.tau,
                                        order=order)
        files["mcap"] = write_joint_bag(folder / "run_mcap", "mcap", robot.q_names, t, sim.q, sim.qd, sim.tau,
                                        order=order)
    return {"folder": folder, "files": files, "sim": sim}


def _simulate(*args):
    return CliRunner().invoke(app, ["simulate", *map(str, args)])


@pytest.mark.parametrize("kind", ["csv", "ros1", "mcap"])
def test_a_robodyn_run_replays_to_zero_error(run, kind):
    result = _simulate("rx90", "--compare", run["files"][kind], "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["samples"] == 1201 and out["duration"] == pytest.approx(1.2, abs=1e-9)
    rms, worst = np.array(out["rms_error"]), np.array(out["max_error"])
    assert rms.shape == (6,) and np.all(rms < 1e-5) and np.all(worst < 3e-5), rms
    assert np.abs(run["sim"].q).max() > 0.5  # the motion is 5 orders of magnitude larger than the error


def test_another_model_does_not_replay(run, tmp_path):
    """The same torques on a robot with a 2 kg heavier link 3 (a model error) give errors of centiradians."""
    robot = rd.load("rx90")
    params = np.array(robot.params, dtype=float)
    params[2, 9] += 2.0  # M3 (columns XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M)
    heavier = robot.replace(params=params)
    model = tmp_path / "heavier.yaml"
    rd.save(heavier, model)
    result = _simulate(model, "--compare", run["files"]["csv"], "--json")
    assert result.exit_code == 0, result.output
    assert max(json.loads(result.stdout)["rms_error"]) > 1e-3


def test_table_and_plot(run, tmp_path, wide_console):
    # wide: rich would wrap the long temporary path (a pytest-xdist worker's folder) inside the sentence
    plot = tmp_path / "compare.png"
    result = _simulate("rx90", "--compare", run["files"]["csv"], "--plot", plot)
    assert result.exit_code == 0, result.output
    assert "RMS |q − q_meas|" in result.stdout and f"plot written to {plot}" in result.stdout
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_errors_are_one_line_and_write_nothing(run, tmp_path):
    two = tmp_path / "two.csv"
    two.write_text("t,q1,q2,tau1,tau2\n0,0,0,0,0\n0.1,0,0,0,0\n0.2,0,0,0,0\n")
    no_effort = tmp_path / "no_effort.csv"
    no_effort.write_text("t,q1,q2,q3,q4,q5,q6\n0,0,0,0,0,0,0\n0.1,0,0,0,0,0,0\n0.2,0,0,0,0,0,0\n")
    plot = tmp_path / "p.png"
    cases = {
        "n = 6": ["rx90", "--compare", two, "--plot", plot],  # joint count of the log and of the robot differ
        "no efforts": ["rx90", "--compare", no_effort],
        "leave them out": ["rx90", "--compare", run["files"]["csv"], "--to", "0,0,0,0,0,0"],
        "--to": ["rx90"],
    }
    for needle, args in cases.items():
        result = _simulate(*args)
        assert result.exit_code == 2, (args, result.output)
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], result.output
    assert not plot.exists()


def test_a_diverging_replay_stops_and_says_so(tmp_path):
    """Zero torque against gravity: the measured arm holds still, the model falls and swings (rx90 at q = 0 has
    gravity torque on joint 2). The replay stops once an error exceeds the measured range (at least 1 rad) and
    says so; the errors cover the samples before, each below that bound."""
    t = np.linspace(0.0, 30.0, 3001)
    log = tmp_path / "still.csv"
    header = ["t"] + [f"q{k}" for k in range(1, 7)] + [f"tau{k}" for k in range(1, 7)]
    rows = np.column_stack([t, np.zeros((t.size, 12))])
    log.write_text(",".join(header) + "\n" + "".join(",".join(repr(float(x)) for x in r) + "\n" for r in rows))
    result = _simulate("rx90", "--compare", log, "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["diverged"] is True and 0.0 < out["diverged_at"] < 30.0
    assert 2 <= out["compared_samples"] < 3001 and max(out["max_error"]) <= 1.0
    table = _simulate("rx90", "--compare", log)
    assert table.exit_code == 0 and sum("diverged: at t = " in line for line in table.stdout.splitlines()) == 1


def test_a_log_too_long_to_integrate_is_refused(tmp_path):
    """Three rows spanning 1e9 s: the integration would take days; refused before integrating, in one line."""
    log = tmp_path / "long.csv"
    log.write_text("t,q1,q2,q3,q4,q5,q6,tau1,tau2,tau3,tau4,tau5,tau6\n" + "".join(
        f"{t},0,0,0,0,0,0,0,0,0,0,0,0\n" for t in (0.0, 5e8, 1e9)))
    result = _simulate("rx90", "--compare", log)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "would take about" in lines[0] and "--allow-large" in lines[0], result.output
