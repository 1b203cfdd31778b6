"""The floating-base inverse dynamic model linear in the standard parameters, τ = Y(q, v, a) K_f.

τ (..., n + 6) are the generalized forces of :func:`robodyn.dynamics.floating.floating_inverse_dynamics` (base
wrench in R_0 about O_0, then joint torques).  The parameter vector K_f is the base body's ten standard parameters
``XX0 XY0 XZ0 YY0 YZ0 ZZ0 MX0 MY0 MZ0 M0`` (in R_0 about O_0) followed by the fixed-base vector of
:func:`robodyn.parameters.standard_parameter_vector` (11 per frame, then 3 friction parameters per joint).

Y is the fixed-base regressor ([9.36], :func:`robodyn.regressor`) of the augmented robot of
:mod:`robodyn.dynamics.floating` (six virtual joints at zero, the base body on the sixth frame), without the
columns of the five massless virtual frames, of the base's rotor inertia and of the virtual joints' friction.  Its
first six rows (the base's own Newton–Euler equations) contain no rotor inertia or friction, and no joint torque:
they are what base-only identification uses (:mod:`robodyn.identification.floating`).

Base parameters
---------------
:func:`floating_base_parameters` gives them by the QR method (``"numeric"``, [9.37]–[9.40] on the stacked
floating regressor) or by closed-form rules (``"symbolic"``), which are those of Khalil & Dombre §9.4.2 with the
base body as link 0 of a free-flyer root:

1. revolute j: YY_j, MZ_j, M_j are grouped, XXR_j = XX_j − YY_j [9.51] and KR_a(j) = K_a(j) + YY_j (λ¹ + λ⁴) +
   MZ_j λ⁹ + M_j λ¹⁰ [9.52] (Theorem 9.1, [9.53]), with λ = ^{a(j)}λ_j (Table 9.1, trees as in
   :func:`robodyn.parameters.energy.frame_lambda`);
2. prismatic j: the inertia tensor XX_j .. ZZ_j is grouped, KR_a(j) = K_a(j) + λ¹ XX_j + … + λ⁶ ZZ_j [9.55]
   (Theorem 9.2, [9.56]);
3. fixed frame j (σ = 2): its ten parameters move to the antecedent, ^{a(j)}K_j = ^{a(j)}λ_j ^jK_j [9.46];

for j = nf, …, 1, every child before its antecedent, and a(j) = 0 meaning the base body, whose ten parameters
``XX0`` .. ``M0`` receive the groupings of its children (``MR0`` = the total mass of a chain of revolute
joints, for instance). Nothing else is eliminated: every rotor inertia Ia_j and friction parameter stays.

Derivation (not in Khalil & Dombre, who treat a fixed base). A parameter is eliminated or grouped exactly when its
energy function is constant or a combination of the others' ([9.48]–[9.49]). The base body moves freely: its
energy functions [9.44] — ½ω_x², ω_xω_y, …, ½ω_z², the three ω × V − gᵀs terms and ½VᵀV − gᵀp — are linearly
independent functions of the state (ω_0, V_0 and the orientation of R_0 with respect to g are arbitrary), so none
of its ten parameters is lost; equivalently, with the six virtual joints of :mod:`robodyn.dynamics.floating`
(three prismatic along x, y, z, three revolute about x, y, z of R_0), r1 and r2 of Figure 9.4 are the virtual
revolute joints about x and y, so that the restricted-motion rules of §9.4.2.4 (rules 2–6: links between the base
and r2, prismatic links before r1, [9.59]–[9.60], Table 9.2) and the rotor rules [9.64]–[9.68] (Ia of r1, r2, p1)
concern the massless virtual frames only. Theorems 9.1 and 9.2 and [9.46] follow from the recursion
h_j = h_a(j) ^{a(j)}λ_j + q̇_j η_j [9.45], [9.47] for any motion of the antecedent, so they hold at every frame of
the tree, into the base body too. The columns of Ia_j, Fc_j, Fv_j, Foff_j are q̈_j, sign q̇_j, q̇_j, 1 in joint j's
row alone, while every link parameter that enters joint j's row also enters the base rows (the Newton–Euler
equations of the whole robot), so they stay independent. The rule set is checked against QR in
tests/test_floating_base_parameters.py (random floating trees with revolute, prismatic and fixed frames, solo12
and ANYmal: same count, same kept columns, Y_B K_B equal to the inverse dynamics to 1e-10); like the fixed-base
rules it may keep a dependent column for special geometries that the theorems do not cover, which QR then groups.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from robodyn.model.robot import check_robot
from robodyn.arrays import finite_result
from robodyn.dynamics.floating import augmented_robot, augmented_state
from robodyn.errors import InputError
from robodyn.model.robot import PARAMETER_NAMES, Robot
from robodyn.parameters.base import grouped_name
from robodyn.parameters.numeric import DEFAULT_TOL, grouping_matrix, independent_columns, random_states, sympy_number
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
    """Base parameters of a floating or mobile base robot, τ = Y_B(q, v, a) K_B (module notes, "Base parameters").

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
        return floating_regressor(self.robot, q, v, a, friction=self.friction, gravity=gravity)[..., self.columns]


def floating_base_parameters(robot: Robot, method: str = "symbolic", friction: bool = False,
                             samples: int | None = None, seed: int = 0, tol: float = DEFAULT_TOL) -> FloatingBaseParameters:
    """Base parameters of a floating or mobile base robot by the closed-form rules or by QR.

    Parameters
    ----------
    robot : Robot (floating or mobile base)
    method : {"symbolic", "numeric"}
        ``"symbolic"``: the closed-form rules of a free-flyer root (module notes): Theorems 9.1 and 9.2 and [9.46]
        of Khalil & Dombre for every frame, grouping into the antecedent — the base body for a root frame — and
        no restricted-motion rule; ``"numeric"``: QR of :func:`floating_regressor` stacked at random free-flyer
        states and gravity directions ([9.37]–[9.40]).
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
        sym = [sympy.Symbol(nm) for nm in names]
        exprs = tuple(sympy.Add(sym[k], *(sympy_number(b) * sym[e] for b, e in zip(beta[i], elim) if b != 0))
                      for i, k in enumerate(kept))
        values = K[kept] + beta @ K[elim]
        rules = {}
    else:
        expr, rules = _closed_form(robot, names)
        kept = np.array([k for k, nm in enumerate(names) if nm not in rules], dtype=int)
        exprs = tuple(chop(sympy.expand(expr[names[k]])) for k in kept)
        subs = {sympy.Symbol(nm): float(x) for nm, x in zip(names, K)}
        values = np.array([float(e.xreplace(subs)) for e in exprs])
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
    """The closed-form rules of a free-flyer root (module notes): grouped expressions by name, and the rule that
    eliminated each removed parameter."""
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
