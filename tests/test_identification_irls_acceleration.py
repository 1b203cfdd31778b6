"""The accelerated bisquare stage of ``identify(method="irls", robust="bisquare")`` (SQUAREM, Varadhan & Roland
2008): the fixed point of the plain passes, an objective that does not rise from one accepted iterate to the next,
and fewer passes where the plain stage is slow.

References, none of them digits of a fit: the plain passes themselves (the same majorize-minimize map, iterated
without extrapolation to a stopping tolerance 10⁵ times tighter), and the objective Σ_j s_j² Σ_i ρ(r_ij / s_j)
computed here from the source's residuals at the scales the fit reports.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import robodyn as rd
import robodyn.identification.solvers as solvers
from robodyn.identification.reduction import ROBUST_C, ArraySource
from tests.support.checks import measured_folder

LWR = measured_folder("kuka_lwr4")


def with_friction(robot, fc=0.6, fv=0.3, foff=0.15):
    moving = (robot.sigma != 2).astype(float)
    return robot.replace(Fc=fc * moving, Fv=fv * moving, Foff=foff * moving, Fst=np.zeros(robot.nf))


def spiked_campaign(name, seed):
    """Torques of an excitation trajectory with noise σ = 0.02 and spikes of 5 σ on 30 % of one joint's rows that
    move one way: outliers on bisquare's falling slope, along a friction column."""
    robot = with_friction(rd.load(name))
    trajectory = rd.excitation_trajectory(robot, 10.0, harmonics=4, seed=3, unlimited=True, max_iterations=5)
    q, qd, qdd = trajectory.sample(trajectory.times(50.0))
    rng = np.random.default_rng(seed)
    tau = rd.inverse_dynamics(robot, q, qd, qdd) + rng.normal(0.0, 0.02, q.shape)
    hit = (qd[:, -1] > 0) & (rng.random(len(q)) < 0.3)
    tau[hit, -1] += 5 * 0.02
    return robot, (q, qd, qdd, tau)


def lwr4_held_out_1():
    path = LWR / "kuka_lwr4_runs.npz"
    if not path.exists():
        pytest.skip("kuka_lwr4_runs.npz absent: tests/data/measured/kuka_lwr4/make_kuka_lwr4.py builds it")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the URDF's <dynamics> become Fv, Fc
        robot = rd.load(LWR / "kuka_lwr4.urdf")
    with np.load(path) as f:
        runs = [tuple(f[f"{key}{k}"] for key in ("q", "qd", "qdd", "tau")) for k in (2, 3)]
    return robot, (runs,)


def plain_passes(tolerance):
    """A stand-in for the accelerated stage: the plain passes θ ← F(θ), stopped by the stopping rule with
    ``tolerance`` for IRLS_TOLERANCE (and a relative step 10⁻¹⁴) in this stage only (Huber's stage sets the scales
    and the start, which must stay those of the accelerated run)."""
    def stage(mm, objective, theta, passes):
        kept = solvers.IRLS_TOLERANCE, solvers.IRLS_STEP
        solvers.IRLS_TOLERANCE, solvers.IRLS_STEP = tolerance, min(kept[1], 1e-14)
        try:
            made = 0
            while True:
                new, stop = mm(theta)
                made += 1
                if stop or made == passes:
                    return new, theta, stop, made
                theta = new
        finally:
            solvers.IRLS_TOLERANCE, solvers.IRLS_STEP = kept
    return stage


def identify(robot, args, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return rd.identify(robot, *args, method="irls", robust="bisquare", **options)


def objective(source, terms, theta, scale):
    """Σ_j s_j² Σ_i ρ(r_ij / s_j) with bisquare's ρ(u) = c²/6 (1 − (1 − (u/c)²)³), c²/6 for |u| ≥ c, over the rows
    the source uses."""
    c = ROBUST_C["bisquare"]
    u = source.residuals(theta, terms) / scale
    rho = np.where(np.abs(u) < c, c ** 2 / 6 * (1 - (1 - (u / c) ** 2) ** 3), c ** 2 / 6)
    return float(np.sum(scale ** 2 * np.nansum(np.where(np.isnan(u), 0.0, rho), axis=0)))


def mahalanobis(a, b, cov):
    d = a - b
    return float(np.sqrt(d @ np.linalg.solve(cov, d)))


@pytest.mark.parametrize("name,seed", [("planar3r", 0), ("planar3r", 1), ("puma560", 0)])
def test_accelerated_stage_reaches_the_fixed_point_of_the_plain_passes(monkeypatch, name, seed):
    # the plain passes contract linearly (λ ≈ 0.9 a pass on measured runs), so a run stopped when a pass moves θ by
    # IRLS_TOLERANCE standard deviations is within about λ / (1 − λ) ≈ 9 of them of the fixed point; the
    # accelerated stage stops by the same rule on a plain pass
    robot, args = spiked_campaign(name, seed)
    res = identify(robot, args)
    monkeypatch.setattr(solvers, "_squarem", plain_passes(1e-8))
    tight = identify(robot, args, max_iterations=5000)
    assert res.converged and tight.converged
    assert mahalanobis(res.values, tight.values, tight.covariance) <= 10 * solvers.IRLS_TOLERANCE
    np.testing.assert_allclose(res.noise, tight.noise, rtol=0, atol=0)  # one Huber stage, one set of scales


def recorded_passes(monkeypatch):
    """Record (source, terms, θ) of every bisquare pass (a reduction weighted at θ)."""
    passes = []
    reduce = ArraySource.reduce

    def record(self, *args, **kw):
        if len(args) > 4 and args[4] == "bisquare":
            passes.append((self, args[0], np.array(args[2])))
        return reduce(self, *args, **kw)

    monkeypatch.setattr(ArraySource, "reduce", record)
    return passes


@pytest.mark.parametrize("case", ["planar3r", "lwr4"])
def test_objective_does_not_rise_between_accepted_iterates(monkeypatch, case):
    # every pass is a majorize-minimize step (the objective at F(θ) ≤ at θ), and a cycle's next start, θ' or θ2,
    # is not above the start θ0 of the cycle, two passes earlier; so over the passes θ_k, the larger of each two
    # successive objectives never rises, and the stage ends below where it began
    robot, args = spiked_campaign("planar3r", 0) if case == "planar3r" else lwr4_held_out_1()
    passes = recorded_passes(monkeypatch)
    res = identify(robot, args)
    assert res.converged and len(passes) >= 3
    f = np.array([objective(src, terms, theta, res.noise) for src, terms, theta in passes])
    rounding = 1e-12 * f[0]
    pairs = np.maximum(f[:-1], f[1:])
    assert np.all(np.diff(pairs) <= rounding), f
    src, terms, _ = passes[0]
    theta = np.concatenate([res.position_coefficients.ravel(), res.values]) if res.position_joints else res.values
    assert objective(src, terms, theta, res.noise) <= f[0] + rounding


def test_fewer_passes_where_the_plain_stage_is_slow(monkeypatch):
    # the LWR 4's bisquare stage takes 54 plain passes (of 69 with Huber's); the accelerated stage's residuals for
    # its objective cost about a third of a pass each, counted here with the passes
    robot, args = lwr4_held_out_1()
    calls = {"residuals": 0}
    residuals = ArraySource.residuals

    def counted(self, *a, **kw):
        calls["residuals"] += 1
        return residuals(self, *a, **kw)

    monkeypatch.setattr(ArraySource, "residuals", counted)
    fast = identify(robot, args)
    work = fast.iterations + calls["residuals"] / 3
    monkeypatch.setattr(solvers, "_squarem", plain_passes(solvers.IRLS_TOLERANCE))
    calls["residuals"] = 0
    plain = identify(robot, args)
    assert fast.converged and plain.converged
    assert work < 0.8 * (plain.iterations + calls["residuals"] / 3)
