"""The friction biases of docs/identification.md's worked example: a low-pass filter biases Fc low and Fv high;
without the filter (raw torques at the exact states) or without the samples near a velocity reversal (any
|q̇_j| < 0.05 rad/s) the bias is gone.  The mechanism: parallel filtering commutes with the regressor's linear
columns but not with sign(q̇) — the filtered torque has a ramp of width ~1/cutoff where the model has a step, and
least squares fits the ramp partly with the viscous column.

The bias is a deterministic effect of the data preparation: it is measured on exact data (no noise), where the
unfiltered estimate is exact; the noisy campaign is checked against the spread its noise allows (χ² of the
estimates' covariance), not against the digits of one seeded run."""

import numpy as np
import pytest
import scipy.stats

import robodyn as rd
from tests.support.checks import friction_campaign

FRICTION = ("Fc1", "Fc2", "Fc3", "Fv1", "Fv2", "Fv3")


@pytest.fixture(scope="module")
def campaign():
    return friction_campaign()


@pytest.fixture(scope="module")
def exact():
    return friction_campaign(noise=False)


def _friction(res, truth):
    """Indices, relative error (%) of the friction parameters."""
    idx = [res.names.index(n) for n in FRICTION]
    return idx, 100 * (res.values[idx] - truth[idx]) / truth[idx]


def _filtered(t, q, tau):
    return rd.identification.prepare_identification_data(t, q, tau, cutoff=25.0, decimate=5, trim=False)


def _within_noise(res, truth, idx):
    """The Mahalanobis distance of the friction estimates from the truth is within the χ²_6 spread (99.9 %)."""
    e = res.values[idx] - truth[idx]
    return e @ np.linalg.solve(res.covariance[np.ix_(idx, idx)], e) < scipy.stats.chi2.ppf(0.999, len(idx))


def test_default_preparation_biases_coulomb_low_and_viscous_high(exact, campaign):
    nominal, traj, t, q, tau, truth = exact
    data = _filtered(t, q, tau)
    res = rd.identify(nominal, data.q, data.qd, data.qdd, data.tau, method="wls")
    idx, rel = _friction(res, truth)
    assert np.all(rel[:3] < -0.5) and np.all(rel[3:] > 1.0), rel
    # with noise the bias stays: far beyond the spread the noise allows
    nominal, traj, t, q, tau, truth = campaign
    data = _filtered(t, q, tau)
    assert not _within_noise(rd.identify(nominal, data.q, data.qd, data.qdd, data.tau, method="wls"), truth, idx)


def test_without_the_filter_there_is_no_bias(exact, campaign):
    nominal, traj, t, q, tau, truth = exact
    s = traj.sample(t[::5])
    res = rd.identify(nominal, *s, tau[::5], method="wls")
    np.testing.assert_allclose(res.values, truth, rtol=0, atol=1e-9 * np.abs(truth).max())
    nominal, traj, t, q, tau, truth = campaign
    res = rd.identify(nominal, *traj.sample(t[::5]), tau[::5], method="wls")
    assert _within_noise(res, truth, _friction(res, truth)[0])


def test_dropping_samples_near_reversals_removes_the_bias(exact, campaign):
    nominal, traj, t, q, tau, truth = exact
    data = _filtered(t, q, tau)
    keep = np.all(np.abs(data.qd) > 0.05, axis=1)
    assert 0.5 < keep.mean() < 1.0
    _, biased = _friction(rd.identify(nominal, data.q, data.qd, data.qdd, data.tau, method="wls"), truth)
    _, rel = _friction(rd.identify(nominal, data.q[keep], data.qd[keep], data.qdd[keep], data.tau[keep],
                                   method="wls"), truth)
    assert np.abs(rel).max() < 0.25 * np.abs(biased).max(), (rel, biased)
    nominal, traj, t, q, tau, truth = campaign
    data = _filtered(t, q, tau)
    keep = np.all(np.abs(data.qd) > 0.05, axis=1)
    res = rd.identify(nominal, data.q[keep], data.qd[keep], data.qdd[keep], data.tau[keep], method="wls")
    assert _within_noise(res, truth, _friction(res, truth)[0])


def test_prepared_data_identify_without_the_coulomb_bias(exact, campaign):
    """At the default (automatic) cut-off, rd.identify(robot, data) puts sign(q̇) filtered as τ in the Coulomb columns
    (IdentificationData.coulomb): on exact data it leaves a small fraction of the bias that the sharp sign(q̇) of the
    arrays alone gives (Fc low, Fv high); with noise, what the noise adds stays well below the bias removed
    (docs/identification.md, "Preparing measured data")."""
    nominal, traj, t, q, tau, truth = exact
    data = rd.identification.prepare_identification_data(t, q, tau)
    idx, unbiased = _friction(rd.identify(nominal, data), truth)
    _, sharp = _friction(rd.identify(nominal, data.q, data.qd, data.qdd, data.tau), truth)
    assert np.all(sharp[:3] < 0.0) and np.all(sharp[3:] > 0.0), sharp
    assert np.abs(unbiased).max() < 0.25 * np.abs(sharp).max(), (unbiased, sharp)
    nominal, traj, t, q, tau, truth = campaign
    data = rd.identification.prepare_identification_data(t, q, tau)
    _, noisy = _friction(rd.identify(nominal, data), truth)
    _, noisy_sharp = _friction(rd.identify(nominal, data.q, data.qd, data.qdd, data.tau), truth)
    assert np.abs(noisy).max() < 0.25 * np.abs(noisy_sharp).max(), (noisy, noisy_sharp)
