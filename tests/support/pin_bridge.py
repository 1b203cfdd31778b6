"""Test-only bridge: a robodyn Robot as a Pinocchio model (the independent cross-check).

Frame j's placement relative to its antecedent is Rz(γ)Tz(b)Rx(α)Tx(d)Rz(θ)Tz(r) with the joint at zero;
the joint (revolute or prismatic about z) follows, since Rz(θ+q)Tz(r) = Rz(θ)Tz(r)Rz(q) and
Tz(r+q) = Tz(r)Tz(q).  Fixed frames (σ = 2) are merged into their moving ancestor's body.
Pinocchio's dynamic parameters [m, mc, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz] are about the frame origin,
i.e. robodyn's standard parameters reordered.  Rotor inertia maps to Pinocchio's armature.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from robodyn.spatial import rot_x, rot_z


def _placement(robot, i) -> pin.SE3:
    T = np.eye(4)
    for M in (
        _h(rot_z(robot.gamma[i]), [0, 0, 0]),
        _h(np.eye(3), [0, 0, robot.b[i]]),
        _h(rot_x(robot.alpha[i]), [0, 0, 0]),
        _h(np.eye(3), [robot.d[i], 0, 0]),
        _h(rot_z(robot.theta[i]), [0, 0, 0]),
        _h(np.eye(3), [0, 0, robot.r[i]]),
    ):
        T = T @ M
    return pin.SE3(T[:3, :3].copy(), T[:3, 3].copy())


def _h(R, p):
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


class PinRobot:
    """Pinocchio model + data built from a robodyn Robot; ``frame_ids[i]`` is the OP frame of frame i+1."""

    def __init__(self, robot):
        self.robot = robot
        model = pin.Model()
        model.gravity = pin.Motion(np.asarray(robot.gravity, float), np.zeros(3))
        where = {0: (0, pin.SE3.Identity())}  # seed frame number -> (pin joint id, placement in that joint)
        self.joint_of = []
        self.in_joint = []
        for i in range(robot.nf):
            pj, pplace = where[int(robot.antecedent[i])]
            place = pplace * _placement(robot, i)
            if robot.sigma[i] == 2:
                jid, local = pj, place
            else:
                jm = pin.JointModelRZ() if robot.sigma[i] == 0 else pin.JointModelPZ()
                jid = model.addJoint(pj, jm, place, robot.joint_names[i])
                local = pin.SE3.Identity()
            p = robot.params[i]
            dyn = np.array([p[9], p[6], p[7], p[8], p[0], p[1], p[3], p[2], p[4], p[5]])
            # FromDynamicParameters divides by the mass: a massless body (PUMA 560 link 1) gets its
            # rotational inertia directly.
            inertia = pin.Inertia.FromDynamicParameters(dyn) if p[9] > 0 else pin.Inertia(0.0, np.zeros(3), robot.J[i])
            if jid > 0:
                model.appendBodyToJoint(jid, inertia, local)
            where[i + 1] = (jid, local)
            self.joint_of.append(jid)
            self.in_joint.append(local)
        self.frame_ids = []
        for i in range(robot.nf):
            jid, local = self.joint_of[i], self.in_joint[i]
            fid = model.addFrame(pin.Frame(f"F{i + 1}", jid, local, pin.FrameType.OP_FRAME))
            self.frame_ids.append(fid)
        model.armature = np.asarray(robot.Ia[robot.joint_frames], float).copy()
        self.model = model
        self.data = model.createData()

    def fext(self, wrenches):
        """robodyn wrenches (nf, 6) exerted BY links → Pinocchio forces ON joints, in joint frames."""
        fext = [pin.Force.Zero() for _ in range(self.model.njoints)]
        for i in range(self.robot.nf):
            jid = self.joint_of[i]
            if jid == 0:
                continue
            f = pin.Force(-np.asarray(wrenches[i, :3], float), -np.asarray(wrenches[i, 3:], float))
            fext[jid] = fext[jid] + self.in_joint[i].act(f)
        return fext

    def rnea(self, q, qd, qdd, wrenches=None):
        if wrenches is None:
            return pin.rnea(self.model, self.data, q, qd, qdd).copy()
        return pin.rnea(self.model, self.data, q, qd, qdd, self.fext(wrenches)).copy()

    def gravity(self, q):
        return pin.computeGeneralizedGravity(self.model, self.data, q).copy()

    def crba(self, q):
        M = pin.crba(self.model, self.data, q).copy().reshape(self.model.nv, self.model.nv)
        return np.triu(M) + np.triu(M, 1).T

    def aba(self, q, qd, tau):
        return pin.aba(self.model, self.data, q, qd, tau).copy()

    def jacobian(self, q, frame):
        """(6, n) [v; ω] of the origin of seed frame ``frame`` in world-aligned axes."""
        pin.computeJointJacobians(self.model, self.data, q)
        pin.updateFramePlacements(self.model, self.data)
        return pin.getFrameJacobian(self.model, self.data, self.frame_ids[frame - 1], pin.LOCAL_WORLD_ALIGNED).copy().reshape(6, self.model.nv)

    def placement(self, q, frame):
        pin.forwardKinematics(self.model, self.data, q)
        pin.updateFramePlacements(self.model, self.data)
        return self.data.oMf[self.frame_ids[frame - 1]].homogeneous.copy()
