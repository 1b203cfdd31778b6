"""Dynamic identification: excitation trajectories, data preparation, OLS / WLS / IRLS / physical estimates.

References: the true robot's base parameters (rd.base_parameters) for synthetic data, closed-form derivatives of
sinusoids for the data preparation, the regressor itself for cond(W), and statistics of least squares
(z-scores of the estimates, the residual level) for noisy data.
"""

import dataclasses
import json
import warnings

import numpy as np
import scipy.stats
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn.identification.excitation import _series, resolve_limits
from robodyn.identification.reduction import reduce_rows
from tests.support.random_robots import random_robot


def with_friction(robot, fc=0.6, fv=0.3, foff=0.15):
    moving = (robot.sigma != 2).astype(float)
    return robot.replace(Fc=fc * moving, Fv=fv * moving, Foff=foff * moving, Fst=np.zeros(robot.nf))


@pytest.fixture(scope="module")
def robot():
    return with_friction(rd.load("planar3r"))


@pytest.fixture(scope="module")
def trajectory(robot):
    return rd.excitation_trajectory(robot, 10.0, harmonics=4, seed=3, unlimited=True)


@pytest.fixture(scope="module")
def validation(robot):
    return rd.excitation_trajectory(robot, 10.0, harmonics=4, seed=11, max_iterations=5, unlimited=True)


def relative(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


# ---- excitation ------------------------------------------------------------------------------------------------

def test_excitation_respects_limits_and_starts_at_rest(robot, trajectory):
    t = np.linspace(0.0, 10.0, 20001)
    q, qd, qdd = trajectory.sample(t)
    lim = trajectory.limits
    assert np.all(q >= lim["q"][:, 0] - 1e-12) and np.all(q <= lim["q"][:, 1] + 1e-12)
    assert np.all(np.abs(qd) <= lim["qd"] + 1e-12) and np.all(np.abs(qdd) <= lim["qdd"] + 1e-12)
    np.testing.assert_allclose(lim["qd"], 1.5) and np.testing.assert_allclose(lim["q"], [[-np.pi, np.pi]] * 3)
    assert np.all(np.isinf(lim["tau"]))  # a robot without taulim: no torque constraint
    assert np.max(np.abs(qd[0])) < 1e-12 and np.max(np.abs(qdd[0])) < 1e-12
    # periodic with period 1 / f_f = duration
    np.testing.assert_allclose(np.stack(trajectory.sample(t + 10.0)), np.stack(trajectory.sample(t)), atol=1e-11)
    assert trajectory.converged and trajectory.iterations <= 100


def test_excitation_derivatives_match_finite_differences(trajectory):
    t = np.linspace(1.0, 2.0, 11)
    h = 1e-5
    qp, qdp, _ = trajectory.sample(t + h)
    qm, qdm, _ = trajectory.sample(t - h)
    _, qd, qdd = trajectory.sample(t)
    np.testing.assert_allclose((qp - qm) / (2 * h), qd, atol=1e-8)
    np.testing.assert_allclose((qdp - qdm) / (2 * h), qdd, atol=1e-8)
    batched = trajectory.sample(t.reshape(1, 11, 1))
    assert batched[0].shape == (1, 11, 1, 3)
    np.testing.assert_array_equal(batched[2][0, :, 0], qdd)


def test_excitation_condition_number_is_that_of_the_base_observation_matrix(robot, trajectory):
    bp = rd.base_parameters(robot, method="numeric", friction=True)
    K = max(50, 2 * bp.count // robot.n + 10)
    q, qd, qdd = trajectory.sample((np.arange(K) + 0.5) / K * 10.0)
    W = rd.regressor(robot, q, qd, qdd, friction=True)[..., bp.columns].reshape(-1, bp.count)
    assert trajectory.condition_number == pytest.approx(np.linalg.cond(W), rel=1e-9)
    # the optimiser improves on its random start (same seed, one iteration less each time)
    start = rd.excitation_trajectory(robot, 10.0, harmonics=4, seed=3, max_iterations=1, unlimited=True)
    assert trajectory.condition_number < start.condition_number


def test_excitation_is_deterministic_and_reports_the_iteration_limit(robot):
    a = rd.excitation_trajectory(robot, 4.0, harmonics=2, seed=5, max_iterations=2, unlimited=True)
    b = rd.excitation_trajectory(robot, 4.0, harmonics=2, seed=5, max_iterations=2, unlimited=True)
    np.testing.assert_array_equal(a.a, b.a)
    np.testing.assert_array_equal(a.b, b.b)
    assert not a.converged and "iteration limit 2" in a.message
    c = rd.excitation_trajectory(robot, 4.0, harmonics=2, seed=6, max_iterations=2, unlimited=True)
    assert not np.array_equal(a.a, c.a)


def test_excitation_limits_from_argument_and_robot():
    robot = rd.load("cartesian3p")
    tr = rd.excitation_trajectory(robot, 5.0, harmonics=2, limits={"qd": 0.2, "qdd": [0.5, 0.5, 0.4]},
                                  max_iterations=10, unlimited=True)
    np.testing.assert_array_equal(tr.limits["q"], robot.qlim)
    q, qd, qdd = tr.sample(np.linspace(0, 5, 5001))
    assert np.all(q >= robot.qlim[:, 0] - 1e-12) and np.all(q <= robot.qlim[:, 1] + 1e-12)
    assert np.all(np.abs(qd) <= 0.2 + 1e-12) and np.all(np.abs(qdd) <= np.array([0.5, 0.5, 0.4]) + 1e-12)
    with pytest.raises(rd.InputError, match="unknown key"):
        rd.excitation_trajectory(robot, 5.0, limits={"qdot": 1.0}, unlimited=True)
    with pytest.raises(rd.InputError, match=r"limits\['q'\] of joint 2: min must be < max"):
        rd.excitation_trajectory(robot, 5.0, limits={"q": [[0, 1], [1, 1], [0, 1]]}, unlimited=True)
    with pytest.raises(rd.InputError, match="duration"):
        rd.excitation_trajectory(robot, -1.0, unlimited=True)


@pytest.mark.parametrize("limits, message", [
    ({"qd": 0.0}, r"limits\['qd'\] = 0.0; give 3 finite speeds > 0 \(rad/s \| m/s\), one per joint, or one for all"),
    ({"qdd": [1.0, np.inf, 1.0]}, r"limits\['qdd'\] = \[1.0, inf, 1.0\]; give 3 finite accelerations > 0"),
    ({"qd": [1.0, 1.0]}, r"limits\['qd'\] = \[1.0, 1.0\]; give 3 finite speeds"),
    ({"tau": [-1.0, 5.0, 5.0]}, r"limits\['tau'\] = \[-1.0, 5.0, 5.0\]; give 3 torques > 0 \(N m \| N; inf where"),
    ({"tau": np.nan}, r"limits\['tau'\] = nan; give 3 torques > 0"),
    ({"qd": True}, r"argument 'limits\['qd'\]' has dtype bool \(True/False is not a joint value\)"),
    ({"tau": [True, True, True]}, r"argument 'limits\['tau'\]' has dtype bool"),
    ({"q": np.ones((3, 2), bool)}, r"argument 'limits\['q'\]' has dtype bool"),
    ({"q": [[0, 1], [0, np.inf], [0, 1]]}, r"limits\['q'\] has shape \(3, 2\) or is not finite; give \(3, 2\) finite"),
    ({"q": [0.0, 1.0]}, r"limits\['q'\] has shape \(2,\) or is not finite; give \(3, 2\) finite"),
])
def test_excitation_limits_are_checked_like_every_per_joint_argument(limits, message):
    """Velocity, acceleration and torque limits are one per joint or one for all (robodyn.arrays.one_per, with its
    wording); a boolean is not a limit; the position limits are (n, 2) finite numbers."""
    with pytest.raises(rd.InputError, match=message):
        resolve_limits(rd.load("cartesian3p"), limits)


def test_excitation_respects_the_robots_velocity_and_torque_limits_at_every_instant():
    """The Panda carries qdlim and taulim: by default the trajectory keeps |q̇| ≤ qdlim and the a priori torques
    |τ| ≤ taulim, checked here on a grid 40 times denser than the optimiser's. The guarantees hold at every
    iterate, so one iteration is enough to test them."""
    panda = rd.load("panda")
    tr = rd.excitation_trajectory(panda, 10.0, harmonics=2, max_iterations=1)
    np.testing.assert_array_equal(tr.limits["qd"], panda.qdlim)
    np.testing.assert_array_equal(tr.limits["tau"], panda.taulim)
    q, qd, qdd = tr.sample(np.linspace(0.0, 10.0, 40001))
    assert np.all(q >= panda.qlim[:, 0]) and np.all(q <= panda.qlim[:, 1])
    assert np.all(np.abs(qd) <= panda.qdlim * (1 + 1e-12))
    assert np.all(np.abs(rd.inverse_dynamics(panda, q, qd, qdd)) <= panda.taulim)
    assert np.all(np.abs(qd).max(0) > 1e-3 * panda.qdlim)  # a motion of every joint, not the rest pose


def test_excitation_torque_limits_bind_and_user_limits_override_the_robots():
    """planar3r with a tight drive on joint 2 (without taulim the same design needs 22.6 N m there): the a priori
    torques stay within taulim on a dense grid; explicit limits replace the robot's; a limit below the robot's own
    weight at rest is refused by name."""
    robot = with_friction(rd.load("planar3r")).with_joint_parameters(taulim=[55.0, 21.5, 6.0], qdlim=[1.0, 2.0, 0.5])
    t = np.linspace(0.0, 10.0, 40001)
    for limits, qd_max, tau_max in ((None, robot.qdlim, robot.taulim),
                                    ({"qd": [0.3, 3.0, 0.2], "tau": [np.inf, 30.0, 6.5]}, [0.3, 3.0, 0.2],
                                     [np.inf, 30.0, 6.5])):
        tr = rd.excitation_trajectory(robot, 10.0, harmonics=3, max_iterations=5, limits=limits, unlimited=True)
        np.testing.assert_array_equal(tr.limits["qd"], qd_max)
        np.testing.assert_array_equal(tr.limits["tau"], tau_max)
        q, qd, qdd = tr.sample(t)
        assert np.all(np.abs(qd) <= np.multiply(qd_max, 1 + 1e-12))
        assert np.all(np.abs(rd.inverse_dynamics(robot, q, qd, qdd)) <= tau_max)
        assert np.all(np.abs(qd).max(0) > 1e-3 * np.asarray(qd_max))  # a motion of every joint, not the rest pose
    # at q0 = 0 (the middle of ±π) joint 2 holds 19.77 N m of weight and friction offset, 20.37 once it moves
    with pytest.raises(rd.InputError, match=r"needs 20.37 \(N m \| N\) at joint 2 .* torque limit 20;"):
        rd.excitation_trajectory(robot, 10.0, harmonics=2, limits={"tau": [55.0, 20.0, 6.0]}, unlimited=True)


# ---- data preparation ------------------------------------------------------------------------------------------

def test_prepare_data_differentiates_and_filters():
    rate, f = 1000.0, 0.5
    t = np.arange(0, 10, 1 / rate)
    w = 2 * np.pi * f
    q = np.column_stack([np.sin(w * t), 0.3 * np.cos(2 * w * t)])
    tau = np.column_stack([np.cos(w * t), np.sin(3 * w * t)])
    noise = np.random.default_rng(0).normal(0, 1e-2, tau.shape)
    data = rd.identification.prepare_identification_data(t, q, tau + noise, cutoff=50.0, trim=False)
    assert data.cutoff == 50.0 and data.decimate == 5 and data.rate == pytest.approx(1000.0)
    assert data.q.shape == (2000, 2) and data.t[1] == pytest.approx(0.005)
    inner = slice(50, -50)
    tt = data.t[inner]
    qd = np.column_stack([w * np.cos(w * tt), -0.6 * w * np.sin(2 * w * tt)])
    qdd = np.column_stack([-w**2 * np.sin(w * tt), -1.2 * w**2 * np.cos(2 * w * tt)])
    # central differences: relative error (h ω)² / 6 = 6.6e-6 per differentiation at ω = 2π rad/s, h = 1 ms;
    # the 8th-order zero-phase Butterworth at 50 Hz leaves 1 Hz intact (gain 1 − 1e-13)
    assert relative(data.qd[inner], qd) < 7e-6
    assert relative(data.qdd[inner], qdd) < 1.4e-5
    # the noise (white, 500 Hz wide) is reduced by about √(500 / 50)
    resid = data.tau[inner] - np.column_stack([np.cos(w * tt), np.sin(3 * w * tt)])
    assert np.std(resid) < 1e-2 / 2.5


def test_prepare_data_errors():
    t = np.arange(100) * 0.01
    q = np.zeros((100, 2))
    with pytest.raises(rd.InputError, match="t has 99 samples but q and tau have 100 rows"):
        rd.identification.prepare_identification_data(t[:-1], q, q)
    with pytest.raises(rd.InputError, match=r"q has shape \(100, 2\) but tau has \(100, 3\)"):
        rd.identification.prepare_identification_data(t, q, np.zeros((100, 3)))
    bad = q.copy()
    bad[17, 1] = np.nan
    with pytest.raises(rd.InputError, match=r"tau: row 17 \(0-based\), joint 2 is nan"):
        rd.identification.prepare_identification_data(t, q, bad)
    tt = t.copy()
    tt[40:] += 0.1
    with pytest.raises(rd.InputError, match=r"t has a gap of 0.11 s before row 40 \(0-based\), 11 times the median"):
        rd.identification.prepare_identification_data(tt, q, q)
    tt[70:] += 0.2  # a second, larger gap: the message lists both, the first first (the split starts there)
    with pytest.raises(rd.InputError, match=r"t has 2 gaps of more than 5 median steps \(0.01 s\), before rows 40, "
                                            r"70 \(0-based; the first 0.11 s\); split the log at each"):
        rd.identification.prepare_identification_data(tt, q, q)
    tt = t.copy()
    tt[40] = tt[39]
    with pytest.raises(rd.InputError, match=r"t must increase strictly; row 40"):
        rd.identification.prepare_identification_data(tt, q, q)
    with pytest.raises(rd.InputError, match="cutoff = 'fast'; give a frequency in Hz or 'auto'"):
        rd.identification.prepare_identification_data(t, q, q, cutoff="fast")
    with pytest.raises(rd.InputError, match="cutoff"):
        rd.identification.prepare_identification_data(t, q, q, cutoff=60.0)
    with pytest.raises(rd.InputError, match="decimate"):
        rd.identification.prepare_identification_data(t, q, q, decimate=0)


# ---- identification --------------------------------------------------------------------------------------------

def campaign(robot, trajectory, rate=50.0, sigma=None, seed=0):
    t = trajectory.times(rate)
    q, qd, qdd = trajectory.sample(t)
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    if sigma is not None:
        tau = tau + np.random.default_rng(seed).normal(0, 1, tau.shape) * sigma
    return q, qd, qdd, tau


def spiked(tau, seed, share=50, size=2.0):
    """τ with ±``size`` spikes on one joint of 1/``share`` of the rows."""
    rng = np.random.default_rng(seed)
    rows = rng.choice(len(tau), len(tau) // share, replace=False)
    tau = tau.copy()
    tau[rows, rng.integers(0, tau.shape[1], rows.size)] += rng.choice([-1, 1], rows.size) * size
    return tau


@pytest.mark.parametrize("method", ["ols", "wls", "irls", "physical"])
def test_noise_free_recovers_base_parameters_and_friction(robot, trajectory, method):
    truth = rd.base_parameters(robot, friction=True)
    res = rd.identify(robot, *campaign(robot, trajectory), method=method)
    assert res.names == truth.names and res.names[-3:] == ("Fc3", "Fv3", "Foff3")
    assert relative(res.values, truth.values) < 1e-8
    # residuals come from the accumulated Gram matrices: resolved to √ε of the torques (~1e-8 relative)
    tau_rms = np.sqrt(np.mean(campaign(robot, trajectory)[3] ** 2, axis=0))
    assert np.all(res.residual_rms < 1e-7 * tau_rms)
    assert res.condition_number == pytest.approx(
        np.linalg.cond(truth.regressor(*campaign(robot, trajectory)[:3]).reshape(-1, truth.count)), rel=1e-6)


@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_noise_free_random_robots(seed):
    robot = random_robot(seed, nf=int(np.random.default_rng(seed).integers(2, 4)), fixed=True)
    robot = robot.replace(Foff=0.1 * (robot.sigma != 2))
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-2, 2, (3, 400, robot.n))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    truth = rd.base_parameters(robot, method="numeric", friction=True)
    res = rd.identify(robot, q, qd, qdd, tau, base=truth)
    assert relative(res.values, truth.values) < 1e-8
    # batched prediction equals the model and equals per-sample prediction
    np.testing.assert_allclose(res.predict(q, qd, qdd), tau, rtol=0, atol=1e-9 * np.abs(tau).max())
    np.testing.assert_allclose(res.predict(q[5], qd[5], qdd[5]), res.predict(q, qd, qdd)[5], rtol=1e-13)


def test_noisy_estimates_are_within_their_standard_deviations(robot, trajectory, validation):
    # OLS assumes the same noise on every joint (its σ² is pooled); WLS estimates one level per joint (Gautier)
    noise = {"ols": 0.03, "wls": np.array([0.05, 0.03, 0.02])}
    truth = rd.base_parameters(robot, friction=True).values
    b = truth.size
    for method, sigma in noise.items():
        z, d2 = [], []
        for seed in range(20):
            res = rd.identify(robot, *campaign(robot, trajectory, rate=40.0, sigma=sigma, seed=seed), method=method)
            e = res.values - truth
            z.append(e / res.std)
            d2.append(e @ np.linalg.solve(res.covariance, e))  # Mahalanobis distance: χ²_b
        z = np.concatenate(z)
        assert np.mean(np.abs(z) < 3) > 0.98, method
        assert 0.75 < np.mean(z**2) < 1.3, method
        assert 0.75 < np.mean(d2) / b < 1.3, method
    sigma = noise["wls"]
    # the noise level is estimated per joint (Gautier's weights) and the validation RMS is the noise level
    res = rd.identify(robot, *campaign(robot, trajectory, rate=100.0, sigma=sigma, seed=99), method="wls")
    np.testing.assert_allclose(res.noise, sigma, rtol=0.1)
    q, qd, qdd, tau = campaign(robot, validation, rate=100.0, sigma=sigma, seed=100)
    rms = np.sqrt(np.mean((res.predict(q, qd, qdd) - tau) ** 2, axis=0))
    np.testing.assert_allclose(rms, sigma, rtol=0.1)


def test_irls_rejects_outliers(robot, trajectory):
    truth = rd.base_parameters(robot, friction=True).values
    q, qd, qdd, tau = campaign(robot, trajectory, rate=50.0, sigma=0.02, seed=1)
    tau = spiked(tau, 2)  # 100 σ spikes on 2 %
    ols = rd.identify(robot, q, qd, qdd, tau, method="ols")
    # spikes on 2 % of the rows act on OLS as noise of variance 0.02 * 2² (14 σ): its error is far outside the
    # spread of the outlier-free noise (χ²_b of the IRLS covariance), which the IRLS error stays within
    limit = scipy.stats.chi2.ppf(0.999, truth.size)
    for robust in ("huber", "bisquare"):
        irls = rd.identify(robot, q, qd, qdd, tau, method="irls", robust=robust)
        assert irls.converged and 1 < irls.iterations < 50
        err_ols, err_irls = ols.values - truth, irls.values - truth
        assert err_irls @ np.linalg.solve(irls.covariance, err_irls) < limit, robust
        assert err_ols @ np.linalg.solve(irls.covariance, err_ols) > 10 * limit, robust
        assert np.all(np.abs(err_irls) < 4 * irls.std), robust
        # the noise level is the robust scale (1.4826 MAD: relative sd ≈ 1.1 / √N_j = 0.05), which the spikes that
        # lift OLS's σ_j to ≈ 0.16 leave alone
        np.testing.assert_allclose(irls.noise, 0.02, rtol=0.25)
        assert np.all(ols.noise > 5 * 0.02)
    capped = rd.identify(robot, q, qd, qdd, tau, method="irls", max_iterations=1)
    assert not capped.converged and "iteration limit 1" in capped.message


def test_irls_computes_residuals_where_they_are_used(robot, trajectory, monkeypatch):
    """Huber's passes re-estimate the scales from the residuals; bisquare's keep them fixed and need them only for
    the objective that keeps SQUAREM's extrapolations (at most one evaluation per pass) and for the covariance,
    at the parameters the last pass's weights came from (Huber's covariance of an M-estimate)."""
    from robodyn.identification.reduction import ArraySource

    q, qd, qdd, tau = campaign(robot, trajectory, rate=50.0, sigma=0.02, seed=1)
    tau = spiked(tau, 2)
    calls = []
    for name in ("residuals", "reduce"):
        original = getattr(ArraySource, name)

        def record(self, *args, _original=original, _name=name, **kw):
            theta = kw.get("theta", args[2] if len(args) > 2 else None) if _name == "reduce" else args[0]
            calls.append((_name, kw.get("robust", args[4] if len(args) > 4 else None), theta))
            return _original(self, *args, **kw)

        monkeypatch.setattr(ArraySource, name, record)
    res = rd.identify(robot, q, qd, qdd, tau, method="irls", robust="bisquare")
    passes = [(robust, theta) for name, robust, theta in calls if name == "reduce" and theta is not None]
    huber = sum(robust == "huber" for robust, _ in passes)
    assert res.converged and 0 < huber < len(passes) == res.iterations
    residuals = [theta for name, _, theta in calls if name == "residuals"]
    assert huber + 1 <= len(residuals) <= huber + 1 + (len(passes) - huber)  # not more than once per pass
    for at, (_, theta) in zip(residuals, passes[:huber]):
        assert at is theta
    assert residuals[-1] is passes[-1][1]


def test_base_regressor_is_c_contiguous_and_equals_its_columns():
    # a fancy index of the last axis lays that axis out outermost: every product of joint rows walked memory
    robot = with_friction(rd.load("puma560"))
    bp = rd.base_parameters(robot, friction=True)
    q, qd, qdd = np.random.default_rng(0).normal(size=(3, 50, robot.n))
    W = bp.regressor(q, qd, qdd)
    assert W.flags.c_contiguous and W.shape == (50, robot.n, bp.count)
    D = rd.regressor(robot, q, qd, qdd, friction=True)
    np.testing.assert_array_equal(W, D[..., bp.columns])


@pytest.mark.parametrize("sigma", [0.02, (0.05, 0.03, 0.01)], ids=["same", "per-joint"])
@pytest.mark.parametrize("robust", ["huber", "bisquare"])
def test_irls_covariance_is_calibrated_under_outliers(robot, trajectory, robust, sigma):
    # Huber's covariance of an M-estimate: over noise draws with 100 σ spikes on 2 % of the rows, the Mahalanobis
    # distance of the error is χ²_b (mean b; over 40 draws its mean / b has sd √(2 / (40 b)) = 0.05) and the
    # standardized errors are N(0, 1). The weighted least-squares formula it replaces gave mean d²/b of 0.63
    # (Huber: the spikes inflate its σ²) and 1.35 (bisquare: its down-weighted tails deflate it); with a noise level
    # per joint, which its one pooled σ² ignores, 0.99 and 1.56.
    truth = rd.base_parameters(robot, friction=True).values
    b = truth.size
    z, d2 = [], []
    for seed in range(40):
        q, qd, qdd, tau = campaign(robot, trajectory, rate=40.0, sigma=np.array(sigma), seed=seed)
        res = rd.identify(robot, q, qd, qdd, spiked(tau, 100 + seed), method="irls", robust=robust)
        e = res.values - truth
        z.append(e / res.std)
        d2.append(e @ np.linalg.solve(res.covariance, e))
    z = np.concatenate(z)
    assert np.mean(np.abs(z) < 3) > 0.98
    assert 0.8 < np.mean(z**2) < 1.2
    assert 0.8 < np.mean(d2) / b < 1.2


def test_physical_is_consistent_and_fits_as_well_as_the_noise_allows(robot, trajectory):
    # the true rotor inertias Ia2, Ia3 are 0; torques of a motion with Ia2 three OLS standard deviations below 0
    # (OLS is linear: the shift of τ along Ia2's column moves the OLS estimate by exactly that much), which no
    # motor has
    sigma = 0.3
    q, qd, qdd, tau = campaign(robot, trajectory, rate=20.0, sigma=sigma, seed=0)
    first = rd.identify(robot, q, qd, qdd, tau, method="ols")
    k = first.names.index("Ia2")
    column = first.base.regressor(q, qd, qdd)[..., k]
    tau = tau - (first.values[k] + 3 * first.std[k]) * column
    ols = rd.identify(robot, q, qd, qdd, tau, method="ols")
    phys = rd.identify(robot, q, qd, qdd, tau, method="physical")
    np.testing.assert_allclose(ols.values[k], -3 * first.std[k], rtol=1e-6)
    assert ols.values[k] < 0.0 <= phys.values[k]
    P = rd.identification.pseudo_inertia(phys.robot.params)
    assert np.linalg.eigvalsh(P).min() >= -1e-9
    assert np.all(phys.robot.M >= 0) and np.all(phys.robot.Fc >= 0) and np.all(phys.robot.Fv >= 0)
    assert np.all(phys.robot.Ia >= 0)
    # the identified robot is a Robot like any other: its dynamics are the identified base model
    np.testing.assert_allclose(rd.inverse_dynamics(phys.robot, q, qd, qdd), phys.predict(q, qd, qdd),
                               rtol=0, atol=1e-9 * np.abs(tau).max())
    rss_ols = np.sum((ols.predict(q, qd, qdd) - tau) ** 2)
    rss_phys = np.sum((phys.predict(q, qd, qdd) - tau) ** 2)
    b = len(ols.names)
    # the constraint is active (the fit is worse than OLS) but by less than the χ²_b spread of the noise
    assert rss_ols < rss_phys <= rss_ols + (b + 5 * np.sqrt(2 * b)) * sigma**2
    np.testing.assert_allclose(phys.values, rd.base_parameters(phys.robot, friction=True).values,
                               rtol=0, atol=1e-9 * np.abs(phys.values).max())


def test_physical_fit_on_a_dense_qr_equals_identify_physical(robot, trajectory):
    """rd.identification.physical_fit needs only R, Qᵀy and the residual norm: from a dense Householder QR of the stacked base
    regressor (an independent reduction), each joint's rows weighted by √w_j as the default's (Gautier's 1/σ_j² of
    the OLS residual), it gives the in-memory physical estimate, to the conic solver's tolerance (duality gap
    1e-10: the estimates to ~1e-8 of their size)."""
    q, qd, qdd, tau = campaign(robot, trajectory, rate=20.0, sigma=[0.3, 0.1, 0.05], seed=0)
    ref = rd.identify(robot, q, qd, qdd, tau, method="physical")
    ols = rd.identify(robot, q, qd, qdd, tau, method="ols")
    w = 1.0 / ols.noise ** 2
    np.testing.assert_allclose(ref.weights, w / np.median(w), rtol=1e-12)
    sw = np.sqrt(ref.weights)
    W = (ref.base.regressor(q, qd, qdd) * sw[:, None]).reshape(-1, ref.base.count)
    y = (tau * sw).ravel()
    Q, R = np.linalg.qr(W)
    qty = Q.T @ y
    fit = rd.identification.physical_fit(robot, ref.base, R, qty, np.linalg.norm(y - Q @ qty), ref.solver["regularization"])
    assert isinstance(fit, rd.identification.PhysicalFit) and fit.solver["certified"]
    assert np.abs(fit.values - ref.values).max() <= 1e-8 * np.abs(ref.values).max()
    np.testing.assert_allclose(fit.robot.params, ref.robot.params, atol=1e-8 * np.abs(ref.robot.params).max())
    assert fit.transmission is None
    with pytest.raises(rd.InputError, match="shapes"):
        rd.identification.physical_fit(robot, ref.base, R[:-1], qty)
    with pytest.raises(rd.InputError, match="'qty' has NaN"):
        rd.identification.physical_fit(robot, ref.base, R, np.full_like(qty, np.nan))
    with pytest.raises(rd.InputError, match="'base'"):
        rd.identification.physical_fit(robot, rd.base_parameters(rd.load("rx90"), friction=True), R, qty)
    with pytest.raises(rd.InputError, match="regularization"):
        rd.identification.physical_fit(robot, ref.base, R, qty, regularization=-1.0)


def test_predict_save_and_relative_std(robot, trajectory, tmp_path):
    res = rd.identify(robot, *campaign(robot, trajectory, sigma=0.01), method="wls")
    np.testing.assert_allclose(res.relative_std, 100 * res.std / np.abs(res.values))
    path = tmp_path / "result.yaml"
    res.save(path)
    data = yaml.safe_load(path.read_text())
    assert data["method"] == "wls" and [p["name"] for p in data["parameters"]] == list(res.names)
    np.testing.assert_array_equal([p["value"] for p in data["parameters"]], res.values)
    with pytest.raises(rd.InputError, match="does not exist"):
        res.save(tmp_path / "missing" / "result.yaml")
    assert not (tmp_path / "missing").exists()
    phys = rd.identify(robot, *campaign(robot, trajectory), method="physical")
    phys.save(path)
    assert yaml.safe_load(path.read_text())["standard_parameters"]["M3"] == pytest.approx(robot.M[2], rel=1e-6)
    # a value of exactly 0 ("physical" at a bound) has no relative σ: null in the file and in `robodyn identify
    # --json` (strict JSON holds no infinity)
    zero = dataclasses.replace(res, values=np.where(np.arange(res.values.size) == 1, 0.0, res.values))
    assert np.isinf(zero.relative_std[1])
    rows = zero.to_dict()["parameters"]
    assert rows[1]["relative_std_percent"] is None and rows[0]["relative_std_percent"] == zero.relative_std[0]


def test_bad_input(robot, trajectory):
    q, qd, qdd, tau = campaign(robot, trajectory)
    with pytest.raises(rd.InputError, match="same number of rows.*tau: 400"):
        rd.identify(robot, q, qd, qdd, tau[:400], method="ols")
    bad = qd.copy()
    bad[123, 0] = np.inf
    with pytest.raises(rd.InputError, match=r"qd: row 123 \(0-based\), joint 1"):
        rd.identify(robot, q, bad, qdd, tau, method="ols")
    with pytest.raises(rd.InputError, match=r"give an \(N, 3\) array"):
        rd.identify(robot, q[:, :2], qd, qdd, tau, method="ols")
    with pytest.raises(rd.identification.IdentificationError, match="give more than"):
        rd.identify(robot, q[:5], qd[:5], qdd[:5], tau[:5], method="ols")
    with pytest.raises(rd.InputError, match="method = 'lsq'"):
        rd.identify(robot, q, qd, qdd, tau, method="lsq")
    # joint 3 never moves: its friction and the inertia it alone reveals are not excited
    q3, qd3, qdd3 = q.copy(), qd.copy(), qdd.copy()
    q3[:, 2], qd3[:, 2], qdd3[:, 2] = 0.3, 0.0, 0.0
    with pytest.raises(rd.identification.IdentificationError, match=r"do not excite .*Fc3, Fv3") as info:
        rd.identify(robot, q3, qd3, qdd3, rd.inverse_dynamics(robot, q3, qd3, qdd3), method="ols")
    assert isinstance(info.value, rd.RobodynError)


@pytest.mark.parametrize("weights", [None, [1.0, 1.0, 2.0, 2.0, 4.0, 4.0]])
def test_physical_holds_the_parameters_the_data_do_not_excite_at_the_model_values(weights):
    """A wrist joint that never moves: least squares cannot identify its rotor inertia and friction and says so,
    naming "physical"; "physical" holds them at the model's values (their pull towards the prior is scaled by
    those values, not by their columns' rounding-level norms), names them, leaves their σ undefined, and predicts
    held-out torques within the noise; with joint weights too (the weighted covariance of the excited ones)."""
    robot = rd.load("rx90")
    rng = np.random.default_rng(11)

    def still_wrist(N):
        q, qd, qdd = (rng.uniform(-1, 1, (N, 6)) for _ in range(3))
        q[:, 5], qd[:, 5], qdd[:, 5] = 0.3, 0.0, 0.0
        return q, qd, qdd, rd.inverse_dynamics(robot, q, qd, qdd)

    sigma = 0.01
    q, qd, qdd, tau = still_wrist(3000)
    tau = tau + rng.normal(0.0, sigma, tau.shape)
    with pytest.raises(rd.identification.IdentificationError, match=r"Ia6, Fc6, Fv6 .*method='physical'"):
        rd.identify(robot, q, qd, qdd, tau, weights=weights, method="ols")
    with pytest.warns(UserWarning, match=r"do not excite 3 of the 58 parameters \(Ia6, Fc6, Fv6: .*model's values"):
        res = rd.identify(robot, q, qd, qdd, tau, method="physical", weights=weights)
    assert res.converged
    held = [res.names.index(k) for k in ("Ia6", "Fc6", "Fv6")]
    np.testing.assert_allclose(res.values[held], [robot.Ia[5], robot.Fc[5], robot.Fv[5]], rtol=1e-6)
    assert np.all(np.isnan(res.std[held])) and {"Ia6", "Fc6", "Fv6"} <= set(res.prior_determined)
    # the excited parameters' σ: the least-squares covariance of those columns alone, here from the explicit
    # regressor: σ² (WᵀW)⁻¹ pooled, or with weights the sandwich M⁻¹ (Σ_j w_j² σ_j² G_j) M⁻¹, M = Σ_j w_j G_j
    assert np.all(res.equations == len(q))
    excited = np.setdiff1d(np.arange(len(res.names)), held)
    W = res.base.regressor(q, qd, qdd)[:, :, excited]  # (N, 6, b - 3)
    G = np.einsum("snk,snl->nkl", W, W)  # per joint
    if weights is None:
        A = W.reshape(-1, excited.size)
        r = tau.reshape(-1) - A @ np.linalg.lstsq(A, tau.reshape(-1), rcond=None)[0]
        std = np.sqrt(r @ r / (A.shape[0] - len(res.names)) * np.diag(np.linalg.inv(G.sum(0))))
    else:
        w = np.asarray(weights)
        Minv = np.linalg.inv(np.einsum("n,nkl->kl", w, G))
        std = np.sqrt(np.diag(Minv @ np.einsum("n,nkl->kl", w ** 2 * res.noise ** 2, G) @ Minv))
    np.testing.assert_allclose(res.std[excited], std, rtol=1e-6)
    assert all(p["std"] is None for p in res.to_dict()["parameters"] if p["name"] in ("Ia6", "Fc6", "Fv6"))
    assert np.isfinite(res.condition_number)  # of the excited columns: the record is strict JSON
    json.dumps(res.to_dict(), allow_nan=False)
    assert np.all(res.validate(*still_wrist(3000)).rms < 0.5 * sigma)


def test_series_is_the_fourier_form():
    a, b, q0 = np.array([[0.3, -0.1]]), np.array([[0.2, 0.05]]), np.array([0.4])
    w, t = 2 * np.pi * 0.2, np.array([0.0, 0.7, 1.9])
    q, qd, qdd = _series(a, b, q0, w, t)
    qe = 0.4 + sum(a[0, k] / (w * (k + 1)) * np.sin(w * (k + 1) * t) - b[0, k] / (w * (k + 1)) * np.cos(w * (k + 1) * t)
                   for k in range(2))
    np.testing.assert_allclose(q[:, 0], qe, rtol=1e-14)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), weighted=st.booleans(), positions=st.booleans())
def test_chunk_gram_is_the_dense_product_with_zero_columns_left_out(seed, weighted, positions):
    """reduce_rows forms each joint's Gram matrix from the columns of W_j that are not zero in the chunk: it equals
    the dense √w [E_j W_j y_j]ᵀ √w [E_j W_j y_j] within the rounding of its sums (rows ε Σ |a||b|), and the entries
    of a zero column are exactly 0 (a joint with every column zero, one with none, and some in between)."""
    rng = np.random.default_rng(seed)
    rows, n, b, k = int(rng.integers(1, 300)), 4, 9, 2 if positions else 0
    W = rng.standard_normal((rows, n, b)) * rng.uniform(0.1, 1e3, b)
    present = rng.uniform(size=(n, b)) < 0.6
    present[0], present[1] = True, False
    W *= present
    tau, E = rng.standard_normal((rows, n)), rng.standard_normal((rows, n, k)) if k else None
    keep = rng.uniform(0, 2, (rows, n)) * (rng.uniform(size=(rows, n)) > 0.2) if weighted else None
    acc, used = reduce_rows(W, tau, keep, "gram", E=E)
    G = acc[0] + acc[1]
    w = np.ones((rows, n)) if keep is None else keep
    for j in range(n):
        A = np.sqrt(w[:, j, None]) * np.concatenate([E[:, j] if k else np.zeros((rows, 0)), W[:, j], tau[:, j, None]], 1)
        bound = rows * np.finfo(float).eps * (np.abs(A).T @ np.abs(A))
        assert np.all(np.abs(G[j] - A.T @ A) <= 2 * bound)
        zero = np.concatenate([np.zeros(k, bool), ~present[j], [False]])
        assert np.all(G[j][zero] == 0.0) and np.all(G[j][:, zero] == 0.0)
    assert np.array_equal(used, np.full(n, rows) if keep is None else np.sum(keep > 0, axis=0))


def test_identify_estimates_the_base_parameters_of_the_exact_right_angles_of_rounded_ones():
    """A PUMA 560 whose right angles are rounded to 4 decimals (1.5708) has one base parameter more (Ia2) than with
    the exact angles, a column 3.7e-6 rad of tilt away from the others: identify at its defaults warns, naming it,
    and estimates the exact angles' 58 on the rounded model's own regressor, whose torques they reproduce to the
    order of that tilt; base= given keeps all 59 without a warning; the exact robot has no warning."""
    exact = rd.load("puma560")
    rounded = exact.replace(alpha=np.round(exact.alpha, 4))
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.uniform(-2, 2, (3, 2000, 6))
    tau = rd.inverse_dynamics(rounded, q, qd, qdd)
    with pytest.warns(UserWarning, match=r"this 1 of its 59 base parameters \(Ia2\) exists only because angles lie "
                                         r"within 3.7e-06 rad of a right angle \(alpha of 'j2' = -1.5708"):
        res = rd.identify(rounded, q, qd, qdd, tau)
    assert res.base.robot is rounded and res.base.count == rd.base_parameters(exact, friction=True).count == 58
    tilt = np.abs(np.round(exact.alpha, 4) - exact.alpha).max()
    assert np.linalg.norm(res.base.regressor(q, qd, qdd) @ res.values - tau) <= 10 * tilt * np.linalg.norm(tau)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        full = rd.identify(rounded, q, qd, qdd, tau, base=rd.base_parameters(rounded, friction=True))
        assert full.base.count == 59
        assert rd.identify(exact, q, qd, qdd, rd.inverse_dynamics(exact, q, qd, qdd)).base.count == 58


def test_identify_warns_when_positions_run_far_outside_the_joint_limits():
    """A log in degrees read as radians runs outside every joint's limits by more than their width: identify says
    which joints, and that in degrees they would lie within them.  Within the limits, or beyond them by less than
    their width (a model's conservative limits), it says nothing."""
    robot = rd.load("panda")
    rng = np.random.default_rng(5)
    q = rng.uniform(robot.qlim[:, 0], robot.qlim[:, 1], (500, 7))
    qd, qdd = rng.uniform(-1, 1, (2, 500, 7))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    with pytest.warns(UserWarning, match=r"joint 1 \(j1\) \[-1\d\d\.\d, 1\d\d\.\d\] outside \[-2.897, 2.897\];.* In "
                                         r"degrees they would lie within them"):
        rd.identify(robot, np.degrees(q), qd, qdd, tau)
    wide = q + 0.9 * (robot.qlim[:, 1] - robot.qlim[:, 0]) * (q > 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rd.identify(robot, wide, qd, qdd, rd.inverse_dynamics(robot, wide, qd, qdd))


def test_identify_warns_about_negative_friction_a_flipped_torque_gives():
    """A joint whose torque is logged with the wrong sign fits friction of the wrong sign, far beyond its σ and a
    large share of the joint's torque: identify names those coefficients; the correct log gives no warning."""
    robot = rd.load("puma560").replace(Fv=np.full(6, 0.5), Fc=np.full(6, 0.3))
    rng = np.random.default_rng(2)
    q, qd, qdd = rng.uniform(-2, 2, (3, 3000, 6))
    tau = rd.inverse_dynamics(robot, q, qd, qdd) + 0.01 * rng.standard_normal((3000, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rd.identify(robot, q, qd, qdd, tau)
    tau[:, 3] *= -1
    with pytest.warns(UserWarning, match=r"negative friction, which no joint has: Fc4 = -0.\d+ ± .* of joint 4's "
                                         r"torque in norm\), Fv4 = -0.\d+ ± .*wrong sign or scale.*method='ols', "
                                         r"which fits them as they are"):
        rd.identify(robot, q, qd, qdd, tau)
