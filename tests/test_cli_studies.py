"""The study commands: robodyn accuracy, robodyn demo puma-line, robodyn opcount."""

import json
import re

import pytest
from typer.testing import CliRunner

from robodyn.cli import app

runner = CliRunner()


pytestmark = pytest.mark.usefixtures("wide_console")


def test_accuracy_prints_table_and_writes_plot(tmp_path):
    out = tmp_path / "acc.png"
    res = runner.invoke(app, ["accuracy", "ascher2", "--steps", "12", "--plot", str(out)])
    assert res.exit_code == 0, res.output
    methods = res.output.split("\nmethods")[1]  # the last table: a row per method, its single-precision dtype
    rows = {line.split("│")[1].strip(): line for line in methods.splitlines() if line.startswith("│")}
    assert {"recursive", "cholesky"} <= set(rows)
    assert all("float32" in rows[m] for m in rows)
    head = res.output.split("mean |Δq̈|")[0]
    joints = [line.split("│")[1].strip() for line in head.splitlines() if line.startswith("│")]
    assert joints == ["1", "2"]  # a row per joint of ascher2
    m = re.search(r"cond\(A\): min ([0-9.e+]+), max ([0-9.e+]+)", res.output)
    assert m and 1e4 < float(m.group(1)) < float(m.group(2)) < 1e5
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_accuracy_bad_input_exits_2():
    res = runner.invoke(app, ["accuracy", "ascher2", "--steps", "1"])
    assert res.exit_code == 2 and "steps = 1" in res.output
    res = runner.invoke(app, ["accuracy", "nosuchrobot"])
    assert res.exit_code == 2 and "unknown robot 'nosuchrobot'" in res.output
    res = runner.invoke(app, ["accuracy", "ascher2", "--methods", "magic"])
    assert res.exit_code == 2 and "unknown method 'magic'" in res.output


def test_accuracy_plot_into_missing_folder_writes_nothing(tmp_path):
    target = tmp_path / "missing" / "acc.png"
    res = runner.invoke(app, ["accuracy", "ascher2", "--steps", "4", "--plot", str(target)])
    assert res.exit_code == 2 and "does not exist" in res.output
    assert not target.parent.exists()


def test_demo_puma_line_tables_and_plot(tmp_path):
    out = tmp_path / "puma.png"
    res = runner.invoke(app, ["demo", "puma-line", "--methods", "recursive,cholesky", "--samples", "101",
                              "--plot", str(out)])
    assert res.exit_code == 0, res.output
    assert "Table 6 — recursive" in res.output
    m = re.search(r"Table 6 — cholesky: every entry within ([0-9.e+-]+) \(relative\) of recursive's", res.output)
    assert m and float(m.group(1)) < 1e-3
    table7 = [line for line in res.output.splitlines() if line.startswith(("│ recursive", "│ cholesky"))]
    assert len(table7) == 2 and all(int(line.split("│")[3]) > 0 for line in table7)
    joints = [line for line in res.output.splitlines() if re.match(r"│ [1-6] ", line)]
    assert len(joints) == 6
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_demo_puma_line_rejects_non_6_joint_robot():
    res = runner.invoke(app, ["demo", "puma-line", "--robot", "ascher2"])
    assert res.exit_code == 2 and "needs a 6-joint arm" in res.output
    res = runner.invoke(app, ["demo", "puma-line", "--methods", "recursive,euler"])
    assert res.exit_code == 2 and "methods = ['recursive', 'euler']: unknown or none; choose from recursive" in res.output


def test_opcount_report():
    res = runner.invoke(app, ["opcount", "--n-max", "5", "--methods", "newton_euler,gibbs_appell"])
    assert res.exit_code == 0, res.output
    assert "inverse newton_euler" in res.output and "inertia gibbs_appell" in res.output
    for formula in ("137n − 22", "96n − 101", "(23/2)n² + (39/2)n − 49"):
        assert formula in res.output
    res = runner.invoke(app, ["opcount", "--n-max", "0"])
    assert res.exit_code == 2 and "option --n-max = 0: give an integer >= 1" in res.output
    res = runner.invoke(app, ["opcount", "--n-max", "2", "--methods", "newton_euler,magic"])
    assert res.exit_code == 2 and "unknown method(s) 'magic'; choose from newton_euler, gibbs_appell" in res.output


def test_study_commands_json(tmp_path):
    from robodyn.analysis.accuracy import accuracy_study
    from robodyn.model.io import load

    res = runner.invoke(app, ["accuracy", "ascher2", "--steps", "6", "--methods", "recursive,spatial_operator", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    ref = accuracy_study(load("ascher2"), methods=("recursive", "spatial_operator"), steps=6)
    assert out["methods"] == ["recursive", "spatial_operator"] and out["single_dtypes"] == ["float32", "float32"]
    assert out["max_error"] == ref.max_error.tolist() and out["cond"]["max"] == ref.cond.max()
    res = runner.invoke(app, ["opcount", "--n-max", "3", "--methods", "newton_euler", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    ne = next(c for c in out["counts"] if (c["kind"], c["method"]) == ("inverse", "newton_euler"))
    assert out["n"] == [1, 2, 3] and ne["sin"] == [1, 2, 3] and ne["mul"][1] > 0
    assert any(row["published formula"] == "137n − 22" for row in out["comparison"])
    plot = tmp_path / "puma.png"
    res = runner.invoke(app, ["demo", "puma-line", "--methods", "recursive", "--samples", "101", "--json",
                              "--plot", str(plot)])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert len(out["table6"]["recursive"]["q"]) == 6 and out["table7"]["recursive"]["rhs_evaluations"] > 0
    assert out["plot"] == str(plot) and plot.read_bytes()[:4] == b"\x89PNG"
