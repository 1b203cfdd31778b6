"""Customized symbolic models traced from robodyn's own recursions (Khalil & Dombre §9.6).

A customized model is the recursion that computes robodyn's numbers — Newton–Euler
(:func:`robodyn.dynamics.newton_euler.rnea_components`), composite links
(:func:`robodyn.dynamics.composite.inertia_entries`), articulated bodies
(:func:`robodyn.dynamics.recursive.aba_components`), the regressor's link columns
(:func:`robodyn.parameters.regressor.link_columns`) — run once on the recording scalars of
:mod:`robodyn.dynamics.trace`, whose rules are Khalil & Dombre's customizing method (§9.6.2: products by 0 and
±1 folded, constants of the robot evaluated off-line, repeated expressions shared, what does not reach the outputs
dropped).  The robot's constants that the model keeps by name (D3, RL4 with ``symbolic_geometry``; XX2, MY3, IA1,
FV1 with ``symbolic_inertia``; the base parameters XXR2, ...; gravity G3) enter the recursion as
:class:`~robodyn.dynamics.trace.Const` values through :class:`ConstantRobot`; :func:`assignments` writes the
recording back as the scalar assignments of a :class:`~robodyn.symbolic.engine.Program`, which the listing and
the code emitters read.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import numpy as np
import symengine as se

from robodyn.dynamics.trace import SNAP_TOL, Const, Rec, Tape, arguments, expression, needed, recording_backend
from robodyn.model.robot import PARAMETER_NAMES
from robodyn.symbolic.engine import Program, is_atomic, number

#: SYMORO's names of the wrench components exerted by link j on the environment: FXj .. CZj.
WRENCH_NAMES = ("FX", "FY", "FZ", "CX", "CY", "CZ")
#: Names of the joint inputs of the recursions (q, q̇, q̈, τ) in the models: Q2, QP2, QDP2, TAU2 (frame numbers).
INPUT_NAMES = MappingProxyType({"q": "Q", "qd": "QP", "qdd": "QDP", "tau": "TAU"})


def quarter_turns(value: float) -> int | None:
    """k when value = k π/2 (mod 2π) to :data:`robodyn.dynamics.trace.SNAP_TOL`, else None: such an angle's sine
    and cosine are the numbers 0 and ±1, whatever ``symbolic_geometry`` says (§9.6.2)."""
    k = value / (np.pi / 2)
    if abs(k - round(k)) < SNAP_TOL:
        return int(round(k)) % 4
    return None


_SIN = (0.0, 1.0, 0.0, -1.0)
_COS = (1.0, 0.0, -1.0, 0.0)


class ConstantRobot:
    """``robot`` whose constants are those of a customized model: what the recursions read of a robot (its derived
    frames and links, θ_j, r_j, Ia_j) holds :class:`~robodyn.dynamics.trace.Const` values for the constants kept
    by name and floats for the others; every other attribute is the robot's own."""

    def __init__(self, robot, derived, theta, r, Ia) -> None:
        self.robot, self.derived, self.theta, self.r, self.Ia = robot, derived, theta, r, Ia

    def __getattr__(self, name: str):
        return getattr(self.robot, name)


@dataclasses.dataclass
class Constants:
    """The constants of one customized model: the robot the recursions run on, the friction coefficients per
    joint (Fc, Fv, Foff, Fst, F_st − F_c, k_st, B_st), gravity in R_0 (its nonzero components are the
    constants G1, G2, G3) and the values of the named constants."""

    robot: ConstantRobot
    friction: list
    gravity: list
    values: dict


def constants(program: Program, robot, symbolic_geometry: bool, symbolic_inertia: bool, inertia,
              gravity: bool = True) -> Constants:
    """The robot's constants for a customized model, registered in ``program``.

    A constant that is 0 stays the number 0 and one whose angle is a quarter turn gives the numbers 0 and ±1, so
    that they vanish from the model; with ``symbolic_geometry`` every other geometric constant is a symbol named as
    Khalil & Dombre do (D3, RL4, AL2 with SAL2 = sin AL2, ...), with ``symbolic_inertia`` every nonzero inertial
    parameter and friction coefficient (XX1, MY2, IA3, FS1, FV1, FO1, ...), else their values.

    Parameters
    ----------
    inertia : (values (nf, 11), names (nf, 11))
        XX XY XZ YY YZ ZZ MX MY MZ M Ia per frame (kg m², kg m, kg): the standard parameters, or the base
        parameters in place of the standard ones whose column they keep.
    gravity : bool
        Whether gravity is a constant of the model (G1, G2, G3 for its nonzero components), else None.
    """
    values: dict = {}

    def named(name: str, value: float, symbolic: bool):
        value = float(value)
        if value == 0.0 or not symbolic:
            return value
        s = se.Symbol(name)
        values[s] = value
        program.constant_symbols.add(s)
        program.reserve(name)
        return Const(value, s)

    def trig(name: str, value: float):
        k = quarter_turns(value)
        if k is not None:
            return _SIN[k], _COS[k]
        if not symbolic_geometry:
            return float(np.sin(value)), float(np.cos(value))
        angle = named(name, value, True)
        return (Const(np.sin(value), program.let("S" + name, se.sin(angle.expr))),
                Const(np.cos(value), program.let("C" + name, se.cos(angle.expr))))

    nf = robot.nf
    frames, theta, r = [], np.empty(nf, dtype=object), np.empty(nf, dtype=object)
    for i in range(nf):
        j = i + 1
        sg, cg = trig(f"GA{j}", robot.gamma[i])
        sa, ca = trig(f"AL{j}", robot.alpha[i])
        C = ((cg, -sg * ca, sg * sa), (sg, cg * ca, -cg * sa), (0.0, sa, ca))  # Rot(z, γ_j) Rot(x, α_j)
        d, b = named(f"D{j}", robot.d[i], symbolic_geometry), named(f"B{j}", robot.b[i], symbolic_geometry)
        frames.append((C, (cg * d, sg * d, b), (C[0][2], C[1][2], C[2][2])))
        k = quarter_turns(robot.theta[i]) if robot.sigma[i] == 0 else None
        theta[i] = float(robot.theta[i]) if k is not None else named(f"TH{j}", robot.theta[i], symbolic_geometry)
        r[i] = named(f"RL{j}", robot.r[i], symbolic_geometry)

    table, names = inertia
    links, links_six, Ia = [], [], np.empty(nf, dtype=object)
    for i in range(nf):
        XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M, IA = (named(names[i][k], table[i, k], symbolic_inertia)
                                                     for k in range(11))
        links.append((((XX, XY, XZ), (XY, YY, YZ), (XZ, YZ, ZZ)), (MX, MY, MZ), M))
        links_six.append(((XX, XY, XZ, YY, YZ, ZZ), (MX, MY, MZ), M))
        Ia[i] = IA
    friction = []
    for i in robot.joint_frames:
        j = i + 1
        Fc, Fv, Foff, Fst, kst, Bst = (named(f"{p}{j}", getattr(robot, a)[i], symbolic_inertia) for p, a in (
            ("FS", "Fc"), ("FV", "Fv"), ("FO", "Foff"), ("FST", "Fst"), ("KST", "kst"), ("BST", "Bst")))
        friction.append((Fc, Fv, Foff, Fst, Fst - Fc, kst, Bst))
    derived = dataclasses.replace(robot.derived, frames=tuple(frames), links=tuple(links),
                                  links_six=tuple(links_six), Ia=Ia[robot.joint_frames])
    g = [named(f"G{k + 1}", robot.gravity[k], True) for k in range(3)] if gravity else None
    return Constants(ConstantRobot(robot, derived, theta, r, Ia), friction, g, values)


def standard_inertia(robot):
    """(values (nf, 11), names (nf, 11)) of the standard parameters XX..M, Ia (kg m², kg m, kg)."""
    values = np.concatenate([robot.params, robot.Ia[:, None]], axis=1)
    names = [[f"{p}{j}" for p in PARAMETER_NAMES + ("IA",)] for j in range(1, robot.nf + 1)]
    return values, names


class Recording:
    """One recording of a recursion for a customized model: its tape (which keeps the names the recursion gives
    and the pivot checks it makes, :func:`robodyn.arrays.pivot_too_small`) and the symbol of each input node."""

    def __init__(self, seed: int = 0) -> None:
        self.tape = Tape()
        self.tape.checks = []
        self.tape.labels = {}
        self.symbols: dict[int, se.Symbol] = {}
        self.backend = recording_backend()
        self._rng = np.random.default_rng(seed)

    def inputs(self, symbols) -> list:
        """Recording scalars for the input symbols ``symbols`` (traced at random values)."""
        out = self.tape.input(f"x{len(self.symbols)}_", self._rng.uniform(-1.5, 1.5, len(symbols)))
        for x, s in zip(out, symbols):
            self.symbols[x.k] = s
        return out


def assignments(program: Program, rec: Recording, outputs, names) -> tuple[list, list]:
    """Write the recording's nodes that ``outputs`` (and the checks) need into ``program``; return the outputs,
    as variables named ``names`` (GAM1, A11, ...) or numbers, and the checks as (label, pivot, scale), each the
    test pivot > 64 ε scale of :func:`robodyn.arrays.pivot_too_small`.

    A node used once inside a sum or a product is written inside it (C3*WI12 + S3*WI22 rather than three
    variables), except a sum inside a product, which symengine would expand; every other node is a variable.
    Constants of the robot are written by name, their combinations (RL4*CAL4, XX2 − YY2) as variables evaluated
    once (``program.hoisted``), so that the operation count is the recording's.
    """
    tape = rec.tape
    checks = list(tape.checks)
    roots = [o.k for o in outputs if isinstance(o, Rec)]
    roots += [x.k for p, o, _ in checks for x in (p, o) if isinstance(x, Rec)]
    order = needed(tape, roots)
    uses = dict.fromkeys(order, 0)
    for k in order:
        for a in arguments(tape.ops[k]):
            uses[a] += 1
    for k in roots:
        uses[k] += 2  # an output or a check is a variable of its own
    labels = dict(tape.labels)
    for k in order:  # a named variable of its own (trace.opaque) gives its name to what it holds
        op = tape.ops[k]
        if op[0] == "let" and k in labels:
            name, sign = labels[k]
            labels.setdefault(op[1], (name, sign * op[2]))
    value: dict[int, se.Basic] = {}
    inline: set[int] = set()
    output_name: dict[int, tuple[str, int]] = {}  # an output's node is the variable of its name and sign
    for o, name in zip(outputs, names):
        if isinstance(o, Rec):
            output_name.setdefault(o.k, (name, o.s))

    def operand(k: int, consumer: str):
        e = value[k]
        if k in inline:
            kind = tape.ops[k][0]
            if kind in ("add", "addc") and consumer not in ("add", "addc"):
                e = program.let("T", e)
        return e

    def const(c):
        e = number(c) if not isinstance(c, Const) else expression(c)
        return e if is_atomic(se.sympify(e)) else program.let("K", e)

    for k in order:
        op = tape.ops[k]
        kind = op[0]
        if kind == "in":
            value[k] = rec.symbols[k]
            continue
        if kind == "mul":
            e = operand(op[1], kind) * operand(op[2], kind)
        elif kind == "cmul":
            e = const(op[1]) * operand(op[2], kind)
        elif kind == "div":
            e = operand(op[1], kind) / operand(op[2], kind)
        elif kind == "rdiv":
            e = 1 / operand(op[1], kind)
        elif kind == "add":
            e = operand(op[1], kind) + op[2] * operand(op[3], kind)
        elif kind == "addc":
            e = operand(op[2], kind) + const(op[1])
        elif kind == "let":
            e = op[2] * operand(op[1], kind)
        elif kind in ("sin", "cos", "sqrt", "exp", "abs", "sign"):
            arg = operand(op[1], kind)
            e = {"sin": se.sin, "cos": se.cos, "sqrt": se.sqrt, "exp": se.exp, "abs": se.Abs,
                 "sign": se.sign}[kind](arg)
        elif kind == "pow":
            e = operand(op[1], kind) ** const(op[2])
        else:
            raise ValueError(f"operation {kind!r} of a recording has no symbolic form")
        if k in output_name:
            name, sign = output_name[k]
            value[k] = sign * program.force(name, sign * e)
        elif uses[k] == 1 and kind in ("mul", "cmul", "add", "addc") and k not in labels:
            inline.add(k)
            value[k] = e
        else:
            name, sign = _name(tape, labels, k, rec.symbols)
            value[k] = sign * program.let(name, sign * e)  # the variable holds the value it was named for
    out, aliases = [], {}
    for o, name in zip(outputs, names):
        e = _expression(o, value)  # a variable, or minus one (a node that is an output with both signs)
        if isinstance(o, Const) or isinstance(o, Rec) and output_name[o.k][0] != name:
            # a constant of the robot, or a second output of one node (A36 = A26): a variable of its own name
            if name not in aliases:
                aliases[name] = program.force(name, e)
            e = aliases[name]
        out.append(e)
    return out, [(label, _expression(p, value), _expression(t, value)) for p, t, label in checks]


def _expression(x, value):
    """The expression of a recorded value: sign × its node's, a named constant's, or a number."""
    if isinstance(x, Rec):
        return x.s * value[x.k]
    return expression(x) if isinstance(x, Const) else number(x)


def _name(tape, labels, k: int, symbols) -> tuple[str, int]:
    """(name, sign) of a node's variable, which holds sign × the node: its label (:func:`robodyn.spatial.label`),
    S2 and C2 for the sine and cosine of joint 2 (of Q2 or of Q2 + θ2), else T."""
    if k in labels:
        return labels[k]
    op = tape.ops[k]
    if op[0] in ("sin", "cos"):
        arg = tape.ops[op[1]]
        k_in = op[1] if arg[0] == "in" else (arg[2] if arg[0] == "addc" and tape.ops[arg[2]][0] == "in" else None)
        if k_in is not None and str(symbols[k_in]).startswith("Q"):
            return ("S" if op[0] == "sin" else "C") + str(symbols[k_in])[1:], 1
    return "T", 1
