"""Customized models are traces of robodyn's own recursions (robodyn.symbolic.customize): every kind and every
method equals the numeric function with that method to 1e-12 on random trees with prismatic joints and fixed
frames, whatever constants are kept by name; the named constants (Const) ride through the tracer unchanged."""

import warnings

import numpy as np
import pytest
import symengine as se
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn.dynamics.trace import Const, Rec, Tape
from robodyn.symbolic.models import METHODS, customized_model
from tests.support.random_robots import random_robot, random_state

NUMERIC = {"inverse_dynamics": rd.inverse_dynamics, "inertia_matrix": rd.inertia_matrix,
           "forward_dynamics": rd.forward_dynamics}


def reference(robot, kind, method, q, qd, qdd, tau):
    """(numeric result, arguments of the model) for ``kind`` by ``method`` (the default where rd.* has no method=)."""
    if kind == "inverse_dynamics":
        return rd.inverse_dynamics(robot, q, qd, qdd, method=method), (q, qd, qdd)
    if kind == "gravity_torques":
        return rd.gravity_torques(robot, q), (q,)
    if kind == "bias_torques":
        return rd.bias_torques(robot, q, qd), (q, qd)
    if kind == "inertia_matrix":
        return rd.inertia_matrix(robot, q, method=method), (q,)
    if kind == "forward_dynamics":
        return rd.forward_dynamics(robot, q, qd, tau, method=method), (q, qd, tau)
    return rd.regressor(robot, q, qd, qdd), (q, qd, qdd)


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * max(1.0, float(np.abs(b).max())))


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), tree=st.booleans(), named=st.booleans())
def test_every_kind_and_method_equals_the_numeric_function(seed, tree, named):
    robot = random_robot(seed, nf=int(np.random.default_rng(seed).integers(2, 6)), tree=tree, fixed=True)
    q, qd, qdd = random_state(robot, seed + 1, (3,))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    for kind, methods in METHODS.items():
        for method in methods:
            m = customized_model(robot, kind, method=method, symbolic_geometry=named, symbolic_inertia=named)
            ref, args = reference(robot, kind, method, q, qd, qdd, tau)
            close(m.numpy_function()(*args), ref)


def test_wrenches_and_gravity_inputs_on_a_tree():
    robot = random_robot(7, nf=5, tree=True, fixed=True)
    q, qd, qdd = random_state(robot, 3, (4,))
    rng = np.random.default_rng(0)
    w, g = rng.uniform(-1, 1, (4, robot.nf, 6)), rng.uniform(-10, 10, (4, 3))
    for method in METHODS["inverse_dynamics"]:
        m = customized_model(robot, "inverse_dynamics", method=method, gravity="input", wrenches="all")
        close(m.numpy_function()(q, qd, qdd, g, w),
              rd.inverse_dynamics(robot, q, qd, qdd, wrenches=w, gravity=g, method=method))
    tau = rd.inverse_dynamics(robot, q, qd, qdd, wrenches=w, gravity=g)
    for method in METHODS["forward_dynamics"]:
        m = customized_model(robot, "forward_dynamics", method=method, gravity="input", wrenches="all")
        close(m.numpy_function()(q, qd, tau, g, w), qdd)


def test_constants_kept_by_name():
    """With symbolic geometry and inertia the model reads D3, RL4, XX2, ... as constants (their values in
    ``.constants``); zeros and quarter turns stay numbers and vanish."""
    robot = rd.load("rx90")
    m = customized_model(robot, "inverse_dynamics", symbolic_geometry=True, symbolic_inertia=True)
    names = {str(s) for s in m.constants}
    assert {"D3", "RL4", "G3", "ZZ1", "IA6", "FV1"} <= names
    assert not {"AL2", "TH2", "D2", "G1"} & names  # π/2, 0 and zero values are numbers
    assert m.constants[se.Symbol("D3")] == pytest.approx(robot.d[2])
    text = str(m)
    assert "D3" in text and "GAM6 = " in text


def test_methods_are_named_as_the_numeric_functions():
    robot = rd.load("planar2r")
    assert customized_model(robot, "ddm", method="aba").options["method"] == "recursive"
    assert customized_model(robot, "inm", method="crba").options["method"] == "composite"
    assert "Gibbs-Appell" in str(customized_model(robot, "inertia_matrix", method="gibbs_appell"))
    with pytest.raises(rd.InputError, match="customized inertia_matrix models are composite, gibbs_appell"):
        customized_model(robot, "inertia_matrix", method="walker_orin")
    with pytest.raises(rd.InputError, match="customized regressor models"):
        customized_model(robot, "regressor", method="gibbs_appell")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = customized_model(robot, "ddm", ddm_method="cholesky")
    assert m.options["method"] == "cholesky" and caught[0].category is DeprecationWarning
    with pytest.raises(rd.InputError, match="ddm_method"):
        customized_model(robot, "inverse_dynamics", ddm_method="cholesky")


def test_pivot_checks_name_their_joints():
    """The direct models test each pivot that depends on q (a constant pivot is tested when the model is made)."""
    robot = rd.load("rx90")
    assert [c[0] for c in customized_model(robot, "ddm").checks] == ["j5", "j4", "j3", "j2", "j1"]
    assert [c[0] for c in customized_model(robot, "ddm", method="cholesky").checks] == [f"j{k}" for k in range(1, 7)]


def test_const_arithmetic_keeps_the_expression():
    a, b = Const(2.0, se.Symbol("A")), Const(3.0, se.Symbol("B"))
    c = a * b - 1.5
    assert isinstance(c, Const) and float(c) == 4.5 and c.expr == se.Symbol("A") * se.Symbol("B") - 1.5
    assert -a == -2.0 and (-a).expr == -se.Symbol("A") and abs(-a).expr == se.Symbol("A")
    zero = a - a  # the expression is the number 0: a plain float
    assert type(zero) is float and zero == 0.0
    assert isinstance(Const(0.0, se.Symbol("Z")) * 2.0, Const)  # a named constant of value 0 stays named


def test_a_named_constant_is_never_folded_by_the_tracer():
    tape = Tape()
    (x,) = tape.input("x", [0.7])
    one, zero = Const(1.0, se.Symbol("M")), Const(0.0, se.Symbol("XY"))
    y = one * x
    assert isinstance(y, Rec) and tape.ops[y.k] == ("cmul", one, x.k)  # M·x, not x
    z = zero * x + x  # XY·x + x = (XY + 1)·x: the coefficients merge, XY stays
    assert isinstance(z, Rec) and z.v == pytest.approx(0.7)
    assert tape.ops[z.k][0] == "cmul" and tape.ops[z.k][1].expr == se.Symbol("XY") + 1
    assert (zero * x).s == 1 and tape.ops[(zero * x).k][1].expr == se.Symbol("XY")


def test_stribeck_friction_with_named_coefficients():
    """Γ_f with a Stribeck term [9.28] (|q̇|^B_st recorded as a power of a constant exponent) in the inverse and
    direct models, its coefficients as numbers or named (FST1, KST1, BST1)."""
    robot = rd.load("planar2r").replace(Fst=[0.5, 0.4], kst=[2.0, 3.0], Bst=[1.0, 2.5], Fc=[0.3, 0.2], Fv=[0.1, 0.2])
    q, qd, qdd = random_state(robot, 4, (5,))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    for named in (False, True):
        m = customized_model(robot, "inverse_dynamics", symbolic_inertia=named)
        close(m.numpy_function()(q, qd, qdd), tau)
        close(customized_model(robot, "forward_dynamics", symbolic_inertia=named).numpy_function()(q, qd, tau), qdd)
    assert {"FST1", "KST2", "BST2"} <= {str(s) for s in m.constants}
    assert "**BST2" in str(m)
