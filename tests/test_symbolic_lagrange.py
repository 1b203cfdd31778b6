"""Closed-form Lagrange models: Example 9.1 (first three RX-90 links), De Luca's 2R, PR, 3R articulated and
parallelogram examples, the skew symmetry of Ȧ − 2C, and agreement with the customized models and the numeric algorithms."""

import numpy as np
import sympy as sp

import robodyn as rd
from robodyn import Robot
from robodyn.symbolic.lagrange import closed_form, parallelogram
from tests.support.random_robots import random_inertia, random_state


def zero(e):
    return sp.simplify(sp.expand_trig(sp.expand(e))) == 0


def rx90_first_three():
    rng = np.random.default_rng(0)
    return Robot(name="rx90_3", sigma=[0, 0, 0], alpha=[0, np.pi / 2, 0], d=[0, 0, 0.45],
                 params=np.array([random_inertia(rng) for _ in range(3)]), Ia=[0.1, 0.2, 0.3],
                 gravity=[0, 0, -9.81])


def test_example_9_1_inertia_matrix_and_gravity():
    cf = closed_form(rx90_first_three())
    S = sp.Symbol
    XX2, XY2, XZ2, YY2, YZ2, ZZ2 = (S(f"{p}2") for p in ("XX", "XY", "XZ", "YY", "YZ", "ZZ"))
    XX3, XY3, XZ3, YY3, YZ3, ZZ3 = (S(f"{p}3") for p in ("XX", "XY", "XZ", "YY", "YZ", "ZZ"))
    MX2, MY2, MX3, MY3, MZ3, M3, ZZ1 = S("MX2"), S("MY2"), S("MX3"), S("MY3"), S("MZ3"), S("M3"), S("ZZ1")
    IA1, IA2, IA3, D3, G3 = S("IA1"), S("IA2"), S("IA3"), S("D3"), S("G3")
    q2, q3 = S("Q2"), S("Q3")
    S2, C2, S23, C23, S3, C3 = sp.sin(q2), sp.cos(q2), sp.sin(q2 + q3), sp.cos(q2 + q3), sp.sin(q3), sp.cos(q3)
    A = {
        (0, 0): IA1 + ZZ1 + S2**2 * XX2 + 2 * C2 * S2 * XY2 + C2**2 * YY2 + S23**2 * XX3 + 2 * C23 * S23 * XY3
        + C23**2 * YY3 + 2 * C2 * C23 * D3 * MX3 - 2 * C2 * S23 * D3 * MY3 + C2**2 * D3**2 * M3,
        (0, 1): S2 * XZ2 + C2 * YZ2 + S23 * XZ3 + C23 * YZ3 - S2 * D3 * MZ3,
        (0, 2): S23 * XZ3 + C23 * YZ3,
        (1, 1): IA2 + ZZ2 + ZZ3 + 2 * C3 * D3 * MX3 - 2 * S3 * D3 * MY3 + D3**2 * M3,
        (1, 2): ZZ3 + C3 * D3 * MX3 - S3 * D3 * MY3,
        (2, 2): IA3 + ZZ3,
    }
    for (i, k), expr in A.items():
        assert zero(cf.A[i, k] - expr), (i, k)
        assert zero(cf.A[k, i] - expr)
    Q = [0, -G3 * (C2 * MX2 - S2 * MY2 + C23 * MX3 - S23 * MY3 + D3 * C2 * M3), -G3 * (C23 * MX3 - S23 * MY3)]
    for i in range(3):
        assert zero(cf.Q[i] - Q[i]), i


def test_example_9_1_from_customized_models():
    """The customized (composite-link) inertia matrix and gravity model, inlined, equal the closed form."""
    robot = rx90_first_three()
    cf = closed_form(robot)
    A = rd.customized_model(robot, "inertia_matrix", symbolic_geometry=True, symbolic_inertia=True).closed_form()
    Q = rd.customized_model(robot, "gravity", symbolic_geometry=True, symbolic_inertia=True).closed_form()
    for i in range(3):
        assert zero(Q[i] - cf.Q[i]), i
        for k in range(3):
            assert zero(A[3 * i + k] - cf.A[i, k]), (i, k)


def test_closed_form_matches_numeric_and_skew_property():
    robot = rd.load("planar2r")
    cf = closed_form(robot, symbolic_geometry=False, symbolic_inertia=False)
    q, qd, qdd = random_state(robot, 0)
    subs = {**dict(zip(cf.q, q)), **dict(zip(cf.qd, qd)), sp.Symbol("G2"): robot.gravity[1]}
    tau = np.array(cf.torques(list(qdd)).subs(subs), dtype=float).ravel()
    want = rd.inverse_dynamics(robot, q, qd, qdd) - rd.friction_torques(robot, qd)
    np.testing.assert_allclose(tau, want, rtol=1e-10, atol=1e-12)
    assert skew_property(cf)


def test_deluca_2r_structure():
    """De Luca: for the 2R arm m11(q2), m12(q2), m22 constant."""
    cf = closed_form(rd.load("planar2r"))
    q1, q2 = cf.q
    assert cf.A[0, 0].has(q2) and not cf.A[0, 0].has(q1)
    assert cf.A[0, 1].has(q2) and not cf.A[1, 1].has(q1) and not cf.A[1, 1].has(q2)


def test_deluca_parallelogram():
    cf = parallelogram()
    m1, m2, m3, m4 = sp.symbols("m1:5")
    I1, I2, I3, I4 = sp.symbols("Ic1:5")
    lc1, lc2, lc3, lc4 = sp.symbols("lc1:5")
    l1, l2 = sp.symbols("l1 l2")
    q1, q2 = cf.q
    c21 = sp.cos(q2 - q1)
    M = sp.Matrix([[I1 + m1 * lc1**2 + I3 + m3 * lc3**2 + m4 * l1**2, (m3 * l2 * lc3 - m4 * l1 * lc4) * c21],
                   [(m3 * l2 * lc3 - m4 * l1 * lc4) * c21, I2 + m2 * lc2**2 + I4 + m4 * lc4**2 + m3 * l2**2]])
    assert all(zero(cf.A[i, k] - M[i, k]) for i in range(2) for k in range(2))
    # structural condition m3 l2 lc3 = m4 l1 lc4: decoupled, constant, no Coriolis terms
    cond = {m3: m4 * l1 * lc4 / (l2 * lc3)}
    assert all(zero(e.subs(cond)) for e in cf.C)


def skew_property(cf):
    """Ȧ − 2C is skew-symmetric when C is built from the Christoffel symbols [9.7]."""
    n = len(cf.q)
    Adot = cf.A.applyfunc(lambda e: sum(sp.diff(e, qk) * qdk for qk, qdk in zip(cf.q, cf.qd)))
    N = Adot - 2 * cf.C
    return all(zero(N[i, k] + N[k, i]) for i in range(n) for k in range(i, n))


def com_parameters(j, lc, axis=0):
    """Khalil's standard parameters of link j in De Luca's CoM terms: mass m_j, principal central inertias
    Ic_jxx, Ic_jyy, Ic_jzz, CoM at distance lc along x_j (axis 0) or z_j (axis 2): J about O_j =
    I_c + m (|c|² 1 − c cᵀ), MS = m c."""
    m, Ixx, Iyy, Izz = sp.symbols(f"m{j} Ic{j}xx Ic{j}yy Ic{j}zz")
    shift = [m * lc**2 if k != axis else 0 for k in range(3)]
    return {sp.Symbol(f"XX{j}"): Ixx + shift[0], sp.Symbol(f"YY{j}"): Iyy + shift[1],
            sp.Symbol(f"ZZ{j}"): Izz + shift[2], sp.Symbol(f"M{j}"): m,
            sp.Symbol(f"{'MX' if axis == 0 else 'MZ'}{j}"): m * lc}


def test_deluca_pr_robot():
    """De Luca's PR robot (built-in ``pr``: a carriage on a horizontal rail z0, a rod turning about an axis
    normal to the vertical plane, x0 up): M = [[m1 + m2, −m2 lc2 c2], [−m2 lc2 c2, Ic2zz + m2 lc2²]]
    (m11, m22 constant, m12(q2): the slides' structure) and g = (0, −m2 g0 lc2 s2)."""
    cf = closed_form(rd.load("pr"))
    lc2, g0 = sp.symbols("lc2 g0")
    subs = {**com_parameters(2, lc2), sp.Symbol("M1"): sp.Symbol("m1"), sp.Symbol("G1"): -g0}
    m1, m2, Izz2 = sp.symbols("m1 m2 Ic2zz")
    q1, q2 = cf.q
    M = sp.Matrix([[m1 + m2, -m2 * lc2 * sp.cos(q2)], [-m2 * lc2 * sp.cos(q2), Izz2 + m2 * lc2**2]])
    A = cf.A.xreplace(subs)
    assert all(zero(A[i, k] - M[i, k]) for i in range(2) for k in range(2))
    assert zero(cf.Q[0]) and zero(cf.Q[1].xreplace(subs) + m2 * g0 * lc2 * sp.sin(q2))
    assert not cf.A.has(q1) and not cf.A[0, 0].has(q2) and not cf.A[1, 1].has(q2)
    assert skew_property(cf)


def articulated_3r():
    """De Luca's 3R articulated robot (the first three RX-90 frames, Example 9.1) under his simplifying
    assumptions: centres of mass on the link axes (z1 for link 1, x2 and x3 for links 2 and 3), principal
    central axes along the frame axes, no rotors."""
    I = [np.diag([0.3, 0.4, 0.5]), np.diag([0.01, 0.2, 0.2]), np.diag([0.01, 0.1, 0.1])]
    c = [[0, 0, 0.2], [0.25, 0, 0], [0.2, 0, 0]]
    params = np.array([rd.standard_from_com(m, cj, Ij) for m, cj, Ij in zip([4.0, 3.0, 2.0], c, I)])
    return Robot(name="deluca3r", sigma=[0, 0, 0], alpha=[0, np.pi / 2, 0], d=[0, 0, 0.5], params=params,
                 gravity=[0, 0, -9.81])


def test_deluca_3r_articulated_robot():
    """M = [[m11(q2, q3), 0, 0], [0, m22(q3), m23(q3)], [0, m23(q3), m33]] (the slides' structure; the
    lower-right block is that of the 2R arm) with, l2 = D3,

        m11 = Ic1zz + Ic2xx s2² + Ic2yy c2² + m2 (lc2 c2)² + Ic3xx s23² + Ic3yy c23² + m3 (l2 c2 + lc3 c23)²,
        m22 = Ic2zz + m2 lc2² + Ic3zz + m3 (l2² + lc3² + 2 l2 lc3 c3),  m23 = Ic3zz + m3 (lc3² + l2 lc3 c3),
        m33 = Ic3zz + m3 lc3²,  g = g0 (0, m2 lc2 c2 + m3 (l2 c2 + lc3 c23), m3 lc3 c23)."""
    cf = closed_form(articulated_3r())
    lc1, lc2, lc3, l2, g0 = sp.symbols("lc1 lc2 lc3 l2 g0")
    subs = {**com_parameters(1, lc1, axis=2), **com_parameters(2, lc2), **com_parameters(3, lc3),
            sp.Symbol("D3"): l2, sp.Symbol("G3"): -g0}
    m2, m3 = sp.symbols("m2 m3")
    Izz1, Ixx2, Iyy2, Izz2, Ixx3, Iyy3, Izz3 = sp.symbols("Ic1zz Ic2xx Ic2yy Ic2zz Ic3xx Ic3yy Ic3zz")
    q1, q2, q3 = cf.q
    c2, s2, c3 = sp.cos(q2), sp.sin(q2), sp.cos(q3)
    c23, s23 = sp.cos(q2 + q3), sp.sin(q2 + q3)
    m11 = (Izz1 + Ixx2 * s2**2 + Iyy2 * c2**2 + m2 * (lc2 * c2) ** 2 + Ixx3 * s23**2 + Iyy3 * c23**2
           + m3 * (l2 * c2 + lc3 * c23) ** 2)
    m22 = Izz2 + m2 * lc2**2 + Izz3 + m3 * (l2**2 + lc3**2 + 2 * l2 * lc3 * c3)
    m23 = Izz3 + m3 * (lc3**2 + l2 * lc3 * c3)
    M = sp.Matrix([[m11, 0, 0], [0, m22, m23], [0, m23, Izz3 + m3 * lc3**2]])
    A = cf.A.xreplace(subs)
    assert all(zero(A[i, k] - M[i, k]) for i in range(3) for k in range(3))
    g = [0, g0 * (m2 * lc2 * c2 + m3 * (l2 * c2 + lc3 * c23)), g0 * m3 * lc3 * c23]
    assert all(zero(cf.Q[i].xreplace(subs) - g[i]) for i in range(3))
    assert not cf.A.has(q1) and not cf.A[1:, 1:].has(q2)
    assert skew_property(cf)
