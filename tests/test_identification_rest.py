"""The Coulomb columns of prepared data at rest: 0 where |q̇| is within the noise (COULOMB_DEADBAND × the
velocity noise), so that a joint holding still is not predicted ±Fc at random, and ``validate`` scores held-out
data with the Coulomb columns the fit used (filtered as τ was)."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from robodyn.identification.data import COULOMB_DEADBAND, velocity_noise


def noisy_rest(rate, seconds, sigma, n, seed):
    rng = np.random.default_rng(seed)
    t = np.arange(int(rate * seconds)) / rate
    return t, 0.3 + rng.normal(0.0, sigma, (t.size, n))


@pytest.mark.parametrize("cutoff", [10.0, 40.0])
def test_velocity_noise_is_the_std_of_the_prepared_velocity(cutoff):
    # white noise on q at rest: q̇ of the prepared data is noise alone, so its standard deviation is what
    # velocity_noise predicts; ≥ 2 T fc = 400 independent values give the sample std to ±5 % (1σ), hence ±20 %
    sigma = np.array([1e-5, 1e-4, 1e-3])
    t, q = noisy_rest(1000.0, 20.0, sigma, 3, seed=1)
    data = rd.identification.prepare_identification_data(t, q, np.zeros_like(q), cutoff=cutoff)
    ratio = data.velocity_noise / np.std(data.qd, axis=0)
    np.testing.assert_array_less(np.abs(ratio - 1.0), 0.2)
    np.testing.assert_allclose(data.velocity_noise, velocity_noise(t, q, cutoff))


def test_rest_gives_no_coulomb_and_validates_at_the_gravity_torque():
    robot = rd.load("puma560").replace(Fc=[3.0, 4.0, 2.0, 0.5, 0.5, 0.5], Fv=np.zeros(6), Foff=np.zeros(6))
    # identify on a moving, noise-free excitation (friction included), then validate on the robot holding a pose
    t = np.arange(5000) / 500.0
    w = 2 * np.pi * np.array([[0.1, 0.13, 0.17, 0.19, 0.23, 0.29], [0.31, 0.37, 0.41, 0.43, 0.47, 0.53]])
    q = np.sin(t[:, None] * w[0]) + 0.5 * np.sin(t[:, None] * w[1])
    qd = w[0] * np.cos(t[:, None] * w[0]) + 0.5 * w[1] * np.cos(t[:, None] * w[1])
    qdd = -w[0] ** 2 * np.sin(t[:, None] * w[0]) - 0.5 * w[1] ** 2 * np.sin(t[:, None] * w[1])
    res = rd.identify(robot, q, qd, qdd, rd.inverse_dynamics(robot, q, qd, qdd))
    t, q = noisy_rest(500.0, 10.0, 1e-5, robot.n, seed=2)  # encoders' noise: 1e-5 rad
    # at rest the drives hold gravity only (the friction at rest is 0 here: any value within ±Fc is possible),
    # measured with 1e-3 N m of noise
    tau = rd.gravity_torques(robot, q) + np.random.default_rng(3).normal(0.0, 1e-3, q.shape)
    # prepared with the filter of a 0.5 Hz excitation (its automatic cut-off, 5 Hz)
    rest = rd.identification.prepare_identification_data(t, q, tau, cutoff=5.0)
    assert np.sqrt(np.mean(rest.coulomb ** 2)) < 0.01  # sign(q̇) of noise alone: 1
    # sign(q̇) alone would predict ±Fc at random: an RMS error of Fc; the dead zone leaves 5 % of it
    v = res.validate(rest)
    np.testing.assert_array_less(v.rms, 0.05 * robot.Fc)
    shown = rest.coulomb.copy()
    sharp = res.predict(rest.q, rest.qd, rest.qdd)
    assert np.all(np.sqrt(np.mean((sharp - rest.tau) ** 2, axis=0)) > 0.5 * robot.Fc)
    np.testing.assert_array_equal(shown, rest.coulomb)
