"""Derivatives of the floating-base dynamics (robodyn.dynamics.floating) against Pinocchio's
computeRNEADerivatives / computeABADerivatives (free flyer) and central differences in the tangent space."""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import robodyn as rd
from tests.support.pin_compare import assert_rel
from tests.support.floating import URDFS, legged_robot, random_floating, random_free_state
from tests.test_floating import PinFree

pin = pytest.importorskip("pinocchio")


def _pin_derivatives(P, robot, q, v, a):
    """Pinocchio's (∂τ/∂q, ∂τ/∂v) and (∂a/∂q, ∂a/∂v, M⁻¹) at one state, in robodyn's order."""
    m, d, p = P.model, P.data, np.ix_(P.perm, P.perm)
    rnea = pin.computeRNEADerivatives(m, d, P.q(q), P.v(v), P.v(a))
    tau = pin.rnea(m, d, P.q(q), P.v(v), P.v(a))
    aba = pin.computeABADerivatives(m, d, P.q(q), P.v(v), tau)
    minv = np.asarray(aba[2])
    minv = np.triu(minv) + np.triu(minv, 1).T  # Pinocchio fills the upper triangle
    return [np.asarray(x)[p] for x in rnea[:2]], [np.asarray(aba[0])[p], np.asarray(aba[1])[p], minv[p]], tau[P.perm]


def _check_against_pinocchio(robot, model, seed, batch=2):
    P = PinFree(robot, model)
    q, v, a = random_free_state(robot.n, seed, (batch,))
    dq, dv = rd.floating.floating_inverse_dynamics_derivatives(robot, q, v, a)
    tau = rd.floating.floating_inverse_dynamics(robot, q, v, a)
    fq, fv, ft = rd.floating.floating_forward_dynamics_derivatives(robot, q, v, tau)
    assert dq.shape == dv.shape == fq.shape == ft.shape == (batch, robot.n + 6, robot.n + 6)
    for s in range(batch):
        (Dq, Dv), aba, tp = _pin_derivatives(P, robot, q[s], v[s], a[s])
        assert_rel(tau[s], tp)
        assert_rel(dq[s], Dq, 1e-9)
        assert_rel(dv[s], Dv, 1e-9)
        for mine, theirs in zip((fq[s], fv[s], ft[s]), aba):
            # relative to the largest entry (M⁻¹ of a light robot has entries far above 1)
            assert np.max(np.abs(mine - theirs)) <= 1e-9 * np.max(np.abs(theirs))


@pytest.mark.parametrize("name", ("solo12.urdf", "anymal.urdf", "talos_reduced.urdf"))
def test_legged_robots_against_pinocchio_rnea_and_aba_derivatives(name):
    robot = legged_robot(name).replace(Fv=None, Fc=None)
    _check_against_pinocchio(robot, pin.buildModelFromUrdf(URDFS[name], pin.JointModelFreeFlyer()), 11)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), tree=st.booleans())
def test_random_robots_against_pinocchio(seed, tree):
    robot = random_floating(seed, tree=tree)
    model, _ = rd.to_pinocchio(robot)
    _check_against_pinocchio(robot, model, seed)


def _integrate(q, dq):
    """q ⊕ dq: the base pose moved by its local twist increment (first order in the position, exact rotation),
    the joints added; enough for central differences (the position does not enter the dynamics)."""
    R = Rotation.from_quat(q[3:7])
    out = q.copy()
    out[:3] = q[:3] + R.apply(dq[:3])
    out[3:7] = (R * Rotation.from_rotvec(dq[3:6])).as_quat()
    out[7:] = q[7:] + dq[6:]
    return out


def test_central_differences_with_friction_wrenches_and_gravity():
    robot = random_floating(21, tree=True)
    joint = robot.sigma != 2
    robot = robot.replace(Fv=np.where(joint, np.linspace(0.1, 0.5, robot.nf), 0.0),
                          Ia=np.where(joint, np.linspace(0.01, 0.02, robot.nf), 0.0))
    q, v, a = (x[0] for x in random_free_state(robot.n, 21, (1,)))
    W = np.random.default_rng(2).normal(size=(robot.nf, 6))
    g = np.array([0.3, -1.2, -9.0])
    kw = dict(wrenches=W, gravity=g)
    dq, dv = rd.floating.floating_inverse_dynamics_derivatives(robot, q, v, a, **kw)
    tau = rd.floating.floating_inverse_dynamics(robot, q, v, a, **kw)
    fq, fv, ft = rd.floating.floating_forward_dynamics_derivatives(robot, q, v, tau, **kw)
    h, N = 1e-6, robot.n + 6
    for k in range(N):
        e = np.zeros(N)
        e[k] = h
        cq = (rd.floating.floating_inverse_dynamics(robot, _integrate(q, e), v, a, **kw)
              - rd.floating.floating_inverse_dynamics(robot, _integrate(q, -e), v, a, **kw)) / (2 * h)
        cv = (rd.floating.floating_inverse_dynamics(robot, q, v + e, a, **kw) - rd.floating.floating_inverse_dynamics(robot, q, v - e, a, **kw)) / (2 * h)
        assert_rel(dq[:, k], cq, 1e-7)
        assert_rel(dv[:, k], cv, 1e-7)
        fd = rd.floating.floating_forward_dynamics
        assert_rel(fq[:, k], (fd(robot, _integrate(q, e), v, tau, **kw) - fd(robot, _integrate(q, -e), v, tau, **kw)) / (2 * h), 1e-6)
        assert_rel(fv[:, k], (fd(robot, q, v + e, tau, **kw) - fd(robot, q, v - e, tau, **kw)) / (2 * h), 1e-6)
        assert_rel(ft[:, k], (fd(robot, q, v, tau + e, **kw) - fd(robot, q, v, tau - e, **kw)) / (2 * h), 1e-6)
    # the base position never enters: zero columns
    assert np.all(dq[:, :3] == 0)


def test_batched_derivatives_equal_one_state_at_a_time():
    robot = random_floating(31)
    q, v, a = random_free_state(robot.n, 31, (2, 3))
    dq, dv = rd.floating.floating_inverse_dynamics_derivatives(robot, q, v, a)
    for i in range(2):
        for j in range(3):
            one = rd.floating.floating_inverse_dynamics_derivatives(robot, q[i, j], v[i, j], a[i, j])
            assert_rel(dq[i, j], one[0], 1e-13)
            assert_rel(dv[i, j], one[1], 1e-13)


def test_derivative_errors():
    robot = random_floating(41)
    q, v, a = (x[0] for x in random_free_state(robot.n, 41, (1,)))
    with pytest.raises(rd.InputError, match="'q'.*shape"):
        rd.floating.floating_inverse_dynamics_derivatives(robot, q[:-1], v, a)
    with pytest.raises(rd.InputError, match="quaternion"):
        rd.floating.floating_inverse_dynamics_derivatives(robot, np.concatenate([q[:3], 2 * q[3:7], q[7:]]), v, a)
    with pytest.raises(rd.InputError, match="mobile base"):
        rd.floating.floating_forward_dynamics_derivatives(robot.replace(base="mobile"), q, v, a)
    with pytest.raises(rd.InputError, match="fixed base"):
        rd.floating.floating_inverse_dynamics_derivatives(robot.replace(base="fixed"), q, v, a)
