"""Renumber a robot's frames in depth-first order, for comparisons with Pinocchio.

Pinocchio's crba (4.1) assumes that the velocity indices of every subtree are contiguous (depth-first joint
order); a tree numbered breadth-first (any a(j) < j is a valid robodyn numbering) gives a wrong mass matrix
there, while its rnea/aba are unaffected.  ``depth_first(robot)`` returns the same robot renumbered in
depth-first order and the permutation ``perm`` of joint variables: q_new = q[..., perm].
"""

from __future__ import annotations

import numpy as np

_PER_FRAME = ("sigma", "gamma", "b", "alpha", "d", "theta", "r", "params", "Ia", "Fc", "Fv", "Foff", "Fst", "kst", "Bst")


def depth_first(robot):
    order = []

    def visit(i):
        order.append(i)
        for c in robot.children[i]:
            visit(c)

    for i in range(robot.nf):
        if robot.antecedent[i] == 0:
            visit(i)
    new_of_old = {old: new for new, old in enumerate(order)}
    ant = np.array([0 if robot.antecedent[o] == 0 else new_of_old[robot.antecedent[o] - 1] + 1 for o in order])
    fields = {k: np.asarray(getattr(robot, k))[order] for k in _PER_FRAME}
    joint_of_frame = {int(f): k for k, f in enumerate(robot.joint_frames)}
    perm = np.array([joint_of_frame[o] for o in order if robot.sigma[o] != 2], dtype=int)
    new = robot.replace(
        antecedent=ant, joint_names=tuple(robot.joint_names[o] for o in order), qlim=robot.qlim[perm], **fields
    )
    return new, perm
