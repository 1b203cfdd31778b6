"""The friction default of rd.base_parameters follows rd.regressor (staged: a DeprecationWarning while it changes)."""

import warnings

import numpy as np
import pytest

import robodyn as rd
from tests.support.random_robots import random_state


def test_base_parameters_without_friction_warns_and_keeps_the_rigid_body_set():
    robot = rd.load("planar2r")
    with pytest.warns(DeprecationWarning, match="friction=False.*default becomes friction=True") as rec:
        bp = rd.base_parameters(robot, method="numeric")
    assert rec[0].filename == __file__  # points at the caller
    assert not bp.friction
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rigid = rd.base_parameters(robot, method="numeric", friction=False)
        full = rd.base_parameters(robot, method="numeric", friction=True)
    assert bp.names == rigid.names and full.count == rigid.count + 3 * robot.n
    q, qd, qdd = random_state(robot, 1, (4,))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    # friction=True describes the same torques as rd.regressor's default and rd.inverse_dynamics
    np.testing.assert_allclose(full.regressor(q, qd, qdd) @ full.values, tau, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(rd.regressor(robot, q, qd, qdd) @ rd.parameters.standard_parameter_vector(robot), tau,
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(rigid.regressor(q, qd, qdd) @ rigid.values, tau - rd.friction_torques(robot, qd),
                               rtol=1e-10, atol=1e-10)


def test_robodyn_itself_passes_friction_explicitly():
    """The library's own callers (the base-parameter symbolic models) name the set they use: no warning, and the
    rigid-body set (no friction parameters among the names)."""
    from robodyn.symbolic.baseparams import base_inertia

    robot = rd.load("planar2r")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        values, names = base_inertia(robot)
    expected = rd.base_parameters(robot, friction=False)
    assert values.shape == (robot.nf, 11)
    assert np.count_nonzero(values) <= expected.count
    assert sorted(v for v in np.ravel(values) if v != 0) == sorted(v for v in expected.values if v != 0)
