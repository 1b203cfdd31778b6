"""Customized regressor Φ(q, q̇, q̈) with Γ = Φ K [9.36] (Khalil & Dombre §9.4.1, SYMORO's DG variables).

Columns are named by standard parameters (XX1 .. M1, Ia1, .., Fc1, Fv1, Foff1, ..; those of
:func:`robodyn.parameters.standard_parameter_names`) or by base parameters, whose column is the one of
the standard parameter they keep (:class:`robodyn.parameters.BaseParameters` ``.standard``, [9.40]).
"""

from __future__ import annotations

import re

import symengine as se

from robodyn.model.robot import PARAMETER_NAMES
from robodyn.symbolic import newton_euler as ne
from robodyn.symbolic.engine import Program, add, cross, matvec, scale
from robodyn.symbolic.symrobot import SymRobot

_NAME = re.compile(r"^([A-Za-z]+?)(\d+)$")


def _unit(p: int):
    """(J, MS, M) with parameter p (index in XX..M) equal to 1 and the others 0."""
    v = [se.Integer(0)] * 10
    v[p] = se.Integer(1)
    XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M = v
    return [[XX, XY, XZ], [XY, YY, YZ], [XZ, YZ, ZZ]], [MX, MY, MZ], M


def regressor(prog: Program, sr: SymRobot, standard, names):
    """Columns of Φ for the standard parameters ``standard``, outputs named ``DG{row}_{name}``.

    A link parameter's column is the Newton–Euler torque with that parameter 1 and the others 0: the link
    wrench [9.88]–[9.89] of the unit parameter carried to the base by [9.92]–[9.93] and projected on each
    joint axis [9.94].  Ia_j's column is q̈_j; Fc_k, Fv_k, Foff_k's are sign(q̇_k), q̇_k, 1 on row k [9.26].

    Parameters
    ----------
    standard : sequence of str — standard parameter names (frame numbers for links, joint numbers for
        friction), one per column.
    names : sequence of str — the columns' names (the base parameter names, or ``standard`` again).

    Returns
    -------
    list of Expr: the (n, len(standard)) elements of Φ, row-major.
    """
    W, WP, VP, U = ne.forward_recursion(prog, sr)
    joints = [i for i, s in enumerate(sr.sigma) if s != 2]
    row = {f: k for k, f in enumerate(joints)}
    n = len(joints)
    cols = []
    for std, tag in zip(standard, names):
        head, num = _NAME.match(std).groups()
        i = int(num) - 1
        col = [se.Integer(0)] * n
        if head in PARAMETER_NAMES:
            _link_column(prog, sr, i, PARAMETER_NAMES.index(head), tag, (W, WP, VP, U), row, col)
        elif head == "Ia":
            if sr.sigma[i] != 2:
                col[row[i]] = sr.qdd[i]
        else:
            f = joints[i]
            col[i] = {"Fc": se.sign(sr.qd[f]), "Fv": sr.qd[f], "Foff": se.Integer(1)}[head]
        cols.append(col)
    return [cols[c][r] for r in range(n) for c in range(len(cols))]


def _link_column(prog: Program, sr: SymRobot, i: int, p: int, tag: str, motion, row, col):
    """Fill ``col`` with the torques due to parameter p of frame i alone (Newton–Euler, unit parameter)."""
    W, WP, VP, U = motion
    j = i + 1
    J, MS, M = _unit(p)
    F = prog.vec("DF{k}" + f"{j}_{tag}", add(scale(M, VP[i]), matvec(U[i], MS)), "")
    dv = ne.dv_products(prog, W[i], j)
    N = add([ne.euler_moment(prog, J, WP[i], dv, U[i], k) for k in range(3)], cross(MS, VP[i]))
    N = prog.vec("DN{k}" + f"{j}_{tag}", N, "")
    k = i
    while True:
        if sr.sigma[k] != 2:
            col[row[k]] = prog.force(f"DG{row[k] + 1}_{tag}", F[2] if sr.sigma[k] == 1 else N[2])
        a = sr.antecedent[k] - 1
        if a < 0:
            return
        A, P = sr.A[k], sr.P[k]
        F = prog.vec("DFI{k}" + f"{k + 1}_{tag}", matvec(A, F), "")
        N = prog.vec("DNI{k}" + f"{k + 1}_{tag}", add(matvec(A, N), cross(P, F)), "")
        k = a
