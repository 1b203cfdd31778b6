"""MuJoCo MJCF models → :class:`Robot` in Khalil–Kleinfinger notation (:func:`from_mjcf`).

MuJoCo itself compiles the file (the ``mujoco`` extra), after robodyn's bounded reader has checked the text (no
``<!DOCTYPE>``, no ``<include>``) and removed what the dynamics do not use (geoms, assets, sites, actuators,
sensors, ...).  Each compiled body becomes the records of :mod:`robodyn.model.urdf` (one frame per ``hinge`` or
``slide`` joint, a fixed frame for a body without joints), placed by the URDF importer's conversion;
``<inertial>`` becomes standard parameters by [9.12], ``armature`` Ia, ``damping`` Fv, ``frictionloss`` Fc,
``range`` ``qlim``, ``actuatorfrcrange`` ``taulim`` (its smaller side).  docs/urdf-and-interop.md has the details.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import numpy as np

from robodyn.errors import InputError, ModelFileError, RobodynError
from robodyn.files import MAX_FILE_BYTES, read_text_file
from robodyn.model.robot import Robot
from robodyn.model.urdf import (JointRecord, LinkInertial, LinkRecord, RobotDescription, refuse_dtd,
                                robot_from_description)
from robodyn.spatial import quaternion_rows

#: MJCF elements the dynamics do not read: removed before MuJoCo compiles the model (their files need not exist).
_UNUSED = ("geom", "site", "camera", "light", "asset", "actuator", "sensor", "tendon", "equality", "contact",
           "keyframe", "visual", "statistic", "extension", "custom", "deformable", "flexcomp", "composite",
           "replicate", "skin", "plugin")
_HINGE, _SLIDE = 3, 2  # mujoco.mjtJoint


def _mujoco():
    try:
        import mujoco
    except ImportError:
        raise RobodynError("reading MJCF needs the package mujoco; install it with: pip install 'robodyn[mujoco]'") \
            from None
    return mujoco


def _text(source) -> tuple[str, str]:
    """(MJCF text, how messages name it) from a path or the XML text itself."""
    if not isinstance(source, (str, os.PathLike)):
        raise InputError(f"argument 'source' is {type(source).__name__}; give an MJCF file path or the XML text")
    if isinstance(source, str) and ("<" in source or "\n" in source):
        if len(source.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
            raise ModelFileError(f"<MJCF string>: larger than {MAX_FILE_BYTES} bytes, the limit for a model file")
        return source, "<MJCF string>"
    return read_text_file(source, str(source), kind="MJCF file"), str(source)


def _checked_tree(text: str, origin: str) -> ET.Element:
    refuse_dtd(text, origin, "an MJCF model")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ModelFileError(f"{origin}: not a readable MJCF model (malformed XML: {exc})") from None
    if root.tag != "mujoco":
        raise ModelFileError(f"{origin}: the top element is <{root.tag[:40]}>, not <mujoco>; not an MJCF model")
    if root.find(".//include") is not None:
        raise ModelFileError(f"{origin}: <include> is not read (robodyn reads one file); paste the included file in")
    world = root.find("worldbody")
    stack = [(body, False) for body in ([] if world is None else world.findall("body"))]
    while stack:  # a body that moves (a joint on it or above it) with geoms needs its mass as an <inertial>
        body, moves = stack.pop()
        moves = moves or body.find("joint") is not None or body.find("freejoint") is not None
        if moves and body.find("geom") is not None and body.find("inertial") is None:
            raise ModelFileError(f"{origin}, body {body.get('name', '(unnamed)')!r}: no <inertial>; MuJoCo would "
                                 "compute its mass from its geoms (meshes), robodyn reads <inertial> elements: "
                                 "give one (mass, pos, diaginertia or fullinertia)")
        stack.extend((child, moves) for child in body.findall("body"))
    for parent in list(root.iter()):
        for child in list(parent):
            if child.tag in _UNUSED:
                parent.remove(child)
    compiler = root.find("compiler")
    if compiler is None:
        compiler = ET.Element("compiler")
        root.insert(0, compiler)
    compiler.set("inertiafromgeom", "false")  # the geoms are gone: the inertials are the model's masses
    return root


def _pose(pos, quat) -> np.ndarray:
    """4×4 transform of a MuJoCo position and unit quaternion (w, x, y, z)."""
    w, x, y, z = quat
    T = np.eye(4)
    T[:3, :3] = quaternion_rows(x, y, z, w)
    T[:3, 3] = pos
    return T


def _shift(p) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = p
    return T


def _description(model, mujoco, origin: str) -> RobotDescription:
    """Records of the compiled ``model``: link frames at each body's last joint anchor (URDF's convention: the
    joint axis passes through the child link's origin)."""
    name = lambda kind, i: mujoco.mj_id2name(model, kind, i) or ""  # noqa: E731
    body_name = ["world"] + [name(mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}" for b in range(1, model.nbody)]
    links, joints = [LinkRecord(name="world", inertial=None)], []
    anchor = {0: np.zeros(3)}  # body -> its link frame's origin in the body frame (its last joint's pos)
    for b in range(1, model.nbody):
        parent = int(model.body_parentid[b])
        place = _shift(-anchor[parent]) @ _pose(model.body_pos[b], model.body_quat[b])  # in the parent's link frame
        first, count = int(model.body_jntadr[b]), int(model.body_jntnum[b])
        previous, link, at = body_name[parent], body_name[b], np.zeros(3)
        if count == 0:
            joints.append(JointRecord(name=link, type="fixed", parent=previous, child=link, origin=place,
                                      axis=np.array([1.0, 0.0, 0.0]), limit=None, damping=None, friction=None,
                                      mimic=None))
        for k in range(first, first + count):
            kind, joint = int(model.jnt_type[k]), name(mujoco.mjtObj.mjOBJ_JOINT, k) or f"{link}_joint{k - first + 1}"
            if kind not in (_HINGE, _SLIDE):
                what = {0: "free", 1: "ball"}.get(kind, str(kind))
                raise ModelFileError(f"{origin}, joint {joint!r}: a {what} joint; robodyn reads fixed-base robots "
                                     "of hinge and slide joints (a floating base loads from a URDF with floating=True)")
            child = link if k == first + count - 1 else f"{link}__{joint}"
            pos = np.array(model.jnt_pos[k], dtype=float)
            dof = int(model.jnt_dofadr[k])
            limited = bool(model.jnt_limited[k])
            limit = {"lower": float(model.jnt_range[k, 0]), "upper": float(model.jnt_range[k, 1])} if limited else {}
            lo, hi = model.jnt_actfrcrange[k]
            if model.jnt_actfrclimited[k] and lo < 0 < hi:  # robodyn's torque limit is symmetric: the smaller side
                limit["effort"] = float(min(-lo, hi))
            joints.append(JointRecord(
                name=joint, type=("revolute" if limited else "continuous") if kind == _HINGE else "prismatic",
                parent=previous, child=child, origin=(place if k == first else np.eye(4)) @ _shift(pos - at),
                axis=np.array(model.jnt_axis[k], dtype=float), limit=limit or None, mimic=None,
                damping=float(model.dof_damping[dof]), friction=float(model.dof_frictionloss[dof]),
                armature=float(model.dof_armature[dof])))
            if child != link:
                links.append(LinkRecord(name=child, inertial=None))
            previous, at = child, pos
        anchor[b] = at
        inertial = None
        if model.body_mass[b] > 0 or np.any(model.body_inertia[b]):
            inertial = LinkInertial(origin=_shift(-at) @ _pose(model.body_ipos[b], model.body_iquat[b]),
                                    mass=float(model.body_mass[b]), inertia=np.diag(model.body_inertia[b]))
        links.append(LinkRecord(name=link, inertial=inertial))
    if len(set(j.name for j in joints)) != len(joints):
        raise ModelFileError(f"{origin}: two joints or joint-less bodies share a name; give them unique names")
    model_name = bytes(model.names).split(b"\0", 1)[0].decode("utf-8", "replace")  # the names buffer starts with it
    return RobotDescription(name=model_name or "robot", links=links, joints=joints,
                            colours={}, gravity=np.array(model.opt.gravity, dtype=float))


def from_mjcf(source: str | os.PathLike, *, name: str | None = None, tip: str | None = None,
              strict: bool = True, prune: bool = True) -> Robot:
    """A fixed-base :class:`Robot` from a MuJoCo MJCF model (file path or XML text); see the module notes.

    Parameters
    ----------
    source : str or PathLike
        Path of an ``.xml`` MJCF file, or its text (a ``str`` holding ``<`` or a line break).
    name : str, optional
        Robot name (default: the ``<mujoco model>`` attribute).
    tip : str, optional
        Keep only the chain from the world to this body (or the frame of a joint: ``<body>__<joint>`` for the
        joints of a body but its last); the bodies welded below it are lumped into its inertia, the bodies below
        a joint under it and the other branches are dropped, as :func:`robodyn.from_urdf` does.
    strict, prune :
        As in :func:`robodyn.from_urdf`.

    Returns
    -------
    Robot
        Frames in MuJoCo's depth-first body order (its qpos order), named after the joints (a body without
        joints: after the body); ``link_names`` holds the body whose frame each frame is, so ``frame="hand"``
        names a body.

    Raises
    ------
    ModelFileError
        Unreadable or malformed file, ``<include>``, a free or ball joint, a body with geoms and joints but no
        ``<inertial>``, or what MuJoCo's compiler refuses (its message).
    """
    mujoco = _mujoco()
    text, origin = _text(source)
    tree = _checked_tree(text, origin)
    try:
        model = mujoco.MjModel.from_xml_string(ET.tostring(tree, encoding="unicode"))
    except ValueError as exc:  # MuJoCo's compiler errors
        raise ModelFileError(f"{origin}: MuJoCo cannot compile it ({' '.join(str(exc).split())[:300]})") from None
    description = _description(model, mujoco, origin)
    return robot_from_description(description, origin, tip=tip, name=name, strict=strict, prune=prune, kind="MJCF")
