"""robodyn simulate: closed-loop simulation from the command line."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from robodyn.cli import app

runner = CliRunner()


pytestmark = pytest.mark.usefixtures("wide_console")


def test_simulate_json_computed_torque_tracks(tmp_path):
    out = tmp_path / "sim.png"
    res = runner.invoke(app, ["simulate", "planar2r", "--controller", "computed-torque", "--to", "1,0.5",
                              "--duration", "1", "--settle", "0.2", "--samples", "21", "--json", "--plot", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["robot"] == "planar2r" and data["controller"] == "computed-torque"
    assert np.max(data["max_tracking_error"]) < 1e-4  # exact model, rtol = 1e-6
    assert data["energy_balance_error"] < 1e-5 * data["energy_scale"]
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_simulate_table_for_rx90_with_friction():
    res = runner.invoke(app, ["simulate", "rx90", "--controller", "pd-gravity", "--to", "0.3,0.2,-0.2,0,0.3,0",
                              "--duration", "0.5", "--settle", "0.1", "--samples", "11"])
    assert res.exit_code == 0, res.output
    rows = [line for line in res.output.splitlines() if line.startswith("│")]
    assert len(rows) == 6 and "energy balance" in res.output


@pytest.mark.parametrize("args,message", [
    (["--controller", "lqr"], "--controller 'lqr'; choose one of pd-gravity, computed-torque, passivity"),
    (["--trajectory", "cubic"], "--trajectory 'cubic'"),
    (["--friction", "sticky"], "--friction 'sticky'"),
    (["--duration", "0"], "duration = 0.0"),
])
def test_simulate_bad_options(args, message):
    res = runner.invoke(app, ["simulate", "planar2r", "--to", "1,0.5"] + args)
    assert res.exit_code != 0 and message in res.output


def test_puma_line_demo_runs_on_rx90_with_coulomb_friction():
    """Used to run for 15 minutes (Coulomb friction at rest stalled RK45); now LSODA with the smooth model."""
    res = runner.invoke(app, ["demo", "puma-line", "--robot", "rx90", "--methods", "recursive", "--samples", "101",
                              "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    seconds, evaluations = data["table7"]["recursive"]["seconds"], data["table7"]["recursive"]["rhs_evaluations"]
    assert evaluations < 20_000 and seconds > 0
    # open loop over 5 s: errors grow by the arm's open-loop instability from the torque spline's interpolation
    # error (101 samples), so only a sanity bound here; the consistency check at tolerance level is
    # tests/test_simulation.py::test_short_horizon_simulation_tracks_reference
    q_err = np.array(data["table6"]["recursive"]["q"])
    assert q_err.shape == (6,) and np.all(np.isfinite(q_err)) and q_err.max() < 0.1


def test_simulate_clips_at_the_robots_torque_limits_unless_told_not_to(tmp_path):
    """The drives of a robot with limits (taumax in its model file) clip the controller's torque: a 1 N m limit
    on a fast move of the planar arm is reached, and every |Γ| stays at or below it; --no-saturate lifts it."""
    import robodyn as rd

    model = rd.save(rd.load("planar2r").replace(taulim=[1.0, 1.0]), tmp_path / "weak.yaml")
    args = ["simulate", str(model), "--to", "1,0.5", "--duration", "0.3", "--settle", "0.1", "--samples", "21",
            "--json"]
    clipped = json.loads(runner.invoke(app, args).stdout)
    free = json.loads(runner.invoke(app, args + ["--no-saturate"]).stdout)
    assert np.max(free["max_torque"]) > 1.0 and sum(free["saturated_samples"]) == 0
    assert np.all(np.array(clipped["max_torque"]) <= 1.0) and sum(clipped["saturated_samples"]) > 0
