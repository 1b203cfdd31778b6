"""rd.compile of a floating-base robot: the augmented robot's customized model called with free-flyer arrays
(robodyn.symbolic.floating) equals rd.floating.floating_inverse_dynamics / floating_inertia_matrix / floating_forward_dynamics;
its CUDA kernels, without a GPU, through the host shim (as tests/test_cuda_source.py; the GPU itself in
tests/test_cuda_floating_device.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import robodyn as rd
from robodyn.symbolic.cuda import kernel_model
from robodyn.symbolic.floating import FloatingCompiledModel
from tests.support.pin_compare import assert_rel
from tests.test_cuda_source import run
from tests.support.floating import legged_robot, random_floating, random_free_state
from tests.support.kernels import needs_compiler


#: two random free-flying trees, one compiled per kind below (each compile takes tens of seconds on 2 cores)
SEEDS = {"inverse_dynamics": 6, "forward_dynamics": 5}


@pytest.mark.slow
@needs_compiler
def test_compiled_floating_inverse_dynamics_equals_the_numeric_one():
    seed = SEEDS["inverse_dynamics"]
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
    for extra in ({"frame": 2}, {"point": [0.1, 0.0, 0.0]}):  # a dynamics kind: no frame or point to ignore
        with pytest.raises(rd.InputError, match="frame and point are for the kinds"):
            rd.compile(robot, "inverse_dynamics", backend="numpy", **extra)
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


@pytest.mark.slow
@needs_compiler
def test_compiled_quadruped_inverse_dynamics():
    robot = legged_robot("solo12.urdf")
    q, v, a = random_free_state(robot.n, 9, (4,))
    f = rd.compile(robot, "inverse_dynamics")
    assert_rel(f(q, v, a), rd.floating.floating_inverse_dynamics(robot, q, v, a), 1e-12)


@pytest.mark.slow
@needs_compiler
def test_compiled_floating_forward_dynamics_inverts_the_inverse_dynamics():
    seed = SEEDS["forward_dynamics"]
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


@needs_compiler
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


#: the numeric function each floating kind equals, and its arguments from a state (q, v, a) and its torques
_NUMERIC = {"inverse_dynamics": (rd.floating.floating_inverse_dynamics, lambda q, v, a, tau: (q, v, a)),
            "inertia_matrix": (rd.floating.floating_inertia_matrix, lambda q, v, a, tau: (q,)),
            "forward_dynamics": (rd.floating.floating_forward_dynamics, lambda q, v, a, tau: (q, v, tau))}


@pytest.mark.parametrize("backend", [pytest.param("c", marks=[needs_compiler, pytest.mark.slow]), "numpy"])
@pytest.mark.parametrize("kind", list(_NUMERIC))
def test_compiled_floating_models_write_into_out(kind, backend):
    """out= as for fixed bases: the result written into the caller's array, which is returned, equal bit for bit
    to the call without it, a batch and one state (the C entry's path), float64 and float32, with wrenches and
    another gravity; the buffer checked on entry (InputError naming 'out')."""
    robot = random_floating(13, tree=True, nf=3)
    q, v, a = random_free_state(robot.n, 13, (3,))
    W = np.random.default_rng(13).normal(size=(3, robot.nf, 6))
    g = np.array([0.4, -0.3, -9.7])
    tau = rd.floating.floating_inverse_dynamics(robot, q, v, a)
    numeric, arguments = _NUMERIC[kind]
    args = arguments(q, v, a, tau)
    f = rd.compile(robot, kind, backend=backend)
    assert "out" in f.__signature__.parameters
    keywords = [{}] if kind == "inertia_matrix" else [{}, {"wrenches": W, "gravity": g}]
    for state in (slice(None), 1):
        for given in keywords:
            for dtype in (np.float64, np.float32):
                x = tuple(np.ascontiguousarray(y[state], dtype=dtype) for y in args)
                kw = {k: np.asarray(w[state] if k == "wrenches" else w, dtype=dtype) for k, w in given.items()}
                expected = f(*x, **kw)
                assert expected.dtype == dtype
                out = np.full_like(expected, np.nan)
                assert f(*x, **kw, out=out) is out
                assert np.array_equal(out, expected)
                if dtype == np.float64:
                    assert_rel(out, numeric(robot, *x, **kw), 1e-12)
    n6 = robot.n + 6
    shape = (3, n6, n6) if kind == "inertia_matrix" else (3, n6)
    readonly = np.empty(shape)
    readonly.setflags(write=False)
    pool = np.empty(max(np.prod(shape), args[-1].size))  # the last argument and the buffer in the same memory
    last = pool[:args[-1].size].reshape(args[-1].shape)
    last[...] = args[-1]
    for bad, words in ((np.empty(shape[1:]), f"of shape {shape[1:]}"), (np.empty(shape, np.float32), "float32 array"),
                       (np.empty(shape + (2,))[..., 0], "non-contiguous"), (readonly, "read-only"),
                       (np.empty(shape).tolist(), "is list"), (pool[:np.prod(shape)].reshape(shape), "shares memory")):
        with pytest.raises(rd.InputError, match=f"argument 'out' .*{re.escape(words)}"):
            f(*args[:-1], last, out=bad)


def test_floating_cuda_takes_no_out():
    """The CUDA back end returns CuPy arrays: out= is refused with a clear error, as for fixed bases."""
    robot = random_floating(8, tree=False, nf=3)
    f = FloatingCompiledModel(robot, "inertia_matrix", lambda augmented, kind: None, backend="cuda")
    assert "out" not in f.__signature__.parameters
    q, _, _ = random_free_state(robot.n, 8)
    with pytest.raises(rd.InputError, match="backend='cuda' takes no argument 'out'"):
        f(q, out=np.empty((robot.n + 6, robot.n + 6)))
