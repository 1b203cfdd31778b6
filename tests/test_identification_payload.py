"""Essential parameters (Pham & Gautier), payload identification with a known arm, drive gains with a known
payload mass (Khalil, Gautier & Lemoine): synthetic data, noise-free and with noise (within 3 σ, fixed seeds)."""

import numpy as np
import pytest

import robodyn as rd

PAYLOAD = rd.standard_from_com(2.0, [0.01, -0.02, 0.05], [0.01, 0.001, 0.0, 0.012, -0.0005, 0.008])


@pytest.fixture(scope="module")
def arm():
    return rd.load("rx90")


def loaded(arm, frame=5):
    params = np.array(arm.params)
    params[frame] += PAYLOAD
    return arm.replace(params=params)


@pytest.fixture(scope="module")
def motion():
    return np.random.default_rng(4).uniform(-2, 2, size=(3, 300, 6))


def test_payload_from_motion_noise_free_is_exact(arm, motion):
    q, qd, qdd = motion
    tau = rd.inverse_dynamics(loaded(arm), q, qd, qdd)
    res = rd.identification.identify_payload(arm, q, qd, qdd, tau, frame="j6")
    assert res.frame == 6 and not res.static and res.solver["status"] == "optimal"
    np.testing.assert_allclose(res.params, PAYLOAD, rtol=0, atol=1e-8 * np.abs(PAYLOAD).max())
    assert res.mass == pytest.approx(2.0, rel=1e-8)
    np.testing.assert_allclose(res.com, [0.01, -0.02, 0.05], atol=1e-8)
    np.testing.assert_allclose(rd.inverse_dynamics(res.robot, q, qd, qdd), tau, rtol=0, atol=1e-8 * np.abs(tau).max())


def test_payload_from_motion_with_noise_within_three_sigma(arm, motion):
    q, qd, qdd = motion
    rng = np.random.default_rng(5)
    tau = rd.inverse_dynamics(loaded(arm), q, qd, qdd) + rng.normal(0, 0.05, q.shape)
    res = rd.identification.identify_payload(arm, q, qd, qdd, tau)  # default: the last frame
    z = np.abs(res.params - PAYLOAD) / res.std
    assert np.all(z < 3), z
    assert np.linalg.eigvalsh(rd.identification.pseudo_inertia(res.params)).min() >= -1e-12
    assert np.all(res.residual_rms < 0.06)


def test_payload_from_static_poses_gives_mass_and_centre_of_mass(arm):
    qs = rd.identification.calibration_poses(arm, 20, seed=1)
    rng = np.random.default_rng(6)
    tau = rd.gravity_torques(loaded(arm), qs) + rng.normal(0, 0.02, qs.shape)
    res = rd.identification.identify_payload(arm, qs, tau=tau, frame=6)
    assert res.static and np.all(res.std[:6] == 0) and np.allclose(res.inertia, 0, atol=1e-15)
    z = np.abs(res.params[6:] - PAYLOAD[6:]) / res.std[6:]
    assert np.all(z < 3), z
    exact = rd.identification.identify_payload(arm, qs, tau=rd.gravity_torques(loaded(arm), qs), frame=6)
    np.testing.assert_allclose(exact.params[6:], PAYLOAD[6:], rtol=1e-9, atol=1e-12)


def test_payload_errors(arm, motion):
    q, qd, qdd = motion
    with pytest.raises(rd.InputError, match="give both qd and qdd"):
        rd.identification.identify_payload(arm, q, qd, None, q)
    with pytest.raises(rd.identification.IdentificationError, match="the data do not (excite|identify)"):
        still = np.zeros((30, 6))
        rd.identification.identify_payload(arm, still, tau=rd.gravity_torques(loaded(arm), still))
    with pytest.raises(rd.InputError, match="frame"):
        rd.identification.identify_payload(arm, q, qd, qdd, q, frame="nope")


def test_essential_parameters_keep_the_fit_and_drop_what_the_data_do_not_see(arm, motion):
    q, qd, qdd = motion
    rng = np.random.default_rng(8)
    tau = rd.inverse_dynamics(arm, q, qd, qdd) + rng.normal(0, 0.05, q.shape)
    res = rd.identify(arm, q, qd, qdd, tau, method="ols")
    ess = rd.identification.essential_parameters(res, q, qd, qdd, tau, tolerance=0.02)
    assert len(ess.names) + len(ess.removed) == len(res.names) and len(ess.removed) > 0
    assert ess.relative_error <= 1.02 * ess.full_relative_error + 1e-12
    truth = dict(zip(res.base.names, res.base.values))
    full = dict(zip(res.names, zip(res.values, res.std)))
    for name in res.names:  # a parameter clearly seen by the data (beyond 5 σ) is kept
        if abs(truth[name]) > 5 * full[name][1]:
            assert name in ess.names, name
    # the first removals had the largest %σ of all
    assert ess.history[0][1] == pytest.approx(max(res.relative_std), rel=1e-6)
    # the remaining estimates: within 3 σ of the truth
    z = np.abs(ess.values - np.array([truth[n] for n in ess.names])) / ess.std
    assert np.all(z < 3), dict(zip(ess.names, z))
    strict = rd.identification.essential_parameters(res, q, qd, qdd, tau, tolerance=0.02, max_relative_std=50.0)
    assert np.all(strict.relative_std < 50.0) or len(strict.removed) <= len(ess.removed)
    with pytest.raises(rd.InputError, match="tolerance"):
        rd.identification.essential_parameters(res, q, qd, qdd, tau, tolerance=0)


def test_drive_gains_with_a_known_payload_mass(arm, motion):
    q, qd, qdd = motion
    gains = np.array([0.9, 1.1, 0.8, 0.5, 0.4, 0.3])
    on = np.arange(len(q)) % 2 == 0
    # off the axis of joint 6: the payload must load every joint (on the axis, k6 is barely observable)
    point = rd.standard_from_com(3.0, [0.05, 0.03, 0.1], np.zeros(6))
    params = np.array(arm.params)
    params[5] += point
    heavy = arm.replace(params=params)
    tau = np.where(on[:, None], rd.inverse_dynamics(heavy, q, qd, qdd), rd.inverse_dynamics(arm, q, qd, qdd))
    exact = rd.identification.identify_drive_gains(arm, q, qd, qdd, tau / gains, on, 3.0, payload_com=[0.05, 0.03, 0.1])
    np.testing.assert_allclose(exact.gains, gains, rtol=1e-8)
    rng = np.random.default_rng(9)
    u = tau / gains + rng.normal(0, 0.005, q.shape)
    res = rd.identification.identify_drive_gains(arm, q, qd, qdd, u, on, 3.0, payload_com=[0.05, 0.03, 0.1])
    z = np.abs(res.gains - gains) / res.std
    assert np.all(z < 3), z
    sensor = rd.identification.identify_drive_gains(arm, q, qd, qdd, u, None, 0.0, torque=tau)
    assert np.all(np.abs(sensor.gains - gains) < 3 * sensor.std)
    with pytest.raises(rd.InputError, match="payload_mass"):
        rd.identification.identify_drive_gains(arm, q, qd, qdd, u, on, -1.0)
    with pytest.raises(rd.InputError, match="samples with and without the payload"):
        rd.identification.identify_drive_gains(arm, q, qd, qdd, u, np.ones(len(q), bool), 3.0)


def test_drive_gains_with_the_payload_inertia_unknown(arm, motion):
    """Only the payload's mass known (the default ``payload_com=None``): its inertia and first moments are
    estimated with the gains, exactly from noise-free data, within 3 σ with noise; taken as a point mass at O_6
    instead, the same data give gains off by percents."""
    q, qd, qdd = motion
    gains = np.array([0.9, 1.1, 0.8, 0.5, 0.4, 0.3])
    on = np.arange(len(q)) % 3 == 0
    tau = np.where(on[:, None], rd.inverse_dynamics(loaded(arm), q, qd, qdd), rd.inverse_dynamics(arm, q, qd, qdd))
    exact = rd.identification.identify_drive_gains(arm, q, qd, qdd, tau / gains, on, 2.0)
    np.testing.assert_allclose(exact.gains, gains, rtol=1e-8)
    np.testing.assert_allclose(exact.payload, PAYLOAD, rtol=0, atol=1e-8 * np.abs(PAYLOAD).max())
    assert exact.payload_std[9] == 0 and exact.payload[9] == 2.0
    np.testing.assert_allclose(exact.residual_rms, 0, atol=1e-9 * np.abs(tau).max())
    u = tau / gains + np.random.default_rng(11).normal(0, 0.005, q.shape)
    res = rd.identification.identify_drive_gains(arm, q, qd, qdd, u, on, 2.0)
    assert np.all(np.abs(res.gains - gains) < 3 * res.std)
    assert np.all(np.abs(res.payload[:9] - PAYLOAD[:9]) < 3 * res.payload_std[:9])
    # the same samples as two runs, (q, qd, qdd, u) tuples with one bool a run: the same numbers
    runs = [(q[~on], qd[~on], qdd[~on], u[~on]), (q[on], qd[on], qdd[on], u[on])]
    split = rd.identification.identify_drive_gains(arm, runs, loaded=[False, True], payload_mass=2.0)
    order = np.r_[np.flatnonzero(~on), np.flatnonzero(on)]
    alike = rd.identification.identify_drive_gains(arm, q[order], qd[order], qdd[order], u[order], on[order], 2.0)
    np.testing.assert_allclose(split.gains, alike.gains, rtol=1e-12)
    with pytest.raises(rd.InputError, match="one bool a run"):
        rd.identification.identify_drive_gains(arm, runs, loaded=[True], payload_mass=2.0)
    point = rd.identification.identify_drive_gains(arm, q, qd, qdd, tau / gains, on, 2.0, payload_com=[0, 0, 0])
    assert np.abs(point.gains / gains - 1).max() > 0.01
    with pytest.raises(rd.identification.IdentificationError, match="payload_com"):
        static = np.broadcast_to(q[:1], q.shape)  # loaded samples that never move: the payload is not seen
        rd.identification.identify_drive_gains(arm, np.where(on[:, None], static, q), np.where(on[:, None], 0, qd),
                                               np.where(on[:, None], 0, qdd), tau / gains, on, 2.0)


def test_drive_gains_from_prepared_runs():
    """Runs prepared on their own (``IdentificationData``, the commands as their τ) bring their filtered Coulomb
    columns, which match the filtered commands at every reversal of q̇: the gains within 5e-3 of the truth on a
    noise-free arm with Coulomb friction (1e-4 to 1.3e-3 measured); the same samples as arrays, with sign(q̇) of
    the filtered q̇ against commands filtered across each step, were 12 to 85 % off."""
    arm = rd.load("rx90")
    gains = np.array([0.9, 1.1, 0.8, 0.5, 0.4, 0.3])
    t = np.arange(0, 20, 0.002)
    runs = []
    for seed, robot in ((1, arm), (2, loaded(arm))):
        rng = np.random.default_rng(seed)  # three sines a joint: amplitudes (rad), rad/s, phases
        a, w, phase = rng.uniform(0.3, 1.0, (3, 6)), rng.uniform(0.5, 2.0, (3, 6)), rng.uniform(0, 6, (3, 6))
        s = [np.sin(w[k] * t[:, None] + phase[k]) for k in range(3)]
        c = [np.cos(w[k] * t[:, None] + phase[k]) for k in range(3)]
        q, qd, qdd = (sum(a[k] * w[k] ** p * f[k] for k in range(3)) for p, f in ((0, s), (1, c), (2, [-x for x in s])))
        u = rd.inverse_dynamics(robot, q, qd, qdd) / gains
        runs.append(rd.identification.prepare_identification_data(t, q, u))
    res = rd.identification.identify_drive_gains(arm, runs, loaded=[False, True], payload_mass=2.0)
    np.testing.assert_allclose(res.gains, gains, rtol=5e-3)
