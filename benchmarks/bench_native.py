"""Benchmark: robodyn's default batched call (``rd.inverse_dynamics(robot, Q, QD, QDD)`` etc., which hands float64
batches of 128 states and more to the generic compiled kernels of robodyn.native) vs a Python loop of Pinocchio
and vs robodyn's NumPy path, for n = 6 … 100 joints and the five batched quantities (inverse dynamics, gravity,
inertia matrix, forward dynamics, regressor) and the dynamics derivatives (∂Γ/∂q, ∂Γ/∂q̇; ∂q̈/∂q, ∂q̈/∂q̇,
∂q̈/∂Γ), plus the kernels on 1 thread and on every core (the scaling).

Run:  PYTHONPATH=src:. python benchmarks/bench_native.py [--states 1000] [--sizes 6,25,100] [--repeat 5]

Robots: puma560 for n = 6, random revolute serial chains (tests/support/random_robots.py) for larger n. Pinocchio
runs the same robot through tests/support/pin_bridge.py, one C++ call per state in a Python loop (its regressor is
computeJointTorqueRegressor). Each quantity is first checked to agree (relative difference printed), then timed,
every variant interleaved in each round (in an order that rotates from round to round): best wall time of
--repeat rounds, µs per state. "Pin/rd" is Pinocchio's
time over the default call's: > 1 means robodyn is faster (the target is >= 5 for inverse dynamics, the inertia
matrix and forward dynamics). "1->N thr" is the kernels' time on 1 thread over their time on every core this process
may use. "% peak" is the default call's floating-point rate, the traced operation count of the same algorithm
(robodyn.analysis.opcount: Newton–Euler, composite links, the articulated-body recursion; multiplications, divisions
and additions, not sin/cos) × states/s, over the machine's float64 peak (benchmarks/_timing.machine_peak: cores ×
clock × FLOP/cycle from /proc/cpuinfo, printed).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

import robodyn as rd
from robodyn import native
from robodyn.analysis.opcount import count_operations

# the repository (tests.support's robots) and this folder (_timing), wherever the script is started from
sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]
from tests.support.pin_bridge import PinRobot  # noqa: E402
from tests.support.random_robots import random_robot  # noqa: E402
from _timing import flops, machine_peak  # noqa: E402

#: quantity -> (kind, method) of robodyn.analysis.opcount for its operation count
_COUNTED = {"inverse dyn.": ("inverse", "newton_euler"), "inertia matrix": ("inertia", "composite"),
            "forward dyn.": ("forward", "recursive")}


def numpy_path(f):
    """f run with robodyn's NumPy algorithms (ROBODYN_NATIVE=0: batches are not handed to robodyn.native)."""
    def run():
        old = os.environ.get("ROBODYN_NATIVE")
        os.environ["ROBODYN_NATIVE"] = "0"
        try:
            return f()
        finally:
            if old is None:
                del os.environ["ROBODYN_NATIVE"]
            else:
                os.environ["ROBODYN_NATIVE"] = old
    return run


def robot_of_size(n: int) -> rd.Robot:
    if n == 6:
        return rd.load("puma560")
    return random_robot(n, nf=n, prismatic=False, friction=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=1000)
    ap.add_argument("--sizes", default="6,25,100")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    cores = len(os.sched_getaffinity(0))
    peak, how = machine_peak()
    print(f"{args.states} states per call, µs per state; robodyn.native threaded: {native.threaded()}, "
          f"{cores} core(s); pin {pin.__version__}; peak {peak / 1e9:.0f} GFLOP/s = {how}")
    print(f"{'n':>4} {'quantity':<15} {'rd default':>10} {'1 thread':>9} {f'{cores} thr':>9} {'1->N thr':>8} "
          f"{'NumPy':>9} {'Pin loop':>9} {'Pin/rd':>7} {'% peak':>7} {'max rel diff':>12}")
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
            "inverse dyn.": (lambda t: native.inverse_dynamics(robot, q, qd, qdd, threads=t),
                             lambda: rd.inverse_dynamics(robot, q, qd, qdd),
                             pin_loop(pin.rnea, q, qd, qdd)),
            "gravity": (lambda t: native.gravity_torques(robot, q, threads=t),
                        lambda: rd.gravity_torques(robot, q),
                        pin_loop(pin.computeGeneralizedGravity, q)),
            "inertia matrix": (lambda t: native.inertia_matrix(robot, q, threads=t),
                               lambda: rd.inertia_matrix(robot, q),
                               pin_loop(pin.crba, q)),
            "forward dyn.": (lambda t: native.forward_dynamics(robot, q, qd, tau, threads=t),
                             lambda: rd.forward_dynamics(robot, q, qd, tau),
                             pin_loop(pin.aba, q, qd, tau)),
            "regressor": (lambda t: native.regressor(robot, q, qd, qdd, threads=t),
                          lambda: rd.regressor(robot, q, qd, qdd),
                          pin_loop(pin.computeJointTorqueRegressor, q, qd, qdd)),
            "ID derivatives": (lambda t: native.inverse_dynamics_derivatives(robot, q, qd, qdd, threads=t),
                               lambda: np.stack(rd.inverse_dynamics_derivatives(robot, q, qd, qdd), -3),
                               pin_loop(pin.computeRNEADerivatives, q, qd, qdd)),
            "FD derivatives": (lambda t: native.forward_dynamics_derivatives(robot, q, qd, tau, threads=t),
                               lambda: np.stack(rd.forward_dynamics_derivatives(robot, q, qd, tau), -3),
                               pin_loop(pin.computeABADerivatives, q, qd, tau)),
        }
        for name, (fn, fdefault, fpin) in cases.items():
            fnp = numpy_path(fdefault)
            a, b = np.asarray(fdefault()), np.asarray(fnp())
            if name == "regressor" or name.endswith("derivatives"):
                # Pinocchio's regressor has other columns, its derivatives other layouts: robodyn's NumPy path
                ref = b
            else:
                ref = np.array([np.array(x).reshape(a.shape[1:]) for x in fpin()])
                if name == "inertia matrix":  # Pinocchio fills the upper triangle
                    ref = np.triu(ref) + np.swapaxes(np.triu(ref, 1), -1, -2)
            diff = np.max(np.abs(a - ref)) / max(1.0, np.max(np.abs(ref)))
            variants = (fdefault, lambda: fn(1), lambda: fn(cores), fnp, fpin)
            times = [np.inf] * len(variants)
            for r in range(args.repeat):  # interleaved: a burst of load on the machine hits every variant alike
                for j in range(len(variants)):  # the order rotates: no variant always follows Pinocchio's loop
                    k = (j + r) % len(variants)
                    t = time.perf_counter()
                    variants[k]()
                    times[k] = min(times[k], time.perf_counter() - t)
            t_rd, t_one, t_all, t_np, t_pin = (t * 1e6 / args.states for t in times)
            frac = "—"
            if name in _COUNTED:
                frac = f"{flops(count_operations(robot, *_COUNTED[name])[0]) / (t_rd * 1e-6) / peak * 100:.1f}"
            print(f"{robot.n:>4} {name:<15} {t_rd:>10.3f} {t_one:>9.3f} {t_all:>9.3f} {t_one / t_all:>8.2f} "
                  f"{t_np:>9.3f} {t_pin:>9.3f} {t_pin / t_rd:>7.2f} {frac:>7} {diff:>12.1e}", flush=True)


if __name__ == "__main__":
    main()
