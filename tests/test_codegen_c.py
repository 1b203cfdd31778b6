"""Generated C, compiled on demand with cffi: agreement with the numeric algorithms, cache, errors."""

import numpy as np
import pytest

import robodyn as rd
from robodyn.symbolic import CompilerNotFoundError
from robodyn.native import build
from tests.support.checks import assert_accelerations_close
from tests.support.kernels import has_compiler, needs_compiler
from tests.support.random_robots import random_robot, random_state


def close(a, b, tol=1e-12):
    np.testing.assert_allclose(a, b, rtol=0, atol=tol * max(1.0, np.abs(b).max()))


@needs_compiler
@pytest.mark.parametrize("name", rd.list_robots())
def test_compiled_inverse_dynamics_builtin(name):
    robot = rd.load(name)
    f = rd.compile(robot, "inverse_dynamics")
    q, qd, qdd = random_state(robot, 5, (7,))
    close(f(q, qd, qdd), rd.inverse_dynamics(robot, q, qd, qdd))
    close(f(q[0], qd[0], qdd[0]), rd.inverse_dynamics(robot, q[0], qd[0], qdd[0]))


@needs_compiler
@pytest.mark.parametrize("seed", range(2))
def test_compiled_models_random_robots(seed):
    robot = random_robot(seed, tree=seed % 2 == 0, fixed=True)
    q, qd, qdd = random_state(robot, seed, (2, 3))
    rng = np.random.default_rng(seed)
    w, g = rng.normal(size=(2, 3, robot.nf, 6)), rng.normal(size=3)
    close(rd.compile(robot, "idm")(q, qd, qdd, wrenches=w, gravity=g),
          rd.inverse_dynamics(robot, q, qd, qdd, wrenches=w, gravity=g))
    close(rd.compile(robot, "bias")(q, qd, wrenches=w), rd.bias_torques(robot, q, qd, wrenches=w))
    close(rd.compile(robot, "gravity")(q, gravity=g), rd.gravity_torques(robot, q, gravity=g))
    A = rd.compile(robot, "inertia_matrix")(q)
    assert A.shape == (2, 3, robot.n, robot.n)
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    close(A @ qdd[..., None], (tau - rd.bias_torques(robot, q, qd))[..., None])
    assert_accelerations_close(robot, q, qd, tau, rd.compile(robot, "ddm")(q, qd, tau), qdd)


@needs_compiler
def test_numpy_backend_and_float32():
    robot = rd.load("puma560")
    q, qd, qdd = (a.astype(np.float32) for a in random_state(robot, 1, (3,)))
    out = rd.compile(robot, "idm", backend="numpy")(q, qd, qdd)
    assert out.dtype == np.float32 and out.shape == (3, 6)
    assert rd.compile(robot, "idm")(q, qd, qdd).dtype == np.float32


@needs_compiler
def test_argument_errors():
    f = rd.compile(rd.load("planar2r"), "idm")
    with pytest.raises(rd.InputError, match=r"shape \(\.\.\., 2\)"):
        f(np.zeros(3), np.zeros(2), np.zeros(2))
    with pytest.raises(rd.InputError, match="NaN"):
        f(np.array([np.nan, 0]), np.zeros(2), np.zeros(2))
    with pytest.raises(rd.InputError, match=r"called as f\(q, qd, qdd, wrenches=None, gravity=None, \*, out=None\)"):
        f(np.zeros(2), np.zeros(2))
    with pytest.raises(rd.InputError, match="gravity"):
        rd.compile(rd.load("planar2r"), "inm")(np.zeros(2), gravity=[0, 0, -9.81])


@needs_compiler
def test_cache_reuses_library(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    robot = rd.load("planar3r")
    rd.compile(robot, "idm")
    libs = sorted(p.name for p in tmp_path.iterdir())
    assert len(libs) == 3 and [p.rsplit(".", 1)[1] for p in libs] == ["lock", "sha256", "so"]  # lock, sidecar, library
    rd.compile(robot, "idm")
    assert sorted(p.name for p in tmp_path.iterdir()) == libs


def test_missing_compiler_message(monkeypatch, tmp_path):
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setattr(build.shutil, "which", lambda name: None)
    with pytest.raises(CompilerNotFoundError, match="no C compiler found.*backend='numpy'"):
        rd.compile(rd.load("planar2r"), "idm")
    assert list(tmp_path.iterdir()) == []


def test_c_source_has_plain_and_batched_functions():
    m = rd.customized_model(rd.load("planar2r"), "idm")
    src = m.c_source("idm")
    assert "int idm(const double *q, const double *qd, const double *qdd, double *out)" in src
    assert ("long idm_batch(long count, const double *q, long q_stride, const double *qd, long qd_stride, "
            "const double *qdd, long qdd_stride, double *out)") in src


@needs_compiler
def test_trigonometry_over_the_whole_range():
    """The inlined sin/cos (argument reduction + fdlibm kernels, libm beyond 1e5) match NumPy's."""
    robot = rd.load("puma560")
    k = np.arange(-40, 41)
    angles = np.concatenate([k * np.pi / 2, np.nextafter(k * np.pi / 2, np.inf), [1e5 - 1, 1e5, 3e5, -1e7, 12345.678]])
    q = np.resize(angles, (len(angles), robot.n)) + np.arange(robot.n) * 0.0
    qd = np.ones_like(q)
    f = rd.compile(robot, "gravity")
    close(f(q), rd.gravity_torques(robot, q))
    close(rd.compile(robot, "idm")(q, qd, qd), rd.inverse_dynamics(robot, q, qd, qd))


NUMERIC = {
    "inverse_dynamics": lambda r, q, qd, qdd, tau: (rd.inverse_dynamics(r, q, qd, qdd), (q, qd, qdd)),
    "bias": lambda r, q, qd, qdd, tau: (rd.bias_torques(r, q, qd), (q, qd)),
    "gravity": lambda r, q, qd, qdd, tau: (rd.gravity_torques(r, q), (q,)),
    "inertia_matrix": lambda r, q, qd, qdd, tau: (rd.inertia_matrix(r, q), (q,)),
    "forward_dynamics": lambda r, q, qd, qdd, tau: (rd.forward_dynamics(r, q, qd, tau), (q, qd, tau)),
}


@needs_compiler
@pytest.mark.parametrize("name", ["pr", "planar3r"])
@pytest.mark.parametrize("parameters", ["standard", "base"])
def test_every_kind_compiled_equals_numeric(name, parameters):
    """Every model kind, compiled C with standard or base parameters, equals the numeric function called
    with the same arguments (batched and single sample).  Small robots (a prismatic joint; a fixed tip
    frame) keep gcc -O3 fast; the generated code of every built-in robot is checked in NumPy form
    (tests/test_symbolic_models.py) and its compiled inverse dynamics above."""
    robot = rd.load(name)
    q, qd, qdd = random_state(robot, 7, (3,))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    for kind, numeric in NUMERIC.items():
        f = rd.compile(robot, kind, parameters=parameters)
        want, args = numeric(robot, q, qd, qdd, tau)
        if kind == "forward_dynamics":
            assert_accelerations_close(robot, q, qd, tau, f(*args), want)
            assert_accelerations_close(robot, q[0], qd[0], tau[0], f(*(a[0] for a in args)), want[0])
        else:
            close(f(*args), want)
            close(f(*(a[0] for a in args)), want[0])
    f = rd.compile(robot, "regressor", parameters=parameters)
    want = (rd.regressor(robot, q, qd, qdd) if parameters == "standard"
            else rd.base_parameters(robot, friction=False).regressor(q, qd, qdd))
    close(f(q, qd, qdd), want)


@needs_compiler
def test_compiled_signature_is_the_numeric_one():
    import inspect

    robot = rd.load("planar2r")
    for kind, numeric in [("idm", rd.inverse_dynamics), ("ccg", rd.bias_torques), ("gra", rd.gravity_torques),
                          ("inm", rd.inertia_matrix), ("ddm", rd.forward_dynamics)]:
        # a compiled model is the robot as compiled, its friction included: method=, friction= and trig= (the
        # generic kernels' trigonometry) are choices of the numeric functions only (compile
        # rd.with_joint_parameters(...) or a frictionless copy instead)
        want = [p for p in inspect.signature(numeric).parameters if p not in ("robot", "method", "friction", "trig")]
        assert list(inspect.signature(rd.compile(robot, kind, parameters="base")).parameters) == want
    f = rd.compile(robot, "idm", parameters="base")
    q, qd, qdd = random_state(robot, 1, (2,))
    g = np.array([0.0, -3.0, 1.0])
    close(f(q=q, qd=qd, qdd=qdd, gravity=g), rd.inverse_dynamics(robot, q, qd, qdd, gravity=g))
    with pytest.raises(rd.InputError, match=r"called as f\(q, qd, qdd, wrenches=None, gravity=None, \*, out=None\)"):
        f(q, qd, qdd, torque=1)


@needs_compiler
def test_concurrent_compilation_into_one_cache(tmp_path, monkeypatch):
    """Threads compiling the same model into an empty cache all succeed and leave one library (each
    builds under the model's lock, into its own temporary folder, and renames the result into place)."""
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    robot = rd.load("planar3r")
    q, qd, qdd = random_state(robot, 0, (2,))
    with ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda _: rd.compile(robot, "idm")(q, qd, qdd), range(4)))
    for out in outs:
        close(out, rd.inverse_dynamics(robot, q, qd, qdd))
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".lock", ".sha256", ".so"]


@needs_compiler
def test_parameters_as_input_and_header(tmp_path, monkeypatch):
    """One compiled function serves other parameter values: C with ``params`` equals rd.inverse_dynamics
    of the robot with those values; a program that includes the header compiles under -Werror."""
    import subprocess

    from robodyn.symbolic.codegen import c_code

    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path / "cache"))
    robot = rd.load("planar3r")
    m = c_code.with_parameter_input(rd.customized_model(robot, "idm", symbolic_inertia=True))
    names = c_code.parameter_names(rd.customized_model(robot, "idm", symbolic_inertia=True))
    nominal = np.array([float(v) for _, v in sorted(
        rd.customized_model(robot, "idm", symbolic_inertia=True).constants.items(), key=lambda kv: str(kv[0]))
        if str(_) in names])
    assert [str(s) for _, s in m.arguments[-1].entries] == names and "M3" in names
    ffi, lib, _ = build.compile_library(c_code.source(m, "p3"), c_code.declarations(m, "p3"))
    q, qd, qdd = random_state(robot, 1, (5,))
    # other physical values: each link's XX..M scaled by one factor (a scaled rigid body: the whole row, also
    # the parameters without effect that the model dropped), Ia and friction by factors of their own
    import dataclasses
    import re

    link = 0.7 + 0.4 * np.arange(robot.nf)
    scaled = dataclasses.replace(robot, params=robot.params * link[:, None], Ia=robot.Ia * 1.1, Fc=robot.Fc * 1.2,
                                 Fv=robot.Fv * 1.3, Foff=robot.Foff * 1.4)
    factor = {"IA": 1.1, "FS": 1.2, "FV": 1.3, "FO": 1.4}
    split = [re.fullmatch(r"([A-Z]+)(\d+)", n).groups() for n in names]
    scale = np.array([link[int(j) - 1] if p in rd.PARAMETER_NAMES else factor[p] for p, j in split])
    for values, reference in ((nominal, robot), (nominal * scale, scaled)):
        out = np.empty((5, robot.n))
        p = np.ascontiguousarray(values)
        args = []
        for a in (q, qd, qdd):
            args += [ffi.from_buffer("double[]", np.ascontiguousarray(a)), robot.n]
        assert lib.p3_batch(5, *args, ffi.from_buffer("double[]", p), 0, ffi.from_buffer("double[]", out)) == 0
        expected = rd.inverse_dynamics(reference, q, qd, qdd)
        np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())
    (tmp_path / "p3.c").write_text(c_code.source(m, "p3"))
    (tmp_path / "p3.h").write_text(c_code.header(m, "p3"))
    (tmp_path / "main.c").write_text('#include "p3.h"\nint main(void) {\n    double z[3] = {0, 0, 0}, p[%d] = {0}, out[3];\n'
                                     '    p3(z, z, z, p, out);\n    return (int)out[0];\n}\n' % len(names))
    proc = subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "main.c", "p3.c", "-lm", "-o", "main"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert subprocess.run(["./main"], cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_compile_with_parameters_as_input(backend, tmp_path, monkeypatch):
    """rd.compile(..., parameters_input=True): params=None is the robot file; other params equal
    rd.inverse_dynamics / rd.inertia_matrix of a robot with those values, batched over params too."""
    import dataclasses
    import re

    if backend == "c" and not has_compiler():
        pytest.skip("no C compiler")
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    robot = rd.load("rx90")
    f = rd.compile(robot, "idm", backend=backend, parameters_input=True)
    names = f.parameter_names
    assert len(names) == len(f.nominal_parameters) and "ZZ1" in names and "FV1" in names
    link = 0.7 + 0.1 * np.arange(robot.nf)
    factor = {"IA": 1.1, "FS": 1.2, "FV": 1.3, "FO": 1.4}
    split = [re.fullmatch(r"([A-Z]+)(\d+)", n).groups() for n in names]
    scale = np.array([link[int(j) - 1] if p in rd.PARAMETER_NAMES else factor[p] for p, j in split])
    scaled = dataclasses.replace(robot, params=robot.params * link[:, None], Ia=robot.Ia * 1.1, Fc=robot.Fc * 1.2,
                                 Fv=robot.Fv * 1.3, Foff=robot.Foff * 1.4)
    q, qd, qdd = random_state(robot, 3, (2,))
    for params, reference in ((None, robot), (f.nominal_parameters * scale, scaled)):
        expected = rd.inverse_dynamics(reference, q, qd, qdd)
        np.testing.assert_allclose(f(q, qd, qdd, params=params), expected, rtol=1e-11, atol=1e-11)
        np.testing.assert_allclose(f(q[0], qd[0], qdd[0], params=params), expected[0], rtol=1e-11, atol=1e-11)
    both = np.stack([f.nominal_parameters, f.nominal_parameters * scale])
    np.testing.assert_allclose(f(q, qd, qdd, params=both),
                               [rd.inverse_dynamics(robot, q[0], qd[0], qdd[0]),
                                rd.inverse_dynamics(scaled, q[1], qd[1], qdd[1])], rtol=1e-11, atol=1e-11)
    with pytest.raises(rd.InputError, match="argument 'params' has shape"):
        f(q, qd, qdd, params=np.ones(3))
    with pytest.raises(rd.InputError, match="regressor does not depend"):
        rd.compile(robot, "regressor", backend=backend, parameters_input=True)
