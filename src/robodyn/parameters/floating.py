"""The floating-base inverse dynamic model linear in the standard parameters, τ = Y(q, v, a) K_f.

τ (..., n + 6) are the generalized forces of :func:`robodyn.dynamics.floating.floating_inverse_dynamics` (base
wrench in R_0 about O_0, then joint torques).  K_f is the base body's ten standard parameters ``XX0 .. M0`` (in
R_0 about O_0) followed by the fixed-base vector of :func:`robodyn.parameters.standard_parameter_vector`.  Y is the
fixed-base regressor ([9.36]) of the augmented robot of :mod:`robodyn.dynamics.floating` without the columns of
the five massless virtual frames, of the base's rotor inertia and of the virtual joints' friction; its first six
rows (no rotor inertia, friction or joint torque) are what :mod:`robodyn.identification.floating` uses.

:func:`floating_base_parameters` applies Khalil & Dombre's rules (§9.4.2: Theorems 9.1, 9.2, [9.46]) with the
base body as link 0 of a free-flyer root, or the QR method; the derivation is in docs/floating-base.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from robodyn.model.robot import check_robot
from robodyn.arrays import finite_result, last_axis_columns
from robodyn.dynamics.floating import augmented_robot, augmented_state
from robodyn.errors import InputError
from robodyn.model.robot import PARAMETER_NAMES, Robot
from robodyn.parameters.base import expression_values, grouped_name
from robodyn.parameters.numeric import (DEFAULT_TOL, grouped_expressions, grouping_matrix, independent_columns,
                                        random_states)
from robodyn.parameters.regressor import (LINK_PARAMETERS, regressor, standard_parameter_names,
                                          standard_parameter_vector)
from robodyn.parameters.symbolic import chop, geometry_symbols, group_by_theorems

#: Virtual joints of the augmented robot (:mod:`robodyn.dynamics.floating`) before the robot's own.
_VIRTUAL = 6


def floating_parameter_names(robot: Robot, friction: bool = True) -> list[str]:
    """Names of the columns of :func:`floating_regressor`: ``XX0 .. M0`` (base body), then
    :func:`robodyn.parameters.standard_parameter_names`."""
    check_robot(robot)
    return [f"{p}0" for p in PARAMETER_NAMES] + standard_parameter_names(robot, friction)


def floating_parameter_vector(robot: Robot, friction: bool = True) -> np.ndarray:
    """K_f (10 + 11 nf (+ 3 n),): ``robot.base_params`` then :func:`robodyn.parameters.standard_parameter_vector`."""
    check_robot(robot)
    return np.concatenate([robot.base_params, standard_parameter_vector(robot, friction)])


def floating_regressor(robot: Robot, q, v, a, friction: bool = True, gravity=None) -> np.ndarray:
    """Regressor Y of the floating-base inverse dynamics, τ = Y K_f, batched.

    Parameters
    ----------
    robot : Robot (floating or mobile base)
    q : array_like (..., n + 7);  v, a : array_like (..., n + 6)  (free-flyer conventions, docs/floating-base.md)
    friction : bool
        Append the 3 n friction columns of the joints.
    gravity : array_like (3,) or (..., 3), optional — g in the world frame (m/s²).

    Returns
    -------
    ndarray (..., n + 6, 10 + 11 nf (+ 3 n)), columns as :func:`floating_parameter_names`:
        ``floating_regressor(robot, q, v, a) @ floating_parameter_vector(robot)`` equals
        ``floating_inverse_dynamics(robot, q, v, a)`` for a robot without Stribeck terms.
    """
    qa, qda, qdda, g = augmented_state(robot, q, v, a, gravity, "floating_regressor")
    D = regressor(augmented_robot(robot), qa, qda, qdda, friction=friction, gravity=g)
    return finite_result("floating_regressor", D[..., augmented_columns(robot, friction)])


def augmented_columns(robot: Robot, friction: bool = True) -> np.ndarray:
    """Indices, among :func:`robodyn.parameters.standard_parameter_names` of ``augmented_robot(robot)``, of the parameters
    K_f of :func:`floating_parameter_names`: the base body's ten (frame 6 of the augmented robot), the robot's
    frames (11 each), their joints' friction; the five massless virtual frames, the base's rotor inertia and the
    virtual joints' friction are left out."""
    nf = robot.nf
    base = 11 * (_VIRTUAL - 1) + np.arange(10)
    parts = [base, np.arange(11 * _VIRTUAL, 11 * (_VIRTUAL + nf))]
    if friction:
        start = 11 * (_VIRTUAL + nf) + 3 * _VIRTUAL
        parts.append(start + np.arange(3 * robot.n))
    return np.concatenate(parts)


# ---- base parameters --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class FloatingBaseParameters:
    """Base parameters of a floating or mobile base robot, τ = Y_B(q, v, a) K_B (docs/floating-base.md).

    Attributes
    ----------
    robot : Robot
    method : "symbolic" (closed-form rules) or "numeric" (QR, Khalil & Dombre [9.39]–[9.40])
    friction : bool
    names : tuple of str (b,)
        ``XX0``, ``XXR0``, ..., ``XXR2``, ...; "R" marks a parameter that received grouped terms.
    standard : tuple of str (b,)
        The parameter of :func:`floating_parameter_names` whose column each base parameter keeps.
    columns : int ndarray (b,)
        Their indices among :func:`floating_parameter_names`.
    expressions : tuple of sympy.Expr (b,)
        K_B in the standard parameter symbols (``XX0`` .. ``M0`` for the base body).
    values : ndarray (b,)
        K_B of this robot.
    grouped, no_effect : tuple of str
        Eliminated parameters: grouped into base parameters, or without effect on the model.
    rules : dict
        Eliminated or grouped name -> the rule that did it (symbolic method).
    """

    robot: Robot
    method: str
    friction: bool
    names: tuple
    standard: tuple
    columns: np.ndarray
    expressions: tuple
    values: np.ndarray
    grouped: tuple
    no_effect: tuple
    rules: dict = field(default_factory=dict)

    @property
    def count(self) -> int:
        return len(self.names)

    def regressor(self, q, v, a, gravity=None) -> np.ndarray:
        """Y_B (..., n + 6, b): the columns of :func:`floating_regressor` of the base parameters; Y_B @ values is
        the floating inverse dynamics (without Stribeck terms; without any friction when ``friction`` is False)."""
        return last_axis_columns(floating_regressor(self.robot, q, v, a, friction=self.friction, gravity=gravity),
                                 self.columns)


def floating_base_parameters(robot: Robot, method: str = "symbolic", friction: bool = False,
                             samples: int | None = None, seed: int = 0, tol: float = DEFAULT_TOL) -> FloatingBaseParameters:
    """Base parameters of a floating or mobile base robot by the closed-form rules or by QR.

    Parameters
    ----------
    robot : Robot (floating or mobile base)
    method : {"symbolic", "numeric"}
        ``"symbolic"``: the closed-form rules of a free-flyer root (docs/floating-base.md): Khalil & Dombre's
        Theorems 9.1 and 9.2 and [9.46] for every frame, grouping into the antecedent — the base body for a root
        frame — and no restricted-motion rule; ``"numeric"``: QR of :func:`floating_regressor` stacked at random
        free-flyer states and gravity directions ([9.37]–[9.40]).
    friction : bool
        Also the friction Fc, Fv, Foff of every joint (base parameters).
    samples, seed, tol
        Random states of the numeric method (default 2 p / (n + 6) + 20) and its rank tolerance.

    Returns
    -------
    FloatingBaseParameters
    """
    import sympy

    check_robot(robot)
    if robot.base == "fixed":
        raise InputError(f"robot '{robot.name}' has a fixed base: use rd.base_parameters(robot)")
    if method not in ("symbolic", "numeric"):
        raise InputError(f"method = {method!r}; choose 'symbolic' or 'numeric'")
    names = floating_parameter_names(robot, friction)
    K = floating_parameter_vector(robot, friction)
    if method == "numeric":
        W = stacked_floating_regressor(robot, friction, samples, seed)
        live = np.flatnonzero(np.any(W != 0, axis=0))  # a fixed frame's Ia has no column
        kept = live[independent_columns(W[:, live], tol)]
        elim = np.setdiff1d(np.arange(len(names)), kept)
        beta = grouping_matrix(W, kept)
        exprs = tuple(grouped_expressions([sympy.Symbol(nm) for nm in names], kept, beta))
        values = K[kept] + beta @ K[elim]
        rules = {}
    else:
        expr, rules = _closed_form(robot, names)
        kept = np.array([k for k, nm in enumerate(names) if nm not in rules], dtype=int)
        exprs = tuple(chop(sympy.expand(expr[names[k]])) for k in kept)
        values = expression_values(exprs, names, K)
    used = set().union(*(e.free_symbols for e in exprs)) if exprs else set()
    gone = [nm for k, nm in enumerate(names) if k not in set(kept.tolist())]
    standard = tuple(names[k] for k in kept)
    base_names = tuple(nm if sympy.Symbol(nm) == e else grouped_name(nm) for nm, e in zip(standard, exprs))
    return FloatingBaseParameters(
        robot=robot, method=method, friction=friction, names=base_names, standard=standard, columns=kept,
        expressions=exprs, values=values, grouped=tuple(nm for nm in gone if sympy.Symbol(nm) in used),
        no_effect=tuple(nm for nm in gone if sympy.Symbol(nm) not in used), rules=rules)


def stacked_floating_regressor(robot: Robot, friction: bool = False, samples: int | None = None,
                               seed: int = 0) -> np.ndarray:
    """W (samples (n + 6), p): :func:`floating_regressor` at random free-flyer states stacked row-wise (random base
    pose, so gravity takes every direction in R_0; default samples 2 p / (n + 6) + 20)."""
    p = len(floating_parameter_names(robot, friction))
    count = samples if samples is not None else 2 * p // (robot.n + 6) + 20
    rng = np.random.default_rng(seed)
    quat = rng.normal(size=(count, 4))
    quat /= np.linalg.norm(quat, axis=-1, keepdims=True)
    q_joints, _, _ = random_states(robot, count, seed)
    q = np.concatenate([rng.uniform(-1, 1, (count, 3)), quat, q_joints], -1)
    v, a = rng.uniform(-2, 2, (2, count, robot.n + 6))
    return floating_regressor(robot, q, v, a, friction=friction).reshape(-1, p)


def _closed_form(robot: Robot, names: list[str]):
    """The closed-form rules of a free-flyer root (docs/floating-base.md): grouped expressions by name, and the rule
    that eliminated each removed parameter."""
    import sympy

    geo, _ = geometry_symbols(robot)
    expr = {nm: sympy.Symbol(nm) for nm in names}
    rules: dict[str, str] = {}

    def nm(i, k):  # frame i (0-based), -1 the base body
        return f"{LINK_PARAMETERS[k]}{i + 1}"

    def add(i, k, term):
        expr[nm(i, k)] = expr[nm(i, k)] + term

    def remove(i, k, how, why):
        rules[nm(i, k)] = why
        expr[nm(i, k)] = sympy.Integer(0)

    for i in range(robot.nf - 1, -1, -1):
        group_by_theorems(robot, i, geo[i], expr, nm, add, remove)
    return expr, rules
