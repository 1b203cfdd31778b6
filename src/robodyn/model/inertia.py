"""Standard inertial parameters of a link and their physical consistency.

The standard parameters of link j, expressed in frame R_j about its origin O_j, are (Khalil & Dombre §9.3.2)

    XX XY XZ YY YZ ZZ MX MY MZ M

with ``J_j = [[XX, XY, XZ], [XY, YY, YZ], [XZ, YZ, ZZ]]`` the inertia tensor about O_j (kg m^2),
``MS_j = [MX, MY, MZ] = M_j S_j`` the first moments (kg m) and ``M_j`` the mass (kg).
They relate to the inertia about the centre of mass G_j by [9.12]:  J_j = I_Gj - M_j Ŝ_j Ŝ_j.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from robodyn.errors import InputError, NonPhysicalInertiaError

#: Largest magnitude accepted for a standard inertial parameter (SI units) and a centre-of-mass distance (m):
#: beyond these a model is a typo, and its products overflow in the dynamics.
MAX_ABS_PARAMETER = 1e12
MAX_COM_DISTANCE = 1e6


def skew(v: np.ndarray) -> np.ndarray:
    """Skew-symmetric matrix ``v̂`` with ``v̂ w = v × w``; ``v`` of shape (..., 3) → (..., 3, 3)."""
    v = np.asarray(v)
    x, y, z, o = v[..., 0], v[..., 1], v[..., 2], np.zeros_like(v[..., 0])
    return matrix_from_rows((o, -z, y), (z, o, -x), (-y, x, o))


def moved_inertia(J: np.ndarray, MS: np.ndarray, M, R: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A body's J (..., 3, 3) about O_j and MS (..., 3) in R_j, of mass M (...,), expressed in R_k about O_k, where
    R = ^kA_j (..., 3, 3) and p = ^kP_j (..., 3) (m): [9.12] with the first moment, s = R MS,

        J_k = R J Rᵀ − p̂ŝ − ŝp̂ − M p̂p̂,    MS_k = s + M p;

    the mass is unchanged.  Leading axes broadcast (a batch of poses of constant links, or one pose)."""
    s = np.einsum("...ab,...b->...a", R, MS)
    M = np.asarray(M)
    phat, shat = skew(p), skew(s)
    return R @ J @ np.swapaxes(R, -1, -2) - phat @ shat - shat @ phat - M[..., None, None] * (phat @ phat), \
        s + M[..., None] * p


def tensor_from_six(six: np.ndarray) -> np.ndarray:
    """``[XX, XY, XZ, YY, YZ, ZZ]`` (..., 6) → symmetric tensor (..., 3, 3)."""
    six = np.asarray(six)
    xx, xy, xz, yy, yz, zz = (six[..., i] for i in range(6))
    return matrix_from_rows((xx, xy, xz), (xy, yy, yz), (xz, yz, zz))


def matrix_from_rows(*rows) -> np.ndarray:
    """The (..., 3, 3) matrix of three rows of three (...,) entries."""
    return np.stack([np.stack(row, -1) for row in rows], -2)


def six_from_tensor(J: np.ndarray) -> np.ndarray:
    """Symmetric tensor (..., 3, 3) → ``[XX, XY, XZ, YY, YZ, ZZ]`` (..., 6)."""
    J = np.asarray(J)
    return np.stack([J[..., 0, 0], J[..., 0, 1], J[..., 0, 2], J[..., 1, 1], J[..., 1, 2], J[..., 2, 2]], -1)


def standard_from_com(mass: float, com, inertia_com) -> np.ndarray:
    """Standard parameters from mass, centre of mass and inertia about the centre of mass, [9.12].

    Parameters
    ----------
    mass : float
        M_j in kg.
    com : array_like, shape (3,)
        S_j, position of G_j in frame R_j (m).
    inertia_com : array_like, shape (3, 3) or (6,)
        I_Gj about G_j, axes of R_j (kg m^2); a 6-vector is read as XX XY XZ YY YZ ZZ.

    Returns
    -------
    ndarray, shape (10,)
        XX XY XZ YY YZ ZZ MX MY MZ M, with J_j = I_Gj - M_j Ŝ_j Ŝ_j and MS_j = M_j S_j.
    """
    m = _real("mass", mass, ((),), "a number (kg)")
    S = _real("com", com, ((3,),), "[x, y, z] in metres")
    IG = _real("inertia_com", inertia_com, ((3, 3), (6,)), "a 3x3 matrix or [XX, XY, XZ, YY, YZ, ZZ] (kg m^2)")
    IG = tensor_from_six(IG) if IG.shape == (6,) else IG
    mass = float(m)
    Shat = skew(S)
    J = IG - mass * Shat @ Shat
    return np.concatenate([six_from_tensor(J), mass * S, [mass]])


def _real(name, value, shapes, hint) -> np.ndarray:
    """``value`` as a finite float array of one of ``shapes``, or :class:`InputError` naming ``name``."""
    try:
        a = np.asarray(value)
    except (TypeError, ValueError):
        a = np.asarray(None)
    if a.dtype.kind not in "iuf" or a.shape not in shapes or not np.all(np.isfinite(a)):
        raise InputError(f"argument '{name}' = {value!r} is not valid; give {hint}, finite real numbers")
    return a.astype(float)


class MassProperties(NamedTuple):
    """Result of :func:`com_from_standard`: mass M (kg), centre of mass S (3,) and inertia I_G (3, 3) about it,
    in R_j (m, kg m²)."""

    M: float
    S: np.ndarray
    IG: np.ndarray


def com_from_standard(params) -> MassProperties:
    """Inverse of :func:`standard_from_com`: (M, S, I_G) from XX..M (10,), as :class:`MassProperties`.

    A massless link (M = 0) has no centre of mass: S is returned as zeros and I_G = J.
    """
    p = _real("params", params, ((10,),), "the 10 standard parameters XX XY XZ YY YZ ZZ MX MY MZ M")
    M = float(p[9])
    MS = p[6:9]
    J = tensor_from_six(p[:6])
    if M == 0.0:
        return MassProperties(0.0, np.zeros(3), J)
    S = MS / M
    Shat = skew(S)
    return MassProperties(M, S, J + M * Shat @ Shat)


def check_physical(params, where: str = "link", rtol: float = 1e-9, strict: bool = True) -> None:
    """Raise :class:`NonPhysicalInertiaError` unless ``params`` (10,) can belong to a rigid body.

    Conditions: M ≥ 0; a massless body has zero first moments; the inertia about the centre of mass,
    I_G = J + MŜŜ (from [9.12]), is positive semi-definite and its principal moments satisfy the
    triangle inequality I1 + I2 ≥ I3 (for M > 0). ``rtol`` scales the tolerance by the largest principal moment.
    A massless body may keep a rotational inertia (e.g. PUMA 560 link 1 as published: m = 0, ZZ = 0.35).
    ``strict=False`` turns a triangle-inequality violation into a :class:`UserWarning` (published models
    such as Corke's PUMA 560 link 3 have one).
    """
    p = np.asarray(params, dtype=float)
    names = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M")
    bad = [names[i] for i in range(10) if not np.isfinite(p[i])]
    if bad:
        raise NonPhysicalInertiaError(f"{where}: field {bad[0]} is not finite; give a number")
    M = p[9]
    if M < 0:
        raise NonPhysicalInertiaError(f"{where}: field M = {M} is negative; a mass must be >= 0 kg")
    if M == 0 and np.any(p[6:9] != 0):
        raise NonPhysicalInertiaError(f"{where}: fields MX, MY, MZ = {p[6:9].tolist()} are nonzero while M = 0; "
                                      "a first moment needs a mass (MS = M * centre of mass)")
    if np.any(np.abs(p) > MAX_ABS_PARAMETER):
        i = int(np.argmax(np.abs(p) > MAX_ABS_PARAMETER))
        raise NonPhysicalInertiaError(f"{where}: field {names[i]} = {p[i]:g} exceeds {MAX_ABS_PARAMETER:g} in "
                                      "magnitude; give SI units (kg, kg m, kg m^2)")
    if M > 0:
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            dist = float(np.linalg.norm(p[6:9] / M))
        if not dist <= MAX_COM_DISTANCE:
            raise NonPhysicalInertiaError(f"{where}: fields MX, MY, MZ = {p[6:9].tolist()} with M = {M:g} put the "
                                          f"centre of mass {dist:g} m from O_j (limit {MAX_COM_DISTANCE:g} m); MX..MZ "
                                          "are mass times position, check them and M")
    _, _, IG = com_from_standard(p)
    try:
        lam = np.linalg.eigvalsh(IG)
    except np.linalg.LinAlgError:
        raise NonPhysicalInertiaError(f"{where}: the inertia about the centre of mass cannot be evaluated; check XX..M") from None
    tol = rtol * max(1.0, float(np.max(np.abs(lam)))) if np.any(lam) else 0.0
    if lam[0] < -tol:
        raise NonPhysicalInertiaError(f"{where}: inertia about the centre of mass (from XX..ZZ, MX..MZ, M) is not "
                                      f"positive semi-definite (principal moments {lam.tolist()}); check signs of XY, "
                                      "XZ, YZ and that XX..ZZ are about O_j, not about the centre of mass")
    # A massless body (M = 0) is an idealisation (a lumped rotating inertia, as PUMA 560 link 1): only
    # positive semi-definiteness applies to it, the triangle inequality needs a mass distribution.
    if M > 0 and lam[0] + lam[1] < lam[2] - tol:
        message = (f"{where}: principal moments {lam.tolist()} of the inertia about the centre of mass violate "
                   "the triangle inequality I1 + I2 >= I3; no rigid body has this inertia")
        if not strict:
            warnings.warn(message + " (loaded with strict=False)", UserWarning, stacklevel=2)
            return
        raise NonPhysicalInertiaError(message + "; load with strict=False (command line: robodyn --no-strict ...) to "
                                      "accept a published model as it is")
