"""The CUDA kernel inside jax.jit (robodyn.symbolic.cuda_jax), tested without a GPU: robodyn's XLA FFI handler is
registered for the CPU with a host launch that runs the kernel's C text (its host shim), states as rows; the
handler, its attributes and operands, the launch's grid and the JAX wrapper (shapes, batches, vmap, checks) are
those of the GPU path, where only the launch function and XLA's stream differ."""

from __future__ import annotations

import types

import numpy as np
import pytest

import robodyn as rd
from robodyn.errors import InputError
from robodyn.symbolic import cuda_jax
from robodyn.symbolic.codegen import cuda_code
from robodyn.symbolic.cuda import kernel_model
from robodyn.symbolic.models import JOINT_ARGUMENTS
from tests.support.kernels import host_launch, needs_compiler

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
pytestmark = needs_compiler

TEST_TARGET = "robodyn_cuda_kernel_host_test"


def host_model(robot, kind, dtype="float64"):
    """A stand-in of CudaModel (the attributes jax_function reads) and the handler index of a host launch of its
    kernel text: the launch unpacks the kernel's parameter block as cuLaunchKernel would and runs every thread."""
    model, names, values = kernel_model(robot, kind)
    joint = JOINT_ARGUMENTS[kind]
    launch, lib = host_launch(cuda_code.kernel_source(model, "rd_kernel", dtype, joint, rows=True))
    cuda_jax.register("cpu", TEST_TARGET)
    index = cuda_jax.add_kernel(0, launch, host=True)
    stand_in = types.SimpleNamespace(model=model, joint_names=joint, dtype=np.dtype(dtype), robot=robot, kind=kind,
                                     parameter_names=names, nominal_parameters=values, _keep=lib)
    return stand_in, index


@pytest.fixture(scope="module", autouse=True)
def x64_on_the_cpu():
    """float64, and the CPU even where JAX has a GPU: the test target is registered for the CPU only."""
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    with jax.default_device(jax.devices("cpu")[0]):
        yield
    jax.config.update("jax_enable_x64", before)


REFERENCES = {
    "inverse_dynamics": lambda r, q, qd, qdd: rd.inverse_dynamics(r, q, qd, qdd),
    "inertia_matrix": lambda r, q: rd.inertia_matrix(r, q),
    "regressor": lambda r, q, qd, qdd: rd.regressor(r, q, qd, qdd),
}


@pytest.mark.parametrize("kind", list(REFERENCES))
def test_jitted_kernel_equals_rd(kind):
    """Inside jax.jit, over a batch that is not a multiple of the block (the last block's spare threads return),
    the kernel gives robodyn's recursions to rounding."""
    robot = rd.load("planar3r")
    model, index = host_model(robot, kind)
    f = jax.jit(cuda_jax.jax_function(model, index, name=TEST_TARGET, block=32))
    rng = np.random.default_rng(0)
    args = rng.uniform(-1, 1, (len(model.joint_names), 2, 37, robot.n))
    got = np.asarray(f(*args))
    ref = REFERENCES[kind](robot, *args)
    assert got.shape == ref.shape == (2, 37) + tuple(model.model.output_shape)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12 * np.max(np.abs(ref)))


def test_vmap_broadcast_and_fixed_values():
    """vmap adds a leading axis that the handler counts as states; one argument broadcasts against the others;
    gravity and parameters given at creation are the ones used."""
    robot = rd.load("planar3r")
    model, index = host_model(robot, "inverse_dynamics")
    gravity = np.array([0.0, -3.0, -9.81])
    f = cuda_jax.jax_function(model, index, gravity=gravity, name=TEST_TARGET)
    rng = np.random.default_rng(1)
    q, qd, qdd = rng.uniform(-1, 1, (3, 4, 5, robot.n))
    got = np.asarray(jax.jit(jax.vmap(f))(q, qd, qdd))
    np.testing.assert_allclose(got, rd.inverse_dynamics(robot, q, qd, qdd, gravity=gravity), rtol=1e-12, atol=1e-12)
    one = np.asarray(f(q[0, 0], qd, qdd))  # a single q against batches of qd and qdd
    np.testing.assert_allclose(one, rd.inverse_dynamics(robot, q[0, 0], qd, qdd, gravity=gravity), rtol=1e-12,
                               atol=1e-12)


def test_errors_name_the_argument():
    robot = rd.load("planar3r")
    model, index = host_model(robot, "inverse_dynamics")
    f = cuda_jax.jax_function(model, index, name=TEST_TARGET)
    q = np.zeros((4, robot.n))
    with pytest.raises(InputError, match="argument 'qd' has shape"):
        f(q, np.zeros((4, robot.n + 1)), q)
    with pytest.raises(InputError, match="takes"):
        f(q, q)
    with pytest.raises(InputError, match="argument 'gravity' has shape"):
        cuda_jax.jax_function(model, index, gravity=np.zeros(2), name=TEST_TARGET)
    with pytest.raises(InputError, match="NaN"):
        cuda_jax.jax_function(model, index, params=np.full(len(model.parameter_names), np.nan), name=TEST_TARGET)
    jax.config.update("jax_enable_x64", False)
    try:
        with pytest.raises(InputError, match="jax_enable_x64"):
            f(q, q, q)
    finally:
        jax.config.update("jax_enable_x64", True)


def test_unknown_kernel_index_is_an_error_not_a_call():
    """An index the handler never gave out is refused by the handler itself."""
    robot = rd.load("planar3r")
    model, _ = host_model(robot, "inverse_dynamics")
    f = cuda_jax.jax_function(model, 4095, name=TEST_TARGET)
    with pytest.raises(Exception, match="unknown kernel"):
        np.asarray(f(*np.zeros((3, 2, robot.n))))


def test_handler_compiles_without_warnings():
    """robodyn's XLA handler compiles as C99 under -Wall -Wextra -Werror against the installed jaxlib's header."""
    import subprocess
    from importlib import resources

    from robodyn.native.build import find_compiler

    path = resources.files("robodyn.symbolic.codegen").joinpath("xla_ffi.c")
    run = subprocess.run([find_compiler(), "-std=c99", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                          f"-I{jax.ffi.include_dir()}", str(path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_inverse_dynamics_derivative_for_jvp_and_grad():
    """The inverse dynamics' derivative from the kernels of ∂Γ/∂q, ∂Γ/∂q̇ and A: jax.jvp on a batch equals
    robodyn's derivatives applied to the tangents, and jax.grad (the transposed tangent) equals their transpose."""
    robot = rd.load("planar3r")
    made = {kind: host_model(robot, kind) for kind in ("inverse_dynamics", "inverse_dynamics_derivatives",
                                                        "inertia_matrix")}
    f, d, m = (cuda_jax.jax_function(model, index, name=TEST_TARGET) for model, index in made.values())
    g = cuda_jax.with_derivative(f, d, m)
    rng = np.random.default_rng(4)
    q, qd, qdd, dq, dqd, dqdd = rng.uniform(-1, 1, (6, 5, robot.n))
    ref = rd.inverse_dynamics_derivatives(robot, q, qd, qdd)
    A = rd.inertia_matrix(robot, q)
    tau, dtau = jax.jit(lambda *x: jax.jvp(g, x[:3], x[3:]))(q, qd, qdd, dq, dqd, dqdd)
    want = (np.einsum("...ij,...j->...i", ref.dtau_dq, dq) + np.einsum("...ij,...j->...i", ref.dtau_dqd, dqd)
            + np.einsum("...ij,...j->...i", A, dqdd))
    np.testing.assert_allclose(np.asarray(tau), rd.inverse_dynamics(robot, q, qd, qdd), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(dtau), want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
    w = rng.uniform(-1, 1, robot.n)
    gq, gqd, gqdd = jax.grad(lambda *x: jnp.dot(g(*x), w), argnums=(0, 1, 2))(q[0], qd[0], qdd[0])
    for got, block in ((gq, ref.dtau_dq[0]), (gqd, ref.dtau_dqd[0]), (gqdd, A[0])):
        np.testing.assert_allclose(np.asarray(got), block.T @ w, rtol=1e-12, atol=1e-12)
