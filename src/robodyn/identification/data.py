"""Preparation of measured data for dynamic identification (Khalil & Dombre §9.4; Gautier's practice).

Positions q are low-pass filtered forward and backward (zero phase), differentiated by central differences to
give q̇ and q̈, and the torques τ filtered with the same filter ("parallel filtering"), then decimated;
``parallel=True`` also keeps the full-rate states to filter the regressor column by column (docs/identification.md,
"Preparing measured data").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn.arrays import as_real_array
from robodyn.errors import InputError

#: Default Butterworth order (the forward-backward pass doubles it and squares the magnitude response).
DEFAULT_ORDER = 4


#: ``cutoff="auto"``: the cut-off is at least this many times the bandwidth of the measured positions (Gautier's
#: rule of thumb: the filter's cut-off at 5 to 10 times the bandwidth of the motion, so that it passes intact).
AUTO_FACTOR = 5.0
#: ``cutoff="auto"``: and at most this many times that bandwidth, the upper end of the rule of thumb: above it q
#: holds servo ripple and vibration, not the rigid-body motion (docs/identification.md, "Real measured data").
AUTO_FACTOR_MAX = 10.0
#: ``cutoff="auto"``: q_j holds signal up to the highest frequency where its (smoothed) periodogram exceeds this
#: many times its noise floor.
AUTO_SNR = 10.0
#: ``cutoff="auto"``: the bandwidth of q is the frequency below which this fraction of its energy lies.
AUTO_ENERGY = 0.99
#: ``cutoff="auto"``: a joint whose motion (RMS of q_j, its linear trend removed) is below this fraction of the
#: largest joint's sets neither the bandwidth nor the noise frequency: a joint that barely moves has the broad
#: spectrum of a few encoder steps (a Schunk LWA 4P wrist turning by 0.004 rad put a whole run at the upper bound).
AUTO_MOTION = 0.01
#: ``cutoff="auto"``: upper bound as a fraction of the sampling rate (0.4 × the Nyquist frequency).
AUTO_MAX_FRACTION = 0.2
#: Default decimation never keeps fewer samples than this (or all of them, when there are fewer).
MIN_KEPT = 2000
#: A row is at standstill when every joint's |q̇| is below this fraction of its largest |q̇| in the run.
STANDSTILL = 0.01
#: The Coulomb column of joint j is 0 where |q̇_j| is below this many times the velocity noise of the prepared data
#: (:func:`velocity_noise`): there the sign of q̇_j is the sign of noise.
COULOMB_DEADBAND = 5.0
#: A joint's torque is clipped (saturated drive, sensor range) where it holds exactly its largest or smallest value
#: for at least this many consecutive samples: a measured torque, with noise, does not repeat its extreme...
SATURATED_RUN = 5
#: ... and for at least this many times its longest plateau at any other value: a quantised sensor read faster than
#: its torque changes holds every value for a while, its extremes (the turning points where the torque changes
#: slowest) too.  A Rokae xMate3Pro's joint 7 (quanta of 0.0267 N m at 1 kHz) held its maximum 12 samples as its
#: motion started, and other values up to 52.
SATURATED_FACTOR = 2


def _coulomb_steps(v, noise) -> np.ndarray:
    """sign(v), 0 where |v| < ``COULOMB_DEADBAND`` × ``noise`` (the velocity noise, broadcast against v): the
    unfiltered Coulomb columns of the joints or the motors."""
    return np.where(np.abs(v) >= COULOMB_DEADBAND * noise, np.sign(v), 0.0)


def value_runs(x) -> tuple[np.ndarray, np.ndarray]:
    """Starts and lengths of the runs of equal consecutive values of the 1-D array ``x``."""
    x = np.asarray(x)
    starts = np.flatnonzero(np.concatenate([[True], x[1:] != x[:-1]])) if x.size else np.zeros(0, dtype=np.int64)
    return starts, np.diff(np.append(starts, x.size))


def plateau_limit(other: int) -> int:
    """The run at an extreme that makes a torque clipped, given its longest run ``other`` at any other value."""
    return max(SATURATED_RUN, SATURATED_FACTOR * int(other))


def saturated(tau) -> np.ndarray:
    """(N, n) bool: the samples where joint j's torque is clipped — it holds exactly its maximum (or minimum) over
    a run of at least ``SATURATED_RUN`` consecutive samples and ``SATURATED_FACTOR`` times its longest run at any
    other value (:func:`plateau_limit`); every sample at that value counts then.  Such rows are not the rigid-body
    model's torques (the drive or the sensor saturated), and least squares would fit the plateau."""
    t = np.asarray(tau, dtype=float)
    out = np.zeros(t.shape, dtype=bool)
    for j in range(t.shape[1]):
        x = t[:, j]
        if not x.size:
            continue
        starts, lengths = value_runs(x)
        values, top, bottom = x[starts], x.max(), x.min()
        need = plateau_limit(lengths[(values != top) & (values != bottom)].max(initial=0))
        for v in (top, bottom):
            if lengths[values == v].max(initial=0) >= need:
                out[:, j] |= x == v
    return out


def constant_torques(tau, clipped=None) -> np.ndarray:
    """(n,) bool: the joints whose torque holds one value in every sample of ``tau`` (N, n) — no torque measured
    there (a joint without a sensor, a channel that reads 0): constant, or ``clipped`` (N, n) bool on every sample,
    as prepared data keep a raw constant (filtered, a constant other than 0 is no longer exactly one value)."""
    t = np.asarray(tau, dtype=float)
    if not len(t):
        return np.zeros(t.shape[1:], dtype=bool)
    return (np.ptp(t, axis=0) == 0) | (False if clipped is None else np.asarray(clipped).all(axis=0))


@dataclass(frozen=True, eq=False)
class IdentificationData:
    """Filtered, differentiated and decimated data, and what was done to them.

    Attributes
    ----------
    t : ndarray (N,) s
    q, qd, qdd : ndarray (N, n) — positions, velocities, accelerations (rad, rad/s, rad/s² | m, m/s, m/s²)
    tau : ndarray (N, n) — torques (N m | N), filtered with the same filter as q
    cutoff : float — cut-off frequency used (Hz)
    decimate : int — decimation factor used
    rate : float — sampling rate (Hz) of the filtered signal (after resampling, if any)
    cutoff_rule : str — how the cut-off was chosen (the value given, or the automatic rule and its numbers)
    bandwidth : float — the frequency below which 99 % of the energy of the measured q lies (Hz, largest joint)
    trimmed : tuple (int, int) — samples removed at the start and at the end (filter transients and standstill),
        counted at the input (resampled) rate
    standstill : tuple (int, int) — of those, the samples of standstill before the motion starts and after it ends
    resampled : str — "" for uniform time stamps, else the resampling done (method, step, jitter)
    full_rate : tuple (q, qd, qdd) of ndarrays (M, n) or None — ``parallel=True``: the filtered states at the
        input (resampled) rate, untrimmed, for :meth:`filter_columns`; None otherwise
    filter_coefficients : ndarray (sections, 6) or None — ``parallel=True``: the Butterworth filter used, as
        second-order sections (``scipy.signal.butter(..., output="sos")``, :func:`zero_phase`)
    coulomb : ndarray (N, n) or None — sign(q̇) of the full-rate filtered states, 0 where |q̇_j| is below
        ``COULOMB_DEADBAND`` × ``velocity_noise_j``, filtered, trimmed and decimated exactly as τ: the Coulomb
        columns that ``rd.identify(robot, data)`` and ``validate`` use (Gautier's parallel filtering)
    velocity_noise : ndarray (n,) or None — the standard deviation (rad/s | m/s) that the noise of the measured q
        leaves in q̇ after the filter and the differences (:func:`velocity_noise`)
    measured_velocity : bool — q̇ is the measured velocity filtered as q (``qd`` given), q̈ its differences;
        False: q̇ and q̈ are the differences of the filtered q
    saturated : ndarray (N, n) bool or None — the kept samples whose filtered τ_j is within the filter's reach
        (two time constants, order / (π cutoff) s) of a clipped measured τ_j (:func:`saturated`); ``rd.identify(robot, data)``
        and ``validate`` leave those rows of joint j out.  None when no torque was clipped.
    still_joints : tuple of int — the joints (0-based) that do not move: the RMS of q_j (its linear trend removed),
        of the filtered q̇_j and of q̈_j each below ``AUTO_MOTION`` (1 %) of the largest joint's, a joint its servo
        holds while the others move.  Their q̇_j and q̈_j are encoder noise, so they are set to 0 (and the Coulomb
        column): the parameters that only their motion excites (F_v, F_c, I_a of the joint) are then not fitted to
        the noise of their torque — ``"physical"`` holds them at the model's values and names them.  Their q_j
        and τ_j are kept (a held joint's torque still carries the gravity of the links it holds).  A joint that
        trembles (q̈_j above 1 % of the largest, a cable-driven Barrett WAM's held joints) keeps its q̇_j and q̈_j:
        the inertial torques of its tremor are real.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    cutoff: float
    decimate: int
    rate: float
    cutoff_rule: str = ""
    bandwidth: float = float("nan")
    trimmed: tuple = (0, 0)
    standstill: tuple = (0, 0)
    resampled: str = ""
    full_rate: tuple | None = None
    filter_coefficients: tuple | None = None
    coulomb: np.ndarray | None = None
    saturated: np.ndarray | None = None
    velocity_noise: np.ndarray | None = None
    measured_velocity: bool = False
    still_joints: tuple = ()

    @property
    def parallel(self) -> bool:
        """Whether the full-rate states are kept for parallel filtering of the regressor."""
        return self.full_rate is not None

    def filter_columns(self, x) -> np.ndarray:
        """Filter, trim and decimate an array computed at the full-rate states exactly as τ was.

        Parameters
        ----------
        x : array (M, ...) — one row per full-rate sample (M = ``full_rate[0].shape[0]``), e.g. the regressor
            W(q, q̇, q̈) (M, n, b) evaluated at ``full_rate``.

        Returns
        -------
        ndarray (N, ...) — the zero-phase filtered x at the kept samples (the rows of ``q``, ``tau``).
        """
        if self.full_rate is None:
            raise InputError("these data were prepared without parallel=True; prepare them with "
                             "prepare_identification_data(..., parallel=True)")
        M = self.full_rate[0].shape[0]
        xx = np.asarray(x, dtype=float)
        if xx.ndim < 1 or xx.shape[0] != M:
            raise InputError(f"x has shape {xx.shape}; give one row per full-rate sample ({M})")
        first, last = self.trimmed[0], M - self.trimmed[1]
        return zero_phase(self.filter_coefficients, xx)[first:last:self.decimate]

    def motor_coulomb(self, J_mq) -> np.ndarray | None:
        """sign(q̇_m), q̇_m = J_mq q̇ (De Luca; [9.29]–[9.33]), of the full-rate filtered states, filtered, trimmed and
        decimated exactly as τ (:meth:`filter_columns`), (N, motors): the smooth steps that the motors' Coulomb
        friction F_cm sign(q̇_m) leaves in the filtered τ, as ``coulomb`` for the joints'; None without the
        full-rate states (``parallel=False``).  ``J_mq``: the motor matrix (motors, n) of a transmission.  0 where
        |q̇_m| is below ``COULOMB_DEADBAND`` × its velocity noise, √(Σ_j J_mq,mj² ``velocity_noise_j``²)."""
        if self.full_rate is None:
            return None
        J = np.asarray(J_mq, dtype=float)
        qdm = self.full_rate[1] @ J.T
        noise = 0.0 if self.velocity_noise is None else np.sqrt(J ** 2 @ self.velocity_noise ** 2)
        return self.filter_columns(_coulomb_steps(qdm, noise))

    def select(self, rows) -> "IdentificationData":
        """The prepared samples ``rows`` (a boolean mask (N,) or indices) only, e.g. a time block held out for
        validation: ``data.select(data.t < 4.0)``; the full-rate states of ``parallel=True`` are not kept."""
        from dataclasses import replace

        idx = np.arange(self.t.size)[np.asarray(rows)]
        if idx.size == 0:
            raise InputError("rows: select at least one sample")
        pick = {k: getattr(self, k)[idx] for k in ("t", "q", "qd", "qdd", "tau")}
        return replace(self, **pick, coulomb=None if self.coulomb is None else self.coulomb[idx], full_rate=None,
                       filter_coefficients=None, saturated=None if self.saturated is None else self.saturated[idx])

    def report(self) -> dict:
        """Plain data of the preparation (what the ``identify`` command prints), with a one-line ``summary``."""
        summary = (f"filtered at {self.cutoff:g} Hz ({self.cutoff_rule}; zero-phase Butterworth), decimated by "
                   f"{self.decimate} from {self.rate:g} Hz; trimmed {self.trimmed[0]} + {self.trimmed[1]} samples "
                   f"(filter transients; standstill {self.standstill[0]} + {self.standstill[1]})")
        if self.resampled:
            summary += f"; {self.resampled}"
        if self.measured_velocity:
            summary += "; q̇ the measured velocities filtered alike, q̈ their differences"
        if self.parallel:
            summary += "; full-rate states kept (parallel filtering of the regressor or of the motors' Coulomb columns)"
        clipped = [] if self.saturated is None else self.saturated.sum(axis=0).tolist()
        constant = constant_torques(self.tau, self.saturated)
        if any(c and not constant[j] for j, c in enumerate(clipped)):
            summary += ("; clipped torques: " + ", ".join(f"joint {j + 1} ({c} samples)" for j, c in
                                                          enumerate(clipped) if c and not constant[j])
                        + " left out of the fit")
        if constant.any():
            summary += ("; no torque measured (one value in every sample): " + ", ".join(
                f"joint {j + 1}" for j in np.flatnonzero(constant)))
        if self.still_joints:
            summary += ("; held still (q, q̇ and q̈ below 1 % of the largest joint's), q̇ and q̈ set to 0: "
                        + ", ".join(f"joint {j + 1}" for j in self.still_joints))
        return {"cutoff_hz": self.cutoff, "decimate": self.decimate, "rate_hz": self.rate,
                "cutoff_rule": self.cutoff_rule, "bandwidth_hz": self.bandwidth,
                "trimmed": list(self.trimmed), "standstill": list(self.standstill), "resampled": self.resampled,
                "samples": int(self.t.size), "parallel": self.parallel, "saturated_samples": clipped or [0] * self.q.shape[1],
                "velocity_noise": None if self.velocity_noise is None else self.velocity_noise.tolist(),
                "measured_velocity": self.measured_velocity,
                "still_joints": [j + 1 for j in self.still_joints], "summary": summary}


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


def moving_joints(P: np.ndarray) -> np.ndarray:
    """Which joints (n,) of a periodogram P (F, n) move: the energy of q_j is at least ``AUTO_MOTION``² times the
    largest joint's (its RMS at least 1 % of the largest RMS)."""
    energy = P[1:].sum(axis=0)
    return energy >= AUTO_MOTION**2 * energy.max()


def position_bandwidth(t, q, energy: float = AUTO_ENERGY, spectrum=None) -> float:
    """The frequency (Hz) below which ``energy`` (default 99 %) of the energy of q lies, largest over the joints
    that move (:func:`moving_joints`).

    Parameters
    ----------
    t : array (N,) s, uniform;  q : array (N, n)
    spectrum : the periodogram ``position_spectrum(t, q)`` when already computed.

    Returns
    -------
    float (Hz); the first non-zero frequency of the periodogram for a joint that does not move.
    """
    f, P = position_spectrum(t, q) if spectrum is None else spectrum
    cum = np.cumsum(P[1:], axis=0)
    total = cum[-1]
    out = f[1]
    for j in np.flatnonzero(moving_joints(P)):
        if total[j] > 0:
            k = int(np.searchsorted(cum[:, j], energy * total[j]))
            out = max(out, float(f[1 + min(k, len(f) - 2)]))
    return out


def noise_floor(P: np.ndarray) -> np.ndarray:
    """The noise floor (n,) of each column of a periodogram P (F, n): its median over the upper half of the band,
    where a measured position holds only sensor noise and quantisation."""
    return np.median(P[P.shape[0] // 2:], axis=0)


def noise_frequency(t, q, snr: float = AUTO_SNR, spectrum=None) -> float:
    """The frequency (Hz) above which the measured q is noise, largest over the joints that move
    (:func:`moving_joints`): q_j carries signal up to the highest frequency where its periodogram, smoothed over 9
    bins, exceeds ``snr`` times :func:`noise_floor`; ``spectrum`` as in :func:`position_bandwidth`."""
    from scipy.ndimage import uniform_filter1d

    f, P = position_spectrum(t, q) if spectrum is None else spectrum
    floor = noise_floor(P)
    out = float(f[1])
    for j in np.flatnonzero(moving_joints(P)):
        above = np.flatnonzero(uniform_filter1d(P[:, j], 9) > snr * floor[j])
        if above.size:
            out = max(out, float(f[above[-1]]))
    return out


def auto_cutoff(t, q, spectrum=None) -> tuple[float, str, float]:
    """The cut-off of ``cutoff="auto"``: (Hz, the rule with its numbers, the bandwidth of q in Hz).

    cutoff = min(max(f_noise, 5 f_99), 10 f_99, 0.2 × rate): f_noise the frequency above which q is noise
    (:func:`noise_frequency`), f_99 the bandwidth of q (:func:`position_bandwidth`): Gautier's rule of thumb of a
    cut-off 5 to 10 times the bandwidth of the motion, lowered towards the noise frequency; ``spectrum`` as in
    :func:`position_bandwidth`.
    """
    tt = np.asarray(t, dtype=float)
    rate = (tt.size - 1) / (tt[-1] - tt[0])
    spectrum = position_spectrum(tt, q) if spectrum is None else spectrum
    band, fn = position_bandwidth(tt, q, spectrum=spectrum), noise_frequency(tt, q, spectrum=spectrum)
    lo, top, hi = AUTO_FACTOR * band, AUTO_FACTOR_MAX * band, AUTO_MAX_FRACTION * rate
    fc = min(max(fn, lo), top, hi)
    why = ("q is noise above it" if fc == fn else f"at least {AUTO_FACTOR:g} x the {band:.3g} Hz bandwidth of q"
           if fc == lo else f"at most {AUTO_MAX_FRACTION:g} x the rate" if fc == hi
           else f"at most {AUTO_FACTOR_MAX:g} x the {band:.3g} Hz bandwidth of q")
    return fc, f"auto: {why}; noise above {fn:.3g} Hz, 99 % of the energy of q below {band:.3g} Hz", band


def lowpass(order: int, cutoff: float, rate: float) -> np.ndarray:
    """The Butterworth low-pass of ``order`` at ``cutoff`` Hz for samples at ``rate`` Hz, as second-order sections
    (sections, 6): their rounding does not grow as cutoff / rate falls, where the transfer function's coefficients
    (b, a) lose every digit (a 0.2 Hz cut-off at 10 kHz filtered a 0.3 rad sine to a 3.9 rad error)."""
    from scipy.signal import butter

    return butter(int(order), cutoff / (rate / 2), output="sos")


def zero_phase(sos: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``x`` (M, ...) filtered along its rows forward and backward by the sections ``sos`` (zero phase, twice the
    order), its ends padded by odd reflection over 3 (order + 1) samples, as ``scipy.signal.filtfilt`` pads."""
    from scipy.signal import sosfiltfilt

    order = 2 * sos.shape[0] - int(np.sum(sos[:, 5] == 0))  # an odd order's section of one pole
    return sosfiltfilt(sos, x, axis=0, padlen=3 * (order + 1))


def velocity_noise(t, q, cutoff: float, order: int = DEFAULT_ORDER, spectrum=None) -> np.ndarray:
    """The standard deviation (n,) (rad/s | m/s) that the noise of the measured q leaves in the prepared q̇.

    The noise of q_j is taken white, at the level N_j of its periodogram's floor (:func:`noise_floor`, as in
    :func:`noise_frequency`) over ln 2 (the median of an exponentially distributed bin).  The zero-phase
    Butterworth filter (gain |H(f)|² per pass) and the central difference (gain sin(2πfh) / h) pass the variance
    σ_j² = N_j ∫ |H(f)|⁴ sin²(2πfh) / h² df to q̇_j; ``spectrum`` as in :func:`position_bandwidth`.
    """
    from scipy import signal

    tt = np.asarray(t, dtype=float)
    f, P = position_spectrum(tt, q) if spectrum is None else spectrum
    rate = (tt.size - 1) / (tt[-1] - tt[0])
    freqz_sos = getattr(signal, "freqz_sos", None) or signal.sosfreqz  # SciPy 1.15 renamed it
    H = freqz_sos(lowpass(order, cutoff, rate), worN=f, fs=rate)[1]
    gain = np.abs(H) ** 4 * (np.sin(2 * np.pi * f / rate) * rate) ** 2
    return np.sqrt(noise_floor(P) / np.log(2) * np.trapezoid(gain, f))


def position_spectrum(t, x) -> tuple[np.ndarray, np.ndarray]:
    """(f (F,) Hz, power spectral density (F, n)) of each column of x sampled at the uniform times t: the
    periodogram (``scipy.signal.periodogram``, Hann window, linear trend removed: a drift under the excitation
    does not take the energy that sets the bandwidth).  A column that is all trend — a constant-velocity ramp,
    whose detrended periodogram, smoothed over 9 bins, nowhere exceeds ``AUTO_SNR`` times its noise floor — keeps
    its trend (only its mean removed; the window keeps its ends from leaking): detrended, its noise would set the
    bandwidth (a 0.2 rad/s ramp at 400 Hz: 198 Hz, and a cut-off at 0.2 × the rate)."""
    from scipy.ndimage import uniform_filter1d
    from scipy.signal import periodogram

    tt = np.asarray(t, dtype=float)
    xx = np.asarray(x, dtype=float)
    if xx.ndim == 1:
        xx = xx[:, None]
    rate = (tt.size - 1) / (tt[-1] - tt[0])
    f, P = periodogram(xx, fs=rate, window="hann", detrend="linear", axis=0)
    trend = ~np.any(uniform_filter1d(P, 9, axis=0) > AUTO_SNR * noise_floor(P), axis=0)
    if trend.any():
        P[:, trend] = periodogram(xx[:, trend], fs=rate, window="hann", detrend="constant", axis=0)[1]
    return f, P


#: Sampling steps prepare_identification_data accepts (s): beyond them, the differences and the derivatives of q
#: over- or underflow in float64 long before a real measurement (1 ns to 1 day).
STEP_RANGE = (1e-9, 86400.0)
#: Longest mean sampling step (s) taken without a warning: a robot's joint log at under 4 Hz is more likely a
#: time column in ms, µs or ns read as seconds, which divides q̇ by 1e3 to 1e9 and q̈ by its square.
SLOW_STEP = 0.25


def _check_step(tt: np.ndarray) -> None:
    """Refuse times whose steps float64 cannot resolve or differentiate over (t ≈ 1e300, steps of 1e-300 s), and
    warn about steps longer than :data:`SLOW_STEP`, naming the unit of t that makes them a robot's rate."""
    with np.errstate(over="ignore", invalid="ignore"):
        span = tt[-1] - tt[0]
        h = span / (tt.size - 1)
    lo, hi = STEP_RANGE
    if not (np.isfinite(span) and lo <= h <= hi):
        fix = _time_unit_fix(h) if np.isfinite(h) else ""
        raise InputError(f"t spans {span:.3g} s in {tt.size - 1} steps ({h:.3g} s each); {fix + '; ' if fix else ''}"
                         f"give times in seconds with a step from {lo:g} to {hi:g} s")
    if np.max(np.abs(tt)) * 16 * np.finfo(float).eps > h:  # a step of fewer than 16 units in the last place
        raise InputError(f"t reaches {np.max(np.abs(tt)):.3g} s, where float64 cannot resolve its steps of {h:.3g} "
                         "s; give times from the start of the record (t - t[0])")
    if h > SLOW_STEP:
        import warnings

        warnings.warn(f"t steps by {h:.4g} s on average (a {1 / h:.3g} Hz log), slower than robots' joint logs, "
                      f"whose rates are tens of Hz or more: {_time_unit_fix(h) or 'give t in seconds'}; the "
                      "velocities and accelerations scale with the unit of t", UserWarning, stacklevel=3)


def _time_unit_fix(h: float) -> str:
    """How to read times whose mean step is ``h``: the first unit of ms, µs, ns that makes a 10 Hz to 10 kHz log
    ("" when none does)."""
    for unit, f in (("milliseconds", "1e3"), ("microseconds", "1e6"), ("nanoseconds", "1e9")):
        if 1e-4 <= h / float(f) <= 0.1:
            return f"if t is in {unit}, give t / {f} (a {float(f) / h:.4g} Hz log)"
    return ""


def _uniform(tt: np.ndarray, qq: np.ndarray, tq: np.ndarray):
    """Uniform time stamps, or jittered ones resampled onto a uniform grid: (t, q, tau, h, note)."""
    dt = np.diff(tt)
    if np.any(dt <= 0):
        row = int(np.flatnonzero(dt <= 0)[0]) + 1
        raise InputError(f"t must increase strictly; row {row} (0-based) is not after the one before")
    h = float(np.mean(dt))
    spread = float(np.max(np.abs(dt - h))) / h
    if spread <= 1e-6:
        return tt, qq, tq, h, ""
    from scipy.interpolate import CubicSpline

    step = float(np.median(dt))
    gaps = np.flatnonzero(dt > 5 * step)
    if gaps.size:
        first = int(gaps[0])
        where = (f"a gap of {dt[first]:g} s before row {first + 1} (0-based), {dt[first] / step:.3g} times the median "
                 f"step {step:g} s; split the log there" if gaps.size == 1 else
                 f"{gaps.size} gaps of more than 5 median steps ({step:g} s), before rows "
                 f"{', '.join(str(g + 1) for g in gaps[:10])}{', ...' if gaps.size > 10 else ''} (0-based; the first "
                 f"{dt[first]:g} s); split the log at each")
        raise InputError(f"t has {where} and prepare each part on its own (the parts identify together as separate "
                         "runs: rd.identify(robot, [part1, part2, ...]), or robodyn identify ROBOT part1.csv "
                         "part2.csv ...)")
    grid = tt[0] + step * np.arange(int(np.floor((tt[-1] - tt[0]) / step + 1e-9)) + 1)
    # one linear operator on both sides of Γ = D K, as the filter ("parallel" preparation)
    qs, ts = CubicSpline(tt, qq, axis=0)(grid), CubicSpline(tt, tq, axis=0)(grid)
    note = (f"non-uniform time stamps (steps {dt.min():g} to {dt.max():g} s) resampled by cubic spline onto a "
            f"uniform grid of {step:g} s (the median step), {grid.size} samples")
    return grid, qs, ts, step, note


def prepare_identification_data(t, q, tau, cutoff: float | str | None = "auto", decimate: int | None = None,
                                order: int = DEFAULT_ORDER, trim: bool = True,
                                parallel: bool = False, *, qd=None) -> IdentificationData:
    """Filter q and τ (zero-phase Butterworth), differentiate q (or filter the measured ``qd`` and differentiate
    it), trim transients and standstill, decimate.

    Parameters
    ----------
    t : array (N,) s — sampling instants, strictly increasing.  Uniform steps (relative spread ≤ 1e-6) are used as
        they are; jittered steps (a controller log stepping by 10 or 12 ms) are resampled by a cubic spline of q and
        τ onto a uniform grid at the median step (reported in ``resampled``); a gap of more than 5 median steps is
        refused.
    q : array (N, n) — measured positions (rad | m).
    tau : array (N, n) — measured torques (N m | N).
    cutoff : float, "auto" or None
        Cut-off frequency of the low-pass filter (Hz).  ``"auto"`` (default; None means the same): from the
        spectrum of the measured q (:func:`auto_cutoff`); ``cutoff_rule`` on the result states the numbers.
    decimate : int or None
        Keep one sample in ``decimate`` after filtering.  Default: ⌊rate / (4 cutoff)⌋ (the decimated data still
        have a Nyquist frequency of twice the cut-off), reduced so that at least ``MIN_KEPT`` (2000) samples
        remain (all of them when there are fewer).
    order : int
        Butterworth order (default 4); the forward-backward pass (:func:`zero_phase`) gives zero phase and
        twice the order.
    trim : bool
        Remove the filter's edge transients — 3 × order / (2π cutoff) seconds at each end, a few time
        constants of the filter — and the standstill before the motion starts and after it ends (rows where every
        joint's |q̇| is below 1 % of its largest |q̇|); reported in ``trimmed`` and ``standstill``.
    parallel : bool
        Also keep the filtered q, q̇, q̈ at the full (resampled) rate (``full_rate``, 3 M n floats) and the filter,
        for ``rd.identify(..., parallel=data)``: the regressor is then computed at the full rate and filtered,
        trimmed and decimated like τ (:meth:`IdentificationData.filter_columns`) — Gautier's parallel filtering.
    qd : array (N, n) or None
        Measured velocities (rad/s | m/s), e.g. a controller's logged q̇: resampled and filtered like q (the same
        filter, its cut-off from the spectrum of q), q̈ their central differences (``measured_velocity``).  None
        (default): q̇ and q̈ are the differences of the filtered q.

    Returns
    -------
    IdentificationData with t, q, qd, qdd, tau (trimmed and decimated, N' rows) and the report of what was done.

    Notes
    -----
    q̇ and q̈ are central differences of the filtered q (second order, ``numpy.gradient``; one-sided at the ends);
    with ``qd``, q̇ is the filtered measured velocity and q̈ its central differences.  The Coulomb dead band
    (``velocity_noise``) is that of the differentiated q in both cases.  A joint held still while the others move
    (q, q̇ and q̈ each below 1 % of the largest joint's RMS) gets q̇ = q̈ = 0 (``still_joints``).
    """
    tt = as_real_array("t", t).astype(float)
    if tt.ndim != 1:
        raise InputError(f"t has shape {tt.shape}; give a 1-D array of sampling instants (s)")
    qq, tq = check_samples(q, tau)
    vv = None if qd is None else check_samples(qd, qq, names=("qd", "q"))[0]
    if tt.shape[0] != qq.shape[0]:
        raise InputError(f"t has {tt.shape[0]} samples but q and tau have {qq.shape[0]} rows; give one time per row")
    if not np.all(np.isfinite(tt)):
        row = int(np.flatnonzero(~np.isfinite(tt))[0])
        raise InputError(f"t: row {row} (0-based) is {tt[row]}; give finite times")
    if (isinstance(order, (bool, np.bool_)) or not isinstance(order, (int, float, np.integer, np.floating))
            or not np.isfinite(order) or int(order) != order or order < 1):
        raise InputError(f"order = {order!r}; give an integer >= 1")
    if not isinstance(parallel, (bool, np.bool_)):
        raise InputError(f"parallel = {parallel!r}; give True or False")
    pad = 3 * (int(order) + 1)
    if tt.size <= pad + 2:
        raise InputError(f"{tt.size} samples are too few to filter with order {order}; give more than {pad + 2}")
    _check_step(tt)
    clipped = saturated(tq)
    t_raw = tt
    n = qq.shape[1]
    tt, qx, tq, h, resampled = _uniform(tt, qq if vv is None else np.hstack([qq, vv]), tq)
    qq, vv = qx[:, :n], None if vv is None else qx[:, n:]
    rate = 1.0 / h
    spectrum = position_spectrum(tt, qq)  # of the cut-off, the bandwidth and the velocity noise
    if cutoff is None or (isinstance(cutoff, str) and cutoff == "auto"):
        fc, rule, bandwidth = auto_cutoff(tt, qq, spectrum)
    else:
        bandwidth = position_bandwidth(tt, qq, spectrum=spectrum)
        if isinstance(cutoff, str):
            raise InputError(f"cutoff = {cutoff!r}; give a frequency in Hz or 'auto'")
        c = as_real_array("cutoff", cutoff)
        if c.ndim:
            raise InputError(f"cutoff = {cutoff!r}; give one frequency in Hz (the same for every joint) or 'auto'")
        fc = float(c)
        rule = "given"
    lowest = rate / tt.size  # 1 / duration: the lowest frequency the record resolves
    if not (np.isfinite(fc) and lowest <= fc < rate / 2):
        raise InputError(f"cutoff = {cutoff!r} Hz; give a frequency from {lowest:g} Hz (1 / the duration of the "
                         f"record) to below the Nyquist frequency {rate / 2:g} Hz")
    sos = lowpass(order, fc, rate)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, naming its cause
        qf = zero_phase(sos, qq)
        tf = zero_phase(sos, tq)
        qd = np.gradient(qf, h, axis=0, edge_order=2) if vv is None else zero_phase(sos, vv)
        qdd = np.gradient(qd, h, axis=0, edge_order=2)
    still = tuple(int(j) for j in np.flatnonzero(~moving_joints(spectrum[1]) & _slight(qd) & _slight(qdd)))
    qd[:, list(still)] = qdd[:, list(still)] = 0.0  # a held joint's q̇, q̈: noise (IdentificationData.still_joints)
    rates = "q" if vv is None else "qd"  # what q̇ and q̈ come from
    measured = {"tau": tq, "q": qq, "qd": vv}
    for name, x, source in (("tau", tf, "tau"), ("q", qf, "q"), ("qd", qd, rates), ("qdd", qdd, rates)):
        if not np.isfinite(x).all():
            raise InputError(f"filtering and differentiating overflow: {name} is not finite (|{source}| up to "
                             f"{np.max(np.abs(measured[source])):.3g}, time step {h:.3g} s); give "
                             "values in SI units (rad, m, N m, N, s)")
    N = tt.size
    first, last, rest = 0, N, (0, 0)
    if trim:
        edge = int(np.ceil(3 * int(order) / (2 * np.pi * fc) * rate))
        top = np.abs(qd).max(axis=0)
        moving = np.any(np.abs(qd) > STANDSTILL * np.where(top > 0, top, np.inf), axis=1)
        idx = np.flatnonzero(moving)
        lo, hi = (int(idx[0]), int(idx[-1]) + 1) if idx.size else (0, N)
        rest = (lo, N - hi)
        first, last = max(edge, lo), min(N - edge, hi)
        if last - first < max(pad, 3):
            raise InputError(f"after trimming the filter transients ({edge} samples at each end) and the standstill "
                             f"({rest[0]} + {rest[1]} samples), {max(last - first, 0)} samples remain; give a "
                             f"longer measurement or trim=False")
    kept = last - first
    if decimate is None:
        r = max(1, min(int(np.floor(rate / (4 * fc))), kept // MIN_KEPT))
    else:
        r = decimate
        if isinstance(r, bool) or int(r) != r or r < 1:
            raise InputError(f"decimate = {decimate!r}; give an integer >= 1")
        if -(-kept // int(r)) < 3:  # rows left: ceil(kept / r)
            raise InputError(f"decimate = {decimate!r} leaves {-(-kept // int(r))} of the {kept} samples kept; give "
                             f"at most {max(kept // 3, 1)}, or leave it to the default (at least "
                             f"{min(kept, MIN_KEPT)} samples)")
    r = int(r)
    keep = slice(first, last, r)
    full = (qf, qd, qdd) if parallel else None
    noise = velocity_noise(tt, qq, fc, order, spectrum)
    coulomb = zero_phase(sos, _coulomb_steps(qd, noise))[keep]  # Coulomb columns filtered as τ was
    reach = int(order) / (np.pi * fc)  # s: two time constants, where the filter's response to a clipped step fades
    sat = None
    if clipped.any():
        sat = np.stack([_near(tt[keep], t_raw[clipped[:, j]], reach) for j in range(clipped.shape[1])], axis=1)
    return IdentificationData(t=tt[keep], q=qf[keep], qd=qd[keep], qdd=qdd[keep], tau=tf[keep], cutoff=fc,
                              decimate=r, rate=rate, cutoff_rule=rule, bandwidth=bandwidth,
                              trimmed=(first, N - last), standstill=rest, resampled=resampled, full_rate=full,
                              filter_coefficients=sos if parallel else None, coulomb=coulomb, saturated=sat,
                              velocity_noise=noise, measured_velocity=vv is not None, still_joints=still)


def _slight(x: np.ndarray) -> np.ndarray:
    """Which columns (n,) of x (N, n) have an RMS below ``AUTO_MOTION`` of the largest column's."""
    rms = np.sqrt(np.mean(x ** 2, axis=0))
    return rms < AUTO_MOTION * rms.max()


def _near(t: np.ndarray, events: np.ndarray, reach: float) -> np.ndarray:
    """(len(t),) bool: the times within ``reach`` of one of the sorted ``events``."""
    if events.size == 0:
        return np.zeros(t.shape, dtype=bool)
    k = np.clip(np.searchsorted(events, t), 1, events.size - 1) if events.size > 1 else np.zeros(t.shape, int)
    gap = np.abs(t - events[k])
    if events.size > 1:
        gap = np.minimum(gap, np.abs(t - events[k - 1]))
    return gap <= reach
