"""Joints as users count them: numbers 1..n in the order of q, names, and per-joint quantities set and read as n
values (fixed frames never counted)."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from robodyn.errors import ModelError
from tests.support.random_robots import random_robot


def _robot_with_fixed_frames():
    # frames: 1 fixed (mounting), 2 revolute, 3 prismatic, 4 fixed (tool), 5 revolute
    link = rd.standard_from_com(mass=1.0, com=[0.1, 0, 0], inertia_com=np.diag([0.01, 0.02, 0.02]))
    return rd.Robot(name="mixed", sigma=[2, 0, 1, 2, 0], d=[0.1, 0.2, 0.0, 0.3, 0.1], params=[link] * 5,
                    frame_names=("mount", "shoulder", "slide", "tool", "wrist"))


def test_joint_records_map_joints_to_frames():
    robot = _robot_with_fixed_frames()
    assert [(j.number, j.frame, j.name, j.sigma) for j in robot.joints] == [
        (1, 2, "shoulder", 0), (2, 3, "slide", 1), (3, 5, "wrist", 0)]
    assert robot.joint("slide") == robot.joint(2)
    assert robot.joint_number("wrist") == 3 and robot.joint_number(3) == 3
    with pytest.raises(ModelError, match="fixed frame, not a joint"):
        robot.joint("tool")
    with pytest.raises(ModelError, match="not a joint"):
        robot.joint("elbow")
    for bad in (0, 4, True, 1.0):
        with pytest.raises(ModelError, match="joint number 1..3"):
            robot.joint_number(bad)


def test_with_joint_parameters_sets_n_values_and_skips_fixed_frames():
    robot = _robot_with_fixed_frames()
    new = robot.with_joint_parameters(Fc=[1.0, 2.0, 3.0], Fv=0.5, Ia=[0.1, 0.0, 0.2], qlim=[[-1, 1], [0, 0.5], [-2, 2]])
    np.testing.assert_array_equal(new.Fc, [0, 1, 2, 0, 3])
    np.testing.assert_array_equal(new.Fv, [0, 0.5, 0.5, 0, 0.5])
    np.testing.assert_array_equal(new.joint_values("Ia"), [0.1, 0.0, 0.2])
    np.testing.assert_array_equal(new.qlim, [[-1, 1], [0, 0.5], [-2, 2]])
    assert new.joint("wrist").Fc == 3.0 and new.joint("slide").qmax == 0.5
    np.testing.assert_array_equal(robot.Fc, np.zeros(5))  # the original robot never changes
    # friction set per joint gives the same torques as friction set per frame
    q, qd = np.zeros(3), np.array([0.3, -0.2, 0.1])
    per_frame = robot.replace(Fc=[0, 1, 2, 0, 3], Fv=[0, 0.5, 0.5, 0, 0.5])
    np.testing.assert_array_equal(rd.inverse_dynamics(new.replace(Ia=per_frame.Ia), q, qd, 0 * q),
                                  rd.inverse_dynamics(per_frame, q, qd, 0 * q))


@pytest.mark.parametrize("values, match", [
    (dict(Fc=[1.0, 2.0]), "give 3 numbers"),
    (dict(qlim=[1.0, 2.0, 3.0]), r"\[min, max\]"),
    (dict(Fq=1.0), "unknown quantity"),
    (dict(Fc=[-1.0, 0, 0]), "negative"),
])
def test_with_joint_parameters_rejects_bad_values(values, match):
    with pytest.raises(ModelError, match=match):
        _robot_with_fixed_frames().with_joint_parameters(**values)


@pytest.mark.parametrize("seed", range(8))
def test_joint_values_follow_q_order_on_random_trees(seed):
    robot = random_robot(seed, tree=True, fixed=True)
    for key in ("Ia", "Fc", "Fv"):
        np.testing.assert_array_equal(robot.joint_values(key), getattr(robot, key)[robot.joint_frames])
    assert [j.frame - 1 for j in robot.joints] == list(robot.joint_frames)
