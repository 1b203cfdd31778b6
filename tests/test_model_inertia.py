"""Standard parameters ⇄ (mass, centre of mass, inertia about it), [9.12], and physical consistency."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import robodyn as rd
from robodyn.model.inertia import check_physical, six_from_tensor, skew, tensor_from_six
from tests.support.random_robots import random_inertia


def test_point_mass_is_the_parallel_axis_theorem():
    """A point mass m at s: J = m (sᵀs I − s sᵀ), MS = m s (the definition of the standard parameters)."""
    s = np.array([0.3, -0.2, 0.5])
    p = rd.standard_from_com(2.0, s, np.zeros((3, 3)))
    J = 2.0 * (s @ s * np.eye(3) - np.outer(s, s))
    np.testing.assert_allclose(p[:6], six_from_tensor(J), rtol=1e-15, atol=1e-16)
    np.testing.assert_allclose(p[6:9], 2.0 * s, rtol=1e-15)
    assert p[9] == 2.0


def test_standard_from_com_reads_six_vectors_and_matrices_alike():
    IG = np.array([[0.2, 0.01, -0.02], [0.01, 0.3, 0.03], [-0.02, 0.03, 0.25]])
    a = rd.standard_from_com(1.5, [0.1, 0.2, 0.3], IG)
    b = rd.standard_from_com(1.5, [0.1, 0.2, 0.3], six_from_tensor(IG))
    np.testing.assert_array_equal(a, b)
    assert rd.PARAMETER_NAMES == ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M")
    # XX about O: I_Gxx + m (y² + z²)
    assert a[0] == pytest.approx(0.2 + 1.5 * (0.2**2 + 0.3**2), rel=1e-14)
    # XY about O: I_Gxy − m x y  (J = I_G − m Ŝ Ŝ)
    assert a[1] == pytest.approx(0.01 - 1.5 * 0.1 * 0.2, rel=1e-14)


@given(st.integers(0, 2**31 - 1))
def test_com_roundtrip(seed):
    p = random_inertia(np.random.default_rng(seed))
    M, S, IG = rd.com_from_standard(p)
    np.testing.assert_allclose(rd.standard_from_com(M, S, IG), p, rtol=1e-12, atol=1e-14)
    check_physical(p, "random")


def test_massless_body():
    M, S, IG = rd.com_from_standard([0, 0, 0, 0, 0, 0.35, 0, 0, 0, 0])
    assert M == 0.0
    np.testing.assert_array_equal(S, np.zeros(3))
    np.testing.assert_array_equal(IG, np.diag([0, 0, 0.35]))
    check_physical([0, 0, 0, 0, 0, 0.0, 0, 0, 0, 0], "empty")  # a massless, inertia-free frame is fine
    check_physical([0, 0, 0, 0, 0, 0.35, 0, 0, 0, 0], "PUMA 560 link 1")  # lumped inertia: no triangle inequality
    with pytest.raises(rd.NonPhysicalInertiaError, match=r"not positive semi-definite"):
        check_physical([0, 0, 0, 0, 0, -0.35, 0, 0, 0, 0], "L")
    with pytest.raises(rd.NonPhysicalInertiaError, match=r"link 3: fields MX, MY, MZ = \[0.0, 0.1, 0.0\] are nonzero while M = 0"):
        check_physical([0, 0, 0, 0, 0, 0, 0, 0.1, 0, 0], "link 3")


def test_check_physical_messages():
    with pytest.raises(rd.NonPhysicalInertiaError, match=r"L: field M = -1.0 is negative; a mass must be >= 0 kg"):
        check_physical([1, 0, 0, 1, 0, 1, 0, 0, 0, -1.0], "L")
    with pytest.raises(rd.NonPhysicalInertiaError, match=r"L: field YY is not finite"):
        check_physical([1, 0, 0, np.nan, 0, 1, 0, 0, 0, 1.0], "L")
    with pytest.raises(rd.NonPhysicalInertiaError, match=r"triangle inequality I1 \+ I2 >= I3"):
        check_physical(rd.standard_from_com(1, [0, 0, 0], np.diag([0.1, 0.1, 0.3])), "L")
    with pytest.raises(rd.NonPhysicalInertiaError, match=r"not positive semi-definite"):
        check_physical(rd.standard_from_com(1, [0, 0, 0], [[0.1, 0.2, 0], [0.2, 0.1, 0], [0, 0, 0.1]]), "L")
    # J about O_j looks fine, but about the centre of mass it is not: the check works on I_G, not on J
    p = np.concatenate([six_from_tensor(np.diag([0.01, 0.01, 0.01])), [0.5, 0, 0], [1.0]])
    with pytest.raises(rd.NonPhysicalInertiaError, match=r"not positive semi-definite"):
        check_physical(p, "L")
    # the limiting cases are accepted: a thin rod (I1 + I2 = I3 in a plane) and a point mass
    check_physical(rd.standard_from_com(1, [0.1, 0, 0], np.diag([0.0, 0.1, 0.1])), "rod")
    check_physical(rd.standard_from_com(1, [0.1, 0.2, 0], np.zeros(3 * 3).reshape(3, 3)), "point")


def test_skew_and_tensor_helpers():
    a, b = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.4, -1.0])
    np.testing.assert_allclose(skew(a) @ b, np.cross(a, b), rtol=1e-15)
    batch = np.random.default_rng(0).normal(size=(4, 2, 3))
    assert skew(batch).shape == (4, 2, 3, 3)
    six = np.arange(6.0)
    T = tensor_from_six(six)
    np.testing.assert_array_equal(T, T.T)
    np.testing.assert_array_equal(six_from_tensor(T), six)
