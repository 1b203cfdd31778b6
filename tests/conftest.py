import os

# One BLAS thread per pytest-xdist worker: the workers already take one CPU each, and BLAS threads on top of them
# oversubscribe the cores (the suite took 9.2 instead of 7.4 minutes on two).  The workers are started after this
# file is read, with this environment, before they load NumPy's BLAS.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# Derandomised by default: a run's examples follow from its commit, so the suite passes or fails the same way on
# every machine and every run.  ROBODYN_HYPOTHESIS=explore draws fresh random examples, more of them, to search.
settings.register_profile("fixed", max_examples=15, deadline=None, derandomize=True)
settings.register_profile("explore", max_examples=100, deadline=None)
settings.load_profile("explore" if os.environ.get("ROBODYN_HYPOTHESIS", "") == "explore" else "fixed")


#: the test session's cache of compiled code (ROBODYN_CACHE), set by pytest_configure
SESSION_CACHE = ""


@pytest.hookimpl(trylast=True)  # after pytest's own pytest_configure, which makes config._tmp_path_factory
def pytest_configure(config):
    """ROBODYN_CACHE names a folder of the session's temporary folder before anything compiles: robodyn's generic
    kernels, built while the tests are collected (tests/support/kernels.py), and the processes the tests start
    never write into the user's cache (~/.cache/robodyn).  Set in the main process, before pytest-xdist starts its
    workers: they inherit it and share the one folder (builds of one library hold a lock).  ROBODYN_TEST_CACHE,
    when set, names that folder instead: .ci/run gives its two runs of the suite one folder, so that the second
    loads (after verifying them) the builds of the first instead of compiling them again."""
    global SESSION_CACHE
    inherited = os.environ.get("ROBODYN_CACHE", "") if hasattr(config, "workerinput") else ""
    SESSION_CACHE = (inherited or os.environ.get("ROBODYN_TEST_CACHE", "")
                     or str(config._tmp_path_factory.getbasetemp() / "robodyn-cache"))
    os.environ["ROBODYN_CACHE"] = SESSION_CACHE


@pytest.hookimpl(trylast=True)  # after -m has deselected what it names
def pytest_collection_modifyitems(config, items):
    """ROBODYN_TEST_FLOOR=1 (.ci/run's run with the lowest versions pyproject.toml allows): one case of each test
    function, the first collected. Every test then runs against the floors, and its other cases, the same
    third-party calls on other data, run with the newest versions. The choice is the same in every pytest-xdist
    worker (each collects alone)."""
    if os.environ.get("ROBODYN_TEST_FLOOR", "") != "1":
        return
    keep, drop = first_cases(items)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def first_cases(items):
    """(the first collected case of each test function, the others): cases share the node id before ``[``."""
    seen, keep, drop = set(), [], []
    for item in items:
        key = item.nodeid.split("[", 1)[0]
        (drop if key in seen else keep).append(item)
        seen.add(key)
    return keep, drop


@pytest.fixture(autouse=True)
def _compiled_models_in_a_temporary_cache(monkeypatch):
    """Models compiled by a test (rd.compile, docs examples) go to the session's cache (:data:`SESSION_CACHE`),
    whatever an earlier test set; tests that need their own cache set ROBODYN_CACHE again."""
    monkeypatch.setenv("ROBODYN_CACHE", SESSION_CACHE)


@pytest.fixture
def numpy_references(monkeypatch):
    """ROBODYN_NATIVE=0 for a test of compiled customized models (rd.compile) and for the processes it starts: its
    references are robodyn's NumPy recursions, and robodyn's generic kernels, a compile several times longer than
    a small model's, are not built into the test's empty cache."""
    monkeypatch.setenv("ROBODYN_NATIVE", "0")


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
