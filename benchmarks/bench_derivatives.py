"""Dynamics derivatives: robodyn (robodyn.native's compiled kernels) vs Pinocchio from Python, batched and one state.

Run from the repository root:

    PYTHONPATH=src:. python benchmarks/bench_derivatives.py                 # panda, wam7, n = 25; 1000 states
    PYTHONPATH=src:. python benchmarks/bench_derivatives.py --robots panda --batch 1000 --repeat 3

Two quantities, five derivatives:

- ∂Γ/∂q, ∂Γ/∂q̇: ``rd.inverse_dynamics_derivatives`` vs ``pin.computeRNEADerivatives``;
- ∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂Γ: ``rd.forward_dynamics_derivatives`` vs ``pin.computeABADerivatives``.

Batched: robodyn's call on the whole (N, n) batch vs a Python loop of Pinocchio's call over the N states (results
copied out of ``data``). One state: a 1-D state per call, both from Python. Before timing, both libraries' results
are compared on the benchmark states (relative difference printed; Pinocchio's A⁻¹ fills its upper triangle).
Friction is left out (Pinocchio has none). Every variant of a row runs interleaved in each round, best round kept
(a burst of load from other processes hits all of them). Ratio = Pinocchio time / robodyn time (> 1: robodyn is
faster); targets: batched ≥ 1, one state ≥ 0.5. ``% peak`` = the traced operation count of the NumPy recursions
(robodyn.analysis; ∂q̈ adds the articulated-body and composite-link counts and n³/3 + 6n³ for the Cholesky
factorisation and 3n triangular solves) × robodyn's states/s ÷ the machine's float64 peak (printed).

``--numpy`` times the NumPy path instead (ROBODYN_NATIVE=0: ``rnea_components`` on dual numbers), one state and
the batch; with ``--before REV`` beside robodyn.dynamics.derivatives as it was at git revision REV (loaded from
``git show``, run on today's rest of robodyn), interleaved in the same process:

    PYTHONPATH=src:. python benchmarks/bench_derivatives.py --numpy --before eedb585 --robots puma560 panda
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import types
import time
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import robodyn as rd  # noqa: E402
from robodyn.analysis.opcount import count_operations  # noqa: E402
from robodyn.analysis.traced import counting, traced_array  # noqa: E402
from robodyn.dual import DUAL, variable  # noqa: E402
from robodyn.dynamics.friction_models import frictionless  # noqa: E402
from robodyn.dynamics.newton_euler import rnea_components  # noqa: E402
from _timing import flops, machine_peak  # noqa: E402


def robot_named(name: str) -> rd.Robot:
    if name.isdigit():  # a random revolute chain of that many joints
        from tests.support.random_robots import random_robot

        return frictionless(random_robot(int(name), nf=int(name), prismatic=False, friction=False))
    return frictionless(rd.load(name))


def derivative_flops(robot) -> tuple[int, int]:
    """Traced operation counts of ∂Γ (the NumPy forward-mode recursion) and of ∂q̈ (see the module docstring)."""
    rng = np.random.default_rng(1)
    q, qd, qdd = (traced_array(rng.uniform(-1.5, 1.5, (robot.n, 1))) for _ in range(3))
    with counting() as tally:  # the recursion on duals, as the NumPy path runs it (public function: float64 input)
        rnea_components(robot, [variable(x, 2 * k) for k, x in enumerate(q)],
                        [variable(x, 2 * k + 1) for k, x in enumerate(qd)], list(qdd), tuple(robot.gravity), backend=DUAL)
    d_tau = flops(tally)
    n = robot.n
    solve = n**3 // 3 + 6 * n**3
    return d_tau, d_tau + flops(count_operations(robot, "forward", "recursive")[0]) + \
        flops(count_operations(robot, "inertia", "composite")[0]) + solve


def interleaved(variants, repeat: int) -> list[float]:
    """Best wall time (s) of each callable over ``repeat`` rounds, the variants run one after the other per round."""
    best = [np.inf] * len(variants)
    for r in range(repeat):
        for j in range(len(variants)):  # the order rotates from round to round
            k = (j + r) % len(variants)
            t = time.perf_counter()
            variants[k]()
            best[k] = min(best[k], time.perf_counter() - t)
    return best


def per_call(f, repeat: int) -> float:
    timer = timeit.Timer(f)
    number = max(1, timer.autorange()[0] // 10)
    return min(timer.repeat(1, number)) / number


def module_at(rev: str) -> types.ModuleType:
    """robodyn.dynamics.derivatives as it was at git revision ``rev`` (the rest of robodyn as it is now)."""
    root = Path(__file__).resolve().parents[1]
    text = subprocess.run(["git", "show", f"{rev}:src/robodyn/dynamics/derivatives.py"], cwd=root, check=True,
                          capture_output=True, text=True).stdout
    module = types.ModuleType(f"derivatives_at_{rev}")
    exec(compile(text, f"{rev}:derivatives.py", "exec"), module.__dict__)
    return module


def numpy_path(args) -> int:
    """∂Γ/∂q, ∂Γ/∂q̇ with ROBODYN_NATIVE=0 (frictionless robots), one state and the batch, optionally beside the
    module of ``--before``; ratio = before / now (> 1: faster now)."""
    os.environ["ROBODYN_NATIVE"] = "0"
    before = module_at(args.before) if args.before else None
    print(f"Python {platform.python_version()}, NumPy {np.__version__}; ROBODYN_NATIVE=0, best of {args.repeat} "
          f"interleaved rounds" + (f"; before = derivatives.py at {args.before}" if before else ""))
    print("| robot | n | states | now ms | before ms | before/now | max rel diff |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in args.robots:
        robot = robot_named(name)
        for N in (1, args.batch):
            rng = np.random.default_rng(0)
            q, qd, qdd = (rng.uniform(-2, 2, (N, robot.n))[0 if N == 1 else slice(None)] for _ in range(3))
            fs = [lambda m=m: m.inverse_dynamics_derivatives(robot, q, qd, qdd)
                  for m in ([rd] + ([before] if before else []))]
            outs = [f() for f in fs]
            diff = max((np.abs(a - b).max() / np.abs(b).max() for o in outs[1:] for a, b in zip(outs[0], o)),
                       default=0.0)
            times = [min(per_call(f, 1) for _ in range(args.repeat)) for f in fs] if N == 1 else \
                interleaved(fs, args.repeat)
            old = f"{times[1] * 1e3:.3f} | {times[1] / times[0]:.2f}" if before else "– | –"
            print(f"| {robot.name} | {robot.n} | {N} | {times[0] * 1e3:.3f} | {old} | {diff:.1e} |", flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", nargs="+", default=["panda", "wam7", "25"],
                        help="robot names, or a number of joints for a random revolute chain")
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--numpy", action="store_true", help="time the NumPy path (ROBODYN_NATIVE=0) instead")
    parser.add_argument("--before", metavar="REV", help="with --numpy: also derivatives.py of this git revision")
    args = parser.parse_args()
    if args.numpy:
        return numpy_path(args)
    import pinocchio as pin

    from tests.support.pin_bridge import PinRobot

    peak, how = machine_peak()
    print(f"Python {platform.python_version()}, NumPy {np.__version__}, Pinocchio {pin.__version__}; "
          f"{args.batch} states per batch, best of {args.repeat} interleaved rounds; peak {peak / 1e9:.0f} GFLOP/s = {how}")
    print("| robot | n | derivative | batch rd µs/state | Pin loop µs/state | Pin/rd | % peak "
          "| 1 state rd µs | Pin µs | Pin/rd | max rel diff |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.robots:
        robot = robot_named(name)
        pr = PinRobot(robot)
        model, data = pr.model, pr.data
        rng = np.random.default_rng(0)
        N = args.batch
        q, qd, qdd = (rng.uniform(-2, 2, (N, robot.n)) for _ in range(3))
        tau = rd.inverse_dynamics(robot, q, qd, qdd)
        qs, vs, as_, ts = (np.array([pr._in(x) for x in arr]) for arr in (q, qd, qdd, tau))
        ix = np.ix_(pr.perm, pr.perm)

        def pin_rnea():
            return [tuple(x.copy() for x in pin.computeRNEADerivatives(model, data, qs[k], vs[k], as_[k])[:2])
                    for k in range(N)]

        def pin_aba():
            out = []
            for k in range(N):
                pin.computeABADerivatives(model, data, qs[k], vs[k], ts[k])
                out.append((data.ddq_dq.copy(), data.ddq_dv.copy(), data.Minv.copy()))
            return out

        def rd_rnea():
            return rd.inverse_dynamics_derivatives(robot, q, qd, qdd)

        def rd_aba():
            return rd.forward_dynamics_derivatives(robot, q, qd, tau)

        def diff(ours, theirs):
            worst = 0.0
            for k in range(0, N, max(1, N // 50)):
                for mine, ref in zip((o[k] for o in ours), theirs[k]):
                    ref = ref[ix]
                    if mine.shape == ref.shape and np.allclose(np.tril(ref, -1), 0) and not np.allclose(np.tril(mine, -1), 0):
                        ref = np.triu(ref) + np.triu(ref, 1).T  # Pinocchio's A⁻¹: upper triangle
                    worst = max(worst, np.abs(mine - ref).max() / max(1.0, np.abs(ref).max()))
            return worst

        d_rnea, d_aba = diff(rd_rnea(), pin_rnea()), diff(rd_aba(), pin_aba())
        t_rd_r, t_pin_r, t_rd_a, t_pin_a = interleaved((rd_rnea, pin_rnea, rd_aba, pin_aba), args.repeat)
        one = [np.inf] * 4
        for _ in range(args.repeat):
            for k, f in enumerate((lambda: rd.inverse_dynamics_derivatives(robot, q[0], qd[0], qdd[0]),
                                   lambda: pin.computeRNEADerivatives(model, data, qs[0], vs[0], as_[0]),
                                   lambda: rd.forward_dynamics_derivatives(robot, q[0], qd[0], tau[0]),
                                   lambda: pin.computeABADerivatives(model, data, qs[0], vs[0], ts[0]))):
                one[k] = min(one[k], per_call(f, 1))
        f_rnea, f_aba = derivative_flops(robot)
        us = 1e6 / N
        for label, t_rd, t_pin, s_rd, s_pin, fl, d in (
                ("∂Γ/∂q, ∂Γ/∂q̇", t_rd_r, t_pin_r, one[0], one[1], f_rnea, d_rnea),
                ("∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂Γ", t_rd_a, t_pin_a, one[2], one[3], f_aba, d_aba)):
            frac = fl * N / t_rd / peak * 100
            print(f"| {robot.name} | {robot.n} | {label} | {t_rd * us:.3f} | {t_pin * us:.3f} | {t_pin / t_rd:.2f} "
                  f"| {frac:.1f} | {s_rd * 1e6:.2f} | {s_pin * 1e6:.2f} | {s_pin / s_rd:.2f} | {d:.1e} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
