"""Inertial-coupling analysis: De Luca's Cartesian, skew-Cartesian, PR, 2R and 3R structures; Khalil's property c."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import robodyn as rd
from robodyn.analysis import inertial_couplings
from tests.support.random_robots import random_robot

P = rd.standard_from_com
I = lambda a, b, c: np.diag([a, b, c])  # noqa: E731,E741


def structure(cs):
    n = cs.n
    return [[cs.inertia_entry(i, j) for j in range(1, n + 1)] for i in range(1, n + 1)], [cs.gravity_entry(i) for i in range(1, n + 1)]


def articulated_3r():
    """Anthropomorphic 3R (axis 1 vertical, 2 and 3 horizontal), CoMs on the link axes, principal inertias along the
    frames: De Luca's 'simplifying assumptions on the CoMs'."""
    return rd.Robot(
        name="3R", sigma=[0, 0, 0], alpha=[0, np.pi / 2, 0], d=[0, 0, 1.0], gravity=[0, 0, -9.81],
        params=[P(5, [0, 0, 0.3], I(0.2, 0.2, 0.1)), P(3, [0.4, 0, 0], I(0.01, 0.2, 0.2)), P(2, [0.3, 0, 0], I(0.01, 0.1, 0.1))],
    )


def pr_robot():
    """Planar PR: carriage on a horizontal rail (z1 = z0 along the rail, x0 up), rod turning about an axis ⟂ the rail."""
    return rd.Robot(name="PR", sigma=[1, 0], alpha=[0, -np.pi / 2], gravity=[-9.81, 0, 0],
                    params=[P(5, [0, 0, 0], I(0.05, 0.05, 0.05)), P(2, [0.5, 0, 0], I(0.001, 0.2, 0.2))])


def test_planar_2r():
    """2R: m11(q2), m12(q2), m22 constant; in a vertical plane g1(q1, q2), g2(q1, q2)."""
    cs = inertial_couplings(rd.load("planar2r"))
    inertia, gravity = structure(cs)
    assert inertia == [["m11(q2)", "m12(q2)"], ["m21(q2)", "m22 const"]]
    assert gravity == ["g1(q1, q2)", "g2(q1, q2)"]
    assert cs.inertia_variables == [[(2,), (2,)], [(2,), ()]]
    np.testing.assert_array_equal(cs.inertia_constant, [[False, False], [False, True]])


def test_pr():
    """PR: m11, m22 constant, m12(q2); the rail is horizontal so g1 = 0 and g2(q2)."""
    inertia, gravity = structure(inertial_couplings(pr_robot()))
    assert inertia == [["m11 const", "m12(q2)"], ["m21(q2)", "m22 const"]]
    assert gravity == ["g1 = 0", "g2(q2)"]


def test_articulated_3r():
    """3R: m11(q2, q3), m12 = m13 = 0, m22(q3), m23(q3), m33 constant (bottom-right block as the 2R); g1 = 0."""
    inertia, gravity = structure(inertial_couplings(articulated_3r()))
    assert inertia == [
        ["m11(q2, q3)", "m12 = 0", "m13 = 0"],
        ["m21 = 0", "m22(q3)", "m23(q3)"],
        ["m31 = 0", "m32(q3)", "m33 const"],
    ]
    assert gravity == ["g1 = 0", "g2(q2, q3)", "g3(q2, q3)"]


def test_cartesian_and_skew_cartesian():
    """Cartesian PPP (orthogonal axes): A diagonal and constant; 'skew' PP (axes at 45°): constant with m12 ≠ 0."""
    cart = rd.Robot(name="PPP", sigma=[1, 1, 1], alpha=[0, -np.pi / 2, np.pi / 2], theta=[0, np.pi / 2, 0],
                    params=[P(10, [0, 0, 0], I(0.4, 0.4, 0.1)), P(6, [0, 0, 0], I(0.2, 0.2, 0.05)), P(3, [0, 0, 0.1], I(0.03, 0.03, 0.005))])
    inertia, gravity = structure(inertial_couplings(cart))
    assert inertia == [["m11 const", "m12 = 0", "m13 = 0"], ["m21 = 0", "m22 const", "m23 = 0"], ["m31 = 0", "m32 = 0", "m33 const"]]
    assert gravity == ["g1 const", "g2 = 0", "g3 = 0"]
    skew = rd.Robot(name="PP", sigma=[1, 1], alpha=[0, np.pi / 4], params=[P(4, [0, 0, 0], I(0.1, 0.1, 0.1)), P(2, [0, 0, 0.1], I(0.1, 0.1, 0.1))])
    inertia, _ = structure(inertial_couplings(skew))
    assert inertia == [["m11 const", "m12 const"], ["m21 const", "m22 const"]]


@given(seed=st.integers(0, 2**31 - 1))
def test_khalil_property_c_on_random_serial_robots(seed):
    """Khalil & Dombre §9.3.3.3 c): for a serial robot A_ij depends only on q_{k+1}..q_n, k = min(i, j)."""
    robot = random_robot(seed, fixed=True)
    cs = inertial_couplings(robot, samples=4, seed=seed)
    n = robot.n
    for i in range(n):
        for j in range(n):
            assert not np.any(cs.inertia_depends[i, j, : min(i, j) + 1])
    np.testing.assert_array_equal(cs.inertia_depends, np.swapaxes(cs.inertia_depends, 0, 1))  # symmetry of A


def test_reproducible_and_errors():
    r = rd.load("planar2r")
    a, b = inertial_couplings(r, seed=3), inertial_couplings(r, seed=4)
    # planar 2R closed form: A11 and A12 = A21 depend on q2 only, A22 is constant, whatever the samples
    expected = np.zeros((2, 2, 2), bool)
    expected[0, 0, 1] = expected[0, 1, 1] = expected[1, 0, 1] = True
    np.testing.assert_array_equal(a.inertia_depends, expected)
    np.testing.assert_array_equal(b.inertia_depends, expected)
    assert a.samples == 16 and a.rtol == 1e-9
    with pytest.raises(rd.InputError, match="at least 2"):
        inertial_couplings(r, samples=1)
    with pytest.raises(rd.InputError, match="prismatic_range"):
        inertial_couplings(pr_robot(), prismatic_range=(1, -1))


def test_builtin_robots():
    """The built-in pr, planar3r and cartesian3p robots show De Luca's structures."""
    inertia, gravity = structure(inertial_couplings(rd.load("pr")))
    assert inertia == [["m11 const", "m12(q2)"], ["m21(q2)", "m22 const"]] and gravity == ["g1 = 0", "g2(q2)"]
    inertia, _ = structure(inertial_couplings(rd.load("planar3r")))
    assert inertia == [
        ["m11(q2, q3)", "m12(q2, q3)", "m13(q2, q3)"],
        ["m21(q2, q3)", "m22(q3)", "m23(q3)"],
        ["m31(q2, q3)", "m32(q3)", "m33 const"],
    ]
    cs = inertial_couplings(rd.load("cartesian3p"))
    assert np.all(cs.inertia_constant == np.eye(3, dtype=bool)) and np.all(cs.inertia_zero == ~np.eye(3, dtype=bool))
