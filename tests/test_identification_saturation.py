"""Clipped torques (a saturated drive, a sensor's range) are left out of identification: a torque that holds
exactly its extreme value over 5 samples or more is not the rigid-body model's, and least squares would fit its
plateau.  On noise-free data the rows left are exact, so the estimate is exact again; a noisy measured torque
never repeats its extreme (the measured Stäubli TX40 run has no clipped sample)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn.identification.data import SATURATED_RUN, saturated


@pytest.fixture(scope="module")
def campaign():
    """A continuous motion (a clipped torque is a plateau in time) of sums of sines, 3000 samples at 100 Hz."""
    robot = rd.load("rx90")
    t = np.arange(3000) / 100.0
    w = 0.4 + 0.13 * np.arange(robot.n)
    phase = t[:, None] * w
    q = 1.2 * np.sin(phase + np.arange(robot.n)) + 0.6 * np.sin(2.7 * phase)
    qd = w * (1.2 * np.cos(phase + np.arange(robot.n)) + 1.62 * np.cos(2.7 * phase))
    qdd = -w ** 2 * (1.2 * np.sin(phase + np.arange(robot.n)) + 4.374 * np.sin(2.7 * phase))
    return robot, q, qd, qdd, rd.inverse_dynamics(robot, q, qd, qdd)


def test_a_plateau_at_the_extreme_is_clipped_and_a_peak_is_not():
    x = np.sin(np.linspace(0, 20, 2000))[:, None] * np.array([1.0, 1.0])
    x[:, 1] = np.minimum(x[:, 1], 0.8)
    mask = saturated(x)
    assert not mask[:, 0].any()
    np.testing.assert_array_equal(mask[:, 1], x[:, 1] == 0.8)
    short = x[:, :1].copy()
    short[100:100 + SATURATED_RUN - 1, 0] = 2.0  # a repeated maximum, but shorter than a plateau
    assert not saturated(short).any()


def test_the_measured_tx40_torques_have_no_clipped_sample():
    log = np.loadtxt(Path(__file__).parent / "data" / "measured" / "staubli_tx40_motor.csv.gz", delimiter=",",
                     skiprows=1)
    assert not saturated(log[:, 7:13]).any()


@pytest.mark.parametrize("method", ["ols", "wls", "physical"])
def test_clipped_rows_are_left_out_and_the_rest_identifies_exactly(campaign, method):
    robot, q, qd, qdd, tau = campaign
    lim = 0.8 * np.abs(tau).max(axis=0)
    clipped = np.clip(tau, -lim, lim)
    res = rd.identify(robot, q, qd, qdd, clipped, method=method, regularization=0.0 if method == "physical" else None)
    np.testing.assert_array_equal(res.equations, len(q) - saturated(clipped).sum(axis=0))
    truth = rd.base_parameters(robot, friction=True).values
    assert np.abs(res.values - truth).max() <= 1e-7 * np.abs(truth).max()
    # validation leaves the clipped rows of the held-out data out too
    v = res.validate(q, qd, qdd, clipped)
    np.testing.assert_array_equal(v.samples, res.equations)
    assert v.relative_rms_percent.max() < 1e-5


def test_prepared_data_mark_the_samples_a_clipped_torque_reaches():
    t = np.arange(0, 20, 1e-3)
    q = np.column_stack([0.8 * np.sin(0.7 * t), 0.5 * np.cos(1.1 * t)])
    tau = np.column_stack([np.sin(0.7 * t), np.cos(1.1 * t)])
    tau[:, 0] = np.minimum(tau[:, 0], 0.9)
    data = rd.identification.prepare_identification_data(t, q, tau)
    assert data.saturated is not None and not data.saturated[:, 1].any()
    marked = data.t[data.saturated[:, 0]]
    plateau = t[tau[:, 0] == 0.9]
    reach = 4 / (np.pi * data.cutoff)
    # every marked sample lies within the filter's reach of a clipped one, and every clipped instant is marked
    assert np.all(np.min(np.abs(marked[:, None] - plateau[None]), axis=1) <= reach + 1e-12)
    inside = (data.t >= plateau.min()) & (data.t <= plateau.max()) & (np.abs(tau[:, 0][np.searchsorted(t, data.t)]
                                                                          - 0.9) == 0)
    assert np.all(data.saturated[inside, 0])
    assert "clipped torques: joint 1" in data.report()["summary"]
    assert data.select(data.t < 5).saturated.shape == (int(np.sum(data.t < 5)), 2)


def test_one_row_selection_serves_the_whole_run_and_every_chunk(campaign):
    """rows_used is the selection of the in-memory source (the whole run) and of each cluster chunk (the clipped
    torques found over the whole run, clipping): the chunks' rows, stacked, are the run's rows; only the whole run
    can tell that a joint is left without rows, and names it."""
    from robodyn.identification.reduction import clipped_block, clipping, min_velocities, rows_used

    da = pytest.importorskip("dask.array")
    robot, q, qd, qdd, tau = campaign
    tau = tau.copy()
    tau[:, 1] = np.minimum(tau[:, 1], 0.7 * tau[:, 1].max())
    v = min_velocities(0.05, robot.n)
    whole = rows_used(qd, saturated(tau), v, whole=True)
    np.testing.assert_array_equal(whole[:, 0], np.abs(qd[:, 0]) >= 0.05)
    np.testing.assert_array_equal(whole[:, 1], (np.abs(qd[:, 1]) >= 0.05) & (tau[:, 1] < tau[:, 1].max()))
    clip = clipping(da.from_array(tau, chunks=(700, robot.n)))
    chunks = [rows_used(qd[s:s + 700], clipped_block(tau[s:s + 700], clip), v) for s in range(0, len(q), 700)]
    np.testing.assert_array_equal(np.concatenate(chunks), whole)
    assert rows_used(qd, np.zeros(qd.shape, bool), None, whole=True) is None
    dead = np.zeros(qd.shape, bool)
    dead[:, 2] = True
    assert not rows_used(qd, dead)[:, 2].any()  # a chunk: no verdict
    with pytest.raises(rd.identification.IdentificationError, match="every sample of joint 3 is clipped"):
        rows_used(qd, dead, whole=True)
    with pytest.raises(rd.identification.IdentificationError, match="no sample of joint 4 moves at 100"):
        rows_used(qd, None, min_velocities([0, 0, 0, 100, 0, 0], robot.n), whole=True)
