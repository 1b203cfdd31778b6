"""The Lagrange form of the dynamic model, Khalil & Dombre §9.3:  Γ = A(q) q̈ + C(q, q̇) q̇ + Q(q) + Γ_f  [9.6].

* ∂A/∂q_k analytically from A_ij = S_iᵀ 𝕀⁺_j S_j (i ⪯ j; joint twists S and composite spatial inertias 𝕀⁺ in
  R_0 about O_0): joint k moves its subtree rigidly, ∂S/∂q_k = S_k × S (docs/dynamic-model.md, "Coriolis matrix
  and Ȧ", gives the three cases);
* C from the Christoffel symbols [9.7], c_ijk = ½(∂A_ij/∂q_k + ∂A_ik/∂q_j − ∂A_jk/∂q_i): Ȧ − 2C is skew-symmetric;
* energies [9.13]–[9.19] and [9.24]–[9.25]; direct dynamics by Cholesky [9.95]–[9.96]; state equation [9.98].
"""

from __future__ import annotations

import numpy as np

from robodyn.arrays import cholesky, finite_result, pivot_too_small, singular_model_error
from robodyn.model.arguments import joint_arrays
from robodyn.dynamics import composite, executor
from robodyn.dynamics.newton_euler import gravity_argument, rnea
from robodyn.model.friction import friction_of
from robodyn.kinematics import base_poses, joint_twists, link_velocities
from robodyn.model.inertia import moved_inertia, skew
from robodyn.model.robot import Robot
from robodyn.spatial import cross, motion_cross


def _axes_and_composites(robot: Robot, q: np.ndarray, dtype):
    """Joint twists S (..., n, 6) and composite spatial inertias 𝕀⁺ (..., n, 6, 6) of the joint frames, in R_0.

    Each link's spatial inertia moved to R_0 about O_0 ([9.21], [9.12]: J_0 = R J Rᵀ − p̂ŝ − ŝp̂ − M p̂p̂ with
    s = R MS, MS_0 = s + M p), all links at once, then summed over each joint's subtree."""
    R0, P0 = base_poses(robot, q, dtype)
    S = joint_twists(robot, R0, P0)
    M = robot.M.astype(dtype)
    J0, MS0 = moved_inertia(robot.J.astype(dtype), robot.MS.astype(dtype), M, R0, P0)
    links = np.zeros(q.shape[:-1] + (robot.nf, 6, 6), dtype)
    links[..., :3, :3] = M[:, None, None] * np.eye(3, dtype=dtype)
    MS0_hat = skew(MS0)
    links[..., :3, 3:] = -MS0_hat
    links[..., 3:, :3] = MS0_hat
    links[..., 3:, 3:] = J0
    D = robot.derived.subtree[robot.joint_frames].astype(dtype)  # (n, nf): the frames joint k moves
    return S, np.einsum("kj,...jab->...kab", D, links)


def inertia_matrix_partials(robot: Robot, q) -> np.ndarray:
    """Analytic partial derivatives ∂A_ij/∂q_k, (..., n, n, n) indexed [..., i, j, k] (docs/dynamic-model.md,
    "Coriolis matrix and Ȧ")."""
    dtype, batch, a = joint_arrays(robot, q=q)
    return _partials(robot, a["q"], dtype)


def _partials(robot: Robot, q: np.ndarray, dtype) -> np.ndarray:
    S, I = _axes_and_composites(robot, q, dtype)
    n = robot.n
    X = motion_cross(S[..., :, None, :], S[..., None, :, :])  # X[i, k] = S_i × S_k
    IS = np.einsum("...jab,...lb->...jla", I, S)  # IS[j, l] = 𝕀⁺_j S_l
    ISdiag = np.einsum("...jja->...ja", IS)
    between = np.einsum("...ikx,...jx->...ijk", X, ISdiag)
    beyond = np.einsum("...ikx,...kjx->...ijk", X, IS) + np.einsum("...kix,...jkx->...ijk", IS, X)
    jf = robot.joint_frames
    # prec[i, j]: joint i is joint j or lies on the path from the base to joint j (i ⪯ j)
    prec = robot.derived.subtree[np.ix_(jf, jf)] > 0
    eye = np.eye(n, dtype=bool)
    # masks [i, j, k] for the ordered case i ⪯ j
    m_between = prec[:, :, None] & prec.T[None, :, :] & (prec & ~eye)[:, None, :]
    m_beyond = prec[:, :, None] & (prec & ~eye)[None, :, :]
    upper = np.where(m_between, between, 0) + np.where(m_beyond, beyond, 0)
    lower = np.where((prec & ~eye).T[:, :, None], np.swapaxes(upper, -2, -3), 0)
    return upper + lower


def inertia_matrix_derivative(robot: Robot, q, qd) -> np.ndarray:
    """Ȧ = Σ_k ∂A/∂q_k q̇_k, (..., n, n), from the analytic partials.

    Parameters
    ----------
    q, qd : array_like (..., n)

    Returns
    -------
    ndarray (..., n, n)  (kg m²/s for revolute pairs).
    """
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd)
    return finite_result("inertia_matrix_derivative", np.einsum("...ijk,...k->...ij", _partials(robot, a["q"], dtype), a["qd"]))


def christoffel_symbols(robot: Robot, q) -> np.ndarray:
    """Christoffel symbols c_ijk = ½(∂A_ij/∂q_k + ∂A_ik/∂q_j − ∂A_jk/∂q_i) [9.7] from the analytic ∂A/∂q.

    Parameters
    ----------
    robot : Robot
    q : array_like (..., n)
        Joint positions (rad | m).

    Returns
    -------
    ndarray (..., n, n, n)
        c indexed [..., i, j, k], symmetric in j and k; C(q, q̇)_ij = Σ_k c_ijk q̇_k (kg m² or kg m, by joint types).
    """
    dtype, batch, a = joint_arrays(robot, q=q)
    dA = _partials(robot, a["q"], dtype)
    return finite_result("christoffel_symbols", 0.5 * (dA + np.swapaxes(dA, -1, -2) - np.moveaxis(dA, -1, -3)))


def coriolis_matrix(robot: Robot, q, qd) -> np.ndarray:
    """Coriolis and centrifugal matrix C(q, q̇) in the Christoffel form [9.7], (..., n, n).

    C q̇ = H − Q at zero friction and wrenches, and Ȧ − 2C is skew-symmetric.

    Parameters
    ----------
    q, qd : array_like (..., n)

    Returns
    -------
    ndarray (..., n, n)
    """
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd)
    C = np.einsum("...ijk,...k->...ij", christoffel_symbols(robot, a["q"]), a["qd"])  # C_ij = Σ_k c_ijk q̇_k
    return finite_result("coriolis_matrix", C)


def kinetic_energy(robot: Robot, q, qd) -> np.ndarray:
    """Kinetic energy E, link by link [9.16]–[9.18] plus rotors ½ Ia q̇².

    E_j = ½ [ωᵀ J_j ω + M_j VᵀV + 2 MS_jᵀ(V × ω)], everything in R_j ([9.16]; Khalil & Dombre's [9.13] prints ω̇ for ω).

    Parameters
    ----------
    robot : Robot
    q, qd : array_like (..., n)
        Joint positions (rad | m) and velocities (rad/s | m/s).

    Returns
    -------
    ndarray (...,)
        E (J); float32 if every input is.
    """
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd)
    w, V = link_velocities(robot, a["q"], a["qd"])
    J, MS, M = (x.astype(dtype) for x in (robot.J, robot.MS, robot.M))
    Jw = np.einsum("jab,...jb->...ja", J, w)
    links = np.sum(w * Jw, -1) + M * np.sum(V * V, -1) + 2 * np.sum(MS * cross(V, w), -1)
    rotors = robot.derived.Ia.astype(dtype) * a["qd"] ** 2
    return finite_result("kinetic_energy", 0.5 * (np.sum(links, -1) + np.sum(rotors, -1)))


def potential_energy(robot: Robot, q, gravity=None) -> np.ndarray:
    """Potential energy U = −Σ_j ⁰gᵀ(M_j ⁰P_j + ⁰A_j ʲMS_j) (J), (...,) [9.24]–[9.25].

    Parameters
    ----------
    q : array_like (..., n)
    gravity : array_like (3,) or (..., 3), optional — g in R_0 (m/s²); default ``robot.gravity``.

    Returns
    -------
    ndarray (...,)
        U (J), zero at the base origin; float32 if every input is.
    """
    dtype, batch, a = joint_arrays(robot, q=q, gravity=gravity)
    g = gravity_argument(robot, gravity, batch, dtype)
    R0, P0 = base_poses(robot, a["q"], dtype)
    first = robot.M.astype(dtype)[:, None] * P0 + np.einsum("...jab,jb->...ja", R0, robot.MS.astype(dtype))
    return finite_result("potential_energy", -np.einsum("...a,...ja->...", g, first))


def forward_dynamics(robot: Robot, q, qd, tau, wrenches=None, gravity=None) -> np.ndarray:
    """q̈ from A q̈ = Γ − H(q, q̇) [9.95]–[9.96]: A by composite links, H by Newton–Euler with q̈ = 0, then a
    Cholesky factorization A = L Lᵀ and two triangular substitutions (loops over joints, batched).

    Arguments, units and result as :func:`robodyn.forward_dynamics` (``method="cholesky"``).
    """
    return executor.execute(_FORWARD, robot, q, qd, tau, wrenches, gravity)


def _numpy(robot: Robot, q, qd, tau, g, fe) -> np.ndarray:
    H = rnea(robot, q, qd, np.zeros_like(qd), g, fe) + friction_of(robot, qd)
    return cholesky_solve(composite.inertia_matrix(robot, q), tau - H, robot.name)


_FORWARD = executor.Algorithm("forward_dynamics", _numpy, ("q", "qd", "tau"))


def cholesky_solve(A: np.ndarray, b: np.ndarray, robot_name: str, what: str = "inertia matrix") -> np.ndarray:
    """x with A x = b for symmetric positive-definite A (..., n, n) and b (..., n): Cholesky A = L Lᵀ, then forward
    and backward substitution ([9.96]; Mata et al. Table 3).

    The substitutions loop over joints only, so batches and float32 are kept.  A that is not positive definite
    raises :class:`ModelError` naming ``robot_name`` and ``what`` (the matrix), with the usual cause and fix.
    """
    try:
        L = cholesky(A)
    except np.linalg.LinAlgError:
        raise singular_model_error(robot_name, f"the {what} is not positive definite") from None
    # A pivot that is rounding noise (exactly 0 in exact arithmetic) passes the factorisation: compare it with A.
    pivots = np.diagonal(L, axis1=-2, axis2=-1) ** 2
    for k in range(pivots.shape[-1]):
        if pivot_too_small(pivots[..., k], lambda: np.max(np.abs(np.diagonal(A, axis1=-2, axis2=-1)), -1)):
            raise singular_model_error(robot_name, f"the {what} has Cholesky pivot {k + 1} = {float(np.min(pivots[..., k])):.3g}")
    if b.ndim == 1 and A.dtype == np.float64:  # one state: LAPACK's substitutions (potrs) on the same factor
        from scipy.linalg import cho_solve

        return cho_solve((L, True), b, check_finite=False)
    n = b.shape[-1]
    y = np.empty_like(b)
    for i in range(n):
        y[..., i] = (b[..., i] - np.sum(L[..., i, :i] * y[..., :i], -1)) / L[..., i, i]
    x = np.empty_like(b)
    for i in range(n - 1, -1, -1):
        x[..., i] = (y[..., i] - np.sum(L[..., i + 1 :, i] * x[..., i + 1 :], -1)) / L[..., i, i]
    return x


class Fallback(Exception):
    """Raised by :func:`cholesky_components` (and Kozłowski's articulated pivots) on component scalars for a pivot
    that fails the relative test: the batched NumPy factorisation then runs and names the singular model."""


def cholesky_components(A, b, check: bool = True) -> list:
    """x with A x = b for a symmetric positive-definite A (n rows of n scalars) and b (n scalars): the square-root-free
    Cholesky factorisation A = L D Lᵀ, then L y = b, Lᵀ x = D⁻¹ y (Khalil & Dombre [9.96]; Mata et al. Table 3).

    Every pivot d_k takes the relative test of :func:`robodyn.arrays.pivot_too_small`, against Σ|A_ii| (never below
    the max|A_ii| of the batched test, so a state accepted here is accepted there); a pivot that fails it raises
    :class:`Fallback`, and the batched factorisation reports the singular model (``check=False``: no test, for
    symbolic scalars that cannot be compared; a customized model's recording notes the test for its generated
    code).  Structural zeros of A (other branches of a tree) cost nothing.
    """
    n = len(b)
    scale = None
    L = [[0.0] * n for _ in range(n)]
    LD = [[0.0] * n for _ in range(n)]  # L_ij d_j
    d = []
    for k in range(n):
        dk = A[k][k]
        for j in range(k):
            dk = dk - L[k][j] * LD[k][j]
        if check and scale is None:
            scale = sum((abs(A[i][i]) for i in range(1, n)), abs(A[0][0]))
        if check and pivot_too_small(dk, lambda: scale, k):
            raise Fallback
        d.append(dk)
        for i in range(k + 1, n):
            t = A[i][k]
            for j in range(k):
                t = t - L[i][j] * LD[k][j]
            LD[i][k] = t
            L[i][k] = t / dk
    y = []
    for i in range(n):
        t = b[i]
        for j in range(i):
            t = t - L[i][j] * y[j]
        y.append(t)
    x = [0.0] * n
    for i in range(n - 1, -1, -1):
        t = y[i] / d[i]
        for j in range(i + 1, n):
            t = t - L[j][i] * x[j]
        x[i] = t
    return x
