"""The ``robodyn`` command line.  Each module registers its commands on the shared typer app.

:func:`main` is the console script: ``robodyn --version`` answers without importing typer or the library; every
other command line goes to :data:`app`, which is built (its command modules imported) on first use.
"""

import sys

from robodyn.version import __version__


def _build_app():
    from robodyn.cli._app import app

    # Command modules register themselves on import (one module per topic).
    from robodyn.cli import core  # noqa: F401
    from robodyn.cli import model  # noqa: F401  (model, fd, properties)
    from robodyn.cli import studies  # noqa: F401
    from robodyn.cli import kozlowski  # noqa: F401  (demo kozlowski-puma)
    from robodyn.cli import generate  # noqa: F401
    from robodyn.cli import parameters  # noqa: F401  (base-params)
    from robodyn.cli import calibration  # noqa: F401  (calibrate-gravity, calibration-poses, demo wam-gravity)
    from robodyn.cli import identification  # noqa: F401  (identify, excite)
    from robodyn.cli import simulation  # noqa: F401  (simulate)
    from robodyn.cli import view  # noqa: F401  (view)
    from robodyn.cli import kinematics  # noqa: F401  (fk, jacobian, ik, identify-payload)

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
