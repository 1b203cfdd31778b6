"""rd.compile models check their outputs as the numeric API does (issue 25 item 4): a result that overflows is a
NumericOverflowError, forward dynamics at a state where A(q) is singular a ModelError naming the joint; C and
NumPy back ends, one state (the C entry) and batches (lane blocks, remainders, threads), large-model bodies."""

import numpy as np
import pytest

import robodyn as rd
from robodyn.native import build
from robodyn.symbolic.codegen import c_code
from robodyn.symbolic.compile import CompiledModel
from tests.support.kernels import has_compiler, needs_compiler

BACKENDS = ["numpy"] + (["c"] if has_compiler() else [])

#: Joint 2 moves a massless link and, through the free joint 3, a point mass: its articulated inertia H_2 is
#: m (l sin q3)^2-like, exactly 0 at q3 = 0 (mass in line with joints 2 and 3) and positive elsewhere, so A(q) is
#: singular at those states only (the generated model cannot fold it away at generation time).
SINGULAR_AT_Q = """
name: sing_at_q
joints:
  - {name: j1, sigma: 0}
  - {name: j2, sigma: 0, d: 1.0}
  - {name: j3, sigma: 0, d: 1.0}
links:
  - {mass: 1.0, com: [0.5, 0, 0], inertia_com: [0.01, 0, 0, 0.1, 0, 0.1]}
  - {M: 0}
  - {mass: 2.0, com: [0.5, 0, 0], inertia_com: [0, 0, 0, 0, 0, 0]}
"""


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


def _states(count, q3):
    rng = np.random.default_rng(1)
    q = rng.uniform(-1, 1, (count, 3))
    q[:, 2] = np.where(np.arange(count) == count - 1, q3, 0.5 + q[:, 2] ** 2)  # the last state is the bad one
    return q, rng.uniform(-1, 1, (count, 3)), rng.uniform(-1, 1, (count, 3))


@pytest.mark.parametrize("backend", BACKENDS)
def test_forward_dynamics_at_a_singular_state_is_the_numeric_model_error(backend):
    robot = rd.loads(SINGULAR_AT_Q)
    f = rd.compile(robot, "forward_dynamics", backend=backend)
    q, qd, tau = _states(11, 0.0)
    with pytest.raises(rd.ModelError, match=r"joint j2: articulated inertia H_j = 0"):
        rd.forward_dynamics(robot, q[-1], qd[-1], tau[-1])  # the numeric API's contract
    np.testing.assert_allclose(f(q[:-1], qd[:-1], tau[:-1]), rd.forward_dynamics(robot, q[:-1], qd[:-1], tau[:-1]),
                               rtol=1e-10, atol=1e-10)
    message = r"robot 'sing_at_q': compiled forward_dynamics: joint j2: .*the direct dynamic model is singular"
    with pytest.raises(rd.ModelError, match=message):
        f(q[-1], qd[-1], tau[-1])  # one state (the C entry declines, the general path names the joint)
    for count in (1, 4, 8, 9, 11):  # the bad state alone, in a lane block, in the remainder
        with pytest.raises(rd.ModelError, match=message):
            f(q[-count:], qd[-count:], tau[-count:])
    # rounding noise instead of an exact zero: q3 = π is also in line; the relative test catches it
    with pytest.raises(rd.ModelError, match=message):
        f(np.array([0.3, 0.2, np.pi]), qd[0], tau[0])


@pytest.mark.parametrize("backend, kind", [
    pytest.param(backend, kind, marks=pytest.mark.slow if (backend, kind) == ("c", "regressor") else ())
    for backend in BACKENDS for kind in ("inverse_dynamics", "bias", "forward_dynamics", "regressor")])
def test_overflowing_results_raise_numeric_overflow_error(backend, kind):
    robot = rd.load("rx90")
    f = rd.compile(robot, kind, backend=backend)
    rng = np.random.default_rng(2)
    q, qd, x = rng.uniform(-1, 1, (3, 9, robot.n))
    big = qd.copy()
    big[6] = 1e155  # squared in the centrifugal terms: inf
    args = (q, big) if kind == "bias" else (q, big, x)
    canonical = f.kind  # the message names the kind by its public function name (bias: bias_torques)
    assert canonical == {"bias": "bias_torques"}.get(kind, kind)
    with pytest.raises(rd.NumericOverflowError, match=rf"compiled {canonical} of robot 'rx90': the result is not finite"):
        f(*args)
    with pytest.raises(rd.NumericOverflowError):
        f(*(a[6] for a in args))  # one state
    with pytest.raises(rd.NumericOverflowError):
        f(*(a[4:8] for a in args))  # one lane block
    ok = tuple(a[:6] for a in ((q, qd) if kind == "bias" else (q, qd, x)))
    assert np.all(np.isfinite(f(*ok)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_huge_gravity_and_wrenches_raise(backend):
    robot = rd.load("puma560")
    f = rd.compile(robot, "inverse_dynamics", backend=backend)
    q = np.full(robot.n, 0.3)
    with pytest.raises(rd.NumericOverflowError):
        f(q, q, q, gravity=np.array([1e308, -1e308, 1e308]))
    W = np.full((robot.nf, 6), 1e308)
    with pytest.raises(rd.NumericOverflowError):
        rd.inverse_dynamics(robot, q, q, q, wrenches=W)
    with pytest.raises(rd.NumericOverflowError):
        f(q, q, q, wrenches=W)
    assert np.all(np.isfinite(f(q, q, q, wrenches=np.ones((robot.nf, 6)))))


@needs_compiler
def test_the_c_entry_declines_a_failed_check_and_serves_good_states():
    robot = rd.load("rx90")
    f = rd.compile(robot, "inverse_dynamics")
    if f._entry is None:
        pytest.skip("no Python/NumPy headers: no C entry")
    q = np.full(6, 0.3)
    assert f._entry.fast(q, q, q) is not None
    assert f._entry.fast(q, np.full(6, 1e155), q) is None  # an overflow goes to the general path, which raises
    with pytest.raises(rd.NumericOverflowError):
        f(q, np.full(6, 1e155), q)
    assert isinstance(f, CompiledModel)


@needs_compiler
def test_large_model_bodies_check_too(monkeypatch):
    """Above c_code.LANES_LIMIT the body is cut in functions (forced here): the pivot checks cross the cuts."""
    monkeypatch.setattr(c_code, "LANES_LIMIT", 0)
    monkeypatch.setattr(build, "LARGE_SOURCE", 0)
    monkeypatch.setattr(c_code, "CHUNK", 25)
    robot = rd.loads(SINGULAR_AT_Q)
    f = rd.compile(robot, "forward_dynamics")
    q, qd, tau = _states(6, 0.0)
    np.testing.assert_allclose(f(q[:-1], qd[:-1], tau[:-1]), rd.forward_dynamics(robot, q[:-1], qd[:-1], tau[:-1]),
                               rtol=1e-10, atol=1e-10)
    with pytest.raises(rd.ModelError, match="joint j2"):
        f(q, qd, tau)
    g = rd.compile(rd.load("rx90"), "inverse_dynamics")
    with pytest.raises(rd.NumericOverflowError):
        g(np.zeros(6), np.full(6, 1e155), np.zeros(6))


def test_status_codes_are_documented_in_the_header():
    m = rd.customized_model(rd.loads(SINGULAR_AT_Q), "forward_dynamics")
    h = c_code.header(m, "ddm")
    assert "int ddm(const double *q" in h
    # the recursive algorithm tests the pivots from the last joint down; joint 3's, a constant of the robot
    # (its point mass), is tested when the model is generated, not at each call
    assert f"{c_code.SINGULAR} + k where the pivot of joint k (0-based: 0 j2, 1 j1)" in h
    assert str(c_code.OVERFLOW) in h
    assert [name for name, _, _ in m.checks] == ["j2", "j1"]  # in the order the backward pass computes them
