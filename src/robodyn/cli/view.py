"""``robodyn view``: the robot in a local 3-D web page, or an animation file of a motion."""

from __future__ import annotations

import re
import time
import warnings
from pathlib import Path

import numpy as np
import typer

from robodyn.cli._app import app
from robodyn.cli._common import console, get_robot, joint_vector, user_errors, warn
from robodyn.sanitize import printable


@app.command("view")
def view_command(
    robot: str = typer.Argument(..., help="built-in robot name, YAML model file or URDF"),
    q: str = typer.Option(None, "--q", help="configuration to show, comma-separated (rad | m; default 0)"),
    to: str = typer.Option(None, "--to", help="with --animate: the goal of a rest-to-rest quintic motion from --q"),
    duration: float = typer.Option(2.0, help="with --animate: duration of the motion (s)"),
    animate: Path = typer.Option(None, help="write an animation (.gif, or .mp4 with ffmpeg) instead of serving"),
    host: str = typer.Option("127.0.0.1", help="address to serve the page on (loopback: this machine only)"),
    port: int = typer.Option(None, help="TCP port (default: a free one)"),
    seconds: float = typer.Option(None, help="serve this long, then exit (s; default: until Ctrl-C)"),
    degrees: bool = typer.Option(False, "--degrees", help="revolute joints of --q and --to in degrees"),
    package_dir: list[Path] = typer.Option(None, "--package-dir", help="with a URDF: a folder where its "
                                           "package://PKG/... meshes are looked up (the folder PKG or one holding "
                                           "it); repeat for several. Meshes are read only there and in the URDF's "
                                           "folder."),
    meshes: bool = typer.Option(True, "--meshes/--no-meshes", help="with a URDF: draw its visual meshes "
                                                                   "(default) or capsules along the geometry"),
) -> None:
    """Show the robot in the browser: links along the Khalil–Kleinfinger geometry (a URDF's visual meshes when it
    has them), frames, one slider per joint.

    Prints the page's address and serves until Ctrl-C.  With --animate, writes the motion from --q to --to as an
    animation file instead.
    """
    from robodyn.errors import InputError

    with user_errors():
        model = get_robot(robot)
        q0 = joint_vector(model, q, "--q", degrees, position=True)
        if seconds is not None and not (np.isfinite(seconds) and 0 <= seconds <= 1e7):
            raise InputError(f"--seconds {seconds!r}; give a time in [0, 1e7] s")
        if port is not None and not 0 < port < 65536:
            raise InputError(f"--port {port!r}; give a TCP port in 1..65535")
        urdf = robot if str(robot).lower().endswith(".urdf") else None
        if package_dir and urdf is None:
            raise InputError("--package-dir locates the meshes of a URDF; the robot is not a .urdf file")
        if animate is not None:
            from robodyn.control import QuinticReference
            from robodyn.viewer import animate as write_animation

            if not (np.isfinite(duration) and 0 < duration <= 3600):
                raise InputError(f"--duration {duration!r}; give a time in (0, 3600] s")
            qf = joint_vector(model, to, "--to", degrees, position=True) if to is not None else q0
            t = np.linspace(0.0, duration, max(2, int(duration * 50)))
            path = _warning_summary(write_animation, model, t, QuinticReference(q0, qf, duration).sample(t)[0],
                                    animate, urdf=urdf if meshes else None, package_dirs=package_dir or ())
            console.print(f"wrote {path}")
            return
        from robodyn.viewer import view

        viewer = _warning_summary(view, model, q0, host=host, port=port, urdf=urdf, package_dirs=package_dir or (),
                                  meshes=meshes)
    try:
        drawn = f", {len(viewer.meshes)} frames drawn with the URDF's meshes" if viewer.meshes else ""
        console.print(f"robodyn view: {model.name} at {viewer.url}{drawn} (Ctrl-C to stop)", soft_wrap=True)
        deadline = np.inf if seconds is None else time.monotonic() + seconds
        while time.monotonic() < deadline:
            time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
    except KeyboardInterrupt:
        pass
    finally:
        viewer.close()


def _warning_summary(function, *args, **kwargs):
    """``function(*args, **kwargs)``, its UserWarnings printed afterwards as :func:`_mesh_summary` sums them up."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        value = function(*args, **kwargs)
    for line in _mesh_summary([printable(str(w.message)) for w in caught]):
        warn(line)
    return value


_CAPSULES = re.compile(r"link (.*?): mesh .*; its frame is drawn as capsules\Z", re.S)


def _mesh_summary(messages: list[str]) -> list[str]:
    """The viewer's warnings, those about meshes not drawn summed up in one line: how many, which links, the
    first reason (the others are alike: one missing package folder)."""
    missing = [m for m in messages if _CAPSULES.match(m)]
    if len(missing) < 2:
        return messages
    links = [_CAPSULES.match(m).group(1) for m in missing]
    shown = ", ".join(links[:3]) + (f" and {len(links) - 3} more" if len(links) > 3 else "")
    first = missing[0][len(f"link {links[0]}: "):].removesuffix("; its frame is drawn as capsules")
    return [m for m in messages if m not in missing] + [
        f"{len(missing)} meshes not drawn (links {shown}; their frames are drawn as capsules); the first: {first}"]
