"""Compiled customized inverse dynamics vs Pinocchio's rnea: single-call latency and batched throughput.

    PYTHONPATH=src:. python benchmarks/bench_compiled.py [robot ...]

Single call: one (n,) state, the call made from Python (argument checks included for robodyn).
Batched: N states at once with rd.compile vs a Python loop of pin.rnea over the same N states.
"""

from __future__ import annotations

import sys
import timeit

import numpy as np
import pinocchio as pin

import robodyn as rd
from tests.support.pin_bridge import PinRobot


def best(fn, number):
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def bench(name: str, batch: int = 10000) -> dict:
    robot = rd.load(name)
    f = rd.compile(robot, "inverse_dynamics")
    pr = PinRobot(robot)
    rng = np.random.default_rng(0)
    Q, QD, QDD = (rng.uniform(-2, 2, (batch, robot.n)) for _ in range(3))
    q, qd, qdd = Q[0].copy(), QD[0].copy(), QDD[0].copy()
    model, data = pr.model, pr.data
    jf = robot.joint_frames
    fric = robot.Fc[jf] * np.sign(qd) + robot.Fv[jf] * qd + robot.Foff[jf]
    assert np.allclose(f(q, qd, qdd), pr.rnea(q, qd, qdd) + fric)
    t_rd = best(lambda: f(q, qd, qdd), 20000)
    t_pin = best(lambda: pin.rnea(model, data, q, qd, qdd), 20000)

    def pin_loop():
        for k in range(batch):
            pin.rnea(model, data, Q[k], QD[k], QDD[k])

    t_rd_b = best(lambda: f(Q, QD, QDD), 5)
    t_pin_b = best(pin_loop, 1)
    t_np = best(lambda: rd.inverse_dynamics(robot, Q, QD, QDD), 3)
    return dict(robot=name, n=robot.n, ops=f.model.operation_count(), single_rd_us=t_rd * 1e6,
                single_pin_us=t_pin * 1e6, batch=batch, batch_rd_ms=t_rd_b * 1e3, batch_pin_loop_ms=t_pin_b * 1e3,
                batch_numeric_ms=t_np * 1e3, speedup_batched=t_pin_b / t_rd_b)


def main(names):
    print(f"{'robot':10} {'n':>2} {'mul':>5} {'add':>5} | {'rd.compile 1':>12} {'pin.rnea 1':>10} | "
          f"{'rd.compile N':>12} {'pin loop N':>10} {'numeric N':>10} {'speedup':>8}")
    for name in names:
        r = bench(name)
        print(f"{r['robot']:10} {r['n']:2d} {r['ops']['mul']:5d} {r['ops']['add']:5d} | "
              f"{r['single_rd_us']:9.2f} us {r['single_pin_us']:7.2f} us | {r['batch_rd_ms']:9.2f} ms "
              f"{r['batch_pin_loop_ms']:7.1f} ms {r['batch_numeric_ms']:7.1f} ms {r['speedup_batched']:7.0f}x")
    print(f"(batch N = 10000 states; pin {pin.__version__}; best of 5 runs)")


if __name__ == "__main__":
    main(sys.argv[1:] or ["rx90", "puma560", "wam7"])
