"""Inertia matrix by composite links (the composite-rigid-body algorithm), Khalil & Dombre §9.7.1 / Appendix 8.

The composite link j⁺ (link j welded to its subtree) has its parameters accumulated backwards in R_j about O_j
([9.12] in moment form); a unit q̈_j = 1 moves only j⁺, and the wrench it needs, carried to the base by
[9.92]–[9.93], projects on each joint axis on the way as A_ij ([9.94]); Ia_j is added to A_jj ([9.29]).
O(n·depth) ≤ O(n²).  The equations: docs/dynamic-model.md, "Inertia matrix A(q)".
"""

from __future__ import annotations


import numpy as np

from robodyn.dynamics import executor
from robodyn.kinematics import ancestors, flat_columns, frame_rotations, local_transforms, state_blocks, wrench_to_parent
from robodyn.model.robot import Robot
from robodyn.spatial import (ScalarBackend, c_mul, jax_backend, jax_matrix, jax_rows, sym_add, sym_outer, sym_rotate, sym_sub,
                             vadd, vcross, vdot, vmat, vrz, vscale)


def composite_links(robot: Robot, q: np.ndarray, dtype) -> tuple[list, list, list, list]:
    """Composite-link parameters of every frame, in its own frame R_j about O_j (q already checked).

    Returns
    -------
    AP : list over frames of (^{a}A_j (..., 3, 3), ^{a}P_j (..., 3))
    J, MS, M : lists over frames of (..., 3, 3), (..., 3), (...,) composite inertia tensor, first moment, mass
        (without batch axes for a frame whose composite link does not depend on q).
    """
    batch = q.shape[:-1]
    (rows,) = flat_columns(q)
    _, J, MS, M = composite_components(robot, list(rows))

    def full(components, shape):
        if not any(isinstance(x, np.ndarray) for x in components):
            return np.array(components, dtype).reshape(shape)
        out = np.empty((rows.shape[1], len(components)), dtype)
        for i, x in enumerate(components):
            out[:, i] = x
        return out.reshape(batch + shape)

    J = [full(Jj, (6,))[..., _SYM] for Jj in J]
    return local_transforms(robot, q, dtype), J, [full(m, (3,)) for m in MS], [np.array(m, dtype) for m in M]


_SYM = np.array([[0, 1, 2], [1, 3, 4], [2, 4, 5]])  # 6-tuple index of each entry of a symmetric 3×3 tensor


def composite_components(robot: Robot, q, backend: ScalarBackend | None = None) -> tuple[list, list, list, list]:
    """The backward accumulation of docs/dynamic-model.md, "Inertia matrix A(q)", on component tuples.

    q: n rows, each a (B,) array or a scalar.  Returns ``frame_rotations(robot, q)`` and, per frame, J⁺ as a
    6-tuple (xx, xy, xz, yy, yz, zz), MS⁺ as a 3-tuple and M⁺ (a float: it does not depend on q).
    """
    rot = frame_rotations(robot, q, backend)
    J, MS, M = (list(x) for x in zip(*robot.derived.links_six))
    for k in range(robot.nf - 1, -1, -1):
        j = robot.derived.parent[k]
        if j < 0:
            continue
        C, c, s, P = rot[k]
        AMS = vmat(C, vrz(c, s, MS[k]))  # A MS⁺_k
        # P̂ŝ + ŝP̂ + M P̂P̂ = P̂û + ûP̂ with u = s + (M/2) P, and P̂û + ûP̂ = u Pᵀ + P uᵀ − 2 (P·u) 1
        u = vadd(AMS, vscale(0.5 * M[k], P))
        Pu = c_mul(2.0, vdot(P, u))
        parallel_axis = sym_sub(sym_outer(u, P), (Pu, 0.0, 0.0, Pu, 0.0, Pu))
        M[j] = M[j] + M[k]
        MS[j] = vadd(MS[j], vadd(AMS, vscale(M[k], P)))
        J[j] = sym_add(J[j], sym_sub(sym_rotate(C, c, s, J[k]), parallel_axis))  # [9.12]
    return rot, J, MS, M


def inertia_matrix(robot: Robot, q, out=None, trig: str = "exact") -> np.ndarray:
    """Inertia matrix A(q) (..., n, n) by composite links, rotor inertias Ia on the diagonal.

    Arguments, units and result as :func:`robodyn.inertia_matrix` (``method="composite"``).
    """
    return executor.execute(_INERTIA, robot, q, None, None, None, None, None, out, trig)


def assemble_matrix(robot: Robot, q: np.ndarray, entries) -> np.ndarray:
    """A(q) (..., n, n) plus the rotor inertias on its diagonal, for checked ``q``, from ``entries(robot, q_rows)``,
    which yields ((i, j), A_ij) for the states of one block (A_ji = A_ij written too)."""
    n, dtype = robot.n, q.dtype
    (rows,) = flat_columns(q)
    Amat = np.empty((rows.shape[1], n, n), dtype)
    for sl, (q_block,) in state_blocks(rows):
        for (i, j), value in entries(robot, q_block):
            Amat[sl, i, j] = Amat[sl, j, i] = value
    return Amat.reshape(q.shape[:-1] + (n, n)) + robot.derived.Ia.astype(dtype) * np.eye(n, dtype=dtype)


def inertia_rows(robot: Robot, q, backend: ScalarBackend | None = None) -> list:
    """A(q) as n rows of n scalars from :func:`inertia_entries`, rotor inertias on the diagonal (q: n scalars)."""
    A = [[0.0] * robot.n for _ in range(robot.n)]
    for (i, j), value in inertia_entries(robot, q, backend):
        A[i][j] = A[j][i] = value
    for k, Ia in enumerate(robot.derived.Ia.tolist()):  # tolist: floats, or the constants of a customized model
        A[k][k] = A[k][k] + Ia
    return A


def _numpy(robot: Robot, q) -> np.ndarray:
    return assemble_matrix(robot, q, inertia_entries)


def inertia_entries(robot: Robot, q, backend: ScalarBackend | None = None) -> list:
    """((i, j), A_ij) for every pair of joints, i ⪯ j on the path to the base or 0 (other branch of a tree)."""
    rot, J, MS, M = composite_components(robot, q, backend)
    col = {int(f): k for k, f in enumerate(robot.joint_frames)}
    out = {(i, j): 0.0 for j in range(robot.n) for i in range(j + 1)}
    for j, f_j in enumerate(robot.joint_frames):
        if robot.sigma[f_j] == 0:
            f, m = vcross(_Z, MS[f_j]), (J[f_j][2], J[f_j][4], J[f_j][5])  # z × MS⁺, J⁺ z
        else:
            f, m = vscale(M[f_j], _Z), vcross(MS[f_j], _Z)  # M⁺ z, MS⁺ × z
        chain = ancestors(robot, int(f_j))
        for pos, i in enumerate(chain):
            if i in col:
                out[min(col[i], j), max(col[i], j)] = f[2] if robot.sigma[i] == 1 else m[2]  # [9.94]
            if pos + 1 < len(chain):
                f, m = wrench_to_parent(rot[i], (f, m))  # [9.92]–[9.93]
    return list(out.items())


_Z = (0.0, 0.0, 1.0)


def jax_inertia_matrix(robot: Robot, q):
    """A(q) by composite links, rotor inertias on the diagonal, on JAX arrays (..., n) → (..., n, n), traceable:
    :func:`inertia_rows` on the JAX backend."""
    like, (rows,) = jax_rows(robot.n, q)
    return jax_matrix(inertia_rows(robot, rows, jax_backend()), like)


_INERTIA = executor.Algorithm("inertia_matrix", _numpy, ("q",), single=True, batch=True, matrix=True,
                              jax=jax_inertia_matrix)
