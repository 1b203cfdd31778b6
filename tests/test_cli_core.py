"""The `robodyn list / info / id` commands: printed numbers, JSON, CSV in and out, errors (exit code 2)."""

import csv
import json
import os
import re

import numpy as np
import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_list_names_every_builtin_robot():
    res = run("list")
    assert res.exit_code == 0
    for name in rd.list_robots():
        assert name in res.output
    res = run("list", "--json")
    out = {row["name"]: row for row in json.loads(res.stdout)}
    assert list(out) == rd.list_robots()
    assert out["stanford"]["frames"] == "RRPRRR" and out["stanford"]["n"] == 6 and out["pr"]["nf"] == 2


def test_info_tables():
    res = run("info", "rx90")
    assert res.exit_code == 0, res.output
    out = res.output
    assert "rx90: 6 joints, 6 frames (serial)" in out
    assert "gravity (base frame, m/s²): [0, 0, -9.81]" in out
    assert "Khalil & Dombre Example 3.1" in " ".join(out.split())
    # geometric table rows: j name a(j) sigma alpha d theta r
    assert [ln for ln in out.splitlines() if ln.split()[:8] == ["3", "j3", "2", "0", "0", "0.45", "q3", "0"]]
    assert [ln for ln in out.splitlines() if ln.split()[:8] == ["4", "j4", "3", "0", "-π/2", "0", "q4", "0.45"]]
    r = rd.load("rx90")
    # inertial table of link 2, 4 significant digits: MX MY MZ M Ia Fc Fv
    expected = [f"{x:.4g}" for x in (*r.params[1, 6:], r.Ia[1], r.Fc[1], r.Fv[1])]
    assert [ln for ln in out.splitlines() if ln.split() == ["2", *expected]], expected
    expected = [f"{x:.4g}" for x in r.params[2, :6]]
    assert [ln for ln in out.splitlines() if ln.split() == ["3", *expected]], expected


def test_info_shows_offsets_trees_and_prismatic_joints(tmp_path):
    robot = rd.Robot(name="t", sigma=[0, 1, 2], antecedent=[0, 1, 1], gamma=[0, 0, np.pi / 4], b=[0, 0, 0.2],
                     theta=[np.pi / 2, -np.pi / 2, 0.3], r=[0, 0.1, 0], qlim=[[-np.pi, np.pi], [0, 0.5]])
    path = rd.save(robot, tmp_path / "t.yaml")
    res = run("info", path)
    assert res.exit_code == 0, res.output
    lines = [ln.split() for ln in res.output.splitlines()]
    # j name a(j) sigma gamma b alpha d theta r qmin qmax
    assert ["1", "j1", "0", "0", "0", "0", "0", "0", "q1", "+", "π/2", "0", "-π", "π"] in lines
    assert ["2", "j2", "1", "1", "0", "0", "0", "0", "-π/2", "q2", "+", "0.1", "0", "0.5"] in lines
    assert ["3", "j3", "1", "2", "π/4", "0.2", "0", "0", "0.3", "0"] in lines


def _no_constant(name):
    raise AssertionError(f"JSON output holds {name}")


def test_info_json_is_exact():
    res = run("info", "puma560", "--json")
    assert res.exit_code == 0
    doc = json.loads(res.output, parse_constant=_no_constant)
    r = rd.load("puma560")
    assert (doc["name"], doc["n"], doc["nf"]) == ("puma560", 6, 6)
    assert doc["gravity"] == r.gravity.tolist()
    assert [g["alpha"] for g in doc["geometry"]] == r.alpha.tolist()
    assert [g["r"] for g in doc["geometry"]] == r.r.tolist()
    # strict JSON: an unlimited joint's limits are null
    assert [[g["qmin"], g["qmax"]] for g in doc["geometry"]] == [[None if abs(x) == np.inf else x for x in row]
                                                                  for row in r.qlim.tolist()]
    assert [[row[p] for p in rd.PARAMETER_NAMES] for row in doc["inertia"]] == r.params.tolist()
    assert [row["Ia"] for row in doc["inertia"]] == r.Ia.tolist()


def test_id_prints_the_torques():
    q, qd, qdd = [0.1, -0.4, 0.7, 0.2, -0.3, 0.5], [1, 0.5, -1, 0, 2, 0.1], [0.3, 0, -2, 1, 0, 0.5]
    res = run("id", "rx90", "--q", ",".join(map(str, q)), "--qd", " ".join(map(str, qd)), "--qdd", ",".join(map(str, qdd)))
    assert res.exit_code == 0, res.output
    tau = rd.inverse_dynamics(rd.load("rx90"), q, qd, qdd)
    for k in range(6):
        assert f"{tau[k]:.10g} N m" in res.output


def test_id_defaults_to_zero_state_and_json_is_exact():
    res = run("id", "stanford", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    r = rd.load("stanford")
    z = np.zeros(6)
    assert doc["q"] == doc["qd"] == doc["qdd"] == z.tolist()
    assert doc["tau"] == rd.inverse_dynamics(r, z, z, z).tolist()
    assert doc["tau"] == rd.gravity_torques(r, z).tolist()
    res = run("id", "stanford")
    assert "j3    │ prismatic" in res.output and f"{doc['tau'][2]:.10g} N" in res.output


def write_states(path, rows, n=2, t=True):
    header = (["t"] if t else []) + [f"{p}{k}" for p in ("q", "qd", "qdd") for k in range(1, n + 1)]
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)


def test_id_states_csv_to_csv(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, (5, 6))
    t = np.arange(5) * 0.01
    write_states(tmp_path / "s.csv", np.column_stack([t, X]).tolist())
    out = tmp_path / "tau.csv"
    res = run("id", "planar2r", "--states", tmp_path / "s.csv", "--out", out)
    assert res.exit_code == 0, res.output
    assert "wrote 5 rows of joint torques" in res.output
    data = list(csv.reader(open(out)))
    assert data[0] == ["t", "tau1", "tau2"]
    got = np.array(data[1:], dtype=float)
    tau = rd.inverse_dynamics(rd.load("planar2r"), X[:, :2], X[:, 2:4], X[:, 4:])
    np.testing.assert_array_equal(got[:, 0], t)
    np.testing.assert_array_equal(got[:, 1:], tau)  # repr() round-trips floats exactly
    # columns in any order, no t column, CSV to stdout and JSON
    cols = ["qdd2", "q1", "qd1", "q2", "qdd1", "qd2"]
    with open(tmp_path / "s2.csv", "w") as fh:
        fh.write(",".join(cols) + "\n")
        for row in X:
            v = dict(zip(["q1", "q2", "qd1", "qd2", "qdd1", "qdd2"], row))
            fh.write(",".join(repr(float(v[c])) for c in cols) + "\n")
    res = run("id", "planar2r", "--states", tmp_path / "s2.csv")
    assert res.exit_code == 0, res.output
    lines = res.output.strip().splitlines()
    assert lines[0] == "tau1,tau2"
    np.testing.assert_array_equal(np.array([ln.split(",") for ln in lines[1:]], dtype=float), tau)
    doc = json.loads(run("id", "planar2r", "--states", tmp_path / "s2.csv", "--json").output)
    assert doc["rows"] == 5 and doc["tau"] == tau.tolist()


@pytest.mark.parametrize(
    "content, message",
    [
        ("q1,q2,qd1,qd2,qdd1\n1,2,3,4,5\n", r"s\.csv: missing column\(s\) qdd2; the header must name q1\.\.q2"),
        ("q1,q2,qd1,qd2,qdd1,qdd2,x\n1,2,3,4,5,6,7\n", r"s\.csv: unknown column\(s\) x"),
        ("q1,q2,qd1,qd2,qdd1,qdd2\n1,2,3,4,5,6\n1,2,x,4,5,6\n", r"s\.csv, line 3, column qd1: 'x' is not a number"),
        ("q1,q2,qd1,qd2,qdd1,qdd2\n1,2,3,4,5\n", r"s\.csv, line 2: 5 values for 6 columns"),
        ("q1,q2,qd1,qd2,qdd1,qdd2\n1,2,nan,4,5,6\n", r"s\.csv, line 2, column qd1: nan is not finite"),
        ("q1,q2,qd1,qd2,qdd1,qdd2\n", r"s\.csv: no data rows after the header"),
    ],
)
def test_id_states_errors_name_file_line_and_column(tmp_path, content, message):
    (tmp_path / "s.csv").write_text(content)
    out = tmp_path / "tau.csv"
    res = run("id", "planar2r", "--states", tmp_path / "s.csv", "--out", out)
    assert res.exit_code == 2
    assert "error:" in res.output
    assert re.search(message, " ".join(res.output.split())), res.output
    assert not out.exists()
    assert sorted(os.listdir(tmp_path)) == ["s.csv"]


def test_cli_errors_exit_2_with_a_message(tmp_path):
    cases = [
        (("info", "robot9000"), "unknown robot 'robot9000'; built-in robots are"),
        (("id", "robot9000"), "unknown robot 'robot9000'"),
        (("id", "rx90", "--q", "1,2"), "option --q has 2 numbers; the robot has n = 6 joints, give 6"),
        (("id", "rx90", "--qd", "1,2,a,4,5,6"), "option --qd = '1,2,a,4,5,6': give 6 numbers separated by commas"),
        (("id", "rx90", "--q", "0,0,0,0,0,nan"), "argument 'q' contains NaN or inf"),
        (("id", "rx90", "--out", tmp_path / "x.csv"), "--out needs --states FILE"),
        (("id", "rx90", "--states", tmp_path / "none.csv"), "cannot read the file"),
        (("id", "rx90", "--states", tmp_path / "none.csv", "--q", "0,0,0,0,0,0"), "give either --states FILE or --q/--qd/--qdd"),
        (("info", tmp_path / "missing.yaml"), "missing.yaml: no such model file"),
        (("id", "planar2r", "--states", tmp_path / "ok.csv", "--out", tmp_path / "no" / "tau.csv"),
         f"--out '{tmp_path / 'no' / 'tau.csv'}': folder '{tmp_path / 'no'}' does not exist; create it or choose another path"),
    ]
    (tmp_path / "ok.csv").write_text("q1,q2,qd1,qd2,qdd1,qdd2\n1,2,3,4,5,6\n")
    for args, message in cases:
        res = run(*args)
        assert res.exit_code == 2, (args, res.output)
        assert message in " ".join(res.output.split()), (args, res.output)
        assert "Traceback" not in res.output
    (tmp_path / "bad.yaml").write_text("joints: [{sigma: 0, alhpa: 1}]\nlinks: [{}]\n")
    res = run("info", tmp_path / "bad.yaml")
    assert res.exit_code == 2
    assert "bad.yaml, joints row 1: unknown field 'alhpa'" in " ".join(res.output.split())


# ---- the README's promises --------------------------------------------------------------------------------------

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fenced(path, lang):
    text = open(os.path.join(ROOT, path), encoding="utf-8").read()
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


def test_ci_runs_exactly_the_readme_test_command():
    bash = [b.strip() for b in fenced("README.md", "bash")]
    assert len(bash) >= 2
    install_and_run, test = bash[0], bash[1]
    assert test in open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8").read().splitlines()
    assert "pytest" in test and ".[test]" in test
    assert "robodyn info rx90" in install_and_run and "robodyn id rx90" in install_and_run
    assert "robodyn generate rx90" in install_and_run  # issue 6: generating the customized models is the main job


def test_readme_quickstart_cli_calls_work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # `generate` writes its output folder into the working directory
    install_and_run = fenced("README.md", "bash")[0]
    for call in re.findall(r"\.venv/bin/robodyn ([^&]+)", install_and_run):
        res = run(*call.split())
        assert res.exit_code == 0, (call, res.output)
    tau = rd.inverse_dynamics(rd.load("rx90"), [0, 0.5, -0.3, 0, 0.4, 0], [0.2, 0.1, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0])
    assert f"{tau[0]:.10g} N m" in res.output


def test_id_accepts_negative_values():
    doc = json.loads(run("id", "planar2r", "--q", "-0.5,1", "--qd", "-1 -2", "--json").output)
    assert doc["q"] == [-0.5, 1.0] and doc["qd"] == [-1.0, -2.0]
    assert doc["tau"] == rd.inverse_dynamics(rd.load("planar2r"), [-0.5, 1.0], [-1.0, -2.0], [0.0, 0.0]).tolist()
