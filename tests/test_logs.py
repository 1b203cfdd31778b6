"""rd.read_joint_log: ROS 1 and ROS 2 (sqlite3, MCAP) bags written with rosbags, CSV, HDF5, Parquet."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn.errors import InputError
from robodyn.logs import JointLog, log_format, read_joint_log

pytest.importorskip("rosbags")
from rosbags.rosbag1 import Writer as Writer1  # noqa: E402
from rosbags.rosbag2 import StoragePlugin, Writer as Writer2  # noqa: E402
from rosbags.typesys import Stores, get_typestore  # noqa: E402

JS = "sensor_msgs/msg/JointState"
N = 40


@pytest.fixture(scope="module")
def robot():
    return rd.load("rx90")


def _samples(n: int, rng):
    """Known data: stamps 1.7e9 s + 1 ms steps (+ 7 ns), positions, velocities, efforts."""
    sec = 1_700_000_000 + np.arange(N) // 1000
    nsec = (np.arange(N) % 1000) * 1_000_000 + 7
    return sec, nsec, rng.normal(size=(N, n)), rng.normal(size=(N, n)), rng.normal(size=(N, n))


def _messages(store, names, data, perm_of=lambda i: None, effort=True, zero_stamps=False):
    ts = get_typestore(store)
    Msg, Header, Time = (ts.types[k] for k in (JS, "std_msgs/msg/Header", "builtin_interfaces/msg/Time"))
    sec, nsec, q, qd, tau = data
    ros1 = "seq" in Header.__dataclass_fields__
    for i in range(N):
        perm = perm_of(i)
        perm = np.arange(len(names)) if perm is None else perm
        stamp = Time(sec=0, nanosec=0) if zero_stamps else Time(sec=int(sec[i]), nanosec=int(nsec[i]))
        header = Header(seq=i, stamp=stamp, frame_id="") if ros1 else Header(stamp=stamp, frame_id="")
        msg = Msg(header=header, name=[names[k] for k in perm], position=q[i, perm], velocity=qd[i, perm],
                  effort=tau[i, perm] if effort else np.zeros(0))
        yield i, msg, (ts.serialize_ros1 if ros1 else ts.serialize_cdr)(msg, JS)


def write_bag(path: Path, kind: str, names, data, topic="/joint_states", **options) -> Path:
    """A real bag of JointState messages on ``topic``: kind "ros1", "sqlite3" or "mcap"."""
    if kind == "ros1":
        with Writer1(path) as w:
            c = w.add_connection(topic, JS, typestore=get_typestore(Stores.ROS1_NOETIC))
            for i, _, raw in _messages(Stores.ROS1_NOETIC, names, data, **options):
                w.write(c, 1_000 + i, raw)
        return path
    plugin = StoragePlugin.SQLITE3 if kind == "sqlite3" else StoragePlugin.MCAP
    with Writer2(path, version=9, storage_plugin=plugin) as w:
        c = w.add_connection(topic, JS, typestore=get_typestore(Stores.ROS2_HUMBLE))
        w.add_connection("/other", "std_msgs/msg/String", typestore=get_typestore(Stores.ROS2_HUMBLE))
        for i, _, raw in _messages(Stores.ROS2_HUMBLE, names, data, **options):
            w.write(c, 1_000 + i, raw)
    return path


@pytest.mark.parametrize("kind", ["ros1", "sqlite3", "mcap"])
def test_bag_round_trip_in_the_robots_joint_order(tmp_path, robot, kind):
    rng = np.random.default_rng(1)
    data = _samples(robot.n, rng)
    names = robot.q_names + ("gripper",)  # an extra joint the robot does not have
    extra = tuple(np.column_stack([a, np.zeros(N)]) for a in data[2:])
    perms = [rng.permutation(robot.n + 1) for _ in range(N)]  # every message in its own joint order
    bag = write_bag(tmp_path / ("log.bag" if kind == "ros1" else "log"), kind, names, data[:2] + extra,
                    perm_of=lambda i: perms[i])
    log = read_joint_log(bag, robot=robot)
    assert isinstance(log, JointLog) and log.joint_names == robot.q_names and log.samples == N
    np.testing.assert_array_equal(log.q, data[2])
    np.testing.assert_array_equal(log.qd, data[3])
    np.testing.assert_array_equal(log.tau, data[4])
    ns = (data[0] - data[0][0]) * 1_000_000_000 + data[1] - data[1][0]
    np.testing.assert_allclose(log.t, ns * 1e-9, rtol=0, atol=1e-15)
    assert log.start_ns == 1_700_000_000 * 1_000_000_000 + 7 and log.time_source == "header"
    if kind != "ros1":  # the storage file itself reads the same
        storage = next(bag.glob("*.db3" if kind == "sqlite3" else "*.mcap"))
        np.testing.assert_array_equal(read_joint_log(storage, robot=robot).q, data[2])


def test_without_robot_the_first_messages_order(tmp_path):
    data = _samples(3, np.random.default_rng(2))
    log = read_joint_log(write_bag(tmp_path / "b", "mcap", ("c", "a", "b"), data, effort=False))
    assert log.joint_names == ("c", "a", "b") and log.tau is None
    np.testing.assert_array_equal(log.q, data[2])


def test_zero_header_stamps_fall_back_to_record_times(tmp_path):
    data = _samples(2, np.random.default_rng(3))
    log = read_joint_log(write_bag(tmp_path / "z.bag", "ros1", ("a", "b"), data, zero_stamps=True))
    assert log.time_source == "receive" and log.start_ns == 1_000
    np.testing.assert_allclose(log.t, np.arange(N) * 1e-9, rtol=0, atol=1e-18)


def test_bag_errors_name_the_cause(tmp_path, robot):
    data = _samples(robot.n, np.random.default_rng(4))
    bag = write_bag(tmp_path / "m", "sqlite3", robot.q_names[::-1][:-1] + ("x",), data)
    with pytest.raises(InputError, match=r"lacks joint\(s\) j1 of the robot"):
        read_joint_log(bag, robot=robot)
    with pytest.raises(InputError, match="no topic '/js'; topics in the bag: /joint_states, /other"):
        read_joint_log(bag, topic="/js")
    with pytest.raises(InputError, match="carries std_msgs/msg/String"):
        read_joint_log(bag, topic="/other")
    junk = tmp_path / "junk.bag"
    junk.write_bytes(b"not a bag at all")
    with pytest.raises(InputError, match="not a readable ROS 1 bag"):
        read_joint_log(junk)


def test_non_regular_files_and_size_limit_are_refused_before_reading(tmp_path):
    fifo = tmp_path / "pipe.bag"
    os.mkfifo(fifo)  # a reader that opened it would block forever
    with pytest.raises(InputError, match="not a regular file"):
        read_joint_log(fifo)
    data = _samples(2, np.random.default_rng(5))
    bag = write_bag(tmp_path / "s.bag", "ros1", ("a", "b"), data)
    with pytest.raises(InputError, match="more than max_bytes = 100"):
        read_joint_log(bag, max_bytes=100)
    with pytest.raises(InputError, match="unknown format .txt"):
        read_joint_log(tmp_path / "x.txt")
    with pytest.raises(InputError, match="cannot be read"):
        read_joint_log(tmp_path / "missing.bag")
    (tmp_path / "folder").mkdir()
    with pytest.raises(InputError, match="folder without metadata.yaml"):
        read_joint_log(tmp_path / "folder")
    assert log_format(tmp_path / "folder") == "ros2" and log_format("a.MCAP") == "ros2"


def _table(n, rng, t0=5.0):
    t = t0 + 0.001 * np.arange(N)
    return t, {k: rng.normal(size=(N, n)) for k in ("q", "qd", "qdd", "tau")}


def _columns(t, arrays):
    cols = {"t": t}
    for key, a in arrays.items():
        cols.update({f"{key}{k + 1}": a[:, k] for k in range(a.shape[1])})
    return cols


def test_csv_and_parquet(tmp_path, robot):
    t, arrays = _table(robot.n, np.random.default_rng(6))
    cols = _columns(t, arrays)
    csv = tmp_path / "log.csv"
    csv.write_text(",".join(cols) + "\n" + "\n".join(",".join(repr(float(cols[c][i])) for c in cols)
                                                      for i in range(N)) + "\n")
    logs = [read_joint_log(csv, robot=robot)]
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table(cols), tmp_path / "log.parquet")
    logs.append(read_joint_log(tmp_path / "log.parquet", robot=robot))
    for log in logs:
        assert log.joint_names == robot.q_names and log.time_source == "file"
        for key in ("q", "qd", "qdd", "tau"):
            np.testing.assert_array_equal(getattr(log, key), arrays[key])
        np.testing.assert_allclose(log.t, t - t[0], rtol=0, atol=1e-15)
    with pytest.raises(InputError, match="6 position columns q1..q6; robot 'planar2r' has n = 2"):
        read_joint_log(csv, robot=rd.load("planar2r"))
    bad = tmp_path / "bad.csv"
    bad.write_text("t,q1,tau1\n0,1,x\n")
    with pytest.raises(InputError, match=r"bad\.csv', line 2, column tau1: 'x' is not a number"):
        read_joint_log(bad)  # the message of the command line: 1-based line, the column's name
    bad.write_text("t,q1,speed1\n0,1,2\n")
    with pytest.raises(InputError, match=r"unknown column\(s\) speed1"):
        read_joint_log(bad)
    bad.write_text("t,q1\n0,1\n0,2\n")
    with pytest.raises(InputError, match="strictly increasing"):
        read_joint_log(bad)


def test_hdf5_by_joint_name(tmp_path, robot):
    h5py = pytest.importorskip("h5py")
    t, arrays = _table(robot.n, np.random.default_rng(7))
    perm = np.array([3, 0, 5, 1, 4, 2])
    with h5py.File(tmp_path / "log.h5", "w") as f:
        f["t"] = t
        for key, a in arrays.items():
            f[key] = a[:, perm]
        f.attrs["joint_names"] = [robot.q_names[k] for k in perm]
    log = read_joint_log(tmp_path / "log.h5", robot=robot)
    for key in ("q", "qd", "qdd", "tau"):
        np.testing.assert_array_equal(getattr(log, key), arrays[key])
    unordered = read_joint_log(tmp_path / "log.h5")
    assert unordered.joint_names == tuple(robot.q_names[k] for k in perm)
    with h5py.File(tmp_path / "short.h5", "w") as f:
        f["q"] = arrays["q"]
    with pytest.raises(InputError, match="no dataset t"):
        read_joint_log(tmp_path / "short.h5")


def test_a_missing_reader_names_the_extra(tmp_path):
    import subprocess
    import sys

    bag = write_bag(tmp_path / "x.bag", "ros1", ("a",), _samples(1, np.random.default_rng(8)))
    code = ("import sys; sys.modules['rosbags'] = None; sys.modules['h5py'] = None\n"  # this child process only
            "import robodyn as rd\n"
            f"for path in ({str(bag)!r}, {str(tmp_path / 'x.h5')!r}):\n"
            "    try:\n"
            "        rd.read_joint_log(path)\n"
            "    except rd.RobodynError as e:\n"
            "        print(e)\n")
    (tmp_path / "x.h5").write_bytes(b"")
    src = str(Path(rd.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.stdout.splitlines() == [
        "reading ros1 logs needs the package rosbags; install it with: pip install 'robodyn[ros]'",
        "reading hdf5 logs needs the package h5py; install it with: pip install 'robodyn[hdf5]'"], done.stderr


def test_inconsistent_messages_are_named(tmp_path):
    data = _samples(2, np.random.default_rng(9))
    sec, nsec, q, qd, tau = data
    ts = get_typestore(Stores.ROS2_HUMBLE)
    Msg, Header, Time = (ts.types[k] for k in (JS, "std_msgs/msg/Header", "builtin_interfaces/msg/Time"))

    def bag(name, messages):
        with Writer2(tmp_path / name, version=9, storage_plugin=StoragePlugin.MCAP) as w:
            c = w.add_connection("/joint_states", JS, typestore=ts)
            for i, m in enumerate(messages):
                w.write(c, i, ts.serialize_cdr(m, JS))
        return tmp_path / name

    def msg(i, effort=True, stamp=None, names=("a", "b")):
        s = Time(sec=int(sec[i]), nanosec=int(nsec[i])) if stamp is None else stamp
        return Msg(header=Header(stamp=s, frame_id=""), name=list(names), position=q[i, :len(names)],
                   velocity=np.zeros(0), effort=tau[i, :len(names)] if effort else np.zeros(0))

    with pytest.raises(InputError, match="message 1 has no effort values although others have"):
        read_joint_log(bag("e", [msg(0), msg(1, effort=False)]))
    same = Time(sec=5, nanosec=0)
    with pytest.raises(InputError, match="same time stamp 5000000000 ns"):
        read_joint_log(bag("d", [msg(0, stamp=same), msg(1, stamp=same)]))
    with pytest.raises(InputError, match=r"message 1 lacks joint\(s\) b of the first message \(it lists a, c\)"):
        read_joint_log(bag("o", [msg(0), msg(1, names=("a", "c"))]))
    with pytest.raises(InputError, match="message 0: a joint name appears twice"):
        read_joint_log(bag("t", [msg(0, names=("a", "a"))]))
    late = read_joint_log(bag("r", [msg(1), msg(0)]))  # recorded out of order: sorted by stamp
    np.testing.assert_array_equal(late.q, q[:2])


@pytest.mark.parametrize("dialect", ["tabs", "semicolons", "trailing separators", "spaces after commas"])
def test_csv_of_spreadsheets_and_loggers_reads_as_the_plain_one(tmp_path, robot, dialect):
    """Tab- or semicolon-separated cells (a header line without commas), a separator ending every line, spaces
    after the commas: the same numbers as the plain CSV, bit for bit."""
    t, arrays = _table(robot.n, np.random.default_rng(7))
    cols = _columns(t, arrays)
    lines = [list(cols)] + [[repr(float(cols[c][i])) for c in cols] for i in range(N)]
    sep, end = {"tabs": ("\t", ""), "semicolons": (";", ""), "trailing separators": (",", ","),
                "spaces after commas": (", ", "")}[dialect]
    path = tmp_path / "log.csv"
    path.write_text("\n".join(sep.join(cells) + end for cells in lines) + "\n")
    log = read_joint_log(path, robot=robot)
    for key in ("q", "qd", "qdd", "tau"):
        np.testing.assert_array_equal(getattr(log, key), arrays[key])


def test_csv_without_a_column_name_or_with_decimal_commas_is_refused_saying_why(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text(",t,q1,tau1\n0,0.0,1.0,2.0\n1,0.1,1.0,2.0\n")  # pandas' to_csv with its index
    with pytest.raises(InputError, match=r"column 1 has no name .*to_csv\(path, index=False\)"):
        read_joint_log(bad)
    bad.write_text("t;q1;tau1\n0,0;1,5;2,0\n")  # a spreadsheet's export where ',' is the decimal mark
    with pytest.raises(InputError, match=r"line 2, column t: '0,0' is not a number; write the decimal point as"):
        read_joint_log(bad)


def test_cli_identify_reads_a_bag_as_it_reads_the_csv(tmp_path, monkeypatch):
    """`robodyn identify ROBOT log.bag` (users issue §4): the bag's JointState efforts identify the same parameters
    as the same samples in the CSV layout."""
    import json

    from typer.testing import CliRunner

    from robodyn.cli import app

    monkeypatch.setattr(sys.modules[__name__], "N", 1500)
    robot = rd.load("planar2r").replace(Fc=[0.3, 0.2], Fv=[0.1, 0.05])
    t = np.arange(N) * 2e-3
    q = np.column_stack([np.sin(2 * np.pi * 0.5 * t) + 0.3 * np.sin(2 * np.pi * 1.3 * t),
                         0.8 * np.cos(2 * np.pi * 0.7 * t) + 0.2 * np.sin(2 * np.pi * 2.1 * t)])
    qd, qdd = np.gradient(q, t, axis=0), np.gradient(np.gradient(q, t, axis=0), t, axis=0)
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    ns = 1_700_000_000 * 10**9 + np.arange(N) * 2_000_000
    bag = write_bag(tmp_path / "run.bag", "ros1", robot.q_names, (ns // 10**9, ns % 10**9, q, qd, tau))
    csv_path = tmp_path / "run.csv"
    csv_path.write_text("t,q1,q2,tau1,tau2\n" + "".join(
        f"{float(ns[i] - ns[0]) / 1e9!r},{float(q[i, 0])!r},{float(q[i, 1])!r},{float(tau[i, 0])!r},"
        f"{float(tau[i, 1])!r}\n" for i in range(N)))
    model = tmp_path / "arm.yaml"
    rd.save(robot, model)
    runner = CliRunner()
    from_bag = runner.invoke(app, ["identify", str(model), str(bag), "--cutoff", "20", "--json"])
    from_csv = runner.invoke(app, ["identify", str(model), str(csv_path), "--cutoff", "20", "--json"])
    assert from_bag.exit_code == 0 and from_csv.exit_code == 0, from_bag.output + from_csv.output
    values = [np.array([p["value"] for p in json.loads(r.stdout)["parameters"]]) for r in (from_bag, from_csv)]
    np.testing.assert_allclose(values[0], values[1], rtol=1e-9, atol=1e-12)
    wrong = runner.invoke(app, ["identify", str(model), str(bag), "--topic", "/nothing"])
    assert wrong.exit_code == 2 and len(wrong.output.strip().splitlines()) == 1
