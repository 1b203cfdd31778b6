"""Customized direct dynamic models (Khalil & Dombre §9.7), expanded into scalar assignments.

:func:`forward_dynamics`: q̈ = A⁻¹ (Γ − H) [9.95]–[9.96] (§9.7.1): A(q) by composite links, H(q, q̇) by the
customized Newton–Euler algorithm with q̈ = 0, then an LDLᵀ factorisation and the two triangular solves
(zeros of A, e.g. of a decoupled wrist, fold away).  :func:`forward_dynamics_recursive`: the O(n)
recursive Newton–Euler algorithm of §9.7.2, [9.100]–[9.124].
"""

from __future__ import annotations

import symengine as se

from robodyn.symbolic import composite, newton_euler as ne
from robodyn.symbolic.engine import Program, cross, matmul, matvec, transpose
from robodyn.symbolic.symrobot import SymRobot


#: a pivot is singular below this many machine epsilons of its scale: the numeric formulations' relative test
#: (robodyn._arrays.pivot_too_small), evaluated by the generated code on every call
PIVOT_EPS = 64


def forward_dynamics(prog: Program, sr: SymRobot, friction: bool = True):
    """(outputs QDD1..QDDn, pivot checks); the torques are inputs TAU{j} (added to ``sr.inputs['tau']``).

    Each check is (frame index, pivot D_j, scale Σ_k |A_kk|): the LDLᵀ pivot must exceed 64 ε times the scale,
    the relative test of the numeric formulations (the single-state kernels' Σ|A_ii|)."""
    joints = [i for i, s in enumerate(sr.sigma) if s != 2]
    n = len(joints)
    tau = [se.Symbol(f"TAU{i + 1}") for i in joints]
    sr.inputs["tau"] = tau
    prog.reserve(*(str(t) for t in tau))
    A = composite.inertia_matrix(prog, sr)
    A = [A[r * n:(r + 1) * n] for r in range(n)]
    H = ne.inverse_dynamics(prog, sr, qdd=ne.zeros_like(sr.qdd), friction=friction, name="H")
    num = [j + 1 for j in joints]
    trace = sum((se.Abs(A[k][k]) for k in range(n)), se.Integer(0))
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
    return x, [(joints[j], D[j], trace) for j in range(n)]


def forward_dynamics_recursive(prog: Program, sr: SymRobot, friction: bool = True):
    """Direct dynamics by the O(n) recursive Newton–Euler algorithm, [9.100]–[9.124] (§9.7.2).

    Returns (outputs, pivot checks): each check is (frame index, H_j, scale): H_j must exceed 64 ε times the
    trace of the same-kind diagonal block of 𝕁*_j plus Ia_j, the relative test of rd.forward_dynamics.

    Spatial vectors are [linear; angular]; ^jT_a = [[Aᵀ, −Aᵀ P̂], [0, Aᵀ]] [2.63]; the spatial inertia
    𝕁 = [[M 1, −M̂S], [M̂S, J]] [9.21].  First forward pass: ω, ^jγ_j [9.101] (γ, Khalil & Dombre's ^jr_j),
    ^jβ_j [9.103]; backward pass: H_j, 𝕂_j, α_j, 𝕁*, β* [9.116]–[9.120]; second forward pass: q̈_j and
    ^jV̇_j [9.121]–[9.124].  Names: JS (𝕁*), BS (β*), H, JD (1/H), JU (𝕁* a / H), GK (𝕂), AP (α),
    GAMMA (γ), TAU (τ − friction), VR (^jV̇ before the joint), QDD.
    """
    joints = [i for i, s in enumerate(sr.sigma) if s != 2]
    tau_in = [se.Symbol(f"TAU{i + 1}") for i in joints]
    sr.inputs["tau"] = tau_in
    prog.reserve(*(str(t) for t in tau_in))
    tau = dict(zip(joints, tau_in))
    nf = len(sr.sigma)
    W, WI = [], []
    for i in range(nf):
        j = i + 1
        p = sr.antecedent[i] - 1
        wp = W[p] if p >= 0 else [se.Integer(0)] * 3
        wi = prog.vec("WI{k}{j}", sr.rotate(prog, i, wp, True, "WI"), j)
        w = [wi[0], wi[1], prog.let(f"W3{j}", wi[2] + sr.qd[i])] if sr.sigma[i] == 0 else wi
        W.append(w), WI.append(wi)
    Js, beta, gamma, T, axis = [], [], [], [], []
    for i in range(nf):
        j = i + 1
        p = sr.antecedent[i] - 1
        w, wi = W[i], WI[i]
        MS, J, M = sr.MS[i], sr.J[i], sr.M[i]
        msx = [[0, -MS[2], MS[1]], [MS[2], 0, -MS[0]], [-MS[1], MS[0], 0]]
        Js.append([[M if r == c else 0 for c in range(3)] + [-msx[r][c] for c in range(3)] for r in range(3)]
                  + [[msx[r][c] for c in range(3)] + [J[r][c] for c in range(3)] for r in range(3)])
        # β_j = −f_e − [ω × (ω × MS); ω × (J ω)]  [9.103]
        wms = prog.vec("SW{k}{j}", cross(w, prog.vec("WMS{k}{j}", cross(w, MS), j)), j)
        kw = prog.vec("KW{k}{j}", cross(w, prog.vec("JW{k}{j}", [sum((J[r][c] * w[c] for c in range(3)), se.Integer(0)) for r in range(3)], j)), j)
        fe = sr.wrenches[i] if sr.wrenches[i] is not None else [0] * 6
        beta.append([-fe[k] - wms[k] for k in range(3)] + [-fe[3 + k] - kw[k] for k in range(3)])
        # γ_j [9.101]
        P = sr.P[i]
        wp = W[p] if p >= 0 else [se.Integer(0)] * 3
        lin = sr.rotate(prog, i, cross(wp, cross(wp, P)), True, "LW")
        s = sr.sigma[i]
        wq = [sr.qd[i] * wi[1], -sr.qd[i] * wi[0], se.Integer(0)] if s != 2 else [se.Integer(0)] * 3
        g_lin = [lin[k] + (2 * wq[k] if s == 1 else 0) for k in range(3)]
        g_ang = wq if s == 0 else [se.Integer(0)] * 3
        gamma.append(prog.vec("GAMMA{k}{j}", g_lin, j) + prog.vec("GAMMAW{k}{j}", g_ang, j))
        # ^jT_a = [[Aᵀ, −Aᵀ P̂], [0, Aᵀ]]
        At = transpose(sr.A[i])
        Ph = [[0, -P[2], P[1]], [P[2], 0, -P[0]], [-P[1], P[0], 0]]
        AtP = [[-e for e in row] for row in matmul(At, Ph)]
        T.append([At[r] + AtP[r] for r in range(3)] + [[se.Integer(0)] * 3 + At[r] for r in range(3)])
        axis.append(None if s == 2 else (2 if s == 1 else 5))
    K, alpha, Hinv, JU, TAUr = [None] * nf, [None] * nf, [None] * nf, [None] * nf, [None] * nf
    checks = []
    for i in range(nf - 1, -1, -1):
        j = i + 1
        Js[i] = prog.mat("JS{r}{c}" + str(j), Js[i], "", symmetric=True)
        beta[i] = prog.vec("BS{k}" + str(j), beta[i][:3], "") + prog.vec("BSW{k}" + str(j), beta[i][3:], "")
        ax = axis[i]
        if ax is None:
            K[i] = Js[i]
            alpha[i] = [e - b for e, b in zip(matvec(Js[i], gamma[i]), beta[i])]
        else:
            H = prog.let(f"H{j}", Js[i][ax][ax] + sr.Ia[i])
            block = range(3, 6) if ax == 5 else range(3)  # same-kind diagonal block of 𝕁*_j: the scale of H_j
            checks.append((i, H, sum((se.Abs(Js[i][k][k]) for k in block), se.Integer(0)) + sr.Ia[i]))
            Hinv[i] = prog.let(f"JD{j}", 1 / H)
            ja = [Js[i][r][ax] for r in range(6)]
            JU[i] = prog.vec("JU{k}" + str(j), [e * Hinv[i] for e in ja], "")
            f = sr.friction[i] if friction else 0
            TAUr[i] = prog.let(f"GW{j}", tau[i] - f + beta[i][ax])  # τ + aᵀβ* [9.118]
            K[i] = prog.mat("GK{r}{c}" + str(j), [[Js[i][r][c] - JU[i][r] * ja[c] for c in range(6)] for r in range(6)],
                            "", symmetric=True)
            kg = matvec(K[i], gamma[i])
            alpha[i] = [kg[r] + JU[i][r] * TAUr[i] - beta[i][r] for r in range(6)]
        alpha[i] = prog.vec("AP{k}" + str(j), alpha[i][:3], "") + prog.vec("APW{k}" + str(j), alpha[i][3:], "")
        p = sr.antecedent[i] - 1
        if p >= 0:
            KT = [prog.vec("GX{k}" + f"{j}_{c + 1}", col, "") for c, col in enumerate(transpose(matmul(K[i], T[i])))]
            TKT = matmul(transpose(T[i]), transpose(KT))
            Js[p] = [[Js[p][r][c] + TKT[r][c] for c in range(6)] for r in range(6)]
            Ta = matvec(transpose(T[i]), alpha[i])
            beta[p] = [beta[p][r] - Ta[r] for r in range(6)]
    g = [-e for e in sr.gravity] + [se.Integer(0)] * 3
    Vd = [None] * nf
    out = {}
    for i in range(nf):
        j = i + 1
        p = sr.antecedent[i] - 1
        vp = Vd[p] if p >= 0 else g
        full = matvec(T[i], vp)  # ^jV̇_{a} [9.121]
        vr = prog.vec("VR{k}" + str(j), full[:3], "") + prog.vec("VRW{k}" + str(j), full[3:], "")
        vg = [vr[k] + gamma[i][k] for k in range(6)]
        ax = axis[i]
        if ax is None:
            Vd[i] = prog.vec("VP{k}" + str(j), vg[:3], "") + prog.vec("WP{k}" + str(j), vg[3:], "")
            continue
        qdd = prog.force(f"QDD{j}", (TAUr[i] - sum((Js[i][ax][k] * vg[k] for k in range(6)), se.Integer(0))) * Hinv[i])
        out[i] = qdd
        vg[ax] = vg[ax] + qdd
        Vd[i] = prog.vec("VP{k}" + str(j), vg[:3], "") + prog.vec("WP{k}" + str(j), vg[3:], "")
    return [out[i] for i in joints], checks  # in the order computed: the first that fails is the cause
