"""Smooth motor-Coulomb columns (Gautier's parallel filtering; De Luca's motor model, [9.29]–[9.33]): with data
prepared with ``parallel=True`` and a transmission, ``rd.identify(robot, data, transmission=...)`` puts
sign(q̇_m), q̇_m = J_mq q̇ of the full-rate filtered states, filtered, trimmed and decimated exactly as τ, in the
motors' Coulomb columns F_cm sign(q̇_m), as it does for the joints' sign(q̇).  On a simulated coupled wrist
(motor 6 turns with q5 + q6) the sharp signs put F_cm6 low and F_vm6 high by tens of per cent at the reversals;
the smooth ones remove that bias."""

import numpy as np
import pytest

import robodyn as rd
from robodyn.dynamics.transmission import Transmission
from robodyn.identification.samples import filtered_coulomb
from tests.support.checks import WRIST_J_MQ as J_MQ, coupled_wrist_log


@pytest.fixture(scope="module")
def log():
    """20 s at 200 Hz of a continuous motion (sums of sines, every joint and motor reverses), exact torques."""
    arm, real, t, q, _, _, tau = coupled_wrist_log()
    data = rd.identification.prepare_identification_data(t, q, tau, parallel=True)
    return arm, data, rd.base_parameters(arm, friction=True, transmission=real).values


def test_motor_coulomb_columns_are_filtered_exactly_as_tau(log):
    """The smooth columns are those of the full-rate regressor filtered, trimmed and decimated as τ (the parallel
    regressor), to rounding: J_mq[i, :]ᵀ is constant, so filtering commutes with it exactly."""
    arm, data, _ = log
    bp = rd.base_parameters(arm, friction=True, transmission=Transmission.from_motor_matrix(J_MQ))
    smooth = filtered_coulomb(bp, np.hstack([data.coulomb, data.motor_coulomb(J_MQ)]))(data.q, data.qd, data.qdd,
                                                                                       slice(None))
    full = data.filter_columns(bp.regressor(*data.full_rate))
    k = bp.names.index("Fcm6")
    assert np.abs(smooth[:, :, k] - full[:, :, k]).max() <= 1e-12 * data.q.shape[0] * np.abs(J_MQ).max()
    assert data.motor_coulomb(J_MQ).shape == data.coulomb.shape
    assert data.select(data.t < data.t[-1]).motor_coulomb(J_MQ) is None  # no full-rate states: None


def test_smooth_motor_coulomb_columns_remove_the_reversal_bias(log):
    """Noise-free: least squares on the smooth columns errs by at most ‖(W⁺)_k‖ ‖τ − W K‖ on parameter k, W the
    regressor it fits with, K the truth (the only error left is the filter's on the other columns); the sharp motor
    signs (the same data without the full-rate states) put F_cm6 low and F_vm6 high by more than that bound."""
    arm, data, truth = log
    tr = Transmission.from_motor_matrix(J_MQ)
    smooth = rd.identify(arm, data, transmission=tr, position_terms=None)
    sharp = rd.identify(arm, data.select(np.ones(data.t.size, bool)), transmission=tr, position_terms=None)
    bp = smooth.base
    W = filtered_coulomb(bp, np.hstack([data.coulomb, data.motor_coulomb(J_MQ)]))(data.q, data.qd, data.qdd,
                                                                                  slice(None))
    bound = np.linalg.norm(np.linalg.pinv(W.reshape(-1, bp.count)), axis=1) * np.linalg.norm(data.tau - W @ truth)
    err = np.abs(smooth.values - truth)
    assert np.all(err <= bound * (1 + 1e-6) + 1e-9 * np.abs(truth).max())
    fc, fv = bp.names.index("Fcm6"), bp.names.index("Fvm6")
    assert sharp.values[fc] < truth[fc] - bound[fc] and sharp.values[fv] > truth[fv] + bound[fv]
    assert err[fc] < 0.01 * abs(sharp.values[fc] - truth[fc]) and err[fv] < 0.01 * abs(sharp.values[fv] - truth[fv])


def test_the_parallel_regressor_computes_no_motor_coulomb_columns(log, monkeypatch):
    """``parallel=data`` filters the whole regressor, motors' Coulomb columns included, so the columns of
    :meth:`IdentificationData.motor_coulomb` are not computed for it; the fit is the one of that regressor."""
    arm, data, _ = log
    tr = Transmission.from_motor_matrix(J_MQ)
    bp = rd.base_parameters(arm, friction=True, transmission=tr)
    W = data.filter_columns(bp.regressor(*data.full_rate)).reshape(-1, bp.count)
    monkeypatch.setattr(type(data), "motor_coulomb", lambda *a: pytest.fail("motor_coulomb computed"))
    res = rd.identify(arm, data, transmission=tr, parallel=data, position_terms=None, method="ols")
    ref = np.linalg.lstsq(W, data.tau.reshape(-1), rcond=None)[0]
    tol = 100 * np.finfo(float).eps * res.condition_number  # two least-squares routes: rounding ~ eps cond(W)
    np.testing.assert_allclose(res.values, ref, rtol=0, atol=tol * np.abs(ref).max())


def test_validation_of_prepared_data_uses_the_fits_smooth_motor_columns(log):
    """Validating a fit on the very data it was fitted to reproduces the fit's own residual: the held-out
    IdentificationData's motor Coulomb columns are the smooth ones the fit used (with sharp sign(q̇_m) there, the
    prediction would differ from the fitted model at every motor reversal)."""
    arm, data, _ = log
    tr = Transmission.from_motor_matrix(J_MQ)
    res = rd.identify(arm, data, transmission=tr, position_terms=None)
    W = filtered_coulomb(res.base, np.hstack([data.coulomb, data.motor_coulomb(J_MQ)]))(data.q, data.qd, data.qdd,
                                                                                       slice(None))
    r = data.tau - W @ res.values
    rms = np.sqrt(np.mean(r ** 2, axis=0))
    val = res.validate([data])
    np.testing.assert_allclose(val.rms, rms, rtol=1e-9, atol=0)
    with pytest.raises(rd.InputError, match=r"\(and motor, with a transmission\)"):
        res.predict(data.q, data.qd, data.qdd, coulomb=np.zeros((data.q.shape[0], 5)))
    n = arm.n
    with pytest.raises(rd.InputError, match=rf"must be \(N, {n}\) arrays .* q\[None\]"):
        res.predict(data.q[0], data.qd[0], data.qdd[0], coulomb=data.coulomb[0])
    one = res.predict(data.q[:1], data.qd[:1], data.qdd[:1],
                      coulomb=np.hstack([data.coulomb, data.motor_coulomb(J_MQ)])[:1])
    assert one.shape == (1, n)
