"""The kernels' model of the joint-space dynamics (robodyn.native._folded): every fixed frame folded into the frame
it moves with.  Its torques, inertia matrix, accelerations and derivatives are the NumPy recursions' on the whole
robot up to rounding; what depends on the frames themselves (wrenches per frame, the regressor's columns, the
kinematics) keeps the whole model."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn import native
from robodyn.dynamics import floating as fl
from tests.support.floating import random_floating, random_free_state
from tests.support.kernels import needs_kernels, numpy_path
from tests.support.random_robots import random_robot

pytestmark = needs_kernels


def with_fixed(seed: int, nf: int, tree: bool, fixed: set, massless: bool) -> rd.Robot:
    """A random robot whose frames ``fixed`` are fixed (the first of them massless where ``massless``)."""
    robot = random_robot(seed, nf=nf, tree=tree)
    sigma = robot.sigma.copy()
    sigma[sorted(fixed)] = 2
    moving = sigma != 2
    params = robot.params.copy()
    if massless:
        params[min(fixed)] = 0.0
    return robot.replace(sigma=sigma, params=params, Ia=robot.Ia * moving, Fc=robot.Fc * moving,
                         Fv=robot.Fv * moving, qlim=None, qdlim=None, taulim=None)


@st.composite
def robots_with_fixed_frames(draw):
    nf = draw(st.integers(2, 9))
    fixed = draw(st.sets(st.integers(0, nf - 1), min_size=1, max_size=nf - 1))
    return with_fixed(draw(st.integers(0, 10_000)), nf, draw(st.booleans()), fixed, draw(st.booleans()))


def joined(result):
    """A result as one array: the derivatives' (∂Γ/∂q, ∂Γ/∂q̇) side by side, (..., 2, n, n)."""
    return np.stack(result, -3) if isinstance(result, tuple) else np.asarray(result)


def rel(a, b):
    return np.max(np.abs(a - b), initial=0.0) / max(1.0, np.max(np.abs(b), initial=0.0))


@settings(max_examples=60, deadline=None)
@given(robot=robots_with_fixed_frames(), seed=st.integers(0, 2**32 - 1))
def test_the_folded_model_computes_the_whole_robots_dynamics(robot, seed):
    """Fixed frames at the base (on the fixed base: dropped), in chains of fixed frames, with moving children and
    without, massless or not: each function of a batch and of one state equals the NumPy recursions on the whole
    robot to rounding (the accelerations to rounding times cond(A)), and one state is its batch's row bit for bit."""
    rng = np.random.default_rng(seed)
    q, qd, x = rng.uniform(-1.5, 1.5, (3, 5, robot.n))
    ints, _ = native.packed(robot, fold=True)
    assert ints[0] == robot.n  # one frame per joint is left
    A = numpy_path(rd.inertia_matrix, robot, q)
    tau = numpy_path(rd.inverse_dynamics, robot, q, qd, x)
    cases = [(rd.inverse_dynamics, (q, qd, x), tau, 1e-12), (rd.inertia_matrix, (q,), A, 1e-12),
             (rd.gravity_torques, (q,), numpy_path(rd.gravity_torques, robot, q), 1e-12),
             (rd.bias_torques, (q, qd), numpy_path(rd.bias_torques, robot, q, qd), 1e-12),
             (rd.forward_dynamics, (q, qd, tau), x, max(1e-12 * np.linalg.cond(A).max(), 1e-12)),
             (rd.inverse_dynamics_derivatives, (q, qd, x),
              numpy_path(rd.inverse_dynamics_derivatives, robot, q, qd, x), 1e-12)]
    for fn, args, expected, bound in cases:
        batch = joined(fn(robot, *args))
        assert rel(batch, joined(expected)) < bound, fn.__name__
        one = joined(fn(robot, *(a[2] for a in args)))
        assert np.array_equal(one, batch[2]), fn.__name__
    dq, dqd, _ = rd.forward_dynamics_derivatives(robot, q, qd, tau)
    ref = numpy_path(rd.forward_dynamics_derivatives, robot, q, qd, tau)
    bound = max(1e-11 * np.linalg.cond(A).max() ** 2, 1e-11)
    assert rel(dq, ref[0]) < bound and rel(dqd, ref[1]) < bound


def test_a_robot_without_fixed_frames_keeps_one_model():
    robot = rd.load("puma560")
    module = native._module()
    assert native._dynamics_capsule(robot, module) is native._capsule(robot, module)
    ints, doubles = native.packed(robot, fold=True)
    whole = native.packed(robot)
    assert np.array_equal(ints, whole[0]) and np.array_equal(doubles, whole[1])


def test_what_depends_on_the_frames_keeps_the_whole_model():
    """A wrench on a fixed frame (the whole model's frame, which the folded model has not), the regressor's columns
    of a fixed frame's parameters, and the pose of a fixed frame."""
    robot = with_fixed(7, 6, False, {2, 4, 5}, False)  # a chain: frames 0, 1 and 3 move the fixed ones
    rng = np.random.default_rng(7)
    q, qd, qdd = rng.uniform(-1.5, 1.5, (3, 4, robot.n))
    W = np.zeros((4, robot.nf, 6))
    W[:, 4] = rng.normal(size=(4, 6))
    tau = rd.inverse_dynamics(robot, q, qd, qdd, wrenches=W)
    assert rel(tau, numpy_path(rd.inverse_dynamics, robot, q, qd, qdd, wrenches=W)) < 1e-12
    assert rel(tau, rd.inverse_dynamics(robot, q, qd, qdd)) > 1e-6  # the wrench did act
    Y = rd.regressor(robot, q, qd, qdd)
    assert rel(Y, numpy_path(rd.regressor, robot, q, qd, qdd)) < 1e-12
    assert np.any(Y[..., 11 * 4:11 * 4 + 10] != 0.0)  # the fixed frame's own columns
    T = rd.forward_kinematics(robot, q)
    assert T.shape == (4, robot.nf, 4, 4)
    assert rel(T, numpy_path(rd.forward_kinematics, robot, q)) < 1e-12


@pytest.mark.parametrize("seed", [3, 11])
def test_a_free_flyers_fixed_frames_fold_into_its_base_and_links(seed):
    """A floating robot with fixed frames: its augmented robot's dynamics model has one frame per joint (the six
    virtual joints' frames kept, the base body on the last of them), and the free-flyer entry, one state and a
    batch, computes the NumPy path's results."""
    robot = random_floating(seed, nf=7)
    augmented = fl.augmented_robot(robot)
    assert np.any(augmented.sigma == 2)
    assert native.packed(augmented, fold=True)[0][0] == augmented.n
    q, v, a = random_free_state(robot.n, seed, (3,))
    tau = numpy_path(fl.floating_inverse_dynamics, robot, q, v, a)
    M = numpy_path(fl.floating_inertia_matrix, robot, q)
    for fn, args, expected in ((fl.floating_inverse_dynamics, (q, v, a), tau), (fl.floating_inertia_matrix, (q,), M),
                               (fl.floating_forward_dynamics, (q, v, tau), a)):
        bound = 1e-12 if fn is not fl.floating_forward_dynamics else 1e-12 * np.linalg.cond(M).max()
        batch = fn(robot, *args)
        assert rel(batch, expected) < bound, fn.__name__
        assert np.array_equal(fn(robot, *(x[1] for x in args)), batch[1]), fn.__name__
