"""rd.simulation.contact_step: unilateral contacts with Coulomb friction (Moreau–Jean time stepping), checked
against closed forms (sliding at μg, sticking inside the cone, static forces), Newton's law for the whole robot,
Gauss's principle solved as a QP by cvxpy (frictionless), and MuJoCo."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn.simulation import ContactSolverError, contact_step
from tests.support.checks import example_robot_data_path

G = 9.81
A, B, C, MASS = 0.2, 0.1, 0.05, 2.0  # half sizes (m) and mass (kg) of a box
CORNERS = [(0, [sx * A, sy * B, -C]) for sx in (-1, 1) for sy in (-1, 1)]


@pytest.fixture(scope="module")
def box():
    """A free box as a floating base (its one joint drives a decoupled rotor of inertia 1: M stays invertible)."""
    inertia = MASS / 3 * np.array([B * B + C * C, A * A + C * C, A * A + B * B])
    return rd.Robot(name="box", sigma=[0], Ia=[1.0], base="floating",
                    base_params=[inertia[0], 0, 0, inertia[1], 0, inertia[2], 0, 0, 0, MASS])


def _run(robot, q, v, tau, dt, steps, points, **kw):
    vs, qs, fs = [], [], []
    for _ in range(steps):
        r = contact_step(robot, q, v, tau, dt, points, **kw)
        q, v = r.q, r.v
        qs.append(q), vs.append(v), fs.append(r.forces)
    return np.array(qs), np.array(vs), np.array(fs)


def test_box_at_rest_carries_its_weight_inside_the_cone(box):
    q = np.array([0, 0, C, 0, 0, 0, 1, 0.0])
    r = contact_step(box, q, np.zeros(7), np.zeros(7), 1e-3, CORNERS, mu=0.3)
    np.testing.assert_allclose(r.forces.sum(-2), [0, 0, MASS * G], rtol=0, atol=1e-10 * MASS * G)
    assert np.all(r.forces[:, 2] >= 0)
    np.testing.assert_allclose(r.v, 0.0, atol=1e-11)
    np.testing.assert_allclose(r.q, q, atol=1e-14)
    np.testing.assert_allclose(r.gaps, 0.0, atol=1e-15)
    assert r.residual <= 1e-12 * G * 1e-3          # an exact solution (the step must undo v_free = −g h)


def test_box_slides_at_mu_g_then_sticks(box):
    """Sliding: each step takes exactly μ g h off the speed (the closed form of the discrete motion), with the
    friction on the cone's boundary against the motion; below μ g h the box sticks and stays."""
    mu, v0, dt = 0.5, 1.0, 1e-3
    q = np.array([0, 0, C, 0, 0, 0, 1, 0.0])
    v = np.zeros(7)
    v[0] = v0
    steps = int(v0 / (mu * G * dt))                # 203 sliding steps, then rest
    qs, vs, fs = _run(box, q, v, np.zeros(7), dt, steps + 20, CORNERS, mu=mu)
    k = np.arange(1, steps + 1)
    np.testing.assert_allclose(vs[:steps, 0], v0 - k * mu * G * dt, rtol=0, atol=1e-12)
    np.testing.assert_allclose(qs[:steps, 0], dt * np.cumsum(v0 - k * mu * G * dt), rtol=0, atol=1e-12)
    total = fs.sum(-2)
    np.testing.assert_allclose(total[:steps], np.tile([-mu * MASS * G, 0, MASS * G], (steps, 1)), rtol=0, atol=1e-10)
    np.testing.assert_allclose(vs[steps:], 0.0, atol=1e-12)                  # stuck
    np.testing.assert_allclose(total[steps + 1:], np.tile([0, 0, MASS * G], (19, 1)), rtol=0, atol=1e-10)
    np.testing.assert_allclose(qs[:, 2], C, rtol=0, atol=1e-12)            # neither sinks nor lifts
    tangential = np.linalg.norm(fs[..., :2], axis=-1)
    assert np.all(tangential <= mu * fs[..., 2] * (1 + 1e-12) + 1e-12)


@pytest.mark.parametrize("push", [0.8, 1.2])
def test_push_sticks_inside_the_cone_and_slides_outside(box, push):
    """A horizontal force F = push · μ m g on the box: it stays (friction −F) below the cone, else accelerates at
    (F − μ m g)/m."""
    mu, dt = 0.4, 1e-3
    q = np.array([0, 0, C, 0, 0, 0, 1, 0.0])
    tau = np.zeros(7)
    tau[1] = push * mu * MASS * G
    qs, vs, fs = _run(box, q, np.zeros(7), tau, dt, 30, CORNERS, mu=mu)
    k = np.arange(1, 31)
    expected = max(push - 1.0, 0.0) * mu * G * dt * k
    np.testing.assert_allclose(vs[:, 1], expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fs.sum(-2)[:, 1], -min(push, 1.0) * mu * MASS * G, rtol=1e-10)


def test_falling_box_lands_without_bouncing_or_sinking(box):
    """Moreau–Jean's impact law is inelastic (restitution 0): the box falls freely, lands and stays on the plane."""
    dt, h0 = 1e-3, 0.01
    q = np.array([0, 0, C + h0, 0, 0, 0, 1, 0.0])
    qs, vs, fs = _run(box, q, np.zeros(7), np.zeros(7), dt, 80, CORNERS, mu=0.5)
    free = np.flatnonzero(qs[:, 2] > C + 1e-12)
    k = free + 1                                    # semi-implicit Euler in free flight
    np.testing.assert_allclose(qs[free, 2], C + h0 - G * dt * dt * k * (k + 1) / 2, rtol=0, atol=1e-12)
    landed = free[-1] + 1
    np.testing.assert_allclose(qs[landed:, 2], C, rtol=0, atol=1e-12)
    np.testing.assert_allclose(vs[landed, 2], -(qs[landed - 1, 2] - C) / dt, rtol=1e-12)   # closes the gap
    np.testing.assert_allclose(vs[landed + 1:], 0.0, atol=1e-12)
    np.testing.assert_allclose(fs[landed + 2:].sum(-2)[:, 2], MASS * G, rtol=1e-10)   # after the impact


MJCF = """<mujoco><option timestep="{dt}" gravity="0 0 -{g}" cone="elliptic"/>
<worldbody><geom type="plane" size="5 5 .1" friction="{mu} 0 0" solref="{tc} 1"/>
<body pos="0 0 {c}"><freejoint/><geom type="box" size="{a} {b} {c}" mass="{m}" friction="{mu} 0 0" solref="{tc} 1"/>
</body></worldbody></mujoco>"""


def test_box_agrees_with_mujoco(box):
    """MuJoCo's soft contacts: at rest its normal forces carry m g; a box launched at v0 slides the distance
    v0²/(2μg) of rigid Coulomb friction within what its discretisation and softness allow: the semi-implicit Euler
    offset v0 h/2 and the soft-contact velocity error integrated over the contact's time constant τ = solref[0]
    (|Δv|max τ, |Δv|max measured in the same run). robodyn's rigid contacts give the same distance to the
    discretisation offset (and its own closed form to rounding)."""
    mujoco = pytest.importorskip("mujoco")
    mu, v0, tc, dt_mj = 0.5, 1.0, 0.002, 1e-4
    m = mujoco.MjModel.from_xml_string(MJCF.format(dt=dt_mj, g=G, mu=mu, tc=tc, a=A, b=B, c=C, m=MASS))
    d = mujoco.MjData(m)
    for _ in range(5000):                           # settle on the plane
        mujoco.mj_step(m, d)
    f, total = np.zeros(6), np.zeros(3)
    for i in range(d.ncon):
        mujoco.mj_contactForce(m, d, i, f)
        total += d.contact[i].frame.reshape(3, 3).T @ f[:3]
    np.testing.assert_allclose(total, [0, 0, MASS * G], rtol=0, atol=1e-5 * MASS * G)
    x0 = d.qpos[0]
    d.qvel[:] = 0
    d.qvel[0] = v0
    ts, vx = [], []
    for _ in range(3000):
        mujoco.mj_step(m, d)
        ts.append(len(ts) * dt_mj + dt_mj), vx.append(d.qvel[0])
    dv = np.max(np.abs(np.array(vx) - np.maximum(v0 - mu * G * np.array(ts), 0.0)))
    distance_mj = d.qpos[0] - x0
    distance = v0 ** 2 / (2 * mu * G)
    assert abs(vx[-1]) < 1e-6 and abs(distance_mj - distance) <= v0 * dt_mj / 2 + dv * tc
    dt = 1e-3
    q = np.array([0, 0, C, 0, 0, 0, 1, 0.0])
    v = np.zeros(7)
    v[0] = v0
    qs, vs, _ = _run(box, q, v, np.zeros(7), dt, 220, CORNERS, mu=mu)
    steps = int(v0 / (mu * G * dt))
    exact = dt * np.sum(v0 - np.arange(1, steps + 1) * mu * G * dt)
    assert abs(qs[-1, 0] - exact) <= 1e-12 and abs(qs[-1, 0] - distance) <= v0 * dt
    assert abs(qs[-1, 0] - distance_mj) <= v0 * (dt + dt_mj) / 2 + dv * tc


@pytest.fixture(scope="module")
def solo():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return rd.from_urdf(example_robot_data_path("solo_description/robots/solo12.urdf"), floating=True)


FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]


def _solo_state(solo, seed=0):
    rng = np.random.default_rng(seed)
    legs = np.tile([0.0, 0.8, -1.6], 4)
    q = np.concatenate([[0.1, -0.2, 0.3], [0, 0, 0, 1], legs])
    heights = [_foot(solo, q, f)[2] for f in FEET]
    v = np.zeros(solo.n + 6)         # at rest: the momentum's rate is then the external force (no J̇_c v term)
    tau = np.concatenate([np.zeros(6), rng.normal(0, 2.0, solo.n)])
    return q, v, tau, float(np.mean(heights))


def _foot(solo, q, frame):
    """World position of a frame's origin from the free-flyer configuration (rd.forward_kinematics in R_0)."""
    from robodyn.dynamics.floating import quaternion_matrix
    T = rd.forward_kinematics(solo, q[7:])[solo.frame_index(frame) - 1]
    return q[:3] + quaternion_matrix(q[3:7]) @ T[:3, 3]


@pytest.mark.parametrize("mu", [0.0, 0.3, 2.0])
def test_solo_step_obeys_newton_signorini_and_coulomb(solo, mu):
    """One step of Solo-12 standing on four feet, random joint torques: the whole robot's linear momentum changes by (m g + ΣF) h
    (Newton, with the centre-of-mass Jacobian: independent of the contact Jacobians), every force is in the cone,
    pushes only where the contact closes (Signorini) and opposes the sliding velocity (Coulomb)."""
    q, v, tau, height = _solo_state(solo)
    dt = 1e-3
    r = contact_step(solo, q, v, tau, dt, FEET, mu=mu, height=height)
    mass = solo.M.sum() + solo.base_params[9]
    Jc = rd.floating.center_of_mass_jacobian(solo, q)
    momentum = mass * (Jc @ r.v - Jc @ v)
    np.testing.assert_allclose(momentum, dt * (mass * solo.gravity + r.forces.sum(-2)), rtol=0, atol=1e-10)
    u = np.array([rd.floating.floating_jacobian(solo, q, f)[:3] @ r.v for f in FEET])   # world axes
    fn, ft, un, ut = r.forces[:, 2], r.forces[:, :2], u[:, 2] + r.gaps / dt, u[:, :2]
    scale = np.abs(r.forces).max()
    assert scale > 1.0                              # the contacts act
    assert np.all(fn >= 0) and np.all(un >= -1e-9)
    np.testing.assert_allclose(fn * un, 0.0, atol=1e-9 * scale)
    assert np.all(np.linalg.norm(ft, axis=-1) <= mu * fn * (1 + 1e-12) + 1e-12)
    sliding = np.linalg.norm(ut, axis=-1) > 1e-8
    for c in np.flatnonzero(sliding):
        np.testing.assert_allclose(np.linalg.norm(ft[c]), mu * fn[c], rtol=1e-9, atol=1e-9 * scale)
        if mu * fn[c] > 1e-9 * scale:
            np.testing.assert_allclose(ft[c] / np.linalg.norm(ft[c]), -ut[c] / np.linalg.norm(ut[c]), atol=1e-6)


def test_frictionless_step_is_gauss_s_principle(solo):
    """μ = 0: v⁺ minimises ½ (v⁺ − v_free)ᵀ M (v⁺ − v_free) subject to the normal velocities + φ/h ≥ 0 — the same
    quadratic program solved by cvxpy (Clarabel)."""
    cp = pytest.importorskip("cvxpy")
    q, v, tau, height = _solo_state(solo, seed=1)
    dt = 1e-3
    r = contact_step(solo, q, v, tau, dt, FEET, mu=0.0, height=height)
    M = rd.floating.floating_inertia_matrix(solo, q)
    H = rd.floating.floating_inverse_dynamics(solo, q, v, np.zeros_like(v))
    v_free = v + dt * np.linalg.solve(M, tau - H)
    Jn = np.array([rd.floating.floating_jacobian(solo, q, f)[2] for f in FEET])
    x = cp.Variable(v.size)
    L = np.linalg.cholesky(M)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(L.T @ (x - v_free))), [Jn @ x + r.gaps / dt >= 0])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    np.testing.assert_allclose(r.v, x.value, rtol=0, atol=1e-7 * np.abs(x.value).max())
    np.testing.assert_allclose(r.forces[:, :2], 0.0, atol=1e-12)


def test_tool_pushing_a_table_fixed_base():
    """A fixed-base arm pushes a table with F: sticking (μ large) the table pushes back with −F, the static closed
    form (the one of rd.dynamics.constrained_forward_dynamics); with μ below the cone it slides, the friction at
    μ F_n against the motion."""
    puma = rd.load("puma560")
    qp = np.array([0.3, -0.6, 0.4, 0.2, 0.5, -0.1])
    F = np.array([6.0, -3.0, -40.0])
    tau = rd.gravity_torques(puma, qp) + rd.jacobian(puma, qp)[:3].T @ F
    height = rd.forward_kinematics(puma, qp)[-1][2, 3]
    r = contact_step(puma, qp, np.zeros(6), tau, 1e-3, [6], mu=0.5, height=height, friction=False)
    np.testing.assert_allclose(r.forces[0], -F, rtol=0, atol=1e-10 * np.linalg.norm(F))
    np.testing.assert_allclose(r.v, 0.0, atol=1e-12)
    ref = rd.dynamics.constrained_forward_dynamics(puma, qp, np.zeros(6), tau, frames=[6], friction=False)
    np.testing.assert_allclose(r.forces[0], ref.forces[0], rtol=0, atol=1e-10 * np.linalg.norm(F))
    slide = contact_step(puma, qp, np.zeros(6), tau, 1e-3, [6], mu=0.1, height=height, friction=False)
    ft, fn = slide.forces[0, :2], slide.forces[0, 2]
    u = rd.jacobian(puma, qp)[:3] @ slide.v
    np.testing.assert_allclose(np.linalg.norm(ft), 0.1 * fn, rtol=1e-10)
    np.testing.assert_allclose(ft / np.linalg.norm(ft), -u[:2] / np.linalg.norm(u[:2]), atol=1e-8)
    assert abs(u[2]) < 1e-10 * np.linalg.norm(u)


def test_batch_equals_samples(box):
    q = np.array([[0, 0, C, 0, 0, 0, 1, 0.0], [0.3, 0, C + 0.001, 0, 0, 0, 1, 0.2]])
    v = np.array([[1.0, 0.5, 0, 0, 0, 0.3, 0], [0, -0.2, -0.5, 0.1, 0, 0, 1]])
    tau = np.zeros((2, 7))
    batch = contact_step(box, q, v, tau, 1e-3, CORNERS, mu=0.5)
    for i in range(2):
        one = contact_step(box, q[i], v[i], tau[i], 1e-3, CORNERS, mu=0.5)
        np.testing.assert_allclose(batch.q[i], one.q, rtol=0, atol=1e-14)
        np.testing.assert_allclose(batch.v[i], one.v, rtol=0, atol=1e-12)
        np.testing.assert_allclose(batch.forces[i], one.forces, rtol=0, atol=1e-9)


def test_bad_arguments_raise_clear_errors(box):
    q, v, tau = np.array([0, 0, C, 0, 0, 0, 1, 0.0]), np.zeros(7), np.zeros(7)
    cases = [({"dt": 0.0}, "dt = 0.0"), ({"mu": -1.0}, "mu = -1.0"), ({"points": []}, "points = "),
             ({"points": [(0, [1, 2])]}, "3 finite coordinates"), ({"points": ["nowhere"]}, "nowhere"),
             ({"normal": [0, 0, 0]}, "normal = "), ({"height": np.nan}, "height = "),
             ({"tau": np.zeros(3)}, "argument 'tau'"), ({"max_iter": 0}, "max_iter")]
    for change, match in cases:
        args = {"q": q, "v": v, "tau": tau, "dt": 1e-3, "points": CORNERS, **change}
        with pytest.raises(rd.RobodynError, match=match):
            contact_step(box, **args)
    with pytest.raises(rd.InputError, match="mobile base"):
        contact_step(box.replace(base="mobile"), q, v, tau, 1e-3, CORNERS)
    with pytest.raises(ContactSolverError, match="did not converge in 1 Gauss–Seidel"):
        contact_step(box, q, v, tau, 1e-3, CORNERS, max_iter=1)


def test_solo_frictionless_landing_agrees_with_mujoco(solo):
    """Solo-12 dropped 5 mm onto a frictionless plane, its joints held by the same PD law in both simulators
    (robodyn's MJCF export, a sphere of radius r at each foot, elliptic cone, solref τ = 2 ms): after 0.3 s the
    motions agree within MuJoCo's own penetration δ (its contact distances, measured): the base height within δ,
    the joint angles within δ over the shortest leg segment (0.16 m)."""
    mujoco = pytest.importorskip("mujoco")
    import xml.etree.ElementTree as ET

    radius, dt, steps, kp, kd = 1e-3, 1e-3, 300, 20.0, 0.3
    root = ET.fromstring(rd.to_mujoco_xml(solo))
    root.find("option").set("timestep", str(dt))
    contact = {"friction": "1 0 0", "solref": "0.002 1", "condim": "1"}
    for body in root.iter("body"):
        if body.get("name", "").endswith("_ANKLE"):          # the frames whose link is a foot
            ET.SubElement(body, "geom", type="sphere", size=str(radius), **contact)
    ET.SubElement(root.find("worldbody"), "geom", type="plane", size="5 5 0.1", **contact)
    actuators = ET.SubElement(root, "actuator")
    for name in solo.joint_names:
        ET.SubElement(actuators, "motor", joint=name)
    m = mujoco.MjModel.from_xml_string(ET.tostring(root, encoding="unicode"))
    d = mujoco.MjData(m)
    legs = np.tile([0.0, 0.8, -1.6], 4)
    q = np.concatenate([[0, 0, 0.0], [0, 0, 0, 1], legs])
    q[2] = 0.005 - min(_foot(solo, q, f)[2] for f in FEET)
    d.qpos[:] = np.concatenate([q[:3] + [0, 0, radius], [1, 0, 0, 0], legs])
    v = np.zeros(solo.n + 6)
    for _ in range(steps):
        d.ctrl[:] = kp * (legs - d.qpos[7:]) - kd * d.qvel[6:]
        mujoco.mj_step(m, d)
        tau = np.concatenate([np.zeros(6), kp * (legs - q[7:]) - kd * v[6:]])
        r = contact_step(solo, q, v, tau, dt, FEET, mu=0.0)
        q, v = r.q, r.v
    delta = max(abs(d.contact[i].dist) for i in range(d.ncon))
    assert d.ncon == 4 and 0 < delta < 1e-3
    assert abs(q[2] + radius - d.qpos[2]) <= delta
    np.testing.assert_allclose(q[:2], d.qpos[:2], rtol=0, atol=delta)
    np.testing.assert_allclose(q[7:], d.qpos[7:], rtol=0, atol=delta / 0.16)
    # robodyn's rigid feet stay on the plane up to the O(h²) drift of velocity-level time stepping (the next step's
    # φ/h removes it): far below MuJoCo's penetration
    assert np.all(np.abs(r.gaps) <= 1e-3 * delta)


def test_float32_in_float32_out(box):
    q = np.array([0, 0, C, 0, 0, 0, 1, 0.0], np.float32)
    r = contact_step(box, q, np.zeros(7, np.float32), np.zeros(7, np.float32), 1e-3, CORNERS, mu=0.5)
    assert r.q.dtype == r.v.dtype == r.forces.dtype == r.gaps.dtype == np.float32
    wide = contact_step(box, q.astype(float), np.zeros(7), np.zeros(7), 1e-3, CORNERS, mu=0.5)   # the same numbers
    np.testing.assert_allclose(r.forces, wide.forces.astype(np.float32), rtol=1e-6, atol=1e-6 * MASS * G)
    np.testing.assert_allclose(r.q, wide.q.astype(np.float32), rtol=1e-7, atol=1e-12)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(tilt=st.floats(-0.3, 0.3), lift=st.floats(0.0, 2e-3), mu=st.floats(0.0, 1.5),
       v=st.lists(st.floats(-1.0, 1.0), min_size=6, max_size=6))
def test_box_step_obeys_signorini_and_coulomb(box, tilt, lift, mu, v):
    """Any tilted box on or just above the plane, any velocity: after the step every force lies in the cone, pushes only where
    the contact closes, and opposes the sliding velocity on the cone's boundary — the point velocities computed
    here from the rigid-body formula R (v_0 + ω_0 × p), independently of the step's Jacobians."""
    from robodyn.dynamics.floating import quaternion_matrix
    quat = np.array([np.sin(tilt / 2), 0, 0, np.cos(tilt / 2)])
    R = quaternion_matrix(quat)
    pts = np.array([p for _, p in CORNERS])
    q = np.concatenate([[0, 0, lift - min((R @ pts.T)[2])], quat, [0.0]])
    vel = np.concatenate([v, [0.0]])
    dt = 1e-3
    r = contact_step(box, q, vel, np.zeros(7), dt, CORNERS, mu=mu)
    u = (R @ (r.v[:3] + np.cross(r.v[3:6], pts)).T).T
    fn, ft, un, ut = r.forces[:, 2], r.forces[:, :2], u[:, 2] + r.gaps / dt, u[:, :2]
    scale = max(np.abs(r.forces).max(), MASS * G)
    speed = max(1.0, np.abs(u).max())
    # the conditions hold up to the residual the step reports (projected Gauss–Seidel may stall short of zero on
    # the redundant four-corner set: test_nearly_flat_box_reports_its_residual)
    assert r.residual.shape == () and r.residual >= 0
    slack = 1e-9 * speed + 2 * r.residual
    assert np.all(fn >= 0) and np.all(un >= -slack)
    np.testing.assert_allclose(fn * un, 0.0, atol=slack * scale)
    assert np.all(np.linalg.norm(ft, axis=-1) <= mu * fn * (1 + 1e-12) + 1e-12 * scale)
    for c in np.flatnonzero(np.linalg.norm(ut, axis=-1) > max(1e-8 * speed, 1e3 * r.residual)):
        if mu * fn[c] > 1e-9 * scale:
            np.testing.assert_allclose(np.linalg.norm(ft[c]), mu * fn[c], rtol=1e-9)
            np.testing.assert_allclose(ft[c] / np.linalg.norm(ft[c]), -ut[c] / np.linalg.norm(ut[c]),
                                       atol=1e-6 + 4 * r.residual / np.linalg.norm(ut[c]))


def _tilted_box(tilt, lift=0.0):
    """Configuration of the box turned by ``tilt`` about x, its lowest corner ``lift`` above the plane; R, q."""
    from robodyn.dynamics.floating import quaternion_matrix
    quat = np.array([np.sin(tilt / 2), 0, 0, np.cos(tilt / 2)])
    R = quaternion_matrix(quat)
    pts = np.array([p for _, p in CORNERS])
    return R, np.concatenate([[0, 0, lift - min((R @ pts.T)[2])], quat, [0.0]])


def _assert_signorini_coulomb(r, R, mu, dt, slack):
    """Every force in its cone, pushing only where the contact closes (Signorini) and, where the contact slips, on
    the cone's edge against the slip (Coulomb), to ``slack`` (m/s) on the contact velocities: the velocities
    recomputed from the rigid-body formula R (v_0 + ω_0 × p), independently of the step's Jacobians."""
    pts = np.array([p for _, p in CORNERS])
    u = (R @ (r.v[:3] + np.cross(r.v[3:6], pts)).T).T
    fn, ft, un, ut = r.forces[:, 2], r.forces[:, :2], u[:, 2] + r.gaps / dt, u[:, :2]
    scale = max(np.abs(r.forces).max(), MASS * G)
    assert np.all(fn >= 0) and np.all(un >= -slack)
    np.testing.assert_allclose(fn * un, 0.0, atol=slack * scale)
    assert np.all(np.linalg.norm(ft, axis=-1) <= mu * fn * (1 + 1e-12) + 1e-12 * scale)
    for c in np.flatnonzero(np.linalg.norm(ut, axis=-1) > 1e3 * slack):
        np.testing.assert_allclose(ft[c], -mu * fn[c] * ut[c] / np.linalg.norm(ut[c]),
                                   atol=1e-9 * scale + 2 * slack / np.linalg.norm(ut[c]) * scale)


@pytest.mark.parametrize("tilt", [1.7880483934510617e-07, 1e-6, 1e-5])
@pytest.mark.parametrize("mu", [0.3, 1.0])
def test_nearly_flat_box_is_solved(box, tilt, mu):
    """A box a hair from flat lands on four corners: the impulses are not unique (12 contact rows, 6 freedoms) and
    closing the open gaps needs a slip of about 200 tilt² m/s (the gaps of the corners differ by O(tilt), the
    rigid motion that closes them all moves them apart by O(tilt²)), where projected Gauss–Seidel stalls while λ
    creeps along the null space of W.  The search over the contacts' modes (open, sticking, sliding in a
    direction that is itself an unknown) solves it: the residual is below 1e-10 m/s (the bound contact_step
    states for these sets), the momentum balance holds exactly and Signorini and Coulomb hold to the residual."""
    R, q = _tilted_box(tilt)
    dt = 1e-3
    r = contact_step(box, q, np.zeros(7), np.zeros(7), dt, CORNERS, mu=mu)
    np.testing.assert_allclose(MASS * (R @ r.v[:3]), dt * (r.forces.sum(-2) + [0, 0, -MASS * G]), rtol=0,
                               atol=1e-12 * MASS * G * dt)
    assert 0 <= r.residual <= 1e-10
    _assert_signorini_coulomb(r, R, mu, dt, 2 * r.residual + 1e-15)


@pytest.mark.parametrize("tilt, axis, mu, v", [
    (8.9e-4, 5.0, 1.3, [-0.74, 0.53, -1.0, -0.6, 0.15, 0.28]),     # strikes the plane at 1 m/s
    (2.1e-5, -1.28, 0.22, [0.0] * 6),                                # lands from rest
])
def test_box_that_stalls_the_sweeps_is_solved(box, tilt, axis, mu, v):
    """Boxes near flat on four corners where neither the sweeps (they run out of 10⁴ sweeps, short of tol) nor the
    semismooth Newton steps (a near-null direction of their Jacobian on the cones' edges) converge: the search over
    the contacts' modes brings the residual to rounding, and the conditions hold to it."""
    from robodyn.dynamics.floating import quaternion_matrix
    quat = np.array([np.cos(axis) * np.sin(tilt / 2), np.sin(axis) * np.sin(tilt / 2), 0, np.cos(tilt / 2)])
    R = quaternion_matrix(quat)
    pts = np.array([p for _, p in CORNERS])
    q = np.concatenate([[0, 0, -min((R @ pts.T)[2])], quat, [0.0]])
    dt = 1e-3
    r = contact_step(box, q, np.concatenate([v, [0.0]]), np.zeros(7), dt, CORNERS, mu=mu)
    speed = max(np.abs(v).max(), G * dt)
    assert 0 <= r.residual <= 1e-12 * speed
    _assert_signorini_coulomb(r, R, mu, dt, 2 * r.residual + 1e-15)


def test_random_boxes_batch_equals_samples(box):
    """A batch of tilted, lifted, spinning boxes (tilts from 1e-9 rad, where four corners land at once, to 0.3 rad,
    on two): every sample's step equals the step of that sample alone (a converged sample is left as it is), to
    the residual reported, and each obeys Signorini and Coulomb to its residual."""
    rng = np.random.default_rng(3)
    n = 12
    tilt = np.where(rng.random(n) < 0.5, 10 ** rng.uniform(-9, np.log10(0.3), n), rng.uniform(-0.3, 0.3, n))
    lift = np.where(rng.random(n) < 0.5, 0.0, rng.uniform(0, 2e-3, n))
    v = np.concatenate([rng.uniform(-1, 1, (n, 6)) * (rng.random((n, 1)) < 0.7), np.zeros((n, 1))], -1)
    configs = [_tilted_box(t, h) for t, h in zip(tilt, lift)]
    q = np.array([c[1] for c in configs])
    dt, mu = 1e-3, 1.0
    batch = contact_step(box, q, v, np.zeros((n, 7)), dt, CORNERS, mu=mu)
    assert batch.residual.shape == (n,)
    pts = np.array([p for _, p in CORNERS])
    for i, (R, _) in enumerate(configs):
        one = contact_step(box, q[i], v[i], np.zeros(7), dt, CORNERS, mu=mu)
        slack = 1e-12 + 4 * max(one.residual, batch.residual[i])
        np.testing.assert_allclose(batch.v[i], one.v, rtol=0, atol=1e-12 + 1e3 * slack)
        u = (R @ (one.v[:3] + np.cross(one.v[3:6], pts)).T).T
        fn, un = one.forces[:, 2], u[:, 2] + one.gaps / dt
        assert np.all(fn >= 0) and np.all(un >= -1e-12 - 2 * one.residual)
        np.testing.assert_allclose(fn * un, 0.0, atol=(1e-12 + 2 * one.residual) * max(fn.max(), MASS * G))
        assert np.all(np.linalg.norm(one.forces[:, :2], axis=-1) <= mu * fn * (1 + 1e-12) + 1e-12)


@pytest.mark.parametrize("facets", [4, 8])
def test_pyramid_box_slides_against_a_facet(box, facets):
    """cone="pyramid": a box sliding along x (the normal of the facet n_0 = t₁) loses exactly μ g h per step, the
    friction μ m g against the motion, as with the circular cone (the polygon touches the circle there)."""
    mu, dt = 0.5, 1e-3
    q = np.array([0, 0, C, 0, 0, 0, 1, 0.0])
    v = np.array([1.0, 0, 0, 0, 0, 0, 0])
    qs, vs, fs = _run(box, q, v, np.zeros(7), dt, 20, CORNERS, mu=mu, cone="pyramid", facets=facets)
    np.testing.assert_allclose(vs[:, 0], 1.0 - np.arange(1, 21) * mu * G * dt, rtol=0, atol=1e-12)
    # the residual sought is tol = 1e-12 times the speed (1 m/s) on the corners' velocities, 0.1 m from the centre
    # (and a velocity error δ is a mean force error m δ / h)
    np.testing.assert_allclose(vs[:, 1:6], 0.0, atol=1e-12 / B)
    np.testing.assert_allclose(fs.sum(-2), np.tile([-mu * MASS * G, 0, MASS * G], (20, 1)), rtol=0,
                               atol=1e-12 * MASS / dt)


def test_four_facet_pyramid_box_slides_at_a_vertex(box):
    """With 4 facets (|λ_t1|, |λ_t2| ≤ μ λ_n) a box sliding obliquely (v = (1, 0.5)) has its slip in the normal
    cone of the vertex (−1, −1) μ λ_n: the friction is μ m g (−1, −1), larger than the circle allows (√2 μ m g),
    and not against the slip; each step takes μ g h off both components."""
    mu, dt = 0.5, 1e-3
    q = np.array([0, 0, C, 0, 0, 0, 1, 0.0])
    v = np.array([1.0, 0.5, 0, 0, 0, 0, 0])
    qs, vs, fs = _run(box, q, v, np.zeros(7), dt, 20, CORNERS, mu=mu, cone="pyramid", facets=4)
    k = np.arange(1, 21)
    np.testing.assert_allclose(vs[:, :2], np.stack([1.0 - k * mu * G * dt, 0.5 - k * mu * G * dt], -1), rtol=0,
                               atol=1e-12)
    np.testing.assert_allclose(fs.sum(-2), np.tile([-mu * MASS * G, -mu * MASS * G, MASS * G], (20, 1)), rtol=0,
                               atol=1e-10)


@pytest.mark.parametrize("facets", [4, 6])
def test_pyramid_random_boxes_obey_signorini_and_coulomb(box, facets):
    """Tilted, lifted, spinning boxes (from 1e-9 rad, four corners landing at once, to 0.3 rad) with the pyramid:
    the residual is below 1e-10 m/s and, from the rigid-body velocities, every force lies in the polygon
    n_jᵀ f_t ≤ μ f_n, pushes only where the contact closes, and dissipates the most the polygon allows against
    the slip: −u_tᵀ f_t = μ f_n max_j (μ-free vertex v_j)ᵀ(−u_t) (the principle of maximal dissipation)."""
    from robodyn.dynamics.floating import quaternion_matrix
    rng = np.random.default_rng(5)
    normals = np.stack([np.cos(2 * np.pi * np.arange(facets) / facets),
                        np.sin(2 * np.pi * np.arange(facets) / facets)], -1)
    corners = normals + np.tan(np.pi / facets) * normals @ np.array([[0, 1], [-1, 0]])   # n_j + tan(π/k) e_j
    pts = np.array([p for _, p in CORNERS])
    dt = 1e-3
    for _ in range(6):
        tilt = 10 ** rng.uniform(-9, np.log10(0.3))
        axis = rng.uniform(0, 2 * np.pi)
        quat = np.array([np.cos(axis) * np.sin(tilt / 2), np.sin(axis) * np.sin(tilt / 2), 0, np.cos(tilt / 2)])
        R = quaternion_matrix(quat)
        q = np.concatenate([[0, 0, rng.uniform(0, 1e-3) - min((R @ pts.T)[2])], quat, [0.0]])
        v = np.concatenate([rng.uniform(-1, 1, 6), [0.0]])
        mu = rng.uniform(0.1, 1.5)
        r = contact_step(box, q, v, np.zeros(7), dt, CORNERS, mu=mu, cone="pyramid", facets=facets)
        assert 0 <= r.residual <= 1e-10
        u = (R @ (r.v[:3] + np.cross(r.v[3:6], pts)).T).T
        fn, ft, un, ut = r.forces[:, 2], r.forces[:, :2], u[:, 2] + r.gaps / dt, u[:, :2]
        scale = max(np.abs(r.forces).max(), MASS * G)
        slack = 1e-9 * max(1.0, np.abs(u).max()) + 2 * r.residual
        assert np.all(fn >= 0) and np.all(un >= -slack)
        np.testing.assert_allclose(fn * un, 0.0, atol=slack * scale)
        assert np.all(ft @ normals.T <= mu * fn[:, None] * (1 + 1e-12) + 1e-12 * scale)
        dissipated = -(ut * ft).sum(-1)
        most = mu * fn * (-ut @ corners.T).max(-1)
        np.testing.assert_allclose(dissipated, most, rtol=0, atol=1e3 * slack * scale)


@pytest.mark.parametrize("tilt, axis, mu, v", [
    (2.37e-4, 0.8, 1.05, [0.3, -0.6, -1.0, 0.9, -0.2, 0.5]),         # strike the plane at 1 m/s on four corners
    (8.2e-4, 2.9, 1.47, [-0.74, 0.53, -1.0, -0.6, 0.15, 0.28]),
])
def test_pyramid_near_flat_impacts_are_solved(box, tilt, axis, mu, v):
    """Near-flat boxes striking the plane on four corners with a 4-facet pyramid (the slowest cases of the
    benchmark's search over 10⁴ patterns of modes, which Lemke's method on Stewart and Trinkle's LCP now starts):
    solved to 1e-12 of the 1 m/s impact, each force in its polygon, pushing only where its corner closes, and
    dissipating the most the polygon allows against its slip."""
    from robodyn.dynamics.floating import quaternion_matrix
    quat = np.array([np.cos(axis) * np.sin(tilt / 2), np.sin(axis) * np.sin(tilt / 2), 0, np.cos(tilt / 2)])
    R, pts, dt = quaternion_matrix(quat), np.array([p for _, p in CORNERS]), 1e-3
    q = np.concatenate([[0, 0, -min((R @ pts.T)[2])], quat, [0.0]])
    r = contact_step(box, q, np.array(v + [0.0]), np.zeros(7), dt, CORNERS, mu=mu, cone="pyramid")
    assert 0 <= r.residual <= 1e-12
    u = (R @ (r.v[:3] + np.cross(r.v[3:6], pts)).T).T
    fn, ft, un, ut = r.forces[:, 2], r.forces[:, :2], u[:, 2] + r.gaps / dt, u[:, :2]
    scale, slack = max(np.abs(r.forces).max(), MASS * G), 1e-12 + 2 * r.residual
    assert np.all(fn >= 0) and np.all(un >= -slack)
    np.testing.assert_allclose(fn * un, 0.0, atol=slack * scale)
    assert np.all(np.abs(ft) <= mu * fn[:, None] * (1 + 1e-12) + 1e-12 * scale)
    np.testing.assert_allclose(-(ut * ft).sum(-1), mu * fn * np.abs(ut).sum(-1), rtol=0, atol=1e3 * slack * scale)


def test_lemke_solves_monotone_complementarity_problems():
    """Lemke's method (the pyramid's first start) on LCPs with monotone matrices M = AAᵀ + εI + (B − Bᵀ), which
    have a solution for every q: z ≥ 0, w = M z + q ≥ 0 and wᵀz = 0 to rounding; q ≥ 0 gives z = 0."""
    from robodyn.simulation.contact_solver import _lemke
    rng = np.random.default_rng(3)
    for m in (1, 4, 9, 16, 24):
        A, B = rng.normal(size=(m, m)), rng.normal(size=(m, m))
        M = A @ A.T + 1e-3 * np.eye(m) + B - B.T
        q = rng.normal(size=m)
        z = _lemke(M, q, 50 * m)
        w = M @ z + q
        scale = 1e-12 * np.abs(M).max() * max(1.0, np.abs(z).max()) * m
        assert np.all(z >= 0) and np.all(w >= -scale)
        np.testing.assert_allclose(w * z, 0.0, atol=scale * max(1.0, np.abs(z).max()))
        assert np.array_equal(_lemke(M, np.abs(q), 50 * m), np.zeros(m))


def test_bad_cone_raises_a_clear_error(box):
    q = np.array([0, 0, C, 0, 0, 0, 1, 0.0])
    for change in ({"cone": "square"}, {"cone": "pyramid", "facets": 2}, {"cone": "pyramid", "facets": 4.0}):
        with pytest.raises(rd.InputError, match="cone = "):
            contact_step(box, q, np.zeros(7), np.zeros(7), 1e-3, CORNERS, **change)


TRIPOD = [(0, [-A, -B, -C]), (0, [-A, B, -C]), (0, [A, 0, -C])]   # the centre of mass strictly inside


def _plus(q, d):
    """q ⊕ d of a floating base: p + ^wR_0 δp, ^wR_0 Exp(δθ), q_j + δq (the tangent of the free-flyer
    derivatives), written with SciPy's rotations."""
    from scipy.spatial.transform import Rotation
    R = Rotation.from_quat(q[3:7])
    return np.concatenate([q[:3] + R.apply(d[:3]), (R * Rotation.from_rotvec(d[3:6])).as_quat(), q[7:] + d[6:]])


def _minus(q1, q0):
    """q1 ⊖ q0, the tangent d at q0 with q0 ⊕ d = q1."""
    from scipy.spatial.transform import Rotation
    R0 = Rotation.from_quat(q0[3:7])
    return np.concatenate([R0.inv().apply(q1[:3] - q0[:3]), (R0.inv() * Rotation.from_quat(q1[3:7])).as_rotvec(),
                           q1[7:] - q0[7:]])


def _assert_differences(analytic, step, x, eps, delta, plus=np.add, curved=False):
    """``analytic`` against central differences of ``step`` at x over ±ε: each evaluation of the step carries an
    error δ (the solver's tolerance and the rounding of the gaps), so a difference carries δ/ε.  Its truncation
    ε² ∂³/6 is below that for v and τ (v⁺ is piecewise linear in them but for the slip's turn); for q
    (``curved``: the kinematics, and the slip's turn seen through 1/h) it is estimated from the difference over ±2ε
    (four times as large) as their gap over 3."""
    def differences(h):
        return np.stack([(step(plus(x, e)) - step(plus(x, -e))) / (2 * h) for e in np.eye(analytic.shape[-1]) * h],
                        -1)

    near = differences(eps)
    truncation = np.abs(differences(2 * eps) - near).max() / 3 if curved else 0.0
    np.testing.assert_allclose(analytic, near, rtol=0, atol=2 * delta / eps + truncation)


def _delta(step, dt, reach, dv_dq):
    """The error δ of one step's v⁺: the solver's tol = 1e-12 of the speed it resolves (the velocities, and g h),
    and the rounding ε_mach ρ of the points' heights (ρ their reach from the origin) seen through ∂v⁺/∂q."""
    speed = max(np.abs(step.v).max(), G * dt, 1e-3)
    return 1e-12 * speed + 16 * np.finfo(float).eps * reach * np.abs(dv_dq).max()


def test_derivatives_of_a_tool_pushing_a_table():
    """A fixed-base arm pushing a table (one contact): sticking, ∂v⁺/∂τ = (I − M⁻¹Jᵀ(J M⁻¹Jᵀ)⁻¹J) h M⁻¹ (the
    motions that keep the contact, in closed form); sliding, central differences."""
    from robodyn.simulation.contact import contact_step_derivatives
    puma = rd.load("puma560")
    qp = np.array([0.3, -0.6, 0.4, 0.2, 0.5, -0.1])
    F = np.array([6.0, -3.0, -40.0])
    tau = rd.gravity_torques(puma, qp) + rd.jacobian(puma, qp)[:3].T @ F
    height = rd.forward_kinematics(puma, qp)[-1][2, 3]
    dt = 1e-3
    stick = contact_step_derivatives(puma, qp, np.zeros(6), tau, dt, [6], mu=0.5, height=height, friction=False)
    M = rd.inertia_matrix(puma, qp)
    Jc = rd.jacobian(puma, qp)[:3]
    Minv = np.linalg.inv(M)
    keep = np.eye(6) - Minv @ Jc.T @ np.linalg.solve(Jc @ Minv @ Jc.T, Jc)
    assert stick.smooth
    np.testing.assert_allclose(stick.dv_dtau, keep @ (dt * Minv), rtol=0, atol=1e-12 * np.abs(dt * Minv).max())
    mu, eps = 0.1, 1e-6
    slide = contact_step_derivatives(puma, qp, np.zeros(6), tau, dt, [6], mu=mu, height=height, friction=False)
    assert slide.smooth

    def step(x):
        return contact_step(puma, qp, np.zeros(6), x, dt, [6], mu=mu, height=height, friction=False).v

    _assert_differences(slide.dv_dtau, step, tau, eps, 1e-12 * max(np.abs(slide.step.v).max(), 1e-3))


def test_derivatives_are_flagged_where_the_step_is_not_differentiable(box):
    """A box sliding flat on four corners: how its weight splits between them is not determined, nor the friction's
    moment, so v⁺ has no derivative (smooth False); landing exactly as a contact closes (u_n + φ/h = 0 with
    λ_n = 0) neither.  A batch gives its samples' flags and derivatives."""
    from robodyn.simulation.contact import contact_step_derivatives
    q = np.array([[0, 0, C, 0, 0, 0, 1, 0.0], [0, 0, C, 0, 0, 0, 1, 0.0]])
    v = np.array([[1.0, 0.3, 0, 0, 0, 0.5, 0], [0, 0, 0, 0, 0, 0, 0]])
    tau = np.array([np.zeros(7), [0.3, 0, 0, 0, 0, 0, 0]])
    d = contact_step_derivatives(box, q, v, tau, 1e-3, CORNERS, mu=0.5)
    assert d.smooth.tolist() == [False, True]
    one = contact_step_derivatives(box, q[1], v[1], tau[1], 1e-3, CORNERS, mu=0.5)
    np.testing.assert_allclose(d.dv_dv[1], one.dv_dv, rtol=0, atol=1e-12)
    np.testing.assert_allclose(d.dv_dtau[1], one.dv_dtau, rtol=0, atol=1e-12)
    touching = np.array([0, 0, C + G * 1e-6, 0, 0, 0, 1, 0.0])     # falls exactly onto the plane in one step
    assert not contact_step_derivatives(box, touching, np.zeros(7), np.zeros(7), 1e-3, CORNERS, mu=0.5).smooth


@pytest.mark.parametrize("case, cone", [(case, "circle") for case in ("slide", "spin", "stick", "lifted", "tilted")]
                         + [(case, "pyramid") for case in ("slide", "spin", "stick", "tilted")])
def test_all_derivatives_agree_with_finite_differences(box, case, cone):
    """∂v⁺/∂q, ∂q⁺/∂q (in the free flyer's tangent spaces, the base moved as q ⊕ dq), ∂v⁺/∂v, ∂v⁺/∂τ, ∂q⁺/∂v and
    ∂q⁺/∂τ of a box on three corners around its centre of mass, with circular and pyramidal (4 facets) cones:
    sliding (with a pyramid, at a vertex), spinning on its corners, held below the cone by a push, a hair above
    the plane (the free motion, as with a circle), and tilted on two corners sliding and spinning (a pyramid: on a
    facet) agree with central differences of contact_step (ε = 1e-7 in q, 1e-6 in v and τ; tolerance of
    _assert_differences); ∂q⁺/∂· where the box turns."""
    from robodyn.simulation.contact import contact_step_derivatives
    q = np.array([0, 0, C, 0, 0, 0, 1, 0.0])
    v, tau = np.zeros(7), np.zeros(7)
    if case == "slide":
        v[[0, 1, 5]] = 1.0, 0.3, 0.5
    elif case == "spin":
        v[[0, 5]] = 0.1, 3.0
    elif case == "stick":
        tau[[0, 1, 5]] = 0.5, 0.2, 0.1
    elif case == "lifted":
        q[2] += 1e-3
        v[[0, 2, 3]] = 0.2, 0.5, 0.1
    else:
        q = _plus(q, np.array([0, 0, 5e-4, 0.02, 0.01, 0.3, 0]))
        v[[0, 1, 2, 5]] = 0.3, -0.2, -0.05, 0.4
    dt, kw = 1e-3, {"mu": 0.6, "cone": cone}
    d = contact_step_derivatives(box, q, v, tau, dt, TRIPOD, **kw)
    assert d.smooth and all(x.shape == (7, 7) for x in d[1:] if x is not d.smooth)
    np.testing.assert_allclose(d.step.v, contact_step(box, q, v, tau, dt, TRIPOD, **kw).v, rtol=0, atol=1e-15)
    delta = _delta(d.step, dt, np.linalg.norm([A, B, C]) + np.abs(q[:3]).max(), d.dv_dq)

    def step(q_, v_, tau_):
        return contact_step(box, q_, v_, tau_, dt, TRIPOD, **kw)

    _assert_differences(d.dv_dq, lambda x: step(x, v, tau).v, q, 1e-7, delta, _plus, curved=True)
    _assert_differences(d.dv_dv, lambda x: step(q, x, tau).v, v, 1e-6, delta)
    _assert_differences(d.dv_dtau, lambda x: step(q, v, x).v, tau, 1e-6, delta)
    if case == "lifted":                            # open contacts: the free motion, v + h M⁻¹ (τ − H)
        np.testing.assert_allclose(d.dv_dtau, dt * np.linalg.inv(rd.floating.floating_inertia_matrix(box, q)),
                                   rtol=0, atol=1e-15)
    if case in ("spin", "tilted"):                  # q⁺ turned: the tangent spaces at q and q⁺ differ
        _assert_differences(d.dq_dq, lambda x: _minus(step(x, v, tau).q, d.step.q), q, 1e-7, dt * delta, _plus,
                            curved=True)
        _assert_differences(d.dq_dv, lambda x: _minus(step(q, x, tau).q, d.step.q), v, 1e-6, dt * delta)
        _assert_differences(d.dq_dtau, lambda x: _minus(step(q, v, x).q, d.step.q), tau, 1e-6, dt * delta)


@pytest.mark.parametrize("cone", ["circle", "pyramid"])
def test_q_derivatives_of_a_tool_pushing_a_table(cone):
    """A fixed-base arm pushing a table with F (one contact), sticking (μ = 0.5), and sliding along it (μ = 0.1,
    the tool moving at 0.2 m/s): ∂v⁺/∂q, ∂v⁺/∂v, ∂v⁺/∂τ and ∂q⁺/∂q = I + h ∂v⁺/∂q agree with central
    differences; the M, H and Jacobian derivatives they use are robodyn's analytic ones."""
    from robodyn.simulation.contact import contact_step_derivatives
    puma = rd.load("puma560")
    qp = np.array([0.3, -0.6, 0.4, 0.2, 0.5, -0.1])
    F = np.array([6.0, -3.0, -40.0])
    Jc = rd.jacobian(puma, qp)[:3]
    tau = rd.gravity_torques(puma, qp) + Jc.T @ F
    height = rd.forward_kinematics(puma, qp)[-1][2, 3]
    reach = np.linalg.norm(rd.forward_kinematics(puma, qp)[-1][:3, 3])
    dt = 1e-3
    for mu, v in ((0.5, np.zeros(6)), (0.1, np.linalg.pinv(Jc) @ [0.2, 0.1, 0.0])):
        kw = {"mu": mu, "height": height, "friction": False, "cone": cone}
        d = contact_step_derivatives(puma, qp, v, tau, dt, [6], **kw)
        assert d.smooth and np.all(d.step.forces[0, 2] > 0)
        delta = _delta(d.step, dt, reach, d.dv_dq)

        def step(q_, v_, tau_):
            return contact_step(puma, q_, v_, tau_, dt, [6], **kw).v

        _assert_differences(d.dv_dq, lambda x: step(x, v, tau), qp, 1e-7, delta)
        _assert_differences(d.dv_dv, lambda x: step(qp, x, tau), v, 1e-6, delta)
        _assert_differences(d.dv_dtau, lambda x: step(qp, v, x), tau, 1e-6, delta)
        np.testing.assert_allclose(d.dq_dq, np.eye(6) + dt * d.dv_dq, rtol=0, atol=1e-15 * np.abs(d.dv_dq).max())


def test_pyramid_derivatives_are_flagged_where_the_active_facets_change(box):
    """With a pyramid: a tool pushing a table exactly on a facet's edge (|F_x| = μ |F_z|: sticking, the facet
    active, no slip) is between sticking and sliding (smooth False), inside (μ = 0.5) it is not; a box landing
    exactly as its contacts close (λ_n = 0 and u_n + φ/h = 0) neither; a batch gives its samples' results.  (A flat
    box sliding on four corners has a unique v⁺ with four facets where the corners' slips share a vertex or pair
    up, unlike the circle.)"""
    from robodyn.simulation.contact import contact_step_derivatives
    puma = rd.load("puma560")
    qp = np.array([0.3, -0.6, 0.4, 0.2, 0.5, -0.1])
    F = np.array([6.0, -3.0, -40.0])
    tau = rd.gravity_torques(puma, qp) + rd.jacobian(puma, qp)[:3].T @ F
    height = rd.forward_kinematics(puma, qp)[-1][2, 3]
    kw = {"height": height, "friction": False, "cone": "pyramid"}
    assert not contact_step_derivatives(puma, qp, np.zeros(6), tau, 1e-3, [6], mu=6 / 40, **kw).smooth
    assert contact_step_derivatives(puma, qp, np.zeros(6), tau, 1e-3, [6], mu=0.5, **kw).smooth
    q = np.array([[0, 0, C + G * 1e-6, 0, 0, 0, 1, 0.0], [0, 0, C, 0, 0, 0, 1, 0.0]])
    v = np.zeros((2, 7))
    tau = np.array([np.zeros(7), [0.3, 0, 0, 0, 0, 0, 0]])
    d = contact_step_derivatives(box, q, v, tau, 1e-3, CORNERS, mu=0.5, cone="pyramid")
    assert d.smooth.tolist() == [False, True]
    one = contact_step_derivatives(box, q[1], v[1], tau[1], 1e-3, CORNERS, mu=0.5, cone="pyramid")
    for name in ("dv_dv", "dv_dtau", "dv_dq", "dq_dq"):
        np.testing.assert_allclose(getattr(d, name)[1], getattr(one, name), rtol=0,
                                   atol=1e-12 * np.abs(getattr(one, name)).max())
