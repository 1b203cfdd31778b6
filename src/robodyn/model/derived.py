"""Everything the algorithms derive from a robot, computed once when the :class:`~robodyn.model.robot.Robot` is built.

Stored as ``robot.derived``; every array here and on the robot is a view of an immutable ``bytes`` buffer
(:func:`frozen`), so no algorithm or user can change a robot after it is built.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn.model.inertia import tensor_from_six
from robodyn.spatial import rot_x, rot_z, snap


def frozen(a) -> np.ndarray:
    """A copy of ``a`` as a view of an immutable ``bytes`` buffer: read-only, and ``setflags(write=True)`` fails."""
    a = np.ascontiguousarray(a)
    return np.frombuffer(a.tobytes(), dtype=a.dtype).reshape(a.shape)


@dataclass(frozen=True, eq=False)
class RobotData:
    """Per-robot constants shared by every algorithm (frames 0-based: index i holds frame j = i + 1).

    Attributes
    ----------
    parent : tuple of int (nf,)
        0-based index a(j) − 1 of the antecedent of each frame; −1 for the base.
    joint_frames : int array (n,)
        0-based indices of the frames with a joint (σ ≠ 2), in the order of q.
    joint_of : tuple of int (nf,)
        Column of q moving each frame; −1 for a fixed frame (σ = 2).
    children : tuple of tuples of int (nf,)
        0-based child frames of each frame.
    subtree : float array (nf, nf)
        1.0 where frame k is frame j or one of its descendants (row j, column k), else 0.0.
    J : float array (nf, 3, 3)
        Inertia tensors ^jJ_j about O_j (Khalil & Dombre [9.11]).
    Ia : float array (n,)
        Rotor inertias of the joint variables, in the order of q.
    frames : tuple over frames of (C, p0, z)
        C = Rot(z, γ_j) Rot(x, α_j) as snapped float rows, p0 = Rot(z, γ_j)[d_j, 0, b_j] and z = C[:, 2], the
        direction along which r_j displaces O_j (Khalil & Dombre ch. 3).
    theta_trig : tuple over frames of (cos θ_j, sin θ_j)
        The constant joint offsets' cosines and sines as snapped floats: exactly 0 and ±1 for θ_j = k π/2.
    transforms : tuple over frames of (C, p0, A) float64 arrays
        C, p0 as above and A = C Rot(z, θ_j), the whole ^{a(j)}A_j of a prismatic or fixed frame.
    links : tuple over frames of (J, MS, M)
        J as three row tuples, MS as a tuple, M as a float.
    links_six : tuple over frames of (J6, MS, M)
        J6 = (XX, XY, XZ, YY, YZ, ZZ) as a tuple.
    end_frame : int
        Frame number j (1..nf) of the tip of the longest movable chain (:func:`end_frame`).

    What is computed lazily (kernels, compiled entries, memos) lives in :mod:`robodyn.model.workspace`.
    """

    parent: tuple[int, ...]
    joint_frames: np.ndarray
    joint_of: tuple[int, ...]
    children: tuple[tuple[int, ...], ...]
    subtree: np.ndarray
    J: np.ndarray
    Ia: np.ndarray
    frames: tuple
    theta_trig: tuple
    transforms: tuple
    links: tuple
    links_six: tuple
    end_frame: int

    def transforms_as(self, dtype) -> tuple:
        """:attr:`transforms` in ``dtype`` (float64 without a copy)."""
        if np.dtype(dtype) == np.float64:
            return self.transforms
        return tuple(tuple(a.astype(dtype) for a in t) for t in self.transforms)


def derive(robot) -> RobotData:
    """The :class:`RobotData` of a validated robot."""
    nf = robot.sigma.size
    parent = tuple(int(a) - 1 for a in robot.antecedent)
    joint_frames = np.flatnonzero(robot.sigma != 2)
    joint_of = [-1] * nf
    for k, i in enumerate(joint_frames):
        joint_of[int(i)] = k
    frames, transforms = [], []
    for i in range(nf):
        Rg = rot_z(robot.gamma[i])
        C = Rg @ rot_x(robot.alpha[i])
        p0 = Rg @ np.array([robot.d[i], 0.0, robot.b[i]])
        Cs = snap(C)
        frames.append((Cs, tuple(float(x) for x in p0), (Cs[0][2], Cs[1][2], Cs[2][2])))
        transforms.append((frozen(C), frozen(p0), frozen(C @ rot_z(robot.theta[i]))))
    J = tensor_from_six(robot.params[:, :6])
    links = tuple((tuple(tuple(float(x) for x in row) for row in Jl), tuple(float(x) for x in p[6:9]), float(p[9]))
                  for Jl, p in zip(J, robot.params))
    links_six = tuple((tuple(map(float, p[:6])), tuple(map(float, p[6:9])), float(p[9])) for p in robot.params)
    subtree = np.eye(nf)
    for i in range(nf - 1, -1, -1):  # descendants have higher numbers
        if parent[i] >= 0:
            subtree[parent[i]] += subtree[i]
    return RobotData(parent=parent, joint_frames=frozen(joint_frames), joint_of=tuple(joint_of),
                     children=tuple(tuple(k for k in range(nf) if parent[k] == i) for i in range(nf)),
                     subtree=frozen(subtree), J=frozen(J),
                     Ia=frozen(robot.Ia[joint_frames]), frames=tuple(frames),
                     theta_trig=snap([[np.cos(t), np.sin(t)] for t in robot.theta]) if nf else (),
                     transforms=tuple(transforms), links=links, links_six=links_six,
                     end_frame=_end_frame(parent, robot.sigma))


def end_frame(robot) -> int:
    """Frame number j (1..nf) of the robot's end frame: the tip of its longest movable chain.

    Among the paths from the base, the one through the most joints (σ ≠ 2) wins, then the one through the most
    frames (a fixed tool frame after the last joint counts), then the higher frame number: frame nf for a serial
    robot, the tip of the main arm (not a sensor or CAD frame beside it) for a tree.
    """
    return robot.derived.end_frame


def _end_frame(parent, sigma) -> int:
    depth = []  # (joints, frames) on the path from the base to each frame; antecedents come first
    for i in range(len(parent)):
        joints, frames = depth[parent[i]] if parent[i] >= 0 else (0, 0)
        depth.append((joints + (sigma[i] != 2), frames + 1))
    return max(range(len(depth)), key=lambda i: (depth[i], i)) + 1
