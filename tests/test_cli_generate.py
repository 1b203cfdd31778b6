"""``robodyn generate``: files written, generated code correct, atomic output, option errors."""

import importlib.util
import json

import numpy as np
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app
from tests.support.random_robots import random_state

runner = CliRunner()


def test_generate_writes_models(tmp_path):
    out = tmp_path / "rx"
    res = runner.invoke(app, ["generate", "rx90", "--models", "idm,inm", "--lang", "python,c,matlab,julia",
                              "--out", str(out)])
    assert res.exit_code == 0, res.output
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(["README.md", "operations.json", "base_parameters.txt", "MANIFEST.sha256"] + [f"rx90_{m}.{e}" for m in ("idm", "inm")
                                                                for e in ("txt", "py", "c", "h", "m", "jl")])
    counts = json.loads((out / "operations.json").read_text())
    robot = rd.load("rx90")
    assert counts["idm"]["mul"] == rd.customized_model(robot, "idm").operation_count()["mul"]
    assert "| idm | inverse_dynamics |" in (out / "README.md").read_text()
    base = (out / "base_parameters.txt").read_text()
    assert base.startswith("Base inertial parameters of rx90") and "ZZR1 = " in base
    assert f": {rd.base_parameters(robot, friction=False).count}" in base.splitlines()[0]
    spec = importlib.util.spec_from_file_location("rx90_idm", out / "rx90_idm.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    q, qd, qdd = random_state(robot, 0, (3,))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    np.testing.assert_allclose(mod.rx90_idm(q, qd, qdd), tau, rtol=0, atol=1e-12 * np.abs(tau).max())
    assert [p.name for p in tmp_path.iterdir()] == ["rx"]


def test_existing_folder_needs_force(tmp_path):
    out = tmp_path / "m"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    res = runner.invoke(app, ["generate", "planar2r", "--out", str(out)])
    assert res.exit_code == 2 and "--force" in res.output
    assert (out / "keep.txt").exists()
    # --force replaces only a folder robodyn generate wrote: the user's file is never lost
    res = runner.invoke(app, ["generate", "planar2r", "--out", str(out), "--force", "--models", "idm"])
    assert res.exit_code == 2 and "has no robodyn manifest" in res.output and (out / "keep.txt").read_text() == "x"
    (out / "keep.txt").unlink()
    res = runner.invoke(app, ["generate", "planar2r", "--out", str(out), "--force", "--models", "idm"])
    assert res.exit_code == 0 and (out / "planar2r_idm.py").exists()
    res = runner.invoke(app, ["generate", "planar2r", "--out", str(out), "--force", "--models", "inm"])
    assert res.exit_code == 0 and (out / "planar2r_inm.py").exists() and not (out / "planar2r_idm.py").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]  # no .m.old or temporary folders left


def test_no_partial_output_on_error(tmp_path, monkeypatch):
    import robodyn.symbolic as sym

    calls = []

    def failing(robot, kind, **kw):
        calls.append(kind)
        if len(calls) == 2:
            raise rd.ModelError("boom in the second model")
        return sym.models.customized_model(robot, kind, **kw)

    monkeypatch.setattr(sym, "customized_model", failing)
    out = tmp_path / "out"
    res = runner.invoke(app, ["generate", "planar2r", "--models", "idm,inm", "--out", str(out)])
    assert res.exit_code == 2 and "boom" in res.output
    assert list(tmp_path.iterdir()) == []


def test_option_errors(tmp_path):
    res = runner.invoke(app, ["generate", "planar2r", "--models", "idm,xyz", "--out", str(tmp_path / "a")])
    assert res.exit_code == 2 and "--models" in res.output and "xyz" in res.output
    res = runner.invoke(app, ["generate", "planar2r", "--lang", "fortran", "--out", str(tmp_path / "a")])
    assert res.exit_code == 2 and "--lang" in res.output and "python, c, matlab, julia" in res.output
    res = runner.invoke(app, ["generate", "planar2r", "--params", "minimal", "--out", str(tmp_path / "a")])
    assert res.exit_code == 2 and "--params = 'minimal': choose standard or base" in res.output
    res = runner.invoke(app, ["generate", "nosuchrobot", "--out", str(tmp_path / "a")])
    assert res.exit_code == 2 and "unknown robot" in res.output
    assert list(tmp_path.iterdir()) == []


def test_main_job_without_compiler_and_fresh_cache(tmp_path, monkeypatch):
    """The README's main job, ``robodyn generate rx90 --out rx90_models``, from a fresh cache folder and on
    a machine without a C compiler: the sources are written (generate never compiles) and the cache is
    not touched."""
    from robodyn.native import build

    cache = tmp_path / "fresh-cache"
    monkeypatch.setenv("ROBODYN_CACHE", str(cache))
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setattr(build.shutil, "which", lambda name: None)
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["generate", "rx90", "--out", "rx90_models"])
    assert res.exit_code == 0, res.output
    out = tmp_path / "rx90_models"
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["README.md", "operations.json", "base_parameters.txt", "MANIFEST.sha256"]
        + [f"rx90_{m}.{e}" for m in ("idm", "inm", "ddm") for e in ("txt", "py", "c", "h")])
    assert "int rx90_idm(const double *q, const double *qd, const double *qdd, double *out)" in (
        out / "rx90_idm.c").read_text()
    assert not cache.exists()


def test_one_operation_count_everywhere(tmp_path):
    """robodyn generate (operations.json), rd.compile(...).operation_count() and benchmarks/README.md's table agree."""
    import re
    from pathlib import Path

    res = runner.invoke(app, ["generate", "rx90", "--models", "idm", "--lang", "python", "--out", str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    counts = json.loads((tmp_path / "m" / "operations.json").read_text())["idm"]
    robot = rd.load("rx90")
    assert rd.compile(robot, "idm", backend="numpy").operation_count() == counts
    assert f"| idm | inverse_dynamics | {counts['mul']} | {counts['add']} |" in (tmp_path / "m" / "README.md").read_text()
    readme = (Path(__file__).parents[1] / "benchmarks" / "README.md").read_text()
    row = re.search(r"^\| rx90 \| 6 \| (\d+) / (\d+) \|", readme, re.M)
    assert row and (int(row.group(1)), int(row.group(2))) == (counts["mul"], counts["add"])


def test_base_parameters_text_is_clean(tmp_path):
    import re

    res = runner.invoke(app, ["generate", "rx90", "--models", "gra", "--lang", "python", "--out", str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    lines = (tmp_path / "m" / "base_parameters.txt").read_text().splitlines()[2:]
    bp = rd.base_parameters(rd.load("rx90"), method="symbolic", friction=False)
    assert len(lines) == len(bp.names)
    for line, name, value in zip(lines, bp.names, bp.values):
        parts = line.split(" = ")
        assert parts[0] == name and len(set(parts)) == len(parts)  # no "XY2 = XY2 = 0.004"
        number = parts[-1]
        assert abs(float(number) - value) <= 1e-14 * abs(value) and number == repr(float(number))
        assert len(re.sub(r"[-.]|e.*", "", number).strip("0")) <= 12  # no 0.37379999999999997 noise


def test_parameters_input_flag(tmp_path):
    res = runner.invoke(app, ["generate", "planar2r", "--models", "gra", "--lang", "c,python", "--parameters-input",
                              "--out", str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    header = (tmp_path / "m" / "planar2r_gra.h").read_text()
    assert "int planar2r_gra(const double *q, const double *params, double *out);" in header
    assert "/* params: 0 M2, 1 MX1, 2 MX2 */" in header
    assert "const double *params, long params_stride" in (tmp_path / "m" / "planar2r_gra.c").read_text()


def _module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def test_derivatives_and_kinematics(tmp_path):
    """didm, dddm, jac and jdq (the long names too): their NumPy code equals rd.inverse_dynamics_derivatives,
    rd.forward_dynamics_derivatives, rd.jacobian and rd.jacobian_dot_qd of the frame --frame."""
    out = tmp_path / "m"
    res = runner.invoke(app, ["generate", "stanford", "--models", "inverse_dynamics_derivatives,dddm,jac,jacobian_dot_qd",
                              "--lang", "python,c", "--frame", "5", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.glob("stanford_*.py")) == [f"stanford_{s}.py" for s in ("dddm", "didm", "jac", "jdq")]
    robot = rd.load("stanford")
    n = robot.n
    q, qd, qdd = random_state(robot, 1, (4,))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    for short, expected in (("didm", rd.inverse_dynamics_derivatives(robot, q, qd, qdd)),
                            ("dddm", rd.forward_dynamics_derivatives(robot, q, qd, tau))):
        got = _module(out / f"stanford_{short}.py", f"stanford_{short}")(q, qd, qdd if short == "didm" else tau)
        assert got.shape == (4, len(expected) * n, n)
        for k, part in enumerate(expected):
            np.testing.assert_allclose(got[:, k * n:(k + 1) * n], part, rtol=0, atol=1e-11 * np.abs(part).max())
    J = _module(out / "stanford_jac.py", "stanford_jac")(q)
    np.testing.assert_allclose(J, rd.jacobian(robot, q, frame=5), rtol=0, atol=1e-13)
    Jd = _module(out / "stanford_jdq.py", "stanford_jdq")(q, qd)
    np.testing.assert_allclose(Jd, rd.jacobian_dot_qd(robot, q, qd, frame=5), rtol=0, atol=1e-13)
    assert "of frame 5" in (out / "stanford_jac.txt").read_text().splitlines()[0]
    assert "| jdq | jacobian_dot_qd |" in (out / "README.md").read_text()
    assert "int stanford_jac(const double *q, double *out);" in (out / "stanford_jac.h").read_text()


def test_derivative_and_kinematics_option_errors(tmp_path):
    """Refused before anything is written: one line on stderr, exit 2, no folder."""
    for args, words in ((["--models", "didm,jac", "--parameters-input"], "--parameters-input is not available for jacobian"),
                        (["--models", "jdq", "--parameters-input"], "--parameters-input is not available for jacobian_dot_qd"),
                        (["--models", "dim", "--parameters-input"], "--parameters-input is not available for regressor"),
                        (["--models", "idm", "--frame", "2"], "--frame"),
                        (["--models", "jac", "--frame", "9"], "frame"),
                        (["--models", "jac", "--frame", "no_such_frame"], "frame")):
        out = tmp_path / "m"
        res = runner.invoke(app, ["generate", "planar2r", *args, "--out", str(out)])
        assert res.exit_code == 2 and words in res.output and len(res.output.strip().splitlines()) == 1, res.output
        assert not out.exists()
