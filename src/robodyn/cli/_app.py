"""The typer application shared by every command module.

Help is plain text (fits any width, no markup), the usage line names arguments as ``ROBOT`` (not ``{robot}``),
and every error — robodyn's (``user_errors``) and usage errors of the command line alike — is one line on
standard error with exit status 2.
"""

from __future__ import annotations

import re
import sys

import typer
from typer.core import TyperCommand, TyperGroup


def _plain(piece: str) -> str:
    m = re.fullmatch(r"\{(.*)\}(\.\.\.)?", piece)
    return (m.group(1).upper() + (m.group(2) or "")) if m else piece


class _Command(TyperCommand):
    def collect_usage_pieces(self, ctx):
        return [_plain(p) for p in super().collect_usage_pieces(ctx)]


class Group(TyperGroup):
    def collect_usage_pieces(self, ctx):
        return [_plain(p) for p in super().collect_usage_pieces(ctx)]

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        from typer._click.exceptions import ClickException, NoArgsIsHelpError
        from typer.exceptions import Abort

        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except NoArgsIsHelpError as exc:  # `robodyn` alone: the help, as usual
            exc.show()
            sys.exit(exc.exit_code)
        except ClickException as exc:
            where = exc.ctx.command_path if getattr(exc, "ctx", None) is not None else (prog_name or "robodyn")
            message = " ".join(exc.format_message().split())
            sys.stderr.write(f"error: {message} (see '{where} --help')\n")
            sys.exit(exc.exit_code)
        except Abort:
            sys.stderr.write("aborted\n")
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


class Typer(typer.Typer):
    """typer.Typer whose commands use the plain usage line (``ROBOT``, not ``{robot}``)."""

    def command(self, *args, cls=None, **kwargs):
        return super().command(*args, cls=cls or _Command, **kwargs)


app = Typer(name="robodyn", help="Dynamics of robot manipulators (Khalil–Kleinfinger notation): models, "
            "inverse/direct dynamics, base parameters, symbolic models.", no_args_is_help=True, add_completion=False,
            pretty_exceptions_enable=False, rich_markup_mode=None, cls=Group)


def _version(value: bool) -> None:
    if value:
        from robodyn import __version__

        sys.stdout.write(f"robodyn {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _main(
    no_strict: bool = typer.Option(
        False, "--no-strict", help="Load published models whose inertias violate the triangle inequality "
        "(Corke's PUMA 560 link 3, the Stanford arm link 5, UR10 link 6) with a warning instead of an error."
    ),
    allow_large: bool = typer.Option(
        False, "--allow-large", help="Lift the limits on the memory (4 GiB) and estimated time (10 min) of a "
        "command, on the joints of symbolic models (60) and on the bytes a log may decode to (1 GiB); same as "
        "ROBODYN_ALLOW_LARGE=1."
    ),
    version: bool = typer.Option(False, "--version", is_eager=True, callback=_version,
                                 help="Print robodyn's version and exit."),
    tip: str = typer.Option(None, "--tip", help="URDF robots: end the chain at this link (e.g. tool0), for every "
                                                "command."),
    base: str = typer.Option(None, "--base", help="URDF robots: start the chain at this link (e.g. base_link)."),
    floating: bool = typer.Option(False, "--floating", help="Load the robot with a floating base (free-flyer "
                                  "vectors: --q n + 7 numbers, --qd/--qdd/--tau n + 6); a URDF's root link becomes "
                                  "the base body."),
) -> None:
    """robodyn: dynamics of robot manipulators."""
    from robodyn.cli._common import set_strict, set_urdf_chain
    from robodyn.cli._limits import set_allow_large

    set_strict(not no_strict)
    set_urdf_chain(tip, base, floating)
    set_allow_large(allow_large)
