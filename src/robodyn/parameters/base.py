"""The base-parameter model Γ = D_B(q, q̇, q̈) K_B  (Khalil & Dombre §9.4, [9.39]–[9.40], [9.61])."""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field

import numpy as np

from robodyn.model.robot import check_robot
from robodyn.arrays import last_axis_columns
from robodyn.errors import InputError
from robodyn.model.robot import Robot
from robodyn.parameters.numeric import (
    DEFAULT_TOL,
    grouped_expressions,
    grouping_matrix,
    independent_columns,
    sequential_qr,
    stacked_regressor,
    sympy_number,
)
from robodyn.parameters.regressor import (FRICTION_PARAMETERS, LINK_PARAMETERS, regressor, standard_parameter_names,
                                          standard_parameter_vector)

_NAME = re.compile(r"^([A-Za-z]+?)(\d+)$")


def grouped_name(standard: str) -> str:
    """``ZZ1`` -> ``ZZR1``: Khalil & Dombre's name of a standard parameter that received grouped terms."""
    head, j = _NAME.match(standard).groups()
    return f"{head}R{j}"


@dataclass(frozen=True, eq=False)
class BaseParameters:
    """Base (identifiable) parameters of a robot and the reduced model Γ = D_B K_B.

    Attributes
    ----------
    robot : Robot
    method : "symbolic" (closed-form rules, §9.4.2) or "numeric" (QR, §9.4.1)
    names : tuple of str (b,)
        Base parameter names, e.g. ``("ZZR1", "XXR2", "XY2", …)``; "R" marks a grouped parameter.
    standard : tuple of str (b,)
        The standard parameter each base parameter replaces (its column of D), e.g. ``"ZZ1"``.
    columns : int ndarray (b,)
        Indices of those columns in :func:`~robodyn.parameters.regressor.standard_parameter_names`.
    expressions : tuple of sympy.Expr (b,)
        K_B in terms of the standard parameter symbols (XX1, …, Ia6, Fc1, …) and, with symbolic geometry,
        of the length symbols (D3, RL4, …).
    values : ndarray (b,)
        K_B for this robot.
    grouped, no_effect, zero : tuple of str
        Eliminated standard parameters: grouped into base parameters, without effect on the model, or
        known to be zero (``drop_zero``).
    rules : dict
        Eliminated or grouped standard name -> the rule that did it (symbolic method).
    geometry : dict
        Length symbols -> values (symbolic geometry).
    count_formula : int or None
        b_m of [9.61] (links only, no rotors or friction); None for trees.
    minimal : bool
        False when the closed-form rules left dependent columns that the QR method groups further.
    note : str
        Says so when ``minimal`` is False.
    transmission : Transmission or None
        Its motor parameters ``Iam<i>``, ``Fcm<i>``, ``Fvm<i>`` (:func:`~robodyn.parameters.regressor.motor_columns`)
        are base parameters where their columns are independent, grouped where a motor drives one joint alone.
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
    zero: tuple
    rules: dict = field(default_factory=dict)
    geometry: dict = field(default_factory=dict)
    count_formula: int | None = None
    minimal: bool = True
    note: str = ""
    transmission: object = None

    @property
    def count(self) -> int:
        """b, the number of base parameters."""
        return len(self.names)

    @property
    def count_inertial(self) -> int:
        """Base parameters of the links only (no Ia, no friction), comparable with [9.61]."""
        return sum(1 for s in self.standard if _NAME.match(s).group(1) in LINK_PARAMETERS[:10])

    @property
    def eliminated(self) -> tuple:
        """Every standard parameter that is not a base parameter, in the order of K."""
        gone = set(self.grouped) | set(self.no_effect) | set(self.zero)
        return tuple(n for n in standard_parameter_names(self.robot, self.friction, self.transmission) if n in gone)

    @property
    def owners(self) -> tuple:
        """What each base parameter belongs to (b,): for the inertial parameters and Ia, its standard column's frame
        (the frame's link name where it has one, else the frame's name: a URDF's joint); for friction, the joint
        (``robot.q_names``); ``motor <i>`` for a transmission's motor.  The numbers in the names count frames for
        links (a URDF's fixed frames included: its ``Ia3`` can be the rotor of its second joint) and joints for
        friction."""
        r, per_link = self.robot, len(LINK_PARAMETERS)
        links = r.nf * per_link
        joints = links + (len(FRICTION_PARAMETERS) * r.n if self.friction else 0)
        per_motor = max((len(standard_parameter_names(r, self.friction, self.transmission)) - joints) // r.n, 1)

        def owner(c: int) -> str:
            if c < links:
                return r.link_names[c // per_link] or r.frame_names[c // per_link]
            if c < joints:
                return r.q_names[(c - links) // len(FRICTION_PARAMETERS)]
            return f"motor {(c - joints) // per_motor + 1}"

        return tuple(owner(int(c)) for c in self.columns)

    @property
    def equations(self) -> list:
        """The grouping equations ``Eq(XXR2, XX2 − YY2 − …)`` of the grouped base parameters."""
        import sympy

        return [
            sympy.Eq(sympy.Symbol(n), e)
            for n, s, e in zip(self.names, self.standard, self.expressions)
            if n != s
        ]

    def regressor(self, q, qd, qdd, gravity=None) -> np.ndarray:
        """D_B (..., n, b): the columns of D for the base parameters; D_B @ values = Γ  [9.40]."""
        D = regressor(self.robot, q, qd, qdd, friction=self.friction, gravity=gravity, transmission=self.transmission)
        return last_axis_columns(D, self.columns)

    def table(self) -> list[list[str]]:
        """Table 9.3 layout: a row per frame, a column per parameter XX … Ia, the base name or "0"."""
        kept = dict(zip(self.standard, self.names))
        return [
            [kept.get(f"{p}{j}", "0") for p in LINK_PARAMETERS] for j in range(1, self.robot.nf + 1)
        ]


def _group_friction(res, W: np.ndarray, index: dict, tol: float) -> None:
    """Friction columns that depend on the kept inertial columns, grouped by a numerical test (in place).

    The closed-form rules of Khalil & Dombre cover the inertial parameters only.  A friction offset Foff_k (column
    e_k) is dependent when joint k carries a constant gravity force of a single parameter: e.g. the first
    prismatic joint p1, not orthogonal to g, behind revolute axes parallel to it, has
    D_{M_p1} = D_{Ia_p1} − gᵀa_p1 e_p1 + (columns of link a(p1)).  Such a column is grouped as in [9.40].
    """
    import sympy

    inertial = [n for n in res.names if not n.startswith(("Fc", "Fv", "Foff"))]
    fric = [n for n in res.names if n.startswith(("Fc", "Fv", "Foff"))]
    cols = [index[n] for n in inertial + fric]
    independent = {cols[k] for k in independent_columns(W[:, cols], tol)}
    dependent = [n for n in fric if index[n] not in independent]
    if not dependent:
        return
    kept = [n for n in inertial + fric if n not in dependent]
    kcols = [index[n] for n in kept]
    sub = W[:, kcols + [index[n] for n in dependent]]
    beta = grouping_matrix(sub, np.arange(len(kept)))
    for i, name in enumerate(kept):
        extra = [sympy_number(b) * sympy.Symbol(d) for b, d in zip(beta[i], dependent) if b != 0]
        if extra:
            res.expressions[name] = sympy.Add(res.expressions.get(name, sympy.Symbol(name)), *extra)
    for d in dependent:
        res.status[d], res.rule[d] = "grouped", "friction column dependent on gravity terms (numerical test)"
        res.expressions.pop(d, None)
    res.names = kept


def count_formula(robot: Robot) -> int | None:
    """b_m ≤ 7 n_r + 4 n_p − 3 − σ̄_1 − 2 n_g0  [9.61] for a serial robot (None for a tree)."""
    check_robot(robot)
    if not robot.is_serial or robot.n == 0:
        return None
    jf = robot.joint_frames
    sigma = robot.sigma[jf]
    nr, np_ = int(np.sum(sigma == 0)), int(np.sum(sigma == 1))
    first_revolute = int(sigma[0] == 0)
    from robodyn.kinematics import base_poses

    R0, _ = base_poses(robot, np.zeros(robot.n), np.float64)
    g = robot.gravity
    ng0 = int(first_revolute and np.linalg.norm(g) > 0 and np.linalg.norm(np.cross(R0[jf[0], :, 2], g)) < 1e-9 * np.linalg.norm(g))
    return 7 * nr + 4 * np_ - 3 - first_revolute - 2 * ng0


def base_parameters(
    robot: Robot,
    method: str = "symbolic",
    drop_zero: bool = False,
    symbolic_geometry: bool = False,
    friction: bool | None = None,
    samples: int | None = None,
    seed: int = 0,
    tol: float = DEFAULT_TOL,
    transmission=None,
) -> BaseParameters:
    """Base inertial parameters of a robot (Khalil & Dombre §9.4).

    Parameters
    ----------
    robot : Robot
    method : {"symbolic", "numeric"}
        ``"symbolic"``: closed-form rules of §9.4.2.4–9.4.2.5 (Theorems 9.1, 9.2, Table 9.2, [9.60],
        [9.64]–[9.68]); ``"numeric"``: QR of the regressor stacked at random states, [9.39]–[9.40].
    drop_zero : bool
        Parameters whose value is exactly 0 in ``robot`` are known zeros (Example 9.3).
    symbolic_geometry : bool
        Lengths as symbols D<j>, RL<j>, B<j> in the expressions (symbolic method only).
    friction : bool
        Also model the friction Fc sign(q̇) + Fv q̇ + Foff of every joint (3 base parameters per joint), as
        :func:`robodyn.regressor` does by default.  Left out, it is False in this release, with a
        DeprecationWarning: the default becomes True, the one of :func:`robodyn.regressor` and of
        :func:`robodyn.inverse_dynamics` (friction included); pass ``friction=False`` for the rigid-body
        parameters only.
    samples, seed, tol :
        Random states used by the numeric method (and by the minimality check of the symbolic one),
        and the rank tolerance (see :mod:`robodyn.parameters.numeric`).
    transmission : Transmission, optional
        Also model the motors of a (coupled) transmission: rotor inertia ``Iam<i>`` and, with friction, Coulomb
        and viscous friction ``Fcm<i>``, ``Fvm<i>`` on q̇_m = J_mq q̇
        (:func:`~robodyn.parameters.regressor.motor_columns`).  After the link and joint-friction base
        parameters, every motor column is tested against them by sequential QR ([9.39]–[9.40]): a motor that
        drives one joint alone is grouped (IaR5 = Ia5 + N5² Iam5), an independent one (a coupled wrist) is a new
        base parameter; with a diagonal transmission the kept columns are those without one.

    Returns
    -------
    BaseParameters
        ``bp.regressor(q, qd, qdd) @ bp.values`` equals ``inverse_dynamics(robot, q, qd, qdd)`` minus the
        friction torques (``friction=False``) or minus the Stribeck term only (``friction=True``).
    """
    check_robot(robot)
    import sympy

    from robodyn.parameters.symbolic import symbolic_base_parameters

    if friction is None:
        warnings.warn(
            "base_parameters(robot) without friction= gives the rigid-body base parameters only (friction=False) "
            "in this release; the default becomes friction=True, as in rd.regressor and rd.inverse_dynamics. "
            "Pass friction=False to keep the rigid-body parameters, or friction=True to add Fc, Fv, Foff per joint",
            DeprecationWarning, stacklevel=2,
        )
        friction = False
    if method not in ("symbolic", "numeric"):
        raise InputError(f"method = {method!r}; choose 'symbolic' or 'numeric'")
    if symbolic_geometry and method != "symbolic":
        raise InputError("symbolic_geometry=True needs method='symbolic'; the numeric method works on numbers")
    all_names = standard_parameter_names(robot, friction)
    K = standard_parameter_vector(robot, friction)
    index = {n: k for k, n in enumerate(all_names)}
    W = stacked_regressor(robot, friction, samples, seed)
    if method == "symbolic":
        res = symbolic_base_parameters(robot, drop_zero, symbolic_geometry, friction)
        if friction:
            _group_friction(res, W, index, tol)
        standard = tuple(res.names)
        exprs = tuple(res.expressions[n] for n in standard)
        status, rules, geometry = res.status, res.rule, res.geometry
        values = expression_values(exprs, all_names, K, geometry)
        columns = np.array([index[n] for n in standard], dtype=int)
        rank = independent_columns(W[:, columns], tol).size if columns.size else 0
        b_qr = independent_columns(W, tol).size
        minimal = rank == columns.size
        note = "" if minimal else (
            f"the closed-form rules keep {columns.size} parameters but {columns.size - rank} of their regressor "
            f"columns are still dependent; the numerical QR method finds {b_qr} base parameters "
            f"(the count of [9.61] holds 'in most cases')"
        )
    else:
        kept = independent_columns(W, tol)
        elim = np.setdiff1d(np.arange(W.shape[1]), kept)
        beta = grouping_matrix(W, kept)
        sym = [sympy.Integer(0) if drop_zero and K[k] == 0 else sympy.Symbol(all_names[k]) for k in range(len(K))]
        exprs_all = grouped_expressions(sym, kept, beta)
        vals_all = K[kept] + beta @ K[elim]
        keep = [i for i, e in enumerate(exprs_all) if not (drop_zero and e == 0)]
        columns = kept[keep]
        standard = tuple(all_names[k] for k in columns)
        exprs = tuple(exprs_all[i] for i in keep)
        values = vals_all[keep]
        used = set().union(*(e.free_symbols for e in exprs)) if exprs else set()
        status = {}
        for k in np.setdiff1d(np.arange(len(K)), columns):
            name = all_names[k]
            status[name] = "zero" if drop_zero and K[k] == 0 else ("grouped" if sympy.Symbol(name) in used else "no effect")
            if status[name] == "no effect" and drop_zero and k in kept:
                status[name] = "zero"
        rules, geometry, minimal, note = {}, {}, True, ""
    if transmission is not None:
        standard, columns, exprs, all_names = _group_motors(
            robot, friction, transmission, standard, columns, exprs, status, rules, samples, seed, tol)
        values = expression_values(exprs, all_names, standard_parameter_vector(robot, friction, transmission),
                                   geometry)
    names = tuple(n if sympy.Symbol(n) == e else grouped_name(n) for n, e in zip(standard, exprs))
    pick = lambda how: tuple(n for n in all_names if status.get(n) == how)  # noqa: E731
    return BaseParameters(
        robot=robot, method=method, friction=friction, names=names, standard=standard, columns=columns,
        expressions=exprs, values=values, grouped=pick("grouped"), no_effect=pick("no effect"), zero=pick("zero"),
        rules=rules, geometry=geometry, count_formula=count_formula(robot), minimal=minimal, note=note,
        transmission=transmission,
    )


#: Angles (rad) within this of a multiple of π/2 are taken for the right angles a model file rounded (1.5708 for
#: π/2, 3.1416 for π, 1.571 or 1.57 at fewer digits) by :func:`right_angled`.
RIGHT_ANGLE_TOL = 1e-3


def right_angled(robot: Robot, tol: float = RIGHT_ANGLE_TOL) -> tuple[Robot, tuple]:
    """The robot with each angle γ_j, α_j (and θ_j of a frame whose θ is not its joint variable) that lies within
    ``tol`` (rad) of a multiple of π/2 set to that multiple, and what moved: (frame name, field, value) of each.

    A joint axis tilted by a rounded angle is a different geometry for Khalil & Dombre's rules (§9.4.2): a first
    axis 7e-6 rad from vertical makes its link's first moments act through gravity, and two axes 4e-6 rad from
    parallel keep a rotor inertia apart from the link's ZZ.  Those parameters change the torques by a few parts in
    10^6, which no measurement resolves.  Angles already within 1e-9 of the multiple count as exact, as they do
    for the rules, and are left as they are.
    """
    changes, fields = [], {}
    for name in ("gamma", "alpha", "theta"):
        x = getattr(robot, name)
        exact = np.round(x / (np.pi / 2)) * (np.pi / 2)
        move = (np.abs(x - exact) <= tol) & (np.abs(x - exact) > 1e-9)
        if name == "theta":
            move &= robot.sigma != 0
        if move.any():
            fields[name] = np.where(move, exact, x)
            changes += [(robot.frame_names[i], name, float(x[i])) for i in np.flatnonzero(move)]
    if not fields:
        return robot, ()
    with warnings.catch_warnings():  # a strict=False robot's inertia warnings were given when it was made
        warnings.simplefilter("ignore", UserWarning)
        return robot.replace(**fields), tuple(changes)


def expression_values(exprs, names, K: np.ndarray, geometry=None) -> np.ndarray:
    """The values (b,) of base-parameter expressions with the parameters ``names`` at ``K`` and the length
    symbols at ``geometry``."""
    import sympy

    subs = {sympy.Symbol(n): float(v) for n, v in zip(names, K)}
    subs.update(geometry or {})
    return np.array([float(e.xreplace(subs)) for e in exprs])


def _group_motors(robot, friction, transmission, standard, columns, exprs, status, rules, samples, seed, tol):
    """Add the motor parameters of ``transmission`` to a base set: independent motor columns become base
    parameters, the others are grouped into the kept columns (D_motor = D_1 β, [9.40]).  Updates ``status`` and
    ``rules``; returns (standard, columns, expressions, all names)."""
    import sympy

    from robodyn.parameters.numeric import random_states

    all_names = standard_parameter_names(robot, friction, transmission)
    p0 = len(standard_parameter_names(robot, friction))
    motor = np.arange(p0, len(all_names))
    count = samples if samples is not None else 2 * len(all_names) // max(robot.n, 1) + 20
    q, qd, qdd = random_states(robot, count, seed)
    W = regressor(robot, q, qd, qdd, friction=friction, transmission=transmission).reshape(-1, len(all_names))
    cols = np.concatenate([columns, motor])
    found = sequential_qr(W[:, cols], tol)[0]
    new = cols[found[found >= columns.size]]
    dependent = np.setdiff1d(motor, new)
    kept = np.concatenate([columns, new])
    exprs = list(exprs) + [sympy.Symbol(all_names[k]) for k in new]
    if dependent.size:
        beta = grouping_matrix(W[:, np.concatenate([kept, dependent])], np.arange(kept.size))
        for i in range(kept.size):
            extra = [sympy_number(b) * sympy.Symbol(all_names[d]) for b, d in zip(beta[i], dependent) if b != 0]
            if extra:
                exprs[i] = sympy.Add(exprs[i], *extra)
        used = set().union(*(e.free_symbols for e in exprs))
        for d in dependent:
            name = all_names[d]
            if sympy.Symbol(name) in used:
                status[name], rules[name] = "grouped", "motor drives one joint: its column is a multiple of a kept one"
            else:
                status[name], rules[name] = "no effect", "motor column is zero"
    standard = tuple(standard) + tuple(all_names[k] for k in new)
    return standard, kept, tuple(exprs), all_names
