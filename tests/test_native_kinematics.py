"""Kinematics and task-space dynamics on robodyn.native's kernels: equal to robodyn's NumPy recursions (the same
public functions with ROBODYN_NATIVE=0) on random serial and branched robots with prismatic and fixed frames, a
single state equal to its row of a batch bit for bit, and every input the kernels do not take on the NumPy path."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import robodyn as rd
from robodyn import kinematics as kin
from robodyn import native
from robodyn.dynamics import task_space as ts
from tests.support.kernels import needs_kernels, numpy_path
from tests.support.random_robots import random_robot

pytestmark = needs_kernels


def rel(a, b):
    return np.max(np.abs(np.asarray(a) - np.asarray(b)), initial=0.0) / max(1.0, np.max(np.abs(b), initial=0.0))


def base_poses(robot, q):
    R0, P0 = kin.base_poses(robot, np.asarray(q, float), np.float64)
    return np.concatenate([R0.reshape(R0.shape[:-2] + (9,)), P0], -1)


def kinematics_calls(robot, q, qd, qdd, frame, point):
    """Every kinematics function routed to the kernels, on one argument set."""
    return {
        "poses": lambda: kin.forward_kinematics(robot, q),
        "jacobian": lambda: kin.jacobian(robot, q, frame=frame),
        "jacobian_point": lambda: kin.jacobian(robot, q, frame=frame, point=point),
        "jdq": lambda: kin.jacobian_dot_qd(robot, q, qd, frame=frame),
        "jdq_point": lambda: kin.jacobian_dot_qd(robot, q, qd, frame=frame, point=point),
        "jdot": lambda: ts.jacobian_derivative(robot, q, qd, frame=frame),
        "jdot_point": lambda: ts.jacobian_derivative(robot, q, qd, frame=frame, point=point),
        "velocities": lambda: np.stack(kin.link_velocities(robot, q, qd)),
        "accelerations": lambda: np.stack(kin.link_accelerations(robot, q, qd, qdd)),
        "base_poses": lambda: base_poses(robot, q),
    }


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), tree=st.booleans(), size=st.sampled_from([1, 5, 9]))
def test_random_robots_equal_numpy(seed, tree, size):
    """Trees, prismatic and fixed frames: the kernels give the NumPy numbers to 1e-12, one state and batches."""
    robot = random_robot(seed, tree=tree, fixed=True)
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-1.5, 1.5, (3, size, robot.n))
    if size == 1:
        q, qd, qdd = q[0], qd[0], qdd[0]
    frame = int(rng.integers(1, robot.nf + 1))
    point = rng.normal(size=q.shape[:-1] + (3,))
    for name, fn in kinematics_calls(robot, q, qd, qdd, frame, point).items():
        fast = fn()
        slow = numpy_path(fn)
        assert fast.shape == slow.shape and fast.dtype == slow.dtype == np.float64, name
        assert rel(fast, slow) < 1e-12, name


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), tree=st.booleans())
def test_batch_equals_single_bit_for_bit(seed, tree):
    """A batch (threaded, four states per SIMD block) and each of its states alone give identical numbers."""
    robot = random_robot(seed, tree=tree, fixed=True)
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-1.5, 1.5, (3, 11, robot.n))
    frame = int(rng.integers(1, robot.nf + 1))
    point = rng.normal(size=(11, 3))
    batch = {k: fn() for k, fn in kinematics_calls(robot, q, qd, qdd, frame, point).items() if k != "base_poses"}
    for s in (0, 3, 4, 10):
        one = kinematics_calls(robot, q[s], qd[s], qdd[s], frame, point[s])
        for name, value in batch.items():
            axis = 1 if name in ("velocities", "accelerations") else 0
            np.testing.assert_array_equal(np.take(value, s, axis=axis), one[name](), err_msg=name)


def test_threads_give_identical_results():
    robot = random_robot(4, nf=7, tree=True, fixed=True)
    q, qd = np.random.default_rng(4).uniform(-1, 1, (2, 3000, robot.n))
    one = native.kinematics_batch(robot, "jacobian_dot_qd", (3000,), q, qd, frame=robot.nf - 1, threads=1)
    many = native.kinematics_batch(robot, "jacobian_dot_qd", (3000,), q, qd, frame=robot.nf - 1, threads=4)
    np.testing.assert_array_equal(one, many)


@pytest.mark.parametrize("name", ["panda", "puma560", "stanford", "wam7"])
def test_builtin_robots_agree_with_pinocchio(name):
    pin_bridge = pytest.importorskip("tests.support.pin_bridge")
    robot = rd.load(name)
    pr = pin_bridge.PinRobot(robot)
    rng = np.random.default_rng(2)
    for q in rng.uniform(-1, 1, (3, robot.n)):
        for frame in range(1, robot.nf + 1):
            np.testing.assert_allclose(rd.forward_kinematics(robot, q)[frame - 1], pr.placement(q, frame),
                                       atol=1e-12)
            np.testing.assert_allclose(rd.jacobian(robot, q, frame=frame), pr.jacobian(q, frame), atol=1e-12)


def test_other_inputs_take_the_numpy_path(monkeypatch):
    """float32, lists, non-finite input and ROBODYN_NATIVE=0 keep the NumPy path's dtypes and messages."""
    robot = rd.load("puma560")
    q = np.linspace(-1, 1, robot.n)
    assert kin.forward_kinematics(robot, q.astype(np.float32)).dtype == np.float32
    assert kin.jacobian(robot, q.astype(np.float32)).dtype == np.float32
    np.testing.assert_array_equal(kin.jacobian(robot, list(q)), kin.jacobian(robot, q))
    with pytest.raises(rd.RobodynError, match="q"):
        kin.jacobian(robot, np.full(robot.n, np.nan))
    with pytest.raises(rd.RobodynError, match="frame"):
        kin.jacobian(robot, q, frame=robot.nf + 1)
    with pytest.raises(rd.RobodynError, match="point"):
        kin.jacobian_dot_qd(robot, q, q, point=np.ones(4))
    with pytest.raises(rd.RobodynError, match="qdd"):
        kin.link_accelerations(robot, q, q, np.full(robot.n, np.inf))
    with pytest.raises(rd.RobodynError, match="qd"):
        ts.jacobian_derivative(robot, q, q[:-1])
    with pytest.raises(rd.RobodynError, match="frame"):
        ts.jacobian_derivative(robot, q, q, frame=0)
    for res, kind in ((kin.link_accelerations(robot, q, q, q), kin.LinkAccelerations),
                      (kin.link_velocities(robot, q, q), kin.LinkVelocities)):
        assert type(res) is kind and all(x.shape == (robot.nf, 3) and x.flags.owndata for x in res)
    monkeypatch.setenv("ROBODYN_NATIVE", "0")
    assert native.kinematics_state(robot, "frame_poses", q) is None
    assert native.kinematics_batch(robot, "frame_poses", (1,), q[None]) is None


def task_terms(res):
    return [res.Lambda, res.mu, res.p, res.J, res.Jdot_qd, res.Jbar, res.null_projector]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), tree=st.booleans(), damping=st.sampled_from([0.0, 0.05]))
def test_task_space_single_state_equals_numpy(seed, tree, damping):
    """The one-call task space of a state (Cholesky factorisations in C) equals the NumPy assembly (LU) to the
    rounding both carry: 1e-12 times the condition numbers of A and J A⁻¹ Jᵀ."""
    robot = random_robot(seed, tree=tree, fixed=True)
    rng = np.random.default_rng(seed)
    q, qd = rng.uniform(-1.5, 1.5, (2, robot.n))
    m = int(rng.integers(1, min(robot.n, 6) + 1))
    rows = [int(r) for r in rng.permutation(6)[:m]]
    frame = robot.nf
    point = rng.normal(size=3)

    def call():
        return ts.task_space_dynamics(robot, q, qd, frame=frame, point=point, rows=rows, damping=damping,
                                      rcond=1e-6)

    J = kin.jacobian(robot, q, frame=frame, point=point)[rows]
    # a structurally zero or dependent row (a planar arm's v_z) is rounding noise on the NumPy path: no task there
    assume(np.linalg.svd(J, compute_uv=False).min() > 1e-6 * max(1.0, np.abs(J).max()))
    try:
        slow = numpy_path(call)
    except ts.SingularConfigurationError:
        with pytest.raises(ts.SingularConfigurationError):
            call()
        return
    fast = call()
    A = rd.inertia_matrix(robot, q)
    J = slow.J
    Phi = J @ np.linalg.solve(A, J.T) + damping**2 * np.eye(m)
    bound = 1e-13 * np.linalg.cond(A) * np.linalg.cond(Phi)
    for a, b in zip(task_terms(fast), task_terms(slow)):
        assert a.shape == b.shape
        assert rel(a, b) < max(bound, 1e-12)


def test_task_space_panda_equals_numpy_and_batch():
    robot = rd.load("panda")
    rng = np.random.default_rng(7)
    q, qd = rng.uniform(-1, 1, (2, 6, robot.n))
    for rows in (None, [0, 1, 2], [5, 2]):
        batch = ts.task_space_dynamics(robot, q, qd, rows=rows)
        for s in range(6):
            fast = ts.task_space_dynamics(robot, q[s], qd[s], rows=rows)
            slow = numpy_path(lambda: ts.task_space_dynamics(robot, q[s], qd[s], rows=rows))
            for a, b, c in zip(task_terms(fast), task_terms(slow), task_terms(batch)):
                scale = 1e-12 if rows is not None else 1e-10  # six rows of a seven-joint arm: Λ carries cond ~1e3
                assert rel(a, b) < scale
                np.testing.assert_array_equal(a, c[s])  # a batch runs each state by the single state's code


def test_task_space_singular_state_still_explained():
    robot = rd.load("panda")
    q = np.random.default_rng(3).uniform(-1, 1, (4, robot.n))
    q[2] = 0.0
    with pytest.raises(ts.SingularConfigurationError, match=r"q\[2\]"):
        ts.task_space_dynamics(robot, q, np.zeros_like(q))
    with pytest.raises(ts.SingularConfigurationError, match="singular"):
        ts.task_space_dynamics(robot, np.zeros(robot.n), np.zeros(robot.n))
    with pytest.raises(rd.RobodynError, match="rows"):
        ts.task_space_dynamics(robot, np.zeros(robot.n), np.zeros(robot.n), rows=[0, 0])
    with pytest.raises(rd.RobodynError, match="damping"):
        ts.task_space_dynamics(robot, np.zeros(robot.n), np.zeros(robot.n), damping=-1.0)


def null_terms(res):
    return [res.Lambda_n, res.mu_n, res.p_n, res.Z, res.Zbar, res.v_n, res.Zbar_dot_qd]


@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.filter_too_much])
@given(seed=st.integers(0, 10_000), tree=st.booleans())
def test_null_space_dynamics_equals_numpy_and_batch(seed, tree):
    """Null-space dynamics on the kernels' terms (J̇, A, H, Q and Ȧ x from the inverse-dynamics derivatives) equals
    the NumPy path (Ȧ from the analytic partials of A) to the rounding both carry, 1e-13 (‖J‖ + ‖J̇‖) / σ_min(J_d)
    cond(Λ_n); a batch equals its states one by one to the same bound.  Random trees often give a structurally zero
    task row or J_d (filtered out), hence fixed examples."""
    robot = random_robot(seed, tree=tree, fixed=True)
    assume(robot.n >= 2)
    rng = np.random.default_rng(seed)
    q, qd = rng.uniform(-1.5, 1.5, (2, 3, robot.n))
    m = int(rng.integers(1, min(robot.n - 1, 6) + 1))
    rows = [int(r) for r in rng.permutation(6)[:m]]
    J = kin.jacobian(robot, q, frame=robot.nf)[..., rows, :]
    # structurally zero or dependent rows and columns are rounding noise on one path: no task there
    assume(np.linalg.svd(J, compute_uv=False).min() > 1e-6 * max(1.0, np.abs(J).max()))
    assume(np.linalg.svd(J[..., :m], compute_uv=False).min() > 1e-6 * max(1.0, np.abs(J).max()))

    def call(q, qd):
        return ts.null_space_dynamics(robot, q, qd, frame=robot.nf, rows=rows, rcond=1e-6)

    try:
        slow = numpy_path(lambda: call(q, qd))
    except rd.RobodynError:
        return  # a singular task or model: its message is the NumPy path's, tested in test_null_space.py
    fast = call(q, qd)
    # the rounding of J and J̇ (ε ‖J‖, ε ‖J̇‖) goes through J_d⁻¹ into Z, Ż and through Λ_n⁻¹ into Z̄, Ż̄ q̇
    Jdot = ts.jacobian_derivative(robot, q, qd, frame=robot.nf)[..., rows, :]
    size = np.linalg.norm(J, 2, axis=(-2, -1)) + np.linalg.norm(Jdot, 2, axis=(-2, -1))
    kappa = size / np.linalg.svd(J[..., :m], compute_uv=False).min(-1) * np.linalg.cond(slow.Lambda_n)
    bound = max(1e-12, 1e-13 * np.max(kappa))
    for a, b in zip(null_terms(fast), null_terms(slow)):
        assert a.shape == b.shape and a.dtype == b.dtype == np.float64
        assert rel(a, b) < bound
    for s in range(3):
        for a, b in zip(null_terms(call(q[s], qd[s])), null_terms(fast)):
            assert rel(a, b[s]) < bound
