"""Identification with motors and coupled transmissions (Khalil & Dombre [9.29]–[9.33], De Luca): the motor
parameters Iam, Fcm, Fvm in the regressor, the base parameters and the estimates; motor-side data; transmission
files and the `identify --transmission` command."""

import csv
import json

import numpy as np
import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app
from robodyn.dynamics.transmission import (
    Transmission,
    joint_torques_from_motor,
    load_transmission,
    motor_inverse_dynamics,
    transmission_torques,
)

#: A Stäubli-like wrist: motor 6 turns with q5 + q6 (q_m6 = 50 q5 + 50 q6); motors 1-5 drive one joint each.
J_MQ = np.diag([100.0, 100.0, 80.0, 60.0, 60.0, 50.0])
J_MQ[5, 4] = 50.0
MOTORS = dict(J_m=np.arange(1, 7) * 1e-5, Fv_m=np.arange(1, 7) * 1e-4, Fc_m=np.arange(1, 7) * 1e-3)


@pytest.fixture(scope="module")
def arm():
    return rd.load("rx90").replace(Fc=np.full(6, 0.5), Fv=np.full(6, 0.3), Foff=np.full(6, 0.1))


@pytest.fixture(scope="module")
def samples():
    q, qd, qdd = np.random.default_rng(1).uniform(-2, 2, size=(3, 400, 6))
    return q, qd, qdd


def test_regressor_equals_the_motor_side_model(arm, samples):
    """D_tr K_tr = J_mqᵀ τ_m of motor_inverse_dynamics (an independent path: Newton–Euler plus rotor terms)."""
    tr = Transmission.from_motor_matrix(J_MQ, **MOTORS)
    links = arm.replace(Ia=np.zeros(6))
    q, qd, qdd = samples
    tau_m = motor_inverse_dynamics(links, tr, q @ J_MQ.T, qd @ J_MQ.T, qdd @ J_MQ.T)
    D = rd.regressor(links, q, qd, qdd, transmission=tr)
    K = rd.parameters.standard_parameter_vector(links, transmission=tr)
    ref = joint_torques_from_motor(tr, tau_m)
    np.testing.assert_allclose(D @ K, ref, rtol=0, atol=1e-10 * np.abs(ref).max())
    np.testing.assert_allclose(transmission_torques(tr, qd, qdd), ref - rd.inverse_dynamics(links, q, qd, qdd),
                               rtol=0, atol=1e-10 * np.abs(ref).max())
    names = rd.parameters.standard_parameter_names(links, transmission=tr)
    assert names[-3:] == ["Iam6", "Fcm6", "Fvm6"] and len(names) == D.shape[-1] == 11 * 6 + 18 + 18
    assert rd.regressor(links, q, qd, qdd, friction=False, transmission=tr).shape[-1] == 66 + 6


def test_base_parameters_group_single_joint_motors_and_keep_the_coupled_one(arm):
    tr = Transmission.from_motor_matrix(J_MQ)
    bp = rd.base_parameters(arm, friction=True, transmission=tr)
    plain = rd.base_parameters(arm, friction=True)
    motor = [n for n in bp.names if n[:3] in ("Iam", "Fcm", "Fvm")]
    assert motor == ["Iam6", "Fcm6", "Fvm6"]  # motor 6 turns with two joints: new columns
    assert bp.count == plain.count + 3
    eq = {str(e.lhs): str(e.rhs) for e in bp.equations}
    assert eq["IaR5"] == "Ia5 + 3600*Iam5" and eq["FcR5"] == "Fc5 + 60*Fcm5" and eq["FvR5"] == "Fv5 + 3600*Fvm5"
    assert "Iam5" in bp.grouped and "Iam6" not in bp.grouped


def test_diagonal_transmission_gives_todays_result_exactly(arm, samples):
    q, qd, qdd = samples
    tau = rd.inverse_dynamics(arm, q, qd, qdd) + np.random.default_rng(2).normal(0, 0.01, q.shape)
    gears = Transmission.gears(np.diag(J_MQ))
    plain = rd.base_parameters(arm, friction=True)
    geared = rd.base_parameters(arm, friction=True, transmission=gears)
    assert np.array_equal(plain.columns, geared.columns)
    # the parameters that received motor terms get Khalil's R, nothing else changes
    renamed = {a: b for a, b in zip(plain.names, geared.names) if a != b}
    assert renamed["Ia5"] == "IaR5" and renamed["Fc1"] == "FcR1" and "ZZR1" not in renamed
    assert all(b[:-1] + "" == a[:-1].rstrip("R") + "R" or b == a.rstrip("0123456789") + "R" + a[len(a.rstrip("0123456789")):]
               for a, b in renamed.items())
    for method in ("ols", "wls", "irls"):
        a = rd.identify(arm, q, qd, qdd, tau, method=method, base=plain)
        b = rd.identify(arm, q, qd, qdd, tau, method=method, transmission=gears, base=geared)
        for key in ("values", "std", "covariance", "residual_rms", "noise"):
            assert np.array_equal(getattr(a, key), getattr(b, key)), (method, key)


def test_coupled_wrist_noise_free_recovers_every_motor_parameter(arm, samples):
    """Noise-free data of a robot with a coupling matrix: every motor parameter to 1e-8 relative."""
    q, qd, qdd = samples
    real = Transmission.from_motor_matrix(J_MQ, **MOTORS)
    tau = rd.inverse_dynamics(arm, q, qd, qdd) + transmission_torques(real, qd, qdd)
    tr = Transmission.from_motor_matrix(J_MQ)  # motor constants unknown
    res = rd.identify(arm, q, qd, qdd, tau, transmission=tr, method="ols")
    truth = rd.base_parameters(arm, friction=True, transmission=real).values
    for name in ("Iam6", "Fcm6", "Fvm6"):
        k = res.names.index(name)
        assert abs(res.values[k] - truth[k]) <= 1e-8 * abs(truth[k]), name
    for name in ("IaR5", "FcR5", "FvR5", "IaR4", "FcR1"):  # single-joint motors, grouped with the joint's own
        k = res.names.index(name)
        assert abs(res.values[k] - truth[k]) <= 1e-8 * abs(truth[k]), name
    np.testing.assert_allclose(res.values, truth, rtol=0, atol=1e-8 * np.abs(truth).max())
    np.testing.assert_allclose(res.predict(q, qd, qdd), tau, rtol=0, atol=1e-8 * np.abs(tau).max())
    # without the coupling columns the model cannot express the robot
    plain = rd.identify(arm, q, qd, qdd, tau, method="ols")
    assert plain.residual_rms[4] > 1e3 * res.residual_rms[4]


def test_physical_with_transmission_is_consistent_and_reports_the_solver(arm, samples):
    q, qd, qdd = samples
    real = Transmission.from_motor_matrix(J_MQ, **MOTORS)
    tau = rd.inverse_dynamics(arm, q, qd, qdd) + transmission_torques(real, qd, qdd)
    res = rd.identify(arm, q, qd, qdd, tau, method="physical", transmission=Transmission.from_motor_matrix(J_MQ))
    s = res.solver
    assert s["name"] == "CLARABEL" and s["status"] == "optimal" and s["warnings"] == ""
    assert s["constraint_violation"] < 1e-8
    motors = res.identified_transmission
    assert np.array_equal(motors.J_mq, J_MQ)
    assert np.all(motors.J_m >= 0) and np.all(motors.Fc_m >= 0) and np.all(motors.Fv_m >= 0)
    k = res.names.index("Iam6")
    assert motors.J_m[5] == pytest.approx(res.values[k], rel=1e-6)
    assert motors.J_m[5] == pytest.approx(MOTORS["J_m"][5], rel=1e-4)
    assert motors.Fc_m[5] == pytest.approx(MOTORS["Fc_m"][5], rel=1e-4)
    # the identified robot and motors reproduce the fit
    pred = rd.inverse_dynamics(res.robot, q, qd, qdd) + transmission_torques(motors, qd, qdd)
    np.testing.assert_allclose(pred, res.predict(q, qd, qdd), rtol=0, atol=1e-8 * np.abs(tau).max())


def test_motor_side_data_to_joint_side():
    """q = J_qm q_m, Γ = J_mqᵀ (k ⊙ u): drive commands u (currents) with drive gains k."""
    tr = Transmission.from_motor_matrix(J_MQ, gains=[0.5, 0.5, 0.4, 0.3, 0.3, 0.2])
    rng = np.random.default_rng(3)
    q, tau = rng.normal(size=(2, 5, 6))
    qm = q @ J_MQ.T
    u = rd.dynamics.actuator_torques(tr, tau) / tr.gains
    np.testing.assert_allclose(rd.dynamics.joint_from_motor(tr, qm), q, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(joint_torques_from_motor(tr, u), tau, rtol=1e-12, atol=1e-12)
    assert np.array_equal(Transmission.gears([2.0, 3.0]).J_mq, np.diag([2.0, 3.0]))
    assert np.all(Transmission.from_motor_matrix(J_MQ).J_m == 0)  # motor inertias not required


def test_bad_transmissions(arm, samples, tmp_path):
    q, qd, qdd = samples
    with pytest.raises(rd.InputError, match=r"transmission has 3 motors but robot 'rx90' has n = 6 joints"):
        rd.identify(arm, q, qd, qdd, q, transmission=Transmission.gears([1.0, 2.0, 3.0]))
    with pytest.raises(rd.InputError, match="argument 'transmission' is"):
        rd.regressor(arm, q[:2], qd[:2], qdd[:2], transmission=np.eye(6))
    singular = J_MQ.copy()
    singular[5] = singular[4]
    with pytest.raises(rd.ModelError, match="J_mq is singular"):
        Transmission.from_motor_matrix(singular)
    with pytest.raises(rd.ModelError, match=r"gains = \[1.0, 0.0\]"):
        Transmission.gears([1.0, 2.0], gains=[1.0, 0.0])
    with pytest.raises(rd.InputError, match="base: give the BaseParameters of this robot with the same friction "
                                            "setting and transmission"):
        rd.identify(arm, q, qd, qdd, q, base=rd.base_parameters(arm, friction=True),
                    transmission=Transmission.from_motor_matrix(J_MQ))


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_transmission_files(tmp_path):
    good = write(tmp_path / "tr.yaml", "gear_ratios: [100, 100, 80, 60, 60, 50]\ncoupling:\n"
                 "  - {motor: 6, joint: 5, value: 50}\ndrive_gains: [1, 1, 1, 0.5, 0.5, 0.25]\n")
    tr = load_transmission(good, 6)
    assert np.array_equal(tr.J_mq, J_MQ) and tr.gains[5] == 0.25
    full = write(tmp_path / "full.yaml", f"motor_matrix: {J_MQ.tolist()}\n")
    assert np.array_equal(load_transmission(full).J_mq, J_MQ)
    cases = {
        "gear_ratios: [1, 2]\n": (rd.ModelFileError, r"2 motors but the robot has n = 6 joints"),
        "gear_ratios: [1, 1, 1, 1, 1, 1]\ncoupling:\n  - {motor: 6, joint: 6, value: 2}\n":
            (rd.ModelFileError, "coupling entry 1: motor 6, joint 6; give two different numbers from 1 to 6"),
        "gear_ratios: [1, 1, 1, 1, 1, 1]\ncoupling:\n  - {motor: 6, joint: 5, value: 1}\n"
        "  - {motor: 5, joint: 6, value: 1}\n": (rd.ModelError, "J_mq is singular"),
        "gear_ratios: [1, 1, 1, 1, 1, 1]\nratio: 3\n": (rd.ModelFileError, r"unknown key\(s\) 'ratio'"),
        "gear_ratios: [1, 1, 1, 1, 1, 1]\nmotor_matrix: [[1]]\n": (rd.ModelFileError, "either gear_ratios"),
        "gear_ratios: [1, 1, 1, 1, 1, x]\n": (rd.ModelFileError, "gear_ratios must hold numbers"),
        "gear_ratios: &a [1, 1, 1, 1, 1, 1]\ndrive_gains: *a\n": (rd.ModelFileError, "alias|anchor"),
        "gear_ratios: [1, 1, 1, 1, 1, 1]\ndrive_gains: [1, 1]\n": (rd.ModelFileError, r"drive_gains has shape \(2,\)"),
    }
    for k, (text, (error, message)) in enumerate(cases.items()):
        with pytest.raises(error, match=message):
            load_transmission(write(tmp_path / f"bad{k}.yaml", text), 6)


runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def motor_files(arm, tmp_path_factory):
    """A coupled-wrist robot measured on the motor side: motor encoders and motor currents."""
    folder = tmp_path_factory.mktemp("motor")
    model = folder / "arm.yaml"
    rd.save(arm, model)
    gains = np.array([0.5, 0.5, 0.4, 0.3, 0.3, 0.2])
    (folder / "tr.yaml").write_text("gear_ratios: [100, 100, 80, 60, 60, 50]\ncoupling:\n"
                                    "  - {motor: 6, joint: 5, value: 50}\n"
                                    f"drive_gains: {gains.tolist()}\n", encoding="utf-8")
    real = Transmission.from_motor_matrix(J_MQ, **MOTORS, gains=gains)
    t = np.arange(0, 6, 0.002)
    w = 2 * np.pi * np.array([0.3, 0.25, 0.4, 0.35, 0.5, 0.45])
    q = 0.8 * np.sin(w * t[:, None] + np.arange(6)) + 0.3 * np.sin(3 * w * t[:, None])
    qd = 0.8 * w * np.cos(w * t[:, None] + np.arange(6)) + 0.9 * w * np.cos(3 * w * t[:, None])
    qdd = -0.8 * w ** 2 * np.sin(w * t[:, None] + np.arange(6)) - 2.7 * w ** 2 * np.sin(3 * w * t[:, None])
    tau = rd.inverse_dynamics(arm, q, qd, qdd) + transmission_torques(real, qd, qdd)
    u = rd.dynamics.actuator_torques(real, tau) / gains
    header = ["t"] + [f"qm{k}" for k in range(1, 7)] + [f"taum{k}" for k in range(1, 7)]
    data = folder / "motor.csv"
    with open(data, "w", newline="") as fh:
        csv.writer(fh).writerows([header] + np.column_stack([t, q @ J_MQ.T, u]).tolist())
    return {"folder": folder, "model": model, "tr": folder / "tr.yaml", "data": data, "truth": real}


def test_cli_identify_motor_side_csv_with_transmission(arm, motor_files):
    f = motor_files
    out = f["folder"] / "result.yaml"
    res = run("identify", f["model"], f["data"], "--transmission", f["tr"], "--json", "--out", out)
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["motor_side_data"] and d["transmission"]["motor_matrix"][5][4] == 50.0
    values = {p["name"]: p["value"] for p in d["parameters"]}
    truth = dict(zip(*(lambda b: (b.names, b.values))(rd.base_parameters(arm, friction=True,
                                                                          transmission=f["truth"]))))
    # filtered data: the inertia of motor 6 to a fraction of a percent (Coulomb steps are smoothed, see the docs)
    assert values["Iam6"] == pytest.approx(truth["Iam6"], rel=0.02)
    assert values["Fvm6"] == pytest.approx(truth["Fvm6"], rel=0.05)
    assert out.is_file()


def test_cli_motor_side_errors_write_nothing(motor_files, tmp_path):
    f = motor_files
    out = tmp_path / "r.yaml"
    bad_cols = tmp_path / "bad.csv"
    bad_cols.write_text("t,qm1,qm2,qm3,qm4,qm5,taum1,taum2,taum3,taum4,taum5,taum6\n" + "0,0,0,0,0,0,0,0,0,0,0,0\n",
                        encoding="utf-8")
    mixed = tmp_path / "mixed.csv"
    mixed.write_text("t,q1,qm2\n0,0,0\n", encoding="utf-8")
    small = write(tmp_path / "small.yaml", "gear_ratios: [1, 2]\n")
    cases = [
        (["--transmission", f["tr"]], bad_cols, "columns qm1..qm5 hold 5 joints; robot 'rx90' has n = 6"),
        (["--transmission", f["tr"]], mixed, "both motor-side (qm, taum) and joint-side (q1)"),
        ([], f["data"], "motor-side columns (qm1, qm2, qm3...) need the coupling: give --transmission"),
        (["--transmission", small], f["data"], "2 motors but the robot has n = 6 joints"),
    ]
    for extra, data, message in cases:
        res = run("identify", f["model"], data, *extra, "--out", out)
        assert res.exit_code == 2, res.output
        assert message in " ".join(res.output.split()), res.output
        assert not out.exists()


from hypothesis import given, settings, strategies as st  # noqa: E402

from robodyn.parameters.numeric import random_states  # noqa: E402
from tests.support.random_robots import random_robot, random_state  # noqa: E402


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), tree=st.booleans())
def test_random_robots_and_couplings_regressor_equals_motor_model(seed, tree):
    """Any robot, any invertible coupling: D_tr K_tr = J_mqᵀ τ_m of motor_inverse_dynamics, and noise-free
    identification with the transmission reproduces the torques."""
    robot = random_robot(seed, tree=tree)
    links = robot.replace(Ia=np.zeros(robot.nf))
    n = robot.n
    rng = np.random.default_rng(seed)
    J = np.diag(rng.uniform(5, 100, n) * rng.choice([-1, 1], n)) + np.triu(rng.uniform(-20, 20, (n, n)) *
                                                                           (rng.random((n, n)) < 0.3), 1)
    tr = Transmission.from_motor_matrix(J, J_m=rng.uniform(1e-5, 1e-3, n), Fv_m=rng.uniform(0, 1e-2, n),
                                        Fc_m=rng.uniform(0, 0.1, n))
    q, qd, qdd = random_state(links, seed + 1, (6,))
    tau_m = motor_inverse_dynamics(links, tr, q @ J.T, qd @ J.T, qdd @ J.T)
    ref = joint_torques_from_motor(tr, tau_m)
    D = rd.regressor(links, q, qd, qdd, transmission=tr)
    np.testing.assert_allclose(D @ rd.parameters.standard_parameter_vector(links, transmission=tr), ref, rtol=0,
                               atol=1e-10 * max(np.abs(ref).max(), 1.0))
    # noise-free identification with the transmission reproduces the torques of the motor-side model
    qs, qds, qdds = random_states(links, 200, seed + 2)  # the distribution of the numeric base parameters
    taus = joint_torques_from_motor(tr, motor_inverse_dynamics(links, tr, qs @ J.T, qds @ J.T, qdds @ J.T))
    bp = rd.base_parameters(links, method="numeric", friction=True, transmission=tr)
    res = rd.identify(links, qs, qds, qdds, taus, base=bp, transmission=tr, method="ols")
    # the documented accuracy, ε cond(W_scaled)² (these random robots are often badly scaled)
    W = bp.regressor(qs, qds, qdds).reshape(-1, bp.count)
    cond = np.linalg.cond(W / np.linalg.norm(W, axis=0))
    tol = max(1e-10, 10 * np.finfo(float).eps * cond ** 2)
    np.testing.assert_allclose(res.predict(qs, qds, qdds), taus, rtol=0, atol=tol * max(np.abs(taus).max(), 1.0))


def test_calibrate_gravity_from_motor_torques():
    """Static poses with motor-side torques of a coupled wrist: the same calibration as from joint torques."""
    wam = rd.load("wam7")
    tr = Transmission.from_motor_matrix(np.array([
        [-42.0, 0, 0, 0, 0, 0, 0], [0, 28.25, -16.8155, 0, 0, 0, 0], [0, -28.25, -16.8155, 0, 0, 0, 0],
        [0, 0, 0, -18.0, 0, 0, 0], [0, 0, 0, 0, 9.7, -9.7, 0], [0, 0, 0, 0, 9.7, 9.7, 0], [0, 0, 0, 0, 0, 0, -14.93]]),
        gains=np.full(7, 0.5))
    q = rd.identification.calibration_poses(wam, 20, seed=0)
    tau = rd.gravity_torques(wam, q)
    u = rd.dynamics.actuator_torques(tr, tau) / tr.gains
    a = rd.identification.calibrate_gravity(wam, q, tau)
    b = rd.identification.calibrate_gravity(wam, q, u, transmission=tr)
    np.testing.assert_allclose(b.mu, a.mu, rtol=0, atol=1e-10)
    with pytest.raises(rd.InputError, match="transmission has 2 motors"):
        rd.identification.calibrate_gravity(wam, q, u, transmission=Transmission.gears([1.0, 2.0]))
