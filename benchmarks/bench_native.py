"""Benchmark: robodyn's generic compiled kernels (robodyn.native, threaded) vs a Python loop of Pinocchio and vs
robodyn's NumPy path, for n = 6 … 100 joints and the five batched quantities (inverse dynamics, gravity, inertia
matrix, forward dynamics, regressor).

Run:  PYTHONPATH=src:. python benchmarks/bench_native.py [--states 1000] [--sizes 6,25,100] [--repeat 5]

Robots: puma560 for n = 6, random revolute serial chains (tests/support/random_robots.py) for larger n. Pinocchio
runs the same robot through tests/support/pin_bridge.py, one C++ call per state in a Python loop (its regressor is
computeJointTorqueRegressor). Each quantity is first checked to agree (relative difference printed), then timed:
best wall time of --repeat runs, µs per state. Ratios are Pinocchio / robodyn: > 1 means robodyn is faster.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pinocchio as pin

import robodyn as rd
from robodyn import native
from tests.support.pin_bridge import PinRobot
from tests.support.random_robots import random_robot


def best(f, repeat: int) -> float:
    t_best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        t_best = min(t_best, time.perf_counter() - t)
    return t_best


def robot_of_size(n: int) -> rd.Robot:
    if n == 6:
        return rd.load("puma560")
    return random_robot(n, nf=n, prismatic=False, friction=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=1000)
    ap.add_argument("--sizes", default="6,25,100")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()
    threads = args.threads or len(os.sched_getaffinity(0))
    print(f"robodyn.native with {threads} thread(s), {args.states} states per call; µs per state")
    print(f"{'n':>4} {'quantity':<16} {'native':>9} {'NumPy':>9} {'Pin loop':>9} {'Pin/native':>10} {'max rel diff':>12}")
    for n in (int(s) for s in args.sizes.split(",")):
        robot = robot_of_size(n)
        p = PinRobot(robot)
        rng = np.random.default_rng(0)
        q, qd, qdd = rng.uniform(-1, 1, (3, args.states, robot.n))
        tau = rd.inverse_dynamics(robot, q, qd, qdd)
        model, data = p.model, p.data
        assert np.array_equal(p.perm, np.arange(robot.n)), "serial chains: Pinocchio's joint order is robodyn's"

        def pin_loop(fn, *arrays):
            return lambda: [fn(model, data, *(x[i] for x in arrays)) for i in range(args.states)]

        cases = {
            "inverse dyn.": (lambda: native.inverse_dynamics(robot, q, qd, qdd, threads=threads),
                             lambda: rd.inverse_dynamics(robot, q, qd, qdd),
                             pin_loop(pin.rnea, q, qd, qdd)),
            "gravity": (lambda: native.gravity_torques(robot, q, threads=threads),
                        lambda: rd.gravity_torques(robot, q),
                        pin_loop(pin.computeGeneralizedGravity, q)),
            "inertia matrix": (lambda: native.inertia_matrix(robot, q, threads=threads),
                               lambda: rd.inertia_matrix(robot, q),
                               pin_loop(pin.crba, q)),
            "forward dyn.": (lambda: native.forward_dynamics(robot, q, qd, tau, threads=threads),
                             lambda: rd.forward_dynamics(robot, q, qd, tau),
                             pin_loop(pin.aba, q, qd, tau)),
            "regressor": (lambda: native.regressor(robot, q, qd, qdd, threads=threads),
                          lambda: rd.regressor(robot, q, qd, qdd),
                          pin_loop(pin.computeJointTorqueRegressor, q, qd, qdd)),
        }
        for name, (fn, fnp, fpin) in cases.items():
            a, b = np.asarray(fn()), np.asarray(fnp())
            if name == "regressor":  # Pinocchio's regressor has other columns: compare with robodyn's NumPy one
                ref = b
            else:
                ref = np.array([np.array(x).reshape(a.shape[1:]) for x in fpin()])
                if name == "inertia matrix":  # Pinocchio fills the upper triangle
                    ref = np.triu(ref) + np.swapaxes(np.triu(ref, 1), -1, -2)
            diff = np.max(np.abs(a - ref)) / max(1.0, np.max(np.abs(ref)))
            t_native, t_np, t_pin = (best(f, args.repeat) * 1e6 / args.states for f in (fn, fnp, fpin))
            print(f"{robot.n:>4} {name:<16} {t_native:>9.3f} {t_np:>9.3f} {t_pin:>9.3f} {t_pin / t_native:>10.2f} "
                  f"{diff:>12.1e}")


if __name__ == "__main__":
    main()
