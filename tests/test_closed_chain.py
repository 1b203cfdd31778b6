"""Closed chains: De Luca's parallelogram vs its closed form, a four-bar linkage vs an independent Lagrangian
derivation (sympy), model files with a loops section, errors."""

import numpy as np
import pytest
import sympy as sp

import robodyn as rd
from robodyn.dynamics.closed_chain import (
    LoopClosureError, close_loops, closed_chain_forward_dynamics, closed_chain_inverse_dynamics, closed_chain_model,
    loop_jacobian, loop_residual,
)
from robodyn.errors import ModelFileError
from robodyn.model.closed_chain import closed_chain_from_text, load_closed_chain
from robodyn.symbolic import parallelogram

# parallelogram: l1 = l3, l2 = l4; absolute angles q1 (links 1, 3) and q2 (links 2, 4) are the active joints
L1, L2 = 0.8, 0.5
M = (2.0, 1.5, 1.2, 1.8)
LC = (0.35, 0.2, 0.4, 0.3)
IC = (0.11, 0.04, 0.07, 0.09)
G0 = 9.81


def _link(m, x, ic):
    return f"{{mass: {m}, com: [{x}, 0, 0], inertia_com: [{ic / 2 + 0.01}, 0, 0, {ic / 2 + 0.01}, 0, {ic}]}}"


PARALLELOGRAM = f"""
name: parallelogram
gravity: [0, -{G0}, 0]
joints:
  - {{name: q1, antecedent: 0}}
  - {{name: q2, antecedent: 0}}
  - {{name: t3, antecedent: 2, d: {L2}}}
  - {{name: t4, antecedent: 1, d: {L1}}}
links:
  - {_link(M[0], LC[0], IC[0])}
  - {_link(M[1], LC[1], IC[1])}
  - {_link(M[2], LC[2], IC[2])}
  - {_link(M[3], -LC[3], IC[3])}
loops:
  - {{name: C, frame: 3, point: [{L1}, 0, 0], to: 4, to_point: [{L2}, 0, 0], rows: [0, 1]}}
active: [q1, q2]
"""


@pytest.fixture(scope="module")
def para():
    return closed_chain_from_text(PARALLELOGRAM, "parallelogram.yaml")


@pytest.fixture(scope="module")
def para_closed_form():
    cf = parallelogram()
    syms = {s.name: s for s in cf.A.free_symbols | cf.Q.free_symbols}
    values = {"l1": L1, "l2": L2, "g0": G0}
    for i in range(4):
        values.update({f"m{i + 1}": M[i], f"Ic{i + 1}": IC[i], f"lc{i + 1}": LC[i]})
    sub = {syms[k]: v for k, v in values.items() if k in syms}
    qdd = sp.symbols("qdd1 qdd2")
    tau = cf.torques(list(qdd)).subs(sub)
    args = (*cf.q, *cf.qd, *qdd)
    return (sp.lambdify(cf.q, cf.A.subs(sub)), sp.lambdify(cf.q, cf.Q.subs(sub)), sp.lambdify(args, tau))


def test_parallelogram_closes_as_a_parallelogram(para):
    qa = np.array([[0.7, 2.1], [-0.3, 1.2], [1.5, 3.0]])
    q = close_loops(para, qa, q_passive=np.column_stack([qa[:, 0] - qa[:, 1], qa[:, 1] - qa[:, 0]]) + 0.2)
    # passive relative angles of a parallelogram: θ3 = q1 − q2, θ4 = q2 − q1
    np.testing.assert_allclose(np.angle(np.exp(1j * (q[:, 2] - (qa[:, 0] - qa[:, 1])))), 0, atol=1e-12)
    np.testing.assert_allclose(np.angle(np.exp(1j * (q[:, 3] - (qa[:, 1] - qa[:, 0])))), 0, atol=1e-12)
    assert np.max(np.abs(loop_residual(para, q))) < 1e-12


def test_parallelogram_matches_de_lucas_closed_form(para, para_closed_form):
    A_cf, Q_cf, tau_cf = para_closed_form
    rng = np.random.default_rng(4)
    qa = rng.uniform(-2, 2, (4, 2))
    qda, qdda = rng.uniform(-2, 2, (4, 2)), rng.uniform(-3, 3, (4, 2))
    q = close_loops(para, qa, q_passive=np.column_stack([qa[:, 0] - qa[:, 1], qa[:, 1] - qa[:, 0]]) + 0.05)
    Ma, ga = closed_chain_model(para, q)
    ID = closed_chain_inverse_dynamics(para, q, qda, qdda)
    FD = closed_chain_forward_dynamics(para, q, qda, ID.tau)
    for i in range(4):
        np.testing.assert_allclose(Ma[i], np.array(A_cf(*qa[i]), float), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(ga[i], np.array(Q_cf(*qa[i]), float).ravel(), rtol=1e-12, atol=1e-12)
        want = np.array(tau_cf(*qa[i], *qda[i], *qdda[i]), float).ravel()
        np.testing.assert_allclose(ID.tau[i], want, rtol=1e-11, atol=1e-11)
    # forward dynamics inverts inverse dynamics; the motion respects the loop at velocity and acceleration level
    np.testing.assert_allclose(FD.qdd_active, qdda, rtol=1e-10, atol=1e-10)
    G = loop_jacobian(para, q)
    np.testing.assert_allclose((G @ ID.qd[..., None])[..., 0], 0, atol=1e-12)
    # batch == per sample
    one = closed_chain_inverse_dynamics(para, q[2], qda[2], qdda[2])
    np.testing.assert_allclose(one.tau, ID.tau[2], rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(one.multipliers, ID.multipliers[2], rtol=1e-12, atol=1e-12)


A0, A1, A2, A3 = 1.0, 0.3, 0.9, 0.7          # ground, crank, coupler, rocker (Grashof crank-rocker)
FM = (1.0, 2.0, 1.5)
FC = (0.15, 0.45, 0.3)
FI = (0.01, 0.12, 0.06)

FOUR_BAR = f"""
name: four_bar
gravity: [0, -{G0}, 0]
joints:
  - {{name: crank, antecedent: 0}}
  - {{name: coupler, antecedent: 1, d: {A1}}}
  - {{name: rocker, antecedent: 0, d: {A0}}}
links:
  - {_link(FM[0], FC[0], FI[0])}
  - {_link(FM[1], FC[1], FI[1])}
  - {_link(FM[2], FC[2], FI[2])}
loops:
  - {{frame: 2, point: [{A2}, 0, 0], to: 3, to_point: [{A3}, 0, 0], rows: [0, 1]}}
active: [crank]
"""


def _four_bar_lagrange():
    """1-DOF Lagrangian of the four-bar in the crank angle q, with the absolute coupler and rocker angles φ2, φ3
    defined implicitly by the loop equations Φ(q, φ) = 0 (implicit-function theorem, all in sympy):
    τ = m(q) q̈ + ½ m'(q) q̇² + U'(q)."""
    q, p2, p3 = sp.symbols("q p2 p3")
    e = lambda a: sp.Matrix([sp.cos(a), sp.sin(a)])                        # noqa: E731
    A = A1 * e(q)
    Phi = A + A2 * e(p2) - sp.Matrix([A0, 0]) - A3 * e(p3)
    dphi = -Phi.jacobian([p2, p3]).LUsolve(Phi.diff(q))                    # dφ/dq

    def total(f):
        return f.diff(q) + f.diff(p2) * dphi[0] + f.diff(p3) * dphi[1]

    bodies = [(FM[0], FI[0], FC[0] * e(q), sp.Integer(1)),
              (FM[1], FI[1], A + FC[1] * e(p2), dphi[0]),
              (FM[2], FI[2], sp.Matrix([A0, 0]) + FC[2] * e(p3), dphi[1])]
    m = sum(mi * total(pc).dot(total(pc)) + Ii * w**2 for mi, Ii, pc, w in bodies)
    U = sum(mi * G0 * pc[1] for mi, _, pc, _ in bodies)
    qd, qdd = sp.symbols("qd qdd")
    tau = m * qdd + sp.Rational(1, 2) * total(m) * qd**2 + total(U)
    return sp.lambdify((q, p2, p3, qd, qdd), tau), sp.lambdify((q, p2, p3), Phi)


def test_four_bar_matches_independent_lagrangian(tmp_path):
    path = tmp_path / "four_bar.yaml"
    path.write_text(FOUR_BAR)
    fb = load_closed_chain(path)
    assert fb.active == (0,) and fb.passive == (1, 2)
    tau_of, phi_of = _four_bar_lagrange()
    crank = np.linspace(-3.0, 3.0, 7)
    q = close_loops(fb, crank[:, None], q_passive=np.tile([1.2, 1.9], (7, 1)))
    qd, qdd = np.linspace(-2, 2, 7)[:, None], np.linspace(3, -1, 7)[:, None]
    res = closed_chain_inverse_dynamics(fb, q, qd, qdd)
    for i in range(7):
        p2, p3 = q[i, 0] + q[i, 1], q[i, 2]          # absolute coupler and rocker angles
        np.testing.assert_allclose(np.array(phi_of(q[i, 0], p2, p3), float).ravel(), 0, atol=1e-12)
        want = float(tau_of(q[i, 0], p2, p3, qd[i, 0], qdd[i, 0]))
        assert res.tau[i, 0] == pytest.approx(want, rel=1e-10, abs=1e-10)
    # energy balance of the constrained motion: τ q̇ = dE/dt, with Ė = q̇ᵀ(A q̈ + ½ Ȧ q̇) + Q q̇ on the tree
    A = rd.inertia_matrix(fb.tree, q)
    Adot = rd.dynamics.inertia_matrix_derivative(fb.tree, q, res.qd)
    Edot = (np.einsum("bi,bij,bj->b", res.qd, A, res.qdd) + 0.5 * np.einsum("bi,bij,bj->b", res.qd, Adot, res.qd)
            + np.einsum("bi,bi->b", rd.gravity_torques(fb.tree, q), res.qd))
    np.testing.assert_allclose(res.tau[:, 0] * qd[:, 0], Edot, rtol=1e-10, atol=1e-10)


def test_closed_chain_errors(para, tmp_path):
    with pytest.raises(LoopClosureError, match="max_iter"):
        fb = closed_chain_from_text(FOUR_BAR.replace(f"d: {A0}", "d: 3.0"), "far.yaml")   # cannot close
        close_loops(fb, [[0.3]], q_passive=[[1.0, 1.0]], max_iter=20)
    with pytest.raises(LoopClosureError, match="close_loops"):
        closed_chain_inverse_dynamics(para, [0.1, 0.2, 0.0, 0.0], [0, 0], [0, 0])
    with pytest.raises(ModelFileError, match="loops row 1"):
        closed_chain_from_text(PARALLELOGRAM.replace("rows: [0, 1]", "rows: [0, 1], axis: 2"), "bad.yaml")
    with pytest.raises(ModelFileError, match="passive joints"):
        closed_chain_from_text(PARALLELOGRAM.replace("rows: [0, 1]", "rows: [0]"), "bad.yaml")
    with pytest.raises(ModelFileError, match="active"):
        closed_chain_from_text(PARALLELOGRAM.replace("active: [q1, q2]", "active: [q1, q9]"), "bad.yaml")
    with pytest.raises(ModelFileError, match="bad.yaml, joints row 2"):
        closed_chain_from_text(PARALLELOGRAM.replace("{name: q2, antecedent: 0}", "{name: q2, antecedent: x}"),
                               "bad.yaml")


def test_loop_jacobian_is_the_derivative_of_the_loop_residual(para):
    """rd.closed_chain.loop_jacobian = ∂φ/∂q (public): central differences of rd.closed_chain.loop_residual (step 1e-6, error O(h²) ≈ 1e-12),
    off the closed configuration too, and a batch equals its samples."""
    rng = np.random.default_rng(7)
    q = rng.uniform(-1.5, 1.5, (3, para.tree.n))
    G = rd.closed_chain.loop_jacobian(para, q)
    h = 1e-6
    for k in range(para.tree.n):
        e = np.zeros(para.tree.n)
        e[k] = h
        fd = (rd.closed_chain.loop_residual(para, q + e) - rd.closed_chain.loop_residual(para, q - e)) / (2 * h)
        np.testing.assert_allclose(G[..., k], fd, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(G[1], rd.closed_chain.loop_jacobian(para, q[1]))
    with pytest.raises(rd.InputError, match="'q'"):
        rd.closed_chain.loop_jacobian(para, np.zeros(para.tree.n + 1))
