"""Identification held out by run on a measured KUKA LWR4+ (seven joints, joint-torque sensors).

The runs are FloBaRoID's hardware measurements (LGPL-3.0; ``tests/data/measured/kuka_lwr4/README.md``): three
25 s excitation runs at a nominal 200 Hz with jittered time stamps, stored by the recording program already
filtered, with q̇ and q̈ — the case of a robot's software that records its own derivatives.  Runs 1 and 2 repeat
one trajectory; run 3 is another (faster) one.  They go into ``rd.identify`` as ``(q, qd, qdd, tau)`` tuples (no
second filter, so the time stamps are not used) at its defaults, trained on two runs and validated on the third.

References, none of them digits of a fit:

- the a priori model, FloBaRoID's ``kuka_lwr4.urdf`` (link inertias after the CentroEPiaggio kuka-lwr package,
  viscous and Coulomb friction in its ``<dynamics>``): identification must predict the held-out run better than the
  model it starts from, on every joint (FloBaRoID documents that model's residual on run 1: 36, 6, 16, 9, 77,
  173, 105 % per joint);
- the measured noise floor: runs 1 and 2 repeat the same commanded trajectory, so RMS(τ₁ − τ₂)/√2 per joint is
  the part of the torque no model of the state can predict; a held-out error below it would mean the validation
  saw its own samples.

τ₇ carries a torque that depends on q₇ alone (about 0.4 N m against an RMS τ₇ of 0.27 N m: a cable, a spring or
a sensor offset); the default ``position_terms="auto"`` fits it as k sin q₇ + c cos q₇ on joint 7 only (without
it, the rotor inertia's column soaks it up, q̈₇ ≈ −ω² q₇, and joint 7's held-out error is 68 % (OLS) to 84 %
(physical)).
"""

from __future__ import annotations

import warnings
import numpy as np
import pytest

import robodyn as rd
from tests.support.checks import assert_physically_consistent, measured_folder

DATA = measured_folder("kuka_lwr4")
RUNS = DATA / "kuka_lwr4_runs.npz"

pytestmark = pytest.mark.skipif(
    not RUNS.exists(), reason="kuka_lwr4_runs.npz absent: tests/data/measured/kuka_lwr4/make_kuka_lwr4.py builds it")


@pytest.fixture(scope="module")
def lwr():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the URDF's <dynamics> become Fv, Fc (wanted here)
        robot = rd.load(DATA / "kuka_lwr4.urdf")
    with np.load(RUNS) as f:
        runs = [{key: f[f"{key}{k}"] for key in ("t", "q", "qd", "qdd", "tau")} for k in (1, 2, 3)]
    return robot, runs


def states(run):
    return run["q"], run["qd"], run["qdd"], run["tau"]


def relative_rms(predicted, tau):
    return 100 * np.sqrt(np.mean((predicted - tau) ** 2, axis=0) / np.mean(tau ** 2, axis=0))


def test_runs_as_stored(lwr):
    robot, runs = lwr
    assert robot.n == 7 and robot.sigma.tolist().count(0) == 7
    for run in runs:
        assert run["t"].shape == (5027,) and all(run[k].shape == (5027, 7) for k in ("q", "qd", "qdd", "tau"))
        dt = np.diff(run["t"])
        assert dt.min() > 0
        np.testing.assert_allclose(np.median(dt), 0.005, rtol=1e-3)  # 200 Hz nominal
        assert dt.max() - dt.min() > 0.1 * np.median(dt)  # jittered: not a uniform grid
    # runs 1 and 2 repeat one trajectory (to the tracking error), run 3 is another
    assert np.abs(runs[0]["q"] - runs[1]["q"]).max() < 0.01
    assert np.abs(runs[0]["q"] - runs[2]["q"]).max() > 0.5


@pytest.fixture(scope="module")
def noise_floor(lwr):
    """RMS(τ₁ − τ₂)/√2 per joint (N m): the torque that differs between two repetitions of one trajectory."""
    _, runs = lwr
    return np.sqrt(np.mean((runs[0]["tau"] - runs[1]["tau"]) ** 2, axis=0) / 2)


#: OLS trained on runs 1 and 2 — one trajectory, repeated — extrapolates to run 3 worse than the a priori model.
OLS_RUN3 = pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "OLS at its defaults trained on runs 1+2 (one trajectory) predicts run 3 worse than the a priori URDF model on "
    "joints 1 to 4 (held-out relative RMS ~95, 12, 72, 12 % against the URDF's 67, 7.5, 59, 11 %; mean 71 % against "
    "'physical' 33 %)"))


@pytest.mark.parametrize("method", ["ols", "physical"])
@pytest.mark.parametrize("held_out", [1, 2, 3])
def test_held_out_run(lwr, noise_floor, held_out, method, request):
    if (held_out, method) == (3, "ols"):
        request.applymarker(OLS_RUN3)
    robot, runs = lwr
    train = [states(run) for k, run in enumerate(runs, start=1) if k != held_out]
    q, qd, qdd, tau = states(runs[held_out - 1])
    res = rd.identify(robot, train, method=method)
    assert res.converged, res.message
    if method == "physical":
        assert res.solver["certified"], res.solver["accuracy"]
        assert_physically_consistent(res.robot)
    v = res.validate(q, qd, qdd, tau)
    assert np.all(v.samples == q.shape[0])
    prior = relative_rms(rd.inverse_dynamics(robot, q, qd, qdd), tau)
    np.testing.assert_array_less(v.relative_rms_percent, prior,
                                 err_msg=f"{method}, run {held_out} held out: against the a priori model")
    np.testing.assert_array_less(noise_floor, v.rms, err_msg="below the repeatability of the torques")


@pytest.mark.parametrize("robust", ["huber", "bisquare"])
@pytest.mark.parametrize("held_out", [1, 2, 3])
def test_irls_converges_at_its_defaults(lwr, held_out, robust):
    """Bisquare's passes, started from OLS with the scales re-estimated, crept and jumped between minima,
    unconverged after 100 passes with run 1 held out; from Huber's fit with its scales fixed they converge (69 plain
    passes, 41 with SQUAREM's extrapolations)."""
    robot, runs = lwr
    train = [states(run) for k, run in enumerate(runs, start=1) if k != held_out]
    res = rd.identify(robot, train, method="irls", robust=robust)
    assert res.converged, res.message
    assert np.all(res.noise > 0) and np.all(np.isfinite(res.std)) and np.all(res.std > 0)


@pytest.mark.parametrize("method", ["ols", "physical"])
@pytest.mark.parametrize("held_out", [1, 2])
def test_joint_7_position_term(lwr, held_out, method):
    """"auto" selects joint 7 alone; with its term, joint 7's held-out error falls from 68–84 % to below 35 %."""
    robot, runs = lwr
    train = [states(run) for k, run in enumerate(runs, start=1) if k != held_out]
    res = rd.identify(robot, train, method=method)
    assert res.position_joints == (6,)
    assert res.position_shares[6] > 0.5 and np.all(res.position_shares[:6] < 0.5)
    v = res.validate(*states(runs[held_out - 1]))
    assert v.relative_rms_percent[6] < 35.0
    plain = rd.identify(robot, train, method=method, position_terms=None)
    assert plain.validate(*states(runs[held_out - 1])).relative_rms_percent[6] > 60.0
