"""Inverse dynamics speed: robodyn (batched NumPy) vs Pinocchio (`pin.rnea` in a Python loop) vs Robotics Toolbox (`rne`).

Run from the repository root:

    python benchmarks/bench_inverse_dynamics.py                 # puma560 and panda, batches 1, 10^3, 10^4, 10^5
    python benchmarks/bench_inverse_dynamics.py --robots rx90 --sizes 1 1000 --repeat 3

Prints microseconds per state (best of --repeat runs) and the ratios Pinocchio/robodyn and RTB/robodyn
(> 1: robodyn is faster).  Batch size 1 is one call per state for every library.  Robotics Toolbox is timed up to
--rtb-max states per call; larger batches are extrapolated linearly from that size and marked with '*'.
Before timing, the three libraries' torques are compared on the benchmark states (they must agree to 1e-10).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import robodyn as rd  # noqa: E402
from robodyn.model.inertia import com_from_standard  # noqa: E402
from _timing import best_time  # noqa: E402



def pinocchio_model(robot):
    try:
        from tests.support.pin_bridge import PinRobot
    except ImportError as exc:  # pinocchio missing
        print(f"  (Pinocchio not available: {exc}; its column is skipped)")
        return None
    return PinRobot(robot)


def rtb_model(robot):
    """The robot as a Robotics Toolbox modified-DH model (serial chains; trailing massless fixed frames dropped)."""
    try:
        import roboticstoolbox as rtb
    except ImportError as exc:
        print(f"  (Robotics Toolbox not available: {exc}; its column is skipped)")
        return None
    frames = list(range(robot.nf))
    while frames and robot.sigma[frames[-1]] == 2 and not np.any(robot.params[frames[-1]]):
        frames.pop()
    if not robot.is_serial or np.any(robot.gamma) or np.any(robot.b) or np.any(robot.sigma[frames] == 2):
        print("  (Robotics Toolbox: only serial chains without fixed frames carrying mass; column skipped)")
        return None
    links = []
    for i in frames:
        M, S, IG = com_from_standard(robot.params[i])
        kw = dict(a=robot.d[i], alpha=robot.alpha[i], m=M, r=S, I=IG, Jm=robot.Ia[i], G=1.0, B=robot.Fv[i],
                  Tc=[robot.Fc[i], -robot.Fc[i]])
        if robot.sigma[i] == 0:
            links.append(rtb.RevoluteMDH(d=robot.r[i], offset=robot.theta[i], **kw))
        else:
            links.append(rtb.PrismaticMDH(theta=robot.theta[i], offset=robot.r[i], **kw))
    return rtb.DHRobot(links, name=robot.name, gravity=robot.gravity)


def states(robot, size, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-np.pi, np.pi, (size, robot.n)), rng.uniform(-2, 2, (size, robot.n)),
            rng.uniform(-5, 5, (size, robot.n)))


def check_agreement(robot, pr, bot):
    q, qd, qdd = states(robot, 50, seed=1)
    tau = rd.inverse_dynamics(robot, q, qd, qdd) - rd.friction_torques(robot, qd)
    scale = max(1.0, np.abs(tau).max())
    if pr is not None:
        err = max(np.abs(pr.rnea(q[s], qd[s], qdd[s]) - tau[s]).max() for s in range(50)) / scale
        print(f"  agreement with Pinocchio: max relative difference {err:.1e}")
        assert err < 1e-10
    if bot is not None:
        err = np.abs(bot.rne(q, qd, qdd) - rd.inverse_dynamics(robot, q, qd, qdd)).max() / scale
        print(f"  agreement with Robotics Toolbox: max relative difference {err:.1e}")
        assert err < 1e-10


def bench_robot(name, sizes, repeat, rtb_max):
    if name not in rd.list_robots():
        print(f"{name}: not a built-in robot of this robodyn (robots: {', '.join(rd.list_robots())}); skipped")
        return []
    robot = rd.load(name)
    print(f"{name}: n = {robot.n}, nf = {robot.nf}")
    pr, bot = pinocchio_model(robot), rtb_model(robot)
    check_agreement(robot, pr, bot)
    rows = []
    for size in sizes:
        q, qd, qdd = states(robot, size)
        if size == 1:
            calls = 2000
            Q, QD, QDD = states(robot, calls)
            t_rd = best_time(lambda: [rd.inverse_dynamics(robot, Q[s], QD[s], QDD[s]) for s in range(calls)], repeat) / calls
        else:
            t_rd = best_time(lambda: rd.inverse_dynamics(robot, q, qd, qdd), repeat) / size
        t_pin = None
        if pr is not None:
            import pinocchio as pin

            m, d = pr.model, pr.data
            k = max(size, 10000) if size == 1 else size
            Q, QD, QDD = states(robot, k) if size == 1 else (q, qd, qdd)
            t_pin = best_time(lambda: [pin.rnea(m, d, Q[s], QD[s], QDD[s]) for s in range(k)], repeat) / k
        t_rtb, extrapolated = None, False
        if bot is not None:
            if size == 1:
                Q, QD, QDD = states(robot, 500)
                t_rtb = best_time(lambda: [bot.rne(Q[s], QD[s], QDD[s]) for s in range(500)], repeat) / 500
            else:
                k = min(size, rtb_max)
                extrapolated = k < size
                t_rtb = best_time(lambda: bot.rne(q[:k], qd[:k], qdd[:k]), repeat) / k
        rows.append((name, size, t_rd, t_pin, t_rtb, extrapolated))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", nargs="+", default=["puma560", "panda"])
    ap.add_argument("--sizes", nargs="+", type=int, default=[1, 1000, 10000, 100000])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rtb-max", type=int, default=10000, help="largest batch given to RTB rne in one call")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '')}")
    for mod in ("pinocchio", "roboticstoolbox"):
        try:
            print(f"{mod} {__import__(mod).__version__}")
        except ImportError:
            pass
    rows = [row for name in args.robots for row in bench_robot(name, args.sizes, args.repeat, args.rtb_max)]
    fmt = lambda x: "-" if x is None else f"{x * 1e6:.3f}"  # noqa: E731
    ratio = lambda a, b: "-" if a is None else f"{a / b:.2f}"  # noqa: E731
    print()
    print("| robot | states per call | robodyn µs/state | Pinocchio loop µs/state | RTB rne µs/state | Pinocchio/robodyn | RTB/robodyn |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, size, t_rd, t_pin, t_rtb, ext in rows:
        star = "*" if ext else ""
        print(f"| {name} | {size} | {fmt(t_rd)} | {fmt(t_pin)} | {fmt(t_rtb)}{star} | {ratio(t_pin, t_rd)} | {ratio(t_rtb, t_rd)}{star} |")
    if any(r[5] for r in rows):
        print(f"\n* RTB timed on {args.rtb_max} states per call and extrapolated linearly (µs/state taken as constant).")


if __name__ == "__main__":
    main()
