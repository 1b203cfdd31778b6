"""The inverse dynamic model linear in the standard parameters, Γ = D(q, q̇, q̈) K  (Khalil & Dombre [9.36]).

Column order of D and K (Khalil & Dombre §9.4.1): for every frame j = 1..nf the 11 parameters

    XX_j XY_j XZ_j YY_j YZ_j ZZ_j MX_j MY_j MZ_j M_j Ia_j

then, with ``friction=True``, Fc_k, Fv_k, Foff_k of every joint variable k ([9.26]–[9.28]; the Stribeck term is
not linear in its parameters and has no column).  The wrench of link j, [9.88]–[9.89], is Φ_j(ω_j, ω̇_j, V̇_j) ^jK_j
(Φ_j 6 × 10) and the backward recursion [9.91]–[9.93] is linear: the block of joint k and link j is s_kjᵀ Φ_j
(:func:`link_columns`).  Vectors are component tuples over blocks of states, as in
:mod:`robodyn.dynamics.newton_euler`.
"""

from __future__ import annotations

import functools

import numpy as np

from robodyn.arrays import finite_array, finite_result, into
from robodyn.model.arguments import joint_arrays
from robodyn.dynamics import executor
from robodyn.model.robot import check_robot
from robodyn.kinematics import block_of, flat_columns, forward_components, gravity_components, state_blocks, twist_to_child
from robodyn.model.robot import PARAMETER_NAMES, Robot
from robodyn.spatial import c_add, c_mul, c_sub, jax_backend, jax_gravity, jax_matrix, jax_rows, vdot

#: Names of the 11 standard parameters of one link, in the order of D's columns.
LINK_PARAMETERS: tuple[str, ...] = PARAMETER_NAMES + ("Ia",)
#: Names of the 3 friction parameters of one joint, in the order of D's columns.
FRICTION_PARAMETERS: tuple[str, ...] = ("Fc", "Fv", "Foff")
#: Names of the parameters of one motor of a transmission (rotor inertia, Coulomb and viscous friction on q̇_m).
MOTOR_PARAMETERS: tuple[str, ...] = ("Iam", "Fcm", "Fvm")


def _motor_names(friction: bool) -> tuple[str, ...]:
    return MOTOR_PARAMETERS if friction else MOTOR_PARAMETERS[:1]


def _check_transmission(robot: Robot, transmission):
    from robodyn.arrays import check_type
    from robodyn.dynamics.transmission import Transmission
    from robodyn.errors import InputError

    check_type("transmission", transmission, Transmission)
    if transmission.n != robot.n:
        raise InputError(f"transmission has {transmission.n} motors but robot '{robot.name}' has n = {robot.n} "
                         f"joints; give a Transmission with one motor per joint")
    return transmission


def standard_parameter_names(robot: Robot, friction: bool = True, transmission=None) -> list[str]:
    """Names of the columns of D: ``XX1 .. Ia1, XX2 .. Ia<nf>`` then ``Fc1, Fv1, Foff1, .. Foff<n>``, then with a
    ``transmission`` the parameters of every motor i = 1..n: ``Iam<i>`` (rotor inertia) and, with friction,
    ``Fcm<i>, Fvm<i>`` (Coulomb and viscous friction on q̇_mi).

    Link numbers are frame numbers j = 1..nf; friction numbers are joint-variable numbers k = 1..n.
    """
    check_robot(robot)
    names = [f"{p}{j}" for j in range(1, robot.nf + 1) for p in LINK_PARAMETERS]
    if friction:
        names += [f"{p}{k}" for k in range(1, robot.n + 1) for p in FRICTION_PARAMETERS]
    if transmission is not None:
        _check_transmission(robot, transmission)
        names += [f"{p}{i}" for i in range(1, robot.n + 1) for p in _motor_names(friction)]
    return names


def standard_parameter_vector(robot: Robot, friction: bool = True, transmission=None) -> np.ndarray:
    """The standard parameter vector K of [9.36], in the order of :func:`standard_parameter_names`, (p,)."""
    check_robot(robot)
    K = np.concatenate([robot.params, robot.Ia[:, None]], axis=1).reshape(-1)
    if friction:
        jf = robot.joint_frames
        K = np.concatenate([K, np.stack([robot.Fc[jf], robot.Fv[jf], robot.Foff[jf]], -1).reshape(-1)])
    if transmission is not None:
        tr = _check_transmission(robot, transmission)
        motors = np.stack([tr.J_m, tr.Fc_m, tr.Fv_m], -1)[:, : len(_motor_names(friction))]
        K = np.concatenate([K, motors.reshape(-1)])
    return K


def motor_columns(transmission, qd, qdd, friction: bool = True) -> np.ndarray:
    """The regressor columns of the motor parameters of a transmission, (..., n, m n), m = 3 (1 without friction).

    The joint-side image of the motor terms of the motor-side model (De Luca; Khalil & Dombre [9.29]–[9.33]) is
    Γ_m = J_mqᵀ (J_m q̈_m + F_cm sign(q̇_m) + F_vm q̇_m) with q̇_m = J_mq q̇, linear in the constants of every motor i:
    its columns are J_mq[i, :]ᵀ q̈_mi, J_mq[i, :]ᵀ sign(q̇_mi), J_mq[i, :]ᵀ q̇_mi (order of ``MOTOR_PARAMETERS``).
    A motor that drives one joint only (a plain gear N) gives N² q̈ e_j, |N| sign(q̇_j) e_j, N² q̇ e_j: the
    columns of Ia_j, Fc_j, Fv_j scaled, which the base parameters regroup.
    """
    J = np.asarray(transmission.J_mq)
    qmd, qmdd = qd @ J.T, qdd @ J.T  # (..., n motors)
    parts = [qmdd] + ([np.sign(qmd), qmd] if friction else [])
    cols = np.stack([J.T * x[..., None, :] for x in parts], -1)  # (..., joint k, motor i, parameter)
    return cols.reshape(cols.shape[:-2] + (-1,))


def link_wrench_matrix(w: np.ndarray, wd: np.ndarray, Vd: np.ndarray) -> np.ndarray:
    """Φ_j with [F_j; M_j] = Φ_j ^jK_j, [9.88]–[9.89], for ^jK_j = [XX XY XZ YY YZ ZZ MX MY MZ M].

    F_j = M_j V̇_j + U_j MS_j,  M_j = J_j ω̇_j + ω_j × (J_j ω_j) + MS_j × V̇_j,  U_j = ω̂̇_j + ω̂_j ω̂_j [9.90].

    Parameters
    ----------
    w, wd, Vd : ndarray (..., 3)
        ^jω_j (rad/s), ^jω̇_j (rad/s²), ^jV̇_j (m/s², gravity included as V̇_0 = −g) in R_j.

    Returns
    -------
    ndarray (..., 6, 10): rows F (3) then M (3), about O_j in R_j.
    """
    w, wd, Vd = (finite_array(k, x) for k, x in (("w", w), ("wd", wd), ("Vd", Vd)))
    batch = np.broadcast_shapes(w.shape, wd.shape, Vd.shape)[:-1]
    Phi = np.zeros(batch + (6, 10), np.result_type(w, wd, Vd))
    parts = (tuple(x[..., c] for c in range(3)) for x in (w, wd, Vd))
    inertia, first_moments, Vd_ = _wrench_columns(*parts)
    zero = (0.0, 0.0, 0.0)
    for c, (f, m) in enumerate([(zero, m) for m in inertia] + list(first_moments) + [(Vd_, zero)]):
        for r, x in enumerate(f + m):
            if not (type(x) is float and x == 0.0):  # structural zero: keep Phi's own (int 0 for object arrays)
                Phi[..., r, c] = x
    return Phi


def _wrench_columns(w, wd, Vd) -> tuple:
    """The 10 columns of Φ_j (see :func:`link_wrench_matrix`) on component tuples, by their nonzero parts.

    w, wd, Vd: component tuples (floats or arrays, see :mod:`robodyn.spatial`); exact float zeros (a link at
    rest about an axis) make the corresponding products cost nothing.

    Returns ``(inertia, first_moments, Vd)``: the M parts of the columns XX..ZZ (their F parts are zero), the
    (F, M) pairs of the columns MX, MY, MZ, and the F part V̇_j of the column M (its M part is zero).
    """
    w0, w1, w2 = w
    a0, a1, a2 = wd
    w00, w11, w22 = c_mul(w0, w0), c_mul(w1, w1), c_mul(w2, w2)
    w01, w02, w12 = c_mul(w0, w1), c_mul(w0, w2), c_mul(w1, w2)
    # J ω̇ + ω × (J ω) for J = the unit tensor of XX, XY, XZ, YY, YZ, ZZ  ([9.89]): no force
    inertia = (
        (a0, w02, c_sub(0.0, w01)),
        (c_sub(a1, w02), c_add(a0, w12), c_sub(w00, w11)),
        (c_add(a2, w01), c_sub(w22, w00), c_sub(a0, w12)),
        (c_sub(0.0, w12), a1, w01),
        (c_sub(w11, w22), c_sub(a2, w01), c_add(a1, w02)),
        (w12, c_sub(0.0, w02), a2),
    )
    # F = U MS with the columns of U = ω̂̇ + ω̂ω̂ [9.90]; M = MS × V̇ [9.89]
    U = (
        (c_sub(0.0, c_add(w11, w22)), c_add(w01, a2), c_sub(w02, a1)),
        (c_sub(w01, a2), c_sub(0.0, c_add(w00, w22)), c_add(w12, a0)),
        (c_add(w02, a1), c_sub(w12, a0), c_sub(0.0, c_add(w00, w11))),
    )
    V0, V1, V2 = Vd
    first_moments = (
        (U[0], (0.0, c_sub(0.0, V2), V1)),
        (U[1], (V2, 0.0, c_sub(0.0, V0))),
        (U[2], (c_sub(0.0, V1), V0, 0.0)),
    )
    return inertia, first_moments, Vd  # F = M V̇ [9.88]


def regressor(robot: Robot, q, qd, qdd, friction: bool = True, gravity=None, transmission=None,
              out=None, trig: str = "exact") -> np.ndarray:
    """Regressor D(q, q̇, q̈) of the inverse dynamic model, Γ = D K  [9.36], batched.

    Parameters
    ----------
    robot : Robot
    q, qd, qdd : array_like (..., n)
        Joint positions (rad | m), velocities and accelerations; leading axes are batch axes.
    friction : bool
        Append the 3 n friction columns sign(q̇_k), q̇_k, 1 (parameters Fc_k, Fv_k, Foff_k).
    gravity : array_like (3,) or (..., 3), optional
        Overrides ``robot.gravity`` (base frame, m/s²).
    transmission : Transmission, optional
        Append the columns of the motor parameters ``Iam<i>`` (and ``Fcm<i>, Fvm<i>`` with friction) of every
        motor, the joint-side image J_mqᵀ (J_m q̈_m + F_cm sign(q̇_m) + F_vm q̇_m) of the rotors (see
        :func:`motor_columns`); joint-side data.
    out : ndarray, optional
        The result's buffer, as in :func:`robodyn.inverse_dynamics`.
    trig : str
        ``"exact"`` (default) or ``"fast"``, as in :func:`robodyn.inverse_dynamics`.

    Returns
    -------
    ndarray (..., n, p), p = 11 nf (+ 3 n) (+ 3 n or n with a transmission): columns as
        :func:`standard_parameter_names`.  ``regressor(robot, q, qd, qdd) @ standard_parameter_vector(robot)``
        equals ``inverse_dynamics(robot, q, qd, qdd)`` when the robot has no Stribeck term (plus
        ``transmission_torques(tr, qd, qdd)`` with a transmission).
    """
    if transmission is not None:
        tr = _check_transmission(robot, transmission)
        D = regressor(robot, q, qd, qdd, friction=friction, gravity=gravity, trig=trig)
        _, _, a = joint_arrays(robot, q=q, qd=qd, qdd=qdd)
        M = motor_columns(tr, np.broadcast_to(a["qd"], D.shape[:-1]), np.broadcast_to(a["qdd"], D.shape[:-1]),
                          friction)
        return into("regressor", out, finite_result("regressor", np.concatenate([D, M.astype(D.dtype)], -1)))
    return executor.execute(_REGRESSOR if friction else _RIGID_REGRESSOR, robot, q, qd, qdd, None, gravity, None, out,
                            trig)


def _numpy(robot: Robot, q, qd, qdd, g, fe, friction: bool) -> np.ndarray:
    """D of :func:`regressor` on checked arrays, the friction columns with ``friction``."""
    batch, dtype = q.shape[:-1], q.dtype
    n, nf = robot.n, robot.nf
    p = 11 * nf + (3 * n if friction else 0)
    cols = flat_columns(q, qd, qdd)
    g = gravity_components(g, batch, dtype)
    size = cols[0].shape[1]
    D = np.zeros((size, n, p), dtype)
    # The loop is over blocks of states (kept in cache), never over single samples of a batch.
    for sl, (q_b, qd_b, qdd_b) in state_blocks(*cols):
        dot = _float_dot if size == 1 else vdot
        entries = list(link_columns(robot, q_b, qd_b, qdd_b, block_of(g, sl, size), dot))
        if size == 1 and entries:  # Python floats: one indexed write for all of them
            k, col, x = zip(*entries)
            D[0, k, col] = x
        elif size > 1:
            for k, col, x in entries:
                D[sl, k, col] = x
    D = D.reshape(batch + (n, p))
    k = np.arange(n)
    D[..., k, 11 * robot.joint_frames + 10] = qdd  # Ia_k q̈_k  [9.94]
    if friction:  # [9.26]–[9.28]
        c = 11 * nf + 3 * k
        D[..., k, c] = np.sign(qd)
        D[..., k, c + 1] = qd
        D[..., k, c + 2] = 1
    return D


def jax_regressor(robot: Robot, q, qd, qdd, gravity=None, friction: bool = True):
    """D(q, q̇, q̈) of Γ = D K [9.36] on JAX arrays (..., n) → (..., n, 11 nf (+ 3 n)), traceable by ``jax.jit`` /
    ``vmap`` / ``grad``: :func:`link_columns` on the JAX backend, columns as :func:`regressor`."""
    import jax.numpy as jnp

    n, nf = robot.n, robot.nf
    like, (q, qd, qdd) = jax_rows(n, q, qd, qdd)
    g = jax_gravity(robot.gravity if gravity is None else gravity)
    D = [[0.0] * (11 * nf + (3 * n if friction else 0)) for _ in range(n)]
    for k, col, value in link_columns(robot, q, qd, qdd, g, backend=jax_backend()):
        D[k][col] = value
    for k, j in enumerate(robot.joint_frames):
        D[k][11 * int(j) + 10] = qdd[k]  # Ia_k q̈_k [9.94]
        if friction:  # [9.26]–[9.28]
            D[k][11 * nf + 3 * k: 11 * nf + 3 * k + 3] = [jnp.sign(qd[k]), qd[k], 1.0]
    return jax_matrix(D, like)


_REGRESSOR = executor.Algorithm("regressor", functools.partial(_numpy, friction=True), batch=True, jax=jax_regressor)
_RIGID_REGRESSOR = executor.Algorithm("regressor", functools.partial(_numpy, friction=False), batch=True,
                                      friction=False, jax=functools.partial(jax_regressor, friction=False))


def _float_dot(u, v):
    """u · v for Python floats (one state), where testing for zeros costs more than multiplying by them."""
    return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]


def link_columns(robot: Robot, q, qd, qdd, g, dot=vdot, backend=None):
    """The entries of D on the link columns, for one block of states (see :func:`~robodyn.kinematics.state_blocks`).

    The backward recursion [9.91]–[9.93] is linear: the torque of joint k is a_kᵀ [f_k; m_k] (first term of
    [9.94]) with [f_k; m_k] the sum over the links j of its subtree of ^kX_j Φ_j ^jK_j, ^kX_j the product of
    the transforms [9.92]–[9.93] from j to k.  So D_{k, K_j} = s_{kj}ᵀ Φ_j with s_{kj} = ^kX_jᵀ a_k; carried
    one frame at a time, s_{kj} = (v, ω) obeys the velocity recursion [9.17]–[9.18],

        ω ← ^jA_{a} ω,   v ← ^jA_{a} (v + ω × ^{a}P_j),

    starting from the axis of joint k: (v, ω) = (0, z) (revolute) or (z, 0) (prismatic), in R_k.  That is a
    6-vector per (joint, link below it) instead of the 6 × 10 block Φ_j carried to every joint.

    ``dot`` is the dot product of component tuples, ``backend`` the scalar backend (see :mod:`robodyn.spatial`).
    Yields ``(k, column, value)`` for every entry that is not an exact zero; values are (B,) arrays or scalars.
    """
    rot, w, wd, Vd = forward_components(robot, q, qd, qdd, g, backend)  # [9.84]–[9.90]
    z, zero = (0.0, 0.0, 1.0), (0.0, 0.0, 0.0)
    axes = [{} for _ in range(robot.nf)]  # axes[j][k] = s_kj: joint k seen at O_j, in R_j
    joint = 0  # joint-variable number of the next moving frame
    for j in range(robot.nf):
        a = robot.derived.parent[j]
        if a >= 0:
            for k, s_k in axes[a].items():
                axes[j][k] = twist_to_child(rot[j], s_k)
        if robot.sigma[j] != 2:
            axes[j][joint] = (z, zero) if robot.sigma[j] == 1 else (zero, z)
            joint += 1
        inertia, first_moments, F_mass = _wrench_columns(w[j], wd[j], Vd[j])  # Φ_j, [9.88]–[9.89]
        for k, (v, om) in axes[j].items():
            row = [dot(om, m) for m in inertia]
            row += [c_add(dot(v, f), dot(om, m)) for f, m in first_moments]
            row.append(dot(v, F_mass))
            for col, x in enumerate(row, 11 * j):
                if not (type(x) is float and x == 0.0):
                    yield k, col, x
