"""Commands on robot models and inverse dynamics: list, info, id."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np
import typer
from rich.text import Text

from robodyn.files import write_atomically
from robodyn.cli._app import app
from robodyn.cli._common import (
    ROBOT_ARGUMENT, check_outputs, chop, console, get_robot, joint_vector, parse_vector, print_json, print_table,
    read_csv_columns, robot_file, user_errors, warn_outside_limits,
)
from robodyn.dynamics.newton_euler import inverse_dynamics
from robodyn.errors import InputError
from robodyn.model.io import list_robots
from robodyn.model.robot import PARAMETER_NAMES, Robot

_KINDS = ("revolute", "prismatic", "fixed")


@app.command("list")
def list_command(json: bool = typer.Option(False, "--json", help="Print JSON instead of a table.")) -> None:
    """List the built-in robots (joint types R/P/- per frame; `robodyn info ROBOT` shows the full source)."""
    with user_errors():
        if json:
            robots = [get_robot(name) for name in list_robots()]
            print_json([{"name": r.name, "frames": "".join("RP-"[s] for s in r.sigma), "n": r.n, "nf": r.nf,
                         "source": r.source} for r in robots])
            return
        robots = [(name, get_robot(name)) for name in list_robots()]
        print_table("robot", "frames", "n", "source", compact=True, padding=(0, 1),
                    rows=[(name, "".join("RP-"[s] for s in r.sigma), str(r.n), _first_sentence(r.source))
                          for name, r in robots])


def _first_sentence(text: str, limit: int = 90) -> str:
    head = " ".join(text.split()).split(". ")[0].rstrip(".")
    return head if len(head) <= limit else head[: limit - 1].rstrip() + "…"


# ---- info ---------------------------------------------------------------------------------------------------


def _angle(x: float) -> str:
    """An angle as Khalil & Dombre's tables print it: multiples of π/4 symbolically, other values in radians."""
    k = x / (math.pi / 4)
    if abs(k - round(k)) < 1e-12:
        k = int(round(k))
        if k == 0:
            return "0"
        num, den = (k // math.gcd(k, 4), 4 // math.gcd(k, 4))
        sign = "-" if num < 0 else ""
        num = abs(num)
        return f"{sign}{'' if num == 1 else num}π" + ("" if den == 1 else f"/{den}")
    return f"{x:.6g}"


def _with_variable(offset: str, var: str) -> str:
    return var if offset == "0" else (f"{var} - {offset[1:]}" if offset.startswith("-") else f"{var} + {offset}")


def _num(x: float) -> str:
    return f"{x:.4g}"


def geometry_rows(robot: Robot) -> list[dict]:
    """One dict per frame: j, name, a(j), sigma, gamma, b, alpha, d, theta, r (+ qmin, qmax for joints)."""
    rows = []
    for i in range(robot.nf):
        row = {"j": i + 1, "name": robot.frame_names[i], "antecedent": int(robot.antecedent[i]), "sigma": int(robot.sigma[i])}
        row.update({key: float(getattr(robot, key)[i]) for key in ("gamma", "b", "alpha", "d", "theta", "r")})
        k = robot.derived.joint_of[i]  # the joint's column of q
        if k >= 0:
            row["qmin"], row["qmax"] = (float(x) for x in robot.qlim[k])
            row["q"] = f"q{k + 1}"
        rows.append(row)
    return rows


def inertial_rows(robot: Robot) -> list[dict]:
    """One dict per link: j, name, XX..M, Ia, Fc, Fv (and Foff, Fst, kst, Bst)."""
    extra = ("Ia", "Fc", "Fv", "Foff", "Fst", "kst", "Bst")
    return [{"j": i + 1, "name": robot.frame_names[i], **dict(zip(PARAMETER_NAMES, map(float, robot.params[i]))),
             **{e: float(getattr(robot, e)[i]) for e in extra}} for i in range(robot.nf)]


@app.command("info")
def info_command(
    robot: str = ROBOT_ARGUMENT,
    json: bool = typer.Option(False, "--json", help="Print the model as JSON instead of tables."),
) -> None:
    """Geometric and inertial parameter tables of a robot (Khalil–Kleinfinger modified DH, SI units)."""
    with user_errors():
        r = get_robot(robot)
        geo, inert = geometry_rows(r), inertial_rows(r)
        if json:
            # an unlimited joint's qmin/qmax is null (strict JSON has no Infinity)
            # "link": the URDF link whose frame each frame is ("" where the robot has none), a name frame= takes
            geometry = [{**{k: (v if k not in ("qmin", "qmax") or math.isfinite(v) else None) for k, v in g.items()
                            if k != "q"}, "link": link} for g, link in zip(geo, r.link_names)]
            print_json({"name": r.name, "source": r.source, "n": r.n, "nf": r.nf, "gravity": r.gravity,
                        "base": r.base, "base_params": dict(zip(PARAMETER_NAMES, r.base_params.tolist())),
                        "geometry": geometry, "inertia": inert})
            return
        console.print(Text.assemble((r.name, "bold"), f": {r.n} joints, {r.nf} frames ({'serial' if r.is_serial else 'tree'})"))
        console.print(f"source: {r.source}", highlight=False)
        if r.base == "fixed":
            console.print(f"gravity (base frame, m/s²): {_vector(r.gravity)}", highlight=False)
        else:
            console.print(f"base: {r.base} (free-flyer q = [p, quaternion x y z w, joints]); base body "
                          f"XX..M = {_vector(r.base_params)}", highlight=False)
            console.print(f"gravity (world frame, m/s²): {_vector(r.gravity)}", highlight=False)
        has_tree = not r.is_serial or np.any(r.gamma) or np.any(r.b)
        # long names (URDF joints) get a table of their own, so that the parameters fit in 80 columns
        named = max(map(len, r.frame_names)) <= 8 and not any(r.link_names)
        if not named:
            links = any(r.link_names)
            print_table("j", "name", *(["URDF link"] if links else []), compact=True, title="Frames", padding=(0, 1),
                        rows=[(str(g["j"]), g["name"], *([link] if links else []))
                              for g, link in zip(geo, r.link_names)])
        cols = ["j"] + (["name"] if named else []) + ["a(j)", "σ"] + (["γ", "b"] if has_tree else []) \
            + ["α", "d", "θ", "r", "qmin", "qmax"]
        rows = []
        for g in geo:
            theta, rr = _angle(g["theta"]), _num(g["r"])
            if g["sigma"] == 0:
                theta = _with_variable(theta, g["q"])
            elif g["sigma"] == 1:
                rr = _with_variable(rr, g["q"])
            lim = ["", ""] if g["sigma"] == 2 else [_limit(g["qmin"], g["sigma"]), _limit(g["qmax"], g["sigma"])]
            cells = [str(g["j"])] + ([g["name"]] if named else []) + [str(g["antecedent"]), str(g["sigma"])]
            cells += [_angle(g["gamma"]), _num(g["b"])] if has_tree else []
            rows.append(cells + [_angle(g["alpha"]), _num(g["d"]), theta, rr] + lim)
        print_table(*cols, compact=True, title="Geometric parameters (rad, m)", rows=rows)
        shown = list(PARAMETER_NAMES[6:]) + ["Ia", "Fc", "Fv"] + [e for e in ("Foff", "Fst", "kst", "Bst") if np.any(getattr(r, e))]
        # the scale of each table's entries: rounding noise of the frame changes is shown as 0
        for keys, columns, title in ((PARAMETER_NAMES[:6], slice(0, 6), "Inertia J_j about O_j in R_j (kg m²)"),
                                     (shown, slice(6, 9), "First moments MS_j (kg m), mass (kg), rotor inertia Ia, "
                                                          "friction Fc, Fv (SI)")):
            scale = max(1.0, float(np.abs(r.params[:, columns]).max(initial=0.0)))
            print_table("j", *keys, compact=True, title=title,
                        rows=[(str(row["j"]), *(_num(x) for x in chop([row[k] for k in keys], scale)))
                              for row in inert])
        console.print("Values rounded to 4 significant digits; `robodyn info --json` prints them in full.", highlight=False)


def _vector(v) -> str:
    return "[" + ", ".join(_num(float(x)) for x in v) + "]"


def _limit(x: float, sigma: int) -> str:
    if not math.isfinite(x):
        return "-∞" if x < 0 else "∞"
    return _angle(x) if sigma == 0 else _num(x)


# ---- id -----------------------------------------------------------------------------------------------------


def read_states(path: Path, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Read a CSV of states with header q1..qn, qd1..qdn, qdd1..qddn (and optionally t).

    Returns q, qd, qdd of shape (rows, n) and the t column or None.  Errors name the file, row and column.
    """
    names = [f"{p}{k}" for p in ("q", "qd", "qdd") for k in range(1, n + 1)]
    what = f"--states {path}"
    cols = read_csv_columns(path, ["t"] + names, what, required=names,
                            hint=f"the header must name q1..q{n}, qd1..qd{n}, qdd1..qdd{n}")
    q, qd, qdd = (np.stack([cols[f"{p}{k}"] for k in range(1, n + 1)], -1) for p in ("q", "qd", "qdd"))
    return q, qd, qdd, cols.get("t")


def csv_text(header: list[str], data: np.ndarray) -> str:
    """A CSV of a header row and the rows of ``data``, every number as its repr (read back exactly)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows([[repr(float(x)) for x in row] for row in data])
    return buf.getvalue()


def write_csv_atomic(path: Path, header: list[str], data: np.ndarray) -> None:
    """Write a CSV through a temporary file in the same folder, renamed at the end: never a partial file."""
    text = csv_text(header, data)
    write_atomically(path, lambda fh: fh.write(text), what="--out")


#: names of the six base rows of a free-flyer velocity and of its generalized forces
BASE_VELOCITY_NAMES = ("base vx", "base vy", "base vz", "base wx", "base wy", "base wz")
BASE_FORCE_NAMES = ("base fx", "base fy", "base fz", "base mx", "base my", "base mz")


def free_flyer_vector(robot: Robot, text: str | None, option: str) -> np.ndarray:
    """A free-flyer vector of a floating or mobile base robot from the command line: ``--q`` has n + 7 numbers
    [position (3), quaternion x y z w (4), joints] (default: the base at the origin, level, joints at 0), the
    others n + 6 [base linear, base angular (R_0), joints] (default 0)."""
    n = robot.n
    size, layout = ((n + 7, f"[base position (3), base quaternion x y z w (4), joints ({n})]") if option == "--q"
                    else (n + 6, f"[base linear (3), base angular (3) in the base frame, joints ({n})]"))
    if text is None:
        out = np.zeros(size)
        if option == "--q":
            out[6] = 1.0
        return out
    count = len([p for p in text.replace(",", " ").split() if p])
    if count != size:
        raise InputError(f"option {option} has {count} numbers; robot '{robot.name}' has a {robot.base} base and "
                         f"n = {n} joints, so {option} takes {size} numbers {layout}")
    return parse_vector(text, size, option)


def _floating_id(r: Robot, q, qd, qdd, json: bool) -> None:
    from robodyn.dynamics.floating import floating_inverse_dynamics

    Q, V, A = (free_flyer_vector(r, v, opt) for v, opt in ((q, "--q"), (qd, "--qd"), (qdd, "--qdd")))
    tau = floating_inverse_dynamics(r, Q, V, A)
    if json:
        print_json({"robot": r.name, "base": r.base, "q": Q, "v": V, "a": A, "tau": tau})
        return
    console.print(f"base: {r.base}; q = {_vector(Q)} (position, quaternion x y z w, joints)", highlight=False)
    units = ["N"] * 3 + ["N m"] * 3 + ["N m" if s == 0 else "N" for s in r.sigma[r.joint_frames]]
    print_table("coordinate", "v", "a", "tau", title=f"Inverse dynamics of {r.name}, base wrench in R_0 (SI units)",
                rows=[(name, _num(V[k]), _num(A[k]), f"{chop(tau)[k]:.10g} {units[k]}")
                      for k, name in enumerate(BASE_FORCE_NAMES + r.joint_names)])


@app.command("id")
def id_command(
    robot: str = ROBOT_ARGUMENT,
    q: str = typer.Option(None, "--q", help="Joint positions q1..qn (rad | m), comma separated; default 0."),
    qd: str = typer.Option(None, "--qd", help="Joint velocities (rad/s | m/s); default 0."),
    qdd: str = typer.Option(None, "--qdd", help="Joint accelerations (rad/s² | m/s²); default 0."),
    states: Path = typer.Option(None, "--states", help="CSV with columns q1..qn, qd1..qdn, qdd1..qddn (optional t)."),
    out: Path = typer.Option(None, "--out", help="With --states: write the torques as CSV (t, tau1..taun) here."),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
    degrees: bool = typer.Option(False, "--degrees", help="Revolute joints of --q, --qd, --qdd in deg, deg/s, deg/s²."),
) -> None:
    """Inverse dynamics Γ = f(q, q̇, q̈) by Newton–Euler (friction and rotor inertia included; N m | N).

    A floating or mobile base robot takes free-flyer vectors: --q n + 7 numbers [base position, quaternion
    x y z w, joints], --qd and --qdd n + 6 [base linear, base angular in R_0, joints]; it prints the base wrench
    (in R_0, moment about O_0) then the joint torques.
    """
    with user_errors():
        r = get_robot(robot)
        n = r.n
        if r.base != "fixed":
            if states is not None or out is not None:
                raise InputError(f"--states/--out are for fixed-base robots; robot '{r.name}' has a {r.base} base: "
                                 "give one state with --q (n + 7 numbers), --qd, --qdd (n + 6)")
            _floating_id(r, q, qd, qdd, json)
            return
        if states is not None:
            if any(x is not None for x in (q, qd, qdd)):
                raise InputError("give either --states FILE or --q/--qd/--qdd, not both")
            check_outputs(("--out", out), inputs=[("ROBOT model file", robot_file(robot)), ("--states file", states)])
            Q, QD, QDD, t = read_states(states, n)
            warn_outside_limits(r, Q, f"--states {states.name}")
            tau = inverse_dynamics(r, Q, QD, QDD)
            header = ([] if t is None else ["t"]) + [f"tau{k}" for k in range(1, n + 1)]
            data = tau if t is None else np.column_stack([t, tau])
            if out is not None:
                write_csv_atomic(out, header, data)
                if not json:
                    console.print(f"wrote {len(tau)} rows of joint torques to {out}", highlight=False)
            if json:
                print_json({"robot": r.name, "rows": len(tau), "tau": tau, **({} if t is None else {"t": t}),
                            **({} if out is None else {"out": str(out)})})
            elif out is None:
                typer.echo(csv_text(header, data), nl=False)
            return
        if out is not None:
            raise InputError("--out needs --states FILE (a single state is printed)")
        Q, QD, QDD = (joint_vector(r, v, opt, degrees, position=opt == "--q")
                      for v, opt in ((q, "--q"), (qd, "--qd"), (qdd, "--qdd")))
        tau = inverse_dynamics(r, Q, QD, QDD)
        if json:
            print_json({"robot": r.name, "q": Q, "qd": QD, "qdd": QDD, "tau": tau})
            return
        revolute = r.sigma[r.joint_frames] == 0
        heads = ["q", "qd", "qdd"]
        if degrees:  # shown as typed: revolute joints in deg, deg/s, deg/s²
            Q, QD, QDD = (np.where(revolute, np.rad2deg(v), v) for v in (Q, QD, QDD))
            heads = [f"{h} ({u}{'' if revolute.all() else ' | SI'})" for h, u in zip(heads, ("deg", "deg/s", "deg/s²"))]
        print_table("joint", "type", *heads, "tau", title=f"Inverse dynamics of {r.name} (SI units)",
                    rows=[(name, _KINDS[0 if revolute[k] else 1], _num(Q[k]), _num(QD[k]), _num(QDD[k]),
                           f"{value:.10g} {'N m' if revolute[k] else 'N'}")
                          for k, (name, value) in enumerate(zip(r.joint_names, chop(tau)))])
