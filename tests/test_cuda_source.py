"""The CUDA kernels of the customized models, tested without a GPU: the kernel text compiled as C through its host
shim gives rd's numbers, in float64 and float32; the GPU itself is exercised by benchmarks/bench_gpu.py."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from robodyn.symbolic.codegen import cuda_code
from robodyn.native.build import compile_library
from robodyn.symbolic.codegen.c_code import parameter_names, with_parameter_input
from robodyn.symbolic.models import customized_model


def shim(model, dtype):
    source, decl = cuda_code.host_shim_source(model, "rd_kernel", dtype)
    ffi, lib, _ = compile_library(source, decl)
    return ffi, lib.rd_kernel_host


def run(model, dtype, per_state, shared):
    """per_state: arrays (count, m); shared: arrays (m,). Returns (count, output size)."""
    ffi, fn = shim(model, dtype)
    ctype = "double[]" if dtype == "float64" else "float[]"
    count = per_state[0].shape[0]
    keep, args = [], []
    for a in per_state:
        keep.append(np.ascontiguousarray(a.T, dtype=dtype))
        args += [ffi.from_buffer(ctype, keep[-1]), 1]
    for a in shared:
        keep.append(np.ascontiguousarray(a, dtype=dtype))
        args += [ffi.from_buffer(ctype, keep[-1]), 0]
    out = np.empty((cuda_code.output_size(model), count), dtype=dtype)
    fn(count, *args, ffi.from_buffer(ctype, out))
    return out.T


KINDS = {
    "inverse_dynamics": lambda r, q, qd, qdd: rd.inverse_dynamics(r, q, qd, qdd),
    "gravity": lambda r, q, qd, qdd: rd.gravity_torques(r, q),
    "inertia_matrix": lambda r, q, qd, qdd: rd.inertia_matrix(r, q).reshape(len(q), -1),
    "forward_dynamics": lambda r, q, qd, qdd: rd.forward_dynamics(r, q, qd, rd.inverse_dynamics(r, q, qd, qdd)),
}
JOINT_ARGS = {"inverse_dynamics": 3, "gravity": 1, "inertia_matrix": 1, "forward_dynamics": 3, "regressor": 3}


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
