"""Payload and drive-gain identification with a known arm (Khalil & Dombre §9.4; Khalil, Gautier & Lemoine 2007).

A payload rigidly attached to link j adds its 10 standard parameters φ (in R_j, about O_j) to the link's, and
Γ − Γ_arm(q, q̇, q̈) = D_j(q, q̇, q̈) φ through the link's 10 columns of the regressor [9.36].  From motion, φ is
estimated as a rigid body (pseudo-inertia ⪰ 0; Wensing et al.); from static poses only its mass and first moments.
Drive gains (Γ = k ⊙ u): a payload of known mass on some samples (``loaded``) makes D_B K − diag(u) k = −D_j φ_L
identifiable in (K_B, k) (docs/identification.md, "Payloads and drive gains").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn.arrays import as_real_array
from robodyn.identification.data import check_samples
from robodyn.model.robot import check_robot
from robodyn.model.arguments import frame_index
from robodyn.errors import InputError
from robodyn.model.robot import Robot


@dataclass(frozen=True, eq=False)
class Payload:
    """Result of :func:`identify_payload`.

    Attributes
    ----------
    frame : int — the frame (1..nf) the payload is attached to.
    params : ndarray (10,) — XX, XY, XZ, YY, YZ, ZZ (kg m², about O_j), MX, MY, MZ (kg m), M (kg), in R_j.
    std : ndarray (10,) — σ of the unconstrained least-squares estimate (0 for the parameters not estimated).
    mass : float (kg);  com : ndarray (3,) m, in R_j;  inertia : ndarray (3, 3) kg m² about the centre of mass.
    static : bool — from static poses: mass and first moments only; the inertia is that of a point mass at the
        centre of mass (``inertia`` = 0), so that ``robot`` stays physically consistent.
    residual_rms : ndarray (n,) — RMS of the torque residual per joint (N m | N).
    robot : Robot — the arm with the payload added to link ``frame``.
    solver : dict or None — the conic solver's name and status (motion data).
    """

    frame: int
    params: np.ndarray
    std: np.ndarray
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    static: bool
    residual_rms: np.ndarray
    robot: Robot
    solver: dict | None = None


def _columns(robot: Robot, j: int, q, qd, qdd) -> np.ndarray:
    from robodyn.parameters.regressor import regressor

    return regressor(robot, q, qd, qdd, friction=False)[..., 11 * j: 11 * j + 10]


def _positions(robot: Robot, q, other, name: str):
    """q (N, n), one column per joint of ``robot``, and the samples ``other`` of the same shape."""
    q, other = check_samples(q, other, ("q", name))
    if q.shape[1] != robot.n:
        raise InputError(f"q has shape {q.shape}; give (N, {robot.n}) joint positions")
    return q, other


def _motion(q: np.ndarray, qd, qdd):
    """qd and qdd (N, n), of the shape of the checked positions q."""
    qd, qdd = check_samples(qd, qdd, ("qd", "qdd"))
    if qd.shape != q.shape:
        raise InputError(f"qd has shape {qd.shape} but q has {q.shape}; give one row per sample")
    return qd, qdd


def _data(robot: Robot, q, qd, qdd, tau):
    q, tau = _positions(robot, q, tau, "tau")
    if qd is None and qdd is None:
        return q, np.zeros_like(q), np.zeros_like(q), tau, True
    if qd is None or qdd is None:
        raise InputError("give both qd and qdd (motion) or neither (static poses)")
    return q, *_motion(q, qd, qdd), tau, False


def identify_payload(robot: Robot, q, qd=None, qdd=None, tau=None, frame=None,
                     regularization: float = 0.0) -> Payload:
    """Identify a payload attached to a known arm from measured joint torques (motion or static poses).

    Parameters
    ----------
    robot : Robot — the arm without the payload (its parameters, friction included, are known).
    q : array (N, n) — joint positions.
    qd, qdd : array (N, n) or None — velocities and accelerations of a motion; None (both) for static poses
        (then only the mass and the first moments are identified).
    tau : array (N, n) — measured joint torques with the payload (N m | N).
    frame : int or str, optional — the frame (1..nf or its name) carrying the payload; default the last.
    regularization : float — weight of ‖φ‖² next to the normalised fit (motion; default 0).

    Returns
    -------
    Payload

    Raises
    ------
    IdentificationError
        The data do not excite the payload's parameters (e.g. static poses that all point the payload the same
        way), or the solver failed.
    """
    from robodyn.dynamics.newton_euler import inverse_dynamics
    from robodyn.identification.factors import IdentificationError

    check_robot(robot)
    if tau is None:
        raise InputError("tau: give the measured joint torques (N, n)")
    q, qd, qdd, tau, static = _data(robot, q, qd, qdd, tau)
    j = frame_index(robot, frame)
    y = (tau - inverse_dynamics(robot, q, qd, qdd)).reshape(-1)
    A = _columns(robot, j, q, qd, qdd).reshape(-1, 10)
    active = np.arange(6, 10) if static else np.arange(10)
    A_act = A[:, active]
    scale = np.linalg.norm(A_act, axis=0)
    if np.any(scale <= 1e-12 * max(scale.max(initial=0.0), 1e-300)):
        raise IdentificationError(f"the data do not excite the payload of frame {j + 1}: its regressor columns "
                                  "are zero; move the joints that carry it")
    names = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M")
    theta, std_act = _scaled_least_squares(A_act, y, lambda sv: IdentificationError(
        f"the data do not identify every payload parameter ({', '.join(names[k] for k in active)}): "
        f"cond = {sv[0] / max(sv[-1], 1e-300):.3g}; use poses or motions that turn frame {j + 1} in several "
        f"directions relative to gravity"))
    N, n = q.shape
    std = np.zeros(10)
    std[active] = std_act
    solver = None
    if static:  # a point mass at the centre of mass, consistent
        m = max(float(theta[3]), 0.0)
        params = _point_mass(m, theta[:3] / m if m > 0 else np.zeros(3))
    else:
        params, solver = _consistent(A, y, theta, regularization)
    residual = (y - A @ params).reshape(N, n)
    mass = float(params[9])
    com = params[6:9] / mass if mass > 0 else np.zeros(3)
    J = np.array([[params[0], params[1], params[2]], [params[1], params[3], params[4]],
                  [params[2], params[4], params[5]]])
    inertia = J - mass * (np.dot(com, com) * np.eye(3) - np.outer(com, com))
    new = np.array(robot.params, dtype=float)
    new[j] += params
    loaded = robot.replace(params=new, name=f"{robot.name}_with_payload")
    return Payload(frame=j + 1, params=params, std=std, mass=mass, com=com, inertia=inertia, static=static,
                   residual_rms=np.sqrt(np.mean(residual ** 2, axis=0)), robot=loaded, solver=solver)


def _loaded_runs(robot: Robot, runs, loaded):
    """q, qd, qdd, u (N, n) of ``runs`` stacked (:func:`robodyn.identification.samples.stacked_runs`), their
    filtered Coulomb columns (or None), and the rows (N,) bool of the runs that ``loaded`` (one bool a run) marks."""
    from robodyn.identification.samples import run_lengths, stacked_runs

    flags = np.asarray(loaded) if loaded is not None else np.zeros(0)
    count = len(runs) if isinstance(runs, (list, tuple)) else -1
    if flags.dtype.kind != "b" or flags.shape != (count,):
        raise InputError("with runs as q (a list of IdentificationData or (q, qd, qdd, u) tuples), give loaded as "
                         f"one bool a run ({max(count, 0)}), True for the runs with the payload on")
    q, qd, qdd, u, coulomb, _ = stacked_runs(robot, runs)
    return q, qd, qdd, u, coulomb, np.repeat(flags, run_lengths(runs))


def _point_mass(m: float, c: np.ndarray) -> np.ndarray:
    """The 10 standard parameters (about O_j, in R_j) of a point mass ``m`` (kg) at ``c`` (3,) (m): the inertia
    J = m (|c|² 1 − c cᵀ), the first moments m c, the mass m."""
    J = m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
    return np.array([J[0, 0], J[0, 1], J[0, 2], J[1, 1], J[1, 2], J[2, 2], *(m * c), m])


def _scaled_least_squares(A: np.ndarray, y: np.ndarray, failure):
    """x minimising ‖A x − y‖, solved on unit-norm columns, and the standard deviations of x (residual variance
    over A.shape[0] − A.shape[1] degrees of freedom); raises ``failure(sv)`` (sv the singular values of the scaled
    A, descending) when its condition number passes 1e8, before anything is squared (huge data cannot overflow)."""
    norms = np.linalg.norm(A, axis=0)
    scale = np.where(norms > 0, norms, 1.0)
    U, sv, Vt = np.linalg.svd(A / scale, full_matrices=False)
    if sv[-1] <= 1e-8 * sv[0]:
        raise failure(sv)
    x = Vt.T @ ((U.T @ y) / sv) / scale
    r = y - A @ x
    s2 = float(r @ r) / max(A.shape[0] - A.shape[1], 1)
    return x, np.sqrt(s2 * np.sum((Vt / sv[:, None]) ** 2, axis=0)) / scale


def _consistent(A: np.ndarray, y: np.ndarray, start: np.ndarray, regularization: float):
    """φ minimising ‖A φ − y‖ with the payload's pseudo-inertia ⪰ 0 (a semidefinite program, Clarabel)."""
    import cvxpy as cp

    from robodyn.identification.consistent import nearest_consistent
    from robodyn.identification.factors import IdentificationError
    from robodyn.identification.physical import solve_conic

    P = cp.Variable((4, 4), PSD=True)
    tr = P[0, 0] + P[1, 1] + P[2, 2]
    phi = cp.hstack([tr - P[0, 0], -P[0, 1], -P[0, 2], tr - P[1, 1], -P[1, 2], tr - P[2, 2],
                     P[0, 3], P[1, 3], P[2, 3], P[3, 3]])
    scale = max(float(np.linalg.norm(y)), 1e-300)
    terms = [(A @ phi - y) / scale]
    if regularization > 0:
        terms.append(np.sqrt(regularization) * phi / max(float(np.linalg.norm(start)), 1.0))
    problem = cp.Problem(cp.Minimize(cp.norm(cp.hstack(terms))))
    name, warned = solve_conic(problem, "payload identification", "check the data and the arm's model")
    if problem.status != "optimal" or phi.value is None:
        raise IdentificationError(f"the payload identification did not converge: {name} reports "
                                  f"'{problem.status}'; check the data and the arm's model")
    params = nearest_consistent(np.asarray(phi.value, dtype=float)[None])[0]
    return params, {"name": name, "status": problem.status, "warnings": warned}


@dataclass(frozen=True, eq=False)
class DriveGains:
    """Result of :func:`identify_drive_gains`.

    Attributes
    ----------
    gains : ndarray (n,) — k_j with Γ_j = k_j u_j (N m per unit of the command u).
    std : ndarray (n,) — their standard deviations.
    names, values : the arm's base parameters (and friction) identified together with the gains.
    residual_rms : ndarray (n,) — RMS torque residual per joint (N m | N).
    payload : ndarray (10,) — the payload's XX, XY, XZ, YY, YZ, ZZ (kg m², about O_frame), MX, MY, MZ (kg m), M
        (kg) in R_frame: estimated with the gains but for its known mass, or the point mass given (``payload_com``);
        empty with ``torque``.
    payload_std : ndarray (10,) — their standard deviations (0 for what was given).
    """

    gains: np.ndarray
    std: np.ndarray
    names: tuple
    values: np.ndarray
    residual_rms: np.ndarray
    payload: np.ndarray
    payload_std: np.ndarray


def identify_drive_gains(robot: Robot, q, qd=None, qdd=None, u=None, loaded=None, payload_mass: float | None = None,
                         frame=None, payload_com=None, friction: bool = True, torque=None) -> DriveGains:
    """Drive gains k (Γ = k ⊙ u) and the arm's base parameters from commands u, with a payload of known mass.

    Khalil, Gautier & Lemoine (2007): with the payload φ_L attached during the samples where ``loaded`` is True,
    D_B K_B − diag(u) k = −D_frame φ_L holds for every sample (without a known payload, k and K_B are known only
    up to a scale per joint).  Only the payload's mass M_L need be known: its inertia and first moments φ_9 enter
    as 9 more unknowns, D_B K_B − diag(u) k + D_frame,9 φ_9 = −D_frame,M M_L, linear in (K_B, k, φ_9) and
    identifiable from motions with and without it; a known centre of mass (``payload_com``) makes φ_L a point
    mass instead.  Solved by least squares.  With ``torque`` (N, n), the measured torques of joint-torque
    sensors, each gain is instead the least-squares ratio k_j = Σ τ_j u_j / Σ u_j² (no payload needed:
    pass ``loaded=None``, ``payload_mass=0``).

    Parameters
    ----------
    robot : Robot — the geometry (its parameters are not used, except as the model of the base parameters).
    q, qd, qdd, u : array (N, n) — joint states and drive commands (e.g. currents, A).  Several runs: ``q`` a list
        of :class:`IdentificationData` (each prepared on its own, with the commands as its ``tau``; their filtered
        Coulomb columns are used, as by :func:`robodyn.identify`) or of (q, qd, qdd, u) tuples, qd, qdd, u not given.
    loaded : bool array (N,) — samples measured with the payload on (some True, some False); with runs, one bool a
        run.
    payload_mass : float — kg, > 0.
    frame : int or str, optional — the frame carrying the payload (default the last).
    payload_com : array (3,) or None — the payload's centre of mass in R_frame (m), for a payload taken as a point
        mass there; None (default): its inertia and first moments are estimated with the gains.
    friction : bool — also identify Fc, Fv, Foff per joint (in units of torque).
    torque : array (N, n), optional — joint-torque sensor readings.

    Returns
    -------
    DriveGains
    """
    from robodyn.identification.factors import IdentificationError
    from robodyn.identification.samples import filtered_coulomb
    from robodyn.parameters.base import base_parameters

    check_robot(robot)
    n = robot.n
    if qd is None and qdd is None and u is None and torque is None:
        q, qd, qdd, u, coulomb, mask = _loaded_runs(robot, q, loaded)
    else:
        q, u = _positions(robot, q, u, "u")
        coulomb = mask = None
    if torque is not None:
        tq, uu = check_samples(torque, u, ("torque", "u"))
        den = np.sum(uu ** 2, axis=0)
        if np.any(den == 0):
            raise IdentificationError("u is zero for joint(s) "
                                      + ", ".join(str(k + 1) for k in np.flatnonzero(den == 0)))
        k = np.sum(tq * uu, axis=0) / den
        res = tq - k * uu
        std = np.sqrt(np.sum(res ** 2, axis=0) / max(len(uu) - 1, 1) / den)
        return DriveGains(gains=k, std=std, names=(), values=np.zeros(0),
                          residual_rms=np.sqrt(np.mean(res ** 2, axis=0)), payload=np.zeros(0),
                          payload_std=np.zeros(0))
    if mask is None:
        qd, qdd = _motion(q, qd, qdd)
        mask = np.asarray(loaded) if loaded is not None else np.zeros(0)
        if mask.dtype.kind != "b" or mask.shape != (q.shape[0],):
            raise InputError(f"loaded must be a bool array ({q.shape[0]},): the samples with the payload on")
    if mask.all() or not mask.any():
        raise InputError("loaded: give samples with and without the payload")
    try:
        m = float(payload_mass)
    except (TypeError, ValueError):
        m = float("nan")
    if not (np.isfinite(m) and m > 0):
        raise InputError(f"payload_mass = {payload_mass!r}; give the known mass in kg (> 0)")
    point = payload_com is not None   # a point mass at a known centre of mass, else φ_9 unknown
    if point:
        c = as_real_array("payload_com", payload_com).astype(float)
        if c.shape != (3,) or not np.all(np.isfinite(c)):
            raise InputError("payload_com: give 3 finite coordinates (m) in the frame carrying the payload, or "
                             "None to estimate its centre of mass and inertia")
    j = frame_index(robot, frame)
    bp = base_parameters(robot, friction=friction)
    if not bp.minimal:
        bp = base_parameters(robot, method="numeric", friction=friction)
    W = bp.regressor(q, qd, qdd) if coulomb is None else filtered_coulomb(bp, coulomb)(q, qd, qdd, slice(None))
    U = np.zeros(q.shape + (n,))
    U[:, np.arange(n), np.arange(n)] = -u                               # −diag(u)
    D = _columns(robot, j, q, qd, qdd) * mask[:, None, None]            # the payload's columns, loaded samples
    known = _point_mass(m, c) if point else np.eye(10)[9] * m
    A = np.concatenate([W, U] if point else [W, U, D[..., :9]], -1).reshape(q.shape[0] * n, -1)
    y = -(D @ known).reshape(-1)
    whose, fix = ("", "") if point else (" and the payload's", ", or give its centre of mass (payload_com)")
    x, std = _scaled_least_squares(A, y, lambda sv: IdentificationError(
        f"the data do not identify the drive gains with the arm's parameters{whose} "
        f"(cond = {sv[0] / max(sv[-1], 1e-300):.3g}); excite every joint, with and without the payload{fix}"))
    r = y - A @ x
    b = bp.count
    payload, payload_std = known.copy(), np.zeros(10)
    if not point:
        payload[:9], payload_std[:9] = x[b + n:], std[b + n:]
    return DriveGains(gains=x[b:b + n], std=std[b:b + n], names=tuple(bp.names), values=x[:b],
                      residual_rms=np.sqrt(np.mean(r.reshape(q.shape) ** 2, axis=0)), payload=payload,
                      payload_std=payload_std)
