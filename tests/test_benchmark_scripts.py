"""The benchmark scripts start from any folder, as benchmarks/README.md shows them (``python benchmarks/x.py``):
a script that borrows the test suite's robots (``tests.support``) puts the repository on ``sys.path`` first, since
Python puts only the script's own folder there."""

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_scripts_that_import_tests_put_the_repository_on_the_path():
    missing = []
    for path in sorted((ROOT / "benchmarks").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        first = min((node.lineno for node in ast.walk(ast.parse(text))
                     if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "tests"),
                    default=None)
        if first is None:
            continue
        before = "\n".join(text.splitlines()[: first - 1])
        if not ("sys.path" in before and "parents[1]" in before):
            missing.append(path.name)
    assert not missing, f"import tests.* before putting the repository on sys.path: {missing}"


def test_a_script_runs_from_another_folder(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_regressor.py"), "--help"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]


def test_bench_threads_runs_its_kernels(tmp_path):
    """bench_threads calls the kernels' batch entry itself: a change of that entry's arguments must show here."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_threads.py"), "--sizes", "6", "--repeat",
                          "1", "--min-ms", "2"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "answered" not in run.stdout + run.stderr


def test_measured_rows_are_robodyn_identify_at_its_defaults(tmp_path, monkeypatch):
    """bench_identification.py --measured scores what `robodyn identify` computes at its defaults: on a motor-side
    log of a coupled arm, each row's parameters and held-out error equal those of `robodyn identify --transmission
    --validate` (and --method, --parallel) run on the identification rows and the rest, to 1e-10 relative."""
    import csv
    import importlib.util
    import json

    import numpy as np
    from typer.testing import CliRunner

    import robodyn as rd
    from robodyn.cli import app

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    path = ROOT / "benchmarks" / "bench_identification.py"
    spec = importlib.util.spec_from_file_location("bench_identification", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)

    robot = rd.load("planar3r")
    joints = np.append(np.ones(robot.n), 0)  # the tip frame is fixed: no joint friction or rotor
    robot = robot.replace(Fc=0.3 * joints, Fv=0.1 * joints, Ia=0.05 * joints)
    (tmp_path / "tr.yaml").write_text("gear_ratios: [20, 20, 15]\ncoupling:\n  - {motor: 3, joint: 2, value: 15}\n")
    tr = rd.dynamics.load_transmission(tmp_path / "tr.yaml", robot.n)
    t = np.arange(3000) / 250.0  # 12 s at 250 Hz
    w = 2 * np.pi * np.array([[0.2, 0.3, 0.25], [0.5, 0.7, 0.45]])
    amp = np.array([[1.0, 0.8, 1.2], [0.3, 0.4, 0.2]])
    q = sum(a * np.sin(f * t[:, None] + k) for k, (a, f) in enumerate(zip(amp, w)))
    qd = sum(a * f * np.cos(f * t[:, None] + k) for k, (a, f) in enumerate(zip(amp, w)))
    qdd = sum(-a * f**2 * np.sin(f * t[:, None] + k) for k, (a, f) in enumerate(zip(amp, w)))
    tau = rd.inverse_dynamics(robot, q, qd, qdd) + np.random.default_rng(1).normal(0, 0.02, q.shape)
    qm, taum = q @ tr.J_mq.T, np.linalg.solve(tr.J_mq, tau.T).T  # q_m = J_mq q, τ = J_mqᵀ τ_m
    header = ["t"] + [f"qm{k}" for k in (1, 2, 3)] + [f"taum{k}" for k in (1, 2, 3)]
    rows = np.column_stack([t, qm, taum]).tolist()
    cut = int(0.7 * len(rows))
    for name, part in (("run.csv", rows), ("fit.csv", rows[:cut]), ("val.csv", rows[cut:])):
        with open(tmp_path / name, "w", newline="") as fh:
            csv.writer(fh).writerows([header] + part)
    rd.save(robot, tmp_path / "arm.yaml")

    args = bench.parser().parse_args(["--measured", str(tmp_path / "run.csv"), "--robot", str(tmp_path / "arm.yaml"),
                                      "--transmission", str(tmp_path / "tr.yaml"), "--reference-cutoff", "0"])
    table = bench.measured_rows(args)
    assert len(table["results"]) == 7  # OLS, WLS, "physical" with and without the motors, OLS parallel=data
    scores = dict(table["rows"])
    for (method, with_tr, parallel), res in table["results"].items():
        if not with_tr:  # the CLI identifies a motor-side log with its transmission
            continue
        cli = CliRunner().invoke(app, ["identify", str(tmp_path / "arm.yaml"), str(tmp_path / "fit.csv"),
                                       "--transmission", str(tmp_path / "tr.yaml"), "--method", method,
                                       "--validate", str(tmp_path / "val.csv"), "--json"]
                                 + (["--parallel"] if parallel else []))
        assert cli.exit_code == 0, cli.output
        got = json.loads(cli.stdout)
        assert [p["name"] for p in got["parameters"]] == list(res.names)
        np.testing.assert_allclose(res.values, [p["value"] for p in got["parameters"]], rtol=1e-10,
                                   atol=1e-10 * np.abs(res.values).max())
        label = f"{method}{', parallel=data' if parallel else ''} | yes"
        np.testing.assert_allclose(scores[label], got["validation"]["relative_rms_percent"], rtol=1e-10)
