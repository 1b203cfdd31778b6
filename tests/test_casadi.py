"""rd.to_casadi: the customized models as casadi.Function against the NumPy functions (1e-12 relative), and
CasADi's own derivatives of them against robodyn's analytic derivatives."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn.symbolic.casadi_model import to_casadi
from tests.support.random_robots import random_robot, random_state

ca = pytest.importorskip("casadi")

ARGUMENTS = {"inverse_dynamics": (0, 1, 2), "forward_dynamics": (0, 1, 2), "inertia_matrix": (0,),
             "gravity_torques": (0,), "bias_torques": (0, 1)}


def _value(f, *args):
    out = np.array(f(*args))
    return out[:, 0] if out.shape[1] == 1 else out


def _rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


@pytest.mark.parametrize("name", ["puma560", "panda", "stanford"])
@pytest.mark.parametrize("kind", list(ARGUMENTS))
def test_casadi_functions_equal_the_numpy_functions(name, kind):
    robot = rd.load(name)
    f = to_casadi(robot, kind)
    assert f.name_in() == [("q", "qd", "tau" if kind == "forward_dynamics" else "qdd")[i] for i in ARGUMENTS[kind]]
    assert f.name_out() == [kind]
    for seed in range(3):
        state = random_state(robot, seed)
        args = [state[i] for i in ARGUMENTS[kind]]
        assert _rel(_value(f, *args), getattr(rd, kind)(robot, *args)) < 1e-12


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), tree=st.booleans(), friction=st.booleans())
def test_casadi_on_random_robots(seed, tree, friction):
    """Serial and tree robots with revolute, prismatic and fixed frames, rotor inertias, friction on or off."""
    robot = random_robot(seed, tree=tree, fixed=True)
    q, qd, x = random_state(robot, seed)
    for kind in ("inverse_dynamics", "forward_dynamics"):
        f = to_casadi(robot, kind, friction=friction)
        want = getattr(rd, kind)(robot, q, qd, x, **({} if friction else {"friction": False}))
        assert _rel(_value(f, q, qd, x), want) < 1e-12


def test_casadi_derivatives_equal_robodyns_analytic_derivatives():
    """jacobian() of the CasADi graph against rd.inverse_dynamics_derivatives and forward_dynamics_derivatives
    (sign's derivative is 0 in CasADi: the Dirac of the Coulomb step left out, as robodyn's)."""
    robot = rd.load("panda")
    q, qd, x = random_state(robot, 3)
    sq, sqd, sx = (ca.SX.sym(k, robot.n) for k in ("q", "qd", "x"))
    tau = to_casadi(robot, "inverse_dynamics")(sq, sqd, sx)
    qdd = to_casadi(robot, "forward_dynamics")(sq, sqd, sx)
    J = ca.Function("J", [sq, sqd, sx], [ca.jacobian(tau, sq), ca.jacobian(tau, sqd), ca.jacobian(qdd, sq),
                                          ca.jacobian(qdd, sqd), ca.jacobian(qdd, sx)])
    ours = [np.array(m) for m in J(q, qd, x)]
    inv = rd.inverse_dynamics_derivatives(robot, q, qd, x)
    fwd = rd.forward_dynamics_derivatives(robot, q, qd, x)
    for got, want in zip(ours, list(inv) + list(fwd)):
        assert _rel(got, want) < 1e-11


def test_to_casadi_bad_input():
    with pytest.raises(rd.InputError, match="kind"):
        to_casadi(rd.load("planar2r"), "regressor")
    with pytest.raises(rd.InputError):
        to_casadi("planar2r", "inverse_dynamics")
    with pytest.raises(rd.InputError, match="friction"):
        to_casadi(rd.load("planar2r"), "inverse_dynamics", friction="yes")
