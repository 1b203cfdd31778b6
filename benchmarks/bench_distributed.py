"""Out-of-core identification on Dask (robodyn.distributed): samples/s against the number of samples, the workers'
memory, strong scaling over workers, and the same identification by plain NumPy (rd.identify) where it fits.

Run:  PYTHONPATH=src:. python benchmarks/bench_distributed.py [--samples 100000 1000000 10000000]
          [--workers 1 2] [--scaling-samples 1000000] [--numpy-max 1000000] [--chunk 131072] [--robot wam7]
Smoke run:  PYTHONPATH=src:. python benchmarks/bench_distributed.py --samples 2000 5000 --scaling-samples 5000
          --numpy-max 5000 --chunk 1000

A distributed.LocalCluster of worker processes (one thread each) identifies the base parameters (OLS, Gram
reduction) from random states whose torques are the model's: the states are drawn on the workers
(dask.array.random) and the torques computed there (robodyn.inverse_dynamics on Dask arrays), so no sample crosses
the network and only the (b + 1)² Gram matrices of each chunk reach the client. "worker memory" is the largest
resident memory of the cluster's worker processes together, sampled during the run (distributed.diagnostics.MemorySampler): it
stays flat when the sample count grows. Before timing, each run checks that the estimate recovers the model's
base parameters (relative error printed).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import robodyn as rd  # noqa: E402
from robodyn import distributed as dd  # noqa: E402


def _samples(robot, N: int, chunk: int, seed: int = 0):
    import dask.array as da

    g = da.random.default_rng(seed)
    q, qd, qdd = (g.uniform(-2, 2, (N, robot.n), chunks=(chunk, robot.n)) for _ in range(3))
    return q, qd, qdd, rd.inverse_dynamics(robot, q, qd, qdd)


def _run(client, robot, base, N: int, chunk: int):
    """(seconds, peak cluster memory in bytes, relative error of the estimate)."""
    from distributed.diagnostics import MemorySampler

    sampler = MemorySampler()
    with sampler.sample("identify", interval=0.1):
        t = time.perf_counter()
        res = dd.identify(robot, *_samples(robot, N, chunk), method="ols", base=base)
        seconds = time.perf_counter() - t
    memory = float(max((v for _, v in sampler.samples["identify"]), default=float("nan")))
    err = float(np.max(np.abs(res.values - base.values)) / np.max(np.abs(base.values)))
    return seconds, memory, err


def _cluster(workers: int):
    import distributed

    src = str(Path(rd.__file__).resolve().parents[1])
    env = {"PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None, env=env)
    return cluster, distributed.Client(cluster)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, nargs="+", default=[100_000, 1_000_000, 10_000_000])
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="strong scaling: worker processes")
    ap.add_argument("--scaling-samples", type=int, default=1_000_000)
    ap.add_argument("--numpy-max", type=int, default=1_000_000, help="largest N for the plain NumPy rd.identify")
    ap.add_argument("--chunk", type=int, default=dd.CHUNK, help="samples per Dask chunk")
    ap.add_argument("--robot", default="wam7")
    args = ap.parse_args()
    robot = rd.load(args.robot)
    robot = robot.replace(Fc=np.full(robot.nf, 0.5), Fv=np.full(robot.nf, 0.2))
    base = rd.base_parameters(robot, friction=True)
    n, b = robot.n, base.count
    print(f"{robot.name}, n = {n}, {b} base parameters (with friction); chunks of {args.chunk} samples; "
          f"regressor of N samples: N × {n * b * 8} bytes\n")

    cluster, client = _cluster(max(args.workers))
    try:
        _run(client, robot, base, min(args.samples), args.chunk)  # warm-up: workers import robodyn, load kernels
        print(f"| samples | regressor size | time (s) | samples/s | memory of the {max(args.workers)} workers (peak) | "
              "relative error |")
        print("|---:|---:|---:|---:|---:|---:|")
        for N in args.samples:
            s, mem, err = _run(client, robot, base, N, args.chunk)
            print(f"| {N:.0e} | {N * n * b * 8 / 2**30:.2f} GiB | {s:.2f} | {N / s:.3g} | {mem / 2**20:.0f} MiB | "
                  f"{err:.1e} |")
    finally:
        client.close()
        cluster.close()

    print(f"\nstrong scaling, {args.scaling_samples:.0e} samples\n")
    print("| workers | time (s) | samples/s | speed-up |")
    print("|---:|---:|---:|---:|")
    first = None
    for w in args.workers:
        cluster, client = _cluster(w)
        try:
            _run(client, robot, base, min(args.samples), args.chunk)
            s, _, _ = _run(client, robot, base, args.scaling_samples, args.chunk)
        finally:
            client.close()
            cluster.close()
        first = first or s
        print(f"| {w} | {s:.2f} | {args.scaling_samples / s:.3g} | {first / s:.2f} |")

    print("\nplain NumPy (rd.identify, samples in memory, one process)\n")
    print("| samples | time (s) | samples/s | arrays in memory |")
    print("|---:|---:|---:|---:|")
    for N in [x for x in args.samples if x <= args.numpy_max]:
        rng = np.random.default_rng(0)
        q, qd, qdd = rng.uniform(-2, 2, (3, N, n))
        tau = rd.inverse_dynamics(robot, q, qd, qdd)
        t = time.perf_counter()
        rd.identify(robot, q, qd, qdd, tau, method="ols", base=base)
        s = time.perf_counter() - t
        print(f"| {N:.0e} | {s:.2f} | {N / s:.3g} | {4 * N * n * 8 / 2**20:.0f} MiB |")


if __name__ == "__main__":
    main()
