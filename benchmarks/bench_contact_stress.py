"""Stress loop of `rd.simulation.contact_step`: random boxes on a plane, one step each, the residual and the time.

Run:  PYTHONPATH=src python benchmarks/bench_contact_stress.py [--cases 1500] [--seed 0] [--cone circle|pyramid]
(docs/simulation-control.md, "Unilateral contacts with friction")

Each case is a 0.4 × 0.2 × 0.1 m box of 2 kg (a floating base) touching the plane z = 0 at its four lower
corners: tilted about a random horizontal axis by 1e-12 … 0.3 rad (log-uniform for half the cases, where four
corners land at once, else uniform), lifted 0 … 2 mm for half of them, μ uniform in 0 … 1.5, and for 70 % of
them a random velocity (each component of v_0 and ω_0 uniform in −1 … 1, m/s | rad/s); h = 1 ms.  With
``--impacts`` the boxes are instead 1e-4 … 1.3e-3 rad from flat, strike the plane at 1 m/s on four corners while
moving and spinning (the other components uniform in −1 … 1) with μ in 1 … 1.5: the hardest cases for the sweeps.
The table counts the cases by their reported residual (m/s, the largest violation of Signorini's and Coulomb's
conditions) and the ones that raise, and gives the CPU time per step (this process's, as the machine may be
shared: median, 99th percentile, largest).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import robodyn as rd
from robodyn.dynamics.floating import quaternion_matrix
from robodyn.simulation import ContactSolverError, contact_step

A, B, C, MASS = 0.2, 0.1, 0.05, 2.0
CORNERS = [(0, [sx * A, sy * B, -C]) for sx in (-1, 1) for sy in (-1, 1)]


def box() -> rd.Robot:
    inertia = MASS / 3 * np.array([B * B + C * C, A * A + C * C, A * A + B * B])
    return rd.Robot(name="box", sigma=[0], Ia=[1.0], base="floating",
                    base_params=[inertia[0], 0, 0, inertia[1], 0, inertia[2], 0, 0, 0, MASS])


def cases(n: int, seed: int, impacts: bool = False):
    """(tilt, q, v, μ) of the random boxes."""
    rng = np.random.default_rng(seed)
    pts = np.array([p for _, p in CORNERS])
    for _ in range(n):
        if impacts:
            tilt = 10 ** rng.uniform(-4, np.log10(1.3e-3))
        else:
            tilt = 10 ** rng.uniform(-12, np.log10(0.3)) if rng.random() < 0.5 else rng.uniform(-0.3, 0.3)
        axis = rng.uniform(0, 2 * np.pi)
        quat = np.array([np.cos(axis) * np.sin(tilt / 2), np.sin(axis) * np.sin(tilt / 2), 0, np.cos(tilt / 2)])
        lift = 0.0 if impacts or rng.random() < 0.5 else rng.uniform(0, 2e-3)
        R = quaternion_matrix(quat)
        q = np.concatenate([[0, 0, lift - min((R @ pts.T)[2])], quat, [0.0]])
        v = np.concatenate([rng.uniform(-1, 1, 6) * (impacts or rng.random() < 0.7), [0.0]])
        if impacts:
            v[2] = -1.0
        yield tilt, q, v, float(rng.uniform(1.0, 1.5) if impacts else rng.uniform(0, 1.5))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--impacts", action="store_true", help="near-flat boxes striking the plane at 1 m/s")
    parser.add_argument("--cone", default="circle")
    parser.add_argument("--facets", type=int, default=4)
    parser.add_argument("--show", type=int, default=10, help="list this many of the worst cases")
    args = parser.parse_args()
    robot = box()
    extra = {} if args.cone == "circle" else {"cone": args.cone, "facets": args.facets}
    contact_step(robot, next(cases(1, 0))[1], np.zeros(7), np.zeros(7), 1e-3, CORNERS, **extra)   # warm up
    residuals, times, raised = [], [], []
    for i, (tilt, q, v, mu) in enumerate(cases(args.cases, args.seed, args.impacts)):
        start = time.process_time()
        try:
            r = contact_step(robot, q, v, np.zeros(7), 1e-3, CORNERS, mu=mu, **extra)
            residuals.append((float(r.residual), i, tilt, mu))
        except ContactSolverError as err:
            raised.append((i, tilt, mu, str(err)[:80]))
            residuals.append((np.inf, i, tilt, mu))
        times.append(time.process_time() - start)
    res = np.array([r[0] for r in residuals])
    t = np.array(times) * 1e3
    kind = "striking boxes" if args.impacts else "boxes"
    print(f"{args.cases} {kind}, cone={args.cone}" + (f" ({args.facets} facets)" if extra else ""))
    for bound in (1e-12, 1e-10, 1e-8, 1e-6):
        print(f"  residual <= {bound:g} m/s: {int(np.sum(res <= bound))}")
    print(f"  raised ContactSolverError: {len(raised)}")
    print(f"  largest finite residual: {np.max(res[np.isfinite(res)]):.3g} m/s")
    print(f"  time per step: median {np.median(t):.2f} ms, 99th percentile {np.percentile(t, 99):.1f} ms, "
          f"largest {t.max():.1f} ms")
    for r, i, tilt, mu in sorted(residuals, reverse=True)[:args.show]:
        if r > 1e-12:
            print(f"    case {i}: tilt {tilt:.3g} rad, mu {mu:.3f}: residual {r:.3g}, {t[i]:.1f} ms")


if __name__ == "__main__":
    main()
