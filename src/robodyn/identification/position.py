"""Position terms k_j sin q_j + c_j cos q_j of :func:`robodyn.identify` (``position_terms``): two free columns in
joint j's equation for a torque that depends on q_j only (a cable, a spring); "auto" selects the joints whose
term removes more than :data:`POSITION_SHARE` of their least-squares residual.
"""

from __future__ import annotations

import numpy as np

from robodyn.errors import InputError
from robodyn.identification.factors import (RANK_TOL, IdentificationError, check_rank, joint_residuals,
                                            solve_factor, stack_factors)
from robodyn.model.robot import Robot


#: ``position_terms="auto"``: joint j gets the term k_j sin q_j + c_j cos q_j when (sin q_j, cos q_j) explain more
#: than this share of its residual in the fit without terms (measured KUKA LWR4+ joint 7: 0.75; the other joints
#: of it and of a Franka Panda: 0.37 or less).
POSITION_SHARE = 0.5
#: "auto" leaves out a joint whose unit-norm (sin q_j, cos q_j) columns lie within this distance of the span of the
#: base columns (e.g. a joint whose own gravity torque is k sin q_j + c cos q_j): the data cannot separate them.
POSITION_SPAN = 1e-3
#: A prediction warns where q_j of a joint with a position term leaves the range of the identification data by more
#: than this fraction of its width (KUKA LWR4+ runs of Polydoros et al.: fitted on q_7 in [−1.67, 0.71] rad, a run
#: reaching 2.5 rad was predicted at 188 % on joint 7, 47 % without the term).
POSITION_MARGIN = 0.1


def selected_position_joints(robot: Robot, shares: np.ndarray) -> tuple:
    """``position_terms="auto"``: the revolute joints (0-based) whose share exceeds ``POSITION_SHARE``."""
    revolute = np.asarray(robot.sigma)[robot.joint_frames] == 0
    return tuple(int(j) for j in np.flatnonzero((shares > POSITION_SHARE) & revolute))


def check_position_terms(value, robot: Robot):
    """``position_terms`` checked: "auto", or a sorted tuple of distinct revolute joints (0-based)."""
    if isinstance(value, str) and value == "auto":
        return "auto"
    if value is None:
        return ()
    n = robot.n
    hint = f"give 'auto', None, or a tuple of revolute joint indices 0 to {n - 1}"
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list, np.ndarray)):
        raise InputError(f"position_terms = {value!r}; {hint}")
    joints = []
    for j in value:
        if isinstance(j, (bool, np.bool_)) or not isinstance(j, (int, np.integer)) or not 0 <= j < n:
            raise InputError(f"position_terms = {value!r}: {j!r} is not a joint index; {hint}")
        if robot.sigma[robot.joint_frames[j]] != 0:
            raise InputError(f"position_terms: joint {int(j)} is prismatic; sin q, cos q apply to revolute joints")
        joints.append(int(j))
    if len(set(joints)) != len(joints):
        raise InputError(f"position_terms = {value!r} repeats a joint; {hint}")
    return tuple(sorted(joints))


def position_names(joints) -> tuple:
    """Names of the position-term columns: ``sin_q<j>``, ``cos_q<j>`` (1-based) of every joint given."""
    return tuple(f"{f}_q{j + 1}" for j in joints for f in ("sin", "cos"))


def position_shares(R: np.ndarray, F: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Per joint j, 1 − ‖ρ'_j‖² / ‖ρ_j‖²: the share of its least-squares residual ρ_j (of the factors ``R``
    (n, b + 1, b + 1) of [W_j y_j], without terms) that the position term removes when it is fitted together with
    the base parameters (ρ'_j); ``F`` (n, 2, 2) and ``C`` (n, 2, b + 1) are E_jᵀ E_j and E_jᵀ [W_j y_j], E_j =
    [sin q_j, cos q_j] of joint j's rows used.  0 where the term lies (nearly) in the span of the base columns;
    0 everywhere when the data do not excite every base parameter (the fit without terms then names them)."""
    b = R.shape[-1] - 1
    Rg = stack_factors(R)
    try:
        check_rank(Rg, ("",) * b, RANK_TOL)
    except IdentificationError:
        return np.zeros(R.shape[0])
    theta = solve_factor(Rg, b)[0]
    rr = joint_residuals(R, theta) ** 2
    G = np.swapaxes(R, -1, -2) @ R  # the Gram matrices of [W_j y_j]
    total = G.sum(axis=0)
    out = np.zeros(len(rr))
    # a residual at the resolution of the factors (exact data) has nothing to remove
    for j in np.flatnonzero(rr > RANK_TOL ** 2 * G[:, b, b]):
        def bordered(Gw, j=j):  # the Gram matrix of [E_j W y], E_j in joint j's rows only
            M = np.zeros((b + 3, b + 3))
            M[:2, :2], M[:2, 2:], M[2:, :2], M[2:, 2:] = F[j], C[j], C[j].T, Gw
            return M
        M = bordered(total)
        d = np.sqrt(np.diag(M)[:-1])
        d = np.where(d > 0, d, 1.0)
        # the normal equations, scaled: a term within the span of the base columns is cut and removes nothing
        A = M[:-1, :-1] / d / d[:, None]
        S = A[:2, :2] - A[:2, 2:] @ np.linalg.lstsq(A[2:, 2:], A[2:, :2], rcond=RANK_TOL ** 2)[0]
        if np.linalg.eigvalsh(S)[0] <= POSITION_SPAN ** 2:  # a term (nearly) in the span of the base columns
            continue
        x = np.linalg.lstsq(A, M[:-1, -1] / d, rcond=RANK_TOL ** 2)[0] / d
        v = np.append(x, -1.0)
        out[j] = 1.0 - max(float(v @ bordered(G[j]) @ v), 0.0) / rr[j]
    return np.clip(out, 0.0, 1.0)


def term_columns(cand, b: int, joints) -> list:
    """The columns of a reduction of [E_cand W y] that the fit with the position terms of ``joints`` uses."""
    k = 2 * len(cand)
    return [2 * cand.index(j) + i for j in joints for i in (0, 1)] + list(range(k, k + b + 1))


def auto_terms(robot: Robot, G: np.ndarray, R0: np.ndarray, b: int):
    """``position_terms="auto"``: (shares (n,), the joints selected) from the Gram matrices G (n, m, m) of
    [E W y] with the columns of every joint first, and the factors R0 of [W y] alone."""
    n = robot.n
    E = [slice(2 * j, 2 * j + 2) for j in range(n)]
    shares = position_shares(R0, np.stack([G[j, E[j], E[j]] for j in range(n)]),
                             np.stack([G[j, E[j], 2 * n:] for j in range(n)]))
    return shares, selected_position_joints(robot, shares)
