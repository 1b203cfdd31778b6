"""Benchmark: one state per call, robodyn from Python vs Pinocchio from Python, every method, ratios printed.

Run:  PYTHONPATH=src:. python benchmarks/bench_single_state.py [robot ...] [--repeat 7] [--compiled]

A 1-D float64 state takes robodyn's single-state path: the default methods robodyn.native's compiled entry, every
other method its NumPy recursions (the column ``path`` says which ran: native or NumPy; ``rd.compile`` is the
fast path of a non-default method).  Pinocchio runs the same
robot (built by tests/support/pin_bridge.py) through its raw Python bindings, ``pin.rnea(model, data, q, v, a)``
etc., one call per state, timed right before the robodyn case it is compared with.  Each time is the best over
``--repeat`` runs of a timing loop, in µs per call; ratio = robodyn / Pinocchio (the targets: inverse_dynamics,
gravity_torques, inertia_matrix ≤ 2× rnea / computeGeneralizedGravity / crba, forward_dynamics ≤ 2× aba, rd.compile
≤ 0.5×; the other methods run NumPy and have no target).  ``numpy µs`` is the same call with ROBODYN_NATIVE=0 (as
without a C compiler).  ``--compiled`` also times ``rd.compile`` (needs a C compiler) with and without ``gravity=``
and ``wrenches=``.
"""

from __future__ import annotations

import argparse
import os
import timeit

import numpy as np
import pinocchio as pin

import robodyn as rd
from robodyn import native
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository (tests.support), from any folder
from tests.support.pin_bridge import PinRobot  # noqa: E402


def best_us(fn, repeat: int) -> float:
    """Best time of one call (µs) over ``repeat`` timing loops of about 20 ms each."""
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    number = max(1, number // 10)
    return min(timer.repeat(repeat, number)) / number * 1e6


def rows_for(name: str, repeat: int, compiled: bool) -> list[tuple]:
    robot = rd.load(name)
    pr = PinRobot(robot)
    model, data = pr.model, pr.data
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-1, 1, robot.n) for _ in range(3))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    pq, pv, pa = pr._in(q), pr._in(qd), pr._in(qdd)
    pt = pr._in(tau - rd.friction_torques(robot, qd))
    # the numbers agree before they are timed
    np.testing.assert_allclose(rd.inverse_dynamics(robot, q, qd, qdd) - rd.friction_torques(robot, qd),
                               pr.rnea(q, qd, qdd), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(rd.forward_dynamics(robot, q, qd, tau), qdd, rtol=1e-9, atol=1e-9)
    pin_calls = {
        "rnea": lambda: pin.rnea(model, data, pq, pv, pa),
        "gravity": lambda: pin.computeGeneralizedGravity(model, data, pq),
        "crba": lambda: pin.crba(model, data, pq),
        "aba": lambda: pin.aba(model, data, pq, pv, pt),
    }
    cases = [
        ("inverse_dynamics", "newton_euler", "rnea", 2, lambda: rd.inverse_dynamics(robot, q, qd, qdd)),
        ("inverse_dynamics", "gibbs_appell", "rnea", None,
         lambda: rd.inverse_dynamics(robot, q, qd, qdd, method="gibbs_appell")),
        ("inverse_dynamics", "spatial_operator", "rnea", None,
         lambda: rd.inverse_dynamics(robot, q, qd, qdd, method="spatial_operator")),
        ("gravity_torques", "newton_euler", "gravity", 2, lambda: rd.gravity_torques(robot, q)),
        ("inertia_matrix", "composite", "crba", 2, lambda: rd.inertia_matrix(robot, q)),
        ("inertia_matrix", "walker_orin", "crba", None, lambda: rd.inertia_matrix(robot, q, method="walker_orin")),
        ("inertia_matrix", "gibbs_appell", "crba", None, lambda: rd.inertia_matrix(robot, q, method="gibbs_appell")),
        ("forward_dynamics", "recursive", "aba", 2, lambda: rd.forward_dynamics(robot, q, qd, tau)),
        ("forward_dynamics", "cholesky", "aba", None, lambda: rd.forward_dynamics(robot, q, qd, tau, method="cholesky")),
        ("forward_dynamics", "gibbs_appell", "aba", None,
         lambda: rd.forward_dynamics(robot, q, qd, tau, method="gibbs_appell")),
        ("forward_dynamics", "spatial_operator", "aba", None,
         lambda: rd.forward_dynamics(robot, q, qd, tau, method="spatial_operator")),
    ]
    if compiled:
        # rd.compile's call is C for one 1-D float64 state (target: half Pinocchio's time or less); the other
        # kinds against Pinocchio's function for the same quantity
        pin_calls["nle"] = lambda: pin.nonLinearEffects(model, data, pq, pv)
        pin_calls["regressor"] = lambda: pin.computeJointTorqueRegressor(model, data, pq, pv, pa)
        f, fb, fg, fm, fd, fr = (rd.compile(robot, kind) for kind in ("inverse_dynamics", "bias", "gravity",
                                                                      "inertia_matrix", "forward_dynamics",
                                                                      "regressor"))
        g, W = np.array([0.0, 0.0, -9.81]), np.zeros((robot.nf, 6))
        cases += [
            ("rd.compile", "plain", "rnea", 0.5, lambda: f(q, qd, qdd)),
            ("rd.compile", "gravity=", "rnea", 0.5, lambda: f(q, qd, qdd, gravity=g)),
            ("rd.compile", "wrenches=", "rnea", 0.5, lambda: f(q, qd, qdd, wrenches=W)),
            ("rd.compile", "bias", "nle", 0.5, lambda: fb(q, qd)),
            ("rd.compile", "gravity", "gravity", 0.5, lambda: fg(q)),
            ("rd.compile", "inertia_matrix", "crba", 0.5, lambda: fm(q)),
            ("rd.compile", "forward_dynamics", "aba", 0.5, lambda: fd(q, qd, tau)),
            ("rd.compile", "regressor", "regressor", 0.5, lambda: fr(q, qd, qdd)),
        ]
    rows = []
    for fn_name, method, ref, target, call in cases:
        call()  # builds or loads the native kernels (or the rd.compile library) before the timing
        if fn_name == "rd.compile":
            path = "compiled"
        else:
            path = "native" if target == 2 and native.available() else "NumPy"
        numpy_us = None
        if path == "native":
            os.environ["ROBODYN_NATIVE"] = "0"
            try:
                numpy_us = best_us(call, max(1, repeat // 2))
            finally:
                del os.environ["ROBODYN_NATIVE"]
        # Pinocchio timed right before each case: on a shared machine the load changes within a run
        tp = best_us(pin_calls[ref], repeat)
        t = best_us(call, repeat)
        rows.append((name, fn_name, method, path, t, numpy_us, ref, tp, t / tp, target))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("robots", nargs="*", default=["puma560", "rx90", "wam7"])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--compiled", action="store_true")
    args = parser.parse_args()
    if os.environ.get("ROBODYN_NATIVE", "").strip() == "0":
        parser.error("unset ROBODYN_NATIVE: the script switches it itself for the 'numpy µs' column")
    print(f"{'robot':8} {'function':17} {'method':17} {'path':>8} {'robodyn µs':>10} {'numpy µs':>9} "
          f"{'pin':>8} {'pin µs':>7} {'ratio':>6} {'target':>6}")
    for name in args.robots:
        for robot, fn, method, path, t, numpy_us, ref, tp, ratio, target in rows_for(name, args.repeat,
                                                                                      args.compiled):
            flag = "" if target is None or ratio <= target else "  (above target)"
            py = f"{numpy_us:9.1f}" if numpy_us is not None else f"{'':9}"
            goal = f"{target:6}" if target is not None else f"{'-':>6}"
            print(f"{robot:8} {fn:17} {method:17} {path:>8} {t:10.2f} {py} {ref:>8} {tp:7.2f} {ratio:6.1f} "
                  f"{goal}{flag}")


if __name__ == "__main__":
    main()
