"""Numerical accuracy of the forward-dynamics methods in single precision (Mata et al. 2002, §5.1, Table 5).

After Ascher, Pai & Cloutier (1997): a two-link arm whose inertia matrix is badly conditioned; the last joint
turns through a full revolution in equal steps with zero joint torques and zero velocities, and every
forward-dynamics method computes q̈ in float32 (float32 inputs, float32 arithmetic) and in float64.  The
float64 result stands in for the exact one; |q̈_double − q̈_single| measures how much each elimination
method amplifies round-off.  The condition number of A(q) along the turn explains where the errors peak.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import util as import_util

import numpy as np

from robodyn._arrays import check_robot
from robodyn._files import write_atomically
from robodyn.dynamics import api
from robodyn.errors import InputError
from robodyn.model.robot import Robot


def available_methods(kind: str = "forward") -> tuple[str, ...]:
    """Names of the methods of ``rd.forward_dynamics`` / ``inverse_dynamics`` / ``inertia_matrix`` whose module
    is installed, in the dispatch table's order.

    Parameters
    ----------
    kind : {"forward", "inverse", "inertia"}
    """
    tables = {"forward": api._FORWARD, "inverse": api._INVERSE, "inertia": api._INERTIA}
    if kind not in tables:
        raise InputError(f"kind = {kind!r}; choose one of {', '.join(tables)}")
    return tuple(m for m, module in tables[kind].items() if import_util.find_spec(module) is not None)


@dataclass(frozen=True)
class AccuracyResult:
    """Results of :func:`accuracy_study`.

    Attributes
    ----------
    robot : str
    angles : ndarray (steps,)
        Angle of the turning (last) joint, rad.
    methods : tuple of str
    qdd_double, qdd_single : ndarray (methods, steps, n)
        q̈ computed in float64 and in float32 (the latter stored as float64), rad/s² (m/s² for prismatic).
    single_dtypes : tuple of str
        dtype each method returned for float32 inputs (``"float32"`` when it honoured single precision).
    cond : ndarray (steps,)
        2-norm condition number of A(q) (float64) at each pose.
    """

    robot: str
    angles: np.ndarray
    methods: tuple[str, ...]
    qdd_double: np.ndarray
    qdd_single: np.ndarray
    single_dtypes: tuple[str, ...]
    cond: np.ndarray

    @property
    def error(self) -> np.ndarray:
        """|q̈_double − q̈_single|, (methods, steps, n)."""
        return np.abs(self.qdd_double - self.qdd_single)

    @property
    def max_error(self) -> np.ndarray:
        """Maximum of :attr:`error` over the turn, (methods, n)."""
        return self.error.max(axis=1)

    @property
    def mean_error(self) -> np.ndarray:
        """Average of :attr:`error` over the turn, (methods, n)."""
        return self.error.mean(axis=1)

    @property
    def method_spread(self) -> np.ndarray:
        """max |q̈_double(method) − q̈_double(first method)| over poses and joints, (methods,): the float64
        agreement between methods, which must be far below the single-precision errors."""
        return np.abs(self.qdd_double - self.qdd_double[:1]).max(axis=(1, 2))

    def table(self) -> tuple[list[str], list[list[str]]]:
        """Mata et al.'s Table 5 for every joint: header and rows (one per method) of formatted numbers."""
        n = self.qdd_double.shape[-1]
        header = ["method", "dtype"]
        header += [f"max |Δq̈{j + 1}|" for j in range(n)] + [f"mean |Δq̈{j + 1}|" for j in range(n)]
        header += ["float64 spread"]
        rows = []
        for k, m in enumerate(self.methods):
            row = [m, self.single_dtypes[k]]
            row += [f"{v:.6g}" for v in self.max_error[k]] + [f"{v:.6g}" for v in self.mean_error[k]]
            row += [f"{self.method_spread[k]:.2g}"]
            rows.append(row)
        return header, rows

    def plot(self, path: str | os.PathLike) -> None:
        """Write a PNG: q̈ of each joint vs angle (float32 solid, float64 dashed), |q̈_double − q̈_single| per
        method (log scale) and cond(A) vs angle.

        The file is written to a temporary name and renamed, so no partial file is ever left behind.
        """
        from matplotlib.figure import Figure  # no pyplot: the caller's backend and figures are left alone

        n = self.qdd_double.shape[-1]
        deg = np.degrees(self.angles)
        fig = Figure(figsize=(8, 2.6 * (n + 2)))
        axes = fig.subplots(n + 2, 1, sharex=True)
        for j in range(n):
            ax = axes[j]
            for k, m in enumerate(self.methods):
                line, = ax.plot(deg, self.qdd_single[k, :, j], "-", lw=1, label=f"{m} float32")
                ax.plot(deg, self.qdd_double[k, :, j], "--", lw=1, color=line.get_color(), label=f"{m} float64")
            ax.set_ylabel(f"q̈{j + 1} (rad/s²)")
            ax.legend(fontsize=7, ncol=2)
        for k, m in enumerate(self.methods):
            axes[n].semilogy(deg, np.maximum(self.error[k].max(-1), 1e-12), "-", lw=1, label=m)
        axes[n].set_ylabel("max_j |Δq̈_j| (rad/s²)")
        axes[n].legend(fontsize=7, ncol=2)
        axes[-1].semilogy(deg, self.cond, "k-")
        axes[-1].set_ylabel("cond(A)")
        axes[-1].set_xlabel(f"q{n} (deg)")
        fig.suptitle(f"{self.robot}: forward dynamics in single vs double precision")
        fig.tight_layout()
        _save_figure(fig, path)


def _save_figure(fig, path) -> None:
    """Write ``fig`` as a PNG to ``path`` atomically (no partial file)."""
    write_atomically(path, lambda fh: fig.savefig(fh, dpi=120, format="png"), what="plot file", binary=True)


def accuracy_study(robot: Robot, methods=None, steps: int = 180) -> AccuracyResult:
    """Run the single- vs double-precision study of Mata et al. §5.1 (after Ascher, Pai & Cloutier).

    The last joint takes ``steps`` equally spaced angles through a full turn (``steps = 180``: 2° steps,
    0°…358°), every other joint stays at 0; q̇ = 0, Γ = 0; gravity is the robot's (``ascher2``: along −y).

    Parameters
    ----------
    robot : Robot
    methods : sequence of str, optional
        Methods of :func:`robodyn.forward_dynamics`; default every installed one (:func:`available_methods`).
    steps : int
        Number of poses (≥ 2).

    Returns
    -------
    AccuracyResult
    """
    check_robot(robot)
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 2:
        raise InputError(f"steps = {steps!r}; give an integer >= 2 (180 gives Mata et al.'s 2° steps)")
    methods = available_methods("forward") if methods is None else tuple(methods)
    if not methods:
        raise InputError("no forward-dynamics method to compare; give methods=[...] or install one")
    n = robot.n
    angles = 2 * np.pi * np.arange(steps) / steps
    q = np.zeros((steps, n))
    q[:, -1] = angles
    zero = np.zeros_like(q)
    double, single, dtypes = [], [], []
    for m in methods:
        double.append(api.forward_dynamics(robot, q, zero, zero, method=m))
        q32, zero32 = q.astype(np.float32), zero.astype(np.float32)
        out32 = api.forward_dynamics(robot, q32, zero32, zero32, method=m)
        dtypes.append(str(np.asarray(out32).dtype))
        single.append(np.asarray(out32, dtype=np.float64))
    cond = np.linalg.cond(api.inertia_matrix(robot, q))
    return AccuracyResult(
        robot=robot.name, angles=angles, methods=tuple(methods), qdd_double=np.array(double),
        qdd_single=np.array(single), single_dtypes=tuple(dtypes), cond=cond,
    )
