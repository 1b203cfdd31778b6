"""Customized Newton–Euler inverse dynamics (Khalil & Dombre §9.5.3 with ^jU_j, §9.6.2), as assignments.

Forward recursion [9.84]–[9.90] and backward recursion [9.91]–[9.94], expanded element by element into a
:class:`~robodyn.symbolic.engine.Program`.  Variable names follow Khalil & Dombre and SYMORO: WI (^jω_{a(j)}),
W (^jω_j), WP (^jω̇_j), DV (products ω_k ω_l), U (^jU_j), VSP (^{a}V̇_a + ^aU_a ^aP_j), VP (^jV̇_j),
F, N (link wrench [9.88]–[9.89]), FJ, NJ (joint wrench ^jf_j, ^jm_j), FDI (^{a}f_j),
GAM (joint torque).
"""

from __future__ import annotations

import symengine as se

from robodyn.symbolic.engine import ZERO3, Program, add, cross, matvec, scale
from robodyn.symbolic.symrobot import SymRobot


def forward_recursion(prog: Program, sr: SymRobot, qd=None, qdd=None, gravity=True):
    """^jω_j, ^jω̇_j, ^jV̇_j and ^jU_j of every frame, [9.84]–[9.87], [9.90] (V̇_0 = −g, [9.80]).

    ``qd``/``qdd`` override the joint velocity/acceleration symbols (e.g. zeros for H or Q).
    Returns lists over frames of 3-vectors (W, WP, VP) and 3x3 U (built lazily by the backward scan).
    """
    qd = sr.qd if qd is None else qd
    qdd = sr.qdd if qdd is None else qdd
    g = [-e for e in sr.gravity] if gravity else ZERO3
    W, WP, VP, U = [], [], [], []
    for i in range(len(sr.sigma)):
        j = i + 1
        p = sr.antecedent[i] - 1
        P = sr.P[i]
        if p >= 0:
            wp, wdp = W[p], WP[p]
            vsp = prog.vec("VSP{k}{j}", add(VP[p], matvec(U[p], P)), j)  # ^aV̇_a + ^aU_a ^aP_j
        else:
            wp, wdp, vsp = ZERO3, ZERO3, g
        wi = prog.vec("WI{k}{j}", sr.rotate(prog, i, wp, True, "WI"), j)  # [9.84]
        wd = sr.rotate(prog, i, wdp, True, "WP")
        vp = sr.rotate(prog, i, vsp, True, "VP")
        s = sr.sigma[i]
        if s == 0:
            w = [wi[0], wi[1], prog.let(f"W3{j}", wi[2] + qd[i])]  # [9.85]
            wd = add(wd, [qd[i] * wi[1], -qd[i] * wi[0], qdd[i]])  # [9.86]
        else:
            w = wi
            if s == 1:
                vp = add(vp, [2 * qd[i] * wi[1], -2 * qd[i] * wi[0], qdd[i]])  # [9.87]
        wd = prog.vec("WP{k}{j}", wd, j)
        vp = prog.vec("VP{k}{j}", vp, j)
        W.append(w), WP.append(wd), VP.append(vp), U.append(u_matrix(prog, w, wd, j))
    return W, WP, VP, U


def dv_products(prog: Program, w, j):
    """The products DVkl = ω_k ω_l of ^jω_j (3x3, symmetric; hash-consing returns existing variables)."""
    return [[prog.let(f"DV{min(k, m) + 1}{max(k, m) + 1}{j}", w[k] * w[m]) for m in range(3)] for k in range(3)]


def u_matrix(prog: Program, w, wd, j):
    """^jU_j = ^jω̂̇_j + ^jω̂_j ^jω̂_j [9.90], through the products DVkl = ω_k ω_l."""
    dv = dv_products(prog, w, j)
    u = [
        [-dv[1][1] - dv[2][2], dv[0][1] - wd[2], dv[0][2] + wd[1]],
        [dv[0][1] + wd[2], -dv[0][0] - dv[2][2], dv[1][2] - wd[0]],
        [dv[0][2] - wd[1], dv[1][2] + wd[0], -dv[0][0] - dv[1][1]],
    ]
    return prog.mat("U{r}{c}{j}", u, j)


def link_wrenches(prog: Program, sr: SymRobot, W, WP, VP, U):
    """^jF_j = M_j ^jV̇_j + ^jU_j ^jMS_j [9.88] and ^jN_j [9.89], through :func:`euler_moment`."""
    F, N = [], []
    for i in range(len(sr.sigma)):
        j = i + 1
        F.append(prog.vec("F{k}{j}", add(scale(sr.M[i], VP[i]), matvec(U[i], sr.MS[i])), j))
        dv = dv_products(prog, W[i], j)
        gyro = [euler_moment(prog, sr.J[i], WP[i], dv, U[i], k) for k in range(3)]
        N.append(prog.vec("N{k}{j}", add(gyro, cross(sr.MS[i], VP[i])), j))
    return F, N


def euler_moment(prog: Program, J, wd, dv, u, a):
    """Component a of ^jJ_j ^jω̇_j + ^jω_j × (^jJ_j ^jω_j) ([9.89] without MS × V̇), with (a, b, c) cyclic:

        J_aa ω̇_a − J_ab U_ca + J_ac U_ba + J_bc (DV_bb − DV_cc) + (J_cc − J_bb) DV_bc,

    since U_ba = ω̇_c + ω_a ω_b and U_ca = ω_a ω_c − ω̇_b [9.90] and DV_kl = ω_k ω_l (``dv``, 3x3; ``u``
    = ^jU_j).  Five products at most, four when J_aa = 0 (YY_j is grouped away in the base parameters,
    Theorem 9.1), against the eight of Jω̇ + ω × (Jω); terms with equal factors merge (:func:`linear`).
    """
    b, c = (a + 1) % 3, (a + 2) % 3
    return linear(prog, [(J[a][a], wd[a]), (-J[a][b], u[c][a]), (J[a][c], u[b][a]), (J[b][c], dv[b][b] - dv[c][c]),
                         (J[c][c] - J[b][b], dv[b][c])])


def linear(prog: Program, pairs):
    """Σ c_k v_k with constant coefficients c_k, terms with equal (or opposite) v_k merged and each merged
    coefficient expanded and evaluated once (a constant variable, not counted per call)."""
    merged: dict = {}
    for c, v in pairs:
        k, v = _coefficient(v)
        c = c * k
        if c == 0 or v == 0:
            continue
        if -v in merged:
            c, v = -c, -v
        merged[v] = merged.get(v, 0) + c
    out = se.Integer(0)
    for v, c in merged.items():
        c = se.expand(c)
        if c != 0:
            out = out + prog.let("K", c) * v
    return out


def _coefficient(t):
    """(number, rest) with t = number * rest."""
    if isinstance(t, se.Mul) and isinstance(t.args[0], se.Number):
        return t.args[0], t / t.args[0]
    return se.Integer(1), t


def backward_recursion(prog: Program, sr: SymRobot, F, N, wrenches=True):
    """Joint wrenches ^jf_j, ^jm_j, [9.91]–[9.93], summed over the children of each frame (trees)."""
    nf = len(sr.sigma)
    fa = [ZERO3] * nf
    ma = [ZERO3] * nf
    FJ, NJ = [None] * nf, [None] * nf
    for i in range(nf - 1, -1, -1):
        j = i + 1
        fe = sr.wrenches[i] if wrenches and sr.wrenches[i] is not None else [0] * 6
        FJ[i] = prog.vec("FJ{k}{j}", add(F[i], fa[i], fe[:3]), j)  # [9.91]
        NJ[i] = prog.vec("NJ{k}{j}", add(N[i], ma[i], fe[3:]), j)  # [9.93]
        p = sr.antecedent[i] - 1
        if p >= 0:
            fdi = prog.vec("FDI{k}{j}", sr.rotate(prog, i, FJ[i], False, "FDI"), j)  # [9.92]
            fa[p] = add(fa[p], fdi)
            ma[p] = add(ma[p], sr.rotate(prog, i, NJ[i], False, "NJI"), cross(sr.P[i], fdi))
    return FJ, NJ


def joint_torques(prog: Program, sr: SymRobot, FJ, NJ, qd=None, qdd=None, friction=True, name="GAM"):
    """Γ_j = (σ_j ^jf_j + σ̄_j ^jm_j)ᵀ ^ja_j + Ia_j q̈_j + Γ_f [9.94], one forced variable per joint."""
    qdd = sr.qdd if qdd is None else qdd
    out = []
    for i, s in enumerate(sr.sigma):
        if s == 2:
            continue
        e = (FJ[i][2] if s == 1 else NJ[i][2]) + sr.Ia[i] * qdd[i]
        if friction:
            e = e + sr.friction[i]
        out.append(prog.force(f"{name}{i + 1}", e))
    return out


def inverse_dynamics(prog: Program, sr: SymRobot, qd=None, qdd=None, gravity=True, wrenches=True, friction=True,
                     name="GAM"):
    """The customized inverse dynamic model Γ(q, q̇, q̈) [9.84]–[9.94]; returns the output symbols."""
    W, WP, VP, U = forward_recursion(prog, sr, qd=qd, qdd=qdd, gravity=gravity)
    F, N = link_wrenches(prog, sr, W, WP, VP, U)
    FJ, NJ = backward_recursion(prog, sr, F, N, wrenches=wrenches)
    return joint_torques(prog, sr, FJ, NJ, qd=qd, qdd=qdd, friction=friction, name=name)


def zeros_like(symbols):
    return [None if s is None else se.Integer(0) for s in symbols]
