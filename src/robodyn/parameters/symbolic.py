"""Base parameters by the closed-form rules (Khalil & Dombre §9.4.2, Theorems 9.1, 9.2, §9.4.2.3–9.4.2.5).

For j = nf, …, 1 (every child before its antecedent):

1. revolute j: group YY_j, MZ_j, M_j  (Theorem 9.1, [9.53]);  prismatic j: group the inertia tensor
   (Theorem 9.2, [9.56]);  fixed frame j (σ = 2): all ten parameters move to the antecedent with ^{a}λ_j [9.46];
2. prismatic j with r1 < j < r2 and a_j ∥ a_r1: MZ_j has no effect, MX_j and MY_j are grouped by [9.60];
3. prismatic j with r1 < j < r2 and a_j not ∥ a_r1: Table 9.2 groups or eliminates one of MX_j, MY_j, MZ_j;
4. revolute j with r1 ≤ j < r2: XX_j, XY_j, XZ_j, YZ_j have no effect;
5. revolute j with r1 ≤ j < r2, a_j collinear with a_r1, and every earlier joint axis and a_r1 parallel to
   gravity: MX_j, MY_j have no effect;
6. prismatic j < r1: MX_j, MY_j, MZ_j have no effect;
rotors: Ia_r1 → ZZ_r1 [9.65]; Ia_r2 → ZZ_r2 if a_r2 ⊥ a_r1 [9.67]; Ia_p1 → M_p1 [9.68] (with parallel axes,
Ia_p1 also enters KR_a with −^{a}λ^{10}|_{r=0}; extended to later prismatic joints: docs/base-parameters.md).

r1 is the first revolute joint, r2 the first later revolute joint whose axis is not parallel to a_r1
(Figure 9.4); on a tree they are taken along the path from the base to each link.  Axis tests use the robot's
numbers with tolerance 1e-9; lengths may be symbols.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy

from robodyn.kinematics import base_poses
from robodyn.model.robot import Robot
from robodyn.parameters.energy import frame_lambda
from robodyn.parameters.numeric import CHOP
from robodyn.parameters.regressor import LINK_PARAMETERS, standard_parameter_names, standard_parameter_vector

_TOL = 1e-9
XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M, IA = range(11)


@dataclass
class RuleResult:
    """What the closed-form rules found (see :func:`symbolic_base_parameters`)."""

    names: list[str]  #: standard names of the kept parameters, in the order of K
    expressions: dict[str, sympy.Expr]  #: kept standard name -> grouped expression
    status: dict[str, str]  #: eliminated standard name -> "grouped" | "no effect" | "zero"
    rule: dict[str, str]  #: standard name -> the rule that eliminated or grouped it
    geometry: dict[sympy.Symbol, float] = field(default_factory=dict)  #: geometric symbols -> values


def exact_angle(x: float) -> sympy.Expr:
    """A multiple of π/12 as an exact sympy number (cos(π/2) = 0 exactly), else a Float."""
    m = x / (np.pi / 12)
    if abs(m - round(m)) < 1e-12:
        return sympy.pi * sympy.Rational(int(round(m)), 12)
    return sympy.Float(x, 15)


def geometry_symbols(robot: Robot, symbolic_geometry: bool = False):
    """Per frame the geometric parameters as sympy expressions, and the map symbol -> value.

    With ``symbolic_geometry`` the non-zero lengths become symbols named as in SYMORO / Khalil & Dombre:
    d_j -> D<j>, r_j -> RL<j> (constant r only: not for prismatic joints), b_j -> B<j>.  Angles are exact
    multiples of π/12 where they are, floats otherwise.
    """
    frames, values = [], {}
    for i in range(robot.nf):
        j = i + 1
        geo = {k: exact_angle(float(getattr(robot, k)[i])) for k in ("gamma", "alpha", "theta")}
        for key, prefix in (("d", "D"), ("r", "RL"), ("b", "B")):
            v = float(getattr(robot, key)[i])
            if symbolic_geometry and v != 0 and not (key == "r" and robot.sigma[i] == 1):
                s = sympy.Symbol(f"{prefix}{j}")
                values[s] = v
                geo[key] = s
            else:
                geo[key] = sympy.Float(v, 15) if v != 0 else sympy.Integer(0)
        frames.append(geo)
    return frames, values


def _rot(axis: str, a) -> sympy.Matrix:
    c, s = sympy.cos(a), sympy.sin(a)
    if axis == "x":
        return sympy.Matrix([[1, 0, 0], [0, c, -s], [0, s, c]])
    return sympy.Matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def _path(robot: Robot, i: int) -> list[int]:
    out = []
    while i >= 0:
        out.append(i)
        i = robot.antecedent[i] - 1
    return out[::-1]


def _parallel(u, v) -> bool:
    return bool(np.linalg.norm(np.cross(u, v)) < _TOL)


class _Chain:
    """Axis geometry along the path of each frame: r1, r2, p1 (Figure 9.4) and the directions of the z axes."""

    def __init__(self, robot: Robot, geo):
        self.robot = robot
        self.R0 = []  # exact ^0A_j at q = 0
        for i in range(robot.nf):
            g = geo[i]
            A = _rot("z", g["gamma"]) * _rot("x", g["alpha"]) * _rot("z", g["theta"])
            parent = robot.antecedent[i] - 1
            self.R0.append(sympy.simplify(A if parent < 0 else self.R0[parent] * A))
        self.z = [np.array(R[:, 2].evalf(), dtype=float).reshape(3) for R in self.R0]
        g = np.asarray(robot.gravity, float)
        self.g = g / np.linalg.norm(g) if np.linalg.norm(g) > 0 else None

    def joints_before(self, i: int) -> list[int]:
        return [k for k in _path(self.robot, i)[:-1] if self.robot.sigma[k] != 2]

    def r1(self, i: int):
        return next((k for k in _path(self.robot, i) if self.robot.sigma[k] == 0), None)

    def r2(self, i: int):
        r1 = self.r1(i)
        if r1 is None:
            return None
        path = _path(self.robot, i)
        return next(
            (k for k in path[path.index(r1) + 1 :] if self.robot.sigma[k] == 0 and not _parallel(self.z[k], self.z[r1])),
            None,
        )

    def p1(self, i: int):
        return next((k for k in _path(self.robot, i) if self.robot.sigma[k] == 1), None)

    def in_segment(self, i: int) -> bool:
        """r1 ≤ j < r2 along the path of frame i."""
        return self.r1(i) is not None and self.r2(i) is None

    def along_gravity(self, k: int) -> bool:
        return self.g is not None and _parallel(self.z[k], self.g)

    def a_r1_in(self, i: int) -> sympy.Matrix:
        """^ja_{r1}: the unit vector of z_{r1} in R_j (constant for r1 ≤ j < r2, see [9.58])."""
        return sympy.simplify(self.R0[i].T * self.R0[self.r1(i)][:, 2])

    def collinear_with_r1(self, i: int, samples: int = 3) -> bool:
        """Axis of frame i on the line of axis r1 for every configuration (tested at random q)."""
        r1 = self.r1(i)
        rng = np.random.default_rng(7)
        q = rng.uniform(-np.pi, np.pi, (samples, self.robot.n))
        R0, P0 = base_poses(self.robot, q, np.float64)
        d = P0[:, i] - P0[:, r1]
        z = R0[:, r1, :, 2]
        return bool(np.all(np.linalg.norm(np.cross(d, z), axis=-1) < _TOL)) and _parallel(self.z[i], self.z[r1])


def symbolic_base_parameters(
    robot: Robot, drop_zero: bool = False, symbolic_geometry: bool = False, friction: bool = False
) -> RuleResult:
    """Apply the closed-form rules of Khalil & Dombre §9.4.2.4–9.4.2.5 to the robot.

    Parameters
    ----------
    robot : Robot (serial or tree; fixed frames allowed)
    drop_zero : bool
        Parameters whose value in ``robot`` is exactly 0 are known to be zero (Example 9.3): they are set
        to 0 before grouping, and grouped parameters whose expression becomes 0 are dropped.
    symbolic_geometry : bool
        Non-zero lengths as symbols (D3, RL4, …) in the expressions.
    friction : bool
        Include Fc, Fv, Foff of every joint (always base parameters unless zero and dropped).

    Returns
    -------
    RuleResult
    """
    names = standard_parameter_names(robot, friction)
    values = standard_parameter_vector(robot, friction)
    geo, geometry = geometry_symbols(robot, symbolic_geometry)
    chain = _Chain(robot, geo)
    expr: dict[str, sympy.Expr] = {}
    status: dict[str, str] = {}
    rule: dict[str, str] = {}
    for name, v in zip(names, values):
        if drop_zero and v == 0:
            expr[name], status[name], rule[name] = sympy.Integer(0), "zero", "known zero"
        else:
            expr[name] = sympy.Symbol(name)

    def nm(i, k):
        return f"{LINK_PARAMETERS[k]}{i + 1}"

    def remove(i, k, how, why):
        name = nm(i, k)
        if name not in status:
            status[name], rule[name] = how, why
        expr[name] = sympy.Integer(0)

    def add(i, k, term):
        if i >= 0:
            expr[nm(i, k)] = expr[nm(i, k)] + term

    for i in range(robot.nf - 1, -1, -1):
        sigma, parent = robot.sigma[i], robot.antecedent[i] - 1
        lam = group_by_theorems(robot, i, geo[i], expr, nm, add, remove)
        if sigma == 2:
            continue
        if sigma == 0:
            if chain.in_segment(i):
                for k in (XX, XY, XZ, YZ):
                    remove(i, k, "no effect", "rule 4 (r1 <= j < r2)")
                earlier = chain.joints_before(i) + [chain.r1(i)]
                if all(chain.along_gravity(k) for k in earlier) and chain.collinear_with_r1(i):
                    for k in (MX, MY):
                        remove(i, k, "no effect", "rule 5 (axis along a_r1, parallel to g)")
            _rotor_revolute(chain, i, expr, nm, remove)
            continue
        r1 = chain.r1(i)
        if r1 is None:
            for k in (MX, MY, MZ):
                remove(i, k, "no effect", "rule 6 (prismatic j < r1)")
        elif chain.in_segment(i):
            _prismatic_between(robot, chain, i, lam, geo[i], expr, nm, add, remove)
        if _rotor_of_prismatic(chain, i):
            ia = expr[nm(i, IA)]
            expr[nm(i, M)] = expr[nm(i, M)] + ia  # [9.68]
            for row in range(10):  # h_M,p1 − ½q̇² = h_{a} ^{a}λ^{10}(r = 0) + const: zero correction when aligned
                add(parent, row, -lam[row, M] * ia)
            remove(i, IA, "grouped", "rotor rule [9.68] (p1)" if chain.p1(i) == i else "rotor rule [9.68] extended")

    kept, kept_expr = [], {}
    for name in names:
        if rule.get(name) == "known zero" and expr[name] != 0:
            # A known-zero parameter that received a grouping (MYR4 = MY4 − MZ5 with MY4 = 0) is still a base
            # parameter: dropping it would lose the grouped ones.
            del status[name], rule[name]
        if name in status:
            continue
        e = chop(sympy.expand(expr[name]))
        if drop_zero and e == 0:
            status[name], rule[name] = "zero", "grouped expression is zero"
            continue
        kept.append(name)
        kept_expr[name] = e
    used = set().union(*(e.free_symbols for e in kept_expr.values())) if kept_expr else set()
    for name, how in status.items():
        if how == "grouped" and sympy.Symbol(name) not in used:
            status[name] = "no effect"
    return RuleResult(kept, kept_expr, status, rule, geometry)


def group_by_theorems(robot: Robot, i: int, geometry: dict, expr: dict, nm, add, remove) -> sympy.Matrix:
    """Group the parameters of frame i (0-based) into those of its antecedent by the general rules: [9.46] for a
    fixed frame, Theorem 9.1 ([9.51]–[9.53]) for a revolute joint, Theorem 9.2 ([9.55]–[9.56]) for a prismatic one.

    ``expr`` maps each parameter name ``nm(i, k)`` (k the index in XX..M, IA) to its grouped expression;
    ``add(parent, k, term)`` adds to the antecedent's (the caller decides what the base, parent -1, is: nothing
    for a fixed base, the base body for a floating one); ``remove(i, k, how, why)`` records an eliminated
    parameter.  Returns λ of frame i (10, 10) [9.41], at θ = 0 (revolute) or r = 0 (prismatic), on which the
    columns used by the theorems do not depend, for the caller's further rules.
    """
    sigma, parent = robot.sigma[i], robot.antecedent[i] - 1
    g = dict(geometry)
    if sigma == 0:
        g["theta"] = sympy.Integer(0)
    elif sigma == 1:
        g["r"] = sympy.Integer(0)
    lam = frame_lambda(robot, i, symbols=g)
    K = [expr[nm(i, k)] for k in range(10)]
    if sigma == 2:
        for k in range(10):
            for row in range(10):
                add(parent, row, lam[row, k] * K[k])
            remove(i, k, "grouped", "fixed frame: [9.46]")
        remove(i, IA, "no effect", "fixed frame: no joint")
    elif sigma == 0:
        expr[nm(i, XX)] = K[XX] - K[YY]  # [9.51]
        for row in range(10):  # [9.52], Theorem 9.1
            add(parent, row, (lam[row, XX] + lam[row, YY]) * K[YY] + lam[row, MZ] * K[MZ] + lam[row, M] * K[M])
        for k in (YY, MZ, M):
            remove(i, k, "grouped", "Theorem 9.1 [9.53]")
    else:
        for row in range(10):  # [9.55], Theorem 9.2
            add(parent, row, sum(lam[row, k] * K[k] for k in range(6)))
        for k in range(6):
            remove(i, k, "grouped", "Theorem 9.2 [9.56]")
    return lam


def chop(e: sympy.Expr) -> sympy.Expr:
    """Drop terms whose float coefficient is round-off (|c| < ``CHOP`` = 1e-12, e.g. cos(π/2) of a float angle);
    the QR method zeroes the same coefficients of β."""
    terms = sympy.Add.make_args(e)
    keep = [t for t in terms if not (t.as_coeff_Mul()[0].is_Float and abs(float(t.as_coeff_Mul()[0])) < CHOP)]
    return sympy.Add(*keep)


def _rotor_of_prismatic(chain: _Chain, i: int) -> bool:
    """[9.68] for prismatic joint i: a_i ⊥ g, revolute axes before i parallel to a_i, prismatic axes before i
    orthogonal to it.  For i = p1 this is Khalil & Dombre's rule; for a later prismatic joint the same derivation holds
    (ω ∥ a_i and a_iᵀV' = 0 make h_M,i − ½q̇_i² a combination of h_{a(i)}), an extension beyond Khalil & Dombre."""
    robot = chain.robot
    if chain.g is None or abs(chain.z[i] @ chain.g) >= _TOL:
        return False
    for k in chain.joints_before(i):
        if robot.sigma[k] == 0 and not _parallel(chain.z[k], chain.z[i]):
            return False
        if robot.sigma[k] == 1 and abs(chain.z[k] @ chain.z[i]) >= _TOL:
            return False
    return True


def _rotor_revolute(chain: _Chain, i: int, expr, nm, remove) -> None:
    """Rotor inertia of r1 [9.64]–[9.65] and of r2 when a_r2 ⊥ a_r1 [9.66]–[9.67]."""
    r1 = chain.r1(i)
    if i == r1:
        expr[nm(i, ZZ)] = expr[nm(i, ZZ)] + expr[nm(i, IA)]
        remove(i, IA, "grouped", "rotor rule [9.65] (r1)")
    elif chain.r2(i) == i and abs(chain.z[i] @ chain.z[r1]) < _TOL:
        expr[nm(i, ZZ)] = expr[nm(i, ZZ)] + expr[nm(i, IA)]
        remove(i, IA, "grouped", "rotor rule [9.67] (r2 orthogonal to r1)")


def _prismatic_between(robot, chain: _Chain, i: int, lam, g, expr, nm, add, remove) -> None:
    """Rules 2 and 3 of §9.4.2.4 for a prismatic joint r1 < j < r2: [9.60] or Table 9.2."""
    a = chain.a_r1_in(i)
    ax, ay, az = (float(c) for c in a)
    K = {k: expr[nm(i, k)] for k in (MX, MY, MZ)}
    if abs(ax) < _TOL and abs(ay) < _TOL:  # a_j ∥ a_r1: [9.59]–[9.60]
        parent = robot.antecedent[i] - 1
        for row in (MX, MY, MZ):
            add(parent, row, lam[row, MX] * K[MX] + lam[row, MY] * K[MY])
        # ZZR_i += 2 p0ᵀ ^{a}A_j[:, :2] [MX MY], p0 = Rot(z, γ)[d, 0, b]: 2 d (Cθ MX − Sθ MY) for a serial frame
        p0 = _rot("z", g["gamma"]) * sympy.Matrix([g["d"], 0, g["b"]])
        A = _rot("z", g["gamma"]) * _rot("x", g["alpha"]) * _rot("z", g["theta"])
        revolute = [k for k in chain.joints_before(i) if robot.sigma[k] == 0][-1]
        add(revolute, ZZ, 2 * ((p0.T * A[:, 0])[0] * K[MX] + (p0.T * A[:, 1])[0] * K[MY]))
        remove(i, MX, "grouped", "rule 2 [9.60]")
        remove(i, MY, "grouped", "rule 2 [9.60]")
        remove(i, MZ, "no effect", "rule 2 [9.59]")
    elif abs(az) > _TOL:  # Table 9.2, row 1
        expr[nm(i, MX)] = K[MX] - sympy.simplify(a[0] / a[2]) * K[MZ]
        expr[nm(i, MY)] = K[MY] - sympy.simplify(a[1] / a[2]) * K[MZ]
        remove(i, MZ, "grouped", "rule 3, Table 9.2")
    elif abs(ax) > _TOL and abs(ay) > _TOL:  # row 2
        expr[nm(i, MX)] = K[MX] - sympy.simplify(a[0] / a[1]) * K[MY]
        remove(i, MY, "grouped", "rule 3, Table 9.2")
    elif abs(ax) < _TOL:  # row 3
        remove(i, MY, "no effect", "rule 3, Table 9.2")
    else:  # row 4
        remove(i, MX, "no effect", "rule 3, Table 9.2")
