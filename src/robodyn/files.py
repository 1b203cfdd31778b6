"""Output files and folders written atomically, with the modes the user's umask gives.

``write_atomically`` fills a temporary file in the target's folder and renames it over the target at the end, so
a reader never sees a partial file and an error leaves the previous file (or none) in place.
``write_folder_atomically`` does the same for a whole folder (``robodyn generate``): the new folder is filled
under a hidden temporary name next to the target and then renamed into place (swapped with the old one on
``--force``), under a lock, so that concurrent writers are serialised and at most one of several runs without
``--force`` succeeds. Both remove their temporary files on any error, on Ctrl-C and on SIGTERM.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO

from robodyn.errors import InputError

#: the file robodyn generate writes in every output folder; --force replaces only folders that hold it
MARKER = "operations.json"

#: Largest model file (YAML or URDF) robodyn reads, in bytes (documented in docs/getting-started.md).
MAX_FILE_BYTES = 1_000_000


def _umask() -> int:
    try:  # Linux: read without changing it (os.umask is process-wide and not thread-safe)
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode_for(path: Path, default: int) -> int:
    """The mode a new file at ``path`` gets: the mode of the file it replaces, else ``default`` & ~umask."""
    try:
        st = os.stat(path, follow_symlinks=False)
        if os.path.isfile(path) and not os.path.islink(path):
            return st.st_mode & 0o7777
    except OSError:
        pass
    return default & ~_umask()


@contextlib.contextmanager
def _sigterm_as_exit():
    """While writing: SIGTERM raises SystemExit(143) in the main thread, so the cleanup of temporary files runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _check_folder(path: Path, folder: Path, what: str) -> None:
    if not folder.is_dir():
        raise InputError(f"{what} {str(path)!r}: folder {str(folder)!r} does not exist; create it or choose another path")


def write_atomically(path: str | os.PathLike, write: Callable[[IO], None], what: str = "output file",
                     binary: bool = False) -> Path:
    """Call ``write(fh)`` to fill a temporary file next to ``path``, then rename it to ``path``.

    The file gets the mode of the file it replaces, else 0666 minus the umask (like any new file). A symbolic
    link at ``path`` is replaced by the file (its target is left alone).

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
        When the folder does not exist, ``path`` is a folder, or no file can be created there (names the path
        and the fix).
    Any error of ``write`` or of the rename (OSError: disk full, ...), after the temporary file is removed.
    """
    path = Path(path)
    folder = path.parent
    _check_folder(path, folder, what)
    if path.is_dir() and not path.is_symlink():
        raise InputError(f"{what} {str(path)!r} is a folder; give a file name (e.g. {str(path / 'out.csv')!r})")
    mode = _mode_for(path, 0o666)
    with _sigterm_as_exit():
        try:
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
        except OSError as exc:
            raise InputError(
                f"{what} {str(path)!r}: cannot write in folder {str(folder)!r} ({exc.strerror or exc}); "
                "choose another path") from None
        try:
            with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8") as fh:
                write(fh)
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return path


_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 RENAME_EXCHANGE); False where the system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    r = fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE)
    if r != 0:
        err = ctypes.get_errno()
        if err in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: file system without the exchange
            return False
        raise OSError(err, os.strerror(err), str(b))
    return True


@contextlib.contextmanager
def _locked(folder: Path):
    """An exclusive lock on ``folder`` itself (flock on its descriptor; no lock file is left behind)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock; the final rename still refuses an existing target
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def write_folder_atomically(out: str | os.PathLike, fill: Callable[[Path], None], force: bool = False,
                            what: str = "--out") -> Path:
    """Create the folder ``out`` with the files ``fill(tmp_folder)`` writes, all or nothing.

    Rules (each violation an InputError naming ``out`` and the fix; ``out`` is then untouched):

    * the parent folder must exist (it is not created, as for every other ``--out``);
    * ``out`` must not exist, or (with ``force``) be a folder that ``robodyn generate`` wrote (it holds
      ``operations.json``) or an empty folder: an existing file, a symbolic link or a folder with other
      files is never replaced;
    * the new folder is renamed into place at the end, swapped atomically with the old one where the system
      can (Linux), under an exclusive lock on the parent folder: concurrent runs are serialised, and of
      several runs without ``force`` exactly one succeeds;
    * folders get mode 0777 minus the umask; temporary folders are removed on any error, Ctrl-C or SIGTERM.
    """
    out = Path(out)
    parent = out.parent
    if out.name in ("", ".", ".."):
        raise InputError(f"{what} {str(out)!r}: give the name of a new folder")
    _check_folder(out, parent, what)

    def check_target() -> None:
        if out.is_symlink():
            raise InputError(f"{what} {str(out)!r} is a symbolic link; give the folder it points to, or a new name")
        if out.exists() and not out.is_dir():
            raise InputError(f"{what} {str(out)!r} exists and is not a folder; it is left untouched: choose another --out")
        if out.is_dir():
            if not force:
                raise InputError(f"output folder {str(out)!r} exists; choose another --out or add --force to replace it")
            if any(out.iterdir()) and not (out / MARKER).is_file():
                raise InputError(f"{what} {str(out)!r} holds files robodyn generate did not write (no {MARKER}); "
                                 "--force replaces only generated folders: remove it yourself or choose another --out")

    check_target()
    mode = 0o777 & ~_umask()
    with _sigterm_as_exit():
        try:
            tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent))
        except OSError as exc:
            raise InputError(f"{what} {str(out)!r}: cannot write in folder {str(parent)!r} "
                             f"({exc.strerror or exc}); choose another path") from None
        try:
            fill(tmp)
            os.chmod(tmp, mode)
            with _locked(parent):
                check_target()  # again: another process may have written it meanwhile
                if out.is_dir():
                    if not _exchange(tmp, out):
                        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=parent))
                        os.replace(out, old / "x")
                        try:
                            os.rename(tmp, out)
                        except BaseException:
                            os.replace(old / "x", out)
                            raise
                        shutil.rmtree(old, ignore_errors=True)
                else:
                    os.rename(tmp, out)
        except OSError as exc:
            raise InputError(f"{what} {str(out)!r}: cannot write the folder ({exc.strerror or exc}); "
                             "choose another path") from None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)  # the old folder after a swap, or the unfinished new one
    return out


def save_figure(fig, path) -> None:
    """Write the Matplotlib figure ``fig`` as a PNG to ``path`` atomically (no partial file)."""
    write_atomically(path, lambda fh: fig.savefig(fh, dpi=120, format="png"), what="plot file", binary=True)
