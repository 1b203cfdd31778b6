"""Direct dynamic model by the O(n) recursive Newton–Euler algorithm, Khalil & Dombre §9.7.2 [9.100]–[9.124].

Screw notation (linear part first): twist accelerations V̇ = [V̇; ω̇], wrenches f = [f; m], the spatial
inertia of link j about O_j in R_j

    𝕁_j = [[M_j 1,  −M̂S_j],
           [M̂S_j,   J_j  ]],

the screw transformation ^j𝕋_{a(j)} = [[Aᵀ, −Aᵀ P̂], [0, Aᵀ]] (A = ^{a(j)}A_j, P = ^{a(j)}P_j) and the joint
axis a_j = [σ_j z; σ̄_j z] ([9.23b]).  Three recursions:

i)   forward: ω_j, γ_j (the acceleration of frame j when q̈ = 0 and V̇_{a(j)} = 0, [9.101]) and β_j, the
     wrench of velocity terms and external wrench [9.103];
ii)  backward, j = nf..1: H_j [9.116], K_j [9.117], α_j [9.118], and the articulated quantities of the
     antecedent 𝕁*_{a(j)}, β*_{a(j)} [9.119]–[9.120], SUMMED over all children of a(j) so that trees work;
     a fixed frame (σ_j = 2) has no joint equation: K_j = 𝕁*_j, α_j = 𝕁*_j γ_j − β*_j;
iii) forward: ^jV̇_{a(j)} [9.121], q̈_j [9.122], V̇_j [9.124], from V̇_0 = [−g; 0].

A screw is a pair (linear, angular) of component tuples, a spatial inertia the blocks (𝕁₁₁, 𝕁₁₂, 𝕁₂₂), 𝕁₂₁ = 𝕁₁₂ᵀ
(:mod:`robodyn.spatial`); 𝕋 is applied as a rotation and a displacement, never as a 6×6 product.

τ_j = Γ_j − Γ_fj(q̇_j) ([9.106]).  The misprints of §9.7.2 fixed here ([9.104], [9.107], [9.112]):
docs/dynamic-model.md, "Direct dynamic model".
"""

from __future__ import annotations

import numpy as np

from robodyn.arrays import pivot_too_small, singular_model_error
from robodyn.dynamics import executor
from robodyn.dynamics.composite import jax_inertia_matrix
from robodyn.dynamics.newton_euler import jax_inverse_dynamics
from robodyn.model.friction import friction_of
from robodyn.kinematics import frame_velocities, run_blocks, to_child, twist_to_child, wrench_to_parent
from robodyn.model.robot import Robot
from robodyn.spatial import (
    ScalarBackend,
    UPPER,
    c_add,
    c_div,
    c_mul,
    c_sub,
    mat_mv,
    mat_rotate,
    mat_tmv,
    sym_add,
    sym_mv,
    sym_rotate,
    sym_rows,
    sym_sub,
    vadd,
    vcross,
    vdot,
    vscale,
    vsub,
)


def forward_dynamics(robot: Robot, q, qd, tau, wrenches=None, gravity=None, out=None, trig: str = "exact") -> np.ndarray:
    """Joint accelerations q̈ = A⁻¹(Γ − H) (..., n) by the recursive algorithm of §9.7.2, O(n), trees included.

    Arguments, units and result as :func:`robodyn.forward_dynamics` (``method="recursive"``); the friction is
    subtracted from Γ ([9.106]) and the wrenches enter as [9.103].
    """
    return executor.execute(_FORWARD, robot, q, qd, tau, wrenches, gravity, None, out, trig)


def _numpy(robot: Robot, q, qd, tau, g, fe) -> np.ndarray:
    return run_blocks(robot, aba_components, (q, qd, tau - friction_of(robot, qd)), g, fe)  # [9.106]


def aba_components(robot: Robot, q, qd, tau, g, fe=None, backend: ScalarBackend | None = None) -> list:
    """q̈ of the recursive algorithm of §9.7.2 on component scalars (τ without friction, [9.106]): the first
    forward recursion, the backward recursion and the second forward recursion in turn."""
    rot, gam, beta = first_forward(robot, q, qd, fe, backend)
    H, Ja, _, beta_star = backward(robot, tau, rot, gam, beta)
    return second_forward(robot, tau, g, rot, gam, H, Ja, beta_star)


def jax_forward_dynamics(robot: Robot, q, qd, tau, gravity=None):
    """q̈ = A⁻¹(Γ − H(q, q̇)) [9.95]–[9.96] on JAX arrays (..., n), traceable: A by composite links and H by
    Newton–Euler on the JAX backend, then ``jax.numpy.linalg.solve`` (a traced direct model need not branch on
    pivots as the articulated-body recursion does)."""
    import jax.numpy as jnp

    q, qd, tau = jnp.broadcast_arrays(jnp.asarray(q), jnp.asarray(qd), jnp.asarray(tau))
    H = jax_inverse_dynamics(robot, q, qd, jnp.zeros_like(q), gravity)
    return jnp.linalg.solve(jax_inertia_matrix(robot, q), (tau - H)[..., None])[..., 0]


_FORWARD = executor.Algorithm("forward_dynamics", _numpy, ("q", "qd", "tau"), single=True, batch=True,
                              jax=jax_forward_dynamics)


def _row(robot: Robot, j: int) -> tuple[int, int]:
    """Where the joint axis a_j = u_3 (prismatic) or u_6 (revolute) [9.23b] sits in a screw (linear, angular):
    (0, 2) or (1, 2)."""
    return (0, 2) if robot.sigma[j] == 1 else (1, 2)


def first_forward(robot: Robot, q, qd, fe, backend: ScalarBackend | None = None):
    """Rotations of every frame, γ_j [9.101] and β_j [9.103] (lists over frames of screws), on the velocity
    recursion of :func:`robodyn.kinematics.frame_velocities`."""
    zero = (0.0, 0.0, 0.0)
    rot, gam, beta, w = [], [], [], []
    for j, k, rot_j, w_prev, w_j in frame_velocities(robot, q, qd, backend):
        J, MS, _ = robot.derived.links_six[j]
        p = robot.derived.parent[j]
        wp = w[p] if p >= 0 else zero
        lin, ang = to_child(rot_j, vcross(wp, vcross(wp, rot_j[3]))), zero
        if robot.sigma[j] == 1:
            lin = vadd(lin, vscale(2.0, vcross(w_prev, (0.0, 0.0, qd[k]))))
        elif robot.sigma[j] == 0:
            ang = vcross(w_prev, (0.0, 0.0, qd[k]))
        b = (vscale(-1.0, vcross(w_j, vcross(w_j, MS))), vscale(-1.0, vcross(w_j, sym_mv(J, w_j))))  # [9.103]
        if fe is not None:
            b = _sub(b, (tuple(fe[6 * j: 6 * j + 3]), tuple(fe[6 * j + 3: 6 * j + 6])))
        rot.append(rot_j)
        gam.append((lin, ang))  # [9.101]
        beta.append(b)
        w.append(w_j)
    return rot, gam, beta


def backward(robot: Robot, tau, rot, gam, beta):
    """H_j [9.116] and 𝕁*_j a_j, 𝕁*_j and β*_j, with K_j [9.117] and α_j [9.118] passed to the antecedent
    [9.119]–[9.120]."""
    Jstar = [link_inertia(J, MS, M) for J, MS, M in robot.derived.links_six]
    beta_star = list(beta)
    H, Ja = [None] * robot.nf, [None] * robot.nf
    k_of = {int(f): k for k, f in enumerate(robot.joint_frames)}
    for j in range(robot.nf - 1, -1, -1):
        Js, bs = Jstar[j], beta_star[j]
        if robot.sigma[j] == 2:  # no joint: the wrench follows the antecedent's acceleration rigidly
            K, alpha = Js, _sub(inertia_times(Js, gam[j]), bs)
        else:
            side, row = _row(robot, j)
            Ja[j] = axis_column(Js, robot.sigma[j])  # 𝕁*_j a_j
            H[j] = c_add(Ja[j][side][row], robot.Ia.item(j))  # [9.116]
            d = Js[2 if robot.sigma[j] == 0 else 0]  # same-kind diagonal block of 𝕁*_j: the scale of H_j
            if pivot_too_small(H[j], lambda: abs(d[0]) + abs(d[3]) + abs(d[5]) + robot.Ia.item(j), robot.frame_names[j]):
                raise singular_model_error(
                    robot.name, f"joint {robot.frame_names[j]}: articulated inertia H_j = {float(np.min(H[j])):.3g} [9.116]"
                )
            Jg = tuple(tuple(c_div(x, H[j]) for x in v) for v in Ja[j])  # 𝕁*_j a_j / H_j
            K = minus_outer(Js, Ja[j], Jg)  # [9.117]
            u = c_add(tau[k_of[j]], bs[side][row])
            alpha = _sub(screw_add(inertia_times(K, gam[j]), screw_scale(u, Jg)), bs)  # [9.118]
        p = robot.derived.parent[j]
        if p >= 0:  # summed over all children of p: trees
            beta_star[p] = _sub(beta_star[p], wrench_to_parent(rot[j], alpha))  # [9.119]
            Jstar[p] = inertia_add(Jstar[p], inertia_to_antecedent(rot[j], K))  # [9.120]
    return H, Ja, Jstar, beta_star


def second_forward(robot: Robot, tau, g, rot, gam, H, Ja, beta_star) -> list:
    """q̈ (one entry per joint variable) from V̇_0 = [−g; 0] by [9.121]–[9.124]."""
    qdd = []
    Vd = [None] * robot.nf
    Vd0 = ((-g[0], -g[1], -g[2]), (0.0, 0.0, 0.0))
    for j in range(robot.nf):
        p = robot.derived.parent[j]
        acc = screw_add(twist_to_child(rot[j], Vd[p] if p >= 0 else Vd0), gam[j])  # ^jV̇_{a(j)} [9.121] + γ_j
        if robot.sigma[j] != 2:
            side, row = _row(robot, j)
            u = c_add(tau[len(qdd)], beta_star[j][side][row])
            qdd.append(c_div(c_sub(u, c_add(vdot(Ja[j][0], acc[0]), vdot(Ja[j][1], acc[1]))), H[j]))  # [9.122]
            axis = list(acc[side])
            axis[row] = c_add(axis[row], qdd[-1])
            acc = (tuple(axis), acc[1]) if side == 0 else (acc[0], tuple(axis))  # [9.124]
        Vd[j] = acc
    return qdd


# ---- screws (linear, angular) and spatial inertias (𝕁₁₁, 𝕁₁₂, 𝕁₂₂) on component tuples -------------------------


def screw_add(U, V):
    return vadd(U[0], V[0]), vadd(U[1], V[1])


def _sub(U, V):
    return vsub(U[0], V[0]), vsub(U[1], V[1])


def screw_scale(s, V):
    return vscale(s, V[0]), vscale(s, V[1])


def link_inertia(J, MS, M):
    """𝕁_j = [[M 1, −M̂S], [M̂S, J]] from the link's standard parameters."""
    x, y, z = MS
    return (M, 0.0, 0.0, M, 0.0, M), ((0.0, z, -y), (-z, 0.0, x), (y, -x, 0.0)), J


def inertia_times(I, V):
    """𝕁 V = [𝕁₁₁ v + 𝕁₁₂ ω; 𝕁₁₂ᵀ v + 𝕁₂₂ ω]."""
    S11, M12, S22 = I
    v, w = V
    return vadd(sym_mv(S11, v), mat_mv(M12, w)), vadd(mat_tmv(M12, v), sym_mv(S22, w))


def axis_column(I, sigma):
    """𝕁 a_j: column 6 (revolute) or 3 (prismatic) of 𝕁 [9.23b]."""
    S11, M12, S22 = I
    if sigma == 0:
        return (M12[0][2], M12[1][2], M12[2][2]), (S22[2], S22[4], S22[5])
    return (S11[2], S11[4], S11[5]), M12[2]


def minus_outer(I, U, V):
    """𝕁 − U Vᵀ for screws U, V with U Vᵀ symmetric ([9.117]: U = 𝕁 a_j, V = U / H_j)."""
    S11, M12, S22 = I
    return (
        sym_sub(S11, tuple(c_mul(U[0][a], V[0][b]) for a, b in UPPER)),
        tuple(vsub(M12[a], vscale(U[0][a], V[1])) for a in range(3)),
        sym_sub(S22, tuple(c_mul(U[1][a], V[1][b]) for a, b in UPPER)),
    )


def inertia_add(I, K):
    return sym_add(I[0], K[0]), tuple(vadd(a, b) for a, b in zip(I[1], K[1])), sym_add(I[2], K[2])


def inertia_to_antecedent(rot, K):
    """^j𝕋_{a(j)}ᵀ K ^j𝕋_{a(j)} [9.120] with 𝕋ᵀ = [[A, 0], [P̂A, A]] and R_xy = A K_xy Aᵀ:

    [[R₁₁, R₁₂ − R₁₁P̂], [·, R₂₂ + P̂R₁₂ − R₁₂ᵀP̂ − P̂R₁₁P̂]],  the last block written R₂₂ + P̂X₁₂ + (P̂R₁₂)ᵀ with
    X₁₂ = R₁₂ − R₁₁P̂ (row r of a matrix times P̂ is r × P, column k of P̂ times a matrix is P × its column k).
    """
    C, c, s, P = rot
    R11, R12, R22 = sym_rotate(C, c, s, K[0]), mat_rotate(C, c, s, K[1]), sym_rotate(C, c, s, K[2])
    X12 = tuple(vsub(R12[a], vcross(r, P)) for a, r in enumerate(sym_rows(R11)))
    PX12 = [vcross(P, col) for col in zip(*X12)]  # PX12[k] = column k of P̂ X₁₂
    PR12 = [vcross(P, col) for col in zip(*R12)]
    return R11, X12, tuple(c_add(c_add(R22[i], PX12[b][a]), PR12[a][b]) for i, (a, b) in enumerate(UPPER))
