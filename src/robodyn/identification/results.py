"""The result of :func:`robodyn.identify`: estimates, statistics, the solver's report; prediction, validation on
held-out data (:class:`Validation`), plot and file.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from robodyn.arrays import finite_array, finite_result
from robodyn.errors import InputError
from robodyn.identification.data import constant_torques
from robodyn.identification.factors import relative_std
from robodyn.identification.position import POSITION_MARGIN
from robodyn.identification.reduction import min_velocities, predicted, rows_used
from robodyn.identification.samples import filtered_coulomb, run_times, stacked_runs
from robodyn.model.robot import Robot


@dataclass(frozen=True, eq=False)
class Identification:
    """Result of :func:`robodyn.identify`.

    Attributes
    ----------
    model : Robot — the robot whose geometry (and, for "physical", prior parameters) was used.
    method : str — "ols", "wls", "irls" or "physical".
    friction : bool — whether Fc, Fv, Foff of every joint were identified.
    base : BaseParameters — the base parameters identified (their names, regressor columns, true values of ``model``).
    names : tuple of str (b,) — base parameter names (``ZZR1``, …, ``Fc1``, ``Fv1``, ``Foff1``, …).
    values : ndarray (b,) — estimates (SI units of each parameter).
    std : ndarray (b,) — standard deviations (for "physical": those of the OLS estimate).
    covariance : ndarray (b, b)
    condition_number : float — cond(W) of the observation matrix (of its columns the data excite, for
        "physical" holding the others at the model's values).
    residual_rms : ndarray (n,) — RMS of the torque residual of each joint (N m | N); NaN for a joint left out of
        the fit (weight 0).
    noise : ndarray (n,) — σ_j estimated from the residuals of each joint (N m | N): of the OLS fit; for "wls" of the
        weighted fit (the noise levels its weights settled on); for "irls" the robust scale 1.4826 × the median
        absolute deviation its weights settled on (outliers do not inflate it); NaN for a joint left out.
    samples : int — N.
    iterations : int — IRLS iterations; "wls": passes of the noise levels (1 otherwise).
    converged : bool — False when IRLS hit its iteration limit (``message`` says so).
    message : str
    robot : Robot or None — "physical": the model with the identified standard parameters, rotor inertias and
        friction (Stribeck terms removed); None for the other methods.
    standard : ndarray (p,) or None — "physical": the identified standard parameter vector (order of
        ``standard_parameter_names(model, friction, transmission)``).
    transmission : Transmission or None — the transmission given (its motors' parameters are in ``names``).
    identified_transmission : Transmission or None — "physical" with a transmission: the same coupling with the
        identified rotor inertias J_m, viscous and Coulomb friction F_vm, F_cm of every motor.
    equations : ndarray (n,) — equations (rows) of each joint used by the fit (``min_velocity`` drops some).
    weights : ndarray (n,) — the per-joint weights w_j of the fit: the user's; by default 1, and for "physical"
        Gautier's 1/σ_j² of the least-squares residual, scaled to a median of 1
        (:func:`robodyn.identification.solvers.gautier_weights`: a joint under 1 % of the largest torque RMS gets 1,
        and the median is that of the others); 0 for a joint whose equations were left out (the user's weight 0, or
        a torque that holds one value in every sample: no sensor there).
    solver : dict or None — "physical": the conic solver's report: status, iterations, constraint violation,
        objective, lower bound, relative gap, fit gap, accuracy, certified, regularization and its rule
        (docs/identification.md).
    parallel : bool — whether the regressor was filtered and decimated like τ (``identify(..., parallel=data)``).
    prior_share : ndarray (p,) or None — "physical": per standard parameter (order of ``standard``), the share of
        the prior in its estimate, 0 (the data alone) to 1 (the prior alone); ``prior_determined`` names those
        above ½.  None for the other methods.
    position_joints : tuple of int — the joints (0-based) whose equation carries the position term
        k_j sin q_j + c_j cos q_j (``position_terms``; docs/identification.md); () for none.
    position_coefficients : ndarray (k, 2) or None — (k_j, c_j) of every joint of ``position_joints`` (N m).
    position_std : ndarray (k, 2) or None — their standard deviations (of the least-squares fit).
    position_shares : ndarray (n,) or None — ``position_terms="auto"``: per joint, the share of its least-squares
        residual that the term removes (above ``POSITION_SHARE``: selected).  None when the joints were given.
    position_range : ndarray (k, 2) or None — the least and greatest q_j (rad) of the identification data, for
        every joint of ``position_joints``: the term is a fit over that range, not a model of what the joint does
        beyond it, so :meth:`predict` (and :meth:`validate`) warn where q_j leaves it by more than
        ``POSITION_MARGIN`` of its width.
    """

    model: Robot
    method: str
    friction: bool
    base: object
    names: tuple
    values: np.ndarray
    std: np.ndarray
    covariance: np.ndarray
    condition_number: float
    residual_rms: np.ndarray
    noise: np.ndarray
    samples: int
    iterations: int = 1
    converged: bool = True
    message: str = ""
    robot: Robot | None = None
    standard: np.ndarray | None = field(default=None)
    transmission: object = None
    identified_transmission: object = None
    equations: np.ndarray | None = None
    weights: np.ndarray | None = None
    solver: dict | None = None
    parallel: bool = False
    prior_share: np.ndarray | None = None
    position_joints: tuple = ()
    position_coefficients: np.ndarray | None = None
    position_std: np.ndarray | None = None
    position_shares: np.ndarray | None = None
    position_range: np.ndarray | None = None

    @property
    def prior_determined(self) -> tuple:
        """"physical": the standard parameters that the prior (the model's values, through the regularization)
        rather than the data determined — a prior share above ½ (``prior_share``); () for the other methods."""
        if self.prior_share is None:
            return ()
        from robodyn.identification.consistent import PRIOR_SHARE
        from robodyn.parameters.regressor import standard_parameter_names

        names = standard_parameter_names(self.model, self.friction, self.transmission)
        return tuple(k for k, s in zip(names, self.prior_share) if s > PRIOR_SHARE)

    @property
    def relative_std(self) -> np.ndarray:
        """100 σ / |value| (%); inf where the value is 0."""
        return relative_std(self.values, self.std)

    def predict(self, q, qd, qdd, coulomb=None) -> np.ndarray:
        """Torques D_B(q, q̇, q̈) K̂ (..., n) of the identified model (friction included when identified), plus
        k_j sin q_j + c_j cos q_j on the joints of ``position_joints``.

        ``coulomb`` (N, n), optional: the values of the Coulomb columns in place of sign(q̇), e.g.
        ``IdentificationData.coulomb``, as ``rd.identify(robot, data)`` fits; q, q̇, q̈ are then (N, n).  With a
        ``transmission``, (N, n + motors): the motors' columns follow (:meth:`IdentificationData.motor_coulomb`).
        """
        q, qd, qdd = (finite_array(k, x) for k, x in (("q", q), ("qd", qd), ("qdd", qdd)))
        shape = np.broadcast_shapes(q.shape, qd.shape, qdd.shape)
        n = self.model.n
        if shape[-1:] != (n,):
            raise InputError(f"q, qd, qdd have shape {shape}; the last axis must be n = {n}")
        if coulomb is not None:
            coulomb = finite_array("coulomb", coulomb)
            widths = (n,) if self.transmission is None else (n, n + len(self.transmission.J_mq))
            if len(shape) != 2:
                raise InputError(f"with coulomb, q, qd, qdd must be (N, {n}) arrays of N samples (they are {shape}): "
                                 f"for one state, give q[None], qd[None], qdd[None] with coulomb (1, {widths[0]})")
            if coulomb.shape[:1] != shape[:1] or coulomb.shape[1:] not in [(w,) for w in widths]:
                raise InputError(f"coulomb has shape {coulomb.shape}; give one value per sample and joint (and motor, "
                                 f"with a transmission): {' or '.join(f'({shape[0]}, {w})' for w in widths)}")
            patched = filtered_coulomb(self.base, coulomb)
        if len(self.values) != len(self.base.names):
            raise InputError(f"this identification has {len(self.values)} values for {len(self.base.names)} base "
                             "parameters: a fleet result (per-robot parameters); predict one robot's torques with "
                             "base.regressor(q, qd, qdd) @ robodyn.distributed.fleet_values(result, name)")
        flat = [np.broadcast_to(x, shape).reshape(-1, n) for x in (q, qd, qdd)]
        self._warn_beyond_position_range(flat[0])
        theta = (np.concatenate([self.position_coefficients.ravel(), self.values]) if self.position_joints
                 else self.values)
        W = None if coulomb is None else lambda blk: patched(flat[0][blk], flat[1][blk], flat[2][blk], blk)
        out = predicted(self.base, *flat, theta, self.position_joints, W)
        return finite_result("Identification.predict", out.reshape(shape))

    def _warn_beyond_position_range(self, q) -> None:
        """Warn of the joints whose position term is asked for where q_j (N, n) leaves ``position_range``."""
        if not self.position_joints or self.position_range is None or not len(q):
            return
        lo, hi = self.position_range.T
        margin = POSITION_MARGIN * (hi - lo)
        x = q[:, list(self.position_joints)]
        low, high = x.min(axis=0), x.max(axis=0)
        beyond = [(j, a, b, l0, h0) for j, a, b, l0, h0, m in zip(self.position_joints, low, high, lo, hi, margin)
                  if a < l0 - m or b > h0 + m]
        if beyond:
            listed = ", ".join(f"joint {j + 1} ({self.model.q_names[j]}: q from {a:.3g} to {b:.3g} rad, fitted on "
                               f"[{l0:.3g}, {h0:.3g}])" for j, a, b, l0, h0 in beyond)
            warnings.warn(f"robot '{self.model.name}': these states take {listed} outside the range of the "
                          "identification data, where the position term k_j sin q_j + c_j cos q_j was fitted: the "
                          "term is a fit over that range, not a model of what the joint does beyond it, and its "
                          "torque there can be far off. Identify on data that cover the range, or with "
                          "position_terms=None.", UserWarning, stacklevel=3)

    def validate(self, q, qd=None, qdd=None, tau=None, min_velocity=None) -> "Validation":
        """How well the identified model predicts torques it was not fitted to (held-out data).

        For every joint j: the relative RMS error 100 ‖τ_j − τ̂_j‖ / ‖τ_j‖ (%), the RMS error ‖τ_j − τ̂_j‖ / √N_j
        (N m | N), and the samples N_j it is taken over, τ̂ = :meth:`predict`.

        Parameters
        ----------
        q, qd, qdd, tau : array (N, n) — held-out samples, prepared as the identification data were (same
            filter: e.g. ``rd.identification.prepare_identification_data(..., cutoff=data.cutoff)`` or one prepared run split in
            time); or, as in :func:`robodyn.identify`, held-out runs: a list of IdentificationData or tuples.
        min_velocity : float or array (n,) or None — score joint j only on the samples where |q̇_j| ≥
            min_velocity_j (the toolboxes' convention near velocity reversals); default: every sample.
            Held-out IdentificationData put their ``coulomb`` (and, with a transmission, their motors' smooth
            columns) in the Coulomb columns, as the fit does.  A joint whose held-out torque holds one value in
            every sample (no torque measured there) is not scored: NaN, 0 samples.

        Returns
        -------
        Validation
        """
        q, qd, qdd, tau, coulomb, clipped = stacked_runs(self.model, q, qd, qdd, tau, self.transmission)
        speeds = min_velocities(min_velocity, q.shape[1])
        unmeasured = np.flatnonzero(constant_torques(tau, clipped))
        if len(unmeasured) == q.shape[1]:
            raise InputError("every joint's held-out torque holds one value in every sample: nothing was measured "
                             "to score")
        use = rows_used(qd, clipped, speeds, whole=True, left_out=unmeasured)
        use = np.ones(q.shape, dtype=bool) if use is None else use
        r = tau - self.predict(q, qd, qdd, coulomb=coulomb)
        count = use.sum(axis=0)
        ss_r = np.sum(np.where(use, r, 0.0) ** 2, axis=0)
        ss_t = np.sum(np.where(use, tau, 0.0) ** 2, axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(ss_t > 0, 100.0 * np.sqrt(ss_r / ss_t), np.where(ss_r > 0, np.inf, 0.0))
            rms = np.sqrt(ss_r / count)
        scored = count > 0
        return Validation(relative_rms_percent=np.where(scored, rel, np.nan), rms=np.where(scored, rms, np.nan),
                          samples=count, min_velocity=speeds)

    def plot(self, path, q, qd=None, qdd=None, tau=None, t=None, title: str | None = None) -> None:
        """Write a PNG: measured and predicted torques of every joint against time (or sample index), and the
        residual.  Written to a temporary name and renamed: no partial file.

        Parameters
        ----------
        path : str or PathLike
        q, qd, qdd, tau : array (N, n) — the samples (e.g. a validation trajectory) and the measured torques; or,
            as in :meth:`validate`, runs: a list of IdentificationData (predicted with their filtered Coulomb
            columns, as :meth:`validate` scores them, and drawn against their times one after the other) or tuples.
        t : array (N,) or None — times (s); None: sample index, or the prepared runs' times.
        """
        from matplotlib.figure import Figure  # no pyplot: the caller's backend and figures are left alone
        from robodyn.sanitize import figure_text  # model-file names shown, never parsed as math text

        from robodyn.files import save_figure

        if t is None:
            t = run_times(q) if qd is None and qdd is None and tau is None else None
        q, qd, qdd, tau, coulomb, _ = stacked_runs(self.model, q, qd, qdd, tau, self.transmission)
        x = np.arange(len(q)) if t is None else np.asarray(t, dtype=float)
        if x.shape != (len(q),):
            raise InputError(f"t has shape {np.shape(t)}; give one time per sample ({len(q)})")
        pred = self.predict(q, qd, qdd, coulomb=coulomb)
        n = self.model.n
        fig = Figure(figsize=(8, 1.9 * n + 0.8))
        axes = np.atleast_1d(fig.subplots(n, 1, sharex=True))
        for j in range(n):
            ax = axes[j]
            ax.plot(x, tau[:, j], "-", color="0.6", lw=1.2, label="measured")
            ax.plot(x, pred[:, j], "-", color="C0", lw=0.9, label="predicted")
            ax.plot(x, tau[:, j] - pred[:, j], "-", color="C3", lw=0.6, label="residual")
            rms = float(np.sqrt(np.mean((tau[:, j] - pred[:, j]) ** 2)))
            ax.set_ylabel(f"τ{j + 1}")
            ax.set_title(f"joint {j + 1}: residual RMS {rms:.3g}", fontsize=8, loc="right")
        axes[0].legend(fontsize=7, ncol=3, loc="upper left")
        axes[-1].set_xlabel("t (s)" if t is not None else "sample")
        fig.suptitle(title or f"{figure_text(self.model.name)}: measured vs identified torques ({self.method})", fontsize=10)
        fig.tight_layout()
        save_figure(fig, path)

    def to_dict(self) -> dict:
        """Plain Python data (what ``save`` writes)."""
        d = {
            "robot": self.model.name, "method": self.method, "friction": self.friction, "samples": self.samples,
            "condition_number": float(self.condition_number),
            "parameters": [
                {"name": n, "value": float(v), "std": float(s) if np.isfinite(s) else None,  # None: undefined
                 "relative_std_percent": float(r) if np.isfinite(r) else None}  # None: σ / |0| is not defined
                for n, v, s, r in zip(self.names, self.values, self.std, self.relative_std)
            ],
            "residual_rms": [float(x) if np.isfinite(x) else None for x in self.residual_rms],  # None: left out
            "noise_std": [float(x) if np.isfinite(x) else None for x in self.noise],
            "iterations": self.iterations, "converged": self.converged, "parallel_filtering": self.parallel,
        }
        if self.equations is not None:
            d["equations_per_joint"] = [int(x) for x in self.equations]
        if self.weights is not None:
            d["weights"] = [float(x) for x in self.weights]
        if self.solver is not None:
            d["solver"] = {k: (v if isinstance(v, (str, int, bool)) else float(v)) for k, v in self.solver.items()}
        if self.transmission is not None:
            d["transmission"] = {"motor_matrix": [[float(x) for x in row] for row in self.transmission.J_mq]}
        if self.standard is not None:
            from robodyn.parameters.regressor import standard_parameter_names

            names = standard_parameter_names(self.model, self.friction, self.transmission)
            d["standard_parameters"] = dict(zip(names, (float(x) for x in self.standard)))
        if self.prior_share is not None:
            d["prior_share"] = dict(zip(names, (float(x) for x in self.prior_share)))
            d["prior_determined"] = list(self.prior_determined)
        if self.position_joints or self.position_shares is not None:
            spans = ([{"q_min": float(a), "q_max": float(b)} for a, b in self.position_range]
                     if self.position_range is not None else [{}] * len(self.position_joints))
            d["position_terms"] = {
                "joints": [j + 1 for j in self.position_joints],
                "coefficients": [{"joint": j + 1, "sin": float(kc[0]), "cos": float(kc[1]), "sin_std": float(sd[0]),
                                  "cos_std": float(sd[1])} | span for j, kc, sd, span in zip(
                                      self.position_joints, self.position_coefficients, self.position_std, spans)]
                if self.position_joints else [],
                "shares": None if self.position_shares is None else [float(x) for x in self.position_shares]}
        return d

    def save(self, path, model_file=None) -> None:
        """Write the result's estimates and statistics as YAML (atomically: never a partial file); the format is
        that of :meth:`to_dict` (docs/identification.md, "Files").  It is not a model file: write the identified
        model with ``rd.save(result.robot, path)`` ("physical").  ``model_file``: the path of that model file,
        recorded as ``model_file``."""
        import yaml

        from robodyn.files import write_atomically

        d = self.to_dict()
        if model_file is not None:
            d["model_file"] = str(model_file)
        text = yaml.safe_dump(d, sort_keys=False)
        write_atomically(path, lambda fh: fh.write(text), what="identification file")


@dataclass(frozen=True, eq=False)
class Validation:
    """Result of :meth:`Identification.validate`: the prediction error on held-out samples, per joint.

    Attributes
    ----------
    relative_rms_percent : ndarray (n,) — 100 ‖τ_j − τ̂_j‖ / ‖τ_j‖ (%) over the samples used; NaN for a joint
        not scored (no torque measured).
    rms : ndarray (n,) — ‖τ_j − τ̂_j‖ / √N_j (N m | N); NaN for a joint not scored.
    samples : ndarray (n,) of int — N_j, the samples of joint j used (``min_velocity`` drops the slow ones).
    min_velocity : ndarray (n,) or None — the threshold given (rad/s | m/s).
    """

    relative_rms_percent: np.ndarray
    rms: np.ndarray
    samples: np.ndarray
    min_velocity: np.ndarray | None = None

    @property
    def mean_relative_rms_percent(self) -> float:
        """The mean over the joints scored of the relative RMS error (%)."""
        return float(np.nanmean(self.relative_rms_percent))

    def to_dict(self) -> dict:
        """Plain Python data (what ``robodyn identify --validate`` writes)."""
        d = {"relative_rms_percent": [float(x) if np.isfinite(x) else None for x in self.relative_rms_percent],
             "mean_relative_rms_percent": self.mean_relative_rms_percent,
             "rms": [float(x) if np.isfinite(x) else None for x in self.rms], "samples": [int(x) for x in self.samples]}
        if self.min_velocity is not None:
            d["min_velocity"] = [float(x) for x in self.min_velocity]
        return d
