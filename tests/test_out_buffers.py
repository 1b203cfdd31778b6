"""``out=`` of the numeric functions: the result written into the caller's buffer, bit for bit the allocating call's
numbers on every path (robodyn.native's single-state and batch entries, NumPy, other methods), the buffer checked
on entry (shape, dtype, C order, writeable) with an InputError naming it, and no other result array made on the
native batch path."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from robodyn.dynamics import executor
from tests.support.kernels import needs_kernels
from tests.support.random_robots import random_robot

ROBOT = random_robot(17, nf=5, tree=True, prismatic=True, fixed=True)

#: name -> (f(q, qd, x, **kw), tail of one state's result)
CALLS = {
    "inverse_dynamics": (lambda q, qd, x, **kw: rd.inverse_dynamics(ROBOT, q, qd, x, **kw), (ROBOT.n,)),
    "gravity_torques": (lambda q, qd, x, **kw: rd.gravity_torques(ROBOT, q, **kw), (ROBOT.n,)),
    "inertia_matrix": (lambda q, qd, x, **kw: rd.inertia_matrix(ROBOT, q, **kw), (ROBOT.n, ROBOT.n)),
    "forward_dynamics": (lambda q, qd, x, **kw: rd.forward_dynamics(ROBOT, q, qd, x, **kw), (ROBOT.n,)),
    "regressor": (lambda q, qd, x, **kw: rd.regressor(ROBOT, q, qd, x, **kw), (ROBOT.n, 11 * ROBOT.nf + 3 * ROBOT.n)),
    "rigid regressor": (lambda q, qd, x, **kw: rd.regressor(ROBOT, q, qd, x, friction=False, **kw),
                        (ROBOT.n, 11 * ROBOT.nf)),
    "inverse_dynamics gibbs_appell": (
        lambda q, qd, x, **kw: rd.inverse_dynamics(ROBOT, q, qd, x, method="gibbs_appell", **kw), (ROBOT.n,)),
    "inertia_matrix walker_orin": (
        lambda q, qd, x, **kw: rd.inertia_matrix(ROBOT, q, method="walker_orin", **kw), (ROBOT.n, ROBOT.n)),
    "forward_dynamics cholesky": (
        lambda q, qd, x, **kw: rd.forward_dynamics(ROBOT, q, qd, x, method="cholesky", **kw), (ROBOT.n,)),
}
BATCHES = {"single": (), "small": (3,), "native": (executor.MIN_BATCH + 3,), "two axes": (2, executor.MIN_BATCH)}


def _states(batch, seed=3):
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-1.5, 1.5, batch + (ROBOT.n,)) for _ in range(3))


@pytest.mark.parametrize("batch", BATCHES.values(), ids=BATCHES)
@pytest.mark.parametrize("name", CALLS)
def test_out_holds_the_allocating_result_bit_for_bit(name, batch):
    f, tail = CALLS[name]
    q, qd, x = _states(batch)
    expected = f(q, qd, x)
    out = np.full(batch + tail, np.nan)
    got = f(q, qd, x, out=out)
    assert got is out
    np.testing.assert_array_equal(out, expected)
    assert np.all(np.isfinite(out))


def test_broadcast_inputs_and_gravity_write_the_buffer_too():
    q, qd, x = _states((executor.MIN_BATCH,))
    g = np.array([0.3, -0.2, -9.7])
    for args in ((q, qd[0], x), (q, qd, x[:1])):
        expected = rd.inverse_dynamics(ROBOT, *args, gravity=g)
        out = np.empty_like(expected)
        assert rd.inverse_dynamics(ROBOT, *args, gravity=g, out=out) is out
        np.testing.assert_array_equal(out, expected)


def test_float32_inputs_take_a_float32_buffer():
    q, qd, x = (a.astype(np.float32) for a in _states((4,)))
    expected = rd.inverse_dynamics(ROBOT, q, qd, x)
    out = np.empty((4, ROBOT.n), np.float32)
    np.testing.assert_array_equal(rd.inverse_dynamics(ROBOT, q, qd, x, out=out), expected)
    with pytest.raises(rd.InputError, match="'out'.*float32"):
        rd.inverse_dynamics(ROBOT, q, qd, x, out=np.empty((4, ROBOT.n)))


BAD = {
    "shape": lambda shape: np.empty(shape[:-1] + (shape[-1] + 1,)),
    "size only": lambda shape: np.empty((1,) + shape),  # the right number of doubles in another shape
    "dtype": lambda shape: np.empty(shape, np.float32),
    "order": lambda shape: np.empty(shape[::-1]).T if len(shape) > 1 else np.empty(shape + (2,))[..., 0],
    "read-only": lambda shape: np.broadcast_to(np.empty(shape[-1:]), shape),
    "list": lambda shape: np.empty(shape).tolist(),
}


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("batch", BATCHES.values(), ids=BATCHES)
@pytest.mark.parametrize("name", ["inverse_dynamics", "inertia_matrix", "regressor", "forward_dynamics cholesky"])
def test_a_buffer_that_does_not_fit_is_an_input_error_naming_it(name, batch, bad):
    f, tail = CALLS[name]
    q, qd, x = _states(batch)
    out = BAD[bad](batch + tail)
    before = np.array(out, copy=True)
    with pytest.raises(rd.InputError, match="argument 'out'.*give a writeable C-contiguous float64 array of shape"):
        f(q, qd, x, out=out)
    np.testing.assert_array_equal(np.asarray(out), before)  # untouched


def test_dask_and_jax_arrays_take_no_out():
    da = pytest.importorskip("dask.array")
    q, qd, x = _states((8,))
    with pytest.raises(rd.InputError, match="out= takes NumPy arrays"):
        rd.inverse_dynamics(ROBOT, da.from_array(q), qd, x, out=np.empty((8, ROBOT.n)))


@needs_kernels
def test_the_native_batch_makes_no_result_array(monkeypatch):
    """On the kernels' batch path the buffer is the only result array: no np.empty / np.zeros of the result's size."""
    q, qd, x = _states((executor.MIN_BATCH,))
    out = np.empty((executor.MIN_BATCH, ROBOT.n))
    rd.inverse_dynamics(ROBOT, q, qd, x, out=out)  # bound
    made = []
    for name in ("empty", "zeros"):
        real = getattr(np, name)
        monkeypatch.setattr(np, name, lambda shape, *a, real=real, **k: made.append(shape) or real(shape, *a, **k))
    assert rd.inverse_dynamics(ROBOT, q, qd, x, out=out) is out
    assert made == []


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_batch_with_nan_in_gravity_or_a_state_names_the_argument(bad):
    """The kernels' batch entry declines non-finite arguments: the general path names them."""
    q, qd, x = _states((executor.MIN_BATCH + 9,))
    with pytest.raises(rd.InputError, match="gravity"):
        rd.inverse_dynamics(ROBOT, q, qd, x, gravity=np.array([0.0, bad, -9.81]))
    qd[7, 1] = bad
    with pytest.raises(rd.InputError, match="'qd' contains NaN or inf"):
        rd.inverse_dynamics(ROBOT, q, qd, x, out=np.empty((executor.MIN_BATCH + 9, ROBOT.n)))
