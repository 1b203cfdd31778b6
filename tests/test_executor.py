"""The one executor (robodyn.dynamics.executor): every public dynamics function reaches it through one entry, and
each path it chooses gives the numbers of the formulation's NumPy recursions."""

from __future__ import annotations

import ast
import importlib
import inspect
import pickle
import textwrap

import numpy as np
import pytest

import robodyn as rd
from robodyn.dynamics import composite, derivatives, executor, gibbs_appell, lagrange, newton_euler, recursive, \
    spatial_operator, walker_orin
from tests.support.random_robots import random_robot

ROBOT = random_robot(31, nf=5, tree=True, prismatic=True, fixed=True)

#: name -> f(q, qd, x) for one state or a batch (x: q̈ or Γ)
CALLS = {
    "inverse_dynamics": lambda q, qd, x: rd.inverse_dynamics(ROBOT, q, qd, x),
    "gravity_torques": lambda q, qd, x: rd.gravity_torques(ROBOT, q),
    "bias_torques": lambda q, qd, x: rd.bias_torques(ROBOT, q, qd),
    "inertia_matrix": lambda q, qd, x: rd.inertia_matrix(ROBOT, q),
    "forward_dynamics": lambda q, qd, x: rd.forward_dynamics(ROBOT, q, qd, x),
    "regressor": lambda q, qd, x: rd.regressor(ROBOT, q, qd, x),
    "inverse_dynamics_derivatives": lambda q, qd, x: np.stack(rd.inverse_dynamics_derivatives(ROBOT, q, qd, x), -3),
    "forward_dynamics_derivatives": lambda q, qd, x: np.stack(rd.forward_dynamics_derivatives(ROBOT, q, qd, x), -3),
    **{f"inverse_dynamics-{m}": lambda q, qd, x, m=m: rd.inverse_dynamics(ROBOT, q, qd, x, method=m)
       for m in ("gibbs_appell", "spatial_operator")},
    **{f"inertia_matrix-{m}": lambda q, qd, x, m=m: rd.inertia_matrix(ROBOT, q, method=m)
       for m in ("walker_orin", "gibbs_appell")},
    **{f"forward_dynamics-{m}": lambda q, qd, x, m=m: rd.forward_dynamics(ROBOT, q, qd, x, method=m)
       for m in ("cholesky", "gibbs_appell", "spatial_operator")},
}


def _states(size, seed=5):
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-1.5, 1.5, (size, ROBOT.n)) for _ in range(3))


def _rel(a, b):
    return np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)


@pytest.mark.parametrize("name", CALLS)
def test_every_path_gives_the_numpy_recursions(monkeypatch, name):
    """One float64 state, a float64 batch (on the kernels from MIN_BATCH states), float32, and all of them with ROBODYN_NATIVE=0,
    against the NumPy recursions (a batch of three states, switched off)."""
    f = CALLS[name]
    q, qd, x = _states(executor.MIN_BATCH + 7)
    monkeypatch.setenv("ROBODYN_NATIVE", "0")
    reference = f(q[:3], qd[:3], x[:3])
    for native in ("0", "1"):
        monkeypatch.setenv("ROBODYN_NATIVE", native)
        for k in range(3):
            one = f(q[k], qd[k], x[k])
            assert one.dtype == np.float64 and one.shape == reference[k].shape and _rel(one, reference[k]) < 1e-10, k
        batch = f(q, qd, x)
        assert batch.dtype == np.float64 and _rel(batch[:3], reference) < 1e-10
        if name.endswith("derivatives"):
            continue  # float64 functions
        single = f(*(a[0].astype(np.float32) for a in (q, qd, x)))
        assert single.dtype == np.float32 and _rel(single, reference[0]) < 2e-4


def _body(function) -> list:
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    body = tree.body[0].body
    return body[1:] if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else body


@pytest.mark.parametrize("function", [
    newton_euler.inverse_dynamics, newton_euler.gravity_torques, newton_euler.bias_torques,
    recursive.forward_dynamics, composite.inertia_matrix, walker_orin.inertia_matrix,
    gibbs_appell.inverse_dynamics, gibbs_appell.inertia_matrix, gibbs_appell.forward_dynamics,
    spatial_operator.inverse_dynamics, spatial_operator.forward_dynamics, lagrange.forward_dynamics,
    derivatives.inverse_dynamics_derivatives, derivatives.forward_dynamics_derivatives,
], ids=lambda f: f"{f.__module__.rsplit('.', 1)[1]}.{f.__name__}")
def test_public_functions_call_the_executor_in_one_line(function):
    (statement,) = _body(function)
    call = statement.value
    assert isinstance(statement, ast.Return) and ast.unparse(call.func) == "executor.execute"


def test_the_regressor_calls_the_executor_in_one_line():
    """Its transmission columns are appended to the regressor of the executor."""
    last = _body(importlib.import_module("robodyn.parameters.regressor").regressor)[-1]
    assert isinstance(last, ast.Return) and ast.unparse(last.value.func) == "executor.execute"


#: the functions that take Dask arrays (the derivatives and free-flyer functions have batches of their own)
_LAZY = ("inverse_dynamics", "gravity_torques", "bias_torques", "inertia_matrix", "forward_dynamics", "regressor",
         "inverse_dynamics-gibbs_appell", "inertia_matrix-walker_orin", "forward_dynamics-cholesky")


@pytest.mark.parametrize("name", _LAZY)
def test_dask_in_dask_out_lazily_with_the_numpy_numbers(name):
    """A Dask array in gives a lazy Dask array out, chunked as the input along the batch axes, whose blocks are the
    executor's choice on each block; computed, it equals the call on NumPy arrays (to rounding: a block may take
    another path than the whole batch)."""
    da = pytest.importorskip("dask.array")
    q, qd, x = _states(300, seed=8)
    if name.startswith("forward_dynamics"):
        x = rd.inverse_dynamics(ROBOT, q, qd, x)
    lazy = CALLS[name](da.from_array(q, chunks=(70, ROBOT.n)), qd, da.from_array(x, chunks=(150, ROBOT.n)))
    assert isinstance(lazy, da.Array) and lazy.chunks[0] == (70, 70, 70, 70, 20)
    want = CALLS[name](q, qd, x)
    assert lazy.shape == want.shape and lazy.dtype == want.dtype
    assert _rel(lazy.compute(), want) < 1e-12
    # batch axes broadcast: one velocity against a (2, 150) batch
    grid = CALLS[name](da.from_array(q.reshape(2, 150, ROBOT.n), chunks=(1, 40, ROBOT.n)), qd[0],
                       x.reshape(2, 150, ROBOT.n))
    assert isinstance(grid, da.Array) and grid.shape == (2, 150) + want.shape[1:]
    assert _rel(grid.compute().reshape(want.shape), CALLS[name](q, qd[0], x)) < 1e-12


def test_dask_ships_the_robot_once_and_checks_its_arguments():
    da = pytest.importorskip("dask.array")
    q, qd, qdd = _states(200, seed=9)
    def copies(chunk):  # how often the robot's name is in the pickled graph
        lazy = rd.inverse_dynamics(ROBOT, da.from_array(q, chunks=(chunk, ROBOT.n)), qd, qdd)
        return pickle.dumps(dict(lazy.__dask_graph__())).count(ROBOT.name.encode())

    assert 1 <= copies(200) == copies(20)  # one block or ten: the robot is in the graph once
    with pytest.raises(rd.InputError, match="'qd' has shape"):
        rd.inverse_dynamics(ROBOT, da.from_array(q), qd[:, :2], qdd)
    with pytest.raises(rd.InputError, match="gravity"):
        rd.inverse_dynamics(ROBOT, da.from_array(q), qd, qdd, gravity=np.zeros((200, 3)))


@pytest.mark.parametrize("name", ["inverse_dynamics", "gravity_torques", "inertia_matrix", "forward_dynamics",
                                  "regressor"])
def test_jax_arrays_are_traced_with_the_numpy_numbers(name):
    """A JAX array in runs the formulation's recursion on the JAX backend: a JAX array out, traceable by jit, vmap
    and jacfwd, with the NumPy call's numbers (float64)."""
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    def x64():  # a fresh context each time: older JAX's is a one-shot generator
        return jax.enable_x64(True) if hasattr(jax, "enable_x64") else jax.experimental.enable_x64()

    with x64():
        q, qd, x = _states(20, seed=10)
        if name == "forward_dynamics":
            x = rd.inverse_dynamics(ROBOT, q, qd, x)
        out = CALLS[name](jnp.asarray(q), jnp.asarray(qd), jnp.asarray(x))
        assert isinstance(out, jax.Array)
        assert _rel(np.asarray(out), CALLS[name](q, qd, x)) < 1e-12
        jitted = jax.jit(jax.vmap(lambda a, b, c: CALLS[name](a, b, c)))(q, qd, x)
        assert _rel(np.asarray(jitted), CALLS[name](q, qd, x)) < 1e-12
    with x64():  # ∂Γ/∂q̈ = A(q), through rd.inverse_dynamics itself
        A = jax.jacfwd(lambda a: rd.inverse_dynamics(ROBOT, q[0], qd[0], a))(jnp.asarray(x[0]))
        assert _rel(np.asarray(A), rd.inertia_matrix(ROBOT, q[0])) < 1e-12


def test_jax_arrays_of_other_methods_and_wrenches_are_refused():
    jnp = pytest.importorskip("jax.numpy")
    q = jnp.zeros(ROBOT.n)
    with pytest.raises(rd.InputError, match="JAX arrays run the default method"):
        rd.inverse_dynamics(ROBOT, q, q, q, method="gibbs_appell")
    with pytest.raises(rd.InputError, match="wrenches"):
        rd.inverse_dynamics(ROBOT, q, q, q, wrenches=np.zeros((ROBOT.nf, 6)))


def test_each_algorithm_carries_the_key_of_its_bound_entry():
    """A spec served by robodyn.native carries the workspace key under which its entry is bound to a robot (found by
    execute in one lookup); the free-flyer specs carry their own; the NumPy-only specs none."""
    from robodyn import native
    from robodyn.dynamics import floating
    from robodyn.model.workspace import WORKSPACE

    for spec in (newton_euler._INVERSE, newton_euler._GRAVITY, newton_euler._BIAS, composite._INERTIA,
                 recursive._FORWARD, derivatives._INVERSE):
        assert spec.key == native.RUNNERS[spec.name] and spec.bind is native.bind
    assert newton_euler._INVERSE.least == executor.MIN_BATCH and derivatives._INVERSE.least == 0
    assert floating._INERTIA.key == floating._native_key("inertia_matrix") != composite._INERTIA.key
    for spec in (gibbs_appell._INVERSE, walker_orin._WALKER_ORIN, lagrange._FORWARD):
        assert spec.key is None and spec.bind is None
    q = np.random.default_rng(4).uniform(-1, 1, ROBOT.n)
    rd.inertia_matrix(ROBOT, q)
    # bound (False only without kernels); with ROBODYN_NATIVE=0 a call binds nothing (test_native)
    assert not executor.enabled() or WORKSPACE.get(ROBOT, composite._INERTIA.key) is not None


def test_the_last_robots_entry_serves_only_that_robot():
    """execute keeps the last robot's bound entry on the spec (a loop over one robot's states skips the workspace
    lookup): calls alternating between two robots, from three threads at once, each get their own robot's numbers
    bit for bit; a robot equal in content but another object is looked up again (and served alike)."""
    import threading

    other = random_robot(32, nf=5, tree=True, prismatic=True, fixed=True)
    states = {id(r): _states(1, seed=s)[0][0] for r, s in ((ROBOT, 11), (other, 12))}
    want = {id(r): rd.inertia_matrix(r, states[id(r)]) for r in (ROBOT, other)}
    assert not np.array_equal(want[id(ROBOT)], want[id(other)])
    wrong = []

    def loop(robots):
        for k in range(2000):
            r = robots[k % len(robots)]
            if not np.array_equal(rd.inertia_matrix(r, states[id(r)]), want[id(r)]):
                wrong.append(r.name)

    threads = [threading.Thread(target=loop, args=(robots,)) for robots in ([ROBOT, other], [other], [ROBOT])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong
    kept = executor.enabled()  # ROBODYN_NATIVE=0: nothing bound, nothing kept
    assert composite._INERTIA.last[0][0] in (ROBOT, other) or not kept
    twin = ROBOT.replace()
    assert twin is not ROBOT and np.array_equal(rd.inertia_matrix(twin, states[id(ROBOT)]), want[id(ROBOT)])
    assert composite._INERTIA.last[0][0] is twin or not kept


def test_a_pickled_spec_leaves_its_last_entry_behind():
    """An Algorithm travels in a Dask graph by pickle; the entry bound in this process (a closure over a C model)
    stays here, and the copy starts with none."""
    rd.gravity_torques(ROBOT, np.zeros(ROBOT.n))
    copy = pickle.loads(pickle.dumps(newton_euler._GRAVITY))
    assert copy == newton_euler._GRAVITY and copy.last == [(None, None)]
    assert copy.key == newton_euler._GRAVITY.key and copy.numpy is newton_euler._GRAVITY.numpy
    assert np.array_equal(executor.execute(copy, ROBOT, np.ones(ROBOT.n)), rd.gravity_torques(ROBOT, np.ones(ROBOT.n)))
