"""Newton–Euler inverse dynamics (Khalil & Dombre §9.5.3, [9.84]–[9.94]), batched, trees included.

The robot's joint torques are

    Γ = Γ_rigid(q, q̇, q̈, g, f_e) + Ia q̈ + Γ_f(q̇)                           [9.94]

with Γ_f the friction of [9.26]–[9.28] plus a constant offset.  Forward recursion [9.84]–[9.90]
(V̇_0 = −g, [9.80]); backward recursion [9.91]–[9.93] summed over the children of each frame, so that
any antecedent array (tree) works.
"""

from __future__ import annotations


import numpy as np

from robodyn.arrays import check_array, finite_result
from robodyn.model.arguments import joint_arrays
from robodyn.kinematics import forward_frames, run_blocks, wrench_to_parent
from robodyn.model.friction import friction_components, friction_of, with_friction
from robodyn.model.robot import Robot
from robodyn.dynamics import executor
from robodyn.dynamics.trace import Rec, opaque
from robodyn.spatial import (ScalarBackend, euler_moment, frame_wrench, jax_backend, jax_gravity, jax_rows, jax_vector, label,
                             mat_mv, vadd, vcross, vscale)


def rnea(robot: Robot, q, qd, qdd, gravity, wrenches=None) -> np.ndarray:
    """Rigid-body torques plus rotor inertia, Γ_rigid + Ia q̈, without friction (arrays already checked).

    Parameters
    ----------
    q, qd, qdd : ndarray (..., n), one floating dtype.
    gravity : ndarray (3,) or (..., 3), g in R_0 (m/s²).
    wrenches : ndarray (..., nf, 6) or None — [f_ej; m_ej] exerted by link j on the environment, in R_j,
        moment about O_j.

    Returns
    -------
    ndarray (..., n)
    """
    return run_blocks(robot, rnea_components, (q, qd, qdd), gravity, wrenches) + robot.derived.Ia.astype(q.dtype) * qdd


def rnea_components(robot: Robot, q, qd, qdd, g, wr=None, backend: ScalarBackend | None = None) -> list:
    """Newton–Euler [9.84]–[9.94] on component scalars: the one implementation every numeric path runs.

    Khalil & Dombre's customized form (§9.5.3, §9.6.2): the forward recursion of
    :func:`robodyn.kinematics.forward_frames` (^jU_j [9.90], ^aU_a ^aP_j in [9.87]), then per frame

        ^jF_j = M_j ^jV̇_j + ^jU_j ^jMS_j                                       [9.88]
        ^jN_j = ^jJ_j ^jω̇_j + ^jω_j × (^jJ_j ^jω_j) + ^jMS_j × ^jV̇_j             [9.89]

    (the first two terms by :func:`robodyn.spatial.euler_moment`, five products a component), and the backward
    recursion [9.91]–[9.93] summed over the children of each frame.  Traced, it is the customized model of
    :func:`robodyn.customized_model` (docs/symbolic.md).

    Parameters
    ----------
    q, qd, qdd : sequences of n scalars: (B,) NumPy arrays, Python floats, traced JAX arrays or recording
        scalars (see :mod:`robodyn.spatial`).
    g : 3 scalars, gravity in R_0 (m/s²).
    wr : sequence of 6 nf scalars or None, the rows of ``wrenches`` flattened ([f_ej; m_ej] per frame, in R_j).
    backend : ScalarBackend, optional
        cos and sin of the joint angles; default by the type of each q_j.

    Returns
    -------
    list of n scalars: the joint torques of the rigid bodies, rotor inertia and friction not included.
    """
    rot, f, m = [], [], []
    links = robot.derived.links
    # each frame's wrench as soon as its state is known, so that U_j and DV_j are dropped at once
    for st in forward_frames(robot, q, qd, qdd, g, backend):
        J, MS, M = links[st.i]
        F = vadd(vscale(M, st.Vd), mat_mv(st.U, MS))  # [9.88]: M V̇ + U MS
        N = vadd(euler_moment(J, st.wd, st.dv, st.U), vcross(MS, st.Vd))  # [9.89]
        if wr is not None:
            fe, me = frame_wrench(wr, st.i)
            F, N = vadd(F, fe), vadd(N, me)
        rot.append(st.rot)
        f.append(label("F", st.i + 1, _named(F)))
        m.append(label("N", st.i + 1, _named(N)))
    for i in range(robot.nf - 1, -1, -1):
        p = robot.derived.parent[i]
        if p >= 0:
            fp, mp = wrench_to_parent(rot[i], (label("FJ", i + 1, f[i]), m[i]))  # [9.92]–[9.93]
            label("FDI", i + 1, fp)  # ^{a}f_j
            f[p] = vadd(f[p], fp)  # [9.91]
            m[p] = vadd(m[p], mp)
    return [f[i][2] if robot.sigma[i] == 1 else m[i][2] for i in robot.joint_frames]  # first term of [9.94]


def _named(v):
    """The components of a link wrench as variables of their own (SYMORO's F_j, N_j; trace.opaque).

    In a recording that merges constant coefficients, a component c·x (e.g. N_6 = ZZ_6 ω̇_6 with the base
    parameters) would carry its constant into each product of the backward recursion, C_j (c x) = c (C_j x): one
    product more per use.  Numbers pass unchanged.
    """
    return tuple(opaque(x) if isinstance(x, Rec) and x.g.simplify else x for x in v)


def friction_torques(robot: Robot, qd) -> np.ndarray:
    """Friction Γ_f(q̇) of every joint.

    Γ_f = F_c sign(q̇) + F_v q̇ + (F_st − F_c) sign(q̇) exp(−k_st |q̇|^B_st) + F_off      [9.26]–[9.28]

    The Stribeck term is used only where F_st ≠ 0; F_off is a constant offset (used in identification).

    Parameters
    ----------
    robot : Robot
    qd : array_like (..., n)
        Joint velocities (rad/s | m/s).

    Returns
    -------
    ndarray (..., n)
        Friction torques (N m) / forces (N); float32 if ``qd`` is.
    """
    _, _, a = joint_arrays(robot, qd=qd)
    return finite_result("friction_torques", friction_of(robot, a["qd"]))


def gravity_argument(robot: Robot, gravity, batch, dtype) -> np.ndarray:
    """The ``gravity=`` argument of the dynamics functions, checked: (3,) or (..., 3), default ``robot.gravity``."""
    g = robot.gravity if gravity is None else gravity
    return check_array("gravity", g, (3,), batch, dtype)


def wrenches_argument(robot: Robot, wrenches, batch, dtype):
    """The ``wrenches=`` argument, checked: (..., nf, 6) rows [f_ej; m_ej] in R_j, or None."""
    return None if wrenches is None else check_array("wrenches", wrenches, (robot.nf, 6), batch, dtype)


def inverse_dynamics(robot: Robot, q, qd, qdd, wrenches=None, gravity=None, out=None, trig: str = "exact") -> np.ndarray:
    """Inverse dynamic model Γ = f(q, q̇, q̈, f_e) by the Newton–Euler algorithm, [9.84]–[9.94].

    Arguments, units and result as :func:`robodyn.inverse_dynamics` (``method="newton_euler"``, fixed base); the
    wrench rows [f_ej; m_ej] enter as [9.91], [9.93], fixed frames (σ = 2) included.
    """
    return executor.execute(_INVERSE, robot, q, qd, qdd, wrenches, gravity, None, out, trig)


def _inverse_numpy(robot: Robot, q, qd, qdd, g, fe) -> np.ndarray:
    return rnea(robot, q, qd, qdd, g, fe) + friction_of(robot, qd)


def gravity_torques(robot: Robot, q, gravity=None, out=None, trig: str = "exact") -> np.ndarray:
    """Gravity torques Q(q) = ∂U/∂q = Γ(q, q̇ = 0, q̈ = 0) without friction ([9.8], [9.25]).

    Parameters
    ----------
    robot : Robot
    q : array_like (..., n)
        Joint positions (rad | m).
    gravity : array_like (3,) or (..., 3), optional
        g in the base frame R_0 (m/s²); default ``robot.gravity``.
    out : ndarray, optional
        The result's buffer, as in :func:`robodyn.inverse_dynamics`.
    trig : str
        ``"exact"`` (default) or ``"fast"``, as in :func:`robodyn.inverse_dynamics`.

    Returns
    -------
    ndarray (..., n)
        Q (N m | N); float32 if every input is.
    """
    return executor.execute(_GRAVITY, robot, q, None, None, None, gravity, None, out, trig)


def _gravity_numpy(robot: Robot, q, g, fe) -> np.ndarray:
    z = np.zeros_like(q)
    return rnea(robot, q, z, z, g)


def bias_torques(robot: Robot, q, qd, wrenches=None, gravity=None, friction: bool = True, out=None) -> np.ndarray:
    """H(q, q̇) = Γ(q, q̇, q̈ = 0): Coriolis, centrifugal, gravity, friction and wrench torques ([9.95]).

    Parameters
    ----------
    robot : Robot
    q, qd : array_like (..., n)
        Joint positions (rad | m) and velocities (rad/s | m/s).
    wrenches : array_like (..., nf, 6), optional
        As in :func:`inverse_dynamics`: exerted BY link j ON the environment, in R_j, moment about O_j.
    gravity : array_like (3,) or (..., 3), optional
        g in the base frame R_0 (m/s²); default ``robot.gravity``.
    friction : bool
        False leaves the joint friction Γ_f out of H.
    out : ndarray, optional
        The result's buffer, as in :func:`robodyn.inverse_dynamics`.

    Returns
    -------
    ndarray (..., n)
        H (N m | N); float32 if every input is.
    """
    return executor.execute(_BIAS, with_friction(robot, friction), q, qd, None, wrenches, gravity, None, out)


def _bias_numpy(robot: Robot, q, qd, g, fe) -> np.ndarray:
    return rnea(robot, q, qd, np.zeros_like(qd), g, fe) + friction_of(robot, qd)


def jax_inverse_dynamics(robot: Robot, q, qd, qdd, gravity=None):
    """Γ = Γ_rigid + Ia q̈ + Γ_f(q̇) [9.84]–[9.94] on JAX arrays (..., n), traceable by ``jax.jit`` / ``vmap`` /
    ``grad``: :func:`rnea_components` on the JAX backend (:func:`robodyn.spatial.jax_backend`)."""
    backend = jax_backend()
    like, (q, qd, qdd) = jax_rows(robot.n, q, qd, qdd)
    tau = rnea_components(robot, q, qd, qdd, jax_gravity(robot.gravity if gravity is None else gravity), backend=backend)
    friction = friction_components(robot, qd, backend)
    return jax_vector([t + float(Ia) * a + f for t, Ia, a, f in zip(tau, robot.derived.Ia, qdd, friction)], like)


def jax_gravity_torques(robot: Robot, q, gravity=None):
    """Q(q) = Γ(q, 0, 0) without friction [9.8] on JAX arrays (..., n), traceable."""
    zeros = [0.0] * robot.n
    like, (q,) = jax_rows(robot.n, q)
    g = jax_gravity(robot.gravity if gravity is None else gravity)
    return jax_vector(rnea_components(robot, q, zeros, zeros, g, backend=jax_backend()), like)


_INVERSE = executor.Algorithm("inverse_dynamics", _inverse_numpy, single=True, batch=True, jax=jax_inverse_dynamics)
_GRAVITY = executor.Algorithm("gravity_torques", _gravity_numpy, ("q",), single=True, batch=True,
                              jax=jax_gravity_torques)
_BIAS = executor.Algorithm("bias_torques", _bias_numpy, ("q", "qd"), single=True, batch=True)
