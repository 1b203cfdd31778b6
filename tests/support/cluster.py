"""A dask.distributed LocalCluster of 2 worker processes for the distributed tests."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import robodyn as rd


@contextlib.contextmanager
def local_client(memory_limit="auto"):
    """A Client of a 2-process LocalCluster whose workers import this robodyn (whatever is installed) and compile
    into the test session's cache (ROBODYN_CACHE, set by tests/conftest.py: the generic kernels are built there
    once); closed on exit.

    The workers never pause: a worker pauses at 80 % of ``memory_limit`` and resumes only when its memory falls,
    which memory the process keeps after a large job (not data Dask could spill) never does, so a later test's tasks
    would wait on it forever.  Above 95 % the nanny still restarts the worker, which the tests that check the
    workers' process ids see."""
    import dask
    import distributed

    src = str(Path(rd.__file__).resolve().parents[1])
    env = {"PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]),
           "ROBODYN_CACHE": os.environ["ROBODYN_CACHE"]}
    with dask.config.set({"distributed.worker.memory.pause": False}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=memory_limit,
                                     dashboard_address=None, env=env) as cluster, distributed.Client(cluster) as c:
        yield c
