"""Test-only bridge: a robodyn Robot as a Pinocchio model (the independent cross-check), built by
:func:`robodyn.to_pinocchio`.

Frame j's placement relative to its antecedent is Rz(γ)Tz(b)Rx(α)Tx(d)Rz(θ)Tz(r) with the joint at zero;
the joint (revolute or prismatic about z) follows, since Rz(θ+q)Tz(r) = Rz(θ)Tz(r)Rz(q) and
Tz(r+q) = Tz(r)Tz(q).  Fixed frames (σ = 2) are merged into their moving ancestor's body.
Joints are added to Pinocchio in depth-first order (its CRBA assumes that numbering on trees); ``perm``
maps robodyn's joint order to Pinocchio's velocity indices and every method permutes in and out.
Pinocchio's dynamic parameters [m, mc, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz] are about the frame origin,
i.e. robodyn's standard parameters reordered.  Rotor inertia maps to Pinocchio's armature; friction stays on
robodyn's side (the bridge compares the rigid-body model plus armature).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

import robodyn as rd


class PinRobot:
    """Pinocchio model + data built from a robodyn Robot; ``frame_ids[i]`` is the OP frame of frame i+1."""

    def __init__(self, robot):
        self.robot = robot
        model, mapping = rd.to_pinocchio(robot)
        model.damping = np.zeros(model.nv)
        model.friction = np.zeros(model.nv)
        self.frame_ids = [int(f) for f in mapping.frame_ids]
        self.joint_of = [int(model.frames[f].parentJoint) for f in self.frame_ids]
        self.in_joint = [model.frames[f].placement for f in self.frame_ids]
        self.perm = np.asarray(mapping.v_index, dtype=int)
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

    def _in(self, x):
        """robodyn joint order → Pinocchio order."""
        y = np.empty(self.model.nv)
        y[self.perm] = np.asarray(x, float)
        return y

    def _out(self, y):
        """Pinocchio order → robodyn joint order."""
        return np.asarray(y).reshape(self.model.nv)[self.perm].copy()

    def rnea(self, q, qd, qdd, wrenches=None):
        args = (self.model, self.data, self._in(q), self._in(qd), self._in(qdd))
        if wrenches is None:
            return self._out(pin.rnea(*args))
        return self._out(pin.rnea(*args, self.fext(wrenches)))

    def gravity(self, q):
        return self._out(pin.computeGeneralizedGravity(self.model, self.data, self._in(q)))

    def crba(self, q):
        M = pin.crba(self.model, self.data, self._in(q)).copy().reshape(self.model.nv, self.model.nv)
        M = np.triu(M) + np.triu(M, 1).T
        return M[np.ix_(self.perm, self.perm)]

    def aba(self, q, qd, tau, wrenches=None):
        args = (self.model, self.data, self._in(q), self._in(qd), self._in(tau))
        if wrenches is None:
            return self._out(pin.aba(*args))
        return self._out(pin.aba(*args, self.fext(wrenches)))

    def jacobian(self, q, frame):
        """(6, n) [v; ω] of the origin of seed frame ``frame`` in world-aligned axes."""
        pin.computeJointJacobians(self.model, self.data, self._in(q))
        pin.updateFramePlacements(self.model, self.data)
        J = pin.getFrameJacobian(self.model, self.data, self.frame_ids[frame - 1], pin.LOCAL_WORLD_ALIGNED)
        return J.copy().reshape(6, self.model.nv)[:, self.perm]

    def placement(self, q, frame):
        pin.forwardKinematics(self.model, self.data, self._in(q))
        pin.updateFramePlacements(self.model, self.data)
        return self.data.oMf[self.frame_ids[frame - 1]].homogeneous.copy()
