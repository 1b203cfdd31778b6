"""Customized models of the other formulations, as the authors count them: Mata et al.'s Gibbs–Appell and
Kozłowski's spatial operators.

The Gibbs–Appell recursions are robodyn's own (:mod:`robodyn.dynamics.gibbs_appell`: written in Mata et al.'s
counted forms, the code of ``method="gibbs_appell"``); Kozłowski's are below.  Each function takes the joint
inputs as lists of scalars and works on any scalar type (floats, or the recording scalars of
:mod:`robodyn.dynamics.trace`, which turn it into a customized straight-line program).  Robot constants are Python
floats, so every product or sum of constants (Mata's off-line step 1, Kozłowski's constant M_k) is done once,
before the model runs.  Rotations are applied as the planar rotations Rot(x, α) and Rot(z, θ) in turn (Kozłowski
§4: "the direction cosine matrix can be split up into two planar rotation matrices").

``phase`` (a callable or None) is told the name of each recursion as it starts, so that a recording can
attribute each operation to a row of Kozłowski's Tables 1–2 (or to a step of Mata et al.'s algorithms).
"""

from __future__ import annotations

from types import MappingProxyType
from robodyn.dynamics.fast import cholesky_components
from robodyn.dynamics.gibbs_appell import forward_components, inertia_components, torque_components
from robodyn.dynamics.trace import opaque, record
from robodyn.errors import InputError
from robodyn.kinematics import frame_rotations, to_child, to_parent
from robodyn.spatial import planar_symmetric, vcross, vmat, vscale, vsum

ZERO = (0.0, 0.0, 0.0)


def _noop(name: str) -> None:
    return None


_KEYS = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))


# ---- Kozłowski (3.24)–(3.33): spatial-operator inverse dynamics ------------------------------------------------
#: The rows of Kozłowski's Table 1, in the order :func:`kozlowski_torques` announces them to ``phase``.
KOZLOWSKI_TABLE_1_ROWS = ("b_k, n_k (3.7), (3.14)", "costate propagation (3.10)", "costate update (3.11)",
                     "state propagation (3.8), (3.12)", "state update (3.9)")


def kozlowski_torques(robot, q, qd, qdd, g, backend=None, phase=None) -> list:
    """Rigid-body joint torques by Kozłowski's (3.24)–(3.33) in robodyn's frames (links numbered from the base;
    Kozłowski numbers them from the tip, the recursions are the same), each recursion announced to ``phase`` with
    the name of its row of Kozłowski's Table 1:

    * ``b_k, n_k``: the angular velocities (3.25) (the linear ones are not needed) and the bias terms ā_k
      (3.31)–(3.32), b̄_k (3.33);
    * costate propagation (3.10): λ⁺ = φᵀ λ, the acceleration carried from O_{a(j)} to O_j, v̇ + ω̇ × l;
    * costate update (3.11): the orientation A_k⁻¹ across the joint, + H_kᵀ q̈_k + ā_k (3.27);
    * state propagation (3.8), (3.12): x_k = φ x + M_k λ_k + b̄_k (3.29);
    * state update (3.9): the spatial force turned into the antecedent's frame (A_k).

    Gravity enters as the base acceleration λ = g (Kozłowski's λ_n⁺ = g). τ_k = H_k x_k (3.30).
    """
    phase = phase or _noop
    rot = frame_rotations(robot, q, backend)
    nf = robot.nf
    parent = robot.derived.parent
    bias_row, prop_row, upd_row, sprop_row, supd_row = KOZLOWSKI_TABLE_1_ROWS
    w, wd, vd = [None] * nf, [None] * nf, [None] * nf
    k = 0
    for i in range(nf):
        p = parent[i]
        P = rot[i][3]
        phase(bias_row)
        if p >= 0:
            w_in = to_child(rot[i], w[p])
            centripetal = vcross(w[p], vcross(w[p], P))  # second row of ā (3.31), in R_{a(j)}
        else:
            w_in, centripetal = ZERO, ZERO
        w_j, a_ang, a_lin = w_in, ZERO, ZERO
        if robot.sigma[i] != 2:
            a = qd[k]
            k += 1
            if robot.sigma[i] == 0:
                w_j = (w_in[0], w_in[1], w_in[2] + a)  # (3.25)
                a_ang = (w_in[1] * a, -(w_in[0] * a), 0.0)  # ω × h q̇ (3.31)
            else:
                a_lin = (2.0 * (w_in[1] * a), -2.0 * (w_in[0] * a), 0.0)  # 2 ω × h q̇ (3.32)
        w[i] = w_j
        phase(prop_row)
        if p >= 0:
            lin = vsum(vd[p], vcross(wd[p], P))  # φᵀ λ (3.10)
            ang = wd[p]
        else:
            lin, ang = (-g[0], -g[1], -g[2]), ZERO
        phase(upd_row)
        ang = to_child(rot[i], ang)
        lin = to_child(rot[i], vsum(lin, centripetal))
        ang = vsum(ang, a_ang)
        lin = vsum(lin, a_lin)
        if robot.sigma[i] == 0:
            ang = (ang[0], ang[1], ang[2] + qdd[k - 1])
        elif robot.sigma[i] == 1:
            lin = (lin[0], lin[1], lin[2] + qdd[k - 1])
        wd[i], vd[i] = ang, lin
    phase(bias_row)
    force, moment = [None] * nf, [None] * nf
    for i, (J6, MS, M) in enumerate(robot.derived.links_six):
        xx, xy, xz, yy, yz, zz = J6
        Jw = (xx * w[i][0] + xy * w[i][1] + xz * w[i][2], xy * w[i][0] + yy * w[i][1] + yz * w[i][2],
              xz * w[i][0] + yz * w[i][1] + zz * w[i][2])
        force[i] = vcross(w[i], vcross(w[i], MS))  # b̄ (3.33)
        moment[i] = vcross(w[i], Jw)
    phase(sprop_row)
    for i, (J6, MS, M) in enumerate(robot.derived.links_six):
        xx, xy, xz, yy, yz, zz = J6
        a = wd[i]
        Ja = (xx * a[0] + xy * a[1] + xz * a[2], xy * a[0] + yy * a[1] + yz * a[2], xz * a[0] + yz * a[1] + zz * a[2])
        force[i] = vsum(force[i], vscale(M, vd[i]), vcross(a, MS))  # M_k λ_k + b̄_k (3.29)
        moment[i] = vsum(moment[i], Ja, vcross(MS, vd[i]))
    for i in range(nf - 1, -1, -1):
        p = parent[i]
        if p >= 0:
            phase(supd_row)
            F = to_parent(rot[i], force[i])  # (3.9) with the orientation A_k
            N = to_parent(rot[i], moment[i])
            phase(sprop_row)
            force[p] = vsum(force[p], F)  # φ x (3.29)
            moment[p] = vsum(moment[p], N, vcross(rot[i][3], F))
    return [force[i][2] if robot.sigma[i] == 1 else moment[i][2] for i in robot.joint_frames]  # (3.30)


# ---- the customized programs of each formulation ---------------------------------------------------------------
#: name → (what it computes, its joint inputs); see :func:`recorded_model`.
MODELS = MappingProxyType({
    "newton_euler": ("inverse dynamics, Newton–Euler (Khalil & Dombre [9.84]–[9.94], robodyn's recursion)",
                     ("q", "qd", "qdd")),
    "gibbs_appell_inverse": ("inverse dynamics, Gibbs–Appell (Mata et al. §4.1)", ("q", "qd", "qdd")),
    "gibbs_appell_bias": ("bias vector C + G, Gibbs–Appell with q̈ = 0 (Mata et al. §3)", ("q", "qd")),
    "gibbs_appell_inertia": ("inertia matrix, Gibbs–Appell Hessian (Mata et al. §4.2)", ("q",)),
    "gibbs_appell_forward": ("forward dynamics, Gibbs–Appell D, bias and Cholesky (Mata et al. Table 3)",
                             ("q", "qd", "tau")),
    "crba_inertia": ("inertia matrix, composite rigid bodies (Khalil & Dombre Appendix 8, robodyn's recursion)",
                     ("q",)),
    "crba_forward": ("forward dynamics, composite rigid bodies + Newton–Euler bias + Cholesky (§9.7.1)",
                     ("q", "qd", "tau")),
    "aba": ("forward dynamics, articulated bodies (Khalil & Dombre §9.7.2, robodyn's recursion)", ("q", "qd", "tau")),
    "kozlowski_inverse": ("inverse dynamics, spatial operators (Kozłowski (3.24)–(3.33))", ("q", "qd", "qdd")),
    "kozlowski_forward": ("forward dynamics, Kalman filter + Bryson–Frazier smoother (Kozłowski (3.46)–(3.58), "
                          "robodyn's recursion)", ("q", "qd", "tau")),
})


def _build(robot, name: str):
    """build(backend, phase, **inputs) of model ``name`` (rigid body: no rotor inertia, no friction)."""
    from robodyn.dynamics import recursive
    from robodyn.dynamics.newton_euler import rnea_components

    g = tuple(float(x) for x in robot.gravity)
    n = robot.n
    if name == "newton_euler":
        return lambda backend, phase, q, qd, qdd: rnea_components(robot, q, qd, qdd, g, backend=backend)
    if name == "gibbs_appell_inverse":
        return lambda backend, phase, q, qd, qdd: torque_components(robot, q, qd, qdd, g, None, backend, phase)
    if name == "gibbs_appell_bias":
        return lambda backend, phase, q, qd: torque_components(robot, q, qd, [0.0] * n, g, None, backend, phase)
    if name == "gibbs_appell_inertia":
        return lambda backend, phase, q: [x for row in inertia_components(robot, q, backend, phase) for x in row]
    if name == "gibbs_appell_forward":
        return lambda backend, phase, q, qd, tau: forward_components(robot, q, qd, tau, g, None, backend, phase)
    if name == "crba_inertia":
        return lambda backend, phase, q: [x for row in _crba(robot, q, backend) for x in row]
    if name == "crba_forward":
        def crba_forward(backend, phase, q, qd, tau):
            phase("inertia matrix")
            A = _crba(robot, q, backend)
            phase("bias vector")
            bias = rnea_components(robot, q, qd, [0.0] * n, g, backend=backend)
            phase("Cholesky factorisation and solve")
            return cholesky_components(A, [t - c for t, c in zip(tau, bias)], check=False)
        return crba_forward
    if name == "aba":
        def aba(backend, phase, q, qd, tau):
            rot, gam, beta = recursive.first_forward(robot, q, qd, None, backend)
            H, Ja, _, beta_star = recursive.backward(robot, tau, rot, gam, beta)
            return recursive.second_forward(robot, tau, g, rot, gam, H, Ja, beta_star)
        return aba
    if name == "kozlowski_inverse":
        return lambda backend, phase, q, qd, qdd: kozlowski_torques(robot, q, qd, qdd, g, backend, phase)
    if name == "kozlowski_forward":
        return lambda backend, phase, q, qd, tau: kozlowski_forward(robot, q, qd, tau, g, backend, phase)
    raise InputError(f"model = {name!r}; choose one of {', '.join(MODELS)}")


def _crba(robot, q, backend):
    from robodyn.dynamics.composite import inertia_entries

    A = [[0.0] * robot.n for _ in range(robot.n)]
    for (i, j), value in inertia_entries(robot, q, backend):
        A[i][j] = A[j][i] = value
    return A


def recorded_model(robot, name: str):
    """The customized straight-line program of model ``name`` (a key of :data:`MODELS`) for ``robot``.

    The robot's rotor inertias and friction are ignored (the published counts have neither): the program
    computes the rigid-body model. Returns a :class:`robodyn.dynamics.trace.Program`; its ``count()`` gives
    the operations, ``count_by_phase()`` the operations per recursion, ``evaluate(q=..., ...)`` the values.
    """
    from robodyn.model.robot import check_robot

    check_robot(robot)
    if name not in MODELS:
        raise InputError(f"model = {name!r}; choose one of {', '.join(MODELS)}")
    rigid = robot.replace(Ia=None, Fc=None, Fv=None, Foff=None, Fst=None)
    return record(_build(rigid, name), {k: robot.n for k in MODELS[name][1]})


# ---- Kozłowski (3.46)–(3.58): Kalman filter and Bryson–Frazier smoother -----------------------------------------
#: The rows of Kozłowski's Table 2, as :func:`kozlowski_forward` announces them to ``phase``.
KOZLOWSKI_TABLE_2_ROWS = ("b_k, n_k (3.7), (3.14)", "state propagation (3.47)", "inertia propagation (3.48)",
                     "Kalman gain (3.50)", "innovations (3.51)", "residuals (3.53)", "state update (3.52)",
                     "inertia update (3.54)", "costate propagation (3.56)", "joint acceleration (3.57)",
                     "costate update (3.58)")


def _sym_get(P, r, c):
    return P.get((r, c) if r <= c else (c, r), 0.0)


def _planar_general(B, x, y, z, ss, cs, c, s):
    """R B Rᵀ of a general 3x3 B (dict {(row, col): value}) for the planar rotation (c, s) in the plane (x, y):
    in the plane the skew part and the trace are invariant, so with d = B_xx − B_yy, e = B_xy + B_yx:
    m = s² d + cs e, t = cs d − s² e, B'_xx = B_xx − m, B'_yy = B_yy + m, B'_xy = B_xy + t, B'_yx = B_yx + t;
    (B_xz, B_yz) and (B_zx, B_zy) rotate as vectors; B_zz is unchanged (12 products, against 24)."""
    g = B.get
    d = g((x, x), 0.0) - g((y, y), 0.0)
    e = g((x, y), 0.0) + g((y, x), 0.0)
    m = ss * d + cs * e
    t = cs * d - ss * e
    out = dict(B)
    out[(x, x)] = g((x, x), 0.0) - m
    out[(y, y)] = g((y, y), 0.0) + m
    out[(x, y)] = g((x, y), 0.0) + t
    out[(y, x)] = g((y, x), 0.0) + t
    a, b = g((x, z), 0.0), g((y, z), 0.0)
    out[(x, z)], out[(y, z)] = c * a - s * b, s * a + c * b
    a, b = g((z, x), 0.0), g((z, y), 0.0)
    out[(z, x)], out[(z, y)] = c * a - s * b, s * a + c * b
    return out


def _rotate_inertia(rot, P):
    """diag(R, R) P diag(R, R)ᵀ of a symmetric 6x6 P (dict {(r, c): value}, r ≤ c; 0–2 angular, 3–5 linear),
    R = ^{a}A_j = Rot(z, γ) Rot(x, α) Rot(z, θ + q): each block one planar rotation at a time (the symmetric
    blocks by :func:`robodyn.spatial.planar_symmetric`, the coupling block by :func:`_planar_general`)."""
    C, c, s, _ = rot
    blocks = []
    for off in (0, 3):
        blocks.append({(a, b): _sym_get(P, a + off, b + off) for a, b in _KEYS})
    coupling = {(a, b): _sym_get(P, a, b + 3) for a in range(3) for b in range(3)}
    ss, cs = s * s, c * s
    S2, C2 = opaque(2.0 * cs), opaque(1.0 - 2.0 * ss)
    planes = [((0, 1, 2), (ss, cs, S2, C2, c, s))]
    general = None
    if C[0] == (1.0, 0.0, 0.0):  # C = Rot(x, α): one more planar rotation, constant coefficients
        ca, sa = C[1][1], C[2][1]
        planes.append(((1, 2, 0), (sa * sa, ca * sa, 2.0 * ca * sa, 1.0 - 2.0 * sa * sa, ca, sa)))
    else:  # a tree's Rot(z, γ) Rot(x, α): applied as a constant matrix
        general = C
    for (x, y, z), (pss, pcs, pS2, pC2, pc, ps) in planes:
        blocks = [planar_symmetric(b, x, y, z, pss, pcs, pS2, pC2, pc, ps) for b in blocks]
        coupling = _planar_general(coupling, x, y, z, pss, pcs, pc, ps)
    if general is not None:
        def conj(get):
            M = [[get(a, b) for b in range(3)] for a in range(3)]
            cols = [vmat(general, (M[0][k], M[1][k], M[2][k])) for k in range(3)]
            CM = [[cols[k][r] for k in range(3)] for r in range(3)]
            return [vmat(general, CM[r]) for r in range(3)]

        blocks = [(lambda R: {(a, b): R[a][b] for a, b in _KEYS})(conj(lambda a, b, B=blk: B[(min(a, b), max(a, b))]))
                  for blk in blocks]
        R = conj(lambda a, b: coupling[(a, b)])
        coupling = {(a, b): R[a][b] for a in range(3) for b in range(3)}
    out = {}
    for off, blk in zip((0, 3), blocks):
        for (a, b), v in blk.items():
            out[(a + off, b + off)] = v
    for (a, b), v in coupling.items():
        out[(a, b + 3)] = v
    return out


def _translate_inertia(P, l):
    """φ P φᵀ with φ = [[1, l̂], [0, 1]] (Kozłowski's transition matrix, l = ^{a}P_j constant):
    P'_al = P_al + l̂ P_ll, P'_aa = P_aa + l̂ P_la + P'_al l̂ᵀ, P'_ll = P_ll."""
    def hat_times(rowfun):  # (l̂ M)_rc = l_{r+1} M_{r+2, c} − l_{r+2} M_{r+1, c}
        return {(r, cc): l[(r + 1) % 3] * rowfun((r + 2) % 3, cc) - l[(r + 2) % 3] * rowfun((r + 1) % 3, cc)
                for r in range(3) for cc in range(3)}

    Pll = lambda a, b: _sym_get(P, a + 3, b + 3)  # noqa: E731
    Pla = lambda a, b: _sym_get(P, b, a + 3)  # noqa: E731  (P_la = P_alᵀ)
    Y = hat_times(Pll)
    Y = {(r, cc): _sym_get(P, r, cc + 3) + v for (r, cc), v in Y.items()}  # P'_al
    lP = hat_times(Pla)
    out = dict(P)
    for r in range(3):
        for cc in range(3):
            out[(r, cc + 3)] = Y[(r, cc)]
    for a, b in _KEYS:
        # (Y l̂ᵀ)_ab = −(Y l̂)_ab = Y_{a, b+2} l_{b+1} − Y_{a, b+1} l_{b+2}
        Yl = Y[(a, (b + 2) % 3)] * l[(b + 1) % 3] - Y[(a, (b + 1) % 3)] * l[(b + 2) % 3]
        out[(a, b)] = _sym_get(P, a, b) + lP[(a, b)] + Yl
    return out


def kozlowski_forward(robot, q, qd, tau, g, backend=None, phase=None) -> list:
    """q̈ by Kozłowski's Kalman filter (3.46)–(3.54) and Bryson–Frazier smoother (3.55)–(3.58), in robodyn's frames
    (links from the base; the filter runs tip to base), each step announced to ``phase`` with its row of Kozłowski's
    Table 2.  ``tau`` is the rigid-body torque (no rotor inertia, no friction).

    Spatial quantities of frame j are kept in R_j about O_j, [angular; linear] as Kozłowski writes them.  The bias
    terms are those of (3.31)–(3.33) (ā_k, b̄_k: no linear velocity needed; Kozłowski proves them equivalent to
    n_k, b_k), ā_k split into its part in R_j (ω × h q̇) and the centripetal ω × (ω × l) turned into R_j.  The
    inertia update P⁺ = P⁻ − G Hᵀ P⁻ has the joint axis' row and column exactly zero (H P⁺ = 0), the state update
    z⁺ has τ on the axis, and the orientation A_k and the transition φ are applied to P⁺ block by block, one planar
    rotation at a time.
    """
    phase = phase or _noop
    rot = frame_rotations(robot, q, backend)
    nf = robot.nf
    parent = robot.derived.parent
    T2 = dict(zip(("bias", "sprop", "iprop", "gain", "innov", "resid", "supd", "iupd", "cprop", "qdd", "cupd"),
                  KOZLOWSKI_TABLE_2_ROWS))
    phase(T2["bias"])
    w, abar, bbar, ax = [None] * nf, [None] * nf, [None] * nf, [None] * nf
    joint = {int(f): k for k, f in enumerate(robot.joint_frames)}
    for i, (J6, MS, M) in enumerate(robot.derived.links_six):
        p = parent[i]
        a = qd[joint[i]] if i in joint else 0.0
        if p >= 0:
            w_in = to_child(rot[i], w[p])
            lin = to_child(rot[i], vcross(w[p], vcross(w[p], rot[i][3])))
        else:
            w_in, lin = ZERO, ZERO
        if robot.sigma[i] == 0:
            w[i] = (w_in[0], w_in[1], w_in[2] + a)
            ang = (w_in[1] * a, -(w_in[0] * a), 0.0)
            ax[i] = 2
        else:
            w[i] = w_in
            ang = ZERO
            if robot.sigma[i] == 1:
                lin = (lin[0] + 2.0 * (w_in[1] * a), lin[1] - 2.0 * (w_in[0] * a), lin[2])
                ax[i] = 5
        abar[i] = ang + lin
        xx, xy, xz, yy, yz, zz = J6
        wj = w[i]
        Jw = (xx * wj[0] + xy * wj[1] + xz * wj[2], xy * wj[0] + yy * wj[1] + yz * wj[2],
              xz * wj[0] + yz * wj[1] + zz * wj[2])
        bbar[i] = vcross(wj, Jw) + vcross(wj, vcross(wj, MS))
    # M_k = [[I, m p̂], [−m p̂, m 1]] about O_k, [angular; linear]: constants
    z = [list(b) for b in bbar]
    P = []
    for J6, MS, M in robot.derived.links_six:
        Pk = {(a + 0, b + 0): v for (a, b), v in zip(_KEYS, J6)}
        msx = ((0.0, -MS[2], MS[1]), (MS[2], 0.0, -MS[0]), (-MS[1], MS[0], 0.0))
        for a in range(3):
            for b in range(3):
                Pk[(a, b + 3)] = msx[a][b]
        for a, b in _KEYS:
            Pk[(a + 3, b + 3)] = M if a == b else 0.0
        P.append(Pk)
    G, e_plus = [None] * nf, [None] * nf
    for i in range(nf - 1, -1, -1):
        k = ax[i]
        Pi = P[i]
        if k is None:  # a fixed frame: no joint, P⁺ = P⁻, z⁺ = z⁻ + P⁻ ā
            Pp, zp = Pi, z[i]
        else:
            PH = [_sym_get(Pi, r, k) for r in range(6)]
            D = PH[k]  # (3.49)
            phase(T2["gain"])
            G[i] = [1.0 if r == k else PH[r] / D for r in range(6)]  # (3.50)
            phase(T2["innov"])
            e = tau[joint[i]] - z[i][k]  # (3.51)
            phase(T2["resid"])
            e_plus[i] = e / D  # (3.53)
            phase(T2["iupd"])
            Pp = {}
            for (r, c) in Pi:
                Pp[(r, c)] = 0.0 if (r == k or c == k) else Pi[(r, c)] - G[i][r] * PH[c]  # (3.54), H P⁺ = 0
            phase(T2["supd"])
            zp = [tau[joint[i]] if r == k else z[i][r] + G[i][r] * e for r in range(6)]
        phase(T2["supd"])
        Pn = [sum((_sym_get(Pp, r, c) * abar[i][c] for c in range(6)), 0.0) for r in range(6)]
        zp = [zp[r] + Pn[r] for r in range(6)]  # (3.52), before the orientation A_k
        p = parent[i]
        if p >= 0:
            T, F = to_parent(rot[i], zp[:3]), to_parent(rot[i], zp[3:])  # (3.52): A_k
            phase(T2["sprop"])
            T = vsum(T, vcross(rot[i][3], F))  # (3.47): φ z⁺
            z[p] = [a + b for a, b in zip(z[p], T + F)]
            phase(T2["iupd"])
            Pr = _rotate_inertia(rot[i], Pp)  # (3.54): A_k P⁺ A_k⁻¹
            phase(T2["iprop"])
            Pt = _translate_inertia(Pr, rot[i][3])  # (3.48): φ P⁺ φᵀ + M
            P[p] = {key: P[p][key] + _sym_get(Pt, *key) for key in P[p]}
    qdd = [None] * nf
    lam = [None] * nf
    for i in range(nf):
        p = parent[i]
        phase(T2["cprop"])
        if p >= 0:
            wd_p, vd_p = lam[p][:3], lam[p][3:]
            vd_p = vsum(vd_p, vcross(wd_p, rot[i][3]))  # (3.56): φᵀ λ
        else:
            wd_p, vd_p = ZERO, (-g[0], -g[1], -g[2])  # λ_{n+1} = g (3.55)
        phase(T2["cupd"])
        lam_i = list(to_child(rot[i], wd_p) + to_child(rot[i], vd_p))  # (3.58): A⁻¹ λ⁺
        lam_i = [a + b for a, b in zip(lam_i, abar[i])]  # + n
        k = ax[i]
        if k is not None:
            phase(T2["qdd"])
            qdd[i] = e_plus[i] - sum((G[i][r] * lam_i[r] for r in range(6)), 0.0)  # (3.57), G_k = 1
            phase(T2["cupd"])
            lam_i[k] = lam_i[k] + qdd[i]  # (3.58): + Hᵀ q̈
        lam[i] = lam_i
    return [qdd[i] for i in robot.joint_frames]
