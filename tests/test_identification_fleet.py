"""The physically consistent fleet fit (robodyn.distributed.identify(..., per_robot=..., method="physical")) is one
robot's program of ``rd.identify(..., method="physical")`` with the robots' factors stacked: the same scaling,
regularization and certificate.  A fleet of one robot is therefore that robot's fit; a fleet of several reports a
checked duality gap and keeps every robot's own friction consistent."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from robodyn.identification.consistent import LOOSE_GAP, REGULARIZATION_GRID

da = pytest.importorskip("dask.array")
from robodyn import distributed as dd  # noqa: E402


@pytest.fixture(scope="module")
def fleet():
    """Three rx90s that differ in friction, 150, 190, 230 random states each, τ with noise 0.05 N m."""
    robot = rd.load("rx90")
    rng = np.random.default_rng(7)
    friction = rng.uniform([0.5, 0.1, -1.0], [3.0, 2.0, 1.0], (3, 6, 3))
    runs = []
    for (Fc, Fv, Foff), N in zip(np.moveaxis(friction, -1, 1), (150, 190, 230)):
        q, qd, qdd = rng.uniform(-1, 1, (3, N, 6)) * np.array([2.0, 2.0, 5.0])[:, None, None]
        tau = rd.inverse_dynamics(robot.with_joint_parameters(Fc=Fc, Fv=Fv, Foff=Foff), q, qd, qdd)
        runs.append((q, qd, qdd, tau + 0.05 * rng.standard_normal((N, 6))))
    return robot, rd.base_parameters(robot, friction=True), runs


def _samples(runs, names):
    rows = [np.concatenate([r[k] for r in runs]) for k in range(4)]
    labels = np.concatenate([np.full(len(r[0]), i) for i, r in enumerate(runs)])
    return dd.Samples(*[da.from_array(x, chunks=(64, 6)) for x in rows], robot=da.from_array(labels, chunks=64),
                      robots=names)


def test_a_fleet_of_one_robot_is_that_robots_physical_fit(fleet):
    """Same program, same λ (1e-3, where the pull towards the model matters): the same parameters to the solver's
    tolerance (Clarabel at 1e-10; the two factors agree to rounding).  Measured: 4e-14 relative."""
    robot, base, runs = fleet
    res = dd.identify(robot, _samples(runs[:1], ("solo",)), base=base, per_robot=("friction", "offsets"),
                      method="physical", regularization=1e-3)
    ref = rd.identify(robot, *runs[0], base=base, method="physical", regularization=1e-3)
    got = dd.fleet_values(res, "solo")
    assert np.abs(got - ref.values).max() <= 1e-7 * np.abs(ref.values).max()
    assert res.solver["certified"] and res.converged and res.solver["regularization"] == 1e-3


def test_a_fleet_reports_a_checked_certificate(fleet):
    robot, base, runs = fleet
    names = ("a", "b", "c")
    res = dd.identify(robot, _samples(runs, names), base=base, per_robot=("friction",), method="physical")
    s = res.solver
    assert s["certified"] and res.converged and res.message == ""
    # the returned point is feasible (projected) and the dual bound is below its objective
    assert s["lower_bound"] <= s["objective"] and s["relative_gap"] <= LOOSE_GAP
    fv = [base.names.index(f"Fv{j}") for j in range(1, 7)]
    fc = [base.names.index(f"Fc{j}") for j in range(1, 7)]
    for name in names:
        v = dd.fleet_values(res, name)
        assert np.all(v[fv] >= 0.0) and np.all(v[fc] >= 0.0)


def test_a_fleet_chooses_its_regularization_from_the_data_as_one_robot_does(fleet):
    """regularization=None: λ by cross-validation on contiguous blocks of every robot's rows, one of the grid's
    values, reported with its rule; a fleet of one robot has the same blocks, the same held-out errors (its
    columns in another order) and so the same λ as the single-robot path."""
    robot, base, runs = fleet
    res = dd.identify(robot, _samples(runs, ("a", "b", "c")), base=base, per_robot=("friction",),
                      method="physical", position_terms=None)
    s = res.solver
    assert s["regularization"] in REGULARIZATION_GRID and "cross-validation" in s["regularization_rule"]
    assert s["certified"] and res.converged
    solo = dd.identify(robot, _samples(runs[:1], ("solo",)), base=base, per_robot=("friction", "offsets"),
                       method="physical", position_terms=None)
    ref = rd.identify(robot, *runs[0], base=base, method="physical", position_terms=None)
    assert abs(solo.solver["regularization"] - ref.solver["regularization"]) <= 1e-10 * ref.solver["regularization"]
    assert solo.solver["regularization_rule"] == ref.solver["regularization_rule"]
    got = dd.fleet_values(solo, "solo")  # and the same fit at it, to the solver's tolerance (as above)
    assert np.abs(got - ref.values).max() <= 1e-7 * np.abs(ref.values).max()
