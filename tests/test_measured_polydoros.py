"""Identification at the defaults on pick-and-place runs of a Rethink Baxter arm and a KUKA LWR (Polydoros et al.).

The runs are Polydoros, Nalpantidis and Krüger's (IROS 2016; ``tests/data/measured/polydoros/README.md``): ten runs
of each robot at 100 Hz, the positions, velocities and the torques its joints measured (the Baxter's series-elastic
actuators, the LWR's torque sensors), moving objects from place to place: task motions, not an excitation.  Each
run is prepared on its own at the defaults; seven identify, the other three are held out (two ways).  References,
none of them digits of a fit:

- Baxter (its URDF, Rethink Robotics' ``baxter_common``): the default predicts the held-out runs better than OLS
  on the mean over the joints, and better than the URDF on every joint, joint 2 included, whose gravity-assist
  spring the URDF lacks (the URDF: 184 to 202 %), and the light joint 6, which Gautier's weights let into the fit
  (11 to 13 % against the URDF's 33 to 34 % and OLS's 22 to 43 %);
- KUKA LWR (the FloBaRoID model): "auto" gives joint 7 its position term; predicted on a held-out run within the
  positions the term was fitted on, joint 7 is better with the term than without; on the run that turns q₇ to
  2.5 rad (the training runs stop at 0.71) it is worse, and that prediction warns, naming the joint.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import robodyn as rd
from tests.support.checks import assert_physically_consistent, measured_folder

DATA = measured_folder("polydoros")
LWR4 = measured_folder("kuka_lwr4") / "kuka_lwr4.urdf"
FOLDS = [(range(0, 7), (7, 8, 9)), (range(3, 10), (0, 1, 2))]

pytestmark = pytest.mark.skipif(not (DATA / "baxter_runs.csv.gz").exists(),
                                reason="the Polydoros runs are absent: make_polydoros.py in their folder builds them")


def relative_rms(predicted, tau):
    return 100 * np.sqrt(np.mean((predicted - tau) ** 2, axis=0) / np.mean(tau ** 2, axis=0))


def runs(name):
    """The ten runs of ``name``'s CSV, each prepared at the defaults: t (s), q (rad), τ (N m)."""
    log = np.loadtxt(DATA / f"{name}_runs.csv.gz", delimiter=",", skiprows=1)
    assert log.shape[1] == 23 and np.unique(log[:, 0]).tolist() == list(range(1, 11))
    prepare = rd.identification.prepare_identification_data
    return [prepare(log[k, 1], log[k, 2:9], log[k, 16:23]) for k in (log[:, 0] == r for r in range(1, 11))], log


@pytest.fixture(scope="module")
def baxter():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # its <dynamics> become Fv (wanted)
        robot = rd.from_urdf(DATA / "baxter.urdf", tip="left_gripper", strict=False)
    return robot, *runs("baxter")


@pytest.fixture(scope="module")
def lwr():
    if not LWR4.exists():
        pytest.skip("the KUKA LWR4+ model is absent: make_kuka_lwr4.py in tests/data/measured/kuka_lwr4 copies it")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        robot = rd.load(LWR4)
    return robot, *runs("kuka_lwr4")


def test_runs_as_stored(baxter):
    robot, _, log = baxter
    assert log.shape[0] == 19295 and robot.n == 7
    np.testing.assert_allclose(np.diff(log[log[:, 0] == 1, 1]), 0.01, rtol=1e-12)
    # the columns in the chain's order: every joint within the URDF's limits (to 0.02 rad), which the log's
    # alphabetical order (e0, e1, s0, s1, ...) breaks: e1 would reach -1.71 rad where its limit is -0.05
    q = log[:, 2:9]
    assert np.all(q >= robot.qlim[:, 0] - 0.02) and np.all(q <= robot.qlim[:, 1] + 0.02)
    assert q[:, 3].min() < 0.0 and q[:, 1].min() < -1.7


@pytest.mark.parametrize("train, held", FOLDS)
def test_baxter_default_against_ols_and_the_urdf(baxter, train, held):
    robot, parts, _ = baxter
    fit, test = [parts[i] for i in train], [parts[i] for i in held]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a log of the model's conventions: no sign, mounting or friction warning
        res = rd.identify(robot, fit)
    assert res.method == "physical" and res.converged and res.solver["certified"], res.message
    assert_physically_consistent(res.robot)
    ours = res.validate(test).relative_rms_percent
    ols = rd.identify(robot, fit, method="ols").validate(test).relative_rms_percent
    q, qd, qdd, tau = (np.concatenate([getattr(p, k) for p in test]) for k in ("q", "qd", "qdd", "tau"))
    urdf = relative_rms(rd.inverse_dynamics(robot, q, qd, qdd), tau)
    assert ours.mean() < ols.mean()
    np.testing.assert_array_less(ours, urdf, err_msg="against the URDF")
    assert ours[5] < 0.75 * ols[5], (ours, ols)  # the light joint 6, weighted as its noise says


def test_lwr_position_term_beyond_its_range_warns(lwr):
    robot, parts, _ = lwr
    fit = parts[:7]
    res = rd.identify(robot, fit)
    plain = rd.identify(robot, fit, position_terms=None)
    assert res.position_joints == (6,)
    top = max(p.q[:, 6].max() for p in fit)
    np.testing.assert_array_equal(res.position_range[0, 1], top)
    within, beyond = parts[9], parts[7]
    assert within.q[:, 6].max() < top < 2.0 < beyond.q[:, 6].max()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        inside = res.validate(within).relative_rms_percent[6]
    assert inside < plain.validate(within).relative_rms_percent[6]
    with pytest.warns(UserWarning, match=r"joint 7 \(lwr_6_joint: q from .* to 2.5 rad, fitted on .*\) outside the "
                                         r"range of the identification data"):
        outside = res.validate(beyond).relative_rms_percent[6]
    assert outside > plain.validate(beyond).relative_rms_percent[6]
