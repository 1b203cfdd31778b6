"""The `robodyn excite` and `robodyn identify` commands: files written, numbers printed, errors (exit 2, nothing
written)."""

import csv
import json
import re

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def robot():
    moving = np.ones(3)
    return rd.load("planar3r").replace(Fc=np.append(0.4 * moving, 0), Fv=np.append(0.2 * moving, 0),
                                       Foff=np.append(0.1 * moving, 0))


def columns(path, *names) -> list:
    """Columns of a CSV written by ``files``: ``t`` as it is, any other name ``p`` as the (N, 3) array p1..p3."""
    log = np.genfromtxt(path, delimiter=",", names=True)
    return [log[p] if p == "t" else np.column_stack([log[f"{p}{k}"] for k in (1, 2, 3)]) for p in names]


@pytest.fixture(scope="module")
def files(robot, tmp_path_factory):
    """A robot file, an excitation CSV from `robodyn excite`, and two measurement files made from it."""
    folder = tmp_path_factory.mktemp("ident")
    model = folder / "arm.yaml"
    rd.save(robot, model)
    traj = folder / "traj.csv"
    res = run("excite", model, "--duration", 8, "--out", traj, "--harmonics", 3, "--rate", 200, "--unlimited",
              "--max-iterations", 5, "--criterion", "cond", "--json")
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout)
    data = np.genfromtxt(traj, delimiter=",", names=True)
    n = robot.n
    q, qd, qdd = (np.column_stack([data[f"{p}{k}"] for k in range(1, n + 1)]) for p in ("q", "qd", "qdd"))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    full = folder / "full.csv"
    header = ["q1", "q2", "q3", "qd1", "qd2", "qd3", "qdd1", "qdd2", "qdd3", "tau1", "tau2", "tau3"]
    with open(full, "w", newline="") as fh:
        csv.writer(fh).writerows([header] + np.column_stack([q, qd, qdd, tau]).tolist())
    measured = folder / "measured.csv"
    with open(measured, "w", newline="") as fh:
        csv.writer(fh).writerows([["t", "q1", "q2", "q3", "tau1", "tau2", "tau3"]]
                                 + np.column_stack([data["t"], q, tau]).tolist())
    return {"folder": folder, "model": model, "traj": traj, "info": info, "full": full, "measured": measured,
            "data": data, "q": q}


def test_excite_writes_the_trajectory(files):
    info, data = files["info"], files["data"]
    assert info["rows"] == 1601 and info["harmonics"] == 3 and info["criterion"] == "cond"
    assert info["base_frequency_hz"] == pytest.approx(1 / 8)
    assert list(data.dtype.names) == ["t", "q1", "q2", "q3", "qd1", "qd2", "qd3", "qdd1", "qdd2", "qdd3"]
    assert data["t"][-1] == pytest.approx(8.0)
    assert np.max(np.abs([data[f"qd{k}"] for k in (1, 2, 3)])) <= 1.5 + 1e-12
    assert np.max(np.abs([data[f"qdd{k}"] for k in (1, 2, 3)])) <= 5.0 + 1e-12
    assert 1 < info["condition_number"] < 1e3


def test_identify_exact_columns_recovers_the_base_parameters(robot, files):
    out, plot = files["folder"] / "result.yaml", files["folder"] / "fit.png"
    res = run("identify", files["model"], files["full"], "--out", out, "--plot", plot)
    assert res.exit_code == 0, res.output
    assert "ZZR1" in res.output and "fit per joint" in res.output and "%σ" in res.output
    # each parameter's row names what it belongs to: its link's frame, or its joint for friction
    assert re.search(r"ZZR1\s*│\s*j1\s*│", res.output) and re.search(r"Fv3\s*│\s*j3\s*│", res.output)
    saved = yaml.safe_load((files["folder"] / "result.identification.yaml").read_text())
    assert saved["model_file"] == str(out)
    model = rd.load(out)  # the identified model: a model file every command loads
    q = np.linspace(-1, 1, 3 * robot.n).reshape(3, robot.n)
    np.testing.assert_allclose(rd.inverse_dynamics(model, q, q, q), rd.inverse_dynamics(robot, q, q, q),
                               rtol=1e-6, atol=1e-6 * np.abs(rd.inverse_dynamics(robot, q, q, q)).max())
    for command in (["id", out, "--q", "0.1,0.2,0.3"], ["info", out]):
        assert run(*command).exit_code == 0
    truth = rd.base_parameters(robot, friction=True)
    assert [p["name"] for p in saved["parameters"]] == list(truth.names)
    values = np.array([p["value"] for p in saved["parameters"]])
    assert np.max(np.abs(values - truth.values)) < 1e-8 * np.max(np.abs(truth.values))
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    res = run("identify", files["model"], files["full"], "--method", "wls", "--no-friction", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["method"] == "wls" and not out["friction"] and "Fc1" not in [p["name"] for p in out["parameters"]]
    assert out["prepared"] is None and out["samples_used"] == 1601


def test_identify_filters_and_differentiates_t_q_tau(robot, files):
    res = run("identify", files["model"], files["measured"], "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    prep = out["prepared"]
    # noise-free q: the automatic cut-off is 10 x the bandwidth of q; 1601 samples are all kept (< 2000)
    assert (prep["cutoff_hz"], prep["decimate"], prep["rate_hz"]) == (pytest.approx(10 * prep["bandwidth_hz"]), 1, pytest.approx(200.0))
    assert "at most 10 x" in prep["cutoff_rule"] and prep["resampled"] == ""
    values = np.array([p["value"] for p in out["parameters"]])
    # the command is the library pipeline: prepare_identification_data, then identify
    data = files["data"]
    d = rd.identification.prepare_identification_data(data["t"], files["q"], rd.inverse_dynamics(robot, files["q"], *(
        np.column_stack([data[f"{p}{k}"] for k in (1, 2, 3)]) for p in ("qd", "qdd"))))
    ref = rd.identify(robot, d)
    np.testing.assert_allclose(values, ref.values, rtol=1e-12, atol=1e-12)
    # against the truth: the Coulomb columns are filtered as τ (IdentificationData.coulomb), so the smoothed steps
    # of τ at velocity reversals bias nothing; with the model's sharp sign(q̇) (the arrays alone) Fc is off by
    # ~1 % of the largest parameter here
    truth = rd.base_parameters(robot, friction=True).values
    err = np.abs(values - truth) / np.max(np.abs(truth))
    sharp = np.abs(rd.identify(robot, d.q, d.qd, d.qdd, d.tau).values - truth) / np.max(np.abs(truth))
    assert np.max(err) < 0.2 * np.max(sharp) and np.max(sharp) < 0.02
    inertial = [not p["name"].startswith(("Fc", "Fv", "Foff")) for p in out["parameters"]]
    assert np.max(err[inertial]) < 5e-3


def test_identify_parallel_is_the_library_parallel_filtering(robot, files):
    res = run("identify", files["model"], files["measured"], "--parallel", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["parallel_filtering"] is True
    data = files["data"]
    tau = rd.inverse_dynamics(robot, files["q"], *(np.column_stack([data[f"{p}{k}"] for k in (1, 2, 3)])
                                                   for p in ("qd", "qdd")))
    d = rd.identification.prepare_identification_data(data["t"], files["q"], tau, parallel=True)
    ref = rd.identify(robot, d.q, d.qd, d.qdd, d.tau, parallel=d)
    np.testing.assert_allclose([p["value"] for p in out["parameters"]], ref.values, rtol=1e-12, atol=1e-12)
    res = run("identify", files["model"], files["full"], "--parallel")
    assert res.exit_code == 2 and "--parallel" in res.output


def test_errors_exit_2_and_write_nothing(files):
    folder = files["folder"]
    out, plot = folder / "never.yaml", folder / "never.png"
    bad = folder / "bad.csv"
    bad.write_text("t,q1,q2,q3,tau1,tau2\n0,0,0,0,0,0\n")
    res = run("identify", files["model"], bad, "--out", out, "--plot", plot)
    assert res.exit_code == 2 and "missing column(s) tau3" in res.output
    bad.write_text("t,q1,q2,q3,tau1,tau2,tau3,torque\n")
    res = run("identify", files["model"], bad, "--out", out)
    assert res.exit_code == 2 and "unknown column(s) torque" in res.output
    lines = files["full"].read_text().splitlines()
    lines[5] = lines[5].replace(lines[5].split(",")[2], "nan", 1)
    bad.write_text("\n".join(lines) + "\n")
    res = run("identify", files["model"], bad, "--out", out)
    assert res.exit_code == 2 and "line 6, column q3: nan is not finite" in res.output
    still = folder / "still.csv"
    rows = [r.split(",") for r in files["full"].read_text().splitlines()]
    for r in rows[1:]:
        r[2], r[5], r[8] = "0.2", "0.0", "0.0"  # joint 3 never moves
    still.write_text("\n".join(",".join(r) for r in rows) + "\n")
    res = run("identify", files["model"], still, "--method", "ols", "--out", out)
    assert res.exit_code == 2 and "do not excite" in res.output and "Fv3" in res.output
    assert len(res.output.strip().splitlines()) <= 3  # one message (wrapped by the terminal at most)
    held = folder / "held.yaml"  # the default, "physical", holds them at the model's values and says so
    res = run("identify", files["model"], still, "--out", held)
    assert res.exit_code == 0 and "do not excite" in res.output and "Fv3" in res.output and held.exists()
    res = run("identify", files["model"], files["full"], "--out", folder / "missing" / "r.yaml", "--plot", plot)
    assert res.exit_code == 2 and "does not exist" in res.output
    res = run("identify", files["model"], files["full"], "--method", "lsq", "--out", out)
    assert res.exit_code == 2 and "method = 'lsq'" in res.output
    res = run("excite", files["model"], "--duration", -1, "--out", folder / "t.csv")
    assert res.exit_code == 2 and "duration" in res.output
    assert not out.exists() and not plot.exists() and not (folder / "t.csv").exists()


def test_identify_validates_on_a_held_out_log(files):
    """--validate LOG: the prediction error per joint on another log prepared with the identification's cut-off;
    on exact data the identified model predicts it to rounding, and a log of another robot shows a large error."""
    res = run("identify", files["model"], files["full"], "--validate", files["full"], "--json")
    assert res.exit_code == 0, res.output
    v = json.loads(res.stdout)["validation"]
    assert len(v["relative_rms_percent"]) == 3 and max(v["relative_rms_percent"]) < 1e-6
    assert v["samples"] == [len(files["q"])] * 3
    res = run("identify", files["model"], files["measured"], "--validate", files["measured"])
    assert res.exit_code == 0, res.output
    assert "held-out prediction error" in res.output
    res = run("identify", files["model"], files["full"], "--validate", files["folder"] / "missing.csv")
    assert res.exit_code == 2


def test_identify_robust_weights(files):
    """--method irls --robust bisquare: rd.identify's robust fit of the prepared data; an unknown weight function
    is a one-line error naming the option's values."""
    res = run("identify", files["model"], files["measured"], "--method", "irls", "--robust", "bisquare", "--json")
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    t, q, tau = columns(files["measured"], "t", "q", "tau")
    want = rd.identify(rd.load(files["model"]), rd.identification.prepare_identification_data(t, q, tau),
                       method="irls", robust="bisquare")
    assert want.converged and got["iterations"] == want.iterations
    values = [p["value"] for p in got["parameters"]]
    np.testing.assert_allclose(values, want.values, rtol=1e-10, atol=1e-12 * np.abs(want.values).max())
    np.testing.assert_allclose(got["noise_std"], want.noise, rtol=1e-10)
    res = run("identify", files["model"], files["measured"], "--method", "irls", "--robust", "tukey")
    assert res.exit_code == 2 and "bisquare" in res.output


def test_identify_validates_on_several_held_out_logs(files):
    """--validate A --validate B: each held-out run prepared on its own and scored together, as
    ``res.validate([A, B])``; an error names the file it comes from."""
    res = run("identify", files["model"], files["measured"], "--validate", files["measured"], "--validate",
              files["full"], "--json")
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)["validation"]
    t, q, tau = columns(files["measured"], "t", "q", "tau")
    data = rd.identification.prepare_identification_data(t, q, tau)
    fit = rd.identify(rd.load(files["model"]), data)
    exact = tuple(columns(files["full"], "q", "qd", "qdd", "tau"))
    want = fit.validate([rd.identification.prepare_identification_data(t, q, tau, cutoff=data.cutoff), exact])
    np.testing.assert_allclose(got["relative_rms_percent"], want.relative_rms_percent, rtol=1e-10)
    assert got["samples"] == [int(k) for k in want.samples]
    res = run("identify", files["model"], files["measured"], "--validate", files["measured"], "--validate",
              files["folder"] / "missing.csv")
    assert res.exit_code == 2 and "missing.csv" in res.output


def test_identify_validate_scores_the_prepared_held_out_data(files):
    """--validate on t, q, tau: the held-out log prepared at the fit's cut-off and scored with its filtered Coulomb
    columns, as ``res.validate(data)`` (the fit used them; sharp sign(q̇) against them is a different model)."""
    res = run("identify", files["model"], files["measured"], "--validate", files["measured"], "--json")
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)["validation"]["relative_rms_percent"]
    t, q, tau = columns(files["measured"], "t", "q", "tau")
    data = rd.identification.prepare_identification_data(t, q, tau)
    fit = rd.identify(rd.load(files["model"]), data)
    held = rd.identification.prepare_identification_data(t, q, tau, cutoff=data.cutoff)
    np.testing.assert_allclose(got, fit.validate(held).relative_rms_percent, rtol=1e-10)


def test_identify_min_velocity_prints_one_residual_rms_in_the_table_and_the_figure(robot, files, monkeypatch):
    """With --min-velocity the table's residual RMS and the figure's are the same number: over the rows the fit
    used (res.equations of them), labelled so in both (the figure said 0.623 over all rows, the table 0.1097)."""
    from robodyn import plot as figures

    titles = []
    original = figures.identification

    def spy(*args, **kwargs):
        fig = original(*args, **kwargs)
        titles.extend(ax.get_title() for ax in fig.axes)
        return fig

    monkeypatch.setattr(figures, "identification", spy)
    png = files["folder"] / "minvel.png"
    res = run("identify", files["model"], files["measured"], "--min-velocity", 0.05, "--plot", png, "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    rows = [f["rows"] for f in out["fit"]]
    assert 0 < min(rows) and max(rows) < out["samples_used"]
    for f, title in zip(out["fit"], titles):
        shown = re.search(r"RMS residual (\S+) \((\d+) of the (\d+) rows\)", title)
        assert shown and (int(shown[2]), int(shown[3])) == (f["rows"], out["samples_used"]), title
        # the figure's RMS from the predicted torques, the table's from the fit's factor: equal to its 4 digits
        assert float(shown[1]) == pytest.approx(f["residual_rms"], rel=5e-4)
    table = run("identify", files["model"], files["measured"], "--min-velocity", 0.05)
    assert "residual RMS over the rows the fit used" in table.stdout


def test_identify_plots_several_runs_on_their_own_times(files, monkeypatch):
    """Two logs: the figure's abscissa is each run's times one after the other (seconds, not sample numbers),
    the runs drawn apart."""
    from robodyn import plot as figures

    calls = []
    original = figures.identification

    def spy(t, *args, **kwargs):
        calls.append((np.asarray(t), kwargs))
        return original(t, *args, **kwargs)

    monkeypatch.setattr(figures, "identification", spy)
    png = files["folder"] / "two_runs.png"
    res = run("identify", files["model"], files["measured"], files["measured"], "--plot", png, "--json")
    assert res.exit_code == 0, res.output
    (t, kwargs), = calls
    first, second = kwargs["runs"]
    assert kwargs["xlabel"] == "time (s)" and first == second and first + second == len(t)
    data = rd.identification.prepare_identification_data(*columns(files["measured"], "t", "q", "tau"))
    np.testing.assert_array_equal(t[:first], data.t)  # the first run on its own times
    step = np.median(np.diff(data.t))
    np.testing.assert_allclose(t[first:], data.t - data.t[0] + data.t[-1] + step, rtol=0, atol=1e-9)


def test_identify_reports_a_position_term_and_warns_that_the_model_file_lacks_it(files):
    """τ3 + 0.5 sin q3 − 0.2 cos q3: "auto" selects joint 3; the table says so, --out warns naming the joint."""
    data = np.genfromtxt(files["full"], delimiter=",", names=True)
    names = list(data.dtype.names)
    table = np.column_stack([data[k] for k in names])
    table[:, names.index("tau3")] += 0.5 * np.sin(data["q3"]) - 0.2 * np.cos(data["q3"])
    path, out = files["folder"] / "spring.csv", files["folder"] / "spring_model.yaml"
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows([names] + table.tolist())
    res = run("identify", files["model"], path, "--out", out)
    assert res.exit_code == 0, res.output
    assert re.search(r"position terms: joint 3: 0\.5 sin q3 \+ -0\.2 cos q3 N m \(fitted on q3 in \[-?[\d.]+,\s+"
                     r"-?[\d.]+\] rad\)", res.output)  # \s: the console wraps the line
    assert "warning: the model file" in res.output and "position terms of joint(s) 3" in res.output
    assert out.exists()
    res = run("identify", files["model"], path, "--json")
    terms = json.loads(res.stdout)["position_terms"]
    # the log's torques are exact to its residual (~1e-7 N m): the coefficients within 4 of their standard deviations
    (c,) = terms["coefficients"]
    assert terms["joints"] == [3]
    assert abs(c["sin"] - 0.5) <= 4 * c["sin_std"] and abs(c["cos"] + 0.2) <= 4 * c["cos_std"]
    assert 0 < c["sin_std"] < 1e-6 and 0 < c["cos_std"] < 1e-6
    # the range of the prepared (filtered, trimmed) q3 the term was fitted on, within the log's
    assert data["q3"].min() - 0.01 <= c["q_min"] < c["q_max"] <= data["q3"].max() + 0.01


def test_identify_with_a_transmission_fits_smooth_motor_coulomb_columns(tmp_path):
    """--transmission on t, qm, taum: the data keep their full-rate states, so the motors' Coulomb columns are
    sign(q̇_m) filtered as τ (IdentificationData.motor_coulomb), not sharp signs: on a simulated coupled wrist
    (motor 6 turns with q5 + q6; exact torques) motor 6's Coulomb friction comes out within 1 % of the truth, the
    sharp columns of the same prepared data put it more than 5 % low; the estimates are those of
    ``rd.identify(robot, data, transmission=tr)`` on data prepared with ``parallel=True``."""
    from tests.support.checks import WRIST_J_MQ as J, coupled_wrist_log

    arm, real, t, q, _, _, tau = coupled_wrist_log()
    log = tmp_path / "motor.csv"
    with open(log, "w", newline="") as fh:  # q_m = J_mq q, τ = J_mqᵀ τ_m
        csv.writer(fh).writerows([["t"] + [f"qm{k}" for k in range(1, 7)] + [f"taum{k}" for k in range(1, 7)]]
                                 + np.column_stack([t, q @ J.T, np.linalg.solve(J.T, tau.T).T]).tolist())
    (tmp_path / "tr.yaml").write_text("gear_ratios: [100, 100, 80, 60, 60, 50]\n"
                                      "coupling:\n  - {motor: 6, joint: 5, value: 50}\n")
    rd.save(arm, tmp_path / "arm.yaml")
    res = run("identify", tmp_path / "arm.yaml", log, "--transmission", tmp_path / "tr.yaml", "--json")
    assert res.exit_code == 0, res.output
    got = {p["name"]: p["value"] for p in json.loads(res.stdout)["parameters"]}

    tr = rd.dynamics.load_transmission(tmp_path / "tr.yaml", 6)
    m = rd.identification.prepare_identification_data(
        t, rd.dynamics.joint_from_motor(tr, q @ J.T), rd.dynamics.joint_torques_from_motor(tr, np.linalg.solve(
            J.T, tau.T).T), parallel=True)
    ref = rd.identify(arm, m, transmission=tr)
    np.testing.assert_allclose([got[k] for k in ref.names], ref.values, rtol=1e-10,
                               atol=1e-10 * np.abs(ref.values).max())
    truth = dict(zip(ref.names, rd.base_parameters(arm, friction=True, transmission=real).values))["Fcm6"]
    sharp = dict(zip(ref.names, rd.identify(arm, m.select(np.ones(m.t.size, bool)), transmission=tr).values))
    assert abs(got["Fcm6"] - truth) < 0.01 * truth < 0.2 * (truth - sharp["Fcm6"])


def test_identify_several_runs_is_the_library_stacking_of_runs_prepared_on_their_own(robot, files):
    """`robodyn identify ROBOT RUN1 RUN2`: each file prepared on its own (its own cut-off, time base, trimmed
    ends), then stacked by ``rd.identify(robot, [d1, d2])``; an error names the file it comes from."""
    t, q = columns(files["measured"], "t", "q")
    qd, qdd = (np.column_stack([files["data"][f"{p}{k}"] for k in (1, 2, 3)]) for p in ("qd", "qdd"))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    folder, header = files["folder"], ["t", "q1", "q2", "q3", "tau1", "tau2", "tau3"]
    parts = [(folder / "run1.csv", slice(None, 900)), (folder / "run2.csv", slice(1000, None))]  # 900 and 601 rows
    for path, rows in parts:
        with open(path, "w", newline="") as fh:
            csv.writer(fh).writerows([header] + np.column_stack([t[rows], q[rows], tau[rows]]).tolist())
    res = run("identify", files["model"], parts[0][0], parts[1][0], "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    runs = [rd.identification.prepare_identification_data(t[rows], q[rows], tau[rows]) for _, rows in parts]
    ref = rd.identify(robot, runs)
    np.testing.assert_allclose([p["value"] for p in out["parameters"]], ref.values, rtol=1e-10, atol=1e-12)
    assert out["samples_used"] == runs[0].t.size + runs[1].t.size
    assert [p["file"] for p in out["prepared"]] == [str(path) for path, _ in parts]
    assert [p["cutoff_hz"] for p in out["prepared"]] == [pytest.approx(d.cutoff) for d in runs]
    # the text output names each file's preparation; --validate scores the held-out log as with one file
    res = run("identify", files["model"], parts[0][0], parts[1][0], "--validate", files["measured"])
    assert res.exit_code == 0, res.output
    assert "run1.csv: filtered at" in res.output and "run2.csv: filtered at" in res.output
    assert "held-out prediction error" in res.output
    # errors name the file; --parallel filters one run's regressor
    bad = folder / "bad_run.csv"
    bad.write_text("t,q1,q2,q3,tau1,tau2\n0,0,0,0,0,0\n")
    res = run("identify", files["model"], parts[0][0], bad)
    assert res.exit_code == 2 and "bad_run.csv" in res.output and "missing column(s) tau3" in res.output
    gap = folder / "gap_run.csv"
    rows = np.column_stack([t, q, tau])
    rows[800:, 0] += 1.0  # a 1 s gap before row 800: refused, each part identifies as a run
    with open(gap, "w", newline="") as fh:
        csv.writer(fh).writerows([header] + rows.tolist())
    res = run("identify", files["model"], gap)
    message = " ".join(res.output.split())  # unwrapped
    assert res.exit_code == 2 and "gap_run.csv" in message and "split the log there" in message
    assert "robodyn identify ROBOT part1.csv part2.csv" in message
    res = run("identify", files["model"], parts[0][0], parts[1][0], "--parallel")
    assert res.exit_code == 2 and "--parallel" in res.output and "one" in res.output


def test_identify_filters_and_differentiates_measured_velocities(robot, files):
    """t, q, qd, tau (a controller's log with its q̇, no q̈): by default the logged q̇ is left out (said in a note)
    and q differentiated; with --qd measured it is filtered like q and differentiated for q̈, as
    ``prepare_identification_data(t, q, tau, qd=qd)``, and --validate prepares the held-out log alike."""
    data = files["data"]
    t, q = data["t"], files["q"]
    qd, qdd = (np.column_stack([data[f"{p}{k}"] for k in (1, 2, 3)]) for p in ("qd", "qdd"))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    logged = files["folder"] / "logged_qd.csv"
    with open(logged, "w", newline="") as fh:
        csv.writer(fh).writerows([["t", "q1", "q2", "q3", "qd1", "qd2", "qd3", "tau1", "tau2", "tau3"]]
                                 + np.column_stack([t, q, qd, tau]).tolist())
    res = run("identify", files["model"], logged, "--qd", "measured", "--validate", logged, "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["prepared"]["measured_velocity"] is True
    d = rd.identification.prepare_identification_data(t, q, tau, qd=qd)
    fit = rd.identify(robot, d)
    np.testing.assert_allclose([p["value"] for p in out["parameters"]], fit.values, rtol=1e-10, atol=1e-12)
    held = rd.identification.prepare_identification_data(t, q, tau, cutoff=d.cutoff, qd=qd)
    np.testing.assert_allclose(out["validation"]["relative_rms_percent"], fit.validate(held).relative_rms_percent,
                               rtol=1e-10)
    # exact data: the fit predicts its own torques as the fit of the differentiated q does, to the filter's error
    assert max(out["validation"]["relative_rms_percent"]) < 1.0
    # the default: the logged velocities left out, the file prepared as t, q, tau, and a note says so
    res = run("identify", files["model"], logged, "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    ref = rd.identify(robot, rd.identification.prepare_identification_data(t, q, tau))
    np.testing.assert_allclose([p["value"] for p in out["parameters"]], ref.values, rtol=1e-10, atol=1e-12)
    assert out["prepared"]["measured_velocity"] is False
    res = run("identify", files["model"], logged)
    assert res.exit_code == 0 and "--qd measured" in " ".join(res.output.split())
    res = run("identify", files["model"], logged, "--qd", "logged")
    assert res.exit_code == 2 and "--qd 'logged'" in res.output
    # a joint log's logged velocities (here an HDF5 qd dataset) are used alike
    h5py = pytest.importorskip("h5py")
    with h5py.File(files["folder"] / "logged_qd.h5", "w") as f:
        for key, value in (("t", t), ("q", q), ("qd", qd), ("tau", tau)):
            f[key] = value
    res = run("identify", files["model"], files["folder"] / "logged_qd.h5", "--qd", "measured", "--json")
    assert res.exit_code == 0, res.output
    np.testing.assert_allclose([p["value"] for p in json.loads(res.stdout)["parameters"]], fit.values, rtol=1e-10,
                               atol=1e-12)
    bad = files["folder"] / "half_qd.csv"
    bad.write_text("t,q1,q2,q3,qd1,qd2,tau1,tau2,tau3\n0,0,0,0,0,0,0,0,0\n")
    res = run("identify", files["model"], bad)
    assert res.exit_code == 2 and "missing column(s) qd3" in res.output


def test_identify_prints_the_warnings_about_the_data_as_warning_lines(tmp_path):
    """robodyn's warnings inside a command (here: rounded right angles) print as one "warning:" line each on
    standard error, not as Python's file, line and source code."""
    exact = rd.load("puma560")
    rounded = exact.replace(alpha=np.round(exact.alpha, 4))
    rd.save(rounded, tmp_path / "arm.yaml")
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-2, 2, (3, 600, 6))
    header = [f"{p}{k}" for p in ("q", "qd", "qdd", "tau") for k in range(1, 7)]
    with open(tmp_path / "run.csv", "w", newline="") as fh:
        csv.writer(fh).writerows([header] + np.column_stack([q, qd, qdd, rd.inverse_dynamics(rounded, q, qd, qdd)])
                                 .tolist())
    res = run("identify", tmp_path / "arm.yaml", tmp_path / "run.csv")
    assert res.exit_code == 0, res.output
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("warning: robot 'puma560': this 1 of its 59 base parameters (Ia2)")
    assert "UserWarning" not in res.stderr and "identification.py" not in res.stderr


def test_identify_prints_a_dash_for_the_relative_std_of_a_zero_value(robot, tmp_path):
    """"physical" holds friction at 0 where the data ask for less (joint 3's torque logged with the wrong sign):
    the %σ of an exact 0 is "—", not inf."""
    rd.save(robot, tmp_path / "arm.yaml")
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-2, 2, (3, 2000, 3))
    tau = rd.inverse_dynamics(robot, q, qd, qdd) * [1, 1, -1]
    header = [f"{p}{k}" for p in ("q", "qd", "qdd", "tau") for k in range(1, 4)]
    with open(tmp_path / "run.csv", "w", newline="") as fh:
        csv.writer(fh).writerows([header] + np.column_stack([q, qd, qdd, tau]).tolist())
    res = run("identify", tmp_path / "arm.yaml", tmp_path / "run.csv", "--method", "physical")
    assert res.exit_code == 0, res.output
    assert re.search(r"Fv3\s*│\s*j3\s*│\s*0\s*│\s*[\d.]+\s*│\s*—\s*│", res.stdout) and "inf" not in res.stdout


GRIPPER_URDF = """<robot name="arm_with_gripper">
  <link name="base"/>
  <link name="upper"><inertial><origin xyz="0.2 0 0"/><mass value="2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.03"/></inertial></link>
  <link name="fore"><inertial><origin xyz="0.15 0 0"/><mass value="1"/>
    <inertia ixx="0.005" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="hand"><inertial><mass value="0.5"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <link name="finger_left"><inertial><mass value="0.05"/>
    <inertia ixx="1e-5" ixy="0" ixz="0" iyy="1e-5" iyz="0" izz="1e-5"/></inertial></link>
  <link name="finger_right"><inertial><mass value="0.05"/>
    <inertia ixx="1e-5" ixy="0" ixz="0" iyy="1e-5" iyz="0" izz="1e-5"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="100" velocity="3"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/><origin xyz="0.4 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="100" velocity="3"/></joint>
  <joint name="wrist" type="fixed"><parent link="fore"/><child link="hand"/><origin xyz="0.3 0 0"/></joint>
  <joint name="finger_left_joint" type="prismatic"><parent link="hand"/><child link="finger_left"/>
    <axis xyz="0 1 0"/><limit lower="0" upper="0.04" effort="20" velocity="0.2"/></joint>
  <joint name="finger_right_joint" type="prismatic"><parent link="hand"/><child link="finger_right"/>
    <axis xyz="0 -1 0"/><limit lower="0" upper="0.04" effort="20" velocity="0.2"/></joint>
</robot>
"""


def test_a_log_of_the_arm_alone_names_the_extra_joints_and_the_cut_that_fits(tmp_path):
    """A URDF with a gripper's fingers and a log of the arm's joints: the error lists the model's joints and says
    how to cut it to the logged chain (--tip), and with that cut the command identifies."""
    model = tmp_path / "arm.urdf"
    model.write_text(GRIPPER_URDF)
    arm = rd.from_urdf(model, tip="hand")
    assert arm.n == 2 and rd.from_urdf(model).n == 4
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-1, 1, (400, 2)) for _ in range(3))
    tau = rd.inverse_dynamics(arm, q, qd, qdd)
    log = tmp_path / "arm.csv"
    with open(log, "w", newline="") as fh:
        csv.writer(fh).writerows([["q1", "q2", "qd1", "qd2", "qdd1", "qdd2", "tau1", "tau2"]]
                                 + np.column_stack([q, qd, qdd, tau]).tolist())
    res = run("identify", model, log, "--no-friction")
    assert res.exit_code == 2
    message = " ".join(res.output.split())
    assert "columns q1..q2 hold 2 joints" in message and "has n = 4" in message
    assert "finger_left_joint, finger_right_joint" in message and "robodyn --tip LINK" in message
    res = run("--tip", "hand", "identify", model, log, "--no-friction", "--json")
    assert res.exit_code == 0, res.output
    fit = json.loads(res.stdout)
    ref = rd.identify(arm, q, qd, qdd, tau, friction=False)
    np.testing.assert_allclose([p["value"] for p in fit["parameters"]], ref.values, rtol=1e-12, atol=1e-12)
    # exact torques: the residual is the rounding of the normal equations, cond(W)^2 eps relative
    assert np.all(np.array(fit["residual_rms"]) < 1e-6 * np.sqrt(np.mean(tau**2, axis=0)))


def test_a_log_of_more_joints_than_the_robot_is_refused_naming_both_counts(tmp_path):
    log = tmp_path / "seven.csv"
    names = ["t"] + [f"q{k}" for k in range(1, 8)] + [f"tau{k}" for k in range(1, 8)]
    log.write_text(",".join(names) + "\n" + ",".join(["0"] * len(names)) + "\n")
    res = run("identify", "rx90", log)
    message = " ".join(res.output.split())
    assert res.exit_code == 2 and "columns q1..q7 hold 7 joints; robot 'rx90' has n = 6" in message
    assert "give a log of this robot, or a model of every logged joint" in message


def test_identify_names_the_gravity_of_a_wall_mounted_arm_and_takes_it(tmp_path):
    """A Panda on a wall (gravity along +x of its base): with the model's floor gravity the command warns with the
    vector the torques fit and the --gravity option that gives it; with --gravity the warning is gone."""
    panda = rd.load("panda")
    q, qd, qdd = np.random.default_rng(3).uniform(-1, 1, (3, 2000, 7))
    tau = rd.inverse_dynamics(panda, q, qd, qdd, gravity=[9.81, 0.0, 0.0])
    wall = tmp_path / "wall.csv"
    header = [f"{p}{k}" for p in ("q", "qd", "qdd", "tau") for k in range(1, 8)]
    with open(wall, "w", newline="") as fh:
        csv.writer(fh).writerows([header] + np.column_stack([q, qd, qdd, tau]).tolist())
    res = run("identify", "panda", wall, "--method", "ols")
    assert res.exit_code == 0, res.output
    flat = " ".join(res.output.split())
    assert "is the arm mounted on a wall" in flat and "--gravity=9.81,0.0,0.0" in flat.replace(" ", "")
    res = run("identify", "panda", wall, "--method", "ols", "--gravity", "9.81,0,0")
    assert res.exit_code == 0 and "mounted" not in res.output, res.output
    res = run("identify", "panda", wall, "--gravity", "9.81,0")
    assert res.exit_code == 2 and "--gravity has 2 numbers; give 3" in res.output
    res = run("identify", "panda", wall, "--gravity", "nan,0,0")
    assert res.exit_code == 2 and "3 finite numbers" in res.output


def test_identify_weights(files):
    """--weights is rd.identify's weights=: n numbers, or one for every joint (--weights 1: "physical" unweighted,
    instead of the default's Gautier weights, which the statistics record); a wrong count is a one-line error."""
    robot = rd.load(files["model"])
    t, q, tau = columns(files["measured"], "t", "q", "tau")
    data = rd.identification.prepare_identification_data(t, q, tau)
    for option, weights in (("1,2,4", np.array([1.0, 2.0, 4.0])), ("1", 1.0), (None, None)):
        res = run("identify", files["model"], files["measured"], "--method", "ols", "--json",
                  *(() if option is None else ("--weights", option)))
        assert res.exit_code == 0, res.output
        got = json.loads(res.stdout)
        want = rd.identify(robot, data, method="ols", weights=weights)
        np.testing.assert_allclose([p["value"] for p in got["parameters"]], want.values, rtol=1e-10,
                                   atol=1e-12 * np.abs(want.values).max())
        np.testing.assert_array_equal(got["weights"], np.broadcast_to(1.0 if weights is None else weights, 3))
    res = run("identify", files["model"], files["measured"], "--json")
    assert res.exit_code == 0, res.output
    np.testing.assert_allclose(json.loads(res.stdout)["weights"], rd.identify(robot, data).weights, rtol=1e-12)
    res = run("identify", files["model"], files["measured"], "--weights", "1", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["weights"] == [1.0, 1.0, 1.0]
    for bad in ("1,2", "0", "a,b,c"):
        res = run("identify", files["model"], files["measured"], "--weights", bad)
        assert res.exit_code == 2 and "weights" in res.output, res.output
