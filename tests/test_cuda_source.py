"""The CUDA kernels of the customized models, tested without a GPU: the kernel text compiled as C through its host
shim gives rd's numbers, in float64 and float32; the GPU itself is exercised by benchmarks/bench_gpu.py."""

from __future__ import annotations

import ctypes
import functools
import types
import weakref

import numpy as np
import pytest

import robodyn as rd
from robodyn.symbolic.codegen import cuda_code
from robodyn.symbolic.cuda import kernel_model
from robodyn.native.build import compile_library
from robodyn.symbolic.codegen.c_code import parameter_names, with_parameter_input
from robodyn.symbolic.models import customized_model
from tests.support.kernels import host_launch, needs_compiler
from tests.support.random_robots import random_robot


def shim(model, dtype, per_state):
    source, decl = cuda_code.host_shim_source(model, "rd_kernel", dtype, per_state)
    ffi, lib, _ = compile_library(source, decl)
    return ffi, lib.rd_kernel_host


def run(model, dtype, per_state, shared, singular=False):
    """per_state: arrays (count, m) of the first arguments; shared: arrays (m,) of the others, one value for all
    states (passed by value in ``rd_shared``). Returns (count, output size), and with ``singular`` also the
    lowest failed pivot check (len(model.checks) when none failed)."""
    names = [a.name for a in model.arguments]
    ffi, fn = shim(model, dtype, names[:len(per_state)])
    ctype = "double[]" if dtype == "float64" else "float[]"
    count = per_state[0].shape[0]
    keep = [np.ascontiguousarray(a.T, dtype=dtype) for a in per_state]
    keep += [np.ascontiguousarray(a, dtype=dtype) for a in shared]
    out = np.empty((cuda_code.output_size(model), count), dtype=dtype)
    flag = np.array([len(model.checks)], dtype=np.int32)
    fn(count, *(ffi.from_buffer(ctype, a) for a in keep), ffi.from_buffer(ctype, out),
       *([ffi.from_buffer("int[]", flag)] if model.checks else []))
    return (out.T, int(flag[0])) if singular else out.T


KINDS = {
    "inverse_dynamics": lambda r, q, qd, qdd: rd.inverse_dynamics(r, q, qd, qdd),
    "gravity": lambda r, q, qd, qdd: rd.gravity_torques(r, q),
    "inertia_matrix": lambda r, q, qd, qdd: rd.inertia_matrix(r, q).reshape(len(q), -1),
    "forward_dynamics": lambda r, q, qd, qdd: rd.forward_dynamics(r, q, qd, rd.inverse_dynamics(r, q, qd, qdd)),
}
JOINT_ARGS = {"inverse_dynamics": 3, "gravity": 1, "inertia_matrix": 1, "forward_dynamics": 3, "regressor": 3}


@needs_compiler
@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("name", ["planar3r", "pr"])
def test_kernel_text_runs_as_c_and_equals_rd(kind, name):
    robot = rd.load(name)
    m = customized_model(robot, kind, gravity="constant" if kind == "inertia_matrix" else "input",
                         symbolic_inertia=True)
    values = {str(s): float(v) for s, v in m.constants.items()}
    params = np.array([values[k] for k in parameter_names(m)])
    m = with_parameter_input(m)
    rng = np.random.default_rng(1)
    q, qd, qdd = rng.uniform(-1, 1, (3, 37, robot.n))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    joint = [q, qd, tau if kind == "forward_dynamics" else qdd][: JOINT_ARGS[kind]]
    shared = ([] if kind == "inertia_matrix" else [robot.gravity]) + [params]
    ref = KINDS[kind](robot, q, qd, qdd)
    if kind == "forward_dynamics":
        ref = qdd
    out64 = run(m, "float64", joint, shared)
    np.testing.assert_allclose(out64, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())
    out32 = run(m, "float32", joint, shared)
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32, ref, rtol=2e-3, atol=2e-3 * np.abs(ref).max())


@needs_compiler
def test_parameters_are_a_kernel_input():
    """One kernel serves other parameter values: doubling every inertial parameter and friction coefficient
    doubles the inverse dynamics at rest without gravity... and equals rd for a robot with those parameters."""
    robot = rd.load("planar3r")
    m = customized_model(robot, "inverse_dynamics", gravity="input", symbolic_inertia=True)
    names = parameter_names(m)
    values = {str(s): float(v) for s, v in m.constants.items()}
    params = np.array([values[k] for k in names])
    m = with_parameter_input(m)
    rng = np.random.default_rng(4)
    q, qd, qdd = rng.uniform(-1, 1, (3, 9, robot.n))
    heavier = robot.replace(params=robot.params * 2, Ia=robot.Ia * 2, Fc=robot.Fc * 2, Fv=robot.Fv * 2,
                            Foff=robot.Foff * 2)
    out = run(m, "float64", [q, qd, qdd], [robot.gravity, 2 * params])
    np.testing.assert_allclose(out, rd.inverse_dynamics(heavier, q, qd, qdd), rtol=1e-10, atol=1e-10)


def test_float32_kernel_has_no_double_literals():
    m = customized_model(rd.load("rx90"), "inverse_dynamics", gravity="input")
    source = cuda_code.kernel_source(m, "k", "float32")
    body = source.split("RD_KERNEL void", 1)[1]
    assert not cuda_code._FLOAT_LITERAL.search(body)  # every literal carries the f suffix
    assert "0.5f" in body or "2.0f" in body or "1.0f" in body
    assert "sinf(" in source and "double" not in body


def test_hostile_robot_name_stays_in_its_comment():
    robot = rd.load("planar2r").replace(name='arm */\n#include <stdlib.h>\nint pwn;\n/*')
    src = cuda_code.kernel_source(customized_model(robot, "gravity", gravity="input"), "k")
    assert "#include <stdlib.h>" not in src and "\nint pwn" not in src


def test_cuda_backend_without_cupy_is_a_clear_error():
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy is installed: the GPU path is exercised by benchmarks/bench_gpu.py")
    except ImportError:
        pass
    with pytest.raises(rd.RobodynError, match=r"needs CuPy and an NVIDIA GPU"):
        rd.compile(rd.load("planar2r"), "inverse_dynamics", backend="cuda")
    with pytest.raises(rd.InputError, match="dtype"):
        rd.compile(rd.load("planar2r"), "inverse_dynamics", dtype="float32")


def _planar3r_model(kind="inverse_dynamics"):
    robot = rd.load("planar3r")
    m = customized_model(robot, kind, gravity="constant" if kind == "inertia_matrix" else "input",
                         symbolic_inertia=True)
    values = {str(s): float(v) for s, v in m.constants.items()}
    return robot, with_parameter_input(m), np.array([values[k] for k in parameter_names(m)])


def test_shared_values_travel_by_value_in_a_struct():
    """Gravity and parameters given once for all states are fields of the kernel's by-value struct (constant
    bank, no registers); per-state arguments are restrict pointers read at k*count + i."""
    robot, m, params = _planar3r_model()
    source = cuda_code.kernel_source(m, "k", per_state=("q", "qd", "qdd"))
    assert f"typedef struct {{ real gravity[3]; real params[{len(params)}]; }} rd_shared;" in source
    assert "const rd_shared shared, real *__restrict__ out)" in source
    assert "shared.params[0]" in source and "q[0*count + i]" in source
    assert cuda_code.shared_dtype(m, "float64", ("q", "qd", "qdd")).names == ("gravity", "params")
    assert cuda_code.layout(m) == {"q": "per_state", "qd": "per_state", "qdd": "per_state",
                                   "gravity": "per_state", "params": "per_state"}
    assert "rd_shared" not in cuda_code.kernel_source(m, "k")
    with pytest.raises(ValueError, match="'tau'"):
        cuda_code.layout(m, ("q", "tau"))


@needs_compiler
def test_every_layout_gives_rd_numbers(monkeypatch):
    """The same model with gravity and parameters per state (each state its own parameters), by value, and as
    shared pointers (too many values for the kernel's parameter memory) equals rd."""
    robot, m, params = _planar3r_model()
    rng = np.random.default_rng(7)
    q, qd, qdd = rng.uniform(-1, 1, (3, 11, robot.n))
    scale = rng.uniform(0.5, 2.0, 11)
    want = scale[:, None] * rd.inverse_dynamics(robot, q, qd, qdd, gravity=robot.gravity / scale[0] * scale[0])
    got = run(m, "float64", [q, qd, qdd, np.tile(robot.gravity, (11, 1)), scale[:, None] * params], [])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
    want = rd.inverse_dynamics(robot, q, qd, qdd)
    np.testing.assert_allclose(run(m, "float64", [q, qd, qdd], [robot.gravity, params]), want, rtol=1e-12,
                               atol=1e-12 * np.abs(want).max())
    monkeypatch.setattr(cuda_code, "BY_VALUE_BYTES", 16)
    assert cuda_code.layout(m, ("q", "qd", "qdd"))["params"] == "shared"
    assert "rd_shared" not in cuda_code.kernel_source(m, "k", per_state=("q", "qd", "qdd"))
    np.testing.assert_allclose(run(m, "float64", [q, qd, qdd], [robot.gravity, params]), want, rtol=1e-12,
                               atol=1e-12 * np.abs(want).max())


@pytest.mark.parametrize("kind", ["inverse_dynamics", "inertia_matrix", "forward_dynamics",
                                  "inverse_dynamics_derivatives", "forward_dynamics_derivatives", "jacobian",
                                  "jacobian_dot_qd"])
def test_kernel_text_compiles_as_c_without_warnings(kind, tmp_path):
    """The kernel text (through its host shim) compiles under -Wall -Wextra -Werror, in both precisions."""
    import shutil
    import subprocess

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    from robodyn.symbolic.cuda import kernel_model

    m = kernel_model(rd.load("stanford"), kind)[0]   # revolute and prismatic joints; the kernels' own model
    for dtype in ("float64", "float32"):
        src = tmp_path / f"k_{dtype}.c"
        src.write_text(cuda_code.host_shim_source(m, "k", dtype, ("q",))[0])
        proc = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", str(src)],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


@needs_compiler
def test_forward_dynamics_kernel_flags_a_singular_pivot():
    """A state whose articulated inertia H_2 vanishes lowers ``singular`` to that pivot's check (CudaModel raises
    the numeric API's ModelError naming the joint); the other states pass and equal rd."""
    from robodyn.symbolic.cuda import kernel_model
    from tests.test_compile_checks import SINGULAR_AT_Q, _states

    robot = rd.loads(SINGULAR_AT_Q)
    m, _, params = kernel_model(robot, "forward_dynamics")
    q, qd, tau = _states(7, 0.0)
    good = slice(0, 6)
    out, flag = run(m, "float64", [q[good], qd[good], tau[good]], [robot.gravity, params], singular=True)
    assert flag == len(m.checks)
    np.testing.assert_allclose(out, rd.forward_dynamics(robot, q[good], qd[good], tau[good]), rtol=1e-10, atol=1e-10)
    _, flag = run(m, "float64", [q, qd, tau], [robot.gravity, params], singular=True)
    assert flag < len(m.checks) and m.checks[flag][0] == "j2"


#: cuLaunchKernel(f, grid x, y, z, block x, y, z, shared bytes, stream, kernelParams, extra)
_LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *(ctypes.c_uint,) * 7, ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.c_void_p)


class _FakeArray(np.ndarray):
    """A NumPy array posing as a CuPy array: ``data.ptr`` is its address, which the host launch reads."""

    @property
    def data(self):
        return types.SimpleNamespace(ptr=self.ctypes.data)

    def get(self):
        return np.asarray(self)


class _FakeCupy:
    """Enough of CuPy for CudaModel's host side on a machine without a GPU: arrays are NumPy arrays with an
    address; the driver's launch calls the host function a kernel's address names (:class:`HostRawKernel`'s), and
    this class's own kernels are never launched."""

    ndarray = _FakeArray

    class cuda:  # noqa: N801
        class runtime:  # noqa: N801
            freed = 0

            @staticmethod
            def getDeviceCount():
                return 1

            @classmethod
            def free(cls, pointer):
                cls.freed += 1

        @staticmethod
        def get_current_stream():
            return types.SimpleNamespace(ptr=0)

        class driver:  # noqa: N801
            class CUDADriverError(RuntimeError):
                def __init__(self, status):
                    super().__init__(f"CUresult {status}")
                    self.status = status

            @classmethod
            def launchKernel(cls, function, gx, gy, gz, bx, by, bz, shared_memory, stream, params, extra):  # noqa: N802
                """cuLaunchKernel: ``function`` is the address of a host function with its signature."""
                status = _LAUNCH(function)(function, gx, gy, gz, bx, by, bz, shared_memory, stream, params, extra)
                if status:
                    raise cls.CUDADriverError(status)

    #: the memory of converted arrays, kept: a dropped one is overwritten with NaN, as a pool would hand it on
    pool = []

    @staticmethod
    def asarray(a, dtype=None):
        if isinstance(a, _FakeArray) and (dtype is None or a.dtype == dtype):
            return a
        memory = np.array(a, dtype=dtype, order="C")
        _FakeCupy.pool.append(memory)
        array = memory.view(_FakeArray)
        if memory.dtype.kind == "f":
            weakref.finalize(array, memory.fill, np.nan)
        return array

    @staticmethod
    def empty(shape, dtype=None):
        return np.empty(shape, dtype=dtype).view(_FakeArray)

    @staticmethod
    def full(shape, value, dtype=None):
        return np.full(shape, value, dtype=dtype).view(_FakeArray)

    @staticmethod
    def ascontiguousarray(a):
        return np.ascontiguousarray(a).view(_FakeArray)

    broadcast_to, isfinite, all = staticmethod(np.broadcast_to), staticmethod(np.isfinite), staticmethod(np.all)

    class RawKernel:
        num_regs, local_size_bytes = 40, 0
        kernel = types.SimpleNamespace(ptr=7)

        def __init__(self, source, name, options=()):
            self.source = source


class HostRawKernel:
    """``cupy.RawKernel`` on the CPU: its ``kernel.ptr`` is a host function with ``cuLaunchKernel``'s signature that
    runs the kernel text compiled as C (:func:`tests.support.kernels.host_launch`), built at the first use. With
    :class:`_HostCupy` and the :func:`cuda_on_host` fixture it runs :class:`robodyn.symbolic.cuda.CudaModel`'s own
    Python (layouts, struct, parameter block, flags, checks) without a GPU."""

    num_regs, local_size_bytes = 40, 0

    def __init__(self, source, name, options=()):
        self.source, self.name = source, name

    @functools.cached_property
    def kernel(self):
        address, self._lib = host_launch(self.source, self.name)
        return types.SimpleNamespace(ptr=address)


class _HostCupy(_FakeCupy):
    RawKernel = HostRawKernel


@pytest.fixture
def cuda_on_host(monkeypatch):
    """CudaModel's launches run its kernel text on the CPU: CuPy faked, whose driver launch calls the host function
    a kernel's address names."""
    from robodyn.symbolic import cuda

    monkeypatch.setattr(cuda, "_cupy", lambda: _HostCupy)


@needs_compiler
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cuda_model_on_the_host(cuda_on_host, dtype):
    """rd.compile(backend="cuda") as a whole — argument checks, layouts compiled per call pattern, the struct of
    shared values, results reshaped — with the kernel run on the CPU."""
    robot = rd.load("planar3r")
    f = rd.compile(robot, "inverse_dynamics", backend="cuda", dtype=dtype)
    rng = np.random.default_rng(2)
    q, qd, qdd = rng.uniform(-1, 1, (3, 5, 4, robot.n))
    tol = 1e-12 if dtype == "float64" else 2e-5
    want = rd.inverse_dynamics(robot, q, qd, qdd)
    got = f(q, qd, qdd)
    assert got.shape == want.shape and got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    scale = rng.uniform(0.5, 2, (5, 4, 1))
    g = np.array([0.0, 2.0, -9.0])
    got = f(q, qd, qdd, gravity=np.broadcast_to(g, (5, 4, 3)), params=scale * f.nominal_parameters)
    want = scale * rd.inverse_dynamics(robot, q, qd, qdd, gravity=g)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    assert len(f._kernels) == 2 and "rd_shared" in f.source  # one layout per call pattern
    soa = f.soa(*(np.ascontiguousarray(x.reshape(-1, robot.n).T, dtype=dtype) for x in (q, qd, qdd)),
                robot.gravity, f.nominal_parameters)
    np.testing.assert_allclose(soa.T.reshape(want.shape), rd.inverse_dynamics(robot, q, qd, qdd), rtol=tol,
                               atol=tol * np.abs(want).max())
    with pytest.raises(rd.InputError, match=r"takes \(q, qd, qdd, gravity=None, params=None\)"):
        f(q, qd)
    with pytest.raises(rd.InputError, match="'qd' has shape"):
        f(q, qd[..., :2], qdd)
    with pytest.raises(rd.InputError, match="'params' has shape"):
        f(q, qd, qdd, params=np.zeros(3))
    with pytest.raises(rd.InputError, match="NaN or inf"):
        f(q, qd * np.nan, qdd)


@needs_compiler
def test_cuda_model_on_the_host_raises_the_model_errors(cuda_on_host):
    from tests.test_compile_checks import SINGULAR_AT_Q, _states

    robot = rd.loads(SINGULAR_AT_Q)
    f = rd.compile(robot, "forward_dynamics", backend="cuda")
    q, qd, tau = _states(9, 0.0)
    np.testing.assert_allclose(f(q[:-1], qd[:-1], tau[:-1]), rd.forward_dynamics(robot, q[:-1], qd[:-1], tau[:-1]),
                               rtol=1e-10, atol=1e-10)
    with pytest.raises(rd.ModelError, match=r"CUDA forward_dynamics: joint j2"):
        f(q, qd, tau)
    g = rd.compile(rd.load("planar3r"), "inverse_dynamics", backend="cuda")
    with pytest.raises(rd.NumericOverflowError, match="not finite"):
        g(np.zeros(3), np.full(3, 1e200), np.zeros(3))


@needs_compiler
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", ["planar3r", pytest.param("stanford", marks=pytest.mark.slow)])
def test_cuda_derivatives_and_kinematics_on_the_host(cuda_on_host, dtype, name):
    """rd.compile(..., backend="cuda") of the derivative kinds (records of the numeric functions, parameters an
    input) and of a frame's J and J̇q̇ (no gravity, no params), the kernels run on the CPU."""
    robot = rd.load(name)
    rng = np.random.default_rng(4)
    q, qd, qdd = rng.uniform(-1, 1, (3, 3, 2, robot.n))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    tol = 1e-11 if dtype == "float64" else 2e-4

    def close(got, want):
        assert got.shape == want.shape and got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())

    for kind, args, numeric in (
            ("inverse_dynamics_derivatives", (q, qd, qdd), rd.inverse_dynamics_derivatives(robot, q, qd, qdd)),
            ("forward_dynamics_derivatives", (q, qd, tau), rd.forward_dynamics_derivatives(robot, q, qd, tau))):
        f = rd.compile(robot, kind, backend="cuda", dtype=dtype)
        got = f(*args)
        assert type(got) is type(numeric)
        for a, b in zip(got, numeric):
            close(a, b)
        g = np.array([0.0, 3.0, -9.0])
        got = f(*args, gravity=g, params=2 * f.nominal_parameters)   # Γ and its derivatives scale with the parameters
        if kind == "inverse_dynamics_derivatives":
            want = rd.inverse_dynamics_derivatives(robot, q, qd, qdd, gravity=g)
            for a, b in zip(got, want):
                close(a, 2 * b)
    frame = robot.nf
    point = [0.1, -0.2, 0.05]
    J = rd.compile(robot, "jacobian", backend="cuda", dtype=dtype, frame=frame, point=point)
    close(J(q), rd.jacobian(robot, q, frame=frame, point=point))
    Jd = rd.compile(robot, "jacobian_dot_qd", backend="cuda", dtype=dtype, frame=frame)
    close(Jd(q, qd), rd.jacobian_dot_qd(robot, q, qd, frame=frame))
    with pytest.raises(rd.InputError, match=r"takes \(q, qd\)"):
        Jd(q)
    with pytest.raises(rd.InputError, match="frame and point are for the kinds"):
        rd.compile(robot, "inverse_dynamics", backend="cuda", frame=frame)


def test_rows_layout_indexes_states_as_rows():
    """With rows=True state i is row i of a C-ordered (count, size) array, the output too."""
    robot, m, params = _planar3r_model()
    source = cuda_code.kernel_source(m, "k", per_state=("q", "qd", "qdd"), rows=True)
    assert "q[i*3 + 0]" in source and "qdd[i*3 + 2]" in source and "out[i*3 + 2] = " in source
    assert "count + i]" not in source and "shared.params[0]" in source


@needs_compiler
def test_cuda_model_launches_its_parameter_block(cuda_on_host):
    """soa and the checked call through the kernel's parameter block (count, device addresses, the by-value
    struct, out) equal robodyn's inverse dynamics; the struct is rebuilt when gravity or parameters change (a
    stale struct would give the old robot's torques) and kept when they do not; out= and the arrays' layout are
    checked before anything is launched."""
    robot = rd.load("planar3r")
    f = rd.compile(robot, "inverse_dynamics", backend="cuda")
    q, qd, qdd = np.random.default_rng(2).uniform(-1, 1, (3, 5, 3))
    cols = [_FakeCupy.asarray(a.T) for a in (q, qd, qdd)]
    g, p = np.array(robot.gravity, float), np.asarray(f.nominal_parameters, float)
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    np.testing.assert_allclose(f.soa(*cols, g, p).T, tau, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(f(q, qd, qdd), tau, rtol=1e-13, atol=1e-13)
    # NumPy arrays, copied to the device by the call: the copies are held until the launch
    np.testing.assert_allclose(f.soa(*(np.ascontiguousarray(a.T) for a in (q, qd, qdd)), g, p).T, tau, rtol=1e-13,
                               atol=1e-13)
    struct = f._struct[1]
    f.soa(*cols, g.copy(), p.copy())
    assert f._struct[1] is struct  # equal values: the same struct, not copied again into the block
    other = rd.inverse_dynamics(robot.replace(gravity=2 * g), q, qd, qdd)
    np.testing.assert_allclose(f.soa(*cols, 2 * g, p).T, other, rtol=1e-13, atol=1e-13)
    # Γ is linear in the parameters at fixed gravity
    np.testing.assert_allclose(f.soa(*cols, 2 * g, 2 * p).T, 2 * other, rtol=1e-13, atol=1e-13)
    out = _FakeCupy.empty((3, 5), np.float64)
    assert f.soa(*cols, g, p, out=out) is out
    np.testing.assert_allclose(out.T, tau, rtol=1e-13, atol=1e-13)
    out[...] = 0.0
    for bad in (np.empty((3, 4)).view(_FakeArray), _FakeCupy.empty((3, 5), np.float32),
                _FakeCupy.empty((5, 3)).T):
        with pytest.raises(rd.InputError, match="out must be a C-contiguous CuPy array of shape"):
            f.soa(*cols, g, p, out=bad)
    with pytest.raises(rd.InputError, match=r"C-contiguous arrays of shape \(m, 5\).*not C-contiguous"):
        f.soa(_FakeCupy.asarray(q).T, *cols[1:], g, p, out=out)
    with pytest.raises(rd.InputError, match=r"shape \(m, 5\).*got shape \(3, 4\)"):
        f.soa(*cols[:2], _FakeCupy.asarray(qdd[:4].T), g, p, out=out)
    assert not out.any()  # nothing was launched
    assert f.soa(*(_FakeCupy.empty((3, 0)) for _ in range(3)), g, p).shape == (3, 0)
    assert f.kernel_attributes() == {"registers": 40, "local_bytes": 0}


def test_cuda_model_launch_status(monkeypatch):
    """A launch from a thread without a CUDA context (CUresult 201) makes the context and launches again; any other
    failed launch is an error naming the CUresult."""
    import sys

    from robodyn.symbolic import cuda

    monkeypatch.setitem(sys.modules, "cupy", _FakeCupy)
    answers, driver = [], _FakeCupy.cuda.driver

    def launch(*args):
        status = answers.pop(0)
        if status:
            raise driver.CUDADriverError(status)

    monkeypatch.setattr(driver, "launchKernel", launch)
    f = rd.compile(rd.load("planar3r"), "inverse_dynamics", backend="cuda")
    q = _FakeCupy.empty((3, 5))
    g, p = np.array(f.robot.gravity, float), np.asarray(f.nominal_parameters, float)
    answers[:] = [cuda.CUDA_ERROR_INVALID_CONTEXT, 0]
    freed = _FakeCupy.cuda.runtime.freed
    f.soa(q, q, q, g, p)
    assert not answers and _FakeCupy.cuda.runtime.freed == freed + 1
    answers[:] = [700]
    with pytest.raises(rd.RobodynError, match=r"CUDA inverse_dynamics: the kernel launch failed \(CUresult 700\)"):
        f.soa(q, q, q, g, p)


def test_cuda_model_jax_wires_the_derivative_with_the_same_parameters(monkeypatch):
    """f.jax() of the inverse dynamics builds the derivative's two kernels with the same gravity and the given
    parameters matched by name (a wrong match would give the gradient of another robot); the other kinds have no
    derivative kernels."""
    import sys

    from robodyn.symbolic import cuda, cuda_jax

    monkeypatch.setitem(sys.modules, "cupy", _FakeCupy)
    made = []
    monkeypatch.setattr(cuda, "cuda_launch", lambda: 1)  # f.jax() hands the driver's launch to XLA
    monkeypatch.setattr(cuda_jax, "register", lambda platform: None)
    monkeypatch.setattr(cuda_jax, "add_kernel", lambda function, launch: 0)
    monkeypatch.setattr(cuda_jax, "jax_function", lambda model, index, gravity, params: made.append(
        (model.kind, model.parameter_names, gravity, params)) or model.kind)
    monkeypatch.setattr(cuda_jax, "with_derivative", lambda f, d, m: (f, d, m))
    robot = rd.load("planar3r")
    f = rd.compile(robot, "inverse_dynamics", backend="cuda")
    P = np.arange(1.0, len(f.parameter_names) + 1)
    g0 = np.array([0.0, -1.0, -9.0])
    assert f.jax(gravity=g0, params=P) == ("inverse_dynamics", "inverse_dynamics_derivatives", "inertia_matrix")
    by_name = dict(zip(f.parameter_names, P))
    for kind, names, gravity, params in made[1:]:
        assert list(params) == [by_name[k] for k in names] and gravity is g0
    assert set(made[2][1]) < set(f.parameter_names)  # the inertia matrix has no friction parameters
    # a parameter the inverse dynamics drops (no effect on Γ) but the inertia matrix's expressions keep: its
    # robot-file value, where a lookup by name alone failed (KeyError 'MZ6' on a GPU)
    made.clear()
    robot = random_robot(11, nf=7, tree=True, fixed=True)
    f = rd.compile(robot, "inverse_dynamics", backend="cuda")
    f.jax(params=np.asarray(f.nominal_parameters) + 1)
    inertia = made[2]
    assert "MZ6" in inertia[1] and "MZ6" not in f.parameter_names
    by_name = dict(zip(f.parameter_names, np.asarray(f.nominal_parameters) + 1))
    nominal = dict(zip(*kernel_model(robot, "inertia_matrix")[1:]))
    assert list(inertia[3]) == [by_name.get(k, nominal[k]) for k in inertia[1]]
    made.clear()
    assert rd.compile(robot, "gravity", backend="cuda").jax() == "gravity_torques" and len(made) == 1
