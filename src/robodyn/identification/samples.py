"""The samples of an identification in memory: checked, runs stacked (each prepared on its own: no filter spans
a seam), the rows of each joint's equation used, and the columns Gautier's parallel filtering replaces.
"""

from __future__ import annotations

import re

import numpy as np

from robodyn.arrays import as_real_array, finite_result
from robodyn.errors import InputError
from robodyn.identification.reduction import row_blocks
from robodyn.model.robot import Robot
from robodyn.progress import progress


def checked_samples(robot: Robot, q, qd, qdd, tau):
    """The samples q, q̇, q̈, τ of one run as checked (N, n) float arrays; InputError naming a bad one."""
    from robodyn.identification.data import check_samples

    n = robot.n
    arrays = {}
    for name, x in (("q", q), ("qd", qd), ("qdd", qdd), ("tau", tau)):
        a = as_real_array(name, x).astype(float)
        if a.ndim == 1 and n == 1:
            a = a[:, None]
        if a.ndim != 2 or a.shape[1] != n:
            raise InputError(f"{name} has shape {np.shape(x)}; give an (N, {n}) array (N samples, n = {n} joints)")
        arrays[name] = a
    rows = {k: v.shape[0] for k, v in arrays.items()}
    if len(set(rows.values())) > 1:
        raise InputError("q, qd, qdd, tau must have the same number of rows (samples); got "
                         + ", ".join(f"{k}: {v}" for k, v in rows.items()))
    check_samples(arrays["q"], arrays["qd"], ("q", "qd"))
    check_samples(arrays["qdd"], arrays["tau"], ("qdd", "tau"))
    return arrays["q"], arrays["qd"], arrays["qdd"], arrays["tau"]


def stacked_runs(robot: Robot, q, qd=None, qdd=None, tau=None, transmission=None):
    """The samples (N, n) × 4 of one run given as arrays, or of several runs (a list of IdentificationData or of
    (q, qd, qdd, tau) tuples, each prepared on its own) stacked row-wise and checked like one run; the runs'
    filtered Coulomb columns (N, n) (None unless every run is prepared data), followed by the motors' of a
    ``transmission`` (:meth:`IdentificationData.motor_coulomb`) when every run kept its full-rate states, and
    the clipped torques (N, n) bool (:func:`robodyn.identification.data.saturated`, or marked by the preparation)."""
    from robodyn.identification.data import IdentificationData, saturated

    if qd is None and qdd is None and tau is None:
        runs = [q] if isinstance(q, IdentificationData) else q
        if not isinstance(runs, (list, tuple)) or not runs:
            raise InputError("give q, qd, qdd, tau (N, n), or a list of runs: IdentificationData or (q, qd, qdd, "
                             "tau) tuples")
        parts, coulomb, clipped = [], [], []
        for k, run in enumerate(runs):
            if isinstance(run, IdentificationData):
                motor = None if transmission is None else run.motor_coulomb(transmission.J_mq)
                coulomb.append(run.coulomb if motor is None else np.hstack([run.coulomb, motor]))
                sat = run.saturated
                run = (run.q, run.qd, run.qdd, run.tau)
            else:
                coulomb.append(None)
                sat = None
            if not isinstance(run, (list, tuple)) or len(run) != 4:
                raise InputError(f"run {k}: give an IdentificationData or a (q, qd, qdd, tau) tuple")
            parts.append(checked_samples(robot, *run))
            clipped.append(saturated(parts[-1][3]) | (False if sat is None else sat))
        stacked = tuple(np.concatenate([p[i] for p in parts]) for i in range(4))
        if any(c is None for c in coulomb):  # a run of arrays: sign(q̇) as it is
            return stacked + (None, np.concatenate(clipped))
        width = min(c.shape[1] for c in coulomb)  # the motors' columns only where every run has them
        return stacked + (np.concatenate([c[:, :width] for c in coulomb]), np.concatenate(clipped))
    if qd is None or qdd is None or tau is None:
        raise InputError("give q, qd, qdd and tau (N, n) together, or only a list of runs as q")
    arrays = checked_samples(robot, q, qd, qdd, tau)
    return arrays + (None, saturated(arrays[3]))


def consecutive_times(times):
    """The times (s) of runs one after the other: the first run's own ``times[0]`` (N_0,), each next run's shifted to
    start one median step after the end of the run before (a run of one sample: right at it); None where a run has
    none."""
    if not times or any(t is None for t in times):
        return None
    out = [np.asarray(times[0], dtype=float)]
    for t in times[1:]:
        t, before = np.asarray(t, dtype=float), out[-1]
        out.append(t - t[0] + before[-1] + (float(np.median(np.diff(before))) if before.size > 1 else 0.0))
    return np.concatenate(out)


def run_lengths(runs) -> list[int]:
    """The number of samples of each run of a list as :func:`stacked_runs` takes it (IdentificationData or
    (q, qd, qdd, tau) tuples), in the order it stacks them."""
    return [run.q.shape[0] if hasattr(run, "q") else np.shape(run[0])[0] for run in runs]


def run_times(q):
    """The times (s) of held-out runs given as :func:`stacked_runs` takes them, one after the other
    (:func:`consecutive_times`); None unless every run is prepared data (IdentificationData, with its t)."""
    from robodyn.identification.data import IdentificationData

    runs = [q] if isinstance(q, IdentificationData) else q if isinstance(q, (list, tuple)) else None
    if runs is None or not all(isinstance(run, IdentificationData) for run in runs):
        return None
    return consecutive_times([run.t for run in runs])


def still_joints(q) -> tuple:
    """The joints (0-based) that every prepared run ``q`` (IdentificationData or a list of them) holds still
    (``IdentificationData.still_joints``); () for arrays or tuples."""
    from robodyn.identification.data import IdentificationData

    runs = [q] if isinstance(q, IdentificationData) else q if isinstance(q, (list, tuple)) else []
    if not runs or not all(isinstance(run, IdentificationData) for run in runs):
        return ()
    return tuple(sorted(set.intersection(*(set(run.still_joints) for run in runs))))


def filtered_coulomb(bp, coulomb):
    """The regressor function (q, qd, qdd, rows) → W with the Coulomb columns replaced by ``coulomb[rows]`` (N, n
    [+ motors]): sign(q̇_j) of joint j's Fc_j by column j; with more columns, J_mq[i, :]ᵀ sign(q̇_mi) of motor i's
    F_cm,i by column n + i (the base column of a parameter that groups others is that parameter's own)."""
    from robodyn.parameters.regressor import standard_parameter_names

    names = standard_parameter_names(bp.robot, bp.friction, bp.transmission)
    n = bp.robot.n
    J = None if coulomb.shape[1] == n else np.asarray(bp.transmission.J_mq, dtype=float)
    pairs = [(int(m[2]) - 1 + (n if m[1] else 0), k) for k, c in enumerate(bp.columns)
             if (m := re.fullmatch(r"Fc(m?)(\d+)", names[c])) and (J is not None or not m[1])]

    def W_of(q, qd, qdd, rows):
        W = bp.regressor(q, qd, qdd)
        for j, k in pairs:
            if j < n:
                W[:, j, k] = coulomb[rows, j]
            else:
                W[:, :, k] = coulomb[rows, j, None] * J[j - n]
        return W
    return W_of


def parallel_regressor(bp, data, q, qd, qdd, tau) -> np.ndarray:
    """The regressor (N, n, b) of the full-rate states of ``data``, filtered and decimated as its τ."""
    from robodyn.identification.data import IdentificationData

    if not isinstance(data, IdentificationData) or not data.parallel:
        raise InputError("parallel: give the IdentificationData of rd.identification.prepare_identification_data(..., "
                         "parallel=True) that the samples come from")
    for name, given, own in (("q", q, data.q), ("qd", qd, data.qd), ("qdd", qdd, data.qdd), ("tau", tau, data.tau)):
        if given.shape != own.shape or not np.array_equal(given, own):
            raise InputError(f"parallel: {name} is not the {name} of the data given as parallel; pass data.q, "
                             f"data.qd, data.qdd, data.tau of that IdentificationData (unchanged)")
    fq, fqd, fqdd = data.full_rate
    M = fq.shape[0]
    W = np.empty((M, q.shape[1], bp.count))
    with progress("identification: regressor of the full-rate states", total=M) as bar:
        for blk in row_blocks(M):
            W[blk] = bp.regressor(fq[blk], fqd[blk], fqdd[blk])
            bar.update(completed=blk.stop)
    return finite_result("identify", data.filter_columns(W))

