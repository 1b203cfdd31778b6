"""rd.compile(robot, kind, backend="jax"): the customized model on jax.numpy equals robodyn's NumPy functions on
random robots (trees, prismatic joints, fixed frames), batched and one state, under jax.jit and jax.vmap; its
parameters are an input; its gradient equals the analytic derivatives. Each runs with the results assembled as
on the CPU and as on a GPU (robodyn.spatial: entries behind an optimization barrier, then stacked)."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402

import robodyn as rd  # noqa: E402
from tests.support.random_robots import random_robot, random_state  # noqa: E402

ROBOTS = [random_robot(3, nf=5), random_robot(11, nf=6, tree=True, fixed=True)]


@pytest.fixture(params=["cpu", "gpu"])
def assembly(request, monkeypatch):
    """The results assembled as on the CPU or as on a GPU: jax.default_backend() is made to answer each."""
    monkeypatch.setattr(jax, "default_backend", lambda: request.param)
    return request.param


def reference(robot, kind, q, qd, qdd):
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    want = {
        "inverse_dynamics": lambda: tau,
        "bias_torques": lambda: rd.bias_torques(robot, q, qd),
        "gravity_torques": lambda: rd.gravity_torques(robot, q),
        "inertia_matrix": lambda: rd.inertia_matrix(robot, q),
        "forward_dynamics": lambda: qdd,
        "regressor": lambda: rd.regressor(robot, q, qd, qdd),
    }[kind]()
    args = {"inverse_dynamics": (q, qd, qdd), "bias_torques": (q, qd), "gravity_torques": (q,),
            "inertia_matrix": (q,), "forward_dynamics": (q, qd, tau), "regressor": (q, qd, qdd)}[kind]
    return want, args


@pytest.mark.parametrize("kind", ["inverse_dynamics", "bias_torques", "gravity_torques", "inertia_matrix",
                                  "forward_dynamics", "regressor"])
@pytest.mark.parametrize("index", range(len(ROBOTS)))
def test_jax_backend_equals_numpy(index, kind, assembly):
    robot = ROBOTS[index]
    f = rd.compile(robot, kind, backend="jax")
    q, qd, qdd = random_state(robot, index, batch=(4, 3))
    want, args = reference(robot, kind, q, qd, qdd)
    got = np.asarray(jax.jit(f)(*args)).reshape(want.shape)
    assert got.dtype == np.float64
    barrier = assembly == "gpu" and kind != "forward_dynamics"  # robodyn.spatial.jax_vector; JaxModel's comment
    assert ("optimization_barrier" in str(jax.make_jaxpr(f)(*args))) == barrier
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
    one = np.asarray(f(*(a[1, 2] for a in args))).reshape(want[1, 2].shape)
    np.testing.assert_allclose(one, want[1, 2], rtol=1e-12, atol=1e-12 * np.abs(want).max())
    vm = np.asarray(jax.vmap(f)(*(a.reshape(-1, robot.n) for a in args))).reshape(want.shape)
    np.testing.assert_allclose(vm, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


def test_parameters_gravity_and_float32():
    robot = ROBOTS[1]
    f = rd.compile(robot, "inverse_dynamics", backend="jax")
    q, qd, qdd = random_state(robot, 5, batch=(16,))
    g = np.array([0.0, 3.0, -9.0])
    got = np.asarray(f(q, qd, qdd, gravity=g, params=1.7 * f.nominal_parameters))
    want = 1.7 * rd.inverse_dynamics(robot, q, qd, qdd, gravity=g)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
    per_state = np.asarray(f(q, qd, qdd, params=np.outer(np.arange(1, 17), f.nominal_parameters)))
    np.testing.assert_allclose(per_state, np.arange(1, 17)[:, None] * rd.inverse_dynamics(robot, q, qd, qdd),
                               rtol=1e-12, atol=1e-12 * np.abs(want).max() * 16)
    low = f(*(jnp.asarray(x, jnp.float32) for x in (q, qd, qdd)))
    assert low.dtype == jnp.float32  # the float64 parameters and gravity follow the joints' dtype


def test_gradient_equals_analytic_derivatives(assembly):
    robot = ROBOTS[0]
    f = rd.compile(robot, "inverse_dynamics", backend="jax")
    q, qd, qdd = random_state(robot, 2)
    dq = np.asarray(jax.jacfwd(f, argnums=0)(q, qd, qdd))
    want = rd.inverse_dynamics_derivatives(robot, q, qd, qdd)[0]
    np.testing.assert_allclose(dq, want, rtol=1e-10, atol=1e-10 * np.abs(want).max())


def test_jax_backend_errors():
    robot = ROBOTS[0]
    f = rd.compile(robot, "gravity", backend="jax")
    assert repr(f) == f"JaxModel({robot.name!r}, 'gravity_torques', parameters='standard')"
    with pytest.raises(rd.InputError, match=r"takes \(q, gravity=None, params=None\)"):
        f(np.zeros(robot.n), np.zeros(robot.n))
    with pytest.raises(rd.InputError, match="'q' has shape"):
        f(np.zeros(robot.n + 1))
    with pytest.raises(rd.InputError, match="'params' has shape"):
        f(np.zeros(robot.n), params=np.zeros(2))
    with pytest.raises(rd.InputError, match="dtype"):
        rd.compile(robot, "gravity", backend="jax", dtype="float32")
    with pytest.raises(rd.InputError, match="backend='jax' is for fixed-base"):
        rd.compile(rd.load("puma560").replace(base="floating"), "inverse_dynamics", backend="jax")



@pytest.mark.slow
def test_derivatives_equal_the_analytic_ones_to_second_order():
    """jacrev and hessian of the compiled functions (their derivatives come from the loop-free recursions,
    robodyn.symbolic.jax_model's notes) equal rd.inverse_dynamics_derivatives / rd.forward_dynamics_derivatives to
    rounding, the Hessian of forward dynamics central differences of those (h = 1e-5: error O(h²) ≈ 1e-10 of the
    entries), and the tangents along gravity and params the differences of the affine function Γ is in them
    (Coulomb, viscous and rotor-inertia terms included)."""
    robot = random_robot(3, nf=3)
    q, qd, qdd = random_state(robot, 4)
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    f, fd = rd.compile(robot, "inverse_dynamics", backend="jax"), rd.compile(robot, "forward_dynamics", backend="jax")

    def close(got, want, rtol=1e-12):
        np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=rtol * np.abs(want).max())

    d, e = rd.inverse_dynamics_derivatives(robot, q, qd, qdd), rd.forward_dynamics_derivatives(robot, q, qd, tau)
    got = jax.jit(jax.jacrev(f, argnums=(0, 1, 2)))(q, qd, qdd)
    for g, w in zip(got, (d.dtau_dq, d.dtau_dqd, rd.inertia_matrix(robot, q))):
        close(g, w)
    for g, w in zip(jax.jit(jax.jacrev(fd, argnums=(0, 1, 2)))(q, qd, tau), e):
        close(g, w, 1e-11)  # through A⁻¹, cond(A) ~ 1e2
    h = 1e-5
    hessian = np.stack([(rd.forward_dynamics_derivatives(robot, q + s, qd, tau).dqdd_dq
                         - rd.forward_dynamics_derivatives(robot, q - s, qd, tau).dqdd_dq) / (2 * h)
                        for s in h * np.eye(robot.n)], -1)
    close(jax.jit(jax.hessian(lambda x: fd(x, qd, tau)))(q), hessian, 1e-8)
    p, g = 1.3 * f.nominal_parameters, np.array([0.2, -1.0, -9.0])
    jf = jax.jit(f)
    at = lambda **k: np.asarray(jf(q, qd, qdd, **{"gravity": g, "params": p, **k}))  # noqa: E731
    close(jax.jit(jax.jacrev(lambda x: f(q, qd, qdd, gravity=g, params=x)))(p),
          np.stack([at(params=c) - at(params=0 * p) for c in np.eye(len(p))], -1))
    close(jax.jit(jax.jacfwd(lambda x: f(q, qd, qdd, gravity=x, params=p)))(g),
          np.stack([at(gravity=c) - at(gravity=0 * g) for c in np.eye(3)], -1))
    # forward dynamics along params and gravity: q̈(s P) = A⁻¹ Γ / s − A⁻¹ H, so dq̈/ds = −A⁻¹ Γ / s² (A, H at the
    # robot file's P), and dq̈ = −(s A)⁻¹ ∂Γ/∂g dg at its q̈
    x = np.asarray(fd(q, qd, tau, gravity=g, params=1.3 * fd.nominal_parameters))
    at = lambda **k: np.asarray(jf(q, qd, x, **{"gravity": g, "params": p, **k}))  # noqa: E731
    solve = lambda b: -np.linalg.solve(rd.inertia_matrix(robot, q), b)  # noqa: E731
    got = jax.jit(jax.jacfwd(lambda s, b: fd(q, qd, tau, gravity=b, params=s * fd.nominal_parameters),
                             argnums=(0, 1)))(1.3, g)
    close(got[0], solve(tau) / 1.3 ** 2, 1e-10)
    close(got[1], solve(np.stack([at(gravity=c) - at(gravity=0 * g) for c in np.eye(3)], -1)) / 1.3, 1e-10)


@pytest.mark.parametrize("kind", ["bias_torques", "gravity_torques", "inertia_matrix"])
def test_derivatives_of_the_other_kinds(kind):
    """∂/∂q and ∂/∂q̇ of the bias and gravity torques and of A(q) (under vmap, at parameters other than the robot
    file's) equal central differences of the NumPy functions with the parameters scaled alike (every term of the
    dynamics is linear in them): h = 1e-6, error ≈ 1e-10 of the entries."""
    robot = ROBOTS[1]
    f = rd.compile(robot, kind, backend="jax")
    scaled = robot.replace(params=2 * robot.params, Ia=2 * robot.Ia, Fc=2 * robot.Fc, Fv=2 * robot.Fv)
    numpy = {"bias_torques": lambda a, b: rd.bias_torques(scaled, a, b),
             "gravity_torques": lambda a, b: rd.gravity_torques(scaled, a),
             "inertia_matrix": lambda a, b: rd.inertia_matrix(scaled, a)}[kind]
    q, qd, _ = random_state(robot, 6, batch=(2,))
    args = (q, qd) if kind == "bias_torques" else (q,)
    scaled_f = lambda *a: f(*a, params=2 * f.nominal_parameters)  # noqa: E731
    got = jax.jit(jax.vmap(jax.jacrev(scaled_f, argnums=tuple(range(len(args))))))(*args)
    h = 1e-6
    for k, x in enumerate(args):
        want = np.stack([(numpy(*(a + h * e if i == k else a for i, a in enumerate((q, qd))))
                          - numpy(*(a - h * e if i == k else a for i, a in enumerate((q, qd))))) / (2 * h)
                         for e in np.eye(robot.n)], -1)
        np.testing.assert_allclose(np.asarray(got[k]), want, rtol=1e-8, atol=1e-8 * np.abs(want).max())


def test_base_parameters_regressor_and_derivative_kinds():
    """parameters='base', the base regressor and the derivative kinds through backend='jax' (a 3-frame robot),
    jitted and differentiated through their programs, against NumPy (1e-10 relative): the base models equal the
    dynamics at the base values and 1.7 times them (Γ is linear in them, q̈ unchanged when Γ scales too); the base
    regressor equals rd.base_parameters(robot, friction=False).regressor and times the base values the rigid-body
    torques; jacfwd of the base forward dynamics equals ∂q̈/∂q; jacfwd of ∂Γ/∂q equals
    rd.inverse_dynamics_second_derivatives, and of ∂q̈/∂Γ = A⁻¹ the product −A⁻¹ (∂A/∂q_k) A⁻¹ of its ∂A/∂q."""
    robot = random_robot(5, nf=3)
    q, qd, qdd = random_state(robot, 1, batch=(3,))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)

    def close(got, want):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-10 * np.abs(want).max())

    f = rd.compile(robot, "inverse_dynamics", parameters="base", backend="jax")
    jf = jax.jit(f)
    close(jf(q, qd, qdd), tau)
    close(jf(q, qd, qdd, params=1.7 * f.nominal_parameters), 1.7 * tau)
    fd = rd.compile(robot, "forward_dynamics", parameters="base", backend="jax")
    close(jax.jit(fd)(q, qd, 1.7 * tau, params=1.7 * fd.nominal_parameters), qdd)
    close(jax.jit(jax.jacfwd(fd))(q[0], qd[0], tau[0]), rd.forward_dynamics_derivatives(robot, q[0], qd[0], tau[0])[0])
    base = rd.base_parameters(robot, friction=False)
    Y = rd.compile(robot, "regressor", parameters="base", backend="jax")
    got = jax.jit(Y)(q, qd, qdd)
    close(got, base.regressor(q, qd, qdd))
    rigid = robot.replace(Fc=0 * robot.Fc, Fv=0 * robot.Fv, Foff=0 * robot.Foff)
    close(np.asarray(got) @ base.values, rd.inverse_dynamics(rigid, q, qd, qdd))
    second = rd.inverse_dynamics_second_derivatives(robot, q[0], qd[0], qdd[0])
    d = rd.compile(robot, "inverse_dynamics_derivatives", backend="jax")
    close(jax.jit(jax.jacfwd(lambda a: d(a, qd[0], qdd[0]).dtau_dq))(q[0]), second.d2tau_dq2)
    e = rd.compile(robot, "forward_dynamics_derivatives", backend="jax")
    inverse = np.linalg.inv(rd.inertia_matrix(robot, q[0]))
    close(jax.jit(jax.jacfwd(lambda a: e(a, qd[0], tau[0]).dqdd_dtau))(q[0]),
          -np.einsum("ij,jlk,lm->imk", inverse, second.d2tau_dqdd_dq, inverse))


@pytest.mark.parametrize("index", range(len(ROBOTS)))
def test_kinematics_kinds_equal_numpy(index):
    """A frame's J and J̇q̇ through backend="jax" (the kinematics models the C and CUDA back ends compile) equal
    rd.jacobian and rd.jacobian_dot_qd, batched and one state, under jax.jit and jax.vmap."""
    robot = ROBOTS[index]
    q, qd, _ = random_state(robot, 7, batch=(4,))
    frame, point = robot.nf - 1, np.array([0.1, -0.2, 0.3])
    J = rd.compile(robot, "jacobian", backend="jax", frame=frame, point=point)
    Jd = rd.compile(robot, "jacobian_dot_qd", backend="jax", frame=frame)
    np.testing.assert_allclose(jax.jit(J)(q), rd.jacobian(robot, q, frame=frame, point=point), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jax.vmap(Jd)(q, qd), rd.jacobian_dot_qd(robot, q, qd, frame=frame), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(J(q[0]), rd.jacobian(robot, q[0], frame=frame, point=point), rtol=1e-12, atol=1e-12)
    # the derivative of J̇q̇ with respect to q̇ is 2 × (the q̇-linear part): J̇q̇ is quadratic in q̇
    np.testing.assert_allclose(jax.jacfwd(Jd, argnums=1)(q[0], qd[0]) @ qd[0], 2 * Jd(q[0], qd[0]), rtol=1e-10,
                               atol=1e-10)
    with pytest.raises(rd.InputError, match="frame and point are for the kinds"):
        rd.compile(robot, "inverse_dynamics", backend="jax", frame=frame)
