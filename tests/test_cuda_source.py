"""The CUDA kernels of the customized models, tested without a GPU: the kernel text compiled as C through its host
shim gives rd's numbers, in float64 and float32; the GPU itself is exercised by benchmarks/bench_gpu.py."""

from __future__ import annotations

import types

import numpy as np
import pytest

import robodyn as rd
from robodyn.symbolic.codegen import cuda_code
from robodyn.native.build import compile_library
from robodyn.symbolic.codegen.c_code import parameter_names, with_parameter_input
from robodyn.symbolic.models import customized_model
from tests.support.kernels import needs_compiler


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


class HostRawKernel:
    """``cupy.RawKernel`` on the CPU: the kernel text compiled as C (``RD_HOST_SHIM``) with a loop over the states;
    the by-value struct arrives as a pointer and is passed on by value. With :func:`host_cupy` it runs
    :class:`robodyn.symbolic.cuda.CudaModel`'s own Python (layouts, struct, flags, checks) without a GPU."""

    def __init__(self, source, name, options=()):
        import re

        params = [p.strip() for p in re.search(r"RD_KERNEL void \w+\((.*?)\) \{", source).group(1).split(",")]
        names = [p.split()[-1].lstrip("*") for p in params]
        real = "double" if "typedef double real;" in source else "float"
        host = [p.replace("const rd_shared shared", "const void *shared").replace("real", real).replace(
            "__restrict__ ", "") for p in params]
        call = ["*(const rd_shared *)shared" if nm == "shared" else nm for nm in names]
        text = ("#define RD_HOST_SHIM\n" + source + f"void host({', '.join(host)}) {{ blockDim.x = 1; threadIdx.x = 0; "
                f"for (long i = 0; i < count; ++i) {{ blockIdx.x = (unsigned int)i; {name}({', '.join(call)}); }} }}\n")
        self.ffi, lib, _ = compile_library(text, f"void host({', '.join(host)});")
        self.host = lib.host

    def __call__(self, grid, block, args):
        ctype = {np.dtype(np.float64): "double[]", np.dtype(np.float32): "float[]", np.dtype(np.int32): "int[]"}
        cargs = []
        for a in args:
            if not isinstance(a, np.ndarray):
                cargs.append(int(a))
            elif a.dtype.names:  # the struct, by its address
                cargs.append(self.ffi.cast("void *", self.ffi.from_buffer(a)))
            else:
                assert a.flags.c_contiguous
                cargs.append(self.ffi.from_buffer(ctype[a.dtype], a))
        self.host(*cargs)


def host_cupy():
    import types

    return types.SimpleNamespace(asarray=np.asarray, ascontiguousarray=np.ascontiguousarray, broadcast_to=np.broadcast_to,
                                 empty=np.empty, full=np.full, all=np.all, isfinite=np.isfinite,
                                 ndarray=type("DeviceArray", (), {}), RawKernel=HostRawKernel)


@pytest.fixture
def cuda_on_host(monkeypatch):
    from robodyn.symbolic import cuda

    monkeypatch.setattr(cuda, "_cupy", host_cupy)


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
@pytest.mark.parametrize("name", ["planar3r", "stanford"])
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


class _FakeCupy:
    """Enough of CuPy for CudaModel's host side on a machine without a GPU: arrays are NumPy arrays and a kernel
    launch records its arguments."""

    ndarray = np.ndarray
    launches = []

    class cuda:  # noqa: N801
        class runtime:  # noqa: N801
            @staticmethod
            def getDeviceCount():
                return 1

    @staticmethod
    def asarray(a, dtype=None):
        return np.asarray(a, dtype=dtype)

    @staticmethod
    def empty(shape, dtype=None):
        return np.empty(shape, dtype=dtype)

    class RawKernel:
        num_regs, local_size_bytes = 40, 0

        def __init__(self, source, name, options=()):
            self.source = source

        def __call__(self, grid, block, args):
            _FakeCupy.launches.append(args)


def test_cuda_model_host_side_reuses_the_struct_only_for_equal_values(monkeypatch):
    """The by-value struct is rebuilt when gravity or parameters change (a stale struct would silently give the
    old robot's torques), kept when they do not, and out= is checked before anything is launched."""
    import sys

    monkeypatch.setitem(sys.modules, "cupy", _FakeCupy)
    f = rd.compile(rd.load("planar3r"), "inverse_dynamics", backend="cuda")
    q = np.zeros((3, 5))
    g, p = np.array(f.robot.gravity, float), np.asarray(f.nominal_parameters, float)
    f.soa(q, q, q, g, p)
    f.soa(q, q, q, g.copy(), p.copy())
    first, second = _FakeCupy.launches[-2][4], _FakeCupy.launches[-1][4]
    assert second is first and np.array_equal(first["gravity"][0], g)
    f.soa(q, q, q, 2 * g, p)
    third = _FakeCupy.launches[-1][4]
    assert np.array_equal(third["gravity"][0], 2 * g) and np.array_equal(third["params"][0], p)
    f.soa(q, q, q, 2 * g, p + 1)
    assert np.array_equal(_FakeCupy.launches[-1][4]["params"][0], p + 1)
    out = np.empty((3, 5))
    assert f.soa(q, q, q, g, p, out=out) is out and _FakeCupy.launches[-1][5] is out
    count = len(_FakeCupy.launches)
    for bad in (np.empty((3, 4)), np.empty((3, 5), np.float32), np.empty((5, 3)).T):
        with pytest.raises(rd.InputError, match="out must be a C-contiguous CuPy array of shape"):
            f.soa(q, q, q, g, p, out=bad)
    assert len(_FakeCupy.launches) == count
    assert f.kernel_attributes() == {"registers": 40, "local_bytes": 0}


def test_cuda_model_jax_wires_the_derivative_with_the_same_parameters(monkeypatch):
    """f.jax() of the inverse dynamics builds the derivative's two kernels with the same gravity and the given
    parameters matched by name (a wrong match would give the gradient of another robot); the other kinds have no
    derivative kernels."""
    import sys

    from robodyn.symbolic import cuda_jax

    monkeypatch.setitem(sys.modules, "cupy", _FakeCupy)
    made = []
    monkeypatch.setattr(cuda_jax, "cuda_launch", lambda: 1)
    monkeypatch.setattr(cuda_jax, "register", lambda platform: None)
    monkeypatch.setattr(cuda_jax, "add_kernel", lambda function, launch: 0)
    monkeypatch.setattr(cuda_jax, "jax_function", lambda model, index, gravity, params: made.append(
        (model.kind, model.parameter_names, gravity, params)) or model.kind)
    monkeypatch.setattr(cuda_jax, "with_derivative", lambda f, d, m: (f, d, m))
    robot = rd.load("planar3r")
    f = rd.compile(robot, "inverse_dynamics", backend="cuda")
    P = np.arange(1.0, len(f.parameter_names) + 1)
    g0 = np.array([0.0, -1.0, -9.0])
    monkeypatch.setattr(_FakeCupy.RawKernel, "kernel", types.SimpleNamespace(ptr=7), raising=False)
    assert f.jax(gravity=g0, params=P) == ("inverse_dynamics", "inverse_dynamics_derivatives", "inertia_matrix")
    by_name = dict(zip(f.parameter_names, P))
    for kind, names, gravity, params in made[1:]:
        assert list(params) == [by_name[k] for k in names] and gravity is g0
    assert set(made[2][1]) < set(f.parameter_names)  # the inertia matrix has no friction parameters
    made.clear()
    assert rd.compile(robot, "gravity", backend="cuda").jax() == "gravity_torques" and len(made) == 1
