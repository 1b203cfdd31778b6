"""Joint logs from robots: ROS 1 / ROS 2 bags of ``sensor_msgs/JointState``, CSV, HDF5 and Parquet files.

:func:`read_joint_log` reads one recording into a :class:`JointLog`, reordered to a robot's joint order by name
when a robot is given.  Bags are read with the pure-Python ``rosbags`` library (MCAP storage by
:func:`robodyn.decode.read_mcap`); HDF5 needs ``h5py``, Parquet ``pyarrow``.  Every file is checked to be a
regular file within ``max_bytes`` before anything is parsed; names read from a file appear in messages only
through :func:`robodyn.sanitize.printable`.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import numpy as np

from robodyn.errors import InputError, RobodynError
from robodyn.sanitize import printable

#: what ``rd.logs`` offers users (the rest reads files for robodyn's other modules)
__all__ = ("JointLog", "read_joint_log", "log_format", "StandstillPoses", "standstill_poses", "FORMATS")

#: Default size limit of one log (bytes, all files of a ROS 2 bag together): 16 GiB.
MAX_LOG_BYTES = 16 * 2**30
#: File suffixes and the format they select.
FORMATS = MappingProxyType({".bag": "ros1", ".db3": "ros2", ".mcap": "ros2", ".csv": "csv", ".h5": "hdf5",
                            ".hdf5": "hdf5", ".parquet": "parquet", ".pq": "parquet"})
_EXTRA = MappingProxyType({"ros1": "ros", "ros2": "ros", "hdf5": "hdf5", "parquet": "parquet"})
_MODULE = MappingProxyType({"ros1": "rosbags", "ros2": "rosbags", "hdf5": "h5py", "parquet": "pyarrow"})
_JOINT_STATE = ("sensor_msgs/msg/JointState", "sensor_msgs/JointState")


@dataclass(frozen=True, eq=False)
class JointLog:
    """A joint recording, one row per message (sample).

    Attributes
    ----------
    t : ndarray (N,) — time of each sample (s) from the first one; strictly increasing.
    q : ndarray (N, n) — joint positions (rad | m).
    qd : ndarray (N, n) or None — joint velocities (rad/s | m/s); None when the log has none.
    tau : ndarray (N, n) or None — joint efforts, torques or forces (N m | N); None when the log has none.
    joint_names : tuple of str (n,) — the joints of the columns (the robot's ``q_names`` when a robot was given).
    start_ns : int — absolute time of the first sample (ns; for bags, since the Unix epoch).
    time_source : str — "header" (message header stamps), "receive" (bag record times: every header stamp was 0)
        or "file" (the ``t`` column / dataset).
    source : str — the file read.
    qdd : ndarray (N, n) or None — accelerations, when a CSV/HDF5/Parquet file gives them (bags never do).
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray | None
    tau: np.ndarray | None
    joint_names: tuple
    start_ns: int
    time_source: str
    source: str
    qdd: np.ndarray | None = None

    @property
    def samples(self) -> int:
        """N, the number of samples."""
        return int(self.t.shape[0])


def log_format(path) -> str:
    """The format :func:`read_joint_log` reads ``path`` as: "ros1", "ros2", "csv", "hdf5" or "parquet".

    A folder is a ROS 2 bag (it must hold ``metadata.yaml``); otherwise the suffix decides (see ``FORMATS``).
    """
    p = Path(path)
    if p.is_dir():
        return "ros2"
    fmt = FORMATS.get(p.suffix.lower())
    if fmt is None:
        raise InputError(f"log {printable(str(p))!r}: unknown format {printable(p.suffix) or '(no suffix)'}; give a "
                         f"ROS 2 bag folder or a file ending in {', '.join(FORMATS)}")
    return fmt


def reader_module(fmt: str):
    """The package that reads ``fmt`` ("ros1", "ros2", "hdf5", "parquet"), imported; RobodynError naming the extra
    to install when it is missing."""
    from importlib import import_module

    name = _MODULE[fmt]
    try:
        return import_module(name)
    except ImportError:
        raise RobodynError(f"reading {fmt} logs needs the package {name}; install it with: "
                           f"pip install 'robodyn[{_EXTRA[fmt]}]'") from None


def _regular_files(path: Path, fmt: str, max_bytes: int) -> list[Path]:
    """The files of the log, each checked to be a regular file; their total size at most ``max_bytes``."""
    label = printable(str(path))
    files = [path]  # a path that cannot be read is named by the loop below
    if path.is_dir():
        if fmt != "ros2" or not (path / "metadata.yaml").exists():
            raise InputError(f"log {label!r} is a folder without metadata.yaml; give a ROS 2 bag folder or a log file")
        files = sorted(path.iterdir())
    total = 0
    for f in files:
        try:
            fs = os.stat(f)
        except OSError as exc:
            raise InputError(f"log {printable(str(f))!r}: cannot be read ({exc.strerror or exc})") from None
        if not stat.S_ISREG(fs.st_mode):
            raise InputError(f"log {printable(str(f))!r} is not a regular file (a FIFO, device, socket or folder); "
                             "give a file")
        total += fs.st_size
    if total > max_bytes:
        raise InputError(f"log {label!r} has {total} bytes, more than max_bytes = {max_bytes}; raise max_bytes if "
                         "the file is trusted")
    return files


def read_joint_log(path, topic: str = "/joint_states", robot=None, max_bytes: int = MAX_LOG_BYTES,
                   span=None) -> JointLog:
    """Read a joint recording: a ROS bag of ``sensor_msgs/JointState``, or a CSV, HDF5 or Parquet file.

    Parameters
    ----------
    path : str or PathLike
        - ``*.bag``: ROS 1 bag; a folder with ``metadata.yaml``, ``*.db3`` or ``*.mcap``: ROS 2 bag (sqlite3 or
          MCAP storage). Messages of ``topic`` give one sample each: t from the header stamps (the bag's record
          times when every stamp is 0), q = position, q̇ = velocity, τ = effort. Messages may list the joints in
          any order and may carry other joints (e.g. a gripper's); each is mapped by name.
        - ``*.csv``: a header ``t, q1..qn[, qd1..qdn][, qdd1..qddn][, tau1..taun]`` (the layout of
          ``robodyn identify``), columns in the robot's joint order; ``*.h5``/``*.hdf5``: datasets ``t`` (N,) and
          ``q``, ``qd``, ``qdd``, ``tau`` (N, n) (``qd``, ``qdd``, ``tau`` optional), an optional attribute
          ``joint_names``; ``*.parquet``/``*.pq``: the CSV columns.
    topic : str
        Topic of the JointState messages (bags only).
    robot : Robot or None
        When given, the columns follow ``robot.q_names`` (bags and HDF5 with ``joint_names``: by name; CSV and
        Parquet: n must match).
    max_bytes : int
        Size limit of the log (all files of a ROS 2 bag together).
    span : (start, stop) or None
        Read only the messages (bags: of ``topic``, in recording order) or rows (tables) ``start`` to ``stop`` − 1,
        0-based, None for an open end: one run of a bag that holds two (the errors about stamps that go back name
        the message to split at), or a part of a long log.  Indices in errors stay those of the whole log.  A bag's
        messages outside the span are not decoded.

    Returns
    -------
    JointLog

    Raises
    ------
    InputError
        Missing, non-regular or too large file; unknown format; no message on ``topic`` (the topics present are
        named); a joint of the robot absent from a message (named); inconsistent arrays; stamps that repeat or go
        back by more than a late message's (``LATE_STEPS``; the message named, to split the bag there); some
        messages unstamped (stamp 0); t not strictly increasing (the row named), beyond 1e15 s, or empty.
    RobodynError
        The reader package of the format is not installed (names the extra to install).
    """
    from robodyn.model.robot import Robot

    if robot is not None and not isinstance(robot, Robot):
        raise InputError(f"robot must be a robodyn Robot (rd.load(...)) or None, got {type(robot).__name__}")
    if not isinstance(path, (str, os.PathLike)):
        raise InputError(f"read_joint_log: path must be a str or path, got {type(path).__name__}")
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, (int, np.integer)) or max_bytes < 1:
        raise InputError(f"max_bytes = {max_bytes!r}; give a positive integer")
    part = _span(span)
    path = Path(path)
    fmt = log_format(path)
    _regular_files(path, fmt, int(max_bytes))
    if fmt in ("ros1", "ros2"):
        if not isinstance(topic, str) or not topic:
            raise InputError(f"topic = {topic!r}; give a topic name such as '/joint_states'")
        return _read_bag(path, fmt, topic, robot, part)
    if fmt == "csv":
        columns = read_csv_columns(path, None, f"log {printable(str(path))!r}")
    elif fmt == "parquet":
        columns = _parquet_columns(path)
    else:
        return _read_hdf5(path, robot, part)
    return _from_columns(columns, path, robot, part)


def _span(span) -> slice:
    """``span`` of :func:`read_joint_log` checked, as a slice of the messages or rows."""
    def index(x):
        return x is None or (isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) and x >= 0)

    if span is None:
        return slice(None)
    if not isinstance(span, (tuple, list)) or len(span) != 2 or not all(index(x) for x in span):
        raise InputError(f"span = {printable(repr(span))[:80]}; give (start, stop): 0-based indices of the messages "
                         "(bags) or rows (tables) to read, stop excluded, None for an open end, e.g. (0, 1200)")
    start, stop = (None if x is None else int(x) for x in span)
    if start is not None and stop is not None and stop <= start:
        raise InputError(f"span = ({start}, {stop}) holds no message or row; give stop > start")
    return slice(start, stop)


def _spanned(part: slice, total: int, what: str, label: str) -> None:
    """InputError when the span ``part`` of a log of ``total`` messages or rows (``what``) holds none of them."""
    if (part.start or 0) >= total or (part.stop is not None and part.stop <= 0):
        raise InputError(f"log {label!r}: span ({part.start}, {part.stop}) holds none of its {total} {what}; give "
                         f"a span within 0..{total}")


# ---- ROS bags ----

def _read_bag(path: Path, fmt: str, topic: str, robot, part: slice) -> JointLog:
    reader_module(fmt)
    label = printable(str(path))
    stamps, receive, rows = [], [], []
    first, total = part.start or 0, 0
    try:
        storage = _ros2_storage(path, label) if fmt == "ros2" else None
        if storage is not None and storage[0] == "mcap":
            deserialize, messages = _mcap_messages(storage, topic, label)
        else:
            deserialize, messages = _rosbags_messages(path, storage, topic, label)
        for timestamp, raw in messages:
            total += 1
            if total <= first:
                continue
            if part.stop is not None and total > part.stop:
                break
            msg = deserialize(raw)
            stamp = msg.header.stamp
            stamps.append(int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec))
            receive.append(int(timestamp))
            rows.append(_joint_fields(msg, first + len(rows), label))
    except InputError:
        raise
    except Exception as exc:  # rosbags raises its own error types for damaged or foreign files
        raise InputError(f"log {label!r}: not a readable {'ROS 1' if fmt == 'ros1' else 'ROS 2'} bag "
                         f"({printable(type(exc).__name__)}: {printable(str(exc))[:200]})") from None
    if not total:
        raise InputError(f"log {label!r}: topic {printable(topic)!r} has no messages")
    if not rows:
        _spanned(part, total, f"messages on {printable(topic)!r}", label)
    time_source = "header"
    ns = np.array(stamps, dtype=np.int64)
    if not ns.any():
        ns, time_source = np.array(receive, dtype=np.int64), "receive"
    elif not ns.all():
        _unstamped(ns, receive, label, topic, first)
    names = tuple(robot.q_names) if robot is not None else rows[0][0]
    q, qd, tau = _joint_columns(rows, names, label, robot is not None, first)
    _stamps_back(ns, receive, label, topic, time_source, first)
    order = np.argsort(ns, kind="stable")  # messages recorded a little late are put in their place
    ns = ns[order]
    step = np.diff(ns)
    if np.any(step <= 0):
        k = int(np.flatnonzero(step <= 0)[0])
        a, b = sorted((first + int(order[k]), first + int(order[k + 1])))
        raise InputError(f"log {label!r}: two messages on {printable(topic)!r} have the same time stamp "
                         f"{int(ns[k])} ns (messages {a} and {b}); remove the duplicate")
    pick = (lambda a: None if a is None else a[order])
    return JointLog(t=(ns - ns[0]) * 1e-9, q=q[order], qd=pick(qd), tau=pick(tau), joint_names=tuple(names),
                    start_ns=int(ns[0]), time_source=time_source, source=str(path))


#: A bag's message stamped before an earlier one by at most this many sample steps (the median step) was recorded
#: late (delivery jitter) and is put in its place; one further back is a second run, a restart or a clock jump.
LATE_STEPS = 10


def _split_hint(k: int, receive, first: int = 0) -> str:
    """How to read the bag's two parts on each side of message ``k`` (of those read, which start at ``first``)."""
    at, lo = first + k, first or None
    return (f"read each part on its own: span=({lo}, {at}) and span=({at}, None) (robodyn identify --span "
            f"{first or ''}:{at} and --span {at}:), or split the bag at message {at} (record time {int(receive[k])} "
            "ns), or re-record")


def _unstamped(ns: np.ndarray, receive, label: str, topic: str, first: int = 0) -> None:
    """InputError for a bag in which some messages, not all, have the header stamp 0 (published before the
    driver's clock was synchronised): they have no place in time among the others."""
    zero = ns == 0
    count, total = int(zero.sum()), int(ns.size)
    where = f"log {label!r}: "
    if zero[:count].all():  # all of them lead: the clock was set during the recording
        raise InputError(f"{where}the first {count} of {total} messages on {printable(topic)!r} read are unstamped "
                         "(header stamp 0: the clock was not yet synchronised); read the messages from "
                         f"{first + count} on: span=({first + count}, None) (robodyn identify --span "
                         f"{first + count}:), or cut them from the bag, or re-record")
    raise InputError(f"{where}{count} of {total} messages on {printable(topic)!r} read are unstamped (header stamp "
                     f"0), the first at message {first + int(np.flatnonzero(zero)[0])}; give every message a stamp (or "
                     "none: the bag's record times are then used), or cut the unstamped ones from the bag")


def _stamps_back(ns: np.ndarray, receive, label: str, topic: str, time_source: str, first: int = 0) -> None:
    """InputError when the time stamps, in recording order, go back by more than ``LATE_STEPS`` sample steps:
    two runs in one bag, a driver restart or a clock jump, which sorting by stamp would interleave."""
    if ns.size < 2:
        return
    back = np.maximum.accumulate(ns)[:-1] - ns[1:]  # > 0: message k + 1 is stamped before an earlier one
    if not (back > 0).any():
        return
    steps = np.diff(np.sort(ns))
    steps = steps[steps > 0]
    typical = float(np.median(steps)) if steps.size else 0.0
    far = np.flatnonzero(back > LATE_STEPS * typical)
    if far.size:
        k = int(far[0]) + 1
        what = "header stamps" if time_source == "header" else "record times"
        raise InputError(f"log {label!r}: the {what} of {printable(topic)!r} go back by {back[k - 1] * 1e-9:.6g} s "
                         f"at message {first + k} (in recording order: two runs in one bag, a driver restart or a "
                         f"clock jump); {_split_hint(k, receive, first)}")


def _check_topic(label: str, topic: str, present, types) -> None:
    """InputError when no connection carries ``topic`` (``present``: the topics of the bag) or when one of them
    carries another type than JointState (``types``: the types of ``topic``'s connections)."""
    if not types:
        shown = ", ".join(sorted({printable(x) for x in present})) or "none"
        raise InputError(f"log {label!r}: no topic {printable(topic)!r}; topics in the bag: {shown}")
    wrong = [x for x in types if x not in _JOINT_STATE]
    if wrong:
        raise InputError(f"log {label!r}: topic {printable(topic)!r} carries {printable(wrong[0])}, not "
                         "sensor_msgs/JointState")


def _ros2_storage(path: Path, label: str):
    """(storage "mcap" or "sqlite3", compression mode "" | "file" | "message", storage files, {topic: type hash})
    of a ROS 2 bag: its folder's metadata.yaml, or a storage file alone."""
    if not path.is_dir():
        return ("mcap" if path.suffix.lower() == ".mcap" else "sqlite3"), "", [path], {}
    import yaml

    from robodyn.files import read_text_file

    text = read_text_file(path / "metadata.yaml", f"log {label!r}: metadata.yaml", kind="bag metadata file",
                          error=InputError)
    try:
        info = yaml.safe_load(text)["rosbag2_bagfile_information"]
        mode = str(info.get("compression_mode") or "").lower()
        files = [path / Path(str(x)).name for x in info["relative_file_paths"]]
        hashes = {str(x["topic_metadata"]["name"]): str(x["topic_metadata"].get("type_description_hash") or "")
                  for x in info.get("topics_with_message_count") or ()}
        storage = str(info.get("storage_identifier"))
    except Exception as exc:  # a YAML that is not a bag's metadata: any of yaml's or a lookup's errors
        raise InputError(f"log {label!r}: metadata.yaml is not a ROS 2 bag's metadata "
                         f"({printable(type(exc).__name__)})") from None
    return storage, ("" if mode == "none" else mode), files, hashes


def _mcap_messages(storage, topic: str, label: str):
    """(deserialize, [(receive time (ns), message bytes)]) of ``topic`` in MCAP storage files, read by
    :func:`robodyn.decode.read_mcap`: each chunk (and a zstd-compressed file or message) decompressed once,
    within robodyn's limits. Messages are in file order, each file's in log-time order, as rosbags gives them."""
    from rosbags.typesys import Stores, get_types_from_idl, get_types_from_msg, get_typestore

    from robodyn import decode

    _, mode, files, hashes = storage
    if mode not in ("", "file", "message"):
        raise InputError(f"log {label!r}: unknown compression mode {printable(mode)[:40]!r} in metadata.yaml")
    present, channels, messages = set(), [], []
    for f in files:
        where = f"log {printable(str(f))!r}"
        if not f.is_file():
            raise InputError(f"{where}: the storage file named in metadata.yaml is missing")
        found, got = decode.read_mcap_file(f, where, topic, zstd_file=mode == "file")
        present |= {c.topic for c in found.values()}
        channels += [c for c in found.values() if c.topic == topic]
        for timestamp, _, raw in got:
            if mode == "message":
                raw = decode.decompress((raw,), "zstd", where, "a zstd-compressed message")
            messages.append((timestamp, raw))
    _check_topic(label, topic, present, [c.schema for c in channels])
    bad = [c.encoding for c in channels if c.encoding != "cdr"]
    if bad:
        raise InputError(f"log {label!r}: topic {printable(topic)!r} is encoded as {printable(bad[0])[:40]!r}, "
                         "not as ROS 2's CDR")
    msgtype = channels[0].schema
    given = next((c for c in channels if c.definition and c.schema_encoding in ("ros2msg", "ros2idl")), None)
    if given is None:
        store = get_typestore(Stores.ROS2_HUMBLE)
    else:  # the bag's own definition, as rosbags takes it (a bag may define JointState otherwise: refused later)
        store = get_typestore(Stores.EMPTY)
        if given.schema_encoding == "ros2msg":
            store.register(get_types_from_msg(given.definition, msgtype))
        else:
            sep = "=" * 80 + "\n"
            parts = given.definition.split(sep)[1:] if given.definition.startswith(f"{sep}IDL: ") else None
            for idl in ([given.definition] if parts is None else [x.split("\n", 1)[1] for x in parts]):
                store.register(get_types_from_idl(idl))
        digest = hashes.get(topic, "")
        if digest and store.hash_rihs01(msgtype) != digest:
            raise InputError(f"log {label!r}: the definition of {printable(msgtype)} in the bag does not match the "
                             "type hash in metadata.yaml; the bag is damaged")
    return (lambda raw: store.deserialize_cdr(raw, msgtype)), messages


def _rosbags_messages(path: Path, storage, topic: str, label: str):
    """(deserialize, [(receive time (ns), message bytes)]) of ``topic`` in a ROS 1 bag or a sqlite3 ROS 2 bag,
    read by rosbags after robodyn measured what rosbags will decompress."""
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    from robodyn import decode
    from robodyn.files import decoded_limit, too_large

    if storage is not None and storage[1] == "file":  # rosbags would decompress these whole, into a temporary folder
        for f in storage[2]:
            if f.is_file():  # rosbags names a missing file
                decode.check_zstd_file(f, f"log {printable(str(f))!r}")
    messages, kept, limit = [], 0, decoded_limit()
    with AnyReader([path], default_typestore=get_typestore(Stores.ROS2_HUMBLE)) as reader:
        connections = [c for c in reader.connections if c.topic == topic]
        _check_topic(label, topic, {c.topic for c in reader.connections}, [c.msgtype for c in connections])
        _check_compressed_records(reader, connections, topic, label)
        for _, timestamp, raw in reader.messages(connections=connections):
            kept += len(raw)
            if kept > limit:
                raise too_large(f"log {label!r}", f"topic {printable(topic)!r}")
            messages.append((timestamp, raw))
        msgtype = connections[0].msgtype
        decode_raw = reader.typestore.deserialize_cdr if reader.is2 else reader.typestore.deserialize_ros1
    return (lambda raw: decode_raw(raw, msgtype)), messages


def _check_compressed_records(reader, connections, topic: str, label: str) -> None:
    """Measure what rosbags will decompress for ``connections``: the ROS 1 chunks that hold their messages and
    the zstd-compressed messages of a sqlite3 ROS 2 bag (compression mode "message")."""
    from robodyn import decode

    for r in reader.readers:
        mine = [c for c in connections if c.owner is r]
        if hasattr(r, "chunks") and hasattr(r, "indexes"):  # ROS 1
            positions = {e.chunk_pos for c in mine for e in r.indexes.get(c.id, ())}
            with open(r.path, "rb") as fh:
                decode.check_ros1_chunks(fh, positions, f"log {label!r}")
        elif getattr(r, "compression_mode", None) == "message":  # a ROS 2 bag folder (DirectoryReader)
            for storage in r.storage.storages:
                own = [x for x in storage.connections if x.topic == topic]
                for _, _, data in storage.messages(own):
                    decode.measure((bytes(data),), "zstd", f"log {label!r}", "a zstd-compressed message")


def _joint_fields(msg, i: int, label: str) -> tuple:
    """(names, position, velocity, effort) of JointState message ``i``: the names strings, the values finite
    floats; a bag that defines its own JointState with other field types is refused."""
    names = msg.name
    if not isinstance(names, (list, tuple)) or not all(isinstance(x, str) for x in names):
        raise InputError(f"log {label!r}, message {i}: field 'name' is not a list of strings; the bag defines "
                         "sensor_msgs/JointState differently from ROS (string[] name, float64[] position, "
                         "velocity, effort)")
    values = []
    for key in ("position", "velocity", "effort"):
        v = getattr(msg, key, None)
        if not isinstance(v, np.ndarray) or v.dtype != np.float64 or v.ndim != 1:
            raise InputError(f"log {label!r}, message {i}: field {key!r} is not float64[]; the bag defines "
                             "sensor_msgs/JointState differently from ROS (float64[] position, velocity, effort)")
        if not np.isfinite(v).all():
            k = int(np.flatnonzero(~np.isfinite(v))[0])
            raise InputError(f"log {label!r}, message {i}: {key}[{k}] = {v[k]!r} is not finite; repair or remove "
                             "the message")
        values.append(v)
    return (tuple(names), *values)


#: the fix for a model with joints a log lacks, in the errors of a log's joint names and of its joint count
CUT_TO_LOG = ("if the model has joints the log lacks (a gripper's fingers, another branch), cut a URDF to the logged "
              "chain: rd.from_urdf(path, tip=LINK), robodyn --tip LINK COMMAND ...")


def _joint_columns(rows, names, label: str, by_robot: bool, first: int = 0):
    """(N, n) arrays of position, velocity, effort in the order ``names``; velocity/effort None when absent (the
    rows are messages ``first`` on, as errors number them)."""
    from robodyn.files import check_decoded

    n, N = len(names), len(rows)
    check_decoded(f"log {label!r}", f"{N} samples of {n} joints", 3 * 8.0 * N * n)
    keys = ("position", "velocity", "effort")
    out, present = {k: np.full((N, n), np.nan) for k in keys}, {k: np.zeros(N, bool) for k in keys}
    maps = {}  # (per distinct name list) the columns of ``names`` in the message
    for i, (msg_names, *values) in enumerate(rows):
        if msg_names not in maps:
            index = {name: k for k, name in enumerate(msg_names)}
            if len(index) != len(msg_names):
                raise InputError(f"log {label!r}, message {first + i}: a joint name appears twice")
            missing = [name for name in names if name not in index]
            if missing or (not by_robot and len(msg_names) != n):
                what = (f"lacks joint(s) {', '.join(printable(m) for m in missing)} of the "
                        f"{'robot' if by_robot else 'first message'}" if missing else
                        "lists other joints than the first message")
                fix = f"; {CUT_TO_LOG}" if missing else ""
                raise InputError(f"log {label!r}, message {first + i} {what} (it lists "
                                 f"{', '.join(printable(x) for x in msg_names) or 'none'}); give a robot whose "
                                 f"joint names match the log, or a log of this robot{fix}")
            maps[msg_names] = np.array([index[name] for name in names], dtype=np.intp)
        cols = maps[msg_names]
        for key, value in zip(keys, values):
            value = np.asarray(value, dtype=float)
            if value.size == 0:
                continue
            if value.shape != (len(msg_names),):
                raise InputError(f"log {label!r}, message {first + i}: {value.size} {key} values for {len(msg_names)} "
                                 "joint names; each must have one per name (or none)")
            out[key][i] = value[cols]
            present[key][i] = True
    if not present["position"].all():
        i = int(np.flatnonzero(~present["position"])[0])
        raise InputError(f"log {label!r}, message {first + i} has no positions; every JointState sample needs them")
    for key in keys[1:]:
        if present[key].any() and not present[key].all():
            i = int(np.flatnonzero(~present[key])[0])
            raise InputError(f"log {label!r}, message {first + i} has no {key} values although others have; give "
                             f"{key} in every message or in none")
    return tuple(out[k] if present[k].any() else None for k in keys)


# ---- tables: CSV, Parquet, HDF5 ----

#: Largest CSV file (bytes) that robodyn reads (states, measurements, logs): checked before reading.
MAX_CSV_BYTES = 256 * 2**20


def read_csv_columns(path, allowed, what: str, missing_values: bool = False, required=(), hint: str = "",
                     check_header=None) -> dict:
    """The numeric columns of a CSV file with a header, as ``{name: (rows,) array}``: robodyn's one CSV reader.

    ``allowed``: the column names the file may have (any order; None: any); ``what``: how messages name the file
    (``"--states s.csv"``); ``required`` columns are checked first (message ending with ``hint``), then
    ``check_header(header)`` if given (a caller's own check of the column names, before any row).  Cells are
    separated by commas, or by the tabs or semicolons of a header line without commas; separators at the end of a
    line are ignored, a column without a name is refused (a pandas index), and so are joint columns numbered
    from 0 (``q0``).  Blank lines are skipped, before the header too; lines end in LF, CR LF or CR.  A cell is a
    plain number in ASCII digits (``1_0`` and other scripts' digits, which ``float`` takes, are refused); without
    ``missing_values`` every cell must be a finite number, with it an empty cell or ``nan`` is NaN.  Read by
    :func:`robodyn.files.read_file_bytes` within :data:`MAX_CSV_BYTES`, a UTF-8 byte-order mark dropped.
    InputError names the file, the 1-based line and the column (``"--states s.csv, line 3, column qd1: 'x' is
    not a number"``).
    """
    import csv
    import io
    import os
    import re

    from robodyn.files import read_file_bytes

    if isinstance(path, (str, os.PathLike)) and not os.path.lexists(path):
        raise InputError(f"{what}: cannot read the file (no such file)")
    data = read_file_bytes(path, what, kind="CSV file", limit=MAX_CSV_BYTES, error=InputError)
    if data[:2] == b"\x1f\x8b":  # gzip's magic number: the form measured logs are often shipped in
        raise InputError(f"{what}: a gzip-compressed file; decompress it first (gzip -dc FILE > file.csv)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{what}: not a text file (UTF-8 CSV expected)") from None
    if "\0" in text:
        raise InputError(f"{what}: not a text file (it holds NUL bytes); give a CSV file")
    if "\r" in text and re.search("\r(?!\n)", text):  # old Mac line endings (CR alone): read as lines too
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    reader = csv.reader(io.StringIO(text), delimiter=_delimiter(text))
    try:
        return _csv_rows(reader, allowed, what, missing_values, required, hint, check_header)
    except csv.Error as exc:
        raise InputError(f"{what}, line {reader.line_num}: not a readable CSV file ({exc})") from None


def _delimiter(text: str) -> str:
    """The cell separator of a CSV text: ',' unless its header line has none and holds tabs or semicolons (the
    exports of spreadsheets in locales with a decimal comma, and of tab-separated loggers)."""
    import re

    first = re.search(r"\S[^\n]*", text)  # the first line that is not blank, without splitting the whole text
    line = first.group(0) if first else ""
    if "," in line:
        return ","
    return max(("\t", ";"), key=line.count) if "\t" in line or ";" in line else ","


def _csv_rows(reader, allowed, what, missing_values, required, hint, check_header) -> dict:
    import math

    header = next((cells for cells in reader if any(c.strip() for c in cells)), [])  # blank lines skipped
    header = [h.strip() for h in header]
    while header and not header[-1]:  # a separator at the end of the header line
        header.pop()
    if "" in header:
        k = header.index("")
        raise InputError(f"{what}: column {k + 1} has no name in the header line; name every column (pandas writes "
                         "its row index so: DataFrame.to_csv(path, index=False))")
    _unique_columns(header, what)
    _zero_based(header, what, allowed)
    require_columns(dict.fromkeys(header), required, what, hint)
    if check_header is not None:
        check_header(header)
    unknown = [] if allowed is None else [c for c in header if c not in allowed]
    if unknown:
        raise InputError(f"{what}: unknown column(s) {', '.join(unknown)}; allowed: {', '.join(allowed)}")
    rows = []
    for cells in reader:
        if not cells or all(not c.strip() for c in cells):
            continue
        line = reader.line_num
        if len(cells) > len(header) and not any(c.strip() for c in cells[len(header):]):
            cells = cells[:len(header)]  # separators at the end of the line
        if len(cells) != len(header):
            raise InputError(f"{what}, line {line}: {len(cells)} values for {len(header)} columns")
        values = []
        for col, cell in zip(header, cells):
            text = cell.strip()
            try:
                if not text and missing_values:
                    x = math.nan
                elif text.isascii() and "_" not in text:  # float() then reads only what a CSV writer writes
                    x = float(text)
                else:
                    raise ValueError(text)
            except ValueError:
                shown = text if len(text) <= 40 else text[:37] + "..."
                if _is_number(text):  # '1_0', or digits of another script ('１２'): float() takes them, we do not
                    raise InputError(f"{what}, line {line}, column {col}: {shown!r} is not a plain decimal number; "
                                     "write it with the ASCII digits 0-9, a sign, '.' and an exponent only") from None
                comma = _is_number(cell.replace(",", "."))
                raise InputError(f"{what}, line {line}, column {col}: {shown!r} is not a number"
                                 + ("; write the decimal point as '.' (a decimal comma)" if comma else "")) from None
            if not missing_values and not math.isfinite(x):
                raise InputError(f"{what}, line {line}, column {col}: {cell.strip()[:40]} is not finite")
            values.append(x)
        rows.append(values)
    if not rows:
        raise InputError(f"{what}: no data rows after the header")
    data = np.array(rows)
    return {c: data[:, i] for i, c in enumerate(header)}


#: prefixes of the joint columns of robodyn's tables (positions, velocities, accelerations, efforts, motor side)
_JOINT_PREFIXES = ("q", "qd", "qdd", "tau", "qm", "taum")


def _zero_based(names, what: str, allowed=None) -> None:
    """InputError for joint columns numbered from 0 (``q0, q1, ...``, as zero-based loggers write them): robodyn's
    columns are numbered from 1, and the count of joints would be one short."""
    names = list(names)
    for p in _JOINT_PREFIXES:
        if f"{p}0" in names and (allowed is None or f"{p}0" not in allowed):
            k = 1
            while f"{p}{k}" in names:
                k += 1
            raise InputError(f"{what}: columns are numbered from {p}0; number them {p}1..{p}{k} (column {p}j "
                             "holds joint j, from 1)")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def require_columns(columns: dict, names, what: str, hint: str) -> None:
    """InputError naming the missing columns of a CSV read by :func:`read_csv_columns`."""
    missing = [c for c in names if c not in columns]
    if missing:
        raise InputError(f"{what}: missing column(s) {', '.join(missing)}; {hint}")


def parquet_file(path, label: str, columns=None):
    """The open ``pyarrow.parquet.ParquetFile`` at ``path``, its declared sizes checked before any page is read.

    The columns read (``columns``, default all) must be numbers (integers or floats: text and
    booleans are refused) and their declared size once decoded, rows × 8 bytes each (run-length and
    dictionary pages expand a few bytes to millions of values), and the page bytes the metadata declares once
    decompressed, at most :func:`robodyn.files.decoded_limit`."""
    reader_module("parquet")
    import pyarrow as pa
    import pyarrow.parquet as pq

    from robodyn.files import check_decoded

    with _readable(label, "Parquet"):
        pf = pq.ParquetFile(path)
        meta, schema = pf.metadata, pf.schema_arrow
    _unique_columns(list(schema.names), f"log {label!r}")
    names = list(schema.names if columns is None else columns)
    for name in names:
        if name not in schema.names:
            continue
        kind = schema.field(name).type
        if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
            raise InputError(f"log {label!r}: column {printable(name)!r} holds {printable(str(kind))}, not numbers")
    index = {meta.schema.column(k).path: k for k in range(meta.num_columns)}
    values = pages = 0.0
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for name in names:
            if name in index:
                col = group.column(index[name])
                values += max(float(col.num_values), float(group.num_rows))
                pages += float(col.total_uncompressed_size)
    check_decoded(f"log {label!r}", f"{len(names)} columns of {meta.num_rows} declared rows", 8.0 * values)
    check_decoded(f"log {label!r}", "the pages of its columns", pages)
    return pf


def _unique_columns(names, what: str) -> None:
    twice = sorted({c for c in names if names.count(c) > 1})
    if twice:
        raise InputError(f"{what}: column {printable(twice[0])!r} appears twice in the header; name each column once")


def _parquet_columns(path: Path) -> dict:
    label = printable(str(path))
    pf = parquet_file(path, label)
    with _readable(label, "Parquet"):
        table = pf.read()
        return {name: table.column(name).to_numpy().astype(float) for name in table.column_names}


@contextlib.contextmanager
def _readable(label: str, kind: str):
    """One InputError for a file the reader library of ``kind`` ("Parquet", "HDF5") cannot read (each raises its
    own types for damaged or foreign files: ArrowInvalid, OSError, KeyError, ...), or whose arrays do not fit in
    memory."""
    try:
        yield
    except InputError:
        raise
    except MemoryError:
        raise InputError(f"log {label!r}: its {'datasets' if kind == 'HDF5' else 'columns'} do not fit in "
                         "memory") from None
    except Exception as exc:
        raise InputError(f"log {label!r}: not a readable {kind} file ({printable(str(exc))[:200]})") from None


def _from_columns(columns: dict, path: Path, robot, part: slice = slice(None)) -> JointLog:
    """A JointLog from the columns t, q1..qn, qd1..qdn, qdd1..qddn, tau1..taun of a table."""
    label = printable(str(path))
    _zero_based(columns, f"log {label!r}")
    n = sum(1 for k in range(1, len(columns) + 1) if f"q{k}" in columns)
    if n == 0:
        raise InputError(f"log {label!r}: no column q1; give columns t, q1..qn[, qd1..qdn][, tau1..taun]")
    if robot is not None and n != robot.n:
        raise InputError(f"log {label!r} has {n} position columns q1..q{n}; " + other_joints_message(robot, n))
    known = {"t"} | {f"{p}{k}" for p in ("q", "qd", "qdd", "tau") for k in range(1, n + 1)}
    unknown = sorted(set(columns) - known)
    if unknown:
        raise InputError(f"log {label!r}: unknown column(s) {', '.join(printable(u) for u in unknown)}; allowed: "
                         f"t, q1..q{n}, qd1..qd{n}, qdd1..qdd{n}, tau1..tau{n}")
    if "t" not in columns:
        raise InputError(f"log {label!r}: no column t (s)")
    arrays = {}
    for prefix in ("q", "qd", "qdd", "tau"):
        have = [f"{prefix}{k}" in columns for k in range(1, n + 1)]
        if any(have) and not all(have):
            raise InputError(f"log {label!r}: give all of {prefix}1..{prefix}{n} or none")
        arrays[prefix] = np.column_stack([columns[f"{prefix}{k}"] for k in range(1, n + 1)]) if all(have) else None
    names = tuple(robot.q_names) if robot is not None else tuple(f"q{k}" for k in range(1, n + 1))
    return _checked(columns["t"], arrays, names, label, str(path), part)


def other_joints_message(robot, count: int) -> str:
    """The end of an error about a log of ``count`` joints for ``robot``: its joints, and the fix (a model with
    more joints than the log, such as a URDF with a gripper's fingers, is cut to the logged chain by ``tip``)."""
    names = ", ".join(printable(x) for x in robot.q_names)
    fix = ("give a log of this robot, or a model of every logged joint" if count > robot.n else
           f"{CUT_TO_LOG}; otherwise give a log of this robot")
    return f"robot '{printable(robot.name)}' has n = {robot.n} ({names}); {fix}"


#: Largest |t| (s) a log may give: 1e15 s is 31 million years; epoch nanoseconds (about 1.7e18) pass it.
MAX_LOG_TIME = 1e15


def _checked(t, arrays: dict, names, label: str, source: str, part: slice = slice(None)) -> JointLog:
    """The JointLog of the table's rows ``part``: t (N,) and the (N, n) arrays checked (rows numbered in the
    whole table)."""
    t = np.asarray(t, dtype=float)
    if t.ndim == 2 and 1 in t.shape:  # a column (N, 1) or row (1, N) vector, as MATLAB writes one
        t = t.reshape(-1)
    if t.ndim != 1:
        what = "is a single number" if t.ndim == 0 else f"has shape {t.shape}"
        raise InputError(f"log {label!r}: dataset t {what}; t must be a column of times (s), one per row of q")
    if t.shape[0] == 0:
        raise InputError(f"log {label!r}: no data rows (t is empty)")
    for key, a in arrays.items():
        if a is not None and a.shape[0] != t.shape[0]:
            flipped = a.ndim == 2 and a.shape[1] == t.shape[0]
            raise InputError(f"log {label!r}: {key} has {a.shape[0]} rows but t has {t.shape[0]}"
                             + (f" (transposed? {key} is (N, n): one row per sample)" if flipped else ""))
    if part != slice(None):
        _spanned(part, t.shape[0], "rows", label)
        t, arrays = t[part], {k: None if a is None else a[part] for k, a in arrays.items()}
    first = part.start or 0
    for key, a in (("t", t), *arrays.items()):
        if a is None:
            continue
        bad = ~np.isfinite(a)
        if bad.any():
            row = first + int(np.flatnonzero(bad.reshape(a.shape[0], -1).any(axis=1))[0])
            raise InputError(f"log {label!r}: {key} is not finite at row {row} (0-based); repair or remove it")
    if np.max(np.abs(t)) > MAX_LOG_TIME:
        ns = 1e15 <= t[0] <= 1e20  # epoch nanoseconds: 1.7e18 in 2023
        raise InputError(f"log {label!r}: t runs from {t[0]:.6g} to {t[-1]:.6g} s, beyond {MAX_LOG_TIME:g} s (31 "
                         "million years); " + ("t looks like nanoseconds: if t is in nanoseconds, give t / 1e9" if ns
                                               else "give t in seconds"))
    step = np.diff(t)
    if np.any(step <= 0):
        row = int(np.flatnonzero(step <= 0)[0]) + 1
        at = first + row
        how = (f"repeats t = {t[row]:.9g} s of the row before; remove the duplicate row" if step[row - 1] == 0 else
               f"goes back by {-step[row - 1]:.6g} s to t = {t[row]:.9g} s; sort the rows, or, if it holds two "
               f"recordings, read each part on its own: span=(None, {at}) and span=({at}, None) (robodyn identify "
               f"--span :{at} and --span {at}:)")
        raise InputError(f"log {label!r}: t must be one column of strictly increasing times (s); row {at} (0-based) "
                         f"{how}")
    start = int(round(t[0] * 1e9))
    return JointLog(t=t - t[0], q=arrays["q"], qd=arrays["qd"], tau=arrays["tau"], qdd=arrays["qdd"],
                    joint_names=tuple(names), start_ns=start, time_source="file", source=source)


def hdf5_dataset(f, key: str, label: str):
    """The dataset ``key`` of the open HDF5 file ``f``, checked safe to read; None when there is none.

    Only data stored in the file itself is read: an external or soft link, a dataset with external storage
    (raw bytes of another file, perhaps a FIFO) and a virtual dataset (made of other files) are refused before
    anything they point to is opened, as are a group, text and booleans. Its declared size counts against
    :func:`robodyn.files.decoded_limit` (an HDF5 dataset may declare rows it never stored)."""
    from robodyn.files import check_decoded

    name = key.encode()
    where = f"log {label!r}: {key}"
    if not f.id.links.exists(name):  # never `key in f`: it follows links, opening the files they name
        return None
    kind = f.id.links.get_info(name).type
    if kind != 0:  # h5py.h5l.TYPE_HARD
        raise InputError(f"{where} is {'a soft' if kind == 1 else 'an external'} link; robodyn reads only datasets "
                         "stored in the file itself (copy the data into it)")
    obj = f[key]
    if not hasattr(obj, "dtype"):
        raise InputError(f"{where} is a group, not a dataset; give {key} as an array")
    if obj.is_virtual or obj.external:
        raise InputError(f"{where} is {'a virtual' if obj.is_virtual else 'an external-storage'} dataset whose bytes "
                         "lie in other files; robodyn reads only data stored in the file itself (copy it in)")
    if obj.dtype.kind not in "iuf":
        raise InputError(f"{where} holds {_dtype_words(obj.dtype)}, not numbers; give a numeric array")
    check_decoded(f"log {label!r}", f"dataset {key} of declared shape {obj.shape}",
                  8.0 * float(np.prod(obj.shape, dtype=float)))
    if obj.chunks is not None:
        check_decoded(f"log {label!r}", f"a chunk of dataset {key} (declared shape {obj.chunks})",
                      float(obj.dtype.itemsize) * float(np.prod(obj.chunks, dtype=float)))
    return obj


def _dtype_words(dtype) -> str:
    return {"b": "booleans", "S": "text", "U": "text", "O": "text or objects", "c": "complex numbers",
            "V": "compound records"}.get(dtype.kind, f"values of type {dtype}")


_TRANSPOSED = " (transposed? q is (N, n): one row per sample)"


def _read_hdf5(path: Path, robot, part: slice = slice(None)) -> JointLog:
    from robodyn.files import check_decoded

    h5py = reader_module("hdf5")
    label = printable(str(path))
    with _readable(label, "HDF5"), h5py.File(path, "r") as f:
        sets = {k: hdf5_dataset(f, k, label) for k in ("t", "q", "qd", "qdd", "tau")}
        missing = [k for k in ("t", "q") if sets[k] is None]
        if missing:
            raise InputError(f"log {label!r}: no dataset {', '.join(missing)}; give datasets t (N,), q (N, n) "
                             "and optionally qd, qdd, tau (N, n)")
        check_decoded(f"log {label!r}", "its datasets", sum(8.0 * d.size for d in sets.values() if d is not None))
        data = {k: None if d is None else np.asarray(d[...], dtype=float) for k, d in sets.items()}
        names = _hdf5_names(f, label)
    q = data["q"]
    if q.ndim != 2:
        raise InputError(f"log {label!r}: dataset q has shape {q.shape}; give (N, n)")
    n = q.shape[1]
    for key in ("qd", "qdd", "tau"):
        if data[key] is not None and data[key].shape != q.shape:
            raise InputError(f"log {label!r}: dataset {key} has shape {data[key].shape}; q has {q.shape}")
    if names is not None and len(names) != n:
        raise InputError(f"log {label!r}: attribute joint_names has {len(names)} names for {n} columns of q"
                         + _TRANSPOSED * (q.shape[0] == len(names)))
    if robot is not None:
        if names is None:
            if n != robot.n:
                raise InputError(f"log {label!r}: q has {n} columns; robot '{printable(robot.name)}' has n = "
                                 f"{robot.n}" + _TRANSPOSED * (q.shape[0] == robot.n))
            order = np.arange(n)
        else:
            missing = [x for x in robot.q_names if x not in names]
            if missing:
                raise InputError(f"log {label!r} lacks joint(s) {', '.join(printable(m) for m in missing)} of robot "
                                 f"'{robot.name}' (it has {', '.join(printable(x) for x in names)})")
            order = np.array([names.index(x) for x in robot.q_names])
        names = tuple(robot.q_names)
        data = {k: (v if v is None or k == "t" else v[:, order]) for k, v in data.items()}
    elif names is None:
        names = tuple(f"q{k}" for k in range(1, n + 1))
    return _checked(data["t"], {k: data[k] for k in ("q", "qd", "qdd", "tau")}, names, label, str(path), part)


def _hdf5_names(f, label: str):
    """The attribute ``joint_names`` (a short list of strings) or None."""
    if "joint_names" not in f.attrs:
        return None
    attr = f.attrs.get_id("joint_names")
    if attr.dtype.kind not in "SUO" or len(attr.shape) != 1 or attr.shape[0] > 10_000:
        raise InputError(f"log {label!r}: attribute joint_names must be a list of at most 10000 strings")
    names = tuple(x.decode() if isinstance(x, bytes) else x for x in f.attrs["joint_names"])
    if not all(isinstance(x, str) for x in names):
        raise InputError(f"log {label!r}: attribute joint_names must be a list of strings")
    seen = set()
    twice = next((x for x in names if x in seen or seen.add(x)), None)
    if twice is not None:
        raise InputError(f"log {label!r}: attribute joint_names lists {printable(twice)!r} twice; name each column "
                         "of q once")
    return names


# ---- static poses from a recording ----

#: Default of :func:`standstill_poses`: a sample is at standstill when every joint's |q̇| is below this (rad/s | m/s).
STANDSTILL_VELOCITY = 0.01
#: Default of :func:`standstill_poses`: shortest standstill segment that gives a pose (s).
STANDSTILL_DURATION = 0.5


@dataclass(frozen=True, eq=False)
class StandstillPoses:
    """Static poses found in a recording by :func:`standstill_poses`, one row per standstill segment.

    Attributes
    ----------
    q : ndarray (P, n) — mean joint positions over each segment (rad | m).
    tau : ndarray (P, n) — mean joint efforts over each segment (N m | N).
    samples : ndarray (P, 2) int — first and one-past-last sample index of each segment.
    times : ndarray (P, 2) — time of the first and of the last sample of each segment (s).
    """

    q: np.ndarray
    tau: np.ndarray
    samples: np.ndarray
    times: np.ndarray

    @property
    def count(self) -> int:
        """P, the number of poses."""
        return int(self.q.shape[0])


def standstill_poses(t, q, tau, qd=None, velocity: float = STANDSTILL_VELOCITY,
                     duration: float = STANDSTILL_DURATION) -> StandstillPoses:
    """Static poses of a recording: q and τ averaged over every segment where the robot stands still.

    A sample is at standstill when every joint's |q̇| is below ``velocity``; a run of consecutive standstill
    samples lasting at least ``duration`` (from its first to its last sample) gives one pose, the mean of q and
    of τ over the run (averaging lowers the measurement noise of the static torques that gravity calibration
    (Dellin) fits).

    Parameters
    ----------
    t : array_like (N,)
        Sample times (s), strictly increasing (:attr:`JointLog.t`).
    q, tau : array_like (N, n)
        Joint positions (rad | m) and efforts (N m | N).
    qd : array_like (N, n), optional
        Joint velocities (rad/s | m/s), e.g. a JointState's; by default the central differences of q over t
        (noisy positions at a high rate then need a larger ``velocity``).
    velocity : float
        Standstill threshold on every |q̇_j| (rad/s | m/s), above 0.
    duration : float
        Shortest segment that gives a pose (s), 0 or more.

    Returns
    -------
    StandstillPoses

    Raises
    ------
    InputError
        Shapes that disagree, values that are not finite, times not strictly increasing, a threshold out of
        range, or no standstill segment (the message gives the smallest max |q̇| met and the longest segment).
    """
    from robodyn.arrays import finite_array

    t = finite_array("t", t)
    q, tau = finite_array("q", q), finite_array("tau", tau)
    if t.ndim != 1 or t.size < 2 or np.any(np.diff(t) <= 0):
        raise InputError("argument 't' must be a 1-D array of at least 2 strictly increasing times (s)")
    if q.ndim != 2 or q.shape[0] != t.size:
        raise InputError(f"argument 'q' has shape {q.shape}; expected ({t.size}, n), one row per time")
    if tau.shape != q.shape:
        raise InputError(f"argument 'tau' has shape {tau.shape}; expected {q.shape}, the shape of q")
    if qd is None:
        qd = np.gradient(q, t, axis=0)
    else:
        qd = finite_array("qd", qd)
        if qd.shape != q.shape:
            raise InputError(f"argument 'qd' has shape {qd.shape}; expected {q.shape}, the shape of q")
    for name, value, above in (("velocity", velocity, True), ("duration", duration, False)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not np.isfinite(value) or value < 0 or (above and value == 0):
            wanted = "above 0" if above else "of at least 0"
            raise InputError(f"argument '{name}' = {value!r}; give a finite number {wanted}")
    speed = np.max(np.abs(qd), axis=1)
    still = np.concatenate([[False], speed < velocity, [False]])
    edges = np.flatnonzero(np.diff(still.astype(np.int8)))
    runs = edges.reshape(-1, 2)  # [first, one past last) of every run of standstill samples
    long = runs[t[runs[:, 1] - 1] - t[runs[:, 0]] >= duration] if runs.size else runs
    if long.size == 0:
        longest = max((float(t[b - 1] - t[a]) for a, b in runs), default=0.0)
        raise InputError(f"no standstill segment: max |qd| over the joints is never below velocity = {velocity:g} "
                         f"for duration = {duration:g} s (smallest max |qd|: {speed.min():.3g}; longest standstill: "
                         f"{longest:.3g} s); hold each pose longer, or give a larger velocity or a shorter duration")
    # each segment summed on its own (np.add.reduceat: no loop over samples or poses, and no cancellation as
    # with differences of running sums over a long log); a zero row closes a segment that ends at the last sample
    bounds = long.reshape(-1)
    size = (long[:, 1] - long[:, 0])[:, None]
    def mean(a):
        return np.add.reduceat(np.vstack([a, np.zeros((1, a.shape[1]))]), bounds, axis=0)[::2] / size

    return StandstillPoses(q=mean(q), tau=mean(tau), samples=long.astype(np.intp),
                           times=np.column_stack([t[long[:, 0]], t[long[:, 1] - 1]]))
