"""Pure JAX versions of the main dynamics and kinematics functions, traceable by ``jax.jit``, ``jax.vmap``,
``jax.grad``, ``jax.jacfwd`` and ``jax.hessian``.

Evaluated, they run robodyn's own recursions (:func:`robodyn.dynamics.newton_euler.rnea_components`, the composite
links of :mod:`robodyn.dynamics.composite`) with the JAX scalar backend (:func:`robodyn.spatial.jax_backend`): one
straight-line program per robot, which XLA compiles in about 2 s and runs fastest (docs/scaling.md).  Differentiated,
inverse dynamics, gravity torques, the inertia matrix and forward dynamics take their derivatives (``jax.custom_jvp``)
from the same Newton–Euler equations [9.84]–[9.94] projected on R_0 and written without a loop over the frames (the
notes above ``_Frames`` below), and forward dynamics from the implicit function
dq̈ = A⁻¹ (dΓ − ∂H/∂q dq − ∂H/∂q̇ dq̇ − ∂H/∂g dg): the differentiated program stays small, so ``grad``, ``vmap(grad)``,
a scanned rollout's ``value_and_grad`` and ``hessian`` compile in seconds where differentiating the straight-line
program takes minutes.  Frame poses and Jacobians (:func:`forward_kinematics`, :func:`jacobian`) are loop-free too.

They give the NumPy functions' numbers (enable 64-bit floats with ``jax.config.update("jax_enable_x64", True)`` to
compare at float64 precision).  Install with the ``jax`` extra: ``pip install 'robodyn[jax]'``.

Every function takes joint arrays of shape (..., n) (leading batch axes broadcast) and returns JAX arrays; there is
no argument checking beyond what JAX does, since these are meant to be traced.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from robodyn.dynamics.composite import jax_inertia_matrix
from robodyn.dynamics.floating import augmented_robot
from robodyn.dynamics.newton_euler import jax_gravity_torques, jax_inverse_dynamics
from robodyn.dynamics.recursive import jax_forward_dynamics
from robodyn.kinematics import ancestors
from robodyn.model.arguments import frame_index
from robodyn.model.friction import friction_law
from robodyn.model.robot import Robot
from robodyn.parameters.regressor import jax_regressor
from robodyn.spatial import jax_backend, quaternion_rows, velocity_products

__all__ = ("inverse_dynamics", "gravity_torques", "inertia_matrix", "forward_dynamics", "regressor",
           "forward_kinematics", "jacobian",
           "floating_inverse_dynamics", "floating_inertia_matrix", "floating_forward_dynamics")


def inverse_dynamics(robot: Robot, q, qd, qdd, gravity=None) -> jnp.ndarray:
    """Γ = Γ_rigid + Ia q̈ + Γ_f(q̇) [9.84]–[9.94] (..., n), as :func:`robodyn.inverse_dynamics` (g in R_0)."""
    args, g = _broadcast(robot, (q, qd, qdd), gravity)
    return _derivatives_from(lambda *a: jax_inverse_dynamics(robot, *a),
                             lambda *a: _loop_free_inverse_dynamics(robot, *a))(*args, g)


def gravity_torques(robot: Robot, q, gravity=None) -> jnp.ndarray:
    """Q(q) (..., n): Γ_rigid at q̇ = q̈ = 0, as :func:`robodyn.gravity_torques`."""
    (q,), g = _broadcast(robot, (q,), gravity)
    return _derivatives_from(lambda *a: jax_gravity_torques(robot, *a),
                             lambda *a: _loop_free_gravity_torques(robot, *a))(q, g)


def inertia_matrix(robot: Robot, q) -> jnp.ndarray:
    """A(q) (..., n, n), rotor inertias on the diagonal, as :func:`robodyn.inertia_matrix`."""
    (q,), _ = _broadcast(robot, (q,), None)
    return _derivatives_from(lambda a: jax_inertia_matrix(robot, a), lambda a: _loop_free_inertia_matrix(robot, a))(q)


def forward_dynamics(robot: Robot, q, qd, tau, gravity=None) -> jnp.ndarray:
    """q̈ = A⁻¹ (Γ − H(q, q̇)) (..., n), as :func:`robodyn.forward_dynamics`; derivatives by the implicit function
    dq̈ = A⁻¹ (dΓ − ∂H/∂q dq − ∂H/∂q̇ dq̇ − ∂H/∂g dg), H's derivatives at (q, q̇, q̈) from the loop-free recursion."""
    args, g = _broadcast(robot, (q, qd, tau), gravity)

    @jax.custom_jvp
    def fd(q, qd, tau, g):
        return jax_forward_dynamics(robot, q, qd, tau, g)

    @fd.defjvp
    def _(primals, tangents):
        q, qd, tau, g = primals
        dq, dqd, dtau, dg = tangents
        # q̈ again from the loop-free recursions, so that a second derivative differentiates them only
        A = _loop_free_inertia_matrix(robot, q)
        h = _loop_free_inverse_dynamics(robot, q, qd, jnp.zeros_like(qd), g)
        qdd = jnp.linalg.solve(A, (tau - h)[..., None])[..., 0]
        _, dh = jax.jvp(lambda a, b, c: _loop_free_inverse_dynamics(robot, a, b, qdd, c), (q, qd, g), (dq, dqd, dg))
        return qdd, jnp.linalg.solve(A, (dtau - dh)[..., None])[..., 0]

    return fd(*args, g)


def regressor(robot: Robot, q, qd, qdd, friction: bool = True, gravity=None) -> jnp.ndarray:
    """D(q, q̇, q̈) of Γ = D K [9.36], (..., n, 11 nf (+ 3 n)), columns as :func:`robodyn.regressor`."""
    return jax_regressor(robot, q, qd, qdd, gravity, friction=friction)


def forward_kinematics(robot: Robot, q) -> jnp.ndarray:
    """^0T_j (..., nf, 4, 4) of every frame j = 1..nf, as :func:`robodyn.forward_kinematics`."""
    fr = _frames(robot)
    q = jnp.asarray(q)
    R, P = _vmapped(lambda a: _poses(fr, a), q.shape[:-1], (q,))
    top = jnp.concatenate([R, P[..., None]], -1)
    bottom = jnp.broadcast_to(jnp.array([0.0, 0.0, 0.0, 1.0], q.dtype), top.shape[:-2] + (1, 4))
    return jnp.concatenate([top, bottom], -2)


def jacobian(robot: Robot, q, frame=None, point=None) -> jnp.ndarray:
    """Geometric Jacobian (..., 6, n) of frame ``frame`` (number 1..nf or name, default the end frame) at its
    origin or at ``point`` (..., 3) fixed to the link (coordinates in R_j), [v; ω] = J q̇ in R_0, as
    :func:`robodyn.jacobian`: column k is [z_f × (p − p_f); z_f] (revolute) or [z_f; 0] (prismatic) for the
    frames f between the base and frame j, zero otherwise."""
    fr, j = _frames(robot), frame_index(robot, frame)
    chain = set(ancestors(robot, j))
    on_path = np.array([float(f in chain) for f in robot.joint_frames])
    revolute = fr.revolute[fr.joint_frames] * on_path
    prismatic = fr.prismatic[fr.joint_frames] * on_path
    def one(q, s=None):
        R, P = _poses(fr, q)
        p = P[j] if s is None else P[j] + R[j] @ s
        z, pf = _take(fr.joint_frames, R[:, :, 2]), _take(fr.joint_frames, P)
        linear = revolute[:, None] * jnp.cross(z, p - pf) + prismatic[:, None] * z
        return jnp.concatenate([linear, revolute[:, None] * z], -1).T

    q = jnp.asarray(q)
    if point is None:
        return _vmapped(one, q.shape[:-1], (q,))
    s = jnp.asarray(point, q.dtype)
    batch = jnp.broadcast_shapes(q.shape[:-1], s.shape[:-1])
    return _vmapped(one, batch, (jnp.broadcast_to(q, batch + q.shape[-1:]), jnp.broadcast_to(s, batch + (3,))))


def _derivatives_from(evaluated, loop_free):
    """``evaluated`` (the straight-line program, fastest to run) with the derivatives of ``loop_free`` (the same
    function without a loop over the frames, fast to compile when differentiated, to any order)."""
    f = jax.custom_jvp(evaluated)
    f.defjvp(lambda primals, tangents: jax.jvp(loop_free, primals, tangents))
    return f


def _broadcast(robot: Robot, arrays, gravity):
    """Joint arrays broadcast to one batch in one floating dtype, and gravity (3,) or batched (..., 3)."""
    arrays = [jnp.asarray(a) for a in arrays]
    g = jnp.asarray(robot.gravity if gravity is None else gravity)
    dtype = jnp.result_type(*arrays)
    if not jnp.issubdtype(dtype, jnp.floating):
        dtype = jnp.result_type(float)
    batch = jnp.broadcast_shapes(*(a.shape[:-1] for a in arrays), g.shape[:-1])
    arrays = [jnp.broadcast_to(a.astype(dtype), batch + a.shape[-1:]) for a in arrays]
    g = g.astype(dtype)
    return arrays, (g if g.ndim == 1 else jnp.broadcast_to(g, batch + (3,)))


def _vmapped(f, batch, args):
    """f of one state mapped over the batch axes ``batch`` of ``args`` (arrays with those leading axes, or (3,)
    gravity vectors, which are shared)."""
    if not batch:
        return f(*args)
    size = int(np.prod(batch))
    mapped = [a.shape[:len(batch)] == batch and a.ndim > 1 for a in args]
    flat = [a.reshape((size,) + a.shape[len(batch):]) if m else a for a, m in zip(args, mapped)]
    out = jax.vmap(f, in_axes=[0 if m else None for m in mapped])(*flat)
    return jax.tree_util.tree_map(lambda x: x.reshape(batch + x.shape[1:]), out)


def _links(robot: Robot, dtype):
    return jnp.asarray(robot.params[:, :10], dtype)


def _loop_free_inverse_dynamics(robot: Robot, q, qd, qdd, g):
    fr, links = _frames(robot), _links(robot, q.dtype)
    rigid = _vmapped(lambda a, b, c, d: _rigid_torques(fr, links, a, b, c, d), q.shape[:-1], (q, qd, qdd, g))
    coefficients = [robot.joint_values(k).astype(q.dtype) for k in ("Fc", "Fv", "Foff", "Fst")]
    Fc, Fv, Foff, Fst = coefficients
    kst, Bst = (robot.joint_values(k).astype(q.dtype) for k in ("kst", "Bst"))
    friction = friction_law(qd, Fc, Fv, Foff, Fst, Fst - Fc, kst, Bst, jax_backend())
    return rigid + robot.derived.Ia.astype(q.dtype) * qdd + friction


def _loop_free_gravity_torques(robot: Robot, q, g):
    fr, links = _frames(robot), _links(robot, q.dtype)
    zero = jnp.zeros(q.shape[-1:], q.dtype)
    return _vmapped(lambda a, d: _rigid_torques(fr, links, a, zero, zero, d), q.shape[:-1], (q, g))


def _loop_free_inertia_matrix(robot: Robot, q):
    fr, links, Ia = _frames(robot), _links(robot, q.dtype), jnp.asarray(robot.derived.Ia, q.dtype)
    return _vmapped(lambda a: _inertia(fr, links, a) + jnp.diag(Ia), q.shape[:-1], (q,))


# ---- floating and mobile bases: the augmented robot of robodyn.dynamics.floating (Pinocchio's free-flyer arrays) ----


def _free_flyer(robot: Robot, q, v, a, gravity):
    """(q, q̇, q̈ of the augmented robot, gravity in R_0) at a free-flyer state (robodyn.dynamics.floating notes):
    ^0R_w g by :func:`robodyn.spatial.quaternion_rows`, q̈ of the virtual joints by
    :func:`robodyn.spatial.velocity_products`."""
    q, v = jnp.asarray(q), jnp.asarray(v)
    quat = q[..., 3:7] / jnp.linalg.norm(q[..., 3:7], axis=-1, keepdims=True)
    rows = quaternion_rows(*(quat[..., i] for i in range(4)))  # ^wR_0
    g = jnp.asarray(robot.gravity if gravity is None else gravity)
    g0 = jnp.stack([sum(rows[r][c] * g[..., r] for r in range(3)) for c in range(3)], -1)  # ^0R_w g = Rᵀ g
    qa = jnp.concatenate([jnp.zeros(q.shape[:-1] + (6,), q.dtype), q[..., 7:]], -1)
    if a is None:
        return qa, v, None, g0
    a = jnp.asarray(a)
    products = jnp.stack(velocity_products(*(v[..., i] for i in range(6))), -1)
    return qa, v, jnp.concatenate([a[..., :6] + products, a[..., 6:]], -1), g0


def floating_inverse_dynamics(robot: Robot, q, v, a, gravity=None) -> jnp.ndarray:
    """:func:`robodyn.floating.floating_inverse_dynamics` in JAX: q (..., n + 7), v, a (..., n + 6) → (..., n + 6)."""
    qa, qda, qdda, g0 = _free_flyer(robot, q, v, a, gravity)
    return inverse_dynamics(augmented_robot(robot), qa, qda, qdda, gravity=g0)


def floating_inertia_matrix(robot: Robot, q) -> jnp.ndarray:
    """:func:`robodyn.floating.floating_inertia_matrix` in JAX: (..., n + 6, n + 6)."""
    q = jnp.asarray(q)
    return inertia_matrix(augmented_robot(robot), jnp.concatenate([jnp.zeros(q.shape[:-1] + (6,), q.dtype), q[..., 7:]], -1))


def floating_forward_dynamics(robot: Robot, q, v, tau, gravity=None) -> jnp.ndarray:
    """:func:`robodyn.floating.floating_forward_dynamics` of a floating base in JAX, a = M⁻¹(τ − H) (..., n + 6)."""
    v = jnp.asarray(v)
    H = floating_inverse_dynamics(robot, q, v, jnp.zeros_like(v), gravity)
    return jnp.linalg.solve(floating_inertia_matrix(robot, q), (jnp.asarray(tau) - H)[..., None])[..., 0]


# ---- the recursions without a loop over the frames (compile in seconds under grad, vmap(grad), hessian) ----
# Newton–Euler [9.84]–[9.93] projected on R_0 instead of each link's frame: every sum over a frame's antecedents (the
# forward recursion) or over its subtree (the backward one) is a product with the constant ancestor matrix, and the
# poses ^0T_j compose by pointer jumping (ceil(log2 depth) steps, each over all frames at once). The traced program
# then has some hundred array operations whatever the number of frames, where a loop unrolled per frame and per
# component has thousands of scalar ones: XLA compiles it, its derivatives and its Hessian in seconds.


class _Frames(NamedTuple):
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


def _frames(robot: Robot) -> _Frames:
    nf, n = robot.nf, robot.n
    parent = np.array([p if p >= 0 else nf for p in robot.derived.parent], int)
    joint = np.full(nf, n)
    joint[robot.joint_frames] = np.arange(n)
    subtree = np.eye(nf)
    for i in range(nf - 1, -1, -1):  # descendants have higher numbers
        if parent[i] < nf:
            subtree[parent[i]] += subtree[i]
    jumps, up = [], np.append(parent, nf)
    while np.any(up[:nf] < nf):
        jumps.append(up[:nf].copy())
        up = up[up]
    C = np.array([t[0] for t in robot.derived.transforms]).reshape(nf, 3, 3)
    p0 = np.array([t[1] for t in robot.derived.transforms]).reshape(nf, 3)
    return _Frames(C, p0, np.asarray(robot.theta, float), np.asarray(robot.r, float),
                   (robot.sigma == 0).astype(float), (robot.sigma == 1).astype(float), parent, joint,
                   np.asarray(robot.joint_frames), tuple(jumps), subtree)


def _per_frame(fr: _Frames, x):
    """Joint values x (n,) as one value per frame (0 on fixed frames)."""
    return _take(fr.joint, x)


def _take(index, x, base=None):
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


def _poses(fr: _Frames, q):
    """^0A_j (nf, 3, 3) and ^0P_j (nf, 3) of one state q (n,).

    ^{a}A_j = C Rot(z, θ_j + σ̄_j q_j), ^{a}P_j = p0 + (r_j + σ_j q_j) C z (Khalil & Dombre ch. 3), composed along
    the antecedents by pointer jumping: after step s every frame holds its transform from the antecedent 2^s levels
    up (or from the base)."""
    dt = q.dtype
    qf = _per_frame(fr, q)
    th = jnp.asarray(fr.theta, dt) + jnp.asarray(fr.revolute, dt) * qf
    c, s = jnp.cos(th)[:, None], jnp.sin(th)[:, None]
    C = jnp.asarray(fr.C, dt)
    R = jnp.stack([C[:, :, 0] * c + C[:, :, 1] * s, C[:, :, 1] * c - C[:, :, 0] * s, C[:, :, 2]], -1)
    P = jnp.asarray(fr.p0, dt) + (jnp.asarray(fr.r, dt) + jnp.asarray(fr.prismatic, dt) * qf)[:, None] * C[:, :, 2]
    eye = jnp.eye(3, dtype=dt)
    for up in fr.jumps:
        Ru, Pu = _take(up, R, eye), _take(up, P)
        R, P = Ru @ R, Pu + jnp.einsum("jab,jb->ja", Ru, P)
    return R, P


def _rigid_torques(fr: _Frames, links, q, qd, qdd, g):
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
    R, p = _poses(fr, q)
    z = R[:, :, 2]
    rev, pri = jnp.asarray(fr.revolute, dt)[:, None], jnp.asarray(fr.prismatic, dt)[:, None]
    qdz, qddz = _per_frame(fr, qd)[:, None] * z, _per_frame(fr, qdd)[:, None] * z
    antecedents = jnp.asarray(fr.subtree.T, dt)  # row j: frame j and its antecedents
    w = antecedents @ (rev * qdz)
    wa = _take(fr.parent, w)
    wd = antecedents @ (rev * (qddz + jnp.cross(wa, qdz)))
    wda = _take(fr.parent, wd)
    d = p - _take(fr.parent, p)
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
    return _take(fr.joint_frames, tau)


def _inertia(fr: _Frames, links, q):
    """A(q) (n, n) of the rigid bodies from their kinetic energy, 2 T = q̇ᵀ A q̇ with, for link k (origin O_k, all in
    R_0, Khalil & Dombre [9.6]–[9.8]):

        2 T_k = M_k |v_k|² + 2 v_k · (ω_k × MS_k) + ω_kᵀ J_k ω_k,   v_k = J_v q̇,  ω_k = J_ω q̇

    where column j of J_v, J_ω is [z_j × (p_k − p_j); z_j] (revolute) or [z_j; 0] (prismatic) for the joints
    between the base and frame k (:func:`jacobian`)."""
    dt = q.dtype
    R, p = _poses(fr, q)
    z = R[:, :, 2]
    on_path = jnp.asarray(fr.subtree.T, dt)[:, fr.joint_frames, None]  # (link k, joint, 1)
    zj, pj = _take(fr.joint_frames, z), _take(fr.joint_frames, p)
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
