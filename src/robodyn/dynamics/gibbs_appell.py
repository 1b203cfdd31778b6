"""Gibbs–Appell dynamics (Mata, Provenzano, Valero & Cuadrado 2002), batched, trees included.

* Inverse dynamics, O(n): the regressive recursion of eqs (14)–(16), algorithm §4.1 steps 1–3.
* Inertia matrix, O(n²): the Hessian of the Gibbs function, D_jk = ∂²G / ∂q̈_j ∂q̈_k (eqs 19–22), algorithm §4.2
  steps 1–7.
* Forward dynamics: D q̈ = τ − C, with C from the inverse dynamics at q̈ = 0 (§3, after Walker & Orin) and a
  Cholesky factorisation (§4.2, Table 3).
* One 1-D float64 state: the same steps on component scalars (:func:`torque_components`,
  :func:`inertia_components`), traced once per robot into straight-line kernels (robodyn.dynamics.fast); the
  forward kernel solves D q̈ = τ − C by the square-root-free Cholesky factorisation L D Lᵀ.

Conversions from the paper (derivations in docs/formulations.md):

* Frames.  Mata's frame i sits on joint i and is fixed to body i, ^{i-1}R_i rotating body-i coordinates into body
  i−1: with Khalil–Kleinfinger frames that is ^{a(j)}A_j and ^{i-1}s_{i-1,i} = ^{a(j)}P_j, for any antecedent a(j).
  Serial sums "for i = j..n" become sums over the subtree of frame j, so trees need no other change.
* Quantities about O_i instead of G_i.  Mata writes the force ^if_i = m_i ^ir̈_i on the centre of mass and the
  moment ^it_i about it (eqs 9–10) and adds ^ir̃_{i,i} ^if_i in eq (15).  We use the identity
  ^ir̃_{i,i} ^if_i + ^it_i = ^iMS_i × ^is̈_i + (Ω_i E_i − (Ω_i E_i)ᵀ)^∨ with E_i the Euler tensor of the inertia
  ^iH_i about O_i (Mata's own ^iH_i of §4.2 step 1), and ^if_i = m_i ^is̈_i + Ω_i ^iMS_i.  This is algebraically
  the same and needs no division by the mass (massless links are allowed).
* Prismatic joints.  Eq (7e): ∂^ir̈_i/∂q̈_k = ^iR_k ^kz_k, ∂^iω̇_i/∂q̈_k = 0 (the extracted text writes the axis
  as ^iz_i; it is the axis of joint k seen from body i).  Hence τ_k = ^kz_kᵀ(^kf_k + ^kφ_k) for a prismatic joint,
  and the Hessian entries of step 7 get the three mixed forms derived in ``inertia_matrix``.
* Rotor inertia, friction, fixed frames, external wrenches: the rotor adds ½ Ia_k q̈_k² to G (Khalil & Dombre
  [9.29]); friction and the wrenches are generalised forces added to τ; a fixed frame (σ = 2) is a body with no
  joint variable (no row of D, its mass counts in every composite quantity above it).
"""

from __future__ import annotations

import numpy as np

from robodyn.dynamics import executor, fast
from robodyn.dynamics.lagrange import cholesky_solve
from robodyn.model.friction import friction_components, friction_of
from robodyn.dynamics.composite import composite_components, composite_links
from robodyn.kinematics import forward_components, forward_recursion, local_transforms
from robodyn.model.inertia import skew
from robodyn.model.robot import Robot
from robodyn.spatial import (ScalarBackend, c_mul, cross, mat_mv, mtv, mv, sym_rows, vadd, vcross, vdot, vmat,
                             vmat_t, vrz, vrz_t, vscale, vsub)


def _vee(S: np.ndarray) -> np.ndarray:
    """Axial vector of a skew-symmetric tensor (..., 3, 3) → (..., 3)."""
    return np.stack([S[..., 2, 1], S[..., 0, 2], S[..., 1, 0]], -1)


def _euler_tensors(robot: Robot, dtype) -> np.ndarray:
    """Euler tensors about O_i, E_i = ½ trace(H_i) 1 − H_i (eq 11 written with ^iH_i = ^iJ_i), (nf, 3, 3)."""
    H = robot.J
    return (0.5 * np.trace(H, axis1=-2, axis2=-1)[:, None, None] * np.eye(3) - H).astype(dtype)


def _kinematics(robot: Robot, q, qd, qdd, gravity):
    """§4.1 step 1: ω_i, ω̇_i, Ω_i = ω̇̃_i + ω̃_i² (eq 12) and s̈_i, the acceleration of O_i minus g, in R_i.

    s̈_i = ^iR_{i-1}[s̈_{i-1} + Ω_{i-1} s_{i-1,i}] (+ 2 ω_i × z_i q̇_i + z_i q̈_i for a prismatic joint, the
    relative acceleration that (7e) differentiates), s̈_0 = −g (Luh et al.): the forward recursion of Khalil &
    Dombre [9.84]–[9.90] (V̇_j = s̈_j), run by :func:`~robodyn.kinematics.forward_recursion`.
    """
    AP, w, wd, sdd = forward_recursion(robot, q, qd, qdd, gravity)
    Om = []
    for w_i, wd_i in zip(w, wd):
        W = skew(w_i)
        Om.append(skew(wd_i) + W @ W)  # eq (12)
    return AP, Om, sdd


def _torques(robot: Robot, q, qd, qdd, gravity, wrenches) -> np.ndarray:
    """Rigid-body torques plus rotor inertia by eqs (14)–(16), arrays already checked."""
    dtype = q.dtype
    AP, Om, sdd = _kinematics(robot, q, qd, qdd, gravity)
    E = _euler_tensors(robot, dtype)
    MS, M = robot.MS.astype(dtype), robot.M.astype(dtype)
    # §4.1 step 2, referred to O_i: f_i = m_i r̈_i and the moment of link i's inertia forces about O_i.
    f, chi = [], []
    for i in range(robot.nf):
        OE = Om[i] @ E[i]
        f_i = M[i] * sdd[i] + mv(Om[i], MS[i])  # eq (9), gravity already in s̈_0
        chi_i = cross(MS[i], sdd[i]) + _vee(OE - np.swapaxes(OE, -1, -2))  # r̃_{i,i} f_i + t_i, eq (10)
        if wrenches is not None:
            f_i = f_i + wrenches[..., i, :3]
            chi_i = chi_i + wrenches[..., i, 3:]
        f.append(f_i)
        chi.append(chi_i)
    # §4.1 step 3: φ_i = Σ_children ^iR_c (f_c + φ_c) (16); χ_i = ... + s̃_{i,c} ^iR_c(f_c + φ_c) + ^iR_c χ_c (15).
    phi = [np.zeros_like(x) for x in f]
    for i in range(robot.nf - 1, -1, -1):
        p = robot.derived.parent[i]
        if p >= 0:
            A, P = AP[i]
            F = mv(A, f[i] + phi[i])
            phi[p] = phi[p] + F
            chi[p] = chi[p] + cross(P, F) + mv(A, chi[i])
    tau = np.empty(q.shape, dtype)
    for k, i in enumerate(robot.joint_frames):
        # eq (14): τ_j = (∂ω̇_j/∂q̈_j)ᵀ χ_j = z_jᵀ χ_j; prismatic, from (7e): z_jᵀ (f_j + φ_j).
        tau[..., k] = (f[i] + phi[i])[..., 2] if robot.sigma[i] == 1 else chi[i][..., 2]
    return tau + robot.derived.Ia.astype(dtype) * qdd


def inverse_dynamics(robot: Robot, q, qd, qdd, wrenches=None, gravity=None) -> np.ndarray:
    """Inverse dynamics by the Gibbs–Appell equations, O(n) (Mata et al. eqs 14–16, §4.1).

    Parameters
    ----------
    robot : Robot
        Revolute, prismatic and fixed frames; serial or tree.
    q, qd, qdd : array_like (..., n)
        Joint positions (rad | m), velocities, accelerations; leading axes are batch axes.
    wrenches : array_like (..., nf, 6), optional
        [f_ej; m_ej] exerted BY link j ON the environment, in R_j, moment about O_j (N, N m).
    gravity : array_like (3,) or (..., 3), optional
        Overrides ``robot.gravity`` (base frame, m/s²).

    Returns
    -------
    ndarray (..., n)
        τ = ∂G/∂q̈ (eq 5) + Ia q̈ + Γ_f(q̇): torques (N m) / forces (N); float32 in, float32 out.
    """
    return executor.execute(_INVERSE, robot, q, qd, qdd, wrenches, gravity)


def _inverse_numpy(robot: Robot, q, qd, qdd, g, fe) -> np.ndarray:
    return _torques(robot, q, qd, qdd, g, fe) + friction_of(robot, qd)


def _mass_moments(robot: Robot, q, dtype):
    """§4.2 steps 1, 4, 5: composite mass M_i, first moment φ_i and inertia ψ_i of the subtree of frame i, about O_i.

    M_i = m_i + Σ_c M_c;  φ_i = m_i r_{i,i} + Σ_c (M_c s_{i,c} + ^iR_c φ_c)   (Mata: γ_i + ^iφ_{i+1});
    ψ_i = H_i + Σ_c (^iR_c ψ_c ^cR_i − M_c s̃_{i,c} s̃_{i,c} − s̃_{i,c} ^iφ̃_c − (s̃_{i,c} ^iφ̃_c)ᵀ)
    (Mata: E_i − s̃ φ̃ − (s̃ φ̃)ᵀ + R ψ Rᵀ with E_i = H_i − M_{i+1} s̃ s̃ and H_i the inertia about O_i).
    These are Khalil & Dombre's composite links M⁺, MS⁺, J⁺ ([9.12]): :func:`robodyn.dynamics.composite.composite_links`.
    """
    _, psi, phi, Mc = composite_links(robot, q, dtype)
    return Mc, phi, psi


def inertia_matrix(robot: Robot, q) -> np.ndarray:
    """Inertia matrix as the Hessian of the Gibbs function, O(n²) (Mata et al. eqs 19–22, §4.2 steps 1–7).

    For a joint j and a joint k between the base and j (k = j included), with u_k = ∂^jω̇_j/∂q̈_k = ^jR_k z_k
    (step 3; for a prismatic k the same vector is ∂^jr̈_i/∂q̈_k, eq 7e) and s_{k,j} from O_k to O_j in R_j
    (step 2):

    * k, j revolute:  D_jk = u_kᵀ [ψ_j − s̃_{k,j} φ̃_j] z_j                  (step 7; step 6 when k = j)
    * k prismatic, j revolute:  D_jk = u_k · (z_j × φ_j)
    * k revolute, j prismatic:  D_jk = z_j · (u_k × (M_j s_{k,j} + φ_j))
    * k, j prismatic:  D_jk = M_j u_k · z_j

    and D_kj = D_jk; D_jk = 0 when neither joint lies between the base and the other (trees).  Rotor inertias
    are added on the diagonal.

    Parameters
    ----------
    robot : Robot
    q : array_like (..., n)

    Returns
    -------
    ndarray (..., n, n)  (kg m², kg m, kg); float32 in, float32 out.
    """
    return executor.execute(_INERTIA, robot, q)


def _inertia_numpy(robot: Robot, q) -> np.ndarray:
    """Steps 1–7 of :func:`inertia_matrix` on checked q."""
    dtype, batch = q.dtype, q.shape[:-1]
    n = robot.n
    AP = local_transforms(robot, q, dtype)
    Mc, phi, psi = _mass_moments(robot, q, dtype)
    z = np.zeros(3, dtype)
    z[2] = 1
    zb = np.broadcast_to(z, batch + (3,))
    joint_of = {int(f): k for k, f in enumerate(robot.joint_frames)}
    D = np.zeros(batch + (n, n), dtype)
    # Steps 2–3 for a tree: carry, for every joint k above frame i, (u_k, s_{k,i}) expressed in R_i.
    above: list[dict[int, tuple[np.ndarray, np.ndarray]]] = []
    for i in range(robot.nf):
        p = robot.derived.parent[i]
        A, P = AP[i]
        carried = {} if p < 0 else {k: (mtv(A, u), mtv(A, s + P)) for k, (u, s) in above[p].items()}
        if i in joint_of:
            carried[joint_of[i]] = (zb, np.zeros(batch + (3,), dtype))
        above.append(carried)
        if i not in joint_of:
            continue
        j = joint_of[i]
        Phi = skew(np.broadcast_to(phi[i], batch + (3,)))
        for k, (u, s) in carried.items():
            kf = robot.joint_frames[k]
            if robot.sigma[i] == 0 and robot.sigma[kf] == 0:
                Djk = np.sum(u * (psi[i] - skew(s) @ Phi)[..., :, 2], -1)  # steps 6–7: u_kᵀ [ψ − s̃ φ̃] z
            elif robot.sigma[i] == 0:
                Djk = np.sum(u * cross(zb, phi[i]), -1)
            elif robot.sigma[kf] == 0:
                Djk = cross(u, Mc[i] * s + phi[i])[..., 2]
            else:
                Djk = Mc[i] * u[..., 2]
            D[..., j, k] = Djk
            D[..., k, j] = Djk
    idx = np.arange(n)
    D[..., idx, idx] += robot.derived.Ia.astype(dtype)
    return D


def forward_dynamics(robot: Robot, q, qd, tau, wrenches=None, gravity=None) -> np.ndarray:
    """Forward dynamics q̈ = D⁻¹(τ − C(q, q̇)) with the Gibbs–Appell D and bias vector (Mata et al. §3, eq 17).

    C (Coriolis, centrifugal, gravity, friction and wrench torques) is :func:`inverse_dynamics` at q̈ = 0;
    D is :func:`inertia_matrix`; the system is solved by Cholesky factorisation.

    Parameters
    ----------
    q, qd : array_like (..., n)
        Joint positions and velocities.
    tau : array_like (..., n)
        Joint torques (N m | N).
    wrenches, gravity : as in :func:`inverse_dynamics`.

    Returns
    -------
    ndarray (..., n)  q̈ (rad/s², m/s²), float32 for float32 inputs.
    """
    return executor.execute(_FORWARD, robot, q, qd, tau, wrenches, gravity)


def _forward_numpy(robot: Robot, q, qd, tau, g, fe) -> np.ndarray:
    C = _torques(robot, q, qd, np.zeros_like(qd), g, fe) + friction_of(robot, qd)
    return cholesky_solve(inertia_matrix(robot, q), tau - C, robot.name)


# ---- single states: the same steps on component scalars, traced into straight-line code (robodyn.dynamics.fast) ----


def _skew_squared_plus(wd, w) -> tuple:
    """Ω = ω̇̃ + ω̃ ω̃ (eq 12) as three rows of components; ω̃ ω̃ = ω ωᵀ − (ω·ω) 1."""
    ww = vdot(w, w)
    rows = []
    for r in range(3):
        row = [c_mul(w[r], w[c]) for c in range(3)]
        row[r] = row[r] - ww
        rows.append(row)
    (x, y, z) = wd
    cross_rows = ((0.0, -z, y), (z, 0.0, -x), (-y, x, 0.0))
    return tuple(tuple(a + b for a, b in zip(cr, row)) for cr, row in zip(cross_rows, rows))


def torque_components(robot: Robot, q, qd, qdd, g, backend: ScalarBackend | None = None) -> list:
    """Rigid-body torques by eqs (14)–(16) on component scalars (as :func:`_torques`, without rotor inertia):
    lists of n scalars in, n scalars out (see :mod:`robodyn.spatial`)."""
    rot, w, wd, sdd = forward_components(robot, q, qd, qdd, g, backend)  # §4.1 step 1
    f, chi = [], []
    for i, (J, MS, M) in enumerate(robot.derived.links_six):
        Om = _skew_squared_plus(wd[i], w[i])
        half = 0.5 * (J[0] + J[3] + J[5])
        E = tuple(tuple((half if r == c else 0.0) - x for c, x in enumerate(row)) for r, row in enumerate(sym_rows(J)))
        OE = [[vdot(Om[r], (E[0][c], E[1][c], E[2][c])) for c in range(3)] for r in range(3)]
        vee = (OE[2][1] - OE[1][2], OE[0][2] - OE[2][0], OE[1][0] - OE[0][1])
        f.append(vadd(vscale(M, sdd[i]), mat_mv(Om, MS)))  # eq (9)
        chi.append(vadd(vcross(MS, sdd[i]), vee))  # eq (10), about O_i
    phi = [(0.0, 0.0, 0.0)] * robot.nf
    for i in range(robot.nf - 1, -1, -1):  # §4.1 step 3, eqs (15)–(16)
        p = robot.derived.parent[i]
        if p >= 0:
            C, c, s, P = rot[i]
            F = vmat(C, vrz(c, s, vadd(f[i], phi[i])))
            phi[p] = vadd(phi[p], F)
            chi[p] = vadd(vadd(chi[p], vcross(P, F)), vmat(C, vrz(c, s, chi[i])))
    return [vadd(f[i], phi[i])[2] if robot.sigma[i] == 1 else chi[i][2] for i in robot.joint_frames]  # eq (14)


def inertia_components(robot: Robot, q, backend: ScalarBackend | None = None) -> list:
    """D (n rows of n scalars) by §4.2 steps 1–7 on component scalars, as :func:`inertia_matrix` (rotor inertias
    included)."""
    n = robot.n
    rot, psi, phi, Mc = composite_components(robot, q, backend)  # steps 1, 4, 5
    joint_of = {int(f): k for k, f in enumerate(robot.joint_frames)}
    z, zero = (0.0, 0.0, 1.0), (0.0, 0.0, 0.0)
    D = [[0.0] * n for _ in range(n)]
    above: list[dict] = []
    for i in range(robot.nf):  # steps 2–3: (u_k, s_{k,i}) of every joint k above frame i, in R_i
        p = robot.derived.parent[i]
        C, c, s, P = rot[i]
        carried = {} if p < 0 else {k: (vrz_t(c, s, vmat_t(C, u)), vrz_t(c, s, vmat_t(C, vadd(sk, P))))
                                    for k, (u, sk) in above[p].items()}
        if i in joint_of:
            carried[joint_of[i]] = (z, zero)
        above.append(carried)
        if i not in joint_of:
            continue
        j = joint_of[i]
        for k, (u, sk) in carried.items():
            kf = robot.joint_frames[k]
            if robot.sigma[i] == 0 and robot.sigma[kf] == 0:  # steps 6–7: u_kᵀ [ψ − s̃ φ̃] z
                Djk = vdot(u, vsub((psi[i][2], psi[i][4], psi[i][5]), vcross(sk, vcross(phi[i], z))))
            elif robot.sigma[i] == 0:
                Djk = vdot(u, vcross(z, phi[i]))
            elif robot.sigma[kf] == 0:
                Djk = vcross(u, vadd(vscale(Mc[i], sk), phi[i]))[2]
            else:
                Djk = c_mul(Mc[i], u[2])
            D[j][k] = D[k][j] = Djk
    for k, Ia in enumerate(robot.derived.Ia):
        D[k][k] = D[k][k] + float(Ia)
    return D


def _inverse_kernel(robot: Robot):
    return fast.torque_kernel(robot, torque_components)


def _inertia_kernel(robot: Robot):
    def build(backend, q):
        return [x for row in inertia_components(robot, q, backend) for x in row]

    return build


def _forward_kernel(robot: Robot):
    def build(backend, q, qd, tau, g):
        zero = [0.0] * robot.n
        C = [t + fr for t, fr in zip(torque_components(robot, q, qd, zero, g, backend),
                                     friction_components(robot, qd, backend))]
        return fast.cholesky_components(inertia_components(robot, q, backend), [t - c for t, c in zip(tau, C)])

    return build


_INVERSE = executor.Algorithm("inverse_dynamics", _inverse_numpy, kernel=_inverse_kernel, key="gibbs_appell_inverse")
_INERTIA = executor.Algorithm("inertia_matrix", _inertia_numpy, ("q",), kernel=_inertia_kernel,
                              key="gibbs_appell_inertia", matrix=True)
_FORWARD = executor.Algorithm("forward_dynamics", _forward_numpy, ("q", "qd", "tau"), kernel=_forward_kernel,
                              key="gibbs_appell_forward")
