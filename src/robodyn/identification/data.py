"""Preparation of measured data for dynamic identification (Khalil & Dombre §9.4; Gautier's practice).

Measured joint positions q are low-pass filtered forward and backward with a Butterworth filter (zero phase:
no delay between positions, their derivatives and the torques), differentiated by central differences on the
filtered signal to give q̇ and q̈, and the measured torques τ are filtered with the same filter ("parallel
filtering", so that both sides of Γ = D_B K_B see the same distortion).  The result is decimated: after the
low-pass filter, the samples are strongly correlated and the high-rate data add computation, not information.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn.arrays import as_real_array
from robodyn.errors import InputError

#: Default Butterworth order (the forward-backward pass doubles it and squares the magnitude response).
DEFAULT_ORDER = 4


@dataclass(frozen=True, eq=False)
class IdentificationData:
    """Filtered, differentiated and decimated data.

    Attributes
    ----------
    t : ndarray (N,) s
    q, qd, qdd : ndarray (N, n) — positions, velocities, accelerations (rad, rad/s, rad/s² | m, m/s, m/s²)
    tau : ndarray (N, n) — torques (N m | N), filtered with the same filter as q
    cutoff : float — cut-off frequency used (Hz)
    decimate : int — decimation factor used
    rate : float — sampling rate of the input (Hz)
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    cutoff: float
    decimate: int
    rate: float


def check_samples(q, tau, names=("q", "tau")) -> tuple[np.ndarray, np.ndarray]:
    """Arrays (N, n) of equal shapes without NaN/inf; errors name the argument and the first bad row."""
    arrays = []
    for name, x in zip(names, (q, tau)):
        a = as_real_array(name, x).astype(float)
        if a.ndim == 1:
            a = a[:, None]
        if a.ndim != 2 or a.shape[0] == 0:
            raise InputError(f"{name} has shape {np.shape(x)}; give an (N, n) array, one row per sample")
        bad = ~np.all(np.isfinite(a), axis=1)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            col = int(np.flatnonzero(~np.isfinite(a[row]))[0]) + 1
            raise InputError(f"{name}: row {row} (0-based), joint {col} is {a[row, col - 1]}; remove or repair "
                             f"that sample ({int(bad.sum())} bad row(s) in all)")
        arrays.append(a)
    if arrays[0].shape != arrays[1].shape:
        raise InputError(f"{names[0]} has shape {arrays[0].shape} but {names[1]} has {arrays[1].shape}; "
                         f"give one row per sample and one column per joint in both")
    return arrays[0], arrays[1]


def prepare_identification_data(t, q, tau, cutoff: float | None = None, decimate: int | None = None,
                                order: int = DEFAULT_ORDER) -> IdentificationData:
    """Filter q and τ (zero-phase Butterworth), differentiate q, decimate.

    Parameters
    ----------
    t : array (N,) s — sampling instants, uniformly spaced (relative spread of the steps ≤ 1e-6).
    q : array (N, n) — measured positions (rad | m).
    tau : array (N, n) — measured torques (N m | N).
    cutoff : float or None
        Cut-off frequency of the low-pass filter (Hz).  Default: rate / 20 (a tenth of the Nyquist frequency:
        50 Hz at 1 kHz), well above the bandwidth of an excitation trajectory (H f_f, a few Hz) and low enough
        that the differentiated noise of q̈ stays small.
    decimate : int or None
        Keep one sample in ``decimate`` after filtering.  Default: the largest factor whose new Nyquist
        frequency is still twice the cut-off, ⌊rate / (4 cutoff)⌋ (5 with the default cut-off).
    order : int
        Butterworth order (default 4); the forward-backward pass (scipy.signal.filtfilt) gives zero phase and
        twice the order.

    Returns
    -------
    IdentificationData with t, q, qd, qdd, tau (decimated, N' rows).

    Notes
    -----
    q̇ and q̈ are central differences of the filtered q (second order, ``numpy.gradient``; one-sided at the
    ends).  The first and last ``3 (order + 1)`` samples of the filtered signals carry the filter's edge
    transients (they are kept; trim them if the measurement starts or ends abruptly).
    """
    from scipy.signal import butter, filtfilt

    tt = as_real_array("t", t).astype(float)
    if tt.ndim != 1:
        raise InputError(f"t has shape {tt.shape}; give a 1-D array of sampling instants (s)")
    qq, tq = check_samples(q, tau)
    if tt.shape[0] != qq.shape[0]:
        raise InputError(f"t has {tt.shape[0]} samples but q and tau have {qq.shape[0]} rows; give one time per row")
    if not np.all(np.isfinite(tt)):
        row = int(np.flatnonzero(~np.isfinite(tt))[0])
        raise InputError(f"t: row {row} (0-based) is {tt[row]}; give finite times")
    pad = 3 * (int(order) + 1)
    if tt.size <= pad + 2:
        raise InputError(f"{tt.size} samples are too few to filter with order {order}; give more than {pad + 2}")
    dt = np.diff(tt)
    h = float(np.mean(dt))
    if not h > 0 or np.any(dt <= 0):
        row = int(np.flatnonzero(dt <= 0)[0]) + 1 if np.any(dt <= 0) else 1
        raise InputError(f"t must increase strictly; row {row} (0-based) is not after the one before")
    spread = float(np.max(np.abs(dt - h))) / h
    if spread > 1e-6:
        row = int(np.argmax(np.abs(dt - h))) + 1
        raise InputError(f"t is not uniformly sampled (step before row {row} differs from the mean step {h:g} s by "
                         f"{spread:.2g} relative); resample the data on a uniform grid first")
    rate = 1.0 / h
    fc = rate / 20.0 if cutoff is None else float(cutoff)
    if not (np.isfinite(fc) and 0 < fc < rate / 2):
        raise InputError(f"cutoff = {cutoff!r} Hz; give a frequency between 0 and the Nyquist frequency {rate / 2:g} Hz")
    r = max(1, int(np.floor(rate / (4 * fc)))) if decimate is None else decimate
    if int(r) != r or r < 1:
        raise InputError(f"decimate = {decimate!r}; give an integer >= 1")
    r = int(r)
    b, a = butter(int(order), fc / (rate / 2))
    qf = filtfilt(b, a, qq, axis=0)
    tf = filtfilt(b, a, tq, axis=0)
    qd = np.gradient(qf, h, axis=0, edge_order=2)
    qdd = np.gradient(qd, h, axis=0, edge_order=2)
    keep = slice(None, None, r)
    return IdentificationData(t=tt[keep], q=qf[keep], qd=qd[keep], qdd=qdd[keep], tau=tf[keep], cutoff=fc,
                              decimate=r, rate=rate)
