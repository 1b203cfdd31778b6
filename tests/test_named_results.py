"""Results with several parts are named records (typing.NamedTuple) that still unpack as before."""

import numpy as np
import pytest

import robodyn as rd
from robodyn.dynamics.elastic import ElasticRobot, elastic_forward_dynamics
from robodyn.model.inertia import com_from_standard


@pytest.fixture(scope="module")
def puma():
    return rd.load("puma560")


def fields(result):
    assert isinstance(result, tuple) and hasattr(result, "_fields")
    return result._fields


def test_link_velocities_and_accelerations(puma):
    q, qd, qdd = np.random.default_rng(0).uniform(-1, 1, (3, 4, puma.n))
    v = rd.link_velocities(puma, q, qd)
    assert fields(v) == ("omega", "V")
    omega, V = v
    assert omega is v.omega and V is v.V and V.shape == (4, puma.nf, 3)
    a = rd.link_accelerations(puma, q, qd, qdd)
    assert fields(a) == ("omega_dot", "V_dot")
    assert a.V_dot.shape == (4, puma.nf, 3)


def test_mass_properties():
    p = rd.standard_from_com(2.0, [0.1, -0.2, 0.3], np.diag([0.3, 0.4, 0.5]))
    m = com_from_standard(p)
    assert fields(m) == ("M", "S", "IG")
    M, S, IG = m
    assert M == pytest.approx(2.0) and np.allclose(S, [0.1, -0.2, 0.3]) and np.allclose(IG, np.diag([0.3, 0.4, 0.5]))


def test_elastic_accelerations(puma):
    er = ElasticRobot.from_rigid(puma, np.full(puma.n, 1e4))
    z = np.zeros(puma.n)
    res = elastic_forward_dynamics(er, z, z, z, z, z)
    assert fields(res) == ("qdd", "qmdd")
    qdd, qmdd = res
    assert qdd.shape == qmdd.shape == (puma.n,)


def test_reduced_inverse_dynamics():
    robot = rd.load("planar3r").replace(base="floating")
    q = np.concatenate([[0, 0, 0, 1, 0, 0, 0], [0.1, 0.2, 0.3]])
    res = rd.floating.reduced_inverse_dynamics(robot, q, np.zeros(robot.n + 6), np.ones(robot.n))
    assert fields(res) == ("a", "tau")
    a, tau = res
    assert a.shape == (robot.n + 6,) and tau.shape == (robot.n,)
    np.testing.assert_array_equal(a[6:], np.ones(robot.n))


def test_derivative_results_are_named_and_friction_bool_means_the_robots_own(puma):
    q, qd, qdd = np.random.default_rng(1).uniform(-1, 1, (3, 5, puma.n))
    d = rd.inverse_dynamics_derivatives(puma, q, qd, qdd)
    assert fields(d) == ("dtau_dq", "dtau_dqd")
    same = rd.inverse_dynamics_derivatives(puma, q, qd, qdd, friction=True)
    np.testing.assert_array_equal(same.dtau_dqd, d.dtau_dqd)
    rigid = rd.inverse_dynamics_derivatives(puma, q, qd, qdd, friction=False)
    # friction=False is the robot without friction, as in rd.inverse_dynamics(..., friction=False)
    np.testing.assert_allclose(rigid.dtau_dqd + np.eye(puma.n) * puma.Fv[puma.joint_frames], d.dtau_dqd,
                               rtol=0, atol=1e-12 * np.abs(d.dtau_dqd).max())
    f = rd.forward_dynamics_derivatives(puma, q, qd, rd.inverse_dynamics(puma, q, qd, qdd))
    assert fields(f) == ("dqdd_dq", "dqdd_dqd", "dqdd_dtau")
    np.testing.assert_allclose(f.dqdd_dtau @ rd.inertia_matrix(puma, q), np.broadcast_to(np.eye(puma.n), (5, 6, 6)),
                               atol=1e-10)
    lin = rd.linearize(puma, q[0], qd[0], qdd=qdd[0])
    assert fields(lin) == ("A", "B") and lin.A.shape == (12, 12) and lin.B.shape == (12, 6)


def test_task_space_results_index_like_named_records():
    arm = rd.load("planar3r")
    q, qd = np.array([0.3, -0.6, 0.9]), np.array([0.2, 0.1, -0.3])
    res = rd.dynamics.task_space_dynamics(arm, q, qd, rows=[0, 1])
    assert res._fields == ("Lambda", "mu", "p") and len(res) == 3
    assert res[0] is res.Lambda and res[1] is res.mu and res[-1] is res.p and res[:2] == (res.Lambda, res.mu)
    Lambda, mu, p = res
    assert Lambda.shape == (2, 2) and res.J.shape == (2, 3) and res.null_projector.shape == (3, 3)
    ns = rd.dynamics.null_space_dynamics(arm, q, qd, rows=[0, 1])
    assert ns._fields == ("Lambda_n", "mu_n", "p_n") and len(ns) == 3 and ns[0] is ns.Lambda_n
    assert ns[2] is ns.p_n and ns.task.Lambda.shape == (2, 2)
