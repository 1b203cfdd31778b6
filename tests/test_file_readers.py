"""Every file robodyn reads goes through one bounded reader (issue 25, items 5, 7 and 11): closed-chain model
files and gravity calibrations through the hardened YAML loader of model files (size, depth, aliases, duplicate
keys, YAML 1.2 scalars, encoding), CSV files through the bounded reader (size checked before reading, no FIFO or
device, byte-order mark, over-long cells); every refusal one line, fast, never a hang."""

import os
import signal
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app
from robodyn.model import io as model_io
from tests.test_closed_chain import PARALLELOGRAM

runner = CliRunner()

BILLION_LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{x}: &{x} [{', '.join(['*' + p] * 9)}]\n" for p, x in zip("abcdefgh", "bcdefghi"))


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


@pytest.fixture
def time_limit():
    """A hang (a FIFO read without a writer, /dev/zero read without end) fails the test instead of the suite."""
    if not hasattr(signal, "SIGALRM"):
        pytest.skip("signal.alarm needs a POSIX system")
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.fixture(scope="module")
def calibration_text(tmp_path_factory):
    robot = rd.load("planar3r") if rd.load("planar3r").is_serial else rd.load("planar2r")
    q = rd.identification.calibration_poses(robot, 8, seed=0, unlimited=True)
    cal = rd.identification.calibrate_gravity(robot, q, rd.gravity_torques(robot, q))
    path = cal.save(tmp_path_factory.mktemp("cal") / "cal.yaml")
    return path.read_text(encoding="utf-8")


def _hostile_variants(text):
    """(label, bytes, message pattern): the same document made hostile in each way issue 25 lists."""
    first_key = text.lstrip().split(":", 1)[0]
    return [
        ("billion-laughs", (BILLION_LAUGHS + text).encode(), r"anchor '&a' not allowed"),
        ("duplicate-key", (text + f"\n{first_key}: 1\n").encode(), rf"duplicate key '{first_key}'"),
        ("latin-1", ("# réglé\n" + text).encode("latin-1"), r"not UTF-8 text \(byte \d+\)"),
        ("deep", (text + "\nextra: " + "[" * 5000 + "]" * 5000 + "\n").encode(), r"nested more than 8 levels|exceeded maximum nesting depth"),
        ("too-large", text.encode() + b"#" * model_io.MAX_FILE_BYTES, r"larger than 1000000 bytes"),
    ]


def _closed_chain_variants():
    return _hostile_variants(PARALLELOGRAM.lstrip())


@pytest.mark.parametrize("label, data, message", _closed_chain_variants(), ids=lambda x: x if isinstance(x, str) and len(x) < 20 else "")
def test_load_closed_chain_uses_the_hardened_reader(tmp_path, time_limit, label, data, message):
    path = tmp_path / f"{label}.yaml"
    path.write_bytes(data)
    start = time.perf_counter()
    with pytest.raises(rd.ModelFileError, match=message) as info:
        rd.closed_chain.load_closed_chain(path)
    assert time.perf_counter() - start < 1.0 and "\n" not in str(info.value)
    assert str(info.value).startswith(str(path))


def test_closed_chain_yes_no_stay_strings_and_a_good_file_loads(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text(PARALLELOGRAM)
    assert rd.closed_chain.load_closed_chain(good).active == (0, 1)
    yes = tmp_path / "yes.yaml"
    yes.write_text(PARALLELOGRAM.replace("active: [q1, q2]", "active: [yes, no]"))
    with pytest.raises(rd.ModelFileError, match="'yes' is not a joint of the tree"):  # not True / False
        rd.closed_chain.load_closed_chain(yes)
    with pytest.raises(rd.ModelFileError, match="no such model file"):
        rd.closed_chain.load_closed_chain(tmp_path / "missing.yaml")


@pytest.mark.parametrize("which", ["billion-laughs", "duplicate-key", "latin-1", "deep", "too-large"])
def test_load_gravity_calibration_uses_the_hardened_reader(tmp_path, time_limit, calibration_text, which):
    label, data, message = next(v for v in _hostile_variants(calibration_text) if v[0] == which)
    path = tmp_path / f"{label}.yaml"
    path.write_bytes(data)
    start = time.perf_counter()
    with pytest.raises(rd.InputError, match=message) as info:
        rd.identification.load_gravity_calibration(path)
    assert time.perf_counter() - start < 1.0 and "\n" not in str(info.value)


def test_gravity_calibration_yes_no_are_refused_not_true(tmp_path, calibration_text):
    good = tmp_path / "good.yaml"
    good.write_text(calibration_text)
    assert rd.identification.load_gravity_calibration(good).estimate_offsets is False
    for old, new, message in [
        ("estimate_offsets: false", "estimate_offsets: no", "field 'estimate_offsets' = 'no' must be true or false"),
        ("identifiable:\n- [true,", "identifiable:\n- [yes,", "field 'identifiable' must hold true/false"),
    ]:
        assert old in calibration_text, old
        bad = tmp_path / "bad.yaml"
        bad.write_text(calibration_text.replace(old, new, 1))
        with pytest.raises(rd.InputError, match=message):
            rd.identification.load_gravity_calibration(bad)


@pytest.mark.parametrize("load", [rd.closed_chain.load_closed_chain, rd.identification.load_gravity_calibration, rd.load, rd.from_urdf])
def test_fifos_and_devices_are_refused_at_once(tmp_path, time_limit, load):
    targets = ["/dev/zero"] if os.path.exists("/dev/zero") else []
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "pipe.yaml"
        os.mkfifo(fifo)
        targets.append(str(fifo))
    if not targets:
        pytest.skip("no FIFO or device on this system")
    for target in targets:
        start = time.perf_counter()
        with pytest.raises(rd.RobodynError, match="not a regular file"):
            load(target)
        assert time.perf_counter() - start < 1.0


# ---- CSV files (--states, measurements, logs) -------------------------------------------------------------

HEADER = "q1,q2,qd1,qd2,qdd1,qdd2\n"


def _states(tmp_path, data: bytes, name="states.csv"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_csv_with_a_byte_order_mark_is_read(tmp_path):
    path = _states(tmp_path, b"\xef\xbb\xbf" + (HEADER + "0.1,0.2,0,0,0,0\n").encode())
    result = runner.invoke(app, ["id", "planar2r", "--states", str(path), "--json"])
    assert result.exit_code == 0, result.output
    expected = rd.inverse_dynamics(rd.load("planar2r"), [0.1, 0.2], [0, 0], [0, 0])
    assert "missing" not in result.output and np.isclose(float(result.output.split("[")[2].split(",")[0]),
                                                          expected[0], rtol=1e-12)


def _one_line_exit_2(result, pattern):
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and "Traceback" not in result.output
    assert pattern in result.output, result.output


def test_csv_cell_over_the_field_limit_is_one_line(tmp_path):
    path = _states(tmp_path, (HEADER + "1" * 200_000 + ",0,0,0,0,0\n").encode())
    _one_line_exit_2(runner.invoke(app, ["id", "planar2r", "--states", str(path)]),
                     "line 2: not a readable CSV file (field larger than field limit")


def test_csv_fifo_dev_zero_and_folder_are_refused_without_hanging(tmp_path, time_limit):
    targets = ["/dev/zero"] if os.path.exists("/dev/zero") else []
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "pipe.csv")
        targets.append(str(tmp_path / "pipe.csv"))
    for target in targets:
        _one_line_exit_2(runner.invoke(app, ["id", "planar2r", "--states", target]), "not a regular file")
    _one_line_exit_2(runner.invoke(app, ["id", "planar2r", "--states", str(tmp_path)]), "is a folder")


def test_csv_size_is_checked_before_reading(tmp_path, time_limit):
    from robodyn.cli._common import MAX_CSV_BYTES

    path = tmp_path / "huge.csv"
    with open(path, "wb") as fh:
        fh.write(HEADER.encode())
        fh.truncate(MAX_CSV_BYTES + 1)  # sparse: refused from its size, never read
    start = time.perf_counter()
    _one_line_exit_2(runner.invoke(app, ["id", "planar2r", "--states", str(path)]), f"larger than {MAX_CSV_BYTES} bytes")
    assert time.perf_counter() - start < 2.0


# ---- fuzz: every reader answers with a robodyn error or a result, in bounded time -------------------------

FUZZ = settings(max_examples=500 if os.environ.get("CI") else 80, derandomize=True, database=None, deadline=None,
                suppress_health_check=list(HealthCheck))
TOKENS = ["&a", "*a", "<<: *a", "yes", "no", "1:30", "010", ".nan", "-.inf", "1e999", "!!python/object:os.system",
          "[" * 50, "{", "}", "\t", "\x00", "\ufeff", "é", "- ", ": ", "'", '"', "\n", "#", ",", "0x1F", "~"]


def _mutated(draw, text):
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:i] + draw(st.one_of(st.sampled_from(TOKENS), st.text(max_size=6))) + text[i:]
        else:
            text = text[:i] + text[i + draw(st.integers(1, 40)):]
    return text


@FUZZ
@given(data=st.data())
def test_fuzzed_closed_chain_files_load_or_raise_model_file_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("cc") / "chain.yaml"
    path.write_bytes(_mutated(data.draw, PARALLELOGRAM).encode("utf-8", "surrogatepass"))
    start = time.perf_counter()
    try:
        rd.closed_chain.load_closed_chain(path)
    except rd.RobodynError as exc:
        assert "\n" not in str(exc)
    assert time.perf_counter() - start < 5


@FUZZ
@given(data=st.data())
def test_fuzzed_csv_states_give_a_result_or_one_line(tmp_path_factory, data):
    rows = HEADER + "0.1,0.2,0,0,0,0\n0.3,0.4,1,1,1,1\n"
    path = tmp_path_factory.mktemp("csv") / "states.csv"
    path.write_bytes(_mutated(data.draw, rows).encode("utf-8", "surrogatepass"))
    result = runner.invoke(app, ["id", "planar2r", "--states", str(path)])
    assert result.exit_code in (0, 2) and "Traceback" not in result.output, result.output
    if result.exit_code == 2:
        assert result.output.count("\n") == 1
