"""Kinematics against Pinocchio: transforms, Jacobians, link velocities/accelerations, J̇q̇; batching; bad input."""

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given

import robodyn as rd
from tests.support.pin_bridge import PinRobot
from tests.support.random_robots import random_robot, random_state, robots
from tests.test_newton_euler import close


def pin_motion(pr, q, qd, qdd):
    """Pinocchio's forward kinematics (its joint order is pr.perm of robodyn's)."""
    pin.forwardKinematics(pr.model, pr.data, pr._in(q), pr._in(qd), pr._in(qdd))
    pin.updateFramePlacements(pr.model, pr.data)


@given(robots)
def test_forward_kinematics_matches_pinocchio(robot):
    pr = PinRobot(robot)
    q, _, _ = random_state(robot, int(robot.name[6:]))
    T = rd.forward_kinematics(robot, q)
    assert T.shape == (robot.nf, 4, 4)
    for j in range(1, robot.nf + 1):
        close(T[j - 1], pr.placement(q, j))


@given(robots)
def test_jacobian_of_every_frame_matches_pinocchio(robot):
    pr = PinRobot(robot)
    q, _, _ = random_state(robot, int(robot.name[6:]))
    for j in range(1, robot.nf + 1):
        close(rd.jacobian(robot, q, frame=j), pr.jacobian(q, j))
    close(rd.jacobian(robot, q, frame=robot.joint_names[0]), pr.jacobian(q, 1))
    close(rd.jacobian(robot, q), pr.jacobian(q, robot.derived.end_frame))


@given(robots)
def test_jacobian_of_a_point_matches_a_pinocchio_frame_at_that_point(robot):
    pr = PinRobot(robot)
    seed = int(robot.name[6:])
    q, _, _ = random_state(robot, seed)
    s = np.random.default_rng(seed).uniform(-0.5, 0.5, 3)
    j = robot.nf
    fid = pr.model.addFrame(
        pin.Frame("point", pr.joint_of[j - 1], pr.in_joint[j - 1] * pin.SE3(np.eye(3), s), pin.FrameType.OP_FRAME)
    )
    data = pr.model.createData()
    pin.computeJointJacobians(pr.model, data, pr._in(q))
    pin.updateFramePlacements(pr.model, data)
    ref = pin.getFrameJacobian(pr.model, data, fid, pin.LOCAL_WORLD_ALIGNED).reshape(6, robot.n)[:, pr.perm]
    close(rd.jacobian(robot, q, frame=j, point=s), ref)


@given(robots)
def test_link_velocities_and_accelerations_match_pinocchio(robot):
    pr = PinRobot(robot)
    q, qd, qdd = random_state(robot, int(robot.name[6:]))
    w, V = rd.link_velocities(robot, q, qd)
    wd, Vd = rd.link_accelerations(robot, q, qd, qdd)
    assert w.shape == V.shape == wd.shape == Vd.shape == (robot.nf, 3)
    pin_motion(pr, q, qd, qdd)
    for i, fid in enumerate(pr.frame_ids):
        v = pin.getFrameVelocity(pr.model, pr.data, fid, pin.LOCAL)
        a = pin.getFrameClassicalAcceleration(pr.model, pr.data, fid, pin.LOCAL)
        close(w[i], v.angular)
        close(V[i], v.linear)
        close(wd[i], a.angular)
        close(Vd[i], a.linear)


@given(robots)
def test_jacobian_dot_qd_matches_pinocchio(robot):
    pr = PinRobot(robot)
    seed = int(robot.name[6:])
    q, qd, _ = random_state(robot, seed)
    s = np.random.default_rng(seed).uniform(-0.5, 0.5, 3)
    pin_motion(pr, q, qd, np.zeros(robot.n))
    for j in range(1, robot.nf + 1):
        a = pin.getFrameClassicalAcceleration(pr.model, pr.data, pr.frame_ids[j - 1], pin.LOCAL_WORLD_ALIGNED)
        close(rd.jacobian_dot_qd(robot, q, qd, frame=j), np.concatenate([a.linear, a.angular]))
    j = robot.nf
    fid = pr.model.addFrame(
        pin.Frame("point", pr.joint_of[j - 1], pr.in_joint[j - 1] * pin.SE3(np.eye(3), s), pin.FrameType.OP_FRAME)
    )
    data = pr.model.createData()
    pin.forwardKinematics(pr.model, data, pr._in(q), pr._in(qd), np.zeros(robot.n))
    pin.updateFramePlacements(pr.model, data)
    a = pin.getFrameClassicalAcceleration(pr.model, data, fid, pin.LOCAL_WORLD_ALIGNED)
    close(rd.jacobian_dot_qd(robot, q, qd, frame=j, point=s), np.concatenate([a.linear, a.angular]))


def test_jacobian_maps_qd_to_link_velocity():
    """[v; ω] = J q̇ agrees with link_velocities rotated to the base (two different code paths)."""
    robot = random_robot(31, nf=6, tree=True, fixed=True)
    q, qd, _ = random_state(robot, 31, (4,))
    T = rd.forward_kinematics(robot, q)
    w, V = rd.link_velocities(robot, q, qd)
    for j in range(1, robot.nf + 1):
        vw = np.einsum("...ij,...j->...i", rd.jacobian(robot, q, frame=j), qd)
        R = T[:, j - 1, :3, :3]
        close(vw[:, :3], np.einsum("bij,bj->bi", R, V[:, j - 1]))
        close(vw[:, 3:], np.einsum("bij,bj->bi", R, w[:, j - 1]))


def test_seed_velocities_of_example_9_1():
    """³ω₃ = [S23 q̇1, C23 q̇1, q̇2 + q̇3] and ³V₃ = [S3 D3 q̇2, C3 D3 q̇2, −C2 D3 q̇1] (Example 9.1 i–ii).

    The seed prints q̇1 + q̇2 for the third component of ³ω₃; [9.17] gives ²ω₂,z + q̇3 = q̇2 + q̇3 (a typo in the text).
    """
    D3 = 0.45
    robot = rd.Robot(name="rx90-3", sigma=[0, 0, 0], alpha=[0, np.pi / 2, 0], d=[0, 0, D3])
    q, qd = np.array([0.3, -0.8, 1.1]), np.array([0.7, -1.3, 0.4])
    w, V = rd.link_velocities(robot, q, qd)
    S2, C2, S3, C3 = np.sin(q[1]), np.cos(q[1]), np.sin(q[2]), np.cos(q[2])
    S23, C23 = np.sin(q[1] + q[2]), np.cos(q[1] + q[2])
    close(w[1], [S2 * qd[0], C2 * qd[0], qd[1]])
    close(w[2], [S23 * qd[0], C23 * qd[0], qd[1] + qd[2]])
    close(V[2], [S3 * D3 * qd[1], C3 * D3 * qd[1], -C2 * D3 * qd[0]])


@pytest.mark.parametrize("shape", [(3,), (2, 4)])
def test_kinematics_batch_equals_per_sample_loop(shape):
    robot = random_robot(41, nf=5, tree=True, fixed=True)
    q, qd, qdd = random_state(robot, 41, shape)
    s = np.array([0.1, -0.2, 0.3])
    out = {
        "T": rd.forward_kinematics(robot, q),
        "J": rd.jacobian(robot, q, frame=3, point=s),
        "Jdqd": rd.jacobian_dot_qd(robot, q, qd, frame=4, point=s),
        "v": np.stack(rd.link_velocities(robot, q, qd)),
        "a": np.stack(rd.link_accelerations(robot, q, qd, qdd)),
    }
    assert out["T"].shape == shape + (robot.nf, 4, 4)
    assert out["J"].shape == shape + (6, robot.n)
    assert out["Jdqd"].shape == shape + (6,)
    for idx in np.ndindex(shape):
        one = {
            "T": rd.forward_kinematics(robot, q[idx]),
            "J": rd.jacobian(robot, q[idx], frame=3, point=s),
            "Jdqd": rd.jacobian_dot_qd(robot, q[idx], qd[idx], frame=4, point=s),
            "v": np.stack(rd.link_velocities(robot, q[idx], qd[idx])),
            "a": np.stack(rd.link_accelerations(robot, q[idx], qd[idx], qdd[idx])),
        }
        for key, value in one.items():
            got = out[key][(slice(None),) + idx] if key in "va" else out[key][idx]
            np.testing.assert_allclose(got, value, rtol=0, atol=1e-13 * max(1, np.abs(value).max()), err_msg=key)


def test_kinematics_float32_in_float32_out():
    robot = random_robot(42, nf=4)
    q, qd, qdd = (x.astype(np.float32) for x in random_state(robot, 42, (3,)))
    assert rd.forward_kinematics(robot, q).dtype == np.float32
    assert rd.jacobian(robot, q).dtype == np.float32
    assert rd.jacobian_dot_qd(robot, q, qd).dtype == np.float32
    assert all(x.dtype == np.float32 for x in rd.link_velocities(robot, q, qd))
    assert all(x.dtype == np.float32 for x in rd.link_accelerations(robot, q, qd, qdd))
    T64 = rd.forward_kinematics(robot, q.astype(np.float64))
    np.testing.assert_allclose(rd.forward_kinematics(robot, q), T64, rtol=0, atol=1e-5 * np.abs(T64).max())
    assert rd.forward_kinematics(robot, np.zeros(robot.n, int)).dtype == np.float64


def test_kinematics_bad_input():
    robot = random_robot(43, nf=3)
    z = np.zeros(3)
    with pytest.raises(rd.InputError, match=r"frame = 0; give a frame number 1\.\.3 or a frame name"):
        rd.jacobian(robot, z, frame=0)
    with pytest.raises(rd.InputError, match=r"frame = 4; give a frame number 1\.\.3"):
        rd.jacobian_dot_qd(robot, z, z, frame=4)
    with pytest.raises(rd.InputError, match=r"frame 'tool' is not a frame of robot 'random43'; frame and link names: j1, j2, j3$"):
        rd.jacobian(robot, z, frame="tool")
    with pytest.raises(rd.InputError, match=r"argument 'point' has shape \(2,\); expected \(\.\.\., 3\)"):
        rd.jacobian(robot, z, point=[0, 1])
    with pytest.raises(rd.InputError, match=r"argument 'q' has shape \(2,\)"):
        rd.forward_kinematics(robot, [0, 0])
    with pytest.raises(rd.InputError, match=r"argument 'qd' contains NaN or inf"):
        rd.link_velocities(robot, z, [0, np.nan, 0])
