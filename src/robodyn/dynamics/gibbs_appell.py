"""Gibbs–Appell dynamics (Mata, Provenzano, Valero & Cuadrado 2002), batched, trees included.

One statement of the algorithms, on component scalars (:mod:`robodyn.spatial`), in the forms Mata et al. count:

* :func:`torque_components`: inverse dynamics, O(n), the regressive recursion of eqs (14)–(16), §4.1 steps 1–3;
  with q̈ = 0 the bias vector of §3;
* :func:`inertia_components`: the inertia matrix, O(n²), as the Hessian of the Gibbs function,
  D_jk = ∂²G / ∂q̈_j ∂q̈_k (eqs 19–22), §4.2 steps 1–7;
* :func:`forward_components`: forward dynamics, D q̈ = τ − C (eq 17), the square-root-free Cholesky factorisation
  L D Lᵀ and the two triangular solves (Table 3).

Every numeric path runs them (a batch as (B,) arrays over blocks of states), and the customized models of
robodyn.symbolic.formulations record them for the published operation counts.  The forms (Mata §4.1): planar
rotations (:func:`robodyn.kinematics.to_child`), Ω = ω̇̃ + ω̃² of eq (12) through the products ω_a ω_b (step 1 is
:func:`robodyn.kinematics.forward_frames`), the moment of eq (10) by :func:`robodyn.spatial.euler_moment`, and the
composite inertia turned by :func:`rotate_symmetric` (Kozłowski §4).  Quantities are about O_i, not the centre of
mass (no division by the mass); frames, trees, prismatic joints (eq 7e), rotor inertia and friction:
docs/formulations.md, section 1.
"""

from __future__ import annotations

import numpy as np

from robodyn.dynamics import executor
from robodyn.dynamics.lagrange import Fallback, cholesky_components, cholesky_solve
from robodyn.dynamics.trace import no_phase, opaque
from robodyn.kinematics import flat_columns, forward_frames, frame_rotations, run_blocks, state_blocks, to_child, to_parent
from robodyn.model.friction import friction_of
from robodyn.model.robot import Robot
from robodyn.spatial import (UPPER, ZERO, ScalarBackend, c_add, c_mul, c_sub, euler_moment, frame_wrench,
                             mat_conjugate, mat_mv, planar_symmetric, sym_rows, vcross, vdot, vscale, vsum)

_Z = (0.0, 0.0, 1.0)


# ---- Mata et al. §4.1: inverse dynamics -------------------------------------------------------------------------
def torque_components(robot: Robot, q, qd, qdd, g, wr=None, backend: ScalarBackend | None = None,
                      phase=None) -> list:
    """Rigid-body joint torques by Mata et al. §4.1, steps 1–3 (eqs (9)–(16)); q̈ = 0 gives their bias vector.

    Step 1: ^iω_i, ^iω̇_i, Ω_i (12) and the acceleration of the origin ^i s̈_i (gravity as the base acceleration,
    Luh et al.); step 2: f_i (9) and the moment t_i (10) with the first moments about O_i; step 3: φ_i (16) and
    χ_i (15) from the tip, τ_j = z_jᵀ χ_j (14) (prismatic joints: z_jᵀ (f_j + φ_j)).  Arguments and result as
    :func:`robodyn.dynamics.newton_euler.rnea_components` (the wrench rows are added to f_j and to the moment about
    O_j); ``phase`` (callable or None) is told the name of each step as it starts (a recording's count by phase).

    Step 3 sums eq (15) in Mata et al.'s order, χ_a + P × F + A χ_i, rather than through the shared wrench
    transform of :mod:`robodyn.kinematics` (which forms A χ_i + P × F first): the float32 stage study of
    :mod:`robodyn.analysis.accuracy` measures this formulation's rounding, and the other order makes the error of
    its bias stage four times larger.
    """
    phase = phase or no_phase
    nf = robot.nf
    parent = robot.derived.parent
    phase("step 1: velocities and accelerations")
    # Mata's step 1 is Khalil & Dombre's customized forward recursion: s̈_i = V̇_i, Ω_i = U_i; every frame is made
    # before step 2 starts, so that a recording counts each step apart
    frames = list(forward_frames(robot, q, qd, qdd, g, backend))
    phase("step 2: link forces and moments")
    f, chi = [None] * nf, [None] * nf
    for i, (st, (J6, MS, M)) in enumerate(zip(frames, robot.derived.links_six)):
        f[i] = vsum(vscale(M, st.Vd), mat_mv(st.U, MS))  # eq (9), m r̈ = M s̈ + Ω MS
        chi[i] = vsum(euler_moment(sym_rows(J6), st.wd, st.dv, st.U), vcross(MS, st.Vd))  # eq (10), about O_i
        if wr is not None:
            fe, me = frame_wrench(wr, i)
            f[i] = vsum(f[i], fe)
            chi[i] = vsum(chi[i], me)
    phase("step 3: backward recursion")
    phi = [ZERO] * nf
    for i in range(nf - 1, -1, -1):
        p = parent[i]
        if p >= 0:
            rot = frames[i].rot
            F = to_parent(rot, vsum(f[i], phi[i]))  # eq (16)
            phi[p] = vsum(phi[p], F)
            chi[p] = vsum(chi[p], vcross(rot[3], F), to_parent(rot, chi[i]))  # eq (15)
    return [c_add(f[i][2], phi[i][2]) if robot.sigma[i] == 1 else chi[i][2] for i in robot.joint_frames]  # eq (14)


# ---- Mata et al. §4.2: the inertia matrix as the Hessian of the Gibbs function -----------------------------------
def joint_trig(c, s):
    """Per joint, for :func:`rotate_symmetric`: (c, s, s², c s, sin 2θ, cos 2θ) of the joint angle."""
    ss = c_mul(s, s)
    cs = c_mul(c, s)
    return c, s, ss, cs, opaque(2.0 * cs), opaque(1.0 - 2.0 * ss)


def rotate_symmetric(rot, trig, S6):
    """^{a}A_j S ^jA_{a} of a symmetric S = (xx, xy, xz, yy, yz, zz): Rot(z, θ + q) by its invariants
    (``trig`` = :func:`joint_trig` of the joint), then Rot(x, α) the same way with constant coefficients (a
    general Rot(z, γ) Rot(x, α) is applied as a matrix)."""
    C = rot[0]
    c, s, ss, cs, S2, C2 = trig
    S = dict(zip(UPPER, S6))
    if not (type(c) is float and c == 1.0 and s == 0.0):  # a prismatic or fixed frame with θ = 0: identity
        S = planar_symmetric(S, 0, 1, 2, ss, cs, S2, C2, c, s)
    if C[0] == (1.0, 0.0, 0.0):  # C = Rot(x, α)
        ca, sa = C[1][1], C[2][1]
        S = planar_symmetric(S, 1, 2, 0, sa * sa, ca * sa, 2.0 * ca * sa, 1.0 - 2.0 * sa * sa, ca, sa)
        return tuple(S[k] for k in UPPER)
    out = mat_conjugate(C, [[S[(min(a, b), max(a, b))] for b in range(3)] for a in range(3)])
    return tuple(out[a][b] for a, b in UPPER)


def _sym_translate(S6, m, s, fm):
    """S + m (|s|² 1 − s sᵀ) + 2 (s·φ) 1 − (s φᵀ + φ sᵀ) = S − m s̃s̃ − s̃φ̃ − (s̃φ̃)ᵀ (``fm`` = φ; m = 0 skips the
    first term): a composite inertia moved along s (Mata §4.2 steps 1 and 5)."""
    out = list(S6)
    if m != 0.0:
        ss = vdot(s, s)
        out = [c_add(x, c_mul(m, c_sub(ss, c_mul(s[a], s[b])) if a == b else -c_mul(s[a], s[b])))
               for x, (a, b) in zip(out, UPPER)]
    if fm is not None:
        sf2 = c_mul(2.0, vdot(s, fm))
        out = [c_sub(c_add(x, sf2) if a == b else x, c_add(c_mul(s[a], fm[b]), c_mul(fm[a], s[b])))
               for x, (a, b) in zip(out, UPPER)]
    return tuple(out)


def inertia_components(robot: Robot, q, backend: ScalarBackend | None = None, phase=None) -> list:
    """D(q) (n rows of n scalars) by Mata et al. §4.2, steps 1–7 (eq (22)), on any tree; rotor inertia on the
    diagonal (none for the rigid models of the published counts).

    Step 1 (constants where the joints below are revolute): composite masses M_i = m_i + Σ_c M_c,
    ^iγ_i = MS_i + Σ_c M_c ^iP_c, E_i = J_i − Σ_c M_c P̃_c P̃_c; step 2: ^j s_{k,j} (origin of frame k to origin of
    frame j, in R_j) for every joint k above frame j; step 3: the axes u_k = ^jR_k z_k in R_j (∂^jω̇_j/∂q̈_k for a
    revolute k, ∂^jr̈/∂q̈_k for a prismatic k, eq 7e); step 4: ^iφ_i = γ_i + Σ_c ^iR_c φ_c (first moment of the
    subtree of i about O_i); step 5: ψ_i = E_i + Σ_c [^iR_c ψ_c ^cR_i − s̃_c φ̃ − (s̃_c φ̃)ᵀ], φ = ^iR_c φ_c (its
    inertia about O_i); steps 6–7, for k above j (k = j included):

    * k, j revolute:  D_jk = u_kᵀ [ψ_j − s̃_{k,j} φ̃_j] z  (step 7; step 6 when k = j: D_jj = ψ_j(3,3))
    * k prismatic, j revolute:  D_jk = u_k · (z × φ_j)
    * k revolute, j prismatic:  D_jk = z · (u_k × (M_j s_{k,j} + φ_j))
    * k, j prismatic:  D_jk = M_j u_k · z

    and D_kj = D_jk; D_jk = 0 when neither joint lies above the other (trees).  A prismatic joint's P_c varies
    with q, so for it step 1's terms are computed with the state.

    Steps 2–5 move points, axes and first moments (not twists or wrenches) between frames, with Mata's own
    rotations, so they do not use the shared twist and wrench transforms of :mod:`robodyn.kinematics`.
    """
    phase = phase or no_phase
    n, nf = robot.n, robot.nf
    parent, sigma = robot.derived.parent, robot.sigma
    rot = frame_rotations(robot, q, backend)
    links = robot.derived.links_six
    joint_of = {int(f): k for k, f in enumerate(robot.joint_frames)}
    children = [[c for c in range(nf) if parent[c] == i] for i in range(nf)]
    phase("step 1: constants")
    Mc = [0.0] * nf
    gamma, E = [None] * nf, [None] * nf
    for i in range(nf - 1, -1, -1):
        J6, MS, M = links[i]
        Mc[i] = M + sum((Mc[c] for c in children[i]), 0.0)
        gamma[i], E[i] = tuple(MS), tuple(J6)
        for c in children[i]:
            gamma[i] = vsum(gamma[i], vscale(Mc[c], rot[c][3]))
            E[i] = _sym_translate(E[i], Mc[c], rot[c][3], None)
    phase("step 2: position vectors")
    s_at: list[dict] = [{}] * nf  # s_at[i][k] = ^i s_{k,i} for every joint k at or above frame i
    for i in range(nf):
        p = parent[i]
        s_at[i] = {} if p < 0 else {k: to_child(rot[i], vsum(s, rot[i][3])) for k, s in s_at[p].items()}
        if i in joint_of:
            s_at[i][joint_of[i]] = ZERO
    phase("step 3: joint axes")
    u_at: list[dict] = [{}] * nf  # u_at[i][k] = u_k in R_i
    for i in range(nf):
        p = parent[i]
        u_at[i] = {} if p < 0 else {k: to_child(rot[i], u) for k, u in u_at[p].items()}
        if i in joint_of:
            u_at[i][joint_of[i]] = _Z
    phase("step 4: first moments")
    phi, phi_in = [None] * nf, [None] * nf  # phi_in[c] = ^{a(c)}R_c φ_c
    for i in range(nf - 1, -1, -1):
        phi[i] = gamma[i]
        for c in children[i]:
            phi_in[c] = to_parent(rot[c], phi[c])
            phi[i] = vsum(phi[i], phi_in[c])
    phase("step 5: composite inertias")
    psi = [None] * nf
    for i in range(nf - 1, -1, -1):
        psi[i] = E[i]
        for c in children[i]:
            Rpsi = rotate_symmetric(rot[c], joint_trig(rot[c][1], rot[c][2]), psi[c])
            psi[i] = _sym_translate(tuple(c_add(x, y) for x, y in zip(psi[i], Rpsi)), 0.0, rot[c][3], phi_in[c])
    phase("steps 6-7: inertia matrix")
    D = [[0.0] * n for _ in range(n)]
    for i, j in joint_of.items():
        ph, rev_j = phi[i], sigma[i] == 0
        col = (psi[i][2], psi[i][4], psi[i][5])  # ψ_j z
        for k, uk in u_at[i].items():
            s, rev_k = s_at[i][k], sigma[robot.joint_frames[k]] == 0
            if k == j:
                Djk = psi[i][5] if rev_j else Mc[i]
            elif rev_j and rev_k:
                # [ψ − s̃φ̃] z = ψ z − (s_z φ_x, s_z φ_y, −(s_x φ_x + s_y φ_y))
                v = (c_sub(col[0], c_mul(s[2], ph[0])), c_sub(col[1], c_mul(s[2], ph[1])),
                     c_add(col[2], c_add(c_mul(s[0], ph[0]), c_mul(s[1], ph[1]))))
                Djk = vdot(uk, v)
            elif rev_j:
                Djk = vdot(uk, vcross(_Z, ph))
            elif rev_k:
                Djk = vcross(uk, vsum(vscale(Mc[i], s), ph))[2]
            else:
                Djk = c_mul(Mc[i], uk[2])
            D[j][k] = D[k][j] = Djk
    for k, Ia in enumerate(robot.derived.Ia.tolist()):  # tolist: floats, or the constants of a customized model
        D[k][k] = c_add(D[k][k], Ia)
    return D


# ---- Mata et al. §3, Table 3: forward dynamics -------------------------------------------------------------------
def forward_components(robot: Robot, q, qd, tau, g, wr=None, backend: ScalarBackend | None = None, phase=None,
                       check: bool = False) -> list:
    """q̈ = D⁻¹ (τ − C − G) (Mata et al. eq. (17), Table 3): D by :func:`inertia_components` (rotor inertia
    included), the bias vector by :func:`torque_components` with q̈ = 0, then the square-root-free Cholesky
    factorisation L D Lᵀ and the two triangular solves (:func:`robodyn.dynamics.lagrange.cholesky_components`;
    ``check``: its pivot test).  ``tau`` is the torque less friction."""
    phase = phase or no_phase
    D = inertia_components(robot, q, backend, phase)
    phase("bias vector")
    bias = torque_components(robot, q, qd, [0.0] * robot.n, g, wr, backend)
    phase("Cholesky factorisation and solve")
    return cholesky_components(D, [c_sub(t, c) for t, c in zip(tau, bias)], check)


# ---- the public functions: batches over blocks of states ----------------------------------------------------------
def inverse_dynamics(robot: Robot, q, qd, qdd, wrenches=None, gravity=None) -> np.ndarray:
    """Inverse dynamics τ = ∂G/∂q̈ (eq 5) + Ia q̈ + Γ_f(q̇) by the Gibbs–Appell equations, O(n) (Mata et al. eqs
    14–16, §4.1); serial chains and trees.  Arguments, units and result as :func:`robodyn.inverse_dynamics`
    (``method="gibbs_appell"``).
    """
    return executor.execute(_INVERSE, robot, q, qd, qdd, wrenches, gravity)


def _inverse_numpy(robot: Robot, q, qd, qdd, g, fe) -> np.ndarray:
    tau = run_blocks(robot, torque_components, (q, qd, qdd), g, fe)
    return tau + robot.derived.Ia.astype(q.dtype) * qdd + friction_of(robot, qd)


def inertia_matrix(robot: Robot, q) -> np.ndarray:
    """Inertia matrix as the Hessian of the Gibbs function, O(n²) (Mata et al. eqs 19–22, §4.2 steps 1–7):
    :func:`inertia_components`, rotor inertias on the diagonal.  Arguments, units and result as
    :func:`robodyn.inertia_matrix` (``method="gibbs_appell"``).
    """
    return executor.execute(_INERTIA, robot, q)


def _inertia_numpy(robot: Robot, q) -> np.ndarray:
    """:func:`inertia_components` over blocks of states, on checked q."""
    dtype, batch, n = q.dtype, q.shape[:-1], q.shape[-1]
    (cols,) = flat_columns(q)
    size = cols.shape[1]
    D = np.empty((size, n, n), dtype)
    for sl, (q_b,) in state_blocks(cols):
        for j, row in enumerate(inertia_components(robot, q_b)):
            for k, x in enumerate(row):
                D[sl, j, k] = x
    return D.reshape(batch + (n, n))


def forward_dynamics(robot: Robot, q, qd, tau, wrenches=None, gravity=None) -> np.ndarray:
    """Forward dynamics q̈ = D⁻¹(τ − C(q, q̇)) with the Gibbs–Appell D and bias vector (Mata et al. §3, eq 17).

    C (Coriolis, centrifugal, gravity, friction and wrench torques) is :func:`inverse_dynamics` at q̈ = 0;
    D is :func:`inertia_matrix`; the system is solved by the square-root-free Cholesky factorisation L D Lᵀ
    (:func:`forward_components`).  Arguments, units and result as :func:`robodyn.forward_dynamics`
    (``method="gibbs_appell"``).
    """
    return executor.execute(_FORWARD, robot, q, qd, tau, wrenches, gravity)


def _forward_numpy(robot: Robot, q, qd, tau, g, fe) -> np.ndarray:
    rigid = tau - friction_of(robot, qd)
    check = q.dtype != object  # counting scalars (robodyn.analysis.opcount) have no pivot test

    def checked(robot, q, qd, tau, g, wr):
        return forward_components(robot, q, qd, tau, g, wr, check=check)

    try:
        return run_blocks(robot, checked, (q, qd, rigid), g, fe)
    except Fallback:  # a pivot near zero: the batched Cholesky solves or names the singular model
        C = run_blocks(robot, torque_components, (q, qd, np.zeros_like(qd)), g, fe)
        return cholesky_solve(_inertia_numpy(robot, q), rigid - C, robot.name)


_INVERSE = executor.Algorithm("inverse_dynamics", _inverse_numpy)
_INERTIA = executor.Algorithm("inertia_matrix", _inertia_numpy, ("q",), matrix=True)
_FORWARD = executor.Algorithm("forward_dynamics", _forward_numpy, ("q", "qd", "tau"))
