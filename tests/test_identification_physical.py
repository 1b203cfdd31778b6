"""The physically consistent identification: its certificate, its bounds, the regularization chosen from the data,
and which parameters the data determined (robodyn.identification.consistent)."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from robodyn.identification.consistent import FIT_GAP, LOOSE_GAP, PhysicalBounds, pseudo_inertia


@pytest.fixture(scope="module")
def robot():
    return rd.load("rx90")


@pytest.fixture(scope="module")
def samples(robot):
    """Random states of the RX-90 and its torques with 1 % noise of each joint's RMS torque."""
    rng = np.random.default_rng(1)
    q, qd, qdd = rng.uniform(-2, 2, (3, 600, robot.n))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    return q, qd, qdd, tau + 0.01 * tau.std(axis=0) * rng.standard_normal(tau.shape)


def consistent(res) -> None:
    lam = np.linalg.eigvalsh(pseudo_inertia(res.robot.params))
    assert lam.min() >= -1e-9 * np.abs(lam).max()
    assert res.robot.Ia.min() >= 0 and res.robot.Fc.min() >= 0 and res.robot.Fv.min() >= 0


def test_default_is_certified_and_says_how_the_regularization_was_chosen(robot, samples):
    res = rd.identify(robot, *samples, method="physical")
    consistent(res)
    s = res.solver
    assert res.converged and s["certified"] and "cross-validation" in s["regularization_rule"]
    # the certificate: a feasible point's objective, a dual lower bound below it, their gap stated
    assert s["lower_bound"] <= s["objective"] and s["relative_gap"] <= LOOSE_GAP
    assert s["relative_gap"] == pytest.approx((s["objective"] - s["lower_bound"]) / s["objective"], abs=1e-15)
    # the fit is no better than least squares', and no worse than the true parameters' (the noise): they are
    # consistent and, being the prior here, cost nothing in regularization
    q, qd, qdd, tau = samples
    ssr = np.sum((tau - res.predict(q, qd, qdd)) ** 2)
    ols = rd.identify(robot, *samples)
    assert ssr >= np.sum((tau - ols.predict(q, qd, qdd)) ** 2) * (1 - 1e-9)
    assert ssr <= np.sum((tau - rd.inverse_dynamics(robot, q, qd, qdd)) ** 2) * (1 + 1e-6)


def test_noise_free_torques_are_certified_by_the_fit_gap(robot):
    """Simulated torques without noise: the objective is ~1e-16, where a relative duality gap of 1e-3 is an
    absolute 1e-19 and says nothing; the point is certified because its fit is within FIT_GAP of the optimum's."""
    rng = np.random.default_rng(1)
    q, qd, qdd = rng.uniform(-2, 2, (3, 600, robot.n))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    res = rd.identify(robot, q, qd, qdd, tau)
    s = res.solver
    assert res.method == "physical" and res.converged and s["certified"] and res.message == ""
    assert 0.0 <= s["lower_bound"] <= s["objective"] < 1e-12
    assert s["fit_gap"] == np.sqrt(s["objective"]) - np.sqrt(s["lower_bound"]) and s["fit_gap"] <= FIT_GAP
    # the objective bounds the torque residual relative to ‖τ‖ (it adds the regularization's term to it)
    assert np.linalg.norm(res.predict(q, qd, qdd) - tau) <= np.sqrt(s["objective"]) * np.linalg.norm(tau)


def test_prior_share_marks_what_the_data_cannot_determine(robot, samples):
    res = rd.identify(robot, *samples, method="physical", regularization=1e-3)
    names = rd.parameters.standard_parameter_names(robot, True)
    share = dict(zip(names, res.prior_share))
    assert res.prior_share.shape == (len(names),) and np.all((0 <= res.prior_share) & (res.prior_share <= 1))
    # XX1, YY1 and M1 do not enter the dynamics of a fixed base's first link (Khalil's rules): the prior alone
    for k in ("XX1", "YY1", "M1"):
        assert share[k] == pytest.approx(1.0, abs=1e-6) and k in res.prior_determined
    # Fv1 is a base parameter on its own column: the data alone
    assert share["Fv1"] < 1e-3 and "Fv1" not in res.prior_determined
    assert rd.identify(robot, *samples, method="ols").prior_determined == ()


def test_bounds_hold(robot, samples):
    truth = robot.params[:, 9]
    lo, hi = 0.9 * truth, 1.1 * truth + 0.1
    box = np.full((robot.nf, 3, 2), np.nan)
    box[:, :, 0], box[:, :, 1] = -0.05, 0.05  # every centre of mass within 5 cm of its frame's origin
    total = float(truth.sum()) + 1.0
    res = rd.identify(robot, *samples, method="physical", regularization=1e-4,
                      bounds=PhysicalBounds(min_mass=lo, max_mass=hi, com_box=box, total_mass=total))
    consistent(res)
    M, MS = res.robot.params[:, 9], res.robot.params[:, 6:9]
    assert np.all(M >= lo - 1e-9) and np.all(M <= hi + 1e-9)
    assert np.all(np.abs(MS) <= 0.05 * M[:, None] + 1e-9)
    assert M.sum() == pytest.approx(total, rel=1e-6)
    with pytest.raises(rd.InputError, match="com_box"):
        rd.identify(robot, *samples, method="physical", bounds={"com_box": np.zeros((2, 3, 2))})
    with pytest.raises(rd.InputError, match="unknown key"):
        rd.identify(robot, *samples, method="physical", bounds={"mass": 1.0})


def test_regularization_towards_the_prior(robot, samples):
    """A large regularization returns the prior where it is consistent with the constraints: the model's own
    parameters (up to the conic solver's tolerance), whatever the data say."""
    res = rd.identify(robot, *samples, method="physical", regularization=1e8)
    prior = rd.parameters.standard_parameter_vector(robot, True)
    assert np.abs(res.standard - prior).max() <= 1e-3 * np.abs(prior).max()


def test_several_runs_at_once_each_prepared_on_its_own():
    """Two runs of a simulated arm, each filtered and differentiated on its own: identified together they give
    the estimate of their stacked samples (no filter across the seam); validated run by run on held-out data."""
    robot = rd.load("planar3r")
    t = np.arange(0, 8, 0.005)
    runs = []
    for k, phase in enumerate((0.0, 1.3)):
        q = np.column_stack([0.8 * np.sin((j + 1) * 0.7 * t + phase + j) for j in range(3)])
        qd = np.gradient(q, t, axis=0)
        qdd = np.gradient(qd, t, axis=0)
        runs.append(rd.identification.prepare_identification_data(t, q, rd.inverse_dynamics(robot, q, qd, qdd)))
    both = rd.identify(robot, [(r.q, r.qd, r.qdd, r.tau) for r in runs])
    stacked = rd.identify(robot, *(np.concatenate([getattr(r, a) for r in runs]) for a in ("q", "qd", "qdd", "tau")))
    np.testing.assert_array_equal(both.values, stacked.values)
    assert rd.identify(robot, runs).samples == both.samples  # as prepared data (Coulomb columns filtered per run)
    v = both.validate(runs[1:])
    assert v.samples.tolist() == [runs[1].t.size] * 3
    with pytest.raises(rd.InputError, match="run 1"):
        rd.identify(robot, [runs[0], "x"])


def test_expected_accuracy_against_the_noise_level():
    """The Panda with 2 % noise on every joint's torque (σ_j = 2 % of its RMS): WLS predicts the noise-free torques
    of a second set of states to ~σ_j √(b / (N n)) (0.08 σ_j here; 0.5 σ_j asserted), while OLS, weighting every
    joint's equations alike, lets the heavy joints' noise into the light joints' parameters: the wrist's
    prediction error is then several times its own σ_j (docs/identification.md, "Expected accuracy")."""
    robot = rd.load("panda")
    rng = np.random.default_rng(3)
    lo, hi = robot.qlim[:, 0], robot.qlim[:, 1]

    def states(N):
        return rng.uniform(lo, hi, (N, robot.n)), rng.uniform(-1, 1, (N, robot.n)), rng.uniform(-3, 3, (N, robot.n))

    q, qd, qdd = states(1500)
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    sigma = 0.02 * np.sqrt(np.mean(tau ** 2, axis=0))
    measured = tau + sigma * rng.standard_normal(tau.shape)
    q2, qd2, qdd2 = states(1500)
    truth = rd.inverse_dynamics(robot, q2, qd2, qdd2)
    wls = rd.identify(robot, q, qd, qdd, measured, method="wls")
    ols = rd.identify(robot, q, qd, qdd, measured, method="ols")
    err_wls = np.sqrt(np.mean((wls.predict(q2, qd2, qdd2) - truth) ** 2, axis=0)) / sigma
    err_ols = np.sqrt(np.mean((ols.predict(q2, qd2, qdd2) - truth) ** 2, axis=0)) / sigma
    assert np.all(err_wls < 0.5)
    assert err_ols[-1] > 2 * err_wls[-1]


def test_options_record_equals_the_keywords(robot, samples):
    from robodyn.identification import IdentificationOptions

    opts = IdentificationOptions(friction=True, weights=np.arange(1.0, 7.0), min_velocity=0.1)
    a = rd.identify(robot, *samples, method="wls", options=opts)
    b = rd.identify(robot, *samples, method="wls", weights=np.arange(1.0, 7.0), min_velocity=0.1)
    np.testing.assert_array_equal(a.values, b.values)
    with pytest.raises(rd.InputError, match="weights either as keyword"):
        rd.identify(robot, *samples, options=opts, weights=np.ones(6))
    with pytest.raises(rd.InputError, match="IdentificationOptions"):
        rd.identify(robot, *samples, options={"friction": True})


def test_ols_and_wls_errors_follow_their_covariances():
    """What each method guarantees under white noise σ_j per joint (linear least squares, Gaussian noise): the
    estimate's error e has the covariance C_OLS = M⁻¹ (Σ_j σ_j² G_j) M⁻¹, M = Σ_j G_j (the sandwich; OLS's reported
    ``covariance`` pools σ and is exact only for equal σ_j), and C_WLS = (Σ_j G_j / σ_j²)⁻¹, G_j = W_jᵀ W_j: so
    eᵀ C⁻¹ e is χ²_b, and the held-out prediction error of joint j is √(tr(G'_j C) / N') (G'_j of the held-out
    states) — computed here from the states alone (docs/identification.md, "Expected accuracy")."""
    robot = rd.load("panda")
    rng = np.random.default_rng(11)
    lo, hi = robot.qlim[:, 0], robot.qlim[:, 1]

    def states(N):
        return rng.uniform(lo, hi, (N, robot.n)), rng.uniform(-1, 1, (N, robot.n)), rng.uniform(-3, 3, (N, robot.n))

    truth = rd.base_parameters(robot, friction=True)
    b = truth.count
    q, qd, qdd = states(1500)
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    sigma = 0.02 * np.sqrt(np.mean(tau ** 2, axis=0))
    W = truth.regressor(q, qd, qdd)  # (N, n, b)
    G = np.einsum("inj,ink->njk", W, W)
    Minv = np.linalg.inv(G.sum(axis=0))
    C = {"ols": Minv @ np.einsum("n,njk->jk", sigma ** 2, G) @ Minv,
         "wls": np.linalg.inv(np.einsum("n,njk->jk", sigma ** -2.0, G))}
    W2 = truth.regressor(*states(1500))
    G2 = np.einsum("inj,ink->njk", W2, W2) / W2.shape[0]
    expected = {m: np.sqrt(np.einsum("njk,kj->n", G2, c)) / sigma for m, c in C.items()}
    # the designed accuracy: WLS ≈ √(b / (N n)) = 0.08 σ_j on every joint; OLS several σ on the light wrist
    assert np.all(expected["wls"] < 0.5) and expected["ols"][-1] > 2.0
    d2 = {"ols": [], "wls": []}
    for seed in range(10):
        measured = tau + sigma * np.random.default_rng(seed).standard_normal(tau.shape)
        for m in d2:
            e = rd.identify(robot, q, qd, qdd, measured, method=m).values - truth.values
            d2[m].append(e @ np.linalg.solve(C[m], e))
    # mean of 10 χ²_b over b: 1 ± 0.054 (one standard deviation); WLS's weights are estimated, hence the margin
    for m, d in d2.items():
        assert 0.75 < np.mean(d) / b < 1.3, (m, np.mean(d) / b)


def _box_corners(lo, hi) -> np.ndarray:
    return np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])


def test_com_hull_puts_the_centre_of_mass_inside(robot, samples):
    """Link 2's centre of mass (0.22 m along x of frame 2) outside a given octahedron around (0.1, 0, 0.1): the
    unconstrained estimate lies outside it, the constrained one inside or on a facet (a_i · c ≤ b_i)."""
    from scipy.spatial import ConvexHull

    pts = np.array([0.1, 0.0, 0.1]) + 0.06 * np.vstack([np.eye(3), -np.eye(3)])
    eq = ConvexHull(pts).equations
    free = rd.identify(robot, *samples, method="physical", regularization=1e-4)
    hull = [None] * robot.nf
    hull[1] = pts
    res = rd.identify(robot, *samples, method="physical", regularization=1e-4, bounds={"com_hull": hull})
    consistent(res)

    def com(r):
        return r.robot.params[1, 6:9] / r.robot.params[1, 9]

    assert np.max(eq[:, :3] @ com(free) + eq[:, 3]) > 0.03  # 4.6 cm outside a facet
    # the returned point is projected onto the constraints in float64: inside up to round-off of |c| ~ 0.2 m
    assert np.max(eq[:, :3] @ com(res) + eq[:, 3]) <= 1e-12
    assert res.converged


def test_com_hull_of_a_box_is_com_box(robot, samples):
    """The hull of a box's 8 corners is the box: the same program (rows scaled), hence the same optimum.  Both
    returned points are feasible with certified gaps f_k − lb_k ≥ f_k − f*; strong convexity of the objective
    (Hessian 2 (AᵀA + λ/p 1), the fit normalised by ‖y‖²) gives ‖A (u_k − u*)‖² ≤ f_k − f*, so the predicted
    torques differ by at most (√(f₁ − lb₁) + √(f₂ − lb₂)) ‖y‖, and the objectives by at most the larger gap."""
    box = np.full((robot.nf, 3, 2), np.nan)
    box[:, :, 0], box[:, :, 1] = -0.05, 0.05
    box[1] = [[0.0, 0.1], [-0.02, 0.02], [0.0, 0.1]]
    hull = [_box_corners(box[j, :, 0], box[j, :, 1]) for j in range(robot.nf)]
    a = rd.identify(robot, *samples, method="physical", regularization=1e-4, bounds={"com_box": box})
    b = rd.identify(robot, *samples, method="physical", regularization=1e-4, bounds={"com_hull": hull})
    q, qd, qdd, tau = samples
    assert a.samples == b.samples == q.shape[0]  # every sample in the fit: ‖y‖ = ‖τ‖
    gap_a = a.solver["objective"] - a.solver["lower_bound"]
    gap_b = b.solver["objective"] - b.solver["lower_bound"]
    assert abs(a.solver["objective"] - b.solver["objective"]) <= max(gap_a, gap_b)
    diff = np.linalg.norm(a.predict(q, qd, qdd) - b.predict(q, qd, qdd))
    assert diff <= (np.sqrt(gap_a) + np.sqrt(gap_b)) * np.linalg.norm(tau) * (1 + 1e-9) + 1e-12


@pytest.mark.parametrize("points, match", [
    (np.zeros((3, 3)), "shape"),
    (np.zeros((5, 2)), "shape"),
    (np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0.0]]), "plane"),
    (np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, np.nan]]), "NaN"),
])
def test_com_hull_bad_points_name_the_frame(robot, samples, points, match):
    hull = [None] * robot.nf
    hull[2] = points
    with pytest.raises(rd.InputError, match=rf"(?s)com_hull\[2\] \(frame 3\).*{match}.*at least 4 finite points"):
        rd.identify(robot, *samples, method="physical", regularization=1e-4, bounds={"com_hull": hull})
    with pytest.raises(rd.InputError, match="one per frame"):
        rd.identify(robot, *samples, method="physical", bounds={"com_hull": [None]})


def test_default_weights_are_gautiers_of_the_least_squares_residual(robot, samples):
    """The default "physical" fit is the weighted one with w_j = 1/σ_j² of OLS's residual (scaled to a median of
    1): the same estimate as those weights given, while its standard deviations stay OLS's; weights=1 is the
    unweighted fit, which other weights move."""
    ols = rd.identify(robot, *samples, method="ols")
    res = rd.identify(robot, *samples)
    w = 1.0 / ols.noise ** 2
    np.testing.assert_allclose(res.weights, w / np.median(w), rtol=1e-12)
    given = rd.identify(robot, *samples, weights=res.weights)
    np.testing.assert_array_equal(given.weights, res.weights)
    np.testing.assert_allclose(res.values, given.values, rtol=0, atol=1e-12 * np.abs(res.values).max())
    np.testing.assert_allclose(res.std, ols.std, rtol=1e-12)
    plain = rd.identify(robot, *samples, weights=1)
    assert np.all(plain.weights == 1) and np.abs(plain.values - res.values).max() > 1e-6 * np.abs(res.values).max()


def test_gautier_weights_rules():
    """1/σ_j² over their median; a joint under 1 % of the largest torque RMS takes the median (its σ_j is the
    sensor's resolution) and does not enter it (1, 4, 16: 4, not the 10 of 1, 4, 16, 1e8); σ_j below 1e-6 of the
    largest torque RMS counts as that level (exact data: unweighted)."""
    from robodyn.identification.solvers import gautier_weights

    rms = np.array([10.0, 5.0, 1.0, 0.05])
    np.testing.assert_allclose(gautier_weights(np.array([1.0, 0.5, 0.25, 1e-4]), rms), [0.25, 1.0, 4.0, 1.0],
                               rtol=1e-15)
    np.testing.assert_array_equal(gautier_weights(np.array([1e-14, 3e-15, 0.0, 0.0]), rms), np.ones(4))
    np.testing.assert_array_equal(gautier_weights(np.zeros(2), np.zeros(2)), np.ones(2))
