"""rd.compile for the derivatives: the forward-mode derivative of the customized model's program, emitted as C
(and NumPy), against rd.inverse_dynamics_derivatives / rd.forward_dynamics_derivatives (the dual-number
recursion, an independent path)."""

import numpy as np
import pytest

import robodyn as rd
from robodyn.symbolic.codegen import numpy_code
from robodyn.symbolic.derivative_model import derivative_model
from tests.support.kernels import needs_compiler
from tests.support.random_robots import random_robot, random_state

KINDS = ("inverse_dynamics_derivatives", "forward_dynamics_derivatives")


def _rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", KINDS)
def test_derivative_models_equal_the_analytic_derivatives(seed, kind):
    """Random serial and tree robots (revolute, prismatic, fixed frames, rotor inertia, Coulomb and viscous friction)
    through the generated NumPy code of the derivative model: 1e-12 relative."""
    robot = random_robot(seed, tree=seed % 2 == 1, fixed=True)
    robot = robot.replace(Fst=np.zeros(robot.nf))
    f = numpy_code.function(derivative_model(robot, kind))
    q, qd, x = random_state(robot, seed, (4,))
    ref = getattr(rd, kind)(robot, q, qd, x)
    out = f(q, qd, x)
    assert out.shape == (4, len(ref) * robot.n, robot.n)
    assert _rel(out, np.concatenate(list(ref), axis=-2)) < 1e-12


@pytest.mark.slow
@needs_compiler
@pytest.mark.parametrize("kind", KINDS)
def test_compiled_c_derivatives(kind):
    """rd.compile(robot, kind): the record of the numeric function, batched, one state, wrenches and another
    gravity (the model variants), float32 in and out, arguments checked."""
    robot = rd.load("puma560")
    f = rd.compile(robot, kind)
    q, qd, x = np.random.default_rng(1).uniform(-1, 1, (3, 20, robot.n))
    ref = getattr(rd, kind)(robot, q, qd, x)
    got = f(q, qd, x)
    assert type(got) is type(ref)
    for a, b in zip(got, ref):
        assert a.shape == b.shape and _rel(a, b) < 1e-12
    one = f(q[5], qd[5], x[5])
    for a, b in zip(one, got):
        np.testing.assert_allclose(a, b[5], rtol=1e-14, atol=1e-14 * np.abs(b).max())
    W, g = np.random.default_rng(2).normal(size=(robot.nf, 6)), np.array([0.5, -1.0, -9.0])
    ref = getattr(rd, kind)(robot, q, qd, x, wrenches=W, gravity=g)
    for a, b in zip(f(q, qd, x, wrenches=W, gravity=g), ref):
        assert _rel(a, b) < 1e-12
    assert all(a.dtype == np.float32 for a in f(*(v[0].astype(np.float32) for v in (q, qd, x))))
    with pytest.raises(rd.InputError, match="'qd'"):
        f(q, qd[:, :3], x)
    assert f.operation_count()["mul"] > 0


@pytest.mark.parametrize("seed", range(6))
def test_kinematics_models_equal_the_numeric_kinematics(seed):
    """J of a frame (the q̈-derivative of its traced acceleration) and J̇q̇ (that acceleration at q̈ = 0) on random
    serial and tree robots, every frame, with and without a point: 1e-13 absolute (unit-scale numbers)."""
    from robodyn.symbolic.kinematics_model import kinematics_model

    robot = random_robot(seed, tree=seed % 2 == 1, fixed=True)
    q, qd, _ = random_state(robot, seed, (3,))
    point = np.random.default_rng(seed).normal(size=3)
    for frame in range(1, robot.nf + 1):
        for p in (None, point):
            J = numpy_code.function(kinematics_model(robot, "jacobian", frame, p))(q)
            a = numpy_code.function(kinematics_model(robot, "jacobian_dot_qd", frame, p))(q, qd)
            np.testing.assert_allclose(J, rd.jacobian(robot, q, frame=frame, point=p), rtol=0, atol=1e-13)
            np.testing.assert_allclose(a, rd.jacobian_dot_qd(robot, q, qd, frame=frame, point=p), rtol=0,
                                       atol=1e-13 * (1 + np.abs(a).max()))


@needs_compiler
def test_compiled_c_kinematics():
    robot = rd.load("panda")
    q, qd = np.random.default_rng(3).uniform(-1, 1, (2, 10, robot.n))
    J = rd.compile(robot, "jacobian", frame=5, point=[0.1, 0.0, 0.2])
    Jd = rd.compile(robot, "jacobian_dot_qd")
    np.testing.assert_allclose(J(q), rd.jacobian(robot, q, frame=5, point=[0.1, 0.0, 0.2]), rtol=0, atol=1e-14)
    np.testing.assert_allclose(J(q[4]), rd.jacobian(robot, q[4], frame=5, point=[0.1, 0.0, 0.2]), rtol=0, atol=1e-14)
    np.testing.assert_allclose(Jd(q, qd), rd.jacobian_dot_qd(robot, q, qd), rtol=0, atol=1e-13)
    assert Jd(q[0].astype(np.float32), qd[0].astype(np.float32)).dtype == np.float32


def test_compile_kinematics_options_are_checked():
    robot = rd.load("planar2r")
    with pytest.raises(rd.InputError, match="frame and point"):
        rd.compile(robot, "inverse_dynamics", backend="numpy", frame=1)
    with pytest.raises(rd.InputError, match="point"):
        rd.compile(robot, "jacobian", backend="numpy", point=[1.0, 2.0])
    with pytest.raises(rd.InputError, match="frame and point"):
        rd.compile(robot, "inverse_dynamics", backend="jax", frame=1)
    with pytest.raises(rd.InputError, match="frame"):
        rd.compile(robot, "jacobian", backend="numpy", frame=9)


@pytest.mark.parametrize("backend", [pytest.param("c", marks=[needs_compiler, pytest.mark.slow]), "numpy"])
@pytest.mark.parametrize("kind", KINDS)
def test_derivatives_with_parameters_as_input(kind, backend):
    """parameters_input=True: ``params`` None is the robot file; the parameters of a robot whose links, rotors and
    friction are scaled (each link by its own factor) give that robot's analytic derivatives (1e-12), batched over
    the states and over params, one state through the C entry, with wrenches."""
    import re

    robot = rd.load("rx90")
    f = rd.compile(robot, kind, backend=backend, parameters_input=True)
    assert list(f.__signature__.parameters)[-2:] == ["params", "out"]
    link = 0.7 + 0.1 * np.arange(robot.nf)
    factor = {"IA": 1.1, "FS": 1.2, "FV": 1.3, "FO": 1.4}
    split = [re.fullmatch(r"([A-Z]+)(\d+)", n).groups() for n in f.parameter_names]
    scale = np.array([link[int(j) - 1] if p in rd.PARAMETER_NAMES else factor[p] for p, j in split])
    scaled = robot.replace(params=robot.params * link[:, None], Ia=robot.Ia * 1.1, Fc=robot.Fc * 1.2,
                           Fv=robot.Fv * 1.3, Foff=robot.Foff * 1.4)
    q, qd, x = random_state(robot, 7, (3,))
    W = np.random.default_rng(3).normal(size=(robot.nf, 6))
    for params, reference in ((None, robot), (f.nominal_parameters * scale, scaled)):
        want = getattr(rd, kind)(reference, q, qd, x, wrenches=W)
        for got, ref in zip(f(q, qd, x, wrenches=W, params=params), want):
            assert _rel(got, ref) < 1e-12
        want = getattr(rd, kind)(reference, q[1], qd[1], x[1])
        for got, ref in zip(f(q[1], qd[1], x[1], params=params), want):
            assert _rel(got, ref) < 1e-12
    both = np.stack([f.nominal_parameters, f.nominal_parameters * scale, f.nominal_parameters])
    for got, a, b in zip(f(q, qd, x, params=both), getattr(rd, kind)(robot, q, qd, x),
                         getattr(rd, kind)(scaled, q, qd, x)):
        assert _rel(got[[0, 2]], a[[0, 2]]) < 1e-12 and _rel(got[1], b[1]) < 1e-12
    with pytest.raises(rd.InputError, match="argument 'params' has shape"):
        f(q, qd, x, params=np.ones(3))


@pytest.mark.parametrize("kind", KINDS)
def test_jax_derivatives(kind):
    """backend='jax': the derivative model on jax.numpy, jitted, the numeric function's record (1e-12)."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    robot = rd.load("planar3r")
    f = rd.compile(robot, kind, backend="jax")
    q, qd, x = np.random.default_rng(4).uniform(-1, 1, (3, 5, robot.n))
    got = jax.jit(f)(q, qd, x)
    ref = getattr(rd, kind)(robot, q, qd, x)
    assert type(got) is type(ref)
    for a, b in zip(got, ref):
        assert _rel(np.asarray(a), b) < 1e-12
