"""Lagrange form: C (Christoffel), Ȧ, energies, Cholesky direct dynamics, state equation."""

import numpy as np
import pytest
from hypothesis import given
from scipy.integrate import solve_ivp

import robodyn as rd
from robodyn.dynamics import composite, lagrange, recursive
from robodyn.kinematics import base_poses
from tests.support.pin_compare import assert_rel, pin_aba, pin_coriolis, pin_inertia_partials
from tests.support.random_robots import random_robot, random_state, robots

#: central 8th-order first-derivative stencil (offset, weight)
STENCIL = ((1, 4 / 5), (2, -1 / 5), (3, 4 / 105), (4, -1 / 280))


def central_difference(f, q, k, h=1e-3):
    e = np.zeros_like(q)
    e[..., k] = h
    return sum(w * (f(q + s * e) - f(q - s * e)) for s, w in STENCIL) / h


def no_friction(robot):
    z = np.zeros(robot.nf)
    return robot.replace(Fc=z, Fv=z, Foff=z, Fst=z)


def dU_dt(robot, q, qd):
    """dU/dt = −Σ_j gᵀ(M_j ⁰V_j + ⁰ω_j × ⁰A_j MS_j) from link velocities, independent of Q."""
    w, V = rd.link_velocities(robot, q, qd)
    R0, _ = base_poses(robot, q, q.dtype)
    w0, V0 = np.einsum("...jab,...jb->...ja", R0, w), np.einsum("...jab,...jb->...ja", R0, V)
    s0 = np.einsum("...jab,jb->...ja", R0, robot.MS)
    return -np.einsum("a,...ja->...", robot.gravity, robot.M[:, None] * V0 + np.cross(w0, s0))


@given(robots)
def test_coriolis_closes_the_model(robot):
    """C q̇ + Q = H at zero friction and wrenches ([9.6], [9.95])."""
    robot = no_friction(robot)
    q, qd, _ = random_state(robot, 3, (3,))
    C = rd.coriolis_matrix(robot, q, qd)
    assert_rel(np.einsum("...ij,...j->...i", C, qd) + rd.gravity_torques(robot, q), rd.bias_torques(robot, q, qd))


@given(robots)
def test_christoffel_symbols_from_pinocchio_partials(robot):
    """c_ijk [9.7] against ∂A/∂q from Pinocchio's RNEA derivatives; symmetric in j, k; C = Σ_k c_ijk q̇_k."""
    q, qd, _ = random_state(robot, 9, (2,))
    c = rd.dynamics.christoffel_symbols(robot, q)
    assert c.shape == (2, robot.n, robot.n, robot.n)
    for b in range(2):
        dA = pin_inertia_partials(robot, q[b])  # [i, j, k] = ∂A_ij/∂q_k
        assert_rel(c[b], 0.5 * (dA + dA.transpose(0, 2, 1) - dA.transpose(2, 1, 0)))
    assert_rel(c, np.swapaxes(c, -1, -2))
    assert_rel(rd.coriolis_matrix(robot, q, qd), np.einsum("...ijk,...k->...ij", c, qd))


@given(robots)
def test_coriolis_equals_pinocchio(robot):
    """Pinocchio's computeCoriolisMatrix is built from spatial algebra, not from ∂A/∂q; it gives the same C."""
    q, qd, _ = random_state(robot, 14, (2,))
    C = rd.coriolis_matrix(robot, q, qd)
    for b in range(2):
        assert_rel(C[b], pin_coriolis(robot, q[b], qd[b]))


@given(robots)
def test_Adot_minus_2C_is_skew_symmetric(robot):
    q, qd, _ = random_state(robot, 5, (3,))
    N = rd.dynamics.inertia_matrix_derivative(robot, q, qd) - 2 * rd.coriolis_matrix(robot, q, qd)
    scale = np.abs(rd.dynamics.inertia_matrix_derivative(robot, q, qd)).max()
    assert_rel(N + np.swapaxes(N, -1, -2), 0 * N, 1e-13 * max(1, scale))


@given(robots)
def test_partials_equal_pinocchio_rnea_derivatives(robot):
    """∂A/∂q_k against Pinocchio's analytic RNEA derivatives (an independent algorithm), 1e-10 relative."""
    q, _, _ = random_state(robot, 10, (2,))
    dA = lagrange.inertia_matrix_partials(robot, q)
    for b in range(2):
        assert_rel(dA[b], pin_inertia_partials(robot, q[b]))


@given(robots)
def test_partials_match_eighth_order_finite_difference(robot):
    """∂A/∂q_k vs an 8th-order central difference with h = 1e-3: truncation ~ h⁸/630·|A⁽⁹⁾| < 1e-24 (A is
    trigonometric in revolute and quadratic in prismatic q), rounding ≲ 2.1·|δA|/h with |δA| ~ 100 ε |A|, i.e.
    ~5e-11 |A|; the tolerance is 1e-9 · max|A|."""
    q, qd, _ = random_state(robot, 8)
    dA = lagrange.inertia_matrix_partials(robot, q)
    A = composite.inertia_matrix(robot, q)
    fd = np.stack([central_difference(lambda x: composite.inertia_matrix(robot, x), q, k) for k in range(robot.n)], -1)
    assert np.abs(dA - fd).max() <= 1e-9 * np.abs(A).max()
    Adot = rd.dynamics.inertia_matrix_derivative(robot, q, qd)
    assert np.abs(Adot - fd @ qd).max() <= 1e-9 * np.abs(A).max() * np.abs(qd).sum()


def test_coriolis_planar2r_closed_form():
    """De Luca's 2R: h = −m2 l1 d2 s2,  C = [[h q̇2, h (q̇1 + q̇2)], [−h q̇1, 0]]."""
    robot = rd.load("planar2r")
    q, qd = np.array([0.4, -1.1]), np.array([0.7, -2.0])
    h = -1.0 * 1.0 * 0.5 * np.sin(q[1])
    assert_rel(rd.coriolis_matrix(robot, q, qd), [[h * qd[1], h * (qd[0] + qd[1])], [-h * qd[0], 0.0]], 1e-14)


@given(robots)
def test_energies(robot):
    """E = ½ q̇ᵀ A q̇ (E link by link [9.16], A by composite links); Qᵀ q̇ = dU/dt; U vs closed form at q."""
    q, qd, _ = random_state(robot, 6, (3,))
    A = composite.inertia_matrix(robot, q)
    assert_rel(rd.kinetic_energy(robot, q, qd), 0.5 * np.einsum("...i,...ij,...j->...", qd, A, qd))
    assert_rel(np.sum(rd.gravity_torques(robot, q) * qd, -1), dU_dt(robot, q, qd))
    Q_fd = np.stack([central_difference(lambda x: rd.potential_energy(robot, x), q, k) for k in range(robot.n)], -1)
    assert np.abs(Q_fd - rd.gravity_torques(robot, q)).max() <= 1e-9 * max(1, np.abs(rd.potential_energy(robot, q)).max())


def test_potential_energy_planar2r():
    robot = rd.load("planar2r")
    q = np.array([0.3, 0.5])
    y = 0.5 * np.sin(q[0]) + (np.sin(q[0]) + 0.5 * np.sin(q[0] + q[1]))
    assert_rel(rd.potential_energy(robot, q), 9.81 * y, 1e-14)
    x = 0.5 * np.cos(q[0]) + (np.cos(q[0]) + 0.5 * np.cos(q[0] + q[1]))
    assert_rel(rd.potential_energy(robot, q, gravity=[9.81, 0, 0]), -9.81 * x, 1e-14)


@given(robots)
def test_power_balance_exact(robot):
    """dT/dt + dU/dt = q̇ᵀ A q̈ + ½ q̇ᵀ Ȧ q̇ + dU/dt = q̇ᵀ(Γ − Γ_f), q̈ from the direct model (friction included)."""
    q, qd, tau = random_state(robot, 1, (3,))
    qdd = rd.forward_dynamics(robot, q, qd, tau)
    A, Adot = composite.inertia_matrix(robot, q), rd.dynamics.inertia_matrix_derivative(robot, q, qd)
    dT = np.einsum("...i,...ij,...j->...", qd, A, qdd) + 0.5 * np.einsum("...i,...ij,...j->...", qd, Adot, qd)
    power = np.sum(qd * (tau - rd.friction_torques(robot, qd)), -1)
    tol = 1e-10 * max(1, np.abs(qd * tau).sum())  # relative to the size of the power terms, scaled once
    assert np.abs(dT + dU_dt(robot, q, qd) - power).max() <= tol
    dT_expected = power - np.sum(qd * rd.gravity_torques(robot, q), -1)  # dT/dt = q̇ᵀ(Γ − Q − Γ_f)
    assert np.abs(dT - dT_expected).max() <= tol


def test_energy_balance_along_trajectory():
    """E(t) − E(0) = ∫ q̇ᵀ(Γ − Γ_f) dt along a simulated motion (DOP853, rtol = atol = 1e-12 over 1 s).  The
    balance error scales with the integrator tolerance (measured: 1e-10 → ~1e-10, 1e-12 → ~2e-12, 1e-13 →
    ~2e-13 absolute on an energy scale ~30 J), so the integrator, not the model, sets it: tolerance 1e-10 relative."""
    robot = random_robot(21, nf=4, tree=True, fixed=True)
    robot = robot.replace(Fc=np.zeros(robot.nf))  # viscous friction only: Coulomb's sign() would stiffen the ODE
    n = robot.n
    q0, qd0, tau0 = random_state(robot, 2)

    def rhs(t, y):
        x, tau = y[: 2 * n], tau0 * np.cos(3 * t)
        qd = x[n:]
        work = qd @ (tau - rd.friction_torques(robot, qd))
        return np.concatenate([rd.state_derivative(robot, x, tau), [work]])

    sol = solve_ivp(rhs, (0, 1.0), np.concatenate([q0, qd0, [0.0]]), method="DOP853", rtol=1e-12, atol=1e-12)
    assert sol.success
    q, qd, work = sol.y[:n].T, sol.y[n : 2 * n].T, sol.y[-1]
    E = rd.kinetic_energy(robot, q, qd) + rd.potential_energy(robot, q)
    scale = np.abs(E).max() + np.abs(work).max()
    assert np.abs(E - E[0] - work).max() <= 1e-10 * scale
    assert np.abs(work).max() > 1e-2 * scale  # the test is not trivial: real work is exchanged


@given(robots)
def test_cholesky_equals_pinocchio_and_recursive(robot):
    q, qd, tau = random_state(robot, 12, (2,))
    W = np.random.default_rng(robot.n).normal(size=(robot.nf, 6))
    qdd = lagrange.forward_dynamics(robot, q, qd, tau, wrenches=W)
    assert_rel(qdd, recursive.forward_dynamics(robot, q, qd, tau, wrenches=W))
    free = no_friction(robot)
    for b in range(2):
        tau_b = tau[b] - rd.friction_torques(robot, qd[b])
        assert_rel(rd.forward_dynamics(free, q[b], qd[b], tau_b, method="cholesky"), pin_aba(free, q[b], qd[b], tau_b))


@pytest.mark.parametrize("name", rd.list_robots())
def test_builtin_robots(name):
    robot = rd.load(name)
    q, qd, tau = random_state(robot, 13, (2,))
    free = no_friction(robot)
    qdd = rd.forward_dynamics(free, q, qd, tau, method="cholesky")
    C = rd.coriolis_matrix(free, q, qd)
    for b in range(2):
        assert_rel(qdd[b], pin_aba(free, q[b], qd[b], tau[b]))
        assert_rel(lagrange.inertia_matrix_partials(robot, q[b]), pin_inertia_partials(robot, q[b]))
    assert_rel(np.einsum("...ij,...j->...i", C, qd) + rd.gravity_torques(free, q), rd.bias_torques(free, q, qd))


def test_state_derivative():
    robot = random_robot(4, nf=5, tree=True, fixed=True)
    q, qd, tau = random_state(robot, 3, (4,))
    x = np.concatenate([q, qd], -1)
    for method in ("recursive", "cholesky"):
        xd = rd.state_derivative(robot, x, tau, method=method)
        assert xd.shape == (4, 2 * robot.n)
        np.testing.assert_array_equal(xd[:, : robot.n], qd)
        assert_rel(xd[:, robot.n :], recursive.forward_dynamics(robot, q, qd, tau))
    x32 = rd.state_derivative(robot, x.astype(np.float32), tau.astype(np.float32))
    assert x32.dtype == np.float32
    with pytest.raises(rd.InputError, match="'x' has shape \\(4, 5\\).*\\(\\.\\.\\., 8\\)"):
        rd.state_derivative(robot, x[:, :5], tau)
    with pytest.raises(rd.InputError, match="unknown method"):
        rd.state_derivative(robot, x, tau, method="euler")


def test_batch_equals_loop_and_float32():
    robot = random_robot(17, nf=5, tree=True, fixed=True)
    q, qd, tau = random_state(robot, 2, (3, 2))
    funcs = {
        "C": lambda *a: rd.coriolis_matrix(robot, a[0], a[1]),
        "Adot": lambda *a: rd.dynamics.inertia_matrix_derivative(robot, a[0], a[1]),
        "T": lambda *a: rd.kinetic_energy(robot, a[0], a[1]),
        "U": lambda *a: rd.potential_energy(robot, a[0]),
        "fd": lambda *a: lagrange.forward_dynamics(robot, *a),
    }
    for name, f in funcs.items():
        batched = f(q, qd, tau)
        assert batched.shape[:2] == (3, 2), name
        for i in range(3):
            for j in range(2):
                np.testing.assert_allclose(batched[i, j], f(q[i, j], qd[i, j], tau[i, j]), rtol=0, atol=1e-12, err_msg=name)
        single = f(*(x.astype(np.float32) for x in (q, qd, tau)))
        assert single.dtype == np.float32, name
        np.testing.assert_allclose(single, batched, rtol=0, atol=1e-3 * max(1, np.abs(batched).max()), err_msg=name)


def test_bad_arguments():
    robot = rd.load("planar2r")
    with pytest.raises(rd.InputError, match="'qd' has shape \\(3,\\)"):
        rd.coriolis_matrix(robot, [0, 0], [0, 0, 0])
    with pytest.raises(rd.InputError, match="'qd'.*NaN"):
        rd.dynamics.inertia_matrix_derivative(robot, [0, 0], [np.inf, 0])
    with pytest.raises(rd.InputError, match="'gravity'"):
        rd.potential_energy(robot, [0, 0], gravity=[1, 2])


def test_state_derivative_argument_order_and_the_deprecated_positional_one():
    robot = rd.load("planar2r")
    x, tau, g = np.array([0.3, -0.2, 0.5, 1.0]), np.array([1.0, 2.0]), np.array([0.0, -9.81, 0.0])
    W = np.zeros((2, 6))
    W[1, :3] = [1.0, 0.0, 0.0]
    new = rd.state_derivative(robot, x, tau, wrenches=W, gravity=g, method="cholesky")
    expected = rd.forward_dynamics(robot, x[:2], x[2:], tau, W, g, "recursive")  # same order as forward_dynamics
    np.testing.assert_allclose(new, np.r_[x[2:], expected], rtol=1e-12)
    with pytest.warns(DeprecationWarning, match="by keyword"):
        old = rd.state_derivative(robot, x, tau, "cholesky", W, g)
    np.testing.assert_array_equal(old, new)
    with pytest.raises(rd.InputError, match="positional"):
        rd.state_derivative(robot, x, tau, "cholesky", W, g, 1)
