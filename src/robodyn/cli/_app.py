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
def _main(
    no_strict: bool = typer.Option(
        False, "--no-strict", help="Load published models whose inertias violate the triangle inequality "
        "(Corke's PUMA 560 link 3, the Stanford arm link 5, UR10 link 6) with a warning instead of an error."
    ),
) -> None:
    """robodyn: dynamics of robot manipulators."""
    from robodyn.cli._common import set_strict

    set_strict(not no_strict)
