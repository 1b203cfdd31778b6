"""The inverse dynamic model linear in the standard parameters, Γ = D(q, q̇, q̈) K  (Khalil & Dombre [9.36]).

Column order of D and K (Khalil & Dombre §9.4.1): for every frame j = 1..nf the 11 parameters

    XX_j XY_j XZ_j YY_j YZ_j ZZ_j MX_j MY_j MZ_j M_j Ia_j

then, with ``friction=True``, the friction parameters Fc_k, Fv_k, Foff_k of every joint variable k = 1..n
([9.26]–[9.28]: Γ_f = Fc sign(q̇) + Fv q̇ + Foff).  Fixed frames (σ = 2) keep their 11 columns; their Ia
column is zero.  The Stribeck term of [9.26] is not linear in its parameters and has no column.

D is computed from the Newton–Euler forward recursion [9.84]–[9.90]: the wrench of link j about O_j,
[9.88]–[9.89], is linear in ^jK_j,

    [F_j; M_j] = Φ_j(ω_j, ω̇_j, V̇_j) ^jK_j,     Φ_j a (6 × 10) matrix,

and the backward recursion [9.91]–[9.93] carries each column block to the joints between link j and the base.
"""

from __future__ import annotations

import numpy as np

from robodyn._arrays import joint_arrays
from robodyn.kinematics import forward_recursion
from robodyn.model.inertia import skew
from robodyn.model.robot import PARAMETER_NAMES, Robot

#: Names of the 11 standard parameters of one link, in the order of D's columns.
LINK_PARAMETERS: tuple[str, ...] = PARAMETER_NAMES + ("Ia",)
#: Names of the 3 friction parameters of one joint, in the order of D's columns.
FRICTION_PARAMETERS: tuple[str, ...] = ("Fc", "Fv", "Foff")


def standard_parameter_names(robot: Robot, friction: bool = True) -> list[str]:
    """Names of the columns of D: ``XX1 .. Ia1, XX2 .. Ia<nf>`` then ``Fc1, Fv1, Foff1, .. Foff<n>``.

    Link numbers are frame numbers j = 1..nf; friction numbers are joint-variable numbers k = 1..n.
    """
    names = [f"{p}{j}" for j in range(1, robot.nf + 1) for p in LINK_PARAMETERS]
    if friction:
        names += [f"{p}{k}" for k in range(1, robot.n + 1) for p in FRICTION_PARAMETERS]
    return names


def standard_parameter_vector(robot: Robot, friction: bool = True) -> np.ndarray:
    """The standard parameter vector K of [9.36], in the order of :func:`standard_parameter_names`, (p,)."""
    K = np.concatenate([robot.params, robot.Ia[:, None]], axis=1).reshape(-1)
    if friction:
        jf = robot.joint_frames
        K = np.concatenate([K, np.stack([robot.Fc[jf], robot.Fv[jf], robot.Foff[jf]], -1).reshape(-1)])
    return K


def link_wrench_matrix(w: np.ndarray, wd: np.ndarray, Vd: np.ndarray) -> np.ndarray:
    """Φ_j with [F_j; M_j] = Φ_j ^jK_j, [9.88]–[9.89], for ^jK_j = [XX XY XZ YY YZ ZZ MX MY MZ M].

    F_j = M_j V̇_j + U_j MS_j,  M_j = J_j ω̇_j + ω_j × (J_j ω_j) + MS_j × V̇_j,  U_j = ω̂̇_j + ω̂_j ω̂_j [9.90].

    Parameters
    ----------
    w, wd, Vd : ndarray (..., 3)
        ^jω_j (rad/s), ^jω̇_j (rad/s²), ^jV̇_j (m/s², gravity included as V̇_0 = −g) in R_j.

    Returns
    -------
    ndarray (..., 6, 10): rows F (3) then M (3), about O_j in R_j.
    """
    batch = np.broadcast_shapes(w.shape, wd.shape, Vd.shape)[:-1]
    Phi = np.zeros(batch + (6, 10), np.result_type(w, wd, Vd))
    w0, w1, w2 = w[..., 0], w[..., 1], w[..., 2]
    a0, a1, a2 = wd[..., 0], wd[..., 1], wd[..., 2]
    # U = ω̂̇ + ω̂ω̂ acts on MS in F_j
    Phi[..., 0, 6], Phi[..., 0, 7], Phi[..., 0, 8] = -(w1 * w1 + w2 * w2), w0 * w1 - a2, w0 * w2 + a1
    Phi[..., 1, 6], Phi[..., 1, 7], Phi[..., 1, 8] = w0 * w1 + a2, -(w0 * w0 + w2 * w2), w1 * w2 - a0
    Phi[..., 2, 6], Phi[..., 2, 7], Phi[..., 2, 8] = w0 * w2 - a1, w1 * w2 + a0, -(w0 * w0 + w1 * w1)
    Phi[..., 0:3, 9] = Vd
    # J ω̇ + ω × (J ω): J v = L(v) [XX XY XZ YY YZ ZZ]
    L_wd = _tensor_action(wd)
    L_w = _tensor_action(w)
    Phi[..., 3:6, 0:6] = L_wd + np.cross(w[..., None, :], L_w, axisb=-2, axisc=-2)
    # MS × V̇ = −V̂̇ MS
    v0, v1, v2 = Vd[..., 0], Vd[..., 1], Vd[..., 2]
    Phi[..., 3, 7], Phi[..., 3, 8] = v2, -v1
    Phi[..., 4, 6], Phi[..., 4, 8] = -v2, v0
    Phi[..., 5, 6], Phi[..., 5, 7] = v1, -v0
    return Phi


def _tensor_action(v: np.ndarray) -> np.ndarray:
    """L(v) (..., 3, 6) with J v = L(v) [XX XY XZ YY YZ ZZ]."""
    L = np.zeros(v.shape[:-1] + (3, 6), v.dtype)
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    L[..., 0, 0], L[..., 0, 1], L[..., 0, 2] = x, y, z
    L[..., 1, 1], L[..., 1, 3], L[..., 1, 4] = x, y, z
    L[..., 2, 2], L[..., 2, 4], L[..., 2, 5] = x, y, z
    return L


def _wrench_transform(A: np.ndarray, P: np.ndarray) -> np.ndarray:
    """X (..., 6, 6) with [f; m]_{a(j)} = X [f; m]_j: ^{a}f = A f, ^{a}m = A m + P × (A f)  ([9.92]–[9.93])."""
    batch = np.broadcast_shapes(A.shape[:-2], P.shape[:-1])
    X = np.zeros(batch + (6, 6), np.result_type(A, P))
    X[..., :3, :3] = A
    X[..., 3:, 3:] = A
    X[..., 3:, :3] = skew(P) @ A
    return X


def regressor(robot: Robot, q, qd, qdd, friction: bool = True, gravity=None) -> np.ndarray:
    """Regressor D(q, q̇, q̈) of the inverse dynamic model, Γ = D K  [9.36], batched.

    Parameters
    ----------
    robot : Robot
    q, qd, qdd : array_like (..., n)
        Joint positions (rad | m), velocities and accelerations; leading axes are batch axes.
    friction : bool
        Append the 3 n friction columns sign(q̇_k), q̇_k, 1 (parameters Fc_k, Fv_k, Foff_k).
    gravity : array_like (3,) or (..., 3), optional
        Overrides ``robot.gravity`` (base frame, m/s²).

    Returns
    -------
    ndarray (..., n, p), p = 11 nf (+ 3 n): columns as :func:`standard_parameter_names`.
        ``regressor(robot, q, qd, qdd) @ standard_parameter_vector(robot)`` equals
        ``inverse_dynamics(robot, q, qd, qdd)`` when the robot has no Stribeck term.
    """
    from robodyn.dynamics.newton_euler import _gravity

    dtype, batch, a = joint_arrays(robot, q=q, qd=qd, qdd=qdd)
    g = _gravity(robot, gravity, batch, dtype)
    AP, w, wd, Vd = forward_recursion(robot, a["q"], a["qd"], a["qdd"], g)
    n, nf = robot.n, robot.nf
    p = 11 * nf + (3 * n if friction else 0)
    D = np.zeros(batch + (n, p), dtype)
    joint_of = {int(i): k for k, i in enumerate(robot.joint_frames)}
    Phi = link_wrench_matrix(np.stack(w, -2), np.stack(wd, -2), np.stack(Vd, -2))  # (..., nf, 6, 10)
    # B_i = [Φ_i, X_c B_c for the children c]: the wrenches at O_i of every link of the subtree of i
    # ([9.91]–[9.93]); row z of B_i is the joint's row of D on the subtree's columns (first term of [9.94]).
    blocks, links = [None] * nf, [None] * nf
    for i in range(nf - 1, -1, -1):
        parts, owners = [Phi[..., i, :, :]], [i]
        for c in robot.children[i]:
            parts.append(_wrench_transform(*AP[c]) @ blocks[c])
            owners += links[c]
        blocks[i], links[i] = np.concatenate(parts, -1), owners
        if i in joint_of:
            cols = (11 * np.array(owners)[:, None] + np.arange(10)).reshape(-1)
            D[..., joint_of[i], cols] = blocks[i][..., 2 if robot.sigma[i] == 1 else 5, :]
    for k, i in enumerate(robot.joint_frames):
        D[..., k, 11 * i + 10] = a["qdd"][..., k]  # Ia_k q̈_k  [9.94]
        if friction:
            c = 11 * nf + 3 * k
            D[..., k, c] = np.sign(a["qd"][..., k])
            D[..., k, c + 1] = a["qd"][..., k]
            D[..., k, c + 2] = 1
    return D
