"""Figures of what users look at: joint torques, trajectories, simulation results, identification fits,
velocity ellipsoids and the workspace.

Every function returns a :class:`matplotlib.figure.Figure` built directly (no pyplot, the global backend is
never changed), so it works in scripts, notebooks (display the returned figure) and servers alike.  ``path=``
also saves it atomically (format from the suffix: ``.png``, ``.pdf``, ``.svg``...; no partial file on error).

Ellipsoids (for a frame's origin O_j, with J_v the 3 × n translational rows of the Jacobian, frame R_0):

* ``"manipulability"``: the velocities reachable with ‖q̇‖ ≤ 1, {J_v q̇}, of matrix J_v J_vᵀ (Yoshikawa);
* ``"inertia"``: the velocities of unit kinetic energy, q̇ᵀ A q̇ ≤ 1, of matrix J_v A⁻¹ J_vᵀ; the semi-axis along
  a direction u is 1/√m_u, with m_u the apparent mass of the end point along u.

Semi-axes are √λ_i along the eigenvectors of that matrix, times ``scale``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from robodyn.model.arguments import frame_index
from robodyn.files import write_atomically
from robodyn.errors import InputError
from robodyn.sanitize import figure_text

__all__ = ("torques", "trajectory", "simulation", "identification", "spectrum", "ellipsoids", "ellipsoid_axes",
           "workspace")


def _series(t, y, name: str):
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)
    if t.ndim != 1 or t.size == 0:
        raise InputError(f"argument 't' has shape {t.shape}; give a 1-D array of times (s)")
    if y.ndim == 1:
        y = y[:, None]
    if y.ndim != 2 or y.shape[0] != t.size:
        raise InputError(f"argument '{name}' has shape {y.shape}; expected ({t.size}, n), one row per time of t")
    return t, y


def _names(names, n: int) -> list[str]:
    if names is None:
        return [f"joint {k}" for k in range(1, n + 1)]
    names = [figure_text(s) for s in names]  # often a model file's joint names: shown as they are
    if len(names) != n:
        raise InputError(f"argument 'names' has {len(names)} entries; give {n}, one per joint")
    return names


def _finish(fig: Figure, path) -> Figure:
    if path is not None:
        path = Path(path)
        fmt = path.suffix.lstrip(".").lower() or "png"
        write_atomically(path, lambda fh: fig.savefig(fh, format=fmt), what="plot file", binary=True)
    return fig


def torques(t, tau, *, names=None, title: str | None = None, ylabel: str = "joint torque / force (N m | N)",
            path: str | os.PathLike | None = None) -> Figure:
    """Joint torques against time, one line per joint.

    Parameters
    ----------
    t : array (T,)
        Times (s).
    tau : array (T, n)
        Joint torques (N m) or forces (N).
    names : sequence of n str, optional
        Legend entries (default "joint 1".."joint n"; e.g. ``robot.q_names``), shown as they are: a ``$`` is
        a dollar sign, not math text (``title`` is Matplotlib text, math included).
    """
    return _panels(t, [("tau", tau, ylabel)], names, title or "joint torques", path, height=4.5)


def trajectory(t, q, qd=None, qdd=None, *, names=None, title: str | None = None,
               path: str | os.PathLike | None = None) -> Figure:
    """Joint positions (and velocities, accelerations when given) against time: one panel each.

    Parameters
    ----------
    t : array (T,)
    q, qd, qdd : arrays (T, n)
        rad | m, rad/s | m/s, rad/s² | m/s².
    """
    rows = [("q", q, "position (rad | m)"), ("qd", qd, "velocity (rad/s | m/s)"),
            ("qdd", qdd, "acceleration (rad/s² | m/s²)")]
    return _panels(t, [r for r in rows if r[1] is not None], names, title or "joint trajectory", path)


def simulation(result, *, names=None, title: str | None = None, path: str | os.PathLike | None = None) -> Figure:
    """A simulation result: panels for its ``q``, the tracking error ``q − q_r``, ``qd`` and ``tau`` against ``t``
    (those it has).

    ``result`` is anything with attributes ``t`` (T,) and ``q`` (T, n), optionally ``q_reference``, ``qd`` and
    ``tau`` (e.g. what :func:`robodyn.simulate` returns).
    """
    if not hasattr(result, "t") or not hasattr(result, "q"):
        raise InputError("argument 'result' needs attributes t (T,) and q (T, n), e.g. the value of rd.simulate")
    reference = getattr(result, "q_reference", None)
    error = None if reference is None else np.asarray(result.q) - np.asarray(reference)
    rows = [("q", result.q, "position (rad | m)"), ("q - q_r", error, "tracking error (rad | m)"),
            ("qd", getattr(result, "qd", None), "velocity (rad/s | m/s)"),
            ("tau", getattr(result, "tau", None), "torque / force (N m | N)")]
    return _panels(result.t, [r for r in rows if r[1] is not None], names, title or "simulation", path)


def _panels(t, rows, names, title, path, height: float | None = None) -> Figure:
    data = [(key, *_series(t, y, key), label) for key, y, label in rows]
    n = data[0][2].shape[1]
    if any(y.shape[1] != n for _, _, y, _ in data):
        raise InputError(f"arguments {', '.join(k for k, *_ in data)} must have the same number of joints n = {n}")
    labels = _names(names, n)
    fig = Figure(figsize=(8, height or 2.6 * len(data) + 0.6), layout="constrained")
    axes = fig.subplots(len(data), 1, sharex=True, squeeze=False)[:, 0]
    for ax, (_, tt, y, label) in zip(axes, data):
        for k in range(n):
            ax.plot(tt, y[:, k], label=labels[k])
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[0].legend(loc="best", fontsize="small")
    axes[0].set_title(title)
    axes[-1].set_xlabel("time (s)")
    return _finish(fig, path)


def identification(t, tau_measured, tau_predicted, *, names=None, title: str | None = None,
                   path: str | os.PathLike | None = None, rows=None, runs=None, xlabel: str = "time (s)") -> Figure:
    """Measured and predicted joint torques, one panel per joint, with the RMS residual in each panel's title
    and the rows it covers.

    Parameters
    ----------
    t : array (T,)
        The abscissa: times (s), or sample numbers with ``xlabel="sample"``.
    tau_measured, tau_predicted : arrays (T, n)
        e.g. measured torques and ``D @ K`` of the identified parameters (N m | N).
    rows : bool array (T, n), optional
        The rows of each joint the RMS residual covers (e.g. the equations an identification with
        ``min_velocity`` kept: the residual RMS of its fit); default all T.
    runs : sequence of int, optional
        The samples of each run, when the rows are several runs one after the other (their sum is T): each run is
        drawn apart, a dotted line at each boundary.
    xlabel : str
        The label of the abscissa.
    """
    t, meas = _series(t, tau_measured, "tau_measured")
    _, pred = _series(t, tau_predicted, "tau_predicted")
    if pred.shape != meas.shape:
        raise InputError(f"argument 'tau_predicted' has shape {pred.shape}; expected {meas.shape} like tau_measured")
    n = meas.shape[1]
    labels = _names(names, n)
    used = np.ones(meas.shape, bool) if rows is None else np.asarray(rows, dtype=bool)
    if used.shape != meas.shape:
        raise InputError(f"argument 'rows' has shape {used.shape}; expected {meas.shape} like tau_measured")
    counts = [len(t)] if runs is None else [int(c) for c in runs]
    if min(counts, default=0) < 1 or sum(counts) != len(t):
        raise InputError(f"argument 'runs' gives {counts}; give each run's number of samples (> 0), {len(t)} in all")
    parts = np.split(np.arange(len(t)), np.cumsum(counts)[:-1])
    fig = Figure(figsize=(8, 2.2 * n + 0.6), layout="constrained")
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    for k, ax in enumerate(axes):
        for i, part in enumerate(parts):
            ax.plot(t[part], meas[part, k], label=None if i else "measured", color="0.4")
            ax.plot(t[part], pred[part, k], label=None if i else "predicted", color="C3", linestyle="--")
            if i:
                ax.axvline(t[part[0]], color="0.6", linestyle=":", linewidth=1)
        r = (meas[:, k] - pred[:, k])[used[:, k]]
        covers = "all" if r.size == len(t) else f"{r.size} of the"
        ax.set_title(f"{labels[k]}: RMS residual {float(np.sqrt(np.mean(r ** 2))):.4g} ({covers} {len(t)} rows)"
                     if r.size else f"{labels[k]}: no row fitted (predicted only)", fontsize="medium")
        ax.set_ylabel("N m | N")
        ax.grid(True, alpha=0.3)
    axes[0].legend(loc="best", fontsize="small")
    axes[-1].set_xlabel(figure_text(xlabel))
    if title:
        fig.suptitle(title)
    return _finish(fig, path)


def spectrum(t, q, tau=None, *, cutoff=None, names=None, title: str | None = None,
             path: str | os.PathLike | None = None) -> Figure:
    """Power spectral densities of measured q (and τ) with the low-pass cut-off: the diagnostic of
    :func:`robodyn.identification.prepare_identification_data`'s ``cutoff="auto"`` (the motion's band, the noise floor above it).

    Parameters
    ----------
    t : array (T,) s, uniform
    q : array (T, n) — measured positions;  tau : array (T, n), optional — measured torques.
    cutoff : float, "auto" or None — the cut-off to mark (Hz); ``"auto"``: the one the automatic rule chooses.
    """
    from robodyn.identification.data import auto_cutoff, position_spectrum

    t, q = _series(t, q, "q")
    panels = [("q", q, "PSD of q (rad² / Hz)")]
    if tau is not None:
        _, tau = _series(t, tau, "tau")
        if tau.shape != q.shape:
            raise InputError(f"argument 'tau' has shape {tau.shape}; expected {q.shape} like q")
        panels.append(("tau", tau, "PSD of τ ((N m)² / Hz)"))
    if t.size < 8 or not np.all(np.diff(t) > 0):
        raise InputError("argument 't': give at least 8 strictly increasing, uniform times")
    fc = auto_cutoff(t, q)[0] if isinstance(cutoff, str) and cutoff == "auto" else cutoff
    labels = _names(names, q.shape[1])
    fig = Figure(figsize=(8, 3.2 * len(panels) + 0.6), layout="constrained")
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    for ax, (_, x, ylabel) in zip(axes, panels):
        f, P = position_spectrum(t, x)
        for k, label in enumerate(labels):
            ax.loglog(f[1:], np.maximum(P[1:, k], 1e-300), label=label, lw=0.8)
        if fc is not None:
            ax.axvline(float(fc), color="k", linestyle="--", lw=1.0, label=f"cut-off {float(fc):.3g} Hz")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(loc="best", fontsize="small")
    axes[-1].set_xlabel("frequency (Hz)")
    axes[0].set_title(title or "spectra of the measured signals")
    return _finish(fig, path)


def ellipsoid_axes(robot, q, kind: str = "manipulability", frame: int | None = None):
    """Centres (..., 3), semi-axis lengths (..., 3) and directions (..., 3, 3) (columns) of the ellipsoids.

    See the module notes for the two kinds; ``frame`` defaults to the end frame (tip of the longest movable chain).
    """
    from robodyn.dynamics.api import inertia_matrix
    from robodyn.kinematics import forward_kinematics, jacobian

    if kind not in ("manipulability", "inertia"):
        raise InputError(f"argument kind = {kind!r}; use 'manipulability' or 'inertia'")
    j = frame_index(robot, frame)
    Jv = jacobian(robot, q, frame=j + 1)[..., :3, :]
    if kind == "manipulability":
        E = Jv @ np.swapaxes(Jv, -1, -2)
    else:
        A = inertia_matrix(robot, q)
        E = Jv @ np.linalg.solve(A, np.swapaxes(Jv, -1, -2))
    lam, vec = np.linalg.eigh(E)
    centre = forward_kinematics(robot, q)[..., j, :3, 3]
    return centre, np.sqrt(np.clip(lam, 0.0, None)), vec


def ellipsoids(robot, q, *, kind: str = "manipulability", frame: int | str | None = None, scale: float = 1.0,
               title: str | None = None, path: str | os.PathLike | None = None) -> Figure:
    """Velocity ellipsoids of a frame's origin at one or several configurations, in 3-D (base frame R_0).

    Parameters
    ----------
    robot : Robot
    q : array (n,) or (K, n)
        Configurations.
    kind : "manipulability" or "inertia"
        See the module notes.
    frame : int (1..nf) or frame name, optional
        Default: the end frame (tip of the longest movable chain; frame nf on a serial robot).
    scale : float
        Display factor applied to the semi-axes (m per m/s).

    Notes
    -----
    Each ellipsoid is drawn as a wireframe plus its three principal semi-axes (one 3-D line each, from the
    centre to centre + scale · √λ_i · v_i, gid "semi-axis"); the frame origins are joined by a line.
    """
    q = np.atleast_2d(np.asarray(q, dtype=float))
    centre, semi, vec = ellipsoid_axes(robot, q, kind, frame)
    fig = Figure(figsize=(6.5, 6), layout="constrained")
    ax = fig.add_subplot(projection="3d")
    u, v = np.meshgrid(np.linspace(0, 2 * np.pi, 25), np.linspace(0, np.pi, 13))
    sphere = np.stack([np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v)], -1)  # (13, 25, 3)
    for c, s, V in zip(centre, semi, vec):
        pts = c + (sphere * (scale * s)) @ V.T
        ax.plot_wireframe(pts[..., 0], pts[..., 1], pts[..., 2], color="C0", linewidth=0.4, alpha=0.5)
        for i in range(3):
            tip = c + scale * s[i] * V[:, i]
            ax.plot([c[0], tip[0]], [c[1], tip[1]], [c[2], tip[2]], color=f"C{i + 1}", linewidth=1.5,
                    gid="semi-axis")
    ax.plot(centre[:, 0], centre[:, 1], centre[:, 2], "k.-", linewidth=0.8)
    _base_frame_axes(ax, title or f"{kind} ellipsoids of frame {figure_text(robot.frame_names[frame_index(robot, frame)])}")
    return _finish(fig, path)


def _base_frame_axes(ax, title: str) -> None:
    """3-D axes in the base frame R_0: labelled in metres, equal scales, titled."""
    ax.set(xlabel="x0 (m)", ylabel="y0 (m)", zlabel="z0 (m)", title=title)
    ax.set_aspect("equal")
    # Equal scales squeeze the tick labels of a 3-D box together: at most four ticks per axis keep them apart.
    for axis in (ax.xaxis, ax.yaxis, ax.zaxis):
        axis.set_major_locator(MaxNLocator(nbins=4))
    ax.set_box_aspect(None, zoom=0.85)  # room for the z label inside the figure


def workspace(robot, *, samples: int = 2000, frame: int | str | None = None, seed: int = 0,
              title: str | None = None, path: str | os.PathLike | None = None) -> Figure:
    """Scatter of a frame's origin (base frame R_0) over random configurations within the joint limits.

    Unlimited revolute joints are sampled in [−π, π], unlimited prismatic ones in [−1, 1] m.

    Parameters
    ----------
    samples : int
        Number of random configurations (uniform in the limits, generator seeded by ``seed``).
    frame : int (1..nf) or frame name, optional
        As in :func:`ellipsoids`.
    """
    from robodyn.kinematics import forward_kinematics

    if int(samples) < 1:
        raise InputError(f"argument samples = {samples}; give a positive number of configurations")
    j = frame_index(robot, frame)
    revolute = robot.sigma[robot.joint_frames] == 0
    default = np.where(revolute[:, None], [-np.pi, np.pi], [-1.0, 1.0])
    lim = np.where(np.isfinite(robot.qlim), robot.qlim, default)
    q = np.random.default_rng(seed).uniform(lim[:, 0], lim[:, 1], (int(samples), robot.n))
    p = forward_kinematics(robot, q)[:, j, :3, 3]
    fig = Figure(figsize=(6.5, 6), layout="constrained")
    ax = fig.add_subplot(projection="3d")
    ax.scatter(p[:, 0], p[:, 1], p[:, 2], s=2, c=p[:, 2], cmap="viridis")
    _base_frame_axes(ax, title or f"workspace of frame {figure_text(robot.frame_names[j])} ({int(samples)} samples)")
    return _finish(fig, path)
