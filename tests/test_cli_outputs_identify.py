"""`robodyn identify` outputs (and those of id, excite, simulate, calibrate-gravity and calibration-poses): a URDF --out (what URDF cannot hold left out, with a warning), outputs that would
overwrite an input or each other (exit 2, nothing computed or written), and a run that fails after the fit
(none of its outputs left behind)."""

import csv
import hashlib
import os
import shutil
import time

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app
from robodyn.errors import InputError

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A planar 3R model file (friction with offsets; gravity along -y0) and 3 s of exact q, qd, qdd, tau."""
    folder = tmp_path_factory.mktemp("outputs")
    moving = np.ones(3)
    robot = rd.load("planar3r").replace(Fc=np.append(0.4 * moving, 0), Fv=np.append(0.2 * moving, 0),
                                        Foff=np.append(0.1 * moving, 0))
    model = folder / "arm.yaml"
    rd.save(robot, model)
    t = np.arange(0, 3, 0.005)[:, None]
    a, w, phi = np.array([0.8, 0.7, 0.9]), np.array([2.1, 3.3, 4.7]), np.array([0.0, 0.5, 1.0])
    b, v = np.array([0.4, 0.5, 0.3]), np.array([5.3, 1.7, 2.9])
    q = a * np.sin(w * t + phi) + b * np.sin(v * t)
    qd = a * w * np.cos(w * t + phi) + b * v * np.cos(v * t)
    qdd = -a * w**2 * np.sin(w * t + phi) - b * v**2 * np.sin(v * t)
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    data = folder / "full.csv"
    header = [f"{p}{k}" for p in ("q", "qd", "qdd", "tau") for k in (1, 2, 3)]
    with open(data, "w", newline="") as fh:
        csv.writer(fh).writerows([header] + np.column_stack([q, qd, qdd, tau]).tolist())
    return {"model": model, "data": data, "robot": robot}


@pytest.fixture()
def work(source, tmp_path):
    """A fresh folder holding the model file and the data (and a copy of it for --validate)."""
    shutil.copy(source["model"], tmp_path / "arm.yaml")
    shutil.copy(source["data"], tmp_path / "full.csv")
    shutil.copy(source["data"], tmp_path / "held.csv")
    (tmp_path / "tr.yaml").write_text("gear_ratios: [10, 10, 10]\n")
    return tmp_path


def snapshot(folder) -> dict:
    """Every file under ``folder`` and the SHA-256 of its bytes."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def one_error_line(res) -> str:
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    return lines[0]


# ---- a URDF --out ------------------------------------------------------------------------------------------

def test_urdf_out_writes_the_identified_model_and_says_what_it_leaves_out(work):
    urdf, stats = work / "arm_id.urdf", work / "arm_id.stats.yaml"
    res = run("identify", work / "arm.yaml", work / "full.csv", "--out", urdf, "--stats", stats)
    assert res.exit_code == 0, res.output
    assert f"modelwrittento{urdf}" in "".join(res.stdout.split())  # wrapped at the terminal's width
    # one warning line naming what the URDF leaves out: the identified rotor inertias (the fit's armature terms)
    # and friction offsets, and the model's gravity (-y0)
    warning = [x for x in res.stderr.splitlines() if x.startswith("warning:")]
    assert len(warning) == 1, res.stderr
    assert "Ia (rotor inertia) of joints 1, 2, 3" in warning[0]
    assert "Foff (friction offset) of joints 1, 2, 3" in warning[0] and "gravity [0, -9.81, 0]" in warning[0]
    assert str(urdf) in warning[0] and ".yaml" in warning[0]
    record = yaml.safe_load(stats.read_text())
    assert record["model_file"] == str(urdf)
    with pytest.warns(UserWarning):  # <dynamics damping friction> read as Fv, Fc
        loaded = rd.load(urdf)
    assert loaded.n == 3
    # the identified link masses, as the statistics of the same run have them
    masses = [record["standard_parameters"][f"M{j}"] for j in (1, 2, 3)]
    np.testing.assert_allclose(loaded.M[:3], masses, rtol=1e-9)
    np.testing.assert_allclose(loaded.M[:3], 1.0, rtol=1e-3)  # exact data: the model's 1 kg rods
    # the same as the YAML model of the same identification, less what URDF cannot hold
    model_yaml = work / "arm_id.yaml"
    res = run("identify", work / "arm.yaml", work / "full.csv", "--out", model_yaml, "--stats", work / "s2.yaml")
    assert res.exit_code == 0, res.output
    assert "warning:" not in res.stderr
    kept = rd.load(model_yaml)
    np.testing.assert_allclose(loaded.M[:3], kept.M[:3], rtol=1e-9)
    np.testing.assert_allclose(loaded.Fc[:3], kept.Fc[:3], rtol=1e-9)  # friction: URDF <dynamics>
    np.testing.assert_allclose(loaded.Fv[:3], kept.Fv[:3], rtol=1e-9)
    assert np.any(kept.Foff != 0) and np.all(loaded.Foff == 0)
    assert np.any(kept.Ia != 0) and np.all(loaded.Ia == 0)
    np.testing.assert_allclose(loaded.gravity, [0, 0, -9.81])


def test_urdf_out_of_a_model_urdf_cannot_name_fails_before_anything_is_computed(work):
    rd.save(rd.load("planar3r").replace(frame_names=("a", "a", "b", "tip")), work / "dup.yaml")
    before = snapshot(work)
    res = run("identify", work / "dup.yaml", work / "full.csv", "--out", work / "dup_id.urdf", "--plot",
              work / "fit.png")
    assert res.exit_code == 2, res.output
    assert "unique" in one_error_line(res)
    assert snapshot(work) == before  # no statistics file, no model, no plot


# ---- outputs that would overwrite an input or each other -----------------------------------------------------

OVERWRITES = {
    "--out DATA": (["--out", "full.csv"], ["--out", "DATA file", "full.csv"]),
    "--stats DATA": (["--stats", "full.csv"], ["--stats", "DATA file", "full.csv"]),
    "--plot DATA": (["--plot", "full.csv"], ["--plot", "DATA file", "full.csv"]),
    "--plot DATA, spelled otherwise": (["--plot", "sub/../full.csv"], ["--plot", "DATA file", "full.csv"]),
    "--out --validate": (["--validate", "held.csv", "--out", "held.csv"], ["--out", "--validate file", "held.csv"]),
    "--stats --transmission": (["--transmission", "tr.yaml", "--stats", "tr.yaml"],
                               ["--stats", "--transmission file", "tr.yaml"]),
    "--out ROBOT": (["--out", "arm.yaml"], ["--out", "ROBOT model file", "arm.yaml"]),
    "--out --stats": (["--out", "m.yaml", "--stats", "m.yaml"], ["--out", "--stats", "m.yaml"]),
    "--out --plot": (["--out", "m2.yaml", "--plot", "m2.yaml"], ["--out", "--plot", "m2.yaml"]),
    "--stats --plot": (["--stats", "s.yaml", "--plot", "s.yaml"], ["--stats", "--plot", "s.yaml"]),
    "default --stats, --plot": (["--out", "a.yaml", "--plot", "a.identification.yaml"],
                                ["--stats", "--plot", "a.identification.yaml"]),
}


@pytest.mark.parametrize("case", list(OVERWRITES))
def test_an_output_that_would_overwrite_an_input_or_another_is_refused(work, case, monkeypatch):
    args, named = OVERWRITES[case]
    (work / "sub").mkdir()
    monkeypatch.chdir(work)
    before = snapshot(work)
    start = time.perf_counter()
    res = run("identify", "arm.yaml", "full.csv", *args)
    assert res.exit_code == 2, res.output
    line = one_error_line(res)
    for word in named:
        assert word in line, line
    assert snapshot(work) == before  # the inputs byte-identical, no output created
    assert time.perf_counter() - start < 5  # refused before the fit


def test_an_output_linked_to_the_data_file_is_refused(work):
    (work / "link.csv").symlink_to(work / "full.csv")
    before = snapshot(work)
    res = run("identify", work / "arm.yaml", work / "full.csv", "--stats", work / "link.csv")
    assert res.exit_code == 2, res.output
    assert "--stats" in one_error_line(res) and "DATA file" in res.stderr
    assert snapshot(work) == before


def test_excite_refuses_to_overwrite_its_robot_file(work):
    before = snapshot(work)
    res = run("excite", work / "arm.yaml", "--duration", 1, "--out", work / "arm.yaml", "--unlimited")
    assert res.exit_code == 2, res.output
    assert "ROBOT model file" in one_error_line(res) and "--out" in res.stderr
    assert snapshot(work) == before


@pytest.mark.parametrize("args, named", [
    (("simulate", "{model}", "--to", "0.5,0.5,0.5", "--plot", "{model}"), "ROBOT model file"),
    (("simulate", "{model}", "--compare", "{data}", "--plot", "{data}"), "--compare log"),
    (("calibrate-gravity", "{model}", "{data}", "--out", "{data}"), "POSES file"),
    (("calibrate-gravity", "{model}", "{data}", "--out", "{model}"), "ROBOT model file"),
    (("calibrate-gravity", "{model}", "{data}", "--out", "{out}", "--plot", "{out}"), "the same file"),
    (("calibration-poses", "{model}", "--count", "3", "--out", "{model}", "--unlimited"), "ROBOT model file"),
    (("id", "{model}", "--states", "{states}", "--out", "{states}"), "--states file")])
def test_simulate_and_calibrate_gravity_refuse_to_overwrite_their_inputs(work, args, named):
    paths = {"model": work / "arm.yaml", "data": work / "full.csv", "out": work / "cal.yaml", "states": work / "s.csv"}
    (work / "s.csv").write_text("q1,q2,q3,qd1,qd2,qd3,qdd1,qdd2,qdd3\n" + ",".join(["0.1"] * 9) + "\n")
    before = snapshot(work)
    res = run(*(a.format(**paths) for a in args))
    assert res.exit_code == 2, res.output
    assert named in one_error_line(res)
    assert snapshot(work) == before


def test_devices_may_take_several_outputs(work):
    res = run("identify", work / "arm.yaml", work / "full.csv", "--stats", os.devnull, "--plot", os.devnull)
    assert res.exit_code == 0, res.output


# ---- a failure after the fit leaves none of the run's outputs ---------------------------------------------------

@pytest.mark.parametrize("failing", ["model file", "plot file"])
def test_a_write_that_fails_removes_the_outputs_written_before_it(work, monkeypatch, failing):
    import robodyn.files

    original = robodyn.files.write_atomically

    def write_atomically(path, write, what="output file", binary=False):
        if what == failing:
            raise InputError(f"{what} {str(path)!r}: cannot write in folder (test)")
        return original(path, write, what=what, binary=binary)

    monkeypatch.setattr(robodyn.files, "write_atomically", write_atomically)
    (work / "fit.png").write_bytes(b"an older plot")  # a file this run does not write: kept
    before = snapshot(work)
    res = run("identify", work / "arm.yaml", work / "full.csv", "--out", work / "arm_id.yaml", "--plot",
              work / "fit.png")
    assert res.exit_code == 2, res.output
    assert "(test)" in one_error_line(res)
    assert not (work / "arm_id.identification.yaml").exists() and not (work / "arm_id.yaml").exists()
    assert snapshot(work) == before
