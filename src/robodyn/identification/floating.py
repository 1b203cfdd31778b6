"""Identification of a floating-base robot from its base's equations alone (Ayusawa, Venture and Nakamura).

The first six rows of the floating-base inverse dynamic model (:mod:`robodyn.parameters.floating`) are the
Newton–Euler equations of the whole robot about the base; with the contact wrenches λ measured

    Y_b(q, v, a) K + C_b(q, λ) = τ_b          (τ_b = 0 for a floating base)

with K the inertial parameters of every body, base included, and C_b the base rows of the inverse dynamics of the
massless robot under λ.  These rows determine every inertial parameter that the whole model determines (Ayusawa,
Venture and Nakamura, IJRR 33(3), 2014); their base parameters come from the QR method (Khalil & Dombre §9.4.1,
[9.37]–[9.40]).  ``method="physical"`` is :func:`robodyn.identification.physical_fit` (Wensing, Kim and Slotine,
RA-L 3(1), 2018) on the augmented robot of :mod:`robodyn.dynamics.floating`, its virtual frames held massless.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn.model.robot import check_robot
from robodyn.arrays import finite_array, last_axis_columns
from robodyn.dynamics.floating import augmented_robot, augmented_state, floating_inverse_dynamics, wrenches_at_frames
from robodyn.errors import InputError
from robodyn.model.robot import PARAMETER_NAMES, Robot
from robodyn.parameters.floating import augmented_columns, floating_parameter_names, floating_regressor
from robodyn.parameters.numeric import DEFAULT_TOL, grouping_matrix, independent_columns


def inertial_parameter_names(robot: Robot) -> list[str]:
    """``XX0 .. M0`` (base body) then ``XX1 .. M1``, ..., ``M<nf>``: the 10 (nf + 1) inertial parameters."""
    check_robot(robot)
    return [f"{p}{j}" for j in range(robot.nf + 1) for p in PARAMETER_NAMES]


def inertial_parameter_vector(robot: Robot) -> np.ndarray:
    """The 10 (nf + 1) inertial parameters in the order of :func:`inertial_parameter_names`."""
    check_robot(robot)
    return np.concatenate([robot.base_params, robot.params.reshape(-1)])


def inertial_columns(robot: Robot) -> np.ndarray:
    """Columns of :func:`floating_regressor` (friction=False) that hold inertial parameters (not Ia)."""
    return np.concatenate([np.arange(10), 10 + np.arange(11 * robot.nf).reshape(robot.nf, 11)[:, :10].reshape(-1)])


@dataclass(frozen=True)
class BaseOnlyIdentification:
    """Result of :func:`identify_from_base` and :func:`identify_floating`.

    Attributes
    ----------
    names : tuple of str (b,)
        The inertial parameters kept (K1): each base parameter is one of them plus its grouping.
    values : ndarray (b,)
        Estimated base parameters K_B = K1 + β K2 ([9.39]–[9.40]).
    beta : ndarray (b, p − b)
        Grouping coefficients of the eliminated parameters K2 into K1.
    kept : ndarray (b,)
        Indices of K1 among the p parameters (:func:`inertial_parameter_names` for :func:`identify_from_base`,
        :func:`robodyn.floating.floating_parameter_names` for :func:`identify_floating`).
    residual : float
        Root mean square of Y_b K̂ + C_b − τ_b over the samples (N, N m).
    method : str
        ``"ls"`` (least squares) or ``"physical"``.
    robot : Robot or None
        ``"physical"``: the model with the identified (consistent) base body, link parameters and — with joint
        torques — rotor inertias and friction (name ``<name>_identified``).
    standard : ndarray (p,) or None
        ``"physical"``: the identified standard parameters, in the order of ``kept`` (so that ``values`` =
        ``base_values(standard)``).
    solver : dict or None
        ``"physical"``: the conic solver's report (:class:`robodyn.identification.physical.PhysicalFit`).
    """

    names: tuple[str, ...]
    values: np.ndarray
    beta: np.ndarray
    kept: np.ndarray
    residual: float
    method: str = "ls"
    robot: Robot | None = None
    standard: np.ndarray | None = None
    solver: dict | None = None

    def base_values(self, K) -> np.ndarray:
        """K_B = K1 + β K2 of a vector of inertial parameters (p,), e.g. :func:`inertial_parameter_vector`."""
        K = np.asarray(K, dtype=float)
        elim = np.setdiff1d(np.arange(K.size), self.kept)
        return K[self.kept] + self.beta @ K[elim]


def identify_from_base(robot: Robot, q, v, a, frames=None, forces=None, base_wrench=None, gravity=None,
                       tol: float = DEFAULT_TOL, method: str = "ls", regularization: float = 1e-6,
                       min_mass: float = 0.0) -> BaseOnlyIdentification:
    """Base parameters of a floating-base robot from its motion and contact wrenches, no joint torque.

    Parameters
    ----------
    robot : Robot (floating or mobile base); its inertial parameters are not used.
    q : array_like (S, n + 7);  v, a : array_like (S, n + 6)
        Measured states (free-flyer conventions), S samples.
    frames : sequence of k frame names or numbers, optional
        Where the environment touches the robot (feet).
    forces : array_like (S, k, 3) or (S, k, 6), optional
        Measured wrenches ON the robot at those frames' origins, world axes (as
        :func:`robodyn.dynamics.floating.wrenches_at_frames`).
    base_wrench : array_like (S, 6), optional
        Wrench on the base in R_0 (a mobile base's drive); default zero (floating base).
    gravity : array_like (3,), optional — g in the world frame.
    tol : float
        Rank tolerance of the QR method (:mod:`robodyn.parameters.numeric`).
    method : {"ls", "physical"}
        Least squares on the base parameters, or the physically consistent standard parameters (Wensing et al.).
    regularization, min_mass : float
        ``"physical"``: weight of the pull towards ``robot``'s parameters relative to the fit, and lower bound on
        the mass of the base body and of every link (kg), as :func:`robodyn.identification.physical_fit`.

    Returns
    -------
    BaseOnlyIdentification
        ``names`` and ``kept`` refer to :func:`inertial_parameter_names` (10 (nf + 1) parameters).

    Raises
    ------
    InputError
        Shapes, unknown method, frames without forces.
    IdentificationError
        ``"physical"``: the conic solver did not converge.
    """
    return _identify(robot, q, v, a, frames, forces, base_wrench, None, gravity, tol,
                     _Physical(method, regularization, min_mass))


def identify_floating(robot: Robot, q, v, a, tau, frames=None, forces=None, gravity=None,
                      tol: float = DEFAULT_TOL, method: str = "ls", regularization: float = 1e-6,
                      min_mass: float = 0.0) -> BaseOnlyIdentification:
    """Base parameters of a floating-base robot from joint torques plus contact wrenches (every row of the model).

    As :func:`identify_from_base` with the joint rows too: Y(q, v, a) K_f + C(q, λ) = [τ_b; Γ], K_f the vector of
    :func:`robodyn.floating.floating_parameter_vector` (base body, then 11 parameters per frame and Fc, Fv, Foff per joint).

    Parameters
    ----------
    tau : array_like (S, n + 6) — [wrench on the base in R_0 (zero for a floating base), measured joint torques].
    Other parameters as :func:`identify_from_base`.

    Returns
    -------
    BaseOnlyIdentification
        ``names`` and ``kept`` refer to :func:`robodyn.floating.floating_parameter_names`.
    """
    if tau is None:
        raise InputError("identify_floating: tau (S, n + 6) is required; identify_from_base needs no joint torque")
    return _identify(robot, q, v, a, frames, forces, None, tau, gravity, tol,
                     _Physical(method, regularization, min_mass))


@dataclass(frozen=True)
class _Physical:
    """The method and the options of ``method="physical"`` (checked)."""

    method: str
    regularization: float
    min_mass: float

    def __post_init__(self):
        if self.method not in ("ls", "physical"):
            raise InputError(f"method = {self.method!r}; choose 'ls' or 'physical'")
        for name in ("regularization", "min_mass"):
            x = getattr(self, name)
            if not (isinstance(x, (int, float, np.floating, np.integer)) and np.isfinite(x) and x >= 0):
                raise InputError(f"{name} = {x!r}; give a finite number >= 0")


def _identify(robot, q, v, a, frames, forces, base_wrench, tau, gravity, tol, options) -> BaseOnlyIdentification:
    check_robot(robot)
    whole = tau is not None
    Y = floating_regressor(robot, q, v, a, friction=whole, gravity=gravity)
    if Y.ndim != 3:
        raise InputError("identify_from_base: q, v, a must be stacked samples (S, n + 7), (S, n + 6)")
    S = Y.shape[0]
    W = Y.reshape(S * (robot.n + 6), -1) if whole else Y[:, :6, :][..., inertial_columns(robot)].reshape(6 * S, -1)
    massless = robot.replace(params=None, base_params=None, Ia=None, Fc=None, Fv=None, Foff=None, Fst=None,
                             kst=None, Bst=None, strict=False)
    if (frames is None) != (forces is None):
        raise InputError("identify_from_base: give frames and forces together (contact wrenches), or neither")
    wrenches = None if frames is None else wrenches_at_frames(massless, q, frames, forces)
    C = floating_inverse_dynamics(massless, q, v, np.zeros_like(np.asarray(v, dtype=float)), wrenches=wrenches,
                                  gravity=gravity)
    if whole:
        measured = np.broadcast_to(finite_array("tau", tau), C.shape)
    else:
        C = C[..., :6]
        measured = np.zeros((S, 6)) if base_wrench is None else np.broadcast_to(finite_array("base_wrench", base_wrench), (S, 6))
    y = (measured - C).reshape(-1)
    live = np.flatnonzero(np.any(W != 0, axis=0))  # columns the data never excite (a fixed frame's Ia) carry nothing
    kept = live[independent_columns(W[:, live], tol)]
    beta = grouping_matrix(W, kept)
    names = floating_parameter_names(robot) if whole else inertial_parameter_names(robot)
    names = tuple(names[k] for k in kept)
    if options.method == "physical":
        K, robot_out, solver = _physical(robot, q, v, a, gravity, y, whole, options)
        values = K[kept] + beta @ K[np.setdiff1d(np.arange(K.size), kept)]
        residual = float(np.sqrt(np.mean((W @ K - y) ** 2)))
        return BaseOnlyIdentification(names=names, values=values, beta=beta, kept=kept, residual=residual,
                                      method="physical", robot=robot_out, standard=K, solver=solver)
    values, *_ = np.linalg.lstsq(W[:, kept], y, rcond=None)
    residual = float(np.sqrt(np.mean((W[:, kept] @ values - y) ** 2)))
    return BaseOnlyIdentification(names=names, values=values, beta=beta, kept=kept, residual=residual)


def _physical(robot: Robot, q, v, a, gravity, y: np.ndarray, whole: bool, options: _Physical):
    """Physically consistent standard parameters (Wensing et al.): (K (p,) in the order of the result's columns,
    the identified Robot, the solver's report)."""
    from robodyn.identification.physical import physical_fit
    from robodyn.parameters.base import base_parameters
    from robodyn.parameters.regressor import regressor

    augmented = augmented_robot(robot)
    bp = base_parameters(augmented, method="numeric", friction=whole)
    qa, qda, qdda, g = augmented_state(robot, q, v, a, gravity, "identify_from_base")
    D = last_axis_columns(regressor(augmented, qa, qda, qdda, friction=whole, gravity=g), bp.columns)
    D = (D if whole else D[:, :6]).reshape(y.size, -1)
    Q, R = np.linalg.qr(D)
    qty = Q.T @ y
    fit = physical_fit(augmented, bp, R, qty, float(np.linalg.norm(y - Q @ qty)), options.regularization,
                       options.min_mass, massless=range(5))
    K = fit.standard[augmented_columns(robot, whole)]
    if not whole:
        K = K[inertial_columns(robot)]
    out = fit.robot
    changes = dict(base_params=out.params[5], params=out.params[6:], Ia=out.Ia[6:], Fst=out.Fst[6:], kst=out.kst[6:], Bst=out.Bst[6:],
                   name=out.name, source=out.source)
    if whole:
        changes.update(Fc=out.Fc[6:], Fv=out.Fv[6:], Foff=out.Foff[6:])
    return K, robot.replace(**changes), fit.solver
