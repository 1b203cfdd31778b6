"""Hand a robot to Pinocchio or MuJoCo: the same frames, masses, rotor inertias and friction.

Each moving frame becomes one body placed by the constant ^{a(j)}T_j at q = 0 with a joint about (along) z_j, as
Rot(z, θ + q) Trans(z, r) = Rot(z, θ) Trans(z, r) Rot(z, q); fixed frames are merged into their moving ancestor's
body (Pinocchio) or welded bodies (MuJoCo).  Ia becomes the armature, Fv the damping, Fc Pinocchio's ``friction``
and MuJoCo's ``frictionloss`` (a dry-friction constraint, equal to Fc·sign(q̇) only while the joint slides).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from robodyn.model.robot import check_robot
from robodyn.errors import ModelError, RobodynError
from robodyn.model.inertia import com_from_standard
from robodyn.model.robot import Robot
from robodyn.model.urdf import kk_transform

__all__ = ("PinocchioMapping", "PinocchioModel", "to_mujoco_xml", "to_pinocchio")


def _transform(robot: Robot, i: int) -> np.ndarray:
    return kk_transform(*(float(getattr(robot, g)[i]) for g in ("gamma", "b", "alpha", "d", "theta", "r")))


def _depth_first(robot: Robot) -> list[int]:
    """0-based frame indices in depth-first order (Pinocchio requires that joint numbering on trees)."""
    order, stack = [], [i for i in range(robot.nf) if robot.antecedent[i] == 0][::-1]
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend([c for c in range(robot.nf) if robot.antecedent[c] == i + 1][::-1])
    return order


@dataclass(frozen=True)
class PinocchioMapping:
    """Where robodyn's joints and frames are in a Pinocchio model made by :func:`to_pinocchio`.

    Attributes
    ----------
    v_index : int array (n,)
        Pinocchio velocity index of robodyn joint k (q order); q, q̇, q̈ and τ all use it (nq = nv for a fixed
        base).  A floating or mobile base is Pinocchio's joint 1 (``JointModelFreeFlyer``), at q[0:7], v[0:6]:
        joint k is then at q index ``v_index[k] + 1``, and the ``*_floating`` methods convert whole free-flyer
        vectors.
    joint_ids : int array (n,)
        Pinocchio joint id of robodyn joint k.
    frame_ids : int array (nf,)
        Pinocchio frame id (an OP_FRAME named after the robodyn frame) of frame j = 1..nf at index j − 1.
    """

    v_index: np.ndarray
    joint_ids: np.ndarray
    frame_ids: np.ndarray

    def to_pinocchio(self, x) -> np.ndarray:
        """A robodyn joint vector (..., n) in Pinocchio's order (..., nv)."""
        x = np.asarray(x, dtype=float)
        y = np.empty_like(x)
        y[..., self.v_index] = x
        return y

    def from_pinocchio(self, y) -> np.ndarray:
        """A Pinocchio joint vector (..., nv) in robodyn's order (..., n)."""
        return np.asarray(y, dtype=float)[..., self.v_index]

    def matrix_from_pinocchio(self, M) -> np.ndarray:
        """A Pinocchio (nv, nv) matrix (mass matrix, Jacobian columns...) in robodyn's joint order."""
        M = np.asarray(M, dtype=float)
        return M[np.ix_(self.v_index, self.v_index)]

    def _floating_index(self) -> np.ndarray:
        return np.concatenate([np.arange(6), self.v_index])

    def q_to_pinocchio_floating(self, q) -> np.ndarray:
        """A robodyn free-flyer configuration (..., n + 7) in Pinocchio's order (same layout, joints permuted)."""
        q = np.asarray(q, dtype=float)
        y = np.empty_like(q)
        y[..., :7] = q[..., :7]
        y[..., self.v_index + 1] = q[..., 7:]
        return y

    def v_to_pinocchio_floating(self, v) -> np.ndarray:
        """A robodyn free-flyer velocity, acceleration or force (..., n + 6) in Pinocchio's order."""
        v = np.asarray(v, dtype=float)
        y = np.empty_like(v)
        y[..., self._floating_index()] = v
        return y

    def v_from_pinocchio_floating(self, y) -> np.ndarray:
        """A Pinocchio free-flyer vector (..., nv) in robodyn's order (..., n + 6)."""
        return np.asarray(y, dtype=float)[..., self._floating_index()]

    def matrix_from_pinocchio_floating(self, M) -> np.ndarray:
        """A Pinocchio (nv, nv) free-flyer matrix in robodyn's order (..., n + 6, n + 6)."""
        k = self._floating_index()
        return np.asarray(M, dtype=float)[np.ix_(k, k)]


class PinocchioModel(NamedTuple):
    """Result of :func:`to_pinocchio`: the ``pinocchio.Model`` and the :class:`PinocchioMapping`."""

    model: object
    mapping: PinocchioMapping


def to_pinocchio(robot: Robot) -> PinocchioModel:
    """A ``pinocchio.Model`` of ``robot`` and the :class:`PinocchioMapping` between the two.

    Joints are revolute (``JointModelRZ``) or prismatic (``JointModelPZ``) about z of the Khalil–Kleinfinger
    frame; fixed frames are merged into their moving ancestor's body and added as OP_FRAMEs.  Gravity,
    armature (Ia), damping (Fv), friction (Fc) and joint limits (``qlim``) are set.  A floating or mobile base
    is a ``JointModelFreeFlyer`` (joint 1) carrying the base body (``robot.base_params``) and every frame whose
    antecedent is 0; robodyn's free-flyer vectors then have Pinocchio's layout.

    Returns
    -------
    PinocchioModel (model, mapping) — unpacks as a pair.

    Raises
    ------
    RobodynError
        Pinocchio is not installed (``pip install 'robodyn[pinocchio]'``).
    """
    check_robot(robot)
    try:
        import pinocchio as pin
    except ImportError:
        raise RobodynError("to_pinocchio needs Pinocchio; install it with: pip install 'robodyn[pinocchio]'") from None
    model = pin.Model()
    model.name = robot.name
    model.gravity = pin.Motion(np.asarray(robot.gravity, float), np.zeros(3))
    root = 0
    if robot.base != "fixed":
        root = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root_joint")
        model.appendBodyToJoint(root, _pinocchio_inertia(pin, robot.base_params), pin.SE3.Identity())
    where = {0: (root, pin.SE3.Identity())}  # frame number -> (Pinocchio joint id, placement in that joint)
    joint_of, in_joint = [0] * robot.nf, [None] * robot.nf
    for i in _depth_first(robot):
        pj, pplace = where[int(robot.antecedent[i])]
        T = _transform(robot, i)
        place = pplace * pin.SE3(T[:3, :3].copy(), T[:3, 3].copy())
        if robot.sigma[i] == 2:
            jid, local = pj, place
        else:
            jm = pin.JointModelRZ() if robot.sigma[i] == 0 else pin.JointModelPZ()
            jid = model.addJoint(pj, jm, place, robot.frame_names[i])
            local = pin.SE3.Identity()
        if jid > 0:
            model.appendBodyToJoint(jid, _pinocchio_inertia(pin, robot.params[i]), local)
        where[i + 1] = (jid, local)
        joint_of[i], in_joint[i] = jid, local
    frame_ids = [model.addFrame(pin.Frame(robot.frame_names[i], joint_of[i], in_joint[i], pin.FrameType.OP_FRAME))
                 for i in range(robot.nf)]
    joint_ids = np.array([joint_of[f] for f in robot.joint_frames], dtype=int)
    v_index = np.array([model.joints[int(j)].idx_v for j in joint_ids], dtype=int)
    mapping = PinocchioMapping(v_index=v_index, joint_ids=joint_ids, frame_ids=np.array(frame_ids, dtype=int))
    jf = robot.joint_frames
    big = np.finfo(float).max
    lower, upper = np.maximum(robot.qlim[:, 0], -big), np.minimum(robot.qlim[:, 1], big)
    velocity, position = mapping.to_pinocchio, mapping.to_pinocchio
    if robot.base != "fixed":
        def velocity(values):
            return mapping.v_to_pinocchio_floating(np.concatenate([np.zeros(6), values]))

        position = mapping.q_to_pinocchio_floating
        # the base position is unlimited; its quaternion lies in [-1, 1] (Pinocchio's own bounds for a free flyer)
        lower = np.concatenate([np.full(3, -big), -np.ones(4), lower])
        upper = np.concatenate([np.full(3, big), np.ones(4), upper])
    for key, values in (("armature", robot.Ia[jf]), ("damping", robot.Fv[jf]), ("friction", robot.Fc[jf])):
        setattr(model, key, velocity(values))
    model.lowerPositionLimit, model.upperPositionLimit = position(lower), position(upper)
    return PinocchioModel(model, mapping)


def _pinocchio_inertia(pin, p: np.ndarray):
    """A ``pinocchio.Inertia`` from standard parameters (10,); Pinocchio's dynamic parameters are about the
    body frame's origin too, reordered.  FromDynamicParameters divides by the mass: a massless body gets its
    rotational inertia directly."""
    dyn = np.array([p[9], p[6], p[7], p[8], p[0], p[1], p[3], p[2], p[4], p[5]])
    if p[9] > 0:
        return pin.Inertia.FromDynamicParameters(dyn)
    return pin.Inertia(0.0, np.zeros(3), np.array([[p[0], p[1], p[2]], [p[1], p[3], p[4]], [p[2], p[4], p[5]]]))


def _num(x: float) -> str:
    return repr(float(x)) if x != 0 else "0"


def to_mujoco_xml(robot: Robot) -> str:
    """An MJCF model (XML text) of ``robot`` for MuJoCo (no geoms, hence no contacts).

    One body per frame, named after it, nested as the tree and placed by ^{a(j)}T_j at q = 0; a fixed frame's
    mass is merged into its moving ancestor's body (MuJoCo refuses point masses).  A ``hinge`` or ``slide`` joint
    about z carries ``armature`` = Ia, ``damping`` = Fv, ``frictionloss`` = Fc, ``range`` = qlim and
    ``actuatorfrcrange`` = ±taulim where finite (MuJoCo has no velocity limit); the ``inertial`` holds the mass,
    centre of mass and ``fullinertia`` about it, raised by at most 1e-9 of its largest principal moment where it
    lies on the triangle-inequality boundary (MuJoCo tests I1 + I2 >= I3 without tolerance).  MuJoCo's qpos order
    is depth-first: robodyn's q order when frames are numbered depth-first (as :func:`robodyn.from_urdf` numbers
    them).  A floating or mobile base is a body ``base`` with a ``free`` joint ``root_joint`` (qpos [p, quaternion
    w x y z], qvel [linear velocity in the world frame, angular velocity in R_0]) and the base body's inertial.

    Returns
    -------
    str

    Raises
    ------
    ModelError
        A link with mass or inertia but no positive mass and positive-definite inertia about its centre of mass
        (a massless lumped inertia such as PUMA 560 link 1), or a larger violation of the triangle inequality.
    """
    check_robot(robot)
    import xml.etree.ElementTree as ET

    root = ET.Element("mujoco", model=robot.name)
    ET.SubElement(root, "compiler", angle="radian", inertiafromgeom="false", autolimits="true")
    ET.SubElement(root, "option", gravity=" ".join(_num(g) for g in robot.gravity))
    world = ET.SubElement(root, "worldbody")
    body = {0: world}
    k = {int(f): i for i, f in enumerate(robot.joint_frames)}
    params, base_params = _welded_into_moving_bodies(robot)
    if robot.base != "fixed":
        body[0] = ET.SubElement(world, "body", name="base", pos="0 0 0")
        ET.SubElement(body[0], "freejoint", name="root_joint")
        _mujoco_inertial(body[0], base_params, f"robot '{robot.name}', base body (link 0)")
    for i in _depth_first(robot):
        T = _transform(robot, i)
        el = ET.SubElement(body[int(robot.antecedent[i])], "body", name=robot.frame_names[i],
                           pos=" ".join(_num(x) for x in T[:3, 3]), quat=" ".join(_num(x) for x in _quat(T[:3, :3])))
        body[i + 1] = el
        _mujoco_inertial(el, params[i], f"robot '{robot.name}', link {i + 1} ({robot.frame_names[i]})")
        if robot.sigma[i] != 2:
            lo, hi = robot.qlim[k[i]]
            attrs = {"name": robot.frame_names[i], "type": "hinge" if robot.sigma[i] == 0 else "slide", "axis": "0 0 1",
                     "armature": _num(robot.Ia[i]), "damping": _num(robot.Fv[i]), "frictionloss": _num(robot.Fc[i])}
            if np.isfinite(lo) and np.isfinite(hi):
                attrs["range"] = f"{_num(lo)} {_num(hi)}"
            if np.isfinite(robot.taulim[k[i]]):
                attrs["actuatorfrcrange"] = f"{_num(-robot.taulim[k[i]])} {_num(robot.taulim[k[i]])}"
            ET.SubElement(el, "joint", **attrs)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode") + "\n"


def _mujoco_inertial(el, p: np.ndarray, where: str) -> None:
    """The ``inertial`` element of a body with standard parameters ``p`` (none for a body without mass)."""
    M, S, IG = com_from_standard(p)
    if M > 0 or np.any(IG != 0):
        lam = np.linalg.eigvalsh(IG)
        if not (M > 0 and lam[0] > 0):
            raise ModelError(f"{where}: MuJoCo needs a positive mass and a positive-definite inertia about the centre "
                             f"of mass (M = {M}, principal moments {lam.tolist()}); move a massless rotor inertia "
                             "into Ia, or give the link a small mass and inertia")
        import xml.etree.ElementTree as ET

        # robodyn accepts I1 + I2 >= I3 up to rounding (check_physical's rtol); MuJoCo tests it exactly on its own
        # eigenvalues, so a body on the boundary (a thin rod, a flat plate) gets I + delta*1 with delta just past
        # the deficit: each principal moment rises by delta <= 1e-9 of the largest, the sum of two rises by 2 delta.
        delta = lam[2] - lam[0] - lam[1] + 1e-12 * lam[2]
        if delta > 1e-9 * lam[2]:  # a real violation (a model loaded with strict=False): not ours to change
            raise ModelError(f"{where}: principal moments {lam.tolist()} about the centre of mass violate "
                             "I1 + I2 >= I3, which MuJoCo refuses; correct the link's inertia")
        if delta > 0:
            IG = IG + delta * np.eye(3)
        ET.SubElement(el, "inertial", pos=" ".join(_num(x) for x in S), mass=_num(M),
                      fullinertia=" ".join(_num(IG[a, b]) for a, b in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))))


def _welded_into_moving_bodies(robot: Robot) -> tuple[np.ndarray, np.ndarray]:
    """Standard parameters (nf, 10) with the mass of every fixed frame moved into its moving ancestor (rows of
    fixed frames become zero), and those of the base body (10,): ``robot.base_params`` plus the fixed frames
    that the base carries (they do not move with a fixed base, which ignores them).

    A body of mass M with first moment MS_f and inertia J_f about O_f in R_f, placed by (R, t) in R_m, has
    MS_m = M t + R MS_f and J_m = R J_f Rᵀ + M (tᵀt 1 − t tᵀ) + 2 (tᵀc) 1 − t cᵀ − c tᵀ about O_m, c = R MS_f
    (the parallel-axis theorem of [9.12] for a body whose centre of mass is not at O_f).
    """
    params = np.array(robot.params, dtype=float)
    base = np.array(robot.base_params, dtype=float)
    for i in range(robot.nf):
        if robot.sigma[i] != 2:
            continue
        params[i] = 0.0
        T, m = _transform(robot, i), int(robot.antecedent[i])
        while m > 0 and robot.sigma[m - 1] == 2:
            T = _transform(robot, m - 1) @ T
            m = int(robot.antecedent[m - 1])
        p = robot.params[i]
        R, t, M = T[:3, :3], T[:3, 3], p[9]
        c = R @ p[6:9]
        J = R @ robot.J[i] @ R.T + M * (t @ t * np.eye(3) - np.outer(t, t)) + 2 * (t @ c) * np.eye(3) \
            - np.outer(t, c) - np.outer(c, t)
        welded = np.concatenate([J[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]], M * t + c, [M]])
        if m == 0:
            base += welded
        else:
            params[m - 1] += welded
    return params, base


def _quat(R: np.ndarray) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method, stable for every rotation): from the
    largest of 4w², 4x², 4y², 4z² (1 + t, 1 + 2 R_ii − t), the others by the sums and differences of R's
    off-diagonal pairs."""
    t = np.trace(R)
    i = int(np.argmax([t, R[0, 0], R[1, 1], R[2, 2]]))
    s = 2.0 * np.sqrt(1.0 + (t if i == 0 else 2 * R[i - 1, i - 1] - t))
    # 4 w x, 4 w y, 4 w z and 4 x y, 4 x z, 4 y z
    wx, wy, wz = R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]
    xy, xz, yz = R[0, 1] + R[1, 0], R[0, 2] + R[2, 0], R[1, 2] + R[2, 1]
    q = np.array([[0.25 * s, wx / s, wy / s, wz / s], [wx / s, 0.25 * s, xy / s, xz / s],
                  [wy / s, xy / s, 0.25 * s, yz / s], [wz / s, xz / s, yz / s, 0.25 * s]][i])
    return q / np.linalg.norm(q)
