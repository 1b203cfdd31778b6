"""rd.to_pinocchio and rd.to_mujoco_xml on random serial and tree robots (frames not numbered depth-first,
fixed frames, rotor inertia, damping), and the URDF export of random robots."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings

import robodyn as rd
from tests.support.mujoco_compare import assert_mujoco_dynamics
from tests.support.pin_compare import assert_rel
from tests.support.random_robots import random_state, robots

pin = pytest.importorskip("pinocchio")


@given(robots)
@settings(max_examples=10)
def test_to_pinocchio_agrees_with_robodyn(robot):
    model, mapping = rd.to_pinocchio(robot)
    data = model.createData()
    assert model.nv == robot.n and model.names[int(mapping.joint_ids[0])] == robot.q_names[0]
    assert_rel(mapping.from_pinocchio(model.armature), robot.Ia[robot.joint_frames], 1e-15)
    assert_rel(mapping.from_pinocchio(model.damping), robot.Fv[robot.joint_frames], 1e-15)
    q, qd, qdd = random_state(robot, 1, (2,))
    # Pinocchio's RNEA has the armature but no friction
    tau = rd.inverse_dynamics(robot, q, qd, qdd) - rd.friction_torques(robot, qd)
    A = rd.inertia_matrix(robot, q)
    T = rd.forward_kinematics(robot, q)
    for s in range(2):
        qp, vp, ap = (mapping.to_pinocchio(x[s]) for x in (q, qd, qdd))
        assert_rel(tau[s], mapping.from_pinocchio(pin.rnea(model, data, qp, vp, ap)))
        M = pin.crba(model, data, qp)
        assert_rel(A[s], mapping.matrix_from_pinocchio(np.triu(M) + np.triu(M, 1).T))
        pin.framesForwardKinematics(model, data, qp)
        for j in range(robot.nf):
            assert_rel(T[s, j], data.oMf[int(mapping.frame_ids[j])].homogeneous)


@given(robots)
@settings(max_examples=10)
def test_to_mujoco_xml_agrees_with_robodyn(robot):
    mujoco = pytest.importorskip("mujoco")
    robot = robot.replace(Fc=None)  # MuJoCo's frictionloss is a constraint, not Fc·sign(q̇) in mj_inverse
    model = mujoco.MjModel.from_xml_string(rd.to_mujoco_xml(robot))
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    adr = assert_mujoco_dynamics(robot, model, *random_state(robot, 2, (2,)))
    assert_rel(model.dof_armature[adr], robot.Ia[robot.joint_frames], 1e-15)
    assert_rel(model.dof_damping[adr], robot.Fv[robot.joint_frames], 1e-15)


def test_mujoco_xml_has_ranges_and_frictionloss():
    robot = rd.load("panda")
    robot = robot.replace(Fc=np.linspace(0.1, 0.6, robot.nf) * (robot.sigma != 2))
    xml = rd.to_mujoco_xml(robot)
    assert xml.count('type="hinge"') == 7 and 'frictionloss="' + repr(float(robot.Fc[0])) + '"' in xml
    mujoco = pytest.importorskip("mujoco")
    model = mujoco.MjModel.from_xml_string(xml)
    np.testing.assert_array_equal(model.jnt_range, robot.qlim)
    np.testing.assert_array_equal(model.dof_frictionloss, robot.Fc[:7])
    with pytest.raises(rd.ModelError, match=r"link 1 \(j1\): MuJoCo needs a positive mass"):
        rd.to_mujoco_xml(rd.load("puma560"))  # link 1: massless rotor inertia ZZ1 = 0.35 as published


def test_mujoco_accepts_inertias_on_the_triangle_boundary():
    """Stanford arm link 4 has principal moments 0.002, 0.001, 0.001 about its centre of mass: I1 + I2 = I3 exactly,
    which rounding in the shift from O_j made 2e-19 short; MuJoCo tests A + B >= C without tolerance."""
    mujoco = pytest.importorskip("mujoco")
    robot = rd.load("stanford").replace(Fc=None)  # MuJoCo's frictionloss is a constraint, not Fc·sign(q̇)
    model = mujoco.MjModel.from_xml_string(rd.to_mujoco_xml(robot))
    I = np.sort(model.body_inertia[4])
    assert I[0] + I[1] >= I[2]
    assert_rel(I, [0.001, 0.001, 0.002], 1e-9)  # raised by at most 1e-9 of the largest moment
    _, qd, qdd = random_state(robot, 3, (2,))
    lo, hi = robot.qlim.T  # inside the ranges: MuJoCo adds limit forces to qfrc_inverse outside them
    q = lo + (hi - lo) * np.array([[0.2], [0.7]])
    assert_mujoco_dynamics(robot, model, q, qd, qdd)
    params = robot.params.copy()
    params[3, 5] += 0.01  # ZZ of link 4 past XX + YY: loadable with strict=False only, and never nudged
    with pytest.warns(UserWarning, match="triangle"):
        bad = robot.replace(params=params, strict=False)
    with pytest.raises(rd.ModelError, match=r"link 4 \(j4\): principal moments .* violate I1 \+ I2 >= I3"):
        rd.to_mujoco_xml(bad)


@given(robots)
@settings(max_examples=10)
def test_robot_to_urdf_and_back_keeps_dynamics(robot):
    robot = robot.replace(Ia=None, gravity=[0, 0, -9.81])
    again = rd.from_urdf(rd.to_urdf(robot))
    # the import numbers frames depth-first: compare joint by joint and frame by frame through the names
    assert sorted(again.frame_names) == sorted(robot.frame_names)
    perm = np.array([robot.q_names.index(n) for n in again.q_names])
    frames = np.array([robot.frame_names.index(n) for n in again.frame_names])
    assert all(robot.frame_names[frames[i]] == again.frame_names[i] for i in range(robot.nf))
    q, qd, qdd = random_state(robot, 3, (3,))
    qa, qda, qdda = q[..., perm], qd[..., perm], qdd[..., perm]
    assert_rel(rd.inverse_dynamics(again, qa, qda, qdda), rd.inverse_dynamics(robot, q, qd, qdd)[..., perm])
    assert_rel(rd.inertia_matrix(again, qa), rd.inertia_matrix(robot, q)[..., perm[:, None], perm])
    # the same joint axes in the base frame (frames may differ by a rotation about, or a shift along, z)
    Ta, Tr = rd.forward_kinematics(again, qa), rd.forward_kinematics(robot, q)
    assert_rel(Ta[..., :3, 2], Tr[:, frames][..., :3, 2])
    third = rd.from_urdf(rd.to_urdf(again))
    for key in ("gamma", "b", "alpha", "d", "theta", "params", "Fv", "Fc"):
        np.testing.assert_allclose(getattr(third, key), getattr(again, key), rtol=1e-12, atol=1e-12, err_msg=key)
    # r_j locates on z_j the common normal of z_j and the next axis: rounding grows as 1/|sin α| of that pair
    # (nearly parallel axes), so its bound is scaled by it
    sin_next = np.ones(again.nf)
    for j in range(again.nf):
        children = np.flatnonzero(np.asarray(again.antecedent) == j + 1)
        if children.size:
            sin_next[j] = max(min(abs(np.sin(again.alpha[children])).min(), 1.0), 1e-6)
    np.testing.assert_array_less(np.abs(third.r - again.r), 1e-12 / sin_next + 1e-12 * np.abs(again.r))


def test_missing_optional_packages_give_install_hints(monkeypatch):
    monkeypatch.setitem(sys.modules, "pinocchio", None)
    with pytest.raises(rd.RobodynError, match=r"pip install 'robodyn\[pinocchio\]'"):
        rd.to_pinocchio(rd.load("planar2r"))
    # a URDF needs no optional package: it loads without yourdfpy, trimesh or lxml
    for name in ("yourdfpy", "trimesh", "lxml"):
        monkeypatch.setitem(sys.modules, name, None)
    assert rd.from_urdf(rd.to_urdf(rd.load("planar2r").replace(gravity=[0, 0, -9.81]))).n == 2
    monkeypatch.setitem(sys.modules, "mujoco", None)
    with pytest.raises(rd.RobodynError, match=r"pip install 'robodyn\[mujoco\]'"):
        rd.from_mjcf("<mujoco/>")
