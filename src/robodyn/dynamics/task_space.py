"""Task-space (operational-space) dynamics of a frame or a point, with redundancy (De Luca, "Robot dynamic model
in the task/Cartesian space, with redundancy").

For a task r = f(q) ∈ R^m, Jacobian J (m × n, rank m ≤ n), and A q̈ + n(q, q̇) = τ: Λ = (J A⁻¹ Jᵀ)⁻¹,
J̄ = A⁻¹ Jᵀ Λ, N = I − Jᵀ J̄ᵀ, μ = Λ (J A⁻¹ (n − g) − J̇ q̇), p = Λ J A⁻¹ g; τ = Jᵀ F + N τ₀ gives Λ r̈ + μ + p = F.
The task is rows of a frame's geometric Jacobian or a task map with its own J and J̇ q̇ (:class:`RelativePosition`,
:class:`OrientationError`, or any object with ``jacobian`` and ``jacobian_dot_qd``).  See
docs/task-space-and-motion.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from robodyn import native
from robodyn.arrays import check_array, finite_result, singular_model_error
from robodyn.model.arguments import frame_index, joint_arrays
from robodyn.dynamics import executor
from robodyn.dynamics.api import inertia_matrix, inverse_dynamics
from robodyn.dynamics.lagrange import inertia_matrix_derivative
from robodyn.dynamics.newton_euler import bias_torques, gravity_torques
from robodyn.errors import InputError
from robodyn.kinematics import (ancestors, base_poses, forward_kinematics, frame_arguments, jacobian, jacobian_dot_qd,
                                link_velocities, state_frame)
from robodyn.model.robot import Robot


class SingularConfigurationError(InputError):
    """The task Jacobian loses rank at a configuration: the task inertia matrix does not exist there."""


class _Triple:
    """Unpacks into, and is indexed like, the triple of its ``_fields`` (like robodyn's named tuples)."""

    def _triple(self) -> tuple:
        return tuple(getattr(self, name) for name in self._fields)

    def __iter__(self):
        return iter(self._triple())

    def __len__(self) -> int:
        return 3

    def __getitem__(self, index):
        return self._triple()[index]


@dataclass(frozen=True)
class TaskSpaceDynamics(_Triple):
    """Result of :func:`task_space_dynamics`; unpacks as ``Lambda, mu, p = ...`` and indexes as that triple
    (``res[0]``, ``len(res) == 3``); every part is also an attribute.

    Attributes (batch axes first; m task rows, n joints)
    ----------
    Lambda : (..., m, m)   task inertia matrix Λ = M_r (kg | kg m² ...)
    mu : (..., m)          Coriolis, centrifugal and friction force in the task space
    p : (..., m)           gravity force in the task space
    J : (..., m, n)        task Jacobian (rows of [v; ω] in R_0)
    Jdot_qd : (..., m)     J̇ q̇
    Jbar : (..., n, m)     inertia-weighted pseudo-inverse J̄ = A⁻¹ Jᵀ Λ (J J̄ = I)
    null_projector : (..., n, n)   N = I − Jᵀ J̄ᵀ: N τ₀ produces no task acceleration
    """

    Lambda: np.ndarray
    mu: np.ndarray
    p: np.ndarray
    J: np.ndarray
    Jdot_qd: np.ndarray
    Jbar: np.ndarray
    null_projector: np.ndarray

    #: the parts it unpacks into and is indexed by (``res[0]`` is ``res.Lambda``)
    _fields = ("Lambda", "mu", "p")

    @property
    def M_r(self) -> np.ndarray:
        """De Luca's task inertia matrix M_r = Λ."""
        return self.Lambda

    @property
    def n_r(self) -> np.ndarray:
        """De Luca's n_r = M_r (J M⁻¹ n − J̇ q̇) = μ + p."""
        return self.mu + self.p


@dataclass(frozen=True)
class RelativePosition:
    """Task map r = p_b − p_a ∈ R³: the position of a point of frame ``b`` relative to a point of frame ``a``,
    base axes (m); J = J_b − J_a (linear rows), J̇ q̇ = (J̇ q̇)_b − (J̇ q̇)_a.  E.g. the distance vector between two
    hands of a dual-arm tree, or a tool point relative to a frame of the same arm.

    Attributes
    ----------
    frame_a, frame_b : int or str — frame numbers 1..nf or names.
    point_a, point_b : array_like (3,), optional — points fixed to those frames, coordinates in their own frame.
    """

    frame_a: object
    frame_b: object
    point_a: object = None
    point_b: object = None

    def value(self, robot: Robot, q) -> np.ndarray:
        """p_b − p_a (..., 3)."""
        return _point(robot, q, self.frame_b, self.point_b) - _point(robot, q, self.frame_a, self.point_a)

    def jacobian(self, robot: Robot, q) -> np.ndarray:
        """(..., 3, n)."""
        return (jacobian(robot, q, frame=self.frame_b, point=self.point_b)[..., :3, :]
                - jacobian(robot, q, frame=self.frame_a, point=self.point_a)[..., :3, :])

    def jacobian_dot_qd(self, robot: Robot, q, qd) -> np.ndarray:
        """(..., 3)."""
        return (jacobian_dot_qd(robot, q, qd, frame=self.frame_b, point=self.point_b)[..., :3]
                - jacobian_dot_qd(robot, q, qd, frame=self.frame_a, point=self.point_a)[..., :3])


@dataclass(frozen=True)
class OrientationError:
    """Task map r = ε ∈ R³: the vector part of the unit quaternion (η, ε), η ≥ 0, of the orientation error
    R_e = R_dᵀ R(q) between frame ``frame``'s orientation R (in R_0) and a constant target R_d.  r = 0 at the
    target; it is 2 sin(θ/2) times the error axis for an error angle θ < π.

    With ω the frame's angular velocity in R_0, Ṙ_e = [R_dᵀ ω]× R_e, so (quaternion kinematics)
    ε̇ = L ω_e, η̇ = −½ εᵀ ω_e, L = ½ (η I − [ε]×), ω_e = R_dᵀ ω: J = L R_dᵀ J_ω and
    J̇ q̇ = L R_dᵀ (J̇ q̇)_ω + L̇ ω_e with L̇ = ½ (η̇ I − [ε̇]×).  Near θ = π (η → 0) the map loses rank.

    Attributes
    ----------
    frame : int or str — frame number 1..nf or name.
    target : array_like (3, 3) — R_d, a rotation matrix (base frame).
    """

    frame: object
    target: object

    def __post_init__(self) -> None:
        # a bad target is refused when the task is made, not at its first use; the checked R_d is kept
        object.__setattr__(self, "_Rd", self._target())

    def _target(self) -> np.ndarray:
        try:
            Rd = np.array(self.target, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"OrientationError.target = {self.target!r:.60}; give a 3×3 rotation matrix "
                             "(orthonormal, determinant +1)") from None
        if Rd.shape != (3, 3) or not np.all(np.isfinite(Rd)) or not np.allclose(Rd.T @ Rd, np.eye(3), atol=1e-9) \
                or np.linalg.det(Rd) <= 0:
            raise InputError(f"OrientationError.target has shape {Rd.shape}; give a 3×3 rotation matrix "
                             "(orthonormal, determinant +1)")
        Rd.flags.writeable = False
        return Rd

    def _quaternion(self, robot: Robot, q) -> np.ndarray:
        """[η, ε] (..., 4) of R_e = R_dᵀ R, η ≥ 0."""
        Re = self._Rd.T @ forward_kinematics(robot, q)[..., state_frame(robot, self.frame), :3, :3]
        x = Re.reshape(Re.shape[:-2] + (9,)) @ _SKEW_PART   # [0, R₂₁ − R₁₂, R₀₂ − R₂₀, R₁₀ − R₀₁]
        eta = 0.5 * np.sqrt(np.maximum(1.0 + (Re[..., 0, 0] + Re[..., 1, 1] + Re[..., 2, 2]), 0.0))
        # ε from the skew part (accurate for η away from 0, the range where the task is used)
        x /= (4.0 * np.maximum(eta, 1e-12))[..., None]
        x[..., 0] = eta
        return x

    def value(self, robot: Robot, q) -> np.ndarray:
        """ε (..., 3)."""
        return self._quaternion(robot, q)[..., 1:]

    def jacobian(self, robot: Robot, q) -> np.ndarray:
        """(..., 3, n)."""
        L = _quaternion_rates(self._quaternion(robot, q))[..., 1:, :]
        return L @ (self._Rd.T @ jacobian(robot, q, frame=self.frame)[..., 3:, :])

    def jacobian_dot_qd(self, robot: Robot, q, qd) -> np.ndarray:
        """(..., 3)."""
        return self._jacobian_and_dot_qd(robot, q, qd)[1]

    def _jacobian_and_dot_qd(self, robot: Robot, q, qd):
        """J (..., 3, n) and J̇ q̇ (..., 3), the quaternion and the frame's terms computed once for both."""
        G = _quaternion_rates(self._quaternion(robot, q))
        L = G[..., 1:, :]
        W = self._Rd.T @ jacobian(robot, q, frame=self.frame)[..., 3:, :]   # R_dᵀ J_ω
        w_e = (W @ np.asarray(qd, dtype=float)[..., None])[..., 0]
        Ld = _quaternion_rates((G @ w_e[..., None])[..., 0])[..., 1:, :]    # L̇ of (η̇, ε̇) = G ω_e
        wd_e = (self._Rd.T @ jacobian_dot_qd(robot, q, qd, frame=self.frame)[..., 3:, None])[..., 0]
        return L @ W, (L @ wd_e[..., None])[..., 0] + (Ld @ w_e[..., None])[..., 0]


def _sparse_constant(shape: tuple[int, int], rows: list, cols: list, values) -> np.ndarray:
    """A read-only matrix of ``shape``, ``values`` at (``rows``, ``cols``) and zeros elsewhere."""
    a = np.zeros(shape)
    a[rows, cols] = values
    a.flags.writeable = False
    return a


# R (..., 9) row-major @ _SKEW_PART = [0, R₂₁ − R₁₂, R₀₂ − R₂₀, R₁₀ − R₀₁], exact (one difference and zeros) whatever
# order the product sums in, so that a batch gives its states' bits
_SKEW_PART = _sparse_constant((9, 4), [7, 2, 3, 5, 6, 1], [1, 2, 3, 1, 2, 3], [1, 1, 1, -1, -1, -1])
# [η, ε] (..., 4) @ _RATES = G (..., 12) row-major (4, 3): G = ½ [−εᵀ; η I − [ε]×], (η̇, ε̇) = G ω_e (exact: one
# term per entry); the entries: −½ εᵀ, ½ η I, −½ [ε]×
_RATES = _sparse_constant((4, 12), [1, 2, 3, 0, 0, 0, 3, 2, 3, 1, 2, 1], [0, 1, 2, 3, 7, 11, 4, 5, 6, 8, 9, 10],
                          [-0.5, -0.5, -0.5, 0.5, 0.5, 0.5, 0.5, -0.5, -0.5, 0.5, 0.5, -0.5])


def _quaternion_rates(quaternion: np.ndarray) -> np.ndarray:
    """G (..., 4, 3) of the unit quaternion [η, ε] (..., 4): (η̇, ε̇) = G ω_e (quaternion kinematics); its rows 1..3
    are L = ½ (η I − [ε]×)."""
    return (quaternion @ _RATES).reshape(quaternion.shape[:-1] + (4, 3))


def _point(robot: Robot, q, frame, point) -> np.ndarray:
    """Base-frame position of a point fixed to ``frame`` (coordinates in R_frame; default its origin), (..., 3)."""
    dtype, batch, a = joint_arrays(robot, q=q)
    R0, P0 = base_poses(robot, a["q"], dtype)
    f = frame_index(robot, frame)
    if point is None:
        return P0[..., f, :]
    return P0[..., f, :] + (R0[..., f, :, :] @ np.asarray(point, dtype=float)[..., None])[..., 0]


_ALL_ROWS = np.arange(6)
_ALL_ROWS.flags.writeable = False


def _rows(rows) -> np.ndarray:
    if rows is None:
        return _ALL_ROWS
    if type(rows) is list and 0 < len(rows) <= 6 and all(type(k) is int and 0 <= k <= 5 for k in rows) \
            and len(set(rows)) == len(rows):
        return np.array(rows)  # the common form, checked without NumPy's reductions
    r = np.atleast_1d(np.asarray(rows))
    if r.ndim != 1 or r.size == 0 or r.dtype.kind not in "iu" or np.any((r < 0) | (r > 5)) \
            or np.unique(r).size != r.size:
        raise InputError(f"rows = {rows!r}; give distinct row indices 0..5 of [vx, vy, vz, ωx, ωy, ωz]")
    return r


def task_space_dynamics(robot: Robot, q, qd, frame=None, point=None, rows=None, damping: float = 0.0,
                        rcond: float = 1e-8, task=None) -> TaskSpaceDynamics:
    """Task-space dynamics Λ r̈ + μ + p = F of a frame (or a point of it), De Luca's M_r, n_r.

    Parameters
    ----------
    robot : Robot
    q, qd : array_like (..., n)
        Joint positions (rad | m) and velocities.
    frame : int or str, optional
        Frame j = 1..nf (Khalil–Kleinfinger numbering) or its name; default the end frame (tip of the longest
        movable chain; frame nf on a serial robot).
    point : array_like (3,) or (..., 3), optional
        A point fixed to frame j, coordinates in R_j (m); default the origin O_j.
    rows : sequence of int, optional
        Which rows of the 6-row velocity [v; ω] (R_0 axes) form the task, e.g. ``[0, 1]`` for the planar
        position; default all six. The task dimension m = len(rows) must not exceed n.
    damping : float
        0 (default): Λ = (J A⁻¹ Jᵀ)⁻¹, and a configuration where J A⁻¹ Jᵀ is numerically singular raises
        :class:`SingularConfigurationError`. λ > 0: the damped Λ = (J A⁻¹ Jᵀ + λ² I)⁻¹, finite everywhere but
        no longer exact (the task force F then only approximately produces the commanded r̈).
    rcond : float
        Singularity threshold on the ratio of the smallest to the largest eigenvalue of J A⁻¹ Jᵀ.
    task : task map, optional
        Instead of ``frame``/``point``/``rows``: a task r = f(q) with its own Jacobian and J̇ q̇, e.g.
        :class:`RelativePosition` or :class:`OrientationError` (any object with ``jacobian(robot, q)`` →
        (..., m, n) and ``jacobian_dot_qd(robot, q, qd)`` → (..., m); other shapes raise InputError).  For
        float64 states (m ≤ 6) the algebra below runs on the map's J and J̇ q̇ in robodyn.native's C code of
        the frame task.

    Returns
    -------
    TaskSpaceDynamics
        ``Lambda, mu, p = task_space_dynamics(...)`` or the full result with J̄ and the null-space projector;
        ``J`` and ``Jdot_qd`` are the task map's when ``task`` is given.
    """
    if not (damping >= 0 and np.isfinite(damping)):
        raise InputError(f"damping = {damping!r}; give 0 (exact, error at singularities) or a positive number")
    if isinstance(robot, Robot) and isinstance(rcond, (int, float)):
        # one float64 state: every term and the algebra below in one call of robodyn.native's kernels (on a task
        # map's J and J̇ q̇); None where the kernels decline, and the general path below computes or explains
        state = None
        if task is None:
            state = native.task_space_state(robot, q, qd, state_frame(robot, frame), point, _rows(rows), damping,
                                            rcond)
        elif frame is None and point is None and rows is None and _plain_state(robot, q, qd):
            J, Jdq = _task_terms(robot, task, q, qd, ())
            state = native.task_space_state(robot, q, qd, 0, None, range(J.shape[-2]), damping, rcond, J, Jdq)
        if state is not None:
            return TaskSpaceDynamics(*state)
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd)
    q, qd = a["q"], a["qd"]  # broadcast to batch + (n,)
    compiled = dtype == np.float64 and isinstance(rcond, (int, float))
    if task is not None:
        if frame is not None or point is not None or rows is not None:
            raise InputError("give either task= (a task map) or frame=/point=/rows= (rows of a frame's Jacobian)")
        J, Jdq = _task_terms(robot, task, q, qd, batch)
        r = np.arange(J.shape[-2])
        if compiled and r.size <= robot.n:
            # float64: the algebra below on the map's J and J̇ q̇ in C, the frame task's code (one state, or each
            # state of a batch by the single state's code, threaded); None: the NumPy path computes or explains
            state = (native.task_space_batch(robot, batch, q, qd, 0, None, r, damping, rcond, J, Jdq) if batch else
                     native.task_space_state(robot, q, qd, 0, None, r, damping, rcond, J, Jdq))
            if state is not None:
                return TaskSpaceDynamics(*state)
    else:
        r = _rows(rows)
        if compiled and r.size <= robot.n:
            # a float64 batch: each state by the single state's compiled code, threaded
            pt = None if point is None else check_array("point", point, (3,), batch, dtype)
            state = native.task_space_batch(robot, batch, q, qd, frame_index(robot, frame), pt, r, damping, rcond)
            if state is not None:
                return TaskSpaceDynamics(*state)
        J = jacobian(robot, q, frame=frame, point=point)[..., r, :]
        Jdq = jacobian_dot_qd(robot, q, qd, frame=frame, point=point)[..., r]
    if r.size > robot.n:
        raise InputError(f"the task has m = {r.size} rows but robot '{robot.name}' has n = {robot.n} joints; "
                         f"choose at most {robot.n} rows (rows=[...] or a smaller task map)")
    A, n_all, g = _joint_terms(robot, q, qd)
    AinvJt = np.linalg.solve(A, np.swapaxes(J, -1, -2))          # (..., n, m)
    Phi = J @ AinvJt
    Phi = 0.5 * (Phi + np.swapaxes(Phi, -1, -2))
    m = r.size
    if damping == 0:
        ev = np.linalg.eigvalsh(Phi)
        ratio = ev[..., 0] / np.maximum(ev[..., -1], np.finfo(float).tiny)
        bad = ratio < rcond
        if np.any(bad):
            idx = tuple(int(i) for i in np.argwhere(np.atleast_1d(bad))[0]) if batch else ()
            raise SingularConfigurationError(
                f"robot '{robot.name}': the task Jacobian of "
                + (f"the task map {type(task).__name__}" if task is not None else
                   f"frame {frame if frame is not None else robot.derived.end_frame} (rows {r.tolist()})")
                + f" is singular at q{list(idx) if idx else ''} = "
                f"{np.round(q[idx] if batch else q, 6).tolist()} (eigenvalue ratio of J A⁻¹ Jᵀ {float(np.min(ratio)):.3g} "
                f"< rcond = {rcond:g}); move away from the singularity, remove dependent rows, or pass damping > 0")
    else:
        Phi = Phi + damping**2 * np.eye(m)
    Lam = np.linalg.inv(Phi)
    Lam = 0.5 * (Lam + np.swapaxes(Lam, -1, -2))
    Jbar = AinvJt @ Lam
    JAinv = np.swapaxes(AinvJt, -1, -2)                         # J A⁻¹ (A symmetric)
    mu = (Lam @ ((JAinv @ (n_all - g)[..., None])[..., 0] - Jdq)[..., None])[..., 0]
    p = (Lam @ (JAinv @ g[..., None]))[..., 0]
    N = np.eye(robot.n) - np.swapaxes(J, -1, -2) @ np.swapaxes(Jbar, -1, -2)
    result = TaskSpaceDynamics(
        Lambda=Lam.astype(dtype, copy=False), mu=mu.astype(dtype, copy=False), p=p.astype(dtype, copy=False), J=J,
        Jdot_qd=Jdq, Jbar=Jbar, null_projector=N)
    if math.isfinite(float(Lam.sum() + mu.sum() + p.sum() + Jbar.sum() + N.sum() + J.sum() + Jdq.sum())):
        return result  # NaN and ±inf propagate into the sum: everything is finite (the common case, one test)
    return finite_result("task_space_dynamics", result)


def _plain_state(robot: Robot, q, qd) -> bool:
    """Whether q, q̇ are one finite float64 state, (n,) NumPy arrays: a task map may then see them unchecked."""
    return (type(q) is np.ndarray and type(qd) is np.ndarray and q.dtype == qd.dtype == np.float64
            and q.shape == qd.shape == (robot.n,) and math.isfinite(float(q @ q + qd @ qd)))


def _task_terms(robot: Robot, task, q: np.ndarray, qd: np.ndarray, batch: tuple[int, ...]):
    """A task map's J (batch + (m, n)) and J̇ q̇ (batch + (m,)) at checked q, q̇, their shapes checked."""
    if type(task) is OrientationError:
        J, Jdq = task._jacobian_and_dot_qd(robot, q, qd)
    elif callable(getattr(task, "jacobian", None)) and callable(getattr(task, "jacobian_dot_qd", None)):
        J, Jdq = np.asarray(task.jacobian(robot, q)), np.asarray(task.jacobian_dot_qd(robot, q, qd))
    else:
        raise InputError(f"task = {task!r}; give a task map with jacobian(robot, q) and "
                         "jacobian_dot_qd(robot, q, qd), e.g. RelativePosition or OrientationError")
    m = J.shape[-2] if J.ndim >= 2 else 0
    try:
        if m == 0 or J.shape[-1] != robot.n:
            raise ValueError
        shapes = batch + (m, robot.n), batch + (m,)
        return tuple(x if x.shape == shape else np.broadcast_to(x, shape) for x, shape in zip((J, Jdq), shapes))
    except ValueError:
        raise InputError(f"the task map {type(task).__name__} gives a Jacobian of shape {J.shape} and J̇ q̇ of "
                         f"shape {Jdq.shape} for q of shape {q.shape}; its jacobian must return (..., m, "
                         f"{robot.n}) and its jacobian_dot_qd (..., m), m ≥ 1") from None


def _joint_terms(robot: Robot, q: np.ndarray, qd: np.ndarray):
    """A(q), H(q, q̇) (friction included, [9.95]) and the gravity torques Q(q) of checked arrays: float64 through
    the executor's default paths (robodyn.native's kernels for one state and for large batches; H as Γ(q, q̇, 0),
    whose q̈ terms vanish), other dtypes through the NumPy recursions."""
    H = inverse_dynamics(robot, q, qd, np.zeros_like(qd)) if q.dtype == np.float64 else bias_torques(robot, q, qd)
    return inertia_matrix(robot, q), H, gravity_torques(robot, q)


def _inertia_rate_times(robot: Robot, q: np.ndarray, qd: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Ȧ X (..., n, k) for checked q, q̇ (..., n) and X (..., n, k).  On robodyn.native's kernels (float64) column by
    column as Ȧ x = Σ_l ∂(A x)/∂q_l q̇_l = ∂Γ/∂q(q, 0, x; g = 0) q̇: the rigid-body inverse-dynamics derivatives
    at zero velocity and gravity, where Γ = A(q) x; elsewhere Ȧ of
    :func:`robodyn.dynamics.lagrange.inertia_matrix_derivative` times X."""
    if not executor.takes_derivatives(q.dtype):
        return inertia_matrix_derivative(robot, q, qd) @ X
    x = np.swapaxes(X, -1, -2)                                   # (..., k, n): one state per column
    batch = x.shape[:-1]
    a = {"q": np.broadcast_to(q[..., None, :], x.shape), "qd": np.zeros(x.shape), "qdd": x,
         "gravity": np.broadcast_to(np.zeros(3), batch + (3,))}
    dq = native.run_checked(robot, "inverse_dynamics_derivatives", batch, a, friction=False)[..., 0, :, :]
    return np.swapaxes((dq @ qd[..., None, :, None])[..., 0], -1, -2)


def jacobian_derivative(robot: Robot, q, qd, frame=None, point=None) -> np.ndarray:
    """J̇(q, q̇) of :func:`robodyn.jacobian`, the whole (6 × n) matrix (J̇ q̇ alone is ``rd.jacobian_dot_qd``).

    Column k of J is [z_f × (p − p_f); z_f] (revolute joint on frame f) or [z_f; 0] (prismatic); with
    ż_f = ω_f × z_f (z_f is fixed in frame f, ω_f its angular velocity in R_0), ṗ and ṗ_f the velocities of the point
    and of O_f:  J̇_k = [ż_f × (p − p_f) + z_f × (ṗ − ṗ_f); ż_f]  or  [ż_f; 0].

    Parameters
    ----------
    robot, q, qd, frame, point : as :func:`task_space_dynamics` (q̇ in rad/s | m/s).

    Returns
    -------
    ndarray (..., 6, n)
        J̇ in R_0 (rows [v; ω]); J̇ q̇ equals ``rd.jacobian_dot_qd``.
    """
    if isinstance(robot, Robot):  # one float64 state: robodyn.native's kernel, else None
        out = native.kinematics_state(robot, "jacobian_derivative", q, qd, frame=state_frame(robot, frame),
                                      point=point)
        if out is not None:
            return out
    dtype, batch, a, j, point = frame_arguments(robot, frame, point, q=q, qd=qd)
    if dtype == np.float64:  # a batch: the kernel threaded over the states (None: the NumPy path explains)
        out = native.kinematics_batch(robot, "jacobian_derivative", batch, a["q"], a["qd"], frame=j, point=point)
        if out is not None:
            return out
    q = np.broadcast_to(a["q"], batch + (robot.n,))
    R0, P0 = base_poses(robot, q, dtype)
    w_loc, v_loc = link_velocities(robot, q, a["qd"])
    w0 = (R0 @ w_loc[..., None])[..., 0]                        # ω_f in R_0
    v0 = (R0 @ v_loc[..., None])[..., 0]                        # velocity of O_f in R_0
    p, pd = P0[..., j, :], v0[..., j, :]
    if point is not None:
        s = (R0[..., j, :, :] @ point[..., None])[..., 0]
        p, pd = p + s, pd + np.cross(w0[..., j, :], s)
    Jd = np.zeros(batch + (6, robot.n), dtype)
    chain = set(ancestors(robot, j))
    for k, f in enumerate(robot.joint_frames):
        if f not in chain:
            continue
        z = R0[..., f, :, 2]
        zd = np.cross(w0[..., f, :], z)
        if robot.sigma[f] == 0:
            Jd[..., :3, k] = np.cross(zd, p - P0[..., f, :]) + np.cross(z, pd - v0[..., f, :])
            Jd[..., 3:, k] = zd
        else:
            Jd[..., :3, k] = zd
    return finite_result("jacobian_derivative", Jd)


@dataclass(frozen=True)
class NullSpaceDynamics(_Triple):
    """Result of :func:`null_space_dynamics`; unpacks as ``Lambda_n, mu_n, p_n = ...`` and indexes as that
    triple; every part is also an attribute.

    Attributes (batch axes first; m task rows, n joints, r = n − m)
    ----------
    Lambda_n : (..., r, r)  null-space inertia Λ_n = Z A Zᵀ
    mu_n : (..., r)         velocity (and friction) terms Z (n − g) − Λ_n Ż̄ q̇
    p_n : (..., r)          gravity Z g
    Z : (..., r, n)         null-space basis, J Zᵀ = 0: the self-motions are q̇ = Zᵀ v_n
    Zbar : (..., r, n)      dynamically consistent null-space map Z̄ = Λ_n⁻¹ Z A, v_n = Z̄ q̇
    v_n : (..., r)          null-space velocity Z̄ q̇
    Zbar_dot_qd : (..., r)  Ż̄ q̇, so that v̇_n = Z̄ q̈ + Ż̄ q̇
    task : TaskSpaceDynamics   the decoupled task dynamics Λ r̈ + μ + p = F
    """

    Lambda_n: np.ndarray
    mu_n: np.ndarray
    p_n: np.ndarray
    Z: np.ndarray
    Zbar: np.ndarray
    v_n: np.ndarray
    Zbar_dot_qd: np.ndarray
    task: TaskSpaceDynamics

    #: the parts it unpacks into and is indexed by (``res[0]`` is ``res.Lambda_n``)
    _fields = ("Lambda_n", "mu_n", "p_n")

    def torques(self, F, F_n) -> np.ndarray:
        """τ = Jᵀ F + Z̄ᵀ F_n (..., n) from a task force F (..., m) and a null-space force F_n (..., r).

        F then gives the task acceleration and F_n the null-space acceleration, each through its own equation."""
        J, Zb = self.task.J, self.Zbar
        return ((np.swapaxes(J, -1, -2) @ np.asarray(F, dtype=float)[..., None])[..., 0]
                + (np.swapaxes(Zb, -1, -2) @ np.asarray(F_n, dtype=float)[..., None])[..., 0])


def _independent(robot: Robot, independent, m: int) -> np.ndarray:
    r = robot.n - m
    if independent is None:
        return np.arange(m, robot.n)
    idx = np.atleast_1d(np.asarray(independent))
    if idx.ndim != 1 or idx.size != r or idx.dtype.kind not in "iu" or np.any((idx < 0) | (idx >= robot.n)) \
            or np.unique(idx).size != idx.size:
        raise InputError(f"independent = {independent!r}; give n − m = {r} distinct joint indices 0..{robot.n - 1} "
                         f"whose velocities parameterize the self-motion")
    return idx


def _suggest_independent(J: np.ndarray) -> list[int]:
    """n − m joints whose complement gives the best-conditioned J_d over the batch (greedy column choice: the largest
    σ_min of the chosen columns relative to ‖J‖, the measure of :func:`null_space_dynamics`'s test)."""
    m, n = J.shape[-2:]
    size = np.maximum(np.linalg.svd(J, compute_uv=False)[..., 0], np.finfo(float).tiny)
    dep: list[int] = []
    for _ in range(m):
        best, best_k = -1.0, 0
        for k in sorted(set(range(n)) - set(dep)):
            sv = np.linalg.svd(J[..., :, dep + [k]], compute_uv=False)
            worst = float(np.min(sv[..., -1] / size))
            if worst > best:
                best, best_k = worst, k
        dep.append(best_k)
    return sorted(set(range(n)) - set(dep))


def null_space_dynamics(robot: Robot, q, qd, frame=None, point=None, rows=None, independent=None,
                        rcond: float = 1e-8) -> NullSpaceDynamics:
    """Self-motion dynamics of a redundant robot, decoupled from the task dynamics (De Luca, "Robot dynamic model
    in the task/Cartesian space, with redundancy", step 7).

    Zᵀ (n × r, r = n − m) has rows −J_d⁻¹ J_i on the dependent joints d and the identity on the independent ones;
    with v_n = Z̄ q̇, Z̄ = Λ_n⁻¹ Z A:  Λ_n v̇_n + μ_n + p_n = Z τ,  Λ_n = Z A Zᵀ,  μ_n = Z (n − g) − Λ_n Ż̄ q̇,
    p_n = Z g, decoupled from Λ r̈ + μ + p = J̄ᵀ τ (docs/task-space-and-motion.md).

    Parameters
    ----------
    robot : Robot
    q, qd : array_like (..., n)
        Joint positions (rad | m) and velocities.
    frame, point, rows
        The task, as in :func:`task_space_dynamics` (m = len(rows) < n).
    independent : sequence of int, optional
        The n − m joints (0-based) whose velocities are the self-motion parameters; default the last n − m.
        The other m columns of J must be invertible.
    rcond : float
        Singularity threshold for the task (as in :func:`task_space_dynamics`) and for J_d: σ_min(J_d) ≤ rcond ‖J‖₂
        raises :class:`SingularConfigurationError`.

    Returns
    -------
    NullSpaceDynamics
        ``Lambda_n, mu_n, p_n = null_space_dynamics(...)``; ``.task`` holds Λ, μ, p of the task.
    """
    task = task_space_dynamics(robot, q, qd, frame=frame, point=point, rows=rows, rcond=rcond)
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd)
    n = robot.n
    q, qd = np.broadcast_to(a["q"], batch + (n,)), np.broadcast_to(a["qd"], batch + (n,))
    r_rows = _rows(rows)
    m = r_rows.size
    if m >= n:
        raise InputError(f"the task has m = {m} rows and robot '{robot.name}' n = {n} joints: there is no null "
                         f"space; choose fewer rows with rows=[...]")
    ind = _independent(robot, independent, m)
    dep = np.array([k for k in range(n) if k not in set(ind.tolist())])
    J = task.J
    Jdot = jacobian_derivative(robot, q, qd, frame=frame, point=point)[..., r_rows, :]
    Jd = J[..., :, dep]
    sv = np.linalg.svd(Jd, compute_uv=False)
    # σ_min(J_d) against the whole J: a J_d of rounding noise (cos(π/2) = 6e-17) is singular, not well conditioned
    if not np.all(sv[..., -1] > rcond * np.linalg.svd(J, compute_uv=False)[..., 0]):
        raise SingularConfigurationError(
            f"robot '{robot.name}': the task Jacobian columns of joints {dep.tolist()} are singular at some "
            f"configuration, so the self-motion cannot be parameterized by joints {ind.tolist()}; pass "
            f"independent={_suggest_independent(J)} (best-conditioned choice here) or another set")
    ZT = np.zeros(batch + (n, n - m))
    ZT[..., dep, :] = -np.linalg.solve(Jd, J[..., :, ind])
    ZT[..., ind, :] = np.eye(n - m)
    # d/dt(Zᵀ) on the dependent rows: −J_d⁻¹ J̇ Zᵀ (differentiate J Zᵀ = 0 with the constant identity block)
    ZTd = np.zeros_like(ZT)
    ZTd[..., dep, :] = -np.linalg.solve(Jd, Jdot @ ZT)
    Z, Zd = np.swapaxes(ZT, -1, -2), np.swapaxes(ZTd, -1, -2)
    A, n_all, g = _joint_terms(robot, q, qd)
    ZA = Z @ A
    Lam_n = ZA @ ZT
    Lam_n = 0.5 * (Lam_n + np.swapaxes(Lam_n, -1, -2))
    try:
        Zbar = np.linalg.solve(Lam_n, ZA)
    except np.linalg.LinAlgError:
        raise singular_model_error(robot.name, "the null-space inertia Λ_n = Z A Zᵀ is singular") from None
    v_n = (Zbar @ qd[..., None])[..., 0]
    # Ż̄ q̇ = Λ_n⁻¹ [(Ż A + Z Ȧ) q̇ − Λ̇_n v_n],  Λ̇_n = Ż A Zᵀ + Z Ȧ Zᵀ + Z A Żᵀ
    Ad_X = _inertia_rate_times(robot, q, qd, np.concatenate([qd[..., None], ZT], -1))  # Ȧ [q̇  Zᵀ]
    ZAd_qd = (Zd @ A @ qd[..., None])[..., 0] + (Z @ Ad_X[..., :1])[..., 0]
    Lam_n_dot = Zd @ A @ ZT + Z @ Ad_X[..., 1:] + ZA @ ZTd
    Zbd_qd = np.linalg.solve(Lam_n, (ZAd_qd - (Lam_n_dot @ v_n[..., None])[..., 0])[..., None])[..., 0]
    p_n = (Z @ g[..., None])[..., 0]
    mu_n = (Z @ (n_all - g)[..., None])[..., 0] - (Lam_n @ Zbd_qd[..., None])[..., 0]
    result = NullSpaceDynamics(
        Lambda_n=Lam_n.astype(dtype, copy=False), mu_n=mu_n.astype(dtype, copy=False),
        p_n=p_n.astype(dtype, copy=False), Z=Z, Zbar=Zbar, v_n=v_n, Zbar_dot_qd=Zbd_qd, task=task)
    if math.isfinite(float(Lam_n.sum() + mu_n.sum() + p_n.sum() + Z.sum() + Zbar.sum() + v_n.sum() + Zbd_qd.sum())):
        return result  # NaN and ±inf propagate into the sum: everything is finite (the task was checked on its own)
    return finite_result("null_space_dynamics", result)
