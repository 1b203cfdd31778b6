"""trig="exact": the generic kernels' sines and cosines are the C library's bit for bit, in lanes (kernels.c:
libm_sincos_lanes) where they were found to match it; trig="fast": their vectorised sincos (vsincos_fast) within 1 ulp
of the C library's, every kernel within rounding of trig="exact", one state equal to its batch row bit for bit, and
the option checked on entry and ignored where the kernels do not run."""

from __future__ import annotations

import platform
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import robodyn as rd
from robodyn import Robot, native
from robodyn.errors import InputError
from tests.support.kernels import needs_kernels
from tests.support.random_robots import random_robot

pytestmark = needs_kernels


def probe(mx: float, my: float) -> Robot:
    """One revolute joint (α = θ = d = r = 0) under g = (1, 0, 0): the gravity torque of MS = (1, 0, 0) is sin q and
    that of MS = (0, 1, 0) is cos q, bit for bit (every other term of the recursion a product by 0 or 1)."""
    params = np.array([[2.0, 0.0, 0.0, 2.0, 0.0, 2.0, mx, my, 0.0, 1.0]])
    return Robot(name="probe", sigma=[0], antecedent=[0], gamma=[0.0], b=[0.0], alpha=[0.0], d=[0.0], theta=[0.0],
                 r=[0.0], params=params, gravity=np.array([1.0, 0.0, 0.0]))


def kernel_sincos(x: np.ndarray, trig: str):
    q = x[:, None]
    return rd.gravity_torques(probe(1.0, 0.0), q, trig=trig)[:, 0], rd.gravity_torques(probe(0.0, 1.0), q, trig=trig)[:, 0]


def ulps(a, b) -> np.ndarray:
    return np.abs(a - b) / np.spacing(np.abs(b))


def angles() -> np.ndarray:
    rng = np.random.default_rng(37)
    k = np.concatenate([np.arange(-64.0, 65.0), rng.integers(-2**20, 2**20, 200).astype(float), [2.0**20, -2.0**20]])
    near = k * (np.pi / 2)
    edges = [0.0, -0.0, 5e-324, -1e-310, 1e-300, 2.0**-27, -(2.0**-27), 2.0**-26, 1e-9, 2.0**20 * np.pi / 2,
             np.nextafter(2.0**20 * np.pi / 2, np.inf), 1e7, -3e9, 1e300, -1.7e308]
    return np.concatenate([rng.uniform(-100, 100, 20_000), rng.uniform(-1e6, 1e6, 2000), near,
                           np.nextafter(near, np.inf), np.nextafter(near, -np.inf), edges])


def test_probe_exposes_the_c_library_values():
    x = angles()
    s, c = kernel_sincos(x, "exact")
    np.testing.assert_array_equal(s, np.sin(x))
    np.testing.assert_array_equal(c, np.cos(x))


def libm_paths() -> np.ndarray:
    """Angles over every path of the C library's (GNU libc's) sin and cos, both signs: the table points k/128 and
    the midpoints between them with their neighbours, each threshold of the algorithm (2^-27, 2^-26, 0.126,
    0.85546875, 2.426265, 105414350) with 3 doubles either side, the doubles nearest m π/2 (m ≤ 10^4) and their
    neighbours, π/2 − (k + 1/2)/128 (where the sin and cos parts of the middle range can fall on different rows of
    the table), and random angles spread over each path's range."""
    rng = np.random.default_rng(2028)
    table = np.concatenate([np.arange(111) / 128, (np.arange(111) + 0.5) / 128])
    edges = np.array([2.0**-27, 2.0**-26, 0.126, 0.85546875, float.fromhex("0x1.368fdp+1"),
                      float.fromhex("0x1.921fbp+26")])
    near = np.arange(1, 10_001) * (np.pi / 2)
    rows = float.fromhex("0x1.921fb54442d18p0") - (np.arange(111) + 0.5) / 128
    bands = [rng.uniform(lo, hi, 40_000) for lo, hi in ((0, 0.13), (0.13, 0.86), (0.86, 2.43), (2.43, 8), (8, 1e3),
                                                         (1e3, 1.1e8))]
    x = np.concatenate([table, edges, near, rows, *bands])
    x = np.concatenate([x] + [np.nextafter(x, d) for d in (np.inf, -np.inf)])
    x = np.concatenate([x] + [np.nextafter(np.nextafter(edges, d), d) for d in (np.inf, -np.inf)] +
                       [np.nextafter(np.nextafter(np.nextafter(edges, d), d), d) for d in (np.inf, -np.inf)])
    return np.concatenate([x, -x])


def test_exact_sincos_is_the_c_library_on_every_path():
    """trig="exact" gives np.sin and np.cos (the C library's) bit for bit over every path of the C library's
    algorithm, whether the kernels compute them in lanes or call the C library (native.exact_trig())."""
    assert native.exact_trig() in ("lanes", "calls")
    x = libm_paths()
    s, c = kernel_sincos(x, "exact")
    np.testing.assert_array_equal(s, np.sin(x))
    np.testing.assert_array_equal(c, np.cos(x))


def gnu_libc_with_fma() -> bool:
    """GNU libc 2.28 or later (the algorithm of libm_sincos_lanes) on an x86-64 processor with FMA and AVX2."""
    name, version = platform.libc_ver()
    cpuinfo = Path("/proc/cpuinfo")
    flags = cpuinfo.read_text().split() if cpuinfo.exists() else []
    return (name == "glibc" and tuple(map(int, version.split(".")[:2])) >= (2, 28) and platform.machine() == "x86_64"
            and "fma" in flags and "avx2" in flags)


@pytest.mark.skipif(not gnu_libc_with_fma(), reason="the lanes follow GNU libc >= 2.28 on x86-64 with FMA and AVX2")
def test_exact_sincos_runs_in_lanes_with_gnu_libc():
    """Where the C library is GNU libc's algorithm built with FMA, its lanes pass the check at load time and serve
    trig="exact" (a check that failed there would leave every kernel on the C library's calls, 2–4 times slower)."""
    assert native.exact_trig() == "lanes"


def test_fast_sincos_within_one_ulp():
    """Within 1 ulp of the C library's sin and cos (its tie-breaking differs in ~3 % of the last bits), in every
    quadrant, at the multiples of π/2 up to 2^20 π/2 and their neighbours; subnormal and tiny angles as the C library
    (sin x = x); beyond 2^20 π/2 the C library's own values."""
    x = angles()
    s, c = kernel_sincos(x, "fast")
    assert ulps(s, np.sin(x)).max() <= 1.0 and ulps(c, np.cos(x)).max() <= 1.0
    tiny = np.abs(x) < 2.0**-27
    np.testing.assert_array_equal(s[tiny], x[tiny])
    far = np.abs(x) > 2.0**20 * np.pi / 2
    np.testing.assert_array_equal(s[far], np.sin(x[far]))
    np.testing.assert_array_equal(c[far], np.cos(x[far]))
    np.testing.assert_array_equal(kernel_sincos(-x, "fast")[0], -s)  # odd and even, bit for bit
    np.testing.assert_array_equal(kernel_sincos(-x, "fast")[1], c)


def test_fast_sincos_below_one_ulp_of_the_true_value():
    """Against sin and cos in 200-bit arithmetic (mpmath): < 1 ulp, at random angles and those nearest a zero."""
    mpmath = pytest.importorskip("mpmath")
    x = angles()
    s, c = kernel_sincos(x, "fast")
    pick = np.concatenate([np.arange(0, 20_000, 100), np.argsort(np.abs(np.sin(x)))[:40],
                           np.argsort(np.abs(np.cos(x)))[:40]])
    with mpmath.workprec(200):
        for i in pick:
            for got, f in ((s[i], mpmath.sin), (c[i], mpmath.cos)):
                true = f(mpmath.mpf(float(x[i])))
                if true != 0:
                    assert abs(mpmath.mpf(float(got)) - true) < np.spacing(abs(float(true))), x[i]


def rel(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b), initial=0.0) / max(1.0, np.max(np.abs(b), initial=0.0)))


KERNELS = {
    "inverse_dynamics": (rd.inverse_dynamics, 3), "gravity_torques": (rd.gravity_torques, 1),
    "inertia_matrix": (rd.inertia_matrix, 1), "forward_dynamics": (rd.forward_dynamics, 3),
    "regressor": (rd.regressor, 3), "inverse_dynamics_derivatives": (rd.inverse_dynamics_derivatives, 3),
    "forward_dynamics_derivatives": (rd.forward_dynamics_derivatives, 3),
}


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), tree=st.booleans(), fixed=st.booleans())
def test_every_kernel_fast_equals_exact_to_rounding(seed, tree, fixed):
    """Serial and branched robots with revolute, prismatic and fixed frames: trig="fast" gives trig="exact"'s
    numbers to 1e-13 (the direct dynamics to 1e-13 cond(A)), and one state gives its batch row bit for bit."""
    robot = random_robot(seed, tree=tree, fixed=fixed)
    rng = np.random.default_rng(seed)
    states = rng.uniform(-4, 4, (3, 9, robot.n))
    cond = max(np.linalg.cond(rd.inertia_matrix(robot, states[0])).max(), 1.0)
    for name, (f, inputs) in KERNELS.items():
        args = tuple(states[:inputs])
        exact, fast = (np.asarray(f(robot, *args, trig=t)) for t in ("exact", "fast"))
        scale = cond if name.startswith("forward") else 1.0
        assert rel(fast, exact) < 1e-13 * scale, name
        batch_axis = 1 if name.endswith("_derivatives") else 0
        for k in (0, 8):
            one = np.asarray(f(robot, *(x[k] for x in args), trig="fast"))
            np.testing.assert_array_equal(one, np.take(fast, k, axis=batch_axis), err_msg=name)


def test_fast_threads_are_bitwise_identical():
    robot = random_robot(11, nf=9, tree=True, fixed=True)
    q, qd, qdd = np.random.default_rng(3).uniform(-3, 3, (3, 41, robot.n))
    one = native.inverse_dynamics(robot, q, qd, qdd, threads=1, trig="fast")
    np.testing.assert_array_equal(native.inverse_dynamics(robot, q, qd, qdd, threads=3, trig="fast"), one)
    np.testing.assert_array_equal(rd.inverse_dynamics(robot, q, qd, qdd, trig="fast"), one)


@pytest.mark.parametrize("trig", ["Fast", "exact ", "", None, 1, True])
def test_bad_trig_is_named(trig):
    robot = rd.load("puma560")
    q = np.zeros(robot.n)
    calls = [lambda: rd.inverse_dynamics(robot, q, q, q, trig=trig),
             lambda: rd.inverse_dynamics(robot, q, q, q, method="gibbs_appell", trig=trig),
             lambda: rd.inertia_matrix(robot, q, trig=trig), lambda: rd.inertia_matrix(robot, q, "crba", trig=trig),
             lambda: rd.forward_dynamics(robot, q, q, q, trig=trig), lambda: rd.gravity_torques(robot, q, trig=trig),
             lambda: rd.regressor(robot, q, q, q, trig=trig),
             lambda: rd.inverse_dynamics_derivatives(robot, q, q, q, trig=trig),
             lambda: rd.forward_dynamics_derivatives(robot, q, q, q, trig=trig),
             lambda: native.inertia_matrix(robot, q[None], trig=trig)]
    for call in calls:
        with pytest.raises(InputError, match=r"trig=.*'exact'.*'fast'"):
            call()


def test_paths_without_the_kernels_ignore_fast(monkeypatch):
    """A permission: NumPy (float32, another method, one state with wrenches, ROBODYN_NATIVE=0) computes as by
    default."""
    robot = rd.load("puma560")
    q, qd, qdd = np.random.default_rng(4).uniform(-2, 2, (3, 5, robot.n))
    W = np.ones((5, robot.nf, 6))
    for f, args in ((rd.inverse_dynamics, (q, qd, qdd)), (rd.inertia_matrix, (q,)), (rd.forward_dynamics, (q, qd, qdd))):
        np.testing.assert_array_equal(f(robot, *(x.astype(np.float32) for x in args), trig="fast"),
                                      f(robot, *(x.astype(np.float32) for x in args)))
    np.testing.assert_array_equal(rd.inverse_dynamics(robot, q, qd, qdd, method="gibbs_appell", trig="fast"),
                                  rd.inverse_dynamics(robot, q, qd, qdd, method="gibbs_appell"))
    np.testing.assert_array_equal(rd.inverse_dynamics(robot, q[0], qd[0], qdd[0], wrenches=W[0], trig="fast"),
                                  rd.inverse_dynamics(robot, q[0], qd[0], qdd[0], wrenches=W[0]))
    monkeypatch.setenv("ROBODYN_NATIVE", "0")
    for f, args in KERNELS.values():
        exact = np.asarray(f(robot, *(q, qd, qdd)[:args]))
        np.testing.assert_array_equal(np.asarray(f(robot, *(q, qd, qdd)[:args], trig="fast")), exact)
        np.testing.assert_array_equal(np.asarray(f(robot, *(x[2] for x in (q, qd, qdd)[:args]), trig="fast")),
                                      np.asarray(f(robot, *(x[2] for x in (q, qd, qdd)[:args]))))
