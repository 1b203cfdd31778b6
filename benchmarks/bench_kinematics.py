"""Benchmark: kinematics and task-space dynamics, robodyn from Python vs Pinocchio from Python, ratios printed.

Run:  PYTHONPATH=src:. python benchmarks/bench_kinematics.py [robot ...] [--repeat 7] [--batch 1000]

One state per call (a 1-D float64 state: robodyn.native's kinematics kernels; the task space in one C call; the
null space on the kernels' terms with a NumPy assembly), then a batch of ``--batch``
states in one robodyn call against a Python loop of Pinocchio over the same states.  Pinocchio runs the same robot
(built by tests/support/pin_bridge.py) through its raw Python bindings:

- frame poses: ``forwardKinematics`` + ``updateFramePlacements``  vs  ``rd.forward_kinematics`` (every frame);
- Jacobian: ``computeFrameJacobian`` (LOCAL_WORLD_ALIGNED)  vs  ``rd.jacobian`` of the end frame;
- J̇ q̇: ``forwardKinematics(q, v, 0)`` + ``getFrameClassicalAcceleration``  vs  ``rd.jacobian_dot_qd``;
- link accelerations: ``forwardKinematics(q, v, a)``  vs  ``rd.kinematics.link_accelerations`` (every frame);
- J̇: ``computeJointJacobiansTimeVariation`` + ``updateFramePlacements`` + ``getFrameJacobianTimeVariation``
  (LOCAL_WORLD_ALIGNED)  vs  ``rd.dynamics.jacobian_derivative``;
- task space: ``computeAllTerms`` + ``getFrameJacobian`` + ``computeMinverse`` + Λ = (J M⁻¹ Jᵀ)⁻¹  vs
  ``rd.dynamics.task_space_dynamics`` (Λ, μ, p, J̄, N);
- task maps: ``rd.dynamics.task_space_dynamics(..., task=RelativePosition(2, j))`` (r = p_j − p_2) and
  ``task=OrientationError(j, R_d)`` (the quaternion error to a target 0.3 rad per joint away): the map's J, J̇ q̇
  (NumPy on the kinematics kernels) and the frame task's dense algebra in C, against Pinocchio's frame task above
  (the comparable task: all terms, one Jacobian, Λ);
- null-space dynamics: ``rd.dynamics.null_space_dynamics`` of the 6-row task (the position rows on a 6-joint
  arm): Λ_n, μ_n, p_n, Z, Z̄, Ż̄ q̇ and the task's terms, against the NumPy path only (Pinocchio has no
  counterpart: its columns read nan).

Each time is the best over ``--repeat`` timing loops (robodyn's and Pinocchio's alternated; ``--cpu``: the median
of the loops' process CPU times, steadier on a loaded machine), in µs per call (per state for the batches); ratio =
robodyn / Pinocchio (targets: single states ≤ 2, batches ≤ 1/3).  ``numpy µs`` is the same robodyn call with
ROBODYN_NATIVE=0 (the NumPy recursions, as without a C compiler).  The results are compared before they are timed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import timeit

import numpy as np
import pinocchio as pin

import robodyn as rd
from robodyn import kinematics as kin
from robodyn.dynamics.task_space import OrientationError, RelativePosition
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository (tests.support), from any folder
from tests.support.pin_bridge import PinRobot  # noqa: E402

LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
#: how a timing loop is measured and summarised: wall clock and the best loop, or (--cpu) CPU time and the median
CLOCK = {"timer": time.perf_counter, "summary": min}


def best_us(fn, repeat: int) -> float:
    """Best (``--cpu``: median) time of one call (µs) over ``repeat`` timing loops of about 20 ms each."""
    timer = timeit.Timer(fn, timer=CLOCK["timer"])
    number, _ = timer.autorange()
    number = max(1, number // 10)
    return CLOCK["summary"](timer.repeat(repeat, number)) / number * 1e6


def paired_us(fn, other, repeat: int) -> tuple[float, float]:
    """:func:`best_us` of ``fn`` and of ``other`` (nan where ``other`` is None), their timing loops alternated so
    that both see the same load of a shared machine."""
    timers = [timeit.Timer(f, timer=CLOCK["timer"]) for f in (fn, other) if f is not None]
    numbers = [max(1, t.autorange()[0] // 10) for t in timers]
    loops = [[] for _ in timers]
    for _ in range(repeat):
        for k, (t, number) in enumerate(zip(timers, numbers)):
            loops[k].append(t.timeit(number) / number * 1e6)
    best = [CLOCK["summary"](x) for x in loops]
    return best[0], best[1] if other is not None else float("nan")


def numpy_us(fn, repeat: int) -> float:
    """:func:`best_us` of ``fn`` with robodyn's compiled kernels switched off."""
    old = os.environ.get("ROBODYN_NATIVE")
    os.environ["ROBODYN_NATIVE"] = "0"
    try:
        return best_us(fn, repeat)
    finally:
        if old is None:
            del os.environ["ROBODYN_NATIVE"]
        else:
            os.environ["ROBODYN_NATIVE"] = old


def pin_task_inertia(model, data, q, v, fid):
    """Pinocchio's all terms, the frame Jacobian and Λ = (J M⁻¹ Jᵀ)⁻¹ of one state."""
    pin.computeAllTerms(model, data, q, v)
    J = pin.getFrameJacobian(model, data, fid, LWA)
    Minv = pin.computeMinverse(model, data, q)
    Minv = np.triu(Minv) + np.triu(Minv, 1).T
    return np.linalg.inv(J @ Minv @ J.T)


def rows_for(name: str, repeat: int, count: int, only: str = "") -> list[tuple]:
    robot = rd.load(name)
    pr = PinRobot(robot)
    model, data = pr.model, pr.data
    j = int(robot.derived.end_frame)  # the end frame, 1..nf
    fid = pr.frame_ids[j - 1]
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-1, 1, robot.n) for _ in range(3))
    pq, pv, pa = pr._in(q), pr._in(qd), pr._in(qdd)
    Q, QD, QDD = (rng.uniform(-1, 1, (count, robot.n)) for _ in range(3))
    PQ, PV, PA = ([pr._in(x) for x in X] for X in (Q, QD, QDD))
    zero = np.zeros(model.nv)
    ns_rows = None if robot.n > 6 else [0, 1, 2]  # a task with a null space

    # the numbers agree before they are timed
    np.testing.assert_allclose(rd.forward_kinematics(robot, q)[j - 1], pr.placement(q, j), atol=1e-12)
    np.testing.assert_allclose(rd.jacobian(robot, q, frame=j), pr.jacobian(q, j), atol=1e-12)
    pin.forwardKinematics(model, data, pq, pv, zero)
    pin.updateFramePlacements(model, data)
    np.testing.assert_allclose(rd.jacobian_dot_qd(robot, q, qd, frame=j),
                               pin.getFrameClassicalAcceleration(model, data, fid, LWA).vector, atol=1e-10)
    tsd = rd.dynamics.task_space_dynamics(robot, q, qd, frame=j, rows=[0, 1, 2])
    J3 = pr.jacobian(q, j)[:3]
    pin.computeAllTerms(model, data, pq, pv)
    M = pr.crba(q)
    np.testing.assert_allclose(tsd.Lambda, np.linalg.inv(J3 @ np.linalg.solve(M, J3.T)), rtol=1e-9)

    relative = RelativePosition(2, j)
    orientation = OrientationError(j, rd.forward_kinematics(robot, q + 0.3)[j - 1, :3, :3])
    Jr = pr.jacobian(q, j)[:3] - pr.jacobian(q, 2)[:3]
    np.testing.assert_allclose(rd.dynamics.task_space_dynamics(robot, q, qd, task=relative).Lambda,
                               np.linalg.inv(Jr @ np.linalg.solve(M, Jr.T)), rtol=1e-9)
    fast = rd.dynamics.task_space_dynamics(robot, q, qd, task=orientation)
    os.environ["ROBODYN_NATIVE"] = "0"
    try:
        slow = rd.dynamics.task_space_dynamics(robot, q, qd, task=orientation)
    finally:
        del os.environ["ROBODYN_NATIVE"]
    for a, b in zip((fast.Lambda, fast.mu, fast.p), (slow.Lambda, slow.mu, slow.p)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10 * np.abs(b).max())

    def fk_pin(pq=pq):
        pin.forwardKinematics(model, data, pq)
        pin.updateFramePlacements(model, data)

    def jd_pin(pq=pq, pv=pv):
        pin.computeJointJacobiansTimeVariation(model, data, pq, pv)
        pin.updateFramePlacements(model, data)
        return pin.getFrameJacobianTimeVariation(model, data, fid, LWA)

    np.testing.assert_allclose(rd.dynamics.jacobian_derivative(robot, q, qd, frame=j), jd_pin(), atol=1e-12)

    def jdq_pin(pq=pq, pv=pv):
        pin.forwardKinematics(model, data, pq, pv, zero)
        return pin.getFrameClassicalAcceleration(model, data, fid, LWA)

    single = [
        ("forward_kinematics", lambda: rd.forward_kinematics(robot, q), fk_pin),
        ("jacobian", lambda: rd.jacobian(robot, q, frame=j),
         lambda: pin.computeFrameJacobian(model, data, pq, fid, LWA)),
        ("jacobian_dot_qd", lambda: rd.jacobian_dot_qd(robot, q, qd, frame=j), jdq_pin),
        ("link_accelerations", lambda: kin.link_accelerations(robot, q, qd, qdd),
         lambda: pin.forwardKinematics(model, data, pq, pv, pa)),
        ("task_space_dynamics", lambda: rd.dynamics.task_space_dynamics(robot, q, qd, frame=j, rows=[0, 1, 2]),
         lambda: pin_task_inertia(model, data, pq, pv, fid)),
        ("task RelativePosition", lambda: rd.dynamics.task_space_dynamics(robot, q, qd, task=relative),
         lambda: pin_task_inertia(model, data, pq, pv, fid)),
        ("task OrientationError", lambda: rd.dynamics.task_space_dynamics(robot, q, qd, task=orientation),
         lambda: pin_task_inertia(model, data, pq, pv, fid)),
        ("jacobian_derivative", lambda: rd.dynamics.jacobian_derivative(robot, q, qd, frame=j), jd_pin),
        ("null_space_dynamics", lambda: rd.dynamics.null_space_dynamics(robot, q, qd, frame=j, rows=ns_rows), None),
    ]

    def loop(fn, *arrays):
        return lambda: [fn(*x) for x in zip(*arrays)]

    batched = [
        ("forward_kinematics", lambda: rd.forward_kinematics(robot, Q), loop(fk_pin, PQ)),
        ("jacobian", lambda: rd.jacobian(robot, Q, frame=j),
         loop(lambda x: pin.computeFrameJacobian(model, data, x, fid, LWA), PQ)),
        ("jacobian_dot_qd", lambda: rd.jacobian_dot_qd(robot, Q, QD, frame=j), loop(jdq_pin, PQ, PV)),
        ("link_accelerations", lambda: kin.link_accelerations(robot, Q, QD, QDD),
         loop(lambda x, v, a: pin.forwardKinematics(model, data, x, v, a), PQ, PV, PA)),
        ("task_space_dynamics", lambda: rd.dynamics.task_space_dynamics(robot, Q, QD, frame=j, rows=[0, 1, 2]),
         loop(lambda x, v: pin_task_inertia(model, data, x, v, fid), PQ, PV)),
        ("task RelativePosition", lambda: rd.dynamics.task_space_dynamics(robot, Q, QD, task=relative),
         loop(lambda x, v: pin_task_inertia(model, data, x, v, fid), PQ, PV)),
        ("task OrientationError", lambda: rd.dynamics.task_space_dynamics(robot, Q, QD, task=orientation),
         loop(lambda x, v: pin_task_inertia(model, data, x, v, fid), PQ, PV)),
        ("jacobian_derivative", lambda: rd.dynamics.jacobian_derivative(robot, Q, QD, frame=j), loop(jd_pin, PQ, PV)),
        ("null_space_dynamics", lambda: rd.dynamics.null_space_dynamics(robot, Q, QD, frame=j, rows=ns_rows), None),
    ]
    rows = []
    single = [x for x in single if only in x[0]]
    batched = [x for x in batched if only in x[0]]
    for what, fn, pin_fn in single:
        rd_us, pin_us = paired_us(fn, pin_fn, repeat)
        rows.append((name, what, "1", numpy_us(fn, repeat), rd_us, pin_us, rd_us / pin_us))
    for what, fn, pin_fn in batched:
        rd_us, pin_us = (t / count for t in paired_us(fn, pin_fn, max(1, repeat // 2)))
        rows.append((name, what, str(count), numpy_us(fn, max(1, repeat // 2)) / count, rd_us, pin_us,
                     rd_us / pin_us))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("robots", nargs="*", default=["panda", "puma560"])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--cpu", action="store_true", help="process CPU time, median of the loops")
    parser.add_argument("--only", default="", help="time only the functions whose name contains this text")
    args = parser.parse_args()
    if args.cpu:
        CLOCK.update(timer=time.process_time, summary=statistics.median)
    print(f"{'robot':8} {'function':22} {'states':>6} {'numpy µs':>9} {'robodyn µs':>10} {'pinocchio µs':>12} "
          f"{'ratio':>6}")
    for name in args.robots:
        for robot, what, states, np_us, rd_us, pin_us, ratio in rows_for(name, args.repeat, args.batch, args.only):
            print(f"{robot:8} {what:22} {states:>6} {np_us:9.2f} {rd_us:10.2f} {pin_us:12.2f} {ratio:6.2f}")


if __name__ == "__main__":
    main()
