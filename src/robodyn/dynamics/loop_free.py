"""Inverse dynamics, gravity torques and the inertia matrix in JAX without a loop over the frames: the recursions
whose derivatives :mod:`robodyn.jax` and :class:`robodyn.symbolic.jax_model.JaxModel` take (``jax.custom_jvp``),
because XLA compiles them, their derivatives and their Hessians in seconds.

Newton–Euler [9.84]–[9.93] projected on R_0 instead of each link's frame: every sum over a frame's antecedents (the
forward recursion) or over its subtree (the backward one) is a product with the constant ancestor matrix, and the
poses ^0T_j compose by pointer jumping (ceil(log2 depth) steps, each over all frames at once). The traced program
then has some hundred array operations whatever the number of frames, where a loop unrolled per frame and per
component has thousands of scalar ones.

The inertial parameters and friction coefficients are the robot's, or arrays (traced values included): ``table``
(nf, 11) XX XY XZ YY YZ ZZ MX MY MZ M Ia per frame, ``friction`` (6, n) Fc Fv Foff Fst kst Bst per joint in the
order of q ([9.26]–[9.29]). Joint arrays (..., n), gravity (3,) or (..., 3) in R_0; no argument checks (traced).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
from jax.custom_derivatives import SymbolicZero
import jax.numpy as jnp
import numpy as np

from robodyn.model.friction import friction_law
from robodyn.model.robot import Robot
from robodyn.spatial import jax_backend

#: the per-joint friction coefficients of ``friction`` (6, n), in its row order
FRICTION = ("Fc", "Fv", "Foff", "Fst", "kst", "Bst")


def robot_table(robot: Robot) -> np.ndarray:
    """The robot's (nf, 11) XX..M, Ia per frame."""
    return np.concatenate([robot.params[:, :10], robot.Ia[:, None]], axis=1)


def robot_friction(robot: Robot) -> np.ndarray:
    """The robot's (6, n) Fc Fv Foff Fst kst Bst per joint."""
    return np.array([robot.joint_values(k) for k in FRICTION])


def inverse_dynamics(robot: Robot, q, qd, qdd, g, table=None, friction=None):
    """Γ = Γ_rigid + Ia q̈ + Γ_f(q̇) [9.84]–[9.94] (..., n)."""
    table = jnp.asarray(robot_table(robot) if table is None else table, q.dtype)
    nominal = robot_friction(robot)
    fc, fv, foff, fst, kst, bst = jnp.asarray(nominal if friction is None else friction, q.dtype)
    fr = frames(robot)
    rigid = vmapped(lambda a, b, c, d: rigid_torques(fr, table[:, :10], a, b, c, d), q.shape[:-1], (q, qd, qdd, g))
    Ia = take(fr.joint_frames, table[:, 10])
    # the Stribeck term where the robot file has one (friction_law reads F_st only for that, which must be concrete)
    return rigid + Ia * qdd + friction_law(qd, fc, fv, foff, nominal[3], fst - fc, kst, bst, jax_backend())


def gravity_torques(robot: Robot, q, g, table=None):
    """Q(q) (..., n): Γ_rigid at q̇ = q̈ = 0."""
    table = jnp.asarray(robot_table(robot) if table is None else table, q.dtype)
    fr, zero = frames(robot), jnp.zeros(q.shape[-1:], q.dtype)
    return vmapped(lambda a, d: rigid_torques(fr, table[:, :10], a, zero, zero, d), q.shape[:-1], (q, g))


def inertia_matrix(robot: Robot, q, table=None):
    """A(q) (..., n, n), rotor inertias on the diagonal."""
    table = jnp.asarray(robot_table(robot) if table is None else table, q.dtype)
    fr = frames(robot)
    Ia = take(fr.joint_frames, table[:, 10])
    return vmapped(lambda a: inertia(fr, table[:, :10], a) + jnp.diag(Ia), q.shape[:-1], (q,))


def tangent(f, args, tangents):
    """Σ_k ∂f/∂x_k dx_k: the tangent of the vector f(*args) (..., n) over the arguments whose tangent is not a
    symbolic zero (``jax.custom_jvp(..., symbolic_zeros=True)``).

    Each ∂f/∂x_k is formed in forward mode, its columns by unit tangents mapped with ``jax.vmap``, so the tangent
    is a product linear in dx_k: reverse mode transposes that product instead of f's program, and a Hessian
    differentiates forward mode only (the Panda's Hessian of forward dynamics: 349 XLA kernels instead of 409
    with the tangent of ``jax.jvp``; docs/scaling.md). A plain ``jax.jvp`` runs faster under ``vmap(grad)``,
    which is why the other rules keep it."""
    shape = jax.eval_shape(f, *args)
    out = jnp.zeros(shape.shape, shape.dtype)
    for k, (x, dx) in enumerate(zip(args, tangents)):
        if isinstance(dx, SymbolicZero):
            continue

        def column(e, k=k, x=x):
            return jax.jvp(lambda v: f(*args[:k], v, *args[k + 1:]), (x,), (jnp.broadcast_to(e, x.shape),))[1]

        columns = jax.vmap(column, out_axes=-1)(jnp.eye(x.shape[-1], dtype=x.dtype))
        out = out + jnp.einsum("...am,...m->...a", columns, dx)
    return out


def live_jvp(f, args, tangents):
    """The tangent of f(*args) by ``jax.jvp`` over the arguments whose tangent is not a symbolic zero (the others
    held: a gradient in q does not carry the parameters' tangents through the program)."""
    live = [k for k, t in enumerate(tangents) if not isinstance(t, SymbolicZero)]

    def g(*x):
        full = list(args)
        for k, v in zip(live, x):
            full[k] = v
        return f(*full)

    if not live:
        shape = jax.eval_shape(f, *args)
        return jnp.zeros(shape.shape, shape.dtype)
    return jax.jvp(g, tuple(args[k] for k in live), tuple(tangents[k] for k in live))[1]


def implicit_forward_dynamics(torques, inertia, args, tangents, tau, dtau):
    """(q̈, dq̈) of forward dynamics q̈ = A⁻¹ (Γ − H) by the implicit function of Γ = torques(*args, q̈) (args:
    q, q̇, gravity and any parameters) with A = inertia(*args):

        dq̈ = A⁻¹ (dΓ − Σ_k ∂Γ/∂x_k dx_k)  at the q̈ solved here,

    the sum by :func:`tangent`; q̈ comes from the same recursions, so that a second derivative differentiates
    them only. Tangents may be symbolic zeros."""
    A = inertia(*args)
    qdd = jnp.linalg.solve(A, (tau - torques(*args, jnp.zeros_like(tau)))[..., None])[..., 0]
    rhs = -tangent(lambda *x: torques(*x, qdd), args, tangents)
    if not isinstance(dtau, SymbolicZero):
        rhs = rhs + dtau
    return qdd, jnp.linalg.solve(A, rhs[..., None])[..., 0]


def vmapped(f, batch, args):
    """f of one state mapped over the batch axes ``batch`` of ``args`` (arrays with those leading axes, or (3,)
    gravity vectors, which are shared)."""
    if not batch:
        return f(*args)
    size = math.prod(batch)
    mapped = [a.shape[:len(batch)] == batch and a.ndim > 1 for a in args]
    flat = [a.reshape((size,) + a.shape[len(batch):]) if m else a for a, m in zip(args, mapped)]
    out = jax.vmap(f, in_axes=[0 if m else None for m in mapped])(*flat)
    return jax.tree_util.tree_map(lambda x: x.reshape(batch + x.shape[1:]), out)



class Frames(NamedTuple):
    """Per-frame constants, stacked over the frames (0-based, antecedents first)."""
    C: np.ndarray        # (nf, 3, 3) Rot(z, γ_j) Rot(x, α_j)
    p0: np.ndarray       # (nf, 3) Rot(z, γ_j) [d_j, 0, b_j]
    theta: np.ndarray    # (nf,)
    r: np.ndarray        # (nf,)
    revolute: np.ndarray   # (nf,) 1.0 where σ_j = 0
    prismatic: np.ndarray  # (nf,) 1.0 where σ_j = 1
    parent: np.ndarray   # (nf,) int, nf (a base slot appended to the arrays) for the base
    joint: np.ndarray    # (nf,) int: the frame's index in q, n (a zero appended to q) for a fixed frame
    joint_frames: np.ndarray  # (n,) int: the frames of q's entries
    jumps: tuple         # per pointer-jumping step, the (nf,) frame each frame composes with (nf: the base)
    subtree: np.ndarray  # (nf, nf): 1.0 where frame k is frame j or one of its descendants (row j, column k)


def frames(robot: Robot) -> Frames:
    nf, n = robot.nf, robot.n
    parent = np.array([p if p >= 0 else nf for p in robot.derived.parent], int)
    joint = np.full(nf, n)
    joint[robot.joint_frames] = np.arange(n)
    jumps, up = [], np.append(parent, nf)
    while np.any(up[:nf] < nf):
        jumps.append(up[:nf].copy())
        up = up[up]
    C = np.array([t[0] for t in robot.derived.transforms]).reshape(nf, 3, 3)
    p0 = np.array([t[1] for t in robot.derived.transforms]).reshape(nf, 3)
    return Frames(C, p0, np.asarray(robot.theta, float), np.asarray(robot.r, float),
                   (robot.sigma == 0).astype(float), (robot.sigma == 1).astype(float), parent, joint,
                   np.asarray(robot.joint_frames), tuple(jumps), robot.derived.subtree)


def per_frame(fr: Frames, x):
    """Joint values x (n,) as one value per frame (0 on fixed frames)."""
    return take(fr.joint, x)


def take(index, x, base=None):
    """x[index] along the first axis, ``base`` (or 0) where index = len(x) (the base's slot), as a product with a
    constant 0/1 matrix: its derivative's transpose is a product too, where a gather's is a scatter, which XLA's CPU
    code runs one state at a time in a vmapped batch."""
    select = np.zeros((len(index), x.shape[0]))
    inside = index < x.shape[0]
    select[np.flatnonzero(inside), index[inside]] = 1.0
    out = jnp.tensordot(jnp.asarray(select, x.dtype), x, 1)
    if base is None:
        return out
    return out + jnp.asarray(~inside, x.dtype).reshape((-1,) + (1,) * (x.ndim - 1)) * base


def poses(fr: Frames, q):
    """^0A_j (nf, 3, 3) and ^0P_j (nf, 3) of one state q (n,).

    ^{a}A_j = C Rot(z, θ_j + σ̄_j q_j), ^{a}P_j = p0 + (r_j + σ_j q_j) C z (Khalil & Dombre ch. 3), composed along
    the antecedents by pointer jumping: after step s every frame holds its transform from the antecedent 2^s levels
    up (or from the base)."""
    dt = q.dtype
    qf = per_frame(fr, q)
    th = jnp.asarray(fr.theta, dt) + jnp.asarray(fr.revolute, dt) * qf
    c, s = jnp.cos(th)[:, None], jnp.sin(th)[:, None]
    C = jnp.asarray(fr.C, dt)
    R = jnp.stack([C[:, :, 0] * c + C[:, :, 1] * s, C[:, :, 1] * c - C[:, :, 0] * s, C[:, :, 2]], -1)
    P = jnp.asarray(fr.p0, dt) + (jnp.asarray(fr.r, dt) + jnp.asarray(fr.prismatic, dt) * qf)[:, None] * C[:, :, 2]
    eye = jnp.eye(3, dtype=dt)
    for up in fr.jumps:
        Ru, Pu = take(up, R, eye), take(up, P)
        R, P = Ru @ R, Pu + jnp.einsum("jab,jb->ja", Ru, P)
    return R, P


def rigid_torques(fr: Frames, links, q, qd, qdd, g):
    """Γ_rigid (n,) of one state: Newton–Euler [9.84]–[9.93] with every vector projected on R_0.

    With z_j, p_j the axis and origin of frame j and a its antecedent (all in R_0):

        ω_j = ω_a + σ̄_j q̇_j z_j                                               [9.84]–[9.85]
        ω̇_j = ω̇_a + σ̄_j (q̈_j z_j + ω_a × q̇_j z_j)                               [9.86]
        V̇_j = V̇_a + ω̇_a × (p_j − p_a) + ω_a × (ω_a × (p_j − p_a))
              + σ_j (q̈_j z_j + 2 ω_a × q̇_j z_j),       V̇_0 = −g              [9.87], [9.80]

    each a sum of increments over the frame's antecedents (the subtree matrix's transpose); then [9.88]–[9.89] with
    ^0MS_j = ^0A_j ^jMS_j and ^0J_j = ^0A_j ^jJ_j ^0A_jᵀ, the wrenches f_j = Σ F_k and n_j = Σ (N_k + (p_k − p_j) × F_k)
    over the subtree of j ([9.91]–[9.93]), Γ_j = z_j · (σ_j f_j + σ̄_j n_j) [9.94].

    ``links`` (nf, 10): XX XY XZ YY YZ ZZ MX MY MZ M of every link (in R_j, about O_j); g (3,) in R_0.
    """
    dt = q.dtype
    R, p = poses(fr, q)
    z = R[:, :, 2]
    rev, pri = jnp.asarray(fr.revolute, dt)[:, None], jnp.asarray(fr.prismatic, dt)[:, None]
    qdz, qddz = per_frame(fr, qd)[:, None] * z, per_frame(fr, qdd)[:, None] * z
    antecedents = jnp.asarray(fr.subtree.T, dt)  # row j: frame j and its antecedents
    w = antecedents @ (rev * qdz)
    wa = take(fr.parent, w)
    wd = antecedents @ (rev * (qddz + jnp.cross(wa, qdz)))
    wda = take(fr.parent, wd)
    d = p - take(fr.parent, p)
    vd = -g + antecedents @ (jnp.cross(wda, d) + jnp.cross(wa, jnp.cross(wa, d)) + pri * (qddz + 2 * jnp.cross(wa, qdz)))
    l6 = links.astype(dt)
    J = jnp.stack([l6[:, 0:3], l6[:, jnp.array([1, 3, 4])], l6[:, jnp.array([2, 4, 5])]], -2)
    J0 = R @ J @ jnp.swapaxes(R, -1, -2)
    MS = jnp.einsum("jab,jb->ja", R, l6[:, 6:9])
    M = l6[:, 9:10]
    F = M * vd + jnp.cross(wd, MS) + jnp.cross(w, jnp.cross(w, MS))  # [9.88]
    N = jnp.einsum("jab,jb->ja", J0, wd) + jnp.cross(w, jnp.einsum("jab,jb->ja", J0, w)) + jnp.cross(MS, vd)  # [9.89]
    sub = jnp.asarray(fr.subtree, dt)
    f = sub @ F
    n = sub @ (N + jnp.cross(p, F)) - jnp.cross(p, f)  # moments about O_j
    tau = jnp.sum(z * (pri * f + (1 - pri) * n), -1)
    return take(fr.joint_frames, tau)


def inertia(fr: Frames, links, q):
    """A(q) (n, n) of the rigid bodies from their kinetic energy, 2 T = q̇ᵀ A q̇ with, for link k (origin O_k, all in
    R_0, Khalil & Dombre [9.6]–[9.8]):

        2 T_k = M_k |v_k|² + 2 v_k · (ω_k × MS_k) + ω_kᵀ J_k ω_k,   v_k = J_v q̇,  ω_k = J_ω q̇

    where column j of J_v, J_ω is [z_j × (p_k − p_j); z_j] (revolute) or [z_j; 0] (prismatic) for the joints
    between the base and frame k (:func:`jacobian`)."""
    dt = q.dtype
    R, p = poses(fr, q)
    z = R[:, :, 2]
    on_path = jnp.asarray(fr.subtree.T, dt)[:, fr.joint_frames, None]  # (link k, joint, 1)
    zj, pj = take(fr.joint_frames, z), take(fr.joint_frames, p)
    rev = jnp.asarray(fr.revolute[fr.joint_frames], dt)[None, :, None]
    Jv = on_path * (rev * jnp.cross(zj[None], p[:, None] - pj[None]) + (1 - rev) * zj[None])
    Jw = on_path * rev * zj[None]
    l6 = links.astype(dt)
    J = jnp.stack([l6[:, 0:3], l6[:, jnp.array([1, 3, 4])], l6[:, jnp.array([2, 4, 5])]], -2)
    J0 = R @ J @ jnp.swapaxes(R, -1, -2)
    MS = jnp.einsum("kab,kb->ka", R, l6[:, 6:9])
    cross = jnp.einsum("kia,kja->ij", Jv, jnp.cross(Jw, MS[:, None]))
    return (jnp.einsum("k,kia,kja->ij", l6[:, 9], Jv, Jv) + jnp.einsum("kia,kab,kjb->ij", Jw, J0, Jw)
            + cross + cross.T)
