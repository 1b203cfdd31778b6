"""A failed build of the generic kernels is retried by a later process, never disabled for good (issue 20); without
a C compiler, or with ROBODYN_NATIVE=0, robodyn's functions compute on NumPy and build nothing.

The build itself is replaced by a fake that records the flags it was asked for, so these tests run without a
compiler: what matters is which builds a process attempts.  A process is simulated by a fresh workspace
(robodyn.model.workspace, where a loaded library, or a failure, is remembered for the process).
"""

from __future__ import annotations

import os
import time
import uuid
import warnings

import numpy as np
import pytest

import robodyn as rd
from robodyn import native
from robodyn.dynamics import task_space
from robodyn.kinematics import forward_kinematics, link_velocities
from robodyn.model.workspace import Workspace
from robodyn.native import build
from robodyn.native.build import CompilerFailedError, CompileTimeoutError
from tests.support.floating import random_floating, random_free_state
from tests.support.random_robots import random_robot


@pytest.fixture
def fake_build(monkeypatch, tmp_path):
    """build_library replaced: raises ``outcome[threaded or serial]`` and records each attempt (a compiler and
    Python's headers named, so that this runs where there are none)."""
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    monkeypatch.setattr(native, "python_flags", lambda: ["-I/usr/include/python3", "-DRD_PYTHON"])
    monkeypatch.setattr(build, "find_compiler", lambda: str(tmp_path / "cc"))
    monkeypatch.setattr(native, "WORKSPACE", Workspace())  # put back after the test
    calls, outcome = [], {"threaded": CompilerFailedError("no pthread.h"),
                          "serial": CompilerFailedError("cc: internal error")}

    def build_library(source, flags, description, prefix, preferred):
        assert preferred == build.PARALLEL  # each build tries the parallel code generation first (test_parallel_build)
        kind = "threaded" if "-DRD_THREADS" in flags else "serial"
        calls.append(kind)
        raise outcome[kind]

    monkeypatch.setattr(native, "build_library", build_library)
    return calls, outcome, tmp_path


def _new_process(monkeypatch):
    monkeypatch.setattr(native, "WORKSPACE", Workspace())


def test_a_failure_lasts_for_the_process_and_the_next_one_tries_again(fake_build, monkeypatch):
    calls, outcome, cache = fake_build
    assert not native.available() and calls == ["threaded", "serial"]
    assert not native.available() and calls == ["threaded", "serial"]  # remembered by this process
    with pytest.raises(native.NativeUnavailableError, match="internal error"):
        native.threaded()
    _new_process(monkeypatch)
    assert not native.available()
    # the threaded build failed for good reasons (remembered for a while, per compiler); the serial one is retried
    assert calls == ["threaded", "serial", "serial"]
    assert len(list(cache.glob("refused_*.failed"))) == 1


def test_a_timeout_is_not_remembered(fake_build, monkeypatch):
    calls, outcome, cache = fake_build
    outcome["threaded"] = CompileTimeoutError("the compiler took longer than 120 s")
    assert not native.available()
    assert not list(cache.glob("*.failed"))
    _new_process(monkeypatch)
    native.available()
    assert calls == ["threaded", "serial", "threaded", "serial"]


def test_an_old_failure_or_another_compiler_is_tried_again(fake_build, monkeypatch, tmp_path):
    calls, outcome, cache = fake_build
    native.available()
    (marker,) = cache.glob("refused_*.failed")
    _new_process(monkeypatch)
    old = time.time() - native.FAILED_TTL - 60
    os.utime(marker, (old, old))
    native.available()
    assert calls == ["threaded", "serial", "threaded", "serial"]  # expired: tried (and remembered) again
    assert marker.exists() and time.time() - marker.stat().st_mtime < 60
    compiler = tmp_path / "cc-13"
    compiler.write_text("#!/bin/sh\n")
    monkeypatch.setattr(build, "find_compiler", lambda: str(compiler))  # an updated or another compiler
    _new_process(monkeypatch)
    native.available()
    assert calls[-2:] == ["threaded", "serial"] and len(list(cache.glob("refused_*.failed"))) == 2


def test_a_cached_library_that_does_not_import_is_a_robodyn_error(fake_build, monkeypatch):
    """A cached kernel library that passes its checks but fails to import (ImportError from the loader: dlopen's
    undefined symbol) is one NativeUnavailableError line — the NumPy paths go on —, never a raw ImportError.  The
    build returns the cached file, as it does for a verified library: nothing is compiled."""
    import importlib.machinery

    calls, outcome, cache = fake_build
    library = cache / "rdgeneric_cached.so"
    library.write_bytes(b"\x7fELF")
    monkeypatch.setattr(native, "build_library", lambda source, flags, description, prefix, preferred: library)

    def broken(self, spec):
        raise ImportError("undefined symbol: rd_kernel")

    monkeypatch.setattr(importlib.machinery.ExtensionFileLoader, "create_module", broken)
    with pytest.raises(native.NativeUnavailableError, match="cannot load robodyn's generic kernels .*undefined symbol"):
        native._load()


def _fresh(robot):
    """``robot`` under a new name: nothing bound to it yet in robodyn's workspace (equal robots share one entry)."""
    return robot.replace(name=f"{robot.name}-{uuid.uuid4().hex}")


def _every_entry(robot, free):
    """The numbers of the functions that may hand a call to the kernels (one state and a batch of each: the
    single-state, batch, kinematics, task-space and free-flyer entries), flattened into one list of arrays."""
    q, qd, qdd = np.random.default_rng(3).uniform(-1.5, 1.5, (3, 4, robot.n))
    qf, vf, af = random_free_state(free.n, 4)
    results = [rd.gravity_torques(robot, q[0]), rd.inverse_dynamics(robot, q, qd, qdd),
               rd.inertia_matrix(robot, q[1]), rd.forward_dynamics(robot, q, qd, qdd),
               *rd.inverse_dynamics_derivatives(robot, q[2], qd[2], qdd[2]),
               *rd.forward_dynamics_derivatives(robot, q, qd, qdd),
               forward_kinematics(robot, q[0]), *link_velocities(robot, q, qd),
               *task_space.task_space_dynamics(robot, q[3], qd[3], rows=(0, 1, 5), damping=0.1),
               *task_space.task_space_dynamics(robot, q, qd, rows=(0, 1, 5), damping=0.1),
               rd.floating.floating_inverse_dynamics(free, qf, vf, af), rd.floating.floating_inertia_matrix(free, qf)]
    return [np.asarray(r) for r in results]


def test_switched_off_nothing_is_built_and_the_switch_is_read_at_every_call(fake_build, monkeypatch):
    """ROBODYN_NATIVE=0: robodyn's functions run NumPy without building the kernels (a build costs seconds of
    compiling); nothing is kept, so that once the variable is unset the next call asks for the kernels again."""
    calls, outcome, cache = fake_build
    robot, free = _fresh(random_robot(21, nf=6, tree=True, fixed=True)), _fresh(random_floating(22))
    monkeypatch.setenv("ROBODYN_NATIVE", "0")
    _every_entry(robot, free)
    assert calls == [] and not list(cache.iterdir())
    monkeypatch.delenv("ROBODYN_NATIVE")
    rd.gravity_torques(robot, np.zeros(robot.n))
    assert calls == ["threaded", "serial"]


def test_without_a_c_compiler_every_function_computes_on_numpy(monkeypatch, tmp_path):
    """No C compiler on PATH and no $CC (a fresh process: a new workspace): the kernels are unavailable, with the
    reason, and every function gives the NumPy path's numbers (those of ROBODYN_NATIVE=0), without a warning."""
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    monkeypatch.setattr(native, "WORKSPACE", Workspace())
    robot, free = _fresh(random_robot(23, nf=6, tree=True, fixed=True)), _fresh(random_floating(24))
    monkeypatch.setenv("ROBODYN_NATIVE", "0")
    expected = _every_entry(robot, free)
    monkeypatch.delenv("ROBODYN_NATIVE")
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "no-compiler-here"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _every_entry(robot, free)
    assert not native.available()
    with pytest.raises(native.NativeUnavailableError, match="no C compiler found|Python.h"):
        native.threaded()
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)
