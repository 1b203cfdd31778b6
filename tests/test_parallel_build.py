"""The preferred GCC flags of a build: the parallel build (robodyn.native.build.PARALLEL: GCC's -flto=auto, the code
generation of a library's functions spread over every core) and, for customized models, the combiner on pairs of
instructions (COMBINE_PAIRS).  They are tried first; a compiler that refuses them builds the library without them,
and that compiler binary skips them afterwards (for REFUSED_TTL).  A customized model's library built either way
computes the same numbers, bit for bit."""

from __future__ import annotations

import os
import stat
import subprocess

import numpy as np
import pytest

import robodyn as rd
from robodyn.native import build
from tests.support.kernels import needs_compiler

SOURCE = "double rd_twice(double x) { return 2.0 * x; }\n"


def _compiler(tmp_path, refuse: bool):
    """A compiler driver that logs its arguments and, with ``refuse``, fails on -flto=auto as an older Clang does
    (without ``refuse``, the machine's compiler must take the flag: GCC >= 10 does)."""
    real = build.find_compiler()
    if not refuse:
        probe = tmp_path / "probe.c"
        probe.write_text(SOURCE)
        res = subprocess.run([real, "-flto=auto", "-shared", "-fPIC", str(probe), "-o", str(tmp_path / "probe.so")],
                             capture_output=True, timeout=120)
        if res.returncode != 0:
            pytest.skip(f"{real} does not build with -flto=auto (robodyn builds without it there)")
    log = tmp_path / "calls.log"
    script = tmp_path / "cc-wrapper"
    refusal = ('case " $* " in *" -flto=auto "*) echo "error: unsupported argument \'auto\' to option \'-flto=\'" >&2; '
               'exit 1;; esac\n') if refuse else ""
    script.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\n{refusal}exec "{real}" "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, log


@needs_compiler
@pytest.mark.parametrize("refuse", [False, True])
def test_the_parallel_build_is_tried_first_and_a_refusal_is_remembered(tmp_path, monkeypatch, refuse):
    compiler, log = _compiler(tmp_path, refuse)
    monkeypatch.setenv("CC", str(compiler))
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path / "cache"))
    flags = ["-O2", "-std=c99", "-shared", "-fPIC"]
    first = build.build_library(SOURCE, flags, preferred=build.PARALLEL)
    calls = log.read_text().splitlines()
    assert first.is_file() and "-flto=auto" in calls[0]
    marker = build.refused_marker("preferred flags", build.PARALLEL)
    # refused: built again without the flag, and remembered; accepted: one build, nothing remembered
    assert len(calls) == (2 if refuse else 1) and ("-flto=auto" in calls[-1]) is not refuse
    assert marker.exists() is refuse
    second = build.build_library(SOURCE.replace("2.0", "3.0"), flags, preferred=build.PARALLEL)
    calls = log.read_text().splitlines()
    assert second.is_file() and second != first
    assert ("-flto=auto" in calls[-1]) is not refuse and len(calls) == (3 if refuse else 2)
    if refuse:  # after REFUSED_TTL the compiler is asked again
        old = marker.stat().st_mtime - build.REFUSED_TTL - 60
        os.utime(marker, (old, old))
        build.build_library(SOURCE.replace("2.0", "4.0"), flags, preferred=build.PARALLEL)
        assert "-flto=auto" in log.read_text().splitlines()[-2]


@needs_compiler
def test_a_source_that_does_not_compile_raises_its_own_error_and_blames_no_flag(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    with pytest.raises(build.CompileError, match="failed on the generated model"):
        build.build_library("int f(void) { return undeclared; }\n", ["-std=c99", "-shared", "-fPIC"],
                            preferred=build.PARALLEL)
    assert not build.refused_marker("preferred flags", build.PARALLEL).exists()


def test_customized_models_build_in_parallel_above_the_large_source_size():
    large = build.preferred_flags("x" * (build.LARGE_SOURCE + 1))
    assert set(large) == {*build.PARALLEL, *build.COMBINE_PAIRS}
    assert build.preferred_flags("x" * build.LARGE_SOURCE) == build.COMBINE_PAIRS


@needs_compiler
def test_a_customized_model_tries_the_combiner_on_pairs_first(tmp_path, monkeypatch):
    compiler, log = _compiler(tmp_path, refuse=False)
    monkeypatch.setenv("CC", str(compiler))
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path / "cache"))
    rd.compile(rd.load("planar2r"), "gravity_torques")
    assert [call for call in log.read_text().splitlines() if "model.c" in call][0].endswith(
        " ".join(build.COMBINE_PAIRS) + " model.c -o model.so -lm")


@needs_compiler
def test_a_model_built_in_parallel_computes_what_the_serial_build_does(tmp_path, monkeypatch):
    """Panda's inverse dynamics built with and without a large model's preferred flags (the parallel build, the
    combiner on pairs): every output bit for bit equal, batched (the four-lane function, its AVX2 clone where the CPU has AVX2)
    and one state (the scalar function)."""
    robot = rd.load("panda")
    q, qd, qdd = np.random.default_rng(4).uniform(-2.0, 2.0, (3, 9, robot.n))
    results = []
    for preferred in ((*build.PARALLEL, *build.COMBINE_PAIRS), ()):
        monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path / f"cache{len(preferred)}"))
        monkeypatch.setattr(build, "preferred_flags", lambda source, p=preferred: p)
        f = rd.compile(robot, "inverse_dynamics")
        results.append([f(q, qd, qdd), f(q[3], qd[3], qdd[3])])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
