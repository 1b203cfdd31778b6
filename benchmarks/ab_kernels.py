"""Benchmark: two versions of the generic kernels (kernels.c) side by side in one process, for kernel work.

Each source is built as robodyn builds its own (same flags, robodyn.native.build's cached, verified build) under its
own module name (the hash of its text), and each of two copies of every robot is bound to one of the two modules at
its first call (a bound call keeps its module). The calls then alternate A, B / B, A round after round on one core,
timed in the thread's CPU time, best kept: a burst of load from other processes hits both versions, which separate
runs on a shared machine do not guarantee (there, single figures move by 5-10 % between runs; here two copies of one
source agree within about 2 %).  A Zen 4 favoured one slot over the other by up to 5 % at 12-25 joints whatever the
sources: for effects of a few per cent, run both orders (A B, then B A).

    python benchmarks/ab_kernels.py old.c src/robodyn/native/kernels.c --sizes 6,25,100 \\
        --floating solo12.urdf talos_reduced.urdf

prints, per quantity (the inertia matrix, inverse and forward dynamics, the free flyers' crba), robodyn's µs per
state with A and B and B/A (< 1: B faster), after checking that A and B give the same bits. With --single, one
state per call (1-D arrays, the single-state entries) instead of batches: the inverse dynamics, inertia matrix and
forward dynamics, the free flyers' rnea, crba and aba, µs per call from Python. The two sources must keep the
packed model's layout (rd_packed): both modules read the capsule of the model packed once per robot copy.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.machinery
import importlib.util
import os
import sys
import time
from pathlib import Path

import numpy as np

import robodyn as rd
import robodyn.native as native
from robodyn.native.build import FLAGS, PARALLEL, arch_flags, build_library, numpy_flags, python_flags

sys.path.insert(0, str(Path(__file__).parent))
from bench_native import robot_of_size  # noqa: E402


def load(path: str):
    """The kernels of the source at ``path``, built and loaded as robodyn builds its own."""
    source = Path(path).read_text(encoding="utf-8").replace('#include "parallel.h"\n', native.parallel_source(), 1)
    name = "robodyn.native._rdgeneric_" + hashlib.sha256(source.encode()).hexdigest()[:20]
    flags = [*FLAGS, *native.THREADS, *(f for f in python_flags() if f != "-DRD_PYTHON"), *numpy_flags(),
             *arch_flags(), f"-DRD_MODULE={name.rsplit('.', 1)[1]}"]
    lib = build_library(source, flags, description=f"building {path}", prefix="rdgeneric", preferred=PARALLEL)
    loader = importlib.machinery.ExtensionFileLoader(name, str(lib))
    module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(name, str(lib), loader=loader))
    loader.exec_module(module)
    return module


def bound_pair(modules, make):
    """(call A, call B): ``make(k)`` a call on robot copy k, bound to modules[k] by its first call."""
    calls = []
    for k, module in enumerate(modules):
        native._module = lambda m=module: m  # the module the first call of copy k binds
        call = make(k)
        call()
        calls.append(call)
    return calls


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", help="kernels.c of version A")
    ap.add_argument("b", help="kernels.c of version B")
    ap.add_argument("--sizes", default="6,25,100", help="joint counts of the fixed-base robots")
    ap.add_argument("--floating", nargs="*", default=[], help="free flyers of example-robot-data")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--core", type=int, default=None, help="the core both run on (default: the last usable)")
    ap.add_argument("--single", action="store_true",
                    help="one state per call instead of batches: inverse dynamics, inertia matrix and forward "
                         "dynamics (free flyers: their rnea, crba, aba), µs per call from Python, 2000 calls a round")
    args = ap.parse_args(argv)
    os.sched_setaffinity(0, {max(os.sched_getaffinity(0)) if args.core is None else args.core})
    modules = [load(args.a), load(args.b)]
    loaded = native._module
    cases = []  # (quantity, (call A, call B), states a call, calls a timing)
    try:
        for n in (int(x) for x in args.sizes.split(",") if x):
            copies = [robot_of_size(n).replace(Fv=None, Fc=None, name=f"n{n}_{k}") for k in (0, 1)]
            states = 1 if args.single else min(10_000, (1 << 28) // (8 * n * n))
            q, qd, qdd = np.random.default_rng(0).uniform(-1, 1, (3, states, n))
            if args.single:
                q, qd, qdd = q[0], qd[0], qdd[0]
            kinds = {"inertia matrix": lambda r, s=(q,): rd.inertia_matrix(r, *s),
                     "inverse dyn.": lambda r, s=(q, qd, qdd): rd.inverse_dynamics(r, *s),
                     "forward dyn.": lambda r, s=(q, qd, qdd): rd.forward_dynamics(r, *s)}
            cases += [(f"{what} n = {n}", bound_pair(modules, lambda k, r=copies, f=f: (lambda: f(r[k]))), states,
                       2000 if args.single else 1) for what, f in kinds.items()]
        if args.floating:
            from bench_floating import free_flyer_pair, urdf_paths

            paths = urdf_paths()
            for name in args.floating:
                robot, _, _, (q, v, a, tau), _ = free_flyer_pair(paths[name], 10_000)
                if args.single:
                    q, v, a, tau = q[0], v[0], a[0], tau[0]
                # renamed: copies equal in every field would share one augmented robot, bound to one module
                copies = [robot.replace(name=f"{robot.name}_{k}") for k in (0, 1)]
                kinds = {"crba": lambda r, q=q: rd.floating.floating_inertia_matrix(r, q)}
                if args.single:
                    kinds["rnea"] = lambda r, s=(q, v, a): rd.floating.floating_inverse_dynamics(r, *s)
                    kinds["aba"] = lambda r, s=(q, v, tau): rd.floating.floating_forward_dynamics(r, *s)
                cases += [(f"{name} {what}", bound_pair(modules, lambda k, c=copies, f=f: (lambda: f(c[k]))),
                           1 if args.single else 10_000, 2000 if args.single else 1) for what, f in kinds.items()]
    finally:
        native._module = loaded
    for quantity, calls, _, _ in cases:  # the two versions must agree to the last bit
        if not np.array_equal(calls[0](), calls[1](), equal_nan=True):
            print(f"{quantity}: A and B give different results")
    best = {}
    for rnd in range(args.rounds):
        for quantity, calls, states, number in cases:
            for k in (0, 1) if rnd % 2 == 0 else (1, 0):
                calls[k]()  # untimed: its result block is reused by the timed call, as in a user's loop
                t = time.thread_time()
                for _ in range(number):
                    calls[k]()
                best[quantity, k] = min(best.get((quantity, k), np.inf),
                                        (time.thread_time() - t) / (states * number) * 1e6)
    print(f"{'quantity':<34} {'A µs':>9} {'B µs':>9} {'B/A':>6}")
    for quantity, _, _, _ in cases:
        a, b = best[quantity, 0], best[quantity, 1]
        print(f"{quantity:<34} {a:>9.4f} {b:>9.4f} {b / a:>6.3f}")


if __name__ == "__main__":
    main()
