"""Every numeric option of every CLI command, fuzzed (issue 25 items 6 and 7): 0, negative, 1e-300, 1e300, NaN,
inf and huge counts end in exit 0 or in one line and exit 2 — never a traceback, a MemoryError or an endless run;
and the work a command asks for is estimated before anything is allocated (robodyn.cli._limits)."""

import json
import time

import numpy as np
import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app
from robodyn.cli import _limits

runner = CliRunner()

FLOATS = ["0", "-1", "1e-300", "1e300", "nan", "-inf"]
COUNTS = ["0", "-1", str(10**12), "1e8"]
VECTORS = ["1e300,1e300", "nan,0", "inf,1", "1e155,1e155"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("numbers")
    r = rd.load("planar2r")
    q = np.random.default_rng(0).uniform(-1, 1, (40, 2))
    rows = np.column_stack([q, rd.gravity_torques(r, q)])
    (d / "poses.csv").write_text("q1,q2,tau1,tau2\n" + "\n".join(",".join(map(repr, row)) for row in rows) + "\n")
    t = np.arange(400) / 100.0
    rows = np.column_stack([t, np.sin(t), np.cos(2 * t), np.sin(3 * t), np.cos(t)])
    (d / "data.csv").write_text("t,q1,q2,tau1,tau2\n" + "\n".join(",".join(map(repr, row)) for row in rows) + "\n")
    q, qd, qdd = (np.random.default_rng(k).uniform(-1, 1, (30, 2)) for k in (1, 2, 3))
    rows = np.column_stack([q, qd, qdd, rd.inverse_dynamics(r, q, qd, qdd)])
    (d / "payload.csv").write_text("q1,q2,qd1,qd2,qdd1,qdd2,tau1,tau2\n"
                                   + "\n".join(",".join(map(repr, row)) for row in rows) + "\n")
    return d


def _cases(d):
    """command line -> {numeric option: kind}"""
    return [
        (["properties", "planar2r"], {"--samples": COUNTS, "--prismatic-range": ["0,1e300", "nan,1", "1,0"],
                                      "--seed": ["-1", str(2**70)]}),
        (["accuracy", "ascher2", "--steps", "4"], {"--steps": COUNTS, "--m2": FLOATS}),
        (["opcount", "--no-customized"], {"--n-max": COUNTS}),
        (["opcount"], {"--n-max": [str(10**9)]}),
        (["calibration-poses", "planar2r", "--out", str(d / "p.csv")], {"--count": COUNTS, "--seed": ["-1"]}),
        (["identify", "planar2r", str(d / "data.csv")], {"--cutoff": FLOATS, "--decimate": COUNTS,
                                                         "--min-velocity": FLOATS}),
        (["identify-payload", "planar2r", str(d / "payload.csv")], {"--regularization": FLOATS}),
        (["view", "planar2r", "--animate", str(d / "v.gif"), "--duration", "0.1"],
         {"--duration": FLOATS, "--port": ["0", "-1", "65536", str(2**70)], "--seconds": FLOATS}),
        (["excite", "planar2r", "--out", str(d / "e.csv"), "--max-iterations", "1", "--duration", "2"],
         {"--duration": FLOATS + ["1e9"], "--harmonics": COUNTS, "--base-frequency": FLOATS, "--rate": FLOATS + ["1e9"],
          "--seed": ["-1", str(2**70)], "--max-iterations": COUNTS}),
        (["simulate", "planar2r", "--to", "0.1,0.2", "--duration", "0.2", "--settle", "0"],
         {"--duration": FLOATS, "--settle": FLOATS, "--kp": FLOATS, "--kd": FLOATS, "--width": FLOATS,
          "--samples": COUNTS}),
        (["demo", "puma-line", "--samples", "3", "--methods", "recursive"],
         {"--samples": COUNTS, "--rtol": FLOATS, "--atol": FLOATS}),
        (["demo", "kozlowski-puma", "--samples", "3"], {"--duration": FLOATS, "--samples": COUNTS}),
        (["base-params", "planar2r", "--method", "numeric"], {"--seed": ["-1", str(2**70)]}),
        (["id", "planar2r"], {"--q": VECTORS, "--qd": VECTORS, "--qdd": VECTORS}),
        (["model", "planar2r"], {"--q": VECTORS, "--qd": VECTORS}),
        (["fd", "planar2r"], {"--q": VECTORS, "--qd": VECTORS, "--tau": VECTORS}),
        (["calibrate-gravity", "planar2r", str(d / "poses.csv")], {"--joints": ["2,2", "0", "3", "-1", "1e8", ""],
                                                                   "--standstill-velocity": FLOATS,
                                                                   "--standstill-duration": FLOATS}),
    ]


def _one_line_or_success(res, args):
    assert not (res.exception is not None and not isinstance(res.exception, SystemExit)), (args, repr(res.exception))
    assert res.exit_code in (0, 2), (args, res.exit_code, res.output)
    if res.exit_code == 2:
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (args, res.output)
    assert "Traceback" not in res.output


def test_every_numeric_option_of_every_command(files):
    slow = []
    for base, options in _cases(files):
        for option, values in options.items():
            for value in values:
                args = base + [option, value]
                start = time.monotonic()
                res = runner.invoke(app, args)
                _one_line_or_success(res, args)
                if time.monotonic() - start > 60:
                    slow.append(" ".join(args))
    assert not slow, slow


def _is_number(param) -> bool:
    """An int or float option: click's parameter type where typer has one (older typer), else the annotation that
    newer typer keeps (``int``, ``float``, ``float | None``)."""
    import typing

    if getattr(getattr(param, "type", None), "name", "") in ("integer", "float"):
        return True
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    return annotation in (int, float) or any(a in (int, float) for a in typing.get_args(annotation))


def test_every_command_with_numeric_options_is_fuzzed(files):
    """A new command (or option) with a number joins the fuzz above."""
    import typer

    fuzzed = {}
    for base, options in _cases(files):
        name = " ".join(base[:2]) if base[0] == "demo" else base[0]
        fuzzed.setdefault(name, set()).update(options)
    group = typer.main.get_command(app)
    numeric = {}

    def walk(cmd, path):
        if hasattr(cmd, "commands"):
            for sub_name, sub in cmd.commands.items():
                walk(sub, path + [sub_name])
            return
        for p in cmd.params:
            if _is_number(p) and p.opts and p.opts[0].startswith("--"):
                numeric.setdefault(" ".join(path), set()).add(p.opts[0])

    walk(group, [])
    for command, opts in numeric.items():
        assert opts <= fuzzed.get(command, set()), (command, opts - fuzzed.get(command, set()))


@pytest.mark.parametrize("args, fragment", [
    (["simulate", "planar2r", "--to", "0.1,0.2", "--duration", "1e300"], "--duration = 1e+300"),
    (["excite", "planar2r", "--out", "e.csv", "--duration", "1e-300"], "Nyquist"),
    (["excite", "planar2r", "--out", "e.csv", "--duration", "2", "--rate", "1e9"], "--rate"),
    (["excite", "planar2r", "--out", "e.csv", "--duration", "10", "--harmonics", "600"], "Nyquist"),
    (["simulate", "planar2r", "--to", "0.1,0.2", "--samples", "100000000"], "memory"),
    (["calibration-poses", "rx90", "--out", "p.csv", "--count", "100000000"], "limit"),
    (["accuracy", "ascher2", "--steps", "100000000"], "limit"),
    (["properties", "rx90", "--samples", "100000000"], "limit"),
])
def test_issue_reproducers_are_one_line(args, fragment, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], res.output
    assert list(tmp_path.iterdir()) == []  # nothing written


def _chain(n: int) -> str:
    joints = "\n".join(f"  - {{name: j{k}, sigma: 0, d: 0.1}}" for k in range(1, n + 1))
    links = "\n".join("  - {mass: 1.0, com: [0.05, 0, 0], inertia_com: [0.01, 0, 0, 0.01, 0, 0.01]}" for _ in range(n))
    return f"name: chain{n}\njoints:\n{joints}\nlinks:\n{links}\n"


@pytest.mark.parametrize("command", [["properties"], ["model"], ["fd", "--method", "cholesky"], ["generate"],
                                     ["base-params"], ["base-params", "--method", "numeric"]])
def test_a_small_file_with_many_joints_is_refused_before_allocating(command, tmp_path, monkeypatch):
    """A ~80 KB file of 1200 joints (issue 25: a 37 KB file made `properties` allocate 119 GiB)."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "chain.yaml"
    path.write_text(_chain(1200))
    start = time.monotonic()
    res = runner.invoke(app, [command[0], str(path), *command[1:]])
    assert time.monotonic() - start < 60
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "--allow-large" in lines[0] and "ROBODYN_ALLOW_LARGE" in lines[0], res.output
    assert [p.name for p in tmp_path.iterdir()] == ["chain.yaml"]


def test_the_limits_can_be_lifted(monkeypatch):
    with pytest.raises(rd.InputError, match="memory"):
        _limits.check_work("x", nbytes=2 * _limits.MAX_BYTES)
    with pytest.raises(rd.InputError, match="would take about"):
        _limits.check_work("x", flops=1e15)
    monkeypatch.setenv(_limits.ALLOW_ENV, "1")
    _limits.check_work("x", nbytes=2 * _limits.MAX_BYTES, flops=1e15)
    monkeypatch.delenv(_limits.ALLOW_ENV)
    # the global option lifts the symbolic limit (the command fails later here, on an unknown method)
    args = ["opcount", "--n-max", str(_limits.MAX_SYMBOLIC_JOINTS + 1), "--methods", "nonexistent"]
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and "limited to n <= 60" in res.output and "--allow-large" in res.output, res.output
    res = runner.invoke(app, ["--allow-large", *args])
    assert res.exit_code == 2 and "limited" not in res.output and "nonexistent" in res.output, res.output


def test_version():
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output == f"robodyn {rd.__version__}\n"


def test_calibrate_gravity_json_with_unused_joints_is_strict_json(tmp_path):
    """Joint 1 unused: its residual is undefined (NaN in the API), null in strict JSON."""
    r = rd.load("rx90")
    q = rd.identification.calibration_poses(r, 30, seed=1)
    rows = np.column_stack([q, rd.gravity_torques(r, q)])
    path = tmp_path / "poses.csv"
    names = [f"q{k}" for k in range(1, 7)] + [f"tau{k}" for k in range(1, 7)]
    path.write_text(",".join(names) + "\n" + "\n".join(",".join(repr(float(x)) for x in row) for row in rows) + "\n")
    res = runner.invoke(app, ["calibrate-gravity", "rx90", str(path), "--joints", "2,3,4,5,6", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output, parse_constant=lambda c: pytest.fail(f"not strict JSON: {c}"))
    assert data["residual_rms"][0] is None and all(x is not None for x in data["residual_rms"][1:])
    res = runner.invoke(app, ["calibrate-gravity", "rx90", str(path), "--joints", "2,2"])
    assert res.exit_code == 2 and "joint 2 is given twice" in res.output
    res = runner.invoke(app, ["calibrate-gravity", "rx90", str(path), "--joints", "7"])
    assert res.exit_code == 2 and "joint 7 does not exist" in res.output
