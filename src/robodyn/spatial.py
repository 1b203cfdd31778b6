"""Small batched 3-D vector helpers used by every recursive algorithm.

Vectors have shape (..., 3), rotation matrices (..., 3, 3); leading axes broadcast.
"""

from __future__ import annotations

import numpy as np


def mv(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R v."""
    return np.einsum("...ij,...j->...i", R, v)


def mtv(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rᵀ v."""
    return np.einsum("...ji,...j->...i", R, v)


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)


def cross_z(a: np.ndarray, s: np.ndarray) -> np.ndarray:
    """a × (s z) for the unit vector z = [0, 0, 1] and a scalar (...,) s: [a_y s, −a_x s, 0]."""
    return np.stack([a[..., 1] * s, -a[..., 0] * s, np.zeros_like(s)], -1)


def along_z(s: np.ndarray) -> np.ndarray:
    """s z = [0, 0, s] for a scalar (...,) s."""
    z = np.zeros_like(s)
    return np.stack([z, z, s], -1)


def rot_x(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_z(angle) -> np.ndarray:
    """Rot(z, angle) for a scalar or a (...,) array → (..., 3, 3)."""
    c, s = np.cos(angle), np.sin(angle)
    o, z = np.ones_like(c), np.zeros_like(c)
    return np.stack([np.stack([c, -s, z], -1), np.stack([s, c, z], -1), np.stack([z, z, o], -1)], -2)
