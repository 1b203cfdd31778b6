"""The per-robot workspace: native entries and memos live outside the Robot, keyed by content, bounded,
thread-safe, write-once."""

from __future__ import annotations

import dataclasses
import threading
import uuid

import numpy as np
import pytest

import robodyn as rd
from robodyn.model.workspace import CAPACITY, WORKSPACE, Workspace
from tests.support.kernels import switched_on
from tests.support.random_robots import random_robot, random_state


def _fresh(robot):
    return robot.replace(name=f"{robot.name}-{uuid.uuid4().hex}")


@switched_on
def test_a_kernel_cannot_be_replaced_through_the_robot():
    """The old attack: robot.derived.kernels["inverse_dynamics"] = (lambda ...: zeros) made rd.inverse_dynamics
    return zeros.  The robot holds no container of kernels any more, and its derived data is frozen."""
    robot = _fresh(rd.load("rx90"))
    q, qd, qdd = (np.full(6, v) for v in (0.3, -0.2, 0.5))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    assert not hasattr(robot.derived, "kernels") and not hasattr(robot.derived, "compiled")
    assert not any(isinstance(v, (dict, list, set)) for v in vars(robot.derived).values())
    with pytest.raises(dataclasses.FrozenInstanceError):
        robot.derived.kernels = {"inverse_dynamics": lambda *a: (0.0,) * 6}
    with pytest.raises(dataclasses.FrozenInstanceError):
        robot.content_key = b"x"
    np.testing.assert_array_equal(rd.inverse_dynamics(robot, q, qd, qdd), tau)
    assert np.abs(tau).max() > 1.0
    # what the workspace hands out is a copy: changing it changes nothing
    stored = WORKSPACE.stored(robot)
    assert "native_single_inverse_dynamics" in stored
    stored["native_single_inverse_dynamics"] = lambda *a: np.zeros(6)
    np.testing.assert_array_equal(rd.inverse_dynamics(robot, q, qd, qdd), tau)


@switched_on
def test_equal_robots_share_one_entry():
    a = _fresh(random_robot(40, nf=4, tree=True))
    b = a.replace()
    assert a == b and a is not b and hash(a) == hash(b) and a.content_key == b.content_key
    q, qd, qdd = random_state(a, 1)
    rd.inverse_dynamics(a, q, qd, qdd)
    entries = {k for k in WORKSPACE.stored(a) if k.startswith("native_single")}
    assert entries and entries <= set(WORKSPACE.stored(b))
    robots = WORKSPACE.robots()
    np.testing.assert_array_equal(rd.inverse_dynamics(b, q, qd, qdd), rd.inverse_dynamics(a, q, qd, qdd))
    assert WORKSPACE.robots() == robots  # b found a's entry
    # content means every field: another name, mass or gravity is another robot
    for other in (a.replace(name="other"), rd.with_parameters(a, 2, M=3.0), a.replace(gravity=[0, 0, -9.80])):
        assert other != a and other.content_key != a.content_key


def test_the_bound_holds_least_recently_used_first():
    ws = Workspace(capacity=3)
    robots = [_fresh(random_robot(41, nf=2)) for _ in range(5)]
    for r in robots[:3]:
        ws.value(r, "x", lambda: object())
    ws.get(robots[0], "x")  # robots[0] is now the most recently used
    ws.value(robots[3], "x", lambda: object())  # drops robots[1], the least recently used
    assert ws.robots() == 3
    assert ws.stored(robots[1]) == {} and ws.stored(robots[0]) and ws.stored(robots[2])
    ws.value(robots[4], "x", lambda: object())
    assert ws.robots() == 3 and ws.stored(robots[2]) == {}
    assert 1 <= CAPACITY and WORKSPACE.robots() <= CAPACITY
    with pytest.raises(ValueError):
        Workspace(capacity=0)


def test_the_process_workspace_stays_bounded():
    for k in range(CAPACITY + 5):
        rd.gravity_torques(_fresh(random_robot(42, nf=2)), np.zeros(2))
    assert WORKSPACE.robots() <= CAPACITY


def test_values_are_set_once_across_threads():
    ws = Workspace(capacity=4)
    robot = _fresh(random_robot(43, nf=2))
    barrier = threading.Barrier(8)

    def first():
        barrier.wait()
        return ws.value(robot, "k", object)

    def shared():
        return ws.shared("machine", object)

    threads_out = [None] * 8
    machine = [None] * 8

    def run(i):
        threads_out[i] = first()
        machine[i] = shared()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(x) for x in threads_out}) == 1  # every thread uses the one value stored first
    assert len({id(x) for x in machine}) == 1 and ws.shared("machine", object) is machine[0]
    assert not hasattr(ws, "count")  # no counter: every value is set once


def test_made_reads_a_shared_value_without_making_it():
    ws = Workspace()
    assert ws.made("machine") is None  # nothing made by the look
    assert ws.made("machine") is None
    value = ws.shared("machine", object)
    assert ws.made("machine") is value
