"""Dynamic identification by least squares on the base parameters (Khalil & Dombre §9.4, [9.36], [9.40]).

The inverse dynamic model is linear in the base parameters K_B (and in the friction parameters Fc, Fv and the
offsets Foff of [9.26]–[9.28]):  Γ = D_B(q, q̇, q̈) K_B.  Stacking N samples of the n joints gives the
over-determined system  y = W K_B + ρ,  W (N n × b), which is solved

- ``"ols"``: ordinary least squares, K̂ = W⁺ y;  σ² = ‖ρ‖² / (N n − b),  cov = σ² (WᵀW)⁻¹;
- ``"wls"``: weighted least squares with the noise of each joint (Gautier): σ_j² = ‖ρ_j‖² / (N − b_j) from the
  residual ρ_j of joint j (b_j the parameters appearing in its equations), rows of joint j divided by σ_j,
  cov = (Wᵀ Σ⁻¹ W)⁻¹; the σ_j start from the OLS residual and are re-estimated from the weighted fit's until they
  settle (a few passes over the (b + 1)-square factors: the OLS residual of a light joint carries the heavy
  joints' noise);
- ``"irls"``: iteratively re-weighted least squares, robust to outliers: residuals scaled per joint by their
  median absolute deviation, Huber (c = 1.345) or bisquare (c = 4.685) weights, bounded iterations;
- ``"physical"``: the standard parameters themselves, constrained to be physically consistent — every link's
  4 × 4 pseudo-inertia matrix P_j = [[½ tr(J_j) 1 − J_j, MS_j], [MS_jᵀ, M_j]] positive semi-definite (which
  contains M_j ≥ 0 and the triangle inequalities), rotor inertias and friction coefficients Fc, Fv ≥ 0 — a
  semidefinite program (cvxpy) minimising the same least-squares fit of Γ = D_B Ψ K, Ψ the map from the standard
  to the base parameters ([9.40]), plus a small regularisation towards the standard parameters of the model
  given (the fit fixes only the base parameters; the regularisation picks the consistent set nearest the model).

With a transmission (``transmission=``), the rotor inertia and the viscous and Coulomb friction of every motor on
q̇_m = J_mq q̇ are parameters too (De Luca; [9.29]–[9.33]), grouped with the link parameters by
:func:`robodyn.base_parameters`.  ``min_velocity`` drops the rows of a joint's equation where that joint is too slow
for the sign of its Coulomb friction to be trusted; ``weights`` weight the joints' equations.
:func:`essential_parameters` reduces the base set to the parameters the data need (Pham & Gautier).

One driver serves every source: the samples (NumPy arrays in memory, or Dask arrays and Samples on a cluster)
are reduced chunk by chunk by the same functions (:mod:`robodyn.identification.reduction`) to per-joint factors
R_j ((b + 1) × (b + 1), R_jᵀ R_j = [W_j y_j]ᵀ [W_j y_j]), so memory does not grow with N and
‖y_j − W_j K‖ = ‖R_j [K; −1]‖.  The rank check, the estimate (from the triangular factor of the stacked R_j, the
columns of W scaled to unit norm; relative accuracy about ε cond(W_scaled)²) and the covariance follow, then
the method's solver, one function per method of the table :data:`FITS`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
import scipy.linalg

from robodyn.arrays import as_real_array, finite_array, finite_result
from robodyn.identification.consistent import PhysicalBounds, nearest_consistent, pseudo_inertia  # noqa: F401
from robodyn.identification.reduction import (BLOCK, CHUNK, ArraySource, DaskSource, Samples, dask_modules, factor,
                                              gram, is_cluster_input, position_columns, qr_stack, robot_names,
                                              sample_arrays)
from robodyn.model.robot import check_robot
from robodyn.progress import progress
from robodyn.errors import InputError
from robodyn.model.robot import Robot

#: Relative tolerance of the identifiability test: a parameter whose (unit-norm) regressor column lies within
#: this distance of the span of the columns before it is not excited by the data (cond(W) of the column-scaled
#: observation matrix ≳ 1/RANK_TOL).  Above the √ε ≈ 1.5e-8 resolution of the accumulated Gram matrices.
RANK_TOL = 1e-6


class IdentificationError(InputError):
    """Data that cannot identify the requested parameters (too few samples, unexcited parameters)."""


@dataclass(frozen=True, eq=False)
class Identification:
    """Result of :func:`identify`.

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
    condition_number : float — cond(W) of the observation matrix.
    residual_rms : ndarray (n,) — RMS of the torque residual of each joint (N m | N).
    noise : ndarray (n,) — σ_j estimated from the residuals of each joint (N m | N): of the OLS fit; for "wls" of the
        weighted fit (the noise levels its weights settled on).
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
    weights : ndarray (n,) — the user's per-joint weights of the fit (1 by default).
    solver : dict or None — "physical": the conic solver, its status, iterations, the largest violation of the
        constraints by the solver's point (the returned parameters are projected onto them), the objective at the
        returned parameters, a lower bound of the optimum from the dual variables, their relative gap and a
        sentence stating the accuracy, whether it is certified, the regularization and how it was chosen.
    parallel : bool — whether the regressor was filtered and decimated like τ (``identify(..., parallel=data)``).
    prior_share : ndarray (p,) or None — "physical": per standard parameter (order of ``standard``), the share of
        the prior in its estimate, 0 (the data alone) to 1 (the prior alone); ``prior_determined`` names those
        above ½.  None for the other methods.
    position_joints : tuple of int — the joints (0-based) whose equation carries the position term
        k_j sin q_j + c_j cos q_j (``position_terms``; docs/identification.md); () for none.
    position_coefficients : ndarray (k, 2) or None — (k_j, c_j) of every joint of ``position_joints`` (N m).
    position_std : ndarray (k, 2) or None — their standard deviations (of the least-squares fit).
    position_shares : ndarray (n,) or None — ``position_terms="auto"``: per joint, the share of its least-squares
        training residual (of the fit without terms) that the term removes when fitted with the base parameters;
        the joints above ``POSITION_SHARE`` get it.  None when the joints were given.
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
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.values != 0, 100.0 * self.std / np.abs(self.values), np.inf)

    def predict(self, q, qd, qdd, coulomb=None) -> np.ndarray:
        """Torques D_B(q, q̇, q̈) K̂ (..., n) of the identified model (friction included when identified), plus
        k_j sin q_j + c_j cos q_j on the joints of ``position_joints``.

        ``coulomb`` (N, n), optional: the values of the Coulomb columns in place of sign(q̇), e.g.
        ``IdentificationData.coulomb`` (sign(q̇) filtered as τ was), with which ``rd.identify(robot, data)`` fits;
        q, q̇, q̈ are then (N, n).  The prediction then uses the regressor the fit used.
        """
        q, qd, qdd = (finite_array(k, x) for k, x in (("q", q), ("qd", qd), ("qdd", qdd)))
        shape = np.broadcast_shapes(q.shape, qd.shape, qdd.shape)
        n = self.model.n
        if shape[-1:] != (n,):
            raise InputError(f"q, qd, qdd have shape {shape}; the last axis must be n = {n}")
        if coulomb is not None:
            coulomb = finite_array("coulomb", coulomb)
            if len(shape) != 2 or coulomb.shape != shape:
                raise InputError(f"coulomb has shape {coulomb.shape}; give one value per sample and joint, the shape "
                                 f"{shape} of q, qd, qdd (N, n)")
            patched = _filtered_coulomb(self.base, coulomb)
        if len(self.values) != len(self.base.names):
            raise InputError(f"this identification has {len(self.values)} values for {len(self.base.names)} base "
                             "parameters: a fleet result (per-robot parameters); predict one robot's torques with "
                             "base.regressor(q, qd, qdd) @ robodyn.distributed.fleet_values(result, name)")
        flat = [np.broadcast_to(x, shape).reshape(-1, n) for x in (q, qd, qdd)]
        out = np.empty((flat[0].shape[0], n))
        for s in range(0, out.shape[0], BLOCK):
            blk = slice(s, s + BLOCK)
            W = (self.base.regressor(flat[0][blk], flat[1][blk], flat[2][blk]) if coulomb is None
                 else patched(flat[0][blk], flat[1][blk], flat[2][blk], blk))
            out[blk] = W @ self.values
            if self.position_joints:
                out[blk] += position_columns(flat[0][blk], self.position_joints) @ self.position_coefficients.ravel()
        return finite_result("Identification.predict", out.reshape(shape))

    def validate(self, q, qd=None, qdd=None, tau=None, min_velocity=None) -> "Validation":
        """How well the identified model predicts torques it was not fitted to (held-out data).

        For every joint j: the relative RMS error 100 ‖τ_j − τ̂_j‖ / ‖τ_j‖ (%), the RMS error ‖τ_j − τ̂_j‖ / √N_j
        (N m | N), and the samples N_j it is taken over, τ̂ = :meth:`predict`.

        Parameters
        ----------
        q, qd, qdd, tau : array (N, n) — held-out samples, prepared as the identification data were (same
            filter: e.g. ``rd.identification.prepare_identification_data(..., cutoff=data.cutoff)`` or one prepared run split in
            time); or, as in :func:`identify`, held-out runs: a list of IdentificationData or tuples.
        min_velocity : float or array (n,) or None — score joint j only on the samples where |q̇_j| ≥
            min_velocity_j (the toolboxes' convention near velocity reversals); default: every sample.

        Returns
        -------
        Validation
        """
        q, qd, qdd, tau, coulomb, clipped = _stack(self.model, q, qd, qdd, tau)
        use = _rows_kept(qd, min_velocity, clipped)
        if use is None:
            use = np.ones(q.shape, dtype=bool)
        r = tau - self.predict(q, qd, qdd, coulomb=coulomb)
        count = use.sum(axis=0)
        ss_r = np.sum(np.where(use, r, 0.0) ** 2, axis=0)
        ss_t = np.sum(np.where(use, tau, 0.0) ** 2, axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(ss_t > 0, 100.0 * np.sqrt(ss_r / ss_t), np.where(ss_r > 0, np.inf, 0.0))
        return Validation(relative_rms_percent=rel, rms=np.sqrt(ss_r / count), samples=count,
                          min_velocity=None if min_velocity is None else np.broadcast_to(
                              np.asarray(min_velocity, dtype=float), (q.shape[1],)).copy())

    def plot(self, path, q, qd, qdd, tau, t=None, title: str | None = None) -> None:
        """Write a PNG: measured and predicted torques of every joint against time (or sample index), and the
        residual.  Written to a temporary name and renamed: no partial file.

        Parameters
        ----------
        path : str or PathLike
        q, qd, qdd, tau : array (N, n) — the samples (e.g. a validation trajectory) and the measured torques.
        t : array (N,) or None — times (s); None: sample index.
        """
        from matplotlib.figure import Figure  # no pyplot: the caller's backend and figures are left alone
        from robodyn.sanitize import figure_text  # model-file names shown, never parsed as math text

        from robodyn.files import save_figure

        q, qd, qdd, tau = _samples(self.model, q, qd, qdd, tau)
        x = np.arange(len(q)) if t is None else np.asarray(t, dtype=float)
        if x.shape != (len(q),):
            raise InputError(f"t has shape {np.shape(t)}; give one time per sample ({len(q)})")
        pred = self.predict(q, qd, qdd)
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
                {"name": n, "value": float(v), "std": float(s), "relative_std_percent": float(r)}
                for n, v, s, r in zip(self.names, self.values, self.std, self.relative_std)
            ],
            "residual_rms": [float(x) for x in self.residual_rms],
            "noise_std": [float(x) for x in self.noise],
            "iterations": self.iterations, "converged": self.converged, "parallel_filtering": self.parallel,
        }
        if self.equations is not None:
            d["equations_per_joint"] = [int(x) for x in self.equations]
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
            d["position_terms"] = {
                "joints": [j + 1 for j in self.position_joints],
                "coefficients": [{"joint": j + 1, "sin": float(kc[0]), "cos": float(kc[1]), "sin_std": float(sd[0]),
                                  "cos_std": float(sd[1])} for j, kc, sd in zip(
                                      self.position_joints, self.position_coefficients, self.position_std)]
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
    relative_rms_percent : ndarray (n,) — 100 ‖τ_j − τ̂_j‖ / ‖τ_j‖ (%) over the samples used.
    rms : ndarray (n,) — ‖τ_j − τ̂_j‖ / √N_j (N m | N).
    samples : ndarray (n,) of int — N_j, the samples of joint j used (``min_velocity`` drops the slow ones).
    min_velocity : ndarray (n,) or None — the threshold given (rad/s | m/s).
    """

    relative_rms_percent: np.ndarray
    rms: np.ndarray
    samples: np.ndarray
    min_velocity: np.ndarray | None = None

    @property
    def mean_relative_rms_percent(self) -> float:
        """The mean over the joints of the relative RMS error (%)."""
        return float(np.mean(self.relative_rms_percent))

    def to_dict(self) -> dict:
        """Plain Python data (what ``robodyn identify --validate`` writes)."""
        d = {"relative_rms_percent": [float(x) for x in self.relative_rms_percent],
             "mean_relative_rms_percent": self.mean_relative_rms_percent,
             "rms": [float(x) for x in self.rms], "samples": [int(x) for x in self.samples]}
        if self.min_velocity is not None:
            d["min_velocity"] = [float(x) for x in self.min_velocity]
        return d


def _samples(robot: Robot, q, qd, qdd, tau):
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


@dataclass(frozen=True)
class IdentificationOptions:
    """The options of :func:`identify` as one record (``identify(robot, data, method, options=...)``); the
    keyword arguments of the same names are the same options.  Both sources take every field: NumPy arrays in
    memory, Dask arrays or Samples on a cluster (``robodyn.distributed.identify`` forwards to :func:`identify`).
    A field a source cannot honour raises InputError naming it: ``parallel`` on the cluster (the full-rate
    regressor is filtered in memory), ``per_robot`` without Samples (the robot of each row), ``transmission``
    for a fleet.

    Attributes
    ----------
    friction : bool
        Also identify Fc sign(q̇) + Fv q̇ + Foff of every joint ([9.26]–[9.28]) (and the motor friction with a
        ``transmission``).
    base : BaseParameters or None
        The base parameters to identify; default ``base_parameters(robot, friction=friction,
        transmission=transmission)`` (Khalil's rules; the numeric QR set when the rules are not minimal).
    robust : {"huber", "bisquare"}
        Weight function of ``"irls"``.
    max_iterations : int
        Iteration limit of ``"irls"``.
    regularization : float or None
        ``"physical"``: weight λ of the pull (λ / p) ‖D⁻¹ (K − K_model)‖² towards the model's (a priori)
        parameters, each relative to its scale D, next to the fit normalised by ‖y‖²
        (:mod:`robodyn.identification.consistent`).  Default None: chosen from the data by cross-validation on
        contiguous time blocks (``solver["regularization_rule"]`` says so); ``prior_share`` on the result says
        which parameters the prior rather than the data determined.
    min_mass : float
        ``"physical"``: lower bound on every link mass (kg).
    bounds : PhysicalBounds, dict or None
        ``"physical"``: mass bounds per link, a box or a convex hull for every link's centre of mass, the total mass
        (:class:`robodyn.identification.consistent.PhysicalBounds`; its ``min_mass`` replaces ``min_mass``).
    position_terms : "auto", tuple of int or None
        Joints (0-based, revolute) whose equation gets the position term k_j sin q_j + c_j cos q_j, two free
        columns of joint j's equation alone: a torque that depends on q_j only (a cable, a spring, a sensor offset
        varying with the joint's angle), which the rotor inertia's column soaks up otherwise on slow excitation
        (q̈_j ≈ −ω² q_j).  Default "auto": joint j gets the term when, fitted with the base parameters, it removes
        more than ``POSITION_SHARE`` of joint j's least-squares residual without terms; every joint's columns are
        reduced beside the others in one pass and the selected ones fitted from it (none selected: the fit without
        terms, unchanged).  None or (): no terms.  ``position_joints``,
        ``position_coefficients`` and ``position_shares`` on the result report them; :meth:`Identification.predict`
        includes them, the model ``robot`` of "physical" cannot (docs/identification.md).
    reduction : {"gram", "tsqr"}
        The per-chunk reduction (module :mod:`robodyn.identification.reduction`): Gram matrices with compensated
        sums (accuracy ε cond(W_s)²), or a tall-skinny QR (ε cond(W_s), about 6 times the cost).
    chunk : int or None
        Rows per block in memory (default ``BLOCK``), per Dask chunk when NumPy arrays go to the cluster
        (``robodyn.distributed.identify``; default ``CHUNK``).
    per_robot : None, or a tuple of "friction" and/or "offsets"
        A fleet of robots of one model (``q``: :class:`Samples` with ``robot`` and ``robots``): the inertial base
        parameters and the position terms are shared, each robot r has its own Fc_j, Fv_j ("friction") and/or
        Foff_j ("offsets"), named ``Fc3[r]`` (:func:`robodyn.distributed.fleet_values`; docs/scaling.md).
    rank_tol : float
        Relative tolerance of the identifiability test (column-scaled W).
    transmission : Transmission or None
        The robot's motors and (coupled) transmissions: the rotor inertia ``Iam<i>`` and, with friction, the
        Coulomb and viscous friction ``Fcm<i>``, ``Fvm<i>`` of every motor on q̇_m = J_mq q̇ are identified too
        (grouped with the link parameters as :func:`robodyn.base_parameters` states; for ``"physical"`` they are
        ≥ 0 and ``identified_transmission`` carries them).  A diagonal transmission gives the same estimates as
        none.
    min_velocity : float or array (n,) or None
        Drop the rows of joint j's equation where |q̇_j| < min_velocity_j (rad/s | m/s): near a velocity
        reversal the sign of the Coulomb friction in the model cannot be trusted.  Default: keep every row.
        Whatever it is, the rows where joint j's torque is clipped are left out of its equations: a τ_j that holds
        exactly its largest or smallest value for 5 samples or more (a saturated drive or sensor range,
        :func:`robodyn.identification.data.saturated`), or, for prepared data, that the filter spread such samples
        into (``IdentificationData.saturated``); ``equations`` counts the rows used.
    weights : array (n,) or None
        Per-joint weights w_j > 0 of the fit: the cost is Σ_j w_j ‖ρ_j‖² (row j scaled by √w_j); with
        ``"wls"`` they multiply Gautier's 1/σ_j².  Default 1.
    parallel : IdentificationData or None
        Data from ``rd.identification.prepare_identification_data(..., parallel=True)`` whose ``q``, ``qd``, ``qdd``, ``tau`` are
        the samples given: the regressor is computed at the full-rate states and filtered, trimmed and decimated
        exactly as τ was (Gautier's parallel filtering and decimation; FIGAROH decimates its regressor the same
        way), instead of being evaluated at the decimated states.  Linear columns are unchanged (filtering commutes
        with them up to the filter's distortion of the motion); the Coulomb columns sign(q̇) become the filtered
        steps that the measured torques contain, which removes the friction bias of filtering τ alone (Fc low,
        Fv high; docs/identification.md).  Costs 8 M n b bytes for the full-rate regressor (M full-rate samples).
        Default None: the regressor at the samples.
    """

    friction: bool = True
    base: object = None
    robust: str = "huber"
    max_iterations: int = 50
    regularization: float | None = None
    min_mass: float = 0.0
    rank_tol: float = RANK_TOL
    transmission: object = None
    min_velocity: object = None
    weights: object = None
    parallel: object = None
    bounds: object = None
    position_terms: object = "auto"
    reduction: str = "gram"
    chunk: int | None = None
    per_robot: object = None


def merge_options(options, given: dict) -> dict:
    """The option values: the keywords ``given`` (name → value), or those of ``options`` (an
    IdentificationOptions) when it is given — InputError when a keyword differs from its default too."""
    from dataclasses import fields as dc_fields

    if options is None:
        return given
    if not isinstance(options, IdentificationOptions):
        raise InputError(f"options is {type(options).__name__}; give an IdentificationOptions")
    defaults = IdentificationOptions()
    clash = [k for k, v in given.items() if v is not getattr(defaults, k) and not (
        isinstance(v, (int, float, str, bool)) and v == getattr(defaults, k))]
    if clash:
        raise InputError(f"give {', '.join(clash)} either as keyword(s) or in options, not both")
    return {f.name: getattr(options, f.name) for f in dc_fields(IdentificationOptions)}


def _stack(robot: Robot, q, qd=None, qdd=None, tau=None):
    """The samples (N, n) × 4 of one run given as arrays, or of several runs (a list of IdentificationData or of
    (q, qd, qdd, tau) tuples, each prepared on its own) stacked row-wise and checked like one run; the runs'
    filtered Coulomb columns (N, n) (None unless every run is prepared data) and
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
                coulomb.append(run.coulomb)
                sat = run.saturated
                run = (run.q, run.qd, run.qdd, run.tau)
            else:
                coulomb.append(None)
                sat = None
            if not isinstance(run, (list, tuple)) or len(run) != 4:
                raise InputError(f"run {k}: give an IdentificationData or a (q, qd, qdd, tau) tuple")
            parts.append(_samples(robot, *run))
            clipped.append(saturated(parts[-1][3]) | (False if sat is None else sat))
        stacked = tuple(np.concatenate([p[i] for p in parts]) for i in range(4))
        sharp = any(c is None for c in coulomb)
        return stacked + (None if sharp else np.concatenate(coulomb), np.concatenate(clipped))
    if qd is None or qdd is None or tau is None:
        raise InputError("give q, qd, qdd and tau (N, n) together, or only a list of runs as q")
    arrays = _samples(robot, q, qd, qdd, tau)
    return arrays + (None, saturated(arrays[3]))


def _rows_kept(qd: np.ndarray, min_velocity, clipped: np.ndarray):
    """(N, n) bool of the rows of each joint's equations used (None: all): ``min_velocity`` and not clipped."""
    use = _rows_used(qd, min_velocity)
    if not clipped.any():
        return use
    use = ~clipped if use is None else use & ~clipped
    empty = np.flatnonzero(~use.any(axis=0))
    if empty.size:
        raise IdentificationError(f"every sample of joint {int(empty[0]) + 1} is clipped or too slow; give data "
                                  "where its torque is not saturated")
    return use


def _coulomb_columns(bp) -> list:
    """(joint j, base column k) of every base parameter that is a joint's Coulomb friction Fc_j alone."""
    from robodyn.parameters.regressor import standard_parameter_names

    names = standard_parameter_names(bp.robot, bp.friction, bp.transmission)
    out = []
    for k, c in enumerate(bp.columns):
        if names[c].startswith("Fc") and names[c][2:].isdigit():
            out.append((int(names[c][2:]) - 1, k))
    return out


def _filtered_coulomb(bp, coulomb):
    """The regressor function (q, qd, qdd, rows) → W with the Coulomb columns replaced by ``coulomb[rows]``."""
    pairs = _coulomb_columns(bp)

    def W_of(q, qd, qdd, rows):
        W = bp.regressor(q, qd, qdd)
        for j, k in pairs:
            W[:, j, k] = coulomb[rows, j]
        return W
    return W_of


def stack_factors(R: np.ndarray, weights=None) -> np.ndarray:
    """The triangular factor of the whole (weighted) system from the per-joint factors."""
    m = R.shape[-1]
    w = np.ones(R.shape[0]) if weights is None else weights
    out = np.zeros((m, m))
    Rg = scipy.linalg.qr((R * w[:, None, None]).reshape(-1, m), mode="r", check_finite=False)[0]
    out[: Rg.shape[0]] = Rg[:m]
    return out


def check_rank(Rg: np.ndarray, names, tol: float, zero: float = 1e-12) -> None:
    """IdentificationError naming the parameters whose columns of the stacked factor ``Rg`` are zero (norm ≤
    ``zero`` times the largest) or, scaled to unit norm, within ``tol`` of the span of the columns before them."""
    b = len(names)
    T = Rg[:b, :b]
    scale = np.linalg.norm(T, axis=0)
    top = scale.max(initial=0.0)
    # a zero column (the factors resolve each column to ~√ε of its own norm, see robodyn.identification.reduction.factor): far below ``tol``, since
    # the columns of one model may differ by 10^8 in norm (rotor columns N² q̈_m next to a wrist's XY)
    dead = scale <= zero * top if top > 0 else np.ones(b, bool)
    Ts = T / np.where(dead, 1.0, scale)
    diag = np.abs(np.diag(Ts))
    bad = np.flatnonzero(dead | (diag <= tol))
    if bad.size:
        raise IdentificationError(
            f"the data do not excite {bad.size} of the {b} parameters: {', '.join(names[k] for k in bad)} "
            f"(their regressor columns are zero or combinations of the others); use an exciting trajectory "
            f"(rd.excitation_trajectory) or identify fewer parameters (friction=False)")


def solve_factor(Rg: np.ndarray, b: int):
    """θ (b,), (Wᵀ W)⁻¹ (b, b) and ‖y − W θ‖ from the stacked factor ``Rg`` of [W y] (its columns scaled to unit
    norm for the triangular solves)."""
    T = Rg[:b, :b]
    scale = np.linalg.norm(T, axis=0)  # the column norms of W: solve with unit columns
    Ts = T / scale
    theta = scipy.linalg.solve_triangular(Ts, Rg[:b, b]) / scale
    Tinv = scipy.linalg.solve_triangular(Ts, np.eye(b)) / scale[:, None]
    return theta, Tinv @ Tinv.T, abs(Rg[b, b])


def joint_residuals(R: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """‖y_j − W_j K‖ for every joint, from the per-joint factors."""
    v = np.append(theta, -1.0)
    return np.linalg.norm(R @ v, axis=-1)


def identify(robot: Robot, q, qd=None, qdd=None, tau=None, method: str = "ols", friction: bool = True, base=None,
             robust: str = "huber", max_iterations: int = 50, regularization: float | None = None,
             min_mass: float = 0.0, rank_tol: float = RANK_TOL, transmission=None, min_velocity=None, weights=None,
             parallel=None, bounds=None, position_terms="auto", options=None, *, reduction: str = "gram",
             chunk: int | None = None, per_robot=None) -> Identification:
    """Identify the base parameters (and friction) of ``robot`` from measured samples.

    Parameters
    ----------
    robot : Robot
        The model: its geometry defines the regressor; its parameters are the prior of ``"physical"``.
    q, qd, qdd, tau : array (N, n)
        Joint positions, velocities, accelerations (rad, rad/s, rad/s² | m, …) and torques (N m | N), e.g. from
        :func:`prepare_identification_data`; joint-side (motor-side data: :func:`robodyn.joint_from_motor`,
        :func:`robodyn.joint_torques_from_motor`).  Runs already filtered and differentiated (as a robot's
        software may store them) go in as they are.  Several runs at once: ``q`` a list of
        :class:`IdentificationData` (each run prepared on its own, so no filter or derivative spans the seam
        between two runs) or of (q, qd, qdd, tau) tuples, and qd, qdd, tau not given; their rows are stacked.
        Samples that need not fit in memory: ``dask.array`` arrays (N, n), or :class:`Samples` (e.g. from
        :func:`robodyn.distributed.read_samples`) as ``q`` alone: the cluster path (docs/scaling.md) reduces
        them chunk by chunk with the same functions and gives the same result to rounding.
    method : {"ols", "wls", "irls", "physical"}
        See the module documentation.
    friction, base, robust, max_iterations, regularization, min_mass, rank_tol, transmission, min_velocity, weights,
    parallel, bounds, position_terms, reduction, chunk, per_robot
        The options, as keywords or as one :class:`IdentificationOptions` record ``options`` (giving both is an
        error); each is documented on that record.  Every source takes every option; one that a source cannot
        honour is an InputError naming it (``parallel`` on the cluster, ``per_robot`` without Samples,
        ``transmission`` for a fleet).
    options : IdentificationOptions or None
        The options above as one record.

    Returns
    -------
    Identification

    Raises
    ------
    IdentificationError
        Too few samples, parameters the data do not excite (named), weights that make the problem numerically
        singular; ``"physical"``: the conic solver returned no point (a point whose duality gap is not
        certified comes back with ``converged=False`` and a ``message``).
    InputError
        Shapes, NaN rows (reported by row), unknown method, a transmission of the wrong size, bad weights, an
        option the source cannot honour (named).
    """
    check_robot(robot)
    o = merge_options(options, dict(
        friction=friction, base=base, robust=robust, max_iterations=max_iterations, regularization=regularization,
        min_mass=min_mass, rank_tol=rank_tol, transmission=transmission, min_velocity=min_velocity, weights=weights,
        parallel=parallel, bounds=bounds, position_terms=position_terms, reduction=reduction, chunk=chunk,
        per_robot=per_robot))
    terms = check_position_terms(o["position_terms"], robot)
    _check_choices(method, o)
    fleet = _per_robot_option(o["per_robot"])
    if fleet and not o["friction"]:
        raise InputError("per_robot: friction=False identifies no friction or offsets; give friction=True")
    if fleet and not isinstance(q, Samples):
        raise InputError("per_robot needs Samples with the robot of each row: read_samples(..., robots=...) or "
                         "Samples(q, qd, qdd, tau, robot=indices, robots=names)")
    bp = _base_of(robot, o)
    if is_cluster_input(q, qd, qdd, tau):
        source = _dask_source(robot, bp, q, qd, qdd, tau, o, fleet)
    else:
        source = _array_source(robot, bp, q, qd, qdd, tau, o)
    if fleet:
        return _identify_fleet(robot, bp, source, method, o, terms, fleet)
    return _identify(robot, bp, source, method, o, terms)


def _check_choices(method: str, o: dict) -> None:
    for name, value, allowed in (("method", method, ("ols", "wls", "irls", "physical")),
                                 ("robust", o["robust"], ("huber", "bisquare")),
                                 ("reduction", o["reduction"], ("gram", "tsqr"))):
        if value not in allowed:
            raise InputError(f"{name} = {value!r}; choose {', '.join(repr(x) for x in allowed[:-1])} or "
                             f"{allowed[-1]!r}")
    it = o["max_iterations"]
    if method == "irls" and (isinstance(it, bool) or int(it) != it or it < 1):
        raise InputError(f"max_iterations = {it!r}; give an integer >= 1")
    c = o["chunk"]
    if c is not None and (isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 1):
        raise InputError(f"chunk = {c!r}; give a positive number of rows per chunk")


def _base_of(robot: Robot, o: dict):
    """The BaseParameters to identify: ``o["base"]`` checked, or Khalil's rules (the numeric QR set when they are
    not minimal)."""
    from robodyn.parameters.base import base_parameters
    from robodyn.parameters.regressor import standard_parameter_names

    friction, transmission, base = o["friction"], o["transmission"], o["base"]
    if transmission is not None:
        standard_parameter_names(robot, friction, transmission)  # checks the type and size of the transmission
    if base is None:
        base = base_parameters(robot, friction=friction, transmission=transmission)
        if not base.minimal:
            base = base_parameters(robot, method="numeric", friction=friction, transmission=transmission)
    elif base.robot is not robot or base.friction != friction or base.transmission is not transmission:
        raise InputError("base: give the BaseParameters of this robot with the same friction setting and transmission")
    return base


def _array_source(robot: Robot, bp, q, qd, qdd, tau, o: dict) -> ArraySource:
    """In-memory samples (one run, or runs stacked) as a source: the rows used (``min_velocity``, clipped
    torques), the regressor filtered like τ (``parallel``) or with the runs' filtered Coulomb columns."""
    q, qd, qdd, tau, coulomb, clipped = _stack(robot, q, qd, qdd, tau)
    parallel = o["parallel"]
    W = None
    if parallel is not None:
        Wp = _parallel_regressor(bp, parallel, q, qd, qdd, tau)
        W = lambda blk: Wp[blk]  # noqa: E731
    elif coulomb is not None:
        patched = _filtered_coulomb(bp, coulomb)
        W = lambda blk: patched(q[blk], qd[blk], qdd[blk], blk)  # noqa: E731
    return ArraySource(bp, q, qd, qdd, tau, _rows_kept(qd, o["min_velocity"], clipped), W,
                       o["chunk"] or BLOCK, clipped.sum(axis=0))


def _dask_source(robot: Robot, bp, q, qd, qdd, tau, o: dict, fleet) -> DaskSource:
    """Dask arrays or Samples as a source (NumPy arrays beside them are split into ``chunk`` rows per task)."""
    if o["parallel"] is not None:
        raise InputError("parallel: the full-rate regressor is filtered in memory; give the prepared data's NumPy "
                         "arrays (not Dask arrays or Samples) to use it")
    if isinstance(q, Samples):
        if not (qd is None and qdd is None and tau is None):
            raise InputError("give either Samples or the arrays q, qd, qdd, tau")
        samples, given = q, (q.q, q.qd, q.qdd, q.tau)
    elif qd is None or qdd is None or tau is None:
        raise InputError("give q, qd, qdd and tau (N, n), or Samples from read_samples")
    else:
        samples, given = None, (q, qd, qdd, tau)
    chunk = int(o["chunk"] or CHUNK)
    arrays = sample_arrays(given, robot.n, chunk)
    labels, robots = _fleet_labels(samples, arrays, chunk) if fleet else (None, ())
    return DaskSource(bp, arrays, _speeds(o["min_velocity"], robot.n), labels, robots)


def _check_counts(counts, N: int, b: int) -> None:
    """IdentificationError when a joint has no rows left or the equations do not outnumber the parameters."""
    counts = np.asarray(counts)
    if np.any(counts == 0):
        raise IdentificationError(f"every sample of joint {int(np.flatnonzero(counts == 0)[0]) + 1} is clipped or "
                                  "too slow; give data where its torque is not saturated (or a lower min_velocity)")
    n, neq = len(counts), int(counts.sum())
    if neq <= b:
        raise IdentificationError(f"{N} samples of {n} joints give {neq} equations for {b} parameters; "
                                  f"give more than {b // n + 1} samples" + ("" if neq == N * n else
                                                                             " or a lower min_velocity"))


def _position_columns(cand, b: int, joints) -> list:
    """The columns of a reduction of [E_cand W y] that the fit with the position terms of ``joints`` uses."""
    k = 2 * len(cand)
    return [2 * cand.index(j) + i for j in joints for i in (0, 1)] + list(range(k, k + b + 1))


def _auto_terms(robot: Robot, G: np.ndarray, R0: np.ndarray, b: int):
    """``position_terms="auto"``: (shares (n,), the joints selected) from the Gram matrices G (n, m, m) of
    [E W y] with the columns of every joint first, and the factors R0 of [W y] alone."""
    n = robot.n
    E = [slice(2 * j, 2 * j + 2) for j in range(n)]
    shares = position_shares(R0, np.stack([G[j, E[j], E[j]] for j in range(n)]),
                             np.stack([G[j, E[j], 2 * n:] for j in range(n)]))
    return shares, selected_position_joints(robot, shares)


def _identify(robot: Robot, bp, source, method: str, o: dict, terms) -> Identification:
    """The driver of one robot: one reduction of the source (with the position columns of every candidate joint
    and the time blocks of the cross-validation), the terms selected from it, the fit on its factors."""
    from robodyn.identification.consistent import FOLDS

    n, b, red = robot.n, bp.count, o["reduction"]
    wj = _user_weights(o["weights"], n)
    cand = tuple(range(n)) if terms == "auto" else terms
    k_folds = FOLDS if method == "physical" and o["regularization"] is None else 0
    acc, N, counts, clipped, folds = source.reduce(cand, red, folds=k_folds)
    _check_counts(counts, N, b)
    shares = None
    if terms == "auto":
        shares, terms = _auto_terms(robot, gram(acc, red), factor(acc, red, _position_columns(cand, b, ()))[0], b)
    S = _position_columns(cand, b, terms)
    R, norms = factor(acc, red, S)
    if folds is not None:
        folds = np.einsum("j,kjab->kab", wj, folds[:, :, S][:, :, :, S])
    names = position_names(terms) + tuple(bp.names)

    def irls(theta):
        def reweigh(th, scale):
            acc_w, _, used, _, _ = source.reduce(terms, red, th, scale, o["robust"])
            return factor(acc_w, red)[0], used

        def fit(Rw):
            Rg = stack_factors(Rw, np.sqrt(wj))
            check_rank(Rg, names, 0.0, 0.0)
            return solve_factor(Rg, len(names))[:2]

        return _irls(lambda th: source.residuals(th, terms), source.median, reweigh, fit,
                     lambda Rw, th: float(np.sum(wj * joint_residuals(Rw, th) ** 2)), R, counts, theta,
                     int(o["max_iterations"]), len(names))

    try:
        fit = fit_factors(robot, bp, R, counts, method, weights=None if o["weights"] is None else wj,
                          rank_tol=o["rank_tol"], norms=norms, regularization=o["regularization"],
                          min_mass=o["min_mass"], bounds=o["bounds"], folds=folds, irls=irls,
                          free=position_names(terms))
    except IdentificationError as exc:
        raise fit_failure(exc, terms, clipped, N) from None
    return Identification(model=robot, method=method, friction=o["friction"], base=bp, names=tuple(bp.names),
                          samples=N, transmission=o["transmission"], equations=np.asarray(counts, dtype=int),
                          weights=wj, parallel=o["parallel"] is not None, position_shares=shares, **fit)


#: ``position_terms="auto"``: joint j gets the term k_j sin q_j + c_j cos q_j when (sin q_j, cos q_j) explain more
#: than this share of its residual in the fit without terms (measured KUKA LWR4+ joint 7: 0.75; the other joints
#: of it and of a Franka Panda: 0.37 or less).
POSITION_SHARE = 0.5
#: "auto" leaves out a joint whose unit-norm (sin q_j, cos q_j) columns lie within this distance of the span of the
#: base columns (e.g. a joint whose own gravity torque is k sin q_j + c cos q_j): the data cannot separate them.
POSITION_SPAN = 1e-3


def fit_failure(exc: IdentificationError, joints, clipped, N: int) -> IdentificationError:
    """The error of a fit that failed (``exc``), with its likely cause: the position terms of ``joints`` (0-based),
    or the rows of clipped torques left out (``clipped`` (n,): per joint, of ``N`` samples)."""
    if joints:  # sin q_j, cos q_j span joint j's own gravity torque when a link's weight acts on it alone
        return IdentificationError(f"{exc}; or the position_terms of joint(s) {', '.join(str(j) for j in joints)} "
                                   "are combinations of the base parameters' columns (that joint's own gravity "
                                   "torque): leave them out of position_terms")
    if not np.any(clipped):
        return exc
    left = ", ".join(f"joint {j + 1}: {int(c)} of {N}" for j, c in enumerate(clipped) if c)
    return IdentificationError(f"{exc}; the rows of clipped (saturated) torques were left out ({left}): give "
                               "data where the torques stay within the drives' and sensors' range")


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


@dataclass(frozen=True, eq=False)
class Factors:
    """The reduced problem every solver of :data:`FITS` starts from: the per-joint factors R (n, b + 1, b + 1)
    (b counting ``m`` free columns first), their stacked factor ``Rg``, the OLS estimate ``theta`` and its
    covariance ``cov``, the per-joint noise σ_j of its residual, and the options of the solvers."""

    robot: Robot
    bp: object
    R: np.ndarray
    counts: np.ndarray
    names: tuple
    m: int
    weights: np.ndarray | None
    rank_tol: float
    zero: float
    Rg: np.ndarray
    theta: np.ndarray
    cov: np.ndarray
    noise: np.ndarray
    bj: np.ndarray
    options: dict

    @property
    def b(self) -> int:
        return len(self.names)


def _fit_ols(p: Factors):
    """Least squares; with joint weights, the weighted estimate and its sandwich covariance."""
    if p.weights is None:
        return p.theta, p.cov, {}
    Rw = stack_factors(p.R, np.sqrt(p.weights))
    _check_weighting(p.R, Rw, p.names, p.rank_tol, p.zero, p.weights)
    theta = solve_factor(Rw, p.b)[0]
    return theta, _sandwich(p.R, p.weights, noise_floor(p.noise), p.b) + _rounding_covariance(Rw, theta, p.b), {}


def _fit_wls(p: Factors):
    """Gautier's weighted least squares, the noise levels iterated to their fixed point (:func:`_iterated_wls`)."""
    wj = np.ones(len(p.R)) if p.weights is None else p.weights
    if p.weights is not None:  # Gautier's 1/σ_j are the data's own; only the user's weights are checked
        _check_weighting(p.R, stack_factors(p.R, np.sqrt(wj)), p.names, p.rank_tol, p.zero, wj)
    theta, inv, noise, iterations = _iterated_wls(p.R, wj, p.noise, p.counts, p.bj, p.b)
    sig = noise_floor(noise)
    cov = inv if p.weights is None else _sandwich(p.R, wj / sig ** 2, sig, p.b)
    return theta, cov, dict(noise=noise, iterations=iterations)


def _fit_irls(p: Factors):
    """Iteratively re-weighted least squares: the source's passes (``options["irls"]``) from the OLS estimate."""
    theta, cov, iterations, converged, message = p.options["irls"](p.theta)
    return theta, cov, dict(iterations=iterations, converged=converged, message=message)


def _fit_physical(p: Factors):
    """The physically consistent fit (:func:`_physical`) on the stacked factor; the free columns' least-squares
    values given the consistent parameters; the covariance of the (weighted) least-squares estimate."""
    m, b, o = p.m, p.b, p.options
    _, cov, _ = _fit_ols(p)
    Rp = p.Rg if p.weights is None else stack_factors(p.R, np.sqrt(p.weights))
    theta, standard, robot, motors, report, share = _physical(p.robot, p.bp, Rp[m:, m:], o["regularization"],
                                                             o["min_mass"], bounds=o["bounds"], folds=o["folds"],
                                                             free=m)
    if m:
        c = scipy.linalg.solve_triangular(Rp[:m, :m], Rp[:m, b] - Rp[:m, m:b] @ theta)
        theta = np.concatenate([c, theta])
    out = dict(standard=standard, robot=robot, identified_transmission=motors, solver=report, prior_share=share,
               converged=report["certified"])
    if not report["certified"]:
        out["message"] = (f"the physically consistent fit is not certified: {report['accuracy']}; give a larger "
                          "regularization or check the data")
    return theta, cov, out


#: The solvers of :func:`identify`: method → function of the reduced problem (:class:`Factors`) returning
#: (estimate (b,), covariance (b, b), the other fields of the result it sets).
FITS = MappingProxyType({"ols": _fit_ols, "wls": _fit_wls, "irls": _fit_irls, "physical": _fit_physical})


def fit_factors(robot: Robot, bp, R: np.ndarray, counts, method: str, weights=None, rank_tol: float = RANK_TOL,
                zero: float = 1e-12, norms=None, regularization=None, min_mass: float = 0.0, bounds=None,
                folds=None, irls=None, free=()) -> dict:
    """The fit of :func:`identify` on the per-joint factors R (n, b + 1, b + 1), R_jᵀ R_j = [W_j y_j]ᵀ [W_j y_j],
    of ``counts`` (n,) rows (any source): the rank check (:func:`check_rank`), the least-squares estimate and
    covariance, then the solver ``FITS[method]``.  ``norms`` (n, b + 1): the exact column norms of every
    [W_j y_j]; ``folds`` (k, b + 1, b + 1): the weighted Gram matrices of k time blocks (``regularization=None``);
    ``irls``: θ → (θ, cov, iterations, converged, message), the re-weighting passes over the samples; ``free``:
    the names of the free columns before the base ones (the position terms).  Returns the fields of
    :class:`Identification` it sets."""
    m = len(free)
    names = tuple(free) + tuple(bp.names)
    b = len(names)
    counts = np.asarray(counts)
    Rg = stack_factors(R)
    check_rank(Rg, names, rank_tol, zero)
    theta, inv, rnorm = solve_factor(Rg, b)
    norms = np.linalg.norm(R[:, :b, :b], axis=1) if norms is None else np.asarray(norms)[:, :b]
    bj = (norms > 1e-12 * norms.max(axis=1, keepdims=True)).sum(1)  # parameters in the equations of joint j
    noise = joint_residuals(R, theta) / np.sqrt(np.maximum(counts - bj, 1))
    p = Factors(robot=robot, bp=bp, R=R, counts=counts, names=names, m=m,
                weights=None if weights is None else np.asarray(weights, dtype=float), rank_tol=rank_tol, zero=zero,
                Rg=Rg, theta=theta, cov=rnorm ** 2 / max(int(counts.sum()) - b, 1) * inv, noise=noise, bj=bj,
                options=dict(regularization=regularization, min_mass=min_mass, bounds=bounds, folds=folds,
                             irls=irls))
    theta, cov, fields = FITS[method](p)
    out = dict(iterations=1, converged=True, message="", robot=None, standard=None, identified_transmission=None,
               solver=None, prior_share=None, noise=noise) | fields
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    if m:
        out |= dict(position_joints=tuple(int(k[5:]) - 1 for k in free[::2]),
                    position_coefficients=theta[:m].reshape(-1, 2), position_std=std[:m].reshape(-1, 2))
    return out | dict(values=theta[m:], std=std[m:], covariance=cov[m:, m:],
                      condition_number=float(np.linalg.cond(Rg[:b, :b])),
                      residual_rms=joint_residuals(R, theta) / np.sqrt(np.maximum(counts, 1)))


def _irls(residuals, median, reweigh, fit, ssr, state, used, theta, max_iterations: int, count: int):
    """Iteratively re-weighted least squares (Huber or Tukey bisquare weights, per-joint MAD scale from exact
    medians), on any source and problem.

    ``residuals(θ)``: the (N, n) residuals τ − W θ (NaN on the rows left out), ``median``: their per-joint
    median; ``reweigh(θ, scale)``: the factors of the robustly weighted problem and #(w > 0) per joint;
    ``fit(factors)``: θ and (Wᵀ W)⁻¹ of the weighted problem; ``ssr(factors, θ)``: its weighted residual sum of
    squares; ``state``, ``used``: the unit-weight factors and row counts (all MADs 0: the exact OLS fit);
    ``count``: the number of parameters.
    """
    converged, it = False, 0
    for it in range(1, max_iterations + 1):
        r = residuals(theta)
        r = r.persist() if hasattr(r, "persist") else r
        mad = 1.4826 * median(abs(r - median(r)))
        if not np.any(mad > 0):
            converged = True
            break
        state, used = reweigh(theta, noise_floor(mad))
        new, _ = fit(state)
        step = np.linalg.norm(new - theta)
        theta = new
        if step <= 1e-10 * (1.0 + np.linalg.norm(theta)):
            converged = True
            break
    _, inv = fit(state)
    s2 = ssr(state, theta) / max(float(np.sum(used)) - count, 1)
    message = "" if converged else f"iteration limit {max_iterations} reached; the robust weights may still change"
    return theta, s2 * inv, it, converged, message


#: ``"wls"``: the per-joint noise levels are re-estimated from the weighted fit's residuals until they change by
#: less than this (relative), at most ``WLS_ITERATIONS`` times.
WLS_TOLERANCE = 1e-4
WLS_ITERATIONS = 20


def _iterated_wls(R: np.ndarray, wj: np.ndarray, noise: np.ndarray, counts, bj, b: int):
    """Gautier's weighted least squares with the noise levels re-estimated from its own residuals (feasible
    generalised least squares): σ_j from the OLS residual overstates a light joint's noise by the heavy joints'
    noise that OLS puts into the parameters it shares (4.8 σ on the Panda's wrist at 2 % noise, i.e. weighted 23
    times too low); σ_j² = ‖ρ_j‖² / (N_j − b_j) of the weighted fit is the fixed point.  Returns (θ, (Wᵀ Σ⁻¹ W)⁻¹
    with the user's weights, σ (n,), passes)."""
    dof = np.sqrt(np.maximum(np.asarray(counts) - bj, 1))
    sig = noise_floor(noise)
    for it in range(1, WLS_ITERATIONS + 1):
        theta, inv, _ = solve_factor(stack_factors(R, np.sqrt(wj) / sig), b)
        new = noise_floor(joint_residuals(R, theta) / dof)
        done = np.max(np.abs(new - sig) / sig) <= WLS_TOLERANCE
        sig = new
        if done:
            break
    theta, inv, _ = solve_factor(stack_factors(R, np.sqrt(wj) / sig), b)
    return theta, inv, sig, it


#: A parameter whose weighted column keeps less than this fraction of its norm under the largest joint weight is
#: resolved only by equations weighted down to the round-off (√ε ≈ 1.5e-8 relative) of the others' factors.
WEIGHT_RESOLUTION = 1e-4


def _check_weighting(R: np.ndarray, Rw: np.ndarray, names, tol: float, zero: float, w: np.ndarray) -> None:
    """IdentificationError when the joint weights ``w`` make the weighted problem numerically singular: a
    parameter resolved only by equations weighted down to the round-off of the others (the per-joint factors
    carry each column to ~√ε of its norm), or the weighted factor ``Rw`` failing the rank test."""
    b = len(names)
    col = np.linalg.norm(R[:, :b, :b], axis=1)  # (n, b) per joint
    top = np.sqrt(w.max()) * col.max(axis=0)
    kept = np.sqrt(np.sum(w[:, None] * col ** 2, axis=0))
    bad = [names[k] for k in np.flatnonzero(kept < WEIGHT_RESOLUTION * top)]
    why = f"{', '.join(bad)} appear only in equations weighted down by more than {1 / WEIGHT_RESOLUTION ** 2:.0e}"
    if not bad:
        try:
            check_rank(Rw, names, tol, zero)
            return
        except IdentificationError as exc:
            why = str(exc).split("; use")[0]
    raise IdentificationError(f"the weights (ratio {w.max() / w.min():.3g} between the largest and the smallest) "
                              f"make the problem numerically singular: {why}; give weights within a few orders of "
                              f"magnitude of each other")


def _rounding_covariance(Rw: np.ndarray, theta: np.ndarray, b: int) -> np.ndarray:
    """The rounding error of the weighted solve as a covariance: (ε cond(W_w) |θ|)², diagonal; keeps the reported
    uncertainty of badly conditioned weightings from vanishing on exact data."""
    T = Rw[:b, :b]
    scale = np.linalg.norm(T, axis=0)
    c = np.linalg.cond(T / np.where(scale > 0, scale, 1.0))
    return np.diag((np.finfo(float).eps * c * np.abs(theta)) ** 2)


def _parallel_regressor(bp, data, q, qd, qdd, tau) -> np.ndarray:
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
        for s in range(0, M, BLOCK):
            blk = slice(s, s + BLOCK)
            W[blk] = bp.regressor(fq[blk], fqd[blk], fqdd[blk])
            bar.update(completed=min(s + BLOCK, M))
    return finite_result("identify", data.filter_columns(W))


def _sandwich(R: np.ndarray, lam: np.ndarray, sig: np.ndarray, b: int) -> np.ndarray:
    """Covariance of the estimate weighted by λ_j per joint under noise σ_j: M⁻¹ (Σ λ_j² σ_j² G_j) M⁻¹,
    M = Σ λ_j G_j, G_j = W_jᵀ W_j (from the per-joint factors)."""
    T = R[:, :b, :b]
    G = np.swapaxes(T, -1, -2) @ T
    M = np.einsum("j,jab->ab", lam, G)
    S = np.einsum("j,jab->ab", lam ** 2 * sig ** 2, G)
    Minv = np.linalg.pinv(M, hermitian=True)
    return Minv @ S @ Minv


def _rows_used(qd: np.ndarray, min_velocity):
    """(N, n) bool of the rows kept by ``min_velocity`` (None: all)."""
    v = _speeds(min_velocity, qd.shape[1])
    if v is None:
        return None
    use = np.abs(qd) >= v
    empty = np.flatnonzero(~use.any(axis=0))
    if empty.size:
        j = int(empty[0])
        raise IdentificationError(f"min_velocity: no sample of joint {j + 1} moves at {v[j]:g} or faster "
                                  f"(max |qd{j + 1}| = {np.abs(qd[:, j]).max():g}); lower min_velocity")
    return use


def _speeds(min_velocity, n: int):
    """``min_velocity`` checked: (n,) finite speeds ≥ 0, or None."""
    if min_velocity is None:
        return None
    v = as_real_array("min_velocity", min_velocity).astype(float)
    v = np.full(n, float(v)) if v.ndim == 0 else v
    if v.shape != (n,) or not np.all(np.isfinite(v)) or np.any(v < 0):
        raise InputError(f"min_velocity = {np.asarray(min_velocity).tolist()}; give one finite speed >= 0 "
                         f"or {n} of them (one per joint)")
    return v


def _user_weights(weights, n: int) -> np.ndarray:
    if weights is None:
        return np.ones(n)
    w = as_real_array("weights", weights).astype(float)
    if w.ndim == 0:
        w = np.full(n, float(w))
    if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise InputError(f"weights = {np.asarray(weights).tolist()}; give {n} finite weights > 0, one per joint")
    return w


def noise_floor(sig: np.ndarray) -> np.ndarray:
    """Noise levels usable as weights: a joint fitted exactly gets the smallest positive level (or 1)."""
    top = sig.max(initial=0.0)
    if top <= 0:
        return np.ones_like(sig)
    return np.maximum(sig, 1e-12 * top)


#: ``per_robot`` options → the base parameters each makes per robot.
_PER_ROBOT = MappingProxyType({"friction": re.compile(r"^F[cv]\d+$"), "offsets": re.compile(r"^Foff\d+$")})


def _per_robot_option(per_robot) -> tuple:
    """``per_robot`` checked: () or a tuple of distinct keys of ``_PER_ROBOT``."""
    items = () if per_robot is None else (per_robot,) if isinstance(per_robot, str) else per_robot
    items = tuple(items) if isinstance(items, (tuple, list)) else (items,)
    if (per_robot is not None and not items) or any(not isinstance(x, str) or x not in _PER_ROBOT for x in items):
        raise InputError(f"per_robot = {per_robot!r}; give None or a tuple of 'friction' (Fc, Fv of every joint) "
                         "and 'offsets' (Foff of every joint)")
    return tuple(dict.fromkeys(items))


def _fleet_fit(Rs, own, shared, names, robots, weights, tol: float):
    """Least squares of the block-angular fleet problem from each robot's per-joint factors (Björck 1996, §6.3).

    Robot r's rows of [W_f,r  W_s  y] (its own columns first) are reduced to one triangular factor
    [[T_ff  T_fs  z_f], [0  S_r  z_r]]; the S_r blocks of all robots are stacked and factored into the shared
    problem, solved for θ_s; then θ_f,r = T_ff⁻¹ (z_f − T_fs θ_s). (Wᵀ W)⁻¹ follows from the same blocks:
    C_ss = (Sᵀ S)⁻¹, C_fs,r = −H_r C_ss, C_ff,rr' = δ_rr' T_ff⁻¹ T_ff⁻ᵀ + H_r C_ss H_r'ᵀ with H_r = T_ff⁻¹ T_fs.

    Parameters
    ----------
    Rs : list of (n, m, m) — each robot's per-joint factors of [W_j y_j] (m = b + 1, base column order).
    own, shared : int arrays (k,), (b_s,) — the base columns that are per robot and shared.
    names, robots : base parameter names, robot names (for errors).
    weights : (n,) or None — per-joint weights.
    tol : float — rank tolerance (0: no test).

    Returns
    -------
    θ (P,), (Wᵀ W)⁻¹ (P, P), ‖y − W θ‖, and the full triangular factor (P, P) whose singular values are W's; the
    order is the b_s shared parameters, then the k of each robot.
    """
    k, bs, R = len(own), len(shared), len(Rs)
    b = k + bs
    order = np.concatenate([own, shared, [b]])
    P = bs + R * k
    tops, lowers = [], []
    for r, Rr in enumerate(Rs):
        T = stack_factors(Rr[:, :, order], weights)
        cn = np.linalg.norm(T[:, :k], axis=0)
        top = np.linalg.norm(T[:, :b], axis=0).max(initial=0.0)
        bad = np.flatnonzero((cn <= tol * top) | (np.abs(np.diag(T[:k, :k])) <= tol * cn))
        if bad.size:
            unexcited = ", ".join(f"{names[own[i]]}[{robots[r]}]" for i in bad)
            raise IdentificationError(
                f"the data of robot '{robots[r]}' do not excite {unexcited} "
                "(their regressor columns are zero or combinations of the others: a joint that does not move); "
                "give that robot an exciting trajectory or identify its friction with the fleet (per_robot=None)")
        tops.append(T[:k])
        lowers.append(T[k:, k:])
    Rg = qr_stack([np.concatenate(lowers)[None]], bs + 1)[0]
    check_rank(Rg, [names[i] for i in shared], tol, zero=tol)
    theta_s, Cs, rnorm = solve_factor(Rg, bs)
    theta = np.empty(P)
    theta[:bs] = theta_s
    L = np.zeros((P, bs))
    L[:bs] = np.eye(bs)
    D = np.zeros((P, P))
    F = np.zeros((P, P))
    F[R * k:, :bs] = Rg[:bs, :bs]
    for r, T in enumerate(tops):
        cols = slice(bs + r * k, bs + (r + 1) * k)
        Tinv = scipy.linalg.solve_triangular(T[:, :k], np.eye(k))
        H = Tinv @ T[:, k:b]
        theta[cols] = Tinv @ T[:, b] - H @ theta_s
        L[cols] = -H
        D[cols, cols] = Tinv @ Tinv.T
        F[r * k:(r + 1) * k, cols] = T[:, :k]
        F[r * k:(r + 1) * k, :bs] = T[:, k:b]
    return theta, L @ Cs @ L.T + D, rnorm, F


def _per_robot_thetas(theta: np.ndarray, own, shared, R: int) -> np.ndarray:
    """(R, b): each robot's base-parameter vector (shared values and its own) from the fleet's θ (P,)."""
    bs, k = len(shared), len(own)
    out = np.empty((R, k + bs))
    out[:, shared] = theta[:bs]
    out[:, own] = theta[bs:].reshape(R, k)
    return out


def _fleet_residuals(Rs, thetas) -> np.ndarray:
    """‖y_j − W_j θ‖ of every joint (n,), over the whole fleet."""
    return np.sqrt(sum(joint_residuals(Rr, th) ** 2 for Rr, th in zip(Rs, thetas)))


def _fleet_labels(samples: Samples, arrays, chunk: int):
    """The (N,) robot indices as a dask array, and the checked robot names."""
    _, da = dask_modules()
    robots = robot_names(samples.robots, "Samples.robots")
    if not robots or samples.robot is None:
        raise InputError("per_robot: the Samples name no robots; read them with read_samples(..., robots=...) or "
                         "give Samples(q, qd, qdd, tau, robot=indices, robots=names)")
    labels = samples.robot
    if not isinstance(labels, da.Array):
        labels = np.asarray(labels)
        if labels.dtype.kind not in "iu":
            raise InputError(f"Samples.robot has dtype {labels.dtype}; give integer indices into Samples.robots")
        labels = da.from_array(labels.astype(np.int64), chunks=(chunk,))
    N = arrays[0].shape[0]
    if labels.ndim != 1 or not (np.isnan(N) or np.isnan(labels.shape[0]) or labels.shape[0] == N):
        raise InputError(f"Samples.robot has shape {labels.shape}; give one robot index per sample ({N},)")
    return labels, robots


def _identify_fleet(robot: Robot, bp, source, method: str, o: dict, terms, options) -> Identification:
    """:func:`identify` of a fleet (``per_robot``): shared inertia and position terms, each robot's friction/offsets.

    Each robot's rows are reduced to its own per-joint factors of [E W y] (merged per robot in the same tree);
    "auto" selects the position terms from the fleet's problem with each robot's own columns eliminated
    (:func:`_shared_gram`), where they are shared columns as the inertial parameters; "physical" fits the
    consistent fleet on the torques less the least-squares position terms."""
    if o["transmission"] is not None:
        raise InputError("transmission: a fleet (per_robot) is identified without motor parameters; give "
                         "transmission=None or identify each robot on its own")
    names = tuple(bp.names)
    b, n, red = bp.count, robot.n, o["reduction"]
    own = np.array([i for i, nm in enumerate(names) if any(_PER_ROBOT[x].match(nm) for x in options)], dtype=int)
    if not own.size:
        raise InputError(f"per_robot = {options}: the base parameters hold none of them (they are grouped with "
                         "others); identify the fleet as one robot (per_robot=None)")
    shared = np.array([i for i in range(b) if i not in set(own.tolist())], dtype=int)
    robots = source.robots
    R, k = len(robots), own.size
    cand = tuple(range(n)) if terms == "auto" else terms
    parts = source.reduce(cand, red)
    stray = sorted(set(parts) - set(range(R)))
    if stray:
        raise InputError(f"Samples.robot holds the indices {stray[:5]} outside 0…{R - 1}; give indices into "
                         f"Samples.robots ({R} names)")
    empty = [robots[r] for r in range(R) if r not in parts]
    if empty:
        raise IdentificationError(f"robot(s) {', '.join(repr(x) for x in empty)} have no samples; give their data "
                                  "or leave them out of the fleet")
    N = int(sum(parts[r][1] for r in range(R)))
    counts = np.sum([parts[r][2] for r in range(R)], axis=0)
    clipped = np.sum([parts[r][3] for r in range(R)], axis=0)
    shares = None
    if terms == "auto":  # from the fleet's problem on the shared columns: each robot's own ones projected out
        G = _shared_gram([gram(parts[r][0], red) for r in range(R)], own + 2 * n)
        shares, terms = _auto_terms(robot, G, factor(np.stack([G, 0 * G]), "gram",
                                                     _position_columns(cand, len(shared), ()))[0], len(shared))
    t = 2 * len(terms)
    P = t + len(shared) + R * k
    _check_counts(counts, N, P)
    factors = [factor(parts[r][0], red, _position_columns(cand, b, terms)) for r in range(R)]
    Rs = [f[0] for f in factors]
    cols = position_names(terms) + names
    own_x, shared_x = own + t, np.concatenate([np.arange(t), shared + t]).astype(int)
    wj = _user_weights(o["weights"], n)
    sw = None if o["weights"] is None else np.sqrt(wj)
    try:
        theta, C, rnorm, F = _fleet_fit(Rs, own_x, shared_x, cols, robots, sw, o["rank_tol"])
    except IdentificationError as exc:
        raise fit_failure(exc, terms, clipped, N) from None
    cov = rnorm ** 2 / max(int(counts.sum()) - P, 1) * C
    norms = np.stack([f[1][:, :-1] for f in factors])  # (R, n, t + b)
    present = np.concatenate([np.sqrt(np.sum(norms[:, :, shared_x] ** 2, axis=0)),
                              np.moveaxis(norms[:, :, own_x], 0, 1).reshape(n, -1)], axis=1)
    bj = (present > 1e-12 * present.max(axis=1, keepdims=True)).sum(axis=1)  # parameters in joint j's equations
    res = _fleet_residuals(Rs, _per_robot_thetas(theta, own_x, shared_x, R))
    noise = res / np.sqrt(np.maximum(counts - bj, 1))
    iterations, converged, message, report = 1, True, "", None
    if method == "physical":
        c = theta[:t]  # the position terms' least-squares values: the consistent fit is on τ less them
        less = [np.concatenate([Rr[..., t:-1], Rr[..., -1:] - Rr[..., :t] @ c[:, None]], axis=-1) for Rr in Rs]
        bounds = o["bounds"] or PhysicalBounds(min_mass=float(o["min_mass"]))
        phys, report = _fleet_physical(robot, bp, [Rr * (1.0 if sw is None else sw[:, None, None]) for Rr in less],
                                       own, shared, options, o["regularization"], bounds)
        theta = np.concatenate([c, phys])
        converged = report["certified"]
        if not converged:
            message = (f"the physically consistent fleet fit is not certified: {report['accuracy']}; give a larger "
                       "regularization or check the data")
    elif method == "wls":
        theta, cov, _, _ = _fleet_fit(Rs, own_x, shared_x, cols, robots, np.sqrt(wj) / noise_floor(noise), 0.0)
    elif method == "irls":
        def reweigh(th, scale):
            acc = source.reduce(terms, red, _per_robot_thetas(th, own_x, shared_x, R), scale, o["robust"])
            return [factor(acc[r][0], red)[0] for r in range(R)], np.sum([acc[r][2] for r in range(R)], axis=0)

        theta, cov, iterations, converged, message = _irls(
            lambda th: source.residuals(_per_robot_thetas(th, own_x, shared_x, R), terms), source.median, reweigh,
            lambda Rw: _fleet_fit(Rw, own_x, shared_x, cols, robots, sw, 0.0)[:2],
            lambda Rw, th: float(np.sum(wj * _fleet_residuals(Rw, _per_robot_thetas(th, own_x, shared_x, R)) ** 2)),
            Rs, counts, theta, int(o["max_iterations"]), P)
    res = _fleet_residuals(Rs, _per_robot_thetas(theta, own_x, shared_x, R))
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    position = dict(position_joints=terms, position_coefficients=theta[:t].reshape(-1, 2),
                    position_std=std[:t].reshape(-1, 2)) if t else {}
    return Identification(
        model=robot, method=method, friction=True, base=bp, samples=N, iterations=iterations, converged=converged,
        names=tuple(names[i] for i in shared) + tuple(f"{names[i]}[{r}]" for r in robots for i in own),
        values=theta[t:], std=std[t:], covariance=cov[t:, t:], condition_number=float(np.linalg.cond(F)),
        residual_rms=res / np.sqrt(np.maximum(counts, 1)), noise=noise, message=message, solver=report,
        equations=np.asarray(counts, dtype=int), weights=wj, position_shares=shares, **position)


def _shared_gram(grams, own) -> np.ndarray:
    """Σ_r of the Gram matrices (n, m, m) of every robot's rows with the robot's own columns ``own`` eliminated,
    joint by joint (Schur complements): the fleet's problem on the other columns (a robot's own parameters, its
    friction and offsets, appear in its joints' equations only)."""
    total = 0.0
    for G in grams:
        rest = np.setdiff1d(np.arange(G.shape[-1]), own)
        Gor = G[:, own][:, :, rest]
        total = total + G[:, rest][:, :, rest] - np.swapaxes(Gor, -1, -2) @ np.linalg.pinv(
            G[:, own][:, :, own], 1e-12, hermitian=True) @ Gor
    return total


def _fleet_physical(robot, base, Rs, own, shared, options, regularization, bounds):
    """The physically consistent fleet fit: θ (P,) in the fleet order, and the solver report.

    Minimises the fleet's residual Σ_r ‖W_r Ψ K_r − y_r‖² = Σ_r ‖T_r Ψ K_r − z_r‖² + ρ_r² (T_r, z_r, ρ_r: robot
    r's stacked (b + 1) × (b + 1) factor, whatever its number of samples) over the standard parameters K_r =
    [links, friction of r, motors]: the links (pseudo-inertias ⪰ 0, rotor inertias ≥ 0) and motors shared, each
    robot's Fc, Fv ≥ 0 and Foff free where ``per_robot`` makes them its own (a friction coefficient grouped into a
    shared base parameter stays shared), plus the pull towards the model's parameters — the program of
    :func:`robodyn.identification.dynamic.physical_fit` (:func:`robodyn.identification.consistent.fleet_program`),
    scaled, solved and certified the same way: an uncertified point comes back with ``solver["certified"]``
    False, never unchecked.
    """
    from robodyn.identification import consistent
    from robodyn.parameters.regressor import standard_parameter_vector

    n, nf = robot.n, robot.nf
    psi = standard_to_base(robot, base)
    prior = standard_parameter_vector(robot, True, base.transmission)
    off = 11 * nf
    kinds = {"friction": (0, 1), "offsets": (2,)}
    chosen = [off + 3 * j + c for j in range(n) for o in options for c in kinds[o]]
    # a standard column is a robot's own only where it reaches no shared base parameter
    mine = sorted(c for c in chosen if not np.any(psi[shared, c]))
    limits = consistent.check_bounds(bounds, nf)
    lam = 1e-6 if regularization is None else float(regularization)
    program, cols = consistent.fleet_program(robot, base, psi, prior, [stack_factors(Rr) for Rr in Rs], mine, lam,
                                             limits)
    solved = consistent.solve(program, limits, nf)
    if solved is None:
        raise IdentificationError("the physically consistent fleet identification failed: the conic solver "
                                  "returned no point; check the data and the model's units, or use method='ols'")
    K, report = solved
    report.update(regularization=lam, regularization_rule="given" if regularization is not None else
                  "default of a fleet (1e-6; no cross-validation over a fleet's robots)")
    thetas = K[cols] @ psi.T  # (R, b): each robot's base parameters
    theta = np.concatenate([thetas[0, shared], thetas[:, own].ravel()])
    return theta, report


def fleet_values(result: Identification, name: str) -> np.ndarray:
    """Robot ``name``'s base-parameter vector (b,) from a fleet identification (``identify(..., per_robot=...)``):
    the shared values and that robot's own, in the order of ``result.base.names``, so that
    ``result.base.regressor(q, qd, qdd) @ fleet_values(result, name)`` predicts its torques.

    Raises
    ------
    InputError
        ``name`` is not a robot of ``result``.
    """
    if not isinstance(result, Identification):
        raise InputError(f"result must be an Identification (identify(..., per_robot=...)), got "
                         f"{type(result).__name__}")
    index = dict(zip(result.names, result.values))
    if not isinstance(name, str) or not any(k.endswith(f"[{name}]") for k in index):
        from robodyn.sanitize import printable

        raise InputError(f"robot '{printable(str(name))}' is not in this identification; give one of the names in "
                         "brackets of result.names")
    return np.array([index.get(f"{k}[{name}]", index.get(k, np.nan)) for k in result.base.names])


def standard_to_base(robot: Robot, bp) -> np.ndarray:
    """Ψ (b, p) with K_B = Ψ K for every standard vector K ([9.40]) of ``robot`` (order of
    ``rd.parameters.standard_parameter_names(robot, bp.friction, bp.transmission)``), from the regressor at random states;
    ``bp`` : BaseParameters of ``robot``."""
    from robodyn.parameters.base import BaseParameters
    from robodyn.parameters.numeric import random_states
    from robodyn.parameters.regressor import regressor, standard_parameter_names

    if not isinstance(bp, BaseParameters) or bp.robot is not robot:
        raise InputError("argument 'bp': give the BaseParameters of this robot (rd.base_parameters(robot))")
    p = len(standard_parameter_names(robot, bp.friction, bp.transmission))
    q, qd, qdd = random_states(robot, 2 * p // max(robot.n, 1) + 20, 1)
    Wf = regressor(robot, q, qd, qdd, friction=bp.friction, transmission=bp.transmission).reshape(-1, p)
    Wb = Wf[:, bp.columns]
    psi = np.linalg.lstsq(Wb, Wf, rcond=None)[0]
    psi[np.abs(psi) < 1e-10 * max(np.abs(psi).max(), 1.0)] = 0.0
    return psi


#: Conic solver settings of ``method="physical"``: Clarabel (interior point, converges to the tolerance in a few
#: tens of iterations) at 1e-10, below which its own check flags round-off as "inaccurate"; SCS (first-order)
#: only when Clarabel is not installed.
SOLVERS = (("CLARABEL", {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "max_iter": 500}),
           ("SCS", {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200000}))


def solve_conic(problem, what: str, hint: str = "try method='wls', or scale the data") -> tuple[str, str]:
    """Solve the cvxpy ``problem`` with the first installed solver of :data:`SOLVERS`, its warnings caught to be
    reported on the result rather than printed.  Returns (solver name, the warnings as one line); a solver that
    stops raises :class:`IdentificationError` naming ``what`` (e.g. "physically consistent identification") and
    ``hint``.  The status is the caller's to judge."""
    import warnings

    import cvxpy as cp

    installed = cp.installed_solvers()
    solver, options = next((x for x in SOLVERS if x[0] in installed), SOLVERS[-1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            problem.solve(solver=solver, **options)
        except cp.error.SolverError as exc:
            raise IdentificationError(f"the {what} failed: {solver} stopped ({exc}); {hint}") from None
    return solver, "; ".join(str(w.message) for w in caught)


@dataclass(frozen=True, eq=False)
class PhysicalFit:
    """Result of :func:`physical_fit`.

    Attributes
    ----------
    values : ndarray (b,) — base parameters K_B = Ψ K of the consistent standard parameters (units of
        ``base.names``).
    standard : ndarray (p,) — the standard parameters K (11 per frame, then friction and motor terms as in
        ``rd.parameters.standard_parameter_names``), projected onto the consistent set (Wensing et al. 2018).
    robot : Robot — the model carrying them (name ``<name>_identified``).
    transmission : Transmission or None — with the identified motor inertias (and friction), if ``base`` has one.
    solver : dict — name, status, iterations, constraint_violation, objective, lower_bound, relative_gap,
        accuracy, certified, regularization, warnings.
    prior_share : ndarray (p,) — per standard parameter, the share of the prior in its estimate (0 to 1).
    """

    values: np.ndarray
    standard: np.ndarray
    robot: Robot
    transmission: object
    solver: dict
    prior_share: np.ndarray | None = None


def physical_fit(robot: Robot, base, R, qty, residual: float = 0.0, regularization: float = 1e-6,
                 min_mass: float = 0.0, massless=(), bounds=None) -> PhysicalFit:
    """Physically consistent base parameters from the triangular factor of the least-squares problem.

    Solves the semidefinite program of ``rd.identify(..., method="physical")`` (Sousa & Cortesão 2014; Wensing,
    Kim & Slotine 2018: every link's 4×4 pseudo-inertia positive semidefinite, rotor inertias and friction
    coefficients ≥ 0) on the reduced problem: with W = Q R the QR factorization of the base regressor of all
    samples, ‖W Ψ K − y‖² = ‖R Ψ K − Qᵀy‖² + ‖y‖² − ‖Qᵀy‖², so only R (b × b), Qᵀy (b,) and the residual norm
    enter, whatever the number of samples (``robodyn.distributed.identify`` reduces out-of-core samples to them).

    Parameters
    ----------
    robot : Robot — the model (its parameters are the prior of the regularization).
    base : BaseParameters — of ``robot``; its friction setting and transmission choose the unknowns.
    R : array_like (b, b) — upper-triangular factor of the (weighted) base regressor, Rᵀ R = Wᵀ W.
    qty : array_like (b,) — Qᵀ y, the measured torques projected on Q.
    residual : float — ‖y − Q Qᵀ y‖, the least-squares residual norm (only scales the objective).
    regularization : float — weight of the pull towards the model's parameters, relative to the fit (≥ 0).
    min_mass : float — lower bound on every link's mass, kg.
    massless : sequence of int — frames (0-based) whose inertial parameters, rotor inertia and joint friction are
        held at zero (the virtual frames of a floating base's augmented robot, :mod:`robodyn.identification.floating`).
    bounds : PhysicalBounds, dict or None — mass bounds, centre-of-mass boxes or hulls, total mass (as :func:`identify`).

    Returns
    -------
    PhysicalFit

    Raises
    ------
    InputError
        Shapes that do not match ``base.count``, non-finite entries, negative ``regularization``.
    IdentificationError
        The conic solver returns no point (an uncertified one is reported in ``solver["certified"]``).
    """
    from robodyn.parameters.base import BaseParameters

    if not isinstance(base, BaseParameters) or base.robot is not robot:
        raise InputError("argument 'base': give the BaseParameters of this robot (rd.base_parameters(robot))")
    b = base.count
    R = as_real_array("R", R).astype(float)
    qty = as_real_array("qty", qty).astype(float)
    if R.shape != (b, b) or qty.shape != (b,):
        raise InputError(f"arguments 'R' and 'qty' must have shapes ({b}, {b}) and ({b},) for the {b} base "
                         f"parameters; got {R.shape} and {qty.shape}")
    for name, v in (("R", R), ("qty", qty), ("residual", residual), ("regularization", regularization),
                    ("min_mass", min_mass)):
        if not np.all(np.isfinite(v)):
            raise InputError(f"argument '{name}' has NaN or inf entries; give finite values")
    if regularization < 0:
        raise InputError(f"regularization = {regularization!r}; give a value >= 0")
    Rg = np.zeros((b + 1, b + 1))
    Rg[:b, :b], Rg[:b, b], Rg[b, b] = R, qty, float(residual)
    Kb, K, robot_out, motors, report, share = _physical(robot, base, Rg, float(regularization), float(min_mass),
                                                        tuple(int(j) for j in massless), bounds=bounds)
    return PhysicalFit(values=Kb, standard=K, robot=robot_out, transmission=motors, solver=report,
                       prior_share=share)


def _physical(robot: Robot, bp, Rg: np.ndarray, regularization, min_mass: float, massless=(), bounds=None,
              folds=None, free: int = 0):
    """The semidefinite program of ``method="physical"`` (:mod:`robodyn.identification.consistent`); returns
    (K_B, K, Robot, Transmission, solver report, prior share (p,)); ``folds`` may carry ``free`` columns before
    the base ones (minimised out of each training fit)."""
    from robodyn.identification import consistent
    from robodyn.parameters.regressor import standard_parameter_vector

    nf, n = robot.nf, robot.n
    tr = bp.transmission
    psi = standard_to_base(robot, bp)
    prior = standard_parameter_vector(robot, bp.friction, tr)
    if bounds is None:
        bounds = consistent.PhysicalBounds(min_mass=min_mass)
    limits = consistent.check_bounds(bounds, nf)
    if regularization is None:
        if folds is None:
            raise InputError("regularization=None needs the samples' time blocks; give a value (e.g. 1e-3)")
        D = consistent.scaled_program(robot, bp, psi, prior, Rg, 0.0, limits, massless).D
        lam, rule = consistent.cross_validated_regularization(folds, psi, prior, D, free=free)
    else:
        lam, rule = float(regularization), "given"
    program = consistent.scaled_program(robot, bp, psi, prior, Rg, lam, limits, massless)
    solved = consistent.solve(program, limits, nf)
    if solved is None:
        raise IdentificationError("the physically consistent identification failed: the conic solver returned no "
                                  "point; check the data and the model's units, or use method='ols'")
    Kv, report = solved
    report.update(regularization=lam, regularization_rule=rule)
    params = Kv[: 11 * nf].reshape(nf, 11)
    changes = dict(params=params[:, :10].copy(), Ia=params[:, 10].copy(), Fst=np.zeros(nf), kst=np.zeros(nf),
                   Bst=np.zeros(nf), name=f"{robot.name}_identified",
                   source=f"identified from measurements (physical), model {robot.name}")
    off = 11 * nf
    if bp.friction:
        fr = Kv[off: off + 3 * n].reshape(n, 3)
        off += 3 * n
        jf = robot.joint_frames
        for key, col in (("Fc", 0), ("Fv", 1), ("Foff", 2)):
            v = np.zeros(nf)
            v[jf] = fr[:, col]
            changes[key] = v
    motors = None
    if tr is not None:
        m = 3 if bp.friction else 1
        mv_ = Kv[off:].reshape(n, m)
        extra = {"J_m": mv_[:, 0]} | ({"Fc_m": mv_[:, 1], "Fv_m": mv_[:, 2]} if bp.friction else {})
        motors = tr.replace(**extra)
    return psi @ Kv, Kv, robot.replace(**changes), motors, report, consistent.prior_share(program)


@dataclass(frozen=True, eq=False)
class EssentialParameters:
    """Result of :func:`essential_parameters` (Pham & Gautier; Khalil & Dombre §9.4 / ch. 12).

    Attributes
    ----------
    names, values, std : tuple / ndarray (e,) — the essential parameters, their OLS estimates on the data and σ.
    removed : tuple of str — the base parameters eliminated, in the order of elimination.
    relative_error : float — ‖y − W_e K_e‖ / ‖y‖ of the essential set (weighted as the identification).
    full_relative_error : float — the same for all the base parameters.
    history : tuple of (str, float, float) — per step: the parameter removed, its %σ then, the relative error after.
    tolerance : float — the largest relative growth of the error allowed.
    """

    names: tuple
    values: np.ndarray
    std: np.ndarray
    removed: tuple
    relative_error: float
    full_relative_error: float
    history: tuple
    tolerance: float

    @property
    def relative_std(self) -> np.ndarray:
        """100 σ / |value| (%)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.values != 0, 100.0 * self.std / np.abs(self.values), np.inf)


def _subset_fit(Rg: np.ndarray, cols, b: int, dof_rows: int):
    """OLS on the columns ``cols`` of the stacked factor: (θ, σ, residual norm)."""
    k = len(cols)
    theta, inv, rnorm = solve_factor(qr_stack([Rg[None, :, list(cols) + [b]]], k + 1)[0], k)
    return theta, np.sqrt(np.maximum(np.diag(inv), 0.0) * rnorm ** 2 / max(dof_rows - k, 1)), rnorm


def essential_parameters(result: Identification, q, qd, qdd, tau, tolerance: float = 0.05,
                         max_relative_std: float | None = None, parallel=None,
                         position_terms="result") -> EssentialParameters:
    """The essential parameters (Pham & Gautier 1991): a subset of the base parameters that explains the data.

    Starting from every base parameter of ``result`` (and its position terms), the parameter with the largest
    relative standard deviation of the least-squares estimate is removed and the others re-estimated, as long as
    the relative error of the fit ‖y − W_e K_e‖ / ‖y‖ stays within (1 + ``tolerance``) times that of the full set
    (default: 5 % growth) and, when ``max_relative_std`` is given, until every remaining %σ is below it.  The
    estimate is OLS, with the rows of each joint weighted by 1/σ_j for a ``"wls"`` result (Gautier's weights) and
    by ``result.weights``; the rows of clipped torques are left out as :func:`identify` leaves them out.

    Parameters
    ----------
    result : Identification — from :func:`identify` (its base parameters, transmission, weights, position terms).
    q, qd, qdd, tau : array (N, n) — the data (usually those of the identification).
    tolerance : float — relative growth of the fit error allowed (> 0).
    max_relative_std : float or None — stop early once every remaining parameter has %σ below this (%).
    parallel : IdentificationData or None — as in :func:`identify`: the regressor of the full-rate states,
        filtered and decimated like τ (pass the data the result was identified with ``parallel=``).
    position_terms : "result", tuple of int or None — the joints whose position-term columns sin q_j, cos q_j
        (named ``sin_q<j>``, ``cos_q<j>``, 1-based) are candidates beside the base parameters, as in
        :func:`identify`: default those ``result`` fitted (``result.position_joints``); None or () for none.
        Left out, a torque the terms carry is put into the base parameters' columns (the rotor inertia's, on slow
        excitation) and changes which of them look essential.

    Returns
    -------
    EssentialParameters
    """
    if not isinstance(result, Identification):
        raise InputError(f"result is {type(result).__name__}; give the Identification returned by rd.identify")
    if not (np.isfinite(tolerance) and tolerance > 0):
        raise InputError(f"tolerance = {tolerance!r}; give a relative growth > 0, e.g. 0.05")
    if isinstance(position_terms, str) and position_terms == "result":
        joints = tuple(result.position_joints)
    elif isinstance(position_terms, str) and position_terms == "auto":
        raise InputError("position_terms = 'auto' selects terms while fitting; give 'result' (those of the "
                         "identification), a tuple of joints, or None")
    else:
        joints = check_position_terms(position_terms, result.model)
    from robodyn.identification.data import saturated

    bp = result.base
    q, qd, qdd, tau = _samples(result.model, q, qd, qdd, tau)
    N, n = q.shape
    use = _rows_kept(qd, None, saturated(tau))
    Wp = None if parallel is None else _parallel_regressor(bp, parallel, q, qd, qdd, tau)
    names = position_names(joints) + tuple(bp.names)
    b = len(names)
    R = factor(ArraySource(bp, q, qd, qdd, tau, use, None if Wp is None else (lambda blk: Wp[blk])).reduce(joints)[0],
               "gram")[0]
    w = np.sqrt(result.weights) if result.weights is not None else np.ones(n)
    if result.method == "wls":
        w = w / noise_floor(result.noise)
    Rg = stack_factors(R, w)
    ynorm = float(np.linalg.norm(Rg[:, b]))
    if ynorm == 0:
        raise IdentificationError("the torques are all zero; nothing to explain")
    rows = N * n if use is None else int(use.sum())
    cols = list(range(b))
    theta, std, rnorm = _subset_fit(Rg, cols, b, rows)
    full = rnorm / ynorm
    removed, history = [], []
    while len(cols) > 1:
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(theta != 0, 100.0 * std / np.abs(theta), np.inf)
        if max_relative_std is not None and np.all(rel < max_relative_std):
            break
        k = int(np.argmax(rel))
        trial = cols[:k] + cols[k + 1:]
        t2, s2, r2 = _subset_fit(Rg, trial, b, rows)
        if r2 / ynorm > (1.0 + tolerance) * full + 1e-12:
            break
        removed.append(names[cols[k]])
        history.append((names[cols[k]], float(rel[k]), float(r2 / ynorm)))
        cols, theta, std, rnorm = trial, t2, s2, r2
    return EssentialParameters(
        names=tuple(names[c] for c in cols), values=theta, std=std, removed=tuple(removed),
        relative_error=float(rnorm / ynorm), full_relative_error=float(full), history=tuple(history),
        tolerance=float(tolerance))
