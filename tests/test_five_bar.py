"""The five-bar linkages of De Luca's closed-chain slides (planar MIT-DD-Mark-IV type, spatial UMinnesota type)
against an independent Lagrangian with multipliers derived in sympy: the bodies' kinetic and potential energies
from homogeneous transforms written here, M(q) = Σ m J_vᵀJ_v + J_ωᵀ I J_ω, h = Ṁq̇ − ½∂(q̇ᵀMq̇)/∂q + ∂U/∂q, the
loop constraints φ(q) = 0 with G = ∂φ/∂q, and

    M q̈ + h = B τ + Gᵀ λ,   G q̈ + Ġ q̇ = 0

solved for (τ, λ) (inverse dynamics) or (q̈, λ) (forward dynamics)."""

from functools import lru_cache

import numpy as np
import pytest
import sympy as sp

import robodyn as rd
from robodyn.errors import ModelError
from robodyn.model.closed_chain import ClosedChainRobot, LoopClosure
from robodyn.model.five_bar import planar_five_bar, spatial_five_bar


def _T(alpha, d, angle):
    """Khalil–Kleinfinger frame transform Rx(α) Tx(d) Rz(angle) (γ = b = r = 0), sympy."""
    ca, sa = sp.cos(alpha), sp.sin(alpha)
    Rx = sp.Matrix([[1, 0, 0, 0], [0, ca, -sa, 0], [0, sa, ca, 0], [0, 0, 0, 1]])
    Tx = sp.Matrix([[1, 0, 0, d], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
    c, s = sp.cos(angle), sp.sin(angle)
    Rz = sp.Matrix([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
    return Rx * Tx * Rz


def _lagrangian(tree, frames, loop):
    """Lambdified M(q), h(q, q̇), φ(q), G(q), Ġq̇ for a tree given as [(antecedent, alpha, d)] per frame (one joint
    each), uniform rods from the robot's masses and centres of mass, and one point-coincidence loop."""
    n = len(frames)
    q = sp.symbols(f"q0:{n}")
    qd = sp.symbols(f"qd0:{n}")
    T = []
    for j, (ant, alpha, d) in enumerate(frames):
        Tj = _T(alpha, d, q[j])
        T.append(Tj if ant == 0 else T[ant - 1] * Tj)
    g = sp.Matrix(tree.gravity.tolist())
    M = sp.zeros(n, n)
    U = 0
    for j in range(n):
        m = float(tree.M[j])
        if m == 0:
            continue
        c = sp.Matrix((tree.MS[j] / m).tolist())
        R, P = T[j][:3, :3], T[j][:3, 3]
        pc = P + R * c
        Jv = pc.jacobian(q)
        # angular velocity in R_j: vee(Rᵀ Ṙ), linear in q̇; its Jacobian column k is vee(Rᵀ ∂R/∂q_k)
        Jw = sp.zeros(3, n)
        for k in range(n):
            W = R.T * R.diff(q[k])
            Jw[:, k] = sp.Matrix([W[2, 1], W[0, 2], W[1, 0]])
        # inertia about the centre of mass in R_j, from the standard parameters about O_j
        xx, xy, xz, yy, yz, zz = tree.params[j, :6]
        Jo = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        cn = tree.MS[j] / m
        Ic = sp.Matrix((Jo - m * (cn @ cn * np.eye(3) - np.outer(cn, cn))).tolist())
        M += m * Jv.T * Jv + Jw.T * Ic * Jw
        U += -m * (g.T * pc)[0]
    qdv = sp.Matrix(qd)
    Mdot = sp.zeros(n, n)
    for k in range(n):
        Mdot += M.diff(q[k]) * qd[k]
    kin = (qdv.T * M * qdv)[0]
    h = Mdot * qdv - sp.Matrix([sp.Rational(1, 2) * kin.diff(qk) for qk in q]) + sp.Matrix([U.diff(qk) for qk in q])
    (fa, pa), (fb, pb), rows = loop
    ra = (T[fa - 1] * sp.Matrix(list(pa) + [1]))[:3, 0]
    rb = (T[fb - 1] * sp.Matrix(list(pb) + [1]))[:3, 0]
    phi = (ra - rb).extract(list(rows), [0])
    G = phi.jacobian(q)
    Gdqd = (G * qdv).jacobian(q) * qdv
    f = lambda expr, args: sp.lambdify(args, expr, "numpy")  # noqa: E731
    return (f(M, [q]), f(h, [q, qd]), f(phi, [q]), f(G, [q]), f(Gdqd, [q, qd]))


@lru_cache(maxsize=None)
def _planar():
    cc = planar_five_bar()
    frames = [(0, 0, 0), (0, 0, 0.2), (1, 0, 0.3), (2, 0, 0.3)]
    return cc, _lagrangian(cc.tree, frames, ((3, (0.45, 0, 0)), (4, (0.45, 0, 0)), (0, 1)))


@lru_cache(maxsize=None)
def _spatial():
    cc = spatial_five_bar()
    h = sp.pi / 2
    frames = [(0, 0, 0), (0, h, 0.15), (1, h, 0.3), (3, h, 0), (2, 0, 0.3)]
    return cc, _lagrangian(cc.tree, frames, ((4, (0.5, 0, 0)), (5, (0.5, 0, 0)), (0, 1, 2)))


CASES = {"planar": (_planar, [2.0, 1.0], [-1.5, 1.5]), "spatial": (_spatial, [0.3, 0.4], [0.5, 0.5, -1.0])}


def _reference(model, q, qd_a, qdd_a=None, tau=None):
    """(τ, λ, q̈) from the sympy Lagrangian with multipliers, at a closed q."""
    cc, (Mf, hf, phif, Gf, Gdf) = model
    n, act, pas = cc.tree.n, list(cc.active), list(cc.passive)
    G = np.asarray(Gf(q), float)
    assert np.max(np.abs(np.asarray(phif(q), float))) < 1e-12
    qd = np.zeros(n)
    qd[act] = qd_a
    qd[pas] = -np.linalg.solve(G[:, pas], G[:, act] @ qd_a)
    M, h = np.asarray(Mf(q), float), np.asarray(hf(q, qd), float).ravel()
    gq = np.asarray(Gdf(q, qd), float).ravel()
    B = np.zeros((n, len(act)))
    B[act, range(len(act))] = 1.0
    if tau is None:
        qdd = np.zeros(n)
        qdd[act] = qdd_a
        qdd[pas] = -np.linalg.solve(G[:, pas], G[:, act] @ qdd_a + gq)
        sol = np.linalg.solve(np.hstack([B, G.T]), M @ qdd + h)
        return sol[: len(act)], sol[len(act):], qdd, M, G
    m = G.shape[0]
    K = np.block([[M, -G.T], [G, np.zeros((m, m))]])
    sol = np.linalg.solve(K, np.concatenate([B @ tau - h, -gq]))
    return tau, sol[n:], sol[:n], M, G


@pytest.mark.parametrize("case", list(CASES))
def test_five_bar_against_lagrangian_with_multipliers(case):
    build, qa0, guess = CASES[case]
    model = build()
    cc = model[0]
    rng = np.random.default_rng(1)
    for trial in range(3):
        qa = np.asarray(qa0) + 0.1 * trial
        q = rd.closed_chain.close_loops(cc, qa, q_passive=guess)
        qd_a, qdd_a = rng.normal(size=2), rng.normal(size=2)
        tau_ref, lam_ref, qdd_ref, M, G = _reference(model, q, qd_a, qdd_a)
        inv = rd.closed_chain.closed_chain_inverse_dynamics(cc, q, qd_a, qdd_a)
        scale = np.abs(tau_ref).max()
        np.testing.assert_allclose(inv.tau, tau_ref, rtol=0, atol=1e-10 * scale)
        np.testing.assert_allclose(inv.qdd, qdd_ref, rtol=0, atol=1e-10 * np.abs(qdd_ref).max())
        np.testing.assert_allclose(inv.multipliers, lam_ref, rtol=0, atol=1e-10 * np.abs(lam_ref).max())
        # forward dynamics from the torques: the KKT system of the Lagrangian gives the same accelerations
        tau = rng.normal(size=2) * scale
        _, lam_f, qdd_f, _, _ = _reference(model, q, qd_a, tau=tau)
        fwd = rd.closed_chain.closed_chain_forward_dynamics(cc, q, qd_a, tau)
        np.testing.assert_allclose(fwd.qdd, qdd_f, rtol=0, atol=1e-10 * np.abs(qdd_f).max())
        np.testing.assert_allclose(fwd.multipliers, lam_f, rtol=0, atol=1e-10 * np.abs(lam_f).max())
        # the inertia matrix in the independent (active) coordinates: Wᵀ M W with W from the constraint Jacobian
        act, pas = list(cc.active), list(cc.passive)
        W = np.zeros((cc.tree.n, 2))
        W[act] = np.eye(2)
        W[pas] = -np.linalg.solve(G[:, pas], G[:, act])
        M_a, _ = rd.closed_chain.closed_chain_model(cc, q)
        np.testing.assert_allclose(M_a, W.T @ M @ W, rtol=0, atol=1e-11 * np.abs(M_a).max())


def test_planar_five_bar_closes_and_moves_in_its_plane():
    cc = planar_five_bar()
    q = rd.closed_chain.close_loops(cc, [2.0, 1.0], q_passive=[-1.5, 1.5])
    T = rd.forward_kinematics(cc.tree, q)
    tips = [T[2, :3, :3] @ [0.45, 0, 0] + T[2, :3, 3], T[3, :3, :3] @ [0.45, 0, 0] + T[3, :3, 3]]
    np.testing.assert_allclose(tips[0], tips[1], atol=1e-12)
    assert abs(tips[0][2]) < 1e-15


def test_spatial_loop_with_revolute_cut_is_refused():
    """The limitation: a LoopClosure is a point coincidence.  Cutting the spatial five-bar at a revolute joint
    instead of the spherical one needs 3 position + 2 orientation equations; two coincident points on the joint
    axis give them (5 independent rows of 6), but then there are 5 equations for the tree's 3 passive joints —
    with a revolute joint at the tip the loop is over-constrained (Grübler 6·5 − 5·6 = 0 < 2), and robodyn
    refuses the model instead of solving an inconsistent system."""
    tree = spatial_five_bar().tree
    axis_points = [LoopClosure(frame=4, point=(0.5, 0, 0), to=5, to_point=(0.5, 0, 0), rows=(0, 1, 2)),
                   LoopClosure(frame=4, point=(0.5, 0, 0.1), to=5, to_point=(0.5, 0, 0.1), rows=(0, 1))]
    with pytest.raises(ModelError, match="5 loop-closure equations but 3 passive joints"):
        ClosedChainRobot(tree=tree, loops=tuple(axis_points), active=(0, 1))
