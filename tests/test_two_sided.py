"""Kozłowski's two-sided formulation (3.1)–(3.14), Rodriguez's two-point boundary-value problem with the corrected
bias force b_k, against the Newton–Euler recursion (Khalil & Dombre [9.84]–[9.94]) and the one-sided spatial form
(3.24)–(3.33): Kozłowski's equivalence theorem (§3), checked to 1e-10 relative (max|a − b| ≤ 1e-10 · max|b|)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

import robodyn as rd
from robodyn.analysis.opcount import count_operations, counting_robot
from robodyn.dynamics import newton_euler as ne
from robodyn.dynamics import spatial_operator as so
from robodyn.dynamics import two_sided as ts
from tests.support.checks import assert_close, wrenches_for
from tests.support.random_robots import random_state, robots


@given(robots)
def test_equivalent_to_newton_euler_on_random_robots(robot):
    q, qd, qdd = random_state(robot, 5, batch=(3,))
    W = wrenches_for(robot, 5)
    tau = ts.inverse_dynamics(robot, q, qd, qdd, wrenches=W)
    assert_close(tau, ne.inverse_dynamics(robot, q, qd, qdd, wrenches=W))
    assert_close(tau, so.inverse_dynamics(robot, q, qd, qdd, wrenches=W))


@pytest.mark.parametrize("name", ["puma560", "rx90", "planar2r", "stanford"])
def test_builtin_robots_through_the_public_method(name):
    if name not in rd.list_robots():
        pytest.skip(f"{name} is not built in")
    robot = rd.load(name)
    q, qd, qdd = random_state(robot, 4, batch=(5,))
    assert_close(rd.inverse_dynamics(robot, q, qd, qdd, method="two_sided"), ne.inverse_dynamics(robot, q, qd, qdd))
    # one state and float32 go the same way
    assert_close(rd.inverse_dynamics(robot, q[0], qd[0], qdd[0], method="two_sided"),
                 ne.inverse_dynamics(robot, q[0], qd[0], qdd[0]))
    t32 = rd.inverse_dynamics(robot, *(x.astype(np.float32) for x in (q, qd, qdd)), method="two_sided")
    assert t32.dtype == np.float32


def test_counted_like_the_other_formulations():
    """The two-sided form costs more than the one-sided (3.24)–(3.33) (Kozłowski §4.1: "slightly slower due to the
    notation ... which recognizes spatial quantities on both sides of each joint"); the counted evaluation equals
    the float one."""
    robot = counting_robot(6)
    tally, traced, plain = count_operations(robot, "inverse_dynamics", "two_sided")
    one_sided, _, _ = count_operations(robot, "inverse_dynamics", "spatial_operator")
    np.testing.assert_allclose(traced, plain, rtol=1e-13)
    assert tally.mul > one_sided.mul and tally.add > one_sided.add
