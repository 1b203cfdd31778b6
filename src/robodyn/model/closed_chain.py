"""Robots with closed kinematic loops: a spanning tree plus loop-closure (cut) joints.

Khalil & Dombre describe a closed-loop robot by opening each loop at one joint, the cut joint: what remains is
a tree structure (a :class:`~robodyn.model.Robot` with antecedents a(j)), and each cut joint becomes a
loop-closure constraint between two frames of the tree. Here a loop closure says that a point fixed to frame
``frame`` (coordinates in that frame) coincides with a point fixed to frame ``to`` (0: the base), on the
chosen ``rows`` of the base axes x, y, z — for a planar loop closed by a revolute cut joint, rows [0, 1]. The
tree's joints are split into active (motorised) joints and passive ones; there must be as many independent
closure equations as passive joints (De Luca's parallelogram: 2 active, 2 passive, 2 equations).

Model file: the usual ``name / gravity / joints / links`` of the tree, and::

    loops:
      - {name: C, frame: 3, point: [1.0, 0, 0], to: 4, to_point: [0.5, 0, 0], rows: [0, 1]}
    active: [j1, j2]            # names (or 1-based frame numbers) of the motorised joints
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from robodyn.errors import ModelError, ModelFileError
from robodyn.model.io import parse_yaml, read_yaml_file, robot_from_document
from robodyn.model.robot import Robot

_LOOP_KEYS = ("name", "frame", "point", "to", "to_point", "rows")


@dataclass(frozen=True)
class LoopClosure:
    """One cut joint: point ``point`` of frame ``frame`` (in R_frame, m) coincides with point ``to_point`` of
    frame ``to`` (in R_to; ``to = 0`` is the base) along the base axes ``rows`` (0 = x, 1 = y, 2 = z)."""

    frame: int
    point: tuple
    to: int
    to_point: tuple
    rows: tuple = (0, 1, 2)
    name: str = ""


@dataclass(frozen=True, eq=False)
class ClosedChainRobot:
    """A closed-loop robot: ``tree`` (the spanning tree, a :class:`Robot`), its ``loops`` and its ``active``
    joints (0-based indices into the tree's joint variables q). The remaining joints are passive."""

    tree: Robot
    loops: tuple
    active: tuple
    passive: tuple = field(init=False)

    def __post_init__(self):
        n = self.tree.n
        act = tuple(int(a) for a in self.active)
        if len(set(act)) != len(act) or any(not 0 <= a < n for a in act):
            raise ModelError(f"closed chain '{self.tree.name}': active joints {list(act)} must be distinct "
                             f"indices 0..{n - 1}")
        if not self.loops:
            raise ModelError(f"closed chain '{self.tree.name}': give at least one loop closure")
        for lp in self.loops:
            for which, f in (("frame", lp.frame), ("to", lp.to)):
                if not 0 <= f <= self.tree.nf or (which == "frame" and f == 0):
                    raise ModelError(f"closed chain '{self.tree.name}', loop '{lp.name}': {which} = {f} is not a "
                                     f"frame 1..{self.tree.nf}" + (" or 0 (base)" if which == "to" else ""))
            if not lp.rows or any(r not in (0, 1, 2) for r in lp.rows) or len(set(lp.rows)) != len(lp.rows):
                raise ModelError(f"closed chain '{self.tree.name}', loop '{lp.name}': rows {list(lp.rows)} must "
                                 "be distinct axes among 0 (x), 1 (y), 2 (z)")
        object.__setattr__(self, "active", act)
        object.__setattr__(self, "passive", tuple(i for i in range(n) if i not in act))
        m = sum(len(lp.rows) for lp in self.loops)
        if m != len(self.passive):
            raise ModelError(f"closed chain '{self.tree.name}': {m} loop-closure equations but {len(self.passive)} "
                             "passive joints; the loops must determine the passive joints (as many equations as "
                             "passive joints: choose the rows of each loop or the active joints accordingly)")

    @property
    def name(self) -> str:
        return self.tree.name

    @property
    def n_active(self) -> int:
        return len(self.active)

    def __repr__(self) -> str:
        return (f"ClosedChainRobot('{self.tree.name}', n={self.tree.n}, active={list(self.active)}, "
                f"loops={len(self.loops)})")


def _joint_index(tree: Robot, value, where: str) -> int:
    jf = list(tree.joint_frames)
    if isinstance(value, str):
        if value not in tree.frame_names:
            raise ModelFileError(f"{where}: '{value}' is not a joint of the tree; joints: {list(tree.frame_names)}")
        frame = tree.frame_names.index(value)
    elif isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= tree.nf:
        frame = value - 1
    else:
        raise ModelFileError(f"{where}: {value!r} is not a joint name or frame number 1..{tree.nf}")
    if frame not in jf:
        raise ModelFileError(f"{where}: frame {frame + 1} is fixed (sigma: 2), it cannot be an active joint")
    return jf.index(frame)


def _point(value, where: str, name: str) -> tuple:
    if not (isinstance(value, list) and len(value) == 3 and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                                 for v in value)):
        raise ModelFileError(f"{where}: field {name} must be a list of 3 numbers (m, in the frame)")
    return tuple(float(v) for v in value)


def closed_chain_from_text(text: str, origin: str = "<string>") -> ClosedChainRobot:
    """Parse a closed-chain model file (the tree's usual sections plus ``loops`` and ``active``)."""
    return _from_document(parse_yaml(text, origin), origin)


def _from_document(doc, origin: str) -> ClosedChainRobot:
    if not isinstance(doc, dict):
        raise ModelFileError(f"{origin}: expected a mapping with keys name, gravity, joints, links, loops, active")
    loops_doc, active_doc = doc.pop("loops", None), doc.pop("active", None)
    if not isinstance(loops_doc, list) or not loops_doc:
        raise ModelFileError(f"{origin}: 'loops' must be a non-empty list of loop closures "
                             "({frame, point, to, to_point, rows})")
    if not isinstance(active_doc, list) or not active_doc:
        raise ModelFileError(f"{origin}: 'active' must be a non-empty list of joint names or frame numbers")
    # the tree goes through the ordinary model-file parser (same checks and messages, rows numbered as written)
    tree = robot_from_document(doc, origin)
    loops = []
    for k, row in enumerate(loops_doc, start=1):
        where = f"{origin}, loops row {k}"
        if not isinstance(row, dict):
            raise ModelFileError(f"{where}: expected a mapping like {{frame: 3, point: [..], to: 4, to_point: [..]}}")
        unknown = set(row) - set(_LOOP_KEYS)
        if unknown:
            raise ModelFileError(f"{where}: unknown field(s) {sorted(unknown)}; allowed: {', '.join(_LOOP_KEYS)}")
        for key in ("frame", "to"):
            v = row.get(key)
            if not (isinstance(v, int) and not isinstance(v, bool)):
                raise ModelFileError(f"{where}: field {key} must be a frame number (to: 0 is the base)")
        rows = row.get("rows", [0, 1, 2])
        if not (isinstance(rows, list) and all(isinstance(r, int) for r in rows)):
            raise ModelFileError(f"{where}: field rows must be a list of axes among 0 (x), 1 (y), 2 (z)")
        loops.append(LoopClosure(frame=row["frame"], point=_point(row.get("point", [0, 0, 0]), where, "point"),
                                 to=row["to"], to_point=_point(row.get("to_point", [0, 0, 0]), where, "to_point"),
                                 rows=tuple(rows), name=str(row.get("name", f"loop{k}"))))
    active = [_joint_index(tree, v, f"{origin}, active[{i}]") for i, v in enumerate(active_doc)]
    try:
        return ClosedChainRobot(tree=tree, loops=tuple(loops), active=tuple(active))
    except ModelError as exc:
        raise ModelFileError(f"{origin}: {exc}") from None


def load_closed_chain(path: str | os.PathLike) -> ClosedChainRobot:
    """Load a closed-chain model file ``*.yaml`` (see the module docstring for the ``loops`` section).

    The file is read by robodyn's one hardened YAML reader (:func:`robodyn.model.io.read_yaml_file`: size,
    encoding, depth, no aliases, no duplicate keys, YAML 1.2 scalars), as model files are.

    Raises
    ------
    ModelFileError
        A missing, unreadable or malformed file; the message names the file, the row and the field.
    """
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise ModelFileError(f"load_closed_chain: expected the path of a .yaml file, got {type(path).__name__} {str(path)[:40]!r}")
    return _from_document(read_yaml_file(path, str(path)), str(path))
