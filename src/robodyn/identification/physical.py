"""The physically consistent fit of ``method="physical"`` (Sousa & Cortesão 2014; Wensing, Kim & Slotine 2018):
the program of :mod:`robodyn.identification.consistent` (K_B = Ψ K, [9.40]) built from a reduced problem, its
regularization given or chosen from the data, solved and certified; the model that carries the estimate.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from robodyn.arrays import as_real_array
from robodyn.errors import InputError
from robodyn.identification import consistent
from robodyn.identification.consistent import SOLVERS
from robodyn.identification.factors import IdentificationError
from robodyn.model.robot import Robot


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


def solve_conic(problem, what: str, hint: str = "try method='wls', or scale the data") -> tuple[str, str]:
    """Solve the cvxpy ``problem`` with the first installed solver of
    :data:`robodyn.identification.consistent.SOLVERS`, its warnings caught to be reported on the result rather than
    printed.  Returns (solver name, the warnings as one line); a solver that
    stops raises :class:`IdentificationError` naming ``what`` (e.g. "physically consistent identification") and
    ``hint``.  The status is the caller's to judge."""
    import cvxpy as cp

    installed = cp.installed_solvers()
    solver, options = next((x for x in SOLVERS if x[0] in installed), SOLVERS[-1])
    try:
        return solver, consistent.solved(problem, solver, options)
    except cp.error.SolverError as exc:
        raise IdentificationError(f"the {what} failed: {solver} stopped ({exc}); {hint}") from None


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
        fit_gap (√objective − √lower_bound), accuracy, certified, regularization, warnings.
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

    Solves the semidefinite program of ``rd.identify(..., method="physical")``
    (:mod:`robodyn.identification.consistent`) on the reduced problem: with W = Q R the QR factorization of the
    base regressor, ‖W Ψ K − y‖² = ‖R Ψ K − Qᵀy‖² + ‖y‖² − ‖Qᵀy‖², so only R, Qᵀy and the residual norm enter.

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
    Kb, K, robot_out, motors, report, share = physical_estimate(robot, base, Rg, float(regularization),
                                                                float(min_mass), tuple(int(j) for j in massless),
                                                                bounds=bounds)
    return PhysicalFit(values=Kb, standard=K, robot=robot_out, transmission=motors, solver=report,
                       prior_share=share)


def physical_estimate(robot: Robot, bp, Rg: np.ndarray, regularization, min_mass: float, massless=(), bounds=None,
                      folds=None, free: int = 0):
    """The semidefinite program of ``method="physical"`` (:mod:`robodyn.identification.consistent`); returns
    (K_B, K, Robot, Transmission, solver report, prior share (p,)); ``folds`` may carry ``free`` columns before
    the base ones (minimised out of each training fit)."""
    from robodyn.parameters.regressor import standard_parameter_vector

    nf, n = robot.nf, robot.n
    tr = bp.transmission
    psi = standard_to_base(robot, bp)
    prior = standard_parameter_vector(robot, bp.friction, tr)
    limits = consistent.check_bounds(consistent.PhysicalBounds(min_mass=min_mass) if bounds is None else bounds, nf)
    program = consistent.scaled_program(robot, bp, psi, prior, Rg, 0.0, limits, massless)
    Kv, report, program = solve_regularized(program, limits, nf, regularization, folds, psi, free)
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


def solve_regularized(program, limits, nf: int, regularization, folds, psi: np.ndarray, free: int = 0,
                      what: str = "identification"):
    """Solve the scaled program of :mod:`robodyn.identification.consistent` (one robot's or a fleet's) with the
    weight λ = ``regularization`` of the pull towards the prior, or, when None, λ chosen by cross-validation on
    the time blocks ``folds`` (k, free + P + 1, free + P + 1): the Gram matrices of the weighted [E W y] of each
    block, the columns of W the images Ψ K of the program's unknowns (``psi`` (P, p)), E ``free`` columns
    minimised out.  Returns (K (p,), the solver report with ``regularization`` and ``regularization_rule``, the
    program with λ); IdentificationError naming ``what`` when the solver returns no point."""
    if regularization is None:
        if folds is None:
            raise InputError("regularization=None needs the samples' time blocks; give a value (e.g. 1e-3)")
        lam, rule = consistent.cross_validated_regularization(folds, psi, program.prior, program.D, free=free)
    else:
        lam, rule = float(regularization), "given"
    program = replace(program, lam=lam)
    solved = consistent.solve(program, limits, nf)
    if solved is None:
        raise IdentificationError(f"the physically consistent {what} failed: the conic solver returned no point; "
                                  "check the data and the model's units, or use method='ols'")
    K, report = solved
    report.update(regularization=lam, regularization_rule=rule)
    return K, report, program
