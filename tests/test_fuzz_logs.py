"""Fuzz of rd.read_joint_log over every log format: damaged bytes, lying chunk headers, declared sizes.

Small valid logs of each format are built once (ROS 1 bags with bz2 and lz4 chunks, ROS 2 bags in sqlite3 and in
MCAP with zstd chunks, a zstd-compressed ROS 2 bag, CSV, HDF5, Parquet); hypothesis then overwrites bytes, or the
size fields of compressed chunks, and the reader must either return a JointLog or raise one RobodynError: never
another exception, never more than the decoded limit (lowered to 1 MiB here), never a hang. Deterministic
(derandomized examples), a few seconds per format.
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import robodyn as rd
import robodyn.files
from robodyn.errors import RobodynError
from tests.support.hostile_logs import mcap_bomb
from tests.support.joint_bags import write_joint_bag

pytest.importorskip("rosbags")
h5py = pytest.importorskip("h5py")
pa = pytest.importorskip("pyarrow")

FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
N, NAMES = 6, ["a", "b"]


def _data():
    t = np.arange(N) * 0.01
    return t, np.column_stack([np.sin(t), np.cos(t)]), np.column_stack([t, -t])


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """{name: path} of one small valid log per format (a ROS 2 bag: its folder)."""
    root = tmp_path_factory.mktemp("logs")
    t, q, tau = _data()
    out = {}
    for name, kind, compression in (("bz2.bag", "ros1", "bz2"), ("lz4.bag", "ros1", "lz4"),
                                    ("plain.bag", "ros1", None), ("sqlite", "sqlite3", None),
                                    ("mcap", "mcap", "storage"), ("zfile", "sqlite3", "file")):
        out[name] = write_joint_bag(root / name, kind, NAMES, t, q, qd=q, tau=tau, compression=compression)
    np.savetxt(root / "log.csv", np.column_stack([t, q, tau]), delimiter=",", header="t,q1,q2,tau1,tau2",
               comments="")
    out["log.csv"] = root / "log.csv"
    with h5py.File(root / "log.h5", "w") as f:
        f["t"], f["q"], f["tau"] = t, q, tau
        f.create_dataset("qd", data=q, chunks=(2, 2), compression="gzip")
    out["log.h5"] = root / "log.h5"
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"t": t, "q1": q[:, 0], "q2": q[:, 1], "tau1": tau[:, 0], "tau2": tau[:, 1]}),
                   root / "log.parquet", compression="zstd")
    out["log.parquet"] = root / "log.parquet"
    return out


@pytest.fixture(autouse=True)
def small_limit(monkeypatch):
    monkeypatch.delenv("ROBODYN_ALLOW_LARGE", raising=False)
    monkeypatch.setattr(robodyn.files, "MAX_DECODED_BYTES", 1 << 20)


def _data_file(path: Path) -> Path:
    """The file that holds the messages: the log itself, or a ROS 2 bag's storage file."""
    if not path.is_dir():
        return path
    return next(p for p in sorted(path.iterdir()) if p.name != "metadata.yaml")


def _copy(path: Path, dest: Path) -> Path:
    target = dest / path.name
    if target.exists():
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    (shutil.copytree if path.is_dir() else shutil.copy)(path, target)
    return target


def _read_or_refuse(path: Path) -> None:
    try:
        log = rd.read_joint_log(path)
    except RobodynError:
        return
    assert log.q.ndim == 2 and log.t.shape[0] == log.q.shape[0] and np.isfinite(log.q).all()


def test_the_logs_read_before_fuzzing(logs):
    t, q, _ = _data()
    for name, path in logs.items():
        log = rd.read_joint_log(path)
        assert np.allclose(log.q, q, rtol=0, atol=1e-12), name


@pytest.mark.parametrize("name", ["bz2.bag", "lz4.bag", "plain.bag", "sqlite", "mcap", "zfile", "log.csv",
                                  "log.h5", "log.parquet"])
@FUZZ
@given(data=st.data())
def test_overwritten_bytes_read_or_refuse(logs, tmp_path, name, data):
    path = _copy(logs[name], tmp_path)
    target = _data_file(path)
    raw = bytearray(target.read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(raw) - 1))
        chunk = data.draw(st.binary(min_size=1, max_size=8))
        raw[at:at + len(chunk)] = chunk
    target.write_bytes(bytes(raw))
    _read_or_refuse(path)


@pytest.mark.parametrize("name", ["bz2.bag", "lz4.bag"])
@FUZZ
@given(size=st.integers(0, 2**32 - 1))
def test_ros1_chunk_size_fields_that_lie(logs, tmp_path, name, size):
    path = _copy(logs[name], tmp_path)
    raw = bytearray(path.read_bytes())
    field = struct.pack("<I", 9) + b"size="
    at = raw.find(field)
    raw[at + len(field):at + len(field) + 4] = struct.pack("<I", size)
    path.write_bytes(bytes(raw))
    _read_or_refuse(path)


@FUZZ
@given(codec=st.sampled_from(["zstd", "lz4"]), decoded=st.integers(0, 3 << 20),
       declared=st.one_of(st.none(), st.integers(0, 2**64 - 1)))
def test_mcap_chunks_with_any_declared_size(tmp_path, codec, decoded, declared):
    path = mcap_bomb(tmp_path / "x.mcap", codec, decoded, declared)
    with pytest.raises(RobodynError):  # a chunk of zeros holds no JointState: refused one way or another
        rd.read_joint_log(path)


@FUZZ
@given(rows=st.integers(0, 2**40), cols=st.integers(0, 2**20), key=st.sampled_from(["t", "q", "tau"]))
def test_hdf5_declared_shapes(tmp_path, rows, cols, key):
    path = tmp_path / "x.h5"
    t, q, _ = _data()
    with h5py.File(path, "w") as f:
        shape = (rows,) if key == "t" else (rows, cols)
        chunks = tuple(max(1, min(s, 64)) for s in shape) if all(shape) else None
        f.create_dataset(key, shape=shape, dtype="f8", chunks=chunks, maxshape=tuple(None for _ in shape))
        for k, v in (("t", t), ("q", q)):
            if k != key:
                f[k] = v
    _read_or_refuse(path)


_TYPES = {"string[]": lambda: ["a", "b"], "float64[]": lambda: np.array([0.5, 1.5]),
          "float32[]": lambda: np.array([0.5, 1.5], np.float32), "int32[]": lambda: np.array([1, 2], np.int32),
          "bool[]": lambda: np.array([True, False]), "float64": lambda: 0.5, "string": lambda: "a",
          "uint8[]": lambda: np.array([1, 2], np.uint8)}


@FUZZ
@given(types=st.fixed_dictionaries({k: st.sampled_from(sorted(_TYPES)) for k in ("name", "position", "velocity",
                                                                              "effort")}))
def test_custom_joint_state_definitions_read_or_refuse(tmp_path, types):
    """A bag may define sensor_msgs/JointState with any field types: only string[] name and float64[] values
    read; every other definition is one RobodynError."""
    from tests.support.hostile_logs import custom_joint_state_bag

    definition = "\n".join(f"{types[k]} {k}" for k in ("name", "position", "velocity", "effort"))
    (tmp_path / "c.bag").unlink(missing_ok=True)  # one tmp_path for all the examples
    path = custom_joint_state_bag(tmp_path / "c.bag", definition, {k: _TYPES[v]() for k, v in types.items()})
    standard = types == {"name": "string[]", "position": "float64[]", "velocity": "float64[]",
                         "effort": "float64[]"}
    if standard:
        assert rd.read_joint_log(path).q.shape == (1, 2)
    else:
        with pytest.raises(RobodynError):
            rd.read_joint_log(path)
