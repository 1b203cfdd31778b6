"""A seven-joint arm mounted on a wall: the mounting named from its torques, then identified at the defaults.

The log is FrankJIE09's (github.com/FrankJIE09/Dynamics_identification_Frank; ``tests/data/measured/rokae_ar5/
README.md``): 60 s at 50 Hz of an AR5-5_07R-W4C4A2 arm driven through Rokae's xCore SDK, every joint moving by 1.9
to 3.2 rad, with the joint torques the SDK measured, and the repository's URDF, whose gravity is the floor's
(0, 0, −9.81).  Loaded as it is, least squares leaves 88 % of the torques unexplained: the arm hangs on a wall, its
base x axis pointing down.  The log is cut into three blocks, each prepared at the defaults; references, none of
them digits of a fit:

- the direction: ``gravity_direction`` on two blocks names gravity within 2° of the base's +x axis (the residual
  falls to 1 %; the URDF's own parameters predict joints 1 to 4 at 2 to 19 % with it, at 70 to 350 % with the
  floor's), and ``rd.identify`` with the floor's gravity warns that the arm may hang on a wall;
- the fit: with that gravity, the default predicts joints 1 to 4 of the third block better than the URDF with the
  same gravity, and at less than a fifth of the error of the default with the floor's gravity.
"""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from tests.support.checks import assert_physically_consistent, measured_folder

DATA = measured_folder("rokae_ar5")
HEAVY = slice(0, 4)  # joints 1 to 4 (2.5 to 18.6 N m RMS; the wrist's 0.2 to 0.5)

pytestmark = pytest.mark.skipif(not (DATA / "ar5_run.csv.gz").exists(),
                                reason="the AR5 log is absent: make_rokae_ar5.py in its folder builds it")


def relative_rms(predicted, tau):
    return 100 * np.sqrt(np.mean((predicted - tau) ** 2, axis=0) / np.mean(tau ** 2, axis=0))


def angle_to_x(g):
    return np.degrees(np.arccos(g[0] / np.linalg.norm(g)))


@pytest.fixture(scope="module")
def ar5():
    log = np.loadtxt(DATA / "ar5_run.csv.gz", delimiter=",", skiprows=1)
    assert log.shape == (3001, 29)
    np.testing.assert_allclose(np.diff(log[:, 0]), 0.02, atol=1e-6)  # 50 Hz
    t, q, tau = log[:, 0], log[:, 1:8], log[:, 22:29]
    assert np.ptp(q, axis=0).min() > 1.8  # every joint moves
    prepare = rd.identification.prepare_identification_data
    blocks = [prepare(t[k], q[k], tau[k]) for k in np.array_split(np.arange(t.size), 3)]
    return rd.load(DATA / "ar5.urdf"), blocks


@pytest.mark.parametrize("held_out", [0, 1, 2])
def test_the_wall_mounting_is_named_and_the_arm_identified_with_it(ar5, held_out):
    floor, blocks = ar5
    train, held = [b for i, b in enumerate(blocks) if i != held_out], blocks[held_out]
    found = rd.identification.gravity_direction(floor, train)
    assert angle_to_x(found.gravity) < 2.0 and found.sign_from_model
    assert found.residual < 0.05 < 0.5 < found.model_residual
    with pytest.warns(UserWarning, match=r"leaves \d+ % of the torques unexplained.*is the arm mounted on a wall"):
        on_floor = rd.identify(floor, train)
    wall = floor.replace(gravity=found.gravity)
    res = rd.identify(wall, train)
    assert res.converged and res.solver["certified"], res.message
    assert_physically_consistent(res.robot)
    ours = res.validate(held).relative_rms_percent[HEAVY]
    urdf = relative_rms(rd.inverse_dynamics(wall, held.q, held.qd, held.qdd), held.tau)[HEAVY]
    np.testing.assert_array_less(ours, urdf, err_msg="against the URDF with the same gravity")
    np.testing.assert_array_less(ours, 0.2 * on_floor.validate(held).relative_rms_percent[HEAVY],
                                 err_msg="against the default with the floor's gravity")
