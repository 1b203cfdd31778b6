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


def test_trajectory_is_kozlowskis():
    """Kozłowski §5: 4 s, 300 samples, fifth-order polynomials from rest to rest over the ranges he gives (joint 1
    from −150° to 150°, ..., joint 6 from −150° to 150°); q̇ and q̈ are the time derivatives of q (central
    differences on the samples, h = 1e-5 s: truncation about h² max|q⁽³⁾| ≈ 1e-8, rounding about 1e-16 / h)."""
    t, q, qd, qdd = trajectory(6)
    assert t.shape == (300,) and t[-1] == 4.0 and q.shape == qd.shape == qdd.shape == (300, 6)
    np.testing.assert_allclose(np.degrees(q[0]), [-150, -90, -130, -240, -220, -150], rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.degrees(q[-1]), [150, 90, 130, 70, 40, 150], rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.r_[qd[[0, -1]], qdd[[0, -1]]], 0.0, rtol=0, atol=1e-12)
    h = 1e-5
    t, q, qd, qdd = trajectory(6, 4.0, 400001)
    np.testing.assert_allclose((q[2:] - q[:-2]) / (2 * h), qd[1:-1], rtol=0, atol=1e-6)
    np.testing.assert_allclose((qd[2:] - qd[:-2]) / (2 * h), qdd[1:-1], rtol=0, atol=1e-6)


def test_round_trip_on_the_puma_is_at_machine_precision():
    """PUMA 560 (AKB): inverse then forward with Kozłowski's algorithms returns q̈ to 1e-12 relative to the
    largest |q̈| (float64 rounding, amplified at most by cond(A) ≈ 1e2–1e3 along the path); the spatial-operator
    Γ equals Newton–Euler's and the Kalman q̈ the recursive q̈ to the same tolerance (different algorithms,
    same model), and so does the two-sided form (3.1)–(3.14)."""
    puma = rd.load("puma560")
    r = round_trip(puma)
    assert r.round_trip.max() < 1e-12 * r.qdd_max.max()
    assert r.inverse_vs_ne.max() < 1e-12 * r.tau_max.max()
    assert r.forward_vs_rec.max() < 1e-12 * r.qdd_max.max()
    assert r.two_sided_vs_ne.max() < 1e-12 * r.tau_max.max()
    _, q, qd, qdd = trajectory(6)
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
    assert out["two_sided_vs_newton_euler"] == r.two_sided_vs_ne.tolist()
    assert set(out["relative"]) == {"round_trip", "inverse_vs_newton_euler", "forward_vs_recursive",
                                    "two_sided_vs_newton_euler"}
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
