"""The CUDA back end on a real GPU: every kind of ``rd.compile(..., backend="cuda")`` equals robodyn's NumPy
results on random robots (serial and branched, revolute, prismatic and fixed frames), batched and with parameters
as an input.  Skipped where CuPy or a CUDA device is missing (CI has none); the kernel text itself is tested on
the CPU by tests/test_cuda_source.py."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from tests.support.random_robots import random_robot, random_state

cp = pytest.importorskip("cupy")
try:
    if cp.cuda.runtime.getDeviceCount() < 1:
        pytest.skip("no CUDA device", allow_module_level=True)
except Exception as exc:  # CuPy raises its own runtime errors when no driver is present
    pytest.skip(f"no usable CUDA device ({exc})", allow_module_level=True)

ROBOTS = [random_robot(3, nf=6), random_robot(11, nf=7, tree=True, fixed=True), random_robot(29, nf=5, tree=True),
          random_robot(41, nf=6, fixed=True)]
#: float32 kernels: relative to the largest output magnitude, a few hundred float32 ulps over the recursion
TOL = {"float64": 1e-12, "float32": 2e-4}


def reference(robot, kind, q, qd, qdd):
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    return {
        "inverse_dynamics": lambda: tau,
        "bias": lambda: rd.bias_torques(robot, q, qd),
        "gravity": lambda: rd.gravity_torques(robot, q),
        "inertia_matrix": lambda: rd.inertia_matrix(robot, q),
        "forward_dynamics": lambda: qdd,
        "regressor": lambda: rd.regressor(robot, q, qd, qdd),
    }[kind](), tau


ARGS = {"inverse_dynamics": "q qd qdd", "bias": "q qd", "gravity": "q", "inertia_matrix": "q",
        "forward_dynamics": "q qd tau", "regressor": "q qd qdd"}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kind", list(ARGS))
@pytest.mark.parametrize("index", range(len(ROBOTS)))
def test_gpu_kernel_equals_numpy(index, kind, dtype):
    robot = ROBOTS[index]
    f = rd.compile(robot, kind, backend="cuda", dtype=dtype)
    q, qd, qdd = random_state(robot, index, batch=(5, 7))
    want, tau = reference(robot, kind, q, qd, qdd)
    values = {"q": q, "qd": qd, "qdd": qdd, "tau": tau}
    got = cp.asnumpy(f(*(values[a] for a in ARGS[kind].split())))
    if kind == "regressor":
        got = got.reshape(want.shape)
    assert got.shape == want.shape
    assert got.dtype == np.dtype(dtype)
    scale = np.max(np.abs(want))
    assert np.max(np.abs(got - want)) <= TOL[dtype] * scale


def test_gpu_parameters_are_an_input():
    """τ = Φ(q, q̇, q̈) K is linear in every parameter (inertial, Ia, Fc, Fv: Khalil & Dombre [9.36]), so the
    kernel given 1.7 K returns 1.7 τ."""
    robot = ROBOTS[1]
    f = rd.compile(robot, "inverse_dynamics", backend="cuda")
    q, qd, qdd = random_state(robot, 5, batch=(64,))
    got = cp.asnumpy(f(q, qd, qdd, params=1.7 * f.nominal_parameters))
    want = 1.7 * rd.inverse_dynamics(robot, q, qd, qdd)
    assert np.max(np.abs(got - want)) <= 1e-12 * np.max(np.abs(want))


def test_gpu_batch_equals_single_states():
    robot = ROBOTS[2]
    f = rd.compile(robot, "forward_dynamics", backend="cuda")
    q, qd, tau = random_state(robot, 9, batch=(33,))
    batch = cp.asnumpy(f(q, qd, tau))
    single = np.stack([cp.asnumpy(f(q[i], qd[i], tau[i])) for i in range(33)])
    np.testing.assert_array_equal(batch, single)


def test_gpu_per_state_parameters_and_gravity():
    """Parameters and gravity given per state take the structure-of-arrays layout (another compiled kernel) and
    equal τ = Φ K state by state; one value for all states travels by value with the launch."""
    robot = ROBOTS[0]
    f = rd.compile(robot, "inverse_dynamics", backend="cuda")
    q, qd, qdd = random_state(robot, 6, batch=(40,))
    scale = np.linspace(0.5, 2.0, 40)
    g = np.tile(robot.gravity, (40, 1))
    got = cp.asnumpy(f(q, qd, qdd, gravity=g, params=scale[:, None] * f.nominal_parameters))
    want = scale[:, None] * rd.inverse_dynamics(robot, q, qd, qdd)
    assert np.max(np.abs(got - want)) <= 1e-12 * np.max(np.abs(want))
    assert "rd_shared" in f.source and len(f._kernels) == 2


def test_gpu_singular_forward_dynamics_is_the_model_error():
    from tests.test_compile_checks import SINGULAR_AT_Q, _states

    robot = rd.loads(SINGULAR_AT_Q)
    f = rd.compile(robot, "forward_dynamics", backend="cuda")
    q, qd, tau = _states(9, 0.0)
    np.testing.assert_allclose(cp.asnumpy(f(q[:-1], qd[:-1], tau[:-1])),
                               rd.forward_dynamics(robot, q[:-1], qd[:-1], tau[:-1]), rtol=1e-10, atol=1e-10)
    with pytest.raises(rd.ModelError, match=r"CUDA forward_dynamics: joint j2"):
        f(q, qd, tau)


def test_gpu_overflow_is_an_error():
    robot = ROBOTS[0]
    f = rd.compile(robot, "inverse_dynamics", backend="cuda")
    with pytest.raises(rd.NumericOverflowError, match="not finite"):
        f(np.zeros(robot.n), np.full(robot.n, 1e200), np.zeros(robot.n))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("index", [0, 1])
def test_gpu_derivatives_and_kinematics_equal_numpy(index, dtype):
    """The derivative kinds (records of (n, n) blocks) and a frame's J and J̇q̇ on the GPU equal robodyn's analytic
    derivatives and kinematics."""
    robot = ROBOTS[index]
    q, qd, qdd = random_state(robot, index, batch=(5, 7))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    cases = [("inverse_dynamics_derivatives", (q, qd, qdd), {}, rd.inverse_dynamics_derivatives(robot, q, qd, qdd)),
             ("forward_dynamics_derivatives", (q, qd, tau), {}, rd.forward_dynamics_derivatives(robot, q, qd, tau)),
             ("jacobian", (q,), {"frame": robot.nf, "point": [0.1, 0.0, 0.2]},
              (rd.jacobian(robot, q, frame=robot.nf, point=[0.1, 0.0, 0.2]),)),
             ("jacobian_dot_qd", (q, qd), {"frame": robot.nf}, (rd.jacobian_dot_qd(robot, q, qd, frame=robot.nf),))]
    for kind, args, options, want in cases:
        got = rd.compile(robot, kind, backend="cuda", dtype=dtype, **options)(*args)
        for a, b in zip(got if isinstance(got, tuple) else (got,), want):
            a = cp.asnumpy(a)
            assert a.shape == b.shape and a.dtype == np.dtype(dtype)
            assert np.max(np.abs(a - b)) <= TOL[dtype] * max(1.0, np.max(np.abs(b))), kind


def test_gpu_kernel_inside_jax_jit_and_its_derivative():
    """``f.jax()`` on a GPU: the CUDA kernel launched by XLA inside ``jax.jit`` equals robodyn's inverse dynamics on
    a batch, and its derivative (the kernels of ∂Γ/∂q, ∂Γ/∂q̇ and A) gives jax.jvp = ∂Γ/∂q dq + ∂Γ/∂q̇ dq̇ + A dq̈
    and jax.grad = the transposed blocks applied to the cotangent, to rounding."""
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX has no GPU device here")
    robot = ROBOTS[1]
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        g = rd.compile(robot, "inverse_dynamics", backend="cuda").jax()
        q, qd, qdd = random_state(robot, 7, batch=(6,))
        dq, dqd, dqdd = random_state(robot, 8, batch=(6,))
        tau, dtau = jax.jit(lambda *x: jax.jvp(g, x[:3], x[3:]))(q, qd, qdd, dq, dqd, dqdd)
        ref = rd.inverse_dynamics_derivatives(robot, q, qd, qdd)
        A = rd.inertia_matrix(robot, q)
        want = (np.einsum("...ij,...j->...i", ref.dtau_dq, dq) + np.einsum("...ij,...j->...i", ref.dtau_dqd, dqd)
                + np.einsum("...ij,...j->...i", A, dqdd))
        np.testing.assert_allclose(np.asarray(tau), rd.inverse_dynamics(robot, q, qd, qdd), rtol=TOL["float64"],
                                   atol=TOL["float64"])
        np.testing.assert_allclose(np.asarray(dtau), want, rtol=TOL["float64"], atol=TOL["float64"] * np.abs(want).max())
        w = np.random.default_rng(9).uniform(-1, 1, robot.n)
        grads = jax.jit(jax.grad(lambda *x: jnp.dot(g(*x), w), argnums=(0, 1, 2)))(q[0], qd[0], qdd[0])
        for got, block in zip(grads, (ref.dtau_dq[0], ref.dtau_dqd[0], A[0])):
            np.testing.assert_allclose(np.asarray(got), block.T @ w, rtol=TOL["float64"], atol=TOL["float64"])
    finally:
        jax.config.update("jax_enable_x64", before)
