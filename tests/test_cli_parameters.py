"""CLI ``robodyn base-params``: Table 9.3 layout, grouping equations, JSON."""

import json

import numpy as np
import sympy
from typer.testing import CliRunner

from robodyn import dumps
from robodyn.cli import app
from tests.test_base_parameters_rx90 import TABLE_9_3, rx90

runner = CliRunner()


def rx90_file(tmp_path):
    path = tmp_path / "rx90.yaml"
    path.write_text(dumps(rx90()))
    return str(path)


def test_table_and_equations(tmp_path):
    res = runner.invoke(app, ["base-params", rx90_file(tmp_path), "--symbolic-geometry"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    row2 = next(line for line in lines if line.startswith("│ 2 "))
    assert [c.strip() for c in row2.strip("│").split("│")] == ["2"] + TABLE_9_3[1]
    assert "ZZR1 = D3**2*(M3 + M4 + M5 + M6) + Ia1 + YY2 + YY3 + ZZ1" in res.output
    assert "MYR5 = MY5 + MZ6" in res.output
    assert "40 base parameters (36 of the links; [9.61] gives b_m <= 36)" in res.output
    assert "Without effect: XX1, XY1, XZ1, YY1, YZ1, MX1, MY1, MZ1, M1, MZ2, M2" in res.output


def test_json_numeric(tmp_path):
    res = runner.invoke(app, ["base-params", rx90_file(tmp_path), "--method", "numeric", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["count"] == 40 and out["count_formula"] == 36 and out["minimal"] is True
    assert out["table"] == TABLE_9_3
    xz = sympy.sympify(out["expressions"][out["names"].index("XZR2")])
    assert sympy.expand(xz - (sympy.Symbol("XZ2") - sympy.Rational(9, 20) * sympy.Symbol("MZ3"))) == 0
    assert len(out["values"]) == 40 and np.all(np.isfinite(out["values"]))


def test_drop_zero_and_friction(tmp_path):
    res = runner.invoke(app, ["base-params", rx90_file(tmp_path), "--friction", "--drop-zero", "--json"])
    out = json.loads(res.output)
    assert out["count"] == 40  # friction coefficients of this robot are zero, dropped as known zeros
    assert "Fc1" in out["zero"]


def test_errors(tmp_path):
    res = runner.invoke(app, ["base-params", rx90_file(tmp_path), "--method", "qr"])
    assert res.exit_code == 2 and "method" in res.output
    res = runner.invoke(app, ["base-params", "no-such-robot"])
    assert res.exit_code == 2
    res = runner.invoke(app, ["base-params", rx90_file(tmp_path), "--method", "numeric", "--symbolic-geometry"])
    assert res.exit_code == 2 and "symbolic_geometry" in res.output
