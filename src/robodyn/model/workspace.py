"""The one workspace of per-robot results: the native kernels' model and single-state entries, memos.

A :class:`~robodyn.model.robot.Robot` is plain frozen data, equal and hashed by content
(``robot.content_key``).  What robodyn computes from a robot alone and keeps for later calls — the native
kernels' model of the robot and its bound single-state entries, the robot without friction, scans that cost more
than a call — lives here, outside the robot, in one explicit process-wide store (the Pinocchio Model / Data
lesson: the model holds no caches).  The few values that depend on the machine alone (the loaded generic kernels,
or why they cannot load) are kept here too, apart from the robots (:meth:`Workspace.shared`):

- keyed by the robot's content, so two equal robots share one entry (and an edited robot, being a new robot,
  gets a new one);
- bounded: at most :data:`CAPACITY` robots, the least recently used dropped first (its values are computed
  again if it comes back);
- thread-safe: entries are added and dropped under a lock, and every value is set once (first writer wins), so
  concurrent first calls may compute a value twice but all of them use the same one;
- write-once: nothing offers to replace a value, and nothing reachable from a robot or a public function hands
  out the store, so no user code can swap a kernel for another.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

#: Most robots whose results are kept at a time.
CAPACITY = 64


class Workspace:
    """Per-robot values keyed by (robot content, key); bounded LRU over robots, thread-safe, write-once."""

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
        wins when threads race)."""
        entry = self._entry(robot)
        value = entry.get(key)
        if value is None:
            value = entry.setdefault(key, make())
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

    def robots(self) -> int:
        """Number of robots with an entry."""
        return len(self._entries)

    def stored(self, robot) -> dict:
        """A copy of what is stored for ``robot`` (key -> value; empty when nothing), without making it the most
        recently used: for tests and inspection."""
        return dict(self._entries.get(robot.content_key, {}))


#: The process's workspace (the only one robodyn uses).
WORKSPACE = Workspace()
