"""Examples 9.2 and 9.3 of Khalil & Dombre: base inertial parameters of the Stäubli RX-90 (Tables 9.3, 9.4)."""

import numpy as np
import pytest
import sympy

from robodyn import Robot, base_parameters, inverse_dynamics
from robodyn import load as rd_load
from robodyn.dynamics.newton_euler import friction_torques
from robodyn.parameters.numeric import random_states
from tests.support.random_robots import random_inertia

S = sympy.Symbol
D3, RL4 = S("D3"), S("RL4")
XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M, Ia = (
    [None] + [S(f"{p}{j}") for j in range(1, 7)] for p in ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M", "Ia")
)
HALF_PI = np.pi / 2


def rx90(params=None, Ia_values=(0.6, 0.5, 0.3, 0.1, 0.08, 0.05)) -> Robot:
    """RX-90 geometry of Example 9.2 (D3 = RL4 = 0.45 m, gravity along z0) with illustrative inertias."""
    if params is None:
        rng = np.random.default_rng(90)
        params = [random_inertia(rng) for _ in range(6)]
    return Robot(
        name="rx90", sigma=[0] * 6, alpha=[0, HALF_PI, 0, -HALF_PI, HALF_PI, -HALF_PI],
        d=[0, 0, 0.45, 0, 0, 0], r=[0, 0, 0, 0.45, 0, 0], params=np.array(params), Ia=np.array(Ia_values),
        gravity=[0, 0, -9.81],
    )


# Example 9.2, "the grouping equations are" (Khalil & Dombre), written as printed
M3456 = M[3] + M[4] + M[5] + M[6]
M456 = M[4] + M[5] + M[6]
SEED_EQUATIONS = {
    "ZZR1": ZZ[1] + Ia[1] + YY[2] + D3**2 * M3456 + YY[3],
    "XXR2": XX[2] - YY[2] - D3**2 * M3456,
    "XZR2": XZ[2] - D3 * MZ[3],
    "ZZR2": ZZ[2] + Ia[2] + D3**2 * M3456,
    "MXR2": MX[2] + D3 * M3456,
    "XXR3": XX[3] - YY[3] + YY[4] + 2 * RL4 * MZ[4] + RL4**2 * M456,
    "ZZR3": ZZ[3] + YY[4] + 2 * RL4 * MZ[4] + RL4**2 * M456,
    "MYR3": MY[3] + MZ[4] + RL4 * M456,
    "XXR4": XX[4] + YY[5] - YY[4],
    "ZZR4": ZZ[4] + YY[5],
    "MYR4": MY[4] - MZ[5],
    "XXR5": XX[5] + YY[6] - YY[5],
    "ZZR5": ZZ[5] + YY[6],
    "MYR5": MY[5] + MZ[6],
    "XXR6": XX[6] - YY[6],
}

TABLE_9_3 = [
    ["0", "0", "0", "0", "0", "ZZR1", "0", "0", "0", "0", "0"],
    ["XXR2", "XY2", "XZR2", "0", "YZ2", "ZZR2", "MXR2", "MY2", "0", "0", "0"],
    ["XXR3", "XY3", "XZ3", "0", "YZ3", "ZZR3", "MX3", "MYR3", "0", "0", "Ia3"],
    ["XXR4", "XY4", "XZ4", "0", "YZ4", "ZZR4", "MX4", "MYR4", "0", "0", "Ia4"],
    ["XXR5", "XY5", "XZ5", "0", "YZ5", "ZZR5", "MX5", "MYR5", "0", "0", "Ia5"],
    ["XXR6", "XY6", "XZ6", "0", "YZ6", "ZZ6", "MX6", "MY6", "0", "0", "Ia6"],
]

TABLE_9_4 = [
    ["0", "0", "0", "0", "0", "ZZR1", "0", "0", "0", "0", "0"],
    ["XXR2", "0", "0", "0", "0", "ZZR2", "MXR2", "MY2", "0", "0", "0"],
    ["XXR3", "0", "0", "0", "0", "ZZR3", "0", "MYR3", "0", "0", "Ia3"],
    ["XXR4", "0", "0", "0", "0", "ZZR4", "0", "0", "0", "0", "Ia4"],
    ["XXR5", "0", "0", "0", "0", "ZZR5", "0", "MYR5", "0", "0", "Ia5"],
    ["XXR6", "0", "0", "0", "0", "ZZ6", "0", "0", "0", "0", "Ia6"],
]


@pytest.fixture(scope="module")
def bp():
    return base_parameters(rx90(), method="symbolic", symbolic_geometry=True, friction=False)


def test_example_9_2_count(bp):
    assert bp.count == 40
    assert bp.count_inertial == 36
    assert bp.count_formula == 36  # [9.61]: 7·6 − 3 − 1 − 2
    assert bp.minimal and bp.note == ""


def test_example_9_2_without_effect_and_grouped(bp):
    assert set(bp.no_effect) == {"XX1", "XY1", "XZ1", "YY1", "YZ1", "MX1", "MY1", "MZ1", "M1", "MZ2", "M2"}
    assert set(bp.grouped) == {
        "Ia1", "YY2", "Ia2", "YY3", "MZ3", "M3", "YY4", "MZ4", "M4", "YY5", "MZ5", "M5", "YY6", "MZ6", "M6"
    }
    assert bp.zero == ()
    assert len(bp.eliminated) == 66 - 40


def test_example_9_2_grouping_equations(bp):
    got = {str(eq.lhs): eq.rhs for eq in bp.equations}
    assert set(got) == set(SEED_EQUATIONS)
    for name, rhs in SEED_EQUATIONS.items():
        assert sympy.expand(got[name] - rhs) == 0, name
    ungrouped = [n for n, s in zip(bp.names, bp.standard) if n == s]
    assert all(bp.expressions[bp.names.index(n)] == S(n) for n in ungrouped)
    assert bp.geometry == {D3: 0.45, RL4: 0.45}


def test_table_9_3_layout(bp):
    assert bp.table() == TABLE_9_3


def test_base_model_reproduces_inverse_dynamics(bp):
    robot = bp.robot
    q, qd, qdd = random_states(robot, 20, seed=3)
    tau = inverse_dynamics(robot, q, qd, qdd) - friction_torques(robot, qd)
    np.testing.assert_allclose(bp.regressor(q, qd, qdd) @ bp.values, tau, rtol=1e-10, atol=1e-10 * np.abs(tau).max())


def test_numeric_method_reproduces_the_seed(bp):
    bn = base_parameters(bp.robot, method="numeric", friction=False)
    assert bn.names == bp.names and bn.standard == bp.standard
    assert set(bn.no_effect) == set(bp.no_effect) and set(bn.grouped) == set(bp.grouped)
    numbers = {D3: sympy.Rational(9, 20), RL4: sympy.Rational(9, 20)}
    for name, e_num, e_sym in zip(bn.names, bn.expressions, bp.expressions):
        assert sympy.expand(e_num - e_sym.xreplace(numbers)) == 0, name  # β is exact: 0.2025, 0.9, 0.45
    np.testing.assert_allclose(bn.values, bp.values, rtol=1e-12)


def test_without_rotor_inertias_36():
    b = base_parameters(rx90(Ia_values=(0,) * 6), drop_zero=True, friction=False)
    assert b.count == 36
    assert set(b.zero) >= {f"Ia{j}" for j in range(1, 7)}


def example_9_3_robot() -> Robot:
    """Diagonal inertia tensors and the first moments of Example 9.3; all other parameters zero."""
    ms = [(0, 0, 0.5), (1.2, 0.1, 0), (0, 0.4, 0), (0, 0, 0.05), (0, 0.02, 0), (0, 0, 0.01)]
    params = []
    for j, (mx, my, mz) in enumerate(ms):
        m = (10.0, 8.0, 6.0, 2.0, 1.0, 0.5)[j]
        params.append([1.0 + 0.1 * j, 0, 0, 1.2 + 0.1 * j, 0, 1.5 + 0.1 * j, mx, my, mz, m])
    return rx90(params=params)


def test_example_9_3_table_9_4():
    b = base_parameters(example_9_3_robot(), drop_zero=True, symbolic_geometry=True, friction=False)
    assert b.count == 19
    assert b.table() == TABLE_9_4
    got = dict(zip(b.names, b.expressions))
    assert sympy.expand(got["MYR3"] - (MY[3] + MZ[4] + RL4 * M456)) == 0
    assert sympy.expand(got["MXR2"] - (MX[2] + D3 * M3456)) == 0
    assert "XY2" in b.zero and "MYR4" not in b.names
    robot = b.robot
    q, qd, qdd = random_states(robot, 10, seed=4)
    tau = inverse_dynamics(robot, q, qd, qdd)
    np.testing.assert_allclose(b.regressor(q, qd, qdd) @ b.values, tau, rtol=1e-10, atol=1e-10 * np.abs(tau).max())


def test_example_9_3_numeric_method_agrees():
    robot = example_9_3_robot()
    bs = base_parameters(robot, drop_zero=True, friction=False)
    bn = base_parameters(robot, method="numeric", drop_zero=True, friction=False)
    assert bn.count == 19 and bn.names == bs.names
    np.testing.assert_allclose(bn.values, bs.values, rtol=1e-12)


# --- the built-in rx90_simplified (Example 9.3 with illustrative numbers) ----------------------------------------
def test_builtin_rx90_simplified_is_example_9_3():
    """The built-in robot has exactly the zeros of Example 9.3: diagonal ^jJ_j, the listed first moments."""
    robot = rd_load("rx90_simplified")
    reference = rx90()
    np.testing.assert_array_equal(robot.alpha, reference.alpha)
    np.testing.assert_array_equal(robot.d, reference.d)
    np.testing.assert_array_equal(robot.r, reference.r)
    P = robot.params
    assert np.all(P[:, [1, 2, 4]] == 0)  # XY, XZ, YZ: ^jJ_j diagonal
    nonzero_ms = [set(np.flatnonzero(P[j, 6:9])) for j in range(6)]
    assert nonzero_ms == [{2}, {0, 1}, {1}, {2}, {1}, {2}]  # MZ1; MX2, MY2; MY3; MZ4; MY5; MZ6


def test_builtin_rx90_simplified_table_9_4():
    """Table 9.4 exactly: 19 base parameters, names as printed (exact comparison of strings); the grouped
    values are those of Example 9.2's grouping equations at D3 = RL4 = 0.45 (tolerance 1e-12 relative: the
    same sums computed in another order) and the base model reproduces inverse dynamics (1e-10, float64)."""
    robot = rd_load("rx90_simplified")
    b = base_parameters(robot, drop_zero=True, symbolic_geometry=True, friction=False)
    assert b.count == 19
    assert b.table() == TABLE_9_4
    assert b.names == ("ZZR1", "XXR2", "ZZR2", "MXR2", "MY2", "XXR3", "ZZR3", "MYR3", "Ia3", "XXR4", "ZZR4",
                       "Ia4", "XXR5", "ZZR5", "MYR5", "Ia5", "XXR6", "ZZ6", "Ia6")
    values = {}
    for j in range(6):
        for k, p in enumerate(("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M")):
            values[S(f"{p}{j + 1}")] = robot.params[j, k]
        values[Ia[j + 1]] = robot.Ia[j]
    values[D3] = values[RL4] = 0.45
    got = dict(zip(b.names, b.values))
    for name, rhs in SEED_EQUATIONS.items():
        if name in got:
            assert got[name] == pytest.approx(float(rhs.xreplace(values)), rel=1e-12), name
    q, qd, qdd = random_states(robot, 10, seed=5)
    tau = inverse_dynamics(robot, q, qd, qdd) - friction_torques(robot, qd)
    np.testing.assert_allclose(b.regressor(q, qd, qdd) @ b.values, tau, rtol=1e-10, atol=1e-10 * np.abs(tau).max())


@pytest.mark.parametrize("parameters, published, ours", [("standard", (202, 153), (200, 153)),
                                                          ("base", (160, 113), (158, 113))])
def test_builtin_rx90_simplified_table_9_6(parameters, published, ours):
    """Table 9.6, simplified inertial parameters: the customized inverse dynamics of the built-in robot
    (terminal wrench included, friction excluded, as Khalil & Dombre count) costs the published additions and two
    multiplications fewer (operation counts are integers: exact)."""
    from robodyn.symbolic import customized_model

    m = customized_model(rd_load("rx90_simplified"), "inverse_dynamics", parameters=parameters,
                         symbolic_geometry=True, symbolic_inertia=True, wrenches="terminal", friction=False)
    count = m.operation_count()
    assert (count["mul"], count["add"]) == ours
    assert ours[0] <= published[0] and ours[1] <= published[1]
