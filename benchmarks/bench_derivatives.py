"""Inverse-dynamics derivatives: robodyn (batched forward-mode Newton–Euler) vs a Python loop over Pinocchio's
`computeRNEADerivatives`.

Run from the repository root:

    python benchmarks/bench_derivatives.py                      # panda and wam7, 10^4 states
    python benchmarks/bench_derivatives.py --robots panda --batch 1000 --repeat 3

Prints microseconds per state (best of --repeat runs) and the ratio Pinocchio/robodyn (> 1: robodyn is faster).
Before timing, both libraries' ∂Γ/∂q and ∂Γ/∂q̇ are compared on the benchmark states (they must agree to 1e-9
relative). Friction is left out (Pinocchio has none).
"""

from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import robodyn as rd  # noqa: E402
from robodyn.dynamics.friction_models import frictionless  # noqa: E402
from _timing import best_time  # noqa: E402



def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", nargs="+", default=["panda", "wam7"])
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import pinocchio as pin

    from tests.support.pin_bridge import PinRobot

    print(f"Python {platform.python_version()}, NumPy {np.__version__}, Pinocchio {pin.__version__}; "
          f"{args.batch} states per call, best of {args.repeat}")
    print("| robot | n | states | robodyn µs/state | Pinocchio loop µs/state | Pinocchio/robodyn |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in args.robots:
        robot = frictionless(rd.load(name))
        pr = PinRobot(robot)
        rng = np.random.default_rng(0)
        q, qd, qdd = (rng.uniform(-2, 2, (args.batch, robot.n)) for _ in range(3))
        qs, vs, as_ = (np.array([pr._in(x) for x in arr]) for arr in (q, qd, qdd))
        ix = np.ix_(pr.perm, pr.perm)

        def pin_loop():
            out = []
            for k in range(args.batch):
                dq, dv, _ = pin.computeRNEADerivatives(pr.model, pr.data, qs[k], vs[k], as_[k])
                out.append((dq.copy(), dv.copy()))
            return out

        ours = rd.inverse_dynamics_derivatives(robot, q, qd, qdd)
        ref = pin_loop()
        for k in range(0, args.batch, max(1, args.batch // 100)):
            scale = max(np.abs(ref[k][0]).max(), np.abs(ref[k][1]).max())
            for mine, theirs in ((ours[0][k], ref[k][0][ix]), (ours[1][k], ref[k][1][ix])):
                if np.abs(mine - theirs).max() > 1e-9 * scale:
                    print(f"{name}: robodyn and Pinocchio disagree at state {k}", file=sys.stderr)
                    return 1
        t_rd = best_time(lambda: rd.inverse_dynamics_derivatives(robot, q, qd, qdd), args.repeat)
        t_pin = best_time(pin_loop, args.repeat)
        us = 1e6 / args.batch
        print(f"| {name} | {robot.n} | {args.batch} | {t_rd * us:.3f} | {t_pin * us:.3f} | {t_pin / t_rd:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
