"""Parallel filtering of the regressor (Gautier; FIGAROH decimates its regressor the same way):
``prepare_identification_data(..., parallel=True)`` keeps the full-rate states and ``identify(..., parallel=data)``
filters and decimates every regressor column exactly as τ was.  On the worked example of
tests/test_identification_friction_bias.py (planar 3R, Coulomb and viscous friction), the automatic cut-off
(5 Hz) puts Fc low and Fv high by several per cent when only τ is filtered (a deterministic bias, measured on
exact data); the parallel regressor removes it."""

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


@pytest.fixture(scope="module")
def exact():
    nominal, _, t, q, tau, truth = friction_campaign(noise=False)
    return nominal, t, q, tau, truth


def _relative(res, truth):
    idx = [res.names.index(n) for n in FRICTION]
    return 100 * (res.values[idx] - truth[idx]) / truth[idx]


@pytest.mark.parametrize("data", ["exact", "campaign"])
def test_parallel_regressor_removes_the_friction_bias_of_the_automatic_cutoff(data, request):
    nominal, t, q, tau, truth = request.getfixturevalue(data)
    plain = rd.identification.prepare_identification_data(t, q, tau)
    par = rd.identification.prepare_identification_data(t, q, tau, parallel=True)
    assert par.cutoff == plain.cutoff
    np.testing.assert_array_equal(par.q, plain.q)
    np.testing.assert_array_equal(par.tau, plain.tau)
    for method in ("ols", "wls", "irls"):
        before = _relative(rd.identify(nominal, plain.q, plain.qd, plain.qdd, plain.tau, method=method), truth)
        res = rd.identify(nominal, par.q, par.qd, par.qdd, par.tau, method=method, parallel=par)
        after = _relative(res, truth)
        assert res.parallel and not rd.identify(nominal, plain.q, plain.qd, plain.qdd, plain.tau).parallel
        if data == "exact":  # the bias: Fc low, Fv high; the parallel regressor leaves 1/20 of it at most
            assert np.all(before[:3] < 0.0) and np.all(before[3:] > 0.0), (method, before)
            assert np.abs(after).max() < 0.05 * np.abs(before).max(), (method, after, before)
        else:  # the noise adds less than the bias that is removed
            assert np.abs(after).max() < 0.5 * np.abs(before).max(), (method, after, before)


def test_parallel_ols_on_exact_data_agrees_with_the_unfiltered_estimate(exact):
    """Two routes to the same parameters: the parallel-filtered regressor and τ, and the raw torques at the exact
    states (exact data: the latter is the truth to rounding); they differ only by the filter's effect on the
    estimated velocities and accelerations."""
    nominal, t, q, tau, truth = exact
    par = rd.identification.prepare_identification_data(t, q, tau, parallel=True)
    res = rd.identify(nominal, par.q, par.qd, par.qdd, par.tau, parallel=par)
    assert np.abs(_relative(res, truth)).max() < 0.2
    np.testing.assert_allclose(res.values, truth, rtol=0, atol=2e-3 * np.abs(truth).max())
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
    res = rd.identify(nominal, par.q, par.qd, par.qdd, par.tau, parallel=par, method="ols")
    ess = rd.identification.essential_parameters(res, par.q, par.qd, par.qdd, par.tau, parallel=par)
    W = par.filter_columns(res.base.regressor(*par.full_rate))
    direct = np.linalg.norm(par.tau - W @ res.values) / np.linalg.norm(par.tau)
    assert ess.full_relative_error == pytest.approx(direct, rel=1e-8)
    plain = rd.identification.essential_parameters(res, par.q, par.qd, par.qdd, par.tau)
    assert ess.full_relative_error < 0.9 * plain.full_relative_error
