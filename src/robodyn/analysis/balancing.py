"""Static balancing of the gravity term (De Luca, "Analysis of gravity term"; docs/analysis.md): counter-masses
(Q(q) is linear in the first moments and masses, [9.25] and the regressor [9.36]) and zero-free-length springs
(non-negative stiffnesses) that make g(q) ≈ 0, each a linear least-squares problem over sampled configurations;
for a closed chain, the torques of the active joints Wᵀ Q (:func:`robodyn.closed_chain.closed_chain_model`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls

from robodyn.arrays import check_array, finite_array, last_axis_columns
from robodyn.model.arguments import frame_index
from robodyn.analysis.coupling import joint_ranges
from robodyn.dynamics.closed_chain import velocity_map
from robodyn.dynamics.newton_euler import gravity_torques
from robodyn.errors import InputError
from robodyn.kinematics import base_poses, jacobian
from robodyn.model.closed_chain import ClosedChainRobot
from robodyn.model.robot import Robot
from robodyn.parameters.regressor import regressor

_MS, _M, _STRIDE = 6, 9, 11          # columns MX (MY, MZ) and M of frame j in the regressor: 11 (j − 1) + k


@dataclass(frozen=True)
class Spring:
    """A zero-free-length linear spring between ``point_a`` of frame ``frame_a`` and ``point_b`` of frame ``frame_b``
    (frames 1..nf of the (tree) robot, or 0 for the base; points in that frame, m)."""

    frame_a: int
    point_a: tuple
    frame_b: int
    point_b: tuple


@dataclass(frozen=True)
class CounterMasses:
    """Result of :func:`counter_masses`.

    Attributes
    ----------
    frames : tuple of int     frames j (1..nf) that carry a counter-mass
    masses : (k,)             counter-masses m_c (kg)
    positions : (k, 3)        their positions c_j in R_j (m)
    robot : Robot or ClosedChainRobot   the balanced model (counter-masses added to the links' parameters)
    residual : float          max |g| of the balanced model over the samples (N m | N)
    residual_before : float   max |g| of the given model over the same samples
    """

    frames: tuple
    masses: np.ndarray
    positions: np.ndarray
    robot: object
    residual: float
    residual_before: float


@dataclass(frozen=True)
class SpringBalance:
    """Result of :func:`spring_balance`: ``stiffness`` (k,) in N/m (≥ 0), ``residual`` max |g + ∂U_s/∂q| over the
    samples, ``residual_before`` max |g| there (N m | N)."""

    springs: tuple
    stiffness: np.ndarray
    residual: float
    residual_before: float


def _tree(model) -> Robot:
    if isinstance(model, ClosedChainRobot):
        return model.tree
    if isinstance(model, Robot):
        return model
    raise InputError(f"argument 'model' is {type(model).__name__}; give a Robot or a ClosedChainRobot")


def _configurations(tree: Robot, q) -> np.ndarray:
    a = finite_array("q", q)
    if a.ndim == 0 or a.shape[-1] != tree.n:
        raise InputError(f"argument 'q' has shape {a.shape}; give configurations of shape (..., {tree.n})")
    return a.reshape(-1, tree.n)


def _samples(model, q, samples: int, seed: int, prismatic_range) -> np.ndarray:
    tree = _tree(model)
    if q is not None:
        return _configurations(tree, q)
    if isinstance(model, ClosedChainRobot):
        raise InputError(f"closed chain '{model.name}': give q, closed configurations (..., {tree.n}) from "
                         "rd.closed_chain.close_loops, to balance over")
    if int(samples) < 1:
        raise InputError(f"samples = {samples!r}; give a positive integer")
    ranges = joint_ranges(tree, prismatic_range)
    return np.random.default_rng(seed).uniform(ranges[:, 0], ranges[:, 1], (int(samples), tree.n))


def _active(model, q: np.ndarray, torques: np.ndarray) -> np.ndarray:
    """Torques of the actuated joints: Wᵀ τ for a closed chain (…, n_a, ...), τ itself for a robot."""
    if not isinstance(model, ClosedChainRobot):
        return torques
    W = velocity_map(model, q)
    return np.einsum("sia,si...->sa...", W, torques)


def model_gravity(model, q) -> np.ndarray:
    """Gravity torques of a robot (Q(q)) or of a closed chain's active joints (Wᵀ Q), (S, n | n_a)."""
    q = _configurations(_tree(model), q)
    return _active(model, q, gravity_torques(_tree(model), q))


def counter_masses(model, frames, masses, q=None, samples: int = 200, seed: int = 0,
                   prismatic_range=None) -> CounterMasses:
    """Counter-masses that balance gravity, g(q) ≡ 0 (De Luca, static balancing by the distribution of masses).

    Parameters
    ----------
    model : Robot or ClosedChainRobot
    frames : sequence of int or str
        Frames j (1..nf, or names) that carry a counter-mass.
    masses : array_like (k,)
        The counter-masses (kg, > 0), one per frame; their positions are the unknowns.
    q : array_like (S, n), optional
        Configurations to balance over (for a closed chain: closed ones, required); default ``samples`` random
        ones in the joint ranges (revolute [−π, π], prismatic ``qlim`` or ``prismatic_range`` or (−1, 1) m).
    samples, seed : int
        Number of random configurations and generator seed.
    prismatic_range : (lo, hi), optional
        Sampling interval for prismatic joints without limits.

    Returns
    -------
    CounterMasses
        The positions, the balanced model and the remaining max |g| (≈ 1e-13 relative when exactly balanceable;
        the workspace least-squares optimum otherwise — e.g. a prismatic joint along gravity cannot be balanced by
        masses).  Along a joint axis the first moment does not enter g; the minimum-norm solution puts those
        components at zero.
    """
    tree = _tree(model)
    js = [frame_index(tree, f) for f in np.atleast_1d(np.asarray(frames, dtype=object))]
    if len(set(js)) != len(js) or not js:
        raise InputError(f"frames = {frames!r}; give distinct frames 1..{tree.nf} (or names)")
    m = finite_array("masses", masses).reshape(-1)
    if m.size != len(js) or np.any(m <= 0):
        raise InputError(f"masses = {masses!r}; give {len(js)} positive counter-masses (kg), one per frame")
    qs = _samples(model, q, samples, seed, prismatic_range)
    zero = np.zeros_like(qs)
    Y = _active(model, qs, regressor(tree, qs, zero, zero, friction=False))  # (S, rows, 11 nf)
    theta = np.concatenate([tree.params, tree.Ia[:, None]], axis=1).reshape(-1).copy()
    for j, mj in zip(js, m):
        theta[_STRIDE * j + _M] += mj
    Q0 = Y @ theta
    cols = np.array([[_STRIDE * j + _MS + a for a in range(3)] for j in js]).reshape(-1)
    Yc = last_axis_columns(Y, cols).reshape(-1, cols.size)
    delta = np.linalg.lstsq(Yc, -Q0.reshape(-1), rcond=None)[0].reshape(len(js), 3)
    params = tree.params.copy()
    for (j, mj, d) in zip(js, m, delta):
        c = d / mj
        add = mj * (c @ c * np.eye(3) - np.outer(c, c))                  # point-mass inertia about O_j, in R_j
        params[j, :6] += add[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]]
        params[j, _MS:_MS + 3] += d
        params[j, _M] += mj
    balanced_tree = tree.replace(params=params)
    balanced = (balanced_tree if isinstance(model, Robot)
                else ClosedChainRobot(balanced_tree, model.loops, model.active))
    before = float(np.max(np.abs(model_gravity(model, qs))))
    after = float(np.max(np.abs(model_gravity(balanced, qs))))
    return CounterMasses(frames=tuple(j + 1 for j in js), masses=m, positions=delta / m[:, None], robot=balanced,
                         residual=after, residual_before=before)


def _body_point(tree: Robot, qs: np.ndarray, R0, P0, frame, point, name: str):
    """Position r (S, 3) in R_0 and translational Jacobian (S, 3, n) of a point fixed to ``frame`` (0: the base)."""
    p = check_array(name, finite_array(name, point), (3,), (), float)
    if isinstance(frame, (int, np.integer)) and not isinstance(frame, bool) and frame == 0:
        return np.broadcast_to(p, qs.shape[:-1] + (3,)), np.zeros(qs.shape[:-1] + (3, tree.n))
    j = frame_index(tree, frame)
    return P0[..., j, :] + (R0[..., j, :, :] @ p), jacobian(tree, qs, frame=j + 1, point=p)[..., :3, :]


def spring_torques(model, q, springs, stiffness) -> np.ndarray:
    """Static torques ∂U_s/∂q of zero-free-length springs, U_s = Σ ½ k_i ‖r_a − r_b‖² (the convention of
    :func:`robodyn.gravity_torques`: the joint torques that hold the robot against them).

    Parameters
    ----------
    model : Robot or ClosedChainRobot
    q : array_like (S, n) or (n,)
        (Closed) configurations.
    springs : sequence of Spring
    stiffness : array_like (k,)
        Spring constants (N/m).

    Returns
    -------
    ndarray (S, n) or (S, n_a) for a closed chain (active joints, Wᵀ ∂U_s/∂q).
    """
    tree = _tree(model)
    qs = _configurations(tree, q)
    k = finite_array("stiffness", stiffness).reshape(-1)
    cols = _spring_columns(tree, qs, springs)
    if k.size != cols.shape[-1]:
        raise InputError(f"stiffness has {k.size} values for {cols.shape[-1]} springs; give one per spring (N/m)")
    return _active(model, qs, cols @ k)


def _spring_columns(tree: Robot, qs: np.ndarray, springs) -> np.ndarray:
    """(S, n, k): ∂U_i/∂q per unit stiffness, k (J_a − J_b)ᵀ (r_a − r_b) with k = 1."""
    springs = tuple(springs)
    if not springs or not all(isinstance(s, Spring) for s in springs):
        raise InputError("argument 'springs' must be a non-empty sequence of robodyn.analysis.Spring")
    R0, P0 = base_poses(tree, qs, np.float64)
    out = np.zeros(qs.shape + (len(springs),))
    for k, s in enumerate(springs):
        ra, Ja = _body_point(tree, qs, R0, P0, s.frame_a, s.point_a, f"springs[{k}].point_a")
        rb, Jb = _body_point(tree, qs, R0, P0, s.frame_b, s.point_b, f"springs[{k}].point_b")
        out[..., k] = np.einsum("...ai,...a->...i", Ja - Jb, ra - rb)
    return out


def spring_balance(model, springs, q=None, samples: int = 200, seed: int = 0, prismatic_range=None) -> SpringBalance:
    """Stiffnesses (≥ 0) of given zero-free-length springs that balance gravity (De Luca, mechanical compensation
    by an articulated system of springs): g(q) + ∂U_s/∂q ≡ 0, or as nearly as the springs allow over the workspace.

    Parameters
    ----------
    model : Robot or ClosedChainRobot
    springs : sequence of Spring
        Attachment points (frame 0: the base).
    q, samples, seed, prismatic_range
        The configurations, as in :func:`counter_masses`.

    Returns
    -------
    SpringBalance
    """
    tree = _tree(model)
    qs = _samples(model, q, samples, seed, prismatic_range)
    cols = _active(model, qs, _spring_columns(tree, qs, springs))        # (S, rows, k)
    g = model_gravity(model, qs)
    k, _ = nnls(cols.reshape(-1, cols.shape[-1]), -g.reshape(-1))
    residual = float(np.max(np.abs(g + cols @ k)))
    return SpringBalance(springs=tuple(springs), stiffness=k, residual=residual,
                         residual_before=float(np.max(np.abs(g))))
