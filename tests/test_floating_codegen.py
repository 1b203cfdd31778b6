"""rd.compile of a floating-base robot: the augmented robot's customized model called with free-flyer arrays
(robodyn.symbolic.floating) equals rd.floating.floating_inverse_dynamics / floating_inertia_matrix / floating_forward_dynamics;
its CUDA kernels, without a GPU, through the host shim (as tests/test_cuda_source.py; the GPU itself in
tests/test_cuda_floating_device.py)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import robodyn as rd
from robodyn.symbolic.cuda import kernel_model
from robodyn.symbolic.floating import FloatingCompiledModel
from tests.support.pin_compare import assert_rel
from tests.test_cuda_source import run
from tests.support.floating import legged_robot, random_floating, random_free_state

needs_cc = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")


@needs_cc
@pytest.mark.parametrize("seed", [5, 6])
def test_compiled_floating_inverse_dynamics_equals_the_numeric_one(seed):
    robot = random_floating(seed, tree=True, nf=4)
    f = rd.compile(robot, "inverse_dynamics")
    assert f.model.robot.n == robot.n + 6  # the generated C takes the augmented arrays
    q, v, a = random_free_state(robot.n, seed, (3,))
    assert_rel(f(q, v, a), rd.floating.floating_inverse_dynamics(robot, q, v, a), 1e-12)
    assert_rel(f(q[1], v[1], a[1]), rd.floating.floating_inverse_dynamics(robot, q[1], v[1], a[1]), 1e-12)
    W = np.random.default_rng(seed).normal(size=(3, robot.nf, 6))
    g = np.array([0.5, -1.0, -9.0])
    assert_rel(f(q, v, a, wrenches=W, gravity=g), rd.floating.floating_inverse_dynamics(robot, q, v, a, wrenches=W, gravity=g), 1e-12)
    mobile = robot.replace(base="mobile")
    assert_rel(rd.compile(mobile, "inverse_dynamics")(q, v, a), rd.floating.floating_inverse_dynamics(mobile, q, v, a), 1e-12)


def test_compiled_floating_models_with_the_numpy_backend():
    robot = random_floating(7, tree=False, nf=3)
    q, v, a = random_free_state(robot.n, 7, (2,))
    f = rd.compile(robot, "idm", backend="numpy")
    assert_rel(f(q, v, a), rd.floating.floating_inverse_dynamics(robot, q, v, a), 1e-12)
    M = rd.compile(robot, "inertia_matrix", backend="numpy")(q)
    assert M.shape == (2, robot.n + 6, robot.n + 6)
    assert_rel(M, rd.floating.floating_inertia_matrix(robot, q), 1e-12)


def test_compiled_floating_errors():
    robot = random_floating(8, tree=False, nf=3)
    with pytest.raises(rd.InputError, match="floating base"):
        rd.compile(robot, "bias", backend="numpy")
    with pytest.raises(rd.InputError, match="parameters_input"):
        rd.compile(robot, parameters_input=True)
    with pytest.raises(rd.InputError, match="dtype"):
        rd.compile(robot, dtype="float32")
    with pytest.raises(rd.InputError, match="mobile base"):
        rd.compile(robot.replace(base="mobile"), "forward_dynamics", backend="numpy")
    f = rd.compile(robot, "inverse_dynamics", backend="numpy")
    q, v, a = random_free_state(robot.n, 8, (1,))
    with pytest.raises(rd.InputError, match="'q'.*shape"):
        f(q[..., :-1], v, a)
    with pytest.raises(rd.InputError, match="quaternion"):
        f(np.concatenate([q[..., :3], 3 * q[..., 3:7], q[..., 7:]], -1), v, a)
    with pytest.raises(rd.InputError, match="wrenches"):
        f(q, v, a, wrenches=np.zeros((robot.nf + 1, 6)))
    with pytest.raises(rd.InputError, match="called as"):
        f(q, v)


@needs_cc
def test_compiled_quadruped_inverse_dynamics():
    robot = legged_robot("solo12.urdf")
    q, v, a = random_free_state(robot.n, 9, (4,))
    f = rd.compile(robot, "inverse_dynamics")
    assert_rel(f(q, v, a), rd.floating.floating_inverse_dynamics(robot, q, v, a), 1e-12)


@needs_cc
@pytest.mark.parametrize("seed", [5, 6])
def test_compiled_floating_forward_dynamics_inverts_the_inverse_dynamics(seed):
    robot = random_floating(seed, tree=True, nf=4)
    f = rd.compile(robot, "forward_dynamics")
    q, v, a = random_free_state(robot.n, seed, (3,))
    W = np.random.default_rng(seed).normal(size=(3, robot.nf, 6))
    g = np.array([0.5, -1.0, -9.0])
    tau = rd.floating.floating_inverse_dynamics(robot, q, v, a, wrenches=W, gravity=g)
    assert_rel(f(q, v, tau, wrenches=W, gravity=g), a, 1e-12)
    tau = rd.floating.floating_inverse_dynamics(robot, q[0], v[0], a[0])
    assert_rel(f(q[0], v[0], tau), rd.floating.floating_forward_dynamics(robot, q[0], v[0], tau), 1e-12)
    with pytest.raises(rd.InputError, match="'tau'.*shape"):
        f(q, v, tau[:-1])


class HostKernel:
    """The contract of CudaModel — f(q_a, qd_a, third, gravity=g) on the augmented robot — with the same kernel text
    run on the CPU through the host shim, so that FloatingCompiledModel's CUDA path is tested without a GPU."""

    def __init__(self, augmented, kind, dtype):
        self.model, _, self.params = kernel_model(augmented, kind)
        self.kind, self.dtype, self.n = kind, dtype, augmented.n

    def __call__(self, *joint, gravity=None):
        batch = np.shape(joint[0])[:-1]
        per_state = [np.reshape(x, (-1, self.n)) for x in joint]
        if self.kind != "inertia_matrix":
            per_state.append(np.reshape(np.broadcast_to(gravity, batch + (3,)), (-1, 3)))
        out = run(self.model, self.dtype, per_state, [self.params])
        return out.reshape(batch + tuple(self.model.output_shape))


def _quadruped():
    return legged_robot("solo12.urdf")


#: float32 kernels: relative to the largest entry of the float64 result (single precision, ~1e-7, grown by the
#: few hundred to few thousand operations of an 18-dof tree and, for the forward dynamics, by cond(M))
FLOAT32_TOL = {"inverse_dynamics": 1e-5, "inertia_matrix": 1e-5, "forward_dynamics": 5e-4}


@needs_cc
@pytest.mark.parametrize("kind", ["inverse_dynamics", "inertia_matrix", "forward_dynamics"])
@pytest.mark.parametrize("which", ["random tree", "solo12"])
def test_cuda_kernels_of_floating_models_run_as_c_and_equal_rd(kind, which):
    robot = random_floating(11, tree=True, nf=5) if which == "random tree" else _quadruped()
    q, v, a = random_free_state(robot.n, 12, (7,))
    g = np.array([0.3, -0.2, -9.81])
    tau = rd.floating.floating_inverse_dynamics(robot, q, v, a, gravity=g)
    args = {"inverse_dynamics": (q, v, a), "inertia_matrix": (q,), "forward_dynamics": (q, v, tau)}[kind]
    kw = {} if kind == "inertia_matrix" else {"gravity": g}
    ref = {"inverse_dynamics": tau, "inertia_matrix": rd.floating.floating_inertia_matrix(robot, q), "forward_dynamics": a}[kind]
    for dtype, tol in (("float64", 1e-12), ("float32", FLOAT32_TOL[kind])):
        f = FloatingCompiledModel(robot, kind, lambda aug, k: HostKernel(aug, k, dtype), backend="cuda")
        out = f(*args, **kw)
        assert out.dtype == np.dtype(dtype) and out.shape == ref.shape
        assert_rel(out, ref, tol)
    assert f.model.model.robot.n == robot.n + 6  # the kernel is the augmented robot's
    assert "wrenches" not in str(f.__signature__)  # the kernel takes none


def test_floating_cuda_without_cupy_is_a_clear_error():
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy is installed: tests/test_cuda_floating_device.py runs the kernels")
    except ImportError:
        pass
    robot = random_floating(8, tree=False, nf=3)
    with pytest.raises(rd.RobodynError, match=r"needs CuPy and an NVIDIA GPU"):
        rd.compile(robot, "inverse_dynamics", backend="cuda")
    with pytest.raises(rd.InputError, match="mobile base"):
        rd.compile(robot.replace(base="mobile"), "forward_dynamics", backend="cuda")
