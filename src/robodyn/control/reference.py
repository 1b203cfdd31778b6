"""Joint-space reference trajectories for the controllers: any object with ``.sample(t) -> (q, qd, qdd)``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn.arrays import finite_array
from robodyn.errors import InputError


@dataclass(frozen=True)
class QuinticReference:
    """Rest-to-rest quintic q_d(t) = q0 + s(t) (qf − q0), s = 10τ³ − 15τ⁴ + 6τ⁵, τ = t/T; constant outside [0, T].

    Parameters
    ----------
    q0, qf : array_like (n,), start and goal (rad | m)
    duration : float, T > 0 (s)
    """

    q0: np.ndarray
    qf: np.ndarray
    duration: float

    def __post_init__(self):
        q0, qf = finite_array("q0", self.q0), finite_array("qf", self.qf)
        if q0.ndim != 1 or q0.shape != qf.shape:  # finite_array refused NaN and inf
            raise InputError("q0 and qf must be finite 1-D arrays of the same length (rad | m), one per joint")
        if not (self.duration > 0 and np.isfinite(self.duration)):
            raise InputError(f"duration = {self.duration!r}; give a positive finite time in seconds")
        object.__setattr__(self, "q0", q0)
        object.__setattr__(self, "qf", qf)

    def sample(self, t):
        """q_d, q̇_d, q̈_d at the times t (...,): arrays (..., n)."""
        from robodyn.simulation.trajectories import quintic

        s, sd, sdd = quintic(t, self.duration)
        delta = self.qf - self.q0
        s, sd, sdd = (np.asarray(x)[..., None] for x in (s, sd, sdd))
        return self.q0 + s * delta, sd * delta, sdd * delta


def sample_reference(reference, t):
    """(q_d, q̇_d, q̈_d) from ``reference.sample(t)``, with a clear error for an object without ``sample``."""
    if not hasattr(reference, "sample"):
        raise InputError("reference must have a method sample(t) -> (q, qd, qdd), e.g. QuinticReference(q0, qf, T)")
    return tuple(np.asarray(x, dtype=float) for x in reference.sample(t))
