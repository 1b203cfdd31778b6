"""Commands for the published numerical studies: accuracy (Mata et al. §5.1), demo puma-line (Mata et al. §5.2), opcount."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import typer
from rich.text import Text

from robodyn.cli._app import Typer, Group, app
from robodyn.progress import progress
from robodyn.cli._common import JSON_OPTION, Table, console, get_robot, print_json, print_table, user_errors
from robodyn.cli._limits import MAX_SYMBOLIC_JOINTS, allow_large, check_work, count, number
from robodyn.errors import InputError

demo_app = Typer(help="Demonstrations from the literature (Mata et al.'s simulations, Dellin's WAM calibration).", no_args_is_help=True, rich_markup_mode=None,
                 cls=Group)
app.add_typer(demo_app, name="demo")


def _methods(text: str | None):
    return None if text is None else tuple(m.strip() for m in text.split(",") if m.strip())


@app.command("accuracy")
def accuracy_command(
    robot: str = typer.Argument(..., help="robot: built-in name (see `robodyn list`), YAML model file or URDF (Mata et al. use ascher2)"),
    steps: int = typer.Option(180, help="poses over a full turn of the last joint (180: 2° steps), 1 or more"),
    methods: str = typer.Option(None, help="comma-separated forward-dynamics methods (default: all installed)"),
    plot: Path = typer.Option(None, help="write accelerations and cond(A) vs angle to this PNG file"),
    solver: str = typer.Option(None, help="solver of the methods that form A: cholesky, ldlt or gauss_jordan "
                               "(Mata et al.'s); default: each method's own (Cholesky)"),
    m2: float = typer.Option(None, help="mass of link 2 (kg) of the ascher2 arm, garbled in Mata et al.'s text "
                             "(the built-in has 1.0); 1e-6 to 1e6"),
    stages: str = typer.Option(None, help="also print, for this method, the error with one stage at a time in "
                               "float32 (angles, inertia matrix, bias, storage of A, solve)"),
    json_out: bool = JSON_OPTION,
) -> None:
    """Single- vs double-precision forward dynamics over a turn of the last joint (Mata et al. Table 5)."""
    from robodyn.analysis.accuracy import accuracy_study, ascher_arm, stage_study

    with user_errors():
        count(steps, "--steps")
        number(m2, "--m2", 1e-6, 1e6, unit="kg")
        if m2 is not None:
            if robot != "ascher2":
                raise InputError(f"--m2 is the mass of link 2 of the ascher2 arm; robot = {robot!r}: give ascher2 "
                                 "or leave --m2 out")
            model = ascher_arm(m2)
        else:
            model = get_robot(robot)
        n = model.n
        # every method in float64 and float32 at every pose: A (n x n), its factors and the accelerations
        check_work(f"accuracy with --steps {steps} (n = {n})", nbytes=8.0 * steps * (n * n + n) * 60,
                   flops=2000.0 * steps * n**3, hint="give fewer --steps")
        result = accuracy_study(model, methods=_methods(methods), steps=steps, solver=solver)
        staged = None if stages is None else stage_study(model, stages, steps=steps, solver=solver)
        if plot is not None:
            result.plot(plot)
        if json_out:
            print_json({"robot": result.robot, "steps": steps, "methods": list(result.methods), "solver": solver,
                        "single_dtypes": list(result.single_dtypes), "max_error": result.max_error,
                        "mean_error": result.mean_error, "float64_spread": result.method_spread,
                        "cond": {"min": result.cond.min(), "max": result.cond.max(), "mean": result.cond.mean()},
                        "mata_table5": result.mata_table5(),
                        "stages": None if staged is None else {
                            "method": staged.method, "max_error": dict(zip(staged.stages, staged.max_error)),
                            "mean_error": dict(zip(staged.stages, staged.mean_error))},
                        "plot": None if plot is None else str(plot)})
            return
        # a row per joint, a column per method: fits 80 columns for any n (Mata et al. Table 5, transposed)
        console.print(f"{result.robot}: |q̈(float64) − q̈(float32)| over {steps} poses (rad/s²)")
        for what, values in (("max", result.max_error), ("mean", result.mean_error)):
            print_table("joint", *result.methods, title=f"{what} |Δq̈|", title_justify="left",
                        rows=[(str(j + 1), *(f"{v:.4g}" for v in values[:, j])) for j in range(values.shape[1])])
        comparison = result.mata_table5()
        if comparison:
            print_table("Mata et al.", "robodyn method", "max (paper)", "max (robodyn)", "mean (paper)",
                        "mean (robodyn)", title=f"Table 5, |Δq̈{model.n}| (rad/s²), solver {solver or 'cholesky'}",
                        title_justify="left",
                        rows=[(name, row["method"], f"{row['paper'][0]:.4g}", f"{row['robodyn'][0]:.4g}",
                               f"{row['paper'][1]:.4g}", f"{row['robodyn'][1]:.4g}")
                              for name, row in comparison.items()])
        if staged is not None:
            print_table("float32 stage", *(f"max |Δq̈{j + 1}|" for j in range(model.n)),
                        *(f"mean |Δq̈{j + 1}|" for j in range(model.n)),
                        title=f"{staged.method}: one stage in float32, the rest in float64", title_justify="left",
                        rows=[(stage, *(f"{v:.3g}" for v in staged.max_error[k]),
                               *(f"{v:.3g}" for v in staged.mean_error[k])) for k, stage in enumerate(staged.stages)])
        print_table("method", "single dtype", "float64 spread", title="methods", title_justify="left",
                    rows=[(m, dt, f"{spread:.2g}")
                          for m, dt, spread in zip(result.methods, result.single_dtypes, result.method_spread)])
        console.print(f"cond(A): min {result.cond.min():.4g}, max {result.cond.max():.4g}, "
                      f"mean {result.cond.mean():.4g}")
        for m, dt in zip(result.methods, result.single_dtypes):
            if dt != "float32":
                console.print(Text.assemble(("warning:", "yellow"), f" method {m} returned {dt} for float32 inputs"))
        if plot is not None:
            console.print(f"plot written to {plot}", highlight=False)


@demo_app.command("puma-line")
def puma_line_command(
    robot: str = typer.Option("puma560", help="6-joint robot: built-in name (see `robodyn list`), YAML model file or URDF"),
    methods: str = typer.Option(None, help="comma-separated forward-dynamics methods (default: all installed)"),
    samples: int = typer.Option(501, help="reference grid points over the 5 s motion, 2 or more"),
    plot: Path = typer.Option(None, help="write the joint trajectories and tracking errors to this PNG file"),
    rtol: float = typer.Option(1e-6, help="relative tolerance of the integrator (Mata et al.: 1e-6), 1e-12 to 0.1"),
    atol: float = typer.Option(1e-6, help="absolute tolerance of the integrator, 1e-14 to 1"),
    interpolation: str = typer.Option("cubic", help="torques between the reference grid times: cubic or linear"),
    rotor_inertia: bool = typer.Option(True, "--rotor-inertia/--no-rotor-inertia",
                                       help="keep the robot's rotor inertias (Mata et al.'s model has none)"),
    json_out: bool = JSON_OPTION,
) -> None:
    """Straight-line motion of the PUMA, open-loop simulation per method (Mata et al. Tables 6 and 7); RK45, or LSODA with smooth Coulomb friction."""
    from robodyn.analysis.accuracy import available_methods
    from robodyn.simulation.puma_line import MATA_TABLE_6, MATA_TABLE_7, joint_ranking, puma_line_study

    with user_errors():
        count(samples, "--samples", 2)
        number(rtol, "--rtol", 1e-12, 0.1)
        number(atol, "--atol", 1e-14, 1.0)
        # inverse kinematics and dynamics at every grid point, and the torque interpolant over them
        check_work(f"demo puma-line with --samples {samples}", nbytes=8.0 * samples * 6 * 200,
                   flops=1e5 * samples, hint="give fewer --samples")
        model = get_robot(robot)
        chosen = _methods(methods) or available_methods("forward")
        with progress("inverse kinematics", total=1 + len(chosen)) as bar:

            def step(stage: str) -> None:
                if stage != "reference":
                    bar.advance()
                bar.update(description="inverse kinematics + dynamics" if stage == "reference"
                           else f"simulating {stage}")

            result = puma_line_study(model, methods=chosen, samples=samples, progress=step, rtol=rtol, atol=atol,
                                     interpolation=interpolation, rotor_inertia=rotor_inertia)
            bar.advance()
        if plot is not None:
            result.plot(plot)
        t6 = result.table6()
        if json_out:
            print_json({"robot": model.name, "samples": samples, "rtol": rtol, "atol": atol,
                        "interpolation": interpolation, "rotor_inertia": rotor_inertia,
                        "joint_ranking": list(result.joint_ranking()),
                        "table6": {m: {"q": e[:, 0], "qd": e[:, 1], "qdd": e[:, 2]} for m, e in t6.items()},
                        "table7": {m: {"seconds": sec, "rhs_evaluations": nfev} for m, (sec, nfev) in result.table7().items()},
                        "plot": None if plot is None else str(plot)})
            return
        first = next(iter(t6))
        print_table("joint", "avg |q − q*| (rad)", "avg |q̇ − q̇*| (rad/s)", "avg |q̈ − q̈*| (rad/s²)",
                    "Mata et al. |q − q*|", title=f"Table 6 — {first}",
                    rows=[(str(j + 1), *(f"{v:.6e}" for v in row), f"{MATA_TABLE_6[j, 0]:.3e}")
                          for j, row in enumerate(t6[first])])
        console.print("joints by avg |q − q*|: robodyn " + ", ".join(map(str, result.joint_ranking()))
                      + "; Mata et al. " + ", ".join(map(str, joint_ranking(MATA_TABLE_6))), highlight=False)
        for method, errs in t6.items():
            if method != first:
                rel = np.max(np.abs(errs - t6[first]) / np.maximum(np.abs(t6[first]), 1e-300))
                console.print(f"Table 6 — {method}: every entry within {rel:.1e} (relative) of {first}'s")
        integrator = "LSODA (smooth Coulomb friction)" if np.any(model.Fc > 0) else "RK45"
        print_table("method", "time (s)", "RHS evaluations", "ms per evaluation",
                    title=f"Table 7 — {integrator}, rtol = {rtol:g}, atol = {atol:g}, restarted every 0.1 s "
                          "as Mata et al. do",
                    rows=[(method, f"{seconds:.3f}", str(nfev), f"{1e3 * seconds / nfev:.3f}")
                          for method, (seconds, nfev) in result.table7().items()]
                    + [(f"Mata et al. {name}", f"{seconds:.2f}", str(nfev), f"{1e3 * seconds / nfev:.3f}")
                       for name, (seconds, nfev) in MATA_TABLE_7.items()])
        if plot is not None:
            console.print(f"plot written to {plot}", highlight=False)


@app.command("opcount")
def opcount_command(
    n_max: int = typer.Option(8, help="count for n = 1..n_max revolute joints, 1 or more"),
    methods: str = typer.Option(None, help="comma-separated method names to count (default: all installed)"),
    customized: bool = typer.Option(True, "--customized/--no-customized",
                                    help="also count the customized models of each formulation against the "
                                         "published figures (Mata et al., Kozłowski, Khalil & Dombre Table 9.5)"),
    convention: str = typer.Option("robodyn", help="counting rule of our counts: robodyn, khalil_dombre, mata or "
                                                   "kozlowski (each paper's own rule, docs/studies.md §3)"),
    json_out: bool = JSON_OPTION,
) -> None:
    """Multiplications and additions per method vs n, next to the published formulas (Khalil & Dombre, Featherstone, Mata et al., Kozłowski)."""
    from robodyn.analysis.opcount import (
        OpcountReport, counting_convention, customized_report, kozlowski_table_1, kozlowski_table_2, opcount_report,
        table_9_5,
    )

    with user_errors():
        count(n_max, "--n-max")
        counting_convention(convention)
        if customized and n_max > MAX_SYMBOLIC_JOINTS and not allow_large():
            raise InputError(f"--n-max {n_max} with --customized: the customized models are symbolic, limited to "
                             f"n <= {MAX_SYMBOLIC_JOINTS}; give --no-customized or run `robodyn --allow-large ...`")
        # the counts trace every formulation for n = 1..n_max (about n^2 traced operations each)
        check_work(f"opcount --n-max {n_max}", nbytes=1e4 * n_max**2, flops=1e7 * n_max**2,
                   hint="give a smaller --n-max")
        with progress("counting", total=None) as bar:
            report = opcount_report(n_max, methods=_methods(methods), convention=convention,
                                    progress=lambda s: bar.update(description=f"counting {s}"))
            if customized:
                bar.update(description="counting the customized models")
                custom = customized_report(n_fit=n_max, convention=convention)
                koz, koz2 = kozlowski_table_1(), kozlowski_table_2()
                t95 = table_9_5()
        extra = ({"customized": custom, "kozlowski_table_1": koz, "kozlowski_table_2": koz2, "table_9_5": t95}
                 if customized else {})
        if json_out:
            print_json({"n": list(range(1, n_max + 1)), "convention": convention,
                        "counts": [{"kind": c.kind, "method": c.method, "error": c.error or None,
                                    **{op: c.series(op, convention) if not c.error else None
                                       for op in ("mul", "add", "sin", "cos", "div", "sqrt")}}
                                   for c in report.counts],
                        "comparison": [dict(zip(OpcountReport.HEADER, row)) for row in report.rows()], **extra})
            return
        rule = counting_convention(convention)
        counts = Table("method", *(f"n={n}" for n in range(1, n_max + 1)), "sin, cos",
                       title="multiplications (divisions included) / additions (subtractions included)"
                       if convention == "robodyn" else f"multiplications / additions as {rule.source} count them: "
                                                        f"{rule.rule}")
        for c in report.counts:
            if c.error:
                counts.add_row(f"{c.kind} {c.method}", *(["—"] * n_max), "")
                continue
            mul, add = c.series("mul", convention), c.series("add", convention)
            last = c.tallies[-1]
            counts.add_row(f"{c.kind} {c.method}", *(f"{m}/{a}" for m, a in zip(mul, add)),
                           f"{last.sin}, {last.cos} (n={n_max})")
        console.print(counts)
        print_table(*OpcountReport.HEADER, title="fitted counts vs the published formulas", rows=report.rows())
        console.print("Counted: one evaluation (batch of 1) on a general nR arm; operations with exact 0/±1 and "
                      "between robot constants are free; sin/cos separate. See docs/studies.md.")
        if customized:
            _print_customized(custom, koz, koz2, t95)


def _print_customized(custom, koz, koz2, t95) -> None:
    def num(x):
        return "—" if x is None else f"{x:g}"

    def published(r):
        return f"{num(r['published_mul'])}/{num(r['published_add'])}"

    def formulas(r):
        return f"{r['published_mul_formula']} / {r['published_add_formula']}"

    print_table("model", "robot", "ours mul/add", "ours (exact fit, general robot)", "published", "published mul/add",
                "published formula", "≤", title="customized models (n = 6) vs the published counts",
                rows=[(r["model"], r["robot"], f"{r['mul']}/{r['add']}",
                       f"{r['ours_mul_formula']} / {r['ours_add_formula']}" if r["ours_mul_formula"] else "",
                       r["published"], published(r), formulas(r), "yes" if r["at_or_below"] else "NO") for r in custom])
    print_table("recursion", "robot", "ours mul/add", "published", "published mul/add", "published formula",
                title="Kozłowski Table 1 per recursion (n = 6)",
                rows=[(r["recursion"], r["robot"], f"{r['mul']}/{r['add']}", r["published"], published(r), formulas(r))
                      for r in koz])
    print_table("recursion", "ours mul (div)/add", "published mul + div/add", "published mul / add / div",
                title="Kozłowski Table 2 per recursion, general 6R (n = 6)",
                rows=[(r["recursion"], f"{r['mul']} ({r['div']})/{r['add']}", published(r),
                       f"{formulas(r)} / {r['published_div_formula']}") for r in koz2])
    print_table("robot", "inertial parameters", "ours mul/add", "Khalil & Dombre mul/add",
                title="Khalil & Dombre Table 9.5, presented method (customized Newton–Euler, base parameters)",
                rows=[(r["robot"], r["variant"], f"{r['mul']}/{r['add']}", published(r)) for r in t95])
    robots = dict((r["robot"], r["robot_description"]) for r in custom)
    console.print("Robots: " + "; ".join(f"{k} = {v}" for k, v in robots.items())
                  + ". Customized: SYMORO's rules (0/±1 folded, constants off-line, repeated expressions shared, "
                  "unused ones dropped). See docs/formulations.md.", highlight=False)
