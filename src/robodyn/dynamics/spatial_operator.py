"""Rodriguez–Kozłowski spatial-operator dynamics (Kozłowski, "New computational algorithms for a discrete Kalman
filter in robot dynamics"), batched, revolute/prismatic/fixed frames, trees included.

* Inverse dynamics: the recursive Newton–Euler equations in spatial notation, eqs (3.24)–(3.33)
  (:func:`kozlowski_torques`).
* Forward dynamics: the two-point boundary-value problem (3.8)–(3.14) solved by the sweep x_k = z_k + P_k λ_k
  (3.45): a Kalman filter from the tip to the base (3.46)–(3.54), then a Bryson–Frazier smoother from the base to
  the tip (3.55)–(3.58) (:func:`kozlowski_forward`).

Each recursion is written once, on component scalars (:mod:`robodyn.spatial`), in the forms Kozłowski counts
(Tables 1–2), each step announced to ``phase`` with its row of his tables.  Frames are robodyn's, numbered from the
base (paper link k is frame j = nf + 1 − k of a serial chain); spatial vectors of frame j are in R_j about O_j,
angular part first: V = [ω; v], λ = [ω̇; v̇], x = [T; F]; gravity is the base acceleration λ = [0; −g].
Numbering, trees, rotor inertia, friction and wrenches: docs/formulations.md, section 2 ("Extensions").
"""

from __future__ import annotations

import numpy as np

from robodyn.arrays import pivot_too_small, singular_model_error
from robodyn.dynamics import executor
from robodyn.dynamics.lagrange import Fallback
from robodyn.dynamics.trace import no_phase, opaque
from robodyn.kinematics import frame_rotations, run_blocks, to_child, to_parent
from robodyn.model.friction import friction_of
from robodyn.model.robot import Robot
from robodyn.spatial import UPPER, ZERO, frame_wrench, mat_conjugate, planar_symmetric, vcross, vscale, vsum


# ---- Kozłowski (3.24)–(3.33): spatial-operator inverse dynamics ------------------------------------------------
#: The rows of Kozłowski's Table 1, in the order :func:`kozlowski_torques` announces them to ``phase``.
KOZLOWSKI_TABLE_1_ROWS = ("b_k, n_k (3.7), (3.14)", "costate propagation (3.10)", "costate update (3.11)",
                          "state propagation (3.8), (3.12)", "state update (3.9)")


def kozlowski_torques(robot: Robot, q, qd, qdd, g, wr=None, backend=None, phase=None) -> list:
    """Rigid-body joint torques by Kozłowski's (3.24)–(3.33) in robodyn's frames (links numbered from the base;
    Kozłowski numbers them from the tip, the recursions are the same), each recursion announced to ``phase`` with
    the name of its row of Kozłowski's Table 1:

    ``b_k, n_k`` (ω (3.25), ā_k (3.31)–(3.32), b̄_k (3.33)), costate propagation λ⁺ = φᵀ λ (3.10), costate update
    A_k⁻¹ λ⁺ + H_kᵀ q̈_k + ā_k (3.11), (3.27), state propagation x_k = φ x + M_k λ_k + b̄_k (3.8), (3.29), state
    update A_k x (3.9); gravity is the base acceleration, τ_k = H_k x_k (3.30).

    The velocity and force transforms are written here in Kozłowski's split, the orientation A_k apart from the
    translation φ (rather than :func:`robodyn.kinematics.twist_to_child` / :func:`~robodyn.kinematics.wrench_to_parent`,
    which do both at once), because the rows of Table 1 count them apart and the recording of ``phase`` reproduces
    those rows; the numbers are the same.

    Arguments and result as :func:`robodyn.dynamics.newton_euler.rnea_components` (the wrench rows add to b̄_k);
    ``phase`` (callable or None) is told the name of each recursion as it starts.
    """
    phase = phase or no_phase
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
        if wr is not None:
            fe, me = frame_wrench(wr, i)
            force[i] = vsum(force[i], fe)
            moment[i] = vsum(moment[i], me)
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


# ---- Kozłowski (3.46)–(3.58): Kalman filter and Bryson–Frazier smoother ------------------------------------------
#: The rows of Kozłowski's Table 2, as :func:`kozlowski_forward` announces them to ``phase``.
KOZLOWSKI_TABLE_2_ROWS = ("b_k, n_k (3.7), (3.14)", "state propagation (3.47)", "inertia propagation (3.48)",
                          "Kalman gain (3.50)", "innovations (3.51)", "residuals (3.53)", "state update (3.52)",
                          "inertia update (3.54)", "costate propagation (3.56)", "joint acceleration (3.57)",
                          "costate update (3.58)")


def _singular(robot: Robot, i: int, D) -> None:
    """The failed pivot D_k (3.49) of frame i: the singular model's error on numbers, Fallback else."""
    if np.asarray(D).dtype.kind == "f":
        raise singular_model_error(robot.name, f"joint {robot.frame_names[i]}: articulated inertia D = "
                                   f"{float(np.min(D)):.3g} (3.49)")
    raise Fallback


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
        blocks.append({(a, b): _sym_get(P, a + off, b + off) for a, b in UPPER})
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
            return mat_conjugate(general, [[get(a, b) for b in range(3)] for a in range(3)])

        blocks = [(lambda R: {(a, b): R[a][b] for a, b in UPPER})(conj(lambda a, b, B=blk: B[(min(a, b), max(a, b))]))
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
    for a, b in UPPER:
        # (Y l̂ᵀ)_ab = −(Y l̂)_ab = Y_{a, b+2} l_{b+1} − Y_{a, b+1} l_{b+2}
        Yl = Y[(a, (b + 2) % 3)] * l[(b + 1) % 3] - Y[(a, (b + 1) % 3)] * l[(b + 2) % 3]
        out[(a, b)] = _sym_get(P, a, b) + lP[(a, b)] + Yl
    return out


def kozlowski_forward(robot: Robot, q, qd, tau, g, wr=None, backend=None, phase=None) -> list:
    """q̈ by Kozłowski's Kalman filter (3.46)–(3.54) and Bryson–Frazier smoother (3.55)–(3.58), in robodyn's frames
    (links from the base; the filter runs tip to base), each step announced to ``phase`` with its row of Kozłowski's
    Table 2.  ``tau`` is τ − Γ_f(q̇); the robot's rotor inertia Ia_k adds to D_k (3.49).

    The biases are ā_k, b̄_k of (3.31)–(3.33) (no linear velocity needed).  Without a rotor inertia P⁺ has the joint
    axis' row and column exactly zero (H P⁺ = 0) and z⁺ has τ on the axis; A_k and φ are applied to P⁺ block by
    block, one planar rotation at a time.

    A pivot D_k that fails the relative test of :func:`robodyn.arrays.pivot_too_small` raises the singular model's
    :class:`robodyn.errors.ModelError` naming the joint on floats and arrays, and
    :class:`robodyn.dynamics.lagrange.Fallback` on other scalars (the caller then names the joint).

    Parameters
    ----------
    q, qd, tau, g, wr, backend, phase : as in :func:`kozlowski_torques`.

    Returns
    -------
    list of n scalars: the joint accelerations.
    """
    phase = phase or no_phase
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
        if wr is None:
            bbar[i] = vcross(wj, Jw) + vcross(wj, vcross(wj, MS))
        else:
            fe, me = frame_wrench(wr, i)
            bbar[i] = vsum(vcross(wj, Jw), me) + vsum(vcross(wj, vcross(wj, MS)), fe)
    # M_k = [[I, m p̂], [−m p̂, m 1]] about O_k, [angular; linear]: constants
    z = [list(b) for b in bbar]
    P = []
    for J6, MS, M in robot.derived.links_six:
        Pk = {(a + 0, b + 0): v for (a, b), v in zip(UPPER, J6)}
        msx = ((0.0, -MS[2], MS[1]), (MS[2], 0.0, -MS[0]), (-MS[1], MS[0], 0.0))
        for a in range(3):
            for b in range(3):
                Pk[(a, b + 3)] = msx[a][b]
        for a, b in UPPER:
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
            Ia = robot.Ia.item(i)  # item: a float, or the constant of a customized model
            D = PH[k] + Ia if Ia else PH[k]  # (3.49)
            if pivot_too_small(D, lambda: abs(Pi[(k - 2, k - 2)]) + abs(Pi[(k - 1, k - 1)]) + abs(PH[k]) + Ia,
                               robot.frame_names[i]):
                _singular(robot, i, D)
            phase(T2["gain"])
            G[i] = [1.0 if r == k and not Ia else PH[r] / D for r in range(6)]  # (3.50)
            phase(T2["innov"])
            e = tau[joint[i]] - z[i][k]  # (3.51)
            phase(T2["resid"])
            e_plus[i] = e / D  # (3.53)
            phase(T2["iupd"])
            Pp = {}
            for (r, c) in Pi:
                exact = not Ia and (r == k or c == k)  # (3.54), H P⁺ = 0 without a rotor inertia
                Pp[(r, c)] = 0.0 if exact else Pi[(r, c)] - G[i][r] * PH[c]
            phase(T2["supd"])
            zp = [tau[joint[i]] if r == k and not Ia else z[i][r] + G[i][r] * e for r in range(6)]
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


def inverse_dynamics(robot: Robot, q, qd, qdd, wrenches=None, gravity=None) -> np.ndarray:
    """Inverse dynamics by the spatial-operator Newton–Euler equations (3.24)–(3.33) (:func:`kozlowski_torques`;
    the equations in robodyn's frames: docs/formulations.md, "Inverse dynamics — eqs (3.24)–(3.33)").

    Arguments, units and result as :func:`robodyn.inverse_dynamics` (``method="spatial_operator"``).
    """
    return executor.execute(_INVERSE, robot, q, qd, qdd, wrenches, gravity)


def forward_dynamics(robot: Robot, q, qd, tau, wrenches=None, gravity=None) -> np.ndarray:
    """Forward dynamics by Kalman filtering and Bryson–Frazier smoothing, (3.45)–(3.58) (:func:`kozlowski_forward`;
    the filter and smoother in robodyn's frames: docs/formulations.md, "Forward dynamics — Kalman filter").

    Arguments, units, result and errors as :func:`robodyn.forward_dynamics` (``method="spatial_operator"``): a
    joint with no articulated inertia about its axis (D_j ≈ 0) is a singular model (ModelError).
    """
    return executor.execute(_FORWARD, robot, q, qd, tau, wrenches, gravity)


def _inverse_numpy(robot: Robot, q, qd, qdd, g, fe) -> np.ndarray:
    tau = run_blocks(robot, kozlowski_torques, (q, qd, qdd), g, fe)
    return tau + robot.derived.Ia.astype(q.dtype) * qdd + friction_of(robot, qd)  # (3.30)


def _forward_numpy(robot: Robot, q, qd, tau, g, fe) -> np.ndarray:
    return run_blocks(robot, kozlowski_forward, (q, qd, tau - friction_of(robot, qd)), g, fe)  # (3.51): τ − Γ_f


_INVERSE = executor.Algorithm("inverse_dynamics", _inverse_numpy)
_FORWARD = executor.Algorithm("forward_dynamics", _forward_numpy, ("q", "qd", "tau"))
