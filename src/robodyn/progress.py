"""Progress of long operations (compiling, identification, optimisation, studies).

One mechanism for the library and the command line: a transient bar on standard error, drawn only when standard
error is a terminal and the operation has run for more than ``delay`` seconds, so standard output stays clean.
``with progress("compiling", total=None) as bar: ... bar.update(completed=3, total=10); bar.advance()``.
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager


def progress_enabled() -> bool:
    """True when a progress display may be drawn: standard error is a terminal and ROBODYN_PROGRESS is not 0."""
    if os.environ.get("ROBODYN_PROGRESS", "").strip() == "0":
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class _Bar:
    """Handle given to the body of ``progress``: records the state and forwards it to the display if one is up."""

    def __init__(self, description: str, total: float | None):
        self.description, self.total, self.completed = description, total, 0.0
        self._display = None
        self._task = None
        self._lock = threading.Lock()

    def update(self, completed: float | None = None, total: float | None = None,
               description: str | None = None) -> None:
        with self._lock:
            if completed is not None:
                self.completed = float(completed)
            if total is not None:
                self.total = float(total)
            if description is not None:
                self.description = str(description)
            if self._display is not None:
                self._display.update(self._task, completed=self.completed, total=self.total,
                                     description=self.description)

    def advance(self, step: float = 1.0) -> None:
        self.update(completed=self.completed + step)

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        with self._lock:
            display = Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False), BarColumn(),
                               TextColumn("{task.completed:.0f}/{task.total:.0f}" if self.total else ""),
                               TimeElapsedColumn(), console=Console(stderr=True), transient=True)
            self._task = display.add_task(self.description, total=self.total, completed=self.completed)
            display.start()
            self._display = display

    def _stop(self) -> None:
        with self._lock:
            if self._display is not None:
                self._display.stop()
                self._display = None


@contextmanager
def progress(description: str, total: float | None = None, delay: float = 1.0, enabled: bool | None = None):
    """Context manager yielding a bar handle with ``update(completed, total, description)`` and ``advance(step)``.

    Parameters
    ----------
    description : str — what is running (plain text; square brackets are shown as they are).
    total : float or None — number of steps, or None for an operation of unknown length (spinner).
    delay : float — seconds before the display appears; shorter operations draw nothing.
    enabled : bool or None — force the display on or off; None: on only when standard error is a terminal.
    """
    bar = _Bar(description, total)
    show = progress_enabled() if enabled is None else enabled
    timer = threading.Timer(delay, bar._start) if show else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        yield bar
    finally:
        if timer is not None:
            timer.cancel()
            bar._stop()
