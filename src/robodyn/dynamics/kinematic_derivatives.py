"""Analytic derivatives of a frame's Jacobian, velocity and acceleration (Pinocchio's
``computeJointKinematicHessians``, ``getFrameVelocityDerivatives`` and ``getFrameAccelerationDerivatives``).

Written in the spatial algebra of Featherstone, with the identities of Carpentier and Mansard ("Analytical
derivatives of rigid body dynamics algorithms", RSS 2018).  Every joint k on the path from the base to frame j has
its axis S_k = [p_f × z_f; z_f] (revolute, joint frame f) or [z_f; 0] (prismatic) as a twist about the origin of
R_0, in R_0 (the velocity [v; ω] of the body point at O_0); the joints off the path get S_k = 0, so that sums over
the path are sums over every joint (a path's joints are numbered in increasing order from the base, as Khalil and
Dombre number frames).  With ×, the motion cross product [ω × u + v × η; ω × η] of [v; ω] and [u; η]:

    V_m = Σ_{k ≤ m} S_k q̇_k                       (the velocity of the link of joint m, [9.84]–[9.85])
    A_m = Σ_{k ≤ m} (S_k q̈_k + (V_k × S_k) q̇_k)    (its acceleration, [9.86]–[9.87] without gravity)

and, moving joint m turning everything beyond it about S_m (∂S_k/∂q_m = S_m × S_k for m ≤ k):

    ∂V_j/∂q_m = S_m × (V_j − V_m)                     ∂V_j/∂q̇_m = S_m
    ∂A_j/∂q_m = S_m × (A_j − A_{m−1}) + (V_j − V_{m−1}) × (S_m × V_m)
    ∂A_j/∂q̇_m = (2 V_m − V_j) × S_m                  ∂A_j/∂q̈_m = S_m

(V_{m−1}, A_{m−1}: the sums without joint m).  The robodyn convention of :func:`robodyn.jacobian` (Pinocchio's
``LOCAL_WORLD_ALIGNED``) takes these to the point p of frame j, X_p [v; ω] = [v + ω × p; ω], whose own motion
∂p/∂q_m = J_{v,m} (the linear column m of the Jacobian at p) adds [ω × J_{v,m}; 0]-type terms; the local axes of
R_j turn each 3-vector x by ^jA_0 = ^0A_jᵀ, whose derivative adds −s_m × x (s_m the angular part of S_m).
Everything is O(n²) per state and batched over leading axes.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from robodyn.arrays import check_array, finite_result
from robodyn.errors import InputError
from robodyn.kinematics import base_poses, joint_twists
from robodyn.model.arguments import frame_index, joint_arrays
from robodyn.model.robot import Robot, check_robot
from robodyn.spatial import motion_cross

#: the axes of the results: R_0 (Pinocchio's LOCAL_WORLD_ALIGNED) or R_j (Pinocchio's LOCAL)
AXES = ("base", "local")
#: the acceleration differentiated: of the point (classical) or the spatial one, classical minus [ω × v; 0]
ACCELERATIONS = ("classical", "spatial")


class FrameVelocityDerivatives(NamedTuple):
    """Result of :func:`frame_velocity_derivatives`: ∂v/∂q and ∂v/∂q̇, each (..., 6, n)."""

    dv_dq: np.ndarray
    dv_dqd: np.ndarray


class FrameAccelerationDerivatives(NamedTuple):
    """Result of :func:`frame_acceleration_derivatives`: ∂v/∂q, ∂a/∂q, ∂a/∂q̇, ∂a/∂q̈, each (..., 6, n)."""

    dv_dq: np.ndarray
    da_dq: np.ndarray
    da_dqd: np.ndarray
    da_dqdd: np.ndarray


def _at(p: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Twists X (..., 6) about O_0 taken to the point p (..., 3) (broadcast): [v + ω × p; ω]."""
    return np.concatenate([X[..., :3] + np.cross(X[..., 3:], p), X[..., 3:]], -1)


def _linear(x: np.ndarray) -> np.ndarray:
    """[x; 0] (..., 6) of a 3-vector x (..., 3)."""
    return np.concatenate([x, np.zeros_like(x)], -1)


class _Path(NamedTuple):
    S: np.ndarray   # (..., n, 6) joint axes about O_0 in R_0, zero off the path to frame j
    R: np.ndarray   # (..., 3, 3) ^0A_j
    p: np.ndarray   # (..., 3) the point in R_0
    J: np.ndarray   # (..., n, 6) columns of the Jacobian at p in R_0 (robodyn.jacobian, transposed)


def _path(robot: Robot, q: np.ndarray, j: int, point) -> _Path:
    batch = q.shape[:-1]
    R0, P0 = base_poses(robot, q, np.float64)
    R, p = R0[..., j, :, :], P0[..., j, :]
    if point is not None:
        s = check_array("point", point, (3,), batch, np.float64)
        p = p + (R @ s[..., None])[..., 0]
    S = joint_twists(robot, R0, P0, j)
    return _Path(S, R, p, _at(p[..., None, :], S))


def _check(robot: Robot, frame, axes: str, **joint):
    check_robot(robot)
    if axes not in AXES:
        raise InputError(f"axes = {axes!r}; choose 'base' (R_0, Pinocchio's LOCAL_WORLD_ALIGNED) or 'local' "
                         "(R_j, Pinocchio's LOCAL)")
    dtype, batch, a = joint_arrays(robot, **joint)
    return dtype, batch, frame_index(robot, frame), {k: np.asarray(v, np.float64) for k, v in a.items()}


def _local(path: _Path, x: np.ndarray, dx_dq: np.ndarray, *others: np.ndarray) -> tuple:
    """(∂x_L/∂q, ∂x_L/∂others...) of x_L = ^jA_0 x per 3-block, x (..., [k,] 6), dx_dq (..., [k,] n, 6):
    ∂x_L/∂q_m = ^jA_0 (∂x/∂q_m − s_m × x), the others turned only."""
    s = path.S[..., 3:]
    extra = x.ndim - path.p.ndim                         # 1 for the Jacobian's column axis k, else 0
    s = s.reshape(s.shape[:-2] + (1,) * extra + s.shape[-2:])
    xm = x[..., None, :]
    corrected = dx_dq - np.concatenate([np.cross(s, xm[..., :3]), np.cross(s, xm[..., 3:])], -1)
    batch = path.p.shape[:-1]

    def turned(y):
        return (y.reshape(batch + (-1, 3)) @ path.R).reshape(y.shape)   # rows yᵀ ^0A_j = (^jA_0 y)ᵀ

    return (turned(corrected),) + tuple(turned(y) for y in others)


def _columns(x: np.ndarray) -> np.ndarray:
    """(..., n, 6) per-joint twists → (..., 6, n)."""
    return np.swapaxes(x, -1, -2)


def kinematic_hessian(robot: Robot, q, frame=None, point=None, axes: str = "base") -> np.ndarray:
    """∂J/∂q of the frame Jacobian J of :func:`robodyn.jacobian` (Pinocchio's kinematic Hessian), (..., 6, n, n).

    Column k of J at the point p is X_p S_k (module docstring); ∂S_k/∂q_m = S_m × S_k for m ≤ k on the path to
    frame j (0 otherwise) and ∂p/∂q_m = J_{v,m}, so ∂J_k/∂q_m = X_p (S_m × S_k) + [s_k × J_{v,m}; 0] (s_k the angular
    part of S_k).  Contracted with q̇ it is J̇ (:func:`robodyn.dynamics.jacobian_derivative`):
    Σ_m ∂J/∂q_m q̇_m = J̇.

    Parameters
    ----------
    robot : Robot
    q : array_like (..., n), rad | m
    frame : int or str, optional, frame j = 1..nf or its name; default the end frame
    point : array_like (3,) or (..., 3), optional, a point fixed to frame j, coordinates in R_j (m); default O_j
    axes : 'base' (default, R_0 as :func:`robodyn.jacobian`) or 'local' (R_j)

    Returns
    -------
    ndarray (..., 6, n, n), [r, k, m] = ∂J_rk/∂q_m (rows [v; ω], m/rad² | 1/rad ...); float32 for float32 q.
    """
    dtype, batch, j, a = _check(robot, frame, axes, q=q)
    path = _path(robot, a["q"], j, point)
    S = path.S
    lower = np.tril(np.ones((robot.n, robot.n), bool))[..., None]        # [k, m]: m ≤ k
    dS = np.where(lower, motion_cross(S[..., None, :, :], S[..., :, None, :]), 0.0)
    dJ = _at(path.p[..., None, None, :], dS) + _linear(np.cross(S[..., :, None, 3:], path.J[..., None, :, :3]))
    if axes == "local":
        dJ, = _local(path, path.J, dJ)
    return finite_result("kinematic_hessian", np.moveaxis(dJ, -1, -3).astype(dtype, copy=False))


def _velocity(path: _Path, qd: np.ndarray):
    """V_m (..., n, 6), V_j (..., 6), ∂V_j/∂q (..., n, 6) about O_0 and the point's v, ∂v/∂q at p (module
    docstring)."""
    Vm = np.cumsum(path.S * qd[..., None], -2)
    Vj = Vm[..., -1, :]
    dV = motion_cross(path.S, Vj[..., None, :] - Vm)
    v = _at(path.p, Vj)
    dv = _at(path.p[..., None, :], dV) + _linear(np.cross(Vj[..., None, 3:], path.J[..., :3]))
    return Vm, Vj, v, dv


def frame_velocity_derivatives(robot: Robot, q, qd, frame=None, point=None,
                               axes: str = "base") -> FrameVelocityDerivatives:
    """∂v/∂q and ∂v/∂q̇ of the velocity v = [v_p; ω] = J q̇ of a point p of frame j (Pinocchio's
    ``getFrameVelocityDerivatives``).

    ∂v/∂q̇ = J (:func:`robodyn.jacobian`); ∂v/∂q_m = X_p (S_m × (V_j − V_m)) + [ω × J_{v,m}; 0] (module docstring),
    which is Σ_k ∂J_k/∂q_m q̇_k.

    Parameters
    ----------
    robot : Robot
    q, qd : array_like (..., n), rad | m and rad/s | m/s
    frame, point, axes : as :func:`kinematic_hessian`; ``axes='base'`` is Pinocchio's ``LOCAL_WORLD_ALIGNED``,
        ``'local'`` its ``LOCAL`` (with p = O_j)

    Returns
    -------
    FrameVelocityDerivatives (dv_dq, dv_dqd) : ndarray (..., 6, n) each, rows [v_p; ω] (m/(s rad), m/(s m) ...,
        1/s ...); unpacks as a pair; float32 when every input is.
    """
    dtype, batch, j, a = _check(robot, frame, axes, q=q, qd=qd)
    path = _path(robot, a["q"], j, point)
    _, _, v, dv = _velocity(path, a["qd"])
    dvd = path.J
    if axes == "local":
        dv, dvd = _local(path, v, dv, dvd)
    out = FrameVelocityDerivatives(_columns(dv), _columns(dvd))
    return finite_result("frame_velocity_derivatives", type(out)(*(x.astype(dtype, copy=False) for x in out)))


def frame_acceleration_derivatives(robot: Robot, q, qd, qdd, frame=None, point=None, axes: str = "base",
                                   kind: str = "classical") -> FrameAccelerationDerivatives:
    """∂v/∂q and ∂a/∂q, ∂a/∂q̇, ∂a/∂q̈ of the acceleration a of a point p of frame j (Pinocchio's
    ``getFrameAccelerationDerivatives``; gravity not included).

    The classical acceleration a = [p̈; ω̇] = J q̈ + J̇ q̇ (:func:`robodyn.jacobian_dot_qd` at q̈ = 0) or the
    spatial one, a_s = X_p A_j = a − [ω × v_p; 0] (Pinocchio's ``getFrameAcceleration``).  From the derivatives of
    A_j about O_0 (module docstring): ∂a_s/∂q_m = X_p ∂A_j/∂q_m + [ω̇ × J_{v,m}; 0], ∂a_s/∂q̇ = X_p ∂A_j/∂q̇,
    ∂a/∂q̈ = J; the classical one adds the derivatives of ω × v_p.

    Parameters
    ----------
    robot : Robot
    q, qd, qdd : array_like (..., n), rad | m, rad/s | m/s, rad/s² | m/s²
    frame, point, axes : as :func:`kinematic_hessian`
    kind : 'classical' (default) or 'spatial'

    Returns
    -------
    FrameAccelerationDerivatives (dv_dq, da_dq, da_dqd, da_dqdd) : ndarray (..., 6, n) each, rows [v_p; ω] and
        [a; ω̇]; dv_dq as :func:`frame_velocity_derivatives`; unpacks as a quadruple; float32 when every input is.
    """
    if kind not in ACCELERATIONS:
        raise InputError(f"kind = {kind!r}; choose 'classical' (the point's acceleration) or 'spatial'")
    dtype, batch, j, a = _check(robot, frame, axes, q=q, qd=qd, qdd=qdd)
    path = _path(robot, a["q"], j, point)
    S, qd, qdd = path.S, a["qd"][..., None], a["qdd"][..., None]
    Vm, Vj, v, dv = _velocity(path, a["qd"])
    term = S * qdd + motion_cross(Vm, S) * qd
    Am = np.cumsum(term, -2)
    Aj = Am[..., -1, :]
    Vp, Ap = Vm - S * qd, Am - term                                  # the sums without joint m
    dA = motion_cross(S, Aj[..., None, :] - Ap) + motion_cross(Vj[..., None, :] - Vp, motion_cross(S, Vm))
    dAd = motion_cross(2 * Vm - Vj[..., None, :], S)
    acc = _at(path.p, Aj)
    da = _at(path.p[..., None, :], dA) + _linear(np.cross(Aj[..., None, 3:], path.J[..., :3]))
    dad = _at(path.p[..., None, :], dAd)
    if kind == "classical":
        w, vp = v[..., None, 3:], v[..., None, :3]
        acc = acc + _linear(np.cross(v[..., 3:], v[..., :3]))
        da = da + _linear(np.cross(dv[..., 3:], vp) + np.cross(w, dv[..., :3]))
        dad = dad + _linear(np.cross(path.J[..., 3:], vp) + np.cross(w, path.J[..., :3]))
    dadd = path.J
    if axes == "local":
        dv, = _local(path, v, dv)
        da, dad, dadd = _local(path, acc, da, dad, dadd)
    out = FrameAccelerationDerivatives(*(_columns(x) for x in (dv, da, dad, dadd)))
    return finite_result("frame_acceleration_derivatives",
                         type(out)(*(x.astype(dtype, copy=False) for x in out)))
