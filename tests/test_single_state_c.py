"""Single states of every non-default ``method=`` through the traced kernels compiled to C (robodyn.dynamics.fast_c).

The compiled kernel runs the Python kernel's operations in the same order: the same numbers to rounding; anything
it declines (NaN, a singular pivot) reaches the general path with the general path's message; without a compiler,
with ROBODYN_NATIVE=0 or after a failed build, the Python kernel runs as before.
"""

import hashlib
import os
import subprocess
import sysconfig

import uuid

import numpy as np
import pytest

import robodyn as rd
from robodyn.model.workspace import WORKSPACE
from robodyn import native
from robodyn.dynamics import executor, fast, fast_c, gibbs_appell, lagrange
from robodyn.native import build
from tests.support.checks import assert_close
from tests.support.random_robots import random_robot, random_state


def _stored(robot, kind):
    """What the per-robot workspace holds for ``robot`` under keys (kind, name): name -> value."""
    return {k[1]: v for k, v in WORKSPACE.stored(robot).items() if type(k) is tuple and k[0] == kind}


def _fresh(robot):
    """An equal-but-for-its-name robot with nothing in the workspace yet (equal robots share one entry)."""
    return robot.replace(name=f"{robot.name}-{uuid.uuid4().hex}")


_HEADERS = os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))
pytestmark = pytest.mark.skipif(not (_HEADERS and native.available()),
                                reason="no C compiler or no Python headers: the Python kernels are tested elsewhere")

#: (function, method, kernel); the kernel takes gravity as an input when the call gives gravity=
METHODS = (
    ("inverse_dynamics", "gibbs_appell", "gibbs_appell_inverse"),
    ("inverse_dynamics", "spatial_operator", "spatial_operator_inverse"),
    ("inertia_matrix", "walker_orin", "inertia_matrix_walker_orin"),
    ("inertia_matrix", "gibbs_appell", "gibbs_appell_inertia"),
    ("forward_dynamics", "cholesky", "cholesky_forward"),
    ("forward_dynamics", "gibbs_appell", "gibbs_appell_forward"),
    ("forward_dynamics", "spatial_operator", "spatial_operator_forward"),
)


@pytest.fixture
def compile_now(monkeypatch, tmp_path_factory):
    """Kernels compiled at their first single state (instead of after executor.COMPILE_AFTER), in a cache of this run."""
    monkeypatch.setattr(executor, "COMPILE_AFTER", 1)
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path_factory.getbasetemp() / "fast_c_cache"))
    monkeypatch.setenv("ROBODYN_PROGRESS", "0")
    monkeypatch.delenv("ROBODYN_NATIVE", raising=False)
    return monkeypatch


def _calls(robot, seed, gravity=None):
    """(function, method, kernel, single-state call, the same call on a batch of one)."""
    q, qd, qdd = random_state(robot, seed)
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    kw = {} if gravity is None else {"gravity": gravity}
    out = []
    for what, method, kernel in METHODS:
        f = getattr(rd, what)
        args, extra = ((q,), {}) if what == "inertia_matrix" else ((q, qd, qdd if what == "inverse_dynamics" else tau), kw)
        key = kernel + ("_gravity" if extra else "")
        out.append((what, method, key, lambda f=f, a=args, e=extra, m=method: f(robot, *a, method=m, **e),
                    lambda f=f, a=args, e=extra, m=method: f(robot, *(x[None] for x in a), method=m, **e)[0]))
    return out


@pytest.mark.parametrize("robot, gravity", [
    (random_robot(21, nf=4, tree=False, prismatic=True), None),
    (random_robot(22, nf=5, tree=True, prismatic=True, fixed=True), np.array([0.5, -3.0, -9.0])),
], ids=["serial", "tree-gravity"])
def test_compiled_kernel_equals_python_kernel_and_batched_path(compile_now, robot, gravity):
    assert any(robot.sigma == 1)  # prismatic joints included
    for what, method, key, single, batched in _calls(robot, 7, gravity):
        c = single()
        assert key in _stored(robot, "compiled") and _stored(robot, "compiled")[key], (what, method)  # the C entry ran
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("ROBODYN_NATIVE", "0")
            python = single()  # the Python kernel (Cholesky: A, H and the solve as separate kernels)
            reference = batched()
        assert c.dtype == np.float64 and c.shape == python.shape == reference.shape, (what, method)
        assert_close(c, python, rtol=1e-12)
        assert_close(c, reference, rtol=1e-12)
        assert_close(single(), c, rtol=0)  # and the next call is the same


def test_long_kernels_cut_into_parts_give_the_same_numbers(compile_now):
    """A kernel longer than fast_c.CHUNK statements is compiled as functions called in order, values crossing a cut
    passed through a scratch array: the same numbers, and a check in any part still hands the state over."""
    compile_now.setattr(fast_c, "CHUNK", 25)
    robot = random_robot(22, nf=5, tree=True, prismatic=True, fixed=True)
    for what, method, key, single, batched in _calls(robot, 9):
        c = single()
        assert _stored(robot, "compiled")[key], (what, method)
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("ROBODYN_NATIVE", "0")
            assert_close(c, single(), rtol=1e-12)
    params = np.zeros((2, 10))
    params[1, 9] = 1.0
    slider = rd.Robot(name="slider", sigma=[0, 1], alpha=[0, np.pi / 2], d=[0, 0.0], params=params)
    compile_now.setattr(fast_c, "CHUNK", 8)
    parts = fast.generate_c("k", lagrange._forward_kernel(slider), {"q": 2, "qd": 2, "tau": 2, "g": 3}).split(
        "static int rd_part")
    assert len(parts) > 3 and any("if (!(" in part for part in parts[2:])  # a pivot test after the first cut
    with pytest.raises(rd.ModelError, match="singular"):
        rd.forward_dynamics(slider, np.array([0.3, 0.0]), np.array([0.1, 0.2]), np.ones(2), method="cholesky",
                            gravity=np.array([0.0, 0.0, -9.81]))
    assert _stored(slider, "compiled")["cholesky_forward_gravity"]


def test_cholesky_kernel_equals_its_python_trace(compile_now):
    """The one kernel whose Python form is not what runs without a compiler: its own trace, run in Python."""
    robot = random_robot(23, nf=5, tree=True, fixed=True)
    q, qd, qdd = random_state(robot, 2)
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    n = robot.n
    c = rd.forward_dynamics(robot, q, qd, tau, method="cholesky")
    assert _stored(robot, "compiled")["cholesky_forward"]
    python = executor.traced(robot, "cholesky_trace", lambda: (lagrange._forward_kernel(robot), dict(
        q=n, qd=n, tau=n, g=3)), (n, n, n, 3), (q, qd, tau, np.asarray(robot.gravity, float)), (n,))
    assert "cholesky_trace" in _stored(robot, "kernel")
    assert_close(c, python, rtol=1e-13)
    assert_close(c, qdd, rtol=1e-10)


@pytest.mark.parametrize("what, method, kernel", METHODS, ids=[f"{w}-{m}" for w, m, _ in METHODS])
def test_nan_goes_to_the_general_path_with_its_message(compile_now, what, method, kernel):
    robot = random_robot(24, nf=3)
    q = np.array([0.1, np.nan, 0.3])
    args = (q,) if what == "inertia_matrix" else (q, q, q)
    getattr(rd, what)(robot, *((np.zeros(3),) * len(args)), method=method)  # the kernel is compiled
    assert _stored(robot, "compiled")[kernel]
    with pytest.raises(rd.InputError) as compiled:
        getattr(rd, what)(robot, *args, method=method)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ROBODYN_NATIVE", "0")
        with pytest.raises(rd.InputError) as python:
            getattr(rd, what)(robot, *args, method=method)
    assert "'q'" in str(compiled.value) and str(compiled.value) == str(python.value)


@pytest.mark.parametrize("method, kernel", [("cholesky", "cholesky_forward"), ("gibbs_appell", "gibbs_appell_forward"),
                                            ("spatial_operator", "spatial_operator_forward")])
def test_singular_state_goes_to_the_general_path_with_its_message(compile_now, method, kernel):
    """A point mass carried by a slider (joint 2) that turns with joint 1: at q2 = 0 the mass is on joint 1's axis
    and A is singular, a pivot that depends on the state, so its test runs in the compiled kernel."""
    params = np.zeros((2, 10))
    params[1, 9] = 1.0
    slider = rd.Robot(name="slider", sigma=[0, 1], alpha=[0, np.pi / 2], d=[0, 0.0], params=params)
    qd, tau = np.array([0.1, 0.2]), np.array([1.0, 2.0])
    assert_close(rd.forward_dynamics(slider, np.array([0.3, 0.5]), qd, tau, method=method), [3.92, 2.005], rtol=1e-14)
    assert _stored(slider, "compiled")[kernel]
    messages = []
    for switch in (None, "0"):
        with pytest.MonkeyPatch.context() as mp:
            if switch:
                mp.setenv("ROBODYN_NATIVE", switch)
            with pytest.raises(rd.ModelError, match="singular") as err:
                rd.forward_dynamics(slider, np.array([0.3, 0.0]), qd, tau, method=method)
            messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_arguments_the_compiled_entry_does_not_take(compile_now):
    """A strided 1-D view runs the Python kernel (the entry takes contiguous buffers only); float32, a batch of one
    and a list take the general path: each the same numbers, in the caller's dtype and shape."""
    robot = random_robot(30, nf=4, tree=True, fixed=True)
    q, qd, qdd = random_state(robot, 6)
    tau = rd.inverse_dynamics(robot, q, qd, qdd, method="spatial_operator")
    assert _stored(robot, "compiled")["spatial_operator_inverse"]
    strided = np.repeat(q, 2)[::2]
    assert not strided.flags.c_contiguous
    assert_close(rd.inverse_dynamics(robot, strided, qd, qdd, method="spatial_operator"), tau, rtol=1e-12)
    single = rd.inverse_dynamics(robot, *(x.astype(np.float32) for x in (q, qd, qdd)), method="spatial_operator")
    assert single.dtype == np.float32 and single.shape == (robot.n,)
    assert_close(single, tau, rtol=1e-5)
    batch = rd.inverse_dynamics(robot, q[None], qd, qdd, method="spatial_operator")
    assert batch.shape == (1, robot.n)
    assert_close(batch[0], tau, rtol=1e-12)
    assert_close(rd.inverse_dynamics(robot, list(q), qd, qdd, method="spatial_operator"), tau, rtol=1e-12)
    with pytest.raises(rd.InputError, match="'qd'"):
        rd.inverse_dynamics(robot, q, qd[:-1], qdd, method="spatial_operator")


def test_native_switched_off_uses_the_python_kernel(compile_now):
    robot = _fresh(random_robot(25, nf=4, tree=True))
    q, qd, qdd = random_state(robot, 3)
    compile_now.setenv("ROBODYN_NATIVE", "0")
    tau = rd.inverse_dynamics(robot, q, qd, qdd, method="gibbs_appell")
    assert not _stored(robot, "compiled") and "gibbs_appell_inverse" in _stored(robot, "kernel")
    compile_now.delenv("ROBODYN_NATIVE")
    assert_close(rd.inverse_dynamics(robot, q, qd, qdd, method="gibbs_appell"), tau, rtol=1e-12)
    assert _stored(robot, "compiled")["gibbs_appell_inverse"]


def test_kernels_are_compiled_after_compile_after_single_states(monkeypatch, tmp_path):
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    robot = _fresh(random_robot(26, nf=3))
    q = random_state(robot, 1)[0]
    for _ in range(executor.COMPILE_AFTER - 1):
        rd.inertia_matrix(robot, q, method="gibbs_appell")
    assert "gibbs_appell_inertia" not in _stored(robot, "compiled")
    rd.inertia_matrix(robot, q, method="gibbs_appell")
    assert _stored(robot, "compiled")["gibbs_appell_inertia"]


@pytest.mark.parametrize("failure", ["no compiler", "failing compiler"])
def test_without_a_working_compiler_the_python_kernel_runs(compile_now, tmp_path, failure):
    compile_now.setenv("ROBODYN_CACHE", str(tmp_path))
    if failure == "no compiler":
        compile_now.setattr(executor.native, "available", lambda: False)
    else:
        compile_now.setenv("CC", "false")  # exits 1: the build fails, the kernel stays Python
    robot = _fresh(random_robot(27, nf=4, tree=True))
    q, qd, qdd = random_state(robot, 4)
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    qdd_c = rd.forward_dynamics(robot, q, qd, tau, method="spatial_operator")
    assert _stored(robot, "compiled") == {"spatial_operator_forward": False}
    assert _stored(robot, "calls") == {"spatial_operator_forward": 1}
    assert "spatial_operator_forward" in _stored(robot, "kernel")
    assert_close(qdd_c, qdd, rtol=1e-10)
    assert not list(tmp_path.glob("rd_*.so"))


def test_corrupt_cached_kernel_is_rebuilt(compile_now, tmp_path):
    compile_now.setenv("ROBODYN_CACHE", str(tmp_path))
    robot = _fresh(random_robot(28, nf=3))
    q = random_state(robot, 5)[0]
    A = rd.inertia_matrix(robot, q, method="walker_orin")
    (lib,) = tmp_path.glob("rd_*.so")
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\x7fELF garbage")
    garbage.replace(lib)  # a new file: this process keeps its mapping of the old one
    again = _fresh(random_robot(28, nf=3))  # a new robot: its kernels are loaded again, through the cache's check
    np.testing.assert_array_equal(rd.inertia_matrix(again, q, method="walker_orin"), A)
    key, digest = lib.with_suffix(".sha256").read_text().split()
    assert lib.read_bytes()[:4] == b"\x7fELF" and len(lib.read_bytes()) > 1000 and len(key) == 64
    assert hashlib.sha256(lib.read_bytes()).hexdigest() == digest


HOSTILE = '*/ #include <stdio.h>\n"); system("rm -rf ~"); /*'


def test_generated_c_is_warning_free_and_holds_no_robot_text(tmp_path, monkeypatch):
    robot = random_robot(21, nf=4)  # revolute and prismatic joints
    evil = robot.replace(name=HOSTILE, frame_names=tuple(f"{HOSTILE}{k}" for k in range(robot.nf)))
    n = robot.n
    sources = []
    for r in (robot, evil):
        g = tuple(r.gravity.tolist())
        build_ = gibbs_appell._forward_kernel(r)
        sources.append(fast.generate_c("gibbs_appell_forward", lambda b, **i: build_(b, g=g, **i),
                                       {"q": n, "qd": n, "tau": n}))
    assert sources[0] == sources[1] and "rm -rf" not in sources[1] and "random" not in sources[1]
    assert 'optimize("O1")' in sources[1]
    monkeypatch.setattr(fast_c, "CHUNK", 30)  # and a kernel cut into parts
    inertia = fast.generate_c("gibbs_appell_inertia", gibbs_appell._inertia_kernel(evil), {"q": n})
    assert "rd_part3" in inertia
    include = sysconfig.get_paths()["include"]
    for k, text in enumerate([sources[1], inertia]):
        (tmp_path / f"k{k}.c").write_text(text)
        for python in ([], ["-DRD_PYTHON", f"-I{include}"]):
            res = subprocess.run([build.find_compiler(), "-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-pedantic",
                                  "-fPIC", "-c", f"k{k}.c", "-o", f"k{k}.o", *python],
                                 cwd=tmp_path, capture_output=True, text=True)
            assert res.returncode == 0, res.stderr


def test_operands_c_cannot_spell_keep_the_python_kernel():
    with pytest.raises(fast_c.NotWritable):
        fast_c.source([("t0", "t0 = q0 * inf", ("*", "q0", "inf"))], {"q": 1}, ["t0"], "k")
    with pytest.raises(fast_c.NotWritable):
        fast_c.source([("t0", "", ("*", "q0", "x); system(1"))], {"q": 1}, ["t0"], "k")
