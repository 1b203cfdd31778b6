"""Time-optimal path parameterisation: robodyn's reachability analysis (rd.simulation.time_optimal) vs toppra.

Run:  PYTHONPATH=src:. python benchmarks/bench_time_scaling.py [--robots planar2r puma560] [--grid 100 200 400]
Both get the same path (a clamped cubic spline through three joint-space waypoints, scipy underneath), the same
grid, the same torque limits and the same rigid-body model (friction removed; toppra calls robodyn's inverse
dynamics). toppra uses collocation and its seidel LP solver. Printed: minimum times and their relative
difference (robodyn must not be slower than toppra by more than 1 %), then wall-clock seconds, best of --repeat.
"""

from __future__ import annotations

import argparse

import numpy as np
import toppra as ta
import toppra.algorithm as algo
import toppra.constraint as constraint

import robodyn as rd
from _timing import best_time_and_result



def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", nargs="+", default=["planar2r", "puma560"])
    ap.add_argument("--grid", type=int, nargs="+", default=[100, 200, 400])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    ta.setup_logging("WARNING")
    print(f"{'robot':<10}{'n':>3}{'grid':>6}  {'robodyn T (s)':>14}  {'toppra T (s)':>13}  {'rel. diff':>10}  "
          f"{'robodyn s':>10}  {'toppra s':>9}")
    for name in args.robots:
        robot = rd.load(name)
        z = np.zeros(robot.nf)
        robot = robot.replace(Fc=z, Fv=z, Foff=z, Fst=z)
        rng = np.random.default_rng(1)
        waypoints = rng.uniform(-1.2, 1.2, (3, robot.n))
        path = rd.simulation.Spline([0.0, 0.5, 1.0], waypoints)
        g = rd.gravity_torques(robot, path.sample(np.linspace(0, 1, 201))[0])
        limits = 1.5 * np.max(np.abs(g), axis=0) + 5.0
        tpath = ta.SplineInterpolator(path.times, path.waypoints, bc_type="clamped")
        cons = constraint.JointTorqueConstraint(lambda q, qd, qdd: rd.inverse_dynamics(robot, q, qd, qdd),
                                                np.column_stack([-limits, limits]), np.zeros(robot.n))
        for N in args.grid:
            t_rd, ours = best_time_and_result(lambda: rd.simulation.time_optimal(robot, path, limits, grid=N), args.repeat)

            def run_toppra():
                inst = algo.TOPPRA([cons], tpath, gridpoints=np.linspace(0, 1, N + 1), solver_wrapper="seidel")
                return inst.compute_trajectory(0, 0).duration

            t_ta, theirs = best_time_and_result(run_toppra, args.repeat)
            print(f"{name:<10}{robot.n:>3}{N:>6}  {ours.duration:>14.6f}  {theirs:>13.6f}  "
                  f"{ours.duration / theirs - 1:>10.1e}  {t_rd:>10.3f}  {t_ta:>9.3f}")


if __name__ == "__main__":
    main()
