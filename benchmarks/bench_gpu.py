"""Benchmark on a GPU: robodyn's customized models as CUDA kernels (rd.compile(..., backend="cuda")) and the JAX
backend (robodyn.jax under jax.jit), checked against NumPy, then states per second for 10^4 … 10^8 states, float64
and float32, on puma560, panda and wam7.

Run on a machine with an NVIDIA GPU, CuPy (robodyn[cuda]) and JAX with CUDA (robodyn[jax] + jax[cuda12]):

    PYTHONPATH=src python benchmarks/bench_gpu.py [--robots puma560,panda,wam7] [--max-exp 8] [--budget 240]

It prints one line per (backend, robot, dtype, states): the best of 5 timed calls with the states resident on the
GPU (structure-of-arrays layout for CUDA), states/s, and for CUDA the fraction of the memory-bandwidth limit
(bytes read and written per state / the card's peak bandwidth). Correctness is checked first on 10^4 random states:
max relative difference to rd.inverse_dynamics (NumPy, float64). Sizes are skipped when the time budget (seconds)
would be exceeded, so the whole script ends in about --budget seconds plus compile times.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import robodyn as rd


def best_of(f, sync, repeat: int = 5) -> float:
    f()
    sync()
    t_best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        sync()
        t_best = min(t_best, time.perf_counter() - t)
    return t_best


def peak_bandwidth(cp) -> float:
    """Peak memory bandwidth of device 0 (bytes/s) from its clock and bus width."""
    attrs = cp.cuda.runtime.getDeviceProperties(0)
    return 2.0 * attrs["memoryClockRate"] * 1e3 * attrs["memoryBusWidth"] / 8


def cuda_rows(robot, dtype, sizes, budget, start):
    import cupy as cp

    f = rd.compile(robot, "inverse_dynamics", backend="cuda", dtype=dtype)
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-1, 1, (3, 10_000, robot.n))
    ref = rd.inverse_dynamics(robot, q, qd, qdd)
    got = cp.asnumpy(f(q, qd, qdd))
    err = np.max(np.abs(got - ref)) / np.max(np.abs(ref))
    print(f"cuda  {robot.name:8s} {dtype:7s} check: max rel diff {err:.1e}  (kernel {len(f.source)} chars)")
    item = np.dtype(dtype).itemsize
    per_state = (4 * robot.n) * item  # q, qd, qdd read, tau written
    g = cp.asarray(robot.gravity, dtype=dtype)
    p = cp.asarray(f.nominal_parameters, dtype=dtype)
    for count in sizes:
        if time.perf_counter() - start > budget:
            print(f"cuda  {robot.name:8s} {dtype:7s} {count:>10d} skipped (time budget)")
            continue
        arrays = [cp.asarray(rng.uniform(-1, 1, (robot.n, count)), dtype=dtype) for _ in range(3)]
        t = best_of(lambda: f.soa(*arrays, g, p), cp.cuda.Device().synchronize)
        rate = count / t
        frac = rate * per_state / peak_bandwidth(cp)
        print(f"cuda  {robot.name:8s} {dtype:7s} {count:>10d} {t * 1e3:10.3f} ms {rate:10.3e} states/s "
              f"{100 * frac:5.1f} % of bandwidth")
        del arrays


def jax_rows(robot, dtype, sizes, budget, start):
    import jax
    import jax.numpy as jnp

    import robodyn.jax as rj

    jax.config.update("jax_enable_x64", dtype == "float64")
    t0 = time.perf_counter()
    f = jax.jit(lambda q, qd, qdd: rj.inverse_dynamics(robot, q, qd, qdd))
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-1, 1, (3, 10_000, robot.n))
    got = np.asarray(f(*(jnp.asarray(x, dtype=dtype) for x in (q, qd, qdd))))
    compile_s = time.perf_counter() - t0
    ref = rd.inverse_dynamics(robot, q, qd, qdd)
    err = np.max(np.abs(got - ref)) / np.max(np.abs(ref))
    print(f"jax   {robot.name:8s} {dtype:7s} check: max rel diff {err:.1e}  (first call with compile {compile_s:.1f} s)")
    for count in sizes:
        if time.perf_counter() - start > budget:
            print(f"jax   {robot.name:8s} {dtype:7s} {count:>10d} skipped (time budget)")
            continue
        arrays = [jnp.asarray(rng.uniform(-1, 1, (count, robot.n)), dtype=dtype) for _ in range(3)]
        t = best_of(lambda: f(*arrays).block_until_ready(), lambda: None)
        print(f"jax   {robot.name:8s} {dtype:7s} {count:>10d} {t * 1e3:10.3f} ms {count / t:10.3e} states/s")
        del arrays


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", default="puma560,panda,wam7")
    ap.add_argument("--max-exp", type=int, default=8)
    ap.add_argument("--budget", type=float, default=240.0)
    ap.add_argument("--backends", default="cuda,jax")
    args = ap.parse_args()
    sizes = [10 ** e for e in range(4, args.max_exp + 1)]
    start = time.perf_counter()
    try:
        import cupy as cp

        print(f"device: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, "
              f"peak bandwidth {peak_bandwidth(cp) / 1e12:.2f} TB/s")
    except Exception as exc:  # the CUDA rows need CuPy; JAX may still run
        print(f"CuPy unavailable ({exc}); CUDA rows skipped")
        args.backends = args.backends.replace("cuda", "")
    for name in args.robots.split(","):
        robot = rd.load(name)
        for dtype in ("float64", "float32"):
            if "cuda" in args.backends:
                cuda_rows(robot, dtype, sizes, args.budget, start)
            if "jax" in args.backends:
                jax_rows(robot, dtype, sizes, args.budget, start)


if __name__ == "__main__":
    main()
