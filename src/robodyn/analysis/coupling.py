"""Inertial-coupling analysis (De Luca, "Analysis of inertial couplings"; Khalil & Dombre §9.3.3.3 c): which
entries A_ij of the inertia matrix (and Q_i of the gravity vector) depend on which joint variables, found by
redrawing one q_k at a time on random configurations (docs/analysis.md, "Inertial couplings").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn.model.robot import check_robot
from robodyn.dynamics import api
from robodyn.dynamics.newton_euler import gravity_torques
from robodyn.errors import InputError
from robodyn.model.robot import Robot


@dataclass(frozen=True)
class CouplingStructure:
    """Dependency pattern of A(q) and Q(q).

    inertia_depends : bool (n, n, n) — [i, j, k]: A_ij changes with q_k.
    inertia_zero : bool (n, n) — A_ij = 0 on every sample.
    gravity_depends : bool (n, n) — [i, k]: Q_i changes with q_k.
    gravity_zero : bool (n,) — Q_i = 0 on every sample.
    samples : number of base configurations; rtol : relative threshold used.
    """

    robot_name: str
    inertia_depends: np.ndarray
    inertia_zero: np.ndarray
    gravity_depends: np.ndarray
    gravity_zero: np.ndarray
    samples: int
    rtol: float

    @property
    def n(self) -> int:
        return int(self.inertia_zero.shape[0])

    @property
    def inertia_constant(self) -> np.ndarray:
        """A_ij constant and nonzero, (n, n) bool."""
        return ~self.inertia_zero & ~np.any(self.inertia_depends, -1)

    @property
    def inertia_variables(self) -> list[list[tuple[int, ...]]]:
        """For every A_ij the 1-based joints it depends on, e.g. ``[[(2,), (2,)], [(2,), ()]]`` for the 2R."""
        return [[tuple(int(k) + 1 for k in np.flatnonzero(self.inertia_depends[i, j])) for j in range(self.n)]
                for i in range(self.n)]

    @property
    def gravity_variables(self) -> list[tuple[int, ...]]:
        """For every Q_i the 1-based joints it depends on."""
        return [tuple(int(k) + 1 for k in np.flatnonzero(self.gravity_depends[i])) for i in range(self.n)]

    def inertia_entry(self, i: int, j: int) -> str:
        """De Luca's notation for A_ij (1-based): ``"m12(q2)"``, ``"m22 const"`` or ``"m13 = 0"``."""
        name = f"m{i}{j}" if self.n < 10 else f"m{i},{j}"
        return _entry(name, self.inertia_zero[i - 1, j - 1], self.inertia_variables[i - 1][j - 1])

    def gravity_entry(self, i: int) -> str:
        """``"g1(q1, q2)"``, ``"g2 const"`` or ``"g3 = 0"`` (1-based)."""
        return _entry(f"g{i}", self.gravity_zero[i - 1], self.gravity_variables[i - 1])


def _entry(name: str, zero: bool, deps: tuple) -> str:
    if zero:
        return f"{name} = 0"
    return f"{name}({', '.join(f'q{k}' for k in deps)})" if deps else f"{name} const"


def unlimited_prismatic_joints(robot: Robot) -> list[int]:
    """1-based numbers (order of q) of the prismatic joints without finite limits ``qlim``."""
    return [k + 1 for k, f in enumerate(robot.joint_frames)
            if robot.sigma[f] == 1 and not np.all(np.isfinite(robot.qlim[k]))]


def joint_ranges(robot: Robot, prismatic_range=None, require_prismatic: bool = False) -> np.ndarray:
    """Sampling intervals (n, 2): [−π, π] for revolute joints (A, C, Q are 2π-periodic in them); for a
    prismatic joint its finite ``qlim``, else ``prismatic_range``, else (−1, 1) m unless ``require_prismatic``."""
    out = np.tile([-np.pi, np.pi], (robot.n, 1))
    for k, f in enumerate(robot.joint_frames):
        if robot.sigma[f] != 1:
            continue
        if np.all(np.isfinite(robot.qlim[k])):
            out[k] = robot.qlim[k]
        elif prismatic_range is not None:
            lo, hi = prismatic_range
            if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
                raise InputError(f"prismatic_range = {prismatic_range!r}; give two finite numbers lo < hi (m)")
            out[k] = (lo, hi)
        elif require_prismatic:
            raise InputError(
                f"robot '{robot.name}': prismatic joint {k + 1} has no finite limits, so the bounds grow with |q|; "
                "give qlim in the robot or prismatic_range=(lo, hi) (CLI: --prismatic-range lo,hi)"
            )
        else:
            out[k] = (-1.0, 1.0)
    return out


def inertial_couplings(robot: Robot, samples: int = 16, seed: int = 0, rtol: float = 1e-9,
                       prismatic_range=None, method: str = "composite") -> CouplingStructure:
    """Find which entries of A(q) and Q(q) depend on which joints by sampling.

    Parameters
    ----------
    robot : Robot
    samples : int — number of random base configurations (≥ 2).
    seed : int — random generator seed (the result is deterministic).
    rtol : float — a change larger than rtol · max|A| (resp. max|Q|) over the samples counts as a dependency;
        far above rounding (~1e-15) and far below any physical coupling.
    prismatic_range : (lo, hi), optional — sampling interval of prismatic joints without finite limits.
    method : str — inertia-matrix method.

    Returns
    -------
    CouplingStructure
    """
    check_robot(robot)
    if int(samples) < 2:
        raise InputError(f"samples = {samples}; give at least 2 configurations")
    n, S = robot.n, int(samples)
    lo, hi = joint_ranges(robot, prismatic_range).T
    rng = np.random.default_rng(seed)
    base = rng.uniform(lo, hi, (S, n))
    moved = np.repeat(base[None], n, 0)  # (n, S, n): row k has q_k redrawn
    for k in range(n):
        moved[k, :, k] = rng.uniform(lo[k], hi[k], S)
    A0, Ak = api.inertia_matrix(robot, base, method=method), api.inertia_matrix(robot, moved, method=method)
    Q0, Qk = gravity_torques(robot, base), gravity_torques(robot, moved)
    tolA = rtol * max(np.max(np.abs(A0)), np.max(np.abs(Ak)))
    tolQ = rtol * max(np.max(np.abs(Q0)), np.max(np.abs(Qk)))
    inertia_depends = np.moveaxis(np.max(np.abs(Ak - A0), axis=1) > tolA, 0, -1)  # (n, n, n) [i, j, k]
    gravity_depends = (np.max(np.abs(Qk - Q0), axis=1) > tolQ).T  # (n, n) [i, k]
    inertia_zero = np.max(np.abs(np.concatenate([A0[None], Ak])), axis=(0, 1)) <= tolA
    gravity_zero = np.max(np.abs(np.concatenate([Q0[None], Qk])), axis=(0, 1)) <= tolQ
    return CouplingStructure(robot.name, inertia_depends, inertia_zero, gravity_depends, gravity_zero, S, rtol)
