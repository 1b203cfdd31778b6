"""Barrett WAM study: the built-in ``wam7`` model's cumulative first moments next to libbarrett's calibrated ones.

libbarrett (``config/wam7w.conf``, Barrett Technology) stores the gravity vectors μ_j ("mus") that its
calibration (Dellin's method) produced on a real WAM, in Dellin's convention: standard-DH frame j at the end of
link j (z along joint j+1), μ_j = m_j r_cj − M_j r_mj (Dellin eq. (14)), i.e. link j's first moment about joint
j's point O_{j−1} plus the mass of links j+1..n at O_j, in frame j's axes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn.model.robot import check_robot
from robodyn.errors import InputError
from robodyn.identification.gravity import first_moments, gravity_parameter_structure, gravity_regressor
from robodyn.kinematics import base_poses
from robodyn.model.robot import Robot

#: libbarrett wam7w.conf kinematics (standard DH): alpha (rad), a (m), d (m) of links 1..7, theta = q.
LIBBARRETT_DH = np.array([
    [-np.pi / 2, 0.0, 0.0],
    [np.pi / 2, 0.0, 0.0],
    [-np.pi / 2, 0.045, 0.55],
    [np.pi / 2, -0.045, 0.0],
    [-np.pi / 2, 0.0, 0.3],
    [np.pi / 2, 0.0, 0.0],
    [-np.pi / 2, 0.0, 0.0609],
])

#: libbarrett wam7w.conf calibrated gravity vectors "mus" (kg m), row j in standard-DH frame j.
LIBBARRETT_MUS = np.array([
    [-0.63757, -0.00000, -0.00020],
    [0.08649, -0.17027, 3.20627],
    [0.20419, 0.24732, 0.09763],
    [-0.18784, -0.10360, 0.91963],
    [0.00024, 0.07209, 0.02599],
    [-0.00198, -0.02873, 0.14021],
    [0.00692, -0.00069, -0.00026],
])


def standard_dh_frames(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rotations (..., 8, 3, 3) and origins (..., 8, 3) of libbarrett's standard-DH frames 0..7 at q (..., 7)."""
    q = np.asarray(q, dtype=float)
    batch = q.shape[:-1]
    R = np.empty(batch + (8, 3, 3))
    P = np.empty(batch + (8, 3))
    R[..., 0, :, :], P[..., 0, :] = np.eye(3), 0.0
    for j, (alpha, a, d) in enumerate(LIBBARRETT_DH):
        c, s = np.cos(q[..., j]), np.sin(q[..., j])
        ca, sa = np.cos(alpha), np.sin(alpha)
        # Rz(θ) Tz(d) Tx(a) Rx(α)
        local = np.zeros(batch + (3, 3))
        local[..., 0, 0], local[..., 0, 1], local[..., 0, 2] = c, -s * ca, s * sa
        local[..., 1, 0], local[..., 1, 1], local[..., 1, 2] = s, c * ca, -c * sa
        local[..., 2, 1], local[..., 2, 2] = sa, ca
        offset = np.stack([a * c, a * s, np.full_like(c, d)], axis=-1)
        R[..., j + 1, :, :] = R[..., j, :, :] @ local
        P[..., j + 1, :] = P[..., j, :] + np.einsum("...ab,...b->...a", R[..., j, :, :], offset)
    return R, P


def libbarrett_first_moments(robot: Robot, q=None) -> np.ndarray:
    """The model's μ_j in libbarrett's convention (Dellin eq. (14) in standard-DH frames), (7, 3) kg m.

    Computed from the model's centres of mass in the base frame at pose ``q`` (default 0; the result is the same at
    every pose): μ_j = ^0R_jᵀ [m_j (c_j − O_{j−1}) + M_{j+1} (O_j − O_{j−1})] with O_j the standard-DH origins.
    """
    q = np.zeros(robot.n) if q is None else np.asarray(q, dtype=float)
    R0, P0 = base_poses(robot, q, np.float64)
    com = P0 + np.einsum("...jab,jb->...ja", R0, robot.MS / robot.M[:, None])
    Rs, Ps = standard_dh_frames(q)
    M = np.cumsum(robot.M[::-1])[::-1]
    mu = np.empty(q.shape[:-1] + (7, 3))
    for j in range(7):
        nxt = M[j + 1] if j + 1 < 7 else 0.0
        v = robot.M[j] * (com[..., j, :] - Ps[..., j, :]) + nxt * (Ps[..., j + 1, :] - Ps[..., j, :])
        mu[..., j, :] = np.einsum("...ba,...b->...a", Rs[..., j + 1, :, :], v)
    return mu


def libbarrett_to_robodyn(robot: Robot, mus: np.ndarray) -> np.ndarray:
    """Turn μ from libbarrett's standard-DH frame j into robodyn's frame j (both fixed to link j): a rotation.

    The two conventions also take the moments about different points of the same joint axes; that changes only
    components along the joint axes, which static torques do not see (compare grouped values).
    """
    q = np.zeros(robot.n)
    R0, _ = base_poses(robot, q, np.float64)
    Rs, _ = standard_dh_frames(q)
    return np.einsum("jba,jbc,jc->ja", R0, Rs[1:], mus)


@dataclass(frozen=True)
class WamGravityStudy:
    """Model vs calibrated first moments of the Barrett WAM (see :func:`wam_gravity_study`)."""

    model_libbarrett: np.ndarray       # (7, 3) model μ in libbarrett's convention
    calibrated_libbarrett: np.ndarray  # (7, 3) libbarrett's mus
    model_grouped: np.ndarray          # (7, 3) identifiable form in robodyn's frames
    calibrated_grouped: np.ndarray     # (7, 3)
    identifiable: np.ndarray           # (7, 3) bool
    link_relative_difference: np.ndarray    # (7,) ‖model − calibrated‖ / ‖calibrated‖, grouped
    torque_rms: np.ndarray             # (7,) RMS over random poses of model − calibrated gravity torques, N m
    torque_scale: np.ndarray           # (7,) RMS of the calibrated gravity torques, N m


def wam_gravity_study(robot: Robot | None = None, poses: int = 2000, seed: int = 0) -> WamGravityStudy:
    """Compare the ``wam7`` model's cumulative first moments with libbarrett's calibrated "mus".

    Parameters
    ----------
    robot : Robot, optional — default the built-in ``wam7``.
    poses : int — random poses (uniform in ±π) for the gravity-torque comparison.
    seed : int

    Returns
    -------
    WamGravityStudy
    """
    from robodyn.model.io import load

    robot = load("wam7") if robot is None else robot
    if check_robot(robot).n != 7:
        raise InputError(f"robot '{robot.name}' has n = {robot.n} joints; the WAM study needs the 7-joint WAM (wam7)")
    structure = gravity_parameter_structure(robot)
    model_g = first_moments(robot, grouped=True)
    calib_g = structure.group(libbarrett_to_robodyn(robot, LIBBARRETT_MUS).ravel()).reshape(7, 3)
    diff = np.linalg.norm(model_g - calib_g, axis=1)
    scale = np.linalg.norm(calib_g, axis=1)
    rel = np.divide(diff, scale, out=np.full(7, np.nan), where=scale > 0)
    q = np.random.default_rng(seed).uniform(-np.pi, np.pi, (poses, robot.n))
    Y = gravity_regressor(robot, q)
    t_model, t_calib = Y @ model_g.ravel(), Y @ calib_g.ravel()
    return WamGravityStudy(
        model_libbarrett=libbarrett_first_moments(robot), calibrated_libbarrett=LIBBARRETT_MUS.copy(),
        model_grouped=model_g, calibrated_grouped=calib_g, identifiable=structure.identifiable.reshape(7, 3),
        link_relative_difference=rel, torque_rms=np.sqrt(np.mean((t_model - t_calib) ** 2, axis=0)),
        torque_scale=np.sqrt(np.mean(t_calib**2, axis=0)),
    )
