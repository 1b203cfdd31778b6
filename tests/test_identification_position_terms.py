"""``rd.identify(..., position_terms=...)``: a torque k_j sin q_j + c_j cos q_j in one joint's equation.

Synthetic logs of a built-in model (its own inverse dynamics, friction included) with 1 % Gaussian noise per joint:
without an added torque "auto" selects nothing and the fit is the one without terms; with k sin q_j + c cos q_j
added to one joint, "auto" selects that joint alone, recovers k and c within five standard deviations of the
least-squares fit, and predicts held-out samples of that joint better than the fit without the term.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import robodyn as rd
from robodyn.errors import InputError

K, C = 0.7, -0.3  # N m
#: held-out logs of another seed reach a little beyond the fitted range; the synthetic term is exactly
#: k sin q + c cos q there too, so the warning of such predictions is expected and not the subject of those tests
BEYOND = pytest.mark.filterwarnings("ignore:.*outside the range of the identification data:UserWarning")


def log(robot, seed, joint=None, samples=1500):
    """Smooth positions, independent velocities and accelerations, torques with 1 % noise (and the term)."""
    rng = np.random.default_rng(seed)
    n = robot.n
    t = np.linspace(0.0, 30.0, samples)[:, None]
    q = sum(0.6 * np.sin(2 * np.pi * 0.07 * h * t + rng.uniform(0, 2 * np.pi, n)) for h in (1, 2, 3))
    qd, qdd = rng.normal(size=(samples, n)), rng.normal(size=(samples, n))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    tau = tau + 0.01 * tau.std(axis=0) * rng.normal(size=tau.shape)
    if joint is not None:
        tau[:, joint] += K * np.sin(q[:, joint]) + C * np.cos(q[:, joint])
    return q, qd, qdd, tau


@pytest.fixture(scope="module")
def puma():
    return rd.load("puma560")


@pytest.mark.parametrize("method", ["ols", "wls", "physical"])
def test_no_term_selects_nothing(puma, method):
    data = log(puma, 1)
    auto = rd.identify(puma, *data, method=method)
    none = rd.identify(puma, *data, method=method, position_terms=None)
    assert auto.position_joints == () and auto.position_coefficients is None
    assert auto.position_shares.shape == (puma.n,) and np.all(auto.position_shares < 0.5)
    assert none.position_shares is None
    np.testing.assert_array_equal(auto.values, none.values)
    np.testing.assert_array_equal(auto.covariance, none.covariance)
    np.testing.assert_array_equal(auto.residual_rms, none.residual_rms)
    np.testing.assert_array_equal(auto.predict(*data[:3]), none.predict(*data[:3]))


@BEYOND
@pytest.mark.parametrize("method", ["ols", "wls", "irls", "physical"])
@pytest.mark.parametrize("joint", [0, 2, 5])
def test_added_term_is_selected_and_recovered(puma, method, joint):
    train, held = log(puma, 2, joint), log(puma, 3, joint)
    res = rd.identify(puma, *train, method=method)
    assert res.position_joints == (joint,)
    assert res.position_shares[joint] > 0.5
    assert np.all(np.delete(res.position_shares, joint) < 0.5)
    (k, c), (sk, sc) = res.position_coefficients[0], res.position_std[0]
    assert abs(k - K) < 5 * sk and abs(c - C) < 5 * sc, (k, c, sk, sc)
    plain = rd.identify(puma, *train, method=method, position_terms=None)
    assert res.validate(*held).relative_rms_percent[joint] < plain.validate(*held).relative_rms_percent[joint]
    # the prediction is the base model's plus the term, in that joint's equation only
    q, qd, qdd, _ = held
    term = res.predict(q, qd, qdd) - res.base.regressor(q, qd, qdd) @ res.values
    expected = np.zeros_like(q)
    expected[:, joint] = k * np.sin(q[:, joint]) + c * np.cos(q[:, joint])
    np.testing.assert_allclose(term, expected, rtol=0, atol=1e-10 * np.abs(held[3]).max())
    d = res.to_dict()["position_terms"]
    assert d["joints"] == [joint + 1] and d["coefficients"][0]["sin"] == pytest.approx(k)


def test_explicit_joints_and_options(puma):
    data = log(puma, 4, 0)
    res = rd.identify(puma, *data, position_terms=(0, 3), method="ols")
    assert res.position_joints == (0, 3) and res.position_coefficients.shape == (2, 2)
    assert res.position_shares is None
    (k, c), (sk, sc) = res.position_coefficients[0], res.position_std[0]
    assert abs(k - K) < 5 * sk and abs(c - C) < 5 * sc
    k3, c3 = res.position_coefficients[1]
    s3 = res.position_std[1]
    assert abs(k3) < 5 * s3[0] and abs(c3) < 5 * s3[1]  # none added on joint 3
    rec = rd.identify(puma, *data, method="ols", options=rd.identification.IdentificationOptions(position_terms=[3, 0]))
    np.testing.assert_array_equal(rec.values, res.values)
    assert rec.position_joints == (0, 3)
    # joint 2's own gravity torque is a combination of sin q2 and cos q2: its term is not identifiable
    with pytest.raises(rd.identification.IdentificationError, match="position_terms of joint"):
        rd.identify(puma, *data, position_terms=(1,), method="ols")


@BEYOND
def test_predict_in_blocks_is_the_product_at_once(puma):
    """predict takes the regressor BLOCK rows at a time: on a trajectory longer than a block it is D_B K̂ plus the
    position term computed at once (with sign(q̇) or given Coulomb columns), and rows that straddle a block
    boundary in the whole run are predicted as in a window that holds them in one block."""
    from robodyn.identification.reduction import BLOCK
    from robodyn.identification.samples import filtered_coulomb

    res = rd.identify(puma, *log(puma, 4, 2), position_terms=(2,))
    q, qd, qdd, _ = log(puma, 6, 2, samples=BLOCK + 500)
    (k, c), = res.position_coefficients
    term = np.zeros_like(q)
    term[:, 2] = k * np.sin(q[:, 2]) + c * np.cos(q[:, 2])
    coulomb = np.tanh(3.0 * qd)
    for given, W in ((None, res.base.regressor(q, qd, qdd)),
                     (coulomb, filtered_coulomb(res.base, coulomb)(q, qd, qdd, slice(None)))):
        at_once = W @ res.values + term
        pred = res.predict(q, qd, qdd, coulomb=given)
        np.testing.assert_allclose(pred, at_once, rtol=0, atol=1e-12 * np.abs(at_once).max())
        window = slice(BLOCK - 300, BLOCK + 300)
        alone = res.predict(q[window], qd[window], qdd[window], coulomb=None if given is None else given[window])
        np.testing.assert_allclose(alone, pred[window], rtol=0, atol=1e-12 * np.abs(at_once).max())


def test_predictions_beyond_the_fitted_range_of_a_term_warn(puma):
    """The term is a fit over the positions of the identification data: ``position_range`` holds their least and
    greatest q_j, ``to_dict`` writes them, and predict / validate warn, naming the joint, its positions and the
    range, where q_j leaves it by more than ``POSITION_MARGIN`` of its width; inside, or without terms, silent."""
    from robodyn.identification.position import POSITION_MARGIN

    q, qd, qdd, tau = log(puma, 2, 2)
    res = rd.identify(puma, q, qd, qdd, tau, method="ols")
    assert res.position_joints == (2,)
    lo, hi = q[:, 2].min(), q[:, 2].max()
    np.testing.assert_array_equal(res.position_range, [[lo, hi]])
    c = res.to_dict()["position_terms"]["coefficients"][0]
    assert (c["q_min"], c["q_max"]) == (lo, hi)
    inside = q.copy()
    inside[:, 2] = np.linspace(lo, hi, len(q)) + 0.99 * POSITION_MARGIN * (hi - lo)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res.validate(inside, qd, qdd, tau)
        rd.identify(puma, q, qd, qdd, tau, method="ols", position_terms=None).predict(q + 10.0, qd, qdd)
    beyond = inside.copy()
    beyond[-1, 2] = hi + 1.01 * POSITION_MARGIN * (hi - lo)
    for call in (lambda: res.predict(beyond, qd, qdd), lambda: res.validate(beyond, qd, qdd, tau)):
        with pytest.warns(UserWarning, match=rf"joint 3 \(j3: q from {beyond[0, 2]:.3g} to {beyond[-1, 2]:.3g} rad, fitted "
                                             rf"on \[{lo:.3g}, {hi:.3g}\]\) outside the range.*position_terms=None"):
            call()


@pytest.mark.parametrize("bad", [(6,), (-1,), ("1",), (True,), (1.5,), (2, 2), 3, "all", {1}])
def test_bad_position_terms(puma, bad):
    data = log(puma, 5, samples=200)
    with pytest.raises(InputError, match="position_terms"):
        rd.identify(puma, *data, position_terms=bad)


def clipped_log(robot, seed, samples=900):
    """``log`` with the term on joint 0 and joint 1's torque clipped at 70 % of its range (plateaus of 5 samples
    and more at both ends: left out of joint 1's equations)."""
    q, qd, qdd, tau = log(robot, seed, 0, samples=samples)
    tau[:, 1] = np.clip(tau[:, 1], 0.7 * tau[:, 1].min(), 0.7 * tau[:, 1].max())
    tau[200:212, 1] = tau[:, 1].max()  # a plateau across the boundary of two chunks (chunk=180 below)
    return q, qd, qdd, tau


def _same(res, ref, rel=1e-10, std=1e-8):
    """Equal identifications: estimates and position coefficients to ``rel`` of the largest; the standard
    deviations to ``std`` relative (they carry the residual norm of the reduced factor, whose rounding is
    ε (‖y‖ / ‖ρ‖)², and WLS squares it through σ_j)."""
    assert res.names == ref.names and res.samples == ref.samples
    assert res.position_joints == ref.position_joints
    np.testing.assert_array_equal(res.equations, ref.equations)
    assert np.abs(res.values - ref.values).max() <= rel * np.abs(ref.values).max()
    c, c0 = res.position_coefficients, ref.position_coefficients
    assert np.abs(c - c0).max() <= rel * np.abs(c0).max()
    np.testing.assert_allclose(res.std, ref.std, rtol=std)
    np.testing.assert_allclose(res.position_std, ref.position_std, rtol=std)
    np.testing.assert_array_equal(res.position_range, ref.position_range)
    np.testing.assert_allclose(res.residual_rms, ref.residual_rms, rtol=std)


@pytest.fixture(scope="module")
def puma_base(puma):
    return rd.base_parameters(puma, friction=True)


@pytest.mark.parametrize("method, reduction", [("ols", "gram"), ("ols", "tsqr"), ("wls", "gram"), ("irls", "gram"),
                                               ("irls", "tsqr"), ("physical", "gram")])
def test_out_of_core_equals_in_memory_with_terms_and_clipped_torques(puma, puma_base, method, reduction):
    """robodyn.distributed.identify at the same defaults as rd.identify (position_terms="auto", clipped rows
    left out) gives its result: the same selected joint, shares, rows used, estimates to 1e-10."""
    dask = pytest.importorskip("dask")
    from robodyn import distributed
    from robodyn.identification.data import saturated

    data, base = clipped_log(puma, 12, samples=600), puma_base
    assert saturated(data[3])[:, 1].sum() > 20 and not saturated(data[3])[:, [0, 2, 3, 4, 5]].any()
    kw = dict(max_iterations=4) if method == "irls" else {}
    ref = rd.identify(puma, *data, method=method, base=base, **kw)
    with dask.config.set(scheduler="threads"):
        res = distributed.identify(puma, *data, method=method, base=base, chunk=180, reduction=reduction, **kw)
    assert ref.position_joints == (0,) and ref.equations[1] == len(data[0]) - saturated(data[3])[:, 1].sum()
    np.testing.assert_allclose(res.position_shares, ref.position_shares, rtol=0, atol=1e-10)
    assert res.iterations == ref.iterations and res.converged == ref.converged
    _same(res, ref)
    if method == "ols":  # explicit joints, as keywords and as options
        ref = rd.identify(puma, *data, base=base, position_terms=(0, 3), method="ols")
        with dask.config.set(scheduler="threads"):
            res = distributed.identify(puma, *data, method="ols", base=base, chunk=180, reduction=reduction,
                                       position_terms=(0, 3))
            opts = rd.identification.IdentificationOptions(base=base, position_terms=(3, 0))
            rec = distributed.identify(puma, *data, method="ols", chunk=180, reduction=reduction, options=opts)
        assert res.position_shares is None and res.position_joints == (0, 3)
        _same(res, ref)
        np.testing.assert_array_equal(rec.values, res.values)
        with dask.config.set(scheduler="threads"), pytest.raises(rd.identification.IdentificationError,
                                                                  match="position_terms of joint"):
            distributed.identify(puma, *data, base=base, chunk=180, position_terms=(1,), method="ols")


def test_a_joint_that_never_moves_is_named(puma, puma_base):
    """"auto" on data where joint 6 stands still: the IdentificationError naming its parameters (the selection
    does not solve the rank-deficient fit), in memory and out of core."""
    q, qd, qdd, tau = log(puma, 15, samples=300)
    q[:, 5], qd[:, 5], qdd[:, 5] = 0.3, 0.0, 0.0
    tau = rd.inverse_dynamics(puma, q, qd, qdd)
    with pytest.raises(rd.identification.IdentificationError, match="do not excite.*Fc6, Fv6"):
        rd.identify(puma, q, qd, qdd, tau, base=puma_base, method="ols")
    dask = pytest.importorskip("dask")
    from robodyn import distributed

    with dask.config.set(scheduler="threads"), pytest.raises(rd.identification.IdentificationError,
                                                              match="do not excite.*Fc6, Fv6"):
        distributed.identify(puma, q, qd, qdd, tau, base=puma_base, method="ols")


def test_out_of_core_clipping_equals_saturated():
    """The clipped torques found chunk by chunk (runs across chunk boundaries, chunks shorter than a run) are
    those of robodyn.identification.data.saturated."""
    dask = pytest.importorskip("dask")
    import dask.array as da
    from robodyn.identification import reduction
    from robodyn.identification.data import saturated

    rng = np.random.default_rng(13)
    tau = rng.normal(size=(60, 4))
    tau[10:16, 0] = 5.0  # a run of 6 at the top: clipped, with the single sample at 5.0 below
    tau[40, 0] = 5.0
    tau[20:24, 1] = 5.0  # a run of 4 only: not clipped
    tau[30:35, 2] = -5.0  # a run of 5 at the bottom
    tau[:, 3] = 1.0  # constant: every sample
    with dask.config.set(scheduler="threads"):
        for chunk in (3, 4, 7, 60):
            clip = reduction.clipping(da.from_array(tau, chunks=(chunk, 4)))
            np.testing.assert_array_equal(reduction.clipped_block(tau, clip), saturated(tau))
        assert reduction.clipping(da.from_array(rng.normal(size=(60, 4)), chunks=(7, 4))) is None


def test_out_of_core_medians_leave_nan_out():
    """rd.distributed.median ignores NaN (the residuals of clipped rows in "irls") as numpy.nanmedian, also by
    bisection (N > GATHER)."""
    dask = pytest.importorskip("dask")
    import dask.array as da
    from robodyn import distributed

    rng = np.random.default_rng(14)
    x = rng.standard_normal((distributed.GATHER + 5001, 3))
    x[::3, 0] = np.nan
    x[:, 1] = np.nan
    x[:7, 2] = np.nan
    for rows in (x.shape[0], 601):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the column of NaN only
            expected = np.nanmedian(x[:rows], axis=0)
        with dask.config.set(scheduler="threads"):
            got = distributed.median(da.from_array(x[:rows], chunks=(20_000, 3)))
        np.testing.assert_array_equal(got, expected)



def _backward_elimination(A, y, names, tolerance):
    """Pham & Gautier's elimination on the explicit regressor A (rows, b): numpy.linalg.lstsq and
    σ² (AᵀA)⁻¹ per step, independent of the factors of robodyn.identification."""
    cols = list(range(len(names)))

    def fit(c):
        x, *_ = np.linalg.lstsq(A[:, c], y, rcond=None)
        r = np.linalg.norm(y - A[:, c] @ x)
        cov = r ** 2 / (len(y) - len(c)) * np.linalg.inv(A[:, c].T @ A[:, c])
        return x, np.sqrt(np.diag(cov)), r

    x, s, r = fit(cols)
    full = r / np.linalg.norm(y)
    while len(cols) > 1:
        k = int(np.argmax(s / np.abs(x)))
        trial = cols[:k] + cols[k + 1:]
        x2, s2, r2 = fit(trial)
        if r2 / np.linalg.norm(y) > (1 + tolerance) * full + 1e-12:
            break
        cols, x, s, r = trial, x2, s2, r2
    return tuple(names[c] for c in cols), x, s


def test_essential_parameters_include_the_position_terms(puma):
    """The essential set of a result with a position term is chosen among its base parameters and the term's
    columns sin q_j, cos q_j, as backward elimination on the explicit regressor [E W] chooses it, each joint's rows
    weighted by √w_j as the fit's (the default's: Gautier's weights)."""
    joint = 0
    data = log(puma, 7, joint, samples=600)
    res = rd.identify(puma, *data)
    assert res.position_joints == (joint,) and np.ptp(res.weights) > 0.1
    ess = rd.identification.essential_parameters(res, *data, tolerance=0.02)
    q, qd, qdd, tau = data
    E = np.zeros(q.shape + (2,))
    E[:, joint, 0], E[:, joint, 1] = np.sin(q[:, joint]), np.cos(q[:, joint])
    sw = np.sqrt(res.weights)
    W = np.concatenate([E, res.base.regressor(q, qd, qdd)], axis=2) * sw[:, None]
    tau = tau * sw
    names = ("sin_q1", "cos_q1") + tuple(res.names)
    ref_names, ref_values, ref_std = _backward_elimination(W.reshape(-1, W.shape[2]), tau.reshape(-1), names, 0.02)
    assert ess.names == ref_names and {"sin_q1", "cos_q1"} <= set(ess.names)
    assert len(ess.names) + len(ess.removed) == len(names)
    np.testing.assert_allclose(ess.values, ref_values, rtol=1e-10, atol=1e-10 * np.abs(ref_values).max())
    np.testing.assert_allclose(ess.std, ref_std, rtol=1e-8)
    # without the terms: the base parameters alone, the same elimination on W
    plain = rd.identification.essential_parameters(res, *data, tolerance=0.02, position_terms=None)
    ref_names, ref_values, _ = _backward_elimination(W[..., 2:].reshape(-1, W.shape[2] - 2), tau.reshape(-1),
                                                     tuple(res.names), 0.02)
    assert plain.names == ref_names and not any(k.startswith(("sin", "cos")) for k in plain.names)
    np.testing.assert_allclose(plain.values, ref_values, rtol=1e-10, atol=1e-10 * np.abs(ref_values).max())
    assert plain.full_relative_error > ess.full_relative_error  # the term explains part of joint 1's torque
    explicit = rd.identification.essential_parameters(res, *data, tolerance=0.02, position_terms=(joint,))
    assert explicit.names == ess.names
    with pytest.raises(InputError, match="position_terms"):
        rd.identification.essential_parameters(res, *data, position_terms="auto")
