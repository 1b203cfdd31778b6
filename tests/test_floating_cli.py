"""`robodyn id`, `robodyn model` and `robodyn fd` on a floating base robot: free-flyer vectors in, the floating-base
functions' numbers out, one-line errors with exit code 2."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app
from tests.support.pin_compare import assert_rel
from tests.support.floating import random_floating, random_free_state


@pytest.fixture
def floating_file(tmp_path):
    robot = random_floating(161)
    return robot, rd.save(robot, tmp_path / "floating.yaml")


def _text(x) -> str:
    return ",".join(repr(float(v)) for v in x)


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_id_takes_free_flyer_vectors(floating_file):
    robot, path = floating_file
    q, v, a = (x[0] for x in random_free_state(robot.n, 3, (1,)))
    out = _run("id", path, "--q", _text(q), "--qd", _text(v), "--qdd", _text(a), "--json")
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["base"] == "floating" and len(doc["tau"]) == robot.n + 6
    assert_rel(np.array(doc["tau"]), rd.floating.floating_inverse_dynamics(robot, q, v, a), 1e-12)
    table = _run("id", path, "--q", _text(q))
    assert table.exit_code == 0 and "base fx" in table.stdout and "base mz" in table.stdout
    # defaults: base at the origin, level, at rest
    rest = json.loads(_run("id", path, "--json").stdout)
    q0 = np.zeros(robot.n + 7)
    q0[6] = 1
    assert_rel(np.array(rest["tau"]), rd.floating.floating_inverse_dynamics(robot, q0, np.zeros(robot.n + 6), np.zeros(robot.n + 6)), 1e-12)


def test_model_takes_free_flyer_vectors(floating_file):
    robot, path = floating_file
    q, v, _ = (x[0] for x in random_free_state(robot.n, 4, (1,)))
    out = _run("model", path, "--q", _text(q), "--qd", _text(v), "--json")
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    zero = np.zeros(robot.n + 6)
    assert np.array(doc["M"]).shape == (robot.n + 6, robot.n + 6)
    assert_rel(np.array(doc["M"]), rd.floating.floating_inertia_matrix(robot, q), 1e-12)
    assert_rel(np.array(doc["G"]), rd.floating.floating_inverse_dynamics(robot, q, zero, zero), 1e-12)
    assert_rel(np.array(doc["H"]), rd.floating.floating_inverse_dynamics(robot, q, v, zero), 1e-12)
    assert _run("model", path).exit_code == 0


def test_fd_takes_free_flyer_vectors(floating_file):
    robot, path = floating_file
    q, v, tau = (x[0] for x in random_free_state(robot.n, 5, (1,)))
    out = _run("fd", path, "--q", _text(q), "--qd", _text(v), "--tau", _text(tau), "--json")
    assert out.exit_code == 0, out.output
    assert_rel(np.array(json.loads(out.stdout)["a"]), rd.floating.floating_forward_dynamics(robot, q, v, tau), 1e-12)
    assert "base wz" in _run("fd", path).stdout


def test_floating_cli_errors(floating_file, tmp_path):
    robot, path = floating_file
    n = robot.n
    cases = [
        (("id", path, "--q", _text(np.zeros(n))), f"--q takes {n + 7} numbers"),
        (("id", path, "--qd", _text(np.zeros(n))), f"--qd takes {n + 6} numbers"),
        (("model", path, "--qd", "1,2"), f"--qd takes {n + 6} numbers"),
        (("fd", path, "--tau", _text(np.zeros(n))), f"--tau takes {n + 6} numbers"),
        (("id", path, "--q", _text(np.r_[np.zeros(6), 2.0, np.zeros(n)])), "unit quaternion"),
        (("fd", path, "--method", "cholesky"), "articulated-body"),
        (("id", path, "--states", tmp_path / "s.csv"), "fixed-base robots"),
    ]
    for args, message in cases:
        out = _run(*args)
        assert out.exit_code == 2, (args, out.output)
        assert message in out.output and out.output.count("\n") == 1, out.output
    mobile = rd.save(robot.replace(base="mobile"), tmp_path / "mobile.yaml")
    out = _run("fd", mobile)
    assert out.exit_code == 2 and "base acceleration" in out.output
    assert _run("id", mobile, "--json").exit_code == 0
