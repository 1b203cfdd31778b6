"""Null-space (self-motion) dynamics of a redundant arm (De Luca, task space with redundancy, step 7), checked on
the Panda with a 3-row and a 6-row task against a direct projection of the joint-space model: a null-space basis
built here from the Jacobian, the joint accelerations of the articulated-body forward dynamics, and the time
derivative of Z̄ by an 8th-order central difference along q̇ (whose truncation and rounding errors, about 1e-12
relative at h = 5e-4, set the tolerance of that one check)."""

import numpy as np
import pytest

import robodyn as rd
from robodyn.dynamics.task_space import (
    SingularConfigurationError,
    jacobian_derivative,
    null_space_dynamics,
)
from robodyn.errors import InputError
from tests.support.random_robots import random_robot

# (rows, independent joints): the Panda's shoulder is spherical, so the flange position needs joints other than
# 1–3 as dependent columns; joint 7 does not move the flange origin and must be independent
TASKS = [([0, 1, 2], [2, 3, 4, 6]), (None, [6])]


def _mv(M, v):
    return (M @ v[..., None])[..., 0]


def _state(seed, batch=5, n=7):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.5, 1.5, (batch, n)), rng.uniform(-1, 1, (batch, n)), rng


def _basis(J, ind):
    """Zᵀ (n × r): identity rows on the independent joints, −J_d⁻¹ J_i on the others (so J Zᵀ = 0)."""
    n = J.shape[-1]
    dep = [k for k in range(n) if k not in ind]
    ZT = np.zeros(J.shape[:-2] + (n, len(ind)))
    ZT[..., dep, :] = -np.linalg.solve(J[..., :, dep], J[..., :, ind])
    ZT[..., ind, :] = np.eye(len(ind))
    return ZT


@pytest.mark.parametrize("rows, ind", TASKS)
def test_panda_null_space_dynamics_matches_projection(rows, ind):
    robot = rd.load("panda")
    q, qd, rng = _state(3)
    ns = null_space_dynamics(robot, q, qd, rows=rows, independent=ind)
    m = 6 if rows is None else len(rows)
    r = robot.n - m
    assert ns.Lambda_n.shape == (5, r, r) and ns.mu_n.shape == ns.p_n.shape == (5, r) and ns.Z.shape == (5, r, 7)
    J = rd.jacobian(robot, q)[..., rows if rows is not None else slice(None), :]
    A = rd.inertia_matrix(robot, q)
    ZT = _basis(J, ind)
    np.testing.assert_allclose(ns.Z, np.swapaxes(ZT, -1, -2), rtol=0, atol=1e-12 * np.abs(ZT).max())
    np.testing.assert_allclose(J @ ZT, 0, atol=1e-13)
    Lam_n = np.swapaxes(ZT, -1, -2) @ A @ ZT
    np.testing.assert_allclose(ns.Lambda_n, Lam_n, rtol=1e-12, atol=1e-12 * np.abs(Lam_n).max())
    np.testing.assert_allclose(ns.p_n, _mv(np.swapaxes(ZT, -1, -2), rd.gravity_torques(robot, q)), atol=1e-11)
    # inertial decoupling: E = [J; Z̄] makes E⁻ᵀ A E⁻¹ = diag(Λ, Λ_n)
    E = np.concatenate([J, ns.Zbar], -2)
    Einv = np.linalg.inv(E)
    Mx = np.swapaxes(Einv, -1, -2) @ A @ Einv
    np.testing.assert_allclose(Mx[..., :m, m:], 0, atol=1e-10 * np.abs(Mx).max())
    np.testing.assert_allclose(Mx[..., :m, :m], ns.task.Lambda, rtol=1e-9, atol=1e-10 * np.abs(Mx).max())
    np.testing.assert_allclose(Mx[..., m:, m:], ns.Lambda_n, rtol=1e-9, atol=1e-10 * np.abs(Mx).max())
    # v̇_n along the true motion: Z̄ q̈ (articulated-body q̈) + dZ̄/dt q̇ by central differences
    tau = rng.normal(size=(5, 7)) * 5
    qdd = rd.forward_dynamics(robot, q, qd, tau)
    h, weights = 5e-4, [(4 / 5, 1), (-1 / 5, 2), (4 / 105, 3), (-1 / 280, 4)]
    Zb = lambda s: null_space_dynamics(robot, q + s * qd, qd, rows=rows, independent=ind).Zbar  # noqa: E731
    dZb = sum(w * (Zb(k * h) - Zb(-k * h)) for w, k in weights) / h
    np.testing.assert_allclose(ns.Zbar_dot_qd, _mv(dZb, qd), rtol=0, atol=1e-10 * np.abs(ns.Zbar_dot_qd).max())
    vnd = _mv(ns.Zbar, qdd) + _mv(dZb, qd)
    lhs = _mv(ns.Lambda_n, vnd) + ns.mu_n + ns.p_n
    np.testing.assert_allclose(lhs, _mv(ns.Z, tau), rtol=0, atol=1e-9 * np.abs(lhs).max())


@pytest.mark.parametrize("rows, ind", TASKS)
def test_task_and_null_forces_act_separately(rows, ind):
    robot = rd.load("panda")
    q, qd, rng = _state(8)
    ns = null_space_dynamics(robot, q, qd, rows=rows, independent=ind)
    ts = ns.task
    m = ts.Lambda.shape[-1]
    F, Fn = rng.normal(size=(5, m)), rng.normal(size=(5, 7 - m))
    tau = ns.torques(F, Fn)
    qdd = rd.forward_dynamics(robot, q, qd, tau)
    rdd = _mv(ts.J, qdd) + ts.Jdot_qd
    np.testing.assert_allclose(_mv(ts.Lambda, rdd) + ts.mu + ts.p, F, rtol=0, atol=1e-9)
    vnd = _mv(ns.Zbar, qdd) + ns.Zbar_dot_qd
    np.testing.assert_allclose(_mv(ns.Lambda_n, vnd) + ns.mu_n + ns.p_n, Fn, rtol=0, atol=1e-9)
    # Z̄ᵀ F_n lies in the range of De Luca's projector N = I − Jᵀ J̄ᵀ (it is a τ₀ component)
    t0 = _mv(np.swapaxes(ns.Zbar, -1, -2), Fn)
    np.testing.assert_allclose(_mv(ts.null_projector, t0), t0, atol=1e-12)
    # the split recovers the forces from τ: F = J̄ᵀ τ, F_n = Z τ
    np.testing.assert_allclose(_mv(np.swapaxes(ts.Jbar, -1, -2), tau), F, atol=1e-10)
    np.testing.assert_allclose(_mv(ns.Z, tau), Fn, atol=1e-10)


def test_batch_equals_loop_and_unpacking():
    robot = rd.load("panda")
    q, qd, _ = _state(4, batch=3)
    ns = null_space_dynamics(robot, q, qd, independent=[6])
    Lam_n, mu_n, p_n = ns
    for i in range(3):
        one = null_space_dynamics(robot, q[i], qd[i], independent=[6])
        np.testing.assert_allclose(one.Lambda_n, Lam_n[i], rtol=1e-13)
        np.testing.assert_allclose(one.mu_n, mu_n[i], rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(one.p_n, p_n[i], rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("seed", [2, 5, 9])
def test_jacobian_derivative(seed):
    robot = random_robot(seed, nf=6, prismatic=True)
    rng = np.random.default_rng(seed)
    q, qd = rng.uniform(-2, 2, (4, robot.n)), rng.uniform(-1, 1, (4, robot.n))
    point = np.array([0.1, -0.3, 0.2])
    Jd = jacobian_derivative(robot, q, qd, point=point)
    np.testing.assert_allclose(_mv(Jd, qd), rd.jacobian_dot_qd(robot, q, qd, point=point), rtol=0, atol=1e-12)
    h, weights = 5e-4, [(4 / 5, 1), (-1 / 5, 2), (4 / 105, 3), (-1 / 280, 4)]
    fd = sum(w * (rd.jacobian(robot, q + k * h * qd, point=point) - rd.jacobian(robot, q - k * h * qd, point=point))
             for w, k in weights) / h
    np.testing.assert_allclose(Jd, fd, rtol=0, atol=1e-10 * max(1.0, np.abs(Jd).max()))


def test_errors():
    robot = rd.load("panda")
    q = np.full(7, 0.3)
    with pytest.raises(SingularConfigurationError, match=r"independent=\["):
        null_space_dynamics(robot, q, q, rows=[0, 1, 2])            # spherical shoulder: joints 1–3 dependent
    with pytest.raises(InputError, match="independent"):
        null_space_dynamics(robot, q, q, independent=[0, 1])       # r = 1 for the 6-row task
    with pytest.raises(InputError, match="no null space"):
        null_space_dynamics(rd.load("puma560"), np.zeros(6) + 0.4, np.zeros(6))
    # the prismatic joint 1 of this arm does not move v_z: its column of J_d is 0, or cos(π/2) = 6e-17 in NumPy
    arm = random_robot(21, tree=False, fixed=True)
    for native in ("1", "0"):
        with pytest.MonkeyPatch.context() as m:
            m.setenv("ROBODYN_NATIVE", native)
            with pytest.raises(SingularConfigurationError, match=r"independent=\[0\]"):
                null_space_dynamics(arm, [0.3, -0.4], [0.1, 0.2], frame=arm.nf, rows=[2], independent=[1])
