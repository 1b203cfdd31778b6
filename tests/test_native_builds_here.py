"""Wherever robodyn finds a C compiler, its generic kernels build and load.

Every other test of the kernels skips when they are unavailable (tests/support/kernels.py: a machine without a
compiler computes on NumPy), so a kernel source that stopped compiling would otherwise pass as skipped tests.
"""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from robodyn import native
from robodyn.dynamics import executor
from tests.support.kernels import SWITCHED_OFF, has_compiler


@pytest.mark.skipif(not has_compiler(), reason="no C compiler ($CC, cc, gcc or clang on PATH)")
@pytest.mark.skipif(not executor.enabled(), reason=SWITCHED_OFF)
def test_the_kernels_build_wherever_a_c_compiler_is():
    if not native.available():
        robot = rd.load("puma560")
        with pytest.raises(Exception) as why:  # the kernels' own error, with the compiler's message
            native.inertia_matrix(robot, np.zeros((4, robot.n)))
        pytest.fail(f"robodyn's generic kernels did not build with the C compiler found here: {why.value}")
    robot = rd.load("puma560")
    assert native.inertia_matrix(robot, np.zeros((4, robot.n))).shape == (4, robot.n, robot.n)
