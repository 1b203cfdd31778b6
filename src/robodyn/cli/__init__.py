"""The ``robodyn`` command line.  Each module registers its commands on the shared typer app.

:func:`main` is the console script: ``robodyn --version`` answers without importing typer or the library; every
other command line goes to :data:`app`, which is built (its command modules imported) on first use.
"""

import sys

from robodyn.version import __version__


#: The command modules, in the order of ``robodyn --help``; each registers its commands (named in its docstring)
#: on import.
_COMMANDS = ("core", "model", "studies", "kozlowski", "generate", "parameters", "calibration", "identification",
             "simulation", "view", "kinematics")


def _build_app():
    from importlib import import_module

    from robodyn.cli._app import app

    for name in _COMMANDS:
        import_module(f"robodyn.cli.{name}")
    return app


def __getattr__(name: str):
    if name == "app":
        app = _build_app()
        globals()["app"] = app
        return app
    raise AttributeError(f"module 'robodyn.cli' has no attribute {name!r}")


def main() -> None:
    """The ``robodyn`` command (the console script)."""
    if sys.argv[1:] == ["--version"]:  # typer and the command modules take seconds to import
        sys.stdout.write(f"robodyn {__version__}\n")
        return
    app = __getattr__("app")
    app()


__all__ = ("app", "main")
