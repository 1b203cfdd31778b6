"""Compiled customized inverse dynamics (rd.compile) vs Pinocchio's rnea: single-call latency and batched
throughput, with the batch on 1 thread and on every core (the scaling).

    PYTHONPATH=src:. python benchmarks/bench_compiled.py [robot ...] [--states 10000,100000]

Single call: one (n,) state, the call made from Python (argument checks included for robodyn).
Batched: N states at once with rd.compile (threads split the states inside the compiled C) vs a Python loop of
pin.rnea over the same N states; the variants of a row are interleaved in each of 3 rounds, best round kept.
"speedup" is the Pinocchio loop's time over rd.compile's on every core (the target is >= 20 on two cores);
"1->N thr" is rd.compile's time on 1 thread over its time on every core.
"""

from __future__ import annotations

import argparse
import os
import time
import timeit

import numpy as np
import pinocchio as pin

import robodyn as rd
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository (tests.support), from any folder
from tests.support.pin_bridge import PinRobot  # noqa: E402


def best(fn, number):
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def interleaved(fns, rounds: int = 3) -> list[float]:
    times = [np.inf] * len(fns)
    for _ in range(rounds):
        for k, f in enumerate(fns):
            t = time.perf_counter()
            f()
            times[k] = min(times[k], time.perf_counter() - t)
    return times


def bench(name: str, sizes: list[int]) -> list[dict]:
    robot = rd.load(name)
    cores = len(os.sched_getaffinity(0))
    f, f1 = rd.compile(robot, "inverse_dynamics"), rd.compile(robot, "inverse_dynamics", threads=1)
    pr = PinRobot(robot)
    model, data = pr.model, pr.data
    rng = np.random.default_rng(0)
    rows = []
    for batch in sizes:
        Q, QD, QDD = (rng.uniform(-2, 2, (batch, robot.n)) for _ in range(3))
        q, qd, qdd = Q[0].copy(), QD[0].copy(), QDD[0].copy()
        jf = robot.joint_frames
        fric = robot.Fc[jf] * np.sign(QD) + robot.Fv[jf] * QD + robot.Foff[jf]
        ref = np.array([pr.rnea(Q[k], QD[k], QDD[k]) for k in range(min(batch, 200))])
        assert np.allclose(f(Q, QD, QDD)[:200], ref + fric[:200])
        t_rd = best(lambda: f(q, qd, qdd), 20000)
        t_pin = best(lambda: pin.rnea(model, data, q, qd, qdd), 20000)

        def pin_loop():
            for k in range(batch):
                pin.rnea(model, data, Q[k], QD[k], QDD[k])

        t_all, t_one, t_pin_b, t_np = interleaved([lambda: f(Q, QD, QDD), lambda: f1(Q, QD, QDD), pin_loop,
                                                    lambda: rd.inverse_dynamics(robot, Q, QD, QDD)])
        rows.append(dict(robot=name, n=robot.n, ops=f.operation_count(), single_rd_us=t_rd * 1e6,
                         single_pin_us=t_pin * 1e6, batch=batch, batch_rd_ms=t_all * 1e3, batch_rd1_ms=t_one * 1e3,
                         batch_pin_loop_ms=t_pin_b * 1e3, batch_default_ms=t_np * 1e3,
                         speedup_batched=t_pin_b / t_all, scaling=t_one / t_all, cores=cores))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("robots", nargs="*", default=["rx90", "puma560", "panda", "wam7"])
    ap.add_argument("--states", default="10000,100000")
    args = ap.parse_args()
    sizes = [int(s) for s in args.states.split(",")]
    cores = len(os.sched_getaffinity(0))
    print(f"{'robot':8} {'n':>2} {'mul':>5} {'add':>5} | {'rd.compile 1':>12} {'pin.rnea 1':>10} | {'N':>6} "
          f"{'rd.compile N':>12} {'1 thread':>9} {'1->N thr':>8} {'pin loop N':>10} {'rd default N':>12} {'speedup':>8}")
    for name in args.robots:
        for r in bench(name, sizes):
            print(f"{r['robot']:8} {r['n']:2d} {r['ops']['mul']:5d} {r['ops']['add']:5d} | "
                  f"{r['single_rd_us']:9.2f} us {r['single_pin_us']:7.2f} us | {r['batch']:6d} "
                  f"{r['batch_rd_ms']:9.2f} ms {r['batch_rd1_ms']:6.2f} ms {r['scaling']:8.2f} "
                  f"{r['batch_pin_loop_ms']:7.1f} ms {r['batch_default_ms']:9.2f} ms {r['speedup_batched']:7.1f}x",
                  flush=True)
    print(f"(rd.compile N: {cores} thread(s); rd default N: rd.inverse_dynamics on the batch (robodyn.native); "
          f"pin {pin.__version__}; best of 3 interleaved rounds)")


if __name__ == "__main__":
    main()
