"""Single states (the native single-state entry, NumPy for the other methods), method names and aliases, the
scalar-backend hook."""

import warnings

import uuid

import numpy as np
import pytest
from hypothesis import given, settings

import robodyn as rd
from robodyn.model.workspace import WORKSPACE
from robodyn import native
from robodyn.dynamics.lagrange import Fallback, cholesky_components
from robodyn.dynamics.newton_euler import rnea_components
from robodyn.spatial import NUMPY, jax_backend
from tests.support.checks import assert_close
from tests.support.kernels import needs_kernels, switched_on
from tests.support.pin_bridge import PinRobot
from tests.support.random_robots import random_robot, random_state, robots


def _fresh(robot):
    """An equal-but-for-its-name robot with nothing in the workspace yet (equal robots share one entry)."""
    return robot.replace(name=f"{robot.name}-{uuid.uuid4().hex}")



@settings(max_examples=10)
@given(robots)
def test_single_states_without_compiled_code_equal_the_batched_path(robot):
    """With ROBODYN_NATIVE=0 one state runs the batched NumPy path on a batch of one: equal to the last bit (the
    compiled single-state entry of robodyn.native, used first when available, is tested below)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ROBODYN_NATIVE", "0")
        _numpy_single_states_equal_the_batched_path(robot)


def _numpy_single_states_equal_the_batched_path(robot):
    q, qd, qdd = random_state(robot, 4)
    one = lambda f, *a: (f(robot, *a), f(robot, *(x[None] for x in a))[0])  # noqa: E731
    for f, args in ((rd.inverse_dynamics, (q, qd, qdd)), (rd.gravity_torques, (q,)), (rd.inertia_matrix, (q,)),
                    (rd.forward_dynamics, (q, qd, qdd))):
        single, batched = one(f, *args)
        np.testing.assert_array_equal(single, batched)
        assert single.dtype == np.float64 and single.shape == batched.shape
        assert native.single_state(robot, f.__name__, *args) is None  # the switch is read by the entry itself
    single, batched = one(lambda r, a: rd.inertia_matrix(r, a, method="walker_orin"), q)
    np.testing.assert_array_equal(single, batched)
    # Cholesky: one state solved by LAPACK's substitutions on the same factor
    single, batched = one(lambda r, *a: rd.forward_dynamics(r, *a, method="cholesky"), q, qd, qdd)
    assert_close(single, batched)


def test_single_state_matches_pinocchio_and_takes_gravity():
    robot = random_robot(5, nf=6, tree=True, fixed=True)
    q, qd, qdd = random_state(robot, 5)
    pr = PinRobot(robot)
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    assert_close(tau - rd.friction_torques(robot, qd), pr.rnea(q, qd, qdd))
    assert_close(rd.inertia_matrix(robot, q), pr.crba(q))
    assert_close(rd.forward_dynamics(robot, q, qd, tau), qdd)
    g = np.array([1.0, -2.0, -9.0])
    assert_close(rd.gravity_torques(robot, q, gravity=g), rd.gravity_torques(robot, q[None], gravity=g)[0])
    assert_close(rd.inverse_dynamics(robot, q, qd, qdd, gravity=g),
                 rd.inverse_dynamics(robot.replace(gravity=g), q[None], qd, qdd)[0])


def test_single_states_that_the_kernels_do_not_take_go_the_general_way():
    robot = rd.load("planar2r")
    q = np.array([0.3, -0.2])
    # float32 stays float32; a list, NaN and a wrong shape get the general checks and messages
    assert rd.inverse_dynamics(robot, q.astype(np.float32), q, q).dtype == np.float64
    assert rd.gravity_torques(robot, q.astype(np.float32)).dtype == np.float32
    np.testing.assert_array_equal(rd.gravity_torques(robot, [0.3, -0.2]), rd.gravity_torques(robot, q))
    with pytest.raises(rd.InputError, match="'q'.*NaN"):
        rd.inverse_dynamics(robot, np.array([np.nan, 0.0]), q, q)
    with pytest.raises(rd.InputError, match="'qd' has shape \\(3,\\)"):
        rd.forward_dynamics(robot, q, np.zeros(3), q)
    # a singular direct model: the entry hands over, the general path names the joint
    massless = rd.Robot(name="m", sigma=[0, 0], d=[0, 1.0], params=np.zeros((2, 10)))
    with pytest.raises(rd.ModelError, match="singular"):
        rd.forward_dynamics(massless, q, q, q)


@switched_on
def test_native_entries_live_in_the_workspace_keyed_by_content():
    """Equal robots share one workspace entry (the native model and its bound entries); an edited robot is a new
    robot with its own; nothing on the robot holds an entry."""
    a = _fresh(rd.load("rx90"))
    b = a.replace()  # another object, equal by content
    assert a == b and a is not b and hash(a) == hash(b)
    q = np.zeros(6)
    rd.gravity_torques(a, q)
    assert "native_single_gravity_torques" in WORKSPACE.stored(b)
    rd.gravity_torques(b, q)
    assert not native.available() or "native_single" in WORKSPACE.stored(a)
    heavier = rd.with_parameters(a, 3, M=10.0)
    assert heavier != a and not WORKSPACE.stored(heavier)
    assert not np.allclose(rd.gravity_torques(heavier, q + 0.3), rd.gravity_torques(a, q + 0.3))
    assert not any(isinstance(v, dict) for v in vars(a.derived).values())


def test_method_names_aliases_and_deprecated_names():
    robot = random_robot(8, nf=5, tree=True, fixed=True)
    q, qd, qdd = random_state(robot, 8, (3,))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(rd.inverse_dynamics(robot, q, qd, qdd, method="rnea"), tau)
        A = rd.inertia_matrix(robot, q)
        np.testing.assert_array_equal(rd.inertia_matrix(robot, q, method="crba"), A)
        assert_close(rd.inertia_matrix(robot, q, method="walker_orin"), A)
        np.testing.assert_array_equal(rd.forward_dynamics(robot, q, qd, tau, method="aba"),
                                      rd.forward_dynamics(robot, q, qd, tau))
        new = rd.forward_dynamics(robot, q, qd, tau, method="spatial_operator")
        assert_close(new, qdd)
    with pytest.warns(DeprecationWarning, match="method='walker_orin'") as rec:
        old = rd.inertia_matrix(robot, q, method="newton_euler")
    assert rec[0].filename == __file__  # the warning points at the caller
    np.testing.assert_array_equal(old, rd.inertia_matrix(robot, q, method="walker_orin"))
    with pytest.warns(DeprecationWarning, match="method='spatial_operator'"):
        np.testing.assert_array_equal(rd.forward_dynamics(robot, q, qd, tau, method="kalman"), new)
    with pytest.raises(rd.InputError, match="unknown method 'featherstone'; choose one of recursive, aba, cholesky"):
        rd.forward_dynamics(robot, q, qd, tau, method="featherstone")


def test_rnea_components_on_python_floats_and_numpy_rows_through_the_backend_hook():
    robot = random_robot(2, nf=4, tree=True, fixed=True)
    q, qd, qdd = random_state(robot, 2, (5,))
    g = tuple(robot.gravity.tolist())
    rows = [list(x.T) for x in (q, qd, qdd)]
    tau = np.stack(rnea_components(robot, *rows, g, backend=NUMPY), -1)
    expected = rd.inverse_dynamics(robot, q, qd, qdd) - rd.friction_torques(robot, qd) - robot.derived.Ia * qdd
    assert_close(tau, expected)
    first = rnea_components(robot, *(r_[0].tolist() for r_ in (q, qd, qdd)), g)
    assert all(type(t) is float for t in first)
    assert_close(np.array(first), expected[0])


def test_jax_jit_traces_inverse_dynamics_through_the_backend_hook():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    x64 = jax.enable_x64(True) if hasattr(jax, "enable_x64") else jax.experimental.enable_x64()
    with x64:
        robot = random_robot(6, nf=5, tree=True, fixed=True)
        q, qd, qdd = random_state(robot, 6, (4,))
        backend = jax_backend()
        g = tuple(robot.gravity.tolist())

        def rigid(q, qd, qdd):
            return jnp.stack(rnea_components(robot, list(q), list(qd), list(qdd), g, backend=backend))

        batched = jax.jit(jax.vmap(rigid))(jnp.asarray(q), jnp.asarray(qd), jnp.asarray(qdd))
        expected = rd.inverse_dynamics(robot, q, qd, qdd) - rd.friction_torques(robot, qd) - robot.derived.Ia * qdd
        np.testing.assert_allclose(np.asarray(batched), expected, rtol=1e-12, atol=1e-12)
        # gradient of the torques with respect to q̈ is the inertia matrix (without rotor inertias)
        A = jax.jacfwd(rigid, argnums=2)(jnp.asarray(q[0]), jnp.asarray(qd[0]), jnp.asarray(qdd[0]))
        np.testing.assert_allclose(np.asarray(A), rd.inertia_matrix(robot, q[0]) - np.diag(robot.derived.Ia),
                                   rtol=1e-10, atol=1e-12)


@needs_kernels
@pytest.mark.parametrize("robot", [rd.load("puma560"), random_robot(7, nf=6, tree=True, fixed=True)], ids=str)
def test_compiled_single_state_equals_the_batched_path(robot):
    """One 1-D float64 state goes through the compiled generic kernels (about 1 µs of overhead): the batched
    NumPy path's numbers to rounding, Stribeck friction included; anything it cannot take (float32, NaN) gets the
    general path."""
    q, qd, qdd = random_state(robot, 6)
    for f, args in ((rd.inverse_dynamics, (q, qd, qdd)), (rd.gravity_torques, (q,)), (rd.inertia_matrix, (q,)),
                    (rd.forward_dynamics, (q, qd, qdd))):
        assert native.single_state(robot, f.__name__, *args) is not None
        assert_close(f(robot, *args), f(robot, *(x[None] for x in args))[0])
    assert native.single_state(robot, "inverse_dynamics", q.astype(np.float32), qd, qdd) is None
    assert native.single_state(robot, "gravity_torques", np.full(robot.n, np.nan)) is None
    stribeck = robot.replace(Fst=np.where(robot.sigma != 2, 2.0, 0.0), Fc=np.where(robot.sigma != 2, 1.0, 0.0),
                             kst=np.where(robot.sigma != 2, 1.0, 0.0), Bst=np.where(robot.sigma != 2, 1.0, 0.0))
    assert native.single_state(stribeck, "inverse_dynamics", q, qd, qdd) is not None
    assert native.single_state(stribeck, "inverse_dynamics_derivatives", q, qd, qdd) is None  # no Stribeck slope
    assert_close(rd.inverse_dynamics(stribeck, q, qd, qdd), rd.inverse_dynamics(stribeck, q[None], qd, qdd)[0])
    assert_close(rd.forward_dynamics(stribeck, q, qd, qdd), rd.forward_dynamics(stribeck, q[None], qd, qdd)[0])


#: Every formulation that is not the default, by function: one state runs its NumPy recursions.
_OTHER_METHODS = (
    ("inverse_dynamics", "gibbs_appell"),
    ("inverse_dynamics", "spatial_operator"),
    ("inertia_matrix", "walker_orin"),
    ("inertia_matrix", "gibbs_appell"),
    ("forward_dynamics", "cholesky"),
    ("forward_dynamics", "gibbs_appell"),
    ("forward_dynamics", "spatial_operator"),
)


def _every_method_single_equals_batched(robot, seed, gravity=None):
    q, qd, qdd = random_state(robot, seed)
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    kw = {} if gravity is None else {"gravity": gravity}
    for what, method in _OTHER_METHODS:
        f = getattr(rd, what)
        args = {"inverse_dynamics": (q, qd, qdd), "inertia_matrix": (q,), "forward_dynamics": (q, qd, tau)}[what]
        extra = kw if what != "inertia_matrix" else {}
        single = f(robot, *args, method=method, **extra)
        batched = f(robot, *(a[None] for a in args), method=method, **extra)[0]
        assert single.dtype == np.float64 and single.shape == batched.shape, (what, method)
        assert_close(single, batched, rtol=1e-13)
    if gravity is None:  # and the formulations agree with each other (the default ones as reference)
        assert_close(rd.inverse_dynamics(robot, q, qd, qdd, method="gibbs_appell"), tau)
        assert_close(rd.forward_dynamics(robot, q, qd, tau, method="spatial_operator"), qdd, rtol=1e-9)


@settings(max_examples=8)
@given(robots)
def test_every_method_single_state_equals_its_batched_path(robot):
    """Gibbs–Appell, Kozłowski's filter and smoother, Walker–Orin and the Cholesky solve on one 1-D float64 state
    give the batched NumPy path's numbers (to rounding: 1e-13 relative)."""
    _every_method_single_equals_batched(robot, 3)


def test_every_method_single_state_with_gravity_and_without_the_compiled_entry():
    robot = random_robot(11, nf=6, tree=True, fixed=True)
    _every_method_single_equals_batched(robot, 4, gravity=np.array([0.5, -3.0, -9.0]))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ROBODYN_NATIVE", "0")
        other = random_robot(12, nf=5, tree=False, fixed=True)
        _every_method_single_equals_batched(other, 5)
    # wrenches= and float32 still take the general path
    q, qd, qdd = random_state(robot, 6)
    W = np.random.default_rng(1).normal(size=(robot.nf, 6))
    for method in ("gibbs_appell", "spatial_operator"):
        assert_close(rd.inverse_dynamics(robot, q, qd, qdd, wrenches=W, method=method),
                     rd.inverse_dynamics(robot, q, qd, qdd, wrenches=W))
        assert rd.inverse_dynamics(robot, q.astype(np.float32), qd.astype(np.float32), qdd.astype(np.float32),
                                   method=method).dtype == np.float32


@pytest.mark.parametrize("method", ["cholesky", "gibbs_appell", "spatial_operator"])
def test_a_singular_single_state_hands_over_and_the_general_path_names_it(method):
    """The relative pivot test: a pivot that is rounding noise is not divided by."""
    q = np.array([0.3, -0.2])
    massless = rd.Robot(name="m", sigma=[0, 0], d=[0, 1.0], params=np.zeros((2, 10)))
    with pytest.raises(rd.ModelError, match="singular"):
        rd.forward_dynamics(massless, q, q, q, method=method)
    # a point mass on the axis of joint 2 (no inertia about it): A is singular up to rounding only
    params = np.zeros((2, 10))
    params[:, 9] = 1.0
    params[0, [0, 3, 5]] = 1.0
    point = rd.Robot(name="p", sigma=[0, 0], d=[0, 1.0], params=params)
    with pytest.raises(rd.ModelError, match="singular"):
        rd.forward_dynamics(point, q, q, q, method=method)


def test_the_ldl_solve_of_the_component_recursions():
    rng = np.random.default_rng(3)
    B = rng.normal(size=(5, 5))
    A, b = B @ B.T + 5 * np.eye(5), rng.normal(size=5)
    x = cholesky_components(A.tolist(), b.tolist())
    np.testing.assert_allclose(np.array(x), np.linalg.solve(A, b), rtol=1e-13, atol=0)
    A[4] = A[:, 4] = A[3] * 1.0  # a repeated row: the last pivot is rounding noise
    A[4, 4] = A[3, 3]
    with pytest.raises(Fallback):
        cholesky_components(A.tolist(), b.tolist())
