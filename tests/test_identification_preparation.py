"""Data preparation a user can trust (automatic cut-off, trimming, jittered time stamps, decimation), per-joint
sample selection and weights, the solver report of "physical", and joint limits of the built-in real robots."""

import json
import re
import warnings

import numpy as np
import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app
from robodyn.identification.data import auto_cutoff, noise_frequency, position_bandwidth


def motion(t):
    """Two joints: harmonics of 0.2 Hz up to 0.8 Hz, at rest at t = 0 (a Swevers-like excitation)."""
    w = 2 * np.pi * 0.2
    q = np.column_stack([0.5 * (1 - np.cos(w * t)) + 0.1 * np.sin(4 * w * t) ** 2, 0.3 * np.sin(2 * w * t) ** 2])
    return q


def rich(t):
    """Harmonics of 0.25 Hz up to 10 Hz with amplitudes 1/l³: the encoders resolve more of them the less noisy
    they are."""
    phase = np.linspace(0, 2, 40)
    q = sum(np.sin(2 * np.pi * 0.25 * l * t + phase[l - 1]) / l ** 3 for l in range(1, 41))
    return np.column_stack([q, 0.5 * q])


def test_auto_cutoff_follows_the_noise_floor_of_q():
    rng = np.random.default_rng(0)
    t = np.arange(0, 20, 1 / 500.0)
    q = rich(t)
    band = position_bandwidth(t, q)
    assert band < 1.0
    cuts = []
    for sigma in (1e-5, 1e-3, 3e-3):  # more encoder noise, lower cut-off
        qn = q + rng.normal(0, sigma, q.shape)
        fc, rule, band = auto_cutoff(t, qn)
        assert 5 * band <= fc <= 10 * band
        assert fc == pytest.approx(min(max(noise_frequency(t, qn), 5 * band), 10 * band))
        cuts.append(fc)
        d = rd.identification.prepare_identification_data(t, qn, qn)
        assert d.cutoff == fc and d.cutoff_rule == rule and d.bandwidth == band
    assert cuts[0] >= cuts[1] >= cuts[2] and cuts[0] > cuts[2]
    # noise-free q (or encoders that resolve servo ripple): 10 x the bandwidth, never the ceiling of 0.2 x the rate
    d = rd.identification.prepare_identification_data(t, q, q)
    assert d.cutoff == pytest.approx(10 * d.bandwidth) and "at most 10 x" in d.cutoff_rule
    # a fast motion sampled slowly: the ceiling, 0.2 x the rate
    slow = np.arange(0, 20, 1 / 20.0)
    d = rd.identification.prepare_identification_data(slow, rich(slow), rich(slow))
    assert d.cutoff == pytest.approx(4.0) and d.cutoff_rule.startswith("auto: at most 0.2 x the rate")
    # a given cut-off is used as it is
    assert rd.identification.prepare_identification_data(t, q, q, cutoff=12.5).cutoff_rule == "given"


def test_a_joint_that_barely_moves_does_not_set_the_auto_cutoff():
    """A joint at rest under encoder noise has a flat spectrum: alone it puts the run at the ceiling of 0.2 x the
    rate.  Beside joints that move, it sets neither the bandwidth nor the noise frequency (its RMS is below 1 % of
    theirs), so the cut-off is theirs; a joint moving faster at 3 % of their RMS does set the bandwidth, at 0.3 % not."""
    rng = np.random.default_rng(0)
    t = np.arange(0, 20, 1 / 250.0)
    q = rich(t) + rng.normal(0, 1e-5, (t.size, 2))
    still = 0.3 + rng.normal(0, 1e-5, (t.size, 1))
    assert auto_cutoff(t, still)[0] == pytest.approx(0.2 * 250.0)
    assert auto_cutoff(t, np.column_stack([q, still])) == auto_cutoff(t, q)
    rms = np.sqrt(np.mean((q - q.mean(axis=0)) ** 2, axis=0)).max()
    fast = np.sqrt(2) * rms * np.sin(2 * np.pi * 3.0 * t)[:, None]  # RMS 1 x theirs, at 3 Hz
    assert position_bandwidth(t, np.column_stack([q, 0.03 * fast])) == position_bandwidth(t, fast) > 2.9
    assert position_bandwidth(t, np.column_stack([q, 0.003 * fast])) == position_bandwidth(t, q) < 1.0


@pytest.mark.parametrize("cutoff", ["auto", 12.5])
def test_the_periodogram_of_q_is_computed_once_per_preparation(cutoff, monkeypatch):
    """The cut-off, the bandwidth and the velocity noise come from one periodogram of the measured q, the one
    each of auto_cutoff, position_bandwidth and velocity_noise computes alone."""
    import scipy.signal

    from robodyn.identification.data import velocity_noise

    t = np.arange(0, 20, 1 / 500.0)
    q = rich(t) + np.random.default_rng(1).normal(0, 1e-4, (t.size, 2))
    calls = []
    periodogram = scipy.signal.periodogram
    monkeypatch.setattr(scipy.signal, "periodogram", lambda *a, **k: calls.append(1) or periodogram(*a, **k))
    d = rd.identification.prepare_identification_data(t, q, q, cutoff=cutoff, trim=False)
    assert len(calls) == 1
    assert d.bandwidth == position_bandwidth(t, q)
    assert d.cutoff == (auto_cutoff(t, q)[0] if cutoff == "auto" else cutoff)
    np.testing.assert_array_equal(d.velocity_noise, velocity_noise(t, q, d.cutoff))


def test_trimming_of_transients_and_standstill_and_decimation_default():
    rate = 200.0
    t = np.arange(0, 30, 1 / rate)
    q = motion(t - 5.0)
    q[t < 5.0] = q[np.searchsorted(t, 5.0)]  # 5 s at rest before the motion starts
    d = rd.identification.prepare_identification_data(t, q, q, cutoff=10.0)
    edge = int(np.ceil(3 * 4 / (2 * np.pi * 10.0) * rate))
    assert d.trimmed[1] == max(edge, d.standstill[1])
    assert 0.95 * 5 * rate <= d.standstill[0] <= 5 * rate + 1 and d.trimmed[0] == d.standstill[0]
    assert d.t[0] >= 4.9
    kept = t.size - sum(d.trimmed)
    # ⌊rate / (4 fc)⌋ = 5 would keep ~1000 samples: reduced to keep at least 2000
    assert d.decimate == max(1, min(5, kept // 2000)) == 2
    rep = d.report()
    assert rep["trimmed"] == list(d.trimmed) and "standstill" in rep["summary"]
    full = rd.identification.prepare_identification_data(t, q, q, cutoff=10.0, trim=False, decimate=1)
    assert full.t.size == t.size and full.trimmed == (0, 0)


def test_jittered_time_stamps_are_resampled():
    """A controller log stepping by 10 or 12 ms: resampled by cubic spline onto the median step."""
    rng = np.random.default_rng(1)
    t = np.concatenate([[0.0], np.cumsum(rng.choice([0.010, 0.012], size=2000))])
    q = motion(t)
    d = rd.identification.prepare_identification_data(t, q, q, cutoff=5.0, trim=False, decimate=1)
    step = float(np.median(np.diff(t)))
    assert d.rate == pytest.approx(1 / step) and "resampled by cubic spline" in d.resampled
    np.testing.assert_allclose(np.diff(d.t), step, rtol=0, atol=1e-12)
    inner = slice(50, -50)
    # the filtered, resampled q against the exact motion at the new instants (the motion is below 1 Hz)
    np.testing.assert_allclose(d.q[inner], motion(d.t[inner]), rtol=0, atol=1e-4)


@pytest.mark.parametrize("scale, unit, rate", [(1e3, "milliseconds", "100"), (1e6, "microseconds", "100")])
def test_times_in_milliseconds_or_microseconds_warn_naming_the_unit(scale, unit, rate):
    """A 100 Hz log whose t is in ms (steps of 10) or µs (steps of 1e4) read as seconds: its q̇ would be 1e3 or
    1e6 times too small; the warning names the unit and the rate it gives.  The same log in seconds is silent."""
    t = np.arange(3000) * 0.01
    q = motion(t)
    with pytest.warns(UserWarning, match=rf"if t is in {unit}, give t / 1e\d \(a {rate} Hz log\)"):
        rd.identification.prepare_identification_data(t * scale, q, q)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rd.identification.prepare_identification_data(t, q, q)


def test_times_in_nanoseconds_are_refused_naming_the_unit():
    t = np.arange(3000) * 1e-3
    with pytest.raises(rd.InputError, match=r"if t is in nanoseconds, give t / 1e9 \(a 1000 Hz log\)"):
        rd.identification.prepare_identification_data(t * 1e9, motion(t), motion(t))


def test_min_velocity_drops_rows_per_joint_and_weights_scale_the_fit():
    robot = rd.load("planar2r").replace(Fc=[0.5, 0.3], Fv=[0.2, 0.1])
    q, qd, qdd = np.random.default_rng(2).uniform(-2, 2, size=(3, 400, 2))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    res = rd.identify(robot, q, qd, qdd, tau, min_velocity=[0.5, 1.0], method="ols")
    assert list(res.equations) == [int(np.sum(np.abs(qd[:, 0]) >= 0.5)), int(np.sum(np.abs(qd[:, 1]) >= 1.0))]
    truth = rd.base_parameters(robot, friction=True).values
    np.testing.assert_allclose(res.values, truth, rtol=0, atol=1e-9 * np.abs(truth).max())
    # a corrupted torque where joint 1 is slow: dropped by min_velocity, so the estimate stays exact
    bad = tau.copy()
    slow = np.abs(qd[:, 0]) < 0.5
    bad[slow, 0] += 3.0
    assert np.max(np.abs(rd.identify(robot, q, qd, qdd, bad, method="ols").values - truth)) > 1e-3
    for method in ("ols", "wls", "irls", "physical"):
        est = rd.identify(robot, q, qd, qdd, bad, min_velocity=[0.5, 0.0], method=method)
        np.testing.assert_allclose(est.values, truth, rtol=0, atol=1e-6 * np.abs(truth).max(), err_msg=method)
    # per-joint weights: exact data are fitted exactly whatever the weights; noisy data follow the weights
    w = rd.identify(robot, q, qd, qdd, tau, weights=[1.0, 100.0], method="ols")
    np.testing.assert_allclose(w.values, truth, rtol=0, atol=1e-9 * np.abs(truth).max())
    noisy = tau + np.random.default_rng(3).normal(0, [0.01, 0.5], tau.shape)
    plain = rd.identify(robot, q, qd, qdd, noisy, method="ols")
    gautier = rd.identify(robot, q, qd, qdd, noisy, weights=1 / np.array([0.01, 0.5]) ** 2, method="ols")
    wls = rd.identify(robot, q, qd, qdd, noisy, method="wls")
    np.testing.assert_allclose(gautier.values, wls.values, rtol=0, atol=0.05 * np.abs(truth).max())
    assert np.linalg.norm(gautier.values - truth) < np.linalg.norm(plain.values - truth)
    z = np.abs(gautier.values - truth) / gautier.std
    assert np.all(z < 3), z
    with pytest.raises(rd.InputError, match=r"weights = \[1.0, -1.0\]; give 2 finite weights >= 0"):
        rd.identify(robot, q, qd, qdd, tau, weights=[1.0, -1.0], method="ols")
    with pytest.raises(rd.identification.IdentificationError, match="no sample of joint 2 moves at 5 or faster"):
        rd.identify(robot, q, qd, qdd, tau, min_velocity=[0.0, 5.0], method="ols")


@pytest.mark.parametrize("option, bad, match", [
    ("weights", [1.0, 2.0, 3.0], r"weights = \[1.0, 2.0, 3.0\]; give 2 finite weights >= 0, one per joint, or one"),
    ("weights", np.nan, r"weights = nan; give 2 finite weights >= 0, one per joint"),
    ("min_velocity", [0.1], r"min_velocity = \[0.1\]; give 2 finite speeds >= 0, one per joint"),
    ("min_velocity", -1.0, r"min_velocity = -1.0; give 2 finite speeds >= 0, one per joint"),
    ("bounds", {"min_mass": [0.0, 1.0, 1.0]}, r"min_mass = \[0.0, 1.0, 1.0\]; give 2 masses in kg \(not NaN\), one "
                                              "per frame"),
    ("bounds", {"max_mass": np.nan}, r"max_mass = nan; give 2 masses in kg \(not NaN\), one per frame"),
])
def test_one_value_or_one_per_joint_or_frame(option, bad, match):
    """weights, min_velocity (per joint) and the mass bounds (per frame): one value for all or one each; otherwise
    an InputError naming the argument and the count it wants."""
    robot = rd.load("planar2r")
    q, qd, qdd = np.random.default_rng(2).uniform(-2, 2, size=(3, 60, 2))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    method = "physical" if option == "bounds" else "ols"
    with pytest.raises(rd.InputError, match=match):
        rd.identify(robot, q, qd, qdd, tau, method=method, **{option: bad})
    if option != "bounds":  # one value serves every joint
        one, each = (rd.identify(robot, q, qd, qdd, tau, **{option: v}) for v in (0.5, [0.5, 0.5]))
        np.testing.assert_array_equal(one.values, each.values)
        np.testing.assert_array_equal(one.equations, each.equations)


def test_physical_reports_a_converged_solver_without_warnings():
    robot = rd.load("planar2r").replace(Fc=[0.5, 0.3], Fv=[0.2, 0.1])
    q, qd, qdd = np.random.default_rng(2).uniform(-2, 2, size=(3, 400, 2))
    tau = rd.inverse_dynamics(robot, q, qd, qdd) + np.random.default_rng(4).normal(0, 0.05, q.shape)
    res = rd.identify(robot, q, qd, qdd, tau, method="physical")
    assert res.solver["certified"] and res.solver["warnings"] == ""
    assert res.solver["name"] == "CLARABEL" and res.solver["iterations"] > 0
    assert res.to_dict()["solver"]["certified"]


def test_real_robots_carry_joint_limits_and_designs_stay_inside():
    for name in ("wam7", "puma560", "rx90", "panda", "puma560_corke"):
        lim = rd.load(name).qlim
        assert np.all(np.isfinite(lim)) and np.all(lim[:, 0] < lim[:, 1]), name
    wam = rd.load("wam7")
    assert wam.qlim[1, 1] == pytest.approx(1.98)  # the WAM's shoulder: about ±2 rad, not ±π
    q = rd.identification.calibration_poses(wam, 12, seed=0)
    assert np.all(q >= wam.qlim[:, 0]) and np.all(q <= wam.qlim[:, 1])
    toy = rd.load("planar2r")
    with pytest.raises(rd.InputError, match="calibration_poses: robot 'planar2r' has no joint limits for "
                                            r"joint\(s\) 1, 2; give limits"):
        rd.identification.calibration_poses(toy, 4)
    with pytest.raises(rd.InputError, match="excitation_trajectory: robot 'planar2r' has no joint limits"):
        rd.excitation_trajectory(toy, 4.0, harmonics=2, max_iterations=1)
    assert rd.identification.calibration_poses(toy, 4, limits=[[-1, 1], [-0.5, 0.5]]).shape == (4, 2)
    tr = rd.excitation_trajectory(toy, 4.0, harmonics=2, max_iterations=2, limits={"q": [[-1, 1], [-0.5, 0.5]]})
    qs, _, _ = tr.sample(tr.times(100.0))
    assert np.all(np.abs(qs[:, 0]) <= 1 + 1e-9) and np.all(np.abs(qs[:, 1]) <= 0.5 + 1e-9)


def test_cli_refuses_a_robot_without_limits(tmp_path):
    runner = CliRunner()
    out = tmp_path / "poses.csv"
    res = runner.invoke(app, ["calibration-poses", "planar3r", "--count", "6", "--out", str(out)])
    assert res.exit_code == 2 and "has no joint limits" in res.output and not out.exists()
    res = runner.invoke(app, ["calibration-poses", "planar3r", "--count", "6", "--out", str(out), "--unlimited"])
    assert res.exit_code == 0 and out.exists()
    traj = tmp_path / "traj.csv"
    res = runner.invoke(app, ["excite", "planar3r", "--duration", "4", "--out", str(traj), "--harmonics", "2",
                              "--max-iterations", "1"])
    assert res.exit_code == 2 and "has no joint limits" in res.output and not traj.exists()


def test_cli_reports_the_preparation(tmp_path):
    robot = rd.load("planar2r")
    t = np.arange(0, 20, 0.005)
    q = motion(t)
    qd = np.gradient(q, t, axis=0)
    qdd = np.gradient(qd, t, axis=0)
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    data = tmp_path / "m.csv"
    np.savetxt(data, np.column_stack([t, q, tau]), delimiter=",", header="t,q1,q2,tau1,tau2", comments="")
    res = CliRunner().invoke(app, ["identify", "planar2r", str(data), "--json", "--no-friction"])
    assert res.exit_code == 0, res.output
    prep = json.loads(res.stdout)["prepared"]
    assert prep["cutoff_rule"].startswith("auto") and prep["samples"] == json.loads(res.stdout)["samples_used"]


def test_spectrum_plot_marks_the_cutoff():
    t = np.arange(0, 20, 1 / 500.0)
    q = motion(t) + np.random.default_rng(0).normal(0, 1e-4, (t.size, 2))
    fig = rd.plot.spectrum(t, q, q, cutoff="auto")
    assert len(fig.axes) == 2
    line = [ln for ln in fig.axes[0].lines if ln.get_label().startswith("cut-off")][0]
    assert line.get_xdata()[0] == pytest.approx(auto_cutoff(t, q)[0])
    with pytest.raises(rd.InputError, match="tau"):
        rd.plot.spectrum(t, q, q[:, :1])


@pytest.mark.parametrize("method", ["ols", "wls", "physical"])
def test_weights_that_make_the_problem_singular_are_refused(method):
    """Exact data with weights [1e-16, 1, ...]: the first joint's equations fall below the round-off of the others'
    factors; the parameters only they determine (ZZR1) cannot be resolved — refused, naming them, instead of
    estimates off by O(1) with standard deviations of 0."""
    robot = rd.load("rx90")
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-2, 2, (3, 300, robot.n))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    w = np.ones(robot.n)
    w[0] = 1e-16
    with pytest.raises(rd.identification.IdentificationError, match="weights .* numerically singular: ZZR1"):
        rd.identify(robot, q, qd, qdd, tau, weights=w, method=method)
    w[0] = 1e-4  # four orders of magnitude: resolved, the exact parameters to rounding
    res = rd.identify(robot, q, qd, qdd, tau, weights=w)
    truth = res.base.values
    assert np.abs(res.values - truth).max() <= 1e-8 * np.abs(truth).max()


def test_measured_velocities_are_resampled_filtered_and_differentiated():
    """``qd`` given (a logged q̇): q̇ is that velocity resampled and filtered like q, q̈ its central differences —
    here twice the true velocity, so that what comes out shows which signal it came from."""
    rng = np.random.default_rng(2)
    t = np.concatenate([[0.0], np.cumsum(rng.choice([0.010, 0.012], size=2000))])
    w = 2 * np.pi * 0.2
    velocity = lambda s: np.column_stack([0.5 * w * np.sin(w * s) + 0.4 * w * np.sin(8 * w * s),  # noqa: E731
                                          0.6 * w * np.sin(4 * w * s)])
    accel = lambda s: np.column_stack([0.5 * w ** 2 * np.cos(w * s) + 3.2 * w ** 2 * np.cos(8 * w * s),  # noqa: E731
                                       2.4 * w ** 2 * np.cos(4 * w * s)])
    q = motion(t)
    d = rd.identification.prepare_identification_data(t, q, q, cutoff=5.0, trim=False, decimate=1,
                                                      qd=2 * velocity(t))
    ref = rd.identification.prepare_identification_data(t, q, q, cutoff=5.0, trim=False, decimate=1)
    assert d.measured_velocity and not ref.measured_velocity and "measured velocities" in d.report()["summary"]
    np.testing.assert_array_equal(d.t, ref.t)
    np.testing.assert_array_equal(d.q, ref.q)
    inner = slice(50, -50)
    # the highest harmonic, 8 w (1.6 Hz), loses (1.6 / 5)⁸ ≈ 1.1e-4 of itself in the order-4 filter run forward
    # and backward; central differences of step h err by h² / 6 times the third derivative of what they differ
    h, loss = 1 / d.rate, 2e-4
    third_q = 0.5 * w ** 3 + 0.05 * (8 * w) ** 3  # |q⁽³⁾| of joint 1 at most
    np.testing.assert_allclose(d.qd[inner], 2 * velocity(d.t[inner]), rtol=0, atol=loss * 2 * 0.9 * w)
    np.testing.assert_allclose(ref.qd[inner], velocity(d.t[inner]), rtol=0, atol=h ** 2 / 6 * third_q + loss)
    np.testing.assert_allclose(d.qdd[inner], 2 * accel(d.t[inner]), rtol=0,
                               atol=h ** 2 / 6 * 2 * third_q * 8 * w + loss * 2 * 3.7 * w ** 2)
    with pytest.raises(rd.InputError, match="qd has shape"):
        rd.identification.prepare_identification_data(t, q, q, qd=velocity(t)[:, :1])


def test_a_constant_velocity_ramp_keeps_its_trend_in_the_automatic_cut_off():
    """A joint moved at constant velocity is all linear trend: detrended, only its noise would be left, whose
    bandwidth (about the Nyquist frequency) put the cut-off at 0.2 × the rate.  Its trend is kept instead: the
    bandwidth is that of the ramp (a few bins of 1 / T), and the prepared velocity is the ramp's to 1 % (the
    filter's end transients, trimmed to two time constants, leave 0.8 % at the ends)."""
    rng = np.random.default_rng(0)
    t = np.arange(0, 9.0, 0.0025)
    q = np.outer(-0.2 * t, np.ones(3)) + 0.8 + rng.normal(0, 1e-5, (t.size, 3))
    fc, rule, band = auto_cutoff(t, q)
    assert band <= 5 / 9 and fc <= 10 * band < 0.2 * 400, rule
    data = rd.identification.prepare_identification_data(t, q, np.sin(q))
    assert data.cutoff == fc
    assert np.abs(data.qd + 0.2).max() < 0.01 * 0.2


def test_the_fit_plot_of_prepared_runs_shows_what_validate_scores(tmp_path, monkeypatch):
    """``res.plot(path, runs)``: the prediction with the runs' filtered Coulomb columns (what ``validate`` scores,
    not sign(q̇)), against the runs' times one after the other (the first on its own)."""
    import robodyn.files

    figures = []
    original = robodyn.files.save_figure
    monkeypatch.setattr(robodyn.files, "save_figure", lambda fig, path: (figures.append(fig), original(fig, path)))
    robot = rd.load("rx90")
    t = np.arange(0.0, 10.0, 0.004)
    runs = []
    for seed in (1, 2):
        rng = np.random.default_rng(seed)  # three sines a joint: amplitudes (rad), rad/s, phases
        a, w, phase = rng.uniform(0.3, 1.0, (3, 6)), rng.uniform(0.5, 2.0, (3, 6)), rng.uniform(0, 6, (3, 6))
        q = sum(a[k] * np.sin(w[k] * t[:, None] + phase[k]) for k in range(3))
        qd = sum(a[k] * w[k] * np.cos(w[k] * t[:, None] + phase[k]) for k in range(3))
        qdd = sum(-a[k] * w[k] ** 2 * np.sin(w[k] * t[:, None] + phase[k]) for k in range(3))
        runs.append(rd.identification.prepare_identification_data(t + 5.0, q, rd.inverse_dynamics(robot, q, qd, qdd)))
    res = rd.identify(robot, runs)
    res.plot(tmp_path / "fit.png", runs)
    assert (tmp_path / "fit.png").is_file()
    (fig,) = figures
    measured, predicted, _ = fig.axes[0].lines
    first, second = runs
    x = predicted.get_xdata()
    np.testing.assert_array_equal(x[:len(first.t)], first.t)
    np.testing.assert_allclose(np.diff(x), first.t[1] - first.t[0], rtol=1e-9)
    expected = np.concatenate([res.predict(r.q, r.qd, r.qdd, coulomb=r.coulomb)[:, 0] for r in runs])
    np.testing.assert_allclose(predicted.get_ydata(), expected, rtol=1e-12, atol=1e-12)
    plain = np.concatenate([res.predict(r.q, r.qd, r.qdd)[:, 0] for r in runs])
    assert np.abs(plain - expected).max() > 0.1  # sign(q̇) would have drawn another model


def test_a_low_cutoff_at_a_high_rate_filters_to_rounding():
    """A 1 Hz cut-off at 10 kHz (fc / Nyquist = 2e-4): the Butterworth filter as second-order sections passes a
    0.1 Hz motion (|H|² = 1 − 1e-8 there) to ~1e-8 and its accelerations to ~1e-6, where the transfer function's
    coefficients (b, a), which lose their digits as fc / rate falls, gave errors of 5e-4 rad at 5 kHz."""
    rate, w = 10_000.0, 2 * np.pi * 0.1
    t = np.arange(int(30 * rate)) / rate
    q = np.column_stack([0.3 * np.sin(w * t) + 0.2, -0.5 * np.cos(w * t)])
    data = rd.identification.prepare_identification_data(t, q, q.copy(), cutoff=1.0)
    mid = slice(len(data.t) // 4, 3 * len(data.t) // 4)  # away from the ends' transients, which trimming cuts to ~1 %
    tm = data.t[mid]
    exact = np.column_stack([0.3 * np.sin(w * tm) + 0.2, -0.5 * np.cos(w * tm)])
    np.testing.assert_allclose(data.q[mid], exact, rtol=0, atol=1e-7)
    np.testing.assert_allclose(data.tau[mid], exact, rtol=0, atol=1e-7)
    qdd = np.column_stack([-0.3 * w ** 2 * np.sin(w * tm), 0.5 * w ** 2 * np.cos(w * tm)])
    np.testing.assert_allclose(data.qdd[mid], qdd, rtol=0, atol=1e-5 * np.abs(qdd).max())


@pytest.mark.parametrize("option, match", [(dict(cutoff=[5.0]), "give one frequency"),
                                           (dict(cutoff=[5.0, 6.0]), "give one frequency"),
                                           (dict(order=float("nan")), "order = nan"),
                                           (dict(order=True), "order = True"), (dict(order="4"), "order = '4'")])
def test_bad_cutoff_and_order_are_input_errors(option, match):
    t = np.arange(400) / 100.0
    q = np.sin(t)[:, None] * [1.0, 0.5]
    with pytest.raises(rd.InputError, match=re.escape(match)):
        rd.identification.prepare_identification_data(t, q, q, **option)


def test_masked_entries_are_refused_not_dropped():
    """np.asarray drops a masked array's mask: its masked values (here -9999) would enter the fit as data."""
    t = np.arange(400) / 100.0
    q = np.ma.masked_array(np.sin(t)[:, None] * [1.0, 0.5])
    q[200, 1], q.data[200, 1] = np.ma.masked, -9999.0
    with pytest.raises(rd.InputError, match=r"'q' is a masked array with 1 masked entries \(the first at index "
                                            r"\(200, 1\)\)"):
        rd.identification.prepare_identification_data(t, q, q.data)
    with pytest.raises(rd.InputError, match="masked array"):
        rd.inverse_dynamics(rd.load("planar2r"), q, q.data, q.data)
    plain = np.ma.masked_array(q.data)  # nothing masked: the values are the data
    assert rd.identification.prepare_identification_data(t, plain, plain).q.shape[1] == 2


def test_a_decimation_that_leaves_too_few_samples_is_named():
    t = np.arange(5000) / 200.0
    q = np.sin(t)[:, None] * [1.0, 0.5]
    with pytest.raises(rd.InputError, match=r"decimate = 100000 leaves 1 of the \d+ samples kept; give at most "
                                            r"\d+, or leave it to the default"):
        rd.identification.prepare_identification_data(t, q, q, decimate=100000)
    assert len(rd.identification.prepare_identification_data(t, q, q, decimate=1000).q) >= 3
