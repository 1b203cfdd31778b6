"""The convergence table of docs/task-space-and-motion.md §5: minimum-time and minimum-energy (T = 0.8 s) motions
of the planar 2R arm from hanging down (−90°, 0) to (0, 90°), |τ₁| ≤ 40 N m, |τ₂| ≤ 15 N m, with N = 10, 20, 30,
40 collocation intervals.

    PYTHONPATH=src python scripts/optimal_motion_table.py              # N = 10 20 30 40 (a few minutes)
    PYTHONPATH=src python scripts/optimal_motion_table.py --nodes 10 20

Prints the markdown table.
"""

from __future__ import annotations

import argparse

import numpy as np

import robodyn as rd

DOWN, UP, LIMITS = [-np.pi / 2, 0.0], [0.0, np.pi / 2], [40.0, 15.0]


def row(nodes: int):
    """(N, T_min, its KKT residual, E_min at T = 0.8 s, its KKT residual)."""
    arm = rd.load("planar2r")
    fast = rd.simulation.optimal_motion(arm, DOWN, UP, LIMITS, nodes=nodes)
    eco = rd.simulation.optimal_motion(arm, DOWN, UP, LIMITS, objective="energy", duration=0.8, nodes=nodes)
    return nodes, fast.duration, fast.kkt_residual, eco.energy, eco.kkt_residual


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[10, 20, 30, 40])
    args = parser.parse_args(argv)
    print("| N intervals | T_min (s) | KKT residual | E_min at T = 0.8 s (N² m² s) | KKT residual |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for n, T, kt, E, ke in map(row, args.nodes):
        print(f"| {n} | {T:.4f} | {kt:.0e} | {E:.2f} | {ke:.0e} |")


if __name__ == "__main__":
    main()
