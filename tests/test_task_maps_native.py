"""Task maps on robodyn.native's task-space kernel: the map's J and J̇ q̇ go into the dense algebra of the frame task
in C (Λ, μ, p, J̄, N by Cholesky factorisations).  Equal to the NumPy path (ROBODYN_NATIVE=0: NumPy's LU) to
1e-10 relative on the Panda and a UR5, to the rounding both carry on random chains; a batch equal to its states
one by one bit for bit; singular states, rank loss and bad maps give the NumPy path's errors."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import robodyn as rd
from robodyn import native
from robodyn.dynamics import task_space as ts
from robodyn.spatial import rot_x, rot_z
from tests.support.checks import example_robot_data_path
from tests.support.kernels import needs_kernels
from tests.support.random_robots import random_robot

pytestmark = needs_kernels


class FrameRows:
    """A task map of no robodyn class: rows of a frame's Jacobian, as any user's object with the two methods."""

    def __init__(self, frame, rows):
        self.frame, self.rows = frame, rows

    def jacobian(self, robot, q):
        return rd.jacobian(robot, q, frame=self.frame)[..., self.rows, :]

    def jacobian_dot_qd(self, robot, q, qd):
        return rd.jacobian_dot_qd(robot, q, qd, frame=self.frame)[..., self.rows]


@functools.lru_cache(maxsize=None)
def load(name: str) -> rd.Robot:
    if name == "ur5":
        return rd.from_urdf(example_robot_data_path("ur_description/urdf/ur5_robot.urdf"))
    return rd.load(name)


def task_maps(robot, q, rng) -> list:
    """RelativePosition (end point from frame 1), OrientationError (a target within 1 rad of the end frame's
    orientation: η ≥ cos ½, away from the map's rank loss at θ = π) and two rows of the end frame's Jacobian."""
    end = robot.derived.end_frame
    R = rd.forward_kinematics(robot, q)[end - 1, :3, :3]
    target = R @ rot_z(rng.uniform(-0.7, 0.7)) @ rot_x(rng.uniform(-0.7, 0.7))
    return [ts.RelativePosition(1, end, point_b=rng.uniform(-0.2, 0.2, 3)), ts.OrientationError(end, target),
            FrameRows(end, [int(r) for r in rng.permutation(6)[:2]])]


def terms(res) -> list:
    return [res.Lambda, res.mu, res.p, res.J, res.Jdot_qd, res.Jbar, res.null_projector]


def numpy_path(fn):
    """``fn()`` with robodyn's compiled kernels switched off (the NumPy recursions and NumPy's linear algebra)."""
    with pytest.MonkeyPatch.context() as m:
        m.setenv("ROBODYN_NATIVE", "0")
        return fn()


def rel(a, b) -> float:
    return float(np.max(np.abs(a - b), initial=0.0) / max(1.0, np.max(np.abs(b), initial=0.0)))


def check_equals_numpy(robot, q, qd, task, damping, least=1e-12, factor=1e-13):
    """The kernel's result of ``task`` equals the NumPy path's to the rounding both carry, ``factor`` cond(A)
    cond(J A⁻¹ Jᵀ) (LU there and Cholesky here) but at least ``least``, or both raise SingularConfigurationError."""
    def call():
        return ts.task_space_dynamics(robot, q, qd, task=task, damping=damping, rcond=1e-7)

    J = task.jacobian(robot, q)
    if np.linalg.svd(J, compute_uv=False).min() < 1e-6 * max(1.0, np.abs(J).max()):
        return   # a structurally dependent row (a planar chain's v_z) is rounding noise on one path: no task there
    try:
        slow = numpy_path(call)
    except ts.SingularConfigurationError:
        with pytest.raises(ts.SingularConfigurationError, match="task map"):
            call()
        return
    fast = call()
    A, J = rd.inertia_matrix(robot, q), slow.J
    Phi = J @ np.linalg.solve(A, J.T) + damping**2 * np.eye(J.shape[0])
    tolerance = max(least, factor * np.linalg.cond(A) * np.linalg.cond(Phi))
    for a, b in zip(terms(fast), terms(slow)):
        assert a.shape == b.shape and a.dtype == np.float64
        assert rel(a, b) < tolerance


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), name=st.sampled_from(["panda", "ur5"]), damping=st.sampled_from([0.0, 0.05]))
def test_named_robots_equal_numpy(seed, name, damping):
    robot = load(name)
    rng = np.random.default_rng(seed)
    q, qd = rng.uniform(-1.5, 1.5, (2, robot.n))
    for task in task_maps(robot, q, rng):
        # 1e-10, more only near a singularity (cond(A) cond(J A⁻¹ Jᵀ) > 1e4; ε times that is the rounding)
        check_equals_numpy(robot, q, qd, task, damping, least=1e-10, factor=1e-14)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), tree=st.booleans(), damping=st.sampled_from([0.0, 0.05]))
def test_random_chains_equal_numpy(seed, tree, damping):
    robot = random_robot(seed, nf=4 + seed % 4, tree=tree, fixed=True)   # n ≥ 3 = m: one frame at most is fixed
    rng = np.random.default_rng(seed)
    q, qd = rng.uniform(-1.5, 1.5, (2, robot.n))
    for task in task_maps(robot, q, rng):
        check_equals_numpy(robot, q, qd, task, damping)


@pytest.mark.parametrize("name", ["panda", "ur5", "random"])
def test_batch_equals_states_bit_for_bit(name):
    """Each state of a batch (2-D batch axes; 300 states, threaded) by the single state's code: the same bits."""
    robot = random_robot(11, nf=6, tree=True, fixed=True) if name == "random" else load(name)
    rng = np.random.default_rng(2)
    for shape in ((2, 3), (300,)):
        q, qd = rng.uniform(-1.2, 1.2, (2,) + shape + (robot.n,))
        for task in task_maps(robot, q.reshape(-1, robot.n)[0], rng):
            batch = ts.task_space_dynamics(robot, q, qd, task=task, damping=0.01)
            for s in np.ndindex(shape):
                one = ts.task_space_dynamics(robot, q[s], qd[s], task=task, damping=0.01)
                for a, b in zip(terms(one), terms(batch)):
                    np.testing.assert_array_equal(a, b[s])
    one = native.task_space_state(robot, q[0], qd[0], 0, None, range(2), 0.01, 1e-8, task.jacobian(robot, q[0]),
                                  task.jacobian_dot_qd(robot, q[0], qd[0]))
    assert one is not None   # the kernel serves the map (None: it declined, and the NumPy path answered above)
    for a, b in zip(one, terms(batch)):
        np.testing.assert_array_equal(a, b[0])
    listed = ts.task_space_dynamics(robot, q[0].tolist(), qd[0].tolist(), task=task, damping=0.01)
    for a, b in zip(terms(listed), terms(batch)):   # a list takes the checked path, the same kernel
        np.testing.assert_array_equal(a, b[0])


def test_singular_states_and_rank_loss_raise_the_numpy_paths_errors():
    robot = load("panda")
    q = np.random.default_rng(3).uniform(-1, 1, (4, robot.n))
    q[2] = 0.0   # the Panda's zero configuration: its end frame's six rows lose rank
    with pytest.raises(ts.SingularConfigurationError, match=r"task map FrameRows is singular at q\[2\]"):
        ts.task_space_dynamics(robot, q, np.zeros_like(q), task=FrameRows(7, list(range(6))))
    with pytest.raises(ts.SingularConfigurationError, match="task map FrameRows is singular at q ="):
        ts.task_space_dynamics(robot, q[2], np.zeros(robot.n), task=FrameRows(7, list(range(6))))
    same = ts.RelativePosition(7, 7)   # J = 0
    with pytest.raises(ts.SingularConfigurationError, match="RelativePosition"):
        ts.task_space_dynamics(robot, q[0], np.zeros(robot.n), task=same)
    damped = ts.task_space_dynamics(robot, q, np.zeros_like(q), task=FrameRows(7, list(range(6))), damping=0.1)
    reference = numpy_path(lambda: ts.task_space_dynamics(robot, q, np.zeros_like(q),
                                                          task=FrameRows(7, list(range(6))), damping=0.1))
    for a, b in zip(terms(damped), terms(reference)):
        assert rel(a, b) < 1e-10
    ur5 = load("ur5")
    with pytest.raises(rd.InputError, match="m = 7 rows .* n = 6 joints"):
        ts.task_space_dynamics(ur5, np.zeros(6), np.zeros(6), task=FrameRows(9, [0, 1, 2, 3, 4, 5, 0]))


def test_more_than_six_rows_and_other_dtypes_take_the_numpy_path():
    robot = load("panda")
    rng = np.random.default_rng(4)
    q, qd = rng.uniform(-1, 1, (2, robot.n))
    seven = FrameRows(7, [0, 1, 2, 3, 4, 5, 0])   # m = 7 = n: not in the kernel (m ≤ 6), dependent rows
    with pytest.raises(ts.SingularConfigurationError):
        ts.task_space_dynamics(robot, q, qd, task=seven)
    single = ts.task_space_dynamics(robot, q.astype(np.float32), qd.astype(np.float32), task=FrameRows(7, [0, 1]))
    assert single.Lambda.dtype == np.float32
    reference = ts.task_space_dynamics(robot, q, qd, task=FrameRows(7, [0, 1]))
    assert rel(single.Lambda, reference.Lambda) < 1e-4   # float32 rounding through cond(A) cond(J A⁻¹ Jᵀ) ~ 1e2


class WrongShape(FrameRows):
    def jacobian(self, robot, q):
        return np.swapaxes(super().jacobian(robot, q), -1, -2)


def test_a_map_of_the_wrong_shape_is_refused_by_name():
    robot = load("panda")
    q = np.full(robot.n, 0.3)
    for qq in (q, np.stack([q, q])):
        with pytest.raises(rd.InputError, match=r"WrongShape gives a Jacobian of shape .*\(\.\.\., m, 7\)"):
            ts.task_space_dynamics(robot, qq, np.zeros_like(qq), task=WrongShape(7, [0, 1]))
