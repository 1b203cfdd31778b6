"""Real ROS bags of sensor_msgs/JointState for tests, written with the rosbags library (no ROS installation)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

JOINT_STATE = "sensor_msgs/msg/JointState"


def write_joint_bag(path: Path, kind: str, names, t, q, qd=None, tau=None, topic: str = "/joint_states",
                    start_ns: int = 1_700_000_000 * 10**9, order=None, compression: str | None = None) -> Path:
    """A bag with one JointState message per row: kind "ros1" (``.bag``), "sqlite3" or "mcap" (ROS 2 bag folder).

    ``t`` (N,) s from ``start_ns`` become the header stamps (rounded to ns); ``q``, ``qd``, ``tau`` (N, n) the
    position, velocity and effort fields (an absent field is empty); ``order`` (n,) lists the joints of every
    message in that order (the robot's order by default), to check that readers map them by name.
    ``compression``: ROS 1 "bz2" or "lz4" chunks; ROS 2 "storage" (zstd MCAP chunks), "file" or "message" (zstd).
    """
    from rosbags.rosbag1 import Writer as Writer1
    from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer as Writer2
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS1_NOETIC if kind == "ros1" else Stores.ROS2_HUMBLE)
    Msg, Header, Time = (store.types[k] for k in (JOINT_STATE, "std_msgs/msg/Header", "builtin_interfaces/msg/Time"))
    perm = np.arange(len(names)) if order is None else np.asarray(order)
    ns = start_ns + np.round(np.asarray(t) * 1e9).astype(np.int64)
    empty = np.zeros(0)

    def messages():
        for i in range(len(ns)):
            stamp = Time(sec=int(ns[i] // 10**9), nanosec=int(ns[i] % 10**9))
            header = Header(seq=i, stamp=stamp, frame_id="") if kind == "ros1" else Header(stamp=stamp, frame_id="")
            msg = Msg(header=header, name=[names[k] for k in perm], position=np.asarray(q[i])[perm],
                      velocity=empty if qd is None else np.asarray(qd[i])[perm],
                      effort=empty if tau is None else np.asarray(tau[i])[perm])
            yield int(ns[i]), (store.serialize_ros1 if kind == "ros1" else store.serialize_cdr)(msg, JOINT_STATE)

    if kind == "ros1":
        w = Writer1(path)
        if compression:
            w.set_compression(getattr(Writer1.CompressionFormat, compression.upper()))
        with w:
            c = w.add_connection(topic, JOINT_STATE, typestore=store)
            for stamp, raw in messages():
                w.write(c, stamp, raw)
        return path
    plugin = StoragePlugin.SQLITE3 if kind == "sqlite3" else StoragePlugin.MCAP
    w = Writer2(path, version=9, storage_plugin=plugin)
    if compression:
        w.set_compression(getattr(CompressionMode, compression.upper()), CompressionFormat.ZSTD)
    with w:
        c = w.add_connection(topic, JOINT_STATE, typestore=store)
        for stamp, raw in messages():
            w.write(c, stamp, raw)
    return path
