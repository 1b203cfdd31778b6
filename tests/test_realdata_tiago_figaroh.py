"""Identification held out by time block on a measured PAL Robotics TIAGo (prismatic torso and 7-joint arm).

The run is the dynamic-identification log of FIGAROH's TIAGo example (Apache-2.0;
``tests/data/measured/tiago_figaroh/README.md``): 80 s at a nominal 100 Hz with jittered time stamps (7.7 to
12.3 ms), the positions and the drives' "effort" as the robot's controller logged them (raw: not filtered, no q̈).
The efforts are motor currents: τ = N k × effort with FIGAROH's reduction ratios N and torque constants k.

Protocol: the span FIGAROH identifies from (rows 921 to 6791, 58.7 s of motion) is cut into three time blocks of
about 19.6 s, each prepared on its own at the defaults (automatic cut-off, resampling of the jittered steps).
Each block is held out in turn: ``rd.identify`` on the other two (a list of runs) at its defaults, ``validate`` on
the held-out block.

Reference: the a priori model FIGAROH identifies this log with, ``tiago_48_schunk.urdf`` (PAL Robotics' TIAGo with
a Schunk wrist sensor and gripper; the fingers' prismatic joints and the head are dropped: they are not in the
log), scored on the same held-out samples.  Identification must predict every joint better than it.  FIGAROH
publishes base-parameter estimates for this log, no held-out torque error, so there is no published figure to
meet.  Two channels make that comparison weak, and the test says so rather than relying on them:

- the torso's effort is not in newtons (FIGAROH sets N = k = 1 and adds the weight the URDF puts on the joint),
  so the prior misses it by its unit, not its dynamics; identification fits the channel as logged (16 to 21 %);
- the wrist's efforts (arm joints 5 to 7) are 0 in 85 to 87 % of the samples, in steps of 1 mA (0.02 N m), where the
  prior's gravity alone reaches 0.8 N m: they do not measure the wrist's torques, and every model misses them.

The arm's joints 1 to 4 carry the comparison: RMS torques of 3.6 to 20 N m, the prior at 28 to 85 % relative
error, identification at 6 to 32 % (docs/identification.md, "TIAGo").
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import robodyn as rd
from tests.support.checks import assert_physically_consistent, measured_folder

DATA = measured_folder("tiago_figaroh")
RUN = DATA / "tiago_run.csv.gz"

pytestmark = pytest.mark.skipif(
    not RUN.exists(), reason="tiago_run.csv.gz absent: make_tiago_figaroh.py in its folder builds it")

#: FIGAROH, examples/tiago/identification.py (figaroh-examples commit c0b5c7f): reduction ratio and motor torque
#: constant (N m/A) of torso_lift_joint, arm_1_joint ... arm_7_joint; τ = N k × effort.
RATIO = np.array([1.0, 100, 100, 100, 100, 336, 336, 336])
KMOTOR = np.array([1.0, 0.136, 0.136, -0.087, -0.087, -0.0613, -0.0613, -0.0613])
#: FIGAROH's ``truncate=(921, 6791)`` in the same file: the rows it identifies from.
SPAN = (921, 6791)
BLOCKS = 3


@pytest.fixture(scope="module")
def log():
    table = np.loadtxt(RUN, delimiter=",", skiprows=1)
    return table[:, 0], table[:, 1:9], table[:, 17:25]


@pytest.fixture(scope="module")
def tiago():
    with warnings.catch_warnings():
        # the URDF's <dynamics> become Fv, Fc (wanted); arm_1_link's published inertia violates the triangle
        # inequality (kept as published, the prior is what the robot's maker gives)
        warnings.simplefilter("ignore", UserWarning)
        return rd.from_urdf(DATA / "tiago_48_schunk.urdf", tip="gripper_link", strict=False)


@pytest.fixture(scope="module")
def parts(log):
    t, q, effort = log
    tau = RATIO * KMOTOR * effort
    return [rd.identification.prepare_identification_data(t[k], q[k], tau[k])
            for k in np.array_split(np.arange(*SPAN), BLOCKS)]


def test_log_as_stored(log, tiago, parts):
    t, q, effort = log
    assert t.shape == (8022,) and q.shape == effort.shape == (8022, 8)
    dt = np.diff(t)
    assert dt.min() > 0
    np.testing.assert_allclose(np.median(dt), 0.01, rtol=1e-3)  # 100 Hz nominal
    assert dt.max() - dt.min() > 0.3 * np.median(dt)  # jittered: not a uniform grid
    assert all(p.resampled for p in parts)  # hence resampled onto a uniform grid
    assert tiago.n == 8 and tiago.sigma[tiago.sigma != 2].tolist() == [1] + [0] * 7  # torso prismatic, arm revolute
    moving = effort[slice(*SPAN)]
    zeros = np.mean(moving == 0, axis=0)
    assert np.all(zeros[:5] < 0.01) and np.all(zeros[5:] > 0.8)  # the wrist's currents are mostly exactly 0


@pytest.fixture(scope="module")
def fit(tiago, parts):
    """``fit(method, held_out)``: rd.identify on the other blocks at its defaults.  The base parameters are those
    the first call chose at its defaults, passed on so that they are computed once."""
    done = {}

    def fit(method, held_out):
        if (method, held_out) not in done:
            base = next(iter(done.values())).base if done else None
            train = [p for i, p in enumerate(parts) if i != held_out]
            done[method, held_out] = rd.identify(tiago, train, method=method, base=base)
        return done[method, held_out]

    return fit


@pytest.mark.parametrize("robust", ["huber", "bisquare"])
@pytest.mark.parametrize("held_out", range(BLOCKS))
def test_irls_converges_at_its_defaults(parts, fit, tiago, held_out, robust):
    """Bisquare's passes, started from OLS with the scales re-estimated, were unconverged after 100 passes with
    block 2 held out; from Huber's fit with its scales fixed they converge (48)."""
    train = [p for i, p in enumerate(parts) if i != held_out]
    res = rd.identify(tiago, train, method="irls", robust=robust, base=fit("ols", held_out).base)
    assert res.converged, res.message
    assert np.all(res.noise > 0) and np.all(np.isfinite(res.std))


def relative_rms(predicted, tau):
    return 100 * np.sqrt(np.mean((predicted - tau) ** 2, axis=0) / np.mean(tau ** 2, axis=0))


@pytest.mark.parametrize("method", ["ols", "physical"])
@pytest.mark.parametrize("held_out", range(BLOCKS))
def test_held_out_block(tiago, parts, fit, held_out, method):
    res = fit(method, held_out)
    assert res.converged, res.message
    if method == "physical":
        assert res.solver["certified"], res.solver["accuracy"]
        assert_physically_consistent(res.robot)
    h = parts[held_out]
    v = res.validate(h)
    assert np.all(v.samples == h.q.shape[0])
    prior = relative_rms(rd.inverse_dynamics(tiago, h.q, h.qd, h.qdd), h.tau)
    np.testing.assert_array_less(v.relative_rms_percent, prior,
                                 err_msg=f"{method}, block {held_out} held out: against the a priori model")
