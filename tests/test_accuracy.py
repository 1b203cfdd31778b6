"""Single- vs double-precision forward dynamics (Mata et al. §5.1, Table 5) on a reduced grid."""

import numpy as np
import pytest

import robodyn as rd
from robodyn.analysis.accuracy import AccuracyResult, accuracy_study, available_methods

U32 = 2.0**-23  # unit round-off of float32 (half the spacing at 1)
U64 = 2.0**-52


@pytest.fixture(scope="module")
def ascher2():
    return rd.load("ascher2")


@pytest.fixture(scope="module")
def study(ascher2):
    return accuracy_study(ascher2, steps=12)


def closed_form_inertia(robot, q2):
    """A(q) of a planar 2R arm in MDH (α = 0): A11 = ZZ1 + ZZ2 + M2 d2² + 2 d2 (MX2 c2 − MY2 s2), A12 = ZZ2 +
    d2 (MX2 c2 − MY2 s2), A22 = ZZ2 (Khalil & Dombre's 2R example, rotor inertias zero)."""
    p = robot.params
    zz1, zz2, mx2, my2, m2 = p[0, 5], p[1, 5], p[1, 6], p[1, 7], p[1, 9]
    d2 = robot.d[1]
    h = d2 * (mx2 * np.cos(q2) - my2 * np.sin(q2))
    A = np.empty(np.shape(q2) + (2, 2))
    A[..., 0, 0] = zz1 + zz2 + m2 * d2**2 + 2 * h
    A[..., 0, 1] = A[..., 1, 0] = zz2 + h
    A[..., 1, 1] = zz2
    return A


def test_table_shape_and_methods(study):
    assert isinstance(study, AccuracyResult)
    assert {"recursive", "cholesky"} <= set(study.methods)
    assert study.methods == available_methods("forward")
    m, n = len(study.methods), 2
    assert study.qdd_double.shape == study.qdd_single.shape == (m, 12, n)
    assert study.max_error.shape == study.mean_error.shape == (m, n)
    header, rows = study.table()
    assert len(header) == 2 + 2 * n + 1 and len(rows) == m and all(len(r) == len(header) for r in rows)
    assert [r[0] for r in rows] == list(study.methods)
    assert set(study.single_dtypes) == {"float32"}


def test_angles_full_turn_in_equal_steps(ascher2):
    res = accuracy_study(ascher2, methods=["recursive"], steps=180)
    assert np.allclose(np.degrees(res.angles[:3]), [0, 2, 4]) and np.isclose(np.degrees(res.angles[-1]), 358)


def test_errors_finite_nonzero_and_within_the_conditioning_bound(study):
    err = study.error
    assert np.all(np.isfinite(err))
    assert np.all(study.max_error > 0)  # float32 really differs from float64
    scale = np.abs(study.qdd_double).max()
    # First-order forward-error bound of a backward-stable solve: |Δq̈| ≲ c cond(A) u |q̈|; c = 4 is generous.
    assert np.all(study.max_error <= 4 * study.cond.max() * U32 * scale)
    # In float64 all methods agree to the float64 version of the same bound (so float64 is a valid reference).
    assert np.all(study.method_spread <= 4 * study.cond.max() * U64 * scale)


def test_double_precision_methods_agree_with_the_closed_form_model(ascher2):
    """In float64 every method solves A(q) q̈ = −Q(q) (Γ = 0, q̇ = 0) with A from the closed form: the float64
    reference of the study is a solution, not just a repeatable number."""
    q = np.zeros((5, 2))
    q[:, 1] = np.linspace(0, 2 * np.pi, 5, endpoint=False)
    A = closed_form_inertia(ascher2, q[:, 1])
    Q = rd.gravity_torques(ascher2, q)
    expected = np.linalg.solve(A, -Q[..., None])[..., 0]
    bound = 4 * np.linalg.cond(A).max() * U64 * np.abs(expected).max()
    for m in available_methods("forward"):
        a = rd.forward_dynamics(ascher2, q, 0 * q, 0 * q, method=m)
        assert np.abs(a - expected).max() <= bound, m


def test_condition_number_matches_closed_form(study, ascher2):
    A = closed_form_inertia(ascher2, study.angles)
    assert np.allclose(study.cond, np.linalg.cond(A), rtol=1e-8)
    assert 4.7e4 < study.cond[0] < 4.72e4  # q2 = 0, as documented in ascher2.yaml


def test_double_precision_accelerations_are_the_closed_form(study, ascher2):
    """Γ = 0, q̇ = 0: A q̈ = −Q(q); Q from the potential energy of the two links, gravity −9.81 y0."""
    q2 = study.angles
    p = ascher2.params
    mx1, mx2, my2, m2, d2 = p[0, 6], p[1, 6], p[1, 7], p[1, 9], ascher2.d[1]
    g = 9.81
    # potential U = g [MX1 s1 + M2 d2 s1 + MX2 s12 + MY2 c12] at q1 = 0 → Q = ∂U/∂q
    Q1 = g * (mx1 + m2 * d2 + mx2 * np.cos(q2) - my2 * np.sin(q2))
    Q2 = g * (mx2 * np.cos(q2) - my2 * np.sin(q2))
    qdd = np.linalg.solve(closed_form_inertia(ascher2, q2), -np.stack([Q1, Q2], -1)[..., None])[..., 0]
    assert np.allclose(study.qdd_double, qdd, rtol=1e-8, atol=1e-8 * np.abs(qdd).max())


def test_recursive_is_the_most_accurate_as_in_the_seed(study):
    """Mata Table 5: ABA (our 'recursive') beats CRBA ('cholesky'); we find a margin of about 10³."""
    i, k = study.methods.index("recursive"), study.methods.index("cholesky")
    assert study.max_error[i].max() < 0.1 * study.max_error[k].max()


def test_bad_arguments(ascher2):
    with pytest.raises(rd.InputError, match="steps = 1"):
        accuracy_study(ascher2, steps=1)
    with pytest.raises(rd.InputError, match="unknown method 'nope'"):
        accuracy_study(ascher2, methods=["nope"], steps=4)
    with pytest.raises(rd.InputError, match="kind = 'x'"):
        available_methods("x")


def test_plot_is_written_atomically(study, tmp_path):
    import matplotlib
    import matplotlib.pyplot as plt

    backend, figures = matplotlib.get_backend(), plt.get_fignums()
    path = tmp_path / "a.png"
    study.plot(path)
    assert (matplotlib.get_backend(), plt.get_fignums()) == (backend, figures)  # the caller's pyplot state is untouched
    assert path.read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png"]
    with pytest.raises(rd.InputError, match="does not exist"):
        study.plot(tmp_path / "nope" / "a.png")
