"""Momentum-form state equations (De Luca, "State equations", x̃ = (q, M(q) q̇)) against Pinocchio's Coriolis matrix
and the articulated-body q̈, a central difference of the kinetic energy, and the velocity-form simulation; the
skew-symmetry of Ṁ_p − 2 S_p in transformed coordinates against a central difference of M_p."""

import numpy as np
import pytest

import robodyn as rd
from robodyn.dynamics.coordinates import transform_dynamics, transformed_factorization
from robodyn.dynamics.friction_models import frictionless
from robodyn.dynamics.momentum import momentum_state, momentum_state_derivative, velocity_state
from robodyn.dynamics.task_space import jacobian_derivative
from robodyn.errors import InputError
from robodyn.simulation.momentum import simulate_momentum
from tests.support.random_robots import random_robot

W8 = [(4 / 5, 1), (-1 / 5, 2), (4 / 105, 3), (-1 / 280, 4)]  # 8th-order central difference weights


def _mv(M, v):
    return (M @ v[..., None])[..., 0]


def _state(robot, seed, batch=4):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-2, 2, (batch, robot.n)), rng.uniform(-1.5, 1.5, (batch, robot.n)),
            rng.normal(size=(batch, robot.n)) * 3)


@pytest.mark.parametrize("seed", [1, 4, 8])
def test_pdot_is_time_derivative_of_momentum(seed):
    """ṗ = d/dt (A q̇) = Ȧ q̇ + A q̈ with the articulated-body q̈ (friction included)."""
    robot = random_robot(seed, nf=6, prismatic=True, friction=True)
    q, qd, tau = _state(robot, seed)
    x = momentum_state(robot, q, qd)
    np.testing.assert_allclose(velocity_state(robot, x), np.concatenate([q, qd], -1), rtol=0, atol=1e-12)
    xd = momentum_state_derivative(robot, x, tau)
    qdd = rd.forward_dynamics(robot, q, qd, tau)
    pd = _mv(rd.dynamics.inertia_matrix_derivative(robot, q, qd), qd) + _mv(rd.inertia_matrix(robot, q), qdd)
    np.testing.assert_allclose(xd[..., :robot.n], qd, rtol=0, atol=1e-12)
    np.testing.assert_allclose(xd[..., robot.n:], pd, rtol=0, atol=1e-10 * np.abs(pd).max())


@pytest.mark.parametrize("seed", [2, 6])
def test_half_gradient_of_kinetic_energy(seed):
    """½ ∂(q̇ᵀAq̇)/∂q = ∂T/∂q at fixed q̇, T computed link by link (kinetic_energy), by central differences."""
    robot = random_robot(seed, nf=5, prismatic=True, friction=False)
    q, qd, _ = _state(robot, seed)
    x = momentum_state(robot, q, qd)
    tau = rd.gravity_torques(robot, q)                              # cancels g: ṗ = ½ ∂(q̇ᵀAq̇)/∂q
    got = momentum_state_derivative(robot, x, tau)[..., robot.n:]
    h, n = 1e-3, robot.n
    grad = np.zeros_like(q)
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        grad[..., k] = sum(w * (rd.kinetic_energy(robot, q + j * e, qd) - rd.kinetic_energy(robot, q - j * e, qd))
                           for w, j in W8) / h
    np.testing.assert_allclose(got, grad, rtol=0, atol=1e-10 * max(1.0, np.abs(grad).max()))


def test_pdot_against_pinocchio_coriolis():
    """ṗ = τ + Cᵀq̇ − g with Pinocchio's C (any C with Ȧ = C + Cᵀ gives the same Cᵀq̇) on the Panda."""
    bridge = pytest.importorskip("tests.support.pin_bridge")
    import pinocchio as pin

    robot = frictionless(rd.load("panda"))
    pr = bridge.PinRobot(robot)
    q, qd, tau = _state(robot, 3)
    xd = momentum_state_derivative(robot, momentum_state(robot, q, qd), tau)
    for i in range(q.shape[0]):
        C = pin.computeCoriolisMatrix(pr.model, pr.data, pr._in(q[i]), pr._in(qd[i]))
        C = C[np.ix_(pr.perm, pr.perm)]
        ref = tau[i] + C.T @ qd[i] - pr.gravity(q[i])
        np.testing.assert_allclose(xd[i, 7:], ref, rtol=0, atol=1e-10 * np.abs(ref).max())


def test_momentum_simulation_equals_velocity_form():
    robot = rd.load("puma560").replace(Fv=np.full(6, 0.5))        # viscous friction, no Coulomb switching
    t = np.linspace(0.0, 0.8, 9)
    ctrl = lambda t, q, qd: np.sin(3 * np.asarray(t))[..., None] * np.ones(6) - 0.2 * q  # noqa: E731
    m = simulate_momentum(robot, ctrl, np.full(6, 0.3), np.ones(6), t, rtol=1e-11, atol=1e-11)
    s = rd.simulate(robot, ctrl, np.full(6, 0.3), np.ones(6), t, rtol=1e-11, atol=1e-11, friction="discontinuous")
    np.testing.assert_allclose(m.q, s.q, rtol=0, atol=1e-8)
    np.testing.assert_allclose(m.qd, s.qd, rtol=0, atol=1e-8)
    np.testing.assert_allclose(m.p, rd.dynamics.generalized_momentum(robot, m.q, m.qd), rtol=0, atol=1e-12)


def test_momentum_simulation_saturates_at_the_torque_limits():
    """A command above taulim is clipped as rd.simulate clips it: the same motion as the pre-clipped command on a
    robot without limits, and as the velocity form; saturate=False applies it as commanded."""
    free = rd.load("planar2r")
    robot = free.replace(taulim=[2.0, 0.5])
    t = np.linspace(0.0, 0.5, 6)
    ctrl = lambda t, q, qd: 40.0 * (np.array([1.0, -0.5]) - q) - 5.0 * qd  # noqa: E731
    clipped = lambda t, q, qd: np.clip(ctrl(t, q, qd), [-2.0, -0.5], [2.0, 0.5])  # noqa: E731
    tol = dict(rtol=1e-11, atol=1e-11)
    m = simulate_momentum(robot, ctrl, np.zeros(2), np.zeros(2), t, **tol)
    np.testing.assert_allclose(m.q, simulate_momentum(free, clipped, np.zeros(2), np.zeros(2), t, **tol).q, atol=1e-9)
    s = rd.simulate(robot, ctrl, np.zeros(2), np.zeros(2), t, friction="discontinuous", **tol)
    np.testing.assert_allclose(m.q, s.q, rtol=0, atol=1e-8)
    assert s.saturated.any()
    unclipped = simulate_momentum(robot, ctrl, np.zeros(2), np.zeros(2), t, saturate=False, **tol)
    np.testing.assert_allclose(unclipped.q, simulate_momentum(free, ctrl, np.zeros(2), np.zeros(2), t, **tol).q,
                               atol=1e-9)
    assert np.abs(unclipped.q - m.q).max() > 1e-3
    with pytest.raises(InputError, match="saturate"):
        simulate_momentum(robot, ctrl, np.zeros(2), np.zeros(2), t, saturate="yes")


def test_free_motion_conserves_energy():
    robot = frictionless(rd.load("puma560"))
    t = np.linspace(0.0, 1.0, 6)
    m = simulate_momentum(robot, None, np.full(6, 0.3), np.ones(6), t, rtol=1e-11, atol=1e-11)
    E = rd.kinetic_energy(robot, m.q, m.qd) + rd.potential_energy(robot, m.q)
    np.testing.assert_allclose(E, E[0], rtol=0, atol=1e-8 * abs(E[0]))


def _tip_coordinates(robot, q, qd):
    """p = (x, y of the tool frame, absolute angle q1 + q2 + q3) of a planar 3R arm: J and J̇ from the kinematics."""
    rows = [0, 1, 5]
    return rd.jacobian(robot, q)[..., rows, :], jacobian_derivative(robot, q, qd)[..., rows, :]


def test_skew_symmetry_in_task_coordinates():
    robot = frictionless(rd.load("planar3r"))
    rng = np.random.default_rng(5)
    q = rng.uniform([-1, 0.4, 0.4], [1, 2.4, 2.4], (4, 3))          # elbow bent: J invertible
    qd = rng.uniform(-1, 1, (4, 3))
    J, Jd = _tip_coordinates(robot, q, qd)
    fac = transformed_factorization(robot, q, qd, J, Jd)
    np.testing.assert_allclose(fac.skew, -np.swapaxes(fac.skew, -1, -2), rtol=0, atol=1e-12)
    cd = transform_dynamics(robot, q, qd, J, Jd)
    np.testing.assert_allclose(_mv(fac.S_p, cd.pd), cd.c_p, rtol=0, atol=1e-12)
    # Ṁ_p against a central difference of M_p(q) along q̇
    h = 1e-3

    def Mp(s):
        Js, Jds = _tip_coordinates(robot, q + s * qd, qd)
        return transform_dynamics(robot, q + s * qd, qd, Js, Jds).M_p

    dM = sum(w * (Mp(j * h) - Mp(-j * h)) for w, j in W8) / h
    np.testing.assert_allclose(fac.M_p_dot, dM, rtol=0, atol=1e-9 * np.abs(dM).max())


def test_skew_symmetry_absolute_angles_constant_map():
    robot = random_robot(3, nf=4, prismatic=False, friction=False)
    q, qd, _ = _state(robot, 3)
    J = np.tril(np.ones((4, 4)))                                    # absolute angles: J̇ = 0
    fac = transformed_factorization(robot, q, qd, J)
    np.testing.assert_allclose(fac.skew, -np.swapaxes(fac.skew, -1, -2), rtol=0, atol=1e-12)
    Jinv = np.linalg.inv(J)
    np.testing.assert_allclose(fac.M_p_dot, Jinv.T @ rd.dynamics.inertia_matrix_derivative(robot, q, qd) @ Jinv, atol=1e-12)


def test_errors():
    robot = rd.load("planar2r")
    with pytest.raises(InputError, match=r"\(\.\.\., 4\)"):
        momentum_state_derivative(robot, np.zeros(3), np.zeros(2))
    with pytest.raises(InputError, match="torque"):
        simulate_momentum(robot, 3.0, np.zeros(2), np.zeros(2), [0, 1])
    with pytest.raises(InputError, match="t_eval"):
        simulate_momentum(robot, None, np.zeros(2), np.zeros(2), [1, 0])
    with pytest.raises(InputError, match="jacobian"):
        transformed_factorization(robot, np.zeros(2), np.zeros(2), np.ones((2, 2)))
