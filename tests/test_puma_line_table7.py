"""Mata et al. Table 7: the PUMA straight line counts the evaluations of the same integrator, restarted at every
0.1 s interval, for every method (integrate_by_intervals)."""

import numpy as np
import pytest

import robodyn as rd
from robodyn.simulation.integrate import simulate
from robodyn.simulation.puma_line import integrate_by_intervals, line_reference, puma_line_study

INTERVALS = 50  # 5 s in steps of Mata et al.'s 0.1 s


@pytest.fixture(scope="module")
def puma():
    return rd.load("puma560")


@pytest.fixture(scope="module")
def study(puma):
    return {restart: puma_line_study(puma, methods=["recursive", "cholesky"], samples=101, restart=restart)
            for restart in (True, False)}


def test_same_integrator_same_count_for_every_method(study):
    """The methods compute one model (agreeing to round-off), so RK45's step control takes the same decisions:
    the counts are equal, integers compared exactly."""
    t7 = study[True].table7()
    assert t7["recursive"][1] == t7["cholesky"][1]
    t7c = study[False].table7()
    assert t7c["recursive"][1] == t7c["cholesky"][1]


def test_restarted_count_bounds(study):
    """solve_ivp's RK45 spends 2 evaluations choosing the first step of each interval and 6 per step (FSAL),
    at least one step per interval: at least 50 · 8 = 400 evaluations, and more than integrating once."""
    restarted, once = study[True].table7()["recursive"][1], study[False].table7()["recursive"][1]
    assert restarted >= INTERVALS * 8
    assert (restarted - 2 * INTERVALS) % 6 == 0  # whole steps only
    assert restarted > once


def test_integrate_by_intervals_is_the_sum_of_fresh_starts(puma):
    """Equal to calling simulate interval by interval from the state reached (exactly: the same floating-point
    operations in the same order; the works are the previous sum plus the interval's gain); nfev is the sum; the works continue across the restarts, so the energy
    balance holds over the whole run to the integrator's tolerance (1e-6 J on about 9 J of work)."""
    ref = line_reference(puma, samples=101)
    t = np.linspace(0.0, 0.3, 4)
    sim = integrate_by_intervals(puma, ref.torque, ref.q[0], ref.qd[0], t, "recursive")
    q, qd, nfev = ref.q[0], ref.qd[0], 0
    for k in range(3):
        piece = simulate(puma, ref.torque, q, qd, t[k:k + 2], method="recursive")
        np.testing.assert_array_equal(sim.q[k + 1], piece.q[-1])
        # the work continues as W_k + ΔW: subtracting W_k back returns ΔW to the rounding of that sum, |W_k+1| ε
        gained = piece.work_tau[-1] - piece.work_tau[0]
        assert abs((sim.work_tau[k + 1] - sim.work_tau[k]) - gained) <= np.finfo(float).eps * abs(sim.work_tau[k + 1])
        assert sim.work_tau[k + 1] == sim.work_tau[k] + gained
        q, qd, nfev = piece.q[-1], piece.qd[-1], nfev + piece.nfev
    assert sim.nfev == nfev and sim.t.tolist() == t.tolist() and sim.q.shape == (4, 6)
    once = simulate(puma, ref.torque, ref.q[0], ref.qd[0], t, method="recursive")
    np.testing.assert_allclose(sim.q, once.q, rtol=0, atol=1e-5)  # two integrations at rtol = atol = 1e-6


def test_restarted_study_tracks_the_reference_better(study):
    """Restarting shortens the steps, so the open-loop drift (Table 6) is smaller than integrating once."""
    t6r, t6c = study[True].table6()["recursive"], study[False].table6()["recursive"]
    assert np.all(t6r[:, 0] < t6c[:, 0])


def test_integrate_by_intervals_needs_two_times(puma):
    with pytest.raises(rd.InputError, match="t_eval has shape"):
        integrate_by_intervals(puma, lambda t: np.zeros(6), np.zeros(6), np.zeros(6), [0.0], "recursive")
