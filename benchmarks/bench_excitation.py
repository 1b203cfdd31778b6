"""Latency of the excitation design (rd.excitation_trajectory) on 7-joint arms: wall time to a converged design
(target: <= 10 s on an idle 2-core machine), iterations and cond(W), for a few seeds.

    PYTHONPATH=src python benchmarks/bench_excitation.py [--robots panda wam7] [--seeds 0 1 2]

Multithreaded BLAS on a loaded machine slows the small matrix products here by 10x or more; set
OPENBLAS_NUM_THREADS=1 (or OMP_NUM_THREADS=1) to measure the algorithm rather than the contention.
"""

from __future__ import annotations

import argparse
import time

import robodyn as rd


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", nargs="+", default=["panda", "wam7"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--harmonics", type=int, default=5)
    args = parser.parse_args(argv)
    print("| robot | n | seed | seconds | iterations | converged | cond(W) |")
    print("| --- | ---: | ---: | ---: | ---: | --- | ---: |")
    for name in args.robots:
        robot = rd.load(name)
        rd.base_parameters(robot, method="numeric", friction=True)  # warm the caches: time the design itself
        for seed in args.seeds:
            start = time.perf_counter()
            tr = rd.excitation_trajectory(robot, 10.0, harmonics=args.harmonics, seed=seed, unlimited=True)
            seconds = time.perf_counter() - start
            print(f"| {name} | {robot.n} | {seed} | {seconds:.1f} | {tr.iterations} | {tr.converged} | "
                  f"{tr.condition_number:.4g} |")


if __name__ == "__main__":
    main()
