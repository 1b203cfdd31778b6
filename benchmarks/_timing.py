"""Timing helper shared by the benchmark scripts (imported from the scripts' own folder)."""

from __future__ import annotations

import time


def best_time(fn, repeat: int) -> float:
    """Smallest wall time of ``repeat`` runs of ``fn()`` (s): the run least disturbed by other processes."""
    return best_time_and_result(fn, repeat)[0]


def best_time_and_result(fn, repeat: int):
    """(smallest wall time of ``repeat`` runs of ``fn()`` in s, the last run's result)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def median_cpu_time(fn, repeat: int, number: int = 1) -> float:
    """Median CPU time (user + system of this process, every thread) of one call of ``fn()`` (s), over ``repeat``
    loops of ``number`` calls: on a machine shared with other jobs, the time taken from this process by the others
    counts in wall times (the best of which then still varies by 30 %), not in its CPU time."""
    times = []
    for _ in range(repeat):
        t = time.process_time()
        for _ in range(number):
            fn()
        times.append((time.process_time() - t) / number)
    times.sort()
    return times[len(times) // 2]


def machine_peak() -> tuple[float, str]:
    """(float64 peak of the cores this process may use in FLOP/s, how it was obtained).

    cores × clock × FLOP per cycle per core, read from /proc/cpuinfo (the first ``cpu MHz``, the ``flags``): 16 with
    AVX-512 (8 lanes, one fused multiply-add = 2 FLOP), 8 with AVX2 + FMA (4 lanes), 4 with AVX, 2 otherwise. An
    assumption of one vector FMA per cycle: a core with two FMA pipes peaks at twice that, and the clock under
    load differs from the one listed."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    mhz, flags = 0.0, set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "cpu MHz" and not mhz:
                    mhz = float(value)
                elif key == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    mhz = mhz or 2000.0
    per, isa = ((16, "AVX-512") if "avx512f" in flags else (8, "AVX2+FMA") if {"avx2", "fma"} <= flags
                else (4, "AVX") if "avx" in flags else (2, "SSE2"))
    return cores * mhz * 1e6 * per, f"{cores} core(s) × {mhz / 1000:.2f} GHz × {per} FLOP/cycle ({isa}, float64)"


def flops(tally) -> int:
    """Floating-point operations of a traced operation count (robodyn.analysis: mul, which includes the divisions,
    + add; sin/cos and the other library functions are left out)."""
    return int(tally.mul + tally.add)
