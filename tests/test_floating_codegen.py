"""rd.compile of a floating-base robot: the augmented robot's customized model called with free-flyer arrays
(robodyn.symbolic.floating) equals rd.floating_inverse_dynamics / floating_inertia_matrix."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import robodyn as rd
from tests.support.pin_compare import assert_rel
from tests.test_floating import _random_floating, random_free_state

needs_cc = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")


@needs_cc
@pytest.mark.parametrize("seed", [5, 6])
def test_compiled_floating_inverse_dynamics_equals_the_numeric_one(seed):
    robot = _random_floating(seed, tree=True, nf=4)
    f = rd.compile(robot, "inverse_dynamics")
    assert f.model.robot.n == robot.n + 6  # the generated C takes the augmented arrays
    q, v, a = random_free_state(robot.n, seed, (3,))
    assert_rel(f(q, v, a), rd.floating_inverse_dynamics(robot, q, v, a), 1e-12)
    assert_rel(f(q[1], v[1], a[1]), rd.floating_inverse_dynamics(robot, q[1], v[1], a[1]), 1e-12)
    W = np.random.default_rng(seed).normal(size=(3, robot.nf, 6))
    g = np.array([0.5, -1.0, -9.0])
    assert_rel(f(q, v, a, wrenches=W, gravity=g), rd.floating_inverse_dynamics(robot, q, v, a, wrenches=W, gravity=g), 1e-12)
    mobile = robot.replace(base="mobile")
    assert_rel(rd.compile(mobile, "inverse_dynamics")(q, v, a), rd.floating_inverse_dynamics(mobile, q, v, a), 1e-12)


def test_compiled_floating_models_with_the_numpy_backend():
    robot = _random_floating(7, tree=False, nf=3)
    q, v, a = random_free_state(robot.n, 7, (2,))
    f = rd.compile(robot, "idm", backend="numpy")
    assert_rel(f(q, v, a), rd.floating_inverse_dynamics(robot, q, v, a), 1e-12)
    M = rd.compile(robot, "inertia_matrix", backend="numpy")(q)
    assert M.shape == (2, robot.n + 6, robot.n + 6)
    assert_rel(M, rd.floating_inertia_matrix(robot, q), 1e-12)


def test_compiled_floating_errors():
    robot = _random_floating(8, tree=False, nf=3)
    with pytest.raises(rd.InputError, match="floating base"):
        rd.compile(robot, "forward_dynamics", backend="numpy")
    with pytest.raises(rd.InputError, match="cuda"):
        rd.compile(robot, backend="cuda")
    f = rd.compile(robot, "inverse_dynamics", backend="numpy")
    q, v, a = random_free_state(robot.n, 8, (1,))
    with pytest.raises(rd.InputError, match="'q'.*shape"):
        f(q[..., :-1], v, a)
    with pytest.raises(rd.InputError, match="quaternion"):
        f(np.concatenate([q[..., :3], 3 * q[..., 3:7], q[..., 7:]], -1), v, a)
    with pytest.raises(rd.InputError, match="wrenches"):
        f(q, v, a, wrenches=np.zeros((robot.nf + 1, 6)))
    with pytest.raises(rd.InputError, match="called as"):
        f(q, v)


@needs_cc
def test_compiled_quadruped_inverse_dynamics():
    import warnings

    from tests.test_floating import URDFS

    if "solo12.urdf" not in URDFS:
        pytest.skip("solo12.urdf is not in the installed example-robot-data")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        robot = rd.load(URDFS["solo12.urdf"], floating=True, strict=False)
    q, v, a = random_free_state(robot.n, 9, (4,))
    f = rd.compile(robot, "inverse_dynamics")
    assert_rel(f(q, v, a), rd.floating_inverse_dynamics(robot, q, v, a), 1e-12)
