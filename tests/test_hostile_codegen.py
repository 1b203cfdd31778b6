"""Hostile model files: no string of a model file can run code, escape --out or break the generated code.

Reproducers of issue 13 (a robot name that closes the C comment, the Python docstring, starts a new MATLAB/Julia
line, climbs out of --out, is not an identifier), then hypothesis over arbitrary unicode names.
"""

import dataclasses
import importlib.util
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app
from robodyn.robots import __file__ as _robots_init

runner = CliRunner()
PLANAR2R = (Path(_robots_init).parent / "planar2r.yaml").read_text()
CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler")

PWN_C = 'arm */\n#include <stdlib.h>\n__attribute__((constructor)) static void pwn(void) { system("id > PWNED"); }\n/*'
PWN_PY = 'arm"""\nimport os\nos.system("id > PWNED")\n"""'
PWN_LINE = "arm\nsystem('id > PWNED')\nx = 1"
PWN_BLOCK = "arm %{\nsystem('id > PWNED')\n%} #=\nrun(`id`)\n=#"
HOSTILE = [PWN_C, PWN_PY, PWN_LINE, PWN_BLOCK, "my-robot 2", "6dof", "../../escaped", "/tmp/abs/evil", "int", "end"]
#: a line of generated MATLAB/Julia: a comment, the function line, end/return, or an assignment
CODE_LINE = re.compile(r"\s*(%.*|#.*|function .*|end|return out|[A-Za-z_][A-Za-z0-9_]*(\[[0-9, ]+\]|\([0-9, ]+\))?"
                       r" = [A-Za-z0-9_.+\-*/^() ,\[\]]+;?)\Z")


def model_file(folder: Path, name, filename="robot.yaml", joint="j1", source=None) -> Path:
    text = PLANAR2R.replace("name: planar2r", "" if name is None else f"name: {json.dumps(name)}", 1)
    text = text.replace("{name: j1,", f"{{name: {json.dumps(joint)},", 1)
    if source is not None:
        text = re.sub(r"^source: .*$", f"source: {json.dumps(source)}", text, count=1, flags=re.M)
    path = folder / filename
    path.write_text(text)
    return path


def check_c(path: Path, tmp: Path) -> None:
    """The C file compiles without a warning under -Wall -Wextra -Werror and holds none of the payload."""
    proc = subprocess.run([CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", str(path)],
                          capture_output=True, text=True, cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    text = path.read_text()
    code = text.split("*/", 1)[1]  # after the header comment, which the payload could not close
    assert "system(" not in code and "((constructor))" not in code and "<stdlib.h>" not in code


def check_text(path: Path) -> None:
    for line in path.read_text().splitlines():
        assert CODE_LINE.match(line), line


@needs_cc
def test_c_comment_breakout_runs_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    robot = rd.load(model_file(tmp_path, PWN_C))
    g = rd.compile(robot, "gravity")
    q = np.array([0.3, -0.2])
    np.testing.assert_allclose(g(q), rd.gravity_torques(robot, q), rtol=1e-12, atol=1e-12)
    assert not (tmp_path / "PWNED").exists()


def test_docstring_breakout_runs_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    robot = rd.load(model_file(tmp_path, PWN_PY, source=PWN_PY))
    g = rd.compile(robot, "gravity", backend="numpy")
    q = np.array([0.3, -0.2])
    np.testing.assert_allclose(g(q), rd.gravity_torques(robot, q), rtol=1e-12, atol=1e-12)
    assert not (tmp_path / "PWNED").exists()


@needs_cc
@pytest.mark.parametrize("name", HOSTILE)
def test_generate_hostile_name_in_every_language(tmp_path, monkeypatch, name):
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    path = model_file(work, name, joint="[/] */ j1", source=name)
    res = runner.invoke(app, ["generate", str(path), "--models", "gra", "--lang", "python,c,matlab,julia"])
    assert res.exit_code == 0, res.output
    ident = rd.sanitize.identifier(name)
    out = work / f"{ident}_models"
    assert sorted(p.name for p in work.iterdir()) == sorted([out.name, "robot.yaml"])  # nothing outside --out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]
    stem = rd.sanitize.identifier(f"{ident}_gra")
    check_c(out / f"{stem}.c", tmp_path)
    check_text(out / f"{stem}.m")
    check_text(out / f"{stem}.jl")
    spec = importlib.util.spec_from_file_location("generated_hostile", out / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    robot = rd.load(path)
    q = np.array([[0.3, -0.2], [1.0, 2.0]])
    np.testing.assert_allclose(getattr(module, stem)(q), rd.gravity_torques(robot, q), rtol=1e-12, atol=1e-12)
    assert not list(tmp_path.rglob("PWNED"))


def test_file_without_a_name_gets_its_stem_as_identifier(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = model_file(tmp_path, None, filename="my-robot.yaml")
    res = runner.invoke(app, ["generate", str(path), "--models", "gra", "--lang", "python"])
    assert res.exit_code == 0, res.output
    text = (tmp_path / "my_robot_models" / "my_robot_gra.py").read_text()
    assert "def my_robot_gra(q, gravity):" in text or "def my_robot_gra(q):" in text
    compile(text, "my_robot_gra.py", "exec")


_GRA = None


def _gravity_model():
    global _GRA
    if _GRA is None:
        _GRA = rd.customized_model(rd.load("planar2r"), "gravity")
    return _GRA


FRAGMENTS = st.sampled_from(['*/', '/*', '"""', "'''", "\n", "\r", "%{", "#=", "\\", "??/", "`id`", "$(id)", "\0",
                             "..", "/", " ", "é", "\u202e", "0"])
NAMES = st.lists(st.one_of(st.text(max_size=8), FRAGMENTS), max_size=8).map("".join)


@needs_cc
@settings(max_examples=15, deadline=None)
@given(NAMES)
def test_any_name_gives_code_that_compiles(tmp_path_factory, name):
    """NumPy source compile()s and C compiles with -Wall -Wextra -Werror for every unicode name; only the
    robot's name changes between examples (it is the only model text in the code)."""
    base = _gravity_model()
    m = dataclasses.replace(base, robot=dataclasses.replace(base.robot, name=name))
    stem = rd.sanitize.identifier(rd.sanitize.identifier(name) + "_gra")
    src = m.numpy_source(stem)
    namespace = {}
    exec(compile(src, "<hypothesis>", "exec"), namespace)  # noqa: S102 (checking that it only defines stem)
    assert sorted(k for k in namespace if not k.startswith("__")) == sorted(["np", stem])
    tmp = tmp_path_factory.mktemp("c")
    (tmp / "m.c").write_text(m.c_source(stem))
    check_c(tmp / "m.c", tmp)
    for text in (m.matlab_source(stem), m.julia_source(stem), str(m)):
        assert "\0" not in text and "*/" not in text.split("\n", 3)[-1]
    for line in m.matlab_source(stem).splitlines() + m.julia_source(stem).splitlines():
        assert CODE_LINE.match(line), line


@settings(max_examples=6, deadline=None)
@given(NAMES)
def test_generate_any_name_exits_0_or_2_and_runs_nothing(tmp_path_factory, name):
    """The command line on arbitrary names: exit 0 with code that compiles (Python) inside --out, or one
    error line and exit 2; never a traceback, never a file outside the working folder."""
    work = tmp_path_factory.mktemp("gen")
    path = model_file(work, name, joint=name)
    out = work / "out"
    res = runner.invoke(app, ["generate", str(path), "--models", "gra", "--lang", "python", "--out", str(out)])
    assert res.exit_code in (0, 2) and "Traceback" not in res.output, res.output
    if res.exit_code == 2:
        assert len(res.output.strip().splitlines()) == 1 and not out.exists()
        return
    for py in out.glob("*.py"):
        compile(py.read_text(), str(py), "exec")
    assert sorted(p.name for p in work.iterdir()) == ["out", "robot.yaml"] and not list(work.rglob("PWNED"))


@needs_cc
@pytest.mark.parametrize("name", HOSTILE)
def test_generate_hostile_name_derivatives_and_kinematics(tmp_path, monkeypatch, name):
    """The derivative and kinematics models (didm, dddm, jac, jdq) of a hostile name: files inside --out, C without
    a warning, MATLAB/Julia lines that are code, NumPy code that computes the model."""
    monkeypatch.chdir(tmp_path)
    path = model_file(tmp_path, name, joint="[/] */ j1", source=name)
    res = runner.invoke(app, ["generate", str(path), "--models", "didm,dddm,jac,jdq",
                              "--lang", "python,c,matlab,julia", "--out", "out"])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "robot.yaml"]
    ident = rd.sanitize.identifier(name)
    robot = rd.load(path)
    q = np.array([[0.3, -0.2], [1.0, 2.0]])
    for short in ("didm", "dddm", "jac", "jdq"):
        stem = rd.sanitize.identifier(f"{ident}_{short}")
        check_c(tmp_path / "out" / f"{stem}.c", tmp_path)
        check_text(tmp_path / "out" / f"{stem}.m")
        check_text(tmp_path / "out" / f"{stem}.jl")
    spec = importlib.util.spec_from_file_location("generated_jac", tmp_path / "out" / f"{rd.sanitize.identifier(f'{ident}_jac')}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    np.testing.assert_allclose(getattr(module, rd.sanitize.identifier(f"{ident}_jac"))(q), rd.jacobian(robot, q),
                               rtol=0, atol=1e-14)
    assert not list(tmp_path.rglob("PWNED"))
