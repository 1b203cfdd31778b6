"""The operation counter (counting scalars) and the shape of the counts per method."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given

import robodyn as rd
from robodyn import arrays
from robodyn.analysis.accuracy import available_methods
from robodyn.analysis.opcount import (
    Traced, count_operations, counting, counting_robot, fit_polynomial, format_polynomial, opcount_report,
    traced_array, values,
)
from robodyn.spatial import cross, mv
from tests.support.random_robots import robots


def test_counter_on_scalar_expressions():
    a, b, c = Traced(2.0), Traced(3.0), Traced(5.0)
    with counting() as t:
        r = a * b + c
    assert (t.mul, t.add, r.v) == (1, 1, 11.0)
    with counting() as t:
        r = (a - b) / c - 2.0 * a + a**2
    assert (t.mul, t.add) == (3, 3) and np.isclose(r.v, -1 / 5 - 4 + 4)
    with counting() as t:
        zero = a * 0
        same = [a * 1, 1 * a, a + 0, 0 + a, a - 0, a / 1]
        neg = [-a, a * -1, 0 - a]
        const = 2.0 * 3.0 + 1.5
    assert (t.mul, t.add) == (0, 0) and zero == 0 and all(x is a for x in same)
    assert all(isinstance(x, Traced) and x.v == -2.0 for x in neg) and const == 7.5


def test_counter_on_numpy_object_arrays():
    v, w = traced_array([1.0, 2.0, 3.0]), traced_array([0.5, -1.0, 2.0])
    R = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9]])
    with counting() as t:
        r = mv(R.astype(object), v)  # general constant 3x3 times a vector: 9 mult, 6 add
    assert (t.mul, t.add) == (9, 6) and np.allclose(values(r), R @ [1, 2, 3])
    with counting() as t:
        r = cross(v, w)  # 6 mult, 3 add
    assert (t.mul, t.add) == (6, 3) and np.allclose(values(r), np.cross([1, 2, 3], [0.5, -1, 2]))
    with counting() as t:
        r = mv(np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]], dtype=object), v)  # Rot(x, 90°): only signs and zeros
    assert (t.mul, t.add) == (0, 0) and np.allclose(values(r), [1, -3, 2])
    with counting() as t:
        np.cos(v), np.sin(v[:2])  # counted, values unused
        root = np.sqrt(traced_array([4.0]))
    assert (t.cos, t.sin, t.sqrt, t.mul, t.add) == (3, 2, 1, 0, 0) and np.isclose(values(root)[0], 2.0)


def _numpy_and_checks():
    return (np.linalg.cholesky, np.cos, np.sin, np.sqrt, arrays.as_real_array, rd.kinematics.joint_arrays)


def test_counting_replaces_nothing():
    """No attribute of NumPy or of a robodyn module is swapped: object arrays of Traced numbers are valid
    arguments (counted inside a block, not outside), other object arrays are refused."""
    original = _numpy_and_checks()
    robot = counting_robot(2)
    with counting() as t:
        assert _numpy_and_checks() == original
        tau = rd.inverse_dynamics(robot, *(traced_array(np.full((1, 2), 0.3)) for _ in range(3)))
    assert t.mul > 0 and _numpy_and_checks() == original
    assert np.allclose(values(tau), rd.inverse_dynamics(robot, *(np.full((1, 2), 0.3) for _ in range(3))))
    with counting() as t:
        pass
    rd.inverse_dynamics(robot, *(traced_array(np.full((1, 2), 0.3)) for _ in range(3)))
    assert t.mul == 0  # outside its block nothing is counted
    with pytest.raises(rd.InputError, match="give real numbers"):
        rd.inverse_dynamics(robot, np.array([object(), 1.0], dtype=object), np.zeros(2), np.zeros(2))
    with pytest.raises(rd.InputError, match="NaN or inf"):
        rd.inverse_dynamics(robot, traced_array([np.nan, 1.0]), np.zeros(2), np.zeros(2))


def test_counting_in_threads_is_separate():
    from concurrent.futures import ThreadPoolExecutor

    def count(k):
        a = Traced(1.5)
        with counting() as t:
            for _ in range(k):
                a = a * a
        return t.mul

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(count, [10, 200, 30, 4000])) == [10, 200, 30, 4000]


def test_nested_counting_keeps_the_outer_block_active():
    a, b = Traced(2.0), Traced(3.0)
    with counting() as outer:
        with counting() as inner:
            a * b
        L = arrays.cholesky(traced_array([[4.0]]))  # still counted after the inner block closed
        a + b
    assert (inner.mul, inner.add) == (1, 0)
    assert (outer.mul, outer.add, outer.sqrt) == (0, 1, 1) and values(L)[0, 0] == 2.0


def test_counted_cholesky_counts_the_textbook_numbers():
    rng = np.random.default_rng(0)
    n = 4
    M = rng.normal(size=(n, n))
    A = M @ M.T + n * np.eye(n)
    with counting() as t:
        L = arrays.cholesky(traced_array(A))
    assert np.allclose(values(L), np.linalg.cholesky(A))
    # n square roots, n(n−1)/2 divisions, Σ_j [j + (n−1−j) j] multiplications and as many subtractions
    prods = sum(j + (n - 1 - j) * j for j in range(n))
    assert (t.sqrt, t.mul, t.add) == (n, prods + n * (n - 1) // 2, prods)


@pytest.mark.parametrize("kind", ["inverse", "inertia", "forward"])
def test_counted_evaluation_gives_the_float_result(kind):
    robot = counting_robot(4)
    for m in available_methods(kind):
        tally, traced, ref = count_operations(robot, kind, m)
        assert np.allclose(traced, ref, rtol=1e-12, atol=1e-12), m
        assert tally.mul > 0 and tally.add > 0 and tally.sin == tally.cos > 0


@given(robot=robots)
def test_counting_changes_no_result_on_random_robots(robot):
    """Trees, prismatic and fixed frames, friction, rotor inertia: the Traced evaluation is the float one, and
    the counts do not depend on the state."""
    for kind in ("inverse", "inertia", "forward"):
        for m in available_methods(kind):
            tally, traced, ref = count_operations(robot, kind, m)
            assert np.allclose(traced, ref, rtol=1e-10, atol=1e-10 * max(1.0, np.abs(ref).max())), (kind, m)
            assert count_operations(robot, kind, m, seed=7)[0] == tally  # another state, the same counts


def test_counts_depend_on_structure_not_values():
    for kind, m in (("inverse", "newton_euler"), ("forward", "recursive"), ("inertia", "composite")):
        counts = {(count_operations(counting_robot(3, seed=s), kind, m, seed=s)[0].mul) for s in range(3)}
        assert len(counts) == 1, (kind, m, counts)


@pytest.fixture(scope="module")
def report():
    return opcount_report(7)


DEGREE = {  # seeds' complexity: O(n) recursions, O(n²) inertia matrices, O(n³) Cholesky-based forward dynamics
    ("inverse", "newton_euler"): 1, ("inverse", "gibbs_appell"): 1, ("inverse", "spatial_operator"): 1,
    ("inverse", "two_sided"): 1,
    ("forward", "recursive"): 1, ("forward", "spatial_operator"): 1,
    ("inertia", "composite"): 2, ("inertia", "walker_orin"): 2, ("inertia", "gibbs_appell"): 2,
    ("forward", "cholesky"): 3, ("forward", "gibbs_appell"): 3,
}


def test_counts_grow_as_expected(report):
    assert {("inverse", "newton_euler"), ("forward", "recursive"), ("forward", "cholesky")} <= {
        (c.kind, c.method) for c in report.counts}
    for c in report.counts:
        assert not c.error, (c.kind, c.method, c.error)
        deg = DEGREE[(c.kind, c.method)]
        for op in ("mul", "add"):
            y = c.series(op)[2:]  # n ≥ 3: past the boundary cases of the recursions
            assert np.all(np.diff(y, deg + 1) == 0), (c.kind, c.method, op, y)  # exact (deg+1)-th difference zero
            assert np.all(np.diff(y, deg) != 0)
        assert c.max_error < 1e-10


def test_fit_and_format():
    ns = np.arange(2, 9)
    coef = fit_polynomial(ns, 12 * ns**2 + 56 * ns - 27)
    assert coef == (12, 56, -27) and format_polynomial(coef) == "12n² + 56n − 27"
    assert fit_polynomial(ns, (ns**3 + 3 * ns**2 + 2 * ns) / 6) == (Fraction(1, 6), Fraction(1, 2), Fraction(1, 3), 0)
    assert format_polynomial((Fraction(23, 2), Fraction(39, 2), -49)) == "(23/2)n² + (39/2)n − 49"
    assert fit_polynomial(ns, 2.0**ns) is None
    assert fit_polynomial([2, 3], [1, 2]) is None  # too few points to check a line


def test_report_rows(report):
    rows = report.rows()
    ne = [r for r in rows if r[0] == "inverse newton_euler" and "Luh" in r[4] and "Khalil" in r[4]]
    assert [r[1] for r in ne] == ["mul", "add"] and [r[5] for r in ne] == ["137n − 22", "101n − 11"]
    assert [r[6] for r in ne] == ["800", "595"]
    ours6 = {c.method: c.tallies[5] for c in report.counts if c.kind == "inverse"}
    assert ne[0][3] == str(ours6["newton_euler"].mul)
    assert ne[0][7] == f"{ours6['newton_euler'].mul - 800:+d}"
    with pytest.raises(rd.InputError, match="n_max"):
        opcount_report(0)
