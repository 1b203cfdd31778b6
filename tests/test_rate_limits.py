"""Joint velocity and torque limits (Robot.qdlim, Robot.taulim): the robot library, model files, URDF, and the
functions that take limits (time_optimal, time_scale) using the robot's own by default."""

import math

import numpy as np
import pytest

import robodyn as rd
from robodyn.model.io import dumps, loads
from robodyn.model.urdf import to_urdf
from robodyn.simulation import RestToRest, time_optimal, time_scale
from tests.support.checks import example_robot_data_path

PANDA_URDF = "panda_description/urdf/panda.urdf"


def test_panda_limits_are_franka_s():
    """The library's Panda carries the velocity and torque limits of Franka's own URDF (example-robot-data)."""
    panda = rd.load("panda")
    with pytest.warns(UserWarning, match="dynamics damping friction"):
        urdf = rd.from_urdf(example_robot_data_path(PANDA_URDF))
    arm = [urdf.joint_names.index(f"panda_joint{k}") for k in range(1, 8)]
    np.testing.assert_array_equal(panda.qdlim, urdf.qdlim[arm])
    np.testing.assert_array_equal(panda.taulim, urdf.taulim[arm])
    np.testing.assert_array_equal(panda.taulim, [87, 87, 87, 87, 12, 12, 12])
    assert panda.joint(5).qdmax == 2.61 and panda.joint("j1").taumax == 87.0


def test_limits_default_to_unlimited_and_keep_the_content_key():
    r = rd.load("rx90")
    assert r.qdlim.shape == r.taulim.shape == (r.n,) and np.all(np.isinf(r.qdlim)) and np.all(np.isinf(r.taulim))
    assert math.isinf(r.joint(1).qdmax) and math.isinf(r.joint(1).taumax)
    limited = r.with_joint_parameters(taulim=np.arange(1.0, r.n + 1), qdlim=3.0)
    np.testing.assert_array_equal(limited.taulim, np.arange(1.0, r.n + 1))
    np.testing.assert_array_equal(limited.qdlim, np.full(r.n, 3.0))
    assert limited != r and limited.content_key != r.content_key
    assert limited.replace(qdlim=None, taulim=None) == r   # unlimited again: the key of a robot without limits
    assert not limited.qdlim.flags.writeable


@pytest.mark.parametrize("field", ["qdlim", "taulim"])
@pytest.mark.parametrize("bad", [-1.0, 0.0, np.nan, -np.inf])
def test_bad_limits_name_the_field(field, bad):
    r = rd.load("planar2r")
    with pytest.raises(rd.ModelError, match=rf"joint 2 \(.*\): field {field} = .*positive"):
        r.replace(**{field: [1.0, bad]})


@pytest.mark.parametrize("field", ["qdlim", "taulim"])
def test_limits_of_the_wrong_shape_name_the_field(field):
    r = rd.load("planar2r")
    with pytest.raises(rd.ModelError, match=rf"{field} has shape \(3,\); expected \(2,\)"):
        r.replace(**{field: [1.0, 2.0, 3.0]})
    with pytest.raises(rd.ModelError, match=rf"field {field} must be an array of real numbers"):
        r.replace(**{field: ["fast", "slow"]})


def test_model_file_round_trip():
    panda = rd.load("panda")
    back = loads(dumps(panda))
    assert back == panda
    np.testing.assert_array_equal(back.qdlim, panda.qdlim)
    np.testing.assert_array_equal(back.taulim, panda.taulim)
    partial = rd.load("rx90").with_joint_parameters(taulim=[np.inf, 10, 10, np.inf, 1, 1])
    text = dumps(partial)
    assert text.count("taumax") == 4 and "qdmax" not in text
    assert loads(text) == partial


@pytest.mark.parametrize("key, value", [("qdmax", -2), ("taumax", 0), ("taumax", ".nan"), ("qdmax", "fast")])
def test_model_file_rejects_bad_limits(key, value):
    text = f"name: x\njoints: [{{sigma: 0, {key}: {value}}}]\nlinks: [{{M: 1}}]\n"
    with pytest.raises(rd.ModelFileError, match=rf"{'qdlim' if key == 'qdmax' else 'taulim'}|{key}"):
        loads(text)


def test_model_file_rejects_limits_on_a_fixed_frame():
    text = "name: x\njoints: [{sigma: 0}, {sigma: 2, taumax: 3}]\nlinks: [{M: 1}, {}]\n"
    with pytest.raises(rd.ModelFileError, match=r"joints row 2: field qdmax/taumax on a fixed frame"):
        loads(text)


def test_urdf_round_trip():
    panda = rd.load("panda")
    back = rd.from_urdf(to_urdf(panda))
    np.testing.assert_array_equal(back.qdlim, panda.qdlim)
    np.testing.assert_array_equal(back.taulim, panda.taulim)
    np.testing.assert_array_equal(back.qlim, panda.qlim)
    # a continuous joint (no position limits) keeps its velocity and torque limits; unknown ones stay unknown
    r = rd.load("planar2r").replace(taulim=[5.0, np.inf], gravity=[0, 0, -9.81])
    text = to_urdf(r)
    assert 'type="continuous"' in text
    back = rd.from_urdf(text)
    np.testing.assert_array_equal(back.taulim, [5.0, np.inf])
    np.testing.assert_array_equal(back.qdlim, [np.inf, np.inf])
    assert "<limit" not in to_urdf(r.replace(taulim=None))


URDF = """<robot name="r"><link name="base"/><link name="l1"><inertial><mass value="1"/>
<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
<limit lower="-1" upper="1" {attrs}/></joint></robot>"""


def test_urdf_limits_read_zero_as_none_and_reject_negative():
    r = rd.from_urdf(URDF.format(attrs='effort="0" velocity="3"'))
    np.testing.assert_array_equal(r.qdlim, [3.0])
    np.testing.assert_array_equal(r.taulim, [np.inf])
    with pytest.raises(rd.ModelFileError, match=r"joint 'j1': <limit effort=\"-2\"> is negative"):
        rd.from_urdf(URDF.format(attrs='effort="-2" velocity="3"'))


def test_time_optimal_takes_the_robot_s_limits_by_default():
    panda = rd.load("panda")
    q0 = np.zeros(7)
    q0[3], q0[5] = -1.5, 1.5
    path = RestToRest(q0, q0 + 0.4, 1.0, profile="quintic")
    own = time_optimal(panda, path, grid=20, collocation=True)
    given = time_optimal(panda, path, panda.taulim, grid=20, velocity_limits=panda.qdlim, collocation=True)
    np.testing.assert_array_equal(own.t, given.t)
    np.testing.assert_array_equal(own.limits, panda.taulim)
    assert np.all(np.abs(own.sample(own.t)[1]) <= panda.qdlim * (1 + 1e-9))
    # without velocity limits the same path is faster: the robot's qdlim was imposed
    free = time_optimal(panda, path, panda.taulim, grid=20, collocation=True,
                        velocity_limits=np.full(7, 1e6))
    assert free.t[-1] < own.t[-1]
    scaled = time_scale(panda, path)
    np.testing.assert_array_equal(scaled.limits, panda.taulim)


def test_functions_taking_limits_ask_for_them_when_the_robot_has_none():
    r = rd.load("planar2r")
    path = RestToRest([0.0, 0.0], [1.0, 1.0], 1.0)
    with pytest.raises(rd.InputError, match=r"'torque_limits' is not given and robot 'planar2r' has no taulim"):
        time_optimal(r, path, grid=10)
    with pytest.raises(rd.InputError, match=r"has no taulim"):
        time_scale(r, path)
