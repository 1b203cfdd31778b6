"""Newton–Euler inverse dynamics: seed closed forms, Pinocchio, power balance, batching, dtypes, bad input."""

import numpy as np
import pytest
from hypothesis import given

import robodyn as rd
from robodyn.dynamics.newton_euler import rnea
from tests.support.pin_bridge import PinRobot
from tests.support.random_robots import random_inertia, random_robot, random_state, robots

RTOL = 1e-10


def close(a, b, rtol=RTOL):
    """|a − b| ≤ rtol · max(1, |b|_∞): relative error with an absolute floor at unit scale."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    scale = max(1.0, float(np.max(np.abs(b)))) if b.size else 1.0
    err = float(np.max(np.abs(a - b))) if b.size else 0.0
    assert err <= rtol * scale, f"error {err:.3e} > {rtol:.0e} * {scale:.3e}"


# ---- Khalil & Dombre Example 9.1: first three links of the RX-90 -----------------------------------------


def rx90_three(seed):
    rng = np.random.default_rng(seed)
    D3 = rng.uniform(0.2, 0.8)
    G3 = rng.uniform(-12, -5)
    robot = rd.Robot(
        name="rx90-3",
        sigma=[0, 0, 0],
        alpha=[0, np.pi / 2, 0],
        d=[0, 0, D3],
        params=np.array([random_inertia(rng) for _ in range(3)]),
        Ia=rng.uniform(0.1, 1.0, 3),
        gravity=[0, 0, G3],
    )
    return robot, D3, G3


def example_9_1(robot, D3, G3, q):
    """The closed forms A11..A33 and Q1..Q3 of Example 9.1 (Khalil & Dombre ch. 9)."""
    XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M = robot.params.T
    Ia = robot.Ia
    S2, C2 = np.sin(q[1]), np.cos(q[1])
    S3, C3 = np.sin(q[2]), np.cos(q[2])
    S23, C23 = np.sin(q[1] + q[2]), np.cos(q[1] + q[2])
    A = np.zeros((3, 3), np.result_type(q, float))
    A[0, 0] = (Ia[0] + ZZ[0] + S2**2 * XX[1] + 2 * C2 * S2 * XY[1] + C2**2 * YY[1] + S23**2 * XX[2]
               + 2 * C23 * S23 * XY[2] + C23**2 * YY[2] + 2 * C2 * C23 * D3 * MX[2] - 2 * C2 * S23 * D3 * MY[2]
               + C2**2 * D3**2 * M[2])
    A[0, 1] = S2 * XZ[1] + C2 * YZ[1] + S23 * XZ[2] + C23 * YZ[2] - S2 * D3 * MZ[2]
    A[0, 2] = S23 * XZ[2] + C23 * YZ[2]
    A[1, 1] = Ia[1] + ZZ[1] + ZZ[2] + 2 * C3 * D3 * MX[2] - 2 * S3 * D3 * MY[2] + D3**2 * M[2]
    A[1, 2] = ZZ[2] + C3 * D3 * MX[2] - S3 * D3 * MY[2]
    A[2, 2] = Ia[2] + ZZ[2]
    A = np.triu(A) + np.triu(A, 1).T
    Q = np.array([
        0.0,
        -G3 * (C2 * MX[1] - S2 * MY[1] + C23 * MX[2] - S23 * MY[2] + D3 * C2 * M[2]),
        -G3 * (C23 * MX[2] - S23 * MY[2]),
    ])
    return A, Q


@pytest.mark.parametrize("seed", range(8))
def test_example_9_1_inertia_matrix_and_gravity(seed):
    robot, D3, G3 = rx90_three(seed)
    q = np.random.default_rng(100 + seed).uniform(-np.pi, np.pi, 3)
    A_ref, Q_ref = example_9_1(robot, D3, G3, q)
    zero = np.zeros(3)
    A = np.stack([rd.inverse_dynamics(robot, q, zero, u, gravity=zero) for u in np.eye(3)], -1)
    Q = rd.inverse_dynamics(robot, q, zero, zero)
    close(A, A_ref)
    close(Q, Q_ref)
    close(rd.gravity_torques(robot, q), Q_ref)
    # a wrong closed form must fail: the D3² M3 term of A22 matters
    assert abs(A[1, 1] - (A_ref[1, 1] - D3**2 * robot.M[2])) > 1e-3


def test_example_9_1_frames_match_the_seed():
    """²A₁ printed in Example 9.1 for α₂ = π/2: [[C2, 0, S2], [−S2, 0, C2], [0, −1, 0]]."""
    robot, _, _ = rx90_three(0)
    q = np.array([0.3, 0.7, -0.4])
    A12 = rd.forward_kinematics(robot, q)[1, :3, :3].T @ rd.forward_kinematics(robot, q)[0, :3, :3]
    c, s = np.cos(0.7), np.sin(0.7)
    close(A12, [[c, 0, s], [-s, 0, c], [0, -1, 0]])


# ---- Pinocchio ---------------------------------------------------------------------------------------------


@given(robots)
def test_rnea_matches_pinocchio_with_wrenches(robot):
    pr = PinRobot(robot)
    seed = int(robot.name[6:])
    q, qd, qdd = random_state(robot, seed)
    W = np.random.default_rng(seed).normal(size=(robot.nf, 6))
    rigid = rd.inverse_dynamics(robot, q, qd, qdd, wrenches=W) - rd.friction_torques(robot, qd)
    close(rigid, pr.rnea(q, qd, qdd, W))
    close(rnea(robot, q, qd, qdd, robot.gravity, W), pr.rnea(q, qd, qdd, W))
    close(rd.inverse_dynamics(robot, q, qd, qdd) - rd.friction_torques(robot, qd), pr.rnea(q, qd, qdd))


@given(robots)
def test_gravity_and_bias_match_pinocchio(robot):
    pr = PinRobot(robot)
    seed = int(robot.name[6:])
    q, qd, _ = random_state(robot, seed)
    close(rd.gravity_torques(robot, q), pr.gravity(q))
    bias = rd.bias_torques(robot, q, qd) - rd.friction_torques(robot, qd)
    close(bias, pr.rnea(q, qd, np.zeros(robot.n)))


@pytest.mark.parametrize("name", rd.list_robots())
def test_builtin_robots_match_pinocchio(name):
    robot = rd.load(name)
    pr = PinRobot(robot)
    q, qd, qdd = random_state(robot, 7)
    W = np.random.default_rng(7).normal(size=(robot.nf, 6))
    rigid = rd.inverse_dynamics(robot, q, qd, qdd, wrenches=W) - rd.friction_torques(robot, qd)
    close(rigid, pr.rnea(q, qd, qdd, W))
    close(rd.gravity_torques(robot, q), pr.gravity(q))


def test_wrench_sign_is_the_seeds():
    """A link pushing on the environment with force f (f_e of [9.91]) needs extra joint torque, as if it carried
    a load; for a horizontal prismatic joint along z₁ pushing with f_z = 5 N the joint force rises by 5 N."""
    robot = rd.Robot(name="p", sigma=[1], params=[[0.1, 0, 0, 0.1, 0, 0.1, 0, 0, 0, 2.0]], gravity=[0, 0, 0])
    W = np.array([[0, 0, 5.0, 0, 0, 0]])
    assert rd.inverse_dynamics(robot, [0.2], [0], [0], wrenches=W)[0] == pytest.approx(5.0, rel=1e-15)
    assert rd.inverse_dynamics(robot, [0.2], [0], [1.5])[0] == pytest.approx(3.0, rel=1e-15)


def test_friction_and_rotor_inertia_terms():
    robot = random_robot(4, nf=3, prismatic=True).replace(
        Fc=[1.0, 2.0, 0.5], Fv=[0.3, 0.0, 0.7], Foff=[0.1, -0.2, 0.0], Fst=[1.5, 0.0, 0.0], kst=[2.0, 0, 0], Bst=[1.0, 0, 0]
    )
    qd = np.array([0.5, -2.0, 0.0])
    expected = np.array([
        1.0 * 1 + 0.3 * 0.5 + 0.1 + (1.5 - 1.0) * np.exp(-2.0 * 0.5),
        -2.0 + 0.0 - 0.2,
        0.0,
    ])
    close(rd.friction_torques(robot, qd), expected)
    q = np.array([0.1, 0.2, 0.3])
    z = np.zeros(3)
    qdd = np.array([1.0, -1.0, 2.0])
    no_rotor = robot.replace(Ia=np.zeros(3))
    close(rd.inverse_dynamics(robot, q, z, qdd) - rd.inverse_dynamics(no_rotor, q, z, qdd), robot.Ia * qdd)
    close(rd.inverse_dynamics(robot, q, qd, z) - rd.bias_torques(robot, q, qd), z)


# ---- power balance [9.13] -----------------------------------------------------------------------------------


def kinetic_energy(robot, q, qd):
    """E = ½ Σ [ωᵀJω + M VᵀV + 2 MSᵀ(V × ω)] + ½ Σ Ia q̇², [9.13] with link velocities in R_j."""
    w, V = rd.link_velocities(robot, q, qd)
    Jw = np.einsum("fab,...fb->...fa", robot.J, w)
    E = 0.5 * np.sum(np.einsum("...fa,...fa->...f", w, Jw) + robot.M * np.sum(V * V, -1)
                     + 2 * np.einsum("fa,...fa->...f", robot.MS, np.cross(V, w)), -1)
    return E + 0.5 * np.sum(robot.Ia[robot.joint_frames] * qd**2, -1)


# 8th-order central difference weights for f'(t) with steps ±h..±4h.
FD8 = np.array([1 / 280, -4 / 105, 1 / 5, -4 / 5, 0, 4 / 5, -1 / 5, 4 / 105, -1 / 280])


def power_residual(robot, seed, model=None):
    """(dE/dt − q̇ᵀ(Γ − Q − Γ_f), scale) along q(t) = a + b sin(ω t + φ); Γ, Q, Γ_f from ``model`` (default robot),
    E from ``robot``; d/dt by an 8th-order central difference.

    Error budget: with h = 1e-3 and |ω| ≤ 2 the truncation error is ~ h⁸ ω⁹ E / 630 < 1e-22 E; round-off is
    ~ Σ|w| ε E / h ≈ 3.4e-13 E.  Both sit far below the 1e-10 tolerance on the power scale max(Σ|q̇ Γ|, E).
    """
    model = robot if model is None else model
    rng = np.random.default_rng(seed)
    n = robot.n
    a, b = rng.uniform(-1, 1, n), rng.uniform(0.2, 1, n)
    om, ph = rng.uniform(0.5, 2, n), rng.uniform(-np.pi, np.pi, n)
    h, t0 = 1e-3, rng.uniform(0, 5)
    t = t0 + h * np.arange(-4, 5)[:, None]
    q, qd = a + b * np.sin(om * t + ph), b * om * np.cos(om * t + ph)
    dE = FD8 @ kinetic_energy(robot, q, qd) / h
    q0, qd0 = q[4], qd[4]
    qdd0 = -b * om**2 * np.sin(om * t0 + ph)
    tau = rd.inverse_dynamics(model, q0, qd0, qdd0)
    power = qd0 @ (tau - rd.gravity_torques(model, q0) - rd.friction_torques(model, qd0))
    scale = max(1.0, float(np.sum(np.abs(qd0 * tau))), float(kinetic_energy(robot, q0, qd0)))
    return dE - power, scale


@given(robots)
def test_power_balance(robot):
    residual, scale = power_residual(robot, int(robot.name[6:]))
    assert abs(residual) <= RTOL * scale, residual


@pytest.mark.parametrize("change", ["MX", "XY", "M", "Ia"])
def test_power_balance_detects_a_wrong_model(change):
    """The same check fails when the dynamic model's parameters differ from the energy's: the test has teeth."""
    robot = random_robot(11, nf=4, tree=True).replace(Ia=[0.4, 0.3, 0.2, 0.1])
    params = robot.params.copy()
    if change == "Ia":
        model = robot.replace(Ia=[0.4, 0.3, 0.25, 0.1])
    else:
        params[2, rd.PARAMETER_NAMES.index(change)] *= 1.05
        model = robot.replace(params=params)
    residual, scale = power_residual(robot, 3, model)
    assert abs(residual) > 1e4 * RTOL * scale  # far outside the tolerance


# ---- batching and dtypes --------------------------------------------------------------------------------------


@pytest.mark.parametrize("shapes", [((5,), (5,), (5,)), ((2, 3), (2, 3), (2, 3)), ((4, 1), (1, 3), ()), ((1,), (), (2, 2))])
def test_batch_equals_per_sample_loop(shapes):
    robot = random_robot(21, nf=5, tree=True, fixed=True)
    rng = np.random.default_rng(3)
    q, qd, qdd = (rng.uniform(-2, 2, s + (robot.n,)) for s in shapes)
    batch = np.broadcast_shapes(*shapes)
    W = rng.normal(size=batch + (robot.nf, 6))
    g = rng.normal(size=batch + (3,))
    tau = rd.inverse_dynamics(robot, q, qd, qdd, wrenches=W, gravity=g)
    G = rd.gravity_torques(robot, q)
    H = rd.bias_torques(robot, *np.broadcast_arrays(*(np.broadcast_to(x, batch + (robot.n,)) for x in (q, qd))), wrenches=W)
    assert tau.shape == batch + (robot.n,)
    assert G.shape == np.shape(q)
    Q, QD, QDD = (np.broadcast_to(x, batch + (robot.n,)) for x in (q, qd, qdd))
    for idx in np.ndindex(batch):
        one = rd.inverse_dynamics(robot, Q[idx], QD[idx], QDD[idx], wrenches=W[idx], gravity=g[idx])
        np.testing.assert_allclose(tau[idx], one, rtol=0, atol=1e-12 * max(1, np.abs(one).max()))
        np.testing.assert_allclose(H[idx], rd.bias_torques(robot, Q[idx], QD[idx], wrenches=W[idx]), rtol=0, atol=1e-11)
    for idx in np.ndindex(np.shape(q)[:-1]):
        np.testing.assert_allclose(G[idx], rd.gravity_torques(robot, q[idx]), rtol=0, atol=1e-11)


def test_wrench_and_gravity_broadcast_over_batch():
    robot = random_robot(5, nf=4)
    q, qd, qdd = random_state(robot, 5, (3,))
    W = np.random.default_rng(0).normal(size=(robot.nf, 6))
    tau = rd.inverse_dynamics(robot, q, qd, qdd, wrenches=W, gravity=[0, 0, -1.0])
    for s in range(3):
        close(tau[s], rd.inverse_dynamics(robot, q[s], qd[s], qdd[s], wrenches=W, gravity=[0, 0, -1.0]))


def test_float32_in_float32_out_and_ints_give_float64():
    robot = random_robot(8, nf=4, tree=True)
    q, qd, qdd = random_state(robot, 8, (6,))
    f32 = [x.astype(np.float32) for x in (q, qd, qdd)]
    tau32 = rd.inverse_dynamics(robot, *f32)
    assert tau32.dtype == np.float32
    assert rd.gravity_torques(robot, f32[0]).dtype == np.float32
    assert rd.bias_torques(robot, f32[0], f32[1]).dtype == np.float32
    assert rd.friction_torques(robot, f32[1]).dtype == np.float32
    ref = rd.inverse_dynamics(robot, *f32[:0], *(x.astype(np.float64) for x in f32))
    np.testing.assert_allclose(tau32, ref, rtol=0, atol=1e-4 * np.abs(ref).max())
    assert rd.inverse_dynamics(robot, q.astype(np.float32), qd, qdd).dtype == np.float64  # mixed → float64
    ints = np.ones(robot.n, dtype=int)
    out = rd.inverse_dynamics(robot, ints, 0 * ints, ints)
    assert out.dtype == np.float64
    close(out, rd.inverse_dynamics(robot, ints * 1.0, 0.0 * ints, ints * 1.0))


# ---- bad input ------------------------------------------------------------------------------------------------


def test_bad_inputs_name_the_argument():
    robot = random_robot(2, nf=3, prismatic=False)
    z = np.zeros(3)
    with pytest.raises(rd.InputError, match=r"argument 'q' has shape \(4,\); robot 'random2' has n = 3 .* shape \(\.\.\., 3\)"):
        rd.inverse_dynamics(robot, np.zeros(4), z, z)
    with pytest.raises(rd.InputError, match=r"argument 'qdd' has shape \(\)"):
        rd.inverse_dynamics(robot, z, z, 0.0)
    with pytest.raises(rd.InputError, match=r"argument 'qd' contains NaN or inf"):
        rd.inverse_dynamics(robot, z, np.array([0, np.nan, 0]), z)
    with pytest.raises(rd.InputError, match=r"argument 'q' contains NaN or inf"):
        rd.gravity_torques(robot, np.array([np.inf, 0, 0]))
    with pytest.raises(rd.InputError, match=r"argument 'q' has dtype <U1; give real numbers"):
        rd.gravity_torques(robot, np.array(["a", "b", "c"]))
    with pytest.raises(rd.InputError, match=r"argument 'q' has dtype complex128"):
        rd.gravity_torques(robot, z + 1j)
    with pytest.raises(rd.InputError, match=r"batch axes do not broadcast: q \(2, 3\), qd \(4, 3\)"):
        rd.inverse_dynamics(robot, np.zeros((2, 3)), np.zeros((4, 3)), z)
    with pytest.raises(rd.InputError, match=r"argument 'wrenches' has shape \(3, 5\); expected \(\.\.\., 3, 6\)"):
        rd.inverse_dynamics(robot, z, z, z, wrenches=np.zeros((3, 5)))
    with pytest.raises(rd.InputError, match=r"argument 'wrenches' contains NaN or inf"):
        rd.inverse_dynamics(robot, z, z, z, wrenches=np.full((3, 6), np.nan))
    with pytest.raises(rd.InputError, match=r"argument 'wrenches' with shape \(2, 3, 6\) does not broadcast to batch \(5,\)"):
        rd.inverse_dynamics(robot, np.zeros((5, 3)), z, z, wrenches=np.zeros((2, 3, 6)))
    with pytest.raises(rd.InputError, match=r"argument 'gravity' has shape \(2,\); expected \(\.\.\., 3\)"):
        rd.inverse_dynamics(robot, z, z, z, gravity=[0, 1])
    with pytest.raises(rd.InputError, match=r"unknown method 'lagrange'"):
        rd.inverse_dynamics(robot, z, z, z, method="lagrange")


def test_single_state_and_batch_of_one_agree_with_a_large_batch():
    """One state runs on Python floats, batches on arrays in blocks: all three paths give the same torques."""
    robot = random_robot(9, nf=6, tree=True, fixed=True)
    q, qd, qdd = random_state(robot, 9, (20000,))
    rng = np.random.default_rng(9)
    W = rng.normal(size=(20000, robot.nf, 6))
    g = rng.normal(size=(20000, 3))
    tau = rd.inverse_dynamics(robot, q, qd, qdd, wrenches=W, gravity=g)
    for s in (0, 8191, 8192, 19999):
        one = rd.inverse_dynamics(robot, q[s], qd[s], qdd[s], wrenches=W[s], gravity=g[s])
        first = rd.inverse_dynamics(robot, q[s:s + 1], qd[s:s + 1], qdd[s:s + 1], wrenches=W[s:s + 1], gravity=g[s:s + 1])
        assert one.shape == (robot.n,) and first.shape == (1, robot.n)
        close(one, tau[s], 1e-13)
        close(first[0], tau[s], 1e-13)
    one32 = rd.inverse_dynamics(robot, *(x[0].astype(np.float32) for x in (q, qd, qdd)))
    assert one32.dtype == np.float32


@pytest.mark.parametrize("batch", [(), (3,)])
def test_rnea_accepts_complex_states_for_complex_step_derivatives(batch):
    """rnea is analytic in q: Im Γ(q + i h e_k) / h = ∂Γ/∂q_k (used by the elastic-joint model); checked against the
    complex step of Example 9.1's closed form Q(q)."""
    robot, D3, G3 = rx90_three(5)
    rng = np.random.default_rng(5)
    q = rng.uniform(-np.pi, np.pi, batch + (3,))
    h = 1e-30
    z = np.zeros(batch + (3,), complex)
    for k in range(3):
        qc = q + 1j * h * np.eye(3)[k]
        dQ = rnea(robot, qc, z, z, robot.gravity.astype(complex)).imag / h
        ref = np.stack([example_9_1(robot, D3, G3, x)[1] for x in qc.reshape(-1, 3)]).imag.reshape(dQ.shape) / h
        close(dQ, ref)
        assert k == 0 or np.abs(dQ).max() > 0.1  # Q does not depend on q1
