"""The one workspace of per-robot results: the native kernels' model and single-state entries, memos.

What robodyn computes from a robot alone and keeps for later calls lives here, outside the robot (which holds no
caches, as Pinocchio's Model holds none), keyed by ``robot.content_key``: two equal robots share one entry, an
edited robot gets a new one.  Values that depend on the machine alone are kept apart (:meth:`Workspace.shared`).
Nothing reachable from a robot or a public function hands out the store, so no user code can swap a kernel.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

#: Most robots whose results are kept at a time.
CAPACITY = 64


class Workspace:
    """Per-robot values keyed by (robot content, key).

    Bounded (at most ``capacity`` robots, the least recently used dropped first and computed again if it comes
    back), thread-safe (entries added and dropped under a lock) and write-once (the first value stored wins, so
    concurrent first calls may compute a value twice but all use the same one; nothing replaces a value).
    """

    def __init__(self, capacity: int = CAPACITY) -> None:
        if capacity < 1:
            raise ValueError("a workspace keeps at least one robot")
        self._capacity = capacity
        self._lock = threading.Lock()
        self._entries: OrderedDict[bytes, dict] = OrderedDict()
        self._shared: dict = {}
        self._last: tuple = (None, None)  # (content key, entry) of the latest robot: the hot path skips the LRU

    def _entry(self, robot) -> dict:
        key = robot.content_key
        last = self._last
        if last[0] is key:
            return last[1]
        entries = self._entries
        entry = entries.get(key)
        if entry is None:
            with self._lock:
                entry = entries.get(key)
                if entry is None:
                    entry = entries[key] = {}
                    while len(entries) > self._capacity:
                        entries.popitem(last=False)
        try:
            entries.move_to_end(key)
        except KeyError:  # dropped by another thread meanwhile: this call still uses it
            pass
        self._last = (key, entry)
        return entry

    def get(self, robot, key: Hashable):
        """The value of ``key`` for ``robot``, or None when none is stored."""
        last = self._last
        if last[0] is robot.content_key:  # the hot path of single states: no lookup, no lock
            return last[1].get(key)
        return self._entry(robot).get(key)

    def value(self, robot, key: Hashable, make: Callable[[], object]):
        """The value of ``key`` for ``robot``, computed by ``make()`` on first use and kept (the first one stored
        wins when threads race); a None from ``make()`` is not kept: there is nothing yet, the next use asks again
        (robodyn.native's entries while ROBODYN_NATIVE=0)."""
        entry = self._entry(robot)
        value = entry.get(key)
        if value is None:
            value = make()
            if value is not None:
                value = entry.setdefault(key, value)
        return value

    def shared(self, key: Hashable, make: Callable[[], object]):
        """The value of ``key`` that depends on no robot (the loaded generic kernels, or why they cannot load),
        computed by ``make()`` on first use and kept for the process (the first one stored wins), never dropped."""
        value = self._shared.get(key)
        if value is None:
            with self._lock:
                value = self._shared.get(key)
                if value is None:
                    value = self._shared[key] = make()
        return value

    def made(self, key: Hashable):
        """The value of ``key`` kept by :meth:`shared`, or None when it was not made yet (nothing is made here)."""
        return self._shared.get(key)

    def robots(self) -> int:
        """Number of robots with an entry."""
        return len(self._entries)

    def stored(self, robot) -> dict:
        """A copy of what is stored for ``robot`` (key -> value; empty when nothing), without making it the most
        recently used: for tests and inspection."""
        return dict(self._entries.get(robot.content_key, {}))


#: The process's workspace (the only one robodyn uses).
WORKSPACE = Workspace()
