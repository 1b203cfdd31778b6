"""The kernels' C function ``bound`` (robodyn.native._bound): the executor's single-state entry of a fixed or free-flyer
robot with its Python run bound behind it.  One 1-D state runs the entry without a Python frame; every other call,
and every call the entry declines, goes to the Python run.  Whichever path a call takes, its result is the Python
run's, bit for bit (or None where the run declines too)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn import native
from robodyn.dynamics import floating as fl
from tests.support.floating import random_floating, random_free_state
from tests.support.kernels import needs_kernels
from tests.support.random_robots import random_robot

pytestmark = needs_kernels

FIXED = ("inverse_dynamics", "bias_torques", "gravity_torques", "inertia_matrix", "forward_dynamics",
         "inverse_dynamics_derivatives", "forward_dynamics_derivatives")
FLOATING = ("inverse_dynamics", "inertia_matrix", "forward_dynamics")


def _bound_or_skip(run):
    if getattr(native._module(), "bound", None) is None:
        pytest.skip("the kernels were built without NumPy's headers: the Python run serves single states")
    assert isinstance(run, functools.partial) and run.func is native._module().bound
    return run, run.args[0]


def _c_alone(bound):
    """``bound`` with a Python run that fails the test: a call that reaches it was not served in C."""
    def python(*args):
        raise AssertionError("one float64 state went to the Python run")

    return functools.partial(bound.func, python, *bound.args[1:])


def _same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


def _calls(state, shape):
    """(arguments, shape of out or None) of calls ``run(q, b, c, gravity, out, friction, least, fast)``: the 1-D
    state, into out, with gravity, trig="fast", and what the C path hands to the Python run (a wrong out, a batch,
    float32, NaN, a list)."""
    q, b, c = state
    nan = q.copy()
    nan[-1] = np.nan
    two = [None if x is None else np.stack([x, x]) for x in state]
    yield (q, b, c, None, None, True, 0, False), None
    yield (q, b, c, None, None, True, 0, False), shape
    yield (q, b, c, np.array([0.3, -0.2, -9.0]), None, True, 0, False), None
    yield (q, b, c, None, None, True, 0, True), None
    yield (q, b, c, None, None, True, 1, False), (1,) + shape  # a wrong out: (1, ...) for one state
    yield (*two, None, None, True, 1, False), None
    yield (q.astype(np.float32), b, c, None, None, True, 0, False), None
    yield (nan, b, c, None, None, True, 0, False), None
    yield (list(q), b, c, None, None, True, 0, False), None


def _assert_the_paths_agree(bound, python, calls, kind):
    """Each call through ``bound`` and through the Python run alone, each into its own out where one is given: the
    same result bit for bit, or both None; a result written into out is that out."""
    for args, shape in calls:
        outs = (None, None) if shape is None else (np.empty(shape), np.empty(shape))
        got, want = (run(*args[:4], out, *args[5:]) for run, out in zip((bound, python), outs))
        assert _same(got, want), (kind, [type(a).__name__ for a in args], shape)
        assert got is None or outs[0] is None or got is outs[0]


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), tree=st.booleans())
def test_fixed_base_single_states_equal_the_python_run(seed, tree):
    robot = random_robot(seed, tree=tree, fixed=True, friction=True)
    rng = np.random.default_rng(seed)
    state = tuple(rng.uniform(-1.5, 1.5, robot.n) for _ in range(3))
    for kind in FIXED:
        run = native.bind(robot, kind)
        if not run:
            continue
        bound, python = _bound_or_skip(run)
        shape = {"inertia_matrix": (robot.n, robot.n), "inverse_dynamics_derivatives": (2, robot.n, robot.n),
                 "forward_dynamics_derivatives": (3, robot.n, robot.n)}.get(kind, (robot.n,))
        _assert_the_paths_agree(bound, python, _calls(state, shape), kind)
        c_alone = _c_alone(bound)  # one finite float64 state, into a new array or out: served without the run
        assert _same(c_alone(*state, None), python(*state, None))
        out = np.empty(shape)
        assert c_alone(*state, None, out) is out and _same(out, python(*state, None))


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_free_flyer_single_states_equal_the_python_run(seed):
    robot = random_floating(seed % 1000, tree=True, nf=4)
    q, v, a = random_free_state(robot.n, seed % 1000)
    tau = fl.floating_inverse_dynamics(robot, q, v, a)
    off = q.copy()
    off[3:7] *= 1.1  # a quaternion off norm: the entry declines it, and so does the run
    for kind, third in zip(FLOATING, (a, None, tau)):
        bound, python = _bound_or_skip(fl._bind(robot, kind))
        shape = (robot.n + 6, robot.n + 6) if kind == "inertia_matrix" else (robot.n + 6,)
        second = None if kind == "inertia_matrix" else v
        calls = [*_calls((q, second, third), shape), ((off, second, third, None, None, True, 0, False), None)]
        _assert_the_paths_agree(bound, python, calls, kind)
        assert _same(_c_alone(bound)(q, second, third, None), python(q, second, third, None))


def test_bound_checks_its_own_arguments():
    bound = getattr(native._module(), "bound", None)
    if bound is None:
        pytest.skip("the kernels were built without NumPy's headers")
    with pytest.raises(TypeError, match="bound"):
        bound(None, False, None, 0, None, None, (3,), np.zeros(3))  # three arguments of the call missing
    with pytest.raises(TypeError, match="bound"):
        bound(None, False, None, 0, None, None, (), np.zeros(3), None, None, None)  # no result shape
