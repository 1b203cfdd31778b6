"""Commands on kinematics and payloads: fk (pose of a frame), jacobian, ik (joint values for a pose),
identify-payload (a load on a known arm from measured torques)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import typer
from rich.text import Text

from robodyn.cli._app import app
from robodyn.cli._common import (JSON_OPTION, ROBOT_ARGUMENT, chop, console, get_robot, joint_vector, names_legend,
                                matrix_table, parse_vector, print_json, print_table, read_csv_columns, user_errors)
from robodyn.errors import InputError
from robodyn.model.urdf import rpy_angles, rpy_rotation

FRAME_OPTION = typer.Option(None, "--frame", help="Frame: number 1..nf, frame name or URDF link name (e.g. tool0); "
                                                  "default the end frame.")
DEGREES_OPTION = typer.Option(False, "--degrees", help="Revolute joints (and --rpy) in degrees.")


def _frame(robot, text: str | None) -> int:
    """The frame number j (1..nf) of a --frame value: None (the end frame), a frame number (digits) or a name."""
    from robodyn.model.arguments import frame_index

    return frame_index(robot, None if text is None else int(text) if text.strip().isdigit() else text) + 1


def _frame_json(robot, j: int, **values) -> None:
    print_json({"robot": robot.name, "frame": j, "frame_name": robot.frame_names[j - 1], **values})


def _frame_label(robot, j: int) -> str:
    link = robot.link_names[j - 1]
    return f"frame {j} ({robot.frame_names[j - 1]}" + (f", link {link})" if link else ")")


def _pose_lines(T: np.ndarray, degrees: bool) -> list[str]:
    rpy = np.array(rpy_angles(T[:3, :3]))
    unit = "deg" if degrees else "rad"
    rpy = np.rad2deg(rpy) if degrees else rpy
    return [f"position (m): [{', '.join(f'{x:.6g}' for x in chop(T[:3, 3]))}]",
            f"roll, pitch, yaw ({unit}, R = Rz(yaw) Ry(pitch) Rx(roll)): [{', '.join(f'{x:.6g}' for x in chop(rpy))}]",
            "rotation matrix:"] + ["  [" + ", ".join(f"{x:9.6f}" for x in chop(row)) + "]" for row in T[:3, :3]]


@app.command("fk")
def fk_command(
    robot: str = ROBOT_ARGUMENT,
    q: str = typer.Option(None, "--q", help="Joint positions, n numbers (rad | m), default zeros."),
    frame: str = FRAME_OPTION,
    json_out: bool = JSON_OPTION,
    degrees: bool = DEGREES_OPTION,
) -> None:
    """Forward kinematics: the pose ^0T of a frame in the base frame R_0 (Khalil & Dombre ch. 3)."""
    from robodyn.simulation.inverse_kinematics import tool_pose

    with user_errors():
        r = get_robot(robot)
        qv = joint_vector(r, q, "--q", degrees, position=True)
        j = _frame(r, frame)
        T = tool_pose(r, qv, j)
    if json_out:
        _frame_json(r, j, q=qv, T=T, position=T[:3, 3], rpy=np.array(rpy_angles(T[:3, :3])))
        return
    console.print(Text.assemble((r.name, "bold"), f": pose of {_frame_label(r, j)} in R_0"))
    for line in _pose_lines(T, degrees):
        console.print(line, highlight=False)


@app.command("jacobian")
def jacobian_command(
    robot: str = ROBOT_ARGUMENT,
    q: str = typer.Option(None, "--q", help="Joint positions, n numbers (rad | m), default zeros."),
    frame: str = FRAME_OPTION,
    point: str = typer.Option(None, "--point", help="A point of the frame's link, 3 coordinates in that frame "
                                                    "(m); default its origin."),
    json_out: bool = JSON_OPTION,
    degrees: bool = DEGREES_OPTION,
) -> None:
    """Geometric Jacobian J (6 x n) of a frame in R_0: [v; ω] = J q̇ (v of its origin or of --point)."""
    from robodyn.kinematics import jacobian

    with user_errors():
        r = get_robot(robot)
        qv = joint_vector(r, q, "--q", degrees, position=True)
        j = _frame(r, frame)
        p = None if point is None else parse_vector(point, 3, "--point", what="x, y, z in m")
        J = jacobian(r, qv, j, p)
    if json_out:
        _frame_json(r, j, q=qv, J=J)
        return
    console.print(Text.assemble((r.name, "bold"), f": Jacobian of {_frame_label(r, j)}, rows vx vy vz (m/s) "
                                f"wx wy wz (rad/s), one column per joint"))
    console.print(names_legend(r.joint_names), highlight=False)
    console.print(matrix_table(J, ("vx", "vy", "vz", "wx", "wy", "wz"), first=1))


@app.command("ik")
def ik_command(
    robot: str = ROBOT_ARGUMENT,
    xyz: str = typer.Option(..., "--xyz", help="Target position of the frame's origin in R_0, 3 numbers (m)."),
    rpy: str = typer.Option(None, "--rpy", help="Target roll, pitch, yaw (rad; deg with --degrees), "
                                                "R = Rz(yaw) Ry(pitch) Rx(roll); default the orientation at --q0."),
    q0: str = typer.Option(None, "--q0", help="Initial guess, n numbers; the solution nearest it is found "
                                              "(default zeros)."),
    frame: str = FRAME_OPTION,
    json_out: bool = JSON_OPTION,
    degrees: bool = DEGREES_OPTION,
) -> None:
    """Inverse kinematics: joint values that put a frame at a pose (damped least-squares Newton iterations from
    --q0; an unreachable target is an error)."""
    from robodyn.simulation.inverse_kinematics import inverse_kinematics, tool_pose

    with user_errors():
        r = get_robot(robot)
        start = joint_vector(r, q0, "--q0", degrees, position=True)
        j = _frame(r, frame)
        target = tool_pose(r, start, j)
        target[:3, 3] = parse_vector(xyz, 3, "--xyz", what="x, y, z in m")
        if rpy is not None:
            angles = parse_vector(rpy, 3, "--rpy", what="roll, pitch, yaw")
            target[:3, :3] = rpy_rotation(*(np.deg2rad(angles) if degrees else angles))
        q = inverse_kinematics(r, target, start, j)
        reached = tool_pose(r, q, j)
    if json_out:
        _frame_json(r, j, q=q, T=reached)
        return
    revolute = r.sigma[r.joint_frames] == 0
    shown = np.where(revolute, np.rad2deg(q), q) if degrees else q
    console.print(Text.assemble((r.name, "bold"), f": joint values that put {_frame_label(r, j)} at the target"))
    print_table("joint", "q" + (" (deg | m)" if degrees else " (rad | m)"), compact=True,
                rows=[(name, f"{value:.10g}") for name, value in zip(r.joint_names, chop(shown))])
    console.print(f"q = {','.join(f'{x:.12g}' for x in chop(shown))}", highlight=False, soft_wrap=True)


@app.command("identify-payload")
def identify_payload_command(
    robot: str = ROBOT_ARGUMENT,
    data: Path = typer.Argument(..., help="CSV with columns q1..qn, tau1..taun (static poses) or also qd1..qdn, "
                                          "qdd1..qddn (a motion); optional t."),
    frame: str = FRAME_OPTION,
    regularization: float = typer.Option(0.0, "--regularization", help="Weight of |φ|² next to the normalised "
                                                                         "fit (motion data)."),
    json_out: bool = JSON_OPTION,
) -> None:
    """Identify a payload on a known arm from measured joint torques: its mass, centre of mass and inertia (a
    motion) or mass and centre of mass (static poses), by least squares on the difference between the measured
    torques and the arm's own inverse dynamics."""
    from robodyn.identification.payload import identify_payload

    with user_errors():
        r = get_robot(robot)
        n = r.n
        names = {p: [f"{p}{k}" for k in range(1, n + 1)] for p in ("q", "qd", "qdd", "tau")}
        cols = read_csv_columns(data, ["t"] + [c for v in names.values() for c in v], str(data),
                                required=names["q"] + names["tau"],
                                hint=f"give q1..q{n} and tau1..tau{n} (and qd1..qd{n}, qdd1..qdd{n} for a motion)")
        arrays = {p: (np.stack([cols[c] for c in v], -1) if all(c in cols for c in v) else None)
                  for p, v in names.items()}
        if (arrays["qd"] is None) != (arrays["qdd"] is None):
            raise InputError(f"{data}: give both qd1..qd{n} and qdd1..qdd{n} (a motion) or neither (static poses)")
        j = _frame(r, frame)
        res = identify_payload(r, arrays["q"], arrays["qd"], arrays["qdd"], arrays["tau"], frame=j,
                               regularization=regularization)
    names10 = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M")
    if json_out:
        _frame_json(r, j, static=res.static, mass=res.mass, com=res.com, inertia=res.inertia,
                    params=dict(zip(names10, res.params.tolist())), std=dict(zip(names10, res.std.tolist())),
                    residual_rms=res.residual_rms, rows=len(arrays["q"]))
        return
    kind = "static poses: mass and first moments" if res.static else "motion: mass, first moments and inertia"
    console.print(Text.assemble((r.name, "bold"), f": payload on {_frame_label(r, j)}, {len(arrays['q'])} rows "
                                f"({kind})"))
    console.print(f"mass (kg): {res.mass:.6g}", highlight=False)
    console.print(f"centre of mass in R_{j} (m): [{', '.join(f'{x:.6g}' for x in chop(res.com))}]", highlight=False)
    print_table("parameter", "value (SI, in R_j about O_j)", "σ", compact=True,
                rows=[(name, f"{value:.6g}", "—" if s == 0 else f"{s:.2g}")
                      for name, value, s in zip(names10, chop(res.params), res.std)])
    console.print("torque residual RMS per joint (N m | N): "
                  f"[{', '.join(f'{x:.3g}' for x in res.residual_rms)}]", highlight=False)
