"""Commands for gravity-compensation calibration (Dellin): calibrate-gravity, calibration-poses, demo wam-gravity."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import typer


from robodyn.cli._app import app
from robodyn.cli._common import (JSON_OPTION, ROBOT_ARGUMENT, SPAN_OPTION, TOPIC_OPTION, check_outputs, console,
                                get_robot, is_joint_log, parse_span, print_json, print_table,
                                read_csv_columns, read_log, robot_file, span_rows, user_errors)
from robodyn.cli._limits import check_work, count as check_count, number as check_number, seed as check_seed
from robodyn.cli.studies import demo_app
from robodyn.errors import InputError
from robodyn.logs import STANDSTILL_DURATION, STANDSTILL_VELOCITY, standstill_poses


def _read_csv(path: Path, n: int):
    """q, tau (rows, n) of a CSV; then None for a table of static poses (header q1..qn, tau1..taun in any order;
    an empty cell or ``nan`` is NaN, which ``calibrate_gravity`` reports), or the columns t (rows,) and qd (rows, n)
    or None of a recording (header t, q1..qn[, qd1..qdn][, qdd1..qddn], tau1..taun).  Errors name the line."""
    names = [f"{p}{k}" for p in ("q", "tau") for k in range(1, n + 1)]
    extra = ["t"] + [f"{p}{k}" for p in ("qd", "qdd") for k in range(1, n + 1)]
    cols = read_csv_columns(path, names + extra, str(path), missing_values=True, required=names,
                            hint=f"the header must name q1..q{n}, tau1..tau{n} (and t for a recording)")
    q, tau = (np.stack([cols[f"{p}{k}"] for k in range(1, n + 1)], -1) for p in ("q", "tau"))
    if "t" not in cols:
        if len(cols) > len(names):
            raise InputError(f"{path}: velocity or acceleration columns belong to a recording; give its t column "
                             "too, or only q1..qn, tau1..taun (one static pose per row)")
        return q, tau, None
    qd = [cols.get(f"qd{k}") for k in range(1, n + 1)]
    if any(c is None for c in qd) and any(c is not None for c in qd):
        raise InputError(f"{path}: give all of qd1..qd{n} or none")
    bad = ~np.isfinite(np.column_stack([cols[c] for c in cols]))
    if bad.any():
        row = int(np.flatnonzero(bad.any(axis=1))[0])
        raise InputError(f"{path}: data row {row + 1} of the recording has an empty or non-finite cell; every "
                         "cell of a recording (a t column) must be a number")
    return q, tau, {"t": cols["t"], "qd": None if qd[0] is None else np.stack(qd, -1)}


def read_static_poses(path: Path, robot, topic: str = "/joint_states", velocity: float = STANDSTILL_VELOCITY,
                      duration: float = STANDSTILL_DURATION, span=None):
    """The static poses of ``robodyn calibrate-gravity``: q, tau (P, n) and the standstill segments found
    (:class:`robodyn.logs.StandstillPoses`, or None for a CSV of static poses).

    A CSV without a ``t`` column holds one static pose per row.  A recording — a joint log
    read by :func:`robodyn.read_joint_log` (ROS 1/2 bag, HDF5, Parquet) or a CSV with ``t`` — gives one pose per
    standstill segment (:func:`robodyn.logs.standstill_poses`: every |q̇_j| below ``velocity`` for at least
    ``duration`` s; q and τ averaged over the segment).  ``span``: the messages or rows of a joint log read, or
    the data rows of a CSV.
    """
    if is_joint_log(path):  # the same reader as robodyn identify: joints mapped by name
        log = read_log(path, robot, topic, "gravity calibration", span)
        t, q, tau, qd = log.t, log.q, log.tau, log.qd
    else:
        q, tau, series = _read_csv(path, robot.n)
        cut = span_rows(path, span, {"q": q, "tau": tau} | (series or {}))
        q, tau = cut["q"], cut["tau"]
        if series is None:
            return q, tau, None
        t, qd = cut["t"], cut["qd"]
        if np.any(np.diff(t) <= 0):
            raise InputError(f"{path}: the t column must be strictly increasing (s)")
    found = standstill_poses(t, q, tau, qd, velocity=velocity, duration=duration)
    return found.q, found.tau, found


def _joints(text: str | None, n: int):
    if text is None:
        return None
    try:
        joints = [int(p) for p in text.replace(",", " ").split()]
    except ValueError:
        raise InputError(f"option --joints = {text!r}: give joint numbers separated by commas, e.g. 4,5,6,7") from None
    if not joints:
        raise InputError(f"option --joints = {text!r}: give at least one joint number")
    bad = [j for j in joints if not 1 <= j <= n]
    if bad:
        raise InputError(f"option --joints = {text!r}: joint {bad[0]} does not exist; give numbers from 1 to {n}")
    twice = sorted({j for j in joints if joints.count(j) > 1})
    if twice:
        raise InputError(f"option --joints = {text!r}: joint {twice[0]} is given twice; name each joint once")
    return joints


@app.command("calibrate-gravity")
def calibrate_gravity_command(
    robot: str = typer.Argument(..., help="Robot: built-in name (see `robodyn list`), YAML model file or URDF (its geometry is used)."),
    poses: Path = typer.Argument(..., help="CSV with header q1..qn, tau1..taun: one static pose per row. Or a "
                                           "recording, one pose per standstill segment: a joint log (ROS 1/2 bag "
                                           ".bag, .db3, .mcap or the bag folder, HDF5, Parquet; see docs/logs.md) "
                                           "or a CSV with t, q1..qn, tau1..taun."),
    topic: str = TOPIC_OPTION,
    span: str = SPAN_OPTION,
    standstill_velocity: float = typer.Option(STANDSTILL_VELOCITY, "--standstill-velocity",
                                              help="With a recording: a sample is at standstill when every |qd| is "
                                                   "below this (rad/s | m/s)."),
    standstill_duration: float = typer.Option(STANDSTILL_DURATION, "--standstill-duration",
                                              help="With a recording: shortest standstill segment that gives a "
                                                   "pose (s)."),
    method: str = typer.Option("coupled", help="coupled (Dellin eqs 21-25), iterative (eqs 26-28) or ols"),
    joints: str = typer.Option(None, help="joints whose torques are used, e.g. 4,5,6,7 (default all)"),
    offsets: bool = typer.Option(False, "--offsets", help="also estimate a constant torque offset per joint"),
    out: Path = typer.Option(None, help="write the calibration (YAML) here"),
    plot: Path = typer.Option(None, help="write measured vs compensation torques to this PNG file"),
    json_out: bool = JSON_OPTION,
) -> None:
    """Calibrate the cumulative first moments μ_j (Dellin) from torques measured in static poses."""
    from robodyn.identification.gravity import calibrate_gravity

    with user_errors():
        model = get_robot(robot)
        check_outputs(("--out", out), ("--plot", plot),
                      inputs=[("ROBOT model file", robot_file(robot)), ("POSES file", poses)])
        check_number(standstill_velocity, "--standstill-velocity", 0.0, above=True, unit="rad/s | m/s")
        check_number(standstill_duration, "--standstill-duration", 0.0, unit="s")
        q, tau, found = read_static_poses(poses, model, topic, standstill_velocity, standstill_duration,
                                          parse_span(span))
        cal = calibrate_gravity(model, q, tau, method=method, joints=_joints(joints, model.n), offsets=offsets)
        if plot is not None:
            cal.plot(plot, q, tau)
        if out is not None:
            cal.save(out)
        if json_out:
            print_json({"robot": model.name, "method": cal.method, "poses": cal.poses, "joints": list(cal.joints),
                        "mu": cal.mu, "mu_std": cal.std, "identifiable": cal.identifiable,
                        "offsets": cal.offsets, "offsets_std": cal.offsets_std, "residual_rms": cal.residual_rms,
                        "condition_number": cal.condition_number, "notes": list(cal.notes),
                        "standstill_segments": None if found is None else found.times,
                        "out": None if out is None else str(out), "plot": None if plot is None else str(plot)},
                       undefined=("mu_std", "offsets_std", "residual_rms"))  # NaN: not defined (e.g. unused joints)
            return
        rows = []
        for j in range(model.n):
            cells = [("—" if not cal.identifiable[j, a] else f"{cal.mu[j, a]:.6g} ± {cal.std[j, a]:.2g}")
                     for a in range(3)]
            off = f"{cal.offsets[j]:.4g} ± {cal.offsets_std[j]:.2g}" if np.isfinite(cal.offsets_std[j]) else "—"
            rows.append((str(j + 1), *cells, off,
                         f"{cal.residual_rms[j]:.4g}" if np.isfinite(cal.residual_rms[j]) else "not used"))
        print_table("joint", "μx (kg m)", "μy (kg m)", "μz (kg m)", "offset (N m)", "residual RMS (N m)",
                    title=f"{model.name}: cumulative first moments, {cal.method} method, {cal.poses} poses "
                          f"(± 1 std; '—': not identifiable)", rows=rows)
        console.print(f"condition number of the stacked regressor: {cal.condition_number:.4g}", highlight=False)
        if found is not None:
            console.print(f"{found.count} static poses: standstill segments of {poses} (|qd| < "
                          f"{standstill_velocity:g} for at least {standstill_duration:g} s)", highlight=False)
        for note in cal.notes:
            console.print(f"  {note}", highlight=False)
        for what, path in (("calibration", out), ("plot", plot)):
            if path is not None:
                console.print(f"{what} written to {path}", highlight=False)


@app.command("calibration-poses")
def calibration_poses_command(
    robot: str = ROBOT_ARGUMENT,
    count: int = typer.Option(..., "--count", help="number of static poses, 1 or more"),
    out: Path = typer.Option(..., "--out", help="write the poses as CSV (q1..qn) here"),
    seed: int = typer.Option(0, help="random seed (the poses are a deterministic function of it)"),
    unlimited: bool = typer.Option(False, "--unlimited", help="accept a robot without joint limits (poses within "
                                                              "±π rad / ±0.5 m: may be unsafe on hardware)"),
    json_out: bool = JSON_OPTION,
) -> None:
    """Well-conditioned static poses inside the joint limits for `robodyn calibrate-gravity`."""
    from robodyn.cli.core import write_csv_atomic
    from robodyn.identification.gravity import calibration_poses, gravity_parameter_structure, gravity_regressor

    with user_errors():
        model = get_robot(robot)
        check_outputs(("--out", out), inputs=[("ROBOT model file", robot_file(robot))])
        check_count(count, "--count")
        check_seed(seed)
        n = model.n
        # the D-optimal search (identification.gravity.calibration_poses): max(600, 10 count) candidates, each
        # with a 3n x 3n information matrix, visited twice per chosen pose
        candidates = max(600, 10 * count)
        check_work(f"calibration-poses --count {count} (n = {n})", nbytes=8.0 * candidates * 9 * n * n * 4,
                   flops=100.0 * count * candidates * n**3, hint="give a smaller --count")
        q = calibration_poses(model, count, seed=seed, unlimited=unlimited)
        base = gravity_parameter_structure(model).base
        s = np.linalg.svd(gravity_regressor(model, q).reshape(-1, 3 * model.n)[:, base], compute_uv=False)
        write_csv_atomic(out, [f"q{k}" for k in range(1, model.n + 1)], q)
        if json_out:
            print_json({"robot": model.name, "count": count, "seed": seed, "out": str(out),
                        "condition_number": s[0] / s[-1], "min_singular_value": s[-1]})
            return
        console.print(f"{count} poses written to {out}: condition number {s[0] / s[-1]:.4g}, smallest singular "
                      f"value {s[-1]:.4g} (stacked gravity regressor, {base.size} identifiable components)",
                      highlight=False)


@demo_app.command("wam-gravity")
def wam_gravity_command(json_out: bool = JSON_OPTION) -> None:
    """Barrett WAM: the wam7 model's cumulative first moments next to libbarrett's calibrated ones (Dellin)."""
    from robodyn.identification.wam import wam_gravity_study

    with user_errors():
        s = wam_gravity_study()
        if json_out:
            print_json({"model_libbarrett": s.model_libbarrett, "calibrated_libbarrett": s.calibrated_libbarrett,
                        "model_grouped": s.model_grouped, "calibrated_grouped": s.calibrated_grouped,
                        "identifiable": s.identifiable, "link_relative_difference": s.link_relative_difference,
                        "torque_rms": s.torque_rms, "torque_scale": s.torque_scale},
                       undefined=("link_relative_difference",))
            return
        print_table("link", "model μ (kg m)", "libbarrett μ (kg m)",
                    title="μ_j in libbarrett's frames (standard DH, frame j at the end of link j)",
                    rows=[(str(j + 1), _vec(s.model_libbarrett[j]), _vec(s.calibrated_libbarrett[j]))
                          for j in range(7)])
        ok, rel = s.identifiable.any(axis=1), s.link_relative_difference
        print_table("link", "model (x, y)", "libbarrett (x, y)", "‖Δ‖/‖libbarrett‖", "gravity torque RMS Δ (N m)",
                    "RMS torque (N m)",
                    title="identifiable first moments, robodyn frame j (z components grouped into link j−1)",
                    rows=[(str(j + 1), _vec(s.model_grouped[j, :2]) if ok[j] else "—",
                           _vec(s.calibrated_grouped[j, :2]) if ok[j] else "—",
                           f"{rel[j]:.1%}" if np.isfinite(rel[j]) else "—", f"{s.torque_rms[j]:.3g}",
                           f"{s.torque_scale[j]:.3g}") for j in range(7)])


def _vec(v) -> str:
    return "(" + ", ".join(f"{x:+.4f}" for x in v) + ")"
