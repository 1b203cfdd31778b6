"""Gravity-compensation calibration by cumulative first moments (Dellin 2008), in Khalil–Kleinfinger frames.

Dellin's static equation, eq. (14), in the frames of this library (docs/gravity-calibration.md): for a serial
chain held still, the moment m_j on link j about O_j in R_j satisfies

    m_j − ^jA_{j+1} m_{j+1} = g^j × μ_j ,      μ_j = ^jMS_j + M_{j+1} ^jP_{j+1} ,      τ_j = z · m_j

with g^j = ^0A_jᵀ g and M_{j+1} the mass of links j+1..n: μ_j is the pose-independent *cumulative first moment*
(kg m).  A prismatic joint's link turns with its antecedent: its first moment is merged into μ_{j−1} and row j
of μ holds (0, 0, M_j).  The dynamic part (Dellin §5) is :mod:`robodyn.identification.second_moments`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robodyn.arrays import as_real_array, finite_result
from robodyn.identification.excitation import position_box, require_joint_limits
from robodyn.model.arguments import joint_arrays
from robodyn.model.robot import check_robot
from robodyn.progress import progress
from robodyn.errors import InputError, ModelError
from robodyn.kinematics import base_poses, local_transforms
from robodyn.model.inertia import skew
from robodyn.model.robot import Robot
from robodyn.model.workspace import WORKSPACE

_AXES = "xyz"
_FORMAT = "robodyn gravity calibration"


def check_serial(robot: Robot, what: str) -> None:
    check_robot(robot)
    if not robot.is_serial:
        raise ModelError(
            f"{what}: robot '{robot.name}' is a tree; Dellin's cumulative first moments are defined for serial "
            "chains (one path from the base to the tip). Calibrate each branch as a serial robot of its own"
        )


def first_moments(robot: Robot, grouped: bool = False) -> np.ndarray:
    """Cumulative first moments μ_j of Dellin eq. (14) of the model, in joint coordinates.

    Parameters
    ----------
    robot : Robot
        A serial chain (revolute, prismatic and fixed frames).
    grouped : bool
        False: μ_j = ^jMS_j + M_{j+1} ^jP_{j+1} of every joint's link (fixed frames and prismatic links merged into
        the link they turn with).  True: the identifiable form that :func:`calibrate_gravity` estimates — every
        component that static poses cannot see is grouped into the ones it is confounded with (as Khalil & Dombre
        §9.4 group standard parameters into base parameters) and set to zero; :func:`gravity_parameter_structure`
        names them.

    Returns
    -------
    ndarray (n, 3)
        Row j: μ_j in R_j (kg m); prismatic rows (0, 0, M_j) (kg).

    Raises
    ------
    ModelError
        For a tree.
    """
    check_serial(robot, "first_moments")
    mu = first_moments_of(robot, robot.MS, robot.M)
    if grouped:
        structure = gravity_parameter_structure(robot)
        mu = structure.group(mu.ravel()).reshape(robot.n, 3)
    return mu


def first_moments_of(robot: Robot, MS: np.ndarray, M: np.ndarray) -> np.ndarray:
    """μ (n, 3) of :func:`first_moments` for first moments ``MS`` (nf, 3) and masses ``M`` (nf,) (linear in them)."""
    consts = local_transforms(robot, np.zeros(robot.n))
    Mc = np.append(np.cumsum(M[::-1])[::-1], 0.0)
    rows = np.array(MS, dtype=float)
    for i in range(robot.nf - 1):  # μ°_i = MS_i + M_{i+1} ^iP̄_{i+1}, P̄ at q_{i+1} = 0, before merging
        rows[i] += Mc[i + 1] * np.asarray(consts[i + 1][1])
    # From the tip inward: links that turn with their antecedent (fixed frames, prismatic joints) hand their
    # first moment to it, through the constant rotation ^{a}A_j.
    for i in range(robot.nf - 1, -1, -1):
        if robot.sigma[i] == 0:
            continue
        if i > 0:
            rows[i - 1] += np.asarray(consts[i][0]) @ rows[i]
        rows[i] = (0.0, 0.0, Mc[i]) if robot.sigma[i] == 1 else 0.0
    return rows[robot.joint_frames]


def gravity_regressor(robot: Robot, q) -> np.ndarray:
    """Static gravity torques as a linear function of the cumulative first moments: τ_g = Y(q) μ.ravel().

    Row r (revolute joint at frame i): Q_r = Σ_{k≥r} s_k (z_i × g)·(^0A_k μ_k), the z component of Dellin's
    recursion eq. (14) summed from the tip, with s_k = 1 for a revolute joint k and s_k = q_k for a prismatic one
    (its row μ_k = M_k z moves the lumped mass along the axis).  Prismatic joint r: Q_r = −g·(^0A_r μ_r).

    Parameters
    ----------
    robot : Robot (serial)
    q : array_like (..., n)

    Returns
    -------
    ndarray (..., n, 3n)
        Y such that ``Y @ first_moments(robot).ravel()`` equals ``rd.gravity_torques(robot, q)`` (N m | N).
    """
    check_serial(robot, "gravity_regressor")
    dtype, batch, a = joint_arrays(robot, q=q)
    q = a["q"]
    n = robot.n
    R0, _ = base_poses(robot, q, dtype)
    g = robot.gravity.astype(dtype)
    frames = robot.joint_frames
    Rj = R0[..., frames, :, :]                                     # (..., n, 3, 3)
    Y = np.zeros(batch + (n, 3 * n), dtype)
    scale = np.where(robot.sigma[frames] == 1, q, 1.0)              # s_k (..., n)
    for r in range(n):
        R = Rj[..., r, :, :]
        if robot.sigma[frames[r]] == 1:
            Y[..., r, 3 * r : 3 * r + 3] = -np.einsum("...ab,a->...b", R, g)
            continue
        zxg = np.cross(R[..., :, 2], g)                             # (..., 3)
        rows = np.einsum("...kab,...a->...kb", Rj[..., r:, :, :], zxg) * scale[..., r:, None]
        Y[..., r, 3 * r :] = rows.reshape(batch + (3 * (n - r),))
    return finite_result("gravity_regressor", Y)


# ---------------------------------------------------------------------------------------------------------------
# identifiability: which components (and combinations) of μ static poses excite (Khalil & Dombre §9.4, numeric QR)


@dataclass(frozen=True)
class GravityParameterStructure:
    """Which components of μ (and torque offsets) static torques determine.

    ``base`` lists the flat indices (into μ.ravel(), then offsets) of the identifiable columns; every other column
    ``d`` is either unexcited (its regressor column is zero at every pose) or grouped: θ̄_base += beta[:, d] θ_d.
    """

    names: tuple[str, ...]
    base: np.ndarray
    beta: np.ndarray            # (len(base), p): grouping coefficients, identity on base columns
    unexcited: tuple[str, ...]
    grouped: tuple[str, ...]

    def group(self, theta: np.ndarray) -> np.ndarray:
        """Map full parameters (p,) to the grouped form: base columns hold their combinations, the others 0."""
        out = np.zeros_like(theta, dtype=float)
        out[self.base] = self.beta @ theta
        return out

    @property
    def identifiable(self) -> np.ndarray:
        mask = np.zeros(len(self.names), bool)
        mask[self.base] = True
        return mask

    def describe(self) -> list[str]:
        """One sentence per non-identifiable column."""
        lines = [f"{name}: not excited by gravity at any pose (estimated as 0)" for name in self.unexcited]
        for name in self.grouped:
            d = self.names.index(name)
            into = [f"{self.names[b]}" for b, c in zip(self.base, self.beta[:, d]) if abs(c) > 1e-12]
            lines.append(f"{name}: confounded with {', '.join(into) or 'nothing'} (grouped into them, estimated as 0)")
        return lines


def parameter_names(robot: Robot, offsets: bool = False) -> tuple[str, ...]:
    names = tuple(f"mu{r + 1}{ax}" for r in range(robot.n) for ax in _AXES)
    return names + (tuple(f"c{r + 1}" for r in range(robot.n)) if offsets else ())


def _sample_poses(robot: Robot, count: int, rng, limits=None) -> np.ndarray:
    lo, hi = _limits(robot, limits)
    return lo + (hi - lo) * rng.random((count, robot.n))


def _limits(robot: Robot, limits) -> tuple[np.ndarray, np.ndarray]:
    """Pose box: ``limits`` (n, 2) or the robot's qlim, unlimited revolute → ±π, unlimited prismatic → ±0.5 m."""
    lim = np.array(robot.qlim if limits is None else limits, dtype=float)
    if lim.shape != (robot.n, 2) or np.any(np.isnan(lim)) or np.any(lim[:, 0] > lim[:, 1]):
        raise InputError(f"argument 'limits' must be ({robot.n}, 2) rows [min, max] with min <= max")
    box = position_box(robot, lim)
    return box[:, 0], box[:, 1]


def _stacked(robot: Robot, q: np.ndarray, offsets: bool, measured=None) -> np.ndarray:
    """Rows of the measured joints of [Y(q) | I] (so the offset columns of the other joints are zero)."""
    Y = gravity_regressor(robot, q)
    if offsets:
        Y = np.concatenate([Y, np.broadcast_to(np.eye(robot.n), Y.shape[:-1] + (robot.n,))], axis=-1)
    if measured is not None:
        Y = Y[..., measured, :]
    return Y


def _column_order(robot: Robot, offsets: bool) -> np.ndarray:
    """Tip-first x, y components, then offsets, then the z components: the ones QR keeps first become the base
    (the order in which Dellin's iterative method, eq. (28), determines them); z components, which eq. (14) only
    sees through g × μ of earlier links, come last and are grouped."""
    n = robot.n
    xy = [3 * r + a for r in range(n - 1, -1, -1) for a in (0, 1)]
    off = list(range(3 * n, 4 * n)) if offsets else []
    z = [3 * r + 2 for r in range(n - 1, -1, -1)]
    return np.array(xy + off + z)


def gravity_parameter_structure(robot: Robot, offsets: bool = False, joints=None) -> GravityParameterStructure:
    """The components of μ (and of the torque offsets) that static torques determine.

    Numeric method of Khalil & Dombre §9.4 on the regressor of :func:`gravity_regressor` at random poses: scanning
    the columns (tip-first x and y components, offsets, then z components), a column independent of those kept is
    identifiable; a dependent one is grouped into them (coefficients ``beta``); a zero one is not excited.

    Parameters
    ----------
    robot : Robot (serial)
    offsets : bool — include one constant torque offset per joint.
    joints : sequence of int or str, optional — joints whose torques are measured, by number 1..n or name
        (``robot.joint_number``; default all).
    """
    check_serial(robot, "gravity_parameter_structure")
    measured = _measured(robot, joints)
    # kept in the per-robot workspace: the scan costs more than a calibration of a few dozen poses
    key = ("gravity_parameter_structure", bool(offsets), tuple(measured.tolist()))
    return WORKSPACE.value(robot, key, lambda: _structure(robot, offsets, measured))


def _structure(robot: Robot, offsets: bool, measured: np.ndarray) -> GravityParameterStructure:
    names = parameter_names(robot, offsets)
    rng = np.random.default_rng(20080623)
    q = _sample_poses(robot, 8 * robot.n + 16, rng, limits=np.tile([-np.inf, np.inf], (robot.n, 1)))
    W = _stacked(robot, q, offsets, measured).reshape(-1, len(names))
    base, beta, zero = column_groups(W, _column_order(robot, offsets))
    beta[np.abs(beta) < 1e-12] = 0.0
    beta[:, base] = np.eye(len(base))
    unexcited = tuple(names[c] for c in np.flatnonzero(zero))
    grouped = tuple(names[c] for c in range(len(names)) if c not in set(base) and not zero[c])
    for a in (base, beta):
        a.flags.writeable = False          # shared through the cache
    return GravityParameterStructure(names, base, beta, unexcited, grouped)


def _zero_column(norms: np.ndarray) -> float:
    """Norm at or below which a regressor column counts as zero (not excited)."""
    return 1e-9 * max(norms.max(), 1e-300)


def column_groups(W: np.ndarray, order) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The independent columns ``base`` of ``W`` scanned in ``order`` (:func:`independent_columns`), β with
    W = W[:, base] β (least squares: exact for the grouped columns), and which columns are zero (not excited)."""
    norms = np.linalg.norm(W, axis=0)
    base = independent_columns(W, order)
    beta = np.linalg.lstsq(W[:, base], W, rcond=None)[0] if base.size else np.zeros((0, W.shape[1]))
    return base, beta, norms <= _zero_column(norms)


def independent_columns(W: np.ndarray, order) -> np.ndarray:
    """Sorted indices of the columns of ``W`` that, scanned in ``order``, are independent of those kept before
    them (the numeric method of Khalil & Dombre §9.4); zero columns are skipped."""
    norms = np.linalg.norm(W, axis=0)
    base: list[int] = []
    for c in order:
        if norms[c] <= _zero_column(norms):
            continue
        sv = np.linalg.svd(W[:, base + [c]], compute_uv=False)
        if sv[-1] > 1e-9 * sv[0]:
            base.append(int(c))
    return np.array(sorted(base), dtype=int)


def _measured(robot: Robot, joints) -> np.ndarray:
    """0-based indices of the joints whose torques are used."""
    if joints is None:
        return np.arange(robot.n)
    items = [joints] if isinstance(joints, (str, int, np.integer)) else joints
    try:
        items = list(np.asarray(items, dtype=object).ravel())
        # a whole float (a joint number read from a file) counts as that number; names through robot.joint_number
        js = sorted({robot.joint_number(int(j) if isinstance(j, (float, np.floating)) and float(j).is_integer()
                                        else j) for j in items})
    except (TypeError, ValueError, ModelError):
        raise InputError(f"argument 'joints' = {joints!r}: give joint numbers 1..{robot.n} or joint names "
                         f"({', '.join(robot.q_names)})") from None
    if not js:
        raise InputError(f"argument 'joints' = {joints!r}: give joint numbers 1..{robot.n} or joint names")
    return np.array(js) - 1


# ---------------------------------------------------------------------------------------------------------------
# calibration


@dataclass(frozen=True, eq=False)
class GravityCalibration:
    """Result of :func:`calibrate_gravity`: cumulative first moments, torque offsets, their uncertainty and fit.

    Attributes
    ----------
    robot : Robot — the model whose geometry the calibration uses (its masses are not used).
    mu : ndarray (n, 3) — estimated μ_j in R_j (kg m; prismatic rows: (0, 0, M_j) kg), grouped form: components
        that static poses cannot determine are 0 and flagged in ``identifiable``.
    offsets : ndarray (n,) — constant torque offsets c_j (N m | N); zeros when not estimated.
    std : ndarray (n, 3) — standard deviation of each μ component (NaN where not identifiable).
    offsets_std : ndarray (n,) — standard deviation of each offset (NaN where not estimated).
    residual_rms : ndarray (n,) — RMS of measured − compensation torques per joint over the poses (NaN: unused joint).
    identifiable : ndarray (n, 3) bool — components determined by the data.
    notes : tuple of str — one sentence per component that is not identifiable (why, and what it is grouped into).
    method : str, joints : tuple of int (1-based), poses : int, condition_number : float.
    """

    robot: Robot
    mu: np.ndarray
    offsets: np.ndarray
    std: np.ndarray
    offsets_std: np.ndarray
    residual_rms: np.ndarray
    identifiable: np.ndarray
    notes: tuple[str, ...]
    method: str
    joints: tuple[int, ...]
    poses: int
    condition_number: float
    estimate_offsets: bool = False

    @property
    def unidentifiable(self) -> tuple[str, ...]:
        """Names ``mu<j><axis>`` of the μ components not determined by static torques."""
        return tuple(f"mu{r + 1}{_AXES[a]}" for r, a in zip(*np.nonzero(~self.identifiable)))

    def torques(self, q) -> np.ndarray:
        """Gravity-compensation torques τ = Y(q) μ + c at poses q (..., n) → (..., n) (N m | N)."""
        return gravity_regressor(self.robot, q) @ self.mu.ravel() + self.offsets

    def plot(self, path, q, tau) -> Path:
        """Write a PNG: measured torques and the compensation torques at the calibration poses, one panel per joint
        (written to a temporary file and renamed: never a partial file)."""
        from matplotlib.figure import Figure  # no pyplot: the caller's backend and figures are left alone
        from robodyn.sanitize import figure_text  # model-file names shown, never parsed as math text

        from robodyn.files import write_atomically

        q, tau = np.asarray(q, dtype=float), np.asarray(tau, dtype=float)
        comp = self.torques(q)
        n = self.robot.n
        fig = Figure(figsize=(8, 1.8 * n + 0.6))
        axes = np.atleast_1d(fig.subplots(n, 1, sharex=True))
        pose = np.arange(1, q.shape[0] + 1)
        for j in range(n):
            ax = axes[j]
            ax.plot(pose, tau[:, j], "o", ms=3, label="measured")
            ax.plot(pose, comp[:, j], "-", lw=1, label="compensation")
            ax.set_ylabel(f"τ{j + 1} (N m)")
            if j + 1 in self.joints:
                ax.set_title(f"joint {j + 1}: residual RMS {self.residual_rms[j]:.3g} N m", fontsize=8)
        axes[0].legend(fontsize=7, ncol=2)
        axes[-1].set_xlabel("pose")
        fig.suptitle(f"{figure_text(self.robot.name)}: gravity calibration ({self.method}, Dellin)", fontsize=9)
        fig.tight_layout()
        return write_atomically(path, lambda fh: fig.savefig(fh, format="png", dpi=110), what="plot file",
                                binary=True)

    def save(self, path) -> Path:
        """Write the calibration as YAML (atomically; the robot model is embedded) and return the path."""
        import yaml

        from robodyn.files import write_atomically
        from robodyn.model.io import dumps

        doc = {
            "format": _FORMAT,
            "version": 1,
            "robot": self.robot.name,
            "method": self.method,
            "joints": list(self.joints),
            "poses": int(self.poses),
            "condition_number": float(self.condition_number),
            "estimate_offsets": bool(self.estimate_offsets),
            "mu": self.mu.tolist(),
            "mu_std": _nan_to_none(self.std),
            "identifiable": self.identifiable.tolist(),
            "offsets": self.offsets.tolist(),
            "offsets_std": _nan_to_none(self.offsets_std),
            "residual_rms": _nan_to_none(self.residual_rms),
            "notes": list(self.notes),
            "robot_model": yaml.safe_load(dumps(self.robot)),
        }
        text = yaml.safe_dump(doc, sort_keys=False, width=120, default_flow_style=None, allow_unicode=True)
        return write_atomically(path, lambda fh: fh.write(text), what="calibration file")


def _nan_to_none(a: np.ndarray):
    return [None if not np.isfinite(v) else float(v) for v in np.ravel(a)] if a.ndim == 1 else \
        [_nan_to_none(row) for row in a]


def load_gravity_calibration(path) -> GravityCalibration:
    """Read a calibration written by :meth:`GravityCalibration.save` (every field validated), through the
    hardened YAML reader of model files (:func:`robodyn.model.io.read_yaml_file`).

    Raises
    ------
    InputError
        Missing file, not YAML, or a missing / malformed field (the message names it).
    """
    from robodyn.errors import ModelFileError
    from robodyn.model.io import read_yaml_file, robot_from_document

    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise InputError(f"load_gravity_calibration: expected the path of a .yaml file, got {type(path).__name__}")
    where = f"calibration file {str(path)!r}"
    try:
        doc = read_yaml_file(path, where, kind="calibration file")
    except ModelFileError as exc:
        raise InputError(str(exc)) from None
    if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
        raise InputError(f"{where}: not a gravity calibration (expected 'format: {_FORMAT}'); write one with "
                         "GravityCalibration.save or `robodyn calibrate-gravity --out`")
    if "robot_model" not in doc:
        raise InputError(f"{where}: field 'robot_model' is missing")
    try:
        robot = robot_from_document(doc["robot_model"], f"{where}, field robot_model")
    except ModelFileError as exc:
        raise InputError(str(exc)) from None
    n = robot.n

    def array(key, shape, dtype=float, allow_none=False):
        if key not in doc:
            raise InputError(f"{where}: field {key!r} is missing")
        raw = doc[key]
        if dtype is bool and not all(isinstance(x, bool) for x in np.ravel(np.array(raw, dtype=object))):
            raise InputError(f"{where}: field {key!r} must hold true/false values of shape {shape}")
        try:
            if allow_none:
                raw = np.array(raw, dtype=object)
                raw = np.where(raw == None, np.nan, raw)  # noqa: E711  (YAML null = not estimated)
            a = np.array(raw, dtype=dtype)
        except (TypeError, ValueError):
            raise InputError(f"{where}: field {key!r} must hold numbers of shape {shape}") from None
        if a.shape != shape:
            raise InputError(f"{where}: field {key!r} has shape {a.shape}; expected {shape} for n = {n} joints")
        if dtype is float and not allow_none and not np.all(np.isfinite(a)):
            raise InputError(f"{where}: field {key!r} contains NaN or inf")
        return a

    mu = array("mu", (n, 3))
    identifiable = array("identifiable", (n, 3), dtype=bool)
    method = doc.get("method")
    if method not in _METHODS:
        raise InputError(f"{where}: field 'method' = {method!r}; expected one of {', '.join(_METHODS)}")
    joints = doc.get("joints")
    if not isinstance(joints, list) or not all(isinstance(j, int) and not isinstance(j, bool) and 1 <= j <= n
                                               for j in joints):
        raise InputError(f"{where}: field 'joints' must list joint numbers 1..{n}")
    poses, cond = doc.get("poses", 0), doc.get("condition_number", math.nan)
    if isinstance(poses, bool) or not isinstance(poses, int) or poses < 0:
        raise InputError(f"{where}: field 'poses' = {poses!r:.40} must be a number of poses (an integer >= 0)")
    if isinstance(cond, bool) or not isinstance(cond, (int, float)):
        raise InputError(f"{where}: field 'condition_number' = {cond!r:.40} must be a number")
    offsets_flag = doc.get("estimate_offsets", False)
    if not isinstance(offsets_flag, bool):
        raise InputError(f"{where}: field 'estimate_offsets' = {offsets_flag!r:.40} must be true or false")
    return GravityCalibration(
        robot=robot, mu=mu, offsets=array("offsets", (n,)), std=array("mu_std", (n, 3), allow_none=True),
        offsets_std=array("offsets_std", (n,), allow_none=True),
        residual_rms=array("residual_rms", (n,), allow_none=True), identifiable=identifiable,
        notes=tuple(str(x) for x in doc.get("notes") or ()), method=method, joints=tuple(joints),
        poses=poses, condition_number=float(cond), estimate_offsets=offsets_flag,
    )


_METHODS = ("coupled", "iterative", "ols")


def _check_data(robot: Robot, q, tau, measured: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    q, tau = as_real_array("q", q).astype(float), as_real_array("tau", tau).astype(float)
    n = robot.n
    if q is None or q.ndim != 2 or q.shape[1] != n:
        raise InputError(f"argument 'q' must be an array of poses of shape (N, {n}) for robot '{robot.name}'")
    if tau is None or tau.ndim != 2 or tau.shape[1] != n:
        raise InputError(f"argument 'tau' must be measured torques of shape (N, {n}), one column per joint")
    if q.shape[0] != tau.shape[0]:
        raise InputError(f"arguments 'q' and 'tau' have {q.shape[0]} and {tau.shape[0]} rows; give one torque "
                         "row per pose")
    bad = ~np.all(np.isfinite(q), axis=1) | ~np.all(np.isfinite(tau[:, measured]), axis=1)
    if np.any(bad):
        rows = np.flatnonzero(bad) + 1
        shown = ", ".join(map(str, rows[:10])) + (" ..." if rows.size > 10 else "")
        raise InputError(f"NaN or inf in pose rows {shown} (counting from 1) of 'q' / 'tau'; remove those rows")
    return q, tau


def _joint_frames_data(robot: Robot, q: np.ndarray):
    """^0A of every joint frame (k, n, 3, 3), g^j (k, n, 3) and ^jA_{j+1} (k, n−1, 3, 3) (fixed frames composed)."""
    R0, _ = base_poses(robot, q, np.float64)
    R = R0[:, robot.joint_frames]
    gj = np.einsum("kjab,a->kjb", R, robot.gravity)
    A = np.einsum("kjba,kjbc->kjac", R[:, :-1], R[:, 1:])
    return R, gj, A


def _coupled_matrices(robot: Robot, q: np.ndarray, measured: np.ndarray, offsets: bool):
    """Dellin eqs (21)–(25) per pose, in R_j: y = G μ + O c0 + T p with y = D τ (measured joints).

    Returns the rows left after eliminating the per-pose unknowns p (off-axis moments c_j of eq. (17), plus the
    axial torque of unmeasured joints): X (k, m, 3n [+ n]) and E (k, m, n_meas) with X θ = E τ_meas.
    """
    k, n = q.shape[0], robot.n
    _, gj, A = _joint_frames_data(robot, q)
    prismatic = np.flatnonzero(robot.sigma[robot.joint_frames] == 1)
    L = np.eye(3)[:, :2]
    Z = np.eye(3)[:, 2]
    I3 = np.eye(3)
    rows = 3 * n + prismatic.size          # moment equations of every link, then the force of each prismatic joint
    G = np.zeros((k, rows, 3 * n))
    D = np.zeros((k, rows, n))             # column r: Z τ_r in block r, −^{r−1}A_r Z τ_r in block r−1 (eq. (23))
    T = np.zeros((k, rows, 3 * n))         # off-axis moments c_r: 2 per revolute joint (eq. (22)), 3 per prismatic
    for r in range(n):
        if robot.sigma[robot.joint_frames[r]] == 1:
            # prismatic: m_r − ^rA_{r+1} m_{r+1} = q_r g^r × μ_r, the whole moment m_r = c_r carried by the slide;
            # the measured force is τ_r = −g^r · μ_r (the subtree's mass times the axial component of gravity)
            G[:, 3 * r : 3 * r + 3, 3 * r : 3 * r + 3] = q[:, r, None, None] * skew(gj[:, r])
            T[:, 3 * r : 3 * r + 3, 3 * r : 3 * r + 3] = -I3
            if r > 0:
                T[:, 3 * r - 3 : 3 * r, 3 * r : 3 * r + 3] = A[:, r - 1]
            f = 3 * n + int(np.searchsorted(prismatic, r))
            D[:, f, r] = 1.0
            G[:, f, 3 * r : 3 * r + 3] = -gj[:, r]
            continue
        G[:, 3 * r : 3 * r + 3, 3 * r : 3 * r + 3] = skew(gj[:, r])
        D[:, 3 * r : 3 * r + 3, r] = Z
        T[:, 3 * r : 3 * r + 3, 3 * r : 3 * r + 2] = -L
        if r > 0:
            D[:, 3 * r - 3 : 3 * r, r] = -A[:, r - 1] @ Z
            T[:, 3 * r - 3 : 3 * r, 3 * r : 3 * r + 2] = A[:, r - 1] @ L
    T = T[:, :, np.any(T != 0, axis=(0, 1))]
    unmeasured = np.setdiff1d(np.arange(n), measured)
    nuisance = np.concatenate([T, D[:, :, unmeasured]], axis=2)
    U = np.linalg.svd(nuisance, full_matrices=True)[0][:, :, nuisance.shape[2]:]   # left null space, per pose
    Ut = np.swapaxes(U, 1, 2)
    # offsets: τ = τ_meas − c0, so c0 enters like τ (eq. (23)) on the parameter side
    Xfull = np.concatenate([G, D[:, :, measured]], axis=2) if offsets else G
    X = Ut @ Xfull
    if offsets:
        X = np.concatenate([X[:, :, : 3 * n], np.zeros((k, X.shape[1], n))], axis=2)
        X[:, :, 3 * n + measured] = (Ut @ D[:, :, measured])
    return X, Ut @ D[:, :, measured]


def _iterative_solve(robot: Robot, q: np.ndarray, tau: np.ndarray, measured: np.ndarray, offsets: bool,
                     base: np.ndarray) -> np.ndarray:
    """Dellin's iterative method, eqs (26)–(28), from the last link inward, for a stack of torque data.

    tau : (k, n_meas, R) — R right-hand sides (the method is linear in the torques).  Returns θ (p, R) on the
    full parameter layout (μ.ravel(), then offsets), zero outside ``base``.
    """
    k, n = q.shape[0], robot.n
    R_ = tau.shape[2]
    theta = np.zeros((4 * n if offsets else 3 * n, R_))
    m_next = np.zeros((k, 3, R_))          # m̂_{j+1} in R_{j+1}: off-axis c_{j+1} of eq. (27) and its torque
    pos = {j: i for i, j in enumerate(measured)}
    for r, prismatic, A, g, cols, mats in _iterative_steps(robot, q, measured, offsets, base):
        carried = np.einsum("kab,kbR->kaR", A, m_next) if A is not None else np.zeros((k, 3, R_))
        # τ_r = −g^r · μ_r (prismatic), or the z row of eq. (26)
        lhs = tau[:, pos[r], :] if prismatic else tau[:, pos[r], :] - carried[:, 2, :]
        if cols:
            theta[cols] = np.linalg.lstsq(np.stack(mats, axis=1), lhs, rcond=None)[0]
        mu_r = np.zeros((3, R_))
        for c, s_ in zip(cols, theta[cols]):
            if c < 3 * n:
                mu_r[c - 3 * r] = s_
        if prismatic:
            # the slide carries the whole moment: m_r = ^rA_{r+1} m_{r+1} + q_r g^r × μ_r, nothing measured
            m_next = carried + q[:, r, None, None] * np.cross(g[:, :, None], mu_r[None], axis=1)
            continue
        m_r = carried + np.cross(g[:, :, None], mu_r[None], axis=1)
        off = theta[3 * n + r] if offsets else 0.0
        m_r[:, 2, :] = tau[:, pos[r], :] - off                            # measured axial torque, eq. (17)
        m_next = m_r
    return theta


def _iterative_steps(robot: Robot, q: np.ndarray, measured: np.ndarray, offsets: bool, base: np.ndarray):
    """The steps of Dellin's iterative method (eqs 26–28), from the last link inward: per joint r, (r, prismatic,
    ^rA_{r+1} (k, 3, 3) or None for the last, g^r (k, 3), and the unknowns of the step that are base parameters:
    their columns in θ and their coefficients over the k poses (the μ_r components of the z row of [g^r]× μ_r, or
    of τ_r = −g^r · μ_r for a prismatic joint, then the offset c_r))."""
    k, n = q.shape[0], robot.n
    _, gj, A = _joint_frames_data(robot, q)
    base_set = set(base.tolist())
    for r in range(n - 1, int(measured[0]) - 1, -1):
        prismatic = robot.sigma[robot.joint_frames[r]] == 1
        terms = [(a, -gj[:, r, a]) for a in range(3)] if prismatic else [(0, -gj[:, r, 1]), (1, gj[:, r, 0])]
        cols = [3 * r + a for a, _ in terms if 3 * r + a in base_set]
        mats = [coef for a, coef in terms if 3 * r + a in base_set]
        if offsets and 3 * n + r in base_set:
            cols.append(3 * n + r)
            mats.append(np.ones(k))
        yield r, prismatic, (A[:, r] if r < n - 1 else None), gj[:, r], cols, mats


def _iterative_map(robot: Robot, q: np.ndarray, measured: np.ndarray, offsets: bool,
                   base: np.ndarray) -> np.ndarray:
    """The linear map K (len(base), k n_meas) of the iterative method, θ_base = K τ_meas.ravel(), for its
    covariance: the steps of :func:`_iterative_solve` applied to maps instead of numbers.  Per pose a, the moment
    m̂_{j+1}(a) = L(a) τ(a) + G(a) θ depends on that pose's torques and on the parameters found so far."""
    k, n = q.shape[0], robot.n
    nm = measured.size
    p = 4 * n if offsets else 3 * n
    pos = {j: i for i, j in enumerate(measured)}
    K = np.zeros((p, k * nm))
    L = np.zeros((k, 3, nm))
    G = np.zeros((k, 3, p))
    for r, prismatic, A, g, cols, mats in _iterative_steps(robot, q, measured, offsets, base):
        AL = A @ L if A is not None else np.zeros((k, 3, nm))
        AG = A @ G if A is not None else np.zeros((k, 3, p))
        if prismatic:                                       # τ_r = −g^r · μ_r: no moment carried in
            local, known = np.zeros((k, nm)), np.zeros((k, p))
        else:
            local, known = -AL[:, 2, :], AG[:, 2, :]
        local[:, pos[r]] += 1.0
        Gnew = AG.copy()
        if cols:
            P = np.linalg.pinv(np.stack(mats, axis=1))                          # (p_r, k)
            K[cols] = (P[:, :, None] * local[None]).reshape(len(cols), k * nm) - (P @ known) @ K
            S = skew(g) * (q[:, r, None, None] if prismatic else 1.0)
            for c in cols:
                if c < 3 * n:
                    Gnew[:, :, c] += S[:, :, c - 3 * r]
        if prismatic:
            L, G = AL, Gnew
            continue
        Lnew = AL
        Lnew[:, 2, :] = 0.0
        Lnew[:, 2, pos[r]] = 1.0
        Gnew[:, 2, :] = 0.0
        if 3 * n + r in cols:                               # the offset c_r is a base parameter
            Gnew[:, 2, 3 * n + r] = -1.0
        L, G = Lnew, Gnew
    return K[base]


def calibrate_gravity(robot: Robot, q, tau, method: str = "coupled", joints=None,
                      offsets: bool = False, transmission=None) -> GravityCalibration:
    """Calibrate the cumulative first moments μ_j (Dellin eq. (14)) from torques measured in static poses.

    Parameters
    ----------
    robot : Robot
        Serial chain; only its geometry (and gravity vector) is used.
    q : array_like (N, n)
        Static poses (rad | m).
    tau : array_like (N, n)
        Joint torques measured while holding each pose (N m | N).
    method : {"coupled", "iterative", "ols"}
        "coupled": Dellin's coupled regression, eqs (21)–(25), the per-pose off-axis moments c_j of eq. (17)
        eliminated exactly.  "iterative": Dellin §4, eqs (26)–(28), link by link from the last one inward.
        "ols": least squares on τ = Y(q) μ (:func:`gravity_regressor`).
    joints : sequence of int or str, optional
        Joints whose torques are used, by number 1..n or name (default all; the iterative method needs the last
        joints j0..n).  Other columns of ``tau`` are ignored (may be NaN).
    offsets : bool
        Also estimate a constant torque offset per used joint (sensor bias), τ_meas = τ + c.
    transmission : Transmission, optional
        ``tau`` holds motor-side torques (or drive commands): they are taken to the joints first, Γ = J_mqᵀ (k ⊙ τ_m)
        (:func:`robodyn.dynamics.joint_torques_from_motor`); ``q`` stays joint-side.

    Returns
    -------
    GravityCalibration

    Raises
    ------
    InputError
        Wrong shapes, mismatched row counts, NaN rows (listed), an unknown method, or poses that leave some
        identifiable component undetermined (named; use :func:`calibration_poses`).
    ModelError
        For a tree.

    Notes
    -----
    Static torques see μ only through g^j × μ_j (eq. (14)): ``mu`` holds the grouped form (compare with
    ``first_moments(robot, grouped=True)``); ``identifiable`` and ``notes`` say which components are not
    determined and why.  Prismatic joints extend Dellin's equations as docs/gravity-calibration.md states.
    ``std`` comes from the estimator's exact linear map and per-joint residual variances.
    """
    if transmission is not None:
        from robodyn.dynamics.transmission import joint_torques_from_motor
        from robodyn.parameters.regressor import standard_parameter_names

        standard_parameter_names(robot, False, transmission)  # type and size of the transmission
        tau = joint_torques_from_motor(transmission, tau)
    check_serial(robot, "calibrate_gravity")
    if method not in _METHODS:
        raise InputError(f"argument 'method' = {method!r}; use one of {', '.join(_METHODS)}")
    measured = _measured(robot, joints)
    q, tau = _check_data(robot, q, tau, measured)
    n, k = robot.n, q.shape[0]
    if method == "iterative" and not np.array_equal(measured, np.arange(measured[0], n)):
        raise InputError(f"method 'iterative' works from the last link inward (Dellin §4) and needs the torques of "
                         f"joints {int(measured[0]) + 1}..{n}; got joints={[int(j) + 1 for j in measured]}; use "
                         "method='coupled'")
    structure = gravity_parameter_structure(robot, offsets, joints=measured + 1)
    base = structure.base
    Ys = _stacked(robot, q, offsets, measured)                          # (k, n_meas, p)
    Xb = Ys.reshape(-1, Ys.shape[-1])[:, base]
    _require_rank(Xb, [structure.names[b] for b in base], k)
    sv = np.linalg.svd(Xb, compute_uv=False)
    cond = float(sv[0] / sv[-1]) if sv.size else math.nan
    if method == "ols":
        K = np.linalg.pinv(Xb)                                          # (p_b, k n_meas)
    elif method == "coupled":
        X, E = _coupled_matrices(robot, q, measured, offsets)
        P = np.linalg.pinv(X[:, :, base].reshape(-1, base.size))        # (p_b, k m)
        K = np.einsum("pkm,kmj->pkj", P.reshape(base.size, k, -1), E).reshape(base.size, k * measured.size)
    else:
        K = _iterative_map(robot, q, measured, offsets, base)
    theta = np.zeros(len(structure.names))
    if method == "iterative":
        theta[base] = _iterative_solve(robot, q, tau[:, measured, None], measured, offsets, base)[base, 0]
    else:
        theta[base] = K @ tau[:, measured].ravel()
    resid = tau[:, measured] - Ys @ theta
    rms = np.full(n, np.nan)
    rms[measured] = np.sqrt(np.mean(resid**2, axis=0))
    cov = map_covariance(K, resid, base.size)
    std_full = np.full(len(structure.names), np.nan)
    std_full[base] = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    finite_result("calibrate_gravity", rms[measured])  # NaN marks unmeasured joints and unidentifiable stds
    return GravityCalibration(
        robot=robot, mu=theta[: 3 * n].reshape(n, 3), offsets=theta[3 * n :] if offsets else np.zeros(n),
        std=std_full[: 3 * n].reshape(n, 3), offsets_std=std_full[3 * n :] if offsets else np.full(n, np.nan),
        residual_rms=rms, identifiable=structure.identifiable[: 3 * n].reshape(n, 3),
        notes=tuple(structure.describe()), method=method, joints=tuple(int(j) + 1 for j in measured), poses=k,
        condition_number=cond, estimate_offsets=offsets,
    )


def map_covariance(K: np.ndarray, resid: np.ndarray, p: int) -> np.ndarray:
    """Covariance K Σ Kᵀ of an estimate θ = K y.ravel() of ``p`` parameters from y (N, m), the noise of each
    column j of y white with the variance Σ_i resid_ij² / max(N − p / m, 1) of its residuals ``resid`` (N, m)."""
    N, m = resid.shape
    var = np.sum(resid**2, axis=0) / max(N - p / m, 1.0)
    return (K * np.tile(var, N)) @ K.T


def _require_rank(X: np.ndarray, names: list[str], poses: int) -> None:
    """Raise naming the components the poses leave undetermined (null space of the stacked regressor)."""
    if X.shape[1] == 0:
        return
    s, V = np.linalg.svd(X, full_matrices=X.shape[0] < X.shape[1])[1:]   # V complete: (p, p)
    tol = 1e-9 * (s[0] if s.size else 1.0)
    rank = int(np.sum(s > tol))
    if rank == X.shape[1]:
        return
    null = V[rank:]
    weak = [names[c] for c in np.flatnonzero(np.linalg.norm(null, axis=0) > 1e-6)]
    raise InputError(
        f"the {poses} poses determine only {rank} of the {X.shape[1]} identifiable components; undetermined: "
        f"{', '.join(weak)}. Add poses that move these joints (e.g. rd.identification.calibration_poses(robot, count))"
    )


def calibration_poses(robot: Robot, count: int, limits=None, seed: int = 0, candidates: int | None = None,
                      offsets: bool = False, unlimited: bool = False) -> np.ndarray:
    """Static poses for gravity calibration that make the stacked regressor well conditioned.

    From ``candidates`` random poses inside the limits (default 10 per pose asked, at least 600), a greedy
    D-optimal selection (maximising log det of the information matrix YᵀY over the identifiable columns of
    :func:`gravity_parameter_structure`) followed by one exchange pass that maximises its smallest eigenvalue,
    i.e. the minimum singular value of the stacked regressor.

    Parameters
    ----------
    robot : Robot (serial)
    count : int — number of poses (at least enough rows for the identifiable components).
    limits : array_like (n, 2), optional — [min, max] per joint; default the robot's joint limits, unlimited
        revolute joints ±π, unlimited prismatic ±0.5 m.
    seed : int — random seed; the result is a deterministic function of it.
    candidates : int, optional — number of random candidate poses.
    offsets : bool — design for a calibration that also estimates torque offsets.
    unlimited : bool — a robot without finite joint limits is refused unless ``limits`` is given or this is
        True (then ±π / ±0.5 m: possibly unsafe on hardware).

    Returns
    -------
    ndarray (count, n)
    """
    check_serial(robot, "calibration_poses")
    if limits is None:
        require_joint_limits(robot, "calibration_poses", "limits (n, 2)", unlimited)
    structure = gravity_parameter_structure(robot, offsets)
    p = structure.base.size
    if not isinstance(count, (int, np.integer)) or count < 1:
        raise InputError(f"argument 'count' = {count!r}; give a positive number of poses")
    if count * robot.n < p:
        raise InputError(f"argument 'count' = {count}: {count} poses give {count * robot.n} torques for {p} "
                         f"identifiable components; ask for at least {math.ceil(p / robot.n)}")
    rng = np.random.default_rng(seed)
    nc = int(candidates or max(600, 10 * count))
    cand = _sample_poses(robot, nc, rng, limits)
    Y = _stacked(robot, cand, offsets)[..., structure.base]             # (nc, n, p)
    Fi = np.einsum("cna,cnb->cab", Y, Y)                                # per-candidate information
    scale = np.trace(Fi.sum(0)) / (nc * p)
    eps = 1e-6 * scale
    info = eps * np.eye(p)
    chosen: list[int] = []
    with progress("calibration poses", total=2 * count) as bar:
        info = _greedy(Y, Fi, info, chosen, count, robot.n, bar)
        info -= eps * np.eye(p)
        _exchange(Fi, info, chosen, count, bar)
    return cand[np.array(chosen)]


def _greedy(Y, Fi, info, chosen, count, n, bar):
    """Greedy D-optimal selection: each step adds the candidate maximising log det of the information matrix."""
    for _ in range(count):
        # matrix determinant lemma, batched: log det(I + Yc info⁻¹ Ycᵀ)
        Sinv = np.linalg.inv(info)
        M = np.eye(n) + (Y @ Sinv) @ np.swapaxes(Y, 1, 2)
        gain = np.linalg.slogdet(M)[1]
        gain[chosen] = -np.inf
        best = int(np.argmax(gain))
        chosen.append(best)
        info = info + Fi[best]
        bar.advance()
    return info


def _exchange(Fi, info, chosen, count, bar):
    """One exchange pass: replace each chosen pose by the candidate that most raises the smallest eigenvalue of
    the information matrix (the squared minimum singular value of the stacked regressor), when it does."""
    for i in range(count):
        rest = info - Fi[chosen[i]]
        trial = np.linalg.eigvalsh(rest[None] + Fi)[:, 0]
        trial[chosen] = -np.inf
        best = int(np.argmax(trial))
        if trial[best] > np.linalg.eigvalsh(info)[0] * (1 + 1e-12):
            chosen[i] = best
            info = rest + Fi[best]
        bar.advance()
