"""Finite inputs never give NaN or inf silently (issue 25 item 8): the public functions raise
NumericOverflowError or a clear InputError, models refuse subnormal values, and no generator writes an inf or
NaN literal."""

import dataclasses
import shutil
import subprocess

import numpy as np
import pytest
import symengine as se

import robodyn as rd
from robodyn.simulation.trajectories import RestToRest
from robodyn.symbolic.codegen.printer import C, PYTHON, NonFiniteExpressionError, literal, to_source


def _huge_prismatic(robot, value=1.5e308):
    return np.where(robot.sigma[robot.joint_frames] == 1, value, 0.3)


@pytest.mark.parametrize("function, args", [
    (rd.dynamics.christoffel_symbols, ()),
    (rd.identification.locked_body_inertia, (1,)),
    (rd.identification.gravity_regressor, ()),
])
def test_huge_prismatic_positions_overflow_loudly(function, args):
    robot = rd.load("stanford")  # R R P R R R
    q = _huge_prismatic(robot)
    with pytest.raises(rd.NumericOverflowError, match=rf"{function.__name__}: the result is not finite"):
        function(robot, q, *args)
    assert np.all(np.isfinite(function(robot, _huge_prismatic(robot, 0.7), *args)))


def test_time_optimal_of_a_path_that_does_not_move():
    robot = rd.load("planar2r")
    still = RestToRest(np.zeros(2), np.zeros(2), 1.0)
    with pytest.raises(rd.InputError, match="argument 'path' does not move"):
        rd.simulation.time_optimal(robot, still, 100.0)


@pytest.mark.parametrize("function", [rd.simulation.time_scale, rd.simulation.time_optimal])
def test_absurd_torque_limits_are_refused(function):
    robot = rd.load("planar2r")
    path = RestToRest(np.zeros(2), np.ones(2), 1.0)
    with pytest.raises(rd.InputError, match=r"torque_limits' has 1e\+308 .*above 1e\+100"):
        function(robot, path, 1e308)
    assert np.isfinite(function(robot, path, 1e3).duration)


@pytest.mark.parametrize("field, index", [("params", (1, 9)), ("params", (0, 5)), ("d", (1,)), ("Ia", (0,))])
def test_subnormal_model_values_are_refused_naming_the_field(field, index):
    robot = rd.load("planar2r")
    values = np.array(getattr(robot, field), dtype=float)
    values[index] = 5e-324
    with pytest.raises(rd.ModelError, match=rf"frame {index[0] + 1}: field {field}.* is subnormal"):
        dataclasses.replace(robot, **{field: values})


def test_a_subnormal_mass_in_a_model_file_is_a_model_error():
    text = """
name: tiny
joints:
  - {name: j1, sigma: 0}
  - {name: j2, sigma: 0, d: 1.0}
links:
  - {mass: 1.0, com: [0.5, 0, 0], inertia_com: [0.01, 0, 0, 0.1, 0, 0.1]}
  - {mass: 5e-324, com: [0.5, 0, 0], inertia_com: [0.01, 0, 0, 0.1, 0, 0.1]}
"""
    with pytest.raises(rd.ModelError, match="subnormal"):
        rd.loads(text)


def test_the_printer_never_writes_inf_or_nan():
    for value in (float("inf"), float("-inf"), float("nan")):
        with pytest.raises(NonFiniteExpressionError):
            literal(value)
        with pytest.raises(NonFiniteExpressionError):
            to_source(se.RealDouble(value) * se.Symbol("x"), C)
    assert literal(5e-324) == "5e-324" and literal(0.1) == "0.1"
    assert to_source(se.Integer(2**60) * se.Symbol("x"), C) == "1.152921504606847e+18*x"  # beyond exact doubles
    for lang in (C, PYTHON):  # an exact integer that overflows a double is refused, not written as inf
        with pytest.raises(NonFiniteExpressionError):
            to_source(se.Integer(10**400) * se.Symbol("x"), lang)


def test_tiny_masses_generate_code_that_compiles_and_runs(tmp_path):
    """Masses of 1e-300 kg (not subnormal): no inf literal reaches the code; the NumPy model runs."""
    robot = rd.load("planar2r")
    params = robot.params.copy()
    params[1] = [1e-300, 0, 0, 1e-300, 0, 1e-300, 1e-300, 0, 0, 1e-300]
    tiny = dataclasses.replace(robot, params=params)
    q = np.array([0.3, 0.2])
    for kind in ("idm", "inm", "ddm"):
        m = rd.customized_model(tiny, kind)
        for source in (m.c_source(), m.numpy_source(), m.matlab_source(), m.julia_source()):
            body = source.split("*/", 1)[-1]
            assert "inf" not in body.replace("info", "") and "nan" not in body
        f = rd.compile(tiny, kind, backend="numpy")
        out = f(q) if kind == "inm" else f(q, q, q)
        assert np.all(np.isfinite(out))
        if shutil.which("gcc"):
            path = tmp_path / f"{kind}.c"
            path.write_text(m.c_source(kind))
            res = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-c", str(path), "-o",
                                  str(tmp_path / "x.o")], capture_output=True, text=True, timeout=300)
            assert res.returncode == 0, res.stderr
