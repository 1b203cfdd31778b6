"""``out=`` of rd.compile's callables (C and NumPy back ends): the result written into the caller's array, checked
on entry, nothing allocated for the result on the C path."""

import tracemalloc

import numpy as np
import pytest

import robodyn as rd
from robodyn.errors import InputError
from tests.support.kernels import needs_compiler

ROBOT = rd.load("puma560")
N = ROBOT.n
BACKENDS = [pytest.param("c", marks=needs_compiler), "numpy"]


def _stacked(result):
    """A derivative record's blocks stacked as the compiled model writes them."""
    return np.concatenate(list(result), -2) if isinstance(result, tuple) else np.asarray(result)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", ["inverse_dynamics", "inertia_matrix", "forward_dynamics_derivatives", "jacobian"])
def test_out_receives_the_result(backend, kind):
    f = rd.compile(ROBOT, kind, backend=backend)
    rng = np.random.default_rng(1)
    names = list(f.__signature__.parameters)[:len(f._joint)]
    for batch in ((), (3,), (2, 4)):
        args = [rng.uniform(-1, 1, batch + (N,)) for _ in names]
        expected = _stacked(f(*args))
        buffer = np.full(expected.shape, np.nan)
        got = f(*args, out=buffer)
        np.testing.assert_array_equal(buffer, expected)
        if isinstance(got, tuple):   # the record views the buffer's row blocks
            assert all(np.shares_memory(part, buffer) for part in got)
            np.testing.assert_array_equal(_stacked(got), expected)
        else:
            assert got is buffer
    low = [a.astype(np.float32) for a in args]
    buffer = np.empty(expected.shape, np.float32)
    np.testing.assert_array_equal(_stacked(f(*low, out=buffer)), _stacked(f(*low)))


@pytest.mark.parametrize("kind", ["inertia_matrix", "jacobian"])   # results of 288 bytes and more
@needs_compiler
def test_c_path_allocates_no_result(kind):
    """One state (the C entry) and a batch (the general path): the result's bytes are never allocated."""
    f = rd.compile(ROBOT, kind)
    rng = np.random.default_rng(2)
    count = len(f._joint)
    for batch in ((), (2000,)):
        args = [rng.uniform(-1, 1, batch + (N,)) for _ in range(count)]
        buffer = np.empty(np.shape(f(*args)))
        f(*args, out=buffer)
        tracemalloc.start()
        for _ in range(20):
            f(*args, out=buffer)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < buffer.nbytes / 2 if batch else peak < buffer.nbytes, (batch, peak)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_out_is_refused_before_anything_is_written(backend):
    f = rd.compile(ROBOT, "inertia_matrix", backend=backend)
    q = np.full(N, 0.3)
    wrong = {"a list": [[0.0] * N] * N, "shape": np.zeros((N, N, 1)), "dtype": np.zeros((N, N), np.float32),
             "layout": np.zeros((N, 2 * N))[:, ::2], "read-only": np.zeros((N, N))}
    wrong["read-only"].flags.writeable = False
    for bad in wrong.values():
        with pytest.raises(InputError, match="'out'"):
            f(q, out=bad)
    buffer = np.zeros((2 * N, N))
    with pytest.raises(InputError, match="shares memory with 'q'"):
        f(buffer[0], out=buffer[:N].reshape(N, N))


@pytest.mark.parametrize("backend", BACKENDS)
def test_errors_still_raised_with_out(backend):
    f = rd.compile(ROBOT, "inverse_dynamics", backend=backend)
    q = np.zeros(N)
    with pytest.raises(InputError, match="NaN"):
        f(np.full(N, np.nan), q, q, out=np.empty(N))
    with pytest.raises(InputError, match="'out'"):
        f(q, q, q, out=np.empty(N + 1))
