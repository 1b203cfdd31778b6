"""Output files and folders written atomically, with the modes the user's umask gives, and the one bounded
reader of every file robodyn reads (:func:`read_file_bytes`).

:func:`write_atomically` and :func:`write_folder_atomically` (with its :data:`MANIFEST`, which ``--force``
checks) rename a filled temporary over the target, removing it on any error, Ctrl-C or SIGTERM; those a killed
process left are removed by the next write of the same target (:func:`remove_stale_temporaries`).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import io
import os
import shutil
import signal
import socket
import stat
import sys
import tempfile
import threading
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import IO

from robodyn.errors import InputError, ModelFileError
from robodyn.sanitize import printable

#: the manifest in every folder write_folder_atomically writes: a comment line, then ``SHA256  NAME`` per file
#: (``sha256sum -c MANIFEST.sha256`` checks it); --force replaces only folders that hold exactly what it lists
MANIFEST = "MANIFEST.sha256"
_MANIFEST_HEADER = "# robodyn manifest 1: the files robodyn wrote here; --force replaces this folder only while " \
                   "it holds exactly these files, unchanged"
#: a manifest is at most this long (bytes); robodyn writes a few hundred
_MANIFEST_LIMIT = 1 << 20
#: at most this many file names in an error message
_SHOWN = 5

#: Largest model file (YAML or URDF) robodyn reads, in bytes (documented in docs/getting-started.md).
MAX_FILE_BYTES = 1_000_000
#: Most bytes robodyn decodes from one data file (documented in docs/logs.md): a decompressed chunk, message or
#: file of a bag, the declared size of an HDF5, Zarr or Parquet array or column, the arrays kept from a log.
#: Checked before anything of that size is allocated or written; lifted by :func:`set_allow_large` (the CLI's
#: ``--allow-large``) or the environment variable ``ROBODYN_ALLOW_LARGE=1``.
MAX_DECODED_BYTES = 2**30
#: environment variable with the effect of ``--allow-large``
ALLOW_ENV = "ROBODYN_ALLOW_LARGE"

_ALLOW: ContextVar[bool] = ContextVar("robodyn_allow_large", default=False)


def set_allow_large(allow: bool) -> None:
    """Lift (or restore) robodyn's size limits in this context (the CLI's ``--allow-large``)."""
    _ALLOW.set(bool(allow))


def allow_large() -> bool:
    """True when the size limits are lifted: :func:`set_allow_large` or ``ROBODYN_ALLOW_LARGE=1``."""
    return _ALLOW.get() or os.environ.get(ALLOW_ENV, "").strip().lower() in ("1", "true", "yes")


def decoded_limit() -> float:
    """The most bytes a reader may decode from one file: :data:`MAX_DECODED_BYTES`, or infinity when lifted."""
    return float("inf") if allow_large() else float(MAX_DECODED_BYTES)


def check_decoded(label: str, what: str, nbytes: float) -> None:
    """InputError when ``what`` of the file ``label`` would decode to ``nbytes`` bytes, above :func:`decoded_limit`.

    Called before the bytes are allocated, decompressed or written; the message names the size and the remedy."""
    limit = decoded_limit()
    if not nbytes <= limit:
        raise InputError(f"{label}: {what} would take {size_text(nbytes)} once decoded, above the limit of "
                         f"{size_text(limit)} for one file; if the file is trusted, run `robodyn --allow-large ...` "
                         f"or set {ALLOW_ENV}=1")


def too_large(label: str, what: str) -> InputError:
    """The InputError for ``what`` of file ``label`` found, while decoding, to pass :func:`decoded_limit`."""
    return InputError(f"{label}: {what} decodes to more than {size_text(decoded_limit())}, the limit for one file; "
                      f"if the file is trusted, run `robodyn --allow-large ...` or set {ALLOW_ENV}=1")


def size_text(nbytes: float) -> str:
    """``nbytes`` for a message: "1.5 GiB", "3 MiB", "512 bytes", or "an unbounded size"."""
    if nbytes != nbytes or nbytes == float("inf"):
        return "an unbounded size"
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{int(nbytes)} bytes"


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


# ---- temporaries: named after their writer, so that those of killed processes can be found and removed ----------

def _writer_tag() -> str:
    """8 hex digits naming this host and PID namespace: process ids are compared only where they mean the same."""
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        namespace = ""
    return hashlib.sha256(f"{socket.gethostname()}\0{namespace}".encode("utf-8", "replace")).hexdigest()[:8]


def _temp_prefix(name: str, pid: int | None = None) -> str:
    """``.NAME.robodyn-TAG-PID-`` (NAME cut to 100 characters: the whole stays within the usual 255)."""
    return f".{name[:100]}.robodyn-{_writer_tag()}-" + ("" if pid is None else f"{pid}-")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: alive, another user's
        return True
    return True


def remove_stale_temporaries(folder: Path, name: str) -> list[Path]:
    """Remove the temporaries of target ``name`` in ``folder`` that a killed robodyn process left; their paths.

    Only entries named ``.NAME.robodyn-TAG-PID-XXXX.tmp`` with this host's TAG, owned by this user, whose process
    PID has ended are removed (folders without following symbolic links); anything else is left alone.
    """
    if os.name != "posix":  # os.kill(pid, 0) would end the process on Windows
        return []
    prefix = _temp_prefix(name)
    try:
        entries = [e for e in os.listdir(folder) if e.startswith(prefix) and e.endswith(".tmp")]
    except OSError:
        return []
    removed = []
    for entry in entries:
        pid, _, rest = entry[len(prefix):-len(".tmp")].partition("-")
        if not pid.isdigit() or not rest or int(pid) <= 0 or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        path = folder / entry
        try:
            st = os.lstat(path)
            if st.st_uid != os.geteuid():
                continue
            if stat.S_ISDIR(st.st_mode):
                shutil.rmtree(path)
            elif stat.S_ISREG(st.st_mode):
                path.unlink()
            else:
                continue
        except OSError:
            continue
        removed.append(path)
    return removed


# ---- single files ----------------------------------------------------------------------------------------------

def _descriptor_link(path: Path) -> bool:
    """True for a link to an open descriptor (/dev/stdout, /dev/fd/N, /proc/self/fd/N): written into, never
    replaced, whatever it points to."""
    try:
        if not path.is_symlink():
            return False
        return os.readlink(path).startswith("/proc/") or os.path.realpath(path.parent).startswith("/proc/")
    except OSError:
        return False


def _special_kind(mode: int) -> str:
    return ("block device" if stat.S_ISBLK(mode) else "socket" if stat.S_ISSOCK(mode)
            else "character device" if stat.S_ISCHR(mode) else "FIFO" if stat.S_ISFIFO(mode) else "special file")


def _untouched(what: str, path: Path, mode: int) -> InputError:
    return InputError(f"{what} {str(path)!r} is a {_special_kind(mode)}; it is left untouched: choose another path")


def _write_into(path: Path, write: Callable[[IO], None], what: str, binary: bool) -> Path:
    """Write the whole content into the existing device, FIFO or descriptor ``path`` (like the shell's ``>``).

    The content is produced first (an error then writes nothing); a FIFO that no process reads is an error,
    not a wait."""
    buffer = io.BytesIO() if binary else io.StringIO()
    write(buffer)
    data = buffer.getvalue()
    data = data if binary else data.encode("utf-8")
    flags = os.O_WRONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        fifo = _existing_special(path)
        no_reader = exc.errno == errno.ENXIO and fifo is not None and stat.S_ISFIFO(fifo)
        why = "a FIFO that no process reads" if no_reader else (exc.strerror or str(exc))
        raise InputError(f"{what} {str(path)!r}: cannot write into it ({why}); choose another path") from None
    try:
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISREG(mode)):
            raise _untouched(what, path, mode)
        os.set_blocking(fd, True)
        if stat.S_ISREG(mode):  # a descriptor link to a file: the shell's > truncates it
            os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except OSError as exc:
        raise InputError(f"{what} {str(path)!r}: cannot write into it ({exc.strerror or exc}); "
                         "choose another path") from None
    finally:
        os.close(fd)
    return path


def _existing_special(path: Path) -> int | None:
    """The mode of the non-regular file ``path`` is or points to; None for a regular file, a folder, nothing or a
    symbolic link to those (replaced as usual)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
        return None
    return st.st_mode


def written_into(path: str | os.PathLike) -> bool:
    """Whether ``path`` is (or points to) a character device or FIFO (``/dev/null``, a named pipe), which
    :func:`write_atomically` writes into instead of replacing."""
    special = _existing_special(Path(path))
    return special is not None and (stat.S_ISCHR(special) or stat.S_ISFIFO(special))


def check_output(path: str | os.PathLike, what: str = "output file") -> Path:
    """Raise the InputError :func:`write_atomically` would raise for ``path`` before anything is written (a
    missing folder, a folder, a block device, a socket), so that a command writing several files checks all of
    them first: an error then leaves nothing behind. Returns ``Path(path)``."""
    path = Path(path)
    _check_folder(path, path.parent, what)
    special = _existing_special(path)
    if special is not None and not written_into(path):
        raise _untouched(what, path, special)
    if special is None and path.is_dir() and not path.is_symlink():
        raise InputError(f"{what} {str(path)!r} is a folder; give a file name (e.g. {str(path / 'out.csv')!r})")
    return path


def write_atomically(path: str | os.PathLike, write: Callable[[IO], None], what: str = "output file",
                     binary: bool = False) -> Path:
    """Call ``write(fh)`` to fill a temporary file next to ``path``, then rename it to ``path``.

    The file gets the mode of the file it replaces, else 0666 minus the umask.  A symbolic link at ``path`` is
    replaced (its target left alone), except a link to an open descriptor (``/dev/stdout``, ``/dev/fd/N``).  A
    character device or FIFO (``/dev/null``, a named pipe) is never replaced: the whole content is produced, then
    written into it, like the shell's ``>``.

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
        When the folder does not exist, ``path`` is a folder or a special file other than a character device or
        a FIFO, a FIFO has no reader, or no file can be created there (names the path and the fix).
    Any error of ``write`` or of the rename (OSError: disk full, ...), after the temporary file is removed.
    """
    path = check_output(path, what)
    folder = path.parent
    if _existing_special(path) is not None or _descriptor_link(path):
        return _write_into(path, write, what, binary)
    mode = _mode_for(path, 0o666)
    remove_stale_temporaries(folder, path.name)
    with _sigterm_as_exit():
        try:
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=_temp_prefix(path.name, os.getpid()), suffix=".tmp")
        except OSError as exc:
            raise InputError(
                f"{what} {str(path)!r}: cannot write in folder {str(folder)!r} ({exc.strerror or exc}); "
                "choose another path") from None
        try:
            with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8") as fh:
                write(fh)
            os.chmod(tmp, mode)
            special = _existing_special(path)  # again: it may have appeared meanwhile
            if special is not None:
                raise InputError(f"{what} {str(path)!r} became a {_special_kind(special)} while robodyn wrote; "
                                 "it is left untouched: write again or choose another path")
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return path


# ---- the manifest of a written folder --------------------------------------------------------------------------

#: open flags of a file that must be regular: a link is not followed, a FIFO does not block
_NO_FOLLOW = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _sha256(path: Path) -> str | None:
    """SHA-256 (hex) of the regular file ``path`` (not followed if a link); None when it is not one."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        fd = os.open(path, _NO_FOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        h = hashlib.sha256()
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_manifest(folder: Path) -> None:
    """Write :data:`MANIFEST` into ``folder``: the SHA-256 and name of every regular file in it, sorted."""
    lines = [_MANIFEST_HEADER]
    for name in sorted(os.listdir(folder)):
        digest = _sha256(folder / name)
        if name == MANIFEST or digest is None or "\n" in name or "\\" in name:
            raise InputError(f"file {name!r} cannot be listed in the manifest of {str(folder)!r}; "
                             "this is a bug in robodyn")
        lines.append(f"{digest}  {name}")
    (folder / MANIFEST).write_text("\n".join(lines) + "\n", encoding="utf-8")


def _read_manifest(folder: Path) -> dict[str, str] | None:
    """{name: sha256} that the manifest of ``folder`` lists; None without a valid manifest."""
    path = folder / MANIFEST
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        with os.fdopen(os.open(path, _NO_FOLLOW), "rb") as fh:
            raw = fh.read(_MANIFEST_LIMIT + 1)
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    lines = text.splitlines()
    if len(raw) > _MANIFEST_LIMIT or not lines or lines[0] != _MANIFEST_HEADER:
        return None
    listed = {}
    for line in lines[1:]:
        digest, sep, name = line.partition("  ")
        if (not sep or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest) or not name
                or name in (".", "..", MANIFEST) or "/" in name or "\0" in name):
            return None
        listed[name] = digest
    return listed


def _names(names: list[str]) -> str:
    shown = ", ".join(repr(printable(n)) for n in names[:_SHOWN])
    return shown + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")


def check_replaceable(out: Path, what: str = "--out", shown: Path | None = None) -> None:
    """Raise InputError unless the existing folder ``out`` is empty or holds exactly what its manifest lists,
    unchanged (the rule of ``--force``); the message names the foreign or changed files, and the folder as
    ``shown`` (default ``out``)."""
    entries = os.listdir(out)
    label = str(shown if shown is not None else out)
    if not entries:
        return
    listed = _read_manifest(out)
    if listed is None:
        raise InputError(f"{what} {label!r} has no robodyn manifest ({MANIFEST}): it was not written by robodyn "
                         "or by an older version; --force replaces only what robodyn wrote: nothing was replaced, "
                         "remove it yourself or choose another --out")
    foreign = sorted(e for e in entries if e != MANIFEST and e not in listed)
    changed = sorted(n for n in listed if n in entries and _sha256(out / n) != listed[n])
    if foreign or changed:
        parts = ([f"files robodyn did not write: {_names(foreign)}"] if foreign else []) + \
                ([f"files changed since robodyn wrote them: {_names(changed)}"] if changed else [])
        raise InputError(f"{what} {label!r} holds {'; '.join(parts)}; --force replaces only what robodyn wrote: "
                         "nothing was replaced, move them away or choose another --out")


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
    """Create the folder ``out`` with the files ``fill(tmp_folder)`` writes and their manifest, all or nothing.

    Rules (each violation an InputError naming ``out`` and the fix; ``out`` is then untouched):

    * the parent folder must exist (it is not created, as for every other ``--out``);
    * ``fill`` writes regular files only; :data:`MANIFEST` (name and SHA-256 of each) is added after it;
    * ``out`` must not exist, or (with ``force``) be an empty folder or one that holds exactly the files its
      manifest lists, unchanged (:func:`check_replaceable`): an existing file, a symbolic link, a folder without
      a manifest (not written by robodyn, or by an older version) or with other or changed files is never
      replaced, and the error names those files;
    * the new folder is renamed into place at the end, swapped atomically with the old one where the system
      can (Linux), under an exclusive lock on the parent folder: concurrent runs are serialised, and of
      several runs without ``force`` exactly one succeeds;
    * folders get mode 0777 minus the umask; temporary folders are removed on any error, Ctrl-C or SIGTERM, and
      those of killed runs (:func:`remove_stale_temporaries`) at the next write of ``out``.
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
            check_replaceable(out, what)

    check_target()
    remove_stale_temporaries(parent, out.name)
    mode = 0o777 & ~_umask()
    with _sigterm_as_exit():
        try:
            tmp = Path(tempfile.mkdtemp(prefix=_temp_prefix(out.name, os.getpid()), suffix=".tmp", dir=parent))
        except OSError as exc:
            raise InputError(f"{what} {str(out)!r}: cannot write in folder {str(parent)!r} "
                             f"({exc.strerror or exc}); choose another path") from None
        try:
            fill(tmp)
            write_manifest(tmp)
            os.chmod(tmp, mode)
            with _locked(parent):
                check_target()  # again: another process may have written it meanwhile
                if out.is_dir():
                    if _exchange(tmp, out):
                        try:  # the old folder, now at tmp: a file put there since the check must not be lost
                            check_replaceable(tmp, what, shown=out)
                        except InputError:
                            _exchange(tmp, out)
                            raise
                    else:
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


def figure_png(fig) -> bytes:
    """The PNG bytes of the Matplotlib figure ``fig`` that :func:`save_figure` writes (a command that writes
    several files renders them all before writing the first)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=120, format="png")
    return buffer.getvalue()


def save_figure(fig, path) -> None:
    """Write the Matplotlib figure ``fig`` as a PNG to ``path`` atomically (no partial file)."""
    png = figure_png(fig)
    write_atomically(path, lambda fh: fh.write(png), what="plot file", binary=True)


def read_file_bytes(path: str | os.PathLike, label: str, *, kind: str = "model file",
                    limit: int = MAX_FILE_BYTES, error: type[Exception] = ModelFileError) -> bytes:
    """The bytes of the regular file ``path``, read through one bounded path: every file robodyn reads comes here.

    Opened without blocking and checked with ``fstat`` before anything is read: a folder, FIFO, socket or device
    (``/dev/zero``) is refused instead of hanging, a file over ``limit`` bytes (sparse ones included) before it is
    read; at most ``limit + 1`` bytes are ever read (a file that grows meanwhile is refused too).

    Parameters
    ----------
    path : str or PathLike
        The file.
    label : str
        How messages name it (e.g. the path as the user wrote it).
    kind : str
        What it should be, for messages ("model file", "URDF file", "CSV file", ...).
    limit : int
        Largest size accepted, in bytes.
    error : exception class
        Raised (with a one-line message) for every refusal: ModelFileError for models, InputError for data.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise error(f"{label}: no such {kind}") from None
    except IsADirectoryError:
        raise error(f"{label}: is a folder, not a {kind}") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL character in the path
        raise error(f"{label}: cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise error(f"{label}: is a folder, not a {kind}")
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{label}: not a regular file (a FIFO, socket or device); give a {kind}")
        if info.st_size > limit:
            raise error(f"{label}: larger than {limit} bytes, the limit for a {kind}")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise error(f"{label}: cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if size > limit:
        raise error(f"{label}: larger than {limit} bytes, the limit for a {kind}")
    return b"".join(chunks)


def read_text_file(path: str | os.PathLike, label: str, *, kind: str = "model file", limit: int = MAX_FILE_BYTES,
                   error: type[Exception] = ModelFileError) -> str:
    """The UTF-8 text (a leading byte-order mark dropped) of a file read by :func:`read_file_bytes`; bytes that
    are not UTF-8 (Latin-1 text, binary data) raise ``error`` naming the first bad byte."""
    data = read_file_bytes(path, label, kind=kind, limit=limit, error=error)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{label}: not UTF-8 text (byte {exc.start}); save the {kind} as UTF-8") from None
