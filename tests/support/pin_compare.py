"""Pinocchio cross-checks of the dynamic model in robodyn's joint order, and the relative tolerance of the tests.

``PinRobot`` (tests/support/pin_bridge.py) adds the joints to Pinocchio depth-first (its CRBA assumes that
numbering on trees) and permutes in and out; the helpers below use its permutation ``perm`` the same way.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tests.support.pin_bridge import PinRobot


def pin_crba(robot, q):
    """Pinocchio's A(q) (n, n)."""
    return PinRobot(robot).crba(q)


def pin_aba(robot, q, qd, tau, wrenches=None):
    """Pinocchio's q̈ (n,) (no friction there) with robodyn wrenches (nf, 6) exerted BY the links."""
    return PinRobot(robot).aba(q, qd, tau, wrenches)


def pin_inertia_partials(robot, q):
    """∂A_ij/∂q_k (n, n, n) from Pinocchio's RNEA derivatives: with q̇ = 0, g = 0 and q̈ = u_j, Γ = A[:, j], so
    ∂Γ/∂q = ∂A[:, j]/∂q."""
    p = PinRobot(robot)
    p.model.gravity = pin.Motion.Zero()
    data = p.model.createData()
    n, perm = robot.n, p.perm
    dA = np.zeros((n, n, n))
    for j in range(n):
        pin.computeRNEADerivatives(p.model, data, p._in(q), np.zeros(n), p._in(np.eye(n)[j]))
        dA[:, j, :] = np.asarray(data.dtau_dq)[np.ix_(perm, perm)]
    return dA


def pin_coriolis(robot, q, qd):
    """Pinocchio's computeCoriolisMatrix (n, n) (it coincides with the Christoffel form)."""
    p = PinRobot(robot)
    C = pin.computeCoriolisMatrix(p.model, p.data, p._in(q), p._in(qd))
    return np.asarray(C)[np.ix_(p.perm, p.perm)]


def assert_rel(actual, expected, tol=1e-10):
    """max |actual − expected| ≤ tol · max(1, max |expected|)."""
    scale = max(1.0, float(np.max(np.abs(expected))))
    err = float(np.max(np.abs(np.asarray(actual) - expected)))
    assert err <= tol * scale, f"error {err:.3e} > {tol:.1e} x {scale:.3e}"

