"""Helpers shared by the CLI commands: robot loading, vector options, JSON output, error reporting."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager

import numpy as np
import typer
from rich.console import Console

from robodyn.errors import RobodynError
from robodyn.model.io import load

console = Console()
err_console = Console(stderr=True)


@contextmanager
def user_errors():
    """Turn robodyn errors into a one-line message on stderr and exit code 2 (no traceback)."""
    try:
        yield
    except RobodynError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


#: Set by the global option ``robodyn --no-strict COMMAND ...``: accept published inertias that violate the
#: triangle inequality (with a warning) in every command that loads a robot.
_loading = {"strict": True}


def set_strict(strict: bool) -> None:
    """Make :func:`get_robot` strict (default) or lenient about non-physical published inertias."""
    _loading["strict"] = bool(strict)


def get_robot(name: str, strict: bool | None = None):
    """The robot ``name`` (built-in, ``.yaml`` or ``.urdf``); ``strict`` defaults to the ``--no-strict`` setting."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        robot = load(name, strict=_loading["strict"] if strict is None else strict)
    for w in caught:
        err_console.print(f"[bold yellow]warning:[/] {w.message}", highlight=False, soft_wrap=True)
    return robot


def parse_vector(text: str | None, n: int, option: str, default: float = 0.0) -> np.ndarray:
    """Parse ``"0.1,0.2,..."`` (commas or spaces) into an (n,) array; ``None`` gives ``default`` everywhere."""
    from robodyn.errors import InputError

    if text is None:
        return np.full(n, default)
    parts = [p for p in text.replace(",", " ").split() if p]
    try:
        values = np.array([float(p) for p in parts])
    except ValueError:
        raise InputError(f"option {option} = {text!r}: give {n} numbers separated by commas") from None
    if values.shape != (n,):
        raise InputError(f"option {option} has {values.size} numbers; the robot has n = {n} joints, give {n}")
    return values


def print_json(obj) -> None:
    def default(o):
        if isinstance(o, np.ndarray):
            return o.tolist()
        if isinstance(o, np.generic):
            return o.item()
        raise TypeError(type(o))

    sys.stdout.write(json.dumps(obj, default=default, indent=2) + "\n")
