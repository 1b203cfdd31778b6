"""The compile cache is keyed by the robot's content, not its name, and is safe across processes."""

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn.symbolic.codegen import c_code
from robodyn.symbolic.models import customized_model
from tests.support.kernels import needs_compiler

SRC = str(Path(rd.__file__).parents[1])
pytestmark = pytest.mark.usefixtures("numpy_references")  # the models alone are compiled, not the generic kernels


def test_compiled_source_has_no_robot_name_but_generated_files_do():
    robot = rd.load("planar2r")
    renamed = dataclasses.replace(robot, name="my_other_arm")
    a, b = (customized_model(r, "inverse_dynamics", gravity="input") for r in (robot, renamed))
    assert c_code.source(a, "rd_model", robot_name=False) == c_code.source(b, "rd_model", robot_name=False)
    assert "my_other_arm" not in c_code.source(b, "rd_model", python_entry=True, robot_name=False)
    assert "of robot my_other_arm" in b.c_source()  # what robodyn generate writes still names the robot


@needs_compiler
def test_renamed_robot_reuses_the_library_changed_parameter_does_not(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    robot = rd.load("planar2r")
    q = np.array([[0.3, -0.8], [1.1, 0.2]])
    rd.compile(robot, "gravity")
    (lib,) = tmp_path.glob("rd_*.so")
    inode, sidecar = lib.stat().st_ino, lib.with_suffix(".sha256").read_text()
    renamed = dataclasses.replace(robot, name="twin")
    g = rd.compile(renamed, "gravity")
    assert list(tmp_path.glob("rd_*.so")) == [lib]
    assert lib.stat().st_ino == inode and lib.with_suffix(".sha256").read_text() == sidecar  # not rebuilt
    np.testing.assert_allclose(g(q), rd.gravity_torques(robot, q), rtol=1e-12, atol=1e-12)
    params = robot.params.copy()
    params[1, 9] *= 1.5  # M2
    heavier = dataclasses.replace(robot, params=params)
    h = rd.compile(heavier, "gravity")
    (other,) = set(tmp_path.glob("rd_*.so")) - {lib}
    assert other.with_suffix(".sha256").read_text().split()[0] != sidecar.split()[0]
    np.testing.assert_allclose(h(q), rd.gravity_torques(heavier, q), rtol=1e-12, atol=1e-12)
    assert not np.allclose(h(q), g(q))


@needs_compiler
def test_two_processes_compile_one_model_once(tmp_path):
    """Two processes start compiling the same model at once: the per-model lock lets one build it, the other
    loads that library (same file, same inode), and both compute the robot's gravity torques.

    The processes compile that model and nothing else (ROBODYN_NATIVE=0 in their environment, numpy_references:
    robodyn's generic kernels took most of this test's time); the reference torques are this process's."""
    cache = tmp_path / "cache"
    robot = rd.load("planar3r")
    q = np.array([0.2, -0.4, 0.9])
    expected = rd.gravity_torques(robot, q)
    script = f"""
import sys, os, numpy as np
sys.path.insert(0, {SRC!r})
import robodyn as rd
robot = rd.load("planar3r")
q = np.array({q.tolist()!r})
np.testing.assert_allclose(rd.compile(robot, "gravity")(q), {expected.tolist()!r}, rtol=1e-12, atol=1e-12)
(lib,) = [p for p in os.listdir(sys.argv[1]) if p.startswith("rd_") and p.endswith(".so")]
print(os.stat(os.path.join(sys.argv[1], lib)).st_ino)
"""
    env = dict(os.environ, ROBODYN_CACHE=str(cache), ROBODYN_PROGRESS="0")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(cache)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
    for out, err, code in results:
        assert code == 0, err
    inodes = {out.split()[-1] for out, _, _ in results}
    assert len(inodes) == 1 and len(list(cache.glob("rd_*.so"))) == 1
    assert not list(cache.glob("rdgeneric_*"))  # the model alone was compiled
    assert not list(cache.glob(".build-*"))  # no half-built folder left behind


@needs_compiler
def test_large_model_path_equals_the_lane_path(tmp_path, monkeypatch):
    """Models above c_code.LANES_LIMIT assignments get no lane version, a non-inlined body and -O1 (fast to
    compile); forced here on a small robot, the result equals the lane version bit for bit and rd's."""
    from robodyn.native import build

    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    robot = rd.load("puma560")
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.uniform(-2, 2, (3, 9, robot.n))  # 9 states: two lane blocks and a remainder
    fast = rd.compile(robot, "inverse_dynamics")(q, qd, qdd)
    monkeypatch.setattr(c_code, "LANES_LIMIT", 0)
    monkeypatch.setattr(build, "LARGE_SOURCE", 0)
    monkeypatch.setattr(c_code, "CHUNK", 40)  # 183 assignments and 6 outputs: 5 functions
    m = customized_model(robot, "inverse_dynamics", gravity="input")
    src = c_code.source(m, "rd_model", python_entry=True, robot_name=False)
    assert "rd_model_lanes" not in src and "RD_NOINLINE int rd_model_body" in src and "rd_model_part4(" in src
    assert build.flags_for(src)[0] == "-O1"
    big = rd.compile(robot, "inverse_dynamics")
    np.testing.assert_array_equal(big(q, qd, qdd), fast)
    np.testing.assert_allclose(fast, rd.inverse_dynamics(robot, q, qd, qdd), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(big(q[0], qd[0], qdd[0]), fast[0])  # the single-state entry
    assert len(list(tmp_path.glob("rd_*.so"))) == 2
