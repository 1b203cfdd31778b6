"""Inertia matrix by composite links (the composite-rigid-body algorithm), Khalil & Dombre §9.7.1 / Appendix 8.

The composite link j⁺ is link j rigidly welded to all links of its subtree (its descendants, fixed frames
included).  Its standard parameters in R_j, about O_j, are accumulated backwards, for every child k of j,

    M⁺_j  = M_j  + Σ_k M⁺_k
    MS⁺_j = MS_j + Σ_k (A MS⁺_k + M⁺_k P)
    J⁺_j  = J_j  + Σ_k (A J⁺_k Aᵀ − P̂ ŝ − ŝ P̂ − M⁺_k P̂ P̂),   s = A MS⁺_k

with A = ^jA_k, P = ^jP_k (parallel-axis theorem, [9.12], in moment form).  A unit acceleration q̈_j = 1
with q̇ = 0 and g = 0 moves only the composite link j⁺, about (σ̄_j) or along (σ_j) z_j; the wrench it needs,

    revolute:   f = z × MS⁺_j,   m = J⁺_j z
    prismatic:  f = M⁺_j z,      m = MS⁺_j × z,

is transmitted towards the base by [9.92]–[9.93]; its projection on the axis of every joint i on the way
is A_ij ([9.94]).  The rotor inertia Ia_j is added to A_jj ([9.29]).  The cost is O(n·depth) ≤ O(n²).
"""

from __future__ import annotations

import numpy as np

from robodyn._arrays import joint_arrays
from robodyn.kinematics import ancestors, local_transforms
from robodyn.model.robot import Robot
from robodyn.spatial import cross, mv


def composite_links(robot: Robot, q: np.ndarray, dtype) -> tuple[list, list, list, list]:
    """Composite-link parameters of every frame, in its own frame R_j about O_j (q already checked).

    Returns
    -------
    AP : list over frames of (^{a}A_j (..., 3, 3), ^{a}P_j (..., 3))
    J, MS, M : lists over frames of (..., 3, 3), (..., 3), (...,) composite inertia tensor, first moment, mass
        (without batch axes for a frame that has no descendant).
    """
    AP = local_transforms(robot, q, dtype)
    J = list(robot.J.astype(dtype))
    MS = list(robot.MS.astype(dtype))
    M = [np.array(m, dtype=dtype) for m in robot.M]  # 0-d arrays: [..., None] works for any dtype
    eye = np.eye(3, dtype=dtype)
    for k in range(robot.nf - 1, -1, -1):
        j = robot.antecedent[k] - 1
        if j < 0:
            continue
        A, P = AP[k]
        s = mv(A, MS[k])
        Ps = np.sum(P * s, -1)[..., None, None]
        PP = np.sum(P * P, -1)[..., None, None]
        sPt = s[..., :, None] * P[..., None, :]
        PPt = P[..., :, None] * P[..., None, :]
        Mk = M[k][..., None, None]
        M[j] = M[j] + M[k]
        MS[j] = MS[j] + s + M[k][..., None] * P
        # P̂ŝ + ŝP̂ = s Pᵀ + P sᵀ − 2 (P·s) 1  and  P̂P̂ = P Pᵀ − |P|² 1
        parallel_axis = sPt + np.swapaxes(sPt, -1, -2) - 2 * Ps * eye + Mk * (PPt - PP * eye)
        J[j] = J[j] + A @ J[k] @ np.swapaxes(A, -1, -2) - parallel_axis
    return AP, J, MS, M


def inertia_matrix(robot: Robot, q) -> np.ndarray:
    """Inertia matrix A(q) by composite links, rotor inertias Ia on the diagonal.

    Parameters
    ----------
    robot : Robot
    q : array_like (..., n)
        Joint positions (rad | m); leading axes are batch axes.

    Returns
    -------
    ndarray (..., n, n)
        Symmetric positive definite A (kg m², kg m or kg by joint types), in the order of q.
        float32 input gives float32.
    """
    dtype, batch, a = joint_arrays(robot, q=q)
    AP, J, MS, M = composite_links(robot, a["q"], dtype)
    n = robot.n
    col = {int(f): k for k, f in enumerate(robot.joint_frames)}
    Amat = np.zeros(batch + (n, n), dtype)
    z = np.array([0.0, 0.0, 1.0], dtype)
    for j, f_j in enumerate(robot.joint_frames):
        if robot.sigma[f_j] == 0:
            f, m = cross(z, MS[f_j]), J[f_j][..., :, 2]
        else:
            f, m = M[f_j][..., None] * z, cross(MS[f_j], z)
        chain = ancestors(robot, int(f_j))
        for pos, i in enumerate(chain):
            if i in col:
                value = f[..., 2] if robot.sigma[i] == 1 else m[..., 2]
                Amat[..., col[i], j] = value
                Amat[..., j, col[i]] = value
            if pos + 1 < len(chain):
                A, P = AP[i]
                f = mv(A, f)  # [9.92]
                m = mv(A, m) + cross(P, f)  # [9.93]
    Ia = robot.Ia[robot.joint_frames].astype(dtype)
    return Amat + Ia * np.eye(n, dtype=dtype)

