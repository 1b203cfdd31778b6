"""The typer application shared by every command module."""

import typer

app = typer.Typer(
    name="robodyn",
    help="Dynamics of robot manipulators (Khalil–Kleinfinger notation): models, inverse/direct dynamics, "
    "base parameters, symbolic models.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _main() -> None:
    """robodyn: dynamics of robot manipulators."""
