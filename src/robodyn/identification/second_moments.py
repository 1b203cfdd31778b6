"""Second moments from single-joint motions (Dellin §5), in Khalil–Kleinfinger frames.

When joint k alone moves (the others locked), links k..n turn as one rigid body B about the fixed axis z_k with
ω = q̇_k z_k and ω̇ = q̈_k z_k.  Dellin's torque equation for single-joint motion, eq. (104) with the two cases of
eq. (105), reduces for every joint j ≤ k to

    τ_j = Q_j(q) + z_j · [ q̈_k J_B z_k + q̇_k² z_k × J_B z_k + (O_k − O_j) × (q̈_k z_k × C + q̇_k² z_k × (z_k × C)) ]
          (+ Ia_k q̈_k for j = k; a prismatic j ≤ k sees only the force term)

where J_B is the inertia tensor of B about O_k (Dellin's A_j I_j of eqs (111)–(112), summed over the moving
links), C = Σ_{i≥k} ^0A_i μ_i is B's first moment about O_k — the sum Σ R_i^k μ_i of Dellin eq. (72), known from
the calibrated cumulative first moments — and Q_j the calibrated gravity torques (eq. (14)).  The locked links
j < k (Dellin §5.4, eqs (68)–(73)) see B's reaction, the moving one (§5.5, eqs (74)–(103)) its inertia about
its own axis.  J_B enters only through its third column u = J_B z_k = (XZ, YZ, ZZ) in R_k, so a motion of joint k
at one upper pose X (q_{k+1..n} held) determines u(X), the rotor inertia Ia_k and, optionally, Coulomb and viscous
friction of joint k, by linear least squares over samples taken at any lower poses (Dellin eq. (117)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn._arrays import as_real_array, joint_arrays
from robodyn.errors import InputError
from robodyn.identification.gravity import GravityCalibration, _check_serial, gravity_regressor
from robodyn.kinematics import base_poses
from robodyn.model.robot import Robot


def locked_body_inertia(robot: Robot, q, joint: int) -> np.ndarray:
    """Inertia tensor of links k..n, locked at pose q, about O_k in R_k (from the model's standard parameters).

    Each link's tensor ^iJ_i about O_i is turned into the base frame and moved to O_k with the parallel-axis
    theorem including its first moment (J_P = J + M(|d|²I − ddᵀ) + 2(d·h)I − dhᵀ − hdᵀ, d = O_i − O_k,
    h = ^0MS_i), then expressed in R_k.  Rotor inertias are not included.

    Parameters
    ----------
    robot : Robot (serial)
    q : array_like (..., n)
    joint : int — k, 1-based.

    Returns
    -------
    ndarray (..., 3, 3) (kg m²)
    """
    _check_serial(robot, "locked_body_inertia")
    k = _joint(robot, joint)
    dtype, batch, a = joint_arrays(robot, q=q)
    R0, P0 = base_poses(robot, a["q"], dtype)
    fk = robot.joint_frames[k]
    Ok = P0[..., fk, :]
    J = np.zeros(batch + (3, 3), dtype)
    eye = np.eye(3)
    for i in range(fk, robot.nf):
        R = R0[..., i, :, :]
        Ji = R @ robot.J[i] @ np.swapaxes(R, -1, -2)
        h = np.einsum("...ab,b->...a", R, robot.MS[i])
        d = P0[..., i, :] - Ok
        dd = np.einsum("...a,...a->...", d, d)[..., None, None]
        dh = np.einsum("...a,...a->...", d, h)[..., None, None]
        J = J + Ji + robot.M[i] * (dd * eye - d[..., :, None] * d[..., None, :]) + 2 * dh * eye \
            - d[..., :, None] * h[..., None, :] - h[..., :, None] * d[..., None, :]
    Rk = R0[..., fk, :, :]
    return np.swapaxes(Rk, -1, -2) @ J @ Rk


def _joint(robot: Robot, joint) -> int:
    if not isinstance(joint, (int, np.integer)) or not 1 <= joint <= robot.n:
        raise InputError(f"argument 'joint' = {joint!r}; give the moving joint's number 1..{robot.n}")
    k = int(joint) - 1
    if robot.sigma[robot.joint_frames[k]] != 0:
        raise InputError(f"argument 'joint' = {joint}: joint {joint} is prismatic; single-joint motion "
                         "identification (Dellin §5) rotates links about a revolute joint")
    return k


@dataclass(frozen=True, eq=False)
class LockedBodyInertia:
    """Result of :func:`identify_locked_inertia`.

    Attributes
    ----------
    joint : int — the moving joint k (1-based).
    upper_pose : ndarray (n − k,) — q_{k+1..n}, held during the motion.
    names : tuple of str — ``XZ YZ ZZ Ia`` (+ ``Fc Fv``): the third column of the inertia tensor of links k..n
        about O_k in R_k (kg m²), joint k's rotor inertia, and its friction.
    values, std : ndarray — estimates and standard deviations (NaN where not identifiable).
    identifiable : ndarray bool — which names the data determine; ``notes`` say how the others are grouped.
    residual_rms : ndarray (k,) — per joint 1..k, N m.
    """

    joint: int
    upper_pose: np.ndarray
    names: tuple[str, ...]
    values: np.ndarray
    std: np.ndarray
    identifiable: np.ndarray
    notes: tuple[str, ...]
    residual_rms: np.ndarray

    def as_dict(self) -> dict[str, float]:
        return {n: float(v) for n, v in zip(self.names, self.values)}


def identify_locked_inertia(robot: Robot, calibration, q, qd, qdd, tau, joint: int,
                            friction: bool = False) -> LockedBodyInertia:
    """Identify the inertia of links k..n about joint k's axis from a motion of joint k alone (Dellin §5).

    Parameters
    ----------
    robot : Robot (serial) — geometry only.
    calibration : GravityCalibration or array_like (n, 3)
        Calibrated cumulative first moments μ (and torque offsets) from :func:`calibrate_gravity`; they give the
        gravity torques (eq. (14)) and the moving body's first moment C (eq. (72)).
    q, qd, qdd : array_like (N, n)
        Samples of the motion: only joint k moves (q̇_j = q̈_j = 0 for j ≠ k); joints k+1..n hold one upper
        pose; joints 1..k−1 may differ between samples (Dellin's lower poses A, B, ... of eq. (117)).
    tau : array_like (N, n) — measured torques; columns 1..k are used.
    joint : int — k, 1-based, revolute.
    friction : bool — also estimate joint k's Coulomb and viscous friction (Khalil & Dombre [9.26]).

    Returns
    -------
    LockedBodyInertia
        ``values`` = (XZ, YZ, ZZ, Ia[, Fc, Fv]); for k = n these are link n's own XZ_n, YZ_n, ZZ_n
        (``rd.locked_body_inertia`` gives the model's values at any pose).

    Raises
    ------
    InputError
        Wrong shapes, NaN, other joints moving or the upper pose changing (rows named), or too few samples.
    """
    _check_serial(robot, "identify_locked_inertia")
    k = _joint(robot, joint)
    n = robot.n
    if isinstance(calibration, GravityCalibration):
        mu, offsets = calibration.mu, calibration.offsets
    else:
        mu = np.asarray(calibration, dtype=float)
        offsets = np.zeros(n)
        if mu.shape != (n, 3) or not np.all(np.isfinite(mu)):
            raise InputError(f"argument 'calibration' must be a GravityCalibration or finite μ of shape ({n}, 3)")
    arrays = {}
    for name, value in (("q", q), ("qd", qd), ("qdd", qdd), ("tau", tau)):
        a = as_real_array(name, value).astype(float)
        if a.ndim != 2 or a.shape[1] != n:
            raise InputError(f"argument '{name}' must have shape (N, {n}), one row per sample")
        arrays[name] = a
    N = arrays["q"].shape[0]
    for name, a in arrays.items():
        if a.shape[0] != N:
            raise InputError(f"argument '{name}' has {a.shape[0]} rows and 'q' has {N}; give one row per sample")
        bad = ~np.all(np.isfinite(a[:, : k + 1] if name == "tau" else a), axis=1)
        if np.any(bad):
            rows = ", ".join(map(str, np.flatnonzero(bad)[:10] + 1))
            raise InputError(f"argument '{name}': NaN or inf in rows {rows} (counting from 1); remove those samples")
    q, qd, qdd, tau = (arrays[x] for x in ("q", "qd", "qdd", "tau"))
    others = np.delete(np.arange(n), k)
    moving = np.any(np.abs(qd[:, others]) > 0, axis=1) | np.any(np.abs(qdd[:, others]) > 0, axis=1)
    if np.any(moving):
        rows = np.flatnonzero(moving)[:10] + 1
        raise InputError(f"rows {', '.join(map(str, rows))} (counting from 1): joints other than {joint} move; "
                         "single-joint motion needs q̇_j = q̈_j = 0 for j ≠ k")
    upper = q[:, k + 1 :]
    drift = np.any(np.abs(upper - upper[0]) > 1e-9 * (1 + np.abs(upper[0])), axis=1)
    if np.any(drift):
        rows = np.flatnonzero(drift)[:10] + 1
        raise InputError(f"rows {', '.join(map(str, rows))} (counting from 1): the upper pose q{k + 2}..q{n} differs "
                         "from row 1; identify each upper pose separately (Dellin eq. (117) holds it fixed)")

    R0, P0 = base_poses(robot, q, np.float64)
    frames = robot.joint_frames
    Rj = R0[:, frames]
    fk = frames[k]
    e = R0[:, fk, :, 2]
    Ok = P0[:, fk]
    s = np.where(robot.sigma[frames] == 1, q, 1.0)
    C = np.einsum("kiab,kib->ka", Rj[:, k:], mu[k:] * s[:, k:, None])          # Dellin eq. (72) sum
    wd, w2 = qdd[:, k], qd[:, k] ** 2
    F = wd[:, None] * np.cross(e, C) + w2[:, None] * np.cross(e, np.cross(e, C))
    known = gravity_regressor(robot, q) @ mu.ravel() + offsets
    names = ("XZ", "YZ", "ZZ", "Ia") + (("Fc", "Fv") if friction else ())
    X = np.zeros((N, k + 1, len(names)))
    y = tau[:, : k + 1] - known[:, : k + 1]
    Rk = R0[:, fk]
    for c in range(3):
        v = Rk[:, :, c]                                                         # R_k e_c: J_B z_k = Σ u_c R_k e_c
        col = wd[:, None] * v + w2[:, None] * np.cross(e, v)
        for j in range(k + 1):
            if robot.sigma[frames[j]] == 0:
                X[:, j, c] = np.einsum("ka,ka->k", R0[:, frames[j], :, 2], col)
    for j in range(k + 1):
        zj = R0[:, frames[j], :, 2]
        if robot.sigma[frames[j]] == 0:
            arm = Ok - P0[:, frames[j]]
            y[:, j] -= np.einsum("ka,ka->k", zj, np.cross(arm, F))
        else:
            y[:, j] -= np.einsum("ka,ka->k", zj, F)
    X[:, k, 3] = wd
    if friction:
        X[:, k, 4] = np.sign(qd[:, k])
        X[:, k, 5] = qd[:, k]
    W = X.reshape(-1, len(names))
    base, beta, notes = _scan(W, names, order=[2, 0, 1, 4, 5, 3][: len(names)] if friction else [2, 0, 1, 3])
    Wb = W[:, base]
    s_ = np.linalg.svd(Wb, compute_uv=False)
    if Wb.shape[0] < Wb.shape[1] or s_[-1] <= 1e-9 * s_[0]:
        raise InputError(f"the {N} samples do not determine {', '.join(names[b] for b in base)}; give samples with "
                         f"different accelerations and velocities of joint {joint}")
    K = np.linalg.pinv(Wb)
    theta_b = K @ y.ravel()
    resid = y - (Wb @ theta_b).reshape(N, k + 1)
    dof = max(N - len(base) / (k + 1), 1.0)
    var = np.sum(resid**2, axis=0) / dof
    cov = (K * np.tile(var, N)) @ K.T
    values = np.zeros(len(names))
    std = np.full(len(names), np.nan)
    values[base] = theta_b
    std[base] = np.sqrt(np.clip(np.diag(cov), 0, None))
    ident = np.zeros(len(names), bool)
    ident[base] = True
    return LockedBodyInertia(joint=int(joint), upper_pose=q[0, k + 1 :].copy(), names=names, values=values,
                             std=std, identifiable=ident, notes=tuple(notes),
                             residual_rms=np.sqrt(np.mean(resid**2, axis=0)))


def _scan(W: np.ndarray, names, order) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Independent columns in the given order (Khalil & Dombre §9.4 numeric method), grouping notes."""
    norms = np.linalg.norm(W, axis=0)
    tol = 1e-9 * max(norms.max(), 1e-300)
    base: list[int] = []
    for c in order:
        if norms[c] <= tol:
            continue
        sv = np.linalg.svd(W[:, base + [c]], compute_uv=False)
        if sv[-1] > 1e-9 * sv[0]:
            base.append(c)
    base = sorted(base)
    beta = np.linalg.lstsq(W[:, base], W, rcond=None)[0] if base else np.zeros((0, W.shape[1]))
    notes = []
    for c in range(W.shape[1]):
        if c in base:
            continue
        if norms[c] <= tol:
            notes.append(f"{names[c]}: not excited by this motion")
        else:
            into = [f"{names[b]} (+{beta[i, c]:.6g} × {names[c]})"
                    for i, b in enumerate(base) if abs(beta[i, c]) > 1e-9]
            notes.append(f"{names[c]}: confounded with {', '.join(into)}; estimated as 0")
    return np.array(base, dtype=int), beta, notes

