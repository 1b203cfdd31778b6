"""Closed-form base parameters of a floating base (robodyn.parameters.floating.floating_base_parameters) against
the QR method on the floating regressor: same count, same kept columns, and Y_B K_B = the floating inverse
dynamics to 1e-10 on random floating trees and on example-robot-data's quadrupeds."""

from __future__ import annotations


import numpy as np
import pytest
import sympy
from hypothesis import given, settings, strategies as st

import robodyn as rd
import robodyn.dynamics.floating as fl
from robodyn.parameters.floating import floating_base_parameters, stacked_floating_regressor
from tests.support.pin_compare import assert_rel
from tests.support.random_robots import random_inertia, random_robot
from tests.support.floating import legged_robot, random_floating, random_free_state


def _check(robot, friction, seed=0, qr=True):
    """The rules against QR (``qr``), or, for a large tree, against the rank of the stacked floating regressor
    (an SVD: the count of QR, without its grouping coefficients) with the kept columns independent."""
    rules = floating_base_parameters(robot, friction=friction)
    if qr:
        qr = floating_base_parameters(robot, method="numeric", friction=friction)
        assert rules.count == qr.count and rules.standard == qr.standard
    else:
        W = stacked_floating_regressor(robot, friction)
        W = W / np.maximum(np.linalg.norm(W, axis=0), 1e-300)
        assert np.linalg.matrix_rank(W, 1e-8) == np.linalg.matrix_rank(W[:, rules.columns], 1e-8) == rules.count
    q, v, a = random_free_state(robot.n, seed, (5,))
    g = np.random.default_rng(seed).normal(size=3)
    bare = robot.replace(Fst=None) if friction else robot.replace(Fc=None, Fv=None, Foff=None, Fst=None)
    ref = fl.floating_inverse_dynamics(bare, q, v, a, gravity=g)
    assert_rel(rules.regressor(q, v, a, gravity=g) @ rules.values, ref, 1e-10)
    if qr:
        assert_rel(qr.regressor(q, v, a, gravity=g) @ qr.values, ref, 1e-10)
    return rules


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), tree=st.booleans(), friction=st.booleans())
def test_closed_form_rules_equal_qr_onrandom_floating_trees(seed, tree, friction):
    robot = random_floating(seed, tree)
    moving = robot.sigma != 2
    robot = robot.replace(Ia=0.1 * moving, Fv=0.2 * moving, Fc=0.05 * moving, Foff=0.01 * moving)
    rules = _check(robot, friction, seed % 1000)
    # nothing of the base body is lost: its ten parameters are all base parameters
    assert rules.standard[:10] == tuple(f"{p}0" for p in rd.PARAMETER_NAMES)


def test_revolute_child_of_the_base_groups_into_the_base_body():
    """Theorem 9.1 with the base body as antecedent: XXR_j = XX_j − YY_j at a leaf, and YY_j, MZ_j, M_j reach
    the antecedent, down to the base body: MR0 = M0 + M1 + M2 + M3, the total mass (a free body's)."""
    robot = random_robot(4, nf=3, prismatic=False, friction=False)
    robot = robot.replace(base="floating", base_params=random_inertia(np.random.default_rng(5)))
    assert list(robot.sigma) == [0, 0, 0]
    bp = floating_base_parameters(robot)
    e = dict(zip(bp.standard, bp.expressions))
    XX3, YY3 = sympy.symbols("XX3 YY3")
    assert sympy.expand(e["XX3"] - (XX3 - YY3)) == 0
    assert sympy.expand(e["M0"] - sympy.Add(*sympy.symbols("M0 M1 M2 M3"))) == 0
    assert {"YY1", "MZ1", "M1"} <= set(bp.grouped) and bp.rules["YY1"] == "Theorem 9.1 [9.53]" and "MR0" in bp.names
    assert bp.count == 10 + 3 * 7 + 3  # base body, 7 per revolute frame, Ia of each joint


@pytest.mark.filterwarnings("ignore:robot 'anymal'")
@pytest.mark.parametrize("name", ["solo12.urdf", pytest.param("anymal.urdf", marks=pytest.mark.slow)])
def test_closed_form_rules_equal_qr_on_quadrupeds(name):
    robot = legged_robot(name)
    rules = _check(robot, friction=True, qr=name == "solo12.urdf")
    assert rules.count == 142  # 10 (base body) + 12 × (7 + Ia + 3 friction); the rest of the frames are fixed


def test_floating_base_parameters_errors():
    with pytest.raises(rd.InputError, match="fixed base"):
        floating_base_parameters(rd.load("rx90"))
    with pytest.raises(rd.InputError, match="method = 'qr'"):
        floating_base_parameters(random_floating(1), method="qr")
