"""Identification at the defaults on a Barrett WAM's log whose excitation moves two of its seven joints.

The log is A. Noohian's (github.com/amir-noohian/dynamics-estimation; ``tests/data/measured/barrett_wam/README.md``):
10 s at 250 Hz of a seven-joint WAM whose joints 2 and 4 follow a Fourier series of period 10 s while the controller
holds the five others (they move by at most 0.04 rad), the joint torques its controller commanded, and
libbarrett's gravity torques at the same cycles.  Each half (5 s) is prepared on its own at the defaults; the model
is the built-in ``wam7`` (Barrett's published kinematics and inertias).

Such data excite few directions of the 69 base parameters, and each half covers a part of the motion the other
does not: OLS fits its half (3 % of joints 2 and 4's torques) and extrapolates poorly to the other (18 to 39 %).
The default method, ``"physical"``, keeps every link a rigid body and friction ≥ 0 and pulls what the data do not
determine towards the model: references, none of them digits of a fit, on joints 2 and 4 of the held-out half:

- the a priori model (31 to 52 %): the default beats it on both joints, in both directions;
- OLS on the same half: the default beats it on both joints; in the second half the controller holds joint 1 so
  still (its q, q̇ and q̈ below 1 % of the moving joints') that the preparation sets its q̇ and q̈ to 0, and OLS
  refuses the friction of joint 1, in no equation, naming the joint.
"""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

import robodyn as rd
from robodyn.identification.factors import IdentificationError
from tests.support.checks import assert_physically_consistent, measured_folder

DATA = measured_folder("barrett_wam")
MOVING = [1, 3]  # joints 2 and 4, 0-based

pytestmark = pytest.mark.skipif(not (DATA / "state_4.json.gz").exists(),
                                reason="the WAM log is absent: make_barrett_wam.py in its folder builds it")


def relative_rms(predicted, tau):
    return 100 * np.sqrt(np.mean((predicted - tau) ** 2, axis=0) / np.mean(tau ** 2, axis=0))


@pytest.fixture(scope="module")
def halves():
    """The two halves of the log, each prepared at the defaults: t (s), q (rad), the commanded torques (N m)."""
    records = json.loads(gzip.decompress((DATA / "state_4.json.gz").read_bytes()))
    t = np.array([r["time"] for r in records])
    q = np.array([r["position"] for r in records])
    tau = np.array([r["effort"] for r in records])
    assert t.shape == (2501,) and q.shape == tau.shape == (2501, 7)
    assert np.median(np.diff(t)) == pytest.approx(0.004, rel=1e-3)  # 250 Hz, jittered
    still = np.delete(np.arange(7), MOVING)
    assert np.ptp(q[:, still], axis=0).max() < 0.05 and np.ptp(q[:, MOVING], axis=0).min() > 1.0
    prepare = rd.identification.prepare_identification_data
    return [prepare(t[k] - t[0], q[k], tau[k]) for k in np.array_split(np.arange(t.size), 2)]


@pytest.mark.parametrize("train", [0, 1])
def test_the_default_extrapolates_where_ols_does_not(halves, train):
    robot = rd.load("wam7")
    fit, held = halves[train], halves[1 - train]
    res = rd.identify(robot, [fit])
    assert res.method == "physical" and res.converged, res.message
    assert res.solver["certified"], res.solver["accuracy"]
    assert_physically_consistent(res.robot)
    ours = res.validate(held).relative_rms_percent[MOVING]
    prior = relative_rms(rd.inverse_dynamics(robot, held.q, held.qd, held.qdd), held.tau)[MOVING]
    np.testing.assert_array_less(ours, prior, err_msg="against the a priori model")
    if fit.still_joints:  # joint 1 of the second half: its friction is then in no equation, which OLS refuses
        assert fit.still_joints == (0,)
        with pytest.raises(IdentificationError, match=r"Fv1.*joint\(s\) 1 do not move in these data"):
            rd.identify(robot, [fit], method="ols")
        return
    ols = rd.identify(robot, [fit], method="ols").validate(held).relative_rms_percent[MOVING]
    np.testing.assert_array_less(ours, ols, err_msg="against OLS")
