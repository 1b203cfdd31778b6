"""Compiled kinematics and derivatives (rd.compile kinds jacobian, jacobian_dot_qd, inverse_dynamics_derivatives,
forward_dynamics_derivatives) vs robodyn's numeric functions, one state from Python.

Run from the repository root:

    PYTHONPATH=src:. python benchmarks/bench_compiled_kinematics.py                 # panda
    PYTHONPATH=src:. python benchmarks/bench_compiled_kinematics.py --robots puma560 panda --repeat 5

Each row: the numeric function (rd.jacobian, ...) and the compiled model of the same kind (C, the single-state
entry); µs per call, best of ``--repeat`` rounds of timeit's autorange. The results are compared (largest
difference printed). Pinocchio's side of the same quantities: benchmarks/bench_derivatives.py (derivatives).
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

import robodyn as rd


def _per_call(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        number, total = timeit.Timer(fn).autorange()
        best = min(best, total / number)
    return best * 1e6


def _rows(robot, q, qd, x):
    J = rd.compile(robot, "jacobian")
    Jd = rd.compile(robot, "jacobian_dot_qd")
    D = rd.compile(robot, "inverse_dynamics_derivatives")
    F = rd.compile(robot, "forward_dynamics_derivatives")
    tau = rd.inverse_dynamics(robot, q, qd, x)
    return [
        ("J of the end frame", lambda: rd.jacobian(robot, q), lambda: J(q)),
        ("J̇q̇ of the end frame", lambda: rd.jacobian_dot_qd(robot, q, qd), lambda: Jd(q, qd)),
        ("∂Γ/∂q, ∂Γ/∂q̇", lambda: rd.inverse_dynamics_derivatives(robot, q, qd, x), lambda: D(q, qd, x)),
        ("∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂Γ", lambda: rd.forward_dynamics_derivatives(robot, q, qd, tau),
         lambda: F(q, qd, tau)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", nargs="+", default=["panda"])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for name in args.robots:
        robot = rd.load(name)
        q, qd, x = np.random.default_rng(0).uniform(-1, 1, (3, robot.n))
        print(f"{name} (n = {robot.n}), µs per call, one state")
        print(f"  {'quantity':24s} {'numeric':>10s} {'compiled':>10s} {'agree':>10s}")
        for label, numeric, compiled in _rows(robot, q, qd, x):
            a, b = numeric(), compiled()
            diff = max(np.abs(np.asarray(u) - np.asarray(v)).max() for u, v in
                       (zip(a, b) if isinstance(a, tuple) else [(a, b)]))
            print(f"  {label:24s} {_per_call(numeric, args.repeat):10.1f} {_per_call(compiled, args.repeat):10.1f}"
                  f" {diff:10.1e}")


if __name__ == "__main__":
    main()
