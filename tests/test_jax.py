"""robodyn.jax: the NumPy functions' numbers through jit and vmap, gradients against complex steps."""

import numpy as np
import pytest

import robodyn as rd
from robodyn.dynamics.newton_euler import rnea_components
from robodyn.spatial import NUMPY
from tests.support.random_robots import random_robot, random_state

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
rj = pytest.importorskip("robodyn.jax")


@pytest.fixture(autouse=True)
def _x64():
    with jax.enable_x64(True) if hasattr(jax, "enable_x64") else jax.experimental.enable_x64():
        yield


ROBOT = random_robot(12, nf=5, tree=True, fixed=True)


@pytest.fixture(params=["cpu", "gpu"])
def assembly(request, monkeypatch):
    """The results assembled as on the CPU, or as on a GPU (robodyn.spatial: entries behind an optimization
    barrier, then stacked): jax.default_backend() is made to answer each."""
    monkeypatch.setattr(jax, "default_backend", lambda: request.param)
    return request.param


def test_jitted_and_vmapped_functions_equal_numpy(assembly):
    q, qd, qdd = random_state(ROBOT, 12, (4,))
    tau = rd.inverse_dynamics(ROBOT, q, qd, qdd)
    np.testing.assert_allclose(jax.jit(lambda *a: rj.inverse_dynamics(ROBOT, *a))(q, qd, qdd), tau, rtol=1e-12, atol=1e-12)
    one = jax.vmap(lambda a, b, c: rj.inverse_dynamics(ROBOT, a, b, c))(q, qd, qdd)
    np.testing.assert_allclose(one, tau, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jax.jit(lambda a: rj.gravity_torques(ROBOT, a))(q), rd.gravity_torques(ROBOT, q),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jax.jit(lambda a: rj.inertia_matrix(ROBOT, a))(q), rd.inertia_matrix(ROBOT, q),
                               rtol=1e-12, atol=1e-12)
    qdd_back = jax.jit(lambda *a: rj.forward_dynamics(ROBOT, *a))(q, qd, tau)
    np.testing.assert_allclose(qdd_back, qdd, rtol=1e-10, atol=1e-10)
    D = jax.jit(lambda *a: rj.regressor(ROBOT, *a))(q, qd, qdd)
    np.testing.assert_allclose(D, rd.regressor(ROBOT, q, qd, qdd), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rj.regressor(ROBOT, q, qd, qdd, friction=False), rd.regressor(ROBOT, q, qd, qdd, friction=False),
                               rtol=1e-12, atol=1e-12)
    g = np.array([0.5, -1.0, -9.0])
    np.testing.assert_allclose(rj.gravity_torques(ROBOT, q, gravity=g), rd.gravity_torques(ROBOT, q, gravity=g),
                               rtol=1e-12, atol=1e-12)


def test_gradient_with_respect_to_q_matches_a_complex_step():
    """∂(wᵀΓ_rigid)/∂q by jax.grad against Im(wᵀΓ_rigid(q + i h e_k))/h, h = 1e-30 (exact to round-off)."""
    q, qd, qdd = (x[0] for x in random_state(ROBOT, 3, (1,)))
    w = np.random.default_rng(3).normal(size=ROBOT.n)
    grad = jax.grad(lambda a: jnp.dot(w, rj.inverse_dynamics(ROBOT, a, qd, qdd)))(jnp.asarray(q))
    g = tuple(ROBOT.gravity.tolist())
    h = 1e-30
    step = []
    for k in range(ROBOT.n):
        qc = q.astype(complex)
        qc[k] += 1j * h
        tau = np.array(rnea_components(ROBOT, list(qc), list(qd), list(qdd), g, backend=NUMPY), dtype=complex)
        step.append(np.dot(w, tau.imag) / h)
    np.testing.assert_allclose(grad, step, rtol=1e-10, atol=1e-10)


def test_jax_jacobians_equal_the_analytic_derivatives(assembly):
    """jax.jacfwd through the shared Newton–Euler recursion = rd.inverse_dynamics_derivatives (recursive, analytic)."""
    q, qd, qdd = random_state(ROBOT, 5, ())
    dq, dqd = rd.inverse_dynamics_derivatives(ROBOT, q, qd, qdd)
    Jq = jax.jacfwd(lambda x: rj.inverse_dynamics(ROBOT, x, qd, qdd))(jnp.asarray(q))
    # friction's sign(q̇) has no derivative where q̇ ≠ 0 beyond Fv: both include Fv and the Stribeck slope
    Jqd = jax.jacfwd(lambda x: rj.inverse_dynamics(ROBOT, q, x, qdd))(jnp.asarray(qd))
    np.testing.assert_allclose(Jq, dq, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(Jqd, dqd, rtol=1e-10, atol=1e-10)


def test_sharded_batch_over_several_devices():
    """A batch sharded over devices (here two CPU devices in a fresh process) gives the NumPy numbers."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import os
        os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
        os.environ["JAX_PLATFORMS"] = "cpu"  # two host devices also on a machine whose default is one GPU
        import jax, numpy as np
        jax.config.update("jax_enable_x64", True)
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        import robodyn as rd, robodyn.jax as rj
        robot = rd.load("puma560")
        mesh = Mesh(np.array(jax.devices()[:2]), ("states",))
        shard = NamedSharding(mesh, P("states", None))
        q, qd, qdd = np.random.default_rng(0).uniform(-1, 1, (3, 64, robot.n))
        args = [jax.device_put(x, shard) for x in (q, qd, qdd)]
        tau = jax.jit(lambda *a: rj.inverse_dynamics(robot, *a))(*args)
        assert len(tau.sharding.device_set) == 2, tau.sharding
        err = np.max(np.abs(np.asarray(tau) - rd.inverse_dynamics(robot, q, qd, qdd)))
        print(err)
        assert err < 1e-11, err
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]


def test_float32_stays_float32_and_batch_axes_broadcast():
    q, qd, qdd = random_state(ROBOT, 3, (2, 3))
    tau = rj.inverse_dynamics(ROBOT, q.astype(np.float32), qd[0, 0].astype(np.float32), qdd.astype(np.float32))
    assert tau.dtype == jnp.float32 and tau.shape == (2, 3, ROBOT.n)
    ref = rd.inverse_dynamics(ROBOT, q, np.broadcast_to(qd[0, 0], q.shape), qdd)
    np.testing.assert_allclose(tau, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())  # float32 rounding
    g = rj.gravity_torques(ROBOT, q.astype(np.float32))
    assert g.dtype == jnp.float32 and g.shape == (2, 3, ROBOT.n)


CHAIN = rd.load("panda")


@pytest.mark.parametrize("robot", [ROBOT, CHAIN], ids=["tree", "panda"])
def test_loop_free_recursions_equal_numpy(robot):
    """The recursions projected on R_0 that give the derivatives (robodyn.dynamics.loop_free) = the NumPy functions."""
    from robodyn.dynamics import loop_free as module

    q, qd, qdd = (jnp.asarray(x) for x in random_state(robot, 7, (3,)))
    g = jnp.asarray([0.3, -1.0, -9.0])
    np.testing.assert_allclose(module.inverse_dynamics(robot, q, qd, qdd, g),
                               rd.inverse_dynamics(robot, q, qd, qdd, gravity=g), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(module.gravity_torques(robot, q, g), rd.gravity_torques(robot, q, gravity=g),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(module.inertia_matrix(robot, q), rd.inertia_matrix(robot, q),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("robot", [ROBOT, CHAIN], ids=["tree", "panda"])
def test_kinematics_equal_numpy_under_jit_and_vmap(robot):
    q = random_state(robot, 8, (2, 3))[0]
    s = np.array([0.1, -0.2, 0.3])
    fk = jax.jit(lambda a: rj.forward_kinematics(robot, a))
    np.testing.assert_allclose(fk(q), rd.forward_kinematics(robot, q), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jax.vmap(fk)(q), rd.forward_kinematics(robot, q), rtol=1e-12, atol=1e-12)
    for frame in (None, 1, robot.nf, robot.frame_names[-1]):
        np.testing.assert_allclose(jax.jit(lambda a: rj.jacobian(robot, a, frame))(q), rd.jacobian(robot, q, frame),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(rj.jacobian(robot, q, frame, point=s), rd.jacobian(robot, q, frame, point=s),
                                   rtol=1e-12, atol=1e-12)
    points = np.random.default_rng(1).normal(size=(3, 3))  # one point per state of the last batch axis
    np.testing.assert_allclose(rj.jacobian(robot, q, point=points), rd.jacobian(robot, q, point=points),
                               rtol=1e-12, atol=1e-12)


def test_jacobian_is_the_derivative_of_the_frame_pose():
    """The linear rows of J = ∂p_j/∂q (jax.jacfwd of forward_kinematics); the angular rows ω = vee(Ṙ Rᵀ)."""
    robot, q = CHAIN, jnp.asarray(random_state(CHAIN, 9, ())[0])
    J = rj.jacobian(robot, q)
    j = robot.nf - 1
    dT = jax.jacfwd(lambda a: rj.forward_kinematics(robot, a)[j])(q)  # (4, 4, n)
    np.testing.assert_allclose(dT[:3, 3], J[:3], rtol=1e-12, atol=1e-12)
    R = rj.forward_kinematics(robot, q)[j, :3, :3]
    W = jnp.einsum("abk,cb->ack", dT[:3, :3], R)  # Ṙ Rᵀ per joint: skew(ω_k)
    np.testing.assert_allclose(jnp.stack([W[2, 1], W[0, 2], W[1, 0]]), J[3:], rtol=1e-12, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("robot", [ROBOT, CHAIN], ids=["tree", "panda"])
def test_forward_dynamics_derivatives_equal_the_analytic_ones_in_a_batch(robot):
    """jax.vmap(jax.jacrev(forward_dynamics)) (the implicit-function rule) = rd.forward_dynamics_derivatives.

    Jitted, the three Jacobians in one trace: the same numbers as op-by-op, in a third of the time."""
    q, qd, qdd = random_state(robot, 10, (3,))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    d = rd.forward_dynamics_derivatives(robot, q, qd, tau)
    fd_jac = jax.jit(jax.vmap(jax.jacrev(lambda *a: rj.forward_dynamics(robot, *a), argnums=(0, 1, 2))))
    for got, ref in zip(fd_jac(q, qd, tau), d[:3]):
        np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())
    dg = jax.jit(jax.jacfwd(lambda g: rj.gravity_torques(robot, q[0], gravity=g)))(jnp.asarray(robot.gravity))
    dM = jax.jit(jax.jacfwd(lambda a: rj.inertia_matrix(robot, a)))(jnp.asarray(q[0]))
    step = 1e-6
    for i in range(robot.n):  # Q and A are linear in g; A's derivative against central differences (error h² ~ 1e-12)
        e = np.eye(robot.n)[i] * step
        fd = (rd.inertia_matrix(robot, q[0] + e) - rd.inertia_matrix(robot, q[0] - e)) / (2 * step)
        np.testing.assert_allclose(dM[..., i], fd, rtol=0, atol=1e-8 * max(1.0, np.abs(fd).max()))
    np.testing.assert_allclose(dg @ robot.gravity, rd.gravity_torques(robot, q[0]), rtol=1e-12, atol=1e-12)


@pytest.mark.slow
def test_hessian_of_forward_dynamics_against_differences_of_the_analytic_derivatives():
    """jax.hessian(q ↦ q̈) = central differences of rd.forward_dynamics_derivatives' ∂q̈/∂q (h = 1e-5: truncation
    h² |q̈'''| / 6 and rounding ε |∂q̈/∂q| / h both below 1e-9 of the largest entry), symmetric in its last two axes."""
    robot = CHAIN
    q, qd, qdd = random_state(robot, 11, ())
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    H = jax.jit(jax.hessian(lambda x: rj.forward_dynamics(robot, x, qd, tau)))(jnp.asarray(q))  # jit: 2x faster
    h = 1e-5
    ref = np.stack([(rd.forward_dynamics_derivatives(robot, q + h * e, qd, tau)[0]
                     - rd.forward_dynamics_derivatives(robot, q - h * e, qd, tau)[0]) / (2 * h) for e in np.eye(robot.n)], -1)
    np.testing.assert_allclose(H, ref, rtol=0, atol=1e-7 * np.abs(ref).max())
    np.testing.assert_allclose(H, np.swapaxes(H, -1, -2), rtol=0, atol=1e-12 * np.abs(H).max())


def test_rollout_gradient_equals_the_adjoint_of_the_analytic_derivatives():
    """value_and_grad of a scanned semi-implicit Euler rollout (the benchmark's) = the same gradient accumulated
    backwards from rd.forward_dynamics_derivatives (discrete adjoint)."""
    robot, T, dt = CHAIN, 5, 0.01
    q0, qd0, _ = random_state(robot, 12, ())
    taus = np.random.default_rng(12).normal(size=(T, robot.n))

    def cost(taus):
        def step(x, tau):
            q, qd = x
            qd = qd + dt * rj.forward_dynamics(robot, q, qd, tau)
            q = q + dt * qd
            return (q, qd), jnp.sum(q * q)
        return jnp.sum(jax.lax.scan(step, (jnp.asarray(q0), jnp.asarray(qd0)), taus)[1])

    value, grad = jax.jit(jax.value_and_grad(cost))(jnp.asarray(taus))
    states, q, qd = [], q0, qd0
    for tau in taus:
        states.append((q, qd, tau))
        qd = qd + dt * rd.forward_dynamics(robot, q, qd, tau)
        q = q + dt * qd
    lq, lqd, out, total = np.zeros(robot.n), np.zeros(robot.n), [], 0.0
    for (q, qd, tau) in reversed(states):
        d = rd.forward_dynamics_derivatives(robot, q, qd, tau)
        qd1 = qd + dt * rd.forward_dynamics(robot, q, qd, tau)
        lq = lq + 2 * (q + dt * qd1)  # ∂c/∂q_{t+1}
        total += np.sum((q + dt * qd1) ** 2)
        # q' = q + dt qd', qd' = qd + dt f: λ_qd' = λ_qd + dt λ_q'
        lqd1 = lqd + dt * lq
        out.append(dt * d[2].T @ lqd1)
        lq, lqd = lq + dt * d[0].T @ lqd1, lqd1 + dt * d[1].T @ lqd1
    np.testing.assert_allclose(value, total, rtol=1e-12)
    np.testing.assert_allclose(grad, np.array(out[::-1]), rtol=1e-10, atol=1e-12)
