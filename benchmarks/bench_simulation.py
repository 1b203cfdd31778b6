"""Simulation speed: a 7-joint robot with Coulomb and viscous friction, 5 s at 1 kHz output, and every built-in
robot over 2 s (the case that used to stall: Coulomb friction at rest).

Run from the repository root:

    python benchmarks/bench_simulation.py                 # panda + friction, 5 s at 1 kHz; all robots over 2 s
    python benchmarks/bench_simulation.py --duration 1

Prints wall-clock seconds, right-hand-side evaluations and the energy-balance error of each run
(E(t) − E(0) − (W_Γ − W_f), which must stay at the integrator's tolerance). Target: < 5 s for the 7-joint run.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import robodyn as rd  # noqa: E402
from robodyn.control import ComputedTorque, PDGravity, QuinticReference  # noqa: E402


def _row(label, robot, sim, seconds, budget):
    err = np.abs(sim.energy_error).max()
    ok = "" if budget is None else ("ok" if seconds < budget else f"over {budget} s")
    print(f"| {label} | {robot.n} | {type(sim.friction).__name__} | {sim.t.size} | {seconds:.2f} | {sim.nfev} | "
          f"{err:.1e} | {ok} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0, help="7-joint run: simulated time (s)")
    parser.add_argument("--all-duration", type=float, default=2.0, help="every built-in robot: simulated time (s)")
    args = parser.parse_args()
    print(f"Python {platform.python_version()}, NumPy {np.__version__}")
    print("| run | n | friction | outputs | seconds | RHS evaluations | max energy error (J) | target |")
    print("|---|---:|---|---:|---:|---:|---:|---|")
    # 7 joints with friction (Panda's model with rx90-like Coulomb and viscous coefficients), PD + gravity
    # tracking a quintic over the first 60 % of the run, 1 kHz output
    panda = rd.load("panda")
    jf = panda.joint_frames
    Fc, Fv = np.zeros(panda.nf), np.zeros(panda.nf)
    Fc[jf], Fv[jf] = [7.0, 8.0, 6.0, 5.0, 2.5, 3.0, 0.3], [8.0, 5.5, 2.0, 2.0, 1.1, 1.9, 0.65]
    robot = panda.replace(Fc=Fc, Fv=Fv)
    q0 = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8])
    ref = QuinticReference(q0, q0 + 0.4, 0.6 * args.duration)
    t = np.linspace(0, args.duration, int(round(args.duration * 1000)) + 1)
    for name, ctl in (("PD + gravity", PDGravity(robot, 200.0, 30.0, ref)),
                      ("computed torque", ComputedTorque(robot, 100.0, 20.0, ref))):
        start = time.perf_counter()
        sim = rd.simulate(robot, ctl, q0, np.zeros(7), t)
        _row(f"panda + friction, {name}, {args.duration:g} s at 1 kHz", robot, sim, time.perf_counter() - start,
             5.0 * args.duration / 5.0)
    # every built-in robot, its own friction, holding its gravity torque from a non-singular pose for 2 s
    t = np.linspace(0, args.all_duration, 201)
    for name in rd.list_robots():
        robot = rd.load(name)
        q0 = np.linspace(0.2, 0.6, robot.n)
        g = rd.gravity_torques(robot, q0)
        for friction in ("smooth", "lugre"):
            start = time.perf_counter()
            sim = rd.simulate(robot, lambda tt, g=g: np.broadcast_to(g, np.shape(tt) + g.shape), q0,
                              np.zeros(robot.n), t, friction=friction)
            _row(f"{name}, holding, {args.all_duration:g} s", robot, sim, time.perf_counter() - start, None)
        start = time.perf_counter()
        sim = rd.simulate(robot, lambda tt, n=robot.n: np.zeros(np.shape(tt) + (n,)), q0, np.zeros(robot.n), t)
        _row(f"{name}, falling (Γ = 0), {args.all_duration:g} s", robot, sim, time.perf_counter() - start, None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
