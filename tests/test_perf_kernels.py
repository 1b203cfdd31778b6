"""robodyn.native's ∂Γ/∂q, ∂Γ/∂q̇ kernel: equal to the NumPy forward-mode recursion and to finite differences,
per sample as in a batch, bit for bit for any thread count, and the public functions' routes through it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import robodyn as rd
from robodyn import native
from robodyn.dynamics import executor
from robodyn.dynamics.friction_models import frictionless
from tests.support.kernels import needs_kernels, numpy_path
from tests.support.random_robots import random_robot

pytestmark = needs_kernels


def rel(a, b):
    return np.max(np.abs(np.asarray(a) - np.asarray(b)), initial=0.0) / max(1.0, np.max(np.abs(b), initial=0.0))


def numpy_derivatives(robot, q, qd, qdd, gravity, wrenches):
    """(..., 2, n, n) from the NumPy recursion (ROBODYN_NATIVE=0, no friction), the reference of the C kernel."""
    dq, dqd = numpy_path(rd.inverse_dynamics_derivatives, frictionless(robot), q, qd, qdd, wrenches=wrenches,
                         gravity=gravity)
    return np.stack([dq, dqd], -3)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), tree=st.booleans(), fixed=st.booleans(), wrenched=st.booleans())
def test_kernel_equals_numpy_recursion(seed, tree, fixed, wrenched):
    """Serial and branched robots, revolute, prismatic and fixed frames, gravity and wrenches."""
    robot = random_robot(seed, tree=tree, fixed=fixed)
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-2, 2, (3, 6, robot.n))
    g = rng.normal(size=3) * 9.81
    W = rng.normal(size=(6, robot.nf, 6)) if wrenched else None
    out = native.inverse_dynamics_derivatives(robot, q, qd, qdd, wrenches=W, gravity=g)
    assert out.shape == (6, 2, robot.n, robot.n)
    assert rel(out, numpy_derivatives(robot, q, qd, qdd, g, W)) < 1e-12
    # one state alone (its directions in the lanes) gives the bits of its row in the batch
    one = native.inverse_dynamics_derivatives(robot, q[5], qd[5], qdd[5], gravity=g,
                                              wrenches=None if W is None else W[5])
    np.testing.assert_array_equal(one, out[5])
    fd = native.forward_dynamics_derivatives(robot, q[:5], qd[:5], qdd[:5], wrenches=None if W is None else W[:5],
                                             gravity=g)
    np.testing.assert_array_equal(native.forward_dynamics_derivatives(
        robot, q[4], qd[4], qdd[4], wrenches=None if W is None else W[4], gravity=g), fd[4])


@pytest.mark.parametrize("seed, tree", [(3, False), (8, True), (21, True)])
def test_kernel_equals_central_differences(seed, tree):
    """Independent of the recursion's derivation: central differences of the compiled inverse dynamics."""
    robot = frictionless(random_robot(seed, tree=tree, fixed=True))
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-1.5, 1.5, (3, robot.n))
    out = native.inverse_dynamics_derivatives(robot, q, qd, qdd)
    h, n = 1e-6, robot.n
    fd = np.zeros((2, n, n))
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        fd[0][:, k] = (native.inverse_dynamics(robot, q + e, qd, qdd) - native.inverse_dynamics(robot, q - e, qd, qdd)) / (2 * h)
        fd[1][:, k] = (native.inverse_dynamics(robot, q, qd + e, qdd) - native.inverse_dynamics(robot, q, qd - e, qdd)) / (2 * h)
    assert rel(out, fd) < 1e-7


def test_batch_equals_per_sample_and_threads_are_bitwise_identical():
    robot = random_robot(5, nf=12, tree=True, fixed=True)
    rng = np.random.default_rng(2)
    q, qd, qdd = rng.uniform(-2, 2, (3, 103, robot.n))
    one = native.inverse_dynamics_derivatives(robot, q, qd, qdd, threads=1)
    np.testing.assert_array_equal(native.inverse_dynamics_derivatives(robot, q, qd, qdd, threads=2), one)
    np.testing.assert_array_equal(native.inverse_dynamics_derivatives(robot, q, qd, qdd, threads=5), one)
    for k in (0, 50, 102):  # a sample alone, through the batch entry and the single-state entry
        np.testing.assert_array_equal(native.inverse_dynamics_derivatives(robot, q[k], qd[k], qdd[k]), one[k])
        # one state puts its directions in the lanes instead of the states: the same operations, the same bits
        single = native.single_state(frictionless(robot), "inverse_dynamics_derivatives", q[k], qd[k], qdd[k])
        assert single is not None
        np.testing.assert_array_equal(single, one[k])
    assert native.inverse_dynamics_derivatives(robot, q[:0], qd[:0], qdd[:0]).shape == (0, 2, robot.n, robot.n)


def test_public_functions_equal_the_numpy_path():
    """rd.inverse_dynamics_derivatives / forward_dynamics_derivatives (friction slope, one state and batches,
    gravity and wrenches) on the compiled kernel and with ROBODYN_NATIVE=0 (the NumPy recursion)."""
    robot = random_robot(11, tree=True, fixed=True)
    rng = np.random.default_rng(4)
    q, qd, qdd = rng.uniform(-2, 2, (3, 9, robot.n))
    W = rng.normal(size=(9, robot.nf, 6))
    g = np.array([0.5, -1.0, -9.0])
    calls = [
        lambda: rd.inverse_dynamics_derivatives(robot, q, qd, qdd),
        lambda: rd.inverse_dynamics_derivatives(robot, q[3], qd[3], qdd[3]),
        lambda: rd.inverse_dynamics_derivatives(robot, q, qd, qdd, wrenches=W, gravity=g),
        lambda: rd.inverse_dynamics_derivatives(robot, q[3], qd[3], qdd[3], friction="smooth"),
        lambda: rd.forward_dynamics_derivatives(robot, q, qd, qdd),
        lambda: rd.forward_dynamics_derivatives(robot, q[2], qd[2], qdd[2]),
    ]
    compiled = [c() for c in calls]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ROBODYN_NATIVE", "0")
        assert not executor.takes_derivatives(np.float64)
        reference = [c() for c in calls]
    for got, ref in zip(compiled, reference):
        assert len(got) == len(ref)
        for a, b in zip(got, ref):
            assert a.shape == b.shape
            assert rel(a, b) < 1e-11
    assert executor.takes_derivatives(np.float64) and not executor.takes_derivatives(np.float32)


def test_single_state_fast_path_equals_batch():
    robot = rd.load("puma560")
    rng = np.random.default_rng(7)
    q, qd, qdd = rng.uniform(-2, 2, (3, 5, robot.n))
    batch = rd.inverse_dynamics_derivatives(robot, q, qd, qdd)
    for k in range(5):
        one = rd.inverse_dynamics_derivatives(robot, q[k], qd[k], qdd[k])
        assert rel(one[0], batch[0][k]) < 1e-14 and rel(one[1], batch[1][k]) < 1e-14
        fd = rd.forward_dynamics_derivatives(robot, q[k], qd[k], qdd[k])
        fb = rd.forward_dynamics_derivatives(robot, q[k:k + 1], qd[k:k + 1], qdd[k:k + 1])
        for a, b in zip(fd, fb):
            assert rel(a, b[0]) < 1e-12


def test_bad_input_keeps_its_messages():
    robot = rd.load("puma560")
    q = np.zeros(6)
    with pytest.raises(rd.InputError):
        rd.inverse_dynamics_derivatives(robot, np.zeros(5), q, q)
    with pytest.raises(rd.InputError):
        rd.inverse_dynamics_derivatives(robot, np.full(6, np.nan), q, q)
    with pytest.raises(rd.InputError):
        rd.inverse_dynamics_derivatives("puma", q, q, q)


def assert_direct_dynamics_equal_numpy(robot, q, qd, tau, W, g, out):
    """The compiled ∂q̈/∂q, ∂q̈/∂q̇, A⁻¹ (``out`` (..., 3, n, n)) against A⁻¹ A = 1 and the NumPy recursions with
    ROBODYN_NATIVE=0, errors scaled by cond(A) (the solve amplifies rounding by it)."""
    A = rd.inertia_matrix(robot, q)
    cond = np.linalg.cond(A).max()
    np.testing.assert_allclose(out[:, 2] @ A, np.broadcast_to(np.eye(robot.n), A.shape), atol=1e-12 * cond)
    ref = numpy_path(rd.forward_dynamics_derivatives, robot, q, qd, tau, wrenches=W, gravity=g)
    for k in range(3):
        assert rel(out[:, k], ref[k]) < 1e-13 * cond


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), tree=st.booleans(), wrenched=st.booleans())
def test_direct_dynamics_kernel_equals_numpy_path(seed, tree, wrenched):
    """∂q̈/∂q, ∂q̈/∂q̇ (rigid), A⁻¹ in one compiled pass vs the NumPy recursions with ROBODYN_NATIVE=0 (errors
    scaled by cond(A): the solve amplifies rounding by it), and A⁻¹ A = 1."""
    robot = frictionless(random_robot(seed, tree=tree, fixed=True))
    rng = np.random.default_rng(seed)
    q, qd, tau = rng.uniform(-2, 2, (3, 5, robot.n))
    g = rng.normal(size=3) * 9.81
    W = rng.normal(size=(5, robot.nf, 6)) if wrenched else None
    out = native.forward_dynamics_derivatives(robot, q, qd, tau, wrenches=W, gravity=g)
    assert_direct_dynamics_equal_numpy(robot, q, qd, tau, W, g, out)


@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 10_000), tree=st.booleans(), wrenched=st.booleans())
def test_large_robots_equal_numpy_recursions(seed, tree, wrenched):
    """Chains and trees of 50-53 frames (revolute, prismatic, a fixed frame): ∂Γ (a chain's rows written straight
    into the results) and ∂q̈ with A⁻¹ applied by the articulated-body recursion (from 24 joints on) vs the NumPy
    recursions, and one state alone gives the bits of its row in the batch."""
    robot = frictionless(random_robot(seed, nf=50 + seed % 4, tree=tree, fixed=True))
    rng = np.random.default_rng(seed)
    q, qd, x = rng.uniform(-2, 2, (3, 3, robot.n))
    g = rng.normal(size=3) * 9.81
    W = rng.normal(size=(3, robot.nf, 6)) if wrenched else None
    out = native.inverse_dynamics_derivatives(robot, q, qd, x, wrenches=W, gravity=g)
    assert rel(out, numpy_derivatives(robot, q, qd, x, g, W)) < 1e-12
    fd = native.forward_dynamics_derivatives(robot, q, qd, x, wrenches=W, gravity=g)
    assert_direct_dynamics_equal_numpy(robot, q, qd, x, W, g, fd)
    w = None if W is None else W[2]
    np.testing.assert_array_equal(native.inverse_dynamics_derivatives(robot, q[2], qd[2], x[2], wrenches=w,
                                                                      gravity=g), out[2])
    np.testing.assert_array_equal(native.forward_dynamics_derivatives(robot, q[2], qd[2], x[2], wrenches=w,
                                                                      gravity=g), fd[2])


@pytest.mark.parametrize("nf, tree", [(24, False), (25, False), (31, True), (52, False)])
def test_direct_dynamics_full_blocks_with_friction(nf, tree):
    """Nine states (two full blocks of four, each written into the states' rows 4 x 4, and a partial one), the
    friction slope F_v on ∂Γ/∂q̇'s diagonal, A⁻¹ by the Cholesky factor (23 joints: one frame is fixed) and by
    the articulated-body recursion (from 24 joints on): the NumPy path (errors scaled by cond(A)), and each state
    alone gives the bits of its row in the batch."""
    robot = random_robot(nf, nf=nf, tree=tree, fixed=True)
    rng = np.random.default_rng(nf)
    q, qd, tau = rng.uniform(-2, 2, (3, 9, robot.n))
    qd += np.sign(qd) * 0.5  # the friction slope away from q̇ = 0
    got = native.forward_dynamics_derivatives(robot, q, qd, tau)
    ref = numpy_path(rd.forward_dynamics_derivatives, robot, q, qd, tau)
    cond = np.linalg.cond(rd.inertia_matrix(robot, q)).max()
    for k in range(3):
        assert rel(got[:, k], ref[k]) < 1e-13 * cond
    for s in (3, 8):
        np.testing.assert_array_equal(native.forward_dynamics_derivatives(robot, q[s], qd[s], tau[s]), got[s])


def test_direct_dynamics_derivatives_equal_central_differences():
    robot = random_robot(17, tree=True, fixed=True)  # friction: the slope term of ∂q̈/∂q̇ away from q̇ = 0
    rng = np.random.default_rng(3)
    q, qd, tau = rng.uniform(-1.5, 1.5, (3, robot.n))
    qd += np.sign(qd) * 0.5
    dq, dqd, dtau = rd.forward_dynamics_derivatives(robot, q, qd, tau)
    h, n = 1e-6, robot.n
    for got, which in ((dq, 0), (dqd, 1), (dtau, 2)):
        fd = np.zeros((n, n))
        for k in range(n):
            plus, minus = [q.copy(), qd.copy(), tau.copy()], [q.copy(), qd.copy(), tau.copy()]
            plus[which][k] += h
            minus[which][k] -= h
            fd[:, k] = (rd.forward_dynamics(robot, *plus) - rd.forward_dynamics(robot, *minus)) / (2 * h)
        assert rel(got, fd) < 1e-6


def test_direct_dynamics_threads_and_single_state():
    robot = random_robot(9, nf=10, tree=True)
    rng = np.random.default_rng(5)
    q, qd, tau = rng.uniform(-2, 2, (3, 37, robot.n))
    one = native.forward_dynamics_derivatives(robot, q, qd, tau, threads=1)
    np.testing.assert_array_equal(native.forward_dynamics_derivatives(robot, q, qd, tau, threads=3), one)
    for k in (0, 17, 36):  # one state: its right-hand sides (and directions) in the lanes, the same bits
        np.testing.assert_array_equal(native.forward_dynamics_derivatives(robot, q[k], qd[k], tau[k]), one[k])
    batch = rd.forward_dynamics_derivatives(robot, q, qd, tau)
    for k in (0, 36):
        single = rd.forward_dynamics_derivatives(robot, q[k], qd[k], tau[k])
        for a, b in zip(single, batch):
            assert rel(a, b[k]) < 1e-14


def test_friction_slope_with_and_without_a_stribeck_term():
    """The kernels put F_v on the diagonal (friction=True); a Stribeck term's slope is added by NumPy in
    rd.*_derivatives (the kernels refuse it), equal to the NumPy path."""
    robot = rd.load("rx90")
    jf = robot.joint_frames
    Fst = np.zeros(robot.nf)
    Fst[jf] = 1.5 * robot.Fc[jf] + 0.3
    stribeck = robot.replace(Fst=Fst, kst=np.full(robot.nf, 2.0), Bst=np.full(robot.nf, 1.0))
    rng = np.random.default_rng(8)
    q, qd, x = rng.uniform(-2, 2, (3, 6, robot.n))
    with_f = native.inverse_dynamics_derivatives(robot, q, qd, x, friction=True)
    without = native.inverse_dynamics_derivatives(robot, q, qd, x)
    np.testing.assert_array_equal(with_f[:, 0], without[:, 0])
    np.testing.assert_allclose(with_f[:, 1] - without[:, 1], np.broadcast_to(np.diag(robot.Fv[jf]), without[:, 1].shape),
                               atol=1e-12)
    with pytest.raises(rd.ModelError, match="Stribeck"):
        native.forward_dynamics_derivatives(stribeck, q, qd, x)
    for r in (robot, stribeck):
        got = (rd.inverse_dynamics_derivatives(r, q, qd, x), rd.forward_dynamics_derivatives(r, q, qd, x),
               rd.forward_dynamics_derivatives(r, q[0], qd[0], x[0]), rd.inverse_dynamics_derivatives(r, q[1], qd[1], x[1]))
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("ROBODYN_NATIVE", "0")
            ref = (rd.inverse_dynamics_derivatives(r, q, qd, x), rd.forward_dynamics_derivatives(r, q, qd, x),
                   rd.forward_dynamics_derivatives(r, q[0], qd[0], x[0]), rd.inverse_dynamics_derivatives(r, q[1], qd[1], x[1]))
        cond = np.linalg.cond(rd.inertia_matrix(r, q)).max()
        for g, f in zip(got, ref):
            for a, b in zip(g, f):
                assert rel(a, b) < 1e-13 * cond
