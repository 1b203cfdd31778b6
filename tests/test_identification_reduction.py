"""The reduction of robodyn.identification.reduction with the time blocks ("folds") of the cross-validation of
"physical": a Dask source (one robot, or a fleet whose rows are shuffled over the chunks) gives each robot the
merged factor and the Gram matrices of the contiguous time blocks of its own rows that the in-memory source gives
on those rows, to rounding, in one Dask computation (the robots' row counts are part of its graph)."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from robodyn.identification.reduction import ArraySource, DaskSource, gram, sample_arrays

dask = pytest.importorskip("dask")
import dask.array as da  # noqa: E402
from dask.callbacks import Callback  # noqa: E402

FOLDS = 5
JOINTS = (1, 4)  # position columns of two joints in the reduction too


class Computations(Callback):
    """Counts the Dask computations started (local schedulers)."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def _start(self, dsk):
        self.count += 1


@pytest.fixture(scope="module")
def fleet():
    robot = rd.load("rx90")
    rng = np.random.default_rng(11)
    sizes = (130, 170, 95)
    labels = rng.permutation(np.repeat(np.arange(3), sizes))
    N = labels.size
    q, qd, qdd = rng.uniform(-2, 2, (N, 6)), rng.uniform(-2, 2, (N, 6)), rng.uniform(-5, 5, (N, 6))
    tau = rd.inverse_dynamics(robot, q, qd, qdd) + 0.05 * rng.standard_normal((N, 6))
    return rd.base_parameters(robot, friction=True), (q, qd, qdd, tau), labels


def _close(x, ref):
    assert np.abs(x - ref).max() <= 1e-12 * np.abs(ref).max()


def _same(part, rows, bp, reduction):
    """One robot's result of the Dask source against the in-memory source on its rows (blocks of 64 rows)."""
    acc, N, used, clipped, Gf = ArraySource(bp, *rows, block=64).reduce(JOINTS, reduction, folds=FOLDS)
    assert part[1] == N and np.array_equal(part[2], used) and np.array_equal(part[3], clipped)
    _close(gram(part[0], reduction), gram(acc, reduction))
    assert part[4].shape == Gf.shape == (FOLDS,) + acc.shape[1:]
    _close(part[4], Gf)
    _close(part[4].sum(axis=0), gram(acc, reduction))  # the blocks partition the robot's rows


@pytest.mark.parametrize("reduction", ["gram", "tsqr"])
def test_folds_of_a_fleet_equal_each_robots_in_memory_folds_in_one_computation(fleet, reduction):
    bp, rows, labels = fleet
    arrays = sample_arrays(rows, 6, 57)
    source = DaskSource(bp, arrays, labels=da.from_array(labels, chunks=57), robots=("a", "b", "c"))
    with dask.config.set(scheduler="sync"), Computations() as seen:
        parts = source.reduce(JOINTS, reduction, folds=FOLDS)
    assert seen.count == 1
    assert sorted(parts) == [0, 1, 2]
    for r in range(3):
        _same(parts[r], [x[labels == r] for x in rows], bp, reduction)


def test_folds_of_one_robot_equal_the_in_memory_folds_in_one_computation(fleet):
    bp, rows, _ = fleet
    source = DaskSource(bp, sample_arrays(rows, 6, 61))
    with dask.config.set(scheduler="sync"), Computations() as seen:
        part = source.reduce(JOINTS, "gram", folds=FOLDS)
    assert seen.count == 1
    _same(part, rows, bp, "gram")


def test_folds_of_labels_computed_from_the_samples(fleet):
    """Samples of unknown row counts whose robot indices come from the same tasks (as joint logs give them): the
    same folds."""
    bp, rows, labels = fleet
    order = np.argsort(labels, kind="stable")
    stacked = np.stack([x[order] for x in rows])
    ends = np.cumsum(np.bincount(labels))
    parts = [dask.delayed(lambda k: stacked[:, ends[k] - np.bincount(labels)[k]:ends[k]])(k) for k in range(3)]
    whole = da.concatenate([da.from_delayed(p, shape=(4, np.nan, 6), dtype=float) for p in parts], axis=1)
    robot = da.concatenate([da.from_delayed(dask.delayed(lambda x, k: np.full(x.shape[1], k))(p, k),
                                            shape=(np.nan,), dtype=np.int64) for k, p in enumerate(parts)])
    source = DaskSource(bp, sample_arrays([whole[k] for k in range(4)], 6, 64), labels=robot, robots=("a", "b", "c"))
    with dask.config.set(scheduler="sync"):
        out = source.reduce(JOINTS, "gram", folds=FOLDS)
    for r in range(3):
        _same(out[r], [x[labels == r] for x in rows], bp, "gram")
