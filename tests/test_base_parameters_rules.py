"""Closed-form rules against the numerical QR method on random and purpose-built robots (Khalil & Dombre §9.4)."""

import numpy as np
import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from robodyn import Robot, base_parameters, inverse_dynamics, load
from robodyn.dynamics.newton_euler import friction_torques
from robodyn.errors import InputError
from robodyn.kinematics import base_poses
from robodyn.parameters.base import right_angled
from robodyn.parameters.numeric import random_states, stacked_regressor
from robodyn.parameters.regressor import standard_parameter_names
from tests.support.random_robots import random_inertia, random_robot

PI = np.pi


def assert_reproduces_inverse_dynamics(bp, friction=False):
    robot = bp.robot
    q, qd, qdd = random_states(robot, 8, seed=11)
    tau = inverse_dynamics(robot, q, qd, qdd)
    if not friction:
        tau = tau - friction_torques(robot, qd)
    err = np.abs(bp.regressor(q, qd, qdd) @ bp.values - tau).max() / np.abs(tau).max()
    assert err <= 1e-10


def rank(W):
    W = W / np.maximum(np.linalg.norm(W, axis=0), 1e-300)
    s = np.linalg.svd(W, compute_uv=False)
    return int(np.sum(s > 1e-8 * s[0]))


def assert_rules_match_qr(robot):
    bs = base_parameters(robot, method="symbolic", friction=False)
    bn = base_parameters(robot, method="numeric", friction=False)
    assert bs.minimal, bs.note
    assert bs.count == bn.count
    W = stacked_regressor(robot, seed=5)
    assert rank(np.hstack([W[:, bs.columns], W[:, bn.columns]])) == bn.count  # the same identifiable space
    assert bs.names == bn.names  # both eliminate the highest subscripts first
    np.testing.assert_allclose(bs.values, bn.values, rtol=1e-9, atol=1e-9 * np.abs(bn.values).max())
    assert_reproduces_inverse_dynamics(bs)
    assert_reproduces_inverse_dynamics(bn)
    return bs


def with_gravity_along_first_axis(robot: Robot) -> Robot:
    R0, _ = base_poses(robot, np.zeros(robot.n), np.float64)
    return robot.replace(gravity=-9.81 * R0[robot.joint_frames[0], :, 2])


def well_posed(robot: Robot) -> bool:
    """No angle within 1e-2 rad of a multiple of π/2 without being one: axes that are *nearly* parallel or
    orthogonal make the rank of the regressor depend on the tolerance (α2 = π − 1e-4 gives 8 base parameters by
    QR, 9 by the rules) and the values ill-conditioned (α2 = π − 3.8e-4: K_B differs by 1e-8 along a direction
    the regressor does not see, both reproducing the inverse dynamics to 1e-15)."""
    angles = np.concatenate([robot.alpha, robot.theta, robot.gamma]) / (PI / 2)
    off = np.abs(angles - np.round(angles)) * PI / 2
    return bool(np.all((off < 1e-12) | (off > 1e-2)))


random_robots = st.builds(
    lambda seed, tree, fixed, along: (lambda r: with_gravity_along_first_axis(r) if along else r)(
        random_robot(seed, tree=tree, fixed=fixed)
    ),
    seed=st.integers(0, 2**31 - 1),
    tree=st.booleans(),
    fixed=st.booleans(),
    along=st.booleans(),
).filter(well_posed)


@given(random_robots)
def test_rules_and_qr_agree_on_random_robots(robot):
    """Revolute and prismatic joints, parallel/perpendicular axes (special angles), trees, fixed frames,
    first joint along gravity or not."""
    assert_rules_match_qr(robot)


def robot(sigma, alpha, d, theta, r, gravity=(0, 0, -9.81), seed=0, name="test"):
    rng = np.random.default_rng(seed)
    n = len(sigma)
    return Robot(
        name=name, sigma=sigma, alpha=alpha, d=d, theta=theta, r=r,
        params=np.array([random_inertia(rng) for _ in range(n)]), Ia=rng.uniform(0.1, 0.5, n), gravity=gravity,
    )


def test_scara_rule_5_and_rule_2():
    """SCARA RRPR, vertical axes along gravity: MX1, MY1 without effect (rule 5); the prismatic joint 3 is
    parallel to a_r1 between r1 and r2: MZ3 without effect, MX3, MY3 grouped by [9.60]."""
    bp = assert_rules_match_qr(robot([0, 0, 1, 0], [0] * 4, [0, 0.4, 0.3, 0], [0] * 4, [0] * 4, name="scara"))
    assert bp.rules["MX1"].startswith("rule 5") and bp.rules["MY1"].startswith("rule 5")
    assert "MX2" in bp.standard and "MY2" in bp.standard  # joint 2 is not on the line of joint 1
    assert bp.rules["MZ3"] == "rule 2 [9.59]" and "MZ3" in bp.no_effect
    assert bp.rules["MX3"] == "rule 2 [9.60]" and "MX3" in bp.grouped
    assert bp.rules["XX4"].startswith("rule 4")
    assert bp.rules["Ia1"] == "rotor rule [9.65] (r1)"
    assert bp.count_formula == 7 * 3 + 4 - 3 - 1 - 2


@pytest.mark.parametrize(
    "alpha2, theta2, removed, how",
    [
        (PI / 4, 0.3, "MZ2", "grouped"),  # ^2a_z,r1 ≠ 0
        (PI / 2, PI / 4, "MY2", "grouped"),  # a_z = 0, a_x a_y ≠ 0
        (PI / 2, 0.0, "MY2", "no effect"),  # a_z = 0, a_x = 0
        (PI / 2, PI / 2, "MX2", "no effect"),  # a_z = 0, a_y = 0
    ],
)
def test_table_9_2_rows(alpha2, theta2, removed, how):
    bp = assert_rules_match_qr(robot([0, 1, 0], [0, alpha2, PI / 2], [0, 0.2, 0.3], [0, theta2, 0], [0, 0, 0.1]))
    assert bp.rules[removed] == "rule 3, Table 9.2"
    assert removed in (bp.grouped if how == "grouped" else bp.no_effect)


def test_prismatic_before_r1_rule_6_and_rotor_of_p1():
    """P P R R, first joint horizontal: MS of links 1, 2 without effect (rule 6); Ia1 grouped with M1 [9.68]."""
    bp = assert_rules_match_qr(robot([1, 1, 0, 0], [PI / 2, PI / 2, PI / 2, PI / 2], [0, 0.1, 0.2, 0.3], [0, 0.5, 0, 0], [0, 0, 0.1, 0]))
    for name in ("MX1", "MY1", "MZ1", "MX2", "MY2", "MZ2"):
        assert bp.rules[name] == "rule 6 (prismatic j < r1)"
    assert bp.rules["Ia1"] == "rotor rule [9.68] (p1)"
    got = dict(zip(bp.names, bp.expressions))
    assert "MR1" in got and got["MR1"].coeff("Ia1") == 1


def test_rotor_of_p1_after_parallel_revolute():
    """R P with the prismatic axis along the revolute one and gravity across it: Ia2 grouped with M2 [9.68]."""
    bp = assert_rules_match_qr(robot([0, 1], [0, 0], [0, 0.3], [0, 0], [0, 0], gravity=(9.81, 0, 0)))
    assert bp.rules["Ia2"] == "rotor rule [9.68] (p1)"


def test_rotor_of_r2_orthogonal_to_r1():
    bp = assert_rules_match_qr(robot([0, 0, 0], [0, PI / 2, 0], [0, 0, 0.4], [0, 0, 0], [0, 0, 0]))
    assert bp.rules["Ia2"] == "rotor rule [9.67] (r2 orthogonal to r1)"


def test_without_gravity_the_rules_find_fewer_groupings():
    """The seed's rules assume gravity: rule 5 needs a_r1 ∥ g.  Without gravity MX1, MY1 of a first revolute
    joint have no effect as well, which only the QR method finds ([9.61] holds 'in most cases').
    The symbolic result says so, and both models still reproduce the inverse dynamics."""
    r = robot([0, 0, 0], [0, PI / 2, 0], [0, 0, 0.4], [0, 0, 0], [0, 0, 0], gravity=(0, 0, 0))
    bs = base_parameters(r, method="symbolic", friction=False)
    bn = base_parameters(r, method="numeric", friction=False)
    assert bn.count == 14 and bs.count == 18  # also M2, MZ2 … behave differently without gravity
    assert not bs.minimal and bn.minimal
    assert f"finds {bn.count} base parameters" in bs.note
    assert {"MX1", "MY1"} <= set(bn.no_effect) and {"MX1", "MY1"} <= set(bs.standard)
    assert_reproduces_inverse_dynamics(bs)
    assert_reproduces_inverse_dynamics(bn)


def test_friction_parameters_are_base_parameters():
    r = random_robot(1, nf=4, prismatic=False)
    for method in ("symbolic", "numeric"):
        bp = base_parameters(r, method=method, friction=True)
        assert bp.names[-3:] == ("Fc4", "Fv4", "Foff4")
        assert bp.count == base_parameters(r, method=method, friction=False).count + 3 * r.n
        assert_reproduces_inverse_dynamics(bp, friction=True)


def test_friction_offset_of_first_prismatic_joint_is_grouped_with_gravity():
    """P R R R with joint 1 not orthogonal to g: the offset Foff1 (column e_1) equals the gravity force of M1
    up to the Ia1 and inertial columns, so it is grouped (highest subscript) — found by both methods."""
    r = random_robot(3, nf=4)
    assert "".join("RP"[s] for s in r.sigma) == "PRRR"
    bs = base_parameters(r, method="symbolic", friction=True)
    bn = base_parameters(r, method="numeric", friction=True)
    assert "Foff1" in bs.grouped and "Foff1" in bn.grouped
    assert bs.names == bn.names and bs.count == base_parameters(r, friction=False).count + 3 * r.n - 1
    assert bs.minimal
    np.testing.assert_allclose(bs.values, bn.values, rtol=1e-9)
    assert_reproduces_inverse_dynamics(bs, friction=True)


def test_tree_count_formula_is_none_and_batch_regressor():
    r = random_robot(6, nf=5, tree=True, fixed=True)
    bp = base_parameters(r, friction=False)
    assert bp.count_formula is None
    q, qd, qdd = random_states(r, 6, seed=2)
    Db = bp.regressor(q.reshape(2, 3, -1), qd.reshape(2, 3, -1), qdd.reshape(2, 3, -1))
    assert Db.shape == (2, 3, r.n, bp.count)
    np.testing.assert_array_equal(Db[1, 2], bp.regressor(q[5], qd[5], qdd[5]))


def test_bad_options():
    r = random_robot(1, nf=2)
    with pytest.raises(InputError, match="method"):
        base_parameters(r, method="qr", friction=False)
    with pytest.raises(InputError, match="symbolic_geometry"):
        base_parameters(r, method="numeric", symbolic_geometry=True, friction=False)


def test_symbolic_geometry_on_a_tree():
    """Lengths d, r, b of a tree as symbols D<j>, RL<j>, B<j>: values (symbols substituted) equal the QR method's."""
    r = random_robot(12, tree=True, fixed=True)
    bs = base_parameters(r, symbolic_geometry=True, friction=False)
    bn = base_parameters(r, method="numeric", friction=False)
    assert bs.names == bn.names
    assert {str(s) for s in bs.geometry} >= {"B2", "D1"}
    assert any(s in e.free_symbols for e in bs.expressions for s in bs.geometry)
    np.testing.assert_allclose(bs.values, bn.values, rtol=1e-10, atol=1e-12)
    assert_reproduces_inverse_dynamics(bs)


@pytest.mark.parametrize("name", ["rx90", "puma560", "stanford", "panda", "wam7"])
def test_drop_zero_keeps_known_zeros_that_receive_a_grouping(name):
    """rx90: MY4 = MY5 = 0 but MYR4 = MY4 − MZ5 and MYR5 = MY5 + MZ6 are nonzero; dropping them would lose MZ5, MZ6."""
    import robodyn as rd

    robot = rd.load(name)
    rules = base_parameters(robot, method="symbolic", drop_zero=True, friction=False)
    qr = base_parameters(robot, method="numeric", drop_zero=True, friction=False)
    assert rules.count == qr.count
    assert_reproduces_inverse_dynamics(rules)
    assert_reproduces_inverse_dynamics(qr)
    if name == "rx90":
        assert {"MYR4", "MYR5"} <= set(rules.names)


def test_tree_with_a_10_micron_offset_groups_d_squared_m_in_both_methods():
    """Regression (found by hypothesis): a tree whose link 5 sits d5 = 10 µm off the axis of joint 4 has
    ZZR4 = ZZ4 + d5² M5 with d5² = 1e-10 (Theorem 9.1, [9.52]).  The QR method used to set every entry of β below
    1e-9 to 0 and named it ZZ4; the entry is now kept unless dropping it leaves a residual in D2 = D1 β."""
    r = Robot(
        name="tree10um", sigma=[0, 0, 1, 0, 0], antecedent=[0, 0, 1, 2, 4],
        gamma=[0, PI / 2, 3.1149173, 0, 0], b=[0, 0, 0, 2e-5, 0],
        alpha=[0.4294716, PI / 2, -2.8921009, -0.6696005, 0], d=[-1e-5, -0.3237890, 0.3, 2e-5, -1e-5],
        theta=[PI / 2, -PI / 2, 1.1334191, -1.5996074, 0], r=[2e-5, 0.3, 0.3, -0.2956678, 0.3],
        params=np.array([random_inertia(np.random.default_rng(k)) for k in range(5)]), Ia=[0.2] * 5,
    )
    bs = assert_rules_match_qr(r)
    bn = base_parameters(r, method="numeric", friction=False)
    for bp in (bs, bn):
        zz4 = dict(zip(bp.names, bp.expressions))["ZZR4"]
        assert zz4.free_symbols == {sympy.Symbol("ZZ4"), sympy.Symbol("M5")}
        assert float(zz4.coeff(sympy.Symbol("M5"))) == pytest.approx(1e-10, rel=1e-6)
    W = stacked_regressor(r, seed=5)
    names = list(standard_parameter_names(r, False))
    m5, zz4_column = W[:, names.index("M5")], W[:, names.index("ZZ4")]
    # the M5 column is not reproduced by the other base columns without the 1e-10 ZZ4 term
    others = W[:, [c for c, n in zip(bn.columns, bn.standard) if n != "ZZ4"]]
    fit = np.linalg.lstsq(np.hstack([others, zz4_column[:, None]]), m5, rcond=None)[0]
    assert fit[-1] == pytest.approx(1e-10, rel=1e-6)


def test_planar_chain_column_below_the_rank_tolerance_is_grouped():
    """R R R with parallel axes along g and d3 = 10 µm: the column of M3 is d3² times the one of ZZ2 (norm ~1e-10
    of the largest, below the rank tolerance), so ZZR2 = ZZ2 + d3² M3 by both methods, not 'M3 without effect'."""
    r = robot([0, 0, 0], [0, 0, 0], [0, 0, 1e-5], [0, 0, 0], [0, 0, 0])
    bs = assert_rules_match_qr(r)
    bn = base_parameters(r, method="numeric", friction=False)
    for bp in (bs, bn):
        assert "M3" in bp.grouped
        assert float(dict(zip(bp.names, bp.expressions))["ZZR2"].coeff(sympy.Symbol("M3"))) == pytest.approx(1e-10)


def test_round_off_of_beta_is_not_a_grouping():
    """β's round-off entries (~1e-16) are dropped on the residual: a robot without short lengths gets the same
    names and exact decimal coefficients (D3² = 0.2025 in ZZR1 of the RX-90) as before."""
    import robodyn as rd

    bn = base_parameters(rd.load("rx90"), method="numeric", friction=False)
    zz1 = dict(zip(bn.names, bn.expressions))["ZZR1"]
    assert zz1.coeff(sympy.Symbol("M3")) == sympy.Rational(2025, 10000)
    assert all(abs(float(c)) >= 1e-12 for e in bn.expressions for c in sympy.Poly(e).coeffs())


def test_grouping_coefficient_below_1e_12_is_zero_in_both_methods():
    """R R R R R along g, α5 = 0.05, r5 = 10 µm: M5 would enter ZZR4 with r5² sin²α5 ≈ 2.5e-13, below the common
    cut-off of 1e-12, so both methods report M5 without effect (the QR method used to stop here with ModelError
    while this rule was being written); MZ5 enters with 2 r5 sin²α5 ≈ 5e-8 in both."""
    r = robot([0] * 5, [0, 0, 0, 0, 0.05], [0] * 5, [0] * 5, [0, 0, 0, 0, 1e-5])
    bs = assert_rules_match_qr(r)
    bn = base_parameters(r, method="numeric", friction=False)
    for bp in (bs, bn):
        assert "M5" in bp.no_effect
        zz4 = dict(zip(bp.names, bp.expressions))["ZZR4"]
        assert float(zz4.coeff(sympy.Symbol("MZ5"))) == pytest.approx(2e-5 * np.sin(0.05) ** 2, rel=1e-8)


def test_right_angled_makes_rounded_right_angles_exact_and_leaves_the_rest():
    """γ, α and a fixed frame's θ within 1e-3 rad of a multiple of π/2 become it; a revolute joint's θ (an offset of
    its variable), angles farther off, and angles already within 1e-9 are left; each move is reported."""
    robot = load("puma560")
    alpha = np.array([0.0, -1.5708, 1e-12, 1.571, -1.5708 + 2e-3, 3.1416])
    theta = np.array([1.5708, 0.0, 0.0, 0.0, 0.0, 0.0])
    exact, moved = right_angled(robot.replace(alpha=alpha, theta=theta))
    assert np.array_equal(exact.alpha, [0.0, -np.pi / 2, 1e-12, np.pi / 2, -1.5708 + 2e-3, np.pi])
    assert np.array_equal(exact.theta, theta)  # revolute joints: θ offsets q
    assert [(f, v) for _, f, v in moved] == [("alpha", -1.5708), ("alpha", 1.571), ("alpha", 3.1416)]
    assert [name for name, _, _ in moved] == [robot.frame_names[i] for i in (1, 3, 5)]
    assert right_angled(robot) == (robot, ())
    fixed = Robot(name="f", sigma=np.array([2, 0]), theta=np.array([-1.5708, 0.0]), alpha=np.zeros(2))
    assert np.array_equal(right_angled(fixed)[0].theta, [-np.pi / 2, 0.0])


def test_owners_name_the_link_of_each_inertial_parameter_and_the_joint_of_each_friction_one():
    """A URDF's fixed first frame shifts the link numbers against the joint numbers (the Kinova Gen3's Ia3 is its
    second joint's rotor): ``owners`` says which link or joint each base parameter belongs to."""
    from pathlib import Path

    with pytest.warns(UserWarning, match="triangle inequality"):
        gen3 = load(Path(__file__).parent / "data" / "measured" / "kinova_gen3" / "gen3.urdf", strict=False)
    bp = base_parameters(gen3, friction=True)
    owner = dict(zip(bp.names, bp.owners))
    assert owner["Ia3"] == owner["ZZR3"] == owner["Fv2"] == "joint_2"  # a frame is named by its URDF joint
    assert owner["MX2"] == "joint_1" and owner["Fc7"] == "joint_7"
    assert len(bp.owners) == bp.count
    puma = base_parameters(load("puma560"), friction=False)
    assert set(puma.owners) <= set(load("puma560").frame_names)  # no link names: the frames'
