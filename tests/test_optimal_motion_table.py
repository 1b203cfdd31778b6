"""The convergence table of docs/task-space-and-motion.md §5 (scripts/optimal_motion_table.py), N = 10 and 20:
what the method guarantees, not an optimizer's digits — the limits hold on the continuous motion (a dense sampling
of the spline the result hands back), the motion passes through its nodes, the energy is the integral of the
motion's τᵀτ, the solutions are first-order optimal, and refining the spline (N = 10 → 20: the knots of N = 10 are
knots of N = 20, so every N = 10 motion is an N = 20 motion) does not make them worse."""

import importlib.util
import os

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT_TOL = 1e-6    # optimal_motion's default limit_tol


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("optimal_motion_table",
                                                  os.path.join(ROOT, "scripts", "optimal_motion_table.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def rows(script):
    return {n: script.row(n) for n in (10, 20)}


@pytest.mark.parametrize("nodes", [10, 20])
def test_limits_hold_between_the_nodes(script, rows, nodes):
    import robodyn as rd

    arm = rd.load("planar2r")
    _, fast, eco = rows[nodes]
    for motion in (fast, eco):
        peak, energy = script.dense(arm, motion)
        assert peak <= 1 + LIMIT_TOL and motion.peak_ratio <= 1 + LIMIT_TOL
        # the located maxima are the motion's: the dense samples never exceed them
        assert peak <= motion.peak_ratio + 1e-12
        q, qd, qdd = motion.sample(motion.t)
        np.testing.assert_allclose(q, motion.q, rtol=0, atol=1e-12)
        np.testing.assert_allclose(qd, motion.qd, rtol=0, atol=1e-9)
        np.testing.assert_allclose(qdd, motion.qdd, rtol=0, atol=1e-8)
        # 3-point Gauss per interval against 2000 trapezoids per interval: τ is smooth between the nodes
        assert motion.energy == pytest.approx(energy, rel=1e-3)
    assert fast.kkt_residual < 1e-6 and eco.kkt_residual < 1e-4
    # minimum time saturates a limit somewhere on the motion; the minimum-energy motion at T = 0.8 s too
    assert fast.peak_ratio > 1 - LIMIT_TOL


def test_refining_the_spline_does_not_make_the_optimum_worse(rows):
    (_, fast10, eco10), (_, fast20, eco20) = rows[10], rows[20]
    assert fast20.duration <= fast10.duration * (1 + 1e-4)
    assert eco20.energy <= eco10.energy * (1 + 1e-3)
