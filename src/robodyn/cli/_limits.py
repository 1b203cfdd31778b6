"""Checks the CLI makes before it computes: numeric options in range, and the work a command asks for.

Every numeric option is checked to be a finite number within the range its help states, and the memory and time
a command needs are estimated before anything is allocated; a request above :data:`MAX_BYTES`,
:data:`MAX_SECONDS` or :data:`MAX_SYMBOLIC_JOINTS` is refused in one line naming the estimate, unless
``robodyn --allow-large`` or ``ROBODYN_ALLOW_LARGE=1`` lifts the limits (docs/getting-started.md).
"""

from __future__ import annotations

import math

from robodyn.errors import InputError
# one switch for every limit: --allow-large (and ROBODYN_ALLOW_LARGE) also lifts the readers' limit on decoded bytes
from robodyn.files import ALLOW_ENV, allow_large, set_allow_large  # noqa: F401  (re-exported for the commands)
from robodyn.files import size_text

#: largest memory a command may plan to use (bytes) without --allow-large
MAX_BYTES = 4 * 2**30
#: largest estimated run time (s) of a command without --allow-large, at ~1e9 floating-point operations per second
MAX_SECONDS = 600.0
_FLOPS_PER_SECOND = 1e9
#: largest number of joint variables of a symbolic model (generate, symbolic base parameters, opcount) without
#: --allow-large: symbolic expansion grows faster than n^2 in memory and time
MAX_SYMBOLIC_JOINTS = 60


def _duration(seconds: float) -> str:
    if seconds >= 86400:
        return f"{seconds / 86400:.3g} days"
    if seconds >= 3600:
        return f"{seconds / 3600:.3g} hours"
    return f"{seconds:.3g} s"


_OVERRIDE = f"run `robodyn --allow-large ...` (or set {ALLOW_ENV}=1) if you mean it"


def check_work(what: str, nbytes: float = 0.0, flops: float = 0.0, hint: str = "") -> None:
    """Refuse ``what`` (e.g. "properties of robot 'x' (n = 1000)") when its estimated memory ``nbytes`` or work
    ``flops`` is above the limits, unless they are lifted. ``hint`` says how to ask for less."""
    if allow_large():
        return
    hint = f"{hint}, or " if hint else ""
    if not nbytes <= MAX_BYTES:
        raise InputError(f"{what} needs about {size_text(nbytes)} of memory, above the limit of "
                         f"{size_text(MAX_BYTES)}; {hint}{_OVERRIDE}")
    seconds = flops / _FLOPS_PER_SECOND
    if not seconds <= MAX_SECONDS:
        raise InputError(f"{what} would take about {_duration(seconds)}, above the limit of "
                         f"{_duration(MAX_SECONDS)}; {hint}{_OVERRIDE}")


def check_symbolic(robot, what: str) -> None:
    """Refuse a symbolic model of more than :data:`MAX_SYMBOLIC_JOINTS` joints unless limits are lifted."""
    if robot.n > MAX_SYMBOLIC_JOINTS and not allow_large():
        raise InputError(f"{what} of robot '{robot.name}' with n = {robot.n} joints: symbolic models are limited to "
                         f"n <= {MAX_SYMBOLIC_JOINTS} (memory and time grow faster than n^2); {_OVERRIDE}")


def number(value, option: str, low: float | None = None, high: float | None = None, *, above: bool = False,
           unit: str = "") -> float:
    """``value`` of option ``option`` as a float: finite, >= ``low`` (> ``low`` with ``above``) and <= ``high``."""
    if value is None:
        return value
    x = float(value)
    unit = f" {unit}" if unit else ""
    if math.isfinite(x) and (low is None or (x > low if above else x >= low)) and (high is None or x <= high):
        return x
    bounds = ([f"{'>' if above else '>='} {low:g}"] if low is not None else []) \
        + ([f"<= {high:g}"] if high is not None else [])
    wanted = f"a number {' and '.join(bounds)}{unit}" if bounds else "a finite number"
    raise InputError(f"option {option} = {value!r}: give {wanted}")


def count(value, option: str, low: int = 1, high: int | None = None) -> int:
    """``value`` of option ``option`` as an int within [low, high] (high: a hard ceiling, not lifted)."""
    if value is None:
        return value
    if isinstance(value, bool) or int(value) != value or value < low or (high is not None and value > high):
        top = f" and <= {high}" if high is not None else ""
        raise InputError(f"option {option} = {value!r}: give an integer >= {low}{top}")
    return int(value)


def seed(value, option: str = "--seed") -> int:
    """A random seed: an integer from 0 to 2^63 - 1 (what NumPy's generators take)."""
    return count(value, option, 0, 2**63 - 1)
