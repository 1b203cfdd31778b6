"""robodyn demo kozlowski-puma: Kozłowski's spatial-operator inverse → Kalman/Bryson–Frazier forward dynamics."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app
from robodyn.cli._common import console
from robodyn.cli.kozlowski import round_trip, trajectory

runner = CliRunner()


def strict_json(text):
    def refuse(name):
        raise AssertionError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def at(t):
    """q, q̇, q̈ (6,) at time t > 0: the middle sample of a 3-sample trajectory over [0, 2t]."""
    _, q, qd, qdd = trajectory(6, 2 * t, 3)
    return q[1], qd[1], qdd[1]


def test_trajectory_derivatives_are_consistent():
    """q̇ and q̈ are the time derivatives of q (central differences, h = 1e-5 s: truncation error about
    h² max|q⁽³⁾| ≈ 1e-8 and rounding about 1e-16 / h ≈ 1e-11, hence the 1e-6 tolerance)."""
    h = 1e-5
    for t in (0.3, 1.7, 4.2):
        q, qd, qdd = at(t)
        (qp, qdp, _), (qm, qdm, _) = at(t + h), at(t - h)
        np.testing.assert_allclose((qp - qm) / (2 * h), qd, rtol=0, atol=1e-6)
        np.testing.assert_allclose((qdp - qdm) / (2 * h), qdd, rtol=0, atol=1e-6)


def test_round_trip_on_the_puma_is_at_machine_precision():
    """PUMA 560 (AKB): inverse then forward with Kozłowski's algorithms returns q̈ to 1e-12 relative to the
    largest |q̈| (float64 rounding, amplified at most by cond(A) ≈ 1e2–1e3 along the path); the spatial-operator
    Γ equals Newton–Euler's and the Kalman q̈ the recursive q̈ to the same tolerance (different algorithms,
    same model)."""
    puma = rd.load("puma560")
    r = round_trip(puma, 5.0, 101)
    assert r.round_trip.max() < 1e-12 * r.qdd_max.max()
    assert r.inverse_vs_ne.max() < 1e-12 * r.tau_max.max()
    assert r.forward_vs_rec.max() < 1e-12 * r.qdd_max.max()
    _, q, qd, qdd = trajectory(6, 5.0, 101)
    np.testing.assert_allclose(r.tau_max, np.abs(rd.inverse_dynamics(puma, q, qd, qdd)).max(0), rtol=1e-12)
    np.testing.assert_array_equal(r.qdd_max, np.abs(qdd).max(0))


def test_demo_json_is_strict_and_matches_the_function():
    res = runner.invoke(app, ["demo", "kozlowski-puma", "--samples", "21", "--duration", "2", "--json"])
    assert res.exit_code == 0, res.output
    out = strict_json(res.stdout)
    r = round_trip(rd.load("puma560"), 2.0, 21)
    assert out["robot"] == "puma560" and out["samples"] == 21 and out["duration"] == 2.0
    assert out["tau_max"] == r.tau_max.tolist() and out["round_trip"] == r.round_trip.tolist()
    assert out["inverse_vs_newton_euler"] == r.inverse_vs_ne.tolist()
    assert out["forward_vs_recursive"] == r.forward_vs_rec.tolist()
    assert set(out["relative"]) == {"round_trip", "inverse_vs_newton_euler", "forward_vs_recursive"}
    assert max(out["relative"].values()) < 1e-12


def test_demo_text_fits_80_columns(monkeypatch):
    monkeypatch.setattr(console, "_width", 80)
    res = runner.invoke(app, ["demo", "kozlowski-puma", "--samples", "21"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    assert not [line for line in res.output.splitlines() if len(line.rstrip()) > 80]
    assert "…" not in res.output
    rows = [line.split("│")[1].strip() for line in res.output.splitlines() if line.startswith("│")]
    assert rows == ["1", "2", "3", "4", "5", "6"]
    assert "round trip" in res.output and "Newton–Euler" in res.output


@pytest.mark.parametrize("args, message", [
    (["--samples", "1"], "option --samples = 1: give an integer >= 2"),
    (["--duration", "0"], "option --duration = 0.0: give a number > 0 and <= 1e+06 s"),
    (["--robot", "wam7"], "has n = 7 joints"),
    (["--robot", "nosuchrobot"], "unknown robot 'nosuchrobot'"),
])
def test_demo_bad_input_exits_2(args, message):
    res = runner.invoke(app, ["demo", "kozlowski-puma", *args])
    assert res.exit_code == 2 and message in res.output, res.output
