"""Benchmark: one state per call, robodyn from Python vs Pinocchio from Python, every method, ratios printed.

Run:  PYTHONPATH=src:. python benchmarks/bench_single_state.py [robot ...] [--repeat 7] [--compiled] [--cold]

A 1-D float64 state takes robodyn's single-state path: the default methods robodyn.native's compiled entry, every
other method the kernel traced from its own equations, compiled to C after ``executor.COMPILE_AFTER`` single states
(kept in robodyn's per-robot workspace; the column ``path`` says which ran: native, C or Python).  Pinocchio runs the same
robot (built by tests/support/pin_bridge.py) through its raw Python bindings, ``pin.rnea(model, data, q, v, a)``
etc., one call per state, timed right before the robodyn case it is compared with.  Each time is the best over
``--repeat`` runs of a timing loop, in µs per call; ratio = robodyn / Pinocchio (the targets: inverse_dynamics,
gravity_torques, inertia_matrix ≤ 2× rnea / computeGeneralizedGravity / crba, forward_dynamics ≤ 2× aba, every
other method ≤ 10×).  ``python µs`` is the same call with ROBODYN_NATIVE=0 (the straight-line Python kernel, as
without a C compiler); ``first C ms`` the call that compiled the C kernel, or loaded it from robodyn's compile cache
(``--cold``: an empty temporary cache, so that it is the compile).  ``--compiled`` also times ``rd.compile`` (needs
a C compiler) with and without ``gravity=`` and ``wrenches=``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import timeit

import numpy as np
import pinocchio as pin

import robodyn as rd
from robodyn import native
from robodyn.dynamics import executor
from robodyn.model.workspace import WORKSPACE
from tests.support.pin_bridge import PinRobot


def _compiled(robot) -> dict:
    """The compiled single-state kernels of ``robot`` in the workspace: name -> entry (False: not available)."""
    return {k[1]: v for k, v in WORKSPACE.stored(robot).items() if type(k) is tuple and k[0] == "compiled"}


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
        ("inverse_dynamics", "gibbs_appell", "rnea", 10,
         lambda: rd.inverse_dynamics(robot, q, qd, qdd, method="gibbs_appell")),
        ("inverse_dynamics", "spatial_operator", "rnea", 10,
         lambda: rd.inverse_dynamics(robot, q, qd, qdd, method="spatial_operator")),
        ("gravity_torques", "newton_euler", "gravity", 2, lambda: rd.gravity_torques(robot, q)),
        ("inertia_matrix", "composite", "crba", 2, lambda: rd.inertia_matrix(robot, q)),
        ("inertia_matrix", "walker_orin", "crba", 10, lambda: rd.inertia_matrix(robot, q, method="walker_orin")),
        ("inertia_matrix", "gibbs_appell", "crba", 10, lambda: rd.inertia_matrix(robot, q, method="gibbs_appell")),
        ("forward_dynamics", "recursive", "aba", 2, lambda: rd.forward_dynamics(robot, q, qd, tau)),
        ("forward_dynamics", "cholesky", "aba", 10, lambda: rd.forward_dynamics(robot, q, qd, tau, method="cholesky")),
        ("forward_dynamics", "gibbs_appell", "aba", 10,
         lambda: rd.forward_dynamics(robot, q, qd, tau, method="gibbs_appell")),
        ("forward_dynamics", "spatial_operator", "aba", 10,
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
        before = set(_compiled(robot))
        first_c = None
        for _ in range(executor.COMPILE_AFTER):  # the Python kernel, then the compiled one (built or loaded)
            start = time.perf_counter()
            call()
            first_c = time.perf_counter() - start
        compiled = _compiled(robot)
        new = [k for k in compiled if k not in before]
        if fn_name == "rd.compile":
            path, first_c = "compiled", None
        elif new:
            path = "C" if all(compiled[k] for k in new) else "Python"
        else:
            path, first_c = ("native" if native.available() else "Python"), None
        python = None
        if path == "C":
            os.environ["ROBODYN_NATIVE"] = "0"
            try:
                python = best_us(call, max(1, repeat // 2))
            finally:
                del os.environ["ROBODYN_NATIVE"]
        # Pinocchio timed right before each case: on a shared machine the load changes within a run
        tp = best_us(pin_calls[ref], repeat)
        t = best_us(call, repeat)
        rows.append((name, fn_name, method, path, t, python, first_c, ref, tp, t / tp, target))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("robots", nargs="*", default=["puma560", "rx90", "wam7"])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--compiled", action="store_true")
    parser.add_argument("--cold", action="store_true", help="compile the kernels into an empty temporary cache")
    args = parser.parse_args()
    if os.environ.get("ROBODYN_NATIVE", "").strip() == "0":
        parser.error("unset ROBODYN_NATIVE: the script switches it itself for the 'python µs' column")
    if args.cold:  # the generic library first, from the usual cache, so that only the kernels are cold
        native.available()
        os.environ["ROBODYN_CACHE"] = tempfile.mkdtemp(prefix="robodyn-bench-")
    print(f"{'robot':8} {'function':17} {'method':17} {'path':>8} {'robodyn µs':>10} {'python µs':>9} "
          f"{'first C ms':>10} {'pin':>8} {'pin µs':>7} {'ratio':>6} {'target':>6}")
    for name in args.robots:
        for robot, fn, method, path, t, python, first, ref, tp, ratio, target in rows_for(name, args.repeat,
                                                                                           args.compiled):
            flag = "" if ratio <= target else "  (above target)"
            py = f"{python:9.1f}" if python is not None else f"{'':9}"
            cold = f"{first * 1e3:10.0f}" if first is not None else f"{'':10}"
            print(f"{robot:8} {fn:17} {method:17} {path:>8} {t:10.2f} {py} {cold} {ref:>8} {tp:7.2f} {ratio:6.1f} "
                  f"{target:6}{flag}")


if __name__ == "__main__":
    main()
