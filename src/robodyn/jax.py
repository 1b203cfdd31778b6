"""Pure JAX versions of the main dynamics functions, traceable by ``jax.jit``, ``jax.vmap`` and ``jax.grad``.

They run robodyn's own recursions (:func:`robodyn.dynamics.newton_euler.rnea_components`, the composite links of
:mod:`robodyn.dynamics.composite`) with the JAX scalar backend (:func:`robodyn.spatial.jax_backend`), so they give
the NumPy functions' numbers (enable 64-bit floats with ``jax.config.update("jax_enable_x64", True)`` to compare at
float64 precision).  Install with the ``jax`` extra: ``pip install 'robodyn[jax]'``.

Every function takes joint arrays of shape (..., n) (leading batch axes broadcast) and returns JAX arrays; there is
no argument checking beyond what JAX does, since these are meant to be traced.
"""

from __future__ import annotations

import jax.numpy as jnp

from robodyn.dynamics.composite import jax_inertia_matrix
from robodyn.dynamics.floating import augmented_robot
from robodyn.dynamics.newton_euler import jax_gravity_torques, jax_inverse_dynamics
from robodyn.dynamics.recursive import jax_forward_dynamics
from robodyn.model.robot import Robot
from robodyn.parameters.regressor import jax_regressor

__all__ = ("inverse_dynamics", "gravity_torques", "inertia_matrix", "forward_dynamics", "regressor",
           "floating_inverse_dynamics", "floating_inertia_matrix", "floating_forward_dynamics")


#: the fixed-base functions are the formulations' own JAX recursions, the ones ``rd.inverse_dynamics`` & co. run on
#: JAX arrays (robodyn.dynamics.executor)
inverse_dynamics = jax_inverse_dynamics
gravity_torques = jax_gravity_torques
inertia_matrix = jax_inertia_matrix
forward_dynamics = jax_forward_dynamics


def regressor(robot: Robot, q, qd, qdd, friction: bool = True, gravity=None) -> jnp.ndarray:
    """D(q, q̇, q̈) of Γ = D K [9.36], (..., n, 11 nf (+ 3 n)), columns as :func:`robodyn.regressor`."""
    return jax_regressor(robot, q, qd, qdd, gravity, friction=friction)


# ---- floating and mobile bases: the augmented robot of robodyn.dynamics.floating (Pinocchio's free-flyer arrays) ----


def _free_flyer(robot: Robot, q, v, a, gravity):
    """(q, q̇, q̈ of the augmented robot, gravity in R_0) at a free-flyer state (robodyn.dynamics.floating notes)."""
    q, v = jnp.asarray(q), jnp.asarray(v)
    quat = q[..., 3:7] / jnp.linalg.norm(q[..., 3:7], axis=-1, keepdims=True)
    x, y, z, w = (quat[..., i] for i in range(4))
    g = jnp.asarray(robot.gravity if gravity is None else gravity)
    # ^0R_w g: the rows of R (quaternion x, y, z, w) dotted with g
    rows = ((1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
            (2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
            (2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)))
    g0 = jnp.stack([sum(rows[r][c] * g[..., r] for r in range(3)) for c in range(3)], -1)
    qa = jnp.concatenate([jnp.zeros(q.shape[:-1] + (6,), q.dtype), q[..., 7:]], -1)
    if a is None:
        return qa, v, None, g0
    a = jnp.asarray(a)
    vl, om = v[..., :3], v[..., 3:6]
    coupling = jnp.stack([om[..., 1] * om[..., 2], -om[..., 0] * om[..., 2], om[..., 0] * om[..., 1]], -1)
    return qa, v, jnp.concatenate([a[..., :3] + jnp.cross(om, vl), a[..., 3:6] - coupling, a[..., 6:]], -1), g0


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
