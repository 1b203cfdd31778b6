"""Kinematics as code: the Jacobian of a frame and J̇q̇ as customized models.

The tracer records the forward recursion [9.84]–[9.87] that the dynamics run (:func:`robodyn.kinematics.
forward_components`) for one frame, with g = 0: its acceleration [a; ω̇] (of O_j, or of a point p of the link,
a = V̇_j + ω̇ × p + ω × (ω × p)), carried to R_0 by the frames' rotations. That acceleration is J q̈ + J̇ q̇, so
J is its derivative with respect to q̈ (:func:`robodyn.symbolic.derivative_model.differentiated`, which depends on
q only) and J̇ q̇ is its value at q̈ = 0: no recursion of its own, the one traced program for both.
"""

from __future__ import annotations

import dataclasses

import symengine as se

from robodyn.errors import InputError

from robodyn.kinematics import ancestors, forward_components, to_parent
from robodyn.model.arguments import frame_index
from robodyn.model.robot import check_robot
from robodyn.spatial import vadd, vcross
from robodyn.symbolic.codegen.printer import Argument
from robodyn.symbolic.customize import INPUT_NAMES, Recording, assignments, constants, standard_inertia
from robodyn.symbolic.derivative_model import differentiated
from robodyn.symbolic.engine import Program
from robodyn.symbolic.models import CustomizedModel

#: the kinds of :func:`kinematics_model`, each the numeric function of that name
KINEMATICS_KINDS = ("jacobian", "jacobian_dot_qd")


def _acceleration_model(robot, j: int, point, with_qdd: bool) -> CustomizedModel:
    """The customized model of [a; ω̇] (6,) in R_0 of frame index ``j`` (or of ``point`` in R_j), g = 0, with q̈
    an input (``with_qdd``) or 0."""
    prog = Program()
    consts = constants(prog, robot, False, False, standard_inertia(robot), gravity=False)
    rec = Recording()
    frames = [int(f) + 1 for f in robot.joint_frames]
    names = ("q", "qd", "qdd") if with_qdd else ("q", "qd")
    x = {k: rec.inputs([se.Symbol(f"{INPUT_NAMES[k]}{f}") for f in frames]) for k in names}
    qdd = x["qdd"] if with_qdd else [0.0] * robot.n
    rot, w, wd, Vd = forward_components(consts.robot, x["q"], x["qd"], qdd, (0.0, 0.0, 0.0), rec.backend)
    acc, alpha = Vd[j], wd[j]
    if point is not None:
        p = tuple(float(c) for c in point)
        acc = vadd(acc, vadd(vcross(alpha, p), vcross(w[j], vcross(w[j], p))))
    for i in ancestors(robot, j):   # from frame j down to the base: ^aA_i v, then ^{a(a)}A_a ...
        acc, alpha = to_parent(rot[i], acc), to_parent(rot[i], alpha)
    outs, _ = assignments(prog, rec, list(acc) + list(alpha), [f"ACC{k}" for k in (1, 2, 3)]
                          + [f"WP0{k}" for k in (1, 2, 3)])
    args = [Argument(k, (robot.n,), tuple(enumerate(rec.symbols[v.k] for v in x[k]))) for k in names]
    pruned = prog.pruned(list(outs))
    used = set().union(*(e.free_symbols for _, e in pruned.assignments))
    return CustomizedModel(robot=robot, kind="jacobian_dot_qd", parameters="standard", arguments=args,
                           output_shape=(6,), outputs=list(outs), program=pruned,
                           constants={s: v for s, v in consts.values.items() if s in used},
                           options=dict(symbolic_geometry=False, symbolic_inertia=False, gravity="constant",
                                        wrenches="none", friction=False, method="newton_euler"))


def check_frame_point(kind: str, frame, point) -> None:
    """InputError unless ``frame`` and ``point`` are None or ``kind`` is a kinematics kind (they are its constants)."""
    if kind not in KINEMATICS_KINDS and (frame is not None or point is not None):
        raise InputError(f"frame and point are for the kinds {', '.join(KINEMATICS_KINDS)}, not {kind}")


def kinematics_model(robot, kind: str, frame=None, point=None) -> CustomizedModel:
    """The customized model of ``kind`` for one frame of ``robot``:

    - ``"jacobian"``: J (6, n) of :func:`robodyn.jacobian`, argument q;
    - ``"jacobian_dot_qd"``: J̇ q̇ (6,) of :func:`robodyn.jacobian_dot_qd`, arguments q, qd;

    rows [v; ω] (J) or [a; ω̇] (J̇q̇) in R_0, of O_j or of ``point`` (3,) fixed to link j (coordinates in R_j, m,
    constants of the model). ``frame``: number 1..nf or name, default the end frame.
    """
    check_robot(robot)
    if kind not in KINEMATICS_KINDS:
        raise InputError(f"kind = {kind!r}; choose one of {', '.join(KINEMATICS_KINDS)}")
    j = frame_index(robot, frame)
    if kind == "jacobian_dot_qd":
        return _acceleration_model(robot, j, point, with_qdd=False)
    m = differentiated(_acceleration_model(robot, j, point, with_qdd=True), ("qdd",), "jacobian")
    return dataclasses.replace(m, kind="jacobian", arguments=m.arguments[:1])
