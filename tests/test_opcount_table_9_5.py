"""Khalil & Dombre Table 9.5, column "2RP(3R) Stanford": the customized inverse dynamics of the built-in
Stanford arm counted next to the published figures.  Operation counts are integers: compared exactly."""

import numpy as np
import pytest

import robodyn as rd
from robodyn.analysis.opcount import TABLE_9_5_STANFORD, stanford_table_9_5
from robodyn.symbolic import customized_model


@pytest.fixture(scope="module")
def rows():
    return {r["variant"]: r for r in stanford_table_9_5()}


def test_published_figures_are_table_9_5():
    assert TABLE_9_5_STANFORD == {"general": (240, 227), "simplified": (142, 99)}


def test_general_inertial_parameters_at_or_below_table_9_5(rows):
    """General inertial parameters: 236 / 224 against Khalil & Dombre's 240 / 227."""
    r = rows["general"]
    assert (r["mul"], r["add"]) == (236, 224)
    assert r["mul"] <= r["published_mul"] == 240 and r["add"] <= r["published_add"] == 227


def test_simplified_and_built_in_counts(rows):
    """Simplified (diagonal ^jJ_j, the largest first-moment component of each link): 150 / 117, above the
    published 142 / 99 (explained in docs/studies.md and by the next test); the robot's own parameters
    158 / 127 (nothing published)."""
    assert (rows["simplified"]["mul"], rows["simplified"]["add"]) == (150, 117)
    assert (rows["built-in"]["mul"], rows["built-in"]["add"]) == (158, 127)
    assert rows["built-in"]["published_mul"] is None


def count(robot):
    c = customized_model(robot, "inverse_dynamics", parameters="base", symbolic_geometry=True,
                         symbolic_inertia=True, wrenches="terminal", friction=False).operation_count()
    return c["mul"], c["add"]


def with_first_moments(robot, axes):
    """Diagonal ^jJ_j and one first-moment component per link, along ``axes[j]`` (0 x, 1 y, 2 z)."""
    P = np.zeros_like(robot.params)
    for j, k in enumerate(axes):
        P[j, [0, 3, 5, 9]] = robot.params[j, [0, 3, 5, 9]] + [0.1, 0.1, 0.1, 0]
        P[j, 6 + k] = 0.1
    return robot.replace(params=P)


def test_why_the_simplified_count_is_above_the_published_one():
    """The two causes of the simplified excess, measured: (1) the built-in arm has the wrist offset
    d4 = 0.0203 m of robotics-toolbox-python's Stanford.py; with d4 = 0 the same zeros cost 136 / 100;
    (2) Table 9.5 does not say which two first-moment components are zero, and the count depends on it:
    with MY4 and MY5 (the wrist first moments along y, as MY5 of Example 9.3) it is 125 / 90, below both
    published figures."""
    stanford = rd.load("stanford")
    assert stanford.d[3] == pytest.approx(0.0203)
    no_offset = stanford.replace(d=np.where(np.arange(6) == 3, 0.0, stanford.d))
    builtin_axes = [int(np.argmax(np.abs(p[6:9]))) for p in stanford.params]
    assert builtin_axes == [1, 2, 2, 2, 2, 2]
    assert count(with_first_moments(stanford, builtin_axes)) == (150, 117)
    assert count(with_first_moments(no_offset, builtin_axes)) == (136, 100)
    mul, add = count(with_first_moments(no_offset, [2, 2, 2, 1, 1, 2]))
    assert (mul, add) == (125, 90) and mul < 142 and add < 99


def test_counted_model_is_the_inverse_dynamics():
    """The counted simplified model computes rd.inverse_dynamics (1e-10 relative: float64 rounding of two
    evaluation orders of the same sums)."""
    stanford = rd.load("stanford")
    robot = with_first_moments(stanford, [1, 2, 2, 2, 2, 2])
    f = customized_model(robot, "inverse_dynamics", parameters="base", wrenches="none").numpy_function()
    rng = np.random.default_rng(2)
    q, qd, qdd = rng.uniform(-1, 1, (3, 4, 6))
    q[:, 2] = 0.5  # prismatic joint inside its stroke
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    np.testing.assert_allclose(f(q, qd, qdd), tau, rtol=1e-10, atol=1e-10 * np.abs(tau).max())
