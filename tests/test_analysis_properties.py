"""Property checks: A symmetric positive definite, Ȧ − 2C skew-symmetric, passivity."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import robodyn as rd
from robodyn.analysis import check_inertia_matrix, check_passivity, check_skew_symmetry, properties
from tests.support.random_robots import random_robot, random_state


@given(seed=st.integers(0, 2**31 - 1), tree=st.booleans())
def test_random_robots_have_all_properties(seed, tree):
    robot = random_robot(seed, tree=tree, fixed=True)
    q, qd, _ = random_state(robot, seed, batch=(3,))
    a = check_inertia_matrix(robot, q)
    assert a.ok and a.asymmetry.shape == (3,) and np.all(a.eig_min > 0) and np.all(a.condition >= 1)
    s = check_skew_symmetry(robot, q, qd)
    assert s.ok and np.all(s.residual <= 1e-10)
    p = check_passivity(robot, q, qd)
    assert p.ok and np.all(p.power_residual <= 1e-10) and np.all(p.friction_power >= 0)


def test_singular_inertia_matrix_detected():
    """A massless second link without rotor makes A singular: positive_definite is False, condition inf."""
    P = rd.standard_from_com
    robot = rd.Robot(name="massless", sigma=[0, 0], d=[0, 1], params=[P(1, [0.5, 0, 0], np.eye(3) * 0.1), np.zeros(10)])
    a = check_inertia_matrix(robot, np.zeros((2, 2)))
    assert a.symmetric and not a.positive_definite and not a.ok
    np.testing.assert_allclose(a.eig_min, 0, atol=1e-15)
    np.testing.assert_allclose(a.eig_max, 0.35, rtol=1e-12)  # I_zz about O_1 = 0.1 + 1·0.5²


def test_other_factorization_is_not_skew_but_still_lossless(monkeypatch):
    """For the 2R, C̃ = h[[−2q̇2, −q̇2], [q̇1, 0]] (h = m2 l1 lc2 sin q2 = ½ sin q2) gives the same C̃q̇ as the
    Christoffel C = h[[−q̇2, −(q̇1+q̇2)], [q̇1, 0]] but Ȧ − 2C̃ is not skew; q̇ᵀ(Ȧ − 2C̃)q̇ = 0 holds for any factorization."""
    robot = rd.load("planar2r")
    q, qd = np.array([[0.3, 0.9], [1.0, -0.4]]), np.array([[1.0, -2.0], [0.5, 0.7]])
    h = 0.5 * np.sin(q[:, 1])
    C = rd.coriolis_matrix(robot, q, qd)
    christoffel = h[:, None, None] * np.stack([np.stack([-qd[:, 1], -qd.sum(1)], -1), np.stack([qd[:, 0], 0 * h], -1)], -2)
    np.testing.assert_allclose(C, christoffel, rtol=0, atol=1e-14)
    other = h[:, None, None] * np.stack([np.stack([-2 * qd[:, 1], -qd[:, 1]], -1), np.stack([qd[:, 0], 0 * h], -1)], -2)
    monkeypatch.setattr(properties, "coriolis_matrix", lambda robot, q, qd: other)
    s = check_skew_symmetry(robot, q, qd)
    assert not s.skew_symmetric and np.all(s.residual > 0.05)
    assert check_passivity(robot, q, qd).lossless


def test_friction_power_and_offset():
    """q̇ᵀΓ_f = Σ F_v q̇² + F_c |q̇| ≥ 0; a constant offset F_off can supply power and is reported."""
    robot = rd.load("planar2r").replace(Fv=[0.5, 0.2], Fc=[0.1, 0.3])
    qd = np.array([1.0, -2.0])
    p = check_passivity(robot, np.zeros(2), qd)
    np.testing.assert_allclose(p.friction_power, 0.5 + 0.8 + 0.1 + 0.6, rtol=1e-14)
    assert p.dissipative
    p = check_passivity(robot.replace(Foff=[-5.0, 0]), np.zeros(2), qd)
    assert not p.dissipative and p.lossless


def test_shape_errors():
    with pytest.raises(rd.InputError, match="'q'"):
        check_inertia_matrix(rd.load("planar2r"), np.zeros(3))
    with pytest.raises(rd.InputError, match="'qd'"):
        check_passivity(rd.load("planar2r"), np.zeros(2), np.zeros(3))
