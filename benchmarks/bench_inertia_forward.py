"""Benchmark: inertia matrix and direct dynamics of robodyn vs Pinocchio (crba/aba) and the Robotics Toolbox
(inertia/accel), on puma560 and panda, single call and batched.

Run:  PYTHONPATH=src:. python benchmarks/bench_inertia_forward.py [--batch 1000] [--repeat 9]  (docs/dynamic-model.md, Performance)

robodyn robots come from ``rd.load(name)``; when a built-in robot is missing, panda is rebuilt from the
Robotics Toolbox's modified-DH model (same kinematics and inertias) and a missing puma560 is skipped with a
message.  Pinocchio runs on the same robodyn robot through tests/support/pin_bridge.py (a Python loop over
states, one C++ call per state); the Robotics Toolbox runs its own model of the same robot (a loop over states).
Times are the best CPU times of ``--repeat`` interleaved runs, in µs per state; ratios are (other library) / (robodyn), so > 1
means robodyn is faster.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pinocchio as pin

import robodyn as rd
from robodyn.errors import RobodynError, UnknownRobotError
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository (tests.support), from any folder
from tests.support.pin_bridge import PinRobot  # noqa: E402


def best_times(funcs: dict, repeat: int) -> dict:
    """Best CPU time of each function, the functions run in turn ``repeat`` times.

    CPU time of the process (``time.process_time``) rather than wall time: on a shared machine it does not count
    the time other jobs hold the core, and for these single-threaded computations it equals the wall time of an
    idle machine.  Interleaving makes any remaining drift affect all functions alike."""
    best = dict.fromkeys(funcs, np.inf)
    for _ in range(repeat):
        for key, f in funcs.items():
            t = time.process_time()
            f()
            best[key] = min(best[key], time.process_time() - t)
    return best


def robodyn_from_rtb_mdh(name: str, model) -> rd.Robot:
    """A robodyn Robot from a Robotics Toolbox modified-DH model (a_{j-1} → d_j, α_{j-1} → α_j, Ia = G² Jm)."""
    links = model.links
    params = [rd.standard_from_com(L.m, L.r, L.I) for L in links]
    return rd.Robot(
        name=name, sigma=[int(L.isprismatic) for L in links], alpha=[L.alpha for L in links], d=[L.a for L in links],
        theta=[0.0 if L.isprismatic else L.offset for L in links], r=[L.d for L in links], params=params,
        Ia=[L.G**2 * L.Jm for L in links], gravity=np.asarray(model.gravity, float), source=f"RTB {model.name}",
    )


def load_robots():
    import roboticstoolbox as rtb

    out = []
    for name, make in (("puma560", rtb.models.DH.Puma560), ("panda", rtb.models.DH.Panda)):
        rtb_model = make().nofriction()
        try:
            robot = rd.load(name)
        except UnknownRobotError:
            if not rtb_model.mdh:
                print(f"skip {name}: no built-in robodyn model and the RTB model is standard DH")
                continue
            try:
                robot = robodyn_from_rtb_mdh(name, rtb_model)
            except RobodynError as e:
                print(f"skip {name}: {e}")
                continue
        z = np.zeros(robot.nf)
        out.append((name, robot.replace(Fc=z, Fv=z, Foff=z, Fst=z), rtb_model))
    return out


def run(batch: int, repeat: int, n_loop: int) -> list[dict]:
    rows = []
    rng = np.random.default_rng(0)
    for name, robot, rtb_model in load_robots():
        n = robot.n
        q, qd, tau = (rng.uniform(-1, 1, (batch, n)) for _ in range(3))
        pin_robot = PinRobot(robot)
        model, data = pin_robot.model, pin_robot.data
        qp, qdp, taup = (np.empty_like(x) for x in (q, qd, tau))
        for x, xp in ((q, qp), (qd, qdp), (tau, taup)):
            xp[:, pin_robot.perm] = x  # Pinocchio's joint order
        loop = range(min(n_loop, batch))
        cases = [
            ("inertia", "composite", lambda x: rd.inertia_matrix(robot, x[0], method="composite"),
             lambda i: pin.crba(model, data, qp[i]), lambda i: rtb_model.inertia(q[i])),
            ("inertia", "newton_euler", lambda x: rd.inertia_matrix(robot, x[0], method="newton_euler"), None, None),
            ("forward", "recursive", lambda x: rd.forward_dynamics(robot, *x, method="recursive"),
             lambda i: pin.aba(model, data, qp[i], qdp[i], taup[i]), lambda i: rtb_model.accel(q[i], qd[i], tau[i])),
            ("forward", "cholesky", lambda x: rd.forward_dynamics(robot, *x, method="cholesky"), None, None),
        ]
        check = {  # robodyn vs Pinocchio on the first states: the timed computations agree
            "inertia": max(_rel(rd.inertia_matrix(robot, q[i]), pin_robot.crba(q[i])) for i in range(5)),
            "forward": max(_rel(rd.forward_dynamics(robot, q[i], qd[i], tau[i]), pin_robot.aba(q[i], qd[i], tau[i]))
                           for i in range(5)),
        }
        print(f"{name}: max relative difference to Pinocchio, A {check['inertia']:.1e}, q̈ {check['forward']:.1e}")
        for what, method, ours, pin_f, rtb_f in cases:
            funcs = {"single": lambda: ours((q[0], qd[0], tau[0])), "batched": lambda: ours((q, qd, tau))}
            if pin_f is not None:
                funcs["pin"] = lambda: [pin_f(i) for i in loop]
                funcs["rtb"] = lambda: [rtb_f(i) for i in loop]
            t = best_times(funcs, repeat)
            per_state = {"single": 1, "batched": batch, "pin": len(loop), "rtb": len(loop)}
            row = dict(robot=name, what=what, method=method, pin=None, rtb=None)
            row.update({k: t[k] / per_state[k] * 1e6 for k in t})
            rows.append(row)
    return rows


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b))))


def fmt(x):
    if x is None:
        return "—"
    return f"{x:.0f}" if x >= 100 else f"{x:.3g}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--loop", type=int, default=300, help="states in the Pinocchio/RTB Python loops")
    args = parser.parse_args()
    rows = run(args.batch, args.repeat, args.loop)
    print(f"µs per state (per call for single calls and the loops); batch = {args.batch}; best of {args.repeat}")
    print("| robot | quantity | robodyn method | robodyn single | robodyn batched | Pinocchio | RTB "
          "| Pin/rd single | Pin/rd batched | RTB/rd single | RTB/rd batched |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        ratios = [None if r[lib] is None else r[lib] / r[mode] for lib in ("pin", "rtb") for mode in ("single", "batched")]
        cells = [r["single"], r["batched"], r["pin"], r["rtb"], *ratios]
        print(f"| {r['robot']} | {r['what']} | {r['method']} | " + " | ".join(fmt(c) for c in cells) + " |")

if __name__ == "__main__":
    main()
