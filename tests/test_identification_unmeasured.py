"""Joints without a torque sensor: their equations are left out of the fit.

An arm with torque sensors on its first joints only logs its other joints' torques as 0 (a public dual-arm data
set: joints 1–4 measured, 5–7 all 0).  Such a torque holds one value in every sample; before, the preparation
flagged it as clipped and ``rd.identify`` refused the whole fit ("every sample of joint 5 is clipped").  Now the
default leaves those joints' equations out with a UserWarning (``weights`` 0 in the result), and ``weights`` with 0
does the same silently.  The measured joints' torques still carry the inertia of every link they move, so on
noise-free data the fit predicts them exactly; "physical" holds what only the left-out equations would carry
(their friction, rotor inertia) at the model's values, the least-squares methods cannot identify it and say so.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import robodyn as rd
from robodyn.errors import InputError
from robodyn.identification.data import prepare_identification_data
from robodyn.identification.factors import IdentificationError
from robodyn.identification.solvers import gautier_weights

MEASURED = 4  # joints 1..4 have a torque sensor, 5 and 6 do not


def motion(robot, seed: int, count: int = 3000, rate: float = 100.0):
    """A continuous motion of sums of sines (t, q, q̇, q̈), exact derivatives."""
    rng = np.random.default_rng(seed)
    t = np.arange(count) / rate
    w = 2 * np.pi * np.array([0.07, 0.13, 0.21, 0.29])
    a, b = rng.uniform(-0.5, 0.5, (2, 4, robot.n))
    s, c = np.sin(np.outer(t, w)), np.cos(np.outer(t, w))
    return t, s @ a + c @ b, (c * w) @ a - (s * w) @ b, -(s * w ** 2) @ a - (c * w ** 2) @ b


@pytest.fixture(scope="module")
def arm():
    robot = rd.load("rx90")
    _, q, qd, qdd = motion(robot, 0)
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    logged = tau.copy()
    logged[:, MEASURED:] = 0.0  # no sensor: the channel reads 0
    _, q2, qd2, qdd2 = motion(robot, 1)
    return robot, (q, qd, qdd, logged), (q2, qd2, qdd2, rd.inverse_dynamics(robot, q2, qd2, qdd2))


def left_out_warnings(record) -> list[str]:
    return [str(w.message) for w in record if "holds one value in every sample" in str(w.message)]


def test_the_default_leaves_the_unmeasured_joints_out_and_predicts_the_measured_ones(arm):
    robot, data, (q2, qd2, qdd2, tau2) = arm
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        res = rd.identify(robot, *data, position_terms=None)
    (message,) = left_out_warnings(record)
    assert "joint(s) 5 (" in message and "6 (" in message and "weight 0" in message
    np.testing.assert_array_equal(res.weights[MEASURED:], 0.0)
    assert np.all(res.weights[:MEASURED] > 0)
    np.testing.assert_array_equal(res.equations, [len(data[0])] * MEASURED + [0] * (robot.n - MEASURED))
    assert np.isnan(res.noise[MEASURED:]).all() and np.isnan(res.residual_rms[MEASURED:]).all()
    assert np.isfinite(res.noise[:MEASURED]).all()
    d = res.to_dict()
    assert d["noise_std"][MEASURED:] == [None, None] and d["weights"][MEASURED:] == [0.0, 0.0]
    # noise-free: the measured joints' held-out torques are the model's, to the fit's rounding
    pred = res.predict(q2, qd2, qdd2)
    scale = np.abs(tau2[:, :MEASURED]).max()
    assert np.abs(pred[:, :MEASURED] - tau2[:, :MEASURED]).max() <= 1e-7 * scale
    assert res.model.n == robot.n and np.all(np.isfinite(pred))


def test_weight_zero_leaves_a_joint_out_silently_and_a_weight_on_a_constant_torque_is_refused(arm):
    robot, data, (q2, qd2, qdd2, tau2) = arm
    w = np.array([1.0] * MEASURED + [0.0] * (robot.n - MEASURED))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        res = rd.identify(robot, *data, weights=w, position_terms=None)
    assert not left_out_warnings(record)
    np.testing.assert_array_equal(res.weights, w)
    assert np.abs(res.predict(q2, qd2, qdd2)[:, :MEASURED] - tau2[:, :MEASURED]).max() <= 1e-7 * np.abs(tau2).max()
    with pytest.raises(InputError, match=r"joint\(s\) 6 holds one value in every sample.*weight 0"):
        rd.identify(robot, *data, weights=[1, 1, 1, 1, 0, 1])
    with pytest.raises(InputError, match="weights are all 0"):
        rd.identify(robot, *data, weights=0)
    with pytest.raises(InputError, match="finite weights >= 0"):
        rd.identify(robot, *data, weights=[1, 1, 1, 1, -1, 0])


def test_a_measured_joint_given_weight_zero_is_left_out_too(arm):
    """Weight 0 on a joint whose torque was measured: its equations are not fitted (the residual of the fit says
    nothing of it), yet the model still predicts it from the other joints' data and the model's values."""
    robot, (q, qd, qdd, _), (q2, qd2, qdd2, tau2) = arm
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    res = rd.identify(robot, q, qd, qdd, tau, weights=[1, 1, 1, 0, 1, 1], position_terms=None)
    assert res.weights[3] == 0 and res.equations[3] == 0 and np.isnan(res.residual_rms[3])
    assert np.abs(res.predict(q2, qd2, qdd2) - tau2).max() <= 1e-7 * np.abs(tau2).max()


def test_prepared_data_with_constant_channels(arm):
    """The data set's path: the preparation flags a constant channel as clipped on every sample (filtered, a
    constant other than 0 is no longer exactly one value), and the fit leaves the joint out instead of refusing
    it; a held-out run prepared alike is scored on the measured joints only."""
    robot, (q, qd, qdd, logged), (q2, qd2, qdd2, tau2) = arm
    t = np.arange(len(q)) / 100.0
    logged = logged.copy()
    logged[:, 5] = 0.37  # a channel that reads an offset
    data = prepare_identification_data(t, q, logged, cutoff=10.0)
    assert data.saturated[:, MEASURED:].all()
    assert "no torque measured (one value in every sample): joint 5, joint 6" in data.report()["summary"]
    with pytest.warns(UserWarning, match=r"joint\(s\) 5 \(.*6 \(.* holds one value in every sample"):
        res = rd.identify(robot, data)
    np.testing.assert_array_equal(res.equations[MEASURED:], 0)
    assert res.converged
    held = tau2.copy()
    held[:, MEASURED:] = [0.0, 0.37]
    val = res.validate([prepare_identification_data(t, q2, held, cutoff=10.0)])
    np.testing.assert_array_equal(val.samples[MEASURED:], 0)
    assert np.isfinite(val.relative_rms_percent[:MEASURED]).all()


def test_least_squares_report_what_only_the_left_out_equations_carry_at_the_models_values(arm):
    """OLS, WLS and IRLS fit the parameters in the measured joints' equations (exactly, on noise-free data) and
    report those in no equation left — the left-out joints' friction, offset and rotor inertia — at the model's
    values with NaN standard deviations; a position term asked for a left-out joint is in no equation either, and
    the error says that the joint is left out."""
    robot, data, (q2, qd2, qdd2, tau2) = arm
    bp = rd.base_parameters(robot, friction=True)
    absent = [k for k, name in enumerate(bp.names) if name in ("Ia5", "Ia6", "Fc5", "Fv5", "Foff5", "Fc6", "Fv6",
                                                               "Foff6")]
    for method in ("ols", "wls", "irls"):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            res = rd.identify(robot, *data, method=method, position_terms=None)
        (held,) = [str(w.message) for w in record if "in no equation" in str(w.message)]
        assert "8 of the 58 base parameters are in no equation (Ia5, Ia6, Fc5" in held
        np.testing.assert_array_equal(np.flatnonzero(np.isnan(res.std)), absent)
        np.testing.assert_array_equal(res.values[absent], bp.values[absent])
        assert np.isnan(res.covariance[absent]).all() and np.isfinite(np.delete(res.std, absent)).all()
        # the measured joints' equations determine the rest: the model's torques to the fit's rounding
        np.testing.assert_allclose(np.delete(res.values, absent), np.delete(bp.values, absent), rtol=0,
                                   atol=1e-9 * np.abs(bp.values).max())
        assert np.abs(res.predict(q2, qd2, qdd2) - tau2).max() <= 1e-9 * np.abs(tau2).max()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(IdentificationError, match=r"joint\(s\) 5, 6 are left out of the fit"):
            rd.identify(robot, *data, method="ols", position_terms=(4,))  # sin q5, cos q5: in no equation left


def test_validation_does_not_score_a_joint_without_a_measured_torque(arm):
    robot, data, (q2, qd2, qdd2, tau2) = arm
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = rd.identify(robot, *data, position_terms=None)
    held = tau2.copy()
    held[:, MEASURED:] = 0.0
    val = res.validate(q2, qd2, qdd2, held)
    assert np.isnan(val.relative_rms_percent[MEASURED:]).all() and np.isnan(val.rms[MEASURED:]).all()
    np.testing.assert_array_equal(val.samples, [len(q2)] * MEASURED + [0] * (robot.n - MEASURED))
    assert val.relative_rms_percent[:MEASURED].max() < 1e-5
    assert val.mean_relative_rms_percent == pytest.approx(np.mean(val.relative_rms_percent[:MEASURED]))
    d = val.to_dict()
    assert d["relative_rms_percent"][MEASURED:] == [None, None] and d["rms"][MEASURED:] == [None, None]
    with pytest.raises(InputError, match="nothing was measured"):
        res.validate(q2, qd2, qdd2, np.zeros_like(tau2))


def test_gautier_weights_leave_the_left_out_joints_at_zero_and_out_of_the_median():
    noise = np.array([0.1, 0.2, 0.05, 0.0])
    rms = np.array([10.0, 5.0, 1.0, 0.0])
    w = gautier_weights(noise, rms, left_out=(3,))
    np.testing.assert_allclose(w[:3], [1.0, 0.25, 4.0], rtol=1e-15)  # 1/σ², the median of the fitted joints 1
    assert w[3] == 0.0


def test_the_cluster_path_leaves_the_same_joints_out(arm):
    pytest.importorskip("dask")
    import dask
    import dask.array as da

    robot, data, _ = arm
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = rd.identify(robot, *data, position_terms=None)
    with dask.config.set(scheduler="synchronous"):
        with pytest.warns(UserWarning, match="holds one value in every sample"):
            res = rd.identify(robot, *(da.from_array(x, chunks=(700, robot.n)) for x in data), position_terms=None)
    np.testing.assert_array_equal(res.equations, ref.equations)
    np.testing.assert_array_equal(res.weights == 0, ref.weights == 0)
    assert np.abs(res.values - ref.values).max() <= 1e-8 * np.abs(ref.values).max()


def test_a_fleet_refuses_joints_left_out(arm):
    pytest.importorskip("dask")
    import dask.array as da

    from robodyn import distributed as dd

    robot, data, _ = arm
    samples = dd.Samples(*[da.from_array(x, chunks=(700, robot.n)) for x in data], robot=np.zeros(len(data[0]), int),
                         robots=("solo",))
    with pytest.raises(InputError, match=r"per_robot: .*joint\(s\) 5, 6 .*per_robot=None"):
        rd.identify(robot, samples, per_robot=("friction",))


def test_identify_command_shows_the_joints_left_out(arm, tmp_path):
    """`robodyn identify` on a log whose last joints read 0: the warning, no residual or relative error for them
    (— in the table, null in the JSON), 0 rows fitted, and a held-out table that does not score them."""
    import json

    from typer.testing import CliRunner

    from robodyn.cli import app

    robot, (q, _, _, logged), _ = arm
    log = tmp_path / "log.csv"
    header = ["t"] + [f"q{j + 1}" for j in range(robot.n)] + [f"tau{j + 1}" for j in range(robot.n)]
    np.savetxt(log, np.column_stack([np.arange(len(q)) / 100.0, q, logged]), delimiter=",",
               header=",".join(header), comments="")
    runner = CliRunner()
    res = runner.invoke(app, ["identify", "rx90", str(log), "--validate", str(log), "--json"])
    assert res.exit_code == 0, res.output
    assert "holds one value in every sample" in res.stderr
    out = json.loads(res.stdout)
    for row in out["fit"][MEASURED:]:
        assert row["rows"] == 0 and row["residual_rms"] is None and row["relative_percent"] is None
    assert all(row["rows"] > 0 and row["residual_rms"] >= 0 for row in out["fit"][:MEASURED])
    table = runner.invoke(app, ["identify", "rx90", str(log), "--validate", str(log)])
    assert table.exit_code == 0, table.output
    lines = [line for line in table.stdout.splitlines() if line.startswith("│ 5 ")]
    assert len(lines) == 2 and all("—" in line for line in lines)  # the fit's table and the held-out one


def test_irls_with_a_joint_left_out_has_no_nan_scale_and_equals_the_cluster_path(arm):
    """IRLS's per-joint scales, medians and covariance leave out the joints without rows (a left-out joint's
    all-NaN residual column made every joint's scale NaN); with outliers it still beats OLS on the measured
    joints' parameters, and the cluster path gives the same estimate."""
    pytest.importorskip("dask")
    import dask
    import dask.array as da

    robot, (q, qd, qdd, logged), _ = arm
    rng = np.random.default_rng(3)
    tau = logged + rng.normal(0.0, 0.05, logged.shape) * (np.arange(robot.n) < MEASURED)
    tau[::97, :MEASURED] += 5.0  # outliers
    bp = rd.base_parameters(robot, friction=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("error", RuntimeWarning)  # no all-NaN medians
        ols = rd.identify(robot, q, qd, qdd, tau, method="ols", position_terms=None)
        res = rd.identify(robot, q, qd, qdd, tau, method="irls", position_terms=None)
        with dask.config.set(scheduler="synchronous"):
            lazy = rd.identify(robot, *(da.from_array(x, chunks=(700, robot.n)) for x in (q, qd, qdd, tau)),
                               method="irls", position_terms=None)
    fitted = np.isfinite(res.std)
    assert res.converged and np.isnan(res.noise[MEASURED:]).all() and np.isfinite(res.noise[:MEASURED]).all()
    assert np.abs(res.values - bp.values)[fitted].max() < 0.5 * np.abs(ols.values - bp.values)[fitted].max()
    assert np.abs(lazy.values - res.values).max() <= 1e-10 * np.abs(res.values).max()


def test_essential_parameters_of_a_fit_with_joints_left_out(arm):
    """The essential parameters of such a fit: the left-out joints' rows are not used (their constant torque was
    an error: 'every sample of joint 5 is clipped'), and the parameters in no equation left are no candidates."""
    robot, (q, qd, qdd, logged), _ = arm
    tau = logged + np.random.default_rng(4).normal(0.0, 0.05, logged.shape) * (np.arange(robot.n) < MEASURED)
    for method in ("physical", "wls"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            res = rd.identify(robot, q, qd, qdd, tau, method=method, position_terms=None)
        ess = rd.identification.essential_parameters(res, q, qd, qdd, tau)
        gone = {"Ia5", "Ia6", "Fc5", "Fv5", "Foff5", "Fc6", "Fv6", "Foff6"}
        assert not gone & (set(ess.names) | set(ess.removed))
        assert ess.relative_error <= 1.05 * ess.full_relative_error + 1e-12
