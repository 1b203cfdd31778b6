"""Parallel filtering of the regressor (Gautier; FIGAROH decimates its regressor the same way):
``prepare_identification_data(..., parallel=True)`` keeps the full-rate states and ``identify(..., parallel=data)``
filters and decimates every regressor column exactly as τ was.  On the worked example of
tests/test_identification_friction_bias.py (planar 3R, Coulomb and viscous friction, fixed seeds), the automatic
cut-off (5 Hz) puts Fc 2–13 % low and Fv 6–22 % high when only τ is filtered; the parallel regressor brings every
friction parameter within 2.2 % of the truth."""

import numpy as np
import pytest

import robodyn as rd
from robodyn.errors import InputError
from tests.support.checks import friction_campaign

FRICTION = ("Fc1", "Fc2", "Fc3", "Fv1", "Fv2", "Fv3")


@pytest.fixture(scope="module")
def campaign():
    nominal, _, t, q, tau, truth = friction_campaign()
    return nominal, t, q, tau, truth


def _relative(res, truth):
    idx = [res.names.index(n) for n in FRICTION]
    return 100 * (res.values[idx] - truth[idx]) / truth[idx]


def test_parallel_regressor_removes_the_friction_bias_of_the_automatic_cutoff(campaign):
    nominal, t, q, tau, truth = campaign
    plain = rd.identification.prepare_identification_data(t, q, tau)
    par = rd.identification.prepare_identification_data(t, q, tau, parallel=True)
    assert plain.cutoff == pytest.approx(5.0, rel=1e-3) and par.cutoff == plain.cutoff
    np.testing.assert_array_equal(par.q, plain.q)
    np.testing.assert_array_equal(par.tau, plain.tau)
    for method in ("ols", "wls", "irls"):
        before = _relative(rd.identify(nominal, plain.q, plain.qd, plain.qdd, plain.tau, method=method), truth)
        res = rd.identify(nominal, par.q, par.qd, par.qdd, par.tau, method=method, parallel=par)
        after = _relative(res, truth)
        assert res.parallel and not rd.identify(nominal, plain.q, plain.qd, plain.qdd, plain.tau).parallel
        assert np.all(np.abs(after) < 2.2), (method, after)
        if method != "irls":  # the bias being removed: Fc low, Fv high by several per cent
            assert np.all(before[:3] < -2.0) and np.all(before[3:] > 6.0), (method, before)
            assert np.abs(after).max() < 0.2 * np.abs(before).max()


def test_parallel_ols_values_at_the_fixed_seed(campaign):
    nominal, t, q, tau, truth = campaign
    par = rd.identification.prepare_identification_data(t, q, tau, parallel=True)
    res = rd.identify(nominal, par.q, par.qd, par.qdd, par.tau, parallel=par)
    np.testing.assert_allclose(_relative(res, truth), [-0.04, -0.65, 0.42, -0.25, 1.33, -2.05], atol=0.01)
    assert res.to_dict()["parallel_filtering"] is True


def test_filter_columns_of_the_raw_torques_are_the_prepared_torques_exactly(campaign):
    _, t, q, tau, _ = campaign
    par = rd.identification.prepare_identification_data(t, q, tau, parallel=True, cutoff=25.0)
    M = t.size
    assert par.full_rate[0].shape == (M, 3) and par.trimmed[0] > 0 and par.decimate > 1
    np.testing.assert_array_equal(par.filter_columns(tau), par.tau)
    np.testing.assert_array_equal(par.filter_columns(q), rd.identification.prepare_identification_data(t, q, q, cutoff=25.0).tau)
    assert par.report()["parallel"] is True and "parallel filtering" in par.report()["summary"]
    assert rd.identification.prepare_identification_data(t, q, tau).full_rate is None


def test_parallel_bad_input(campaign):
    nominal, t, q, tau, _ = campaign
    plain = rd.identification.prepare_identification_data(t, q, tau, cutoff=25.0)
    par = rd.identification.prepare_identification_data(t, q, tau, cutoff=25.0, parallel=True)
    with pytest.raises(InputError, match="parallel=True"):
        rd.identify(nominal, plain.q, plain.qd, plain.qdd, plain.tau, parallel=plain)
    with pytest.raises(InputError, match="parallel=True"):
        rd.identify(nominal, plain.q, plain.qd, plain.qdd, plain.tau, parallel="yes")
    with pytest.raises(InputError, match="tau is not the tau"):
        rd.identify(nominal, par.q, par.qd, par.qdd, par.tau * 1.01, parallel=par)
    with pytest.raises(InputError, match="q is not the q"):
        rd.identify(nominal, par.q[:-1], par.qd[:-1], par.qdd[:-1], par.tau[:-1], parallel=par)
    with pytest.raises(InputError, match="parallel = 'yes'"):
        rd.identification.prepare_identification_data(t, q, tau, parallel="yes")
    with pytest.raises(InputError, match="one row per full-rate sample"):
        par.filter_columns(tau[:-1])
    with pytest.raises(InputError, match="parallel=True"):
        plain.filter_columns(tau)


def test_essential_parameters_use_the_parallel_regressor(campaign):
    nominal, t, q, tau, _ = campaign
    par = rd.identification.prepare_identification_data(t, q, tau, parallel=True)
    res = rd.identify(nominal, par.q, par.qd, par.qdd, par.tau, parallel=par)
    ess = rd.identification.essential_parameters(res, par.q, par.qd, par.qdd, par.tau, parallel=par)
    W = par.filter_columns(res.base.regressor(*par.full_rate))
    direct = np.linalg.norm(par.tau - W @ res.values) / np.linalg.norm(par.tau)
    assert ess.full_relative_error == pytest.approx(direct, rel=1e-8)
    plain = rd.identification.essential_parameters(res, par.q, par.qd, par.qdd, par.tau)
    assert ess.full_relative_error < 0.9 * plain.full_relative_error
