"""Khalil & Dombre §9.3.3.3, property (d): "Γ_i is a function of the inertial parameters of links i, ..., n" — the
regressor entries of Γ_i on the parameters of links j < i are zero (on trees: of every link outside the subtree
of joint i's frame, the generalisation [9.81]–[9.83] gives: f_j, m_j collect the links beyond j only)."""

import numpy as np
from hypothesis import given

from robodyn.parameters import regressor
from tests.support.random_robots import random_state, robots


def subtree(robot, frame: int) -> set:
    """0-based frames of the subtree rooted at ``frame`` (0-based)."""
    parent = robot.derived.parent
    out = {frame}
    for i in range(frame + 1, robot.nf):  # a(j) < j: one pass in frame order
        if parent[i] in out:
            out.add(i)
    return out


@given(robots)
def test_torque_of_joint_i_does_not_depend_on_the_links_before_it(robot):
    q, qd, qdd = random_state(robot, 9, (3,))
    D = regressor(robot, q, qd, qdd, friction=False)                  # (3, n, 11 nf): XX … M, Ia per frame
    assert D.shape == (3, robot.n, 11 * robot.nf)
    per_frame = D.reshape(3, robot.n, robot.nf, 11)
    for i, fi in enumerate(robot.joint_frames):
        beyond = subtree(robot, fi)
        outside = [j for j in range(robot.nf) if j not in beyond]
        assert np.all(per_frame[:, i, outside, :] == 0.0), (i, outside)
        # and the property is sharp for joint i's own link on a moving state: some entry of link i is nonzero
        assert np.any(per_frame[:, i, fi, :] != 0.0)
    if np.array_equal(robot.derived.parent, np.arange(robot.nf) - 1):    # serial: exactly links j < i
        for i, fi in enumerate(robot.joint_frames):
            assert np.all(per_frame[:, i, :fi, :] == 0.0)
