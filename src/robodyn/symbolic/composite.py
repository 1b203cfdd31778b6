"""Customized inertia matrix (composite links, Khalil & Dombre Appendix 8).

Composite link j+ = link j and all its descendants, about O_j in R_j:

    M+_a  = M_a + Σ M+_j,     MS+_a = MS_a + Σ (^aA_j MS+_j + M+_j ^aP_j),
    J+_a  = J_a + Σ (^aA_j J+_j ^jA_a − M+_j P̂ P̂ − P̂ Ŝ − Ŝ P̂),   P = ^aP_j, S = ^aA_j MS+_j.

A unit acceleration of joint j moves composite j+ rigidly: the wrench on it is
(f, m) = (a_j × MS+_j, J+_j a_j) for a revolute joint and (M+_j a_j, MS+_j × a_j) for a prismatic one;
carried down to each ancestor k it gives A_kj = (σ_k f + σ̄_k m)ᵀ a_k, and A_jj gains Ia_j.
"""

from __future__ import annotations

import symengine as se

from robodyn.symbolic.engine import Program, add, cross, matmul, matvec, scale, skew, transpose
from robodyn.symbolic.symrobot import SymRobot


def composite_inertias(prog: Program, sr: SymRobot, J, MS, M):
    """(J+, MS+, M+) of every frame, named JP, MSP, MP."""
    nf = len(sr.sigma)
    Jp = [[list(r) for r in J[i]] for i in range(nf)]
    MSp = [list(MS[i]) for i in range(nf)]
    Mp = list(M)
    for i in range(nf - 1, -1, -1):
        j = i + 1
        Mp[i] = prog.let(f"MP{j}", Mp[i])
        MSp[i] = prog.vec("MSP{k}{j}", MSp[i], j)
        Jp[i] = prog.mat("JP{r}{c}{j}", Jp[i], j, symmetric=True)
        a = sr.antecedent[i] - 1
        if a < 0:
            continue
        A, P = sr.A[i], sr.P[i]
        S = prog.vec("MSA{k}{j}", matvec(A, MSp[i]), j)
        Ph, Sh = skew(P), skew(S)
        rot = matmul(matmul(A, Jp[i]), transpose(A))
        PP, PS, SP = matmul(Ph, Ph), matmul(Ph, Sh), matmul(Sh, Ph)
        shift = [[rot[r][c] - Mp[i] * PP[r][c] - PS[r][c] - SP[r][c] for c in range(3)] for r in range(3)]
        Jp[a] = [[Jp[a][r][c] + shift[r][c] for c in range(3)] for r in range(3)]
        MSp[a] = add(MSp[a], S, scale(Mp[i], P))
        Mp[a] = Mp[a] + Mp[i]
    return Jp, MSp, Mp


def inertia_matrix(prog: Program, sr: SymRobot):
    """Elements A_ik (row-major, n x n), outputs named A{i}{k} (joint numbers of the frames)."""
    Jp, MSp, Mp = composite_inertias(prog, sr, sr.J, sr.MS, sr.M)
    joints = [i for i, s in enumerate(sr.sigma) if s != 2]
    pos = {f: k for k, f in enumerate(joints)}
    n = len(joints)
    out = [[se.Integer(0)] * n for _ in range(n)]
    for i in joints:
        j = i + 1
        if sr.sigma[i] == 0:
            f = [-MSp[i][1], MSp[i][0], se.Integer(0)]
            m = [Jp[i][0][2], Jp[i][1][2], Jp[i][2][2]]
        else:
            f = [se.Integer(0), se.Integer(0), Mp[i]]
            m = [MSp[i][1], -MSp[i][0], se.Integer(0)]
        diag = (m[2] if sr.sigma[i] == 0 else f[2]) + sr.Ia[i]
        out[pos[i]][pos[i]] = prog.force(f"A{j}{j}", diag)
        k = i
        while sr.antecedent[k] > 0:
            A, P = sr.A[k], sr.P[k]
            f = prog.vec("AF{k}" + f"{j}_{k + 1}", matvec(A, f), "")
            m = prog.vec("AN{k}" + f"{j}_{k + 1}", add(matvec(A, m), cross(P, f)), "")
            k = sr.antecedent[k] - 1
            if sr.sigma[k] != 2:
                e = f[2] if sr.sigma[k] == 1 else m[2]
                sym = prog.force(f"A{k + 1}{j}", e)
                out[pos[k]][pos[i]] = out[pos[i]][pos[k]] = sym
    return [e for row in out for e in row]
