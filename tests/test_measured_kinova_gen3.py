"""Identification held out by run on a measured Kinova Gen3 whose URDF rounds its right angles.

The runs are W. Chiha's logs of a Kinova Gen3 (github.com/wissem01chiha/dynamic-identification, CC0-1.0;
``tests/data/measured/kinova_gen3/README.md``): four trajectories at 1 kHz, the joint positions and the torques
from the motor currents.  The model is the repository's ``gen3.urdf`` (Kinova's ros_kortex, BSD-3-Clause), which
writes π/2 as 1.5708 and π as 3.1416: its joint axes lie a few µrad off the right angles, which gives it 72 base
parameters instead of the 69 of the exact angles, three of which change the torques by parts in 10^6.  Three of its
link inertias violate the triangle inequality, so it loads with ``strict=False`` only.

Protocol: each run prepared on its own at the defaults; ``rd.identify`` at its defaults on runs A, C and D (a list
of runs), ``validate`` on run B; the same with the URDF's angles made exact.  Then on runs A, B and C, which share
one profile, ``validate`` on run D, against the URDF and against least squares.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import robodyn as rd
from robodyn.parameters.base import right_angled
from tests.support.checks import measured_folder

DATA = measured_folder("kinova_gen3")


@pytest.fixture(scope="module")
def gen3():
    with pytest.warns(UserWarning, match="triangle inequality"):
        robot = rd.load(DATA / "gen3.urdf", strict=False)
    runs = {}
    for name in "ABCD":
        a = np.loadtxt(DATA / f"kinova_gen3_{name}.csv.gz", delimiter=",", skiprows=1)
        runs[name] = rd.identification.prepare_identification_data(a[:, 0], a[:, 1:8], a[:, 8:15])
    return robot, runs


def test_rounded_right_angles_identify_as_the_exact_ones_and_beat_the_urdf_on_a_held_out_run(gen3):
    """identify warns that 3 of the 72 base parameters exist only through the rounded angles and identifies the 69
    of the exact ones; on the held-out run every joint's error is below the URDF's, and the same as with the angles
    made exact to 0.01 point (the columns it leaves out are parts in 10^6 of the torques)."""
    robot, runs = gen3
    train, held = [runs[k] for k in "ACD"], runs["B"]
    with pytest.warns(UserWarning, match=r"these 3 of its 72 base parameters \(MX2, MY2, Ia3\) exist only because "
                                         r"angles lie within 7.3e-06 rad of a right angle"):
        res = rd.identify(robot, train)
    exact = right_angled(robot)[0]
    reference = rd.identify(exact, train)
    assert res.base.count == reference.base.count == 69
    err = res.validate(held).relative_rms_percent
    prior = 100 * np.linalg.norm(rd.inverse_dynamics(robot, held.q, held.qd, held.qdd) - held.tau, axis=0) \
        / np.linalg.norm(held.tau, axis=0)
    assert np.all(err < prior)
    assert np.abs(err - reference.validate(held).relative_rms_percent).max() < 0.01


def test_the_default_extrapolates_from_three_runs_of_one_profile(gen3):
    """Runs A, B and C move every joint along one common profile (cond W ≈ 1e5): trained on them, least squares
    predicts run D's joint 1 at about 2000 %; the default, physically consistent fit beats the URDF on every joint of
    run D and halves least squares' mean error (50, 8, 19, 19, 5, 44, 19 % against 2004, 22, 36, 26, 54, 36, 35 %)."""
    robot, runs = gen3
    train, held = [runs[k] for k in "ABC"], runs["D"]
    with pytest.warns(UserWarning, match="exist only because angles lie within"):
        res = rd.identify(robot, train)
        ols = rd.identify(robot, train, method="ols").validate(held).relative_rms_percent
    assert res.method == "physical" and res.solver["certified"], res.solver["accuracy"]
    err = res.validate(held).relative_rms_percent
    prior = 100 * np.linalg.norm(rd.inverse_dynamics(robot, held.q, held.qd, held.qdd) - held.tau, axis=0) \
        / np.linalg.norm(held.tau, axis=0)
    np.testing.assert_array_less(err, prior)
    assert err.mean() < 0.5 * ols.mean()


def test_joint_2_logged_with_the_other_sign_is_named(gen3):
    """Run A with joint 2's torques negated: least squares fits it with joint 2's own parameters of the other sign,
    the URDF's masses predict it at about 33 % of its norm negated and 205 % as logged; identify names joint 2
    alone, and nothing on the run as logged (least squares without friction: run A turns each joint one way)."""
    robot, runs = gen3
    run = runs["A"]
    flipped = run.tau.copy()
    flipped[:, 1] *= -1
    with pytest.warns(UserWarning) as caught:
        rd.identify(robot, run.q, run.qd, run.qdd, flipped, friction=False, method="ols")
    named = [re.findall(r"joint (\d+) \(", str(w.message)) for w in caught if "negated" in str(w.message)]
    assert named == [["2"]] and any("model's own parameters" in str(w.message) for w in caught)
    with pytest.warns(UserWarning) as caught:
        rd.identify(robot, run.q, run.qd, run.qdd, run.tau, friction=False, method="ols")
    assert not [w for w in caught if "negated" in str(w.message)]
