"""The progress display: drawn only on a terminal, never on a pipe; the handle records what it is told."""

import io

from robodyn.progress import progress, progress_enabled


def test_no_display_on_a_pipe(monkeypatch, capsys):
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert progress_enabled() is False
    with progress("working", total=4, delay=0.0) as bar:
        bar.advance()
        bar.update(completed=3, description="step 3")
    assert (bar.completed, bar.total, bar.description) == (3.0, 4, "step 3")
    assert bar._display is None


def test_environment_switch(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr("sys.stderr", Tty())
    assert progress_enabled() is True
    monkeypatch.setenv("ROBODYN_PROGRESS", "0")
    assert progress_enabled() is False
