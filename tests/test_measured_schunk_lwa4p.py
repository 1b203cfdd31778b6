"""Identification at the defaults on 100 short runs of a Schunk LWA 4P, and what the runs do to the automatic cut-off.

The runs are those of Liu and Althoff, "Reachset conformance of forward dynamic models for the formal analysis of
robots" (IROS 2018), GPL-3.0 (``tests/data/measured/schunk_lwa4p/README.md``): 250 Hz, 0.9 to 4.3 s each, six
groups of repetitions of one point-to-point motion.  The torques are the command of the group, identical in every
run of it (checked below): commanded, not measured, joint torques.  So the protocol holds out repetitions: the last
three runs of each group, identified on the others (a list of runs, each prepared on its own at the defaults).
There is no published torque error for these runs to compare with: the bound is that a fit which does not
overfit predicts repetitions of the commands it was fitted on about as well as those runs themselves.
"""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from tests.support.checks import measured_folder

DATA = measured_folder("schunk_lwa4p")
RUNS = DATA / "schunk_lwa4p_runs.csv.gz"

needs_runs = pytest.mark.skipif(
    not RUNS.exists(), reason="schunk_lwa4p_runs.csv.gz absent: make_schunk_lwa4p.py in its folder builds it")

#: Runs 1-based, (first, last) of each group of repetitions of one commanded torque sequence.
GROUPS = [(1, 20), (21, 40), (41, 60), (61, 79), (80, 93), (94, 100)]


@pytest.fixture(scope="module")
def log():
    return np.loadtxt(RUNS, delimiter=",", skiprows=1)


def run(log, k):
    rows = log[log[:, 0] == k]
    return rows[:, 1], rows[:, 2:8], rows[:, 14:20]


@needs_runs
def test_log_as_stored(log):
    assert log.shape == (67450, 20)
    for first, last in GROUPS:
        t0, q0, tau0 = run(log, first)
        np.testing.assert_allclose(np.diff(t0), 0.004, rtol=1e-6)  # 250 Hz
        for k in range(first + 1, last + 1):
            t, q, tau = run(log, k)
            np.testing.assert_array_equal(tau, tau0)  # one command per group ...
            assert np.abs(q - q0).max() > 1e-3  # ... under which the arm moved differently


@needs_runs
@pytest.mark.parametrize("options", [{}, {"method": "ols"}, {"method": "irls", "robust": "bisquare"}],
                         ids=["default", "ols", "irls-bisquare"])
def test_held_out_repetitions(log, options):
    # bisquare's weights converge at the defaults (Huber's 15 passes, then bisquare's, accelerated: 38 in all)
    robot = rd.load(DATA / "lwa4p_kinematics.urdf")
    prepare = rd.identification.prepare_identification_data
    held_out = {k for _, last in GROUPS for k in range(last - 2, last + 1)}
    data = {k: prepare(*run(log, k)) for k in range(1, 101)}
    res = rd.identify(robot, [d for k, d in data.items() if k not in held_out], **options)
    assert res.converged, res.message
    fit = res.validate([d for k, d in data.items() if k not in held_out]).relative_rms_percent
    new = res.validate([d for k, d in data.items() if k in held_out]).relative_rms_percent
    # over the joints, not joint by joint: the held-out runs are a different mix of the groups' motions, and a
    # joint's share of the torque changes from group to group (joint 3: 8 % on the runs fitted, 11 % held out)
    assert new.mean() <= 1.10 * fit.mean(), f"held out {new} against {fit} on the runs fitted"


@needs_runs
def test_a_joint_nearly_at_rest_does_not_set_the_cutoff(log):
    """Run 3: joint 6 moves by 0.004 rad, the others by 0.13 to 1.7 rad.  Their automatic cut-off is 13.4 Hz
    (10 × their 1.34 Hz bandwidth); joint 6's 99 % energy bandwidth of 5.6 Hz, the broad spectrum of a staircase of
    encoder steps, would put the whole run at the 50 Hz cap if it counted."""
    t, q, tau = run(log, 3)
    moving = rd.identification.prepare_identification_data(t, q[:, :5], tau[:, :5])
    data = rd.identification.prepare_identification_data(t, q, tau)
    assert data.cutoff <= 1.5 * moving.cutoff, (data.cutoff_rule, moving.cutoff_rule)


def test_a_joint_moving_one_way_is_named_with_the_reason():
    """The first 70 % of the point-to-point runs turns each joint one way only (q̇_j keeps its sign): Fc_j sign(q̇_j)
    is then the constant column of Foff_j, and the error says so (planar2r, joint 1 one way, joint 2 both ways)."""
    robot = rd.load("planar2r")
    t = np.linspace(0.0, 4.0, 2001)
    q = np.column_stack([0.3 * t + 0.1 * np.sin(3 * t), 0.05 * np.sin(5 * t)])  # q̇1 = 0.3 + 0.3 cos 3t ≥ 0
    qd = np.gradient(q, t, axis=0)
    qdd = np.gradient(qd, t, axis=0)
    with pytest.raises(rd.identification.IdentificationError,
                       match=r"Foff1 \(.*\); does joint 1 move in both directions\?"):
        rd.identify(robot, q, qd, qdd, rd.inverse_dynamics(robot, q, qd, qdd), method="ols")
