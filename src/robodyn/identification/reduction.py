"""The reduction of identification samples to per-joint factors, shared by memory and cluster (Khalil & Dombre §9.4).

Every chunk of samples gives, per joint j, the Gram matrix of its weighted rows [W_j y_j] (or, with
``reduction="tsqr"``, a Householder R factor: Demmel et al. 2012); the chunks' results are merged with compensated
sums (or QR of stacked pairs) and factored once (docs/scaling.md).  :class:`ArraySource` (NumPy arrays in memory)
and :class:`DaskSource` (``dask.array`` arrays or :class:`Samples`) feed :func:`robodyn.identify` through the same
chunk functions: ``reduce``, ``residuals`` (τ − W θ, NaN on the rows left out) and ``median`` (exact, per joint).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import scipy.linalg

from robodyn.arrays import finite_result, one_per
from robodyn.errors import InputError, RobodynError
from robodyn.identification.factors import IdentificationError
from robodyn.progress import progress

#: States per block when reducing in-memory samples (keeps the temporaries small).
BLOCK = 8192
#: Default rows (states) per Dask chunk when NumPy arrays are given to the cluster path.
CHUNK = 1 << 17
#: Factors merged per task of the reduction tree.
FAN_IN = 8
#: Values per joint gathered to the client once a quantile is bracketed (:func:`median`).
GATHER = 1 << 16
#: Pivots per bracketing pass (:func:`median`).
PIVOTS = 256


def row_blocks(N: int, block: int = BLOCK):
    """The slices of ``block`` consecutive rows (the last one shorter) that cover N rows: every loop over samples
    in memory takes them a block at a time, so that the regressor's temporaries stay small."""
    return (slice(s, min(s + block, N)) for s in range(0, N, block))


def dask_modules():
    """(dask, dask.array), or RobodynError naming the extra to install."""
    try:
        import dask
        import dask.array as da
    except ImportError:
        raise RobodynError("robodyn.distributed needs Dask; install it with: pip install 'robodyn[dask]'") from None
    return dask, da


@dataclass(frozen=True, eq=False)
class Samples:
    """Identification samples as dask arrays, one row per sample, chunked along the rows.

    Attributes
    ----------
    q, qd, qdd, tau : dask.array (N, n) — positions, velocities, accelerations, torques (SI units); N may be
        unknown (NaN) until computed when the rows come from log files.
    sources : tuple of str — the files read.
    robot : dask.array or array (N,) of int, or None — for a fleet: the robot of each row, an index into
        ``robots``; None: every row is of one robot.
    robots : tuple of str — the fleet's robot names (plain names: :func:`robodyn.sanitize.identifier` leaves
        them unchanged), in the order of the indices.
    """

    q: object
    qd: object
    qdd: object
    tau: object
    sources: tuple = ()
    robot: object = None
    robots: tuple = ()


def chunk_size(chunk, unit: str = "rows") -> int:
    """``chunk`` checked: a positive integer (of ``unit`` per chunk)."""
    if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
        raise InputError(f"chunk = {chunk!r}; give a positive number of {unit} per chunk")
    return int(chunk)


def is_cluster_input(*arrays) -> bool:
    """Whether the samples go to the cluster path: Samples, or any dask array (Dask is not imported to tell)."""
    return any(isinstance(x, Samples) or type(x).__module__.startswith("dask.") for x in arrays)


def robot_names(names, where: str) -> tuple:
    """The fleet's robot names, each checked to be a plain name (untrusted text: file names, a data column)."""
    from robodyn.sanitize import identifier, printable

    out = tuple(str(x) for x in names)
    for text in out:
        if identifier(text) != text:
            raise InputError(f"robot name '{printable(text)}' ({where}) is not a plain name; give names of ASCII "
                             f"letters, digits and _ that start with a letter and are no keyword, e.g. "
                             f"'{identifier(text)}'")
    if len(set(out)) != len(out):
        raise InputError(f"robot names ({where}) repeat a name; give each robot one name")
    return out


def min_velocities(min_velocity, n: int):
    """``min_velocity`` checked: (n,) finite speeds ≥ 0, or None."""
    if min_velocity is None:
        return None
    return one_per("min_velocity", min_velocity, n, lambda v: np.isfinite(v) & (v >= 0), "finite speeds >= 0")


def rows_used(qd: np.ndarray, clipped=None, min_velocity=None, whole: bool = False, left_out=()):
    """(rows, n) bool of the rows of each joint's equation used, or None for all: joint j's torque not clipped
    (``clipped`` (rows, n) bool or None), |q̇_j| ≥ min_velocity_j (``min_velocity`` (n,) of
    :func:`min_velocities`, or None) and j not one of the joints ``left_out`` of the fit.  The one selection of
    every source: a chunk's rows, or the whole run in memory; ``whole``: the rows are the whole run, and a joint
    (not left out) left without rows is an IdentificationError naming it (a chunk cannot tell)."""
    use = None if clipped is None or not clipped.any() else ~clipped
    if min_velocity is not None:
        use = (np.abs(qd) >= min_velocity) & (True if use is None else use)
    if len(left_out):
        use = np.ones(qd.shape, dtype=bool) if use is None else use.copy()
        use[:, list(left_out)] = False
    empty = (np.setdiff1d(np.flatnonzero(~use.any(axis=0)), np.asarray(left_out, dtype=int))
             if whole and use is not None else ())
    if len(empty):
        j = int(empty[0])
        fast = min_velocity is not None and not np.any(np.abs(qd[:, j]) >= min_velocity[j])
        raise IdentificationError(
            f"min_velocity: no sample of joint {j + 1} moves at {min_velocity[j]:g} or faster (max |qd{j + 1}| = "
            f"{np.abs(qd[:, j]).max():g}); lower min_velocity" if fast else f"every sample of joint {j + 1} is "
            "clipped or too slow; give data where its torque is not saturated")
    return use


# ---------------------------------------------------------------- one chunk

def position_columns(q: np.ndarray, joints) -> np.ndarray:
    """The position-term columns E (N, n, 2k) of q (N, n): sin q_j, cos q_j in joint j's equation alone, for the
    k joints given (columns 2s, 2s + 1 for the s-th)."""
    E = np.zeros(q.shape + (2 * len(joints),))
    for s, j in enumerate(joints):
        E[:, j, 2 * s] = np.sin(q[:, j])
        E[:, j, 2 * s + 1] = np.cos(q[:, j])
    return E


#: The tuning constants of Huber's and Tukey's bisquare ψ: 95 % efficiency under Gaussian noise.
ROBUST_C = MappingProxyType({"huber": 1.345, "bisquare": 4.685})


def robust_weights(r: np.ndarray, scale: np.ndarray, robust: str) -> np.ndarray:
    """Huber or bisquare weights w = ψ(u) / u of residuals r (..., n) scaled per joint by ``scale`` (n,)."""
    c, u = ROBUST_C[robust], np.abs(r) / scale
    if robust == "huber":
        return np.minimum(1.0, c / np.maximum(u, 1e-300))
    return np.where(u < c, (1.0 - (u / c) ** 2) ** 2, 0.0)


def robust_psi(u, robust: str):
    """ψ(u) and ψ'(u) of Huber's or Tukey's bisquare function at the scaled residuals u (numpy or dask; NaN gives
    ψ' = 0, and ψ NaN (Huber) or 0 (bisquare), so sums over the valid rows are ``nansum``)."""
    c = ROBUST_C[robust]
    if robust == "huber":
        return np.clip(u, -c, c), np.where(np.abs(u) <= c, 1.0, 0.0)
    v, inside = (u / c) ** 2, np.abs(u) < c
    return np.where(inside, u * (1.0 - v) ** 2, 0.0), np.where(inside, (1.0 - v) * (1.0 - 5.0 * v), 0.0)


def qr_stack(factors, m: int) -> np.ndarray:
    """Per joint: the R factor (m × m) of the rows of all ``factors`` stacked (n, rows, m each)."""
    rows = np.concatenate(factors, axis=1)
    out = np.zeros((rows.shape[0], m, m))
    for j in range(rows.shape[0]):
        R = scipy.linalg.qr(rows[j], mode="r", check_finite=False)[0]
        out[j, : min(R.shape[0], m)] = R[:m]
    return out


def reduce_rows(W, tau, keep=None, reduction: str = "gram", theta=None, scale=None, robust=None, E=None):
    """One chunk: per joint, the Gram matrix (with a zero compensation) or the R factor of [√w E_j  √w W_j  √w y_j]
    ((2, n, m, m)), and the rows used (w > 0) per joint (n,).

    W (rows, n, b), tau (rows, n), E (rows, n, k) or None: the position columns; ``keep`` (rows, n) weights ≥ 0
    or bool (None: 1); with ``theta`` ((k + b,)), the robust weights of the residuals τ − [E W] θ scaled by ``scale``
    multiply them ("irls").  The block of [W y] is the product it is without E, to the last bit.

    A Gram matrix is formed from the columns of W_j that are not zero in the chunk: the others add exact zeros.
    Joint j's torque depends on the parameters of the links it carries only (a serial 7-joint arm's base
    regressor: 44 columns of 69 in joint 1's equation, 11 in joint 7's), so this is a fifth of the products."""
    k = 0 if E is None else E.shape[2]
    if theta is not None:
        r = tau - W @ theta[k:] - (E @ theta[:k] if k else 0.0)
        keep = robust_weights(r, scale, robust) * (1.0 if keep is None else keep)
    rows, n = tau.shape
    m = W.shape[2] + 1
    sw = None if keep is None else np.sqrt(keep.astype(float))
    acc = np.zeros((2, n, k + m, k + m))
    if reduction == "tsqr":
        A = np.concatenate([W, tau[..., None]], axis=2) if E is None else np.concatenate([E, W, tau[..., None]], 2)
        A = A.transpose(1, 0, 2) if sw is None else A.transpose(1, 0, 2) * sw.T[..., None]
        acc[0] = qr_stack([A], k + m)
    else:
        present = np.any(W != 0, axis=0)
        for j in range(n):  # 2-D products: BLAS (a stacked product of transposed views is not)
            cols = np.flatnonzero(present[j])
            A = np.empty((rows, len(cols) + 1))  # √w [W_j y_j] on those columns, one copy
            np.take(W[:, j], cols, axis=1, out=A[:, :-1])
            A[:, -1] = tau[:, j]
            if sw is not None:
                A *= sw[:, j, None]
            at = k + np.append(cols, m - 1)
            acc[0, j][np.ix_(at, at)] = A.T @ A
            if k:
                Ej = E[:, j] if sw is None else E[:, j] * sw[:, j, None]
                acc[0, j, :k, :k] = Ej.T @ Ej
                acc[0, j, at, :k] = acc[0, j, :k, at] = A.T @ Ej  # both index results are (len(at), k)
    return acc, (np.full(n, rows) if keep is None else np.sum(keep > 0, axis=0))


def merge(reduction: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Two chunk results of :func:`reduce_rows` as one: compensated sums of the Gram matrices, or the QR of the
    stacked factors."""
    if reduction == "gram":
        s = x[0] + y[0]
        bb = s - x[0]
        return np.stack([s, x[1] + y[1] + (x[0] - (s - bb)) + (y[0] - bb)])
    return np.stack([qr_stack([x[0], y[0]], x.shape[-1]), x[1]])


def gram(acc: np.ndarray, reduction: str) -> np.ndarray:
    """The Gram matrices (n, m, m) of a merged result."""
    return acc[0] + acc[1] if reduction == "gram" else np.swapaxes(acc[0], -1, -2) @ acc[0]


def factor(acc: np.ndarray, reduction: str, columns=None):
    """Per-joint square-root factors R_j ((n, k, k), R_jᵀ R_j = G_j) of the merged result restricted to
    ``columns`` (all: None), and the exact column norms of each [W_j y_j] ((n, k)): from the Gram diagonal, or the
    columns of the Householder factor (those of the eigendecomposition's factor carry its rounding, about √ε of
    the largest, not the zeros of columns absent from a joint's equations)."""
    if columns is not None and len(columns) < acc.shape[-1]:
        acc = (acc[:, :, columns][:, :, :, columns] if reduction == "gram"
               else qr_stack([acc[0][:, :, columns]], len(columns))[None])  # R[:, S]ᵀ R[:, S] = G[S, S]
    if reduction == "tsqr":
        return acc[0], np.linalg.norm(acc[0], axis=1)
    G = finite_result("identify", acc[0] + acc[1])
    norms = np.sqrt(np.maximum(np.diagonal(G, axis1=-2, axis2=-1), 0.0))
    d = np.where(norms > 0, norms, 1.0)
    Gs = G / d[..., :, None] / d[..., None, :]  # unit columns: the factor's rounding is relative to each column
    lam, V = np.linalg.eigh(0.5 * (Gs + np.swapaxes(Gs, -1, -2)))
    return np.sqrt(np.maximum(lam, 0.0))[..., :, None] * np.swapaxes(V, -1, -2) * d[..., None, :], norms


def _columns(bp, q, qd, qdd, joints, W=None):
    """(W, E) of some rows: the base regressor (or ``W`` given) and the position columns of ``joints`` (None)."""
    W = bp.regressor(q, qd, qdd) if W is None else W
    return W, (position_columns(q, joints) if joints else None)


def _predicted(W, E, theta):
    """[E W] θ (rows, n); θ (k + b,), or (rows, k + b) per row (a fleet's robots)."""
    k = 0 if E is None else E.shape[2]
    if theta.ndim == 1:
        out = W @ theta[k:]
        return out + E @ theta[:k] if k else out
    out = np.einsum("snb,sb->sn", W, theta[:, k:])
    return out + np.einsum("snb,sb->sn", E, theta[:, :k]) if k else out


def predicted(bp, q, qd, qdd, theta, joints=(), W=None, labels=None, block: int = BLOCK) -> np.ndarray:
    """[E W] θ (N, n) of the samples q, q̇, q̈ (N, n), the regressor taken ``block`` rows at a time (its
    temporaries stay small): ``bp.regressor``, or ``W`` (callable ``blk → (rows, n, b)``), and the position
    columns E of ``joints``; θ (k + b,), or with ``labels`` (N,) of a fleet (robots, k + b): row i uses
    θ[labels[i]]."""
    out = np.empty(q.shape)
    for blk in row_blocks(len(out), block):
        rows = _columns(bp, q[blk], qd[blk], qdd[blk], joints, None if W is None else W(blk))
        out[blk] = _predicted(*rows, theta if labels is None else theta[labels[blk]])
    return out


# ---------------------------------------------------------------- in memory

class ArraySource:
    """In-memory samples (N, n), reduced in blocks of ``block`` rows.

    ``use`` (N, n) bool or None: the rows of each joint's equations used; ``W``: the regressor of the rows
    (callable ``blk → (rows, n, b)``), instead of ``bp.regressor`` at the samples; ``clipped`` (n,): per joint,
    the rows of clipped torques left out; ``left_out``: the joints whose equations are left out of the fit."""

    def __init__(self, bp, q, qd, qdd, tau, use=None, W=None, block: int = BLOCK, clipped=None, left_out=()):
        self.bp, self.q, self.qd, self.qdd, self.tau, self.use, self.W = bp, q, qd, qdd, tau, use, W
        self.block = int(block)
        self.clipped = np.zeros(q.shape[1], int) if clipped is None else clipped
        self.left_out = tuple(left_out)

    def _rows(self, blk, joints):
        return _columns(self.bp, self.q[blk], self.qd[blk], self.qdd[blk], joints,
                        None if self.W is None else self.W(blk))

    def reduce(self, joints=(), reduction: str = "gram", theta=None, scale=None, robust=None, folds: int = 0):
        """(merged result (2, n, m, m), N, rows used per joint (n,), clipped rows per joint (n,), Gram matrices
        of ``folds`` contiguous time blocks (folds, n, m, m) or None); m = 2 len(joints) + b + 1."""
        N, n = self.q.shape
        acc, used, Gf = None, np.zeros(n, dtype=np.int64), None
        with progress("identification: regressor of the samples", total=N) as bar:
            for blk in row_blocks(N, self.block):
                (W, E), tau = self._rows(blk, joints), self.tau[blk]
                keep = None if self.use is None else self.use[blk]
                part, u = reduce_rows(W, tau, keep, reduction, theta, scale, robust, E)
                acc = part if acc is None else merge(reduction, acc, part)
                used += u
                if folds:
                    Gf = np.zeros((folds,) + part.shape[1:]) if Gf is None else Gf
                    fold = np.arange(blk.start, blk.stop) * folds // N
                    for i in np.unique(fold):
                        sel = fold == i
                        Gf[i] += reduce_rows(W[sel], tau[sel], None if keep is None else keep[sel],
                                             E=None if E is None else E[sel])[0][0]
                bar.update(completed=blk.stop)
        return acc, N, used, self.clipped, Gf

    def residuals(self, theta, joints=()) -> np.ndarray:
        """τ − [E W] θ (N, n), NaN on the rows left out."""
        out = self.tau - predicted(self.bp, self.q, self.qd, self.qdd, theta, joints, self.W, block=self.block)
        return out if self.use is None else np.where(self.use, out, np.nan)

    @staticmethod
    def median(x) -> np.ndarray:
        return np.nanmedian(x, axis=0)

    def position_range(self, joints) -> np.ndarray:
        """(len(joints), 2): the least and greatest q_j of the samples, for each of ``joints``."""
        x = self.q[:, list(joints)]
        return np.stack([x.min(axis=0), x.max(axis=0)], axis=1)


# ---------------------------------------------------------------- on a cluster

def _finite_block(x: np.ndarray, what: str) -> np.ndarray:
    bad = ~np.isfinite(x)
    if bad.any():
        raise InputError(f"{what} holds values that are not finite (NaN or inf; {int(bad.sum())} in one chunk of "
                         f"{x.shape[0]} rows); repair or remove those samples")
    return x


def sample_arrays(given, n: int, chunk: int) -> list:
    """q, qd, qdd, tau for identification: (N, n) float dask arrays of one row count N, refused when not real
    numbers (text, booleans), not of shape (N, n), of different row counts, or holding NaN or inf (checked
    chunk by chunk as the rows are read: the error is raised by the computation, naming the array)."""
    _, da = dask_modules()
    out = []
    for name, x in zip(("q", "qd", "qdd", "tau"), given):
        if not isinstance(x, da.Array):
            try:
                x = np.asarray(x)
            except (TypeError, ValueError):
                raise InputError(f"{name} is not an array of numbers; give an (N, {n}) array") from None
        if x.dtype.kind not in "iuf":
            raise InputError(f"{name} holds {x.dtype} values; give real numbers (N, {n})")
        if x.ndim != 2 or x.shape[1] != n:
            raise InputError(f"{name} has shape {x.shape}; give an (N, {n}) array (N samples, n = {n} joints)")
        if not isinstance(x, da.Array):
            x = da.from_array(x.astype(float), chunks=(chunk, -1))
        out.append(x.astype(float).map_blocks(_finite_block, what=name, dtype=float))
    rows = [a.shape[0] for a in out]
    if len({r for r in rows if r == r}) > 1:  # NaN: a count known once the rows are read
        raise InputError(f"q, qd, qdd, tau have {', '.join(str(r) for r in rows)} rows; give the same N samples "
                         "in each")
    return out


def aligned(*arrays) -> list:
    """The blocks, each copied when its data is not aligned (a block received from another worker can lie at an
    address that is not a multiple of 8, which robodyn.native's buffer check refuses)."""
    return [a if not isinstance(a, np.ndarray) or a.flags.aligned else a.copy() for a in arrays]


def clipped_block(tau: np.ndarray, clip) -> np.ndarray:
    """(rows, n) bool: the clipped torques of a chunk, ``clip`` from :func:`clipping`."""
    top, bottom, at_top, at_bottom = clip
    return ((tau == top) & at_top) | ((tau == bottom) & at_bottom)


def _value_runs(tau: np.ndarray):
    """One chunk of τ for :func:`clipping`: its rows, and per joint the runs of equal values that it joins across
    chunks, as (value, length): the run that starts the chunk, the one that ends it, the longest at the chunk's
    largest and at its smallest value, and the longest at each of the three values whose runs are longest
    ((n, 7, 2); (NaN, 0) where there are fewer values), so that the longest run at any value but the run's two
    extremes is among them; None for a chunk without rows."""
    from robodyn.identification.data import value_runs

    t = np.asarray(tau)
    rows, n = t.shape
    if rows == 0:
        return None
    out = np.zeros((n, 7, 2))
    out[:, :, 0] = np.nan
    for j in range(n):
        starts, lengths = value_runs(t[:, j])
        values = t[starts, j]
        distinct, at = np.unique(values, return_inverse=True)
        longest = np.zeros(distinct.size)
        np.maximum.at(longest, at, lengths)
        top = np.argsort(-longest, kind="stable")[:3]
        out[j, :4] = [(values[0], lengths[0]), (values[-1], lengths[-1]), (distinct[-1], longest[-1]),
                      (distinct[0], longest[0])]
        out[j, 4:4 + top.size] = np.column_stack([distinct[top], longest[top]])
    return rows, out


def clipping(tau):
    """The clipped torques of the (N, n) dask array τ, as :func:`robodyn.identification.data.saturated` finds them
    in memory (a joint's largest or smallest value held for :func:`~robodyn.identification.data.plateau_limit` of
    its longest run at any other value; every sample at that value counts then): (largest (n,), smallest (n,),
    whether each is clipped (n,) × 2), or None when no torque is.  One pass over τ; a run may span chunks."""
    from robodyn.identification.data import plateau_limit

    dask, _ = dask_modules()
    blocks = tau.rechunk({1: -1}).to_delayed().ravel().tolist()
    parts = [p for p in dask.compute(*[dask.delayed(_value_runs)(b) for b in blocks]) if p is not None]
    if not parts:
        return None
    n = parts[0][1].shape[0]
    ext = np.stack([np.nanmax([p[1][:, 2, 0] for p in parts], axis=0), np.nanmin([p[1][:, 3, 0] for p in parts],
                                                                                   axis=0)])
    flags = np.zeros(ext.shape, dtype=bool)
    for j in range(n):
        best = np.zeros(3)  # the longest runs at the largest value, at the smallest, at any other
        carry_value, carry = np.nan, 0  # the run that reaches the end of the chunks seen
        for rows, summary in parts:
            (lead_value, lead), (trail_value, trail) = summary[j, 0], summary[j, 1]
            joined = carry + lead if lead_value == carry_value else lead
            for value, length in list(summary[j]) + [(lead_value, joined)]:
                kind = [e for e in (0, 1) if value == ext[e, j]] or [2]
                best[kind] = np.maximum(best[kind], length)
            carry_value, carry = (lead_value, joined) if lead == rows else (trail_value, trail)
        flags[:, j] = best[:2] >= plateau_limit(best[2])
    return (ext[0], ext[1], flags[0], flags[1]) if flags.any() else None


def _chunk(bp, q, qd, qdd, tau, joints, reduction, theta, scale, robust, clip, min_velocity, labels=None):
    """One chunk of the cluster: (result (2, n, m, m), rows, rows used per joint, clipped rows per joint),
    reduced in blocks of ``BLOCK`` rows; with ``labels`` (rows,) of a fleet, a dict robot index → the same for
    that robot's rows (``theta`` is then (robots, m − 1))."""
    q, qd, qdd, tau = aligned(q, qd, qdd, tau)
    if labels is not None:
        labels = np.asarray(labels)
        return {int(r): _chunk(bp, q[labels == r], qd[labels == r], qdd[labels == r], tau[labels == r], joints,
                               reduction, None if theta is None else theta[r], scale, robust, clip, min_velocity)
                for r in np.unique(labels)}
    N, n = q.shape
    m = bp.count + 2 * len(joints) + 1
    acc, used = np.zeros((2, n, m, m)), np.zeros(n, dtype=np.int64)
    for blk in row_blocks(N):
        keep = rows_used(qd[blk], None if clip is None else clipped_block(tau[blk], clip), min_velocity)
        W, E = _columns(bp, q[blk], qd[blk], qdd[blk], joints)
        part, u = reduce_rows(W, tau[blk], keep, reduction, theta, scale, robust, E)
        acc, used = merge(reduction, acc, part), used + u
    clipped = np.zeros(n, dtype=np.int64) if clip is None else clipped_block(tau, clip).sum(axis=0)
    return acc, N, used, clipped


def _merged(reduction: str, *parts):
    """Merge chunk results of :func:`_chunk` (one node of the reduction tree)."""
    if isinstance(parts[0], dict):
        out = dict(parts[0])
        for other in parts[1:]:
            for r, part in other.items():
                out[r] = _merged(reduction, out[r], part) if r in out else part
        return out
    acc, *counts = parts[0]
    for other in parts[1:]:
        acc = merge(reduction, acc, other[0])
        counts = [a + b for a, b in zip(counts, other[1:])]
    return (acc, *counts)


class DaskSource:
    """Samples as (N, n) dask arrays (any N), reduced chunk by chunk on the workers and merged in a tree of
    :data:`FAN_IN` results per task; ``labels``: the (N,) dask array of a fleet's robot indices, ``robots`` their
    names."""

    def __init__(self, bp, arrays, min_velocity=None, labels=None, robots=()):
        self.dask, self.da = dask_modules()
        self.bp_d = self.dask.delayed(bp, pure=True, traverse=False)  # sent once to each worker
        self.arrays = [a.rechunk({1: -1}) for a in arrays]
        self.labels, self.robots, self.min_velocity = labels, robots, min_velocity
        self.clip = clipping(self.arrays[3])
        self.left_out = ()  # the driver's choice (constant: which torques hold one value)

    @property
    def constant(self) -> np.ndarray:
        """(n,) bool: the joints whose torque holds one value in every sample (its largest is its smallest)."""
        n = self.arrays[3].shape[1]
        return np.zeros(n, dtype=bool) if self.clip is None else self.clip[0] == self.clip[1]

    def _blocks(self, arrays, labels=None):
        if not any(np.isnan(c) for c in arrays[0].chunks[0]):
            arrays = [arrays[0]] + [a.rechunk(arrays[0].chunks) for a in arrays[1:]]
            if labels is not None:
                labels = labels.rechunk(arrays[0].chunks[:1])
        blocks = [a.to_delayed().ravel().tolist() for a in arrays + ([] if labels is None else [labels])]
        if len({len(b) for b in blocks}) != 1:
            raise InputError("q, qd, qdd, tau (and robot) have different row chunks; give arrays of one chunking")
        return list(zip(*blocks))

    def _tree(self, blocks, *args):
        task, node = self.dask.delayed(_chunk, pure=True), self.dask.delayed(_merged, pure=True)
        tasks = [task(self.bp_d, *b[:4], *args, self.clip, self.min_velocity, b[4] if len(b) > 4 else None)
                 for b in blocks]
        while len(tasks) > 1:
            tasks = [node(args[1], *tasks[k:k + FAN_IN]) for k in range(0, len(tasks), FAN_IN)]
        return tasks[0]

    def reduce(self, joints=(), reduction: str = "gram", theta=None, scale=None, robust=None, folds: int = 0):
        """As :meth:`ArraySource.reduce`, the same folds (contiguous blocks of the rows); a fleet: a dict robot index
        → (result, N, used, clipped, Gram matrices of ``folds`` contiguous blocks of that robot's rows or None)."""
        args = (joints, reduction, theta, scale, robust)
        labels = self.labels
        if folds and labels is None:  # one robot: every row is robot 0's
            labels = self.da.zeros_like(self.arrays[0][:, 0], dtype=np.int64)
        if labels is None:
            acc, N, used, clipped = self.dask.compute(self._tree(self._blocks(self.arrays), *args))[0]
            return acc, int(N), used, clipped, None
        if folds:
            labels = labels * folds + self._blocks_of_robots(labels, folds)
        parts = self.dask.compute(self._tree(self._blocks(self.arrays, labels), *args))[0]
        split = {}
        for key, part in parts.items():  # key: robot r's fold f is r folds + f
            r, f = divmod(key, folds) if folds else (key, 0)
            split.setdefault(r, {})[f] = part
        out = {r: _merged(reduction, *p.values()) + (np.stack([
            gram(p[f][0], reduction) if f in p else np.zeros(p[min(p)][0].shape[1:]) for f in range(folds)])
            if folds else None,) for r, p in split.items()}
        if self.labels is not None or not out:  # a fleet, or no rows (whose count the driver reports)
            return out if self.labels is not None else self.reduce(*args)
        return (out[0][0], int(out[0][1])) + out[0][2:]

    def _blocks_of_robots(self, labels, folds: int):
        """(N,) dask array: the contiguous time block (0 … folds − 1) of each row among its robot's rows (0 for a
        robot index outside ``robots``, which the fleet's driver refuses).  The robots' row counts are part of the
        reduction's graph, unless the labels are computed from the samples (joint logs, unknown row counts): every
        chunk would then stay in memory until the counts are known, so they are counted in a pass of their own."""
        own = labels[:, None] == np.arange(max(len(self.robots), 1))
        rank = (self.da.cumsum(own, axis=0) * own).sum(axis=1) - 1
        counts = own.sum(axis=0)
        if set(labels.dask.layers) & set(self.arrays[0].dask.layers):
            counts = counts.compute()
        size = (own * counts).sum(axis=1)
        return self.da.where(size > 0, rank * folds // self.da.maximum(size, 1), 0)

    def residuals(self, theta, joints=()):
        """τ − [E W] θ as an (N, n) dask array, NaN on the rows left out; a fleet: θ (robots, m − 1)."""
        arrays = self.arrays
        if self.labels is None:
            return self.da.map_blocks(_residual_block, self.bp_d, *arrays, theta, joints, self.clip,
                                      self.min_velocity, dtype=float, chunks=arrays[0].chunks)
        blocks = self._blocks(arrays, self.labels)
        known = not any(np.isnan(c) for c in arrays[0].chunks[0])
        sizes = arrays[0].chunks[0] if known else [np.nan] * len(blocks)
        task = self.dask.delayed(_residual_block, pure=True)
        return self.da.concatenate([self.da.from_delayed(task(self.bp_d, *b[:4], theta, joints, self.clip,
                                                              self.min_velocity, b[4]),
                                                         shape=(s, arrays[0].shape[1]), dtype=float)
                                    for b, s in zip(blocks, sizes)])

    @staticmethod
    def median(x) -> np.ndarray:
        return median(x)

    def position_range(self, joints) -> np.ndarray:
        """As :meth:`ArraySource.position_range`, in one pass over the chunks of q."""
        x = self.arrays[0][:, list(joints)]
        return np.stack(self.dask.compute(x.min(axis=0), x.max(axis=0)), axis=1)


def _residual_block(bp, q, qd, qdd, tau, theta, joints=(), clip=None, min_velocity=None, labels=None):
    """τ − [E W] θ of one chunk (rows, n), NaN on the rows left out; with ``labels`` (rows,) of a fleet, θ is
    (robots, m − 1): row i uses θ[labels[i]]."""
    q, qd, qdd, tau = aligned(q, qd, qdd, tau)
    out = tau - predicted(bp, q, qd, qdd, theta, joints, labels=labels)
    keep = rows_used(qd, None if clip is None else clipped_block(tau, clip), min_velocity)
    return out if keep is None else np.where(keep, out, np.nan)


# ---------------------------------------------------------------- exact quantiles of a chunked array

def _counts(x: np.ndarray, pivots: np.ndarray) -> np.ndarray:
    """#(x[:, j] ≤ pivots[:, j]) of one block, (P, n)."""
    xs = np.sort(x, axis=0)
    return np.stack([np.searchsorted(xs[:, j], pivots[:, j], side="right") for j in range(x.shape[1])], -1)


def _inside(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, j: int) -> np.ndarray:
    col = x[:, j]
    return col[(col > lo[j]) & (col <= hi[j])]


def _ulps_below(h: float, count: int) -> np.ndarray:
    """The ``count`` floating-point numbers just below ``h``, ascending."""
    out = np.empty(count)
    v = h
    for i in range(count - 1, -1, -1):
        v = np.nextafter(v, -np.inf)
        out[i] = v
    return out


def _stats(x: np.ndarray) -> np.ndarray:
    """(2, n): the minimum and maximum of each column of a block, NaN left out."""
    return np.array([np.fmin.reduce(x, axis=0, initial=np.inf), np.fmax.reduce(x, axis=0, initial=-np.inf)])


def _kth(x, ks) -> np.ndarray:
    """The k-th smallest values (0-based ranks ``ks``, each an int or one per column (n,)) of every column of a
    persisted (N, n) dask array (N > GATHER), NaN left out (sorted last), exactly: (len(ks), n).

    Bisection by counts: each pass counts, block by block, the values below ``PIVOTS`` pivots spread over the
    bracket (lo, hi] of each column that holds the answer, and narrows the bracket; once it holds at most
    ``GATHER`` values they are gathered and the answer selected. A bracket that stops narrowing spans fewer than
    ``PIVOTS`` floating-point numbers (ties): the next pass counts at each of them, which decides exactly.
    """
    dask, _ = dask_modules()
    blocks = x.to_delayed().ravel().tolist()
    parts = dask.compute(*[dask.delayed(_stats)(blk) for blk in blocks])
    return np.stack([_kth_bisect(x, blocks, k, np.min([p[0] for p in parts], axis=0),
                                 np.max([p[1] for p in parts], axis=0)) for k in ks])


def _kth_bisect(x, blocks, k, xmin: np.ndarray, xmax: np.ndarray) -> np.ndarray:
    dask, _ = dask_modules()
    n = x.shape[1]
    k = np.broadcast_to(np.asarray(k, dtype=np.int64), (n,))
    lo = np.nextafter(xmin, -np.inf)  # #(x ≤ lo) = 0 ≤ k
    hi = xmax.copy()  # #(x ≤ hi) = N > k
    below = np.zeros(n, dtype=np.int64)  # #(x ≤ lo)
    exact = np.zeros(n, bool)
    out = np.empty(n)
    active = np.ones(n, bool)
    while active.any():
        # the bracket's interior, and hi, 0 with the numbers just below them: a value repeated more than GATHER
        # times at one of these (zeros, the bracket's top) is found in this pass
        piv = np.concatenate([np.linspace(lo, hi, PIVOTS + 1)[1:-1], [hi, np.nextafter(hi, -np.inf)],
                              np.zeros((1, n)), np.full((1, n), -np.nextafter(0.0, 1.0))])
        for j in np.flatnonzero(exact):
            piv[: PIVOTS - 1, j] = _ulps_below(hi[j], PIVOTS - 1)
        c = np.sum(dask.compute(*[dask.delayed(_counts)(blk, piv) for blk in blocks]), axis=0)
        for j in np.flatnonzero(active):
            order = np.argsort(piv[:, j], kind="stable")
            pj, cj = piv[order, j], c[order, j]
            over, under = np.flatnonzero(cj > k[j]), np.flatnonzero(cj <= k[j])
            first = pj[over[0]]  # the smallest pivot with more than k values at or below it
            if exact[j] or (under.size and pj[under[-1]] == np.nextafter(first, -np.inf)):
                out[j], active[j] = first, False
                continue
            if under.size and pj[under[-1]] > lo[j]:
                new_lo, new_below = pj[under[-1]], int(cj[under[-1]])
            else:
                new_lo, new_below = lo[j], below[j]
            exact[j] = new_lo == lo[j] and first == hi[j]
            lo[j], hi[j], below[j] = new_lo, first, new_below
            if int(cj[over[0]]) - below[j] <= GATHER:
                vals = np.concatenate(dask.compute(*[dask.delayed(_inside)(blk, lo, hi, j) for blk in blocks]))
                out[j], active[j] = np.partition(vals, k[j] - below[j])[k[j] - below[j]], False
    return out


def median(x) -> np.ndarray:
    """The exact median of every column of a chunked (N, n) dask array, as ``numpy.nanmedian(x, axis=0)`` gives
    it (NaN left out; the mean of the two middle values for an even count; NaN for a column of NaN only), without
    gathering the columns when N > ``GATHER``: bisection by counts over the persisted blocks (a few passes).

    Returns
    -------
    ndarray (n,)
    """
    _, da = dask_modules()
    if not isinstance(x, da.Array) or x.ndim != 2:
        raise InputError("median: give a 2-D dask array (N, n)")
    x = x.persist()
    if np.isnan(x.shape[0]):
        x.compute_chunk_sizes()
    N = int(x.shape[0])
    if N == 0:
        raise InputError("median: the array has no rows")
    if N <= GATHER:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a column of NaN only: NaN, as documented
            return np.nanmedian(x.compute(), axis=0)
    valid = N - np.asarray(da.isnan(x).sum(axis=0).compute())
    out = np.full(x.shape[1], np.nan)
    some = valid > 0
    if some.any():
        cols = x[:, np.flatnonzero(some)] if not some.all() else x
        v = valid[some]
        a = _kth(cols, [(v - 1) // 2, v // 2])
        out[some] = 0.5 * (a[0] + a[1])
    return out
