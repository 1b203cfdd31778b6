"""Dynamic identification by least squares on the base parameters (Khalil & Dombre §9.4, [9.36], [9.40]): the driver.

The inverse dynamic model is linear in the base parameters K_B (and in the friction parameters of [9.26]–[9.28],
and with a transmission in the motor parameters of [9.29]–[9.33]): Γ = D_B(q, q̇, q̈) K_B.  Stacking N samples
gives y = W K_B + ρ, which :func:`identify` solves by ``"ols"``, ``"wls"``, ``"irls"`` or ``"physical"``
(:data:`robodyn.identification.solvers.FITS`).  Every source (NumPy arrays, Dask arrays, Samples) is reduced by
:mod:`robodyn.identification.reduction` to per-joint factors R_j, so memory does not grow with N.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass, fields

import numpy as np

from robodyn.errors import InputError
from robodyn.identification.conventions import convention_hints
from robodyn.identification.data import constant_torques
from robodyn.identification.factors import RANK_TOL, IdentificationError, check_rank, solve_factor, stack_factors
from robodyn.identification.fleet import fleet_labels, identify_fleet, per_robot_option
from robodyn.identification.position import auto_terms, check_position_terms, position_names, term_columns
from robodyn.identification.reduction import (BLOCK, CHUNK, ArraySource, DaskSource, Samples, chunk_size, factor,
                                              gram, is_cluster_input, min_velocities, rows_used, sample_arrays)
from robodyn.identification.results import Identification
from robodyn.identification.samples import filtered_coulomb, parallel_regressor, stacked_runs, still_joints
from robodyn.identification.solvers import (IRLS_ITERATIONS, at_model_values, check_counts, fit_factors,
                                           fit_failure, irls, joint_weights, left_out_joints)
from robodyn.model.robot import Robot, check_robot


@dataclass(frozen=True)
class IdentificationOptions:
    """The options of :func:`identify` as one record (``identify(robot, data, method, options=...)``); the
    keyword arguments of the same names are the same options.  A field a source cannot honour raises InputError
    naming it: ``parallel`` on the cluster, ``per_robot`` without Samples, ``transmission`` for a fleet.

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
        Iteration limit of ``"irls"`` (default 200 passes over the samples); it stops earlier where a pass moves
        the estimate by at most 1e-3 of its standard deviations (``converged``).
    regularization : float or None
        ``"physical"``: weight λ of the pull (λ / p) ‖D⁻¹ (K − K_model)‖² towards the model's (a priori)
        parameters, each relative to its scale D, next to the fit normalised by ‖y‖²
        (:mod:`robodyn.identification.consistent`).  Default None: chosen by cross-validation on contiguous time
        blocks (``solver["regularization_rule"]`` says so).
    min_mass : float
        ``"physical"``: lower bound on every link mass (kg).
    bounds : PhysicalBounds, dict or None
        ``"physical"``: mass bounds per link, a box or a convex hull for every link's centre of mass, the total mass
        (:class:`robodyn.identification.consistent.PhysicalBounds`; its ``min_mass`` replaces ``min_mass``).
    position_terms : "auto", tuple of int or None
        Joints (0-based, revolute) whose equation gets the position term k_j sin q_j + c_j cos q_j (a torque that
        depends on q_j only: a cable, a spring, an angle-dependent sensor offset).  Default "auto": joint j gets it
        when it removes more than ``POSITION_SHARE`` of joint j's least-squares residual.  None or (): no terms.
        ``position_joints``, ``position_coefficients`` and ``position_shares`` on the result report them
        (docs/identification.md).
    reduction : {"gram", "tsqr"}
        The per-chunk reduction (:mod:`robodyn.identification.reduction`): Gram matrices (accuracy ε cond(W_s)²),
        or a tall-skinny QR (ε cond(W_s), about 6 times the cost).
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
        The robot's motors and (coupled) transmissions: the rotor inertia ``Iam<i>`` and, with friction,
        ``Fcm<i>``, ``Fvm<i>`` of every motor on q̇_m = J_mq q̇ are identified too (grouped as
        :func:`robodyn.base_parameters` states; "physical": ≥ 0, in ``identified_transmission``).
    min_velocity : float or array (n,) or None
        Drop the rows of joint j's equation where |q̇_j| < min_velocity_j (rad/s | m/s), where the sign of the
        Coulomb friction cannot be trusted.  Default: keep every row.  Rows where joint j's torque is clipped
        (:func:`robodyn.identification.data.saturated`, ``IdentificationData.saturated``) are always left out;
        ``equations`` counts the rows used.
    weights : array (n,) or None
        Per-joint weights w_j ≥ 0 of the fit: the cost is Σ_j w_j ‖ρ_j‖² (row j scaled by √w_j); with
        ``"wls"`` they multiply Gautier's 1/σ_j².  Default: 1, and for ``"physical"`` Gautier's 1/σ_j² of the
        least-squares residual (a joint whose torques are under 1 % of the largest's: the median weight), so that
        a light wrist counts by its own noise rather than by the size of its torques; ``weights=1`` fits
        unweighted.  w_j = 0 leaves joint j's equations out (a joint without a torque sensor); so does the
        default, with a UserWarning, for a joint whose torque holds one value in every sample.  The other joints'
        torques still carry the inertia of the links they move; what only the left-out joints' torques would
        carry (their friction and rotor inertia) is then in no equation: ``"physical"`` holds it at the model's
        values, the least-squares methods report it at the model's values with NaN standard deviations (a
        UserWarning names it).  The result's ``weights`` are those used.
    parallel : IdentificationData or None
        Data from ``rd.identification.prepare_identification_data(..., parallel=True)`` whose ``q``, ``qd``, ``qdd``, ``tau`` are
        the samples given: the regressor is computed at the full-rate states and filtered, trimmed and decimated
        exactly as τ was (Gautier's parallel filtering and decimation), so that the Coulomb columns sign(q̇) see
        the filter the measured torques saw (docs/identification.md).  Costs 8 M n b bytes (M full-rate samples).
        Default None: the regressor at the samples.
    """

    friction: bool = True
    base: object = None
    robust: str = "huber"
    max_iterations: int = IRLS_ITERATIONS
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
    if options is None:
        return given
    if not isinstance(options, IdentificationOptions):
        raise InputError(f"options is {type(options).__name__}; give an IdentificationOptions")
    defaults = IdentificationOptions()
    clash = [k for k, v in given.items() if v is not getattr(defaults, k) and not (
        isinstance(v, (int, float, str, bool)) and v == getattr(defaults, k))]
    if clash:
        raise InputError(f"give {', '.join(clash)} either as keyword(s) or in options, not both")
    return {f.name: getattr(options, f.name) for f in fields(IdentificationOptions)}


def identify(robot: Robot, q, qd=None, qdd=None, tau=None, method: str = "physical", friction: bool = True, base=None,
             robust: str = "huber", max_iterations: int = IRLS_ITERATIONS, regularization: float | None = None,
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
        :func:`robodyn.joint_torques_from_motor`).  Several runs: ``q`` a list of :class:`IdentificationData`
        (each prepared on its own) or of (q, qd, qdd, tau) tuples, qd, qdd, tau not given.  Samples beyond memory:
        ``dask.array`` arrays (N, n), or :class:`Samples` (:func:`robodyn.distributed.read_samples`) as ``q``
        alone, reduced chunk by chunk to the same result to rounding (docs/scaling.md).
    method : {"physical", "ols", "wls", "irls"}
        The solver (:mod:`robodyn.identification.solvers`).  Default ``"physical"``: the standard parameters of
        rigid bodies with friction ≥ 0, pulled towards the model's where the data determine them little; on
        measured runs it extrapolates to held-out motions where least squares does not, and is within a few points
        of it elsewhere (docs/identification.md, "Which method by default").  ``"ols"``: plain least squares,
        which raises on parameters the data do not excite.
    friction, base, robust, max_iterations, regularization, min_mass, rank_tol, transmission, min_velocity, weights,
    parallel, bounds, position_terms, reduction, chunk, per_robot
        The options, as keywords or as one :class:`IdentificationOptions` record ``options`` (giving both is an
        error); each is documented on that record.
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
        Shapes, NaN rows (reported by row), unknown method, a transmission of the wrong size, bad weights (all 0,
        or > 0 on a joint whose torque holds one value), an option the source cannot honour (named).

    Warns
    -----
    UserWarning
        Without ``weights``: the joints whose torque holds one value in every sample, left out of the fit.
    """
    check_robot(robot)
    o = merge_options(options, dict(
        friction=friction, base=base, robust=robust, max_iterations=max_iterations, regularization=regularization,
        min_mass=min_mass, rank_tol=rank_tol, transmission=transmission, min_velocity=min_velocity, weights=weights,
        parallel=parallel, bounds=bounds, position_terms=position_terms, reduction=reduction, chunk=chunk,
        per_robot=per_robot))
    terms = check_position_terms(o["position_terms"], robot)
    _check_choices(method, o)
    fleet = per_robot_option(o["per_robot"])
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
        return identify_fleet(robot, bp, source, method, o, terms, fleet)
    try:
        return _identify(robot, bp, source, method, o, terms)
    except IdentificationError as exc:
        still = still_joints(q)
        if not still:
            raise
        raise IdentificationError(
            f"{exc}; joint(s) {', '.join(str(j + 1) for j in still)} do not move in these data (their motion is "
            "below 1 % of the largest joint's: the preparation set their q̇ and q̈ to 0)") from None


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
    if o["chunk"] is not None:
        chunk_size(o["chunk"])


def _base_of(robot: Robot, o: dict):
    """The BaseParameters to identify: ``o["base"]`` checked, or Khalil's rules (the numeric QR set when they are
    not minimal) of the robot's geometry, or of its angles made exact where rounded right angles (``right_angled``)
    add parameters that no data identify (with a UserWarning)."""
    from robodyn.parameters.base import right_angled
    from robodyn.parameters.regressor import standard_parameter_names

    friction, transmission, base = o["friction"], o["transmission"], o["base"]
    if transmission is not None:
        standard_parameter_names(robot, friction, transmission)  # checks the type and size of the transmission
    if base is None:
        base = _rules_or_qr(robot, friction, transmission)
        exact, moved = right_angled(robot)
        if moved:
            snapped = _rules_or_qr(exact, friction, transmission)
            if snapped.count < base.count:
                _warn_rounded_angles(robot, base, snapped, moved)
                base = dataclasses.replace(snapped, robot=robot)  # the same K: the values are the robot's
    elif base.robot is not robot or base.friction != friction or base.transmission is not transmission:
        raise InputError("base: give the BaseParameters of this robot with the same friction setting and transmission")
    return base


def _rules_or_qr(robot: Robot, friction: bool, transmission):
    """Khalil's rules, or the numeric QR set where they are not minimal."""
    from robodyn.parameters.base import base_parameters

    base = base_parameters(robot, friction=friction, transmission=transmission)
    if not base.minimal:
        base = base_parameters(robot, method="numeric", friction=friction, transmission=transmission)
    return base


def _warn_rounded_angles(robot: Robot, base, snapped, moved) -> None:
    """Say which base parameters exist only through angles a hair off a right angle, and how to keep them."""
    extra = [n for n in base.standard if n not in set(snapped.standard)]
    worst = max(abs(v - np.round(v / (np.pi / 2)) * (np.pi / 2)) for _, _, v in moved)
    where = ", ".join(f"{f} of '{name}' = {v:.6g}" for name, f, v in moved[:4]) + (", ..." if len(moved) > 4 else "")
    these, exist, they = ("this", "exists", "It changes") if len(extra) == 1 else ("these", "exist", "They change")
    warnings.warn(
        f"robot '{robot.name}': {these} {len(extra)} of its {base.count} base parameters ({', '.join(extra)}) {exist} "
        f"only because angles lie within {worst:.2g} rad of a right angle ({where}; rounded right angles, as 1.5708 "
        f"for π/2 in a model file). {they} the torques by about that fraction, which no measurement resolves, so "
        f"robodyn identifies the {snapped.count} base parameters of the exact right angles (Khalil & Dombre §9.4.2) "
        f"on the model's own geometry. To identify all {base.count}, pass base=rd.base_parameters(robot, "
        f"friction={base.friction}).", UserWarning, stacklevel=4)


def _check_positions(robot: Robot, q: np.ndarray) -> None:
    """Warn where q (N, n) runs outside a joint's limits (``qlim``) by more than their width: a log in degrees
    (or millimetres) read as radians (metres) identifies parameters of motions the robot never made."""
    lo, hi = robot.qlim[:, 0], robot.qlim[:, 1]
    width = hi - lo
    low, high = q.min(axis=0), q.max(axis=0)
    far = np.isfinite(width) & (width > 0) & ((high > hi + width) | (low < lo - width))
    if not far.any():
        return
    revolute = robot.sigma[robot.joint_frames] == 0
    spans, fixes = [], set()
    for j in np.flatnonzero(far):
        unit, scale = ("degrees", np.pi / 180) if revolute[j] else ("millimetres", 1e-3)
        inside = lo[j] - 0.1 * width[j] <= scale * low[j] and scale * high[j] <= hi[j] + 0.1 * width[j]
        fixes.add(unit if inside else "")
        spans.append(f"joint {j + 1} ({robot.q_names[j]}) [{low[j]:.4g}, {high[j]:.4g}] outside "
                     f"[{lo[j]:.4g}, {hi[j]:.4g}]")
    hint = (f" In {fixes.pop()} they would lie within them: convert q to SI units (rad, m)." if len(fixes) == 1
            and "" not in fixes else " Check the units (rad, m) and the zero of each joint.")
    warnings.warn(f"robot '{robot.name}': the positions run outside the joint limits by more than the limits' width: "
                  f"{'; '.join(spans)}.{hint} The estimates fit the motions given.", UserWarning, stacklevel=4)


def _array_source(robot: Robot, bp, q, qd, qdd, tau, o: dict) -> ArraySource:
    """In-memory samples (one run, or runs stacked) as a source: the rows used (``min_velocity``, clipped
    torques), the regressor filtered like τ (``parallel``) or with the runs' filtered Coulomb columns."""
    parallel = o["parallel"]
    # the parallel regressor replaces the Coulomb columns: the motors' are not computed for it
    q, qd, qdd, tau, coulomb, clipped = stacked_runs(robot, q, qd, qdd, tau,
                                                     bp.transmission if parallel is None else None)
    _check_positions(robot, q)
    for hint in convention_hints(robot, q, qd, qdd, tau):
        warnings.warn(hint, UserWarning, stacklevel=3)
    W = None
    if parallel is not None:
        Wp = parallel_regressor(bp, parallel, q, qd, qdd, tau)
        W = lambda blk: Wp[blk]  # noqa: E731
    elif coulomb is not None:
        patched = filtered_coulomb(bp, coulomb)
        W = lambda blk: patched(q[blk], qd[blk], qdd[blk], blk)  # noqa: E731
    left = left_out_joints(robot, constant_torques(tau, clipped), o["weights"])
    use = rows_used(qd, clipped, min_velocities(o["min_velocity"], robot.n), whole=True, left_out=left)
    return ArraySource(bp, q, qd, qdd, tau, use, W, o["chunk"] or BLOCK, clipped.sum(axis=0), left)


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
    labels, robots = fleet_labels(samples, arrays, chunk) if fleet else (None, ())
    source = DaskSource(bp, arrays, min_velocities(o["min_velocity"], robot.n), labels, robots)
    if not fleet:  # a fleet refuses joints left out (identify_fleet)
        source.left_out = left_out_joints(robot, source.constant, o["weights"])
    return source


def _without(x: np.ndarray, joints, axis: int = 0) -> np.ndarray:
    """x with its entries of ``joints`` along ``axis`` (the joints' axis) set to 0 (a copy; x itself if none)."""
    if not len(joints):
        return x
    x = np.array(x)
    x[(slice(None),) * axis + (joints,)] = 0
    return x


def _identify(robot: Robot, bp, source, method: str, o: dict, terms) -> Identification:
    """The driver of one robot: one reduction of the source (with the position columns of every candidate joint
    and the time blocks of the cross-validation), the terms selected from it, the fit on its factors."""
    from robodyn.identification.consistent import FOLDS

    n, b, red = robot.n, bp.count, o["reduction"]
    wj = joint_weights(o["weights"], n)
    cand = tuple(range(n)) if terms == "auto" else terms
    k_folds = FOLDS if method == "physical" and o["regularization"] is None else 0
    acc, N, counts, clipped, folds = source.reduce(cand, red, folds=k_folds)
    left = list(source.left_out)
    acc, counts = _without(acc, left, axis=1), _without(counts, left)  # a cluster's chunks reduce every joint's
    folds = None if folds is None else _without(folds, left, axis=1)
    check_counts(counts, N, b, left)
    shares = None
    if terms == "auto":
        shares, terms = auto_terms(robot, gram(acc, red), factor(acc, red, term_columns(cand, b, ()))[0], b)
    S = term_columns(cand, b, terms)
    R, norms = factor(acc, red, S)
    if folds is not None:
        folds = folds[:, :, S][:, :, :, S]
    names = position_names(terms) + tuple(bp.names)
    m = 2 * len(terms)
    # least squares: the base columns in no equation left (a left-out joint's friction, rotor inertia) are not
    # fitted but reported at the model's values; "physical" holds them itself
    absent = m + np.flatnonzero(~norms[:, m:-1].any(axis=0)) if left and method != "physical" else np.zeros(0, int)
    fitted = np.delete(np.arange(len(names) + 1), absent)  # columns of [E W y] (terms' layout) in the fit
    if absent.size:
        R, norms = factor(acc, red, np.asarray(S)[fitted])
        names = tuple(np.delete(names, absent))

    def whole(th):  # the fitted parameters with the others at the model's values
        if not absent.size:
            return th
        out = np.concatenate([np.zeros(m), bp.values])
        out[fitted[:-1]] = th
        return out

    def passes(theta):
        def reweigh(th, scale, robust):
            acc_w, _, used, _, _ = source.reduce(terms, red, whole(th), scale, robust)
            return factor(_without(acc_w, left, axis=1), red, fitted)[0], _without(used, left)

        def fit(Rw):
            Rg = stack_factors(Rw, np.sqrt(wj))
            check_rank(Rg, names, 0.0, 0.0)
            theta, inv, rnorm = solve_factor(Rg, len(names))
            return theta, inv, Rg[:len(names), :len(names)], rnorm

        return irls(lambda th: source.residuals(whole(th), terms), source.median, reweigh, fit, R, counts, theta,
                    int(o["max_iterations"]), len(names), o["robust"], _without(wj, left))

    try:
        fit = fit_factors(robot, bp, R, counts, method, weights=None if o["weights"] is None else wj,
                          rank_tol=o["rank_tol"], norms=norms, regularization=o["regularization"],
                          min_mass=o["min_mass"], bounds=o["bounds"], folds=folds, irls=passes,
                          free=position_names(terms), left_out=left, names=names)
    except IdentificationError as exc:
        raise fit_failure(exc, terms, clipped, N, left) from None
    if absent.size:
        fit = at_model_values(robot, bp, fit, absent - m)
    return Identification(model=robot, method=method, friction=o["friction"], base=bp, names=tuple(bp.names),
                          samples=N, transmission=o["transmission"], equations=np.asarray(counts, dtype=int),
                          parallel=o["parallel"] is not None, position_shares=shares,
                          position_range=source.position_range(terms) if terms else None, **fit)
