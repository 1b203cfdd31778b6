"""Pure JAX versions of the main dynamics and kinematics functions, traceable by ``jax.jit``, ``jax.vmap``,
``jax.grad``, ``jax.jacfwd`` and ``jax.hessian``.

Evaluated, they run robodyn's own recursions (:func:`robodyn.dynamics.newton_euler.rnea_components`, the composite
links of :mod:`robodyn.dynamics.composite`) with the JAX scalar backend (:func:`robodyn.spatial.jax_backend`): one
straight-line program per robot, which XLA compiles in about 2 s and runs fastest (docs/scaling.md).  Differentiated,
inverse dynamics, gravity torques, the inertia matrix and forward dynamics take their derivatives (``jax.custom_jvp``)
from the same Newton–Euler equations [9.84]–[9.94] projected on R_0 and written without a loop over the frames
(:mod:`robodyn.dynamics.loop_free`), and forward dynamics from the implicit function
dq̈ = A⁻¹ (dΓ − ∂H/∂q dq − ∂H/∂q̇ dq̇ − ∂H/∂g dg): the differentiated program stays small, so ``grad``, ``vmap(grad)``,
a scanned rollout's ``value_and_grad`` and ``hessian`` compile in seconds where differentiating the straight-line
program takes minutes.  Frame poses and Jacobians (:func:`forward_kinematics`, :func:`jacobian`) are loop-free too.

They give the NumPy functions' numbers (enable 64-bit floats with ``jax.config.update("jax_enable_x64", True)`` to
compare at float64 precision).  Install with the ``jax`` extra: ``pip install 'robodyn[jax]'``.

Every function takes joint arrays of shape (..., n) (leading batch axes broadcast) and returns JAX arrays; there is
no argument checking beyond what JAX does, since these are meant to be traced.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from robodyn.dynamics import loop_free
from robodyn.dynamics.composite import jax_inertia_matrix
from robodyn.dynamics.floating import augmented_robot
from robodyn.dynamics.newton_euler import jax_gravity_torques, jax_inverse_dynamics
from robodyn.dynamics.recursive import jax_forward_dynamics
from robodyn.kinematics import ancestors
from robodyn.model.arguments import frame_index
from robodyn.model.robot import Robot
from robodyn.parameters.regressor import jax_regressor
from robodyn.spatial import quaternion_rows, velocity_products

__all__ = ("inverse_dynamics", "gravity_torques", "inertia_matrix", "forward_dynamics", "regressor",
           "forward_kinematics", "jacobian",
           "floating_inverse_dynamics", "floating_inertia_matrix", "floating_forward_dynamics")


def inverse_dynamics(robot: Robot, q, qd, qdd, gravity=None) -> jnp.ndarray:
    """Γ = Γ_rigid + Ia q̈ + Γ_f(q̇) [9.84]–[9.94] (..., n), as :func:`robodyn.inverse_dynamics` (g in R_0)."""
    args, g = _broadcast(robot, (q, qd, qdd), gravity)
    return _derivatives_from(lambda *a: jax_inverse_dynamics(robot, *a),
                             lambda *a: loop_free.inverse_dynamics(robot, *a))(*args, g)


def gravity_torques(robot: Robot, q, gravity=None) -> jnp.ndarray:
    """Q(q) (..., n): Γ_rigid at q̇ = q̈ = 0, as :func:`robodyn.gravity_torques`."""
    (q,), g = _broadcast(robot, (q,), gravity)
    return _derivatives_from(lambda *a: jax_gravity_torques(robot, *a),
                             lambda *a: loop_free.gravity_torques(robot, *a))(q, g)


def inertia_matrix(robot: Robot, q) -> jnp.ndarray:
    """A(q) (..., n, n), rotor inertias on the diagonal, as :func:`robodyn.inertia_matrix`."""
    (q,), _ = _broadcast(robot, (q,), None)
    return _derivatives_from(lambda a: jax_inertia_matrix(robot, a), lambda a: loop_free.inertia_matrix(robot, a))(q)


def forward_dynamics(robot: Robot, q, qd, tau, gravity=None) -> jnp.ndarray:
    """q̈ = A⁻¹ (Γ − H(q, q̇)) (..., n), as :func:`robodyn.forward_dynamics`; derivatives by the implicit function
    dq̈ = A⁻¹ (dΓ − ∂H/∂q dq − ∂H/∂q̇ dq̇ − ∂H/∂g dg), H's derivatives at (q, q̇, q̈) from the loop-free recursion."""
    args, g = _broadcast(robot, (q, qd, tau), gravity)

    @jax.custom_jvp
    def fd(q, qd, tau, g):
        return jax_forward_dynamics(robot, q, qd, tau, g)

    def rule(primals, tangents):
        (q, qd, tau, g), (dq, dqd, dtau, dg) = primals, tangents
        return loop_free.implicit_forward_dynamics(lambda a, b, c, d: loop_free.inverse_dynamics(robot, a, b, d, c),
                                                   lambda a, b, c: loop_free.inertia_matrix(robot, a),
                                                   (q, qd, g), (dq, dqd, dg), tau, dtau)

    fd.defjvp(rule, symbolic_zeros=True)
    return fd(*args, g)


def regressor(robot: Robot, q, qd, qdd, friction: bool = True, gravity=None) -> jnp.ndarray:
    """D(q, q̇, q̈) of Γ = D K [9.36], (..., n, 11 nf (+ 3 n)), columns as :func:`robodyn.regressor`."""
    return jax_regressor(robot, q, qd, qdd, gravity, friction=friction)


def forward_kinematics(robot: Robot, q) -> jnp.ndarray:
    """^0T_j (..., nf, 4, 4) of every frame j = 1..nf, as :func:`robodyn.forward_kinematics`."""
    fr = loop_free.frames(robot)
    q = jnp.asarray(q)
    R, P = loop_free.vmapped(lambda a: loop_free.poses(fr, a), q.shape[:-1], (q,))
    top = jnp.concatenate([R, P[..., None]], -1)
    bottom = jnp.broadcast_to(jnp.array([0.0, 0.0, 0.0, 1.0], q.dtype), top.shape[:-2] + (1, 4))
    return jnp.concatenate([top, bottom], -2)


def jacobian(robot: Robot, q, frame=None, point=None) -> jnp.ndarray:
    """Geometric Jacobian (..., 6, n) of frame ``frame`` (number 1..nf or name, default the end frame) at its
    origin or at ``point`` (..., 3) fixed to the link (coordinates in R_j), [v; ω] = J q̇ in R_0, as
    :func:`robodyn.jacobian`: column k is [z_f × (p − p_f); z_f] (revolute) or [z_f; 0] (prismatic) for the
    frames f between the base and frame j, zero otherwise."""
    fr, j = loop_free.frames(robot), frame_index(robot, frame)
    chain = set(ancestors(robot, j))
    on_path = np.array([float(f in chain) for f in robot.joint_frames])
    revolute = fr.revolute[fr.joint_frames] * on_path
    prismatic = fr.prismatic[fr.joint_frames] * on_path
    def one(q, s=None):
        R, P = loop_free.poses(fr, q)
        p = P[j] if s is None else P[j] + R[j] @ s
        z, pf = loop_free.take(fr.joint_frames, R[:, :, 2]), loop_free.take(fr.joint_frames, P)
        linear = revolute[:, None] * jnp.cross(z, p - pf) + prismatic[:, None] * z
        return jnp.concatenate([linear, revolute[:, None] * z], -1).T

    q = jnp.asarray(q)
    if point is None:
        return loop_free.vmapped(one, q.shape[:-1], (q,))
    s = jnp.asarray(point, q.dtype)
    batch = jnp.broadcast_shapes(q.shape[:-1], s.shape[:-1])
    return loop_free.vmapped(one, batch, (jnp.broadcast_to(q, batch + q.shape[-1:]), jnp.broadcast_to(s, batch + (3,))))


def _derivatives_from(evaluated, differentiated):
    """``evaluated`` (the straight-line program, fastest to run) with the derivatives of ``differentiated`` (the same
    function without a loop over the frames, fast to compile when differentiated, to any order)."""
    f = jax.custom_jvp(evaluated)
    f.defjvp(lambda primals, tangents: jax.jvp(differentiated, primals, tangents))
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
