"""A failed build of the generic kernels is retried by a later process, never disabled for good (issue 20).

The build itself is replaced by a fake that records the flags it was asked for, so these tests run without a
compiler: what matters is which builds a process attempts.  A process is simulated by a fresh workspace
(robodyn.model.workspace, where a loaded library, or a failure, is remembered for the process).
"""

from __future__ import annotations

import os
import time

import pytest

from robodyn import native
from robodyn.model.workspace import Workspace
from robodyn.native.build import CompileError, CompileTimeoutError


@pytest.fixture
def fake_build(monkeypatch, tmp_path):
    """build_library replaced: raises ``outcome[threaded or serial]`` and records each attempt."""
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    monkeypatch.setattr(native, "python_flags", lambda: ["-I/usr/include/python3", "-DRD_PYTHON"])
    monkeypatch.setattr(native, "WORKSPACE", Workspace())  # put back after the test
    calls, outcome = [], {"threaded": CompileError("no pthread.h"), "serial": CompileError("cc: internal error")}

    def build_library(source, flags, description, prefix):
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
    assert len(list(cache.glob("rdgeneric_*.failed"))) == 1


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
    (marker,) = cache.glob("rdgeneric_*.failed")
    _new_process(monkeypatch)
    old = time.time() - native.FAILED_TTL - 60
    os.utime(marker, (old, old))
    native.available()
    assert calls == ["threaded", "serial", "threaded", "serial"]  # expired: tried (and remembered) again
    assert marker.exists() and time.time() - marker.stat().st_mtime < 60
    compiler = tmp_path / "cc-13"
    compiler.write_text("#!/bin/sh\n")
    monkeypatch.setattr(native, "find_compiler", lambda: str(compiler))  # an updated or another compiler
    _new_process(monkeypatch)
    native.available()
    assert calls[-2:] == ["threaded", "serial"] and len(list(cache.glob("rdgeneric_*.failed"))) == 2



def test_a_cached_library_that_does_not_import_is_a_robodyn_error(monkeypatch):
    """A cached kernel library that passes its checks but fails to import (ImportError from the loader) is one
    NativeUnavailableError line — the NumPy paths go on —, never a raw ImportError."""
    import importlib.machinery

    from robodyn import native

    def broken(self, module):
        raise ImportError("undefined symbol: rd_kernel")

    monkeypatch.setattr(importlib.machinery.ExtensionFileLoader, "exec_module", broken)
    with pytest.raises(native.NativeUnavailableError, match="cannot load robodyn's generic kernels .*undefined symbol"):
        native._load()
