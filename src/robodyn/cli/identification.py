"""Commands ``identify`` and ``excite``: dynamic identification from a CSV of measurements (Khalil & Dombre
§9.4, Gautier's least squares) and optimal excitation trajectories (Swevers)."""

from __future__ import annotations

import io
import re
import sys
from contextlib import contextmanager, redirect_stdout
from pathlib import Path

import numpy as np
import typer


from robodyn.cli._app import app
from robodyn.cli._common import (ROBOT_ARGUMENT, SPAN_OPTION, TOPIC_OPTION, Table, check_outputs, console, get_robot,
                                is_joint_log, parse_span, parse_vector, print_json, read_csv_columns, read_log,
                                require_columns, robot_file, span_rows, user_errors, write_outputs)
from robodyn.cli._limits import check_work, count, number, seed as check_seed
from robodyn.errors import InputError
from robodyn.logs import other_joints_message


def read_measurements(path: Path, robot, motor: bool = False) -> dict:
    """Read a CSV with header ``t, q1..qn, tau1..taun`` (with or without measured velocities ``qd1..qdn``), or
    ``[t,] q1..qn, qd1..qdn, qdd1..qddn, tau1..taun``; with ``motor``, also motor-side ``t, qm1..qmn,
    taum1..taumn``.

    Returns a dict of arrays: ``q``, ``tau`` (N, n), ``t`` (N,) or None, ``qd``, ``qdd`` (N, n) or None (the
    exact states of a file with accelerations), ``velocity`` (N, n) or None (the measured q̇ of a file without
    accelerations, filtered and differentiated by the preparation), and ``motor`` (whether ``q``, ``tau`` hold the
    motor-side qm, taum).  Errors name the file, the line and the column.
    """
    n = robot.n
    q_names = [f"q{k}" for k in range(1, n + 1)]
    tau_names = [f"tau{k}" for k in range(1, n + 1)]
    d_names = [f"{p}{k}" for p in ("qd", "qdd") for k in range(1, n + 1)]
    m_names = [f"{p}{k}" for p in ("qm", "taum") for k in range(1, n + 1)]
    cols = read_csv_columns(path, q_names + tau_names + d_names + ["t"] + m_names, str(path),
                            check_header=lambda header: _check_joint_count(path, header, robot))
    pick = lambda names: np.stack([cols[c] for c in names], -1)  # noqa: E731
    has_m = [c for c in m_names if c in cols]
    if has_m:
        if not motor:
            raise InputError(f"{path}: motor-side columns ({', '.join(has_m[:3])}...) need the coupling: give "
                             "--transmission tr.yaml, or joint-side columns q1.., tau1..")
        joint_side = [c for c in q_names + tau_names + d_names if c in cols]
        if joint_side:
            raise InputError(f"{path}: both motor-side (qm, taum) and joint-side ({', '.join(joint_side[:3])}) "
                             "columns; give one side only")
        require_columns(cols, m_names + ["t"], str(path),
                        f"motor-side data need t, qm1..qm{n}, taum1..taum{n} (one motor per joint)")
        return {"t": cols["t"], "q": pick(m_names[:n]), "tau": pick(m_names[n:]), "qd": None, "qdd": None,
                "velocity": None, "motor": True}
    has_qd, has_qdd = (any(c in cols for c in names) for names in (d_names[:n], d_names[n:]))
    needed = d_names if has_qdd else ["t"] + (d_names[:n] if has_qd else [])
    require_columns(cols, q_names + tau_names + needed, str(path),
                    f"give t, q1..q{n}, tau1..tau{n} (velocities and accelerations are then computed; measured "
                    f"velocities qd1..qd{n} are filtered and differentiated) or q1..q{n}, qd1..qd{n}, qdd1..qdd{n}, "
                    f"tau1..tau{n}" + (f", or motor-side t, qm1..qm{n}, taum1..taum{n}" if motor else ""))
    exact = pick(d_names[:n]) if has_qdd else None
    return {
        "t": cols.get("t"), "q": pick(q_names), "tau": pick(tau_names), "qd": exact,
        "qdd": pick(d_names[n:]) if has_qdd else None, "velocity": pick(d_names[:n]) if has_qd and not has_qdd
        else None, "motor": False,
    }


def _check_joint_count(path: Path, header: list, robot) -> None:
    """InputError when a CSV's position columns (q1.. or qm1..; a file with both is refused after) count other
    joints than the robot has."""
    sides = [prefix for prefix in ("q", "qm") if any(re.fullmatch(prefix + r"[0-9]+", c) for c in header)]
    for prefix in sides if len(sides) == 1 else ():
        k = 0
        while f"{prefix}{k + 1}" in header:
            k += 1
        if k and k != robot.n:
            raise InputError(f"{path}: columns {prefix}1..{prefix}{k} hold {k} joint{'s' if k > 1 else ''}; "
                             + other_joints_message(robot, k))


def read_data(path: Path, robot, motor: bool = False, topic: str = "/joint_states", span=None) -> dict:
    """The measurements of ``robodyn identify``: a CSV (:func:`read_measurements`), or a joint log — ROS 1/2 bag
    of ``sensor_msgs/JointState``, HDF5, Parquet — read by :func:`robodyn.read_joint_log`, joints mapped to
    ``robot`` by name, time from the header stamps, torques from the efforts, velocities (if logged) as the
    ``velocity`` a CSV's qd columns give."""
    if not is_joint_log(path):
        return span_rows(path, span, read_measurements(path, robot, motor))
    if motor:
        raise InputError(f"{path}: a joint log holds joint-side positions and efforts; --transmission needs a "
                         "motor-side CSV (t, qm1.., taum1..)")
    log = read_log(path, robot, topic, "identification", span)
    # a log's logged velocities (JointState's velocity, a qd dataset) are the CSV's qd columns: used with --qd measured
    return {"t": log.t, "q": log.q, "tau": log.tau, "qd": None, "qdd": None, "velocity": log.qd, "motor": False}


def joint_side(m: dict, transmission) -> dict:
    """The measurements ``m`` of :func:`read_data` on the joint side: motor-side ``q``, ``tau`` (qm, τ_m) mapped
    through the ``transmission`` (q = J_mq⁻¹ qm, τ = J_mqᵀ τ_m, Khalil & Dombre §9.3); ``m`` itself otherwise.
    ``motor`` still says which side the file held."""
    if not m["motor"]:
        return m
    from robodyn.dynamics.transmission import joint_from_motor, joint_torques_from_motor

    return {**m, "q": joint_from_motor(transmission, m["q"]), "tau": joint_torques_from_motor(transmission, m["tau"])}


def prepare_measurements(m: dict, cutoff=None, decimate: int | None = None, parallel: bool = False,
                         transmission=None, velocity: bool = False):
    """The samples ``robodyn identify`` fits from the joint-side measurements ``m`` (:func:`joint_side`):
    ``(samples, data)``.

    ``t, q, tau``: ``data = rd.identification.prepare_identification_data(t, q, tau, cutoff, decimate)``
    (``cutoff`` None: ``"auto"``; with ``velocity``, ``qd=`` the file's measured velocities, if it has them:
    filtered like q and differentiated for q̈, ``--qd measured``), and ``samples`` is ``data`` itself —
    ``rd.identify(robot, [data])`` puts its filtered Coulomb columns (zero where |q̇_j| is within the velocity
    noise) in the fit and leaves its clipped torques out — or, with ``parallel``, its arrays ``(q, qd, qdd, tau)``,
    the regressor being filtered instead (``parallel=data``).  With ``parallel`` or a ``transmission`` the
    full-rate states are kept (``parallel=True`` preparation): with a transmission, the motors' Coulomb columns are
    then filtered as τ too (``IdentificationData.motor_coulomb``).  ``q, qd, qdd, tau``: ``samples`` are these
    arrays and ``data`` is None; ``cutoff``, ``decimate`` and ``parallel`` are then refused (InputError)."""
    from robodyn.identification import prepare_identification_data

    if m["qd"] is None:
        d = prepare_identification_data(m["t"], m["q"], m["tau"], cutoff="auto" if cutoff is None else cutoff,
                                        decimate=decimate, parallel=bool(parallel or transmission is not None),
                                        qd=m.get("velocity") if velocity else None)
        return ((d.q, d.qd, d.qdd, d.tau) if parallel else d), d
    if cutoff is not None or decimate is not None or parallel:
        raise InputError("--cutoff, --decimate and --parallel apply to t, q, tau data; this file gives qd and qdd")
    return (m["q"], m["qd"], m["qdd"], m["tau"]), None


def prepare_runs(paths, robot, cutoff=None, decimate: int | None = None, parallel: bool = False, transmission=None,
                 topic: str = "/joint_states", velocity: bool = False, span=None) -> list:
    """The runs of ``robodyn identify ROBOT RUN...``: for each file, ``(m, samples, data)`` — its joint-side
    measurements (:func:`read_data`, :func:`joint_side`) and what :func:`prepare_measurements` makes of them,
    each file prepared on its own (its own time base, filter and cut-off; nothing is filtered across two files;
    ``velocity`` as in :func:`prepare_measurements`).  An error names the file.  ``parallel`` filters one run's
    regressor: it takes one file."""
    if parallel and len(paths) > 1:
        raise InputError(f"--parallel filters the regressor of one run; {len(paths)} data files were given: give one, "
                         "or leave --parallel out to identify the runs together")
    runs = []
    for path in paths:
        with named(path):
            m = joint_side(read_data(path, robot, motor=transmission is not None, topic=topic, span=span),
                           transmission)
            runs.append((m, *prepare_measurements(m, cutoff, decimate, parallel, transmission, velocity)))
    return runs


def fit_times(runs) -> tuple:
    """The times (s) of the fitted samples of ``runs`` (:func:`prepare_runs`), one run after the other (each run's
    own times shifted to start one median step after the end of the run before), or None where a run has none;
    and the number of samples of each run."""
    from robodyn.identification.samples import consecutive_times, run_lengths

    times = consecutive_times([run[2].t if run[2] is not None else run[0].get("t") for run in runs])
    return times, run_lengths([run[1] for run in runs])


@contextmanager
def named(path):
    """An InputError raised inside names the file ``path`` first."""
    try:
        yield
    except InputError as exc:
        if str(exc).startswith(str(path)):
            raise
        raise type(exc)(f"{path}: {exc}") from None


def identify_measurements(robot, samples, data, method: str = "physical", friction: bool = True, transmission=None,
                          min_velocity=None, robust: str = "huber", weights=None):
    """``rd.identify`` as ``robodyn identify`` calls it on the ``(samples, data)`` of :func:`prepare_measurements`
    (the regressor filtered like τ, ``parallel=data``, where ``samples`` are the prepared data's arrays), or on a
    list of several runs' ``samples`` (``data`` None), stacked by ``rd.identify``: an ``Identification``."""
    from robodyn.identification import identify

    filtered = data is not None and samples is not data
    return identify(robot, samples if isinstance(samples, list) else [samples], method=method, friction=friction,
                    transmission=transmission, min_velocity=min_velocity, parallel=data if filtered else None,
                    robust=robust, weights=weights)


def held_out_samples(v: dict, cutoff, transmission=None, velocity: bool = False):
    """The held-out samples ``robodyn identify --validate`` scores, from the joint-side measurements ``v``: ``t,
    q, tau`` (with ``velocity``, and its measured velocities) prepared at the identification's ``cutoff`` (Hz,
    or ``"auto"`` where the fit's data had q̇ and q̈) — an ``IdentificationData``, whose filtered Coulomb columns
    (and, with a ``transmission``, the motors') ``Identification.validate`` uses as the fit did — or the file's
    ``(q, qd, qdd, tau)``."""
    from robodyn.identification import prepare_identification_data

    if v["qd"] is None:
        return prepare_identification_data(v["t"], v["q"], v["tau"], cutoff=cutoff, parallel=transmission is not None,
                                           qd=v.get("velocity") if velocity else None)
    return (v["q"], v["qd"], v["qdd"], v["tau"])


def _weights(text: str, n: int):
    """``--weights``: one number for every joint, or n (``rd.identify`` checks that they are finite and ≥ 0)."""
    values = parse_vector(text, 1 if len(text.replace(",", " ").split()) == 1 else n, "--weights")
    return values[0] if values.size == 1 else values


def _float_or_auto(text: str | None, option: str):
    if text is None or text == "auto":
        return "auto"
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{option} {text!r}: give a frequency in Hz or 'auto'") from None
    return number(value, option, 0.0, above=True, unit="Hz")


@app.command("identify")
def identify_command(
    robot: str = typer.Argument(..., help="Robot: built-in name (see `robodyn list`), YAML model file or URDF (the geometry to identify)."),
    data: list[Path] = typer.Argument(..., help="CSV: t, q1..qn, tau1..taun, optionally measured velocities "
                                                "qd1..qdn (or q, qd, qdd, tau columns; or motor-side t, qm1..qmn, "
                                                "taum1..taumn with --transmission); header required. Or a joint "
                                                "log: ROS 1/2 bag (.bag, .db3, .mcap, or the bag folder) of "
                                                "sensor_msgs/JointState, HDF5 or Parquet (see docs/logs.md). "
                                                "Several files: runs, each prepared on its own, identified "
                                                "together."),
    topic: str = TOPIC_OPTION,
    span: str = SPAN_OPTION,
    method: str = typer.Option("physical", "--method", help="physical (standard parameters of rigid bodies, friction "
                                                            ">= 0, pulled towards the model where the data say "
                                                            "little), ols, wls (per-joint noise weights) or irls "
                                                            "(robust)."),
    robust: str = typer.Option("huber", "--robust", help="Weights of --method irls: huber (default) or bisquare "
                                                         "(from the Huber fit, its scales fixed)."),
    friction: bool = typer.Option(True, "--friction/--no-friction", help="Identify Fc, Fv and offsets per joint."),
    cutoff: str = typer.Option(None, "--cutoff", help="Low-pass cut-off (Hz) for q and tau, or 'auto' (default: "
                                                      "from the spectrum of q, see docs/identification.md)."),
    decimate: int = typer.Option(None, "--decimate", help="Decimation factor; default rate/(4 cutoff), at least "
                                                          "the samples the fit needs."),
    transmission: Path = typer.Option(None, "--transmission", help="Transmission file (YAML: gear_ratios, coupling, "
                                                                    "drive_gains): identify every motor's rotor "
                                                                    "inertia and friction; accepts motor-side CSVs."),
    min_velocity: float = typer.Option(None, "--min-velocity", help="Drop a joint's equations where |qd| is below "
                                                                    "this (rad/s)."),
    weights: str = typer.Option(None, "--weights", help="Per-joint weights W1,...,Wn of the fit, or one for all "
                                                        "(--weights 1: unweighted; 0 leaves a joint without a "
                                                        "torque sensor out). Default: physical weighs each "
                                                        "joint by Gautier's 1/sigma_j^2 of the least-squares "
                                                        "residual, the other methods by 1; a joint whose torque "
                                                        "holds one value is left out, with a warning."),
    qd_mode: str = typer.Option("differentiate", "--qd", help="A CSV with qd1..qdn but no qdd columns: "
                                                              "'differentiate' (default) leaves the logged "
                                                              "velocities out and differentiates the filtered q; "
                                                              "'measured' filters them like q and differentiates "
                                                              "them for qdd."),
    parallel: bool = typer.Option(False, "--parallel", help="Filter and decimate the regressor's columns like tau "
                                                            "(Gautier's parallel filtering) instead of building it "
                                                            "from filtered states; t, q, tau data only."),
    out: Path = typer.Option(None, "--out", help="Write the identified model here (YAML model file, or URDF for "
                                                 ".urdf): physically consistent parameters, loadable by every "
                                                 "command; the statistics go to --stats."),
    stats: Path = typer.Option(None, "--stats", help="Write the estimates and their statistics as YAML here "
                                                     "(default with --out: OUT's name + .identification.yaml)."),
    validate: list[Path] = typer.Option(None, "--validate", help="A held-out log (same format as DATA), prepared "
                                                                 "with the same cut-off: print its prediction "
                                                                 "error per joint. Repeat it for several held-out "
                                                                 "runs, each prepared on its own and scored "
                                                                 "together."),
    validate_span: str = typer.Option(None, "--validate-span", metavar="START:STOP",
                                      help="The part of every --validate file read, as --span (default: --span's): "
                                           "fit on one part of a log and score another, e.g. --span :4800 "
                                           "--validate LOG --validate-span 4800:."),
    plot: Path = typer.Option(None, "--plot", help="Write measured vs predicted torques to this PNG file."),
    gravity: str = typer.Option(None, "--gravity", help="Gravity GX,GY,GZ (m/s², base frame) instead of the model's: "
                                                         "an arm on a wall, a ceiling or a tilted base (the "
                                                         "identification warns with the vector the torques fit)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables."),
) -> None:
    """Identify the base parameters (and friction) from measured positions and torques: physically consistent by
    default, or by least squares."""
    from robodyn.dynamics.transmission import load_transmission
    from robodyn.identification.samples import stacked_runs

    with user_errors():
        r = get_robot(robot)
        if gravity is not None:
            g = parse_vector(gravity, 3, "--gravity", what="GX, GY, GZ in m/s²")
            if not np.all(np.isfinite(g)):
                raise InputError(f"option --gravity = {gravity!r}: give 3 finite numbers (m/s²)")
            r = r.replace(gravity=g)
        cutoff_hz = None if cutoff is None else _float_or_auto(cutoff, "--cutoff")
        count(decimate, "--decimate", 1)
        stats_option = "--stats"
        if out is not None and stats is None:
            stats, stats_option = out.with_name(out.stem + ".identification.yaml"), "--stats (default with --out)"
        check_outputs(("--out", out), (stats_option, stats), ("--plot", plot),
                      inputs=[("ROBOT model file", robot_file(robot)), ("DATA file", data),
                              ("--validate file", validate), ("--transmission file", transmission)])
        urdf = out is not None and out.suffix.lower() == ".urdf"
        if urdf:  # what URDF refuses in the model itself (frame names), before anything is computed
            from robodyn.model.urdf import to_urdf

            to_urdf(urdf_model(r)[0])
        if qd_mode not in ("measured", "differentiate"):
            raise InputError(f"--qd {qd_mode!r}: give 'measured' or 'differentiate'")
        tr = None if transmission is None else load_transmission(transmission, r.n)
        w = None if weights is None else _weights(weights, r.n)
        part = parse_span(span)
        held_part = part if validate_span is None else parse_span(validate_span, "--validate-span")
        runs = prepare_runs(data, r, cutoff_hz, decimate, parallel, tr, topic, qd_mode == "measured", part)
        (m, samples, d), several = runs[0], len(runs) > 1
        if several:
            samples, d = [run[1] for run in runs], None
        # the fit's own samples, stacked as rd.identify stacks them: with prepared data, its Coulomb columns (the
        # motors' too) are sign(q̇) filtered as τ
        q, qd, qdd, tau, coulomb, _ = stacked_runs(r, samples if several else [samples], transmission=tr)
        t, counts = fit_times(runs)
        reports = [run[2].report() for run in runs if run[2] is not None]
        prepared = (reports[0] if reports else None) if not several else [
            None if run[2] is None else {"file": str(path), **run[2].report()} for path, run in zip(data, runs)]
        res = identify_measurements(r, samples, d, method, friction, tr, min_velocity, robust, w)
        held_out = None
        if validate:
            cutoffs = {"auto" if run[2] is None else run[2].cutoff for run in runs}
            cut = cutoffs.pop() if len(cutoffs) == 1 else "auto"
            held = []
            for path in validate:
                with named(path):
                    v = joint_side(read_data(path, r, motor=tr is not None, topic=topic, span=held_part), tr)
                    held.append(held_out_samples(v, cut, tr, qd_mode == "measured"))
            held_out = res.validate(held)
        pred = res.predict(q, qd, qdd, coulomb=coulomb)
        tau_rms = np.sqrt(np.mean(tau ** 2, axis=0))
        model = None
        if out is not None:
            model = res if method == "physical" else identify_measurements(r, samples, d, "physical", friction, tr,
                                                                            min_velocity, weights=w)
        # one residual RMS in the table and the figure: over the rows the fit used (min_velocity drops those of
        # a joint near its velocity reversals; a joint of weight 0 has none), as the identification's residual_rms
        fitted = np.ones(np.shape(tau), bool) if min_velocity is None else np.abs(qd) >= min_velocity
        left = res.weights == 0  # left out of the fit: no residual, no relative error (None)
        fitted = fitted & ~left
        fit = [{"joint": j + 1, "residual_rms": None if left[j] else float(res.residual_rms[j]),
                "rows": int(fitted[:, j].sum()), "torque_rms": float(tau_rms[j]),
                "relative_percent": None if left[j] else float(100 * res.residual_rms[j] / tau_rms[j])
                if tau_rms[j] > 0 else 0.0}
               for j in range(r.n)]
        # everything that can fail comes before the first file is written: the model's text, the figure, the JSON
        writes, left_out = [], []
        if stats is not None:
            writes.append((stats, lambda: res.save(stats, model_file=out)))
        if out is not None:
            from robodyn.files import write_atomically
            from robodyn.model.io import model_text

            kept, left_out = urdf_model(model.robot) if urdf else (model.robot, [])
            text = model_text(kept, out)
            writes.append((out, lambda: write_atomically(out, lambda fh: fh.write(text), what="model file")))
        if plot is not None:
            from robodyn import plot as figures
            from robodyn.files import figure_png, write_atomically

            png = figure_png(figures.identification(
                np.arange(len(q)) if t is None else t, tau, pred, names=r.q_names, rows=fitted, runs=counts,
                xlabel="sample" if t is None else "time (s)",
                title=f"{r.name}: measured and identified torques ({method})"))
            writes.append((plot, lambda: write_atomically(plot, lambda fh: fh.write(png), what="plot file",
                                                          binary=True)))
        printed = io.StringIO()
        if as_json:
            with redirect_stdout(printed):
                print_json({**res.to_dict(), "fit": fit, "prepared": prepared, "samples_used": len(q),
                            "motor_side_data": m["motor"],
                            "max_abs_prediction_error": float(np.max(np.abs(pred - tau))),
                            "out": None if out is None else str(out), "stats": None if stats is None else str(stats),
                            "validation": None if held_out is None else held_out.to_dict(),
                            "plot": None if plot is None else str(plot)})
        write_outputs(writes)
        if left_out:
            _warn_urdf_left_out(left_out, out)
        if out is not None and model.position_joints:
            _warn_position_terms(model.position_joints, out)
    if as_json:
        sys.stdout.write(printed.getvalue())
        return
    table = Table("parameter", "of", "value", "std", "%σ", title=f"{r.name}: identified parameters ({method}, "
                  f"{len(q)} samples, cond(W) = {res.condition_number:.4g})")
    for name, owner, v, s, rel in zip(res.names, res.base.owners, res.values, res.std, res.relative_std):
        table.add_row(name, owner, f"{v:.6g}", f"{s:.3g}" if np.isfinite(s) else "—",
                      f"{rel:.3g}" if np.isfinite(rel) else "—")
    console.print(table)
    fit_table = Table("joint", "residual RMS", "rows", "torque RMS", "relative %",
                      title=f"fit per joint (residual RMS over the rows the fit used, of {len(q)})")
    for row in fit:
        fit_table.add_row(str(row["joint"]), "—" if row["residual_rms"] is None else f"{row['residual_rms']:.4g}",
                          str(row["rows"]), f"{row['torque_rms']:.4g}",
                          "—" if row["relative_percent"] is None else f"{row['relative_percent']:.3g}")
    console.print(fit_table)
    for path, run in zip(data, runs):
        if run[2] is not None:
            console.print((f"{path}: " if several else "") + run[2].report()["summary"], highlight=False)
    if res.solver is not None:
        console.print(f"solver {res.solver['name']}: {res.solver['status']} after {res.solver['iterations']} "
                      f"iterations, constraint violation {res.solver['constraint_violation']:.2g}; "
                      f"{res.solver['accuracy']}; regularization {res.solver['regularization']:g} "
                      f"({res.solver['regularization_rule']})", highlight=False)
    if res.position_shares is not None or res.position_joints:
        console.print(position_summary(res), highlight=False)
    if held_out is not None:
        table = Table("joint", "relative RMS %", "RMS", "samples",
                      title=f"held-out prediction error ({', '.join(p.name for p in validate)})")
        for j in range(r.n):
            scored = held_out.samples[j] > 0  # a joint without a measured torque is not scored
            table.add_row(str(j + 1), f"{held_out.relative_rms_percent[j]:.3g}" if scored else "—",
                          f"{held_out.rms[j]:.4g}" if scored else "—", str(int(held_out.samples[j])))
        console.print(table)
    if res.message:
        console.print(f"note: {res.message}", highlight=False)
    unused = [str(path) for path, run in zip(data, runs) if run[0]["velocity"] is not None and run[2] is not None
              and not run[2].measured_velocity]
    if unused:
        console.print(f"note: the logged velocities (qd) of {', '.join(unused)} are not used (q̇ and q̈ are "
                      "differentiated from the filtered q); --qd measured filters and differentiates them instead",
                      highlight=False)
    if out is not None:
        how = "" if method == "physical" else " (the physically consistent fit of the same data: a model needs it)"
        console.print(f"model written to {out}{how}", highlight=False)
    if stats is not None:
        console.print(f"estimates and statistics written to {stats}", highlight=False)
    if plot is not None:
        console.print(f"plot written to {plot}", highlight=False)


def position_summary(res) -> str:
    """One line on the position terms k_j sin q_j + c_j cos q_j of an identification (``position_terms``)."""
    spans = [""] * len(res.position_joints) if res.position_range is None else [
        f" (fitted on q{j + 1} in [{a:.3g}, {b:.3g}] rad)" for j, (a, b) in zip(res.position_joints, res.position_range)]
    fitted = "; ".join(f"joint {j + 1}: {k:.4g} sin q{j + 1} + {c:.4g} cos q{j + 1} N m{span}"
                       for j, (k, c), span in zip(res.position_joints, res.position_coefficients
                                                  if res.position_joints else (), spans))
    shares = "" if res.position_shares is None else (
        "; residual share of sin q_j, cos q_j per joint (%): "
        + ", ".join(f"{100 * x:.0f}" for x in res.position_shares))
    return f"position terms: {fitted or 'none'}{shares}"


def _warn_position_terms(joints, out: Path) -> None:
    """A model file has no place for the position terms: say which joints' terms it leaves out."""
    from robodyn.cli._common import err_console

    names = ", ".join(str(j + 1) for j in joints)
    message = (f"the model file {out} does not carry the position terms of joint(s) {names} (k sin q + c cos q; a "
               "model has no such field): its torques leave them out; the statistics file records them")
    err_console.print(f"warning: {message}", highlight=False, soft_wrap=True)


#: What a model may hold that URDF has no element for (robodyn.model.urdf.to_urdf refuses it), and its words.
_NOT_IN_URDF = (("Ia", "rotor inertia"), ("Foff", "friction offset"), ("Fst", "Stribeck friction"))
_URDF_GRAVITY = np.array([0.0, 0.0, -9.81])


def urdf_model(robot) -> tuple:
    """``robot`` as a URDF can hold it — without its nonzero Ia, Foff, Fst (set to zero), its gravity the URDF's
    [0, 0, −9.81] in the base frame (a URDF holds no gravity: the base is mounted rotated instead) — and the list
    of what that leaves out, in words (empty when nothing is)."""
    fields, left = {}, []
    for key, words in _NOT_IN_URDF:
        frames = np.flatnonzero(np.asarray(getattr(robot, key)) != 0)
        if frames.size:
            fields[key] = None
            joints = [int(robot.derived.joint_of[i]) + 1 for i in frames if robot.derived.joint_of[i] >= 0]
            left.append(f"{key} ({words}) of joint{'s' if len(joints) > 1 else ''} "
                        f"{', '.join(map(str, joints or (frames + 1).tolist()))}")
    if not np.allclose(robot.gravity, _URDF_GRAVITY, rtol=0, atol=1e-12):
        fields["gravity"] = _URDF_GRAVITY
        left.append(f"the gravity [{', '.join(f'{g:g}' for g in robot.gravity)}] m/s² (a URDF's is [0, 0, -9.81] "
                    "in the base frame: mount its base rotated)")
    return (robot.replace(**fields) if fields else robot), left


def _warn_urdf_left_out(left: list, out: Path) -> None:
    """One warning line: what the URDF ``out`` leaves out of the identified model (:func:`urdf_model`)."""
    from robodyn.cli._common import err_console

    listed = left[0] if len(left) == 1 else ", ".join(left[:-1]) + " and " + left[-1]
    err_console.print(f"warning: the URDF {out} leaves out {listed}: URDF has no element for them; write a .yaml "
                      "model (--out NAME.yaml) to keep them", highlight=False, soft_wrap=True)


def _check_excite_options(r, duration, harmonics, base_frequency, rate, seed, max_iterations) -> None:
    """Ranges of excite's numbers, the Nyquist condition and the size of the CSV, before anything is computed."""
    number(duration, "--duration", 0.0, 1e6, above=True, unit="s")
    count(harmonics, "--harmonics", 1, 1000)
    number(base_frequency, "--base-frequency", 0.0, 1e6, above=True, unit="Hz")
    number(rate, "--rate", 0.0, 1e6, above=True, unit="Hz")
    check_seed(seed)
    count(max_iterations, "--max-iterations", 1, 10**6)
    ff = 1.0 / duration if base_frequency is None else base_frequency
    if not harmonics * ff < rate / 2:
        raise InputError(f"the highest harmonic, {harmonics} x {ff:.6g} Hz = {harmonics * ff:.6g} Hz, is not below the "
                         f"Nyquist frequency rate/2 = {rate / 2:.6g} Hz: the CSV could not represent it; give a higher "
                         "--rate, fewer --harmonics, a lower --base-frequency or a longer --duration")
    rows = duration * rate + 1
    if rows < 2:
        raise InputError(f"--duration {duration:g} s at --rate {rate:g} Hz gives fewer than 2 samples; give a longer "
                         "--duration or a higher --rate")
    n = r.n
    check_work(f"excite ({rows:.3g} rows of {3 * n + 1} columns)", nbytes=rows * (3 * n + 1) * 40,
               hint="give a shorter --duration or a lower --rate")
    # the optimiser: a batched regressor of (2H + 1) n perturbed trajectories of ~30 points, ~10 n columns each
    check_work(f"excite of robot '{r.name}' (n = {n}, {harmonics} harmonics)",
               nbytes=2400.0 * (2 * harmonics + 1) * n**3,
               flops=6000.0 * max_iterations * (2 * harmonics + 1) * n**3, hint="give fewer --harmonics")


@app.command("excite")
def excite_command(
    robot: str = ROBOT_ARGUMENT,
    duration: float = typer.Option(..., "--duration", help="Length of the trajectory (s), above 0 and at most 1e6."),
    out: Path = typer.Option(..., "--out", help="Write t, q1..qn, qd1..qdn, qdd1..qddn as CSV here."),
    harmonics: int = typer.Option(5, "--harmonics", help="Harmonics per joint (finite Fourier series), 1 to 1000."),
    base_frequency: float = typer.Option(None, "--base-frequency", help="f_f (Hz); default 1/duration. The highest "
                                         "harmonic, harmonics f_f, must be below the Nyquist frequency rate/2."),
    rate: float = typer.Option(100.0, "--rate", help="Sampling rate of the CSV (Hz), above 0 and at most 1e6."),
    seed: int = typer.Option(0, "--seed", help="Random seed of the starting coefficients (0 or more)."),
    max_iterations: int = typer.Option(100, "--max-iterations", help="Iteration limit of the optimiser, 1 to 1e6."),
    friction: bool = typer.Option(True, "--friction/--no-friction", help="Include friction columns in cond(W)."),
    unlimited: bool = typer.Option(False, "--unlimited", help="Accept a robot without joint limits (±π rad / "
                                                              "±0.5 m: may be unsafe on hardware)."),
    criterion: str = typer.Option("prediction", "--criterion", help="What the design minimises: 'prediction' "
                                  "(cond(W) times OLS's predicted error, the default) or 'cond' (cond(W) alone)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """An excitation trajectory (Swevers): Fourier series minimising cond(W) of the base parameters (by default
    times OLS's predicted error) within the joint position, velocity and acceleration limits."""
    from robodyn.cli.core import write_csv_atomic
    from robodyn.identification import excitation_trajectory

    with user_errors():
        r = get_robot(robot)
        check_outputs(("--out", out), inputs=[("ROBOT model file", robot_file(robot))])
        _check_excite_options(r, duration, harmonics, base_frequency, rate, seed, max_iterations)
        tr = excitation_trajectory(r, duration, harmonics=harmonics, base_frequency=base_frequency, seed=seed,
                                   max_iterations=max_iterations, friction=friction, unlimited=unlimited,
                                   criterion=criterion)
        if not np.isfinite(tr.condition_number):
            raise InputError(f"the optimised trajectory does not excite every base parameter (cond(W) = "
                             f"{tr.condition_number}); give more --harmonics, another --seed or a longer --duration")
        t = tr.times(rate)
        q, qd, qdd = tr.sample(t)
        n = r.n
        header = ["t"] + [f"{p}{k}" for p in ("q", "qd", "qdd") for k in range(1, n + 1)]
        write_csv_atomic(out, header, np.column_stack([t, q, qd, qdd]))
    info = {"robot": r.name, "rows": len(t), "condition_number": tr.condition_number, "iterations": tr.iterations,
            "converged": tr.converged, "message": tr.message, "base_frequency_hz": tr.base_frequency,
            "harmonics": tr.harmonics, "criterion": tr.criterion, "out": str(out)}
    if as_json:
        print_json(info)
        return
    console.print(f"wrote {len(t)} samples ({tr.duration:g} s at {rate:g} Hz) to {out}; cond(W) = "
                  f"{tr.condition_number:.4g} after {tr.iterations} iterations", highlight=False)
    if not tr.converged:
        console.print(f"note: {tr.message}", highlight=False)
