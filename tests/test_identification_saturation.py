"""Clipped torques (a saturated drive, a sensor's range) are left out of identification: a torque that holds
exactly its extreme value over 5 samples or more (and over twice its longest plateau at other values, which a
quantised sensor has) is not the rigid-body model's, and least squares would fit its plateau.  On noise-free data
the rows left are exact, so the estimate is exact again; a noisy measured torque never repeats its extreme (the
measured Stäubli TX40 run has no clipped sample)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn.identification.data import SATURATED_FACTOR, SATURATED_RUN, saturated, value_runs


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


def test_a_quantised_torque_holding_its_extreme_is_not_clipped_unless_it_stays_there_longer():
    """A sensor read faster than its quantum changes holds every value for a while, its extremes too (the Rokae
    xMate3Pro's joint 7: 12 samples at its maximum, other values up to 52): not clipped.  Clipped, the plateau at
    the extreme outlasts SATURATED_FACTOR times every other one."""
    t = np.arange(0, 20, 1e-3)
    quantum = 0.02
    x = quantum * np.round((np.sin(0.9 * t) + 0.6 * np.sin(2.1 * t + 1.0)) / quantum)
    starts, lengths = value_runs(x)
    at_top = x[starts] == x.max()
    assert SATURATED_RUN <= lengths[at_top].max() < SATURATED_FACTOR * lengths[~at_top].max()  # 24 against 213
    assert not saturated(x[:, None]).any()
    clipped = np.minimum(x, quantum * np.round(0.8 * x.max() / quantum))
    np.testing.assert_array_equal(saturated(clipped[:, None])[:, 0], clipped == clipped.max())


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), chunk=st.integers(1, 400))
def test_the_chunked_clipping_finds_what_the_whole_run_does(seed, chunk):
    """clipping (one pass over a dask array's chunks, runs joined across them) flags the samples saturated flags,
    on quantised signals with plateaus of every length, at the extremes and elsewhere, and constant columns."""
    from robodyn.identification.reduction import clipped_block, clipping

    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(seed)
    steps = rng.integers(-2, 3, (600, 4)) * (rng.uniform(size=(600, 4)) < rng.uniform(0.05, 0.9, 4))
    tau = 0.1 * np.cumsum(steps, axis=0)
    tau[:, 3] = np.minimum(tau[:, 3], np.quantile(tau[:, 3], rng.uniform(0.5, 1.0)))
    if seed % 5 == 0:
        tau[:, 2] = 0.3
    clip = clipping(da.from_array(tau, chunks=(chunk, 4)))
    expect = saturated(tau)
    found = np.zeros_like(expect) if clip is None else clipped_block(tau, clip)
    np.testing.assert_array_equal(found, expect)
