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
