"""Kinematics in Khalil–Kleinfinger notation, batched over leading axes.

Every function takes joint arrays of shape (..., n) and loops over frames only; frames are numbered j = 1..nf
as in Khalil & Dombre, the frame axis of per-frame results right after the batch axes.  Float64 inputs of
:func:`forward_kinematics`, :func:`jacobian`, :func:`jacobian_dot_qd`, :func:`link_velocities` and
:func:`link_accelerations` run on the compiled kernels (:mod:`robodyn.native`), which follow the NumPy recursions
below to rounding; other dtypes, or ``ROBODYN_NATIVE=0``, run the NumPy recursions.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from robodyn import native
from robodyn.arrays import check_array, finite_result
from robodyn.model.arguments import frame_index, joint_arrays
from robodyn.model.robot import Robot
from robodyn.model.workspace import WORKSPACE
from robodyn.spatial import (
    UNIT_VALUES,
    ZERO,
    ScalarBackend,
    backend_for,
    homogeneous,
    label,
    c_add,
    c_mul,
    c_sub,
    cross,
    mat_mv,
    mv,
    u_matrix,
    vadd,
    vcross,
    vzx,
    vzx_t,
    vrz,
    vrz_t,
    vscale,
)

#: what ``rd.kinematics`` offers users (the rest of the module serves robodyn's own recursions)
__all__ = ("forward_kinematics", "jacobian", "jacobian_dot_qd", "link_velocities", "link_accelerations",
           "LinkVelocities", "LinkAccelerations", "forward_frames", "FrameState", "frame_velocities",
           "local_transforms", "twist_to_child", "wrench_to_parent", "ancestors")


def __dir__() -> list[str]:
    """``dir(rd.kinematics)`` lists what users get; the helpers stay importable for robodyn's own modules."""
    return sorted(__all__)


def local_transforms(robot: Robot, q: np.ndarray, dtype=np.float64) -> list[tuple[np.ndarray, np.ndarray]]:
    """^{a(j)}A_j and ^{a(j)}P_j of every frame.

    ^{a(j)}A_j = Rot(z, γ_j) Rot(x, α_j) Rot(z, θ_j)  and
    ^{a(j)}P_j = Rot(z, γ_j) [d_j, −sin α_j r_j, b_j + cos α_j r_j]ᵀ  (Khalil & Dombre ch. 3).

    Returns a list over frames of ``(A, P)`` with A of shape (..., 3, 3) and P of shape (..., 3)
    (the constant ones without batch axes, read-only).
    """
    out = []
    k = 0
    for i, (C, p0, A) in enumerate(robot.derived.transforms_as(dtype)):
        r = robot.r[i]
        if robot.sigma[i] == 0:
            A = _c_rot_z(C, np.asarray(robot.theta[i] + q[..., k], dtype=dtype))
        elif robot.sigma[i] == 1:
            r = r + q[..., k]
        k += robot.sigma[i] != 2
        P = p0 + np.asarray(r, dtype=dtype)[..., None] * C[:, 2]
        out.append((A, P))
    return out


def _c_rot_z(C: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """C Rot(z, θ) (..., 3, 3) for a constant C (3, 3): columns C_x cos θ + C_y sin θ, C_y cos θ − C_x sin θ, C_z."""
    c, s = np.cos(theta)[..., None], np.sin(theta)[..., None]
    A = np.empty(theta.shape + (3, 3), C.dtype)
    A[..., :, 0] = C[:, 0] * c + C[:, 1] * s
    A[..., :, 1] = C[:, 1] * c - C[:, 0] * s
    A[..., :, 2] = C[:, 2]
    return A


def forward_kinematics(robot: Robot, q) -> np.ndarray:
    """Homogeneous transforms ^0T_j of every frame j = 1..nf in the base frame.

    Parameters
    ----------
    q : array_like (..., n)

    Returns
    -------
    ndarray (..., nf, 4, 4)
    """
    if isinstance(robot, Robot):  # one float64 state: the kernels' entry bound to the robot
        out = _one_pose_state(robot, q)
        if out is not None:
            return out
    dtype, batch, a = joint_arrays(robot, q=q)
    out = _compiled(robot, "frame_poses", dtype, batch, a["q"])
    if out is not None:
        return out
    R0, P0 = base_poses(robot, a["q"], dtype)
    return finite_result("forward_kinematics", homogeneous(R0, P0))


def state_frame(robot: Robot, frame) -> int:
    """:func:`robodyn.model.arguments.frame_index` of ``frame`` with the end frame (``frame=None``) and frame numbers
    answered without its checks: the single-state paths call it at every call."""
    if frame is None:
        end = WORKSPACE.get(robot, "end_frame_index")
        return end if end is not None else WORKSPACE.value(robot, "end_frame_index", lambda: frame_index(robot, None))
    if type(frame) is int and 1 <= frame <= robot.nf:
        return frame - 1
    return frame_index(robot, frame)


def frame_arguments(robot: Robot, frame, point, **joint):
    """The checked arguments of a function of a frame (or a point of it): ``(dtype, batch, arrays, j, point)``
    with ``arrays`` of :func:`~robodyn.model.arguments.joint_arrays`, j the 0-based frame and ``point`` (..., 3)
    or None."""
    dtype, batch, a = joint_arrays(robot, **joint)
    j = frame_index(robot, frame)
    if point is not None:
        point = check_array("point", point, (3,), batch, dtype)
    return dtype, batch, a, j, point


def _parts(out: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Parts k and k + 1 of the kernels' link kinematics (..., 4, nf, 3): (ω, V) for k = 0, (ω̇, V̇) for k = 2."""
    if out.ndim == 3:  # one state: plain indexing, a fraction of the cost of an Ellipsis index
        return out[k], out[k + 1]
    return out[..., k, :, :], out[..., k + 1, :, :]


def _compiled(robot: Robot, kind: str, dtype, batch: tuple[int, ...], q, qd=None, qdd=None, frame: int = 0,
              point=None):
    """``kind`` of :func:`robodyn.native.kinematics_batch` on checked float64 arrays, or None (another dtype, e.g.
    the object arrays of symbolic callers, or the kernels decline: the NumPy path then runs, with its messages)."""
    if dtype != np.float64 or any(x is not None and x.dtype != np.float64 for x in (q, qd, qdd)):
        return None
    return native.kinematics_batch(robot, kind, batch, q, qd, qdd, frame, point)


def _one_pose_state(robot: Robot, q):
    """^0T_j (nf, 4, 4) of one float64 state by the kernels' single-state entry bound to the robot, else None."""
    run = WORKSPACE.get(robot, _POSES)
    if run is None:
        run = native.bind_kinematics(robot, "frame_poses")
    return run(q) if run else None


def base_poses(robot: Robot, q: np.ndarray, dtype) -> tuple[np.ndarray, np.ndarray]:
    """^0A_j (..., nf, 3, 3) and ^0P_j (..., nf, 3) from checked joint values."""
    T = _one_pose_state(robot, q) if q.ndim == 1 and dtype == np.float64 else None
    if T is None:  # a batch on the kernels (the same numbers a state), or None: the NumPy recursion below
        T = _compiled(robot, "frame_poses", dtype, q.shape[:-1], q)
    if T is not None:
        return T[..., :3, :3], T[..., :3, 3]
    batch = q.shape[:-1]
    R0 = np.empty(batch + (robot.nf, 3, 3), dtype)
    P0 = np.empty(batch + (robot.nf, 3), dtype)
    for i, (A, P) in enumerate(local_transforms(robot, q, dtype)):
        a = robot.derived.parent[i]
        if a < 0:
            R0[..., i, :, :], P0[..., i, :] = A, P
        else:
            R0[..., i, :, :] = R0[..., a, :, :] @ A
            P0[..., i, :] = P0[..., a, :] + mv(R0[..., a, :, :], P)
    return R0, P0


def ancestors(robot: Robot, i: int) -> list[int]:
    """0-based indices of frame i and all frames between it and the base."""
    chain = []
    while i >= 0:
        chain.append(i)
        i = robot.derived.parent[i]
    return chain


def joint_twists(robot: Robot, R0: np.ndarray, P0: np.ndarray, frame: int | None = None) -> np.ndarray:
    """The joint axes as twists about O_0 in R_0, (..., n, 6): [p_f × z_f; z_f] (revolute) or [z_f; 0] (prismatic)
    of joint frame f, from the poses ^0A_j, ^0P_j of :func:`base_poses`; with ``frame`` (0-based), zero for the
    joints off the path from the base to it."""
    chain = None if frame is None else set(ancestors(robot, frame))
    S = np.zeros(R0.shape[:-3] + (robot.n, 6), R0.dtype)
    for k, f in enumerate(robot.joint_frames):
        if chain is None or f in chain:
            z = R0[..., f, :, 2]
            if robot.sigma[f] == 0:
                S[..., k, :3], S[..., k, 3:] = cross(P0[..., f, :], z), z
            else:
                S[..., k, :3] = z
    return S


class LinkVelocities(NamedTuple):
    """Result of :func:`link_velocities`: ^jω_j and ^jV_j, each (..., nf, 3)."""

    omega: np.ndarray
    V: np.ndarray


class LinkAccelerations(NamedTuple):
    """Result of :func:`link_accelerations`: ^jω̇_j and ^jV̇_j, each (..., nf, 3)."""

    omega_dot: np.ndarray
    V_dot: np.ndarray


#: workspace keys of the kernels' single-state entries bound to a robot (robodyn.native.bind_kinematics), looked
#: up inline by each function: a helper's call would cost a tenth of a one-state call
_POSES = native.kinematics_key("frame_poses")
_VELOCITIES = native.kinematics_key("link_kinematics", 0)
_ACCELERATIONS = native.kinematics_key("link_kinematics", 2)
_JACOBIAN = native.kinematics_key("frame_jacobian")
_JDQ = native.kinematics_key("jacobian_dot_qd")


def link_velocities(robot: Robot, q, qd) -> LinkVelocities:
    """Angular and linear velocities ^jω_j, ^jV_j of every frame, in R_j ([9.17]–[9.18], [9.84]–[9.85]).

    ^jω_j = ^jA_{a} ^aω_a + σ̄_j q̇_j ^ja_j,   ^jV_j = ^jA_a (^aV_a + ^aω_a × ^aP_j) + σ_j q̇_j ^ja_j:
    :func:`frame_velocities` and :func:`twist_to_child`, over blocks of states.

    Parameters
    ----------
    robot : Robot
    q, qd : array_like (..., n) — joint positions (rad | m) and velocities (rad/s | m/s).

    Returns
    -------
    LinkVelocities (omega, V) : ndarray (..., nf, 3) each — angular velocity of link j (rad/s) and velocity of
        the origin O_j (m/s); unpacks as a pair.
    """
    if isinstance(robot, Robot):  # one float64 state: the kernels' entry bound to the robot, else None
        run = WORKSPACE.get(robot, _VELOCITIES)
        if run is None:
            run = native.bind_kinematics(robot, "link_kinematics", 0, LinkVelocities)
        out = run(q, qd) if run else None
        if out is not None:
            return out
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd)
    out = _compiled(robot, "link_kinematics", dtype, batch, a["q"], a["qd"], np.zeros(robot.n))
    if out is not None:
        return LinkVelocities(*_parts(out, 0))
    cols = flat_columns(a["q"], a["qd"])
    w = np.empty((cols[0].shape[1], robot.nf, 3), dtype)
    V = np.empty_like(w)
    for sl, (q_b, qd_b) in state_blocks(*cols):
        twist = [None] * robot.nf  # (V_j, ω_j) of every frame of the block
        for i, k, rot, _, w_j in frame_velocities(robot, q_b, qd_b):  # [9.84]–[9.85]
            p = robot.derived.parent[i]
            v_j = twist_to_child(rot, twist[p])[0] if p >= 0 else ZERO  # [9.18]
            if robot.sigma[i] == 1:
                v_j = (v_j[0], v_j[1], c_add(v_j[2], qd_b[k]))
            twist[i] = (v_j, w_j)
            for c in range(3):
                w[sl, i, c], V[sl, i, c] = w_j[c], v_j[c]
    shape = batch + (robot.nf, 3)
    return finite_result("link_velocities", LinkVelocities(w.reshape(shape), V.reshape(shape)))


def forward_recursion(robot: Robot, q, qd, qdd, gravity):
    """Forward recursion of the Newton–Euler algorithm, [9.84]–[9.87] and [9.90] ([9.80]: V̇_0 = −g).

    Parameters
    ----------
    q, qd, qdd : ndarray (..., n), already checked, one dtype.
    gravity : ndarray (..., 3), g in the base frame (zeros for pure kinematics).

    Returns
    -------
    AP : list over frames of (^{a}A_j, ^{a}P_j)
    w, wd, Vd : lists over frames of (..., 3): ^jω_j, ^jω̇_j, ^jV̇_j  (V̇ is the acceleration of O_j,
        including −g, expressed in R_j).
    """
    dtype = q.dtype
    batch = q.shape[:-1]
    AP = local_transforms(robot, q, dtype)
    cols = flat_columns(q, qd, qdd)
    _, w, wd, Vd = forward_components(robot, *cols, gravity_components(gravity, batch, dtype))
    shape = batch + (3,)

    def full(v):
        out = np.empty((cols[0].shape[1], 3), dtype)
        for c in range(3):
            out[:, c] = v[c]
        return out.reshape(shape)

    return AP, [full(v) for v in w], [full(v) for v in wd], [full(v) for v in Vd]


def flat_columns(*arrays: np.ndarray) -> list[np.ndarray]:
    """(..., n) arrays → contiguous (n, B) arrays, B the flattened batch size (row k = joint variable k)."""
    return [np.ascontiguousarray(np.reshape(a, (-1, a.shape[-1])).T) for a in arrays]


def gravity_components(gravity: np.ndarray, batch: tuple[int, ...], dtype) -> tuple:
    """g as a component tuple: Python scalars when it is the same for every sample, else (B,) arrays.

    Python scalars (float, or complex for complex-step callers) keep the working dtype of the joint arrays.
    """
    g = np.asarray(gravity)
    if g.ndim == 1 or not any(g.strides[:-1]):
        g0 = g.reshape(-1, 3)[0] if g.size else np.zeros(3)
        return tuple(g0.tolist())
    g = np.broadcast_to(g, batch + (3,)).reshape(-1, 3).astype(dtype, copy=False)
    return tuple(np.ascontiguousarray(g[:, c]) for c in range(3))


def frame_constants(robot: Robot) -> tuple:
    """Per frame (C, p0, z): see :attr:`robodyn.model.derived.RobotData.frames` (computed when the robot is built)."""
    return robot.derived.frames


def frame_rotations(robot: Robot, q, backend: ScalarBackend | None = None) -> list[tuple]:
    """^{a}A_j = C Rot(z, θ_j + q_j) and ^{a}P_j of every frame, on component tuples.

    Parameters
    ----------
    q : n rows (one per joint variable), each a (B,) array or a scalar (see :func:`flat_columns`).
    backend : ScalarBackend, optional
        Where cos and sin come from; default: by the type of each q_j (:func:`~robodyn.spatial.backend_for`).

    Returns
    -------
    list over frames of (C, c, s, P): C = Rot(z, γ_j)Rot(x, α_j) as snapped floats, c, s the cosine and sine
    of the joint angle (floats for a prismatic or fixed frame) and ^{a}P_j as a component tuple.
    """
    rot = []
    k = 0
    for i, ((C, p0, z), (ct, st)) in enumerate(zip(frame_constants(robot), robot.derived.theta_trig)):
        theta, r = robot.theta.item(i), robot.r.item(i)  # item: a float, or the constant of a customized model
        sigma = robot.sigma[i]
        if sigma == 0 and ct in UNIT_VALUES and st in UNIT_VALUES:
            # θ_j = k π/2 (0 included): cos and sin of q_j + θ_j are ± those of q_j, exchanged for odd k — no
            # addition q_j + θ_j (Khalil & Dombre's customized model, §9.6.2)
            be = backend or backend_for(q[k])
            cq, sq = be.cos(q[k]), be.sin(q[k])
            c, s = c_sub(c_mul(ct, cq), c_mul(st, sq)), c_add(c_mul(st, cq), c_mul(ct, sq))
        elif sigma == 0:
            th = q[k] + theta
            be = backend or backend_for(th)
            c, s = be.cos(th), be.sin(th)
        else:
            c, s = ct, st
            if sigma == 1:
                r = q[k] + r if r != 0.0 else q[k]
        k += sigma != 2
        rot.append((C, c, s, vadd(p0, vscale(r, z))))
    return rot


def to_child(rot, v):
    """^jA_{a(j)} v for ``rot`` = (C, c, s, P) of :func:`frame_rotations`: Cᵀ (constant, :func:`~robodyn.spatial.vzx_t`),
    then Rot(z, θ + q)ᵀ."""
    C, c, s, _ = rot
    return vrz_t(c, s, vzx_t(C, v))


def to_parent(rot, v):
    """^{a(j)}A_j v for ``rot`` = (C, c, s, P) of :func:`frame_rotations` (C by :func:`~robodyn.spatial.vzx`)."""
    C, c, s, _ = rot
    return vzx(C, vrz(c, s, v))


def twist_to_child(rot, V):
    """The twist V = (v, ω) of R_{a(j)} at O_{a(j)} as seen in R_j at O_j: (^jA_a (v + ω × ^aP_j), ^jA_a ω), the
    velocity transform [9.17]–[9.18] (and of accelerations without their velocity products, [9.121]); ``rot``
    of :func:`frame_rotations`.  The one statement of the twist transform of the component recursions."""
    v, w = V
    return to_child(rot, vadd(v, vcross(w, rot[3]))), to_child(rot, w)


def wrench_to_parent(rot, F):
    """The wrench F = (f, m) of R_j about O_j as seen in R_{a(j)} about O_{a(j)}: (^aA_j f, ^aA_j m + ^aP_j ×
    ^aA_j f), Khalil & Dombre [9.92]–[9.93]; ``rot`` of :func:`frame_rotations`.  The one statement of the
    wrench transform of the component recursions (Newton–Euler, composite links, articulated bodies)."""
    f = to_parent(rot, F[0])
    return f, vadd(to_parent(rot, F[1]), vcross(rot[3], f))


class FrameState(NamedTuple):
    """One frame of :func:`forward_frames` (component tuples, see :mod:`robodyn.spatial`)."""

    i: int  #: 0-based frame index (frame j = i + 1)
    rot: tuple  #: (C, c, s, P) of :func:`frame_rotations`
    w: tuple  #: ^jω_j
    wd: tuple  #: ^jω̇_j
    Vd: tuple  #: ^jV̇_j (−g included)
    U: tuple  #: ^jU_j [9.90], three rows
    dv: list  #: the products ω_k ω_l of ^jω_j, symmetric 3x3


def frame_velocities(robot: Robot, q, qd, backend: ScalarBackend | None = None):
    """The velocity recursion [9.84]–[9.85] (angular part of [9.17]), frame by frame: the one forward velocity
    recursion of the component recursions (:func:`forward_frames`, the articulated bodies' first forward
    recursion, :func:`link_velocities`).

    ^jω_{a} = ^jA_a ^aω_a    [9.84],       ^jω_j = ^jω_{a} + σ̄_j q̇_j ^ja_j    [9.85]

    Parameters
    ----------
    q, qd : n rows (one per joint variable) or n scalars, as in :func:`forward_frames`.
    backend : ScalarBackend, optional

    Yields
    ------
    (i, k, rot, ^jω_{a(j)}, ^jω_j) of every frame in frame order: k the index of its joint variable (None for a
    fixed frame), rot its (C, c, s, P) of :func:`frame_rotations`.
    """
    parent = robot.derived.parent
    left = [len(ch) for ch in robot.derived.children]  # children still to come
    kept = [None] * robot.nf  # ω of a frame until its last child
    k = 0
    for i, rot in enumerate(frame_rotations(robot, q, backend)):
        p = parent[i]
        if p >= 0:
            wp = kept[p]
            left[p] -= 1
            if not left[p]:
                kept[p] = None
        else:
            wp = ZERO
        w_prev = label("WI", i + 1, to_child(rot, wp))  # ^jω_{a(j)}  [9.84]
        w_j, joint = w_prev, None
        if robot.sigma[i] != 2:
            joint, k = k, k + 1
            if robot.sigma[i] == 0:
                w_j = (w_prev[0], w_prev[1], c_add(w_prev[2], qd[joint]))  # [9.85]
        label("W", i + 1, w_j)
        if left[i]:
            kept[i] = w_j
        yield i, joint, rot, w_prev, w_j


def forward_frames(robot: Robot, q, qd, qdd, g, backend: ScalarBackend | None = None):
    """The forward recursion [9.84]–[9.90] in Khalil & Dombre's customized form, frame by frame.

    ^jω_{a} = ^jA_a ^aω_a                                              [9.84]
    ^jω_j = ^jω_{a} + σ̄_j q̇_j ^ja_j                                      [9.85]
    ^jω̇_j = ^jA_a ^aω̇_a + σ̄_j (q̈_j ^ja_j + ^jω_{a} × q̇_j ^ja_j)             [9.86]
    ^jV̇_j = ^jA_a (^aV̇_a + ^aU_a ^aP_j) + σ_j (q̈_j ^ja_j + 2 ^jω_{a} × q̇_j ^ja_j)   [9.87]
    ^jU_j = ^jω̂̇_j + ^jω̂_j ^jω̂_j                                        [9.90]

    with V̇_0 = −g ([9.80]).  ^aU_a ^aP_j costs 9 products where ω̇ × P + ω × (ω × P) costs 18, and U_j is
    needed anyway by [9.88]–[9.89] (:func:`robodyn.spatial.u_matrix`).  ^jA_a = Rot(z, θ_j + q_j)ᵀ Cᵀ with C
    = Rot(z, γ_j) Rot(x, α_j) a constant whose products are folded when the recursion is traced.

    A generator: a frame's state is kept only until its last child has used it (a small working set).

    Parameters
    ----------
    q, qd, qdd : ndarray (n, B), one row per joint variable (see :func:`flat_columns`); or n scalars.
    g : 3-tuple of floats or (B,) arrays, gravity in R_0.
    backend : ScalarBackend, optional
        See :func:`frame_rotations`.

    Yields
    ------
    FrameState (i, rot, w, wd, Vd, U, dv) of every frame, in frame order (antecedents first).
    """
    parent = robot.derived.parent
    left = [len(ch) for ch in robot.derived.children]  # children still to come
    kept = [None] * robot.nf  # (ω̇, V̇, U) of a frame until its last child
    for i, k, rot, w_prev, w_j in frame_velocities(robot, q, qd, backend):
        P = rot[3]
        sigma = robot.sigma[i]
        p = parent[i]
        j = i + 1  # the frame's number, in the names of a customized model's listing (WI12, VP36, ...)
        if p >= 0:
            wdp, Vdp, Up = kept[p]
            vsp = label("VSP", j, vadd(Vdp, mat_mv(Up, P)))  # ^aV̇_a + ^aU_a ^aP_j  [9.87]
            left[p] -= 1
            if not left[p]:
                kept[p] = None
        else:
            wdp, vsp = ZERO, (-g[0], -g[1], -g[2])  # [9.80]: V̇_0 = −g
        wd_j = to_child(rot, wdp)
        Vd_j = to_child(rot, vsp)
        if sigma == 0:
            qdk, qddk = qd[k], qdd[k]
            # ω_{a} × q̇ z = (ω_y q̇, −ω_x q̇, 0)  [9.86]
            wd_j = (c_add(wd_j[0], c_mul(w_prev[1], qdk)), c_sub(wd_j[1], c_mul(w_prev[0], qdk)),
                    c_add(wd_j[2], qddk))
        elif sigma == 1:
            qdk, qddk = qd[k], qdd[k]
            # 2 ω_{a} × q̇ z  [9.87]
            Vd_j = (c_add(Vd_j[0], c_mul(2.0, c_mul(w_prev[1], qdk))),
                    c_sub(Vd_j[1], c_mul(2.0, c_mul(w_prev[0], qdk))), c_add(Vd_j[2], qddk))
        label("WP", j, wd_j), label("VP", j, Vd_j)
        U_j, dv_j = u_matrix(w_j, wd_j)
        label("DV", j, dv_j), label("U", j, U_j)
        if left[i]:
            kept[i] = (wd_j, Vd_j, U_j)
        yield FrameState(i, rot, w_j, wd_j, Vd_j, U_j, dv_j)


def forward_components(robot: Robot, q, qd, qdd, g, backend: ScalarBackend | None = None):
    """The forward recursion [9.84]–[9.90] on component tuples: :func:`forward_frames` without U and DV.

    Parameters
    ----------
    q, qd, qdd : ndarray (n, B), one row per joint variable (see :func:`flat_columns`).
    g : 3-tuple of floats or (B,) arrays, gravity in R_0.
    backend : ScalarBackend, optional
        See :func:`frame_rotations`.

    Returns
    -------
    rot : list over frames of (C, c, s, P) of :func:`frame_rotations`.
    w, wd, Vd : lists over frames of component tuples ^jω_j, ^jω̇_j, ^jV̇_j (V̇_j includes −g).
    """
    frames = [(f.rot, f.w, f.wd, f.Vd) for f in forward_frames(robot, q, qd, qdd, g, backend)]
    return tuple(list(x) for x in zip(*frames))


#: States per block of the component-wise recursions: their temporaries stay in cache (about 1.6x faster on
#: 10^5 states than one pass); each block is fully vectorised, the loop is over blocks, not samples.
BLOCK = 8192


def state_blocks(*columns: np.ndarray):
    """Split (rows, B) arrays (see :func:`flat_columns`) into blocks of states for the component recursions.

    Yields ``(sl, rows)``: the slice of states and, per array, its list of rows restricted to them; one state
    gives Python scalars (far cheaper per operation than 1-element arrays).
    """
    size = columns[0].shape[1]
    if size == 1:
        yield slice(0, 1), [c[:, 0].tolist() for c in columns]
        return
    for lo in range(0, size, BLOCK):
        sl = slice(lo, lo + BLOCK)
        yield sl, [list(c[:, sl]) for c in columns]


def block_of(v: tuple, sl: slice, size: int) -> tuple:
    """The components of v (scalars or (B,) arrays, e.g. from :func:`gravity_components`) for the states ``sl`` of
    :func:`state_blocks`: scalars unchanged, arrays sliced, or Python scalars when there is one state."""
    return tuple(x if np.ndim(x) == 0 else (x[0].item() if size == 1 else x[sl]) for x in v)


def run_blocks(robot: Robot, components, joint: tuple, gravity, wrenches=None) -> np.ndarray:
    """A component recursion over every state of checked arrays, block by block (:func:`state_blocks`).

    Parameters
    ----------
    components : callable ``(robot, *rows, g, wr)`` returning n scalars, ``rows`` one row per joint variable of
        each array of ``joint`` (see :func:`flat_columns`), ``g`` the gravity components, ``wr`` the 6 nf rows of
        ``wrenches`` or None.
    joint : tuple of ndarray (..., n), one dtype.
    gravity : ndarray (3,) or (..., 3).
    wrenches : ndarray (..., nf, 6) or None.

    Returns
    -------
    ndarray (..., n)
    """
    dtype, batch, n = joint[0].dtype, joint[0].shape[:-1], joint[0].shape[-1]
    cols = flat_columns(*joint)
    if wrenches is not None:
        cols = cols + flat_columns(np.reshape(wrenches, batch + (6 * robot.nf,)))
    g = gravity_components(gravity, batch, dtype)
    size = cols[0].shape[1]
    out = np.empty((size, n), dtype)
    # The loop is over blocks of states (kept in cache), never over single samples of a batch.
    for sl, rows in state_blocks(*cols):
        wr = rows[len(joint)] if wrenches is not None else None
        for k, x in enumerate(components(robot, *rows[:len(joint)], block_of(g, sl, size), wr)):
            out[sl, k] = x
    return out.reshape(batch + (n,))


def link_accelerations(robot: Robot, q, qd, qdd) -> LinkAccelerations:
    """Angular acceleration ^jω̇_j and linear acceleration ^jV̇_j of O_j for every frame, in R_j.

    ^jV̇_j is the acceleration of the origin O_j in the base, projected on R_j (Khalil & Dombre's convention
    below [9.90]); gravity is not included.

    Parameters
    ----------
    robot : Robot
    q, qd, qdd : array_like (..., n) — joint positions, velocities, accelerations (rad, rad/s, rad/s² | m, ...).

    Returns
    -------
    LinkAccelerations (omega_dot, V_dot) : ndarray (..., nf, 3) each (rad/s², m/s²); unpacks as a pair.
    """
    if isinstance(robot, Robot):  # one float64 state: the kernels' entry bound to the robot, else None
        run = WORKSPACE.get(robot, _ACCELERATIONS)
        if run is None:
            run = native.bind_kinematics(robot, "link_kinematics", 2, LinkAccelerations)
        out = run(q, qd, qdd) if run else None
        if out is not None:
            return out
    dtype, batch, a = joint_arrays(robot, q=q, qd=qd, qdd=qdd)
    out = _compiled(robot, "link_kinematics", dtype, batch, a["q"], a["qd"], a["qdd"])
    if out is not None:
        return LinkAccelerations(*_parts(out, 2))
    _, _, wd, Vd = forward_recursion(robot, a["q"], a["qd"], a["qdd"], np.zeros(3, dtype))
    return finite_result("link_accelerations", LinkAccelerations(np.stack(wd, -2), np.stack(Vd, -2)))


def jacobian(robot: Robot, q, frame=None, point=None) -> np.ndarray:
    """Geometric Jacobian of frame ``frame`` in the base frame.

    [v; ω] = J q̇, with v the velocity of O_j (or of ``point``) and ω the angular velocity of link j,
    both projected on R_0.  Column k (joint frame f) is [z_f × (p − p_f); z_f] for a revolute joint and
    [z_f; 0] for a prismatic one, zero when frame f is not between the base and frame j.

    Parameters
    ----------
    q : (..., n)
    frame : int or str, default the end frame (tip of the longest movable chain) — frame number j = 1..nf (Khalil & Dombre's numbering) or its name.
    point : (..., 3), optional — a point fixed to link j, coordinates in R_j (m); default O_j.

    Returns
    -------
    ndarray (..., 6, n)
    """
    if isinstance(robot, Robot):  # one float64 state: the kernels' entry bound to the robot, else None
        run = WORKSPACE.get(robot, _JACOBIAN)
        if run is None:
            run = native.bind_kinematics(robot, "frame_jacobian")
        out = run(q, None, None, state_frame(robot, frame), point) if run else None
        if out is not None:
            return out
    dtype, batch, a, j, point = frame_arguments(robot, frame, point, q=q)
    out = _compiled(robot, "frame_jacobian", dtype, batch, a["q"], frame=j, point=point)
    if out is not None:
        return out
    R0, P0 = base_poses(robot, a["q"], dtype)
    p = P0[..., j, :]
    if point is not None:
        p = p + mv(R0[..., j, :, :], point)
    Jac = np.zeros(batch + (6, robot.n), dtype)
    chain = set(ancestors(robot, j))
    for k, f in enumerate(robot.joint_frames):
        if f not in chain:
            continue
        z = R0[..., f, :, 2]
        if robot.sigma[f] == 0:
            Jac[..., :3, k] = cross(z, p - P0[..., f, :])
            Jac[..., 3:, k] = z
        else:
            Jac[..., :3, k] = z
    return finite_result("jacobian", Jac)


def jacobian_dot_qd(robot: Robot, q, qd, frame=None, point=None) -> np.ndarray:
    """J̇ q̇ of :func:`jacobian`: the acceleration [a; ω̇] of the point with q̈ = 0, in R_0.

    Computed from the Newton–Euler forward recursion with q̈ = 0 and g = 0 ([9.86]–[9.87]);
    for a point p of link j: a = V̇_j + ω̇ × p + ω × (ω × p).

    Parameters
    ----------
    robot : Robot
    q, qd : array_like (..., n) — joint positions (rad | m) and velocities (rad/s | m/s).
    frame : int or str, default the end frame (tip of the longest movable chain) — frame number j = 1..nf (Khalil & Dombre's numbering) or its name.
    point : array_like (..., 3), optional — a point fixed to link j, coordinates in R_j (m); default O_j.

    Returns
    -------
    ndarray (..., 6)  [a (m/s²); ω̇ (rad/s²)] in R_0.
    """
    if isinstance(robot, Robot):  # one float64 state: the kernels' entry bound to the robot, else None
        run = WORKSPACE.get(robot, _JDQ)
        if run is None:
            run = native.bind_kinematics(robot, "jacobian_dot_qd")
        out = run(q, qd, None, state_frame(robot, frame), point) if run else None
        if out is not None:
            return out
    dtype, batch, a, j, point = frame_arguments(robot, frame, point, q=q, qd=qd)
    out = _compiled(robot, "jacobian_dot_qd", dtype, batch, a["q"], a["qd"], frame=j, point=point)
    if out is not None:
        return out
    zeros = np.zeros_like(a["qd"])
    _, w, wd, Vd = forward_recursion(robot, a["q"], a["qd"], zeros, np.zeros(3, dtype))
    acc, wdj = Vd[j], wd[j]
    if point is not None:
        acc = acc + cross(wdj, point) + cross(w[j], cross(w[j], point))
    R0, _ = base_poses(robot, a["q"], dtype)
    R = R0[..., j, :, :]
    return finite_result("jacobian_dot_qd", np.concatenate([mv(R, acc), mv(R, wdj)], -1))
