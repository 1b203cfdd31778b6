"""Assertions and fixtures shared by the tests of the alternative formulations (Gibbs–Appell, spatial operator)."""

from __future__ import annotations

import numpy as np

RTOL = 1e-10


def assert_close(a, b, rtol=RTOL):
    """Same shape and max|a − b| ≤ rtol · max|b| (relative to the largest entry, no absolute floor)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    scale = max(np.max(np.abs(b)), 1e-300)
    err = np.max(np.abs(a - b))
    assert err <= rtol * scale, f"max error {err:.3e} > {rtol:g} x {scale:.3e}"


def wrenches_for(robot, seed, batch=()):
    """Random wrenches (..., nf, 6) for ``robot``, reproducible from ``seed``."""
    return np.random.default_rng(seed + 7).normal(size=batch + (robot.nf, 6))


def planar2r_closed_form(q):
    """Textbook inertia matrix D (2, 2) and gravity torques G (2,) of the built-in ``planar2r`` (uniform rods,
    m = 1 kg, l = 1 m, centre of mass at l/2, g = 9.81 m/s² in the plane) at q (2,)."""
    m, l, lc = 1.0, 1.0, 0.5
    I = m * l**2 / 12
    c2 = np.cos(q[1])
    D = np.array(
        [
            [2 * I + m * lc**2 + m * (l**2 + lc**2 + 2 * l * lc * c2), I + m * (lc**2 + l * lc * c2)],
            [I + m * (lc**2 + l * lc * c2), I + m * lc**2],
        ]
    )
    g = 9.81
    G = np.array([(m * lc + m * l) * g * np.cos(q[0]) + m * lc * g * np.cos(q[0] + q[1]), m * lc * g * np.cos(q[0] + q[1])])
    return D, G
