"""The customized regressor has the columns of ``rd.regressor`` (standard parameters) and of
``rd.base_parameters(robot).regressor`` (base parameters, ``.names`` order), numerically equal."""

import numpy as np
import pytest

import robodyn as rd
from robodyn.parameters import standard_parameter_names, standard_parameter_vector
from robodyn.symbolic import customized_model
from tests.support.random_robots import random_robot, random_state


def robots():
    yield rd.load("rx90")
    yield rd.load("puma560")
    yield random_robot(11, tree=True, fixed=True)
    yield random_robot(4, prismatic=True)


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * max(1.0, np.abs(b).max()))


@pytest.mark.parametrize("robot", list(robots()), ids=lambda r: r.name)
def test_standard_columns_equal_rd_regressor(robot):
    q, qd, qdd = random_state(robot, 1, (4,))
    for friction in (True, False):
        m = customized_model(robot, "regressor", friction=friction)
        assert m.column_names == standard_parameter_names(robot, friction)
        Phi = m.numpy_function()(q, qd, qdd)
        assert Phi.shape == (4, robot.n, 11 * robot.nf + 3 * robot.n * friction)
        close(Phi, rd.regressor(robot, q, qd, qdd, friction=friction))
    close(Phi @ standard_parameter_vector(robot, False), rd.inverse_dynamics(robot, q, qd, qdd)
          - rd.friction_torques(robot, qd))


@pytest.mark.parametrize("robot", list(robots()), ids=lambda r: r.name)
def test_base_columns_equal_base_parameter_regressor(robot):
    q, qd, qdd = random_state(robot, 2, (3,))
    for friction in (False, True):
        bp = rd.base_parameters(robot, friction=friction)
        m = customized_model(robot, "regressor", parameters="base", friction=friction)
        assert m.column_names == list(bp.names)
        Phi = m.numpy_function()(q, qd, qdd)
        close(Phi, bp.regressor(q, qd, qdd))
    # the base model reproduces the standard one: D_B K_B = D K [9.40]
    close(Phi @ bp.values, rd.regressor(robot, q, qd, qdd) @ standard_parameter_vector(robot))
