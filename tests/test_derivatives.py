"""Analytic derivatives of the dynamic model vs Pinocchio and complex-step differences; linearization."""

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn.dynamics.friction_models import DiscontinuousFriction, SmoothFriction, frictionless
from robodyn.dynamics.newton_euler import rnea_components
from tests.support.pin_bridge import PinRobot
from tests.support.random_robots import random_robot, random_state


def _rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


def _rigid(robot, q, qd, qdd, g):
    """Γ_rigid (..., n) of the Newton–Euler recursion on complex-capable arrays (rotor inertia and friction left
    out): rnea_components on the joint columns, for the complex-step checks."""
    q, qd, qdd = np.broadcast_arrays(q, qd, qdd)
    cols = [list(np.moveaxis(x, -1, 0)) for x in (q, qd, qdd)]
    return np.stack(np.broadcast_arrays(*rnea_components(robot, *cols, tuple(g))), -1)


def _pin_rnea_derivatives(pr, q, qd, qdd, wrenches=None):
    args = (pr.model, pr.data, pr._in(q), pr._in(qd), pr._in(qdd))
    if wrenches is not None:
        args = args + (pr.fext(wrenches),)
    dq, dv, _ = pin.computeRNEADerivatives(*args)
    ix = np.ix_(pr.perm, pr.perm)
    return np.asarray(dq)[ix], np.asarray(dv)[ix]


@settings(max_examples=10)
@given(seed=st.integers(0, 2**31 - 1), tree=st.booleans())
def test_inverse_dynamics_derivatives_match_pinocchio(seed, tree):
    """Random serial and tree robots (revolute, prismatic, fixed frames, rotor inertias, wrenches): ∂Γ/∂q and ∂Γ/∂q̇
    equal Pinocchio's computeRNEADerivatives to 1e-9 relative (friction left out: Pinocchio has none)."""
    robot = frictionless(random_robot(seed, tree=tree, fixed=True))
    pr = PinRobot(robot)
    q, qd, qdd = random_state(robot, seed, (3,))
    W = np.random.default_rng(seed).normal(size=(3, robot.nf, 6))
    dq, dqd = rd.inverse_dynamics_derivatives(robot, q, qd, qdd, wrenches=W)
    assert dq.shape == dqd.shape == (3, robot.n, robot.n)
    for s in range(3):
        pq, pv = _pin_rnea_derivatives(pr, q[s], qd[s], qdd[s], W[s])
        # relative to the larger of the two blocks: a block can vanish (no velocity terms on a 1-joint robot)
        scale = max(np.abs(pq).max(), np.abs(pv).max())
        assert np.abs(dq[s] - pq).max() <= 1e-9 * scale and np.abs(dqd[s] - pv).max() <= 1e-9 * scale
        one = rd.inverse_dynamics_derivatives(robot, q[s], qd[s], qdd[s], wrenches=W[s])
        assert np.abs(one[0] - dq[s]).max() <= 1e-14 * scale and np.abs(one[1] - dqd[s]).max() <= 1e-14 * scale  # batch == sample


@pytest.mark.parametrize("seed,tree", [(0, False), (1, True), (7, True)])
def test_dual_derivatives_match_complex_step(seed, tree):
    """The NumPy path (dual numbers on rnea_components, ROBODYN_NATIVE=0) equals the complex-step derivative of the
    same recursion (step 1e-30: exact to round-off), and the recursion itself equals rd.inverse_dynamics."""
    robot = frictionless(random_robot(seed, tree=tree, fixed=True))
    n = robot.n
    q, qd, qdd = random_state(robot, seed, (2,))
    assert _rel(_rigid(robot, q, qd, qdd, robot.gravity) + robot.Ia[robot.joint_frames] * qdd,
                rd.inverse_dynamics(robot, q, qd, qdd)) < 1e-13
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ROBODYN_NATIVE", "0")
        dq, dqd = rd.inverse_dynamics_derivatives(robot, q, qd, qdd)
    h = 1e-30
    for d in range(2 * n):
        e = np.zeros(n)
        e[d % n] = h
        qc, qdc = (q + 1j * e, qd + 0j) if d < n else (q + 0j, qd + 1j * e)
        cs = _rigid(robot, qc, qdc, qdd, robot.gravity).imag / h
        ours = dq[..., d] if d < n else dqd[..., d - n]
        assert np.abs(ours - cs).max() <= 1e-12 * max(1.0, np.abs(cs).max())


def test_friction_slope_is_in_dtau_dqd():
    """∂Γ/∂q̇ includes diag(∂Γ_f/∂q̇): viscous + Stribeck for the robot's model, tanh slope for the smooth one,
    each checked by complex step on the friction law."""
    robot = rd.load("rx90").replace(Fst=[9.0, 10.0, 7.0, 3.0, 4.0, 0.4], kst=[5.0] * 6, Bst=[1.5] * 6)
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-1, 1, (3, 4, 6))
    base = rd.inverse_dynamics_derivatives(frictionless(robot), q, qd, qdd)[1]
    for model in (DiscontinuousFriction(), SmoothFriction(width=0.05)):
        dqd = rd.inverse_dynamics_derivatives(robot, q, qd, qdd, friction=model)[1]
        slope = np.diagonal(dqd - base, axis1=-2, axis2=-1)
        h = 1e-7  # central difference on the friction law alone (|q̇| > 0.02 here: away from the Coulomb step)
        fd = (model.torque(robot, qd + h) - model.torque(robot, qd - h)) / (2 * h)
        assert np.abs(qd).min() > 1e-3
        assert _rel(slope, fd) < 1e-6
        assert np.allclose(dqd - base - np.einsum("...i,ij->...ij", slope, np.eye(6)), 0, atol=1e-12)


@settings(max_examples=5)
@given(seed=st.integers(0, 2**31 - 1), tree=st.booleans())
def test_forward_dynamics_derivatives_match_pinocchio(seed, tree):
    robot = frictionless(random_robot(seed, tree=tree, fixed=True))
    pr = PinRobot(robot)
    q, qd, tau = random_state(robot, seed)
    a, b, c = rd.forward_dynamics_derivatives(robot, q, qd, tau)
    pa, pb, pc = pin.computeABADerivatives(pr.model, pr.data, pr._in(q), pr._in(qd), pr._in(tau))
    ix = np.ix_(pr.perm, pr.perm)
    scale = max(np.abs(np.asarray(pa)).max(), np.abs(np.asarray(pb)).max())
    assert np.abs(a - np.asarray(pa)[ix]).max() <= 1e-9 * scale and np.abs(b - np.asarray(pb)[ix]).max() <= 1e-9 * scale
    assert _rel(c, np.asarray(pc)[ix]) < 1e-9


def test_linearize_at_equilibrium_is_de_lucas_form():
    """At rest with the gravity torque as bias: A = [[0, I], [−M⁻¹G, 0]], B = [[0], [M⁻¹]], G = ∂Q/∂q checked by
    complex step of the gravity recursion."""
    robot = frictionless(rd.load("puma560"))
    q = np.array([0.1, -0.4, 0.3, 0.2, 0.5, -0.1])
    A, B = rd.linearize(robot, q)
    n = 6
    M = rd.inertia_matrix(robot, q)
    h = 1e-30
    G = np.stack([_rigid(robot, q + 1j * h * np.eye(n)[k], np.zeros(n, complex), np.zeros(n), robot.gravity).imag / h
                  for k in range(n)], -1)
    assert np.array_equal(A[:n, :n], np.zeros((n, n))) and np.array_equal(A[:n, n:], np.eye(n))
    assert _rel(A[n:, :n], -np.linalg.solve(M, G)) < 1e-10
    assert np.abs(A[n:, n:]).max() < 1e-12  # velocity terms are quadratic: nothing at q̇ = 0
    assert _rel(B[n:], np.linalg.inv(M)) < 1e-12 and np.array_equal(B[:n], np.zeros((n, n)))


def test_linearize_along_a_trajectory_matches_complex_step_of_the_state_equation():
    """Time-varying A(t), B(t) along a quintic, batched over time, against complex-step derivatives of
    f(x, u) = [q̇; A⁻¹(u − H)] computed with the complex-capable recursion."""
    robot = frictionless(rd.load("planar3r"))
    n = robot.n
    ref = rd.control.QuinticReference(np.zeros(n), np.array([0.8, -0.5, 0.3]), 1.0)
    t = np.array([0.2, 0.5, 0.7])
    qd_, qdd_ = ref.sample(t)[1:]
    q_ = ref.sample(t)[0]
    A, B = rd.linearize(robot, q_, qd_, qdd=qdd_)
    assert A.shape == (3, 2 * n, 2 * n) and B.shape == (3, 2 * n, n)
    u = rd.inverse_dynamics(robot, q_, qd_, qdd_)

    def f(x, uu):
        qq, vv = x[:n], x[n:]
        H = _rigid(robot, qq, vv, np.zeros(n), robot.gravity)
        # M(q) column by column from the complex-capable recursion (no gravity, no velocity)
        M = np.stack([_rigid(robot, qq, np.zeros(n), np.eye(n)[k], np.zeros(3)) for k in range(n)], -1)
        return np.concatenate([vv, np.linalg.solve(M, uu - H)])

    h = 1e-30
    for s in range(3):
        x = np.concatenate([q_[s], qd_[s]])
        Acs = np.stack([f(x + 1j * h * np.eye(2 * n)[k], u[s] + 0j).imag / h for k in range(2 * n)], -1)
        Bcs = np.stack([f(x + 0j, u[s] + 1j * h * np.eye(n)[k]).imag / h for k in range(n)], -1)
        assert _rel(A[s], Acs) < 1e-10 and _rel(B[s], Bcs) < 1e-10
    # giving tau instead of qdd is the same operating point
    A2, B2 = rd.linearize(robot, q_, qd_, tau=u)
    assert _rel(A2, A) < 1e-10 and _rel(B2, B) < 1e-12


def test_bad_input():
    robot = rd.load("planar2r")
    with pytest.raises(rd.InputError, match="argument 'qd' has shape"):
        rd.inverse_dynamics_derivatives(robot, np.zeros(2), np.zeros(3), np.zeros(2))
    with pytest.raises(rd.InputError, match="argument 'wrenches' has shape"):
        rd.inverse_dynamics_derivatives(robot, np.zeros(2), np.zeros(2), np.zeros(2), wrenches=np.zeros((3, 6)))
    with pytest.raises(rd.InputError, match="friction = 'stick'"):
        rd.inverse_dynamics_derivatives(robot, np.zeros(2), np.zeros(2), np.zeros(2), friction="stick")
    with pytest.raises(rd.InputError, match="friction = LuGre"):
        rd.inverse_dynamics_derivatives(robot, np.zeros(2), np.zeros(2), np.zeros(2), friction="lugre")
    with pytest.raises(rd.InputError, match="either tau"):
        rd.linearize(robot, np.zeros(2), tau=np.zeros(2), qdd=np.zeros(2))


def _collision(N):
    """planar2r held by PD + gravity at q0; from t = 0.3 s a contact wrench on link 2 ramps up in 0.1 s."""
    arm = rd.load("planar2r")
    q0 = np.array([0.4, 0.6])
    ctl = rd.control.PDGravity(arm, 200.0, 30.0, rd.control.QuinticReference(q0, q0, 1.0))

    def wrench(t, q, qd):
        s = np.clip((np.asarray(t) - 0.3) / 0.1, 0, 1)
        s = s**3 * (10 - 15 * s + 6 * s * s)
        W = np.zeros(np.shape(t) + (2, 6))
        W[..., 1, 1], W[..., 1, 5] = 8.0 * s, 3.0 * s
        return W

    t = np.linspace(0, 1, N)
    return arm, rd.simulate(arm, ctl, q0, np.zeros(2), t, wrenches=wrench, rtol=1e-11, atol=1e-11)


def test_momentum_residual_follows_the_external_torque_with_first_order_dynamics():
    """ṙ = K(Γ_ext − r): r equals the same first-order filter applied to the true Γ_ext up to the O(h²) error of
    the trapezoidal discretisation (the difference shrinks 4× when h halves), and r = 0 before the contact."""
    from scipy.signal import lfilter

    K = 50.0
    diffs = []
    for N in (501, 1001):
        arm, sim = _collision(N)
        r = rd.dynamics.momentum_observer(arm, sim.t, sim.q, sim.qd, sim.tau, K, tau_friction=sim.tau_friction)
        h = sim.t[1] - sim.t[0]
        den = 1 + K * h / 2
        expected = lfilter([K * h / 2 / den] * 2, [1, -(1 - K * h / 2) / den], sim.tau_external, axis=0)
        diffs.append(np.abs(r - expected).max())
        assert np.abs(r[sim.t < 0.3]).max() < 1e-8
        assert np.abs(sim.tau_external).max() > 5  # a real collision: several N m at the joints
        assert _rel(r[-1], sim.tau_external[-1]) < 1e-3  # settled (1/K = 0.02 s)
    assert 3.8 < diffs[0] / diffs[1] < 4.2 and diffs[1] < 1e-3
    p = rd.dynamics.generalized_momentum(arm, sim.q, sim.qd)
    assert _rel(p, np.einsum("nij,nj->ni", rd.inertia_matrix(arm, sim.q), sim.qd)) < 1e-15
    with pytest.raises(rd.InputError, match="uniformly spaced"):
        rd.dynamics.momentum_observer(arm, sim.t**2, sim.q, sim.qd, sim.tau, K)
    with pytest.raises(rd.InputError, match="gain = -1"):
        rd.dynamics.momentum_observer(arm, sim.t, sim.q, sim.qd, sim.tau, -1.0)


def test_forward_dynamics_derivatives_with_friction_match_complex_step():
    """rx90 with its Coulomb and viscous friction in the smooth model: ∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂Γ against complex-step
    derivatives of q̈ = A⁻¹(Γ − H_rigid − Γ_f(q̇)) built from the complex-capable recursion."""
    robot = rd.load("rx90")
    rigid = frictionless(robot)
    model = SmoothFriction(width=0.05)
    n = 6
    q = np.array([0.3, -0.5, 0.8, 0.2, 0.6, -0.4])
    qd = np.array([0.02, -0.3, 0.1, 0.04, -0.01, 0.5])  # some inside the tanh band, some outside
    tau = np.array([5.0, 60.0, 10.0, 1.0, 2.0, 0.3])
    a, b, c = rd.forward_dynamics_derivatives(robot, q, qd, tau, friction=model)
    Ia = robot.Ia[robot.joint_frames]

    def qdd(qq, vv, uu):
        H = _rigid(rigid, qq, vv, np.zeros(n), robot.gravity)
        M = np.stack([_rigid(rigid, qq, np.zeros(n), np.eye(n)[k], np.zeros(3)) for k in range(n)], -1) + np.diag(Ia)
        fr = Fc * np.tanh(vv / 0.05) + Fv * vv
        return np.linalg.solve(M, uu - H - fr)

    Fc, Fv = robot.Fc[robot.joint_frames], robot.Fv[robot.joint_frames]
    h = 1e-30
    E = np.eye(n) * 1j * h
    cq = np.stack([qdd(q + E[k], qd + 0j, tau + 0j).imag / h for k in range(n)], -1)
    cv = np.stack([qdd(q + 0j, qd + E[k], tau + 0j).imag / h for k in range(n)], -1)
    cu = np.stack([qdd(q + 0j, qd + 0j, tau + E[k]).imag / h for k in range(n)], -1)
    assert _rel(a, cq) < 1e-10 and _rel(b, cv) < 1e-10 and _rel(c, cu) < 1e-12
    assert np.allclose(qdd(q, qd, tau), rd.forward_dynamics(rigid, q, qd, tau - model.torque(robot, qd)),
                       rtol=1e-12, atol=1e-12)


def test_float32_inputs_give_float32_derivatives():
    """As every robodyn function: float32 in, float32 out (computed in float64, so the float64 result rounded, to
    the float64 paths' own differences); mixed inputs give float64."""
    puma = rd.load("puma560")
    q, qd, x = np.random.default_rng(4).uniform(-1, 1, (3, 5, puma.n))
    single = [a.astype(np.float32) for a in (q, qd, x)]
    for f in (rd.inverse_dynamics_derivatives, rd.forward_dynamics_derivatives):
        ref = f(puma, *(a.astype(np.float64) for a in single))
        for batch in (slice(None), 2):
            out = f(puma, *(a[batch] for a in single))
            assert type(out) is type(ref)
            for got, want in zip(out, ref):
                assert got.dtype == np.float32
                w = want[batch]
                np.testing.assert_allclose(got, w, rtol=2.0**-23, atol=1e-12 * np.abs(w).max())
        assert all(a.dtype == np.float64 for a in f(puma, single[0], qd, x))
    lin = rd.linearize(puma, single[0], single[1], qdd=single[2], dt=1e-3)
    assert lin.A.dtype == lin.B.dtype == np.float32


def _central(f, x, k, h):
    e = np.zeros_like(x)
    e[..., k] = h
    return (f(x + e) - f(x - e)) / (2 * h)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), tree=st.booleans())
def test_second_derivatives_match_central_differences_of_the_first(seed, tree):
    """Random serial and tree robots (revolute, prismatic, fixed frames, rotor inertia, viscous and Coulomb friction,
    a wrench): each second derivative against central differences (h = 1e-5, error O(h²) ≈ 1e-10 relative) of
    rd.inverse_dynamics_derivatives and rd.inertia_matrix; ∂²Γ/∂q² and ∂²Γ/∂q̇² symmetric; a batch equals its
    samples."""
    robot = random_robot(seed, tree=tree, fixed=True)
    robot = robot.replace(Fst=np.zeros(robot.nf))
    q, qd, qdd = random_state(robot, seed, (2,))
    W = np.random.default_rng(seed).normal(size=(robot.nf, 6))
    res = rd.inverse_dynamics_second_derivatives(robot, q, qd, qdd, wrenches=W)
    h, n = 1e-5, robot.n
    for k in range(n):
        for got, arg, part in ((res.d2tau_dq2, 0, 0), (res.d2tau_dqd2, 1, 1), (res.d2tau_dq_dqd, 1, 0)):
            def first(x, arg=arg, part=part):
                args = [q, qd, qdd]
                args[arg] = x
                return rd.inverse_dynamics_derivatives(robot, *args, wrenches=W)[part]
            fd = _central(first, [q, qd][arg], k, h)
            assert np.abs(got[..., k] - fd).max() <= 1e-8 * (1 + np.abs(fd).max())
        fd = _central(lambda x: rd.inertia_matrix(robot, x), q, k, h)
        assert np.abs(res.d2tau_dqdd_dq[..., k] - fd).max() <= 1e-8 * (1 + np.abs(fd).max())
    for sym in (res.d2tau_dq2, res.d2tau_dqd2):
        assert np.abs(sym - np.swapaxes(sym, -1, -2)).max() <= 1e-12 * (1 + np.abs(sym).max())
    one = rd.inverse_dynamics_second_derivatives(robot, q[1], qd[1], qdd[1], wrenches=W)
    for a, b in zip(one, res):
        np.testing.assert_allclose(a, b[1], rtol=1e-13, atol=1e-13 * (1 + np.abs(b).max()))


def test_second_derivatives_refuse_stribeck_friction():
    robot = rd.load("planar2r")
    z = np.zeros(2)
    with pytest.raises(rd.InputError, match="friction=False"):
        rd.inverse_dynamics_second_derivatives(robot.replace(Fst=np.ones(2), Fc=np.ones(2)), z, z, z)
    assert rd.inverse_dynamics_second_derivatives(robot.replace(Fst=np.ones(2)), z, z, z, friction=False)[0].shape \
        == (2, 2, 2)
