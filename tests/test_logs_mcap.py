"""robodyn's MCAP reader (robodyn.decode.read_mcap): the messages rosbags reads, each chunk decompressed once,
within the decoded limit; bombs, forged sizes and truncated files refused with one InputError."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
import robodyn.decode
import robodyn.files
from robodyn.errors import InputError
from tests.support.hostile_logs import BOMB_JOINTS, bomb_bag, mcap_bomb, rechunk_mcap
from tests.support.joint_bags import write_joint_bag

pytest.importorskip("rosbags")
from rosbags.highlevel import AnyReader  # noqa: E402

N, NAMES = 7, ["a", "b", "c"]


def _bag(tmp_path, compression):
    rng = np.random.default_rng(3)
    t = np.arange(N) * 0.01
    q, qd, tau = (rng.normal(size=(N, 3)) for _ in range(3))
    return write_joint_bag(tmp_path / f"bag_{compression}", "mcap", NAMES, t, q, qd, tau, order=[2, 0, 1],
                           compression=compression), (q, qd, tau)


def _rosbags(path):
    """[(log time, message bytes)] of /joint_states as rosbags reads them (the bag folder)."""
    with AnyReader([path]) as reader:
        return [(stamp, bytes(raw)) for _, stamp, raw in reader.messages()]


def _robodyn(path, compression):
    storage = next(p for p in sorted(path.iterdir()) if p.name != "metadata.yaml")
    channels, messages = robodyn.decode.read_mcap_file(storage, "bag", "/joint_states", compression == "file")
    assert {c.topic for c in channels.values()} == {"/joint_states"}
    assert all(c.schema == "sensor_msgs/msg/JointState" and c.encoding == "cdr" for c in channels.values())
    unpack = (lambda raw: robodyn.decode.decompress((raw,), "zstd", "bag", "a message")) \
        if compression == "message" else bytes
    return [(stamp, unpack(raw)) for stamp, _, raw in messages]


@pytest.mark.parametrize("compression", [None, "storage", "file", "message"])
def test_the_messages_rosbags_reads(tmp_path, compression):
    path, (q, qd, tau) = _bag(tmp_path, compression)
    assert _robodyn(path, compression) == _rosbags(path)
    log = rd.read_joint_log(path)
    assert log.joint_names == ("c", "a", "b")
    np.testing.assert_array_equal(log.q, q[:, [2, 0, 1]])
    np.testing.assert_array_equal(log.tau, tau[:, [2, 0, 1]])


@pytest.mark.parametrize("codec", ["", "zstd", "lz4"])
def test_chunks_of_each_codec(tmp_path, codec):
    path, _ = _bag(tmp_path, "storage")
    storage = next(path.glob("*.mcap"))
    copy = rechunk_mcap(storage, tmp_path / "copy.mcap", codec)
    _, messages = robodyn.decode.read_mcap_file(copy, "copy", "/joint_states")
    assert [(stamp, raw) for stamp, _, raw in messages] == _rosbags(path)
    np.testing.assert_array_equal(rd.read_joint_log(copy).q, rd.read_joint_log(path).q)


def test_each_chunk_is_decompressed_once(tmp_path, monkeypatch):
    """Two chunks of ~2 MB: two decompressor objects, one pass each; rosbags decompresses nothing."""
    import rosbags.rosbag2.storage_mcap as storage_mcap

    path = bomb_bag(tmp_path / "big", "mcap", "storage")
    made, fed = [], []
    factory = robodyn.decode.decompressor

    def counting(codec, label):
        new = factory(codec, label)

        def make():
            made.append(codec)
            return new()
        return make

    stream_feed = robodyn.decode.BoundedStream.feed

    def feed(self, data):
        fed.append(len(data))
        yield from stream_feed(self, data)

    monkeypatch.setattr(robodyn.decode, "decompressor", counting)
    monkeypatch.setattr(robodyn.decode.BoundedStream, "feed", feed)
    # rosbags' own chunk decompressors (every version keeps them in DECOMPRESSORS)
    for codec in storage_mcap.DECOMPRESSORS:
        monkeypatch.setitem(storage_mcap.DECOMPRESSORS, codec, lambda *a: pytest.fail("rosbags decompressed a chunk"))
    assert rd.read_joint_log(path).q.shape == (2, BOMB_JOINTS)
    storage = next(path.glob("*.mcap")).stat().st_size
    assert made == ["zstd", "zstd"] and sum(fed) < storage  # each compressed byte fed once


def test_a_declared_size_above_the_limit_is_refused_before_decompressing(tmp_path, monkeypatch):
    monkeypatch.delenv("ROBODYN_ALLOW_LARGE", raising=False)
    monkeypatch.setattr(robodyn.files, "MAX_DECODED_BYTES", 1 << 20)
    monkeypatch.setattr(robodyn.decode, "decompressor", lambda *a: pytest.fail("a decompressor was made"))
    for declared in (2 << 20, 2**63):
        path = mcap_bomb(tmp_path / "bomb.mcap", "zstd", 1000, declared=declared)
        with pytest.raises(InputError, match="an MCAP chunk \\(zstd\\) decodes to more than 1 MiB, the limit"):
            rd.read_joint_log(path)


def test_a_chunk_that_decodes_to_less_than_declared_is_refused(tmp_path):
    path = mcap_bomb(tmp_path / "short.mcap", "lz4", 1000, declared=5000)
    with pytest.raises(InputError, match="holds 1000 bytes, not the 5000 it declares"):
        rd.read_joint_log(path)


def test_truncated_files_are_refused(tmp_path):
    path, _ = _bag(tmp_path, "storage")
    storage = next(path.glob("*.mcap"))
    raw = storage.read_bytes()
    cut = tmp_path / "cut.mcap"
    # every length: inside the magic, the header, a chunk, the summary, at the footer and inside the end magic
    for size in sorted({0, 5, 8, 20, len(raw) // 3, len(raw) // 2, len(raw) - 37, len(raw) - 29, len(raw) - 8,
                        len(raw) - 1}):
        cut.write_bytes(raw[:size])
        with pytest.raises(InputError, match="truncated"):
            rd.read_joint_log(cut)


def test_a_file_that_is_not_ros2_mcap_is_refused(tmp_path):
    path = tmp_path / "x.mcap"
    raw = mcap_bomb(tmp_path / "ok.mcap", "zstd", 10).read_bytes()
    path.write_bytes(raw.replace(b"ros2", b"ros9", 1))
    with pytest.raises(InputError, match="not a ROS 2 MCAP file .*'ros9'"):
        rd.read_joint_log(path)
    path.write_bytes(b"\x89MCAP1\r\n" + raw[8:])
    with pytest.raises(InputError, match="not an MCAP file"):
        rd.read_joint_log(path)


def test_a_bag_defining_its_own_joint_state_is_refused(tmp_path):
    """The bag's own definition of JointState is used, as rosbags uses it: other field types are refused, and so
    is a definition that does not match the type hash of metadata.yaml."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    js = "sensor_msgs/msg/JointState"
    store, humble = get_typestore(Stores.EMPTY), get_typestore(Stores.ROS2_HUMBLE)
    store.register({k: humble.fielddefs[k] for k in ("std_msgs/msg/Header", "builtin_interfaces/msg/Time")})
    store.register(get_types_from_msg("std_msgs/Header header\nstring[] name\nstring[] position\n"
                                      "float64[] velocity\nfloat64[] effort", js))
    Msg, Header, Time = (store.types[k] for k in (js, "std_msgs/msg/Header", "builtin_interfaces/msg/Time"))
    msg = Msg(header=Header(stamp=Time(sec=1, nanosec=0), frame_id=""), name=["a"], position=["1.0"],
              velocity=np.zeros(0), effort=np.zeros(0))
    path = tmp_path / "custom"
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as w:
        w.write(w.add_connection("/joint_states", js, typestore=store), 1, store.serialize_cdr(msg, js))
    for target in (path, next(path.glob("*.mcap"))):
        with pytest.raises(InputError, match="field 'position' is not float64.*defines sensor_msgs/JointState"):
            rd.read_joint_log(target)
    metadata = path / "metadata.yaml"
    metadata.write_text(metadata.read_text().replace("RIHS01_", "RIHS01_0"))
    with pytest.raises(InputError, match="does not match the type hash in metadata.yaml"):
        rd.read_joint_log(path)
