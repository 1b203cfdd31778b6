"""Identification held out by time block on a measured Franka Emika Panda, against the published model of the run.

The run is the excitation log of Gaz, Cognetti, Oliva, Robuffo Giordano and De Luca, "Dynamic identification of
the Franka Emika Panda robot with retrieval of feasible parameters using penalty-based optimization" (RA-L 2019),
GPL-3.0 (``tests/data/measured/panda_gaz/README.md``): 21 s at a nominal 1 kHz with jittered time stamps, joint
positions and the joint-torque sensors' torques as the robot logged them (raw: not filtered, no q̈).

Protocol: the log has four gaps of about 8.5 sampling steps; robodyn's preparation refuses a gap of more than 5
steps and says to split the log there, so it is split into its five parts, each prepared on its own at the
defaults (automatic cut-off, resampling of the jittered steps).  Each part is held out in turn: ``rd.identify``
on the other four (a list of runs) at its defaults, ``validate`` on the held-out part.

Reference: the published model of the same robot, identified by the authors on this very log (held-out parts
included): robodyn's ``panda`` (Gaz et al. Tables VIII and IX) plus their sigmoid friction (Table I, in
docs/robots.md), scored on the same held-out samples.  Bounds as for the Stäubli TX40 run
(``tests/test_measured_identification.py``): the mean over the five hold-outs at most 1.10 × the published
model's overall and 1.25 × its per joint.  OLS starts from no prior; "physical" is pulled towards its prior, the
published parameters, by the λ its cross-validation chooses.
"""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from tests.support.checks import assert_physically_consistent, measured_folder

RUN = measured_folder("panda_gaz") / "panda_trajectory1.csv.gz"

pytestmark = pytest.mark.skipif(
    not RUN.exists(), reason="panda_trajectory1.csv.gz absent: make_panda_gaz.py in its folder builds it")

#: Gaz et al. 2019, supplementary material Table I (docs/robots.md): the sigmoid friction
#: τ_f = φ1 / (1 + exp(−φ2 (q̇ + φ3))) − φ1 / (1 + exp(−φ2 φ3)).
PHI1 = np.array([5.4615e-01, 0.87224, 6.4068e-01, 1.2794e+00, 8.3904e-01, 3.0301e-01, 5.6489e-01])  # N m
PHI2 = np.array([5.1181e+00, 9.0657e+00, 1.0136e+01, 5.5903e+00, 8.3469e+00, 1.7133e+01,
                 1.0336e+01])  # s/rad
PHI3 = np.array([3.9533e-02, 2.5882e-02, -4.6070e-02, 3.6194e-02, 2.6226e-02, -2.1047e-02,
                 3.5526e-03])  # rad/s


def published_torques(robot, q, qd, qdd):
    """Gaz et al.'s model: rigid body (Tables VIII, IX) + sigmoid friction (Table I), N m."""
    friction = PHI1 / (1 + np.exp(-PHI2 * (qd + PHI3))) - PHI1 / (1 + np.exp(-PHI2 * PHI3))
    return rd.inverse_dynamics(robot, q, qd, qdd) + friction


@pytest.fixture(scope="module")
def parts():
    log = np.loadtxt(RUN, delimiter=",", skiprows=1)
    t, q, tau = log[:, 0], log[:, 1:8], log[:, 15:22]
    with pytest.raises(rd.InputError, match=r"t has 4 gaps .* before rows 4950, 9896, 14738, 19540 .* split the log "
                                            "at each"):
        rd.identification.prepare_identification_data(t, q, tau)
    dt = np.diff(t)
    cuts = np.flatnonzero(dt > 5 * np.median(dt)) + 1
    return [rd.identification.prepare_identification_data(t[k], q[k], tau[k])
            for k in np.split(np.arange(t.size), cuts)]


def test_log_as_stored(parts):
    log = np.loadtxt(RUN, delimiter=",", skiprows=1)
    assert log.shape == (20544, 22)
    dt = np.diff(log[:, 0])
    assert dt.min() > 0
    np.testing.assert_allclose(np.median(dt), 1e-3, rtol=1e-6)  # 1 kHz nominal
    assert len(parts) == 5 and all(p.resampled for p in parts)  # jittered steps: resampled onto a uniform grid


@pytest.mark.parametrize("method", ["ols", "physical"])
def test_held_out_parts_against_the_published_model(parts, method):
    robot = rd.load("panda")
    ours, published = [], []
    for k, held_out in enumerate(parts):
        res = rd.identify(robot, [p for i, p in enumerate(parts) if i != k], method=method)
        assert res.converged, res.message
        if method == "physical":
            assert res.solver["certified"], res.solver["accuracy"]
            assert_physically_consistent(res.robot)
        v = res.validate(held_out)
        ours.append(v.relative_rms_percent)
        h = held_out
        err = published_torques(robot, h.q, h.qd, h.qdd) - h.tau
        published.append(100 * np.sqrt(np.mean(err ** 2, axis=0) / np.mean(h.tau ** 2, axis=0)))
    ours, ref = np.mean(ours, axis=0), np.mean(published, axis=0)
    assert ours.mean() <= 1.10 * ref.mean(), f"{method}: {ours.mean():.2f} % against the published {ref.mean():.2f} %"
    np.testing.assert_array_less(ours, 1.25 * ref, err_msg=f"{method}: per joint against the published {ref}")
