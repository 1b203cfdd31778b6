"""The ``robodyn`` command line.  Each module registers its commands on the shared typer app."""

from robodyn.cli._app import app

# Command modules register themselves on import (one module per topic).
from robodyn.cli import core  # noqa: E402,F401
from robodyn.cli import model  # noqa: E402,F401  (model, fd, properties)
from robodyn.cli import studies  # noqa: E402,F401
from robodyn.cli import kozlowski  # noqa: E402,F401  (demo kozlowski-puma)
from robodyn.cli import generate  # noqa: E402,F401
from robodyn.cli import parameters  # noqa: E402,F401  (base-params)
from robodyn.cli import calibration  # noqa: E402,F401  (calibrate-gravity, calibration-poses, demo wam-gravity)
from robodyn.cli import identification  # noqa: E402,F401  (identify, excite)
from robodyn.cli import simulation  # noqa: E402,F401  (simulate)
from robodyn.cli import view  # noqa: E402,F401  (view)
from robodyn.cli import kinematics  # noqa: E402,F401  (fk, jacobian, ik, identify-payload)

__all__ = ("app",)
