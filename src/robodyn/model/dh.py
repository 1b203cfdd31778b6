"""Converters between Craig's modified DH, standard DH and the Khalil–Kleinfinger table of :class:`Robot`.

Craig's modified DH (Craig, *Introduction to Robotics*) places frame i relative to frame i−1 by

    ^{i-1}T_i = Rx(α_{i-1}) Tx(a_{i-1}) Rz(θ_i) Tz(d_i),

which is Khalil–Kleinfinger's ^{j-1}T_j = Rx(α_j) Tx(d_j) Rz(θ_j) Tz(r_j) (Khalil & Dombre §3, used in §9.5)
with α_j = α_{j-1}^Craig, d_j = a_{j-1}^Craig, θ_j = θ_j, r_j = d_j^Craig: the same frames, renamed.

Standard (distal) DH places link frame i at the distal end of link i:

    ^{i-1}T_i^{SDH} = Rz(θ_i) Tz(d_i) Tx(a_i) Rx(α_i),

with joint i moving about z of SDH frame i−1.  The modified frame of link i (z on joint i) is therefore
MDH_i = SDH_{i-1} · Rz(θ_i) Tz(d_i), and SDH_i = MDH_i · Tx(a_i) Rx(α_i).  Hence

    ^{i-1}T_i^{MDH} = Tx(a_{i-1}) Rx(α_{i-1}) Rz(θ_i) Tz(d_i) = Rx(α_{i-1}) Tx(a_{i-1}) Rz(θ_i) Tz(d_i)

(Tx and Rx commute), i.e. Khalil α_j = α_{j-1}^{SDH}, d_j = a_{j-1}^{SDH} (α_0 = a_0 = 0), θ_j, r_j as in SDH.
The last Tx(a_n) Rx(α_n) becomes a fixed frame (σ = 2) when it is not the identity, so that the last frame
of the converted robot is the SDH end frame n.  Inertial data given in SDH frame i are re-expressed in MDH
frame i with E_i = Tx(a_i) Rx(α_i):  com' = E_i · com,  I' = Rx(α_i) I Rx(α_i)ᵀ, then turned into standard
parameters with [9.12].
"""

from __future__ import annotations

import numpy as np

from robodyn.arrays import as_real_array
from robodyn.model.robot import check_robot
from robodyn.errors import ModelError
from robodyn.model.inertia import com_from_standard, standard_from_com, tensor_from_six
from robodyn.model.robot import Robot
from robodyn.spatial import rot_x

#: Robot fields with one entry per joint variable (σ ≠ 2).
_JOINT_FIELDS = ("Ia", "Fc", "Fv", "Foff", "Fst", "kst", "Bst")
_PASS_FIELDS = ("name", "source", "gravity", "qlim", "qdlim", "taulim", "strict")


def from_craig_mdh(alpha, a, theta, d, sigma=None, *, masses=None, coms=None, inertias_com=None, **robot_fields) -> Robot:
    """A serial :class:`Robot` from Craig's modified DH table (one row per frame i = 1..nf).

    Parameters
    ----------
    alpha, a : array_like (nf,)
        α_{i-1} (rad) and a_{i-1} (m) of row i: Khalil's α_j and d_j.
    theta, d : array_like (nf,)
        θ_i (rad) and d_i (m): Khalil's θ_j and r_j (offsets the joint variable adds to).
    sigma : array_like (nf,), optional
        0 revolute (default), 1 prismatic, 2 fixed frame (e.g. a flange).
    masses, coms, inertias_com : array_like (nf,), (nf, 3), (nf, 3, 3) or (nf, 6), optional
        Mass (kg), centre of mass (m) and inertia about the centre of mass (kg m², XX XY XZ YY YZ ZZ
        for the 6-form) of link i in frame i.  Alternatively pass ``params`` (nf, 10) directly.
    **robot_fields
        Any other :class:`Robot` field (name, params, Ia, Fc, Fv, qlim, gravity, frame_names, source...),
        per frame as in :class:`Robot`.

    Returns
    -------
    Robot
    """
    alpha, a, theta, d = _table("alpha", alpha, "a", a, "theta", theta, "d", d)
    nf = alpha.size
    sigma = np.zeros(nf, int) if sigma is None else _sigma(sigma, nf, allowed=(0, 1, 2))
    clash = sorted(set(robot_fields) & {"antecedent", "gamma", "b", "r"})
    if clash:
        raise ModelError(f"from_craig_mdh: argument(s) {clash} not allowed; the geometry comes from the Craig columns "
                         "alpha, a, theta, d (serial chain, gamma = b = 0)")
    fields = dict(robot_fields)
    fields.setdefault("name", "robot")
    inertial = _inertial(masses, coms, inertias_com, nf)
    if inertial is not None:
        if "params" in fields:
            raise ModelError("from_craig_mdh: give either params or masses/coms/inertias_com, not both")
        fields["params"] = inertial
    return Robot(sigma=sigma, alpha=alpha, d=a, theta=theta, r=d, **fields)


def to_craig_mdh(robot: Robot) -> dict:
    """Craig's modified DH table of a serial robot: the inverse of :func:`from_craig_mdh`.

    Returns
    -------
    dict
        ``alpha, a, theta, d, sigma`` (nf,) and every other :class:`Robot` field (name, params, Ia, ...),
        so that ``from_craig_mdh(**to_craig_mdh(robot))`` rebuilds ``robot``.

    Raises
    ------
    ModelError
        A tree, or a frame with γ ≠ 0 or b ≠ 0 (not expressible in Craig's table).
    """
    _require_serial(robot, "Craig's modified DH")
    out = {"alpha": robot.alpha.copy(), "a": robot.d.copy(), "theta": robot.theta.copy(), "d": robot.r.copy(),
           "sigma": robot.sigma.copy(), "params": robot.params.copy(), "frame_names": robot.frame_names}
    out.update({k: np.array(getattr(robot, k)) for k in _JOINT_FIELDS + ("qlim", "qdlim", "taulim", "gravity")})
    out.update({"name": robot.name, "source": robot.source})
    return out


def from_standard_dh(
    a,
    alpha,
    d,
    theta,
    sigma=None,
    *,
    masses=None,
    coms=None,
    inertias_com=None,
    tool_frame: bool = True,
    tool_name: str = "tool",
    joint_names=None,
    **robot_fields,
) -> Robot:
    """A serial :class:`Robot` from a standard (distal) DH table, one row per link/joint i = 1..n.

    Parameters
    ----------
    a, alpha, d, theta : array_like (n,)
        SDH parameters of ^{i-1}T_i = Rz(θ_i) Tz(d_i) Tx(a_i) Rx(α_i) (m, rad); θ_i (revolute) or
        d_i (prismatic) is the offset the joint variable adds to.
    sigma : array_like (n,), optional
        0 revolute (default) or 1 prismatic.
    masses, coms, inertias_com : array_like (n,), (n, 3), (n, 3, 3) or (n, 6), optional
        As in :func:`from_craig_mdh`, in SDH frame i; moved to the modified frame i (com' = E_i com,
        I' = R I Rᵀ) and stored as standard parameters [9.12].  Omitted: massless links.
    tool_frame : bool
        Append a fixed frame (σ = 2) carrying Tx(a_n) Rx(α_n) when that transform is not the identity,
        so that the robot's last frame is SDH frame n (the end-effector frame of the SDH model).
    tool_name : str
        Name of that fixed frame.
    joint_names : sequence of str (n,), optional
    **robot_fields
        Joint quantities Ia, Fc, Fv, Foff, Fst, kst, Bst with one entry per joint (n,); name, source,
        gravity, qlim (n, 2), qdlim, taulim (n,) as in :class:`Robot`.

    Returns
    -------
    Robot
        Frames 1..n on the joints (Khalil α_j = α_{j-1}, d_j = a_{j-1}, θ_j = θ_j, r_j = d_j), plus the tool
        frame when added.
    """
    a, alpha, d, theta = _table("a", a, "alpha", alpha, "d", d, "theta", theta)
    n = a.size
    sigma = np.zeros(n, int) if sigma is None else _sigma(sigma, n, allowed=(0, 1))
    unknown = set(robot_fields) - set(_JOINT_FIELDS) - set(_PASS_FIELDS)
    if unknown:
        raise ModelError(f"from_standard_dh: unknown argument(s) {sorted(unknown)}; allowed robot fields are "
                         f"{', '.join(_JOINT_FIELDS + _PASS_FIELDS)} (inertial data go in masses/coms/inertias_com)")
    extra = bool(tool_frame) and (a[-1] != 0.0 or alpha[-1] != 0.0)
    nf = n + int(extra)
    # Khalil row j takes the SDH twist and length of link j-1; the base (j = 1) has none.
    k_alpha = np.concatenate([[0.0], alpha])[:nf]
    k_d = np.concatenate([[0.0], a])[:nf]
    k_theta = np.concatenate([theta, [0.0]])[:nf]
    k_r = np.concatenate([d, [0.0]])[:nf]
    k_sigma = np.concatenate([sigma, [2]])[:nf]
    params = np.zeros((nf, 10))
    inertial = _inertial(masses, coms, inertias_com, n)
    if inertial is not None:
        for i in range(n):
            params[i] = _sdh_to_mdh_params(inertial[i], a[i], alpha[i])
    fields = {k: v for k, v in robot_fields.items() if k in _PASS_FIELDS}
    fields.setdefault("name", "robot")
    for key in _JOINT_FIELDS:
        if key in robot_fields:
            fields[key] = _pad(key, robot_fields[key], n, nf)
    if joint_names is not None:
        names = tuple(str(s) for s in joint_names)
        if len(names) != n:
            raise ModelError(f"from_standard_dh: joint_names needs {n} names (one per SDH row), got {len(names)}")
        fields["frame_names"] = names + ((tool_name,) if extra else ())
    elif extra:
        fields["frame_names"] = tuple(f"j{i}" for i in range(1, n + 1)) + (tool_name,)
    return Robot(sigma=k_sigma, alpha=k_alpha, d=k_d, theta=k_theta, r=k_r, params=params, **fields)


def to_standard_dh(robot: Robot) -> dict:
    """The standard DH table of a serial robot: the inverse of :func:`from_standard_dh`.

    The robot must have frames 1..n on its joints with α_1 = d_1 = 0 (SDH has no base twist or length),
    optionally followed by one fixed frame with θ = r = 0 (the SDH end frame Tx(a_n) Rx(α_n)).

    Returns
    -------
    dict
        ``a, alpha, d, theta, sigma`` (n,), ``masses`` (n,), ``coms`` (n, 3) and ``inertias_com`` (n, 3, 3)
        in SDH frames (a massless link keeps its inertia, about the origin of the SDH frame's parallel axes,
        with com = 0), joint quantities Ia... (n,), ``qlim``, ``qdlim``, ``taulim``, ``gravity``, ``joint_names`` (n,),
        ``name``, ``source`` and ``tool_name``, so that ``from_standard_dh(**to_standard_dh(robot))`` rebuilds ``robot``.

    Raises
    ------
    ModelError
        The geometry has no standard-DH equivalent; the message names the frame and the field.
    """
    _require_serial(robot, "standard DH")
    n, nf = robot.n, robot.nf
    fixed = np.flatnonzero(robot.sigma == 2)
    if fixed.size > 1 or (fixed.size == 1 and fixed[0] != nf - 1):
        raise ModelError(f"robot '{robot.name}': standard DH allows only one fixed frame, the last; frames "
                         f"{(fixed + 1).tolist()} are fixed (sigma = 2)")
    if robot.alpha[0] != 0 or robot.d[0] != 0:
        raise ModelError(f"robot '{robot.name}', frame 1: alpha = {robot.alpha[0]}, d = {robot.d[0]}; standard DH "
                         "needs alpha_1 = d_1 = 0 (the base frame's z on joint 1); move that offset into a base frame")
    if fixed.size == 1 and (robot.theta[-1] != 0 or robot.r[-1] != 0):
        raise ModelError(f"robot '{robot.name}', frame {nf} (fixed): theta = {robot.theta[-1]}, r = {robot.r[-1]}; the "
                         "SDH end frame is Tx(a_n) Rx(alpha_n) only, so theta and r of the last fixed frame must be 0")
    if fixed.size == 1 and np.any(robot.params[-1] != 0):
        raise ModelError(f"robot '{robot.name}', frame {nf} (fixed): carries inertial parameters; standard DH has no "
                         "body there, merge them into link n first")
    a = np.append(robot.d[1:n], robot.d[n] if nf > n else 0.0)
    alpha = np.append(robot.alpha[1:n], robot.alpha[n] if nf > n else 0.0)
    masses, coms, inertias = np.zeros(n), np.zeros((n, 3)), np.zeros((n, 3, 3))
    for i in range(n):
        masses[i], coms[i], inertias[i] = _mdh_to_sdh_com(robot.params[i], a[i], alpha[i])
    out = {
        "a": a, "alpha": alpha, "d": robot.r[:n].copy(), "theta": robot.theta[:n].copy(),
        "sigma": robot.sigma[:n].copy(), "masses": masses, "coms": coms, "inertias_com": inertias,
        "joint_names": robot.frame_names[:n], "tool_name": robot.frame_names[-1] if nf > n else "tool",
        "name": robot.name, "source": robot.source, "gravity": np.array(robot.gravity), "qlim": np.array(robot.qlim),
        "qdlim": np.array(robot.qdlim), "taulim": np.array(robot.taulim),
    }
    out.update({k: np.array(getattr(robot, k)[:n]) for k in _JOINT_FIELDS})
    return out


def _sdh_to_mdh_params(p_sdh: np.ndarray, a: float, alpha: float) -> np.ndarray:
    """Standard parameters of a link given in SDH frame i → MDH frame i (E = Tx(a) Rx(α))."""
    M, S, IG = com_from_standard(p_sdh)
    R = _rot_x_exact(alpha)
    if M == 0.0:
        # No mass: the inertia is the same about every point; only its axes turn.
        return np.concatenate([_six(R @ IG @ R.T), np.zeros(4)])
    return standard_from_com(M, R @ S + np.array([a, 0.0, 0.0]), R @ IG @ R.T)


def _mdh_to_sdh_com(p_mdh: np.ndarray, a: float, alpha: float):
    """(mass, com, inertia about com) of a link in SDH frame i from its MDH standard parameters."""
    M, S, IG = com_from_standard(p_mdh)
    R = _rot_x_exact(alpha)
    if M == 0.0:
        return 0.0, np.zeros(3), R.T @ IG @ R
    return M, R.T @ (S - np.array([a, 0.0, 0.0])), R.T @ IG @ R


def _rot_x_exact(alpha: float) -> np.ndarray:
    """Rot(x, α) with the cos/sin rounding residue of multiples of π/2 (6e-17) set to exact zeros, so that
    converted model files do not carry 1e-16 products of inertia."""
    R = rot_x(alpha)
    return np.where(np.abs(R) < 1e-15, 0.0, R)


def _inertial(masses, coms, inertias_com, n):
    """Standard parameters (n, 10) from per-link mass/com/inertia-about-com, or None when none given."""
    given = [x is not None for x in (masses, coms, inertias_com)]
    if not any(given):
        return None
    if not all(given):
        raise ModelError("masses, coms and inertias_com go together: give all three (kg, m, kg m^2 about the com)")
    m = np.asarray(masses, dtype=float)
    c = np.asarray(coms, dtype=float)
    I = np.asarray(inertias_com, dtype=float)
    if m.shape != (n,):
        raise ModelError(f"masses has shape {m.shape}; expected ({n},), one per link")
    if c.shape != (n, 3):
        raise ModelError(f"coms has shape {c.shape}; expected ({n}, 3), one [x, y, z] per link")
    if I.shape == (n, 6):
        I = tensor_from_six(I)
    if I.shape != (n, 3, 3):
        raise ModelError(f"inertias_com has shape {I.shape}; expected ({n}, 3, 3) or ({n}, 6) = XX XY XZ YY YZ ZZ")
    if not np.allclose(I, np.swapaxes(I, -1, -2), rtol=0, atol=1e-12 * max(1.0, float(np.abs(I).max()))):
        raise ModelError("inertias_com: each inertia tensor must be symmetric")
    for name, arr in (("masses", m), ("coms", c), ("inertias_com", I)):
        if not np.all(np.isfinite(arr)):
            raise ModelError(f"{name} contains NaN or inf; give finite numbers")
    out = np.zeros((n, 10))
    for i in range(n):
        if m[i] == 0 and np.any(c[i] != 0):
            raise ModelError(f"link {i + 1}: com = {c[i].tolist()} with mass 0; a massless link has no centre of mass, give [0, 0, 0]")
        out[i] = standard_from_com(m[i], c[i], I[i]) if m[i] != 0 else np.concatenate([_six(I[i]), np.zeros(4)])
    return out


def _six(J: np.ndarray) -> np.ndarray:
    return np.array([J[0, 0], J[0, 1], J[0, 2], J[1, 1], J[1, 2], J[2, 2]])


def _table(*pairs):
    names, values = pairs[0::2], [as_real_array(n, v).astype(float) for n, v in zip(pairs[0::2], pairs[1::2])]
    n = values[0].size
    for name, v in zip(names, values):
        if v.ndim != 1 or v.size != n or n == 0:
            raise ModelError(f"DH column {name} has shape {v.shape}; every column ({', '.join(names)}) must be 1-D "
                             f"with the same non-zero length ({n})")
        if not np.all(np.isfinite(v)):
            raise ModelError(f"DH column {name} contains NaN or inf; give finite numbers")
    return values


def _sigma(sigma, n, allowed):
    s = np.asarray(sigma)
    if s.shape != (n,) or not np.all(np.isin(s, allowed)):
        raise ModelError(f"sigma = {s.tolist()}; expected {n} entries from {list(allowed)} "
                         f"(0 revolute, 1 prismatic{', 2 fixed' if 2 in allowed else ''})")
    return s.astype(int)


def _pad(key, value, n, nf):
    v = np.asarray(value, dtype=float)
    if v.shape != (n,):
        raise ModelError(f"from_standard_dh: {key} has shape {v.shape}; expected ({n},), one per joint")
    return np.concatenate([v, np.zeros(nf - n)])


def _require_serial(robot: Robot, what: str) -> None:
    check_robot(robot)
    if not robot.is_serial:
        raise ModelError(f"robot '{robot.name}' is a tree (antecedent {robot.antecedent.tolist()}); {what} describes serial chains only")
    bad = np.flatnonzero((robot.gamma != 0) | (robot.b != 0))
    if bad.size:
        j = int(bad[0]) + 1
        raise ModelError(f"robot '{robot.name}', frame {j}: gamma = {robot.gamma[j - 1]}, b = {robot.b[j - 1]}; {what} "
                         "has no gamma/b parameters, they must be 0")
