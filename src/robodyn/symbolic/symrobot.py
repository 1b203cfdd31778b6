"""A robot seen by the customizing engine: geometry, inertia, joint variables as symengine expressions.

Geometric constants that are exactly 0, ±π/2 or π are used as numbers, so that their sines and cosines are
0 and ±1 and vanish from the model (§9.6.2).  With ``symbolic_geometry`` every other geometric constant is
a symbol named as Khalil & Dombre do (D3, RL4, ...), otherwise its value; with ``symbolic_inertia`` every
nonzero inertial parameter is a symbol (XX1, MY2, IA3, FV1, ...) and zeros stay zeros.  The symbols and
their values are collected in ``constants`` so that generated code can bind them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import symengine as se

from robodyn.dynamics.trace import SNAP_TOL
from robodyn.errors import InputError
from robodyn.model.robot import PARAMETER_NAMES
from robodyn.symbolic.engine import Program, matmul, number

# Symbol names (SYMORO's): geometry GA, B, AL, D, TH, RL + frame number; joints IA (rotor inertia),
# FS (Coulomb), FV (viscous), FO (offset) [9.26]; gravity G1..G3; wrenches FX..CZ + frame number.
WRENCH_NAMES = ("FX", "FY", "FZ", "CX", "CY", "CZ")


def quarter_turns(value: float) -> int | None:
    """k when value = k π/2 (mod 2π) to :data:`robodyn.dynamics.trace.SNAP_TOL` (robodyn's one tolerance for a
    constant that is exactly 0 or ±1: here its sine and cosine), else None."""
    k = value / (np.pi / 2)
    kr = round(k)
    if abs(k - kr) < SNAP_TOL:
        return int(kr) % 4
    return None


_SIN = (0, 1, 0, -1)
_COS = (1, 0, -1, 0)


@dataclass
class SymRobot:
    """Per-frame expressions of one robot; index i = frame j − 1 as in :class:`robodyn.Robot`."""

    robot: object
    sigma: list
    antecedent: list
    q: list  # per frame: Symbol Q{j} or None (fixed)
    qd: list
    qdd: list
    A: list  # ^{a(j)}A_j, 3x3 expressions
    P: list  # ^{a(j)}P_j, 3 expressions
    J: list  # ^jJ_j, 3x3
    MS: list
    M: list
    Ia: list
    friction: list  # Γ_f of each frame (expression) or 0
    gravity: list  # 3 expressions: g in R_0
    wrenches: list  # per frame: 6 expressions [f_e; m_e] or None
    constants: dict = field(default_factory=dict)  # Symbol -> float
    inputs: dict = field(default_factory=dict)  # name -> list of symbols, in argument order
    rotations: list = field(default_factory=list)  # per frame: [(axis, cos, sin)] with A = R1 R2 R3

    def rotate(self, prog: Program, i: int, v, transpose: bool = False, tag: str = "R"):
        """^{a}A_j v (or its transpose) applied one elementary rotation at a time.

        Rz(γ) Rx(α) Rz(θ) applied in turn costs 4 products per general angle, fewer than the product matrix
        (whose entries cos α sin θ ... are themselves products); intermediate components are named.
        """
        rots = self.rotations[i]
        seq = rots if transpose else rots[::-1]
        for n, (axis, c, s) in enumerate(seq):
            s = -s if transpose else s
            if axis == "z":
                v = [c * v[0] - s * v[1], s * v[0] + c * v[1], v[2]]
            else:
                v = [v[0], c * v[1] - s * v[2], s * v[1] + c * v[2]]
            if n < len(seq) - 1:
                v = prog.vec(tag + "A{k}{j}", v, i + 1)
        return v


def inertia_table(robot):
    """Values (nf, 11) = XX..M, Ia (kg m², kg m, kg) and names (nf, 11) of the standard parameters."""
    values = np.concatenate([robot.params, robot.Ia[:, None]], axis=1)
    names = [[f"{p}{j}" for p in PARAMETER_NAMES + ("IA",)] for j in range(1, robot.nf + 1)]
    return values, names


def build(
    program: Program,
    robot,
    symbolic_geometry: bool = False,
    symbolic_inertia: bool = False,
    inertia=None,
    gravity: str = "constant",
    wrenches: str = "none",
    friction: bool = True,
) -> SymRobot:
    """Describe ``robot`` with expressions and create its sin/cos variables in ``program``.

    Parameters
    ----------
    inertia : (values (nf, 11), names (nf, 11)) or None
        Inertial parameters XX XY XZ YY YZ ZZ MX MY MZ M Ia per frame; default the robot's standard ones.
    gravity : "constant" | "input"
        "constant": nonzero components of ``robot.gravity`` are constants G1, G2, G3 (zeros stay zeros);
        "input": g is an argument of the model.
    wrenches : "none" | "terminal" | "all"
        Which frames carry external wrench inputs FXj FYj FZj CXj CYj CZj (exerted by link j on the
        environment, in R_j, moment about O_j).
    friction : bool
        Add Γ_f = FS sign(q̇) + FV q̇ + FO (+ Stribeck where F_st ≠ 0) to the joint torques [9.26].
    """
    constants: dict = {}
    inputs: dict = {}
    nf = robot.nf

    def const(name: str, value: float, symbolic: bool):
        if value == 0:
            return se.Integer(0)
        if symbolic:
            s = se.Symbol(name)
            constants[s] = float(value)
            program.constant_symbols.add(s)
            return s
        return number(value)

    def trig(name: str, value: float, symbolic: bool):
        """(sin, cos) of a constant angle: numbers for k π/2, else constants S{name}/C{name} or values."""
        k = quarter_turns(value)
        if k is not None:
            return se.Integer(_SIN[k]), se.Integer(_COS[k])
        if symbolic:
            a = const(name, value, True)
            return program.let("S" + name, se.sin(a)), program.let("C" + name, se.cos(a))
        return number(np.sin(value)), number(np.cos(value))

    q, qd, qdd = [], [], []
    for j in range(1, nf + 1):
        if robot.sigma[j - 1] == 2:
            q.append(None), qd.append(None), qdd.append(None)
        else:
            q.append(se.Symbol(f"Q{j}")), qd.append(se.Symbol(f"QP{j}")), qdd.append(se.Symbol(f"QDP{j}"))
    inputs["q"] = [s for s in q if s is not None]
    inputs["qd"] = [s for s in qd if s is not None]
    inputs["qdd"] = [s for s in qdd if s is not None]
    program.reserve(*(str(s) for k in ("q", "qd", "qdd") for s in inputs[k]))

    A, P, rotations = [], [], []
    for i in range(nf):
        j = i + 1
        sg, cg = trig(f"GA{j}", robot.gamma[i], symbolic_geometry)
        sa, ca = trig(f"AL{j}", robot.alpha[i], symbolic_geometry)
        th = robot.theta[i]
        r = const(f"RL{j}", robot.r[i], symbolic_geometry)
        if robot.sigma[i] == 0:
            k = quarter_turns(th)
            if k is not None:
                s0 = program.let(f"S{j}", se.sin(q[i]))
                c0 = program.let(f"C{j}", se.cos(q[i]))
                # sin/cos(q + k π/2) by quarter turns: exact, no extra variable
                st = _SIN[k] * c0 + _COS[k] * s0
                ct = _COS[k] * c0 - _SIN[k] * s0
            else:
                angle = q[i] + const(f"TH{j}", th, symbolic_geometry)
                st, ct = program.let(f"S{j}", se.sin(angle)), program.let(f"C{j}", se.cos(angle))
        else:
            st, ct = trig(f"TH{j}", th, symbolic_geometry)
            if robot.sigma[i] == 1:
                r = r + q[i]
        Rz_g = [[cg, -sg, 0], [sg, cg, 0], [0, 0, 1]]
        Rx_a = [[1, 0, 0], [0, ca, -sa], [0, sa, ca]]
        Rz_t = [[ct, -st, 0], [st, ct, 0], [0, 0, 1]]
        Aj = program.mat("AT{r}{c}" + str(j), matmul(matmul(Rz_g, Rx_a), Rz_t), "")
        rotations.append([(ax, c, s) for ax, c, s in (("z", cg, sg), ("x", ca, sa), ("z", ct, st))
                          if not (c == 1 and s == 0)])
        d = const(f"D{j}", robot.d[i], symbolic_geometry)
        b = const(f"B{j}", robot.b[i], symbolic_geometry)
        p_local = [d, -sa * r, b + ca * r]
        Pj = [cg * p_local[0] - sg * p_local[1], sg * p_local[0] + cg * p_local[1], p_local[2]]
        # revolute/fixed: constants such as RL4*CAL4, evaluated once (hoisted); prismatic: per call
        Pj = program.vec("P{k}{j}", Pj, j)
        A.append(Aj)
        P.append(Pj)

    values, names = inertia if inertia is not None else inertia_table(robot)
    J, MS, M, Ia, fric = [], [], [], [], []
    for i in range(nf):
        c = [const(names[i][k], values[i, k], symbolic_inertia) for k in range(11)]
        XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, Mj, IA = c
        J.append([[XX, XY, XZ], [XY, YY, YZ], [XZ, YZ, ZZ]])
        MS.append([MX, MY, MZ])
        M.append(Mj)
        Ia.append(IA)
        f = se.Integer(0)
        if friction and robot.sigma[i] != 2:
            j = i + 1
            Fc = const(f"FS{j}", robot.Fc[i], symbolic_inertia)
            Fv = const(f"FV{j}", robot.Fv[i], symbolic_inertia)
            Fo = const(f"FO{j}", robot.Foff[i], symbolic_inertia)
            f = Fc * se.sign(qd[i]) + Fv * qd[i] + Fo
            if robot.Fst[i] != 0:
                dF = const(f"FST{j}", robot.Fst[i] - robot.Fc[i], symbolic_inertia)
                kst = const(f"KST{j}", robot.kst[i], symbolic_inertia)
                Bst = const(f"BST{j}", robot.Bst[i], symbolic_inertia)
                f = f + dF * se.sign(qd[i]) * se.exp(-kst * se.Abs(qd[i]) ** Bst)
        fric.append(f)

    if gravity == "input":
        g = [se.Symbol(f"G{k}") for k in (1, 2, 3)]
        inputs["gravity"] = g
        program.reserve("G1", "G2", "G3")
    elif gravity == "constant":
        g = [const(f"G{k + 1}", robot.gravity[k], True) for k in range(3)]
    else:
        raise InputError(f"gravity = {gravity!r}; choose 'constant' or 'input'")

    frames = {"none": [], "terminal": [nf - 1], "all": list(range(nf))}
    if wrenches not in frames:
        raise InputError(f"wrenches = {wrenches!r}; choose 'none', 'terminal' or 'all'")
    we = [None] * nf
    if frames[wrenches]:
        inputs["wrenches"] = []
        for i in frames[wrenches]:
            we[i] = [se.Symbol(f"{w}{i + 1}") for w in WRENCH_NAMES]
            inputs["wrenches"].extend(we[i])
        program.reserve(*(str(s) for s in inputs["wrenches"]))
    program.reserve(*(str(s) for s in constants))
    return SymRobot(
        robot=robot, sigma=[int(s) for s in robot.sigma], antecedent=[int(a) for a in robot.antecedent],
        q=q, qd=qd, qdd=qdd, A=A, P=P, J=J, MS=MS, M=M, Ia=Ia, friction=fric, gravity=g, wrenches=we,
        constants=constants, inputs=inputs, rotations=rotations,
    )
