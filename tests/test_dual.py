"""Dual numbers (robodyn.dual): arithmetic against complex-step derivatives, tangent windows, and the Newton–Euler
recursion run on them (robodyn's NumPy inverse-dynamics derivatives) against complex step and Pinocchio."""

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn.dual import DUAL, Dual, tangent, value, variable
from robodyn.dynamics.friction_models import frictionless
from robodyn.dynamics.newton_euler import rnea_components
from robodyn.spatial import NUMPY
from tests.support.pin_bridge import PinRobot
from tests.support.random_robots import random_robot, random_state

H = 1e-30  # complex step: exact to round-off


def _expression(x, y, a, be):
    """Every operation of a dual, with floats and arrays on either side; ``be`` gives cos, sin, exp."""
    u = x * y - 2.5 * x + y * a - (a - x) + (1.5 - y) / (x * x + 2.0)
    w = -u + be.cos(x) * be.sin(y) - a * be.exp(0.3 * y) / (2.0 + be.sin(x) * be.sin(x))
    return w / (3.0 + be.cos(u)) + x / 4.0 - 1.0 / (y * y + 1.5) + 2.0 + u * 0.5 - 3.0 * w


def _columns(x):
    return list(np.moveaxis(np.asarray(x), -1, 0))


@settings(max_examples=25, deadline=None)
@given(seed_=st.integers(0, 2**31 - 1), batch=st.sampled_from([None, 1, 5]), dx=st.integers(0, 4),
       dy=st.integers(0, 4))
def test_arithmetic_equals_complex_step(seed_, batch, dx, dy):
    """Value and tangent of an expression using + − × / and unary minus of duals with floats, arrays and duals
    (any two directions: equal, disjoint, nested windows), and DUAL's cos, sin, exp: the values equal the plain
    evaluation, the tangents the complex-step derivatives."""
    rng = np.random.default_rng(seed_)
    shape = () if batch is None else (batch,)
    x0, y0, a = (rng.uniform(-2, 2, shape) for _ in range(3))
    if batch is None:
        x0, y0, a = float(x0), float(y0), float(a)
    out = _expression(variable(x0, dx), variable(y0, dy), a, DUAL)
    assert type(out) is Dual
    plain = _expression(x0, y0, a, NUMPY)
    np.testing.assert_allclose(out.value, plain, rtol=1e-14, atol=1e-14)
    D = max(dx, dy) + 2
    full = tangent(out, D)
    assert full.shape == (D,) + shape
    expected = np.zeros((D,) + shape)
    expected[dx] += _expression(x0 + 1j * H, y0 + 0j, a, NUMPY).imag / H
    expected[dy] += _expression(x0 + 0j, y0 + 1j * H, a, NUMPY).imag / H
    np.testing.assert_allclose(full, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())


def test_windows_and_operands():
    """Windows widen to the union (overlapping, nested, disjoint); operands are never modified; arrays on the left
    give duals; sign is a constant; tangent()/value() of constants."""
    x = Dual(np.array([1.0, 2.0]), np.array([[1.0, 2.0], [3.0, 4.0]]), 0)  # directions 0, 1
    y = Dual(np.array([3.0, 5.0]), np.array([[5.0, 6.0], [7.0, 8.0]]), 1)  # directions 1, 2
    keep = (x.tangent.copy(), y.tangent.copy())
    s, d, p = x + y, x - y, x * y
    for r in (s, d, p):
        assert r.start == 0 and r.tangent.shape == (3, 2)
    np.testing.assert_array_equal(tangent(s, 4), [[1, 2], [8, 10], [7, 8], [0, 0]])
    np.testing.assert_array_equal(tangent(d, 3), [[1, 2], [-2, -2], [-7, -8]])
    np.testing.assert_array_equal(tangent(p, 3), [[3, 10], [9 + 5, 20 + 12], [7, 16]])
    np.testing.assert_array_equal(x.tangent, keep[0])
    np.testing.assert_array_equal(y.tangent, keep[1])
    z = variable(np.array([2.0, 4.0]), 5)  # disjoint from x
    np.testing.assert_array_equal(tangent(x * z, 6)[[0, 1, 5]], [[2, 8], [6, 16], [1, 2]])
    for r, sign in ((x + z, 1), (x - z, -1), (z - x, -1)):
        full = tangent(r, 6)
        assert r.start == 0 and len(r.tangent) == 6
        np.testing.assert_array_equal(full[2:5], np.zeros((3, 2)))  # the directions between the two windows
        np.testing.assert_array_equal(full[5] * full[0], sign * np.array([1.0, 2.0]))
    np.testing.assert_array_equal(tangent(y - x, 3), [[-1, -2], [2, 2], [7, 8]])  # overlapping windows
    left = np.array([2.0, 3.0]) * x
    assert type(left) is Dual and np.array_equal(left.tangent, [[2, 6], [6, 12]])
    assert type(np.array([1.0, 1.0]) - x) is Dual and type(np.array([1.0, 1.0]) / x) is Dual
    assert np.array_equal(DUAL.sign(-x), [-1.0, -1.0]) and DUAL.sign(-2.0) == -1.0
    assert np.array_equal(tangent(3.0, 4), np.zeros(4)) and value(3.0) == 3.0 and value(x) is x.value
    assert DUAL.cos(0.0) == 1.0 and "directions 0..1" in repr(x)


def _dual_rnea(robot, q, qd, qdd, g, wr=None):
    """(τ, ∂τ/∂q, ∂τ/∂q̇) of rnea_components on duals, directions interleaved (2k = q_k, 2k + 1 = q̇_k)."""
    n = robot.n
    qs = [variable(x, 2 * k) for k, x in enumerate(_columns(q))]
    qds = [variable(x, 2 * k + 1) for k, x in enumerate(_columns(qd))]
    tau = rnea_components(robot, qs, qds, _columns(qdd), tuple(g), wr, DUAL)
    full = np.stack([tangent(t, 2 * n) * np.ones(np.shape(q)[:-1]) for t in tau], -1)  # (2n, ..., n)
    return np.stack([value(t) * np.ones(np.shape(q)[:-1]) for t in tau], -1), full[0::2], full[1::2]


@settings(max_examples=15, deadline=None)
@given(seed_=st.integers(0, 2**31 - 1), tree=st.booleans(), fixed=st.booleans())
def test_newton_euler_on_duals_equals_complex_step(seed_, tree, fixed):
    """rnea_components on duals: its values are the float recursion's bits, its tangents the complex-step
    derivatives of the same recursion (random serial and branched robots, revolute, prismatic, fixed frames,
    wrenches)."""
    robot = random_robot(seed_, tree=tree, fixed=fixed)
    n, nf = robot.n, robot.nf
    q, qd, qdd = random_state(robot, seed_, (3,))
    W = np.random.default_rng(seed_).normal(size=(3, nf, 6))
    wr = _columns(W.reshape(3, 6 * nf))
    tau, dq, dqd = _dual_rnea(robot, q, qd, qdd, robot.gravity, wr)
    plain = np.stack(np.broadcast_arrays(*rnea_components(robot, _columns(q), _columns(qd), _columns(qdd),
                                                          tuple(robot.gravity), wr)), -1)
    np.testing.assert_array_equal(tau, plain)
    for k in range(n):
        for cols, d in (((q + 1j * H * np.eye(n)[k], qd + 0j), dq), ((q + 0j, qd + 1j * H * np.eye(n)[k]), dqd)):
            cs = np.stack(np.broadcast_arrays(*rnea_components(robot, *map(_columns, cols), _columns(qdd),
                                                               tuple(robot.gravity), wr)), -1).imag / H
            assert np.abs(d[k] - cs).max() <= 1e-12 * max(1.0, np.abs(cs).max())


@settings(max_examples=10, deadline=None)
@given(seed_=st.integers(0, 2**31 - 1), tree=st.booleans())
def test_numpy_derivatives_match_pinocchio_batch_and_float32(seed_, tree):
    """rd.inverse_dynamics_derivatives with ROBODYN_NATIVE=0 (the dual-number path) against Pinocchio's
    computeRNEADerivatives (wrenches, another gravity); a batch equals its samples one by one; float32 input is
    computed in float64 on the rounded values and returned as float32; the compiled kernel, where available, agrees to 1e-12."""
    robot = frictionless(random_robot(seed_, tree=tree, fixed=True))
    pr = PinRobot(robot)
    q, qd, qdd = random_state(robot, seed_, (3,))
    rng = np.random.default_rng(seed_)
    W = rng.normal(size=(3, robot.nf, 6))
    g = rng.normal(size=3) * 9.81
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ROBODYN_NATIVE", "0")
        dq, dqd = rd.inverse_dynamics_derivatives(robot, q, qd, qdd, wrenches=W, gravity=g)
        ones = [rd.inverse_dynamics_derivatives(robot, q[s], qd[s], qdd[s], wrenches=W[s], gravity=g) for s in range(3)]
        f32 = [x.astype(np.float32) for x in (q, qd, qdd)]
        d32 = rd.inverse_dynamics_derivatives(robot, *f32, wrenches=W, gravity=g)
        d64 = rd.inverse_dynamics_derivatives(robot, *(x.astype(float) for x in f32), wrenches=W, gravity=g)
    native = rd.inverse_dynamics_derivatives(robot, q, qd, qdd, wrenches=W, gravity=g)
    assert dq.shape == dqd.shape == (3, robot.n, robot.n)
    model = pr.model.copy()
    model.gravity.linear = g
    data = model.createData()
    ix = np.ix_(pr.perm, pr.perm)
    for s in range(3):
        pq, pv, _ = pin.computeRNEADerivatives(model, data, pr._in(q[s]), pr._in(qd[s]), pr._in(qdd[s]),
                                               pr.fext(W[s]))
        pq, pv = np.asarray(pq)[ix], np.asarray(pv)[ix]
        scale = max(np.abs(pq).max(), np.abs(pv).max())
        assert np.abs(dq[s] - pq).max() <= 1e-9 * scale and np.abs(dqd[s] - pv).max() <= 1e-9 * scale
        assert np.abs(ones[s][0] - dq[s]).max() <= 1e-14 * scale and np.abs(ones[s][1] - dqd[s]).max() <= 1e-14 * scale
    for a, b in zip(d32, d64):
        assert a.dtype == np.float32  # float32 in, float32 out (computed in float64 on the rounded inputs)
        np.testing.assert_array_equal(a, b.astype(np.float32))
    scale = max(np.abs(dq).max(), np.abs(dqd).max())
    assert np.abs(native[0] - dq).max() <= 1e-12 * scale and np.abs(native[1] - dqd).max() <= 1e-12 * scale
