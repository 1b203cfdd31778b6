"""The convergence table of docs/task-space-and-motion.md §5: minimum-time and minimum-energy (T = 0.8 s) motions
of the planar 2R arm from hanging down (−90°, 0) to (0, 90°), |τ₁| ≤ 40 N m, |τ₂| ≤ 15 N m, with N = 10, 20, 30
collocation intervals (more with --nodes).  Every motion is checked on a dense sampling of its spline (2000 samples per interval):
the largest |τ_j(t)| / L_j and the energy by the trapezoidal rule on those samples.

    PYTHONPATH=src python scripts/optimal_motion_table.py              # N = 10 20 30 (several minutes)
    PYTHONPATH=src python scripts/optimal_motion_table.py --nodes 10 20

Prints the markdown table.
"""

from __future__ import annotations

import argparse

import numpy as np

import robodyn as rd

DOWN, UP, LIMITS = [-np.pi / 2, 0.0], [0.0, np.pi / 2], [40.0, 15.0]


def dense(arm, motion, per_interval: int = 2000):
    """(max_j max_t |τ_j(t)| / L_j, ∫ τᵀτ dt by the trapezoidal rule) on a dense sampling of the motion."""
    t = np.linspace(0.0, motion.duration, per_interval * (motion.t.size - 1) + 1)
    tau = rd.inverse_dynamics(arm, *motion.sample(t))
    return float(np.max(np.abs(tau) / motion.limits)), float(np.trapezoid(np.sum(tau * tau, axis=1), t))


def row(nodes: int):
    """(N, the minimum-time motion, the minimum-energy motion at T = 0.8 s)."""
    arm = rd.load("planar2r")
    fast = rd.simulation.optimal_motion(arm, DOWN, UP, LIMITS, nodes=nodes)
    eco = rd.simulation.optimal_motion(arm, DOWN, UP, LIMITS, objective="energy", duration=0.8, nodes=nodes)
    return nodes, fast, eco


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[10, 20, 30])
    args = parser.parse_args(argv)
    arm = rd.load("planar2r")
    print("| N intervals | T_min (s) | dense max \\|τ\\|/L | KKT residual | E_min at T = 0.8 s (N² m² s) | "
          "dense ∫τᵀτ dt | dense max \\|τ\\|/L | KKT residual |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n, fast, eco in map(row, args.nodes):
        (rf, _), (re, Ed) = dense(arm, fast), dense(arm, eco)
        print(f"| {n} | {fast.duration:.4f} | {rf:.7f} | {fast.kkt_residual:.0e} | {eco.energy:.2f} | {Ed:.2f} | "
              f"{re:.7f} | {eco.kkt_residual:.0e} |")


if __name__ == "__main__":
    main()
