"""Batches of states split over threads, for compiled code that runs without the GIL (cffi releases it).

One process-wide pool of worker threads, created on first use; each call hands it chunks of states and waits for
all of them. The chunks are contiguous slices, so results do not depend on the number of threads.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from robodyn.errors import InputError

#: States per task: large enough that dispatching costs nothing, small enough to balance the threads.
CHUNK = 256

_LOCK = threading.Lock()
_POOL: list[ThreadPoolExecutor] = []


def usable_cores() -> int:
    """Cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return os.cpu_count() or 1


def thread_count(threads: int | None) -> int:
    """Validate a user's ``threads=`` argument; None means every usable core."""
    if threads is None:
        return usable_cores()
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InputError(f"threads = {threads!r}; give a positive integer, or None for every core")
    return threads


def run_chunks(count: int, work: Callable[[int, int], None], threads: int | None = None, chunk: int = CHUNK) -> None:
    """Call ``work(lo, hi)`` on consecutive slices [lo, hi) covering range(count), on up to ``threads`` threads."""
    bounds = [(lo, min(lo + chunk, count)) for lo in range(0, count, chunk)]
    workers = min(thread_count(threads), len(bounds))
    if workers <= 1:
        for lo, hi in bounds:
            work(lo, hi)
        return
    with _LOCK:
        if not _POOL or _POOL[0]._max_workers < workers:
            _POOL[:] = [ThreadPoolExecutor(max(workers, usable_cores()), thread_name_prefix="robodyn")]
        pool = _POOL[0]
    for future in [pool.submit(work, lo, hi) for lo, hi in bounds]:
        future.result()
