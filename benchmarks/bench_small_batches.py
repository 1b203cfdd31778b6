"""Benchmark: small batches (1, 10, 100 states per call), robodyn's one call vs a Python loop of Pinocchio.

Run:  PYTHONPATH=src:. python benchmarks/bench_small_batches.py [--sizes 1,10,100] [--repeat 7]

A controller, an estimator or a planner often hands robodyn a few states at a time: the cost of a call there is its
fixed part (argument checks, buffers, the C entry) more than the kernels'.  robodyn takes each batch (k, n) in one
call of its default function; Pinocchio runs one C++ call per state from Python, the loop a user would write
(``pin.rnea``, ``pin.crba``, ``pin.aba``, ``pin.nonLinearEffects``, on Panda; a free flyer's ``pin.rnea``,
``pin.crba``, ``pin.aba`` on solo12 and TALOS of example-robot-data).  µs per call, the best of ``--repeat``
timing loops; ratio = Pinocchio's loop / robodyn's call (> 1: robodyn faster).  The numbers agree before they are
timed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin

import robodyn as rd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository (tests.support), from any folder
from bench_floating import free_flyer_pair, urdf_paths  # noqa: E402
from bench_single_state import best_us  # noqa: E402
from tests.support.pin_bridge import PinRobot  # noqa: E402


def fixed_cases(k: int):
    """(robot, function, robodyn's call, Pinocchio's loop, check) for Panda and ``k`` states."""
    robot = rd.load("panda").replace(Fc=None, Fv=None)
    pr = PinRobot(robot)
    model, data = pr.model, pr.data
    rng = np.random.default_rng(k)
    q, qd, qdd = rng.uniform(-1, 1, (3, k, robot.n))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    pq, pv, pa, pt = ([pr._in(x) for x in X] for X in (q, qd, qdd, tau))
    np.testing.assert_allclose(rd.inertia_matrix(robot, q)[0], pr.crba(q[0]), rtol=1e-9, atol=1e-12)
    return [
        ("panda", "inverse_dynamics", lambda: rd.inverse_dynamics(robot, q, qd, qdd),
         lambda: [pin.rnea(model, data, pq[i], pv[i], pa[i]) for i in range(k)]),
        ("panda", "inertia_matrix", lambda: rd.inertia_matrix(robot, q),
         lambda: [pin.crba(model, data, pq[i]) for i in range(k)]),
        ("panda", "forward_dynamics", lambda: rd.forward_dynamics(robot, q, qd, tau),
         lambda: [pin.aba(model, data, pq[i], pv[i], pt[i]) for i in range(k)]),
        ("panda", "bias_torques", lambda: rd.bias_torques(robot, q, qd),
         lambda: [pin.nonLinearEffects(model, data, pq[i], pv[i]) for i in range(k)]),
    ]


def floating_cases(name: str, path: str, k: int):
    robot, model, _, (q, v, a, tau), (qp, vp, ap, taup) = free_flyer_pair(path, k)
    data = model.createData()
    np.testing.assert_allclose(rd.floating.floating_forward_dynamics(robot, q, v, tau), a, rtol=1e-8, atol=1e-8)
    return [
        (name, "floating rnea", lambda: rd.floating.floating_inverse_dynamics(robot, q, v, a),
         lambda: [pin.rnea(model, data, qp[i], vp[i], ap[i]) for i in range(k)]),
        (name, "floating crba", lambda: rd.floating.floating_inertia_matrix(robot, q),
         lambda: [pin.crba(model, data, qp[i]) for i in range(k)]),
        (name, "floating aba", lambda: rd.floating.floating_forward_dynamics(robot, q, v, tau),
         lambda: [pin.aba(model, data, qp[i], vp[i], taup[i]) for i in range(k)]),
    ]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,10,100", help="states per call")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    paths = urdf_paths()
    print(f"{'robot':<15}{'function':<18}{'states':>7}{'robodyn µs':>12}{'Pin loop µs':>13}{'ratio':>8}"
          f"{'rd µs/state':>13}")
    for k in (int(s) for s in args.sizes.split(",")):
        cases = fixed_cases(k)
        for name in ("solo12", "talos_reduced"):
            if name + ".urdf" in paths:
                cases += floating_cases(name, paths[name + ".urdf"], k)
        for robot, function, mine, theirs in cases:
            t_rd, t_pin = best_us(mine, args.repeat), best_us(theirs, args.repeat)
            print(f"{robot:<15}{function:<18}{k:>7}{t_rd:>12.2f}{t_pin:>13.2f}{t_pin / t_rd:>8.2f}{t_rd / k:>13.3f}",
                  flush=True)


if __name__ == "__main__":
    main()
