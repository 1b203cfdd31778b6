"""Mobile and floating bases with Pinocchio's free-flyer conventions, on the fixed-base recursions.

q (..., n + 7) = [p, quaternion (x, y, z, w), joints], v and a (..., n + 6) = [v_0, ω_0 in R_0, q̇] and dv/dt,
generalized forces [f_0, m_0 in R_0 about O_0, Γ]; ``robot.gravity`` in the world frame, ``robot.base_params`` the
base body's standard parameters in R_0.  Each algorithm is the fixed-base one of the augmented robot, whose first
six joints are virtual joints at zero carrying the base (docs/floating-base.md, "Method").
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from robodyn.arrays import as_real_array, finite_result, into, working_dtype
from robodyn.model.robot import check_robot
from robodyn.model.workspace import WORKSPACE
from robodyn.model.arguments import frame_index, joint_arrays
from robodyn import native
from robodyn.dynamics import composite, executor, newton_euler, recursive
from robodyn.errors import InputError, ModelError
from robodyn.kinematics import base_poses, jacobian, link_accelerations
from robodyn.model.robot import Robot
from robodyn.spatial import cross, mtv, mv, quaternion_rows, velocity_products

#: Names of the six virtual joints of the base (never seen by a user: their columns are the base's).
_VIRTUAL = ("base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz")
#: Largest accepted deviation of the quaternion's norm from 1; within it the quaternion is normalised.
QUATERNION_TOLERANCE = 1e-6


def augmented_robot(robot: Robot) -> Robot:
    """The fixed-base robot whose first six joints are the virtual joints of the base (docs/floating-base.md).

    Every virtual frame has γ = α = π/2, so that z_1..z_6 point along x, y, z, x, y, z of R_0 and frame 6 is R_0
    itself; frame 6 carries ``robot.base_params`` and is the antecedent of the robot's root frames.  Kept with the
    robot in the per-robot workspace (:mod:`robodyn.model.workspace`): built once.
    """
    return WORKSPACE.value(robot, "augmented_robot", lambda: _augmented_quietly(robot))


def _augmented_quietly(robot: Robot) -> Robot:
    with warnings.catch_warnings():  # the robot's own links were checked (and warned about) when it was built
        warnings.simplefilter("ignore", UserWarning)
        return _augmented(robot)


def _augmented(robot: Robot) -> Robot:
    nv = len(_VIRTUAL)

    def joined(values, virtual=0.0):
        return np.concatenate([np.full(nv, virtual), np.asarray(values, dtype=float)])

    params = np.zeros((robot.nf + nv, 10))
    params[nv - 1] = robot.base_params
    params[nv:] = robot.params
    return Robot(
        name=robot.name,
        sigma=np.concatenate([[1, 1, 1, 0, 0, 0], robot.sigma]),
        antecedent=np.concatenate([np.arange(nv), np.where(robot.antecedent == 0, nv, robot.antecedent + nv)]),
        gamma=joined(robot.gamma, math.pi / 2),
        alpha=joined(robot.alpha, math.pi / 2),
        **{k: joined(getattr(robot, k)) for k in ("b", "d", "theta", "r", "Ia", "Fc", "Fv", "Foff", "Fst", "kst", "Bst")},
        params=params,
        qlim=np.concatenate([np.tile([-np.inf, np.inf], (nv, 1)), robot.qlim]),
        gravity=robot.gravity,
        frame_names=_VIRTUAL + robot.frame_names,
        source=robot.source,
        strict=robot.strict,
    )


def quaternion_matrix(quat: np.ndarray) -> np.ndarray:
    """Rotation matrix (..., 3, 3) of unit quaternions (..., 4) in the order (x, y, z, w)."""
    return np.stack([np.stack(row, -1) for row in quaternion_rows(*np.moveaxis(quat, -1, 0))], -2)


def _moving(robot: Robot, what: str) -> Robot:
    check_robot(robot)
    if robot.base == "fixed":
        raise InputError(
            f"{what}: robot '{robot.name}' has a fixed base; use the fixed-base function with q of shape (..., n), "
            "or robot.replace(base='floating')"
        )
    return robot


def _arrays(robot: Robot, what: str, rotation: bool = True, **given):
    """Check free-flyer arrays: ``q`` (..., n + 7), the others (..., n + 6) (``base_acceleration`` (..., 6),
    ``tau`` of a mobile base (..., n)); broadcast them to one batch.  Returns (dtype, batch, arrays, R), R = None
    where ``rotation`` is False (the inertia matrix, which does not depend on the base's orientation)."""
    n = robot.n
    width = {"q": n + 7, "base_acceleration": 6}
    arrays = {k: as_real_array(k, v) for k, v in given.items() if v is not None}
    dtype = working_dtype(*arrays.values())
    shapes = []
    for name, a in arrays.items():
        size = width.get(name, n if (name == "tau" and robot.base == "mobile") else n + 6)
        if a.ndim == 0 or a.shape[-1] != size:
            layout = {"q": "[position (3), quaternion (x, y, z, w), joints]", "base_acceleration": "[dv_0, dw_0] in R_0"}
            raise InputError(
                f"{what}: argument '{name}' has shape {a.shape}; robot '{robot.name}' has a {robot.base} base and "
                f"n = {n} joints, so '{name}' must have shape (..., {size})"
                + (f" = {layout[name]}" if name in layout else "")
            )
        # a single state: NaN and ±inf propagate into the sum (cheaper than isfinite on a few numbers)
        if not (math.isfinite(sum(a.tolist())) if a.ndim == 1 else np.all(np.isfinite(a))):
            raise InputError(f"{what}: argument '{name}' contains NaN or inf; give finite values")
        arrays[name] = a.astype(dtype, copy=False)
        shapes.append(a.shape[:-1])
    batch = shapes[0]
    if any(shape != batch for shape in shapes):
        try:
            batch = np.broadcast_shapes(*shapes)
        except ValueError:
            raise InputError(f"{what}: batch axes do not broadcast: " + ", ".join(f"{k} {v.shape}" for k, v in arrays.items())) from None
        arrays = {k: np.broadcast_to(v, batch + v.shape[-1:]) for k, v in arrays.items()}
    quat = arrays["q"][..., 3:7]
    norm = np.sqrt(np.sum(quat * quat, -1))
    if np.any(np.abs(norm - 1) > QUATERNION_TOLERANCE):
        worst = float(np.max(np.abs(norm - 1)))
        raise InputError(
            f"{what}: argument 'q': the base quaternion q[3:7] (x, y, z, w) has a norm off 1 by {worst:.3g} "
            f"(tolerance {QUATERNION_TOLERANCE:g}); give a unit quaternion"
        )
    return dtype, batch, arrays, quaternion_matrix(quat / norm[..., None]) if rotation else None


def _virtual_q(q: np.ndarray) -> np.ndarray:
    """q (..., n + 6) of the augmented robot at a free-flyer q (..., n + 7): the virtual joints at zero."""
    return np.concatenate([np.zeros(q.shape[:-1] + (6,), q.dtype), q[..., 7:]], -1)


def _virtual_state(robot: Robot, q, v, R, gravity, batch, dtype):
    """q, q̇ of the augmented robot and gravity in R_0."""
    g = newton_euler.gravity_argument(robot, gravity, batch, dtype)
    return _virtual_q(q), v, mtv(R, np.broadcast_to(g, batch + (3,)))


def _bind(robot: Robot, what: str):
    """The ``bind`` of the free-flyer specs: :func:`robodyn.native.bind_floating` (virtual state and recursion in
    one C call) kept in the robot's workspace; False for a fixed base, a mobile base's forward dynamics (its base
    acceleration is given) or no compiled kernels."""
    return WORKSPACE.value(robot, _native_key(what), lambda: _new_entry(robot, what))


def _new_entry(robot: Robot, what: str):
    if robot.base == "fixed" or (what == "forward_dynamics" and robot.base == "mobile"):
        return False
    return native.bind_floating(augmented_robot(robot), what, QUATERNION_TOLERANCE)


def _native_key(what: str) -> str:
    """The per-robot workspace key of robodyn.native's free-flyer entry of ``what`` bound to the robot."""
    return "floating_native_" + what


def _virtual_acceleration(v: np.ndarray, a: np.ndarray, sign: int = 1) -> np.ndarray:
    """q̈ of the augmented robot from the free-flyer acceleration ``a`` (``sign`` 1), or ``a`` from that q̈ (``sign``
    −1): the virtual joints' velocity products ω_0 × v_0 and −(ω_y ω_z, −ω_x ω_z, ω_x ω_y) on the first six."""
    products = np.stack(velocity_products(*(v[..., i] for i in range(6))), -1)
    return np.concatenate([a[..., :6] + products if sign > 0 else a[..., :6] - products, a[..., 6:]], -1)


def augmented_state(robot: Robot, q, v, a, gravity=None, what: str = "augmented_state"):
    """The state of :func:`augmented_robot` at a free-flyer state, for algorithms written for fixed bases (the
    regressor of :mod:`robodyn.parameters.floating`).

    Parameters
    ----------
    robot : Robot (floating or mobile base)
    q : array_like (..., n + 7);  v, a : array_like (..., n + 6)
    gravity : array_like (3,) or (..., 3), optional — g in the world frame.

    Returns
    -------
    q_a, qd_a, qdd_a : ndarray (..., n + 6)
        Virtual joints at zero, then the joints; q̇_a = v; q̈_a from a.
    g : ndarray (..., 3)
        Gravity in R_0.
    """
    robot = _moving(robot, what)
    dtype, batch, arr, R = _arrays(robot, what, q=q, v=v, a=a)
    qa, qda, g = _virtual_state(robot, arr["q"], arr["v"], R, gravity, batch, dtype)
    return qa, qda, _virtual_acceleration(arr["v"], arr["a"]), g


def _wrenches(robot: Robot, wrenches, batch, dtype):
    fe = newton_euler.wrenches_argument(robot, wrenches, batch, dtype)
    if fe is None:
        return None
    out = np.zeros(fe.shape[:-2] + (robot.nf + 6, 6), dtype)
    out[..., 6:, :] = fe
    return out


def floating_inverse_dynamics(robot: Robot, q, v, a, wrenches=None, gravity=None, out=None,
                              trig: str = "exact") -> np.ndarray:
    """Inverse dynamics of a floating or mobile base robot: base wrench and joint torques (Pinocchio's ``rnea``).

    Parameters
    ----------
    robot : Robot
        ``robot.base`` is ``"floating"`` or ``"mobile"``.
    q : array_like (..., n + 7)
        [base position in the world (m), base quaternion (x, y, z, w), joint positions (rad | m)].
    v, a : array_like (..., n + 6)
        [v_0, ω_0 in R_0, q̇] and its derivative [v̇_0, ω̇_0, q̈].
    wrenches : array_like (..., nf, 6), optional
        As in :func:`robodyn.inverse_dynamics`: exerted BY link j ON the environment, in R_j, moment about O_j.
    gravity : array_like (3,) or (..., 3), optional
        g in the world frame (m/s²); default ``robot.gravity``.
    out : ndarray (..., n + 6), optional
        The result's buffer, as in :func:`robodyn.inverse_dynamics`.
    trig : str
        ``"exact"`` (default) or ``"fast"``, as in :func:`robodyn.inverse_dynamics`: float64 NumPy arrays without
        ``wrenches`` and with one gravity (3,) take the free-flyer kernel's vectorised sincos, one state as its
        row of a batch, bit for bit; other calls compute as by default.

    Returns
    -------
    ndarray (..., n + 6)
        [f_0 (N), m_0 (N m)]: the wrench on the base in R_0 about O_0 (zero for a free base moving by its
        dynamics), then the joint torques Γ with friction and rotor inertia ([9.94]); ``out`` when given.
    """
    return executor.execute(_INVERSE, robot, q, v, a, wrenches, gravity, None, out, trig)


def _inverse_general(robot: Robot, q, v, a, wrenches, gravity, friction=None, fast=False) -> np.ndarray:
    """Any free-flyer state: the augmented robot's Newton–Euler recursion; ``fast`` (the trig flag) is not read."""
    robot = _moving(robot, "inverse_dynamics")
    dtype, batch, arr, R = _arrays(robot, "inverse_dynamics", q=q, v=v, a=a)
    qa, qda, g = _virtual_state(robot, arr["q"], arr["v"], R, gravity, batch, dtype)
    tau = newton_euler.inverse_dynamics(augmented_robot(robot), qa, qda, _virtual_acceleration(arr["v"], arr["a"]),
                                        wrenches=_wrenches(robot, wrenches, batch, dtype), gravity=g)
    return finite_result("inverse_dynamics", tau)


def floating_inertia_matrix(robot: Robot, q, out=None, trig: str = "exact") -> np.ndarray:
    """Inertia matrix (..., n + 6, n + 6) of the kinetic energy ½ vᵀ M v (Pinocchio's ``crba``).

    The upper-left 6 × 6 block is the locked (composite) inertia of the whole robot in R_0 about O_0,
    [[m 1, −m ĉ], [m ĉ, J]] (linear first); it depends on the joint positions only, not on the base pose.

    Parameters
    ----------
    robot : Robot (floating or mobile base)
    q : array_like (..., n + 7)
    out : ndarray (..., n + 6, n + 6), optional
        The result's buffer, as in :func:`robodyn.inertia_matrix`: writeable, C-contiguous, of the result's shape
        and dtype (else InputError naming ``out``); the compiled kernels write it directly (one float64 state or a
        float64 batch), the same numbers bit for bit as without it.
    trig : str
        ``"exact"`` (default) or ``"fast"``, as in :func:`robodyn.inertia_matrix`: the sines and cosines of the joint
        angles by the kernels' vectorised sincos (within 1 ulp of the C library's, docs/scaling.md).

    Returns
    -------
    ndarray (..., n + 6, n + 6)
        Symmetric positive definite (for a robot with mass), rotor inertias on the joint diagonal; ``out`` when
        given.
    """
    return executor.execute(_INERTIA, robot, q, None, None, None, None, None, out, trig)


def _inertia_general(robot: Robot, q, v=None, x=None, wrenches=None, gravity=None, friction=None,
                     fast=False, out=None) -> np.ndarray:
    """Any free-flyer configuration: the augmented robot's composite links at its virtual joints' zero (``fast``:
    trig="fast"), into ``out`` (checked by the fixed-base function) when given."""
    robot = _moving(robot, "inertia_matrix")
    dtype, batch, arr, _ = _arrays(robot, "inertia_matrix", rotation=False, q=q)
    return composite.inertia_matrix(augmented_robot(robot), _virtual_q(arr["q"]), out=out,
                                    trig="fast" if fast else "exact")


def floating_forward_dynamics(robot: Robot, q, v, tau, wrenches=None, gravity=None, base_acceleration=None,
                              out=None, trig: str = "exact") -> np.ndarray:
    """Forward dynamics with a floating base (Pinocchio's ``aba``) or a mobile base of given acceleration.

    Floating base: the articulated-body algorithm of §9.7.2 ([9.100]–[9.124]) on the augmented robot, O(n).
    Mobile base: q̈ = A(q)⁻¹ (Γ − H), H the joint torques of :func:`floating_inverse_dynamics` with the base
    acceleration imposed and q̈ = 0, A the joint-space inertia matrix ([9.95]–[9.96]).

    Parameters
    ----------
    robot : Robot (floating or mobile base)
    q : array_like (..., n + 7)
    v : array_like (..., n + 6)
    tau : array_like (..., n + 6) for a floating base: [wrench on the base in R_0 about O_0, joint torques];
        (..., n) for a mobile base: joint torques.
    wrenches, gravity : as in :func:`floating_inverse_dynamics`.
    base_acceleration : array_like (..., 6), mobile base only (required)
        [v̇_0, ω̇_0] of the base, in R_0.
    out : ndarray (..., n + 6), optional
        The result's buffer, as in :func:`robodyn.inverse_dynamics`.
    trig : str
        ``"exact"`` (default) or ``"fast"``, as in :func:`robodyn.inverse_dynamics`: a floating base's augmented
        robot runs the kernels with the vectorised sincos, one state bit for bit its row of a batch; a mobile base
        computes as by default.

    Returns
    -------
    ndarray (..., n + 6)
        a = [v̇_0, ω̇_0, q̈] (for a mobile base its first six entries are ``base_acceleration``).

    Raises
    ------
    ModelError
        A singular model (a joint or the base moving only massless bodies).
    """
    if base_acceleration is None:  # a floating base (a mobile one is refused by _forward_general)
        return executor.execute(_FORWARD, robot, q, v, tau, wrenches, gravity, None, out, trig)
    robot = _moving(robot, "forward_dynamics")
    if robot.base != "mobile":
        raise InputError("forward_dynamics: base_acceleration is for a mobile base; a floating base's acceleration "
                         "is computed")
    native.check_trig(trig)
    return into("forward_dynamics", out, _mobile_forward(robot, q, v, tau, wrenches, gravity, base_acceleration))


def _forward_general(robot: Robot, q, v, tau, wrenches, gravity, friction=None, fast=False) -> np.ndarray:
    """Any free-flyer state of a floating base: the augmented robot's articulated-body recursion (``fast``:
    trig="fast")."""
    what = "forward_dynamics"
    robot = _moving(robot, what)
    if robot.base == "mobile":
        raise InputError(
            f"{what}: robot '{robot.name}' has a mobile base, whose motion is given; pass base_acceleration "
            "(..., 6) = [dv_0, dw_0] in R_0 to robodyn.floating.floating_forward_dynamics"
        )
    dtype, batch, arr, R = _arrays(robot, what, q=q, v=v, tau=tau)
    qa, qda, g = _virtual_state(robot, arr["q"], arr["v"], R, gravity, batch, dtype)
    qdd = recursive.forward_dynamics(augmented_robot(robot), qa, qda, arr["tau"],
                                     wrenches=_wrenches(robot, wrenches, batch, dtype), gravity=g,
                                     trig="fast" if fast else "exact")
    return finite_result("forward_dynamics", _virtual_acceleration(arr["v"], qdd, -1))


#: the free-flyer functions on the one executor: robodyn.native's free-flyer entry bound to the robot for one float64
#: state, else the augmented robot's recursions on the virtual state (with the robot's and the arrays' checks)
_INVERSE = executor.Algorithm("inverse_dynamics", None, ("q", "v", "a"), bind=_bind,
                              key=_native_key("inverse_dynamics"), general=_inverse_general)
_INERTIA = executor.Algorithm("inertia_matrix", None, ("q",), bind=_bind, key=_native_key("inertia_matrix"),
                              general=_inertia_general, general_out=True)
_FORWARD = executor.Algorithm("forward_dynamics", None, ("q", "v", "tau"), bind=_bind,
                              key=_native_key("forward_dynamics"), general=_forward_general)


class ReducedInverseDynamics(NamedTuple):
    """Result of :func:`reduced_inverse_dynamics`: a = [v̇_0, ω̇_0, q̈] (..., n + 6) and the joint torques (..., n)."""

    a: np.ndarray
    tau: np.ndarray


def reduced_inverse_dynamics(robot: Robot, q, v, qdd, wrenches=None, gravity=None) -> ReducedInverseDynamics:
    """Joint torques of a free-floating robot from its joint accelerations alone, the base moving as it must.

    Khalil's floating-base Newton–Euler method (Khalil, Gallot and Boyer 2007): a first pass with a_b = 0 gives the
    base wrench w_0, the base acceleration is a_b = −M_bb⁻¹ w_0 (M_bb the locked inertia in R_0 about O_0), and a
    second pass gives the joint torques (docs/floating-base.md).

    Parameters
    ----------
    robot : Robot (floating base)
    q : array_like (..., n + 7);  v : array_like (..., n + 6)
    qdd : array_like (..., n) — joint accelerations.
    wrenches, gravity : as in :func:`floating_inverse_dynamics`.

    Returns
    -------
    a : ndarray (..., n + 6)
        [v̇_0, ω̇_0, q̈].
    tau : ndarray (..., n)
        Joint torques (friction and rotor inertia included).
    """
    what = "reduced_inverse_dynamics"
    robot = _moving(robot, what)
    dtype, batch, arr, _ = _arrays(robot, what, q=q, v=v)
    qdd = as_real_array("qdd", qdd)
    if qdd.ndim == 0 or qdd.shape[-1] != robot.n or not np.all(np.isfinite(qdd)):
        raise InputError(f"{what}: argument 'qdd' must be finite with shape (..., {robot.n}), the joint accelerations")
    try:
        batch = np.broadcast_shapes(batch, qdd.shape[:-1])
    except ValueError:
        raise InputError(f"{what}: 'qdd' with shape {qdd.shape} does not broadcast to batch {batch}") from None
    a = np.concatenate([np.zeros(batch + (6,), dtype), np.broadcast_to(qdd.astype(dtype), batch + (robot.n,))], -1)
    q_, v_ = (np.broadcast_to(arr[k], batch + arr[k].shape[-1:]) for k in ("q", "v"))
    w0 = floating_inverse_dynamics(robot, q_, v_, a, wrenches=wrenches, gravity=gravity)[..., :6]
    Mbb = floating_inertia_matrix(robot, q_)[..., :6, :6]
    a[..., :6] = -np.linalg.solve(Mbb, w0[..., None])[..., 0]
    tau = floating_inverse_dynamics(robot, q_, v_, a, wrenches=wrenches, gravity=gravity)
    return finite_result(what, ReducedInverseDynamics(a, tau[..., 6:]))


def _mobile_forward(robot, q, v, tau, wrenches, gravity, base_acceleration):
    what = "forward_dynamics"
    dtype, batch, arr, _ = _arrays(robot, what, q=q, v=v, tau=tau, base_acceleration=base_acceleration)
    a0 = np.concatenate([arr["base_acceleration"], np.zeros(batch + (robot.n,), dtype)], -1)
    H = floating_inverse_dynamics(robot, arr["q"], arr["v"], a0, wrenches=wrenches, gravity=gravity)[..., 6:]
    A = composite.inertia_matrix(robot, arr["q"][..., 7:])
    try:
        qdd = np.linalg.solve(A, (arr["tau"] - H)[..., None])[..., 0]
    except np.linalg.LinAlgError:
        raise ModelError(f"robot '{robot.name}': the joint-space inertia matrix is singular; give the links mass") from None
    return finite_result(what, np.concatenate([arr["base_acceleration"], qdd], -1))


def _full_configuration(robot: Robot, q, what: str):
    """(dtype, batch, q (..., n + 7), R): a fixed base's q (..., n) is placed at the world origin."""
    check_robot(robot)
    if robot.base != "fixed":
        dtype, batch, arr, R = _arrays(robot, what, q=q)
        return dtype, batch, arr["q"], R
    dtype, batch, a = joint_arrays(robot, q=q)
    base = np.zeros(batch + (7,), dtype)
    base[..., 6] = 1
    full = np.concatenate([base, a["q"]], -1)
    return dtype, batch, full, np.broadcast_to(np.eye(3, dtype=dtype), batch + (3, 3))


def _momentum_rows(robot: Robot, q, what: str):
    """(M[:6, :] of the free-flyer inertia matrix, ^wR_0, base position): the rows that give the spatial
    momentum of the whole robot in R_0 about O_0 (∂T/∂v_0, ∂T/∂ω_0)."""
    _, _, full, R = _full_configuration(robot, q, what)
    M = composite.inertia_matrix(augmented_robot(robot), _virtual_q(full))
    return M[..., :6, :], R, full[..., :3]


def _mass_and_com(robot: Robot, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Total mass (...,) and centre of mass in R_0 (..., 3) from the locked block [[m 1, −m ĉ], [m ĉ, J]]."""
    m = rows[..., 0, 0]
    if np.any(m <= 0):
        raise ModelError(f"robot '{robot.name}': the robot has no mass, so no centre of mass; give its links mass")
    ms = np.stack([rows[..., 1, 5], rows[..., 2, 3], rows[..., 0, 4]], -1)  # entries of −m ĉ
    return m, ms / m[..., None]


def _result_columns(robot: Robot, X: np.ndarray) -> np.ndarray:
    return X if robot.base != "fixed" else X[..., 6:]


def center_of_mass(robot: Robot, q) -> np.ndarray:
    """Centre of mass of the whole robot, base body included, in the world frame (Pinocchio's
    ``centerOfMass``).

    Parameters
    ----------
    robot : Robot
    q : array_like (..., n + 7) for a floating or mobile base, (..., n) for a fixed base (then in R_0)

    Returns
    -------
    ndarray (..., 3) (m)
    """
    rows, R, p = _momentum_rows(robot, q, "center_of_mass")
    _, c = _mass_and_com(robot, rows)
    return finite_result("center_of_mass", p + mv(R, c))


def center_of_mass_jacobian(robot: Robot, q) -> np.ndarray:
    """J_G with v_G = J_G v, the velocity of the centre of mass in the world frame (Pinocchio's
    ``jacobianCenterOfMass``): R_0's rows of linear momentum, R (M[:3, :] / m).

    Returns
    -------
    ndarray (..., 3, n + 6) for a floating or mobile base, (..., 3, n) for a fixed base.
    """
    rows, R, _ = _momentum_rows(robot, q, "center_of_mass_jacobian")
    m, _ = _mass_and_com(robot, rows)
    return finite_result("center_of_mass_jacobian", _result_columns(robot, R @ rows[..., :3, :] / m[..., None, None]))


def centroidal_momentum_matrix(robot: Robot, q) -> np.ndarray:
    """Centroidal momentum matrix A_G: h_G = A_G v, linear momentum then angular momentum about the centre of
    mass, both in world axes (Orin, Goswami and Lee 2013; Pinocchio's ``ccrba`` ``Ag``).

    A_G = [[R, 0], [−R ĉ, R]] M[:6, :], with M the free-flyer inertia matrix (whose first six rows give the
    momentum in R_0 about O_0) and c the centre of mass in R_0.

    Returns
    -------
    ndarray (..., 6, n + 6) for a floating or mobile base, (..., 6, n) for a fixed base.
    """
    rows, R, _ = _momentum_rows(robot, q, "centroidal_momentum_matrix")
    _, c = _mass_and_com(robot, rows)
    lin = rows[..., :3, :]
    ang = rows[..., 3:, :] - cross(c[..., None, :], np.swapaxes(lin, -1, -2)).swapaxes(-1, -2)
    return finite_result("centroidal_momentum_matrix", _result_columns(robot, np.concatenate([R @ lin, R @ ang], -2)))


# ---- frames and rigid contacts ----------------------------------------------------------------------------------


def _frame_numbers(robot: Robot, frames, what: str) -> list[int]:
    """0-based frame indices of ``frames`` (names or numbers 1..nf, Khalil & Dombre's numbering)."""
    if isinstance(frames, (str, int, np.integer)):
        frames = [frames]
    try:
        frames = list(frames)
    except TypeError:
        raise InputError(f"{what}: frames = {frames!r}; give a list of frame names or numbers 1..{robot.nf}") from None
    if not frames:
        raise InputError(f"{what}: frames is empty; give at least one frame name or number 1..{robot.nf}")
    return [frame_index(robot, f) for f in frames]


def _world_rotations(robot: Robot, full: np.ndarray, R: np.ndarray) -> np.ndarray:
    """^wR_j (..., nf, 3, 3) of the robot's frames from a free-flyer configuration and ^wR_0."""
    R0, _ = base_poses(augmented_robot(robot), _virtual_q(full), full.dtype)
    return R[..., None, :, :] @ R0[..., 6:, :, :]


def floating_jacobian(robot: Robot, q, frame=None) -> np.ndarray:
    """Jacobian of frame ``frame`` of a floating or mobile base robot: [v; ω] = J v, the velocity of its origin
    O_j and its angular velocity in world axes (Pinocchio's frame Jacobian, ``LOCAL_WORLD_ALIGNED``).

    It is the Jacobian of the augmented robot (columns of the virtual joints = the base's) rotated from R_0 to
    the world: J = diag(R, R) ^0J.

    Parameters
    ----------
    robot : Robot (floating or mobile base)
    q : array_like (..., n + 7)
    frame : int or str, default last frame — frame number j = 1..nf or its name.

    Returns
    -------
    ndarray (..., 6, n + 6)
    """
    what = "floating_jacobian"
    robot = _moving(robot, what)
    _, _, arr, R = _arrays(robot, what, q=q)
    J = jacobian(augmented_robot(robot), _virtual_q(arr["q"]), frame=frame_index(robot, frame) + 7)
    return finite_result(what, np.concatenate([R @ J[..., :3, :], R @ J[..., 3:, :]], -2))


def _frame_accelerations(robot: Robot, arr, R, j: list[int]):
    """Classical accelerations [a; ω̇] (..., k, 6) in world axes of the origins of frames ``j`` when a = 0, with
    their rotations ^wR_j (..., k, 3, 3)."""
    aug, qa = augmented_robot(robot), _virtual_q(arr["q"])
    wd, Vd = link_accelerations(aug, qa, arr["v"], _virtual_acceleration(arr["v"], np.zeros_like(arr["v"])))
    R0, _ = base_poses(aug, qa, qa.dtype)
    k = [i + 6 for i in j]
    Rw = R[..., None, :, :] @ R0[..., k, :, :]
    return np.concatenate([mv(Rw, Vd[..., k, :]), mv(Rw, wd[..., k, :])], -1), Rw


def wrenches_at_frames(robot: Robot, q, frames, forces) -> np.ndarray:
    """The ``wrenches`` (..., nf, 6) argument of the dynamics functions from wrenches that the environment exerts
    ON the robot at the origins of named frames, in world axes (Pinocchio's external forces, world-aligned).

    Parameters
    ----------
    robot : Robot (floating or mobile base)
    q : array_like (..., n + 7)
    frames : sequence of k frame names or numbers 1..nf
    forces : array_like (..., k, 3) forces or (..., k, 6) [force; moment about O_j], world axes (N, N m)

    Returns
    -------
    ndarray (..., nf, 6): row j = −[^jR_w f; ^jR_w m], exerted BY link j ON the environment in R_j ([9.91]–[9.93]).
    """
    what = "wrenches_at_frames"
    robot = _moving(robot, what)
    idx = _frame_numbers(robot, frames, what)
    dtype, batch, arr, R = _arrays(robot, what, q=q)
    f = as_real_array("forces", forces)
    if f.ndim < 2 or f.shape[-2:] not in ((len(idx), 3), (len(idx), 6)) or not np.all(np.isfinite(f)):
        raise InputError(f"{what}: argument 'forces' has shape {f.shape}; give finite (..., {len(idx)}, 3) or (..., {len(idx)}, 6)")
    if f.shape[-1] == 3:
        f = np.concatenate([f, np.zeros_like(f)], -1)
    try:
        batch = np.broadcast_shapes(batch, f.shape[:-2])
    except ValueError:
        raise InputError(f"{what}: 'forces' with shape {f.shape} does not broadcast to batch {batch}") from None
    Rw = _world_rotations(robot, arr["q"], R)
    out = np.zeros(batch + (robot.nf, 6), dtype)
    for c, i in enumerate(idx):
        Ri = np.broadcast_to(Rw[..., i, :, :], batch + (3, 3))
        out[..., i, :3] -= mtv(Ri, f[..., c, :3])
        out[..., i, 3:] -= mtv(Ri, f[..., c, 3:])
    return out


@dataclass(frozen=True)
class ContactDynamics:
    """Result of :func:`contact_forward_dynamics`.

    Attributes
    ----------
    acceleration : ndarray (..., n + 6)
        a = [v̇_0, ω̇_0, q̈] (free-flyer conventions).
    forces : ndarray (..., k, 3) or (..., k, 6)
        Force (and moment about O_j) that the environment exerts ON the robot at each contact frame, world axes.
    """

    acceleration: np.ndarray
    forces: np.ndarray


def _redundant_contacts(J: np.ndarray, rows: int) -> list[int]:
    """0-based indices of the contacts whose ``rows`` constraint rows of J (..., k rows, N) are linear
    combinations of the rows of the contacts before them, in any state of the batch.

    Rank with NumPy's tolerance for a matrix of that size: singular values below max(m, N) ε σ_max are rounding
    (rows equal in exact arithmetic differ by a few ε σ_max after the kinematics)."""
    def deficient(A):
        s = np.linalg.svd(A, compute_uv=False)
        return bool(np.any(s[..., -1] <= max(A.shape[-2:]) * np.finfo(A.dtype).eps * s[..., 0]))

    if not deficient(J):
        return []
    kept, redundant = [], []
    for c in range(J.shape[-2] // rows):
        trial = kept + list(range(c * rows, (c + 1) * rows))
        if deficient(J[..., trial, :]):
            redundant.append(c)
        else:
            kept = trial
    return redundant


def contact_forward_dynamics(robot: Robot, q, v, tau, frames, kind: str = "point", gravity=None) -> ContactDynamics:
    """Forward dynamics of a floating-base robot under rigid contacts, as equality constraints (KKT system).

        [M  Jᵀ] [ a ]   [Γ − H]                        M a + H = Γ + Jᵀ λ
        [J  0 ] [−λ ] = [ −γ  ]   i.e.                  J a + γ = 0

    M the free-flyer inertia matrix, H the bias (:func:`floating_inverse_dynamics` with a = 0: Coriolis,
    centrifugal, gravity, friction), J the stacked contact Jacobians (:func:`floating_jacobian`, world axes; the
    linear rows only for ``kind="point"``) and γ = J̇ v the classical acceleration of the contact origins when a = 0
    (Featherstone, Rigid Body Dynamics Algorithms, §11.1; Pinocchio's ``forwardDynamics`` with contacts).

    Parameters
    ----------
    robot : Robot (floating base)
    q : array_like (..., n + 7)
    v, tau : array_like (..., n + 6)
    frames : sequence of k frame names or numbers 1..nf (their origins are the contact points)
    kind : "point" (3 constraints per contact: the origin does not accelerate) or "6d" (6: the frame is welded)
    gravity : array_like (3,) or (..., 3), optional — g in the world frame.

    Returns
    -------
    ContactDynamics
        ``acceleration`` (..., n + 6) and ``forces`` λ (..., k, 3 | 6), on the robot, world axes.

    Raises
    ------
    ModelError
        Redundant contacts (J not of full row rank, with NumPy's rank tolerance max(m, N) ε σ_max(J), in any state
        of the batch): the contact forces are not determined; the message names the redundant contacts.
    """
    what = "contact_forward_dynamics"
    robot = _moving(robot, what)
    if kind not in ("point", "6d"):
        raise InputError(f"{what}: kind = {kind!r}; use 'point' (3 constraints per contact) or '6d' (6)")
    idx = _frame_numbers(robot, frames, what)
    frames_list = [frames] if isinstance(frames, (str, int, np.integer)) else list(frames)
    dtype, batch, arr, R = _arrays(robot, what, q=q, v=v, tau=tau)
    rows = 3 if kind == "point" else 6
    M = floating_inertia_matrix(robot, arr["q"])
    H = floating_inverse_dynamics(robot, arr["q"], arr["v"], np.zeros_like(arr["v"]), gravity=gravity)
    J = np.concatenate([floating_jacobian(robot, arr["q"], i + 1)[..., :rows, :] for i in idx], -2)
    gamma, _ = _frame_accelerations(robot, arr, R, idx)
    gamma = gamma[..., :rows].reshape(batch + (rows * len(idx),))
    N, m = robot.n + 6, rows * len(idx)
    redundant = _redundant_contacts(J, rows)
    if redundant:
        names = ", ".join(f"{frames_list[c]!r} (contact {c + 1})" for c in redundant)
        raise ModelError(f"{what}: robot '{robot.name}': the contact(s) {names} are redundant — their constraints "
                         f"are combinations of those of the contacts before them (the contact Jacobian has rank "
                         f"< {m}), so the contact forces are not determined; drop them"
                         + (" or use kind='point'" if kind == "6d" else ""))
    K = np.zeros(batch + (N + m, N + m), dtype)
    K[..., :N, :N], K[..., :N, N:], K[..., N:, :N] = M, np.swapaxes(J, -1, -2), J
    rhs = np.concatenate([arr["tau"] - H, -gamma], -1)
    x = np.linalg.solve(K, rhs[..., None])[..., 0]
    out = finite_result(what, x)
    return ContactDynamics(acceleration=out[..., :N], forces=-out[..., N:].reshape(batch + (len(idx), rows)))
