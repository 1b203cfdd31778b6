"""Task-space reference trajectories: a straight line at constant orientation with a quintic time law."""

from __future__ import annotations

import numpy as np

from robodyn.errors import InputError
from robodyn.spatial import rot_z


def quintic(t, duration: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Quintic time law s(t) = 10τ³ − 15τ⁴ + 6τ⁵, τ = t/T, and its derivatives ṡ, s̈.

    s goes from 0 to 1 with zero velocity and acceleration at both ends; constant (0 or 1) outside [0, T].

    Parameters
    ----------
    t : array_like (...,), s
    duration : float, T > 0 (s)

    Returns
    -------
    s, sd, sdd : ndarray (...,) (1, 1/s, 1/s²)
    """
    if not (duration > 0 and np.isfinite(duration)):
        raise InputError(f"duration = {duration!r}; give a positive finite time in seconds")
    if not np.all(np.isfinite(np.asarray(t, dtype=float))):
        raise InputError("argument 't' contains NaN or inf; give finite times (s)")
    tau = np.clip(np.asarray(t, dtype=float) / duration, 0.0, 1.0)
    inside = (np.asarray(t) > 0) & (np.asarray(t) < duration)
    s = tau**3 * (10 - 15 * tau + 6 * tau**2)
    sd = 30 * tau**2 * (1 - tau) ** 2 / duration * inside
    sdd = 60 * tau * (1 - tau) * (1 - 2 * tau) / duration**2 * inside
    return s, sd, sdd


def rot_y(angle) -> np.ndarray:
    """Rot(y, angle) (..., 3, 3)."""
    c, s = np.cos(angle), np.sin(angle)
    o, z = np.ones_like(c), np.zeros_like(c)
    return np.stack([np.stack([c, z, s], -1), np.stack([z, o, z], -1), np.stack([-s, z, c], -1)], -2)


def zyz_matrix(phi, theta, psi) -> np.ndarray:
    """Rotation matrix of ZYZ Euler angles (rad): Rot(z, φ) Rot(y, θ) Rot(z, ψ), (..., 3, 3)."""
    return rot_z(phi) @ rot_y(theta) @ rot_z(psi)


def straight_line(p_start, p_end, rotation, duration: float, t):
    """Pose, velocity and acceleration of a frame moving on the segment p_start → p_end at constant orientation.

    p(t) = p_start + s(t) (p_end − p_start) with the :func:`quintic` time law; the orientation is ``rotation``
    throughout, so the angular velocity and acceleration are zero.

    Parameters
    ----------
    p_start, p_end : array_like (3,), m, base frame
    rotation : array_like (3, 3), orientation of the frame in the base frame
    duration : float, s
    t : array_like (N,), s

    Returns
    -------
    T : ndarray (N, 4, 4)  desired homogeneous transform ^0T
    xd : ndarray (N, 6)    [v; ω] (m/s, rad/s), base frame
    xdd : ndarray (N, 6)   [a; ω̇] (m/s², rad/s²), base frame
    """
    p0, p1 = np.asarray(p_start, dtype=float), np.asarray(p_end, dtype=float)
    R = np.asarray(rotation, dtype=float)
    if p0.shape != (3,) or p1.shape != (3,):
        raise InputError("p_start and p_end must be 3 numbers (m, base frame)")
    if R.shape != (3, 3) or not np.allclose(R @ R.T, np.eye(3), atol=1e-12) or np.linalg.det(R) < 0:
        raise InputError("rotation must be a 3x3 rotation matrix (orthonormal, det = +1)")
    t = np.atleast_1d(np.asarray(t, dtype=float))
    s, sd, sdd = quintic(t, duration)
    delta = p1 - p0
    T = np.zeros(t.shape + (4, 4))
    T[..., :3, :3] = R
    T[..., :3, 3] = p0 + s[..., None] * delta
    T[..., 3, 3] = 1.0
    xd = np.zeros(t.shape + (6,))
    xdd = np.zeros(t.shape + (6,))
    xd[..., :3] = sd[..., None] * delta
    xdd[..., :3] = sdd[..., None] * delta
    return T, xd, xdd
