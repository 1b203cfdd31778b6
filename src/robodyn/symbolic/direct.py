"""Customized direct dynamic model q̈ = A⁻¹ (Γ − H) [9.95]–[9.96] (Khalil & Dombre §9.7.1).

A(q) by composite links, H(q, q̇) by the customized Newton–Euler algorithm with q̈ = 0, then an LDLᵀ
factorisation and the two triangular solves, all expanded into scalar assignments (zeros of A, e.g. of a
decoupled wrist, fold away).  The O(n) recursive algorithm of §9.7.2 is not generated here.
"""

from __future__ import annotations

import symengine as se

from robodyn.symbolic import composite, newton_euler as ne
from robodyn.symbolic.engine import Program
from robodyn.symbolic.symrobot import SymRobot


def forward_dynamics(prog: Program, sr: SymRobot, friction: bool = True):
    """Outputs QDD1..QDDn; the torques are inputs TAU{j} (added to ``sr.inputs['tau']``)."""
    joints = [i for i, s in enumerate(sr.sigma) if s != 2]
    n = len(joints)
    tau = [se.Symbol(f"TAU{i + 1}") for i in joints]
    sr.inputs["tau"] = tau
    prog.reserve(*(str(t) for t in tau))
    A = composite.inertia_matrix(prog, sr)
    A = [A[r * n:(r + 1) * n] for r in range(n)]
    H = ne.inverse_dynamics(prog, sr, qdd=ne.zeros_like(sr.qdd), friction=friction, name="H")
    num = [j + 1 for j in joints]
    L = [[se.Integer(0)] * n for _ in range(n)]
    D = [se.Integer(0)] * n
    for j in range(n):
        D[j] = prog.let(f"DL{num[j]}", A[j][j] - sum((L[j][k] ** 2 * D[k] for k in range(j)), se.Integer(0)))
        inv = prog.let(f"JD{num[j]}", 1 / D[j])
        for i in range(j + 1, n):
            s = A[i][j] - sum((L[i][k] * L[j][k] * D[k] for k in range(j)), se.Integer(0))
            L[i][j] = prog.let(f"L{num[i]}_{num[j]}", s * inv)
    y = [se.Integer(0)] * n
    for i in range(n):
        y[i] = prog.let(f"Y{num[i]}", tau[i] - H[i] - sum((L[i][k] * y[k] for k in range(i)), se.Integer(0)))
    x = [se.Integer(0)] * n
    for i in range(n - 1, -1, -1):
        z = y[i] * prog.let(f"JD{num[i]}", 1 / D[i]) - sum((L[k][i] * x[k] for k in range(i + 1, n)), se.Integer(0))
        x[i] = prog.force(f"QDD{num[i]}", z)
    return x
