"""Hostile arguments and files beyond the logs: each gives one RobodynError naming the cause, never a raw
ValueError, OverflowError, LinAlgError, a NaN result, or minutes of work.

CSV headers naming a column twice, distributed identification on non-finite or mismatched samples, preparation of
identification data at absurd time scales and cut-offs, transmission files of thousands of ratios or booleans,
animations of 1e308 s.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import robodyn as rd
from robodyn.dynamics.transmission import Transmission, load_transmission
from robodyn.errors import InputError, ModelError, ModelFileError, RobodynError
from robodyn.identification.data import prepare_identification_data


# ---- CSV and Parquet headers ----

def test_a_csv_header_naming_a_column_twice_is_refused(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("t,q1,q1\n0,1,2\n1,3,4\n")
    with pytest.raises(InputError, match="column 'q1' appears twice"):
        rd.read_joint_log(path)


def test_a_parquet_file_naming_a_column_twice_is_refused(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    table = pa.Table.from_arrays([pa.array([0.0, 1.0]), pa.array([1.0, 2.0]), pa.array([3.0, 4.0])],
                                 names=["t", "q1", "q1"])
    pq.write_table(table, tmp_path / "log.parquet")
    with pytest.raises(InputError, match="column 'q1' appears twice"):
        rd.read_joint_log(tmp_path / "log.parquet")


# ---- distributed identification ----

def _samples(N=60, n=2, seed=3):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(N, n)) for _ in range(4)]


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("k", [0, 3])
def test_distributed_identification_refuses_non_finite_samples(bad, k):
    pytest.importorskip("dask")
    from robodyn.distributed import identify

    arrays = _samples()
    arrays[k][17, 1] = bad
    name = ("q", "qd", "qdd", "tau")[k]
    with pytest.raises(InputError, match=f"{name} holds values that are not finite \\(NaN or inf; 1 in one chunk"):
        identify(rd.load("planar2r"), *arrays, chunk=16)


def test_distributed_identification_refuses_other_row_counts_and_types():
    pytest.importorskip("dask")
    from robodyn.distributed import identify

    q, qd, qdd, tau = _samples()
    with pytest.raises(InputError, match="60, 60, 60, 59 rows"):
        identify(rd.load("planar2r"), q, qd, qdd, tau[:59])
    with pytest.raises(InputError, match="qd holds <U3 values"):
        identify(rd.load("planar2r"), q, np.full(q.shape, "1.0"), qdd, tau)
    with pytest.raises(InputError, match="q holds bool values"):
        identify(rd.load("planar2r"), q > 0, qd, qdd, tau)


def test_distributed_samples_refuse_groups_text_and_string_columns(tmp_path):
    pytest.importorskip("dask")
    h5py = pytest.importorskip("h5py")
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from robodyn.distributed import read_samples

    robot = rd.load("planar2r")
    with h5py.File(tmp_path / "group.h5", "w") as f:
        f.create_group("q")
        for k in ("qd", "qdd", "tau"):
            f[k] = np.zeros((3, 2))
    with pytest.raises(InputError, match="q is a group, not a dataset"):
        read_samples(tmp_path / "group.h5", robot)
    with h5py.File(tmp_path / "text.h5", "w") as f:
        f["q"] = np.array([[b"1", b"2"]] * 3)
        for k in ("qd", "qdd", "tau"):
            f[k] = np.zeros((3, 2))
    with pytest.raises(InputError, match="q holds text, not numbers"):
        read_samples(tmp_path / "text.h5", robot)
    cols = {f"{p}{k}": pa.array([0.0, 1.0]) for p in ("q", "qd", "qdd", "tau") for k in (1, 2)}
    cols["tau2"] = pa.array(["0.5", "1.5"])
    pq.write_table(pa.table(cols), tmp_path / "text.parquet")
    with pytest.raises(InputError, match="column 'tau2' holds string, not numbers"):
        read_samples(tmp_path / "text.parquet", robot)


# ---- preparation of identification data ----

def _record(N=400, h=0.01):
    t = np.arange(N) * h
    q = np.column_stack([np.sin(2 * t), np.cos(3 * t)])
    return t, q, 2 * q


@pytest.mark.parametrize("cutoff", [1e-30, 1e-300, 5e-324, 0.1])
def test_a_cutoff_below_what_the_record_resolves_is_refused(cutoff):
    t, q, tau = _record()
    with pytest.raises(InputError, match="1 / the duration of the record"):
        prepare_identification_data(t, q, tau, cutoff=cutoff, trim=False)


@pytest.mark.parametrize("times", [lambda t: t * 1e300, lambda t: t * 1e-300, lambda t: 1e300 + t * 1e290,
                                   lambda t: 1e300 + t])
def test_absurd_time_scales_are_refused(times):
    t, q, tau = _record()
    with pytest.raises(InputError, match="give times"):
        prepare_identification_data(times(t), q, tau)


@pytest.mark.parametrize("which", ["q", "tau"])
def test_values_that_overflow_the_filter_are_refused_not_nan(which):
    t, q, tau = _record()
    q, tau = (q * 1e308, tau) if which == "q" else (q, q * 1e308)
    with pytest.raises(InputError, match=f"overflow: {which} is not finite \\(\\|{which}\\| up to 1e\\+308"):
        prepare_identification_data(t, q, tau, cutoff=5.0)


def test_unix_time_stamps_still_prepare():
    t, q, tau = _record(N=3000, h=0.001)
    d = prepare_identification_data(1.7e9 + t, q, tau, cutoff=5.0)
    assert np.isfinite(d.qdd).all() and d.q.shape[1] == 2


def test_cli_identify_with_a_tiny_cutoff_is_one_line(tmp_path):
    from typer.testing import CliRunner

    from robodyn.cli import app

    t, q, tau = _record(N=2000, h=0.001)
    path = tmp_path / "m.csv"
    np.savetxt(path, np.column_stack([t, q, tau]), delimiter=",", header="t,q1,q2,tau1,tau2", comments="")
    result = CliRunner().invoke(app, ["identify", "planar2r", str(path), "--cutoff", "1e-30"])
    assert result.exit_code == 2
    assert "1 / the duration of the record" in result.output and "Traceback" not in result.output


# ---- transmission files ----

def test_thousands_of_gear_ratios_are_refused_at_once(tmp_path):
    path = tmp_path / "tr.yaml"
    path.write_text("gear_ratios: [" + ",".join(["2"] * 6000) + "]\n")
    assert path.stat().st_size < 13_000
    start = time.monotonic()
    with pytest.raises(ModelFileError, match="6000 entries; a transmission has at most 1000 motors"):
        load_transmission(path)
    assert time.monotonic() - start < 30  # the invertibility check of a 6000 x 6000 matrix took minutes


@pytest.mark.parametrize("text, match", [
    ("gear_ratios: [100, true]\n", "gear_ratios holds a boolean"),
    ("gear_ratios: [yes, 100]\n", "gear_ratios (holds a boolean|must hold numbers)"),
    ("gear_ratios: [100, 100]\ndrive_gains: [on, 1]\n", "drive_gains (holds a boolean|must hold numbers)"),
    ("motor_matrix: [[1, 0], [0, true]]\n", "motor_matrix holds a boolean"),
    ("gear_ratios: [100, 100]\ncoupling: [{motor: true, joint: 2, value: 3}]\n", "motor True"),
    ("gear_ratios: [100, 100]\ncoupling: [{motor: 2, joint: yes, value: 3}]\n", "joint (True|'yes')"),
])
def test_booleans_are_not_ratios_or_motor_numbers(tmp_path, text, match):
    path = tmp_path / "tr.yaml"
    path.write_text(text)
    with pytest.raises(ModelFileError, match=match):
        load_transmission(path, 2)


@pytest.mark.parametrize("N", [["a", "b"], [100, None], [True, 2.0], "100"])
def test_gears_need_numbers(N):
    with pytest.raises(RobodynError, match="'N'|N ="):
        Transmission.gears(N)


# ---- animations ----

@pytest.mark.parametrize("t, fps, match", [([0.0, 1e308], 25.0, "inf frames"), ([0.0, 1.0], 1e-300, "'fps'"),
                                           ([0.0, 1e300], 1e-3, "'fps'"), ([0.0, 1.0], float("nan"), "'fps'"),
                                           ([0.0, 1.0], "25", "'fps'")])
def test_animate_refuses_unbounded_frame_counts(tmp_path, t, fps, match):
    with pytest.raises(InputError, match=match):
        rd.animate(rd.load("planar2r"), t, np.zeros((2, 2)), tmp_path / "a.gif", fps=fps)
    assert list(tmp_path.iterdir()) == []


def test_transmission_errors_are_model_errors():
    with pytest.raises(ModelError):
        Transmission.gears([0.0, 1.0])
