"""`robodyn calibrate-gravity` reads recordings (users issue §4): ROS bags, HDF5, Parquet and CSV logs give one static
pose per standstill segment (robodyn.logs.standstill_poses), the same numbers as the same poses in the CSV of
static poses."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app
from robodyn.errors import InputError
from robodyn.identification.gravity import calibrate_gravity, calibration_poses, first_moments
from robodyn.logs import standstill_poses
from tests.support.joint_bags import write_joint_bag

RATE = 100.0  # Hz
HOLD, MOVE = 1.0, 0.6  # s at each pose, s between poses


@pytest.fixture(scope="module")
def robot():
    return rd.load("rx90")


def _recording(robot, poses, noise=0.0, seed=0):
    """Holds at ``poses`` joined by rest-to-rest quintics: t, q, qd, tau (efforts: inverse dynamics + noise)."""
    from robodyn.control import QuinticReference

    t_all, q_all, qd_all, qdd_all = [], [], [], []
    t0 = 0.0
    hold = np.arange(int(HOLD * RATE)) / RATE
    move = np.arange(1, int(MOVE * RATE)) / RATE
    for k, pose in enumerate(poses):
        t_all.append(t0 + hold)
        q_all.append(np.tile(pose, (hold.size, 1)))
        qd_all.append(np.zeros((hold.size, robot.n)))
        qdd_all.append(np.zeros((hold.size, robot.n)))
        t0 += HOLD
        if k + 1 < len(poses):
            q, qd, qdd = QuinticReference(pose, poses[k + 1], MOVE).sample(move)
            t_all.append(t0 + move)
            q_all.append(q)
            qd_all.append(qd)
            qdd_all.append(qdd)
            t0 += MOVE
    t, q, qd, qdd = (np.concatenate(a) for a in (t_all, q_all, qd_all, qdd_all))
    tau = rd.inverse_dynamics(robot, q, qd, qdd) + noise * np.random.default_rng(seed).normal(size=q.shape)
    return t, q, qd, tau


def _csv(path, header, rows):
    path.write_text(",".join(header) + "\n" + "".join(",".join(repr(float(x)) for x in r) + "\n" for r in rows))
    return path


def test_standstill_poses_average_each_hold(robot):
    poses = calibration_poses(robot, 5, seed=1)
    t, q, qd, tau = _recording(robot, poses, noise=0.05)
    found = standstill_poses(t, q, tau, qd)
    assert found.count == 5 and found.samples.shape == (5, 2)
    np.testing.assert_allclose(found.q, poses, rtol=0, atol=1e-14)
    for k, (a, b) in enumerate(found.samples):
        np.testing.assert_allclose(found.tau[k], tau[a:b].mean(axis=0), rtol=1e-13, atol=1e-13)
        assert b - a == int(HOLD * RATE)
    np.testing.assert_allclose(found.times[:, 1] - found.times[:, 0], HOLD - 1 / RATE, rtol=1e-12)
    # without velocities: the central differences of q find the same holds, less the samples next to a motion
    derived = standstill_poses(t, q, tau, velocity=1e-9, duration=0.5)
    assert derived.count == 5
    np.testing.assert_allclose(derived.q, poses, rtol=0, atol=1e-14)


def test_standstill_errors_name_the_cause(robot):
    t, q, qd, tau = _recording(robot, calibration_poses(robot, 2, seed=1))
    with pytest.raises(InputError, match="no standstill segment.*longest standstill: 0.99 s"):
        standstill_poses(t, q, tau, qd, duration=2.0)
    with pytest.raises(InputError, match="'velocity'"):
        standstill_poses(t, q, tau, qd, velocity=0.0)
    with pytest.raises(InputError, match="'tau' has shape"):
        standstill_poses(t, q, tau[:, :2], qd)
    with pytest.raises(InputError, match="strictly increasing"):
        standstill_poses(t[::-1], q, tau, qd)


def test_noise_free_holds_calibrate_the_models_first_moments(robot):
    t, q, qd, tau = _recording(robot, calibration_poses(robot, 12, seed=2))
    found = standstill_poses(t, q, tau, qd)
    cal = calibrate_gravity(robot, found.q, found.tau)
    ok = cal.identifiable
    np.testing.assert_allclose(cal.mu[ok], first_moments(robot, grouped=True)[ok], rtol=1e-9, atol=1e-10)


@pytest.fixture(scope="module")
def recorded(robot, tmp_path_factory):
    """One noisy recording of 10 holds as a ROS 1 bag, a ROS 2 MCAP bag, HDF5, Parquet, a CSV log, and its
    averaged poses as a CSV of static poses; joints listed in a shuffled order in the bags."""
    pytest.importorskip("rosbags")
    folder = tmp_path_factory.mktemp("gravity_logs")
    poses = calibration_poses(robot, 10, seed=3)
    t, q, qd, tau = _recording(robot, poses, noise=0.2, seed=4)
    n = robot.n
    order = np.array([3, 0, 5, 1, 4, 2])
    files = {
        "ros1": write_joint_bag(folder / "run.bag", "ros1", robot.q_names, t, q, qd, tau, order=order),
        "mcap": write_joint_bag(folder / "run_mcap", "mcap", robot.q_names, t, q, qd, tau, order=order),
        "csv": _csv(folder / "run.csv", ["t"] + [f"{p}{k}" for p in ("q", "qd", "tau") for k in range(1, n + 1)],
                    np.column_stack([t, q, qd, tau])),
    }
    try:
        import h5py
    except ImportError:
        h5py = None
    if h5py is not None:
        with h5py.File(folder / "run.h5", "w") as f:
            for key, value in (("t", t), ("q", q), ("qd", qd), ("tau", tau)):
                f[key] = value
        files["hdf5"] = folder / "run.h5"
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        pa = None
    if pa is not None:
        columns = {"t": t, **{f"{p}{k}": a[:, k - 1] for p, a in (("q", q), ("qd", qd), ("tau", tau))
                              for k in range(1, n + 1)}}
        pq.write_table(pa.table(columns), folder / "run.parquet")
        files["parquet"] = folder / "run.parquet"
    found = standstill_poses(t, q, tau, qd)
    files["poses"] = _csv(folder / "poses.csv", [f"{p}{k}" for p in ("q", "tau") for k in range(1, n + 1)],
                          np.column_stack([found.q, found.tau]))
    model = folder / "rx90.yaml"
    rd.save(robot, model)
    return {"files": files, "found": found, "model": model, "poses": poses}


def _calibrate(*args):
    result = CliRunner().invoke(app, ["calibrate-gravity", *map(str, args)])
    return result


def test_every_log_format_gives_the_numbers_of_the_csv_of_poses(robot, recorded):
    outputs = {}
    for kind, path in recorded["files"].items():
        result = _calibrate(recorded["model"], path, "--offsets", "--json")
        assert result.exit_code == 0, (kind, result.output)
        outputs[kind] = json.loads(result.stdout)
    reference = outputs.pop("poses")
    assert reference["standstill_segments"] is None and reference["poses"] == 10
    direct = calibrate_gravity(robot, recorded["found"].q, recorded["found"].tau, offsets=True)
    np.testing.assert_allclose(np.array(reference["mu"]), direct.mu, rtol=1e-12, atol=1e-14)
    for kind, out in outputs.items():
        assert out["poses"] == 10, kind
        np.testing.assert_allclose(np.array(out["mu"]), np.array(reference["mu"]), rtol=1e-12, atol=1e-14,
                                   err_msg=kind)
        np.testing.assert_allclose(np.array(out["offsets"]), np.array(reference["offsets"]), rtol=1e-12,
                                   atol=1e-14, err_msg=kind)
        np.testing.assert_allclose(np.array(out["standstill_segments"]), recorded["found"].times, atol=1e-8)
    # the table names how the poses were found
    text = _calibrate(recorded["model"], recorded["files"]["ros1"])
    assert text.exit_code == 0 and "10 static poses: standstill segments of" in text.stdout


def test_span_reads_the_same_rows_of_a_csv_and_a_log(robot, recorded):
    files = recorded["files"]
    poses = _calibrate(recorded["model"], files["poses"], "--span", ":8", "--offsets", "--json")
    assert poses.exit_code == 0, poses.output
    found = recorded["found"]
    direct = calibrate_gravity(robot, found.q[:8], found.tau[:8], offsets=True)
    np.testing.assert_allclose(json.loads(poses.stdout)["mu"], direct.mu, rtol=1e-12, atol=1e-14)
    rows = int(0.8 * len(np.loadtxt(files["csv"], delimiter=",", skiprows=1)))
    spans = {kind: json.loads(_calibrate(recorded["model"], files[kind], "--span", f":{rows}", "--json").stdout)
             for kind in ("csv", "ros1")}
    assert spans["csv"]["poses"] == spans["ros1"]["poses"] < 10
    np.testing.assert_allclose(spans["csv"]["mu"], spans["ros1"]["mu"], rtol=1e-12, atol=1e-14)


def test_log_errors_are_one_line(robot, recorded, tmp_path):
    model, bag = recorded["model"], recorded["files"]["ros1"]
    cases = [
        [model, bag, "--topic", "/nothing"],  # names the topics present
        [model, bag, "--standstill-duration", "5"],  # no hold lasts 5 s
        [model, bag, "--standstill-velocity", "0"],
        [model, write_joint_bag(tmp_path / "no_effort.bag", "ros1", robot.q_names, np.arange(3) * 0.01,
                                np.zeros((3, 6)))],
        [model, _csv(tmp_path / "holes.csv", ["t", *(f"q{k}" for k in range(1, 7)), *(f"tau{k}" for k in range(1, 7))],
                     [[0.0] + [0.0] * 12, [0.1] + [float("nan")] * 12])],
    ]
    for args in cases:
        result = _calibrate(*args)
        assert result.exit_code == 2, (args, result.output)
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "topics in the bag" in _calibrate(*cases[0]).output
    assert "no efforts" in _calibrate(*cases[3]).output
    assert "data row 2" in _calibrate(*cases[4]).output


@given(holds=st.lists(st.tuples(st.integers(3, 40), st.integers(2, 30)), min_size=1, max_size=6),
       seed=st.integers(0, 2**32 - 1))
@settings(max_examples=60, deadline=None)
def test_standstill_poses_find_the_holds_that_were_made(holds, seed):
    """Holds of random lengths (samples) joined by motions: exactly the holds lasting at least ``duration`` are
    found, with the means of their rows; uneven sample times included."""
    rng = np.random.default_rng(seed)
    n, pieces_q, pieces_qd, made = 3, [], [], []
    start = 0
    for hold, move in holds:
        pieces_q.append(np.tile(rng.normal(size=n), (hold, 1)))
        pieces_qd.append(np.zeros((hold, n)))
        made.append((start, start + hold))
        start += hold
        pieces_q.append(rng.normal(size=(move, n)))
        pieces_qd.append(rng.choice([-1.0, 1.0], size=(move, n)) * rng.uniform(0.5, 2.0, size=(move, n)))
        start += move
    q, qd = np.concatenate(pieces_q), np.concatenate(pieces_qd)
    t = np.cumsum(rng.uniform(0.5, 1.5, size=q.shape[0])) * 0.01
    tau = rng.normal(size=q.shape)
    duration = 0.1
    expected = [(a, b) for a, b in made if t[b - 1] - t[a] >= duration]
    if not expected:
        with pytest.raises(InputError, match="no standstill segment"):
            standstill_poses(t, q, tau, qd, duration=duration)
        return
    found = standstill_poses(t, q, tau, qd, duration=duration)
    np.testing.assert_array_equal(found.samples, expected)
    for k, (a, b) in enumerate(expected):
        np.testing.assert_allclose(found.q[k], q[a:b].mean(axis=0), rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(found.tau[k], tau[a:b].mean(axis=0), rtol=1e-13, atol=1e-14)
        np.testing.assert_array_equal(found.times[k], [t[a], t[b - 1]])
