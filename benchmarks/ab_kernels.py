"""Benchmark: two versions of the generic kernels (kernels.c) side by side in one process, for kernel work.

Each source is built as robodyn builds its own (same flags, robodyn.native.build's cached, verified build) under its
own module name (the hash of its text), and each of two copies of every robot is bound to one of the two modules at
its first call (a bound call keeps its module). The calls then alternate A, B / B, A round after round on one core,
timed in the thread's CPU time, best kept: a burst of load from other processes hits both versions, which separate
runs on a shared machine do not guarantee (there, single figures move by 5-10 % between runs; here two copies of one
source agree within about 2 %).

    python benchmarks/ab_kernels.py old.c src/robodyn/native/kernels.c --sizes 6,25,100 \\
        --floating solo12.urdf talos_reduced.urdf

prints, per quantity, robodyn's µs per state with A and B and B/A (< 1: B faster). The two sources must keep the
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
from robodyn.native.build import FLAGS, PARALLEL, build_library, numpy_flags, python_flags

sys.path.insert(0, str(Path(__file__).parent))
from bench_native import robot_of_size  # noqa: E402


def load(path: str):
    """The kernels of the source at ``path``, built and loaded as robodyn builds its own."""
    source = Path(path).read_text(encoding="utf-8").replace('#include "parallel.h"\n', native.parallel_source(), 1)
    name = "robodyn.native._rdgeneric_" + hashlib.sha256(source.encode()).hexdigest()[:20]
    flags = [*FLAGS, *native.THREADS, *(f for f in python_flags() if f != "-DRD_PYTHON"), *numpy_flags(),
             f"-DRD_MODULE={name.rsplit('.', 1)[1]}"]
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
    args = ap.parse_args(argv)
    os.sched_setaffinity(0, {max(os.sched_getaffinity(0)) if args.core is None else args.core})
    modules = [load(args.a), load(args.b)]
    loaded = native._module
    cases = []  # (quantity, (call A, call B), states)
    try:
        for n in (int(x) for x in args.sizes.split(",") if x):
            copies = [robot_of_size(n).replace(Fv=None, Fc=None, name=f"n{n}_{k}") for k in (0, 1)]
            states = min(10_000, (1 << 28) // (8 * n * n))
            q, qd, qdd = np.random.default_rng(0).uniform(-1, 1, (3, states, n))
            cases += [(f"inertia matrix n = {n}", bound_pair(modules, lambda k, r=copies, q=q: (
                          lambda: rd.inertia_matrix(r[k], q))), states),
                      (f"inverse dyn. n = {n}", bound_pair(modules, lambda k, r=copies, s=(q, qd, qdd): (
                          lambda: rd.inverse_dynamics(r[k], *s))), states)]
        if args.floating:
            from bench_floating import free_flyer_pair, urdf_paths

            paths = urdf_paths()
            for name in args.floating:
                robot, q = (lambda pair: (pair[0], pair[3][0]))(free_flyer_pair(paths[name], 10_000))
                # renamed: copies equal in every field would share one augmented robot, bound to one module
                copies = [robot.replace(name=f"{robot.name}_{k}") for k in (0, 1)]
                cases.append((f"{name} crba", bound_pair(modules, lambda k, c=copies, q=q: (
                    lambda: rd.floating.floating_inertia_matrix(c[k], q))), 10_000))
    finally:
        native._module = loaded
    best = {}
    for rnd in range(args.rounds):
        for quantity, calls, states in cases:
            for k in (0, 1) if rnd % 2 == 0 else (1, 0):
                calls[k]()  # untimed: its result block is reused by the timed call, as in a user's loop
                t = time.thread_time()
                calls[k]()
                best[quantity, k] = min(best.get((quantity, k), np.inf), (time.thread_time() - t) / states * 1e6)
    print(f"{'quantity':<34} {'A µs':>9} {'B µs':>9} {'B/A':>6}")
    for quantity, _, _ in cases:
        a, b = best[quantity, 0], best[quantity, 1]
        print(f"{quantity:<34} {a:>9.4f} {b:>9.4f} {b / a:>6.3f}")


if __name__ == "__main__":
    main()
