"""One free-flyer state in one C call (robodyn.native's floating entry, the executor's single-state entry of the
free-flyer functions): the same numbers as the batched path, on random floating trees (prismatic joints, fixed frames, friction,
rotor inertias) and mobile bases; everything the entry declines falls back to the paths that check and explain."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn import native
from robodyn.dynamics import floating as fl
from tests.support.floating import legged_robot, random_floating, random_free_state
from tests.support.kernels import needs_kernels
from tests.support.random_robots import random_robot

pytestmark = needs_kernels


def _robot(seed, base="floating"):
    robot = random_robot(seed, tree=True, fixed=True, friction=True)
    rng = np.random.default_rng(seed + 1)
    return robot.replace(base=base, base_params=random_floating(seed).base_params,
                         Ia=np.where(robot.sigma == 2, 0.0, rng.uniform(0, 0.1, robot.nf)))


def _entry(robot, what, q, v=None, x=None, g=None):
    """The free-flyer entry bound to the robot (what the executor calls for one state), or None where it declines."""
    run = fl._bind(robot, what)
    return run(q, v, x, g) if run else None


def _rel(a, b):
    return np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b)))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), base=st.sampled_from(["floating", "mobile"]))
def test_the_c_entry_equals_the_batched_path(seed, base):
    robot = _robot(seed, base)
    q, v, a = random_free_state(robot.n, seed)
    g = np.array([0.5, -1.0, -9.0])
    tau = _entry(robot, "inverse_dynamics", q, v, a, g)
    assert tau is not None  # the entry served the call
    assert _rel(tau, rd.floating.floating_inverse_dynamics(robot, q[None], v[None], a[None], gravity=g)[0]) < 1e-13
    assert _rel(rd.floating.floating_inverse_dynamics(robot, q, v, a), rd.floating.floating_inverse_dynamics(robot, q[None], v[None], a[None])[0]) < 1e-13
    M = _entry(robot, "inertia_matrix", q)
    assert _rel(M, rd.floating.floating_inertia_matrix(robot, q[None])[0]) < 1e-13
    if base == "floating":
        acc = _entry(robot, "forward_dynamics", q, v, tau, g)
        want = rd.floating.floating_forward_dynamics(robot, q[None], v[None], tau[None], gravity=g)[0]
        assert np.max(np.abs(acc - want)) <= 1e-10 * max(1.0, np.max(np.abs(want)))
        assert np.max(np.abs(acc - a)) <= 1e-8 * max(1.0, np.max(np.abs(a)))  # forward ∘ inverse = identity


def test_what_the_entry_declines_goes_to_the_general_path():
    robot = _robot(3)
    q, v, a = random_free_state(robot.n, 3)
    off = q.copy()
    off[3:7] *= 1.01
    assert _entry(robot, "inverse_dynamics", off, v, a) is None
    with pytest.raises(rd.InputError, match="quaternion"):
        rd.floating.floating_inverse_dynamics(robot, off, v, a)
    bad = v.copy()
    bad[2] = np.nan
    assert _entry(robot, "inverse_dynamics", q, bad, a) is None
    with pytest.raises(rd.InputError, match="'v' contains NaN"):
        rd.floating.floating_inverse_dynamics(robot, q, bad, a)
    assert _entry(robot, "inverse_dynamics", q.astype(np.float32), v, a) is None
    assert _entry(robot, "inverse_dynamics", q[:-1], v, a) is None
    assert _entry(robot, "inverse_dynamics", list(q), v, a) is None
    low = [x.astype(np.float32) for x in (q, v, a)]
    assert rd.floating.floating_inverse_dynamics(robot, *low).dtype == np.float32


def test_native_switched_off(monkeypatch):
    robot = _robot(5)
    q, v, a = random_free_state(robot.n, 5)
    want = _entry(robot, "inverse_dynamics", q, v, a)
    monkeypatch.setenv("ROBODYN_NATIVE", "0")
    assert _entry(robot, "inverse_dynamics", q, v, a) is None
    assert _rel(rd.floating.floating_inverse_dynamics(robot, q, v, a), want) < 1e-13


def test_the_public_functions_go_through_the_executor_to_the_entry_bound_to_the_robot(monkeypatch):
    """One path: each free-flyer function is one call of the executor, which calls the entry bound to the robot
    (kept in its workspace entry after the first call) for one state: the same numbers as the entry, each robot
    content with its own bound entry, gravity on the entry too, wrenches on the general path."""
    robot = _robot(7)
    q, v, a = random_free_state(robot.n, 7)
    tau = rd.floating.floating_inverse_dynamics(robot, q, v, a)   # binds
    assert fl.WORKSPACE.get(robot, fl._native_key("inverse_dynamics"))
    np.testing.assert_array_equal(rd.floating.floating_inverse_dynamics(robot, q, v, a),
                                  _entry(robot, "inverse_dynamics", q, v, a))
    np.testing.assert_array_equal(rd.floating.floating_inertia_matrix(robot, q), _entry(robot, "inertia_matrix", q))
    np.testing.assert_array_equal(rd.floating.floating_forward_dynamics(robot, q, v, tau),
                                  _entry(robot, "forward_dynamics", q, v, tau))
    heavier = robot.replace(base_params=robot.base_params * 2.0)
    assert _rel(rd.floating.floating_inertia_matrix(heavier, q),
                rd.floating.floating_inertia_matrix(heavier, q[None])[0]) < 1e-13
    assert not np.allclose(rd.floating.floating_inertia_matrix(heavier, q), rd.floating.floating_inertia_matrix(robot, q))
    g = np.array([0.0, 0.0, -3.0])
    np.testing.assert_array_equal(rd.floating.floating_inverse_dynamics(robot, q, v, a, gravity=g),
                                  _entry(robot, "inverse_dynamics", q, v, a, g))
    assert _rel(rd.floating.floating_inverse_dynamics(robot, q, v, a, gravity=g),
                rd.floating.floating_inverse_dynamics(robot, q[None], v[None], a[None], gravity=g)[0]) < 1e-13
    W = np.random.default_rng(8).normal(size=(robot.nf, 6))
    assert _rel(rd.floating.floating_inverse_dynamics(robot, q, v, a, wrenches=W),
                rd.floating.floating_inverse_dynamics(robot, q[None], v[None], a[None], wrenches=W[None])[0]) < 1e-13
    # no shortcut around the executor: with its bound entry refused, every call takes the general path
    calls = []
    monkeypatch.setattr(fl.executor, "execute", lambda *args: calls.append(args[0].name) or 0)
    rd.floating.floating_inverse_dynamics(robot, q, v, a)
    rd.floating.floating_inertia_matrix(robot, q)
    rd.floating.floating_forward_dynamics(robot, q, v, tau)
    assert calls == ["inverse_dynamics", "inertia_matrix", "forward_dynamics"]


def test_the_checks_of_the_general_path_hold_after_the_entry_is_bound():
    """Wrong robots, shapes, dtypes and mobile-base arguments give the general path's errors, bound entry or not."""
    robot = _robot(9)
    q, v, a = random_free_state(robot.n, 9)
    rd.floating.floating_inverse_dynamics(robot, q, v, a)   # binds
    with pytest.raises(rd.InputError, match="'v' has shape"):
        rd.floating.floating_inverse_dynamics(robot, q, v[:-1], a)
    with pytest.raises(rd.InputError, match="fixed base"):
        rd.floating.floating_inertia_matrix(robot.replace(base="fixed"), q)
    with pytest.raises(rd.InputError, match="give a Robot"):
        rd.floating.floating_inertia_matrix("robot", q)
    with pytest.raises(rd.InputError, match="base_acceleration is for a mobile base"):
        rd.floating.floating_forward_dynamics(robot, q, v, a, base_acceleration=np.zeros(6))
    mobile = robot.replace(base="mobile")
    with pytest.raises(rd.InputError, match="mobile base"):
        rd.floating.floating_forward_dynamics(mobile, q, v, a)
    assert rd.floating.floating_inertia_matrix(robot, q.tolist()).shape == (robot.n + 6, robot.n + 6)


def _declined(q, v, x, g):
    """What the free-flyer entry declines of a (2, 3) batch, each as (q, v, x, gravity): a quaternion off norm, inf
    in v, per-state gravity, float32, a strided batch; with the q off norm and the v with inf themselves."""
    off, bad = q.copy(), v.copy()
    off[1, 2, 3:7] *= 1.01
    bad[0, 1, 4] = np.inf
    return [(off, v, x, None), (q, bad, x, None), (q, v, x, np.tile(g, (2, 3, 1))), (q.astype(np.float32), v, x, None),
            (q[:, ::2], v[:, ::2], x[:, ::2], None)], off, bad


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), base=st.sampled_from(["floating", "mobile"]))
def test_a_batch_of_inverse_dynamics_in_one_c_call(seed, base):
    """A batch through the free-flyer entry (the six virtual frames reduced to the base frame) gives the general
    path's numbers (the augmented robot's recursion on the virtual state), and each row is its single state bit for
    bit; per-state gravity, a quaternion off norm or NaN in one state, float32, a strided batch are declined."""
    robot = _robot(seed, base)
    q, v, a = random_free_state(robot.n, seed, batch=(2, 3))
    g = np.array([0.5, -1.0, -9.0])
    tau = _entry(robot, "inverse_dynamics", q, v, a, g)
    assert tau is not None and tau.shape == (2, 3, robot.n + 6)
    assert _rel(tau, fl._inverse_general(robot, q, v, a, None, g)) < 1e-13
    for i, j in np.ndindex(2, 3):
        np.testing.assert_array_equal(tau[i, j], _entry(robot, "inverse_dynamics", q[i, j], v[i, j], a[i, j], g))
    np.testing.assert_array_equal(rd.floating.floating_inverse_dynamics(robot, q, v, a, gravity=g), tau)
    declined, off, bad = _declined(q, v, a, g)
    for args in declined:
        assert _entry(robot, "inverse_dynamics", *args) is None
    with pytest.raises(rd.InputError, match="quaternion"):
        rd.floating.floating_inverse_dynamics(robot, off, v, a)
    with pytest.raises(rd.InputError, match="'v' contains NaN"):
        rd.floating.floating_inverse_dynamics(robot, q, bad, a)
    assert _rel(rd.floating.floating_inverse_dynamics(robot, q[:, ::2], v[:, ::2], a[:, ::2], gravity=g),
                tau[:, ::2]) < 1e-13


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_a_batch_of_forward_dynamics_in_one_c_call(seed):
    """The free-flyer entry takes a batch of the forward dynamics (the virtual joints at zero, gravity in R_0 and the
    virtual joints' velocity products in C, the articulated-body recursion on the augmented robot): the general
    path's numbers, forward dynamics the inverse of the inverse dynamics, each row its single state bit for bit, the
    public function one C call; what it declines (a quaternion off norm, inf, per-state gravity, float32, a strided
    batch, a singular state) answers None, for the general path's checks and messages."""
    robot = _robot(seed)
    q, v, a = random_free_state(robot.n, seed, batch=(2, 3))
    g = np.array([0.5, -1.0, -9.0])
    tau = rd.floating.floating_inverse_dynamics(robot, q, v, a, gravity=g)
    acc = _entry(robot, "forward_dynamics", q, v, tau, g)
    assert acc is not None and acc.shape == (2, 3, robot.n + 6)
    scale = max(1.0, np.max(np.abs(a)))
    assert np.max(np.abs(acc - fl._forward_general(robot, q, v, tau, None, g))) <= 1e-12 * scale
    assert np.max(np.abs(acc - a)) <= 1e-8 * scale  # forward ∘ inverse = identity
    for i, j in np.ndindex(2, 3):
        np.testing.assert_array_equal(acc[i, j], _entry(robot, "forward_dynamics", q[i, j], v[i, j], tau[i, j], g))
    np.testing.assert_array_equal(rd.floating.floating_forward_dynamics(robot, q, v, tau, gravity=g), acc)
    declined, off, bad = _declined(q, v, tau, g)
    for args in declined:
        assert _entry(robot, "forward_dynamics", *args) is None
    with pytest.raises(rd.InputError, match="quaternion"):
        rd.floating.floating_forward_dynamics(robot, off, v, tau)
    assert _rel(rd.floating.floating_forward_dynamics(robot, q[:, ::2], v[:, ::2], tau[:, ::2], gravity=g),
                acc[:, ::2]) < 1e-13
    leaf = max(j for j in range(robot.nf) if robot.sigma[j] != 2 and j + 1 not in robot.antecedent)
    params = robot.params.copy()
    params[leaf] = 0.0
    singular = robot.replace(params=params, Ia=np.where(np.arange(robot.nf) == leaf, 0.0, robot.Ia))
    assert _entry(singular, "forward_dynamics", q, v, tau, g) is None
    with pytest.raises(rd.ModelError):
        rd.floating.floating_forward_dynamics(singular, q, v, tau, gravity=g)


def test_a_batch_of_one_free_flyer_state_is_its_row_of_a_batch():
    """A (1, ...) or (1, 1, ...) batch of a free flyer takes the single call: the row of a larger batch bit for bit,
    for the three functions, into out= too."""
    robot = _robot(21)
    q, v, a = random_free_state(robot.n, 21, (5,))
    tau = rd.floating.floating_inverse_dynamics(robot, q, v, a)
    calls = ((rd.floating.floating_inverse_dynamics, (q, v, a)), (rd.floating.floating_inertia_matrix, (q,)),
             (rd.floating.floating_forward_dynamics, (q, v, tau)))
    for f, args in calls:
        full = f(robot, *args)
        for k in (0, 4):
            np.testing.assert_array_equal(f(robot, *(x[k:k + 1] for x in args)), full[k:k + 1])
            np.testing.assert_array_equal(f(robot, *(x[k][None, None] for x in args)), full[k][None, None])
        out = np.empty_like(full[:1])
        assert f(robot, *(x[2:3] for x in args), out=out) is out
        np.testing.assert_array_equal(out, full[2:3])

def _numpy_inertia(robot, q):
    """robodyn's NumPy composite-link recursion (Khalil & Dombre Appendix 8), never the kernels."""
    from robodyn.dynamics import composite

    return composite._numpy(robot, np.asarray(q, dtype=np.float64))


def _assert_tree_inertia(seed, nf, count):
    robot = random_robot(seed, nf=nf, tree=True, fixed=True)
    aug = fl.augmented_robot(robot.replace(base="floating", base_params=random_floating(seed).base_params))
    rng = np.random.default_rng(seed)
    for r in (robot, aug):
        q = rng.uniform(-2, 2, (count, r.n))
        if r is aug and count > 1:
            q[: count // 2, :6] = 0.0   # virtual joints at zero in the first blocks' lanes only
        A = native.inertia_matrix(r, q, threads=1)
        assert _rel(A, _numpy_inertia(r, q)) < 1e-12
        for k in {0, count // 2, count - 1}:
            np.testing.assert_array_equal(native.inertia_matrix(r, q[k]), A[k])


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), nf=st.integers(2, 40), count=st.integers(1, 9))
def test_the_tree_rows_equal_the_numpy_recursion(seed, nf, count):
    """A branched robot's inertia matrix, through the (n x n) buffer of lanes (few joints) or written row by row
    (kernels.c: tree_rows, from 26 joints), prismatic and fixed frames, full and partial blocks of states, fixed base
    and a free flyer's augmented robot (virtual joints at zero, and not): the NumPy composite recursion to 1e-12,
    every state alone bit for bit its row of the batch."""
    _assert_tree_inertia(seed, nf, count)


@pytest.mark.parametrize("seed, nf, count", [(1, 45, 9), (2, 32, 6), (3, 27, 1)])
def test_large_trees_take_the_rows(seed, nf, count):
    """As above on trees that surely take tree_rows (26 joints and more, with and without the virtual joints)."""
    _assert_tree_inertia(seed, nf, count)


@pytest.mark.parametrize("name", ["solo12.urdf", "talos_reduced.urdf", "g1_29dof_rev_1_0.urdf"])
def test_example_robot_data_single_states_are_their_batch_rows(name):
    """The free flyers of the benchmarks: each state alone (the one-state C entry) bit for bit its row of a batch of
    4 + 3 states (a full block, a partial one), both the NumPy recursion's numbers to 1e-12."""
    robot = legged_robot(name)
    q = random_free_state(robot.n, 5, (7,))[0]
    M = rd.floating.floating_inertia_matrix(robot, q)
    assert _rel(M, _numpy_inertia(fl.augmented_robot(robot), fl._virtual_q(q))) < 1e-12
    for k in range(7):
        np.testing.assert_array_equal(rd.floating.floating_inertia_matrix(robot, q[k]), M[k])


@pytest.mark.parametrize("batch", [(), (5,), (2, 3)])
def test_floating_inertia_matrix_out(batch):
    """out= of the free-flyer inertia matrix: the allocating call's numbers bit for bit, the buffer returned, no
    other result array on the kernels' batch path; a buffer that does not fit is an InputError naming it, untouched."""
    robot = _robot(11)
    q = random_free_state(robot.n, 11, batch)[0]
    shape = batch + (robot.n + 6, robot.n + 6)
    expected = rd.floating.floating_inertia_matrix(robot, q)
    for f in (rd.floating.floating_inertia_matrix, rd.inertia_matrix):
        out = np.full(shape, np.nan)
        assert f(robot, q, out=out) is out
        np.testing.assert_array_equal(out, expected)
    bad = {"shape": np.empty(shape[:-1] + (shape[-1] + 1,)), "dtype": np.empty(shape, np.float32),
           "order": np.empty(shape[::-1]).T, "read-only": np.broadcast_to(np.empty(shape[-1:]), shape)}
    for what, out in bad.items():
        before = np.array(out, copy=True)
        with pytest.raises(rd.InputError, match="argument 'out'.*give a writeable C-contiguous float64 array"):
            rd.floating.floating_inertia_matrix(robot, q, out=out)
        np.testing.assert_array_equal(np.asarray(out), before)
    q32 = q.astype(np.float32)
    out = np.empty(shape, np.float32)
    np.testing.assert_array_equal(rd.floating.floating_inertia_matrix(robot, q32, out=out),
                                  rd.floating.floating_inertia_matrix(robot, q32))


def test_the_floating_inertia_batch_writes_out_directly(monkeypatch):
    """A float64 batch into out=: the kernels write the buffer, no np.empty / np.zeros of the result's size."""
    robot = _robot(12)
    q = random_free_state(robot.n, 12, (9,))[0]
    out = np.empty((9, robot.n + 6, robot.n + 6))
    rd.floating.floating_inertia_matrix(robot, q, out=out)   # binds
    made = []
    for name in ("empty", "zeros"):
        real = getattr(np, name)
        monkeypatch.setattr(np, name, lambda shape, *a, real=real, **k: made.append(shape) or real(shape, *a, **k))
    assert rd.floating.floating_inertia_matrix(robot, q, out=out) is out
    assert all(np.prod(s) < out.size for s in made)


def test_a_batch_of_inertia_matrices_in_one_c_call():
    """The free-flyer entry takes a float64 batch of the inertia matrix itself (q (..., n + 7), the virtual joints set
    to zero in C): bit for bit the augmented robot's kernels at the virtual q; what it declines (float32, a quaternion
    off norm, NaN) answers None, for the general path's checks and messages."""
    robot = _robot(13)
    q = random_free_state(robot.n, 13, (2, 5))[0]
    run = fl._bind(robot, "inertia_matrix")
    M = run(q, None, None, None)
    np.testing.assert_array_equal(M, native.inertia_matrix(fl.augmented_robot(robot), fl._virtual_q(q)))
    out = np.empty_like(M)
    assert run(q, None, None, None, out) is out
    np.testing.assert_array_equal(out, M)
    bad, nan = q.copy(), q.copy()
    bad[1, 2, 3] += 0.1
    nan[0, 1, 9] = np.nan
    strided = np.repeat(q, 2, axis=-1)[..., ::2]
    for declined in (q.astype(np.float32), bad, nan, strided):
        assert run(declined, None, None, None) is None
    np.testing.assert_array_equal(rd.floating.floating_inertia_matrix(robot, strided), M)
    with pytest.raises(rd.InputError, match="quaternion"):
        rd.floating.floating_inertia_matrix(robot, bad)


def test_floating_inertia_matrix_with_fast_trigonometry():
    """trig="fast": the augmented robot's kernels with the vectorised sincos, bit for bit (a batch in the free-flyer
    entry, one state as a batch of one, each state its batch row), within rounding of the default."""
    robot = _robot(14)
    q = random_free_state(robot.n, 14, (6,))[0]
    M = rd.floating.floating_inertia_matrix(robot, q, trig="fast")
    np.testing.assert_array_equal(M, native.inertia_matrix(fl.augmented_robot(robot), fl._virtual_q(q), trig="fast"))
    np.testing.assert_array_equal(rd.inertia_matrix(robot, q, trig="fast"), M)
    for k in (0, 5):
        np.testing.assert_array_equal(rd.floating.floating_inertia_matrix(robot, q[k], trig="fast"), M[k])
    assert _rel(M, rd.floating.floating_inertia_matrix(robot, q)) < 1e-13
    with pytest.raises(rd.InputError, match="trig"):
        rd.floating.floating_inertia_matrix(robot, q, trig="quick")


@pytest.mark.parametrize("name, seed", [("inverse_dynamics", 15), ("forward_dynamics", 16)])
def test_floating_dynamics_with_fast_trigonometry(name, seed):
    """trig="fast" for a free flyer's inverse and forward dynamics: the kernels with the vectorised sincos (the
    results differ from the default's in the last bits, so they ran), one state bit for bit its row of the batch,
    within rounding of the default (times cond(A) for q̈); out= written and returned, also through rd.<name>."""
    floating, fixed = getattr(rd.floating, "floating_" + name), getattr(rd, name)
    robot = _robot(seed)
    q, v, x = random_free_state(robot.n, seed, (64,))
    y = floating(robot, q, v, x, trig="fast")
    exact = floating(robot, q, v, x)
    bound = 1e-13 if name == "inverse_dynamics" else 1e-14 * np.linalg.cond(rd.floating.floating_inertia_matrix(
        robot, q)).max()
    assert _rel(y, exact) < bound and not np.array_equal(y, exact)
    for k in (0, 5, 63):
        np.testing.assert_array_equal(floating(robot, q[k], v[k], x[k], trig="fast"), y[k])
    out = np.empty_like(y)
    assert fixed(robot, q, v, x, out=out, trig="fast") is out
    np.testing.assert_array_equal(out, y)
    one = np.empty(y.shape[-1])
    assert floating(robot, q[3], v[3], x[3], out=one, trig="fast") is one
    np.testing.assert_array_equal(one, y[3])
    with pytest.raises(rd.InputError, match="trig"):
        floating(robot, q, v, x, trig="quick")


def test_mobile_forward_dynamics_takes_out_and_checks_trig():
    """A mobile base's forward dynamics (its base acceleration given) fills out= and refuses an unknown trig, as a
    floating base's does; trig="fast" computes as by default there."""
    robot = _robot(17, base="mobile")
    q, v, tau = random_free_state(robot.n, 17, (5,))
    acc = np.random.default_rng(17).normal(size=(5, 6))
    a = rd.floating.floating_forward_dynamics(robot, q, v, tau[:, 6:], base_acceleration=acc)
    out = np.empty_like(a)
    assert rd.floating.floating_forward_dynamics(robot, q, v, tau[:, 6:], base_acceleration=acc, out=out,
                                                 trig="fast") is out
    np.testing.assert_array_equal(out, a)
    with pytest.raises(rd.InputError, match="trig"):
        rd.floating.floating_forward_dynamics(robot, q, v, tau[:, 6:], base_acceleration=acc, trig="quick")
