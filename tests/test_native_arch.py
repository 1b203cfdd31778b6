"""Libraries built for this machine's x86-64 level alone (robodyn.native.build.arch_flags: -DRD_ARCH=N): the generic
kernels' one clone of each kernel instead of four (a first build 4-5 times shorter), a customized model's AVX2
function without its default clone.  The level read from Linux's /proc/cpuinfo, kept in the flags and so in the
cache key, and the libraries built either way computing the same numbers bit for bit (the clones do the same IEEE
operations in the same order; GCC contracts no a * b + c into an FMA in ISO C)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import robodyn as rd
from robodyn import native
from robodyn.native import build
from tests.support.floating import random_floating, random_free_state
from tests.support.kernels import needs_compiler, needs_kernels
from tests.support.random_robots import random_robot, random_state

V3 = ("fpu sse sse2 ssse3 sse4_1 sse4_2 cx16 lahf_lm popcnt xsave avx f16c fma movbe abm bmi1 avx2 bmi2 "
      "rdrand aes")
V4 = V3 + " avx512f avx512dq avx512cd avx512bw avx512vl avx512ifma"


def cpuinfo(flags: str, cores: int = 2) -> str:
    return "".join(f"processor\t: {k}\nvendor_id\t: GenuineIntel\nflags\t\t: {flags}\nbogomips\t: 4600.00\n\n"
                   for k in range(cores))


@pytest.mark.parametrize(("flags", "level"), [
    (V4, 4), (V3, 3),
    (V3.replace(" movbe", ""), None),          # a virtual machine that hides one v3 feature: every clone built
    (V4.replace(" avx512bw", ""), 3),          # AVX-512 without BW (Knights Landing): v3
    (V4.replace(" ssse3", ""), None),          # v3 includes v2
    ("fpu sse sse2", None), ("", None),
])
def test_the_level_is_the_highest_whose_features_cpuinfo_lists(flags, level):
    assert build.x86_level(cpuinfo(flags)) == level


def test_no_level_without_an_x86_flags_line():
    arm = "processor\t: 0\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp\n"
    assert build.x86_level(arm) is None and build.x86_level("") is None


def test_the_machine_level_enters_the_kernels_flags_and_so_the_cache_key():
    flags = build.arch_flags()
    assert flags in ([], ["-DRD_ARCH=3"], ["-DRD_ARCH=4"])
    if sys.platform.startswith("linux") and flags:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            assert flags == [f"-DRD_ARCH={build.x86_level(fh.read())}"]
    key = build.cache_key("x", "cc", [*build.FLAGS, "-DRD_ARCH=3"])
    assert key != build.cache_key("x", "cc", [*build.FLAGS, "-DRD_ARCH=4"])


def _results(module, tag: str) -> list:
    """Every kernel's outputs computed by ``module`` (robot copies renamed, so each is bound to it)."""
    out = []
    for seed, tree in ((3, False), (8, True)):
        robot = random_robot(seed, nf=9, tree=tree, fixed=True, friction=True).replace(name=f"r{seed}{tag}")
        q, qd, qdd = random_state(robot, seed, (7,))
        out += [native.inverse_dynamics(robot, q, qd, qdd), native.inertia_matrix(robot, q),
                native.forward_dynamics(robot, q, qd, qdd), native.regressor(robot, q, qd, qdd),
                *native.inverse_dynamics_derivatives(robot, q, qd, qdd),
                *native.forward_dynamics_derivatives(robot, q, qd, qdd),
                native.inverse_dynamics(robot, q, qd, qdd, trig="fast"), native.inertia_matrix(robot, q[2])]
    robot = random_floating(5, nf=8).replace(name=f"f5{tag}")
    q, v, a = random_free_state(robot.n, 5, (6,))
    out += [rd.floating.floating_inverse_dynamics(robot, q, v, a), rd.floating.floating_inertia_matrix(robot, q),
            rd.floating.floating_forward_dynamics(robot, q, v, a)]
    return out


@needs_kernels
@pytest.mark.skipif(build.arch_flags() == [], reason="not an x86-64-v3 or v4 Linux machine: every clone is built")
def test_the_libraries_of_two_levels_compute_the_same_bits(tmp_path, monkeypatch):
    """This machine's level against the level below it (v4: v3), or the build of every clone (v3): both built here
    (about 10 s each on 2 cores), both run here, every output equal bit for bit."""
    level = int(build.arch_flags()[0].rsplit("=", 1)[1])
    other = [f"-DRD_ARCH={level - 1}"] if level == 4 else []
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    results = []
    for tag, flags in (("a", build.arch_flags()), ("b", other)):
        monkeypatch.setattr(native, "arch_flags", lambda f=flags: f)
        module = native._load()
        monkeypatch.setattr(native, "_module", lambda m=module: m)
        results.append(_results(module, tag))
    for a, b in zip(*results):
        assert np.asarray(a).dtype == np.float64 and np.isfinite(a).all()
        np.testing.assert_array_equal(a, b)


@needs_compiler
@pytest.mark.skipif(build.arch_flags() == [], reason="not an x86-64-v3 or v4 Linux machine: every clone is built")
def test_a_customized_model_built_for_this_level_computes_what_its_clones_do(tmp_path, monkeypatch):
    """Panda's forward dynamics by rd.compile with this machine's level (its AVX2 function alone) and without (the
    AVX2 and default clones): two libraries, every output bit for bit equal, batched (the four-lane function, a
    partial block included) and one state."""
    robot = rd.load("panda")
    q, qd, tau = np.random.default_rng(6).uniform(-2.0, 2.0, (3, 9, robot.n))
    results, libraries = [], []
    for flags in (build.arch_flags(), []):
        cache = tmp_path / f"cache{len(flags)}"
        monkeypatch.setenv("ROBODYN_CACHE", str(cache))
        monkeypatch.setattr(build, "arch_flags", lambda f=flags: f)
        f = rd.compile(robot, "forward_dynamics")
        results.append([f(q, qd, tau), f(q[3], qd[3], tau[3])])
        libraries += [p.read_bytes() for p in cache.glob("*.so")]
    assert len(libraries) == 2 and libraries[0] != libraries[1]
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
