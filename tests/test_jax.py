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
