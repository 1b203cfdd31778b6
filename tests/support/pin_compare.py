"""Comparisons with Pinocchio in robodyn's joint order, and the relative tolerance used by the dynamics tests.

``PinRobot`` (tests/support/pin_bridge.py) adds joints to Pinocchio depth-first, as its crba requires on trees,
and permutes joint variables in and out.
"""

from __future__ import annotations

import numpy as np

from tests.support.pin_bridge import PinRobot


def pin_crba(robot, q):
    """Pinocchio's A(q) (n, n) in robodyn's joint order."""
    return PinRobot(robot).crba(q)


def pin_aba(robot, q, qd, tau, wrenches=None):
    """Pinocchio's q̈ (n,) (no friction there) with robodyn wrenches (nf, 6) exerted BY the links."""
    return PinRobot(robot).aba(q, qd, tau, wrenches)


def assert_rel(actual, expected, tol=1e-10):
    """max |actual − expected| ≤ tol · max(1, max |expected|)."""
    scale = max(1.0, float(np.max(np.abs(expected))))
    err = float(np.max(np.abs(np.asarray(actual) - expected)))
    assert err <= tol * scale, f"error {err:.3e} > {tol:.1e} x {scale:.3e}"
