"""Commands on robot models and inverse dynamics: list, info, id."""

from __future__ import annotations

from rich.table import Table

from robodyn.cli._app import app
from robodyn.cli._common import console, user_errors
from robodyn.model.io import list_robots


@app.command("list")
def list_command() -> None:
    """List the built-in robots."""
    with user_errors():
        table = Table("robot", "joints", "source")
        from robodyn.model.io import load

        for name in list_robots():
            r = load(name)
            table.add_row(name, "".join("RP-"[s] for s in r.sigma), r.source)
        console.print(table)
