"""Analytic kinematic derivatives (rd.dynamics.kinematic_hessian, frame_velocity_derivatives,
frame_acceleration_derivatives): against central differences of rd.jacobian / rd.jacobian_dot_qd, against the
identities J̇ = Σ ∂J/∂q_m q̇_m and ∂v/∂q̇ = ∂a/∂q̈ = J, and against Pinocchio."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from robodyn.errors import InputError
from tests.support.random_robots import random_robot

EPS = np.finfo(float).eps
#: central-difference step: truncation h²/6 |f'''| and round-off eps |f| / h balance near eps^(1/3)
H = EPS ** (1 / 3)


def _bound(values: np.ndarray) -> float:
    """The central difference's error bound, (h²/6 + 2 eps/h) times the size of the differenced function and of its
    third derivative (lever arms of a few metres: a factor 10 covers their products)."""
    return 10 * (H ** 2 / 6 + 2 * EPS / H) * max(1.0, float(np.abs(values).max()))


def _central(f, x: np.ndarray):
    """[..., m] = ∂f/∂x_m by central differences, and the values seen (for :func:`_bound`)."""
    plus = [f(x + H * e) for e in np.eye(x.size)]
    minus = [f(x - H * e) for e in np.eye(x.size)]
    return np.stack([(a - b) / (2 * H) for a, b in zip(plus, minus)], -1), np.array(plus + minus)


def _turned(R, x):
    """[^jA_0 x_lin; ^jA_0 x_ang] of a (6, ...) array of [linear; angular] rows."""
    return np.concatenate([np.tensordot(R.T, x[:3], 1), np.tensordot(R.T, x[3:], 1)])


def _robot(seed, tree):
    """A random robot and a frame whose path from the base has a revolute and (often) a prismatic joint."""
    for s in range(seed, seed + 100):
        robot = random_robot(s, nf=6, tree=tree, fixed=True)
        for j in range(robot.nf, 0, -1):
            path = rd.kinematics.ancestors(robot, j - 1)
            if sum(robot.sigma[f] == 0 for f in path) >= 2:
                return robot, j
    raise AssertionError("no random robot with two revolute joints on a path")


class _Numeric:
    """The frame's Jacobian, velocity and accelerations from rd.jacobian / rd.jacobian_dot_qd, in the given axes."""

    def __init__(self, robot, frame, point, axes):
        self.robot, self.frame, self.point, self.axes = robot, frame, point, axes

    def _axes(self, q, x):
        if self.axes == "base":
            return x
        return _turned(rd.forward_kinematics(self.robot, q)[self.frame - 1, :3, :3], x)

    def J(self, q):
        return self._axes(q, rd.jacobian(self.robot, q, frame=self.frame, point=self.point))

    def acceleration(self, q, qd, qdd, kind):
        J = rd.jacobian(self.robot, q, frame=self.frame, point=self.point)
        a = J @ qdd + rd.jacobian_dot_qd(self.robot, q, qd, frame=self.frame, point=self.point)
        if kind == "spatial":
            v = J @ qd
            a = a - np.concatenate([np.cross(v[3:], v[:3]), np.zeros(3)])
        return self._axes(q, a)


@pytest.mark.parametrize("axes", ["base", "local"])
@pytest.mark.parametrize("seed,tree", [(0, False), (2, False), (1, True), (5, True)])
def test_against_central_differences(seed, tree, axes):
    robot, frame = _robot(seed, tree)
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-2, 2, (3, robot.n))
    point = rng.uniform(-0.3, 0.3, 3)
    num = _Numeric(robot, frame, point, axes)
    hess = rd.dynamics.kinematic_hessian(robot, q, frame=frame, point=point, axes=axes)
    fd, seen = _central(num.J, q)
    np.testing.assert_allclose(hess, fd, rtol=0, atol=_bound(seen))
    assert axes == "local" or np.abs(hess).max() > 0.1   # (parallel axes can make the local one constant)
    vel = rd.dynamics.frame_velocity_derivatives(robot, q, qd, frame=frame, point=point, axes=axes)
    fd, seen = _central(lambda x: num.J(x) @ qd, q)
    np.testing.assert_allclose(vel.dv_dq, fd, rtol=0, atol=_bound(seen))
    np.testing.assert_allclose(vel.dv_dqd, num.J(q), rtol=0, atol=1e-14)
    for kind in ("classical", "spatial"):
        acc = rd.dynamics.frame_acceleration_derivatives(robot, q, qd, qdd, frame=frame, point=point, axes=axes,
                                                         kind=kind)
        np.testing.assert_allclose(acc.dv_dq, vel.dv_dq, rtol=0, atol=1e-14)
        for x, (da, name) in enumerate(((acc.da_dq, "q"), (acc.da_dqd, "qd"), (acc.da_dqdd, "qdd"))):
            args = [q, qd, qdd]

            def f(y, x=x, args=args):
                return num.acceleration(*(y if i == x else a for i, a in enumerate(args)), kind)

            fd, seen = _central(f, args[x])
            np.testing.assert_allclose(da, fd, rtol=0, atol=_bound(seen), err_msg=f"{kind} d/d{name}")


def test_identities_batch_and_float32():
    robot = rd.load("puma560")
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.uniform(-2, 2, (3, 2, 4, robot.n))
    point = [0.0, 0.0, 0.1]
    hess = rd.dynamics.kinematic_hessian(robot, q, point=point)
    assert hess.shape == (2, 4, 6, robot.n, robot.n)
    Jd = rd.dynamics.jacobian_derivative(robot, q, qd, point=point)
    np.testing.assert_allclose(np.einsum("...rkm,...m->...rk", hess, qd), Jd, rtol=0, atol=1e-13)
    vel = rd.dynamics.frame_velocity_derivatives(robot, q, qd, point=point)
    np.testing.assert_allclose(vel.dv_dq, np.einsum("...rkm,...k->...rm", hess, qd), rtol=0, atol=1e-13)
    acc = rd.dynamics.frame_acceleration_derivatives(robot, q, qd, qdd, point=point)
    J = rd.jacobian(robot, q, point=point)
    np.testing.assert_array_equal(vel.dv_dqd, acc.da_dqdd)
    np.testing.assert_allclose(acc.da_dqdd, J, rtol=0, atol=1e-15)
    # a batch is its samples, one at a time
    for f, args in ((rd.dynamics.kinematic_hessian, (q,)), (rd.dynamics.frame_velocity_derivatives, (q, qd)),
                    (rd.dynamics.frame_acceleration_derivatives, (q, qd, qdd))):
        whole = f(robot, *args, point=point, axes="local")
        one = f(robot, *(a[1, 2] for a in args), point=point, axes="local")
        for w, o in zip(*((whole, one) if isinstance(one, tuple) else ((whole,), (one,)))):
            np.testing.assert_allclose(w[1, 2], o, rtol=0, atol=1e-15 * max(1.0, np.abs(o).max()))
    low = rd.dynamics.frame_acceleration_derivatives(robot, q.astype(np.float32), qd.astype(np.float32),
                                                     qdd.astype(np.float32), point=point)
    assert all(x.dtype == np.float32 for x in low)
    assert rd.dynamics.kinematic_hessian(robot, q.astype(np.float32)).dtype == np.float32


def test_bad_arguments():
    robot = rd.load("planar2r")
    q = np.zeros(robot.n)
    with pytest.raises(InputError, match="axes"):
        rd.dynamics.kinematic_hessian(robot, q, axes="world")
    with pytest.raises(InputError, match="kind"):
        rd.dynamics.frame_acceleration_derivatives(robot, q, q, q, kind="body")
    with pytest.raises(InputError, match="frame"):
        rd.dynamics.frame_velocity_derivatives(robot, q, q, frame=robot.nf + 1)
    with pytest.raises(InputError, match="point"):
        rd.dynamics.frame_velocity_derivatives(robot, q, q, point=[1.0, 2.0])
    with pytest.raises(InputError):
        rd.dynamics.kinematic_hessian(robot, np.zeros(robot.n + 1))


def _pinocchio(robot, q, qd, qdd, frame):
    """Pinocchio's kinematic Hessians and frame velocity / acceleration derivatives, in robodyn's joint order."""
    pin = pytest.importorskip("pinocchio")
    bridge = pytest.importorskip("tests.support.pin_bridge")
    pr = bridge.PinRobot(robot)
    m, d, perm, n = pr.model, pr.data, pr.perm, robot.n
    fid = pr.frame_ids[frame - 1]
    assert m.frames[fid].placement.isIdentity()   # the joint frame is the robodyn frame: its Hessian is the frame's
    out = {}
    if hasattr(pin, "computeJointKinematicHessians"):  # not bound in every supported Pinocchio (3.3.1 lacks it)
        pin.computeJointKinematicHessians(m, d, pr._in(q))
        for ref, axes in ((pin.LOCAL_WORLD_ALIGNED, "base"), (pin.LOCAL, "local")):
            # the binding hands Eigen's column-major (6, nv, nv) tensor over with C strides
            Hp = np.asarray(pin.getJointKinematicHessian(m, d, m.frames[fid].parentJoint, ref))
            out["hessian", axes] = Hp.ravel().reshape((6, n, n), order="F")[:, perm][:, :, perm]
    pin.computeForwardKinematicsDerivatives(m, d, pr._in(q), pr._in(qd), pr._in(qdd))
    pin.updateFramePlacements(m, d)
    for ref, axes in ((pin.LOCAL_WORLD_ALIGNED, "base"), (pin.LOCAL, "local")):
        out["velocity", axes] = [x[:, perm] for x in pin.getFrameVelocityDerivatives(m, d, fid, ref)]
        out["acceleration", axes] = [x[:, perm] for x in pin.getFrameAccelerationDerivatives(m, d, fid, ref)]
    return out


@pytest.mark.parametrize("seed", [3, 8])
def test_against_pinocchio(seed):
    robot = random_robot(seed, nf=7, fixed=False)
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-2, 2, (3, robot.n))
    frame = robot.nf
    pin = _pinocchio(robot, q, qd, qdd, frame)
    tol = 1e-13
    for axes in ("base", "local"):
        if ("hessian", axes) in pin:
            hess = rd.dynamics.kinematic_hessian(robot, q, frame=frame, axes=axes)
            np.testing.assert_allclose(hess, pin["hessian", axes], rtol=0, atol=tol)
        vel = rd.dynamics.frame_velocity_derivatives(robot, q, qd, frame=frame, axes=axes)
        acc = rd.dynamics.frame_acceleration_derivatives(robot, q, qd, qdd, frame=frame, axes=axes, kind="spatial")
        ours = [vel.dv_dq, vel.dv_dqd], list(acc)
        if axes == "base":
            # Pinocchio's LOCAL_WORLD_ALIGNED q-derivatives hold the point p fixed in space; robodyn's are those of
            # the coordinates, whose point moves with ∂p/∂q_m = J_v,m: [ω × J_v; 0] and [ω̇ × J_v; 0] apart
            Jv = rd.jacobian(robot, q, frame=frame)[:3]
            w = vel.dv_dqd @ qd
            wd = acc.da_dqdd @ qdd + rd.jacobian_dot_qd(robot, q, qd, frame=frame)
            wd = wd - np.concatenate([np.cross(w[3:], w[:3]), np.zeros(3)])     # the spatial acceleration
            moved = [np.concatenate([np.cross(x[3:], Jv.T).T, np.zeros_like(Jv)]) for x in (w, wd)]
            ours = ([ours[0][0] - moved[0], ours[0][1]],
                    [ours[1][0] - moved[0], ours[1][1] - moved[1], ours[1][2], ours[1][3]])
        for mine, theirs in zip(ours, (pin["velocity", axes], pin["acceleration", axes])):
            for a, b in zip(mine, theirs):
                np.testing.assert_allclose(a, b, rtol=0, atol=tol * max(1.0, np.abs(b).max()))
