"""Bounds on the dynamic terms: sampled constants against the closed forms of the planar 2R."""

import numpy as np
import pytest

import robodyn as rd
from robodyn.analysis import dynamic_bounds


def two_r_truth():
    """Planar 2R of planar2r.yaml (l1 = 1, lc = 0.5, m = 1, I_zz,G = 1/12, g = 9.81):
    A = [[a1 + 2 a2 c2, a3 + a2 c2], [a3 + a2 c2, a3]] with a2 = m2 l1 lc2 = 0.5, a3 = I2 + m2 lc2² = 1/3,
    a1 = I1 + m1 lc1² + m2 l1² + a3 = 5/3;  C = h[[−u2, −(u1+u2)], [u1, 0]], h = a2 sin q2;
    Q = 9.81 [1.5 c1 + 0.5 c12, 0.5 c12].  True constants by dense grids."""
    q2 = np.linspace(-np.pi, np.pi, 20001)
    c2 = np.cos(q2)
    A = np.stack([np.stack([5 / 3 + c2, 1 / 3 + 0.5 * c2], -1), np.stack([1 / 3 + 0.5 * c2, np.full_like(c2, 1 / 3)], -1)], -2)
    nA = np.linalg.norm(A, 2, axis=(-2, -1))
    phi = np.linspace(0, np.pi, 20001)
    u1, u2 = np.cos(phi), np.sin(phi)
    Cu = np.stack([np.stack([-u2, -(u1 + u2)], -1), np.stack([u1, 0 * u1], -1)], -2)
    beta = 0.5 * np.linalg.norm(Cu, 2, axis=(-2, -1)).max()
    q1, q2g = np.meshgrid(np.linspace(-np.pi, np.pi, 1501), np.linspace(-np.pi, np.pi, 1501))
    gamma = 9.81 * np.hypot(1.5 * np.cos(q1) + 0.5 * np.cos(q1 + q2g), 0.5 * np.cos(q1 + q2g)).max()
    return dict(alpha=nA.max(), alpha_min=nA.min(), lambda_min=np.linalg.eigvalsh(A)[:, 0].min(), beta=beta, gamma=gamma)


def test_planar_2r_bounds_against_closed_form():
    """Sampled maxima never exceed the true constants and come close: 2000 samples put one within ~0.003 rad of
    q2 = 0 (α, a 1-D maximum: error ~1e-5) and within ~0.1 rad in 2-D (β, γ: error ≲ 1 %)."""
    t = two_r_truth()
    b = dynamic_bounds(rd.load("planar2r"), samples=2000, seed=1)
    assert b.samples == 2000 and b.ranges.shape == (2, 2)
    eps = 1e-12
    assert t["alpha"] * (1 - 1e-3) <= b.alpha <= t["alpha"] * (1 + eps)
    assert t["alpha_min"] * (1 - eps) <= b.alpha_min <= t["alpha_min"] * (1 + 1e-3)
    assert t["lambda_min"] * (1 - eps) <= b.lambda_min <= t["lambda_min"] * (1 + 1e-2)
    assert t["beta"] * 0.97 <= b.beta <= t["beta"] * (1 + eps)
    assert b.beta <= b.beta_upper and b.beta_upper >= t["beta"] * 0.999
    assert t["gamma"] * 0.97 <= b.gamma <= t["gamma"] * (1 + eps)


def test_progress_chunks_and_reproducibility():
    r = rd.load("planar2r")
    calls = []
    b1 = dynamic_bounds(r, samples=50, seed=4, chunk=16, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(16, 50), (32, 50), (48, 50), (50, 50)]
    b2 = dynamic_bounds(r, samples=50, seed=4, chunk=50)
    for key in ("alpha", "alpha_min", "lambda_min", "beta", "beta_upper", "gamma"):
        assert getattr(b1, key) == pytest.approx(getattr(b2, key), rel=1e-14)


def test_prismatic_joints_need_finite_ranges():
    P = rd.standard_from_com
    pr = rd.Robot(name="PR", sigma=[1, 0], alpha=[0, -np.pi / 2], gravity=[-9.81, 0, 0],
                  params=[P(5, [0, 0, 0], np.eye(3) * 0.05), P(2, [0.5, 0, 0], np.diag([0.001, 0.2, 0.2]))])
    with pytest.raises(rd.InputError, match="prismatic joint 1 has no finite limits"):
        dynamic_bounds(pr, samples=10)
    b = dynamic_bounds(pr, samples=10, prismatic_range=(-0.5, 0.5))
    np.testing.assert_array_equal(b.ranges[0], [-0.5, 0.5])
    b = dynamic_bounds(pr.replace(qlim=[[-1, 2], [-np.inf, np.inf]]), samples=10)
    np.testing.assert_array_equal(b.ranges, [[-1, 2], [-np.pi, np.pi]])
    # A of the PR is [[m1 + m2, −m2 lc sin q2...]]: its norm never depends on q1, the gravity norm is m2 g lc |sin q2| at most
    assert b.gamma <= 2 * 9.81 * 0.5 * (1 + 1e-12)
    with pytest.raises(rd.InputError, match="positive integers"):
        dynamic_bounds(pr, samples=0)
