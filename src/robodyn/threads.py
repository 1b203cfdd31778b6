"""The ``threads=`` argument of robodyn's compiled batched code.

The threads themselves live in C (robodyn.native's kernels and the ``NAME_threads`` entry of ``rd.compile``'s
models): each call starts its helper threads and hands them consecutive chunks of states, so nothing is kept
between calls and no thread waits or spins once a call has returned.
"""

from __future__ import annotations

import os

from robodyn.errors import InputError


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
