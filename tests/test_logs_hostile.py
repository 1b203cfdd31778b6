"""Hostile logs: files that point outside themselves, decompression and allocation bombs, forged message types.

Every reader must read only the file the user named and decode at most robodyn.files.MAX_DECODED_BYTES from it,
checked before the bytes are allocated, decompressed or written; each refusal is one InputError. The limit is
lowered here to 1 MiB, so that small bombs (a few hundred KB) built at test time pass it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
import robodyn.files
from robodyn.errors import InputError
from tests.support.hostile_logs import (
    bomb_bag, custom_joint_state_bag, declared, external_link, external_storage, hdf5_log, lie_about_ros1_chunk_sizes,
    mcap_bomb, virtual,
)
from tests.support.joint_bags import write_joint_bag

pytest.importorskip("rosbags")
h5py = pytest.importorskip("h5py")

LIMIT = 1 << 20


@pytest.fixture
def small_limit(monkeypatch):
    monkeypatch.delenv("ROBODYN_ALLOW_LARGE", raising=False)
    monkeypatch.setattr(robodyn.files, "MAX_DECODED_BYTES", LIMIT)
    return LIMIT


@pytest.fixture
def secret(tmp_path):
    """A private file of the user that no log may pull in: 48 bytes = six float64 numbers 1.0 .. 6.0."""
    path = tmp_path / "id_rsa"
    path.write_bytes(np.arange(1.0, 7.0).tobytes())
    path.chmod(0o600)
    return path


# ---- 1. HDF5 logs read only the file itself ----

@pytest.mark.parametrize("make, what", [(external_link, "external link"), (external_storage, "external-storage"),
                                        (virtual, "virtual")])
@pytest.mark.parametrize("key", ["q", "tau"])
def test_hdf5_references_to_other_files_are_refused(tmp_path, secret, make, what, key):
    if make is virtual:  # a virtual dataset's source: a dataset "q" in another HDF5 file
        with h5py.File(tmp_path / "other.h5", "w") as f:
            f["q"] = np.arange(1.0, 7.0).reshape(3, 2)
        secret = tmp_path / "other.h5"
    path = hdf5_log(tmp_path / "log.h5", **{key: make(secret)})
    with pytest.raises(InputError, match=what) as err:
        rd.read_joint_log(path)
    assert "itself" in str(err.value)
    from robodyn.distributed import read_samples

    with h5py.File(path, "a") as f:
        for k in ("q", "qd", "qdd", "tau"):
            if k not in f and k != key:
                f[k] = np.zeros((3, 2))
    with pytest.raises(InputError, match=what):
        read_samples(path, rd.load("planar2r"))


def test_hdf5_soft_links_groups_and_text_are_refused(tmp_path):
    cases = {"soft link": {"tau": lambda f, k: f.__setitem__(k, h5py.SoftLink("/q"))},
             "group": {"q": lambda f, k: f.create_group(k)},
             "text": {"q": lambda f, k: f.__setitem__(k, np.array([[b"1", b"2"]] * 3))},
             "booleans": {"q": lambda f, k: f.__setitem__(k, np.zeros((3, 2), bool))}}
    for what, datasets in cases.items():
        with pytest.raises(InputError, match=what):
            rd.read_joint_log(hdf5_log(tmp_path / f"{what}.h5", **datasets))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("make", ["external_link", "external_storage", "virtual"])
def test_an_external_fifo_is_never_opened(tmp_path, make):
    """Opening a FIFO blocks until a writer comes: the reader must refuse before. Run in a child process, so
    that a regression fails the test instead of hanging it."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parents[1])!r})\n"
            "from pathlib import Path\nimport robodyn as rd\nfrom tests.support import hostile_logs as h\n"
            f"p = h.hdf5_log(Path({str(tmp_path / 'log.h5')!r}), q=h.{make}(Path({str(fifo)!r})))\n"
            "try:\n    rd.read_joint_log(p)\nexcept rd.RobodynError as e:\n    print('REFUSED', e)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert out.stdout.startswith("REFUSED"), out.stdout + out.stderr


# ---- 2. bounded decoding, one limit for every format ----

@pytest.mark.parametrize("kind, compression", [("ros1", "bz2"), ("ros1", "lz4"), ("mcap", "storage"),
                                               ("mcap", "file"), ("sqlite3", "file"), ("sqlite3", "message"),
                                               ("mcap", "message")])
def test_compressed_bags_are_refused_above_the_limit_and_read_below(tmp_path, small_limit, monkeypatch, kind,
                                                                    compression):
    path = bomb_bag(tmp_path / ("bomb.bag" if kind == "ros1" else "bomb"), kind, compression)
    size = sum(p.stat().st_size for p in (path.iterdir() if path.is_dir() else [path]))
    assert size < 2 * LIMIT  # far smaller than the ~4 MB it decodes to
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    with pytest.raises(InputError, match="decodes to more than 1 MiB, the limit for one file"):
        rd.read_joint_log(path)
    assert not any(scratch.iterdir())  # nothing decompressed to the temporary folder
    monkeypatch.setenv("ROBODYN_ALLOW_LARGE", "1")  # lifted: the same file reads
    assert rd.read_joint_log(path).q.shape == (2, 150_000)


def test_lying_ros1_chunk_headers_are_refused(tmp_path):
    path = write_joint_bag(tmp_path / "lie.bag", "ros1", ["a", "b"], np.arange(3) * 0.1, np.zeros((3, 2)),
                           compression="bz2")
    lie_about_ros1_chunk_sizes(path, 10)
    with pytest.raises(InputError, match="more than the 10 bytes its header declares"):
        rd.read_joint_log(path)


@pytest.mark.parametrize("codec", ["zstd", "lz4"])
def test_mcap_chunks_are_measured_before_rosbags_decompresses_them(tmp_path, small_limit, codec):
    honest = mcap_bomb(tmp_path / "honest.mcap", codec, 4 * LIMIT)
    with pytest.raises(InputError, match="decodes to more than 1 MiB"):
        rd.read_joint_log(honest)
    lying = mcap_bomb(tmp_path / "lying.mcap", codec, LIMIT // 2, declared=1000)
    with pytest.raises(InputError, match="more than the 1000 bytes its header declares"):
        rd.read_joint_log(lying)
    assert honest.stat().st_size < 20_000


@pytest.mark.parametrize("rows", [200_000, 40_000_000, 10**15])
def test_hdf5_declared_shapes_are_checked_before_reading(tmp_path, small_limit, rows):
    path = hdf5_log(tmp_path / "rows.h5", q=declared(rows))
    assert path.stat().st_size < 100_000
    with pytest.raises(InputError, match=f"declared shape \\({rows}, 2\\).*above the limit"):
        rd.read_joint_log(path)
    from robodyn.distributed import read_samples

    path = hdf5_log(tmp_path / "samples.h5", **{k: declared(rows) for k in ("q", "qd", "qdd", "tau")})
    with pytest.raises(InputError, match="above the limit"):
        read_samples(path, rd.load("planar2r"), chunk=1000)


def test_hdf5_below_the_limit_still_reads(tmp_path, small_limit):
    path = hdf5_log(tmp_path / "ok.h5", q=lambda f, k: f.__setitem__(k, np.ones((3, 2))))
    assert np.array_equal(rd.read_joint_log(path).q, np.ones((3, 2)))


def test_parquet_declared_rows_are_checked_before_any_page_is_read(tmp_path, small_limit, monkeypatch):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rows = 400_000
    path = tmp_path / "rle.parquet"
    pq.write_table(pa.table({"t": np.arange(rows, dtype=float), "q1": np.zeros(rows), "q2": np.zeros(rows)}), path,
                   compression="zstd")
    read = []
    monkeypatch.setattr(pq.ParquetFile, "read", lambda self, *a, **k: read.append(1))
    with pytest.raises(InputError, match=f"3 columns of {rows} declared rows .*above the limit"):
        rd.read_joint_log(path)
    assert not read
    from robodyn.distributed import read_samples

    cols = {f"{p}{k}": np.zeros(rows) for p in ("q", "qd", "qdd", "tau") for k in (1, 2)}
    pq.write_table(pa.table(cols), tmp_path / "samples.parquet", compression="zstd")
    with pytest.raises(InputError, match="above the limit"):
        read_samples(tmp_path / "samples.parquet", rd.load("planar2r"))


def test_parquet_memory_errors_become_input_errors(tmp_path, monkeypatch):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "ok.parquet"
    pq.write_table(pa.table({"t": [0.0, 1.0], "q1": [0.0, 0.0]}), path)

    def exhausted(self, *args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(pq.ParquetFile, "read", exhausted)
    with pytest.raises(InputError, match="do not fit in memory"):
        rd.read_joint_log(path)


def test_zarr_declared_shapes_links_and_groups(tmp_path, small_limit):
    zarr = pytest.importorskip("zarr")
    from robodyn.distributed import read_samples

    robot = rd.load("planar2r")
    group = zarr.open_group(str(tmp_path / "huge.zarr"), mode="w")
    for k in ("q", "qd", "qdd", "tau"):
        group.create_array(k, shape=(10**15, 2), chunks=(1000, 2), dtype="f8")
    with pytest.raises(InputError, match="above the limit"):
        read_samples(tmp_path / "huge.zarr", robot)
    group = zarr.open_group(str(tmp_path / "g.zarr"), mode="w")
    group.create_group("q")
    for k in ("qd", "qdd", "tau"):
        group.create_array(k, shape=(3, 2), dtype="f8")
    with pytest.raises(InputError, match="q is a group"):
        read_samples(tmp_path / "g.zarr", robot)
    os.symlink("/etc/hostname", tmp_path / "g.zarr" / "link")
    with pytest.raises(InputError, match="symbolic link"):
        read_samples(tmp_path / "g.zarr", robot)


# ---- 5, 6. bags: non-finite values and forged JointState definitions ----

@pytest.mark.parametrize("field", ["q", "tau"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("kind", ["ros1", "mcap"])
def test_non_finite_bag_values_are_refused(tmp_path, field, bad, kind):
    q, tau = np.zeros((3, 2)), np.zeros((3, 2))
    (q if field == "q" else tau)[1, 1] = bad
    path = write_joint_bag(tmp_path / ("x.bag" if kind == "ros1" else "x"), kind, ["a", "b"], np.arange(3) * 0.1,
                           q, tau=tau)
    key = "position" if field == "q" else "effort"
    with pytest.raises(InputError, match=f"message 1: {key}\\[1\\] = .* is not finite"):
        rd.read_joint_log(path)


@pytest.mark.parametrize("definition, values, field", [
    ("string[] name\nstring[] position\nfloat64[] velocity\nfloat64[] effort",
     {"name": ["a"], "position": ["1.0"]}, "position"),
    ("string[] name\nbool[] position\nfloat64[] velocity\nfloat64[] effort",
     {"name": ["a"], "position": np.array([True])}, "position"),
    ("int32[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort",
     {"name": np.array([7], dtype=np.int32), "position": np.zeros(1)}, "name"),
    ("string[] name\nfloat64[] position\nfloat64[] velocity\nint8[] effort",
     {"name": ["a"], "position": np.zeros(1), "effort": np.ones(1, np.int8)}, "effort"),
])
def test_a_bag_defining_its_own_joint_state_is_refused(tmp_path, definition, values, field):
    values = {"velocity": np.zeros(0), "effort": np.zeros(0), **values}
    path = custom_joint_state_bag(tmp_path / "custom.bag", definition, values)
    with pytest.raises(InputError, match=f"field '{field}' is not .*defines sensor_msgs/JointState differently"):
        rd.read_joint_log(path)
