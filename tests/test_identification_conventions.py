"""gravity_direction: the gravity vector a log's torques were measured under (an arm on a wall, a ceiling, a tilted
base), and the warning of rd.identify when the model's gravity leaves most of the torques unexplained.

References: torques simulated with a known gravity vector (the direction is recovered to the accuracy the search
asks, and the residual of least squares with it is the noise's share); the model's own gravity for a floor-mounted
log (nothing to warn about).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import robodyn as rd
from robodyn.identification.conventions import POOR_FIT, gravity_direction

WALL = np.array([9.81, 0.0, 0.0])
TILTED = 9.81 * np.array([np.sin(0.8) * np.cos(0.3), np.sin(0.8) * np.sin(0.3), -np.cos(0.8)])
CEILING = np.array([0.0, 0.0, 9.81])


@pytest.fixture(scope="module")
def panda():
    return rd.load("panda")


def log(robot, gravity, noise=0.0, N=3000, seed=0):
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-1.0, 1.0, (3, N, robot.n))
    tau = rd.inverse_dynamics(robot, q, qd, qdd, gravity=gravity)
    return q, qd, qdd, tau + noise * rng.standard_normal(tau.shape)


def angle(a, b):
    return float(np.arccos(np.clip(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)), -1.0, 1.0)))


@pytest.mark.parametrize("gravity", [WALL, TILTED, CEILING], ids=["wall", "tilted", "ceiling"])
def test_the_direction_of_simulated_torques_is_recovered(panda, gravity):
    found = gravity_direction(panda, *log(panda, gravity, noise=0.01))
    assert angle(found.gravity, gravity) < 1e-3  # rad: the search's tolerance (1e-4 rad) and the noise's share
    assert np.linalg.norm(found.gravity) == pytest.approx(9.81, rel=1e-12)  # the model's magnitude
    np.testing.assert_allclose(found.direction, gravity / 9.81, atol=1e-3)
    assert found.residual < 0.01 and found.sign_from_model
    # a wall or a tilted base leave most of the torques unexplained with the floor's g; a ceiling (−g) does not:
    # least squares fits it with negated masses and first moments, all but the inertial terms (4 %)
    assert found.model_residual > POOR_FIT if gravity[2] <= 0 else 0.01 < found.model_residual < POOR_FIT


def test_without_masses_the_data_choose_the_sign(panda):
    bare = panda.replace(params=np.zeros_like(panda.params))
    found = gravity_direction(bare, *log(panda, WALL))
    assert not found.sign_from_model and angle(found.gravity, WALL) < 1e-3  # noise-free: −g fits worse


def test_runs_and_arrays_agree(panda):
    q, qd, qdd, tau = log(panda, TILTED, noise=0.01)
    runs = [(q[:1500], qd[:1500], qdd[:1500], tau[:1500]), (q[1500:], qd[1500:], qdd[1500:], tau[1500:])]
    a, b = gravity_direction(panda, q, qd, qdd, tau), gravity_direction(panda, runs)
    np.testing.assert_array_equal(a.gravity, b.gravity)


def test_identify_names_the_mounting(panda):
    data = log(panda, WALL, noise=0.01)
    with pytest.warns(UserWarning, match=r"leaves \d+ % of the torques unexplained.*Gravity \[9.81, -?0.0\d*, "
                                         r"-?0.0\d*\] m/s² in the base frame leaves 0 %: is the arm mounted on a wall"):
        rd.identify(panda, *data, method="ols")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rd.identify(panda.replace(gravity=WALL), *data, method="ols")  # the right model: no warning


def test_identify_names_a_ceiling_by_the_models_own_parameters(panda):
    """A Panda on a ceiling: least squares fits the floor's g with masses of the other sign (no poor fit to see),
    but the model's own parameters predict the torques far better with g reversed; a model without masses says
    nothing."""
    data = log(panda, CEILING, noise=0.01)
    with pytest.warns(UserWarning, match=r"predict the torques at \d+ % with its gravity and at 0 % with gravity "
                                         r"reversed, \[0.0, 0.0, 9.81\] m/s².*mounted on a ceiling"):
        rd.identify(panda, *data, method="ols")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rd.identify(panda.replace(params=np.zeros_like(panda.params)), *data, method="ols")


def test_identify_names_other_causes_when_no_direction_helps(panda):
    q, qd, qdd, tau = log(panda, panda.gravity, noise=0.01)
    with pytest.warns(UserWarning, match="No direction of gravity does much better .*units and signs, the order of "
                                         "the joints"):
        rd.identify(panda, q, qd, qdd, tau[:, ::-1], method="ols")  # the joints' torques in reverse order


def test_bad_input(panda):
    q, qd, qdd, tau = log(panda, WALL, N=50)
    with pytest.raises(rd.InputError, match="samples = 0"):
        gravity_direction(panda, q, qd, qdd, tau, samples=0)
    with pytest.raises(rd.InputError, match="has no gravity"):
        gravity_direction(panda.replace(gravity=np.zeros(3)), q, qd, qdd, tau)
    with pytest.raises(rd.InputError, match="tau is zero"):
        gravity_direction(panda, q, qd, qdd, np.zeros_like(tau))
    with pytest.raises(rd.InputError, match="same number of rows"):
        gravity_direction(panda, q, qd, qdd, tau[:10])


@pytest.mark.parametrize("joint", [1, 3, 6])
def test_a_torque_of_the_other_sign_is_named(panda, joint):
    """One joint's torques negated (a log's convention against the model's axis): identify names that joint alone,
    with its residual before and after; the right signs give no warning."""
    q, qd, qdd, tau = log(panda, panda.gravity, noise=0.01)
    flipped = tau.copy()
    flipped[:, joint] *= -1
    with pytest.warns(UserWarning, match=rf"the torques of joint {joint + 1} \(j{joint + 1}: \d+ % → \d+ %\) look "
                                         "of the other sign") as caught:
        rd.identify(panda, q, qd, qdd, flipped, method="ols")
    named = [re.findall(r"joint (\d+) \(", str(w.message)) for w in caught if "other sign" in str(w.message)]
    assert named == [[str(joint + 1)]]  # that joint alone
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rd.identify(panda, q, qd, qdd, tau, method="ols")


def test_a_sign_least_squares_cannot_see_is_named_by_the_models_own_parameters():
    """The PUMA 560's joint 5 negated: least squares fits it with its own parameters of the other sign (no residual
    to see), but the model's own parameters predict it far better negated, and identify names that joint alone; a
    model without masses cannot tell, and a ceiling stays a ceiling (gravity reversed predicts better)."""
    puma = rd.load("puma560")
    q, qd, qdd, tau = log(puma, puma.gravity, noise=0.01)
    flipped = tau.copy()
    flipped[:, 4] *= -1
    with pytest.warns(UserWarning, match=r"the model's own parameters predict the torques of joint 5 \(\w+: \d+ % → "
                                         r"\d+ %\) far better negated") as caught:
        rd.identify(puma, q, qd, qdd, flipped, method="ols")
    named = [re.findall(r"joint (\d+) \(", str(w.message)) for w in caught if "negated" in str(w.message)]
    assert named == [["5"]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rd.identify(puma, q, qd, qdd, tau, method="ols")
        rd.identify(puma.replace(params=np.zeros_like(puma.params)), q, qd, qdd, flipped, method="ols")
    ceiling = log(puma, -puma.gravity, noise=0.01)
    with pytest.warns(UserWarning, match="mounted on a ceiling") as caught:
        rd.identify(puma, *ceiling, method="ols")
    assert not [w for w in caught if "negated" in str(w.message)]
