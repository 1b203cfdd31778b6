"""Output files written atomically: a temporary file in the target's folder, renamed over the target at the end,
so a reader never sees a partial file and an error leaves the previous file (or none) in place."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

from robodyn.errors import InputError


def write_atomically(path: str | os.PathLike, write: Callable[[IO], None], what: str = "output file",
                     binary: bool = False) -> Path:
    """Call ``write(fh)`` to fill a temporary file next to ``path``, then rename it to ``path``.

    Parameters
    ----------
    path : str or PathLike — the file to (re)place.
    write : callable(file object) — writes the whole content to the open temporary file it is given.
    what : str — how error messages name the file (e.g. "plot file", "--out").
    binary : bool — open the temporary file in binary mode (else text, UTF-8).

    Returns
    -------
    Path of the written file.

    Raises
    ------
    InputError
        When the folder does not exist or no file can be created there (names the path and the fix).
    Any error of ``write`` or of the rename, after the temporary file is removed.
    """
    path = Path(path)
    folder = path.parent
    if not folder.is_dir():
        raise InputError(f"{what} {str(path)!r}: folder {str(folder)!r} does not exist; create it or choose another path")
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise InputError(
            f"{what} {str(path)!r}: cannot write in folder {str(folder)!r} ({exc.strerror or exc}); choose another path"
        ) from None
    try:
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8") as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
