"""URDF robot descriptions ↔ :class:`Robot` in Khalil–Kleinfinger notation.

:func:`from_urdf` makes every URDF joint one frame (z on the joint axis, x along the common normal to the axis of
its only moving successor, Khalil & Dombre ch. 3) and its inertial tags standard parameters by [9.12]:
J_j = I_Gj − M_j Ŝ_j Ŝ_j.  :func:`to_urdf` writes one link per frame, in the frame R_j itself, every number with
17 significant digits, so that URDF → Robot → URDF → Robot reproduces the numbers.  Both use the standard
library's ``xml.etree``; the file is checked as urdfdom checks it (:func:`_check_tree`) before it is read into the
plain records below.  docs/urdf-and-interop.md states how each frame is chosen.
"""

from __future__ import annotations

import math
import os
import re
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import numpy as np

from robodyn.model.robot import check_robot
from robodyn.errors import InputError, ModelError, ModelFileError, NonPhysicalInertiaError, RobodynError
from robodyn.files import MAX_FILE_BYTES, read_text_file
from robodyn.spatial import rot_x, rot_z
from robodyn.model.inertia import com_from_standard, standard_from_com
from robodyn.model.robot import Robot

_G = np.array([0.0, 0.0, -9.81])
#: Tolerance (m, rad, cosines) under which geometric quantities are treated as zero (parallel axes, d = 0...).
_TOL = 1e-9
#: Values smaller than this are written as exact zeros in the frame table.
_SNAP = 1e-10  # above the round-off of the frame conversions (about 1e-12 on long chains)


def _parse(source):
    """(yourdfpy.Robot, origin text) from a path or an XML string, after :func:`_check_tree`."""
    if not isinstance(source, (str, os.PathLike)):
        raise InputError(f"argument 'source' is {type(source).__name__}; give a URDF file path or the URDF XML text")
    text = source if isinstance(source, str) else None
    if text is not None and ("<" in text or "\n" in text):  # XML text (a cut one included), not a file name
        origin = "<URDF string>"
        if len(text) > MAX_FILE_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
            raise ModelFileError(f"{origin}: larger than {MAX_FILE_BYTES} bytes, the limit for a URDF file")
    else:
        origin = str(source)
        text = read_text_file(source, origin, kind="URDF file")  # size checked before reading, no FIFO/device
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        raise ModelFileError(f"{origin}: not a readable URDF (lone surrogate characters in the text)") from None
    refuse_dtd(text, origin, "a URDF")
    try:
        tree = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ModelFileError(f"{origin}: not a readable URDF (malformed XML: {exc})") from None
    _check_tree(tree, origin)
    return _read_robot(tree, origin), origin


def refuse_dtd(text: str, origin: str, what: str) -> None:
    """A model file needs no document type: a DTD could define entities that expand (billion laughs) or read local
    files into the model (external entities), so any is refused before an XML parser sees the text."""
    lowered = text.lower()  # once: a model file may be as large as the reader allows
    if "<!doctype" in lowered or "<!entity" in lowered:
        raise ModelFileError(f"{origin}: {what} may not contain <!DOCTYPE> or <!ENTITY> declarations; remove them")


def _children(joints) -> dict:
    """{link name: the joints whose parent it is, in the order of ``joints``}."""
    out: dict[str, list] = {}
    for j in joints:
        out.setdefault(j.parent, []).append(j)
    return out


# ---- the URDF elements robodyn reads, as plain records (after _check_tree: names, links, numbers are valid) ----
# :mod:`robodyn.model.mjcf` fills the same records from a MuJoCo model: one converter for both formats.

@dataclass
class LinkInertial:
    origin: np.ndarray | None
    mass: float | None
    inertia: np.ndarray | None  # (3, 3) about the centre of mass, in the inertial frame


@dataclass
class _Geometry:
    kind: str  # "mesh", "box", "cylinder", "sphere"
    attrs: dict  # the element's attributes as written (numbers are converted, and checked, where they are used)


@dataclass
class _Visual:
    origin: np.ndarray | None
    geometry: _Geometry | None
    material: str | None  # the material's name
    rgba: str | None  # its own colour, as written


@dataclass
class LinkRecord:
    name: str
    inertial: LinkInertial | None
    visuals: list = field(default_factory=list)


@dataclass
class JointRecord:
    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray | None
    axis: np.ndarray
    limit: dict | None  # lower, upper, effort, velocity (float or None)
    damping: float | None
    friction: float | None
    mimic: tuple | None  # (joint followed, multiplier, offset)
    armature: float = 0.0  # rotor inertia Ia (MJCF; URDF has no element for it)


@dataclass
class RobotDescription:
    name: str
    links: list
    joints: list
    colours: dict  # top-level material name -> rgba text
    gravity: np.ndarray = field(default_factory=lambda: _G.copy())  # in the root link's frame


def _numbers(text: str) -> np.ndarray:
    return np.array([float(x) for x in text.split()])


def _pose(el) -> np.ndarray | None:
    """^{parent}T of an ``<origin xyz rpy>`` (R = Rz(yaw) Ry(pitch) Rx(roll)), None without the element."""
    if el is None:
        return None
    T = np.eye(4)
    T[:3, :3] = rpy_rotation(*_numbers(el.get("rpy", "0 0 0")))
    T[:3, 3] = _numbers(el.get("xyz", "0 0 0"))
    return T


def _optional(el, attr: str) -> float | None:
    value = None if el is None else el.get(attr)
    return None if value is None else float(value)


def _read_inertial(el, where: str) -> LinkInertial | None:
    if el is None:
        return None
    mass, inertia = el.find("mass"), el.find("inertia")
    if mass is not None and mass.get("value") is None:
        raise ModelFileError(f"{where}: <mass> without a value attribute; give <mass value=\"...\"/> (kg)")
    I = None
    if inertia is not None:
        missing = [a for a in _SCALARS["inertia"] if inertia.get(a) is None]
        if missing:
            raise ModelFileError(f"{where}: <inertia> lacks {', '.join(missing)}; give all six of ixx ixy ixz iyy iyz izz")
        xx, xy, xz, yy, yz, zz = (float(inertia.get(a)) for a in _SCALARS["inertia"])
        I = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    return LinkInertial(origin=_pose(el.find("origin")), mass=_optional(mass, "value"), inertia=I)


def _read_visual(el) -> _Visual:
    g = el.find("geometry")
    shape = None if g is None else next(iter(g), None)
    material = el.find("material")
    colour = None if material is None else material.find("color")
    return _Visual(origin=_pose(el.find("origin")),
                   geometry=None if shape is None else _Geometry(kind=shape.tag, attrs=dict(shape.attrib)),
                   material=None if material is None else material.get("name"),
                   rgba=None if colour is None else colour.get("rgba", "1 1 1 1"))


def _read_robot(tree, origin: str) -> RobotDescription:
    """The records of a URDF tree that :func:`_check_tree` accepted."""
    links, joints = [], []
    for el in tree.findall("link"):
        where = f"{origin}, link {_q(el.get('name'))}"
        links.append(LinkRecord(name=el.get("name"), inertial=_read_inertial(el.find("inertial"), where),
                           visuals=[_read_visual(v) for v in el.findall("visual")]))
    for el in tree.findall("joint"):
        axis, limit, dyn, mimic = el.find("axis"), el.find("limit"), el.find("dynamics"), el.find("mimic")
        joints.append(JointRecord(
            name=el.get("name"), type=el.get("type"), parent=el.find("parent").get("link"),
            child=el.find("child").get("link"), origin=_pose(el.find("origin")),
            axis=_numbers(axis.get("xyz", "1 0 0")) if axis is not None else np.array([1.0, 0.0, 0.0]),
            limit=None if limit is None else {k: _optional(limit, k) for k in ("lower", "upper", "effort", "velocity")},
            damping=_optional(dyn, "damping"), friction=_optional(dyn, "friction"),
            mimic=None if mimic is None else (mimic.get("joint"), _optional(mimic, "multiplier"),
                                              _optional(mimic, "offset"))))
    colours = {m.get("name"): m.find("color").get("rgba", "1 1 1 1") for m in tree.findall("material")
               if m.get("name") and m.find("color") is not None}
    return RobotDescription(name=tree.get("name") or "robot", links=links, joints=joints, colours=colours)


# ---- the kinematic graph, checked before anything is built (as urdfdom and Pinocchio do) ----

_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
#: Attributes holding one number, per element (URDF specification); each must be a finite decimal number.
_SCALARS = MappingProxyType({
    "mass": ("value",), "inertia": ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"),
    "limit": ("lower", "upper", "effort", "velocity"), "dynamics": ("damping", "friction"),
    "mimic": ("multiplier", "offset"),
})
#: Attributes holding a 3-vector, per element.
_VECTORS = MappingProxyType({"origin": ("xyz", "rpy"), "axis": ("xyz",)})
#: Characters that XML 1.0 cannot carry (a name holding one would make a URDF no parser reads back).
_XML_BAD = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_DECIMAL = re.compile(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\Z")


def _q(name) -> str:
    """A name from the file as a message shows it: quoted, escaped (repr), cut to 60 characters."""
    text = repr(str(name))
    return text if len(text) <= 60 else text[:56] + "...'"


def _listed(names, limit: int = 5) -> str:
    names = [_q(n) for n in names]
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _check_numbers(element, where: str) -> None:
    """Every number the converter reads under ``element``: one finite decimal, or exactly three for vectors."""
    def finite(text):
        return _DECIMAL.match(text) and math.isfinite(float(text))

    for el in element.iter():
        for attr in _SCALARS.get(el.tag, ()):
            value = el.get(attr)
            if value is not None and not finite(value.strip()):
                raise ModelFileError(f"{where}: <{el.tag} {attr}={_q(value)}> is not a finite number")
        for attr in (a for a in _VECTORS.get(el.tag, ()) if el.get(a) is not None):
            value = el.get(attr)
            parts = value.split()
            if len(parts) != 3:
                raise ModelFileError(f"{where}: <{el.tag} {attr}={_q(value)}> has {len(parts)} numbers; give exactly 3")
            if not all(map(finite, parts)):
                raise ModelFileError(f"{where}: <{el.tag} {attr}={_q(value)}> holds a value that is not a finite number")


def _check_tree(robot_el, origin: str) -> None:
    """Refuse, naming the element, every URDF that fails the checks of :func:`from_urdf` (Notes): iterative and
    linear in the size of the file (nothing here can spin on a malformed graph)."""
    if robot_el.tag != "robot":
        raise ModelFileError(f"{origin}: the top element is <{_q(robot_el.tag)[1:-1]}>, not <robot>; not a URDF")
    links, joints = {}, {}
    for el in robot_el:
        if el.tag not in ("link", "joint"):
            continue
        name = el.get("name")
        what = "link" if el.tag == "link" else "joint"
        if not name:
            raise ModelFileError(f"{origin}: a <{what}> element without a name; give each {what} a unique name")
        table = links if el.tag == "link" else joints
        if name in table:
            raise ModelFileError(f"{origin}, {what} {_q(name)}: defined twice; {what} names must be unique")
        table[name] = el
        _check_numbers(el, f"{origin}, {what} {_q(name)}")
    parent_joint, children = {}, {}
    for name, el in joints.items():
        where = f"{origin}, joint {_q(name)}"
        kind = el.get("type")
        if kind not in _JOINT_TYPES:
            raise ModelFileError(f"{where}: unknown joint type {_q(kind)}; URDF types are {', '.join(_JOINT_TYPES)}")
        ends = {}
        for end in ("parent", "child"):
            found = el.findall(end)
            if len(found) != 1 or not found[0].get("link"):
                raise ModelFileError(f"{where}: needs exactly one <{end} link=\"...\"/>, found {len(found)}")
            ends[end] = found[0].get("link")
            if ends[end] not in links:
                raise ModelFileError(f"{where}: {end} link {_q(ends[end])} is not defined (no <link name=...> of that name)")
        parent, child = ends["parent"], ends["child"]
        if parent == child:
            raise ModelFileError(f"{where}: connects link {_q(child)} to itself")
        if child in parent_joint:
            raise ModelFileError(f"{where}: link {_q(child)} is already the child of joint {_q(parent_joint[child])}; "
                                 "a link has at most one parent joint (a URDF is a tree; close loops with "
                                 "robodyn.closed_chain.load_closed_chain)")
        parent_joint[child] = name
        children.setdefault(parent, []).append(child)
    if not links:
        raise ModelFileError(f"{origin}: no <link> element; not a URDF robot")
    roots = [name for name in links if name not in parent_joint]
    if len(roots) > 1:
        raise ModelFileError(f"{origin}: expected one root link (not the child of any joint), found {len(roots)}: "
                             f"{_listed(roots)}; connect them with joints")
    reached = set(roots)
    stack = list(roots)
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in reached:
                reached.add(child)
                stack.append(child)
    if len(reached) != len(links):
        # every link left out sits on a cycle or below one: follow parent joints (at most one each) until a link
        # comes back; that loop is the cycle
        link = next(name for name in links if name not in reached)
        seen: dict = {}  # link -> its position on the walk (a dict: membership in O(1))
        while link not in seen:
            seen[link] = len(seen)
            link = joints[parent_joint[link]].find("parent").get("link")
        cycle = [parent_joint[x] for x in list(seen)[seen[link]:]]
        raise ModelFileError(f"{origin}: joints {_listed(cycle[::-1])} form a cycle; a URDF is a tree (close loops "
                             "with robodyn.closed_chain.load_closed_chain)")


def _float(value, default: float = 0.0) -> float:
    return default if value is None else float(value)


def _rate_limit(limit: dict | None, key: str, where: str) -> float:
    """``<limit velocity=|effort=>`` as robodyn's qdlim | taulim: inf where absent or 0 (the URDF placeholder
    for "not given", which robodyn's own writer uses too)."""
    value = None if limit is None else limit.get(key)
    if value is not None and value < 0:
        raise ModelFileError(f"{where}: <limit {key}=\"{value:g}\"> is negative; give the magnitude of the limit "
                             f"({'rad/s | m/s' if key == 'velocity' else 'N m | N'}), or 0 for none")
    return math.inf if not value else float(value)


def _unit(v, where: str) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    norm = float(np.linalg.norm(v))
    if not norm > 0:
        raise ModelFileError(f"{where}: joint axis {v.tolist()} is zero; give a direction such as '0 0 1'")
    return v / norm


def _wrap(angle: float) -> float:
    """Angle in (−π, π]; values within _SNAP of −π become π (so that a round trip keeps the same sign)."""
    a = math.remainder(angle, 2 * math.pi)
    if a <= -math.pi + _SNAP:
        a += 2 * math.pi
    return 0.0 if abs(a) < _SNAP else a


def _snap(x: float, scale: float = 1.0) -> float:
    return 0.0 if abs(x) < _SNAP * scale else float(x)


def kk_parameters(T: np.ndarray, scale: float = 1.0) -> tuple[float, float, float, float, float, float]:
    """(γ, b, α, d, θ, r) with Rot(z, γ) Trans(z, b) Rot(x, α) Trans(x, d) Rot(z, θ) Trans(z, r) = T.

    Parameters
    ----------
    T : array (4, 4)
        Homogeneous transform ^{a(j)}T_j at q = 0.
    scale : float
        Length scale (m) of the robot, for the tolerances.

    Notes
    -----
    Among the solutions it picks |γ| ≤ π/2 (α takes the sign that allows it) and, when z_j is parallel to
    z_{a(j)}, b = 0 and γ = 0 when the origin lies on the x axis of the antecedent.
    """
    R, P = T[:3, :3], T[:3, 3]
    s = math.hypot(R[0, 2], R[1, 2])
    if s < _SNAP:
        # z_j parallel to z_a(j): only γ + θ and b + r cos α are defined; take b = 0 and γ from the origin
        alpha = 0.0 if R[2, 2] > 0 else math.pi
        if abs(P[1]) <= _SNAP * scale:
            gamma, d = 0.0, float(P[0])
        else:
            gamma, d = math.atan2(P[1], P[0]), math.hypot(P[0], P[1])
        M = rot_z(-gamma) @ R
        theta = math.atan2(M[1, 0], M[0, 0]) if alpha == 0.0 else math.atan2(-M[1, 0], M[0, 0])
        b, r = 0.0, float(P[2]) * (1.0 if alpha == 0.0 else -1.0)
    else:
        gamma = math.atan2(R[0, 2], -R[1, 2])
        if abs(gamma) > math.pi / 2 + _TOL:
            gamma -= math.copysign(math.pi, gamma)
        # α and θ from Rz(−γ) R = Rx(α) Rz(θ), whose first row and last column are well conditioned even for a
        # small α: the rotation is reproduced to rounding whatever the (ill-conditioned) γ of nearly parallel axes.
        M = rot_z(-gamma) @ R
        alpha = math.atan2(-M[1, 2], M[2, 2])
        theta = math.atan2(-M[0, 1], M[0, 0])
        Pg = rot_z(-gamma) @ P
        sa = math.sin(alpha)
        d, r = float(Pg[0]), float(-Pg[1] / sa)
        b = float(Pg[2] - math.cos(alpha) * r)
    return (_wrap(gamma), _snap(b, scale), _wrap(alpha), _snap(d, scale), _wrap(theta), _snap(r, scale))


def kk_transform(gamma, b, alpha, d, theta, r) -> np.ndarray:
    """Rot(z, γ) Trans(z, b) Rot(x, α) Trans(x, d) Rot(z, θ) Trans(z, r) as a (4, 4) array."""
    T = np.eye(4)
    for R, p in ((rot_z(gamma), (0.0, 0.0, b)), (rot_x(alpha), (d, 0.0, 0.0)), (rot_z(theta), (0.0, 0.0, r))):
        step = np.eye(4)
        step[:3, :3] = R
        step[:3, 3] = R @ np.asarray(p)
        T = T @ step
    return T


def _inv(T):
    out = np.eye(4)
    out[:3, :3] = T[:3, :3].T
    out[:3, 3] = -T[:3, :3].T @ T[:3, 3]
    return out


def _frame(z, x, origin) -> np.ndarray:
    T = np.eye(4)
    T[:3, 0], T[:3, 1], T[:3, 2], T[:3, 3] = x, np.cross(z, x), z, origin
    return T


def _perpendicular(v, z):
    """Unit component of v normal to z, or None when v is (nearly) along z."""
    w = v - (v @ z) * z
    n = float(np.linalg.norm(w))
    return None if n < _TOL else w / n


def from_urdf(
    source: str | os.PathLike,
    *,
    base: str | None = None,
    tip: str | None = None,
    name: str | None = None,
    link_frames: bool = False,
    strict: bool = True,
    prune: bool = True,
    floating: bool = False,
) -> Robot:
    """A :class:`Robot` from a URDF file or string (fixed base, or floating with ``floating=True``).

    Parameters
    ----------
    source : str or PathLike
        Path of a ``.urdf`` file, or the URDF XML text itself (a ``str`` holding ``<`` or a line break).
    base : str, optional
        Link that is the fixed base R_0 (default: the URDF root link).  The joints between the root and it
        must be fixed; gravity is expressed in its frame.
    tip : str, optional
        Keep only the chain of joints from ``base`` to this link (a serial robot).  The links the tip carries
        through fixed joints only (flange, force sensor, gripper body) are lumped into the tip link's inertial
        parameters; the links below a moving joint under them, and the branches off the chain, are dropped
        with their masses.  ``source`` names the links merged and dropped, with the mass dropped.  Default:
        every joint below ``base`` (chains and trees).
    name : str, optional
        Robot name (default: the URDF ``<robot name>``).
    link_frames : bool
        Also add a fixed frame, named after the URDF child link (``<link>_link`` if a joint has that name),
        wherever that link's frame differs from the joint's Khalil–Kleinfinger frame (forward kinematics then
        gives every URDF link frame).
    strict : bool
        False: inertias that violate the triangle inequality warn instead of raising.
    prune : bool
        Drop the fixed massless side branches (sensor, tool and CAD frames beside a moving joint), which would
        make a serial arm a tree; several such branches on the last link are kept, each frame on the previous
        one, so the chain stays serial.  Nothing is pruned with ``link_frames=True`` or ``tip=...``;
        ``source`` names the joints dropped.
    floating : bool
        A free-floating base (legged robots, humanoids): the root link becomes the base body, its inertial tag
        its ``base_params`` in the root link frame R_0, and ``gravity`` is in the world frame (as Pinocchio's
        ``buildModelFromUrdf(path, JointModelFreeFlyer())``).  ``base`` must then be the root link.

    Notes
    -----
    The file is checked first, as urdfdom and Pinocchio do: unique names, one tree with defined links, exactly
    three finite numbers in each ``xyz``/``rpy``, finite masses, inertias, limits and mimic factors.
    ``<dynamics damping friction>`` become Fv and Fc (a UserWarning names the joints: Pinocchio's ``rnea`` leaves
    friction out).  Mimic joints load as independent joints, as in Pinocchio (see :func:`mimic_coupling`).

    Returns
    -------
    Robot
        Frames in depth-first order of the URDF tree (Pinocchio's joint order), named after the URDF joints;
        ``link_names`` holds the URDF link whose frame each frame is, so ``frame=`` arguments take link names;
        ``source`` says which file it came from and how each frame was placed.

    Raises
    ------
    ModelFileError
        Unreadable file (missing, not a regular file, over the size limit, not UTF-8, malformed XML), a
        kinematic graph that is not one tree, a malformed number, unknown ``base``/``tip`` link, floating or
        planar joints, a zero axis; one line naming the element.
    """
    for arg, value in (("base", base), ("tip", tip), ("name", name)):
        if value is not None and not isinstance(value, str):
            raise InputError(f"argument '{arg}' is {type(value).__name__}; give a "
                             f"{'robot name' if arg == 'name' else 'link name'} (str) or None")
    urdf, origin = _parse(source)
    return robot_from_description(urdf, origin, base=base, tip=tip, name=name, link_frames=link_frames,
                                  strict=strict, prune=prune, floating=floating)


def robot_from_description(urdf: RobotDescription, origin: str, *, base=None, tip=None, name=None,
                           link_frames=False, strict=True, prune=True, floating=False, kind: str = "URDF") -> Robot:
    """The :class:`Robot` of a tree of links and joints (records read from a URDF, or from an MJCF model by
    :func:`robodyn.model.mjcf.from_mjcf`), with the options of :func:`from_urdf`; ``origin`` names the file
    in messages, ``kind`` its format in ``source``."""
    joints = list(urdf.joints)
    by_child = {j.child: j for j in joints}  # a tree (checked by _parse): one parent joint per link, one root
    links = {link.name: link for link in urdf.links}
    root = next(link for link in links if link not in by_child)
    if floating and base not in (None, root):
        raise InputError(f"from_urdf: floating=True makes the root link {root!r} the floating base; drop base={base!r}")
    base = root if base is None else base
    for arg, link in (("base", base), ("tip", tip)):
        if link is not None and link not in links:
            raise ModelFileError(f"{origin}: {arg} = {link!r} is not a link of this URDF; links: {_listed(links, 20)}")
    gravity = _base_gravity(by_child, root, base, origin, urdf.gravity)
    children = _children(joints)
    keep, merged, cut = None, {}, []
    if tip is not None:
        keep, link = set(), tip
        while link != base:  # at most one step per joint: the graph is a tree
            if link not in by_child:
                raise ModelFileError(f"{origin}: tip link {tip!r} is not below base link {base!r}")
            keep.add(by_child[link].name)
            link = by_child[link].parent
        merged, cut = _tip_cut(tip, base, keep, children, links)
    order = []
    stack = list(reversed(children.get(base, [])))
    while stack:
        j = stack.pop()
        if keep is not None and j.name not in keep:
            continue
        if j.type in ("floating", "planar"):
            raise ModelFileError(f"{origin}, joint {j.name!r}: type {j.type!r} is not supported; robodyn models "
                                 "fixed-base manipulators with revolute, continuous, prismatic and fixed joints (pick "
                                 "base/tip below it; a floating root link loads with floating=True)")
        order.append(j)
        stack.extend(reversed(children.get(j.child, [])))
    dropped, hang = [], {}
    if prune and not link_frames and keep is None:
        order, dropped, hang = _without_massless_branches(order, children, links)
    if not order:
        raise ModelFileError(f"{origin}: no joint below base link {base!r}")
    friction = [j.name for j in order if j.type != "fixed" and (_float(j.damping) != 0 or _float(j.friction) != 0)]
    if friction:
        what = "URDF <dynamics damping friction>" if kind == "URDF" else "MJCF damping and frictionloss"
        warnings.warn(f"{origin}: the {what} of joint(s) {_listed(friction)} become viscous (Fv) and Coulomb (Fc) "
                      "friction, which robodyn's inverse dynamics includes (Pinocchio's rnea does not); "
                      "robot.replace(Fv=None, Fc=None) drops them", UserWarning, stacklevel=3)
    robot = _convert(urdf, order, links, base, gravity, origin, name, link_frames, strict, dropped, friction, hang,
                     kind, merged, cut)
    return _floating_base(robot, links[root], origin) if floating else robot


def from_xacro(path: str | os.PathLike, *, mappings: dict | None = None, **options) -> Robot:
    """A :class:`Robot` from a xacro file (a URDF written with macros), expanded by the ``xacro`` package (the
    ``xacro`` extra, ``pip install 'robodyn[xacro]'``), then read by :func:`from_urdf` with ``options``.

    Parameters
    ----------
    path : str or PathLike
        The ``.xacro`` file; read through robodyn's bounded reader.  Files it includes are read by xacro, relative
        to its folder (``$(find pkg)`` needs ROS and is an error here).
    mappings : dict, optional
        Values of the file's ``<xacro:arg>`` arguments, as xacro's command line takes ``name:=value``.

    Notes
    -----
    Expanding a xacro file evaluates the Python expressions it holds (``${...}``), with xacro's restricted
    namespace, which is not a sandbox: expand only files you trust, as you would run them with ``xacro``.
    """
    try:
        import xacro
    except ImportError:
        raise RobodynError("reading xacro needs the package xacro; install it with: pip install 'robodyn[xacro]'") \
            from None
    if not isinstance(path, (str, os.PathLike)) or (isinstance(path, str) and ("<" in path or "\n" in path)):
        raise InputError("from_xacro: give the path of a .xacro file (its includes are found relative to it)")
    if mappings is not None and not (isinstance(mappings, dict)
                                     and all(isinstance(k, str) and isinstance(v, str) for k, v in mappings.items())):
        raise InputError(f"from_xacro: mappings = {mappings!r}; give a dict of argument names to str values")
    origin = str(path)
    text = read_text_file(path, origin, kind="xacro file")
    refuse_dtd(text, origin, "a xacro file")
    try:
        xacro.init_stacks(os.path.abspath(origin))
        doc = xacro.parse(text, origin)
        xacro.process_doc(doc, mappings=dict(mappings or {}))
        expanded = doc.toxml()
    except Exception as exc:  # xacro raises XacroException, ExpatError, NameError... with the file's line
        raise ModelFileError(f"{origin}: xacro cannot expand it ({' '.join(str(exc).split())[:300]})") from None
    robot = from_urdf(expanded, **options)
    return robot.replace(source=robot.source.replace("URDF string,", f"URDF expanded by xacro from {Path(origin).name},", 1))


def _is_massless(link) -> bool:
    """No mass and no rotational inertia (a massless link with an inertia tensor still changes the dynamics)."""
    inertial = link.inertial
    if inertial is None:
        return True
    mass = 0.0 if inertial.mass is None else float(inertial.mass)
    return mass == 0 and (inertial.inertia is None or not np.any(np.asarray(inertial.inertia, dtype=float)))


def _without_massless_branches(order, children, links):
    """``order`` without its fixed massless side branches (``prune`` of :func:`from_urdf`), the names of the joints
    dropped, and the link each kept tool frame hangs on ({joint name: link name}, for the joints whose antecedent
    is not their URDF parent).  Dropping a branch changes no dynamics (no mass, no joint) and no other frame; the
    branches kept at the end of a chain all ride on one body, so the placement of each on the previous is
    constant."""
    inert = {}  # joint name -> its subtree is fixed and massless
    for j in reversed(order):  # depth-first order: every joint comes after its parent, so children are done first
        inert[j.name] = (j.type == "fixed" and _is_massless(links[j.child])
                         and all(inert.get(k.name, False) for k in children.get(j.child, ())))
    tips = {link for link, js in children.items() if len(js) > 1 and all(inert.get(k.name, False) for k in js)}
    drop = {j.name for j in order if inert[j.name] and len(children.get(j.parent, ())) > 1 and j.parent not in tips}
    kept, dropped, gone = [], [], set()  # gone: links below a dropped joint
    hang, tip_of, last = {}, {link: link for link in tips}, {}  # tip_of: link -> the tip link whose chain holds it
    for j in order:
        if j.name in drop or j.parent in gone:
            dropped.append(j.name)
            gone.add(j.child)
            continue
        kept.append(j)
        tip = tip_of.get(j.parent)
        if tip is not None:  # each frame of a tip's branches hangs on the frame before it (the first on the tip)
            if last.get(tip, tip) != j.parent:
                hang[j.name] = last[tip]
            tip_of[j.child] = tip
            last[tip] = j.child
    return kept, dropped, hang


def _tip_cut(tip, base, keep, children, links):
    """What ``tip=`` does below and beside the chain ``keep`` (joint names from ``base`` to ``tip``): the links the
    tip carries through fixed joints only, {tip: [(link name, its pose in the tip link's frame (4, 4))]}, to be
    lumped into the tip's inertial parameters, and the sentences for ``source`` naming them and the links
    dropped (below a moving joint under the tip, or off the chain) with the mass dropped."""
    rigid, moving, stack = [], [], [(tip, np.eye(4))]
    while stack:
        parent, T = stack.pop()
        for j in children.get(parent, ()):
            if j.type == "fixed":
                rigid.append((j.child, T @ _origin(j)))
                stack.append(rigid[-1])
            else:
                moving.append(j)
    below = _links_below([j.child for j in moving], children)
    chain = {j.child for js in children.values() for j in js if j.name in keep} | {tip} | {k for k, _ in rigid}
    gone = chain | set(below)
    beside = [k for k in _links_below([base], children)[1:] if k not in gone]
    said = [f"Links fixed below tip link {_q(tip)} lumped into its inertial parameters (tip=): "
            f"{_listed([k for k, _ in rigid], 8)}"] if rigid else []
    under = f"below the moving joint(s) {_listed([j.name for j in moving], 8)} under tip link {_q(tip)}"
    for names, where in ((below, under), (beside, "off the chain from the base to the tip")):
        if names:
            mass = sum(float(links[k].inertial.mass or 0.0) for k in names if links[k].inertial is not None)
            said.append(f"Links {where} dropped by tip= ({mass:.6g} kg in all): {_listed(names, 8)}")
    return {tip: rigid} if rigid else {}, said


def _links_below(tops, children) -> list:
    """``tops`` and every link below them, depth first."""
    out, stack = [], list(reversed(tops))
    while stack:
        link = stack.pop()
        out.append(link)
        stack.extend(reversed([j.child for j in children.get(link, ())]))
    return out


def _inertial_params(link, pose) -> np.ndarray:
    """The 10 standard parameters (XX..M) of ``link``'s ``<inertial>`` in a frame R in which the link frame has
    ``pose`` (4, 4): the rigid-body transfer of inertia between frames, I_G turned into R's axes and moved to
    R's origin, J = I_G − M ŜŜ (Khalil & Dombre [9.12]).  Parameters of bodies fixed to one another, each in
    the same frame, add up to those of the lumped body."""
    inertial = link.inertial
    if inertial is None or inertial.mass is None:
        return np.zeros(10)
    T = pose @ _origin(inertial)
    I = np.zeros((3, 3)) if inertial.inertia is None else np.asarray(inertial.inertia, dtype=float)
    return standard_from_com(float(inertial.mass), T[:3, 3], T[:3, :3] @ I @ T[:3, :3].T)


def _floating_base(robot: Robot, link, origin) -> Robot:
    """``robot`` with a floating base whose body is the URDF root ``link`` (standard parameters in its frame)."""
    params = _inertial_params(link, np.eye(4))
    try:
        return robot.replace(base="floating", base_params=params)
    except ModelError as exc:
        raise ModelFileError(f"{origin}: root link {link.name!r}: {exc}") from None


@dataclass(frozen=True)
class MimicCoupling:
    """Joint variables of a robot with URDF mimic joints as functions of its independent ones.

    q = G q_a + offset,  q̇ = G q̇_a,  q̈ = G q̈_a;  by the principle of virtual work the generalized forces on
    the independent joints are τ_a = Gᵀ τ and their inertia matrix is Gᵀ A G.

    Attributes
    ----------
    G : array (n, m)
        ∂q/∂q_a; row k of a mimic joint holds its multiplier in the column of the joint it follows.
    offset : array (n,)
        Mimic offsets (rad | m).
    independent : tuple of m str
        Names of the independent joints, in the order of q_a.
    """

    G: np.ndarray
    offset: np.ndarray
    independent: tuple[str, ...]

    def q(self, qa):
        """Full joint positions (..., n) from independent ones (..., m)."""
        return np.asarray(qa, dtype=float) @ self.G.T + self.offset

    def qd(self, qda):
        """Full joint velocities or accelerations (..., n) from independent ones (..., m)."""
        return np.asarray(qda, dtype=float) @ self.G.T

    def torques(self, tau):
        """Generalized forces on the independent joints, Gᵀ τ (..., m), from joint torques τ (..., n)."""
        return np.asarray(tau, dtype=float) @ self.G

    def inertia_matrix(self, A):
        """Gᵀ A G (..., m, m) from the inertia matrix A (..., n, n) of the independent joints' robot."""
        return self.G.T @ np.asarray(A, dtype=float) @ self.G


def mimic_coupling(source: str | os.PathLike, robot: Robot) -> MimicCoupling:
    """The coupling that URDF ``<mimic>`` tags impose on the joints of ``robot`` (loaded from ``source``).

    q_k = multiplier · q_m + offset for each mimic joint (chains of them are followed): ``rd.inverse_dynamics``
    of the full robot at ``c.q(qa)``, ``c.qd(qda)``, ``c.qd(qdda)`` reduced by ``c.torques`` is the inverse
    dynamics of the coupled mechanism.

    Raises
    ------
    ModelFileError
        A mimic joint that follows a joint that is not among ``robot.q_names``.
    """
    check_robot(robot)
    urdf, origin = _parse(source)
    rule = {j.name: (j.mimic[0], _float(j.mimic[1], 1.0), _float(j.mimic[2]))
            for j in urdf.joints if j.mimic is not None and j.name in robot.q_names}
    independent = tuple(name for name in robot.q_names if name not in rule)
    G, offset = np.zeros((robot.n, len(independent))), np.zeros(robot.n)
    for k, name in enumerate(robot.q_names):
        gain, shift, seen = 1.0, 0.0, set()
        while name in rule:
            if name in seen:
                raise ModelFileError(f"{origin}, joint {name!r}: mimic tags form a cycle")
            seen.add(name)
            leader, multiplier, off = rule[name]
            gain, shift, name = gain * multiplier, shift + gain * off, leader
        if name not in independent:
            raise ModelFileError(f"{origin}: a mimic joint follows {name!r}, which is not a joint of robot '{robot.name}'")
        G[k, independent.index(name)] = gain
        offset[k] = shift
    return MimicCoupling(G=G, offset=offset, independent=independent)


@dataclass(frozen=True, eq=False)
class LinkVisual:
    """One ``<visual>`` of a URDF link, placed in the robodyn frame that carries the link (see :func:`urdf_visuals`).

    Attributes
    ----------
    link : str — the URDF link (text from the file: show it through :func:`robodyn.sanitize.printable`).
    frame : int — the frame R_frame of the robot that carries it (0: the base), rigidly.
    pose : ndarray (4, 4), read-only — the visual's frame in R_frame (m): ``T_0,frame(q) @ pose`` places it.
    geometry : str — "mesh", "box", "cylinder" or "sphere".
    filename : str or None — a mesh's file name as the URDF writes it (untrusted text: ``package://...``,
        relative or absolute); None for the other geometries.
    scale : ndarray (3,), read-only — the mesh's scale factors (ones by default).
    size : tuple of float — box: its three edge lengths; cylinder: (radius, length); sphere: (radius,) (m);
        mesh: ().
    rgba : tuple of 4 float or None — the URDF material colour (0..1), when it has four finite numbers.
    """

    link: str
    frame: int
    pose: np.ndarray
    geometry: str
    filename: str | None
    scale: np.ndarray
    size: tuple
    rgba: tuple | None


def urdf_visuals(source: str | os.PathLike, robot: Robot) -> tuple[LinkVisual, ...]:
    """The ``<visual>`` elements of a URDF, each attached to the frame of ``robot`` (loaded from that URDF by
    :func:`from_urdf`) that carries its link: the frame named after its parent joint, or, below fixed joints the
    robot lacks, that of the nearest link above it (a link below a moving joint the robot lacks is left out).
    The pose in that frame is ``inv(T_0,k(0)) T_link(0) T_origin`` at q = 0 (Khalil & Dombre [9.3]).

    Parameters
    ----------
    source : str or PathLike
        The URDF file (or text) the robot came from, read as :func:`from_urdf` reads it.
    robot : Robot
        Its frames are matched to the URDF joints by name.

    Returns
    -------
    tuple of LinkVisual
        In the URDF's order of links; empty when no link of the robot has a visual.
    """
    robot = check_robot(robot)
    urdf, origin = _parse(source)
    by_name = {j.name: j for j in urdf.joints}
    by_child = {j.child: j for j in urdf.joints}
    names = list(robot.frame_names)
    ant = np.asarray(robot.antecedent)
    frame_of_joint = {name: k + 1 for k, name in enumerate(names) if name in by_name}
    base = next((by_name[name].parent for k, name in enumerate(names) if ant[k] == 0 and name in by_name), None)
    if base is None:
        return ()
    T = [np.eye(4)]  # the frames R_k at q = 0 in R_0 (θ_k and r_k of the table hold the joint offsets)
    for k in range(robot.nf):
        T.append(T[ant[k]] @ kk_transform(robot.gamma[k], robot.b[k], robot.alpha[k], robot.d[k], robot.theta[k],
                                          robot.r[k]))
    world, stack = {base: np.eye(4)}, [base]  # URDF link frames at q = 0 in the base link's frame
    children = _children(urdf.joints)
    while stack:
        for j in children.get(stack.pop(), ()):
            world[j.child] = world[j.parent] @ _origin(j)
            stack.append(j.child)
    colours = urdf.colours
    out = []
    for link in urdf.links:
        if link.name not in world or not link.visuals:
            continue
        frame, walk = None, link.name
        while frame is None:
            if walk == base:
                frame = 0
            elif by_child[walk].name in frame_of_joint:
                frame = frame_of_joint[by_child[walk].name]
            elif by_child[walk].type == "fixed":
                walk = by_child[walk].parent
            else:
                break  # below a moving joint the robot does not have
        if frame is None:
            continue
        for visual in link.visuals:
            item = _visual(visual, link.name, frame, _inv(T[frame]) @ world[link.name] @ _origin(visual), colours,
                           origin)
            if item is not None:
                out.append(item)
    return tuple(out)


def _visual(visual, link: str, frame: int, pose: np.ndarray, colours: dict, origin: str) -> LinkVisual | None:
    g = visual.geometry
    if g is None:
        return None
    rgba = visual.rgba if visual.rgba is not None else colours.get(visual.material)
    a = g.attrs
    try:
        if rgba is not None:
            rgba = _numbers(rgba)
            # a colour is decoration: one that is not four finite numbers is dropped, not an error
            rgba = tuple(float(c) for c in np.clip(rgba, 0.0, 1.0)) if rgba.shape == (4,) and np.all(
                np.isfinite(rgba)) else None
        scale, size, filename = np.ones(3), (), None
        kind = g.kind
        if kind == "mesh":
            filename = str(a.get("filename"))
            if a.get("scale", "").replace(",", " ").split():
                scale = np.broadcast_to(_numbers(a["scale"].replace(",", " ")), (3,)).copy()
        elif kind == "box":
            size = tuple(float(x) for x in _numbers(a["size"].replace(",", " ")))  # the viewer checks its length
        elif kind == "cylinder":
            size = (float(a["radius"]), float(a["length"]))
        elif kind == "sphere":
            size = (float(a["radius"]),)
        else:
            return None
    except (TypeError, ValueError, KeyError):
        raise ModelFileError(f"{origin}, link {_q(link)}: a <visual> geometry or colour is not made of numbers (mesh scale: "
                             "1 or 3 numbers)") from None
    pose = np.array(pose, dtype=float)
    pose.setflags(write=False)
    scale.setflags(write=False)
    return LinkVisual(link=str(link), frame=int(frame), pose=pose, geometry=kind, filename=filename, scale=scale,
                      size=size, rgba=rgba)


def _base_gravity(by_child, root, base, origin, g) -> np.ndarray:
    R = np.eye(3)
    link = base
    while link != root:
        j = by_child[link]
        if j.type != "fixed":
            raise ModelFileError(f"{origin}: base link {base!r} sits on the moving joint {j.name!r}; choose a base "
                                 "that the root carries through fixed joints only")
        R = _origin(j)[:3, :3] @ R
        link = j.parent
    return R.T @ np.asarray(g, dtype=float)


def _origin(joint_or_inertial) -> np.ndarray:
    T = joint_or_inertial.origin
    return np.eye(4) if T is None else np.asarray(T, dtype=float)


def _convert(urdf, order, links, base, gravity, origin, name, link_frames, strict, dropped, friction, hang,
             fmt, merged, cut) -> Robot:
    world = {base: np.eye(4)}  # URDF link frames at q = 0, in the base frame
    axis_line = {}
    for j in order:
        place = world[j.parent] @ _origin(j)
        world[j.child] = place
        if j.type != "fixed":
            axis_line[j.name] = (place[:3, 3], place[:3, :3] @ _unit(j.axis, f"{origin}, joint {j.name!r}"))
    scale = max([1.0] + [float(np.abs(T[:3, 3]).max()) for T in world.values()])
    frame_of_link = {base: np.eye(4)}  # the Khalil–Kleinfinger frame of each link, in the base frame
    below = _children(order)  # link -> the joints of ``order`` it carries
    rows, notes = [], []
    index, joint_names = {}, {k.name for k in order}
    link_of = {}  # row -> the URDF link whose frame it is
    for j in order:
        if j.type == "fixed":
            F, how = world[j.child], "fixed: the URDF link frame"
        else:
            F, how = _moving_frame(j, frame_of_link[j.parent], axis_line, _moving_successors(j, below),
                                   world[j.child], scale)
        frame_of_link[j.child] = F
        index[j.child] = len(rows) + 1
        rows.append((j.name, index.get(hang.get(j.name, j.parent), 0), j, F, j.child))
        notes.append(f"{j.name}: {how}" + (f", on the frame of link {hang[j.name]}" if j.name in hang else ""))
        if np.allclose(_inv(F) @ world[j.child], np.eye(4), rtol=0, atol=_SNAP * scale):
            link_of[len(rows)] = j.child
        elif link_frames:
            label = j.child if j.child not in joint_names else f"{j.child}_link"
            rows.append((label, index[j.child], None, world[j.child], None))
            link_of[len(rows)] = j.child
    rows = [row + (link_of.get(i, ""),) for i, row in enumerate(rows, start=1)]
    rows, table = _with_tilt_frames(rows, scale, notes)
    nf = len(rows)
    geo = dict(zip(("gamma", "b", "alpha", "d", "theta", "r"), np.array(table, dtype=float).reshape(nf, 6).T))
    sigma, ant, params = np.zeros(nf, int), np.zeros(nf, int), np.zeros((nf, 10))
    Fv, Fc, Ia, qlim, names = np.zeros(nf), np.zeros(nf), np.zeros(nf), [], []
    rates = {"velocity": [], "effort": []}
    for i, (frame_name, a, j, F, child, _) in enumerate(rows):
        names.append(frame_name)
        ant[i] = a
        kind = "fixed" if j is None else j.type
        sigma[i] = {"revolute": 0, "continuous": 0, "prismatic": 1, "fixed": 2}[kind]
        if sigma[i] != 2:
            Fv[i], Fc[i], Ia[i] = _float(j.damping), _float(j.friction), j.armature
            lim = j.limit
            if kind == "continuous" or lim is None:
                qlim.append([-math.inf, math.inf])
            else:
                qlim.append([_float(lim["lower"], -math.inf), _float(lim["upper"], math.inf)])
            for key in rates:
                rates[key].append(_rate_limit(lim, key, f"{origin}, joint {_q(j.name)}"))
        if child is not None:
            pose = _inv(F) @ world[child]
            params[i] = _inertial_params(links[child], pose) + sum(
                (_inertial_params(links[k], pose @ T) for k, T in merged.get(child, ())), np.zeros(10))
    said = ((dropped, "Fixed massless side branches dropped (prune=True; link_frames=True or prune=False keeps them)"),
            (friction, "URDF <dynamics> read as viscous friction Fv (damping) and Coulomb friction Fc (friction), "
                       "included in the inverse dynamics"),
            ([j.name for j in order if j.mimic is not None],
             "Mimic joints loaded as independent joints (as Pinocchio does; robodyn.model.mimic_coupling couples "
             "them)"))
    summary = f"Khalil–Kleinfinger frames from {fmt} joints (z on the joint axis): " + "; ".join(notes) \
        + "".join(f". {text}: {', '.join(joints)}" for joints, text in said if joints) + "".join(f". {s}" for s in cut)
    source = f"{fmt} {Path(origin).name if not origin.startswith('<') else 'string'}, robot {urdf.name!r}. {summary}."
    try:
        return Robot(name=name or urdf.name, source=source, antecedent=ant, sigma=sigma, params=params, Fv=Fv, Fc=Fc,
                     Ia=Ia, qlim=np.array(qlim, dtype=float).reshape(-1, 2), gravity=gravity, frame_names=tuple(names),
                     link_names=tuple(row[5] for row in rows), qdlim=np.array(rates["velocity"]),
                     taulim=np.array(rates["effort"]), strict=strict, **geo)
    except NonPhysicalInertiaError as exc:
        raise NonPhysicalInertiaError(f"{origin}: {exc}") from None
    except ModelError as exc:
        raise ModelFileError(f"{origin}: {exc}") from None


def _moving_successors(j, below):
    """The moving joints that follow joint j directly or through fixed joints (``below``: link -> its joints)."""
    out, links = [], [j.child]
    while links:
        for k in below.get(links.pop(), ()):
            if k.type == "fixed":
                links.append(k.child)
            else:
                out.append(k)
    return out


def _with_tilt_frames(rows, scale, notes):
    """Rows with an extra fixed frame before each frame whose axis is so nearly parallel to its antecedent's
    that one Khalil–Kleinfinger placement needs lengths far beyond the robot's size (a tilt α of 1e-6 turns a
    millimetre offset into r ≈ 1 km): the extra frame keeps the antecedent's axes and carries the offset, the
    frame itself then only tilts.  Returns (rows, table of (γ, b, α, d, θ, r) per row)."""
    out, table, new_index, pose = [], [], {0: 0}, {0: np.eye(4)}
    for i, (frame_name, a, j, F, child, link) in enumerate(rows, start=1):
        parent = new_index[a]
        values = kk_parameters(_inv(pose[parent]) @ F, scale)
        if max(abs(values[1]), abs(values[3]), abs(values[5])) > 10 * scale:
            mid = pose[parent].copy()
            mid[:3, 3] = F[:3, 3]
            out.append((f"{frame_name}_offset", parent, None, mid, None, ""))
            table.append(kk_parameters(_inv(pose[parent]) @ mid, scale))
            parent = len(out)
            pose[parent] = mid
            notes.append(f"{frame_name}_offset: an extra fixed frame, as {frame_name}'s axis is nearly parallel to its "
                         "antecedent's")
            values = kk_parameters(_inv(mid) @ F, scale)
        out.append((frame_name, parent, j, F, child, link))
        table.append(values)
        new_index[i] = len(out)
        pose[len(out)] = F
    return out, table


def _moving_frame(j, Fa, axis_line, moving, link_pose, scale):
    """Pose (4, 4) of the Khalil–Kleinfinger frame of moving joint j and a phrase saying how it was chosen."""
    p, z = axis_line[j.name]
    Oa = Fa[:3, 3]
    projection = p + ((Oa - p) @ z) * z
    if len(moving) == 1:
        k = moving[0]
        pk, w = axis_line[k.name]
        c = np.cross(z, w)
        zw = z @ w
        t = ((pk - p) @ (z - zw * w)) / (1 - zw * zw) if np.linalg.norm(c) > _TOL else math.inf
        # Nearly parallel axes (CAD exports) put the foot of the common normal kilometres away; they are
        # treated as parallel so that the table keeps lengths of the robot's size (it stays exact either way).
        if abs(t - (projection - p) @ z) <= 10 * scale:
            O = p + t * z
            # the common normal is along z_j × z_k: better conditioned than the difference of the two feet
            # when the axes nearly intersect
            x = c / np.linalg.norm(c)
            return _frame(z, _toward(x, link_pose), O), f"x along the common normal to the axis of {k.name}"
        x = _perpendicular(pk - projection, z)
        if x is not None:
            return (_frame(z, _toward(x, link_pose), projection),
                    f"x along the common normal to the (parallel) axis of {k.name}")
    x = _perpendicular(link_pose[:3, 0], z)
    if x is None:
        x = _perpendicular(link_pose[:3, 1], z)
    return _frame(z, x, projection), "x from the URDF link's x axis"


def _toward(x, link_pose):
    """±x, the sign that makes it closer to the URDF link's x axis (θ_j = 0 for URDFs written from a DH table)."""
    return -x if x @ link_pose[:3, 0] < -_TOL else x


# ---------------------------------------------------------------------------------------------------- export
def _num(x: float) -> str:
    return repr(float(x)) if x != 0 else "0"


def _vec(v) -> str:
    return " ".join(_num(x) for x in v)


def rpy_rotation(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """R = Rz(yaw) Ry(pitch) Rx(roll) (3, 3): URDF's roll, pitch, yaw (rad) about the fixed axes x, y, z."""
    cp, sp = math.cos(pitch), math.sin(pitch)
    return rot_z(yaw) @ np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]]) @ rot_x(roll)


def rpy_angles(R: np.ndarray) -> tuple[float, float, float]:
    """URDF roll, pitch, yaw (rad) of R = Rz(yaw) Ry(pitch) Rx(roll), the inverse of :func:`rpy_rotation`
    (|pitch| ≤ π/2; at pitch = ±π/2 the yaw is folded into the roll)."""
    pitch = math.atan2(-R[2, 0], math.hypot(R[0, 0], R[1, 0]))
    if math.hypot(R[0, 0], R[1, 0]) < 1e-12:
        return math.atan2(-R[1, 2], R[1, 1]), pitch, 0.0
    return math.atan2(R[2, 1], R[2, 2]), pitch, math.atan2(R[1, 0], R[0, 0])


def to_urdf(robot: Robot, *, base_link: str = "base_link") -> str:
    """The URDF text of ``robot``: one link per frame, in the frame R_j, that :func:`from_urdf` reads back.

    Raises ModelError for what URDF cannot hold: nonzero Ia, Foff or Stribeck terms, gravity other than
    [0, 0, −9.81], frame names that repeat or hold characters XML cannot carry.  The base link is called
    ``base_link`` unless a frame's link has that name, then ``base_link_0``, ``base_link_1``...

    Returns
    -------
    str
        URDF XML; joint j is named ``robot.frame_names[j-1]``, its child link ``<joint name>_link``.
    """
    check_robot(robot)
    if not isinstance(base_link, str) or not base_link:
        raise InputError(f"argument 'base_link' is {base_link!r}; give the name of the URDF base link")
    for what, text in [("robot name", robot.name), ("base_link", base_link)] + [
            (f"frame {j + 1} name", n) for j, n in enumerate(robot.frame_names)]:
        if not text or _XML_BAD.search(text):
            raise ModelError(f"robot '{_q(robot.name)[1:-1]}': {what} {_q(text)} is empty or holds characters XML "
                             "cannot carry (control characters); rename it before export")
    first: dict = {}
    for j, n in enumerate(robot.frame_names, start=1):
        if n in first:
            raise ModelError(f"robot '{_q(robot.name)[1:-1]}': frames {first[n]} and {j} are both named {_q(n)}; a URDF "
                             "needs unique joint names: export robot.replace(frame_names=...) with unique names")
        first[n] = j
    lost = [k for k in ("Ia", "Foff", "Fst") if np.any(getattr(robot, k) != 0)]
    if lost:
        raise ModelError(f"robot '{robot.name}': field(s) {', '.join(lost)} are nonzero and URDF has no element for "
                         f"them; export robot.replace({'=None, '.join(lost)}=None) instead")
    if not np.allclose(robot.gravity, _G, rtol=0, atol=1e-12):
        raise ModelError(f"robot '{robot.name}': gravity {robot.gravity.tolist()} differs from [0, 0, -9.81], which "
                         "URDF assumes in the base frame; export robot.replace(gravity=[0, 0, -9.81]) and rotate the "
                         "base when mounting it")
    root = ET.Element("robot", name=robot.name)
    children = {f"{n}_link" for n in robot.frame_names}  # distinct, as the frame names are
    base, k = base_link, 0
    while base in children:
        base, k = f"{base_link}_{k}", k + 1
    links = [base] + [f"{n}_link" for n in robot.frame_names]
    ET.SubElement(root, "link", name=base)
    for i in range(robot.nf):
        T = kk_transform(*(getattr(robot, g)[i] for g in ("gamma", "b", "alpha", "d", "theta", "r")))
        kind = ("revolute", "prismatic", "fixed")[robot.sigma[i]]
        k = robot.derived.joint_of[i]  # the joint's column of q
        if k >= 0:
            lo, hi = robot.qlim[k]
            if kind == "revolute" and np.isinf(lo) and np.isinf(hi):
                kind = "continuous"
        joint = ET.SubElement(root, "joint", name=robot.frame_names[i], type=kind)
        ET.SubElement(joint, "parent", link=links[robot.antecedent[i]])
        ET.SubElement(joint, "child", link=links[i + 1])
        ET.SubElement(joint, "origin", xyz=_vec(T[:3, 3]), rpy=_vec(rpy_angles(T[:3, :3])))
        if robot.sigma[i] != 2:
            ET.SubElement(joint, "axis", xyz="0 0 1")
            rates = {key: _num(x) if np.isfinite(x) else "0"
                     for key, x in (("effort", robot.taulim[k]), ("velocity", robot.qdlim[k]))}
            if np.isfinite(lo) or np.isfinite(hi) or set(rates.values()) != {"0"}:
                # an unlimited side is left out (read back as unlimited): URDF has no infinite number; an unknown
                # effort or velocity is written 0, which the readers take as none
                bounds = {side: _num(x) for side, x in (("lower", lo), ("upper", hi)) if np.isfinite(x)}
                ET.SubElement(joint, "limit", **bounds, **rates)
            if robot.Fv[i] or robot.Fc[i]:
                ET.SubElement(joint, "dynamics", damping=_num(robot.Fv[i]), friction=_num(robot.Fc[i]))
        link = ET.SubElement(root, "link", name=links[i + 1])
        M, S, IG = com_from_standard(robot.params[i])
        inertial = ET.SubElement(link, "inertial")
        ET.SubElement(inertial, "origin", xyz=_vec(S), rpy="0 0 0")
        ET.SubElement(inertial, "mass", value=_num(M))
        ET.SubElement(inertial, "inertia", ixx=_num(IG[0, 0]), ixy=_num(IG[0, 1]), ixz=_num(IG[0, 2]),
                      iyy=_num(IG[1, 1]), iyz=_num(IG[1, 2]), izz=_num(IG[2, 2]))
    ET.indent(root)
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
