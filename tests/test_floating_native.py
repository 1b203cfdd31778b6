"""One free-flyer state in one C call (robodyn.native's floating entry, the executor's single-state entry of the
free-flyer functions): the same numbers as the batched path, on random floating trees (prismatic joints, fixed frames, friction,
rotor inertias) and mobile bases; everything the entry declines falls back to the paths that check and explain."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn.dynamics import floating as fl
from tests.support.floating import random_floating, random_free_state
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
    off, bad = q.copy(), v.copy()
    off[1, 2, 3:7] *= 1.01
    bad[0, 1, 4] = np.inf
    assert _entry(robot, "inverse_dynamics", off, v, a) is None
    assert _entry(robot, "inverse_dynamics", q, bad, a) is None
    assert _entry(robot, "inverse_dynamics", q, v, a, np.tile(g, (2, 3, 1))) is None
    assert _entry(robot, "inverse_dynamics", q.astype(np.float32), v, a) is None
    assert _entry(robot, "inverse_dynamics", q[:, ::2], v[:, ::2], a[:, ::2]) is None
    with pytest.raises(rd.InputError, match="quaternion"):
        rd.floating.floating_inverse_dynamics(robot, off, v, a)
    with pytest.raises(rd.InputError, match="'v' contains NaN"):
        rd.floating.floating_inverse_dynamics(robot, q, bad, a)
    assert _rel(rd.floating.floating_inverse_dynamics(robot, q[:, ::2], v[:, ::2], a[:, ::2], gravity=g),
                tau[:, ::2]) < 1e-13
