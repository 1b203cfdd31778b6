"""Joints that a servo holds still while the others move (IdentificationData.still_joints): their prepared q̇ and q̈
are encoder noise, set to 0, so that their friction and rotor inertia are not fitted to the noise of their torque
(a UR3e log of one swinging shoulder gave 241 A s/rad and 14 kg m² on joints that turned by 0.3 mrad)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import robodyn as rd
from robodyn.identification.factors import IdentificationError
from robodyn.identification.samples import still_joints

RATE, SECONDS = 125.0, 40.0


def swing(held_amplitude=0.0, held_frequency=0.0, seed=0):
    """planar3r: joint 1 swings (1.5 rad at 0.15 Hz); joints 2 and 3 are held, with 2e-5 rad of encoder noise, and
    joint 2 trembles by ``held_amplitude`` rad at ``held_frequency`` Hz; torques with 0.02 N m of noise."""
    robot = rd.load("planar3r").replace(Fc=[0.3, 0.3, 0.3, 0], Fv=[0.2, 0.2, 0.2, 0], Ia=[0.01, 0.02, 0.03, 0])
    rng = np.random.default_rng(seed)
    t = np.arange(int(RATE * SECONDS)) / RATE
    w1, w2 = 2 * np.pi * 0.15, 2 * np.pi * held_frequency
    q = np.zeros((t.size, 3))
    qd, qdd = np.zeros_like(q), np.zeros_like(q)
    q[:, 0], qd[:, 0], qdd[:, 0] = 1.5 * np.sin(w1 * t), 1.5 * w1 * np.cos(w1 * t), -1.5 * w1 ** 2 * np.sin(w1 * t)
    q[:, 1] = held_amplitude * np.sin(w2 * t)
    qd[:, 1], qdd[:, 1] = held_amplitude * w2 * np.cos(w2 * t), -held_amplitude * w2 ** 2 * np.sin(w2 * t)
    tau = rd.inverse_dynamics(robot, q, qd, qdd) + rng.normal(0.0, 0.02, q.shape)
    return robot, t, q + rng.normal(0.0, 2e-5, q.shape), tau


@pytest.mark.parametrize("measured", [False, True])
def test_held_joints_have_no_velocity_nor_acceleration(measured):
    robot, t, q, tau = swing()
    qd = np.gradient(q, t, axis=0) if measured else None
    data = rd.identification.prepare_identification_data(t, q, tau, qd=qd)
    assert data.still_joints == (1, 2)
    assert not np.any(data.qd[:, 1:]) and not np.any(data.qdd[:, 1:]) and not np.any(data.coulomb[:, 1:])
    assert np.all(np.abs(data.qd[:, 0]).max() > 0.5)
    np.testing.assert_array_equal(data.q[:, 1:] != 0, True)  # the positions are kept
    report = data.report()
    assert report["still_joints"] == [2, 3]
    assert "held still" in report["summary"] and "joint 2, joint 3" in report["summary"]
    assert data.select(np.arange(100)).still_joints == (1, 2)


def test_a_trembling_joint_keeps_its_motion():
    # joint 2 moves by 0.005 rad (0.3 % of joint 1's) but at 0.8 Hz: its q̈ is 9.5 % of joint 1's, inertial
    # torques that are real (a cable-driven WAM's held joints tremble so)
    robot, t, q, tau = swing(held_amplitude=0.005, held_frequency=0.8)
    data = rd.identification.prepare_identification_data(t, q, tau)
    assert data.still_joints == (2,)
    assert np.sqrt(np.mean(data.qdd[:, 1] ** 2)) > 0.05 * np.sqrt(np.mean(data.qdd[:, 0] ** 2))


def test_physical_holds_what_only_the_held_joints_tell():
    robot, t, q, tau = swing()
    data = rd.identification.prepare_identification_data(t, q, tau)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = rd.identify(robot, data)
    held = ("Fc2", "Fv2", "Fc3", "Fv3", "Ia2", "Ia3")
    assert any(all(name in str(w.message) for name in held) for w in caught)
    assert set(held) <= set(res.prior_determined)
    # at the model's values to the conic solver's tolerance, not fitted to the noise (before: Fv2 = 255, Fv3 = 37,
    # Ia3 = 14)
    for field in ("Fv", "Fc", "Ia"):
        np.testing.assert_allclose(getattr(res.robot, field)[1:3], getattr(robot, field)[1:3], rtol=1e-7)
    # the moving joint's friction is identified: 2 % noise-free bounds from 0.02 N m of noise on ~1 N m torques
    np.testing.assert_allclose(res.robot.Fv[0], robot.Fv[0], rtol=0.1)


def test_least_squares_names_the_held_joints():
    robot, t, q, tau = swing()
    data = rd.identification.prepare_identification_data(t, q, tau)
    with pytest.raises(IdentificationError, match=r"Fv2.*joint\(s\) 2, 3 do not move in these data"):
        rd.identify(robot, data, method="ols")
    with pytest.raises(IdentificationError, match=r"do not excite") as info:  # arrays: no preparation to name
        rd.identify(robot, data.q, data.qd, data.qdd, data.tau, method="ols")
    assert "do not move in these data" not in str(info.value)


def test_still_joints_of_runs():
    _, t, q, tau = swing()
    still = rd.identification.prepare_identification_data(t, q, tau)
    _, t, q2, tau2 = swing(held_amplitude=0.5, held_frequency=0.2, seed=1)
    moving = rd.identification.prepare_identification_data(t, q2, tau2)
    assert moving.still_joints == (2,)
    assert still_joints(still) == (1, 2)
    assert still_joints([still, moving]) == (2,)
    assert still_joints([still, (still.q, still.qd, still.qdd, still.tau)]) == ()
    assert still_joints(still.q) == ()
