"""Benchmark: floating-base inverse dynamics (rnea), inertia matrix (crba) and forward dynamics (aba) of robodyn vs
Pinocchio's free flyer, on legged robots and humanoids of example-robot-data, single state and batched.

Run:  PYTHONPATH=src:. python benchmarks/bench_floating.py [--batch 1000] [--repeat 9] [--robots solo12.urdf ...]
      PYTHONPATH=src:. python benchmarks/bench_floating.py --cpu --repeat 21 --batch 100   # on a shared machine
(docs/floating-base.md)

Both load the same URDF (robodyn with ``floating=True``, Pinocchio with ``JointModelFreeFlyer``).  Pinocchio runs a
Python loop over the states of a batch (one C++ call per state); robodyn takes the whole batch in one call.  One
state is one call a side (``functools.partial``, no Python wrapper timed), robodyn's also into ``out=`` ("1 out=",
as Pinocchio writes its cached ``data``).  Times
are best wall times of ``--repeat`` runs in µs per state (``--cpu``: median CPU times of ``--repeat`` loops, a single
state 1000 calls a loop, robodyn's and Pinocchio's loops alternating); the ratio is Pinocchio / robodyn (> 1:
robodyn faster).
"""

from __future__ import annotations

import argparse
import functools
import importlib.metadata
import sys
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin

import robodyn as rd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import best_time, median_cpu_time  # noqa: E402


def urdf_paths() -> dict:
    dist = importlib.metadata.distribution("example-robot-data")
    return {str(f).split("/")[-1]: str(dist.locate_file(f)) for f in dist.files or () if str(f).endswith(".urdf")}


def states(n: int, batch: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    quat = rng.normal(size=(batch, 4))
    quat /= np.linalg.norm(quat, axis=-1, keepdims=True)
    q = np.concatenate([rng.normal(size=(batch, 3)), quat, rng.uniform(-1, 1, (batch, n))], -1)
    return q, rng.normal(size=(batch, n + 6)), rng.normal(size=(batch, n + 6))


def free_flyer_pair(path: str, batch: int):
    """robodyn's free-flyer robot and Pinocchio's model of one URDF, with ``batch`` random states in both orderings.

    Returns robot, model, perm (robodyn's velocity index -> Pinocchio's), (q, v, a, tau) in robodyn's order and
    (qp, vp, ap, taup) in Pinocchio's; tau = robodyn's inverse dynamics of (q, v, a)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        robot = rd.load(path, floating=True, strict=False).replace(Fv=None, Fc=None)
    model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    idx = np.array([model.joints[model.getJointId(j)].idx_v for j in robot.q_names])
    perm = np.concatenate([np.arange(6), idx])
    q, v, a = states(robot.n, batch)
    qp = np.empty((batch, model.nq))
    qp[:, :7], qp[:, idx + 1] = q[:, :7], q[:, 7:]
    vp, ap_ = np.empty((batch, model.nv)), np.empty((batch, model.nv))
    vp[:, perm], ap_[:, perm] = v, a
    tau = rd.floating.floating_inverse_dynamics(robot, q, v, a)
    taup = np.empty_like(vp)
    taup[:, perm] = tau
    return robot, model, perm, (q, v, a, tau), (qp, vp, ap_, taup)


def _alternating(mine, pins, repeat: int, number: int) -> tuple[float, float]:
    """Median CPU times (s per call) of ``mine`` and ``pins``, their loops alternating so that both see the same
    load."""
    pairs = [(median_cpu_time(mine, 1, number), median_cpu_time(pins, 1, number)) for _ in range(repeat)]
    return tuple(sorted(p[k] for p in pairs)[repeat // 2] for k in (0, 1))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--robots", nargs="*", default=["solo12.urdf", "talos_reduced.urdf", "g1_29dof_rev_1_0.urdf"])
    ap.add_argument("--cpu", action="store_true", help="median CPU times instead of best wall times")
    args = ap.parse_args(argv)
    paths = urdf_paths()
    print(f"{'robot':<20}{'nv':>4}  {'function':<6}{'states':>7}{'robodyn µs':>12}{'Pinocchio µs':>14}{'ratio':>8}")
    for name in args.robots:
        if name not in paths:
            print(f"{name}: not in the installed example-robot-data, skipped")
            continue
        robot, model, _, (q, v, a, tau), (qp, vp, ap_, taup) = free_flyer_pair(paths[name], args.batch)
        data = model.createData()
        ours = {
            "rnea": lambda s: rd.floating.floating_inverse_dynamics(robot, q[s], v[s], a[s]),
            "crba": lambda s: rd.floating.floating_inertia_matrix(robot, q[s]),
            "aba": lambda s: rd.floating.floating_forward_dynamics(robot, q[s], v[s], tau[s]),
        }
        theirs = {
            "rnea": lambda i: pin.rnea(model, data, qp[i], vp[i], ap_[i]),
            "crba": lambda i: pin.crba(model, data, qp[i]),
            "aba": lambda i: pin.aba(model, data, qp[i], vp[i], taup[i]),
        }
        # one state: each side one C-level call (functools.partial), no Python wrapper of ours or theirs to time
        one = {"rnea": (rd.floating.floating_inverse_dynamics, (robot, q[0], v[0], a[0]),
                        pin.rnea, (model, data, qp[0], vp[0], ap_[0])),
               "crba": (rd.floating.floating_inertia_matrix, (robot, q[0]), pin.crba, (model, data, qp[0])),
               "aba": (rd.floating.floating_forward_dynamics, (robot, q[0], v[0], tau[0]),
                       pin.aba, (model, data, qp[0], vp[0], taup[0]))}
        for fn in ours:
            f, fargs, g, pargs = one[fn]
            buffer = f(*fargs)
            cases = (("1", functools.partial(f, *fargs), functools.partial(g, *pargs), 1),
                     ("1 out=", functools.partial(f, *fargs, out=buffer), functools.partial(g, *pargs), 1),
                     (str(args.batch), lambda: ours[fn](slice(None)),
                      lambda: [theirs[fn](i) for i in range(args.batch)], args.batch))
            for size, mine, pins, count in cases:
                if args.cpu:
                    t_rd, t_pin = _alternating(mine, pins, args.repeat, 1000 if count == 1 else 1)
                    t_rd, t_pin = t_rd / count, t_pin / count
                else:
                    t_rd = best_time(mine, args.repeat) / count
                    t_pin = best_time(pins, args.repeat) / count
                print(f"{name:<20}{model.nv:>4}  {fn:<6}{size:>7}{1e6 * t_rd:>12.2f}{1e6 * t_pin:>14.2f}{t_pin / t_rd:>8.2f}")


if __name__ == "__main__":
    main()
