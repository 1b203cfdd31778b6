"""rd.read_joint_log on logs written by foreign tools: bags whose stamps go back (two runs, a restart, an
unsynchronised clock), HDF5 files from MATLAB or with odd shapes, empty tables, times in nanoseconds, CSV files
with blank lines, zero-based column names, exotic digits or old Mac line endings."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from robodyn.errors import InputError
from robodyn.logs import read_joint_log

JS = "sensor_msgs/msg/JointState"
START = 1_700_000_000 * 10**9
STEP = 5_000_000  # 200 Hz


@pytest.fixture(scope="module")
def robot():
    return rd.load("planar2r")


def _q(n: int, count: int) -> np.ndarray:
    return np.column_stack([np.sin(0.01 * np.arange(count) + k) for k in range(n)])


def _stamp_bag(path, kind: str, stamps, names=("j1", "j2")):
    """A bag whose messages are recorded in the order given (record times 1000, 1001, ...), each with the header
    stamp ``stamps[i]`` (ns) and the positions _q(n, N)[i]: stamps may go back, as after a restart."""
    pytest.importorskip("rosbags")
    from rosbags.rosbag1 import Writer as Writer1
    from rosbags.rosbag2 import StoragePlugin, Writer as Writer2
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS1_NOETIC if kind == "ros1" else Stores.ROS2_HUMBLE)
    Msg, Header, Time = (store.types[k] for k in (JS, "std_msgs/msg/Header", "builtin_interfaces/msg/Time"))
    q = _q(len(names), len(stamps))
    raws = []
    for i, ns in enumerate(int(x) for x in stamps):
        stamp = Time(sec=ns // 10**9, nanosec=ns % 10**9)
        header = Header(seq=i, stamp=stamp, frame_id="") if kind == "ros1" else Header(stamp=stamp, frame_id="")
        msg = Msg(header=header, name=list(names), position=q[i], velocity=np.zeros(0), effort=q[i] * 2)
        raws.append((store.serialize_ros1 if kind == "ros1" else store.serialize_cdr)(msg, JS))
    if kind == "ros1":
        with Writer1(path) as w:
            c = w.add_connection("/joint_states", JS, typestore=store)
            for i, raw in enumerate(raws):
                w.write(c, 1000 + i, raw)
        return path
    plugin = StoragePlugin.SQLITE3 if kind == "sqlite3" else StoragePlugin.MCAP
    with Writer2(path, version=9, storage_plugin=plugin) as w:
        c = w.add_connection("/joint_states", JS, typestore=store)
        for i, raw in enumerate(raws):
            w.write(c, 1000 + i, raw)
    return path


def _bag_path(tmp_path, kind):
    return tmp_path / ("log.bag" if kind == "ros1" else "log")


# ---- 1. bags whose stamps go back ----

@pytest.mark.parametrize("kind", ["ros1", "sqlite3", "mcap"])
def test_bag_whose_stamps_go_back_is_refused_at_the_message(tmp_path, kind):
    """Two runs in one bag (the second stamped 3.0025 s earlier): not interleaved by stamp into one log whose q
    jumps, but refused naming the message in recording order and the step back."""
    stamps = START + STEP * np.arange(1000, dtype=np.int64)
    stamps[700:] -= 3_002_500_000
    bag = _stamp_bag(_bag_path(tmp_path, kind), kind, stamps)
    with pytest.raises(InputError, match=r"stamps .*go back by 2\.9975 s at message 700 .*split") as err:
        read_joint_log(bag)
    assert "duplicate" not in str(err.value)


def test_bag_restart_onto_the_same_stamps_is_a_jump_not_a_duplicate(tmp_path):
    """A restart by exactly 300 steps makes stamps equal to earlier ones: the message says that the stamps go back,
    not 'remove the duplicate'."""
    stamps = START + STEP * np.arange(400, dtype=np.int64)
    stamps[350:] -= 300 * STEP
    with pytest.raises(InputError, match=r"go back by 1\.495 s at message 350 ") as err:
        read_joint_log(_stamp_bag(tmp_path / "r", "mcap", stamps))
    assert "same time stamp" not in str(err.value) and "duplicate" not in str(err.value)


def test_bag_with_leading_unstamped_messages_says_so(tmp_path):
    stamps = START + STEP * np.arange(60, dtype=np.int64)
    stamps[:25] = 0  # the driver published before its clock was synchronised
    with pytest.raises(InputError, match=r"first 25 of 60 messages .* unstamped \(header stamp 0") as err:
        read_joint_log(_stamp_bag(tmp_path / "z", "mcap", stamps))
    assert "duplicate" not in str(err.value)
    stamps[[3, 40]] = 0
    stamps[:3] = START - STEP * np.arange(3, 0, -1)
    stamps[4:25] = START + STEP * np.arange(4, 25)  # two scattered unstamped messages
    with pytest.raises(InputError, match=r"2 of 60 messages .* unstamped \(header stamp 0.*first at message 3"):
        read_joint_log(_stamp_bag(tmp_path / "z2", "mcap", stamps))


def test_bag_true_duplicates_and_late_messages_keep_their_behaviour(tmp_path):
    stamps = START + STEP * np.arange(50, dtype=np.int64)
    stamps[[20, 21]] = stamps[[21, 20]]  # one message recorded late: put in stamp order
    log = read_joint_log(_stamp_bag(tmp_path / "late", "mcap", stamps))
    q = _q(2, 50)
    np.testing.assert_array_equal(log.q, q[[*range(20), 21, 20, *range(22, 50)]])
    np.testing.assert_allclose(log.t, STEP * 1e-9 * np.arange(50), rtol=0, atol=1e-15)
    stamps[[20, 21]] = stamps[[21, 20]]
    stamps[31] = stamps[30]  # the same sample published twice
    with pytest.raises(InputError, match=r"same time stamp .*messages 30 and 31.*remove the duplicate"):
        read_joint_log(_stamp_bag(tmp_path / "dup", "mcap", stamps))
    all_zero = np.zeros(10, dtype=np.int64)  # documented: every stamp 0 -> the record times
    log = read_joint_log(_stamp_bag(tmp_path / "zero", "mcap", all_zero))
    assert log.time_source == "receive" and log.samples == 10


# ---- HDF5 ----

def _h5(path, **datasets):
    h5py = pytest.importorskip("h5py")
    attrs = datasets.pop("attrs", {})
    with h5py.File(path, "w") as f:
        for k, v in datasets.items():
            f[k] = v
        for k, v in attrs.items():
            f.attrs[k] = v
    return path


def test_hdf5_joint_name_listed_twice_is_refused(tmp_path, robot):
    """Bug 2: names.index took the first of two columns called j1 silently."""
    t, q = 0.01 * np.arange(5), np.column_stack([np.full(5, 5.0), _q(2, 5)])
    path = _h5(tmp_path / "dup.h5", t=t, q=q, attrs={"joint_names": ["j1", "j1", "j2"]})
    for r in (robot, None):
        with pytest.raises(InputError, match=r"joint_names lists 'j1' twice"):
            read_joint_log(path, robot=r)


def test_empty_tables_and_scalar_t_are_refused(tmp_path):
    """Bug 3: IndexError before."""
    with pytest.raises(InputError, match="no data rows"):
        read_joint_log(_h5(tmp_path / "e.h5", t=np.zeros(0), q=np.zeros((0, 2))))
    with pytest.raises(InputError, match=r"dataset t is a single number.*t must be a column of times"):
        read_joint_log(_h5(tmp_path / "s.h5", t=np.float64(1.0), q=np.zeros((1, 2))))
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    empty = {"t": pa.array([], pa.float64()), "q1": pa.array([], pa.float64())}
    pq.write_table(pa.table(empty), tmp_path / "e.parquet")
    with pytest.raises(InputError, match="no data rows"):
        read_joint_log(tmp_path / "e.parquet")


def test_huge_or_nanosecond_times_are_refused(tmp_path):
    """Bug 4: OverflowError for 1e300 s; epoch nanoseconds read as seconds gave a nonsense start_ns."""
    q = _q(2, 4)
    with pytest.raises(InputError, match=r"t runs from 1e\+300 to 4e\+300 s"):
        read_joint_log(_h5(tmp_path / "huge.h5", t=1e300 * np.arange(1, 5), q=q))
    ns = START + STEP * np.arange(4, dtype=np.int64)
    with pytest.raises(InputError, match=r"t runs from 1\.7e\+18 .*if t is in nanoseconds, give t / 1e9"):
        read_joint_log(_h5(tmp_path / "ns.h5", t=ns, q=q))
    csv = tmp_path / "ns.csv"
    csv.write_text("t,q1\n" + "".join(f"{x},0.5\n" for x in ns))
    with pytest.raises(InputError, match=r"if t is in nanoseconds, give t / 1e9"):
        read_joint_log(csv)
    log = read_joint_log(_h5(tmp_path / "epoch.h5", t=ns * 1e-9, q=q))  # epoch seconds still read
    assert abs(log.start_ns - START) < 1000


def test_matlab_shapes(tmp_path, robot):
    """Bug 5: t (N, 1) or (1, N) is one column of times; q (n, N) gets a hint that it is transposed."""
    t, q = 0.01 * np.arange(50), _q(2, 50)
    for shape in ((50, 1), (1, 50)):
        log = read_joint_log(_h5(tmp_path / "col.h5", t=t.reshape(shape), q=q, tau=2 * q), robot=robot)
        np.testing.assert_array_equal(log.q, q)
        np.testing.assert_allclose(log.t, t, rtol=0, atol=1e-15)
    path = _h5(tmp_path / "T.h5", t=t[:, None], q=q.T, tau=2 * q.T)
    with pytest.raises(InputError, match=r"q has 50 columns; .*\(transposed\? q is \(N, n\): one row per sample\)"):
        read_joint_log(path, robot=robot)
    with pytest.raises(InputError, match=r"transposed\? q is \(N, n\): one row per sample"):
        read_joint_log(path)
    with pytest.raises(InputError, match=r"dataset t has shape \(50, 2\); t must be a column of times"):
        read_joint_log(_h5(tmp_path / "t2.h5", t=np.zeros((50, 2)), q=q))


# ---- CSV ----

def _csv_text(names, rows) -> str:
    return ",".join(names) + "\n" + "".join(",".join(repr(float(x)) for x in r) + "\n" for r in rows)


def test_csv_blank_lines_before_the_header_are_skipped(tmp_path):
    t, q = 0.01 * np.arange(5), _q(2, 5)
    path = tmp_path / "b.csv"
    path.write_text("\n \n\n" + _csv_text(["t", "q1", "q2"], np.column_stack([t, q])))
    np.testing.assert_array_equal(read_joint_log(path).q, q)


def test_csv_zero_based_columns_say_so(tmp_path, robot):
    from typer.testing import CliRunner

    from robodyn.cli import app

    t, q = 0.01 * np.arange(5), _q(2, 5)
    path = tmp_path / "z.csv"
    path.write_text(_csv_text(["t", "q0", "q1", "tau0", "tau1"], np.column_stack([t, q, q])))
    for r in (None, robot):
        with pytest.raises(InputError, match=r"columns are numbered from q0; number them q1\.\.q2"):
            read_joint_log(path, robot=r)
    res = CliRunner().invoke(app, ["identify", "planar2r", str(path)])
    assert res.exit_code == 2 and "columns are numbered from q0; number them q1..q2" in res.output, res.output


@pytest.mark.parametrize("cell", ["1_0", "\uff11\uff12", "\u0661"])
def test_csv_cells_that_are_not_plain_decimal_numbers_are_refused(tmp_path, cell):
    path = tmp_path / "c.csv"
    path.write_text(f"t,q1\n0,1.5\n0.01,{cell}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 3, column q1: .* is not a plain decimal number"):
        read_joint_log(path)


def test_csv_plain_numbers_and_non_finite_words_keep_their_handling(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("t,q1\n+0,-1.5e-3\n 1E+2 ,.5\n101.,+2\n")
    log = read_joint_log(path)
    np.testing.assert_array_equal(log.q[:, 0], [-1.5e-3, 0.5, 2.0])
    np.testing.assert_array_equal(log.t, [0.0, 100.0, 101.0])
    path.write_text("t,q1\n0,1\n1,Infinity\n")
    with pytest.raises(InputError, match="line 3, column q1: Infinity is not finite"):
        read_joint_log(path)


def test_csv_with_cr_line_endings_reads_as_lf(tmp_path):
    t, q = 0.01 * np.arange(5), _q(2, 5)
    text = _csv_text(["t", "q1", "q2"], np.column_stack([t, q]))
    path = tmp_path / "mac.csv"
    path.write_bytes(text.replace("\n", "\r").encode())
    np.testing.assert_array_equal(read_joint_log(path).q, q)
    path.write_bytes(text.replace("\n", "\r").replace(",", "\t").encode())
    np.testing.assert_array_equal(read_joint_log(path).q, q)
    path.write_bytes(b"t,q1\r0,1\r0.1,x\r")
    with pytest.raises(InputError, match=r"line 3, column q1: 'x' is not a number"):
        read_joint_log(path)


def test_non_increasing_t_names_the_row(tmp_path):
    """Bug 7: the row where t stops increasing, 0-based as prepare_identification_data says."""
    path = tmp_path / "n.csv"
    path.write_text("t,q1\n0,1\n0.1,1\n0.2,1\n0.15,1\n0.3,1\n")
    with pytest.raises(InputError, match=r"strictly increasing.*row 3 \(0-based\).*goes back by 0\.05 s"):
        read_joint_log(path)
    path.write_text("t,q1\n0,1\n0.1,1\n0.1,1\n")
    with pytest.raises(InputError, match=r"strictly increasing.*row 2 \(0-based\).*repeats"):
        read_joint_log(path)


# ---- 5. a part of a log: span ----

@pytest.mark.parametrize("kind", ["ros1", "mcap"])
def test_span_reads_each_run_of_a_bag_that_holds_two(tmp_path, kind):
    """The error about stamps that go back names the spans that read each run; read so, each run is the bag's
    messages before and after it, its own time from 0 (the messages outside a span are not decoded)."""
    stamps = START + STEP * np.arange(1000, dtype=np.int64)
    stamps[700:] -= 3_002_500_000
    bag = _stamp_bag(_bag_path(tmp_path, kind), kind, stamps)
    with pytest.raises(InputError, match=r"span=\(None, 700\) and span=\(700, None\) \(robodyn identify --span :700"):
        read_joint_log(bag)
    with pytest.raises(InputError, match=r"at message 700 .*span=\(100, 700\) and span=\(700, None\) "
                                         r"\(robodyn identify --span 100:700"):
        read_joint_log(bag, span=(100, None))  # the hint keeps the span's start
    q = _q(2, 1000)
    first, second = read_joint_log(bag, span=(None, 700)), read_joint_log(bag, span=(700, None))
    np.testing.assert_array_equal(first.q, q[:700])
    np.testing.assert_array_equal(second.q, q[700:])
    np.testing.assert_allclose(second.t, STEP * 1e-9 * np.arange(300), rtol=0, atol=1e-15)
    assert second.start_ns == stamps[700]
    middle = read_joint_log(bag, span=[100, 200])
    np.testing.assert_array_equal(middle.tau, 2 * q[100:200])


def test_span_numbers_messages_and_rows_in_the_whole_log(tmp_path):
    """Errors within a span name the message (bag) or row (table) of the whole log, so that a fix found in a
    part applies to the file."""
    stamps = START + STEP * np.arange(60, dtype=np.int64)
    stamps[[30, 31]] = stamps[30]  # a duplicate inside the span
    bag = _stamp_bag(tmp_path / "d", "mcap", stamps)
    with pytest.raises(InputError, match="messages 30 and 31"):
        read_joint_log(bag, span=(20, 40))
    stamps[:25] = 0
    stamps[[30, 31]] = START + STEP * np.array([30, 31])
    bag = _stamp_bag(tmp_path / "z", "mcap", stamps)
    with pytest.raises(InputError, match=r"first 5 of 40 messages .* read the messages from 25 on: span=\(25, None\)"):
        read_joint_log(bag, span=(20, None))
    assert read_joint_log(bag, span=(25, None)).samples == 35
    csv = tmp_path / "log.csv"
    t = np.arange(40) * 0.01
    t[30] = t[29]
    np.savetxt(csv, np.column_stack([t, _q(2, 40)]), delimiter=",", header="t,q1,q2", comments="")
    with pytest.raises(InputError, match=r"row 30 \(0-based\) repeats"):
        read_joint_log(csv, span=(10, 35))
    log = read_joint_log(csv, span=(None, 30))
    np.testing.assert_array_equal(log.q, _q(2, 40)[:30])


@pytest.mark.parametrize("span, match", [
    ((5, 3), r"span = \(5, 3\) holds no message or row; give stop > start"),
    ((-1, 3), r"span = \(-1, 3\); give \(start, stop\)"),
    ("0:3", r"span = '0:3'; give \(start, stop\)"),
    ((1.5, 3), r"give \(start, stop\)"),
    ((True, 3), r"give \(start, stop\)"),
    ((50, None), r"span \(50, None\) holds none of its 40 rows; give a span within 0\.\.40"),
])
def test_span_errors(tmp_path, span, match):
    csv = tmp_path / "log.csv"
    np.savetxt(csv, np.column_stack([np.arange(40) * 0.01, _q(2, 40)]), delimiter=",", header="t,q1,q2",
               comments="")
    with pytest.raises(InputError, match=match):
        read_joint_log(csv, span=span)


def test_span_of_an_hdf5_log(tmp_path):
    h5py = pytest.importorskip("h5py")
    path = tmp_path / "log.h5"
    with h5py.File(path, "w") as f:
        f["t"] = np.arange(50) * 0.01
        f["q"] = _q(2, 50)
    log = read_joint_log(path, span=(10, 20))
    np.testing.assert_array_equal(log.q, _q(2, 50)[10:20])
    np.testing.assert_allclose(log.t, np.arange(10) * 0.01, rtol=0, atol=1e-15)


def test_identify_span_option(tmp_path):
    """`robodyn identify --span`: the part of a joint log the fit reads (here an HDF5 log holding two recordings,
    refused whole with the spans that read each), and the data rows of a CSV of the command's own format, with
    --validate-span for the held-out part of the same file."""
    h5py = pytest.importorskip("h5py")
    import json

    from typer.testing import CliRunner

    from robodyn.cli import app

    robot = rd.load("rx90")
    N = 3000
    t = np.arange(N) * 0.01
    w = 0.4 + 0.13 * np.arange(robot.n)
    phase = np.outer(t, w) + np.arange(robot.n)
    q, qd, qdd = 1.2 * np.sin(phase), 1.2 * w * np.cos(phase), -1.2 * w ** 2 * np.sin(phase)
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    t[2000:] -= 25.0  # a second recording appended
    path = tmp_path / "two.h5"
    with h5py.File(path, "w") as f:
        f["t"], f["q"], f["tau"] = t, q, tau
    runner = CliRunner()
    whole = runner.invoke(app, ["identify", "rx90", str(path)])
    assert whole.exit_code == 2 and "--span :2000" in whole.output
    res = runner.invoke(app, ["identify", "rx90", str(path), "--span", ":2000", "--method", "ols", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["samples_used"] < 2000
    bad = runner.invoke(app, ["identify", "rx90", str(path), "--span", "2000"])
    assert bad.exit_code == 2 and "--span '2000': give START:STOP" in bad.output
    csv = tmp_path / "own.csv"
    np.savetxt(csv, np.column_stack([t[:2000], q[:2000], tau[:2000]]), delimiter=",", comments="",
               header=",".join(["t"] + [f"q{j + 1}" for j in range(6)] + [f"tau{j + 1}" for j in range(6)]))
    # a CSV's data rows: fit on the first 1400, score the last 600 of the same file
    split = runner.invoke(app, ["identify", "rx90", str(csv), "--span", ":1400", "--method", "ols", "--json",
                                "--validate", str(csv), "--validate-span", "1400:"])
    assert split.exit_code == 0, split.output
    out = json.loads(split.stdout)
    assert out["samples_used"] < 1400 and out["validation"]["samples"][0] < 600
    # noise-free data: what is left is the filter's and the differences' error on the prepared states (0.03-0.3 %)
    assert max(out["validation"]["relative_rms_percent"]) < 1.0
    beyond = runner.invoke(app, ["identify", "rx90", str(csv), "--span", "2000:"])
    assert beyond.exit_code == 2 and "--span 2000: holds none of its 2000 data rows" in beyond.output
    bad = runner.invoke(app, ["identify", "rx90", str(csv), "--validate", str(csv), "--validate-span", "x"])
    assert bad.exit_code == 2 and "--validate-span 'x': give START:STOP" in bad.output
