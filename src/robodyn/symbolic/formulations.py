"""Customized recursions of Mata et al. (Gibbs–Appell) and Kozłowski (spatial operators), as the authors count them.

Each function takes the joint inputs as lists of scalars and works on any scalar type (floats, or the recording
scalars of :mod:`robodyn.dynamics.trace`, which turn it into a customized straight-line program).  Robot
constants are Python floats, so every product or sum of constants (Mata's off-line step 1, Kozłowski's constant
M_k) is done once, before the model runs.  The forms are the ones the authors count:

* rotations applied as the planar rotations Rot(x, α) and Rot(z, θ) in turn (Mata §4.1: "trigonometric
  identities ... make the calculation of the components of the rotation matrix unnecessary"; Kozłowski §4:
  "the direction cosine matrix can be split up into two planar rotation matrices");
* the angular-acceleration tensor Ω = ω̇̃ + ω̃² of Mata eq. (12) through the six products ω_a ω_b;
* the moment of Mata eq. (10), vee(ΩJ − (ΩJ)ᵀ), in which the −|ω|² 1 part of ω̃² cancels: five products a
  component (Khalil & Dombre use the same form for [9.89]).

``phase`` (a callable or None) is told the name of each recursion as it starts, so that a recording can
attribute each operation to a row of Kozłowski's Tables 1–2.
"""

from __future__ import annotations

from types import MappingProxyType
from robodyn.dynamics.fast import cholesky_components
from robodyn.dynamics.spatial_operator import kozlowski_forward, kozlowski_torques
from robodyn.dynamics.trace import opaque, record
from robodyn.errors import InputError
from robodyn.kinematics import frame_rotations, to_child, to_parent
from robodyn.spatial import planar_symmetric, vcross, vmat, vscale, vsum

ZERO = (0.0, 0.0, 0.0)


def _noop(name: str) -> None:
    return None


def _products(w):
    """DV_ab = ω_a ω_b (a ≤ b), as a symmetric 3x3 of scalars."""
    dv = [[None] * 3 for _ in range(3)]
    for a in range(3):
        for b in range(a, 3):
            dv[a][b] = dv[b][a] = w[a] * w[b]
    return dv


def omega_tensor(w, wd):
    """Ω = ω̇̃ + ω̃ω̃ (Mata et al. eq. (12), Khalil & Dombre's U [9.90]) as rows, and the products DV."""
    dv = _products(w)
    U = ((-dv[1][1] - dv[2][2], dv[0][1] - wd[2], dv[0][2] + wd[1]),
         (dv[0][1] + wd[2], -dv[0][0] - dv[2][2], dv[1][2] - wd[0]),
         (dv[0][2] - wd[1], dv[1][2] + wd[0], -dv[0][0] - dv[1][1]))
    return U, dv


def _mv(U, v):
    return tuple(U[r][0] * v[0] + U[r][1] * v[1] + U[r][2] * v[2] for r in range(3))


def euler_moment(J6, wd, dv, U):
    """vee(ΩJ − (ΩJ)ᵀ) of Mata et al. eq. (10) = J ω̇ + ω × (J ω), J about the frame origin, component a with
    (a, b, c) cyclic: J_aa ω̇_a − J_ab U_ca + J_ac U_ba + J_bc (DV_bb − DV_cc) + (J_cc − J_bb) DV_bc (the −|ω|² 1
    part of ω̃² cancels in ΩJ − (ΩJ)ᵀ)."""
    xx, xy, xz, yy, yz, zz = J6
    J = ((xx, xy, xz), (xy, yy, yz), (xz, yz, zz))
    out = []
    for a in range(3):
        b, c = (a + 1) % 3, (a + 2) % 3
        out.append(J[a][a] * wd[a] - J[a][b] * U[c][a] + J[a][c] * U[b][a] + J[b][c] * (dv[b][b] - dv[c][c])
                   + (J[c][c] - J[b][b]) * dv[b][c])
    return tuple(out)


# ---- Mata et al. §4.1: inverse dynamics -------------------------------------------------------------------------
def gibbs_appell_torques(robot, q, qd, qdd, g, backend=None, phase=None) -> list:
    """Rigid-body joint torques by Mata et al. §4.1, steps 1–3 (eqs (9)–(16)); q̈ = 0 gives their bias vector.

    Step 1: ^iω_i, ^iω̇_i, Ω_i (12) and the acceleration of the origin ^i s̈_i (gravity as the base acceleration,
    Luh et al.); step 2: f_i (9) and the moment t_i (10) with the first moments about O_i; step 3: φ_i (16) and
    χ_i (15) from the tip, τ_j = z_jᵀ χ_j (14) (prismatic joints: z_jᵀ (f_j + φ_j)).
    Rotor inertia and friction are not included (the authors' models have neither).
    """
    phase = phase or _noop
    rot = frame_rotations(robot, q, backend)
    nf = robot.nf
    parent = robot.derived.parent
    w, wd, U, dv, sdd = [None] * nf, [None] * nf, [None] * nf, [None] * nf, [None] * nf
    k = 0
    phase("step 1: velocities and accelerations")
    for i in range(nf):
        p = parent[i]
        if p >= 0:
            wi = to_child(rot[i], w[p])
            wdi = to_child(rot[i], wd[p])
            si = to_child(rot[i], vsum(sdd[p], _mv(U[p], rot[i][3])))
        else:
            wi, wdi, si = ZERO, ZERO, to_child(rot[i], (-g[0], -g[1], -g[2]))
        w_j = wi
        if robot.sigma[i] != 2:
            a, b = qd[k], qdd[k]
            k += 1
            if robot.sigma[i] == 0:
                w_j = (wi[0], wi[1], wi[2] + a)
                wdi = (wdi[0] + wi[1] * a, wdi[1] - wi[0] * a, wdi[2] + b)
            else:
                si = (si[0] + 2.0 * (wi[1] * a), si[1] - 2.0 * (wi[0] * a), si[2] + b)
        w[i], wd[i], sdd[i] = w_j, wdi, si
        U[i], dv[i] = omega_tensor(w_j, wdi)
    phase("step 2: link forces and moments")
    f, chi = [None] * nf, [None] * nf
    for i, (J6, MS, M) in enumerate(robot.derived.links_six):
        f[i] = vsum(vscale(M, sdd[i]), _mv(U[i], MS))  # eq (9), m r̈ = M s̈ + Ω MS
        chi[i] = vsum(euler_moment(J6, wd[i], dv[i], U[i]), vcross(MS, sdd[i]))  # eq (10), about O_i
    phase("step 3: backward recursion")
    phi = [ZERO] * nf
    for i in range(nf - 1, -1, -1):
        p = parent[i]
        if p >= 0:
            F = to_parent(rot[i], vsum(f[i], phi[i]))  # eq (16)
            phi[p] = vsum(phi[p], F)
            chi[p] = vsum(chi[p], vcross(rot[i][3], F), to_parent(rot[i], chi[i]))  # eq (15)
    return [(f[i][2] + phi[i][2]) if robot.sigma[i] == 1 else chi[i][2] for i in robot.joint_frames]  # eq (14)


# ---- Mata et al. §4.2: the inertia matrix as the Hessian of the Gibbs function -----------------------------------
def _serial_revolute(robot, what: str) -> None:
    parent = robot.derived.parent
    if any(int(s) != 0 for s in robot.sigma) or any(int(parent[i]) != i - 1 for i in range(robot.nf)):
        raise InputError(f"robot {robot.name!r}: {what} is Mata et al.'s algorithm for serial chains of revolute "
                         "joints only; use rd.inertia_matrix for other robots")


def gibbs_appell_inertia(robot, q, backend=None, phase=None) -> list:
    """D(q) (n rows of n scalars) by Mata et al. §4.2, steps 1–7 (eq (22)), rotor inertia not included.

    Step 1 (constants): composite masses M_i, ^iγ_i = MS_i + M_{i+1} ^iP_{i+1}, E_i = J_i − M_{i+1} P̃ P̃;
    step 2: ^j s_{k,j} (origin of frame k to origin of frame j, in R_j); step 3: the axes u_k = ∂^jω̇_j/∂q̈_k
    in R_j; step 4: ^iφ_i = γ_i + ^iR_{i+1} φ_{i+1} (first moment of links i..n about O_i); step 5: ψ_i (their
    inertia about O_i); steps 6–7: D_jj = ψ_j(3,3), D_jk = u_kᵀ [ψ_j − s̃_{k,j} φ̃_j] z_j.
    """
    _serial_revolute(robot, "the Gibbs–Appell inertia matrix")
    phase = phase or _noop
    n = robot.n
    rot = frame_rotations(robot, q, backend)
    links = robot.derived.links_six
    phase("step 1: constants")
    Mc = [0.0] * (n + 1)
    for i in range(n - 1, -1, -1):
        Mc[i] = links[i][2] + Mc[i + 1]
    P = [tuple(float(x) for x in rot[i][3]) for i in range(n)]  # ^{i−1}P_i: constant for revolute joints
    gamma, E = [], []
    for i in range(n):
        J6, MS, _ = links[i]
        if i + 1 < n:
            s, m = P[i + 1], Mc[i + 1]
            gamma.append(tuple(MS[a] + m * s[a] for a in range(3)))
            ss = s[0] * s[0] + s[1] * s[1] + s[2] * s[2]  # −s̃s̃ = |s|² 1 − s sᵀ
            E.append(tuple(J6[t] + m * ((ss if a == b else 0.0) - s[a] * s[b])
                           for t, (a, b) in enumerate(((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)))))
        else:
            gamma.append(tuple(MS))
            E.append(tuple(J6))
    phase("step 2: position vectors")
    s_kj = [dict() for _ in range(n)]  # s_kj[j][k] = ^j s_{k,j}, k < j
    for j in range(1, n):
        for k in range(j):
            prev = s_kj[j - 1][k] if k < j - 1 else ZERO
            s_kj[j][k] = to_child(rot[j], vsum(prev, P[j]))
    phase("step 3: joint axes")
    u = [dict() for _ in range(n)]  # u[j][k] = ∂^jω̇_j/∂q̈_k in R_j
    for j in range(n):
        u[j][j] = (0.0, 0.0, 1.0)
        for k in range(j):
            u[j][k] = to_child(rot[j], u[j - 1][k])
    phase("step 4: first moments")
    phi = [None] * n
    phi_in = [None] * n  # ^iR_{i+1} φ_{i+1}
    for i in range(n - 1, -1, -1):
        phi_in[i] = to_parent(rot[i + 1], phi[i + 1]) if i + 1 < n else ZERO
        phi[i] = vsum(gamma[i], phi_in[i])
    phase("step 5: composite inertias")
    psi = [None] * n
    for i in range(n - 1, -1, -1):
        if i + 1 < n:
            Rpsi = rotate_symmetric(rot[i + 1], joint_trig(rot[i + 1][1], rot[i + 1][2]), psi[i + 1])
            s, fm = P[i + 1], phi_in[i]
            sf = s[0] * fm[0] + s[1] * fm[1] + s[2] * fm[2]
            # −(s̃φ̃ + φ̃s̃) = 2(s·φ) 1 − (s φᵀ + φ sᵀ)
            psi[i] = tuple(E[i][t] + Rpsi[t] + ((2.0 * sf) if a == b else 0.0) - (s[a] * fm[b] + fm[a] * s[b])
                           for t, (a, b) in enumerate(((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))))
        else:
            psi[i] = E[i]
    phase("steps 6-7: inertia matrix")
    D = [[0.0] * n for _ in range(n)]
    for j in range(n):
        D[j][j] = psi[j][5]
        col = (psi[j][2], psi[j][4], psi[j][5])  # ψ_j z
        for k in range(j):
            s, ph, uk = s_kj[j][k], phi[j], u[j][k]
            # [ψ − s̃φ̃] z = ψ z − (s_z φ_x, s_z φ_y, −(s_x φ_x + s_y φ_y))
            v = (col[0] - s[2] * ph[0], col[1] - s[2] * ph[1], col[2] + (s[0] * ph[0] + s[1] * ph[1]))
            D[j][k] = D[k][j] = uk[0] * v[0] + uk[1] * v[1] + uk[2] * v[2]
    return D


def joint_trig(c, s):
    """Per joint, for :func:`rotate_symmetric`: (c, s, s², c s, sin 2θ, cos 2θ) of the joint angle."""
    ss = s * s
    cs = c * s
    return c, s, ss, cs, opaque(2.0 * cs), opaque(1.0 - 2.0 * ss)


_KEYS = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))


def rotate_symmetric(rot, trig, S6):
    """^{a}A_j S ^jA_{a} of a symmetric S = (xx, xy, xz, yy, yz, zz): Rot(z, θ + q) by its invariants
    (``trig`` = :func:`joint_trig` of the joint), then Rot(x, α) the same way with constant coefficients (a
    general Rot(z, γ) Rot(x, α) is applied as a matrix)."""
    C = rot[0]
    c, s, ss, cs, S2, C2 = trig
    S = dict(zip(_KEYS, S6))
    S = planar_symmetric(S, 0, 1, 2, ss, cs, S2, C2, c, s)
    if C[0] == (1.0, 0.0, 0.0):  # C = Rot(x, α)
        ca, sa = C[1][1], C[2][1]
        S = planar_symmetric(S, 1, 2, 0, sa * sa, ca * sa, 2.0 * ca * sa, 1.0 - 2.0 * sa * sa, ca, sa)
        return tuple(S[k] for k in _KEYS)
    M = [[S[(min(a, b), max(a, b))] for b in range(3)] for a in range(3)]
    cols = [vmat(C, (M[0][k], M[1][k], M[2][k])) for k in range(3)]
    CM = [[cols[k][r] for k in range(3)] for r in range(3)]
    out = [vmat(C, CM[r]) for r in range(3)]
    return tuple(out[a][b] for a, b in _KEYS)


def ldlt_solve(A, b) -> list:
    """x with A x = b, A symmetric positive definite (n rows of n scalars): square-root-free A = L D Lᵀ, then
    L y = b, D z = y, Lᵀ x = z (Mata et al. Table 3's "Cholesky dec." and "Linear system solving")."""
    return cholesky_components(A, b, check=False)


def gibbs_appell_forward(robot, q, qd, tau, g, backend=None, phase=None) -> list:
    """q̈ = D⁻¹ (τ − C − G) (Mata et al. eq. (17), Table 3): D by §4.2, the bias vector by §4.1 with q̈ = 0, then
    the square-root-free Cholesky factorisation and the two triangular solves."""
    phase = phase or _noop
    D = gibbs_appell_inertia(robot, q, backend, phase)
    phase("bias vector")
    bias = gibbs_appell_torques(robot, q, qd, [0.0] * robot.n, g, backend)
    phase("Cholesky factorisation and solve")
    return ldlt_solve(D, [t - c for t, c in zip(tau, bias)])


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
        return lambda backend, phase, q, qd, qdd: gibbs_appell_torques(robot, q, qd, qdd, g, backend, phase)
    if name == "gibbs_appell_bias":
        return lambda backend, phase, q, qd: gibbs_appell_torques(robot, q, qd, [0.0] * n, g, backend, phase)
    if name == "gibbs_appell_inertia":
        return lambda backend, phase, q: [x for row in gibbs_appell_inertia(robot, q, backend, phase) for x in row]
    if name == "gibbs_appell_forward":
        return lambda backend, phase, q, qd, tau: gibbs_appell_forward(robot, q, qd, tau, g, backend, phase)
    if name == "crba_inertia":
        return lambda backend, phase, q: [x for row in _crba(robot, q, backend) for x in row]
    if name == "crba_forward":
        def crba_forward(backend, phase, q, qd, tau):
            phase("inertia matrix")
            A = _crba(robot, q, backend)
            phase("bias vector")
            bias = rnea_components(robot, q, qd, [0.0] * n, g, backend=backend)
            phase("Cholesky factorisation and solve")
            return ldlt_solve(A, [t - c for t, c in zip(tau, bias)])
        return crba_forward
    if name == "aba":
        def aba(backend, phase, q, qd, tau):
            rot, gam, beta = recursive.first_forward(robot, q, qd, None, backend)
            H, Ja, _, beta_star = recursive.backward(robot, tau, rot, gam, beta)
            return recursive.second_forward(robot, tau, g, rot, gam, H, Ja, beta_star)
        return aba
    if name == "kozlowski_inverse":
        return lambda backend, phase, q, qd, qdd: kozlowski_torques(robot, q, qd, qdd, g, backend=backend, phase=phase)
    if name == "kozlowski_forward":
        return lambda backend, phase, q, qd, tau: kozlowski_forward(robot, q, qd, tau, g, backend=backend, phase=phase)
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
