"""Pure JAX versions of the main dynamics and kinematics functions, traceable by ``jax.jit``, ``jax.vmap``,
``jax.grad``, ``jax.jacfwd`` and ``jax.hessian``.

Evaluated, they run robodyn's own recursions (:func:`robodyn.dynamics.newton_euler.rnea_components`, the composite
links of :mod:`robodyn.dynamics.composite`) with the JAX scalar backend (:func:`robodyn.spatial.jax_backend`): one
straight-line program per robot, which XLA compiles in about 2 s and runs fastest (docs/scaling.md).  Differentiated,
inverse dynamics, gravity torques, the inertia matrix and forward dynamics take their derivatives (``jax.custom_jvp``)
from the same Newton–Euler equations [9.84]–[9.93] written as two ``jax.lax.scan`` over the frames (a tree's
antecedents gathered from the carried arrays), and forward dynamics from the implicit function
dq̈ = A⁻¹ (dΓ − ∂Γ/∂q dq − ∂Γ/∂q̇ dq̇ − ∂Γ/∂g dg): the differentiated program stays small, so ``grad``, ``vmap(grad)``,
a scanned rollout's ``value_and_grad`` and ``hessian`` compile in seconds where differentiating the straight-line
program took minutes.  Frame poses and Jacobians (:func:`forward_kinematics`, :func:`jacobian`) are scans too.

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
    return _scan_derivatives(lambda *a: jax_inverse_dynamics(robot, *a),
                             lambda *a: _scanned_inverse_dynamics(robot, *a))(*args, g)


def gravity_torques(robot: Robot, q, gravity=None) -> jnp.ndarray:
    """Q(q) (..., n): Γ_rigid at q̇ = q̈ = 0, as :func:`robodyn.gravity_torques`."""
    (q,), g = _broadcast(robot, (q,), gravity)
    return _scan_derivatives(lambda *a: jax_gravity_torques(robot, *a),
                             lambda *a: _scanned_gravity_torques(robot, *a))(q, g)


def inertia_matrix(robot: Robot, q) -> jnp.ndarray:
    """A(q) (..., n, n), rotor inertias on the diagonal, as :func:`robodyn.inertia_matrix`."""
    (q,), _ = _broadcast(robot, (q,), None)
    return _scan_derivatives(lambda a: jax_inertia_matrix(robot, a), lambda a: _scanned_inertia_matrix(robot, a))(q)


def forward_dynamics(robot: Robot, q, qd, tau, gravity=None) -> jnp.ndarray:
    """q̈ = A⁻¹ (Γ − H(q, q̇)) (..., n), as :func:`robodyn.forward_dynamics`; derivatives by the implicit function
    dq̈ = A⁻¹ (dΓ − ∂H/∂q dq − ∂H/∂q̇ dq̇ − ∂H/∂g dg), H's derivatives at (q, q̇, q̈) from the scanned recursion."""
    args, g = _broadcast(robot, (q, qd, tau), gravity)

    @jax.custom_jvp
    def fd(q, qd, tau, g):
        return jax_forward_dynamics(robot, q, qd, tau, g)

    @fd.defjvp
    def _(primals, tangents):
        q, qd, tau, g = primals
        dq, dqd, dtau, dg = tangents
        qdd = fd(q, qd, tau, g)
        _, dh = jax.jvp(lambda a, b, c: _scanned_inverse_dynamics(robot, a, b, qdd, c), (q, qd, g), (dq, dqd, dg))
        A = _scanned_inertia_matrix(robot, q)
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
        z, pf = R[fr.joint_frames, :, 2], P[fr.joint_frames]
        linear = revolute[:, None] * jnp.cross(z, p - pf) + prismatic[:, None] * z
        return jnp.concatenate([linear, revolute[:, None] * z], -1).T

    q = jnp.asarray(q)
    if point is None:
        return _vmapped(one, q.shape[:-1], (q,))
    s = jnp.asarray(point, q.dtype)
    batch = jnp.broadcast_shapes(q.shape[:-1], s.shape[:-1])
    return _vmapped(one, batch, (jnp.broadcast_to(q, batch + q.shape[-1:]), jnp.broadcast_to(s, batch + (3,))))


def _scan_derivatives(evaluated, scanned):
    """``evaluated`` (the straight-line program, fastest to run) with the derivatives of ``scanned`` (the same
    function as scans over the frames, fast to compile when differentiated, to any order)."""
    f = jax.custom_jvp(evaluated)
    f.defjvp(lambda primals, tangents: jax.jvp(scanned, primals, tangents))
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


def _scanned_inverse_dynamics(robot: Robot, q, qd, qdd, g):
    fr, links = _frames(robot), _links(robot, q.dtype)
    rigid = _vmapped(lambda a, b, c, d: _rigid_torques(fr, links, a, b, c, d), q.shape[:-1], (q, qd, qdd, g))
    coefficients = [robot.joint_values(k).astype(q.dtype) for k in ("Fc", "Fv", "Foff", "Fst")]
    Fc, Fv, Foff, Fst = coefficients
    kst, Bst = (robot.joint_values(k).astype(q.dtype) for k in ("kst", "Bst"))
    friction = friction_law(qd, Fc, Fv, Foff, Fst, Fst - Fc, kst, Bst, jax_backend())
    return rigid + robot.derived.Ia.astype(q.dtype) * qdd + friction


def _scanned_gravity_torques(robot: Robot, q, g):
    fr, links = _frames(robot), _links(robot, q.dtype)
    zero = jnp.zeros(q.shape[-1:], q.dtype)
    return _vmapped(lambda a, d: _rigid_torques(fr, links, a, zero, zero, d), q.shape[:-1], (q, g))


def _scanned_inertia_matrix(robot: Robot, q):
    """A(q) column by column: column k is Γ_rigid(q, 0, e_k) with g = 0 (vmapped over k), plus Ia on the diagonal."""
    fr, links = _frames(robot), _links(robot, q.dtype)
    n, dt = q.shape[-1], q.dtype
    zero, g0 = jnp.zeros(n, dt), jnp.zeros(3, dt)

    def one(q):
        columns = jax.vmap(lambda e: _rigid_torques(fr, links, q, zero, e, g0))(jnp.eye(n, dtype=dt))
        return columns.T + jnp.diag(jnp.asarray(robot.derived.Ia, dt))

    return _vmapped(one, q.shape[:-1], (q,))


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


# ---- the recursions as scans over frames (compile in seconds under grad, vmap(grad), hessian) ----


class _Frames(NamedTuple):
    """Per-frame constants of the scanned recursions, stacked over the frames (0-based, antecedents first)."""
    C: np.ndarray       # (nf, 3, 3) Rot(z, γ_j) Rot(x, α_j)
    p0: np.ndarray      # (nf, 3) Rot(z, γ_j) [d_j, 0, b_j]
    theta: np.ndarray   # (nf,)
    r: np.ndarray       # (nf,)
    revolute: np.ndarray  # (nf,) 1.0 where σ_j = 0
    prismatic: np.ndarray  # (nf,) 1.0 where σ_j = 1
    parent: np.ndarray  # (nf,) int, nf for the base (a slot of the carried arrays)
    joint: np.ndarray   # (nf,) int: the frame's index in q, n for a fixed frame (a zero appended to q)
    joint_frames: np.ndarray  # (n,) int: the frames of q's entries


def _frames(robot: Robot) -> _Frames:
    nf, n = robot.nf, robot.n
    joint = np.full(nf, n)
    joint[robot.joint_frames] = np.arange(n)
    return _Frames(np.array([t[0] for t in robot.derived.transforms]).reshape(nf, 3, 3),
                   np.array([t[1] for t in robot.derived.transforms]).reshape(nf, 3),
                   np.asarray(robot.theta, float), np.asarray(robot.r, float),
                   (robot.sigma == 0).astype(float), (robot.sigma == 1).astype(float),
                   np.array([p if p >= 0 else nf for p in robot.derived.parent], int), joint,
                   np.asarray(robot.joint_frames))


def _per_frame(fr: _Frames, x):
    """The joint values x (n,) as one value per frame (0 on fixed frames)."""
    return jnp.concatenate([x, jnp.zeros((1,), x.dtype)])[fr.joint]


def _local(fr: _Frames, Ci, p0i, thi, ri, rev, pri, qi):
    """^{a}A_j = C Rot(z, θ_j + σ̄_j q_j) and ^{a}P_j = p0 + (r_j + σ_j q_j) C z (Khalil & Dombre ch. 3)."""
    th = thi + rev * qi
    c, s = jnp.cos(th), jnp.sin(th)
    A = jnp.stack([Ci[:, 0] * c + Ci[:, 1] * s, Ci[:, 1] * c - Ci[:, 0] * s, Ci[:, 2]], -1)
    return A, p0i + (ri + pri * qi) * Ci[:, 2]


def _poses(fr: _Frames, q):
    """^0A_j (nf, 3, 3) and ^0P_j (nf, 3) of one state q (n,): a scan over frames, antecedents gathered from the
    carried arrays (a tree's antecedent array)."""
    nf = fr.parent.size
    dt = q.dtype

    def step(carry, x):
        R0, P0 = carry
        i, Ci, p0i, thi, ri, rev, pri, pa, qi = x
        A, P = _local(fr, Ci, p0i, thi, ri, rev, pri, qi)
        R, Pw = R0[pa] @ A, P0[pa] + R0[pa] @ P
        return (R0.at[i].set(R), P0.at[i].set(Pw)), (R, Pw)

    init = (jnp.broadcast_to(jnp.eye(3, dtype=dt), (nf + 1, 3, 3)), jnp.zeros((nf + 1, 3), dt))
    xs = (jnp.arange(nf), *(jnp.asarray(a, dt) for a in (fr.C, fr.p0, fr.theta, fr.r, fr.revolute, fr.prismatic)),
          jnp.asarray(fr.parent), _per_frame(fr, q))
    _, (R, P) = jax.lax.scan(step, init, xs)
    return R, P


def _rigid_torques(fr: _Frames, links, q, qd, qdd, g):
    """Γ_rigid (n,) of one state by Newton–Euler [9.84]–[9.93], both recursions scans over the frames.

    ``links`` (nf, 10): XX XY XZ YY YZ ZZ MX MY MZ M of every link; g (3,) in R_0.
    """
    nf, dt = fr.parent.size, q.dtype
    ez = jnp.array([0.0, 0.0, 1.0], dt)

    def forward(carry, x):
        W, WD, VD = carry
        i, Ci, p0i, thi, ri, rev, pri, pa, qi, qdi, qddi, li = x
        A, P = _local(fr, Ci, p0i, thi, ri, rev, pri, qi)
        wa, wda = W[pa], WD[pa]
        wi = A.T @ wa  # [9.84]
        w = wi + rev * qdi * ez  # [9.85]
        wd = A.T @ wda + rev * (qddi * ez + jnp.cross(wi, qdi * ez))  # [9.86]
        vd = A.T @ (VD[pa] + jnp.cross(wda, P) + jnp.cross(wa, jnp.cross(wa, P))) \
            + pri * (qddi * ez + 2 * jnp.cross(wi, qdi * ez))  # [9.87]
        J = jnp.array([[li[0], li[1], li[2]], [li[1], li[3], li[4]], [li[2], li[4], li[5]]])
        MS, M = li[6:9], li[9]
        F = M * vd + jnp.cross(wd, MS) + jnp.cross(w, jnp.cross(w, MS))  # [9.88]
        N = J @ wd + jnp.cross(w, J @ w) + jnp.cross(MS, vd)  # [9.89]
        return (W.at[i].set(w), WD.at[i].set(wd), VD.at[i].set(vd)), (A, P, F, N)

    zero = jnp.zeros((nf + 1, 3), dt)
    xs = (jnp.arange(nf), *(jnp.asarray(a, dt) for a in (fr.C, fr.p0, fr.theta, fr.r, fr.revolute, fr.prismatic)),
          jnp.asarray(fr.parent), *(_per_frame(fr, x) for x in (q, qd, qdd)), links)
    _, (A, P, F, N) = jax.lax.scan(forward, (zero, zero, zero.at[nf].set(-g)), xs)  # V̇_0 = −g [9.80]

    def backward(carry, x):
        f_acc, n_acc = carry
        i, Ai, Pi, Fi, Ni, pa, pri = x
        f, m = Fi + f_acc[i], Ni + n_acc[i]  # [9.91]
        fa = Ai @ f  # [9.92]–[9.93]
        return (f_acc.at[pa].add(fa), n_acc.at[pa].add(Ai @ m + jnp.cross(Pi, fa))), pri * f[2] + (1 - pri) * m[2]

    xs = (jnp.arange(nf), A, P, F, N, jnp.asarray(fr.parent), jnp.asarray(fr.prismatic, dt))
    _, tau = jax.lax.scan(backward, (zero, zero), xs, reverse=True)
    return tau[fr.joint_frames]
