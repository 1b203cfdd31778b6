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

from robodyn.dynamics.composite import inertia_rows
from robodyn.dynamics.floating import augmented_robot
from robodyn.dynamics.newton_euler import rnea_components
from robodyn.model.friction import friction_components
from robodyn.model.robot import Robot
from robodyn.parameters.regressor import link_columns
from robodyn.spatial import jax_backend, jax_matrix, jax_vector

__all__ = ("inverse_dynamics", "gravity_torques", "inertia_matrix", "forward_dynamics", "regressor",
           "floating_inverse_dynamics", "floating_inertia_matrix", "floating_forward_dynamics")


def _rows(x, n: int) -> list:
    x = jnp.asarray(x)
    return [x[..., k] for k in range(n)]


def _gravity(robot: Robot, gravity) -> tuple:
    g = robot.gravity if gravity is None else gravity
    g = jnp.asarray(g)
    return (g[..., 0], g[..., 1], g[..., 2])


def inverse_dynamics(robot: Robot, q, qd, qdd, gravity=None) -> jnp.ndarray:
    """Γ = Γ_rigid + Ia q̈ + Γ_f(q̇) by Newton–Euler, Khalil & Dombre [9.84]–[9.94], (..., n)."""
    n, backend = robot.n, jax_backend()
    q, qd, qdd = jnp.broadcast_arrays(jnp.asarray(q), jnp.asarray(qd), jnp.asarray(qdd))
    qd_rows, qdd_rows = _rows(qd, n), _rows(qdd, n)
    tau = rnea_components(robot, _rows(q, n), qd_rows, qdd_rows, _gravity(robot, gravity), backend=backend)
    friction = friction_components(robot, qd_rows, backend)
    return jax_vector([t + float(Ia) * a + f for t, Ia, a, f in zip(tau, robot.derived.Ia, qdd_rows, friction)], q)


def gravity_torques(robot: Robot, q, gravity=None) -> jnp.ndarray:
    """Q(q) = Γ(q, 0, 0) without friction, [9.8], (..., n)."""
    n = robot.n
    zeros = [0.0] * n
    tau = rnea_components(robot, _rows(q, n), zeros, zeros, _gravity(robot, gravity), backend=jax_backend())
    return jax_vector(tau, q)


def inertia_matrix(robot: Robot, q) -> jnp.ndarray:
    """A(q) by composite links (Khalil & Dombre Appendix 8, [9.12]), rotor inertias on the diagonal, (..., n, n)."""
    q = jnp.asarray(q)
    return jax_matrix(inertia_rows(robot, _rows(q, robot.n), jax_backend()), q)


def forward_dynamics(robot: Robot, q, qd, tau, gravity=None) -> jnp.ndarray:
    """q̈ = A⁻¹(Γ − H(q, q̇)) [9.95]–[9.96], A by composite links and H by Newton–Euler, (..., n)."""
    q, qd, tau = jnp.broadcast_arrays(jnp.asarray(q), jnp.asarray(qd), jnp.asarray(tau))
    H = inverse_dynamics(robot, q, qd, jnp.zeros_like(q), gravity)
    return jnp.linalg.solve(inertia_matrix(robot, q), (tau - H)[..., None])[..., 0]


def regressor(robot: Robot, q, qd, qdd, friction: bool = True, gravity=None) -> jnp.ndarray:
    """D(q, q̇, q̈) of Γ = D K [9.36], (..., n, 11 nf (+ 3 n)), columns as :func:`robodyn.regressor`."""
    n, nf = robot.n, robot.nf
    q, qd, qdd = jnp.broadcast_arrays(jnp.asarray(q), jnp.asarray(qd), jnp.asarray(qdd))
    qd_rows, qdd_rows = _rows(qd, n), _rows(qdd, n)
    D = [[0.0] * (11 * nf + (3 * n if friction else 0)) for _ in range(n)]
    for k, col, value in link_columns(robot, _rows(q, n), qd_rows, qdd_rows, _gravity(robot, gravity),
                                      backend=jax_backend()):
        D[k][col] = value
    for k, j in enumerate(robot.joint_frames):
        D[k][11 * int(j) + 10] = qdd_rows[k]  # Ia_k q̈_k [9.94]
        if friction:  # [9.26]–[9.28]
            D[k][11 * nf + 3 * k: 11 * nf + 3 * k + 3] = [jnp.sign(qd_rows[k]), qd_rows[k], 1.0]
    return jax_matrix(D, q)


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
