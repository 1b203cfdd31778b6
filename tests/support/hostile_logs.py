"""Hostile joint logs, small and built at test time: compression bombs with honest or lying headers, HDF5 files
that point outside themselves, declared shapes far above the stored data, custom JointState definitions."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from tests.support.joint_bags import JOINT_STATE, write_joint_bag

#: joints of the bomb bags: one message of this many positions decodes to ~2 MB (names + float64 values)
BOMB_JOINTS = 150_000


def bomb_bag(path: Path, kind: str, compression: str) -> Path:
    """A bag of 2 JointState messages of :data:`BOMB_JOINTS` zero positions each: ~4 MB of messages in a few
    hundred KB of compressed chunks, messages or files (``kind`` "ros1", "sqlite3", "mcap")."""
    names = [f"{k:x}" for k in range(BOMB_JOINTS)]
    return write_joint_bag(path, kind, names, np.array([0.0, 0.01]), np.zeros((2, BOMB_JOINTS)),
                           compression=compression)


def lie_about_ros1_chunk_sizes(path: Path, size: int = 100) -> Path:
    """Rewrite the ``size`` field (bytes once decompressed) of every chunk header of a ROS 1 bag to ``size``."""
    data = bytearray(path.read_bytes())
    field = struct.pack("<I", 9) + b"size="
    at = data.find(field)
    assert at >= 0, "no chunk header"
    while at >= 0:
        data[at + len(field):at + len(field) + 4] = struct.pack("<I", size)
        at = data.find(field, at + 1)
    path.write_bytes(bytes(data))
    return path


def _record(op: int, content: bytes) -> bytes:
    return bytes([op]) + struct.pack("<Q", len(content)) + content


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<I", len(raw)) + raw


def mcap_bomb(path: Path, codec: str, decoded: int, declared: int | None = None) -> Path:
    """An MCAP file with one chunk of ``decoded`` zero bytes compressed with ``codec`` ("zstd" or "lz4"), whose
    header declares ``declared`` bytes (the truth by default: a lying header when smaller)."""
    if codec == "lz4":
        import lz4.frame

        packed = lz4.frame.compress(bytes(decoded))
    else:
        try:
            from compression import zstd
        except ImportError:
            from backports import zstd
        packed = zstd.compress(bytes(decoded))
    declared = decoded if declared is None else declared
    chunk = struct.pack("<QQQI", 0, 1, declared, 0) + _string(codec) + struct.pack("<Q", len(packed)) + packed
    magic = b"\x89MCAP0\r\n"
    body = magic + _record(0x01, _string("ros2") + _string("hostile")) + _record(0x06, chunk)
    body += _record(0x02, struct.pack("<QQI", 0, 0, 0)) + magic
    path.write_bytes(body)
    return path


def rechunk_mcap(source: Path, path: Path, codec: str) -> Path:
    """A copy of the MCAP file ``source`` whose chunks are compressed with ``codec`` ("", "zstd" or "lz4");
    every other record is copied as is (the summary's chunk offsets go stale: only a reader that walks the records
    in order, as robodyn's, reads the copy)."""
    import lz4.frame

    try:
        from compression import zstd
    except ImportError:
        from backports import zstd
    raw, out, at = source.read_bytes(), bytearray(source.read_bytes()[:8]), 8
    while at < len(raw) - 8:
        op, (length,) = raw[at], struct.unpack_from("<Q", raw, at + 1)
        content = raw[at + 9:at + 9 + length]
        if op == 0x06:
            (n,) = struct.unpack_from("<I", content, 28)
            old = content[28 + 4:32 + n].decode()
            records = content[40 + n:]
            records = {"": bytes, "zstd": zstd.decompress, "lz4": lz4.frame.decompress}[old](records)
            packed = {"": bytes, "zstd": zstd.compress, "lz4": lz4.frame.compress}[codec](records)
            content = content[:28] + _string(codec) + struct.pack("<Q", len(packed)) + packed
        out += _record(op, content)
        at += 9 + length
    path.write_bytes(bytes(out + raw[at:]))
    return path


def hdf5_log(path: Path, **datasets) -> Path:
    """An HDF5 log with ``t`` (3,) and ``q`` (3, 2) of zeros unless replaced: each keyword is a dataset name and
    a function ``(file, name)`` that creates it (a link, external storage, a huge declared shape, ...)."""
    import h5py

    with h5py.File(path, "w") as f:
        f["t"] = np.arange(3.0)
        for name, make in datasets.items():
            make(f, name)
        if "q" not in datasets:
            f["q"] = np.zeros((3, 2))
    return path


def external_link(target: Path):
    import h5py

    return lambda f, name: f.__setitem__(name, h5py.ExternalLink(str(target), "/" + name))


def external_storage(target: Path, shape=(3, 2)):
    import h5py

    return lambda f, name: f.create_dataset(name, shape=shape, dtype="f8",
                                            external=[(str(target), 0, h5py.h5f.UNLIMITED)])


def virtual(target: Path, shape=(3, 2)):
    import h5py

    def make(f, name):
        layout = h5py.VirtualLayout(shape=shape, dtype="f8")
        layout[:] = h5py.VirtualSource(str(target), "q", shape=shape)
        f.create_virtual_dataset(name, layout)

    return make


def declared(rows: int, n: int = 2, chunk: int = 1000):
    """A dataset that declares ``rows`` rows and stores none (chunked, never written)."""
    return lambda f, name: f.create_dataset(name, shape=(rows, n), dtype="f8", chunks=(min(chunk, rows), n))


def custom_joint_state_bag(path: Path, definition: str, values: dict) -> Path:
    """A ROS 1 bag whose connection defines ``sensor_msgs/JointState`` as ``definition`` (message text after
    the Header line), with one message of field ``values``."""
    from rosbags.rosbag1 import Writer
    from rosbags.typesys import Stores, get_typestore, get_types_from_msg

    store = get_typestore(Stores.EMPTY)
    noetic = get_typestore(Stores.ROS1_NOETIC)
    store.register({k: noetic.fielddefs[k] for k in ("std_msgs/msg/Header", "builtin_interfaces/msg/Time")})
    store.register(get_types_from_msg("std_msgs/Header header\n" + definition, JOINT_STATE))
    Msg, Header, Time = (store.types[k] for k in (JOINT_STATE, "std_msgs/msg/Header", "builtin_interfaces/msg/Time"))
    msg = Msg(header=Header(seq=0, stamp=Time(sec=1, nanosec=0), frame_id=""), **values)
    with Writer(path) as w:
        c = w.add_connection("/joint_states", JOINT_STATE, typestore=store)
        w.write(c, 1_000_000_000, store.serialize_ros1(msg, JOINT_STATE))
    return path
