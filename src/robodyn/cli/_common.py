"""Helpers shared by the CLI commands: robot loading, vector options, JSON output, error reporting."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
import typer
from rich.console import Console
from rich.table import Table as _RichTable
from rich.text import Text

from robodyn.errors import InputError, RobodynError
# MAX_CSV_BYTES: the largest CSV file (bytes) that the commands read (states, measurements, logs)
from robodyn.logs import MAX_CSV_BYTES, read_csv_columns, require_columns  # noqa: F401 (re-exported)
from robodyn.model.io import load

#: Rich markup is off everywhere: text from model files and messages (``[/x]``, ``[x, y, z]``) prints as it is;
#: styles are given as ``style=`` arguments or ``rich.text.Text`` objects, never inside the text.
console = Console(markup=False, highlight=False)
err_console = Console(stderr=True, markup=False, highlight=False)

#: The robot argument and the --json option that most commands take.
ROBOT_ARGUMENT = typer.Argument(..., help="Robot: built-in name (see `robodyn list`), YAML model file, URDF or "
                                "MuJoCo MJCF (.xml).")
JSON_OPTION = typer.Option(False, "--json", help="Print machine-readable JSON instead of tables.")
#: The JointState topic of a ROS bag given as a joint log.
TOPIC_OPTION = typer.Option("/joint_states", "--topic", help="With a ROS bag: the JointState topic.")
#: The part of every joint log a command reads (robodyn.read_joint_log's span).
SPAN_OPTION = typer.Option(None, "--span", metavar="START:STOP",
                           help="Read only the messages (ROS bag) or data rows (HDF5, Parquet, CSV) START to "
                                "STOP-1 of every file, 0-based, either end left open (e.g. :700 or 700:): one run "
                                "of a bag that holds two, or a part of a log.")


def parse_span(text: str | None, option: str = "--span"):
    """``--span START:STOP`` (or ``option``) as read_joint_log's span (start, stop), None for an open end; None
    without it."""
    if text is None:
        return None
    parts = text.split(":")
    try:
        if len(parts) != 2:
            raise ValueError
        span = tuple(int(x) if x.strip() else None for x in parts)
    except ValueError:
        raise InputError(f"{option} {text!r}: give START:STOP, 0-based message or row indices, STOP excluded, either "
                         "left out for an open end (e.g. 0:700, :700, 700:)") from None
    return span


def span_rows(path, span, columns: dict) -> dict:
    """The data rows ``span`` (:func:`parse_span`; None: all) of a command's own CSV, read as ``columns``: each
    array cut alike along its first axis (rows), the other values kept."""
    if span is None:
        return columns
    rows = next(len(v) for v in columns.values() if isinstance(v, np.ndarray))
    start, stop = span
    if (start or 0) >= rows or (stop is not None and stop <= (start or 0)):
        raise InputError(f"{path}: --span {'' if start is None else start}:{'' if stop is None else stop} holds none "
                         f"of its {rows} data rows; give a span within 0:{rows}, STOP above START")
    return {k: v[start:stop] if isinstance(v, np.ndarray) else v for k, v in columns.items()}


class Table(_RichTable):
    """rich.table.Table whose cells wrap between words when the terminal is narrow, never cut to "recu…"; tables
    without vertical lines drop their blank top and bottom edges (no stray blank lines)."""

    def __init__(self, *headers, **kwargs):
        from rich import box

        if kwargs.get("box") is box.SIMPLE_HEAD:
            kwargs.setdefault("show_edge", False)
        super().__init__(*headers, **kwargs)

    def add_column(self, *args, **kwargs):
        kwargs.setdefault("overflow", "fold")
        super().add_column(*args, **kwargs)

    def add_row(self, *cells, **kwargs):
        super().add_row(*cells, **kwargs)
        widest = self.__dict__.setdefault("widest_words", [max(map(len, str(c.header).split()), default=0)
                                                           for c in self.columns])
        for i, cell in enumerate(cells[:len(widest)]):
            text = cell.plain if hasattr(cell, "plain") else cell if isinstance(cell, str) else ""
            widest[i] = max(widest[i], max(map(len, text.split()), default=0))

    def __rich_console__(self, console, options):
        # Each column at least as wide as its longest word when the table fits that way: a narrow or piped
        # terminal then wraps between words and never splits a name or a number ("-2.897" / "3").  A table too
        # wide even so keeps folding, so that no column is cropped away.
        widest = self.__dict__.get("widest_words", [])
        _, right, _, left = self.padding
        cols = len(widest)
        needed = sum(widest) + (left + right) * cols - (0 if self.pad_edge else left + right) \
            + ((cols - 1) + 2 * self.show_edge if self.box else 0)
        if widest and needed <= options.max_width:
            for column, width in zip(self.columns, widest):
                column.min_width = max(column.min_width or 0, width)
        yield from super().__rich_console__(console, options)


def compact_table(*headers, **kwargs) -> Table:
    """A :class:`Table` without vertical lines or edges: a rule under the header, one space between columns."""
    from rich import box

    return Table(*headers, **{"box": box.SIMPLE_HEAD, "pad_edge": False, "padding": (0, 1, 0, 0), **kwargs})


def print_table(*headers, rows=(), compact: bool = False, **kwargs) -> None:
    """Print a :class:`Table` (a :func:`compact_table` with ``compact``) of ``headers`` and the cells ``rows``."""
    table = (compact_table if compact else Table)(*headers, **kwargs)
    for row in rows:
        table.add_row(*row)
    console.print(table)


def warn(text: str) -> None:
    """One warning line on standard error (``text`` printable already)."""
    err_console.print(Text("warning: ", style="bold yellow") + Text(text), soft_wrap=True)


#: Relative size under which a printed value is rounding noise of the computation (-2.5e-27 N m beside 10 N m).
NOISE = 1e-12


def chop(values, scale: float | None = None) -> np.ndarray:
    """``values`` with the entries below ``NOISE`` times ``scale`` (default: the largest |value|, at least 1) set to
    exact zeros, for printing: rounding noise is not shown as a value."""
    v = np.array(values, dtype=float)
    finite = np.abs(v[np.isfinite(v)])
    scale = max(1.0, float(finite.max(initial=0.0))) if scale is None else scale
    v[np.abs(v) < NOISE * scale] = 0.0
    return v + 0.0  # no -0


def fixed_point(values, digits: int = 4) -> list[str]:
    """Entries of ``values`` with one number of decimals, that of ``digits`` significant digits on the largest
    one (numpy's matrix style): a column of numbers that keeps its width at 80 columns; "0" for zeros."""
    v = chop(values)
    top = float(np.abs(v).max(initial=0.0))
    decimals = 0 if top == 0 else min(8, max(0, digits - 1 - int(np.floor(np.log10(top)))))
    out = []
    for x in v.reshape(-1):
        text = f"{x:.{decimals}f}"
        out.append("0" if float(text) == 0 else text)
    return out


def matrix_table(M: np.ndarray, labels, first: int = 0):
    """A compact table of the matrix ``M`` whose columns are numbered 1..m (``names_legend`` names them) and whose
    rows are ``labels``, every entry with the decimals of 4 significant digits on the largest one: n = 9 fits in
    80 columns; the columns from ``first`` on are right-justified."""
    M = np.atleast_2d(M)
    table = compact_table("", *(str(k) for k in range(1, M.shape[1] + 1)))
    for label, row in zip(labels, np.array(fixed_point(M)).reshape(M.shape)):
        table.add_row(label, *row)
    for column in table.columns[first:]:
        column.justify = "right"
    return table


def names_legend(names) -> str:
    """"joints: 1 = a, 2 = b, ..." for tables whose columns are numbered because the names are long."""
    return "joints: " + ", ".join(f"{k} = {name}" for k, name in enumerate(names, start=1))


def one_line(text) -> str:
    """``text`` on one line (newlines and runs of spaces become one space), control characters escaped."""
    from robodyn.sanitize import printable

    return " ".join(printable(text).split())


@contextmanager
def user_errors():
    """Turn robodyn errors, file-system errors and an unforeseen MemoryError into one line on stderr and exit
    code 2 (no traceback).  NumPy's RuntimeWarnings are silenced inside: an overflow that matters raises
    NumericOverflowError, and the warnings would add lines of source code to that one line.  Other warnings print
    as one ``warning:`` line each (at the end of the command: Python's own printing would add the source file, line
    and code)."""
    import warnings

    try:
        with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            try:
                yield
            finally:  # each one line, before an error's
                for w in caught:
                    warn(one_line(str(w.message)))
    except MemoryError:
        _fail("out of memory: the command asks for more than this machine has; give smaller sizes (samples, "
              "steps, count, duration, rate)")
    except RobodynError as exc:
        _fail(one_line(exc))
    except OSError as exc:
        where = f" {exc.filename!r}" if getattr(exc, "filename", None) else ""
        _fail(f"cannot access{where}: {exc.strerror or exc}")
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise typer.Exit(130) from None


def _fail(message: str):
    sys.stdout.flush()
    sys.stderr.write(f"error: {message}\n")
    raise typer.Exit(2) from None


#: Set by the global option ``robodyn --no-strict COMMAND ...``: accept published inertias that violate the
#: triangle inequality (with a warning) in every command that loads a robot.
_STRICT: ContextVar[bool] = ContextVar("robodyn_cli_strict", default=True)


def set_strict(strict: bool) -> None:
    """Make :func:`get_robot` strict (default) or lenient about non-physical published inertias (for the
    command run in this context)."""
    _STRICT.set(bool(strict))


#: Set by the global options ``robodyn --tip LINK --base LINK --floating COMMAND ...``: the chain a URDF is cut
#: to, and whether the robot is loaded with a floating base.
_URDF_CHAIN: ContextVar[tuple] = ContextVar("robodyn_cli_urdf_chain", default=(None, None, False))


def set_urdf_chain(tip: str | None, base: str | None, floating: bool = False) -> None:
    """Make :func:`get_robot` cut URDF models to the chain from link ``base`` to link ``tip`` (None: whole tree),
    and load every robot with a floating base when ``floating``."""
    _URDF_CHAIN.set((tip, base, bool(floating)))


def get_robot(name: str, strict: bool | None = None):
    """The robot ``name`` (built-in, ``.yaml`` or ``.urdf``; ``strict`` defaults to the ``--no-strict`` setting),
    with its name, joint names and source made :func:`robodyn.sanitize.printable` (no terminal escape sequence
    from a model file reaches the screen)."""
    import dataclasses
    import warnings

    from robodyn.sanitize import printable

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        strict = _STRICT.get() if strict is None else strict
        tip, base, floating = _URDF_CHAIN.get()
        if tip is None and base is None:
            robot = load(name, strict=strict, floating=floating)
        elif str(name).lower().endswith(".urdf"):
            from robodyn.model.urdf import from_urdf

            robot = from_urdf(name, tip=tip, base=base, strict=strict, floating=floating)
        else:
            raise InputError(f"--tip/--base cut a URDF model; {name!r} is not a .urdf file")
    for w in caught:
        warn(printable(str(w.message)))
    clean = dict(name=printable(robot.name), source=printable(robot.source),
                 frame_names=tuple(printable(n) for n in robot.frame_names),
                 link_names=tuple(printable(n) for n in robot.link_names))
    if all(getattr(robot, k) == v for k, v in clean.items()):
        return robot
    return dataclasses.replace(robot, **clean)


def parse_vector(text: str | None, n: int, option: str, default: float = 0.0, what: str | None = None) -> np.ndarray:
    """Parse ``"0.1,0.2,..."`` (commas or spaces) into an (n,) array; ``None`` gives ``default`` everywhere.
    ``what`` names the n entries in the message (default: one per joint of the robot)."""
    if text is None:
        return np.full(n, default)
    parts = [p for p in text.replace(",", " ").split() if p]
    try:
        values = np.array([float(p) for p in parts])
    except ValueError:
        raise InputError(f"option {option} = {text!r}: give {n} numbers separated by commas") from None
    if values.shape != (n,):
        raise InputError(f"option {option} has {values.size} numbers; " + (
            f"the robot has n = {n} joints, give {n}" if what is None else f"give {n} ({what})"))
    return values


def joint_vector(robot, text: str | None, option: str, degrees: bool = False, position: bool = False,
                 default: float = 0.0) -> np.ndarray:
    """A per-joint option (n,) of ``robot``: :func:`parse_vector`, then with ``degrees`` the revolute joints' entries
    read in degrees (deg, deg/s, deg/s²) and converted to radians; a ``position`` outside the robot's joint limits,
    or beyond ±2π on an unlimited revolute joint, gives a one-line warning on standard error (degrees typed
    without ``--degrees`` are the usual cause)."""
    values = parse_vector(text, robot.n, option, default)
    revolute = robot.sigma[robot.joint_frames] == 0
    if degrees:
        values = np.where(revolute, np.deg2rad(values), values)
    if position and text is not None and np.all(np.isfinite(values)):  # NaN/inf: the error comes instead
        warn_outside_limits(robot, values[None, :], option, degrees)
    return values


def warn_outside_limits(robot, q: np.ndarray, what: str, degrees: bool = False) -> None:
    """One warning line naming the joints of the positions ``q`` (N, n) outside the joint limits (or beyond ±2π
    on an unlimited revolute joint); ``robot`` comes from :func:`get_robot`, its names already printable."""
    revolute = robot.sigma[robot.joint_frames] == 0
    lim = np.array(robot.qlim, dtype=float)
    lim = np.where(np.isfinite(lim), lim, np.where(revolute[:, None], [-2 * np.pi, 2 * np.pi], [-np.inf, np.inf]))
    outside = np.any((q < lim[:, 0] - 1e-12) | (q > lim[:, 1] + 1e-12), axis=0)
    if not np.any(outside):
        return
    shown = np.where(revolute[:, None] & degrees, np.rad2deg(lim), lim)
    unit = [" deg" if degrees and revolute[k] else "" for k in range(robot.n)]
    names = ", ".join(f"{robot.q_names[k]} ({shown[k, 0]:.4g}..{shown[k, 1]:.4g}{unit[k]})"
                      for k in np.flatnonzero(outside))
    hint = "" if degrees else "; angles are in radians: give --degrees if you typed degrees"
    warn(f"{what}: outside the joint limits of {names}{hint}")


def print_json(obj, undefined=()) -> None:
    """Print ``obj`` as strict JSON (RFC 8259: no NaN or Infinity). A number that is not finite is an error
    (one line naming the field, exit 2, nothing printed); callers write ``None`` (null) where a value is absent
    on purpose (e.g. the limit of an unlimited joint). ``undefined``: names of fields (at any depth) where NaN
    means "not defined" (e.g. the standard deviation of an exact fit); their NaN entries print as null."""

    def plain(o, where, nan_ok=False):
        if isinstance(o, np.ndarray):
            return plain(o.tolist(), where, nan_ok)
        if isinstance(o, np.generic):
            return plain(o.item(), where, nan_ok)
        if isinstance(o, float) and nan_ok and o != o:
            return None
        if isinstance(o, float) and not np.isfinite(o):
            _fail(f"the result {where or 'value'} is {o} (not finite), which JSON cannot hold; check the inputs "
                  "for overflow")
        if isinstance(o, dict):
            return {str(k): plain(v, f"{where}.{k}" if where else str(k), nan_ok or k in undefined)
                    for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [plain(v, f"{where}[{i}]", nan_ok) for i, v in enumerate(o)]
        if o is None or isinstance(o, (str, int, float, bool)):
            return o
        return str(o)

    sys.stdout.write(json.dumps(plain(obj, ""), indent=2, allow_nan=False) + "\n")


def check_outputs(*pairs, inputs=()) -> None:
    """Fail before any computation when an output cannot be written (missing folder, a folder, a socket...):
    ``pairs`` of (option, path or None), every one checked before anything is written, so nothing is.

    Also an InputError naming both: two outputs that are the same file (one would overwrite the other), and an
    output that is a file the command reads — ``inputs``: pairs (what, path or None, or a list of paths), e.g.
    ``("DATA file", data)``; an output is an input when it is the same file (:func:`os.path.samefile` where both
    exist, else the same resolved absolute path) or an existing file inside an input folder (a ROS 2 bag).
    Character devices and FIFOs (``/dev/null``, ``/dev/stdout``, a pipe) are written into, never replaced: they
    are left out of these comparisons."""
    from pathlib import Path

    from robodyn.files import check_output, written_into

    outputs = [(option, Path(path)) for option, path in pairs if path is not None]
    for option, path in outputs:
        check_output(path, option)
    outputs = [(option, path) for option, path in outputs if not written_into(path)]
    read = [(what, Path(p)) for what, paths in inputs if paths is not None
            for p in (paths if isinstance(paths, (list, tuple)) else [paths]) if p is not None]
    for option, path in outputs:
        for what, source in read:
            if _same_file(path, source):
                raise InputError(f"{option} {str(path)!r} is the {what} {str(source)!r}: writing it would overwrite "
                                 "an input; give the output another path")
            if source.is_dir() and path.exists() and _inside(path, source):
                raise InputError(f"{option} {str(path)!r} is a file of the {what} {str(source)!r}: writing it would "
                                 "overwrite part of an input; give the output another path")
    for k, (option, path) in enumerate(outputs):
        for other, second in outputs[k + 1:]:
            if _same_file(path, second):
                raise InputError(f"{option} {str(path)!r} and {other} {str(second)!r} are the same file: one would "
                                 "overwrite the other; give each output its own path")


def _same_file(a, b) -> bool:
    """Whether paths ``a`` and ``b`` are one file: :func:`os.path.samefile` where both exist, else their resolved
    absolute paths are equal."""
    import os

    try:
        if os.path.lexists(a) and os.path.lexists(b):
            return os.path.samefile(a, b)
    except (OSError, ValueError):
        pass
    return os.path.realpath(a) == os.path.realpath(b)


def _inside(path, folder) -> bool:
    import os

    real, top = os.path.realpath(path), os.path.realpath(folder)
    return os.path.commonpath([real, top]) == top and real != top


def robot_file(name: str):
    """The file a command's ROBOT argument reads (a Path), or None for a built-in robot (a bare name of one, which
    :func:`robodyn.load` takes whatever exists in the current folder)."""
    from pathlib import Path

    from robodyn.model.io import builtin_name

    return None if builtin_name(name) else Path(name)


def write_outputs(writes) -> None:
    """Write a command's output files: ``writes`` are pairs (path, write), ``write()`` writing that one file
    atomically (:func:`robodyn.files.write_atomically`), called in order once everything that can fail before
    has succeeded.  When one fails, the files written before it by this call are removed (not a device or a pipe,
    which are written into) and the error propagates: a failed command leaves none of its outputs."""
    import os
    import stat

    written = []
    try:
        for path, write in writes:
            write()
            try:
                if stat.S_ISREG(os.lstat(path).st_mode):  # replaced by this write (a device, a link to a
                    written.append(path)                  # descriptor: written into, left alone)
            except OSError:
                pass
    except BaseException:
        for path in written:
            try:
                os.unlink(path)
            except OSError:
                pass
        raise


def is_joint_log(path) -> bool:
    """Whether a command's data file is a joint log read by :func:`robodyn.read_joint_log` (a folder: ROS 2 bag;
    ``.bag``, ``.db3``, ``.mcap``, ``.h5``, ``.hdf5``, ``.parquet``, ``.pq``) rather than the command's own CSV."""
    from pathlib import Path

    from robodyn.logs import FORMATS

    p = Path(path)
    return p.is_dir() or FORMATS.get(p.suffix.lower(), "csv") != "csv"


def read_log(path, robot, topic: str, what: str, span=None):
    """The joint log ``path`` (:func:`robodyn.read_joint_log`; ``span`` its messages or rows read), joints mapped
    to ``robot`` by name, time from the header stamps; InputError when it has no efforts, which ``what`` (e.g.
    "identification") needs."""
    from robodyn.logs import read_joint_log

    log = read_joint_log(path, topic=topic, robot=robot, span=span)
    if log.tau is None:
        raise InputError(f"{path}: the log has no efforts (joint torques); {what} needs them")
    return log
