"""Second moments from single-joint motions (Dellin §5), in Khalil–Kleinfinger frames.

When joint k alone moves, links k..n turn as one rigid body B about z_k (ω = q̇_k z_k, ω̇ = q̈_k z_k) and the
torque of every joint j ≤ k (Dellin eqs (104)–(105), derived directly: docs/gravity-calibration.md, "Erratum") is

    τ_j = Q_j(q) + z_j · [ q̈_k J_B z_k + q̇_k² z_k × J_B z_k + (O_k − O_j) × (q̈_k z_k × C + q̇_k² z_k × (z_k × C)) ]
          (+ Ia_k q̈_k for j = k; a prismatic j ≤ k sees only the force term)

with J_B the inertia of B about O_k (Dellin eqs (111)–(112)), C = Σ_{i≥k} ^0A_i μ_i its first moment (eq. (72))
and Q_j the calibrated gravity torques (eq. (14)).  J_B enters only through u = J_B z_k = (XZ, YZ, ZZ) in R_k.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import block_diag

from robodyn.arrays import as_real_array, finite_result
from robodyn.model.arguments import joint_arrays
from robodyn.errors import InputError, ModelError
from robodyn.identification.gravity import (
    GravityCalibration,
    check_serial,
    column_groups,
    first_moments_of,
    gravity_parameter_structure,
    gravity_regressor,
    map_covariance,
)
from robodyn.kinematics import base_poses
from robodyn.model.robot import PARAMETER_NAMES, Robot


def locked_body_inertia(robot: Robot, q, joint: int | str) -> np.ndarray:
    """Inertia tensor of links k..n, locked at pose q, about O_k in R_k (from the model's standard parameters).

    Each link's tensor ^iJ_i about O_i is turned into the base frame and moved to O_k with the parallel-axis
    theorem including its first moment (J_P = J + M(|d|²I − ddᵀ) + 2(d·h)I − dhᵀ − hdᵀ, d = O_i − O_k,
    h = ^0MS_i), then expressed in R_k.  Rotor inertias are not included.

    Parameters
    ----------
    robot : Robot (serial)
    q : array_like (..., n)
    joint : int or str — k, 1-based, or the joint's name (``robot.joint_number``).

    Returns
    -------
    ndarray (..., 3, 3) (kg m²)
    """
    check_serial(robot, "locked_body_inertia")
    k = _joint(robot, joint)
    dtype, batch, a = joint_arrays(robot, q=q)
    R0, P0 = base_poses(robot, a["q"], dtype)
    fk = robot.joint_frames[k]
    return finite_result("locked_body_inertia", _locked_tensor(R0, P0, fk, robot.J, robot.MS, robot.M))


def _locked_tensor(R0, P0, fk: int, Js, MSs, Ms) -> np.ndarray:
    """Inertia of frames fk..nf−1 about O_fk in R_fk for inertias ``Js`` (nf, 3, 3), ``MSs`` (nf, 3), ``Ms`` (nf,).

    Linear in (Js, MSs, Ms): :func:`identify_link_inertias` evaluates it on unit parameter vectors."""
    Ok = P0[..., fk, :]
    J = np.zeros(R0.shape[:-3] + (3, 3), R0.dtype)
    eye = np.eye(3)
    for i in range(fk, R0.shape[-3]):
        R = R0[..., i, :, :]
        Ji = R @ Js[i] @ np.swapaxes(R, -1, -2)
        h = np.einsum("...ab,b->...a", R, MSs[i])
        d = P0[..., i, :] - Ok
        dd = np.einsum("...a,...a->...", d, d)[..., None, None]
        dh = np.einsum("...a,...a->...", d, h)[..., None, None]
        J = J + Ji + Ms[i] * (dd * eye - d[..., :, None] * d[..., None, :]) + 2 * dh * eye \
            - d[..., :, None] * h[..., None, :] - h[..., :, None] * d[..., None, :]
    Rk = R0[..., fk, :, :]
    return np.swapaxes(Rk, -1, -2) @ J @ Rk


def _locked_first_moment(R0, P0, fk: int, MSs, Ms) -> np.ndarray:
    """First moment of frames fk..nf−1 about O_fk in R_fk, Σ R_i^k (MS_i + M_i d_i), d_i = O_i − O_fk: (..., 3).

    The sum Σ_{i≥k} R_i^k μ_i of Dellin eq. (72), here from the links' own first moments and masses."""
    Ok = P0[..., fk, :]
    C = np.zeros(R0.shape[:-3] + (3,), R0.dtype)
    for i in range(fk, R0.shape[-3]):
        C = C + np.einsum("...ab,b->...a", R0[..., i, :, :], MSs[i]) + Ms[i] * (P0[..., i, :] - Ok)
    return np.einsum("...ba,...b->...a", R0[..., fk, :, :], C)


def _joint(robot: Robot, joint) -> int:
    """0-based index in q of the moving joint, given by number 1..n or name; InputError as for any argument."""
    try:
        k = robot.joint_number(joint) - 1
    except ModelError:
        raise InputError(f"argument 'joint' = {joint!r}; give the moving joint's number 1..{robot.n} or its name "
                         f"({', '.join(robot.q_names)})") from None
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
    grouping : ndarray (len(names), len(names)) — row i: the combination of the true (XZ, YZ, ZZ, Ia[, Fc, Fv])
        that ``values[i]`` estimates (a unit row for an identifiable name alone, zero for a name not identified).
    covariance : ndarray (len(names), len(names)) — covariance of ``values`` (zero rows where not identifiable).
    """

    joint: int
    upper_pose: np.ndarray
    names: tuple[str, ...]
    values: np.ndarray
    std: np.ndarray
    identifiable: np.ndarray
    notes: tuple[str, ...]
    residual_rms: np.ndarray
    grouping: np.ndarray
    covariance: np.ndarray

    def as_dict(self) -> dict[str, float]:
        return {n: float(v) for n, v in zip(self.names, self.values)}


def identify_locked_inertia(robot: Robot, calibration, q, qd, qdd, tau, joint: int | str,
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
    joint : int or str — k, 1-based, or the joint's name; revolute.
    friction : bool — also estimate joint k's Coulomb and viscous friction (Khalil & Dombre [9.26]).

    Returns
    -------
    LockedBodyInertia
        ``values`` = (XZ, YZ, ZZ, Ia[, Fc, Fv]); for k = n these are link n's own XZ_n, YZ_n, ZZ_n
        (``rd.identification.locked_body_inertia`` gives the model's values at any pose).

    Raises
    ------
    InputError
        Wrong shapes, NaN, other joints moving or the upper pose changing (rows named), or too few samples.
    """
    check_serial(robot, "identify_locked_inertia")
    k = _joint(robot, joint)
    mu, offsets = _calibrated(robot, calibration)
    q, qd, qdd, tau = _motion(robot, q, qd, qdd, tau, k, k + 1)
    X, F, names = _locked_columns(robot, q, qd, qdd, k, friction)
    known = gravity_regressor(robot, q) @ mu.ravel() + offsets
    y = tau[:, : k + 1] - known[:, : k + 1]
    C = np.einsum("kab,kb->ka", np.swapaxes(F[2], -1, -2), _body_first_moment(robot, q, mu, k))
    y -= np.einsum("kjc,kc->kj", F[0], C)
    order = [2, 0, 1, 4, 5, 3] if friction else [2, 0, 1, 3]
    return _solve(X, y, names, order, k + 1, q[0, k + 1 :])


def identify_locked_body(robot: Robot, q, qd, qdd, tau, joint: int | str, friction: bool = False) -> LockedBodyInertia:
    """First and second moments together from a motion of joint k alone, without a gravity calibration.

    Dellin §5.8, eqs (119)–(120), on the measured joint torques τ_1..τ_k only (the axis projections, free of the
    bearing moments), with links k..n locked into one body B.  Linear unknowns per upper pose X: u = (XZ, YZ, ZZ),
    Ia_k (and joint k's friction), B's first moment C = (CX, CY, CZ) about O_k in R_k (the sum of Dellin
    eq. (72), of which his η of eq. (105) are made: the η solve of §5.9, eqs (121)–(123), done through C), and the
    lower links' cumulative first moments μ_1..μ_{k−1} (eq. (14)), excited by the lower poses of eq. (117).

    Parameters
    ----------
    robot, joint, friction : as :func:`identify_locked_inertia`.
    q, qd, qdd, tau : array_like (N, n) — as for :func:`identify_locked_inertia`; joints 1..k−1 take several
        lower poses (they excite the lower links' μ and the components of C that τ_k does not see).

    Returns
    -------
    LockedBodyInertia
        ``names`` = ``XZ YZ ZZ Ia`` [``Fc Fv``] ``CX CY CZ`` (kg m) then ``mu<j>x mu<j>y mu<j>z`` for j < k (kg m,
        frame j, as :func:`calibrate_gravity`); ``grouping`` and ``notes`` as :func:`identify_locked_inertia`.

    Raises
    ------
    InputError
        As :func:`identify_locked_inertia`.
    """
    check_serial(robot, "identify_locked_body")
    k = _joint(robot, joint)
    q, qd, qdd, tau = _motion(robot, q, qd, qdd, tau, k, k + 1)
    X, F, names = _locked_columns(robot, q, qd, qdd, k, friction)
    m = len(names)
    G = gravity_regressor(robot, q)[:, : k + 1, : 3 * k]
    X = np.concatenate([X, F[0] + F[1], G], axis=2)
    names = names + ("CX", "CY", "CZ") + tuple(f"mu{j + 1}{ax}" for j in range(k) for ax in "xyz")
    order = ([2, 0, 1, 4, 5] if friction else [2, 0, 1]) + list(range(m, len(names))) + [3]
    return _solve(X, tau[:, : k + 1].copy(), names, order, k + 1, q[0, k + 1 :])


def _calibrated(robot: Robot, calibration) -> tuple[np.ndarray, np.ndarray]:
    """μ (n, 3) and the torque offsets (n,) of a GravityCalibration, or of μ given as an array (offsets 0)."""
    if isinstance(calibration, GravityCalibration):
        return calibration.mu, calibration.offsets
    mu = np.asarray(calibration, dtype=float)
    if mu.shape != (robot.n, 3) or not np.all(np.isfinite(mu)):
        raise InputError(f"argument 'calibration' must be a GravityCalibration or finite μ of shape ({robot.n}, 3)")
    return mu, np.zeros(robot.n)


def _motion(robot: Robot, q, qd, qdd, tau, k: int, joint):
    """Checked (N, n) arrays of a single-joint motion of joint k (0-based) at one upper pose."""
    n = robot.n
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
    return q, qd, qdd, tau


def _body_first_moment(robot: Robot, q: np.ndarray, mu: np.ndarray, k: int) -> np.ndarray:
    """B's first moment about O_k in the base frame, Σ_{i≥k} s_i ^0A_i μ_i (the sum of Dellin eq. (72)), (N, 3)."""
    R0, _ = base_poses(robot, q, np.float64)
    frames = robot.joint_frames
    s = np.where(robot.sigma[frames] == 1, q, 1.0)
    return np.einsum("kiab,kib->ka", R0[:, frames][:, k:], mu[k:] * s[:, k:, None])


def _locked_columns(robot: Robot, q, qd, qdd, k: int, friction: bool):
    """Columns of the torques τ_1..τ_k: X (N, k+1, m) for u, Ia [, Fc, Fv]; (FC, FG, R_k); names.

    Per unit component c of B's first moment C in R_k, FC[:, j, c] is τ_j from B's inertial force,
    z_j·(O_k − O_j) × F(R_k e_c), and FG[:, j, c] from its gravity, (z_j × g)·R_k e_c (the gravity regressor's
    columns of links k..n summed, Dellin eq. (14)), both (N, k+1, 3)."""
    N = q.shape[0]
    R0, P0 = base_poses(robot, q, np.float64)
    frames = robot.joint_frames
    fk = frames[k]
    e = R0[:, fk, :, 2]
    Ok = P0[:, fk]
    Rk = R0[:, fk]
    g = robot.gravity.astype(float)
    wd, w2 = qdd[:, k], qd[:, k] ** 2
    names = ("XZ", "YZ", "ZZ", "Ia") + (("Fc", "Fv") if friction else ())
    X = np.zeros((N, k + 1, len(names)))
    FC = np.zeros((N, k + 1, 3))
    FG = np.zeros((N, k + 1, 3))
    for c in range(3):
        v = Rk[:, :, c]                                                         # R_k e_c: J_B z_k = Σ u_c R_k e_c
        col = wd[:, None] * v + w2[:, None] * np.cross(e, v)
        F = wd[:, None] * np.cross(e, v) + w2[:, None] * np.cross(e, np.cross(e, v))
        for j in range(k + 1):
            zj = R0[:, frames[j], :, 2]
            if robot.sigma[frames[j]] == 0:
                X[:, j, c] = np.einsum("ka,ka->k", zj, col)
                arm = Ok - P0[:, frames[j]]
                FG[:, j, c] = np.einsum("ka,ka->k", np.cross(zj, g), v)
                FC[:, j, c] = np.einsum("ka,ka->k", zj, np.cross(arm, F))
            else:
                FC[:, j, c] = np.einsum("ka,ka->k", zj, F)
    X[:, k, 3] = wd
    if friction:
        X[:, k, 4] = np.sign(qd[:, k])
        X[:, k, 5] = qd[:, k]
    return X, (FC, FG, Rk), names


def _solve(X: np.ndarray, y: np.ndarray, names, order, joint, upper) -> LockedBodyInertia:
    """Least squares of y (N, k+1) on X (N, k+1, m) over the independent columns, with per-joint noise variances."""
    N, rows, m = X.shape
    W = X.reshape(-1, m)
    base, beta, notes = _scan(W, names, order=order)
    Wb = W[:, base]
    s_ = np.linalg.svd(Wb, compute_uv=False)
    if Wb.shape[0] < Wb.shape[1] or s_[-1] <= 1e-9 * s_[0]:
        raise InputError(f"the {N} samples do not determine {', '.join(names[b] for b in base)}; give samples with "
                         f"different accelerations and velocities of joint {joint}")
    K = np.linalg.pinv(Wb)
    theta_b = K @ y.ravel()
    resid = y - (Wb @ theta_b).reshape(N, rows)
    cov = map_covariance(K, resid, len(base))
    values = np.zeros(m)
    std = np.full(m, np.nan)
    values[base] = theta_b
    std[base] = np.sqrt(np.clip(np.diag(cov), 0, None))
    ident = np.zeros(m, bool)
    ident[base] = True
    grouping = np.zeros((m, m))
    grouping[base] = beta
    covariance = np.zeros((m, m))
    covariance[np.ix_(base, base)] = cov
    return LockedBodyInertia(joint=int(joint), upper_pose=np.array(upper, dtype=float), names=tuple(names),
                             values=values, std=std, identifiable=ident, notes=tuple(notes),
                             residual_rms=np.sqrt(np.mean(resid**2, axis=0)), grouping=grouping,
                             covariance=covariance)


def _scan(W: np.ndarray, names, order) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Independent columns in the given order (Khalil & Dombre §9.4 numeric method), grouping notes."""
    base, beta, zero = column_groups(W, order)
    notes = []
    for c in np.setdiff1d(np.arange(W.shape[1]), base):
        if zero[c]:
            notes.append(f"{names[c]}: not excited by this motion")
        else:
            into = [f"{names[b]} (+{beta[i, c]:.6g} × {names[c]})"
                    for i, b in enumerate(base) if abs(beta[i, c]) > 1e-9]
            notes.append(f"{names[c]}: confounded with {', '.join(into)}; estimated as 0")
    return base, beta, notes


@dataclass(frozen=True, eq=False)
class LinkInertias:
    """Result of :func:`identify_link_inertias`: per-link standard inertial parameters from single-joint motions.

    Attributes
    ----------
    names : tuple of str — ``XX1 XY1 XZ1 YY1 YZ1 ZZ1 MX1 MY1 MZ1 M1`` for every frame j = 1..nf (Khalil & Dombre
        §9.4.1: inertia about O_j in R_j, kg m²; first moment, kg m; mass, kg), then ``Ia<j>`` for every joint's
        frame j (rotor inertia, kg m²).
    values, std : ndarray (p,) — estimates and standard deviations; NaN where not identifiable.
    identifiable : ndarray bool (p,) — parameters the experiments determine one by one.
    notes : tuple of str — one sentence per parameter that is not identifiable.
    rank : int — rank of the stacked equations (the number of independent combinations they determine).
    residual_rms : float — RMS of the stacked equations' residuals (kg m² and kg m mixed; ≈ 0 for exact data).
    """

    names: tuple[str, ...]
    values: np.ndarray
    std: np.ndarray
    identifiable: np.ndarray
    notes: tuple[str, ...]
    rank: int
    residual_rms: float

    def as_dict(self) -> dict[str, float]:
        """The identifiable parameters by name."""
        return {n: float(v) for n, v, ok in zip(self.names, self.values, self.identifiable) if ok}

    def link(self, frame: int) -> dict[str, float]:
        """The identifiable parameters of frame ``frame`` (1-based), without the frame number in their names."""
        suffix = str(int(frame))
        return {n[: -len(suffix)]: v for n, v in self.as_dict().items()
                if n[-len(suffix):] == suffix and n[: -len(suffix)].isalpha()}


def _mu_map(robot: Robot) -> np.ndarray:
    """The cumulative first moments μ.ravel() (Dellin eq. (14)), linear in (MS of every frame, M): (3n, 4·nf)."""
    nf = robot.nf
    cols = np.zeros((3 * robot.n, 4 * nf))
    for c in range(4 * nf):
        MS, M = np.zeros((nf, 3)), np.zeros(nf)
        if c < 3 * nf:
            MS[c // 3, c % 3] = 1.0
        else:
            M[c - 3 * nf] = 1.0
        cols[:, c] = first_moments_of(robot, MS, M).ravel()
    return cols


def _calibration_rows(robot: Robot, calibration):
    """Rows (values, std, map (m, 4·nf)) of the calibrated grouped μ components in (MS, M) of every frame."""
    n = robot.n
    mu = _calibrated(robot, calibration)[0].ravel()
    if isinstance(calibration, GravityCalibration):
        structure = gravity_parameter_structure(robot, calibration.estimate_offsets, joints=calibration.joints)
        std = calibration.std.ravel()
    else:
        structure = gravity_parameter_structure(robot)
        mu, std = structure.group(mu), np.zeros(3 * n)
    cols = _mu_map(robot)
    rows = [i for i, b in enumerate(structure.base) if b < 3 * n and not np.any(structure.beta[i, 3 * n :])]
    base = structure.base[rows]
    return mu[base], std[base], structure.beta[rows, : 3 * n] @ cols


def identify_link_inertias(robot: Robot, calibration, experiments) -> LinkInertias:
    """Standard inertial parameters of every link from single-joint motions and the calibrated μ (Dellin §5).

    Each experiment (:func:`identify_locked_inertia`) gives u_k(X) = (XZ, YZ, ZZ) of links k..n about O_k at the
    upper pose X and Ia_k (Dellin eqs (104)–(105), (111)–(112), (117)); u_k(X) is linear in the standard
    parameters of links i ≥ k, the calibrated grouped μ (eq. (14)) is linear in their (MS_i, M_i), and the
    stacked equations are solved at once by least squares instead of Dellin's last-link-inward pass (§5.8,
    eqs (114)–(120)).  Experiments of :func:`identify_locked_body` add C(X) (eq. (72)) and the lower links' μ.

    Parameters
    ----------
    robot : Robot (serial) — geometry.
    calibration : GravityCalibration or array_like (n, 3) — calibrated cumulative first moments μ
        (:func:`calibrate_gravity`); an array is taken as exact.
    experiments : sequence of LockedBodyInertia — results of :func:`identify_locked_inertia`, for several
        joints and, per joint, several upper poses.

    Returns
    -------
    LinkInertias
        A parameter is reported (``identifiable``) only if the experiments determine it alone (its unit vector
        lies in the row space of the stacked equations); the others have NaN values and a note.

    Raises
    ------
    InputError
        An empty ``experiments`` or items that are not LockedBodyInertia results for this robot.
    ModelError
        For a tree.

    Notes
    -----
    The standard deviations propagate each experiment's covariance and the calibration's ``std`` (independent)
    through the exact least-squares map.
    """
    check_serial(robot, "identify_link_inertias")
    n, nf = robot.n, robot.nf
    experiments = list(experiments)
    if not experiments:
        raise InputError("argument 'experiments' is empty; give LockedBodyInertia results from "
                         "rd.identification.identify_locked_inertia for several joints and upper poses")
    for i, e in enumerate(experiments):
        if not isinstance(e, LockedBodyInertia) or not 1 <= e.joint <= n or len(e.upper_pose) != n - e.joint:
            raise InputError(f"argument 'experiments', item {i + 1}: expected a LockedBodyInertia of "
                             f"rd.identification.identify_locked_inertia for this {n}-joint robot")
    P = 10 * nf + n
    frames = robot.joint_frames
    names = tuple(f"{p}{j + 1}" for j in range(nf) for p in PARAMETER_NAMES) + tuple(f"Ia{f + 1}" for f in frames)
    rows, ys, covs = [], [], []
    ms_cols = [10 * i + 6 + a for i in range(nf) for a in range(3)] + [10 * i + 9 for i in range(nf)]
    mu_cols = _mu_map(robot)
    for k in range(n):
        group = [e for e in experiments if e.joint == k + 1]
        if not group:
            continue
        q = np.zeros((len(group), n))
        q[:, k + 1 :] = np.array([e.upper_pose for e in group]).reshape(len(group), n - k - 1)
        R0, P0 = base_poses(robot, q, np.float64)
        phi = np.zeros((len(group), 3, P))                      # u_k(X) = phi θ
        chi = np.zeros((len(group), 3, P))                      # C_k(X) = chi θ (links k..n's first moment)
        for c in range(frames[k] * 10, 10 * nf):
            Js, MSs, Ms = np.zeros((nf, 3, 3)), np.zeros((nf, 3)), np.zeros(nf)
            i, p = divmod(c, 10)
            if p < 6:
                a, b = _INERTIA_INDEX[p]
                Js[i, a, b] = Js[i, b, a] = 1.0
            elif p < 9:
                MSs[i, p - 6] = 1.0
            else:
                Ms[i] = 1.0
            phi[:, :, c] = _locked_tensor(R0, P0, frames[k], Js, MSs, Ms)[:, :, 2]
            if p >= 6:
                chi[:, :, c] = _locked_first_moment(R0, P0, frames[k], MSs, Ms)
        for e, ph, ch in zip(group, phi, chi):
            model = np.zeros((len(e.names), P))
            model[:3] = ph
            model[3, 10 * nf + k] = 1.0
            known = np.zeros(len(e.names), bool)
            known[:4] = True
            if "CX" in e.names:                                 # rd.identification.identify_locked_body: C and the lower μ too
                c0 = e.names.index("CX")
                model[c0 : c0 + 3] = ch
                model[c0 + 3 :, ms_cols] = mu_cols[: 3 * k]
                known[c0:] = True
            use = [i for i in np.flatnonzero(e.identifiable) if known[i] and not np.any(e.grouping[i, ~known])]
            rows.append(e.grouping[use][:, known] @ model[known])
            ys.append(e.values[use])
            covs.append(e.covariance[np.ix_(use, use)])
    mu_y, mu_std, mu_map = _calibration_rows(robot, calibration)
    mu_rows = np.zeros((len(mu_y), P))
    mu_rows[:, ms_cols] = mu_map
    A = np.vstack(rows + [mu_rows])
    y = np.concatenate(ys + [mu_y])
    Sigma = block_diag(*covs, np.diag(mu_std**2))
    # Rotations by multiples of π/2 leave entries of order 1e-16 where the exact map has zeros; column scaling
    # below would turn them into spurious information.
    A = np.where(np.abs(A) > 1e-12 * np.abs(A).max(axis=1, keepdims=True), A, 0.0)
    norms = np.linalg.norm(A, axis=0)
    scale = np.where(norms > 0, norms, 1.0)
    U, s, Vt = np.linalg.svd(A / scale, full_matrices=True)
    r = int(np.sum(s > 1e-10 * s[0]))
    null = Vt[r:]
    U, s, Vt = U[:, :r], s[:r], Vt[:r]
    K = (Vt.T / s) @ U.T / scale[:, None]                       # θ = K y, minimum-norm in scaled parameters
    theta = K @ y
    cov = K @ Sigma @ K.T
    # identifiable alone: the unit vector has no component in the null space. Its norm, not 1 − |row-space
    # part|², which resolves only ~1e-8: a parameter entangled at 1e-5 passed that test and came out 10 % off.
    ident = (np.linalg.norm(null, axis=0) < 1e-9) & (norms > 0)
    values = np.where(ident, theta, np.nan)
    std = np.where(ident, np.sqrt(np.clip(np.diag(cov), 0, None)), np.nan)
    notes = tuple(f"{nm}: not excited by these single-joint motions" if norms[c] == 0
                  else f"{nm}: enters only in combinations with other parameters; more joints or upper poses may "
                       "separate it" for c, nm in enumerate(names) if not ident[c])
    resid = y - A @ theta
    return LinkInertias(names=names, values=values, std=std, identifiable=ident, notes=notes, rank=r,
                        residual_rms=float(np.sqrt(np.mean(resid**2))))


_INERTIA_INDEX = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))
