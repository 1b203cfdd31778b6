"""Kinematics and dynamics of closed-loop robots (:class:`~robodyn.model.closed_chain.ClosedChainRobot`).

The spanning tree's joint variables q (n) split into active q_a (n_a) and passive q_p; the loop closures give
φ(q) = 0 (m = n − n_a equations) with Jacobian G = ∂φ/∂q = [G_a G_p] (G_p square and invertible away from
singular configurations of the loops). Then (Khalil & Dombre, closed-loop structures):

    q̇ = W q̇_a,   W = [I; −G_p⁻¹ G_a] (rows in tree order),     q̈ = W q̈_a + w₀,   w₀_p = −G_p⁻¹ Ġ q̇,

and with the tree's inverse dynamics Γ_tree = A q̈ + H(q, q̇), the active torques and the loop multipliers λ
follow from Γ_tree = B Γ_a + Gᵀ λ (B selects the active joints): Γ_a = Wᵀ Γ_tree (since Wᵀ Gᵀ = 0) and
G_pᵀ λ = Γ_tree,p. Direct dynamics by projection on the active coordinates:
(Wᵀ A W) q̈_a = Γ_a − Wᵀ (H + A w₀).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn.arrays import as_real_array, finite_result
from robodyn.dynamics.api import inertia_matrix, inverse_dynamics
from robodyn.dynamics.newton_euler import bias_torques, gravity_torques
from robodyn.errors import InputError
from robodyn.kinematics import forward_kinematics, jacobian, jacobian_dot_qd
from robodyn.model.closed_chain import ClosedChainRobot


class LoopClosureError(InputError):
    """The loops cannot be closed at the given active joints (out of reach, or a singular loop configuration)."""


def _check(cc) -> None:
    if not isinstance(cc, ClosedChainRobot):
        raise InputError(f"argument 'robot' is a {type(cc).__name__}; give a ClosedChainRobot "
                         "(robodyn.model.closed_chain.load_closed_chain)")


def _array(name: str, value, size: int, what: str) -> np.ndarray:
    a = as_real_array(name, value).astype(float)
    if a.ndim == 0 or a.shape[-1] != size:
        raise InputError(f"argument '{name}' has shape {a.shape}; give {what}, shape (..., {size})")
    if not np.all(np.isfinite(a)):
        raise InputError(f"argument '{name}' contains NaN or inf; give finite values")
    return a


def loop_residual(cc: ClosedChainRobot, q) -> np.ndarray:
    """The loop-closure constraints φ(q) of a closed-chain robot, zero where every loop is closed.

    Parameters
    ----------
    cc : ClosedChainRobot
    q : array_like (..., n), the spanning tree's joint variables (rad | m)

    Returns
    -------
    ndarray (..., m)
        Per loop (in ``cc.loops`` order), the gap p_a − p_b between its two points on its closed rows (m, R_0
        axes); m is the total number of closed rows.
    """
    _check(cc)
    q = _array("q", q, cc.tree.n, "the tree's joint variables")
    T = forward_kinematics(cc.tree, q)
    out = []
    for lp in cc.loops:
        pa = T[..., lp.frame - 1, :3, :3] @ np.asarray(lp.point) + T[..., lp.frame - 1, :3, 3]
        pb = np.asarray(lp.to_point) if lp.to == 0 else \
            T[..., lp.to - 1, :3, :3] @ np.asarray(lp.to_point) + T[..., lp.to - 1, :3, 3]
        out.append((pa - pb)[..., list(lp.rows)])
    return np.concatenate(out, axis=-1)


def loop_jacobian(cc: ClosedChainRobot, q) -> np.ndarray:
    """The constraint Jacobian G = ∂φ/∂q of the loop closures of a closed-chain robot (Khalil & Dombre,
    closed-loop structures): G q̇ = 0 along every motion that keeps the loops closed.

    For each loop, the difference of the linear-velocity Jacobians of its two points (``point`` of frame
    ``frame`` minus ``to_point`` of frame ``to``, whose velocity is zero on the base) on its closed rows; the rows of the loops are stacked in
    ``cc.loops`` order, as in :func:`loop_residual`. Splitting the columns into active and passive joints,
    G = [G_a G_p] gives the passive velocities q̇_p = −G_p⁻¹ G_a q̇_a and the loop forces Gᵀλ of
    :func:`closed_chain_inverse_dynamics`.

    Parameters
    ----------
    cc : ClosedChainRobot
    q : array_like (..., n), the spanning tree's joint variables (rad | m), leading axes batch axes

    Returns
    -------
    ndarray (..., m, n)
        G (m/rad | m/m) in R_0 axes; m is the total number of closed rows, n the tree's joints.
    """
    _check(cc)
    q = _array("q", q, cc.tree.n, "the tree's joint variables")
    return _loop_rows(cc, lambda frame, point: jacobian(cc.tree, q, frame=frame, point=point)[..., :3, :], -2)


def _loop_bias(cc: ClosedChainRobot, q, qd) -> np.ndarray:
    """Ġ q̇ (..., m)."""
    return _loop_rows(cc, lambda frame, point: jacobian_dot_qd(cc.tree, q, qd, frame=frame, point=point)[..., :3], -1)


def _loop_rows(cc: ClosedChainRobot, of_point, axis: int) -> np.ndarray:
    """Per loop, ``of_point(frame, point)`` of its first point less that of its second (nothing for the base), on
    its closed rows (``axis``), stacked in ``cc.loops`` order."""
    out = []
    for lp in cc.loops:
        x = of_point(lp.frame, lp.point)
        if lp.to != 0:
            x = x - of_point(lp.to, lp.to_point)
        out.append(np.take(x, list(lp.rows), axis=axis))
    return np.concatenate(out, axis=axis)


def close_loops(cc: ClosedChainRobot, q_active, q_passive=None, max_iter: int = 50, tol: float = 1e-12) -> np.ndarray:
    """Solve the loop closures φ(q) = 0 for the passive joints, by Newton's method from ``q_passive``.

    Parameters
    ----------
    cc : ClosedChainRobot
    q_active : array_like (..., n_a)
    q_passive : array_like (..., n − n_a), optional
        Initial guess; it selects the assembly mode (e.g. elbow up or down of a four-bar). Default zeros.
    max_iter : int
        Newton iterations at most; more raises :class:`LoopClosureError`.
    tol : float
        Convergence when max |φ| ≤ tol · (1 + size of the mechanism) (m).

    Returns
    -------
    ndarray (..., n)  the tree's joint variables with the loops closed.
    """
    _check(cc)
    qa = _array("q_active", q_active, cc.n_active, "one value per active joint")
    npas = len(cc.passive)
    qp = np.zeros(qa.shape[:-1] + (npas,)) if q_passive is None else \
        _array("q_passive", q_passive, npas, "one initial value per passive joint")
    batch = np.broadcast_shapes(qa.shape[:-1], qp.shape[:-1])
    q = np.empty(batch + (cc.tree.n,))
    q[..., list(cc.active)] = qa
    q[..., list(cc.passive)] = qp
    size = 1.0 + float(np.sum(np.abs(cc.tree.d)) + np.sum(np.abs(cc.tree.r)))
    pas = list(cc.passive)
    for _ in range(int(max_iter)):
        phi = loop_residual(cc, q)
        if np.max(np.abs(phi), initial=0.0) <= tol * size:
            return q
        Gp = loop_jacobian(cc, q)[..., pas]
        try:
            step = np.linalg.solve(Gp, phi[..., None])[..., 0]
        except np.linalg.LinAlgError:
            raise LoopClosureError(f"closed chain '{cc.name}': the loop Jacobian of the passive joints is singular "
                                   "during the closure; start from another q_passive (assembly mode)") from None
        q[..., pas] -= step
    phi = np.abs(loop_residual(cc, q))
    worst = np.unravel_index(int(np.argmax(phi)), phi.shape)
    raise LoopClosureError(f"closed chain '{cc.name}': the loops did not close in max_iter = {max_iter} Newton "
                           f"iterations (largest gap {float(phi[worst]):.3g} m); the active joints may be out of the "
                           "mechanism's reach, or give a better q_passive")


def velocity_map(cc: ClosedChainRobot, q) -> np.ndarray:
    """W (..., n, n_a) with q̇ = W q̇_a for a closed configuration q."""
    G = loop_jacobian(cc, q)
    act, pas = list(cc.active), list(cc.passive)
    try:
        Wp = -np.linalg.solve(G[..., pas], G[..., act])
    except np.linalg.LinAlgError:
        raise LoopClosureError(f"closed chain '{cc.name}': singular loop configuration (the passive joints do not "
                               "determine the closure); the active joints cannot drive the mechanism here") from None
    W = np.zeros(G.shape[:-2] + (cc.tree.n, cc.n_active))
    W[..., act, :] = np.eye(cc.n_active)
    W[..., pas, :] = Wp
    return W


@dataclass(frozen=True)
class ClosedChainMotion:
    """State and torques of a closed-loop robot.

    Attributes
    ----------
    tau : (..., n_a)          torques / forces of the active joints (N m | N)
    qdd_active : (..., n_a)
    qd, qdd : (..., n)        velocities and accelerations of all tree joints
    multipliers : (..., m)    loop-closure forces λ (N), Γ_tree = B Γ_a + Gᵀ λ
    """

    tau: np.ndarray
    qdd_active: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    multipliers: np.ndarray


def _closed(cc, q, tol) -> np.ndarray:
    """``q`` checked: a configuration of the tree that closes the loops to ``tol`` (m)."""
    _check(cc)
    q = _array("q", q, cc.tree.n, "the tree's joint variables (from close_loops)")
    gap = np.max(np.abs(loop_residual(cc, q)), initial=0.0)
    if gap > tol:
        raise LoopClosureError(f"closed chain '{cc.name}': q does not close the loops (gap {gap:.3g} m > {tol:g}); "
                               "compute q with close_loops")
    return q


def _closed_state(cc, q, qd_active, tol):
    q = _closed(cc, q, tol)
    qda = _array("qd_active", qd_active, cc.n_active, "one velocity per active joint")
    W = velocity_map(cc, q)
    qd = (W @ qda[..., None])[..., 0]
    G = loop_jacobian(cc, q)
    gamma = _loop_bias(cc, q, qd)
    w0 = np.zeros(np.broadcast_shapes(q.shape, qd.shape))
    w0[..., list(cc.passive)] = -np.linalg.solve(G[..., list(cc.passive)], gamma[..., None])[..., 0]
    return q, qd, W, G, w0


def _multipliers(cc, G, tau_tree):
    pas = list(cc.passive)
    return np.linalg.solve(np.swapaxes(G[..., pas], -1, -2), tau_tree[..., pas][..., None])[..., 0]


def closed_chain_inverse_dynamics(cc: ClosedChainRobot, q, qd_active, qdd_active, tol: float = 1e-9) -> ClosedChainMotion:
    """Torques of the active joints for a motion of a closed-loop robot: Γ_a = Wᵀ Γ_tree(q, W q̇_a, W q̈_a + w₀).

    Parameters
    ----------
    cc : ClosedChainRobot
    q : array_like (..., n)     closed configuration (:func:`close_loops`)
    qd_active, qdd_active : array_like (..., n_a)
    tol : float                 largest loop gap accepted in q (m)

    Returns
    -------
    ClosedChainMotion
    """
    q, qd, W, G, w0 = _closed_state(cc, q, qd_active, tol)
    qdda = _array("qdd_active", qdd_active, cc.n_active, "one acceleration per active joint")
    qdd = (W @ qdda[..., None])[..., 0] + w0
    tau_tree = inverse_dynamics(cc.tree, q, qd, qdd)
    tau = (np.swapaxes(W, -1, -2) @ tau_tree[..., None])[..., 0]
    return finite_result("closed_chain_inverse_dynamics",
                         ClosedChainMotion(tau=tau, qdd_active=np.broadcast_to(qdda, tau.shape).copy(), qd=qd, qdd=qdd,
                                           multipliers=_multipliers(cc, G, tau_tree)))


def closed_chain_forward_dynamics(cc: ClosedChainRobot, q, qd_active, tau, tol: float = 1e-9) -> ClosedChainMotion:
    """Accelerations of a closed-loop robot under active torques, by projection on the active coordinates:
    (Wᵀ A W) q̈_a = Γ_a − Wᵀ (H(q, q̇) + A w₀).

    Parameters
    ----------
    cc : ClosedChainRobot
    q : array_like (..., n)      closed configuration
    qd_active, tau : array_like (..., n_a)
    tol : float                  largest loop gap accepted in q (m)

    Returns
    -------
    ClosedChainMotion (``tau`` is the given torque)
    """
    q, qd, W, G, w0 = _closed_state(cc, q, qd_active, tol)
    tau = _array("tau", tau, cc.n_active, "one torque per active joint")
    A = inertia_matrix(cc.tree, q)
    H = bias_torques(cc.tree, q, qd)
    Wt = np.swapaxes(W, -1, -2)
    Ar = Wt @ A @ W
    rhs = tau - (Wt @ (H + (A @ w0[..., None])[..., 0])[..., None])[..., 0]
    qdda = np.linalg.solve(Ar, rhs[..., None])[..., 0]
    qdd = (W @ qdda[..., None])[..., 0] + w0
    tau_tree = (A @ qdd[..., None])[..., 0] + H
    return finite_result("closed_chain_forward_dynamics",
                         ClosedChainMotion(tau=np.broadcast_to(tau, qdda.shape).copy(), qdd_active=qdda, qd=qd, qdd=qdd,
                                           multipliers=_multipliers(cc, G, tau_tree)))


def closed_chain_model(cc: ClosedChainRobot, q, tol: float = 1e-9):
    """Lagrange form in the active coordinates at a closed configuration: M_a = Wᵀ A W (..., n_a, n_a) and the
    gravity torque g_a = Wᵀ Q(q) (..., n_a)."""
    q = _closed(cc, q, tol)
    W = velocity_map(cc, q)
    Wt = np.swapaxes(W, -1, -2)
    M = Wt @ inertia_matrix(cc.tree, q) @ W
    g = (Wt @ gravity_torques(cc.tree, q)[..., None])[..., 0]
    return 0.5 * (M + np.swapaxes(M, -1, -2)), g
