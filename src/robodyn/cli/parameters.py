"""Command ``base-params``: the base inertial parameters of a robot (Khalil & Dombre §9.4, Table 9.3)."""

from __future__ import annotations

import typer
from rich.text import Text

from robodyn.cli._app import app
from robodyn.cli._common import ROBOT_ARGUMENT, console, get_robot, print_json, print_table, user_errors
from robodyn.cli._limits import check_symbolic, check_work
from robodyn.parameters.regressor import LINK_PARAMETERS


@app.command("base-params")
def base_params_command(
    robot: str = ROBOT_ARGUMENT,
    method: str = typer.Option("symbolic", "--method", help="symbolic (closed-form rules) or numeric (QR)."),
    symbolic_geometry: bool = typer.Option(False, "--symbolic-geometry", help="Lengths as symbols D3, RL4, ..."),
    drop_zero: bool = typer.Option(False, "--drop-zero", help="Treat parameters equal to 0 as known zeros."),
    friction: bool = typer.Option(False, "--friction", help="Add Fc, Fv, Foff of every joint."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the random states (numeric method), 0 or more."),
) -> None:
    """Base inertial parameters: Table 9.3 layout (a row per link, the grouped name or 0) and grouping equations."""
    from robodyn.parameters.base import base_parameters

    with user_errors():
        r = get_robot(robot)
        if method == "symbolic":
            check_symbolic(r, "base-params --method symbolic")
        # the numeric method: a regressor of ~2 (11 + 3) n rows per state over many states, and its QR
        check_work(f"base-params of robot '{r.name}' (n = {r.n})", nbytes=8.0 * 14 * r.n * 600 * r.n * 4,
                   flops=1e4 * 14.0 * r.n**3 * 60)
        bp = base_parameters(r, method=method, drop_zero=drop_zero, symbolic_geometry=symbolic_geometry,
                             friction=friction, seed=seed)
    if as_json:
        print_json({"robot": r.name, "method": bp.method, "count": bp.count, "count_inertial": bp.count_inertial,
                    "count_formula": bp.count_formula, "minimal": bp.minimal, "note": bp.note,
                    "names": list(bp.names), "standard": list(bp.standard),
                    "expressions": [str(e) for e in bp.expressions], "values": bp.values, "table": bp.table(),
                    "grouped": list(bp.grouped), "no_effect": list(bp.no_effect), "zero": list(bp.zero)})
        return
    print_table("j", *(f"{p}j" for p in LINK_PARAMETERS), title=f"Base inertial parameters of {r.name} ({bp.method})",
                rows=[(str(j), *row) for j, row in enumerate(bp.table(), start=1)])
    console.print("Grouping equations", style="bold")
    import sympy

    lengths = sorted(bp.geometry, key=str)
    for eq in bp.equations:
        rhs = sympy.collect(eq.rhs, lengths) if lengths else eq.rhs  # D3**2*(M3 + M4 + ...) as in Khalil & Dombre
        console.print(f"  {eq.lhs} = {rhs}", highlight=False)
    if bp.friction:
        console.print("Friction: " + " ".join(n for n in bp.names if n.startswith(("Fc", "Fv", "Foff"))), highlight=False)
    console.print(f"Without effect: {', '.join(bp.no_effect) or '-'}", highlight=False)
    console.print(f"Grouped: {', '.join(bp.grouped) or '-'}", highlight=False)
    if bp.zero:
        console.print(f"Known zero: {', '.join(bp.zero)}", highlight=False)
    formula = "n/a (tree)" if bp.count_formula is None else str(bp.count_formula)
    console.print(f"{bp.count} base parameters ({bp.count_inertial} of the links; [9.61] gives b_m <= {formula})",
                  highlight=False)
    if not bp.minimal:
        console.print(Text.assemble(("note:", "yellow"), f" {bp.note}"))
