"""The CUDA kernels of floating-base robots on a real GPU: ``rd.compile(robot, kind, backend="cuda")`` (a
FloatingCompiledModel around the augmented robot's CudaModel) equals rd.floating.floating_inverse_dynamics,
rd.floating.floating_inertia_matrix and rd.floating.floating_forward_dynamics, float64 to 1e-12 relative, float32 looser (stated).

Skipped without CuPy or a CUDA device. Self-contained and quick (a few NVRTC compilations, < 60 s): a random
floating tree from tests/support, and solo12 only where example-robot-data is installed (skipped otherwise).
The kernel text itself is tested without a GPU in tests/test_floating_codegen.py (host shim).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest


def _device():
    try:
        import cupy
    except ImportError:
        return None
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None
    except Exception:  # CuPy raises its own runtime errors when no driver or device is present
        return None
    return cupy


cupy = _device()
pytestmark = pytest.mark.skipif(cupy is None, reason="needs CuPy and a CUDA device")

import robodyn as rd  # noqa: E402
from tests.support.random_robots import random_inertia, random_robot  # noqa: E402

KINDS = ("inverse_dynamics", "inertia_matrix", "forward_dynamics")
#: float32 kernels, relative to the largest entry of the float64 result (as tests/test_floating_codegen.py)
FLOAT32_TOL = {"inverse_dynamics": 1e-5, "inertia_matrix": 1e-5, "forward_dynamics": 5e-4}


def _robot(which: str):
    if which == "random tree":
        robot = random_robot(21, nf=6, tree=True, fixed=True, friction=False)
        return robot.replace(base="floating", base_params=random_inertia(np.random.default_rng(22)))
    from tests.support.checks import example_robot_data_path

    path = example_robot_data_path("solo_description/robots/solo12.urdf")  # skips where it is missing
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return rd.load(path, floating=True, strict=False)


def _state(n: int, batch: int = 300):
    rng = np.random.default_rng(3)
    quat = rng.normal(size=(batch, 4))
    quat /= np.linalg.norm(quat, axis=-1, keepdims=True)
    q = np.concatenate([rng.normal(size=(batch, 3)), quat, rng.uniform(-2, 2, (batch, n))], -1)
    return q, rng.normal(size=(batch, n + 6)), rng.normal(size=(batch, n + 6))


def _close(actual, expected, tol):
    scale = max(1.0, float(np.max(np.abs(expected))))
    err = float(np.max(np.abs(np.asarray(actual, dtype=float) - expected)))
    assert err <= tol * scale, f"error {err:.3e} > {tol:.1e} x {scale:.3e}"


@pytest.mark.parametrize("which", ["random tree", "solo12"])
def test_floating_cuda_kernels_equal_rd_on_the_gpu(which):
    robot = _robot(which)
    q, v, a = _state(robot.n)
    g = np.array([0.3, -0.2, -9.81])
    tau = rd.floating.floating_inverse_dynamics(robot, q, v, a, gravity=g)
    ref = {"inverse_dynamics": tau, "inertia_matrix": rd.floating.floating_inertia_matrix(robot, q), "forward_dynamics": a}
    args = {"inverse_dynamics": (q, v, a), "inertia_matrix": (q,), "forward_dynamics": (q, v, tau)}
    for kind in KINDS:
        kw = {} if kind == "inertia_matrix" else {"gravity": g}
        for dtype, tol in (("float64", 1e-12), ("float32", FLOAT32_TOL[kind])):
            f = rd.compile(robot, kind, backend="cuda", dtype=dtype)
            out = f(*args[kind], **kw)
            assert isinstance(out, cupy.ndarray) and out.dtype == np.dtype(dtype) and out.shape == ref[kind].shape
            _close(out.get(), ref[kind], tol)
        one = f(*(x[0] for x in args[kind]), **kw)  # one state, and CuPy inputs (converted on the host)
        _close(one.get(), ref[kind][0], FLOAT32_TOL[kind])
        f64 = rd.compile(robot, kind, backend="cuda")
        _close(f64(*(cupy.asarray(x) for x in args[kind]), **kw).get(), ref[kind], 1e-12)


def test_floating_cuda_errors_on_the_gpu():
    robot = _robot("random tree")
    f = rd.compile(robot, "inverse_dynamics", backend="cuda")
    q, v, a = _state(robot.n, 2)
    with pytest.raises(rd.InputError, match="called as"):
        f(q, v, a, wrenches=np.zeros((2, robot.nf, 6)))  # the kernel takes no external wrenches
    with pytest.raises(rd.InputError, match="'q'.*shape"):
        f(q[:, :-1], v, a)
    with pytest.raises(rd.InputError, match="mobile base"):
        rd.compile(robot.replace(base="mobile"), "forward_dynamics", backend="cuda")
