"""Regressor D(q, q̇, q̈) per state: robodyn (single and batched) vs Pinocchio's computeJointTorqueRegressor.

Run:  PYTHONPATH=src:. python benchmarks/bench_regressor.py [--batch 1000 10000] [--repeat 5]
Pinocchio is a test/benchmark-only dependency; it has no rotor-inertia or friction columns, so robodyn is timed
with ``friction=False`` as well (its Ia columns are cheap).  robodyn's batched inverse dynamics is timed on the
same states for scale (the regressor computes ~10 numbers per (joint, link below it) where the inverse dynamics
computes one torque per joint).  Times are microseconds per state, best of --repeat.
"""

from __future__ import annotations

import argparse

import numpy as np
import pinocchio as pin

from robodyn import inverse_dynamics, regressor
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository (tests.support), from any folder
from tests.support.pin_bridge import PinRobot  # noqa: E402
from tests.support.random_robots import random_robot  # noqa: E402
from tests.test_base_parameters_rx90 import rx90  # noqa: E402
from _timing import best_time  # noqa: E402



def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"{'robot':<10}{'n':>3}{'states':>8}  {'robodyn 1 state':>16}  {'robodyn batch':>14}  "
          f"{'inv. dyn. batch':>16}  {'pinocchio loop':>15}  (us/state)")
    for robot in (rx90(), random_robot(7, nf=7, prismatic=True)):
        pr = PinRobot(robot)
        m, d = pr.model, pr.data
        for B in args.batch:
            rng = np.random.default_rng(0)
            q, qd, qdd = (rng.uniform(-2, 2, (B, robot.n)) for _ in range(3))
            one = min(B, 50)
            single = best_time(lambda: [regressor(robot, q[k], qd[k], qdd[k], friction=False) for k in range(one)],
                          args.repeat)
            batch = best_time(lambda: regressor(robot, q, qd, qdd, friction=False), args.repeat) / B
            idyn = best_time(lambda: inverse_dynamics(robot, q, qd, qdd), args.repeat) / B
            pin_loop = best_time(lambda: [pin.computeJointTorqueRegressor(m, d, q[k], qd[k], qdd[k]) for k in range(B)],
                            args.repeat) / B
            print(f"{robot.name:<10}{robot.n:>3}{B:>8}  {single / one * 1e6:>16.1f}  {batch * 1e6:>14.2f}  "
                  f"{idyn * 1e6:>16.2f}  {pin_loop * 1e6:>15.2f}")


if __name__ == "__main__":
    main()
