import os

import pytest
from hypothesis import settings

settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=15, deadline=None)
# CI services set CI=true: derandomised examples there, so a run is reproducible from its commit
settings.load_profile("ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "dev")


@pytest.fixture(autouse=True)
def _compiled_models_in_a_temporary_cache(tmp_path_factory, monkeypatch):
    """Models compiled by a test (rd.compile, docs examples) go to the test session's temporary folder, never to
    the user's ~/.cache/robodyn; tests that need their own cache set ROBODYN_CACHE again."""
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path_factory.getbasetemp() / "robodyn-cache"))


@pytest.fixture
def wide_console(monkeypatch):
    """Rich wraps tables at the terminal width; a wide console keeps each table row of the CLI's output on one line."""
    from robodyn.cli._common import console

    monkeypatch.setattr(console, "_width", 250)


@pytest.fixture
def time_limit():
    """The fuzz tests run each case under ``signal.alarm`` (set by the test): a hang raises
    :class:`tests.support.checks.CaseTimeout` and fails the test instead of blocking the suite."""
    import signal

    from tests.support.checks import raise_case_timeout

    if not hasattr(signal, "SIGALRM"):
        pytest.skip("signal.alarm needs a POSIX system")
    old = signal.signal(signal.SIGALRM, raise_case_timeout)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)
