"""The friction-model table of docs/simulation-control.md ("How the results depend on the model"): the RX-90
holding a pose under its gravity torque plus half its Coulomb level on every joint for 2 s, each simulation
friction model, rtol = atol = 1e-6.

    PYTHONPATH=src python scripts/friction_holding_table.py            # every row (the last one takes ~30 s)
    PYTHONPATH=src python scripts/friction_holding_table.py --quick    # without the discontinuous model

Prints the markdown table (times are this machine's).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import robodyn as rd
from robodyn.dynamics.friction_models import (
    DiscontinuousFriction, LuGre, SmoothFriction, StickSlipFriction,
)

Q0 = np.array([0.3, -0.5, 0.8, 0.2, 0.6, -0.4])


def rows(quick: bool = False):
    robot = rd.load("rx90")
    load = rd.gravity_torques(robot, Q0) + 0.5 * robot.Fc[robot.joint_frames]
    models = [("SmoothFriction(width=0.1)", SmoothFriction(width=0.1)),
              ("SmoothFriction(width=0.01) (default)", SmoothFriction(width=0.01)),
              ("SmoothFriction(width=0.001)", SmoothFriction(width=0.001)),
              ("LuGre()", LuGre()), ("StickSlipFriction()", StickSlipFriction())]
    if not quick:
        models.append(("DiscontinuousFriction()", DiscontinuousFriction()))
    for label, model in models:
        start = time.perf_counter()
        try:
            sim = rd.simulate(robot, lambda t: np.broadcast_to(load, np.shape(t) + (6,)), Q0, np.zeros(6),
                              np.linspace(0.0, 2.0, 21), friction=model, rtol=1e-6, atol=1e-6,
                              max_evaluations=20_000)
        except rd.RobodynError:
            yield label, None, None, None, time.perf_counter() - start
            continue
        yield (label, float(np.abs(sim.q[-1] - Q0).max()), float(np.abs(sim.qd[-1]).max()), sim.nfev,
               time.perf_counter() - start)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="leave out the discontinuous model")
    args = parser.parse_args(argv)
    print("| friction model | max |q(2 s) − q0| (rad) | max |q̇(2 s)| (rad/s) | RHS evaluations | seconds |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for label, dq, qd, nfev, seconds in rows(args.quick):
        if dq is None:
            print(f"| {label} | stalls: hits max_evaluations = 20 000 | | | {seconds:.0f} |")
        else:
            print(f"| {label} | {dq:.3g} | {qd:.2g} | {nfev} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
