"""Closed-form Lagrange models of small robots: A(q), C(q, q̇), Q(q) as sympy expressions.

Khalil & Dombre §9.3: the kinetic energy of link j [9.13]

    E_j = ½ [ ^jω_jᵀ ^jJ_j ^jω_j + M_j ^jV_jᵀ ^jV_j + 2 ^jMS_jᵀ (^jV_j × ^jω_j) ],

with the velocities of [9.17]–[9.18], gives A_ik = ∂²E/∂q̇_i∂q̇_k (+ Ia_i on the diagonal); the potential
energy U = −Σ ⁰gᵀ (M_j ⁰P_j + ⁰A_j ^jMS_j) [9.25] gives Q = ∂U/∂q [9.8]; the Christoffel symbols
c_{i,jk} = ½ (∂A_ij/∂q_k + ∂A_ik/∂q_j − ∂A_jk/∂q_i) give C_ij = Σ_k c_{i,jk} q̇_k [9.7].
Meant for a few links (Example 9.1, De Luca's 2R, PR, 3R and parallelogram examples): sympy is used
directly, so the cost grows quickly with n.

An independent check, on purpose: the velocity recursion [9.17]–[9.18] is written here again, on sympy matrices
(Rot(x, α) Rot(z, θ), serial chains only), instead of running the component recursion of
:func:`robodyn.kinematics.frame_velocities`.  Its models are derived by energy (the Lagrange equations [9.6]–[9.8])
where every numeric path runs Newton–Euler, composite links or articulated bodies; sharing their velocity code
would let one mistake pass both sides of the comparisons in the tests (tests/test_symbolic_lagrange.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from robodyn.errors import InputError
from robodyn.symbolic.customize import quarter_turns


@dataclass
class ClosedForm:
    """A(q) (n, n), Q(q) (n,), with symbols ``q`` (Q1..), ``qd`` (QP1..); ``C`` from [9.7]."""

    q: list
    qd: list
    A: sp.Matrix
    Q: sp.Matrix

    def christoffel(self):
        """c[i][j][k] = c_{i,jk} of [9.7]."""
        n = len(self.q)
        d = [[[sp.diff(self.A[i, j], self.q[k]) for k in range(n)] for j in range(n)] for i in range(n)]
        return [[[sp.Rational(1, 2) * (d[i][j][k] + d[i][k][j] - d[j][k][i]) for k in range(n)]
                 for j in range(n)] for i in range(n)]

    @property
    def C(self) -> sp.Matrix:
        """C(q, q̇) with C_ij = Σ_k c_{i,jk} q̇_k [9.7] (Ȧ − 2C is skew-symmetric)."""
        c = self.christoffel()
        n = len(self.q)
        return sp.Matrix(n, n, lambda i, j: sum(c[i][j][k] * self.qd[k] for k in range(n)))

    def torques(self, qdd) -> sp.Matrix:
        """Γ = A q̈ + C q̇ + Q [9.6] for symbols or numbers ``qdd``."""
        return self.A * sp.Matrix(qdd) + self.C * sp.Matrix(self.qd) + self.Q


def _angle(value: float, name: str, symbolic: bool):
    k = quarter_turns(value)
    if k is not None:
        return sp.pi * sp.Rational(k, 2) if k != 3 else -sp.pi / 2
    return sp.Symbol(name) if symbolic else sp.Float(value)


def _value(value: float, name: str, symbolic: bool):
    if value == 0:
        return sp.Integer(0)
    return sp.Symbol(name) if symbolic else sp.nsimplify(value) if float(value).is_integer() else sp.Float(value)


def _rot_x(a):
    return sp.Matrix([[1, 0, 0], [0, sp.cos(a), -sp.sin(a)], [0, sp.sin(a), sp.cos(a)]])


def _rot_z(a):
    return sp.Matrix([[sp.cos(a), -sp.sin(a), 0], [sp.sin(a), sp.cos(a), 0], [0, 0, 1]])


def closed_form(robot, frames: int | None = None, symbolic_geometry: bool = True, symbolic_inertia: bool = True,
                gravity=None) -> ClosedForm:
    """Closed-form A and Q of the first ``frames`` frames of a serial robot (Example 9.1: ``frames=3``).

    Geometric constants 0, ±π/2, π are exact; other ones are symbols D3, RL4, AL2, TH2, ... (or their
    values).  Inertial parameters are XX1 ... M1, IA1 for every nonzero value (or the values).
    ``gravity``: 3 sympy expressions for ⁰g (default: symbols G1, G2, G3 where robot.gravity ≠ 0).
    """
    nf = robot.nf if frames is None else frames
    if not robot.is_serial or np.any(robot.sigma[:nf] == 2):
        raise InputError("closed_form needs a serial robot without fixed frames; use customized_model otherwise")
    q = [sp.Symbol(f"Q{j}") for j in range(1, nf + 1)]
    qd = [sp.Symbol(f"QP{j}") for j in range(1, nf + 1)]
    g = sp.Matrix(gravity) if gravity is not None else sp.Matrix(
        [sp.Symbol(f"G{k + 1}") if robot.gravity[k] != 0 else 0 for k in range(3)])
    w, V = sp.zeros(3, 1), sp.zeros(3, 1)
    R0, P0 = sp.eye(3), sp.zeros(3, 1)
    E, U = sp.Integer(0), sp.Integer(0)
    Ia = []
    z = sp.Matrix([0, 0, 1])
    for i in range(nf):
        j = i + 1
        alpha = _angle(robot.alpha[i], f"AL{j}", symbolic_geometry)
        theta = _angle(robot.theta[i], f"TH{j}", symbolic_geometry)
        d = _value(robot.d[i], f"D{j}", symbolic_geometry)
        r = _value(robot.r[i], f"RL{j}", symbolic_geometry)
        if robot.sigma[i] == 0:
            theta = theta + q[i]
        else:
            r = r + q[i]
        A = _rot_x(alpha) * _rot_z(theta)
        P = sp.Matrix([d, -sp.sin(alpha) * r, sp.cos(alpha) * r])
        w_prev = w
        w = A.T * w + (qd[i] * z if robot.sigma[i] == 0 else sp.zeros(3, 1))  # [9.17]
        V = A.T * (V + w_prev.cross(P)) + (qd[i] * z if robot.sigma[i] == 1 else sp.zeros(3, 1))  # [9.18]
        P0 = P0 + R0 * P
        R0 = R0 * A
        p = [_value(robot.params[i, k], f"{name}{j}", symbolic_inertia)
             for k, name in enumerate(("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M"))]
        J = sp.Matrix([[p[0], p[1], p[2]], [p[1], p[3], p[4]], [p[2], p[4], p[5]]])
        MS = sp.Matrix(p[6:9])
        M = p[9]
        E += sp.Rational(1, 2) * ((w.T * J * w)[0] + M * (V.T * V)[0] + 2 * (MS.T * V.cross(w))[0])  # [9.13]
        U += -(g.T * (M * P0 + R0 * MS))[0]  # [9.25]
        Ia.append(_value(robot.Ia[i], f"IA{j}", symbolic_inertia))
    E = sp.expand(E)
    A = sp.Matrix(nf, nf, lambda a, b: sp.diff(E, qd[a], qd[b]) + (Ia[a] if a == b else 0))
    Q = sp.Matrix([sp.diff(U, qk) for qk in q])  # [9.8]
    # sin² + cos² = 1 folded (e.g. m11 = M1 + M2 of the PR robot), then expanded again
    return ClosedForm(q, qd, A.applyfunc(lambda e: sp.expand(sp.trigsimp(e))), Q.applyfunc(sp.expand))


def planar_bodies(q, qd, bodies) -> ClosedForm:
    """Closed form of a planar mechanism given, for each body, (mass, I_zz about the CoM, CoM position
    (x, y) and absolute angle as functions of q) with gravity −g0 along y (De Luca's 2D notation).

    Handles closed chains expressed in independent coordinates, e.g. :func:`parallelogram`."""
    g0 = sp.Symbol("g0")
    T, U = sp.Integer(0), sp.Integer(0)
    for m, I, pos, angle in bodies:
        v = [sum(sp.diff(c, qk) * qdk for qk, qdk in zip(q, qd)) for c in pos]
        om = sum(sp.diff(angle, qk) * qdk for qk, qdk in zip(q, qd))
        T += sp.Rational(1, 2) * (m * (v[0] ** 2 + v[1] ** 2) + I * om**2)
        U += m * g0 * pos[1]
    T = sp.expand(T)
    n = len(q)
    A = sp.Matrix(n, n, lambda a, b: sp.diff(T, qd[a], qd[b]))
    Q = sp.Matrix([sp.diff(U, qk) for qk in q])
    return ClosedForm(list(q), list(qd), A.applyfunc(sp.trigsimp), Q)


def parallelogram() -> ClosedForm:
    """De Luca's planar parallelogram arm (l1 = l3, l2 = l4), absolute coordinates q1, q2: four bodies
    with masses m1..m4, inertias Ic1..Ic4 and CoM distances lc1..lc4."""
    q1, q2, qd1, qd2 = sp.symbols("q1 q2 qd1 qd2")
    l1, l2 = sp.symbols("l1 l2")
    m = sp.symbols("m1:5")
    I = sp.symbols("Ic1:5")
    lc = sp.symbols("lc1:5")
    c1, s1, c2, s2 = sp.cos(q1), sp.sin(q1), sp.cos(q2), sp.sin(q2)
    bodies = [
        (m[0], I[0], (lc[0] * c1, lc[0] * s1), q1),
        (m[1], I[1], (lc[1] * c2, lc[1] * s2), q2),
        (m[2], I[2], (l2 * c2 + lc[2] * c1, l2 * s2 + lc[2] * s1), q1),
        (m[3], I[3], (l1 * c1 - lc[3] * c2, l1 * s1 - lc[3] * s2), q2),
    ]
    return planar_bodies([q1, q2], [qd1, qd2], bodies)
