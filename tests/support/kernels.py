"""The one skip condition of the tests that need robodyn's compiled generic kernels (:mod:`robodyn.native`).

They compare the kernels with the NumPy path, or check that robodyn's functions hand a call to them: both need the
kernels built and loaded here (a C compiler and Python's C headers) and switched on (the environment variable
``ROBODYN_NATIVE`` not 0).  Without them robodyn computes on NumPy, which the other tests cover; these skip and say
why.  Evaluated once per test process, as the variable is read when the tests are collected.
"""

from __future__ import annotations

import pytest

from robodyn import native
from robodyn.dynamics import executor


def _why_not() -> str:
    """Why the compiled kernels cannot serve a test in this process, or "" when they can (the switch is read first:
    with ROBODYN_NATIVE=0 nothing is built)."""
    if not executor.enabled():
        return "ROBODYN_NATIVE=0 switches robodyn's compiled kernels off"
    if not native.available():
        return "no C compiler (or no Python C headers): robodyn.native unavailable"
    return ""


WHY_NOT = _why_not()

#: the marker of a test, or the ``pytestmark`` of a file, that needs the compiled kernels
needs_kernels = pytest.mark.skipif(bool(WHY_NOT), reason=WHY_NOT or "robodyn.native is built and switched on")
