"""Comparisons with Pinocchio in robodyn's joint order, and the relative tolerance used by the dynamics tests.

Pinocchio's crba (4.1) assumes that the velocity indices of every subtree are contiguous (depth-first joint
order); a tree numbered breadth-first (any a(j) < j is a valid robodyn numbering) gives a wrong mass matrix
there, while its rnea/aba are unaffected.  ``depth_first(robot)`` returns the same robot renumbered in
depth-first order and the permutation ``perm`` of joint variables: q_new = q[..., perm].
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from tests.support.pin_bridge import PinRobot

_PER_FRAME = ("sigma", "gamma", "b", "alpha", "d", "theta", "r", "params", "Ia", "Fc", "Fv", "Foff", "Fst", "kst", "Bst")


def depth_first(robot):
    order = []

    def visit(i):
        order.append(i)
        for c in robot.children[i]:
            visit(c)

    for i in range(robot.nf):
        if robot.antecedent[i] == 0:
            visit(i)
    new_of_old = {old: new for new, old in enumerate(order)}
    ant = np.array([0 if robot.antecedent[o] == 0 else new_of_old[robot.antecedent[o] - 1] + 1 for o in order])
    fields = {k: np.asarray(getattr(robot, k))[order] for k in _PER_FRAME}
    joint_of_frame = {int(f): k for k, f in enumerate(robot.joint_frames)}
    perm = np.array([joint_of_frame[o] for o in order if robot.sigma[o] != 2], dtype=int)
    new = robot.replace(
        antecedent=ant, joint_names=tuple(robot.joint_names[o] for o in order), qlim=robot.qlim[perm], **fields
    )
    return new, perm


def pin_crba(robot, q):
    """Pinocchio's A(q) (n, n) in robodyn's joint order."""
    dfs, perm = depth_first(robot)
    A = np.zeros((robot.n, robot.n))
    A[np.ix_(perm, perm)] = PinRobot(dfs).crba(q[perm])
    return A


def pin_aba(robot, q, qd, tau, wrenches=None):
    """Pinocchio's q̈ (n,) (no friction there) with robodyn wrenches (nf, 6) exerted BY the links."""
    p = PinRobot(robot)
    if wrenches is None:
        return p.aba(q, qd, tau)
    return pin.aba(p.model, p.data, q, qd, tau, p.fext(wrenches)).copy()


def assert_rel(actual, expected, tol=1e-10):
    """max |actual − expected| ≤ tol · max(1, max |expected|)."""
    scale = max(1.0, float(np.max(np.abs(expected))))
    err = float(np.max(np.abs(np.asarray(actual) - expected)))
    assert err <= tol * scale, f"error {err:.3e} > {tol:.1e} x {scale:.3e}"


def pin_inertia_partials(robot, q):
    """∂A_ij/∂q_k (n, n, n) from Pinocchio's RNEA derivatives: with q̇ = 0, g = 0 and q̈ = u_j, Γ = A[:, j], so
    ∂Γ/∂q = ∂A[:, j]/∂q."""
    dfs, perm = depth_first(robot)
    p = PinRobot(dfs)
    p.model.gravity = pin.Motion.Zero()
    data = p.model.createData()
    n = robot.n
    dA = np.zeros((n, n, n))
    for j in range(n):
        pin.computeRNEADerivatives(p.model, data, q[perm], np.zeros(n), np.eye(n)[j])
        dA[:, j, :] = data.dtau_dq
    out = np.zeros_like(dA)
    out[np.ix_(perm, perm, perm)] = dA
    return out


def pin_coriolis(robot, q, qd):
    """Pinocchio's computeCoriolisMatrix (n, n) in robodyn's joint order (it coincides with the Christoffel form)."""
    dfs, perm = depth_first(robot)
    p = PinRobot(dfs)
    C = np.zeros((robot.n, robot.n))
    C[np.ix_(perm, perm)] = pin.computeCoriolisMatrix(p.model, p.data, q[perm], qd[perm])
    return C
