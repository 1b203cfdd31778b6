"""The compile cache verifies what it loads; compiles can be bounded and die with their parent."""

import dataclasses
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn.symbolic import CompileError, CompileTimeoutError
from robodyn.native import build
from tests.support.kernels import needs_compiler

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
SRC = str(Path(rd.__file__).parents[1])
pytestmark = pytest.mark.usefixtures("numpy_references")  # the models alone are compiled, not the generic kernels


def _library(cache: Path) -> Path:
    (lib,) = cache.glob("rd_*.so")
    return lib


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@needs_compiler
def test_corrupt_library_is_rebuilt_not_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    robot = rd.load("planar2r")
    rd.compile(robot, "gravity")
    lib = _library(tmp_path)
    good = _sha(lib)
    key, recorded = lib.with_suffix(".sha256").read_text().split()
    assert recorded == good and len(key) == 64
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\x7fELF garbage")
    os.replace(garbage, lib)  # (a new file: this process still maps the old one, which must stay intact)
    g = rd.compile(robot, "gravity")
    q = np.array([0.1, 0.7])
    np.testing.assert_allclose(g(q), rd.gravity_torques(robot, q), rtol=1e-12, atol=1e-12)
    assert lib.with_suffix(".sha256").read_text().split() == [key, _sha(lib)]
    lib.with_suffix(".sha256").unlink()  # a library without its sidecar (older robodyn): rebuilt too
    rd.compile(robot, "gravity")
    assert lib.with_suffix(".sha256").read_text().split() == [key, _sha(lib)]


@needs_compiler
def test_foreign_library_is_rebuilt_not_loaded(tmp_path):
    """Another robot's library copied over this one's: a fresh process rebuilds it and computes this robot."""
    cache = tmp_path / "cache"
    script = f"""
import sys, numpy as np
sys.path.insert(0, {SRC!r})
import robodyn as rd
name = sys.argv[1]
robot = rd.load(name)
q = np.full(robot.n, 0.4)
np.testing.assert_allclose(rd.compile(robot, "gravity")(q), rd.gravity_torques(robot, q), rtol=1e-12, atol=1e-12)
"""
    env = dict(os.environ, ROBODYN_CACHE=str(cache), ROBODYN_PROGRESS="0")
    run = lambda name: subprocess.run([sys.executable, "-c", script, name], env=env, capture_output=True, text=True)  # noqa: E731
    assert run("planar2r").returncode == 0
    (mine,) = cache.glob("rd_*.so")
    assert run("planar3r").returncode == 0
    (other,) = set(cache.glob("rd_*.so")) - {mine}
    shutil.copyfile(other, mine)
    res = run("planar2r")
    assert res.returncode == 0, res.stderr
    assert _sha(mine) != _sha(other) and mine.with_suffix(".sha256").read_text().split()[1] == _sha(mine)
    assert not list(cache.glob("rdgeneric_*"))


def test_unusable_cache_folder_is_a_clear_error(tmp_path, monkeypatch):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for value in (str(afile), str(afile / "sub"), ""):
        monkeypatch.setenv("ROBODYN_CACHE", value)
        with pytest.raises(CompileError, match="ROBODYN_CACHE=.*writable folder"):
            build.cache_dir()
    assert afile.read_text() == "x"


def test_timeout_kills_the_compiler_group(tmp_path):
    start = time.monotonic()
    with pytest.raises(CompileTimeoutError, match=r"timeout = 0.5 s"):
        build.run_compiler(["sh", "-c", "sleep 47.25 & sleep 47.5; wait"], tmp_path, timeout=0.5)
    assert time.monotonic() - start < 10
    assert _waits_until_gone("sleep 47.25") and _waits_until_gone("sleep 47.5")


def test_compile_checks_timeout_and_reports_it(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    with pytest.raises(rd.InputError, match="timeout = -1"):
        rd.compile(rd.load("planar2r"), "gravity", timeout=-1)
    with pytest.raises(CompileTimeoutError, match="timeout"):
        rd.compile(rd.load("planar2r"), "gravity", timeout=1e-9)
    assert not list(tmp_path.glob("rd_*.so"))


def test_failing_compiler_is_one_clear_error(tmp_path):
    with pytest.raises(CompileError, match=r"failed on the generated model \(exit 3\): boom"):
        build.run_compiler(["sh", "-c", "echo boom >&2; exit 3"], tmp_path)


def _pids_running(pattern: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                state = (entry / "stat").read_text().split()[2]
            except OSError:
                continue
            if pattern in cmd and state != "Z" and "sh -c" not in cmd.replace("sh -c trap", ""):
                pids.append(int(entry.name))
    return pids


def _waits_until_gone(pattern: str, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not [p for p in _pids_running(pattern) if Path(f"/proc/{p}/cmdline").read_bytes().startswith(b"sleep")]:
            return True
        time.sleep(0.05)
    return False


@linux
def test_compiler_dies_with_its_parent(tmp_path):
    """SIGKILL of the Python process that runs the compiler: the compiler and its children die too."""
    script = f"""
import sys
sys.path.insert(0, {SRC!r})
from pathlib import Path
from robodyn.native import build
build.run_compiler(["sh", "-c", "sleep 53.25 & sleep 53.5; wait"], Path({str(tmp_path)!r}))
"""
    parent = subprocess.Popen([sys.executable, "-c", script])
    try:
        end = time.monotonic() + 30
        while time.monotonic() < end and not (_pids_running("sleep 53.25") and _pids_running("sleep 53.5")):
            time.sleep(0.05)
        assert _pids_running("sleep 53.25"), "the compiler did not start"
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    assert _waits_until_gone("sleep 53.25") and _waits_until_gone("sleep 53.5")


def test_singular_model_is_a_model_error_on_both_backends(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    robot = rd.load("planar2r")
    params = robot.params.copy()
    params[1] = 0.0  # link 2 massless: joint 2 moves nothing, A(q) singular for every q
    singular = dataclasses.replace(robot, params=params)
    for backend in ("numpy",) + (("c",) if shutil.which("cc") else ()):
        with pytest.raises(rd.ModelError, match="cannot compile forward_dynamics.*singular for every q"):
            rd.compile(singular, "forward_dynamics", backend=backend)
