"""Latency of the excitation design (rd.excitation_trajectory) on 7-joint arms: wall and CPU time to a converged
design (target: <= 10 s on an idle 2-core machine), iterations and cond(W), for a few seeds; and what each design
guarantees the identification (docs/identification.md, "Expected accuracy"): ordinary and weighted least squares
trained on the design of one seed predicting the design of the next seed (the last predicts the first), σ_j = 2 %
of RMS(τ_j), the held-out RMS error of the noise-free torque / σ_j averaged over the joints, from the covariance
formula (no noise draws); with --all-pairs, every ordered pair of the seeds as well.

    PYTHONPATH=src:. python benchmarks/bench_excitation.py [--robots panda wam7] [--seeds 0 1 2] [--harmonics H]
        [--criterion prediction|cond] [--all-pairs]

The synthetic check of docs/identification.md (every pair below 0.5 σ):
    PYTHONPATH=src:. python benchmarks/bench_excitation.py --robots panda --seeds 0 1 2 3 4 5 6 7 8 9 --all-pairs

Multithreaded BLAS on a loaded machine slows the small matrix products here by 10x or more; set
OPENBLAS_NUM_THREADS=1 (or OMP_NUM_THREADS=1) to measure the algorithm rather than the contention.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import robodyn as rd
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository (tests.support), from any folder
from tests.test_excitation_accuracy import errors_of, statistics, with_friction  # noqa: E402


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", nargs="+", default=["panda", "wam7"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--harmonics", type=int, default=None, help="default: excitation_trajectory's")
    parser.add_argument("--criterion", default=None, help="default: excitation_trajectory's")
    parser.add_argument("--all-pairs", action="store_true", help="OLS / σ of every ordered pair of the seeds")
    args = parser.parse_args(argv)
    options = {k: v for k, v in (("harmonics", args.harmonics), ("criterion", args.criterion)) if v is not None}
    print("| robot | n | seed | seconds | CPU seconds | iterations | converged | cond(W) | OLS / σ (next seed) | "
          "WLS / σ |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
    for name in args.robots:
        robot = with_friction(rd.load(name))
        rd.base_parameters(robot, method="numeric", friction=True)  # warm the caches: time the design itself
        rows, runs = [], []
        for seed in args.seeds:
            start, cpu = time.perf_counter(), time.process_time()
            tr = rd.excitation_trajectory(robot, 10.0, seed=seed, unlimited=True, **options)
            rows.append((seed, time.perf_counter() - start, time.process_time() - cpu, tr))
            runs.append(statistics(robot, tr.sample(tr.times(200.0))))
        for k, (seed, seconds, cpu, tr) in enumerate(rows):
            e = errors_of(runs[k], runs[(k + 1) % len(runs)])
            print(f"| {name} | {robot.n} | {seed} | {seconds:.1f} | {cpu:.1f} | {tr.iterations} | {tr.converged} | "
                  f"{tr.condition_number:.4g} | {e['ols'].mean():.3f} | {e['wls'].mean():.3f} |")
        if args.all_pairs:
            ols = [errors_of(runs[i], runs[j])["ols"].mean() for i in range(len(runs)) for j in range(len(runs))
                   if i != j]
            print(f"{name}: OLS / σ over the {len(ols)} ordered pairs: mean {np.mean(ols):.3f}, "
                  f"{np.min(ols):.3f} to {np.max(ols):.3f}")


if __name__ == "__main__":
    main()
