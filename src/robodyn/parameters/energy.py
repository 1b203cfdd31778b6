"""Energy functions of the links and their recursion (Khalil & Dombre §9.4.2, [9.41]–[9.47], Table 9.1).

The total energy of link j is linear in its standard parameters,  H_j = h_j ^jK_j  [9.41], with the row
h_j of [9.44].  The energy functions of consecutive links are related by

    h_j = h_{j−1} ^{j−1}λ_j + q̇_j η_j                                                        [9.45]

where ^{j−1}λ_j (Table 9.1) carries the inertial parameters of a link from R_j to R_{j−1} [9.46].
"""

from __future__ import annotations

import numpy as np

from robodyn.arrays import as_real_array, check_array, finite_array, finite_result, working_dtype
from robodyn.model.arguments import joint_arrays
from robodyn.model.robot import check_robot
from robodyn.kinematics import base_poses, link_velocities
from robodyn.model.robot import Robot


def _is_sympy(x) -> bool:
    """A sympy object (checked without importing sympy, which numeric users never need)."""
    return type(x).__module__.startswith("sympy")


def _trig(x):
    if _is_sympy(x):
        import sympy

        return sympy.cos(x), sympy.sin(x)
    return np.cos(x), np.sin(x)


def lambda_matrix(alpha, d, theta, r):
    """^{j−1}λ_j of Table 9.1: ^{j−1}K_j = ^{j−1}λ_j ^jK_j  [9.46], K = [XX XY XZ YY YZ ZZ MX MY MZ M].

    Parameters
    ----------
    alpha, d, theta, r : float, ndarray (...,) or sympy expressions
        Geometric parameters of frame j (θ_j and r_j include the joint variable).

    Returns
    -------
    ndarray (..., 10, 10) for numbers; sympy.Matrix (10, 10) when an argument is a sympy expression.

    Notes
    -----
    Row 7 of the printed table reads ``0 … Cθ −Sθ 0 d``: the MX transformation is MX' = Cθ MX − Sθ MY + d M,
    as the table says.  All entries were checked against the definition [9.46] (translate the inertia
    tensor with the parallel-axis theorem and rotate it) in tests/test_regressor.py.
    """
    sym = any(_is_sympy(x) for x in (alpha, d, theta, r))
    alpha, d, theta, r = (x if _is_sympy(x) else finite_array(k, x)
                          for k, x in zip(("alpha", "d", "theta", "r"), (alpha, d, theta, r)))
    Ca, Sa = _trig(alpha)
    Ct, St = _trig(theta)
    CCt, SSt, CSt = Ct * Ct, St * St, Ct * St
    CCa, SSa, CSa = Ca * Ca, Sa * Sa, Ca * Sa
    z = 0 * (Ct + Ca + d + r) if not sym else 0 * Ct
    one = z + 1
    rows = [
        [CCt, -2 * CSt, z, SSt, z, z, z, z, 2 * r + z, r * r + z],
        [CSt * Ca, (CCt - SSt) * Ca, -Ct * Sa, -CSt * Ca, St * Sa, z,
         -d * St * Ca + r * Ct * Sa, -d * Ct * Ca - r * St * Sa, d * Sa, d * r * Sa],
        [CSt * Sa, (CCt - SSt) * Sa, Ct * Ca, -CSt * Sa, -St * Ca, z,
         -d * St * Sa - r * Ct * Ca, -d * Ct * Sa + r * St * Ca, -d * Ca, -d * r * Ca],
        [SSt * CCa, 2 * CSt * CCa, -2 * St * CSa, CCt * CCa, -2 * Ct * CSa, SSa,
         2 * (d * Ct + r * St * CSa), 2 * (-d * St + r * Ct * CSa), 2 * r * CCa, d * d + r * r * CCa],
        [SSt * CSa, 2 * CSt * CSa, St * (CCa - SSa), CCt * CSa, Ct * (CCa - SSa), -CSa,
         r * St * (SSa - CCa), r * Ct * (SSa - CCa), 2 * r * CSa, r * r * CSa],
        [SSt * SSa, 2 * CSt * SSa, 2 * St * CSa, CCt * SSa, 2 * Ct * CSa, CCa,
         2 * (d * Ct - r * St * CSa), 2 * (-d * St - r * Ct * CSa), 2 * r * SSa, d * d + r * r * SSa],
        [z, z, z, z, z, z, Ct, -St, z, d + z],
        [z, z, z, z, z, z, St * Ca, Ct * Ca, -Sa, -r * Sa],
        [z, z, z, z, z, z, St * Sa, Ct * Sa, Ca, r * Ca],
        [z, z, z, z, z, z, z, z, z, one],
    ]
    if sym:
        import sympy

        return sympy.Matrix(rows)
    return np.stack([np.stack(np.broadcast_arrays(*row), -1) for row in rows], -2).astype(float)


def frame_lambda(robot: Robot, i: int, q_i=0.0, symbols: dict | None = None):
    """^{a(j)}λ_j of frame j = i + 1 (0-based ``i``), trees included.

    A tree frame adds Rot(z, γ_j) Trans(z, b_j) in front of the serial transformation; both steps have the
    form of Table 9.1, so  ^{a(j)}λ_j = λ(0, 0, γ_j, b_j) λ(α_j, d_j, θ_j, r_j)  (the transformation of [9.46]
    composes like the frames do).

    Parameters
    ----------
    q_i : float or ndarray (...,) or sympy expression
        Joint variable of frame j (ignored for a fixed frame).
    symbols : dict, optional
        Overrides of the geometric parameters by name ('gamma', 'b', 'alpha', 'd', 'theta', 'r') with
        sympy expressions (symbolic geometry).
    """
    check_robot(robot)
    geo = {k: getattr(robot, k)[i] for k in ("gamma", "b", "alpha", "d", "theta", "r")}
    geo.update(symbols or {})
    theta, r = geo["theta"], geo["r"]
    if robot.sigma[i] == 0:
        theta = theta + q_i
    elif robot.sigma[i] == 1:
        r = r + q_i
    lam = lambda_matrix(geo["alpha"], geo["d"], theta, r)
    if _is_zero(geo["gamma"]) and _is_zero(geo["b"]):
        return lam
    pre = lambda_matrix(0 * geo["gamma"], 0 * geo["b"], geo["gamma"], geo["b"])
    return pre * lam if _is_sympy(lam) else pre @ lam


def _is_zero(x) -> bool:
    return x.is_zero is True if _is_sympy(x) else bool(x == 0)


def energy_functions(robot: Robot, q, qd, gravity=None) -> np.ndarray:
    """The energy functions h_j of every link, [9.44]:  E_j + U_j = h_j ^jK_j  [9.41].

    h_XX = ½ω₁², h_XY = ω₁ω₂, h_XZ = ω₁ω₃, h_YY = ½ω₂², h_YZ = ω₂ω₃, h_ZZ = ½ω₃²,
    h_MS = (ω × V)ᵀ-terms − gᵀ ⁰A_j,  h_M = ½ VᵀV − gᵀ ⁰p_j,  with ω = ^jω_j and V = ^jV_j.

    Parameters
    ----------
    q, qd : array_like (..., n)
    gravity : array_like (3,), optional — g in R_0 (m/s²), default ``robot.gravity``.

    Returns
    -------
    ndarray (..., nf, 10), units of energy per unit parameter.
    """
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd)
    g = np.asarray(robot.gravity, dtype) if gravity is None else check_array("gravity", gravity, (3,), (), dtype)
    w, V = link_velocities(robot, a["q"], a["qd"])
    R0, P0 = base_poses(robot, a["q"], dtype)
    w1, w2, w3 = w[..., 0], w[..., 1], w[..., 2]
    V1, V2, V3 = V[..., 0], V[..., 1], V[..., 2]
    gA = np.einsum("i,...ij->...j", g, R0)  # gᵀ [s n a]
    return finite_result("energy_functions", np.stack(
        [
            0.5 * w1 * w1, w1 * w2, w1 * w3, 0.5 * w2 * w2, w2 * w3, 0.5 * w3 * w3,
            w3 * V2 - w2 * V3 - gA[..., 0],
            w1 * V3 - w3 * V1 - gA[..., 1],
            w2 * V1 - w1 * V2 - gA[..., 2],
            0.5 * np.sum(V * V, -1) - P0 @ g,
        ],
        -1,
    ))


def eta(sigma: int, w, V, qd):
    """η_j of [9.47] (..., 10) from ^jω_j, ^jV_j (..., 3) and q̇_j (...,); zero for a fixed frame."""
    w, V, qd = (as_real_array(k, x) for k, x in (("w", w), ("V", V), ("qd", qd)))
    w, V = (check_array(k, x, (3,), None, working_dtype(x)) for k, x in (("w", w), ("V", V)))
    qd = finite_array("qd", qd, working_dtype(qd))
    z = np.zeros_like(qd)
    if sigma == 0:
        return np.stack([z, z, w[..., 0], z, w[..., 1], w[..., 2] - 0.5 * qd, V[..., 1], -V[..., 0], z, z], -1)
    if sigma == 1:
        return np.stack([z, z, z, z, z, z, -w[..., 1], w[..., 0], z, V[..., 2] - 0.5 * qd], -1)
    return np.stack([z] * 10, -1)


def energy_recursion(robot: Robot, q, qd, gravity=None) -> np.ndarray:
    """h_j of every link by the recursion [9.45], h_j = h_{a(j)} ^{a(j)}λ_j + q̇_j η_j, from the base.

    The base ("link 0") has h_0 = [0 0 0 0 0 0 −g₁ −g₂ −g₃ 0] (it does not move; R_0 at the origin).
    Same arguments and result as :func:`energy_functions`, which evaluates [9.44] directly.
    """
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd)
    g = np.asarray(robot.gravity, dtype) if gravity is None else check_array("gravity", gravity, (3,), (), dtype)
    w, V = link_velocities(robot, a["q"], a["qd"])
    h0 = np.zeros(batch + (10,), dtype)
    h0[..., 6:9] = -g
    h = []
    k = 0
    for i in range(robot.nf):
        if robot.sigma[i] == 2:
            qi = qdi = np.zeros(batch, dtype)
        else:
            qi, qdi = a["q"][..., k], a["qd"][..., k]
            k += 1
        parent = robot.derived.parent[i]
        hp = h[parent] if parent >= 0 else h0
        lam = frame_lambda(robot, i, qi)
        h.append(np.einsum("...k,...kl->...l", hp, lam) + qdi[..., None] * eta(robot.sigma[i], w[..., i, :], V[..., i, :], qdi))
    return finite_result("energy_recursion", np.stack(h, -2))
